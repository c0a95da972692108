/*
 * C11 type-generic names: every generic routine is called for every base C
 * type of its table (this file does not compile if one is missing or
 * resolves to the wrong signature), with and without a context, and the
 * calls run: each moves exactly sizeof(T) * n bytes (a wrong TYPENAME
 * would move another amount) and the AMOs give exact results.
 */
#include "mp.h"

#if !defined(__STDC_VERSION__) || __STDC_VERSION__ < 201112L
#error "c11_generic needs C11"
#endif
#ifndef shmem_put
#error "shmem.h did not define the C11 generic names"
#endif

#define N 3

/* CHECK without the stringified condition: the conditions here are long
 * once the generic macros are written out. */
#define OK(cond, ...)                                                          \
    do {                                                                       \
        if (!(cond))                                                           \
            MP_FAIL(__VA_ARGS__);                                              \
    } while (0)
static unsigned char buf[4096]; /* symmetric */
static unsigned char loc[4096];

static int me, npes, right;

/* Elements [0, n) of buf as T are 7, the next ones 0. */
#define EXPECT(T, n, what)                                                     \
    do {                                                                       \
        const T *b_ = (const T *)buf;                                          \
        for (size_t i_ = 0; i_ < (size_t)(n) + 4; i_++)                        \
            OK(b_[i_] == (i_ < (size_t)(n) ? (T)7 : (T)0),                     \
                  "%s: element %zu is %g", what, i_, (double)b_[i_]);          \
    } while (0)

static void reset(void)
{
    shmem_barrier_all();
    memset(buf, 0, sizeof(buf));
    shmem_barrier_all();
}

#define RMA_CASE(T, NAME)                                                      \
    do {                                                                       \
        T src[N * 2], dst[N * 2];                                              \
        for (int i_ = 0; i_ < N * 2; i_++)                                     \
            src[i_] = (T)7;                                                    \
        reset();                                                               \
        shmem_put((T *)buf, src, N, right);                                    \
        shmem_barrier_all();                                                   \
        EXPECT(T, N, "shmem_put(" NAME ")");                                   \
        reset();                                                               \
        shmem_put(SHMEM_CTX_DEFAULT, (T *)buf, src, N, right);                 \
        shmem_put_nbi((T *)buf + N, src, N, right);                            \
        shmem_put_nbi(SHMEM_CTX_DEFAULT, (T *)buf + N, src, N, right);         \
        shmem_quiet();                                                         \
        shmem_barrier_all();                                                   \
        EXPECT(T, 2 * N, "shmem_put ctx/nbi(" NAME ")");                       \
        reset();                                                               \
        shmem_p((T *)buf, src[0], right);                                      \
        shmem_p(SHMEM_CTX_DEFAULT, (T *)buf + 1, src[0], right);               \
        shmem_barrier_all();                                                   \
        EXPECT(T, 2, "shmem_p(" NAME ")");                                     \
        memset(dst, 0, sizeof(dst));                                           \
        shmem_get(dst, (const T *)buf, 1, me);                                 \
        shmem_get(SHMEM_CTX_DEFAULT, dst + 1, (T *)buf, 1, me);                \
        shmem_get_nbi(dst + 2, (T *)buf, 1, me);                               \
        shmem_get_nbi(SHMEM_CTX_DEFAULT, dst + 3, (T *)buf, 1, me);            \
        shmem_quiet();                                                         \
        T g1 = shmem_g((const T *)buf, me);                                    \
        T g2 = shmem_g(SHMEM_CTX_DEFAULT, (T *)buf, me);                       \
        OK(dst[0] == 7 && dst[1] == 7 && dst[2] == 7 && dst[3] == 7 &&         \
                  g1 == 7 && g2 == 7, "get/g(" NAME ")");                      \
        reset();                                                               \
        shmem_iput((T *)buf, src, 2, 1, N, right);                             \
        shmem_iput(SHMEM_CTX_DEFAULT, (T *)buf + 1, src, 2, 1, N, right);      \
        shmem_barrier_all();                                                   \
        EXPECT(T, 2 * N, "shmem_iput(" NAME ")");                              \
        shmem_iget(dst, (T *)buf, 1, 1, N, me);                                \
        shmem_iget(SHMEM_CTX_DEFAULT, dst, (T *)buf, 1, 1, N, me);             \
        reset();                                                               \
        shmem_ibput((T *)buf, src, 2, 1, 1, N, right);                         \
        shmem_ibput(SHMEM_CTX_DEFAULT, (T *)buf + 1, src, 2, 1, 1, N, right);  \
        shmem_barrier_all();                                                   \
        EXPECT(T, 2 * N, "shmem_ibput(" NAME ")");                             \
        shmem_ibget(dst, (T *)buf, 1, 1, 1, N, me);                            \
        shmem_ibget(SHMEM_CTX_DEFAULT, dst, (T *)buf, 1, 1, 1, N, me);         \
        reset();                                                               \
        uint64_t *sig = (uint64_t *)(buf + 2048);                              \
        shmem_put_signal((T *)buf, src, N, sig, 1, SHMEM_SIGNAL_ADD, right);   \
        shmem_put_signal(SHMEM_CTX_DEFAULT, (T *)buf, src, N, sig, 1,          \
                         SHMEM_SIGNAL_ADD, right);                             \
        shmem_put_signal_nbi((T *)buf, src, N, sig, 1, SHMEM_SIGNAL_ADD,       \
                             right);                                           \
        shmem_put_signal_nbi(SHMEM_CTX_DEFAULT, (T *)buf, src, N, sig, 1,      \
                             SHMEM_SIGNAL_ADD, right);                         \
        OK(shmem_signal_wait_until(sig, SHMEM_CMP_EQ, 4) == 4,                 \
              "put_signal(" NAME ")");                                         \
        *sig = 0;                                                              \
        shmem_barrier_all();                                                   \
        EXPECT(T, N, "shmem_put_signal(" NAME ")");                            \
    } while (0)

