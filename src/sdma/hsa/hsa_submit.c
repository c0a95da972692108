/*
 * hsa backend: commands into SDMA packets (shmemx_sdma_pkt.h) on a
 * queue's ring, and their completion.
 *
 * Commands become packets:
 *   COPY        COPY_LINEAR, split at DSM_SDMA_COPY_MAX bytes
 *   BCAST       two COPY_LINEARs per piece (no native packet: emulated)
 *   SWAP        three COPY_LINEARs per piece through a per-queue bounce
 *               buffer (no native packet: emulated)
 *   WAIT        POLL_REGMEM on the word's low dword as a 32-bit sequence
 *               number (dsm_pkt_wait_seq), dropped when it already holds
 *   SIGNAL      FENCE of the low dword, then FENCE of the high dword (a
 *               64-bit reader never sees a value above the new one)
 *   SIGNAL_ADD  ATOMIC add64
 * and a batch ends with a FENCE of the queue's sequence (low 32 bits)
 * into a host word, a TRAP that wakes this process's event thread, and one
 * doorbell. A FENCE of the sequence also goes before every WAIT, so the
 * commands before a gate complete while the queue waits there.
 *
 * Packets are written while the ring has room ("pumping", from submit and
 * poll), never by waiting for room: a queue parked on a WAIT must not
 * block the thread that will fire its trigger. A command locks what it
 * touches at its first piece (hsa_mem.c) and unlocks it when poll retires
 * it. In the async fallback pump hands the queue to hsa_async.c, which
 * shares the piece sizing and locking below.
 */
#include "sdma/backend.h"
#include "sdma/hsa/hsa_int.h"

#define POLL_INTERVAL 20u  /* POLL_REGMEM retry interval field */
/* Room kept at the end of every batch: the sequence FENCE, the TRAP and
 * the padding before them. */
#define BATCH_TAIL_DW                                                          \
    (DSM_SDMA_FENCE_DW + DSM_SDMA_TRAP_DW + 2 * DSM_SDMA_MAX_PKT_DW)

/* Dwords command c still needs from byte offset off on; *piece gets the
 * bytes the next piece covers. */
uint32_t dsm_hsa_piece_dwords(const dsm_cmd_t *c, uint64_t off, size_t *piece)
{
    size_t left;

    *piece = 0;
    switch ((dsm_cmd_op_t)c->op) {
    case DSM_CMD_COPY:
    case DSM_CMD_BCAST:
        left = c->u.copy.len - off;
        if (!left)
            return 0;
        *piece = DSM_MIN(left, (size_t)DSM_SDMA_COPY_MAX);
        return (c->op == DSM_CMD_COPY ? 1 : 2) * DSM_SDMA_COPY_DW;
    case DSM_CMD_SWAP:
        left = c->u.copy.len - off;
        if (!left)
            return 0;
        *piece = DSM_MIN(left, (size_t)DSM_HSA_SWAP_BOUNCE);
        return 3 * DSM_SDMA_COPY_DW;
    case DSM_CMD_WAIT:
        return DSM_SDMA_FENCE_DW + DSM_SDMA_WAIT_MAX_DW;
    case DSM_CMD_SIGNAL:
        return 2 * DSM_SDMA_FENCE_DW;
    case DSM_CMD_SIGNAL_ADD:
        return DSM_SDMA_ATOMIC_DW;
    case DSM_CMD_NOP:
    case DSM_CMD_LAST:
        break;
    }
    return 0;
}

/* Lock what command c touches (once, at its first piece). Returns 0 when
 * some of it cannot be made visible to the engine. */
