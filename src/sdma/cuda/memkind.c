/*
 * What a pointer is for the copy engines: device memory (the device heaps
 * as mapped here, any cudaMalloc'ed buffer), pinned host memory mapped for
 * the GPU (the local PEs' host segments, registered at init, and pages of
 * waited-for words), or pageable memory the GPU cannot address. A table of
 * the ranges the backend made answers for its own memory without a driver
 * call; anything else is asked of the driver (cuPointerGetAttribute).
 */
#include "sdma/cuda/cuda_int.h"

#include <stdlib.h>
#include <string.h>

typedef struct cu_range {
    uintptr_t lo, hi;
    int kind;
    intptr_t delta; /* device address - host address (HOSTREG) */
} cu_range_t;

/* Appended under lock, read without it up to the published count. The
 * table grows by chunks that never move (a reader may be scanning while a
 * range is added), up to RANGE_CHUNKS * RANGE_CHUNK ranges; past that a
 * range is not recorded and the driver is asked instead, which one line
 * says (it was a silent drop at 256 before, #14). */
#define RANGE_CHUNK 256
#define RANGE_CHUNKS 256
static struct {
    pthread_mutex_t lock;
    cu_range_t *chunk[RANGE_CHUNKS];
    int n;
    int full_said;
} ranges = {.lock = PTHREAD_MUTEX_INITIALIZER};

static inline cu_range_t *range_at(int i)
{
    return &ranges.chunk[i / RANGE_CHUNK][i % RANGE_CHUNK];
}

void dsm_cuda_add_range(uintptr_t lo, size_t len, int kind, intptr_t delta)
{
    pthread_mutex_lock(&ranges.lock);
    int c = ranges.n / RANGE_CHUNK;
    if (c < RANGE_CHUNKS && !ranges.chunk[c])
        ranges.chunk[c] = calloc(RANGE_CHUNK, sizeof(cu_range_t));
    if (c < RANGE_CHUNKS && ranges.chunk[c]) {
        cu_range_t *r = range_at(ranges.n);
        r->lo = lo;
        r->hi = lo + len;
        r->kind = kind;
        r->delta = delta;
        /* The chunk pointer and the entry before the count. */
        __atomic_store_n(&ranges.n, ranges.n + 1, __ATOMIC_RELEASE);
    } else if (!ranges.full_said) {
        ranges.full_said = 1;
        dsm_log_warn("cuda: %d memory ranges recorded, no room for more "
                     "(%s): later ones are classified by the driver, one "
                     "call per copy", ranges.n,
                     c < RANGE_CHUNKS ? "out of memory" : "table full");
    }
    pthread_mutex_unlock(&ranges.lock);
}

void dsm_cuda_drop_range(uintptr_t lo)
{
    pthread_mutex_lock(&ranges.lock);
    for (int i = 0; i < ranges.n; i++)
        if (range_at(i)->lo == lo)
            range_at(i)->hi = lo; /* empty: never matches */
    pthread_mutex_unlock(&ranges.lock);
}

/* The recorded range holding a, or NULL. */
static const cu_range_t *range_of(uintptr_t a)
{
    int n = __atomic_load_n(&ranges.n, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++) {
        const cu_range_t *r = range_at(i);
        if (a - r->lo < r->hi - r->lo)
            return r;
    }
    return NULL;
}

int dsm_cuda_classify(const void *p, intptr_t *delta)
{
    uintptr_t a = (uintptr_t)p;
    const cu_range_t *r = range_of(a);
    CUmemorytype t = 0;

    *delta = r ? r->delta : 0;
    if (r)
        return r->kind;
    /* Not one of ours: a private cudaMalloc'ed / cudaHostAlloc'ed buffer,
     * or plain pageable memory (the driver says "invalid value"). */
    const uint64_t t0 = dsm_cuda_t_start();
    CUcontext prev = dsm_cuda_ctx_enter();
    int kind = DSM_CUDA_DEV;
    if (dsm_cu.PointerGetAttribute(&t, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                   (CUdeviceptr)a) != CUDA_SUCCESS) {
        kind = DSM_CUDA_PAGEABLE;
    } else if (t == CU_MEMORYTYPE_HOST) {
        CUdeviceptr d;
        if (dsm_cu.MemHostGetDevicePointer(&d, (void *)a, 0) == CUDA_SUCCESS)
            *delta = (intptr_t)(d - (CUdeviceptr)a);
        kind = DSM_CUDA_HOSTREG;
    }
    dsm_cuda_ctx_leave(prev);
    dsm_cuda_t_end(DSM_CUDA_T_LOOKUP, t0);
    return kind;
}

