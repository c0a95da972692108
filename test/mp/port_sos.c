/*
 * A program written for Sandia OpenSHMEM (SOS), unchanged but for the
 * checks: it tests HAVE_SHMEMX_WTIME before defining its own
 * shmemx_wtime (a static one would clash with the library's declaration),
 * and uses SOS's shmemx_ names for what OpenSHMEM 1.6 made standard
 * (shmemx_ibput/ibget typed, sized, context and generic; shmemx_signal_add
 * and _set; shmemx_<T>_sum_inscan/exscan), SHMEMX_TEAM_NODE,
 * SHMEMX_MALLOC_NO_BARRIER, the performance counters and
 * shmemx_register_gettid (shmemx_sos(3), shmemx_pcntr(3)). Every transfer
 * is checked. Before these names existed this file did not compile.
 */
#include "mp.h"

#include <shmemx.h>
#include <sys/time.h>

#ifndef HAVE_SHMEMX_WTIME
static double shmemx_wtime(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + (double)tv.tv_usec / 1000000.0;
}
#endif

#define NB 4 /* blocks */
#define BS 3 /* elements per block */
#define LEN (NB * (BS + 2))

static int src_i[LEN], dst_i[LEN];
static long src_l[LEN], dst_l[LEN];
static uint64_t src_64[LEN], dst_64[LEN];
static uint64_t sig;
static int scan_in[4], scan_out[4];
static long node_sum;
static char bulk[2][1 << 16];

static int me, npes;

static uint64_t my_gettid(void)
{
    return 42;
}

/* Blocked strided RMA: NB blocks of BS elements, source blocks every
 * BS + 1 elements, destination blocks every BS + 2 (a 1-element gap). */
static void check_ib(void)
{
    const int right = (me + 1) % npes, left = (me + npes - 1) % npes;

    for (int i = 0; i < LEN; i++) {
        src_i[i] = me * 1000 + i;
        src_l[i] = me * 1000L + i;
        src_64[i] = (uint64_t)me * 1000 + (uint64_t)i;
        dst_i[i] = -1;
        dst_l[i] = -1;
        dst_64[i] = UINT64_MAX;
    }
    shmem_barrier_all();
    /* Put into the right neighbour; it checks what the left one sent. */
    shmemx_int_ibput(dst_i, src_i, BS + 2, BS + 1, BS, NB, right);
    shmemx_ibput64(dst_64, src_64, BS + 2, BS + 1, BS, NB, right);
    shmem_barrier_all();
    for (int b = 0; b < NB; b++)
        for (int k = 0; k < BS + 2; k++) {
            const int d = b * (BS + 2) + k;
            const int want = k < BS ? left * 1000 + b * (BS + 1) + k : -1;
            CHECK(dst_i[d] == want, "shmemx_int_ibput element %d", d);
            CHECK(dst_64[d] == (k < BS ? (uint64_t)want : UINT64_MAX),
                  "shmemx_ibput64 element %d", d);
        }
    /* Get from the right neighbour, on the default context, into a local
     * layout with stride BS + 1: the generic and typed context forms. */
    long got[NB * (BS + 1)];
    int goti[NB * (BS + 1)];
    memset(got, 0xff, sizeof(got));
    memset(goti, 0xff, sizeof(goti));
    shmemx_ctx_long_ibget(SHMEM_CTX_DEFAULT, got, src_l, BS + 1, BS + 2, BS,
                          NB, right);
    shmemx_ibget(goti, src_i, BS + 1, BS + 2, BS, NB, right);
    for (int b = 0; b < NB; b++)
        for (int k = 0; k < BS; k++) {
            const int s = b * (BS + 2) + k, d = b * (BS + 1) + k;
            CHECK(got[d] == right * 1000L + s, "shmemx_ctx_long_ibget %d", d);
            CHECK(goti[d] == right * 1000 + s, "shmemx_ibget (generic) %d", d);
        }
    shmem_barrier_all();
}

/* Every PE adds (me + 1) to PE 0's signal, then PE 0 sets everyone's. */
static void check_signals(void)
{
    sig = 0;
    shmem_barrier_all();
    shmemx_signal_add(&sig, (uint64_t)me + 1, 0);
    shmemx_ctx_signal_add(SHMEM_CTX_DEFAULT, &sig, 0, 0);
    if (me == 0) {
        const uint64_t total = (uint64_t)npes * (uint64_t)(npes + 1) / 2;
        shmem_signal_wait_until(&sig, SHMEM_CMP_EQ, total);
        for (int pe = 0; pe < npes; pe++)
            shmemx_signal_set(&sig, 7, pe);
    }
    shmem_signal_wait_until(&sig, SHMEM_CMP_EQ, 7);
    shmem_barrier_all();
    shmemx_ctx_signal_set(SHMEM_CTX_DEFAULT, &sig, 9, me);
    CHECK(shmem_signal_fetch(&sig) == 9, "shmemx_ctx_signal_set on myself");
#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
    /* The generic names take a context first, as SOS's do (its test
     * shmemx/signal_set.c calls shmemx_signal_set(SHMEM_CTX_DEFAULT, ...)). */
    shmemx_signal_set(SHMEM_CTX_DEFAULT, &sig, 11, me);
    CHECK(shmem_signal_fetch(&sig) == 11, "generic shmemx_signal_set, ctx");
    shmemx_signal_add(SHMEM_CTX_DEFAULT, &sig, 2, me);
    CHECK(shmem_signal_fetch(&sig) == 13, "generic shmemx_signal_add, ctx");
    shmemx_signal_add(&sig, 1, me);
    CHECK(shmem_signal_fetch(&sig) == 14, "generic shmemx_signal_add");
#endif
    shmem_barrier_all();
}

