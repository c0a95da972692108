/*
 * Reductions: every operator on every type of the team tables, with exact
 * expected values (small integers, so float sums are exact), on
 * SHMEM_TEAM_WORLD, a reversed team and the odd PEs, out of place and in
 * place (dest == source), 1..3000 elements, back to back with no barrier
 * in between; complex sums and products with an imaginary part; and the
 * deprecated shmem_TYPENAME_OP_to_all on several active sets.
 */
#include <complex.h>

#include "mp.h"

#define MAXN 3000

static char *src, *dst;
static int me, npes;

/* Contribution of team member p to element i, per operator class. */
#define VAL_BIT(T, p, i)                                                       \
    ((T)((1u << (((p) + (i)) % 6)) | (((i) % 3) ? 64u : 0u)))
#define VAL_ORD(T, p, i) ((T)((T)((((p)*5 + (i)*3) % 17)) - (T)8))
#define VAL_SUM(T, p, i) ((T)(((p) + (i)) % 4 + 1))
#define VAL_PROD(T, p, i) ((T)(((p) + (i)) % 3 + 1))

#define C_AND(a, b) ((a) & (b))
#define C_OR(a, b) ((a) | (b))
#define C_XOR(a, b) ((a) ^ (b))
#define C_MAX(a, b) ((a) > (b) ? (a) : (b))
#define C_MIN(a, b) ((a) < (b) ? (a) : (b))
#define C_SUM(a, b) ((a) + (b))
#define C_PROD(a, b) ((a) * (b))

/* One body: fill, reduce (CALL), check against a fold of every member's
 * contribution. */
