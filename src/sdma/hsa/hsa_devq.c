/*
 * hsa backend: the SDMA queue GPU kernels write themselves (the HIP device
 * API, include/shmemx_hip.h, handed out by shmemx_dev_get_hip): a ring and
 * a control block in host memory locked for the GPU, an SDMA queue of its
 * own (counted under SHMEM_HSA_MAX_QUEUES, on SHMEM_HSA_SDMA_ENGINE's
 * engine), and the ranges the runtime maps for kernels. None of it is a
 * queue of the layer: no command, no proxy, no completion walk here.
 */
#include "sdma/backend.h"
#include "sdma/hsa/hsa_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The ring, and where the control block keeps the completion dword and
 * the caller's table after the producers' ring words. */
#define DEVQ_RING_BYTES (256u * 1024u)
#define DEVQ_DONE_OFF 256u  /* the completion dword, a line of its own */
#define DEVQ_TABLE_OFF 512u

/* Whether s can give kernels a queue: the hsa backend with SDMA queues. */
static hsas_t *devq_backend(dsm_sdma_t *s, char *why, size_t whylen)
{
    if (!s || s->ops != &dsm_sdma_hsa_ops || !s->priv) {
        snprintf(why, whylen,
                 "needs the hsa sdma backend (this PE runs '%s')",
                 s && s->ops ? s->ops->name : "none");
        return NULL;
    }
    if (dsm_hsa.async) {
        snprintf(why, whylen,
                 "the hsa backend runs hsa_amd_memory_async_copy here (no "
                 "SDMA queue: %s), and kernels need an SDMA queue of their "
                 "own", dsm_hsa.why);
        return NULL;
    }
    return s->priv;
}

void dsm_hsa_devq_teardown(hsas_t *hs, int stats)
{
    hsa_devq_t *d = &hs->devq;

    if (d->open) {
        /* The engine stops before anything it reads goes. */
        dsm_hsa.api.destroy_queue(d->res.QueueId);
        dsm_hsa_queue_give();
        if (stats) {
            const dsm_sdma_ring_t *r = (const dsm_sdma_ring_t *)d->ctl;
            fprintf(stderr,
                    "dmashmem: hsa stats PE %d device queue (kernels): "
                    "packets %llu doorbells %llu\n",
                    dsm_log_pe, (unsigned long long)r->packets,
                    (unsigned long long)r->doorbells);
        }
    }
    for (uint32_t i = 0; i < d->maps.n; i++)
        dsm_hsa_reg_put(hs, d->maps.v[i]);
    dsm_hsa_slot_regs_free(&d->maps);
    if (d->ctl_reg)
        dsm_hsa_reg_put(hs, d->ctl_reg);
    if (d->ring_reg)
        dsm_hsa_reg_put(hs, d->ring_reg);
    free(d->ctl);
    free(d->ringbuf);
    memset(d, 0, sizeof(*d));
}

