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

#include <stdio.h>

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

/* A signal update of PE pe's word sig_addr through pe's amo path (the
 * job's atomicity domain, path.h): on the shm path an atomic store or add
 * on the mapping and a wake of the target's waiters; on the net path a
 * provider atomic after c's earlier writes to pe. */
static inline void signal_update(dsm_ctx_t *c, uint64_t *sig_addr,
                                 uint64_t signal, int sig_op, int pe,
                                 const char *routine)
{
    dsm_paths.pe[pe].amo->signal(c, sig_addr, signal,
                                 sig_op == SHMEM_SIGNAL_ADD, pe, routine);
}

static inline void put_signal(shmem_ctx_t ctx, void *dest, const void *src,
                              size_t len, uint64_t *sig_addr, uint64_t signal,
                              int sig_op, int pe, const char *routine)
{
    CHECK_SIG_OP(routine, sig_op);
    dsm_ctx_t *c = dsm_amo_check(ctx, sig_addr, sizeof(uint64_t), pe, routine);
    dsm_check_host_word(routine, sig_addr, pe);
    dsm_rma_put(ctx, dest, src, len, pe, routine);
    /* The amo path of pe may differ from its rma path (a job that spans
     * nodes signals a local PE with provider atomics): the data is
     * complete here (blocking put), so the order holds either way. */
    signal_update(c, sig_addr, signal, sig_op, pe, routine);
}

