/*
 * cuda backend: NVIDIA copy engines driven from the host through the
 * driver API (loaded at run time, cu.h).
 *
 * One CUstream per queue. At each doorbell the commands [posted, upto) are
 * cut into runs and put on the stream in queue order:
 *   COPY/BCAST with device memory on a side -> one cuMemcpyBatchAsync per
 *       run (cuMemcpyAsync for a run of one, or when the driver lacks it);
 *       a side in pageable host memory -> its own cuMemcpyAsync
 *   WAIT   -> cuStreamWaitValue64(GEQ), SIGNAL -> cuStreamWriteValue64,
 *       consecutive ones in one cuStreamBatchMemOp
 *   SIGNAL_ADD on device memory -> a one-thread kernel (kernels.cu, PTX
 *       loaded with cuModuleLoadData); the copy engines have no atomics
 *   SWAP   -> three ordered copies through a staging buffer per queue
 *   commands touching host memory only (host<->host copies, signals to
 *       pageable words, SIGNAL_ADD on host words) -> executed by the CPU:
 *       at once when the stream is idle, else by a host function
 *       (cuLaunchHostFunc) queued on the stream, so queue order holds.
 * Completion: the queue's sequence number, written after each doorbell's
 * work with cuStreamWriteValue64 into a word of pinned host memory (or
 * stored by the CPU after host-only work); poll() reads it.
 * At most DSM_CUDA_MAX_GATED unpassed WAITs are on a stream at a time: a
 * stream whose command queue fills with gated work blocks the thread that
 * posts to it (seen in GPU-FACTS.md with hundreds of gated segments).
 */
#include "sdma/backend.h"
#include "sdma/cuda/cu.h"
#include "sdma/cuda/devmem.h"
#include "sdma/cuda/kernels_ptx.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Was 4 (GPU-FACTS.md: hundreds of gated segments filled a stream's
 * command queue; 4 worked). A persistent collective on device words has
 * three WAITs per instance (trigger, ready, arrival), so 4 stopped the
 * posting of the second instance ahead and left it to poll(), on the
 * critical path; 16 still bounds the stream's queue to a few dozen
 * memory operations. */
#define DSM_CUDA_MAX_GATED 16
#define DSM_CUDA_MAX_BATCH 4096
#define DSM_CUDA_MAX_MEMOPS 255 /* cuStreamBatchMemOp: count < 256 */
#define DSM_CUDA_STAGE (4u << 20)
#define DSM_CUDA_MAX_RANGES 256
#define DSM_CUDA_MAX_MAPS 256

/* What a pointer is, for the copy engines. */
enum { MEM_PAGEABLE = 0, MEM_HOSTREG, MEM_DEV };
enum { RUN_NONE = 0, RUN_COPY, RUN_MEMOP, RUN_HOST };

typedef struct cu_range {
    uintptr_t lo, hi;
    int kind;
    intptr_t delta; /* device address - host address (MEM_HOSTREG) */
} cu_range_t;

/* Side streams forked from a stream for part of its copies (side_fork):
 * st[0] takes big local copies, st[1] the second half of big copies to or
 * from a peer (a second copy engine on the link). */
typedef struct cu_side {
    CUstream st[2];
    CUevent fork, join[2];
} cu_side_t;

typedef struct cu_map {
    CUdeviceptr va;
    size_t size;
    CUmemGenericAllocationHandle h;
} cu_map_t;

/* Process-wide state: one GPU per process. */
static struct {
    int hint_rank;
    long hint_forced;
    size_t batch_min;
    unsigned copy_flags;
    int active;
    CUdevice dev;
    int ordinal;
    CUcontext ctx;
    pthread_mutex_t lock; /* ranges, maps, module */
    cu_range_t ranges[DSM_CUDA_MAX_RANGES];
    int nranges;
    cu_map_t maps[DSM_CUDA_MAX_MAPS];
    CUmodule mod;
    CUfunction fn_add;
    dsm_sdma_t *s;
    uintptr_t own_lo, own_hi; /* this PE's device heap, as mapped here */
    int coalesce;             /* SHMEM_CUDA_COALESCE (default 1) */
    int merge;                /* SHMEM_CUDA_MERGE (default 1, add_copy) */
    int caller_submit;        /* SHMEM_CUDA_CALLER_SUBMIT (default 0) */
    size_t split_min;         /* SHMEM_CUDA_SPLIT_MIN (side_fork), 0 off */
    /* on-stream copies: side streams (see side_fork) */
    pthread_mutex_t os_lock;
    cu_side_t os_side;
} g = {.hint_forced = -1,
       .coalesce = 1,
       .merge = 1,
       .caller_submit = 0, /* measured worse, see dsm_cuda_set_device_hint */
       .split_min = 0, /* measured no gain, see is_split */
       .os_lock = PTHREAD_MUTEX_INITIALIZER,
       .batch_min = 2,
       .copy_flags = 0,
       .lock = PTHREAD_MUTEX_INITIALIZER};

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
    int deferred;       /* submitted copies held back while the stream runs */
    uint64_t defer_ok;  /* commands below this were checked by may_defer */
    size_t last_bytes;  /* bytes of copies posted by the last advance() */
    cu_side_t side;     /* copies beside the stream (side_fork) */
    unsigned join_pending; /* side streams the next completion report must
                            * wait for (bit i: side.st[i]) */
} cu_queue_t;

/* A copy within this PE's own device heap of at least this many bytes goes
 * on a side stream when other copies are in the same run, so that it
 * overlaps them instead of running before or after them (an AllGather's
 * local block and its NVLink copies: measured 835 us for 256 MiB per PE
 * with both on one stream, 2026-11-30). */
#define DSM_CUDA_SIDE_MIN ((size_t)1 << 20)
/* Copies held back at most (SHMEM_CUDA_COALESCE, cuda_submit). */
#define DSM_CUDA_DEFER_MAX 1024
#define DSM_CUDA_DEFER_BYTES ((size_t)4 << 20)

static int is_local(CUdeviceptr d, CUdeviceptr s)
{
    return d - g.own_lo < g.own_hi - g.own_lo &&
           s - g.own_lo < g.own_hi - g.own_lo;
}

static int is_local_big(CUdeviceptr d, CUdeviceptr s, size_t len)
{
    return len >= DSM_CUDA_SIDE_MIN && g.own_hi && is_local(d, s);
}

/* A copy to or from a peer big enough to split over two copy engines:
 * one engine moves ~395 GB/s over NV18 (GPU-FACTS.md), the link ~480.
 * Off by default: measured 2026-11-30 on H200 (SHMEM_CUDA_SPLIT_MIN=16M)
 * fcollect 256 MiB 752 vs 744 us unsplit, 64 MiB 212 vs 206 us: the two
 * streams did not add bandwidth. */
static int is_split(CUdeviceptr d, CUdeviceptr s, size_t len)
{
    return g.split_min && len >= g.split_min && !(g.own_hi && is_local(d, s));
}

/* ------------------------------------------------------------ helpers */

static void cu_fatal(const char *what, CUresult rc) DSM_NORETURN;
static void cu_fatal(const char *what, CUresult rc)
{
    dsm_log_error("cuda backend: %s failed: %s (error %d)", what,
                  dsm_cu_err(rc), (int)rc);
    _exit(1);
}

