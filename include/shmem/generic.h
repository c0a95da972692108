/*
 * dmashmem: the C11 type-generic names (shmem_put, shmem_atomic_fetch_add,
 * shmem_wait_until, ...), included by shmem.h when compiling C11 or later.
 *
 * How a call is resolved:
 *  - context or not: the spec gives each generic name two forms, with and
 *    without a leading shmem_ctx_t. The type of the first argument picks the
 *    form (as SOS does): shmem_ctx_t selects shmem_ctx_TYPENAME_OP, anything
 *    else shmem_TYPENAME_OP.
 *  - the element type: the first pointer argument of the form (dest,
 *    source, fetch or ivars) is dereferenced in the unevaluated controlling
 *    expression, so `T *`, `const T *`, `volatile T *` and arrays of T all
 *    select TYPENAME of T (lvalue conversion drops the qualifiers).
 *  - the association lists name the standard C types only (char, signed
 *    char, short, int, long, long long, their unsigned forms, float, double,
 *    long double), which are always distinct. The fixed-width and other
 *    typedefs of the spec tables (int32_t, size_t, ptrdiff_t, ...) are
 *    typedefs of those and select the routine of the same size and
 *    signedness. Where a table holds a signed fixed-width type but not its
 *    base type (bitwise AMOs: int32_t, int64_t), the typedef is matched in
 *    a nested selection of its own, so no list names a type twice.
 * A type outside a routine's table selects shmem_c11_type_mismatch, which
 * takes no arguments: the call does not compile.
 */
#ifndef SHMEM_GENERIC_H
#define SHMEM_GENERIC_H

/* Never defined: selected only for an argument type the routine lacks. */
void shmem_c11_type_mismatch(void);

#define SHMEM_C11_ARG0_(a, ...) a
#define SHMEM_C11_ARG0(...) SHMEM_C11_ARG0_(__VA_ARGS__, 0)
#define SHMEM_C11_ARG1_(a, b, ...) b
#define SHMEM_C11_ARG1(...) SHMEM_C11_ARG1_(__VA_ARGS__, 0)

/* The element (an lvalue of the data type) of the first pointer argument,
 * of the context form (after ctx) or of the plain form. The unused form
 * sees an unsigned int, a type every table has, so it stays valid. */
#define SHMEM_C11_ELEM_CTX(...)                                                \
    (*_Generic((SHMEM_C11_ARG0(__VA_ARGS__)),                                  \
               shmem_ctx_t: (SHMEM_C11_ARG1(__VA_ARGS__)),                     \
               default: (unsigned int *)0))
#define SHMEM_C11_ELEM(...)                                                    \
    (*_Generic((SHMEM_C11_ARG0(__VA_ARGS__)),                                  \
               shmem_ctx_t: (unsigned int *)0,                                 \
               default: (SHMEM_C11_ARG0(__VA_ARGS__))))

/* Selections per type table: e is the element, P the prefix up to
 * TYPENAME, S the suffix after it. */
#define SHMEM_C11_SEL_RMA(e, P, S)                                             \
    _Generic((e),                                                              \
        float: P##float##S,                                                    \
        double: P##double##S,                                                  \
        long double: P##longdouble##S,                                         \
        char: P##char##S,                                                      \
        signed char: P##schar##S,                                              \
        short: P##short##S,                                                    \
        int: P##int##S,                                                        \
        long: P##long##S,                                                      \
        long long: P##longlong##S,                                             \
        unsigned char: P##uchar##S,                                            \
        unsigned short: P##ushort##S,                                          \
        unsigned int: P##uint##S,                                              \
        unsigned long: P##ulong##S,                                            \
        unsigned long long: P##ulonglong##S,                                   \
        default: shmem_c11_type_mismatch)

#define SHMEM_C11_SEL_AMO_STD(e, P, S)                                         \
    _Generic((e),                                                              \
        int: P##int##S,                                                        \
        long: P##long##S,                                                      \
        long long: P##longlong##S,                                             \
        unsigned int: P##uint##S,                                              \
        unsigned long: P##ulong##S,                                            \
        unsigned long long: P##ulonglong##S,                                   \
        default: shmem_c11_type_mismatch)

#define SHMEM_C11_SEL_AMO_EXT(e, P, S)                                         \
    _Generic((e),                                                              \
        int: P##int##S,                                                        \
        long: P##long##S,                                                      \
        long long: P##longlong##S,                                             \
        unsigned int: P##uint##S,                                              \
        unsigned long: P##ulong##S,                                            \
        unsigned long long: P##ulonglong##S,                                   \
        float: P##float##S,                                                    \
        double: P##double##S,                                                  \
        default: shmem_c11_type_mismatch)

