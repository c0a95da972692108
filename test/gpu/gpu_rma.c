/*
 * RMA with GPU memory through the cuda backend's copy engines: every form
 * (put, get, p, g, put_nbi, get_nbi) between device and host memory in
 * both directions, with random sizes and offsets, data checked; an nbi
 * storm then quiet; fence ordering. Each PE writes to the next and reads
 * from the next (ring), so it runs with any number of PEs, on one GPU or
 * several. Exits 77 where no GPU is found.
 *
 *   gpu_rma [hang]   hang: after init, loop in barriers forever (gpu_kill.sh)
 */
#include "test/gpu/gpu_util.h"
#define MP_ALARM_S 40
#include "test/mp/mp.h"

#include <shmemx.h>

#define N (4u << 20)       /* bytes per buffer */
#define ROUNDS 240
#define STORM 512          /* nbi puts of 1 KiB then one quiet */

static unsigned char *hexp, *htmp;

/* The byte PE s holds at offset o of every source buffer. */
static unsigned char pat(int s, size_t o)
{
    return mp_byte(s, o, 0);
}

static void fill_sources(unsigned char *hsrc, unsigned char *dsrc,
                         unsigned char *psrc, CUdeviceptr pdsrc, int me)
{
    for (size_t o = 0; o < N; o++)
        hexp[o] = pat(me, o);
    memcpy(hsrc, hexp, N);
    memcpy(psrc, hexp, N);
    gpu_htod(DP(dsrc), hexp, N);
    gpu_htod(pdsrc, hexp, N);
}

/* Check len bytes at dst (device or host) against PE s's source bytes from
 * offset so; the rest of the buffer (cleared to 0) must stay 0 around it. */
static void check(const char *what, int r, const void *dst, int dev,
                  size_t doff, size_t len, int s, size_t so)
{
    const unsigned char *b = dst;
    size_t lo = doff > 64 ? doff - 64 : 0, hi = DSM_TEST_MIN(doff + len + 64, N);
    if (dev) {
        GPU_CK(gcu.MemcpyDtoH(htmp + lo, DP((const char *)dst + lo), hi - lo));
        b = htmp;
    }
    for (size_t o = lo; o < hi; o++) {
        unsigned char want = (o >= doff && o < doff + len) ? pat(s, so + o - doff) : 0;
        if (b[o] != want)
            MP_FAIL("%s round %d: byte %zu of [%zu, +%zu) is %u, expected %u",
                    what, r, o, doff, len, b[o], want);
    }
}

static size_t pick_len(uint64_t *st)
{
    static const size_t fixed[] = {1, 3, 8, 64, 1000, 4096, 65536, 1u << 20};
    uint64_t x = mp_rand(st);
    if (x % 3)
        return fixed[(x >> 8) % DSM_TEST_ARRAY(fixed)];
    return 1 + (size_t)((x >> 16) % (N / 2));
}

