/*
 * Symmetric segments: ranges of this process's address space whose every
 * byte has a twin at the same offset in every other PE's segment of the
 * same kind. Each is backed by a shareable handle (a memfd for host memory)
 * passed to the local peers through the bootstrap and mapped by them.
 */
#ifndef DSM_SEGMENT_H
#define DSM_SEGMENT_H

#include <stddef.h>
#include <stdint.h>

#include "common/status.h"

#define DSM_SEG_MAX 4

typedef enum {
    DSM_SEG_HEAP = 0, /* symmetric heap + the runtime's internal area */
    DSM_SEG_STATIC,   /* the executable's .data/.bss */
    DSM_SEG_DEVICE,   /* the device heap in GPU memory (gpu.c); its index in
                       * dsm_rt.segs is its kind; size 0 when absent */
} dsm_seg_kind_t;

typedef struct dsm_seg {
    char *base;  /* my copy */
    size_t size; /* bytes valid from base */
    size_t map_size; /* bytes mapped (page multiple) */
    char **peer; /* [npes] each PE's copy mapped here; NULL = not mapped */
    int fd;      /* my memfd, -1 after the peers have it */
    int kind;
    const char *name;
} dsm_seg_t;

/* Find the executable's writable data (after RELRO), page aligned. Returns
 * 0 and fills start/len (len 0 if there is none). */
int dsm_seg_static_range(char **start, size_t *len);
/* Move [start, start+len) onto a new memfd mapped shared at the same
 * address, contents preserved. Returns the fd or -1 (errno set). */
int dsm_seg_static_remap(char *start, size_t len);

/* The heap's sizes for SHMEM_SYMMETRIC_SIZE = want: the user part (at
 * least a page, rounded up to pages) and the mapping with the internal area
 * (internal bytes, a page multiple) after it; slack more bytes are reserved
 * to align its base. Returns 0, or -1 when any of them exceeds PTRDIFF_MAX:
 * rounding a value near 2^64 up to pages would wrap to a tiny heap. */
static inline int dsm_seg_heap_sizes(uint64_t want, size_t page,
                                     size_t internal, size_t slack,
                                     size_t *user, size_t *total)
{
    size_t u, t, span;

    if (want > (uint64_t)PTRDIFF_MAX - (page - 1))
        return -1;
    u = ((size_t)want + page - 1) & ~(page - 1);
    if (u < page)
        u = page;
    if (__builtin_add_overflow(u, internal, &t) ||
        __builtin_add_overflow(t, slack, &span) || span > PTRDIFF_MAX)
        return -1;
    *user = u;
    *total = t;
    return 0;
}

/* Strided RMA: count pieces of piece elements of size bytes, piece i at
 * addr + i * stride elements. Returns stride * size, the distance between
 * pieces. Fails the job with one line naming routine, the target PE and
 * the values when the range's arithmetic overflows, or, for the symmetric
 * side (sym = 1), when its two ends are not in one symmetric segment (the
 * pieces between them then are too). */
ptrdiff_t dsm_seg_check_strided(const char *routine, const void *addr,
                                ptrdiff_t stride, size_t count, size_t piece,
                                size_t size, int pe, int sym);

/* ---- GPU memory (gpu.c; no-ops without the cuda backend) ---- */
struct dsm_heap;
/* Before the sdma layer opens: tell the cuda backend the local rank. */
void dsm_rt_device_pre_open(void);
/* After it opened: register host segments for the GPU, create and map the
 * device heap (SHMEM_DEVICE_HEAP_SIZE) of every local PE. */
dsm_status_t dsm_rt_device_init(void);
void dsm_rt_device_seg_fini(dsm_seg_t *s);
/* At finalize, before the host segments go: unregister them, unmap the
 * device heap. */
void dsm_rt_device_fini(void);
/* The device heap's allocator, or NULL when there is no device heap. */
struct dsm_heap *dsm_rt_device_heap(void);
/* Why the GPU backend gave no device heap (one line), or NULL. */
const char *dsm_rt_device_heap_why(void);
/* 1 when p (not symmetric) is GPU memory, e.g. a cudaMalloc'ed buffer. */
int dsm_rt_private_device(const void *p);
/* After the init barrier (every local PE's GPU is published): local PEs
 * that share this PE's GPU, and a one-line note from the lowest of them
 * when they share it without CUDA MPS. */
void dsm_rt_device_sharing(void);
/* SHMEM_INFO: "GPU ... shared by N PEs (MPS ...)", or NULL. */
const char *dsm_rt_device_sharing_info(void);
/* 1 when PE pe's GPU is the same GPU as mine (both PEs on a GPU backend
 * of this node); 0 otherwise, and for myself. */
int dsm_rt_gpu_shared_with(int pe);

#endif /* DSM_SEGMENT_H */
