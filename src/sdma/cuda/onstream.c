/*
 * The on-stream support (shmemx_*_on_stream, src/runtime/gpu.c): copies,
 * signals, waits and exchanges enqueued on a caller's stream, never
 * synchronised with the host, so that they can be captured into a CUDA
 * graph (cuMemcpyBatchAsync is avoided under capture: not capturable).
 */
#include "sdma/cuda/cuda_int.h"
#include "sdma/cuda/small_coll.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

/* One side stream for every caller's stream: its use is serialised. */
static pthread_mutex_t os_lock = PTHREAD_MUTEX_INITIALIZER;
static dsm_cuda_side_t os_side;
/* Copy graphs of the on-stream collectives (SHMEM_CUDA_GRAPH_COPIES),
 * made on first use, under os_lock. */
static struct dsm_cuda_gcache *os_gc;
static int os_gc_tried;

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
    CUcontext prev = dsm_cuda_ctx_enter();
    CUresult rc =
        dsm_cu.MemcpyAsync((CUdeviceptr)(uintptr_t)dst,
                           (CUdeviceptr)(uintptr_t)src, n, (CUstream)stream);
    dsm_cuda_ctx_leave(prev);
    return stream_rc("cuMemcpyAsync", rc);
}

dsm_status_t dsm_cuda_signal_on_stream(uint64_t *word, uint64_t value, int add,
                                       void *stream)
{
    intptr_t delta;
    int k = dsm_cuda_classify(word, &delta);
    CUdeviceptr w = (CUdeviceptr)((intptr_t)(uintptr_t)word + delta);
    CUcontext prev;
    CUresult rc;

    if (k == DSM_CUDA_PAGEABLE || (add && k != DSM_CUDA_DEV))
        return DSM_ERR_UNSUPPORTED;
    prev = dsm_cuda_ctx_enter();
    rc = add ? dsm_cuda_launch_add((CUstream)stream, w, value)
             : dsm_cu.StreamWriteValue64((CUstream)stream, w, value, 0);
    dsm_cuda_ctx_leave(prev);
    return stream_rc(add ? "signal-add kernel" : "cuStreamWriteValue64", rc);
}

dsm_status_t dsm_cuda_wait_on_stream(uint64_t *word, uint64_t value, int eq,
                                     void *stream)
{
    intptr_t delta;
    int k = dsm_cuda_classify(word, &delta);
    CUcontext prev;
    CUresult rc;

    if (k == DSM_CUDA_PAGEABLE)
        return DSM_ERR_UNSUPPORTED;
    prev = dsm_cuda_ctx_enter();
    rc = dsm_cu.StreamWaitValue64(
        (CUstream)stream, (CUdeviceptr)((intptr_t)(uintptr_t)word + delta),
        value, eq ? CU_STREAM_WAIT_VALUE_EQ : CU_STREAM_WAIT_VALUE_GEQ);
    dsm_cuda_ctx_leave(prev);
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
    prev = dsm_cuda_ctx_enter();
    for (int e = 0; e < s->num_engines && rc == CUDA_SUCCESS; e++) {
        dsm_sdma_queue_t *q = s->queues[e];
        /* Whoever appended under q->lock rang the doorbell before
         * releasing it: tail is on the stream (or executed). */
        pthread_mutex_lock(&q->lock);
        dsm_cuda_undefer_locked(q);
        uint64_t target = q->tail;
        pthread_mutex_unlock(&q->lock);
        if (dsm_cuda_done(q) >= target)
            continue;
        rc = dsm_cu.StreamWaitValue64((CUstream)stream, dsm_cuda_done_dev(q),
                                      target, CU_STREAM_WAIT_VALUE_GEQ);
    }
    dsm_cuda_ctx_leave(prev);
    return stream_rc("cuStreamWaitValue64", rc);
}

void dsm_cuda_onstream_fini(void)
{
    pthread_mutex_lock(&os_lock);
    dsm_cuda_gcache_free(&os_gc);
    os_gc_tried = 0;
    pthread_mutex_unlock(&os_lock);
}

static int capturing(CUstream st)
{
    CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;
    if (dsm_cu.StreamIsCapturing(st, &cs) != CUDA_SUCCESS)
        return 1; /* unknown: the form that is always legal */
    return cs != CU_STREAM_CAPTURE_STATUS_NONE;
}

