/*
 * dmashmem extensions to OpenSHMEM. Names start with shmemx_; each has a
 * pshmemx_ profiling twin.
 */
#ifndef SHMEMX_H
#define SHMEMX_H

#include <shmem.h>

#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

/* Persistent collectives: a request built once by shmemx_*_init, started
 * and waited for any number of times, freed by shmemx_req_free. */
typedef struct dsm_coll_req *shmemx_req_t;
#define SHMEMX_HAVE_PERSISTENT_COLL 1

/* ---- SOS compatibility (shmemx_sos(3)) ----
 * Programs written for Sandia OpenSHMEM test these before defining their
 * own fallbacks (e.g. a static shmemx_wtime). */
#define HAVE_SHMEMX_WTIME 1
/* shmem_malloc_with_hints: SOS's hint to leave out the allocation's
 * closing barrier. Accepted; dmashmem keeps the barrier, where the PEs
 * agree on the result (every PE gets the block or every PE NULL). */
#define SHMEMX_MALLOC_NO_BARRIER (1L << 2)
/* The PEs on this node: the PEs whose memory this PE maps, which is
 * SHMEM_TEAM_SHARED here (a real handle, as in SOS). */
#ifdef __cplusplus
extern "C" {
#endif
extern shmem_team_t SHMEMX_TEAM_NODE;
#ifdef __cplusplus
}
#endif
/* SOS's performance counters, filled by shmemx_pcntr_get_all. */
typedef struct {
    uint64_t pending_put;   /* = shmemx_pcntr_get_issued_write */
    uint64_t pending_get;   /* = shmemx_pcntr_get_issued_read */
    uint64_t completed_put; /* = shmemx_pcntr_get_completed_write */
    uint64_t completed_get; /* = shmemx_pcntr_get_completed_read */
    uint64_t target;        /* = shmemx_pcntr_get_completed_target */
} shmemx_pcntr_t;
/* SOS's names of the bitwise AMOs and of the active-set sync from before
 * they were standard (OpenSHMEM 1.4): the standard routines. */
