/*
 * Persistent collectives (shmemx_fcollectmem_init / shmemx_alltoallmem_init,
 * shmemx_req_start/wait/free): each request started 1,000 times with new
 * data checked every time, plain collectives of the same team interleaved
 * (their signals must not mix with the instances posted ahead), requests
 * freed with instances still posted, several requests alive at once, and a
 * team of one PE. MP_ALGO forces both variants (b2b, pcpy), else auto.
 */
#include <shmem.h>
#include <shmemx.h>

#include "mp.h"

static int me, npes;

static void fill_ag(uint64_t *src, size_t n, int who, int it)
{
    for (size_t i = 0; i < n; i++)
        src[i] = (uint64_t)who << 48 | (uint64_t)it << 20 | i;
}

static void check_ag(const uint64_t *dest, size_t n, int tn, int it,
                     const char *what)
{
    for (int p = 0; p < tn; p++)
        for (size_t i = 0; i < n; i++)
            if (dest[(size_t)p * n + i] !=
                ((uint64_t)p << 48 | (uint64_t)it << 20 | i))
                MP_FAIL("%s iteration %d: member %d word %zu = %llx", what,
                        it, p, i,
                        (unsigned long long)dest[(size_t)p * n + i]);
}

int main(void)
{
#ifdef MP_ALGO
    setenv("SHMEM_FCOLLECT_ALGORITHM", MP_ALGO, 1);
    setenv("SHMEM_ALLTOALL_ALGORITHM", MP_ALGO, 1);
#endif
    mp_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    const size_t n = 37, big = 1 << 15; /* words per PE */
    uint64_t *dest = shmem_malloc(big * 8 * (size_t)npes);
    uint64_t *src = shmem_malloc(big * 8 * (size_t)npes);
    uint64_t *d2 = shmem_malloc(n * 8 * (size_t)npes);
    uint64_t *s2 = shmem_malloc(n * 8 * (size_t)npes);
    CHECK(dest && src && d2 && s2, "malloc");

    /* fcollect, 1,000 starts, a plain fcollect of the team every 100. */
    shmemx_req_t ag, a2a;
    CHECK(shmemx_fcollectmem_init(SHMEM_TEAM_WORLD, dest, src, n * 8, &ag) ==
              0, "fcollectmem_init");
    CHECK(shmemx_alltoallmem_init(SHMEM_TEAM_WORLD, d2, s2, 8 * 3, &a2a) == 0,
          "alltoallmem_init");
    uint64_t seed = 77 + (uint64_t)me;
    /* A tenth across the network: each start/wait is then a network
     * collective of several round trips (~0.2 ms on loopback tcp). */
    const int starts = mp_network() ? 100 : 1000;
    for (int it = 1; it <= starts; it++) {
        fill_ag(src, n, me, it);
        if (me == npes - 1 && mp_rand(&seed) % 16 == 0)
            usleep((useconds_t)(mp_rand(&seed) % 200));
        CHECK(shmemx_req_start(ag) == 0, "start");
        CHECK(shmemx_req_start(ag) != 0, "second start of an active request");
        CHECK(shmemx_req_wait(ag) == 0, "wait");
        check_ag(dest, n, npes, it, "persistent fcollect");
        /* The alltoall request, alive at the same time. */
        for (int d = 0; d < npes; d++)
            for (int k = 0; k < 3; k++)
                s2[d * 3 + k] = (uint64_t)(me * 1000 + d * 10 + k + it);
        CHECK(shmemx_req_start(a2a) == 0, "start a2a");
        CHECK(shmemx_req_wait(a2a) == 0, "wait a2a");
        for (int s = 0; s < npes; s++)
            for (int k = 0; k < 3; k++)
                CHECK(d2[s * 3 + k] == (uint64_t)(s * 1000 + me * 10 + k + it),
                      "persistent alltoall iteration %d from %d elem %d", it,
                      s, k);
        if (it % 100 == 0) {
            fill_ag(src, n, me, it + 5000);
            shmem_fcollectmem(SHMEM_TEAM_WORLD, dest, src, n * 8);
            check_ag(dest, n, npes, it + 5000, "plain fcollect between");
        }
    }
    CHECK(shmemx_req_free(ag) == 0, "free");
    CHECK(shmemx_req_free(a2a) == 0, "free a2a");

    /* Large blocks, a strided team, and freeing requests never started
     * or freed with instances posted. */
    shmem_team_t even = SHMEM_TEAM_INVALID;
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (npes + 1) / 2,
                                   NULL, 0, &even) == 0, "split");
    if (even != SHMEM_TEAM_INVALID) {
        int tn = shmem_team_n_pes(even), tme = shmem_team_my_pe(even);
        shmemx_req_t r1, r2;
        CHECK(shmemx_fcollectmem_init(even, dest, src, big * 8, &r1) == 0,
              "init big");
        CHECK(shmemx_fcollectmem_init(even, d2, s2, 8, &r2) == 0,
              "init unused");
        for (int it = 1; it <= 50; it++) {
            fill_ag(src, big, tme, it);
            shmemx_req_start(r1);
            shmemx_req_wait(r1);
            check_ag(dest, big, tn, it, "persistent fcollect 256 KiB");
        }
        shmemx_req_free(r2);
        shmemx_req_free(r1);
        shmem_team_destroy(even);
    }
    shmem_team_t one, all;
    CHECK(shmem_team_split_2d(SHMEM_TEAM_WORLD, 1, NULL, 0, &one, NULL, 0,
                              &all) == 0, "split of one");
    shmemx_req_t r1;
    CHECK(shmemx_fcollectmem_init(one, dest, src, n * 8, &r1) == 0,
          "init one");
    for (int it = 1; it <= 10; it++) {
        fill_ag(src, n, 0, it);
        shmemx_req_start(r1);
        shmemx_req_wait(r1);
        check_ag(dest, n, 1, it, "team of one");
    }
    shmemx_req_free(r1);
    shmem_team_destroy(one);
    shmem_team_destroy(all);
    shmem_barrier_all();
    if (me == 0)
        printf("coll_persist: %d PEs OK\n", npes);
    shmem_finalize();
    return 0;
}
