/*
 * The hsa backend's view of ROCm: the entry points it takes at run time
 * from hsa-runtime64 and the thunk (hsaKmt*), so that one build runs with
 * or without ROCm (the headers give types and constants only; nothing is
 * linked). The engine model (test/hsa/model.c) exports the same names.
 */
#ifndef DSM_SDMA_HSA_INT_H
#define DSM_SDMA_HSA_INT_H

#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <hsakmt.h>

/* The queue type of hsaKmtCreateQueueExt that names the engine (ROCm
 * 6.4's hsakmttypes.h; Debian's 5.2.3 headers lack it). */
#define DSM_HSA_QUEUE_SDMA_BY_ENG_ID ((HSA_QUEUE_TYPE)6)

typedef struct dsm_hsa_api {
    void *lib;    /* hsa-runtime64 (or the model) */
    void *kmtlib; /* libhsakmt.so.1 when the thunk is a separate library */
    const char *kmt_from; /* which library gave the hsaKmt* entry points */
    int model;    /* the library is the engine model (hsa_model_version) */

    hsa_status_t (*init)(void);
    hsa_status_t (*shut_down)(void);
    hsa_status_t (*iterate_agents)(hsa_status_t (*cb)(hsa_agent_t, void *),
                                   void *data);
    hsa_status_t (*agent_get_info)(hsa_agent_t, hsa_agent_info_t, void *);
    hsa_status_t (*status_string)(hsa_status_t, const char **);
    hsa_status_t (*memory_lock)(void *, size_t, hsa_agent_t *, int, void **);
    hsa_status_t (*memory_unlock)(void *);
    /* The fallback where no queue can be created. */
    hsa_status_t (*async_copy)(void *, hsa_agent_t, const void *, hsa_agent_t,
                               size_t, uint32_t, const hsa_signal_t *,
                               hsa_signal_t);
    hsa_status_t (*signal_create)(hsa_signal_value_t, uint32_t,
                                  const hsa_agent_t *, hsa_signal_t *);
    hsa_status_t (*signal_destroy)(hsa_signal_t);
    hsa_signal_value_t (*signal_load)(hsa_signal_t);

    /* The device heap (optional: without them the GPU gives none). */
    hsa_status_t (*iterate_pools)(hsa_agent_t,
                                  hsa_status_t (*cb)(hsa_amd_memory_pool_t,
                                                     void *),
                                  void *data);
    hsa_status_t (*pool_get_info)(hsa_amd_memory_pool_t,
                                  hsa_amd_memory_pool_info_t, void *);
    hsa_status_t (*pool_allocate)(hsa_amd_memory_pool_t, size_t, uint32_t,
                                  void **);
    hsa_status_t (*pool_free)(void *);
    hsa_status_t (*ipc_create)(void *, size_t, hsa_amd_ipc_memory_t *);
    hsa_status_t (*ipc_attach)(const hsa_amd_ipc_memory_t *, size_t,
                               uint32_t, const hsa_agent_t *, void **);
    hsa_status_t (*ipc_detach)(void *);
    hsa_status_t (*memory_copy)(void *, const void *, size_t);
    /* Which memory a pointer is (private hipMalloc'ed buffers). */
    hsa_status_t (*pointer_info)(const void *, hsa_amd_pointer_info_t *,
                                 void *(*)(size_t), uint32_t *,
                                 hsa_agent_t **);

    HSAKMT_STATUS (*kmt_open)(void);
    HSAKMT_STATUS (*kmt_close)(void);
    HSAKMT_STATUS (*create_queue)(HSAuint32, HSA_QUEUE_TYPE, HSAuint32,
                                  HSA_QUEUE_PRIORITY, void *, HSAuint64,
                                  HsaEvent *, HsaQueueResource *);
    HSAKMT_STATUS (*destroy_queue)(HSA_QUEUEID);
    HSAKMT_STATUS (*create_event)(HsaEventDescriptor *, bool, bool,
                                  HsaEvent **);
    HSAKMT_STATUS (*destroy_event)(HsaEvent *);
    HSAKMT_STATUS (*wait_on_event)(HsaEvent *, HSAuint32);
    HSAKMT_STATUS (*set_event)(HsaEvent *); /* optional */
    /* ROCm >= 6.4 (engine choice by id, KFD interface >= 1.17): looked
     * up, optional; the same as create_queue with the engine id after the
     * priority. */
    HSAKMT_STATUS (*create_queue_ext)(HSAuint32, HSA_QUEUE_TYPE, HSAuint32,
                                      HSA_QUEUE_PRIORITY, HSAuint32, void *,
                                      HSAuint64, HsaEvent *,
                                      HsaQueueResource *);
    /* The model only: wake the engine thread after a doorbell store. */
    void (*model_kick)(volatile uint64_t *doorbell);
} dsm_hsa_api_t;

/* Load `path` (NULL: libhsa-runtime64.so.1) and take every entry point;
 * the hsaKmt* ones from that library when it carries the thunk (ROCm >=
 * 6.3: a second copy in one process breaks), else from libhsakmt.so.1.
 * On failure fills why (one line) and leaves nothing loaded. */
int dsm_hsa_api_load(dsm_hsa_api_t *api, const char *path, char *why,
                     size_t whylen);
void dsm_hsa_api_unload(dsm_hsa_api_t *api);

#endif /* DSM_SDMA_HSA_INT_H */
