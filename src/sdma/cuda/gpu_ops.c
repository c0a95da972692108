/*
 * The cuda backend's GPU memory, as the sdma layer's table (sdma.h,
 * dsm_sdma_gpu_ops_t): the runtime reaches the device heap, pointer kinds,
 * host registration and the on-stream operations through it only.
 */
#include "sdma/cuda/devmem.h"

const dsm_sdma_gpu_ops_t dsm_cuda_gpu_ops = {
    .name = "cuda",
    .active = dsm_cuda_active,
    .device = dsm_cuda_device,
    .uid = dsm_cuda_uid,
    .register_host = dsm_cuda_register_host,
    .unregister_host_all = dsm_cuda_unregister_host_all,
    .heap_create = dsm_cuda_heap_create,
    .heap_import = dsm_cuda_heap_import,
    .heap_unmap = dsm_cuda_heap_unmap,
    .ptr_is_device = dsm_cuda_ptr_is_device,
    .copy_sync = dsm_cuda_copy_sync,
    .memcpy_on_stream = dsm_cuda_memcpy_on_stream,
    .signal_on_stream = dsm_cuda_signal_on_stream,
    .wait_on_stream = dsm_cuda_wait_on_stream,
    .quiet_on_stream = dsm_cuda_quiet_on_stream,
    .copies_on_stream = dsm_cuda_copies_on_stream,
    .exchange_on_stream = dsm_cuda_exchange_on_stream,
    .small_coll_on_stream = dsm_cuda_small_coll_on_stream,
    .ll_coll_on_stream = dsm_cuda_ll_coll_on_stream,
    .launch_counts = dsm_cuda_launch_counts,
    .lazy_loading = dsm_cuda_lazy_loading,
    .gpu_view = dsm_cuda_gpu_view,
    .word_view = dsm_cuda_word_view,
    .dev_words = dsm_cuda_dev_words,
    .devfifo_open = dsm_cuda_devfifo_open,
};