#define SHMEM_C11_SEL_AMO_BIT(e, P, S)                                         \
    _Generic((e),                                                              \
        unsigned int: P##uint##S,                                              \
        unsigned long: P##ulong##S,                                            \
        unsigned long long: P##ulonglong##S,                                   \
        default: _Generic((e),                                                 \
            int32_t: P##int32##S,                                              \
            default: _Generic((e),                                             \
                int64_t: P##int64##S,                                          \
                default: shmem_c11_type_mismatch)))

#define SHMEM_C11_SEL_P2P(e, P, S)                                             \
    _Generic((e),                                                              \
        short: P##short##S,                                                    \
        unsigned short: P##ushort##S,                                          \
        int: P##int##S,                                                        \
        long: P##long##S,                                                      \
        long long: P##longlong##S,                                             \
        unsigned int: P##uint##S,                                              \
        unsigned long: P##ulong##S,                                            \
        unsigned long long: P##ulonglong##S,                                   \
        default: shmem_c11_type_mismatch)

/* A family with context and plain forms: the routine to call. */
#define SHMEM_C11_CTX(SEL, S, ...)                                             \
    _Generic((SHMEM_C11_ARG0(__VA_ARGS__)),                                    \
        shmem_ctx_t: SEL(SHMEM_C11_ELEM_CTX(__VA_ARGS__), shmem_ctx_, S),      \
        default: SEL(SHMEM_C11_ELEM(__VA_ARGS__), shmem_, S))
/* A family with the plain form only. */
#define SHMEM_C11_PLAIN(SEL, S, ...)                                           \
    SEL((*(SHMEM_C11_ARG0(__VA_ARGS__))), shmem_, S)

/* ---- remote memory access ---- */
#define shmem_put(...) SHMEM_C11_CTX(SHMEM_C11_SEL_RMA, _put, __VA_ARGS__)(__VA_ARGS__)
#define shmem_get(...) SHMEM_C11_CTX(SHMEM_C11_SEL_RMA, _get, __VA_ARGS__)(__VA_ARGS__)
#define shmem_p(...) SHMEM_C11_CTX(SHMEM_C11_SEL_RMA, _p, __VA_ARGS__)(__VA_ARGS__)
#define shmem_g(...) SHMEM_C11_CTX(SHMEM_C11_SEL_RMA, _g, __VA_ARGS__)(__VA_ARGS__)
#define shmem_iput(...) SHMEM_C11_CTX(SHMEM_C11_SEL_RMA, _iput, __VA_ARGS__)(__VA_ARGS__)
#define shmem_iget(...) SHMEM_C11_CTX(SHMEM_C11_SEL_RMA, _iget, __VA_ARGS__)(__VA_ARGS__)
#define shmem_ibput(...) SHMEM_C11_CTX(SHMEM_C11_SEL_RMA, _ibput, __VA_ARGS__)(__VA_ARGS__)
#define shmem_ibget(...) SHMEM_C11_CTX(SHMEM_C11_SEL_RMA, _ibget, __VA_ARGS__)(__VA_ARGS__)
#define shmem_put_nbi(...) SHMEM_C11_CTX(SHMEM_C11_SEL_RMA, _put_nbi, __VA_ARGS__)(__VA_ARGS__)
#define shmem_get_nbi(...) SHMEM_C11_CTX(SHMEM_C11_SEL_RMA, _get_nbi, __VA_ARGS__)(__VA_ARGS__)

/* ---- signaling ---- */
#define shmem_put_signal(...) SHMEM_C11_CTX(SHMEM_C11_SEL_RMA, _put_signal, __VA_ARGS__)(__VA_ARGS__)
#define shmem_put_signal_nbi(...) SHMEM_C11_CTX(SHMEM_C11_SEL_RMA, _put_signal_nbi, __VA_ARGS__)(__VA_ARGS__)
/* Untyped: only the context decides (the plain name is the C routine). */
#define shmem_signal_add(...)                                                  \
    _Generic((SHMEM_C11_ARG0(__VA_ARGS__)), shmem_ctx_t: shmem_ctx_signal_add, \
             default: shmem_signal_add)(__VA_ARGS__)
#define shmem_signal_set(...)                                                  \
    _Generic((SHMEM_C11_ARG0(__VA_ARGS__)), shmem_ctx_t: shmem_ctx_signal_set, \
             default: shmem_signal_set)(__VA_ARGS__)

