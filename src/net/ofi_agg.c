/*
 * Batches of non-fetching AMOs (ofi_int.h): where the provider's atomics
 * are software at the target (dsm_ofi.cpu_atomics: tcp;ofi_rxm, sockets),
 * a context that one thread uses at a time collects its non-fetching AMOs
 * to each peer (shmem_atomic_add, _inc, _set, _and, _or, _xor) and sends
 * them as one message; the peer's CQ reader applies them with the CPU's
 * atomics (seq_cst __atomic builtins, as libfabric's util atomics do, so
 * atomic with the provider's AMOs and with the peer's own) and answers
 * with an acknowledgement.
 *
 * Why: on tcp;ofi_rxm each fi_atomic is a message and an answer, two
 * system calls at each end; bale histo AGP at 2 PEs spent ~13 us per
 * update to a peer (2-core VM) where Open MPI's OSHMEM over UCX spent
 * ~5. A batch of up to NET_AGG_MAX updates costs about what one did.
 *
 * Semantics kept (a non-fetching AMO may return once its operand may be
 * reused; completion at quiet; order only through fence):
 *  - Accounting: a batch is two operations in its PE's account: the send
 *    (its CQ entry) and the peer's acknowledgement (which comes once every
 *    update of it is applied), so quiet, shmem_pe_quiet and the fence gate
 *    wait for batches as for any write.
 *  - quiet, pe_quiet and fence first send what is collected (a fence's
 *    batches then belong to the epoch before it, as a write would).
 *  - Any other operation of the context to the PE (put, get, fetching
 *    AMO, signal) sends the PE's batch first; one that reads (get,
 *    fetching AMO) also waits for its acknowledgement, so that it sees
 *    this PE's earlier updates, as it did when each went alone.
 *  - Progress: nothing stays collected for long. A batch goes when it is
 *    full, when nothing of that PE's is in flight (the first AMO of a
 *    burst goes at once), and at every progress call (a wait, the
 *    progress thread), so an update is delivered even when its PE then
 *    computes without calling the library.
 *  - Authentication: the endpoint takes messages from anyone who can
 *    reach it (docs/SECURITY.md), so every batch and acknowledgement
 *    carries the key of its sender and receiver (dsm_net_msg_key, from
 *    the job's secret, as the memory keys guard RMA); one without it is
 *    dropped, and said once. A receive buffer's key word is cleared
 *    before it is posted again, so a short message cannot reuse the
 *    key of the message before it.
 * Not batched: AMOs on a shared context (SHMEM_THREAD_MULTIPLE without
 * SHMEM_CTX_PRIVATE/SERIALIZED), the runtime's signals, AMOs to this PE
 * (applied at once, ofi_rma.c), and anything on NIC providers.
 */
#include "common/common.h"

#ifdef DSM_HAVE_OFI /* the whole file: ofi.c refuses the network without */

#include "net/ofi_int.h"

#include <stdlib.h>
#include <string.h>

/* Receive buffers posted on lane 0 (every peer sends there); more arrive
 * as the provider's unexpected messages until one is reposted. */
#define NET_AGG_RECVS 32

enum { AGG_BATCH = 0x41474201u, AGG_ACK = 0x41474202u };

typedef struct agg_msg {
    uint32_t kind;   /* AGG_BATCH or AGG_ACK */
    int32_t from;    /* the sender's PE */
    uint32_t count;  /* updates (batch) or batches acknowledged (ack) */
    uint32_t pad;
    uint64_t cookie; /* the sender's context (echoed back by the ack) */
    uint64_t key;    /* dsm_ofi_msg_key(from, receiver) */
    uint64_t ent[];  /* batch: [2 * count]: word, operand */
} agg_msg_t;

/* An entry's first word: the offset in its segment (56 bits), the
 * segment, the size (0: 4 bytes, 1: 8), the operation. */
#define AGG_OFF_BITS 56
#define AGG_OFF_MASK ((UINT64_C(1) << AGG_OFF_BITS) - 1)

typedef struct agg_buf {
    net_op_t op;          /* kind NET_OP_AGG_SEND or NET_OP_AGG_RECV */
    struct agg_buf *next; /* free list */
    agg_msg_t msg;        /* + NET_AGG_MAX entries */
} agg_buf_t;

#define AGG_BUF_BYTES                                                          \
    (sizeof(agg_buf_t) + 2 * NET_AGG_MAX * sizeof(uint64_t))

