/*
 * Remote memory access routines: every typed, sized and mem form, with and
 * without a context, expanded from the type tables onto rma.h.
 */
#include "rma.h"
#include "stall.h"

#include <stdio.h>

static int flag_set(void *p)
{
    dsm_sdma_progress(dsm_rt.sdma, 1);
    return __atomic_load_n((uint64_t *)p, __ATOMIC_ACQUIRE) != 0;
}

static void flag_describe(const void *p, char *buf, size_t n)
{
    (void)p;
    snprintf(buf, n, "a transfer on the DMA engines not complete (sdma "
             "backend %s)", dsm_sdma_backend_name(dsm_rt.sdma));
}

void dsm_rma_wait_flag(uint64_t *flag)
{
    dsm_backoff_t b = {0};
    dsm_stall_t st = {0, 0, 0};
    while (!flag_set(flag)) {
        dsm_backoff(&b, &dsm_rt.ctrl->wake_app, flag_set, flag);
        dsm_stall_tick(&st, NULL, flag_describe, flag);
    }
    dsm_stall_done(&st);
}

void dsm_rma_iput(shmem_ctx_t ctx, void *dest, const void *src, ptrdiff_t dst,
                  ptrdiff_t sst, size_t nelems, size_t size, int pe,
                  const char *routine)
{
    dsm_rma_ctx(ctx, routine);
    DSM_CHECK_PE(routine, pe);
    /* Both ends in one segment, no overflow: the elements between and
     * every i * stride * size below are then valid too. */
    dsm_seg_check_strided(routine, dest, dst, nelems, 1, size, pe, 1);
    dsm_seg_check_strided(routine, src, sst, nelems, 1, size, pe, 0);
    if (!nelems)
        return;
    /* Not mapped (the network), or GPU memory on either side (the CPU may
     * not touch it): element by element through the path, completed before
     * return. */
    if (!(dsm_path_of(pe)->caps & DSM_PATH_CAP_LOADSTORE) ||
        dsm_rma_on_device(dest, src)) {
        for (size_t i = 0; i < nelems; i++)
            dsm_path_put((dsm_ctx_t *)ctx,
                         (char *)dest + (ptrdiff_t)i * dst * (ptrdiff_t)size,
                         (const char *)src + (ptrdiff_t)i * sst * (ptrdiff_t)size,
                         size, pe, 1, routine);
        dsm_path_flush((dsm_ctx_t *)ctx, pe);
        return;
    }
    char *r = dsm_rt_xlate(routine, dest, size, pe);
    const char *s = src;
    for (size_t i = 0; i < nelems; i++)
        memcpy(r + (ptrdiff_t)i * dst * (ptrdiff_t)size,
               s + (ptrdiff_t)i * sst * (ptrdiff_t)size, size);
}

void dsm_rma_iget(shmem_ctx_t ctx, void *dest, const void *src, ptrdiff_t dst,
                  ptrdiff_t sst, size_t nelems, size_t size, int pe,
                  const char *routine)
{
    dsm_rma_ctx(ctx, routine);
    DSM_CHECK_PE(routine, pe);
    dsm_seg_check_strided(routine, src, sst, nelems, 1, size, pe, 1);
    dsm_seg_check_strided(routine, dest, dst, nelems, 1, size, pe, 0);
    if (!nelems)
        return;
    if (!(dsm_path_of(pe)->caps & DSM_PATH_CAP_LOADSTORE) ||
        dsm_rma_on_device(src, dest)) {
        for (size_t i = 0; i < nelems; i++)
            dsm_path_get((dsm_ctx_t *)ctx,
                         (char *)dest + (ptrdiff_t)i * dst * (ptrdiff_t)size,
                         (const char *)src + (ptrdiff_t)i * sst * (ptrdiff_t)size,
                         size, pe, 1, routine);
        dsm_path_flush((dsm_ctx_t *)ctx, pe);
        return;
    }
    const char *r = dsm_rt_xlate(routine, src, size, pe);
    char *d = dest;
    for (size_t i = 0; i < nelems; i++)
        memcpy(d + (ptrdiff_t)i * dst * (ptrdiff_t)size,
               r + (ptrdiff_t)i * sst * (ptrdiff_t)size, size);
}


/* ---- typed ---- */

