/*
 * GPU benchmark of the cuda backend (docs/PERFORMANCE.md, "GPU (cuda
 * backend)"). Run with 2 PEs, one process per GPU:
 *
 *   shmem_launcher -n 2 bench/gpu_bench [--quick]
 *
 * PE 0 drives, PE 1 is the target; both buffers are in the device heap.
 *   put_nbi bandwidth  1 KiB .. 256 MiB: k x put_nbi then one quiet
 *   putmem 8 B         blocking put latency (median of single calls)
 *   64 x 1 KiB         put_nbi x 64 then quiet (median)
 * Exits 77 where no GPU is found.
 */
#include "test/gpu/gpu_util.h"

#include <shmem.h>
#include <shmemx.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), cmp_d);
    return v[n / 2];
}

int main(int argc, char **argv)
{
    int quick = argc > 1 && !strcmp(argv[1], "--quick");
    size_t maxb = quick ? (16u << 20) : (256u << 20);

    gpu_skip_unless_gpu("gpu_bench");
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    if (n < 2) {
        if (me == 0)
            printf("SKIP: gpu_bench needs 2 PEs\n");
        shmem_finalize();
        return 77;
    }
    char *src = shmemx_malloc_device(maxb), *dst = shmemx_malloc_device(maxb);
    if (!src || !dst) {
        fprintf(stderr, "gpu_bench: no device heap (SHMEM_DEVICE_HEAP_SIZE "
                        "must hold 2 x %zu bytes)\n", maxb);
        shmem_global_exit(1);
    }
    gpu_memset(DP(src), 1, maxb);
    shmem_barrier_all();

    if (me == 0) {
        printf("# gpu_bench: %d PEs, sdma backend device heap, target PE 1\n", n);
        printf("%-22s %12s %12s %10s\n", "test", "bytes", "value", "unit");
        /* bandwidth (after a warm-up of the small-copy path) */
        for (int i = 0; i < 512; i++)
            shmem_putmem_nbi(dst + i * 1024, src + i * 1024, 1024, 1);
        shmem_quiet();
        for (size_t b = 1024; b <= maxb; b *= 4) {
            int k = (int)DSM_TEST_MIN((size_t)4096, (size_t)(4u << 30) / b);
            if (k < 8)
                k = 8;
            if (quick)
                k = k / 4 + 4;
            for (int i = 0; i < 4; i++)
                shmem_putmem_nbi(dst, src, b, 1);
            shmem_quiet();
            double t0 = now_us();
            for (int i = 0; i < k; i++)
                shmem_putmem_nbi(dst, src, b, 1);
            shmem_quiet();
            double t = now_us() - t0;
            printf("%-22s %12zu %12.1f %10s\n", "put_nbi_bw", b,
                   (double)b * k / t / 1e3, "GB/s");
            fflush(stdout);
        }
        /* blocking 8 B latency */
        enum { LAT = 2000 };
        static double v[LAT];
        for (int i = 0; i < 100; i++)
            shmem_putmem(dst, src, 8, 1);
        for (int i = 0; i < LAT; i++) {
            double t0 = now_us();
            shmem_putmem(dst, src, 8, 1);
            v[i] = now_us() - t0;
        }
        printf("%-22s %12d %12.2f %10s\n", "putmem_lat_median", 8,
               median(v, LAT), "us");
        printf("%-22s %12d %12.2f %10s\n", "putmem_lat_p10", 8, v[LAT / 10],
               "us");
        /* 8 B g (device -> host) */
        for (int i = 0; i < LAT; i++) {
            double t0 = now_us();
            (void)shmem_long_g((long *)(void *)src, 1);
            v[i] = now_us() - t0;
        }
        printf("%-22s %12d %12.2f %10s\n", "g_lat_median", 8, median(v, LAT),
               "us");
        /* 64 x 1 KiB put_nbi then quiet */
        enum { REP = 500 };
        static double w[REP];
        for (int r = 0; r < REP; r++) {
            double t0 = now_us();
            for (int i = 0; i < 64; i++)
                shmem_putmem_nbi(dst + i * 1024, src + i * 1024, 1024, 1);
            shmem_quiet();
            w[r] = now_us() - t0;
        }
        printf("%-22s %12d %12.2f %10s\n", "nbi64x1k_quiet_median", 65536,
               median(w, REP), "us");
        fflush(stdout);
    }
    shmem_barrier_all();
    shmem_free(dst);
    shmem_free(src);
    shmem_finalize();
    return 0;
}
