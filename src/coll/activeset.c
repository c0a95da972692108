/*
 * The deprecated active-set collectives (pSync/pWrk forms): shmem_barrier,
 * shmem_sync, shmem_broadcast{32,64}, shmem_{f,}collect{32,64},
 * shmem_alltoall{,s}{32,64} and shmem_TYPENAME_OP_to_all.
 *
 * An active set (PE_start, 2^logPE_stride, PE_size) becomes an internal,
 * cached team (team.c dsm_team_aset) whose signal words, in one reserved
 * slot, are indexed by world PE: the counts of a pair of PEs carry over
 * from one active set to another. pSync and pWrk are accepted and unused;
 * they need no initialization and may be reused at once. One lock
 * serializes active-set collectives within a process, since every active
 * set shares the same counters.
 */
#include "coll/coll.h"

static pthread_mutex_t aset_call = PTHREAD_MUTEX_INITIALIZER;

/* The last active set (under aset_call): the same one again, as in a loop
 * of pSync calls, needs neither the cache's lock nor the checks (they
 * passed for it). */
static struct {
    uint64_t gen;
    int start, log, size;
    dsm_team_t *t;
} last;

static dsm_team_t *aset_team(int start, int log, int size,
                             const char *routine)
{
    const uint64_t gen = dsm_team_aset_gen();
    if (last.gen == gen && last.start == start && last.log == log &&
        last.size == size) {
        DSM_CHECK_INIT(routine);
        return last.t;
    }
    dsm_team_t *t = dsm_team_aset(start, log, size, routine);
    last.gen = gen;
    last.start = start;
    last.log = log;
    last.size = size;
    last.t = t;
    return t;
}

#define ASET_BEGIN(routine, start, log, size)                                  \
    pthread_mutex_lock(&aset_call);                                            \
    dsm_team_t *t = aset_team(start, log, size, routine)
#define ASET_END() pthread_mutex_unlock(&aset_call)

void pshmem_barrier(int PE_start, int logPE_stride, int PE_size, long *pSync)
{
    (void)pSync;
    ASET_BEGIN("shmem_barrier", PE_start, logPE_stride, PE_size);
    static const dsm_call_t call = {.routine = "shmem_barrier",
                                    .kind = DSM_CALL_BARRIER};
    dsm_rt_quiet(&dsm_ctx_default);
    dsm_coll_sync_call(t, &call);
    ASET_END();
}
DSM_WEAK(barrier)

void pshmem_sync(int PE_start, int logPE_stride, int PE_size, long *pSync)
{
    (void)pSync;
    static const dsm_call_t call = {.routine = "shmem_sync",
                                    .kind = DSM_CALL_BARRIER};
    ASET_BEGIN("shmem_sync", PE_start, logPE_stride, PE_size);
    dsm_coll_sync_call(t, &call);
    ASET_END();
}
DSM_WEAK(sync)

/* Sized forms: X(BITS, BYTES). */
#define ASET_SIZES(X) X(32, 4) X(64, 8)

