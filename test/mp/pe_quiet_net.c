/*
 * shmem_pe_quiet completes the network path: PE 0 puts a block to PE
 * me+1 with put_nbi (large: the provider's rendezvous path, which a later
 * small write overtakes on tcp;ofi_rxm), calls shmem_pe_quiet for that PE
 * only, then raises a flag through ANOTHER context (its own endpoint: no
 * order with the first) or a signal; the target must see the whole block
 * when it sees the flag. Run under SHMEM_FORCE_NETWORK=1 by network.sh
 * (both providers); passes on shm too. Before the path table, pe_quiet
 * did not complete network operations at all.
 */
#include "mp.h"

#define WORDS (256 * 1024 / sizeof(long))

int main(void)
{
    mp_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int to = (me + 1) % npes, from = (me + npes - 1) % npes;
    int rounds = npes > 2 ? 10 : 40;
    long *dst = shmem_calloc(WORDS, sizeof(long));
    uint64_t *flag = shmem_calloc(2, sizeof(uint64_t));
    long *src = malloc(WORDS * sizeof(long));
    shmem_ctx_t other;

    CHECK(dst && flag && src, "allocation");
    CHECK(shmem_ctx_create(0, &other) == 0, "shmem_ctx_create");
    shmem_barrier_all();
    for (int r = 1; r <= rounds; r++) {
        for (size_t k = 0; k < WORDS; k++)
            src[k] = r;
        /* Through the default context; its flag through the other one. */
        shmem_putmem_nbi(dst, src, WORDS * sizeof(long), to);
        shmem_pe_quiet(&to, 1);
        shmem_ctx_uint64_atomic_set(other, &flag[0], (uint64_t)r, to);
        shmem_ctx_quiet(other);
        /* Through the other context; a signal of the default one. */
        for (size_t k = 0; k < WORDS; k++)
            src[k] = -r;
        shmem_ctx_putmem_nbi(other, dst, src, WORDS * sizeof(long), to);
        shmem_ctx_pe_quiet(other, &to, 1);
        shmem_signal_set(&flag[1], (uint64_t)r, to);
        shmem_quiet();

        shmem_uint64_wait_until(&flag[0], SHMEM_CMP_GE, (uint64_t)r);
        shmem_uint64_wait_until(&flag[1], SHMEM_CMP_GE, (uint64_t)r);
        /* Both rounds' data came before their flags: the block holds -r
         * now (the second write), never a mix with r or r-1. */
        for (size_t k = 0; k < WORDS; k++)
            CHECK(dst[k] == -r,
                  "round %d: word %zu from PE %d is %ld when "
                  "both flags show %d (pe_quiet did not complete the put)",
                  r, k, from, dst[k], r);
        shmem_barrier_all(); /* the next round rewrites dst */
    }
    shmem_ctx_destroy(other);
    if (me == 0)
        printf("pe_quiet_net: %d PEs, %d rounds: ok\n", npes, rounds);
    free(src);
    shmem_finalize();
    return 0;
}
