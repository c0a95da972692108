/*
 * The NVSHMEM side of the GPU comparison (issue #31; bench/run-nvcmp.sh
 * builds and runs it next to gpu_devbench --nvcmp, docs/PERFORMANCE.md
 * "NVSHMEM on the same GPU"). Not part of the library's build: it needs
 * NVSHMEM (3.x) and nvcc -rdc:
 *
 *   nvcc -rdc=true -arch=sm_90 -O2 -I$NV/include -Ibench nvshmem_bench.cu \
 *        -L$NV/lib -l:libnvshmem_host.so.3 $NV/lib/libnvshmem_device.a \
 *        -Xlinker -rpath=$NV/lib
 *
 *   nvshmem_bench [-n NPES] [--only rma|bw|overlap|coll|queued|kcoll]
 *                 [--max BYTES] [--timeout S] [--gpus G]
 *
 * Starts itself without MPI: the process forks NPES children (PE r is
 * child r; the children die with it), PE 0 takes a unique id
 * (nvshmemx_get_uniqueid) and hands it to the others through pipes, every
 * PE calls nvshmemx_set_attr_uniqueid_args + nvshmemx_init_attr(
 * NVSHMEMX_INIT_WITH_UNIQUEID) on GPU 0 (CUDA_VISIBLE_DEVICES picks
 * another), or with --gpus G on GPU r % G (2 PEs on 2 GPUs: PE 0 -> PE 1
 * over NVLink). Run it with NVSHMEM_REMOTE_TRANSPORT=none,
 * NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME=lo and NVSHMEM_DISABLE_NVLS=1; several
 * PEs on one GPU need CUDA MPS for the collectives, with
 * CUDA_MPS_ACTIVE_THREAD_PERCENTAGE adding up to <= 100 over the PEs.
 *
 * PE 0 prints CSV rows lib,npes,row,bytes,value,unit (lib "nvshmem") on
 * stdout, the same rows as gpu_devbench --nvcmp (lib "dmashmem"); PE 0
 * sends to PE 1 (to itself with one PE), the other PEs wait (rma, bw,
 * overlap: on the host, with no kernel of theirs on the GPU):
 *   rma      put_quiet (putmem_nbi 8 B + quiet, one thread), p_quiet
 *            (uint64_p + quiet), put_quiet_idle_{1,10,100}ms (the same
 *            after that long without requests, 15 kernels); us, kernel
 *            clock, the mean of the middle 80 % of the samples (the
 *            timer ticks every 32 ns: cmp_trimmed_mean, gpu_cmp.cuh)
 *   bw       putmem_thread / putmem_warp / putmem_block (one thread, one
 *            warp, one CTA of 1024 threads; blocking put + quiet), 1 MiB
 *            .. max; GB/s (median), kernel clock
 *   overlap  putmem_block of 16 MiB repeated by one CTA until a compute
 *            kernel on every SM ends (bench/gpu_cmp.cuh): compute alone
 *            (ms), slowdown (%), bandwidth meanwhile (GB/s), cover (%)
 *   coll     fcollect_stream / alltoall_stream: nvshmemx_fcollectmem_
 *            on_stream / alltoallmem_on_stream + cudaStreamSynchronize,
 *            1 KiB .. 16 MiB per PE, PE 0's mean us per call
 *   queued   fcollect_queued / alltoall_queued: the same calls queued on
 *            the stream (1000 up to 64 KiB, fewer above), one sync; us
 *            per call
 *   kcoll    fcollect_kernel / alltoall_kernel: nvshmemx_fcollectmem_
 *            block / alltoallmem_block by one CTA (1024 threads) in a
 *            kernel on every PE (nvshmemx_collective_launch), 1 KiB and
 *            64 KiB; PE 0's us (trimmed mean), kernel clock; barrier_kernel:
 *            nvshmem_barrier_all from one thread per PE
 */
#include <cuda_runtime.h>
#include <nvshmem.h>
#include <nvshmemx.h>

#include "gpu_cmp.cuh"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

static const char *LIB = "nvshmem";
static int me, npes;

static void row(const char *name, size_t bytes, double v, const char *unit)
{
    cmp_row(LIB, me, npes, name, bytes, v, unit);
}

