/*
 * shmem_malloc_with_hints (issue #14): a hint value with bits the runtime
 * does not recognise behaves as shmem_malloc (spec). A public suite passes
 * ~SHMEM_MALLOC_ATOMICS_REMOTE, which includes SHMEMX_MALLOC_DEVICE; that
 * came back NULL where there is no device heap. Device memory only for the
 * exact SHMEMX_MALLOC_DEVICE hint (alone or with the standard hints): where
 * no device heap exists that is NULL on every PE (documented in
 * shmem_malloc(3)); SHMEM_MALLOC_WARN=0 keeps that quiet here.
 */
#include "mp.h"

#include <shmemx.h>

static void use_block(long *p, const char *what)
{
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;

    CHECK(p, "%s returned NULL", what);
    CHECK(shmem_addr_accessible(p, right), "%s: not symmetric", what);
    p[0] = -1;
    shmem_barrier_all();
    shmem_long_p(p, me, right);
    shmem_long_atomic_add(p + 1, 1, right);
    shmem_barrier_all();
    CHECK(p[0] == left, "%s: p[0] = %ld, expected %d", what, p[0], left);
    shmem_free(p);
}

int main(void)
{
    setenv("SHMEM_MALLOC_WARN", "0", 0);
    mp_init();
    const long hints[] = {
        0,
        SHMEM_MALLOC_ATOMICS_REMOTE,
        SHMEM_MALLOC_SIGNAL_REMOTE,
        SHMEM_MALLOC_ATOMICS_REMOTE | SHMEM_MALLOC_SIGNAL_REMOTE,
        ~SHMEM_MALLOC_ATOMICS_REMOTE, /* the suite's value */
        ~0L,
        1L << 40,
        SHMEMX_MALLOC_DEVICE | (1L << 20), /* not the exact device hint */
    };
    char what[64];

    for (size_t i = 0; i < sizeof(hints) / sizeof(hints[0]); i++) {
        snprintf(what, sizeof(what), "shmem_malloc_with_hints(hints %#lx)",
                 (unsigned long)hints[i]);
        use_block(shmem_malloc_with_hints(16 * sizeof(long), hints[i]),
                  what);
    }
    /* Size 0 is NULL whatever the hints. */
    CHECK(shmem_malloc_with_hints(0, ~SHMEM_MALLOC_ATOMICS_REMOTE) == NULL,
          "size 0 with unknown hints not NULL");

    /* The exact device hint: device memory, or NULL on every PE where
     * there is no device heap (the heaps stay symmetric either way). */
    const long dev[] = {SHMEMX_MALLOC_DEVICE,
                        SHMEMX_MALLOC_DEVICE | SHMEM_MALLOC_ATOMICS_REMOTE,
                        SHMEMX_MALLOC_DEVICE | SHMEM_MALLOC_SIGNAL_REMOTE};
    for (size_t i = 0; i < sizeof(dev) / sizeof(dev[0]); i++) {
        void *d = shmem_malloc_with_hints(4096, dev[i]);
        long *h = shmem_malloc(sizeof(long));
        CHECK(h, "shmem_malloc after a device request");
        if (d) { /* a device heap: not host-accessible as a word */
            CHECK(shmem_addr_accessible(d, shmem_my_pe()),
                  "device block not symmetric");
            shmem_free(d);
        }
        shmem_free(h);
    }
    if (shmem_my_pe() == 0)
        printf("malloc_hints: %d PEs OK\n", shmem_n_pes());
    shmem_finalize();
    return 0;
}
