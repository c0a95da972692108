/*
 * Contexts created from teams: shmem_team_create_ctx on SHMEM_TEAM_WORLD
 * and on a split team, shmem_ctx_get_team, RMA through the context (team
 * PE numbers translated to world ones), and the failures on
 * SHMEM_TEAM_INVALID.
 */
#include "mp.h"

static int box[8];

int main(void)
{
    mp_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    shmem_ctx_t c = SHMEM_CTX_INVALID, w = SHMEM_CTX_INVALID;
    shmem_team_t rev, got = SHMEM_TEAM_INVALID;

    CHECK(shmem_team_create_ctx(SHMEM_TEAM_WORLD, 0, &w) == 0 &&
              w != SHMEM_CTX_INVALID,
          "create ctx on world");
    CHECK(shmem_ctx_get_team(w, &got) == 0 && got == SHMEM_TEAM_WORLD,
          "world ctx's team");
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, npes - 1, -1, npes, NULL,
                                   0, &rev) == 0,
          "reversed");
    CHECK(shmem_team_create_ctx(rev, SHMEM_CTX_PRIVATE, &c) == 0 &&
              c != SHMEM_CTX_INVALID,
          "create ctx on a split team");
    CHECK(shmem_ctx_get_team(c, &got) == 0 && got == rev, "ctx's team");
    shmem_ctx_t bad = (shmem_ctx_t)&bad;
    CHECK(shmem_team_create_ctx(SHMEM_TEAM_INVALID, 0, &bad) != 0 &&
              bad == SHMEM_CTX_INVALID,
          "create ctx on SHMEM_TEAM_INVALID");

    /* Put to the team's next member through the context. */
    int i = shmem_team_my_pe(rev), n = shmem_team_n_pes(rev);
    int next = shmem_team_translate_pe(rev, (i + 1) % n, SHMEM_TEAM_WORLD);
    shmem_ctx_int_p(c, &box[0], me + 100, next);
    shmem_ctx_quiet(c);
    shmem_team_sync(rev);
    int prev = shmem_team_translate_pe(rev, (i + n - 1) % n, SHMEM_TEAM_WORLD);
    CHECK(box[0] == prev + 100, "box %d, expected %d", box[0], prev + 100);
    shmem_ctx_destroy(c);
    shmem_ctx_destroy(w);
    shmem_team_destroy(rev);
    shmem_finalize();
    return 0;
}
