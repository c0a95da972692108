/*
 * The device API with many warps of several PEs sharing one GPU (issue
 * #26): the program a user wrote that hung with 2 and 4 PEs on one H200.
 *
 * Every PE runs a kernel of 24 blocks x 128 threads. Lane 0 of every warp
 * puts (putmem_nbi) 96 chunks to the next PE, three times over, with sizes
 * cycling through {1, 7, 255, 256, 257, 1023, 4097, 19999} (both sides of
 * the store threshold) at misaligned offsets (chunk c at c * 20480 + c % 5
 * of the warp's region). Then __syncthreads, and thread 0 of each block
 * calls quiet, putmem_signal_nbi(dest, src, 0, sig, 1, SIGNAL_ADD, PE 0)
 * and quiet again. PE 0 then runs a one-thread kernel that waits with
 * signal_wait_until(sig, GE, 24 * npes). Every PE checks every byte of its
 * destination (the chunks hold the previous PE's data, everything between
 * them is untouched) and PE 0 that sig is exactly 24 * npes. ROUNDS rounds
 * with new data, destination and signal word in the device heap (D) or
 * the host heap (H): round 0 D/D, 1 H/H, 2 D/H, 3 H/D, then again.
 *
 * The host waits for each kernel with cudaStreamQuery and a deadline
 * (DEV_RACE_TIMEOUT seconds, default 60) so that a hang ends with a line
 * naming the PE, the round and the FIFO's state instead of the launcher's
 * timeout; the library's own watch (SHMEM_DEV_STALL_TIMEOUT) normally says
 * so first.
 *
 *   dev_race [ROUNDS] [overlap]   (default 4 rounds)
 *                       overlap: every warp puts the same 96 chunks (one
 *                       region, the same bytes from the same sources) and
 *                       the host thread puts and quiets too while the
 *                       kernels run; the kernels are waited for with
 *                       cudaDeviceSynchronize (the reporter's program)
 *   dev_race stall      a thread reserves a FIFO ticket and never writes it
 *                       while another puts and quiets behind it: the job
 *                       must end with the library's stall line (run by
 *                       run-devapi.sh with SHMEM_DEV_STALL_TIMEOUT=2)
 *
 * Built with nvcc without -rdc (run-devapi.sh); exits 77 without a GPU.
 */
#include <cuda_runtime.h>
#include <shmem.h>
#include <shmemx.h>
#include <shmemx_cuda.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CK(call)                                                               \
    do {                                                                       \
        cudaError_t e_ = (call);                                               \
        if (e_ != cudaSuccess) {                                               \
            fprintf(stderr, "FAIL: PE %d: %s:%d: %s: %s\n", me, __FILE__,      \
                    __LINE__, #call, cudaGetErrorString(e_));                  \
            fflush(stderr);                                                    \
            _exit(1);                                                          \
        }                                                                      \
    } while (0)

#define BLOCKS 24
#define THREADS 128
#define WARPS (BLOCKS * THREADS / 32)
#define CHUNKS 96
#define REPS 3
#define STRIDE 20480
#define REGION ((size_t)CHUNKS * STRIDE)
#define BYTES (REGION * WARPS)

__constant__ unsigned sizes_d[8] = {1, 7, 255, 256, 257, 1023, 4097, 19999};
static const unsigned sizes_h[8] = {1, 7, 255, 256, 257, 1023, 4097, 19999};

static int me, npes;

__host__ __device__ static inline unsigned char pat(int pe, size_t i, int r)
{
    return (unsigned char)(pe * 29 + i * 7 + (i >> 11) + r * 53 + 1);
}

__global__ void k_fill(unsigned char *p, size_t n, int pe, int r)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        p[i] = pat(pe, i, r);
}

__global__ void k_race(shmemx_dev_t d, char *dst, const char *src,
                       uint64_t *sig, int overlap)
{
    const int next = (d.me + 1) % d.npes;
    const unsigned tid = threadIdx.x + blockIdx.x * blockDim.x;
    if ((threadIdx.x & 31) == 0) {
        const size_t base = overlap ? 0 : (size_t)(tid / 32) * REGION;
        for (int r = 0; r < REPS; r++)
            for (int c = 0; c < CHUNKS; c++) {
                size_t off = base + (size_t)c * STRIDE + c % 5;
                shmemx_dev_putmem_nbi(d, dst + off, src + off, sizes_d[c % 8],
                                      next);
            }
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        shmemx_dev_quiet(d);
        shmemx_dev_putmem_signal_nbi(d, dst, src, 0, sig, 1, SHMEM_SIGNAL_ADD,
                                     0);
        shmemx_dev_quiet(d);
    }
}

