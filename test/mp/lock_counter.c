/*
 * Distributed locks under contention from every PE: a counter on PE 0 is
 * updated with a non-atomic read-modify-write (get, then put) inside the
 * lock; without mutual exclusion updates are lost and the total is short.
 * Then shmem_test_lock: it never succeeds while another PE holds the lock,
 * and the same exact total with test_lock spinning.
 */
#include "mp.h"

#define K 300

static long lock1, lock2; /* symmetric (static data), zero */

int main(void)
{
    mp_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    long *ctr = shmem_calloc(2, sizeof(long));
    long *holder = shmem_calloc(1, sizeof(long));
    CHECK(ctr && holder, "shmem_calloc");
    *holder = -1;
    shmem_barrier_all();

    for (int i = 0; i < K; i++) {
        shmem_set_lock(&lock1);
        long h = shmem_long_g(holder, 0);
        CHECK(h == -1, "lock held by PE %ld while I hold it", h);
        shmem_long_p(holder, me, 0);
        long v = shmem_long_g(&ctr[0], 0);
        if ((i & 31) == 0)
            usleep(50); /* widen the window a lost update needs */
        shmem_long_p(&ctr[0], v + 1, 0);
        shmem_long_p(holder, -1, 0);
        shmem_clear_lock(&lock1);
    }
    shmem_barrier_all();
    if (me == 0)
        CHECK(ctr[0] == (long)npes * K, "set_lock counter %ld, expected %ld",
              ctr[0], (long)npes * K);

    /* test_lock: PE 0 holds lock2 while everyone else tries. */
    if (me == 0)
        CHECK(shmem_test_lock(&lock2) == 0, "test_lock on a free lock");
    shmem_barrier_all();
    if (me != 0)
        CHECK(shmem_test_lock(&lock2) != 0, "test_lock took a held lock");
    shmem_barrier_all();
    if (me == 0)
        shmem_clear_lock(&lock2);
    shmem_barrier_all();
    for (int i = 0; i < K; i++) {
        while (shmem_test_lock(&lock2))
            ;
        long v = shmem_long_g(&ctr[1], 0);
        shmem_long_p(&ctr[1], v + 1, 0);
        shmem_clear_lock(&lock2);
    }
    shmem_barrier_all();
    if (me == 0)
        CHECK(ctr[1] == (long)npes * K, "test_lock counter %ld, expected %ld",
              ctr[1], (long)npes * K);
    if (me == 0)
        printf("lock_counter: %d PEs OK\n", npes);
    shmem_finalize();
    return 0;
}
