/*
 * Non-fetching AMOs in bulk, as the network path batches them (src/net/
 * ofi_agg.c; network.sh runs this under SHMEM_FORCE_NETWORK=1 on both
 * providers; it passes on shared memory too):
 *
 *  1. every PE sends every PE (itself included) a stream of add, inc, and,
 *     or, xor and set on 4- and 8-byte words, on the default context and
 *     on a private one; after quiet + barrier every word holds exactly
 *     what the streams make of it;
 *  2. an AMO then a fence then a flag (a put): the receiver that sees the
 *     flag sees the AMO, round after round, with a burst of other AMOs in
 *     flight before each;
 *  3. an AMO then a fetch or a get of the same word, without fence or
 *     quiet, from the same context: the read sees the AMO;
 *  4. delivery without quiet: after a burst (so that a batch is in
 *     flight), each PE increments its right neighbour's flag and only
 *     waits for its own: the increment must arrive although its sender
 *     calls nothing but the wait;
 *  5. one atomicity domain: every PE, PE 0 included, mixes fetch_inc
 *     (the provider's atomic, or the CPU's on PE 0's own word) and inc
 *     (batched, applied by PE 0's CPU) on one word of PE 0: no update
 *     is lost.
 */
#include "mp.h"

#define N 3000    /* updates per stream */
#define WORDS 64  /* words per PE and width */
#define ROUNDS 40 /* fence rounds */

static uint64_t w64[WORDS];
static uint32_t w32[WORDS];
static uint64_t ctr[WORDS];
static long fence_cnt;
static long fence_flag;
static long ring;
static uint64_t mix;

/* The update number i of PE src: its target PE, word and operation. */
static void pick(int src, int i, int npes, int *pe, int *w, int *op)
{
    uint64_t st = (uint64_t)src * 1000003u + (uint64_t)i;
    uint64_t r = mp_rand(&st);
    *pe = (int)(r % (uint64_t)npes);
    *w = (int)((r >> 16) % WORDS);
    *op = (int)((r >> 32) % 3); /* 0 add, 1 inc, 2 xor */
}

