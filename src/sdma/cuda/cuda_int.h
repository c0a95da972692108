/*
 * What the cuda backend's files share (never included outside
 * src/sdma/cuda). One idea per file:
 *   cuda.c       the backend ops: one CUstream per queue, completion
 *                words, held-back copies (coalescing), poll; the overview
 *   cuda_post.c  doorbells cut into runs of copies / stream memory
 *                operations / host work, put on the queue's stream
 *   cuda_agent.c the progress agent that posts what is held back
 *   memkind.c    what a pointer is for the copy engines (device memory,
 *                pinned and mapped host memory, pageable memory)
 *   vmm.c        the device heap: cuMemCreate, POSIX fd export/import,
 *                cuMemMap into this process
 *   onstream.c   the shmemx_*_on_stream support (work on a caller's stream)
 *   devapi.c     the device API's request FIFO and its proxy thread
 * Process-wide: one GPU per process, one dsm_sdma_t using it.
 */
#ifndef DSM_SDMA_CUDA_CUDA_INT_H
#define DSM_SDMA_CUDA_CUDA_INT_H

#include "sdma/backend.h"
#include "sdma/cuda/cu.h"
#include "sdma/cuda/devmem.h"

#include <unistd.h>

#define DSM_CUDA_MAX_BATCH 4096
#define DSM_CUDA_MAX_MEMOPS 255 /* cuStreamBatchMemOp: count < 256 */

/* What a pointer is, for the copy engines. */
enum { DSM_CUDA_PAGEABLE = 0, DSM_CUDA_HOSTREG, DSM_CUDA_DEV };

typedef struct dsm_cuda_state {
    dsm_cuda_settings_t set; /* from the runtime (dsm_cuda_configure) */
    size_t batch_min;        /* set.batch_min, at least 1 */
    unsigned copy_flags;     /* cuMemcpyBatchAsync flags (set.prefer_ce) */
    int active;              /* the backend is open */
    CUdevice dev;
    int ordinal;
    CUcontext ctx;
    dsm_sdma_t *s;
    uintptr_t own_lo, own_hi; /* this PE's device heap, as mapped here */
} dsm_cuda_state_t;

extern dsm_cuda_state_t dsm_cuda_st;

/* SHMEM_SDMA_STATS: the driver calls of posting (cuda_post.c), count and
 * time per kind, printed at close. */
enum { DSM_CUDA_T_COPY = 0, DSM_CUDA_T_GRAPH, DSM_CUDA_T_BUILD,
       DSM_CUDA_T_MEMOP, DSM_CUDA_T_DONE, DSM_CUDA_T_CTX, DSM_CUDA_T_LOOKUP,
       DSM_CUDA_T_ADVANCE, DSM_CUDA_T_LAST };
void dsm_cuda_call_stats_print(void);
extern struct dsm_cuda_call_t {
    uint64_t n, ns;
} dsm_cuda_call_t[DSM_CUDA_T_LAST];
/* A timed call: t0 = dsm_cuda_t_start() (0 unless SHMEM_SDMA_STATS),
 * the call, dsm_cuda_t_end(kind, t0). */
static inline uint64_t dsm_cuda_t_start(void)
{
    return DSM_UNLIKELY(dsm_cuda_st.s && dsm_cuda_st.s->cfg.stats)
               ? dsm_now_ns()
               : 0;
}
static inline void dsm_cuda_t_end(int kind, uint64_t t0)
{
    if (DSM_UNLIKELY(t0)) {
        __atomic_fetch_add(&dsm_cuda_call_t[kind].n, 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&dsm_cuda_call_t[kind].ns, dsm_now_ns() - t0,
                           __ATOMIC_RELAXED);
    }
}

