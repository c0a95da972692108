/*
 * Run-time loading of the CUDA driver (cu.h).
 */
#include "sdma/cuda/cu.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

dsm_cu_t dsm_cu;

static struct {
    int enabled;
    uint64_t kernel, kernel_ex, cooperative, host_fn;
    __typeof__(&cuLaunchKernel) LaunchKernel;
    __typeof__(&cuLaunchKernelEx) LaunchKernelEx;
    __typeof__(&cuLaunchCooperativeKernel) LaunchCooperativeKernel;
    __typeof__(&cuLaunchHostFunc) LaunchHostFunc;
} cnt;

static CUresult CUDAAPI count_kernel(CUfunction f, unsigned gx, unsigned gy,
                                     unsigned gz, unsigned bx, unsigned by,
                                     unsigned bz, unsigned shm, CUstream st,
                                     void **args, void **extra)
{
    __atomic_fetch_add(&cnt.kernel, 1, __ATOMIC_RELAXED);
    return cnt.LaunchKernel(f, gx, gy, gz, bx, by, bz, shm, st, args, extra);
}

static CUresult CUDAAPI count_kernel_ex(const CUlaunchConfig *c, CUfunction f,
                                        void **args, void **extra)
{
    __atomic_fetch_add(&cnt.kernel_ex, 1, __ATOMIC_RELAXED);
    return cnt.LaunchKernelEx(c, f, args, extra);
}

static CUresult CUDAAPI count_coop(CUfunction f, unsigned gx, unsigned gy,
                                   unsigned gz, unsigned bx, unsigned by,
                                   unsigned bz, unsigned shm, CUstream st,
                                   void **args)
{
    __atomic_fetch_add(&cnt.cooperative, 1, __ATOMIC_RELAXED);
    return cnt.LaunchCooperativeKernel(f, gx, gy, gz, bx, by, bz, shm, st,
                                       args);
}

static CUresult CUDAAPI count_host_fn(CUstream st, CUhostFn fn, void *arg)
{
    __atomic_fetch_add(&cnt.host_fn, 1, __ATOMIC_RELAXED);
    return cnt.LaunchHostFunc(st, fn, arg);
}

static int count_wanted; /* dsm_cu_count_launches */
static dsm_status_t load_status = DSM_ERR_NO_DEVICE;

/* Interpose the launch entries (cu.h), once, after the driver loaded. */
static void count_setup(void)
{
    if (!count_wanted || cnt.enabled)
        return;
    cnt.enabled = 1;
    cnt.LaunchKernel = dsm_cu.LaunchKernel;
    dsm_cu.LaunchKernel = count_kernel;
    cnt.LaunchHostFunc = dsm_cu.LaunchHostFunc;
    dsm_cu.LaunchHostFunc = count_host_fn;
    if (dsm_cu.LaunchKernelEx) {
        cnt.LaunchKernelEx = dsm_cu.LaunchKernelEx;
        dsm_cu.LaunchKernelEx = count_kernel_ex;
    }
    if (dsm_cu.LaunchCooperativeKernel) {
        cnt.LaunchCooperativeKernel = dsm_cu.LaunchCooperativeKernel;
        dsm_cu.LaunchCooperativeKernel = count_coop;
    }
}

void dsm_cu_launch_counts(dsm_cu_launches_t *out)
{
    out->enabled = cnt.enabled;
    out->kernel = __atomic_load_n(&cnt.kernel, __ATOMIC_RELAXED);
    out->kernel_ex = __atomic_load_n(&cnt.kernel_ex, __ATOMIC_RELAXED);
    out->cooperative = __atomic_load_n(&cnt.cooperative, __ATOMIC_RELAXED);
    out->host_fn = __atomic_load_n(&cnt.host_fn, __ATOMIC_RELAXED);
}

void dsm_cu_count_launches(int on)
{
    count_wanted = on;
    if (load_status == DSM_OK)
        count_setup();
}

static pthread_once_t load_once = PTHREAD_ONCE_INIT;

typedef CUresult (*get_proc_t)(const char *, void **, int, cuuint64_t,
                               CUdriverProcAddressQueryResult *);

static void load(void)
{
    get_proc_t get_proc;
    int n = 0;
    CUresult rc;

    dsm_cu.lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!dsm_cu.lib) {
        dsm_debug("cuda: no driver (%s)", dlerror());
        return;
    }
    /* CUDA 12+ drivers; older ones lack cuMemcpyBatchAsync's world anyway. */
    get_proc = (get_proc_t)dlsym(dsm_cu.lib, "cuGetProcAddress_v2");
    if (!get_proc) {
        dsm_debug("cuda: driver too old (no cuGetProcAddress_v2)");
        goto fail;
    }
    {
        void *p = NULL;
        CUdriverProcAddressQueryResult q;
        if (get_proc("cuDriverGetVersion", &p, 12000, 0, &q) != CUDA_SUCCESS ||
            !p || ((CUresult(*)(int *))p)(&dsm_cu.version) != CUDA_SUCCESS)
            goto fail;
    }
    /* Ask for the ABI of the headers we were built with; a driver older than
     * them gets asked for its own version, and the 12.8 form of
     * cuMemcpyBatchAsync (an extra failIdx argument) is then not used. */
    int want = DSM_MIN(dsm_cu.version, CUDA_VERSION);
#define DSM_CU_GET(name, req)                                                  \
    {                                                                          \
        void *p = NULL;                                                        \
        CUdriverProcAddressQueryResult q = CU_GET_PROC_ADDRESS_SUCCESS;        \
        rc = get_proc("cu" #name, &p, want, 0, &q);                            \
        if (rc != CUDA_SUCCESS || q != CU_GET_PROC_ADDRESS_SUCCESS)            \
            p = NULL;                                                          \
        if (!p && (req)) {                                                     \
            dsm_debug("cuda: driver %d lacks cu" #name, dsm_cu.version);       \
            goto fail;                                                         \
        }                                                                      \
        memcpy(&dsm_cu.name, &p, sizeof(p));                                   \
    }
    DSM_CU_LIST(DSM_CU_GET)
#undef DSM_CU_GET
    if (dsm_cu.version < 13000)
        dsm_cu.MemcpyBatchAsync = NULL;
    rc = dsm_cu.Init(0);
    if (rc != CUDA_SUCCESS) {
        dsm_debug("cuda: cuInit failed: %s", dsm_cu_err(rc));
        goto fail;
    }
    rc = dsm_cu.DeviceGetCount(&n);
    if (rc != CUDA_SUCCESS || n < 1) {
        dsm_debug("cuda: no device");
        goto fail;
    }
    load_status = DSM_OK;
    count_setup();
    return;

fail:
    /* Keep the library loaded: unloading a half-initialised driver is not
     * worth the risk; just never use it. */
    load_status = DSM_ERR_NO_DEVICE;
}

dsm_status_t dsm_cu_load(void)
{
    pthread_once(&load_once, load);
    return load_status;
}

const char *dsm_cu_err(CUresult rc)
{
    const char *s = NULL;
    if (dsm_cu.GetErrorString &&
        dsm_cu.GetErrorString(rc, &s) == CUDA_SUCCESS && s)
        return s;
    return "unknown CUDA error";
}
