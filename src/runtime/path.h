/*
 * The path table: how this PE reaches every other PE, chosen once at init
 * (NCCL's transport table, UCX's lanes).
 *
 * A path is a const table of operations (put, get, amo, signal,
 * sys_signal, load64, flush, quiet, fence, per-context open/close) and a
 * set of capabilities.
 * Two paths exist today:
 *
 *   shm  the peer's segments are mapped here: blocking RMA to host memory
 *        is the caller's memcpy up to SHMEM_SDMA_INLINE_MAX, everything
 *        else (nbi, device memory) engine commands through the sdma layer;
 *        AMOs and signals are CPU atomics on the mapping (the same
 *        mechanism as the engines' SIGNAL_ADD);
 *   net  the peer is on another node (or SHMEM_FORCE_NETWORK=1): libfabric
 *        (src/net), per-context completion state.
 *
 * RMA, AMOs, signals, quiet, pe_quiet, fence and the collectives call the
 * path of the target PE; none of them asks "network or not". Each PE has
 * two entries: `rma` (data movement, completion, the runtime's own
 * signals: sys_signal) and `amo` (user AMOs and signal operations:
 * signal). User words (put, get, amo, signal) must be in the user part of
 * a segment on every path: an address in the runtime's internal area after
 * the user heap fails with the one-line not-symmetric error. Only
 * sys_signal and load64, the runtime's (team and barrier words), reach the
 * internal area. The atomicity domain of the
 * job is a property of the table: on one node every `amo` is shm (CPU
 * atomics); as soon as the job spans nodes every `amo`, to this node's PEs
 * and to this PE too, is net, because a provider's atomics are atomic only
 * with respect to each other (measured: mixing them lost mutual exclusion
 * in the lock test).
 *
 * The shm path's put/get/amo are also static inline here, so that the RMA
 * and AMO entry points devirtualize the common case (one compare of the
 * ops pointer): the function-pointer hop is taken only for other paths.
 */
#ifndef DSM_PATH_H
#define DSM_PATH_H

#include <string.h>

#include "common/amo_op.h"
#include "rt.h"

/* Capabilities (dsm_path_t.caps, and dsm_paths.caps_all over all PEs). */
#define DSM_PATH_CAP_LOADSTORE (1u << 0) /* CPU loads/stores reach the peer's host segments */
#define DSM_PATH_CAP_ENGINES (1u << 1)   /* sdma commands reach it: COPY, SIGNAL, chains */
#define DSM_PATH_CAP_CPU_AMO (1u << 2)   /* AMOs are CPU atomics on the mapping */
#define DSM_PATH_CAP_DEVICE (1u << 3)    /* its device heap is reachable */
#define DSM_PATH_CAP_ORDERED (1u << 4)   /* writes placed in issue order */

typedef struct dsm_path_ops {
    const char *name;
    /* nbi 0: returns when src may be reused / dst holds the data; 1: may
     * return earlier, quiet (or flush of pe) completes. */
    void (*put)(dsm_ctx_t *c, void *sym, const void *src, size_t len, int pe,
                int nbi, const char *routine);
    void (*get)(dsm_ctx_t *c, void *dst, const void *sym, size_t len, int pe,
                int nbi, const char *routine);
    /* One AMO (dsm_amo_op_t) on the size-byte (4 or 8) word sym of pe. */
    void (*amo)(dsm_ctx_t *c, dsm_amo_op_t op, void *sym, size_t size,
                const void *val, const void *cmp, void *fetched, int pe,
                const char *routine);
    /* Store (add 0) or add v to the word sym of pe, after every earlier
     * write of c to pe (data before signal), and wake its waiters. signal:
     * a user's word (shmem_signal_add/set, put_signal), in the user part
     * of a segment; sys_signal: the runtime's (team, barrier), which may
     * be in the internal area. */
    void (*signal)(dsm_ctx_t *c, uint64_t *sym, uint64_t v, int add, int pe,
                   const char *routine);
    void (*sys_signal)(dsm_ctx_t *c, uint64_t *sym, uint64_t v, int add, int pe,
                       const char *routine);
    /* Atomic read of the word sym of pe. */
    uint64_t (*load64)(const uint64_t *sym, int pe, const char *routine);
    /* Complete c's operations to pe / all of c's operations on this path /
     * order c's later operations after its earlier ones. */
    void (*flush)(dsm_ctx_t *c, int pe);
    void (*quiet)(dsm_ctx_t *c);
    void (*fence)(dsm_ctx_t *c);
    /* Per-context state of the path (NULL: none). */
    dsm_status_t (*ctx_open)(dsm_ctx_t *c);
    void (*ctx_close)(dsm_ctx_t *c);
} dsm_path_ops_t;

