/*
 * Symmetric heap routines. Every call is collective over the world team:
 * each PE runs the same deterministic allocator on its own copy of the
 * metadata, so offsets agree without communication; a barrier makes the new
 * block usable by everyone before anyone returns (and, for free, makes sure
 * nobody still uses the old one). The allocating barrier also agrees on
 * the result (agree()): NULL on every PE or a block on every PE.
 */
#include "rma.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static char *heap_base(void)
{
    return dsm_rt.segs[DSM_SEG_HEAP].base;
}

/* Set once this PE printed its first allocation failure. */
static int warned;

/* Why routine returns NULL on this PE: every time under SHMEM_DEBUG,
 * otherwise once per PE unless SHMEM_MALLOC_WARN=0. A code that asks for
 * more than the heap holds usually dereferences the NULL next, so the
 * line is printed by default (SOS and NVSHMEM print too). */
static void report_exhausted_in(const char *routine, size_t size,
                                const dsm_heap_t *h, const char *var)
{
    if (!dsm_env.debug &&
        (!dsm_env.malloc_warn || __atomic_exchange_n(&warned, 1,
                                                     __ATOMIC_RELAXED)))
        return;
    if (size > SIZE_MAX / 2) {
        /* No heap could hold it: a negative count converted to size_t
         * (it suggested "at least 17592186044416M"). */
        dsm_log_error("%s: cannot allocate %zu bytes (%lld as a signed "
                      "number: a negative size converted to size_t?)%s",
                      routine, size, (long long)size,
                      dsm_env.debug ? "" : " (SHMEM_MALLOC_WARN=0: no message)");
        return;
    }
    /* Suggest a size that fits what is in use plus the request, in MiB. */
    size_t need = h->used + size, mib = (need >> 20) + 1;
    dsm_log_error("%s: cannot allocate %zu bytes: the symmetric heap has "
                  "%zu bytes, %zu in use, largest free block %zu; raise "
                  "%s (at least %zuM)%s", routine, size, h->size, h->used,
                  dsm_heap_largest_free(h), var, mib,
                  dsm_env.debug ? "" : " (SHMEM_MALLOC_WARN=0: no message)");
}

static const char *heap_var(void)
{
    return DSM_ENV_NAME(symmetric_size, "SYMMETRIC_SIZE");
}

/* The device heap (gpu.c), when ptr is in it. */
static dsm_heap_t *device_heap_of(const void *ptr)
{
    const dsm_seg_t *d = &dsm_rt.segs[DSM_SEG_DEVICE];
    if (!d->size || (uintptr_t)ptr - (uintptr_t)d->base >= d->size)
        return NULL;
    return dsm_rt_device_heap();
}

/* Number of agreements so far: selects the word pair of the control
 * page. Every PE makes the same sequence of collective calls. */
static uint64_t nagree;

/* The allocation barrier, which also tells every PE whether any PE
 * failed (ok == 0 on it). Allocation is deterministic, so PEs disagree
 * only when one PE's metadata could not grow (out of private memory) or
 * the program asked different sizes on different PEs; without the
 * agreement those PEs would return NULL while the others succeed, and
 * every later offset would differ. A failing PE raises word k & 1 of
 * every PE, then enters the barrier; after it each PE reads and clears
 * its own word. Word k & 1 is raised again only in agreement k + 2,
 * which no PE reaches before every PE left agreement k + 1's barrier,
 * i.e. after every PE cleared it here. Returns 1 when all succeeded. */