__global__ void k_wait(shmemx_dev_t d, uint64_t *sig, uint64_t want)
{
    shmemx_dev_signal_wait_until(d, sig, SHMEM_CMP_GE, want);
}

#ifndef DEV_RACE_NO_STALL /* built against a header without the watch */
/* The stall: thread 0 takes a ticket and never writes its slot; thread 1
 * (after it) puts through the engines and quiets, which cannot complete. */
__global__ void k_stall(shmemx_dev_t d, char *dst, const char *src)
{
    if (threadIdx.x == 0)
        shmemx_dev__reserve(&d, 1, "dev_race stall");
    __syncthreads();
    if (threadIdx.x == 1) {
        shmemx_dev_putmem_nbi(d, dst, src, 4096, d.me);
        shmemx_dev_quiet(d);
    }
}
#endif

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Wait for the legacy stream's kernels, at most the deadline. */
static void wait_kernels(const shmemx_dev_t &d, const char *what, int round)
{
    static double limit = -1;
    if (limit < 0) {
        const char *e = getenv("DEV_RACE_TIMEOUT");
        limit = e ? atof(e) : 60;
    }
    double t0 = now_s();
    for (;;) {
        cudaError_t e = cudaStreamQuery(0);
        if (e == cudaSuccess)
            return;
        if (e != cudaErrorNotReady)
            CK(e);
        if (now_s() - t0 > limit)
            break;
        usleep(200);
    }
    /* What the host can see without the GPU: the FIFO's slots (pinned) and
     * the proxy's count of slots taken. */
    unsigned long long cons = *(volatile unsigned long long *)d.consumed;
    unsigned fresh = 0, maxlap = 0;
    for (unsigned i = 0; i < d.slots; i++) {
        /* The next ticket at slot i that the proxy has not taken. */
        unsigned long long t = cons + (i + d.slots - cons % d.slots) % d.slots;
        unsigned lap = (unsigned)(((volatile shmemx_dev_slot_t *)d.fifo)[i].ctl >> 32);
        maxlap = lap > maxlap ? lap : maxlap;
        fresh += lap == (unsigned)(t / d.slots + 1);
    }
    fprintf(stderr,
            "FAIL: PE %d: dev_race: round %d: %s not done after %.0f s "
            "(proxy took %llu tickets; %u slots written but not taken, "
            "highest lap %u, FIFO of %u slots)\n",
            me, round, what, limit, cons, fresh, maxlap, d.slots);
    fflush(stderr);
    _exit(1);
}

static int overlap;

static long check(const char *dst, int prev, int round)
{
    unsigned char *h = (unsigned char *)malloc(BYTES);
    long bad = 0;
    size_t first = BYTES;
    CK(cudaMemcpy(h, dst, BYTES, cudaMemcpyDefault));
    if (overlap) /* beyond region 0 nothing is written */
        for (size_t i = REGION; i < BYTES; i++)
            if (h[i]) {
                if (first == BYTES)
                    first = i;
                bad++;
            }
    for (size_t w = 0; w < (overlap ? 1u : WARPS); w++)
        for (int c = 0; c < CHUNKS; c++) {
            size_t lo = w * REGION + (size_t)c * STRIDE + c % 5;
            size_t hi = lo + sizes_h[c % 8];
            size_t end = w * REGION + (size_t)(c + 1) * STRIDE;
            for (size_t i = w * REGION + (size_t)c * STRIDE; i < end; i++) {
                unsigned char want = i >= lo && i < hi ? pat(prev, i, round) : 0;
                if (h[i] != want) {
                    if (first == BYTES)
                        first = i;
                    bad++;
                }
            }
        }
    if (bad)
        fprintf(stderr,
                "FAIL: PE %d: dev_race: round %d: %ld of %zu bytes wrong, "
                "first at %zu (warp %zu, chunk %zu)\n",
                me, round, bad, (size_t)BYTES, first, first / REGION,
                (first % REGION) / STRIDE);
    free(h);
    return bad;
}

