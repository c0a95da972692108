/*
 * hsa backend: AMD SDMA queues driven by packets (shmemx_sdma_pkt.h),
 * through ROCr and the thunk loaded at run time (load.c).
 *
 * Every queue of the layer is one SDMA queue of the PE's GPU, created with
 * hsaKmtCreateQueue(HSA_QUEUE_SDMA) (or hsaKmtCreateQueueExt on the engine
 * SHMEM_HSA_SDMA_ENGINE names) on a ring in host memory locked for the
 * GPU; hsa_submit.c turns commands into packets on it. Where no SDMA queue
 * can be created the backend falls back to hsa_amd_memory_async_copy
 * (hsa_async.c). Memory the engines touch is locked per command or is
 * device memory (hsa_mem.c); kernels get an SDMA queue of their own
 * (hsa_devq.c). hsa_int.h lists the files.
 *
 * This file holds the backend's life: probe (the GPU of this local rank),
 * open (SDMA queue or async fallback, the event thread), the queues of the
 * layer (creation under SHMEM_HSA_MAX_QUEUES, teardown), close, the
 * capabilities, SHMEM_INFO's line and the ops table.
 */
#include "sdma/backend.h"
#include "sdma/hsa/hsa_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RING_BYTES (256u * 1024u)
#define EVENT_WAIT_MS 100u

dsm_hsa_state_t dsm_hsa = {.set = {.device = -1, .hsa_sdma_engine = -1}};

static void hsa_configure(const dsm_sdma_gpu_settings_t *set)
{
    dsm_hsa.set = *set;
}

/* SHMEM_HSA_MAX_QUEUES: take one of the process's SDMA queues, or refuse
 * with one line. Hardware offers a few dozen SDMA queues per process and
 * the model one host thread per queue; without a cap every chain queue
 * of the layer (persistent collectives: ~115 per PE on 4 PEs) is one. */
int dsm_hsa_queue_take(const char *what)
{
    int n = __atomic_add_fetch(&dsm_hsa.nqueues, 1, __ATOMIC_ACQ_REL);
    if (dsm_hsa.set.hsa_max_queues > 0 && n > dsm_hsa.set.hsa_max_queues) {
        __atomic_sub_fetch(&dsm_hsa.nqueues, 1, __ATOMIC_ACQ_REL);
        dsm_log_error("hsa backend: %s refused: SHMEM_HSA_MAX_QUEUES=%ld "
                      "SDMA queues per process are in use (the RMA, chain "
                      "and device API queues count)",
                      what, dsm_hsa.set.hsa_max_queues);
        return 0;
    }
    return 1;
}

void dsm_hsa_queue_give(void)
{
    __atomic_sub_fetch(&dsm_hsa.nqueues, 1, __ATOMIC_ACQ_REL);
}

/* Create an SDMA queue on ring: on the engine SHMEM_HSA_SDMA_ENGINE names
 * (hsaKmtCreateQueueExt), else where the driver puts it. */
HSAKMT_STATUS dsm_hsa_make_queue(void *ring, uint64_t size,
                                 HsaQueueResource *res)
{
    if (dsm_hsa.set.hsa_sdma_engine >= 0)
        return dsm_hsa.api.create_queue_ext(
            dsm_hsa.node, DSM_HSA_QUEUE_SDMA_BY_ENG_ID, 100,
            HSA_QUEUE_PRIORITY_MAXIMUM, (HSAuint32)dsm_hsa.set.hsa_sdma_engine,
            ring, size, NULL, res);
    return dsm_hsa.api.create_queue(dsm_hsa.node, HSA_QUEUE_SDMA, 100,
                                    HSA_QUEUE_PRIORITY_MAXIMUM, ring, size,
                                    NULL, res);
}

/* How dsm_hsa_make_queue creates queues, for messages. */
const char *dsm_hsa_queue_call(void)
{
    static char b[96];
    if (dsm_hsa.set.hsa_sdma_engine < 0)
        return "hsaKmtCreateQueue(HSA_QUEUE_SDMA)";
    snprintf(b, sizeof(b), "hsaKmtCreateQueueExt(HSA_QUEUE_SDMA_BY_ENG_ID, "
             "engine %ld)", dsm_hsa.set.hsa_sdma_engine);
    return b;
}

