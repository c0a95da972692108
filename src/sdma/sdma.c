/*
 * The command layer's entry points: open/close, the request ring feeding the
 * proxy, chain posting, progress, waiting.
 */
#include "sdma/backend.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Probe order: the first backend whose probe succeeds wins unless
 * SHMEM_SDMA_BACKEND names one. cpu is always last and always works. */
static const dsm_sdma_backend_ops_t *const backends[] = {
#ifdef DSM_BUILD_CUDA
    &dsm_sdma_cuda_ops,
#endif
#ifdef DSM_HAVE_HSA
    &dsm_sdma_hsa_ops,
#endif
    &dsm_sdma_cpu_ops,
};

static dsm_status_t pick_backend(const char *name,
                                 const dsm_sdma_backend_ops_t **out)
{
    size_t i;
    int any = !name || !*name || !strcmp(name, "auto");

    for (i = 0; i < DSM_ARRAY_SIZE(backends); i++) {
        const dsm_sdma_backend_ops_t *b = backends[i];
        if (!any && strcmp(b->name, name))
            continue;
        if (b->size != sizeof(*b)) {
            dsm_log_error("sdma backend '%s' was built against another "
                          "interface version", b->name);
            continue;
        }
        if (b->probe() == DSM_OK) {
            *out = b;
            return DSM_OK;
        }
        if (!any) {
            dsm_log_error("SHMEM_SDMA_BACKEND=%s: backend not usable on this "
                          "machine (no device or driver); unset it to use "
                          "the default", name);
            return DSM_ERR_NO_DEVICE;
        }
    }
    if (!any) {
        char list[128] = "";
        for (i = 0; i < DSM_ARRAY_SIZE(backends); i++) {
            strncat(list, i ? ", " : "", sizeof(list) - strlen(list) - 1);
            strncat(list, backends[i]->name, sizeof(list) - strlen(list) - 1);
        }
        dsm_log_error("SHMEM_SDMA_BACKEND=%s: unknown backend (this build "
                      "has: %s)", name, list);
        return DSM_ERR_INVAL;
    }
    return DSM_ERR_NO_DEVICE;
}

dsm_status_t dsm_sdma_open(const dsm_sdma_config_t *cfg, dsm_sdma_t **out)
{
    dsm_sdma_t *s;
    dsm_status_t st;
    int i;

    if (cfg->engines < 1 || cfg->engines > 64 || !cfg->depth ||
        (cfg->depth & (cfg->depth - 1)) || !cfg->req_depth ||
        (cfg->req_depth & (cfg->req_depth - 1)))
        return DSM_ERR_INVAL;
    if (posix_memalign((void **)&s, DSM_CACHELINE, sizeof(*s)))
        return DSM_ERR_NOMEM;
    memset(s, 0, sizeof(*s));
    s->cfg = *cfg;
    s->num_engines = cfg->engines;
    s->wake = cfg->wake;
    s->app_wake = cfg->app_wake ? cfg->app_wake : cfg->wake;
    pthread_mutex_init(&s->queues_lock, NULL);
    pthread_mutex_init(&s->progress_lock, NULL);

    s->req = calloc(cfg->req_depth, sizeof(*s->req));
    if (!s->req) {
        st = DSM_ERR_NOMEM;
        goto err_free;
    }
    s->req_mask = cfg->req_depth - 1;
    for (uint64_t k = 0; k < cfg->req_depth; k++)
        s->req[k].seq = k;

    st = pick_backend(cfg->backend, &s->ops);
    if (st != DSM_OK)
        goto err_free_req;
    st = s->ops->open(s);
    if (st != DSM_OK)
        goto err_free_req;
    for (i = 0; i < s->num_engines; i++) {
        dsm_sdma_queue_t *q;
        st = dsm_sdma_queue_new(s, i, 0, &q);
        if (st != DSM_OK)
            goto err_queues;
    }
    if (cfg->proxy_thread > 0 ||
        (cfg->proxy_thread < 0 &&
         !(s->ops->caps(s) &
           (DSM_SDMA_CAP_ENGINE_PROXY | DSM_SDMA_CAP_NO_PROXY))))
        dsm_sdma_proxy_start(s);
    /* With a proxy thread the thread is the agent (caller and thread
     * taking turns in the driver measured slower; the removed
     * SHMEM_CUDA_CALLER_SUBMIT, git log). */
    s->caller_submit = (s->ops->caps(s) & DSM_SDMA_CAP_CALLER_SUBMIT) &&
                       !s->proxy_running;
    *out = s;
    return DSM_OK;

err_queues:
    for (i = 0; i < s->num_queues; i++)
        dsm_sdma_queue_free(s->queues[i]);
    s->ops->close(s);
err_free_req:
    free(s->req);
err_free:
    pthread_mutex_destroy(&s->progress_lock);
    pthread_mutex_destroy(&s->queues_lock);
    free(s);
    return st;
}

