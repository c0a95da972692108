/*
 * dmashmem: the type-generic names (shmem_put, shmem_atomic_fetch_add,
 * shmem_wait_until, shmem_sum_reduce, ...) for C++, included by shmem.h
 * when compiling C++11 or later. They are what <shmem/generic.h> gives C11
 * through _Generic, here as overloads (SOS ships C++ overloads too).
 *
 * How a call is resolved: every generic name is a set of forwarding
 * templates, one per element type T of the routine's table, whose first
 * pointer parameter is `T *` (or `const T *` where the routine reads it):
 *   NAME(T *, args...)                  -> shmem_TYPENAME_OP(...)
 *   NAME(shmem_ctx_t, T *, args...)     -> shmem_ctx_TYPENAME_OP(...)
 *   NAME(shmem_team_t, T *, args...)    -> shmem_TYPENAME_OP(team, ...)
 * The pointer picks the overload by exact type, so a type outside the
 * table, or a wrong argument count (the forwarded call fails to compile
 * and the template drops out), is a compile-time error naming the
 * candidates. The remaining arguments convert as in a call of the typed
 * routine. The type lists name the distinct C++ types only; the
 * fixed-width typedefs (int32_t, size_t, ...) are aliases of them and
 * select the routine of the same size and signedness, as in C11. Complex
 * reductions have no generic name in C++: call shmem_complexd_sum_reduce
 * and friends.
 */
#ifndef SHMEM_CXX_H
#define SHMEM_CXX_H

/* ---- distinct C++ types of each table: X(C++ type, TYPENAME) ---- */
#define SHMEM_CXX_INTS_(X)                                                     \
    X(signed char, schar)                                                      \
    X(short, short)                                                            \
    X(int, int)                                                                \
    X(long, long)                                                              \
    X(long long, longlong)                                                     \
    X(unsigned char, uchar)                                                    \
    X(unsigned short, ushort)                                                  \
    X(unsigned int, uint)                                                      \
    X(unsigned long, ulong)                                                    \
    X(unsigned long long, ulonglong)
/* RMA, broadcast/collect/alltoall, min/max and sum/prod reductions. */
#define SHMEM_CXX_TYPES_RMA(X)                                                 \
    X(float, float)                                                            \
    X(double, double)                                                          \
    X(long double, longdouble)                                                 \
    X(char, char)                                                              \
    SHMEM_CXX_INTS_(X)
#define SHMEM_CXX_TYPES_AMO_STD(X)                                             \
    X(int, int)                                                                \
    X(long, long)                                                              \
    X(long long, longlong)                                                     \
    X(unsigned int, uint)                                                      \
    X(unsigned long, ulong)                                                    \
    X(unsigned long long, ulonglong)
#define SHMEM_CXX_TYPES_AMO_EXT(X)                                             \
    SHMEM_CXX_TYPES_AMO_STD(X)                                                 \
    X(float, float)                                                            \
    X(double, double)
/* The bitwise table has no plain signed type but int32_t and int64_t. */
#define SHMEM_CXX_TYPES_AMO_BIT(X)                                             \
    X(unsigned int, uint)                                                      \
    X(unsigned long, ulong)                                                    \
    X(unsigned long long, ulonglong)                                           \
    X(int32_t, int32)                                                          \
    X(int64_t, int64)
#define SHMEM_CXX_TYPES_P2P(X)                                                 \
    X(short, short)                                                            \
    X(unsigned short, ushort)                                                  \
    SHMEM_CXX_TYPES_AMO_STD(X)
/* Bitwise reductions: the integer types of the table (signed char is
 * int8_t there). */
#define SHMEM_CXX_TYPES_REDUCE_BIT(X)                                          \
    X(signed char, int8)                                                       \
    X(short, short)                                                            \
    X(int, int)                                                                \
    X(long, long)                                                              \
    X(long long, longlong)                                                     \
    X(unsigned char, uchar)                                                    \
    X(unsigned short, ushort)                                                  \
    X(unsigned int, uint)                                                      \
    X(unsigned long, ulong)                                                    \
    X(unsigned long long, ulonglong)

/* ---- the forwarding templates ----
 * PLAIN: NAME(T *, ...) -> shmem_N_S; CPLAIN: the same with const T *;
 * CTX/CCTX: the shmem_ctx_t form; TEAM: NAME(shmem_team_t, T *, ...). */
