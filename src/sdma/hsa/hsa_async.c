/*
 * hsa backend: the fallback where no SDMA queue can be created (the thunk
 * missing, no rights on /dev/kfd, an old kernel): ROCr's
 * hsa_amd_memory_async_copy. Each copy piece depends on the previous
 * one's completion signal, so a queue stays in order; WAIT, SIGNAL and
 * SIGNAL_ADD run on the host once the copies before them completed (no
 * engine-side gating: prelaunched chains wait in the host). Pieces are
 * sized and locked as for packets (hsa_submit.c); there is no interrupt,
 * so the event thread (hsa.c) polls while copies are in flight.
 * SHMEM_INFO says when the fallback runs, and why.
 */
#include "sdma/backend.h"
#include "sdma/hsa/hsa_int.h"

#include <stdlib.h>

/* Retire the pieces whose signal reached 0 (in order). A signal is
 * destroyed only once the piece that depends on it (the next one) has
 * completed too: the engine may still read it before starting that one. */
void dsm_hsa_async_reap(hsaq_t *hq)
{
    while (hq->ahead != hq->atail) {
        asig_t *a = &hq->asig[hq->ahead % DSM_HSA_ASYNC_INFLIGHT];
        asig_t *next = &hq->asig[(hq->ahead + 1) % DSM_HSA_ASYNC_INFLIGHT];
        if (dsm_hsa.api.signal_load(a->sig) > 0)
            break;
        if (a->upto > hq->adone)
            __atomic_store_n(&hq->adone, a->upto, __ATOMIC_RELEASE);
        if (hq->ahead + 1 != hq->atail &&
            dsm_hsa.api.signal_load(next->sig) > 0)
            break;
        if (a->sig.handle == hq->last_sig.handle)
            hq->last_sig.handle = 0;
        dsm_hsa.api.signal_destroy(a->sig);
        __atomic_store_n(&hq->ahead, hq->ahead + 1, __ATOMIC_RELEASE);
    }
}

/* One copy after everything before it in this queue. */
static int async_copy(hsaq_t *hq, void *dst, const void *src, size_t n,
                      uint64_t upto)
{
    hsa_signal_t sig;
    asig_t *a;

    if (dsm_hsa.api.signal_create(1, 0, NULL, &sig) != HSA_STATUS_SUCCESS)
        return 0;
    if (dsm_hsa.api.async_copy(dst, dsm_hsa.gpu, src, dsm_hsa.gpu, n,
                               hq->last_sig.handle ? 1 : 0,
                               hq->last_sig.handle ? &hq->last_sig : NULL,
                               sig) != HSA_STATUS_SUCCESS) {
        dsm_hsa.api.signal_destroy(sig);
        return 0;
    }
    a = &hq->asig[hq->atail % DSM_HSA_ASYNC_INFLIGHT];
    a->sig = sig;
    a->upto = upto;
    hq->last_sig = sig;
    __atomic_store_n(&hq->atail, hq->atail + 1, __ATOMIC_RELEASE);
    hq->copies++;
    return 1;
}

/* The fallback runs WAIT, SIGNAL and SIGNAL_ADD on the host. A word in
 * device memory (the device heap's synchronisation words under
 * SHMEM_PERSISTENT_SYNC=dev) is read and written with
 * hsa_memory_copy, never by this CPU: VRAM need not be host-visible (the
 * engine model maps it PROT_NONE). SIGNAL_ADD is then a read and a
 * write, not atomic against another writer of that word. */
static int exec_host(const dsm_cmd_t *c)
{
    uint64_t v;

    if ((c->op != DSM_CMD_WAIT && c->op != DSM_CMD_SIGNAL &&
         c->op != DSM_CMD_SIGNAL_ADD) ||
        !dsm_hsa_ptr_is_device(c->u.sig.word))
        return dsm_sdma_exec_cpu(c);
    if (c->op != DSM_CMD_SIGNAL &&
        dsm_hsa.api.memory_copy(&v, c->u.sig.word, sizeof(v)) !=
            HSA_STATUS_SUCCESS)
        goto fail;
    if (c->op == DSM_CMD_WAIT)
        return v >= c->u.sig.value;
    v = c->op == DSM_CMD_SIGNAL ? c->u.sig.value : v + c->u.sig.value;
    if (dsm_hsa.api.memory_copy(c->u.sig.word, &v, sizeof(v)) !=
        HSA_STATUS_SUCCESS)
        goto fail;
    return 1;
fail:
    dsm_log_error("hsa backend: hsa_memory_copy of a device word at %p "
                  "failed", (void *)c->u.sig.word);
    abort();
}

