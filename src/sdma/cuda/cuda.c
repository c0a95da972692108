/*
 * cuda backend: NVIDIA copy engines driven from the host through the
 * driver API (loaded at run time, cu.h). This file: the backend ops, i.e.
 * queues and their streams, and the progress agent; the other files are
 * listed in cuda_int.h.
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
 *
 * Progress: no proxy thread. The thread that issues a request moves it
 * into its queue and rings the doorbell itself (DSM_SDMA_CAP_CALLER_SUBMIT,
 * sdma.c), so a put_nbi is on its stream when the call returns. What the
 * backend holds back on purpose (plain copies while the stream runs, the
 * rest of a queue past the gate bound) is posted by poll() when a thread
 * of the PE next waits, or else by the progress agent (below).
 */
#include "sdma/cuda/cuda_int.h"
#include "sdma/cuda/kernels_ptx.h"
#include "common/topo.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Was 4 (GPU-FACTS.md: hundreds of gated segments filled a stream's
 * command queue; 4 worked). A persistent collective on device words has
 * three WAITs per instance (trigger, ready, arrival), so 4 stopped the
 * posting of the second instance ahead and left it to poll(), on the
 * critical path; 16 still bounds the stream's queue to a few dozen
 * memory operations. */
#define DSM_CUDA_MAX_GATED 16
#define DSM_CUDA_STAGE (4u << 20)

enum { RUN_NONE = 0, RUN_COPY, RUN_MEMOP, RUN_HOST };

dsm_cuda_state_t dsm_cuda_st = {
    .set = {.device = -1, .batch_min = 2, .coalesce = 1, .merge = 1},
    .batch_min = 2,
};

/* The signal-add kernel, loaded on first use. */
static struct {
    pthread_mutex_t lock;
    CUmodule mod;
    CUfunction fn_add;
} kern = {.lock = PTHREAD_MUTEX_INITIALIZER};

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
    size_t last_bytes;    /* bytes of copies posted by the last advance() */
    dsm_cuda_side_t side; /* big local copies beside the stream */
    int join_pending;     /* the next completion report must wait for the
                           * side stream */
    /* the progress agent's view (its thread only) */
    unsigned agent_gen;
    uint64_t agent_since;
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

static int agent_start(dsm_sdma_t *s);
static void agent_kick(void);
static void agent_stop(void);

/* ------------------------------------------------------------ helpers */

void dsm_cuda_fatal(const char *what, CUresult rc)
{
    dsm_log_error("cuda backend: %s failed: %s (error %d)", what,
                  dsm_cu_err(rc), (int)rc);
    _exit(1);
}

CUcontext dsm_cuda_ctx_enter(void)
{
    CUcontext cur = NULL;
    dsm_cu.CtxGetCurrent(&cur);
    if (cur != dsm_cuda_st.ctx)
        dsm_cu.CtxSetCurrent(dsm_cuda_st.ctx);
    return cur == dsm_cuda_st.ctx ? NULL : cur;
}

void dsm_cuda_ctx_leave(CUcontext prev)
{
    if (prev)
        dsm_cu.CtxSetCurrent(prev);
}

static dsm_status_t load_kernels(void)
{
    CUresult rc = CUDA_SUCCESS;
    pthread_mutex_lock(&kern.lock);
    if (!kern.fn_add) {
        rc = dsm_cu.ModuleLoadData(&kern.mod, dsm_cuda_kernels_ptx);
        if (rc == CUDA_SUCCESS)
            rc = dsm_cu.ModuleGetFunction(&kern.fn_add, kern.mod,
                                          "dsm_signal_add");
    }
    pthread_mutex_unlock(&kern.lock);
    if (rc != CUDA_SUCCESS) {
        dsm_log_error("cuda backend: loading the signal-add kernel failed: %s",
                      dsm_cu_err(rc));
        return DSM_ERR_UNSUPPORTED;
    }
    return DSM_OK;
}