static void print_stats(dsm_sdma_t *s, int rank)
{
    dsm_sdma_stats_t t = s->proxy_stats;
    int i;

    for (i = 0; i < s->num_queues; i++) {
        const dsm_sdma_stats_t *q = &s->queues[i]->stats;
        t.commands += q->commands;
        t.batches += q->batches;
        t.ns_control += q->ns_control;
        t.ns_schedule += q->ns_schedule;
        t.ns_copy += q->ns_copy;
        t.ns_sync += q->ns_sync;
    }
    fprintf(stderr,
            "dmashmem: sdma stats PE %d [%s, %d engine%s, %d queue%s]: "
            "requests %llu commands %llu batches %llu (%.1f cmds/batch) | "
            "control %.3f ms schedule %.3f ms copy %.3f ms sync %.3f ms\n",
            rank, s->ops->name, s->num_engines, s->num_engines == 1 ? "" : "s",
            s->num_queues, s->num_queues == 1 ? "" : "s",
            (unsigned long long)t.requests, (unsigned long long)t.commands,
            (unsigned long long)t.batches,
            t.batches ? (double)t.commands / (double)t.batches : 0.0,
            (double)t.ns_control / 1e6, (double)t.ns_schedule / 1e6,
            (double)t.ns_copy / 1e6, (double)t.ns_sync / 1e6);
}

void dsm_sdma_close(dsm_sdma_t *s, int rank)
{
    int i;

    if (!s)
        return;
    /* Drain: every RMA queue reaches what was requested. Chain queues may
     * hold chains that will never fire (persistent collectives freed by
     * finalize); those are dropped by the backend's close. */
    while (dsm_sdma_progress(s, 1))
        ;
    for (i = 0; i < s->num_engines; i++) {
        dsm_sdma_queue_t *q = s->queues[i];
        pthread_mutex_lock(&q->lock);
        uint64_t tail = q->tail;
        pthread_mutex_unlock(&q->lock);
        dsm_sdma_queue_wait(q, tail);
    }
    dsm_sdma_proxy_stop(s);
    if (s->cfg.stats)
        print_stats(s, rank);
    s->ops->close(s);
    for (i = 0; i < s->num_queues; i++)
        dsm_sdma_queue_free(s->queues[i]);
    free(s->req);
    pthread_mutex_destroy(&s->progress_lock);
    pthread_mutex_destroy(&s->queues_lock);
    free(s);
}

const char *dsm_sdma_backend_name(const dsm_sdma_t *s)
{
    return s->ops->name;
}

const char *dsm_sdma_describe(const dsm_sdma_t *s)
{
    return s->ops->describe ? s->ops->describe(s) : NULL;
}

uint32_t dsm_sdma_caps(const dsm_sdma_t *s)
{
    return s->ops->caps(s);
}

int dsm_sdma_num_engines(const dsm_sdma_t *s)
{
    return s->num_engines;
}

dsm_status_t dsm_sdma_queue_create(dsm_sdma_t *s, int engine,
                                   dsm_sdma_queue_t **out)
{
    if (engine < 0 || engine >= s->num_engines)
        return DSM_ERR_INVAL;
    return dsm_sdma_queue_new(s, engine, 1, out);
}

/* ------------------------------------------------------------ requests */

static int drain_requests(dsm_sdma_t *s, int help);

/* Submission at issue (DSM_SDMA_CAP_CALLER_SUBMIT without a proxy
 * thread): a request issued must start without any later call from its
 * PE, and no thread would otherwise move the ring. The issuing thread
 * moves it into the queues itself (one append and one doorbell; the
 * backend may hold doorbells back while its engine is busy and then posts
 * them by itself). When another thread holds the progress lock, that
 * thread looks at the ring again after letting the lock go, so a request
 * is never left behind: each side publishes (the request; the unlock),
 * fences, then reads the other's word, and with both fences sequentially
 * consistent at least one of them sees the other. Every holder of the
 * lock in this mode ends with this function. */
static int submit_left(dsm_sdma_t *s)
{
    int n = 0;
    for (;;) {
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        if (!dsm_sdma_requests_pending(s) ||
            pthread_mutex_trylock(&s->progress_lock) != 0)
            return n;
        n += drain_requests(s, 0);
        pthread_mutex_unlock(&s->progress_lock);
    }
}

