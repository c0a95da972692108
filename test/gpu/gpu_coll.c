/*
 * Collectives on device buffers through the cuda backend: fcollectmem and
 * alltoallmem on the device heap as copy-engine command chains (the direct
 * variant is host-only, so auto takes a chain here), sizes from 1 B to
 * 1 MiB per PE, data checked after every call, calls back to back without
 * barriers (the last PE reads every other fcollect's dest 300 us late);
 * the same calls repeated on the same buffers with new data (the copy
 * graphs the cuda backend caches replay them);
 * then the persistent fcollect started 100 times, and a
 * persistent alltoall and an on-stream fcollect on the team slot the first
 * request freed (its device signal words must be clean). The variant
 * comes from SHMEM_FCOLLECT_ALGORITHM / SHMEM_ALLTOALL_ALGORITHM (the
 * device script runs it with auto, pcpy and b2b). Prints the time of a
 * 1 KiB fcollect and alltoall (us per call) for the record. Exits 77
 * where no GPU is found.
 */
#include "test/gpu/gpu_util.h"
#define MP_ALARM_S 60
#include "test/mp/mp.h"

#include <shmemx.h>
#include <time.h>
#include <unistd.h>

#define MAXB (1u << 20)

static unsigned char pat(int s, size_t o, int r)
{
    return mp_byte(s, o, r);
}

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

/* Where the test is, on stderr with the time since start: a run that
 * times out shows whether it hung in one phase or crawled through all. */
static double t_start;
static void phase(int me, const char *what)
{
    if (me == 0)
        fprintf(stderr, "gpu_coll: %8.3f s %s\n", (now_us() - t_start) / 1e6,
                what);
}

/* One fcollect and one alltoall of nb bytes per PE on the world team, the
 * data pattern v, checked (r: the round, for the messages). */
static void fc_a2a(unsigned char *src, unsigned char *dst, unsigned char *h,
                   size_t nb, int r, int v)
{
    const int me = shmem_my_pe(), n = shmem_n_pes();

    /* fcollect: PE s contributes nb bytes pat(s, o, v). */
    for (size_t o = 0; o < nb; o++)
        h[o] = pat(me, o, v);
    gpu_htod(DP(src), h, nb);
    CHECK(shmem_fcollectmem(SHMEM_TEAM_WORLD, dst, src, nb) == 0,
          "fcollectmem %zu B", nb);
    /* The contract a faster protocol must keep: the others start the next
     * call at once, and a slow reader still sees this call's data (no peer
     * writes its dest before it enters). */
    if (me == n - 1 && v % 2 == 0)
        usleep(300);
    gpu_dtoh(h, DP(dst), nb * (size_t)n);
    for (int s = 0; s < n; s++)
        for (size_t o = 0; o < nb; o++)
            if (h[(size_t)s * nb + o] != pat(s, o, v))
                MP_FAIL("fcollect %zu B round %d: block %d byte %zu", nb, r,
                        s, o);
    /* alltoall: my block for PE d is pat(me*n+d, o, v). */
    for (int d = 0; d < n; d++)
        for (size_t o = 0; o < nb; o++)
            h[(size_t)d * nb + o] = pat(me * n + d, o, v);
    gpu_htod(DP(src), h, nb * (size_t)n);
    CHECK(shmem_alltoallmem(SHMEM_TEAM_WORLD, dst, src, nb) == 0,
          "alltoallmem %zu B", nb);
    gpu_dtoh(h, DP(dst), nb * (size_t)n);
    for (int s = 0; s < n; s++)
        for (size_t o = 0; o < nb; o++)
            if (h[(size_t)s * nb + o] != pat(s * n + me, o, v))
                MP_FAIL("alltoall %zu B round %d: block %d byte %zu", nb, r,
                        s, o);
}

