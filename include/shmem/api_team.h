/* Teams and collectives (expanded with SHMEM_FN, no include guard). */
#ifndef SHMEM_FN
#error "include <shmem.h> or <pshmem.h>, not <shmem/api_team.h>"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- team management ---- */
int SHMEM_FN(team_my_pe)(shmem_team_t team);
int SHMEM_FN(team_n_pes)(shmem_team_t team);
int SHMEM_FN(team_get_config)(shmem_team_t team, long config_mask,
                              shmem_team_config_t *config);
int SHMEM_FN(team_translate_pe)(shmem_team_t src_team, int src_pe,
                                shmem_team_t dest_team);
int SHMEM_FN(team_split_strided)(shmem_team_t parent_team, int start,
                                 int stride, int size,
                                 const shmem_team_config_t *config,
                                 long config_mask, shmem_team_t *new_team);
int SHMEM_FN(team_split_2d)(shmem_team_t parent_team, int xrange,
                            const shmem_team_config_t *xaxis_config,
                            long xaxis_mask, shmem_team_t *xaxis_team,
                            const shmem_team_config_t *yaxis_config,
                            long yaxis_mask, shmem_team_t *yaxis_team);
void SHMEM_FN(team_destroy)(shmem_team_t team);
void *SHMEM_FN(team_ptr)(shmem_team_t team, const void *dest, int pe);
int SHMEM_FN(team_create_ctx)(shmem_team_t team, long options,
                              shmem_ctx_t *ctx);
int SHMEM_FN(ctx_get_team)(shmem_ctx_t ctx, shmem_team_t *team);

/* ---- synchronization ---- */
int SHMEM_FN(team_sync)(shmem_team_t team);
/* Deprecated active-set forms (pSync is accepted and not used). */
void SHMEM_FN(barrier)(int PE_start, int logPE_stride, int PE_size,
                       long *pSync);
void SHMEM_FN(sync)(int PE_start, int logPE_stride, int PE_size, long *pSync);

/* ---- broadcast, collect, fcollect, alltoall, alltoalls ---- */
#define SHMEM_DECL_COLL_T(T, N)                                                \
    int SHMEM_FN(N##_broadcast)(shmem_team_t team, T * dest, const T *source, \
                                size_t nelems, int PE_root);                   \
    int SHMEM_FN(N##_collect)(shmem_team_t team, T * dest, const T *source,   \
                              size_t nelems);                                  \
    int SHMEM_FN(N##_fcollect)(shmem_team_t team, T * dest, const T *source,  \
                               size_t nelems);                                 \
    int SHMEM_FN(N##_alltoall)(shmem_team_t team, T * dest, const T *source,  \
                               size_t nelems);                                 \
    int SHMEM_FN(N##_alltoalls)(shmem_team_t team, T * dest, const T *source, \
                                ptrdiff_t dst, ptrdiff_t sst, size_t nelems);
SHMEM_TYPES_RMA(SHMEM_DECL_COLL_T)
#undef SHMEM_DECL_COLL_T

int SHMEM_FN(broadcastmem)(shmem_team_t team, void *dest, const void *source,
                           size_t nelems, int PE_root);
int SHMEM_FN(collectmem)(shmem_team_t team, void *dest, const void *source,
                         size_t nelems);
int SHMEM_FN(fcollectmem)(shmem_team_t team, void *dest, const void *source,
                          size_t nelems);
int SHMEM_FN(alltoallmem)(shmem_team_t team, void *dest, const void *source,
                          size_t nelems);
int SHMEM_FN(alltoallsmem)(shmem_team_t team, void *dest, const void *source,
                           ptrdiff_t dst, ptrdiff_t sst, size_t nelems);

/* Deprecated active-set forms: SIZE 32 and 64 (bits per element). */
#define SHMEM_DECL_COLL_ASET(BITS)                                             \
    void SHMEM_FN(broadcast##BITS)(void *dest, const void *source,            \
                                   size_t nelems, int PE_root, int PE_start,   \
                                   int logPE_stride, int PE_size,              \
                                   long *pSync);                               \
    void SHMEM_FN(collect##BITS)(void *dest, const void *source,              \
                                 size_t nelems, int PE_start,                  \
                                 int logPE_stride, int PE_size, long *pSync);  \
    void SHMEM_FN(fcollect##BITS)(void *dest, const void *source,             \
                                  size_t nelems, int PE_start,                 \
                                  int logPE_stride, int PE_size, long *pSync); \
    void SHMEM_FN(alltoall##BITS)(void *dest, const void *source,             \
                                  size_t nelems, int PE_start,                 \
                                  int logPE_stride, int PE_size, long *pSync); \
    void SHMEM_FN(alltoalls##BITS)(void *dest, const void *source,            \
                                   ptrdiff_t dst, ptrdiff_t sst,               \
                                   size_t nelems, int PE_start,                \
                                   int logPE_stride, int PE_size, long *pSync);
