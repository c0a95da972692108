/*
 * dsm_rt_sync_all is the runtime's own world barrier (init, finalize,
 * collective allocation), usable before the teams exist and after they are
 * gone: a dissemination barrier over the PEs' control pages. Round k, PE i
 * raises the round-k flag of PE i+2^k to this barrier's epoch and waits for
 * its own; ceil(log2 N) rounds, each one store to a peer and one wait.
 */
#include "path.h"
#include "wait.h"

void dsm_rt_sync_all(void)
{
    const int n = dsm_rt.npes, me = dsm_rt.me;
    uint64_t epoch;
    int k, d;

    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (n == 1)
        return;
    epoch = ++dsm_rt.barrier_epoch;
    for (k = 0, d = 1; d < n; k++, d <<= 1) {
        int peer = (me + d) % n;
        dsm_ctrl_t *pc = dsm_rt.peer_ctrl[peer];
        if (!(dsm_path_of(peer)->caps & DSM_PATH_CAP_LOADSTORE)) {
            /* our flag's address names theirs */
            dsm_path_signal(&dsm_ctx_default, &dsm_rt.ctrl->barrier[k], epoch,
                            0, peer, "shmem_sync_all");
            dsm_rt_wait_ge(&dsm_rt.ctrl->barrier[k], epoch);
            continue;
        }
        if (DSM_UNLIKELY(!pc))
            dsm_rt_fatal("shmem_sync_all",
                         "PE %d is not reachable (no shared memory path)",
                         peer);
        __atomic_store_n(&pc->barrier[k], epoch, __ATOMIC_RELEASE);
        dsm_wake_notify(&pc->wake_app);
        dsm_rt_wait_ge(&dsm_rt.ctrl->barrier[k], epoch);
    }
}

void dsm_rt_sync_call(const dsm_call_t *c)
{
    /* Once the teams exist, on SHMEM_TEAM_WORLD: the same signals as
     * shmem_barrier_all, so that an allocation on one PE against a barrier
     * on another is found too (coll/agree.c). */
    void (*world)(const dsm_call_t *) =
        __atomic_load_n(&dsm_rt.world_sync, __ATOMIC_ACQUIRE);
    if (world)
        world(c);
    else
        dsm_rt_sync_all();
}

/* Here because it needs nothing but the clock. */
double pshmemx_wtime(void)
{
    return (double)dsm_now_ns() / 1e9;
}
DSM_WEAKX(wtime)