void dsm_hsa_pump_async(dsm_sdma_queue_t *q)
{
    hsaq_t *hq = q->priv;
    hsas_t *hs = q->sdma->priv;
    uint64_t sub = __atomic_load_n(&q->submitted, __ATOMIC_ACQUIRE);

    dsm_hsa_async_reap(hq);
    while (hq->enc < sub) {
        uint64_t slot = hq->enc & (q->depth - 1);
        const dsm_cmd_t *c = &q->ring[slot];
        const slot_regs_t *r = &hq->regs[slot];
        size_t piece, n;
        int copy = cmd_is_copy(c), ok = 1;

        if (copy && !hq->enc_locked) {
            if (!dsm_hsa_cmd_lock(hs, hq, c, slot)) {
                dsm_hsa_cmd_unlock(hs, hq, slot);
                copy = 0; /* the CPU copies, in order, below */
            } else {
                hq->enc_locked = 1;
            }
        }
        if (copy) {
            if (!dsm_hsa_piece_dwords(c, hq->enc_off, &piece)) {
                piece = 0;
            } else if ((piece = dsm_hsa_clamp_piece(hq, c, slot, hq->enc_off,
                                                    piece)) == 0) {
                break; /* not reached: a locked range holds each byte */
            } else if (hq->atail - hq->ahead + 3 > DSM_HSA_ASYNC_INFLIGHT) {
                break; /* enough in flight */
            } else {
                const char *src = (const char *)c->u.copy.src + hq->enc_off;
                char *dst = (char *)c->u.copy.dst + hq->enc_off;
                int last = hq->enc_off + piece >= c->u.copy.len;
                uint64_t upto = last ? hq->enc + 1 : hq->enc;
                n = piece;
                if (c->op == DSM_CMD_COPY) {
                    ok = async_copy(hq, (void *)sgva(r, dst),
                                    (const void *)sgva(r, src), n, upto);
                } else if (c->op == DSM_CMD_BCAST) {
                    char *d2 = (char *)c->u.copy.dst2 + hq->enc_off;
                    ok = async_copy(hq, (void *)sgva(r, dst),
                                    (const void *)sgva(r, src), n, hq->enc) &&
                         async_copy(hq, (void *)sgva(r, d2),
                                    (const void *)sgva(r, src), n, upto);
                } else {
                    void *b = (void *)gva(hq->bounce_reg, hq->bounce);
                    ok = async_copy(hq, b, (const void *)sgva(r, src), n,
                                    hq->enc) &&
                         async_copy(hq, (void *)sgva(r, src),
                                    (const void *)sgva(r, dst), n,
                                    hq->enc) &&
                         async_copy(hq, (void *)sgva(r, dst), b, n, upto);
                }
                if (!ok) {
                    dsm_log_error("hsa backend: hsa_amd_memory_async_copy "
                                  "of %zu bytes failed", n);
                    abort();
                }
            }
            hq->enc_off += piece;
            if (hq->enc_off < c->u.copy.len)
                continue;
            if (!piece) {
                /* Empty: done when everything before it is. */
                if (hq->ahead != hq->atail)
                    break;
                __atomic_store_n(&hq->adone, hq->enc + 1, __ATOMIC_RELEASE);
            }
        } else {
            /* WAIT, SIGNAL, SIGNAL_ADD (and copies the engine cannot
             * reach): on the host, after the copies before them. */
            if (hq->ahead != hq->atail || !exec_host(c))
                break;
            if (cmd_is_copy(c))
                hq->fallbacks++;
            __atomic_store_n(&hq->adone, hq->enc + 1, __ATOMIC_RELEASE);
        }
        hq->enc++;
        hq->enc_off = 0;
        hq->enc_locked = 0;
    }
    __atomic_store_n(&hq->enc_pub, hq->enc, __ATOMIC_RELEASE);
}


/* Whether the event thread has anything to poll: copies in flight or
 * commands not yet issued on some queue (or it is asked to stop). */
int dsm_hsa_async_busy(void *arg)
{
    hsas_t *hs = arg;
    dsm_sdma_t *s = hs->s;
    int nq = __atomic_load_n(&s->num_queues, __ATOMIC_ACQUIRE);
    if (hs->stop)
        return 1;
    for (int i = 0; i < nq; i++) {
        hsaq_t *hq = s->queues[i]->priv;
        if (hq && (__atomic_load_n(&hq->ahead, __ATOMIC_ACQUIRE) !=
                       __atomic_load_n(&hq->atail, __ATOMIC_ACQUIRE) ||
                   __atomic_load_n(&hq->enc, __ATOMIC_ACQUIRE) !=
                       __atomic_load_n(&s->queues[i]->submitted,
                                       __ATOMIC_ACQUIRE)))
            return 1;
    }
    return 0;
}