static struct {
    int on;
    uint64_t refused; /* messages without the job's key (dropped) */
    agg_buf_t *recv[NET_AGG_RECVS];
    agg_buf_t *free; /* send buffers not in use */
    pthread_mutex_t free_lock;
    /* Acknowledgements owed (the CQ reader applies a batch under its lock
     * and must not post there: a full queue would wait for the very
     * progress it holds up); sent after by ack_drain. */
    struct agg_owed {
        int pe;
        uint64_t cookie;
        uint32_t count;
    } *owed;
    size_t nowed, cap_owed;
    pthread_mutex_t owed_lock;
    /* Contexts that collect batches (progress sends theirs). */
    dsm_net_ctx_t **ctxs;
    int nctxs, cap_ctxs;
    pthread_mutex_t ctxs_lock;
} agg = {.free_lock = PTHREAD_MUTEX_INITIALIZER,
         .owed_lock = PTHREAD_MUTEX_INITIALIZER,
         .ctxs_lock = PTHREAD_MUTEX_INITIALIZER};

int dsm_ofi_agg_on(void)
{
    return agg.on;
}

static agg_buf_t *buf_new(int kind)
{
    agg_buf_t *b = calloc(1, AGG_BUF_BYTES);
    if (!b)
        dsm_ofi_cfg.fatal("network", "out of memory for a batch of atomics");
    b->op.kind = kind;
    return b;
}

static void post_recv(agg_buf_t *b)
{
    struct iovec iov = {.iov_base = &b->msg,
                        .iov_len = AGG_BUF_BYTES - offsetof(agg_buf_t, msg)};
    struct fi_msg msg = {.msg_iov = &iov,
                         .iov_count = 1,
                         .addr = FI_ADDR_UNSPEC,
                         .context = &b->op};
    ssize_t rc;
    b->msg.kind = 0;
    b->msg.key = 0; /* a key is never 0: see the file's head */
    /* Receives need no progress of ours to be accepted; a full receive
     * queue would be the provider's limit, which NET_AGG_RECVS stays
     * under. */
    while ((rc = fi_recvmsg(dsm_ofi.lanes[0].ep, &msg, FI_COMPLETION)) ==
           -FI_EAGAIN)
        ;
    if (rc)
        dsm_ofi_fail("shmem_init", "posting a receive for atomics", -1, rc);
}

dsm_status_t dsm_ofi_agg_init(void)
{
    if (!dsm_ofi.cpu_atomics || !(dsm_ofi.info->caps & FI_MSG))
        return DSM_OK;
    for (int i = 0; i < NET_AGG_RECVS; i++) {
        agg.recv[i] = buf_new(NET_OP_AGG_RECV);
        post_recv(agg.recv[i]);
    }
    agg.on = 1;
    return DSM_OK;
}

/* After the endpoints closed (no receive is posted any more). */
void dsm_ofi_agg_fini(void)
{
    for (int i = 0; i < NET_AGG_RECVS; i++) {
        free(agg.recv[i]);
        agg.recv[i] = NULL;
    }
    while (agg.free) {
        agg_buf_t *b = agg.free;
        agg.free = b->next;
        free(b);
    }
    free(agg.owed);
    agg.owed = NULL;
    agg.nowed = agg.cap_owed = 0;
    free(agg.ctxs);
    agg.ctxs = NULL;
    agg.nctxs = agg.cap_ctxs = 0;
    agg.on = 0;
    agg.refused = 0;
}

/* ------------------------------------------------------------ target */

static void owe_ack(int pe, uint64_t cookie)
{
    pthread_mutex_lock(&agg.owed_lock);
    if (agg.nowed && agg.owed[agg.nowed - 1].pe == pe &&
        agg.owed[agg.nowed - 1].cookie == cookie) {
        agg.owed[agg.nowed - 1].count++;
    } else {
        if (agg.nowed == agg.cap_owed) {
            size_t cap = agg.cap_owed ? 2 * agg.cap_owed : 64;
            void *p = realloc(agg.owed, cap * sizeof(*agg.owed));
            if (!p)
                dsm_ofi_cfg.fatal("network", "out of memory for "
                                  "acknowledgements of atomics");
            agg.owed = p;
            agg.cap_owed = cap;
        }
        agg.owed[agg.nowed++] = (struct agg_owed){pe, cookie, 1};
    }
    pthread_mutex_unlock(&agg.owed_lock);
}