struct agent_walk {
    int want;
    int seen;
};

static hsa_status_t agent_cb(hsa_agent_t a, void *arg)
{
    struct agent_walk *w = arg;
    hsa_device_type_t type;

    if (dsm_hsa.api.agent_get_info(a, HSA_AGENT_INFO_DEVICE, &type) !=
        HSA_STATUS_SUCCESS)
        return HSA_STATUS_SUCCESS;
    if (type == HSA_DEVICE_TYPE_CPU && !dsm_hsa.cpu.handle)
        dsm_hsa.cpu = a;
    if (type != HSA_DEVICE_TYPE_GPU)
        return HSA_STATUS_SUCCESS;
    if (w->seen++ == w->want || !dsm_hsa.gpu.handle)
        dsm_hsa.gpu = a;
    return HSA_STATUS_SUCCESS;
}

static dsm_status_t hsa_probe(void)
{
    struct agent_walk w;

    if (dsm_hsa.loaded)
        return DSM_OK;
    if (dsm_hsa_api_load(&dsm_hsa.api, dsm_hsa.set.hsa_library, dsm_hsa.why,
                         sizeof(dsm_hsa.why)))
        goto fail;
    if (dsm_hsa.api.init() != HSA_STATUS_SUCCESS) {
        snprintf(dsm_hsa.why, sizeof(dsm_hsa.why),
                 "hsa_init failed (no GPU or /dev/kfd)");
        goto fail_unload;
    }
    /* First pass counts the GPUs, second takes local rank modulo. */
    memset(&w, 0, sizeof(w));
    w.want = -1;
    dsm_hsa.gpu.handle = 0;
    dsm_hsa.api.iterate_agents(agent_cb, &w);
    dsm_hsa.ngpus = w.seen;
    if (!dsm_hsa.ngpus) {
        snprintf(dsm_hsa.why, sizeof(dsm_hsa.why),
                 "hsa_init succeeded but no GPU agent");
        goto fail_shut;
    }
    memset(&w, 0, sizeof(w));
    w.want = dsm_hsa.set.device >= 0 ? (int)(dsm_hsa.set.device % dsm_hsa.ngpus)
                                     : dsm_hsa.set.local_rank % dsm_hsa.ngpus;
    dsm_hsa.gpu.handle = 0;
    dsm_hsa.api.iterate_agents(agent_cb, &w);
    dsm_hsa.devindex = w.want;
    if (dsm_hsa.api.agent_get_info(
            dsm_hsa.gpu, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_DRIVER_NODE_ID,
            &dsm_hsa.node) != HSA_STATUS_SUCCESS)
        dsm_hsa.node = 0;
    if (dsm_hsa.api.agent_get_info(dsm_hsa.gpu, HSA_AGENT_INFO_NAME,
                                   dsm_hsa.name) != HSA_STATUS_SUCCESS)
        snprintf(dsm_hsa.name, sizeof(dsm_hsa.name), "gpu");
    dsm_hsa.name[sizeof(dsm_hsa.name) - 1] = 0;
    dsm_hsa.loaded = 1;
    return DSM_OK;

fail_shut:
    dsm_hsa.api.shut_down();
fail_unload:
    dsm_hsa_api_unload(&dsm_hsa.api);
fail:
    dsm_debug("hsa backend not usable: %s", dsm_hsa.why);
    return DSM_ERR_NO_DEVICE;
}

/* The rings' kick over the model (no doorbell interrupt there). */
void dsm_hsa_model_kick(volatile uint64_t *doorbell)
{
    dsm_hsa.api.model_kick(doorbell);
}

/* ------------------------------------------------------------ events */

/* The TRAP at the end of each batch raises the event; this thread turns
 * it into the layer's wake-ups (the proxy retires, waiters re-check). In
 * the async fallback, which has no interrupt, it polls while copies are
 * in flight and sleeps on the layer's wake-up otherwise. */
