/*
 * Re-initialization (OpenSHMEM 1.5 shmem_init: "the library must not be
 * finalized until after the last call to shmem_finalize and may be
 * re-initialized with a subsequent call to an initialization routine").
 * Three rounds of shmem_init .. shmem_finalize in one process, each with
 * a nested init/finalize pair, puts to a global and to the heap, an
 * fcollect, a team split and an AMO; the job must end with status 0.
 * Before the fix the second shmem_init failed under shmem_launcher
 * ("cannot connect to .../boot.sock").
 */
#include "mp.h"

static long ring[4];

static int was_pe = -1;

static void round_of(int round)
{
    int init = -1;

    if (round == 0)
        mp_init();
    else
        shmem_init();
    CHECK(shmem_query_initialized(&init) == 0 && init == 1,
          "round %d: query_initialized after init: %d", round, init);
    /* A nested pair does not finalize the library. */
    shmem_init();
    shmem_finalize();
    CHECK(shmem_query_initialized(&init) == 0 && init == 1,
          "round %d: nested finalize ended the library", round);

    int me = shmem_my_pe(), npes = shmem_n_pes();
    CHECK(npes >= 1 && me >= 0 && me < npes, "round %d: my_pe %d n_pes %d",
          round, me, npes);
    was_pe = me;
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;

    long *heap = shmem_malloc(64 * sizeof(long));
    long *all = shmem_malloc((size_t)npes * sizeof(long));
    long *mine = shmem_malloc(sizeof(long));
    long *ctr = shmem_calloc(1, sizeof(long));
    CHECK(heap && all && mine && ctr, "round %d: shmem_malloc", round);
    for (int i = 0; i < 64; i++)
        heap[i] = -1;
    shmem_barrier_all();

    long v = 1000L * round + me;
    shmem_long_p(&ring[round], v, right);
    long row[64];
    for (int i = 0; i < 64; i++)
        row[i] = v * 100 + i;
    shmem_long_put(heap, row, 64, right);
    shmem_long_atomic_add(ctr, round + 1, 0);
    *mine = v;
    shmem_barrier_all();
    CHECK(ring[round] == 1000L * round + left, "round %d: ring %ld, want %ld",
          round, ring[round], 1000L * round + left);
    for (int i = 0; i < 64; i++)
        CHECK(heap[i] == (1000L * round + left) * 100 + i,
              "round %d: heap[%d] = %ld", round, i, heap[i]);
    if (me == 0)
        CHECK(*ctr == (long)npes * (round + 1), "round %d: counter %ld",
              round, *ctr);

    shmem_long_fcollect(SHMEM_TEAM_WORLD, all, mine, 1);
    for (int pe = 0; pe < npes; pe++)
        CHECK(all[pe] == 1000L * round + pe, "round %d: fcollect[%d] = %ld",
              round, pe, all[pe]);

    shmem_team_t even;
    int ok = shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2,
                                      (npes + 1) / 2, NULL, 0, &even);
    CHECK(ok == 0, "round %d: team split", round);
    if (even != SHMEM_TEAM_INVALID) {
        CHECK(shmem_team_my_pe(even) == me / 2, "round %d: team rank %d",
              round, shmem_team_my_pe(even));
        shmem_team_sync(even);
        shmem_team_destroy(even);
    }

    shmem_free(ctr);
    shmem_free(mine);
    shmem_free(all);
    shmem_free(heap);
    shmem_finalize();
    CHECK(shmem_query_initialized(&init) == 0 && init == 0,
          "round %d: query_initialized after the last finalize: %d", round,
          init);
    CHECK(shmem_my_pe() < 0, "round %d: my_pe after finalize", round);
}

int main(void)
{
    for (int round = 0; round < 3; round++)
        round_of(round);
    if (was_pe == 0)
        printf("reinit: 3 rounds passed\n");
    return 0;
}
