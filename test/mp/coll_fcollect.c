/*
 * fcollect and collect (AllGather) on SHMEM_TEAM_WORLD, a strided team,
 * both teams of a 2-D split and a team of one PE: every byte checked, sizes
 * from 1 byte to 1 MiB per PE (odd ones included), every RMA type, the
 * in-place form, collect with different counts (zero included), and back-
 * to-back calls without barriers while one PE sleeps at random.
 *
 * Built once per variant: MP_ALGO names SHMEM_FCOLLECT_ALGORITHM, set
 * before shmem_init (coll_fcollect = auto; the eager variant also sets
 * SHMEM_COLL_EAGER_MAX (MP_EAGER_MAX) so that every size the eager rings
 * take goes eager).
 */
#include <shmem.h>

#include "mp.h"

static int me, npes;

/* Block of member i as fcollect/collect leaves it. */
static void fill(unsigned char *p, size_t n, int who, int r)
{
    for (size_t o = 0; o < n; o++)
        p[o] = mp_byte(who, o, r);
}

static void check_block(const unsigned char *p, size_t n, int who, int r,
                        const char *what)
{
    for (size_t o = 0; o < n; o++)
        if (p[o] != mp_byte(who, o, r))
            MP_FAIL("%s: block of member %d byte %zu of %zu: %u, want %u "
                    "(round %d)", what, who, o, n, p[o],
                    mp_byte(who, o, r), r);
}

/* fcollectmem of n bytes per PE over team; r makes the data distinct. */
static void fcollect_team(shmem_team_t team, unsigned char *dest,
                          unsigned char *src, size_t n, int r, int inplace)
{
    int tme = shmem_team_my_pe(team), tn = shmem_team_n_pes(team);
    unsigned char *s = inplace ? dest + (size_t)tme * n : src;
    memset(dest, 0xee, n * (size_t)tn);
    fill(s, n, tme, r);
    CHECK(shmem_fcollectmem(team, dest, s, n) == 0, "fcollectmem rc");
    for (int i = 0; i < tn; i++)
        check_block(dest + (size_t)i * n, n, i, r,
                    inplace ? "fcollect in place" : "fcollect");
}

/* collect with a count that depends on (member, round), zero included. */
static size_t ccount(int who, int r, size_t unit)
{
    return (size_t)((who * 7 + r) % 4) * unit + (size_t)(who % 2);
}

static void collect_team(shmem_team_t team, unsigned char *dest,
                         unsigned char *src, size_t unit, int r)
{
    int tme = shmem_team_my_pe(team), tn = shmem_team_n_pes(team);
    size_t mine = ccount(tme, r, unit), off = 0, total = 0;
    for (int i = 0; i < tn; i++)
        total += ccount(i, r, unit);
    memset(dest, 0xee, total + 1);
    fill(src, mine, tme, r);
    CHECK(shmem_collectmem(team, dest, src, mine) == 0, "collectmem rc");
    for (int i = 0; i < tn; i++) {
        size_t c = ccount(i, r, unit);
        check_block(dest + off, c, i, r, "collect");
        off += c;
    }
    CHECK(dest[total] == 0xee, "collect wrote past its end (%zu)", total);
}