int main(int argc, char **argv)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1) {
        printf("SKIP: dev_race: no CUDA driver or GPU\n");
        return 77;
    }
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    shmemx_dev_t d;
    shmemx_dev_get(&d);
    char *ddst = (char *)shmemx_malloc_device(BYTES);
    char *hdst = (char *)shmem_malloc(BYTES);
    char *src = (char *)shmemx_malloc_device(BYTES);
    uint64_t *dsig = (uint64_t *)shmemx_malloc_device(8);
    uint64_t *hsig = (uint64_t *)shmem_malloc(8);
    char *dst = ddst;
    if (!ddst || !hdst || !src || !dsig || !hsig) {
        fprintf(stderr, "FAIL: PE %d: dev_race: allocation\n", me);
        return 1;
    }
#ifndef DEV_RACE_NO_STALL
    if (argc > 1 && !strcmp(argv[1], "stall")) {
        k_stall<<<1, 32>>>(d, dst, src);
        CK(cudaGetLastError());
        wait_kernels(d, "the stall kernel", 0);
        fprintf(stderr, "FAIL: PE %d: dev_race stall: the kernel returned\n",
                me);
        return 1;
    }
#endif
    int rounds = argc > 1 ? atoi(argv[1]) : 4;
    overlap = argc > 2 && !strcmp(argv[2], "overlap");
    char *hbuf = (char *)shmem_malloc(65536);
    if (!hbuf) {
        fprintf(stderr, "FAIL: PE %d: dev_race: allocation\n", me);
        return 1;
    }
    long fails = 0;
    for (int r = 0; r < rounds; r++) {
        uint64_t *sig = (r + 1) / 2 % 2 ? hsig : dsig;
        dst = r % 2 ? hdst : ddst;
        const uint64_t zero = 0;
        CK(cudaMemset(dst, 0, BYTES));
        CK(cudaMemcpy(sig, &zero, 8, cudaMemcpyDefault));
        k_fill<<<264, 256>>>((unsigned char *)src, BYTES, me, r);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        shmem_barrier_all(); /* every destination and sig cleared */
        k_race<<<BLOCKS, THREADS>>>(d, dst, src, sig, overlap);
        CK(cudaGetLastError());
        if (overlap) {
            /* The host's own puts while the kernels run, then the
             * reporter's waits: cudaDeviceSynchronize (a hang is ended by
             * the launcher's timeout or the library's stall line). */
            for (int i = 0; i < 200; i++) {
                shmem_putmem(hbuf, hbuf, 65536, (me + 1) % npes);
                shmem_quiet();
            }
            if (me == 0)
                k_wait<<<1, 1>>>(d, sig, (uint64_t)BLOCKS * npes);
            CK(cudaGetLastError());
            CK(cudaDeviceSynchronize());
        } else {
            wait_kernels(d, "the put kernel", r);
            if (me == 0) {
                k_wait<<<1, 1>>>(d, sig, (uint64_t)BLOCKS * npes);
                CK(cudaGetLastError());
                wait_kernels(d, "the signal wait kernel", r);
            }
        }
        shmem_barrier_all(); /* every PE's puts are complete */
        fails += check(dst, (me - 1 + npes) % npes, r) != 0;
        if (me == 0) {
            uint64_t v = 0;
            CK(cudaMemcpy(&v, sig, 8, cudaMemcpyDefault));
            if (v != (uint64_t)BLOCKS * npes) {
                fprintf(stderr,
                        "FAIL: PE 0: dev_race: round %d: signal %llu, want "
                        "%d\n",
                        r, (unsigned long long)v, BLOCKS * npes);
                fails++;
            }
        }
        shmem_barrier_all(); /* checked before the next round clears */
    }
    int *all = (int *)shmem_malloc(sizeof(int));
    *all = 0;
    shmem_barrier_all();
    shmem_int_atomic_add(all, (int)fails, 0);
    shmem_barrier_all();
    int total = *all;
    shmem_free(all);
    shmem_free(hbuf);
    shmem_finalize();
    if (me == 0)
        printf("%s: dev_race, %d PEs, %d rounds\n", total ? "FAIL" : "PASS",
               npes, rounds);
    return fails ? 1 : 0;
}
