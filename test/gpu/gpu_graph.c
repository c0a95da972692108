/*
 * Collectives on a stream (shmemx_barrier_on_stream,
 * shmemx_fcollectmem_on_stream, shmemx_alltoallmem_on_stream):
 *  1. called directly on a stream, sizes 1 B .. 1 MiB per PE, three rounds,
 *     on SHMEM_TEAM_WORLD and on a split of it (another team slot), data
 *     checked after each stream synchronisation, no host barrier between
 *     calls (the stream protocol alone must keep writers off a dest that
 *     its owner has not checked yet);
 *  2. a CUDA graph captured once -- barrier, a ring putmem_on_stream, an
 *     fcollect and an alltoall -- replayed 100 times with fresh data each
 *     time (refilled from the host between replays), every byte checked
 *     after every replay, again without host barriers;
 *  3. direct calls after the replays (direct calls and replays mix);
 *  4. the LL form's edges (blocks up to SHMEM_STREAM_LL_MAX): a pageable
 *     source (staged into dest on the stream), a source at an odd
 *     address, and a team slot used by a team of part of the PEs, an odd
 *     number of calls, destroyed and taken by a team of all of them (the
 *     slot's parity word must be back to 0 on the members that had used
 *     it; 3+ PEs).
 * Any number of PEs, one or more GPUs. Exits 77 where no GPU is found.
 */
#include "test/gpu/gpu_util.h"
#define MP_ALARM_S 60
#include "test/mp/mp.h"

#include <shmemx.h>

#define MAXB (1u << 20)
#define RING (256u << 10)
#define FB 4096u  /* fcollect bytes per PE in the graph */
#define AB 1024u  /* alltoall bytes per PE pair in the graph */
#define REPLAYS 100

static unsigned char pat(int s, size_t o, int r)
{
    return mp_byte(s, o, r);
}

static unsigned char *h;

static void fill_fc(unsigned char *dsrc, int me, size_t nb, int r)
{
    for (size_t o = 0; o < nb; o++)
        h[o] = pat(me, o, r);
    gpu_htod(DP(dsrc), h, nb);
}

static void fill_a2a(unsigned char *dsrc, int me, int n, size_t nb, int r)
{
    for (int d = 0; d < n; d++)
        for (size_t o = 0; o < nb; o++)
            h[(size_t)d * nb + o] = pat(me * n + d, o, r);
    gpu_htod(DP(dsrc), h, nb * (size_t)n);
}

/* tn members; member s is world PE pes(s). */
static void check_fc(const char *what, const unsigned char *ddst, int tn,
                     const int *wpe, size_t nb, int r)
{
    GPU_CK(gcu.MemcpyDtoH(h, DP(ddst), nb * (size_t)tn));
    for (int s = 0; s < tn; s++)
        for (size_t o = 0; o < nb; o++)
            if (h[(size_t)s * nb + o] != pat(wpe[s], o, r))
                MP_FAIL("%s %zu B round %d: block %d byte %zu is %u, "
                        "expected %u", what, nb, r, s, o,
                        h[(size_t)s * nb + o], pat(wpe[s], o, r));
}

static void check_a2a(const char *what, const unsigned char *ddst, int n,
                      int me, size_t nb, int r)
{
    GPU_CK(gcu.MemcpyDtoH(h, DP(ddst), nb * (size_t)n));
    for (int s = 0; s < n; s++)
        for (size_t o = 0; o < nb; o++)
            if (h[(size_t)s * nb + o] != pat(s * n + me, o, r))
                MP_FAIL("%s %zu B round %d: block %d byte %zu is %u, "
                        "expected %u", what, nb, r, s, o,
                        h[(size_t)s * nb + o], pat(s * n + me, o, r));
}

