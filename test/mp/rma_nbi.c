/*
 * put_nbi/get_nbi with random sizes (1 B .. 1 MiB, log-uniform so small
 * and large both occur) at random offsets of a large heap buffer, then one
 * quiet. Each operation owns one slot of the buffer, so transfers never
 * overlap; bytes outside the transferred ranges must stay untouched. The
 * target replays the sender's generator to know what to expect.
 */
#include "mp.h"

#define SLOT (1u << 20) /* one operation per slot; max transfer size */
#define NOPS 12
#define ROUNDS 3

typedef struct {
    size_t off, len;
} op_t;

/* The ops PE pe issues in round r (the same on every PE). */
static void plan(int pe, int r, op_t *ops)
{
    uint64_t st = 0x1234u + (uint64_t)pe * 1000003u + (uint64_t)r * 7919u;
    for (int i = 0; i < NOPS; i++) {
        int lg = (int)(mp_rand(&st) % 21); /* 2^0 .. 2^20 */
        size_t len = ((size_t)1 << lg) + mp_rand(&st) % ((size_t)1 << lg);
        if (len > SLOT)
            len = SLOT;
        size_t off = mp_rand(&st) % (SLOT - len + 1);
        ops[i].off = (size_t)i * SLOT + off;
        ops[i].len = len;
    }
}

static void check_buf(const unsigned char *buf, const op_t *ops, int pe, int r,
                      const char *what)
{
    size_t pos = 0;
    for (int i = 0; i < NOPS; i++) {
        for (; pos < ops[i].off; pos++)
            CHECK(buf[pos] == 0, "%s round %d: byte %zu outside any transfer "
                  "is 0x%02x", what, r, pos, buf[pos]);
        for (; pos < ops[i].off + ops[i].len; pos++)
            CHECK(buf[pos] == mp_byte(pe, pos, r),
                  "%s round %d: op %d (%zu bytes at %zu): byte %zu is 0x%02x, "
                  "expected 0x%02x", what, r, i, ops[i].len, ops[i].off, pos,
                  buf[pos], mp_byte(pe, pos, r));
    }
    for (; pos < (size_t)NOPS * SLOT; pos++)
        CHECK(buf[pos] == 0, "%s round %d: byte %zu past the last transfer",
              what, r, pos);
}

int main(void)
{
    /* Every nbi through the engine queues (the path under test), unless the
     * caller chose otherwise. */
    setenv("SHMEM_SDMA_NBI_INLINE_MAX", "0", 0);
    mp_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;
    const size_t total = (size_t)NOPS * SLOT;
    unsigned char *dst = shmem_calloc(total, 1);
    unsigned char *src = shmem_malloc(total);
    unsigned char *priv = malloc(total), *got = malloc(total);
    op_t ops[NOPS], theirs[NOPS];

    CHECK(dst && src && priv && got, "allocation of %zu bytes", total);
    for (int r = 0; r < ROUNDS; r++) {
        /* put_nbi from private memory into the right neighbour's dst. */
        for (size_t b = 0; b < total; b++)
            priv[b] = mp_byte(me, b, r);
        memset(dst, 0, total);
        shmem_barrier_all();
        plan(me, r, ops);
        for (int i = 0; i < NOPS; i++)
            shmem_putmem_nbi(dst + ops[i].off, priv + ops[i].off, ops[i].len,
                             right);
        shmem_quiet();
        shmem_barrier_all();
        plan(left, r, theirs);
        check_buf(dst, theirs, left, r, "putmem_nbi");

        /* get_nbi from the right neighbour's src into private memory. */
        memcpy(src, priv, total);
        memset(got, 0, total);
        shmem_barrier_all();
        plan(right, r + 100, theirs);
        for (int i = 0; i < NOPS; i++)
            shmem_getmem_nbi(got + theirs[i].off, src + theirs[i].off,
                             theirs[i].len, right);
        shmem_quiet();
        check_buf(got, theirs, right, r, "getmem_nbi");
        shmem_barrier_all();
    }
    /* Many small nbi puts (one element each) to one buffer, one quiet:
     * every one lands, none is lost when the request ring wraps. */
    long *arr = shmem_calloc(8192, sizeof(long)), *vals = malloc(8192 * sizeof(long));
    CHECK(arr && vals, "allocation");
    for (long i = 0; i < 8192; i++)
        vals[i] = i * 3 + me;
    for (long i = 0; i < 8192; i++)
        shmem_long_put_nbi(&arr[i], &vals[i], 1, right);
    shmem_quiet();
    shmem_barrier_all();
    for (long i = 0; i < 8192; i++)
        CHECK(arr[i] == i * 3 + left, "small put_nbi %ld: %ld", i, arr[i]);
    shmem_barrier_all();
    free(vals);
    shmem_free(arr);
    free(got);
    free(priv);
    shmem_free(src);
    shmem_free(dst);
    if (me == 0)
        printf("rma_nbi: %d PEs, %d rounds of %d random put_nbi/get_nbi OK\n",
               npes, ROUNDS, NOPS);
    shmem_finalize();
    return 0;
}
