/*
 * Address translation (dsm_rt_xlate in src/runtime/rt.h) and the fatal
 * errors behind it (src/runtime/error.c), with dsm_rt's segments filled by
 * hand: no library, no bootstrap. A bad address or PE must end the process
 * with status 1 and one line naming the routine, the PE and the bad value.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_main.h"
#include "rt.h"

/* What init.c would define. */
struct dsm_rt dsm_rt;

#define SEG0 4096
#define SEG1 8192
static char mine0[SEG0], peer0[SEG0], mine1[SEG1], peer1a[SEG1], peer1b[SEG1];
static char *peers0[3], *peers1[3];

static void setup(void)
{
    memset(&dsm_rt, 0, sizeof(dsm_rt));
    dsm_rt.initialized = 1;
    dsm_rt.me = 0;
    dsm_rt.npes = 3;
    dsm_log_pe = 0;
    peers0[0] = mine0;
    peers0[1] = peer0;
    peers0[2] = NULL; /* not reachable */
    peers1[0] = mine1;
    peers1[1] = peer1a;
    peers1[2] = peer1b;
    dsm_rt.segs[0] = (dsm_seg_t){.base = mine0, .size = SEG0,
                                 .map_size = SEG0, .peer = peers0,
                                 .fd = -1, .kind = DSM_SEG_HEAP,
                                 .name = "heap"};
    dsm_rt.segs[1] = (dsm_seg_t){.base = mine1, .size = SEG1,
                                 .map_size = SEG1, .peer = peers1,
                                 .fd = -1, .kind = DSM_SEG_STATIC,
                                 .name = "static"};
    dsm_rt.nsegs = 2;
}

START_TEST(test_in_range)
{
    ck_assert_ptr_eq(dsm_rt_xlate("r", mine0, 1, 0), mine0);
    ck_assert_ptr_eq(dsm_rt_xlate("r", mine0, SEG0, 1), peer0);
    ck_assert_ptr_eq(dsm_rt_xlate("r", mine0 + 100, 8, 1), peer0 + 100);
    ck_assert_ptr_eq(dsm_rt_xlate("r", mine0 + SEG0 - 1, 1, 1),
                     peer0 + SEG0 - 1);
    ck_assert_ptr_eq(dsm_rt_xlate("r", mine1 + 5, 10, 2), peer1b + 5);
    ck_assert_ptr_eq(dsm_rt_xlate("r", mine1 + SEG1 - 8, 8, 1),
                     peer1a + SEG1 - 8);
    /* Zero length at a valid address. */
    ck_assert_ptr_eq(dsm_rt_xlate("r", mine1, 0, 1), peer1a);
}
END_TEST

/* Exit tests: the process must end with status 1. */
START_TEST(test_past_end)
{
    dsm_rt_xlate("shmem_putmem", mine0 + SEG0, 1, 1);
}
END_TEST

START_TEST(test_runs_over)
{
    dsm_rt_xlate("shmem_putmem", mine0 + SEG0 - 4, 8, 1);
}
END_TEST

START_TEST(test_below)
{
    dsm_rt_xlate("shmem_getmem", (char *)((uintptr_t)mine0 - 1), 1, 1);
}
END_TEST

START_TEST(test_unreachable)
{
    dsm_rt_xlate("shmem_putmem", mine0, 8, 2);
}
END_TEST

START_TEST(test_bad_pe)
{
    DSM_CHECK_PE("shmem_putmem", 3);
}
END_TEST

START_TEST(test_negative_pe)
{
    DSM_CHECK_PE("shmem_putmem", -1);
}
END_TEST

/* Run fn in a child with stderr captured: status and message. */
static void run_captured(void (*fn)(void), int *status, char *msg, size_t len)
{
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        dup2(p[1], 2);
        close(p[0]);
        fn();
        _exit(99); /* fn returned: wrong */
    }
    close(p[1]);
    size_t n = 0;
    ssize_t r;
    while (n < len - 1 && (r = read(p[0], msg + n, len - 1 - n)) > 0)
        n += (size_t)r;
    msg[n] = '\0';
    close(p[0]);
    ck_assert_int_eq(waitpid(pid, status, 0), pid);
}

static void bad_addr_stack(void)
{
    char local[16] = {0};
    dsm_rt_xlate("shmem_long_put", local, 8, 1);
}

static void bad_range(void)
{
    dsm_rt_xlate("shmem_iput", mine1 + SEG1 - 4, 16, 1);
}

static void bad_pe(void)
{
    DSM_CHECK_PE("shmem_putmem", 7);
}

static void unreachable(void)
{
    dsm_rt_xlate("shmem_getmem", mine0 + 8, 8, 2);
}

/* PE 2 has no mapping (as a network PE): a range past the heap's end
 * says so (issue #27: it said "not reachable"), naming the range. */
static void past_end_unmapped(void)
{
    dsm_rt_bad_addr("shmem_putmem", mine0 + SEG0 - 4, 64, 2);
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

START_TEST(test_messages)
{
    char msg[2048];
    int st;

    run_captured(bad_addr_stack, &st, msg, sizeof(msg));
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 1, "status %x", st);
    ck_assert_int_eq(count_lines(msg), 1);
    ck_assert_msg(strstr(msg, "dmashmem: PE 0: shmem_long_put: ") == msg,
                  "message: %s", msg);
    ck_assert_msg(strstr(msg, "not symmetric"), "message: %s", msg);
    ck_assert_msg(strstr(msg, "PE 1"), "target PE missing: %s", msg);

    run_captured(bad_range, &st, msg, sizeof(msg));
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 1, "status %x", st);
    ck_assert_int_eq(count_lines(msg), 1);
    ck_assert_msg(strstr(msg, "shmem_iput: "), "message: %s", msg);
    ck_assert_msg(strstr(msg, "static"), "segment missing: %s", msg);
    ck_assert_msg(strstr(msg, "16 bytes"), "length missing: %s", msg);

    run_captured(bad_pe, &st, msg, sizeof(msg));
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 1, "status %x", st);
    ck_assert_int_eq(count_lines(msg), 1);
    ck_assert_msg(strstr(msg, "dmashmem: PE 0: shmem_putmem: ") == msg,
                  "message: %s", msg);
    ck_assert_msg(strstr(msg, "invalid PE 7"), "message: %s", msg);

    run_captured(past_end_unmapped, &st, msg, sizeof(msg));
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 1, "status %x", st);
    ck_assert_msg(strstr(msg, "shmem_putmem: ") &&
                      strstr(msg, "+ 64 bytes (target PE 2) runs past the end") &&
                      !strstr(msg, "reachable"),
                  "message: %s", msg);

    run_captured(unreachable, &st, msg, sizeof(msg));
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 1, "status %x", st);
    ck_assert_msg(strstr(msg, "shmem_getmem: ") && strstr(msg, "PE 2"),
                  "message: %s", msg);
}
END_TEST

static Suite *xlate_suite(void)
{
    Suite *s = suite_create("xlate");
    TCase *tc = tcase_create("xlate");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, test_in_range);
    tcase_add_exit_test(tc, test_past_end, 1);
    tcase_add_exit_test(tc, test_runs_over, 1);
    tcase_add_exit_test(tc, test_below, 1);
    tcase_add_exit_test(tc, test_unreachable, 1);
    tcase_add_exit_test(tc, test_bad_pe, 1);
    tcase_add_exit_test(tc, test_negative_pe, 1);
    tcase_add_test(tc, test_messages);
    suite_add_tcase(s, tc);
    return s;
}

/* Exit tests need fork mode, whatever CK_FORK says. */
DSM_CHECK_MAIN_FORK(xlate_suite)
