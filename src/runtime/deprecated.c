/*
 * Deprecated routines that old codes, tests-uh and the OSU micro-benchmarks
 * still call: the 1.4 typed AMO names (shmem_TYPENAME_fadd, _finc, _add,
 * _inc, _cswap, _swap, _fetch, _set), shmem_wait, shmem_TYPENAME_wait and the
 * untyped shmem_wait_until(long *), the 1.3 cache routines, and
 * shmem_pcontrol. Each is the current routine under its old name.
 */
#include "amo.h"
#include "wait.h"

/* ---- AMOs (1.4 names, non-context only) ---- */
#define DEPR_AMO_EXT(T, N)                                                     \
    T pshmem_##N##_fetch(const T *source, int pe)                              \
    {                                                                          \
        T old;                                                                 \
        dsm_amo(DSM_CTX_DEFAULT, DSM_AMO_FETCH, source, sizeof(T), NULL, NULL, \
                &old, pe, "shmem_" #N "_fetch");                               \
        return old;                                                            \
    }                                                                          \
    void pshmem_##N##_set(T *dest, T value, int pe)                            \
    {                                                                          \
        dsm_amo(DSM_CTX_DEFAULT, DSM_AMO_SET, dest, sizeof(T), &value, NULL,   \
                NULL, pe, "shmem_" #N "_set");                                 \
    }                                                                          \
    T pshmem_##N##_swap(T *dest, T value, int pe)                              \
    {                                                                          \
        T old;                                                                 \
        dsm_amo(DSM_CTX_DEFAULT, DSM_AMO_SWAP, dest, sizeof(T), &value, NULL,  \
                &old, pe, "shmem_" #N "_swap");                                \
        return old;                                                            \
    }                                                                          \
    DSM_WEAK(N##_fetch)                                                        \
    DSM_WEAK(N##_set)                                                          \
    DSM_WEAK(N##_swap)
SHMEM_TYPES_AMO_EXT(DEPR_AMO_EXT)

#define DEPR_AMO_STD(T, N)                                                     \
    T pshmem_##N##_cswap(T *dest, T cond, T value, int pe)                     \
    {                                                                          \
        T old;                                                                 \
        dsm_amo(DSM_CTX_DEFAULT, DSM_AMO_CSWAP, dest, sizeof(T), &value,       \
                &cond, &old, pe, "shmem_" #N "_cswap");                        \
        return old;                                                            \
    }                                                                          \
    T pshmem_##N##_finc(T *dest, int pe)                                       \
    {                                                                          \
        T old, one = 1;                                                        \
        dsm_amo(DSM_CTX_DEFAULT, DSM_AMO_ADD, dest, sizeof(T), &one, NULL,     \
                &old, pe, "shmem_" #N "_finc");                                \
        return old;                                                            \
    }                                                                          \
    void pshmem_##N##_inc(T *dest, int pe)                                     \
    {                                                                          \
        T one = 1;                                                             \
        dsm_amo(DSM_CTX_DEFAULT, DSM_AMO_ADD, dest, sizeof(T), &one, NULL,     \
                NULL, pe, "shmem_" #N "_inc");                                 \
    }                                                                          \
    T pshmem_##N##_fadd(T *dest, T value, int pe)                              \
    {                                                                          \
        T old;                                                                 \
        dsm_amo(DSM_CTX_DEFAULT, DSM_AMO_ADD, dest, sizeof(T), &value, NULL,   \
                &old, pe, "shmem_" #N "_fadd");                                \
        return old;                                                            \
    }                                                                          \
    void pshmem_##N##_add(T *dest, T value, int pe)                            \
    {                                                                          \
        dsm_amo(DSM_CTX_DEFAULT, DSM_AMO_ADD, dest, sizeof(T), &value, NULL,   \
                NULL, pe, "shmem_" #N "_add");                                 \
    }                                                                          \
    DSM_WEAK(N##_cswap)                                                        \
    DSM_WEAK(N##_finc)                                                         \
    DSM_WEAK(N##_inc)                                                          \
    DSM_WEAK(N##_fadd)                                                         \
    DSM_WEAK(N##_add)
SHMEM_TYPES_AMO_STD(DEPR_AMO_STD)

/* ---- waits (1.4): wait returns once *ivar != cmp_value ---- */
#define DEPR_WAIT(T, N)                                                        \
    void pshmem_##N##_wait(T *ivar, T cmp_value)                               \
    {                                                                          \
        pshmem_##N##_wait_until(ivar, SHMEM_CMP_NE, cmp_value);                \
    }                                                                          \
    DSM_WEAK(N##_wait)
SHMEM_TYPES_WAIT_DEPRECATED(DEPR_WAIT)

void pshmem_wait(long *ivar, long cmp_value)
{
    pshmem_long_wait_until(ivar, SHMEM_CMP_NE, cmp_value);
}
DSM_WEAK(wait)

void pshmem_wait_until(long *ivar, int cmp, long cmp_value)
{
    pshmem_long_wait_until(ivar, cmp, cmp_value);
}
DSM_WEAK(wait_until)

/* ---- cache management (1.3): host memory is coherent, nothing to do ---- */
void pshmem_clear_cache_inv(void) {}
void pshmem_set_cache_inv(void) {}
void pshmem_clear_cache_line_inv(void *dest) { (void)dest; }
void pshmem_set_cache_line_inv(void *dest) { (void)dest; }
void pshmem_udcflush(void) {}
void pshmem_udcflush_line(void *dest) { (void)dest; }
DSM_WEAK(clear_cache_inv)
DSM_WEAK(set_cache_inv)
DSM_WEAK(clear_cache_line_inv)
DSM_WEAK(set_cache_line_inv)
DSM_WEAK(udcflush)
DSM_WEAK(udcflush_line)

/* ---- profiling control: levels are accepted; no profiling library hooks
 * into this one beyond the pshmem_ names, so there is nothing to switch.
 * ---- */
void pshmem_pcontrol(const int level, ...)
{
    (void)level;
}
DSM_WEAK(pcontrol)
