/*
 * The device API's benchmark (issue #12): what a kernel pays to move data
 * through the proxy and the copy engines, next to what the engines
 * themselves and SM copies achieve, in one run. Built by nvcc without
 * -rdc (test/gpu/run-on-device.sh); PE 0 prints the rows as CSV
 * (label,npes,test,variant,bytes,value,unit), also to
 * $OUT/gpu_devbench-LABEL.csv. Exits 77 where no GPU is found.
 *
 * On one GPU the copy engines are reached by device <-> host copies, so
 * the bandwidth rows copy a device-heap buffer into the host heap of the
 * target (this PE with 1 PE). Rows:
 *   lat     put 8 B + quiet through the engines (store threshold 0), put
 *           8 B + quiet on the store path, p 8 B + quiet (a store and a
 *           system fence); us (trimmed mean: gpu_cmp.cuh), kernel clock
 *   idle    put 8 B + quiet through the engines, warm and after 1, 10 and
 *           100 ms without requests (the proxy's wake-up); us, trimmed mean
 *   bw      one thread's putmem (engines), cudaMemcpyAsync, and a
 *           store-copy kernel (int4 grid-stride, 1024 threads per CTA)
 *           with 1 CTA and with every SM, 64 KiB .. 1 GiB; GB/s (median)
 *   overlap a compute kernel (FMA on every SM, ~20 ms) alone, and while
 *           16 MiB move by the device API (one thread's putmem) or by the
 *           store-copy kernel, repeated until the compute ends (#31:
 *           the transfer spans the whole compute); slowdown in percent,
 *           the bandwidth reached meanwhile, the share covered
 *   kreq    a persistent fcollect over a team of one (device heap ->
 *           host heap, one engine copy), started and waited for by one
 *           kernel thread: through its kernel handle (a store into the
 *           trigger word of instances posted ahead), through the proxy
 *           (a FIFO host request per start and wait), and by the host
 *           (shmemx_req_start + shmemx_req_wait); 8 B and 64 KiB, median
 *           us, start to completion seen by the initiator
 *
 *   sweep   put N B + quiet through the engines and through the thread's
 *           stores, 8 B .. 32 KiB (the SHMEM_DEV_STORE_MAX crossover)
 *
 *   peer    (--peer, 2 PEs on two GPUs, #16) instead of bw and overlap:
 *           put 8 B + quiet and bandwidth from PE 0's device heap to PE
 *           1's over NVLink (one thread's putmem, cudaMemcpyAsync into the
 *           peer's mapping, store copies through it), compute slowdown
 *           while max bytes move there; and a persistent fcollect 1 KiB
 *           over the world team started by a kernel on every PE
 *
 *   nvcmp   (--nvcmp GROUP) the rows of the NVSHMEM comparison (#31,
 *           bench/run-nvcmp.sh) instead of all the above, as CSV
 *           lib,npes,row,bytes,value,unit with lib "dmashmem" (the same
 *           rows bench/nvshmem_bench.cu prints for NVSHMEM); PE 0 -> PE 1
 *           (itself with one PE), device heap to device heap, the other
 *           PEs wait. GROUP:
 *             rma      put_quiet (default store threshold: stores),
 *                      put_quiet_engines (threshold 0), p_quiet, and both
 *                      puts after 1/10/100 ms idle (8 bytes, a constant
 *                      in the kernel as in NVSHMEM's; put_quiet_n_arg
 *                      and its _idle_1ms: the size a kernel argument);
 *                      store_fence_floor: a
 *                      bare store through the peer's mapping and
 *                      __threadfence_system, the store path's floor in the
 *                      same run (store_table_fence_floor: the peer's base
 *                      read from the table each time, as the library
 *                      reads it, shmemx_dev__ld_base; the _gpufence
 *                      rows and p_gpufence: the same with __threadfence,
 *                      GPU scope; store_table_quiet_floor and
 *                      copy_table_quiet_floor: p and put + quiet with
 *                      the engine path's quiet, no library checks, the
 *                      floors of p_quiet and put_quiet; and
 *                      copy_table_quiet_floor_idle_*: that floor once
 *                      per kernel after the same idle, the idle rows'
 *                      floor; copy_xlate_quiet_floor and its _idle_*:
 *                      the copy floor with the library's translation of
 *                      the address and its checks); us, the mean of the
 *                      middle 80 % of the samples (cmp_trimmed_mean: the
 *                      timer ticks every 32 ns)
 *             bw       putmem_thread / _warp / _block (shmemx_dev_putmem,
 *                      _warp, _block), 1 MiB .. max; GB/s
 *             overlap  one thread's putmem of 16 MiB repeated over the
 *                      compute (to the peer's device heap, and _to_host:
 *                      its host heap, the copy engines on one GPU)
 *             coll     fcollect/alltoall_stream (shmemx_*mem_on_stream +
 *                      stream sync) and _blocking, 1 KiB .. 16 MiB;
 *                      with 2+ PEs, their floor stream_exchange_floor (a
 *                      one-thread kernel of no library that exchanges one
 *                      word with every peer, + sync: launch, arrival and
 *                      sync, what any on-stream collective pays), and
 *                      beside it stream_exchange2_floor (two exchanges,
 *                      the shape of a call that waits before it writes
 *                      into the peers' dest), stream_exchange2_sysfence
 *                      (the same with a system-scope fence after each)
 *                      and fcollect_stream_llproto (1 KiB as LL lines: 8
 *                      data bytes and the call's number twice per 16-byte
 *                      store into the peer's scratch, one exchange)
 *             queued   the on-stream calls queued, one sync; us per call;
 *                      queued_exchange_floor and fcollect_queued_llproto
 *                      the same way; in both groups each 1 KiB on-stream
 *                      row and each floor row has an _issue row: the
 *                      host's time per call spent enqueueing (the call
 *                      or the floor's launch, not the sync)
 *             kcoll    fcollect/alltoall_kernel: the one-shot routines
 *                      from one warp on every PE (_warp forms: stores at
 *                      1 KiB, engines at 64 KiB); _kernel_req: a
 *                      persistent request over the world team started
 *                      and waited for by one kernel thread on every PE
 *                      (its kernel handle); kernel_engine_put_floor: one
 *                      thread's put + quiet on the engines, the engine
 *                      path's floor (_all: every PE at once;
 *                      kernel_engine_put_every_floor_all: every PE's
 *                      block to every PE + quiet, the collectives' engine
 *                      work); fcollect_kernel_parts_issued/_done/
 *                      _arrived: one thread's fcollect of 64 KiB on the
 *                      engines clocked at its three steps; 1 KiB and 64 KiB;
 *                      barrier_kernel: shmemx_dev_barrier_all from one
 *                      thread per PE
 *
 *   gpu_devbench [--label L] [--max BYTES] [--only kreq|sweep|idle|bw]
 *                [--peer] [--nvcmp GROUP]
 *                (--only: that phase alone)
 */
#include <cuda_runtime.h>
#include <shmem.h>
#include <shmemx.h>
#include <shmemx_cuda.h>

#include "gpu_cmp.cuh"

#include <algorithm>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <vector>

