/*
 * Collectives whose dest (or source) allocation is smaller than what the
 * collective writes (reads): run by coll_size.sh, one mode per run, which
 * checks the one-line error ("dest needs N bytes, its allocation has M")
 * and the non-zero exit. Before, a too small dest was reported as "source
 * overlaps dest" where source was the next allocation, or overwrote the
 * next allocation silently. Mode "ok" runs every collective with exact
 * sizes and must succeed. The persistent requests (shmemx_*mem_init) are
 * checked when they are made.
 */
#include "mp.h"

#include <shmemx.h>

#define NE 16 /* ints per PE: 64 bytes */

static long psync[SHMEM_REDUCE_SYNC_SIZE];
static int pwrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE + NE];

int main(int argc, char **argv)
{
    mp_init();
    const char *mode = argc > 1 ? argv[1] : "ok";
    int npes = shmem_n_pes(), ok = !strcmp(mode, "ok");
    size_t all = (size_t)npes * NE * sizeof(int), one = NE * sizeof(int);
    int *dest, *src;

    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++)
        psync[i] = SHMEM_SYNC_VALUE;
    /* dest first, source right after it: a dest too small for the
     * collective reaches into source. */
    if (ok || !strcmp(mode, "source")) {
        dest = shmem_malloc(all);
        src = shmem_malloc(ok ? all : one / 2);
    } else if (!strcmp(mode, "offset")) {
        /* dest NE ints into a block of 2 * NE: room for one block. */
        dest = shmem_malloc(2 * one);
        dest += NE;
        src = shmem_malloc(all);
    } else if (!strcmp(mode, "freed")) {
        dest = shmem_malloc(all);
        src = shmem_malloc(all);
        shmem_free(dest);
    } else if (!strcmp(mode, "broadcast") || !strcmp(mode, "reduce") ||
               !strcmp(mode, "scan") || !strcmp(mode, "to_all")) {
        dest = shmem_malloc(one / 2);
        src = shmem_malloc(all);
    } else if (!strcmp(mode, "alltoalls")) {
        dest = shmem_malloc(all / 2); /* as if the stride were 1 */
        src = shmem_malloc(all);
    } else {
        dest = shmem_malloc(one);
        src = shmem_malloc(all);
    }
    CHECK(dest && src, "allocation");
    for (int i = 0; i < npes * NE && (ok || !strcmp(mode, "fcollect")); i++)
        src[i] = i;
    shmem_barrier_all();

    /* The checks remember the allocations they found (heap.c): after a
     * call that passed, a free or a realloc must make the next call look
     * again. */
    if (!strcmp(mode, "reused_freed") || !strcmp(mode, "reused_shrunk")) {
        for (int i = 0; i < 3; i++)
            shmem_int_broadcast(SHMEM_TEAM_WORLD, dest, src, NE, 0);
        if (!strcmp(mode, "reused_freed")) {
            shmem_free(dest);
        } else {
            int *d2 = shmem_realloc(dest, one / 2);
            CHECK(d2 == dest, "shrinking realloc moved the block");
        }
        shmem_int_broadcast(SHMEM_TEAM_WORLD, dest, src, NE, 0);
    }
    if (ok || !strcmp(mode, "fcollect") || !strcmp(mode, "source") ||
        !strcmp(mode, "offset") || !strcmp(mode, "freed"))
        shmem_int_fcollect(SHMEM_TEAM_WORLD, dest, src, NE);
    if (ok || !strcmp(mode, "collect"))
        shmem_int_collect(SHMEM_TEAM_WORLD, dest, src, NE);
    if (ok || !strcmp(mode, "alltoall"))
        shmem_int_alltoall(SHMEM_TEAM_WORLD, dest, src, NE);
    if (!strcmp(mode, "persist_fcollect") || !strcmp(mode, "persist_a2a")) {
        shmemx_req_t req;
        int a2a = !strcmp(mode, "persist_a2a");
        if (a2a)
            shmemx_alltoallmem_init(SHMEM_TEAM_WORLD, dest, src, one, &req);
        else
            shmemx_fcollectmem_init(SHMEM_TEAM_WORLD, dest, src, one, &req);
        MP_FAIL("mode %s: the request was made", mode);
    }
    if (!strcmp(mode, "alltoalls"))
        shmem_int_alltoalls(SHMEM_TEAM_WORLD, dest, src, 2, 1, NE / 2);
    if (ok)
        shmem_int_alltoalls(SHMEM_TEAM_WORLD, dest, src, 1, 1, NE);
    if (ok || !strcmp(mode, "broadcast"))
        shmem_int_broadcast(SHMEM_TEAM_WORLD, dest, src, NE, 0);
    if (ok || !strcmp(mode, "reduce"))
        shmem_int_sum_reduce(SHMEM_TEAM_WORLD, dest, src, NE);
    if (ok || !strcmp(mode, "scan"))
        shmem_int_sum_inscan(SHMEM_TEAM_WORLD, dest, src, NE);
    if (ok || !strcmp(mode, "to_all"))
        shmem_int_sum_to_all(dest, src, NE, 0, 0, npes, pwrk, psync);
    shmem_barrier_all();
    if (!ok)
        MP_FAIL("mode %s: the collective returned", mode);
    if (shmem_my_pe() == 0)
        printf("coll_size_prog: %d PEs OK\n", npes);
    shmem_finalize();
    return 0;
}