static void *event_main(void *arg)
{
    hsas_t *hs = arg;
    dsm_sdma_t *s = hs->s;

    while (!hs->stop) {
        int nq, i, moved = 0;
        if (!dsm_hsa.async)
            dsm_hsa.api.wait_on_event(hs->event, EVENT_WAIT_MS);
        else if (dsm_hsa_async_busy(hs))
            sched_yield(); /* no interrupt for async copies: poll them */
        else
            dsm_wake_sleep(s->wake, dsm_hsa_async_busy, hs,
                           (uint64_t)EVENT_WAIT_MS * 1000000ull);
        nq = __atomic_load_n(&s->num_queues, __ATOMIC_ACQUIRE);
        for (i = 0; i < nq; i++) {
            dsm_sdma_queue_t *q = s->queues[i];
            hsaq_t *hq = q->priv;
            if (!hq)
                continue;
            uint64_t before = __atomic_load_n(&hq->seen, __ATOMIC_ACQUIRE);
            if (dsm_hsa_poll(q, 0) != before)
                moved = 1;
        }
        if (moved) {
            dsm_wake_notify(s->wake);
            dsm_wake_notify(s->app_wake);
        }
    }
    return NULL;
}

/* ------------------------------------------------------------ open */

/* Whether this process may create an SDMA queue (rights on /dev/kfd, a
 * kernel that offers them): one is created and destroyed. */
static int queue_possible(hsas_t *hs)
{
    HsaQueueResource res;
    void *ring = NULL;
    hsa_reg_t *reg;
    HSAKMT_STATUS st;

    if (posix_memalign(&ring, 4096, 4096))
        return 0;
    memset(ring, 0, 4096);
    reg = dsm_hsa_reg_get(hs, ring, 4096);
    if (!reg) {
        free(ring);
        snprintf(dsm_hsa.why, sizeof(dsm_hsa.why),
                 "hsa_amd_memory_lock failed");
        return 0;
    }
    memset(&res, 0, sizeof(res));
    st = dsm_hsa_make_queue(ring, 4096, &res);
    if (st == HSAKMT_STATUS_SUCCESS)
        dsm_hsa.api.destroy_queue(res.QueueId);
    else if (dsm_hsa.set.hsa_sdma_engine < 0)
        snprintf(dsm_hsa.why, sizeof(dsm_hsa.why),
                 "hsaKmtCreateQueue(node %u, HSA_QUEUE_SDMA) failed with "
                 "status %d", (unsigned)dsm_hsa.node, (int)st);
    else
        snprintf(dsm_hsa.why, sizeof(dsm_hsa.why),
                 "%s on node %u failed with status %d", dsm_hsa_queue_call(),
                 (unsigned)dsm_hsa.node, (int)st);
    dsm_hsa_reg_put(hs, reg);
    free(ring);
    return st == HSAKMT_STATUS_SUCCESS;
}

