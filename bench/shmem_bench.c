/*
 * shmem_bench: point-to-point and synchronisation micro-benchmarks between
 * two PEs.
 *
 * Written against the OpenSHMEM 1.4 API only (routines from shmem.h, no
 * shmemx, no library internals, timing with clock_gettime) so that the same
 * file builds with dmashmem and with Open MPI's oshcc, and the two sets of
 * numbers measure exactly the same thing. PE 0 is the origin, PE 1 the
 * target; further PEs only join the barriers.
 *
 *   put       shmem_putmem(size) + shmem_quiet() per iteration        us
 *   get       shmem_getmem(size) per iteration                        us
 *   pingpong  PE 0: putmem + fence + long_p(flag); PE 1 waits on the
 *             flag with long_wait_until and answers the same way;
 *             half of the round trip                                  us
 *   bw        windows of W shmem_putmem_nbi(size), one shmem_quiet
 *             per window; bytes / time                                GB/s
 *   rate      the same with 8-byte messages                           Mmsg/s
 *   barrier   shmem_barrier_all on every PE                           us
 *
 * A repetition is the mean over a timed loop that follows an untimed
 * warm-up of the same operation; each measurement is repeated (--reps) and
 * the table shows the best repetition, the CSV the best and the median.
 * After each repetition the receiving side checks the first and last byte
 * of the transfer, so a library that is fast because it is wrong does not
 * pass.
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

#define MIN_SIZE ((size_t)8)
#define MAX_SIZE ((size_t)4 << 20)
#define RATE_SIZE ((size_t)8)
#define DEFAULT_WINDOW 64
#define MAX_SIZES 32
#define DEFAULT_REPS 5
#define QUICK_REPS 1
#define MAX_REPS 100

/* Iteration counts are derived from a byte budget per measurement, so
 * that small sizes run long enough to rise above the clock and large ones
 * stay short; each measurement is repeated --reps times. The default run
 * takes about 10 s per library on a 2-core machine, --quick well under
 * one. */
#define LAT_BYTES ((size_t)256 << 20)
#define LAT_MIN_ITERS 50L
#define LAT_MAX_ITERS 20000L
#define BW_BYTES ((size_t)1 << 30)
#define BW_MIN_ITERS 10L
#define BW_MAX_ITERS 5000L
#define RATE_ITERS 20000L
#define BARRIER_ITERS 20000L
#define QUICK_DIVISOR 20L

enum test_id { T_PUT, T_GET, T_PINGPONG, T_BW, T_RATE, T_BARRIER, T_COUNT };

static const struct test_desc {
    const char *name;   /* --tests and the CSV "test" column */
    const char *column; /* table heading */
    const char *unit;
    int sized; /* swept over message sizes */
} tests[T_COUNT] = {
    [T_PUT] = {"put", "put_us", "us", 1},
    [T_GET] = {"get", "get_us", "us", 1},
    [T_PINGPONG] = {"pingpong", "pingpong_us", "us", 1},
    [T_BW] = {"bw", "put_nbi_GB/s", "GB/s", 1},
    [T_RATE] = {"rate", "msg_rate_8B", "Mmsg/s", 0},
    [T_BARRIER] = {"barrier", "barrier_all", "us", 0},
};

struct opts {
    unsigned mask; /* bit per enum test_id */
    int quick;
    int window;
    int reps;
    const char *csv;
    const char *label;
    long divisor; /* iteration counts divided by this (--iters-div) */
};

