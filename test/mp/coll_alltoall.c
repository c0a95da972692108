/*
 * alltoall and alltoalls on SHMEM_TEAM_WORLD, a strided team, a 2-D split
 * and a team of one PE: every byte checked, 1 byte to 1 MiB per peer (odd
 * sizes included), every RMA type, strides on both sides, and back-to-back
 * calls without barriers while one PE sleeps at random.
 *
 * Built once per variant: MP_ALGO names SHMEM_ALLTOALL_ALGORITHM, set
 * before shmem_init (coll_alltoall = auto; the eager variant also sets
 * SHMEM_COLL_EAGER_MAX (MP_EAGER_MAX) so that every size the eager rings
 * take goes eager).
 */
#include <shmem.h>

#include "mp.h"

static int me, npes;

/* The byte member s sends member d at offset o in round r. */
static unsigned char a2a_byte(int s, int d, size_t o, int r)
{
    return mp_byte(s * 31 + d, o, r);
}

static void alltoall_team(shmem_team_t team, unsigned char *dest,
                          unsigned char *src, size_t n, int r)
{
    int tme = shmem_team_my_pe(team), tn = shmem_team_n_pes(team);
    for (int d = 0; d < tn; d++)
        for (size_t o = 0; o < n; o++)
            src[(size_t)d * n + o] = a2a_byte(tme, d, o, r);
    memset(dest, 0xee, n * (size_t)tn + 1);
    CHECK(shmem_alltoallmem(team, dest, src, n) == 0, "alltoallmem rc");
    for (int s = 0; s < tn; s++)
        for (size_t o = 0; o < n; o++)
            if (dest[(size_t)s * n + o] != a2a_byte(s, tme, o, r))
                MP_FAIL("alltoall %zu B: from member %d byte %zu: %u, want "
                        "%u (round %d)", n, s, o, dest[(size_t)s * n + o],
                        a2a_byte(s, tme, o, r), r);
    CHECK(dest[n * (size_t)tn] == 0xee, "alltoall wrote past its end");
}

/* alltoalls of nelems uint32 with strides dst, sst. */
static void alltoalls_team(shmem_team_t team, uint32_t *dest, uint32_t *src,
                           ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int r)
{
    int tme = shmem_team_my_pe(team), tn = shmem_team_n_pes(team);
    size_t dn = (size_t)dst * nelems * (size_t)tn;
    for (size_t i = 0; i < (size_t)sst * nelems * (size_t)tn; i++)
        src[i] = 0xdead0000u + (uint32_t)i;
    for (int d = 0; d < tn; d++)
        for (size_t k = 0; k < nelems; k++)
            src[((size_t)d * nelems + k) * (size_t)sst] =
                (uint32_t)(tme << 24 | d << 16) + (uint32_t)(k + (size_t)r);
    for (size_t i = 0; i < dn; i++)
        dest[i] = 0xeeeeeeeeu;
    CHECK(shmem_uint32_alltoalls(team, dest, src, dst, sst, nelems) == 0,
          "alltoalls rc");
    for (size_t i = 0; i < dn; i++) {
        size_t blk = i / ((size_t)dst * nelems), in = i % ((size_t)dst * nelems);
        uint32_t want = in % (size_t)dst
                            ? 0xeeeeeeeeu
                            : (uint32_t)((int)blk << 24 | tme << 16) +
                                  (uint32_t)(in / (size_t)dst + (size_t)r);
        if (dest[i] != want)
            MP_FAIL("alltoalls dst %td sst %td nelems %zu: word %zu: %08x, "
                    "want %08x", dst, sst, nelems, i, dest[i], want);
    }
}

