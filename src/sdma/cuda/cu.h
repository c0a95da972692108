/*
 * The CUDA driver entry points the cuda backend uses, loaded at run time:
 * dlopen("libcuda.so.1") and cuGetProcAddress for each, so a library built
 * with the CUDA headers still loads (and runs its cpu backend) where no
 * driver is installed. <cuda.h> is included for types and constants only;
 * each pointer has the type of the header's current (versioned) prototype,
 * which is what cuGetProcAddress returns for CUDA_VERSION.
 */
#ifndef DSM_SDMA_CUDA_CU_H
#define DSM_SDMA_CUDA_CU_H

#include <cuda.h>

#include "common/common.h"

/* X(name, required): name without the "cu" prefix. */
#define DSM_CU_LIST(X)                                                         \
    X(Init, 1)                                                                 \
    X(DriverGetVersion, 1)                                                     \
    X(DeviceGetCount, 1)                                                       \
    X(DeviceGet, 1)                                                            \
    X(DeviceGetAttribute, 1)                                                   \
    X(DevicePrimaryCtxRetain, 1)                                               \
    X(DevicePrimaryCtxRelease, 1)                                              \
    X(CtxGetCurrent, 1)                                                        \
    X(CtxSetCurrent, 1)                                                        \
    X(GetErrorString, 1)                                                       \
    X(StreamCreate, 1)                                                         \
    X(StreamDestroy, 1)                                                        \
    X(StreamSynchronize, 1)                                                    \
    X(StreamIsCapturing, 1)                                                    \
    X(StreamWaitEvent, 1)                                                      \
    X(EventCreate, 1)                                                          \
    X(EventRecord, 1)                                                          \
    X(EventDestroy, 1)                                                         \
    X(ModuleGetLoadingMode, 0)                                                 \
    X(MemcpyAsync, 1)                                                          \
    X(MemcpyBatchAsync, 0)                                                     \
    X(StreamWaitValue64, 1)                                                    \
    X(StreamWriteValue64, 1)                                                   \
    X(StreamBatchMemOp, 1)                                                     \
    X(LaunchHostFunc, 1)                                                       \
    X(MemHostAlloc, 1)                                                         \
    X(MemFreeHost, 1)                                                          \
    X(MemHostRegister, 1)                                                      \
    X(MemHostUnregister, 1)                                                    \
    X(MemHostGetDevicePointer, 1)                                              \
    X(MemAlloc, 1)                                                             \
    X(MemFree, 1)                                                              \
    X(PointerGetAttribute, 1)                                                  \
    X(MemCreate, 1)                                                            \
    X(MemRelease, 1)                                                           \
    X(MemExportToShareableHandle, 1)                                           \
    X(MemImportFromShareableHandle, 1)                                         \
    X(MemAddressReserve, 1)                                                    \
    X(MemAddressFree, 1)                                                       \
    X(MemMap, 1)                                                               \
    X(MemUnmap, 1)                                                             \
    X(MemSetAccess, 1)                                                         \
    X(MemGetAllocationGranularity, 1)                                          \
    X(ModuleLoadData, 1)                                                       \
    X(ModuleUnload, 1)                                                         \
    X(ModuleGetFunction, 1)                                                    \
    X(FuncGetAttribute, 1)                                                     \
    X(LaunchKernel, 1)                                                         \
    X(LaunchKernelEx, 0)                                                       \
    X(GraphCreate, 0)                                                          \
    X(GraphAddMemcpyNode, 0)                                                   \
    X(GraphInstantiateWithFlags, 0)                                            \
    X(GraphLaunch, 0)                                                          \
    X(GraphDestroy, 0)                                                         \
    X(GraphExecDestroy, 0)                                                     \
    X(LaunchCooperativeKernel, 0)

typedef struct dsm_cu {
    void *lib;
    int version; /* cuDriverGetVersion */
#define DSM_CU_FIELD(name, req) __typeof__(&cu##name) name;
    DSM_CU_LIST(DSM_CU_FIELD)
#undef DSM_CU_FIELD
} dsm_cu_t;

extern dsm_cu_t dsm_cu;

/* Load the driver and cuInit(0) once. DSM_OK when a usable driver with at
 * least one device is present; the reason otherwise (debug log). */
dsm_status_t dsm_cu_load(void);
/* Short text for a CUresult. */
const char *dsm_cu_err(CUresult rc);

/* Launch counting (SHMEM_CUDA_COUNT_LAUNCHES=1, passed by the runtime
 * through dsm_cuda_configure before the driver loads): the
 * dsm_cu entries that start GPU work other than copies and stream memory
 * operations -- cuLaunchKernel, cuLaunchKernelEx, cuLaunchCooperativeKernel
 * and cuLaunchHostFunc -- are replaced by wrappers that count each call
 * the library makes, then call the driver. Every CUDA call of the library
 * goes through dsm_cu, so the counts are complete for the library's own
 * calls; work the driver starts by itself inside a call (e.g. the SM copy
 * kernels it may use for a copy within one GPU) is not visible here. */
typedef struct dsm_cu_launches {
    int enabled;
    uint64_t kernel, kernel_ex, cooperative, host_fn;
} dsm_cu_launches_t;
void dsm_cu_launch_counts(dsm_cu_launches_t *out);
/* Ask for counting (on = 1); takes effect when the driver is loaded. */
void dsm_cu_count_launches(int on);

#endif /* DSM_SDMA_CUDA_CU_H */
