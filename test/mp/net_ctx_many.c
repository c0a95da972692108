/*
 * Many contexts at once (the shape of SOS test/unit many-ctx and web,
 * issue #14): each PE creates NCTX contexts, alternating the options, and
 * through every one puts a word to each PE (its own included), adds to a
 * counter there and reads the word back; each context is quieted on its
 * own. Then half the contexts are destroyed and created again (a context
 * created later reuses what the earlier ones opened) and the round
 * repeats. Every word and counter is checked. Run on shm by the suite and
 * under SHMEM_FORCE_NETWORK=1 by test/mp/net_ctx.sh on 1, 2 and 4 PEs,
 * where contexts share at most SHMEM_OFI_CTX_EPS endpoints (before, every
 * context opened its own: ~0.75 s each with 4 PEs on 2 cores).
 */
#define MP_ALARM_S 100
#include "mp.h"

#define NCTX 64

static const long opts[] = {0, SHMEM_CTX_PRIVATE, SHMEM_CTX_SERIALIZED,
                            SHMEM_CTX_PRIVATE | SHMEM_CTX_SERIALIZED};

static void round_trip(shmem_ctx_t *c, long *word, long *count, int round)
{
    const int me = shmem_my_pe(), npes = shmem_n_pes();

    for (int i = 0; i < NCTX; i++)
        for (int k = 0; k < npes; k++) {
            int pe = (me + k) % npes;
            long v = ((long)round << 32) | ((long)me << 16) | i;
            shmem_ctx_long_put(c[i], &word[(size_t)me * NCTX + (size_t)i],
                               &v, 1, pe);
            shmem_ctx_long_atomic_add(c[i], &count[i], 1, pe);
        }
    for (int i = 0; i < NCTX; i++)
        shmem_ctx_quiet(c[i]);
    /* Read back what this PE wrote, through the same contexts. */
    for (int i = 0; i < NCTX; i++) {
        int pe = (me + i) % npes;
        long v = ((long)round << 32) | ((long)me << 16) | i, got = -1;
        shmem_ctx_long_get(c[i], &got, &word[(size_t)me * NCTX + (size_t)i],
                           1, pe);
        CHECK(got == v, "round %d, context %d: PE %d holds %#lx, put %#lx",
              round, i, pe, (unsigned long)got, (unsigned long)v);
    }
    shmem_barrier_all();
    for (int s = 0; s < npes; s++)
        for (int i = 0; i < NCTX; i++) {
            long v = ((long)round << 32) | ((long)s << 16) | i;
            CHECK(word[(size_t)s * NCTX + (size_t)i] == v,
                  "round %d: PE %d's word of context %d is %#lx, not %#lx",
                  round, s, i,
                  (unsigned long)word[(size_t)s * NCTX + (size_t)i],
                  (unsigned long)v);
        }
    for (int i = 0; i < NCTX; i++)
        CHECK(count[i] == (long)round * npes,
              "round %d: counter %d is %ld, not %ld", round, i, count[i],
              (long)round * npes);
    shmem_barrier_all();
}

int main(void)
{
    mp_init();
    const int npes = shmem_n_pes();
    long *word = shmem_calloc((size_t)npes * NCTX, sizeof(long));
    long *count = shmem_calloc(NCTX, sizeof(long));
    shmem_ctx_t c[NCTX];
    double t0 = mp_now();

    CHECK(word && count, "allocation");
    for (int i = 0; i < NCTX; i++)
        CHECK(shmem_ctx_create(opts[i % 4], &c[i]) == 0,
              "shmem_ctx_create %d (options %ld)", i, opts[i % 4]);
    double t1 = mp_now();
    round_trip(c, word, count, 1);
    for (int i = 0; i < NCTX; i += 2) {
        shmem_ctx_destroy(c[i]);
        CHECK(shmem_ctx_create(opts[(i + 1) % 4], &c[i]) == 0,
              "shmem_ctx_create %d again", i);
    }
    round_trip(c, word, count, 2);
    for (int i = 0; i < NCTX; i++)
        shmem_ctx_destroy(c[i]);
    if (shmem_my_pe() == 0)
        printf("net_ctx_many: %d PEs, %d contexts: created in %.3f s, "
               "all in %.3f s\n", npes, NCTX, t1 - t0, mp_now() - t0);
    shmem_free(count);
    shmem_free(word);
    shmem_finalize();
    return 0;
}