/* A message arrived in receive buffer op (the CQ reader, under its
 * lock): a batch is applied and owed an acknowledgement; an
 * acknowledgement completes our batches. The buffer is posted again. */
void dsm_ofi_agg_recv(net_op_t *op)
{
    agg_buf_t *b = (agg_buf_t *)(void *)op;
    const agg_msg_t *m = &b->msg;
    const int npes = dsm_ofi_cfg.npes;

    /* From outside the job (or not a whole message): dropped. */
    if (m->from < 0 || m->from >= npes ||
        m->key != dsm_ofi_msg_key(m->from, dsm_ofi_cfg.me)) {
        if (agg.refused++ == 0)
            dsm_log_warn("network: dropped a message to the endpoint "
                         "that does not carry the job's key (claims PE "
                         "%d; a process outside the job?); said once",
                         (int)m->from);
        post_recv(b);
        return;
    }
    /* An acknowledgement's count may exceed NET_AGG_MAX (owe_ack merges
     * the batches of one context); a batch's may not. */
    if (m->kind == AGG_BATCH && m->count > NET_AGG_MAX)
        dsm_ofi_cfg.fatal("network", "a malformed batch of atomics "
                          "arrived (from %d, %u entries)", (int)m->from,
                          m->count);
    if (m->kind == AGG_BATCH) {
        for (uint32_t i = 0; i < m->count; i++) {
            const uint64_t w = m->ent[2 * i], *v = &m->ent[2 * i + 1];
            uint64_t off = w & AGG_OFF_MASK;
            unsigned seg = (unsigned)(w >> AGG_OFF_BITS) & 1,
                     s8 = (unsigned)(w >> (AGG_OFF_BITS + 1)) & 1,
                     aop = (unsigned)(w >> (AGG_OFF_BITS + 2)) & 7;
            const dsm_net_seg_t *s = &dsm_ofi_cfg.segs[seg];
            size_t size = s8 ? 8 : 4;
            /* The sender checked the address against its copy of the
             * layout; checked again before it is written. */
            if (!s->base || off > s->size || size > s->size - off)
                dsm_ofi_cfg.fatal("network",
                                  "PE %d sent an atomic outside the "
                                  "symmetric segments (offset %llu)",
                                  (int)m->from, (unsigned long long)off);
            /* *v holds the operand in its first size bytes (memcpy'd by
             * the sender, same byte order). */
            uint64_t old, *oldp = &old; /* not returned: non-fetching */
            if (s8)
                DSM_AMO_WORD(uint64_t, s->base + off, aop, v, v, oldp);
            else
                DSM_AMO_WORD(uint32_t, s->base + off, aop, v, v, oldp);
        }
        owe_ack(m->from, m->cookie);
    } else if (m->kind == AGG_ACK) {
        dsm_net_ctx_t *nc = (dsm_net_ctx_t *)(uintptr_t)m->cookie;
        net_pe_t *ps = &nc->pe[m->from];
        __atomic_fetch_add(&ps->agg_acked, m->count, __ATOMIC_RELEASE);
        __atomic_fetch_add(&nc->done, m->count, __ATOMIC_RELEASE);
        __atomic_fetch_add(&ps->done, m->count, __ATOMIC_RELEASE);
    } else {
        dsm_ofi_cfg.fatal("network", "a message of unknown kind %#x "
                          "arrived from PE %d", m->kind, (int)m->from);
    }
    post_recv(b);
}

int dsm_ofi_agg_acks_owed(void)
{
    return __atomic_load_n(&agg.nowed, __ATOMIC_RELAXED) != 0;
}

/* Send the acknowledgements owed (outside the CQ reader's lock; one
 * thread at a time; what the provider cannot take now waits for the
 * next call). */