/* A driver call that must not fail: one line, then the process ends. */
void dsm_cuda_fatal(const char *what, CUresult rc) DSM_NORETURN;
#define CU_CHECK(call)                                                         \
    do {                                                                       \
        CUresult rc_ = (call);                                                 \
        if (DSM_UNLIKELY(rc_ != CUDA_SUCCESS))                                 \
            dsm_cuda_fatal(#call, rc_);                                        \
    } while (0)

/* Make our context current on this thread; returns the one to give back
 * to dsm_cuda_ctx_leave (NULL: keep ours, which a thread with none
 * wants). */
CUcontext dsm_cuda_ctx_enter(void);
void dsm_cuda_ctx_leave(CUcontext prev);

/* memkind.c. Kind of p; *delta: add to p for the GPU's view of it (stream
 * memory operations on mapped host memory). */
int dsm_cuda_classify(const void *p, intptr_t *delta);
int dsm_cuda_kind_of(const void *p);
/* Record [lo, lo+len) as kind (registrations, device-heap mappings). */
void dsm_cuda_add_range(uintptr_t lo, size_t len, int kind, intptr_t delta);
void dsm_cuda_drop_range(uintptr_t lo);
/* Pin and map the page of a waited-for pageable word, so that a stream
 * can wait on it. 1 when the word is now mapped. */
int dsm_cuda_pin_word_page(const void *w);
/* The GPU's address of a word in this process (device or registered host
 * memory); 0 when the GPU cannot reach it. */
CUdeviceptr dsm_cuda_gpu_word(uint64_t *w);

/* cuda.c. SIGNAL_ADD on device memory: a one-thread kernel on st. */
CUresult dsm_cuda_launch_add(CUstream st, CUdeviceptr word, uint64_t value);
/* One CTA of kernels.cu's collective kernel k (DSM_CUDA_K_SMALL:
 * dsm_small_coll, params its dsm_small_coll_t; DSM_CUDA_K_LL: dsm_ll_coll,
 * its dsm_ll_coll_t; small_coll.h), one thread per of `units` work items
 * in whole warps, 32 .. what the JIT'd kernel may use on this GPU. */
enum { DSM_CUDA_K_SMALL = 0, DSM_CUDA_K_LL, DSM_CUDA_K_CTAS };
CUresult dsm_cuda_launch_cta(int k, CUstream st, void *params, size_t units);
/* Post the copies queue q holds back (coalescing); caller holds q->lock. */
void dsm_cuda_undefer_locked(dsm_sdma_queue_t *q);
/* Address of q's completion word as the GPU sees it, and its value. */
CUdeviceptr dsm_cuda_done_dev(dsm_sdma_queue_t *q);
uint64_t dsm_cuda_done(dsm_sdma_queue_t *q);

/* devapi.c: stop the device API's proxy thread and free its FIFO (first
 * thing in close; stats: print its counters). */
void dsm_cuda_devfifo_close(int stats);
/* The device words of dev_words (devapi.c), at close. */
void dsm_cuda_dev_words_close(void);

/* A side stream forked from a stream for big local copies (an AllGather's
 * own block), so that they overlap the copies to and from peers. */
typedef struct dsm_cuda_side {
    CUstream st;
    CUevent fork, join;
} dsm_cuda_side_t;
/* Move the big local copies among the n copies (d, s, l) off stream st
 * onto sd->st, forked from st by an event; *n shrinks. alone = 0: a run
 * of nothing but local copies stays where it is. Returns 1 when the side
 * stream was used: st must wait for sd->join before anything reports the
 * copies' completion. */
int dsm_cuda_side_fork(CUstream st, dsm_cuda_side_t *sd, CUdeviceptr *d,
                       CUdeviceptr *s, size_t *l, size_t *n, int alone);
void dsm_cuda_side_destroy(dsm_cuda_side_t *sd);

/* Was 4 (GPU-FACTS.md: hundreds of gated segments filled a stream's
 * command queue; 4 worked). A persistent collective on device words has
 * three WAITs per instance (trigger, ready, arrival), so 4 stopped the
 * posting of the second instance ahead and left it to poll(), on the
 * critical path; 16 still bounds the stream's queue to a few dozen
 * memory operations. */
#define DSM_CUDA_MAX_GATED 16

/* A queue's backend state (q->priv). */
typedef struct cu_queue {
    CUstream stream;
    volatile uint64_t *done; /* pinned host word: completed sequence */
    CUdeviceptr done_dev;
    uint64_t posted; /* [0, posted) is on the stream or executed */
    uint64_t seen;   /* last completion seen by poll (wakes) */
    int blocked;     /* posting stopped at a WAIT: poll resumes it */
    int gpu_dirty;   /* GPU work posted after the last completion write */
    int run;
    uint64_t run_start;
    /* the COPY run being built */
    CUdeviceptr *dsts, *srcs;
    size_t *sizes;
    size_t nb, cap;
    /* the memop run being built */
    CUstreamBatchMemOpParams ops[DSM_CUDA_MAX_MEMOPS];
    unsigned nops;
    uint64_t gates[DSM_CUDA_MAX_GATED]; /* sequence numbers of WAITs */
    int ngates;
    CUdeviceptr stage;
    int deferred;         /* submitted copies held back while the stream runs */
    unsigned defer_gen;   /* doorbells held back so far (the agent's clock) */
    uint64_t defer_ok;    /* commands below this were checked by may_defer */
    size_t last_bytes;    /* bytes of copies the last dsm_cuda_advance posted */
    dsm_cuda_side_t side; /* big local copies beside the stream */
    int join_pending;     /* the next completion report must wait for the
                           * side stream */
    /* the progress agent's view (its thread only) */
    unsigned agent_gen;
    uint64_t agent_since;
    /* SHMEM_CUDA_GRAPH_COPIES (chain queues): cached copy-run graphs */
    struct dsm_cuda_gcache *gc;
} cu_queue_t;

/* cuda_post.c. A copy-graph cache (SHMEM_CUDA_GRAPH_COPIES; NULL when off) and its
 * release (context current). */
struct dsm_cuda_gcache *dsm_cuda_gcache_new(void);
void dsm_cuda_gcache_free(struct dsm_cuda_gcache **c);
/* Put the copies d[i] <- s[i], l[i] bytes, on st as *c's graph for them
 * when the same run was seen before (built now on its second sighting);
 * 1 when done so, 0: issue them yourself. Copies of 1 MiB or more only
 * with big (the caller would not fork them to its side stream). Caller
 * serialises use of *c. */
int dsm_cuda_gcache_launch(struct dsm_cuda_gcache **c, const CUdeviceptr *d,
                           const CUdeviceptr *s, const size_t *l, size_t nb,
                           int big, CUstream st);
/* onstream.c. Free the on-stream collectives' copy graphs (close). */
void dsm_cuda_onstream_fini(void);
/* memkind.c. 1 when a is inside a range the backend recorded (heaps,
 * registered host memory: mapped until finalize or unregistered). */
int dsm_cuda_in_ranges(uint64_t a);

/* cuda_post.c. Put commands [cq->posted, upto) on q's stream; caller holds
 * q->lock. Starts the agent when it stops at the gate bound. */
void dsm_cuda_advance(dsm_sdma_queue_t *q, uint64_t upto);
/* cuda_post.c. Number of cq's WAITs on the stream not yet passed. */
int dsm_cuda_gates_pending(cu_queue_t *cq);
/* cuda.c. Resume q if stopped at the gate bound and a gate passed. */
int dsm_cuda_resume_blocked(dsm_sdma_queue_t *q, cu_queue_t *cq);

/* cuda_agent.c. 1 when the agent runs (started now); 0: hold nothing. */
int dsm_cuda_agent_start(dsm_sdma_t *s);
/* cuda_agent.c. Wake the agent: something new is held back. */
void dsm_cuda_agent_kick(void);
/* cuda_agent.c. Stop and join the agent (close). */
void dsm_cuda_agent_stop(void);

#endif /* DSM_SDMA_CUDA_CUDA_INT_H */
