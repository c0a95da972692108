/*
 * shmem_fence orders puts and AMOs to each PE without being a quiet (run
 * under SHMEM_FORCE_NETWORK=1 by network.sh on both providers and with
 * every SHMEM_OFI_FENCE method; passes on shm too).
 *
 * Every PE sends every other PE ROWS rows. A row is a block (8 bytes to
 * 70 KB: small ones copied, large ones on the provider's rendezvous path)
 * and an atomic add, then one fence, then the row's flag: a put, an
 * atomic set or a put_signal's signal in turn. The rows alternate
 * between the default context and a private one. Where the provider does
 * not order writes (tcp;ofi_rxm) the fence only marks the PEs written and
 * the next write to each waits for that PE's earlier writes (or carries
 * FI_FENCE): the receivers see flag r only with every block up to r
 * whole and the counter at r or more, never a flag that overtook its data.
 * A fence orders one context's operations only, so each context has its
 * own flag and counter words, and row r is checked against the flag of
 * the context that wrote it (row r's data may come after row r + 1's flag
 * from the other context: that is allowed).
 * To catch a flag that overtakes a block still in flight, each round
 * first sends a row to every PE and only then fences, and the sender does
 * not wait between rows.
 */
#include "mp.h"

#define ROWS 24
#define MAXB (70 * 1000 / sizeof(long))

static const size_t sizes[] = {1, 8, 25, 512, MAXB}; /* longs */
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

int main(void)
{
    mp_init();
    const int me = shmem_my_pe(), npes = shmem_n_pes();
    /* [src][row][MAXB]: each source and row its own block, so nothing is
     * overwritten while a receiver checks it. */
    long *blk = shmem_calloc((size_t)npes * ROWS * MAXB, sizeof(long));
    /* [context: r & 1][src] */
    uint64_t *flag = shmem_calloc(2 * (size_t)npes, sizeof(uint64_t));
    uint64_t *sig = shmem_calloc((size_t)npes, sizeof(uint64_t));
    long *cnt = shmem_calloc(2 * (size_t)npes, sizeof(long));
    long *src = malloc(MAXB * sizeof(long));
    shmem_ctx_t priv;

    CHECK(blk && flag && sig && cnt && src, "allocation");
    CHECK(shmem_ctx_create(SHMEM_CTX_PRIVATE, &priv) == 0,
          "shmem_ctx_create(SHMEM_CTX_PRIVATE)");
    shmem_barrier_all();
    for (int r = 1; r <= ROWS; r++) {
        shmem_ctx_t c = (r & 1) ? SHMEM_CTX_DEFAULT : priv;
        uint64_t *fl = flag + (size_t)(r & 1) * npes;
        long *ct = cnt + (size_t)(r & 1) * npes;
        size_t n = sizes[r % NSIZES];
        for (size_t k = 0; k < n; k++)
            src[k] = (long)me * 1000000 + r;
        /* The row to every PE first, then one fence, then every flag. */
        for (int i = 1; i < npes; i++) {
            int to = (me + i) % npes;
            long *dst = blk + ((size_t)me * ROWS + (size_t)(r - 1)) * MAXB;
            shmem_ctx_putmem(c, dst, src, n * sizeof(long), to);
            shmem_ctx_long_atomic_add(c, &ct[me], 1, to);
        }
        shmem_ctx_fence(c);
        for (int i = 1; i < npes; i++) {
            int to = (me + i) % npes;
            switch (r % 3) {
            case 0:
                shmem_ctx_uint64_p(c, &fl[me], (uint64_t)r, to);
                break;
            case 1:
                shmem_ctx_uint64_atomic_set(c, &fl[me], (uint64_t)r, to);
                break;
            default: {
                /* A one-word put whose signal is the flag (the signal's
                 * own data-before-signal is not what is tested: the row
                 * before the fence is). */
                long one = r;
                shmem_ctx_putmem_signal(c, &sig[me], &one, sizeof(one),
                                        &fl[me], (uint64_t)r,
                                        SHMEM_SIGNAL_SET, to);
                break;
            }
            }
        }
    }
    /* Receive: each source's rows in order; the flag may be ahead. */
    for (int i = 1; i < npes; i++) {
        int from = (me + npes - i) % npes;
        for (int r = 1; r <= ROWS; r++) {
            uint64_t *fl = flag + (size_t)(r & 1) * npes;
            long *ct = cnt + (size_t)(r & 1) * npes;
            shmem_uint64_wait_until(&fl[from], SHMEM_CMP_GE, (uint64_t)r);
            uint64_t f = shmem_uint64_atomic_fetch(&fl[from], me);
            size_t n = sizes[r % NSIZES];
            const long *b =
                blk + ((size_t)from * ROWS + (size_t)(r - 1)) * MAXB;
            long want = (long)from * 1000000 + r;
            CHECK(b[0] == want && b[n - 1] == want && b[n / 2] == want,
                  "row %d from PE %d (%zu bytes): words %ld %ld %ld, "
                  "expected %ld with the flag at %llu: the flag overtook "
                  "the row fenced before it", r, from, n * sizeof(long),
                  b[0], b[n / 2], b[n - 1], want, (unsigned long long)f);
            /* this context's rows up to r: (r + 1) / 2 adds */
            long c = shmem_long_atomic_fetch(&ct[from], me);
            CHECK(c >= (r + 1) / 2,
                  "counter from PE %d is %ld with row %d's flag seen: an "
                  "atomic fenced before the flag came after it", from, c, r);
        }
    }
    shmem_ctx_quiet(priv);
    shmem_barrier_all();
    shmem_ctx_destroy(priv);
    if (me == 0)
        printf("fence_net: %d PEs, %d rows each way: ok\n", npes, ROWS);
    free(src);
    shmem_free(cnt);
    shmem_free(sig);
    shmem_free(flag);
    shmem_free(blk);
    shmem_finalize();
    return 0;
}