/* Everything a measurement needs; one instance, owned by main. */
struct bench {
    const struct opts *o;
    int me;
    unsigned char *src; /* symmetric, MAX_SIZE: origin data */
    unsigned char *dst; /* symmetric, MAX_SIZE: target of puts and gets */
    long *flag;         /* symmetric: pingpong arrival word */
    long seq;           /* last pingpong value; both PEs count alike */
    unsigned char pattern;
    FILE *csv;                   /* PE 0 only */
    char lib[SHMEM_MAX_NAME_LEN]; /* shmem_info_get_name, CSV-safe */
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long clamp_iters(long n, long lo, long hi)
{
    return n < lo ? lo : n > hi ? hi : n;
}

static long iters_for(const struct bench *b, enum test_id t, size_t size)
{
    long n;
    switch (t) {
    case T_BW:
        n = clamp_iters((long)(BW_BYTES / ((size_t)b->o->window * size)),
                        BW_MIN_ITERS, BW_MAX_ITERS);
        break;
    case T_RATE:
        n = RATE_ITERS;
        break;
    case T_BARRIER:
        n = BARRIER_ITERS;
        break;
    default:
        n = clamp_iters((long)(LAT_BYTES / size), LAT_MIN_ITERS,
                        LAT_MAX_ITERS);
        break;
    }
    if (b->o->divisor > 1)
        n = n / b->o->divisor > 5 ? n / b->o->divisor : 5;
    return n;
}

/* Untimed iterations first: page faults, connection setup and lazy
 * registration (UCX) land there, not in the mean. */
static long warmup_for(long iters)
{
    return iters / 10 + 2;
}

static void fail(const char *what, size_t size, unsigned char got,
                 unsigned char want)
{
    fprintf(stderr,
            "shmem_bench: PE %d: %s of %zu bytes: read 0x%02x, expected "
            "0x%02x\n",
            shmem_my_pe(), what, size, got, want);
    shmem_global_exit(2);
}

static void check_bytes(const struct bench *b, const unsigned char *p,
                        size_t size, const char *what)
{
    if (p[0] != b->pattern)
        fail(what, size, p[0], b->pattern);
    if (p[size - 1] != b->pattern)
        fail(what, size, p[size - 1], b->pattern);
}

/* ---- the measurements: each returns seconds per operation on PE 0 (per
 * iteration, per half round trip, per window, per barrier) ---- */

static double run_put(struct bench *b, size_t size, long iters)
{
    double t0 = 0;
    if (b->me == 0) {
        long w = warmup_for(iters);
        for (long i = -w; i < iters; i++) {
            if (i == 0)
                t0 = now_s();
            shmem_putmem(b->dst, b->src, size, 1);
            shmem_quiet();
        }
        t0 = (now_s() - t0) / (double)iters;
    }
    shmem_barrier_all();
    if (b->me == 1)
        check_bytes(b, b->dst, size, "put");
    return t0;
}

static double run_get(struct bench *b, size_t size, long iters)
{
    double t0 = 0;
    if (b->me == 0) {
        long w = warmup_for(iters);
        for (long i = -w; i < iters; i++) {
            if (i == 0)
                t0 = now_s();
            shmem_getmem(b->dst, b->src, size, 1);
        }
        t0 = (now_s() - t0) / (double)iters;
        check_bytes(b, b->dst, size, "get");
    }
    shmem_barrier_all();
    return t0;
}

/* The fence orders the data before the flag, which is the pattern real
 * codes use; the flag carries a sequence number so that it never needs
 * resetting (a reset would be one more remote write to order). */
static double run_pingpong(struct bench *b, size_t size, long iters)
{
    const long w = warmup_for(iters);
    double t0 = 0;

    if (b->me == 0) {
        for (long i = -w; i < iters; i++) {
            if (i == 0)
                t0 = now_s();
            b->seq++;
            shmem_putmem(b->dst, b->src, size, 1);
            shmem_fence();
            shmem_long_p(b->flag, b->seq, 1);
            shmem_long_wait_until(b->flag, SHMEM_CMP_GE, b->seq);
        }
        t0 = (now_s() - t0) / (double)iters / 2;
        check_bytes(b, b->dst, size, "pingpong reply");
    } else if (b->me == 1) {
        for (long i = -w; i < iters; i++) {
            b->seq++;
            shmem_long_wait_until(b->flag, SHMEM_CMP_GE, b->seq);
            shmem_putmem(b->dst, b->src, size, 0);
            shmem_fence();
            shmem_long_p(b->flag, b->seq, 0);
        }
        check_bytes(b, b->dst, size, "pingpong");
    }
    shmem_barrier_all();
    return t0;
}

static double run_window(struct bench *b, size_t size, long iters)
{
    double t0 = 0;
    if (b->me == 0) {
        long w = warmup_for(iters);
        for (long i = -w; i < iters; i++) {
            if (i == 0)
                t0 = now_s();
            for (int k = 0; k < b->o->window; k++)
                shmem_putmem_nbi(b->dst, b->src, size, 1);
            shmem_quiet();
        }
        t0 = (now_s() - t0) / (double)iters;
    }
    shmem_barrier_all();
    if (b->me == 1)
        check_bytes(b, b->dst, size, "put_nbi");
    return t0;
}

static double run_barrier(struct bench *b, long iters)
{
    long w = warmup_for(iters);
    double t0 = 0;
    for (long i = -w; i < iters; i++) {
        if (i == 0)
            t0 = now_s();
        shmem_barrier_all();
    }
    return (now_s() - t0) / (double)iters;
}

/* A test's value: the best repetition and the median one, in the test's
 * unit. The best is what the table shows: on a small shared machine the
 * noise (other processes, the scheduler) only ever adds time, so the
 * fastest repetition is the closest to what the library costs; the median
 * goes to the CSV to show the spread. */
struct result {
    double best, median;
};

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double to_unit(const struct bench *b, enum test_id t, size_t size,
                      double s)
{
    switch (t) {
    case T_BW:
        return (double)size * b->o->window / s / 1e9;
    case T_RATE:
        return b->o->window / s / 1e6;
    default:
        return s * 1e6;
    }
}

/* One measurement, on every PE. The buffers are reset before each
 * repetition so that the byte check sees this transfer, not an earlier
 * one. */
static struct result measure(struct bench *b, enum test_id t, size_t size,
                             long iters)
{
    double secs[MAX_REPS];
    int reps = b->o->reps;

    for (int r = 0; r < reps; r++) {
        memset(b->src, b->pattern, size);
        memset(b->dst, (unsigned char)~b->pattern, size);
        shmem_barrier_all();
        switch (t) {
        case T_PUT:
            secs[r] = run_put(b, size, iters);
            break;
        case T_GET:
            secs[r] = run_get(b, size, iters);
            break;
        case T_PINGPONG:
            secs[r] = run_pingpong(b, size, iters);
            break;
        case T_BW:
        case T_RATE:
            secs[r] = run_window(b, size, iters);
            break;
        case T_BARRIER:
        case T_COUNT:
            secs[r] = run_barrier(b, iters);
            break;
        }
    }
    if (b->me != 0)
        return (struct result){0, 0};
    qsort(secs, (size_t)reps, sizeof(secs[0]), cmp_double);
    return (struct result){to_unit(b, t, size, secs[0]),
                           to_unit(b, t, size, secs[reps / 2])};
}

static void csv_row(const struct bench *b, enum test_id t, size_t size,
                    long iters, struct result v)
{
    if (!b->csv)
        return;
    fprintf(b->csv, "%s,%s,%s,%zu,%ld,%d,%.6g,%.6g,%s\n", b->lib,
            b->o->label, tests[t].name, size, iters, b->o->reps, v.best,
            v.median, tests[t].unit);
}

static int selected(const struct bench *b, enum test_id t)
{
    return (b->o->mask >> t) & 1u;
}

/* The sizes of the sweep: powers of two, or a few for --quick. */
static int make_sizes(int quick, size_t *sizes)
{
    static const size_t q[] = {8, 4096, 65536, (size_t)1 << 20};
    int n = 0;
    if (quick) {
        for (; n < (int)(sizeof(q) / sizeof(q[0])); n++)
            sizes[n] = q[n];
        return n;
    }
    for (size_t s = MIN_SIZE; s <= MAX_SIZE && n < MAX_SIZES; s <<= 1)
        sizes[n++] = s;
    return n;
}

static void print_header(const struct bench *b, int npes)
{
    int major, minor;
    shmem_info_get_version(&major, &minor);
    printf("# shmem_bench: %s, OpenSHMEM %d.%d, %d PEs, window %d, best of "
           "%d%s%s%s\n",
           b->lib, major, minor, npes, b->o->window, b->o->reps,
           b->o->quick ? ", quick" : "", *b->o->label ? ", label " : "",
           b->o->label);
    printf("# put: putmem+quiet; get: getmem; pingpong: half round trip "
           "(putmem+fence+long_p, long_wait_until); put_nbi: %d x "
           "putmem_nbi + quiet\n",
           b->o->window);
    printf("%10s %12s %12s %12s %14s\n", "size", tests[T_PUT].column,
           tests[T_GET].column, tests[T_PINGPONG].column, tests[T_BW].column);
    fflush(stdout);
}

static void print_cell(const struct bench *b, enum test_id t, double v,
                       int width)
{
    if (selected(b, t))
        printf(" %*.3f", width, v);
    else
        printf(" %*s", width, "-");
}

static void sweep(struct bench *b)
{
    static const int width[] = {12, 12, 12, 14};
    size_t sizes[MAX_SIZES];
    int n = make_sizes(b->o->quick, sizes);

    for (int i = 0; i < n; i++) {
        size_t size = sizes[i];
        struct result v[T_BW + 1] = {{0, 0}};
        b->pattern = (unsigned char)(0x40 + i);
        for (int t = T_PUT; t <= T_BW; t++) {
            if (!selected(b, (enum test_id)t))
                continue;
            long iters = iters_for(b, (enum test_id)t, size);
            v[t] = measure(b, (enum test_id)t, size, iters);
            if (b->me == 0)
                csv_row(b, (enum test_id)t, size, iters, v[t]);
        }
        if (b->me == 0) {
            printf("%10zu", size);
            for (int t = T_PUT; t <= T_BW; t++)
                print_cell(b, (enum test_id)t, v[t].best, width[t]);
            printf("\n");
            fflush(stdout);
        }
    }
}

static void scalars(struct bench *b)
{
    for (int t = T_RATE; t <= T_BARRIER; t++) {
        if (!selected(b, (enum test_id)t))
            continue;
        /* The barrier moves no data; its CSV size is 0. */
        size_t size = t == T_RATE ? RATE_SIZE : 0;
        long iters = iters_for(b, (enum test_id)t, RATE_SIZE);
        b->pattern = 0x3c;
        struct result v = measure(b, (enum test_id)t, RATE_SIZE, iters);
        if (b->me == 0) {
            csv_row(b, (enum test_id)t, size, iters, v);
            printf("%-22s %10.3f %s\n",
                   t == T_RATE ? "msg_rate (8 B put_nbi)" : "barrier_all", v.best,
                   tests[t].unit);
            fflush(stdout);
        }
    }
}

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: shmem_bench [--quick] [--csv FILE] [--tests LIST] "
            "[--window W] [--label STR]\n"
            "Run on 2 PEs. Point-to-point latency, bandwidth and message "
            "rate from PE 0 to PE 1,\nand barrier_all.\n"
            "  --quick       few sizes and fewer iterations (CI smoke run)\n"
            "  --csv FILE    also write library,label,test,size,iters,reps,"
            "value,median,unit\n"
            "                rows to FILE\n"
            "  --tests LIST  comma-separated subset of put,get,pingpong,bw,"
            "rate,barrier\n"
            "  --window W    put_nbi operations per quiet (default %d)\n"
            "  --reps N      repetitions of each measurement; the table shows "
            "the best,\n"
            "                the CSV the best and the median (default %d, "
            "--quick %d)\n"
            "  --label STR   tag for the CSV rows and the header (e.g. a "
            "setting under test)\n"
            "  --iters-div N divide every iteration count by N (at least 5 "
            "remain), all sizes\n"
            "                kept: slow paths such as the network on "
            "loopback (--quick: %ld)\n",
            DEFAULT_WINDOW, DEFAULT_REPS, QUICK_REPS, QUICK_DIVISOR);
}

