/*
 * The one thing the on-stream collectives (src/runtime/gpu.c) need from
 * the teams: members, my index and the team's slot, which indexes the
 * team's stream synchronisation words in the device heap. Kept apart from
 * the host collectives: nothing here touches the team's host-side signal
 * counts (the stream protocol does not use them; gpu.c says why).
 */
#include "coll/coll.h"
#include "runtime/gpu.h"

void dsm_coll_stream_team(shmem_team_t team, const char *routine,
                          dsm_stream_team_t *out)
{
    dsm_team_t *t = dsm_team_check(team, routine);

    out->size = t->size;
    out->me = t->my_idx;
    out->pes = t->pes;
    out->slot = t->slot;
}