static int agree(int ok, const dsm_call_t *call)
{
    const int n = dsm_rt.npes, k = (int)(nagree++ & 1);
    const char *routine = call->routine;
    uint64_t *w = &dsm_rt.ctrl->alloc_fail[k];

    if (n == 1) {
        dsm_rt_sync_call(call);
        return ok;
    }
    if (!ok) {
        for (int pe = 0; pe < n; pe++) {
            dsm_ctrl_t *pc = pe == dsm_rt.me ? dsm_rt.ctrl
                                             : dsm_rt.peer_ctrl[pe];
            if (pe == dsm_rt.me ||
                (pc && (dsm_path_of(pe)->caps & DSM_PATH_CAP_LOADSTORE)))
                __atomic_store_n(&pc->alloc_fail[k], 1, __ATOMIC_RELAXED);
            else /* our word's address names theirs */
                dsm_path_signal(&dsm_ctx_default, w, 1, 0, pe, routine);
        }
        /* The network's writes land before the barrier says we entered. */
        dsm_path_quiet(&dsm_ctx_default);
    }
    /* The barrier also checks that every PE asked the same (coll/agree.c:
     * shmem_malloc(2048) on one PE against 1024 on the others fails the
     * job here, before the heaps diverge). */
    dsm_rt_sync_call(call);
    int failed = __atomic_load_n(w, __ATOMIC_ACQUIRE) != 0;
    __atomic_store_n(w, 0, __ATOMIC_RELAXED);
    if (failed && ok && dsm_env.debug)
        dsm_log_error("%s: returns NULL: the allocation failed on another "
                      "PE (its line says why)", routine);
    return !failed;
}

static void *alloc_in(const dsm_call_t *call, dsm_heap_t *h, char *base,
                      const char *var, size_t size, size_t align);

static void *alloc(const char *routine, size_t size, size_t align)
{
    return alloc_in(DSM_CALL(routine, DSM_CALL_ALLOC, 0, size,
                             align == SIZE_MAX ? 0 : align, 0),
                    &dsm_rt.heap, NULL, heap_var(), size, align);
}

/* call describes the call to every PE (routine, kind, arguments): each of
 * its barriers checks that every PE made the same one. */
static void *alloc_in(const dsm_call_t *call, dsm_heap_t *h, char *base,
                      const char *var, size_t size, size_t align)
{
    const char *routine = call->routine;
    size_t off;

    DSM_CHECK_INIT(routine);
    if (align == SIZE_MAX ||
        (align && ((align & (align - 1)) || align > DSM_HEAP_BASE_ALIGN))) {
        /* Spec: an invalid alignment returns NULL. Still collective. Said
         * once, by PE 0 (every PE passed the same: the call is collective),
         * or on every PE under SHMEM_DEBUG. */
        if (dsm_env.debug ||
            (dsm_env.malloc_warn && dsm_rt.me == 0 &&
             !__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED)))
            dsm_log_error("%s: returns NULL: alignment %zu is not a power "
                          "of two from 1 to %zu", routine,
                          align == SIZE_MAX ? (size_t)0 : align,
                          (size_t)DSM_HEAP_BASE_ALIGN);
        dsm_rt_sync_call(call);
        return NULL;
    }
    if (size == 0) {
        dsm_rt_sync_call(call);
        return NULL;
    }
    pthread_mutex_lock(&dsm_rt.heap_lock);
    off = dsm_heap_alloc(h, size, align);
    if (off == SIZE_MAX)
        report_exhausted_in(routine, size, h, var);
    pthread_mutex_unlock(&dsm_rt.heap_lock);
    if (!agree(off != SIZE_MAX, call)) {
        if (off != SIZE_MAX) {
            /* Undo: the free coalesces the block back exactly. */
            pthread_mutex_lock(&dsm_rt.heap_lock);
            dsm_heap_free(h, off);
            pthread_mutex_unlock(&dsm_rt.heap_lock);
        }
        return NULL;
    }
    return (base ? base : heap_base()) + off;
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

dsm_chk_cache_t dsm_chk_cache[2];
static unsigned chk_next; /* under heap_lock */

