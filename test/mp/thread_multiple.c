/*
 * SHMEM_THREAD_MULTIPLE: 4 threads per PE at once doing RMA (blocking and
 * nbi, default context and their own), atomics, quiet, and context
 * create/destroy. Exact totals and data are checked at the end.
 */
#include <pthread.h>

#include "mp.h"

#define NT 4
#define ITERS 300
#define SLOT 64

static int me, npes, right, left;
static long *ctr;  /* [1] on every PE */
static long *data; /* [NT][SLOT] written by the left neighbour's threads */
static long *nbi;  /* [NT][SLOT] likewise, through put_nbi */

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    long v[SLOT];

    for (int it = 0; it < ITERS; it++) {
        for (int i = 0; i < SLOT; i++)
            v[i] = ((long)me << 40) | ((long)t << 32) | ((long)it << 8) | i;
        /* blocking put of my slot, default context */
        shmem_long_put(&data[t * SLOT], v, SLOT, right);
        /* atomics on PE 0 and on my right neighbour */
        shmem_long_atomic_inc(&ctr[0], 0);
        shmem_long_atomic_fetch_add(&ctr[0], 1, right);
        /* nbi on the default context, then quiet (other threads' nbi may
         * be in flight too) */
        shmem_long_put_nbi(&nbi[t * SLOT], v, SLOT, right);
        shmem_quiet();
        long chk[SLOT];
        shmem_long_get(chk, &nbi[t * SLOT], SLOT, right);
        for (int i = 0; i < SLOT; i++)
            CHECK(chk[i] == v[i], "thread %d iter %d: put_nbi elem %d not "
                  "complete after quiet", t, it, i);
        /* a private context every few iterations */
        if (it % 10 == 0) {
            shmem_ctx_t c;
            CHECK(shmem_ctx_create(SHMEM_CTX_PRIVATE, &c) == 0, "ctx_create");
            shmem_ctx_long_put_nbi(c, &nbi[t * SLOT], v, SLOT, right);
            shmem_ctx_long_atomic_add(c, &ctr[0], 2, 0);
            shmem_ctx_quiet(c);
            shmem_ctx_long_get(c, chk, &nbi[t * SLOT], SLOT, right);
            CHECK(chk[SLOT - 1] == v[SLOT - 1], "ctx put_nbi not complete");
            shmem_ctx_destroy(c);
        }
    }
    return NULL;
}

int main(void)
{
    int provided;
    alarm(MP_ALARM_S);
    CHECK(shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided) == 0,
          "init_thread");
    CHECK(provided == SHMEM_THREAD_MULTIPLE, "provided %d", provided);
    me = shmem_my_pe();
    npes = shmem_n_pes();
    right = (me + 1) % npes;
    left = (me + npes - 1) % npes;
    ctr = shmem_calloc(1, sizeof(long));
    data = shmem_calloc(NT * SLOT, sizeof(long));
    nbi = shmem_calloc(NT * SLOT, sizeof(long));
    CHECK(ctr && data && nbi, "shmem_calloc");
    shmem_barrier_all();

    pthread_t th[NT];
    for (int t = 0; t < NT; t++)
        CHECK(pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t) == 0,
              "pthread_create");
    for (int t = 0; t < NT; t++)
        pthread_join(th[t], NULL);
    shmem_barrier_all();

    long per_thread = ITERS + 2 * (ITERS / 10 + (ITERS % 10 != 0));
    long want = (me == 0 ? (long)npes * NT * per_thread : 0) +
                (long)NT * ITERS; /* the left neighbour's fetch_adds */
    CHECK(*ctr == want, "counter %ld, expected %ld", *ctr, want);
    for (int t = 0; t < NT; t++)
        for (int i = 0; i < SLOT; i++) {
            long w = ((long)left << 40) | ((long)t << 32) |
                     ((long)(ITERS - 1) << 8) | i;
            CHECK(data[t * SLOT + i] == w && nbi[t * SLOT + i] == w,
                  "thread %d elem %d: %lx / %lx, expected %lx", t, i,
                  data[t * SLOT + i], nbi[t * SLOT + i], w);
        }
    if (me == 0)
        printf("thread_multiple: %d PEs x %d threads OK\n", npes, NT);
    shmem_finalize();
    return 0;
}
