/*
 * What src/coll/stream.c and src/runtime/gpu.c share for the on-stream
 * collectives (shmemx_barrier_on_stream, shmemx_fcollectmem_on_stream,
 * shmemx_alltoallmem_on_stream): the team as the stream code needs it,
 * without the team internals.
 */
#ifndef DSM_RUNTIME_GPU_H
#define DSM_RUNTIME_GPU_H

#include <shmem.h>

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

#endif /* DSM_RUNTIME_GPU_H */