#define shmemx_int32_atomic_and shmem_int32_atomic_and
#define shmemx_ctx_int32_atomic_and shmem_ctx_int32_atomic_and
#define shmemx_int32_atomic_or shmem_int32_atomic_or
#define shmemx_ctx_int32_atomic_or shmem_ctx_int32_atomic_or
#define shmemx_int32_atomic_xor shmem_int32_atomic_xor
#define shmemx_ctx_int32_atomic_xor shmem_ctx_int32_atomic_xor
#define shmemx_int32_atomic_fetch_and shmem_int32_atomic_fetch_and
#define shmemx_ctx_int32_atomic_fetch_and shmem_ctx_int32_atomic_fetch_and
#define shmemx_int32_atomic_fetch_or shmem_int32_atomic_fetch_or
#define shmemx_ctx_int32_atomic_fetch_or shmem_ctx_int32_atomic_fetch_or
#define shmemx_int32_atomic_fetch_xor shmem_int32_atomic_fetch_xor
#define shmemx_ctx_int32_atomic_fetch_xor shmem_ctx_int32_atomic_fetch_xor
#define shmemx_int64_atomic_and shmem_int64_atomic_and
#define shmemx_ctx_int64_atomic_and shmem_ctx_int64_atomic_and
#define shmemx_int64_atomic_or shmem_int64_atomic_or
#define shmemx_ctx_int64_atomic_or shmem_ctx_int64_atomic_or
#define shmemx_int64_atomic_xor shmem_int64_atomic_xor
#define shmemx_ctx_int64_atomic_xor shmem_ctx_int64_atomic_xor
#define shmemx_int64_atomic_fetch_and shmem_int64_atomic_fetch_and
#define shmemx_ctx_int64_atomic_fetch_and shmem_ctx_int64_atomic_fetch_and
#define shmemx_int64_atomic_fetch_or shmem_int64_atomic_fetch_or
#define shmemx_ctx_int64_atomic_fetch_or shmem_ctx_int64_atomic_fetch_or
#define shmemx_int64_atomic_fetch_xor shmem_int64_atomic_fetch_xor
#define shmemx_ctx_int64_atomic_fetch_xor shmem_ctx_int64_atomic_fetch_xor
#define shmemx_uint32_atomic_and shmem_uint32_atomic_and
#define shmemx_ctx_uint32_atomic_and shmem_ctx_uint32_atomic_and
#define shmemx_uint32_atomic_or shmem_uint32_atomic_or
#define shmemx_ctx_uint32_atomic_or shmem_ctx_uint32_atomic_or
#define shmemx_uint32_atomic_xor shmem_uint32_atomic_xor
#define shmemx_ctx_uint32_atomic_xor shmem_ctx_uint32_atomic_xor
#define shmemx_uint32_atomic_fetch_and shmem_uint32_atomic_fetch_and
#define shmemx_ctx_uint32_atomic_fetch_and shmem_ctx_uint32_atomic_fetch_and
#define shmemx_uint32_atomic_fetch_or shmem_uint32_atomic_fetch_or
#define shmemx_ctx_uint32_atomic_fetch_or shmem_ctx_uint32_atomic_fetch_or
#define shmemx_uint32_atomic_fetch_xor shmem_uint32_atomic_fetch_xor
#define shmemx_ctx_uint32_atomic_fetch_xor shmem_ctx_uint32_atomic_fetch_xor
#define shmemx_uint64_atomic_and shmem_uint64_atomic_and
#define shmemx_ctx_uint64_atomic_and shmem_ctx_uint64_atomic_and
#define shmemx_uint64_atomic_or shmem_uint64_atomic_or
#define shmemx_ctx_uint64_atomic_or shmem_ctx_uint64_atomic_or
#define shmemx_uint64_atomic_xor shmem_uint64_atomic_xor
#define shmemx_ctx_uint64_atomic_xor shmem_ctx_uint64_atomic_xor
#define shmemx_uint64_atomic_fetch_and shmem_uint64_atomic_fetch_and
#define shmemx_ctx_uint64_atomic_fetch_and shmem_ctx_uint64_atomic_fetch_and
#define shmemx_uint64_atomic_fetch_or shmem_uint64_atomic_fetch_or
#define shmemx_ctx_uint64_atomic_fetch_or shmem_ctx_uint64_atomic_fetch_or
#define shmemx_uint64_atomic_fetch_xor shmem_uint64_atomic_fetch_xor
#define shmemx_ctx_uint64_atomic_fetch_xor shmem_ctx_uint64_atomic_fetch_xor
#define shmemx_uint_atomic_and shmem_uint_atomic_and
#define shmemx_ctx_uint_atomic_and shmem_ctx_uint_atomic_and
#define shmemx_uint_atomic_or shmem_uint_atomic_or
#define shmemx_ctx_uint_atomic_or shmem_ctx_uint_atomic_or
#define shmemx_uint_atomic_xor shmem_uint_atomic_xor
#define shmemx_ctx_uint_atomic_xor shmem_ctx_uint_atomic_xor
#define shmemx_uint_atomic_fetch_and shmem_uint_atomic_fetch_and
#define shmemx_ctx_uint_atomic_fetch_and shmem_ctx_uint_atomic_fetch_and
#define shmemx_uint_atomic_fetch_or shmem_uint_atomic_fetch_or
#define shmemx_ctx_uint_atomic_fetch_or shmem_ctx_uint_atomic_fetch_or
#define shmemx_uint_atomic_fetch_xor shmem_uint_atomic_fetch_xor
#define shmemx_ctx_uint_atomic_fetch_xor shmem_ctx_uint_atomic_fetch_xor
#define shmemx_ulong_atomic_and shmem_ulong_atomic_and
#define shmemx_ctx_ulong_atomic_and shmem_ctx_ulong_atomic_and
#define shmemx_ulong_atomic_or shmem_ulong_atomic_or
#define shmemx_ctx_ulong_atomic_or shmem_ctx_ulong_atomic_or
#define shmemx_ulong_atomic_xor shmem_ulong_atomic_xor
#define shmemx_ctx_ulong_atomic_xor shmem_ctx_ulong_atomic_xor
#define shmemx_ulong_atomic_fetch_and shmem_ulong_atomic_fetch_and
#define shmemx_ctx_ulong_atomic_fetch_and shmem_ctx_ulong_atomic_fetch_and
#define shmemx_ulong_atomic_fetch_or shmem_ulong_atomic_fetch_or
#define shmemx_ctx_ulong_atomic_fetch_or shmem_ctx_ulong_atomic_fetch_or
#define shmemx_ulong_atomic_fetch_xor shmem_ulong_atomic_fetch_xor
#define shmemx_ctx_ulong_atomic_fetch_xor shmem_ctx_ulong_atomic_fetch_xor
#define shmemx_ulonglong_atomic_and shmem_ulonglong_atomic_and
#define shmemx_ctx_ulonglong_atomic_and shmem_ctx_ulonglong_atomic_and
#define shmemx_ulonglong_atomic_or shmem_ulonglong_atomic_or
#define shmemx_ctx_ulonglong_atomic_or shmem_ctx_ulonglong_atomic_or
#define shmemx_ulonglong_atomic_xor shmem_ulonglong_atomic_xor
#define shmemx_ctx_ulonglong_atomic_xor shmem_ctx_ulonglong_atomic_xor
#define shmemx_ulonglong_atomic_fetch_and shmem_ulonglong_atomic_fetch_and
#define shmemx_ctx_ulonglong_atomic_fetch_and shmem_ctx_ulonglong_atomic_fetch_and
#define shmemx_ulonglong_atomic_fetch_or shmem_ulonglong_atomic_fetch_or
#define shmemx_ctx_ulonglong_atomic_fetch_or shmem_ctx_ulonglong_atomic_fetch_or
#define shmemx_ulonglong_atomic_fetch_xor shmem_ulonglong_atomic_fetch_xor
#define shmemx_ctx_ulonglong_atomic_fetch_xor shmem_ctx_ulonglong_atomic_fetch_xor
#define shmemx_sync shmem_sync
/* SOS's team API from before OpenSHMEM 1.5 made it standard (the SOS 1.4.x
 * shmemx_team_* proposal, still in copies of the spec's team examples):
 * the standard types, handles and routines under their old names. */