#define DSM_ASET_SIZED(BITS, BYTES)                                            \
    void pshmem_broadcast##BITS(void *dest, const void *source, size_t nelems, \
                                int PE_root, int PE_start, int logPE_stride,   \
                                int PE_size, long *pSync)                      \
    {                                                                          \
        (void)pSync;                                                           \
        ASET_BEGIN("shmem_broadcast" #BITS, PE_start, logPE_stride, PE_size);  \
        /* Before 1.5 the root's own dest is left alone. */                    \
        dsm_coll_broadcast(t, dest, source,                                    \
                           DSM_NBYTES(nelems, BYTES, "shmem_broadcast" #BITS), \
                           PE_root, 0, "shmem_broadcast" #BITS, BYTES);        \
        ASET_END();                                                            \
    }                                                                          \
    DSM_WEAK(broadcast##BITS)                                                  \
    void pshmem_fcollect##BITS(void *dest, const void *source, size_t nelems,  \
                               int PE_start, int logPE_stride, int PE_size,    \
                               long *pSync)                                    \
    {                                                                          \
        (void)pSync;                                                           \
        ASET_BEGIN("shmem_fcollect" #BITS, PE_start, logPE_stride, PE_size);   \
        dsm_coll_fcollect(t, dest, source,                                     \
                          DSM_NBYTES(nelems, BYTES, "shmem_fcollect" #BITS),   \
                          "shmem_fcollect" #BITS, BYTES);                      \
        ASET_END();                                                            \
    }                                                                          \
    DSM_WEAK(fcollect##BITS)                                                   \
    void pshmem_collect##BITS(void *dest, const void *source, size_t nelems,   \
                              int PE_start, int logPE_stride, int PE_size,     \
                              long *pSync)                                     \
    {                                                                          \
        (void)pSync;                                                           \
        ASET_BEGIN("shmem_collect" #BITS, PE_start, logPE_stride, PE_size);    \
        dsm_coll_collect(t, dest, source,                                      \
                         DSM_NBYTES(nelems, BYTES, "shmem_collect" #BITS),     \
                         "shmem_collect" #BITS, BYTES);                        \
        ASET_END();                                                            \
    }                                                                          \
    DSM_WEAK(collect##BITS)                                                    \
    void pshmem_alltoall##BITS(void *dest, const void *source, size_t nelems,  \
                               int PE_start, int logPE_stride, int PE_size,    \
                               long *pSync)                                    \
    {                                                                          \
        (void)pSync;                                                           \
        ASET_BEGIN("shmem_alltoall" #BITS, PE_start, logPE_stride, PE_size);   \
        dsm_coll_alltoall(t, dest, source,                                     \
                          DSM_NBYTES(nelems, BYTES, "shmem_alltoall" #BITS),   \
                          "shmem_alltoall" #BITS, BYTES);                      \
        ASET_END();                                                            \
    }                                                                          \
    DSM_WEAK(alltoall##BITS)                                                   \
    void pshmem_alltoalls##BITS(void *dest, const void *source, ptrdiff_t dst, \
                                ptrdiff_t sst, size_t nelems, int PE_start,    \
                                int logPE_stride, int PE_size, long *pSync)    \
    {                                                                          \
        (void)pSync;                                                           \
        ASET_BEGIN("shmem_alltoalls" #BITS, PE_start, logPE_stride, PE_size);  \
        dsm_coll_alltoalls(t, dest, source, dst, sst, nelems, BYTES,           \
                           "shmem_alltoalls" #BITS);                           \
        ASET_END();                                                            \
    }                                                                          \
    DSM_WEAK(alltoalls##BITS)
ASET_SIZES(DSM_ASET_SIZED)

/* shmem_TYPENAME_OP_to_all: one body, expanded per op and type. */
#define DSM_TO_ALL_DEF(T, N, OP)                                               \
    void pshmem_##N##_##OP##_to_all(T *dest, const T *source, int nreduce,    \
                                    int PE_start, int logPE_stride,            \
                                    int PE_size, T *pWrk, long *pSync)         \
    {                                                                          \
        static const char routine[] = "shmem_" #N "_" #OP "_to_all";          \
        (void)pWrk;                                                            \
        (void)pSync;                                                           \
        if (nreduce < 0)                                                       \
            dsm_rt_fatal(routine, "nreduce %d is negative", nreduce);          \
        ASET_BEGIN(routine, PE_start, logPE_stride, PE_size);                  \
        dsm_coll_reduce(t, dest, source, (size_t)nreduce, sizeof(T),           \
                        dsm_coll_op_##N##_##OP, routine);                      \
        ASET_END();                                                            \
    }                                                                          \
    DSM_WEAK(N##_##OP##_to_all)
#define DSM_TO_ALL_BIT(T, N)                                                   \
    DSM_TO_ALL_DEF(T, N, and) DSM_TO_ALL_DEF(T, N, or)                        \
    DSM_TO_ALL_DEF(T, N, xor)
#define DSM_TO_ALL_MINMAX(T, N)                                                \
    DSM_TO_ALL_DEF(T, N, max) DSM_TO_ALL_DEF(T, N, min)
#define DSM_TO_ALL_ARITH(T, N)                                                 \
    DSM_TO_ALL_DEF(T, N, sum) DSM_TO_ALL_DEF(T, N, prod)
SHMEM_TYPES_TO_ALL_BIT(DSM_TO_ALL_BIT)
SHMEM_TYPES_TO_ALL_MINMAX(DSM_TO_ALL_MINMAX)
SHMEM_TYPES_TO_ALL_ARITH(DSM_TO_ALL_ARITH)