#define CK(call)                                                               \
    do {                                                                       \
        cudaError_t e_ = (call);                                               \
        if (e_ != cudaSuccess) {                                               \
            fprintf(stderr, "gpu_devbench: %s:%d: %s: %s\n", __FILE__,         \
                    __LINE__, #call, cudaGetErrorString(e_));                  \
            _exit(1);                                                          \
        }                                                                      \
    } while (0)

static int me, npes;
static const char *label = "default";
static FILE *csv;

static void row(const char *test, const char *variant, size_t bytes,
                double value, const char *unit)
{
    if (me)
        return;
    printf("%s,%d,%s,%s,%zu,%.3f,%s\n", label, npes, test, variant, bytes,
           value, unit);
    if (csv)
        fprintf(csv, "%s,%d,%s,%s,%zu,%.3f,%s\n", label, npes, test, variant,
                bytes, value, unit);
    fflush(stdout);
}

#define gclock cmp_clock
#define median cmp_median

/* ------------------------------------------------------------ latency */

/* L_FLOOR: what the store path cannot go below, no library in it: one
 * volatile 8-byte store through the peer's mapping (looked up before the
 * clock starts) and __threadfence_system. L_TABLE_FLOOR: the same with the
 * peer's base loaded from the segment table each time (what NVSHMEM's p
 * does: after a fence that load goes to L2). L_TABLE_QUIET_FLOOR: that,
 * with the quiet of a device API that also has an engine path (the
 * engines' two counters loaded before the fence and compared after it,
 * as shmemx_dev__quiet): p + quiet without the library's checks;
 * L_COPY_QUIET_FLOOR: the same storing an 8-byte word loaded from the
 * source (put 8 B + quiet without the checks). L_PUT: put n bytes (n a
 * kernel argument: the sweeps); L_PUT8: put 8 bytes, the size a constant
 * as a program's sizeof would be and as bench/nvshmem_bench.cu's put is
 * (the NVSHMEM comparison's rows: with n an argument the kernel carries
 * the generic path's tail loops, and its first put after a launch cost
 * 1.28 us against 1.08 warm, H100 2026-12-07). L_XLATE_QUIET_FLOOR: the
 * copy floor with the library's translation of dst in the timed part
 * (shmemx_dev__ptr_n: which of the three symmetric segments, PE and range
 * checks, the peer's row), the floor of a put to any symmetric address
 * that names a misuse, which NVSHMEM's device API (its one heap, no
 * checks) does not do. */
enum {
    L_PUT, L_P, L_FLOOR, L_P_FENCE, L_QUIET, L_TABLE_FLOOR,
    L_TABLE_QUIET_FLOOR, L_COPY_QUIET_FLOOR, L_PUT8, L_XLATE_QUIET_FLOOR
};

/* The fence of L_FLOOR, L_TABLE_FLOOR and L_P_FENCE: system scope, or
 * GPU scope (__threadfence) with gpu. */
__device__ static void lat_fence(int gpu)
{
    if (gpu)
        __threadfence();
    else
        __threadfence_system();
}

/* iters round trips; each one's time (ns) into t[i]. One kernel per kind
 * (a template), as a program's loop of one operation would be compiled:
 * with the kind a run-time argument, every path shared one kernel's
 * registers and ptxas recomputed the library's address checks inside the
 * loop while the floors' lookups stayed hoisted (p + quiet +0.13 us over
 * its floor, H100, 2026-12-06; NVSHMEM's kernel likewise). */
template <int kind>
__global__ void k_lat(shmemx_dev_t d, char *dst, const char *src, int pe,
                      int iters, unsigned long long *t, size_t n, int gpu)
{
    volatile uint64_t *peer =
        kind == L_FLOOR
            ? (volatile uint64_t *)shmemx_dev__ptr(&d, dst, pe, "k_lat")
            : NULL;
    int s0 = 0; /* dst's segment and offset, for L_TABLE_FLOOR */
    uint64_t off0 = 0;
#pragma unroll
    for (int k = 0; k < SHMEMX_DEV_SEGS; k++)
        if ((uint64_t)(uintptr_t)dst - d.lo[k] < d.size[k]) {
            s0 = k;
            off0 = (uint64_t)(uintptr_t)dst - d.lo[k];
        }
    for (int i = 0; i < iters; i++) {
        unsigned long long t0 = gclock();
        if (kind == L_FLOOR) {
            *peer = (uint64_t)i;
            lat_fence(gpu);
            t[i] = gclock() - t0;
            continue;
        }
        if (kind == L_TABLE_FLOOR) { /* NVSHMEM's p: one table read */
            volatile uint64_t *q = (volatile uint64_t *)(uintptr_t)(
                shmemx_dev__ld_base(&d, pe, s0) + off0);
            *q = (uint64_t)i;
            lat_fence(gpu);
            t[i] = gclock() - t0;
            continue;
        }
        if (kind == L_TABLE_QUIET_FLOOR || kind == L_COPY_QUIET_FLOOR ||
            kind == L_XLATE_QUIET_FLOOR) {
            volatile uint64_t *q =
                kind == L_XLATE_QUIET_FLOOR
                    ? (volatile uint64_t *)shmemx_dev__ptr_n(&d, dst, 8, pe,
                                                             "k_lat")
                    : (volatile uint64_t *)(uintptr_t)(
                          shmemx_dev__ld_base(&d, pe, s0) + off0);
            *q = kind != L_TABLE_QUIET_FLOOR ? *(const volatile uint64_t *)src
                                             : (uint64_t)i;
            unsigned long long is = *(volatile unsigned long long *)&d.words
                                        [SHMEMX_DEV_W_ISSUE],
                               co = *(volatile unsigned long long *)&d.words
                                        [SHMEMX_DEV_W_COMPLETE],
                               now;
            __threadfence_system();
            asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
            if (co < is + (now == 0))
                shmemx_dev__wait_done(&d, is, "k_lat");
            t[i] = gclock() - t0;
            continue;
        }
        if (kind == L_PUT)
            shmemx_dev_putmem_nbi(d, dst, src, n, pe);
        else if (kind == L_PUT8)
            shmemx_dev_putmem_nbi(d, dst, src, 8, pe);
        else if (kind != L_QUIET)
            shmemx_dev_uint64_p(d, (uint64_t *)dst, (uint64_t)i, pe);
        if (kind == L_P_FENCE)
            lat_fence(gpu);
        else
            shmemx_dev_quiet(d);
        t[i] = gclock() - t0;
    }
}

static double lat(shmemx_dev_t d, int kind, char *dst, const char *src,
                  int pe, int iters, unsigned long long *t, size_t n = 8,
                  int gpu = 0)
{
    switch (kind) {
#define LAT_CASE(K)                                                            \
    case K:                                                                    \
        k_lat<K><<<1, 1>>>(d, dst, src, pe, iters, t, n, gpu);                 \
        break;
        LAT_CASE(L_PUT)
        LAT_CASE(L_P)
        LAT_CASE(L_FLOOR)
        LAT_CASE(L_P_FENCE)
        LAT_CASE(L_QUIET)
        LAT_CASE(L_TABLE_FLOOR)
        LAT_CASE(L_TABLE_QUIET_FLOOR)
        LAT_CASE(L_COPY_QUIET_FLOOR)
        LAT_CASE(L_PUT8)
        LAT_CASE(L_XLATE_QUIET_FLOOR)
#undef LAT_CASE
    default:
        fprintf(stderr, "gpu_devbench: no latency kind %d\n", kind);
        exit(1);
    }
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    return cmp_lat_us(t, iters);
}

static void phase_lat(shmemx_dev_t d, char *dsrc, char *hdst, char *ddst)
{
    const int iters = 2000, pe = (me + 1) % npes;
    unsigned long long *t;
    shmemx_dev_t de = d;
    de.store_max = 0; /* every put through the proxy and the engines */
    CK(cudaMalloc(&t, iters * sizeof(*t)));
    double a = lat(de, L_PUT, hdst, dsrc, pe, iters, t);
    double b = lat(d, L_PUT, hdst, dsrc, pe, iters, t);
    double c = lat(d, L_P, hdst, dsrc, pe, iters, t);
    double e = lat(de, L_PUT, ddst, dsrc, pe, iters, t);
    row("dev_put_quiet", "engines,dev->host", 8, a, "us");
    row("dev_put_quiet", "stores,dev->host", 8, b, "us");
    row("dev_p_quiet", "stores,host word", 8, c, "us");
    row("dev_put_quiet", "engines,dev->dev", 8, e, "us");
    CK(cudaFree(t));
}

/* The first request after the proxy went idle (issue #26): put 8 B +
 * quiet through the engines after 1, 10 and 100 ms without requests,
 * next to the warm figure of the same kernel (trimmed mean of 15; the kernel's
 * own clock, launch not included). What it measures is the proxy's
 * wake-up: it spins SHMEM_DEV_PROXY_SPIN_US, then sleeps until a kernel's
 * reservation wakes it. */
static void phase_idle(shmemx_dev_t d, char *dsrc, char *hdst)
{
    const int pe = (me + 1) % npes, iters = 2000;
    unsigned long long *t;
    shmemx_dev_t de = d;
    de.store_max = 0;
    CK(cudaMalloc(&t, iters * sizeof(*t)));
    row("dev_put_quiet_idle", "engines,warm", 8,
        lat(de, L_PUT, hdst, dsrc, pe, iters, t), "us");
    for (long ms : cmp_idle_ms) {
        char v[64];
        snprintf(v, sizeof(v), "engines,after %ld ms idle", ms);
        /* lat() drops nothing for one iteration: iters / 10 = 0 */
        row("dev_put_quiet_idle", v, 8, cmp_after_idle(ms, [&] {
                return lat(de, L_PUT, hdst, dsrc, pe, 1, t);
            }), "us");
    }
    CK(cudaFree(t));
}

/* The store threshold (SHMEM_DEV_STORE_MAX): put N B + quiet from one
 * thread, device heap -> host heap of the next PE, through the engines
 * (store_max 0) and through the thread's own stores (store_max above N),
 * 8 B .. 32 KiB; median us. Where the stores stop winning is the
 * threshold's measured default. */
static void phase_sweep(shmemx_dev_t d, char *dsrc, char *hdst)
{
    const int iters = 500, pe = (me + 1) % npes;
    unsigned long long *t;
    shmemx_dev_t de = d, ds = d;
    de.store_max = 0;
    ds.store_max = 1u << 30;
    CK(cudaMalloc(&t, iters * sizeof(*t)));
    for (size_t n = 8; n <= 65536; n *= 4) {
        row("dev_put_quiet_sweep", "engines", n,
            lat(de, L_PUT, hdst, dsrc, pe, iters, t, n), "us");
        row("dev_put_quiet_sweep", "stores", n,
            lat(ds, L_PUT, hdst, dsrc, pe, iters, t, n), "us");
    }
    CK(cudaFree(t));
}

/* ------------------------------------------------------------ bandwidth */

__global__ void k_put_timed(shmemx_dev_t d, char *dst, const char *src,
                            size_t n, int pe, unsigned long long *t)
{
    unsigned long long t0 = gclock();
    shmemx_dev_putmem(d, dst, src, n, pe);
    *t = gclock() - t0;
}

__global__ void k_copy(int4 *dst, const int4 *src, size_t n16)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    size_t step = (size_t)gridDim.x * blockDim.x;
    for (; i < n16; i += step)
        dst[i] = src[i];
}

