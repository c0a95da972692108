/*
 * Sandia OpenSHMEM compatibility, team side (shmemx_sos(3)): SOS's node
 * team and its shmemx_ names of the 1.6 scans, each the standard routine
 * under the SOS name (a real symbol with its pshmemx_ twin). The RMA side
 * is runtime/sosx.c.
 */
#include "coll/coll.h"

/* SOS's node team: the PEs on this PE's node. SHMEM_TEAM_SHARED is
 * exactly that set here: every PE maps the memory of every PE on its node
 * and of no other (under SHMEM_FORCE_NETWORK=1 each PE is its own node,
 * and SHARED is that PE alone). The same handle, so team routines treat
 * it as the predefined team it is. */
DSM_API shmem_team_t SHMEMX_TEAM_NODE = &dsm_team_shared;

/* ---- scans ---- */
#define SOSX_SCAN(T, N)                                                        \
    int pshmemx_##N##_sum_inscan(shmem_team_t team, T *dest, const T *source,  \
                                 size_t nelems)                                \
    {                                                                          \
        return pshmem_##N##_sum_inscan(team, dest, source, nelems);            \
    }                                                                          \
    int pshmemx_##N##_sum_exscan(shmem_team_t team, T *dest, const T *source,  \
                                 size_t nelems)                                \
    {                                                                          \
        return pshmem_##N##_sum_exscan(team, dest, source, nelems);            \
    }                                                                          \
    DSM_WEAKX(N##_sum_inscan)                                                  \
    DSM_WEAKX(N##_sum_exscan)
SHMEM_TYPES_REDUCE_ARITH(SOSX_SCAN)