int main(void)
{
    gpu_skip_unless_gpu("gpu_graph");
    mp_init();
    const int me = shmem_my_pe(), n = shmem_n_pes();
    const int to = (me + 1) % n, from = (me + n - 1) % n;
    gpu_ctx();

    unsigned char *src = shmemx_malloc_device(MAXB * (size_t)n);
    unsigned char *dst = shmemx_malloc_device(MAXB * (size_t)n);
    unsigned char *rsrc = shmemx_malloc_device(RING);
    unsigned char *rdst = shmemx_malloc_device(RING);
    unsigned char *fsrc = shmemx_malloc_device(FB);
    unsigned char *fdst = shmemx_malloc_device(FB * (size_t)n);
    unsigned char *asrc = shmemx_malloc_device(AB * (size_t)n);
    unsigned char *adst = shmemx_malloc_device(AB * (size_t)n);
    h = malloc(MAXB * (size_t)n);
    int *wpe = malloc(sizeof(int) * (size_t)n);
    int ok = src && dst && rsrc && rdst && fsrc && fdst && asrc && adst &&
             h && wpe;
    CHECK(ok, "allocations");
    for (int i = 0; i < n; i++)
        wpe[i] = i;
    CUstream s;
    GPU_CK(gcu.StreamCreate(&s, CU_STREAM_NON_BLOCKING));

    /* A second team over the same PEs: its own slot, its own words. */
    shmem_team_t dup;
    int rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, n, NULL, 0,
                                      &dup);
    CHECK(rc == 0 && dup != SHMEM_TEAM_INVALID, "team split");
    shmem_barrier_all();

    /* 1. direct calls; from the second round the cuda backend replays
     * the copies below 1 MiB from cached graphs (SHMEM_CUDA_GRAPH_COPIES:
     * six runs, within its eight candidates), with each round's data.
     * Up to SHMEM_STREAM_LL_MAX (16 KiB) one kernel sends the blocks in
     * the LL form: 1 B, 8 B, 1000 B (a partial last line) and 16 KiB;
     * above it, up to SHMEM_STREAM_STORE_MAX (64 KiB), one kernel stores
     * them between two synchronisation phases: 16392 B and 49168 B
     * (3073 16-byte words over 1024 threads: not the same count for each)
     * and 64 KiB in its 16-byte loop, 1 B and 1000 B in its byte and
     * 8-byte ones where the LL form is off. */
    static const size_t sizes[] = {1,     8,     1000,   16384,
                                   16392, 49168, 65536, 1u << 20};
    for (int r = 0; r < 3; r++)
        for (size_t k = 0; k < DSM_TEST_ARRAY(sizes); k++) {
            size_t nb = sizes[k];
            int rr = r * 10 + (int)k;
            shmem_team_t t = (k & 1) ? dup : SHMEM_TEAM_WORLD;
            fill_fc(src, me, nb, rr);
            CHECK(shmemx_fcollectmem_on_stream(t, dst, src, nb, s) == 0,
                  "fcollectmem_on_stream");
            GPU_CK(gcu.StreamSynchronize(s));
            check_fc("fcollectmem_on_stream", dst, n, wpe, nb, rr);
            fill_a2a(src, me, n, nb, rr + 1);
            CHECK(shmemx_alltoallmem_on_stream(t, dst, src, nb, s) == 0,
                  "alltoallmem_on_stream");
            CHECK(shmemx_barrier_on_stream(t, s) == 0, "barrier_on_stream");
            GPU_CK(gcu.StreamSynchronize(s));
            check_a2a("alltoallmem_on_stream", dst, n, me, nb, rr + 1);
        }
    /* In place: my block already at dest + me * nb. */
    fill_fc(dst + (size_t)me * 4096, me, 4096, 77);
    rc = shmemx_fcollectmem_on_stream(SHMEM_TEAM_WORLD, dst,
                                      dst + (size_t)me * 4096, 4096, s);
    CHECK(rc == 0, "in-place fcollectmem_on_stream");
    GPU_CK(gcu.StreamSynchronize(s));
    check_fc("in-place fcollectmem_on_stream", dst, n, wpe, 4096, 77);
    if (me == 0)
        printf("direct: fcollect/alltoall/barrier on stream checked, 1 B .. "
               "1 MiB, 2 teams\n");

    /* 2. the graph */
    CUgraph graph;
    CUgraphExec exec;
    GPU_CK(gcu.StreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    shmemx_barrier_on_stream(SHMEM_TEAM_WORLD, s);
    shmemx_putmem_on_stream(rdst, rsrc, RING, to, s);
    shmemx_fcollectmem_on_stream(SHMEM_TEAM_WORLD, fdst, fsrc, FB, s);
    shmemx_alltoallmem_on_stream(SHMEM_TEAM_WORLD, adst, asrc, AB, s);
    GPU_CK(gcu.StreamEndCapture(s, &graph));
    GPU_CK(gcu.GraphInstantiateWithFlags(&exec, graph, 0));
    double tg = 0;
    for (int r = 0; r < REPLAYS; r++) {
        int rr = 1000 + r;
        for (size_t o = 0; o < RING; o++)
            h[o] = pat(me, o, rr);
        gpu_htod(DP(rsrc), h, RING);
        fill_fc(fsrc, me, FB, rr + 1);
        fill_a2a(asrc, me, n, AB, rr + 2);
        double t0 = mp_now();
        GPU_CK(gcu.GraphLaunch(exec, s));
        GPU_CK(gcu.StreamSynchronize(s));
        tg += mp_now() - t0;
        GPU_CK(gcu.MemcpyDtoH(h, DP(rdst), RING));
        for (size_t o = 0; o < RING; o++)
            if (h[o] != pat(from, o, rr))
                MP_FAIL("graph replay %d: ring put byte %zu is %u, expected "
                        "%u", r, o, h[o], pat(from, o, rr));
        check_fc("graph replay fcollect", fdst, n, wpe, FB, rr + 1);
        check_a2a("graph replay alltoall", adst, n, me, AB, rr + 2);
    }
    if (me == 0)
        printf("graph: %d replays of barrier + put(256 KiB) + fcollect(4 KiB) "
               "+ alltoall(1 KiB) checked, %.1f us per replay (launch to "
               "stream sync)\n", REPLAYS, tg * 1e6 / REPLAYS);

    /* 3. direct calls after the replays */
    fill_fc(fsrc, me, FB, 3);
    shmemx_fcollectmem_on_stream(SHMEM_TEAM_WORLD, fdst, fsrc, FB, s);
    GPU_CK(gcu.StreamSynchronize(s));
    check_fc("fcollectmem_on_stream after the graph", fdst, n, wpe, FB, 3);

    /* 4. LL edges. A pageable source, and one at an odd address. */
    for (int v = 0; v < 2; v++) {
        const size_t nb = 1000;
        const char *how = v ? "odd-address source" : "pageable source";
        unsigned char *hs = malloc(nb * (size_t)n);
        unsigned char *ps = v ? src + 3 : hs;
        CHECK(hs != NULL, "malloc");
        for (size_t o = 0; o < nb; o++)
            h[o] = pat(me, o, 40 + v);
        if (v)
            gpu_htod(DP(ps), h, nb);
        else
            memcpy(hs, h, nb);
        CHECK(shmemx_fcollectmem_on_stream(SHMEM_TEAM_WORLD, dst, ps, nb,
                                           s) == 0, how);
        GPU_CK(gcu.StreamSynchronize(s));
        check_fc(how, dst, n, wpe, nb, 40 + v);
        for (int d = 0; d < n; d++)
            for (size_t o = 0; o < nb; o++)
                h[(size_t)d * nb + o] = pat(me * n + d, o, 42 + v);
        if (v)
            gpu_htod(DP(ps), h, nb * (size_t)n);
        else
            memcpy(hs, h, nb * (size_t)n);
        CHECK(shmemx_alltoallmem_on_stream(SHMEM_TEAM_WORLD, dst, ps, nb,
                                           s) == 0, how);
        GPU_CK(gcu.StreamSynchronize(s));
        check_a2a(how, dst, n, me, nb, 42 + v);
        free(hs);
    }
    /* A slot used by the even PEs (one call: their parity flipped), then
     * by all. */
    if (n >= 3) {
        shmem_team_t ev, all;
        int ne = (n + 1) / 2, ewpe[64];
        rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, ne, NULL, 0,
                                      &ev);
        CHECK(rc == 0, "split of the even PEs");
        if (ev != SHMEM_TEAM_INVALID) {
            for (int i = 0; i < ne && i < 64; i++)
                ewpe[i] = 2 * i;
            fill_fc(src, me, 512, 50);
            CHECK(shmemx_fcollectmem_on_stream(ev, dst, src, 512, s) == 0,
                  "even PEs' fcollectmem_on_stream");
            GPU_CK(gcu.StreamSynchronize(s));
            check_fc("even PEs' fcollectmem_on_stream", dst, ne, ewpe, 512,
                     50);
            shmem_team_destroy(ev);
        }
        shmem_barrier_all();
        rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, n, NULL, 0,
                                      &all);
        CHECK(rc == 0 && all != SHMEM_TEAM_INVALID, "split of all PEs");
        for (int r = 0; r < 3; r++) {
            fill_fc(src, me, 512, 51 + r);
            CHECK(shmemx_fcollectmem_on_stream(all, dst, src, 512, s) == 0,
                  "fcollectmem_on_stream on a reused slot");
            GPU_CK(gcu.StreamSynchronize(s));
            check_fc("fcollectmem_on_stream on a reused slot", dst, n, wpe,
                     512, 51 + r);
        }
        shmem_team_destroy(all);
    }
    if (me == 0)
        printf("LL edges: pageable and odd-address sources%s checked\n",
               n >= 3 ? ", a reused team slot" : "");

    GPU_CK(gcu.GraphExecDestroy(exec));
    GPU_CK(gcu.GraphDestroy(graph));
    GPU_CK(gcu.StreamDestroy(s));
    shmem_barrier_all();
    shmem_team_destroy(dup);
    shmem_free(adst);
    shmem_free(asrc);
    shmem_free(fdst);
    shmem_free(fsrc);
    shmem_free(rdst);
    shmem_free(rsrc);
    shmem_free(dst);
    shmem_free(src);
    free(h);
    free(wpe);
    shmem_finalize();
    return 0;
}
