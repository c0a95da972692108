/*
 * A team configuration with config_mask 0 (OpenSHMEM 1.5: the mask picks
 * the fields to use, 0 means the defaults). SOS's unit test
 * shmem_team_get_config (@49d53a41) splits with num_contexts 3 and mask 0
 * and expects 3 back; the specification gives the default, 0, which is what
 * this checks, and with the mask set the value comes back. Under
 * SHMEM_DEBUG=1 each member says why the field was not used
 * (sos2_config_debug.sh checks the line).
 */
#include "mp.h"

int main(void)
{
    mp_init();
    const int me = shmem_my_pe(), npes = shmem_n_pes();
    shmem_team_config_t conf = {.num_contexts = 3}, got;
    shmem_team_t even, all;

    /* Mask 0: the team gets the defaults. */
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (npes + 1) / 2,
                                   &conf, 0, &even) == 0,
          "split with mask 0");
    CHECK((even != SHMEM_TEAM_INVALID) == (me % 2 == 0), "even member");
    if (even != SHMEM_TEAM_INVALID) {
        got.num_contexts = -1;
        CHECK(shmem_team_get_config(even, SHMEM_TEAM_NUM_CONTEXTS, &got) == 0,
              "get_config");
        CHECK(got.num_contexts == 0, "num_contexts %d with mask 0, expected "
              "the default 0", got.num_contexts);
    } else {
        CHECK(shmem_team_get_config(even, SHMEM_TEAM_NUM_CONTEXTS, &got) != 0,
              "get_config on SHMEM_TEAM_INVALID");
    }

    /* The mask set: the value is taken. */
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, npes, &conf,
                                   SHMEM_TEAM_NUM_CONTEXTS, &all) == 0,
          "split with the mask");
    got.num_contexts = -1;
    CHECK(shmem_team_get_config(all, SHMEM_TEAM_NUM_CONTEXTS, &got) == 0 &&
              got.num_contexts == 3,
          "num_contexts %d with the mask, expected 3", got.num_contexts);

    shmem_team_destroy(all);
    shmem_team_destroy(even);
    shmem_finalize();
    return 0;
}
