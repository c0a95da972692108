/*
 * The device heap: one cuMemCreate allocation per PE (pinned, exportable
 * as a POSIX file descriptor), passed to the local peers by the runtime's
 * bootstrap, imported and mapped with cuMemAddressReserve / cuMemMap /
 * cuMemSetAccess (read-write for this process's GPU) in every local PE.
 * Each mapping is recorded as device memory for memkind.c.
 */
#include "sdma/cuda/cuda_int.h"

#include <string.h>

#define DSM_CUDA_MAX_MAPS 256

typedef struct cu_map {
    CUdeviceptr va;
    size_t size;
    CUmemGenericAllocationHandle h;
} cu_map_t;

static struct {
    pthread_mutex_t lock;
    cu_map_t m[DSM_CUDA_MAX_MAPS];
} maps = {.lock = PTHREAD_MUTEX_INITIALIZER};

static CUmemAllocationProp heap_prop(void)
{
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof(prop));
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = dsm_cuda_st.ordinal;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    return prop;
}

/* Reserve, map and open for our GPU; records the mapping. */
static CUresult map_here(CUmemGenericAllocationHandle h, size_t size,
                         void **base)
{
    CUmemAllocationProp prop = heap_prop();
    CUmemAccessDesc acc;
    CUdeviceptr va = 0;
    size_t gran = 0;
    CUresult rc;

    rc = dsm_cu.MemGetAllocationGranularity(
        &gran, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED);
    if (rc != CUDA_SUCCESS)
        return rc;
    rc = dsm_cu.MemAddressReserve(&va, size, gran, 0, 0);
    if (rc != CUDA_SUCCESS)
        return rc;
    rc = dsm_cu.MemMap(va, size, 0, h, 0);
    if (rc != CUDA_SUCCESS) {
        dsm_cu.MemAddressFree(va, size);
        return rc;
    }
    memset(&acc, 0, sizeof(acc));
    acc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    acc.location.id = dsm_cuda_st.ordinal;
    acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    rc = dsm_cu.MemSetAccess(va, size, &acc, 1);
    if (rc != CUDA_SUCCESS) {
        dsm_cu.MemUnmap(va, size);
        dsm_cu.MemAddressFree(va, size);
        return rc;
    }
    int slot = -1;
    pthread_mutex_lock(&maps.lock);
    for (int i = 0; i < DSM_CUDA_MAX_MAPS; i++)
        if (!maps.m[i].va) {
            maps.m[i].va = va;
            maps.m[i].size = size;
            maps.m[i].h = h;
            slot = i;
            break;
        }
    pthread_mutex_unlock(&maps.lock);
    if (slot < 0) {
        /* Unrecorded, it could never be unmapped: refuse it (#14). */
        dsm_log_error("cuda: more than %d device heaps mapped in one "
                      "process (one per PE of the node): not mapping another",
                      DSM_CUDA_MAX_MAPS);
        dsm_cu.MemUnmap(va, size);
        dsm_cu.MemAddressFree(va, size);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    dsm_cuda_add_range((uintptr_t)va, size, DSM_CUDA_DEV, 0);
    *base = (void *)(uintptr_t)va;
    return CUDA_SUCCESS;
}

dsm_status_t dsm_cuda_heap_create(size_t *size, int *fd, void **base)
{
    CUmemAllocationProp prop = heap_prop();
    CUmemGenericAllocationHandle h;
    CUcontext prev = dsm_cuda_ctx_enter();
    size_t gran = 0;
    int f = -1;
    CUresult rc;

    rc = dsm_cu.MemGetAllocationGranularity(
        &gran, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED);
    if (rc != CUDA_SUCCESS)
        goto err;
    *size = DSM_ALIGN_UP(*size, gran);
    rc = dsm_cu.MemCreate(&h, *size, &prop, 0);
    if (rc != CUDA_SUCCESS)
        goto err;
    rc = dsm_cu.MemExportToShareableHandle(
        &f, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    if (rc == CUDA_SUCCESS)
        rc = map_here(h, *size, base);
    if (rc == CUDA_SUCCESS) {
        dsm_cuda_st.own_lo = (uintptr_t)*base;
        dsm_cuda_st.own_hi = dsm_cuda_st.own_lo + *size;
    }
    if (rc != CUDA_SUCCESS) {
        if (f >= 0)
            close(f);
        dsm_cu.MemRelease(h);
        goto err;
    }
    dsm_cuda_ctx_leave(prev);
    *fd = f;
    return DSM_OK;
err:
    dsm_cuda_ctx_leave(prev);
    dsm_log_error("shmem_init: cannot create a device heap of %zu bytes on "
                  "GPU %d: %s (lower SHMEM_DEVICE_HEAP_SIZE, or 0 for none)",
                  *size, dsm_cuda_st.ordinal, dsm_cu_err(rc));
    return DSM_ERR_NOMEM;
}

dsm_status_t dsm_cuda_heap_import(int fd, size_t size, void **base)
{
    CUmemGenericAllocationHandle h;
    CUcontext prev = dsm_cuda_ctx_enter();
    CUresult rc;

    rc = dsm_cu.MemImportFromShareableHandle(
        &h, (void *)(uintptr_t)fd, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    if (rc == CUDA_SUCCESS) {
        rc = map_here(h, size, base);
        if (rc != CUDA_SUCCESS)
            dsm_cu.MemRelease(h);
    }
    dsm_cuda_ctx_leave(prev);
    if (rc != CUDA_SUCCESS) {
        dsm_log_error("shmem_init: cannot map a peer's device heap on GPU %d: "
                      "%s (are the GPUs peer-capable?)",
                      dsm_cuda_st.ordinal, dsm_cu_err(rc));
        return DSM_ERR_NO_DEVICE;
    }
    return DSM_OK;
}

void dsm_cuda_heap_unmap(void *base)
{
    CUdeviceptr va = (CUdeviceptr)(uintptr_t)base;
    CUcontext prev = dsm_cuda_ctx_enter();

    dsm_cuda_drop_range((uintptr_t)base);
    if ((uintptr_t)base == dsm_cuda_st.own_lo)
        dsm_cuda_st.own_lo = dsm_cuda_st.own_hi = 0;
    pthread_mutex_lock(&maps.lock);
    for (int i = 0; i < DSM_CUDA_MAX_MAPS; i++)
        if (maps.m[i].va == va) {
            dsm_cu.MemUnmap(va, maps.m[i].size);
            dsm_cu.MemAddressFree(va, maps.m[i].size);
            dsm_cu.MemRelease(maps.m[i].h);
            memset(&maps.m[i], 0, sizeof(maps.m[i]));
        }
    pthread_mutex_unlock(&maps.lock);
    dsm_cuda_ctx_leave(prev);
}
