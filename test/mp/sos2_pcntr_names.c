/*
 * SOS's older names of the performance-counter routines
 * (shmemx_pcntr_get_pending_put/_pending_get/_completed_put/_completed_get,
 * shmemx_pcntr(3)), as SOS's test/shmemx perf_counter program calls them:
 * each must give what the routine of the current name gives. A private
 * context issues a known number of put_nbi to the engines
 * (SHMEM_SDMA_NBI_INLINE_MAX=0); after quiet the old and new names agree
 * with shmemx_pcntr_get_all. Did not link before the names existed.
 */
#include "mp.h"

#include <shmemx.h>

static char bulk[2][1 << 14];

int main(void)
{
    setenv("SHMEM_SDMA_NBI_INLINE_MAX", "0", 1);
    mp_init();
    const int me = shmem_my_pe(), npes = shmem_n_pes();
    const int partner = (me + 1) % npes, reps = 7;
    shmem_ctx_t ctx;
    uint64_t pp = 1, pg = 1, cp = 1, cg = 1, iw = 0, ir = 0, cw = 0, cr = 0;
    shmemx_pcntr_t all;

    CHECK(shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) == 0, "shmem_ctx_create");
    shmemx_pcntr_get_pending_put(ctx, &pp);
    shmemx_pcntr_get_pending_get(ctx, &pg);
    shmemx_pcntr_get_completed_put(ctx, &cp);
    shmemx_pcntr_get_completed_get(ctx, &cg);
    CHECK(pp == 0 && pg == 0 && cp == 0 && cg == 0,
          "a new context's counters by the old names are 0 (%llu %llu %llu %llu)",
          (unsigned long long)pp, (unsigned long long)pg,
          (unsigned long long)cp, (unsigned long long)cg);

    memset(bulk[0], me + 1, sizeof(bulk[0]));
    shmem_barrier_all();
    for (int i = 0; i < reps; i++)
        shmem_ctx_putmem_nbi(ctx, bulk[1], bulk[0], sizeof(bulk[0]), partner);
    shmemx_pcntr_get_pending_put(ctx, &pp);
    shmemx_pcntr_get_completed_put(ctx, &cp);
    CHECK(cp <= pp, "completed_put %llu <= pending_put %llu",
          (unsigned long long)cp, (unsigned long long)pp);
    if (!mp_network())
        CHECK(pp == (uint64_t)reps, "pending_put (issued) %llu, want %d",
              (unsigned long long)pp, reps);
    shmem_ctx_quiet(ctx);

    shmemx_pcntr_get_pending_put(ctx, &pp);
    shmemx_pcntr_get_pending_get(ctx, &pg);
    shmemx_pcntr_get_completed_put(ctx, &cp);
    shmemx_pcntr_get_completed_get(ctx, &cg);
    shmemx_pcntr_get_issued_write(ctx, &iw);
    shmemx_pcntr_get_issued_read(ctx, &ir);
    shmemx_pcntr_get_completed_write(ctx, &cw);
    shmemx_pcntr_get_completed_read(ctx, &cr);
    shmemx_pcntr_get_all(ctx, &all);
    CHECK(pp == iw && pg == ir && cp == cw && cg == cr,
          "old names = new names: %llu/%llu %llu/%llu %llu/%llu %llu/%llu",
          (unsigned long long)pp, (unsigned long long)iw,
          (unsigned long long)pg, (unsigned long long)ir,
          (unsigned long long)cp, (unsigned long long)cw,
          (unsigned long long)cg, (unsigned long long)cr);
    CHECK(all.pending_put == pp && all.completed_put == cp &&
              all.pending_get == pg && all.completed_get == cg,
          "shmemx_pcntr_get_all agrees with the old names");
    CHECK(pp == cp, "after quiet every issued put completed: %llu vs %llu",
          (unsigned long long)pp, (unsigned long long)cp);
    shmem_ctx_destroy(ctx);

    shmem_barrier_all();
    CHECK(bulk[1][0] == (char)((me + npes - 1) % npes + 1) &&
              bulk[1][sizeof(bulk[1]) - 1] == bulk[1][0],
          "the puts landed (%d)", bulk[1][0]);
    shmem_finalize();
    return 0;
}
