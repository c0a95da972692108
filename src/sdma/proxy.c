/*
 * The host proxy thread: takes requests from application threads, batches
 * them into the engines' queues (one doorbell per queue per round) and
 * retires completions, so that nbi operations progress while the
 * application computes. It sleeps on the process's wake word when there is
 * nothing to do; a request or a doorbell wakes it.
 *
 * A thread that waits for a result (quiet, a blocking put) takes the same
 * role for a moment through dsm_sdma_progress(): on an oversubscribed node a
 * hand-off to another thread costs more than the work.
 */
#include "sdma/backend.h"

#include <stdio.h>
#include <string.h>

#define PROXY_SPIN 2000
#define PROXY_SLEEP_NS (100ull * 1000000ull)

static int proxy_has_work(void *arg)
{
    dsm_sdma_t *s = arg;
    int i, nq;

    if (s->stopping || dsm_sdma_requests_pending(s))
        return 1;
    /* Completions to retire (they free queue slots and finish quiets). */
    nq = __atomic_load_n(&s->num_queues, __ATOMIC_ACQUIRE);
    for (i = 0; i < nq; i++) {
        dsm_sdma_queue_t *q = s->queues[i];
        if (s->ops->poll(q, 0) != __atomic_load_n(&q->retired, __ATOMIC_ACQUIRE))
            return 1;
    }
    return 0;
}

static void *proxy_main(void *arg)
{
    dsm_sdma_t *s = arg;
    unsigned idle = 0;

    while (!s->stopping) {
        if (dsm_sdma_progress(s, 0)) {
            idle = 0;
            continue;
        }
        /* Idle: look for work without the progress lock, so that a
         * waiter that retires its own completion finds the lock free. */
        while (++idle < PROXY_SPIN && !proxy_has_work(s))
            dsm_cpu_relax();
        if (idle < PROXY_SPIN)
            continue;
        dsm_wake_sleep(s->wake, proxy_has_work, s, PROXY_SLEEP_NS);
        idle = 0;
    }
    return NULL;
}

void dsm_sdma_proxy_start(dsm_sdma_t *s)
{
    if (pthread_create(&s->proxy, NULL, proxy_main, s) == 0) {
        s->proxy_running = 1;
#ifdef __linux__
        pthread_setname_np(s->proxy, "dsm-proxy");
#endif
    } else {
        /* Still correct without it: waiters make progress themselves. */
        dsm_log_warn("could not start the proxy thread; nbi operations "
                     "progress only inside quiet/fence/barrier");
    }
}

void dsm_sdma_proxy_stop(dsm_sdma_t *s)
{
    if (!s->proxy_running)
        return;
    s->stopping = 1;
    __atomic_fetch_add(&s->wake->seq, 1, __ATOMIC_RELEASE);
    dsm_futex_wake(&s->wake->seq, 0x7fffffff);
    pthread_join(s->proxy, NULL);
    s->proxy_running = 0;
    s->stopping = 0;
}