static double ev_time(cudaEvent_t a, cudaEvent_t b)
{
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    return ms * 1e-3;
}

/* dst: the putmem target on PE pe; loc: the same bytes as this process
 * addresses them (what cudaMemcpyAsync and the store copies write). */
static void bw_rows(shmemx_dev_t d, char *dsrc, char *dst, int pe, char *loc,
                    size_t max, int sms, const char *test)
{
    unsigned long long *t, ht;
    cudaEvent_t e0, e1;
    cudaStream_t st;
    char *hloc = loc;
    CK(cudaMalloc(&t, sizeof(*t)));
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    for (size_t n = 64 << 10; n <= max; n *= 4) {
        int reps = n >= (256u << 20) ? 3 : 7;
        std::vector<double> dv, ce, ch, s1, sa;
        for (int r = 0; r < reps; r++) {
            k_put_timed<<<1, 1>>>(d, dst, dsrc, n, pe, t);
            CK(cudaGetLastError());
            CK(cudaDeviceSynchronize());
            CK(cudaMemcpy(&ht, t, sizeof(ht), cudaMemcpyDefault));
            dv.push_back(n / (ht * 1e-9) / 1e9);

            CK(cudaEventRecord(e0, st));
            CK(cudaMemcpyAsync(hloc, dsrc, n, cudaMemcpyDefault, st));
            CK(cudaEventRecord(e1, st));
            CK(cudaStreamSynchronize(st));
            ce.push_back(n / ev_time(e0, e1) / 1e9);

            /* The same copy as a host program sees it: from the call to
             * the end of the synchronisation (the device API's row
             * includes its request's way to the engines likewise). */
            struct timespec h0, h1;
            clock_gettime(CLOCK_MONOTONIC, &h0);
            CK(cudaMemcpyAsync(hloc, dsrc, n, cudaMemcpyDefault, st));
            CK(cudaStreamSynchronize(st));
            clock_gettime(CLOCK_MONOTONIC, &h1);
            ch.push_back(n / ((h1.tv_sec - h0.tv_sec) +
                              (h1.tv_nsec - h0.tv_nsec) * 1e-9) / 1e9);

            CK(cudaEventRecord(e0, st));
            k_copy<<<1, 1024, 0, st>>>((int4 *)hloc, (const int4 *)dsrc,
                                       n / 16);
            CK(cudaEventRecord(e1, st));
            CK(cudaStreamSynchronize(st));
            s1.push_back(n / ev_time(e0, e1) / 1e9);

            CK(cudaEventRecord(e0, st));
            k_copy<<<sms, 1024, 0, st>>>((int4 *)hloc, (const int4 *)dsrc,
                                         n / 16);
            CK(cudaEventRecord(e1, st));
            CK(cudaStreamSynchronize(st));
            sa.push_back(n / ev_time(e0, e1) / 1e9);
        }
        row(test, "dev_putmem 1 thread", n, median(dv), "GB/s");
        row(test, "cudaMemcpyAsync", n, median(ce), "GB/s");
        row(test, "cudaMemcpyAsync, host call to sync", n, median(ch), "GB/s");
        row(test, "store copy 1 CTA", n, median(s1), "GB/s");
        row(test, "store copy all SMs", n, median(sa), "GB/s");
    }
    CK(cudaStreamDestroy(st));
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    CK(cudaFree(t));
}

/* ------------------------------------------------------------ overlap */

/* One thread's putmem of n bytes, repeated until the compute kernel of
 * cmp_overlap ends (bench/gpu_cmp.cuh). */
__global__ void k_put_repeat(shmemx_dev_t d, char *dst, const char *src,
                             size_t n, int pe, cmp_ovl *o)
{
    cmp_ovl_begin(o);
    do
        shmemx_dev_putmem(d, dst, src, n, pe);
    while (cmp_ovl_next(o, n));
}

static cmp_ovl_result overlap_put(shmemx_dev_t d, char *dsrc, char *dst,
                                  int pe, size_t n, int sms)
{
    return cmp_overlap(sms, [&](cudaStream_t st, cmp_ovl *o) {
        k_put_repeat<<<1, 1, 0, st>>>(d, dst, dsrc, n, pe, o);
    });
}

/* A compute kernel (FMA on every SM) alone, and while n bytes (at most
 * CMP_OVL_BYTES, repeated until the compute ends: issue #31) move by one
 * thread's dev_putmem and by the store copy on every SM: slowdown, the
 * bandwidth reached meanwhile, and the share of the compute the transfer
 * covered. */
static void overlap_rows(shmemx_dev_t d, char *dsrc, char *dst, int pe,
                         char *loc, size_t n, int sms, const char *test)
{
    n = std::min(n, (size_t)CMP_OVL_BYTES);
    cmp_ovl_result a = overlap_put(d, dsrc, dst, pe, n, sms);
    cmp_ovl_result b = cmp_overlap(sms, [&](cudaStream_t st, cmp_ovl *o) {
        cmp_k_copy_repeat<<<sms, 1024, 0, st>>>((int4 *)loc,
                                                (const int4 *)dsrc, n / 16, o);
    });
    row(test, "compute alone", 0, a.alone_ms, "ms");
    row(test, "slowdown, dev_putmem 1 thread", n, a.slowdown_pct, "%");
    row(test, "bandwidth meanwhile, dev_putmem 1 thread", n, a.gbps, "GB/s");
    row(test, "compute covered, dev_putmem 1 thread", n, a.cover_pct, "%");
    row(test, "slowdown, store copy all SMs", n, b.slowdown_pct, "%");
    row(test, "bandwidth meanwhile, store copy all SMs", n, b.gbps, "GB/s");
    row(test, "compute covered, store copy all SMs", n, b.cover_pct, "%");
}

/* ------------------------------------------------------------ kreq */

template <typename R>
__global__ void k_kreq(shmemx_dev_t d, R req, int iters, unsigned long long *t)
{
    for (int i = 0; i < iters; i++) {
        unsigned long long t0 = gclock();
        shmemx_dev_req_start(d, req);
        shmemx_dev_req_wait(d, req);
        t[i] = gclock() - t0;
    }
}