#define RMA_TYPED(T, N)                                                        \
    void pshmem_ctx_##N##_put(shmem_ctx_t ctx, T *dest, const T *source,       \
                              size_t nelems, int pe)                           \
    {                                                                          \
        dsm_rma_put(ctx, dest, source,                                         \
                    DSM_NBYTES(nelems, sizeof(T), "shmem_ctx_" #N "_put"), pe, \
                    "shmem_ctx_" #N "_put");                                   \
    }                                                                          \
    void pshmem_##N##_put(T *dest, const T *source, size_t nelems, int pe)     \
    {                                                                          \
        dsm_rma_put(DSM_CTX_DEFAULT, dest, source,                             \
                    DSM_NBYTES(nelems, sizeof(T), "shmem_" #N "_put"), pe,     \
                    "shmem_" #N "_put");                                       \
    }                                                                          \
    void pshmem_ctx_##N##_get(shmem_ctx_t ctx, T *dest, const T *source,       \
                              size_t nelems, int pe)                           \
    {                                                                          \
        dsm_rma_get(ctx, dest, source,                                         \
                    DSM_NBYTES(nelems, sizeof(T), "shmem_ctx_" #N "_get"), pe, \
                    "shmem_ctx_" #N "_get");                                   \
    }                                                                          \
    void pshmem_##N##_get(T *dest, const T *source, size_t nelems, int pe)     \
    {                                                                          \
        dsm_rma_get(DSM_CTX_DEFAULT, dest, source,                             \
                    DSM_NBYTES(nelems, sizeof(T), "shmem_" #N "_get"), pe,     \
                    "shmem_" #N "_get");                                       \
    }                                                                          \
    void pshmem_ctx_##N##_put_nbi(shmem_ctx_t ctx, T *dest, const T *source,   \
                                  size_t nelems, int pe)                       \
    {                                                                          \
        dsm_rma_put_nbi(                                                       \
            ctx, dest, source,                                                 \
            DSM_NBYTES(nelems, sizeof(T), "shmem_ctx_" #N "_put_nbi"), pe,     \
            "shmem_ctx_" #N "_put_nbi");                                       \
    }                                                                          \
    void pshmem_##N##_put_nbi(T *dest, const T *source, size_t nelems, int pe) \
    {                                                                          \
        dsm_rma_put_nbi(DSM_CTX_DEFAULT, dest, source,                         \
                        DSM_NBYTES(nelems, sizeof(T), "shmem_" #N "_put_nbi"), \
                        pe, "shmem_" #N "_put_nbi");                           \
    }                                                                          \
    void pshmem_ctx_##N##_get_nbi(shmem_ctx_t ctx, T *dest, const T *source,   \
                                  size_t nelems, int pe)                       \
    {                                                                          \
        dsm_rma_get_nbi(                                                       \
            ctx, dest, source,                                                 \
            DSM_NBYTES(nelems, sizeof(T), "shmem_ctx_" #N "_get_nbi"), pe,     \
            "shmem_ctx_" #N "_get_nbi");                                       \
    }                                                                          \
    void pshmem_##N##_get_nbi(T *dest, const T *source, size_t nelems, int pe) \
    {                                                                          \
        dsm_rma_get_nbi(DSM_CTX_DEFAULT, dest, source,                         \
                        DSM_NBYTES(nelems, sizeof(T), "shmem_" #N "_get_nbi"), \
                        pe, "shmem_" #N "_get_nbi");                           \
    }                                                                          \
    void pshmem_ctx_##N##_p(shmem_ctx_t ctx, T *dest, T value, int pe)         \
    {                                                                          \
        dsm_rma_put(ctx, dest, &value, sizeof(T), pe, "shmem_ctx_" #N "_p");   \
    }                                                                          \
    void pshmem_##N##_p(T *dest, T value, int pe)                              \
    {                                                                          \
        dsm_rma_put(DSM_CTX_DEFAULT, dest, &value, sizeof(T), pe,              \
                    "shmem_" #N "_p");                                         \
    }                                                                          \
    T pshmem_ctx_##N##_g(shmem_ctx_t ctx, const T *source, int pe)             \
    {                                                                          \
        T v;                                                                   \
        dsm_rma_get(ctx, &v, source, sizeof(T), pe, "shmem_ctx_" #N "_g");     \
        return v;                                                              \
    }                                                                          \
    T pshmem_##N##_g(const T *source, int pe)                                  \
    {                                                                          \
        T v;                                                                   \
        dsm_rma_get(DSM_CTX_DEFAULT, &v, source, sizeof(T), pe,                \
                    "shmem_" #N "_g");                                         \
        return v;                                                              \
    }                                                                          \
    void pshmem_ctx_##N##_iput(shmem_ctx_t ctx, T *dest, const T *source,      \
                               ptrdiff_t dst, ptrdiff_t sst, size_t nelems,    \
                               int pe)                                         \
    {                                                                          \
        dsm_rma_iput(ctx, dest, source, dst, sst, nelems, sizeof(T), pe,       \
                     "shmem_ctx_" #N "_iput");                                 \
    }                                                                          \
    void pshmem_##N##_iput(T *dest, const T *source, ptrdiff_t dst,            \
                           ptrdiff_t sst, size_t nelems, int pe)               \
    {                                                                          \
        dsm_rma_iput(DSM_CTX_DEFAULT, dest, source, dst, sst, nelems,          \
                     sizeof(T), pe, "shmem_" #N "_iput");                      \
    }                                                                          \
    void pshmem_ctx_##N##_iget(shmem_ctx_t ctx, T *dest, const T *source,      \
                               ptrdiff_t dst, ptrdiff_t sst, size_t nelems,    \
                               int pe)                                         \
    {                                                                          \
        dsm_rma_iget(ctx, dest, source, dst, sst, nelems, sizeof(T), pe,       \
                     "shmem_ctx_" #N "_iget");                                 \
    }                                                                          \
    void pshmem_##N##_iget(T *dest, const T *source, ptrdiff_t dst,            \
                           ptrdiff_t sst, size_t nelems, int pe)               \
    {                                                                          \
        dsm_rma_iget(DSM_CTX_DEFAULT, dest, source, dst, sst, nelems,          \
                     sizeof(T), pe, "shmem_" #N "_iget");                      \
    }                                                                          \
    DSM_WEAK(ctx_##N##_put)                                                    \
    DSM_WEAK(N##_put)                                                          \
    DSM_WEAK(ctx_##N##_get)                                                    \
    DSM_WEAK(N##_get)                                                          \
    DSM_WEAK(ctx_##N##_put_nbi)                                                \
    DSM_WEAK(N##_put_nbi)                                                      \
    DSM_WEAK(ctx_##N##_get_nbi)                                                \
    DSM_WEAK(N##_get_nbi)                                                      \
    DSM_WEAK(ctx_##N##_p)                                                      \
    DSM_WEAK(N##_p)                                                            \
    DSM_WEAK(ctx_##N##_g)                                                      \
    DSM_WEAK(N##_g)                                                            \
    DSM_WEAK(ctx_##N##_iput)                                                   \
    DSM_WEAK(N##_iput)                                                         \
    DSM_WEAK(ctx_##N##_iget)                                                   \
    DSM_WEAK(N##_iget)
SHMEM_TYPES_RMA(RMA_TYPED)

/* ---- sized ---- */

#define RMA_SIZED(BITS, BYTES, T)                                              \
    void pshmem_ctx_put##BITS(shmem_ctx_t ctx, void *dest, const void *source, \
                              size_t nelems, int pe)                           \
    {                                                                          \
        dsm_rma_put(ctx, dest, source,                                         \
                    DSM_NBYTES(nelems, BYTES, "shmem_ctx_put" #BITS), pe,      \
                    "shmem_ctx_put" #BITS);                                    \
    }                                                                          \
    void pshmem_put##BITS(void *dest, const void *source, size_t nelems,       \
                          int pe)                                              \
    {                                                                          \
        dsm_rma_put(DSM_CTX_DEFAULT, dest, source,                             \
                    DSM_NBYTES(nelems, BYTES, "shmem_put" #BITS), pe,          \
                    "shmem_put" #BITS);                                        \
    }                                                                          \
    void pshmem_ctx_get##BITS(shmem_ctx_t ctx, void *dest, const void *source, \
                              size_t nelems, int pe)                           \
    {                                                                          \
        dsm_rma_get(ctx, dest, source,                                         \
                    DSM_NBYTES(nelems, BYTES, "shmem_ctx_get" #BITS), pe,      \
                    "shmem_ctx_get" #BITS);                                    \
    }                                                                          \
    void pshmem_get##BITS(void *dest, const void *source, size_t nelems,       \
                          int pe)                                              \
    {                                                                          \
        dsm_rma_get(DSM_CTX_DEFAULT, dest, source,                             \
                    DSM_NBYTES(nelems, BYTES, "shmem_get" #BITS), pe,          \
                    "shmem_get" #BITS);                                        \
    }                                                                          \
    void pshmem_ctx_put##BITS##_nbi(shmem_ctx_t ctx, void *dest,               \
                                    const void *source, size_t nelems, int pe) \
    {                                                                          \
        dsm_rma_put_nbi(                                                       \
            ctx, dest, source,                                                 \
            DSM_NBYTES(nelems, BYTES, "shmem_ctx_put" #BITS "_nbi"), pe,       \
            "shmem_ctx_put" #BITS "_nbi");                                     \
    }                                                                          \
    void pshmem_put##BITS##_nbi(void *dest, const void *source, size_t nelems, \
                                int pe)                                        \
    {                                                                          \
        dsm_rma_put_nbi(DSM_CTX_DEFAULT, dest, source,                         \
                        DSM_NBYTES(nelems, BYTES, "shmem_put" #BITS "_nbi"),   \
                        pe, "shmem_put" #BITS "_nbi");                         \
    }                                                                          \
    void pshmem_ctx_get##BITS##_nbi(shmem_ctx_t ctx, void *dest,               \
                                    const void *source, size_t nelems, int pe) \
    {                                                                          \
        dsm_rma_get_nbi(                                                       \
            ctx, dest, source,                                                 \
            DSM_NBYTES(nelems, BYTES, "shmem_ctx_get" #BITS "_nbi"), pe,       \
            "shmem_ctx_get" #BITS "_nbi");                                     \
    }                                                                          \
    void pshmem_get##BITS##_nbi(void *dest, const void *source, size_t nelems, \
                                int pe)                                        \
    {                                                                          \
        dsm_rma_get_nbi(DSM_CTX_DEFAULT, dest, source,                         \
                        DSM_NBYTES(nelems, BYTES, "shmem_get" #BITS "_nbi"),   \
                        pe, "shmem_get" #BITS "_nbi");                         \
    }                                                                          \
    void pshmem_ctx_iput##BITS(shmem_ctx_t ctx, void *dest,                    \
                               const void *source, ptrdiff_t dst,              \
                               ptrdiff_t sst, size_t nelems, int pe)           \
    {                                                                          \
        dsm_rma_iput(ctx, dest, source, dst, sst, nelems, BYTES, pe,           \
                     "shmem_ctx_iput" #BITS);                                  \
    }                                                                          \
    void pshmem_iput##BITS(void *dest, const void *source, ptrdiff_t dst,      \
                           ptrdiff_t sst, size_t nelems, int pe)               \
    {                                                                          \
        dsm_rma_iput(DSM_CTX_DEFAULT, dest, source, dst, sst, nelems, BYTES,   \
                     pe, "shmem_iput" #BITS);                                  \
    }                                                                          \
    void pshmem_ctx_iget##BITS(shmem_ctx_t ctx, void *dest,                    \
                               const void *source, ptrdiff_t dst,              \
                               ptrdiff_t sst, size_t nelems, int pe)           \
    {                                                                          \
        dsm_rma_iget(ctx, dest, source, dst, sst, nelems, BYTES, pe,           \
                     "shmem_ctx_iget" #BITS);                                  \
    }                                                                          \
    void pshmem_iget##BITS(void *dest, const void *source, ptrdiff_t dst,      \
                           ptrdiff_t sst, size_t nelems, int pe)               \
    {                                                                          \
        dsm_rma_iget(DSM_CTX_DEFAULT, dest, source, dst, sst, nelems, BYTES,   \
                     pe, "shmem_iget" #BITS);                                  \
    }                                                                          \
    DSM_WEAK(ctx_put##BITS)                                                    \
    DSM_WEAK(put##BITS)                                                        \
    DSM_WEAK(ctx_get##BITS)                                                    \
    DSM_WEAK(get##BITS)                                                        \
    DSM_WEAK(ctx_put##BITS##_nbi)                                              \
    DSM_WEAK(put##BITS##_nbi)                                                  \
    DSM_WEAK(ctx_get##BITS##_nbi)                                              \
    DSM_WEAK(get##BITS##_nbi)                                                  \
    DSM_WEAK(ctx_iput##BITS)                                                   \
    DSM_WEAK(iput##BITS)                                                       \
    DSM_WEAK(ctx_iget##BITS)                                                   \
    DSM_WEAK(iget##BITS)
SHMEM_SIZES(RMA_SIZED)

/* ---- mem ---- */

void pshmem_ctx_putmem(shmem_ctx_t ctx, void *dest, const void *source,
                       size_t nelems, int pe)
{
    dsm_rma_put(ctx, dest, source, nelems, pe, "shmem_ctx_putmem");
}
void pshmem_putmem(void *dest, const void *source, size_t nelems, int pe)
{
    dsm_rma_put(DSM_CTX_DEFAULT, dest, source, nelems, pe, "shmem_putmem");
}
void pshmem_ctx_getmem(shmem_ctx_t ctx, void *dest, const void *source,
                       size_t nelems, int pe)
{
    dsm_rma_get(ctx, dest, source, nelems, pe, "shmem_ctx_getmem");
}
void pshmem_getmem(void *dest, const void *source, size_t nelems, int pe)
{
    dsm_rma_get(DSM_CTX_DEFAULT, dest, source, nelems, pe, "shmem_getmem");
}
void pshmem_ctx_putmem_nbi(shmem_ctx_t ctx, void *dest, const void *source,
                           size_t nelems, int pe)
{
    dsm_rma_put_nbi(ctx, dest, source, nelems, pe, "shmem_ctx_putmem_nbi");
}
void pshmem_putmem_nbi(void *dest, const void *source, size_t nelems, int pe)
{
    dsm_rma_put_nbi(DSM_CTX_DEFAULT, dest, source, nelems, pe,
                    "shmem_putmem_nbi");
}
void pshmem_ctx_getmem_nbi(shmem_ctx_t ctx, void *dest, const void *source,
                           size_t nelems, int pe)
{
    dsm_rma_get_nbi(ctx, dest, source, nelems, pe, "shmem_ctx_getmem_nbi");
}
void pshmem_getmem_nbi(void *dest, const void *source, size_t nelems, int pe)
{
    dsm_rma_get_nbi(DSM_CTX_DEFAULT, dest, source, nelems, pe,
                    "shmem_getmem_nbi");
}
DSM_WEAK(ctx_putmem)
DSM_WEAK(putmem)
DSM_WEAK(ctx_getmem)
DSM_WEAK(getmem)
DSM_WEAK(ctx_putmem_nbi)
DSM_WEAK(putmem_nbi)
DSM_WEAK(ctx_getmem_nbi)
DSM_WEAK(getmem_nbi)

/* ---- ordering ---- */

void dsm_rt_quiet(dsm_ctx_t *ctx)
{
    dsm_path_quiet(ctx);
    /* Direct stores by this thread (inline puts) are ordered before what
     * follows the quiet. */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

void pshmem_ctx_quiet(shmem_ctx_t ctx)
{
    DSM_CHECK_INIT("shmem_ctx_quiet");
    if (ctx == SHMEM_CTX_INVALID)
        return;
    dsm_rt_quiet(dsm_ctx_check(ctx, "shmem_ctx_quiet"));
}
void pshmem_quiet(void)
{
    DSM_CHECK_INIT("shmem_quiet");
    dsm_rt_quiet(&dsm_ctx_default);
}

/* Each path orders its own operations (shm: one engine queue per target,
 * completed when direct stores could overtake it; net: the provider's
 * write order, or a completion wait where it has none). */
static void fence(dsm_ctx_t *c)
{
    dsm_path_fence(c);
    __atomic_thread_fence(__ATOMIC_RELEASE);
}

void pshmem_ctx_fence(shmem_ctx_t ctx)
{
    DSM_CHECK_INIT("shmem_ctx_fence");
    if (ctx == SHMEM_CTX_INVALID)
        return;
    fence(dsm_ctx_check(ctx, "shmem_ctx_fence"));
}
void pshmem_fence(void)
{
    DSM_CHECK_INIT("shmem_fence");
    fence(&dsm_ctx_default);
}
DSM_WEAK(ctx_quiet)
DSM_WEAK(quiet)
DSM_WEAK(ctx_fence)
DSM_WEAK(fence)
