/*
 * The runtime's per-process state and the helpers every entry point uses:
 * PE checks, address translation, fatal errors.
 */
#ifndef DSM_RT_H
#define DSM_RT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "boot/boot.h"
#include "common/common.h"
#include "env.h"
#include "heap.h"
#include "sdma/sdma.h"
#include "segment.h"

#include <pshmem.h>
#include <pshmemx.h>

typedef struct dsm_ctx dsm_ctx_t;
struct dsm_net_ctx;
struct dsm_ctx {
    uint64_t *issued; /* [engines]: commands handed to the sdma layer */
    uint64_t *done;   /* [engines]: of those, retired */
    struct dsm_net_ctx *net; /* the net path's state (path.c), or NULL */
    long options;
    struct dsm_team *team;
    uint32_t magic; /* DSM_CTX_MAGIC while the context exists */
};
#define DSM_CTX_MAGIC 0xc0e7e47du

/* Per-PE control page: the first bytes of the internal area at the end of
 * the heap segment, so every local peer maps it with the heap. */
#define DSM_BARRIER_ROUNDS 32
typedef struct dsm_ctrl {
    /* Engine and proxy threads sleep here: doorbells, requests and signals
     * that may open a gated chain wake them. */
    dsm_wake_t wake DSM_ALIGNED_CL;
    /* Application threads waiting (barrier, signals, quiet) sleep here.
     * Plain puts do not notify it: a sleeping waiter re-checks on a short
     * timeout instead, so that a writer never pays a syscall per put. */
    dsm_wake_t wake_app DSM_ALIGNED_CL;
    /* Dissemination barrier: round k's flag is written only by the PE
     * 2^k places before us, with the barrier's epoch. */
    uint64_t barrier[DSM_BARRIER_ROUNDS] DSM_ALIGNED_CL;
    /* Collective allocation (heap.c): a PE whose allocation failed sets
     * word [k & 1] of every PE before the k-th allocation's barrier, so
     * all PEs return NULL together and the heaps stay symmetric. */
    uint64_t alloc_fail[2];
    /* The PE's GPU (dsm_sdma_gpu_ops_t.uid | DSM_CTRL_GPU_SET), 0 without
     * one: local PEs compare them to find a shared GPU (gpu.c). */
    uint64_t gpu_uid;
} dsm_ctrl_t;
#define DSM_CTRL_GPU_SET (1ull << 63)

/* Bytes at the end of the heap segment reserved for the runtime: the
 * control page, then DSM_TEAM_SLOTS team slots (src/coll/coll.h), each a
 * header of exchange words and one signal word per PE and channel (2), so
 * the area grows with the job: about 1 MiB at 1024 PEs; then the slots'
 * eager areas (8 MiB at most). */
#define DSM_INTERNAL_CTRL_BYTES 4096u
#define DSM_TEAM_SLOTS 64
/* Header words: 0-1 split exchange, 2-13 two call records (coll/agree.c). */
#define DSM_SLOT_HDR_WORDS 16
#define DSM_SLOT_BYTES(npes)                                                   \
    DSM_ALIGN_UP(((size_t)DSM_SLOT_HDR_WORDS + 2 * (size_t)(npes)) *          \
                     sizeof(uint64_t),                                         \
                 (size_t)DSM_CACHELINE)
/* After the slots, each slot's eager area (src/coll/eager.c): small
 * collectives write their data into the receiver's memory, one ring of
 * dsm_eager_lines(npes) 64-byte lines per sender, then one word per
 * sender (the lines of its messages consumed). 128 KiB per slot at most,
 * rings of at most 256 lines; none from 2048 PEs on (a ring needs two
 * lines). */
#define DSM_EAGER_SLOT_BUDGET (128u << 10)
#define DSM_EAGER_LINES_MAX 256u
static inline size_t dsm_eager_lines(int npes)
{
    size_t l = DSM_EAGER_LINES_MAX;
    while (l >= 2 && l * (size_t)npes * DSM_CACHELINE > DSM_EAGER_SLOT_BUDGET)
        l >>= 1;
    return l >= 2 ? l : 0;
}
#define DSM_EAGER_SLOT_BYTES(npes)                                             \
    (dsm_eager_lines(npes)                                                     \
         ? dsm_eager_lines(npes) * (size_t)(npes) * DSM_CACHELINE +            \
               DSM_ALIGN_UP((size_t)(npes) * sizeof(uint64_t),                 \
                            (size_t)DSM_CACHELINE)                             \
         : 0)
#define DSM_INTERNAL_SIZE(npes)                                                \
    ((size_t)DSM_INTERNAL_CTRL_BYTES +                                         \
     DSM_TEAM_SLOTS * (DSM_SLOT_BYTES(npes) + DSM_EAGER_SLOT_BYTES(npes)))

