/*
 * The device API's host side in the cuda backend (issue #12): the request
 * FIFO that GPU threads fill (pinned host memory, mapped for the GPU) and
 * the proxy thread that drains it into copy-engine commands.
 *
 * The kernel side is include/shmemx_cuda.h. A GPU thread reserves a ticket
 * with one atomicAdd, writes slot ticket % slots and stores its control
 * word last (lap = ticket / slots + 1). The proxy walks the slots in
 * ticket order: a slot whose lap is the expected one is fresh, so no tail
 * pointer is shared with the GPU. A slot flagged MORE (a collective's
 * requests, a put's data before its signal) says that the next ticket is
 * being written: the proxy waits for it, up to DEV_MORE_WAIT_NS, before it
 * posts, so one collective is one submission however the proxy's polls
 * fall between the kernel's slot writes (each ~1 us over PCIe).
 * Everything fresh becomes one batch on
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
 * request, then sleeps in steps growing from 2 us to 10 us during the
 * first 20 ms without requests, and to 50 us after that. Sleeping on
 * something a kernel's store wakes was measured and lost (issue #26,
 * docs/PERFORMANCE.md): a stream of a context of the proxy's own waiting
 * on the issue word and a blocking-sync event woke the proxy after 2.4 ms
 * without MPS (the contexts time-slice) and 126-307 us under MPS (the
 * interrupt path); in the program's own context it made the program's
 * cudaDeviceSynchronize wait for the proxy's stream.
 *
 * Invariants of the protocol, for any number of processes (PEs) and proxy
 * threads sharing one GPU, time-sliced or under MPS (each PE has its own
 * FIFO, word block, proxy and queue; nothing below is shared between PEs):
 *  1. A ticket is handed out once (atomicAdd on this PE's issue word) and
 *     its slot is written only after the slot's previous lap was taken:
 *     ticket + 1 - slots <= consumed (the kernel waits, never overwrites).
 *  2. A slot is fresh for ticket t iff its ctl carries lap t / slots + 1;
 *     ctl is stored last, after a system-scope fence, so a fresh slot's
 *     dst, src and len are visible to this thread once ctl is.
 *  3. The proxy takes tickets strictly in order (head), so consumed is a
 *     prefix of the tickets, and it publishes consumed only after copying
 *     the slots out.
 *  4. Every batch ends with SIGNAL(complete := head) on the one stream of
 *     this PE's proxy queue, behind the batch's copies: complete is a
 *     prefix of the tickets, monotonic, and covers their data.
 *  5. A kernel's quiet waits for complete >= issue as read at its start:
 *     every ticket issued before is taken (2, 3) and completed (4).
 *  6. Nothing the proxy waits for depends on a kernel of this PE making
 *     progress, except the publication of a reserved slot (a thread
 *     between its atomicAdd and its ctl store): a hole at head with a
 *     later ticket written is reported after SHMEM_DEV_STALL_TIMEOUT.
 *  7. Waits that can stall are bounded: the kernel's waits for room and
 *     for completion (shmemx_cuda.h) and the proxy's waits for the
 *     engines and for a hole at head end the job with one line naming the
 *     PE, the ticket and the counters after SHMEM_DEV_STALL_TIMEOUT.
 */
#include "sdma/cuda/cuda_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#define DEV_BATCH_MAX 1024 /* slots per batch */
#define DEV_MORE_WAIT_NS 20000 /* for the slot after one flagged MORE */
#define DEV_SLEEP_SHORT_NS 10000   /* sleep step cap, first 20 ms idle */
#define DEV_SHORT_STEPS_NS 20000000
#define DEV_SLEEP_MAX_NS 50000     /* after that */

static struct {
    int open;
    dsm_sdma_queue_t *q;
    dsm_sdma_devreq_t *fifo; /* host view */
    uint64_t *consumed;      /* host view */
    void *host;              /* the cuMemHostAlloc block */
    uint64_t slots;
    long spin_us;
    uint64_t *complete;
    uint64_t stall_ns;
    void (*host_op)(uint64_t what, uint64_t arg);
    int (*poll_op)(void);
    void (*fatal)(const char *routine, const char *msg);
    pthread_t th;
    volatile int stop;
    uint64_t requests, batches, sleeps, host_ops;
} dv;

