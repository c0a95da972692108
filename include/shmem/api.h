/*
 * dmashmem: routine declarations, included by shmem.h (SHMEM_FN(n) =
 * shmem_##n) and by pshmem.h (SHMEM_FN(n) = pshmem_##n). No include guard on
 * purpose: it is expanded once per prefix.
 */
#ifndef SHMEM_FN
#error "include <shmem.h> or <pshmem.h>, not <shmem/api.h>"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- library setup, exit and query ---- */
void SHMEM_FN(init)(void);
int SHMEM_FN(init_thread)(int requested, int *provided);
void SHMEM_FN(query_thread)(int *provided);
int SHMEM_FN(query_initialized)(int *initialized);
void SHMEM_FN(finalize)(void);
int SHMEM_FN(my_pe)(void);
int SHMEM_FN(n_pes)(void);
void SHMEM_FN(global_exit)(int status);
int SHMEM_FN(pe_accessible)(int pe);
int SHMEM_FN(addr_accessible)(const void *addr, int pe);
void *SHMEM_FN(ptr)(const void *dest, int pe);
void SHMEM_FN(info_get_version)(int *major, int *minor);
void SHMEM_FN(info_get_name)(char *name);

/* ---- memory management ---- */
void *SHMEM_FN(malloc)(size_t size);
void *SHMEM_FN(calloc)(size_t count, size_t size);
void *SHMEM_FN(align)(size_t alignment, size_t size);
void *SHMEM_FN(realloc)(void *ptr, size_t size);
void *SHMEM_FN(malloc_with_hints)(size_t size, long hints);
void SHMEM_FN(free)(void *ptr);

