/*
 * The example job: every PE puts a greeting into its right neighbour's
 * symmetric buffer, then all PEs check what arrived and PE 0 collects a
 * checksum from everyone with gets.
 *
 *   oshcc hello.c -o hello && oshrun -n 4 ./hello
 */
#include <shmem.h>
#include <stdio.h>
#include <string.h>

static char greeting[64]; /* globals are symmetric too */

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;
    long *sum = shmem_malloc(sizeof(long));

    char msg[64];
    snprintf(msg, sizeof(msg), "hello from PE %d", me);
    shmem_putmem(greeting, msg, sizeof(msg), right);
    *sum = (long)strlen(msg) * (me + 1);
    shmem_barrier_all();

    char expect[64];
    snprintf(expect, sizeof(expect), "hello from PE %d", left);
    int ok = strcmp(greeting, expect) == 0;
    printf("PE %d of %d got \"%s\" %s\n", me, npes, greeting, ok ? "ok" : "WRONG");

    if (me == 0) {
        long total = 0;
        for (int pe = 0; pe < npes; pe++)
            total += shmem_long_g(sum, pe);
        printf("PE 0 gathered checksum %ld from %d PEs\n", total, npes);
    }
    shmem_barrier_all();
    shmem_free(sum);
    shmem_finalize();
    return ok ? 0 : 1;
}