/* On a stream of its own, synchronised alone: cudaDeviceSynchronize would
 * also wait for the instances posted ahead behind their trigger. */
static cudaStream_t kst;

template <typename R>
static double kreq_lat(shmemx_dev_t d, R req, int iters, unsigned long long *t)
{
    std::vector<unsigned long long> h(iters);
    std::vector<double> v;
    k_kreq<<<1, 1, 0, kst>>>(d, req, iters, t);
    CK(cudaGetLastError());
    CK(cudaStreamSynchronize(kst));
    /* Not on the legacy stream: instances are posted ahead. */
    CK(cudaMemcpyAsync(h.data(), t, iters * sizeof(*t), cudaMemcpyDefault,
                       kst));
    CK(cudaStreamSynchronize(kst));
    for (int i = iters / 10; i < iters; i++)
        v.push_back(h[i] / 1e3);
    return median(v);
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

/* A team of one on every PE (the x teams of a split with rows of one). */
static shmem_team_t team_of_one(shmem_team_t *other)
{
    shmem_team_t x = SHMEM_TEAM_INVALID;
    *other = SHMEM_TEAM_INVALID;
    if (shmem_team_split_2d(SHMEM_TEAM_WORLD, 1, NULL, 0, &x, NULL, 0,
                            other) ||
        x == SHMEM_TEAM_INVALID || shmem_team_n_pes(x) != 1) {
        fprintf(stderr, "PE %d: cannot make a team of one\n", shmem_my_pe());
        _exit(1);
    }
    return x;
}

static void phase_kreq(shmemx_dev_t d, char *dsrc, char *hdst,
                       shmem_team_t one)
{
    const int iters = 2000;
    unsigned long long *t;
    CK(cudaMalloc(&t, iters * sizeof(*t)));
    CK(cudaStreamCreateWithFlags(&kst, cudaStreamNonBlocking));
    /* Load both kernels before anything is posted ahead (a first launch
     * may wait for the whole GPU to be idle: shmemx_dev(3)). */
    k_kreq<<<1, 1, 0, kst>>>(d, (shmemx_dev_req_t *)NULL, 0, t);
    k_kreq<<<1, 1, 0, kst>>>(d, (shmemx_req_t)NULL, 0, t);
    CK(cudaStreamSynchronize(kst));
    for (size_t n = 8; n <= (64u << 10); n *= 8192) {
        shmemx_req_t rk, rp;
        if (shmemx_fcollectmem_init(one, hdst, dsrc, n, &rk) ||
            shmemx_fcollectmem_init(one, hdst, dsrc, n, &rp)) {
            fprintf(stderr, "gpu_devbench: shmemx_fcollectmem_init failed\n");
            _exit(1);
        }
        shmemx_dev_req_t *h = shmemx_req_device(rk);
        shmemx_dev_req_t hh;
        CK(cudaMemcpyAsync(&hh, h, sizeof(hh), cudaMemcpyDefault, kst));
        CK(cudaStreamSynchronize(kst));
        double a = kreq_lat(d, h, iters, t);
        double b = kreq_lat(d, rp, iters, t);
        std::vector<double> c;
        for (int i = 0; i < iters; i++) {
            double t0 = now_us();
            shmemx_req_start(rk);
            shmemx_req_wait(rk);
            if (i >= iters / 10)
                c.push_back(now_us() - t0);
        }
        row("dev_req_start_wait",
            hh.mode == SHMEMX_DEV_REQ_TRIGGER ? "kernel store trigger"
                                              : "kernel handle (proxy mode)",
            n, a, "us");
        row("dev_req_start_wait", "kernel via proxy FIFO", n, b, "us");
        row("dev_req_start_wait", "host start+wait", n, median(c), "us");
        shmemx_req_free(rk);
        shmemx_req_free(rp);
    }
    CK(cudaStreamDestroy(kst));
    CK(cudaFree(t));
}

/* ------------------------------------------------------------ peer */

/* Across GPUs (two GPUs, issue #16): PE 0's device heap -> PE 1's over
 * NVLink. put 8 B + quiet by the engines and by stores; bandwidth of one
 * thread's putmem against cudaMemcpyAsync into PE 1's mapping (what
 * cudaMemcpyPeerAsync does) and the store copies through it; compute
 * slowdown while max bytes move to PE 1. PE 0 only. */
static void phase_peer(shmemx_dev_t d, char *dsrc, char *pdst, size_t max,
                       int sms)
{
    char *pp = (char *)shmem_ptr(pdst, 1);
    if (!pp) {
        fprintf(stderr, "gpu_devbench --peer: PE 1's device heap is not "
                        "mapped in PE 0 (not on this node?)\n");
        return;
    }
    const int iters = 2000;
    unsigned long long *t;
    shmemx_dev_t de = d;
    de.store_max = 0;
    CK(cudaMalloc(&t, iters * sizeof(*t)));
    row("dev_put_quiet", "engines,dev->peer dev", 8,
        lat(de, L_PUT, pdst, dsrc, 1, iters, t), "us");
    row("dev_put_quiet", "stores,dev->peer dev", 8,
        lat(d, L_PUT, pdst, dsrc, 1, iters, t), "us");
    row("dev_p_quiet", "stores,peer dev word", 8,
        lat(d, L_P, pdst, dsrc, 1, iters, t), "us");
    CK(cudaFree(t));
    bw_rows(d, dsrc, pdst, 1, pp, max, sms, "bw_dev_to_peer");
    overlap_rows(d, dsrc, pdst, 1, pp, max, sms, "overlap_peer");
}

/* A persistent fcollect of 1 KiB over the world team started and waited
 * for by a kernel on every PE through its handle (trigger mode with
 * SHMEM_DEV_REQ_TRIGGER=1 and SHMEM_PERSISTENT_SYNC=dev across GPUs, else
 * proxy mode); PE 0's median. */
static void phase_kreq_world(shmemx_dev_t d, char *dsrc, char *pdst)
{
    const int iters = 2000;
    unsigned long long *t;
    shmemx_req_t r;
    CK(cudaMalloc(&t, iters * sizeof(*t)));
    CK(cudaStreamCreateWithFlags(&kst, cudaStreamNonBlocking));
    k_kreq<<<1, 1, 0, kst>>>(d, (shmemx_dev_req_t *)NULL, 0, t);
    CK(cudaStreamSynchronize(kst));
    if (shmemx_fcollectmem_init(SHMEM_TEAM_WORLD, pdst, dsrc, 1024, &r)) {
        fprintf(stderr, "gpu_devbench: shmemx_fcollectmem_init failed\n");
        _exit(1);
    }
    shmemx_dev_req_t *h = shmemx_req_device(r), hh;
    CK(cudaMemcpyAsync(&hh, h, sizeof(hh), cudaMemcpyDefault, kst));
    CK(cudaStreamSynchronize(kst));
    shmem_barrier_all();
    double a = kreq_lat(d, h, iters, t);
    row("dev_req_start_wait",
        hh.mode == SHMEMX_DEV_REQ_TRIGGER
            ? "world team, kernel store trigger"
            : "world team, kernel handle (proxy mode)",
        1024, a, "us");
    shmem_barrier_all();
    shmemx_req_free(r);
    CK(cudaStreamDestroy(kst));
    CK(cudaFree(t));
}

/* ------------------------------------------------------------ nvcmp */

/* The rows of the NVSHMEM comparison (issue #31): the same names, sizes
 * and method as bench/nvshmem_bench.cu, lib "dmashmem". */
static void crow(const char *name, size_t bytes, double v, const char *unit)
{
    cmp_row("dmashmem", me, npes, name, bytes, v, unit);
}

static void cmp_rma(shmemx_dev_t d, char *dsrc, char *pdst)
{
    const int iters = 2000, pe = (me + 1) % npes;
    unsigned long long *t;
    shmemx_dev_t de = d;
    de.store_max = 0; /* through the proxy and the engines */
    CK(cudaMalloc(&t, iters * sizeof(*t)));
    crow("put_quiet", 8, lat(d, L_PUT8, pdst, dsrc, pe, iters, t), "us");
    crow("put_quiet_engines", 8, lat(de, L_PUT8, pdst, dsrc, pe, iters, t),
         "us");
    crow("p_quiet", 8, lat(d, L_P, pdst, dsrc, pe, iters, t), "us");
    crow("store_fence_floor", 8, lat(d, L_FLOOR, pdst, dsrc, pe, iters, t),
         "us");
    /* The parts of p_quiet: the library's p and a bare fence, and the
     * quiet after no store. */
    crow("p_fence", 8, lat(d, L_P_FENCE, pdst, dsrc, pe, iters, t), "us");
    crow("quiet_alone", 0, lat(d, L_QUIET, pdst, dsrc, pe, iters, t), "us");
    crow("store_table_fence_floor", 8,
         lat(d, L_TABLE_FLOOR, pdst, dsrc, pe, iters, t), "us");
    /* The floors of p / put + quiet for a device API with an engine path
     * (its quiet reads the engines' counters): the tables' floor rows of
     * put_quiet and p_quiet (bench/nvcmp-table.awk). */
    crow("store_table_quiet_floor", 8,
         lat(d, L_TABLE_QUIET_FLOOR, pdst, dsrc, pe, iters, t), "us");
    crow("copy_table_quiet_floor", 8,
         lat(d, L_COPY_QUIET_FLOOR, pdst, dsrc, pe, iters, t), "us");
    crow("copy_xlate_quiet_floor", 8,
         lat(d, L_XLATE_QUIET_FLOOR, pdst, dsrc, pe, iters, t), "us");
    /* The same three with a GPU-scope fence (__threadfence): what a quiet
     * would cost where every peer shares this GPU and nothing was written
     * to host memory. */
    crow("store_gpufence_floor", 8,
         lat(d, L_FLOOR, pdst, dsrc, pe, iters, t, 8, 1), "us");
    crow("store_table_gpufence_floor", 8,
         lat(d, L_TABLE_FLOOR, pdst, dsrc, pe, iters, t, 8, 1), "us");
    crow("p_gpufence", 8, lat(d, L_P_FENCE, pdst, dsrc, pe, iters, t, 8, 1),
         "us");
    /* put + quiet after 1/10/100 ms idle, by stores and by the engines,
     * each once in a kernel of its own; and those rows' floor, the copy
     * floor run the same way. A kernel's first execution of its code is
     * slower than a loop's later ones, idle or not
     * (test/gpu/probes/idle_probe.cu), so the warm floor is not the idle
     * rows' (bench/nvcmp-table.awk). */
    const struct {
        const char *name;
        shmemx_dev_t dd;
        int kind;
    } idle_rows[] = {{"put_quiet", d, L_PUT8},
                     {"put_quiet_engines", de, L_PUT8},
                     {"copy_table_quiet_floor", d, L_COPY_QUIET_FLOOR},
                     {"copy_xlate_quiet_floor", d, L_XLATE_QUIET_FLOOR}};
    for (const auto &r : idle_rows)
        for (long ms : cmp_idle_ms) {
            char name[64];
            snprintf(name, sizeof(name), "%s_idle_%ldms", r.name, ms);
            crow(name, 8, cmp_after_idle(ms, [&] {
                     return lat(r.dd, r.kind, pdst, dsrc, pe, 1, t);
                 }), "us");
        }
    /* put_quiet and its 1 ms idle row with the size a kernel argument
     * (L_PUT): what the generic path's code costs a kernel's first put. */
    crow("put_quiet_n_arg", 8, lat(d, L_PUT, pdst, dsrc, pe, iters, t), "us");
    crow("put_quiet_n_arg_idle_1ms", 8, cmp_after_idle(1, [&] {
             return lat(d, L_PUT, pdst, dsrc, pe, 1, t);
         }), "us");
    CK(cudaFree(t));
}

enum { F_THREAD, F_WARP, F_BLOCK };

__global__ void k_bw_form(shmemx_dev_t d, int form, char *dst,
                          const char *src, size_t n, int pe,
                          unsigned long long *t)
{
    unsigned long long t0 = 0;
    __syncthreads();
    if (threadIdx.x == 0)
        t0 = gclock();
    if (form == F_THREAD) {
        if (threadIdx.x == 0)
            shmemx_dev_putmem(d, dst, src, n, pe);
    } else if (form == F_WARP) {
        if (threadIdx.x < 32)
            shmemx_dev_putmem_warp(d, dst, src, n, pe);
    } else {
        shmemx_dev_putmem_block(d, dst, src, n, pe);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        shmemx_dev_quiet(d);
        *t = gclock() - t0;
    }
}

static void cmp_bw(shmemx_dev_t d, char *dsrc, char *pdst, size_t max)
{
    static const char *const names[] = {"putmem_thread", "putmem_warp",
                                        "putmem_block"};
    static const int threads[] = {1, 32, 1024};
    const int pe = (me + 1) % npes;
    unsigned long long *t, ht;
    CK(cudaMalloc(&t, sizeof(*t)));
    for (int f = 0; f < 3; f++)
        for (size_t n = CMP_BW_MIN; n <= max; n *= 4) {
            int reps = n >= (64u << 20) ? 3 : 5;
            std::vector<double> v;
            double t0 = cmp_now_s();
            for (int r = 0; r < reps && (r == 0 || cmp_now_s() - t0 < 2); r++) {
                k_bw_form<<<1, threads[f]>>>(d, f, pdst, dsrc, n, pe, t);
                CK(cudaGetLastError());
                CK(cudaDeviceSynchronize());
                CK(cudaMemcpy(&ht, t, sizeof(ht), cudaMemcpyDefault));
                v.push_back(ht ? n / (double)ht : 0); /* bytes/ns = GB/s */
            }
            crow(names[f], n, median(v), "GB/s");
        }
    CK(cudaFree(t));
}

enum { C_STREAM, C_QUEUED, C_BLOCKING };

/* Host seconds spent enqueueing (the on-stream call or the floor's
 * launch, not the sync), summed by cmp_issued, read by cmp_per_call_us. */
static double cmp_issue_s;
template <typename F>
static void cmp_issued(F enqueue)
{
    double t0 = cmp_now_s();
    enqueue();
    cmp_issue_s += cmp_now_s() - t0;
}

static void cmp_coll_call(int a2a, int how, char *dst, const char *src,
                          size_t n, cudaStream_t st)
{
    int rc = 0;
    if (how != C_BLOCKING)
        cmp_issued([&] {
            rc = a2a ? shmemx_alltoallmem_on_stream(SHMEM_TEAM_WORLD, dst,
                                                    src, n, (void *)st)
                     : shmemx_fcollectmem_on_stream(SHMEM_TEAM_WORLD, dst,
                                                    src, n, (void *)st);
        });
    else
        rc = a2a ? shmem_alltoallmem(SHMEM_TEAM_WORLD, dst, src, n)
                 : shmem_fcollectmem(SHMEM_TEAM_WORLD, dst, src, n);
    if (rc) {
        fprintf(stderr, "gpu_devbench: PE %d: %s of %zu bytes returned %d\n",
                me, a2a ? "alltoall" : "fcollect", n, rc);
        _exit(1);
    }
    if (how == C_STREAM)
        CK(cudaStreamSynchronize(st));
}

/* PE 0's mean per call of `call` (as nvshmem_bench): after 5 warm-up
 * calls, the median of CMP_COLL_REPS timings, each after a barrier, of k
 * calls and a stream sync. *issue_us (where given): the median of the
 * same timings' host time per call spent in cmp_issued. */
template <typename F>
static double cmp_per_call_us(int k, cudaStream_t st, F call,
                              double *issue_us = NULL)
{
    std::vector<double> reps, issue;
    for (int w = 0; w < 5; w++)
        call();
    CK(cudaStreamSynchronize(st));
    for (int r = 0; r < CMP_COLL_REPS; r++) {
        shmem_barrier_all();
        cmp_issue_s = 0;
        double t0 = cmp_now_s();
        for (int i = 0; i < k; i++)
            call();
        CK(cudaStreamSynchronize(st));
        reps.push_back((cmp_now_s() - t0) * 1e6 / k);
        issue.push_back(cmp_issue_s * 1e6 / k);
    }
    if (issue_us)
        *issue_us = cmp_median(issue);
    return cmp_median(reps);
}

/* The floor of an on-stream collective of 2+ PEs, no library in it: one
 * kernel of one thread that stores seq into every peer's word for this PE
 * (through shmem_ptr) and waits until each peer's seq is in its own word
 * for that peer; `phases` such exchanges. A collective cannot end before
 * every peer reached it, so launch + one exchange (+ sync) is what any
 * library pays per call; the library's own design adds to it. */
#define CMP_HS_PEERS 8
struct cmp_hs {
    unsigned long long *out[CMP_HS_PEERS]; /* peer's word for me */
    unsigned long long *in[CMP_HS_PEERS];  /* my word for that peer */
    int np;
};

__global__ void k_handshake(cmp_hs h, unsigned long long seq, int phases,
                            int fence)
{
    if (threadIdx.x)
        return;
    for (int ph = 0; ph < phases; ph++, seq++) {
        for (int i = 0; i < h.np; i++)
            *(volatile unsigned long long *)h.out[i] = seq;
        for (int i = 0; i < h.np; i++)
            while (*(volatile unsigned long long *)h.in[i] < seq)
                ;
        if (fence)
            __threadfence_system();
    }
}

/* Experiment: a 1 KiB fcollect in the LL form (8 data bytes and two
 * copies of the call's seq in each 16-byte line, written into the peers'
 * scratch; each PE copies its scratch into its dest). */
struct cmp_ll {
    int4 *out[CMP_HS_PEERS]; /* peer's scratch, my part, both buffers */
    int4 *in[CMP_HS_PEERS];  /* my scratch, that peer's part */
    int idx[CMP_HS_PEERS];   /* that peer's block in dest */
    int np, me;
};

__device__ static void ll_store(int4 *p, int4 w)
{
    asm volatile("st.volatile.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p),
                 "r"(w.x), "r"(w.y), "r"(w.z), "r"(w.w) : "memory");
}

__device__ static int4 ll_load(const int4 *p)
{
    int4 w;
    asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(w.x), "=r"(w.y), "=r"(w.z), "=r"(w.w)
                 : "l"(p)
                 : "memory");
    return w;
}

