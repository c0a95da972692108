/*
 * Misuse a new user makes (issue #27), one per mode (argv[1]); misuse.sh
 * runs each on shared memory and with SHMEM_FORCE_NETWORK=1 and checks
 * that the job ends non-zero within 5 s with one line
 * "dmashmem: PE n: routine: what, with the values".
 *
 * Before the misuse PE 0 prints "misuse <ms>" (CLOCK_REALTIME in ms) so
 * that the script measures from the mistake, not from the job's start.
 * The misbehaving PE is the last one (PE npes-1; PE 0 in a 1-PE job):
 * the others do the right thing.
 */
#include "mp.h"

#include <stdint.h>
#include <sys/time.h>

static long src64[64], dst64[64];
static long lockword;
static long pwrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE + 64];
static long psync[SHMEM_REDUCE_SYNC_SIZE];

static void mark(void)
{
    struct timeval tv;
    shmem_barrier_all();
    if (shmem_my_pe() == 0) {
        gettimeofday(&tv, NULL);
        printf("misuse %lld\n",
               (long long)tv.tv_sec * 1000 + tv.tv_usec / 1000);
        fflush(stdout);
    }
    shmem_barrier_all();
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "ok";

    mp_init();
    const int me = shmem_my_pe(), npes = shmem_n_pes();
    const int bad = npes - 1; /* the PE that misbehaves */
    const int peer = (me + 1) % npes;
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++)
        psync[i] = SHMEM_SYNC_VALUE;
    long *heap = shmem_calloc(64, sizeof(long));
    CHECK(heap, "shmem_calloc");
    mark();

    if (!strcmp(mode, "ok")) {
        /* nothing wrong */
    } else if (!strcmp(mode, "count_wrap")) {
        /* (SIZE_MAX/8 + 2) * 8 wraps to 8 bytes. */
        if (me == bad)
            shmem_long_put(heap, src64, SIZE_MAX / 8 + 2, peer);
        shmem_barrier_all();
    } else if (!strcmp(mode, "count_wrap_get")) {
        if (me == bad)
            shmem_int64_get((int64_t *)dst64, (int64_t *)heap,
                            SIZE_MAX / 8 + 1, peer);
        shmem_barrier_all();
    } else if (!strcmp(mode, "malloc_diff")) {
        void *p = shmem_malloc(me == bad ? 2048 : 1024);
        (void)p;
        shmem_barrier_all();
    } else if (!strcmp(mode, "fcollect_nelems")) {
        /* Room for 8 per PE everywhere: only the count differs, and the
         * others' dest would be written past the end of their 4 per PE. */
        long *d = shmem_malloc((size_t)npes * 8 * sizeof(long));
        shmem_long_fcollect(SHMEM_TEAM_WORLD, d, heap, me == bad ? 8 : 4);
        shmem_barrier_all();
    } else if (!strcmp(mode, "fcollect_zero")) {
        long *d = shmem_malloc((size_t)npes * 8 * sizeof(long));
        shmem_long_fcollect(SHMEM_TEAM_WORLD, d, heap, me == bad ? 0 : 4);
        shmem_barrier_all();
    } else if (!strcmp(mode, "alltoall_nelems")) {
        long *d = shmem_malloc((size_t)npes * 4 * sizeof(long));
        long *s = shmem_malloc((size_t)npes * 4 * sizeof(long));
        shmem_long_alltoall(SHMEM_TEAM_WORLD, d, s, me == bad ? 4 : 2);
        shmem_barrier_all();
    } else if (!strcmp(mode, "bcast_nelems")) {
        long *d = shmem_malloc(16 * sizeof(long));
        shmem_long_broadcast(SHMEM_TEAM_WORLD, d, heap, me == bad ? 16 : 4,
                             0);
        shmem_barrier_all();
    } else if (!strcmp(mode, "bcast_root")) {
        long *d = shmem_malloc(4 * sizeof(long));
        shmem_long_broadcast(SHMEM_TEAM_WORLD, d, heap, 4,
                             me == bad && npes > 1 ? 1 : 0);
        shmem_barrier_all();
    } else if (!strcmp(mode, "reduce_nreduce")) {
        long *d = shmem_malloc(32 * sizeof(long));
        shmem_long_sum_reduce(SHMEM_TEAM_WORLD, d, heap, me == bad ? 32 : 4);
        shmem_barrier_all();
    } else if (!strcmp(mode, "reduce_op")) {
        long *d = shmem_malloc(4 * sizeof(long));
        if (me == bad)
            shmem_long_max_reduce(SHMEM_TEAM_WORLD, d, heap, 4);
        else
            shmem_long_sum_reduce(SHMEM_TEAM_WORLD, d, heap, 4);
        shmem_barrier_all();
    } else if (!strcmp(mode, "aset_reduce_nreduce")) {
        long *d = shmem_malloc(32 * sizeof(long));
        shmem_long_sum_to_all(d, heap, me == bad ? 32 : 4, 0, 0, npes, pwrk,
                              psync);
        shmem_barrier_all();
    } else if (!strcmp(mode, "team_fcollect_nelems")) {
        /* A team of its own: the even PEs (all of them in a 2-PE job). */
        shmem_team_t t;
        long *d = shmem_malloc((size_t)npes * 8 * sizeof(long));
        shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, npes, NULL, 0, &t);
        shmem_long_fcollect(t, d, heap, me == bad ? 8 : 4);
        shmem_barrier_all();
    } else if (!strcmp(mode, "coll_kind")) {
        /* A barrier on one PE, a broadcast on the others. */
        long *d = shmem_malloc(4 * sizeof(long));
        if (me == bad)
            shmem_barrier_all();
        else
            shmem_long_broadcast(SHMEM_TEAM_WORLD, d, heap, 4, 0);
        shmem_barrier_all();
    } else if (!strcmp(mode, "malloc_barrier")) {
        /* shmem_malloc on one PE, shmem_barrier_all on the others. */
        if (me == bad)
            (void)shmem_malloc(64);
        shmem_barrier_all();
        shmem_barrier_all();
    } else if (!strcmp(mode, "exit_barrier")) {
        if (me == bad)
            exit(0);
        shmem_barrier_all();
    } else if (!strcmp(mode, "exit_finalize")) {
        if (me == bad)
            exit(0);
    } else if (!strcmp(mode, "exit_wait")) {
        /* The others wait for a flag the exiting PE never sets. */
        if (me == bad)
            exit(3);
        shmem_long_wait_until(heap, SHMEM_CMP_NE, 0);
    } else if (!strcmp(mode, "put_after_finalize")) {
        shmem_finalize();
        if (me != bad)
            return 0;
        shmem_long_p(heap, 1, peer);
        MP_FAIL("a put after shmem_finalize returned");
    } else if (!strcmp(mode, "amo_after_finalize")) {
        shmem_finalize();
        if (me != bad)
            return 0;
        (void)shmem_long_atomic_fetch_add(heap, 1, peer);
        MP_FAIL("an AMO after shmem_finalize returned");
    } else if (!strcmp(mode, "barrier_after_finalize")) {
        shmem_finalize();
        if (me != bad)
            return 0;
        shmem_barrier_all();
        MP_FAIL("a barrier after shmem_finalize returned");
    } else if (!strcmp(mode, "ctx_destroyed")) {
        shmem_ctx_t ctx;
        CHECK(shmem_ctx_create(0, &ctx) == 0, "shmem_ctx_create");
        shmem_ctx_destroy(ctx);
        if (me == bad)
            shmem_ctx_long_p(ctx, heap, 1, peer);
        shmem_barrier_all();
    } else if (!strcmp(mode, "ctx_destroyed_quiet")) {
        shmem_ctx_t ctx;
        CHECK(shmem_ctx_create(0, &ctx) == 0, "shmem_ctx_create");
        shmem_ctx_destroy(ctx);
        if (me == bad)
            shmem_ctx_quiet(ctx);
        shmem_barrier_all();
    } else if (!strcmp(mode, "ctx_madeup")) {
        if (me == bad)
            shmem_ctx_long_atomic_add((shmem_ctx_t)(uintptr_t)0x12345678,
                                      heap, 1, peer);
        shmem_barrier_all();
    } else if (!strcmp(mode, "ctx_madeup_fence")) {
        if (me == bad)
            shmem_ctx_fence((shmem_ctx_t)src64);
        shmem_barrier_all();
    } else if (!strcmp(mode, "wait_nonsym")) {
        long local = 0;
        if (me == bad)
            shmem_long_wait_until(&local, SHMEM_CMP_NE, 0);
        shmem_barrier_all();
    } else if (!strcmp(mode, "signal_wait_nonsym")) {
        uint64_t sig = 0;
        if (me == bad)
            (void)shmem_signal_wait_until(&sig, SHMEM_CMP_NE, 0);
        shmem_barrier_all();
    } else if (!strcmp(mode, "wait_misaligned")) {
        if (me == bad)
            shmem_long_wait_until((long *)((char *)heap + 4), SHMEM_CMP_NE,
                                  0);
        shmem_barrier_all();
    } else if (!strcmp(mode, "lock_twice")) {
        if (me == bad) {
            shmem_set_lock(&lockword);
            shmem_set_lock(&lockword);
        }
        shmem_barrier_all();
    } else if (!strcmp(mode, "team_garbage")) {
        if (me == bad)
            (void)shmem_team_my_pe((shmem_team_t)(uintptr_t)0x12345678);
        shmem_barrier_all();
    } else if (!strcmp(mode, "team_garbage_sync")) {
        if (me == bad)
            shmem_team_sync((shmem_team_t)src64);
        shmem_barrier_all();
    } else if (!strcmp(mode, "put_past_end")) {
        /* The last 4 bytes of the heap's user part plus 60 more. */
        size_t heap_size = 1u << 20; /* SHMEM_SYMMETRIC_SIZE=1M (script) */
        char *base = (char *)heap; /* the first block starts the heap */
        if (me == bad)
            shmem_putmem(base + heap_size - 4, src64, 64, peer);
        shmem_barrier_all();
    } else if (!strcmp(mode, "alloc_overrun")) {
        /* 1024 bytes into the 512-byte allocation heap: within the heap,
         * past the allocation (SHMEM_CHECK=2 finds it). */
        static char big[1024];
        long *next = shmem_malloc(4096);
        CHECK(next, "shmem_malloc");
        if (me == bad)
            shmem_putmem(heap, big, sizeof(big), peer);
        shmem_barrier_all();
    } else if (!strcmp(mode, "net_target")) {
        /* net_secret.sh: PE 0 says where its word is and watches it
         * while a stranger tries to write it, until $MISUSE_DONE exists. */
        const char *done = getenv("MISUSE_DONE");
        if (me == 0) {
            /* heap is the first block: offset 0 in the heap region. */
            printf("target %d %llx 0\n", (int)getpid(),
                   (unsigned long long)(uintptr_t)heap);
            fflush(stdout);
            for (int i = 0; i < 60000 && done && access(done, F_OK); i++) {
                if (shmem_long_test(heap, SHMEM_CMP_NE, 0))
                    break;
                usleep(1000);
            }
        }
        /* The barrier reads the network's completions: messages the
         * stranger sent are handled by then. */
        shmem_barrier_all();
        if (me == 0) {
            printf("word %lx\n", *heap);
            fflush(stdout);
        }
    } else if (!strcmp(mode, "align_zero")) {
        void *p = shmem_align(0, 64);
        CHECK(p == NULL, "shmem_align(0, 64) returned %p, expected NULL", p);
    } else if (!strcmp(mode, "team_many")) {
        /* Split until the library refuses; it must say why. */
        shmem_team_t t[100];
        int i, rc = 0;
        for (i = 0; i < 100; i++) {
            rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, npes, NULL,
                                          0, &t[i]);
            if (rc)
                break;
        }
        CHECK(rc && i < 100, "100 teams created");
        CHECK(t[i] == SHMEM_TEAM_INVALID, "a failed split gave a team");
        printf("PE %d: %d teams\n", me, i);
        while (i-- > 0)
            shmem_team_destroy(t[i]);
        shmem_barrier_all();
    } else {
        MP_FAIL("unknown mode %s", mode);
    }
    shmem_finalize();
    return 0;
}
