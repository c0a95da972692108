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

void dsm_rma_wait_flag(uint64_t *flag);
void dsm_rt_bad_ctx(const char *routine) DSM_NORETURN;

static inline dsm_ctx_t *dsm_rma_ctx(shmem_ctx_t ctx, const char *routine)
{
    if (DSM_UNLIKELY(ctx == SHMEM_CTX_INVALID))
        dsm_rt_bad_ctx(routine);
    return (dsm_ctx_t *)ctx;
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
    char *r = dsm_rt_xlate(routine, dest, len, pe);
    if (DSM_LIKELY(len <= dsm_rt.inline_max)) {
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
    const char *r = dsm_rt_xlate(routine, src, len, pe);
    if (DSM_LIKELY(len <= dsm_rt.inline_max)) {
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
    char *r = dsm_rt_xlate(routine, dest, len, pe);
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
    const char *r = dsm_rt_xlate(routine, src, len, pe);
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
