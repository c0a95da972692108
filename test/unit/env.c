/*
 * Environment parsing (src/runtime/env.c, dsm_parse_size in common.c):
 * sizes with K/M/G suffixes, invalid values rejected with a message naming
 * the variable, the SMA_ fallback, defaults. Each test runs in its own
 * process (Check's fork mode), so setenv does not leak between tests.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "common/common.h"
#include "env.h"
#include "segment.h"

extern char **environ;

/* Start from an environment without any SHMEM_ or SMA_ variable. */
static void clean_env(void)
{
    char names[64][128];
    int n = 0;
    for (char **e = environ; *e && n < 64; e++)
        if (!strncmp(*e, "SHMEM_", 6) || !strncmp(*e, "SMA_", 4)) {
            size_t l = strcspn(*e, "=");
            if (l >= sizeof(names[0]))
                continue;
            memcpy(names[n], *e, l);
            names[n++][l] = '\0';
        }
    for (int i = 0; i < n; i++)
        unsetenv(names[i]);
}

/* Run dsm_env_init with stderr captured into buf. */
static int init_capture(char *buf, size_t len)
{
    FILE *f = tmpfile();
    int saved = dup(2), rc;
    ck_assert_ptr_nonnull(f);
    fflush(stderr);
    dup2(fileno(f), 2);
    rc = dsm_env_init();
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(f);
    size_t n = fread(buf, 1, len - 1, f);
    buf[n] = '\0';
    fclose(f);
    return rc;
}

START_TEST(test_parse_size)
{
    static const struct {
        const char *s;
        uint64_t v;
    } ok[] = {
        {"0", 0},
        {"4096", 4096},
        {"1K", 1024},
        {"4k", 4096},
        {"2M", 2u << 20},
        {"512m", 512u << 20},
        {"1G", 1ull << 30},
        {"3g", 3ull << 30},
        {"1T", 1ull << 40},
        {"1KB", 1024},
        {"1KiB", 1024},
        {"2MiB", 2u << 20},
        {"  64K", 65536},
        {"100b", 100},
    };
    static const char *const bad[] = {
        "", "abc", "-1", "-4K", "12X", "1KK", "1.5G", "4 K", "K", "1Gx",
        "99999999999999999999", "17179869184G", "0x10", "1iB",
    };
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        uint64_t v = 12345;
        ck_assert_msg(dsm_parse_size(ok[i].s, &v) == 0, "'%s' rejected",
                      ok[i].s);
        ck_assert_msg(v == ok[i].v, "'%s' gave %llu", ok[i].s,
                      (unsigned long long)v);
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        uint64_t v = 12345;
        ck_assert_msg(dsm_parse_size(bad[i], &v) != 0, "'%s' accepted as %llu",
                      bad[i], (unsigned long long)v);
        ck_assert_msg(v == 12345, "'%s': output written on failure", bad[i]);
    }
    ck_assert_int_ne(dsm_parse_size(NULL, &(uint64_t){0}), 0);
}
END_TEST

START_TEST(test_defaults)
{
    clean_env();
    ck_assert_int_eq(dsm_env_init(), 0);
    ck_assert_uint_eq(dsm_env.symmetric_size, 1ull << 30);
    ck_assert_int_eq(dsm_env.symmetric_size_set, 0);
    ck_assert_int_eq(dsm_env.debug, 0);
    ck_assert_int_eq(dsm_env.debug_set, 0);
    ck_assert_str_eq(dsm_env.bootstrap, "auto");
    ck_assert_str_eq(dsm_env.sdma_backend, "auto");
    ck_assert_int_eq(dsm_env.sdma_engines, 1);
    ck_assert_int_eq(dsm_env.sdma_queue_depth, 4096);
    ck_assert_int_eq(dsm_env.sdma_request_depth, 4096);
    ck_assert_uint_eq(dsm_env.sdma_inline_max, UINT64_MAX); /* auto */
    ck_assert_str_eq(dsm_env.sdma_proxy, "auto");
    ck_assert_str_eq(dsm_env.wait_mode, "auto");
    ck_assert_int_eq(dsm_env.sdma_stats, 0);
}
END_TEST

