/*
 * The HIP device API's packet producer (include/shmemx_hip.h) run on the
 * host against the SDMA engine model: the header compiled as plain C with
 * SHMEMX_HIP_HOST_PRODUCER, host threads in the place of GPU threads, the
 * handle from the library's shmemx_dev_get over the hsa backend (over the
 * model a GPU address is the host address). test/hsa/dev_host.sh runs it
 * on 1, 2 and 4 PEs.
 *
 *   dev_host [threads [puts]]   (default 8 x 1000)
 *     every thread t of PE me puts `puts` blocks of varied sizes (the
 *     store path up to store_max, the engine above it, a few split in
 *     several COPY_LINEARs) into its own area of PE (me + 1 + t) % npes,
 *     putmem and putmem_nbi mixed, then putmem_signal_nbi(SIGNAL_ADD) into
 *     the target's arrival counter for the source PE; each PE waits
 *     (signal_wait_until) for every thread that targets it and checks
 *     every byte; then getmem/getmem_nbi of every block back (checked),
 *     contended atomics (exact totals), p/g of every size, SET signals
 *     through the engine and the store path, barrier_all from one thread
 *     per PE in a loop, and barriers that must hold back a PE that is
 *     late with its writes.
 *   dev_host refuse     shmemx_dev_get must return -1 (the script checks
 *                       the line it printed)
 *     Then fcollectmem, alltoallmem and broadcastmem (root rotating)
 *     over all PEs, sizes on the store path and the engines, by one
 *     thread and by a group of threads splitting the data (as a warp's
 *     lanes), every byte checked.
 *   dev_host badpe      a put to PE npes: one line, the process aborts
 *   dev_host badput     a putmem_nbi whose last 8 bytes lie past the end
 *                       of the heap: one line, the process aborts
 *   dev_host badaddr    a p to an address outside the symmetric segments
 *                       (on the stack): one line, the process aborts
 *   dev_host badcoll    an fcollectmem whose destination runs past the
 *                       end of the heap: one line, the process aborts
 */
#define SHMEMX_HIP_HOST_PRODUCER 1
#include <shmem.h>
#include <shmemx.h>
#include <shmemx_hip.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SRC_BYTES (6u << 20) /* a thread's source pattern */
#define MAX_THREADS 16

static shmemx_dev_t d;
static int me, npes, nthreads = 8, nputs = 1000;
static unsigned char *src_buf;  /* [nthreads][SRC_BYTES], symmetric */
static unsigned char *dst_buf;  /* [nthreads][area], symmetric */
static size_t area;             /* bytes a thread's puts take */
static uint64_t *arrive;        /* [npes] signals from each source PE */
static uint64_t *set_sig;       /* [npes] SET signals */
static uint64_t *amo64;         /* [2] */
static int32_t *amo32;          /* [2] */
static long fails;

#define FAIL(...)                                                              \
    do {                                                                       \
        fprintf(stderr, "FAIL: PE %d: ", me);                                  \
        fprintf(stderr, __VA_ARGS__);                                          \
        fputc('\n', stderr);                                                   \
        __atomic_fetch_add(&fails, 1, __ATOMIC_RELAXED);                       \
    } while (0)

static unsigned char pat(int pe, int t, size_t x)
{
    return (unsigned char)(x * 13 + (x >> 11) + (size_t)t * 37 +
                           (size_t)pe * 101 + 1);
}

/* Put i of a thread: its size (stores up to store_max, the engine above,
 * two split across COPY_LINEAR packets) and the source offset. */
static size_t put_size(int i)
{
    if (i % 10 == 3)
        return 1 + (size_t)(i * 7) % (d.store_max ? d.store_max : 256);
    if (nputs >= 4 && (i == nputs / 2 || i == nputs - 1))
        return DSM_SDMA_COPY_MAX + 4096 + (size_t)i; /* two packets */
    return d.store_max + 1 + (size_t)(i * 997) % 16384;
}

static size_t put_src_off(int i)
{
    return (size_t)(i * 4099) % (SRC_BYTES - (DSM_SDMA_COPY_MAX + 8192 +
                                              (size_t)nputs));
}

