/*
 * The device heap on the hsa backend, over the SDMA engine model (run by
 * test/hsa/devheap.sh): shmem_malloc_with_hints(SHMEMX_MALLOC_DEVICE)
 * objects of 1, 2 or 4 PEs (the peers' heaps attached through
 * hsa_amd_ipc_memory_attach) moved only by the engines, with data
 * checked after every step:
 *  - blocking put and get, host <-> device heap and device heap <->
 *    device heap, sizes from 1 byte to over one COPY_LINEAR packet (the
 *    4 MiB - 32 B limit: split);
 *  - put_nbi / get_nbi to and from every PE, many in flight, one quiet;
 *  - typed p/g and put/get;
 *  - fcollectmem, alltoallmem, broadcastmem and a sum reduction on the
 *    device heap;
 *  - a private device buffer (the model's device pool, as hipMalloc would
 *    give) as the local side of put and get;
 *  - a persistent fcollect (shmemx_fcollectmem_init) started 20 times.
 * The test never reads device memory with the CPU: data goes in and comes
 * out through shmem_putmem / shmem_getmem between host buffers and the
 * device heap (on a GPU the CPU could not read VRAM; over the model it
 * could, which would hide a bug).
 * With argument "none": the device heap is expected to be refused
 * (shmem_malloc_with_hints returns NULL; the script checks the line).
 * With "stream": an on-stream routine, which the hsa backend refuses
 * (the job fails with one line). With amo, wait, test, signal_add,
 * signal_fetch, put_signal: that CPU-side routine on a device-heap word
 * (one line, the job fails); iput: a strided put and get (they work).
 */
#define MP_ALARM_S 120
#include "test/mp/mp.h"

#include <shmemx.h>

#include <dlfcn.h>
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>

#define MAXB ((size_t)5 << 20) /* over one COPY_LINEAR (4 MiB - 32 B) */

static unsigned char *h, *e;

/* The engine model's entry points, from the library the backend loaded
 * (SHMEM_HSA_LIBRARY; dlopen gives the same instance). */
static void *model_sym(const char *name)
{
    const char *lib = getenv("SHMEM_HSA_LIBRARY");
    void *m = lib ? dlopen(lib, RTLD_NOW | RTLD_NOLOAD) : NULL;
    void *f = m ? dlsym(m, name) : NULL;
    if (m)
        dlclose(m);
    return f;
}

static hsa_status_t first_pool(hsa_amd_memory_pool_t p, void *arg)
{
    *(hsa_amd_memory_pool_t *)arg = p;
    return HSA_STATUS_INFO_BREAK;
}

/* n bytes of the first GPU's device-local pool, or NULL off the model. */
static void *private_device(size_t n)
{
    hsa_status_t (*iter)(hsa_agent_t,
                         hsa_status_t (*)(hsa_amd_memory_pool_t, void *),
                         void *);
    hsa_status_t (*alloc)(hsa_amd_memory_pool_t, size_t, uint32_t, void **);
    void *a = model_sym("hsa_amd_agent_iterate_memory_pools");
    void *b = model_sym("hsa_amd_memory_pool_allocate");
    hsa_amd_memory_pool_t pool = {0};
    hsa_agent_t gpu = {2};
    void *p = NULL;
    if (!a || !b || !model_sym("hsa_model_version"))
        return NULL;
    memcpy(&iter, &a, sizeof(a));
    memcpy(&alloc, &b, sizeof(b));
    if (iter(gpu, first_pool, &pool) != HSA_STATUS_SUCCESS || !pool.handle ||
        alloc(pool, n, 0, &p) != HSA_STATUS_SUCCESS)
        return NULL;
    return p;
}

static void private_free(void *p)
{
    hsa_status_t (*pfree)(void *);
    void *f = model_sym("hsa_amd_memory_pool_free");
    memcpy(&pfree, &f, sizeof(f));
    CHECK(pfree(p) == HSA_STATUS_SUCCESS, "pool_free");
}