typedef struct dsm_path {
    const dsm_path_ops_t *rma;
    const dsm_path_ops_t *amo;
    unsigned caps;
} dsm_path_t;

#define DSM_PATH_MAX 4
struct dsm_paths {
    /* 1 when every PE, for RMA and AMOs, is on the shm path (a one-node
     * job) and SHMEM_CHECK < 2: the entry points then skip the table with
     * one load. Level 2's per-call checks (dsm_rma_check2) sit on the
     * other branch, so that the default level pays nothing for them. */
    int shm_only;
    dsm_path_t *pe; /* [npes] */
    /* The distinct rma paths in use: quiet, fence and context set-up walk
     * these, not the PEs. */
    const dsm_path_ops_t *used[DSM_PATH_MAX];
    int nused;
    unsigned caps_all; /* AND of every PE's caps */
};
extern struct dsm_paths dsm_paths;
extern const dsm_path_ops_t dsm_path_shm;
extern const dsm_path_ops_t dsm_path_net;

/* After the segments, the sdma layer and the network are up. */
dsm_status_t dsm_paths_init(void);
void dsm_paths_fini(void);

/* ---- the choice itself, a pure function (path_plan.c) ----
 * dsm_paths_init gathers what the layers below found and lets
 * dsm_path_plan choose; test/unit/path_plan checks the choices without a
 * job. Which PEs the network reaches is decided below (segments map the
 * PEs of this node; SHMEM_FORCE_NETWORK makes every PE its own node). */
typedef struct dsm_path_place {
    int npes;
    /* [npes] 1: only the network reaches the PE (another node, or every
     * other PE under SHMEM_FORCE_NETWORK); 0: its segments are mapped. */
    const unsigned char *remote;
    /* [npes] 1: the PE's device heap is mapped here; NULL: no device heap. */
    const unsigned char *device;
    unsigned engine_caps; /* dsm_sdma_caps() of the sdma layer */
    int net_ordered;      /* the network places writes in issue order */
    int check;            /* SHMEM_CHECK */
    const dsm_path_ops_t *shm, *net; /* the tables handed out */
} dsm_path_place_t;
/* Fills out->pe[0..npes) (the caller's array), used, nused, caps_all and
 * shm_only; nothing else of *out. */
void dsm_path_plan(const dsm_path_place_t *in, struct dsm_paths *out);
/* The AND of the capabilities of PEs pes[0..n) in *paths (a team's:
 * coll/team.c); every capability for n = 0. */
unsigned dsm_path_caps_of(const struct dsm_paths *paths, const int *pes,
                          int n);

static inline const dsm_path_t *dsm_path_of(int pe)
{
    return &dsm_paths.pe[pe];
}

/* Every PE is reached through shared memory and CPU atomics: the job runs
 * on one node. */
static inline int dsm_paths_all_shm(void)
{
    return (dsm_paths.caps_all & (DSM_PATH_CAP_LOADSTORE | DSM_PATH_CAP_CPU_AMO)) ==
           (DSM_PATH_CAP_LOADSTORE | DSM_PATH_CAP_CPU_AMO);
}

/* ---- the shm path, inline ---- */

void dsm_rma_wait_flag(uint64_t *flag);

/* GPU memory is never touched by the CPU: RMA with the device heap on the
 * symmetric side, or a private GPU buffer (cudaMalloc) on the local side,
 * always goes to the engines. One load and compare while no device heap
 * exists (segs[DSM_SEG_DEVICE].size == 0). */
/* p lies in this PE's device heap (one load and compare while there is
 * none). The one classification of symmetric GPU memory: RMA, AMO/wait
 * words and the collectives ask here. */
static inline int dsm_mem_device_heap(const void *p)
{
    const dsm_seg_t *d = &dsm_rt.segs[DSM_SEG_DEVICE];
    return DSM_UNLIKELY(d->size) &&
           (uintptr_t)p - (uintptr_t)d->base < d->size;
}

static inline int dsm_rma_on_device(const void *sym, const void *local)
{
    if (DSM_LIKELY(!dsm_rt.segs[DSM_SEG_DEVICE].size))
        return 0;
    return dsm_mem_device_heap(sym) || dsm_rt_private_device(local);
}