/* A barrier of the PEs on the host (shared memory the driver maps before
 * it forks): while PE 0 measures, the others wait here, with nothing on
 * the GPU (nvshmem_barrier_all would leave a kernel of theirs polling it,
 * which time-slices with PE 0's kernels when the PEs share a GPU without
 * MPS). As dmashmem's PEs wait in shmem_barrier_all, on the host. */
struct host_bar {
    int arrived, gen;
};
static host_bar *hbar;

static void host_barrier(void)
{
    int g = __atomic_load_n(&hbar->gen, __ATOMIC_ACQUIRE);
    if (__atomic_add_fetch(&hbar->arrived, 1, __ATOMIC_ACQ_REL) == npes) {
        __atomic_store_n(&hbar->arrived, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&hbar->gen, g + 1, __ATOMIC_RELEASE);
        return;
    }
    while (__atomic_load_n(&hbar->gen, __ATOMIC_ACQUIRE) == g)
        usleep(50);
}

/* ------------------------------------------------------------ rma */

/* One kernel per kind, as bench/gpu_devbench.cu's k_lat. */
template <int kind>
__global__ void k_lat(char *dst, const char *src, int pe, int iters,
                      unsigned long long *t)
{
    for (int i = 0; i < iters; i++) {
        unsigned long long t0 = cmp_clock();
        if (kind == 0)
            nvshmem_putmem_nbi(dst, src, 8, pe);
        else
            nvshmem_uint64_p((uint64_t *)dst, (uint64_t)i, pe);
        nvshmem_quiet();
        t[i] = cmp_clock() - t0;
    }
}

static double lat(int kind, char *dst, const char *src, int pe, int iters,
                  unsigned long long *t)
{
    if (kind == 0)
        k_lat<0><<<1, 1>>>(dst, src, pe, iters, t);
    else
        k_lat<1><<<1, 1>>>(dst, src, pe, iters, t);
    CMP_CK(cudaGetLastError());
    CMP_CK(cudaDeviceSynchronize());
    return cmp_lat_us(t, iters);
}

static void group_rma(void)
{
    const int iters = 2000, pe = (me + 1) % npes;
    char *src = (char *)nvshmem_malloc(4096), *dst = (char *)nvshmem_malloc(4096);
    unsigned long long *t;
    if (!src || !dst) {
        fprintf(stderr, "nvshmem_bench: nvshmem_malloc failed\n");
        _exit(1);
    }
    CMP_CK(cudaMalloc(&t, iters * sizeof(*t)));
    CMP_CK(cudaMemset(src, 1, 4096));
    CMP_CK(cudaDeviceSynchronize());
    nvshmem_barrier_all();
    host_barrier();
    if (me == 0) {
        row("put_quiet", 8, lat(0, dst, src, pe, iters, t), "us");
        row("p_quiet", 8, lat(1, dst, src, pe, iters, t), "us");
        for (long ms : cmp_idle_ms) {
            char name[64];
            snprintf(name, sizeof(name), "put_quiet_idle_%ldms", ms);
            row(name, 8,
                cmp_after_idle(ms, [&] { return lat(0, dst, src, pe, 1, t); }),
                "us");
        }
    }
    host_barrier();
    nvshmem_barrier_all();
    CMP_CK(cudaFree(t));
    nvshmem_free(dst);
    nvshmem_free(src);
}

/* ------------------------------------------------------------ bw */

enum { F_THREAD, F_WARP, F_BLOCK };

__global__ void k_bw(int form, char *dst, const char *src, size_t n, int pe,
                     unsigned long long *t)
{
    unsigned long long t0 = 0;
    __syncthreads();
    if (threadIdx.x == 0)
        t0 = cmp_clock();
    if (form == F_THREAD) {
        if (threadIdx.x == 0)
            nvshmem_putmem(dst, src, n, pe);
    } else if (form == F_WARP) {
        if (threadIdx.x < 32)
            nvshmemx_putmem_warp(dst, src, n, pe);
    } else {
        nvshmemx_putmem_block(dst, src, n, pe);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        nvshmem_quiet();
        *t = cmp_clock() - t0;
    }
}

