/*
 * Setup and query routines: query_initialized before/after init and after
 * finalize, init_thread/query_thread, my_pe/n_pes, info_get_version/name,
 * pe_accessible, addr_accessible and shmem_ptr (stores through the pointer
 * are seen by the owner), shmemx_wtime.
 */
#include <shmemx.h>

#include "mp.h"

static long sym_global[4];

int main(void)
{
    int init = -1, provided = -1, prov2 = -1;

    alarm(MP_ALARM_S);
    CHECK(shmem_query_initialized(&init) == 0 && init == 0,
          "query_initialized before init: %d", init);
    CHECK(shmem_my_pe() < 0 && shmem_n_pes() < 0,
          "my_pe/n_pes before init: %d %d", shmem_my_pe(), shmem_n_pes());

    CHECK(shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided) == 0,
          "shmem_init_thread failed");
    CHECK(provided >= SHMEM_THREAD_SINGLE && provided <= SHMEM_THREAD_MULTIPLE,
          "provided thread level %d", provided);
    shmem_query_thread(&prov2);
    CHECK(prov2 == provided, "query_thread %d, init_thread gave %d", prov2,
          provided);
    CHECK(shmem_query_initialized(&init) == 0 && init == 1,
          "query_initialized after init: %d", init);

    int me = shmem_my_pe(), npes = shmem_n_pes();
    CHECK(npes >= 1 && me >= 0 && me < npes, "my_pe %d n_pes %d", me, npes);
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;

    /* Every PE sees the same n_pes and distinct ranks. */
    int *seen = shmem_calloc((size_t)npes, sizeof(int));
    CHECK(seen, "shmem_calloc");
    for (int pe = 0; pe < npes; pe++)
        shmem_int_p(&seen[me], npes * 1000 + me + 1, pe);
    shmem_barrier_all();
    for (int pe = 0; pe < npes; pe++)
        CHECK(seen[pe] == npes * 1000 + pe + 1, "rank %d reported %d", pe,
              seen[pe]);

    int major = 0, minor = -1;
    shmem_info_get_version(&major, &minor);
    CHECK(major == 1 && minor == 5, "version %d.%d", major, minor);
    CHECK(major == SHMEM_MAJOR_VERSION && minor == SHMEM_MINOR_VERSION,
          "version vs header");
    char name[SHMEM_MAX_NAME_LEN];
    memset(name, 'x', sizeof(name));
    shmem_info_get_name(name);
    CHECK(memchr(name, 0, sizeof(name)) != NULL, "name not terminated");
    CHECK(strcmp(name, SHMEM_VENDOR_STRING) == 0, "name '%s'", name);

    /* Accessibility. */
    for (int pe = 0; pe < npes; pe++)
        CHECK(shmem_pe_accessible(pe) == 1, "pe_accessible(%d)", pe);
    CHECK(shmem_pe_accessible(-1) == 0, "pe_accessible(-1)");
    CHECK(shmem_pe_accessible(npes) == 0, "pe_accessible(npes)");
    int stack_var;
    long *heap = shmem_malloc(64 * sizeof(long));
    CHECK(heap, "shmem_malloc");
    CHECK(shmem_addr_accessible(heap, right) == 1, "heap not accessible");
    CHECK(shmem_addr_accessible(heap + 63, left) == 1, "heap end");
    CHECK(shmem_addr_accessible(sym_global, right) == 1, "global");
    CHECK(shmem_addr_accessible(&stack_var, right) == 0, "stack accessible");
    CHECK(shmem_addr_accessible(heap, npes) == 0, "addr_accessible(npes)");
    CHECK(shmem_addr_accessible(heap, -1) == 0, "addr_accessible(-1)");
    void *priv = malloc(16);
    CHECK(shmem_addr_accessible(priv, me) == 0, "malloc'ed accessible");

    /* shmem_ptr: self is the address itself; peers' copies are
     * load/store-able on one node. */
    CHECK(shmem_ptr(heap, me) == heap, "shmem_ptr(self)");
    CHECK(shmem_ptr(&sym_global[1], me) == &sym_global[1],
          "shmem_ptr(self, global)");
    CHECK(shmem_ptr(&stack_var, right) == NULL, "shmem_ptr(stack)");
    CHECK(shmem_ptr(heap, npes) == NULL, "shmem_ptr(invalid PE)");
    long *rp = shmem_ptr(heap, right);
    long *rg = shmem_ptr(sym_global, right);
    if (mp_network() && right != me) {
        /* Another node: not load/store-able, but reachable by RMA. */
        CHECK(!rp && !rg, "shmem_ptr(right) not NULL across the network");
        CHECK(shmem_pe_accessible(right) && shmem_addr_accessible(heap, right),
              "PE %d not accessible through the network", right);
    } else {
        CHECK(rp && rg, "shmem_ptr(right) NULL on one node");
        shmem_barrier_all();
        for (int i = 0; i < 64; i++)
            rp[i] = me * 100 + i;
        rg[2] = me + 7;
        shmem_barrier_all();
        for (int i = 0; i < 64; i++)
            CHECK(heap[i] == left * 100 + i, "store through shmem_ptr elem %d",
                  i);
        CHECK(sym_global[2] == left + 7, "store through shmem_ptr to a global");
        CHECK(*(long *)shmem_ptr(&heap[5], right) == me * 100 + 5,
              "load through shmem_ptr");
    }
    shmem_barrier_all();

    double t0 = shmemx_wtime();
    usleep(20000);
    double t1 = shmemx_wtime();
    CHECK(t1 - t0 >= 0.015 && t1 - t0 < 5, "shmemx_wtime: %g s for 20 ms",
          t1 - t0);

    /* Nested init (1.6): counted, matched by finalize. */
    shmem_init();
    shmem_finalize();
    CHECK(shmem_query_initialized(&init) == 0 && init == 1,
          "an inner finalize ended the library");
    shmem_free(heap);
    free(priv);
    shmem_free(seen);
    shmem_barrier_all();
    if (me == 0)
        printf("query: %d PEs OK\n", npes);
    shmem_finalize();
    CHECK(shmem_query_initialized(&init) == 0 && init == 0,
          "query_initialized after finalize: %d", init);
    return 0;
}