/* The request ring has a free cell at its head (after helping). */
/* Vyukov's bounded MPMC queue: the request cell for lap pos is free when
 * its sequence equals pos (0 here), still taken by the lap before when
 * it is behind (< 0). */
static inline int64_t cell_lap(dsm_sdma_t *s, uint64_t pos,
                               dsm_sdma_req_t **cell)
{
    *cell = &s->req[pos & s->req_mask];
    return (int64_t)(__atomic_load_n(&(*cell)->seq, __ATOMIC_ACQUIRE) - pos);
}

static int ring_room(void *p)
{
    dsm_sdma_t *s = p;
    dsm_sdma_req_t *cell;
    dsm_sdma_progress(s, 1);
    return cell_lap(s, __atomic_load_n(&s->req_head, __ATOMIC_RELAXED),
                    &cell) >= 0;
}

static void describe_ring(const void *p, char *buf, size_t n)
{
    const dsm_sdma_t *s = p;
    snprintf(buf, n,
             "room in the %s DMA layer's request ring (%llu entries, all "
             "taken; %llu moved to the engines' queues)",
             s->ops->name, (unsigned long long)(s->req_mask + 1),
             (unsigned long long)__atomic_load_n(&s->req_tail,
                                                 __ATOMIC_RELAXED));
}

void dsm_sdma_request(dsm_sdma_t *s, int engine, const dsm_cmd_t *cmd)
{
    uint64_t pos = __atomic_load_n(&s->req_head, __ATOMIC_RELAXED);
    dsm_sdma_req_t *cell;
    dsm_backoff_t b = {0};

    for (;;) {
        int64_t dif = cell_lap(s, pos, &cell);
        if (dif == 0) {
            if (__atomic_compare_exchange_n(&s->req_head, &pos, pos + 1, 1,
                                            __ATOMIC_RELAXED,
                                            __ATOMIC_RELAXED))
                break;
        } else if (dif < 0) {
            /* Ring full: become the proxy for a moment. */
            if (!dsm_sdma_progress(s, 1)) {
                if (s->cfg.wait)
                    s->cfg.wait(NULL, describe_ring, s, ring_room, s);
                else
                    dsm_backoff(&b, NULL, NULL, NULL);
            }
            pos = __atomic_load_n(&s->req_head, __ATOMIC_RELAXED);
        } else {
            pos = __atomic_load_n(&s->req_head, __ATOMIC_RELAXED);
        }
    }
    cell->cmd = *cmd;
    cell->engine = engine;
    __atomic_store_n(&cell->seq, pos + 1, __ATOMIC_RELEASE);
    if (s->caller_submit)
        submit_left(s);
    /* Even when the request is already on its engine: the proxy thread
     * retires it and posts what the backend held back. */
    dsm_wake_notify(s->wake);
}

/* Move pending requests into their queues; one doorbell per queue. Caller
 * holds progress_lock. */
static int drain_requests(dsm_sdma_t *s, int help)
{
    dsm_sdma_queue_t *cur = NULL;
    uint64_t t0 = dsm_sdma_now(s);
    int n = 0;

    for (;;) {
        dsm_sdma_req_t *cell = &s->req[s->req_tail & s->req_mask];
        uint64_t seq = __atomic_load_n(&cell->seq, __ATOMIC_ACQUIRE);
        if (seq != s->req_tail + 1)
            break;
        dsm_sdma_queue_t *q = s->queues[cell->engine];
        if (q != cur) {
            if (cur) {
                dsm_sdma_queue_ring_locked(cur);
                pthread_mutex_unlock(&cur->lock);
            }
            cur = q;
            pthread_mutex_lock(&cur->lock);
        }
        while (!dsm_sdma_queue_append_locked(q, &cell->cmd)) {
            /* Queue full: hand over what we have and free slots. Without
             * a proxy thread the caller may be the engine thread that
             * executes q (cpu: engines take the proxy role), so it runs q
             * itself: waiting for its own completions would move nothing
             * until some other thread lent a hand (issue #11). */
            dsm_sdma_queue_ring_locked(q);
            pthread_mutex_unlock(&q->lock);
            if (!dsm_sdma_queue_retire(q, help || !s->proxy_running))
                sched_yield();
            pthread_mutex_lock(&q->lock);
        }
        __atomic_store_n(&cell->seq, s->req_tail + s->req_mask + 1,
                         __ATOMIC_RELEASE);
        __atomic_store_n(&s->req_tail, s->req_tail + 1, __ATOMIC_RELEASE);
        n++;
    }
    if (cur) {
        dsm_sdma_queue_ring_locked(cur);
        pthread_mutex_unlock(&cur->lock);
    }
    if (n) {
        s->proxy_stats.requests += (uint64_t)n;
        if (s->cfg.stats)
            s->proxy_stats.ns_control += dsm_now_ns() - t0;
    }
    return n;
}

