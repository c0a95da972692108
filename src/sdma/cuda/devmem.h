/*
 * What the runtime asks of the cuda backend beyond the sdma ops table: the
 * PE's GPU, host memory made reachable by the copy engines, the device heap
 * (cuMemCreate + POSIX fd + cuMemMap), and the on-stream operations. Built
 * only with DSM_BUILD_CUDA; the runtime calls it from src/runtime/gpu.c.
 * Pointers are plain addresses: the runtime never sees a CUDA type.
 */
#ifndef DSM_SDMA_CUDA_DEVMEM_H
#define DSM_SDMA_CUDA_DEVMEM_H

#include <stddef.h>
#include <stdint.h>

#include "sdma/sdma.h"

/* The runtime's settings for the backend (its environment table: the
 * sdma layer reads no environment). Given before dsm_sdma_open. */
/* The settings are the generic GPU settings of the sdma layer (sdma.h). */
typedef dsm_sdma_gpu_settings_t dsm_cuda_settings_t;
void dsm_cuda_configure(const dsm_cuda_settings_t *set);
/* 1 once the cuda backend is open in this process. */
int dsm_cuda_active(void);
int dsm_cuda_device(void);
uint64_t dsm_cuda_uid(void);

/* Pin [p, p+len) and map it for the GPU (cuMemHostRegister DEVICEMAP), so
 * copies and stream memory operations reach it. */
dsm_status_t dsm_cuda_register_host(void *p, size_t len);
/* Undo every dsm_cuda_register_host (before the memory is unmapped). */
void dsm_cuda_unregister_host_all(void);

/* Device heap. create: a new allocation of at least *size bytes on this
 * PE's GPU (*size rounded up to the granularity), its POSIX fd for the
 * peers, and its mapping here. import: map a peer's allocation from its
 * fd (the caller closes fd). unmap: undo either. */
dsm_status_t dsm_cuda_heap_create(size_t *size, int *fd, void **base);
dsm_status_t dsm_cuda_heap_import(int fd, size_t size, void **base);
void dsm_cuda_heap_unmap(void *base);

/* 1 when p is GPU memory (a device heap or any cudaMalloc'ed buffer). */
int dsm_cuda_ptr_is_device(const void *p);
/* Synchronous copy of n bytes (either side may be device memory), on a
 * non-blocking stream of the backend's own (devapi.c), never the legacy
 * stream. */
dsm_status_t dsm_cuda_copy_sync(void *dst, const void *src, size_t n);

/* On a caller's stream (CUstream / cudaStream_t as void *), without host
 * synchronisation, so that they can be captured into a graph. */
dsm_status_t dsm_cuda_memcpy_on_stream(void *dst, const void *src, size_t n,
                                       void *stream);
dsm_status_t dsm_cuda_signal_on_stream(uint64_t *word, uint64_t value, int add,
                                       void *stream);
/* cmp: 0 = word >= value, 1 = word == value. */
dsm_status_t dsm_cuda_wait_on_stream(uint64_t *word, uint64_t value, int eq,
                                     void *stream);
/* Make stream wait until every command handed to s's RMA queues so far
 * has completed. */
dsm_status_t dsm_cuda_quiet_on_stream(dsm_sdma_t *s, void *stream);

/* On-stream collective steps (src/runtime/gpu.c). Both only enqueue.
 * copies: n copies dst[i] <- src[i] of len[i] bytes, unordered among
 * themselves, ordered after earlier work of the stream: one
 * cuMemcpyBatchAsync when the stream is not being captured (graphs cannot
 * hold one), else one cuMemcpyAsync each. */
dsm_status_t dsm_cuda_copies_on_stream(void *const *dst, const void *const *src,
                                       const size_t *len, size_t n,
                                       void *stream);
/* exchange: store 1 into each of the n words out[i] (peers' words, as
 * mapped here), wait until each of my n words in[i] equals 1, then store 0
 * into them, as stream memory operations in that order (as few
 * cuStreamBatchMemOp as the 255-operation limit allows). */
dsm_status_t dsm_cuda_exchange_on_stream(uint64_t *const *out,
                                         uint64_t *const *in, size_t n,
                                         void *stream);

/* The small-block collective kernel on stream (sdma.h's
 * small_coll_on_stream). */
dsm_status_t dsm_cuda_small_coll_on_stream(const dsm_sdma_small_coll_t *c,
                                           void *stream);
/* The LL-form collective kernel on stream (sdma.h's ll_coll_on_stream). */
dsm_status_t dsm_cuda_ll_coll_on_stream(const dsm_sdma_ll_coll_t *c,
                                        void *stream);

/* Launch counts of the library's CUDA calls (SHMEM_CUDA_COUNT_LAUNCHES=1).
 * Returns 0 when counting is off. */
int dsm_cuda_launch_counts(uint64_t *kernels, uint64_t *host_fns);

/* The device API (devapi.c; sdma.h, "Device-initiated requests"): the
 * GPU's address of p, and the request FIFO with its proxy thread. */
uint64_t dsm_cuda_gpu_view(const void *p);
uint64_t dsm_cuda_word_view(uint64_t *w);
uint64_t *dsm_cuda_dev_words(size_t n);
/* 1 when the driver loads modules lazily (CUDA_MODULE_LOADING=LAZY, CUDA's
 * default since 12.2; devapi.c). */
int dsm_cuda_lazy_loading(void);
dsm_status_t dsm_cuda_devfifo_open(const dsm_sdma_devfifo_config_t *c,
                                   dsm_sdma_devfifo_t *out);

/* This backend's GPU memory table (gpu_ops.c), reached by the runtime
 * through dsm_sdma_gpu() only. */
extern const dsm_sdma_gpu_ops_t dsm_cuda_gpu_ops;

#endif /* DSM_SDMA_CUDA_DEVMEM_H */