typedef shmem_team_t shmemx_team_t;
typedef shmem_team_config_t shmemx_team_config_t;
#define SHMEMX_TEAM_WORLD SHMEM_TEAM_WORLD
#define SHMEMX_TEAM_SHARED SHMEM_TEAM_SHARED
#define SHMEMX_TEAM_INVALID SHMEM_TEAM_INVALID
#define SHMEMX_TEAM_NUM_CONTEXTS SHMEM_TEAM_NUM_CONTEXTS
#define SHMEMX_CTX_INVALID SHMEM_CTX_INVALID
#define shmemx_team_my_pe shmem_team_my_pe
#define shmemx_team_n_pes shmem_team_n_pes
#define shmemx_team_get_config shmem_team_get_config
#define shmemx_team_translate_pe shmem_team_translate_pe
#define shmemx_team_split_strided shmem_team_split_strided
#define shmemx_team_split_2d shmem_team_split_2d
#define shmemx_team_create_ctx shmem_team_create_ctx
#define shmemx_ctx_get_team shmem_ctx_get_team
#define shmemx_team_sync shmem_team_sync
#define shmemx_team_destroy shmem_team_destroy
/* SOS's point-to-point synchronization on arrays from before OpenSHMEM 1.5
 * (shmemx_<T>_test_all/any/some, _wait_until_all/any/some): the _all forms
 * take no status array (the standard routines with status NULL), the
 * _any/_some forms are the standard ones. */
#define DSM_SOSX_P2P_(T, N)                                                    \
    static inline int shmemx_##N##_test_all(T *ivars, size_t nelems, int cmp, \
                                            T cmp_value)                       \
    {                                                                          \
        return shmem_##N##_test_all(ivars, nelems, NULL, cmp, cmp_value);      \
    }                                                                          \
    static inline size_t shmemx_##N##_test_any(T *ivars, size_t nelems,        \
                                               int *status, int cmp,           \
                                               T cmp_value)                    \
    {                                                                          \
        return shmem_##N##_test_any(ivars, nelems, status, cmp, cmp_value);    \
    }                                                                          \
    static inline size_t shmemx_##N##_test_some(T *ivars, size_t nelems,       \
                                                size_t *indices, int *status,  \
                                                int cmp, T cmp_value)          \
    {                                                                          \
        return shmem_##N##_test_some(ivars, nelems, indices, status, cmp,      \
                                     cmp_value);                               \
    }                                                                          \
    static inline void shmemx_##N##_wait_until_all(T *ivars, size_t nelems,    \
                                                   int cmp, T cmp_value)       \
    {                                                                          \
        shmem_##N##_wait_until_all(ivars, nelems, NULL, cmp, cmp_value);       \
    }                                                                          \
    static inline size_t shmemx_##N##_wait_until_any(T *ivars, size_t nelems,  \
                                                     int *status, int cmp,     \
                                                     T cmp_value)              \
    {                                                                          \
        return shmem_##N##_wait_until_any(ivars, nelems, status, cmp,          \
                                          cmp_value);                          \
    }                                                                          \
    static inline size_t shmemx_##N##_wait_until_some(                         \
        T *ivars, size_t nelems, size_t *indices, int *status, int cmp,        \
        T cmp_value)                                                           \
    {                                                                          \
        return shmem_##N##_wait_until_some(ivars, nelems, indices, status,     \
                                           cmp, cmp_value);                    \
    }
