/*
 * Command queues: rings of commands with producer, doorbell, completion and
 * retire sequence numbers. Slots are reused only after retirement, so a
 * retired command's bookkeeping (done counters) can be read safely.
 */
#include "sdma/backend.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

dsm_status_t dsm_sdma_queue_new(dsm_sdma_t *s, int engine, int chain,
                                dsm_sdma_queue_t **out)
{
    dsm_sdma_queue_t *q;
    dsm_status_t st;

    if (posix_memalign((void **)&q, DSM_CACHELINE, sizeof(*q)))
        return DSM_ERR_NOMEM;
    memset(q, 0, sizeof(*q));
    q->depth = s->cfg.depth;
    q->ring = calloc(q->depth, sizeof(*q->ring));
    if (!q->ring) {
        st = DSM_ERR_NOMEM;
        goto err_free_q;
    }
    pthread_mutex_init(&q->lock, NULL);
    q->engine = engine;
    q->chain = chain;
    q->sdma = s;
    st = s->ops->queue_init(q);
    if (st != DSM_OK)
        goto err_free_ring;

    pthread_mutex_lock(&s->queues_lock);
    if (s->num_queues == DSM_SDMA_MAX_QUEUES) {
        /* Full (queues live until close): the caller names what holds
         * them; not "out of memory", which sends the user elsewhere. */
        pthread_mutex_unlock(&s->queues_lock);
        st = DSM_ERR_OVERFLOW;
        goto err_fini;
    }
    q->index = s->num_queues;
    s->queues[q->index] = q;
    /* Progress scans [0, num_queues) without the lock. */
    __atomic_store_n(&s->num_queues, q->index + 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&s->queues_lock);
    *out = q;
    return DSM_OK;

err_fini:
    s->ops->queue_fini(q);
err_free_ring:
    pthread_mutex_destroy(&q->lock);
    free(q->ring);
err_free_q:
    free(q);
    return st;
}

int dsm_sdma_max_queues(void)
{
    return DSM_SDMA_MAX_QUEUES;
}

void dsm_sdma_queue_free(dsm_sdma_queue_t *q)
{
    q->sdma->ops->queue_fini(q);
    pthread_mutex_destroy(&q->lock);
    free(q->ring);
    free(q);
}

int dsm_sdma_queue_append_locked(dsm_sdma_queue_t *q, const dsm_cmd_t *cmd)
{
    uint64_t retired = __atomic_load_n(&q->retired, __ATOMIC_ACQUIRE);
    if (q->tail - retired >= q->depth)
        return 0;
    q->ring[q->tail & (q->depth - 1)] = *cmd;
    q->tail++;
    return 1;
}

void dsm_sdma_queue_ring_locked(dsm_sdma_queue_t *q)
{
    uint64_t from = q->submitted, upto = q->tail;
    uint64_t t0;

    if (from == upto)
        return;
    t0 = dsm_sdma_now(q->sdma);
    /* Publish the commands, then let the backend tell its engine. */
    __atomic_store_n(&q->submitted, upto, __ATOMIC_RELEASE);
    q->sdma->ops->submit(q, upto);
    q->stats.batches++;
    q->stats.commands += upto - from;
    if (q->sdma->cfg.stats)
        q->stats.ns_schedule += dsm_now_ns() - t0;
}

uint64_t dsm_sdma_queue_retire(dsm_sdma_queue_t *q, int help)
{
    /* poll() may execute commands (cpu, help): that time is "copy". */
    uint64_t done = q->sdma->ops->poll(q, help);
    uint64_t t0 = dsm_sdma_now(q->sdma);
    uint64_t r = q->retired, n = done - r;

    if (!n)
        return 0;
    for (; r < done; r++) {
        const dsm_cmd_t *c = &q->ring[r & (q->depth - 1)];
        if (c->done)
            __atomic_fetch_add(c->done, 1, __ATOMIC_RELEASE);
    }
    __atomic_store_n(&q->retired, done, __ATOMIC_RELEASE);
    if (q->sdma->cfg.stats)
        q->stats.ns_sync += dsm_now_ns() - t0;
    return n;
}

uint64_t dsm_sdma_queue_completed(dsm_sdma_queue_t *q)
{
    return q->sdma->ops->poll(q, 0);
}

uint64_t dsm_sdma_queue_help(dsm_sdma_queue_t *q)
{
    return q->sdma->ops->poll(q, 1);
}

dsm_status_t dsm_sdma_queue_cancel(dsm_sdma_queue_t *q)
{
    dsm_sdma_t *s = q->sdma;
    uint64_t c, i;

    if (!(s->ops->caps(s) & DSM_SDMA_CAP_CANCEL))
        return DSM_ERR_UNSUPPORTED;
    pthread_mutex_lock(&q->lock);
    /* The engine re-reads only ring[completed] (the blocked WAIT); later
     * slots are read once it passes, after the caller's releasing store. */
    c = __atomic_load_n(&q->completed, __ATOMIC_ACQUIRE);
    for (i = c + 1; i < q->tail; i++) {
        dsm_cmd_t *cmd = &q->ring[i & (q->depth - 1)];
        cmd->op = DSM_CMD_NOP;
        cmd->wake = NULL;
        cmd->wake_app = NULL;
    }
    pthread_mutex_unlock(&q->lock);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    return DSM_OK;
}
