/*
 * shmem_test_any / wait_until_any and their _vector forms must not always
 * return the lowest satisfying index (issue #14): if entry i satisfies the
 * condition, a series of calls must eventually return i (spec). The public
 * suites' version of the spec's test_any example passes status NULL and
 * calls until every index was returned once; with the lowest index always
 * returned it never ended. Here every form is called that way on an array
 * whose entries are set by all PEs, with a bound on the calls instead of a
 * hang; then with a status mask (excluded entries never returned); then the
 * spec's example itself, flags arriving while PEs search.
 */
#include "mp.h"

#include <stdbool.h>

enum { FORM_TEST, FORM_TEST_VEC, FORM_WAIT, FORM_WAIT_VEC, NFORMS };
static const char *const form_name[NFORMS] = {
    "shmem_int_test_any", "shmem_long_test_any_vector",
    "shmem_uint64_wait_until_any", "shmem_int32_wait_until_any_vector"};

static int *iflags;
static long *lflags;
static uint64_t *uflags;
static int32_t *i32flags;

static size_t call(int form, size_t n, const int *status)
{
    static long lvals[256];
    static int32_t i32vals[256];
    for (size_t i = 0; i < n; i++) {
        lvals[i] = 7;
        i32vals[i] = (int32_t)i;
    }
    switch (form) {
    case FORM_TEST:
        return shmem_int_test_any(iflags, n, status, SHMEM_CMP_NE, 0);
    case FORM_TEST_VEC:
        return shmem_long_test_any_vector(lflags, n, status, SHMEM_CMP_EQ,
                                          lvals);
    case FORM_WAIT:
        return shmem_uint64_wait_until_any(uflags, n, status, SHMEM_CMP_GT,
                                           0);
    default:
        return shmem_int32_wait_until_any_vector(i32flags, n, status,
                                                 SHMEM_CMP_GE, i32vals);
    }
}

/* Every PE sets entries i with i % npes == me on every PE (int: 1, long:
 * 7, uint64: 1, int32: i + 1, so the vector forms' condition holds). */
static void set_all(size_t n)
{
    int me = shmem_my_pe(), npes = shmem_n_pes();
    for (int pe = 0; pe < npes; pe++)
        for (size_t i = (size_t)me; i < n; i += (size_t)npes) {
            shmem_int_atomic_set(&iflags[i], 1, pe);
            shmem_long_atomic_set(&lflags[i], 7, pe);
            shmem_uint64_atomic_set(&uflags[i], 1, pe);
            shmem_int32_atomic_set(&i32flags[i], (int32_t)i + 1, pe);
        }
}

static void clear_all(size_t n)
{
    shmem_barrier_all();
    for (size_t i = 0; i < n; i++) {
        iflags[i] = 0;
        lflags[i] = 0;
        uflags[i] = 0;
        i32flags[i] = -1;
    }
    shmem_barrier_all();
}

/* Call form with status until every index not excluded was returned:
 * with every entry set, at most 4 * n calls (a fair search needs n); while
 * entries still arrive (arriving), a test form may find none yet and the
 * bound is the alarm. */
static void every_index(int form, size_t n, const int *status, int arriving)
{
    bool seen[256] = {false};
    size_t left = 0;
    for (size_t i = 0; i < n; i++)
        left += !(status && status[i]);
    for (size_t calls = 0; left; calls++) {
        CHECK(arriving || calls < 4 * n, "%s (status %s): after %zu calls %zu of %zu "
              "satisfying indices were never returned", form_name[form],
              status ? "mask" : "NULL", calls, left, n);
        size_t r = call(form, n, status);
        if (arriving && r == SIZE_MAX &&
            (form == FORM_TEST || form == FORM_TEST_VEC))
            continue;
        CHECK(r < n, "%s returned %zu with every entry set", form_name[form],
              r);
        CHECK(!(status && status[r]), "%s returned excluded index %zu",
              form_name[form], r);
        if (!seen[r]) {
            seen[r] = true;
            left--;
        }
    }
}

int main(void)
{
    mp_init();
    int npes = shmem_n_pes();
    const size_t n = (size_t)(4 * npes + 3); /* > 1 entry even on 1 PE */
    int status[256] = {0};

    iflags = shmem_calloc(n, sizeof(int));
    lflags = shmem_calloc(n, sizeof(long));
    uflags = shmem_calloc(n, sizeof(uint64_t));
    i32flags = shmem_malloc(n * sizeof(int32_t));
    CHECK(iflags && lflags && uflags && i32flags, "allocation");

    clear_all(n);
    set_all(n);
    shmem_barrier_all();
    for (int f = 0; f < NFORMS; f++)
        every_index(f, n, NULL, 0);
    /* Exclude every third entry. */
    for (size_t i = 0; i < n; i += 3)
        status[i] = 1;
    for (int f = 0; f < NFORMS; f++)
        every_index(f, n, status, 0);
    memset(status, 0, sizeof(status));

    /* Entries arriving while this PE searches (no barrier first). */
    clear_all(n);
    set_all(n);
    for (int f = 0; f < NFORMS; f++)
        every_index(f, n, NULL, 1);

    /* The spec's test_any example: status marks what was handled. */
    clear_all(n);
    set_all(n);
    size_t ncompleted = 0;
    while (ncompleted < n) {
        size_t idx = shmem_int_test_any(iflags, n, status, SHMEM_CMP_NE, 0);
        if (idx != SIZE_MAX) {
            CHECK(!status[idx], "index %zu returned twice", idx);
            status[idx] = 1;
            ncompleted++;
        }
    }
    CHECK(shmem_int_test_any(iflags, n, status, SHMEM_CMP_NE, 0) == SIZE_MAX,
          "test_any with every entry excluded");

    shmem_barrier_all();
    shmem_free(i32flags);
    shmem_free(uflags);
    shmem_free(lflags);
    shmem_free(iflags);
    if (shmem_my_pe() == 0)
        printf("test_any: %d PEs, %zu entries OK\n", npes, n);
    shmem_finalize();
    return 0;
}
