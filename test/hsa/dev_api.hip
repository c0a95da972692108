/*
 * The HIP device API (include/shmemx_hip.h) from kernels: one kernel per
 * routine family, together calling every routine and every typed p/g and
 * atomic. Compiled by test/gpu/dev_compile_hip.sh with hipcc for gfx90a
 * and gfx940 without -fgpu-rdc and linked against the library; no AMD GPU
 * is reachable here, so it is not run (main only launches when a device
 * is found, and exits 77 otherwise).
 */
#include <hip/hip_runtime.h>
#include <shmem.h>
#include <shmemx_hip.h>

#include <stdio.h>

__global__ void k_rma(shmemx_dev_t d, char *sym, char *local, size_t n,
                      int pe)
{
    if (threadIdx.x != 0)
        return;
    shmemx_dev_putmem(d, sym, local, n, pe);
    shmemx_dev_putmem_nbi(d, sym + n, local, n, pe);
    shmemx_dev_getmem(d, local, sym, n, pe);
    shmemx_dev_getmem_nbi(d, local + n, sym + n, n, pe);
    shmemx_dev_fence(d);
    shmemx_dev_quiet(d);
}

/* Every lane issues: the header takes them in turn within a wavefront. */
__global__ void k_signal(shmemx_dev_t d, char *sym, const char *local,
                         size_t n, uint64_t *sig, int pe)
{
    shmemx_dev_putmem_signal_nbi(d, sym + threadIdx.x * n, local, n, sig, 1,
                                 SHMEM_SIGNAL_ADD, pe);
    if (threadIdx.x == 0) {
        shmemx_dev_putmem_signal_nbi(d, sym, local, 8, sig + 1, 7,
                                     SHMEM_SIGNAL_SET, pe);
        shmemx_dev_signal_wait_until(d, sig, SHMEM_CMP_GE, blockDim.x);
        (void)shmemx_dev_signal_fetch(d, sig + 1);
    }
}

/* Every typed p/g and atomic in one kernel each (one kernel per type
 * made the compile five times longer). */
__global__ void k_pg(shmemx_dev_t d, char *sym, char *out, int pe)
{
#define PG(T, N)                                                               \
    shmemx_dev_##N##_p(d, (T *)sym, (T)1, pe);                                 \
    *(T *)out = shmemx_dev_##N##_g(d, (const T *)sym, pe);
    SHMEMX_DEV_TYPES_RMA(PG)
#undef PG
}

__global__ void k_amo(shmemx_dev_t d, char *sym, char *out, int pe)
{
#define AMO(T, N)                                                              \
    ((T *)out)[0] = shmemx_dev_##N##_atomic_fetch_add(d, (T *)sym, (T)1, pe);  \
    shmemx_dev_##N##_atomic_add(d, (T *)sym, (T)2, pe);                        \
    ((T *)out)[1] =                                                            \
        shmemx_dev_##N##_atomic_compare_swap(d, (T *)sym, (T)3, (T)4, pe);
    SHMEMX_DEV_TYPES_AMO(AMO)
#undef AMO
}

__global__ void k_barrier(shmemx_dev_t d, int rounds)
{
    if (threadIdx.x == 0 && blockIdx.x == 0)
        for (int i = 0; i < rounds; i++)
            shmemx_dev_barrier_all(d);
}

/* The one-shot collectives (#31): 1 KiB a PE on the store path, 64 KiB
 * on the engines. */
__global__ void k_coll(shmemx_dev_t d, char *sym, const char *local)
{
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        shmemx_dev_fcollectmem(d, sym, local, 1024);
        shmemx_dev_alltoallmem(d, sym, local, 65536);
        shmemx_dev_broadcastmem(d, sym, local, 4096, 0);
    }
}

int main(void)
{
    shmemx_dev_t d;
    int ndev = 0;

    if (hipGetDeviceCount(&ndev) != hipSuccess || ndev == 0) {
        printf("SKIP: no AMD GPU\n");
        return 77;
    }
    shmem_init();
    if (shmemx_dev_get(&d)) {
        shmem_finalize();
        return 1;
    }
    int pe = (shmem_my_pe() + 1) % shmem_n_pes();
    char *sym = (char *)shmem_malloc(1 << 20);
    uint64_t *sig = (uint64_t *)shmem_calloc(2, sizeof(uint64_t));
    char *local = NULL;
    if (hipMalloc((void **)&local, 1 << 20) != hipSuccess)
        return 1;
    hipLaunchKernelGGL(k_rma, dim3(1), dim3(64), 0, 0, d, sym, local,
                       (size_t)65536, pe);
    hipLaunchKernelGGL(k_signal, dim3(1), dim3(64), 0, 0, d, sym, local,
                       (size_t)4096, sig, pe);
    hipLaunchKernelGGL(k_pg, dim3(1), dim3(1), 0, 0, d, sym, local, pe);
    hipLaunchKernelGGL(k_amo, dim3(1), dim3(64), 0, 0, d, sym, local, pe);
    hipLaunchKernelGGL(k_barrier, dim3(1), dim3(1), 0, 0, d, 10);
    if (shmem_n_pes() <= 16)
        hipLaunchKernelGGL(k_coll, dim3(1), dim3(1), 0, 0, d, sym, local);
    int ok = hipDeviceSynchronize() == hipSuccess;
    hipFree(local);
    shmem_free(sig);
    shmem_free(sym);
    shmem_finalize();
    return ok ? 0 : 1;
}
