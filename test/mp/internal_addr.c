/*
 * PE 0 puts 8 bytes into the runtime's internal area of PE 1 (0 with one
 * PE): the address right after the user heap. The job must fail with one
 * "not symmetric" line, as for any address outside the symmetric segments
 * (test/mp/bad_addr.sh; with SHMEM_FORCE_NETWORK=1 the put goes to the
 * network path, which registers the internal area for the runtime's own
 * signals). argv[1]: SHMEM_SYMMETRIC_SIZE in bytes, a page multiple, which
 * the script also sets: the first allocation of the whole heap starts at
 * its base, so base + size is the internal area's first byte. argv[2]:
 * put (default), get, amo, or a user signal into the internal area:
 * signal (shmem_signal_add), put_signal (shmem_putmem_signal, the data to
 * the user heap) or put_signal_nbi (shmem_putmem_signal_nbi). A user
 * signal must be refused like a put: over the network it goes through the
 * path table's user `signal` op, not the runtime's `sys_signal`, which may
 * reach the internal area (team and barrier words).
 */
#include "mp.h"

int main(int argc, char **argv)
{
    size_t size = argc > 1 ? strtoull(argv[1], NULL, 0) : 0;
    const char *op = argc > 2 ? argv[2] : "put";
    long v = 1;

    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    char *heap = shmem_malloc(size);
    CHECK(heap, "shmem_malloc(%zu): the whole heap", size);
    shmem_barrier_all();
    if (me == 0) {
        long *internal = (long *)(void *)(heap + size);
        if (!strcmp(op, "get"))
            shmem_getmem(&v, internal, sizeof(v), (me + 1) % npes);
        else if (!strcmp(op, "amo"))
            shmem_long_atomic_add(internal, 1, (me + 1) % npes);
        else if (!strcmp(op, "signal"))
            shmem_signal_add((uint64_t *)(void *)internal, 1, (me + 1) % npes);
        else if (!strcmp(op, "put_signal"))
            shmem_putmem_signal(heap, &v, sizeof(v),
                                (uint64_t *)(void *)internal, 1,
                                SHMEM_SIGNAL_SET, (me + 1) % npes);
        else if (!strcmp(op, "put_signal_nbi"))
            shmem_putmem_signal_nbi(heap, &v, sizeof(v),
                                    (uint64_t *)(void *)internal, 1,
                                    SHMEM_SIGNAL_SET, (me + 1) % npes);
        else
            shmem_putmem(internal, &v, sizeof(v), (me + 1) % npes);
        shmem_quiet();
        MP_FAIL("%s to the internal area %p returned", op, (void *)internal);
    }
    shmem_barrier_all();
    MP_FAIL("the barrier completed without PE 0");
}