int dsm_sdma_progress(dsm_sdma_t *s, int help)
{
    int nq = __atomic_load_n(&s->num_queues, __ATOMIC_ACQUIRE);
    int moved = 0, i;

    if (pthread_mutex_trylock(&s->progress_lock) == 0) {
        moved += drain_requests(s, help);
        for (i = 0; i < nq; i++)
            moved += (int)DSM_MIN(dsm_sdma_queue_retire(s->queues[i], help),
                                  (uint64_t)1 << 20);
        pthread_mutex_unlock(&s->progress_lock);
        if (s->caller_submit)
            moved += submit_left(s); /* what arrived while we held it */
    } else if (help) {
        /* Someone else is the proxy; still lend the engines a hand. */
        for (i = 0; i < nq; i++)
            s->ops->poll(s->queues[i], 1);
    }
    return moved;
}

uint64_t dsm_sdma_post(dsm_sdma_queue_t *q, const dsm_cmd_t *cmds, size_t n)
{
    dsm_sdma_t *s = q->sdma;
    uint64_t t0 = dsm_sdma_now(s), tail;
    size_t i;

    pthread_mutex_lock(&q->lock);
    for (i = 0; i < n; i++) {
        while (!dsm_sdma_queue_append_locked(q, &cmds[i])) {
            dsm_sdma_queue_ring_locked(q);
            pthread_mutex_unlock(&q->lock);
            if (!dsm_sdma_progress(s, 1))
                sched_yield();
            pthread_mutex_lock(&q->lock);
        }
    }
    if (s->cfg.stats)
        q->stats.ns_control += dsm_now_ns() - t0;
    dsm_sdma_queue_ring_locked(q);
    tail = q->tail;
    pthread_mutex_unlock(&q->lock);
    return tail;
}

struct queue_wait_arg {
    dsm_sdma_queue_t *q;
    uint64_t seq;
};

static int queue_reached(void *p)
{
    struct queue_wait_arg *a = p;
    dsm_sdma_progress(a->q->sdma, 1);
    return __atomic_load_n(&a->q->retired, __ATOMIC_ACQUIRE) >= a->seq;
}

static void describe_queue(const void *p, char *buf, size_t n)
{
    const struct queue_wait_arg *a = p;
    const dsm_sdma_queue_t *q = a->q;
    snprintf(buf, n,
             "the %s DMA engine %d's queue %d to retire its commands up to "
             "%llu (retired %llu, completed %llu, submitted %llu)",
             q->sdma->ops->name, q->engine, q->index,
             (unsigned long long)a->seq,
             (unsigned long long)__atomic_load_n(&q->retired,
                                                 __ATOMIC_RELAXED),
             (unsigned long long)__atomic_load_n(&q->completed,
                                                 __ATOMIC_RELAXED),
             (unsigned long long)__atomic_load_n(&q->submitted,
                                                 __ATOMIC_RELAXED));
}

void dsm_sdma_queue_wait(dsm_sdma_queue_t *q, uint64_t seq)
{
    struct queue_wait_arg a = {q, seq};
    dsm_backoff_t b = {0};

    if (queue_reached(&a))
        return;
    if (q->sdma->cfg.wait) {
        q->sdma->cfg.wait(NULL, describe_queue, &a, queue_reached, &a);
        return;
    }
    while (!queue_reached(&a))
        dsm_backoff(&b, q->sdma->app_wake, queue_reached, &a);
}

void dsm_sdma_trigger(dsm_sdma_t *s, uint64_t *word, uint64_t value,
                      dsm_wake_t *wake)
{
    (void)s;
    __atomic_store_n(word, value, __ATOMIC_RELEASE);
    if (wake)
        dsm_wake_notify(wake);
}

/* ------------------------------------------------------------ GPU memory */

void dsm_sdma_gpu_configure(const dsm_sdma_gpu_settings_t *set)
{
    for (size_t i = 0; i < DSM_ARRAY_SIZE(backends); i++)
        if (backends[i]->gpu_configure)
            backends[i]->gpu_configure(set);
}

const dsm_sdma_gpu_ops_t *dsm_sdma_gpu(const dsm_sdma_t *s)
{
    const dsm_sdma_gpu_ops_t *g = s ? s->ops->gpu : NULL;
    return g && g->active() ? g : NULL;
}