static int parse_tests(const char *list, unsigned *mask)
{
    char buf[256];
    char *save = NULL;

    if (strlen(list) >= sizeof(buf))
        return -1;
    strcpy(buf, list);
    *mask = 0;
    for (char *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        int t;
        for (t = 0; t < T_COUNT; t++)
            if (!strcmp(tok, tests[t].name))
                break;
        if (t == T_COUNT)
            return -1;
        *mask |= 1u << t;
    }
    return *mask ? 0 : -1;
}

/* Parsed before shmem_init so that --help and bad options cost no job
 * start-up; every PE parses the same argv and so reaches the same verdict.
 * Returns -1 to exit 0, 1 to exit with an error, 0 to run. */
static int parse_opts(int argc, char **argv, struct opts *o)
{
    static const struct option longopts[] = {
        {"quick", no_argument, NULL, 'q'},
        {"csv", required_argument, NULL, 'c'},
        {"tests", required_argument, NULL, 't'},
        {"window", required_argument, NULL, 'w'},
        {"label", required_argument, NULL, 'l'},
        {"reps", required_argument, NULL, 'r'},
        {"iters-div", required_argument, NULL, 'd'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    char *end;

    *o = (struct opts){(1u << T_COUNT) - 1, 0, DEFAULT_WINDOW, 0, NULL, "", 0};
    while ((c = getopt_long(argc, argv, "qc:t:w:l:r:d:h", longopts, NULL)) !=
           -1) {
        switch (c) {
        case 'q':
            o->quick = 1;
            break;
        case 'c':
            o->csv = optarg;
            break;
        case 't':
            if (parse_tests(optarg, &o->mask)) {
                fprintf(stderr, "shmem_bench: bad --tests '%s'\n", optarg);
                return 1;
            }
            break;
        case 'w':
            o->window = (int)strtol(optarg, &end, 10);
            if (*end || o->window < 1 || o->window > 1 << 16) {
                fprintf(stderr, "shmem_bench: bad --window '%s'\n", optarg);
                return 1;
            }
            break;
        case 'r':
            o->reps = (int)strtol(optarg, &end, 10);
            if (*end || o->reps < 1 || o->reps > MAX_REPS) {
                fprintf(stderr, "shmem_bench: bad --reps '%s' (1..%d)\n",
                        optarg, MAX_REPS);
                return 1;
            }
            break;
        case 'd':
            o->divisor = strtol(optarg, &end, 10);
            if (*end || o->divisor < 1 || o->divisor > 1000000) {
                fprintf(stderr, "shmem_bench: bad --iters-div '%s' "
                                "(1..1000000)\n", optarg);
                return 1;
            }
            break;
        case 'l':
            if (strchr(optarg, ',') || strchr(optarg, '\n')) {
                fprintf(stderr, "shmem_bench: --label must not contain "
                                "commas or newlines\n");
                return 1;
            }
            o->label = optarg;
            break;
        case 'h':
            usage(stdout);
            return -1;
        default:
            usage(stderr);
            return 1;
        }
    }
    if (!o->reps)
        o->reps = o->quick ? QUICK_REPS : DEFAULT_REPS;
    if (!o->divisor)
        o->divisor = o->quick ? QUICK_DIVISOR : 1;
    if (optind < argc) {
        fprintf(stderr, "shmem_bench: unexpected argument '%s'\n",
                argv[optind]);
        return 1;
    }
    return 0;
}

/* The library name becomes a CSV field: no commas, no line breaks. */
static void library_name(char *name)
{
    shmem_info_get_name(name);
    name[SHMEM_MAX_NAME_LEN - 1] = '\0';
    for (char *p = name; *p; p++)
        if (*p == ',' || *p == '\n' || *p == '\r')
            *p = ' ';
}

int main(int argc, char **argv)
{
    struct opts o;
    struct bench b = {0};
    int rc = parse_opts(argc, argv, &o), npes;

    if (rc)
        return rc < 0 ? 0 : rc;
    shmem_init();
    b.o = &o;
    b.me = shmem_my_pe();
    npes = shmem_n_pes();
    if (npes < 2) {
        if (b.me == 0)
            fprintf(stderr, "shmem_bench: needs 2 PEs, got %d\n", npes);
        shmem_finalize();
        return 1;
    }
    b.src = shmem_malloc(MAX_SIZE);
    b.dst = shmem_malloc(MAX_SIZE);
    b.flag = shmem_calloc(1, sizeof(long));
    if (!b.src || !b.dst || !b.flag) {
        fprintf(stderr, "shmem_bench: PE %d: shmem_malloc of %zu bytes "
                        "failed\n",
                b.me, 2 * MAX_SIZE);
        shmem_global_exit(1);
    }
    /* Touch every page once so that no measurement pays first-touch
     * faults. */
    memset(b.src, 0, MAX_SIZE);
    memset(b.dst, 0, MAX_SIZE);
    library_name(b.lib);
    if (b.me == 0) {
        if (o.csv) {
            b.csv = fopen(o.csv, "w");
            if (!b.csv) {
                perror(o.csv);
                shmem_global_exit(1);
            }
            fprintf(b.csv, "library,label,test,size,iters,reps,value,median,"
                           "unit\n");
        }
        print_header(&b, npes);
    }
    shmem_barrier_all();

    if (o.mask & ((1u << T_PUT) | (1u << T_GET) | (1u << T_PINGPONG) |
                  (1u << T_BW)))
        sweep(&b);
    scalars(&b);

    shmem_barrier_all();
    if (b.csv && fclose(b.csv)) {
        perror(o.csv);
        rc = 1;
    }
    shmem_free(b.flag);
    shmem_free(b.dst);
    shmem_free(b.src);
    shmem_finalize();
    return rc;
}
