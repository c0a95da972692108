/*
 * Bootstrap selection. SHMEM_BOOTSTRAP forces a back end; otherwise (unset
 * or "auto") the first that applies: launcher (its environment is present),
 * pmix (compiled in and PMIX_RANK set), single.
 */
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

dsm_status_t dsm_boot_select(const char *forced, const dsm_boot_ops_t **ops,
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
