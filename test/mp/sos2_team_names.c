/*
 * SOS's team names from before OpenSHMEM 1.5 (shmemx_sos(3)): a program
 * written against the SOS 1.4.x shmemx_team_* proposal, as SOS's copy of
 * the spec's team-context example is (test/spec-example/
 * shmem_team_context.c @674785cb), builds and runs unchanged. Every name
 * is used once and every result checked against the standard routine it
 * stands for. Before the names existed this file did not compile.
 */
#include "mp.h"

#include <shmemx.h>

static int val_2, val_3, sum;
static long y_incs;

int main(void)
{
    mp_init();
    const int me = shmem_my_pe(), npes = shmem_n_pes();

    shmemx_team_t team_2, team_3, team_x, team_y;
    shmemx_team_config_t conf = {.num_contexts = 1}, got = {0};
    const long cmask = SHMEMX_TEAM_NUM_CONTEXTS;

    /* team_2: world PEs 0, 2, 4, ...; team_3: 0, 3, 6, ... */
    CHECK(shmemx_team_split_strided(SHMEMX_TEAM_WORLD, 0, 2, (npes + 1) / 2,
                                    &conf, cmask, &team_2) == 0,
          "split by 2");
    CHECK(shmemx_team_split_strided(SHMEMX_TEAM_WORLD, 0, 3, (npes + 2) / 3,
                                    &conf, cmask, &team_3) == 0,
          "split by 3");
    CHECK((team_2 != SHMEMX_TEAM_INVALID) == (me % 2 == 0), "team_2 member");
    CHECK((team_3 != SHMEMX_TEAM_INVALID) == (me % 3 == 0), "team_3 member");
    CHECK(shmemx_team_my_pe(team_2) == shmem_team_my_pe(team_2) &&
              shmemx_team_n_pes(team_2) == shmem_team_n_pes(team_2),
          "team_2 my_pe %d n_pes %d", shmemx_team_my_pe(team_2),
          shmemx_team_n_pes(team_2));
    if (team_2 != SHMEMX_TEAM_INVALID) {
        CHECK(shmemx_team_my_pe(team_2) == me / 2, "my_pe in team_2");
        CHECK(shmemx_team_get_config(team_2, cmask, &got) == 0 &&
                  got.num_contexts == 1,
              "config of team_2: num_contexts %d", got.num_contexts);
    }
    /* world PE me in team_3, seen through team_2 numbering */
    if (team_2 != SHMEMX_TEAM_INVALID && team_3 != SHMEMX_TEAM_INVALID)
        CHECK(shmemx_team_translate_pe(team_2, me / 2, team_3) == me / 3,
              "translate %d", shmemx_team_translate_pe(team_2, me / 2, team_3));
    CHECK(shmemx_team_translate_pe(SHMEMX_TEAM_WORLD, me, SHMEMX_TEAM_SHARED) ==
              shmem_team_translate_pe(SHMEM_TEAM_WORLD, me, SHMEM_TEAM_SHARED),
          "SHMEMX_TEAM_SHARED");

    /* A context on each team; the non-members keep SHMEMX_CTX_INVALID. */
    shmem_ctx_t ctx_2 = SHMEMX_CTX_INVALID, ctx_3 = SHMEMX_CTX_INVALID;
    if (team_2 != SHMEMX_TEAM_INVALID) {
        shmemx_team_t back = SHMEMX_TEAM_INVALID;
        CHECK(shmemx_team_create_ctx(team_2, 0, &ctx_2) == 0, "ctx on team_2");
        CHECK(shmemx_ctx_get_team(ctx_2, &back) == 0 && back == team_2,
              "team of ctx_2");
        int pe = shmemx_team_my_pe(team_2);
        shmem_ctx_int_put(ctx_2, &val_2, &pe, 1,
                          (pe + 1) % shmemx_team_n_pes(team_2));
    }
    if (team_3 != SHMEMX_TEAM_INVALID) {
        CHECK(shmemx_team_create_ctx(team_3, 0, &ctx_3) == 0, "ctx on team_3");
        int pe = shmemx_team_my_pe(team_3);
        shmem_ctx_int_put(ctx_3, &val_3, &pe, 1,
                          (pe + 1) % shmemx_team_n_pes(team_3));
    }
    shmem_ctx_quiet(ctx_2);
    shmem_ctx_quiet(ctx_3);
    CHECK(shmemx_team_sync(SHMEMX_TEAM_WORLD) == 0, "team sync");
    if (team_2 != SHMEMX_TEAM_INVALID) {
        const int n = shmemx_team_n_pes(team_2), pe = me / 2;
        CHECK(val_2 == (pe + n - 1) % n, "val_2 %d", val_2);
    }
    if (team_3 != SHMEMX_TEAM_INVALID) {
        const int n = shmemx_team_n_pes(team_3), pe = me / 3;
        CHECK(val_3 == (pe + n - 1) % n, "val_3 %d", val_3);
    }

    /* The PEs in both teams add to PE 0 through ctx_2 (PE 0 is in both). */
    if (ctx_2 != SHMEMX_CTX_INVALID && team_3 != SHMEMX_TEAM_INVALID)
        shmem_ctx_int_atomic_add(ctx_2, &sum, 1, 0);
    shmem_ctx_quiet(ctx_2);
    shmemx_team_sync(SHMEMX_TEAM_WORLD);
    if (me == 0)
        CHECK(sum == (npes - 1) / 6 + 1, "PEs in both teams: %d", sum);

    /* 2D split under the old name: x of size 2 (or 1 on one PE). */
    const int xr = npes > 1 ? 2 : 1;
    CHECK(shmemx_team_split_2d(SHMEMX_TEAM_WORLD, xr, NULL, 0, &team_x, NULL,
                               0, &team_y) == 0,
          "split_2d");
    CHECK(shmemx_team_my_pe(team_x) == me % xr, "x index");
    CHECK(shmemx_team_n_pes(team_y) == (npes + xr - 1 - me % xr) / xr,
          "y size %d", shmemx_team_n_pes(team_y));
    shmemx_team_sync(team_y);
    shmem_long_atomic_inc(&y_incs, shmem_team_translate_pe(team_y, 0,
                                                            SHMEM_TEAM_WORLD));
    shmem_barrier_all();
    if (shmemx_team_my_pe(team_y) == 0)
        CHECK(y_incs == shmemx_team_n_pes(team_y), "y incs %ld", y_incs);

    shmem_ctx_destroy(ctx_2);
    shmem_ctx_destroy(ctx_3);
    shmemx_team_destroy(team_2);
    shmemx_team_destroy(team_3);
    shmemx_team_destroy(team_x);
    shmemx_team_destroy(team_y);
    shmem_finalize();
    return 0;
}
