/*
 * Per-context quiet under SHMEM_THREAD_MULTIPLE (run under
 * SHMEM_FORCE_NETWORK=1 by test/mp/network.sh; passes on shm too).
 *
 * Every PE runs two threads, each with its own context (one
 * SHMEM_CTX_PRIVATE, one shared), each sending to PE me+1:
 *  - put_nbi of a 32 KiB block (not injected: the provider's rendezvous
 *    path) filled with the iteration number, ctx_quiet, then a flag put
 *    with the same value; the target side (the same threads, checking
 *    what PE me-1's twin sent them) sees flag f only with every word of
 *    the block >= f: quiet completed the data, not only the count;
 *  - put_signal of 64 bytes (injected) while the other thread quiets its
 *    own context in a loop: the data is in place when the signal shows
 *    (quiet must not clear the other thread's "written since the last
 *    quiet" mark, which makes its signal wait for its data);
 *  - a ctx_quiet that must return while the other context has slow
 *    operations outstanding.
 */
#include "mp.h"

#include <pthread.h>

#define NT 2
#define BLOCK (32 * 1024 / sizeof(long))
#define SMALL (64 / sizeof(long))

static long *blk[NT];      /* [BLOCK] written by PE me-1's thread t */
static uint64_t *flag[NT]; /* its flag */
static long *sdat[NT];     /* [SMALL] put_signal data */
static uint64_t *sig[NT];  /* its signal */
static int me, npes, iters;

/* What PE me-1's thread t has told us so far must hold. */
static void check_incoming(int t)
{
    uint64_t f = shmem_uint64_atomic_fetch(flag[t], me);
    for (size_t k = 0; k < BLOCK; k++) {
        long v = __atomic_load_n(&blk[t][k], __ATOMIC_RELAXED);
        CHECK(v >= (long)f,
              "thread %d: block word %zu is %ld after flag %llu "
              "(quiet returned before the data was placed)",
              t, k, v, (unsigned long long)f);
    }
    uint64_t s = shmem_signal_fetch(sig[t]);
    for (size_t k = 0; k < SMALL; k++) {
        long v = __atomic_load_n(&sdat[t][k], __ATOMIC_RELAXED);
        CHECK(v >= (long)s,
              "thread %d: put_signal word %zu is %ld after "
              "signal %llu (signal before data)",
              t, k, v, (unsigned long long)s);
    }
}

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg, to = (me + 1) % npes;
    shmem_ctx_t ctx;
    long *src = malloc(BLOCK * sizeof(long)), ssrc[SMALL];

    CHECK(src, "malloc");
    CHECK(shmem_ctx_create(t ? SHMEM_CTX_PRIVATE : 0, &ctx) == 0,
          "shmem_ctx_create in thread %d", t);
    for (int i = 1; i <= iters; i++) {
        for (size_t k = 0; k < BLOCK; k++)
            src[k] = i;
        shmem_ctx_putmem_nbi(ctx, blk[t], src, BLOCK * sizeof(long), to);
        shmem_ctx_quiet(ctx);
        shmem_ctx_uint64_atomic_set(ctx, flag[t], (uint64_t)i, to);
        for (size_t k = 0; k < SMALL; k++)
            ssrc[k] = i;
        shmem_ctx_putmem_signal(ctx, sdat[t], ssrc, sizeof(ssrc), sig[t],
                                (uint64_t)i, SHMEM_SIGNAL_SET, to);
        /* The other thread's quiets race with this thread's marks. */
        shmem_ctx_quiet(ctx);
        check_incoming(t);
    }
    shmem_ctx_quiet(ctx);
    shmem_ctx_destroy(ctx);
    free(src);
    return NULL;
}

int main(void)
{
    int provided;

    alarm(MP_ALARM_S * 2);
    shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    CHECK(provided == SHMEM_THREAD_MULTIPLE, "provided %d", provided);
    me = shmem_my_pe();
    npes = shmem_n_pes();
    /* Oversubscribed (4 PEs on 2 cores, over the network): fewer rounds. */
    iters = npes > 2 ? 60 : 300;
    for (int t = 0; t < NT; t++) {
        blk[t] = shmem_calloc(BLOCK, sizeof(long));
        flag[t] = shmem_calloc(1, sizeof(uint64_t));
        sdat[t] = shmem_calloc(SMALL, sizeof(long));
        sig[t] = shmem_calloc(1, sizeof(uint64_t));
        CHECK(blk[t] && flag[t] && sdat[t] && sig[t], "shmem_calloc");
    }
    shmem_barrier_all();

    pthread_t th[NT];
    for (int t = 0; t < NT; t++)
        CHECK(pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t) == 0,
              "pthread_create");
    for (int t = 0; t < NT; t++)
        pthread_join(th[t], NULL);

    shmem_barrier_all();
    for (int t = 0; t < NT; t++) {
        check_incoming(t);
        CHECK(*flag[t] == (uint64_t)iters && *sig[t] == (uint64_t)iters,
              "thread %d: flag %llu signal %llu, expected %d", t,
              (unsigned long long)*flag[t], (unsigned long long)*sig[t], iters);
        for (size_t k = 0; k < BLOCK; k++)
            CHECK(blk[t][k] == iters, "thread %d: final block word %zu = %ld",
                  t, k, blk[t][k]);
    }

    /* A quiet on one context does not wait for another's operations: a
     * context with many nbi gets outstanding does not hold up a quiet of
     * a context that has nothing outstanding (a shared completion count
     * would make the second quiet wait for the first context's gets).
     * 64 gets of 32 KiB; over libfabric's sockets provider 64 of 512
     * bytes (32 KiB in flight, not 2 MiB), which that provider's stall
     * on loopback does not reach (docs/CLUSTER.md, "The sockets
     * provider": why, and how often 2 MiB hit it). */
    if (npes > 1) {
        const char *prov = getenv("SHMEM_OFI_PROVIDER");
        const size_t glen =
            prov && !strcmp(prov, "sockets") ? 512 / sizeof(long) : BLOCK;
        shmem_ctx_t a, b;
        CHECK(shmem_ctx_create(0, &a) == 0 && shmem_ctx_create(0, &b) == 0,
              "shmem_ctx_create");
        long *dst = malloc(64 * glen * sizeof(long));
        CHECK(dst, "malloc");
        for (int r = 0; r < 64; r++)
            shmem_ctx_getmem_nbi(a, dst + (size_t)r * glen, blk[0],
                                 glen * sizeof(long), (me + 1) % npes);
        shmem_ctx_quiet(b);
        shmem_ctx_quiet(a);
        for (size_t k = 0; k < 64 * glen; k++)
            CHECK(dst[k] == iters, "get_nbi word %zu = %ld after ctx_quiet", k,
                  dst[k]);
        shmem_ctx_destroy(a);
        shmem_ctx_destroy(b);
        free(dst);
    }
    shmem_barrier_all();
    if (me == 0)
        printf("ctx_quiet_mt: %d PEs, %d threads x %d rounds: ok\n", npes, NT,
               iters);
    shmem_finalize();
    return 0;
}
