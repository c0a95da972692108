/*
 * The runtime's GPU memory as the rest of the library sees it: the GPU
 * table of the open backend for the on-stream routines, and the stream
 * synchronisation words at the top of the device heap (used by the
 * on-stream collectives in coll/stream.c and the persistent collectives).
 */
#ifndef DSM_RUNTIME_GPU_H
#define DSM_RUNTIME_GPU_H

#include <shmem.h>
#include <stdint.h>

#include "sdma/sdma.h"

/* The open backend's GPU memory, or the job fails naming routine (on-stream
 * routines without a GPU backend). */
const dsm_sdma_gpu_ops_t *dsm_rt_need_gpu(const char *routine);
/* The same, and the backend has stream operations (the on-stream
 * routines; cuda has them, hsa not). */
const dsm_sdma_gpu_ops_t *dsm_rt_need_stream(const char *routine);
/* Fails the job naming routine when an on-stream operation failed. */
void dsm_rt_stream_check(const char *routine, dsm_status_t st);

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

/* The LL form of the on-stream collectives (coll/stream.c), below those
 * words: the largest block it takes (SHMEM_STREAM_LL_MAX; 0: off, e.g.
 * one PE or a heap too small), the 16-byte lines of one buffer, world PE
 * pe's area `area` (0 .. min(npes - 1, 8) - 1: two buffers, one sender)
 * of team slot `slot` as mapped here (NULL where not mapped), this PE's
 * parity word of the slot, and its reset to 0 (synchronous; when the
 * team goes, after its calls completed: the scratch itself is 0 again
 * after every completed call). */
size_t dsm_rt_device_ll_max(void);
size_t dsm_rt_device_ll_stride(void);
void *dsm_rt_device_ll_area(int pe, int slot, int area);
uint64_t *dsm_rt_device_ll_parity(int slot);
void dsm_rt_device_ll_reset(int slot);

#endif /* DSM_RUNTIME_GPU_H */