SHMEM_DECL_COLL_ASET(32)
SHMEM_DECL_COLL_ASET(64)
#undef SHMEM_DECL_COLL_ASET

/* ---- reductions: shmem_TYPENAME_OP_reduce (team) ---- */
#define SHMEM_DECL_REDUCE(T, N, OP)                                            \
    int SHMEM_FN(N##_##OP##_reduce)(shmem_team_t team, T * dest,              \
                                    const T *source, size_t nreduce);
#define SHMEM_DECL_REDUCE_BIT(T, N)                                            \
    SHMEM_DECL_REDUCE(T, N, and)                                               \
    SHMEM_DECL_REDUCE(T, N, or) SHMEM_DECL_REDUCE(T, N, xor)
#define SHMEM_DECL_REDUCE_MINMAX(T, N)                                         \
    SHMEM_DECL_REDUCE(T, N, max) SHMEM_DECL_REDUCE(T, N, min)
#define SHMEM_DECL_REDUCE_ARITH(T, N)                                          \
    SHMEM_DECL_REDUCE(T, N, sum) SHMEM_DECL_REDUCE(T, N, prod)                \
    int SHMEM_FN(N##_sum_inscan)(shmem_team_t team, T * dest,                 \
                                 const T *source, size_t nelems);              \
    int SHMEM_FN(N##_sum_exscan)(shmem_team_t team, T * dest,                 \
                                 const T *source, size_t nelems);
SHMEM_TYPES_REDUCE_BIT(SHMEM_DECL_REDUCE_BIT)
SHMEM_TYPES_REDUCE_MINMAX(SHMEM_DECL_REDUCE_MINMAX)
SHMEM_TYPES_REDUCE_ARITH(SHMEM_DECL_REDUCE_ARITH)
#undef SHMEM_DECL_REDUCE_BIT
#undef SHMEM_DECL_REDUCE_MINMAX
#undef SHMEM_DECL_REDUCE_ARITH
#undef SHMEM_DECL_REDUCE

/* ---- deprecated active-set reductions: shmem_TYPENAME_OP_to_all ---- */
#define SHMEM_DECL_TO_ALL(T, N, OP)                                            \
    void SHMEM_FN(N##_##OP##_to_all)(T * dest, const T *source, int nreduce,  \
                                     int PE_start, int logPE_stride,           \
                                     int PE_size, T *pWrk, long *pSync);
#define SHMEM_DECL_TO_ALL_BIT(T, N)                                            \
    SHMEM_DECL_TO_ALL(T, N, and)                                               \
    SHMEM_DECL_TO_ALL(T, N, or) SHMEM_DECL_TO_ALL(T, N, xor)
#define SHMEM_DECL_TO_ALL_MINMAX(T, N)                                         \
    SHMEM_DECL_TO_ALL(T, N, max) SHMEM_DECL_TO_ALL(T, N, min)
#define SHMEM_DECL_TO_ALL_ARITH(T, N)                                          \
    SHMEM_DECL_TO_ALL(T, N, sum) SHMEM_DECL_TO_ALL(T, N, prod)
SHMEM_TYPES_TO_ALL_BIT(SHMEM_DECL_TO_ALL_BIT)
SHMEM_TYPES_TO_ALL_MINMAX(SHMEM_DECL_TO_ALL_MINMAX)
SHMEM_TYPES_TO_ALL_ARITH(SHMEM_DECL_TO_ALL_ARITH)
#undef SHMEM_DECL_TO_ALL_BIT
#undef SHMEM_DECL_TO_ALL_MINMAX
#undef SHMEM_DECL_TO_ALL_ARITH
#undef SHMEM_DECL_TO_ALL

#ifdef __cplusplus
}
#endif

/* ---- C11 generic selections (once, for the shmem_ names) ----
 * Selected by the type of dest, over the spec's C11 types (the plain C
 * types: the fixed-width and size/ptrdiff names alias them). shmem_sync
 * takes one argument (a team: shmem_team_sync) or four (the deprecated
 * active-set form). */
#if !defined(SHMEM_TEAM_GENERICS_) && !defined(__cplusplus) &&                 \
    defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define SHMEM_TEAM_GENERICS_ 1

#define SHMEM_C11_INT_(X, OP)                                                  \
    signed char: X(schar, OP), short: X(short, OP), int: X(int, OP),          \
    long: X(long, OP), long long: X(longlong, OP),                            \
    unsigned char: X(uchar, OP), unsigned short: X(ushort, OP),               \
    unsigned int: X(uint, OP), unsigned long: X(ulong, OP),                   \
    unsigned long long: X(ulonglong, OP)