dsm_status_t dsm_sdma_devq_open(dsm_sdma_t *s, size_t table_bytes,
                                dsm_sdma_devq_t *out, char *why,
                                size_t whylen)
{
    hsas_t *hs = devq_backend(s, why, whylen);
    hsa_devq_t *d;
    dsm_sdma_ring_t *r;
    HSAKMT_STATUS st;
    long pg = sysconf(_SC_PAGESIZE);

    if (!hs)
        return DSM_ERR_UNSUPPORTED;
    d = &hs->devq;
    pthread_mutex_lock(&hs->devq_lock);
    if (d->open)
        goto done;
    d->ctl_bytes = (DEVQ_TABLE_OFF + table_bytes + (size_t)pg - 1) &
                   ~((size_t)pg - 1);
    if (posix_memalign((void **)&d->ringbuf, (size_t)pg, DEVQ_RING_BYTES) ||
        posix_memalign((void **)&d->ctl, (size_t)pg, d->ctl_bytes)) {
        snprintf(why, whylen, "out of memory for the device queue");
        goto fail;
    }
    memset(d->ringbuf, 0, DEVQ_RING_BYTES);
    memset(d->ctl, 0, d->ctl_bytes);
    d->ring_reg = dsm_hsa_reg_get(hs, d->ringbuf, DEVQ_RING_BYTES);
    d->ctl_reg = dsm_hsa_reg_get(hs, d->ctl, d->ctl_bytes);
    if (!d->ring_reg || !d->ctl_reg) {
        snprintf(why, whylen, "hsa_amd_memory_lock of the device queue's "
                 "ring or control block failed");
        goto fail;
    }
    if (!dsm_hsa_queue_take("the device API's SDMA queue")) {
        snprintf(why, whylen,
                 "no SDMA queue left for kernels: SHMEM_HSA_MAX_QUEUES=%ld "
                 "are in use", dsm_hsa.set.hsa_max_queues);
        dsm_hsa_devq_teardown(hs, 0);
        pthread_mutex_unlock(&hs->devq_lock);
        return DSM_ERR_OVERFLOW;
    }
    st = dsm_hsa_make_queue(d->ringbuf, DEVQ_RING_BYTES, &d->res);
    if (st != HSAKMT_STATUS_SUCCESS) {
        dsm_hsa_queue_give();
        snprintf(why, whylen,
                 "%s on node %u for the device queue failed with status %d",
                 dsm_hsa_queue_call(), (unsigned)dsm_hsa.node, (int)st);
        goto fail;
    }
    d->open = 1;
    /* The ring's words as kernels see them: GPU addresses throughout
     * (the read/write pointers and the doorbell as the thunk mapped
     * them); the host never produces into this ring (but a test over
     * the model, where a GPU address is the host address). */
    r = (dsm_sdma_ring_t *)d->ctl;
    r->buf = (uint32_t *)(uintptr_t)gva(d->ring_reg, d->ringbuf);
    r->size = DEVQ_RING_BYTES;
    r->rptr = d->res.Queue_read_ptr_aql;
    r->wptr = d->res.Queue_write_ptr_aql;
    r->doorbell = d->res.Queue_DoorBell_aql;
    r->reserved = r->committed = *r->wptr;
    if (dsm_hsa.api.model && dsm_hsa.api.model_kick)
        r->kick = dsm_hsa_model_kick;
    d->out.ring = gva(d->ctl_reg, d->ctl);
    d->out.done = gva(d->ctl_reg, d->ctl + DEVQ_DONE_OFF);
    d->out.table = gva(d->ctl_reg, d->ctl + DEVQ_TABLE_OFF);
    d->out.table_host = d->ctl + DEVQ_TABLE_OFF;
    dsm_debug("hsa: device queue %u (ring %u KiB) for kernels",
              (unsigned)d->res.QueueId, DEVQ_RING_BYTES / 1024u);
done:
    *out = d->out;
    pthread_mutex_unlock(&hs->devq_lock);
    return DSM_OK;

fail:
    dsm_hsa_devq_teardown(hs, 0);
    pthread_mutex_unlock(&hs->devq_lock);
    return DSM_ERR_NO_DEVICE;
}

dsm_status_t dsm_sdma_devq_map(dsm_sdma_t *s, const void *p, size_t len,
                               uint64_t *gpu, char *why, size_t whylen)
{
    hsas_t *hs = devq_backend(s, why, whylen);
    slot_regs_t *m;
    uint32_t first;
    dsm_status_t st = DSM_OK;

    if (!hs)
        return DSM_ERR_UNSUPPORTED;
    pthread_mutex_lock(&hs->devq_lock);
    m = &hs->devq.maps;
    first = m->n;
    /* Pages commands already hold stay their own ranges (no two locks
     * overlap): the GPU must see the pieces back to back, since a kernel
     * adds offsets to one base per range it was given. */
    if (!dsm_hsa_reg_cover(hs, m, p, len)) {
        snprintf(why, whylen,
                 "hsa_amd_memory_lock of %zu bytes at %p failed", len, p);
        st = DSM_ERR_NOMEM;
    }
    for (uint32_t i = first + 1; st == DSM_OK && i < m->n; i++)
        if (gva(m->v[i - 1], (void *)m->v[i - 1]->base) + m->v[i - 1]->len !=
            gva(m->v[i], (void *)m->v[i]->base)) {
            snprintf(why, whylen,
                     "%zu bytes at %p are locked for the GPU in pieces "
                     "that it does not see back to back", len, p);
            st = DSM_ERR_UNSUPPORTED;
        }
    if (st == DSM_OK)
        *gpu = gva(m->v[first], p);
    pthread_mutex_unlock(&hs->devq_lock);
    return st;
}