int dsm_cuda_in_ranges(uint64_t a)
{
    return range_of((uintptr_t)a) != NULL;
}

int dsm_cuda_kind_of(const void *p)
{
    intptr_t d;
    return dsm_cuda_classify(p, &d);
}

CUdeviceptr dsm_cuda_gpu_word(uint64_t *w)
{
    intptr_t delta;
    if (dsm_cuda_classify(w, &delta) == DSM_CUDA_PAGEABLE)
        return 0;
    return (CUdeviceptr)((intptr_t)(uintptr_t)w + delta);
}

int dsm_cuda_ptr_is_device(const void *p)
{
    return dsm_cuda_active() && dsm_cuda_kind_of(p) == DSM_CUDA_DEV;
}

dsm_status_t dsm_cuda_register_host(void *p, size_t len)
{
    CUcontext prev = dsm_cuda_ctx_enter();
    CUdeviceptr d = 0;
    CUresult rc = dsm_cu.MemHostRegister(
        p, len, CU_MEMHOSTREGISTER_DEVICEMAP | CU_MEMHOSTREGISTER_PORTABLE);
    if (rc == CUDA_SUCCESS || rc == CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED)
        rc = dsm_cu.MemHostGetDevicePointer(&d, p, 0);
    dsm_cuda_ctx_leave(prev);
    if (rc != CUDA_SUCCESS) {
        dsm_log_warn("cuda: cannot register %zu bytes of host memory at %p "
                     "for the GPU (%s): copies from and to it will be staged",
                     len, p, dsm_cu_err(rc));
        return DSM_ERR_UNSUPPORTED;
    }
    dsm_cuda_add_range((uintptr_t)p, len, DSM_CUDA_HOSTREG,
                       (intptr_t)(d - (CUdeviceptr)(uintptr_t)p));
    return DSM_OK;
}

void dsm_cuda_unregister_host_all(void)
{
    CUcontext prev = dsm_cuda_ctx_enter();
    pthread_mutex_lock(&ranges.lock);
    for (int i = 0; i < ranges.n; i++) {
        cu_range_t *r = range_at(i);
        if (r->kind == DSM_CUDA_HOSTREG && r->hi > r->lo) {
            dsm_cu.MemHostUnregister((void *)r->lo);
            r->hi = r->lo;
        }
    }
    pthread_mutex_unlock(&ranges.lock);
    dsm_cuda_ctx_leave(prev);
}

/* A WAIT on a word in pageable memory (a persistent request's trigger,
 * malloc'ed) would run as a host function that spins until the word
 * opens, costing a host-function round trip (tens of us) per instance.
 * Pin and map the word's page instead, so the stream waits on it itself.
 * The page stays registered to the end of the process: the library's own
 * words (persistent triggers) come from common/words.c, whose pages are
 * never unmapped. */
int dsm_cuda_pin_word_page(const void *w)
{
    long pg = sysconf(_SC_PAGESIZE);
    uintptr_t base = (uintptr_t)w & ~(uintptr_t)(pg - 1);
    CUdeviceptr d = 0;
    CUresult rc = dsm_cu.MemHostRegister((void *)base, (size_t)pg,
                                         CU_MEMHOSTREGISTER_DEVICEMAP |
                                             CU_MEMHOSTREGISTER_PORTABLE);
    if (rc == CUDA_SUCCESS || rc == CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED)
        rc = dsm_cu.MemHostGetDevicePointer(&d, (void *)base, 0);
    if (rc != CUDA_SUCCESS) {
        dsm_debug("cuda: cannot map the page of a waited-for word %p (%s); "
                  "a host function waits for it",
                  w, dsm_cu_err(rc));
        return 0;
    }
    dsm_cuda_add_range(base, (size_t)pg, DSM_CUDA_HOSTREG,
                       (intptr_t)(d - (CUdeviceptr)base));
    return 1;
}