static void fill(int s, size_t nb, int r)
{
    for (size_t o = 0; o < nb; o++)
        h[o] = mp_byte(s, o, r);
}

static void expect(const unsigned char *b, int s, size_t nb, int r,
                   const char *what)
{
    for (size_t o = 0; o < nb; o++)
        if (b[o] != mp_byte(s, o, r))
            MP_FAIL("%s: %zu bytes, byte %zu is %u, expected %u (from PE "
                    "%d, round %d)", what, nb, o, b[o], mp_byte(s, o, r), s,
                    r);
}

int main(int argc, char **argv)
{
    mp_init();
    const int me = shmem_my_pe(), n = shmem_n_pes();
    static const size_t sizes[] = {1, 7, 4096, 65539, MAXB};

    if (argc > 1 && !strcmp(argv[1], "none")) {
        void *p = shmem_malloc_with_hints(4096, SHMEMX_MALLOC_DEVICE);
        CHECK(p == NULL, "no device heap expected");
        CHECK(shmemx_malloc_device(4096) == NULL, "no device heap expected");
        shmem_finalize();
        return 0;
    }

    if (argc > 1 && strncmp(argv[1], "--", 2) && strcmp(argv[1], "none") &&
        strcmp(argv[1], "stream")) {
        /* CPU-side routines on a device-heap word (as test/gpu/
         * gpu_devword.c on cuda): the strided put/get works through the
         * engines, the others end the job with one line (the CPU cannot
         * operate on GPU memory; over the model that memory is PROT_NONE,
         * so a CPU access would be a SIGSEGV instead). */
        const char *mode = argv[1];
        const int peer = (me + 1) % n;
        uint64_t *dw = shmemx_malloc_device(64 * sizeof(uint64_t));
        uint64_t *hsig = shmem_malloc(sizeof(uint64_t));
        uint64_t v[64], back[32];
        CHECK(dw && hsig, "allocations");
        for (int i = 0; i < 64; i++)
            v[i] = (uint64_t)me * 1000 + (uint64_t)i;
        shmem_barrier_all();
        if (!strcmp(mode, "amo"))
            shmem_uint64_atomic_add(dw, 1, peer);
        else if (!strcmp(mode, "wait"))
            shmem_uint64_wait_until(dw, SHMEM_CMP_EQ, 1);
        else if (!strcmp(mode, "test"))
            (void)shmem_uint64_test(dw, SHMEM_CMP_EQ, 1);
        else if (!strcmp(mode, "signal_add"))
            shmem_signal_add(dw, 1, peer);
        else if (!strcmp(mode, "signal_fetch"))
            (void)shmem_signal_fetch(dw);
        else if (!strcmp(mode, "put_signal"))
            shmem_putmem_signal(hsig, v, 8, dw, 1, SHMEM_SIGNAL_SET, peer);
        else if (!strcmp(mode, "iput")) {
            const int from = (me + n - 1) % n;
            shmem_uint64_iput(dw, v, 2, 1, 32, peer);
            shmem_quiet();
            shmem_barrier_all();
            shmem_uint64_iget(back, dw, 1, 2, 32, me);
            for (int i = 0; i < 32; i++)
                CHECK(back[i] == (uint64_t)from * 1000 + (uint64_t)i,
                      "iput/iget element %d", i);
        } else
            MP_FAIL("unknown mode %s", mode);
        shmem_barrier_all();
        shmem_finalize();
        return 0;
    }

    if (argc > 1 && !strcmp(argv[1], "stream")) {
        /* The hsa backend has a device heap but no streams: one line. */
        char *d = shmemx_malloc_device(64);
        char b[8] = {0};
        CHECK(d != NULL, "a device heap");
        shmemx_putmem_on_stream(d, b, sizeof(b), me, NULL);
        MP_FAIL("shmemx_putmem_on_stream returned on the hsa backend");
    }

    unsigned char *src = shmem_malloc_with_hints(MAXB * (size_t)n,
                                                 SHMEMX_MALLOC_DEVICE);
    unsigned char *dst = shmem_malloc_with_hints(MAXB * (size_t)n,
                                                 SHMEMX_MALLOC_DEVICE);
    long *lsrc = shmemx_malloc_device(64 * sizeof(long));
    long *ldst = shmemx_malloc_device(64 * sizeof(long));
    h = malloc(MAXB * (size_t)n);
    e = malloc(MAXB * (size_t)n);
    CHECK(src && dst && lsrc && ldst && h && e, "device heap allocations");

    for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        const size_t nb = sizes[k];
        const int r = (int)k, to = (me + 1) % n, from = (me + n - 1) % n;

        /* host -> my device heap, and back */
        fill(me, nb, r);
        shmem_putmem(src, h, nb, me);
        memset(e, 0, nb);
        shmem_getmem(e, src, nb, me);
        expect(e, me, nb, r, "own device heap put/get");
        shmem_barrier_all();

        /* get from the next PE's device heap into host memory */
        memset(e, 0, nb);
        shmem_getmem(e, src, nb, to);
        expect(e, to, nb, r, "get from a peer's device heap");

        /* device heap -> the next PE's device heap (source device too) */
        shmem_putmem(dst + (size_t)me * nb, src, nb, to);
        shmem_barrier_all();
        memset(e, 0, nb);
        shmem_getmem(e, dst + (size_t)from * nb, nb, me);
        expect(e, from, nb, r, "device-to-device put from the previous PE");
        shmem_barrier_all(); /* checked before anyone writes dst again */

        /* nbi: my block to every PE, every PE's block back, one quiet */
        fill(me + 100, nb, r);
        for (int pe = 0; pe < n; pe++)
            shmem_putmem_nbi(dst + (size_t)me * nb, h, nb, pe);
        shmem_quiet();
        shmem_barrier_all();
        memset(e, 0, nb * (size_t)n);
        for (int pe = 0; pe < n; pe++)
            shmem_getmem_nbi(e + (size_t)pe * nb, dst + (size_t)pe * nb, nb,
                             (me + pe) % n);
        shmem_quiet();
        for (int pe = 0; pe < n; pe++)
            expect(e + (size_t)pe * nb, pe + 100, nb, r, "nbi put then get");
        shmem_barrier_all();

        /* fcollect: PE s contributes mp_byte(s + 200, ...) */
        fill(me + 200, nb, r);
        shmem_putmem(src, h, nb, me);
        CHECK(shmem_fcollectmem(SHMEM_TEAM_WORLD, dst, src, nb) == 0,
              "fcollectmem %zu B", nb);
        shmem_getmem(e, dst, nb * (size_t)n, me);
        for (int s = 0; s < n; s++)
            expect(e + (size_t)s * nb, s + 200, nb, r, "fcollectmem");

        /* alltoall: my block for PE d is mp_byte(me * n + d + 300, ...) */
        shmem_barrier_all(); /* no peer still reads my src */
        {
            for (int d = 0; d < n; d++) {
                fill(me * n + d + 300, nb, r);
                shmem_putmem(src + (size_t)d * nb, h, nb, me);
            }
            CHECK(shmem_alltoallmem(SHMEM_TEAM_WORLD, dst, src, nb) == 0,
                  "alltoallmem %zu B", nb);
            shmem_getmem(e, dst, nb * (size_t)n, me);
            for (int s = 0; s < n; s++)
                expect(e + (size_t)s * nb, s * n + me + 300, nb, r,
                       "alltoallmem");
        }

        /* broadcast from the last PE */
        fill(n - 1 + 400, nb, r);
        if (me == n - 1)
            shmem_putmem(src, h, nb, me);
        shmem_barrier_all();
        CHECK(shmem_broadcastmem(SHMEM_TEAM_WORLD, dst, src, nb, n - 1) == 0,
              "broadcastmem %zu B", nb);
        memset(e, 0, nb);
        shmem_getmem(e, dst, nb, me);
        expect(e, n - 1 + 400, nb, r, "broadcastmem");
        shmem_barrier_all();
    }

    /* typed: p/g and put/get of longs, and a sum reduction */
    long v[64], w[64];
    for (int i = 0; i < 64; i++)
        v[i] = (long)me * 1000 + i;
    shmem_long_put(lsrc, v, 64, me);
    shmem_long_p(&lsrc[63], -7 - me, me);
    shmem_barrier_all();
    const int to = (me + 1) % n;
    CHECK(shmem_long_g(&lsrc[63], to) == -7 - to, "long_g from PE %d", to);
    shmem_long_get(w, lsrc, 63, to);
    for (int i = 0; i < 63; i++)
        CHECK(w[i] == (long)to * 1000 + i, "long_get element %d", i);
    CHECK(shmem_long_sum_reduce(SHMEM_TEAM_WORLD, ldst, lsrc, 63) == 0,
          "long_sum_reduce");
    shmem_long_get(w, ldst, 63, me);
    for (int i = 0; i < 63; i++) {
        long want = 1000L * (long)n * (n - 1) / 2 + (long)n * i;
        CHECK(w[i] == want, "sum element %d: %ld, expected %ld", i, w[i],
              want);
    }

    /* A private device buffer (what hipMalloc gives: the model's
     * device-local pool, taken from the model the library loaded) as the
     * local side of RMA: the backend must classify it as device memory
     * (hsa_amd_pointer_info) and move it by engine, never by the CPU. */
    unsigned char *priv = private_device(MAXB);
    CHECK(priv || !model_sym("hsa_model_version"),
          "a private buffer of the model's device pool");
    if (priv) {
        const size_t nb = 65539;
        fill(me + 600, nb, 0);
        shmem_putmem(src, h, nb, me);       /* host -> my device heap */
        shmem_getmem(priv, src, nb, me);    /* device heap -> private */
        shmem_barrier_all();
        shmem_putmem(dst, priv, nb, to);    /* private -> peer's heap */
        shmem_barrier_all();
        memset(e, 0, nb);
        shmem_getmem(e, dst, nb, me);
        expect(e, (me + n - 1) % n + 600, nb, 0, "put from a private device "
               "buffer");
        memset(e, 0, nb);
        shmem_getmem(priv, dst, nb, to);    /* peer's heap -> private */
        shmem_putmem(src, priv, nb, me);    /* private -> my heap */
        shmem_getmem(e, src, nb, me);
        expect(e, me + 600, nb, 0, "get into a private device buffer");
        shmem_barrier_all();
        private_free(priv);
    }

    /* Persistent fcollect on the device heap (the exchange through the
     * device heap's synchronisation words, zeroed with copy_sync at
     * free), started 20 times, data checked each time. */
    shmemx_req_t req;
    const size_t pb = 4096;
    CHECK(shmemx_fcollectmem_init(SHMEM_TEAM_WORLD, dst, src, pb, &req) == 0,
          "fcollectmem_init on the device heap");
    for (int it = 0; it < 20; it++) {
        fill(me + 500, pb, it);
        shmem_putmem(src, h, pb, me);
        shmem_barrier_all();
        CHECK(shmemx_req_start(req) == 0, "req_start %d", it);
        CHECK(shmemx_req_wait(req) == 0, "req_wait %d", it);
        shmem_getmem(e, dst, pb * (size_t)n, me);
        for (int s = 0; s < n; s++)
            expect(e + (size_t)s * pb, s + 500, pb, it,
                   "persistent fcollectmem");
        shmem_barrier_all();
    }
    CHECK(shmemx_req_free(req) == 0, "req_free");

    shmem_barrier_all();
    shmem_free(ldst);
    shmem_free(lsrc);
    shmem_free(dst);
    shmem_free(src);
    free(e);
    free(h);
    if (me == 0)
        printf("devheap: %d PE%s: device heap put/get/nbi/collectives "
               "checked\n", n, n == 1 ? "" : "s");
    shmem_finalize();
    return 0;
}
