/*
 * Symmetric heap routines across PEs: malloc, calloc, align, realloc
 * (grow in place, shrink, move), malloc_with_hints and free, with the
 * contents checked through puts and gets, and the same addresses (offsets)
 * on every PE.
 */
#include "mp.h"

static int me, npes, right, left;

/* The heap offset must be the same everywhere: compare with PE 0's. */
static void check_symmetric(const void *p, const void *base, const char *what)
{
    static long off;
    long mine = (long)((const char *)p - (const char *)base);
    shmem_barrier_all();
    off = -1;
    shmem_barrier_all();
    if (me == 0)
        for (int pe = 0; pe < npes; pe++)
            shmem_long_p(&off, mine, pe);
    shmem_barrier_all();
    CHECK(off == mine, "%s: offset %ld here, %ld on PE 0", what, mine, off);
}

/* Fill p[0, n) with PE me's pattern k, put it to the right, check ours. */
static void exchange(unsigned char *p, size_t n, int k, const char *what)
{
    unsigned char *src = malloc(n);
    CHECK(src, "malloc");
    for (size_t b = 0; b < n; b++)
        src[b] = mp_byte(me, b, k);
    shmem_barrier_all();
    shmem_putmem(p, src, n, right);
    shmem_barrier_all();
    for (size_t b = 0; b < n; b++)
        CHECK(p[b] == mp_byte(left, b, k), "%s: byte %zu of %zu", what, b, n);
    free(src);
    shmem_barrier_all();
}

