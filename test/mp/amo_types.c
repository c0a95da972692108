/*
 * Every atomic on every type of its table, blocking and nbi, with and
 * without a context, under contention from every PE, with exact totals:
 *  - add family: every PE does K fetch_add(1) (alternating with fetch_inc,
 *    add, inc, and their ctx / nbi forms) on every PE's counter; each
 *    counter ends at npes * K, and the values fetched from PE 0's counter
 *    are distinct (gathered on PE 0: a permutation of 0 .. npes*K-1);
 *  - compare_swap: one winner per race, then a CAS-loop counter;
 *  - fetch/set/swap (float and double included): a swap chain whose
 *    fetched values plus the final value are exactly the initial value and
 *    every PE's id;
 *  - bitwise: each PE ORs its bit, XORs it twice, ANDs it away.
 */
#include "mp.h"

#define K 200

static int me, npes;

static void check_perm(const long *v, long n, const char *what)
{
    char *seen = calloc((size_t)n, 1);
    CHECK(seen, "calloc");
    for (long i = 0; i < n; i++) {
        CHECK(v[i] >= 0 && v[i] < n, "%s: fetched value %ld out of range", what,
              v[i]);
        CHECK(!seen[v[i]], "%s: fetched value %ld twice", what, v[i]);
        seen[v[i]] = 1;
    }
    free(seen);
}

