/*
 * What bench/gpu_devbench.cu (dmashmem) and bench/nvshmem_bench.cu
 * (NVSHMEM) share for the side-by-side comparison of issue #31
 * (bench/run-nvcmp.sh, docs/PERFORMANCE.md "NVSHMEM on the same GPU"):
 * the clock, the CSV row, and the overlap harness. Header-only CUDA, no
 * library of either side: each benchmark includes it once.
 *
 * CSV rows: lib,npes,row,bytes,value,unit (PE 0 prints them on stdout).
 *
 * Overlap: a compute kernel (FMA on every SM, calibrated to run about
 * CMP_OVL_TARGET_MS alone) runs while a transfer kernel of the library
 * repeats its transfer of n bytes until the compute kernel's last block
 * says it ended (cmp_ovl.stop), so the transfer spans the whole compute.
 * Reported: the compute time alone, the slowdown with the transfer, the
 * bandwidth the transfer reached meanwhile (bytes moved over the
 * transfer kernel's own time) and how much of the compute the transfer
 * covered (percent of the compute kernel's span inside the transfer's).
 */
#ifndef BENCH_GPU_CMP_CUH
#define BENCH_GPU_CMP_CUH

#include <cuda_runtime.h>

#include <algorithm>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <vector>

#define CMP_CK(call)                                                           \
    do {                                                                       \
        cudaError_t e_ = (call);                                               \
        if (e_ != cudaSuccess) {                                               \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,      \
                    cudaGetErrorString(e_));                                   \
            _exit(1);                                                          \
        }                                                                      \
    } while (0)

__device__ static inline unsigned long long cmp_clock(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

static inline double cmp_median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

/* The latency rows' statistic: the mean of the middle 80 % of the samples.
 * Not the median: the GPU's timer (globaltimer) ticks every 32 ns on the
 * H100 and H200, so a median of one-operation samples can only land on a
 * multiple of 32 ns, and a difference of less than one tick between two
 * rows reads as 0 or as 32 ns (p + quiet 0.896 against 0.864). Where the
 * operation's start falls within a tick varies from sample to sample, so
 * the mean of the samples resolves what one sample cannot; the tails
 * (interrupts, a preemption) are left out as a median would. */
static inline double cmp_trimmed_mean(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    const size_t cut = v.size() / 10, n = v.size() - 2 * cut;
    double sum = 0;
    for (size_t i = cut; i < cut + n; i++)
        sum += v[i];
    return n ? sum / (double)n : 0;
}

/* The "after idle" rows (both libraries): their idle times, and one row's
 * value: lat() (a one-iteration kernel's time, us) run 15 times, each
 * after sleeping ms; their trimmed mean. */
static const long cmp_idle_ms[3] = {1, 10, 100};

template <typename L>
static double cmp_after_idle(long ms, L lat)
{
    std::vector<double> w;
    for (int i = 0; i < 15; i++) {
        struct timespec ts = {0, ms * 1000 * 1000};
        nanosleep(&ts, NULL);
        w.push_back(lat());
    }
    return cmp_trimmed_mean(w);
}

/* A latency kernel's iters per-iteration times (ns, in device memory
 * at t): their trimmed mean in us, the first tenth left out as warm-up. */
static inline double cmp_lat_us(const unsigned long long *t, int iters)
{
    std::vector<unsigned long long> h(iters);
    std::vector<double> v;
    CMP_CK(cudaMemcpy(h.data(), t, iters * sizeof(*t), cudaMemcpyDefault));
    for (int i = iters / 10; i < iters; i++)
        v.push_back(h[i] / 1e3);
    return cmp_trimmed_mean(v);
}

static inline double cmp_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* One CSV row, PE 0 only. */
static inline void cmp_row(const char *lib, int me, int npes, const char *row,
                           size_t bytes, double value, const char *unit)
{
    if (me)
        return;
    printf("%s,%d,%s,%zu,%.3f,%s\n", lib, npes, row, bytes, value, unit);
    fflush(stdout);
}

/* Progress on stderr (PE 0): the device scripts keep it in their logs. */
static inline void cmp_note(const char *lib, int me, const char *what)
{
    if (!me)
        fprintf(stderr, "# %s: %s\n", lib, what);
}

/* ------------------------------------------------------------ overlap */

/* The transfer gives up after this long even if no stop came (it never
 * should: the compute kernel always ends). */
#define CMP_OVL_CAP_NS 3000000000ull
#define CMP_OVL_TARGET_MS 20.0

struct cmp_ovl {
    unsigned long long t0, t1; /* transfer: first start, last end (ns) */
    unsigned long long bytes;  /* transfer: bytes moved */
    unsigned long long c0, c1; /* compute: first block start, last end */
    unsigned left;             /* compute blocks still running */
    int stop;                  /* set by the compute kernel's last block */
};

__global__ void cmp_k_compute(float *out, int iters, cmp_ovl *o)
{
    if (o && threadIdx.x == 0)
        atomicCAS(&o->c0, 0ull, cmp_clock());
    float a = threadIdx.x * 1e-3f, b = 1.0001f, c = 0.9999f;
    for (int i = 0; i < iters; i++) {
        a = fmaf(a, b, c);
        b = fmaf(b, c, a * 1e-7f);
    }
    if (a == 12345.f)
        out[0] = a + b;
    if (!o)
        return;
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        if (atomicSub(&o->left, 1u) == 1u) {
            o->c1 = cmp_clock();
            __threadfence();
            atomicExch(&o->stop, 1);
        }
    }
}

