/*
 * Contexts: create with every option combination, destroy (which completes
 * the context's operations), SHMEM_CTX_INVALID and bad options, the team
 * of a context, quiet isolation between contexts, pe_quiet and sessions.
 */
#include "mp.h"

#define BIG (16u << 20)

int main(void)
{
    /* two engines, so that contexts can be seen to complete apart */
    setenv("SHMEM_SDMA_ENGINES", "2", 0);
    mp_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;
    const long opts[] = {0,
                         SHMEM_CTX_PRIVATE,
                         SHMEM_CTX_SERIALIZED,
                         SHMEM_CTX_NOSTORE,
                         SHMEM_CTX_PRIVATE | SHMEM_CTX_SERIALIZED,
                         SHMEM_CTX_PRIVATE | SHMEM_CTX_NOSTORE,
                         SHMEM_CTX_SERIALIZED | SHMEM_CTX_NOSTORE,
                         SHMEM_CTX_PRIVATE | SHMEM_CTX_SERIALIZED |
                             SHMEM_CTX_NOSTORE};
    long *a = shmem_calloc(1024, sizeof(long));
    CHECK(a, "shmem_calloc");

    /* 1. every option set: create, put_nbi, destroy without a quiet: the
     * destroy completes the puts. */
    for (size_t o = 0; o < sizeof(opts) / sizeof(opts[0]); o++) {
        shmem_ctx_t c = SHMEM_CTX_DEFAULT;
        CHECK(shmem_ctx_create(opts[o], &c) == 0 && c != SHMEM_CTX_INVALID &&
                  c != SHMEM_CTX_DEFAULT,
              "ctx_create(0x%lx)", opts[o]);
        shmem_team_t t = SHMEM_TEAM_INVALID;
        CHECK(shmem_ctx_get_team(c, &t) == 0 && t == SHMEM_TEAM_WORLD,
              "ctx_get_team of a created context is not SHMEM_TEAM_WORLD");
        long v[1024];
        for (int i = 0; i < 1024; i++)
            v[i] = (long)o * 100000 + me * 1000 + i;
        shmem_ctx_long_put_nbi(c, a, v, 1024, right);
        shmem_ctx_destroy(c);
        shmem_barrier_all();
        for (int i = 0; i < 1024; i++)
            CHECK(a[i] == (long)o * 100000 + left * 1000 + i,
                  "opts 0x%lx: elem %d = %ld after destroy", opts[o], i, a[i]);
        shmem_barrier_all();
    }
    shmem_team_t t = SHMEM_TEAM_INVALID;
    CHECK(shmem_ctx_get_team(SHMEM_CTX_DEFAULT, &t) == 0 &&
              t == SHMEM_TEAM_WORLD, "team of SHMEM_CTX_DEFAULT");
    CHECK(shmem_ctx_get_team(SHMEM_CTX_INVALID, &t) != 0 &&
              t == SHMEM_TEAM_INVALID, "team of SHMEM_CTX_INVALID");
    shmem_ctx_destroy(SHMEM_CTX_INVALID); /* a no-op */
    shmem_ctx_t bad = SHMEM_CTX_DEFAULT;
    CHECK(shmem_ctx_create(1L << 20, &bad) != 0 && bad == SHMEM_CTX_INVALID,
          "ctx_create accepted unknown options");

    /* 2. quiet isolation. A has large transfers in flight. B's operations
     * are complete on return (blocking put, AMO) or go to another engine
     * (SHMEM_SDMA_ENGINES=2: B targets this PE, A the right neighbour, whose
     * engine differs when npes is even): a quiet on B completes B's work,
     * and with nothing of B's outstanding it returns at once while A's
     * transfers are in flight (a quiet shared between contexts would wait
     * for them). */
    unsigned char *big = shmem_malloc(BIG), *src = malloc(BIG);
    long *small = shmem_calloc(16, sizeof(long)); /* [8..]: self */
    CHECK(big && src && small, "alloc");
    memset(src, me + 1, BIG);
    shmem_ctx_t A, B;
    CHECK(shmem_ctx_create(0, &A) == 0 && shmem_ctx_create(0, &B) == 0,
          "ctx_create");
    const int other_engine = npes > 1 && npes % 2 == 0;
    shmem_barrier_all();
    double tb = 0, ta = 0;
    for (int rep = 0; rep < 3; rep++) {
        long sv[8] = {me, rep, 1, 2, 3, 4, 5, 6};
        double t0 = mp_now();
        for (int k = 0; k < 4; k++)
            shmem_ctx_putmem_nbi(A, big + (size_t)k * (BIG / 4),
                                 src + (size_t)k * (BIG / 4), BIG / 4, right);
        double t1 = mp_now();
        shmem_ctx_long_put(B, small, sv, 8, right);
        shmem_ctx_long_atomic_add(B, &small[2], 1, right);
        shmem_ctx_quiet(B);
        double t2 = mp_now();
        /* (not timed: a waiting thread lends every engine a hand, so it
         * may well execute A's copies while it waits for its own) */
        if (other_engine) {
            shmem_ctx_long_put_nbi(B, &small[8], sv, 4, me);
            shmem_ctx_quiet(B);
        }
        long chk[8];
        shmem_ctx_long_get(B, chk, small, 8, right);
        CHECK(chk[0] == me && chk[1] == rep, "B's put: %ld %ld", chk[0],
              chk[1]);
        if (other_engine)
            CHECK(small[8] == me && small[9] == rep, "B's put_nbi to self "
                  "not complete after quiet(B)");
        shmem_ctx_quiet(A);
        double t3 = mp_now();
        tb += t2 - t1;
        ta += t3 - t0;
        shmem_barrier_all();
        for (size_t i = 0; i < BIG; i += 4093)
            CHECK(big[i] == (unsigned char)(left + 1), "A's data at %zu", i);
        shmem_barrier_all();
    }
    /* Only meaningful when A's transfers took long enough to measure. */
    if (ta > 0.006 && !mp_network()) /* the network's quiet is not per
                                          * context (docs/ARCHITECTURE.md) */
        CHECK(tb < ta / 2, "quiet(B) took %.3f ms of A's %.3f ms: it waited "
              "for the other context", tb * 1e3, ta * 1e3);

    /* 3. pe_quiet: completes what was issued to the named PEs. */
    int pes[1] = {right};
    long pv[8] = {7, 7, 7, 7, 7, 7, 7, me};
    shmem_long_put_nbi(small, pv, 8, right);
    shmem_pe_quiet(pes, 1);
    shmem_ctx_long_put_nbi(B, small, pv, 8, right);
    shmem_ctx_pe_quiet(B, pes, 1);
    shmem_ctx_pe_quiet(SHMEM_CTX_INVALID, pes, 1);
    shmem_barrier_all();
    CHECK(small[7] == left, "pe_quiet: %ld", small[7]);

    /* 4. sessions are hints: operations inside one still complete at quiet. */
    shmem_ctx_session_config_t cfg = {.total_ops_hint = 100, .max_ops_hint = 10};
    shmem_ctx_session_start(B, 0, &cfg,
                            SHMEM_CTX_SESSION_TOTAL_OPS | SHMEM_CTX_SESSION_MAX_OPS);
    for (int i = 0; i < 100; i++)
        shmem_ctx_long_atomic_add(B, &a[0], 1, right);
    shmem_ctx_session_stop(B);
    shmem_ctx_session_start(SHMEM_CTX_INVALID, 0, NULL, 0);
    shmem_ctx_quiet(B);
    shmem_barrier_all();
    CHECK(a[0] == 7L * 100000 + left * 1000 + 100, "session adds: %ld", a[0]);

    shmem_ctx_destroy(A);
    shmem_ctx_destroy(B);
    if (me == 0)
        printf("ctx_ops: %d PEs OK\n", npes);
    free(src);
    shmem_finalize();
    return 0;
}
