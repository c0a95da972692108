/*
 * The symmetric heap allocator (src/runtime/alloc.c), white-box: alignment,
 * first fit, determinism, coalescing, realloc, exhaustion, double free, and
 * random alloc/free/realloc cycles checked against a shadow model.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "heap.h"

#define MB (1u << 20)

/* Structural invariants: blocks sorted, contiguous, covering [0, size),
 * no two adjacent free blocks, used equals the sum of used blocks. */
static void check_invariants(const dsm_heap_t *h)
{
    size_t pos = 0, used = 0;
    for (size_t i = 0; i < h->nblk; i++) {
        ck_assert_uint_eq(h->blk[i].off, pos);
        ck_assert_uint_gt(h->blk[i].size, 0);
        if (i && !h->blk[i].used)
            ck_assert_msg(h->blk[i - 1].used, "adjacent free blocks at %zu",
                          pos);
        if (h->blk[i].used)
            used += h->blk[i].size;
        pos += h->blk[i].size;
    }
    ck_assert_uint_eq(pos, h->size);
    ck_assert_uint_eq(used, h->used);
    ck_assert_uint_ge(h->peak, h->used);
}

START_TEST(test_alignment)
{
    dsm_heap_t h;
    ck_assert_int_eq(dsm_heap_init(&h, 64 * MB), 0);
    /* Misalign the next free offset first. */
    ck_assert_uint_eq(dsm_heap_alloc(&h, 1, 0), 0);
    for (size_t a = 1; a <= 16 * MB; a <<= 1) {
        size_t off = dsm_heap_alloc(&h, 100, a);
        ck_assert_uint_ne(off, SIZE_MAX);
        ck_assert_msg(off % a == 0, "align %zu gave %zu", a, off);
        ck_assert_msg(off % DSM_HEAP_MIN_ALIGN == 0, "min align");
        check_invariants(&h);
    }
    /* Not a power of two. */
    ck_assert_uint_eq(dsm_heap_alloc(&h, 100, 96), SIZE_MAX);
    ck_assert_uint_eq(dsm_heap_alloc(&h, 100, 3 * 1024), SIZE_MAX);
    /* Sizes are rounded to the minimum alignment. */
    size_t a = dsm_heap_alloc(&h, 1, 0);
    ck_assert_uint_eq(dsm_heap_block_size(&h, a), DSM_HEAP_MIN_ALIGN);
    dsm_heap_fini(&h);
}
END_TEST

START_TEST(test_first_fit)
{
    dsm_heap_t h;
    size_t o[6];
    ck_assert_int_eq(dsm_heap_init(&h, MB), 0);
    for (int i = 0; i < 6; i++) {
        o[i] = dsm_heap_alloc(&h, 1024, 0);
        ck_assert_uint_eq(o[i], (size_t)i * 1024);
    }
    /* Holes of 1024 at o[1] and 1024 at o[3]+... make a 2048 hole. */
    ck_assert_int_eq(dsm_heap_free(&h, o[1]), 0);
    ck_assert_int_eq(dsm_heap_free(&h, o[3]), 0);
    ck_assert_int_eq(dsm_heap_free(&h, o[4]), 0);
    check_invariants(&h);
    /* First fit: a small block goes into the first hole... */
    ck_assert_uint_eq(dsm_heap_alloc(&h, 512, 0), o[1]);
    /* ...a 2048 block skips the rest of it and takes the 2048 hole. */
    ck_assert_uint_eq(dsm_heap_alloc(&h, 2048, 0), o[3]);
    /* The 512 left in the first hole is found next. */
    ck_assert_uint_eq(dsm_heap_alloc(&h, 512, 0), o[1] + 512);
    /* Then the space after the last block. */
    ck_assert_uint_eq(dsm_heap_alloc(&h, 64, 0), 6 * 1024);
    check_invariants(&h);
    dsm_heap_fini(&h);
}
END_TEST