/* The transfer kernel's side, called by one thread: before the first
 * transfer, and after each one with the bytes it moved (returns whether
 * to go on). */
__device__ static inline void cmp_ovl_begin(cmp_ovl *o)
{
    atomicCAS(&o->t0, 0ull, cmp_clock());
}

__device__ static inline int cmp_ovl_next(cmp_ovl *o, unsigned long long n)
{
    atomicAdd(&o->bytes, n);
    unsigned long long t = cmp_clock();
    atomicMax(&o->t1, t);
    return !*(volatile int *)&o->stop &&
           t - *(volatile unsigned long long *)&o->t0 < CMP_OVL_CAP_NS;
}

/* A store copy of n bytes by every CTA of the grid (int4, grid-stride),
 * repeated until the compute ends: the SM-bound reference. */
__global__ void cmp_k_copy_repeat(int4 *dst, const int4 *src, size_t n16,
                                  cmp_ovl *o)
{
    __shared__ int go;
    size_t first = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    size_t step = (size_t)gridDim.x * blockDim.x;
    if (threadIdx.x == 0)
        cmp_ovl_begin(o);
    do {
        for (size_t i = first; i < n16; i += step)
            dst[i] = src[i];
        __syncthreads();
        if (threadIdx.x == 0) {
            /* this block's share of the n bytes */
            size_t lo = blockIdx.x * (size_t)blockDim.x, mine = 0;
            for (size_t b = lo; b < n16; b += step)
                mine += n16 - b < blockDim.x ? n16 - b : blockDim.x;
            go = cmp_ovl_next(o, mine * 16);
        }
        __syncthreads();
    } while (go);
}

struct cmp_ovl_result {
    double alone_ms, with_ms, slowdown_pct, gbps, cover_pct;
};