#define TYPED(T, N)                                                            \
    {                                                                          \
        T *d = shmem_malloc(sizeof(T) * 3 * (size_t)npes * 2);                 \
        T *s = shmem_malloc(sizeof(T) * 3 * (size_t)npes * 2);                 \
        CHECK(d && s, "malloc " #N);                                           \
        for (int i = 0; i < 3 * npes; i++)                                     \
            s[i] = (T)(me * 16 + i + 1);                                       \
        CHECK(shmem_##N##_alltoall(SHMEM_TEAM_WORLD, d, s, 3) == 0,            \
              #N "_alltoall rc");                                              \
        for (int j = 0; j < 3 * npes; j++)                                     \
            CHECK(d[j] == (T)((j / 3) * 16 + me * 3 + j % 3 + 1),              \
                  #N "_alltoall elem %d", j);                                  \
        for (int i = 0; i < 3 * npes * 2; i++)                                 \
            s[i] = (T)(me * 16 + i / 2 + 1);                                   \
        memset(d, 0, sizeof(T) * 3 * (size_t)npes);                            \
        CHECK(shmem_##N##_alltoalls(SHMEM_TEAM_WORLD, d, s, 1, 2, 3) == 0,     \
              #N "_alltoalls rc");                                             \
        for (int j = 0; j < 3 * npes; j++)                                     \
            CHECK(d[j] == (T)((j / 3) * 16 + me * 3 + j % 3 + 1),              \
                  #N "_alltoalls elem %d", j);                                 \
        shmem_free(d);                                                         \
        shmem_free(s);                                                         \
    }

int main(void)
{
#ifdef MP_ALGO
    setenv("SHMEM_ALLTOALL_ALGORITHM", MP_ALGO, 1);
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
    unsigned char *src = shmem_malloc(maxn * (size_t)npes + 64);
    CHECK(dest && src, "malloc");

    int r = 0;
    for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++)
        alltoall_team(SHMEM_TEAM_WORLD, dest, src, sizes[k], ++r);
    static const ptrdiff_t strides[][2] = {{1, 1}, {2, 1}, {1, 3}, {3, 2}};
    for (int s = 0; s < 4; s++)
        for (size_t n = 1; n < 3000; n = n * 7 + 1)
            alltoalls_team(SHMEM_TEAM_WORLD, (uint32_t *)dest,
                           (uint32_t *)src, strides[s][0], strides[s][1], n,
                           ++r);
    /* Elements large enough for one engine command each. */
    alltoalls_team(SHMEM_TEAM_WORLD, (uint32_t *)dest, (uint32_t *)src, 2, 3,
                   1000, ++r);
    SHMEM_TYPES_RMA(TYPED)

    uint64_t seed = 0xa11 + (uint64_t)me;
    for (int i = 0; i < 300; i++) {
        size_t n = 1 + (size_t)(i * 53) % 2000;
        if (me == 0 && mp_rand(&seed) % 8 == 0)
            usleep((useconds_t)(mp_rand(&seed) % 300));
        alltoall_team(SHMEM_TEAM_WORLD, dest, src, n, ++r);
    }

    shmem_team_t even = SHMEM_TEAM_INVALID, row = SHMEM_TEAM_INVALID,
                 col = SHMEM_TEAM_INVALID, one = SHMEM_TEAM_INVALID,
                 all = SHMEM_TEAM_INVALID;
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (npes + 1) / 2,
                                   NULL, 0, &even) == 0, "split even");
    CHECK(shmem_team_split_2d(SHMEM_TEAM_WORLD, 2, NULL, 0, &row, NULL, 0,
                              &col) == 0, "split 2d");
    CHECK(shmem_team_split_2d(SHMEM_TEAM_WORLD, 1, NULL, 0, &one, NULL, 0,
                              &all) == 0, "split 2d of one");
    for (int i = 0; i < 20; i++) {
        size_t n = sizes[i % 7];
        if (even != SHMEM_TEAM_INVALID)
            alltoall_team(even, dest, src, n, ++r);
        else
            r++;
        alltoall_team(row, dest, src, n, ++r);
        alltoall_team(col, dest, src, n, ++r);
        alltoalls_team(col, (uint32_t *)dest, (uint32_t *)src, 2, 1, n / 4 + 1,
                       ++r);
        alltoall_team(one, dest, src, n, ++r);
        alltoalls_team(one, (uint32_t *)dest, (uint32_t *)src, 1, 2, 9, ++r);
    }
    shmem_team_destroy(even);
    shmem_team_destroy(row);
    shmem_team_destroy(col);
    shmem_team_destroy(one);
    shmem_team_destroy(all);
    shmem_barrier_all();
    if (me == 0)
        printf("coll_alltoall (%s): %d PEs OK\n",
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