__global__ void k_ll(cmp_ll h, const unsigned long long *src,
                     unsigned long long *dst, unsigned lines,
                     unsigned seq)
{
    const unsigned b = seq & 1, t = threadIdx.x;
    for (unsigned l = t; l < lines; l += blockDim.x) {
        unsigned long long v = src[l];
        int4 w = make_int4((int)(unsigned)v, (int)seq, (int)(v >> 32),
                           (int)seq);
        for (int i = 0; i < h.np; i++)
            ll_store(h.out[i] + b * lines + l, w);
        dst[(size_t)h.me * lines + l] = v;
    }
    for (int i = 0; i < h.np; i++)
        for (unsigned l = t; l < lines; l += blockDim.x) {
            int4 w;
            do
                w = ll_load(h.in[i] + b * lines + l);
            while ((unsigned)w.y != seq || (unsigned)w.w != seq);
            dst[(size_t)h.idx[i] * lines + l] =
                (unsigned long long)(unsigned)w.x |
                ((unsigned long long)(unsigned)w.z << 32);
        }
}

/* Rows stream_exchange_floor (one exchange per call, each call + stream
 * sync, timed as fcollect_stream), stream_exchange2_floor (two per call:
 * the shape of a collective that waits for its peers before it writes
 * into their dest and again after), stream_exchange2_sysfence (the same
 * with a system-scope fence after each exchange) and
 * fcollect_stream_llproto (k_ll, 1 KiB); queued_exchange_floor and
 * fcollect_queued_llproto (one per call, calls queued, one sync); one
 * PE's rows skipped. */