START_TEST(test_values)
{
    clean_env();
    setenv("SHMEM_SYMMETRIC_SIZE", "64M", 1);
    setenv("SHMEM_DEBUG", "yes", 1);
    setenv("SHMEM_INFO", "off", 1);
    setenv("SHMEM_SDMA_ENGINES", "4", 1);
    setenv("SHMEM_SDMA_QUEUE_DEPTH", "0x40", 1);
    setenv("SHMEM_SDMA_INLINE_MAX", "2k", 1);
    setenv("SHMEM_SDMA_BACKEND", "cpu", 1);
    setenv("SHMEM_SDMA_PROXY", "0", 1);
    setenv("SHMEM_SDMA_STATS", "TRUE", 1);
    ck_assert_int_eq(dsm_env_init(), 0);
    ck_assert_uint_eq(dsm_env.symmetric_size, 64u << 20);
    ck_assert_int_eq(dsm_env.symmetric_size_set, 1);
    ck_assert_int_eq(dsm_env.debug, 1);
    ck_assert_int_eq(dsm_env.info, 0);
    ck_assert_int_eq(dsm_env.info_set, 1);
    ck_assert_int_eq(dsm_env.sdma_engines, 4);
    ck_assert_int_eq(dsm_env.sdma_queue_depth, 64);
    ck_assert_uint_eq(dsm_env.sdma_inline_max, 2048);
    ck_assert_str_eq(dsm_env.sdma_backend, "cpu");
    ck_assert_str_eq(dsm_env.sdma_proxy, "0");
    ck_assert_int_eq(dsm_env.sdma_proxy_set, 1);
    ck_assert_int_eq(dsm_env.sdma_stats, 1);
    /* Parsing again starts from the defaults. */
    unsetenv("SHMEM_SDMA_ENGINES");
    unsetenv("SHMEM_SYMMETRIC_SIZE");
    ck_assert_int_eq(dsm_env_init(), 0);
    ck_assert_int_eq(dsm_env.sdma_engines, 1);
    ck_assert_int_eq(dsm_env.sdma_engines_set, 0);
    ck_assert_uint_eq(dsm_env.symmetric_size, 1ull << 30);
}
END_TEST

static void expect_rejected(const char *var, const char *value)
{
    char err[2048];
    clean_env();
    setenv(var, value, 1);
    int rc = init_capture(err, sizeof(err));
    ck_assert_msg(rc != 0, "%s='%s' accepted", var, value);
    ck_assert_msg(strstr(err, var) != NULL, "%s='%s': message lacks the name: "
                  "%s", var, value, err);
    ck_assert_msg(strstr(err, value) != NULL, "%s='%s': message lacks the "
                  "value: %s", var, value, err);
    ck_assert_msg(strchr(err, '\n') == strrchr(err, '\n'),
                  "%s: more than one line: %s", var, err);
}

START_TEST(test_invalid)
{
    expect_rejected("SHMEM_SYMMETRIC_SIZE", "lots");
    expect_rejected("SHMEM_SYMMETRIC_SIZE", "-5M");
    expect_rejected("SHMEM_SYMMETRIC_SIZE", "12Q");
    expect_rejected("SHMEM_DEBUG", "maybe");
    expect_rejected("SHMEM_SDMA_ENGINES", "two");
    expect_rejected("SHMEM_SDMA_ENGINES", "4x");
    expect_rejected("SHMEM_SDMA_QUEUE_DEPTH", "99999999999999999999999");
    expect_rejected("SHMEM_SDMA_INLINE_MAX", "big");
    expect_rejected("SMA_SYMMETRIC_SIZE", "huge");
}
END_TEST

/* "auto" is a size only where the default is auto (issue #11: the heap's
 * auto became UINT64_MAX, which page rounding wrapped to a 0-byte heap). */
START_TEST(test_size_auto)
{
    expect_rejected("SHMEM_SYMMETRIC_SIZE", "auto");
    expect_rejected("SHMEM_SYMMETRIC_SIZE", "AUTO");
    expect_rejected("SMA_SYMMETRIC_SIZE", "auto");
    expect_rejected("SHMEM_DEVICE_HEAP_SIZE", "auto");
    /* The number that auto stands for internally is no size either. */
    expect_rejected("SHMEM_SYMMETRIC_SIZE", "18446744073709551615");
    clean_env();
    setenv("SHMEM_SDMA_INLINE_MAX", "Auto", 1);
    setenv("SHMEM_COLL_DIRECT_MAX", "auto", 1);
    ck_assert_int_eq(dsm_env_init(), 0);
    ck_assert_uint_eq(dsm_env.sdma_inline_max, UINT64_MAX);
    ck_assert_int_eq(dsm_env.sdma_inline_max_set, 1);
    ck_assert_uint_eq(dsm_env.coll_direct_max, UINT64_MAX);
}
END_TEST

/* Heap sizes from SHMEM_SYMMETRIC_SIZE (segment.h): page rounding, and no
 * size whose rounding or internal area would wrap. */
