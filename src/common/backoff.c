/*
 * The waiting policy (backoff.h).
 */
#include "common/backoff.h"

#include <sched.h>

/* Spin briefly (the answer is often a few hundred ns away on an idle core),
 * then yield (on an oversubscribed node the writer may need our core), then
 * sleep on the wake word. Writers that notify (signals, barrier flags,
 * completions) end the sleep at once; for the others (plain puts) the sleep
 * is bounded, starting short and growing to 1 ms. */
#define BACKOFF_SPIN 256
#define BACKOFF_YIELD (BACKOFF_SPIN + 2048)
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
    if (b->n < BACKOFF_SPIN) {
        b->n++;
        dsm_cpu_relax();
    } else if (b->n < BACKOFF_YIELD || !wake || !cond ||
               !dsm_backoff_may_sleep) {
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