/* ---- atomic memory operations ---- */
#define shmem_atomic_fetch(...) SHMEM_C11_CTX(SHMEM_C11_SEL_AMO_EXT, _atomic_fetch, __VA_ARGS__)(__VA_ARGS__)
#define shmem_atomic_set(...) SHMEM_C11_CTX(SHMEM_C11_SEL_AMO_EXT, _atomic_set, __VA_ARGS__)(__VA_ARGS__)
#define shmem_atomic_swap(...) SHMEM_C11_CTX(SHMEM_C11_SEL_AMO_EXT, _atomic_swap, __VA_ARGS__)(__VA_ARGS__)
#define shmem_atomic_fetch_nbi(...) SHMEM_C11_CTX(SHMEM_C11_SEL_AMO_EXT, _atomic_fetch_nbi, __VA_ARGS__)(__VA_ARGS__)
#define shmem_atomic_swap_nbi(...) SHMEM_C11_CTX(SHMEM_C11_SEL_AMO_EXT, _atomic_swap_nbi, __VA_ARGS__)(__VA_ARGS__)
#define shmem_atomic_compare_swap(...) SHMEM_C11_CTX(SHMEM_C11_SEL_AMO_STD, _atomic_compare_swap, __VA_ARGS__)(__VA_ARGS__)
#define shmem_atomic_fetch_inc(...) SHMEM_C11_CTX(SHMEM_C11_SEL_AMO_STD, _atomic_fetch_inc, __VA_ARGS__)(__VA_ARGS__)
#define shmem_atomic_inc(...) SHMEM_C11_CTX(SHMEM_C11_SEL_AMO_STD, _atomic_inc, __VA_ARGS__)(__VA_ARGS__)
#define shmem_atomic_fetch_add(...) SHMEM_C11_CTX(SHMEM_C11_SEL_AMO_STD, _atomic_fetch_add, __VA_ARGS__)(__VA_ARGS__)
#define shmem_atomic_add(...) SHMEM_C11_CTX(SHMEM_C11_SEL_AMO_STD, _atomic_add, __VA_ARGS__)(__VA_ARGS__)
#define shmem_atomic_compare_swap_nbi(...) SHMEM_C11_CTX(SHMEM_C11_SEL_AMO_STD, _atomic_compare_swap_nbi, __VA_ARGS__)(__VA_ARGS__)
#define shmem_atomic_fetch_inc_nbi(...) SHMEM_C11_CTX(SHMEM_C11_SEL_AMO_STD, _atomic_fetch_inc_nbi, __VA_ARGS__)(__VA_ARGS__)
#define shmem_atomic_fetch_add_nbi(...) SHMEM_C11_CTX(SHMEM_C11_SEL_AMO_STD, _atomic_fetch_add_nbi, __VA_ARGS__)(__VA_ARGS__)
#define shmem_atomic_fetch_and(...) SHMEM_C11_CTX(SHMEM_C11_SEL_AMO_BIT, _atomic_fetch_and, __VA_ARGS__)(__VA_ARGS__)
#define shmem_atomic_fetch_or(...) SHMEM_C11_CTX(SHMEM_C11_SEL_AMO_BIT, _atomic_fetch_or, __VA_ARGS__)(__VA_ARGS__)
#define shmem_atomic_fetch_xor(...) SHMEM_C11_CTX(SHMEM_C11_SEL_AMO_BIT, _atomic_fetch_xor, __VA_ARGS__)(__VA_ARGS__)
#define shmem_atomic_and(...) SHMEM_C11_CTX(SHMEM_C11_SEL_AMO_BIT, _atomic_and, __VA_ARGS__)(__VA_ARGS__)
#define shmem_atomic_or(...) SHMEM_C11_CTX(SHMEM_C11_SEL_AMO_BIT, _atomic_or, __VA_ARGS__)(__VA_ARGS__)
#define shmem_atomic_xor(...) SHMEM_C11_CTX(SHMEM_C11_SEL_AMO_BIT, _atomic_xor, __VA_ARGS__)(__VA_ARGS__)
#define shmem_atomic_fetch_and_nbi(...) SHMEM_C11_CTX(SHMEM_C11_SEL_AMO_BIT, _atomic_fetch_and_nbi, __VA_ARGS__)(__VA_ARGS__)
#define shmem_atomic_fetch_or_nbi(...) SHMEM_C11_CTX(SHMEM_C11_SEL_AMO_BIT, _atomic_fetch_or_nbi, __VA_ARGS__)(__VA_ARGS__)
#define shmem_atomic_fetch_xor_nbi(...) SHMEM_C11_CTX(SHMEM_C11_SEL_AMO_BIT, _atomic_fetch_xor_nbi, __VA_ARGS__)(__VA_ARGS__)