static dsm_status_t hsa_open(dsm_sdma_t *s)
{
    hsas_t *hs;
    HsaEventDescriptor ed;

    if (dsm_hsa.set.hsa_max_queues < 0) {
        dsm_log_error("hsa backend: SHMEM_HSA_MAX_QUEUES=%ld: must be >= 0 "
                      "(0: no cap)", dsm_hsa.set.hsa_max_queues);
        return DSM_ERR_INVAL;
    }
    if (!dsm_hsa.loaded && hsa_probe() != DSM_OK)
        return DSM_ERR_NO_DEVICE;
    hs = calloc(1, sizeof(*hs));
    if (!hs)
        return DSM_ERR_NOMEM;
    hs->s = s;
    pthread_mutex_init(&hs->reg_lock, NULL);
    pthread_mutex_init(&hs->devq_lock, NULL);
    dsm_hsa.async = 0;
    if (dsm_hsa.set.hsa_sdma_engine >= 0 && dsm_hsa.api.create_queue &&
        !dsm_hsa.api.create_queue_ext) {
        dsm_log_error("hsa backend: SHMEM_HSA_SDMA_ENGINE=%ld needs "
                      "hsaKmtCreateQueueExt (ROCm >= 6.4, KFD interface >= "
                      "1.17); %s lacks it",
                      dsm_hsa.set.hsa_sdma_engine, dsm_hsa.api.kmt_from);
        goto err_free;
    }
    if (!dsm_hsa.api.create_queue ||
        dsm_hsa.api.kmt_open() != HSAKMT_STATUS_SUCCESS) {
        dsm_hsa.async = 1;
        snprintf(dsm_hsa.why, sizeof(dsm_hsa.why), "%s",
                 dsm_hsa.api.create_queue ? "hsaKmtOpenKFD failed"
                                          : "no hsaKmt* entry points");
    } else if (!queue_possible(hs)) {
        dsm_hsa.api.kmt_close();
        if (dsm_hsa.set.hsa_sdma_engine >= 0) {
            /* Asked for by name: no quiet fallback elsewhere. */
            dsm_log_error("hsa backend: SHMEM_HSA_SDMA_ENGINE=%ld: %s",
                          dsm_hsa.set.hsa_sdma_engine, dsm_hsa.why);
            goto err_free;
        }
        dsm_hsa.async = 1;
    }
    if (dsm_hsa.async) {
        if (!dsm_hsa.api.async_copy || !dsm_hsa.api.signal_create ||
            !dsm_hsa.api.signal_destroy || !dsm_hsa.api.signal_load) {
            dsm_log_error("hsa backend: no SDMA queue (%s) and no "
                          "hsa_amd_memory_async_copy to fall back to",
                          dsm_hsa.why);
            goto err_free;
        }
        dsm_debug("hsa backend: no SDMA queue (%s): async copies", dsm_hsa.why);
        goto start;
    }
    memset(&ed, 0, sizeof(ed));
    ed.EventType = HSA_EVENTTYPE_SIGNAL;
    ed.NodeId = dsm_hsa.node;
    if (dsm_hsa.api.create_event(&ed, false, false, &hs->event) !=
        HSAKMT_STATUS_SUCCESS) {
        dsm_log_error("hsa backend: hsaKmtCreateEvent failed");
        dsm_hsa.api.kmt_close();
        goto err_free;
    }
start:
    s->priv = hs;
    if (pthread_create(&hs->event_thread, NULL, event_main, hs) == 0) {
        hs->event_running = 1;
        pthread_setname_np(hs->event_thread, "dsm-hsa-event");
    }
    return DSM_OK;

err_free:
    pthread_mutex_destroy(&hs->devq_lock);
    pthread_mutex_destroy(&hs->reg_lock);
    free(hs);
    return DSM_ERR_NO_DEVICE;
}

static void queue_teardown(hsas_t *hs, dsm_sdma_queue_t *q)
{
    hsaq_t *hq = q->priv;

    if (!hq)
        return;
    if (hq->have_queue) {
        dsm_hsa.api.destroy_queue(hq->res.QueueId);
        dsm_hsa_queue_give();
    }
    /* Copies in flight finish (each depends only on earlier ones). */
    while (hq->asig && hq->ahead != hq->atail) {
        dsm_hsa_async_reap(hq);
        sched_yield();
    }
    free(hq->asig);
    /* Chains that never fired still hold their memory. */
    for (uint64_t i = 0; hq->regs && i < q->depth; i++) {
        dsm_hsa_cmd_unlock(hs, hq, i);
        dsm_hsa_slot_regs_free(&hq->regs[i]);
    }
    if (hq->bounce_reg)
        dsm_hsa_reg_put(hs, hq->bounce_reg);
    if (hq->done_reg)
        dsm_hsa_reg_put(hs, hq->done_reg);
    if (hq->ring_reg)
        dsm_hsa_reg_put(hs, hq->ring_reg);
    pthread_mutex_destroy(&hq->pump_lock);
    free(hq->regs);
    free(hq->bounce);
    free(hq->done);
    free(hq->ringbuf);
    free(hq);
    q->priv = NULL;
}

