/*
 * Signaling: data is visible before its signal under load, for the nbi and
 * blocking forms (typed, sized, mem, ctx), SHMEM_SIGNAL_SET and _ADD;
 * signal_add accumulates exactly from every PE; signal_set, signal_fetch
 * and signal_wait_until's returned value.
 */
#include "mp.h"

#define BIG (1 << 20) /* bytes per round: many engine copies, not inline */
#define ROUNDS 6

int main(void)
{
    mp_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;
    unsigned char *buf = shmem_malloc(BIG), *src = malloc(BIG);
    uint64_t *sig = shmem_calloc(4, sizeof(uint64_t));
    shmem_ctx_t ctx;
    CHECK(buf && src && sig, "alloc");
    CHECK(shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) == 0, "ctx_create");
    shmem_barrier_all();

    /* 1. put_signal_nbi of 1 MiB, then SET the round number: the target
     * waits for the signal only, then every byte must be there. */
    for (int r = 1; r <= ROUNDS; r++) {
        for (size_t o = 0; o < BIG; o++)
            src[o] = mp_byte(me, o, r);
        switch (r % 4) {
        case 0:
            shmem_putmem_signal_nbi(buf, src, BIG, &sig[0], (uint64_t)r,
                                    SHMEM_SIGNAL_SET, right);
            break;
        case 1:
            shmem_ctx_uchar_put_signal_nbi(ctx, buf, src, BIG, &sig[0],
                                           (uint64_t)r, SHMEM_SIGNAL_SET, right);
            break;
        case 2:
            shmem_put64_signal_nbi(buf, src, BIG / 8, &sig[0], (uint64_t)r,
                                   SHMEM_SIGNAL_SET, right);
            break;
        default:
            shmem_ctx_putmem_signal(ctx, buf, src, BIG, &sig[0], (uint64_t)r,
                                    SHMEM_SIGNAL_SET, right);
        }
        uint64_t v = shmem_signal_wait_until(&sig[0], SHMEM_CMP_GE, (uint64_t)r);
        CHECK(v == (uint64_t)r, "round %d: wait_until returned %llu", r,
              (unsigned long long)v);
        for (size_t o = 0; o < BIG; o++)
            if (buf[o] != mp_byte(left, o, r))
                MP_FAIL("round %d: byte %zu is %u, expected %u: data not "
                        "visible before its signal", r, o, buf[o],
                        mp_byte(left, o, r));
        /* the source is reusable and our data delivered after quiet */
        shmem_quiet();
        shmem_ctx_quiet(ctx);
        shmem_barrier_all();
    }

    /* 2. SIGNAL_ADD from every PE to every PE, data each in its own slot:
     * the signal counts arrivals; when it reaches npes all data is there. */
    long *slots = shmem_calloc((size_t)npes * 64, sizeof(long));
    long mine[64];
    CHECK(slots, "shmem_calloc");
    for (int i = 0; i < 64; i++)
        mine[i] = me * 1000 + i;
    shmem_barrier_all();
    for (int k = 0; k < npes; k++) {
        int pe = (me + k) % npes;
        if (k & 1)
            shmem_long_put_signal(&slots[me * 64], mine, 64, &sig[1], 1,
                                  SHMEM_SIGNAL_ADD, pe);
        else
            shmem_ctx_long_put_signal_nbi(ctx, &slots[me * 64], mine, 64,
                                          &sig[1], 1, SHMEM_SIGNAL_ADD, pe);
    }
    shmem_signal_wait_until(&sig[1], SHMEM_CMP_EQ, (uint64_t)npes);
    for (int s = 0; s < npes; s++)
        for (int i = 0; i < 64; i++)
            CHECK(slots[s * 64 + i] == s * 1000 + i,
                  "slot of PE %d elem %d = %ld", s, i, slots[s * 64 + i]);
    shmem_ctx_quiet(ctx);
    shmem_barrier_all();

    /* 3. signal_add accumulation on PE 0 from everyone, mixed forms. */
    const int K = 500;
    for (int i = 0; i < K; i++) {
        if (i & 1)
            shmem_signal_add(&sig[2], (uint64_t)(me + 1), 0);
        else
            shmem_ctx_signal_add(ctx, &sig[2], (uint64_t)(me + 1), 0);
    }
    if (me == 0) {
        uint64_t want = (uint64_t)K * (uint64_t)npes * (uint64_t)(npes + 1) / 2;
        uint64_t v = shmem_signal_wait_until(&sig[2], SHMEM_CMP_GE, want);
        CHECK(v == want, "signal_add total %llu, expected %llu",
              (unsigned long long)v, (unsigned long long)want);
        CHECK(shmem_signal_fetch(&sig[2]) == want, "signal_fetch");
    }
    shmem_barrier_all();

    /* 4. signal_set, and AMOs on the same word interleave atomically. */
    if (me == 0)
        shmem_signal_set(&sig[3], 100, right);
    if (me == right || npes == 1) {
        uint64_t v = shmem_signal_wait_until(&sig[3], SHMEM_CMP_NE, 0);
        CHECK(v == 100, "signal_set delivered %llu", (unsigned long long)v);
    }
    shmem_barrier_all();
    shmem_ctx_signal_set(ctx, &sig[3], 0, me);
    shmem_barrier_all();
    for (int i = 0; i < K; i++) {
        shmem_uint64_atomic_add(&sig[3], 1, 0);
        shmem_signal_add(&sig[3], 1, 0);
    }
    shmem_barrier_all();
    if (me == 0)
        CHECK(shmem_signal_fetch(&sig[3]) == (uint64_t)(2 * K * npes),
              "AMO + signal_add on one word: %llu",
              (unsigned long long)sig[3]);
    shmem_barrier_all();

    shmem_ctx_destroy(ctx);
    if (me == 0)
        printf("signal_ops: %d PEs OK\n", npes);
    free(src);
    shmem_finalize();
    return 0;
}
