/*
 * What a PE says when a signal ends it (src/runtime/stall.c): outside the
 * library's waits, nothing, unless persistent requests keep instances
 * posted ahead on CUDA streams (dsm_stall_posted_ahead): then one line
 * naming them and what waits behind them (a cudaDeviceSynchronize in the
 * program hung a test on an H100 with no word, 2026-12-07). Each case
 * runs in a child of its own that the signal ends; its stderr comes back
 * through a pipe.
 */
#include <check.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_main.h"
#include "common/common.h"
#include "runtime/stall.h"

/* Runs a child that installs the handlers, adds each of deltas to the
 * count, then raises sig. Returns its stderr (static); *status its
 * wait status. */
static const char *ended(int sig, const int *deltas, int n, int *status)
{
    static char out[4096];
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        dup2(p[1], STDERR_FILENO);
        close(p[0]);
        dsm_log_pe = 3;
        /* Check's runner handles SIGTERM and SIGINT (it ends the tests'
         * process group): the library installs its handlers only over
         * the default action. */
        signal(SIGTERM, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        signal(SIGHUP, SIG_DFL);
        dsm_stall_install();
        for (int i = 0; i < n; i++)
            dsm_stall_posted_ahead(deltas[i]);
        raise(sig);
        _exit(99); /* the signal did not end it */
    }
    close(p[1]);
    size_t at = 0;
    ssize_t r;
    while (at + 1 < sizeof(out) &&
           (r = read(p[0], out + at, sizeof(out) - 1 - at)) > 0)
        at += (size_t)r;
    out[at] = '\0';
    close(p[0]);
    ck_assert_int_eq(waitpid(pid, status, 0), pid);
    return out;
}

START_TEST(nothing_posted_says_nothing)
{
    int st;
    const char *e = ended(SIGTERM, NULL, 0, &st);
    ck_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
    ck_assert_str_eq(e, "");
}
END_TEST

START_TEST(one_posted_ahead_says_so)
{
    int st, d[] = {1};
    const char *e = ended(SIGTERM, d, 1, &st);
    /* The signal's own end still comes (status: killed by it). */
    ck_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
    ck_assert_str_eq(
        e, "dmashmem: PE 3: signal 15 (Terminated) ended this PE outside "
           "the library's waits while 1 persistent request keeps instances "
           "posted ahead on CUDA streams: until shmemx_req_free, "
           "cudaDeviceSynchronize does not return and a cudaMemcpy on the "
           "legacy stream can wait behind them (shmemx_req(3), NOTES)\n");
}
END_TEST

START_TEST(two_then_freed)
{
    int st, two[] = {1, 1}, freed[] = {1, 1, -1, -1};
    const char *e = ended(SIGINT, two, 2, &st);
    ck_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGINT);
    ck_assert_ptr_nonnull(strstr(e, "signal 2 (Interrupt) ended this PE "
                                    "outside the library's waits while 2 "
                                    "persistent requests keep instances"));
    /* One line. */
    ck_assert_ptr_eq(strchr(e, '\n'), e + strlen(e) - 1);
    e = ended(SIGHUP, freed, 4, &st);
    ck_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGHUP);
    ck_assert_str_eq(e, "");
}
END_TEST

static Suite *stall_suite(void)
{
    Suite *s = suite_create("stall");
    TCase *tc = tcase_create("ended");
    tcase_add_test(tc, nothing_posted_says_nothing);
    tcase_add_test(tc, one_posted_ahead_says_so);
    tcase_add_test(tc, two_then_freed);
    suite_add_tcase(s, tc);
    return s;
}

DSM_CHECK_MAIN(stall_suite)
