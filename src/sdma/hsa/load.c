/*
 * Run-time loading of hsa-runtime64 and the thunk (as cu.c does for
 * libcuda): nothing is linked, so a build with ROCm headers runs the cpu
 * backend where ROCm or a GPU is missing.
 */
#include "sdma/hsa/hsa_int.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#define DEFAULT_HSA_LIB "libhsa-runtime64.so.1"
#define DEFAULT_KMT_LIB "libhsakmt.so.1"

static void *sym(void *lib, const char *name)
{
    return lib ? dlsym(lib, name) : NULL;
}

/* A symbol into a typed pointer without a cast between object and
 * function pointers (which -Wpedantic frowns on). */
#define TAKE(lib, field, name)                                                 \
    do {                                                                       \
        void *p_ = sym(lib, name);                                             \
        memcpy(&api->field, &p_, sizeof(p_));                                  \
    } while (0)

int dsm_hsa_api_load(dsm_hsa_api_t *api, const char *path, char *why,
                     size_t whylen)
{
    const char *lib = path && *path ? path : DEFAULT_HSA_LIB;

    memset(api, 0, sizeof(*api));
    api->lib = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!api->lib) {
        snprintf(why, whylen, "cannot load %s (%s)", lib, dlerror());
        return -1;
    }
    TAKE(api->lib, init, "hsa_init");
    TAKE(api->lib, shut_down, "hsa_shut_down");
    TAKE(api->lib, iterate_agents, "hsa_iterate_agents");
    TAKE(api->lib, agent_get_info, "hsa_agent_get_info");
    TAKE(api->lib, status_string, "hsa_status_string");
    TAKE(api->lib, memory_lock, "hsa_amd_memory_lock");
    TAKE(api->lib, memory_unlock, "hsa_amd_memory_unlock");
    TAKE(api->lib, async_copy, "hsa_amd_memory_async_copy");
    TAKE(api->lib, signal_create, "hsa_signal_create");
    TAKE(api->lib, signal_destroy, "hsa_signal_destroy");
    TAKE(api->lib, signal_load, "hsa_signal_load_scacquire");
    TAKE(api->lib, iterate_pools, "hsa_amd_agent_iterate_memory_pools");
    TAKE(api->lib, pool_get_info, "hsa_amd_memory_pool_get_info");
    TAKE(api->lib, pool_allocate, "hsa_amd_memory_pool_allocate");
    TAKE(api->lib, pool_free, "hsa_amd_memory_pool_free");
    TAKE(api->lib, ipc_create, "hsa_amd_ipc_memory_create");
    TAKE(api->lib, ipc_attach, "hsa_amd_ipc_memory_attach");
    TAKE(api->lib, ipc_detach, "hsa_amd_ipc_memory_detach");
    TAKE(api->lib, memory_copy, "hsa_memory_copy");
    TAKE(api->lib, pointer_info, "hsa_amd_pointer_info");
    TAKE(api->lib, model_kick, "hsa_model_kick");
    api->model = sym(api->lib, "hsa_model_version") != NULL;
    if (!api->init || !api->shut_down || !api->iterate_agents ||
        !api->agent_get_info || !api->memory_lock || !api->memory_unlock) {
        snprintf(why, whylen, "%s lacks the hsa_* entry points", lib);
        goto err;
    }

    /* The thunk: the copy ROCr itself uses. */
    void *kmt = api->lib;
    api->kmt_from = lib;
    if (!sym(kmt, "hsaKmtCreateQueue")) {
        kmt = dlopen(DEFAULT_KMT_LIB, RTLD_NOW | RTLD_NOLOAD);
        if (!kmt)
            kmt = dlopen(DEFAULT_KMT_LIB, RTLD_NOW | RTLD_LOCAL);
        api->kmtlib = kmt;
        api->kmt_from = DEFAULT_KMT_LIB;
    }
    TAKE(kmt, kmt_open, "hsaKmtOpenKFD");
    TAKE(kmt, kmt_close, "hsaKmtCloseKFD");
    TAKE(kmt, create_queue, "hsaKmtCreateQueue");
    TAKE(kmt, destroy_queue, "hsaKmtDestroyQueue");
    TAKE(kmt, create_event, "hsaKmtCreateEvent");
    TAKE(kmt, destroy_event, "hsaKmtDestroyEvent");
    TAKE(kmt, wait_on_event, "hsaKmtWaitOnEvent");
    TAKE(kmt, set_event, "hsaKmtSetEvent");
    TAKE(kmt, create_queue_ext, "hsaKmtCreateQueueExt");
    /* The model offers it unless told not to (HSA_MODEL_NO_QUEUE_EXT=1),
     * so that both thunks can be tested. */
    if (api->model && api->create_queue_ext) {
        int (*ext)(void) = NULL;
        void *p = sym(api->lib, "hsa_model_queue_ext");
        memcpy(&ext, &p, sizeof(p));
        if (ext && !ext())
            api->create_queue_ext = NULL;
    }
    if (!api->kmt_open || !api->kmt_close || !api->create_queue ||
        !api->destroy_queue || !api->create_event || !api->destroy_event ||
        !api->wait_on_event) {
        /* Not fatal: the backend may still run on async copies. */
        api->create_queue = NULL;
        api->kmt_from = NULL;
    }
    return 0;

err:
    dsm_hsa_api_unload(api);
    return -1;
}

void dsm_hsa_api_unload(dsm_hsa_api_t *api)
{
    if (api->kmtlib)
        dlclose(api->kmtlib);
    if (api->lib)
        dlclose(api->lib);
    memset(api, 0, sizeof(*api));
}
