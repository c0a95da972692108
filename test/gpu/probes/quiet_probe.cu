/*
 * Where a device quiet's time goes (issue #31: p 8 B + quiet on the store
 * path costs ~0.25 us more than NVSHMEM's, whose quiet is a system fence
 * alone). One thread, 2000 iterations per variant, the median of the
 * per-iteration times by the GPU's global timer (us), PE 0 -> PE 1 (or
 * itself alone):
 *   fence        __threadfence_system() alone
 *   store_fence  a store through the peer's mapping + the fence (the floor)
 *   loads_fence  the quiet's two counter loads, then the fence, the values
 *                used after it (the library's quiet without its branch)
 *   fence_loads  the fence, then the loads (serial)
 *   store_loads_fence  store + loads + fence
 *   loads_gpu_fence    the loads as ld.relaxed.gpu
 *   loads_acqrel       loads + fence.acq_rel.sys
 *   quiet        shmemx_dev_quiet
 *   p_fence      shmemx_dev_uint64_p + the fence
 *   p_quiet      shmemx_dev_uint64_p + shmemx_dev_quiet
 *   quiet_untied, p_quiet_untied  the same with the quiet as it was
 *                before its compare was tied to a timer read after the
 *                fence (quiet_untied below)
 *   peer_quiet   a store through the peer's address found before the loop
 *                + shmemx_dev_quiet (p's floor without a table load)
 *   tbl_*_quiet  the same, the address loaded from a segment table each
 *                time (the table floors; where each table is: ptab below)
 * Links the library (no -rdc), like bench/gpu_devbench.cu:
 *   nvcc -arch=sm_90 -O2 -Iinclude quiet_probe.cu -ldmashmem
 *   shmem_launcher -n 2 ./quiet_probe
 * A question to the GPU, not a test: prints what it saw.
 */
#include <shmem.h>
#include <shmemx.h>
#include <shmemx_cuda.h>

#include <algorithm>
#include <stdio.h>
#include <vector>

#define CK(x)                                                                  \
    do {                                                                       \
        cudaError_t e_ = (x);                                                  \
        if (e_ != cudaSuccess) {                                               \
            fprintf(stderr, "quiet_probe: %s: %s\n", #x,                       \
                    cudaGetErrorString(e_));                                   \
            return 1;                                                          \
        }                                                                      \
    } while (0)

enum {
    V_FENCE, V_STORE_FENCE, V_LOADS_FENCE, V_FENCE_LOADS, V_STORE_LOADS_FENCE,
    V_LOADS_GPU_FENCE, V_LOADS_ACQREL, V_QUIET, V_P_FENCE, V_P_QUIET,
    V_QUIET_UNTIED, V_P_QUIET_UNTIED, V_PEER_QUIET, V_TBL_LDG_QUIET,
    V_TBL_ASM_QUIET, V_TBL_VOL_QUIET, V_TBL_CONST_QUIET, V_TBL_PARAM_QUIET,
    V_N
};
static const char *const names[V_N] = {
    "fence", "store_fence", "loads_fence", "fence_loads", "store_loads_fence",
    "loads_gpu_fence", "loads_acqrel", "quiet", "p_fence", "p_quiet",
    "quiet_untied", "p_quiet_untied", "peer_quiet", "tbl_ldg_quiet",
    "tbl_asm_quiet", "tbl_vol_quiet", "tbl_const_quiet", "tbl_param_quiet"};

/* The segment table where the table floors read it from: the handle's
 * table in device memory (d.base) by __ldg (tbl_ldg: the benchmark's
 * floor before the handle carried rows), by an nc load ptxas cannot
 * hoist out of the loop (tbl_asm: it did not hoist the __ldg either, the
 * two measured alike), by a volatile load (tbl_vol); a copy in constant
 * memory (tbl_const) and one among the kernel's parameters (tbl_param),
 * both indexed by pe at run time. */
#define TBL_MAX 64
__constant__ uint64_t ctab[TBL_MAX];
struct ptab {
    uint64_t v[TBL_MAX];
};

__device__ static inline uint64_t ld_nc_asm(const uint64_t *p)
{
    uint64_t v;
    asm volatile("ld.global.nc.u64 %0, [%1];" : "=l"(v) : "l"(p));
    return v;
}

/* Row ti of the table as variant v (a V_TBL_*) reads it. */
__device__ static inline uint64_t tbl_base(int v, const shmemx_dev_t &d,
                                           int ti, const ptab &pt)
{
    switch (v) {
    case V_TBL_LDG_QUIET:
        return __ldg(&d.base[ti]);
    case V_TBL_ASM_QUIET:
        return ld_nc_asm(&d.base[ti]);
    case V_TBL_VOL_QUIET:
        return *(const volatile uint64_t *)&d.base[ti];
    case V_TBL_CONST_QUIET:
        return ctab[ti];
    default:
        return pt.v[ti];
    }
}

/* The quiet as it was before its compare was tied to a timer read after
 * the fence (include/shmemx_cuda.h): ptxas hoists this compare above the
 * fence, which then waits for the two loads before it starts. */
__device__ static inline void quiet_untied(const shmemx_dev_t *d)
{
    unsigned long long t =
        *(volatile unsigned long long *)&d->words[SHMEMX_DEV_W_ISSUE];
    unsigned long long c =
        *(volatile unsigned long long *)&d->words[SHMEMX_DEV_W_COMPLETE];
    __threadfence_system();
    if (c < t)
        shmemx_dev__wait_done(d, t, "quiet_probe");
}

