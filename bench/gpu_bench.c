/*
 * GPU benchmark of the cuda backend (docs/PERFORMANCE.md, "GPU (cuda
 * backend)"). One process per PE, any number of PEs and GPUs:
 *
 *   shmem_launcher -n 2 bench/gpu_bench [--quick] [--coll-only]
 *                  [--compare nccl] [--label NAME] [--max BYTES]
 *
 * Rows (all buffers in the device heap):
 *   RMA (PE 0 drives, PE 1 is the target; needs 2 PEs):
 *     put_nbi bandwidth  1 KiB .. max: k x put_nbi then one quiet
 *     putmem 8 B         blocking put latency (median of single calls)
 *     64 x 1 KiB         put_nbi x 64 then quiet (median); adjacent, and
 *                        scattered (2 KiB stride: nothing to merge)
 *   Collectives, 1 KiB .. max bytes per PE (x4 steps), us per call, the
 *   slowest PE's mean over back-to-back calls after a warm-up:
 *     fcollect, alltoall            shmem_fcollectmem / shmem_alltoallmem
 *                                   (variant: SHMEM_FCOLLECT_ALGORITHM /
 *                                   SHMEM_ALLTOALL_ALGORITHM, --label)
 *     fcollect_os, alltoall_os      the _on_stream forms + stream sync
 *     fcollect_persistent           shmemx_req_start + shmemx_req_wait
 *   --compare nccl: libnccl.so.2 is dlopen'ed (no NCCL headers needed:
 *     the few prototypes of NCCL 2.28 are declared below) and
 *     ncclAllGather / ncclAlltoAll (grouped ncclSend/ncclRecv before
 *     2.28) are timed the same way (call + stream sync, mean), with the
 *     default CTA policy and with NCCL_CTA_POLICY_ZERO, on ncclMemAlloc
 *     buffers registered with ncclCommWindowRegister(NCCL_WIN_COLL_
 *     SYMMETRIC). The unique id goes through shmem_broadcastmem. NCCL
 *     allows one rank per GPU: with several PEs on a GPU it is skipped.
 *     Keep NCCL_NVLS_ENABLE=0 (the device script sets it).
 * The table is printed last by PE 0; with $OUT set it is also written to
 * $OUT/gpu_bench[-LABEL].csv. Exits 77 where no GPU is found.
 */
#include "test/gpu/gpu_util.h"

#include <execinfo.h>
#include <limits.h>
#include <signal.h>
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

/* A crash says where (the launcher ends the job, buffered output is lost). */
static void on_fault(int sig)
{
    void *bt[32];
    int n = backtrace(bt, 32);
    char msg[64];
    int len = snprintf(msg, sizeof(msg), "gpu_bench: signal %d, backtrace:\n",
                       sig);
    if (write(2, msg, (size_t)len) < 0)
        _exit(128 + sig);
    backtrace_symbols_fd(bt, n, 2);
    _exit(128 + sig);
}

/* ------------------------------------------------------------ results */

typedef struct row {
    char test[32], variant[24];
    size_t bytes;
    double value;
    const char *unit;
} row_t;

static row_t rows[512];
static int nrows;
static int me, npes;

static void add(const char *test, const char *variant, size_t bytes,
                double value, const char *unit)
{
    if (me != 0 || nrows == (int)DSM_TEST_ARRAY(rows))
        return;
    row_t *r = &rows[nrows++];
    snprintf(r->test, sizeof(r->test), "%s", test);
    snprintf(r->variant, sizeof(r->variant), "%s", variant);
    r->bytes = bytes;
    r->value = value;
    r->unit = unit;
    printf("%-22s %-14s %12zu %12.2f %6s\n", test, variant, bytes, value,
           unit);
    fflush(stdout);
}

/* The slowest PE's value (collective over the world). */
static double *red_src, *red_dst;
static double slowest(double v)
{
    *red_src = v;
    shmem_double_max_reduce(SHMEM_TEAM_WORLD, red_dst, red_src, 1);
    return *red_dst;
}

