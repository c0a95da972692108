/*
 * shmem_team_sync: the team barrier without memory completion (the spec's
 * SHMEM_SYNC): a dissemination barrier of pairwise signals in the team's
 * slot. shmem_sync_all and shmem_barrier_all (coll/barrier.c) run the
 * same barrier on SHMEM_TEAM_WORLD; the deprecated active-set shmem_sync
 * and shmem_barrier live in activeset.c.
 */
#include "coll/coll.h"

void dsm_coll_team_sync(dsm_team_t *t)
{
    if (t->size == 1) {
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        return;
    }
    pthread_mutex_lock(&t->lock);
    dsm_team_sync(t);
    pthread_mutex_unlock(&t->lock);
}

int pshmem_team_sync(shmem_team_t team)
{
    dsm_coll_team_sync(dsm_team_check(team, "shmem_team_sync"));
    return 0;
}
DSM_WEAK(team_sync)
