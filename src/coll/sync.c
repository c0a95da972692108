/*
 * shmem_team_sync: the team barrier without memory completion (the spec's
 * SHMEM_SYNC): a dissemination barrier of pairwise signals in the team's
 * slot. shmem_sync_all and shmem_barrier_all (coll/barrier.c) run the
 * same barrier on SHMEM_TEAM_WORLD; the deprecated active-set shmem_sync
 * and shmem_barrier live in activeset.c.
 */
#include "coll/coll.h"

/* Every barrier is the same call: barrier_all, sync_all and team_sync
 * may meet one another (the digest has the kind, not the routine). */
int pshmem_team_sync(shmem_team_t team)
{
    static const dsm_call_t call = {.routine = "shmem_team_sync",
                                    .kind = DSM_CALL_BARRIER};
    dsm_coll_sync_call(dsm_team_check(team, call.routine), &call);
    return 0;
}
DSM_WEAK(team_sync)
