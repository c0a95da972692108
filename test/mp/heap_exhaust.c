/*
 * Out of symmetric heap: with SHMEM_SYMMETRIC_SIZE=1M (set here unless the
 * caller set it), shmem_malloc(2M) returns NULL on every PE and the job goes
 * on: smaller allocations still work, and the program ends with status 0.
 * Every PE fails the same way, so each prints its own first-failure line.
 * heap_debug.sh runs it with SHMEM_DEBUG=1 and checks the message;
 * HEAP_EXHAUST_NEGATIVE=1: shmem_malloc((size_t)-5) first.
 */
#include "mp.h"

int main(void)
{
    if (!getenv("SMA_SYMMETRIC_SIZE")) /* heap_debug.sh sets that one */
        setenv("SHMEM_SYMMETRIC_SIZE", "1M", 0);
    mp_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();

    /* heap_debug.sh: a negative size converted to size_t first. */
    if (getenv("HEAP_EXHAUST_NEGATIVE")) {
        int neg = -5;
        CHECK(shmem_malloc((size_t)neg) == NULL, "shmem_malloc(-5) not NULL");
    }
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;

    void *p = shmem_malloc(2 << 20);
    CHECK(p == NULL, "shmem_malloc(2M) with a 1M heap returned %p", p);
    CHECK(shmem_calloc(2, 1 << 20) == NULL, "shmem_calloc(2, 1M) not NULL");
    CHECK(shmem_align(4096, 2 << 20) == NULL, "shmem_align(2M) not NULL");

    /* The heap still works after the failures. */
    long *a = shmem_malloc(512 * 1024);
    CHECK(a, "shmem_malloc(512K) after a failure");
    /* Exhaust what is left, then fail again. */
    CHECK(shmem_malloc(600 * 1024) == NULL, "shmem_malloc(600K) with 512K "
          "free");
    long *b = shmem_realloc(a, 2 << 20);
    CHECK(b == NULL, "shmem_realloc beyond the heap not NULL");
    a[0] = me;
    shmem_barrier_all();
    shmem_long_p(&a[1], me, right);
    shmem_barrier_all();
    CHECK(a[0] == me && a[1] == left, "the old block after a failed realloc");
    shmem_free(a);
    a = shmem_malloc((1 << 20) - 4096);
    CHECK(a, "shmem_malloc of nearly the whole heap after free");
    shmem_free(a);
    if (me == 0)
        printf("heap_exhaust: %d PEs OK\n", npes);
    shmem_finalize();
    return 0;
}
