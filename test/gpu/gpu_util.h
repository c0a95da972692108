/*
 * Shared by the GPU tests and bench/gpu_bench.c: the few CUDA driver calls
 * a program needs to fill and check device memory and to drive a stream,
 * loaded at run time like the library does (no link-time CUDA dependency),
 * and the "skip" rule: gpu_skip_unless_gpu() exits 77 before shmem_init
 * when no driver or no GPU is found, so CI machines without one stay green.
 */
#ifndef DSM_TEST_GPU_UTIL_H
#define DSM_TEST_GPU_UTIL_H

#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GPU_CU_LIST_12(X) X(CtxGetDevice) X(CtxSynchronize)
#define GPU_CU_LIST(X)                                                         \
    X(Init)                                                                    \
    X(DeviceGetCount)                                                          \
    X(CtxGetCurrent)                                                           \
    X(CtxSetCurrent)                                                           \
    X(MemAlloc)                                                                \
    X(MemFree)                                                                 \
    X(MemcpyHtoD)                                                              \
    X(MemcpyDtoH)                                                              \
    X(MemcpyDtoHAsync)                                                         \
    X(MemcpyHtoDAsync)                                                         \
    X(MemsetD8)                                                                \
    X(StreamCreate)                                                            \
    X(StreamDestroy)                                                           \
    X(StreamSynchronize)                                                       \
    X(StreamBeginCapture)                                                      \
    X(StreamEndCapture)                                                        \
    X(GraphInstantiateWithFlags)                                                      \
    X(GraphLaunch)                                                             \
    X(GraphExecDestroy)                                                        \
    X(GraphDestroy)                                                            \
    X(GetErrorString)

static struct {
#define GPU_CU_FIELD(n) __typeof__(&cu##n) n;
    GPU_CU_LIST(GPU_CU_FIELD)
    /* Asked for at the 12.0 ABI: at 13.0 the driver hands out
     * cuCtxGetDevice_v2 (device, ctx) and cuCtxSynchronize_v2 (ctx) under
     * these names. Called without its context, the latter took whatever
     * the register held: gpu_devword's ahead_sync got "context is
     * destroyed" at once instead of waiting, as soon as its main() was
     * laid out differently (2026-12-07). */
    GPU_CU_LIST_12(GPU_CU_FIELD)
#undef GPU_CU_FIELD
} gcu;

typedef CUresult (*gpu_get_proc_t)(const char *, void **, int, cuuint64_t,
                                   CUdriverProcAddressQueryResult *);

/* 0 when the driver and at least one GPU are usable. */
static inline int gpu_load(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    gpu_get_proc_t gp;
    int n = 0;
    if (!lib)
        return -1;
    gp = (gpu_get_proc_t)dlsym(lib, "cuGetProcAddress_v2");
    if (!gp)
        return -1;
#define GPU_CU_GET_AT(name, ver)                                               \
    {                                                                          \
        void *p = NULL;                                                        \
        CUdriverProcAddressQueryResult q;                                      \
        if (gp("cu" #name, &p, ver, 0, &q) != CUDA_SUCCESS || !p)              \
            return -1;                                                         \
        memcpy(&gcu.name, &p, sizeof(p));                                      \
    }
#define GPU_CU_GET(name) GPU_CU_GET_AT(name, CUDA_VERSION)
#define GPU_CU_GET_12(name) GPU_CU_GET_AT(name, 12000)
    GPU_CU_LIST(GPU_CU_GET)
    GPU_CU_LIST_12(GPU_CU_GET_12)
#undef GPU_CU_GET_12
#undef GPU_CU_GET
#undef GPU_CU_GET_AT
    if (gcu.Init(0) != CUDA_SUCCESS || gcu.DeviceGetCount(&n) != CUDA_SUCCESS ||
        n < 1)
        return -1;
    return 0;
}

static inline void gpu_skip_unless_gpu(const char *prog)
{
    if (gpu_load() != 0) {
        printf("SKIP: %s: no CUDA driver or GPU\n", prog);
        fflush(stdout);
        exit(77);
    }
}

#define GPU_CK(call)                                                           \
    do {                                                                       \
        CUresult rc_ = (call);                                                 \
        if (rc_ != CUDA_SUCCESS) {                                             \
            const char *s_ = "?";                                              \
            gcu.GetErrorString(rc_, &s_);                                      \
            fprintf(stderr, "FAIL: %s:%d: %s: %s\n", __FILE__, __LINE__,       \
                    #call, s_);                                                \
            fflush(stderr);                                                    \
            _exit(1);                                                          \
        }                                                                      \
    } while (0)

/* After shmem_init the library's context (the PE's GPU) is current on the
 * initialising thread; make sure, and return it. */
static inline CUcontext gpu_ctx(void)
{
    CUcontext c = NULL;
    GPU_CK(gcu.CtxGetCurrent(&c));
    if (!c) {
        fprintf(stderr, "FAIL: no CUDA context current after shmem_init\n");
        _exit(1);
    }
    return c;
}

#define DP(p) ((CUdeviceptr)(uintptr_t)(p))

/* cuMemsetD8 and cuMemcpyHtoD from pageable memory may return before the
 * GPU is done; a peer's engine may write the same bytes right after the
 * next barrier, so these wait for the stream they ran on. Copies run on a
 * non-blocking stream of the test's own, not the legacy stream: on the
 * H200 a synchronous legacy-stream copy never completed while a copy in
 * the same direction waited behind a persistent request's trigger
 * (test/gpu/probes/gate_probe.c, shmemx_req(3)); GPU_TEST_LEGACY_COPY=1 uses the
 * legacy stream (to show it). */
static inline CUstream gpu_cstream(void)
{
    static CUstream cs;
    static int made;
    if (!made && !getenv("GPU_TEST_LEGACY_COPY"))
        GPU_CK(gcu.StreamCreate(&cs, CU_STREAM_NON_BLOCKING));
    made = 1;
    return cs;
}
static inline void gpu_memset(CUdeviceptr p, unsigned char v, size_t n)
{
    GPU_CK(gcu.MemsetD8(p, v, n));
    GPU_CK(gcu.StreamSynchronize(NULL));
}
static inline void gpu_htod(CUdeviceptr d, const void *h, size_t n)
{
    CUstream cs = gpu_cstream();
    GPU_CK(gcu.MemcpyHtoDAsync(d, h, n, cs));
    GPU_CK(gcu.StreamSynchronize(cs));
}
static inline void gpu_dtoh(void *h, CUdeviceptr d, size_t n)
{
    CUstream cs = gpu_cstream();
    GPU_CK(gcu.MemcpyDtoHAsync(h, d, n, cs));
    GPU_CK(gcu.StreamSynchronize(cs));
}
#define DSM_TEST_MIN(a, b) ((a) < (b) ? (a) : (b))
#define DSM_TEST_ARRAY(a) (sizeof(a) / sizeof((a)[0]))

#endif /* DSM_TEST_GPU_UTIL_H */