#define TEST_STD(T, N)                                                         \
    static void std_##N(void)                                                  \
    {                                                                          \
        T *ctr = shmem_calloc(2, sizeof(T));                                   \
        long *got = shmem_calloc((size_t)(npes * K), sizeof(long));            \
        shmem_ctx_t ctx;                                                       \
        CHECK(ctr && got, "shmem_calloc");                                     \
        CHECK(shmem_ctx_create(0, &ctx) == 0, "ctx_create");                   \
        shmem_barrier_all();                                                   \
        /* ctr[0]: K increments from every PE on every PE; the ones on PE 0    \
         * are fetching, their results must be distinct. */                    \
        for (int i = 0; i < K; i++) {                                          \
            for (int k = 0; k < npes; k++) {                                   \
                int pe = (me + k) % npes;                                      \
                T f = 0;                                                       \
                if (pe == 0) {                                                 \
                    switch (i % 4) {                                           \
                    case 0: f = shmem_##N##_atomic_fetch_add(&ctr[0], 1, 0); break; \
                    case 1: f = shmem_ctx_##N##_atomic_fetch_inc(ctx, &ctr[0], 0); break; \
                    case 2: shmem_##N##_atomic_fetch_inc_nbi(&f, &ctr[0], 0); break; \
                    default: shmem_ctx_##N##_atomic_fetch_add_nbi(ctx, &f, &ctr[0], (T)1, 0); \
                    }                                                          \
                    long fv = (long)f;                                         \
                    shmem_long_p(&got[me * K + i], fv, 0);                     \
                } else {                                                       \
                    switch (i % 4) {                                           \
                    case 0: shmem_##N##_atomic_add(&ctr[0], 1, pe); break;     \
                    case 1: shmem_##N##_atomic_inc(&ctr[0], pe); break;        \
                    case 2: shmem_ctx_##N##_atomic_add(ctx, &ctr[0], 1, pe); break; \
                    default: shmem_ctx_##N##_atomic_inc(ctx, &ctr[0], pe);     \
                    }                                                          \
                }                                                              \
            }                                                                  \
        }                                                                      \
        shmem_ctx_quiet(ctx);                                                  \
        shmem_barrier_all();                                                   \
        CHECK(ctr[0] == (T)(npes * K), #N ": counter %lld, expected %d",       \
              (long long)ctr[0], npes * K);                                    \
        if (me == 0)                                                           \
            check_perm(got, (long)npes * K, #N " fetch_add on PE 0");          \
        shmem_barrier_all();                                                   \
        /* compare_swap race: exactly one PE turns 0 into its id + 1. */       \
        T old = shmem_##N##_atomic_compare_swap(&ctr[1], 0, (T)(me + 1), 0);   \
        long won = old == 0;                                                   \
        shmem_barrier_all();                                                   \
        long *wins = shmem_calloc(1, sizeof(long));                            \
        CHECK(wins, "shmem_calloc");                                           \
        shmem_barrier_all();                                                   \
        if (won)                                                               \
            shmem_long_atomic_add(wins, 1, 0);                                 \
        shmem_barrier_all();                                                   \
        if (me == 0) {                                                         \
            CHECK(*wins == 1, #N ": %ld compare_swap winners", *wins);         \
            CHECK(ctr[1] >= 1 && ctr[1] <= (T)npes, #N ": cswap value %lld",   \
                  (long long)ctr[1]);                                          \
        }                                                                      \
        shmem_barrier_all();                                                   \
        /* A counter built from compare_swap alone (nbi and ctx forms). */     \
        if (me == 0)                                                           \
            ctr[1] = 0;                                                        \
        shmem_barrier_all();                                                   \
        for (int i = 0; i < K / 4; i++) {                                      \
            T cur = shmem_##N##_atomic_fetch(&ctr[1], 0), prev;                \
            for (;;) {                                                         \
                if (i & 1)                                                     \
                    shmem_ctx_##N##_atomic_compare_swap_nbi(ctx, &prev, &ctr[1], \
                                                           cur, cur + 1, 0);   \
                else                                                           \
                    prev = shmem_ctx_##N##_atomic_compare_swap(ctx, &ctr[1],   \
                                                              cur, cur + 1, 0); \
                if (prev == cur)                                               \
                    break;                                                     \
                cur = prev;                                                    \
            }                                                                  \
        }                                                                      \
        shmem_barrier_all();                                                   \
        CHECK(shmem_##N##_atomic_fetch(&ctr[1], 0) == (T)(npes * (K / 4)),     \
              #N ": CAS counter %lld", (long long)ctr[1]);                     \
        shmem_barrier_all();                                                   \
        shmem_ctx_destroy(ctx);                                                \
        shmem_free(wins);                                                      \
        shmem_free(got);                                                       \
        shmem_free(ctr);                                                       \
    }
SHMEM_TYPES_AMO_STD(TEST_STD)

/* Swap chain: PE 0's word starts at -1 (as T); every PE swaps in its id
 * (as T, ids are exact in float too) K/8 times... once per round with the
 * value me + round * npes; the fetched values and the final value are the
 * initial value and every value swapped in, each exactly once. */
#define TEST_EXT(T, N)                                                         \
    static void ext_##N(void)                                                  \
    {                                                                          \
        const int R = 8;                                                       \
        T *w = shmem_calloc(1, sizeof(T));                                     \
        long *got = shmem_calloc((size_t)(npes * R), sizeof(long));            \
        CHECK(w && got, "shmem_calloc");                                       \
        if (me == 0)                                                           \
            shmem_##N##_atomic_set(w, (T)(npes * R), 0);                       \
        shmem_barrier_all();                                                   \
        T x0 = shmem_##N##_atomic_fetch(w, 0);                                 \
        CHECK(x0 == (T)(npes * R), #N " set/fetch: %g", (double)x0);           \
        shmem_barrier_all();                                                   \
        for (int r = 0; r < R; r++) {                                          \
            T v = (T)(me + r * npes), f;                                       \
            if (r & 1)                                                         \
                f = shmem_ctx_##N##_atomic_swap(SHMEM_CTX_DEFAULT, w, v, 0);   \
            else                                                               \
                shmem_##N##_atomic_swap_nbi(&f, w, v, 0);                      \
            shmem_long_p(&got[me * R + r], (long)f, 0);                        \
        }                                                                      \
        shmem_barrier_all();                                                   \
        if (me == 0) {                                                         \
            /* replace the fetched initial value by the final one */          \
            T fin;                                                             \
            shmem_##N##_atomic_fetch_nbi(&fin, w, 0);                          \
            shmem_quiet();                                                     \
            int found = 0;                                                     \
            for (int i = 0; i < npes * R; i++)                                 \
                if (got[i] == npes * R) {                                      \
                    got[i] = (long)fin;                                        \
                    found++;                                                   \
                }                                                              \
            CHECK(found == 1, #N ": initial value fetched %d times", found);   \
            check_perm(got, (long)npes * R, #N " swap chain");                 \
        }                                                                      \
        /* set from every PE in turn on every PE, ctx form */                  \
        for (int k = 0; k < npes; k++) {                                       \
            if (k == me)                                                       \
                for (int pe = 0; pe < npes; pe++)                              \
                    shmem_ctx_##N##_atomic_set(SHMEM_CTX_DEFAULT, w,           \
                                               (T)(k + 0.5), pe);              \
            shmem_barrier_all();                                               \
            T x = shmem_ctx_##N##_atomic_fetch(SHMEM_CTX_DEFAULT, w, me);      \
            CHECK(x == (T)(k + 0.5), #N ": set by PE %d read %g", k,           \
                  (double)x);                                                  \
            shmem_barrier_all();                                               \
        }                                                                      \
        shmem_free(got);                                                       \
        shmem_free(w);                                                         \
    }
SHMEM_TYPES_AMO_EXT(TEST_EXT)

#define TEST_BIT(T, N)                                                         \
    static void bit_##N(void)                                                  \
    {                                                                          \
        T *w = shmem_calloc(1, sizeof(T));                                     \
        const T all = (T)(((T)1 << npes) - 1), bit = (T)((T)1 << me);          \
        CHECK(w, "shmem_calloc");                                              \
        shmem_barrier_all();                                                   \
        for (int pe = 0; pe < npes; pe++) {                                    \
            if (pe & 1)                                                        \
                shmem_##N##_atomic_or(w, bit, pe);                             \
            else {                                                             \
                T f = shmem_ctx_##N##_atomic_fetch_or(SHMEM_CTX_DEFAULT, w,    \
                                                      bit, pe);                \
                CHECK(!(f & bit), #N ": fetch_or saw my bit already");         \
            }                                                                  \
        }                                                                      \
        shmem_barrier_all();                                                   \
        CHECK(*w == all, #N ": or gave 0x%llx", (unsigned long long)*w);       \
        shmem_barrier_all();                                                   \
        /* xor twice: back to all; high bits through fetch_xor_nbi */          \
        for (int pe = 0; pe < npes; pe++) {                                    \
            T f;                                                               \
            shmem_##N##_atomic_xor(w, bit, pe);                                \
            shmem_##N##_atomic_fetch_xor_nbi(&f, w, bit, pe);                  \
            CHECK(!(f & bit), #N ": fetch_xor_nbi saw my bit after one xor");  \
            shmem_ctx_##N##_atomic_xor(SHMEM_CTX_DEFAULT, w,                   \
                                       (T)((uint64_t)1 << (8 * sizeof(T) - 1)), pe);  \
        }                                                                      \
        shmem_barrier_all();                                                   \
        T hi = (npes & 1) ? (T)((uint64_t)1 << (8 * sizeof(T) - 1)) : 0;              \
        CHECK(*w == (T)(all | hi), #N ": xor gave 0x%llx",                     \
              (unsigned long long)*w);                                         \
        shmem_barrier_all();                                                   \
        for (int pe = 0; pe < npes; pe++) {                                    \
            T f;                                                               \
            if (pe & 1) {                                                      \
                f = shmem_##N##_atomic_fetch_and(w, (T)~bit, pe);              \
            } else {                                                           \
                shmem_ctx_##N##_atomic_fetch_and_nbi(SHMEM_CTX_DEFAULT, &f, w, \
                                                     (T)~bit, pe);             \
                shmem_ctx_##N##_atomic_and(SHMEM_CTX_DEFAULT, w, (T)~hi, pe);  \
                shmem_##N##_atomic_fetch_or_nbi(&f, w, 0, pe);                 \
                shmem_##N##_atomic_and(w, (T)~hi, pe);                         \
            }                                                                  \
            (void)f;                                                           \
            shmem_##N##_atomic_and(w, (T)~hi, pe);                             \
        }                                                                      \
        shmem_barrier_all();                                                   \
        CHECK(*w == 0, #N ": and left 0x%llx", (unsigned long long)*w);        \
        shmem_barrier_all();                                                   \
        shmem_free(w);                                                         \
    }
SHMEM_TYPES_AMO_BIT(TEST_BIT)

int main(void)
{
    mp_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
#define RUN_STD(T, N) std_##N();
    SHMEM_TYPES_AMO_STD(RUN_STD)
#define RUN_EXT(T, N) ext_##N();
    SHMEM_TYPES_AMO_EXT(RUN_EXT)
#define RUN_BIT(T, N) bit_##N();
    SHMEM_TYPES_AMO_BIT(RUN_BIT)
    if (me == 0)
        printf("amo_types: %d PEs OK\n", npes);
    shmem_finalize();
    return 0;
}
