/*
 * Atomic memory operations: every typed AMO, with and without a context,
 * blocking and nbi, expanded from the AMO type tables onto amo.h.
 *
 * The fetching nbi forms complete before they return: the atomic is one CPU
 * instruction on the shared mapping, so the fetched value is written to
 * *fetch at once (the spec allows completion at any point up to the next
 * quiet; waiting for the quiet would only cost a queue round trip).
 */
#include "amo.h"

void dsm_amo_bad_align(const char *routine, const void *addr, size_t size)
{
    dsm_rt_fatal(routine, "address %p is not aligned to the %zu-byte "
                 "element size", addr, size);
}

void dsm_amo_by_table(dsm_ctx_t *c, dsm_amo_op_t op, const void *dest,
                      size_t size, const void *val, const void *cmp,
                      void *fetched, int pe, const char *routine)
{
    dsm_rma_check2(routine, dest, size);
    const dsm_path_ops_t *o = dsm_paths.pe[pe].amo;
    if (o == &dsm_path_shm)
        dsm_shm_amo(c, op, (void *)dest, size, val, cmp, fetched, pe, routine);
    else
        o->amo(c, op, (void *)dest, size, val, cmp, fetched, pe, routine);
}

/* Name of the routine for errors: "shmem_[ctx_]TYPENAME_OP". */
#define AMO_NAME(PFX, N, OP) "shmem_" PFX #N "_" OP