void dsm_rt_check_alloc_slow(const char *routine, const char *what,
                             const void *ptr, size_t need, uint64_t gen)
{
    const dsm_seg_t *hs = &dsm_rt.segs[DSM_SEG_HEAP];
    const dsm_seg_t *ds = &dsm_rt.segs[DSM_SEG_DEVICE];
    const char *heap_name = "symmetric heap";
    dsm_heap_t *h;
    uintptr_t off;
    size_t start, req;

    if (!need)
        return;
    if ((off = (uintptr_t)ptr - (uintptr_t)hs->base) < dsm_rt.heap.size) {
        h = &dsm_rt.heap;
    } else if (ds->size && (off = (uintptr_t)ptr - (uintptr_t)ds->base) <
                               ds->size &&
               (h = dsm_rt_device_heap())) {
        heap_name = "device heap";
    } else {
        return; /* static data, the internal area, or not symmetric */
    }
    pthread_mutex_lock(&dsm_rt.heap_lock);
    int found = !dsm_heap_find(h, off, &start, &req);
    size_t has = found && off - start < req ? req - (off - start) : 0;
    if (found && need <= has && req) {
        /* Remembered for the next checks (heap.h): the word first (no
         * reader takes the entry meanwhile), then the range, then the
         * generation it is valid for. */
        dsm_chk_cache_t *c = &dsm_chk_cache[chk_next++ & 1];
        __atomic_store_n(&c->gen, 0, __ATOMIC_RELAXED);
        __atomic_thread_fence(__ATOMIC_RELEASE);
        __atomic_store_n(&c->lo, (uintptr_t)ptr - (off - start),
                         __ATOMIC_RELAXED);
        __atomic_store_n(&c->hi, (uintptr_t)ptr - (off - start) + req,
                         __ATOMIC_RELAXED);
        __atomic_store_n(&c->gen, gen, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&dsm_rt.heap_lock);
    if (!found)
        dsm_rt_fatal(routine, "%s %p is in the %s but in no allocation "
                     "(freed?)", what, ptr, heap_name);
    if (need <= has)
        return;
    if (off == start)
        dsm_rt_fatal(routine, "%s needs %zu bytes, its allocation has %zu",
                     what, need, req);
    dsm_rt_fatal(routine, "%s needs %zu bytes, its allocation has %zu from "
                 "%s (%zu from its start)", what, need, has, what, req);
}

void *pshmem_malloc(size_t size)
{
    return alloc("shmem_malloc", size, 0);
}
DSM_WEAK(malloc)

/* The hints the specification defines; they ask nothing of host memory
 * here: every heap byte is equally reachable by CPU atomics and engines. */
#define STD_HINTS (SHMEM_MALLOC_ATOMICS_REMOTE | SHMEM_MALLOC_SIGNAL_REMOTE)

void *pshmem_malloc_with_hints(size_t size, long hints)
{
    static const char routine[] = "shmem_malloc_with_hints";

    /* Unrecognised bits must not change the result (spec): only
     * SHMEMX_MALLOC_DEVICE, alone or with the standard hints, asks for
     * the device heap; any other value (e.g. ~SHMEM_MALLOC_ATOMICS_REMOTE,
     * whose bits include ours) is shmem_malloc. */
    if (!(hints & SHMEMX_MALLOC_DEVICE) ||
        (hints & ~(STD_HINTS | SHMEMX_MALLOC_DEVICE)))
        return alloc(routine, size, 0);
    DSM_CHECK_INIT(routine);
    dsm_heap_t *dh = dsm_rt_device_heap();
    if (!dh) {
        /* NULL, not host memory: the caller asked for GPU memory by name
         * and would hand host memory to its kernels. Printed like a full
         * heap (the first time, or always under SHMEM_DEBUG). */
        if (dsm_env.debug ||
            (dsm_env.malloc_warn &&
             !__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED)))
            dsm_log_error("%s: SHMEMX_MALLOC_DEVICE: no device heap (sdma "
                          "backend %s%s%s; SHMEM_DEVICE_HEAP_SIZE=%llu); "
                          "returns NULL", routine,
                          dsm_sdma_backend_name(dsm_rt.sdma),
                          dsm_rt_device_heap_why() ? ": " : "",
                          dsm_rt_device_heap_why() ? dsm_rt_device_heap_why()
                                                   : "",
                          (unsigned long long)dsm_env.device_heap_size);
        agree(0, DSM_CALL(routine, DSM_CALL_ALLOC, 0, size, 0, 0));
        return NULL;
    }
    return alloc_in(DSM_CALL(routine, DSM_CALL_ALLOC, 0, size, 0, 0), dh,
                    dsm_rt.segs[DSM_SEG_DEVICE].base,
                    "SHMEM_DEVICE_HEAP_SIZE", size, 0);
}
DSM_WEAK(malloc_with_hints)

void *pshmem_align(size_t alignment, size_t size)
{
    /* 0 is not a power of two: NULL, as for any invalid alignment (alloc
     * takes 0 as "none", so it is passed as SIZE_MAX). */
    return alloc("shmem_align", size, alignment ? alignment : SIZE_MAX);
}
DSM_WEAK(align)