static int iters_for(size_t per_pe)
{
    size_t total = per_pe * (size_t)npes;
    long k = (long)((size_t)(1u << 30) / (total ? total : 1));
    return (int)(k < 5 ? 5 : k > 200 ? 200 : k);
}

/* ------------------------------------------------------------ NCCL */

typedef void *nccl_comm_t;
typedef void *nccl_win_t;
typedef int nccl_result_t;
typedef struct { char internal[128]; } nccl_id_t;
/* ncclConfig_t of NCCL 2.28 (struct ncclConfig_v22800). */
typedef struct {
    size_t size;
    unsigned int magic, version;
    int blocking, cgaClusterSize, minCTAs, maxCTAs;
    const char *netName;
    int splitShare, trafficClass;
    const char *commName;
    int collnetEnable, CTAPolicy, shrinkShare, nvlsCTAs, nChannelsPerNetPeer,
        nvlinkCentricSched;
} nccl_config_t;
enum { NCCL_UINT8 = 1, NCCL_CTA_POLICY_DEFAULT = 0, NCCL_CTA_POLICY_ZERO = 2,
       NCCL_WIN_COLL_SYMMETRIC = 1 };

static struct {
    void *lib;
    int version;
    nccl_result_t (*GetVersion)(int *);
    const char *(*GetErrorString)(nccl_result_t);
    nccl_result_t (*GetUniqueId)(nccl_id_t *);
    nccl_result_t (*CommInitRankConfig)(nccl_comm_t *, int, nccl_id_t, int,
                                        nccl_config_t *);
    nccl_result_t (*CommDestroy)(nccl_comm_t);
    nccl_result_t (*MemAlloc)(void **, size_t);
    nccl_result_t (*MemFree)(void *);
    nccl_result_t (*CommWindowRegister)(nccl_comm_t, void *, size_t,
                                        nccl_win_t *, int);
    nccl_result_t (*CommWindowDeregister)(nccl_comm_t, nccl_win_t);
    nccl_result_t (*AllGather)(const void *, void *, size_t, int,
                               nccl_comm_t, CUstream);
    nccl_result_t (*AlltoAll)(const void *, void *, size_t, int, nccl_comm_t,
                              CUstream);
    nccl_result_t (*Send)(const void *, size_t, int, int, nccl_comm_t,
                          CUstream);
    nccl_result_t (*Recv)(void *, size_t, int, int, nccl_comm_t, CUstream);
    nccl_result_t (*GroupStart)(void);
    nccl_result_t (*GroupEnd)(void);
} nc;

#define NC_CK(call)                                                            \
    do {                                                                       \
        nccl_result_t r_ = (call);                                             \
        if (r_ != 0) {                                                         \
            fprintf(stderr, "gpu_bench: PE %d: %s failed: %s (%d)\n", me,      \
                    #call, nc.GetErrorString ? nc.GetErrorString(r_) : "?",    \
                    r_);                                                       \
            shmem_global_exit(1);                                              \
        }                                                                      \
    } while (0)

/* 0 when loaded; else a reason. */
static const char *nccl_load(void)
{
    nc.lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!nc.lib)
        nc.lib = dlopen("/usr/lib/x86_64-linux-gnu/libnccl.so.2",
                        RTLD_NOW | RTLD_LOCAL);
    if (!nc.lib)
        return "libnccl.so.2 not found";
#define NC_SYM(f, req)                                                         \
    do {                                                                       \
        void *p_ = dlsym(nc.lib, "nccl" #f);                                   \
        if (!p_ && (req))                                                      \
            return "libnccl.so.2 lacks nccl" #f;                               \
        memcpy(&nc.f, &p_, sizeof(p_));                                        \
    } while (0)
    NC_SYM(GetVersion, 1);
    NC_SYM(GetErrorString, 1);
    NC_SYM(GetUniqueId, 1);
    NC_SYM(CommInitRankConfig, 1);
    NC_SYM(CommDestroy, 1);
    NC_SYM(MemAlloc, 1);
    NC_SYM(MemFree, 1);
    NC_SYM(CommWindowRegister, 0);
    NC_SYM(CommWindowDeregister, 0);
    NC_SYM(AllGather, 1);
    NC_SYM(AlltoAll, 0);
    NC_SYM(Send, 1);
    NC_SYM(Recv, 1);
    NC_SYM(GroupStart, 1);
    NC_SYM(GroupEnd, 1);
#undef NC_SYM
    if (nc.GetVersion(&nc.version) != 0)
        return "ncclGetVersion failed";
    return NULL;
}

