/*
 * Concurrent team splits (issue #14, Threads): two threads split two
 * different parent teams at the same moment, again and again. The new
 * teams must get different slots (signal words): teams sharing a slot see
 * each other's signal counts, so a collective on the second team returns
 * before its members arrived. Checked by running fcollects on thread 0's
 * team, then one on thread 1's team that every PE but its first member
 * enters late: that member must still receive every block. split_2d in the same way (two slots at once).
 */
#include <pthread.h>

#include "mp.h"

#define ITERS 12
#define NL 64 /* longs per block */

static int me, npes;
static shmem_team_t parent[2];
static shmem_team_t made[2][2]; /* [thread][x/y] */
static int use_2d;
static pthread_barrier_t start;
static long *src, *dst;

static void *splitter(void *arg)
{
    int k = (int)(intptr_t)arg;
    pthread_barrier_wait(&start);
    if (use_2d) {
        int xr = npes > 1 ? npes / 2 : 1;
        CHECK(shmem_team_split_2d(parent[k], xr, NULL, 0, &made[k][0], NULL,
                                  0, &made[k][1]) == 0,
              "thread %d: split_2d", k);
    } else {
        CHECK(shmem_team_split_strided(parent[k], 0, 1, npes, NULL, 0,
                                       &made[k][0]) == 0,
              "thread %d: split_strided", k);
        made[k][1] = SHMEM_TEAM_INVALID;
    }
    return NULL;
}

/* fcollect on t, entered late by every member but the first: returns
 * early, with blocks missing, when t shares its words with a team that
 * already counted signals. */
static void check_team(shmem_team_t t, int it, int late, const char *what)
{
    int n = shmem_team_n_pes(t), my = shmem_team_my_pe(t);

    for (int i = 0; i < NL; i++)
        src[i] = (long)my << 32 | (long)it << 16 | i;
    for (int i = 0; i < n * NL; i++)
        dst[i] = -1;
    if (late && my != 0)
        usleep(20000);
    CHECK(shmem_fcollectmem(t, dst, src, NL * sizeof(long)) == 0,
          "%s: fcollect", what);
    for (int p = 0; p < n; p++)
        for (int i = 0; i < NL; i++)
            CHECK(dst[p * NL + i] == ((long)p << 32 | (long)it << 16 | i),
                  "%s iteration %d: member %d word %d is %lx", what, it, p, i,
                  dst[p * NL + i]);
    shmem_team_sync(t); /* nobody refills src before all have read */
}

int main(void)
{
    int provided;

    alarm(MP_ALARM_S);
    CHECK(shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided) == 0,
          "init_thread");
    CHECK(provided == SHMEM_THREAD_MULTIPLE, "provided %d", provided);
    me = shmem_my_pe();
    npes = shmem_n_pes();
    src = shmem_malloc(NL * sizeof(long));
    dst = shmem_malloc((size_t)npes * NL * sizeof(long));
    CHECK(src && dst, "shmem_malloc");
    for (int k = 0; k < 2; k++)
        CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, npes, NULL, 0,
                                       &parent[k]) == 0,
              "parent %d", k);
    pthread_barrier_init(&start, NULL, 2);

    for (int it = 0; it < 2 * ITERS; it++) {
        pthread_t th[2];
        use_2d = it >= ITERS;
        for (int k = 0; k < 2; k++)
            CHECK(pthread_create(&th[k], NULL, splitter,
                                 (void *)(intptr_t)k) == 0,
                  "pthread_create");
        for (int k = 0; k < 2; k++)
            pthread_join(th[k], NULL);
        /* Counts advance on thread 0's teams, then thread 1's teams must
         * still wait for their members. */
        for (int a = 0; a < 2; a++)
            if (made[0][a] != SHMEM_TEAM_INVALID)
                for (int b = 0; b < 2; b++)
                    check_team(made[0][a], it, 0, "thread 0's team");
        for (int a = 0; a < 2; a++)
            if (made[1][a] != SHMEM_TEAM_INVALID)
                check_team(made[1][a], it, 1,
                           use_2d ? "thread 1's split_2d" : "thread 1's split");
        for (int k = 0; k < 2; k++)
            for (int a = 0; a < 2; a++)
                shmem_team_destroy(made[k][a]);
        shmem_barrier_all();
    }

    pthread_barrier_destroy(&start);
    for (int k = 0; k < 2; k++)
        shmem_team_destroy(parent[k]);
    if (me == 0)
        printf("team_split_mt: %d PEs, %d concurrent split pairs OK\n", npes,
               2 * ITERS);
    shmem_finalize();
    return 0;
}