int main(void)
{
    mp_init();
    const int me = shmem_my_pe(), npes = shmem_n_pes();
    shmem_ctx_t priv;
    CHECK(shmem_ctx_create(SHMEM_CTX_PRIVATE, &priv) == 0, "private context");

    /* --- 1: streams to every PE, then quiet */
    for (int i = 0; i < N; i++) {
        int pe, w, op;
        pick(me, i, npes, &pe, &w, &op);
        shmem_ctx_t c = (i & 1) ? priv : SHMEM_CTX_DEFAULT;
        uint64_t v = (uint64_t)i + 1;
        if (op == 0) {
            shmem_ctx_uint64_atomic_add(c, &w64[w], v, pe);
            shmem_ctx_uint32_atomic_add(c, &w32[w], (uint32_t)v, pe);
        } else if (op == 1) {
            shmem_ctx_uint64_atomic_inc(c, &w64[w], pe);
            shmem_ctx_uint32_atomic_inc(c, &w32[w], pe);
        } else {
            shmem_ctx_uint64_atomic_xor(c, &w64[w], v << 40, pe);
            shmem_ctx_uint32_atomic_xor(c, &w32[w], (uint32_t)v << 24, pe);
        }
        /* and/or/set on a word of their own: each PE owns bit `me` */
        shmem_ctx_uint64_atomic_or(c, &ctr[me % WORDS],
                                   UINT64_C(1) << (me % 64), pe);
    }
    shmem_ctx_quiet(priv);
    shmem_quiet();
    shmem_barrier_all();
    {
        uint64_t e64[WORDS] = {0};
        uint32_t e32[WORDS] = {0};
        for (int src = 0; src < npes; src++)
            for (int i = 0; i < N; i++) {
                int pe, w, op;
                pick(src, i, npes, &pe, &w, &op);
                if (pe != me)
                    continue;
                uint64_t v = (uint64_t)i + 1;
                /* xor commutes with add only on disjoint bits: adds stay
                 * far below bit 40 (64-bit) / bit 24 (32-bit). */
                if (op == 0) {
                    e64[w] += v;
                    e32[w] += (uint32_t)v;
                } else if (op == 1) {
                    e64[w] += 1;
                    e32[w] += 1;
                } else {
                    e64[w] ^= v << 40;
                    e32[w] ^= (uint32_t)v << 24;
                }
            }
        for (int w = 0; w < WORDS; w++) {
            CHECK(w64[w] == e64[w], "64-bit word %d: %#llx, expected %#llx",
                  w, (unsigned long long)w64[w], (unsigned long long)e64[w]);
            CHECK(w32[w] == e32[w], "32-bit word %d: %#x, expected %#x", w,
                  w32[w], e32[w]);
        }
        for (int src = 0; src < npes; src++)
            CHECK(ctr[src % WORDS] & (UINT64_C(1) << (src % 64)),
                  "or from PE %d missing", src);
    }
    shmem_barrier_all(); /* every PE checked before the words change */
    /* and + set: clear the bits again, then set a word */
    for (int pe = 0; pe < npes; pe++) {
        shmem_uint64_atomic_and(&ctr[me % WORDS], ~(UINT64_C(1) << (me % 64)),
                                pe);
        shmem_uint64_atomic_set(&w64[me % WORDS], 0, pe);
    }
    shmem_barrier_all();
    for (int w = 0; w < WORDS; w++)
        CHECK(ctr[w] == 0, "word %d after and: %#llx", w,
              (unsigned long long)ctr[w]);
    for (int src = 0; src < npes; src++)
        CHECK(w64[src % WORDS] == 0, "word %d after set", src % WORDS);
    shmem_barrier_all();

    /* --- 2: AMO, fence, flag */
    {
        const int right = (me + 1) % npes;
        for (int r = 1; r <= ROUNDS; r++) {
            for (int k = 0; k < 50; k++) /* a burst in flight */
                shmem_uint64_atomic_inc(&w64[(r + k) % WORDS], right);
            shmem_long_atomic_add(&fence_cnt, 1, right);
            shmem_fence();
            shmem_long_p(&fence_flag, r, right);
            shmem_long_wait_until(&fence_flag, SHMEM_CMP_GE, r);
            long c = shmem_long_atomic_fetch(&fence_cnt, me);
            CHECK(c >= r, "round %d: flag seen, counter %ld (the AMO "
                  "before the fence is missing)", r, c);
            shmem_barrier_all();
        }
    }

    /* --- 3: AMO then a read of the same word from the same context */
    {
        const int right = (me + 1) % npes;
        shmem_barrier_all();
        uint64_t before = shmem_uint64_atomic_fetch(&ctr[0], right);
        for (int i = 1; i <= 200; i++) {
            shmem_uint64_atomic_add(&ctr[0], 1, right);
            if (i % 2) {
                uint64_t got = shmem_uint64_atomic_fetch(&ctr[0], right);
                CHECK(got >= before + (uint64_t)i, "fetch after add %d: "
                      "%llu, expected at least %llu", i,
                      (unsigned long long)got,
                      (unsigned long long)(before + (uint64_t)i));
            } else {
                uint64_t got;
                shmem_getmem(&got, &ctr[0], sizeof(got), right);
                CHECK(got >= before + (uint64_t)i, "get after add %d: "
                      "%llu, expected at least %llu", i,
                      (unsigned long long)got,
                      (unsigned long long)(before + (uint64_t)i));
            }
        }
        shmem_barrier_all();
    }

    /* --- 4: delivered without quiet */
    {
        const int right = (me + 1) % npes;
        for (int i = 0; i < 500; i++)
            shmem_uint64_atomic_inc(&w64[i % WORDS], right);
        shmem_long_atomic_inc(&ring, right);
        shmem_long_wait_until(&ring, SHMEM_CMP_EQ, 1);
        shmem_barrier_all();
    }

    /* --- 5: provider and CPU atomics on one word */
    {
        const int K = 400;
        for (int i = 0; i < K; i++) {
            (void)shmem_uint64_atomic_fetch_inc(&mix, 0);
            shmem_uint64_atomic_inc(&mix, 0);
        }
        shmem_barrier_all();
        if (me == 0)
            CHECK(mix == 2 * (uint64_t)K * (uint64_t)npes,
                  "mixed atomics: %llu, expected %llu",
                  (unsigned long long)mix,
                  (unsigned long long)(2 * (uint64_t)K * (uint64_t)npes));
        shmem_barrier_all();
    }

    shmem_ctx_destroy(priv);
    if (me == 0)
        printf("amo_batch: %d PEs ok\n", npes);
    shmem_finalize();
    return 0;
}
