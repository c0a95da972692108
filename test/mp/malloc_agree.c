/*
 * Collective allocation agrees on its result (issue #14): when the
 * allocation fails on one PE only (its metadata could not grow, or the
 * program asked that PE for more), every PE returns NULL and the heaps stay
 * symmetric. Before, the failing PE returned NULL while the others got a
 * block, and every later block had a different offset on that PE. Here the
 * last PE asks for more than the heap (SHMEM_SYMMETRIC_SIZE=1M) through
 * each allocation routine; then a block allocated on every PE must have
 * the same offset from an anchor block everywhere, and a realloc that fails
 * on one PE must leave the old block in place on all of them.
 * Different sizes on different PEs are an error the checks find (issue
 * #27: misuse.sh malloc_diff), so this runs with SHMEM_CHECK=0, where a
 * failure on one PE (its metadata could not grow) is what remains.
 */
#include "mp.h"

int main(void)
{
    setenv("SHMEM_SYMMETRIC_SIZE", "1M", 0);
    setenv("SHMEM_MALLOC_WARN", "0", 0);
    setenv("SHMEM_CHECK", "0", 1);
    mp_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int last = me == npes - 1, right = (me + 1) % npes;
    static long offs[4]; /* symmetric (static data) */
    static long all[4 * 64];

    char *anchor = shmem_malloc(64);
    CHECK(anchor, "anchor allocation");
    size_t big = 2 << 20, small = 256;

    void *p = shmem_malloc(last ? big : small);
    CHECK(p == NULL, "shmem_malloc failed on PE %d only, returned %p here",
          npes - 1, p);
    p = shmem_calloc(1, last ? big : small);
    CHECK(p == NULL, "shmem_calloc failed on PE %d only, returned %p here",
          npes - 1, p);
    p = shmem_align(4096, last ? big : small);
    CHECK(p == NULL, "shmem_align failed on PE %d only, returned %p here",
          npes - 1, p);
    p = shmem_malloc_with_hints(last ? big : small,
                                SHMEM_MALLOC_ATOMICS_REMOTE);
    CHECK(p == NULL, "shmem_malloc_with_hints failed on PE %d only, "
          "returned %p here", npes - 1, p);

    /* The heaps still agree: same offset from the anchor everywhere. */
    char *b = shmem_malloc(small);
    CHECK(b, "allocation after the failures");
    offs[0] = (long)(b - anchor);

    /* realloc: grows (and moves, the anchor's neighbour being taken) on
     * every PE but the last, which asks too much: the old block stays. */
    char *c = shmem_malloc(small);
    CHECK(c, "block to realloc");
    memset(c, me + 1, small);
    char *c2 = shmem_realloc(c, last ? big : 4 * small);
    CHECK(c2 == NULL, "shmem_realloc failed on PE %d only, returned %p here",
          npes - 1, c2);
    offs[1] = (long)(c - anchor);
    for (size_t i = 0; i < small; i++)
        CHECK(c[i] == me + 1, "old block byte %zu changed after a failed "
              "realloc", i);
    /* It is still a live block of the old size, symmetric: put to it. */
    shmem_barrier_all();
    shmem_putmem(c, anchor, 64, right);
    shmem_barrier_all();
    char *d = shmem_malloc(3 * small);
    CHECK(d, "allocation after the failed realloc");
    offs[2] = (long)(d - anchor);
    c2 = shmem_realloc(c, 2 * small); /* now everywhere */
    CHECK(c2, "shmem_realloc on every PE");
    offs[3] = (long)(c2 - anchor);

    shmem_long_fcollect(SHMEM_TEAM_WORLD, all, offs, 4);
    for (int pe = 0; pe < npes; pe++)
        for (int k = 0; k < 4; k++)
            CHECK(all[4 * pe + k] == offs[k], "offset %d is %ld on PE %d "
                  "and %ld here: the heaps diverged", k, all[4 * pe + k], pe,
                  offs[k]);
    shmem_free(c2);
    shmem_free(d);
    shmem_free(b);
    shmem_free(anchor);
    if (me == 0)
        printf("malloc_agree: %d PEs OK\n", npes);
    shmem_finalize();
    return 0;
}
