/*
 * The program test/cluster/cluster.sh runs on the simulated cluster:
 *   cluster_prog check      every PE puts its host name and its rank to
 *                           every PE; PE 0 prints "hosts: <PE 0's host>
 *                           <PE 1's> ..." (one line: only PE 0 writes to
 *                           stdout, see below); gets 256 KiB from every
 *                           PE, fetch-adds a counter on PE 0, fcollects the
 *                           ranks, checks shmem_ptr (non-NULL exactly for
 *                           PEs on its own host, or itself alone under
 *                           SHMEM_FORCE_NETWORK) and SHMEM_TEAM_SHARED;
 *                           PE 0 prints "cluster_prog: N PEs on H hosts OK"
 *   cluster_prog traffic S  puts and barriers in a loop for S seconds (the
 *                           faults are made meanwhile); PE 0 prints "ready"
 *                           after the first round and "traffic: done" at
 *                           the end
 * The marker argument the scripts add is ignored.
 */
#include "../mp/mp.h"

#define BIG (256 * 1024)
#define HOST_MAX 64

static long counter;
static long slots[1024];
static char hosts[1024][HOST_MAX];

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void check(int me, int npes)
{
    char host[HOST_MAX] = "";
    gethostname(host, sizeof(host) - 1);
    CHECK(npes <= 1024, "at most 1024 PEs");

    /* Host names of all PEs: a put of ours to every PE. */
    for (int pe = 0; pe < npes; pe++)
        shmem_putmem(hosts[me], host, HOST_MAX, pe);
    for (int pe = 0; pe < npes; pe++)
        shmem_long_p(&slots[me], 1000 + me, pe);
    shmem_barrier_all();
    for (int pe = 0; pe < npes; pe++)
        CHECK(slots[pe] == 1000 + pe, "slot of PE %d is %ld", pe, slots[pe]);
    /* The placement, from PE 0 alone: mpirun reads its local PEs' stdout
     * from a pty, which hands it a single write(2) in pieces when PE 0's
     * SHMEM_INFO report fills it, and forwards each piece as it comes; a
     * "host PE 3 n1" line of another PE landed inside PE 0's report (CI,
     * 2026-12-06). One writer, no interleaving. */
    if (me == 0) {
        printf("hosts:");
        for (int pe = 0; pe < npes; pe++)
            printf(" %.*s", HOST_MAX - 1, hosts[pe]);
        printf("\n");
        fflush(stdout);
    }

    /* 256 KiB from every PE (a pattern of its rank). */
    unsigned char *big = shmem_malloc(BIG), *mine = malloc(BIG);
    CHECK(big && mine, "allocations");
    for (int i = 0; i < BIG; i++)
        big[i] = (unsigned char)(i * 7 + me);
    shmem_barrier_all();
    for (int pe = 0; pe < npes; pe++) {
        shmem_getmem(mine, big, BIG, pe);
        for (int i = 0; i < BIG; i += 4093)
            CHECK(mine[i] == (unsigned char)(i * 7 + pe),
                  "byte %d of PE %d's 256 KiB", i, pe);
    }

    /* Atomics on PE 0 from everyone. */
    shmem_long_atomic_fetch_add(&counter, me + 1, 0);
    shmem_barrier_all();
    if (me == 0)
        CHECK(counter == (long)npes * (npes + 1) / 2, "counter %ld", counter);

    /* fcollect of the ranks. */
    int *src = shmem_malloc(sizeof(int)), *dst = shmem_malloc(npes * sizeof(int));
    *src = me;
    shmem_barrier_all();
    shmem_int_fcollect(SHMEM_TEAM_WORLD, dst, src, 1);
    for (int pe = 0; pe < npes; pe++)
        CHECK(dst[pe] == pe, "fcollect[%d] = %d", pe, dst[pe]);

    /* Shared memory exactly with the PEs of this host. */
    int same = 0;
    for (int pe = 0; pe < npes; pe++) {
        /* SHMEM_FORCE_NETWORK: every PE is its own node. */
        int here = mp_network() ? pe == me : strcmp(hosts[pe], host) == 0;
        same += here;
        CHECK(!!shmem_ptr(big, pe) == here, "shmem_ptr of PE %d on %.63s (this "
              "PE on %.63s)", pe, hosts[pe], host);
    }
    CHECK(shmem_team_n_pes(SHMEM_TEAM_SHARED) == same,
          "SHMEM_TEAM_SHARED has %d PEs, %d on this host",
          shmem_team_n_pes(SHMEM_TEAM_SHARED), same);
    shmem_barrier_all();
    if (me == 0) {
        int nhosts = 0;
        for (int pe = 0; pe < npes; pe++) {
            int first = 1;
            for (int q = 0; q < pe && first; q++)
                first = strcmp(hosts[q], hosts[pe]) != 0;
            nhosts += first;
        }
        printf("cluster_prog: %d PEs on %d hosts OK\n", npes, nhosts);
    }
    free(mine);
    shmem_free(dst);
    shmem_free(src);
    shmem_free(big);
}

static void traffic(int me, int npes, double secs)
{
    double end = now_s() + secs;
    long rounds = 0;
    int go = 1;
    static int more;
    while (go) {
        for (int k = 1; k < npes; k++)
            shmem_long_p(&slots[me], rounds, (me + k) % npes);
        shmem_quiet();
        shmem_barrier_all();
        if (me == 0 && rounds == 0) {
            printf("ready\n");
            fflush(stdout);
        }
        rounds++;
        /* PE 0 decides when to stop, so every PE does the same rounds. */
        if (me == 0)
            more = now_s() < end;
        shmem_barrier_all();
        if (me != 0)
            shmem_int_get(&more, &more, 1, 0);
        go = more;
        shmem_barrier_all();
        usleep(2000);
    }
    if (me == 0)
        printf("traffic: done %ld rounds\n", rounds);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "check";
    /* No alarm: the traffic runs are ended by the faults made to them,
     * and the script bounds every job with timeout(1). */
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    if (!strcmp(mode, "check"))
        check(me, npes);
    else if (!strcmp(mode, "traffic"))
        traffic(me, npes, argc > 2 ? atof(argv[2]) : 30);
    else
        MP_FAIL("unknown mode %s", mode);
    shmem_finalize();
    return 0;
}