#define RED_BODY(T, N, OP, VAL, COMB, CALL)                                    \
    {                                                                          \
        T *s = (T *)src, *d = inplace ? (T *)src : (T *)dst;                   \
        for (size_t i = 0; i < nel; i++)                                       \
            s[i] = VAL(T, p, i);                                               \
        if (!inplace)                                                          \
            for (size_t i = 0; i <= nel; i++)                                  \
                d[i] = (T)99;                                                  \
        CALL;                                                                  \
        for (size_t i = 0; i < nel; i++) {                                     \
            T e = VAL(T, 0, i);                                                \
            for (int q = 1; q < n; q++)                                        \
                e = COMB(e, VAL(T, q, i));                                     \
            if (d[i] != e)                                                     \
                MP_FAIL("%s %s %zu elements%s: elem %zu is %g, expected %g",  \
                        #N, #OP, nel, inplace ? " in place" : "", i,          \
                        (double)d[i], (double)e);                              \
        }                                                                      \
        if (!inplace)                                                          \
            CHECK(d[nel] == (T)99, "%s %s wrote past the end", #N, #OP);      \
    }

#define TEAM_CALL(N, OP)                                                       \
    CHECK(shmem_##N##_##OP##_reduce(t, d, s, nel) == 0, #N "_" #OP "_reduce")

#define RED_BIT(T, N)                                                          \
    RED_BODY(T, N, and, VAL_BIT, C_AND, TEAM_CALL(N, and))                     \
    RED_BODY(T, N, or, VAL_BIT, C_OR, TEAM_CALL(N, or))                        \
    RED_BODY(T, N, xor, VAL_BIT, C_XOR, TEAM_CALL(N, xor))
#define RED_ORD(T, N)                                                          \
    RED_BODY(T, N, max, VAL_ORD, C_MAX, TEAM_CALL(N, max))                     \
    RED_BODY(T, N, min, VAL_ORD, C_MIN, TEAM_CALL(N, min))
#define RED_ARITH(T, N)                                                        \
    RED_BODY(T, N, sum, VAL_SUM, C_SUM, TEAM_CALL(N, sum))                     \
    RED_BODY(T, N, prod, VAL_PROD, C_PROD, TEAM_CALL(N, prod))

static void team_all(shmem_team_t t, size_t nel, int inplace)
{
    if (t == SHMEM_TEAM_INVALID)
        return;
    int n = shmem_team_n_pes(t), p = shmem_team_my_pe(t);
    SHMEM_TYPES_REDUCE_BIT(RED_BIT)
    SHMEM_TYPES_REDUCE_MINMAX(RED_ORD)
    SHMEM_TYPES_REDUCE_ARITH(RED_ARITH)
}

/* Deprecated active-set forms: the set (start, 2^log, size); p is this
 * PE's index in it. */
static long psync[SHMEM_REDUCE_SYNC_SIZE];
static char pwrk[MAXN * 32];

#define ASET_CALL(T, N, OP)                                                    \
    shmem_##N##_##OP##_to_all(d, s, (int)nel, start, logs, n, (T *)pwrk, psync)
#define TOALL_BIT(T, N)                                                        \
    RED_BODY(T, N, and, VAL_BIT, C_AND, ASET_CALL(T, N, and))                  \
    RED_BODY(T, N, or, VAL_BIT, C_OR, ASET_CALL(T, N, or))                     \
    RED_BODY(T, N, xor, VAL_BIT, C_XOR, ASET_CALL(T, N, xor))
#define TOALL_ORD(T, N)                                                        \
    RED_BODY(T, N, max, VAL_ORD, C_MAX, ASET_CALL(T, N, max))                  \
    RED_BODY(T, N, min, VAL_ORD, C_MIN, ASET_CALL(T, N, min))
#define TOALL_ARITH(T, N)                                                      \
    RED_BODY(T, N, sum, VAL_SUM, C_SUM, ASET_CALL(T, N, sum))                  \
    RED_BODY(T, N, prod, VAL_PROD, C_PROD, ASET_CALL(T, N, prod))

static void aset_all(int start, int logs, int n, size_t nel, int inplace)
{
    int st = 1 << logs;
    if (me < start || (me - start) % st || (me - start) / st >= n)
        return;
    int p = (me - start) / st;
    SHMEM_TYPES_TO_ALL_BIT(TOALL_BIT)
    SHMEM_TYPES_TO_ALL_MINMAX(TOALL_ORD)
    SHMEM_TYPES_TO_ALL_ARITH(TOALL_ARITH)
}

static void complex_case(shmem_team_t t)
{
    int n = shmem_team_n_pes(t), p = shmem_team_my_pe(t);
    double _Complex *s = (double _Complex *)src, *d = (double _Complex *)dst;
    float _Complex *fs = (float _Complex *)(src + 4096);
    float _Complex *fd = (float _Complex *)(dst + 4096);
    s[0] = (double)(p + 1) + (double)(2 * p) * I;
    s[1] = 1.0 + 1.0 * I;
    fs[0] = (float)(p + 1) - (float)p * I;
    shmem_complexd_sum_reduce(t, d, s, 2);
    shmem_complexf_sum_reduce(t, fd, fs, 1);
    double _Complex es = 0;
    float _Complex efs = 0;
    for (int q = 0; q < n; q++) {
        es += (double)(q + 1) + (double)(2 * q) * I;
        efs += (float)(q + 1) - (float)q * I;
    }
    CHECK(d[0] == es, "complexd sum (%g%+gi), expected (%g%+gi)", creal(d[0]),
          cimag(d[0]), creal(es), cimag(es));
    CHECK(fd[0] == efs, "complexf sum");
    shmem_complexd_prod_reduce(t, d, s, 2);
    double _Complex ep = 1, ep1 = 1;
    for (int q = 0; q < n; q++) {
        ep *= (double)(q + 1) + (double)(2 * q) * I;
        ep1 *= 1.0 + 1.0 * I;
    }
    CHECK(d[0] == ep && d[1] == ep1, "complexd prod (%g%+gi), expected "
          "(%g%+gi)", creal(d[0]), cimag(d[0]), creal(ep), cimag(ep));
}

int main(void)
{
    static const size_t sizes[] = {1, 17, MAXN};
    mp_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    src = shmem_malloc(MAXN * 32 + 64);
    dst = shmem_malloc(MAXN * 32 + 64);
    CHECK(src && dst, "shmem_malloc");
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++)
        psync[i] = SHMEM_SYNC_VALUE;

    shmem_team_t rev, odd = SHMEM_TEAM_INVALID;
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, npes - 1, -1, npes, NULL,
                                   0, &rev) == 0, "reversed");
    if (npes > 1)
        CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 1, 2, npes / 2, NULL,
                                       0, &odd) == 0, "odds");
    for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        team_all(SHMEM_TEAM_WORLD, sizes[k], 0);
        team_all(SHMEM_TEAM_WORLD, sizes[k], 1);
    }
    team_all(rev, 17, 0);
    team_all(rev, 5, 1);
    team_all(odd, 17, 1);
    team_all(odd, MAXN, 0);
    complex_case(SHMEM_TEAM_WORLD);
    complex_case(rev);
    shmem_barrier_all();

    /* Active sets: the world, the evens, the odds, every 4th PE from 1,
     * one PE. */
    aset_all(0, 0, npes, 17, 0);
    aset_all(0, 0, npes, MAXN, 1);
    aset_all(0, 1, (npes + 1) / 2, 17, 0);
    if (npes > 1)
        aset_all(1, 1, npes / 2, 9, 1);
    aset_all(npes - 1, 0, 1, 4, 0);
    if (npes >= 2)
        aset_all(1, 2, (npes - 1 + 3) / 4, 3, 0);
    shmem_barrier_all();
    shmem_team_destroy(odd);
    shmem_team_destroy(rev);
    shmem_free(dst);
    shmem_free(src);
    shmem_finalize();
    return 0;
}