void *pshmem_calloc(size_t count, size_t size)
{
    const dsm_call_t *call =
        DSM_CALL("shmem_calloc", DSM_CALL_CALLOC, 0, count, size, 0);
    size_t total;
    if (__builtin_mul_overflow(count, size, &total)) {
        DSM_CHECK_INIT("shmem_calloc");
        if (dsm_env.debug)
            dsm_log_error("shmem_calloc: %zu x %zu bytes overflows", count,
                          size);
        dsm_rt_sync_call(call);
        return NULL;
    }
    char *p = alloc_in(call, &dsm_rt.heap, NULL, heap_var(), total, 0);
    if (p) {
        memset(p, 0, total);
        /* Nobody may put into the block before it is zero everywhere. */
        dsm_rt_sync_call(call);
    }
    return p;
}
DSM_WEAK(calloc)

void pshmem_free(void *ptr)
{
    DSM_CHECK_INIT("shmem_free");
    dsm_rt_quiet(&dsm_ctx_default);
    dsm_rt_sync_call(DSM_CALL("shmem_free", DSM_CALL_FREE, 0, 0, 0, 0));
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

/* shmem_realloc in heap h at base (the device heap's moves are engine
 * copies within this PE's GPU). A copy of the metadata undoes this PE's
 * part when another PE failed: a move leaves the old block's bytes as
 * they were, so restoring the metadata restores the block. */
static void *realloc_in(dsm_heap_t *h, char *base, const char *var,
                        void *ptr, size_t size, int device)
{
    static const char routine[] = "shmem_realloc";
    size_t off = (size_t)((char *)ptr - base), noff = SIZE_MAX, old;
    dsm_heap_t undo = {0};
    int moved = 0, saved;

    pthread_mutex_lock(&dsm_rt.heap_lock);
    old = dsm_heap_block_size(h, off);
    if (!old)
        dsm_rt_fatal(routine, "%p was not returned by %s (or was already "
                     "freed)", ptr,
                     device ? "shmemx_malloc_device" : "shmem_malloc");
    saved = !dsm_heap_copy(&undo, h);
    if (saved)
        noff = dsm_heap_realloc(h, off, size, &moved);
    if (noff == SIZE_MAX)
        report_exhausted_in(routine, size, h, var);
    else if (moved && !device)
        memmove(base + noff, base + off, DSM_MIN(old, size));
    pthread_mutex_unlock(&dsm_rt.heap_lock);
    if (noff != SIZE_MAX && moved && device) {
        uint64_t flag = 0;
        dsm_rma_issue(NULL, &flag, dsm_rt.me, base + off, base + noff,
                      DSM_MIN(old, size));
        dsm_rma_wait_flag(&flag);
    }
    int ok = agree(noff != SIZE_MAX,
                   DSM_CALL(routine, DSM_CALL_REALLOC, 0, size, 0, 0));
    if (saved) {
        pthread_mutex_lock(&dsm_rt.heap_lock);
        if (!ok && noff != SIZE_MAX) {
            dsm_heap_fini(h);
            *h = undo;
            dsm_heap_changed();
        } else {
            dsm_heap_fini(&undo);
        }
        pthread_mutex_unlock(&dsm_rt.heap_lock);
    }
    return ok ? base + noff : NULL;
}

void *pshmem_realloc(void *ptr, size_t size)
{
    if (!ptr)
        return alloc("shmem_realloc", size, 0);
    if (!size) {
        pshmem_free(ptr);
        return NULL;
    }
    DSM_CHECK_INIT("shmem_realloc");
    dsm_rt_quiet(&dsm_ctx_default);
    dsm_rt_sync_call(
        DSM_CALL("shmem_realloc", DSM_CALL_REALLOC, 0, size, 0, 0));
    dsm_heap_t *dh = device_heap_of(ptr);
    if (dh)
        return realloc_in(dh, dsm_rt.segs[DSM_SEG_DEVICE].base,
                          "SHMEM_DEVICE_HEAP_SIZE", ptr, size, 1);
    return realloc_in(&dsm_rt.heap, heap_base(), heap_var(), ptr, size, 0);
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
