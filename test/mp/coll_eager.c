/*
 * The eager messages of small collectives (src/coll/eager.c; issue #28):
 *
 *  - message sizes around the 56-byte lines of the receivers' rings, up to
 *    the largest eager message, for fcollect, alltoall, alltoalls (element
 *    sizes 1 to 16, and 3), broadcast and reductions: every byte checked,
 *    nothing written past dest;
 *  - broadcasts back to back from one root without a barrier, more than a
 *    ring holds (the root waits for room), while one member sleeps at
 *    random, then mixed with every other collective, roots changing (the
 *    root's pending acknowledgements are checked before its next call);
 *  - active sets of different shapes one after another (their counts are
 *    shared), and user teams destroyed and split again so that a slot is
 *    reused after eager calls (its area must start clean).
 *
 * Run with SHMEM_COLL_EAGER_MAX=64K (the ring's limit applies) so that the
 * sizes tested go eager; test/mp/run-mp.sh runs it on 1, 2 and 4 PEs.
 */
#include "mp.h"

#define MAXB 8192 /* above any eager message */
#define GUARD 64

static int me, npes;
static unsigned char *dest, *src;
static long psync[SHMEM_REDUCE_SYNC_SIZE];
static long long pwrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE + MAXB];

static void guard_set(unsigned char *p, size_t n)
{
    memset(p + n, 0xa5, GUARD);
}

static void guard_check(const unsigned char *p, size_t n, const char *what)
{
    for (size_t i = 0; i < GUARD; i++)
        if (p[n + i] != 0xa5)
            MP_FAIL("%s: byte %zu past dest's end (%zu) written", what, i, n);
}

static void fcollect_case(shmem_team_t t, size_t n, int r)
{
    int tme = shmem_team_my_pe(t), tn = shmem_team_n_pes(t);
    memset(dest, 0xee, n * (size_t)tn);
    guard_set(dest, n * (size_t)tn);
    for (size_t o = 0; o < n; o++)
        src[o] = mp_byte(tme, o, r);
    CHECK(shmem_fcollectmem(t, dest, src, n) == 0, "fcollectmem rc");
    for (int i = 0; i < tn; i++)
        for (size_t o = 0; o < n; o++)
            if (dest[(size_t)i * n + o] != mp_byte(i, o, r))
                MP_FAIL("fcollect %zu B: member %d byte %zu", n, i, o);
    guard_check(dest, n * (size_t)tn, "fcollect");
}

static void alltoall_case(shmem_team_t t, size_t n, int r)
{
    int tme = shmem_team_my_pe(t), tn = shmem_team_n_pes(t);
    memset(dest, 0xee, n * (size_t)tn);
    guard_set(dest, n * (size_t)tn);
    for (int j = 0; j < tn; j++)
        for (size_t o = 0; o < n; o++)
            src[(size_t)j * n + o] = mp_byte(tme * 64 + j, o, r);
    CHECK(shmem_alltoallmem(t, dest, src, n) == 0, "alltoallmem rc");
    for (int i = 0; i < tn; i++)
        for (size_t o = 0; o < n; o++)
            if (dest[(size_t)i * n + o] != mp_byte(i * 64 + tme, o, r))
                MP_FAIL("alltoall %zu B: from member %d byte %zu", n, i, o);
    guard_check(dest, n * (size_t)tn, "alltoall");
}

/* alltoalls of nel elements of 1, 2, 4, 8 and 16 bytes (long double),
 * strides dst 3, sst 2 elements; the elements between untouched. */
