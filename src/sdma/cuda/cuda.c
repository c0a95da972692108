/*
 * cuda backend: NVIDIA copy engines driven from the host through the
 * driver API (loaded at run time, cu.h). This file: the overview below,
 * the backend ops (queues and their streams, submit, coalescing, poll) and
 * the devmem.h entry points. cuda_post.c cuts a queue's commands into runs
 * and puts them on its stream; cuda_agent.c is the progress agent; the
 * other files are listed in cuda_int.h.
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
 * of the PE next waits, or else by the progress agent (cuda_agent.c).
 */
#include "sdma/cuda/cuda_int.h"
#include "sdma/cuda/kernels_ptx.h"
#include "common/topo.h"

#include <stdlib.h>

dsm_cuda_state_t dsm_cuda_st = {
    .set = {.device = -1, .batch_min = 2, .coalesce = 1, .merge = 1},
    .batch_min = 2,
};

/* The kernels (kernels.cu), loaded on first use. */
static struct {
    pthread_mutex_t lock;
    CUmodule mod;
    CUfunction fn_add, fn_cta[DSM_CUDA_K_CTAS];
    unsigned cta_threads[DSM_CUDA_K_CTAS]; /* the most each may use */
} kern = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Copies held back at most (SHMEM_CUDA_COALESCE, cuda_submit). */
#define DSM_CUDA_DEFER_MAX 1024
#define DSM_CUDA_DEFER_BYTES ((size_t)4 << 20)

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

/* A one-CTA kernel of the module and the most threads the JIT's register
 * count allows it on this GPU (1024 where it fits), in whole warps. */
static CUresult cta_kernel(const char *name, CUfunction *fn,
                           unsigned *threads)
{
    int most = 0;
    CUresult rc = dsm_cu.ModuleGetFunction(fn, kern.mod, name);
    if (rc == CUDA_SUCCESS)
        rc = dsm_cu.FuncGetAttribute(
            &most, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, *fn);
    *threads = most >= 32 ? (unsigned)most & ~31u : 32;
    return rc;
}

static dsm_status_t load_kernels(void)
{
    CUresult rc = CUDA_SUCCESS;
    pthread_mutex_lock(&kern.lock);
    if (!kern.fn_add) {
        rc = dsm_cu.ModuleLoadData(&kern.mod, dsm_cuda_kernels_ptx);
        if (rc == CUDA_SUCCESS)
            rc = cta_kernel("dsm_small_coll", &kern.fn_cta[DSM_CUDA_K_SMALL],
                            &kern.cta_threads[DSM_CUDA_K_SMALL]);
        if (rc == CUDA_SUCCESS)
            rc = cta_kernel("dsm_ll_coll", &kern.fn_cta[DSM_CUDA_K_LL],
                            &kern.cta_threads[DSM_CUDA_K_LL]);
        if (rc == CUDA_SUCCESS)
            rc = dsm_cu.ModuleGetFunction(&kern.fn_add, kern.mod,
                                          "dsm_signal_add");
    }
    pthread_mutex_unlock(&kern.lock);
    if (rc != CUDA_SUCCESS) {
        dsm_log_error("cuda backend: loading the library's kernels "
                      "(kernels.cu) failed: %s",
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

CUresult dsm_cuda_launch_cta(int k, CUstream st, void *params, size_t units)
{
    void *args[] = {params};
    CUresult rc = CUDA_ERROR_NOT_SUPPORTED;
    CUcontext prev = dsm_cuda_ctx_enter();
    if (load_kernels() == DSM_OK) {
        /* Whole warps, 32 at least; each thread strides, so fewer than
         * the units (the kernel's limit, 1024 at most) still cover them. */
        size_t th = DSM_MAX((units + 31) & ~(size_t)31, (size_t)32);
        th = DSM_MIN(th, (size_t)kern.cta_threads[k]);
        rc = dsm_cu.LaunchKernel(kern.fn_cta[k], 1, 1, 1, (unsigned)th, 1, 1,
                                 0, st, args, NULL);
    }
    dsm_cuda_ctx_leave(prev);
    return rc;
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
    if (s->cfg.stats)
        dsm_cuda_call_stats_print();
    dsm_cuda_devfifo_close(s->cfg.stats); /* its queue is freed after us */
    dsm_cuda_agent_stop();
    {
        CUcontext prev = dsm_cuda_ctx_enter();
        dsm_cuda_onstream_fini();
        dsm_cuda_ctx_leave(prev);
    }
    dsm_cuda_dev_words_close();
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
    if (q->chain) /* collectives' queues: symmetric pointers */
        cq->gc = dsm_cuda_gcache_new();
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
    dsm_cuda_gcache_free(&cq->gc);
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
    if (may_defer(q, cq, upto) && dsm_cuda_agent_start(q->sdma)) {
        cq->defer_gen++;
        __atomic_store_n(&cq->deferred, 1, __ATOMIC_RELEASE);
        dsm_cuda_agent_kick();
        return;
    }
    __atomic_store_n(&cq->deferred, 0, __ATOMIC_RELAXED);
    dsm_cuda_advance(q, upto);
}

/* Post what cuda_submit held back. Caller holds q->lock. */
void dsm_cuda_undefer_locked(dsm_sdma_queue_t *q)
{
    cu_queue_t *cq = q->priv;
    if (cq->deferred) {
        cq->deferred = 0;
        dsm_cuda_advance(q, __atomic_load_n(&q->submitted, __ATOMIC_ACQUIRE));
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
int dsm_cuda_resume_blocked(dsm_sdma_queue_t *q, cu_queue_t *cq)
{
    int moved = 0;
    if (DSM_UNLIKELY(__atomic_load_n(&cq->blocked, __ATOMIC_RELAXED)) &&
        pthread_mutex_trylock(&q->lock) == 0) {
        if (cq->blocked && dsm_cuda_gates_pending(cq) < DSM_CUDA_MAX_GATED) {
            dsm_cuda_advance(q,
                             __atomic_load_n(&q->submitted, __ATOMIC_ACQUIRE));
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

    dsm_cuda_resume_blocked(q, cq);
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
     * and the 1 KiB collectives were as fast or faster
     * (docs/PERFORMANCE-HISTORY.md, 2026-11-30). Without one, the issuing thread submits its
     * own requests (CALLER_SUBMIT) and the agent posts what is held. */
    return DSM_SDMA_CAP_HOST_MEM | DSM_SDMA_CAP_DEVICE_MEM |
           DSM_SDMA_CAP_NO_PROXY | DSM_SDMA_CAP_CALLER_SUBMIT |
           DSM_SDMA_CAP_GATES_HOLD;
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

int dsm_cuda_launch_counts(uint64_t *kernels, uint64_t *host_fns)
{
    dsm_cu_launches_t c;
    dsm_cu_launch_counts(&c);
    *kernels = c.kernel + c.kernel_ex + c.cooperative;
    *host_fns = c.host_fn;
    return c.enabled;
}
