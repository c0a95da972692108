/*
 * The device API's host side in the cuda backend (issue #12): the request
 * FIFO that GPU threads fill (pinned host memory, mapped for the GPU) and
 * the proxy thread that drains it into copy-engine commands.
 *
 * The kernel side is include/shmemx_cuda.h. A GPU thread reserves a ticket
 * with one atomicAdd, writes slot ticket % slots and stores its control
 * word last (lap = ticket / slots + 1). The proxy walks the slots in
 * ticket order: a slot whose lap is the expected one is fresh, so no tail
 * pointer is shared with the GPU. Everything fresh becomes one batch on
 * the proxy's own queue: the COPYs and SIGNALs in ticket order, then
 * SIGNAL(complete := tickets done), which the backend posts as one
 * cuMemcpyBatchAsync and one cuStreamBatchMemOp on the queue's stream.
 * The proxy then publishes `consumed` (slots it has copied out), which the
 * GPU reads only when the FIFO looks full (flow control: the kernel waits,
 * it never overwrites a slot not yet taken).
 *
 * One queue, one stream: requests complete in ticket order, so a kernel's
 * quiet is "complete >= issue" and a signal after data never overtakes it.
 * A HOST slot (a persistent collective's start or wait from a kernel)
 * ends its batch: the proxy waits for what came before, calls the
 * runtime's host_op on this thread, then counts the slot complete.
 *
 * The thread exists only once a process asked for the device API
 * (shmemx_dev_get). It polls without sleeping for spin_us after the last
 * request, then sleeps in growing steps (2 us doubling to 100 us): an idle
 * PE costs a wake-up every 100 us, and a request arriving after a long
 * idle time waits up to that long before the proxy sees it.
 */
#include "sdma/cuda/cuda_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEV_BATCH_MAX 1024 /* slots per batch */
#define DEV_SLEEP_MAX_NS 100000

static struct {
    int open;
    dsm_sdma_queue_t *q;
    dsm_sdma_devreq_t *fifo; /* host view */
    uint64_t *consumed;      /* host view */
    void *host;              /* the cuMemHostAlloc block */
    uint64_t slots;
    long spin_us;
    uint64_t *complete;
    void (*host_op)(uint64_t what, uint64_t arg);
    int (*poll_op)(void);
    pthread_t th;
    volatile int stop;
    uint64_t requests, batches, sleeps, host_ops;
} dv;

static void *proxy_main(void *arg)
{
    dsm_sdma_t *s = arg;
    dsm_cmd_t *cmds = calloc(DEV_BATCH_MAX + 1, sizeof(*cmds));
    const uint64_t mask = dv.slots - 1;
    uint64_t head = 0, last = dsm_now_ns(), posted = 0;
    long sleep_ns = 0;

    if (!cmds) {
        dsm_log_error("cuda backend: device API proxy: out of memory");
        _exit(1);
    }
    while (!dv.stop) {
        size_t n = 0;
        int host = 0;
        uint64_t what = 0, harg = 0;
        while (n < DEV_BATCH_MAX) {
            volatile dsm_sdma_devreq_t *r = &dv.fifo[head & mask];
            uint64_t ctl = __atomic_load_n(&r->ctl, __ATOMIC_ACQUIRE);
            if ((uint32_t)(ctl >> 32) != (uint32_t)(head / dv.slots + 1))
                break;
            if ((ctl & 0xff) == DSM_SDMA_DEVREQ_HOST) {
                /* Ends the batch: run after everything before it. */
                host = 1;
                what = r->dst;
                harg = r->src;
                break;
            }
            dsm_cmd_t *c = &cmds[n++];
            memset(c, 0, sizeof(*c));
            if ((ctl & 0xff) == DSM_SDMA_DEVREQ_SIGNAL) {
                c->op = DSM_CMD_SIGNAL;
                c->u.sig.word = (uint64_t *)(uintptr_t)r->dst;
                c->u.sig.value = r->src;
            } else {
                c->op = DSM_CMD_COPY;
                c->u.copy.dst = (void *)(uintptr_t)r->dst;
                c->u.copy.src = (const void *)(uintptr_t)r->src;
                c->u.copy.len = r->len;
            }
            head++;
        }
        if (n) {
            dsm_cmd_t *c = &cmds[n];
            memset(c, 0, sizeof(*c));
            c->op = DSM_CMD_SIGNAL;
            c->u.sig.word = dv.complete;
            c->u.sig.value = head;
            posted = dsm_sdma_post(dv.q, cmds, n + 1);
            /* The slots are copied out: the GPU may reuse them. */
            __atomic_store_n(dv.consumed, head, __ATOMIC_RELEASE);
            dv.requests += n;
            dv.batches++;
            last = dsm_now_ns();
            sleep_ns = 0;
            if (!host)
                continue;
        }
        if (host) {
            /* CPU work for the kernel (a persistent collective's start or
             * wait): the requests before it complete first, so a start
             * sees the data its kernel put before it, and its own slot
             * counts complete only once host_op returned (a wait: the
             * collective is done). The FIFO's later requests wait. */
            while (__atomic_load_n(&dv.q->retired, __ATOMIC_ACQUIRE) < posted) {
                dsm_sdma_progress(s, 0);
                dsm_cpu_relax();
            }
            dv.host_op(what, harg);
            head++;
            dsm_cmd_t *c = &cmds[0];
            memset(c, 0, sizeof(*c));
            c->op = DSM_CMD_SIGNAL;
            c->u.sig.word = dv.complete;
            c->u.sig.value = head;
            posted = dsm_sdma_post(dv.q, cmds, 1);
            __atomic_store_n(dv.consumed, head, __ATOMIC_RELEASE);
            dv.requests++;
            dv.host_ops++;
            last = dsm_now_ns();
            sleep_ns = 0;
            continue;
        }
        /* Kernel-triggered persistent requests: post their next
         * instances; one in use keeps this thread awake. */
        if (dv.poll_op && dv.poll_op()) {
            last = dsm_now_ns();
            sleep_ns = 0;
        }
        /* Retire what the engines finished, so the queue has room. */
        if (__atomic_load_n(&dv.q->retired, __ATOMIC_ACQUIRE) < posted)
            dsm_sdma_progress(s, 0);
        if (dsm_now_ns() - last < (uint64_t)dv.spin_us * 1000) {
            dsm_cpu_relax();
            continue;
        }
        sleep_ns = sleep_ns ? DSM_MIN(sleep_ns * 2, DEV_SLEEP_MAX_NS) : 2000;
        struct timespec ts = {0, sleep_ns};
        nanosleep(&ts, NULL);
        dv.sleeps++;
    }
    free(cmds);
    return NULL;
}