/* Feed the same call sequence to two heaps: same offsets. */
START_TEST(test_determinism)
{
    dsm_heap_t a, b;
    size_t live_a[64] = {0}, live_b[64] = {0};
    int used[64] = {0};
    uint64_t st = 42;
    ck_assert_int_eq(dsm_heap_init(&a, 8 * MB), 0);
    ck_assert_int_eq(dsm_heap_init(&b, 8 * MB), 0);
    for (int step = 0; step < 5000; step++) {
        st = st * 6364136223846793005ull + 1442695040888963407ull;
        int slot = (int)((st >> 33) % 64);
        size_t sz = (size_t)((st >> 13) % 70000) + 1;
        size_t al = (size_t)1 << ((st >> 40) % 13);
        if (!used[slot]) {
            live_a[slot] = dsm_heap_alloc(&a, sz, al);
            live_b[slot] = dsm_heap_alloc(&b, sz, al);
            ck_assert_uint_eq(live_a[slot], live_b[slot]);
            used[slot] = live_a[slot] != SIZE_MAX;
        } else if ((st >> 20) & 1) {
            int ma, mb;
            size_t na = dsm_heap_realloc(&a, live_a[slot], sz, &ma);
            size_t nb = dsm_heap_realloc(&b, live_b[slot], sz, &mb);
            ck_assert_uint_eq(na, nb);
            ck_assert_int_eq(ma, mb);
            if (na != SIZE_MAX)
                live_a[slot] = live_b[slot] = na;
        } else {
            ck_assert_int_eq(dsm_heap_free(&a, live_a[slot]), 0);
            ck_assert_int_eq(dsm_heap_free(&b, live_b[slot]), 0);
            used[slot] = 0;
        }
    }
    ck_assert_uint_eq(a.nblk, b.nblk);
    ck_assert_int_eq(memcmp(a.blk, b.blk, a.nblk * sizeof(*a.blk)), 0);
    dsm_heap_fini(&a);
    dsm_heap_fini(&b);
}
END_TEST

START_TEST(test_coalesce)
{
    dsm_heap_t h;
    size_t o[4];
    ck_assert_int_eq(dsm_heap_init(&h, 4096), 0);
    for (int i = 0; i < 4; i++)
        o[i] = dsm_heap_alloc(&h, 1024, 0);
    ck_assert_uint_eq(dsm_heap_alloc(&h, 1, 0), SIZE_MAX); /* full */
    ck_assert_uint_eq(h.nblk, 4);
    /* Free 1 and 3 (not adjacent), then 2: merges with both sides. */
    dsm_heap_free(&h, o[1]);
    dsm_heap_free(&h, o[3]);
    ck_assert_uint_eq(dsm_heap_largest_free(&h), 1024);
    ck_assert_uint_eq(dsm_heap_alloc(&h, 2048, 0), SIZE_MAX);
    dsm_heap_free(&h, o[2]);
    check_invariants(&h);
    ck_assert_uint_eq(h.nblk, 2);
    ck_assert_uint_eq(dsm_heap_largest_free(&h), 3072);
    ck_assert_uint_eq(dsm_heap_alloc(&h, 3072, 0), o[1]);
    dsm_heap_free(&h, o[1]);
    /* Free the first: everything is one free block again. */
    dsm_heap_free(&h, o[0]);
    check_invariants(&h);
    ck_assert_uint_eq(h.nblk, 1);
    ck_assert_uint_eq(h.used, 0);
    ck_assert_uint_eq(dsm_heap_alloc(&h, 4096, 0), 0);
    dsm_heap_fini(&h);
}
END_TEST