/* What the proxy watches for stalls: a value and when it last moved. */
typedef struct {
    uint64_t seen, since;
} watch_t;

/* 1 when v has not moved for stall_ns (restarts the watch when it did). */
static int stalled(watch_t *w, uint64_t v, uint64_t now)
{
    if (!dv.stall_ns || v != w->seen || !w->since) {
        w->seen = v;
        w->since = now;
        return 0;
    }
    return now - w->since > dv.stall_ns;
}

static void stall_fatal(const char *fmt, ...) DSM_PRINTF(1, 2);
static void stall_fatal(const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    dv.fatal("device API proxy", msg);
}

/* The engines finished nothing of what was posted for stall_ns. */
static void check_engines(watch_t *w, uint64_t posted, uint64_t head,
                          uint64_t now)
{
    uint64_t r = __atomic_load_n(&dv.q->retired, __ATOMIC_ACQUIRE);
    if (r >= posted) {
        w->since = 0;
        return;
    }
    if (stalled(w, r, now))
        stall_fatal("the copy engines completed nothing for %llu s: engine "
                    "commands posted %llu, completed %llu (tickets taken "
                    "%llu); SHMEM_DEV_STALL_TIMEOUT sets the bound",
                    (unsigned long long)(dv.stall_ns / 1000000000ull),
                    (unsigned long long)posted, (unsigned long long)r,
                    (unsigned long long)head);
}

/* Ticket head is not written while head + 1 is: a kernel thread reserved
 * a slot and did not publish it (invariant 6). */
static void check_hole(watch_t *w, uint64_t head, uint64_t now)
{
    const uint64_t mask = dv.slots - 1, next = head + 1;
    volatile dsm_sdma_devreq_t *r = &dv.fifo[next & mask];
    uint64_t ctl = __atomic_load_n(&r->ctl, __ATOMIC_ACQUIRE);
    if (dv.slots < 2 || (uint32_t)(ctl >> 32) != (uint32_t)(next / dv.slots + 1)) {
        w->since = 0;
        return;
    }
    if (stalled(w, head, now))
        stall_fatal("ticket %llu was reserved by a kernel thread and not "
                    "written for %llu s while ticket %llu was (tickets taken "
                    "%llu, FIFO of %llu slots); SHMEM_DEV_STALL_TIMEOUT sets "
                    "the bound",
                    (unsigned long long)head,
                    (unsigned long long)(dv.stall_ns / 1000000000ull),
                    (unsigned long long)next, (unsigned long long)head,
                    (unsigned long long)dv.slots);
}

