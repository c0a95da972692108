/*
 * Blocked strided RMA (OpenSHMEM 1.6): shmem_ibput / shmem_ibget move
 * nblocks blocks of bsize contiguous elements; block i starts at element
 * i * dst of dest and i * sst of source. Each block is one contiguous
 * transfer through rma.h, so it takes the caller's memcpy or an engine
 * COPY by the same size rule as any put or get. The range is checked
 * first (segment.c): no overflow, the symmetric side's first and last
 * block in one segment.
 */
#include "rma.h"

static void check_strides(const char *routine, ptrdiff_t dst, ptrdiff_t sst,
                          size_t bsize, size_t nblocks)
{
    if (nblocks > 1 && ((dst >= 0 && (size_t)dst < bsize) ||
                        (dst < 0 && (size_t)-dst < bsize)))
        dsm_rt_fatal(routine, "dest stride %td is smaller than the block "
                     "size %zu: blocks would overlap", dst, bsize);
    (void)sst; /* overlapping source blocks are harmless */
}

static void ibput(shmem_ctx_t ctx, void *dest, const void *src, ptrdiff_t dst,
                  ptrdiff_t sst, size_t bsize, size_t nblocks, size_t size,
                  int pe, const char *routine)
{
    dsm_rma_ctx(ctx, routine);
    DSM_CHECK_PE(routine, pe);
    check_strides(routine, dst, sst, bsize, nblocks);
    if (!nblocks || !bsize)
        return;
    const ptrdiff_t dstep =
        dsm_seg_check_strided(routine, dest, dst, nblocks, bsize, size, pe, 1);
    const ptrdiff_t sstep =
        dsm_seg_check_strided(routine, src, sst, nblocks, bsize, size, pe, 0);
    for (size_t i = 0; i < nblocks; i++)
        dsm_rma_put(ctx, (char *)dest + (ptrdiff_t)i * dstep,
                    (const char *)src + (ptrdiff_t)i * sstep, bsize * size, pe,
                    routine);
}

static void ibget(shmem_ctx_t ctx, void *dest, const void *src, ptrdiff_t dst,
                  ptrdiff_t sst, size_t bsize, size_t nblocks, size_t size,
                  int pe, const char *routine)
{
    dsm_rma_ctx(ctx, routine);
    DSM_CHECK_PE(routine, pe);
    check_strides(routine, dst, sst, bsize, nblocks);
    if (!nblocks || !bsize)
        return;
    const ptrdiff_t sstep =
        dsm_seg_check_strided(routine, src, sst, nblocks, bsize, size, pe, 1);
    const ptrdiff_t dstep =
        dsm_seg_check_strided(routine, dest, dst, nblocks, bsize, size, pe, 0);
    for (size_t i = 0; i < nblocks; i++)
        dsm_rma_get(ctx, (char *)dest + (ptrdiff_t)i * dstep,
                    (const char *)src + (ptrdiff_t)i * sstep, bsize * size, pe,
                    routine);
}

#define IB_TYPED(T, N)                                                         \
    void pshmem_ctx_##N##_ibput(shmem_ctx_t ctx, T *dest, const T *source,     \
                                ptrdiff_t dst, ptrdiff_t sst, size_t bsize,    \
                                size_t nblocks, int pe)                        \
    {                                                                          \
        ibput(ctx, dest, source, dst, sst, bsize, nblocks, sizeof(T), pe,      \
              "shmem_ctx_" #N "_ibput");                                       \
    }                                                                          \
    void pshmem_##N##_ibput(T *dest, const T *source, ptrdiff_t dst,           \
                            ptrdiff_t sst, size_t bsize, size_t nblocks,       \
                            int pe)                                            \
    {                                                                          \
        ibput(DSM_CTX_DEFAULT, dest, source, dst, sst, bsize, nblocks,         \
              sizeof(T), pe, "shmem_" #N "_ibput");                            \
    }                                                                          \
    void pshmem_ctx_##N##_ibget(shmem_ctx_t ctx, T *dest, const T *source,     \
                                ptrdiff_t dst, ptrdiff_t sst, size_t bsize,    \
                                size_t nblocks, int pe)                        \
    {                                                                          \
        ibget(ctx, dest, source, dst, sst, bsize, nblocks, sizeof(T), pe,      \
              "shmem_ctx_" #N "_ibget");                                       \
    }                                                                          \
    void pshmem_##N##_ibget(T *dest, const T *source, ptrdiff_t dst,           \
                            ptrdiff_t sst, size_t bsize, size_t nblocks,       \
                            int pe)                                            \
    {                                                                          \
        ibget(DSM_CTX_DEFAULT, dest, source, dst, sst, bsize, nblocks,         \
              sizeof(T), pe, "shmem_" #N "_ibget");                            \
    }                                                                          \
    DSM_WEAK(ctx_##N##_ibput)                                                  \
    DSM_WEAK(N##_ibput)                                                        \
    DSM_WEAK(ctx_##N##_ibget)                                                  \
    DSM_WEAK(N##_ibget)
SHMEM_TYPES_RMA(IB_TYPED)

#define IB_SIZED(BITS, BYTES, T)                                               \
    void pshmem_ctx_ibput##BITS(                                               \
        shmem_ctx_t ctx, void *dest, const void *source, ptrdiff_t dst,        \
        ptrdiff_t sst, size_t bsize, size_t nblocks, int pe)                   \
    {                                                                          \
        ibput(ctx, dest, source, dst, sst, bsize, nblocks, BYTES, pe,          \
              "shmem_ctx_ibput" #BITS);                                        \
    }                                                                          \
    void pshmem_ibput##BITS(void *dest, const void *source, ptrdiff_t dst,     \
                            ptrdiff_t sst, size_t bsize, size_t nblocks,       \
                            int pe)                                            \
    {                                                                          \
        ibput(DSM_CTX_DEFAULT, dest, source, dst, sst, bsize, nblocks, BYTES,  \
              pe, "shmem_ibput" #BITS);                                        \
    }                                                                          \
    void pshmem_ctx_ibget##BITS(                                               \
        shmem_ctx_t ctx, void *dest, const void *source, ptrdiff_t dst,        \
        ptrdiff_t sst, size_t bsize, size_t nblocks, int pe)                   \
    {                                                                          \
        ibget(ctx, dest, source, dst, sst, bsize, nblocks, BYTES, pe,          \
              "shmem_ctx_ibget" #BITS);                                        \
    }                                                                          \
    void pshmem_ibget##BITS(void *dest, const void *source, ptrdiff_t dst,     \
                            ptrdiff_t sst, size_t bsize, size_t nblocks,       \
                            int pe)                                            \
    {                                                                          \
        ibget(DSM_CTX_DEFAULT, dest, source, dst, sst, bsize, nblocks, BYTES,  \
              pe, "shmem_ibget" #BITS);                                        \
    }                                                                          \
    DSM_WEAK(ctx_ibput##BITS)                                                  \
    DSM_WEAK(ibput##BITS)                                                      \
    DSM_WEAK(ctx_ibget##BITS)                                                  \
    DSM_WEAK(ibget##BITS)
SHMEM_SIZES(IB_SIZED)