int main(void)
{
    gpu_skip_unless_gpu("gpu_coll");
    mp_init();
    const int me = shmem_my_pe(), n = shmem_n_pes();
    gpu_ctx();
    t_start = now_us();

    unsigned char *src = shmemx_malloc_device(MAXB * (size_t)n);
    unsigned char *dst = shmemx_malloc_device(MAXB * (size_t)n);
    unsigned char *h = malloc(MAXB * (size_t)n), *e = malloc(MAXB * (size_t)n);
    CHECK(src && dst && h && e, "device allocations");

    static const size_t sizes[] = {1, 7, 1000, 4096, 65536, 1u << 20};
    phase(me, "fcollect/alltoall 1 B .. 1 MiB");
    for (int r = 0; r < 3; r++)
        for (size_t k = 0; k < DSM_TEST_ARRAY(sizes); k++)
            fc_a2a(src, dst, h, sizes[k], r, r + (int)k);
    /* The same calls on the same buffers again and again, with new data
     * each time: from the second, the cuda backend replays the copies
     * from a cached graph (SHMEM_CUDA_GRAPH_COPIES), which must read the
     * data of the call, not of the one it was built from. */
    phase(me, "fcollect/alltoall repeated on the same buffers");
    for (size_t k = 1; k < 5; k++)
        for (int r = 0; r < 6; r++)
            fc_a2a(src, dst, h, sizes[k], r, 50 + 10 * (int)k + r);

    phase(me, "persistent fcollect x100");
    /* GPU_COLL_TRACE=1: every step of the persistent loop (where a hang is). */
    const int trace = getenv("GPU_COLL_TRACE") != NULL;
    /* Persistent fcollect of 1 KiB, started 100 times with fresh data. */
    shmemx_req_t req;
    CHECK(shmemx_fcollectmem_init(SHMEM_TEAM_WORLD, dst, src, 1024, &req) == 0,
          "shmemx_fcollectmem_init");
    for (int it = 0; it < 100; it++) {
        for (size_t o = 0; o < 1024; o++)
            h[o] = pat(me, o, 100 + it);
        if (trace)
            fprintf(stderr, "gpu_coll: PE %d copy-in %d\n", me, it);
        gpu_htod(DP(src), h, 1024);
        if (trace)
            fprintf(stderr, "gpu_coll: PE %d barrier %d\n", me, it);
        /* Nobody may start instance it+1 (overwriting dst) before every PE
         * has checked instance it. */
        shmem_barrier_all();
        if (trace)
            fprintf(stderr, "gpu_coll: PE %d start %d\n", me, it);
        CHECK(shmemx_req_start(req) == 0, "start %d", it);
        CHECK(shmemx_req_wait(req) == 0, "wait %d", it);
        if (trace)
            fprintf(stderr, "gpu_coll: PE %d waited %d\n", me, it);
        gpu_dtoh(e, DP(dst), 1024 * (size_t)n);
        for (int s = 0; s < n; s++)
            for (size_t o = 0; o < 1024; o++)
                if (e[(size_t)s * 1024 + o] != pat(s, o, 100 + it))
                    MP_FAIL("persistent fcollect start %d: block %d byte %zu",
                            it, s, o);
    }
    shmem_barrier_all();
    double t0 = now_us();
    for (int it = 0; it < 200; it++) {
        shmemx_req_start(req);
        shmemx_req_wait(req);
    }
    double tp = (now_us() - t0) / 200;
    if (trace)
        fprintf(stderr, "gpu_coll: PE %d timed loop done, freeing\n", me);
    shmemx_req_free(req);

    phase(me, "reused team slot");
    /* The freed request's team slot (its device signal words carried
     * counts up to ~600) goes to the next team: a persistent alltoall of
     * 4 KiB whose counts start again at 1, and an on-stream fcollect on a
     * split team, must both see clean words. A word left nonzero lets the
     * first instances pass their waits early (data check fails) or, for
     * the on-stream protocol, never resets (hang: the alarm fails it). */
    shmemx_req_t r2;
    CHECK(shmemx_alltoallmem_init(SHMEM_TEAM_WORLD, dst, src, 4096, &r2) == 0,
          "shmemx_alltoallmem_init after free");
    phase(me, "reused slot: persistent alltoall");
    for (int it = 0; it < 20; it++) {
        for (int s = 0; s < n; s++)
            for (size_t o = 0; o < 4096; o++)
                h[(size_t)s * 4096 + o] = pat(me * n + s, o, 300 + it);
        if (trace)
            fprintf(stderr, "gpu_coll: PE %d a2a copy-in %d\n", me, it);
        gpu_htod(DP(src), h, 4096 * (size_t)n);
        if (trace)
            fprintf(stderr, "gpu_coll: PE %d a2a barrier %d\n", me, it);
        shmem_barrier_all();
        if (trace)
            fprintf(stderr, "gpu_coll: PE %d a2a start %d\n", me, it);
        CHECK(shmemx_req_start(r2) == 0, "a2a start %d", it);
        CHECK(shmemx_req_wait(r2) == 0, "a2a wait %d", it);
        if (trace)
            fprintf(stderr, "gpu_coll: PE %d a2a waited %d\n", me, it);
        gpu_dtoh(e, DP(dst), 4096 * (size_t)n);
        for (int s = 0; s < n; s++)
            for (size_t o = 0; o < 4096; o++)
                if (e[(size_t)s * 4096 + o] != pat(s * n + me, o, 300 + it))
                    MP_FAIL("persistent alltoall after free, start %d: block "
                            "%d byte %zu", it, s, o);
    }
    shmemx_req_free(r2);
    phase(me, "reused slot: on-stream fcollect");
    shmem_team_t dup;
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, n, NULL, 0,
                                   &dup) == 0 && dup != SHMEM_TEAM_INVALID,
          "team split");
    {
        CUstream st;
        GPU_CK(gcu.StreamCreate(&st, CU_STREAM_NON_BLOCKING));
        for (int it = 0; it < 3; it++) {
            for (size_t o = 0; o < 1024; o++)
                h[o] = pat(me, o, 400 + it);
            gpu_htod(DP(src), h, 1024);
            shmem_barrier_all();
            CHECK(shmemx_fcollectmem_on_stream(dup, dst, src, 1024, st) == 0,
                  "fcollect on stream");
            GPU_CK(gcu.StreamSynchronize(st));
            gpu_dtoh(e, DP(dst), 1024 * (size_t)n);
            for (int s = 0; s < n; s++)
                for (size_t o = 0; o < 1024; o++)
                    if (e[(size_t)s * 1024 + o] != pat(s, o, 400 + it))
                        MP_FAIL("on-stream fcollect on a reused slot, call "
                                "%d: block %d byte %zu", it, s, o);
            shmem_barrier_all();
        }
        GPU_CK(gcu.StreamDestroy(st));
    }
    shmem_team_destroy(dup);

    phase(me, "broadcast/reduce/collect");
    /* Broadcast, a sum reduction and collect on device buffers, at every
     * size class where auto switches variant (broadcast: pull up to 256 KiB,
     * engine bcast chain above; reduce: 16 KiB blocks): staged by the copy
     * engines, folded by the CPU (no kernel). A root's own copy above
     * 256 KiB was a CPU memmove on GPU memory (SIGSEGV, #14). */
    {
        static const size_t counts[] = {1, 4096, 1u << 17}; /* longs: 8 B .. 1 MiB */
        const size_t maxc = 1u << 17;
        long *ls = shmemx_malloc_device(maxc * sizeof(long));
        long *ld = shmemx_malloc_device(maxc * (size_t)n * sizeof(long));
        long *hl = malloc(maxc * (size_t)n * sizeof(long));
        CHECK(ls && ld && hl, "device buffers for broadcast/reduce/collect");
        for (size_t k = 0; k < DSM_TEST_ARRAY(counts); k++) {
            const size_t c = counts[k];
            for (int root = 0; root < n; root++) {
                for (size_t i = 0; i < c; i++)
                    hl[i] = (long)me * 100000 + (long)i;
                gpu_htod(DP(ls), hl, c * sizeof(long));
                gpu_memset(DP(ld), 0xff, c * sizeof(long));
                shmem_barrier_all();
                CHECK(shmem_long_broadcast(SHMEM_TEAM_WORLD, ld, ls, c, root) ==
                          0, "broadcast on device memory");
                gpu_dtoh(hl, DP(ld), c * sizeof(long));
                for (size_t i = 0; i < c; i++)
                    if (hl[i] != (long)root * 100000 + (long)i)
                        MP_FAIL("device broadcast of %zu longs from %d: elem %zu "
                                "= %ld", c, root, i, hl[i]);
            }
            for (size_t i = 0; i < c; i++)
                hl[i] = (long)me * 100000 + (long)i;
            gpu_htod(DP(ls), hl, c * sizeof(long));
            shmem_barrier_all();
            CHECK(shmem_long_sum_reduce(SHMEM_TEAM_WORLD, ld, ls, c) == 0,
                  "sum_reduce on device memory");
            gpu_dtoh(hl, DP(ld), c * sizeof(long));
            for (size_t i = 0; i < c; i++) {
                long want = 100000L * (long)n * (n - 1) / 2 + (long)n * (long)i;
                if (hl[i] != want)
                    MP_FAIL("device sum_reduce of %zu longs: elem %zu = %ld, "
                            "want %ld", c, i, hl[i], want);
            }
            for (size_t i = 0; i < c; i++)
                hl[i] = (long)me * 100000 + (long)i;
            gpu_htod(DP(ls), hl, c * sizeof(long));
            gpu_memset(DP(ld), 0xff, c * (size_t)n * sizeof(long));
            shmem_barrier_all();
            CHECK(shmem_collectmem(SHMEM_TEAM_WORLD, ld, ls, c * sizeof(long)) == 0,
                  "collectmem on device memory");
            gpu_dtoh(hl, DP(ld), c * (size_t)n * sizeof(long));
            for (int s = 0; s < n; s++)
                for (size_t i = 0; i < c; i++)
                    if (hl[(size_t)s * c + i] != (long)s * 100000 + (long)i)
                        MP_FAIL("device collect of %zu longs: block %d elem %zu = "
                                "%ld", c, s, i, hl[(size_t)s * c + i]);
            shmem_barrier_all();
        }
        shmem_free(ls);
        shmem_free(ld);
        free(hl);
    }

    phase(me, "timing loops");
    /* Times for the record (not asserted: speed is for the benchmark). */
    shmem_barrier_all();
    t0 = now_us();
    for (int it = 0; it < 200; it++)
        shmem_fcollectmem(SHMEM_TEAM_WORLD, dst, src, 1024);
    double tf = (now_us() - t0) / 200;
    shmem_barrier_all();
    t0 = now_us();
    for (int it = 0; it < 200; it++)
        shmem_alltoallmem(SHMEM_TEAM_WORLD, dst, src, 1024);
    double ta = (now_us() - t0) / 200;
    if (me == 0)
        printf("gpu_coll %d PEs: fcollect 1 KiB %.1f us, persistent %.1f us, "
               "alltoall 1 KiB %.1f us\n", n, tf, tp, ta);

    phase(me, "done");
    shmem_free(src);
    shmem_free(dst);
    free(h);
    free(e);
    shmem_finalize();
    return 0;
}
