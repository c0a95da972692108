/*
 * The deprecated active-set collectives, called as the OSU benchmarks and
 * old codes call them (pSync arrays of SHMEM_*_SYNC_SIZE set to
 * SHMEM_SYNC_VALUE, reused back to back): fcollect32/64, collect32/64,
 * alltoall32/64, alltoalls32/64 on the world, the evens, the odds and a
 * single PE, with exact expected contents.
 */
#include "mp.h"

#define NE 40

static long psync[SHMEM_COLLECT_SYNC_SIZE];
static long psync_a2a[SHMEM_ALLTOALL_SYNC_SIZE];
static uint32_t *s32, *d32;
static uint64_t *s64, *d64;

static uint32_t v32(int from, int to, int i)
{
    return (uint32_t)(from * 1000000 + to * 1000 + i);
}

static void one_set(int start, int logs, int n)
{
    int me = shmem_my_pe(), st = 1 << logs;
    if (me < start || (me - start) % st || (me - start) / st >= n)
        return;
    int p = (me - start) / st;

    /* fcollect: every member's NE elements, in set order. */
    for (int i = 0; i < NE; i++) {
        s32[i] = v32(p, 0, i);
        s64[i] = (uint64_t)v32(p, 0, i) << 20;
    }
    shmem_fcollect32(d32, s32, NE, start, logs, n, psync);
    shmem_fcollect64(d64, s64, NE, start, logs, n, psync);
    for (int q = 0; q < n; q++)
        for (int i = 0; i < NE; i++) {
            CHECK(d32[q * NE + i] == v32(q, 0, i),
                  "fcollect32 set(%d,%d,%d) block %d elem %d", start, logs, n,
                  q, i);
            CHECK(d64[q * NE + i] == (uint64_t)v32(q, 0, i) << 20,
                  "fcollect64 set(%d,%d,%d) block %d elem %d", start, logs, n,
                  q, i);
        }

    /* collect: member q contributes q+1 elements. */
    for (int i = 0; i <= p; i++) {
        s32[i] = v32(p, 1, i);
        s64[i] = v32(p, 1, i) + 5ull;
    }
    shmem_collect32(d32, s32, (size_t)p + 1, start, logs, n, psync);
    shmem_collect64(d64, s64, (size_t)p + 1, start, logs, n, psync);
    for (int q = 0, off = 0; q < n; off += q + 1, q++)
        for (int i = 0; i <= q; i++) {
            CHECK(d32[off + i] == v32(q, 1, i), "collect32 block %d elem %d",
                  q, i);
            CHECK(d64[off + i] == v32(q, 1, i) + 5ull,
                  "collect64 block %d elem %d", q, i);
        }

    /* alltoall: block j of member p goes to member j. */
    for (int j = 0; j < n; j++)
        for (int i = 0; i < NE; i++) {
            s32[j * NE + i] = v32(p, j, i);
            s64[j * NE + i] = (uint64_t)v32(p, j, i) * 3;
        }
    shmem_alltoall32(d32, s32, NE, start, logs, n, psync_a2a);
    shmem_alltoall64(d64, s64, NE, start, logs, n, psync_a2a);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < NE; i++) {
            CHECK(d32[j * NE + i] == v32(j, p, i),
                  "alltoall32 set(%d,%d,%d) from %d elem %d: %u", start, logs,
                  n, j, i, d32[j * NE + i]);
            CHECK(d64[j * NE + i] == (uint64_t)v32(j, p, i) * 3,
                  "alltoall64 from %d elem %d", j, i);
        }

    /* alltoalls: source stride 2, dest stride 3, 5 elements per block. */
    const int ne = 5, sst = 2, dst = 3;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < ne; i++) {
            s32[(j * ne + i) * sst] = v32(p, j, i + 100);
            s64[(j * ne + i) * sst] = v32(p, j, i + 200);
        }
    for (int k = 0; k < n * ne * dst; k++) {
        d32[k] = 0xdeadbeef;
        d64[k] = 0xdeadbeef;
    }
    shmem_alltoalls32(d32, s32, dst, sst, ne, start, logs, n, psync_a2a);
    shmem_alltoalls64(d64, s64, dst, sst, ne, start, logs, n, psync_a2a);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < ne; i++) {
            CHECK(d32[(j * ne + i) * dst] == v32(j, p, i + 100),
                  "alltoalls32 from %d elem %d", j, i);
            CHECK(d64[(j * ne + i) * dst] == v32(j, p, i + 200),
                  "alltoalls64 from %d elem %d", j, i);
            if (i + 1 < ne)
                CHECK(d32[(j * ne + i) * dst + 1] == 0xdeadbeef,
                      "alltoalls32 wrote between strided elements");
        }
    /* The buffers are reused by the next set: its members must not write
     * into ours while we check (pSync routines only promise local
     * completion). */
    shmem_sync(start, logs, n, psync);
}

int main(void)
{
    mp_init();
    int npes = shmem_n_pes();
    size_t words = (size_t)npes * NE * 3 + 64;
    for (int i = 0; i < SHMEM_COLLECT_SYNC_SIZE; i++)
        psync[i] = SHMEM_SYNC_VALUE;
    for (int i = 0; i < SHMEM_ALLTOALL_SYNC_SIZE; i++)
        psync_a2a[i] = SHMEM_SYNC_VALUE;
    s32 = shmem_malloc(words * 4);
    d32 = shmem_malloc(words * 4);
    s64 = shmem_malloc(words * 8);
    d64 = shmem_malloc(words * 8);
    CHECK(s32 && d32 && s64 && d64, "shmem_malloc");
    shmem_barrier_all();
    for (int rep = 0; rep < 3; rep++) {
        one_set(0, 0, npes);
        one_set(0, 1, (npes + 1) / 2);
        if (npes > 1)
            one_set(1, 1, npes / 2);
        one_set(npes - 1, 0, 1);
        shmem_barrier_all();
    }
    shmem_free(d64);
    shmem_free(s64);
    shmem_free(d32);
    shmem_free(s32);
    shmem_finalize();
    return 0;
}
