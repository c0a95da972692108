/*
 * What the cuda backend's files share (never included outside
 * src/sdma/cuda). One idea per file:
 *   cuda.c      the backend ops: one CUstream per queue, doorbells cut into
 *               runs of copies / stream memory operations / host work,
 *               completion words, held-back copies and the progress agent
 *               that posts them
 *   memkind.c   what a pointer is for the copy engines (device memory,
 *               pinned and mapped host memory, pageable memory)
 *   vmm.c       the device heap: cuMemCreate, POSIX fd export/import,
 *               cuMemMap into this process
 *   onstream.c  the shmemx_*_on_stream support (work on a caller's stream)
 *   devapi.c    the device API's request FIFO and its proxy thread
 * Process-wide: one GPU per process, one dsm_sdma_t using it.
 */
#ifndef DSM_SDMA_CUDA_CUDA_INT_H
#define DSM_SDMA_CUDA_CUDA_INT_H

#include "sdma/backend.h"
#include "sdma/cuda/cu.h"
#include "sdma/cuda/devmem.h"

#include <unistd.h>

#define DSM_CUDA_MAX_BATCH 4096
#define DSM_CUDA_MAX_MEMOPS 255 /* cuStreamBatchMemOp: count < 256 */

/* What a pointer is, for the copy engines. */
enum { DSM_CUDA_PAGEABLE = 0, DSM_CUDA_HOSTREG, DSM_CUDA_DEV };

typedef struct dsm_cuda_state {
    dsm_cuda_settings_t set; /* from the runtime (dsm_cuda_configure) */
    size_t batch_min;        /* set.batch_min, at least 1 */
    unsigned copy_flags;     /* cuMemcpyBatchAsync flags (set.prefer_ce) */
    int active;              /* the backend is open */
    CUdevice dev;
    int ordinal;
    CUcontext ctx;
    dsm_sdma_t *s;
    uintptr_t own_lo, own_hi; /* this PE's device heap, as mapped here */
} dsm_cuda_state_t;

extern dsm_cuda_state_t dsm_cuda_st;

/* A driver call that must not fail: one line, then the process ends. */
void dsm_cuda_fatal(const char *what, CUresult rc) DSM_NORETURN;
#define CU_CHECK(call)                                                         \
    do {                                                                       \
        CUresult rc_ = (call);                                                 \
        if (DSM_UNLIKELY(rc_ != CUDA_SUCCESS))                                 \
            dsm_cuda_fatal(#call, rc_);                                        \
    } while (0)

/* Make our context current on this thread; returns the one to give back
 * to dsm_cuda_ctx_leave (NULL: keep ours, which a thread with none
 * wants). */
CUcontext dsm_cuda_ctx_enter(void);
void dsm_cuda_ctx_leave(CUcontext prev);

/* memkind.c. Kind of p; *delta: add to p for the GPU's view of it (stream
 * memory operations on mapped host memory). */
int dsm_cuda_classify(const void *p, intptr_t *delta);
int dsm_cuda_kind_of(const void *p);
/* Record [lo, lo+len) as kind (registrations, device-heap mappings). */
void dsm_cuda_add_range(uintptr_t lo, size_t len, int kind, intptr_t delta);
void dsm_cuda_drop_range(uintptr_t lo);
/* Pin and map the page of a waited-for pageable word, so that a stream
 * can wait on it. 1 when the word is now mapped. */
int dsm_cuda_pin_word_page(const void *w);
/* The GPU's address of a word in this process (device or registered host
 * memory); 0 when the GPU cannot reach it. */
CUdeviceptr dsm_cuda_gpu_word(uint64_t *w);

/* cuda.c. SIGNAL_ADD on device memory: a one-thread kernel on st. */
CUresult dsm_cuda_launch_add(CUstream st, CUdeviceptr word, uint64_t value);
/* Post the copies queue q holds back (coalescing); caller holds q->lock. */
void dsm_cuda_undefer_locked(dsm_sdma_queue_t *q);
/* Address of q's completion word as the GPU sees it, and its value. */
CUdeviceptr dsm_cuda_done_dev(dsm_sdma_queue_t *q);
uint64_t dsm_cuda_done(dsm_sdma_queue_t *q);

/* devapi.c: stop the device API's proxy thread and free its FIFO (first
 * thing in close; stats: print its counters). */
void dsm_cuda_devfifo_close(int stats);

/* A side stream forked from a stream for big local copies (an AllGather's
 * own block), so that they overlap the copies to and from peers. */
typedef struct dsm_cuda_side {
    CUstream st;
    CUevent fork, join;
} dsm_cuda_side_t;
/* Move the big local copies among the n copies (d, s, l) off stream st
 * onto sd->st, forked from st by an event; *n shrinks. alone = 0: a run
 * of nothing but local copies stays where it is. Returns 1 when the side
 * stream was used: st must wait for sd->join before anything reports the
 * copies' completion. */
int dsm_cuda_side_fork(CUstream st, dsm_cuda_side_t *sd, CUdeviceptr *d,
                       CUdeviceptr *s, size_t *l, size_t *n, int alone);
void dsm_cuda_side_destroy(dsm_cuda_side_t *sd);

#endif /* DSM_SDMA_CUDA_CUDA_INT_H */
