/*
 * The device API's handle for CUDA kernels (issue #12): shmemx_dev_get
 * fills the handle that kernels receive by value (include/shmemx_cuda.h).
 * What it holds: every PE's segment bases as this GPU addresses them (host
 * heap, static data, device heap; 0 for PEs on other nodes), this PE's
 * segment ranges, the symmetric word block in the device heap (issue and
 * complete counters, barrier words) and the request FIFO with its proxy
 * thread, which the open GPU backend provides through the sdma layer's GPU
 * table. Backend-neutral: no backend header is included here.
 */
#include "devapi/devapi.h"

#include "runtime/gpu.h"
#include "runtime/rt.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <shmemx.h>
#include <shmemx_cuda.h>

/* The public slot and the sdma layer's request are the same bytes. */
_Static_assert(sizeof(shmemx_dev_slot_t) == sizeof(dsm_sdma_devreq_t),
               "device API slot layout");
_Static_assert(offsetof(shmemx_dev_slot_t, ctl) ==
                   offsetof(dsm_sdma_devreq_t, ctl),
               "device API slot layout");
_Static_assert(SHMEMX_DEV_OP_COPY == DSM_SDMA_DEVREQ_COPY &&
                   SHMEMX_DEV_OP_SIGNAL == DSM_SDMA_DEVREQ_SIGNAL &&
                   SHMEMX_DEV_OP_HOST == DSM_SDMA_DEVREQ_HOST &&
                   SHMEMX_DEV_OP_MORE == DSM_SDMA_DEVREQ_MORE,
               "device API operation codes");

/* A stall the proxy thread found (SHMEM_DEV_STALL_TIMEOUT): one line, and
 * the job ends. */
static void dev_fatal(const char *routine, const char *msg)
{
    dsm_rt_fatal(routine, "%s", msg);
}

static pthread_mutex_t dev_lock = PTHREAD_MUTEX_INITIALIZER;
static shmemx_dev_t dev;
static dsm_sdma_t *dev_sdma; /* the layer it was made for (re-init) */

static const int dev_segs[SHMEMX_DEV_SEGS] = {DSM_SEG_HEAP, DSM_SEG_STATIC,
                                              DSM_SEG_DEVICE};

/* The rows of the table (tab: [npes][SEGS]) the handle carries (up to
 * `want` PEs, include/shmemx_cuda.h near_base): the window of that many
 * PEs around this one with the most reachable peers in it (this PE's node
 * where the job places its PEs in blocks), the lowest such window on a
 * tie (all of them where the job has no more PEs than that). */
static void near_rows(shmemx_dev_t *d, const uint64_t *tab, int want)
{
    const int n = DSM_MIN(want, d->npes);
    int best = d->me, most = -1;
    for (int lo = DSM_MAX(0, d->me - n + 1); n && lo <= d->me; lo++) {
        if (lo + n > d->npes)
            break;
        int c = 0;
        for (int i = lo * SHMEMX_DEV_SEGS; i < (lo + n) * SHMEMX_DEV_SEGS; i++)
            c += tab[i] != 0;
        if (c > most) {
            most = c;
            best = lo;
        }
    }
    d->near = best;
    d->near_n = n;
    memcpy(d->near_base, &tab[best * SHMEMX_DEV_SEGS],
           (size_t)n * SHMEMX_DEV_SEGS * sizeof(*tab));
}