static inline void put_signal_nbi(shmem_ctx_t ctx, void *dest,
                                  const void *src, size_t len,
                                  uint64_t *sig_addr, uint64_t signal,
                                  int sig_op, int pe, const char *routine)
{
    CHECK_SIG_OP(routine, sig_op);
    dsm_ctx_t *c = dsm_amo_check(ctx, sig_addr, sizeof(uint64_t), pe, routine);
    const dsm_path_t *p = dsm_path_of(pe);

    if (DSM_UNLIKELY(!(p->caps & DSM_PATH_CAP_ENGINES) ||
                     !(p->caps & DSM_PATH_CAP_CPU_AMO) ||
                     (sig_op == SHMEM_SIGNAL_ADD &&
                      !(dsm_sdma_caps(dsm_rt.sdma) & DSM_SDMA_CAP_SIGNAL_ADD)))) {
        /* No engine queue to keep data before signal (the network), an
         * engine that cannot add, or signals in the provider's atomicity
         * domain: complete the data, then signal from here (a valid nbi
         * completion). */
        put_signal(ctx, dest, src, len, sig_addr, signal, sig_op, pe, routine);
        return;
    }
    dsm_check_host_word(routine, sig_addr, pe);
    uint64_t *w =
        (uint64_t *)(void *)dsm_rt_xlate(routine, sig_addr, sizeof(*w), pe);
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
    void pshmem_ctx_##N##_put_signal(                                          \
        shmem_ctx_t ctx, T *dest, const T *source, size_t nelems,              \
        uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)               \
    {                                                                          \
        put_signal(                                                            \
            ctx, dest, source,                                                 \
            DSM_NBYTES(nelems, sizeof(T), "shmem_ctx_" #N "_put_signal"),      \
            sig_addr, signal, sig_op, pe, "shmem_ctx_" #N "_put_signal");      \
    }                                                                          \
    void pshmem_##N##_put_signal(T *dest, const T *source, size_t nelems,      \
                                 uint64_t *sig_addr, uint64_t signal,          \
                                 int sig_op, int pe)                           \
    {                                                                          \
        put_signal(DSM_CTX_DEFAULT, dest, source,                              \
                   DSM_NBYTES(nelems, sizeof(T), "shmem_" #N "_put_signal"),   \
                   sig_addr, signal, sig_op, pe, "shmem_" #N "_put_signal");   \
    }                                                                          \
    void pshmem_ctx_##N##_put_signal_nbi(                                      \
        shmem_ctx_t ctx, T *dest, const T *source, size_t nelems,              \
        uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)               \
    {                                                                          \
        put_signal_nbi(                                                        \
            ctx, dest, source,                                                 \
            DSM_NBYTES(nelems, sizeof(T), "shmem_ctx_" #N "_put_signal_nbi"),  \
            sig_addr, signal, sig_op, pe, "shmem_ctx_" #N "_put_signal_nbi");  \
    }                                                                          \
    void pshmem_##N##_put_signal_nbi(T *dest, const T *source, size_t nelems,  \
                                     uint64_t *sig_addr, uint64_t signal,      \
                                     int sig_op, int pe)                       \
    {                                                                          \
        put_signal_nbi(                                                        \
            DSM_CTX_DEFAULT, dest, source,                                     \
            DSM_NBYTES(nelems, sizeof(T), "shmem_" #N "_put_signal_nbi"),      \
            sig_addr, signal, sig_op, pe, "shmem_" #N "_put_signal_nbi");      \
    }                                                                          \
    DSM_WEAK(ctx_##N##_put_signal)                                             \
    DSM_WEAK(N##_put_signal)                                                   \
    DSM_WEAK(ctx_##N##_put_signal_nbi)                                         \
    DSM_WEAK(N##_put_signal_nbi)
SHMEM_TYPES_RMA(SIGNAL_TYPED)

/* ---- sized ---- */
#define SIGNAL_SIZED(BITS, BYTES, T)                                           \
    void pshmem_ctx_put##BITS##_signal(                                        \
        shmem_ctx_t ctx, void *dest, const void *source, size_t nelems,        \
        uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)               \
    {                                                                          \
        put_signal(ctx, dest, source,                                          \
                   DSM_NBYTES(nelems, BYTES, "shmem_ctx_put" #BITS "_signal"), \
                   sig_addr, signal, sig_op, pe,                               \
                   "shmem_ctx_put" #BITS "_signal");                           \
    }                                                                          \
    void pshmem_put##BITS##_signal(void *dest, const void *source,             \
                                   size_t nelems, uint64_t *sig_addr,          \
                                   uint64_t signal, int sig_op, int pe)        \
    {                                                                          \
        put_signal(DSM_CTX_DEFAULT, dest, source,                              \
                   DSM_NBYTES(nelems, BYTES, "shmem_put" #BITS "_signal"),     \
                   sig_addr, signal, sig_op, pe, "shmem_put" #BITS "_signal"); \
    }                                                                          \
    void pshmem_ctx_put##BITS##_signal_nbi(                                    \
        shmem_ctx_t ctx, void *dest, const void *source, size_t nelems,        \
        uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)               \
    {                                                                          \
        put_signal_nbi(                                                        \
            ctx, dest, source,                                                 \
            DSM_NBYTES(nelems, BYTES, "shmem_ctx_put" #BITS "_signal_nbi"),    \
            sig_addr, signal, sig_op, pe,                                      \
            "shmem_ctx_put" #BITS "_signal_nbi");                              \
    }                                                                          \
    void pshmem_put##BITS##_signal_nbi(void *dest, const void *source,         \
                                       size_t nelems, uint64_t *sig_addr,      \
                                       uint64_t signal, int sig_op, int pe)    \
    {                                                                          \
        put_signal_nbi(                                                        \
            DSM_CTX_DEFAULT, dest, source,                                     \
            DSM_NBYTES(nelems, BYTES, "shmem_put" #BITS "_signal_nbi"),        \
            sig_addr, signal, sig_op, pe, "shmem_put" #BITS "_signal_nbi");    \
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
    put_signal(DSM_CTX_DEFAULT, dest, source, nelems, sig_addr, signal, sig_op,
               pe, "shmem_putmem_signal");
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
    put_signal_nbi(DSM_CTX_DEFAULT, dest, source, nelems, sig_addr, signal,
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
    dsm_check_host_word("shmem_signal_fetch", sig_addr, dsm_rt.me);
    dsm_rt_progress(); /* a test: progress without a waiter (wait.h) */
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

/* What a wait that lasts waits for (stall.h). */
static void describe_sig(const void *p, char *b, size_t n)
{
    const struct sig_wait *s = p;
    snprintf(b, n, "the signal word at %p %s %llu (it holds %llu)",
             (const void *)s->w, dsm_cmp_name(s->cmp), (unsigned long long)s->value,
             (unsigned long long)__atomic_load_n(s->w, __ATOMIC_ACQUIRE));
}

uint64_t pshmem_signal_wait_until(uint64_t *sig_addr, int cmp,
                                  uint64_t cmp_value)
{
    DSM_CHECK_INIT("shmem_signal_wait_until");
    if (DSM_UNLIKELY(!DSM_CMP_OK(cmp)))
        dsm_rt_bad_cmp("shmem_signal_wait_until", cmp);
    dsm_check_wait_words("shmem_signal_wait_until", sig_addr, 1,
                         sizeof(*sig_addr));
    struct sig_wait s = {sig_addr, cmp, cmp_value, 0};
    if (!sig_reached(&s))
        dsm_rt_wait_in("shmem_signal_wait_until", describe_sig, &s,
                       sig_reached, &s);
    return s.seen;
}
DSM_WEAK(signal_wait_until)

static inline void signal_op(shmem_ctx_t ctx, uint64_t *sig_addr,
                             uint64_t signal, int sig_op, int pe,
                             const char *routine)
{
    DSM_CHECK_INIT(routine);
    dsm_ctx_t *c = dsm_amo_check(ctx, sig_addr, sizeof(uint64_t), pe, routine);
    signal_update(c, sig_addr, signal, sig_op, pe, routine);
}

void pshmem_ctx_signal_add(shmem_ctx_t ctx, uint64_t *sig_addr,
                           uint64_t signal, int pe)
{
    signal_op(ctx, sig_addr, signal, SHMEM_SIGNAL_ADD, pe,
              "shmem_ctx_signal_add");
}
void pshmem_signal_add(uint64_t *sig_addr, uint64_t signal, int pe)
{
    signal_op(DSM_CTX_DEFAULT, sig_addr, signal, SHMEM_SIGNAL_ADD, pe,
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
    signal_op(DSM_CTX_DEFAULT, sig_addr, signal, SHMEM_SIGNAL_SET, pe,
              "shmem_signal_set");
}
DSM_WEAK(ctx_signal_add)
DSM_WEAK(signal_add)
DSM_WEAK(ctx_signal_set)
DSM_WEAK(signal_set)
