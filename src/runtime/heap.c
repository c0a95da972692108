/*
 * Symmetric heap routines. Every call is collective over the world team:
 * each PE runs the same deterministic allocator on its own copy of the
 * metadata, so offsets agree without communication; a barrier makes the new
 * block usable by everyone before anyone returns (and, for free, makes sure
 * nobody still uses the old one).
 */
#include "rma.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static char *heap_base(void)
{
    return dsm_rt.segs[DSM_SEG_HEAP].base;
}

static void report_exhausted_in(const char *routine, size_t size,
                               const dsm_heap_t *h, const char *var)
{
    if (!dsm_env.debug)
        return;
    dsm_log_error("%s: cannot allocate %zu bytes: the symmetric heap has "
                  "%zu bytes, %zu in use, largest free block %zu; raise "
                  "%s", routine, size, h->size, h->used,
                  dsm_heap_largest_free(h), var);
}

static void report_exhausted(const char *routine, size_t size)
{
    report_exhausted_in(routine, size, &dsm_rt.heap, "SHMEM_SYMMETRIC_SIZE");
}

/* The device heap (gpu.c), when ptr is in it. */
static dsm_heap_t *device_heap_of(const void *ptr)
{
    const dsm_seg_t *d = &dsm_rt.segs[DSM_SEG_DEVICE];
    if (!d->size || (uintptr_t)ptr - (uintptr_t)d->base >= d->size)
        return NULL;
    return dsm_rt_device_heap();
}

static void *alloc_in(const char *routine, dsm_heap_t *h, char *base,
                      const char *var, size_t size, size_t align);

static void *alloc(const char *routine, size_t size, size_t align)
{
    return alloc_in(routine, &dsm_rt.heap, NULL, "SHMEM_SYMMETRIC_SIZE",
                    size, align);
}

static void *alloc_in(const char *routine, dsm_heap_t *h, char *base,
                      const char *var, size_t size, size_t align)
{
    size_t off;

    DSM_CHECK_INIT(routine);
    if (align && ((align & (align - 1)) || align > DSM_HEAP_BASE_ALIGN)) {
        /* Spec: an invalid alignment returns NULL. Still collective. */
        if (dsm_env.debug)
            dsm_log_error("%s: alignment %zu is not a power of two up to "
                          "%zu", routine, align, DSM_HEAP_BASE_ALIGN);
        dsm_rt_sync_all();
        return NULL;
    }
    if (size == 0) {
        dsm_rt_sync_all();
        return NULL;
    }
    pthread_mutex_lock(&dsm_rt.heap_lock);
    off = dsm_heap_alloc(h, size, align);
    if (off == SIZE_MAX)
        report_exhausted_in(routine, size, h, var);
    pthread_mutex_unlock(&dsm_rt.heap_lock);
    dsm_rt_sync_all();
    return off == SIZE_MAX ? NULL : (base ? base : heap_base()) + off;
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
     * heap byte is equally reachable by CPU atomics and engines.
     * SHMEMX_MALLOC_DEVICE: the device heap in GPU memory (gpu.c). */
    if (hints & SHMEMX_MALLOC_DEVICE) {
        DSM_CHECK_INIT("shmem_malloc_with_hints");
        dsm_heap_t *dh = dsm_rt_device_heap();
        if (!dh) {
            if (dsm_env.debug)
                dsm_log_error("shmem_malloc_with_hints: SHMEMX_MALLOC_DEVICE: "
                              "no device heap (sdma backend %s; "
                              "SHMEM_DEVICE_HEAP_SIZE=%llu)",
                              dsm_sdma_backend_name(dsm_rt.sdma),
                              (unsigned long long)dsm_env.device_heap_size);
            dsm_rt_sync_all();
            return NULL;
        }
        return alloc_in("shmem_malloc_with_hints", dh,
                        dsm_rt.segs[DSM_SEG_DEVICE].base,
                        "SHMEM_DEVICE_HEAP_SIZE", size, 0);
    }
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
    dsm_heap_t *dh = device_heap_of(ptr);
    if (dh) {
        size_t doff = (size_t)((char *)ptr - dsm_rt.segs[DSM_SEG_DEVICE].base);
        if (dsm_heap_free(dh, doff))
            dsm_rt_fatal("shmem_free", "%p was not returned by "
                         "shmemx_malloc_device (or was already freed)", ptr);
        pthread_mutex_unlock(&dsm_rt.heap_lock);
        return;
    }
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
    dsm_heap_t *dh = device_heap_of(ptr);
    if (dh) {
        /* Device heap: the move is an engine copy within this PE's GPU. */
        char *dbase = dsm_rt.segs[DSM_SEG_DEVICE].base;
        pthread_mutex_lock(&dsm_rt.heap_lock);
        off = (size_t)((char *)ptr - dbase);
        old = dsm_heap_block_size(dh, off);
        if (!old)
            dsm_rt_fatal("shmem_realloc", "%p was not returned by "
                         "shmemx_malloc_device (or was already freed)", ptr);
        noff = dsm_heap_realloc(dh, off, size, &moved);
        pthread_mutex_unlock(&dsm_rt.heap_lock);
        if (noff == SIZE_MAX) {
            report_exhausted_in("shmem_realloc", size, dh,
                                "SHMEM_DEVICE_HEAP_SIZE");
        } else if (moved) {
            uint64_t flag = 0;
            dsm_rma_issue(NULL, &flag, dsm_rt.me, dbase + off, dbase + noff,
                          DSM_MIN(old, size));
            dsm_rma_wait_flag(&flag);
        }
        dsm_rt_sync_all();
        return noff == SIZE_MAX ? NULL : dbase + noff;
    }
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