static void nccl_a2a(const char *s, char *d, size_t cnt, nccl_comm_t c,
                     CUstream st)
{
    if (nc.AlltoAll) {
        NC_CK(nc.AlltoAll(s, d, cnt, NCCL_UINT8, c, st));
        return;
    }
    NC_CK(nc.GroupStart());
    for (int r = 0; r < npes; r++) {
        NC_CK(nc.Send(s + (size_t)r * cnt, cnt, NCCL_UINT8, r, c, st));
        NC_CK(nc.Recv(d + (size_t)r * cnt, cnt, NCCL_UINT8, r, c, st));
    }
    NC_CK(nc.GroupEnd());
}

static void nccl_rows(size_t maxb, CUstream st, const char *why_not)
{
    if (why_not) {
        if (me == 0)
            printf("# nccl: skipped: %s\n", why_not);
        return;
    }
    nccl_id_t *id = shmem_malloc(sizeof(*id) * 2);
    if (!id)
        shmem_global_exit(1);
    for (int mode = 0; mode < 2; mode++) {
        const int zero = mode == 1;
        const char *label = zero ? "nccl_zero" : "nccl_default";
        if (zero && nc.version < 22800) {
            if (me == 0)
                printf("# nccl %d: no CTA policy before 2.28; zero-CTA rows "
                       "skipped\n", nc.version);
            break;
        }
        if (me == 0)
            NC_CK(nc.GetUniqueId(&id[0]));
        shmem_broadcastmem(SHMEM_TEAM_WORLD, &id[1], &id[0], sizeof(*id), 0);
        nccl_config_t cfg = {
            .size = sizeof(nccl_config_t), .magic = 0xcafebeef,
            .version = 22800,
            .blocking = INT_MIN, .cgaClusterSize = INT_MIN,
            .minCTAs = INT_MIN, .maxCTAs = INT_MIN, .netName = NULL,
            .splitShare = INT_MIN, .trafficClass = INT_MIN, .commName = NULL,
            .collnetEnable = INT_MIN,
            .CTAPolicy = zero ? NCCL_CTA_POLICY_ZERO : NCCL_CTA_POLICY_DEFAULT,
            .shrinkShare = INT_MIN, .nvlsCTAs = INT_MIN,
            .nChannelsPerNetPeer = INT_MIN, .nvlinkCentricSched = INT_MIN};
        if (nc.version < 22800) { /* older layouts end before CTAPolicy */
            cfg.version = (unsigned)nc.version;
            cfg.CTAPolicy = INT_MIN;
        }
        nccl_comm_t comm;
        NC_CK(nc.CommInitRankConfig(&comm, npes, me == 0 ? id[0] : id[1], me,
                                    &cfg));
        size_t bytes = maxb * (size_t)npes;
        void *sb, *rb;
        nccl_win_t ws = NULL, wr = NULL;
        NC_CK(nc.MemAlloc(&sb, bytes));
        NC_CK(nc.MemAlloc(&rb, bytes));
        GPU_CK(gcu.MemsetD8(DP(sb), 3, bytes));
        GPU_CK(gcu.StreamSynchronize(NULL));
        if (nc.CommWindowRegister) {
            NC_CK(nc.CommWindowRegister(comm, sb, bytes, &ws,
                                        NCCL_WIN_COLL_SYMMETRIC));
            NC_CK(nc.CommWindowRegister(comm, rb, bytes, &wr,
                                        NCCL_WIN_COLL_SYMMETRIC));
        }
        for (int c = 0; c < 2; c++)
            for (size_t b = 1024; b <= maxb; b *= 4) {
                int k = iters_for(b);
                for (int w = 0; w < 3; w++) {
                    if (c == 0)
                        NC_CK(nc.AllGather(sb, rb, b, NCCL_UINT8, comm, st));
                    else
                        nccl_a2a(sb, rb, b, comm, st);
                    GPU_CK(gcu.StreamSynchronize(st));
                }
                shmem_barrier_all();
                double t0 = now_us();
                for (int i = 0; i < k; i++) {
                    if (c == 0)
                        NC_CK(nc.AllGather(sb, rb, b, NCCL_UINT8, comm, st));
                    else
                        nccl_a2a(sb, rb, b, comm, st);
                    GPU_CK(gcu.StreamSynchronize(st));
                }
                double t = slowest((now_us() - t0) / k);
                add(c == 0 ? "nccl_allgather" : "nccl_alltoall", label, b, t,
                    "us");
            }
        if (ws)
            NC_CK(nc.CommWindowDeregister(comm, ws));
        if (wr)
            NC_CK(nc.CommWindowDeregister(comm, wr));
        NC_CK(nc.MemFree(sb));
        NC_CK(nc.MemFree(rb));
        NC_CK(nc.CommDestroy(comm));
        shmem_barrier_all();
    }
    shmem_free(id);
}

