/*
 * Symmetric heap routines. Every call is collective over the world team:
 * each PE runs the same deterministic allocator on its own copy of the
 * metadata, so offsets agree without communication; a barrier makes the new
 * block usable by everyone before anyone returns (and, for free, makes sure
 * nobody still uses the old one).
 */
#include "rt.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static char *heap_base(void)
{
    return dsm_rt.segs[DSM_SEG_HEAP].base;
}

static void report_exhausted(const char *routine, size_t size)
{
    if (!dsm_env.debug)
        return;
    dsm_log_error("%s: cannot allocate %zu bytes: the symmetric heap has "
                  "%zu bytes, %zu in use, largest free block %zu; raise "
                  "SHMEM_SYMMETRIC_SIZE", routine, size,
                  dsm_rt.heap.size, dsm_rt.heap.used,
                  dsm_heap_largest_free(&dsm_rt.heap));
}

static void *alloc(const char *routine, size_t size, size_t align)
{
    size_t off;

    DSM_CHECK_INIT(routine);
    if (align && (align & (align - 1))) {
        /* Spec: an invalid alignment returns NULL. Still collective. */
        if (dsm_env.debug)
            dsm_log_error("%s: alignment %zu is not a power of two", routine,
                          align);
        dsm_rt_sync_all();
        return NULL;
    }
    if (size == 0) {
        dsm_rt_sync_all();
        return NULL;
    }
    pthread_mutex_lock(&dsm_rt.heap_lock);
    off = dsm_heap_alloc(&dsm_rt.heap, size, align);
    if (off == SIZE_MAX)
        report_exhausted(routine, size);
    pthread_mutex_unlock(&dsm_rt.heap_lock);
    dsm_rt_sync_all();
    return off == SIZE_MAX ? NULL : heap_base() + off;
}

static size_t offset_of(const char *routine, const void *ptr)
{
    uintptr_t off = (uintptr_t)ptr - (uintptr_t)heap_base();
    if (off >= dsm_rt.segs[DSM_SEG_HEAP].size ||
        !dsm_heap_block_size(&dsm_rt.heap, off))
        dsm_rt_fatal(routine, "%p was not returned by shmem_malloc (or was "
                     "already freed)", ptr);
    return off;
}

void *pshmem_malloc(size_t size)
{
    return alloc("shmem_malloc", size, 0);
}
DSM_WEAK(malloc)

void *pshmem_malloc_with_hints(size_t size, long hints)
{
    /* The hints (atomics, signals) ask nothing of host memory here: every
     * heap byte is equally reachable by CPU atomics and engines. */
    (void)hints;
    return alloc("shmem_malloc_with_hints", size, 0);
}
DSM_WEAK(malloc_with_hints)

void *pshmem_align(size_t alignment, size_t size)
{
    if (!alignment)
        alignment = 1;
    return alloc("shmem_align", size, alignment);
}
DSM_WEAK(align)

void *pshmem_calloc(size_t count, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(count, size, &total)) {
        DSM_CHECK_INIT("shmem_calloc");
        if (dsm_env.debug)
            dsm_log_error("shmem_calloc: %zu x %zu bytes overflows", count,
                          size);
        dsm_rt_sync_all();
        return NULL;
    }
    char *p = alloc("shmem_calloc", total, 0);
    if (p) {
        memset(p, 0, total);
        /* Nobody may put into the block before it is zero everywhere. */
        dsm_rt_sync_all();
    }
    return p;
}
DSM_WEAK(calloc)

void pshmem_free(void *ptr)
{
    DSM_CHECK_INIT("shmem_free");
    dsm_rt_quiet(&dsm_ctx_default);
    dsm_rt_sync_all();
    if (!ptr)
        return;
    pthread_mutex_lock(&dsm_rt.heap_lock);
    size_t off = offset_of("shmem_free", ptr);
    dsm_heap_free(&dsm_rt.heap, off);
    pthread_mutex_unlock(&dsm_rt.heap_lock);
}
DSM_WEAK(free)

void *pshmem_realloc(void *ptr, size_t size)
{
    size_t off, noff, old;
    int moved;

    if (!ptr)
        return alloc("shmem_realloc", size, 0);
    if (!size) {
        pshmem_free(ptr);
        return NULL;
    }
    DSM_CHECK_INIT("shmem_realloc");
    dsm_rt_quiet(&dsm_ctx_default);
    dsm_rt_sync_all();
    pthread_mutex_lock(&dsm_rt.heap_lock);
    off = offset_of("shmem_realloc", ptr);
    old = dsm_heap_block_size(&dsm_rt.heap, off);
    noff = dsm_heap_realloc(&dsm_rt.heap, off, size, &moved);
    if (noff == SIZE_MAX)
        report_exhausted("shmem_realloc", size);
    else if (moved)
        memmove(heap_base() + noff, heap_base() + off, DSM_MIN(old, size));
    pthread_mutex_unlock(&dsm_rt.heap_lock);
    dsm_rt_sync_all();
    return noff == SIZE_MAX ? NULL : heap_base() + noff;
}
DSM_WEAK(realloc)

/* Deprecated 1.2 names. */
DSM_API void *shmalloc(size_t size)
{
    return pshmem_malloc(size);
}
DSM_API void shfree(void *ptr)
{
    pshmem_free(ptr);
}
DSM_API void *shrealloc(void *ptr, size_t size)
{
    return pshmem_realloc(ptr, size);
}
DSM_API void *shmemalign(size_t alignment, size_t size)
{
    return pshmem_align(alignment, size);
}
