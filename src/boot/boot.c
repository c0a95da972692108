/*
 * Bootstrap selection. SHMEM_BOOTSTRAP forces a back end; otherwise (unset
 * or "auto") the first that applies: launcher (its environment is present),
 * pmix (compiled in and PMIX_RANK set), single.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#if defined(__has_include)
#if __has_include("dsm_config.h")
#include "dsm_config.h"
#endif
#endif

#include "boot/boot.h"
#include "common/common.h"

/* Every back end this build knows, in auto-selection order. */
static const dsm_boot_ops_t *const known[] = {
    &dsm_boot_launcher_ops,
#ifdef DSM_HAVE_PMIX
    &dsm_boot_pmix_ops,
#endif
    &dsm_boot_single_ops,
};

/* Back ends that exist as names even when not compiled in, so that forcing
 * one gives "not available in this build" rather than "unknown". */
static const char *const all_names = "auto, launcher, pmix, single";

static int applies(const dsm_boot_ops_t *ops)
{
    if (strcmp(ops->name, "pmix") == 0 && !getenv("PMIX_RANK"))
        return 0; /* auto picks PMIx only when a PMIx server started us */
    return !ops->detect || ops->detect();
}

static dsm_status_t start(const dsm_boot_ops_t *ops, dsm_boot_info_t *info)
{
    dsm_status_t st;
    if (ops->size != sizeof(dsm_boot_ops_t)) {
        dsm_log_error("bootstrap '%s': ops table size %zu, expected %zu "
                      "(stale object file?)",
                      ops->name, ops->size, sizeof(dsm_boot_ops_t));
        return DSM_ERR_INVAL;
    }
    memset(info, 0, sizeof(*info));
    st = ops->init(info);
    if (st != DSM_OK) {
        dsm_log_error("bootstrap '%s' failed to start: %s", ops->name,
                      dsm_status_str(st));
        return st;
    }
    if (info->size < 1 || info->rank < 0 || info->rank >= info->size ||
        info->node_size < 1 || info->node_rank < 0 ||
        info->node_rank >= info->node_size || info->num_nodes < 1 ||
        info->node_id < 0 || info->node_id >= info->num_nodes) {
        dsm_log_error("bootstrap '%s' gave an inconsistent job layout: rank "
                      "%d of %d, node rank %d of %d, node %d of %d",
                      ops->name, info->rank, info->size, info->node_rank,
                      info->node_size, info->node_id, info->num_nodes);
        if (ops->fini)
            ops->fini();
        return DSM_ERR_INVAL;
    }
    return DSM_OK;
}

static dsm_status_t dsm_boot_pick(const char *forced,
                                  const dsm_boot_ops_t **ops,
                                  dsm_boot_info_t *info);

/* ------------------------------------------------------------ lone tasks */

/* A task of a parallel launch that no bootstrap of ours can join runs as
 * a 1-PE job of its own, and N of them "succeed" side by side (#32: every
 * task of `srun --mpi=pmi2` printed "PE 0 of 1"). The launchers' own
 * variables tell: the first that says more than one task, with the way to
 * start the job that works, or NULL. */
typedef struct lone {
    const char *var;  /* the variable that says N tasks */
    long tasks;
    const char *hint; /* how to start the job instead */
} lone_t;

static long env_count(const char *name)
{
    const char *v = getenv(name);
    char *end;
    long n;
    if (!v || !*v)
        return 0;
    n = strtol(v, &end, 10);
    return *end ? 0 : n;
}

