/*
 * The waiting policy (backoff.h).
 */
#include "common/backoff.h"

#include <sched.h>

/* Spin briefly (the answer is often a few hundred ns away on an idle core),
 * then yield (on an oversubscribed node the writer may need our core), then
 * sleep on the wake word. Writers that notify (signals, barrier flags,
 * completions) end the sleep at once; for the others (plain puts) the sleep
 * is bounded, starting short and growing to 1 ms.
 *
 * Where waiters may sleep (dsm_backoff_may_sleep 1: PEs outnumber cores)
 * the yields are few: every yield hands the core to some runnable thread,
 * not necessarily the one we wait for, and costs that thread's time slice
 * (measured: barrier_all over the network, 4 PEs on 2 cores); and there is
 * no spin: the PE we wait for is almost never running on another core at
 * that moment (it needs ours), so a spin only burns the slice (#28: 64
 * relaxes before the first yield cost 1-2 us per wait; without them, 2
 * cores, us per call, 16 PEs: alltoall 8 B 39 -> 24, barrier 140 -> 87,
 * sum_to_all 93 -> 56; 4 PEs: alltoall 5.5 -> 3.3, barrier 5.8 -> 3.8).
 * With 2 (SHMEM_WAIT_MODE=sleep) a waiter never spins nor yields: it
 * sleeps at its first failed check. */
#define BACKOFF_SPIN 256
#define BACKOFF_YIELD (BACKOFF_SPIN + 2048)
#define BACKOFF_OVER_SPIN 0
#define BACKOFF_OVER_YIELD (BACKOFF_OVER_SPIN + 32)
#define BACKOFF_SLEEP_MIN_US 20
#define BACKOFF_SLEEP_MAX_US 1000

int dsm_backoff_may_sleep = 1;

void (*dsm_backoff_progress)(void);
int (*dsm_backoff_block)(uint64_t ns);

void dsm_backoff(dsm_backoff_t *b, dsm_wake_t *wake, int (*cond)(void *),
                 void *arg)
{
    void (*progress)(void) = dsm_backoff_progress;
    if (progress)
        progress();
    int mode = dsm_backoff_may_sleep;
    uint32_t spin = mode == 2 ? 0 : mode ? BACKOFF_OVER_SPIN : BACKOFF_SPIN;
    uint32_t yield = mode == 2 ? 0 : mode ? BACKOFF_OVER_YIELD : BACKOFF_YIELD;
    if (b->n < spin) {
        b->n++;
        dsm_cpu_relax();
    } else if (b->n < yield || !wake || !cond || !mode) {
        b->n++;
        sched_yield();
    } else {
        b->sleep_us = b->sleep_us ? DSM_MIN(b->sleep_us * 2,
                                            BACKOFF_SLEEP_MAX_US)
                                  : BACKOFF_SLEEP_MIN_US;
        int (*block)(uint64_t) = dsm_backoff_block;
        if (!block || !block((uint64_t)b->sleep_us * 1000ull))
            dsm_wake_sleep(wake, cond, arg, (uint64_t)b->sleep_us * 1000ull);
    }
}