dsm_status_t dsm_cuda_devfifo_open(const dsm_sdma_devfifo_config_t *c,
                                   dsm_sdma_devfifo_t *out)
{
    dsm_sdma_t *s = dsm_cuda_st.s;
    size_t bytes = c->slots * sizeof(dsm_sdma_devreq_t) + 128;
    CUdeviceptr dfifo = 0, dcons = 0;
    CUcontext prev;
    CUresult rc;
    dsm_status_t st;

    if (!s || !c->slots || (c->slots & (c->slots - 1)))
        return DSM_ERR_INVAL;
    if (dv.open) {
        /* One FIFO per process: hand out the same one. */
        out->fifo = (uint64_t)(uintptr_t)dv.fifo;
        out->consumed = (uint64_t)(uintptr_t)dv.consumed;
        return DSM_OK;
    }
    st = dsm_sdma_queue_create(s, 0, &dv.q);
    if (st != DSM_OK)
        return st;
    prev = dsm_cuda_ctx_enter();
    rc = dsm_cu.MemHostAlloc(
        &dv.host, bytes, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE);
    if (rc == CUDA_SUCCESS) {
        memset(dv.host, 0, bytes);
        rc = dsm_cu.MemHostGetDevicePointer(&dfifo, dv.host, 0);
    }
    dsm_cuda_ctx_leave(prev);
    if (rc != CUDA_SUCCESS) {
        dsm_log_error("shmemx_dev_get: cannot allocate %zu bytes of pinned "
                      "host memory for the request FIFO: %s",
                      bytes, dsm_cu_err(rc));
        return DSM_ERR_NOMEM;
    }
    dv.fifo = dv.host;
    dv.consumed = (uint64_t *)((char *)dv.host + bytes - 128);
    dcons = dfifo + (bytes - 128);
    dv.slots = c->slots;
    dv.spin_us = c->spin_us;
    dv.complete = c->complete;
    dv.host_op = c->host_op;
    dv.poll_op = c->poll_op;
    dv.stop = 0;
    if (pthread_create(&dv.th, NULL, proxy_main, s)) {
        dsm_log_error("shmemx_dev_get: cannot start the proxy thread: %s",
                      strerror(errno));
        return DSM_ERR_NOMEM;
    }
    dv.open = 1;
    out->fifo = (uint64_t)dfifo;
    out->consumed = (uint64_t)dcons;
    dsm_debug("cuda: device API FIFO of %llu slots, proxy thread started",
              (unsigned long long)c->slots);
    return DSM_OK;
}

