/*
 * shmem_barrier_all / shmem_sync_all: the team barrier of SHMEM_TEAM_WORLD
 * (sync.c: a dissemination barrier of pairwise signals in the world team's
 * slot, serialized by the team's lock). barrier_all first completes the
 * default context, as the specification requires.
 */
#include "coll/coll.h"

void pshmem_sync_all(void)
{
    DSM_CHECK_INIT("shmem_sync_all");
    dsm_coll_team_sync(&dsm_team_world, "shmem_sync_all");
}
DSM_WEAK(sync_all)

void pshmem_barrier_all(void)
{
    DSM_CHECK_INIT("shmem_barrier_all");
    dsm_rt_quiet(&dsm_ctx_default);
    dsm_coll_team_sync(&dsm_team_world, "shmem_barrier_all");
}
DSM_WEAK(barrier_all)