static int target_of(int pe, int t)
{
    return (pe + 1 + t) % npes;
}

static void *producer(void *arg)
{
    int t = (int)(intptr_t)arg, to = target_of(me, t);
    unsigned char *dst = dst_buf + (size_t)t * area;
    const unsigned char *src = src_buf + (size_t)t * SRC_BYTES;
    size_t off = 0;

    for (int i = 0; i < nputs; i++) {
        size_t n = put_size(i);
        if (i % 3 == 0)
            shmemx_dev_putmem(d, dst + off, src + put_src_off(i), n, to);
        else
            shmemx_dev_putmem_nbi(d, dst + off, src + put_src_off(i), n, to);
        off += (n + 7) & ~(size_t)7;
    }
    /* The data, then one more block and the signal in the same
     * reservation (engine) or after a fence (stores). put_signal orders
     * the signal after its own block only: without the fence a store-path
     * signal (64 B) may overtake the engine puts still in flight (CI saw
     * the last 4 MiB put's first byte unwritten on 4 PEs under load). */
    if (t % 2)
        shmemx_dev_fence(d);
    shmemx_dev_putmem_signal_nbi(d, dst + off, src, t % 2 ? 64 : 65536,
                                 &arrive[me], 1, SHMEM_SIGNAL_ADD, to);
    shmemx_dev_quiet(d);
    return NULL;
}

/* Every byte thread t of PE `from` put here. */
static void check_area(int from, int t)
{
    const unsigned char *dst = dst_buf + (size_t)t * area;
    size_t off = 0, bad = 0;
    for (int i = 0; i < nputs; i++) {
        size_t n = put_size(i), so = put_src_off(i);
        for (size_t k = 0; k < n; k++)
            if (dst[off + k] != pat(from, t, so + k) && bad++ == 0)
                FAIL("put %d (%zu bytes) from PE %d thread %d: byte %zu is "
                     "%u, not %u", i, n, from, t, k, dst[off + k],
                     pat(from, t, so + k));
        off += (n + 7) & ~(size_t)7;
    }
    size_t last = t % 2 ? 64 : 65536;
    for (size_t k = 0; k < last; k++)
        if (dst[off + k] != pat(from, t, k) && bad++ == 0)
            FAIL("signalled block from PE %d thread %d: byte %zu wrong",
                 from, t, k);
}

/* Get every block back from the target into the source's spare area,
 * compare with what was put. */
static void *getter(void *arg)
{
    int t = (int)(intptr_t)arg, to = target_of(me, t);
    unsigned char *remote = dst_buf + (size_t)t * area;
    size_t off = 0;

    /* Our own area t of dst_buf holds what another PE put here: the gets
     * land in the tail of this thread's source area (its puts are done;
     * symmetric, so the engine reaches it). */
    unsigned char *land = src_buf + (size_t)t * SRC_BYTES +
                          (SRC_BYTES - (DSM_SDMA_COPY_MAX + 8192));
    for (int i = 0; i < nputs; i += 7) {
        size_t n = put_size(i), so = put_src_off(i);
        if (n > DSM_SDMA_COPY_MAX + 8192)
            n = DSM_SDMA_COPY_MAX + 8192;
        memset(land, 0, n);
        if (i % 2)
            shmemx_dev_getmem(d, land, remote + off, n, to);
        else {
            shmemx_dev_getmem_nbi(d, land, remote + off, n, to);
            shmemx_dev_quiet(d);
        }
        for (size_t k = 0; k < n; k++)
            if (land[k] != pat(me, t, so + k)) {
                FAIL("get %d (%zu bytes) from PE %d: byte %zu is %u, not %u",
                     i, n, to, k, land[k], pat(me, t, so + k));
                break;
            }
        for (int j = i; j < i + 7 && j < nputs; j++)
            off += (put_size(j) + 7) & ~(size_t)7;
    }
    return NULL;
}

