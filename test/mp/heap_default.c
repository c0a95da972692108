/*
 * The default symmetric heap fits a real code's request (issue #14): an
 * integer sort (ISx) asks shmem_malloc for 1 GiB per PE as its first
 * allocation; with the old 512M default it got NULL and crashed. Here,
 * with no heap size in the environment, 1 GiB must be allocated on every
 * PE and usable at both ends (only those pages are touched).
 */
#include "mp.h"

int main(void)
{
    unsetenv("SHMEM_SYMMETRIC_SIZE");
    unsetenv("SMA_SYMMETRIC_SIZE");
    mp_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;
    const size_t gib = (size_t)1 << 30;

    char *keys = shmem_malloc(gib);
    CHECK(keys, "shmem_malloc(1 GiB) with the default heap returned NULL");
    shmem_char_p(&keys[0], (char)me, right);
    shmem_char_p(&keys[gib - 1], (char)(me + 1), right);
    shmem_barrier_all();
    CHECK(keys[0] == (char)left && keys[gib - 1] == (char)(left + 1),
          "first and last byte of the 1 GiB block: %d %d, expected %d %d",
          keys[0], keys[gib - 1], left, left + 1);
    shmem_free(keys);
    if (me == 0)
        printf("heap_default: %d PEs, 1 GiB each OK\n", npes);
    shmem_finalize();
    return 0;
}