/* Standard AMO generics on PE 0's word w (type T), from every PE. */
#define AMO_STD_CASE(T, NAME)                                                  \
    do {                                                                       \
        T *w = (T *)buf, f;                                                    \
        reset();                                                               \
        shmem_atomic_inc(w, 0);                                                \
        shmem_atomic_inc(SHMEM_CTX_DEFAULT, w, 0);                             \
        shmem_atomic_add(w, (T)2, 0);                                          \
        shmem_atomic_add(SHMEM_CTX_DEFAULT, w, (T)2, 0);                       \
        (void)shmem_atomic_fetch_inc(w, 0);                                    \
        (void)shmem_atomic_fetch_inc(SHMEM_CTX_DEFAULT, w, 0);                 \
        (void)shmem_atomic_fetch_add(w, (T)1, 0);                              \
        (void)shmem_atomic_fetch_add(SHMEM_CTX_DEFAULT, w, (T)1, 0);           \
        shmem_atomic_fetch_inc_nbi(&f, w, 0);                                  \
        shmem_atomic_fetch_inc_nbi(SHMEM_CTX_DEFAULT, &f, w, 0);               \
        shmem_atomic_fetch_add_nbi(&f, w, (T)1, 0);                            \
        shmem_atomic_fetch_add_nbi(SHMEM_CTX_DEFAULT, &f, w, (T)1, 0);         \
        shmem_quiet();                                                         \
        shmem_barrier_all();                                                   \
        if (me == 0)                                                           \
            OK(*w == (T)(14 * npes), "AMO generics(" NAME "): %lld",           \
                  (long long)*w);                                              \
        shmem_barrier_all();                                                   \
        if (me == 0) {                                                         \
            OK(shmem_atomic_compare_swap(w, (T)(14 * npes), (T)1, 0) ==        \
                      (T)(14 * npes), "compare_swap(" NAME ")");               \
            OK(shmem_atomic_compare_swap(SHMEM_CTX_DEFAULT, w, (T)1, (T)2,     \
                                            0) == 1, "ctx compare_swap");      \
            shmem_atomic_compare_swap_nbi(&f, w, (T)2, (T)3, 0);               \
            shmem_atomic_compare_swap_nbi(SHMEM_CTX_DEFAULT, &f, w, (T)3,      \
                                          (T)4, 0);                            \
            shmem_quiet();                                                     \
            OK(*w == 4, "compare_swap_nbi(" NAME ")");                         \
            /* deprecated 1.4 generic names */                                 \
            shmem_inc(w, 0);                                                   \
            shmem_add(w, (T)2, 0);                                             \
            OK(shmem_finc(w, 0) == 7 && shmem_fadd(w, (T)1, 0) == 8 &&         \
                      shmem_cswap(w, (T)9, (T)0, 0) == 9 && *w == 0,           \
                  "deprecated generics(" NAME ")");                            \
        }                                                                      \
    } while (0)