/* launch(stream, o): starts the library's transfer kernel on stream. */
template <typename L>
static cmp_ovl_result cmp_overlap(int sms, L launch)
{
    cudaStream_t sc, st;
    cudaEvent_t e0, e1;
    float *out;
    cmp_ovl *o, h;
    const int grid = sms * 4, threads = 256;
    std::vector<double> alone, with, gbps, cover;
    CMP_CK(cudaMalloc(&out, 4));
    CMP_CK(cudaMalloc(&o, sizeof(*o)));
    CMP_CK(cudaStreamCreateWithFlags(&sc, cudaStreamNonBlocking));
    CMP_CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    CMP_CK(cudaEventCreate(&e0));
    CMP_CK(cudaEventCreate(&e1));
    auto compute = [&](int iters, cmp_ovl *oo) {
        float ms = 0;
        CMP_CK(cudaEventRecord(e0, sc));
        cmp_k_compute<<<grid, threads, 0, sc>>>(out, iters, oo);
        CMP_CK(cudaEventRecord(e1, sc));
        CMP_CK(cudaGetLastError());
        /* Not cudaDeviceSynchronize: a library may keep work of its own
         * queued on other streams (instances posted ahead). */
        CMP_CK(cudaStreamSynchronize(sc));
        CMP_CK(cudaEventElapsedTime(&ms, e0, e1));
        return (double)ms;
    };
    /* Calibrate: about CMP_OVL_TARGET_MS alone. */
    int iters = 50000;
    compute(iters, NULL);
    double t = compute(iters, NULL);
    if (t > 0.01)
        iters = (int)std::min(2e8, std::max(1e3, iters * CMP_OVL_TARGET_MS / t));
    for (int r = 0; r < 5; r++) {
        alone.push_back(compute(iters, NULL));
        memset(&h, 0, sizeof(h));
        h.left = grid;
        CMP_CK(cudaMemcpy(o, &h, sizeof(h), cudaMemcpyHostToDevice));
        launch(st, o); /* the transfer first: it must span the compute */
        CMP_CK(cudaGetLastError());
        with.push_back(compute(iters, o));
        CMP_CK(cudaStreamSynchronize(st));
        CMP_CK(cudaMemcpy(&h, o, sizeof(h), cudaMemcpyDeviceToHost));
        double span = h.t1 > h.t0 ? (double)(h.t1 - h.t0) : 0;
        gbps.push_back(span > 0 ? h.bytes / span : 0); /* bytes/ns = GB/s */
        double cs = h.c1 > h.c0 ? (double)(h.c1 - h.c0) : 0;
        double lo = std::max(h.t0, h.c0), hi = std::min(h.t1, h.c1);
        cover.push_back(cs > 0 && hi > lo ? 100.0 * (hi - lo) / cs : 0);
    }
    cmp_ovl_result res;
    res.alone_ms = cmp_median(alone);
    res.with_ms = cmp_median(with);
    res.slowdown_pct = (res.with_ms / res.alone_ms - 1) * 100;
    res.gbps = cmp_median(gbps);
    res.cover_pct = cmp_median(cover);
    CMP_CK(cudaStreamDestroy(sc));
    CMP_CK(cudaStreamDestroy(st));
    CMP_CK(cudaEventDestroy(e0));
    CMP_CK(cudaEventDestroy(e1));
    CMP_CK(cudaFree(out));
    CMP_CK(cudaFree(o));
    return res;
}

/* The four overlap rows of one transfer (suffix: "" or "_to_host", ...). */
static inline void cmp_overlap_rows(const char *lib, int me, int npes,
                                    const char *suffix, size_t n,
                                    const cmp_ovl_result &r)
{
    char name[96];
    snprintf(name, sizeof(name), "overlap_compute_alone%s", suffix);
    cmp_row(lib, me, npes, name, 0, r.alone_ms, "ms");
    snprintf(name, sizeof(name), "overlap_slowdown%s", suffix);
    cmp_row(lib, me, npes, name, n, r.slowdown_pct, "%");
    snprintf(name, sizeof(name), "overlap_bw%s", suffix);
    cmp_row(lib, me, npes, name, n, r.gbps, "GB/s");
    snprintf(name, sizeof(name), "overlap_cover%s", suffix);
    cmp_row(lib, me, npes, name, n, r.cover_pct, "%");
}

/* Sizes and repetitions shared by both sides. */
#define CMP_BW_MIN (1ull << 20)
#define CMP_COLL_MIN 1024ull
#define CMP_COLL_MAX (16ull << 20)
#define CMP_OVL_BYTES (16ull << 20)

static inline int cmp_coll_iters(size_t n)
{
    return n <= (64u << 10) ? 300 : n <= (1u << 20) ? 100 : 20;
}

/* Calls queued on the stream before one synchronisation. */
static inline int cmp_queued_calls(size_t n)
{
    return n <= (64u << 10) ? 1000 : n <= (1u << 20) ? 200 : 40;
}

/* Timed repetitions of a host-called collective row (each k calls, after
 * a barrier): the row is their median, so that one disturbed repetition
 * (a PE descheduled for milliseconds while it queues: one H100 run gave
 * 13.9 us per call against 6.9-7.0 in the runs around it) does not make
 * the row. */
#define CMP_COLL_REPS 5

#endif /* BENCH_GPU_CMP_CUH */