#define AMO_ROUNDS 500
static void *amo_thread(void *arg)
{
    (void)arg;
    for (int i = 0; i < AMO_ROUNDS; i++) {
        shmemx_dev_uint64_atomic_fetch_add(d, &amo64[0], 1, 0);
        shmemx_dev_int32_atomic_add(d, &amo32[0], 2, npes - 1);
        /* CAS increment loop on PE 0's second words. */
        uint64_t v = shmemx_dev_uint64_g(d, &amo64[1], 0), w;
        while ((w = shmemx_dev_uint64_atomic_compare_swap(d, &amo64[1], v,
                                                          v + 1, 0)) != v)
            v = w;
        int32_t x = shmemx_dev_int32_g(d, &amo32[1], npes - 1), y;
        while ((y = shmemx_dev_int32_atomic_compare_swap(d, &amo32[1], x,
                                                         x + 1, npes - 1)) !=
               x)
            x = y;
        (void)shmemx_dev_int64_atomic_fetch_add(d, (int64_t *)&amo64[0], 0,
                                                0);
        shmemx_dev_uint32_atomic_add(d, (uint32_t *)&amo32[0], 0, npes - 1);
    }
    return NULL;
}

static void run_threads(void *(*fn)(void *), int n)
{
    pthread_t th[MAX_THREADS];
    for (int t = 0; t < n; t++)
        if (pthread_create(&th[t], NULL, fn, (void *)(intptr_t)t)) {
            perror("pthread_create");
            exit(1);
        }
    for (int t = 0; t < n; t++)
        pthread_join(th[t], NULL);
}

static void phase_pg(void)
{
    int to = (me + 1) % npes;
    char *pg = shmem_calloc(64, 1);
    shmem_barrier_all();
    shmemx_dev_char_p(d, &pg[0], (char)(me + 1), to);
    shmemx_dev_int16_p(d, (int16_t *)&pg[2], (int16_t)(me + 2), to);
    shmemx_dev_int32_p(d, (int32_t *)&pg[4], me + 3, to);
    shmemx_dev_uint64_p(d, (uint64_t *)&pg[8], (uint64_t)me + 4, to);
    shmemx_dev_double_p(d, (double *)&pg[16], me + 0.5, to);
    shmemx_dev_barrier_all(d);
    int from = (me + npes - 1) % npes;
    if (pg[0] != (char)(from + 1) || *(int16_t *)&pg[2] != from + 2 ||
        *(int32_t *)&pg[4] != from + 3 ||
        *(uint64_t *)&pg[8] != (uint64_t)from + 4 ||
        *(double *)&pg[16] != from + 0.5)
        FAIL("p from PE %d: wrong values", from);
    if (shmemx_dev_int32_g(d, (int32_t *)&pg[4], to) != me + 3 ||
        shmemx_dev_double_g(d, (double *)&pg[16], to) != me + 0.5)
        FAIL("g from PE %d: wrong values", to);
    shmem_barrier_all();
    shmem_free(pg);
}

/* SET signals: through the engine (after 64 KiB) and through stores. */
static void phase_set(void)
{
    int to = (me + 1) % npes, from = (me + npes - 1) % npes;
    for (uint64_t r = 1; r <= 50; r++) {
        size_t n = r % 2 ? 65536 : 32;
        shmemx_dev_putmem_signal_nbi(d, dst_buf, src_buf, n, &set_sig[me],
                                     r << 32 | r, SHMEM_SIGNAL_SET, to);
        uint64_t v = shmemx_dev_signal_wait_until(d, &set_sig[from],
                                                  SHMEM_CMP_EQ, r << 32 | r);
        if (v != (r << 32 | r) ||
            shmemx_dev_signal_fetch(d, &set_sig[from]) != v)
            FAIL("SET signal round %llu: %#llx", (unsigned long long)r,
                 (unsigned long long)v);
        for (size_t k = 0; k < n; k++)
            if (dst_buf[k] != pat(from, 0, k)) {
                FAIL("SET signal round %llu overtook its data (byte %zu)",
                     (unsigned long long)r, k);
                break;
            }
        /* The peer may put the next round only once we have checked. */
        shmemx_dev_barrier_all(d);
    }
}