/* ------------------------------------------------------------ dmashmem */

static void rma_rows(char *src, char *dst, size_t maxb, int quick)
{
    if (npes < 2) {
        if (me == 0)
            printf("# RMA rows need 2 PEs\n");
        return;
    }
    if (me == 0) {
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
            add("put_nbi_bw", "-", b, (double)b * k / t / 1e3, "GB/s");
        }
        enum { LAT = 2000 };
        static double v[LAT];
        for (int i = 0; i < 100; i++)
            shmem_putmem(dst, src, 8, 1);
        for (int i = 0; i < LAT; i++) {
            double t0 = now_us();
            shmem_putmem(dst, src, 8, 1);
            v[i] = now_us() - t0;
        }
        add("putmem_lat_median", "-", 8, median(v, LAT), "us");
        add("putmem_lat_p10", "-", 8, v[LAT / 10], "us");
        for (int i = 0; i < LAT; i++) {
            double t0 = now_us();
            (void)shmem_long_g((long *)(void *)src, 1);
            v[i] = now_us() - t0;
        }
        add("g_lat_median", "-", 8, median(v, LAT), "us");
        enum { REP = 500 };
        static double w[REP];
        for (int r = 0; r < REP; r++) {
            double t0 = now_us();
            for (int i = 0; i < 64; i++)
                shmem_putmem_nbi(dst + i * 1024, src + i * 1024, 1024, 1);
            shmem_quiet();
            w[r] = now_us() - t0;
        }
        add("nbi64x1k_quiet_median", "-", 65536, median(w, REP), "us");
        /* The same with a 2 KiB stride at both ends: copies the backend
         * cannot merge into one (SHMEM_CUDA_MERGE), 64 driver copies. */
        if (maxb >= 128 * 1024) {
            for (int r = 0; r < REP; r++) {
                double t0 = now_us();
                for (int i = 0; i < 64; i++)
                    shmem_putmem_nbi(dst + i * 2048, src + i * 2048, 1024, 1);
                shmem_quiet();
                w[r] = now_us() - t0;
            }
            add("nbi64x1k_scatter_median", "-", 65536, median(w, REP), "us");
        }
    }
    shmem_barrier_all();
}

enum { C_FC, C_A2A, C_FC_OS, C_A2A_OS };

static void coll_call(int c, char *dst, const char *src, size_t b,
                      CUstream st)
{
    switch (c) {
    case C_FC:
        shmem_fcollectmem(SHMEM_TEAM_WORLD, dst, src, b);
        break;
    case C_A2A:
        shmem_alltoallmem(SHMEM_TEAM_WORLD, dst, src, b);
        break;
    case C_FC_OS:
        shmemx_fcollectmem_on_stream(SHMEM_TEAM_WORLD, dst, src, b, st);
        GPU_CK(gcu.StreamSynchronize(st));
        break;
    default:
        shmemx_alltoallmem_on_stream(SHMEM_TEAM_WORLD, dst, src, b, st);
        GPU_CK(gcu.StreamSynchronize(st));
        break;
    }
}