static void group_bw(size_t max)
{
    const int pe = (me + 1) % npes;
    char *src = (char *)nvshmem_malloc(max), *dst = (char *)nvshmem_malloc(max);
    unsigned long long *t, ht;
    if (!src || !dst) {
        fprintf(stderr, "nvshmem_bench: nvshmem_malloc(%zu) failed (raise "
                        "NVSHMEM_SYMMETRIC_SIZE)\n", max);
        _exit(1);
    }
    CMP_CK(cudaMalloc(&t, sizeof(*t)));
    CMP_CK(cudaMemset(src, 1, max));
    CMP_CK(cudaDeviceSynchronize());
    nvshmem_barrier_all();
    host_barrier();
    if (me == 0) {
        static const char *const names[] = {"putmem_thread", "putmem_warp",
                                            "putmem_block"};
        static const int threads[] = {1, 32, 1024};
        for (int f = 0; f < 3; f++)
            for (size_t n = CMP_BW_MIN; n <= max; n *= 4) {
                /* one thread's putmem is slow (stores): fewer repetitions
                 * once they take long */
                int reps = n >= (64u << 20) ? 3 : 5;
                std::vector<double> v;
                double t0 = cmp_now_s();
                for (int r = 0; r < reps && (r == 0 || cmp_now_s() - t0 < 2); r++) {
                    k_bw<<<1, threads[f]>>>(f, dst, src, n, pe, t);
                    CMP_CK(cudaGetLastError());
                    CMP_CK(cudaDeviceSynchronize());
                    CMP_CK(cudaMemcpy(&ht, t, sizeof(ht), cudaMemcpyDefault));
                    v.push_back(ht ? n / (double)ht : 0); /* bytes/ns */
                }
                row(names[f], n, cmp_median(v), "GB/s");
            }
    }
    host_barrier();
    nvshmem_barrier_all();
    CMP_CK(cudaFree(t));
    nvshmem_free(dst);
    nvshmem_free(src);
}

/* ------------------------------------------------------------ overlap */

__global__ void k_put_block_repeat(char *dst, const char *src, size_t n,
                                   int pe, cmp_ovl *o)
{
    __shared__ int go;
    if (threadIdx.x == 0)
        cmp_ovl_begin(o);
    do {
        nvshmemx_putmem_block(dst, src, n, pe);
        __syncthreads();
        if (threadIdx.x == 0) {
            nvshmem_quiet();
            go = cmp_ovl_next(o, n);
        }
        __syncthreads();
    } while (go);
}

static void group_overlap(int sms)
{
    const int pe = (me + 1) % npes;
    const size_t n = CMP_OVL_BYTES;
    char *src = (char *)nvshmem_malloc(n), *dst = (char *)nvshmem_malloc(n);
    if (!src || !dst) {
        fprintf(stderr, "nvshmem_bench: nvshmem_malloc(%zu) failed\n", n);
        _exit(1);
    }
    CMP_CK(cudaMemset(src, 1, n));
    CMP_CK(cudaDeviceSynchronize());
    nvshmem_barrier_all();
    host_barrier();
    if (me == 0) {
        cmp_ovl_result r = cmp_overlap(sms, [&](cudaStream_t st, cmp_ovl *o) {
            k_put_block_repeat<<<1, 1024, 0, st>>>(dst, src, n, pe, o);
        });
        cmp_overlap_rows(LIB, me, npes, "", n, r);
    }
    host_barrier();
    nvshmem_barrier_all();
    nvshmem_free(dst);
    nvshmem_free(src);
}

/* ------------------------------------------------------------ coll */

static void coll_call(int a2a, char *dst, const char *src, size_t n,
                      cudaStream_t st)
{
    int rc = a2a ? nvshmemx_alltoallmem_on_stream(NVSHMEM_TEAM_WORLD, dst,
                                                  src, n, st)
                 : nvshmemx_fcollectmem_on_stream(NVSHMEM_TEAM_WORLD, dst,
                                                  src, n, st);
    if (rc) {
        fprintf(stderr, "nvshmem_bench: PE %d: nvshmemx_%smem_on_stream(%zu) "
                        "returned %d\n", me, a2a ? "alltoall" : "fcollect", n,
                rc);
        _exit(1);
    }
}

/* queued: k calls, then one synchronisation; else a sync per call. The
 * median of CMP_COLL_REPS timings after 5 warm-up calls (gpu_cmp.cuh). */
