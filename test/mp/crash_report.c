/*
 * The program of test/mp/crash_report.sh: bad buffers and faults, one
 * mode per case (src/runtime/stall.c, intro_shmem(3) "A job that
 * crashes"):
 *   null_put    every PE: shmem_putmem(dest, NULL, 8, next PE)
 *   null_get    every PE: shmem_getmem(NULL, src, 8, next PE)
 *   null_nbi    every PE: shmem_getmem_nbi(NULL, src, 64, next PE)
 *   segv        the last PE writes to address 0x10; the others wait in
 *               shmem_barrier_all
 *   bad_source  PE 0: shmem_putmem_nbi of 1 MiB from address 0x1000 to
 *               the next PE, then shmem_quiet (the library's copy faults)
 *   own_handler the program's SIGSEGV handler, set before shmem_init,
 *               prints "PE <me>: own SIGSEGV handler" and exits 4; the
 *               last PE faults as in segv
 * The marker argument the scripts add is ignored.
 */
#include <signal.h>

#include "mp.h"

static long word[8];

static void own_handler(int s)
{
    char b[64];
    int n = snprintf(b, sizeof(b), "PE %d: own SIGSEGV handler\n",
                     shmem_my_pe());
    ssize_t rc = write(STDERR_FILENO, b, (size_t)n);
    (void)rc;
    (void)s;
    _exit(4);
}

/* An address the compiler cannot see through. */
static volatile uintptr_t bad_address = 0x10;

static void fault(int me, int n)
{
    if (me == n - 1)
        *(volatile int *)bad_address = 1;
    shmem_barrier_all();
}

int main(int argc, char **argv)
{
    const char *m = argc > 1 ? argv[1] : "segv";
    if (!strcmp(m, "own_handler"))
        signal(SIGSEGV, own_handler);
    mp_init();
    const int me = shmem_my_pe(), n = shmem_n_pes(), next = (me + 1) % n;
    shmem_barrier_all();
    if (!strcmp(m, "null_put")) {
        void *nul = NULL;
        shmem_putmem(word, nul, 8, next);
    } else if (!strcmp(m, "null_get")) {
        void *nul = NULL;
        shmem_getmem(nul, word, 8, next);
    } else if (!strcmp(m, "null_nbi")) {
        void *nul = NULL;
        shmem_getmem_nbi(nul, word, 64, next);
        shmem_quiet();
    } else if (!strcmp(m, "segv") || !strcmp(m, "own_handler")) {
        fault(me, n);
    } else if (!strcmp(m, "bad_source")) {
        char *big = shmem_malloc(1 << 20);
        CHECK(big, "shmem_malloc(1M)");
        if (me == 0) {
            shmem_putmem_nbi(big, (const void *)(uintptr_t)0x1000, 1 << 20,
                             next);
            shmem_quiet();
        }
        shmem_barrier_all();
    } else {
        MP_FAIL("unknown mode %s", m);
    }
    MP_FAIL("mode %s went on", m);
}