/* ---- remote memory access ---- */
#define SHMEM_DECL_RMA_T(T, N)                                                 \
    void SHMEM_FN(N##_put)(T * dest, const T *source, size_t nelems, int pe); \
    void SHMEM_FN(ctx_##N##_put)(shmem_ctx_t ctx, T * dest, const T *source,  \
                                 size_t nelems, int pe);                       \
    void SHMEM_FN(N##_get)(T * dest, const T *source, size_t nelems, int pe); \
    void SHMEM_FN(ctx_##N##_get)(shmem_ctx_t ctx, T * dest, const T *source,  \
                                 size_t nelems, int pe);                       \
    void SHMEM_FN(N##_put_nbi)(T * dest, const T *source, size_t nelems,      \
                               int pe);                                        \
    void SHMEM_FN(ctx_##N##_put_nbi)(shmem_ctx_t ctx, T * dest,               \
                                     const T *source, size_t nelems, int pe);  \
    void SHMEM_FN(N##_get_nbi)(T * dest, const T *source, size_t nelems,      \
                               int pe);                                        \
    void SHMEM_FN(ctx_##N##_get_nbi)(shmem_ctx_t ctx, T * dest,               \
                                     const T *source, size_t nelems, int pe);  \
    void SHMEM_FN(N##_p)(T * dest, T value, int pe);                          \
    void SHMEM_FN(ctx_##N##_p)(shmem_ctx_t ctx, T * dest, T value, int pe);   \
    T SHMEM_FN(N##_g)(const T *source, int pe);                               \
    T SHMEM_FN(ctx_##N##_g)(shmem_ctx_t ctx, const T *source, int pe);        \
    void SHMEM_FN(N##_iput)(T * dest, const T *source, ptrdiff_t dst,         \
                            ptrdiff_t sst, size_t nelems, int pe);             \
    void SHMEM_FN(ctx_##N##_iput)(shmem_ctx_t ctx, T * dest, const T *source, \
                                  ptrdiff_t dst, ptrdiff_t sst, size_t nelems, \
                                  int pe);                                     \
    void SHMEM_FN(N##_iget)(T * dest, const T *source, ptrdiff_t dst,         \
                            ptrdiff_t sst, size_t nelems, int pe);             \
    void SHMEM_FN(ctx_##N##_iget)(shmem_ctx_t ctx, T * dest, const T *source, \
                                  ptrdiff_t dst, ptrdiff_t sst, size_t nelems, \
                                  int pe);
SHMEM_TYPES_RMA(SHMEM_DECL_RMA_T)
#undef SHMEM_DECL_RMA_T

#define SHMEM_DECL_RMA_SIZE(BITS, BYTES, T)                                    \
    void SHMEM_FN(put##BITS)(void *dest, const void *source, size_t nelems,   \
                             int pe);                                          \
    void SHMEM_FN(ctx_put##BITS)(shmem_ctx_t ctx, void *dest,                 \
                                 const void *source, size_t nelems, int pe);   \
    void SHMEM_FN(get##BITS)(void *dest, const void *source, size_t nelems,   \
                             int pe);                                          \
    void SHMEM_FN(ctx_get##BITS)(shmem_ctx_t ctx, void *dest,                 \
                                 const void *source, size_t nelems, int pe);   \
    void SHMEM_FN(put##BITS##_nbi)(void *dest, const void *source,            \
                                   size_t nelems, int pe);                     \
    void SHMEM_FN(ctx_put##BITS##_nbi)(shmem_ctx_t ctx, void *dest,           \
                                       const void *source, size_t nelems,      \
                                       int pe);                                \
    void SHMEM_FN(get##BITS##_nbi)(void *dest, const void *source,            \
                                   size_t nelems, int pe);                     \
    void SHMEM_FN(ctx_get##BITS##_nbi)(shmem_ctx_t ctx, void *dest,           \
                                       const void *source, size_t nelems,      \
                                       int pe);                                \
    void SHMEM_FN(iput##BITS)(void *dest, const void *source, ptrdiff_t dst,  \
                              ptrdiff_t sst, size_t nelems, int pe);           \
    void SHMEM_FN(ctx_iput##BITS)(shmem_ctx_t ctx, void *dest,                \
                                  const void *source, ptrdiff_t dst,           \
                                  ptrdiff_t sst, size_t nelems, int pe);       \
    void SHMEM_FN(iget##BITS)(void *dest, const void *source, ptrdiff_t dst,  \
                              ptrdiff_t sst, size_t nelems, int pe);           \
    void SHMEM_FN(ctx_iget##BITS)(shmem_ctx_t ctx, void *dest,                \
                                  const void *source, ptrdiff_t dst,           \
                                  ptrdiff_t sst, size_t nelems, int pe);
SHMEM_SIZES(SHMEM_DECL_RMA_SIZE)
#undef SHMEM_DECL_RMA_SIZE

void SHMEM_FN(putmem)(void *dest, const void *source, size_t nelems, int pe);
void SHMEM_FN(ctx_putmem)(shmem_ctx_t ctx, void *dest, const void *source,
                          size_t nelems, int pe);
void SHMEM_FN(getmem)(void *dest, const void *source, size_t nelems, int pe);
void SHMEM_FN(ctx_getmem)(shmem_ctx_t ctx, void *dest, const void *source,
                          size_t nelems, int pe);
void SHMEM_FN(putmem_nbi)(void *dest, const void *source, size_t nelems,
                          int pe);
void SHMEM_FN(ctx_putmem_nbi)(shmem_ctx_t ctx, void *dest, const void *source,
                              size_t nelems, int pe);
void SHMEM_FN(getmem_nbi)(void *dest, const void *source, size_t nelems,
                          int pe);
void SHMEM_FN(ctx_getmem_nbi)(shmem_ctx_t ctx, void *dest, const void *source,
                              size_t nelems, int pe);

/* ---- memory ordering ---- */
void SHMEM_FN(fence)(void);
void SHMEM_FN(ctx_fence)(shmem_ctx_t ctx);
void SHMEM_FN(quiet)(void);
void SHMEM_FN(ctx_quiet)(shmem_ctx_t ctx);

/* ---- collectives: synchronization ---- */
void SHMEM_FN(barrier_all)(void);
void SHMEM_FN(sync_all)(void);

/* ---- point-to-point synchronization ---- */
#define SHMEM_DECL_P2P_T(T, N)                                                 \
    void SHMEM_FN(N##_wait_until)(T * ivar, int cmp, T cmp_value);            \
    void SHMEM_FN(N##_wait_until_all)(T * ivars, size_t nelems,               \
                                      const int *status, int cmp,              \
                                      T cmp_value);                            \
    size_t SHMEM_FN(N##_wait_until_any)(T * ivars, size_t nelems,             \
                                        const int *status, int cmp,            \
                                        T cmp_value);                          \
    size_t SHMEM_FN(N##_wait_until_some)(T * ivars, size_t nelems,            \
                                         size_t *indices, const int *status,   \
                                         int cmp, T cmp_value);                \
    void SHMEM_FN(N##_wait_until_all_vector)(T * ivars, size_t nelems,        \
                                             const int *status, int cmp,       \
                                             const T *cmp_values);             \
    size_t SHMEM_FN(N##_wait_until_any_vector)(T * ivars, size_t nelems,      \
                                               const int *status, int cmp,     \
                                               const T *cmp_values);           \
    size_t SHMEM_FN(N##_wait_until_some_vector)(                              \
        T * ivars, size_t nelems, size_t *indices, const int *status, int cmp, \
        const T *cmp_values);                                                  \
    int SHMEM_FN(N##_test)(T * ivar, int cmp, T cmp_value);                   \
    int SHMEM_FN(N##_test_all)(T * ivars, size_t nelems, const int *status,   \
                               int cmp, T cmp_value);                          \
    size_t SHMEM_FN(N##_test_any)(T * ivars, size_t nelems,                   \
                                  const int *status, int cmp, T cmp_value);    \
    size_t SHMEM_FN(N##_test_some)(T * ivars, size_t nelems, size_t *indices, \
                                   const int *status, int cmp, T cmp_value);   \
    int SHMEM_FN(N##_test_all_vector)(T * ivars, size_t nelems,               \
                                      const int *status, int cmp,              \
                                      const T *cmp_values);                    \
    size_t SHMEM_FN(N##_test_any_vector)(T * ivars, size_t nelems,            \
                                         const int *status, int cmp,           \
                                         const T *cmp_values);                 \
    size_t SHMEM_FN(N##_test_some_vector)(T * ivars, size_t nelems,           \
                                          size_t *indices, const int *status,  \
                                          int cmp, const T *cmp_values);
SHMEM_TYPES_P2P(SHMEM_DECL_P2P_T)
#undef SHMEM_DECL_P2P_T

#ifdef __cplusplus
}
#endif

/* Further families, one file per area (all expanded with SHMEM_FN). */
#include <shmem/api_amo.h>  /* atomics, signals, contexts, locks, 1.6, ... */
#include <shmem/api_team.h> /* teams and collectives */
