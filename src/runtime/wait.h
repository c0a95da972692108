/*
 * Point-to-point synchronization helpers: comparisons and waiting on words
 * of this PE's symmetric memory.
 */
#ifndef DSM_WAIT_H
#define DSM_WAIT_H

#include "rt.h"

void dsm_rt_bad_cmp(const char *routine, int cmp) DSM_NORETURN;

/* One step of progress for a caller that tests instead of waiting
 * (shmem_test*, shmem_signal_fetch): the sdma layer's queues and the
 * paths that need the caller (the network). Nothing may wait for a
 * waiter. */
void dsm_rt_progress(void);

/* The _any searches (test_any, wait_until_any and their _vector forms)
 * start where this thread's previous one stopped: if entry i keeps
 * satisfying, a series of calls must eventually return it (spec), which
 * always starting at 0 breaks as soon as a lower entry satisfies too.
 * dsm_rt_any_start(n): the first index to look at (< n, n > 0);
 * dsm_rt_any_found(i): the search returned i. Per thread, as SOS does. */
size_t dsm_rt_any_start(size_t n);
void dsm_rt_any_found(size_t i);

#define DSM_CMP_OK(cmp) ((unsigned)(cmp) <= SHMEM_CMP_GE)

/* The name of a valid comparison operator ("SHMEM_CMP_EQ"). */
static inline const char *dsm_cmp_name(int cmp)
{
    static const char *const names[] = {"SHMEM_CMP_EQ", "SHMEM_CMP_NE",
                                        "SHMEM_CMP_GT", "SHMEM_CMP_LE",
                                        "SHMEM_CMP_LT", "SHMEM_CMP_GE"};
    return names[cmp];
}

#define DSM_COMPARE(a, cmp, b)                                                 \
    ((cmp) == SHMEM_CMP_EQ   ? (a) == (b)                                      \
     : (cmp) == SHMEM_CMP_NE ? (a) != (b)                                      \
     : (cmp) == SHMEM_CMP_GT ? (a) > (b)                                       \
     : (cmp) == SHMEM_CMP_LE ? (a) <= (b)                                      \
     : (cmp) == SHMEM_CMP_LT ? (a) < (b)                                       \
                             : (a) >= (b))

#endif /* DSM_WAIT_H */
