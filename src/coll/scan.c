/*
 * Scans (OpenSHMEM 1.6): shmem_TYPENAME_sum_inscan / _exscan for the SUM
 * types of the team reduction table. Member i folds the sources of members
 * 0..i (inclusive) or 0..i-1 (exclusive; member 0 gets zeros) with the same
 * barrier / read-in-place / barrier skeleton as the reductions (reduce.c).
 */
#include "coll/coll.h"

#define DSM_SCAN_DEF(T, N)                                                     \
    int pshmem_##N##_sum_inscan(shmem_team_t team, T *dest, const T *source,  \
                                size_t nelems)                                 \
    {                                                                          \
        static const char routine[] = "shmem_" #N "_sum_inscan";              \
        dsm_coll_scan(dsm_team_check(team, routine), dest, source, nelems,     \
                      sizeof(T), dsm_coll_op_##N##_sum, 1, routine);          \
        return 0;                                                              \
    }                                                                          \
    DSM_WEAK(N##_sum_inscan)                                                   \
    int pshmem_##N##_sum_exscan(shmem_team_t team, T *dest, const T *source,  \
                                size_t nelems)                                 \
    {                                                                          \
        static const char routine[] = "shmem_" #N "_sum_exscan";              \
        dsm_coll_scan(dsm_team_check(team, routine), dest, source, nelems,     \
                      sizeof(T), dsm_coll_op_##N##_sum, 0, routine);          \
        return 0;                                                              \
    }                                                                          \
    DSM_WEAK(N##_sum_exscan)
SHMEM_TYPES_REDUCE_ARITH(DSM_SCAN_DEF)
