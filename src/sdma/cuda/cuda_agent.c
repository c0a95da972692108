/*
 * cuda backend: the progress agent, a thread that posts what the backend
 * holds back (held copies, queues stopped at the gate bound) when no
 * thread of the PE polls. The overview of the backend is in cuda.c.
 */
#include "sdma/cuda/cuda_int.h"

#include <pthread.h>
#include <sched.h>

/* ------------------------------------------------------------ progress agent
 */

/* A request issued is started without any later call from the PE that
 * issued it. The issuing thread submits its requests itself, but two
 * kinds of work are held back on purpose and would otherwise wait for the
 * PE's next quiet or wait: plain copies held while the stream runs
 * (coalescing), and a queue's commands past DSM_CUDA_MAX_GATED unpassed
 * WAITs. The agent is a thread, started the first time something is held
 * back, that sleeps on its own wake word while nothing is held. When
 * something is: held copies are posted once the stream has drained and
 * no new copy was held for DSM_CUDA_AGENT_SETTLE_NS (a burst of put_nbi
 * followed by quiet is still one batch posted by the quiet, as measured
 * for coalescing); a blocked queue is resumed once a gate has passed. It
 * yields between looks, then sleeps in growing bounded steps, so a queue
 * blocked behind a trigger that fires late costs little. Not a proxy: it
 * never takes the request ring or the progress lock, only q->lock by
 * trylock, as poll() does. */
#define DSM_CUDA_AGENT_SETTLE_NS 5000
#define DSM_CUDA_AGENT_YIELDS 2000
#define DSM_CUDA_AGENT_SLEEP_MIN_NS 20000ull
#define DSM_CUDA_AGENT_SLEEP_MAX_NS 1000000ull
#define DSM_CUDA_AGENT_IDLE_NS 100000000ull

static struct {
    pthread_mutex_t lock; /* start and stop */
    pthread_t thread;
    int running;
    int failed;
    volatile int stop;
    dsm_wake_t wake;
} agent = {.lock = PTHREAD_MUTEX_INITIALIZER};

static int held(const cu_queue_t *cq)
{
    return __atomic_load_n(&cq->deferred, __ATOMIC_ACQUIRE) ||
           __atomic_load_n(&cq->blocked, __ATOMIC_ACQUIRE);
}

static int agent_has_work(void *arg)
{
    dsm_sdma_t *s = arg;
    int nq = __atomic_load_n(&s->num_queues, __ATOMIC_ACQUIRE);
    if (agent.stop)
        return 1;
    for (int i = 0; i < nq; i++)
        if (held(s->queues[i]->priv))
            return 1;
    return 0;
}

static int agent_stopping(void *arg)
{
    (void)arg;
    return agent.stop;
}

/* Held copies of q: posted once the stream has drained and they have
 * settled. Returns 1 if it posted. */
static int agent_undefer(dsm_sdma_queue_t *q, cu_queue_t *cq)
{
    uint64_t now;
    unsigned gen;

    if (!__atomic_load_n(&cq->deferred, __ATOMIC_ACQUIRE))
        return 0;
    if (__atomic_load_n(cq->done, __ATOMIC_ACQUIRE) <
        __atomic_load_n(&cq->posted, __ATOMIC_RELAXED)) {
        cq->agent_since = 0; /* the stream still runs */
        return 0;
    }
    now = dsm_now_ns();
    gen = __atomic_load_n(&cq->defer_gen, __ATOMIC_RELAXED);
    if (!cq->agent_since || gen != cq->agent_gen) {
        cq->agent_gen = gen;
        cq->agent_since = now;
        return 0;
    }
    if (now - cq->agent_since < DSM_CUDA_AGENT_SETTLE_NS ||
        pthread_mutex_trylock(&q->lock) != 0)
        return 0;
    int moved = cq->deferred;
    dsm_cuda_undefer_locked(q);
    pthread_mutex_unlock(&q->lock);
    cq->agent_since = 0;
    return moved;
}

static void *agent_main(void *arg)
{
    dsm_sdma_t *s = arg;
    unsigned idle = 0;
    uint64_t sleep_ns = 0;

    while (!agent.stop) {
        int nq = __atomic_load_n(&s->num_queues, __ATOMIC_ACQUIRE);
        int any = 0, moved = 0;
        for (int i = 0; i < nq; i++) {
            dsm_sdma_queue_t *q = s->queues[i];
            cu_queue_t *cq = q->priv;
            if (!held(cq))
                continue;
            any = 1;
            moved |= dsm_cuda_resume_blocked(q, cq);
            moved |= agent_undefer(q, cq);
        }
        if (moved || !any) {
            idle = 0;
            sleep_ns = 0;
            if (!moved)
                dsm_wake_sleep(&agent.wake, agent_has_work, s,
                               DSM_CUDA_AGENT_IDLE_NS);
            continue;
        }
        if (++idle < DSM_CUDA_AGENT_YIELDS) {
            sched_yield();
            continue;
        }
        sleep_ns = sleep_ns ? DSM_MIN(sleep_ns * 2, DSM_CUDA_AGENT_SLEEP_MAX_NS)
                            : DSM_CUDA_AGENT_SLEEP_MIN_NS;
        /* A newly held doorbell (dsm_cuda_agent_kick) ends the sleep early. */
        dsm_wake_sleep(&agent.wake, agent_stopping, NULL, sleep_ns);
    }
    return NULL;
}

/* 1 when the agent runs (started now if need be); 0 if it cannot be
 * started: then nothing may be held back. */
int dsm_cuda_agent_start(dsm_sdma_t *s)
{
    if (DSM_LIKELY(__atomic_load_n(&agent.running, __ATOMIC_ACQUIRE)))
        return 1;
    pthread_mutex_lock(&agent.lock);
    if (!agent.running && !agent.failed) {
        agent.stop = 0;
        if (pthread_create(&agent.thread, NULL, agent_main, s) == 0) {
#ifdef __linux__
            pthread_setname_np(agent.thread, "dsm-cuda-agent");
#endif
            __atomic_store_n(&agent.running, 1, __ATOMIC_RELEASE);
        } else {
            agent.failed = 1;
            dsm_log_warn("cuda backend: could not start the progress agent; "
                         "copies are posted at once, never held back");
        }
    }
    int ok = agent.running;
    pthread_mutex_unlock(&agent.lock);
    return ok;
}

void dsm_cuda_agent_kick(void)
{
    dsm_wake_notify(&agent.wake);
}

void dsm_cuda_agent_stop(void)
{
    pthread_mutex_lock(&agent.lock);
    if (agent.running) {
        agent.stop = 1;
        __atomic_fetch_add(&agent.wake.seq, 1, __ATOMIC_RELEASE);
        dsm_futex_wake(&agent.wake.seq, 0x7fffffff);
        pthread_join(agent.thread, NULL);
        __atomic_store_n(&agent.running, 0, __ATOMIC_RELEASE);
        agent.stop = 0;
    }
    agent.failed = 0;
    pthread_mutex_unlock(&agent.lock);
}
