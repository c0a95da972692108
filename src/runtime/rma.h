/*
 * The byte-level RMA entry every typed routine funnels into: checks, then
 * the target PE's path (path.h). On the shm path (inline here):
 *
 *   blocking put/get, len <= inline_max, host memory of a local PE:
 *       a memcpy by the caller (DMA cannot win when the caller waits anyway)
 *   otherwise, and for put_nbi/get_nbi above nbi_inline_max:
 *       one COPY command to the engine with affinity to the target PE,
 *       through the proxy's request ring
 */
#ifndef DSM_RMA_H
#define DSM_RMA_H

#include "path.h"

static inline dsm_ctx_t *dsm_rma_ctx(shmem_ctx_t ctx, const char *routine)
{
    return dsm_ctx_check(ctx, routine);
}


/* The entry points: check, then the target's path (path.h; the shm path
 * inline). */
static inline void dsm_rma_put(shmem_ctx_t ctx, void *dest, const void *src,
                               size_t len, int pe, const char *routine)
{
    dsm_ctx_t *c = dsm_rma_ctx(ctx, routine);
    DSM_CHECK_PE(routine, pe);
    if (DSM_UNLIKELY(!len))
        return;
    dsm_path_put(c, dest, src, len, pe, 0, routine);
}

static inline void dsm_rma_get(shmem_ctx_t ctx, void *dest, const void *src,
                               size_t len, int pe, const char *routine)
{
    dsm_ctx_t *c = dsm_rma_ctx(ctx, routine);
    DSM_CHECK_PE(routine, pe);
    if (DSM_UNLIKELY(!len))
        return;
    dsm_path_get(c, dest, src, len, pe, 0, routine);
}

static inline void dsm_rma_put_nbi(shmem_ctx_t ctx, void *dest,
                                   const void *src, size_t len, int pe,
                                   const char *routine)
{
    dsm_ctx_t *c = dsm_rma_ctx(ctx, routine);
    DSM_CHECK_PE(routine, pe);
    if (DSM_UNLIKELY(!len))
        return;
    dsm_path_put(c, dest, src, len, pe, 1, routine);
}

static inline void dsm_rma_get_nbi(shmem_ctx_t ctx, void *dest,
                                   const void *src, size_t len, int pe,
                                   const char *routine)
{
    dsm_ctx_t *c = dsm_rma_ctx(ctx, routine);
    DSM_CHECK_PE(routine, pe);
    if (DSM_UNLIKELY(!len))
        return;
    dsm_path_get(c, dest, src, len, pe, 1, routine);
}

/* Strided: nelems elements of size bytes, strides in elements. */
void dsm_rma_iput(shmem_ctx_t ctx, void *dest, const void *src, ptrdiff_t dst,
                  ptrdiff_t sst, size_t nelems, size_t size, int pe,
                  const char *routine);
void dsm_rma_iget(shmem_ctx_t ctx, void *dest, const void *src, ptrdiff_t dst,
                  ptrdiff_t sst, size_t nelems, size_t size, int pe,
                  const char *routine);

#endif /* DSM_RMA_H */