int main(int argc, char **argv)
{
    gpu_skip_unless_gpu("gpu_rma");
    mp_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    int to = (me + 1) % n, from = (me + n - 1) % n;
    gpu_ctx();

    unsigned char *dsrc = shmemx_malloc_device(N);
    unsigned char *ddst = shmem_malloc_with_hints(N, SHMEMX_MALLOC_DEVICE);
    unsigned char *hsrc = shmem_malloc(N), *hdst = shmem_malloc(N);
    static long hflag;
    CHECK(dsrc && ddst, "shmemx_malloc_device returned NULL with a GPU present");
    CHECK(hsrc && hdst, "shmem_malloc");
    CHECK(shmem_ptr(ddst, to) != NULL, "shmem_ptr of a device address");
    unsigned char *psrc = malloc(N), *pdst = malloc(N);
    hexp = malloc(N);
    htmp = malloc(N);
    CUdeviceptr pdsrc, pddst;
    GPU_CK(gcu.MemAlloc(&pdsrc, N));
    GPU_CK(gcu.MemAlloc(&pddst, N));
    fill_sources(hsrc, dsrc, psrc, pdsrc, me);
    shmem_barrier_all();

    if (argc > 1 && !strcmp(argv[1], "hang")) {
        if (me == 0) {
            printf("ready\n");
            fflush(stdout);
        }
        for (;;) {
            shmem_putmem_nbi(ddst, dsrc, 1 << 20, to);
            shmem_barrier_all();
        }
    }

    /* Same seed on every PE: the target replays the writer's choices. */
    uint64_t st = 12345;
    for (int r = 0; r < ROUNDS; r++) {
        int c = r % 12;
        size_t len = pick_len(&st);
        size_t so = (size_t)(mp_rand(&st) % (N - len + 1));
        size_t doff = (size_t)(mp_rand(&st) % (N - len + 1));
        if (c == 11) {
            len = 8;
            so &= ~(size_t)7;
            doff &= ~(size_t)7;
        }
        gpu_memset(DP(ddst), 0, N);
        gpu_memset(pddst, 0, N);
        memset(hdst, 0, N);
        memset(pdst, 0, N);
        shmem_barrier_all();
        switch (c) {
        case 0: shmem_putmem(ddst + doff, dsrc + so, len, to); break;
        case 1: shmem_putmem(ddst + doff, hsrc + so, len, to); break;
        case 2: shmem_putmem(ddst + doff, psrc + so, len, to); break;
        case 3: shmem_putmem(ddst + doff, (void *)(uintptr_t)(pdsrc + so), len, to); break;
        case 4: shmem_putmem(hdst + doff, dsrc + so, len, to); break;
        case 5: shmem_putmem_nbi(ddst + doff, dsrc + so, len, to); shmem_quiet(); break;
        case 6: shmem_putmem_nbi(ddst + doff, psrc + so, len, to); shmem_quiet(); break;
        case 7: shmem_getmem(pdst + doff, dsrc + so, len, to); break;
        case 8: shmem_getmem(ddst + doff, dsrc + so, len, to); break;
        case 9: shmem_getmem_nbi((void *)(uintptr_t)(pddst + doff), dsrc + so, len, to);
            shmem_quiet(); break;
        case 10: shmem_getmem((void *)(uintptr_t)(pddst + doff), hsrc + so, len, to); break;
        case 11: {
            long v = shmem_long_g((long *)(void *)(dsrc + so), to);
            long w = 0;
            for (int k = 0; k < 8; k++)
                ((unsigned char *)&w)[k] = pat(to, so + (size_t)k);
            CHECK(v == w, "shmem_long_g from device memory, round %d", r);
            shmem_long_p((long *)(void *)(ddst + doff), v, to);
            break;
        }
        }
        shmem_barrier_all();
        static const char *names[] = {
            "put dev->dev", "put hostsym->dev", "put private->dev",
            "put privdev->dev", "put dev->hostsym", "put_nbi dev->dev",
            "put_nbi private->dev", "get dev->private", "get dev->dev",
            "get_nbi dev->privdev", "get hostsym->privdev", "p/g long dev"};
        switch (c) {
        case 0: case 1: case 2: case 3: case 5: case 6:
            check(names[c], r, ddst, 1, doff, len, from, so);
            break;
        case 4: check(names[c], r, hdst, 0, doff, len, from, so); break;
        case 7: check(names[c], r, pdst, 0, doff, len, to, so); break;
        case 8: check(names[c], r, ddst, 1, doff, len, to, so); break;
        case 9: case 10:
            check(names[c], r, (void *)(uintptr_t)pddst, 1, doff, len, to, so);
            break;
        case 11: /* from read my source with g and put it back with p */
            check(names[c], r, ddst, 1, doff, len, me, so);
            break;
        }
    }
    if (me == 0)
        printf("random RMA: %d rounds passed\n", ROUNDS);

    /* nbi storm: STORM puts of 1 KiB (odd offsets), one quiet. */
    gpu_memset(DP(ddst), 0, N);
    shmem_barrier_all();
    double t0 = mp_now();
    for (int k = 0; k < STORM; k++)
        shmem_putmem_nbi(ddst + (size_t)k * 2048 + 1, dsrc + (size_t)k * 1024 + 3,
                         1024, to);
    shmem_quiet();
    double t1 = mp_now();
    shmem_barrier_all();
    GPU_CK(gcu.MemcpyDtoH(htmp, DP(ddst), N));
    for (int k = 0; k < STORM; k++)
        for (size_t o = 0; o < 1024; o++)
            if (htmp[(size_t)k * 2048 + 1 + o] != pat(from, (size_t)k * 1024 + 3 + o))
                MP_FAIL("nbi storm: put %d byte %zu wrong", k, o);
    if (me == 0)
        printf("nbi storm: %d x 1 KiB put_nbi + quiet in %.1f us\n", STORM,
               (t1 - t0) * 1e6);

    /* Fence: a large device put, fence, then a flag in host memory; the
     * target must see the data once it sees the flag. */
    gpu_memset(DP(ddst), 0, N);
    hflag = 0;
    shmem_barrier_all();
    shmem_putmem_nbi(ddst, dsrc, N, to);
    shmem_fence();
    shmem_long_p(&hflag, 1, to);
    shmem_long_wait_until(&hflag, SHMEM_CMP_EQ, 1);
    check("fence", 0, ddst, 1, 0, N, from, 0);
    shmem_barrier_all();
    if (me == 0)
        printf("fence ordering passed\n");

    shmem_free(ddst);
    shmem_free(dsrc);
    shmem_free(hdst);
    shmem_free(hsrc);
    gcu.MemFree(pdsrc);
    gcu.MemFree(pddst);
    shmem_finalize();
    return 0;
}
