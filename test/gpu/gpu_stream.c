/*
 * The on-stream routines: putmem/getmem on a stream, putmem_signal with a
 * host and a device signal word, signal_wait_until and quiet on a stream,
 * and a put + signal-add captured once into a CUDA graph and replayed 100
 * times with fresh data each time, the target waiting for each round on
 * its own stream. Ring of PEs (any count, one or more GPUs). Exits 77
 * where no GPU is found.
 */
#include "test/gpu/gpu_util.h"
#define MP_ALARM_S 40
#include "test/mp/mp.h"

#include <shmemx.h>

#define N (1u << 20)
#define REPLAYS 100

static unsigned char *hbuf, *hexp;

static unsigned char pat(int s, size_t o, int r)
{
    return mp_byte(s, o, r);
}

static void fill(unsigned char *dsrc, int me, int r)
{
    for (size_t o = 0; o < N; o++)
        hexp[o] = pat(me, o, r);
    gpu_htod(DP(dsrc), hexp, N);
}

static void expect(const char *what, int r, const unsigned char *got, int s)
{
    for (size_t o = 0; o < N; o++)
        if (got[o] != pat(s, o, r))
            MP_FAIL("%s round %d: byte %zu is %u, expected %u", what, r, o,
                    got[o], pat(s, o, r));
}

int main(void)
{
    gpu_skip_unless_gpu("gpu_stream");
    mp_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    int to = (me + 1) % n, from = (me + n - 1) % n;
    gpu_ctx();

    unsigned char *dsrc = shmemx_malloc_device(N), *ddst = shmemx_malloc_device(N);
    uint64_t *dsig = shmemx_malloc_device(sizeof(uint64_t));
    uint64_t *hsig = shmem_malloc(sizeof(uint64_t));
    CHECK(dsrc && ddst && dsig && hsig, "allocations");
    hbuf = malloc(N);
    hexp = malloc(N);
    CUstream s;
    GPU_CK(gcu.StreamCreate(&s, CU_STREAM_NON_BLOCKING));
    gpu_memset(DP(dsig), 0, sizeof(uint64_t));
    *hsig = 0;

    /* 1. put on a stream, quiet on the stream, check at the target. */
    fill(dsrc, me, 1);
    shmem_barrier_all();
    shmemx_putmem_on_stream(ddst, dsrc, N, to, s);
    shmemx_quiet_on_stream(s);
    GPU_CK(gcu.StreamSynchronize(s));
    shmem_barrier_all();
    GPU_CK(gcu.MemcpyDtoH(hbuf, DP(ddst), N));
    expect("putmem_on_stream", 1, hbuf, from);

    /* 2. get on a stream into a private host buffer. */
    memset(hbuf, 0, N);
    shmemx_getmem_on_stream(hbuf, dsrc, N, to, s);
    GPU_CK(gcu.StreamSynchronize(s));
    expect("getmem_on_stream", 1, hbuf, to);
    shmem_barrier_all();

    /* 3. put + signal SET into the target's host heap; the target's CPU
     * waits for the word, then checks the data. */
    fill(dsrc, me, 2);
    shmem_barrier_all();
    shmemx_putmem_signal_on_stream(ddst, dsrc, N, hsig, 7, SHMEM_SIGNAL_SET, to, s);
    shmem_uint64_wait_until(hsig, SHMEM_CMP_EQ, 7);
    GPU_CK(gcu.MemcpyDtoH(hbuf, DP(ddst), N));
    expect("putmem_signal_on_stream (host signal)", 2, hbuf, from);
    GPU_CK(gcu.StreamSynchronize(s));
    shmem_barrier_all();

    /* 4. nbi through the engines, then quiet_on_stream orders a stream copy
     * after them. */
    fill(dsrc, me, 3);
    shmem_barrier_all();
    shmem_putmem_nbi(ddst, dsrc, N, to);
    shmemx_quiet_on_stream(s);
    shmemx_putmem_signal_on_stream(NULL, NULL, 0, dsig, 1, SHMEM_SIGNAL_ADD, to, s);
    shmemx_signal_wait_until_on_stream(dsig, SHMEM_CMP_GE, 1, s);
    GPU_CK(gcu.MemcpyDtoHAsync(hbuf, DP(ddst), N, s));
    GPU_CK(gcu.StreamSynchronize(s));
    expect("put_nbi + quiet_on_stream + signal", 3, hbuf, from);
    shmem_quiet();
    shmem_barrier_all();
    gpu_memset(DP(dsig), 0, sizeof(uint64_t));
    shmem_barrier_all();

    /* 5. a graph: put + signal add, captured once, replayed REPLAYS times
     * with fresh source data; the target waits on its stream for round
     * r's signal and copies the data out. */
    CUgraph graph;
    CUgraphExec exec;
    CUstream ts;
    GPU_CK(gcu.StreamCreate(&ts, CU_STREAM_NON_BLOCKING));
    GPU_CK(gcu.StreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    shmemx_putmem_signal_on_stream(ddst, dsrc, N, dsig, 1, SHMEM_SIGNAL_ADD, to, s);
    GPU_CK(gcu.StreamEndCapture(s, &graph));
    GPU_CK(gcu.GraphInstantiateWithFlags(&exec, graph, 0));
    double t0 = mp_now();
    for (int r = 0; r < REPLAYS; r++) {
        fill(dsrc, me, 10 + r);
        GPU_CK(gcu.GraphLaunch(exec, s));
        shmemx_signal_wait_until_on_stream(dsig, SHMEM_CMP_GE, (uint64_t)r + 1, ts);
        GPU_CK(gcu.MemcpyDtoHAsync(hbuf, DP(ddst), N, ts));
        GPU_CK(gcu.StreamSynchronize(ts));
        expect("graph replay", 10 + r, hbuf, from);
        GPU_CK(gcu.StreamSynchronize(s));
        /* Nobody overwrites a destination before its owner checked it. */
        shmem_barrier_all();
    }
    double t1 = mp_now();
    if (me == 0)
        printf("graph: %d replays of put(1 MiB)+signal checked, %.1f us per "
               "round (incl. refill and check)\n",
               REPLAYS, (t1 - t0) * 1e6 / REPLAYS);
    GPU_CK(gcu.GraphExecDestroy(exec));
    GPU_CK(gcu.GraphDestroy(graph));
    GPU_CK(gcu.StreamDestroy(ts));
    GPU_CK(gcu.StreamDestroy(s));
    shmem_barrier_all();
    shmem_free(dsig);
    shmem_free(hsig);
    shmem_free(ddst);
    shmem_free(dsrc);
    shmem_finalize();
    return 0;
}