START_TEST(test_realloc)
{
    dsm_heap_t h;
    int moved = -1;
    ck_assert_int_eq(dsm_heap_init(&h, MB), 0);
    size_t a = dsm_heap_alloc(&h, 1000, 0);
    /* Grow in place into the free space after it. */
    size_t a2 = dsm_heap_realloc(&h, a, 10000, &moved);
    ck_assert_uint_eq(a2, a);
    ck_assert_int_eq(moved, 0);
    ck_assert_uint_ge(dsm_heap_block_size(&h, a), 10000);
    check_invariants(&h);
    size_t b = dsm_heap_alloc(&h, 64, 0); /* right after a */
    ck_assert_uint_eq(b, a + dsm_heap_block_size(&h, a));
    /* Shrink in place; the tail is free again (and merges). */
    moved = -1;
    ck_assert_uint_eq(dsm_heap_realloc(&h, a, 100, &moved), a);
    ck_assert_int_eq(moved, 0);
    ck_assert_uint_eq(dsm_heap_block_size(&h, a), 128);
    check_invariants(&h);
    ck_assert_uint_eq(dsm_heap_alloc(&h, 64, 0), a + 128);
    /* Grow past the blocker b: must move, old block freed. */
    size_t used_before = h.used;
    size_t c = dsm_heap_realloc(&h, a, 20000, &moved);
    ck_assert_uint_ne(c, SIZE_MAX);
    ck_assert_uint_ne(c, a);
    ck_assert_int_eq(moved, 1);
    ck_assert_uint_eq(dsm_heap_block_size(&h, a), 0);
    ck_assert_uint_eq(h.used, used_before - 128 + dsm_heap_block_size(&h, c));
    check_invariants(&h);
    /* Too large: SIZE_MAX, block unchanged. */
    ck_assert_uint_eq(dsm_heap_realloc(&h, c, 2 * MB, &moved), SIZE_MAX);
    ck_assert_int_eq(moved, 0);
    ck_assert_uint_ge(dsm_heap_block_size(&h, c), 20000);
    /* Fits only if the block itself is reused: not possible, no move. */
    ck_assert_uint_eq(dsm_heap_realloc(&h, c, MB - 64, &moved), SIZE_MAX);
    ck_assert_uint_ge(dsm_heap_block_size(&h, c), 20000);
    /* Not a block. */
    ck_assert_uint_eq(dsm_heap_realloc(&h, c + 64, 10, &moved), SIZE_MAX);
    check_invariants(&h);
    dsm_heap_fini(&h);
}
END_TEST

START_TEST(test_exhaustion)
{
    dsm_heap_t h;
    ck_assert_int_eq(dsm_heap_init(&h, MB), 0);
    ck_assert_uint_eq(dsm_heap_alloc(&h, 2 * MB, 0), SIZE_MAX);
    ck_assert_uint_eq(dsm_heap_alloc(&h, MB + 1, 0), SIZE_MAX);
    ck_assert_uint_eq(dsm_heap_alloc(&h, SIZE_MAX, 0), SIZE_MAX);
    ck_assert_uint_eq(dsm_heap_alloc(&h, SIZE_MAX - 10, 0), SIZE_MAX);
    ck_assert_uint_eq(dsm_heap_alloc(&h, MB, 0), 0);
    ck_assert_uint_eq(dsm_heap_alloc(&h, 1, 0), SIZE_MAX);
    ck_assert_uint_eq(h.used, MB);
    ck_assert_uint_eq(dsm_heap_largest_free(&h), 0);
    /* Alignment larger than the heap. */
    dsm_heap_free(&h, 0);
    ck_assert_uint_eq(dsm_heap_alloc(&h, 64, 0), 0);
    ck_assert_uint_eq(dsm_heap_alloc(&h, 64, 2 * MB), SIZE_MAX);
    check_invariants(&h);
    /* Sizes near the top of size_t (metadata only: no memory behind it). */
    dsm_heap_t big;
    const size_t bsz = SIZE_MAX - 4095;
    ck_assert_int_eq(dsm_heap_init(&big, bsz), 0);
    ck_assert_uint_eq(dsm_heap_alloc(&big, bsz - 10, 0), 0);
    ck_assert_uint_eq(dsm_heap_block_size(&big, 0), bsz);
    ck_assert_uint_eq(dsm_heap_alloc(&big, 1, 0), SIZE_MAX);
    dsm_heap_fini(&big);
    dsm_heap_fini(&h);
}
END_TEST

START_TEST(test_double_free)
{
    dsm_heap_t h;
    ck_assert_int_eq(dsm_heap_init(&h, MB), 0);
    size_t a = dsm_heap_alloc(&h, 100, 0), b = dsm_heap_alloc(&h, 100, 0);
    ck_assert_int_eq(dsm_heap_free(&h, a), 0);
    ck_assert_int_eq(dsm_heap_free(&h, a), -1);
    ck_assert_int_eq(dsm_heap_free(&h, b + 8), -1); /* inside a block */
    ck_assert_int_eq(dsm_heap_free(&h, 5 * MB), -1); /* outside the heap */
    ck_assert_int_eq(dsm_heap_free(&h, b), 0);
    ck_assert_int_eq(dsm_heap_free(&h, b), -1);
    ck_assert_uint_eq(h.used, 0);
    check_invariants(&h);
    dsm_heap_fini(&h);
}
END_TEST