static void group_coll(int queued)
{
    const size_t max = CMP_COLL_MAX;
    char *src = (char *)nvshmem_malloc(max * npes),
         *dst = (char *)nvshmem_malloc(max * npes);
    cudaStream_t st;
    if (!src || !dst) {
        fprintf(stderr, "nvshmem_bench: nvshmem_malloc(%zu) failed\n",
                max * npes);
        _exit(1);
    }
    CMP_CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    CMP_CK(cudaMemset(src, 1, max * npes));
    CMP_CK(cudaDeviceSynchronize());
    for (int a2a = 0; a2a < 2; a2a++)
        for (size_t n = CMP_COLL_MIN; n <= max; n *= 4) {
            int k = queued ? cmp_queued_calls(n) : cmp_coll_iters(n);
            std::vector<double> reps;
            for (int w = 0; w < 5; w++)
                coll_call(a2a, dst, src, n, st);
            CMP_CK(cudaStreamSynchronize(st));
            for (int r = 0; r < CMP_COLL_REPS; r++) {
                nvshmem_barrier_all();
                double t0 = cmp_now_s();
                for (int i = 0; i < k; i++) {
                    coll_call(a2a, dst, src, n, st);
                    if (!queued)
                        CMP_CK(cudaStreamSynchronize(st));
                }
                CMP_CK(cudaStreamSynchronize(st));
                reps.push_back((cmp_now_s() - t0) * 1e6 / k);
            }
            double us = cmp_median(reps);
            char name[64];
            snprintf(name, sizeof(name), "%s_%s", a2a ? "alltoall" : "fcollect",
                     queued ? "queued" : "stream");
            row(name, n, us, "us");
        }
    nvshmem_barrier_all();
    CMP_CK(cudaStreamDestroy(st));
    nvshmem_free(dst);
    nvshmem_free(src);
}

/* ------------------------------------------------------------ kcoll */

__global__ void k_kcoll(int a2a, char *dst, const char *src, size_t n,
                        int iters, unsigned long long *t)
{
    for (int i = 0; i < iters; i++) {
        unsigned long long t0 = 0;
        __syncthreads();
        if (threadIdx.x == 0)
            t0 = cmp_clock();
        if (a2a)
            nvshmemx_alltoallmem_block(NVSHMEM_TEAM_WORLD, dst, src, n);
        else
            nvshmemx_fcollectmem_block(NVSHMEM_TEAM_WORLD, dst, src, n);
        if (threadIdx.x == 0)
            t[i] = cmp_clock() - t0;
    }
}

/* nvshmem_barrier_all from one thread per PE (the thread form). */
__global__ void k_barrier(int iters, unsigned long long *t)
{
    for (int i = 0; i < iters; i++) {
        unsigned long long t0 = cmp_clock();
        nvshmem_barrier_all();
        t[i] = cmp_clock() - t0;
    }
}

/* Kernel fn on one CTA of nthr threads, started with
 * nvshmemx_collective_launch on every PE at once (after a barrier), and
 * waited for. */
static void kcoll_launch(const void *fn, int nthr, void **args,
                         cudaStream_t st)
{
    nvshmem_barrier_all();
    int rc = nvshmemx_collective_launch(fn, dim3(1), dim3(nthr), args, 0, st);
    if (rc) {
        fprintf(stderr, "nvshmem_bench: PE %d: nvshmemx_collective_"
                        "launch returned %d\n", me, rc);
        _exit(1);
    }
    CMP_CK(cudaStreamSynchronize(st));
}

