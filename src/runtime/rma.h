/*
 * The byte-level RMA paths every typed routine funnels into (one static
 * inline per operation; the function-pointer hop happens only inside the
 * sdma layer's submit/poll).
 *
 *   blocking put/get, len <= inline_max, host memory of a local PE:
 *       a memcpy by the caller (DMA cannot win when the caller waits anyway)
 *   otherwise, and always for put_nbi/get_nbi:
 *       one COPY command to the engine with affinity to the target PE,
 *       through the proxy's request ring
 */
#ifndef DSM_RMA_H
#define DSM_RMA_H

#include <string.h>

#include "rt.h"
#include "net/net.h"

void dsm_rma_wait_flag(uint64_t *flag);
void dsm_rt_bad_ctx(const char *routine) DSM_NORETURN;

static inline dsm_ctx_t *dsm_rma_ctx(shmem_ctx_t ctx, const char *routine)
{
    if (DSM_UNLIKELY(ctx == SHMEM_CTX_INVALID))
        dsm_rt_bad_ctx(routine);
    return (dsm_ctx_t *)ctx;
}

/* GPU memory is never touched by the CPU: RMA with the device heap on the
 * symmetric side, or a private GPU buffer (cudaMalloc) on the local side,
 * always goes to the engines. One load and compare while no device heap
 * exists (segs[DSM_SEG_DEVICE].size == 0). */
static inline int dsm_rma_on_device(const void *sym, const void *local)
{
    const dsm_seg_t *d = &dsm_rt.segs[DSM_SEG_DEVICE];
    if (DSM_LIKELY(!d->size))
        return 0;
    if ((uintptr_t)sym - (uintptr_t)d->base < d->size)
        return 1;
    return dsm_rt_private_device(local);
}

/* Hand one command to the engine with affinity to pe. ctx != NULL: counted
 * for the context's quiet; flag != NULL: set when it retires. */
static inline void dsm_rma_issue(dsm_ctx_t *ctx, uint64_t *flag, int pe,
                                 const void *src, void *dst, size_t len)
{
    int e = dsm_rt_engine_of(pe);
    dsm_cmd_t c = {
        .op = DSM_CMD_COPY,
        .u.copy = {.src = src, .dst = dst, .dst2 = NULL, .len = len},
        .done = flag,
    };
    if (ctx) {
        /* Counted before the request enters the ring: quiet's snapshot of
         * issued[] then covers every command ahead of ours (rt.h). */
        __atomic_fetch_add(&ctx->issued[e], 1, __ATOMIC_RELAXED);
        c.done = &ctx->done[e];
    }
    dsm_sdma_request(dsm_rt.sdma, e, &c);
}

static inline void dsm_rma_put(shmem_ctx_t ctx, void *dest, const void *src,
                               size_t len, int pe, const char *routine)
{
    dsm_rma_ctx(ctx, routine);
    DSM_CHECK_PE(routine, pe);
    if (DSM_UNLIKELY(!len))
        return;
    if (dsm_net_pe(pe)) {
        dsm_net_put(routine, dest, src, len, pe, 0);
        return;
    }
    char *r = dsm_rt_xlate(routine, dest, len, pe);
    if (DSM_LIKELY(len <= dsm_rt.inline_max) &&
        !dsm_rma_on_device(dest, src)) {
        memcpy(r, src, len);
        return;
    }
    uint64_t flag = 0;
    dsm_rma_issue(NULL, &flag, pe, src, r, len);
    dsm_rma_wait_flag(&flag);
}

static inline void dsm_rma_get(shmem_ctx_t ctx, void *dest, const void *src,
                               size_t len, int pe, const char *routine)
{
    dsm_rma_ctx(ctx, routine);
    DSM_CHECK_PE(routine, pe);
    if (DSM_UNLIKELY(!len))
        return;
    if (dsm_net_pe(pe)) {
        dsm_net_get(routine, dest, src, len, pe, 0);
        return;
    }
    const char *r = dsm_rt_xlate(routine, src, len, pe);
    if (DSM_LIKELY(len <= dsm_rt.inline_max) &&
        !dsm_rma_on_device(src, dest)) {
        memcpy(dest, r, len);
        return;
    }
    uint64_t flag = 0;
    dsm_rma_issue(NULL, &flag, pe, r, dest, len);
    dsm_rma_wait_flag(&flag);
}

static inline void dsm_rma_put_nbi(shmem_ctx_t ctx, void *dest,
                                   const void *src, size_t len, int pe,
                                   const char *routine)
{
    dsm_ctx_t *c = dsm_rma_ctx(ctx, routine);
    DSM_CHECK_PE(routine, pe);
    if (DSM_UNLIKELY(!len))
        return;
    if (dsm_net_pe(pe)) {
        dsm_net_put(routine, dest, src, len, pe, 1);
        return;
    }
    char *r = dsm_rt_xlate(routine, dest, len, pe);
    /* Completing at issue is a valid nbi completion; below the measured
     * crossover the engine's hand-off costs more than the copy. */
    if (len <= dsm_rt.nbi_inline_max && !dsm_rma_on_device(dest, src)) {
        memcpy(r, src, len);
        return;
    }
    dsm_rma_issue(c, NULL, pe, src, r, len);
}

static inline void dsm_rma_get_nbi(shmem_ctx_t ctx, void *dest,
                                   const void *src, size_t len, int pe,
                                   const char *routine)
{
    dsm_ctx_t *c = dsm_rma_ctx(ctx, routine);
    DSM_CHECK_PE(routine, pe);
    if (DSM_UNLIKELY(!len))
        return;
    if (dsm_net_pe(pe)) {
        dsm_net_get(routine, dest, src, len, pe, 1);
        return;
    }
    const char *r = dsm_rt_xlate(routine, src, len, pe);
    if (len <= dsm_rt.nbi_inline_max && !dsm_rma_on_device(src, dest)) {
        memcpy(dest, r, len);
        return;
    }
    dsm_rma_issue(c, NULL, pe, r, dest, len);
}

/* Strided: nelems elements of size bytes, strides in elements. */
void dsm_rma_iput(shmem_ctx_t ctx, void *dest, const void *src, ptrdiff_t dst,
                  ptrdiff_t sst, size_t nelems, size_t size, int pe,
                  const char *routine);
void dsm_rma_iget(shmem_ctx_t ctx, void *dest, const void *src, ptrdiff_t dst,
                  ptrdiff_t sst, size_t nelems, size_t size, int pe,
                  const char *routine);

#endif /* DSM_RMA_H */