void dsm_ofi_agg_ack_drain(void)
{
    if (!__atomic_load_n(&agg.nowed, __ATOMIC_RELAXED) ||
        pthread_mutex_trylock(&agg.owed_lock))
        return;
    size_t i = 0;
    for (; i < agg.nowed; i++) {
        agg_msg_t a = {.kind = AGG_ACK,
                       .from = dsm_ofi_cfg.me,
                       .count = agg.owed[i].count,
                       .cookie = agg.owed[i].cookie,
                       .key = dsm_ofi_msg_key(dsm_ofi_cfg.me,
                                              agg.owed[i].pe)};
        ssize_t rc = fi_inject(dsm_ofi.lanes[0].ep, &a, sizeof(a),
                               dsm_ofi.addr[agg.owed[i].pe]);
        if (rc == -FI_EAGAIN)
            break;
        if (rc)
            dsm_ofi_fail("network", "acknowledging atomics", agg.owed[i].pe,
                         rc);
    }
    memmove(agg.owed, agg.owed + i, (agg.nowed - i) * sizeof(*agg.owed));
    agg.nowed -= i;
    pthread_mutex_unlock(&agg.owed_lock);
}

/* ------------------------------------------------------------ initiator */

/* The CQ reader: a batch's send completed (its account is raised by the
 * caller); the buffer is free again. */
void dsm_ofi_agg_sent(net_op_t *op)
{
    agg_buf_t *b = (agg_buf_t *)(void *)op;
    pthread_mutex_lock(&agg.free_lock);
    b->next = agg.free;
    agg.free = b;
    pthread_mutex_unlock(&agg.free_lock);
}

static agg_buf_t *buf_get(void)
{
    pthread_mutex_lock(&agg.free_lock);
    agg_buf_t *b = agg.free;
    if (b)
        agg.free = b->next;
    pthread_mutex_unlock(&agg.free_lock);
    return b ? b : buf_new(NET_OP_AGG_SEND);
}

/* Send pe's collected batch (the caller holds nc->agg_lock). */
static void send_locked(dsm_net_ctx_t *nc, int pe)
{
    net_pe_t *ps = &nc->pe[pe];
    agg_buf_t *b = ps->agg;
    if (!b || !b->msg.count)
        return;
    ps->agg = NULL;
    b->op.pe = ps;
    b->msg.kind = AGG_BATCH;
    b->msg.from = dsm_ofi_cfg.me;
    b->msg.cookie = (uint64_t)(uintptr_t)nc;
    b->msg.key = dsm_ofi_msg_key(dsm_ofi_cfg.me, pe);
    struct iovec iov = {.iov_base = &b->msg,
                        .iov_len = sizeof(agg_msg_t) +
                                   2 * b->msg.count * sizeof(uint64_t)};
    struct fi_msg msg = {.msg_iov = &iov,
                         .iov_count = 1,
                         .addr = dsm_ofi.addr[pe],
                         .context = &b->op};
    /* The acknowledgement is the batch's second operation: counted before
     * the send, so that no count can catch up before it comes. */
    __atomic_fetch_add(&nc->posted, 1, __ATOMIC_ACQ_REL);
    __atomic_fetch_add(&ps->posted, 1, __ATOMIC_ACQ_REL);
    __atomic_fetch_add(&ps->agg_sent, 1, __ATOMIC_RELEASE);
    /* Transmit-complete is enough: the acknowledgement says applied. */
    NET_POST(nc, "shmem_atomic", "a batch of atomics", pe,
             fi_sendmsg(nc->ep, &msg, FI_COMPLETION));
    __atomic_fetch_sub(&nc->agg_held, 1, __ATOMIC_RELEASE);
}

static void ctx_register(dsm_net_ctx_t *nc)
{
    pthread_mutex_lock(&agg.ctxs_lock);
    if (agg.nctxs == agg.cap_ctxs) {
        int cap = agg.cap_ctxs ? 2 * agg.cap_ctxs : 8;
        void *p = realloc(agg.ctxs, (size_t)cap * sizeof(*agg.ctxs));
        if (!p)
            dsm_ofi_cfg.fatal("network", "out of memory for a context's "
                              "batches of atomics");
        agg.ctxs = p;
        agg.cap_ctxs = cap;
    }
    agg.ctxs[agg.nctxs++] = nc;
    nc->agg_listed = 1;
    pthread_mutex_unlock(&agg.ctxs_lock);
}