static void group_kcoll(void)
{
    const size_t max = 64u << 10;
    const int iters = 1000;
    char *src = (char *)nvshmem_malloc(max * npes),
         *dst = (char *)nvshmem_malloc(max * npes);
    unsigned long long *t;
    cudaStream_t st;
    if (!src || !dst) {
        fprintf(stderr, "nvshmem_bench: nvshmem_malloc failed\n");
        _exit(1);
    }
    CMP_CK(cudaMalloc(&t, iters * sizeof(*t)));
    CMP_CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    CMP_CK(cudaMemset(src, 1, max * npes));
    CMP_CK(cudaDeviceSynchronize());
    for (int a2a = 0; a2a < 2; a2a++)
        for (size_t n = 1024; n <= max; n *= 64) {
            int it = iters;
            void *args[] = {&a2a, &dst, &src, &n, &it, &t};
            /* One CTA of as many threads as the kernel can have (up to
             * 1024): a collective launch needs it resident. */
            cudaFuncAttributes fa;
            CMP_CK(cudaFuncGetAttributes(&fa, k_kcoll));
            int nthr = fa.maxThreadsPerBlock < 1024 ? fa.maxThreadsPerBlock
                                                    : 1024;
            kcoll_launch((const void *)k_kcoll, nthr, args, st);
            row(a2a ? "alltoall_kernel" : "fcollect_kernel", n,
                cmp_lat_us(t, iters), "us");
        }
    {
        int it = iters;
        void *args[] = {&it, &t};
        kcoll_launch((const void *)k_barrier, 1, args, st);
        row("barrier_kernel", 0, cmp_lat_us(t, iters), "us");
    }
    nvshmem_barrier_all();
    CMP_CK(cudaStreamDestroy(st));
    CMP_CK(cudaFree(t));
    nvshmem_free(dst);
    nvshmem_free(src);
}

/* ------------------------------------------------------------ PEs */

static int pe_main(int rank, int n, int idfd, const int *outfds,
                   const char *only, size_t max, int gpus)
{
    nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
    nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
    CMP_CK(cudaSetDevice(rank % gpus));
    if (rank == 0) {
        if (nvshmemx_get_uniqueid(&id)) {
            fprintf(stderr, "nvshmem_bench: nvshmemx_get_uniqueid failed\n");
            return 1;
        }
        for (int r = 1; r < n; r++)
            if (write(outfds[r], &id, sizeof(id)) != (ssize_t)sizeof(id)) {
                fprintf(stderr, "nvshmem_bench: cannot pass the id to PE %d\n",
                        r);
                return 1;
            }
    } else {
        size_t got = 0;
        while (got < sizeof(id)) {
            ssize_t k = read(idfd, (char *)&id + got, sizeof(id) - got);
            if (k < 0 && errno == EINTR)
                continue;
            if (k <= 0) {
                fprintf(stderr, "nvshmem_bench: PE %d: no unique id from PE 0\n",
                        rank);
                return 1;
            }
            got += (size_t)k;
        }
    }
    if (nvshmemx_set_attr_uniqueid_args(rank, n, &id, &attr)) {
        fprintf(stderr, "nvshmem_bench: nvshmemx_set_attr_uniqueid_args failed\n");
        return 1;
    }
    /* exits the process with a message on failure */
    nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr);
    me = nvshmem_my_pe();
    npes = nvshmem_n_pes();
    int dev = 0, sms = 0;
    CMP_CK(cudaGetDevice(&dev));
    CMP_CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    char what[128];
    snprintf(what, sizeof(what), "%d PEs, GPU %d (%d SMs), group %s", npes, dev,
             sms, only ? only : "all");
    cmp_note(LIB, me, what);
    double t0 = cmp_now_s();
#define GROUP(NAME, CALL)                                                      \
    if (!only || !strcmp(only, NAME)) {                                        \
        cmp_note(LIB, me, "group " NAME);                                      \
        CALL;                                                                  \
    }
    GROUP("rma", group_rma())
    GROUP("kcoll", group_kcoll())
    GROUP("coll", group_coll(0))
    GROUP("queued", group_coll(1))
    GROUP("overlap", group_overlap(sms))
    GROUP("bw", group_bw(max))
#undef GROUP
    snprintf(what, sizeof(what), "done in %.1f s", cmp_now_s() - t0);
    cmp_note(LIB, me, what);
    nvshmem_finalize();
    return 0;
}

static pid_t *kids;
static int nkids;

static void kill_kids(void)
{
    for (int i = 0; i < nkids; i++)
        if (kids[i] > 0)
            kill(kids[i], SIGKILL);
}

static void on_signal(int sig)
{
    kill_kids();
    signal(sig, SIG_DFL);
    raise(sig);
}

