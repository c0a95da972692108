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
 *           system fence); median us, kernel clock
 *   idle    put 8 B + quiet through the engines, warm and after 1, 10 and
 *           100 ms without requests (the proxy's wake-up); median us
 *   bw      one thread's putmem (engines), cudaMemcpyAsync, and a
 *           store-copy kernel (int4 grid-stride, 1024 threads per CTA)
 *           with 1 CTA and with every SM, 64 KiB .. 1 GiB; GB/s (median)
 *   overlap a compute kernel (FMA on every SM) alone, while 1 GiB moves by
 *           the device API, while the store-copy kernel moves it; slowdown
 *           in percent
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
 *   gpu_devbench [--label L] [--max BYTES] [--only kreq|sweep|idle|bw]
 *                [--peer]
 *                (--only: that phase alone)
 */
#include <cuda_runtime.h>
#include <shmem.h>
#include <shmemx.h>
#include <shmemx_cuda.h>

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

__device__ static inline unsigned long long gclock(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

/* ------------------------------------------------------------ latency */

enum { L_PUT, L_P };

/* iters round trips; each one's time (ns) into t[i]. */
__global__ void k_lat(shmemx_dev_t d, int kind, char *dst, const char *src,
                      int pe, int iters, unsigned long long *t, size_t n)
{
    for (int i = 0; i < iters; i++) {
        unsigned long long t0 = gclock();
        if (kind == L_PUT)
            shmemx_dev_putmem_nbi(d, dst, src, n, pe);
        else
            shmemx_dev_uint64_p(d, (uint64_t *)dst, (uint64_t)i, pe);
        shmemx_dev_quiet(d);
        t[i] = gclock() - t0;
    }
}

static double lat(shmemx_dev_t d, int kind, char *dst, const char *src,
                  int pe, int iters, unsigned long long *t, size_t n = 8)
{
    std::vector<unsigned long long> h(iters);
    std::vector<double> v;
    k_lat<<<1, 1>>>(d, kind, dst, src, pe, iters, t, n);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(h.data(), t, iters * sizeof(*t), cudaMemcpyDefault));
    for (int i = iters / 10; i < iters; i++) /* first tenth: warm-up */
        v.push_back(h[i] / 1e3);
    return median(v);
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
 * next to the warm figure of the same kernel (median of 15; the kernel's
 * own clock, launch not included). What it measures is the proxy's
 * wake-up: it spins SHMEM_DEV_PROXY_SPIN_US, then sleeps until a kernel's
 * reservation wakes it. */
static void phase_idle(shmemx_dev_t d, char *dsrc, char *hdst)
{
    const int pe = (me + 1) % npes, iters = 2000;
    const long idle_ms[] = {1, 10, 100};
    unsigned long long *t;
    shmemx_dev_t de = d;
    de.store_max = 0;
    CK(cudaMalloc(&t, iters * sizeof(*t)));
    row("dev_put_quiet_idle", "engines,warm", 8,
        lat(de, L_PUT, hdst, dsrc, pe, iters, t), "us");
    for (size_t k = 0; k < sizeof(idle_ms) / sizeof(*idle_ms); k++) {
        std::vector<double> w;
        char v[64];
        for (int i = 0; i < 15; i++) {
            struct timespec ts = {0, idle_ms[k] * 1000 * 1000};
            nanosleep(&ts, NULL);
            /* lat() drops nothing for one iteration: iters / 10 = 0 */
            w.push_back(lat(de, L_PUT, hdst, dsrc, pe, 1, t));
        }
        snprintf(v, sizeof(v), "engines,after %ld ms idle", idle_ms[k]);
        row("dev_put_quiet_idle", v, 8, median(w), "us");
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

__global__ void k_fma(float *out, int iters)
{
    float a = threadIdx.x * 1e-3f, b = 1.0001f, c = 0.9999f;
    for (int i = 0; i < iters; i++) {
        a = fmaf(a, b, c);
        b = fmaf(b, c, a * 1e-7f);
    }
    if (a == 12345.f)
        out[0] = a + b;
}

static void overlap_rows(shmemx_dev_t d, char *dsrc, char *dst, int pe,
                         char *loc, size_t n, int sms, const char *test)
{
    cudaStream_t sc, sm;
    cudaEvent_t e0, e1;
    float *out;
    unsigned long long *t;
    const int iters = 400000;
    std::vector<double> alone, with_dev, with_st;
    CK(cudaMalloc(&out, 4));
    CK(cudaMalloc(&t, 8));
    CK(cudaStreamCreateWithFlags(&sc, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&sm, cudaStreamNonBlocking));
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (int r = 0; r < 5; r++) {
        CK(cudaEventRecord(e0, sc));
        k_fma<<<sms * 4, 256, 0, sc>>>(out, iters);
        CK(cudaEventRecord(e1, sc));
        CK(cudaDeviceSynchronize());
        alone.push_back(ev_time(e0, e1));

        k_put_timed<<<1, 1, 0, sm>>>(d, dst, dsrc, n, pe, t);
        CK(cudaEventRecord(e0, sc));
        k_fma<<<sms * 4, 256, 0, sc>>>(out, iters);
        CK(cudaEventRecord(e1, sc));
        CK(cudaDeviceSynchronize());
        with_dev.push_back(ev_time(e0, e1));

        k_copy<<<sms, 1024, 0, sm>>>((int4 *)loc, (const int4 *)dsrc,
                                     n / 16);
        CK(cudaEventRecord(e0, sc));
        k_fma<<<sms * 4, 256, 0, sc>>>(out, iters);
        CK(cudaEventRecord(e1, sc));
        CK(cudaDeviceSynchronize());
        with_st.push_back(ev_time(e0, e1));
    }
    double a = median(alone);
    row(test, "compute alone", 0, a * 1e3, "ms");
    row(test, "slowdown, dev_putmem 1 thread", n,
        (median(with_dev) / a - 1) * 100, "%");
    row(test, "slowdown, store copy all SMs", n,
        (median(with_st) / a - 1) * 100, "%");
    CK(cudaStreamDestroy(sc));
    CK(cudaStreamDestroy(sm));
    CK(cudaFree(out));
    CK(cudaFree(t));
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

int main(int argc, char **argv)
{
    size_t max = 1ull << 30;
    int n = 0, sms = 0;
    const char *only = NULL; /* --only kreq: that phase alone */
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
    }
    if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1) {
        printf("SKIP: gpu_devbench: no CUDA driver or GPU\n");
        return 77;
    }
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
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
