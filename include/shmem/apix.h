/*
 * dmashmem extensions (shmemx_), included by shmemx.h with SHMEM_FN(n) =
 * shmemx_##n and by pshmemx.h with pshmemx_##n. No include guard on purpose.
 */
#ifndef SHMEM_FN
#error "include <shmemx.h> or <pshmemx.h>, not <shmem/apix.h>"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Seconds since an arbitrary point in the past (monotonic clock). */
double SHMEM_FN(wtime)(void);

/* GPU memory and streams (shmemx_malloc_device(3),
 * shmemx_putmem_on_stream(3)). stream: a CUstream or cudaStream_t. */
void *SHMEM_FN(malloc_device)(size_t size);
void SHMEM_FN(putmem_on_stream)(void *dest, const void *source, size_t nelems,
                                int pe, void *stream);
void SHMEM_FN(getmem_on_stream)(void *dest, const void *source, size_t nelems,
                                int pe, void *stream);
void SHMEM_FN(putmem_signal_on_stream)(void *dest, const void *source,
                                       size_t nelems, uint64_t *sig_addr,
                                       uint64_t signal, int sig_op, int pe,
                                       void *stream);
void SHMEM_FN(signal_wait_until_on_stream)(uint64_t *sig_addr, int cmp,
                                           uint64_t cmp_value, void *stream);
void SHMEM_FN(quiet_on_stream)(void *stream);
/* Collectives on a stream (shmemx_fcollectmem_on_stream(3)): collective
 * over team, enqueued without host synchronisation (graph-capturable).
 * nelems: bytes per PE. */
int SHMEM_FN(barrier_on_stream)(shmem_team_t team, void *stream);
int SHMEM_FN(fcollectmem_on_stream)(shmem_team_t team, void *dest,
                                    const void *source, size_t nelems,
                                    void *stream);
int SHMEM_FN(alltoallmem_on_stream)(shmem_team_t team, void *dest,
                                    const void *source, size_t nelems,
                                    void *stream);

/* Persistent collectives (shmemx_req(3)). Both inits are collective over
 * team and keep SHMEM_PRELAUNCH_DEPTH instances posted ahead; dest and
 * source must stay valid until shmemx_req_free. */
int SHMEM_FN(fcollectmem_init)(shmem_team_t team, void *dest,
                               const void *source, size_t nbytes,
                               shmemx_req_t *req);
int SHMEM_FN(alltoallmem_init)(shmem_team_t team, void *dest,
                               const void *source, size_t nbytes,
                               shmemx_req_t *req);
int SHMEM_FN(req_start)(shmemx_req_t req);
int SHMEM_FN(req_wait)(shmemx_req_t req);
int SHMEM_FN(req_free)(shmemx_req_t req);

/* ---- SOS compatibility (shmemx_sos(3)): the names Sandia OpenSHMEM gave
 * routines before OpenSHMEM 1.6 made them standard. Each is the standard
 * routine under the SOS name. ---- */
/* Declared with shmem/api_amo.h's macros (SHMEM_FN is shmemx_ here). */
SHMEM_TYPES_RMA(SHMEM_DECL_IB_T)
SHMEM_SIZES(SHMEM_DECL_IB_SIZE)
SHMEM_DECL_SIGNAL_ADD_SET()

#define SHMEMX_DECL_SCAN(T, N)                                                 \
    int SHMEM_FN(N##_sum_inscan)(shmem_team_t team, T * dest,                 \
                                 const T *source, size_t nelems);              \
    int SHMEM_FN(N##_sum_exscan)(shmem_team_t team, T * dest,                 \
                                 const T *source, size_t nelems);
SHMEM_TYPES_REDUCE_ARITH(SHMEMX_DECL_SCAN)
#undef SHMEMX_DECL_SCAN

/* Performance counters of a context (shmemx_pcntr(3)). */
void SHMEM_FN(pcntr_get_issued_write)(shmem_ctx_t ctx, uint64_t *cntr_value);
void SHMEM_FN(pcntr_get_issued_read)(shmem_ctx_t ctx, uint64_t *cntr_value);
void SHMEM_FN(pcntr_get_completed_write)(shmem_ctx_t ctx,
                                         uint64_t *cntr_value);
void SHMEM_FN(pcntr_get_completed_read)(shmem_ctx_t ctx, uint64_t *cntr_value);
void SHMEM_FN(pcntr_get_completed_target)(uint64_t *cntr_value);
void SHMEM_FN(pcntr_get_all)(shmem_ctx_t ctx, shmemx_pcntr_t *pcntr);

/* A thread-id function for threading packages (shmemx_sos(3)). */
void SHMEM_FN(register_gettid)(uint64_t (*gettid_fn)(void));

#ifdef __cplusplus
}
#endif
