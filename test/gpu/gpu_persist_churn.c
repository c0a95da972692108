/*
 * Persistent collectives whose trigger and sync words must outlive the
 * allocator's reuse of addresses (#14). The cuda backend pins the page of
 * a word a stream waits on, by address, until finalize. When those words
 * lived in malloc'ed memory, glibc could hand the page back (free +
 * malloc_trim) and a later request at the same address had its stream
 * wait on the old physical page: the collective hung. Here persistent
 * fcollect and alltoall requests are created, started with fresh data,
 * checked and freed 40 times, with heavy malloc/free churn and
 * malloc_trim(0) between them; every instance must complete with the
 * right data (MP_ALARM_S bounds a hang). The last request checks the
 * contract of shmemx_req_free on cuda (shmemx_req(3)): the instances posted
 * ahead run at the free with the source as it is then. Exits 77 where no
 * GPU is found.
 */
#include "test/gpu/gpu_util.h"
#define MP_ALARM_S 120
#include "test/mp/mp.h"

#include <malloc.h>
#include <shmemx.h>

#define NB 1024

static void churn(unsigned seed)
{
    enum { N = 600 };
    void *blk[N];
    for (int i = 0; i < N; i++) {
        seed = seed * 1103515245u + 12345u;
        size_t sz = 16 + (seed >> 8) % (96u << 10); /* up to 96 KiB */
        blk[i] = malloc(sz);
        if (blk[i])
            memset(blk[i], (int)(i & 0xff), sz < 64 ? sz : 64);
    }
    for (int i = 0; i < N; i += 2)
        free(blk[i]);
    for (int i = 1; i < N; i += 2)
        free(blk[i]);
    malloc_trim(0); /* free pages go back to the kernel */
}

int main(void)
{
    gpu_skip_unless_gpu("gpu_persist_churn");
    /* Every block of 256 bytes or more is its own mapping, returned to
     * the kernel at free: a request (and any word in it) freed and
     * allocated again at the same address sits on a new physical page. */
    mallopt(M_MMAP_THRESHOLD, 256);
    mallopt(M_TRIM_THRESHOLD, 0);
    mp_init();
    const int me = shmem_my_pe(), n = shmem_n_pes();
    gpu_ctx();

    unsigned char *src = shmemx_malloc_device(NB * (size_t)n);
    unsigned char *dst = shmemx_malloc_device(NB * (size_t)n);
    unsigned char *h = malloc(NB * (size_t)n), *e = malloc(NB * (size_t)n);
    CHECK(src && dst && h && e, "device allocations");

    void *seen[40];
    int reused = 0;
    for (int round = 0; round < 40; round++) {
        int a2a = round & 1;
        shmemx_req_t req;
        /* Allocations around the request's own, so that its words sit in
         * the middle of pages that the churn frees and trims. */
        void *before = malloc(4000 + (size_t)round * 64);
        if (a2a)
            CHECK(shmemx_alltoallmem_init(SHMEM_TEAM_WORLD, dst, src, NB, &req) == 0,
                  "shmemx_alltoallmem_init round %d", round);
        else
            CHECK(shmemx_fcollectmem_init(SHMEM_TEAM_WORLD, dst, src, NB, &req) == 0,
                  "shmemx_fcollectmem_init round %d", round);
        void *after = malloc(4000 + (size_t)round * 32);
        seen[round] = (void *)req;
        for (int q = 0; q < round; q++)
            if (seen[q] == (void *)req) {
                reused++;
                break;
            }
        for (int it = 0; it < 3; it++) {
            int tag = round * 8 + it;
            for (int d = 0; d < n; d++)
                for (size_t o = 0; o < NB; o++)
                    h[(size_t)d * NB + o] = mp_byte(me * 131 + (a2a ? d : 0), o, tag);
            gpu_htod(DP(src), h, NB * (size_t)(a2a ? n : 1));
            shmem_barrier_all();
            CHECK(shmemx_req_start(req) == 0, "start round %d it %d", round, it);
            CHECK(shmemx_req_wait(req) == 0, "wait round %d it %d", round, it);
            GPU_CK(gcu.MemcpyDtoH(e, DP(dst), NB * (size_t)n));
            for (int s = 0; s < n; s++)
                for (size_t o = 0; o < NB; o++) {
                    unsigned char want = mp_byte(s * 131 + (a2a ? me : 0), o, tag);
                    if (e[(size_t)s * NB + o] != want)
                        MP_FAIL("round %d (%s) it %d: block %d byte %zu = %u, "
                                "want %u", round, a2a ? "alltoall" : "fcollect",
                                it, s, o, e[(size_t)s * NB + o], want);
                }
            shmem_barrier_all();
        }
        if (round == 39) {
            /* shmemx_req(3): on cuda, free runs the instances posted ahead
             * (work on a stream cannot be withdrawn), so dest ends up with
             * the collective of the source as it is at the free. */
            for (int d = 0; d < n; d++)
                for (size_t o = 0; o < NB; o++)
                    h[(size_t)d * NB + o] = mp_byte(me * 131 + (a2a ? d : 0), o, 999);
            gpu_htod(DP(src), h, NB * (size_t)(a2a ? n : 1));
            shmem_barrier_all();
        }
        CHECK(shmemx_req_free(req) == 0, "shmemx_req_free round %d", round);
        if (round == 39) {
            GPU_CK(gcu.MemcpyDtoH(e, DP(dst), NB * (size_t)n));
            for (int s = 0; s < n; s++)
                for (size_t o = 0; o < NB; o++) {
                    unsigned char want = mp_byte(s * 131 + (a2a ? me : 0), o, 999);
                    if (e[(size_t)s * NB + o] != want)
                        MP_FAIL("after shmemx_req_free: block %d byte %zu = %u, "
                                "want %u (the posted instances run at free on "
                                "cuda, shmemx_req(3))", s, o,
                                e[(size_t)s * NB + o], want);
                }
        }
        free(before);
        free(after);
        churn((unsigned)(round * 7919 + me));
        shmem_barrier_all();
    }
    if (me == 0)
        printf("gpu_persist_churn %d PEs: 40 requests x 3 instances with "
               "malloc churn: ok (%d requests at an address used before)\n",
               n, reused);
    shmem_free(src);
    shmem_free(dst);
    free(h);
    free(e);
    shmem_finalize();
    return 0;
}
