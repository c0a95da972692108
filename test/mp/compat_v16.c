/*
 * OpenSHMEM 1.6 additions of this issue: ibput/ibget (typed, sized, ctx)
 * with block semantics, checked element by element, including what must
 * stay untouched between blocks.
 */
#include "mp.h"

#define NB 5
#define BS 3
#define DST 7 /* dest stride in elements */
#define SST 4 /* source stride */
#define LEN (NB * DST + 8)

int main(void)
{
    mp_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;
    long *d = shmem_malloc(LEN * sizeof(long));
    int *d32 = shmem_malloc(LEN * sizeof(int));
    long src[LEN], got[LEN];
    int src32[LEN];
    CHECK(d && d32, "shmem_malloc");

    for (int form = 0; form < 4; form++) {
        for (int i = 0; i < LEN; i++) {
            d[i] = -1;
            d32[i] = -1;
            src[i] = me * 1000 + form * 100 + i;
            src32[i] = (int)src[i];
        }
        shmem_barrier_all();
        switch (form) {
        case 0:
            shmem_long_ibput(d, src, DST, SST, BS, NB, right);
            shmem_int32_ibput(d32, src32, DST, SST, BS, NB, right);
            break;
        case 1:
            shmem_ctx_long_ibput(SHMEM_CTX_DEFAULT, d, src, DST, SST, BS, NB, right);
            shmem_ctx_ibput32(SHMEM_CTX_DEFAULT, d32, src32, DST, SST, BS, NB, right);
            break;
        case 2:
            shmem_ibput64(d, src, DST, SST, BS, NB, right);
            shmem_ibput32(d32, src32, DST, SST, BS, NB, right);
            break;
        default:
            shmem_ctx_ibput64(SHMEM_CTX_DEFAULT, d, src, DST, SST, BS, NB, right);
            shmem_ctx_int_ibput(SHMEM_CTX_DEFAULT, d32, src32, DST, SST, BS, NB,
                                right);
        }
        shmem_barrier_all();
        for (int i = 0; i < LEN; i++) {
            int b = i / DST, o = i % DST;
            long want = (b < NB && o < BS)
                            ? left * 1000 + form * 100 + b * SST + o
                            : -1;
            CHECK(d[i] == want, "ibput form %d: d[%d] = %ld, expected %ld",
                  form, i, d[i], want);
            CHECK(d32[i] == (int)want, "ibput32 form %d: d32[%d] = %d", form,
                  i, d32[i]);
        }
        shmem_barrier_all();

        /* ibget the other way: blocks of the right PE's d (stride DST) into
         * a local array with stride SST. */
        for (int i = 0; i < LEN; i++)
            got[i] = -2;
        if (form & 1)
            shmem_ctx_long_ibget(SHMEM_CTX_DEFAULT, got, d, SST, DST, BS, NB,
                                 right);
        else if (form == 2)
            shmem_ibget64(got, d, SST, DST, BS, NB, right);
        else
            shmem_long_ibget(got, d, SST, DST, BS, NB, right);
        for (int i = 0; i < LEN; i++) {
            int b = i / SST, o = i % SST;
            long want = (b < NB && o < BS)
                            ? me * 1000 + form * 100 + b * SST + o
                            : -2;
            CHECK(got[i] == want, "ibget form %d: got[%d] = %ld, expected %ld",
                  form, i, got[i], want);
        }
        shmem_barrier_all();
    }
    if (me == 0)
        printf("compat_v16: %d PEs OK\n", npes);
    shmem_finalize();
    return 0;
}