/* 5. fcollectmem / alltoallmem / broadcastmem (#31), one PE's part run
 * by coll_T host threads: with 1, the public routines; with more, the
 * threads split the data as a CUDA warp's lanes do (shmemx_dev__coll_part
 * and __bcast_part, what shmemx_cuda.h's _warp and _block forms run),
 * then thread 0 ends it (shmemx_dev__coll_end). Sizes on the store path and the engines (word
 * and byte copies), two destinations in turn (a PE may write the next
 * round's blocks while its peer still checks this one's). */
static int coll_T;
static pthread_barrier_t coll_bar;
static unsigned char *coll_src, *coll_dst[2];
static size_t coll_sizes[8];
#define COLL_ROUNDS 4
#define COLL_MAX 200003

static unsigned char cpat(int from, int to, int round, size_t k)
{
    return (unsigned char)(k * 7 + (k >> 9) + (size_t)from * 31 +
                           (size_t)to * 57 + (size_t)round * 13 + 1);
}

static const char *const coll_name[3] = {"fcollectmem", "alltoallmem",
                                         "broadcastmem"};

static void *coll_thread(void *arg)
{
    int t = (int)(intptr_t)arg, T = coll_T, round = 0;
    for (size_t si = 0; si < sizeof(coll_sizes) / sizeof(*coll_sizes); si++)
        for (int kind = 0; kind < 3; kind++)
            for (int r = 0; r < COLL_ROUNDS; r++, round++) {
                const int a2a = kind == SHMEMX_DEV__ALLTOALL,
                          root = round % npes;
                size_t n = coll_sizes[si];
                unsigned char *dst = coll_dst[round % 2];
                if (t == 0)
                    for (int b = 0; b < (a2a ? npes : 1); b++)
                        for (size_t k = 0; k < n; k++)
                            coll_src[(size_t)b * n + k] =
                                cpat(me, a2a ? b : 0, round, k);
                if (T == 1) {
                    if (kind == SHMEMX_DEV__BCAST)
                        shmemx_dev_broadcastmem(d, dst, coll_src, n, root);
                    else if (a2a)
                        shmemx_dev_alltoallmem(d, dst, coll_src, n);
                    else
                        shmemx_dev_fcollectmem(d, dst, coll_src, n);
                } else {
                    unsigned long long e = shmemx_dev__next_epoch(&d);
                    pthread_barrier_wait(&coll_bar); /* source written */
                    shmemx_dev__coll_part(&d, (char *)dst,
                                          (const char *)coll_src, n, kind,
                                          root, e, (unsigned)t, (unsigned)T,
                                          "dev_host group");
                    shmemx_dev__fence_sys();
                    pthread_barrier_wait(&coll_bar);
                    if (t == 0)
                        shmemx_dev__coll_end(
                            &d, shmemx_dev__coll_sends(&d, kind, root, n), e,
                            "dev_host group");
                    pthread_barrier_wait(&coll_bar);
                }
                if (t)
                    continue;
                /* Barriers between some calls: they and the collectives
                 * share arrival words and epochs. */
                if (T == 1 && round % 3 == 2)
                    shmemx_dev_barrier_all(d);
                const int bcast = kind == SHMEMX_DEV__BCAST;
                for (int from = 0; from < (bcast ? 1 : npes); from++) {
                    const unsigned char *b = dst + (size_t)from * n;
                    int src_pe = bcast ? root : from;
                    for (size_t k = 0; k < n; k++)
                        if (b[k] != cpat(src_pe, a2a ? me : 0, round, k)) {
                            FAIL("%s of %zu bytes, %d thread%s, round %d: "
                                 "block of PE %d, byte %zu is %u, not %u",
                                 coll_name[kind], n, T, T == 1 ? "" : "s",
                                 round, src_pe, k, b[k],
                                 cpat(src_pe, a2a ? me : 0, round, k));
                            break;
                        }
                }
            }
    return NULL;
}

static void phase_coll(int threads)
{
    size_t cm = shmemx_dev__coll_store_max(&d); /* stores up to it */
    size_t sizes[] = {0, 1, 24, cm, cm + 8, 3 * cm + 5, 65536, COLL_MAX};
    memcpy(coll_sizes, sizes, sizeof(sizes));
    coll_T = threads;
    if (pthread_barrier_init(&coll_bar, NULL, (unsigned)threads)) {
        perror("pthread_barrier_init");
        exit(1);
    }
    run_threads(coll_thread, threads);
    pthread_barrier_destroy(&coll_bar);
    shmem_barrier_all();
}

