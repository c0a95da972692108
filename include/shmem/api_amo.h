/*
 * dmashmem: atomics, signals, contexts, locks, the 1.6 additions (ibput/ibget,
 * pe_quiet, sessions) and the deprecated pre-1.5 names of those families.
 * Included by shmem/api.h, so expanded once per prefix with SHMEM_FN
 * (shmem_##n, pshmem_##n). No include guard on purpose.
 */
#ifndef SHMEM_FN
#error "include <shmem.h> or <pshmem.h>, not <shmem/api_amo.h>"
#endif

/* Types of the deprecated shmem_TYPENAME_wait (OpenSHMEM 1.3 table). */
#ifndef SHMEM_TYPES_WAIT_DEPRECATED
#define SHMEM_TYPES_WAIT_DEPRECATED(X)                                         \
    X(short, short)                                                            \
    X(int, int)                                                                \
    X(long, long)                                                              \
    X(long long, longlong)
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- atomic memory operations ---- */

/* Extended AMO types: fetch, set, swap (float and double included). */
#define SHMEM_DECL_AMO_EXT(T, N)                                               \
    T SHMEM_FN(N##_atomic_fetch)(const T *source, int pe);                    \
    T SHMEM_FN(ctx_##N##_atomic_fetch)(shmem_ctx_t ctx, const T *source,      \
                                       int pe);                                \
    void SHMEM_FN(N##_atomic_set)(T * dest, T value, int pe);                 \
    void SHMEM_FN(ctx_##N##_atomic_set)(shmem_ctx_t ctx, T * dest, T value,   \
                                        int pe);                               \
    T SHMEM_FN(N##_atomic_swap)(T * dest, T value, int pe);                   \
    T SHMEM_FN(ctx_##N##_atomic_swap)(shmem_ctx_t ctx, T * dest, T value,     \
                                      int pe);                                 \
    void SHMEM_FN(N##_atomic_fetch_nbi)(T * fetch, const T *source, int pe);  \
    void SHMEM_FN(ctx_##N##_atomic_fetch_nbi)(shmem_ctx_t ctx, T * fetch,     \
                                              const T *source, int pe);        \
    void SHMEM_FN(N##_atomic_swap_nbi)(T * fetch, T * dest, T value, int pe); \
    void SHMEM_FN(ctx_##N##_atomic_swap_nbi)(shmem_ctx_t ctx, T * fetch,      \
                                             T * dest, T value, int pe);       \
    /* deprecated (1.4) */                                                     \
    T SHMEM_FN(N##_fetch)(const T *source, int pe);                           \
    void SHMEM_FN(N##_set)(T * dest, T value, int pe);                        \
    T SHMEM_FN(N##_swap)(T * dest, T value, int pe);
SHMEM_TYPES_AMO_EXT(SHMEM_DECL_AMO_EXT)
#undef SHMEM_DECL_AMO_EXT

/* Standard AMO types: compare_swap and the arithmetic ones. */
#define SHMEM_DECL_AMO_STD(T, N)                                               \
    T SHMEM_FN(N##_atomic_compare_swap)(T * dest, T cond, T value, int pe);   \
    T SHMEM_FN(ctx_##N##_atomic_compare_swap)(shmem_ctx_t ctx, T * dest,      \
                                              T cond, T value, int pe);        \
    T SHMEM_FN(N##_atomic_fetch_inc)(T * dest, int pe);                       \
    T SHMEM_FN(ctx_##N##_atomic_fetch_inc)(shmem_ctx_t ctx, T * dest,         \
                                           int pe);                            \
    void SHMEM_FN(N##_atomic_inc)(T * dest, int pe);                          \
    void SHMEM_FN(ctx_##N##_atomic_inc)(shmem_ctx_t ctx, T * dest, int pe);   \
    T SHMEM_FN(N##_atomic_fetch_add)(T * dest, T value, int pe);              \
    T SHMEM_FN(ctx_##N##_atomic_fetch_add)(shmem_ctx_t ctx, T * dest,         \
                                           T value, int pe);                   \
    void SHMEM_FN(N##_atomic_add)(T * dest, T value, int pe);                 \
    void SHMEM_FN(ctx_##N##_atomic_add)(shmem_ctx_t ctx, T * dest, T value,   \
                                        int pe);                               \
    void SHMEM_FN(N##_atomic_compare_swap_nbi)(T * fetch, T * dest, T cond,   \
                                               T value, int pe);               \
    void SHMEM_FN(ctx_##N##_atomic_compare_swap_nbi)(                         \
        shmem_ctx_t ctx, T * fetch, T * dest, T cond, T value, int pe);        \
    void SHMEM_FN(N##_atomic_fetch_inc_nbi)(T * fetch, T * dest, int pe);     \
    void SHMEM_FN(ctx_##N##_atomic_fetch_inc_nbi)(shmem_ctx_t ctx, T * fetch, \
                                                  T * dest, int pe);           \
    void SHMEM_FN(N##_atomic_fetch_add_nbi)(T * fetch, T * dest, T value,     \
                                            int pe);                           \
    void SHMEM_FN(ctx_##N##_atomic_fetch_add_nbi)(shmem_ctx_t ctx, T * fetch, \
                                                  T * dest, T value, int pe);  \
    /* deprecated (1.4) */                                                     \
    T SHMEM_FN(N##_cswap)(T * dest, T cond, T value, int pe);                 \
    T SHMEM_FN(N##_finc)(T * dest, int pe);                                   \
    void SHMEM_FN(N##_inc)(T * dest, int pe);                                 \
    T SHMEM_FN(N##_fadd)(T * dest, T value, int pe);                          \
    void SHMEM_FN(N##_add)(T * dest, T value, int pe);
SHMEM_TYPES_AMO_STD(SHMEM_DECL_AMO_STD)
#undef SHMEM_DECL_AMO_STD

/* Bitwise AMO types. */
#define SHMEM_DECL_AMO_BIT_OP(T, N, OP)                                        \
    T SHMEM_FN(N##_atomic_fetch_##OP)(T * dest, T value, int pe);             \
    T SHMEM_FN(ctx_##N##_atomic_fetch_##OP)(shmem_ctx_t ctx, T * dest,        \
                                            T value, int pe);                  \
    void SHMEM_FN(N##_atomic_##OP)(T * dest, T value, int pe);                \
    void SHMEM_FN(ctx_##N##_atomic_##OP)(shmem_ctx_t ctx, T * dest, T value,  \
                                         int pe);                              \
    void SHMEM_FN(N##_atomic_fetch_##OP##_nbi)(T * fetch, T * dest, T value,  \
                                               int pe);                        \
    void SHMEM_FN(ctx_##N##_atomic_fetch_##OP##_nbi)(                         \
        shmem_ctx_t ctx, T * fetch, T * dest, T value, int pe);
#define SHMEM_DECL_AMO_BIT(T, N)                                               \
    SHMEM_DECL_AMO_BIT_OP(T, N, and)                                           \
    SHMEM_DECL_AMO_BIT_OP(T, N, or)                                            \
    SHMEM_DECL_AMO_BIT_OP(T, N, xor)
SHMEM_TYPES_AMO_BIT(SHMEM_DECL_AMO_BIT)
#undef SHMEM_DECL_AMO_BIT
#undef SHMEM_DECL_AMO_BIT_OP

/* ---- signaling operations ---- */
#define SHMEM_DECL_SIGNAL_T(T, N)                                              \
    void SHMEM_FN(N##_put_signal)(T * dest, const T *source, size_t nelems,   \
                                  uint64_t *sig_addr, uint64_t signal,         \
                                  int sig_op, int pe);                         \
    void SHMEM_FN(ctx_##N##_put_signal)(shmem_ctx_t ctx, T * dest,            \
                                        const T *source, size_t nelems,        \
                                        uint64_t *sig_addr, uint64_t signal,   \
                                        int sig_op, int pe);                   \
    void SHMEM_FN(N##_put_signal_nbi)(T * dest, const T *source,              \
                                      size_t nelems, uint64_t *sig_addr,       \
                                      uint64_t signal, int sig_op, int pe);    \
    void SHMEM_FN(ctx_##N##_put_signal_nbi)(                                  \
        shmem_ctx_t ctx, T * dest, const T *source, size_t nelems,             \
        uint64_t *sig_addr, uint64_t signal, int sig_op, int pe);
SHMEM_TYPES_RMA(SHMEM_DECL_SIGNAL_T)
#undef SHMEM_DECL_SIGNAL_T

#define SHMEM_DECL_SIGNAL_SIZE(BITS, BYTES, T)                                 \
    void SHMEM_FN(put##BITS##_signal)(void *dest, const void *source,         \
                                      size_t nelems, uint64_t *sig_addr,       \
                                      uint64_t signal, int sig_op, int pe);    \
    void SHMEM_FN(ctx_put##BITS##_signal)(                                    \
        shmem_ctx_t ctx, void *dest, const void *source, size_t nelems,        \
        uint64_t *sig_addr, uint64_t signal, int sig_op, int pe);              \
    void SHMEM_FN(put##BITS##_signal_nbi)(void *dest, const void *source,     \
                                          size_t nelems, uint64_t *sig_addr,   \
                                          uint64_t signal, int sig_op,         \
                                          int pe);                             \
    void SHMEM_FN(ctx_put##BITS##_signal_nbi)(                                \
        shmem_ctx_t ctx, void *dest, const void *source, size_t nelems,        \
        uint64_t *sig_addr, uint64_t signal, int sig_op, int pe);
SHMEM_SIZES(SHMEM_DECL_SIGNAL_SIZE)
#undef SHMEM_DECL_SIGNAL_SIZE

void SHMEM_FN(putmem_signal)(void *dest, const void *source, size_t nelems,
                             uint64_t *sig_addr, uint64_t signal, int sig_op,
                             int pe);
void SHMEM_FN(ctx_putmem_signal)(shmem_ctx_t ctx, void *dest,
                                 const void *source, size_t nelems,
                                 uint64_t *sig_addr, uint64_t signal,
                                 int sig_op, int pe);
void SHMEM_FN(putmem_signal_nbi)(void *dest, const void *source,
                                 size_t nelems, uint64_t *sig_addr,
                                 uint64_t signal, int sig_op, int pe);
void SHMEM_FN(ctx_putmem_signal_nbi)(shmem_ctx_t ctx, void *dest,
                                     const void *source, size_t nelems,
                                     uint64_t *sig_addr, uint64_t signal,
                                     int sig_op, int pe);
uint64_t SHMEM_FN(signal_fetch)(const uint64_t *sig_addr);
uint64_t SHMEM_FN(signal_wait_until)(uint64_t *sig_addr, int cmp,
                                     uint64_t cmp_value);
/* The declaration macros below stay defined: shmem/apix.h declares the
 * same routines under their SOS names (shmemx_sos(3)) with them, with
 * SHMEM_FN then naming shmemx_ or pshmemx_. */
#define SHMEM_DECL_SIGNAL_ADD_SET()                                            \
    void SHMEM_FN(signal_add)(uint64_t * sig_addr, uint64_t signal, int pe);  \
    void SHMEM_FN(ctx_signal_add)(shmem_ctx_t ctx, uint64_t * sig_addr,       \
                                  uint64_t signal, int pe);                    \
    void SHMEM_FN(signal_set)(uint64_t * sig_addr, uint64_t signal, int pe);  \
    void SHMEM_FN(ctx_signal_set)(shmem_ctx_t ctx, uint64_t * sig_addr,       \
                                  uint64_t signal, int pe);
SHMEM_DECL_SIGNAL_ADD_SET()

/* ---- blocked strided RMA (1.6) ---- */
#define SHMEM_DECL_IB_T(T, N)                                                  \
    void SHMEM_FN(N##_ibput)(T * dest, const T *source, ptrdiff_t dst,        \
                             ptrdiff_t sst, size_t bsize, size_t nblocks,      \
                             int pe);                                          \
    void SHMEM_FN(ctx_##N##_ibput)(shmem_ctx_t ctx, T * dest,                 \
                                   const T *source, ptrdiff_t dst,             \
                                   ptrdiff_t sst, size_t bsize,                \
                                   size_t nblocks, int pe);                    \
    void SHMEM_FN(N##_ibget)(T * dest, const T *source, ptrdiff_t dst,        \
                             ptrdiff_t sst, size_t bsize, size_t nblocks,      \
                             int pe);                                          \
    void SHMEM_FN(ctx_##N##_ibget)(shmem_ctx_t ctx, T * dest,                 \
                                   const T *source, ptrdiff_t dst,             \
                                   ptrdiff_t sst, size_t bsize,                \
                                   size_t nblocks, int pe);
SHMEM_TYPES_RMA(SHMEM_DECL_IB_T)

#define SHMEM_DECL_IB_SIZE(BITS, BYTES, T)                                     \
    void SHMEM_FN(ibput##BITS)(void *dest, const void *source, ptrdiff_t dst, \
                               ptrdiff_t sst, size_t bsize, size_t nblocks,    \
                               int pe);                                        \
    void SHMEM_FN(ctx_ibput##BITS)(shmem_ctx_t ctx, void *dest,               \
                                   const void *source, ptrdiff_t dst,          \
                                   ptrdiff_t sst, size_t bsize,                \
                                   size_t nblocks, int pe);                    \
    void SHMEM_FN(ibget##BITS)(void *dest, const void *source, ptrdiff_t dst, \
                               ptrdiff_t sst, size_t bsize, size_t nblocks,    \
                               int pe);                                        \
    void SHMEM_FN(ctx_ibget##BITS)(shmem_ctx_t ctx, void *dest,               \
                                   const void *source, ptrdiff_t dst,          \
                                   ptrdiff_t sst, size_t bsize,                \
                                   size_t nblocks, int pe);
SHMEM_SIZES(SHMEM_DECL_IB_SIZE)

/* ---- contexts ---- */
int SHMEM_FN(ctx_create)(long options, shmem_ctx_t *ctx);
void SHMEM_FN(ctx_destroy)(shmem_ctx_t ctx);
int SHMEM_FN(ctx_get_team)(shmem_ctx_t ctx, shmem_team_t *team);

/* ---- sessions (1.6) ---- */
void SHMEM_FN(ctx_session_start)(shmem_ctx_t ctx, long options,
                                 const shmem_ctx_session_config_t *config,
                                 long config_mask);
void SHMEM_FN(ctx_session_stop)(shmem_ctx_t ctx);

/* ---- memory ordering (1.6) ---- */
void SHMEM_FN(pe_quiet)(const int *target_pes, size_t npes);
void SHMEM_FN(ctx_pe_quiet)(shmem_ctx_t ctx, const int *target_pes,
                            size_t npes);

/* ---- distributed locking ---- */
void SHMEM_FN(set_lock)(long *lock);
void SHMEM_FN(clear_lock)(long *lock);
int SHMEM_FN(test_lock)(long *lock);

/* ---- profiling control ---- */
void SHMEM_FN(pcontrol)(const int level, ...);

/* ---- deprecated point-to-point synchronization (1.4) ---- */
void SHMEM_FN(wait)(long *ivar, long cmp_value);
void SHMEM_FN(wait_until)(long *ivar, int cmp, long cmp_value);
#define SHMEM_DECL_WAIT_DEPRECATED(T, N)                                       \
    void SHMEM_FN(N##_wait)(T * ivar, T cmp_value);
SHMEM_TYPES_WAIT_DEPRECATED(SHMEM_DECL_WAIT_DEPRECATED)
#undef SHMEM_DECL_WAIT_DEPRECATED

/* ---- deprecated cache management (1.3; no-ops: memory is coherent) ---- */
void SHMEM_FN(clear_cache_inv)(void);
void SHMEM_FN(set_cache_inv)(void);
void SHMEM_FN(clear_cache_line_inv)(void *dest);
void SHMEM_FN(set_cache_line_inv)(void *dest);
void SHMEM_FN(udcflush)(void);
void SHMEM_FN(udcflush_line)(void *dest);

#ifdef __cplusplus
}
#endif
