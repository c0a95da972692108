/*
 * Collective latency benchmark: fcollect, collect, alltoall, alltoalls
 * (every other element), broadcast, sum reduction and barrier, 8 B to
 * 4 MiB per PE (every power of two up to 1 KiB), microseconds per call
 * (mean over back-to-back calls, slowest PE). Plain OpenSHMEM through the
 * deprecated active-set forms (fcollect64, collect64, alltoall64,
 * alltoalls64, broadcast64, longlong_sum_to_all) that Open MPI's OSHMEM
 * also has, so the same source builds with its oshcc; dmashmem
 * additionally gets rows for
 * its persistent requests (SHMEMX_HAVE_PERSISTENT_COLL). The variant is
 * chosen outside the program (SHMEM_FCOLLECT_ALGORITHM, ...), named in
 * the output with --label.
 *
 *   coll_bench [--label NAME] [--quick] [--max BYTES] [--csv FILE]
 */
#include <shmem.h>
#if __has_include(<shmemx.h>)
#include <shmemx.h>
#endif

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_DEFAULT (4L << 20)

static long psync[3][SHMEM_REDUCE_SYNC_SIZE > SHMEM_COLLECT_SYNC_SIZE
                         ? (SHMEM_REDUCE_SYNC_SIZE > SHMEM_ALLTOALL_SYNC_SIZE
                                ? SHMEM_REDUCE_SYNC_SIZE
                                : SHMEM_ALLTOALL_SYNC_SIZE)
                         : (SHMEM_COLLECT_SYNC_SIZE > SHMEM_ALLTOALL_SYNC_SIZE
                                ? SHMEM_COLLECT_SYNC_SIZE
                                : SHMEM_ALLTOALL_SYNC_SIZE)];
static long long pwrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE + 65536];
static double tmax;

static int me, npes, quick;
static char *dest, *src;
static FILE *csv;
static const char *label = "default";

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static int iters_for(long bytes)
{
    long it = (quick ? 4L : 40L) * 1024 * 1024 / (bytes * npes + 1024);
    if (it > (quick ? 200 : 5000))
        it = quick ? 200 : 5000;
    return it < 5 ? 5 : (int)it;
}

enum op { FCOLLECT, COLLECT, ALLTOALL, ALLTOALLS, BCAST, REDUCE, BARRIER,
          OP_PFC, OP_PA2A, OP_N };
static const char *const opname[] = {"fcollect", "collect", "alltoall",
                                     "alltoalls", "broadcast", "sum_to_all",
                                     "barrier", "fcollect_persist",
                                     "alltoall_persist"};

static void one(enum op op, long bytes, int k)
{
    long *ps = psync[k % 3];
    size_t n64 = (size_t)bytes / 8;
    switch (op) {
    case FCOLLECT:
        shmem_fcollect64(dest, src, n64, 0, 0, npes, ps);
        break;
    case COLLECT:
        shmem_collect64(dest, src, n64, 0, 0, npes, ps);
        break;
    case ALLTOALL:
        shmem_alltoall64(dest, src, n64, 0, 0, npes, ps);
        break;
    case ALLTOALLS: /* every other element: bytes per peer, twice the span */
        shmem_alltoalls64(dest, src, 2, 2, n64, 0, 0, npes, ps);
        break;
    case BCAST:
        shmem_broadcast64(dest, src, n64, 0, 0, 0, npes, ps);
        break;
    case REDUCE:
        shmem_longlong_sum_to_all((long long *)dest, (long long *)src,
                                  (int)n64, 0, 0, npes, pwrk, ps);
        break;
    case BARRIER:
        shmem_barrier_all();
        break;
    default:
        break;
    }
}