int main(int argc, char **argv)
{
    int n = 1, timeout_s = 0, gpus = 1, ndev = 0;
    const char *only = NULL;
    size_t max = 256u << 20;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-n"))
            n = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--only"))
            only = argv[i + 1];
        else if (!strcmp(argv[i], "--max"))
            max = strtoull(argv[i + 1], NULL, 0);
        else if (!strcmp(argv[i], "--timeout"))
            timeout_s = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--gpus"))
            gpus = atoi(argv[i + 1]);
        else {
            fprintf(stderr, "nvshmem_bench: unknown argument %s\n", argv[i]);
            return 2;
        }
    }
    if (n < 1 || n > 64 || max < CMP_BW_MIN) {
        fprintf(stderr, "nvshmem_bench: bad -n %d or --max %zu\n", n, max);
        return 2;
    }
    /* Counted in a child: the parent must not make a CUDA context before
     * it forks. */
    if (gpus != 1) {
        int p[2];
        pid_t c;
        if (pipe(p) || (c = fork()) < 0) {
            perror("nvshmem_bench: counting GPUs");
            return 1;
        }
        if (c == 0) {
            int k = 0;
            if (cudaGetDeviceCount(&k) != cudaSuccess)
                k = 0;
            _exit(write(p[1], &k, sizeof(k)) == (ssize_t)sizeof(k) ? 0 : 1);
        }
        close(p[1]);
        if (read(p[0], &ndev, sizeof(ndev)) != (ssize_t)sizeof(ndev))
            ndev = 0;
        close(p[0]);
        waitpid(c, NULL, 0);
        if (gpus < 1 || gpus > ndev) {
            fprintf(stderr, "nvshmem_bench: --gpus %d, but %d GPU%s here\n",
                    gpus, ndev, ndev == 1 ? "" : "s");
            return 2;
        }
    }
    /* pipes[r]: PE 0 -> PE r (the unique id) */
    std::vector<int> rd(n, -1), wr(n, -1);
    for (int r = 1; r < n; r++) {
        int p[2];
        if (pipe(p)) {
            perror("nvshmem_bench: pipe");
            return 1;
        }
        rd[r] = p[0];
        wr[r] = p[1];
    }
    hbar = (host_bar *)mmap(NULL, sizeof(*hbar), PROT_READ | PROT_WRITE,
                            MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (hbar == MAP_FAILED) {
        perror("nvshmem_bench: mmap");
        return 1;
    }
    memset(hbar, 0, sizeof(*hbar));
    kids = (pid_t *)calloc(n, sizeof(*kids));
    nkids = n;
    pid_t parent = getpid();
    fflush(stdout);
    for (int r = 0; r < n; r++) {
        pid_t pid = fork();
        if (pid < 0) {
            perror("nvshmem_bench: fork");
            kill_kids();
            return 1;
        }
        if (pid == 0) {
            /* A PE dies with the driver (timeout, kill). */
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (getppid() != parent)
                _exit(1);
            for (int q = 1; q < n; q++) {
                if (q != r)
                    close(rd[q]);
                if (r != 0)
                    close(wr[q]);
            }
            int rc = pe_main(r, n, r ? rd[r] : -1, wr.data(), only, max,
                             gpus);
            fflush(stdout);
            fflush(stderr);
            _exit(rc);
        }
        kids[r] = pid;
    }
    for (int r = 1; r < n; r++) {
        close(rd[r]);
        close(wr[r]);
    }
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    /* Wait for every PE; the first failure ends the others. */
    int rc = 0, left = n;
    double t0 = cmp_now_s();
    while (left > 0) {
        int ws;
        pid_t p = waitpid(-1, &ws, WNOHANG);
        if (p > 0) {
            int r = 0;
            while (r < n && kids[r] != p)
                r++;
            if (r < n)
                kids[r] = 0;
            left--;
            int code = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
            if (code && !rc) {
                fprintf(stderr, "nvshmem_bench: PE %d ended with status %d: "
                                "stopping the others\n", r, code);
                rc = code;
                kill_kids();
            }
            continue;
        }
        if (p < 0 && errno != EINTR)
            break;
        if (timeout_s > 0 && cmp_now_s() - t0 > timeout_s && !rc) {
            fprintf(stderr, "nvshmem_bench: no end after %d s: killing the "
                            "PEs\n", timeout_s);
            rc = 124;
            kill_kids();
        }
        usleep(20000);
    }
    return rc;
}