int main(void)
{
    mp_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    right = (me + 1) % npes;
    left = (me + npes - 1) % npes;

    char *base = shmem_malloc(1);
    CHECK(base, "shmem_malloc(1)");

    /* malloc: several sizes, all usable, symmetric, non-overlapping. */
    size_t sizes[] = {1, 63, 64, 65, 4096, 100000, 3 << 20};
    unsigned char *blk[7];
    for (int i = 0; i < 7; i++) {
        blk[i] = shmem_malloc(sizes[i]);
        CHECK(blk[i], "shmem_malloc(%zu)", sizes[i]);
        CHECK((uintptr_t)blk[i] % 8 == 0, "shmem_malloc(%zu) misaligned",
              sizes[i]);
        check_symmetric(blk[i], base, "shmem_malloc");
        for (int j = 0; j < i; j++)
            CHECK(blk[i] + sizes[i] <= blk[j] || blk[j] + sizes[j] <= blk[i],
                  "blocks %d and %d overlap", i, j);
    }
    for (int i = 0; i < 7; i++)
        exchange(blk[i], sizes[i], i, "shmem_malloc block");
    for (int i = 6; i >= 0; i--)
        shmem_free(blk[i]);

    /* malloc(0) is NULL; free(NULL) is a (collective) no-op. */
    CHECK(shmem_malloc(0) == NULL, "shmem_malloc(0) not NULL");
    shmem_free(NULL);

    /* calloc: zero even where the previous block was dirty. */
    unsigned char *d = shmem_malloc(65536);
    CHECK(d, "shmem_malloc");
    memset(d, 0xa5, 65536);
    shmem_free(d);
    unsigned long *z = shmem_calloc(8192, sizeof(unsigned long));
    CHECK(z, "shmem_calloc");
    check_symmetric(z, base, "shmem_calloc");
    for (int i = 0; i < 8192; i++)
        CHECK(z[i] == 0, "shmem_calloc elem %d = %lx", i, z[i]);
    unsigned long rz[64];
    shmem_ulong_get(rz, z + 8000, 64, right);
    for (int i = 0; i < 64; i++)
        CHECK(rz[i] == 0, "shmem_calloc: remote elem %d not zero", i);
    shmem_barrier_all();
    exchange((unsigned char *)z, 8192 * sizeof(unsigned long), 20, "calloc");
    shmem_free(z);
    CHECK(shmem_calloc((size_t)1 << 40, (size_t)1 << 40) == NULL,
          "shmem_calloc overflow not NULL");

    /* align: every power of two up to 1 MiB. */
    for (size_t a = 1; a <= ((size_t)1 << 20); a <<= 1) {
        unsigned char *p = shmem_align(a, 1000);
        CHECK(p && (uintptr_t)p % a == 0, "shmem_align(%zu) = %p", a,
              (void *)p);
        check_symmetric(p, base, "shmem_align");
        if (a == 4096 || a == ((size_t)1 << 20))
            exchange(p, 1000, 30, "shmem_align block");
        shmem_free(p);
    }
    CHECK(shmem_align(3, 100) == NULL, "shmem_align(3) not NULL");
    CHECK(shmem_align(48, 100) == NULL, "shmem_align(48) not NULL");

    /* malloc_with_hints */
    long *h = shmem_malloc_with_hints(4096, SHMEM_MALLOC_ATOMICS_REMOTE);
    CHECK(h, "shmem_malloc_with_hints");
    exchange((unsigned char *)h, 4096, 40, "shmem_malloc_with_hints block");
    shmem_free(h);

    /* realloc: grow in place (free space after), shrink, then grow past a
     * blocker (must move), each time keeping the contents. */
    unsigned char *r = shmem_malloc(1000);
    CHECK(r, "shmem_malloc");
    for (int b = 0; b < 1000; b++)
        r[b] = mp_byte(me, (size_t)b, 50);
    unsigned char *r2 = shmem_realloc(r, 5000);
    CHECK(r2, "shmem_realloc grow");
    check_symmetric(r2, base, "shmem_realloc grow");
    for (int b = 0; b < 1000; b++)
        CHECK(r2[b] == mp_byte(me, (size_t)b, 50), "realloc grow lost byte %d",
              b);
    exchange(r2, 5000, 51, "realloc grown block");
    unsigned char *blocker = shmem_malloc(64);
    CHECK(blocker, "shmem_malloc blocker");
    unsigned char *r3 = shmem_realloc(r2, 100);
    CHECK(r3 == r2, "shrinking realloc moved the block");
    for (int b = 0; b < 100; b++)
        CHECK(r3[b] == mp_byte(left, (size_t)b, 51), "realloc shrink byte %d",
              b);
    unsigned char *blocker2 = shmem_malloc(64); /* likely right after r3 */
    CHECK(blocker2, "shmem_malloc blocker");
    unsigned char *r4 = shmem_realloc(r3, 1 << 20);
    CHECK(r4, "shmem_realloc grow past a blocker");
    check_symmetric(r4, base, "shmem_realloc move");
    for (int b = 0; b < 100; b++)
        CHECK(r4[b] == mp_byte(left, (size_t)b, 51), "realloc move byte %d", b);
    exchange(r4, 1 << 20, 52, "realloc moved block");
    CHECK(shmem_realloc(r4, 0) == NULL, "shmem_realloc(p, 0) not NULL");
    unsigned char *r5 = shmem_realloc(NULL, 777);
    CHECK(r5, "shmem_realloc(NULL, n)");
    check_symmetric(r5, base, "shmem_realloc(NULL)");
    exchange(r5, 777, 53, "realloc(NULL) block");
    shmem_free(r5);
    shmem_free(blocker2);
    shmem_free(blocker);

    /* Many cycles: nothing leaks, the same first block comes back. */
    unsigned char *first = shmem_malloc(256);
    shmem_free(first);
    for (int i = 0; i < 200; i++) {
        unsigned char *a = shmem_malloc(128 + (size_t)i * 64);
        unsigned char *b = shmem_calloc(1, 4096);
        CHECK(a && b, "cycle %d", i);
        shmem_free(a);
        shmem_free(b);
    }
    unsigned char *again = shmem_malloc(256);
    CHECK(again == first, "after 200 malloc/free cycles the heap moved: %p "
          "vs %p", (void *)again, (void *)first);
    shmem_free(again);
    shmem_free(base);
    if (me == 0)
        printf("heap: %d PEs: malloc/calloc/align/realloc/free OK\n", npes);
    shmem_finalize();
    return 0;
}