#define SHMEM_CXX_PLAIN_(NAME, S, T, N, Q)                                     \
    template <typename... A_>                                                  \
    inline auto NAME(Q T *p_, A_... a_)->decltype(shmem_##N##S(p_, a_...))     \
    {                                                                          \
        return shmem_##N##S(p_, a_...);                                        \
    }
#define SHMEM_CXX_CTX_(NAME, S, T, N, Q)                                       \
    template <typename... A_>                                                  \
    inline auto NAME(shmem_ctx_t c_, Q T *p_, A_... a_)                        \
        ->decltype(shmem_ctx_##N##S(c_, p_, a_...))                            \
    {                                                                          \
        return shmem_ctx_##N##S(c_, p_, a_...);                                \
    }
#define SHMEM_CXX_TEAM_(NAME, S, T, N)                                         \
    template <typename... A_>                                                  \
    inline auto NAME(shmem_team_t t_, T *p_, A_... a_)                         \
        ->decltype(shmem_##N##S(t_, p_, a_...))                                \
    {                                                                          \
        return shmem_##N##S(t_, p_, a_...);                                    \
    }
#define SHMEM_CXX_BOTH_(NAME, S, T, N)                                         \
    SHMEM_CXX_PLAIN_(NAME, S, T, N, ) SHMEM_CXX_CTX_(NAME, S, T, N, )
#define SHMEM_CXX_CBOTH_(NAME, S, T, N)                                        \
    SHMEM_CXX_PLAIN_(NAME, S, T, N, const) SHMEM_CXX_CTX_(NAME, S, T, N, const)

/* ---- remote memory access and signaling ---- */
#define SHMEM_CXX_RMA_(T, N)                                                   \
    SHMEM_CXX_BOTH_(shmem_put, _put, T, N)                                     \
    SHMEM_CXX_BOTH_(shmem_get, _get, T, N)                                     \
    SHMEM_CXX_BOTH_(shmem_p, _p, T, N)                                         \
    SHMEM_CXX_CBOTH_(shmem_g, _g, T, N)                                        \
    SHMEM_CXX_BOTH_(shmem_iput, _iput, T, N)                                   \
    SHMEM_CXX_BOTH_(shmem_iget, _iget, T, N)                                   \
    SHMEM_CXX_BOTH_(shmem_ibput, _ibput, T, N)                                 \
    SHMEM_CXX_BOTH_(shmem_ibget, _ibget, T, N)                                 \
    SHMEM_CXX_BOTH_(shmem_put_nbi, _put_nbi, T, N)                             \
    SHMEM_CXX_BOTH_(shmem_get_nbi, _get_nbi, T, N)                             \
    SHMEM_CXX_BOTH_(shmem_put_signal, _put_signal, T, N)                       \
    SHMEM_CXX_BOTH_(shmem_put_signal_nbi, _put_signal_nbi, T, N)
SHMEM_CXX_TYPES_RMA(SHMEM_CXX_RMA_)

/* Untyped: the plain names are the C routines; add the context forms. */
inline void shmem_signal_add(shmem_ctx_t ctx, uint64_t *sig_addr,
                             uint64_t signal, int pe)
{
    shmem_ctx_signal_add(ctx, sig_addr, signal, pe);
}
inline void shmem_signal_set(shmem_ctx_t ctx, uint64_t *sig_addr,
                             uint64_t signal, int pe)
{
    shmem_ctx_signal_set(ctx, sig_addr, signal, pe);
}

/* ---- atomic memory operations ---- */
#define SHMEM_CXX_AMO_EXT_(T, N)                                               \
    SHMEM_CXX_CBOTH_(shmem_atomic_fetch, _atomic_fetch, T, N)                  \
    SHMEM_CXX_BOTH_(shmem_atomic_set, _atomic_set, T, N)                       \
    SHMEM_CXX_BOTH_(shmem_atomic_swap, _atomic_swap, T, N)                     \
    SHMEM_CXX_BOTH_(shmem_atomic_fetch_nbi, _atomic_fetch_nbi, T, N)           \
    SHMEM_CXX_BOTH_(shmem_atomic_swap_nbi, _atomic_swap_nbi, T, N)             \
    SHMEM_CXX_PLAIN_(shmem_fetch, _fetch, T, N, const)                         \
    SHMEM_CXX_PLAIN_(shmem_set, _set, T, N, )                                  \
    SHMEM_CXX_PLAIN_(shmem_swap, _swap, T, N, )
SHMEM_CXX_TYPES_AMO_EXT(SHMEM_CXX_AMO_EXT_)

#define SHMEM_CXX_AMO_STD_(T, N)                                               \
    SHMEM_CXX_BOTH_(shmem_atomic_compare_swap, _atomic_compare_swap, T, N)     \
    SHMEM_CXX_BOTH_(shmem_atomic_fetch_inc, _atomic_fetch_inc, T, N)           \
    SHMEM_CXX_BOTH_(shmem_atomic_inc, _atomic_inc, T, N)                       \
    SHMEM_CXX_BOTH_(shmem_atomic_fetch_add, _atomic_fetch_add, T, N)           \
    SHMEM_CXX_BOTH_(shmem_atomic_add, _atomic_add, T, N)                       \
    SHMEM_CXX_BOTH_(shmem_atomic_compare_swap_nbi, _atomic_compare_swap_nbi,   \
                    T, N)                                                      \
    SHMEM_CXX_BOTH_(shmem_atomic_fetch_inc_nbi, _atomic_fetch_inc_nbi, T, N)   \
    SHMEM_CXX_BOTH_(shmem_atomic_fetch_add_nbi, _atomic_fetch_add_nbi, T, N)   \
    SHMEM_CXX_PLAIN_(shmem_cswap, _cswap, T, N, )                              \
    SHMEM_CXX_PLAIN_(shmem_finc, _finc, T, N, )                                \
    SHMEM_CXX_PLAIN_(shmem_inc, _inc, T, N, )                                  \
    SHMEM_CXX_PLAIN_(shmem_fadd, _fadd, T, N, )                                \
    SHMEM_CXX_PLAIN_(shmem_add, _add, T, N, )
SHMEM_CXX_TYPES_AMO_STD(SHMEM_CXX_AMO_STD_)

#define SHMEM_CXX_AMO_BIT_(T, N)                                               \
    SHMEM_CXX_BOTH_(shmem_atomic_fetch_and, _atomic_fetch_and, T, N)           \
    SHMEM_CXX_BOTH_(shmem_atomic_fetch_or, _atomic_fetch_or, T, N)             \
    SHMEM_CXX_BOTH_(shmem_atomic_fetch_xor, _atomic_fetch_xor, T, N)           \
    SHMEM_CXX_BOTH_(shmem_atomic_and, _atomic_and, T, N)                       \
    SHMEM_CXX_BOTH_(shmem_atomic_or, _atomic_or, T, N)                         \
    SHMEM_CXX_BOTH_(shmem_atomic_xor, _atomic_xor, T, N)                       \
    SHMEM_CXX_BOTH_(shmem_atomic_fetch_and_nbi, _atomic_fetch_and_nbi, T, N)   \
    SHMEM_CXX_BOTH_(shmem_atomic_fetch_or_nbi, _atomic_fetch_or_nbi, T, N)     \
    SHMEM_CXX_BOTH_(shmem_atomic_fetch_xor_nbi, _atomic_fetch_xor_nbi, T, N)
SHMEM_CXX_TYPES_AMO_BIT(SHMEM_CXX_AMO_BIT_)

/* ---- point-to-point synchronization: exact signatures, not forwarding
 * templates, because status and indices are often passed as NULL or 0,
 * which a template would deduce as an integer. The deprecated untyped C
 * routine shmem_wait_until(long *, int, long) is the long overload. ---- */
#define SHMEM_CXX_P2P_(T, N)                                                   \
    inline void shmem_wait_until_all(T *v, size_t n, const int *st, int cmp,   \
                                     T x)                                      \
    {                                                                          \
        shmem_##N##_wait_until_all(v, n, st, cmp, x);                          \
    }                                                                          \
    inline size_t shmem_wait_until_any(T *v, size_t n, const int *st, int cmp, \
                                       T x)                                    \
    {                                                                          \
        return shmem_##N##_wait_until_any(v, n, st, cmp, x);                   \
    }                                                                          \
    inline size_t shmem_wait_until_some(T *v, size_t n, size_t *idx,           \
                                        const int *st, int cmp, T x)           \
    {                                                                          \
        return shmem_##N##_wait_until_some(v, n, idx, st, cmp, x);             \
    }                                                                          \
    inline void shmem_wait_until_all_vector(T *v, size_t n, const int *st,     \
                                            int cmp, T *x)                     \
    {                                                                          \
        shmem_##N##_wait_until_all_vector(v, n, st, cmp, x);                   \
    }                                                                          \
    inline size_t shmem_wait_until_any_vector(T *v, size_t n, const int *st,   \
                                              int cmp, T *x)                   \
    {                                                                          \
        return shmem_##N##_wait_until_any_vector(v, n, st, cmp, x);            \
    }                                                                          \
    inline size_t shmem_wait_until_some_vector(T *v, size_t n, size_t *idx,    \
                                               const int *st, int cmp, T *x)   \
    {                                                                          \
        return shmem_##N##_wait_until_some_vector(v, n, idx, st, cmp, x);      \
    }                                                                          \
    inline int shmem_test(T *v, int cmp, T x)                                  \
    {                                                                          \
        return shmem_##N##_test(v, cmp, x);                                    \
    }                                                                          \
    inline int shmem_test_all(T *v, size_t n, const int *st, int cmp, T x)     \
    {                                                                          \
        return shmem_##N##_test_all(v, n, st, cmp, x);                         \
    }                                                                          \
    inline size_t shmem_test_any(T *v, size_t n, const int *st, int cmp, T x)  \
    {                                                                          \
        return shmem_##N##_test_any(v, n, st, cmp, x);                         \
    }                                                                          \
    inline size_t shmem_test_some(T *v, size_t n, size_t *idx, const int *st,  \
                                  int cmp, T x)                                \
    {                                                                          \
        return shmem_##N##_test_some(v, n, idx, st, cmp, x);                   \
    }                                                                          \
    inline int shmem_test_all_vector(T *v, size_t n, const int *st, int cmp,   \
                                     T *x)                                     \
    {                                                                          \
        return shmem_##N##_test_all_vector(v, n, st, cmp, x);                  \
    }                                                                          \
    inline size_t shmem_test_any_vector(T *v, size_t n, const int *st,         \
                                        int cmp, T *x)                         \
    {                                                                          \
        return shmem_##N##_test_any_vector(v, n, st, cmp, x);                  \
    }                                                                          \
    inline size_t shmem_test_some_vector(T *v, size_t n, size_t *idx,          \
                                         const int *st, int cmp, T *x)         \
    {                                                                          \
        return shmem_##N##_test_some_vector(v, n, idx, st, cmp, x);            \
    }
#define SHMEM_CXX_WAIT_(T, N)                                                  \
    inline void shmem_wait_until(T *v, int cmp, T x)                           \
    {                                                                          \
        shmem_##N##_wait_until(v, cmp, x);                                     \
    }
SHMEM_CXX_TYPES_P2P(SHMEM_CXX_P2P_)
/* Every P2P type but long, whose C routine already is the overload. */
SHMEM_CXX_WAIT_(short, short)
SHMEM_CXX_WAIT_(unsigned short, ushort)
SHMEM_CXX_WAIT_(int, int)
SHMEM_CXX_WAIT_(long long, longlong)
SHMEM_CXX_WAIT_(unsigned int, uint)
SHMEM_CXX_WAIT_(unsigned long, ulong)
SHMEM_CXX_WAIT_(unsigned long long, ulonglong)

/* ---- team collectives ---- */
#define SHMEM_CXX_COLL_(T, N)                                                  \
    SHMEM_CXX_TEAM_(shmem_broadcast, _broadcast, T, N)                         \
    SHMEM_CXX_TEAM_(shmem_collect, _collect, T, N)                             \
    SHMEM_CXX_TEAM_(shmem_fcollect, _fcollect, T, N)                           \
    SHMEM_CXX_TEAM_(shmem_alltoall, _alltoall, T, N)                           \
    SHMEM_CXX_TEAM_(shmem_alltoalls, _alltoalls, T, N)                         \
    SHMEM_CXX_TEAM_(shmem_max_reduce, _max_reduce, T, N)                       \
    SHMEM_CXX_TEAM_(shmem_min_reduce, _min_reduce, T, N)                       \
    SHMEM_CXX_TEAM_(shmem_sum_reduce, _sum_reduce, T, N)                       \
    SHMEM_CXX_TEAM_(shmem_prod_reduce, _prod_reduce, T, N)                     \
    SHMEM_CXX_TEAM_(shmem_sum_inscan, _sum_inscan, T, N)                       \
    SHMEM_CXX_TEAM_(shmem_sum_exscan, _sum_exscan, T, N)
SHMEM_CXX_TYPES_RMA(SHMEM_CXX_COLL_)

#define SHMEM_CXX_REDUCE_BIT_(T, N)                                            \
    SHMEM_CXX_TEAM_(shmem_and_reduce, _and_reduce, T, N)                       \
    SHMEM_CXX_TEAM_(shmem_or_reduce, _or_reduce, T, N)                         \
    SHMEM_CXX_TEAM_(shmem_xor_reduce, _xor_reduce, T, N)
SHMEM_CXX_TYPES_REDUCE_BIT(SHMEM_CXX_REDUCE_BIT_)

/* shmem_sync: the team form beside the deprecated active-set C routine. */
inline int shmem_sync(shmem_team_t team)
{
    return shmem_team_sync(team);
}

#undef SHMEM_CXX_RMA_
#undef SHMEM_CXX_AMO_EXT_
#undef SHMEM_CXX_AMO_STD_
#undef SHMEM_CXX_AMO_BIT_
#undef SHMEM_CXX_P2P_
#undef SHMEM_CXX_WAIT_
#undef SHMEM_CXX_COLL_
#undef SHMEM_CXX_REDUCE_BIT_

#endif /* SHMEM_CXX_H */
