/*
 * The first operation of a kernel (issue #31: the first put 8 B + quiet
 * after 1/10/100 ms idle costs ~0.19 us more than one in a warm loop; is
 * that the idle, or the kernel's first touch of its parameters and data?).
 * PE 0 -> PE 1 (or itself alone); PE 0 launches kernels whose thread 0
 * times its first operation and then a second one, after `idle` ms (0, 1,
 * 10) with the GPU doing nothing (0: launched back to back), having read
 * before the timed part:
 *   cold    nothing
 *   handle  every field of the handle a put reads (its parameters)
 *   src     that and the source word
 *   words   that and the quiet's two counters
 *   warp    that, and warp 1 of the block ran the same operation first
 *           (the SM has fetched its code and data)
 *   warp4   the same by warp 4, which shares warp 0's scheduler and its
 *           instruction cache where warps are dealt to the SM's four
 *           schedulers by warp number modulo 4
 * Operations (one kernel per operation: a template, as a program's would):
 *   put_quiet   shmemx_dev_putmem_nbi 8 B + shmemx_dev_quiet
 *   p_quiet     shmemx_dev_uint64_p + shmemx_dev_quiet
 *   copy_floor  the source word stored through the peer's row
 *               (shmemx_dev__ld_base) + the library's quiet, without
 *               put's checks (bench/gpu_devbench.cu's
 *               copy_table_quiet_floor)
 *   store_fence a store through the peer's address found before the
 *               timed part + __threadfence_system (the bare floor)
 *   lookup_floor  copy_floor with put's translation and checks
 *               (shmemx_dev__ptr_n) in the timed part
 *   put_fence   shmemx_dev_putmem_nbi 8 B + __threadfence_system (put
 *               without the library's quiet)
 *   lookup_nofail  lookup_floor without the misuse report's branch
 *   lookup_far  lookup_floor with the peer's base always from the table
 *               in device memory (no branch to the handle's near rows)
 * Prints idle_probe,npes,op,touch,idle_ms,first,second (us, medians of 15
 * kernels). Links the library (no -rdc), like bench/gpu_devbench.cu:
 *   nvcc -arch=sm_90 -O2 -Iinclude idle_probe.cu -ldmashmem
 *   shmem_launcher -n 2 ./idle_probe
 * A question to the GPU, not a test: prints what it saw.
 */
#include <shmem.h>
#include <shmemx.h>
#include <shmemx_cuda.h>

#include <algorithm>
#include <stdio.h>
#include <time.h>
#include <vector>