static void print_queue_stats(dsm_sdma_queue_t *q)
{
    hsaq_t *hq = q->priv;
    fprintf(
        stderr,
        "dmashmem: hsa stats PE %d queue %d (engine %d%s): packets %llu "
        "doorbells %llu batches %llu commands %llu cpu-run %llu%s\n",
        dsm_log_pe, q->index, q->engine, q->chain ? ", chains" : "",
        (unsigned long long)(dsm_hsa.async ? hq->copies : hq->ring.packets),
        (unsigned long long)hq->ring.doorbells, (unsigned long long)hq->batches,
        (unsigned long long)q->stats.commands,
        (unsigned long long)hq->fallbacks,
        dsm_hsa.async ? " (async copies: packets = hsa_amd_memory_async_copy "
                        "calls)"
                      : "");
}

static void hsa_close(dsm_sdma_t *s)
{
    hsas_t *hs = s->priv;
    int i;

    hs->stop = 1;
    if (hs->event_running) {
        if (!dsm_hsa.async && dsm_hsa.api.set_event)
            dsm_hsa.api.set_event(hs->event);
        dsm_wake_notify(s->wake);
        pthread_join(hs->event_thread, NULL);
    }
    dsm_hsa_devq_teardown(hs, s->cfg.stats);
    for (i = 0; i < s->num_queues; i++) {
        if (s->cfg.stats && s->queues[i]->priv)
            print_queue_stats(s->queues[i]);
        queue_teardown(hs, s->queues[i]);
    }
    if (!dsm_hsa.async) {
        dsm_hsa.api.destroy_event(hs->event);
        dsm_hsa.api.kmt_close();
    }
    pthread_mutex_destroy(&hs->devq_lock);
    pthread_mutex_destroy(&hs->reg_lock);
    free(hs);
    s->priv = NULL;
    dsm_hsa_release();
}

static dsm_status_t hsa_queue_init(dsm_sdma_queue_t *q)
{
    hsas_t *hs = q->sdma->priv;
    hsaq_t *hq;
    HSAKMT_STATUS st;

    if (posix_memalign((void **)&hq, DSM_CACHELINE, sizeof(*hq)))
        return DSM_ERR_NOMEM;
    memset(hq, 0, sizeof(*hq));
    pthread_mutex_init(&hq->pump_lock, NULL);
    q->priv = hq;
    if (posix_memalign((void **)&hq->ringbuf, 4096, RING_BYTES) ||
        posix_memalign((void **)&hq->done, DSM_CACHELINE, DSM_CACHELINE) ||
        posix_memalign((void **)&hq->bounce, 4096, DSM_HSA_SWAP_BOUNCE))
        goto err;
    memset(hq->ringbuf, 0, RING_BYTES);
    memset(hq->done, 0, DSM_CACHELINE);
    hq->regs = calloc(q->depth, sizeof(*hq->regs));
    hq->ring_reg = dsm_hsa_reg_get(hs, hq->ringbuf, RING_BYTES);
    hq->done_reg = dsm_hsa_reg_get(hs, hq->done, sizeof(uint32_t));
    hq->bounce_reg = dsm_hsa_reg_get(hs, hq->bounce, DSM_HSA_SWAP_BOUNCE);
    if (!hq->regs || !hq->ring_reg || !hq->done_reg || !hq->bounce_reg)
        goto err;
    if (dsm_hsa.async) {
        hq->asig = calloc(DSM_HSA_ASYNC_INFLIGHT, sizeof(*hq->asig));
        return hq->asig ? DSM_OK : DSM_ERR_NOMEM;
    }
    if (!dsm_hsa_queue_take(q->chain ? "an SDMA queue for a chain queue"
                                     : "an SDMA queue for an RMA queue")) {
        queue_teardown(hs, q);
        return DSM_ERR_OVERFLOW;
    }
    st = dsm_hsa_make_queue(hq->ringbuf, RING_BYTES, &hq->res);
    if (st != HSAKMT_STATUS_SUCCESS) {
        dsm_hsa_queue_give();
        dsm_log_error("hsa backend: %s on node %u failed with status %d",
                      dsm_hsa_queue_call(), (unsigned)dsm_hsa.node, (int)st);
        goto err;
    }
    hq->have_queue = 1;
    hq->ring.buf = hq->ringbuf;
    hq->ring.size = RING_BYTES;
    hq->ring.rptr = hq->res.Queue_read_ptr_aql;
    hq->ring.wptr = hq->res.Queue_write_ptr_aql;
    hq->ring.doorbell = hq->res.Queue_DoorBell_aql;
    hq->ring.reserved = hq->ring.committed = *hq->ring.wptr;
    if (dsm_hsa.api.model && dsm_hsa.api.model_kick)
        hq->ring.kick = dsm_hsa_model_kick;
    return DSM_OK;

err:
    queue_teardown(hs, q);
    return DSM_ERR_NOMEM;
}

