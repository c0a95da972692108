/*
 * net_ctx_bench: what a shmem context costs, over whatever path the PEs
 * reach each other by (run it under SHMEM_FORCE_NETWORK=1 for the network
 * path; bench/run-network.sh does, with each SHMEM_OFI_CTX_EPS in
 * BENCH_CTX_EPS). Per pass, every PE:
 *
 *   create   creates --ctx contexts (options alternate 0, PRIVATE)    ms/ctx
 *   first    through each, one 8-byte put to every other PE, then a
 *            quiet of that context (the first use: connections)      ms/ctx
 *   again    the same puts and quiets once more (connected)          ms/ctx
 *   destroy  destroys them                                           ms/ctx
 *
 * --passes passes (default 2: the second shows what contexts created
 * after others were destroyed cost). Each figure is the slowest PE's.
 * The data is checked: every PE's word from every context must arrive.
 * Prints a table and, with --csv FILE, "label,test,size,value,unit" rows
 * (size = the pass).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <shmem.h>

#define MAX_CTX 1024

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double slowest(double v)
{
    static double src, dst;
    src = v;
    shmem_barrier_all();
    shmem_double_max_reduce(SHMEM_TEAM_WORLD, &dst, &src, 1);
    return dst;
}

/* Every context writes its number plus the pass to each other PE. */
static void use(shmem_ctx_t *c, int nctx, long *word, long pass)
{
    const int me = shmem_my_pe(), npes = shmem_n_pes();
    for (int i = 0; i < nctx; i++) {
        long v = pass * MAX_CTX + i;
        for (int k = 1; k < npes; k++)
            shmem_ctx_long_p(c[i], &word[(size_t)me * MAX_CTX + (size_t)i],
                             v, (me + k) % npes);
        shmem_ctx_quiet(c[i]);
    }
}

static void check(int nctx, const long *word, long pass)
{
    const int me = shmem_my_pe(), npes = shmem_n_pes();
    shmem_barrier_all();
    for (int s = 0; s < npes; s++)
        for (int i = 0; s != me && i < nctx; i++)
            if (word[(size_t)s * MAX_CTX + (size_t)i] != pass * MAX_CTX + i) {
                fprintf(stderr, "net_ctx_bench: PE %d: context %d of PE %d "
                        "wrote %ld, expected %ld\n", me, i, s,
                        word[(size_t)s * MAX_CTX + (size_t)i],
                        pass * MAX_CTX + i);
                shmem_global_exit(1);
            }
    shmem_barrier_all();
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"ctx", required_argument, NULL, 'n'},
        {"passes", required_argument, NULL, 'p'},
        {"label", required_argument, NULL, 'l'},
        {"csv", required_argument, NULL, 'c'},
        {"quick", no_argument, NULL, 'q'},
        {NULL, 0, NULL, 0},
    };
    int nctx = 64, passes = 2, o;
    const char *label = "dmashmem", *csv = NULL;
    FILE *cf = NULL;

    while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (o) {
        case 'n':
            nctx = atoi(optarg);
            break;
        case 'p':
            passes = atoi(optarg);
            break;
        case 'l':
            label = optarg;
            break;
        case 'c':
            csv = optarg;
            break;
        case 'q':
            nctx = 16;
            break;
        default:
            fprintf(stderr, "usage: net_ctx_bench [--ctx N] [--passes P] "
                    "[--label L] [--csv FILE] [--quick]\n");
            return 2;
        }
    }
    if (nctx < 1 || nctx > MAX_CTX || passes < 1) {
        fprintf(stderr, "net_ctx_bench: --ctx must be 1-%d, --passes >= 1\n",
                MAX_CTX);
        return 2;
    }
    shmem_init();
    const int me = shmem_my_pe(), npes = shmem_n_pes();
    long *word = shmem_calloc((size_t)npes * MAX_CTX, sizeof(long));
    shmem_ctx_t *c = calloc((size_t)nctx, sizeof(*c));
    if (!word || !c) {
        fprintf(stderr, "net_ctx_bench: PE %d: out of memory\n", me);
        shmem_global_exit(1);
    }
    if (me == 0) {
        printf("# net_ctx_bench %s: %d PEs, %d contexts per PE, ms per "
               "context (slowest PE)\n", label, npes, nctx);
        printf("%-6s %10s %10s %10s %10s\n", "pass", "create", "first",
               "again", "destroy");
        if (csv && !(cf = fopen(csv, "w")))
            perror(csv);
    }
    for (int pass = 1; pass <= passes; pass++) {
        double t[4], t0;
        shmem_barrier_all();
        t0 = now_s();
        for (int i = 0; i < nctx; i++)
            if (shmem_ctx_create(i % 2 ? SHMEM_CTX_PRIVATE : 0, &c[i])) {
                fprintf(stderr, "net_ctx_bench: PE %d: shmem_ctx_create %d "
                        "failed\n", me, i);
                shmem_global_exit(1);
            }
        t[0] = slowest(now_s() - t0);
        t0 = now_s();
        use(c, nctx, word, 2L * pass);
        t[1] = slowest(now_s() - t0);
        check(nctx, word, 2L * pass);
        t0 = now_s();
        use(c, nctx, word, 2L * pass + 1);
        t[2] = slowest(now_s() - t0);
        check(nctx, word, 2L * pass + 1);
        t0 = now_s();
        for (int i = 0; i < nctx; i++)
            shmem_ctx_destroy(c[i]);
        t[3] = slowest(now_s() - t0);
        if (me == 0) {
            static const char *const name[] = {"create", "first", "again",
                                               "destroy"};
            printf("%-6d", pass);
            for (int k = 0; k < 4; k++) {
                printf(" %10.3f", t[k] * 1e3 / nctx);
                if (cf)
                    fprintf(cf, "%s,ctx_%s,%d,%.4f,ms\n", label, name[k],
                            pass, t[k] * 1e3 / nctx);
            }
            printf("\n");
        }
    }
    if (cf)
        fclose(cf);
    free(c);
    shmem_free(word);
    shmem_finalize();
    return 0;
}
