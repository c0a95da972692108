/*
 * The deprecated OpenSHMEM 1.2 names still work: start_pes, _my_pe,
 * _num_pes, shmalloc, shrealloc, shmemalign, shfree, and the old header
 * location <mpp/shmem.h>.
 */
#include <mpp/shmem.h>

#include "mp.h"

int main(void)
{
    alarm(MP_ALARM_S);
    start_pes(0);
    int me = _my_pe(), npes = _num_pes();
    CHECK(me == shmem_my_pe() && npes == shmem_n_pes(),
          "_my_pe %d/_num_pes %d vs %d/%d", me, npes, shmem_my_pe(),
          shmem_n_pes());
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;

    int *a = shmalloc(100 * sizeof(int));
    CHECK(a, "shmalloc");
    int v[100];
    for (int i = 0; i < 100; i++)
        v[i] = me * 1000 + i;
    shmem_int_put(a, v, 100, right);
    shmem_barrier_all();
    for (int i = 0; i < 100; i++)
        CHECK(a[i] == left * 1000 + i, "shmalloc block elem %d", i);
    int *b = shrealloc(a, 10000 * sizeof(int));
    CHECK(b, "shrealloc");
    for (int i = 0; i < 100; i++)
        CHECK(b[i] == left * 1000 + i, "shrealloc lost elem %d", i);
    shmem_int_p(&b[9999], me, right);
    shmem_barrier_all();
    CHECK(b[9999] == left, "shrealloc'ed block end");
    void *c = shmemalign(4096, 100);
    CHECK(c && (uintptr_t)c % 4096 == 0, "shmemalign");
    shfree(c);
    shfree(b);
    if (me == 0)
        printf("deprecated: %d PEs OK\n", npes);
    shmem_finalize();
    return 0;
}