#define CK(x)                                                                  \
    do {                                                                       \
        cudaError_t e_ = (x);                                                  \
        if (e_ != cudaSuccess) {                                               \
            fprintf(stderr, "idle_probe: %s: %s\n", #x,                        \
                    cudaGetErrorString(e_));                                   \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

enum {
    O_PUT, O_P, O_COPY_FLOOR, O_STORE_FENCE, O_LOOKUP_FLOOR, O_PUT_FENCE,
    O_LOOKUP_NOFAIL, O_LOOKUP_FAR, O_N
};
static const char *const onames[O_N] = {
    "put_quiet",    "p_quiet",   "copy_floor",     "store_fence",
    "lookup_floor", "put_fence", "lookup_nofail", "lookup_far"};

/* shmemx_dev__ptr_n's search and checks without its report (nofail: a
 * misuse stores through a null base), or with the peer's base always from
 * the table in device memory (far: no branch between near rows and the
 * table). */
template <int far>
__device__ static inline char *lookup(const shmemx_dev_t &d, const void *sym,
                                      size_t n, int pe)
{
    uint64_t a = (uint64_t)(uintptr_t)sym, off = 0, room = 0;
    int s = 0, in = 0;
#pragma unroll
    for (int k = SHMEMX_DEV_SEGS - 1; k >= 0; k--) {
        uint64_t o = a - d.lo[k];
        if (o < d.size[k]) {
            s = k;
            off = o;
            room = d.size[k] - o;
            in = 1;
        }
    }
    uint64_t b = 0;
    if (in & ((unsigned)pe < (unsigned)d.npes) & (n <= room))
        b = far ? __ldg(&d.base[pe * SHMEMX_DEV_SEGS + s])
                : shmemx_dev__ld_base(&d, pe, s);
    if (far && !b)
        shmemx_dev__fail_at(d.me, d.npes, "idle_probe", SHMEMX_DEV__E_ADDR, a);
    return (char *)(uintptr_t)(b + off);
}
enum { T_COLD, T_HANDLE, T_SRC, T_WORDS, T_WARP, T_WARP4, T_N };
static const char *const tnames[T_N] = {"cold", "handle", "src",
                                        "words", "warp", "warp4"};

__device__ static inline unsigned long long gclock(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

template <int op>
__device__ static inline void one(const shmemx_dev_t &d, uint64_t *dst,
                                  const uint64_t *src, int pe, int s0,
                                  uint64_t off0, volatile uint64_t *peer,
                                  uint64_t i)
{
    if (op == O_PUT) {
        shmemx_dev_putmem_nbi(d, dst, src, 8, pe);
        shmemx_dev_quiet(d);
    } else if (op == O_P) {
        shmemx_dev_uint64_p(d, dst, i, pe);
        shmemx_dev_quiet(d);
    } else if (op == O_LOOKUP_FLOOR) {
        char *r = shmemx_dev__ptr_n(&d, dst, 8, pe, "idle_probe");
        *(volatile uint64_t *)r = *(const volatile uint64_t *)src;
        shmemx_dev__quiet(&d, "idle_probe");
    } else if (op == O_LOOKUP_NOFAIL || op == O_LOOKUP_FAR) {
        char *r = lookup<op == O_LOOKUP_FAR>(d, dst, 8, pe);
        *(volatile uint64_t *)r = *(const volatile uint64_t *)src;
        shmemx_dev__quiet(&d, "idle_probe");
    } else if (op == O_PUT_FENCE) {
        shmemx_dev_putmem_nbi(d, dst, src, 8, pe);
        __threadfence_system();
    } else if (op == O_COPY_FLOOR) {
        volatile uint64_t *q = (volatile uint64_t *)(uintptr_t)(
            shmemx_dev__ld_base(&d, pe, s0) + off0);
        *q = *(const volatile uint64_t *)src;
        shmemx_dev__quiet(&d, "idle_probe");
    } else {
        *peer = i;
        __threadfence_system();
    }
}

template <int op>
__global__ void k_first(shmemx_dev_t d, uint64_t *dst, const uint64_t *src,
                        int pe, int touch, unsigned long long *t,
                        unsigned long long *sink)
{
    /* dst is in the device heap (shmemx_malloc_device): the table's last
     * segment (src/devapi/cuda.c) */
    const int s0 = SHMEMX_DEV_SEGS - 1;
    const uint64_t off0 = (uint64_t)(uintptr_t)dst - d.lo[s0];
    volatile uint64_t *peer = NULL;
    unsigned long long acc = 0;
    if (op == O_STORE_FENCE && threadIdx.x % 32 == 0)
        peer = (volatile uint64_t *)shmemx_dev__ptr(&d, dst, pe, "idle_probe");
    if (touch >= T_HANDLE) {
        acc ^= d.store_max ^ (unsigned long long)d.npes ^
               (unsigned long long)(uintptr_t)d.words ^
               (unsigned long long)(uintptr_t)d.base ^ d.stall_ns ^
               (unsigned long long)d.near ^ (unsigned long long)d.near_n;
#pragma unroll
        for (int k = 0; k < SHMEMX_DEV_SEGS; k++)
            acc ^= d.lo[k] ^ d.size[k];
#pragma unroll
        for (int k = 0; k < SHMEMX_DEV_NEAR * SHMEMX_DEV_SEGS; k++)
            acc ^= d.near_base[k];
    }
    if (touch >= T_SRC)
        acc ^= *(const volatile uint64_t *)src;
    if (touch >= T_WORDS)
        acc ^= *(volatile unsigned long long *)&d.words[SHMEMX_DEV_W_ISSUE] ^
               *(volatile unsigned long long *)&d.words[SHMEMX_DEV_W_COMPLETE];
    /* the reads are done before the clock starts: their value is stored
     * (every variant stores, cold too) and the block fence orders it */
    *(volatile unsigned long long *)sink = acc;
    if (touch >= T_WARP) { /* another warp of this block runs the op first */
        if (threadIdx.x == (touch == T_WARP ? 32 : 128))
            one<op>(d, dst, src, pe, s0, off0, peer, 3);
        __syncthreads();
    }
    if (threadIdx.x)
        return;
    __threadfence_block();
    unsigned long long t0 = gclock();
    one<op>(d, dst, src, pe, s0, off0, peer, 1);
    unsigned long long t1 = gclock();
    one<op>(d, dst, src, pe, s0, off0, peer, 2);
    unsigned long long t2 = gclock();
    t[0] = t1 - t0;
    t[1] = t2 - t1;
}

static void launch(int op, shmemx_dev_t d, uint64_t *dst, const uint64_t *src,
                   int pe, int touch, unsigned long long *t,
                   unsigned long long *sink)
{
    const int nt = touch == T_WARP ? 64 : touch == T_WARP4 ? 160 : 1;
    switch (op) {
#define FIRST_CASE(O)                                                          \
    case O:                                                                    \
        k_first<O><<<1, nt>>>(d, dst, src, pe, touch, t, sink);                \
        break;
        FIRST_CASE(O_PUT)
        FIRST_CASE(O_P)
        FIRST_CASE(O_COPY_FLOOR)
        FIRST_CASE(O_STORE_FENCE)
        FIRST_CASE(O_LOOKUP_FLOOR)
        FIRST_CASE(O_PUT_FENCE)
        FIRST_CASE(O_LOOKUP_NOFAIL)
        FIRST_CASE(O_LOOKUP_FAR)
#undef FIRST_CASE
    default:
        fprintf(stderr, "idle_probe: no operation %d\n", op);
        exit(1);
    }
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
}

static double med(std::vector<double> w)
{
    std::sort(w.begin(), w.end());
    return w[w.size() / 2];
}

int main(void)
{
    shmem_init();
    const int me = shmem_my_pe(), npes = shmem_n_pes();
    const int pe = (me + 1) % npes, reps = 15;
    const long idle_ms[] = {0, 1, 10};
    shmemx_dev_t d;
    uint64_t *dst = (uint64_t *)shmemx_malloc_device(64);
    uint64_t *src = (uint64_t *)shmemx_malloc_device(64);
    unsigned long long *t, *sink, h[2];
    if (!dst || !src) {
        fprintf(stderr, "idle_probe: no device heap\n");
        return 1;
    }
    shmemx_dev_get(&d);
    CK(cudaMalloc(&t, 2 * sizeof(*t)));
    CK(cudaMalloc(&sink, sizeof(*sink)));
    CK(cudaMemset(src, 7, 64));
    shmem_barrier_all();
    if (me == 0) {
        for (int op = 0; op < O_N; op++)
            launch(op, d, dst, src, pe, T_COLD, t, sink); /* load modules */
        for (int op = 0; op < O_N; op++)
            for (int touch = 0; touch < T_N; touch++)
                for (size_t k = 0; k < sizeof(idle_ms) / sizeof(*idle_ms);
                     k++) {
                    std::vector<double> f, s;
                    for (int r = 0; r < reps; r++) {
                        if (idle_ms[k]) {
                            struct timespec ts = {0, idle_ms[k] * 1000000};
                            nanosleep(&ts, NULL);
                        }
                        launch(op, d, dst, src, pe, touch, t, sink);
                        CK(cudaMemcpy(h, t, sizeof(h), cudaMemcpyDefault));
                        f.push_back((double)h[0] / 1000.0);
                        s.push_back((double)h[1] / 1000.0);
                    }
                    printf("idle_probe,%d,%s,%s,%ld,%.3f,%.3f\n", npes,
                           onames[op], tnames[touch], idle_ms[k], med(f),
                           med(s));
                    fflush(stdout);
                }
    }
    shmem_barrier_all();
    shmem_free(src);
    shmem_free(dst);
    shmem_finalize();
    return 0;
}
