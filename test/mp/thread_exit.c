/*
 * Per-thread collective storage goes with the thread (issue #14,
 * Resources): 64 short-lived threads, one after another, each run one
 * engine-chain fcollect and alltoall (128 KiB blocks, above the direct-path
 * size set here) and exit. The bytes malloc has handed out (mallinfo2,
 * every arena) may not grow by more than a few KiB over them; the plan and
 * command buffers each thread leaves behind came to about 5 KiB a thread.
 */
#include <malloc.h>
#include <pthread.h>

#include "mp.h"

#define NB (128 * 1024)
#define NTHREADS 64

static int npes;
static char *src, *dst;

static void *one(void *arg)
{
    (void)arg;
    CHECK(shmem_fcollectmem(SHMEM_TEAM_WORLD, dst, src, NB) == 0, "fcollect");
    CHECK(shmem_alltoallmem(SHMEM_TEAM_WORLD, dst, src, NB) == 0, "alltoall");
    return NULL;
}

static void run_threads(int n)
{
    for (int i = 0; i < n; i++) {
        pthread_t t;
        CHECK(pthread_create(&t, NULL, one, NULL) == 0, "pthread_create");
        pthread_join(t, NULL);
    }
}

int main(void)
{
    int provided;

    alarm(MP_ALARM_S);
    setenv("SHMEM_COLL_DIRECT_MAX", "65536", 0);
    CHECK(shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided) == 0,
          "init_thread");
    npes = shmem_n_pes();
    src = shmem_malloc((size_t)npes * NB);
    dst = shmem_malloc((size_t)npes * NB);
    CHECK(src && dst, "shmem_malloc");
    memset(src, shmem_my_pe(), (size_t)npes * NB);
    run_threads(4); /* warm: queues, arenas, lazily built state */
    size_t before = mallinfo2().uordblks;
    run_threads(NTHREADS);
    size_t after = mallinfo2().uordblks;
    for (int p = 0; p < npes; p++)
        CHECK(dst[(size_t)p * NB] == (char)p, "block of PE %d", p);
    CHECK(after <= before + 16384, "%d threads left %zu bytes allocated",
          NTHREADS, after - before);
    if (shmem_my_pe() == 0)
        printf("thread_exit: %d PEs, %d threads, heap grew by %ld bytes\n",
               npes, NTHREADS, (long)after - (long)before);
    shmem_free(src);
    shmem_free(dst);
    shmem_finalize();
    return 0;
}