#define CU_CHECK(call)                                                         \
    do {                                                                       \
        CUresult rc_ = (call);                                                 \
        if (DSM_UNLIKELY(rc_ != CUDA_SUCCESS))                                 \
            cu_fatal(#call, rc_);                                              \
    } while (0)

/* Make our context current on this thread; returns the one to restore
 * (NULL: keep ours, which is what a thread with none wants). */
static CUcontext ctx_enter(void)
{
    CUcontext cur = NULL;
    dsm_cu.CtxGetCurrent(&cur);
    if (cur != g.ctx)
        dsm_cu.CtxSetCurrent(g.ctx);
    return cur == g.ctx ? NULL : cur;
}

static void ctx_leave(CUcontext prev)
{
    if (prev)
        dsm_cu.CtxSetCurrent(prev);
}

static void add_range(uintptr_t lo, size_t len, int kind, intptr_t delta)
{
    pthread_mutex_lock(&g.lock);
    if (g.nranges < DSM_CUDA_MAX_RANGES) {
        cu_range_t *r = &g.ranges[g.nranges];
        r->lo = lo;
        r->hi = lo + len;
        r->kind = kind;
        r->delta = delta;
        __atomic_store_n(&g.nranges, g.nranges + 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&g.lock);
}

void dsm_cuda_unregister_host_all(void)
{
    CUcontext prev = ctx_enter();
    pthread_mutex_lock(&g.lock);
    for (int i = 0; i < g.nranges; i++)
        if (g.ranges[i].kind == MEM_HOSTREG && g.ranges[i].hi > g.ranges[i].lo) {
            dsm_cu.MemHostUnregister((void *)g.ranges[i].lo);
            g.ranges[i].hi = g.ranges[i].lo;
        }
    pthread_mutex_unlock(&g.lock);
    ctx_leave(prev);
}

static void drop_range(uintptr_t lo)
{
    pthread_mutex_lock(&g.lock);
    for (int i = 0; i < g.nranges; i++)
        if (g.ranges[i].lo == lo)
            g.ranges[i].hi = lo; /* empty: never matches */
    pthread_mutex_unlock(&g.lock);
}

/* Kind of p; *delta: add to p for the GPU's view (stream memops). */
static int classify(const void *p, intptr_t *delta)
{
    uintptr_t a = (uintptr_t)p;
    int n = __atomic_load_n(&g.nranges, __ATOMIC_ACQUIRE);
    CUmemorytype t = 0;

    *delta = 0;
    for (int i = 0; i < n; i++)
        if (a - g.ranges[i].lo < g.ranges[i].hi - g.ranges[i].lo) {
            *delta = g.ranges[i].delta;
            return g.ranges[i].kind;
        }
    /* Not one of ours: a private cudaMalloc'ed / cudaHostAlloc'ed buffer,
     * or plain pageable memory (the driver says "invalid value"). */
    CUcontext prev = ctx_enter();
    int kind = MEM_DEV;
    if (dsm_cu.PointerGetAttribute(&t, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                   (CUdeviceptr)a) != CUDA_SUCCESS) {
        kind = MEM_PAGEABLE;
    } else if (t == CU_MEMORYTYPE_HOST) {
        CUdeviceptr d;
        if (dsm_cu.MemHostGetDevicePointer(&d, (void *)a, 0) == CUDA_SUCCESS)
            *delta = (intptr_t)(d - (CUdeviceptr)a);
        kind = MEM_HOSTREG;
    }
    ctx_leave(prev);
    return kind;
}

static int kind_of(const void *p)
{
    intptr_t d;
    return classify(p, &d);
}

static dsm_status_t load_kernels(void)
{
    CUresult rc = CUDA_SUCCESS;
    pthread_mutex_lock(&g.lock);
    if (!g.fn_add) {
        rc = dsm_cu.ModuleLoadData(&g.mod, dsm_cuda_kernels_ptx);
        if (rc == CUDA_SUCCESS)
            rc = dsm_cu.ModuleGetFunction(&g.fn_add, g.mod, "dsm_signal_add");
    }
    pthread_mutex_unlock(&g.lock);
    if (rc != CUDA_SUCCESS) {
        dsm_log_error("cuda backend: loading the signal-add kernel failed: %s",
                      dsm_cu_err(rc));
        return DSM_ERR_UNSUPPORTED;
    }
    return DSM_OK;
}

static CUresult launch_add(CUstream st, CUdeviceptr word, uint64_t value)
{
    unsigned long long w = word, v = value;
    void *args[] = {&w, &v};
    if (load_kernels() != DSM_OK)
        return CUDA_ERROR_NOT_SUPPORTED;
    return dsm_cu.LaunchKernel(g.fn_add, 1, 1, 1, 1, 1, 1, 0, st, args, NULL);
}

/* ------------------------------------------------------------ runs */

typedef struct host_run {
    dsm_sdma_queue_t *q;
    uint64_t from, to;
} host_run_t;

static void exec_host(dsm_sdma_queue_t *q, uint64_t from, uint64_t to)
{
    for (uint64_t i = from; i < to; i++) {
        const dsm_cmd_t *c = &q->ring[i & (q->depth - 1)];
        while (!dsm_sdma_exec_cpu(c))
            sched_yield(); /* a WAIT on a word the GPU cannot see */
        if (c->wake)
            dsm_wake_notify(c->wake);
        if (c->wake_app)
            dsm_wake_notify(c->wake_app);
    }
}

static void CUDA_CB host_fn(void *arg)
{
    host_run_t *r = arg;
    cu_queue_t *cq = r->q->priv;
    exec_host(r->q, r->from, r->to);
    __atomic_store_n(cq->done, r->to, __ATOMIC_RELEASE);
    dsm_wake_notify(r->q->sdma->app_wake);
    free(r);
}

/* Move part of the n copies (d, s, l) off stream st onto side streams
 * forked from it by an event: big local copies (an AllGather's own block)
 * whole onto sd->st[0], so they overlap the peer copies, and the second
 * half of each big peer copy onto sd->st[1], so that two copy engines
 * share the link. Local copies leave the arrays (*n shrinks); split ones
 * keep their first half. alone = 0: a run of nothing but local copies
 * stays where it is. Returns the side streams used (bit i = sd->st[i]):
 * st must wait for sd->join[i] before anything reports their completion. */
static unsigned side_fork(CUstream st, cu_side_t *sd, CUdeviceptr *d,
                          CUdeviceptr *s, size_t *l, size_t *n, int alone)
{
    size_t i, k = 0, big = 0, split = 0;
    unsigned used = 0;
    int forked = 0;

    if (!*n)
        return 0;
    for (i = 0; i < *n; i++) {
        if (is_local_big(d[i], s[i], l[i]))
            big++;
        else if (is_split(d[i], s[i], l[i]))
            split++;
    }
    if (big == *n && !alone)
        big = 0;
    if (!big && !split)
        return 0;
    if (!sd->fork)
        CU_CHECK(dsm_cu.EventCreate(&sd->fork, CU_EVENT_DISABLE_TIMING));
    for (i = 0; i < *n; i++) {
        int side = big && is_local_big(d[i], s[i], l[i])  ? 0
                   : is_split(d[i], s[i], l[i]) ? 1
                                                          : -1;
        if (side < 0) {
            d[k] = d[i];
            s[k] = s[i];
            l[k++] = l[i];
            continue;
        }
        if (!sd->st[side]) {
            CU_CHECK(dsm_cu.StreamCreate(&sd->st[side],
                                         CU_STREAM_NON_BLOCKING));
            CU_CHECK(dsm_cu.EventCreate(&sd->join[side],
                                        CU_EVENT_DISABLE_TIMING));
        }
        if (!forked) {
            CU_CHECK(dsm_cu.EventRecord(sd->fork, st));
            forked = 1;
        }
        if (!(used & (1u << side)))
            CU_CHECK(dsm_cu.StreamWaitEvent(sd->st[side], sd->fork, 0));
        used |= 1u << side;
        if (side == 0) {
            CU_CHECK(dsm_cu.MemcpyAsync(d[i], s[i], l[i], sd->st[0]));
            continue;
        }
        /* Split at a 64 KiB boundary: the first half stays in the run. */
        size_t h = (l[i] / 2) & ~(size_t)0xffff;
        CU_CHECK(dsm_cu.MemcpyAsync(d[i] + h, s[i] + h, l[i] - h,
                                    sd->st[1]));
        d[k] = d[i];
        s[k] = s[i];
        l[k++] = h;
    }
    *n = k;
    for (int j = 0; j < 2; j++)
        if (used & (1u << j))
            CU_CHECK(dsm_cu.EventRecord(sd->join[j], sd->st[j]));
    return used;
}

static void side_destroy(cu_side_t *sd)
{
    for (int j = 0; j < 2; j++)
        if (sd->st[j]) {
            dsm_cu.StreamDestroy(sd->st[j]);
            dsm_cu.EventDestroy(sd->join[j]);
        }
    if (sd->fork)
        dsm_cu.EventDestroy(sd->fork);
    memset(sd, 0, sizeof(*sd));
}

static void issue_copies(cu_queue_t *cq)
{
    for (size_t i = 0; i < cq->nb; i++)
        cq->last_bytes += cq->sizes[i];
    /* A queue's local copy may sit alone in its run (a chain's WAIT splits
     * it from the peer copies): fork it anyway and join only before the
     * next completion report (join_side), so the copies that follow in
     * the queue overlap it. */
    unsigned used = side_fork(cq->stream, &cq->side, cq->dsts, cq->srcs,
                              cq->sizes, &cq->nb, 1);
    cq->join_pending |= used & 1u;
    if (cq->nb < g.batch_min || !dsm_cu.MemcpyBatchAsync) {
        for (size_t i = 0; i < cq->nb; i++)
            CU_CHECK(dsm_cu.MemcpyAsync(cq->dsts[i], cq->srcs[i], cq->sizes[i],
                                        cq->stream));
    } else {
        /* Sources are read in stream order: an nbi source may be reused
         * only after quiet, and a blocking one is waited for. */
        CUmemcpyAttributes attr;
        size_t idx = 0;
        memset(&attr, 0, sizeof(attr));
        attr.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
        /* SHMEM_CUDA_PREFER_CE=1 asks for copy engines also within one
         * GPU; measured 2026-11-30 on H200 it doubled the cost of small
         * batches between GPUs (64 x 1 KiB: 43 -> 81 us), so off. */
        attr.flags = g.copy_flags;
        CUresult rc = dsm_cu.MemcpyBatchAsync(cq->dsts, cq->srcs, cq->sizes,
                                              cq->nb, &attr, &idx, 1,
                                              cq->stream);
        if (rc != CUDA_SUCCESS) {
            /* Refused (graph capture, an odd pointer): the same copies one
             * by one, and this driver's batch path is not tried again. */
            dsm_debug("cuda: cuMemcpyBatchAsync(%zu) failed (%s); copying "
                      "one by one from now on", cq->nb, dsm_cu_err(rc));
            dsm_cu.MemcpyBatchAsync = NULL;
            for (size_t i = 0; i < cq->nb; i++)
                CU_CHECK(dsm_cu.MemcpyAsync(cq->dsts[i], cq->srcs[i],
                                            cq->sizes[i], cq->stream));
        }
    }
    if (used & 2u) {
        /* Halves of peer copies: whatever follows in the queue (an
         * arrival signal) may rely on them, so the stream waits for them
         * right behind its own halves. */
        CU_CHECK(dsm_cu.StreamWaitEvent(cq->stream, cq->side.join[1], 0));
    }
    cq->nb = 0;
    cq->gpu_dirty = 1;
}

/* Make the stream wait for local copies forked to the side stream; before
 * anything reports completion of the queue. */
static void join_side(cu_queue_t *cq)
{
    for (int j = 0; j < 2; j++)
        if (cq->join_pending & (1u << j))
            CU_CHECK(dsm_cu.StreamWaitEvent(cq->stream, cq->side.join[j], 0));
    cq->join_pending = 0;
}

static void issue_memops(cu_queue_t *cq)
{
    if (cq->nops == 1 &&
        cq->ops[0].operation == CU_STREAM_MEM_OP_WRITE_VALUE_64)
        CU_CHECK(dsm_cu.StreamWriteValue64(cq->stream,
                                           cq->ops[0].writeValue.address,
                                           cq->ops[0].writeValue.value64, 0));
    else if (cq->nops == 1)
        CU_CHECK(dsm_cu.StreamWaitValue64(cq->stream,
                                          cq->ops[0].waitValue.address,
                                          cq->ops[0].waitValue.value64,
                                          CU_STREAM_WAIT_VALUE_GEQ));
    else if (cq->nops)
        CU_CHECK(dsm_cu.StreamBatchMemOp(cq->stream, cq->nops, cq->ops, 0));
    cq->nops = 0;
    cq->gpu_dirty = 1;
}

/* Host-only commands [from, to): by this thread when the stream is idle,
 * else by a host function behind the stream's earlier work. */
static void issue_host(dsm_sdma_queue_t *q, cu_queue_t *cq, uint64_t from,
                       uint64_t to)
{
    if (!cq->gpu_dirty &&
        __atomic_load_n(cq->done, __ATOMIC_ACQUIRE) == from) {
        uint64_t i;
        for (i = from; i < to; i++) {
            const dsm_cmd_t *c = &q->ring[i & (q->depth - 1)];
            if (c->op == DSM_CMD_WAIT && !dsm_sdma_exec_cpu(c))
                break; /* not satisfied: the rest goes behind the stream */
            exec_host(q, i, i + 1);
        }
        __atomic_store_n(cq->done, i, __ATOMIC_RELEASE);
        if (i == to)
            return;
        from = i;
    }
    host_run_t *r = malloc(sizeof(*r));
    if (!r) {
        dsm_log_error("cuda backend: out of memory");
        _exit(1);
    }
    r->q = q;
    r->from = from;
    r->to = to;
    join_side(cq);
    CU_CHECK(dsm_cu.LaunchHostFunc(cq->stream, host_fn, r));
    /* The host function writes the completion word itself, covering the
     * GPU work before it. */
    cq->gpu_dirty = 0;
}

static void flush_run(dsm_sdma_queue_t *q, cu_queue_t *cq, uint64_t seq)
{
    switch (cq->run) {
    case RUN_COPY:
        issue_copies(cq);
        break;
    case RUN_MEMOP:
        issue_memops(cq);
        break;
    case RUN_HOST:
        issue_host(q, cq, cq->run_start, seq);
        break;
    }
    cq->run = RUN_NONE;
}

static void begin_run(dsm_sdma_queue_t *q, cu_queue_t *cq, int run,
                      uint64_t seq)
{
    if (cq->run != run) {
        flush_run(q, cq, seq);
        cq->run = run;
        cq->run_start = seq;
    }
}

static void add_copy(dsm_sdma_queue_t *q, cu_queue_t *cq, void *dst,
                     const void *src, size_t len, uint64_t seq)
{
    if (!len)
        return;
    begin_run(q, cq, RUN_COPY, seq);
    if (g.merge && cq->nb) {
        /* Adjacent at both ends to the previous copy of the run (a
         * stream of put_nbi walking a buffer): one longer copy. Each copy
         * in a batch costs the driver ~0.6 us (64 x 1 KiB: 42 us as 64
         * copies, GPU-FACTS.md). Not when the longer copy would read what
         * it writes. */
        size_t j = cq->nb - 1;
        CUdeviceptr d = (CUdeviceptr)(uintptr_t)dst;
        CUdeviceptr s_ = (CUdeviceptr)(uintptr_t)src;
        if (cq->dsts[j] + cq->sizes[j] == d &&
            cq->srcs[j] + cq->sizes[j] == s_) {
            CUdeviceptr d0 = cq->dsts[j], s0 = cq->srcs[j];
            size_t n = cq->sizes[j] + len;
            if (d0 + n <= s0 || s0 + n <= d0) {
                cq->sizes[j] = n;
                return;
            }
        }
    }
    if (cq->nb == cq->cap)
        issue_copies(cq);
    cq->dsts[cq->nb] = (CUdeviceptr)(uintptr_t)dst;
    cq->srcs[cq->nb] = (CUdeviceptr)(uintptr_t)src;
    cq->sizes[cq->nb] = len;
    cq->nb++;
}

static void add_memop(dsm_sdma_queue_t *q, cu_queue_t *cq, int wait,
                      CUdeviceptr addr, uint64_t value, uint64_t seq)
{
    CUstreamBatchMemOpParams *op;
    begin_run(q, cq, RUN_MEMOP, seq);
    if (cq->nops == DSM_CUDA_MAX_MEMOPS)
        issue_memops(cq);
    op = &cq->ops[cq->nops++];
    memset(op, 0, sizeof(*op));
    if (wait) {
        op->waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_64;
        op->waitValue.address = addr;
        op->waitValue.value64 = value;
        op->waitValue.flags = CU_STREAM_WAIT_VALUE_GEQ;
    } else {
        op->writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_64;
        op->writeValue.address = addr;
        op->writeValue.value64 = value;
        op->writeValue.flags = CU_STREAM_WRITE_VALUE_DEFAULT;
    }
}

/* Commands that need their own ordered stream operations. */
static void single_copy(dsm_sdma_queue_t *q, cu_queue_t *cq, void *dst,
                        const void *src, size_t len, uint64_t seq)
{
    flush_run(q, cq, seq);
    if (len)
        CU_CHECK(dsm_cu.MemcpyAsync((CUdeviceptr)(uintptr_t)dst,
                                    (CUdeviceptr)(uintptr_t)src, len,
                                    cq->stream));
    cq->gpu_dirty = 1;
}

static void swap_staged(dsm_sdma_queue_t *q, cu_queue_t *cq, char *a, char *b,
                        size_t len, uint64_t seq)
{
    flush_run(q, cq, seq);
    if (!cq->stage)
        CU_CHECK(dsm_cu.MemAlloc(&cq->stage, DSM_CUDA_STAGE));
    for (size_t off = 0; off < len; off += DSM_CUDA_STAGE) {
        size_t n = DSM_MIN(len - off, (size_t)DSM_CUDA_STAGE);
        CUdeviceptr pa = (CUdeviceptr)(uintptr_t)(a + off);
        CUdeviceptr pb = (CUdeviceptr)(uintptr_t)(b + off);
        CU_CHECK(dsm_cu.MemcpyAsync(cq->stage, pa, n, cq->stream));
        CU_CHECK(dsm_cu.MemcpyAsync(pa, pb, n, cq->stream));
        CU_CHECK(dsm_cu.MemcpyAsync(pb, cq->stage, n, cq->stream));
    }
    cq->gpu_dirty = 1;
}

static int gates_pending(cu_queue_t *cq)
{
    uint64_t done = __atomic_load_n(cq->done, __ATOMIC_ACQUIRE);
    int k = 0;
    for (int i = 0; i < cq->ngates; i++)
        if (cq->gates[i] >= done)
            cq->gates[k++] = cq->gates[i];
    cq->ngates = k;
    return k;
}

/* A WAIT on a word in pageable memory (a persistent request's trigger,
 * malloc'ed) would run as a host function that spins until the word
 * opens, costing a host-function round trip (tens of us) per instance.
 * Pin and map the word's page instead, so the stream waits on it itself.
 * The page stays registered to the end of the process (a malloc arena
 * page: the allocator does not unmap it). 1 when the word is now mapped. */
static int pin_word_page(const void *w)
{
    long pg = sysconf(_SC_PAGESIZE);
    uintptr_t base = (uintptr_t)w & ~(uintptr_t)(pg - 1);
    CUdeviceptr d = 0;
    CUresult rc = dsm_cu.MemHostRegister(
        (void *)base, (size_t)pg,
        CU_MEMHOSTREGISTER_DEVICEMAP | CU_MEMHOSTREGISTER_PORTABLE);
    if (rc == CUDA_SUCCESS || rc == CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED)
        rc = dsm_cu.MemHostGetDevicePointer(&d, (void *)base, 0);
    if (rc != CUDA_SUCCESS) {
        dsm_debug("cuda: cannot map the page of a waited-for word %p (%s); "
                  "a host function waits for it", w, dsm_cu_err(rc));
        return 0;
    }
    add_range(base, (size_t)pg, MEM_HOSTREG, (intptr_t)(d - (CUdeviceptr)base));
    return 1;
}

/* Put commands [cq->posted, upto) on the stream. Caller holds q->lock. */
static void advance(dsm_sdma_queue_t *q, uint64_t upto)
{
    cu_queue_t *cq = q->priv;
    CUcontext prev = ctx_enter();
    uint64_t i = cq->posted;

    cq->blocked = 0;
    cq->last_bytes = 0;
    for (; i < upto; i++) {
        const dsm_cmd_t *c = &q->ring[i & (q->depth - 1)];
        int ks, kd, k2;
        intptr_t delta;

        switch ((dsm_cmd_op_t)c->op) {
        case DSM_CMD_COPY:
        case DSM_CMD_BCAST:
            ks = kind_of(c->u.copy.src);
            kd = kind_of(c->u.copy.dst);
            k2 = c->op == DSM_CMD_BCAST ? kind_of(c->u.copy.dst2) : MEM_HOSTREG;
            if (ks != MEM_DEV && kd != MEM_DEV &&
                (c->op == DSM_CMD_COPY || k2 != MEM_DEV)) {
                begin_run(q, cq, RUN_HOST, i);
            } else if (ks == MEM_PAGEABLE || kd == MEM_PAGEABLE ||
                       k2 == MEM_PAGEABLE) {
                single_copy(q, cq, c->u.copy.dst, c->u.copy.src,
                            c->u.copy.len, i);
                if (c->op == DSM_CMD_BCAST)
                    single_copy(q, cq, c->u.copy.dst2, c->u.copy.src,
                                c->u.copy.len, i);
            } else {
                add_copy(q, cq, c->u.copy.dst, c->u.copy.src, c->u.copy.len,
                         i);
                if (c->op == DSM_CMD_BCAST)
                    add_copy(q, cq, c->u.copy.dst2, c->u.copy.src,
                             c->u.copy.len, i);
            }
            break;
        case DSM_CMD_SWAP:
            ks = kind_of(c->u.copy.src);
            kd = kind_of(c->u.copy.dst);
            if (ks != MEM_DEV && kd != MEM_DEV)
                begin_run(q, cq, RUN_HOST, i);
            else
                swap_staged(q, cq, (char *)(uintptr_t)c->u.copy.src,
                            c->u.copy.dst, c->u.copy.len, i);
            break;
        case DSM_CMD_WAIT:
            ks = classify(c->u.sig.word, &delta);
            if (ks == MEM_PAGEABLE && pin_word_page(c->u.sig.word))
                ks = classify(c->u.sig.word, &delta);
            if (ks == MEM_PAGEABLE) {
                begin_run(q, cq, RUN_HOST, i);
                break;
            }
            if (ks == MEM_HOSTREG && cq->run != RUN_HOST &&
                __atomic_load_n(c->u.sig.word, __ATOMIC_ACQUIRE) >=
                    c->u.sig.value) {
                /* Already open: nothing to wait for on the stream, and
                 * the run goes on (copies on both sides of it stay one
                 * batch; only host runs track their commands). */
                if (cq->run == RUN_NONE)
                    begin_run(q, cq, RUN_MEMOP, i);
                break;
            }
            if (gates_pending(cq) >= DSM_CUDA_MAX_GATED) {
                cq->blocked = 1;
                goto out;
            }
            /* Report what came before before the stream may stop here.
             * A memory-operation run in progress takes the report and the
             * wait in the same cuStreamBatchMemOp (they run in order). */
            if (cq->run != RUN_MEMOP || cq->join_pending)
                flush_run(q, cq, i);
            join_side(cq);
            if (cq->gpu_dirty || (cq->run == RUN_MEMOP && cq->nops))
                add_memop(q, cq, 0, cq->done_dev, i, i);
            add_memop(q, cq, 1,
                      (CUdeviceptr)((intptr_t)(uintptr_t)c->u.sig.word + delta),
                      c->u.sig.value, i);
            cq->gates[cq->ngates++] = i;
            break;
        case DSM_CMD_SIGNAL:
            ks = classify(c->u.sig.word, &delta);
            /* A host word is stored by the CPU when nothing on the stream
             * is ahead of it (far cheaper than a stream round trip). */
            if (ks == MEM_PAGEABLE ||
                (ks == MEM_HOSTREG &&
                 (cq->run == RUN_HOST ||
                  (cq->run == RUN_NONE && !cq->gpu_dirty &&
                   __atomic_load_n(cq->done, __ATOMIC_ACQUIRE) == i))))
                begin_run(q, cq, RUN_HOST, i);
            else
                add_memop(q, cq, 0,
                          (CUdeviceptr)((intptr_t)(uintptr_t)c->u.sig.word +
                                        delta),
                          c->u.sig.value, i);
            break;
        case DSM_CMD_SIGNAL_ADD:
            if (kind_of(c->u.sig.word) != MEM_DEV) {
                begin_run(q, cq, RUN_HOST, i);
            } else {
                flush_run(q, cq, i);
                CU_CHECK(launch_add(cq->stream,
                                    (CUdeviceptr)(uintptr_t)c->u.sig.word,
                                    c->u.sig.value));
                cq->gpu_dirty = 1;
            }
            break;
        case DSM_CMD_NOP:
        case DSM_CMD_LAST:
            begin_run(q, cq, RUN_HOST, i);
            break;
        }
    }
out:
    if (cq->run == RUN_MEMOP && cq->nops && !cq->join_pending) {
        /* The completion report rides in the last memory-operation run. */
        add_memop(q, cq, 0, cq->done_dev, i, i);
        flush_run(q, cq, i);
        cq->gpu_dirty = 0;
    }
    flush_run(q, cq, i);
    join_side(cq);
    if (cq->gpu_dirty) {
        CU_CHECK(dsm_cu.StreamWriteValue64(cq->stream, cq->done_dev, i, 0));
        cq->gpu_dirty = 0;
    } else if (cq->posted != i &&
               __atomic_load_n(cq->done, __ATOMIC_ACQUIRE) < i) {
        /* Only "already open" WAITs since the last report: nothing will
         * write the word, so say so from here once the stream is idle. */
        CU_CHECK(dsm_cu.StreamWriteValue64(cq->stream, cq->done_dev, i, 0));
    }
    cq->posted = i;
    ctx_leave(prev);
}

/* ------------------------------------------------------------ ops */

static dsm_status_t cuda_probe(void)
{
    CUdevice d;
    int v = 0;

    if (dsm_cu_load() != DSM_OK)
        return DSM_ERR_NO_DEVICE;
    if (dsm_cu.DeviceGet(&d, 0) != CUDA_SUCCESS ||
        dsm_cu.DeviceGetAttribute(
            &v, CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, d) !=
            CUDA_SUCCESS ||
        !v) {
        dsm_debug("cuda: device 0 has no 64-bit stream memory operations");
        return DSM_ERR_NO_DEVICE;
    }
    return DSM_OK;
}

static dsm_status_t cuda_open(dsm_sdma_t *s)
{
    int n = 0;
    CUresult rc;

    dsm_cu.DeviceGetCount(&n);
    g.ordinal = g.hint_forced >= 0 ? (int)g.hint_forced : g.hint_rank % n;
    if (g.ordinal >= n) {
        dsm_log_error("SHMEM_CUDA_DEVICE=%ld: this node has %d GPU%s",
                      g.hint_forced, n, n == 1 ? "" : "s");
        return DSM_ERR_INVAL;
    }
    rc = dsm_cu.DeviceGet(&g.dev, g.ordinal);
    if (rc == CUDA_SUCCESS)
        rc = dsm_cu.DevicePrimaryCtxRetain(&g.ctx, g.dev);
    if (rc != CUDA_SUCCESS) {
        dsm_log_error("cuda backend: cannot use GPU %d: %s", g.ordinal,
                      dsm_cu_err(rc));
        return DSM_ERR_NO_DEVICE;
    }
    /* Leave it current on the initialising thread: the application's
     * runtime-API calls then use the same GPU. */
    {
        CUcontext cur = NULL;
        dsm_cu.CtxGetCurrent(&cur);
        if (!cur)
            dsm_cu.CtxSetCurrent(g.ctx);
    }
    g.s = s;
    s->priv = &g;
    __atomic_store_n(&g.active, 1, __ATOMIC_RELEASE);
    dsm_debug("cuda: GPU %d of %d, driver %d, batch copies %s (from %zu "
              "copies, prefer copy engines %s)", g.ordinal, n, dsm_cu.version,
              dsm_cu.MemcpyBatchAsync ? "yes" : "no", g.batch_min,
              g.copy_flags ? "yes" : "no");
    return DSM_OK;
}

static void cuda_close(dsm_sdma_t *s)
{
    pthread_mutex_lock(&g.lock);
    if (g.mod) {
        CUcontext prev = ctx_enter();
        dsm_cu.ModuleUnload(g.mod);
        ctx_leave(prev);
        g.mod = NULL;
        g.fn_add = NULL;
    }
    pthread_mutex_unlock(&g.lock);
    /* The primary context stays retained while the device heap is mapped;
     * it goes with the process. */
    g.s = NULL;
    s->priv = NULL;
}

static dsm_status_t cuda_queue_init(dsm_sdma_queue_t *q)
{
    cu_queue_t *cq = calloc(1, sizeof(*cq));
    CUcontext prev;
    CUresult rc;
    void *h = NULL;

    if (!cq)
        return DSM_ERR_NOMEM;
    cq->cap = DSM_MIN(q->depth * 2, (uint64_t)DSM_CUDA_MAX_BATCH);
    cq->dsts = calloc(cq->cap, sizeof(*cq->dsts));
    cq->srcs = calloc(cq->cap, sizeof(*cq->srcs));
    cq->sizes = calloc(cq->cap, sizeof(*cq->sizes));
    if (!cq->dsts || !cq->srcs || !cq->sizes)
        goto err_nomem;
    prev = ctx_enter();
    rc = dsm_cu.StreamCreate(&cq->stream, CU_STREAM_NON_BLOCKING);
    if (rc == CUDA_SUCCESS)
        rc = dsm_cu.MemHostAlloc(&h, 64,
                                 CU_MEMHOSTALLOC_DEVICEMAP |
                                     CU_MEMHOSTALLOC_PORTABLE);
    if (rc == CUDA_SUCCESS)
        rc = dsm_cu.MemHostGetDevicePointer(&cq->done_dev, h, 0);
    ctx_leave(prev);
    if (rc != CUDA_SUCCESS) {
        dsm_log_error("cuda backend: cannot create a queue: %s",
                      dsm_cu_err(rc));
        free(cq->dsts);
        free(cq->srcs);
        free(cq->sizes);
        free(cq);
        return DSM_ERR_NO_DEVICE;
    }
    cq->done = h;
    *cq->done = 0;
    q->priv = cq;
    return DSM_OK;

err_nomem:
    free(cq->dsts);
    free(cq->srcs);
    free(cq->sizes);
    free(cq);
    return DSM_ERR_NOMEM;
}

static void cuda_queue_fini(dsm_sdma_queue_t *q)
{
    cu_queue_t *cq = q->priv;
    CUcontext prev = ctx_enter();

    /* A chain queue may hold gated chains that never fired: then the
     * stream still owns the completion word and the staging buffer, and
     * both stay (the process is ending). */
    int idle = __atomic_load_n(cq->done, __ATOMIC_ACQUIRE) == cq->posted;
    dsm_cu.StreamDestroy(cq->stream);
    side_destroy(&cq->side);
    if (idle) {
        if (cq->stage)
            dsm_cu.MemFree(cq->stage);
        dsm_cu.MemFreeHost((void *)cq->done);
    }
    ctx_leave(prev);
    free(cq->dsts);
    free(cq->srcs);
    free(cq->sizes);
    free(cq);
    q->priv = NULL;
}

/* Coalescing (SHMEM_CUDA_COALESCE, default on): while the stream still
 * runs earlier work, a doorbell that brings only plain copies (no signal,
 * no wait, nobody waiting on them by name) is held back; poll() posts
 * everything held as one batch once the stream has drained. A stream of
 * put_nbi requests then costs one cuMemcpyBatchAsync per stream round
 * trip instead of one per doorbell. Blocking operations and anything a
 * chain waits for are posted at once. */
static int may_defer(dsm_sdma_queue_t *q, cu_queue_t *cq, uint64_t upto)
{
    /* Only behind short work: poll() must see the stream drain soon (the
     * proxy thread polls for a while before it sleeps). */
    if (!g.coalesce || cq->blocked || upto - cq->posted > DSM_CUDA_DEFER_MAX ||
        cq->last_bytes > DSM_CUDA_DEFER_BYTES ||
        __atomic_load_n(cq->done, __ATOMIC_ACQUIRE) >= cq->posted)
        return 0;
    /* A done counter (a context's count for quiet, or a blocking put's
     * flag) only moves at retirement, which waits anyway: it does not
     * forbid holding back. (It did until 2026-11-30, so that put_nbi was
     * never coalesced.) Commands already checked are not scanned again. */
    for (uint64_t i = DSM_MAX(cq->posted, cq->defer_ok); i < upto; i++) {
        const dsm_cmd_t *c = &q->ring[i & (q->depth - 1)];
        if (c->op != DSM_CMD_COPY || c->wake || c->wake_app)
            return 0;
    }
    cq->defer_ok = upto;
    return 1;
}

static void cuda_submit(dsm_sdma_queue_t *q, uint64_t upto)
{
    cu_queue_t *cq = q->priv;
    if (may_defer(q, cq, upto)) {
        __atomic_store_n(&cq->deferred, 1, __ATOMIC_RELEASE);
        return;
    }
    __atomic_store_n(&cq->deferred, 0, __ATOMIC_RELAXED);
    advance(q, upto);
}

/* Post what cuda_submit held back. Caller holds q->lock. */
static void undefer_locked(dsm_sdma_queue_t *q, cu_queue_t *cq)
{
    if (cq->deferred) {
        cq->deferred = 0;
        advance(q, __atomic_load_n(&q->submitted, __ATOMIC_ACQUIRE));
    }
}

static uint64_t cuda_poll(dsm_sdma_queue_t *q, int help)
{
    cu_queue_t *cq = q->priv;
    uint64_t done = __atomic_load_n(cq->done, __ATOMIC_ACQUIRE);
    (void)help;

    if (DSM_UNLIKELY(__atomic_load_n(&cq->blocked, __ATOMIC_RELAXED)) &&
        pthread_mutex_trylock(&q->lock) == 0) {
        if (cq->blocked && gates_pending(cq) < DSM_CUDA_MAX_GATED)
            advance(q, __atomic_load_n(&q->submitted, __ATOMIC_ACQUIRE));
        pthread_mutex_unlock(&q->lock);
    }
    if (__atomic_load_n(&cq->deferred, __ATOMIC_ACQUIRE) &&
        done >= __atomic_load_n(&cq->posted, __ATOMIC_RELAXED) &&
        pthread_mutex_trylock(&q->lock) == 0) {
        undefer_locked(q, cq);
        pthread_mutex_unlock(&q->lock);
    }
    if (done != __atomic_load_n(&cq->seen, __ATOMIC_RELAXED)) {
        __atomic_store_n(&cq->seen, done, __ATOMIC_RELAXED);
        dsm_wake_notify(q->sdma->app_wake);
    }
    return done;
}

static uint32_t cuda_caps(const dsm_sdma_t *s)
{
    (void)s;
    /* BCAST = two copies, SWAP = three through a staging buffer, and
     * SIGNAL_ADD on device memory a kernel: none is native. No proxy
     * thread by default (SHMEM_SDMA_PROXY=auto): measured on H200 in two
     * runs, without it the blocking 8 B put, 64 x 1 KiB put_nbi + quiet
     * and the 1 KiB collectives were as fast or faster (PERFORMANCE.md,
     * 2026-11-30 ~10:30 UTC). */
    return DSM_SDMA_CAP_HOST_MEM | DSM_SDMA_CAP_DEVICE_MEM |
           DSM_SDMA_CAP_NO_PROXY |
           (g.caller_submit ? DSM_SDMA_CAP_CALLER_SUBMIT : 0);
}

const dsm_sdma_backend_ops_t dsm_sdma_cuda_ops = {
    .size = sizeof(dsm_sdma_backend_ops_t),
    .name = "cuda",
    .probe = cuda_probe,
    .open = cuda_open,
    .close = cuda_close,
    .queue_init = cuda_queue_init,
    .queue_fini = cuda_queue_fini,
    .submit = cuda_submit,
    .poll = cuda_poll,
    .caps = cuda_caps,
};

/* ------------------------------------------------------------ devmem.h */

void dsm_cuda_set_device_hint(int local_rank, long forced, long batch_min,
                              int prefer_ce)
{
    g.hint_rank = local_rank < 0 ? 0 : local_rank;
    g.hint_forced = forced;
    g.batch_min = batch_min < 1 ? 1 : (size_t)batch_min;
    g.copy_flags = prefer_ce ? CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE : 0;
    /* Not in the runtime's table: a backend-private switch, for measuring
     * (docs/PERFORMANCE.md). */
    const char *e = getenv("SHMEM_CUDA_COALESCE");
    g.coalesce = !(e && !strcmp(e, "0"));
    e = getenv("SHMEM_CUDA_MERGE");
    g.merge = !(e && !strcmp(e, "0"));
    /* Opt-in: measured 2026-11-30 on H200 with the proxy thread, the
     * caller moving its own request (DSM_SDMA_CAP_CALLER_SUBMIT) gave
     * putmem 8 B 8.70 vs 8.95 us (noise) and made 64 x 1 KiB put_nbi +
     * quiet 120 vs 22 us (caller and proxy thread then take turns in the
     * driver with small batches). */
    e = getenv("SHMEM_CUDA_CALLER_SUBMIT");
    g.caller_submit = e && !strcmp(e, "1");
    e = getenv("SHMEM_CUDA_SPLIT_MIN");
    if (e && *e)
        g.split_min = (size_t)strtoull(e, NULL, 0);
}

int dsm_cuda_active(void)
{
    return __atomic_load_n(&g.active, __ATOMIC_ACQUIRE);
}

int dsm_cuda_device(void)
{
    return g.ordinal;
}

dsm_status_t dsm_cuda_register_host(void *p, size_t len)
{
    CUcontext prev = ctx_enter();
    CUdeviceptr d = 0;
    CUresult rc = dsm_cu.MemHostRegister(
        p, len, CU_MEMHOSTREGISTER_DEVICEMAP | CU_MEMHOSTREGISTER_PORTABLE);
    if (rc == CUDA_SUCCESS || rc == CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED)
        rc = dsm_cu.MemHostGetDevicePointer(&d, p, 0);
    ctx_leave(prev);
    if (rc != CUDA_SUCCESS) {
        dsm_log_warn("cuda: cannot register %zu bytes of host memory at %p "
                     "for the GPU (%s): copies from and to it will be staged",
                     len, p, dsm_cu_err(rc));
        return DSM_ERR_UNSUPPORTED;
    }
    add_range((uintptr_t)p, len, MEM_HOSTREG,
              (intptr_t)(d - (CUdeviceptr)(uintptr_t)p));
    return DSM_OK;
}

static CUmemAllocationProp heap_prop(void)
{
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof(prop));
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = g.ordinal;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    return prop;
}

/* Reserve, map and open for our GPU; records the mapping. */
static CUresult map_here(CUmemGenericAllocationHandle h, size_t size,
                         void **base)
{
    CUmemAllocationProp prop = heap_prop();
    CUmemAccessDesc acc;
    CUdeviceptr va = 0;
    size_t gran = 0;
    CUresult rc;

    rc = dsm_cu.MemGetAllocationGranularity(&gran, &prop,
                                            CU_MEM_ALLOC_GRANULARITY_RECOMMENDED);
    if (rc != CUDA_SUCCESS)
        return rc;
    rc = dsm_cu.MemAddressReserve(&va, size, gran, 0, 0);
    if (rc != CUDA_SUCCESS)
        return rc;
    rc = dsm_cu.MemMap(va, size, 0, h, 0);
    if (rc != CUDA_SUCCESS) {
        dsm_cu.MemAddressFree(va, size);
        return rc;
    }
    memset(&acc, 0, sizeof(acc));
    acc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    acc.location.id = g.ordinal;
    acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    rc = dsm_cu.MemSetAccess(va, size, &acc, 1);
    if (rc != CUDA_SUCCESS) {
        dsm_cu.MemUnmap(va, size);
        dsm_cu.MemAddressFree(va, size);
        return rc;
    }
    pthread_mutex_lock(&g.lock);
    for (int i = 0; i < DSM_CUDA_MAX_MAPS; i++)
        if (!g.maps[i].va) {
            g.maps[i].va = va;
            g.maps[i].size = size;
            g.maps[i].h = h;
            break;
        }
    pthread_mutex_unlock(&g.lock);
    add_range((uintptr_t)va, size, MEM_DEV, 0);
    *base = (void *)(uintptr_t)va;
    return CUDA_SUCCESS;
}

dsm_status_t dsm_cuda_heap_create(size_t *size, int *fd, void **base)
{
    CUmemAllocationProp prop = heap_prop();
    CUmemGenericAllocationHandle h;
    CUcontext prev = ctx_enter();
    size_t gran = 0;
    int f = -1;
    CUresult rc;

    rc = dsm_cu.MemGetAllocationGranularity(&gran, &prop,
                                            CU_MEM_ALLOC_GRANULARITY_RECOMMENDED);
    if (rc != CUDA_SUCCESS)
        goto err;
    *size = DSM_ALIGN_UP(*size, gran);
    rc = dsm_cu.MemCreate(&h, *size, &prop, 0);
    if (rc != CUDA_SUCCESS)
        goto err;
    rc = dsm_cu.MemExportToShareableHandle(
        &f, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    if (rc == CUDA_SUCCESS)
        rc = map_here(h, *size, base);
    if (rc == CUDA_SUCCESS) {
        g.own_lo = (uintptr_t)*base;
        g.own_hi = g.own_lo + *size;
    }
    if (rc != CUDA_SUCCESS) {
        if (f >= 0)
            close(f);
        dsm_cu.MemRelease(h);
        goto err;
    }
    ctx_leave(prev);
    *fd = f;
    return DSM_OK;
err:
    ctx_leave(prev);
    dsm_log_error("shmem_init: cannot create a device heap of %zu bytes on "
                  "GPU %d: %s (lower SHMEM_DEVICE_HEAP_SIZE, or 0 for none)",
                  *size, g.ordinal, dsm_cu_err(rc));
    return DSM_ERR_NOMEM;
}

dsm_status_t dsm_cuda_heap_import(int fd, size_t size, void **base)
{
    CUmemGenericAllocationHandle h;
    CUcontext prev = ctx_enter();
    CUresult rc;

    rc = dsm_cu.MemImportFromShareableHandle(
        &h, (void *)(uintptr_t)fd, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    if (rc == CUDA_SUCCESS) {
        rc = map_here(h, size, base);
        if (rc != CUDA_SUCCESS)
            dsm_cu.MemRelease(h);
    }
    ctx_leave(prev);
    if (rc != CUDA_SUCCESS) {
        dsm_log_error("shmem_init: cannot map a peer's device heap on GPU %d: "
                      "%s (are the GPUs peer-capable?)",
                      g.ordinal, dsm_cu_err(rc));
        return DSM_ERR_NO_DEVICE;
    }
    return DSM_OK;
}

void dsm_cuda_heap_unmap(void *base)
{
    CUdeviceptr va = (CUdeviceptr)(uintptr_t)base;
    CUcontext prev = ctx_enter();

    drop_range((uintptr_t)base);
    if ((uintptr_t)base == g.own_lo)
        g.own_lo = g.own_hi = 0;
    pthread_mutex_lock(&g.lock);
    for (int i = 0; i < DSM_CUDA_MAX_MAPS; i++)
        if (g.maps[i].va == va) {
            dsm_cu.MemUnmap(va, g.maps[i].size);
            dsm_cu.MemAddressFree(va, g.maps[i].size);
            dsm_cu.MemRelease(g.maps[i].h);
            memset(&g.maps[i], 0, sizeof(g.maps[i]));
        }
    pthread_mutex_unlock(&g.lock);
    ctx_leave(prev);
}

int dsm_cuda_ptr_is_device(const void *p)
{
    return g.active && kind_of(p) == MEM_DEV;
}

dsm_status_t dsm_cuda_copy_sync(void *dst, const void *src, size_t n)
{
    CUcontext prev = ctx_enter();
    CUresult rc = dsm_cu.MemcpyAsync((CUdeviceptr)(uintptr_t)dst,
                                     (CUdeviceptr)(uintptr_t)src, n, NULL);
    if (rc == CUDA_SUCCESS)
        rc = dsm_cu.StreamSynchronize(NULL);
    ctx_leave(prev);
    return rc == CUDA_SUCCESS ? DSM_OK : DSM_ERR_IO;
}

static dsm_status_t stream_rc(const char *what, CUresult rc)
{
    if (rc == CUDA_SUCCESS)
        return DSM_OK;
    dsm_log_error("%s: %s (error %d)", what, dsm_cu_err(rc), (int)rc);
    return DSM_ERR_IO;
}

dsm_status_t dsm_cuda_memcpy_on_stream(void *dst, const void *src, size_t n,
                                       void *stream)
{
    CUcontext prev = ctx_enter();
    CUresult rc = dsm_cu.MemcpyAsync((CUdeviceptr)(uintptr_t)dst,
                                     (CUdeviceptr)(uintptr_t)src, n,
                                     (CUstream)stream);
    ctx_leave(prev);
    return stream_rc("cuMemcpyAsync", rc);
}

dsm_status_t dsm_cuda_signal_on_stream(uint64_t *word, uint64_t value,
                                       int add, void *stream)
{
    intptr_t delta;
    int k = classify(word, &delta);
    CUdeviceptr w = (CUdeviceptr)((intptr_t)(uintptr_t)word + delta);
    CUcontext prev;
    CUresult rc;

    if (k == MEM_PAGEABLE || (add && k != MEM_DEV))
        return DSM_ERR_UNSUPPORTED;
    prev = ctx_enter();
    rc = add ? launch_add((CUstream)stream, w, value)
             : dsm_cu.StreamWriteValue64((CUstream)stream, w, value, 0);
    ctx_leave(prev);
    return stream_rc(add ? "signal-add kernel" : "cuStreamWriteValue64", rc);
}

dsm_status_t dsm_cuda_wait_on_stream(uint64_t *word, uint64_t value, int eq,
                                     void *stream)
{
    intptr_t delta;
    int k = classify(word, &delta);
    CUcontext prev;
    CUresult rc;

    if (k == MEM_PAGEABLE)
        return DSM_ERR_UNSUPPORTED;
    prev = ctx_enter();
    rc = dsm_cu.StreamWaitValue64(
        (CUstream)stream, (CUdeviceptr)((intptr_t)(uintptr_t)word + delta),
        value, eq ? CU_STREAM_WAIT_VALUE_EQ : CU_STREAM_WAIT_VALUE_GEQ);
    ctx_leave(prev);
    return stream_rc("cuStreamWaitValue64", rc);
}

dsm_status_t dsm_cuda_quiet_on_stream(dsm_sdma_t *s, void *stream)
{
    CUcontext prev;
    CUresult rc = CUDA_SUCCESS;

    if (!s || s->ops != &dsm_sdma_cuda_ops)
        return DSM_ERR_UNSUPPORTED;
    /* Requests still in the proxy ring get their queue sequence numbers
     * first (host work only; nothing waits for the GPU here). */
    while (dsm_sdma_requests_pending(s))
        if (!dsm_sdma_progress(s, 0))
            sched_yield();
    prev = ctx_enter();
    for (int e = 0; e < s->num_engines && rc == CUDA_SUCCESS; e++) {
        dsm_sdma_queue_t *q = s->queues[e];
        cu_queue_t *cq = q->priv;
        /* Whoever appended under q->lock rang the doorbell before
         * releasing it: tail is on the stream (or executed). */
        pthread_mutex_lock(&q->lock);
        undefer_locked(q, cq);
        uint64_t target = q->tail;
        pthread_mutex_unlock(&q->lock);
        if (__atomic_load_n(cq->done, __ATOMIC_ACQUIRE) >= target)
            continue;
        rc = dsm_cu.StreamWaitValue64((CUstream)stream, cq->done_dev, target,
                                      CU_STREAM_WAIT_VALUE_GEQ);
    }
    ctx_leave(prev);
    return stream_rc("cuStreamWaitValue64", rc);
}

static int capturing(CUstream st)
{
    CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;
    if (dsm_cu.StreamIsCapturing(st, &cs) != CUDA_SUCCESS)
        return 1; /* unknown: the form that is always legal */
    return cs != CU_STREAM_CAPTURE_STATUS_NONE;
}

dsm_status_t dsm_cuda_copies_on_stream(void *const *dst,
                                       const void *const *src,
                                       const size_t *len, size_t n,
                                       void *stream)
{
    CUstream st = (CUstream)stream;
    CUresult rc = CUDA_SUCCESS;
    size_t i, m = n;
    unsigned joined;

    if (!n)
        return DSM_OK;
    CUdeviceptr *d = malloc(n * (2 * sizeof(CUdeviceptr) + sizeof(size_t)));
    if (!d)
        return DSM_ERR_NOMEM;
    CUdeviceptr *s_ = d + n;
    size_t *l = (size_t *)(void *)(s_ + n);
    for (i = 0; i < n; i++) {
        d[i] = (CUdeviceptr)(uintptr_t)dst[i];
        s_[i] = (CUdeviceptr)(uintptr_t)src[i];
        l[i] = len[i];
    }
    CUcontext prev = ctx_enter();
    /* One side stream for all callers' streams: serialise its use. */
    pthread_mutex_lock(&g.os_lock);
    joined = side_fork(st, &g.os_side, d, s_, l, &m, 0);
    __typeof__(dsm_cu.MemcpyBatchAsync) batch =
        __atomic_load_n(&dsm_cu.MemcpyBatchAsync, __ATOMIC_RELAXED);
    int done = 0;
    if (m >= 2 && batch && m <= DSM_CUDA_MAX_BATCH && !capturing(st)) {
        size_t idx = 0;
        CUmemcpyAttributes attr;
        memset(&attr, 0, sizeof(attr));
        attr.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
        attr.flags = g.copy_flags;
        rc = batch(d, s_, l, m, &attr, &idx, 1, st);
        if (rc == CUDA_SUCCESS)
            done = 1;
        else
            dsm_debug("cuda: cuMemcpyBatchAsync(%zu) on a caller's stream "
                      "failed (%s); copying one by one", m, dsm_cu_err(rc));
        rc = CUDA_SUCCESS;
    }
    for (i = 0; !done && i < m && rc == CUDA_SUCCESS; i++)
        if (l[i])
            rc = dsm_cu.MemcpyAsync(d[i], s_[i], l[i], st);
    for (int j = 0; j < 2 && rc == CUDA_SUCCESS; j++)
        if (joined & (1u << j))
            rc = dsm_cu.StreamWaitEvent(st, g.os_side.join[j], 0);
    pthread_mutex_unlock(&g.os_lock);
    ctx_leave(prev);
    free(d);
    return stream_rc("cuMemcpyAsync", rc);
}

/* The GPU's address of a word in this process (device or registered host
 * memory); 0 when the GPU cannot reach it. */
static CUdeviceptr gpu_word(uint64_t *w)
{
    intptr_t delta;
    if (classify(w, &delta) == MEM_PAGEABLE)
        return 0;
    return (CUdeviceptr)((intptr_t)(uintptr_t)w + delta);
}

dsm_status_t dsm_cuda_exchange_on_stream(uint64_t *const *out,
                                         uint64_t *const *in, size_t n,
                                         void *stream)
{
    CUstreamBatchMemOpParams ops[DSM_CUDA_MAX_MEMOPS];
    CUstream st = (CUstream)stream;
    CUresult rc = CUDA_SUCCESS;
    unsigned k = 0;

    if (!n)
        return DSM_OK;
    CUcontext prev = ctx_enter();
    /* 3n operations in order: signals out, waits, resets. */
    for (size_t j = 0; j < 3 * n && rc == CUDA_SUCCESS; j++) {
        size_t i = j % n;
        int phase = (int)(j / n);
        CUdeviceptr a = gpu_word(phase == 0 ? out[i] : in[i]);
        CUstreamBatchMemOpParams *op = &ops[k++];
        if (!a) {
            ctx_leave(prev);
            return DSM_ERR_UNSUPPORTED;
        }
        memset(op, 0, sizeof(*op));
        if (phase == 1) {
            op->waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_64;
            op->waitValue.address = a;
            op->waitValue.value64 = 1;
            op->waitValue.flags = CU_STREAM_WAIT_VALUE_EQ;
        } else {
            op->writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_64;
            op->writeValue.address = a;
            op->writeValue.value64 = phase == 0 ? 1 : 0;
            op->writeValue.flags = CU_STREAM_WRITE_VALUE_DEFAULT;
        }
        if (k == DSM_CUDA_MAX_MEMOPS || j + 1 == 3 * n) {
            rc = dsm_cu.StreamBatchMemOp(st, k, ops, 0);
            k = 0;
        }
    }
    ctx_leave(prev);
    return stream_rc("cuStreamBatchMemOp", rc);
}

int dsm_cuda_launch_counts(uint64_t *kernels, uint64_t *host_fns)
{
    dsm_cu_launches_t c;
    dsm_cu_launch_counts(&c);
    *kernels = c.kernel + c.kernel_ex + c.cooperative;
    *host_fns = c.host_fn;
    return c.enabled;
}