__device__ static inline unsigned long long gclock(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ static inline unsigned long long ld_gpu(const void *p)
{
    unsigned long long v;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];"
                 : "=l"(v)
                 : "l"(p)
                 : "memory");
    return v;
}

__global__ void k_probe(shmemx_dev_t d, int v, uint64_t *sym, int pe,
                        int iters, unsigned long long *t,
                        unsigned long long *sink, ptab pt)
{
    /* sym is in the device heap (shmemx_malloc_device), the table's last
     * segment (src/devapi/cuda.c, dev_segs): its row and offset, for the
     * table floors. */
    const int s0 = SHMEMX_DEV_SEGS - 1, ti = pe * SHMEMX_DEV_SEGS + s0;
    const uint64_t off0 = (uint64_t)(uintptr_t)sym - d.lo[s0];
    volatile uint64_t *peer =
        (volatile uint64_t *)shmemx_dev__ptr(&d, sym, pe, "quiet_probe");
    const volatile unsigned long long *is =
        (const volatile unsigned long long *)&d.words[SHMEMX_DEV_W_ISSUE];
    const volatile unsigned long long *co =
        (const volatile unsigned long long *)&d.words[SHMEMX_DEV_W_COMPLETE];
    unsigned long long acc = 0;
    for (int i = 0; i < iters; i++) {
        unsigned long long t0 = gclock(), a = 0, b = 0;
        switch (v) {
        case V_FENCE:
            __threadfence_system();
            break;
        case V_STORE_FENCE:
            *peer = (uint64_t)i;
            __threadfence_system();
            break;
        case V_LOADS_FENCE:
            a = *is;
            b = *co;
            __threadfence_system();
            break;
        case V_FENCE_LOADS:
            __threadfence_system();
            a = *is;
            b = *co;
            break;
        case V_STORE_LOADS_FENCE:
            *peer = (uint64_t)i;
            a = *is;
            b = *co;
            __threadfence_system();
            break;
        case V_LOADS_GPU_FENCE:
            a = ld_gpu((const void *)is);
            b = ld_gpu((const void *)co);
            __threadfence_system();
            break;
        case V_LOADS_ACQREL:
            a = *is;
            b = *co;
            asm volatile("fence.acq_rel.sys;" ::: "memory");
            break;
        case V_QUIET:
            shmemx_dev_quiet(d);
            break;
        case V_P_FENCE:
            shmemx_dev_uint64_p(d, sym, (uint64_t)i, pe);
            __threadfence_system();
            break;
        case V_P_QUIET:
            shmemx_dev_uint64_p(d, sym, (uint64_t)i, pe);
            shmemx_dev_quiet(d);
            break;
        case V_QUIET_UNTIED:
            quiet_untied(&d);
            break;
        case V_P_QUIET_UNTIED:
            shmemx_dev_uint64_p(d, sym, (uint64_t)i, pe);
            quiet_untied(&d);
            break;
        case V_PEER_QUIET:
            *peer = (uint64_t)i;
            shmemx_dev_quiet(d);
            break;
        case V_TBL_LDG_QUIET:
        case V_TBL_ASM_QUIET:
        case V_TBL_VOL_QUIET:
        case V_TBL_CONST_QUIET:
        case V_TBL_PARAM_QUIET:
            *(volatile uint64_t *)(uintptr_t)(tbl_base(v, d, ti, pt) + off0) =
                (uint64_t)i;
            shmemx_dev_quiet(d);
            break;
        }
        /* The loads' values are used (after the timing's end), as the
         * quiet's compare uses them. */
        acc += a < b;
        t[i] = gclock() - t0;
    }
    *sink = acc;
}

int main(void)
{
    shmem_init();
    const int me = shmem_my_pe(), npes = shmem_n_pes();
    const int pe = (me + 1) % npes, iters = 2000;
    shmemx_dev_t d;
    uint64_t *sym = (uint64_t *)shmemx_malloc_device(64);
    unsigned long long *t, *sink;
    if (!sym) {
        fprintf(stderr, "quiet_probe: no device heap\n");
        return 1;
    }
    shmemx_dev_get(&d);
    CK(cudaMalloc(&t, iters * sizeof(*t)));
    CK(cudaMalloc(&sink, sizeof(*sink)));
    ptab pt = {};
    const size_t tn = (size_t)npes * SHMEMX_DEV_SEGS;
    if (tn > TBL_MAX) {
        fprintf(stderr, "quiet_probe: %d PEs: more than %d table entries\n",
                npes, TBL_MAX);
        return 1;
    }
    CK(cudaMemcpy(pt.v, d.base, tn * sizeof(uint64_t), cudaMemcpyDefault));
    CK(cudaMemcpyToSymbol(ctab, pt.v, sizeof(pt.v)));
    shmem_barrier_all();
    std::vector<unsigned long long> h(iters);
    for (int round = 0; round < 3; round++)
        for (int v = 0; v < V_N; v++) {
            k_probe<<<1, 1>>>(d, v, sym, pe, iters, t, sink, pt);
            CK(cudaGetLastError());
            CK(cudaDeviceSynchronize());
            CK(cudaMemcpy(h.data(), t, iters * sizeof(*t),
                          cudaMemcpyDefault));
            std::vector<unsigned long long> w(h.begin() + iters / 10,
                                              h.end());
            std::sort(w.begin(), w.end());
            if (me == 0)
                printf("quiet_probe,%d,%d,%s,%.3f,us\n", npes, round,
                       names[v], (double)w[w.size() / 2] / 1000.0);
        }
    shmem_barrier_all();
    shmem_free(sym);
    shmem_finalize();
    return 0;
}