static void check_scans(void)
{
    for (int i = 0; i < 4; i++)
        scan_in[i] = (me + 1) * (i + 1);
    shmem_barrier_all();
    CHECK(shmemx_int_sum_inscan(SHMEM_TEAM_WORLD, scan_out, scan_in, 4) == 0,
          "shmemx_int_sum_inscan returns 0");
    for (int i = 0; i < 4; i++)
        CHECK(scan_out[i] == (me + 1) * (me + 2) / 2 * (i + 1),
              "inscan element %d is %d", i, scan_out[i]);
    CHECK(shmemx_int_sum_exscan(SHMEM_TEAM_WORLD, scan_out, scan_in, 4) == 0,
          "shmemx_int_sum_exscan returns 0");
    for (int i = 0; i < 4; i++)
        CHECK(scan_out[i] == me * (me + 1) / 2 * (i + 1),
              "exscan element %d is %d", i, scan_out[i]);
    /* The generic SOS name. */
    CHECK(shmemx_sum_inscan(SHMEM_TEAM_WORLD, scan_out, scan_in, 4) == 0,
          "shmemx_sum_inscan returns 0");
    CHECK(scan_out[3] == (me + 1) * (me + 2) / 2 * 4, "generic inscan");
}

/* The node team is every PE of this one-node job (each PE alone under
 * SHMEM_FORCE_NETWORK, where each PE is its own node). */
static void check_node_team(void)
{
    const int n = shmem_team_n_pes(SHMEMX_TEAM_NODE);
    CHECK(n == (mp_network() ? 1 : npes), "SHMEMX_TEAM_NODE has %d PEs", n);
    CHECK(shmem_team_my_pe(SHMEMX_TEAM_NODE) == (mp_network() ? 0 : me),
          "my index in SHMEMX_TEAM_NODE");
    static long one;
    one = 1;
    shmem_team_sync(SHMEMX_TEAM_NODE);
    CHECK(shmem_long_sum_reduce(SHMEMX_TEAM_NODE, &node_sum, &one, 1) == 0,
          "sum over SHMEMX_TEAM_NODE returns 0");
    CHECK(node_sum == n, "sum over SHMEMX_TEAM_NODE is %ld", node_sum);
}

/* The allocation is the same on every PE: usable once the program's own
 * barrier has run. */
static void check_no_barrier(void)
{
    long *a = shmem_malloc_with_hints(64 * sizeof(long),
                                      SHMEMX_MALLOC_NO_BARRIER);
    long *b = shmem_malloc_with_hints(8 * sizeof(long),
                                      SHMEMX_MALLOC_NO_BARRIER |
                                          SHMEM_MALLOC_ATOMICS_REMOTE);
    CHECK(a && b, "shmem_malloc_with_hints(SHMEMX_MALLOC_NO_BARRIER)");
    shmem_barrier_all();
    shmem_long_p(&a[me % 64], me + 5, (me + 1) % npes);
    shmem_long_atomic_add(&b[0], 1, 0);
    shmem_barrier_all();
    const int left = (me + npes - 1) % npes;
    CHECK(a[left % 64] == left + 5, "put into a NO_BARRIER allocation");
    if (me == 0)
        CHECK(b[0] == npes, "atomics on a NO_BARRIER allocation: %ld", b[0]);
    shmem_free(b);
    shmem_free(a);
}

/* Counters of a private context: every put_nbi goes to the engines here
 * (SHMEM_SDMA_NBI_INLINE_MAX=0), so each one is an issued write, and all
 * are completed after quiet. Network operations are not counted. */