static void dev_setup(const dsm_sdma_gpu_ops_t *g)
{
    const char *rn = "shmemx_dev_get";
    const int npes = dsm_rt.npes;
    long slots = dsm_env.dev_fifo_slots;
    size_t wbytes = (SHMEMX_DEV_W_ARRIVE + (size_t)npes) * sizeof(uint64_t);
    size_t tbytes = (size_t)npes * SHMEMX_DEV_SEGS * sizeof(uint64_t);
    uint64_t *table, *zero;
    dsm_sdma_devfifo_t f;
    dsm_status_t st;

    if (dsm_env.dev_stall_timeout < 0 || dsm_env.dev_stall_timeout > 86400)
        dsm_rt_fatal(rn,
                     "SHMEM_DEV_STALL_TIMEOUT=%ld: must be 0 (no bound) to "
                     "86400 seconds",
                     dsm_env.dev_stall_timeout);
    if (dsm_env.dev_proxy_spin_us < 0 || dsm_env.dev_proxy_spin_us > 10000000)
        dsm_rt_fatal(rn,
                     "SHMEM_DEV_PROXY_SPIN_US=%ld: must be 0 to 10000000",
                     dsm_env.dev_proxy_spin_us);
    if (dsm_env.dev_near_pes < 0 || dsm_env.dev_near_pes > SHMEMX_DEV_NEAR)
        dsm_rt_fatal(rn, "SHMEM_DEV_NEAR_PES=%ld: must be 0 to %d",
                     dsm_env.dev_near_pes, SHMEMX_DEV_NEAR);
    if (slots < 2 || slots > (1L << 20) || (slots & (slots - 1)))
        dsm_rt_fatal(rn,
                     "SHMEM_DEV_FIFO_SLOTS=%ld: must be a power of two "
                     "from 2 to 1048576",
                     slots);
    if (!g->devfifo_open || !g->gpu_view)
        dsm_rt_fatal(rn, "the %s backend has no device API", g->name);
    if (!dsm_rt_device_heap())
        dsm_rt_fatal(rn, "needs a device heap (SHMEM_DEVICE_HEAP_SIZE is 0)");

    memset(&dev, 0, sizeof(dev));
    dev.me = dsm_rt.me;
    dev.npes = npes;
    dev.slots = (uint32_t)slots;
    dev.store_max = dsm_dev_store_max();
    /* Collective, like shmem_malloc: the same offsets on every PE. */
    dev.words = pshmem_malloc_with_hints(wbytes, SHMEMX_MALLOC_DEVICE);
    table = pshmem_malloc_with_hints(tbytes, SHMEMX_MALLOC_DEVICE);
    zero = calloc(1, DSM_MAX(wbytes, tbytes));
    if (!dev.words || !table || !zero)
        dsm_rt_fatal(rn,
                     "cannot allocate %zu bytes of device heap for the "
                     "device API's words and table (raise "
                     "SHMEM_DEVICE_HEAP_SIZE)",
                     wbytes + tbytes);
    for (int pe = 0; pe < npes; pe++)
        for (int k = 0; k < SHMEMX_DEV_SEGS; k++) {
            const dsm_seg_t *s = &dsm_rt.segs[dev_segs[k]];
            const char *b = s->size && s->peer ? s->peer[pe] : NULL;
            zero[pe * SHMEMX_DEV_SEGS + k] = b ? g->gpu_view(b) : 0;
            if (b && !zero[pe * SHMEMX_DEV_SEGS + k])
                dsm_rt_fatal(rn, "the GPU cannot address PE %d's %s segment",
                             pe, s->name);
            dsm_dev_seg_aligned(rn, pe, s->name,
                                zero[pe * SHMEMX_DEV_SEGS + k]);
        }
    for (int k = 0; k < SHMEMX_DEV_SEGS; k++) {
        const dsm_seg_t *s = &dsm_rt.segs[dev_segs[k]];
        dev.lo[k] = s->size ? g->gpu_view(s->base) : 0;
        dev.size[k] = dev.lo[k] ? s->size : 0;
        dsm_dev_seg_aligned(rn, dev.me, s->name, dev.lo[k]);
    }
    near_rows(&dev, zero, (int)dsm_env.dev_near_pes);
    if ((st = g->copy_sync(table, zero, tbytes)) != DSM_OK)
        dsm_rt_fatal(rn, "cannot write the device API's table");
    memset(zero, 0, wbytes);
    if ((st = g->copy_sync(dev.words, zero, wbytes)) != DSM_OK)
        dsm_rt_fatal(rn, "cannot clear the device API's words");
    free(zero);
    dev.base = table;

    dev.stall_ns = (uint64_t)dsm_env.dev_stall_timeout * 1000000000ull;
    const dsm_sdma_devfifo_config_t c = {
        .slots = (uint64_t)slots,
        .spin_us = dsm_env.dev_proxy_spin_us,
        .complete = (uint64_t *)&dev.words[SHMEMX_DEV_W_COMPLETE],
        .host_op = dsm_dev_host_op, /* kreq.c */
        .poll_op = dsm_dev_req_poll,
        .stall_ns = dev.stall_ns,
        .fatal = dev_fatal,
    };
    if ((st = g->devfifo_open(&c, &f)) != DSM_OK)
        dsm_rt_fatal(rn, "cannot open the request FIFO (%s)",
                     dsm_status_str(st));
    dev.fifo = (shmemx_dev_slot_t *)(uintptr_t)f.fifo;
    dev.consumed = (const volatile uint64_t *)(uintptr_t)f.consumed;
    /* No peer's kernel may write our barrier words before they are zero. */
    dsm_rt_sync_call(
        DSM_CALL("shmemx_dev_get", DSM_CALL_DEVAPI, 0, 0, 0, 0));
}

int pshmemx_dev_get(shmemx_dev_t *d)
{
    const dsm_sdma_gpu_ops_t *g = dsm_rt_need_gpu("shmemx_dev_get");
    pthread_mutex_lock(&dev_lock);
    if (dev_sdma != dsm_rt.sdma) {
        dev_setup(g);
        dev_sdma = dsm_rt.sdma;
    }
    *d = dev;
    pthread_mutex_unlock(&dev_lock);
    return 0;
}
DSM_WEAKX(dev_get)
