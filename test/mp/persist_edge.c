/*
 * Persistent requests at the edges (issue #14), run by persist_edge.sh:
 *
 *   run        alltoallmem and fcollectmem requests started and waited a
 *              few times, data checked, freed (the script runs it with a
 *              queue too small for one instance: init must refuse it);
 *   unstarted  requests created and never started, not freed: finalize
 *              releases them;
 *   started    requests started and neither waited for nor freed:
 *              finalize completes and releases them;
 *   late       a persistent fcollect whose last PE starts 14 s after the
 *              others: the wait still completes with the data, and under
 *              SHMEM_DEBUG=1 the waiting PEs say after 10 s what they
 *              wait for (the script looks for that line);
 *   churn      rounds of as many live requests as the team slots allow,
 *              all freed at the end of each round: queues come back for
 *              the next round, so no round runs out of engine queues;
 *   device     shmemx_req_device on a backend without GPU kernels (cpu):
 *              the job fails with one line naming the routine.
 */
#include <shmem.h>
#include <shmemx.h>
#include <shmemx_cuda.h> /* shmemx_req_device (plain C part) */

#include "mp.h"

#include <unistd.h>

#define NB 256 /* bytes per block */

static int me, npes;

static void fill(unsigned char *src, int who, int it, int blocks)
{
    for (int b = 0; b < blocks; b++)
        for (int k = 0; k < NB; k++)
            src[b * NB + k] = (unsigned char)(who * 17 + b * 5 + it * 3 + k);
}

/* dest after an alltoall (a2a) or fcollect of fill()'d sources. */
static void check(const unsigned char *dest, int it, int a2a,
                  const char *what)
{
    for (int p = 0; p < npes; p++)
        for (int k = 0; k < NB; k++) {
            unsigned char w =
                (unsigned char)(p * 17 + (a2a ? me : 0) * 5 + it * 3 + k);
            CHECK(dest[p * NB + k] == w, "%s iteration %d: byte %d from PE "
                  "%d is %u, expected %u", what, it, k, p, dest[p * NB + k],
                  w);
        }
}

static void mode_run(void)
{
    unsigned char *src = shmem_malloc((size_t)npes * NB);
    unsigned char *dst = shmem_malloc((size_t)npes * NB);
    unsigned char *fsrc = shmem_malloc(NB);
    unsigned char *fdst = shmem_malloc((size_t)npes * NB);
    shmemx_req_t a, f;

    CHECK(src && dst && fsrc && fdst, "shmem_malloc");
    CHECK(shmemx_alltoallmem_init(SHMEM_TEAM_WORLD, dst, src, NB, &a) == 0,
          "alltoallmem_init");
    CHECK(shmemx_fcollectmem_init(SHMEM_TEAM_WORLD, fdst, fsrc, NB, &f) == 0,
          "fcollectmem_init");
    for (int it = 0; it < 5; it++) {
        fill(src, me, it, npes);
        fill(fsrc, me, it, 1);
        CHECK(shmemx_req_start(a) == 0, "start a2a");
        CHECK(shmemx_req_start(f) == 0, "start fcollect");
        CHECK(shmemx_req_wait(a) == 0, "wait a2a");
        CHECK(shmemx_req_wait(f) == 0, "wait fcollect");
        check(dst, it, 1, "alltoallmem");
        check(fdst, it, 0, "fcollectmem");
    }
    shmemx_req_free(a);
    shmemx_req_free(f);
}

static void mode_late(void)
{
    unsigned char *fsrc = shmem_malloc(NB);
    unsigned char *fdst = shmem_malloc((size_t)npes * NB);
    shmemx_req_t f;

    CHECK(fsrc && fdst, "shmem_malloc");
    CHECK(shmemx_fcollectmem_init(SHMEM_TEAM_WORLD, fdst, fsrc, NB, &f) == 0,
          "fcollectmem_init");
    fill(fsrc, me, 0, 1);
    if (me == npes - 1 && npes > 1)
        sleep(14); /* 4 s past the 10 s stall line: a loaded machine may
                    * start the others late */
    CHECK(shmemx_req_start(f) == 0, "start fcollect");
    CHECK(shmemx_req_wait(f) == 0, "wait fcollect");
    check(fdst, 0, 0, "fcollectmem");
    shmemx_req_free(f);
}