static void cmp_coll_floor(cudaStream_t st, int queued, char *csrc,
                           char *cdst)
{
    if (npes < 2 || npes - 1 > CMP_HS_PEERS)
        return;
    const unsigned lines = CMP_COLL_MIN / 8;
    const size_t scr_n = sizeof(int4) * 2 * lines * (size_t)npes;
    unsigned long long *w = (unsigned long long *)shmemx_malloc_device(
        sizeof(unsigned long long) * npes);
    int4 *scr = (int4 *)shmemx_malloc_device(scr_n);
    cmp_hs h;
    cmp_ll ll;
    h.np = ll.np = npes - 1;
    ll.me = me;
    int ok = w && scr;
    if (ok) {
        CK(cudaMemset(w, 0, sizeof(*w) * npes));
        CK(cudaMemset(scr, 0, scr_n));
    }
    shmem_barrier_all();
    for (int i = 0; ok && i < h.np; i++) {
        int pe = (me + 1 + i) % npes;
        h.out[i] = (unsigned long long *)shmem_ptr(w + me, pe);
        h.in[i] = w + pe;
        ll.out[i] = (int4 *)shmem_ptr(scr + (size_t)me * 2 * lines, pe);
        ll.in[i] = scr + (size_t)pe * 2 * lines;
        ll.idx[i] = pe;
        ok = h.out[i] && ll.out[i];
    }
    /* Every PE the same answer, or none runs the kernel (it would wait). */
    static int all_ok;
    static int my_ok;
    my_ok = ok;
    shmem_int_and_reduce(SHMEM_TEAM_WORLD, &all_ok, &my_ok, 1);
    if (!all_ok) {
        if (me == 0)
            printf("# stream_exchange_floor: not run (a peer's device heap "
                   "is not mapped here)\n");
        shmem_free(scr);
        shmem_free(w);
        return;
    }
    unsigned long long seq = 1;
    const int k = queued ? cmp_queued_calls(CMP_COLL_MIN)
                         : cmp_coll_iters(CMP_COLL_MIN);
    for (int v = 0; v < (queued ? 2 : 4); v++) {
        const int proto = queued ? v == 1 : v == 3;
        const int phases = v && !queued && !proto ? 2 : 1, fence = v == 2;
        double issue;
        double us = cmp_per_call_us(k, st, [&] {
            cmp_issued([&] {
                if (proto)
                    k_ll<<<1, lines, 0, st>>>(
                        ll, (const unsigned long long *)csrc,
                        (unsigned long long *)cdst, lines, (unsigned)seq);
                else
                    k_handshake<<<1, 32, 0, st>>>(h, seq, phases, fence);
            });
            seq += phases;
            if (!queued)
                CK(cudaStreamSynchronize(st));
        }, &issue);
        const char *name = proto    ? (queued ? "fcollect_queued_llproto"
                                              : "fcollect_stream_llproto")
                           : queued ? "queued_exchange_floor"
                           : v == 2 ? "stream_exchange2_sysfence"
                           : v == 1 ? "stream_exchange2_floor"
                                    : "stream_exchange_floor";
        char iname[64];
        crow(name, proto ? CMP_COLL_MIN : 0, us, "us");
        snprintf(iname, sizeof(iname), "%s_issue", name);
        crow(iname, proto ? CMP_COLL_MIN : 0, issue, "us");
    }
    shmem_barrier_all();
    shmem_free(scr);
    shmem_free(w);
}

/* Per call (cmp_per_call_us): each call followed by a stream sync
 * (stream), calls then one sync (queued), or blocking calls. */
static void cmp_coll(char *csrc, char *cdst, int queued)
{
    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    for (int how = queued ? C_QUEUED : C_STREAM;
         how <= (queued ? C_QUEUED : C_BLOCKING); how++) {
        if (how == C_QUEUED && !queued)
            continue;
        for (int a2a = 0; a2a < 2; a2a++)
            for (size_t n = CMP_COLL_MIN; n <= CMP_COLL_MAX; n *= 4) {
                int k = how == C_QUEUED ? cmp_queued_calls(n)
                                        : cmp_coll_iters(n);
                double issue;
                double us = cmp_per_call_us(k, st, [&] {
                    cmp_coll_call(a2a, how, cdst, csrc, n, st);
                }, &issue);
                char name[64];
                snprintf(name, sizeof(name), "%s_%s",
                         a2a ? "alltoall" : "fcollect",
                         how == C_STREAM   ? "stream"
                         : how == C_QUEUED ? "queued"
                                           : "blocking");
                crow(name, n, us, "us");
                /* The host's part of the on-stream call (the rest is the
                 * GPU's and the sync's), at the smallest size. */
                if (how != C_BLOCKING && n == CMP_COLL_MIN) {
                    strcat(name, "_issue");
                    crow(name, n, issue, "us");
                }
            }
    }
    cmp_coll_floor(st, queued, csrc, cdst);
    shmem_barrier_all();
    CK(cudaStreamDestroy(st));
}

