/*
 * The waiting policy (src/common/backoff.c), SHMEM_WAIT_MODE's three
 * modes: 0 (spin) spins, then yields, and never sleeps; 1 (PEs outnumber
 * cores) yields a few times, then sleeps in growing bounded steps;
 * 2 (sleep) never spins: its first failed check sleeps. Where the network
 * path sets dsm_backoff_block, the sleep is that hook's, not the wake
 * word's.
 */
#include <check.h>
#include <stdint.h>

#include "check_main.h"
#include "common/backoff.h"

static int never(void *arg)
{
    (void)arg;
    return 0;
}

static dsm_wake_t wake;
static uint64_t hook_ns;
static int hook_calls;

static int hook(uint64_t ns)
{
    hook_ns = ns;
    hook_calls++;
    return 1;
}

START_TEST(sleep_mode_never_spins)
{
    dsm_backoff_t b = {0};
    dsm_backoff_may_sleep = 2;
    dsm_backoff(&b, &wake, never, NULL);
    /* Slept at once: no spin or yield counted, the first step taken. */
    ck_assert_uint_eq(b.n, 0);
    ck_assert_uint_eq(b.sleep_us, 20);
    dsm_backoff(&b, &wake, never, NULL);
    ck_assert_uint_eq(b.sleep_us, 40);
    ck_assert_uint_eq(wake.sleepers, 0);
}
END_TEST

START_TEST(oversubscribed_sleeps_soon)
{
    dsm_backoff_t b = {0};
    int calls = 0;
    dsm_backoff_may_sleep = 1;
    while (b.sleep_us == 0 && calls < 100000) {
        dsm_backoff(&b, &wake, never, NULL);
        calls++;
    }
    /* No spin (the PE waited for needs this core), 32 yields, then the
     * first sleep. */
    ck_assert_int_eq(calls, 32 + 1);
    for (int i = 0; i < 10; i++)
        dsm_backoff(&b, &wake, never, NULL);
    ck_assert_uint_eq(b.sleep_us, 1000); /* grows to 1 ms, no further */
}
END_TEST

START_TEST(spin_mode_never_sleeps)
{
    dsm_backoff_t b = {0};
    dsm_backoff_may_sleep = 0;
    for (int i = 0; i < 5000; i++)
        dsm_backoff(&b, &wake, never, NULL);
    ck_assert_uint_eq(b.sleep_us, 0);
    ck_assert_uint_eq(b.n, 5000);
}
END_TEST

START_TEST(block_hook_replaces_the_sleep)
{
    dsm_backoff_t b = {0};
    dsm_backoff_may_sleep = 2;
    dsm_backoff_block = hook;
    hook_calls = 0;
    uint32_t seq = wake.seq;
    dsm_backoff(&b, &wake, never, NULL);
    dsm_backoff_block = NULL;
    ck_assert_int_eq(hook_calls, 1);
    ck_assert_uint_eq(hook_ns, 20000);
    ck_assert_uint_eq(wake.seq, seq);
    ck_assert_uint_eq(wake.sleepers, 0);
}
END_TEST

static Suite *backoff_suite(void)
{
    Suite *s = suite_create("backoff");
    TCase *tc = tcase_create("modes");
    /* spin_mode_never_sleeps yields ~4700 times: on 2 cores with the
     * suite's other tests spinning beside it each yield may wait a time
     * slice, past Check's 4 s default (the fresh-clone CI timed it out
     * once, 2026-12-06). */
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, sleep_mode_never_spins);
    tcase_add_test(tc, oversubscribed_sleeps_soon);
    tcase_add_test(tc, spin_mode_never_sleeps);
    tcase_add_test(tc, block_hook_replaces_the_sleep);
    suite_add_tcase(s, tc);
    return s;
}

DSM_CHECK_MAIN(backoff_suite)