CUresult dsm_cuda_launch_add(CUstream st, CUdeviceptr word, uint64_t value)
{
    unsigned long long w = word, v = value;
    void *args[] = {&w, &v};
    if (load_kernels() != DSM_OK)
        return CUDA_ERROR_NOT_SUPPORTED;
    return dsm_cu.LaunchKernel(kern.fn_add, 1, 1, 1, 1, 1, 1, 0, st, args,
                               NULL);
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

/* ------------------------------------------------------------ side stream */

static int is_local_big(CUdeviceptr d, CUdeviceptr s, size_t len)
{
    const uintptr_t lo = dsm_cuda_st.own_lo, hi = dsm_cuda_st.own_hi;
    return len >= DSM_CUDA_SIDE_MIN && hi && d - lo < hi - lo &&
           s - lo < hi - lo;
}

int dsm_cuda_side_fork(CUstream st, dsm_cuda_side_t *sd, CUdeviceptr *d,
                       CUdeviceptr *s, size_t *l, size_t *n, int alone)
{
    size_t i, k = 0, big = 0;

    for (i = 0; i < *n; i++)
        big += is_local_big(d[i], s[i], l[i]);
    if (!big || (big == *n && !alone))
        return 0;
    if (!sd->st) {
        CU_CHECK(dsm_cu.StreamCreate(&sd->st, CU_STREAM_NON_BLOCKING));
        CU_CHECK(dsm_cu.EventCreate(&sd->fork, CU_EVENT_DISABLE_TIMING));
        CU_CHECK(dsm_cu.EventCreate(&sd->join, CU_EVENT_DISABLE_TIMING));
    }
    CU_CHECK(dsm_cu.EventRecord(sd->fork, st));
    CU_CHECK(dsm_cu.StreamWaitEvent(sd->st, sd->fork, 0));
    for (i = 0; i < *n; i++) {
        if (is_local_big(d[i], s[i], l[i])) {
            CU_CHECK(dsm_cu.MemcpyAsync(d[i], s[i], l[i], sd->st));
            continue;
        }
        d[k] = d[i];
        s[k] = s[i];
        l[k++] = l[i];
    }
    *n = k;
    CU_CHECK(dsm_cu.EventRecord(sd->join, sd->st));
    return 1;
}

void dsm_cuda_side_destroy(dsm_cuda_side_t *sd)
{
    if (sd->st) {
        dsm_cu.StreamDestroy(sd->st);
        dsm_cu.EventDestroy(sd->fork);
        dsm_cu.EventDestroy(sd->join);
    }
    memset(sd, 0, sizeof(*sd));
}

/* ------------------------------------------------------------ posting */

static void issue_copies(cu_queue_t *cq)
{
    for (size_t i = 0; i < cq->nb; i++)
        cq->last_bytes += cq->sizes[i];
    /* A queue's local copy may sit alone in its run (a chain's WAIT splits
     * it from the peer copies): fork it anyway and join only before the
     * next completion report (join_side), so the copies that follow in
     * the queue overlap it. */
    if (dsm_cuda_side_fork(cq->stream, &cq->side, cq->dsts, cq->srcs, cq->sizes,
                           &cq->nb, 1))
        cq->join_pending = 1;
    if (cq->nb < dsm_cuda_st.batch_min || !dsm_cu.MemcpyBatchAsync) {
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
        attr.flags = dsm_cuda_st.copy_flags;
        CUresult rc = dsm_cu.MemcpyBatchAsync(
            cq->dsts, cq->srcs, cq->sizes, cq->nb, &attr, &idx, 1, cq->stream);
        if (rc != CUDA_SUCCESS) {
            /* Refused (graph capture, an odd pointer): the same copies one
             * by one, and this driver's batch path is not tried again. */
            dsm_debug("cuda: cuMemcpyBatchAsync(%zu) failed (%s); copying "
                      "one by one from now on",
                      cq->nb, dsm_cu_err(rc));
            dsm_cu.MemcpyBatchAsync = NULL;
            for (size_t i = 0; i < cq->nb; i++)
                CU_CHECK(dsm_cu.MemcpyAsync(cq->dsts[i], cq->srcs[i],
                                            cq->sizes[i], cq->stream));
        }
    }
    cq->nb = 0;
    cq->gpu_dirty = 1;
}

/* Make the stream wait for local copies forked to the side stream; before
 * anything reports completion of the queue. */
static void join_side(cu_queue_t *cq)
{
    if (cq->join_pending)
        CU_CHECK(dsm_cu.StreamWaitEvent(cq->stream, cq->side.join, 0));
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
        CU_CHECK(dsm_cu.StreamWaitValue64(
            cq->stream, cq->ops[0].waitValue.address,
            cq->ops[0].waitValue.value64, CU_STREAM_WAIT_VALUE_GEQ));
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
    if (!cq->gpu_dirty && __atomic_load_n(cq->done, __ATOMIC_ACQUIRE) == from) {
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
    if (dsm_cuda_st.set.merge && cq->nb) {
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

/* Put commands [cq->posted, upto) on the stream. Caller holds q->lock. */
static void advance(dsm_sdma_queue_t *q, uint64_t upto)
{
    cu_queue_t *cq = q->priv;
    CUcontext prev = dsm_cuda_ctx_enter();
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
            ks = dsm_cuda_kind_of(c->u.copy.src);
            kd = dsm_cuda_kind_of(c->u.copy.dst);
            k2 = c->op == DSM_CMD_BCAST ? dsm_cuda_kind_of(c->u.copy.dst2)
                                        : DSM_CUDA_HOSTREG;
            if (ks != DSM_CUDA_DEV && kd != DSM_CUDA_DEV &&
                (c->op == DSM_CMD_COPY || k2 != DSM_CUDA_DEV)) {
                begin_run(q, cq, RUN_HOST, i);
            } else if (ks == DSM_CUDA_PAGEABLE || kd == DSM_CUDA_PAGEABLE ||
                       k2 == DSM_CUDA_PAGEABLE) {
                single_copy(q, cq, c->u.copy.dst, c->u.copy.src, c->u.copy.len,
                            i);
                if (c->op == DSM_CMD_BCAST)
                    single_copy(q, cq, c->u.copy.dst2, c->u.copy.src,
                                c->u.copy.len, i);
            } else {
                add_copy(q, cq, c->u.copy.dst, c->u.copy.src, c->u.copy.len, i);
                if (c->op == DSM_CMD_BCAST)
                    add_copy(q, cq, c->u.copy.dst2, c->u.copy.src,
                             c->u.copy.len, i);
            }
            break;
        case DSM_CMD_SWAP:
            ks = dsm_cuda_kind_of(c->u.copy.src);
            kd = dsm_cuda_kind_of(c->u.copy.dst);
            if (ks != DSM_CUDA_DEV && kd != DSM_CUDA_DEV)
                begin_run(q, cq, RUN_HOST, i);
            else
                swap_staged(q, cq, (char *)(uintptr_t)c->u.copy.src,
                            c->u.copy.dst, c->u.copy.len, i);
            break;
        case DSM_CMD_WAIT:
            ks = dsm_cuda_classify(c->u.sig.word, &delta);
            if (ks == DSM_CUDA_PAGEABLE &&
                dsm_cuda_pin_word_page(c->u.sig.word))
                ks = dsm_cuda_classify(c->u.sig.word, &delta);
            if (ks == DSM_CUDA_PAGEABLE) {
                begin_run(q, cq, RUN_HOST, i);
                break;
            }
            if (ks == DSM_CUDA_HOSTREG && cq->run != RUN_HOST &&
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
            ks = dsm_cuda_classify(c->u.sig.word, &delta);
            /* A host word is stored by the CPU when nothing on the stream
             * is ahead of it (far cheaper than a stream round trip). */
            if (ks == DSM_CUDA_PAGEABLE ||
                (ks == DSM_CUDA_HOSTREG &&
                 (cq->run == RUN_HOST ||
                  (cq->run == RUN_NONE && !cq->gpu_dirty &&
                   __atomic_load_n(cq->done, __ATOMIC_ACQUIRE) == i))))
                begin_run(q, cq, RUN_HOST, i);
            else
                add_memop(
                    q, cq, 0,
                    (CUdeviceptr)((intptr_t)(uintptr_t)c->u.sig.word + delta),
                    c->u.sig.value, i);
            break;
        case DSM_CMD_SIGNAL_ADD:
            if (dsm_cuda_kind_of(c->u.sig.word) != DSM_CUDA_DEV) {
                begin_run(q, cq, RUN_HOST, i);
            } else {
                flush_run(q, cq, i);
                CU_CHECK(dsm_cuda_launch_add(
                    cq->stream, (CUdeviceptr)(uintptr_t)c->u.sig.word,
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
    __atomic_store_n(&cq->posted, i, __ATOMIC_RELEASE);
    dsm_cuda_ctx_leave(prev);
    /* Stopped at the gate bound: poll() resumes it when a thread of this
     * PE next waits, the agent if none does. */
    if (cq->blocked && agent_start(q->sdma))
        agent_kick();
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

/* No SHMEM_CUDA_DEVICE: the GPU nearest to the PE's cores by PCI
 * locality, balanced among the node's PEs (common/topo.h, #15). */
static int cuda_nearest(int n)
{
    dsm_topo_pci_t pci[64];
    CUdevice d;
    n = DSM_MIN(n, (int)DSM_ARRAY_SIZE(pci));
    for (int i = 0; i < n; i++) {
        pci[i].func = 0;
        if (dsm_cu.DeviceGet(&d, i) ||
            dsm_cu.DeviceGetAttribute(&pci[i].domain,
                                      CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, d) ||
            dsm_cu.DeviceGetAttribute(&pci[i].bus,
                                      CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, d) ||
            dsm_cu.DeviceGetAttribute(&pci[i].dev,
                                      CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, d))
            return dsm_cuda_st.set.local_rank % n;
    }
    return dsm_topo_pick_pci(pci, n);
}

static dsm_status_t cuda_open(dsm_sdma_t *s)
{
    int n = 0;
    CUresult rc;

    dsm_cu.DeviceGetCount(&n);
    dsm_cuda_st.ordinal = dsm_cuda_st.set.device >= 0
                              ? (int)dsm_cuda_st.set.device
                              : cuda_nearest(n);
    if (dsm_cuda_st.ordinal >= n) {
        dsm_log_error("SHMEM_CUDA_DEVICE=%ld: this node has %d GPU%s",
                      dsm_cuda_st.set.device, n, n == 1 ? "" : "s");
        return DSM_ERR_INVAL;
    }
    rc = dsm_cu.DeviceGet(&dsm_cuda_st.dev, dsm_cuda_st.ordinal);
    if (rc == CUDA_SUCCESS)
        rc = dsm_cu.DevicePrimaryCtxRetain(&dsm_cuda_st.ctx, dsm_cuda_st.dev);
    if (rc != CUDA_SUCCESS) {
        dsm_log_error("cuda backend: cannot use GPU %d: %s",
                      dsm_cuda_st.ordinal, dsm_cu_err(rc));
        return DSM_ERR_NO_DEVICE;
    }
    /* Leave it current on the initialising thread: the application's
     * runtime-API calls then use the same GPU. */
    {
        CUcontext cur = NULL;
        dsm_cu.CtxGetCurrent(&cur);
        if (!cur)
            dsm_cu.CtxSetCurrent(dsm_cuda_st.ctx);
    }
    dsm_cuda_st.s = s;
    s->priv = &dsm_cuda_st;
    __atomic_store_n(&dsm_cuda_st.active, 1, __ATOMIC_RELEASE);
    dsm_debug("cuda: GPU %d of %d, driver %d, batch copies %s (from %zu "
              "copies, prefer copy engines %s)",
              dsm_cuda_st.ordinal, n, dsm_cu.version,
              dsm_cu.MemcpyBatchAsync ? "yes" : "no", dsm_cuda_st.batch_min,
              dsm_cuda_st.copy_flags ? "yes" : "no");
    return DSM_OK;
}

static void cuda_close(dsm_sdma_t *s)
{
    dsm_cuda_devfifo_close(s->cfg.stats); /* its queue is freed after us */
    agent_stop();
    pthread_mutex_lock(&kern.lock);
    if (kern.mod) {
        CUcontext prev = dsm_cuda_ctx_enter();
        dsm_cu.ModuleUnload(kern.mod);
        dsm_cuda_ctx_leave(prev);
        kern.mod = NULL;
        kern.fn_add = NULL;
    }
    pthread_mutex_unlock(&kern.lock);
    /* The primary context stays retained while the device heap is mapped;
     * it goes with the process. */
    dsm_cuda_st.s = NULL;
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
    prev = dsm_cuda_ctx_enter();
    rc = dsm_cu.StreamCreate(&cq->stream, CU_STREAM_NON_BLOCKING);
    if (rc == CUDA_SUCCESS)
        rc = dsm_cu.MemHostAlloc(
            &h, 64, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE);
    if (rc == CUDA_SUCCESS)
        rc = dsm_cu.MemHostGetDevicePointer(&cq->done_dev, h, 0);
    dsm_cuda_ctx_leave(prev);
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
    CUcontext prev = dsm_cuda_ctx_enter();

    /* A chain queue may hold gated chains that never fired: then the
     * stream still owns the completion word and the staging buffer, and
     * both stay (the process is ending). */
    int idle = __atomic_load_n(cq->done, __ATOMIC_ACQUIRE) == cq->posted;
    dsm_cu.StreamDestroy(cq->stream);
    dsm_cuda_side_destroy(&cq->side);
    if (idle) {
        if (cq->stage)
            dsm_cu.MemFree(cq->stage);
        dsm_cu.MemFreeHost((void *)cq->done);
    }
    dsm_cuda_ctx_leave(prev);
    free(cq->dsts);
    free(cq->srcs);
    free(cq->sizes);
    free(cq);
    q->priv = NULL;
}

/* Coalescing (SHMEM_CUDA_COALESCE, default on): while the stream still
 * runs earlier work, a doorbell that brings only plain copies (no signal,
 * no wait, nobody waiting on them by name) is held back; poll() or the
 * progress agent posts everything held as one batch once the stream has
 * drained. A stream of put_nbi requests then costs one cuMemcpyBatchAsync
 * per stream round trip instead of one per doorbell. Blocking operations
 * and anything a chain waits for are posted at once. */
static int may_defer(dsm_sdma_queue_t *q, cu_queue_t *cq, uint64_t upto)
{
    /* Only behind short work: the stream must drain soon. */
    if (!dsm_cuda_st.set.coalesce || cq->blocked ||
        upto - cq->posted > DSM_CUDA_DEFER_MAX ||
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
    /* Held back only where the agent can post it if nobody polls. */
    if (may_defer(q, cq, upto) && agent_start(q->sdma)) {
        cq->defer_gen++;
        __atomic_store_n(&cq->deferred, 1, __ATOMIC_RELEASE);
        agent_kick();
        return;
    }
    __atomic_store_n(&cq->deferred, 0, __ATOMIC_RELAXED);
    advance(q, upto);
}

/* Post what cuda_submit held back. Caller holds q->lock. */
void dsm_cuda_undefer_locked(dsm_sdma_queue_t *q)
{
    cu_queue_t *cq = q->priv;
    if (cq->deferred) {
        cq->deferred = 0;
        advance(q, __atomic_load_n(&q->submitted, __ATOMIC_ACQUIRE));
    }
}

uint64_t dsm_cuda_done(dsm_sdma_queue_t *q)
{
    cu_queue_t *cq = q->priv;
    return __atomic_load_n(cq->done, __ATOMIC_ACQUIRE);
}

CUdeviceptr dsm_cuda_done_dev(dsm_sdma_queue_t *q)
{
    cu_queue_t *cq = q->priv;
    return cq->done_dev;
}

/* The rest of a queue stopped at the gate bound, once a gate has passed.
 * Returns 1 if it posted. */
static int resume_blocked(dsm_sdma_queue_t *q, cu_queue_t *cq)
{
    int moved = 0;
    if (DSM_UNLIKELY(__atomic_load_n(&cq->blocked, __ATOMIC_RELAXED)) &&
        pthread_mutex_trylock(&q->lock) == 0) {
        if (cq->blocked && gates_pending(cq) < DSM_CUDA_MAX_GATED) {
            advance(q, __atomic_load_n(&q->submitted, __ATOMIC_ACQUIRE));
            moved = 1;
        }
        pthread_mutex_unlock(&q->lock);
    }
    return moved;
}

static uint64_t cuda_poll(dsm_sdma_queue_t *q, int help)
{
    cu_queue_t *cq = q->priv;
    uint64_t done = __atomic_load_n(cq->done, __ATOMIC_ACQUIRE);
    (void)help;

    resume_blocked(q, cq);
    if (__atomic_load_n(&cq->deferred, __ATOMIC_ACQUIRE) &&
        done >= __atomic_load_n(&cq->posted, __ATOMIC_RELAXED) &&
        pthread_mutex_trylock(&q->lock) == 0) {
        dsm_cuda_undefer_locked(q);
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
     * 2026-11-30 ~10:30 UTC). Without one, the issuing thread submits its
     * own requests (CALLER_SUBMIT) and the agent posts what is held. */
    return DSM_SDMA_CAP_HOST_MEM | DSM_SDMA_CAP_DEVICE_MEM |
           DSM_SDMA_CAP_NO_PROXY | DSM_SDMA_CAP_CALLER_SUBMIT;
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
    .gpu = &dsm_cuda_gpu_ops,
    .gpu_configure = dsm_cuda_configure,
};

/* ------------------------------------------------------------ progress agent
 */

/* A request issued is started without any later call from the PE that
 * issued it. The issuing thread submits its requests itself, but two
 * kinds of work are held back on purpose and would otherwise wait for the
 * PE's next quiet or wait: plain copies held while the stream runs
 * (coalescing), and a queue's commands past DSM_CUDA_MAX_GATED unpassed
 * WAITs. The agent is a thread, started the first time something is held
 * back, that sleeps on its own wake word while nothing is held. When
 * something is: held copies are posted once the stream has drained and
 * no new copy was held for DSM_CUDA_AGENT_SETTLE_NS (a burst of put_nbi
 * followed by quiet is still one batch posted by the quiet, as measured
 * for coalescing); a blocked queue is resumed once a gate has passed. It
 * yields between looks, then sleeps in growing bounded steps, so a queue
 * blocked behind a trigger that fires late costs little. Not a proxy: it
 * never takes the request ring or the progress lock, only q->lock by
 * trylock, as poll() does. */
#define DSM_CUDA_AGENT_SETTLE_NS 5000
#define DSM_CUDA_AGENT_YIELDS 2000
#define DSM_CUDA_AGENT_SLEEP_MIN_NS 20000ull
#define DSM_CUDA_AGENT_SLEEP_MAX_NS 1000000ull
#define DSM_CUDA_AGENT_IDLE_NS 100000000ull

static struct {
    pthread_mutex_t lock; /* start and stop */
    pthread_t thread;
    int running;
    int failed;
    volatile int stop;
    dsm_wake_t wake;
} agent = {.lock = PTHREAD_MUTEX_INITIALIZER};

static int held(const cu_queue_t *cq)
{
    return __atomic_load_n(&cq->deferred, __ATOMIC_ACQUIRE) ||
           __atomic_load_n(&cq->blocked, __ATOMIC_ACQUIRE);
}

static int agent_has_work(void *arg)
{
    dsm_sdma_t *s = arg;
    int nq = __atomic_load_n(&s->num_queues, __ATOMIC_ACQUIRE);
    if (agent.stop)
        return 1;
    for (int i = 0; i < nq; i++)
        if (held(s->queues[i]->priv))
            return 1;
    return 0;
}

static int agent_stopping(void *arg)
{
    (void)arg;
    return agent.stop;
}

/* Held copies of q: posted once the stream has drained and they have
 * settled. Returns 1 if it posted. */
static int agent_undefer(dsm_sdma_queue_t *q, cu_queue_t *cq)
{
    uint64_t now;
    unsigned gen;

    if (!__atomic_load_n(&cq->deferred, __ATOMIC_ACQUIRE))
        return 0;
    if (__atomic_load_n(cq->done, __ATOMIC_ACQUIRE) <
        __atomic_load_n(&cq->posted, __ATOMIC_RELAXED)) {
        cq->agent_since = 0; /* the stream still runs */
        return 0;
    }
    now = dsm_now_ns();
    gen = __atomic_load_n(&cq->defer_gen, __ATOMIC_RELAXED);
    if (!cq->agent_since || gen != cq->agent_gen) {
        cq->agent_gen = gen;
        cq->agent_since = now;
        return 0;
    }
    if (now - cq->agent_since < DSM_CUDA_AGENT_SETTLE_NS ||
        pthread_mutex_trylock(&q->lock) != 0)
        return 0;
    int moved = cq->deferred;
    dsm_cuda_undefer_locked(q);
    pthread_mutex_unlock(&q->lock);
    cq->agent_since = 0;
    return moved;
}

static void *agent_main(void *arg)
{
    dsm_sdma_t *s = arg;
    unsigned idle = 0;
    uint64_t sleep_ns = 0;

    while (!agent.stop) {
        int nq = __atomic_load_n(&s->num_queues, __ATOMIC_ACQUIRE);
        int any = 0, moved = 0;
        for (int i = 0; i < nq; i++) {
            dsm_sdma_queue_t *q = s->queues[i];
            cu_queue_t *cq = q->priv;
            if (!held(cq))
                continue;
            any = 1;
            moved |= resume_blocked(q, cq);
            moved |= agent_undefer(q, cq);
        }
        if (moved || !any) {
            idle = 0;
            sleep_ns = 0;
            if (!moved)
                dsm_wake_sleep(&agent.wake, agent_has_work, s,
                               DSM_CUDA_AGENT_IDLE_NS);
            continue;
        }
        if (++idle < DSM_CUDA_AGENT_YIELDS) {
            sched_yield();
            continue;
        }
        sleep_ns = sleep_ns ? DSM_MIN(sleep_ns * 2, DSM_CUDA_AGENT_SLEEP_MAX_NS)
                            : DSM_CUDA_AGENT_SLEEP_MIN_NS;
        /* A newly held doorbell (agent_kick) ends the sleep early. */
        dsm_wake_sleep(&agent.wake, agent_stopping, NULL, sleep_ns);
    }
    return NULL;
}

/* 1 when the agent runs (started now if need be); 0 if it cannot be
 * started: then nothing may be held back. */
static int agent_start(dsm_sdma_t *s)
{
    if (DSM_LIKELY(__atomic_load_n(&agent.running, __ATOMIC_ACQUIRE)))
        return 1;
    pthread_mutex_lock(&agent.lock);
    if (!agent.running && !agent.failed) {
        agent.stop = 0;
        if (pthread_create(&agent.thread, NULL, agent_main, s) == 0) {
#ifdef __linux__
            pthread_setname_np(agent.thread, "dsm-cuda-agent");
#endif
            __atomic_store_n(&agent.running, 1, __ATOMIC_RELEASE);
        } else {
            agent.failed = 1;
            dsm_log_warn("cuda backend: could not start the progress agent; "
                         "copies are posted at once, never held back");
        }
    }
    int ok = agent.running;
    pthread_mutex_unlock(&agent.lock);
    return ok;
}

static void agent_kick(void)
{
    dsm_wake_notify(&agent.wake);
}

static void agent_stop(void)
{
    pthread_mutex_lock(&agent.lock);
    if (agent.running) {
        agent.stop = 1;
        __atomic_fetch_add(&agent.wake.seq, 1, __ATOMIC_RELEASE);
        dsm_futex_wake(&agent.wake.seq, 0x7fffffff);
        pthread_join(agent.thread, NULL);
        __atomic_store_n(&agent.running, 0, __ATOMIC_RELEASE);
        agent.stop = 0;
    }
    agent.failed = 0;
    pthread_mutex_unlock(&agent.lock);
}

/* ------------------------------------------------------------ devmem.h */

void dsm_cuda_configure(const dsm_cuda_settings_t *set)
{
    dsm_cuda_st.set = *set;
    if (dsm_cuda_st.set.local_rank < 0)
        dsm_cuda_st.set.local_rank = 0;
    dsm_cuda_st.batch_min = set->batch_min < 1 ? 1 : (size_t)set->batch_min;
    dsm_cuda_st.copy_flags =
        set->prefer_ce ? CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE : 0;
    dsm_cu_count_launches(set->count_launches);
}

int dsm_cuda_active(void)
{
    return __atomic_load_n(&dsm_cuda_st.active, __ATOMIC_ACQUIRE);
}

int dsm_cuda_device(void)
{
    return dsm_cuda_st.ordinal;
}

uint64_t dsm_cuda_uid(void)
{
    int dom = 0, bus = 0, dev = 0;
    if (!dsm_cuda_st.active ||
        dsm_cu.DeviceGetAttribute(&dom, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID,
                                  dsm_cuda_st.dev) ||
        dsm_cu.DeviceGetAttribute(&bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID,
                                  dsm_cuda_st.dev) ||
        dsm_cu.DeviceGetAttribute(&dev, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID,
                                  dsm_cuda_st.dev))
        return 0;
    return (uint64_t)(unsigned)dom << 32 | (uint64_t)(unsigned)bus << 16 |
           (uint64_t)(unsigned)dev << 8;
}

dsm_status_t dsm_cuda_copy_sync(void *dst, const void *src, size_t n)
{
    CUcontext prev = dsm_cuda_ctx_enter();
    CUresult rc = dsm_cu.MemcpyAsync((CUdeviceptr)(uintptr_t)dst,
                                     (CUdeviceptr)(uintptr_t)src, n, NULL);
    if (rc == CUDA_SUCCESS)
        rc = dsm_cu.StreamSynchronize(NULL);
    dsm_cuda_ctx_leave(prev);
    return rc == CUDA_SUCCESS ? DSM_OK : DSM_ERR_IO;
}

int dsm_cuda_launch_counts(uint64_t *kernels, uint64_t *host_fns)
{
    dsm_cu_launches_t c;
    dsm_cu_launch_counts(&c);
    *kernels = c.kernel + c.kernel_ex + c.cooperative;
    *host_fns = c.host_fn;
    return c.enabled;
}