/* The one-shot collectives from one warp (shmemx_dev_fcollectmem_warp,
 * _alltoallmem_warp: stores up to the store threshold, the engines
 * above), back to back as nvshmem_bench's k_kcoll; per call, kernel
 * clock of thread 0. */
__global__ void k_kcoll_shot(shmemx_dev_t d, int a2a, char *dst,
                             const char *src, size_t n, int iters,
                             unsigned long long *t)
{
    for (int i = 0; i < iters; i++) {
        unsigned long long t0 = 0;
        __syncwarp();
        if (threadIdx.x == 0)
            t0 = gclock();
        if (a2a)
            shmemx_dev_alltoallmem_warp(d, dst, src, n);
        else
            shmemx_dev_fcollectmem_warp(d, dst, src, n);
        if (threadIdx.x == 0)
            t[i] = gclock() - t0;
    }
}

/* shmemx_dev_barrier_all from one thread per PE, back to back as
 * nvshmem_bench's k_barrier; per call, kernel clock. */
__global__ void k_barrier(shmemx_dev_t d, int iters, unsigned long long *t)
{
    for (int i = 0; i < iters; i++) {
        unsigned long long t0 = gclock();
        shmemx_dev_barrier_all(d);
        t[i] = gclock() - t0;
    }
}

/* Where a kernel-started fcollect on the engines spends its time: the
 * engine-path fcollect of n bytes by one thread in its three parts,
 * clocked from the call: requests issued (FIFO slots written and
 * published), the PE's tickets done (the proxy's submission and the
 * copies), every peer's arrival seen (as shmemx_dev__coll_end, engine
 * branch). */
__global__ void k_kcoll_parts(shmemx_dev_t d, char *dst, const char *src,
                              size_t n, int iters, unsigned long long *t)
{
    volatile unsigned long long *my = (volatile unsigned long long *)d.words;
    for (int i = 0; i < iters; i++) {
        unsigned long long e = shmemx_dev__next_epoch(&d);
        unsigned long long t0 = gclock();
        shmemx_dev__coll_part(&d, dst, src, n, SHMEMX_DEV__FCOLLECT, 0, e, 0,
                              1, "k_kcoll_parts");
        unsigned long long t1 = gclock();
        my[SHMEMX_DEV_W_EPOCH] = e;
        shmemx_dev__engines_done(&d, "k_kcoll_parts");
        unsigned long long t2 = gclock();
        shmemx_dev__coll_arrivals(&d, e);
        unsigned long long t3 = gclock();
        t[i] = t1 - t0;
        t[iters + i] = t2 - t0;
        t[2 * iters + i] = t3 - t0;
    }
}

/* The engine work of a kernel's fcollect without its arrival round: one
 * thread issues a copy of n bytes of src to dst + me * n on every PE, this
 * one first (as shmemx_dev__coll_part: one submission, every request but
 * the last marked `more`), then quiet; per call, kernel clock. With every
 * PE at once: kernel_engine_put_every_floor_all, the floor of the
 * collectives' engine path at npes > 1 (npes copies per PE, where
 * kernel_engine_put_floor_all moves one). */
__global__ void k_put_every(shmemx_dev_t d, char *dst, const char *src,
                            size_t n, int iters, unsigned long long *t)
{
    for (int i = 0; i < iters; i++) {
        unsigned long long t0 = gclock();
        for (int j = 0; j < d.npes; j++) {
            const int pe = (d.me + j) % d.npes;
            (void)shmemx_dev__engine_copy(
                &d,
                (uint64_t)(uintptr_t)shmemx_dev__ptr(
                    &d, dst + (size_t)d.me * n, pe, "k_put_every"),
                (uint64_t)(uintptr_t)src, n, j + 1 < d.npes, "k_put_every");
        }
        shmemx_dev_quiet(d);
        t[i] = gclock() - t0;
    }
}

/* Kernel-started fcollect/alltoall on every PE, PE 0's trimmed mean: the
 * one-shot routines from one warp (fcollect_kernel, alltoall_kernel: the
 * rows compared with NVSHMEM's one-CTA calls), and a persistent request
 * over the world team started and waited for by one kernel thread
 * through its kernel handle (_kernel_req; kreq_lat). Beside them the
 * floor of the engine path in the same run: one thread's put of n bytes
 * to the next PE + quiet on the engines (kernel_engine_put_floor), what
 * any kernel-started transfer that leaves the SMs alone pays here. */
static void cmp_kcoll(shmemx_dev_t d, char *csrc, char *cdst)
{
    const int iters = 1000;
    unsigned long long *t;
    CK(cudaMalloc(&t, iters * sizeof(*t)));
    CK(cudaStreamCreateWithFlags(&kst, cudaStreamNonBlocking));
    if (me == 0) {
        shmemx_dev_t de = d;
        de.store_max = 0;
        for (size_t n = 1024; n <= (64u << 10); n *= 64)
            crow("kernel_engine_put_floor", n,
                 lat(de, L_PUT, cdst, csrc, (me + 1) % npes, iters, t, n),
                 "us");
    }
    shmem_barrier_all();
    /* The same with every PE putting to the next at once: what the engines
     * give when each PE moves a block at the same time, as in a
     * collective (PE 0's median). */
    {
        shmemx_dev_t de = d;
        de.store_max = 0;
        double v = lat(de, L_PUT, cdst, csrc, (me + 1) % npes, iters, t,
                       64u << 10);
        if (me == 0 && npes > 1)
            crow("kernel_engine_put_floor_all", 64u << 10, v, "us");
    }
    shmem_barrier_all();
    if (npes > 1) {
        shmemx_dev_t de = d;
        de.store_max = 0;
        k_put_every<<<1, 1, 0, kst>>>(de, cdst, csrc, 64u << 10, iters, t);
        CK(cudaGetLastError());
        CK(cudaStreamSynchronize(kst));
        if (me == 0)
            crow("kernel_engine_put_every_floor_all", 64u << 10,
                 cmp_lat_us(t, iters), "us");
        shmem_barrier_all();
    }
    {
        unsigned long long *t3;
        CK(cudaMalloc(&t3, 3 * iters * sizeof(*t3)));
        shmemx_dev_t de = d;
        de.store_max = 0;
        k_kcoll_parts<<<1, 1, 0, kst>>>(de, cdst, csrc, 64u << 10, iters, t3);
        CK(cudaGetLastError());
        CK(cudaStreamSynchronize(kst));
        crow("fcollect_kernel_parts_issued", 64u << 10,
             cmp_lat_us(t3, iters), "us");
        crow("fcollect_kernel_parts_done", 64u << 10,
             cmp_lat_us(t3 + iters, iters), "us");
        crow("fcollect_kernel_parts_arrived", 64u << 10,
             cmp_lat_us(t3 + 2 * iters, iters), "us");
        CK(cudaFree(t3));
        shmem_barrier_all();
    }
    for (int a2a = 0; a2a < 2; a2a++)
        for (size_t n = 1024; n <= (64u << 10); n *= 64) {
            k_kcoll_shot<<<1, 32, 0, kst>>>(d, a2a, cdst, csrc, n, iters, t);
            CK(cudaGetLastError());
            CK(cudaStreamSynchronize(kst));
            crow(a2a ? "alltoall_kernel" : "fcollect_kernel", n,
                 cmp_lat_us(t, iters), "us");
            shmem_barrier_all();
        }
    k_barrier<<<1, 1, 0, kst>>>(d, iters, t);
    CK(cudaGetLastError());
    CK(cudaStreamSynchronize(kst));
    crow("barrier_kernel", 0, cmp_lat_us(t, iters), "us");
    shmem_barrier_all();
    /* Load the kernel before anything is posted ahead (phase_kreq). */
    k_kreq<<<1, 1, 0, kst>>>(d, (shmemx_dev_req_t *)NULL, 0, t);
    CK(cudaStreamSynchronize(kst));
    for (int a2a = 0; a2a < 2; a2a++)
        for (size_t n = 1024; n <= (64u << 10); n *= 64) {
            shmemx_req_t r;
            int rc = a2a ? shmemx_alltoallmem_init(SHMEM_TEAM_WORLD, cdst,
                                                   csrc, n, &r)
                         : shmemx_fcollectmem_init(SHMEM_TEAM_WORLD, cdst,
                                                   csrc, n, &r);
            if (rc) {
                fprintf(stderr, "gpu_devbench: PE %d: shmemx_%smem_init "
                                "failed\n", me, a2a ? "alltoall" : "fcollect");
                _exit(1);
            }
            shmemx_dev_req_t *h = shmemx_req_device(r), hh;
            if (h) {
                CK(cudaMemcpyAsync(&hh, h, sizeof(hh), cudaMemcpyDefault, kst));
                CK(cudaStreamSynchronize(kst));
                cmp_note("dmashmem", me,
                         hh.mode == SHMEMX_DEV_REQ_TRIGGER
                             ? "kcoll: kernel handle, store trigger"
                             : "kcoll: kernel handle, proxy mode");
            } else {
                cmp_note("dmashmem", me, "kcoll: no kernel handle: the "
                                         "request through the proxy FIFO");
            }
            shmem_barrier_all();
            double v = h ? kreq_lat(d, h, iters, t) : kreq_lat(d, r, iters, t);
            crow(a2a ? "alltoall_kernel_req" : "fcollect_kernel_req", n, v,
                 "us");
            shmem_barrier_all();
            shmemx_req_free(r);
        }
    CK(cudaStreamDestroy(kst));
    CK(cudaFree(t));
}

