/*
 * The main() every Check unit test in test/unit shares: a test file builds
 * its suite in a constructor and ends with
 *
 *     DSM_CHECK_MAIN(words_suite)
 *
 * (several constructors: one runner for all their suites). The runner
 * prints Check's normal output, and the program exits EXIT_FAILURE when
 * any test failed or erred (automake's test driver reads that), else
 * EXIT_SUCCESS. Tests run forked or not as CK_FORK says (Check's default:
 * forked); DSM_CHECK_MAIN_FORK always forks, which exit tests
 * (tcase_add_exit_test) need. A main() with more to do first (test/hsa/pkt
 * skips without its engine model) ends with dsm_check_run itself.
 */
#ifndef DSM_TEST_CHECK_MAIN_H
#define DSM_TEST_CHECK_MAIN_H

#include <check.h>
#include <stddef.h>
#include <stdlib.h>

typedef Suite *(*dsm_check_suite_fn)(void);

static inline int dsm_check_run(const dsm_check_suite_fn *suites, size_t n,
                                enum fork_status fork)
{
    SRunner *sr = srunner_create(suites[0]());
    for (size_t i = 1; i < n; i++)
        srunner_add_suite(sr, suites[i]());
    srunner_set_fork_status(sr, fork);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#define DSM_CHECK_MAIN_WITH(fork, ...)                                         \
    int main(void)                                                             \
    {                                                                          \
        static const dsm_check_suite_fn suites_[] = {__VA_ARGS__};             \
        return dsm_check_run(suites_, sizeof(suites_) / sizeof(suites_[0]),    \
                             fork);                                            \
    }

#define DSM_CHECK_MAIN(...) DSM_CHECK_MAIN_WITH(CK_FORK_GETENV, __VA_ARGS__)
#define DSM_CHECK_MAIN_FORK(...) DSM_CHECK_MAIN_WITH(CK_FORK, __VA_ARGS__)

#endif /* DSM_TEST_CHECK_MAIN_H */