static void coll_rows(char *src, char *dst, size_t maxb, CUstream st,
                      const char *variant)
{
    static const char *const names[] = {"fcollect", "alltoall",
                                        "fcollect_os", "alltoall_os"};
    for (int c = 0; c < 4; c++)
        for (size_t b = 1024; b <= maxb; b *= 4) {
            int k = iters_for(b);
            for (int w = 0; w < 3; w++)
                coll_call(c, dst, src, b, st);
            shmem_barrier_all();
            double t0 = now_us();
            for (int i = 0; i < k; i++)
                coll_call(c, dst, src, b, st);
            double t = slowest((now_us() - t0) / k);
            add(names[c], c >= C_FC_OS ? "stream" : variant, b, t, "us");
        }
    /* Persistent fcollect, back-to-back start/wait. */
    for (size_t b = 1024; b <= maxb; b *= 4) {
        shmemx_req_t req;
        int k = iters_for(b) * 2;
        if (shmemx_fcollectmem_init(SHMEM_TEAM_WORLD, dst, src, b, &req)) {
            if (me == 0)
                printf("# fcollect_persistent %zu B: init failed\n", b);
            break;
        }
        for (int w = 0; w < 5; w++) {
            shmemx_req_start(req);
            shmemx_req_wait(req);
        }
        shmem_barrier_all();
        double t0 = now_us();
        for (int i = 0; i < k; i++) {
            shmemx_req_start(req);
            shmemx_req_wait(req);
        }
        double t = slowest((now_us() - t0) / k);
        shmemx_req_free(req);
        add("fcollect_persistent", variant, b, t, "us");
    }
}

