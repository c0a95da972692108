/*
 * The symmetric heap allocator. Deterministic: the same sequence of calls
 * gives the same offsets on every PE, which is what makes the heap
 * symmetric. Metadata lives in private memory, never in the heap, so a
 * stray remote write cannot corrupt it. Not thread-safe by itself (the
 * runtime holds a lock).
 */
#ifndef DSM_HEAP_H
#define DSM_HEAP_H

#include <stddef.h>
#include <stdint.h>

#define DSM_HEAP_MIN_ALIGN 64
/* The heap's base address is aligned this much; shmem_align honours any
 * power-of-two alignment up to it. */
#define DSM_HEAP_BASE_ALIGN ((size_t)1 << 30)

typedef struct dsm_heap_blk {
    size_t off, size;
    size_t req; /* used: the bytes asked for (size is rounded up) */
    int used;
} dsm_heap_blk_t;

typedef struct dsm_heap {
    size_t size;          /* bytes managed */
    dsm_heap_blk_t *blk;  /* sorted by offset, covering [0, size) */
    size_t nblk, cap;
    size_t used;          /* bytes in used blocks */
    size_t peak;
} dsm_heap_t;

/* Bumped by every change of any heap's blocks (the functions below, and
 * heap.c where it puts a copy back): dsm_rt_check_alloc's per-thread
 * cache of the allocations it found is valid while this is unchanged. */
extern uint64_t dsm_heap_gen;
static inline void dsm_heap_changed(void)
{
    __atomic_fetch_add(&dsm_heap_gen, 1, __ATOMIC_RELEASE);
}

int dsm_heap_init(dsm_heap_t *h, size_t size);
void dsm_heap_fini(dsm_heap_t *h);
/* Offset of a new block of size bytes aligned to align (a power of two,
 * at least DSM_HEAP_MIN_ALIGN is used), or SIZE_MAX when it does not fit. */
size_t dsm_heap_alloc(dsm_heap_t *h, size_t size, size_t align);
/* 0, or -1 if off is not the start of a used block. */
int dsm_heap_free(dsm_heap_t *h, size_t off);
/* Grow or shrink in place when possible, else move: new offset, or
 * SIZE_MAX (block unchanged) when it does not fit. *moved says whether the
 * caller must copy the old contents (min(old, new) bytes). */
size_t dsm_heap_realloc(dsm_heap_t *h, size_t off, size_t size, int *moved);
/* Size of the used block at off, or 0. */
size_t dsm_heap_block_size(const dsm_heap_t *h, size_t off);
/* The used block containing offset off: 0 with its start and the bytes
 * asked for, or -1 when off is in no used block. */
int dsm_heap_find(const dsm_heap_t *h, size_t off, size_t *start,
                  size_t *req);
/* A deep copy of src into dst (0, or -1 out of memory), to undo an
 * operation: free dst with dsm_heap_fini, or make it the heap. */
int dsm_heap_copy(dsm_heap_t *dst, const dsm_heap_t *src);
/* Largest free block (for error messages). */
size_t dsm_heap_largest_free(const dsm_heap_t *h);

/* ---- runtime checks over the heaps (heap.c) ---- */
/* Collectives: fail the job with one line naming routine and this PE when
 * the need bytes at ptr (what the collective writes to, what = "dest", or
 * reads from it, "source") run past the end of ptr's allocation in the
 * symmetric heap or the device heap, or when ptr lies in one of them but
 * in no allocation. Pointers outside both heaps are left to the address
 * checks (static data has no allocations to compare with). */
void dsm_rt_check_alloc_slow(const char *routine, const char *what,
                             const void *ptr, size_t need, uint64_t gen);
/* The last two allocations the checks found, valid while dsm_heap_gen is
 * gen: a collective called over and over on the same buffers takes no
 * lock and no search. Written under the heap lock (gen 0 while the range
 * changes), read without it: gen, the range, gen again (a seqlock). */
typedef struct dsm_chk_cache {
    uint64_t gen;
    uintptr_t lo, hi; /* the allocation: [start, start + bytes asked) */
} dsm_chk_cache_t;
extern dsm_chk_cache_t dsm_chk_cache[2];
static inline void dsm_rt_check_alloc(const char *routine, const char *what,
                                      const void *ptr, size_t need)
{
    const uint64_t gen = __atomic_load_n(&dsm_heap_gen, __ATOMIC_ACQUIRE);
    const uintptr_t p = (uintptr_t)ptr;
    for (int i = 0; i < 2; i++) {
        dsm_chk_cache_t *c = &dsm_chk_cache[i];
        if (__atomic_load_n(&c->gen, __ATOMIC_ACQUIRE) != gen)
            continue;
        uintptr_t lo = __atomic_load_n(&c->lo, __ATOMIC_RELAXED);
        uintptr_t hi = __atomic_load_n(&c->hi, __ATOMIC_RELAXED);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&c->gen, __ATOMIC_RELAXED) == gen &&
            p - lo < hi - lo && need <= hi - p)
            return;
    }
    dsm_rt_check_alloc_slow(routine, what, ptr, need, gen);
}

#endif /* DSM_HEAP_H */