/* ---- collective calls (issue #27) ----
 * Every PE of a team must make the same collective call with the same
 * arguments. Each call is described once at entry; a digest of it rides
 * on the synchronisation words the call exchanges anyway (coll/agree.c),
 * so a PE that finds another PE's digest differing from its own fails the
 * job naming both calls, before any data moves. */
enum {
    DSM_CALL_BARRIER = 1, /* shmem_barrier_all, sync_all, team_sync, ... */
    DSM_CALL_ALLOC,       /* shmem_malloc, shmem_align, ... (a size, b align) */
    DSM_CALL_CALLOC,      /* a count, b size */
    DSM_CALL_REALLOC,     /* a size */
    DSM_CALL_FREE,
    DSM_CALL_FINALIZE,
    DSM_CALL_DEVAPI,      /* shmemx_dev_get's first call */
    DSM_CALL_BCAST,       /* a bytes, b PE_root */
    DSM_CALL_FCOLLECT,    /* a bytes */
    DSM_CALL_COLLECT,     /* a bytes (may differ) */
    DSM_CALL_ALLTOALL,    /* a bytes per peer */
    DSM_CALL_ALLTOALLS,   /* a elements per peer, b dst, c sst */
    DSM_CALL_REDUCE,      /* a bytes, b the operator */
    DSM_CALL_INSCAN,      /* as REDUCE */
    DSM_CALL_EXSCAN,
    DSM_CALL_SPLIT,       /* a start, b stride, c size (split_2d: a xrange) */
    DSM_CALL_DESTROY,
    DSM_CALL_LAST
};
typedef struct dsm_call {
    const char *routine;
    int kind;
    size_t esize; /* bytes per element (a is shown as a / esize), 0: none */
    uint64_t a, b, c;
} dsm_call_t;
#define DSM_CALL(routine, kind, esize, a, b, c)                                \
    (&(const dsm_call_t){(routine), (kind), (esize), (uint64_t)(a),          \
                         (uint64_t)(b), (uint64_t)(c)})

struct dsm_rt {
    int initialized; /* shmem_init calls not yet matched by finalize */
    int finalized;
    int thread_level;
    int me, npes;
    dsm_boot_info_t boot;
    const dsm_boot_ops_t *boot_ops;

    dsm_seg_t segs[DSM_SEG_MAX];
    int nsegs;
    dsm_heap_t heap; /* allocator over the heap segment's user part */
    pthread_mutex_t heap_lock;

    dsm_ctrl_t *ctrl;  /* mine */
    dsm_ctrl_t **peer_ctrl; /* [npes], NULL for PEs we cannot map */
    uint64_t barrier_epoch;

    dsm_sdma_t *sdma;
    int nengines;
    size_t inline_max;
    size_t nbi_inline_max;
    /* SHMEM_CHECK: 0 off, 1 cheap checks (default), 2 every check
     * (intro_shmem(3) lists what each level checks). */
    int check;
    /* The checked barrier of SHMEM_TEAM_WORLD (coll/agree.c), set by the
     * teams while they exist (dsm_rt_sync_call uses it; a pointer, so that
     * the runtime's allocator does not depend on coll). */
    void (*world_sync)(const dsm_call_t *c);
};

extern struct dsm_rt dsm_rt;
/* Hidden: its address is then a constant of the library (no GOT load in
 * the handle check below). */
extern struct dsm_ctx dsm_ctx_default __attribute__((visibility("hidden")));
/* The default context as the library names it: a constant, so that the
 * handle checks of the routines without a context fold away. */
#define DSM_CTX_DEFAULT ((shmem_ctx_t)&dsm_ctx_default)
/* Zero the default context's counters (init). */
void dsm_ctx_default_reset(void);

/* ---- errors ---- */

/* Print "dmashmem: PE n: routine: message" and end the job with status 1. */
void dsm_rt_fatal(const char *routine, const char *fmt, ...)
    DSM_PRINTF(2, 3) DSM_NORETURN;
/* The same line, handed to the bootstrap to print: when several PEs find
 * the same fault at once (collective calls that differ), the launcher
 * prints only the first line of the job. */
void dsm_rt_fatal_job(const char *routine, const char *fmt, ...)
    DSM_PRINTF(2, 3) DSM_NORETURN;
void dsm_rt_bad_pe(const char *routine, int pe) DSM_NORETURN;
void dsm_rt_bad_addr(const char *routine, const void *addr, size_t len,
                     int pe) DSM_NORETURN;
void dsm_rt_not_initialized(const char *routine) DSM_NORETURN;
/* The local buffer of an RMA (what: "source" or "dest") is NULL. */
void dsm_rt_null_buffer(const char *routine, const char *what, size_t len,
                        int pe) DSM_NORETURN;
void dsm_rt_count_wraps(const char *routine, size_t nelems, size_t size)
    DSM_NORETURN;
void dsm_rt_bad_ctx(const char *routine, shmem_ctx_t ctx) DSM_NORETURN;

/* Bytes of nelems elements of size bytes. A count whose byte size does
 * not fit a size_t fails the job (it used to wrap to a few bytes). size
 * is a constant at every call: one compare. */