START_TEST(test_heap_sizes)
{
    static const struct {
        uint64_t want;
        size_t user;
    } ok[] = {
        {0, 4096},
        {1, 4096},
        {4096, 4096},
        {4097, 8192},
        {512ull << 20, 512ull << 20},
        {(1ull << 40) + 1, (1ull << 40) + 4096},
    };
    static const uint64_t bad[] = {
        UINT64_MAX,
        UINT64_MAX - 100,
        UINT64_MAX - 4095,
        UINT64_MAX - 4096,
        (uint64_t)PTRDIFF_MAX,
        (uint64_t)PTRDIFF_MAX - 8192,
        (uint64_t)PTRDIFF_MAX - (1ull << 30),
    };
    const size_t internal = 3 * 4096, slack = (size_t)1 << 30;
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        size_t user = 1, total = 1;
        ck_assert_msg(dsm_seg_heap_sizes(ok[i].want, 4096, internal, slack,
                                         &user, &total) == 0,
                      "%llu rejected", (unsigned long long)ok[i].want);
        ck_assert_uint_eq(user, ok[i].user);
        ck_assert_uint_eq(total, ok[i].user + internal);
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        size_t user = 1, total = 1;
        ck_assert_msg(dsm_seg_heap_sizes(bad[i], 4096, internal, slack, &user,
                                         &total) != 0,
                      "%llu accepted as %zu + %zu", (unsigned long long)bad[i],
                      user, total);
        ck_assert_msg(user == 1 && total == 1, "output written on failure");
    }
}
END_TEST

START_TEST(test_sma_fallback)
{
    clean_env();
    setenv("SMA_SYMMETRIC_SIZE", "3M", 1);
    setenv("SMA_DEBUG", "1", 1);
    setenv("SMA_VERSION", "1", 1);
    setenv("SMA_INFO", "1", 1);
    ck_assert_int_eq(dsm_env_init(), 0);
    ck_assert_uint_eq(dsm_env.symmetric_size, 3u << 20);
    /* 2: the value came from the SMA_ spelling (messages name it). */
    ck_assert_int_eq(dsm_env.symmetric_size_set, 2);
    ck_assert_str_eq(DSM_ENV_NAME(symmetric_size, "SYMMETRIC_SIZE"),
                     "SMA_SYMMETRIC_SIZE");
    ck_assert_int_eq(dsm_env.debug, 1);
    ck_assert_int_eq(dsm_env.version, 1);
    ck_assert_int_eq(dsm_env.info, 1);
    /* SHMEM_ wins over SMA_. */
    setenv("SHMEM_SYMMETRIC_SIZE", "5M", 1);
    setenv("SHMEM_DEBUG", "0", 1);
    ck_assert_int_eq(dsm_env_init(), 0);
    ck_assert_uint_eq(dsm_env.symmetric_size, 5u << 20);
    ck_assert_int_eq(dsm_env.symmetric_size_set, 1);
    ck_assert_str_eq(DSM_ENV_NAME(symmetric_size, "SYMMETRIC_SIZE"),
                     "SHMEM_SYMMETRIC_SIZE");
    ck_assert_int_eq(dsm_env.debug, 0);
    /* Variables the spec never had under SMA_ have no fallback. */
    clean_env();
    setenv("SMA_SDMA_ENGINES", "8", 1);
    ck_assert_int_eq(dsm_env_init(), 0);
    ck_assert_int_eq(dsm_env.sdma_engines, 1);
}
END_TEST

START_TEST(test_parse_int)
{
    long v = -7;
    ck_assert_int_eq(dsm_env_parse_int("42", &v), 1);
    ck_assert_int_eq(v, 42);
    ck_assert_int_eq(dsm_env_parse_int("-3", &v), 1);
    ck_assert_int_eq(v, -3);
    ck_assert_int_eq(dsm_env_parse_int("0x10", &v), 1);
    ck_assert_int_eq(v, 16);
    v = 99;
    ck_assert_int_eq(dsm_env_parse_int("", &v), 0);
    ck_assert_int_eq(dsm_env_parse_int("1 2", &v), 0);
    ck_assert_int_eq(dsm_env_parse_int("9999999999999999999999", &v), 0);
    ck_assert_int_eq(v, 99);
}
END_TEST

static Suite *env_suite(void)
{
    Suite *s = suite_create("env");
    TCase *tc = tcase_create("env");
    tcase_add_test(tc, test_parse_size);
    tcase_add_test(tc, test_defaults);
    tcase_add_test(tc, test_values);
    tcase_add_test(tc, test_invalid);
    tcase_add_test(tc, test_size_auto);
    tcase_add_test(tc, test_heap_sizes);
    tcase_add_test(tc, test_sma_fallback);
    tcase_add_test(tc, test_parse_int);
    suite_add_tcase(s, tc);
    return s;
}

DSM_CHECK_MAIN(env_suite)
