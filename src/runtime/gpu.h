/*
 * What src/coll/stream.c and src/runtime/gpu.c share for the on-stream
 * collectives (shmemx_barrier_on_stream, shmemx_fcollectmem_on_stream,
 * shmemx_alltoallmem_on_stream): the team as the stream code needs it,
 * without the team internals.
 */
#ifndef DSM_RUNTIME_GPU_H
#define DSM_RUNTIME_GPU_H

#include <shmem.h>
#include <stdint.h>

typedef struct dsm_stream_team {
    int size;       /* members */
    int me;         /* my index */
    const int *pes; /* [size] world PE of each member */
    int slot;       /* the team's slot: same on every member */
} dsm_stream_team_t;

/* src/coll/stream.c: the team behind a handle; fails the job (naming
 * routine) on an invalid handle. */
void dsm_coll_stream_team(shmem_team_t team, const char *routine,
                          dsm_stream_team_t *out);

/* Word idx of phase (0, 1) of team slot `slot` in world PE pe's device
 * synchronisation area, as mapped in this process; NULL without a device
 * heap or when pe's heap is not mapped here (another node). The on-stream
 * collectives use a slot's words with constant values; a persistent
 * collective's private team (src/coll/persistent.c) uses them with
 * monotonic counts, and zeroes its own at free (dsm_rt_device_sync_clear)
 * so that the slot is clean for the next team. */
uint64_t *dsm_rt_device_sync_word(int pe, int slot, int phase, int idx);
/* Zero this PE's words of slot (both phases); synchronous. Only once no
 * peer writes them any more. */
void dsm_rt_device_sync_clear(int slot);

#endif /* DSM_RUNTIME_GPU_H */
