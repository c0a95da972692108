/*
 * What a DMA backend implements, and the layer's private state.
 *
 * A backend fills one const dsm_sdma_backend_ops_t. The layer above (queue.c,
 * proxy.c) owns the command rings and sequence numbers; a backend only turns
 * "commands [completed, upto) of this queue are ready" into engine work and
 * reports how far each queue has completed.
 *   cpu   engine threads executing the rings with memcpy and atomics
 *   cuda  one CUstream per queue: COPY runs -> cuMemcpyBatchAsync, WAIT ->
 *         cuStreamWaitValue64, SIGNAL -> cuStreamWriteValue64, completion ->
 *         a 64-bit sequence written to pinned host memory after each batch
 *   hsa   SDMA queues (hsaKmtCreateQueue) fed with packets: COPY ->
 *         COPY_LINEAR, WAIT -> POLL_REGMEM, SIGNAL -> FENCE, SIGNAL_ADD ->
 *         ATOMIC add64, completion -> a FENCE of the queue's sequence
 */
#ifndef DSM_SDMA_BACKEND_H
#define DSM_SDMA_BACKEND_H

#include "sdma/sdma.h"

struct dsm_sdma_backend_ops {
    size_t size; /* sizeof(dsm_sdma_backend_ops_t): a version check */
    const char *name;
    /* DSM_OK when the backend can run here (device present, driver loads). */
    dsm_status_t (*probe)(void);
    /* Create engines (threads, streams) for s->num_engines engines. */
    dsm_status_t (*open)(dsm_sdma_t *s);
    /* Stop engines; every queue is idle when this is called. */
    void (*close)(dsm_sdma_t *s);
    dsm_status_t (*queue_init)(dsm_sdma_queue_t *q);
    void (*queue_fini)(dsm_sdma_queue_t *q);
    /* Doorbell: commands [q->submitted, upto) are now the engine's. The
     * layer has already published them; the backend makes the engine see
     * them (wake a thread, launch a batch on a stream). */
    void (*submit)(dsm_sdma_queue_t *q, uint64_t upto);
    /* How far q has completed. help = 1 lets a waiting caller execute the
     * queue itself where that is possible (cpu). */
    uint64_t (*poll)(dsm_sdma_queue_t *q, int help);
    uint32_t (*caps)(const dsm_sdma_t *s);
    /* One line for SHMEM_INFO: how the engines are driven here (which
     * queues, which library, which fallback), or NULL. */
    const char *(*describe)(const dsm_sdma_t *s);
    /* GPU backends: their GPU memory (sdma.h) and its settings, given
     * before open. NULL for the others. */
    const dsm_sdma_gpu_ops_t *gpu;
    void (*gpu_configure)(const dsm_sdma_gpu_settings_t *set);
};

/* A request travelling from an application thread to the proxy. */
typedef struct dsm_sdma_req {
    uint64_t seq; /* ring slot state (Vyukov bounded queue) */
    dsm_cmd_t cmd;
    int engine;
} dsm_sdma_req_t;

#define DSM_SDMA_MAX_QUEUES 256

struct dsm_sdma {
    const dsm_sdma_backend_ops_t *ops;
    void *priv; /* backend state */
    dsm_sdma_config_t cfg;
    int num_engines;
    dsm_wake_t *wake;
    dsm_wake_t *app_wake;

    /* Queues: the first num_engines are the RMA queues fed by the proxy;
     * chain queues follow. Appended under queues_lock, never removed before
     * close, so readers may scan [0, num_queues) without the lock. */
    dsm_sdma_queue_t *queues[DSM_SDMA_MAX_QUEUES];
    int num_queues;
    pthread_mutex_t queues_lock;

    /* Proxy request ring (multi-producer, one consumer at a time). */
    dsm_sdma_req_t *req;
    uint64_t req_mask;
    uint64_t req_head DSM_ALIGNED_CL; /* producers reserve here */
    uint64_t req_tail DSM_ALIGNED_CL; /* the progress lock holder takes */

    /* Whoever holds progress_lock is "the proxy" for the moment: the proxy
     * thread, or an application thread that waits and lends a hand. */
    pthread_mutex_t progress_lock DSM_ALIGNED_CL;
    pthread_t proxy;
    int proxy_running;
    int caller_submit; /* submission at issue (sdma.c submit_left):
                        * DSM_SDMA_CAP_CALLER_SUBMIT and no proxy thread */
    volatile int stopping;
    dsm_sdma_stats_t proxy_stats;
};

extern const dsm_sdma_backend_ops_t dsm_sdma_cpu_ops;
#ifdef DSM_BUILD_CUDA
extern const dsm_sdma_backend_ops_t dsm_sdma_cuda_ops;
#endif
#ifdef DSM_HAVE_HSA
extern const dsm_sdma_backend_ops_t dsm_sdma_hsa_ops;
#endif

/* Internal to the layer. */
dsm_status_t dsm_sdma_queue_new(dsm_sdma_t *s, int engine, int chain,
                                dsm_sdma_queue_t **out);
void dsm_sdma_queue_free(dsm_sdma_queue_t *q);
/* Append without ringing; the caller holds q->lock. Returns 0 if full. */
int dsm_sdma_queue_append_locked(dsm_sdma_queue_t *q, const dsm_cmd_t *cmd);
/* Ring q's doorbell for everything appended; caller holds q->lock. */
void dsm_sdma_queue_ring_locked(dsm_sdma_queue_t *q);
/* Retire what q completed; caller holds s->progress_lock. Returns count. */
uint64_t dsm_sdma_queue_retire(dsm_sdma_queue_t *q, int help);
void dsm_sdma_proxy_start(dsm_sdma_t *s);
/* 1 when the request ring holds something (no lock taken). */
static inline int dsm_sdma_requests_pending(const dsm_sdma_t *s)
{
    const dsm_sdma_req_t *cell = &s->req[s->req_tail & s->req_mask];
    return __atomic_load_n(&cell->seq, __ATOMIC_ACQUIRE) == s->req_tail + 1;
}
void dsm_sdma_proxy_stop(dsm_sdma_t *s);
/* Execute one command with plain CPU loads and stores (cpu backend and the
 * host-memory fallback of other backends). Returns 0 if it is a WAIT whose
 * condition does not hold yet. */
int dsm_sdma_exec_cpu(const dsm_cmd_t *cmd);

static inline uint64_t dsm_sdma_now(const dsm_sdma_t *s)
{
    return s->cfg.stats ? dsm_now_ns() : 0;
}

#endif /* DSM_SDMA_BACKEND_H */
