/*
 * The library-owned engine words (src/common/words.c): zeroed, aligned to
 * a cache line, reused after free, never unmapped (a freed block stays
 * writable: a GPU backend may still hold its page pinned by address), and
 * safe under concurrent allocation.
 */
#include <check.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "common/words.h"

START_TEST(zeroed_aligned)
{
    static const size_t sizes[] = {1, 2, 7, 8, 9, 100, 512, 4096, 8192, 9000,
                                   100000};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        uint64_t *w = dsm_words_alloc(sizes[i]);
        ck_assert_ptr_nonnull(w);
        ck_assert_uint_eq((uintptr_t)w % 64, 0);
        for (size_t k = 0; k < sizes[i]; k++)
            ck_assert_uint_eq(w[k], 0);
        memset(w, 0xab, sizes[i] * sizeof(uint64_t));
        dsm_words_free(w, sizes[i]);
        /* Freed, the block is dirty; a new one must come back zeroed. */
        uint64_t *v = dsm_words_alloc(sizes[i]);
        ck_assert_ptr_nonnull(v);
        for (size_t k = 0; k < sizes[i]; k++)
            ck_assert_uint_eq(v[k], 0);
        dsm_words_free(v, sizes[i]);
    }
    ck_assert_ptr_null(dsm_words_alloc(0));
    ck_assert_ptr_null(dsm_words_alloc(SIZE_MAX / 4));
}
END_TEST

START_TEST(reused_never_unmapped)
{
    /* The same address comes back for the same size class: a trigger word
     * of a new request lands on a page that is already pinned, and a freed
     * one can still be written without a fault. */
    uint64_t *a = dsm_words_alloc(1);
    dsm_words_free(a, 1);
    uint64_t *b = dsm_words_alloc(1);
    ck_assert_ptr_eq(a, b);
    dsm_words_free(b, 1);
    uint64_t *big = dsm_words_alloc(20000);
    dsm_words_free(big, 20000);
    big[19999] = 1; /* still mapped */
    uint64_t *big2 = dsm_words_alloc(20000);
    ck_assert_ptr_eq(big, big2);
    ck_assert_uint_eq(big2[19999], 0);
    dsm_words_free(big2, 20000);
    /* Churn of distinct live blocks: all distinct, none overlapping. */
    enum { N = 3000 };
    static uint64_t *live[N];
    for (int i = 0; i < N; i++) {
        live[i] = dsm_words_alloc(1 + (size_t)(i % 5));
        ck_assert_ptr_nonnull(live[i]);
        live[i][0] = (uint64_t)i + 1;
    }
    for (int i = 0; i < N; i++)
        ck_assert_uint_eq(live[i][0], (uint64_t)i + 1);
    for (int i = 0; i < N; i++)
        dsm_words_free(live[i], 1 + (size_t)(i % 5));
}
END_TEST

static void *churn(void *arg)
{
    uintptr_t id = (uintptr_t)arg;
    for (int r = 0; r < 2000; r++) {
        size_t n = 1 + (size_t)((r + (int)id) % 40);
        uint64_t *w = dsm_words_alloc(n);
        if (!w)
            return (void *)1;
        for (size_t k = 0; k < n; k++) {
            if (w[k] != 0)
                return (void *)2;
            w[k] = id;
        }
        for (size_t k = 0; k < n; k++)
            if (w[k] != id)
                return (void *)3; /* another thread got the same block */
        dsm_words_free(w, n);
    }
    return NULL;
}

START_TEST(threads)
{
    pthread_t t[4];
    for (uintptr_t i = 0; i < 4; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, churn, (void *)(i + 1)), 0);
    for (int i = 0; i < 4; i++) {
        void *rv;
        pthread_join(t[i], &rv);
        ck_assert_ptr_null(rv);
    }
}
END_TEST

static Suite *words_suite(void)
{
    Suite *s = suite_create("words");
    TCase *tc = tcase_create("words");
    tcase_add_test(tc, zeroed_aligned);
    tcase_add_test(tc, reused_never_unmapped);
    tcase_add_test(tc, threads);
    /* Check's 4 s default is a timing test on a loaded 2-core machine (the
     * threads case ran past it under load); 60 s only catches a hang. */
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    return s;
}

DSM_CHECK_MAIN(words_suite)
