/*
 * The inputs of the collectives' variant choice: the tunables, read once
 * (SHMEM_FCOLLECT_ALGORITHM and SHMEM_ALLTOALL_ALGORITHM force a variant;
 * SHMEM_COLL_DIRECT_MAX, SHMEM_FCOLLECT_PCPY_MIN and
 * SHMEM_ALLTOALL_PCPY_MIN move the crossovers measured with
 * bench/coll_bench, docs/PERFORMANCE.md "Collectives"), the team's
 * placement and the call's sizes and memory, handed to the pure planner
 * (plan.c, dsm_coll_plan) by dsm_coll_pick; and small helpers the
 * collectives share.
 */
#include "coll/chain.h"
#include "rma.h"

#include <sched.h>
#include <string.h>
#include <unistd.h>

dsm_coll_tune_t dsm_coll_tune;
static pthread_once_t tune_once = PTHREAD_ONCE_INIT;
static const char *tune_error;
/* The engines' DSM_SDMA_CAP_*, read with the tunables (the planner's
 * input on every call). */
static unsigned engine_caps;

static size_t size_or(uint64_t v, size_t def)
{
    return v == UINT64_MAX ? def : (size_t)v;
}

static void tune_read(void)
{
    dsm_coll_tune_t *t = &dsm_coll_tune;

    /* The measured defaults for this node (plan.c), then the environment. */
    engine_caps = dsm_sdma_caps(dsm_rt.sdma);
    dsm_coll_tune_defaults(t, engine_caps, dsm_ncores(),
                           dsm_rt.boot.node_size);
    if (!dsm_algo_parse(dsm_env.fcollect_algorithm, &t->ag))
        tune_error = "SHMEM_FCOLLECT_ALGORITHM";
    if (!dsm_algo_parse(dsm_env.alltoall_algorithm, &t->a2a))
        tune_error = "SHMEM_ALLTOALL_ALGORITHM";
    t->direct_max = size_or(dsm_env.coll_direct_max, t->direct_max);
    t->ag_pcpy_min = size_or(dsm_env.fcollect_pcpy_min, t->ag_pcpy_min);
    t->a2a_pcpy_min = size_or(dsm_env.alltoall_pcpy_min, t->a2a_pcpy_min);
    t->prelaunch_depth = (int)DSM_MAX(0, DSM_MIN(dsm_env.prelaunch_depth, 64));
    dsm_debug("collectives: fcollect %s, alltoall %s, direct <= %zu B, "
              "pcpy from %zu B (AG) / %zu B (A2A), prelaunch depth %d",
              dsm_algo_name(t->ag), dsm_algo_name(t->a2a), t->direct_max,
              t->ag_pcpy_min, t->a2a_pcpy_min, t->prelaunch_depth);
}

void dsm_coll_tune_init(void)
{
    pthread_once(&tune_once, tune_read);
    if (DSM_UNLIKELY(tune_error))
        dsm_rt_fatal("collective", "%s=%s: use auto, eager, direct, pcpy, "
                     "b2b or %s",
                     tune_error,
                     tune_error[6] == 'F' ? dsm_env.fcollect_algorithm
                                          : dsm_env.alltoall_algorithm,
                     tune_error[6] == 'F' ? "bcast" : "swap");
}

int dsm_coll_host(const void *dest, const void *src)
{
    return !dsm_mem_device_heap(dest) && !dsm_mem_device_heap(src);
}

void dsm_coll_self_copy(char *dst, const char *src, size_t len, size_t count,
                        ptrdiff_t dstr, ptrdiff_t sstr, const char *routine)
{
    const int host = dsm_coll_host(dst, src);
    if (!len || (count == 1 && dst == src))
        return;
    if (host && count == 1) {
        memmove(dst, src, len);
        return;
    }
    for (size_t k = 0; k < count; k++) {
        char *d = dst + (ptrdiff_t)k * dstr;
        const char *s = src + (ptrdiff_t)k * sstr;
        if (host)
            memcpy(d, s, len);
        else
            dsm_rma_get(DSM_CTX_DEFAULT, d, s, len, dsm_rt.me, routine);
    }
}

dsm_algo_t dsm_coll_pick(dsm_team_t *t, dsm_coll_kind_t kind, size_t bytes,
                         size_t elem, int host, int flags,
                         const char *routine)
{
    const dsm_coll_plan_in_t in = {
        .kind = kind,
        .bytes = bytes,
        .elem = elem,
        .npes = t->size,
        .host = host,
        .mapped = t->coll->mapped,
        .chain = (flags & DSM_PICK_CHAIN) != 0,
        .mixed = (flags & DSM_PICK_MIXED) != 0,
        .engine_caps = engine_caps,
        .eager_max = dsm_eager.max,
        .tune = &dsm_coll_tune,
    };
    const dsm_coll_choice_t c = dsm_coll_plan(&in);

    if (DSM_UNLIKELY(c.err != DSM_OK))
        dsm_rt_fatal(routine, "%s", c.why);
    if (DSM_UNLIKELY(c.overridden))
        dsm_debug("%s: %s", routine, c.why);
    return c.algo;
}

/* ------------------------------------------------------------ team ops */

static char *shm_peer_dst(const char *routine, dsm_team_t *t, int m,
                          void *sym, size_t len, int *by_path)
{
    *by_path = 0;
    return dsm_rt_xlate(routine, sym, len, t->pes[m]);
}

/* Members on this node are still mapped: only the others go by path. */
static char *net_peer_dst(const char *routine, dsm_team_t *t, int m,
                          void *sym, size_t len, int *by_path)
{
    int pe = dsm_team_pe(t, m);
    *by_path = !dsm_coll_pe_mapped(pe);
    return *by_path ? (char *)sym : dsm_rt_xlate(routine, sym, len, pe);
}

/* The blocks went as nbi network puts: the arrival signals need not have
 * waited for them where the provider orders writes. */
static void net_done(void)
{
    dsm_path_quiet(&dsm_ctx_default);
}

static const dsm_coll_ops_t coll_shm = {
    .name = "shm", .mapped = 1, .peer_dst = shm_peer_dst, .done = NULL};
static const dsm_coll_ops_t coll_net = {
    .name = "net", .mapped = 0, .peer_dst = net_peer_dst, .done = net_done};

const dsm_coll_ops_t *dsm_coll_ops_for(unsigned caps)
{
    return caps & DSM_PATH_CAP_LOADSTORE ? &coll_shm : &coll_net;
}
