/*
 * fence_bench: the put + fence + flag pattern that pipelined codes use
 * (ParRes Synch_p2p, wavefront sweeps), over whatever path the PEs reach
 * each other by (run it under SHMEM_FORCE_NETWORK=1 for the network path;
 * bench/run-network.sh does).
 *
 *   stream  PE 0 sends PE 1 rows: putmem(row, size) + shmem_fence +
 *           long_p(flag, row) per row, PE 1 waits for the last flag and
 *           checks every row; time per row                           us
 *   fan     the same, but PE 0 sends each row to every other PE in
 *           turn (put to all, one fence, flag to all): a fence orders
 *           only what went to the same PE                             us
 *   p2p     Synch_p2p's pipeline: the PEs own column blocks of a grid;
 *           per row, PE i waits for PE i-1's flag, computes its block of
 *           the row and hands its last value to PE i+1 with put + fence
 *           + flag; time per row at the last PE, and MFlops/s as
 *           Synch_p2p counts them (2 flops per point)
 *
 * OpenSHMEM 1.4 API only; the receiving side checks the data it was sent
 * (a fence that does not order fails the run, it does not look fast).
 * Prints a table and, with --csv FILE, "label,test,size,value,unit" rows.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <shmem.h>

#define MAX_ROWS 100000L
#define MAX_ROW_BYTES ((size_t)64 << 10)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void fail(const char *what, long row, long got, long want)
{
    fprintf(stderr, "fence_bench: PE %d: %s: row %ld holds %ld, expected %ld "
            "(data not ordered before its flag)\n", shmem_my_pe(), what, row,
            got, want);
    shmem_global_exit(1);
}

/* Every long of a row carries the row number plus the pass, so a row that
 * arrived after its flag (or not at all) is seen. */
static void fill(long *row, size_t n, long v)
{
    for (size_t i = 0; i < n; i++)
        row[i] = v;
}

/* stream (fan 0) and fan (fan 1): rows from PE 0; the receivers check
 * each row as soon as its flag is there. Returns us per row at PE 0. */
static double run_stream(long *rows, long *flag, long nrows, size_t size,
                         int fan, long pass)
{
    const int me = shmem_my_pe(), npes = shmem_n_pes();
    const size_t n = size / sizeof(long);
    long *src = malloc(size);
    double t = 0;

    if (!src)
        shmem_global_exit(1);
    shmem_barrier_all();
    if (me == 0) {
        const int last = fan ? npes - 1 : 1;
        t = now_s();
        for (long r = 0; r < nrows; r++) {
            const long v = pass * MAX_ROWS + r + 1;
            fill(src, n, v);
            for (int pe = 1; pe <= last; pe++)
                shmem_putmem(rows + (size_t)r * n, src, size, pe);
            shmem_fence();
            for (int pe = 1; pe <= last; pe++)
                shmem_long_p(flag, v, pe);
        }
        shmem_quiet();
        t = (now_s() - t) / (double)nrows * 1e6;
    } else if (fan || me == 1) {
        for (long r = 0; r < nrows; r++) {
            const long v = pass * MAX_ROWS + r + 1;
            shmem_long_wait_until(flag, SHMEM_CMP_GE, v);
            /* The flag may already be past r (rows overtake the check):
             * every row up to the flag seen must be complete. */
            const long *row = rows + (size_t)r * n;
            if (row[0] < v || row[n - 1] < v)
                fail("stream", r, row[row[0] < v ? 0 : (long)n - 1], v);
        }
    }
    shmem_barrier_all();
    free(src);
    return t;
}

/* Synch_p2p: grid[row][col] = grid[row-1][col] + grid[row][col-1] -
 * grid[row-1][col-1] over this PE's columns; the column left of the block
 * comes from PE me-1 (put + fence + flag). Returns us per row at the last
 * PE (the whole pipeline: up to the barrier after it). */