SHMEM_TYPES_P2P(DSM_SOSX_P2P_)
#undef DSM_SOSX_P2P_
#define SHMEMX_SIGNAL_SET SHMEM_SIGNAL_SET
#define SHMEMX_SIGNAL_ADD SHMEM_SIGNAL_ADD

/* GPU memory (cuda backend): shmem_malloc_with_hints(size,
 * SHMEMX_MALLOC_DEVICE) allocates from the symmetric heap in this PE's GPU
 * (shmemx_malloc_device(3)). The on-stream routines take a CUstream or a
 * cudaStream_t as void * (shmemx_putmem_on_stream(3)). */
#define SHMEMX_MALLOC_DEVICE (1L << 16)
#define SHMEMX_HAVE_CUDA_STREAMS 1
/* shmemx_barrier_on_stream, shmemx_fcollectmem_on_stream and
 * shmemx_alltoallmem_on_stream (shmemx_fcollectmem_on_stream(3)). */
#define SHMEMX_HAVE_CUDA_STREAM_COLL 1
/* The device API: kernels call shmemx_dev_* routines (putmem, getmem,
 * *_nbi, putmem_signal_nbi, signal_wait_until, signal_fetch, quiet, fence,
 * <T>_p/_g, <T>_atomic_*, barrier_all) declared header-only in
 * <shmemx_cuda.h>, with the handle from shmemx_dev_get (shmemx_dev(3)).
 * The same names for HIP kernels over AMD SDMA queues, the kernel writing
 * the packets itself: <shmemx_hip.h> (shmemx_dev_hip(3)). */
#define SHMEMX_HAVE_DEVICE_API 1

#define SHMEM_FN(name) shmemx_##name
#include <shmem/apix.h>
#undef SHMEM_FN

/* SOS's older names of the counter routines (SOS 1.4; its perf_counter
 * test still calls them): "pending" counted issued operations, so each is
 * the routine of the current name (shmemx_pcntr(3)). */
#define shmemx_pcntr_get_pending_put shmemx_pcntr_get_issued_write
#define shmemx_pcntr_get_pending_get shmemx_pcntr_get_issued_read
#define shmemx_pcntr_get_completed_put shmemx_pcntr_get_completed_write
#define shmemx_pcntr_get_completed_get shmemx_pcntr_get_completed_read
/* SOS's name of shmem_signal_fetch from before OpenSHMEM 1.5 made it
 * standard (its 2020 test/shmemx signal_fetch program calls it). */
#define shmemx_signal_fetch shmem_signal_fetch

/* The generic SOS names, as the standard generic ones (C11 or C++). */
#if (defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L) ||            \
    (defined(__cplusplus) && __cplusplus >= 201103L)
#define shmemx_ibput shmem_ibput
#define shmemx_ibget shmem_ibget
#define shmemx_sum_inscan shmem_sum_inscan
#define shmemx_sum_exscan shmem_sum_exscan
#define shmemx_test_all(ivars, nelems, cmp, cmp_value)                         \
    shmem_test_all(ivars, nelems, NULL, cmp, cmp_value)
#define shmemx_test_any shmem_test_any
#define shmemx_test_some shmem_test_some
#define shmemx_wait_until_all(ivars, nelems, cmp, cmp_value)                   \
    shmem_wait_until_all(ivars, nelems, NULL, cmp, cmp_value)
#define shmemx_wait_until_any shmem_wait_until_any
#define shmemx_wait_until_some shmem_wait_until_some
/* shmemx_signal_set(ctx, sig_addr, signal, pe) as SOS offers it, and the
 * plain form: the standard generic names decide by the first argument. */
#define shmemx_signal_add shmem_signal_add
#define shmemx_signal_set shmem_signal_set
#endif

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#endif /* SHMEMX_H */