dsm_status_t dsm_cuda_copies_on_stream(void *const *dst, const void *const *src,
                                       const size_t *len, size_t n,
                                       void *stream)
{
    CUstream st = (CUstream)stream;
    CUresult rc = CUDA_SUCCESS;
    size_t i, m = n;
    int joined;

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
    CUcontext prev = dsm_cuda_ctx_enter();
    pthread_mutex_lock(&os_lock);
    joined = dsm_cuda_side_fork(st, &os_side, d, s_, l, &m, 0);
    __typeof__(dsm_cu.MemcpyBatchAsync) batch =
        __atomic_load_n(&dsm_cu.MemcpyBatchAsync, __ATOMIC_RELAXED);
    int done = 0, capt = capturing(st);
    if (!os_gc_tried) {
        os_gc_tried = 1;
        os_gc = dsm_cuda_gcache_new();
    }
    /* Not under capture: the graph being captured holds the copies. Any
     * size once nothing was forked (a team of one's block of 1 MiB or
     * more: replayed 2.3 us per call queued against 5.3 as a copy, H100
     * 2026-12-05). */
    if (!joined && !capt && os_gc &&
        dsm_cuda_gcache_launch(&os_gc, d, s_, l, m, 1, st))
        done = 1;
    if (!done && m >= 2 && batch && m <= DSM_CUDA_MAX_BATCH && !capt) {
        size_t idx = 0;
        CUmemcpyAttributes attr;
        memset(&attr, 0, sizeof(attr));
        attr.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
        attr.flags = dsm_cuda_st.copy_flags;
        rc = batch(d, s_, l, m, &attr, &idx, 1, st);
        if (rc == CUDA_SUCCESS)
            done = 1;
        else
            dsm_debug("cuda: cuMemcpyBatchAsync(%zu) on a caller's stream "
                      "failed (%s); copying one by one",
                      m, dsm_cu_err(rc));
        rc = CUDA_SUCCESS;
    }
    for (i = 0; !done && i < m && rc == CUDA_SUCCESS; i++)
        if (l[i])
            rc = dsm_cu.MemcpyAsync(d[i], s_[i], l[i], st);
    if (joined && rc == CUDA_SUCCESS)
        rc = dsm_cu.StreamWaitEvent(st, os_side.join, 0);
    pthread_mutex_unlock(&os_lock);
    dsm_cuda_ctx_leave(prev);
    free(d);
    return stream_rc("cuMemcpyAsync", rc);
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
    CUcontext prev = dsm_cuda_ctx_enter();
    /* 3n operations in order: signals out, waits, resets. */
    for (size_t j = 0; j < 3 * n && rc == CUDA_SUCCESS; j++) {
        size_t i = j % n;
        int phase = (int)(j / n);
        CUdeviceptr a = dsm_cuda_gpu_word(phase == 0 ? out[i] : in[i]);
        CUstreamBatchMemOpParams *op = &ops[k++];
        if (!a) {
            dsm_cuda_ctx_leave(prev);
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
    dsm_cuda_ctx_leave(prev);
    return stream_rc("cuStreamBatchMemOp", rc);
}

/* p as the GPU addresses it (0: pageable, the kernel cannot reach it);
 * *dev cleared where it is not GPU memory. */
static uint64_t coll_view(const void *p, int *dev)
{
    intptr_t delta;
    int k = dsm_cuda_classify(p, &delta);
    if (k != DSM_CUDA_DEV)
        *dev = 0;
    if (k == DSM_CUDA_PAGEABLE)
        return 0;
    return (uint64_t)((intptr_t)(uintptr_t)p + delta);
}

_Static_assert(DSM_SMALL_COLL_PEERS == DSM_SDMA_SMALL_COLL_PEERS,
               "small_coll.h and sdma.h agree on the peers of one kernel");

dsm_status_t dsm_cuda_small_coll_on_stream(const dsm_sdma_small_coll_t *c,
                                           void *stream)
{
    dsm_small_coll_t k;
    size_t most = 0;
    CUresult rc;
    int dev = 1;

    if (c->np > DSM_SDMA_SMALL_COLL_PEERS ||
        c->nc > DSM_SDMA_SMALL_COLL_PEERS + 1)
        return DSM_ERR_UNSUPPORTED;
    memset(&k, 0, sizeof(k));
    for (size_t ph = 0; ph < 2; ph++)
        for (size_t i = 0; i < c->np; i++) {
            k.out[ph][i] = dsm_cuda_gpu_word(c->out[ph * c->np + i]);
            k.in[ph][i] = dsm_cuda_gpu_word(c->in[ph * c->np + i]);
            if (!k.out[ph][i] || !k.in[ph][i])
                return DSM_ERR_UNSUPPORTED;
        }
    for (size_t i = 0; i < c->nc; i++) {
        k.dst[i] = coll_view(c->dst[i], &dev);
        k.src[i] = coll_view(c->src[i], &dev);
        k.len[i] = c->len[i];
        if (!k.dst[i] || !k.src[i])
            return DSM_ERR_UNSUPPORTED; /* e.g. a pageable source */
        most = DSM_MAX(most, c->len[i]);
    }
    for (size_t i = 0; i < c->np; i++)
        k.pe[i] = c->pe[i];
    k.stall_ns = c->stall_ns;
    /* GPU-scope fences where every peer shares this GPU and every block
     * is GPU memory (a host block is seen by others through PCIe). */
    k.gpu_scope = c->gpu_scope && dev;
    k.me = c->me;
    k.routine = c->routine;
    k.np = (int32_t)c->np;
    k.nc = (int32_t)c->nc;
    /* One 16-byte word per thread of the largest block, 32 .. 1024 (one
     * CTA; the launch lowers it to what the GPU allows the kernel). 1024
     * rather than 512: a 64 KiB block is 4 words per thread instead of 8,
     * and each thread's loop has one load in flight (H100, 2 PEs under
     * MPS, queued per call: alltoall 64 KiB 10.05 -> 9.51 us, fcollect
     * 9.29 -> 9.11; 1 KiB unchanged). */
    rc = dsm_cuda_launch_cta(DSM_CUDA_K_SMALL, (CUstream)stream, &k,
                             most / 16);
    if (rc == CUDA_ERROR_NOT_SUPPORTED)
        return DSM_ERR_UNSUPPORTED; /* the kernel did not load: engines */
    return stream_rc("small-collective kernel", rc);
}

dsm_status_t dsm_cuda_ll_coll_on_stream(const dsm_sdma_ll_coll_t *c,
                                        void *stream)
{
    dsm_ll_coll_t k;
    CUresult rc;

    if (c->np > DSM_SDMA_SMALL_COLL_PEERS)
        return DSM_ERR_INVAL;
    memset(&k, 0, sizeof(k));
    for (size_t i = 0; i < c->np; i++) {
        k.out[i] = dsm_cuda_gpu_view(c->out[i]);
        k.in[i] = dsm_cuda_gpu_view(c->in[i]);
        k.src[i] = dsm_cuda_gpu_view(c->src[i]);
        k.dst[i] = dsm_cuda_gpu_view(c->dst[i]);
        if (!k.src[i])
            return DSM_ERR_UNSUPPORTED; /* a pageable source: staged */
        if (!k.out[i] || !k.in[i] || !k.dst[i])
            return DSM_ERR_INVAL;
        k.pe[i] = c->pe[i];
    }
    if (c->own_dst) {
        k.own_src = dsm_cuda_gpu_view(c->own_src);
        k.own_dst = dsm_cuda_gpu_view(c->own_dst);
        if (!k.own_src)
            return DSM_ERR_UNSUPPORTED;
        if (!k.own_dst)
            return DSM_ERR_INVAL;
    }
    k.parity = dsm_cuda_gpu_word(c->parity);
    if (!k.parity)
        return DSM_ERR_INVAL;
    k.nbytes = c->nbytes;
    k.stride = c->stride;
    k.stall_ns = c->stall_ns;
    k.me = c->me;
    k.routine = c->routine;
    k.np = (int32_t)c->np;
    /* One line (8 bytes of a block) per thread. */
    rc = dsm_cuda_launch_cta(DSM_CUDA_K_LL, (CUstream)stream, &k,
                             (c->nbytes + 7) / 8);
    return stream_rc("LL collective kernel", rc);
}