static double run_p2p(long nrows, int width, long pass, double *mflops)
{
    const int me = shmem_my_pe(), npes = shmem_n_pes();
    /* Symmetric: the left neighbour's last column, one value per row, and
     * the row flag. */
    static long left[MAX_ROWS];
    static long ready[1];
    double *cur = calloc((size_t)width + 1, sizeof(double));
    double *prev = calloc((size_t)width + 1, sizeof(double));
    double t = 0;
    long base = pass * MAX_ROWS;

    if (!cur || !prev)
        shmem_global_exit(1);
    shmem_barrier_all();
    t = now_s();
    for (long r = 1; r <= nrows; r++) {
        if (me > 0) {
            shmem_long_wait_until(ready, SHMEM_CMP_GE, base + r);
            /* The value PE me-1 put before its fence: its row number. */
            if (left[r - 1] != base + r)
                fail("p2p", r, left[r - 1], base + r);
            cur[0] = (double)left[r - 1];
        } else {
            cur[0] = (double)r;
        }
        for (int c = 1; c <= width; c++)
            cur[c] = prev[c] + cur[c - 1] - prev[c - 1];
        if (me < npes - 1) {
            long v = base + r;
            shmem_long_put(&left[r - 1], &v, 1, me + 1);
            shmem_fence();
            shmem_long_p(ready, v, me + 1);
        }
        double *tmp = prev;
        prev = cur;
        cur = tmp;
    }
    /* The pipeline is done when its last PE is: time to the barrier. */
    shmem_barrier_all();
    t = now_s() - t;
    /* Keep the computation from being optimised away. */
    if (prev[width] == -1.0)
        printf("#\n");
    *mflops = 2.0 * (double)nrows * width * npes / t * 1e-6;
    free(cur);
    free(prev);
    return t / (double)nrows * 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    static long flag[1];
    long nrows = 2000, reps = 5;
    size_t size = 64;
    int width = 250;
    const char *label = "dmashmem", *csv = NULL, *which = "stream,fan,p2p";
    static const struct option opts[] = {
        {"rows", required_argument, NULL, 'r'},
        {"size", required_argument, NULL, 's'},
        {"width", required_argument, NULL, 'w'},
        {"reps", required_argument, NULL, 'n'},
        {"tests", required_argument, NULL, 't'},
        {"label", required_argument, NULL, 'l'},
        {"csv", required_argument, NULL, 'c'},
        {"quick", no_argument, NULL, 'q'},
        {NULL, 0, NULL, 0},
    };
    int o;

    while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (o) {
        case 'r': nrows = atol(optarg); break;
        case 's': size = (size_t)atol(optarg); break;
        case 'w': width = atoi(optarg); break;
        case 'n': reps = atol(optarg); break;
        case 't': which = optarg; break;
        case 'l': label = optarg; break;
        case 'c': csv = optarg; break;
        case 'q': nrows = 200; reps = 1; break;
        default:
            fprintf(stderr, "usage: fence_bench [--rows N] [--size BYTES] "
                    "[--width COLS] [--reps N] [--tests stream,fan,p2p] "
                    "[--label L] [--csv FILE] [--quick]\n");
            return 2;
        }
    }
    if (nrows < 1 || nrows >= MAX_ROWS || size < sizeof(long) ||
        size > MAX_ROW_BYTES || size % sizeof(long) || width < 1 ||
        reps < 1 || reps > 100) {
        fprintf(stderr, "fence_bench: --rows 1..%ld, --size a multiple of 8 "
                "up to %zu, --width >= 1, --reps 1..100\n", MAX_ROWS - 1,
                MAX_ROW_BYTES);
        return 2;
    }

    shmem_init();
    const int me = shmem_my_pe(), npes = shmem_n_pes();
    if (npes < 2) {
        if (me == 0)
            fprintf(stderr, "fence_bench: needs 2 PEs or more\n");
        shmem_finalize();
        return 2;
    }
    long *rows = shmem_calloc((size_t)nrows, size);
    FILE *out = NULL;
    if (!rows)
        shmem_global_exit(1);
    if (me == 0 && csv && !(out = fopen(csv, "w"))) {
        perror(csv);
        shmem_global_exit(1);
    }
    if (me == 0) {
        printf("# fence_bench, %d PEs, %ld rows, %zu-byte rows, p2p width %d "
               "per PE, best of %ld\n", npes, nrows, size, width, reps);
        printf("%-10s %-8s %12s %12s\n", "label", "test", "us/row",
               "MFlops/s");
        if (out)
            fprintf(out, "label,test,size,value,unit\n");
    }
    long pass = 0;
    static const char *names[] = {"stream", "fan", "p2p"};
    for (int k = 0; k < 3; k++) {
        if (!strstr(which, names[k]))
            continue;
        double best = 0, mf = 0, v[100];
        for (long r = 0; r < reps; r++) {
            double m = 0;
            pass++;
            v[r] = k < 2 ? run_stream(rows, flag, nrows, size, k, pass)
                         : run_p2p(nrows, width, pass, &m);
            /* us per row: the best is the least; p2p's MFlops follow it. */
            if (r == 0 || v[r] < best) {
                best = v[r];
                mf = m;
            }
        }
        qsort(v, (size_t)reps, sizeof(double), cmp_double);
        if (me == 0) {
            printf("%-10s %-8s %12.2f", label, names[k], best);
            if (k == 2)
                printf(" %12.1f", mf);
            printf("   (median %.2f)\n", v[reps / 2]);
            if (out) {
                fprintf(out, "%s,%s,%zu,%.3f,us\n", label, names[k],
                        k == 2 ? sizeof(long) : size, best);
                if (k == 2)
                    fprintf(out, "%s,p2p_mflops,%d,%.1f,MFlops/s\n", label,
                            width, mf);
            }
        }
    }
    if (out)
        fclose(out);
    shmem_free(rows);
    shmem_finalize();
    return 0;
}