static void report(const char *label)
{
    if (me != 0)
        return;
    const char *out = getenv("OUT");
    FILE *csv = NULL;
    if (out && *out) {
        char path[4096];
        snprintf(path, sizeof(path), "%s/gpu_bench%s%s.csv", out,
                 *label ? "-" : "", label);
        csv = fopen(path, "w");
        if (!csv)
            fprintf(stderr, "gpu_bench: cannot write %s\n", path);
        else
            fprintf(csv, "label,npes,test,variant,bytes,value,unit\n");
    }
    printf("\n# gpu_bench table%s%s (%d PEs)\n", *label ? ": " : "", label,
           npes);
    printf("%-22s %-14s %12s %12s %6s\n", "test", "variant", "bytes", "value",
           "unit");
    for (int i = 0; i < nrows; i++) {
        const row_t *r = &rows[i];
        printf("%-22s %-14s %12zu %12.2f %6s\n", r->test, r->variant,
               r->bytes, r->value, r->unit);
        if (csv)
            fprintf(csv, "%s,%d,%s,%s,%zu,%.3f,%s\n", label, npes, r->test,
                    r->variant, r->bytes, r->value, r->unit);
    }
    if (csv)
        fclose(csv);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    int quick = 0, coll_only = 0, nccl = 0;
    const char *label = "";
    size_t maxb = 256u << 20;

    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick"))
            quick = 1;
        else if (!strcmp(argv[i], "--coll-only"))
            coll_only = 1;
        else if (!strcmp(argv[i], "--compare") && i + 1 < argc &&
                 !strcmp(argv[i + 1], "nccl"))
            nccl = 1, i++;
        else if (!strcmp(argv[i], "--label") && i + 1 < argc)
            label = argv[++i];
        else if (!strcmp(argv[i], "--max") && i + 1 < argc)
            maxb = strtoull(argv[++i], NULL, 0);
        else {
            fprintf(stderr, "usage: gpu_bench [--quick] [--coll-only] "
                            "[--compare nccl] [--label NAME] [--max BYTES]\n");
            return 2;
        }
    }
    if (quick && maxb > (16u << 20))
        maxb = 16u << 20;

    signal(SIGSEGV, on_fault);
    signal(SIGBUS, on_fault);
    setvbuf(stdout, NULL, _IOLBF, 0);
    /* NVLink multicast stays off (machine rule, GPU-FACTS.md). */
    setenv("NCCL_NVLS_ENABLE", "0", 1);
    gpu_skip_unless_gpu("gpu_bench");
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    gpu_ctx();
    red_src = shmem_malloc(2 * sizeof(double));
    red_dst = red_src + 1;
    int *devs = shmem_malloc(sizeof(int) * (size_t)npes);
    if (!red_src || !devs)
        shmem_global_exit(1);

    /* Which GPU each PE drives (NCCL wants one rank per GPU). */
    CUdevice dev;
    GPU_CK(gcu.CtxGetDevice(&dev));
    for (int pe = 0; pe < npes; pe++)
        shmem_int_p(&devs[me], (int)dev, pe);
    shmem_barrier_all();
    int shared = 0;
    for (int i = 0; i < npes; i++)
        for (int j = 0; j < i; j++)
            shared |= devs[i] == devs[j];

    /* Device buffers: src and dst of max x npes bytes (alltoall); halve
     * until they fit the device heap (every PE gets the same answer). */
    char *src = NULL, *dst = NULL;
    for (; maxb >= 1024; maxb /= 2) {
        src = shmemx_malloc_device(maxb * (size_t)npes);
        dst = src ? shmemx_malloc_device(maxb * (size_t)npes) : NULL;
        if (src && dst)
            break;
        if (src)
            shmem_free(src);
        src = dst = NULL;
    }
    if (!src) {
        fprintf(stderr, "gpu_bench: PE %d: no device heap (set "
                        "SHMEM_DEVICE_HEAP_SIZE)\n", me);
        shmem_global_exit(1);
    }
    gpu_memset(DP(src), 1, maxb * (size_t)npes);
    CUstream st;
    GPU_CK(gcu.StreamCreate(&st, CU_STREAM_NON_BLOCKING));
    const char *fa = getenv("SHMEM_FCOLLECT_ALGORITHM");
    const char *variant = *label ? label : fa ? fa : "auto";
    if (me == 0) {
        printf("# gpu_bench: %d PEs on GPUs", npes);
        for (int i = 0; i < npes; i++)
            printf(" %d", devs[i]);
        printf(", max %zu bytes per PE, variant %s%s\n", maxb, variant,
               (fa && (!strcmp(fa, "bcast") || !strcmp(fa, "swap")))
                   ? " (no native bcast/swap on NVIDIA: runs pcpy)"
                   : "");
        printf("%-22s %-14s %12s %12s %6s\n", "test", "variant", "bytes",
               "value", "unit");
    }
    shmem_barrier_all();

    if (!coll_only)
        rma_rows(src, dst, maxb, quick);
    coll_rows(src, dst, maxb, st, variant);
    if (nccl) {
        const char *why = shared ? "several PEs share a GPU (NCCL needs one "
                                   "rank per GPU)"
                                 : nccl_load();
        /* Every PE must agree: skip if any PE could not load it. */
        int *bad = shmem_malloc(sizeof(int) * 2);
        bad[0] = why != NULL;
        shmem_int_max_reduce(SHMEM_TEAM_WORLD, &bad[1], &bad[0], 1);
        if (bad[1] && !why)
            why = "another PE could not load libnccl.so.2";
        if (me == 0 && !why)
            printf("# nccl %d (NCCL_NVLS_ENABLE=%s)\n", nc.version,
                   getenv("NCCL_NVLS_ENABLE") ? getenv("NCCL_NVLS_ENABLE")
                                              : "unset");
        nccl_rows(maxb, st, why);
        shmem_free(bad);
    }
    shmem_barrier_all();
    report(label);
    GPU_CK(gcu.StreamDestroy(st));
    shmem_free(dst);
    shmem_free(src);
    shmem_free(devs);
    shmem_free(red_src);
    shmem_finalize();
    return 0;
}