static inline size_t dsm_rt_nbytes(size_t nelems, size_t size,
                                   const char *routine)
{
    if (DSM_UNLIKELY(nelems > SIZE_MAX / size))
        dsm_rt_count_wraps(routine, nelems, size);
    return nelems * size;
}
#define DSM_NBYTES(nelems, size, routine)                                      \
    dsm_rt_nbytes((nelems), (size), (routine))

#define DSM_CHECK_INIT(routine)                                                \
    do {                                                                       \
        if (DSM_UNLIKELY(dsm_rt.initialized <= 0))                             \
            dsm_rt_not_initialized(routine);                                   \
    } while (0)

#define DSM_CHECK_PE(routine, pe)                                              \
    do {                                                                       \
        if (DSM_UNLIKELY((unsigned)(pe) >= (unsigned)dsm_rt.npes))             \
            dsm_rt_bad_pe(routine, pe);                                        \
    } while (0)

/* ---- address translation ---- */

/* The address in this process at which PE pe's copy of the symmetric
 * object [addr, addr+len) can be accessed. Fails the job (naming routine)
 * when addr is not symmetric. */
static inline char *dsm_rt_xlate(const char *routine, const void *addr,
                                 size_t len, int pe)
{
    for (int i = 0; i < dsm_rt.nsegs; i++) {
        const dsm_seg_t *s = &dsm_rt.segs[i];
        uintptr_t off = (uintptr_t)addr - (uintptr_t)s->base;
        if (off < s->size) {
            if (DSM_UNLIKELY(len > s->size - off || !s->peer[pe]))
                break;
            return s->peer[pe] + off;
        }
    }
    dsm_rt_bad_addr(routine, addr, len, pe);
}

/* Contexts other than the default one live in one arena of fixed slots
 * (ctx.c), so that a handle is checked without reading through it: a
 * made-up handle is outside the arena or off a slot boundary, a destroyed
 * one has lost its magic. */
#define DSM_CTX_SLOT 64u
#define DSM_CTX_ARENA_BYTES ((size_t)DSM_CTX_SLOT << 20)
extern char *dsm_ctx_arena;       /* DSM_CTX_ARENA_BYTES, all readable */
extern size_t dsm_ctx_arena_used; /* bytes handed out so far */

/* The context behind a handle; fails the job (naming routine) on
 * SHMEM_CTX_INVALID, a destroyed context or anything else that is not a
 * context. The default context costs one compare (none where the handle is
 * DSM_CTX_DEFAULT). */
static inline dsm_ctx_t *dsm_ctx_check(shmem_ctx_t ctx, const char *routine)
{
    dsm_ctx_t *c = (dsm_ctx_t *)ctx;
    if (DSM_LIKELY(c == &dsm_ctx_default))
        return c;
    /* The whole arena is mapped, so a handle that starts in the part
     * handed out can be read; only a slot's start carries the magic. */
    uintptr_t off = (uintptr_t)c - (uintptr_t)dsm_ctx_arena;
    if (DSM_UNLIKELY(off >= dsm_ctx_arena_used ||
                     c->magic != DSM_CTX_MAGIC))
        dsm_rt_bad_ctx(routine, ctx);
    return c;
}

static inline int dsm_rt_engine_of(int pe)
{
    /* Engine affinity per destination PE, as DMA-Latte maps engines. */
    return dsm_rt.nengines == 1 ? 0 : pe % dsm_rt.nengines;
}

/* ---- ordering and waiting ---- */
void dsm_rt_quiet(dsm_ctx_t *ctx);
/* The runtime's own barrier over every PE (init, before the teams exist). */
void dsm_rt_sync_all(void);
/* The barrier of a collective call of the runtime (allocation, finalize)
 * over SHMEM_TEAM_WORLD, checked like every team collective; the plain
 * dsm_rt_sync_all before the teams exist. */
void dsm_rt_sync_call(const dsm_call_t *c);
/* Wait until cond(arg); wakes on writes into this PE's memory. */
void dsm_rt_wait(int (*cond)(void *), void *arg);
/* The same for a wait of routine: once it has lasted a second,
 * describe(darg) says what for if the PE is ended meanwhile (stall.h).
 * routine NULL with a describe: the routine the program called, found
 * from the stack (a wait below the API: a quiet's, a network
 * operation's). Neither: nothing is said (a collective's condition
 * describes its wait itself). */
void dsm_rt_wait_in(const char *routine,
                    void (*describe)(const void *, char *, size_t),
                    const void *darg, int (*cond)(void *), void *arg);
/* Wait until *word >= value (monotonic signal and flag words). */
void dsm_rt_wait_ge(const uint64_t *word, uint64_t value);

/* ---- init pieces ---- */
dsm_status_t dsm_rt_segments_init(void);
void dsm_rt_segments_fini(void);

#endif /* DSM_RT_H */