static void check_pcntr(void)
{
    shmem_ctx_t ctx;
    uint64_t iw = 1, cw = 1, ir = 1, cr = 1, tgt = 1;
    shmemx_pcntr_t all;
    const int reps = 10;

    CHECK(shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) == 0, "shmem_ctx_create");
    shmemx_pcntr_get_issued_write(ctx, &iw);
    shmemx_pcntr_get_completed_write(ctx, &cw);
    shmemx_pcntr_get_issued_read(ctx, &ir);
    shmemx_pcntr_get_completed_read(ctx, &cr);
    shmemx_pcntr_get_completed_target(&tgt);
    CHECK(iw == 0 && cw == 0 && ir == 0 && cr == 0 && tgt == 0,
          "a new context's counters are 0 (%llu %llu %llu %llu %llu)",
          (unsigned long long)iw, (unsigned long long)cw,
          (unsigned long long)ir, (unsigned long long)cr,
          (unsigned long long)tgt);
    memset(bulk[0], me + 1, sizeof(bulk[0]));
    for (int i = 0; i < reps; i++)
        shmem_ctx_putmem_nbi(ctx, bulk[1], bulk[0], sizeof(bulk[0]), me);
    shmemx_pcntr_get_issued_write(ctx, &iw);
    shmemx_pcntr_get_completed_write(ctx, &cw);
    CHECK(cw <= iw, "completed %llu <= issued %llu", (unsigned long long)cw,
          (unsigned long long)iw);
    if (!mp_network())
        CHECK(iw == (uint64_t)reps, "issued writes %llu, want %d",
              (unsigned long long)iw, reps);
    shmem_ctx_quiet(ctx);
    shmemx_pcntr_get_all(ctx, &all);
    CHECK(all.pending_put == iw && all.completed_put == iw,
          "after quiet: issued %llu completed %llu, want both %llu",
          (unsigned long long)all.pending_put,
          (unsigned long long)all.completed_put, (unsigned long long)iw);
    CHECK(all.pending_get == 0 && all.completed_get == 0 && all.target == 0,
          "read and target counters");
    CHECK(bulk[1][sizeof(bulk[1]) - 1] == (char)(me + 1), "the puts landed");
    shmem_ctx_destroy(ctx);
}

/* SOS's pre-1.4 bitwise AMO names and its active-set sync. */
static uint32_t bits32;
static uint64_t bits64;
static unsigned long bits_ul;
static long psync_sos[SHMEM_SYNC_SIZE];
static void check_bitwise(void)
{
    for (int i = 0; i < SHMEM_SYNC_SIZE; i++)
        psync_sos[i] = SHMEM_SYNC_VALUE;
    shmem_barrier_all();
    /* Every PE sets its bit on PE 0, then clears and flips on itself. */
    shmemx_uint32_atomic_or(&bits32, 1u << (me % 32), 0);
    shmemx_ctx_uint64_atomic_or(SHMEM_CTX_DEFAULT, &bits64,
                                (uint64_t)1 << (me % 64), 0);
    shmemx_sync(0, 0, npes, psync_sos);
    shmem_barrier_all();
    if (me == 0) {
        uint32_t want = 0;
        for (int p = 0; p < npes; p++)
            want |= 1u << (p % 32);
        CHECK(shmemx_uint32_atomic_fetch_and(&bits32, ~0u, 0) == want,
              "shmemx_uint32_atomic_or from every PE");
        CHECK(shmemx_uint64_atomic_fetch_xor(&bits64, 0, 0) == (uint64_t)want,
              "shmemx_ctx_uint64_atomic_or from every PE");
    }
    shmemx_int32_atomic_xor((int32_t *)(void *)&bits32, 0, me);
    CHECK(shmemx_int64_atomic_fetch_or((int64_t *)(void *)&bits64, 0, me) >= 0,
          "shmemx_int64_atomic_fetch_or");
    shmemx_ulong_atomic_or(&bits_ul, 6UL, me);
    CHECK(shmemx_ulong_atomic_fetch_and(&bits_ul, 2UL, me) == 6UL,
          "shmemx_ulong_atomic_or / fetch_and");
    CHECK(shmemx_ctx_ulong_atomic_fetch_xor(SHMEM_CTX_DEFAULT, &bits_ul, 3UL, me) == 2UL,
          "shmemx_ctx_ulong_atomic_fetch_xor");
    shmemx_uint32_atomic_and(&bits32, 0, me);
    CHECK(shmemx_uint32_atomic_fetch_or(&bits32, 0, me) == 0,
          "shmemx_uint32_atomic_and cleared the word");
    shmem_barrier_all();
}

int main(void)
{
    /* The counter check needs the engines for every nbi put. */
    setenv("SHMEM_SDMA_NBI_INLINE_MAX", "0", 1);
    /* SOS programs register their thread-id function before init. */
    shmemx_register_gettid(my_gettid);
    mp_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();

    const double t0 = shmemx_wtime();
    check_ib();
    check_signals();
    check_scans();
    check_node_team();
    check_no_barrier();
    check_pcntr();
    check_bitwise();
    const double t1 = shmemx_wtime();
    CHECK(t1 >= t0, "shmemx_wtime is monotonic");
    shmemx_register_gettid(NULL);

    shmem_barrier_all();
    if (me == 0)
        printf("port_sos: %d PEs, %.3f s\n", npes, t1 - t0);
    shmem_finalize();
    return 0;
}