static int lone_task(lone_t *l)
{
#ifdef DSM_HAVE_PMIX
    const char *pmix_hint = "start it with srun --mpi=pmix or Open MPI's "
                            "mpirun (dmashmem joins jobs through PMIx)";
#else
    const char *pmix_hint = "this dmashmem was built without PMIx, so it "
                            "cannot join a job started by srun or mpirun: "
                            "install libpmix-dev and rebuild, or use "
                            "shmem_launcher -n N on one node";
#endif
    if (getenv("PMIX_RANK") && !getenv("OMPI_COMM_WORLD_SIZE")) {
        /* A PMIx launcher says no size in the environment. */
#ifndef DSM_HAVE_PMIX
        *l = (lone_t){"PMIX_RANK", 2, pmix_hint};
        return 1;
#endif
    }
    if ((l->tasks = env_count("OMPI_COMM_WORLD_SIZE")) > 1) {
        l->var = "OMPI_COMM_WORLD_SIZE";
        l->hint = pmix_hint;
        return 1;
    }
    if ((l->tasks = env_count("PMI_SIZE")) > 1) {
        /* PMI-1/PMI-2: MPICH's hydra, srun --mpi=pmi2 (PMI_FD). */
        l->var = "PMI_SIZE";
        l->hint = "it was started through PMI-1/PMI-2 (srun --mpi=pmi2, "
                  "MPICH's mpiexec), which dmashmem does not speak: start "
                  "it with srun --mpi=pmix or Open MPI's mpirun";
        return 1;
    }
    if ((l->tasks = env_count("SLURM_STEP_NUM_TASKS")) > 1 ||
        (getenv("SLURM_STEP_ID") &&
         (l->tasks = env_count("SLURM_NTASKS")) > 1)) {
        l->var = env_count("SLURM_STEP_NUM_TASKS") > 1 ? "SLURM_STEP_NUM_TASKS"
                                                       : "SLURM_NTASKS";
        l->hint = "srun started it without PMIx (the site's default MPI "
                  "plugin, or --mpi=pmi2/none): start it with srun "
                  "--mpi=pmix";
        return 1;
    }
    return 0;
}

dsm_status_t dsm_boot_select(const char *forced, const dsm_boot_ops_t **ops,
                             dsm_boot_info_t *info)
{
    dsm_status_t st = dsm_boot_pick(forced, ops, info);
    lone_t l;
    /* SHMEM_BOOTSTRAP=single is a 1-PE job on purpose. */
    if (st == DSM_OK && info->size == 1 &&
        !(forced && strcasecmp(forced, "single") == 0) && lone_task(&l)) {
        dsm_log_error("shmem_init: the launcher started %ld tasks (%s=%s), "
                      "but the %s bootstrap sees a job of 1 PE: every task "
                      "would run alone; %s",
                      l.tasks, l.var, getenv(l.var) ? getenv(l.var) : "",
                      (*ops)->name, l.hint);
        if ((*ops)->fini)
            (*ops)->fini();
        *ops = NULL;
        return DSM_ERR_INVAL;
    }
    return st;
}

static dsm_status_t dsm_boot_pick(const char *forced,
                                  const dsm_boot_ops_t **ops,
                                  dsm_boot_info_t *info)
{
    size_t i;
    if (forced && *forced && strcasecmp(forced, "auto") != 0) {
        for (i = 0; i < DSM_ARRAY_SIZE(known); i++) {
            if (strcasecmp(forced, known[i]->name) == 0) {
                dsm_status_t st = start(known[i], info);
                if (st == DSM_OK)
                    *ops = known[i];
                return st;
            }
        }
        if (strcasecmp(forced, "pmix") == 0)
            dsm_log_error("SHMEM_BOOTSTRAP=%s: this build has no PMIx "
                          "support (configure --with-pmix)",
                          forced);
        else
            dsm_log_error("SHMEM_BOOTSTRAP=%s: unknown bootstrap (one of %s)",
                          forced, all_names);
        return DSM_ERR_INVAL;
    }
    for (i = 0; i < DSM_ARRAY_SIZE(known); i++) {
        if (applies(known[i])) {
            dsm_status_t st = start(known[i], info);
            if (st == DSM_OK)
                *ops = known[i];
            return st;
        }
    }
    /* Not reached: single always applies. */
    return DSM_ERR_NOT_FOUND;
}