#define AMO_EXT_CASE(T, NAME)                                                  \
    do {                                                                       \
        T *w = (T *)buf, f;                                                    \
        reset();                                                               \
        shmem_atomic_set(w, (T)5, me);                                         \
        shmem_atomic_set(SHMEM_CTX_DEFAULT, w, (T)6, me);                      \
        OK(shmem_atomic_fetch(w, me) == (T)6 &&                                \
                  shmem_atomic_fetch(SHMEM_CTX_DEFAULT, (const T *)w, me) == (T)6, \
              "set/fetch(" NAME ")");                                          \
        OK(shmem_atomic_swap(w, (T)7, me) == (T)6 &&                           \
                  shmem_atomic_swap(SHMEM_CTX_DEFAULT, w, (T)8, me) == (T)7,   \
              "swap(" NAME ")");                                               \
        shmem_atomic_fetch_nbi(&f, w, me);                                     \
        OK(f == (T)8, "fetch_nbi(" NAME ")");                                  \
        shmem_atomic_fetch_nbi(SHMEM_CTX_DEFAULT, &f, w, me);                  \
        shmem_atomic_swap_nbi(&f, w, (T)9, me);                                \
        shmem_atomic_swap_nbi(SHMEM_CTX_DEFAULT, &f, w, (T)10, me);            \
        shmem_quiet();                                                         \
        OK(f == (T)9 && *w == (T)10, "swap_nbi(" NAME ")");                    \
        shmem_set(w, (T)11, me);                                               \
        OK(shmem_fetch(w, me) == (T)11 && shmem_swap(w, (T)1, me) == (T)11,    \
              "deprecated set/fetch/swap(" NAME ")");                          \
    } while (0)

#define AMO_BIT_CASE(T, NAME)                                                  \
    do {                                                                       \
        T *w = (T *)buf, f;                                                    \
        reset();                                                               \
        shmem_atomic_or(w, (T)0xf0, me);                                       \
        shmem_atomic_or(SHMEM_CTX_DEFAULT, w, (T)0x0f, me);                    \
        shmem_atomic_and(w, (T)0x3c, me);                                      \
        shmem_atomic_and(SHMEM_CTX_DEFAULT, w, (T)0xfc, me);                   \
        shmem_atomic_xor(w, (T)0x01, me);                                      \
        shmem_atomic_xor(SHMEM_CTX_DEFAULT, w, (T)0x02, me);                   \
        OK(*w == (T)0x3f, "and/or/xor(" NAME "): 0x%llx",                      \
              (unsigned long long)*w);                                         \
        OK(shmem_atomic_fetch_and(w, (T)0x0f, me) == (T)0x3f &&                \
                  shmem_atomic_fetch_or(w, (T)0x30, me) == (T)0x0f &&          \
                  shmem_atomic_fetch_xor(w, (T)0x3f, me) == (T)0x3f &&         \
                  shmem_atomic_fetch_and(SHMEM_CTX_DEFAULT, w, (T)0, me) == 0 && \
                  shmem_atomic_fetch_or(SHMEM_CTX_DEFAULT, w, (T)1, me) == 0 && \
                  shmem_atomic_fetch_xor(SHMEM_CTX_DEFAULT, w, (T)1, me) == 1, \
              "fetch and/or/xor(" NAME ")");                                   \
        shmem_atomic_fetch_or_nbi(&f, w, (T)4, me);                            \
        shmem_atomic_fetch_and_nbi(&f, w, (T)4, me);                           \
        shmem_atomic_fetch_xor_nbi(&f, w, (T)4, me);                           \
        shmem_atomic_fetch_or_nbi(SHMEM_CTX_DEFAULT, &f, w, (T)8, me);         \
        shmem_atomic_fetch_and_nbi(SHMEM_CTX_DEFAULT, &f, w, (T)8, me);        \
        shmem_atomic_fetch_xor_nbi(SHMEM_CTX_DEFAULT, &f, w, (T)8, me);        \
        shmem_quiet();                                                         \
        OK(f == (T)8 && *w == 0, "fetch_*_nbi(" NAME ")");                     \
    } while (0)

/* Both entries satisfy: an _any form may return either (it searches
 * round robin, shmem_test(3)). */
#define P2P_CASE(T, NAME)                                                      \
    do {                                                                       \
        T *iv = (T *)buf;                                                      \
        const T cv[2] = {1, 1};                                                \
        size_t idx[2];                                                         \
        int st[2] = {0, 0};                                                    \
        reset();                                                               \
        iv[0] = iv[1] = 1;                                                     \
        shmem_wait_until(iv, SHMEM_CMP_EQ, (T)1);                              \
        shmem_wait_until_all(iv, 2, st, SHMEM_CMP_EQ, (T)1);                   \
        OK(shmem_wait_until_any(iv, 2, st, SHMEM_CMP_EQ, (T)1) < 2 &&          \
                  shmem_wait_until_some(iv, 2, idx, st, SHMEM_CMP_EQ, (T)1) == 2, \
              "wait_until any/some(" NAME ")");                                \
        shmem_wait_until_all_vector(iv, 2, st, SHMEM_CMP_EQ, cv);              \
        OK(shmem_wait_until_any_vector(iv, 2, st, SHMEM_CMP_EQ, cv) < 2 &&     \
                  shmem_wait_until_some_vector(iv, 2, idx, st, SHMEM_CMP_EQ,   \
                                               cv) == 2 &&                     \
                  shmem_test(iv, SHMEM_CMP_EQ, (T)1) &&                        \
                  !shmem_test(iv, SHMEM_CMP_NE, (T)1) &&                       \
                  shmem_test_all(iv, 2, st, SHMEM_CMP_EQ, (T)1) &&             \
                  shmem_test_any(iv, 2, st, SHMEM_CMP_EQ, (T)1) < 2 &&         \
                  shmem_test_some(iv, 2, idx, st, SHMEM_CMP_EQ, (T)1) == 2 &&  \
                  shmem_test_all_vector(iv, 2, st, SHMEM_CMP_EQ, cv) &&        \
                  shmem_test_any_vector(iv, 2, st, SHMEM_CMP_EQ, cv) < 2 &&    \
                  shmem_test_some_vector(iv, 2, idx, st, SHMEM_CMP_EQ, cv) == 2, \
              "wait/test generics(" NAME ")");                                 \
    } while (0)