#define TYPED(T, N)                                                            \
    {                                                                          \
        T *d = shmem_malloc(sizeof(T) * 5 * (size_t)npes);                     \
        T *s = shmem_malloc(sizeof(T) * 5);                                    \
        CHECK(d && s, "malloc " #N);                                           \
        for (int i = 0; i < 5; i++)                                            \
            s[i] = (T)(me * 10 + i + 1);                                       \
        CHECK(shmem_##N##_fcollect(SHMEM_TEAM_WORLD, d, s, 5) == 0,            \
              #N "_fcollect rc");                                              \
        for (int j = 0; j < 5 * npes; j++)                                     \
            CHECK(d[j] == (T)((j / 5) * 10 + j % 5 + 1),                       \
                  #N "_fcollect elem %d", j);                                  \
        memset(d, 0, sizeof(T) * 5 * (size_t)npes);                            \
        CHECK(shmem_##N##_collect(SHMEM_TEAM_WORLD, d, s, (size_t)(me % 3)) == \
                  0,                                                           \
              #N "_collect rc");                                               \
        int at = 0;                                                            \
        for (int p = 0; p < npes; p++)                                         \
            for (int i = 0; i < p % 3; i++, at++)                              \
                CHECK(d[at] == (T)(p * 10 + i + 1),                            \
                      #N "_collect elem %d", at);                              \
        shmem_free(d);                                                         \
        shmem_free(s);                                                         \
    }

int main(void)
{
#ifdef MP_ALGO
    setenv("SHMEM_FCOLLECT_ALGORITHM", MP_ALGO, 1);
#endif
#ifdef MP_EAGER_MAX
    setenv("SHMEM_COLL_EAGER_MAX", MP_EAGER_MAX, 1);
#endif
    mp_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();

    static const size_t sizes[] = {1, 3, 8, 17, 1000, 4097, 65539, 1 << 20};
    const size_t maxn = 1 << 20;
    unsigned char *dest = shmem_malloc(maxn * (size_t)npes + 64);
    unsigned char *src = shmem_malloc(maxn + 64);
    CHECK(dest && src, "malloc");

    int r = 0;
    for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        fcollect_team(SHMEM_TEAM_WORLD, dest, src, sizes[k], ++r, 0);
        fcollect_team(SHMEM_TEAM_WORLD, dest, src, sizes[k], ++r, 1);
        collect_team(SHMEM_TEAM_WORLD, dest, src, sizes[k] / 4 + 1, ++r);
    }
    SHMEM_TYPES_RMA(TYPED)

    /* Back to back, no barrier: a fast PE starts the next call while a
     * slow one still reads the last. */
    uint64_t seed = 0x5eed + (uint64_t)me;
    for (int i = 0; i < 300; i++) {
        size_t n = 1 + (size_t)(i * 37) % 3000;
        if (me == npes - 1 && mp_rand(&seed) % 8 == 0)
            usleep((useconds_t)(mp_rand(&seed) % 300));
        fcollect_team(SHMEM_TEAM_WORLD, dest, src, n, ++r, 0);
        if (i % 3 == 0)
            collect_team(SHMEM_TEAM_WORLD, dest, src, n / 3, ++r);
    }

    /* Teams: even PEs; a 2-D split into rows of 2; a team of one. */
    shmem_team_t even = SHMEM_TEAM_INVALID, row = SHMEM_TEAM_INVALID,
                 col = SHMEM_TEAM_INVALID, one = SHMEM_TEAM_INVALID,
                 all = SHMEM_TEAM_INVALID;
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (npes + 1) / 2,
                                   NULL, 0, &even) == 0, "split even");
    CHECK(shmem_team_split_2d(SHMEM_TEAM_WORLD, 2, NULL, 0, &row, NULL, 0,
                              &col) == 0, "split 2d");
    /* xrange 1: every PE is a row (team) of its own. */
    CHECK(shmem_team_split_2d(SHMEM_TEAM_WORLD, 1, NULL, 0, &one, NULL, 0,
                              &all) == 0, "split 2d of one");
    CHECK(shmem_team_n_pes(one) == 1, "team of one has %d PEs",
          shmem_team_n_pes(one));
    for (int i = 0; i < 20; i++) {
        size_t n = sizes[i % 7];
        if (even != SHMEM_TEAM_INVALID) {
            fcollect_team(even, dest, src, n, ++r, i & 1);
            collect_team(even, dest, src, n, ++r);
        } else {
            r += 2;
        }
        fcollect_team(row, dest, src, n, ++r, 0);
        fcollect_team(col, dest, src, n, ++r, i & 1);
        collect_team(col, dest, src, n, ++r);
        shmem_barrier_all();
    }
    shmem_team_destroy(even);
    shmem_team_destroy(row);
    shmem_team_destroy(col);
    fcollect_team(one, dest, src, 100, ++r, 0);
    fcollect_team(one, dest, src, 100, ++r, 1);
    collect_team(one, dest, src, 50, ++r);
    fcollect_team(all, dest, src, 333, ++r, 0);
    shmem_team_destroy(one);
    shmem_team_destroy(all);
    shmem_barrier_all();
    if (me == 0)
        printf("coll_fcollect (%s): %d PEs OK\n",
#ifdef MP_ALGO
               MP_ALGO,
#else
               "auto",
#endif
               npes);
    shmem_free(dest);
    shmem_free(src);
    shmem_finalize();
    return 0;
}