/* Random cycles against a shadow model: an array of live blocks; blocks
 * never overlap, stay aligned, stay in the heap and keep their sizes. */
#define NLIVE 200
START_TEST(test_random_shadow)
{
    dsm_heap_t h;
    struct {
        size_t off, size, align;
        int live;
    } sh[NLIVE];
    const size_t hsize = 16 * MB;
    uint64_t st = 7;
    unsigned char *owner = calloc(hsize / DSM_HEAP_MIN_ALIGN, 1);

    memset(sh, 0, sizeof(sh));
    ck_assert_int_eq(dsm_heap_init(&h, hsize), 0);
    for (int step = 0; step < 6000; step++) {
        st = st * 6364136223846793005ull + 1442695040888963407ull;
        int i = (int)((st >> 33) % NLIVE);
        int op = (int)((st >> 20) % 3);
        size_t sz = (size_t)((st >> 5) % ((st >> 60) ? 5000 : 400000)) + 1;
        size_t al = (size_t)1 << ((st >> 45) % 16);
        if (!sh[i].live) {
            size_t off = dsm_heap_alloc(&h, sz, al);
            if (off == SIZE_MAX) {
                /* Only when it really cannot fit. */
                ck_assert_uint_lt(dsm_heap_largest_free(&h), sz + al);
                continue;
            }
            sh[i].off = off;
            sh[i].size = sz;
            sh[i].align = al;
            sh[i].live = 1;
        } else if (op == 0) {
            ck_assert_int_eq(dsm_heap_free(&h, sh[i].off), 0);
            sh[i].live = 0;
        } else {
            int moved;
            size_t off = dsm_heap_realloc(&h, sh[i].off, sz, &moved);
            if (off == SIZE_MAX) {
                ck_assert_uint_ge(dsm_heap_block_size(&h, sh[i].off),
                                  sh[i].size);
                continue;
            }
            ck_assert_int_eq(moved, off != sh[i].off);
            sh[i].off = off;
            sh[i].size = sz;
            sh[i].align = DSM_HEAP_MIN_ALIGN;
        }
        if (step % 100)
            continue;
        /* Full model check. */
        check_invariants(&h);
        memset(owner, 0, hsize / DSM_HEAP_MIN_ALIGN);
        size_t used = 0;
        for (int k = 0; k < NLIVE; k++) {
            if (!sh[k].live)
                continue;
            size_t bs = dsm_heap_block_size(&h, sh[k].off);
            ck_assert_uint_ge(bs, sh[k].size);
            ck_assert_uint_lt(bs, sh[k].size + DSM_HEAP_MIN_ALIGN);
            ck_assert_uint_eq(sh[k].off % sh[k].align, 0);
            ck_assert_uint_le(sh[k].off + bs, hsize);
            for (size_t u = sh[k].off / DSM_HEAP_MIN_ALIGN;
                 u < (sh[k].off + bs) / DSM_HEAP_MIN_ALIGN; u++) {
                ck_assert_msg(!owner[u], "blocks overlap at %zu",
                              u * DSM_HEAP_MIN_ALIGN);
                owner[u] = 1;
            }
            used += bs;
        }
        ck_assert_uint_eq(used, h.used);
    }
    /* Free everything: back to one block. */
    for (int k = 0; k < NLIVE; k++)
        if (sh[k].live)
            ck_assert_int_eq(dsm_heap_free(&h, sh[k].off), 0);
    ck_assert_uint_eq(h.nblk, 1);
    ck_assert_uint_eq(h.used, 0);
    free(owner);
    dsm_heap_fini(&h);
}
END_TEST

static Suite *heap_suite(void)
{
    Suite *s = suite_create("heap");
    TCase *tc = tcase_create("alloc");
    tcase_add_test(tc, test_alignment);
    tcase_add_test(tc, test_first_fit);
    tcase_add_test(tc, test_determinism);
    tcase_add_test(tc, test_coalesce);
    tcase_add_test(tc, test_realloc);
    tcase_add_test(tc, test_exhaustion);
    tcase_add_test(tc, test_double_free);
    tcase_add_test(tc, test_random_shadow);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    return s;
}

DSM_CHECK_MAIN(heap_suite)