int main(void)
{
    mp_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    right = (me + 1) % npes;
    (void)loc;

    RMA_CASE(char, "char");
    RMA_CASE(signed char, "signed char");
    RMA_CASE(short, "short");
    RMA_CASE(int, "int");
    RMA_CASE(long, "long");
    RMA_CASE(long long, "long long");
    RMA_CASE(unsigned char, "unsigned char");
    RMA_CASE(unsigned short, "unsigned short");
    RMA_CASE(unsigned int, "unsigned int");
    RMA_CASE(unsigned long, "unsigned long");
    RMA_CASE(unsigned long long, "unsigned long long");
    RMA_CASE(float, "float");
    RMA_CASE(double, "double");
    RMA_CASE(long double, "long double");
    /* fixed-width typedefs resolve through their base types */
    RMA_CASE(int8_t, "int8_t");
    RMA_CASE(uint16_t, "uint16_t");
    RMA_CASE(int32_t, "int32_t");
    RMA_CASE(uint64_t, "uint64_t");
    RMA_CASE(size_t, "size_t");
    RMA_CASE(ptrdiff_t, "ptrdiff_t");

    AMO_STD_CASE(int, "int");
    AMO_STD_CASE(long, "long");
    AMO_STD_CASE(long long, "long long");
    AMO_STD_CASE(unsigned int, "unsigned int");
    AMO_STD_CASE(unsigned long, "unsigned long");
    AMO_STD_CASE(unsigned long long, "unsigned long long");
    AMO_STD_CASE(int64_t, "int64_t");
    AMO_STD_CASE(size_t, "size_t");

    AMO_EXT_CASE(int, "int");
    AMO_EXT_CASE(long, "long");
    AMO_EXT_CASE(long long, "long long");
    AMO_EXT_CASE(unsigned int, "unsigned int");
    AMO_EXT_CASE(unsigned long, "unsigned long");
    AMO_EXT_CASE(unsigned long long, "unsigned long long");
    AMO_EXT_CASE(float, "float");
    AMO_EXT_CASE(double, "double");

    AMO_BIT_CASE(unsigned int, "unsigned int");
    AMO_BIT_CASE(unsigned long, "unsigned long");
    AMO_BIT_CASE(unsigned long long, "unsigned long long");
    AMO_BIT_CASE(int32_t, "int32_t");
    AMO_BIT_CASE(int64_t, "int64_t");
    AMO_BIT_CASE(uint32_t, "uint32_t");
    AMO_BIT_CASE(uint64_t, "uint64_t");

    P2P_CASE(short, "short");
    P2P_CASE(unsigned short, "unsigned short");
    P2P_CASE(int, "int");
    P2P_CASE(long, "long");
    P2P_CASE(long long, "long long");
    P2P_CASE(unsigned int, "unsigned int");
    P2P_CASE(unsigned long, "unsigned long");
    P2P_CASE(unsigned long long, "unsigned long long");

    /* the deprecated untyped shmem_wait_until(long *, int, long) */
    long *lw = (long *)buf;
    reset();
    *lw = 3;
    shmem_wait_until(lw, _SHMEM_CMP_GE, 3L);

    /* untyped signal generics */
    uint64_t *sig = (uint64_t *)buf;
    reset();
    shmem_signal_add(sig, 2, me);
    shmem_signal_add(SHMEM_CTX_DEFAULT, sig, 3, me);
    shmem_signal_set(SHMEM_CTX_DEFAULT, sig + 1, 9, me);
    shmem_signal_set(sig + 2, 8, me);
    OK(sig[0] == 5 && sig[1] == 9 && sig[2] == 8, "signal generics");

    shmem_barrier_all();
    if (me == 0)
        printf("c11_generic: %d PEs OK\n", npes);
    shmem_finalize();
    return 0;
}
