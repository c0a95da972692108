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
 * inline). The context check is always inlined into the routine (it folds
 * away for the routines without a context, which pass DSM_CTX_DEFAULT);
 * the rest is one body per operation. */
#define DSM_RMA_ENTRY(NAME, BODY, DIR, NBI, LOCAL, LOCAL_NAME)                 \
    static inline void BODY(dsm_ctx_t *c, void *dest, const void *src,        \
                            size_t len, int pe, const char *routine)          \
    {                                                                          \
        DSM_CHECK_PE(routine, pe);                                             \
        if (DSM_UNLIKELY(!len))                                                \
            return;                                                            \
        if (DSM_UNLIKELY(!(LOCAL)))                                            \
            dsm_rt_null_buffer(routine, LOCAL_NAME, len, pe);                  \
        dsm_path_##DIR(c, dest, src, len, pe, NBI, routine);                   \
    }                                                                          \
    static inline __attribute__((always_inline)) void NAME(                    \
        shmem_ctx_t ctx, void *dest, const void *src, size_t len, int pe,      \
        const char *routine)                                                   \
    {                                                                          \
        BODY(dsm_rma_ctx(ctx, routine), dest, src, len, pe, routine);          \
    }
/* The local buffer (put: source, get: dest) NULL with a length: its line,
 * not a fault in a memcpy or an engine thread. */
DSM_RMA_ENTRY(dsm_rma_put, dsm_rma_put_c, put, 0, src, "source")
DSM_RMA_ENTRY(dsm_rma_get, dsm_rma_get_c, get, 0, dest, "dest")
DSM_RMA_ENTRY(dsm_rma_put_nbi, dsm_rma_put_nbi_c, put, 1, src, "source")
DSM_RMA_ENTRY(dsm_rma_get_nbi, dsm_rma_get_nbi_c, get, 1, dest, "dest")
#undef DSM_RMA_ENTRY

/* Strided: nelems elements of size bytes, strides in elements. */
void dsm_rma_iput(shmem_ctx_t ctx, void *dest, const void *src, ptrdiff_t dst,
                  ptrdiff_t sst, size_t nelems, size_t size, int pe,
                  const char *routine);
void dsm_rma_iget(shmem_ctx_t ctx, void *dest, const void *src, ptrdiff_t dst,
                  ptrdiff_t sst, size_t nelems, size_t size, int pe,
                  const char *routine);

#endif /* DSM_RMA_H */