static void hsa_queue_fini(dsm_sdma_queue_t *q)
{
    /* close() tore the queues down; this is the error path before it. */
    if (q->priv && q->sdma->priv)
        queue_teardown(q->sdma->priv, q);
}

static uint32_t hsa_caps(const dsm_sdma_t *s)
{
    (void)s;
    /* BCAST and SWAP are emulated with COPY_LINEARs: no NATIVE bits. The
     * engines reach the device heap (ours and the local peers'). */
    return DSM_SDMA_CAP_HOST_MEM | DSM_SDMA_CAP_DEVICE_MEM |
           DSM_SDMA_CAP_SIGNAL_ADD;
}

static const char *hsa_describe(const dsm_sdma_t *s)
{
    static char buf[768];
    if (dsm_hsa.async) {
        snprintf(buf, sizeof(buf),
                 "hsa: hsa_amd_memory_async_copy on %s (%d GPU%s), no SDMA "
                 "queue (%s): WAIT/SIGNAL run on the host%s",
                 dsm_hsa.name, dsm_hsa.ngpus, dsm_hsa.ngpus == 1 ? "" : "s",
                 dsm_hsa.why,
                 dsm_hsa.api.model
                     ? "; ENGINE MODEL (no GPU: copies executed on "
                       "the host)"
                     : "");
        return buf;
    }
    char cap[64] = "";
    if (dsm_hsa.set.hsa_max_queues > 0)
        snprintf(cap, sizeof(cap), " (at most %ld: SHMEM_HSA_MAX_QUEUES)",
                 dsm_hsa.set.hsa_max_queues);
    snprintf(buf, sizeof(buf),
             "hsa: %d SDMA queue%s%s through %s "
             "on %s (KFD node %u, %d GPU%s), thunk from %s%s%s",
             s->num_queues, s->num_queues == 1 ? "" : "s", cap,
             dsm_hsa_queue_call(), dsm_hsa.name, (unsigned)dsm_hsa.node,
             dsm_hsa.ngpus, dsm_hsa.ngpus == 1 ? "" : "s",
             dsm_hsa.api.kmt_from ? dsm_hsa.api.kmt_from : "?",
             dsm_hsa.api.create_queue_ext && dsm_hsa.set.hsa_sdma_engine < 0
                 ? ", hsaKmtCreateQueueExt present"
                 : "",
             dsm_hsa.api.model ? "; ENGINE MODEL (no GPU: packets executed on "
                                 "the host)"
                               : "");
    return buf;
}

const dsm_sdma_backend_ops_t dsm_sdma_hsa_ops = {
    .size = sizeof(dsm_sdma_backend_ops_t),
    .name = "hsa",
    .probe = hsa_probe,
    .open = hsa_open,
    .close = hsa_close,
    .queue_init = hsa_queue_init,
    .queue_fini = hsa_queue_fini,
    .submit = dsm_hsa_submit,
    .poll = dsm_hsa_poll,
    .caps = hsa_caps,
    .describe = hsa_describe,
    .gpu_configure = hsa_configure,
    .gpu = &dsm_hsa_gpu_ops,
};