/* Hand one command to the engine with affinity to pe. ctx != NULL: counted
 * for the context's quiet; flag != NULL: set when it retires. */
static inline void dsm_rma_issue(dsm_ctx_t *ctx, uint64_t *flag, int pe,
                                 const void *src, void *dst, size_t len)
{
    int e = dsm_rt_engine_of(pe);
    dsm_cmd_t c = {
        .op = DSM_CMD_COPY,
        .u.copy = {.src = src, .dst = dst, .dst2 = NULL, .len = len},
        .done = flag,
    };
    if (ctx) {
        /* Counted before the request enters the ring: quiet's snapshot of
         * issued[] then covers every command ahead of ours (rt.h). */
        __atomic_fetch_add(&ctx->issued[e], 1, __ATOMIC_RELAXED);
        c.done = &ctx->done[e];
    }
    dsm_sdma_request(dsm_rt.sdma, e, &c);
}

static inline void dsm_shm_put(dsm_ctx_t *c, void *sym, const void *src,
                               size_t len, int pe, int nbi,
                               const char *routine)
{
    char *r = dsm_rt_xlate(routine, sym, len, pe);
    /* Completing at issue is a valid nbi completion; below the measured
     * crossover the engine's hand-off costs more than the copy. */
    if (DSM_LIKELY(len <= (nbi ? dsm_rt.nbi_inline_max : dsm_rt.inline_max)) &&
        !dsm_rma_on_device(sym, src)) {
        memcpy(r, src, len);
        return;
    }
    if (nbi) {
        dsm_rma_issue(c, NULL, pe, src, r, len);
        return;
    }
    uint64_t flag = 0;
    dsm_rma_issue(NULL, &flag, pe, src, r, len);
    dsm_rma_wait_flag(&flag);
}

static inline void dsm_shm_get(dsm_ctx_t *c, void *dst, const void *sym,
                               size_t len, int pe, int nbi,
                               const char *routine)
{
    const char *r = dsm_rt_xlate(routine, sym, len, pe);
    if (DSM_LIKELY(len <= (nbi ? dsm_rt.nbi_inline_max : dsm_rt.inline_max)) &&
        !dsm_rma_on_device(sym, dst)) {
        memcpy(dst, r, len);
        return;
    }
    if (nbi) {
        dsm_rma_issue(c, NULL, pe, r, dst, len);
        return;
    }
    uint64_t flag = 0;
    dsm_rma_issue(NULL, &flag, pe, r, dst, len);
    dsm_rma_wait_flag(&flag);
}

/* The CPU may not touch GPU memory: AMOs, waits and signal words on the
 * device heap fail with one line (the engines' SIGNAL covers device words
 * only inside collectives and the on-stream routines). */
void dsm_rt_device_word(const char *routine, const void *addr, int pe)
    DSM_NORETURN;
static inline void dsm_check_host_word(const char *routine, const void *addr,
                                       int pe)
{
    if (dsm_mem_device_heap(addr))
        dsm_rt_device_word(routine, addr, pe);
}

/* A word this PE waits on or tests (wait_until, test, signal_wait_until
 * and their set forms: n words of size bytes). Host memory, aligned to
 * its type and, under SHMEM_CHECK >= 1, symmetric: a word outside the
 * symmetric heap and static data can never be written by another PE, so
 * the wait would never end. A few compares per call. */
void dsm_rt_bad_wait_word(const char *routine, const void *addr, size_t n,
                          size_t size) DSM_NORETURN;
static inline void dsm_check_wait_words(const char *routine, const void *addr,
                                        size_t n, size_t size)
{
    if (DSM_UNLIKELY(!n))
        return;
    dsm_check_host_word(routine, addr, dsm_rt.me);
    if (DSM_UNLIKELY((uintptr_t)addr & (size - 1)))
        dsm_rt_bad_wait_word(routine, addr, n, size);
    if (DSM_LIKELY(dsm_rt.check)) {
        for (int i = 0; i < dsm_rt.nsegs; i++) {
            const dsm_seg_t *s = &dsm_rt.segs[i];
            uintptr_t off = (uintptr_t)addr - (uintptr_t)s->base;
            if (off < s->size && n <= (s->size - off) / size)
                return;
        }
        dsm_rt_bad_wait_word(routine, addr, n, size);
    }
}

