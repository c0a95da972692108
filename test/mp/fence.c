/*
 * shmem_fence ordering under load: each round a PE issues many put_nbi of
 * data to its right neighbour, then shmem_fence, then a flag put. The
 * target waits for the flag and must then see all of that round's data
 * (fence orders puts to one PE; no quiet is called by the sender before the
 * flag). The flag is a blocking shmem_uint64_p (a direct store) in even
 * rounds and a put_nbi in odd rounds. An acknowledgement flows back before
 * the next round overwrites the data.
 */
#include "mp.h"

#define ROUNDS 30
#define NPUT 48
#define CHUNK 8192 /* bytes per put */

static uint64_t flag, ack; /* symmetric (.bss) */

int main(void)
{
    /* Every nbi through the engine queues (the path under test), unless the
     * caller chose otherwise. */
    setenv("SHMEM_SDMA_NBI_INLINE_MAX", "0", 0);
    mp_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;
    const size_t total = (size_t)NPUT * CHUNK;
    unsigned char *data = shmem_calloc(total, 1);
    unsigned char *src = malloc(total);
    uint64_t fv;

    CHECK(data && src, "allocation");
    shmem_barrier_all();
    for (int r = 1; r <= ROUNDS; r++) {
        /* The previous round's data at the target has been checked. */
        shmem_uint64_wait_until(&ack, SHMEM_CMP_GE, (uint64_t)r - 1);
        for (size_t b = 0; b < total; b++)
            src[b] = mp_byte(me, b, r);
        /* Last chunk first: a reordering engine would finish it first. */
        for (int i = NPUT - 1; i >= 0; i--)
            shmem_putmem_nbi(data + (size_t)i * CHUNK, src + (size_t)i * CHUNK,
                             CHUNK, right);
        shmem_fence();
        fv = (uint64_t)r;
        if (r % 2)
            shmem_uint64_put_nbi(&flag, &fv, 1, right);
        else
            shmem_uint64_p(&flag, fv, right);

        shmem_uint64_wait_until(&flag, SHMEM_CMP_GE, (uint64_t)r);
        for (size_t b = 0; b < total; b++)
            CHECK(data[b] == mp_byte(left, b, r),
                  "round %d: flag seen but data byte %zu is 0x%02x, expected "
                  "0x%02x (fence did not order the puts before the flag)", r,
                  b, data[b], mp_byte(left, b, r));
        shmem_quiet(); /* fv and src may be reused */
        shmem_uint64_p(&ack, (uint64_t)r, left);
    }
    shmem_barrier_all();
    free(src);
    shmem_free(data);
    if (me == 0)
        printf("fence: %d PEs, %d rounds OK\n", npes, ROUNDS);
    shmem_finalize();
    return 0;
}
