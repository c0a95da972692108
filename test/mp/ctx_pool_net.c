/*
 * Destroyed contexts do not keep their network endpoints for the rest of
 * the job beyond the pool's cap (src/net keeps NET_POOL_MAX = 8 idle ones
 * for later contexts: tcp;ofi_rxm takes ~100 ms to enable one). Each PE
 * creates 16 contexts at once, writes through each to every other PE (which
 * connects each endpoint), destroys them all and counts its open files:
 * the endpoints past the cap, and their connections, must be gone (half
 * of them here; at most 3/4 is asked, as peers close their side of a
 * connection only when they notice). Before the cap, every destroyed
 * context's endpoint stayed open in the pool. Then a second, smaller
 * burst reuses the pooled endpoints and still works. Run
 * under SHMEM_FORCE_NETWORK=1 by network.sh (both providers); on shm no
 * context holds a file and the counts stay equal.
 */
#define MP_ALARM_S 110 /* tcp;ofi_rxm: ~0.1 s an endpoint, 4 PEs on 2 cores */
#include "mp.h"

#include <dirent.h>

#define NCTX 16

static int open_files(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    CHECK(d, "opendir /proc/self/fd");
    while (readdir(d))
        n++;
    closedir(d);
    return n;
}

static void burst(long *dst, int round, int nctx, int *alive)
{
    const int me = shmem_my_pe(), npes = shmem_n_pes();
    shmem_ctx_t c[NCTX];
    for (int i = 0; i < nctx; i++)
        CHECK(shmem_ctx_create(0, &c[i]) == 0, "shmem_ctx_create %d", i);
    for (int i = 0; i < nctx; i++) {
        long v = (long)round * 1000 + i;
        for (int k = 1; k < npes; k++)
            shmem_ctx_long_put(c[i], &dst[(size_t)me * NCTX + (size_t)i], &v,
                               1, (me + k) % npes);
        shmem_ctx_quiet(c[i]);
    }
    shmem_barrier_all();
    if (alive)
        *alive = open_files();
    for (int i = 0; i < nctx; i++)
        shmem_ctx_destroy(c[i]);
    shmem_barrier_all();
    for (int k = 1; k < npes; k++) {
        int from = (me + npes - k) % npes;
        for (int i = 0; i < nctx; i++)
            CHECK(dst[(size_t)from * NCTX + (size_t)i] ==
                      (long)round * 1000 + i,
                  "round %d: context %d's word from PE %d is %ld", round, i,
                  from, dst[(size_t)from * NCTX + (size_t)i]);
    }
}

int main(void)
{
    mp_init();
    const int me = shmem_my_pe(), npes = shmem_n_pes();
    long *dst = shmem_calloc((size_t)npes * NCTX, sizeof(long));
    int base, alive = 0, after;

    CHECK(dst, "allocation");
    shmem_barrier_all();
    base = open_files();
    burst(dst, 1, NCTX, &alive);
    /* Peers close their side of the connections as they see ours go:
     * let the barriers progress that. */
    for (int i = 0; i < 3; i++)
        shmem_barrier_all();
    after = open_files();
    CHECK(after - base <= (alive - base) * 3 / 4,
          "%d files open before %d contexts, %d with them, %d after they "
          "were destroyed: their endpoints stayed open", base, NCTX, alive,
          after);
    burst(dst, 2, 4, NULL);
    if (me == 0)
        printf("ctx_pool_net: %d PEs: files %d before, %d with %d contexts, "
               "%d after: ok\n", npes, base, alive, NCTX, after);
    shmem_free(dst);
    shmem_finalize();
    return 0;
}