int dsm_hsa_cmd_lock(hsas_t *hs, hsaq_t *hq, const dsm_cmd_t *c, uint64_t slot)
{
    slot_regs_t *r = &hq->regs[slot];

    switch ((dsm_cmd_op_t)c->op) {
    case DSM_CMD_COPY:
    case DSM_CMD_BCAST:
    case DSM_CMD_SWAP:
        return dsm_hsa_reg_cover(hs, r, c->u.copy.src, c->u.copy.len) &&
               dsm_hsa_reg_cover(hs, r, c->u.copy.dst, c->u.copy.len) &&
               (c->op != DSM_CMD_BCAST ||
                dsm_hsa_reg_cover(hs, r, c->u.copy.dst2, c->u.copy.len));
    case DSM_CMD_WAIT:
    case DSM_CMD_SIGNAL:
    case DSM_CMD_SIGNAL_ADD:
        return dsm_hsa_reg_cover(hs, r, c->u.sig.word, sizeof(uint64_t));
    case DSM_CMD_NOP:
    case DSM_CMD_LAST:
        break;
    }
    return 1;
}

void dsm_hsa_cmd_unlock(hsas_t *hs, hsaq_t *hq, uint64_t slot)
{
    slot_regs_t *r = &hq->regs[slot];
    for (uint32_t i = 0; i < r->n; i++)
        dsm_hsa_reg_put(hs, r->v[i]);
    r->n = 0;
}

/* A copy piece may not cross the end of a locked range at either end. */
size_t dsm_hsa_clamp_piece(const hsaq_t *hq, const dsm_cmd_t *c, uint64_t slot,
                           uint64_t off, size_t piece)
{
    const slot_regs_t *r = &hq->regs[slot];
    if (!piece)
        return 0;
    piece = DSM_MIN(piece, slot_left(r, (const char *)c->u.copy.src + off));
    piece = DSM_MIN(piece, slot_left(r, (char *)c->u.copy.dst + off));
    if (c->op == DSM_CMD_BCAST)
        piece = DSM_MIN(piece, slot_left(r, (char *)c->u.copy.dst2 + off));
    return piece;
}

/* Write one piece of command c (its packets are n dwords at w). */
static uint32_t encode_piece(hsaq_t *hq, const dsm_cmd_t *c,
                             uint64_t slot, uint64_t off, size_t piece,
                             uint32_t *w, uint64_t seq)
{
    const slot_regs_t *r = &hq->regs[slot];
    const char *src = (const char *)c->u.copy.src + off;
    char *dst = (char *)c->u.copy.dst + off;

    switch ((dsm_cmd_op_t)c->op) {
    case DSM_CMD_COPY:
        dsm_pkt_copy_linear(w, sgva(r, dst), sgva(r, src),
                            (uint32_t)piece);
        return DSM_SDMA_COPY_DW;
    case DSM_CMD_BCAST:
        dsm_pkt_copy_linear(w, sgva(r, dst), sgva(r, src),
                            (uint32_t)piece);
        dsm_pkt_copy_linear(w + DSM_SDMA_COPY_DW,
                            sgva(r, (char *)c->u.copy.dst2 + off),
                            sgva(r, src), (uint32_t)piece);
        return 2 * DSM_SDMA_COPY_DW;
    case DSM_CMD_SWAP: {
        /* a -> bounce, b -> a, bounce -> b: the engine runs a queue's
         * packets in order. */
        uint64_t b = gva(hq->bounce_reg, hq->bounce);
        dsm_pkt_copy_linear(w, b, sgva(r, src), (uint32_t)piece);
        dsm_pkt_copy_linear(w + 7, sgva(r, src), sgva(r, dst),
                            (uint32_t)piece);
        dsm_pkt_copy_linear(w + 14, sgva(r, dst), b, (uint32_t)piece);
        return 3 * DSM_SDMA_COPY_DW;
    }
    case DSM_CMD_WAIT: {
        uint32_t n = 0;
        /* Commands before the gate complete while the queue waits. */
        dsm_pkt_fence(w, gva(hq->done_reg, hq->done), (uint32_t)seq);
        n += DSM_SDMA_FENCE_DW;
        /* Already holds: nothing to poll. Not asked of device memory,
         * which the CPU does not read. */
        if (!slot_find(r, c->u.sig.word)->dev &&
            __atomic_load_n(c->u.sig.word, __ATOMIC_ACQUIRE) >= c->u.sig.value)
            return n;
        n += dsm_pkt_wait_seq(w + n, sgva(r, c->u.sig.word),
                              (uint32_t)c->u.sig.value, POLL_INTERVAL);
        return n;
    }
    case DSM_CMD_SIGNAL: {
        uint64_t a = sgva(r, c->u.sig.word);
        dsm_pkt_fence(w, a, dsm_pkt_lo(c->u.sig.value));
        dsm_pkt_fence(w + DSM_SDMA_FENCE_DW, a + 4,
                      dsm_pkt_hi(c->u.sig.value));
        return 2 * DSM_SDMA_FENCE_DW;
    }
    case DSM_CMD_SIGNAL_ADD:
        dsm_pkt_atomic(w, DSM_SDMA_ATOMIC_ADD64, sgva(r, c->u.sig.word),
                       c->u.sig.value, 0);
        return DSM_SDMA_ATOMIC_DW;
    case DSM_CMD_NOP:
    case DSM_CMD_LAST:
        break;
    }
    return 0;
}