static inline void dsm_shm_amo(dsm_ctx_t *c, dsm_amo_op_t op, void *sym,
                               size_t size, const void *val, const void *cmp,
                               void *fetched, int pe, const char *routine)
{
    (void)c;
    dsm_check_host_word(routine, sym, pe);
    void *r = dsm_rt_xlate(routine, sym, size, pe);
    if (size == 8)
        DSM_AMO_WORD(uint64_t, r, op, val, cmp, fetched);
    else
        DSM_AMO_WORD(uint32_t, r, op, val, cmp, fetched);
}

/* SHMEM_CHECK=2: the symmetric range of an RMA or AMO lies in one live
 * allocation of the heap (a lookup under the heap's lock; static data is
 * not looked at). Reached only off the shm_only fast path. */
static inline void dsm_rma_check2(const char *routine, const void *sym,
                                  size_t len)
{
    if (DSM_UNLIKELY(dsm_rt.check > 1))
        dsm_rt_check_alloc(routine, "the symmetric address", sym, len);
}

/* ---- calls through the table (collectives, signals, rare paths) ---- */

/* SHMEM_CHECK=2: dsm_rma_check2, then the table (out of line, so that the
 * inline paths keep no registers for it). */
void dsm_path_put_checked(dsm_ctx_t *c, void *sym, const void *src,
                          size_t len, int pe, int nbi, const char *routine);
void dsm_path_get_checked(dsm_ctx_t *c, void *dst, const void *sym,
                          size_t len, int pe, int nbi, const char *routine);

static inline void dsm_path_put(dsm_ctx_t *c, void *sym, const void *src,
                                size_t len, int pe, int nbi,
                                const char *routine)
{
    if (DSM_LIKELY(dsm_paths.shm_only)) {
        dsm_shm_put(c, sym, src, len, pe, nbi, routine);
        return;
    }
    if (DSM_UNLIKELY(dsm_rt.check > 1)) {
        dsm_path_put_checked(c, sym, src, len, pe, nbi, routine);
        return;
    }
    const dsm_path_ops_t *o = dsm_paths.pe[pe].rma;
    if (o == &dsm_path_shm)
        dsm_shm_put(c, sym, src, len, pe, nbi, routine);
    else
        o->put(c, sym, src, len, pe, nbi, routine);
}

static inline void dsm_path_get(dsm_ctx_t *c, void *dst, const void *sym,
                                size_t len, int pe, int nbi,
                                const char *routine)
{
    if (DSM_LIKELY(dsm_paths.shm_only)) {
        dsm_shm_get(c, dst, sym, len, pe, nbi, routine);
        return;
    }
    if (DSM_UNLIKELY(dsm_rt.check > 1)) {
        dsm_path_get_checked(c, dst, sym, len, pe, nbi, routine);
        return;
    }
    const dsm_path_ops_t *o = dsm_paths.pe[pe].rma;
    if (o == &dsm_path_shm)
        dsm_shm_get(c, dst, sym, len, pe, nbi, routine);
    else
        o->get(c, dst, sym, len, pe, nbi, routine);
}

/* A signal word of the runtime (team, barrier; may be in the internal
 * area) on pe: through the rma path's sys_signal, whose order puts it
 * behind c's earlier writes to pe. User signals take the amo path's
 * signal (runtime/signal.c), which refuses the internal area. */
static inline void dsm_path_signal(dsm_ctx_t *c, uint64_t *sym, uint64_t v,
                                   int add, int pe, const char *routine)
{
    dsm_paths.pe[pe].rma->sys_signal(c, sym, v, add, pe, routine);
}

static inline uint64_t dsm_path_load64(const uint64_t *sym, int pe,
                                       const char *routine)
{
    return dsm_paths.pe[pe].rma->load64(sym, pe, routine);
}

/* Every operation of c on every path is complete. */
void dsm_path_quiet(dsm_ctx_t *c);
void dsm_path_fence(dsm_ctx_t *c);
void dsm_path_flush(dsm_ctx_t *c, int pe);
/* Drive paths that need the caller's progress (the network). Called on
 * every check of every wait loop: a one-node job pays one load. */
void dsm_path_progress_net(void);
static inline void dsm_path_progress(void)
{
    if (DSM_UNLIKELY(!dsm_paths.shm_only))
        dsm_path_progress_net();
}
/* Per-context state of every path in use. */
dsm_status_t dsm_path_ctx_open(dsm_ctx_t *c);
void dsm_path_ctx_close(dsm_ctx_t *c);

#endif /* DSM_PATH_H */
