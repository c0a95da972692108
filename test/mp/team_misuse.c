/*
 * Team and collective misuse, one per mode (argv[1]); team_misuse.sh checks
 * that each fails the job with one line naming the routine and the value.
 */
#include "mp.h"

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "ok";
    static long psync[SHMEM_BARRIER_SYNC_SIZE];
    static int buf[4];

    mp_init();
    int npes = shmem_n_pes();
    if (!strcmp(mode, "sync_invalid"))
        shmem_team_sync(SHMEM_TEAM_INVALID);
    else if (!strcmp(mode, "destroy_world"))
        shmem_team_destroy(SHMEM_TEAM_WORLD);
    else if (!strcmp(mode, "bcast_root"))
        shmem_int_broadcast(SHMEM_TEAM_WORLD, buf, buf, 1, npes);
    else if (!strcmp(mode, "aset_size"))
        shmem_barrier(0, 0, npes + 1, psync);
    else if (!strcmp(mode, "reduce_invalid"))
        shmem_int_sum_reduce(SHMEM_TEAM_INVALID, buf, buf, 1);
    else if (strcmp(mode, "ok"))
        MP_FAIL("unknown mode %s", mode);
    shmem_finalize();
    return 0;
}