/* Barriers: in round r, PE r % npes naps before it writes r into its
 * slot on every PE; after shmemx_dev_barrier_all every PE must see r in
 * every slot (a barrier that lets a PE through early fails here), and a
 * second barrier keeps the next round's writes behind every check. */
static void phase_barrier(void)
{
    uint64_t *slot = shmem_calloc((size_t)npes, sizeof(uint64_t));
    if (!slot) {
        FAIL("shmem_calloc of the barrier slots");
        return;
    }
    shmem_barrier_all();
    for (uint64_t r = 1; r <= 40; r++) {
        if ((int)(r % (uint64_t)npes) == me)
            usleep(2000);
        for (int pe = 0; pe < npes; pe++)
            shmemx_dev_uint64_p(d, &slot[me], r, pe);
        shmemx_dev_barrier_all(d);
        for (int j = 0; j < npes; j++)
            if (__atomic_load_n(&slot[j], __ATOMIC_ACQUIRE) != r) {
                FAIL("barrier round %llu: PE %d's slot is %llu",
                     (unsigned long long)r, j,
                     (unsigned long long)__atomic_load_n(&slot[j],
                                                         __ATOMIC_ACQUIRE));
                break;
            }
        shmemx_dev_barrier_all(d);
    }
    shmem_barrier_all();
    shmem_free(slot);
}

