/*
 * SOS's point-to-point synchronization on arrays from before OpenSHMEM 1.5
 * (shmemx_sos(3)): shmemx_<T>_test_all and _wait_until_all without a
 * status array, the _any and _some forms with one, and the C11 generic
 * names, as SOS's unit test shmem_test_all (@af2fdbc8) calls
 * shmemx_test_all(flags, npes, SHMEM_CMP_EQ, 1). Each PE sets its slot on
 * every PE; every form must see all slots, and the _any/_some forms must
 * leave out what status excludes. Did not compile before the names existed.
 */
#include "mp.h"

#include <shmemx.h>

int main(void)
{
    mp_init();
    const int me = shmem_my_pe(), npes = shmem_n_pes();
    int *iflags = shmem_calloc((size_t)npes, sizeof(int));
    long *lflags = shmem_calloc((size_t)npes, sizeof(long));
    uint64_t *uflags = shmem_calloc((size_t)npes, sizeof(uint64_t));
    short *sflags = shmem_calloc((size_t)npes, sizeof(short));
    int *status = calloc((size_t)npes, sizeof(int));
    size_t *idx = calloc((size_t)npes, sizeof(size_t));
    CHECK(iflags && lflags && uflags && sflags && status && idx, "allocation");

    for (int i = 0; i < npes; i++) {
        shmem_int_p(&iflags[me], 1, i);
        shmem_long_p(&lflags[me], me + 1, i);
        shmem_uint64_p(&uflags[me], 7, i);
        shmem_short_p(&sflags[me], 2, i);
    }

    /* The all forms: no status argument. */
    while (!shmemx_test_all(iflags, npes, SHMEM_CMP_EQ, 1))
        ;
    shmemx_long_wait_until_all(lflags, (size_t)npes, SHMEM_CMP_GT, 0L);
    shmemx_wait_until_all(uflags, npes, SHMEM_CMP_EQ, (uint64_t)7);
    shmemx_short_wait_until_all(sflags, (size_t)npes, SHMEM_CMP_EQ, 2);
    CHECK(shmemx_short_test_all(sflags, (size_t)npes, SHMEM_CMP_EQ, 2),
          "short test_all after wait_until_all");
    for (int i = 0; i < npes; i++)
        CHECK(iflags[i] == 1 && lflags[i] == i + 1 && uflags[i] == 7 &&
                  sflags[i] == 2,
              "slot %d: %d %ld %llu %d", i, iflags[i], lflags[i],
              (unsigned long long)uflags[i], sflags[i]);

    /* any/some with a status array: slot 0 left out, so every index
     * returned is a satisfied slot other than 0 (npes > 1), or none. */
    status[0] = 1;
    size_t a = shmemx_int_test_any(iflags, (size_t)npes, status, SHMEM_CMP_EQ, 1);
    CHECK(npes > 1 ? (a >= 1 && a < (size_t)npes) : a == SIZE_MAX,
          "test_any %zu", a);
    a = shmemx_wait_until_any(lflags, npes, status, SHMEM_CMP_GT, 0L);
    CHECK(npes > 1 ? (a >= 1 && a < (size_t)npes) : a == SIZE_MAX,
          "wait_until_any %zu", a);
    size_t n = shmemx_long_test_some(lflags, (size_t)npes, idx, status,
                                     SHMEM_CMP_GT, 0L);
    CHECK(n == (size_t)npes - 1, "test_some found %zu", n);
    for (size_t k = 0; k < n; k++)
        CHECK(idx[k] >= 1 && idx[k] < (size_t)npes, "test_some index %zu",
              idx[k]);
    n = shmemx_wait_until_some(uflags, npes, idx, status, SHMEM_CMP_EQ,
                               (uint64_t)7);
    CHECK(n == (size_t)npes - 1, "wait_until_some found %zu", n);
    n = shmemx_test_some(sflags, npes, idx, NULL, SHMEM_CMP_EQ, (short)2);
    CHECK(n == (size_t)npes, "test_some without status found %zu", n);
    a = shmemx_uint64_wait_until_any(uflags, (size_t)npes, NULL, SHMEM_CMP_EQ,
                                     7);
    CHECK(a < (size_t)npes, "wait_until_any without status %zu", a);
    n = shmemx_int_wait_until_some(iflags, (size_t)npes, idx, NULL,
                                   SHMEM_CMP_EQ, 1);
    CHECK(n >= 1, "wait_until_some without status found %zu", n);
    a = shmemx_test_any(sflags, npes, NULL, SHMEM_CMP_EQ, (short)2);
    CHECK(a < (size_t)npes, "test_any without status %zu", a);

    shmem_barrier_all();
    free(idx);
    free(status);
    shmem_free(sflags);
    shmem_free(uflags);
    shmem_free(lflags);
    shmem_free(iflags);
    shmem_finalize();
    return 0;
}