/* From cuda_close: the queue is freed after this by the sdma layer. */
void dsm_cuda_devfifo_close(int stats)
{
    if (!dv.open)
        return;
    dv.stop = 1;
    pthread_join(dv.th, NULL);
    if (stats)
        dsm_log_warn(
            "cuda: device API proxy: %llu requests in %llu batches "
            "(%.1f per batch), %llu run by the CPU, %llu idle sleeps",
            (unsigned long long)dv.requests, (unsigned long long)dv.batches,
            dv.batches ? (double)dv.requests / (double)dv.batches : 0.0,
            (unsigned long long)dv.host_ops, (unsigned long long)dv.sleeps);
    CUcontext prev = dsm_cuda_ctx_enter();
    dsm_cu.MemFreeHost(dv.host);
    dsm_cuda_ctx_leave(prev);
    memset(&dv, 0, sizeof(dv));
}

uint64_t dsm_cuda_gpu_view(const void *p)
{
    return (uint64_t)dsm_cuda_gpu_word((uint64_t *)(uintptr_t)p);
}

uint64_t dsm_cuda_word_view(uint64_t *w)
{
    CUdeviceptr d = dsm_cuda_gpu_word(w);
    if (!d && dsm_cuda_pin_word_page(w))
        d = dsm_cuda_gpu_word(w);
    return (uint64_t)d;
}

/* ------------------------------------------------------------ device words
 * For kernel handles of persistent requests (shmemx_req_device): chunks of
 * cuMemAlloc'ed memory in the range table, freed at close only (cuMemFree
 * may wait for the device, whose streams wait behind triggers on them),
 * and written through the non-blocking stream of dsm_cuda_copy_sync. */
#define DW_MAX 64
static struct {
    pthread_mutex_t lock;
    CUstream st;
    CUdeviceptr chunk[DW_MAX];
    int n;
} dw = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Synchronous copies of the library's own (device words, zeroing), on a
 * non-blocking stream: a copy on the legacy stream never completed while
 * a copy in the same direction waited behind a persistent request's
 * trigger (test/gpu/gate_probe.c; under MPS, another PE's on one GPU). */
dsm_status_t dsm_cuda_copy_sync(void *dst, const void *src, size_t n)
{
    CUresult rc = CUDA_SUCCESS;
    CUcontext prev = dsm_cuda_ctx_enter();
    pthread_mutex_lock(&dw.lock);
    if (!dw.st)
        rc = dsm_cu.StreamCreate(&dw.st, CU_STREAM_NON_BLOCKING);
    if (rc == CUDA_SUCCESS)
        rc = dsm_cu.MemcpyAsync((CUdeviceptr)(uintptr_t)dst,
                                (CUdeviceptr)(uintptr_t)src, n, dw.st);
    if (rc == CUDA_SUCCESS)
        rc = dsm_cu.StreamSynchronize(dw.st);
    pthread_mutex_unlock(&dw.lock);
    dsm_cuda_ctx_leave(prev);
    return rc == CUDA_SUCCESS ? DSM_OK : DSM_ERR_IO;
}

uint64_t *dsm_cuda_dev_words(size_t n)
{
    CUdeviceptr d = 0;
    uint64_t *z = calloc(n, sizeof(uint64_t));
    CUcontext prev = dsm_cuda_ctx_enter();
    pthread_mutex_lock(&dw.lock);
    CUresult rc = z && dw.n < DW_MAX
                      ? dsm_cu.MemAlloc(&d, n * sizeof(uint64_t))
                      : CUDA_ERROR_OUT_OF_MEMORY;
    if (rc == CUDA_SUCCESS)
        dw.chunk[dw.n++] = d;
    pthread_mutex_unlock(&dw.lock);
    dsm_cuda_ctx_leave(prev);
    if (rc == CUDA_SUCCESS) {
        dsm_cuda_add_range((uintptr_t)d, n * sizeof(uint64_t), DSM_CUDA_DEV,
                           0);
        if (dsm_cuda_copy_sync((void *)(uintptr_t)d, z,
                               n * sizeof(uint64_t)) != DSM_OK)
            d = 0; /* kept in dw.chunk, freed at close */
    }
    free(z);
    return (uint64_t *)(uintptr_t)d;
}

void dsm_cuda_dev_words_close(void)
{
    CUcontext prev = dsm_cuda_ctx_enter();
    pthread_mutex_lock(&dw.lock);
    for (int i = 0; i < dw.n; i++) {
        dsm_cuda_drop_range((uintptr_t)dw.chunk[i]);
        dsm_cu.MemFree(dw.chunk[i]);
    }
    dw.n = 0;
    if (dw.st)
        dsm_cu.StreamDestroy(dw.st);
    dw.st = NULL;
    pthread_mutex_unlock(&dw.lock);
    dsm_cuda_ctx_leave(prev);
}
