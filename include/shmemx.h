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
 * <shmemx_cuda.h>, with the handle from shmemx_dev_get (shmemx_dev(3)). */
#define SHMEMX_HAVE_DEVICE_API 1

#define SHMEM_FN(name) shmemx_##name
#include <shmem/apix.h>
#undef SHMEM_FN

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#endif /* SHMEMX_H */