/* ---- extended types: fetch, set, swap (+nbi) ---- */
#define AMO_EXT(T, N)                                                          \
    T pshmem_ctx_##N##_atomic_fetch(shmem_ctx_t ctx, const T *source, int pe)  \
    {                                                                          \
        T old;                                                                 \
        dsm_amo(ctx, DSM_AMO_FETCH, source, sizeof(T), NULL, NULL, &old, pe,   \
                AMO_NAME("ctx_", N, "atomic_fetch"));                          \
        return old;                                                            \
    }                                                                          \
    T pshmem_##N##_atomic_fetch(const T *source, int pe)                       \
    {                                                                          \
        T old;                                                                 \
        dsm_amo(DSM_CTX_DEFAULT, DSM_AMO_FETCH, source, sizeof(T), NULL, NULL, \
                &old, pe, AMO_NAME("", N, "atomic_fetch"));                    \
        return old;                                                            \
    }                                                                          \
    void pshmem_ctx_##N##_atomic_set(shmem_ctx_t ctx, T *dest, T value,        \
                                     int pe)                                   \
    {                                                                          \
        dsm_amo(ctx, DSM_AMO_SET, dest, sizeof(T), &value, NULL, NULL, pe,     \
                AMO_NAME("ctx_", N, "atomic_set"));                            \
    }                                                                          \
    void pshmem_##N##_atomic_set(T *dest, T value, int pe)                     \
    {                                                                          \
        dsm_amo(DSM_CTX_DEFAULT, DSM_AMO_SET, dest, sizeof(T), &value, NULL,   \
                NULL, pe, AMO_NAME("", N, "atomic_set"));                      \
    }                                                                          \
    T pshmem_ctx_##N##_atomic_swap(shmem_ctx_t ctx, T *dest, T value, int pe)  \
    {                                                                          \
        T old;                                                                 \
        dsm_amo(ctx, DSM_AMO_SWAP, dest, sizeof(T), &value, NULL, &old, pe,    \
                AMO_NAME("ctx_", N, "atomic_swap"));                           \
        return old;                                                            \
    }                                                                          \
    T pshmem_##N##_atomic_swap(T *dest, T value, int pe)                       \
    {                                                                          \
        T old;                                                                 \
        dsm_amo(DSM_CTX_DEFAULT, DSM_AMO_SWAP, dest, sizeof(T), &value, NULL,  \
                &old, pe, AMO_NAME("", N, "atomic_swap"));                     \
        return old;                                                            \
    }                                                                          \
    void pshmem_ctx_##N##_atomic_fetch_nbi(shmem_ctx_t ctx, T *fetch,          \
                                           const T *source, int pe)            \
    {                                                                          \
        dsm_amo(ctx, DSM_AMO_FETCH, source, sizeof(T), NULL, NULL, fetch, pe,  \
                AMO_NAME("ctx_", N, "atomic_fetch_nbi"));                      \
    }                                                                          \
    void pshmem_##N##_atomic_fetch_nbi(T *fetch, const T *source, int pe)      \
    {                                                                          \
        dsm_amo(DSM_CTX_DEFAULT, DSM_AMO_FETCH, source, sizeof(T), NULL, NULL, \
                fetch, pe, AMO_NAME("", N, "atomic_fetch_nbi"));               \
    }                                                                          \
    void pshmem_ctx_##N##_atomic_swap_nbi(shmem_ctx_t ctx, T *fetch, T *dest,  \
                                          T value, int pe)                     \
    {                                                                          \
        dsm_amo(ctx, DSM_AMO_SWAP, dest, sizeof(T), &value, NULL, fetch, pe,   \
                AMO_NAME("ctx_", N, "atomic_swap_nbi"));                       \
    }                                                                          \
    void pshmem_##N##_atomic_swap_nbi(T *fetch, T *dest, T value, int pe)      \
    {                                                                          \
        dsm_amo(DSM_CTX_DEFAULT, DSM_AMO_SWAP, dest, sizeof(T), &value, NULL,  \
                fetch, pe, AMO_NAME("", N, "atomic_swap_nbi"));                \
    }                                                                          \
    DSM_WEAK(ctx_##N##_atomic_fetch)                                           \
    DSM_WEAK(N##_atomic_fetch)                                                 \
    DSM_WEAK(ctx_##N##_atomic_set)                                             \
    DSM_WEAK(N##_atomic_set)                                                   \
    DSM_WEAK(ctx_##N##_atomic_swap)                                            \
    DSM_WEAK(N##_atomic_swap)                                                  \
    DSM_WEAK(ctx_##N##_atomic_fetch_nbi)                                       \
    DSM_WEAK(N##_atomic_fetch_nbi)                                             \
    DSM_WEAK(ctx_##N##_atomic_swap_nbi)                                        \
    DSM_WEAK(N##_atomic_swap_nbi)
SHMEM_TYPES_AMO_EXT(AMO_EXT)

/* ---- standard types: compare_swap, inc, add (+nbi) ---- */
#define AMO_STD(T, N)                                                          \
    T pshmem_ctx_##N##_atomic_compare_swap(shmem_ctx_t ctx, T *dest, T cond,   \
                                           T value, int pe)                    \
    {                                                                          \
        T old;                                                                 \
        dsm_amo(ctx, DSM_AMO_CSWAP, dest, sizeof(T), &value, &cond, &old, pe,  \
                AMO_NAME("ctx_", N, "atomic_compare_swap"));                   \
        return old;                                                            \
    }                                                                          \
    T pshmem_##N##_atomic_compare_swap(T *dest, T cond, T value, int pe)       \
    {                                                                          \
        T old;                                                                 \
        dsm_amo(DSM_CTX_DEFAULT, DSM_AMO_CSWAP, dest, sizeof(T), &value,       \
                &cond, &old, pe, AMO_NAME("", N, "atomic_compare_swap"));      \
        return old;                                                            \
    }                                                                          \
    T pshmem_ctx_##N##_atomic_fetch_inc(shmem_ctx_t ctx, T *dest, int pe)      \
    {                                                                          \
        T old, one = 1;                                                        \
        dsm_amo(ctx, DSM_AMO_ADD, dest, sizeof(T), &one, NULL, &old, pe,       \
                AMO_NAME("ctx_", N, "atomic_fetch_inc"));                      \
        return old;                                                            \
    }                                                                          \
    T pshmem_##N##_atomic_fetch_inc(T *dest, int pe)                           \
    {                                                                          \
        T old, one = 1;                                                        \
        dsm_amo(DSM_CTX_DEFAULT, DSM_AMO_ADD, dest, sizeof(T), &one, NULL,     \
                &old, pe, AMO_NAME("", N, "atomic_fetch_inc"));                \
        return old;                                                            \
    }                                                                          \
    void pshmem_ctx_##N##_atomic_inc(shmem_ctx_t ctx, T *dest, int pe)         \
    {                                                                          \
        T one = 1;                                                             \
        dsm_amo(ctx, DSM_AMO_ADD, dest, sizeof(T), &one, NULL, NULL, pe,       \
                AMO_NAME("ctx_", N, "atomic_inc"));                            \
    }                                                                          \
    void pshmem_##N##_atomic_inc(T *dest, int pe)                              \
    {                                                                          \
        T one = 1;                                                             \
        dsm_amo(DSM_CTX_DEFAULT, DSM_AMO_ADD, dest, sizeof(T), &one, NULL,     \
                NULL, pe, AMO_NAME("", N, "atomic_inc"));                      \
    }                                                                          \
    T pshmem_ctx_##N##_atomic_fetch_add(shmem_ctx_t ctx, T *dest, T value,     \
                                        int pe)                                \
    {                                                                          \
        T old;                                                                 \
        dsm_amo(ctx, DSM_AMO_ADD, dest, sizeof(T), &value, NULL, &old, pe,     \
                AMO_NAME("ctx_", N, "atomic_fetch_add"));                      \
        return old;                                                            \
    }                                                                          \
    T pshmem_##N##_atomic_fetch_add(T *dest, T value, int pe)                  \
    {                                                                          \
        T old;                                                                 \
        dsm_amo(DSM_CTX_DEFAULT, DSM_AMO_ADD, dest, sizeof(T), &value, NULL,   \
                &old, pe, AMO_NAME("", N, "atomic_fetch_add"));                \
        return old;                                                            \
    }                                                                          \
    void pshmem_ctx_##N##_atomic_add(shmem_ctx_t ctx, T *dest, T value,        \
                                     int pe)                                   \
    {                                                                          \
        dsm_amo(ctx, DSM_AMO_ADD, dest, sizeof(T), &value, NULL, NULL, pe,     \
                AMO_NAME("ctx_", N, "atomic_add"));                            \
    }                                                                          \
    void pshmem_##N##_atomic_add(T *dest, T value, int pe)                     \
    {                                                                          \
        dsm_amo(DSM_CTX_DEFAULT, DSM_AMO_ADD, dest, sizeof(T), &value, NULL,   \
                NULL, pe, AMO_NAME("", N, "atomic_add"));                      \
    }                                                                          \
    void pshmem_ctx_##N##_atomic_compare_swap_nbi(                             \
        shmem_ctx_t ctx, T *fetch, T *dest, T cond, T value, int pe)           \
    {                                                                          \
        dsm_amo(ctx, DSM_AMO_CSWAP, dest, sizeof(T), &value, &cond, fetch, pe, \
                AMO_NAME("ctx_", N, "atomic_compare_swap_nbi"));               \
    }                                                                          \
    void pshmem_##N##_atomic_compare_swap_nbi(T *fetch, T *dest, T cond,       \
                                              T value, int pe)                 \
    {                                                                          \
        dsm_amo(DSM_CTX_DEFAULT, DSM_AMO_CSWAP, dest, sizeof(T), &value,       \
                &cond, fetch, pe, AMO_NAME("", N, "atomic_compare_swap_nbi")); \
    }                                                                          \
    void pshmem_ctx_##N##_atomic_fetch_inc_nbi(shmem_ctx_t ctx, T *fetch,      \
                                               T *dest, int pe)                \
    {                                                                          \
        T one = 1;                                                             \
        dsm_amo(ctx, DSM_AMO_ADD, dest, sizeof(T), &one, NULL, fetch, pe,      \
                AMO_NAME("ctx_", N, "atomic_fetch_inc_nbi"));                  \
    }                                                                          \
    void pshmem_##N##_atomic_fetch_inc_nbi(T *fetch, T *dest, int pe)          \
    {                                                                          \
        T one = 1;                                                             \
        dsm_amo(DSM_CTX_DEFAULT, DSM_AMO_ADD, dest, sizeof(T), &one, NULL,     \
                fetch, pe, AMO_NAME("", N, "atomic_fetch_inc_nbi"));           \
    }                                                                          \
    void pshmem_ctx_##N##_atomic_fetch_add_nbi(shmem_ctx_t ctx, T *fetch,      \
                                               T *dest, T value, int pe)       \
    {                                                                          \
        dsm_amo(ctx, DSM_AMO_ADD, dest, sizeof(T), &value, NULL, fetch, pe,    \
                AMO_NAME("ctx_", N, "atomic_fetch_add_nbi"));                  \
    }                                                                          \
    void pshmem_##N##_atomic_fetch_add_nbi(T *fetch, T *dest, T value, int pe) \
    {                                                                          \
        dsm_amo(DSM_CTX_DEFAULT, DSM_AMO_ADD, dest, sizeof(T), &value, NULL,   \
                fetch, pe, AMO_NAME("", N, "atomic_fetch_add_nbi"));           \
    }                                                                          \
    DSM_WEAK(ctx_##N##_atomic_compare_swap)                                    \
    DSM_WEAK(N##_atomic_compare_swap)                                          \
    DSM_WEAK(ctx_##N##_atomic_fetch_inc)                                       \
    DSM_WEAK(N##_atomic_fetch_inc)                                             \
    DSM_WEAK(ctx_##N##_atomic_inc)                                             \
    DSM_WEAK(N##_atomic_inc)                                                   \
    DSM_WEAK(ctx_##N##_atomic_fetch_add)                                       \
    DSM_WEAK(N##_atomic_fetch_add)                                             \
    DSM_WEAK(ctx_##N##_atomic_add)                                             \
    DSM_WEAK(N##_atomic_add)                                                   \
    DSM_WEAK(ctx_##N##_atomic_compare_swap_nbi)                                \
    DSM_WEAK(N##_atomic_compare_swap_nbi)                                      \
    DSM_WEAK(ctx_##N##_atomic_fetch_inc_nbi)                                   \
    DSM_WEAK(N##_atomic_fetch_inc_nbi)                                         \
    DSM_WEAK(ctx_##N##_atomic_fetch_add_nbi)                                   \
    DSM_WEAK(N##_atomic_fetch_add_nbi)
SHMEM_TYPES_AMO_STD(AMO_STD)

/* ---- bitwise types: and, or, xor (fetching, plain, fetching nbi) ---- */
#define AMO_BIT_OP(T, N, OP, CODE)                                             \
    T pshmem_ctx_##N##_atomic_fetch_##OP(shmem_ctx_t ctx, T *dest, T value,    \
                                         int pe)                               \
    {                                                                          \
        T old;                                                                 \
        dsm_amo(ctx, CODE, dest, sizeof(T), &value, NULL, &old, pe,            \
                AMO_NAME("ctx_", N, "atomic_fetch_" #OP));                     \
        return old;                                                            \
    }                                                                          \
    T pshmem_##N##_atomic_fetch_##OP(T *dest, T value, int pe)                 \
    {                                                                          \
        T old;                                                                 \
        dsm_amo(DSM_CTX_DEFAULT, CODE, dest, sizeof(T), &value, NULL, &old,    \
                pe, AMO_NAME("", N, "atomic_fetch_" #OP));                     \
        return old;                                                            \
    }                                                                          \
    void pshmem_ctx_##N##_atomic_##OP(shmem_ctx_t ctx, T *dest, T value,       \
                                      int pe)                                  \
    {                                                                          \
        dsm_amo(ctx, CODE, dest, sizeof(T), &value, NULL, NULL, pe,            \
                AMO_NAME("ctx_", N, "atomic_" #OP));                           \
    }                                                                          \
    void pshmem_##N##_atomic_##OP(T *dest, T value, int pe)                    \
    {                                                                          \
        dsm_amo(DSM_CTX_DEFAULT, CODE, dest, sizeof(T), &value, NULL, NULL,    \
                pe, AMO_NAME("", N, "atomic_" #OP));                           \
    }                                                                          \
    void pshmem_ctx_##N##_atomic_fetch_##OP##_nbi(shmem_ctx_t ctx, T *fetch,   \
                                                  T *dest, T value, int pe)    \
    {                                                                          \
        dsm_amo(ctx, CODE, dest, sizeof(T), &value, NULL, fetch, pe,           \
                AMO_NAME("ctx_", N, "atomic_fetch_" #OP "_nbi"));              \
    }                                                                          \
    void pshmem_##N##_atomic_fetch_##OP##_nbi(T *fetch, T *dest, T value,      \
                                              int pe)                          \
    {                                                                          \
        dsm_amo(DSM_CTX_DEFAULT, CODE, dest, sizeof(T), &value, NULL, fetch,   \
                pe, AMO_NAME("", N, "atomic_fetch_" #OP "_nbi"));              \
    }                                                                          \
    DSM_WEAK(ctx_##N##_atomic_fetch_##OP)                                      \
    DSM_WEAK(N##_atomic_fetch_##OP)                                            \
    DSM_WEAK(ctx_##N##_atomic_##OP)                                            \
    DSM_WEAK(N##_atomic_##OP)                                                  \
    DSM_WEAK(ctx_##N##_atomic_fetch_##OP##_nbi)                                \
    DSM_WEAK(N##_atomic_fetch_##OP##_nbi)
#define AMO_BIT(T, N)                                                          \
    AMO_BIT_OP(T, N, and, DSM_AMO_AND)                                         \
    AMO_BIT_OP(T, N, or, DSM_AMO_OR)                                           \
    AMO_BIT_OP(T, N, xor, DSM_AMO_XOR)
SHMEM_TYPES_AMO_BIT(AMO_BIT)