static void *proxy_main(void *arg)
{
    dsm_sdma_t *s = arg;
    dsm_cmd_t *cmds = calloc(DEV_BATCH_MAX + 1, sizeof(*cmds));
    const uint64_t mask = dv.slots - 1;
    uint64_t head = 0, last = dsm_now_ns(), posted = 0;
    long sleep_ns = 0;
    watch_t weng = {0, 0}, whole = {0, 0};

    if (!cmds) {
        dsm_log_error("cuda backend: device API proxy: out of memory");
        _exit(1);
    }
    /* Sleep steps of a few us are what they say, not 50 us more (the
     * default timer slack). */
    (void)prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    while (!dv.stop) {
        size_t n = 0;
        int host = 0;
        uint64_t what = 0, harg = 0, now, more_since = 0;
        int more = 0;
        while (n < DEV_BATCH_MAX) {
            volatile dsm_sdma_devreq_t *r = &dv.fifo[head & mask];
            uint64_t ctl = __atomic_load_n(&r->ctl, __ATOMIC_ACQUIRE);
            if ((uint32_t)(ctl >> 32) != (uint32_t)(head / dv.slots + 1)) {
                /* Promised by the slot before: wait for it, briefly (a
                 * kernel that stops half-way costs this much, not a
                 * hang: what was taken is posted). */
                if (!more)
                    break;
                now = dsm_now_ns();
                if (!more_since)
                    more_since = now;
                else if (now - more_since > DEV_MORE_WAIT_NS)
                    break;
                dsm_cpu_relax();
                continue;
            }
            more = (ctl & DSM_SDMA_DEVREQ_MORE) != 0;
            more_since = 0;
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
                check_engines(&weng, posted, head, dsm_now_ns());
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
         * instances; one in flight keeps this thread awake. */
        if (dv.poll_op && dv.poll_op()) {
            last = dsm_now_ns();
            sleep_ns = 0;
        }
        /* Retire what the engines finished, so the queue has room. */
        if (__atomic_load_n(&dv.q->retired, __ATOMIC_ACQUIRE) < posted)
            dsm_sdma_progress(s, 0);
        now = dsm_now_ns();
        check_engines(&weng, posted, head, now);
        check_hole(&whole, head, now);
        if (now - last < (uint64_t)dv.spin_us * 1000) {
            dsm_cpu_relax();
            continue;
        }
        /* Idle: sleep in steps growing from 2 us, to 10 us in the first
         * 20 ms without requests (a request then waits ~5 us on average
         * for the proxy) and to 50 us after that (an idle PE costs a
         * wake-up every 50 us: ~2 % of a core). */
        sleep_ns = sleep_ns ? DSM_MIN(sleep_ns * 2,
                                      now - last < DEV_SHORT_STEPS_NS
                                          ? DEV_SLEEP_SHORT_NS
                                          : DEV_SLEEP_MAX_NS)
                            : 2000;
        struct timespec ts = {0, sleep_ns};
        nanosleep(&ts, NULL);
        dv.sleeps++;
    }
    free(cmds);
    return NULL;
}

/* CUDA lazy loading (the default since CUDA 12.2, CUDA_MODULE_LOADING):
 * a kernel's first launch may synchronise the context, i.e. wait for the
 * kernels running, and the proxy's copies wait with it. A kernel waiting
 * for its device API requests then never ends: the job stops, and the
 * kernel's stall line ends it (dev_race overlap, 2 and 4 PEs on an H200,
 * 2026-12-04: every run). One note per job (PE 0) where it is on. */
int dsm_cuda_lazy_loading(void)
{
    CUmoduleLoadingMode m = CU_MODULE_EAGER_LOADING;
    return dsm_cu.ModuleGetLoadingMode &&
           dsm_cu.ModuleGetLoadingMode(&m) == CUDA_SUCCESS &&
           m == CU_MODULE_LAZY_LOADING;
}

static void lazy_note(void)
{
    if (dsm_log_pe != 0 || !dsm_cuda_lazy_loading())
        return;
    fprintf(stderr,
            "dmashmem: note: CUDA lazy loading is on: a kernel launched for "
            "the first time while a kernel waits in the device API can stop "
            "the job (the launch waits for that kernel, whose requests wait "
            "for the launch); set CUDA_MODULE_LOADING=EAGER (shmem_launcher "
            "does unless it is set) or load your kernels before "
            "(cudaFuncGetAttributes); shmemx_dev(3)\n");
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

    if (!s || !c->slots || (c->slots & (c->slots - 1)) || !c->fatal)
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
    dv.stall_ns = c->stall_ns;
    dv.host_op = c->host_op;
    dv.poll_op = c->poll_op;
    dv.fatal = c->fatal;
    dv.stop = 0;
    if (pthread_create(&dv.th, NULL, proxy_main, s)) {
        dsm_log_error("shmemx_dev_get: cannot start the proxy thread: %s",
                      strerror(errno));
        return DSM_ERR_NOMEM;
    }
    dv.open = 1;
    lazy_note();
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
 * trigger (test/gpu/probes/gate_probe.c; under MPS, another PE's on one GPU). */
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