/* Packets in n dwords written by encode_piece (for the statistics). */
static uint64_t count_packets(const uint32_t *w, uint32_t n)
{
    uint64_t k = 0;
    for (uint32_t i = 0; i < n; k++) {
        uint32_t d = dsm_pkt_dwords(w[i]);
        i += d ? d : 1;
    }
    return k;
}

/* The engine's completed sequence (64-bit, from the FENCEd low dword). */
static uint64_t engine_done(const hsaq_t *hq)
{
    if (dsm_hsa.async)
        return __atomic_load_n(&hq->adone, __ATOMIC_ACQUIRE);
    uint32_t lo = __atomic_load_n(hq->done, __ATOMIC_ACQUIRE);
    uint64_t e = __atomic_load_n(&hq->enc_pub, __ATOMIC_ACQUIRE);
    return e - (uint32_t)((uint32_t)e - lo);
}

/* Place n dwords at *pos, padding the ring's end with NOPs; 0 when past
 * limit. */
static uint32_t *place(dsm_sdma_ring_t *r, uint64_t *pos, uint32_t n,
                       uint64_t limit)
{
    uint64_t off = *pos & (r->size - 1);
    uint64_t pad = off + n * 4u > r->size ? r->size - off : 0;
    if (*pos + pad + n * 4u > limit)
        return NULL;
    for (uint64_t b = 0; b < pad; b += 4)
        dsm_pkt_nop(dsm_ring_at(r, *pos + b), 0);
    *pos += pad;
    return dsm_ring_at(r, *pos);
}

