/*
 * The runtime's per-process state (rt.h): defined here, apart from
 * init.c, so that every module that reads it (coll/ included) depends on
 * this leaf and not on the module that starts coll/ (no cycle between
 * folders; test/layers).
 */
#include "rt.h"

#include <string.h>

struct dsm_rt dsm_rt = {.me = -1, .npes = 0};
static uint64_t ctx_default_counters[2][64] DSM_ALIGNED_CL;
struct dsm_ctx dsm_ctx_default = {
    .issued = ctx_default_counters[0],
    .done = ctx_default_counters[1],
};
DSM_API shmem_ctx_t SHMEM_CTX_DEFAULT = &dsm_ctx_default;

void dsm_ctx_default_reset(void)
{
    memset(ctx_default_counters, 0, sizeof(ctx_default_counters));
}
