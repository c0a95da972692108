/*
 * shmem_barrier_all / shmem_sync_all: the team barrier of SHMEM_TEAM_WORLD
 * (sync.c: a dissemination barrier of pairwise signals in the world team's
 * slot, serialized by the team's lock). barrier_all first completes the
 * default context, as the specification requires.
 */
#include "coll/coll.h"

void pshmem_sync_all(void)
{
    static const dsm_call_t call = {.routine = "shmem_sync_all",
                                    .kind = DSM_CALL_BARRIER};
    DSM_CHECK_INIT(call.routine);
    dsm_coll_sync_call(&dsm_team_world, &call);
}
DSM_WEAK(sync_all)

void pshmem_barrier_all(void)
{
    static const dsm_call_t call = {.routine = "shmem_barrier_all",
                                    .kind = DSM_CALL_BARRIER};
    DSM_CHECK_INIT(call.routine);
    dsm_rt_quiet(&dsm_ctx_default);
    dsm_coll_sync_call(&dsm_team_world, &call);
}
DSM_WEAK(barrier_all)
