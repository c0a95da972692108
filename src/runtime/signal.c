/*
 * Signaling operations: put-with-signal (typed, sized, mem; blocking and
 * nbi; with and without a context), signal_fetch, signal_wait_until and the
 * 1.6 signal_add / signal_set.
 *
 * Data is visible at the target before the signal:
 *  - blocking: the put completes (the caller's memcpy, or an engine COPY
 *    whose completion we wait for), then a release store or atomic add of
 *    the signal word;
 *  - nbi: a COPY command and then a SIGNAL/SIGNAL_ADD command go to the same
 *    engine queue (dsm_rt_engine_of(pe)), which executes in order, so the
 *    queue's order is the data-before-signal order. Both count towards the
 *    context's quiet.
 * Signal updates wake the target's waiters (its application wake word) at
 * once instead of leaving them to their bounded sleep.
 */
#include "amo.h"
#include "wait.h"

static void bad_sig_op(const char *routine, int sig_op) DSM_NORETURN;
static void bad_sig_op(const char *routine, int sig_op)
{
    dsm_rt_fatal(routine, "invalid sig_op %d (use SHMEM_SIGNAL_SET or "
                 "SHMEM_SIGNAL_ADD)", sig_op);
}

#define CHECK_SIG_OP(routine, op)                                              \
    do {                                                                       \
        if (DSM_UNLIKELY((op) != SHMEM_SIGNAL_SET && (op) != SHMEM_SIGNAL_ADD)) \
            bad_sig_op(routine, op);                                           \
    } while (0)

/* The CPU side of a signal update on PE pe's word w; w NULL: pe is reached
 * through the network, sig_addr is the word (after every earlier network
 * write of this PE has completed: data before signal). */
static inline void signal_update(uint64_t *w, uint64_t signal, int sig_op,
                                 int pe, uint64_t *sig_addr,
                                 const char *routine)
{
    if (DSM_UNLIKELY(!w)) {
        dsm_net_signal(routine, sig_addr, signal, sig_op == SHMEM_SIGNAL_ADD,
                       pe);
        return;
    }
    if (sig_op == SHMEM_SIGNAL_SET)
        __atomic_store_n(w, signal, __ATOMIC_RELEASE);
    else
        __atomic_fetch_add(w, signal, __ATOMIC_ACQ_REL);
    dsm_wake_notify(&dsm_rt.peer_ctrl[pe]->wake_app);
}

static inline void put_signal(shmem_ctx_t ctx, void *dest, const void *src,
                              size_t len, uint64_t *sig_addr, uint64_t signal,
                              int sig_op, int pe, const char *routine)
{
    CHECK_SIG_OP(routine, sig_op);
    uint64_t *w = dsm_amo_addr(ctx, sig_addr, sizeof(uint64_t), pe, routine);
    dsm_rma_put(ctx, dest, src, len, pe, routine);
    signal_update(w, signal, sig_op, pe, sig_addr, routine);
}

static inline void put_signal_nbi(shmem_ctx_t ctx, void *dest,
                                  const void *src, size_t len,
                                  uint64_t *sig_addr, uint64_t signal,
                                  int sig_op, int pe, const char *routine)
{
    CHECK_SIG_OP(routine, sig_op);
    uint64_t *w = dsm_amo_addr(ctx, sig_addr, sizeof(uint64_t), pe, routine);
    dsm_ctx_t *c = (dsm_ctx_t *)ctx;

    if (DSM_UNLIKELY(!w ||
                     (sig_op == SHMEM_SIGNAL_ADD &&
                      !(dsm_sdma_caps(dsm_rt.sdma) & DSM_SDMA_CAP_SIGNAL_ADD)))) {
        /* An engine that cannot add, or a PE on another node: complete the
         * data, then signal from here (a valid nbi completion). */
        put_signal(ctx, dest, src, len, sig_addr, signal, sig_op, pe, routine);
        return;
    }
    if (len)
        dsm_rma_issue(c, NULL, pe, src, dsm_rt_xlate(routine, dest, len, pe),
                      len);

    int e = dsm_rt_engine_of(pe);
    dsm_cmd_t cmd = {
        .op = sig_op == SHMEM_SIGNAL_SET ? DSM_CMD_SIGNAL : DSM_CMD_SIGNAL_ADD,
        .u.sig = {.word = w, .value = signal},
        .wake = &dsm_rt.peer_ctrl[pe]->wake,
        .wake_app = &dsm_rt.peer_ctrl[pe]->wake_app,
        .done = &c->done[e],
    };
    __atomic_fetch_add(&c->issued[e], 1, __ATOMIC_RELAXED);
    dsm_sdma_request(dsm_rt.sdma, e, &cmd);
}