/* Deprecated (1.4) generic AMO names, plain form only. */
#define shmem_fetch(...) SHMEM_C11_PLAIN(SHMEM_C11_SEL_AMO_EXT, _fetch, __VA_ARGS__)(__VA_ARGS__)
#define shmem_set(...) SHMEM_C11_PLAIN(SHMEM_C11_SEL_AMO_EXT, _set, __VA_ARGS__)(__VA_ARGS__)
#define shmem_swap(...) SHMEM_C11_PLAIN(SHMEM_C11_SEL_AMO_EXT, _swap, __VA_ARGS__)(__VA_ARGS__)
#define shmem_cswap(...) SHMEM_C11_PLAIN(SHMEM_C11_SEL_AMO_STD, _cswap, __VA_ARGS__)(__VA_ARGS__)
#define shmem_finc(...) SHMEM_C11_PLAIN(SHMEM_C11_SEL_AMO_STD, _finc, __VA_ARGS__)(__VA_ARGS__)
#define shmem_inc(...) SHMEM_C11_PLAIN(SHMEM_C11_SEL_AMO_STD, _inc, __VA_ARGS__)(__VA_ARGS__)
#define shmem_fadd(...) SHMEM_C11_PLAIN(SHMEM_C11_SEL_AMO_STD, _fadd, __VA_ARGS__)(__VA_ARGS__)
#define shmem_add(...) SHMEM_C11_PLAIN(SHMEM_C11_SEL_AMO_STD, _add, __VA_ARGS__)(__VA_ARGS__)

/* ---- point-to-point synchronization (no context forms). The deprecated
 * untyped shmem_wait_until(long *, int, long) is this macro's long case. */
#define shmem_wait_until(...) SHMEM_C11_PLAIN(SHMEM_C11_SEL_P2P, _wait_until, __VA_ARGS__)(__VA_ARGS__)
#define shmem_wait_until_all(...) SHMEM_C11_PLAIN(SHMEM_C11_SEL_P2P, _wait_until_all, __VA_ARGS__)(__VA_ARGS__)
#define shmem_wait_until_any(...) SHMEM_C11_PLAIN(SHMEM_C11_SEL_P2P, _wait_until_any, __VA_ARGS__)(__VA_ARGS__)
#define shmem_wait_until_some(...) SHMEM_C11_PLAIN(SHMEM_C11_SEL_P2P, _wait_until_some, __VA_ARGS__)(__VA_ARGS__)
#define shmem_wait_until_all_vector(...) SHMEM_C11_PLAIN(SHMEM_C11_SEL_P2P, _wait_until_all_vector, __VA_ARGS__)(__VA_ARGS__)
#define shmem_wait_until_any_vector(...) SHMEM_C11_PLAIN(SHMEM_C11_SEL_P2P, _wait_until_any_vector, __VA_ARGS__)(__VA_ARGS__)
#define shmem_wait_until_some_vector(...) SHMEM_C11_PLAIN(SHMEM_C11_SEL_P2P, _wait_until_some_vector, __VA_ARGS__)(__VA_ARGS__)
#define shmem_test(...) SHMEM_C11_PLAIN(SHMEM_C11_SEL_P2P, _test, __VA_ARGS__)(__VA_ARGS__)
#define shmem_test_all(...) SHMEM_C11_PLAIN(SHMEM_C11_SEL_P2P, _test_all, __VA_ARGS__)(__VA_ARGS__)
#define shmem_test_any(...) SHMEM_C11_PLAIN(SHMEM_C11_SEL_P2P, _test_any, __VA_ARGS__)(__VA_ARGS__)
#define shmem_test_some(...) SHMEM_C11_PLAIN(SHMEM_C11_SEL_P2P, _test_some, __VA_ARGS__)(__VA_ARGS__)
#define shmem_test_all_vector(...) SHMEM_C11_PLAIN(SHMEM_C11_SEL_P2P, _test_all_vector, __VA_ARGS__)(__VA_ARGS__)
#define shmem_test_any_vector(...) SHMEM_C11_PLAIN(SHMEM_C11_SEL_P2P, _test_any_vector, __VA_ARGS__)(__VA_ARGS__)
#define shmem_test_some_vector(...) SHMEM_C11_PLAIN(SHMEM_C11_SEL_P2P, _test_some_vector, __VA_ARGS__)(__VA_ARGS__)

#endif /* SHMEM_GENERIC_H */
