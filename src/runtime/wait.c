/*
 * Waiting: every blocking wait of the library (wait_until, barriers,
 * signal waits) goes through dsm_rt_wait: spin, yield, then sleep on this
 * PE's application wake word, which signals, barrier flags and completions
 * notify (plain puts do not: the sleep is bounded instead). While waiting, the thread lends the DMA layer a hand so that
 * its own nbi operations still move on an oversubscribed node.
 */
#include "wait.h"
#include "path.h"

#include "common/backoff.h"
#include "stall.h"

#include <sched.h>

struct wait_arg {
    int (*cond)(void *);
    void *arg;
    unsigned n;
};

static int wait_cond(void *p)
{
    struct wait_arg *w = p;
    if ((++w->n & 63) == 0 && dsm_rt.sdma)
        dsm_sdma_progress(dsm_rt.sdma, 1);
    /* A remote PE's operation on our memory may need us to progress
     * (providers with manual progress): every check while waiting. */
    dsm_path_progress();
    return w->cond(w->arg);
}

/* A program that waits by testing (shmem_test in a loop, as bale's
 * exstack2 does) spins in its own code, where no backoff of ours can
 * reach it. Where PEs outnumber cores, the PE it waits for may have no core
 * until this one's time slice ends: so a thread whose tests come back to
 * back (each within TEST_GAP_NS of the previous) yields the core once it
 * has made TEST_SPIN of them (SHMEM_WAIT_MODE=sleep: from the second).
 * Measured: bale histo, exstack2, 4 PEs on 2 cores,
 * docs/PERFORMANCE-HISTORY.md (2026-12-04). */
#define TEST_GAP_NS 50000ull
#define TEST_SPIN 64

static _Thread_local uint64_t test_last_ns;
static _Thread_local unsigned test_run;

static void test_backoff(void)
{
    int mode = dsm_backoff_may_sleep;
    if (!mode)
        return;
    uint64_t now = dsm_now_ns();
    test_run = now - test_last_ns < TEST_GAP_NS ? test_run + 1 : 0;
    if (test_run >= (mode == 2 ? 1u : TEST_SPIN))
        sched_yield();
    /* After the yield: the time away is not a gap in the loop. */
    test_last_ns = dsm_now_ns();
}

void dsm_rt_progress(void)
{
    if (dsm_rt.sdma)
        dsm_sdma_progress(dsm_rt.sdma, 1);
    dsm_path_progress();
    test_backoff();
}

void dsm_rt_wait_in(const char *routine,
                    void (*describe)(const void *, char *, size_t),
                    const void *darg, int (*cond)(void *), void *arg)
{
    struct wait_arg w = {cond, arg, 0};
    dsm_backoff_t b = {0};
    dsm_stall_t st = {0, 0, 0};

    while (!wait_cond(&w)) {
        dsm_backoff(&b, &dsm_rt.ctrl->wake_app, wait_cond, &w);
        /* A wait that says neither (dsm_rt_wait) leaves it to its
         * condition: a collective's describes itself there. */
        if (routine || describe)
            dsm_stall_tick(&st, routine, describe, darg);
    }
    dsm_stall_done(&st);
}

void dsm_rt_wait(int (*cond)(void *), void *arg)
{
    dsm_rt_wait_in(NULL, NULL, NULL, cond, arg);
}

struct ge_arg {
    const uint64_t *word;
    uint64_t value;
};

static int ge_reached(void *p)
{
    const struct ge_arg *a = p;
    return __atomic_load_n(a->word, __ATOMIC_ACQUIRE) >= a->value;
}

void dsm_rt_wait_ge(const uint64_t *word, uint64_t value)
{
    struct ge_arg a = {word, value};
    if (!ge_reached(&a))
        dsm_rt_wait(ge_reached, &a);
}

static _Thread_local size_t any_next;

size_t dsm_rt_any_start(size_t n)
{
    return any_next < n ? any_next : 0;
}

void dsm_rt_any_found(size_t i)
{
    any_next = i + 1;
}

void dsm_rt_bad_cmp(const char *routine, int cmp)
{
    dsm_rt_fatal(routine, "invalid comparison operator %d (use SHMEM_CMP_EQ, "
                 "NE, GT, LE, LT or GE)", cmp);
}