/* ---- typed ---- */
#define SIGNAL_TYPED(T, N)                                                     \
    void pshmem_ctx_##N##_put_signal(shmem_ctx_t ctx, T *dest,                 \
                                     const T *source, size_t nelems,           \
                                     uint64_t *sig_addr, uint64_t signal,      \
                                     int sig_op, int pe)                       \
    {                                                                          \
        put_signal(ctx, dest, source, nelems * sizeof(T), sig_addr, signal,    \
                   sig_op, pe, "shmem_ctx_" #N "_put_signal");                 \
    }                                                                          \
    void pshmem_##N##_put_signal(T *dest, const T *source, size_t nelems,      \
                                 uint64_t *sig_addr, uint64_t signal,          \
                                 int sig_op, int pe)                           \
    {                                                                          \
        put_signal(SHMEM_CTX_DEFAULT, dest, source, nelems * sizeof(T),        \
                   sig_addr, signal, sig_op, pe, "shmem_" #N "_put_signal");   \
    }                                                                          \
    void pshmem_ctx_##N##_put_signal_nbi(shmem_ctx_t ctx, T *dest,             \
                                         const T *source, size_t nelems,       \
                                         uint64_t *sig_addr, uint64_t signal,  \
                                         int sig_op, int pe)                   \
    {                                                                          \
        put_signal_nbi(ctx, dest, source, nelems * sizeof(T), sig_addr,        \
                       signal, sig_op, pe, "shmem_ctx_" #N "_put_signal_nbi"); \
    }                                                                          \
    void pshmem_##N##_put_signal_nbi(T *dest, const T *source, size_t nelems,  \
                                     uint64_t *sig_addr, uint64_t signal,      \
                                     int sig_op, int pe)                       \
    {                                                                          \
        put_signal_nbi(SHMEM_CTX_DEFAULT, dest, source, nelems * sizeof(T),    \
                       sig_addr, signal, sig_op, pe,                           \
                       "shmem_" #N "_put_signal_nbi");                         \
    }                                                                          \
    DSM_WEAK(ctx_##N##_put_signal)                                             \
    DSM_WEAK(N##_put_signal)                                                   \
    DSM_WEAK(ctx_##N##_put_signal_nbi)                                         \
    DSM_WEAK(N##_put_signal_nbi)
SHMEM_TYPES_RMA(SIGNAL_TYPED)

/* ---- sized ---- */
#define SIGNAL_SIZED(BITS, BYTES, T)                                           \
    void pshmem_ctx_put##BITS##_signal(shmem_ctx_t ctx, void *dest,            \
                                       const void *source, size_t nelems,      \
                                       uint64_t *sig_addr, uint64_t signal,    \
                                       int sig_op, int pe)                     \
    {                                                                          \
        put_signal(ctx, dest, source, nelems * BYTES, sig_addr, signal,        \
                   sig_op, pe, "shmem_ctx_put" #BITS "_signal");               \
    }                                                                          \
    void pshmem_put##BITS##_signal(void *dest, const void *source,             \
                                   size_t nelems, uint64_t *sig_addr,          \
                                   uint64_t signal, int sig_op, int pe)        \
    {                                                                          \
        put_signal(SHMEM_CTX_DEFAULT, dest, source, nelems * BYTES, sig_addr,  \
                   signal, sig_op, pe, "shmem_put" #BITS "_signal");           \
    }                                                                          \
    void pshmem_ctx_put##BITS##_signal_nbi(                                    \
        shmem_ctx_t ctx, void *dest, const void *source, size_t nelems,        \
        uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)               \
    {                                                                          \
        put_signal_nbi(ctx, dest, source, nelems * BYTES, sig_addr, signal,    \
                       sig_op, pe, "shmem_ctx_put" #BITS "_signal_nbi");       \
    }                                                                          \
    void pshmem_put##BITS##_signal_nbi(void *dest, const void *source,         \
                                       size_t nelems, uint64_t *sig_addr,      \
                                       uint64_t signal, int sig_op, int pe)    \
    {                                                                          \
        put_signal_nbi(SHMEM_CTX_DEFAULT, dest, source, nelems * BYTES,        \
                       sig_addr, signal, sig_op, pe,                           \
                       "shmem_put" #BITS "_signal_nbi");                       \
    }                                                                          \
    DSM_WEAK(ctx_put##BITS##_signal)                                           \
    DSM_WEAK(put##BITS##_signal)                                               \
    DSM_WEAK(ctx_put##BITS##_signal_nbi)                                       \
    DSM_WEAK(put##BITS##_signal_nbi)
SHMEM_SIZES(SIGNAL_SIZED)

/* ---- mem ---- */
void pshmem_ctx_putmem_signal(shmem_ctx_t ctx, void *dest, const void *source,
                              size_t nelems, uint64_t *sig_addr,
                              uint64_t signal, int sig_op, int pe)
{
    put_signal(ctx, dest, source, nelems, sig_addr, signal, sig_op, pe,
               "shmem_ctx_putmem_signal");
}
void pshmem_putmem_signal(void *dest, const void *source, size_t nelems,
                          uint64_t *sig_addr, uint64_t signal, int sig_op,
                          int pe)
{
    put_signal(SHMEM_CTX_DEFAULT, dest, source, nelems, sig_addr, signal,
               sig_op, pe, "shmem_putmem_signal");
}
void pshmem_ctx_putmem_signal_nbi(shmem_ctx_t ctx, void *dest,
                                  const void *source, size_t nelems,
                                  uint64_t *sig_addr, uint64_t signal,
                                  int sig_op, int pe)
{
    put_signal_nbi(ctx, dest, source, nelems, sig_addr, signal, sig_op, pe,
                   "shmem_ctx_putmem_signal_nbi");
}
void pshmem_putmem_signal_nbi(void *dest, const void *source, size_t nelems,
                              uint64_t *sig_addr, uint64_t signal, int sig_op,
                              int pe)
{
    put_signal_nbi(SHMEM_CTX_DEFAULT, dest, source, nelems, sig_addr, signal,
                   sig_op, pe, "shmem_putmem_signal_nbi");
}
DSM_WEAK(ctx_putmem_signal)
DSM_WEAK(putmem_signal)
DSM_WEAK(ctx_putmem_signal_nbi)
DSM_WEAK(putmem_signal_nbi)

/* ---- signal words ---- */

uint64_t pshmem_signal_fetch(const uint64_t *sig_addr)
{
    DSM_CHECK_INIT("shmem_signal_fetch");
    const uint64_t *w = (const uint64_t *)dsm_rt_xlate(
        "shmem_signal_fetch", sig_addr, sizeof(uint64_t), dsm_rt.me);
    return __atomic_load_n(w, __ATOMIC_ACQUIRE);
}
DSM_WEAK(signal_fetch)

struct sig_wait {
    const uint64_t *w;
    int cmp;
    uint64_t value, seen;
};

static int sig_reached(void *p)
{
    struct sig_wait *s = p;
    s->seen = __atomic_load_n(s->w, __ATOMIC_ACQUIRE);
    return DSM_COMPARE(s->seen, s->cmp, s->value);
}

uint64_t pshmem_signal_wait_until(uint64_t *sig_addr, int cmp,
                                  uint64_t cmp_value)
{
    DSM_CHECK_INIT("shmem_signal_wait_until");
    if (DSM_UNLIKELY(!DSM_CMP_OK(cmp)))
        dsm_rt_bad_cmp("shmem_signal_wait_until", cmp);
    struct sig_wait s = {sig_addr, cmp, cmp_value, 0};
    if (!sig_reached(&s))
        dsm_rt_wait(sig_reached, &s);
    return s.seen;
}
DSM_WEAK(signal_wait_until)

static inline void signal_op(shmem_ctx_t ctx, uint64_t *sig_addr,
                             uint64_t signal, int sig_op, int pe,
                             const char *routine)
{
    DSM_CHECK_INIT(routine);
    uint64_t *w = dsm_amo_addr(ctx, sig_addr, sizeof(uint64_t), pe, routine);
    signal_update(w, signal, sig_op, pe, sig_addr, routine);
}

void pshmem_ctx_signal_add(shmem_ctx_t ctx, uint64_t *sig_addr,
                           uint64_t signal, int pe)
{
    signal_op(ctx, sig_addr, signal, SHMEM_SIGNAL_ADD, pe,
              "shmem_ctx_signal_add");
}
void pshmem_signal_add(uint64_t *sig_addr, uint64_t signal, int pe)
{
    signal_op(SHMEM_CTX_DEFAULT, sig_addr, signal, SHMEM_SIGNAL_ADD, pe,
              "shmem_signal_add");
}
void pshmem_ctx_signal_set(shmem_ctx_t ctx, uint64_t *sig_addr,
                           uint64_t signal, int pe)
{
    signal_op(ctx, sig_addr, signal, SHMEM_SIGNAL_SET, pe,
              "shmem_ctx_signal_set");
}
void pshmem_signal_set(uint64_t *sig_addr, uint64_t signal, int pe)
{
    signal_op(SHMEM_CTX_DEFAULT, sig_addr, signal, SHMEM_SIGNAL_SET, pe,
              "shmem_signal_set");
}
DSM_WEAK(ctx_signal_add)
DSM_WEAK(signal_add)
DSM_WEAK(ctx_signal_set)
DSM_WEAK(signal_set)