#define SHMEM_C11_REAL_(X, OP)                                                 \
    float: X(float, OP), double: X(double, OP),                               \
    long double: X(longdouble, OP)
#define SHMEM_C11_NAME_(N, OP) shmem_##N##_##OP

/* Bitwise reductions: the unsigned and fixed-width table has no signed
 * char or plain C signed types but short/int/long/long long; map the
 * signed ones that exist. */
#define SHMEM_C11_BIT_(OP)                                                     \
    short: shmem_short_##OP##_reduce, int: shmem_int_##OP##_reduce,           \
    long: shmem_long_##OP##_reduce,                                           \
    long long: shmem_longlong_##OP##_reduce,                                  \
    unsigned char: shmem_uchar_##OP##_reduce,                                 \
    unsigned short: shmem_ushort_##OP##_reduce,                               \
    unsigned int: shmem_uint_##OP##_reduce,                                   \
    unsigned long: shmem_ulong_##OP##_reduce,                                 \
    unsigned long long: shmem_ulonglong_##OP##_reduce,                        \
    signed char: shmem_int8_##OP##_reduce
#define shmem_and_reduce(team, dest, source, nreduce)                          \
    _Generic(*(dest), SHMEM_C11_BIT_(and))(team, dest, source, nreduce)
#define shmem_or_reduce(team, dest, source, nreduce)                           \
    _Generic(*(dest), SHMEM_C11_BIT_(or))(team, dest, source, nreduce)
#define shmem_xor_reduce(team, dest, source, nreduce)                          \
    _Generic(*(dest), SHMEM_C11_BIT_(xor))(team, dest, source, nreduce)

#define SHMEM_C11_ORD_(OP)                                                     \
    char: SHMEM_C11_NAME_(char, OP), SHMEM_C11_INT_(SHMEM_C11_NAME_, OP),     \
    SHMEM_C11_REAL_(SHMEM_C11_NAME_, OP)
#define SHMEM_C11_CPLX_(OP)                                                    \
    SHMEM_C11_ORD_(OP), double _Complex: shmem_complexd_##OP,                 \
    float _Complex: shmem_complexf_##OP
#define shmem_max_reduce(team, dest, source, nreduce)                          \
    _Generic(*(dest), SHMEM_C11_ORD_(max_reduce))(team, dest, source, nreduce)
#define shmem_min_reduce(team, dest, source, nreduce)                          \
    _Generic(*(dest), SHMEM_C11_ORD_(min_reduce))(team, dest, source, nreduce)
#define shmem_sum_reduce(team, dest, source, nreduce)                          \
    _Generic(*(dest), SHMEM_C11_CPLX_(sum_reduce))(team, dest, source, nreduce)
#define shmem_prod_reduce(team, dest, source, nreduce)                         \
    _Generic(*(dest),                                                          \
             SHMEM_C11_CPLX_(prod_reduce))(team, dest, source, nreduce)
#define shmem_sum_inscan(team, dest, source, nelems)                           \
    _Generic(*(dest), SHMEM_C11_CPLX_(sum_inscan))(team, dest, source, nelems)
#define shmem_sum_exscan(team, dest, source, nelems)                           \
    _Generic(*(dest), SHMEM_C11_CPLX_(sum_exscan))(team, dest, source, nelems)

#define shmem_broadcast(team, dest, source, nelems, root)                      \
    _Generic(*(dest), SHMEM_C11_ORD_(broadcast))(team, dest, source, nelems,   \
                                                 root)
#define shmem_collect(team, dest, source, nelems)                              \
    _Generic(*(dest), SHMEM_C11_ORD_(collect))(team, dest, source, nelems)
#define shmem_fcollect(team, dest, source, nelems)                             \
    _Generic(*(dest), SHMEM_C11_ORD_(fcollect))(team, dest, source, nelems)
#define shmem_alltoall(team, dest, source, nelems)                             \
    _Generic(*(dest), SHMEM_C11_ORD_(alltoall))(team, dest, source, nelems)
#define shmem_alltoalls(team, dest, source, dst, sst, nelems)                  \
    _Generic(*(dest), SHMEM_C11_ORD_(alltoalls))(team, dest, source, dst, sst, \
                                                 nelems)

#define SHMEM_SYNC_PICK_(a, b, c, d, NAME, ...) NAME
#define shmem_sync(...)                                                        \
    SHMEM_SYNC_PICK_(__VA_ARGS__, shmem_sync, shmem_sync_bad_args_,            \
                     shmem_sync_bad_args_, shmem_team_sync, )(__VA_ARGS__)
#endif