int dsm_ofi_agg_amo(dsm_net_ctx_t *nc, int op, int seg, uint64_t off,
                    size_t size, const void *val, int pe)
{
    uint64_t v = 0;
    if (!agg.on || nc->shared || off > AGG_OFF_MASK)
        return 0;
    memcpy(&v, val, size);
    if (!nc->agg_listed)
        ctx_register(nc);
    /* Before the lock: the gate's wait sends this context's batch. */
    dsm_ofi_fence_gate(nc, pe);
    pthread_mutex_lock(&nc->agg_lock);
    net_pe_t *ps = &nc->pe[pe];
    if (!ps->agg) {
        ps->agg = buf_get();
        ps->agg->msg.count = 0;
        __atomic_fetch_add(&nc->agg_held, 1, __ATOMIC_RELAXED);
    }
    agg_msg_t *m = &ps->agg->msg;
    m->ent[2 * m->count] = off | (uint64_t)seg << AGG_OFF_BITS |
                           (uint64_t)(size == 8) << (AGG_OFF_BITS + 1) |
                           (uint64_t)op << (AGG_OFF_BITS + 2);
    m->ent[2 * m->count + 1] = v;
    m->count++;
    __atomic_store_n(&ps->written, 1, __ATOMIC_RELAXED);
    dsm_ofi_wrote(nc, pe);
    /* Full, or nothing of this PE's in flight: send now. */
    if (m->count == NET_AGG_MAX ||
        __atomic_load_n(&ps->agg_acked, __ATOMIC_ACQUIRE) ==
            __atomic_load_n(&ps->agg_sent, __ATOMIC_RELAXED))
        send_locked(nc, pe);
    pthread_mutex_unlock(&nc->agg_lock);
    /* Read acknowledgements (and apply peers' batches) now and then. */
    if (!(++nc->agg_tick & 31)) {
        dsm_ofi_cq_poll();
        dsm_ofi_agg_ack_drain();
    }
    return 1;
}

void dsm_ofi_agg_send(dsm_net_ctx_t *nc, int pe)
{
    if (!__atomic_load_n(&nc->agg_held, __ATOMIC_ACQUIRE))
        return;
    pthread_mutex_lock(&nc->agg_lock);
    send_locked(nc, pe);
    pthread_mutex_unlock(&nc->agg_lock);
}

void dsm_ofi_agg_send_all(dsm_net_ctx_t *nc)
{
    if (!__atomic_load_n(&nc->agg_held, __ATOMIC_ACQUIRE))
        return;
    pthread_mutex_lock(&nc->agg_lock);
    for (int pe = 0; pe < dsm_ofi_cfg.npes && nc->agg_held; pe++)
        send_locked(nc, pe);
    pthread_mutex_unlock(&nc->agg_lock);
}

void dsm_ofi_agg_before(dsm_net_ctx_t *nc, int pe, int reads)
{
    net_pe_t *ps = &nc->pe[pe];
    if (!agg.on || nc->shared)
        return;
    dsm_ofi_agg_send(nc, pe);
    if (reads && __atomic_load_n(&ps->agg_acked, __ATOMIC_ACQUIRE) !=
                     __atomic_load_n(&ps->agg_sent, __ATOMIC_ACQUIRE))
        dsm_ofi_fence_gate_slow(nc, pe); /* every op of pe's complete */
}

/* Progress (any thread): send what contexts hold, without waiting for a
 * context or the list another thread has. */
void dsm_ofi_agg_progress(void)
{
    if (!agg.on)
        return;
    dsm_ofi_agg_ack_drain();
    if (pthread_mutex_trylock(&agg.ctxs_lock))
        return;
    for (int i = 0; i < agg.nctxs; i++) {
        dsm_net_ctx_t *nc = agg.ctxs[i];
        if (!__atomic_load_n(&nc->agg_held, __ATOMIC_RELAXED) ||
            pthread_mutex_trylock(&nc->agg_lock))
            continue;
        for (int pe = 0; pe < dsm_ofi_cfg.npes && nc->agg_held; pe++)
            send_locked(nc, pe);
        pthread_mutex_unlock(&nc->agg_lock);
    }
    pthread_mutex_unlock(&agg.ctxs_lock);
}

/* A context closes (after its quiet: nothing held or in flight). */
void dsm_ofi_agg_ctx_fini(dsm_net_ctx_t *nc)
{
    if (!nc->agg_listed)
        return;
    pthread_mutex_lock(&agg.ctxs_lock);
    for (int i = 0; i < agg.nctxs; i++)
        if (agg.ctxs[i] == nc) {
            agg.ctxs[i] = agg.ctxs[--agg.nctxs];
            break;
        }
    nc->agg_listed = 0;
    pthread_mutex_unlock(&agg.ctxs_lock);
}

#endif /* DSM_HAVE_OFI */
