/*
 * The HIP device API's runtime part (issue #13): shmemx_dev_get (as
 * shmemx_dev_get_hip, include/shmemx_hip.h) fills the handle kernels
 * receive by value over the hsa backend:
 *  - the PE's device SDMA queue, opened by the backend for kernels only
 *    (one per process, shared by every kernel and thread of the PE: its
 *    ring takes any number of producers): the ring's words, the
 *    completion dword;
 *  - every local PE's segments (host heap, static data) made reachable by
 *    the GPU and its engine (locked for the GPU until finalize: the whole
 *    heap of every PE on this node stays pinned), their GPU addresses in
 *    a table the GPU reads, 0 for PEs on other nodes;
 *  - this PE's segments as the program sees them, so a kernel uses the
 *    same symmetric addresses as the host (the header translates);
 *  - the barrier words, symmetric in the host heap.
 * Where the hsa backend does not run, or runs hsa_amd_memory_async_copy
 * (no SDMA queue to give a kernel), the call returns -1 after one line.
 */
#include "devapi/devapi.h"

#include "runtime/rt.h"

#include <stdio.h>
#include <string.h>

#include <shmemx.h>
#include <shmemx_hip.h>

static pthread_mutex_t hip_lock = PTHREAD_MUTEX_INITIALIZER;
static dsm_sdma_t *hip_sdma; /* the layer it was made for (re-init) */

static int refuse(const char *why)
{
    dsm_log_error("shmemx_dev_get: %s", why);
    return -1;
}

#if DSM_HAVE_HSA
static shmemx_dev_t hip; /* the handle, made once per init */
static const int hip_segs[SHMEMX_DEV_SEGS] = {DSM_SEG_HEAP, DSM_SEG_STATIC,
                                              DSM_SEG_DEVICE};

static int hip_setup(void)
{
    const char *rn = "shmemx_dev_get";
    const int npes = dsm_rt.npes;
    size_t wbytes = (SHMEMX_DEV_W_ARRIVE + (size_t)npes) * sizeof(uint64_t);
    size_t tbytes = (size_t)npes * SHMEMX_DEV_SEGS * sizeof(uint64_t);
    char why[512];
    dsm_sdma_devq_t q;
    uint64_t *table;
    dsm_status_t st;

    /* Local, and the same on every PE of a job (one backend, one way of
     * driving it), so a refusal here leaves nothing collective pending. */
    st = dsm_sdma_devq_open(dsm_rt.sdma, tbytes, &q, why, sizeof(why));
    if (st == DSM_ERR_UNSUPPORTED)
        return refuse(why);
    if (st != DSM_OK)
        dsm_rt_fatal(rn, "%s", why);

    memset(&hip, 0, sizeof(hip));
    hip.me = dsm_rt.me;
    hip.npes = npes;
    hip.store_max = dsm_dev_store_max();
    hip.ring = (dsm_sdma_ring_t *)(uintptr_t)q.ring;
    hip.done = (volatile uint32_t *)(uintptr_t)q.done;
    /* Collective, like shmem_malloc: the same offset on every PE. */
    hip.words = pshmem_malloc(wbytes);
    if (!hip.words)
        dsm_rt_fatal(rn,
                     "cannot allocate %zu bytes of symmetric heap for the "
                     "device API's barrier words",
                     wbytes);
    memset(hip.words, 0, wbytes);
    table = q.table_host;
    for (int pe = 0; pe < npes; pe++)
        for (int k = 0; k < SHMEMX_DEV_SEGS; k++) {
            const dsm_seg_t *s = &dsm_rt.segs[hip_segs[k]];
            const char *b = s->size && s->peer ? s->peer[pe] : NULL;
            uint64_t gpu = 0;
            if (b && dsm_sdma_devq_map(dsm_rt.sdma, b, s->size, &gpu, why,
                                       sizeof(why)) != DSM_OK)
                dsm_rt_fatal(rn, "PE %d's %s segment: %s", pe, s->name, why);
            dsm_dev_seg_aligned(rn, pe, s->name, gpu);
            table[pe * SHMEMX_DEV_SEGS + k] = gpu;
        }
    for (int k = 0; k < SHMEMX_DEV_SEGS; k++) {
        const dsm_seg_t *s = &dsm_rt.segs[hip_segs[k]];
        hip.lo[k] = s->size ? (uint64_t)(uintptr_t)s->base : 0;
        hip.size[k] = hip.lo[k] ? s->size : 0;
        dsm_dev_seg_aligned(rn, hip.me, s->name, hip.lo[k]);
    }
    hip.base = (const uint64_t *)(uintptr_t)q.table;
    /* No peer's kernel may write our barrier words before they are zero. */
    dsm_rt_sync_call(
        DSM_CALL("shmemx_dev_get_hip", DSM_CALL_DEVAPI, 0, 0, 0, 0));
    return 0;
}
#endif

int pshmemx_dev_get_hip(shmemx_dev_t *d, size_t size)
{
    char why[160];
    int rc = 0;

    DSM_CHECK_INIT("shmemx_dev_get");
    if (size != sizeof(shmemx_dev_t)) {
        snprintf(why, sizeof(why),
                 "the program's shmemx_hip.h has a handle of %zu bytes, "
                 "this library's %zu: rebuild against this library",
                 size, sizeof(shmemx_dev_t));
        return refuse(why);
    }
#if DSM_HAVE_HSA
    pthread_mutex_lock(&hip_lock);
    if (hip_sdma != dsm_rt.sdma) {
        rc = hip_setup();
        if (rc == 0)
            hip_sdma = dsm_rt.sdma;
    }
    if (rc == 0)
        *d = hip;
    pthread_mutex_unlock(&hip_lock);
#else
    (void)d;
    (void)hip_lock;
    (void)hip_sdma;
    rc = refuse("this library was built without the hsa backend (configure "
                "found no ROCm headers)");
#endif
    return rc;
}
DSM_WEAKX(dev_get_hip)