static int nvcmp_main(const char *group, size_t max, int sms)
{
    shmemx_dev_t d;
    shmemx_dev_get(&d);
    const int pe = (me + 1) % npes;
    int rma_bw = !strcmp(group, "rma") || !strcmp(group, "bw") ||
                 !strcmp(group, "overlap");
    int coll = !strcmp(group, "coll") || !strcmp(group, "queued") ||
               !strcmp(group, "kcoll");
    if (!rma_bw && !coll) {
        fprintf(stderr, "gpu_devbench: --nvcmp %s: not one of rma, bw, "
                        "overlap, coll, queued, kcoll\n", group);
        return 2;
    }
    size_t n = rma_bw ? max : CMP_COLL_MAX * npes;
    char *src = (char *)shmemx_malloc_device(n);
    char *dst = (char *)shmemx_malloc_device(n);
    char *hdst = !strcmp(group, "overlap")
                     ? (char *)shmem_malloc(CMP_OVL_BYTES) : NULL;
    if (!src || !dst || (!strcmp(group, "overlap") && !hdst)) {
        fprintf(stderr, "gpu_devbench: cannot allocate %zu bytes (set "
                        "SHMEM_DEVICE_HEAP_SIZE and SHMEM_SYMMETRIC_SIZE)\n",
                n);
        return 1;
    }
    CK(cudaMemset(src, 1, n));
    CK(cudaDeviceSynchronize());
    char what[128];
    int gpu = 0;
    CK(cudaGetDevice(&gpu));
    snprintf(what, sizeof(what), "%d PEs, GPU %d (%d SMs), group %s", npes,
             gpu, sms, group);
    cmp_note("dmashmem", me, what);
    double t0 = cmp_now_s();
    shmem_barrier_all();
    if (me == 0 && !strcmp(group, "rma"))
        cmp_rma(d, src, dst);
    if (me == 0 && !strcmp(group, "bw"))
        cmp_bw(d, src, dst, max);
    if (me == 0 && !strcmp(group, "overlap")) {
        cmp_overlap_rows("dmashmem", me, npes, "", CMP_OVL_BYTES,
                         overlap_put(d, src, dst, pe, CMP_OVL_BYTES, sms));
        cmp_overlap_rows("dmashmem", me, npes, "_to_host", CMP_OVL_BYTES,
                         overlap_put(d, src, hdst, pe, CMP_OVL_BYTES, sms));
    }
    if (!strcmp(group, "coll") || !strcmp(group, "queued"))
        cmp_coll(src, dst, !strcmp(group, "queued"));
    if (!strcmp(group, "kcoll"))
        cmp_kcoll(d, src, dst);
    shmem_barrier_all();
    snprintf(what, sizeof(what), "done in %.1f s", cmp_now_s() - t0);
    cmp_note("dmashmem", me, what);
    shmem_finalize(); /* the heaps go with it */
    return 0;
}

int main(int argc, char **argv)
{
    size_t max = 1ull << 30;
    int n = 0, sms = 0;
    const char *only = NULL; /* --only kreq: that phase alone */
    const char *nvcmp = NULL; /* --nvcmp GROUP: the NVSHMEM comparison */
    int peer = 0;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--peer"))
            peer = 1;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--peer")) {
            i--; /* no value */
            continue;
        }
        if (!strcmp(argv[i], "--label"))
            label = argv[i + 1];
        else if (!strcmp(argv[i], "--max"))
            max = strtoull(argv[i + 1], NULL, 0);
        else if (!strcmp(argv[i], "--only"))
            only = argv[i + 1];
        else if (!strcmp(argv[i], "--nvcmp"))
            nvcmp = argv[i + 1];
    }
    if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1) {
        printf("SKIP: gpu_devbench: no CUDA driver or GPU\n");
        return 77;
    }
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    if (nvcmp) {
        int dev = 0;
        CK(cudaGetDevice(&dev));
        CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
        return nvcmp_main(nvcmp, max, sms);
    }
    if (me == 0 && getenv("OUT")) {
        char path[4096];
        snprintf(path, sizeof(path), "%s/gpu_devbench-%s.csv", getenv("OUT"),
                 label);
        csv = fopen(path, "w");
        if (csv)
            fprintf(csv, "label,npes,test,variant,bytes,value,unit\n");
    }
    if (me == 0)
        printf("label,npes,test,variant,bytes,value,unit\n");
    int dev = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    shmemx_dev_t d;
    shmemx_dev_get(&d);
    char *dsrc = (char *)shmemx_malloc_device(max);
    char *ddst = (char *)shmemx_malloc_device(64);
    char *hdst = (char *)shmem_malloc(max);
    /* --peer: the target of the rows across GPUs (PE 1's copy). */
    char *pdst = peer ? (char *)shmemx_malloc_device(max) : NULL;
    if (!dsrc || !hdst || !ddst || (peer && !pdst)) {
        fprintf(stderr, "gpu_devbench: cannot allocate %zu bytes (set "
                        "SHMEM_DEVICE_HEAP_SIZE and SHMEM_SYMMETRIC_SIZE)\n",
                max);
        return 1;
    }
    CK(cudaMemset(dsrc, 1, max));
    memset(hdst, 0, max);
    shmem_barrier_all();
    if (!only)
        phase_lat(d, dsrc, hdst, ddst);
    if (!only || !strcmp(only, "idle"))
        phase_idle(d, dsrc, hdst);
    if (!only || !strcmp(only, "sweep"))
        phase_sweep(d, dsrc, hdst);
    shmem_barrier_all();
    /* Bandwidth and overlap on PE 0 only: the others would share the
     * engines and the PCIe link. */
    shmem_team_t rows, one = team_of_one(&rows); /* collective */
    if (peer && npes < 2) {
        fprintf(stderr, "gpu_devbench --peer needs 2 PEs\n");
        return 1;
    }
    if (me == 0 && !only && peer)
        phase_peer(d, dsrc, pdst, max, sms);
    if (me == 0 && (!only || !strcmp(only, "bw")) && !peer)
        bw_rows(d, dsrc, hdst, me, hdst, max, sms, "bw_dev_to_host");
    if (me == 0 && !only && !peer)
        overlap_rows(d, dsrc, hdst, me, hdst, max, sms, "overlap");
    if (me == 0 && (!only || !strcmp(only, "kreq")))
        phase_kreq(d, dsrc, hdst, one);
    shmem_barrier_all();
    if (peer && (!only || !strcmp(only, "kreq")))
        phase_kreq_world(d, dsrc, pdst);
    shmem_barrier_all();
    shmem_team_destroy(one);
    shmem_team_destroy(rows);
    if (csv)
        fclose(csv);
    shmem_finalize();
    return 0;
}