int main(int argc, char **argv)
{
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();

    if (argc > 1 && !strcmp(argv[1], "refuse")) {
        int rc = shmemx_dev_get(&d);
        shmem_finalize();
        if (rc != -1) {
            fprintf(stderr, "FAIL: PE %d: shmemx_dev_get returned %d, not "
                    "-1\n", me, rc);
            return 1;
        }
        return 0;
    }
    if (shmemx_dev_get(&d)) {
        fprintf(stderr, "FAIL: PE %d: shmemx_dev_get\n", me);
        return 1;
    }
    if (argc > 1 && !strcmp(argv[1], "badpe")) {
        /* PE 0 only, so that the line the test looks for is PE 0's (with
         * every PE calling, whichever aborted first ended the job). */
        if (me == 0)
            shmemx_dev_putmem_nbi(d, &arrive, &arrive, 8, npes);
        shmem_barrier_all(); /* the other PEs wait to be ended */
        return 1; /* not reached: PE 0 aborts and the job ends */
    }
    if (argc > 1 && !strcmp(argv[1], "badput")) {
        /* PE 0: 64 bytes whose last 8 lie past the end of the heap. */
        static char buf[64];
        if (me == 0)
            shmemx_dev_putmem_nbi(
                d, (char *)(uintptr_t)(d.lo[0] + d.size[0]) - 56, buf, 64,
                npes - 1);
        shmem_barrier_all();
        return 1; /* not reached */
    }
    if (argc > 1 && !strcmp(argv[1], "badaddr")) {
        /* PE 0: a p to an address in no symmetric segment (the stack;
         * statics are symmetric). */
        volatile uint64_t priv = 0;
        if (me == 0)
            shmemx_dev_uint64_p(d, (uint64_t *)&priv, 1, npes - 1);
        shmem_barrier_all();
        return 1; /* not reached */
    }
    if (argc > 1 && !strcmp(argv[1], "badcoll")) {
        /* PE 0: a destination whose last blocks run past the end of the
         * heap segment (the first byte is in it). */
        if (me == 0)
            shmemx_dev_fcollectmem(d,
                                   (char *)(uintptr_t)(d.lo[0] + d.size[0]) -
                                       64 * (size_t)npes + 8,
                                   &arrive, 64);
        shmem_barrier_all();
        return 1; /* not reached */
    }
    if (argc > 1)
        nthreads = atoi(argv[1]);
    if (argc > 2)
        nputs = atoi(argv[2]);
    if (nthreads < 1 || nthreads > MAX_THREADS || nputs < 1) {
        fprintf(stderr, "usage: dev_host [threads (1-%d) [puts]]\n",
                MAX_THREADS);
        return 2;
    }
    area = 0;
    for (int i = 0; i < nputs; i++)
        area += (put_size(i) + 7) & ~(size_t)7;
    area += 65536 + 4096;

    src_buf = shmem_malloc((size_t)nthreads * SRC_BYTES);
    dst_buf = shmem_calloc((size_t)nthreads, area);
    arrive = shmem_calloc((size_t)npes, sizeof(uint64_t));
    set_sig = shmem_calloc((size_t)npes, sizeof(uint64_t));
    amo64 = shmem_calloc(2, sizeof(uint64_t));
    amo32 = shmem_calloc(2, sizeof(int32_t));
    coll_src = shmem_malloc((size_t)npes * COLL_MAX);
    coll_dst[0] = shmem_calloc((size_t)npes, COLL_MAX);
    coll_dst[1] = shmem_calloc((size_t)npes, COLL_MAX);
    if (!src_buf || !dst_buf || !arrive || !set_sig || !amo64 || !amo32 ||
        !coll_src || !coll_dst[0] || !coll_dst[1]) {
        fprintf(stderr, "FAIL: PE %d: shmem_malloc\n", me);
        return 1;
    }
    for (int t = 0; t < nthreads; t++)
        for (size_t x = 0; x < SRC_BYTES; x++)
            src_buf[(size_t)t * SRC_BYTES + x] = pat(me, t, x);
    shmem_barrier_all();

    /* 1. many producers into one queue, data checked by the target. */
    run_threads(producer, nthreads);
    for (int from = 0; from < npes; from++) {
        uint64_t want = 0;
        for (int t = 0; t < nthreads; t++)
            want += target_of(from, t) == me;
        if (want)
            shmemx_dev_signal_wait_until(d, &arrive[from], SHMEM_CMP_GE,
                                         want);
        if (arrive[from] != want)
            FAIL("%llu signals from PE %d, not %llu",
                 (unsigned long long)arrive[from], from,
                 (unsigned long long)want);
    }
    /* Thread t of PE from wrote area t here when it targets us. */
    for (int from = 0; from < npes; from++)
        for (int t = 0; t < nthreads; t++)
            if (target_of(from, t) == me)
                check_area(from, t);
    shmem_barrier_all();

    /* 2. gets back. */
    run_threads(getter, nthreads);
    shmem_barrier_all();

    /* 3. contended atomics from every thread of every PE. */
    run_threads(amo_thread, nthreads);
    shmem_barrier_all();
    {
        uint64_t want64 = (uint64_t)npes * nthreads * AMO_ROUNDS;
        if (me == 0 && (amo64[0] != want64 || amo64[1] != want64))
            FAIL("64-bit atomics: %llu and %llu, not %llu",
                 (unsigned long long)amo64[0], (unsigned long long)amo64[1],
                 (unsigned long long)want64);
        if (me == npes - 1 && (amo32[0] != (int32_t)(2 * want64) ||
                               amo32[1] != (int32_t)want64))
            FAIL("32-bit atomics: %d and %d, not %d and %d", amo32[0],
                 amo32[1], (int)(2 * want64), (int)want64);
    }

    /* 4. p/g, SET signals, device barriers. */
    phase_pg();
    phase_set();
    phase_barrier();
    for (int i = 0; i < 200; i++)
        shmemx_dev_barrier_all(d);
    shmemx_dev_fence(d);
    shmemx_dev_quiet(d);

    /* 5. device collectives: one thread, then a group. */
    phase_coll(1);
    phase_coll(nthreads < 4 ? nthreads : 4);

    static long lf, all;
    lf = fails;
    shmem_barrier_all();
    shmem_long_sum_reduce(SHMEM_TEAM_WORLD, &all, &lf, 1);
    shmem_finalize();
    if (all) {
        fprintf(stderr, "FAIL: PE %d: %ld failures\n", me, fails);
        return 1;
    }
    if (me == 0)
        printf("PASS: %d PE%s x %d producer threads x %d puts\n", npes,
               npes == 1 ? "" : "s", nthreads, nputs);
    return 0;
}