static double run(enum op op, long bytes)
{
    int it = iters_for(bytes), w = it / 10 + 2, k;
    double t0 = 0, dt;
#ifdef SHMEMX_HAVE_PERSISTENT_COLL
    shmemx_req_t req = NULL;
    if (op == OP_PFC)
        shmemx_fcollectmem_init(SHMEM_TEAM_WORLD, dest, src, (size_t)bytes,
                                &req);
    else if (op == OP_PA2A)
        shmemx_alltoallmem_init(SHMEM_TEAM_WORLD, dest, src, (size_t)bytes,
                                &req);
#endif
    for (k = 0; k < w + it; k++) {
        if (k == w) {
            shmem_barrier_all();
            t0 = now();
        }
#ifdef SHMEMX_HAVE_PERSISTENT_COLL
        if (req) {
            shmemx_req_start(req);
            shmemx_req_wait(req);
            continue;
        }
#endif
        one(op, bytes, k);
    }
    dt = (now() - t0) / it;
    shmem_barrier_all();
#ifdef SHMEMX_HAVE_PERSISTENT_COLL
    if (req)
        shmemx_req_free(req);
#endif
    /* The slowest PE's time. */
    static double mine;
    mine = dt;
    tmax = 0;
    shmem_barrier_all();
    for (int p = 0; p < npes; p++) {
        double v;
        shmem_getmem(&v, &mine, sizeof(v), p);
        if (v > tmax)
            tmax = v;
    }
    shmem_barrier_all();
    return tmax;
}

int main(int argc, char **argv)
{
    long maxb = MAX_DEFAULT;
    const char *csvpath = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick"))
            quick = 1;
        else if (!strcmp(argv[i], "--label") && i + 1 < argc)
            label = argv[++i];
        else if (!strcmp(argv[i], "--max") && i + 1 < argc)
            maxb = atol(argv[++i]);
        else if (!strcmp(argv[i], "--csv") && i + 1 < argc)
            csvpath = argv[++i];
    }
    if (quick && maxb > (64L << 10))
        maxb = 64L << 10;
    for (int k = 0; k < 3; k++)
        for (size_t i = 0; i < sizeof(psync[k]) / sizeof(long); i++)
            psync[k][i] = SHMEM_SYNC_VALUE;
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    dest = shmem_malloc((size_t)maxb * (size_t)npes);
    src = shmem_malloc((size_t)maxb * (size_t)npes);
    if (!dest || !src) {
        fprintf(stderr, "coll_bench: shmem_malloc of %ld bytes failed\n",
                maxb * npes);
        shmem_global_exit(1);
    }
    memset(src, me + 1, (size_t)maxb * (size_t)npes);
    if (me == 0 && csvpath) {
        csv = fopen(csvpath, "w");
        if (csv)
            fprintf(csv, "label,npes,op,bytes,us\n");
    }
    if (me == 0)
        printf("# coll_bench %s, %d PEs (us per call, slowest PE)\n"
               "%-18s %9s %10s\n", label, npes, "op", "bytes", "us");
    shmem_barrier_all();
    for (int op = 0; op < OP_N; op++) {
#ifndef SHMEMX_HAVE_PERSISTENT_COLL
        if (op == OP_PFC || op == OP_PA2A)
            continue;
#endif
        static const long sizes[] = {8,    16,    32,     64,      128,
                                     256,  512,   1024,   4096,    32768,
                                     262144, 1L << 20, 4L << 20};
        for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
            long b = sizes[si];
            if (b > maxb)
                break;
            long bytes = op == BARRIER ? 0 : b;
            if (op == REDUCE && bytes > (long)sizeof(pwrk) * 2)
                break;
            if (op == ALLTOALLS && 2 * bytes > maxb)
                break;
            double us = run((enum op)op, bytes);
            if (me == 0) {
                printf("%-18s %9ld %10.2f\n", opname[op], bytes, us);
                if (csv)
                    fprintf(csv, "%s,%d,%s,%ld,%.3f\n", label, npes,
                            opname[op], bytes, us);
            }
            if (op == BARRIER)
                break;
        }
    }
    if (csv)
        fclose(csv);
    shmem_free(dest);
    shmem_free(src);
    shmem_finalize();
    return 0;
}
