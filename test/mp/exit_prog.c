/*
 * Helper for the exit-path scripts (not a test by itself):
 *   exit_prog MODE [--marker=...]
 * MODE: global_exit  PE 1 calls shmem_global_exit(7), the others wait in a
 *                    barrier that never completes
 *       abort        PE 1 calls abort(), the others wait in a barrier
 *       bad_pe       PE 0 puts to PE n_pes+3 (shmem_putmem)
 *       bad_addr     PE 0 puts to a stack (non-symmetric) address
 *       sleep        every PE loops on barrier + sleep until killed
 *       early_exit   PE 1 calls _exit(0) (no finalize, not even the
 *                    implicit one at exit), the others wait in a barrier
 *       no_finalize  every PE returns from main without shmem_finalize
 *                    (an error since 1.4: the job fails)
 *       finalize_exit  every PE calls shmem_finalize, then _exit(0) (no
 *                    exit handlers: a clean end all the same)
 *       ok           init, barrier, finalize
 * The marker argument is ignored: it only makes the processes findable.
 */
#include "mp.h"

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "ok";
    char stackbuf[64];

    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    long *heap = shmem_malloc(64);
    shmem_barrier_all();
    /* Tell the scripts we are all past init. */
    if (me == 0) {
        printf("ready\n");
        fflush(stdout);
    }
    if (!strcmp(mode, "global_exit")) {
        if (me == 1 || npes == 1)
            shmem_global_exit(7);
        shmem_barrier_all();
        MP_FAIL("barrier completed without PE 1");
    } else if (!strcmp(mode, "abort")) {
        if (me == 1 || npes == 1)
            abort();
        shmem_barrier_all();
        MP_FAIL("barrier completed without PE 1");
    } else if (!strcmp(mode, "bad_pe")) {
        if (me == 0)
            shmem_putmem(heap, stackbuf, 8, npes + 3);
        shmem_barrier_all();
        MP_FAIL("put to PE %d returned", npes + 3);
    } else if (!strcmp(mode, "bad_addr")) {
        if (me == 0)
            shmem_putmem(stackbuf, heap, 8, (me + 1) % npes);
        shmem_barrier_all();
        MP_FAIL("put to a stack address returned");
    } else if (!strcmp(mode, "early_exit")) {
        if (me == 1 || npes == 1) {
            fflush(stdout);
            _exit(0);
        }
        shmem_barrier_all();
        MP_FAIL("barrier completed without PE 1");
    } else if (!strcmp(mode, "no_finalize")) {
        shmem_barrier_all();
        return 0;
    } else if (!strcmp(mode, "sleep")) {
        for (;;) {
            shmem_barrier_all();
            usleep(10000);
        }
    }
    shmem_free(heap);
    shmem_finalize();
    if (!strcmp(mode, "finalize_exit")) {
        fflush(stdout);
        _exit(0);
    }
    return 0;
}