#define A2AS_TYPED(T, N)                                                       \
    static void a2as_##N(shmem_team_t t, size_t nel, int r)                    \
    {                                                                          \
        int tme = shmem_team_my_pe(t), tn = shmem_team_n_pes(t);               \
        T *d = (T *)dest, *s = (T *)src;                                       \
        const size_t dst = 3, sst = 2, span = nel * dst * (size_t)tn;          \
        for (size_t i = 0; i < span; i++)                                      \
            d[i] = (T)0x55;                                                    \
        for (int j = 0; j < tn; j++)                                           \
            for (size_t e = 0; e < nel; e++)                                   \
                s[((size_t)j * nel + e) * sst] =                               \
                    (T)mp_byte(tme * 64 + j, e, r);                            \
        CHECK(shmem_##N##_alltoalls(t, d, s, (ptrdiff_t)dst,                   \
                                    (ptrdiff_t)sst, nel) == 0,                 \
              #N "_alltoalls rc");                                             \
        for (int i = 0; i < tn; i++)                                           \
            for (size_t e = 0; e < nel; e++) {                                 \
                T want = (T)mp_byte(i * 64 + tme, e, r);                       \
                if (d[((size_t)i * nel + e) * dst] != want)                    \
                    MP_FAIL("%s_alltoalls %zu x %zu B: from member %d "        \
                            "element %zu", #N, nel, sizeof(T), i, e);          \
                for (size_t g = 1; g < dst; g++)                               \
                    if (d[((size_t)i * nel + e) * dst + g] != (T)0x55)         \
                        MP_FAIL("%s_alltoalls wrote between elements", #N);    \
            }                                                                  \
    }
A2AS_TYPED(char, char)
A2AS_TYPED(short, short)
A2AS_TYPED(int, int)
A2AS_TYPED(long, long)
A2AS_TYPED(long double, longdouble)

static void alltoalls_mem(shmem_team_t t, size_t nel, int r)
{
    int tme = shmem_team_my_pe(t), tn = shmem_team_n_pes(t);
    memset(dest, 0x55, nel * 2 * (size_t)tn);
    for (int j = 0; j < tn; j++)
        for (size_t e = 0; e < nel; e++)
            src[((size_t)j * nel + e) * 3] = mp_byte(tme * 64 + j, e, r);
    CHECK(shmem_alltoallsmem(t, dest, src, 2, 3, nel) == 0,
          "alltoallsmem rc");
    for (int i = 0; i < tn; i++)
        for (size_t e = 0; e < nel; e++)
            if (dest[((size_t)i * nel + e) * 2] != mp_byte(i * 64 + tme, e, r))
                MP_FAIL("alltoallsmem %zu: from member %d element %zu", nel,
                        i, e);
}

static void bcast_case(shmem_team_t t, size_t n, int root, int r)
{
    int tme = shmem_team_my_pe(t);
    memset(dest, 0xee, n);
    guard_set(dest, n);
    for (size_t o = 0; o < n; o++)
        src[o] = mp_byte(root, o, r);
    CHECK(shmem_broadcastmem(t, dest, src, n, root) == 0, "broadcastmem rc");
    for (size_t o = 0; o < n; o++)
        if (dest[o] != mp_byte(root, o, r))
            MP_FAIL("broadcast %zu B from %d (I am %d): byte %zu is %u, want "
                    "%u (round %d)", n, root, tme, o, dest[o],
                    mp_byte(root, o, r), r);
    guard_check(dest, n, "broadcast");
}

static void reduce_case(shmem_team_t t, size_t nel, int r)
{
    int tme = shmem_team_my_pe(t), tn = shmem_team_n_pes(t);
    long *d = (long *)dest, *s = (long *)src;
    for (size_t i = 0; i < nel; i++)
        s[i] = (long)(tme + 1) * (long)(i + (size_t)r);
    guard_set(dest, nel * sizeof(long));
    CHECK(shmem_long_sum_reduce(t, d, s, nel) == 0, "sum_reduce rc");
    long f = (long)tn * (tn + 1) / 2;
    for (size_t i = 0; i < nel; i++)
        CHECK(d[i] == f * (long)(i + (size_t)r), "sum_reduce %zu: elem %zu",
              nel, i);
    guard_check(dest, nel * sizeof(long), "sum_reduce");
    /* In place, and an exclusive scan. */
    for (size_t i = 0; i < nel; i++)
        s[i] = (long)(tme + 1);
    CHECK(shmem_long_max_reduce(t, s, s, nel) == 0, "max_reduce rc");
    for (size_t i = 0; i < nel; i++)
        CHECK(s[i] == tn, "max_reduce in place: elem %zu is %ld", i, s[i]);
    for (size_t i = 0; i < nel; i++)
        s[i] = 1;
    CHECK(shmem_long_sum_exscan(t, d, s, nel) == 0, "exscan rc");
    for (size_t i = 0; i < nel; i++)
        CHECK(d[i] == tme, "exscan: elem %zu is %ld, want %d", i, d[i], tme);
}

/* Sizes around the lines: 1, one line, two lines, ... the largest. */
static const size_t sizes[] = {1,   8,   55,  56,   57,   111,  112,
                               113, 200, 560, 1000, 1024, 1025, 3584,
                               4000, 7168};

static void all_cases(shmem_team_t t, int *r)
{
    const int tn = shmem_team_n_pes(t);
    for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        size_t n = sizes[k];
        if (n * (size_t)tn > MAXB)
            continue;
        fcollect_case(t, n, ++*r);
        alltoall_case(t, n, ++*r);
        bcast_case(t, n, (int)k % tn, ++*r);
        if (n % 8 == 0)
            reduce_case(t, n / 8, ++*r);
        if (n * 3 * (size_t)tn <= MAXB) {
            alltoalls_mem(t, n, ++*r);
            a2as_char(t, n, ++*r);
        }
        if (n * 6 * (size_t)tn <= MAXB)
            a2as_short(t, n / 2 + 1, ++*r);
        if (n * 12 * (size_t)tn <= MAXB)
            a2as_int(t, n / 4 + 1, ++*r);
        if (n * 24 * (size_t)tn <= MAXB)
            a2as_long(t, n / 8 + 1, ++*r);
        if (n * 48 * (size_t)tn <= MAXB)
            a2as_longdouble(t, n / 16 + 1, ++*r);
    }
}

int main(void)
{
    /* Every size below goes eager (up to the ring's limit). */
    setenv("SHMEM_COLL_EAGER_MAX", "64K", 0);
    mp_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++)
        psync[i] = SHMEM_SYNC_VALUE;
    dest = shmem_malloc(MAXB * 2 + GUARD);
    src = shmem_malloc(MAXB * 2 + GUARD);
    CHECK(dest && src, "malloc");
    int r = 0;
    uint64_t seed = 0xea9e5 + (uint64_t)me;

    /* 1: every size on the world team. */
    all_cases(SHMEM_TEAM_WORLD, &r);

    /* 2: the same broadcast back to back from one root (the root goes on
     * without its members while the call repeats), many more than a ring
     * holds, one member sleeping now and then; then the other members as
     * roots, then sizes changing every call. */
    for (int root = 0; root < npes; root++) {
        for (int i = 0; i < 600; i++) {
            if (me == (root + 1) % npes && mp_rand(&seed) % 64 == 0)
                usleep((useconds_t)(mp_rand(&seed) % 500));
            bcast_case(SHMEM_TEAM_WORLD, 8 + (size_t)root * 100, root, ++r);
        }
    }
    for (int i = 0; i < 300; i++) {
        if (me == npes - 1 && mp_rand(&seed) % 64 == 0)
            usleep((useconds_t)(mp_rand(&seed) % 500));
        bcast_case(SHMEM_TEAM_WORLD, 1 + (size_t)(i * 13) % 300, 0, ++r);
    }

    /* 3: broadcasts mixed with everything else, roots changing, no
     * barrier in between. */
    for (int i = 0; i < 400; i++) {
        size_t n = 1 + (size_t)(i * 29) % 500;
        if (me == npes - 1 && mp_rand(&seed) % 16 == 0)
            usleep((useconds_t)(mp_rand(&seed) % 200));
        switch (i % 7) {
        case 0:
        case 1:
            bcast_case(SHMEM_TEAM_WORLD, n, (i / 7) % npes, ++r);
            break;
        case 2:
            fcollect_case(SHMEM_TEAM_WORLD, n, ++r);
            break;
        case 3:
            alltoall_case(SHMEM_TEAM_WORLD, n / npes + 1, ++r);
            break;
        case 4:
            reduce_case(SHMEM_TEAM_WORLD, n / 8 + 1, ++r);
            break;
        case 5:
            shmem_barrier_all();
            break;
        default:
            bcast_case(SHMEM_TEAM_WORLD, n, npes - 1, ++r);
            shmem_sync_all();
        }
    }

    /* 4: active sets of several shapes in turn (shared counts). */
    for (int i = 0; i < 60; i++) {
        int log = i % 2, size = log ? (npes + 1) / 2 : npes;
        long *d = (long *)dest, *s = (long *)src;
        if ((me % (1 << log)) != 0)
            continue;
        const int root = i % size, mine = me >> log;
        for (int k = 0; k < 8; k++)
            s[k] = (long)(i * 100 + k + mine);
        shmem_broadcast64(d, s, 8, root, 0, log, size, psync);
        if (mine != root)
            for (int k = 0; k < 8; k++)
                CHECK(d[k] == (long)(i * 100 + k + root),
                      "aset broadcast %d elem %d", i, k);
        shmem_fcollect64(d, s, 8, 0, log, size, psync);
        for (int p = 0; p < size; p++)
            for (int k = 0; k < 8; k++)
                CHECK(d[p * 8 + k] == (long)(i * 100 + k + p),
                      "aset fcollect %d member %d elem %d", i, p, k);
        shmem_long_sum_to_all(d, s, 8, 0, log, size, (long *)pwrk, psync);
        for (int k = 0; k < 8; k++)
            CHECK(d[k] == (long)size * (i * 100 + k) +
                              (long)size * (size - 1) / 2,
                  "aset sum_to_all %d elem %d", i, k);
    }
    shmem_barrier_all();

    /* 5: teams split, used eagerly and destroyed again: the slot comes
     * back with a clean area. */
    for (int i = 0; i < 12; i++) {
        shmem_team_t t;
        int start = i % npes, size = npes - start;
        CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, start, 1, size, NULL,
                                       0, &t) == 0, "split %d", i);
        if (t != SHMEM_TEAM_INVALID) {
            for (int k = 0; k < 5 + i; k++) {
                fcollect_case(t, 1 + (size_t)k * 40, ++r);
                bcast_case(t, 1 + (size_t)k * 7, k % size, ++r);
            }
            reduce_case(t, 3, ++r);
            shmem_team_destroy(t);
        } else {
            r += 2 * (5 + i) + 1;
        }
        shmem_barrier_all();
    }

    if (me == 0)
        printf("coll_eager: %d PEs OK\n", npes);
    shmem_free(dest);
    shmem_free(src);
    shmem_finalize();
    return 0;
}
