/*
 * Run-time loading of the CUDA driver (cu.h).
 */
#include "sdma/cuda/cu.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

dsm_cu_t dsm_cu;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static dsm_status_t load_status = DSM_ERR_NO_DEVICE;

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
            dsm_debug("cuda: driver %d lacks cu" #name, dsm_cu.version);      \
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
    if (dsm_cu.GetErrorString && dsm_cu.GetErrorString(rc, &s) == CUDA_SUCCESS &&
        s)
        return s;
    return "unknown CUDA error";
}
