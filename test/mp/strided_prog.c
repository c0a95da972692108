/*
 * Helper for strided_bounds.sh (not a test by itself): PE 0 makes one
 * strided call whose range is bad, the others wait in a barrier that the
 * failed job never completes.
 *   strided_prog MODE [--marker=...]
 * MODE: iput_overflow  shmem_long_iput, (nelems-1) * stride * 8 overflows
 *       ibget_overflow shmem_long_ibget, a negative block stride overflows
 *       iput_cross     shmem_long_iput, first element in the static data,
 *                      last in the heap (both symmetric, not one segment)
 *       iget_cross     the same with shmem_long_iget (the source is remote)
 *       ibput_cross    shmem_long_ibput, first block static, last in heap
 *       iput_past_end  shmem_long_iput whose last element lies past the end
 *                      of the heap (SHMEM_SYMMETRIC_SIZE set by the script)
 *       ok             a valid iput/iget/ibput/ibget round trip
 */
#include <stddef.h>
#include <stdint.h>

#include "mp.h"

static long gstat[8]; /* symmetric: the program's static data */

/* Elements of long from a to b (both 8-byte aligned symmetric objects). */
static ptrdiff_t longs_between(const void *a, const void *b)
{
    return (ptrdiff_t)((intptr_t)b - (intptr_t)a) / (ptrdiff_t)sizeof(long);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "ok";
    long local[8] = {1, 2, 3, 4, 5, 6, 7, 8};

    mp_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int right = (me + 1) % npes;
    long *heap = shmem_malloc(64 * sizeof(long));
    CHECK(heap != NULL, "shmem_malloc");
    memset(heap, 0, 64 * sizeof(long));
    shmem_barrier_all();
    if (me == 0) {
        printf("ready\n");
        fflush(stdout);
    }
    if (me != 0) {
        shmem_barrier_all();
        shmem_free(heap);
        shmem_finalize();
        return 0;
    }
    if (!strcmp(mode, "iput_overflow")) {
        shmem_long_iput(heap, local, PTRDIFF_MAX / 4, 1, 3, right);
    } else if (!strcmp(mode, "ibget_overflow")) {
        shmem_long_ibget(local, heap, 1, PTRDIFF_MIN / 8, 1, 3, right);
    } else if (!strcmp(mode, "iput_cross")) {
        shmem_long_iput(gstat, local, longs_between(gstat, heap), 1, 2, right);
    } else if (!strcmp(mode, "iget_cross")) {
        shmem_long_iget(local, gstat, 1, longs_between(gstat, heap), 2, right);
    } else if (!strcmp(mode, "ibput_cross")) {
        shmem_long_ibput(gstat, local, longs_between(gstat, heap), 1, 1, 2,
                         right);
    } else if (!strcmp(mode, "iput_past_end")) {
        /* heap + 2 MiB: past the end of a 1 MiB heap and its internal
         * area, which follows the heap in the same mapping. */
        shmem_long_iput(heap, local, (2 << 20) / (ptrdiff_t)sizeof(long), 1, 2,
                        right);
    } else if (!strcmp(mode, "ok")) {
        long back[8] = {0};
        shmem_long_iput(heap, local, 2, 1, 8, right);
        shmem_long_iget(back, heap, 1, 2, 8, right);
        for (int i = 0; i < 8; i++)
            CHECK(back[i] == local[i], "iput/iget element %d", i);
        shmem_long_ibput(heap + 32, local, -4, 2, 2, 4, right);
        memset(back, 0, sizeof(back));
        shmem_long_ibget(back, heap + 32, 2, -4, 2, 4, right);
        for (int i = 0; i < 8; i++)
            CHECK(back[i] == local[i], "ibput/ibget element %d", i);
        shmem_barrier_all();
        shmem_free(heap);
        shmem_finalize();
        printf("ok\n");
        return 0;
    } else {
        MP_FAIL("unknown mode %s", mode);
    }
    MP_FAIL("%s returned", mode);
}