/* Left to finalize: started (and not waited for) or not. */
static void mode_leave(int start)
{
    unsigned char *src = shmem_malloc((size_t)npes * NB);
    unsigned char *dst = shmem_malloc((size_t)npes * NB);
    shmemx_req_t r[3];

    CHECK(src && dst, "shmem_malloc");
    fill(src, me, 0, npes);
    CHECK(shmemx_alltoallmem_init(SHMEM_TEAM_WORLD, dst, src, NB, &r[0]) == 0,
          "alltoallmem_init");
    CHECK(shmemx_fcollectmem_init(SHMEM_TEAM_WORLD, dst, src, NB, &r[1]) == 0,
          "fcollectmem_init");
    CHECK(shmemx_alltoallmem_init(SHMEM_TEAM_WORLD, dst, src, NB, &r[2]) == 0,
          "alltoallmem_init");
    if (start) {
        /* One request waited for, so the data path is known good. */
        CHECK(shmemx_req_start(r[0]) == 0, "start");
        CHECK(shmemx_req_wait(r[0]) == 0, "wait");
        check(dst, 0, 1, "alltoallmem");
        CHECK(shmemx_req_start(r[0]) == 0, "start again");
        CHECK(shmemx_req_start(r[2]) == 0, "start");
    }
    /* Not freed: shmem_finalize (from main) releases them. */
}

static void mode_churn(void)
{
    enum { MAXR = 64, ROUNDS = 4 };
    unsigned char *src = shmem_malloc((size_t)npes * NB);
    unsigned char *dst = shmem_malloc((size_t)npes * NB);
    shmemx_req_t r[MAXR];

    CHECK(src && dst, "shmem_malloc");
    for (int round = 0; round < ROUNDS; round++) {
        int n = 0;
        /* Until the team slots run out (init returns nonzero alike on
         * every PE). */
        while (n < MAXR &&
               shmemx_alltoallmem_init(SHMEM_TEAM_WORLD, dst, src, NB,
                                       &r[n]) == 0)
            n++;
        CHECK(npes == 1 || n >= 16, "round %d: only %d requests", round, n);
        /* The newest one runs, so its queues are known to work. */
        fill(src, me, round, npes);
        CHECK(shmemx_req_start(r[n - 1]) == 0, "start");
        CHECK(shmemx_req_wait(r[n - 1]) == 0, "wait");
        check(dst, round, 1, "alltoallmem (churn)");
        for (int i = 0; i < n; i++)
            shmemx_req_free(r[i]);
        shmem_barrier_all();
    }
}

static void mode_device(void)
{
    static long src[4], dst[4 * 64];
    shmemx_req_t r;
    CHECK(npes <= 64, "at most 64 PEs");
    CHECK(shmemx_fcollectmem_init(SHMEM_TEAM_WORLD, dst, src, sizeof(src),
                                  &r) == 0,
          "fcollectmem_init");
    shmemx_dev_req_t *h = shmemx_req_device(r);
    MP_FAIL("shmemx_req_device returned %p on a backend without kernels",
            (void *)h);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "run";

    mp_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    if (!strcmp(mode, "run"))
        mode_run();
    else if (!strcmp(mode, "unstarted"))
        mode_leave(0);
    else if (!strcmp(mode, "started"))
        mode_leave(1);
    else if (!strcmp(mode, "churn"))
        mode_churn();
    else if (!strcmp(mode, "late"))
        mode_late();
    else if (!strcmp(mode, "device"))
        mode_device();
    else
        MP_FAIL("unknown mode %s", mode);
    if (me == 0)
        printf("persist_edge %s: %d PEs OK\n", mode, npes);
    shmem_finalize();
    return 0;
}
