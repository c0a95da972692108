/*
 * The device API's host side (src/devapi): what its files share. The
 * room sits above coll and runtime and nothing below calls into it
 * (test/layers): it hands kernels their handles (cuda.c: shmemx_dev_get
 * over the cuda backend's request FIFO and proxy thread, which stay in
 * src/sdma/cuda/devapi.c; hip.c: shmemx_dev_get_hip over the hsa
 * backend's device SDMA queue) and serves persistent requests that
 * kernels start (kreq.c), registering that part with coll.
 */
#ifndef DSM_DEVAPI_H
#define DSM_DEVAPI_H

#include <stdint.h>

#include "common/common.h"
#include "runtime/env.h"
#include "runtime/rt.h"

/* Measured on H200 (docs/PERFORMANCE.md, "Device API", the sweep of
 * 2026-12-02): up to this a thread's own stores beat a round trip through
 * the proxy and engines. Device heap -> host heap over PCIe, put + quiet:
 * stores 3.8 us at 128 B, 11.6 at 512, engines 10.2-10.7 at every size
 * up to 32 KiB; crossover ~450 B, kept below it. The HIP API takes the
 * same (not measured on AMD). */
#define DSM_DEV_STORE_MAX_DEFAULT 256

/* The handle's store threshold: SHMEM_DEV_STORE_MAX, or the default. */
static inline uint32_t dsm_dev_store_max(void)
{
    return dsm_env.dev_store_max == UINT64_MAX
               ? DSM_DEV_STORE_MAX_DEFAULT
               : (uint32_t)DSM_MIN(dsm_env.dev_store_max,
                                   (uint64_t)UINT32_MAX);
}

/* A segment's base in the GPU's view (PE pe's, in routine rn's table):
 * shmemx_dev__put_stores judges a word copy's alignment on the symmetric
 * address, which holds only where every base is 8-byte aligned. */
static inline void dsm_dev_seg_aligned(const char *rn, int pe,
                                       const char *seg, uint64_t gpu)
{
    if (gpu & 7)
        dsm_rt_fatal(rn,
                     "PE %d's %s segment is at %#llx in the GPU's view: "
                     "not 8-byte aligned",
                     pe, seg, (unsigned long long)gpu);
}

/* The proxy thread's work for a FIFO HOST slot (a persistent request's
 * start or wait from a kernel): the request's own start or wait. */
void dsm_dev_host_op(uint64_t what, uint64_t arg);
/* The proxy thread, on every pass: post the next instances of requests
 * kernels trigger by a store; nonzero while one is in use. */
int dsm_dev_req_poll(void);

#endif /* DSM_DEVAPI_H */
