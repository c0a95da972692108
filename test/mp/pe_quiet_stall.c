/*
 * shmem_pe_quiet waits for its PEs only: PE 0 has a large put_nbi in
 * flight to PE 1, which stalls outside the library (no progress thread:
 * with tcp;ofi_rxm nothing completes a write to it meanwhile), and puts to
 * PE 2; shmem_pe_quiet of PE 2 must return while PE 1 still stalls. PE 1
 * waits for a file that PE 0 creates only after that pe_quiet returned,
 * so a pe_quiet that waits for every PE of the context (as the network
 * path's did, through its context-wide counters) never returns and the
 * test fails by its alarm. Run under SHMEM_FORCE_NETWORK=1 by network.sh
 * (both providers); with fewer than 3 PEs, or on shm, it checks the data
 * only.
 */
#include "mp.h"

#include <fcntl.h>


#define BIG (1 << 20)

int main(void)
{
    /* PE 1 must not be progressed behind its back while it stalls. */
    setenv("SHMEM_OFI_PROGRESS_US", "0", 0);
    mp_init();
    const int me = shmem_my_pe(), npes = shmem_n_pes();
    char *big = shmem_calloc(BIG, 1);
    long *small = shmem_calloc(64, sizeof(long));
    char *src = malloc(BIG);
    char path[256];
    const char *tmp = getenv("TMPDIR");

    CHECK(big && small && src, "allocation");
    /* Every PE is a child of the same launcher: one name per job. */
    snprintf(path, sizeof(path), "%s/dsm-pe-quiet-stall.%d",
             tmp && *tmp ? tmp : "/tmp", (int)getppid());
    memset(src, 7, BIG);
    shmem_barrier_all();
    if (npes >= 3 && me == 0) {
        long v[64];
        int two = 2;
        for (int k = 0; k < 64; k++)
            v[k] = 1000 + k;
        shmem_putmem_nbi(big, src, BIG, 1);
        shmem_putmem_nbi(big, src, BIG, 2);
        shmem_long_put(small, v, 64, 2);
        shmem_pe_quiet(&two, 1);
        /* PE 2's data is in place before PE 1 did anything. */
        int fd = open(path, O_CREAT | O_WRONLY | O_EXCL, 0600);
        CHECK(fd >= 0, "creating %s", path);
        close(fd);
        shmem_quiet();
    } else if (npes >= 3 && me == 1) {
        struct timespec ms = {0, 1000000};
        while (access(path, F_OK) != 0)
            nanosleep(&ms, NULL);
        unlink(path);
    } else if (me == 0 && npes == 2) {
        int one = 1;
        shmem_putmem_nbi(big, src, BIG, 1);
        shmem_pe_quiet(&one, 1);
    }
    shmem_barrier_all();
    if ((me == 1 && npes >= 2) || (me == 2 && npes >= 3))
        for (size_t k = 0; k < BIG; k += 4093)
            CHECK(big[k] == 7, "byte %zu of the block from PE 0 is %d", k,
                  big[k]);
    if (me == 2)
        for (int k = 0; k < 64; k++)
            CHECK(small[k] == 1000 + k, "word %d from PE 0 is %ld", k,
                  small[k]);
    if (me == 0)
        printf("pe_quiet_stall: %d PEs: ok\n", npes);
    free(src);
    shmem_free(small);
    shmem_free(big);
    shmem_finalize();
    return 0;
}