/* Encode what was submitted while the ring has room; one doorbell. */
static void pump(dsm_sdma_queue_t *q)
{
    hsaq_t *hq = q->priv;
    hsas_t *hs = q->sdma->priv;
    dsm_sdma_ring_t *r = &hq->ring;
    uint64_t sub, first, pos, limit;

    if (__atomic_load_n(&hq->enc, __ATOMIC_ACQUIRE) ==
            __atomic_load_n(&q->submitted, __ATOMIC_ACQUIRE) &&
        __atomic_load_n(&hq->ahead, __ATOMIC_ACQUIRE) ==
            __atomic_load_n(&hq->atail, __ATOMIC_ACQUIRE))
        return;
    if (pthread_mutex_trylock(&hq->pump_lock))
        return;
    if (dsm_hsa.async) {
        dsm_hsa_pump_async(q);
        pthread_mutex_unlock(&hq->pump_lock);
        return;
    }
    sub = __atomic_load_n(&q->submitted, __ATOMIC_ACQUIRE);
    first = pos = r->reserved;
    limit = __atomic_load_n(r->rptr, __ATOMIC_ACQUIRE) + r->size -
            BATCH_TAIL_DW * 4u;
    while (hq->enc < sub) {
        uint64_t slot = hq->enc & (q->depth - 1);
        const dsm_cmd_t *c = &q->ring[slot];
        size_t piece;
        uint32_t ndw, n, *w;

        if (!hq->enc_locked) {
            if (!dsm_hsa_cmd_lock(hs, hq, c, slot)) {
                /* The engine cannot reach this memory: the CPU runs the
                 * command once the engine has finished everything
                 * before it, and reports it done in the engine's place. */
                dsm_hsa_cmd_unlock(hs, hq, slot);
                if (pos != first || engine_done(hq) != hq->enc ||
                    !dsm_sdma_exec_cpu(c))
                    break;
                hq->fallbacks++;
                hq->enc++;
                __atomic_store_n(&hq->enc_pub, hq->enc, __ATOMIC_RELEASE);
                __atomic_store_n(hq->done, (uint32_t)hq->enc,
                                 __ATOMIC_RELEASE);
                continue;
            }
            hq->enc_locked = 1;
        }
        ndw = dsm_hsa_piece_dwords(c, hq->enc_off, &piece);
        if (cmd_is_copy(c))
            piece = dsm_hsa_clamp_piece(hq, c, slot, hq->enc_off, piece);
        if (ndw) {
            w = place(r, &pos, ndw, limit);
            if (!w)
                break; /* ring full: the rest when the engine moves on */
            n = encode_piece(hq, c, slot, hq->enc_off, piece, w, hq->enc);
            r->packets += count_packets(w, n);
            pos += n * 4u;
        }
        hq->enc_off += piece;
        if (!cmd_is_copy(c) || hq->enc_off >= c->u.copy.len) {
            hq->enc++;
            hq->enc_off = 0;
            hq->enc_locked = 0;
        }
    }
    if (pos != first) {
        uint32_t *w = place(r, &pos, DSM_SDMA_FENCE_DW, UINT64_MAX);
        /* Completion: the sequence of the last whole command. */
        dsm_pkt_fence(w, gva(hq->done_reg, hq->done), (uint32_t)hq->enc);
        pos += DSM_SDMA_FENCE_DW * 4u;
        w = place(r, &pos, DSM_SDMA_TRAP_DW, UINT64_MAX);
        dsm_pkt_trap(w, hs->event ? hs->event->EventId : 0);
        pos += DSM_SDMA_TRAP_DW * 4u;
        r->packets += 2;
        r->reserved = pos;
        __atomic_store_n(&hq->enc_pub, hq->enc, __ATOMIC_RELEASE);
        dsm_ring_commit(r, first, pos);
        hq->batches++;
    }
    pthread_mutex_unlock(&hq->pump_lock);
}

void dsm_hsa_submit(dsm_sdma_queue_t *q, uint64_t upto)
{
    (void)upto;
    pump(q);
}

uint64_t dsm_hsa_poll(dsm_sdma_queue_t *q, int help)
{
    hsaq_t *hq = q->priv;
    hsas_t *hs = q->sdma->priv;
    uint64_t done, i;

    (void)help;
    pump(q);
    done = engine_done(hq);
    /* Completions are reported only once walked: the walk notifies the
     * sleepers of signals the engine delivered and unlocks the memory,
     * and the slot may not be reused before. */
    if (done > __atomic_load_n(&hq->seen, __ATOMIC_ACQUIRE) &&
        !__atomic_exchange_n(&hq->walking, 1, __ATOMIC_ACQUIRE)) {
        for (i = hq->seen; i < done; i++) {
            uint64_t slot = i & (q->depth - 1);
            const dsm_cmd_t *c = &q->ring[slot];
            if (c->wake)
                dsm_wake_notify(c->wake);
            if (c->wake_app)
                dsm_wake_notify(c->wake_app);
            dsm_hsa_cmd_unlock(hs, hq, slot);
        }
        __atomic_store_n(&hq->seen, done, __ATOMIC_RELEASE);
        __atomic_store_n(&q->completed, done, __ATOMIC_RELEASE);
        __atomic_store_n(&hq->walking, 0, __ATOMIC_RELEASE);
        dsm_wake_notify(q->sdma->app_wake);
        /* Space freed in the ring: what was held back goes now. */
        pump(q);
    }
    return __atomic_load_n(&hq->seen, __ATOMIC_ACQUIRE);
}

