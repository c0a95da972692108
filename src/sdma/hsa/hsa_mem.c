/*
 * hsa backend: the memory its engines reach.
 *
 * Host memory an engine touches is locked for the GPU
 * (hsa_amd_memory_lock) while a command uses it and unlocked when the
 * command retires: a queue slot holds its ranges (slot_regs_t), which
 * never overlap and are shared, counted, between commands. Device memory
 * is the GPU's already and is used as it is: the device heap (ours from
 * the GPU's coarse-grained pool, published with an hsa_amd_ipc_memory_t
 * handle, and the local peers' attached through
 * hsa_amd_ipc_memory_attach), kept in a table read without a lock, and
 * private buffers (hipMalloc'ed) that hsa_amd_pointer_info recognises.
 *
 * The GPU side of the layer (sdma.h, dsm_sdma_gpu_ops_t) is here too: the
 * device heap, which pointers are device memory, synchronous copies. One
 * file because the submit path and the device heap share that table.
 */
#include "sdma/backend.h"
#include "sdma/hsa/hsa_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------ device memory */

/* Device memory the engines reach as it is (GPU address = pointer): our
 * device heap from the GPU's pool and the peers' heaps attached through
 * IPC. Entries are appended under devmem_lock and published by ndevmem;
 * readers (ptr_is_device on every RMA while a device heap exists, and
 * dsm_hsa_reg_cover) scan without a lock. A released entry keeps its slot
 * with len 0. */
#define DEVMEM_MAX 1024
typedef struct devmem {
    hsa_reg_t reg;
    int attached; /* a peer's, by hsa_amd_ipc_memory_attach */
} devmem_t;
static devmem_t devmem[DEVMEM_MAX];
static uint32_t ndevmem;
static int devmem_live;
static pthread_mutex_t devmem_lock = PTHREAD_MUTEX_INITIALIZER;

/* A private device allocation (hipMalloc'ed: ROCr's pools, owned by a
 * GPU agent, or attached through IPC) that holds p: 1 and its range, else
 * 0 (host memory, or no hsa_amd_pointer_info). */
static int devptr_range(const void *p, uintptr_t *base, size_t *len)
{
    hsa_amd_pointer_info_t info;
    hsa_device_type_t type;

    if (!dsm_hsa.api.pointer_info)
        return 0;
    memset(&info, 0, sizeof(info));
    info.size = sizeof(info);
    if (dsm_hsa.api.pointer_info(p, &info, NULL, NULL, NULL) !=
        HSA_STATUS_SUCCESS)
        return 0;
    if (info.type == HSA_EXT_POINTER_TYPE_IPC)
        type = HSA_DEVICE_TYPE_GPU;
    else if (info.type != HSA_EXT_POINTER_TYPE_HSA ||
             dsm_hsa.api.agent_get_info(info.agentOwner, HSA_AGENT_INFO_DEVICE,
                                        &type) != HSA_STATUS_SUCCESS)
        return 0;
    if (type != HSA_DEVICE_TYPE_GPU || !info.sizeInBytes)
        return 0;
    *base = (uintptr_t)info.agentBaseAddress;
    *len = info.sizeInBytes;
    return (uintptr_t)p - *base < *len;
}

static devmem_t *devmem_find(const void *p)
{
    uint32_t n = __atomic_load_n(&ndevmem, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < n; i++) {
        size_t len = __atomic_load_n(&devmem[i].reg.len, __ATOMIC_ACQUIRE);
        if ((uintptr_t)p - devmem[i].reg.base < len)
            return &devmem[i];
    }
    return NULL;
}

/* ------------------------------------------------------------ locked ranges */

/* Lock [p, p + len) page-rounded for a long-lived user (the ring, the
 * completion word, the bounce buffer): one range. */
static hsa_reg_t *reg_lock_new(hsas_t *hs, uintptr_t base, uintptr_t end)
{
    hsa_reg_t *r = calloc(1, sizeof(*r));
    void *agent = NULL;
    if (!r)
        return NULL;
    r->base = base;
    r->len = end - base;
    if (dsm_hsa.api.memory_lock((void *)r->base, r->len, &dsm_hsa.gpu, 1,
                                &agent) != HSA_STATUS_SUCCESS) {
        free(r);
        return NULL;
    }
    r->agent = agent;
    r->refs = 1;
    r->next = hs->regs;
    hs->regs = r;
    return r;
}

static int slot_add(slot_regs_t *sr, hsa_reg_t *r)
{
    if (!sr->v) {
        sr->v = sr->inl;
        sr->cap = DSM_HSA_SLOT_REGS_INLINE;
    }
    if (sr->n == sr->cap) {
        uint32_t c = sr->cap * 2;
        hsa_reg_t **v = sr->v == sr->inl ? malloc(c * sizeof(*v))
                                         : realloc(sr->v, c * sizeof(*v));
        if (!v)
            return 0;
        if (sr->v == sr->inl)
            memcpy(v, sr->inl, sizeof(sr->inl));
        sr->v = v;
        sr->cap = c;
    }
    sr->v[sr->n++] = r;
    return 1;
}

/* The array of a slot_regs_t, where it outgrew the inline one. */
void dsm_hsa_slot_regs_free(slot_regs_t *sr)
{
    if (sr->v != sr->inl)
        free(sr->v);
    sr->v = NULL;
    sr->n = sr->cap = 0;
}

/* Cover [p, p + len) with locked ranges that never overlap (so no two
 * share a base address: unlock names a range by its base), locking only
 * the pages not yet locked, and add each to sr with a reference. A copy
 * is split where one range ends (their GPU addresses need not be
 * contiguous). Returns 0 when some page cannot be locked. */
int dsm_hsa_reg_cover(hsas_t *hs, slot_regs_t *sr, const void *p, size_t len)
{
    long pg = sysconf(_SC_PAGESIZE);
    uintptr_t pos = (uintptr_t)p & ~(uintptr_t)(pg - 1);
    uintptr_t end = ((uintptr_t)p + (len ? len : 1) + (uintptr_t)pg - 1) &
                    ~(uintptr_t)(pg - 1);
    int ok = 1;

    pthread_mutex_lock(&hs->reg_lock);
    while (pos < end && ok) {
        hsa_reg_t *r, *hit = NULL;
        uintptr_t stop = end;
        devmem_t *d = devmem_find((const void *)pos);
        if (d) {
            /* The GPU's own memory: nothing to lock or count. */
            if (!slot_add(sr, &d->reg)) {
                ok = 0;
                break;
            }
            pos = d->reg.base + d->reg.len;
            continue;
        }
        for (r = hs->regs; r; r = r->next) {
            if (pos >= r->base && pos < r->base + r->len) {
                hit = r;
                break;
            }
            if (r->base > pos && r->base < stop)
                stop = r->base;
        }
        uintptr_t dbase;
        size_t dlen;
        if (hit) {
            hit->refs++;
        } else if (devptr_range((const void *)pos, &dbase, &dlen)) {
            /* A private device buffer: the GPU's own, nothing to lock. */
            hit = calloc(1, sizeof(*hit));
            if (!hit) {
                ok = 0;
                break;
            }
            hit->base = dbase;
            hit->len = dlen;
            hit->agent = (char *)dbase;
            hit->dev = 2;
            hit->refs = 1;
            hit->next = hs->regs;
            hs->regs = hit;
        } else {
            hit = reg_lock_new(hs, pos, stop);
            if (!hit) {
                ok = 0;
                break;
            }
        }
        if (!slot_add(sr, hit)) {
            hit->refs--;
            ok = 0;
            break;
        }
        pos = hit->base + hit->len;
    }
    pthread_mutex_unlock(&hs->reg_lock);
    return ok;
}

hsa_reg_t *dsm_hsa_reg_get(hsas_t *hs, const void *p, size_t len)
{
    slot_regs_t one = {0};
    hsa_reg_t *r = NULL;
    /* Long-lived buffers are page-aligned allocations of their own:
     * one range each. */
    if (dsm_hsa_reg_cover(hs, &one, p, len) && one.n == 1)
        r = one.v[0];
    else
        for (uint32_t i = 0; i < one.n; i++) {
            if (one.v[i]->dev == 1)
                continue;
            pthread_mutex_lock(&hs->reg_lock);
            one.v[i]->refs--;
            pthread_mutex_unlock(&hs->reg_lock);
        }
    dsm_hsa_slot_regs_free(&one);
    return r;
}

void dsm_hsa_reg_put(hsas_t *hs, hsa_reg_t *r)
{
    hsa_reg_t **pp;

    if (r->dev == 1)
        return;
    pthread_mutex_lock(&hs->reg_lock);
    if (--r->refs == 0) {
        for (pp = &hs->regs; *pp; pp = &(*pp)->next)
            if (*pp == r) {
                *pp = r->next;
                break;
            }
        if (!r->dev)
            dsm_hsa.api.memory_unlock((void *)r->base);
        free(r);
    }
    pthread_mutex_unlock(&hs->reg_lock);
}

/* ------------------------------------------------------------ GPU memory */

/* The GPU side (sdma.h, dsm_sdma_gpu_ops_t): the device heap, which
 * pointers are device memory, synchronous copies. No streams (the
 * on-stream routines are cuda's) and no host registration of its own:
 * commands lock the host memory they touch (dsm_hsa_reg_cover). */

static int hsa_gpu_active(void)
{
    return dsm_hsa.loaded && !dsm_hsa.closed_early;
}

static int hsa_gpu_device(void)
{
    return dsm_hsa.devindex;
}

static dsm_status_t hsa_register_host(void *p, size_t len)
{
    (void)p;
    (void)len;
    return DSM_OK;
}

static void hsa_unregister_host_all(void)
{
}

/* The device heap's pool: the GPU's device-local memory, global,
 * coarse-grained (ROCr's VRAM pool; fine-grained pools are host memory
 * or coherent VRAM, slower for the engines and not what hipMalloc
 * gives), allocatable by the runtime. */
struct pool_walk {
    hsa_amd_memory_pool_t pool;
    size_t granule;
    int found;
};

static hsa_status_t pool_cb(hsa_amd_memory_pool_t p, void *arg)
{
    struct pool_walk *w = arg;
    hsa_amd_segment_t seg;
    uint32_t flags = 0;
    bool alloc = false;
    size_t granule = 0;

    if (dsm_hsa.api.pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &seg) !=
            HSA_STATUS_SUCCESS ||
        seg != HSA_AMD_SEGMENT_GLOBAL ||
        dsm_hsa.api.pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS,
                                  &flags) != HSA_STATUS_SUCCESS ||
        !(flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED) ||
        dsm_hsa.api.pool_get_info(
            p, HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED, &alloc) !=
            HSA_STATUS_SUCCESS ||
        !alloc)
        return HSA_STATUS_SUCCESS;
    if (dsm_hsa.api.pool_get_info(
            p, HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE, &granule) !=
        HSA_STATUS_SUCCESS)
        granule = 0;
    w->pool = p;
    w->granule = granule;
    w->found = 1;
    return HSA_STATUS_INFO_BREAK;
}

static int devmem_add(void *p, size_t len, int attached)
{
    pthread_mutex_lock(&devmem_lock);
    uint32_t i = ndevmem;
    /* A released slot first: init/finalize cycles do not run it out. */
    for (uint32_t k = 0; k < ndevmem; k++)
        if (!devmem[k].reg.len) {
            i = k;
            break;
        }
    if (i == DEVMEM_MAX) {
        pthread_mutex_unlock(&devmem_lock);
        return 0;
    }
    devmem[i].attached = attached;
    devmem[i].reg.base = (uintptr_t)p;
    devmem[i].reg.agent = p; /* the GPU's address is the pointer */
    devmem[i].reg.dev = 1;
    devmem[i].reg.refs = 1;
    __atomic_store_n(&devmem[i].reg.len, len, __ATOMIC_RELEASE);
    if (i == ndevmem)
        __atomic_store_n(&ndevmem, i + 1, __ATOMIC_RELEASE);
    devmem_live++;
    pthread_mutex_unlock(&devmem_lock);
    return 1;
}

static const char *hsa_err(hsa_status_t st)
{
    const char *m = NULL;
    if (!dsm_hsa.api.status_string ||
        dsm_hsa.api.status_string(st, &m) != HSA_STATUS_SUCCESS || !m)
        return "unknown status";
    return m;
}

static dsm_status_t hsa_heap_create_handle(size_t *size, void *handle,
                                           size_t *handle_len, void **base,
                                           char *why, size_t whylen)
{
    struct pool_walk w = {0};
    hsa_amd_ipc_memory_t h;
    hsa_status_t st;
    void *p = NULL;
    size_t n, gran, pg = (size_t)sysconf(_SC_PAGESIZE);

    if (!dsm_hsa.api.iterate_pools || !dsm_hsa.api.pool_get_info ||
        !dsm_hsa.api.pool_allocate || !dsm_hsa.api.pool_free ||
        !dsm_hsa.api.ipc_create || !dsm_hsa.api.ipc_attach ||
        !dsm_hsa.api.ipc_detach || !dsm_hsa.api.memory_copy) {
        snprintf(why, whylen,
                 "%s lacks hsa_amd_memory_pool_allocate, "
                 "hsa_amd_ipc_memory_* or hsa_memory_copy",
                 dsm_hsa.set.hsa_library && *dsm_hsa.set.hsa_library
                     ? dsm_hsa.set.hsa_library
                     : "libhsa-runtime64.so.1");
        return DSM_ERR_UNSUPPORTED;
    }
    if (*handle_len < sizeof(h)) {
        snprintf(why, whylen, "an IPC handle of %zu bytes does not fit",
                 sizeof(h));
        return DSM_ERR_UNSUPPORTED;
    }
    dsm_hsa.api.iterate_pools(dsm_hsa.gpu, pool_cb, &w);
    if (!w.found) {
        snprintf(why, whylen,
                 "GPU %d (%s) has no device-local coarse-grained memory "
                 "pool the runtime may allocate from", dsm_hsa.devindex,
                 dsm_hsa.name);
        return DSM_ERR_UNSUPPORTED;
    }
    gran = w.granule > pg ? w.granule : pg;
    n = (*size + gran - 1) / gran * gran;
    st = dsm_hsa.api.pool_allocate(w.pool, n, 0, &p);
    if (st != HSA_STATUS_SUCCESS) {
        dsm_log_error("hsa backend: hsa_amd_memory_pool_allocate of a "
                      "%zu-byte device heap on GPU %d failed (%s): lower "
                      "SHMEM_DEVICE_HEAP_SIZE, or 0 for none",
                      n, dsm_hsa.devindex, hsa_err(st));
        return DSM_ERR_NOMEM;
    }
    memset(&h, 0, sizeof(h));
    st = dsm_hsa.api.ipc_create(p, n, &h);
    if (st != HSA_STATUS_SUCCESS) {
        dsm_log_error("hsa backend: hsa_amd_ipc_memory_create of the "
                      "device heap failed (%s)", hsa_err(st));
        dsm_hsa.api.pool_free(p);
        return DSM_ERR_NO_DEVICE;
    }
    if (!devmem_add(p, n, 0)) {
        dsm_hsa.api.pool_free(p);
        return DSM_ERR_OVERFLOW;
    }
    memcpy(handle, &h, sizeof(h));
    *handle_len = sizeof(h);
    *size = n;
    *base = p;
    return DSM_OK;
}

static dsm_status_t hsa_heap_import_handle(const void *handle,
                                           size_t handle_len, size_t size,
                                           void **base)
{
    hsa_amd_ipc_memory_t h;
    hsa_status_t st;
    void *p = NULL;

    if (handle_len != sizeof(h))
        return DSM_ERR_INVAL;
    memcpy(&h, handle, sizeof(h));
    /* Mapped for our GPU: its engines then reach the peer's heap. */
    st = dsm_hsa.api.ipc_attach(&h, size, 1, &dsm_hsa.gpu, &p);
    if (st != HSA_STATUS_SUCCESS) {
        dsm_log_error("hsa backend: hsa_amd_ipc_memory_attach of a local "
                      "peer's %zu-byte device heap failed (%s)", size,
                      hsa_err(st));
        return DSM_ERR_NO_DEVICE;
    }
    if (!devmem_add(p, size, 1)) {
        dsm_hsa.api.ipc_detach(p);
        return DSM_ERR_OVERFLOW;
    }
    *base = p;
    return DSM_OK;
}

/* hsa_shut_down and the unload, once nothing of ours is mapped. */
static void api_release(void)
{
    dsm_hsa.api.shut_down();
    dsm_hsa_api_unload(&dsm_hsa.api);
    dsm_hsa.loaded = 0;
    dsm_hsa.closed_early = 0;
    __atomic_store_n(&ndevmem, 0, __ATOMIC_RELEASE);
}

void dsm_hsa_release(void)
{
    pthread_mutex_lock(&devmem_lock);
    if (devmem_live) {
        /* The device heap is released after the layer closes. */
        dsm_hsa.closed_early = 1;
        pthread_mutex_unlock(&devmem_lock);
        return;
    }
    pthread_mutex_unlock(&devmem_lock);
    api_release();
}

static void hsa_heap_unmap(void *base)
{
    devmem_t *d = devmem_find(base);
    int release;

    if (!d || d->reg.base != (uintptr_t)base)
        return;
    if (d->attached)
        dsm_hsa.api.ipc_detach(base);
    else
        dsm_hsa.api.pool_free(base);
    pthread_mutex_lock(&devmem_lock);
    __atomic_store_n(&d->reg.len, 0, __ATOMIC_RELEASE);
    release = --devmem_live == 0 && dsm_hsa.closed_early;
    pthread_mutex_unlock(&devmem_lock);
    if (release)
        api_release();
}

/* The device heaps from the table; anything else asked of ROCr, as
 * cuda asks the driver (private hipMalloc'ed buffers are device memory). */
int dsm_hsa_ptr_is_device(const void *p)
{
    uintptr_t b;
    size_t n;
    return devmem_find(p) != NULL || devptr_range(p, &b, &n);
}

static dsm_status_t hsa_copy_sync(void *dst, const void *src, size_t n)
{
    hsa_status_t st;
    if (!n)
        return DSM_OK;
    st = dsm_hsa.api.memory_copy(dst, src, n);
    if (st != HSA_STATUS_SUCCESS) {
        dsm_log_error("hsa backend: hsa_memory_copy of %zu bytes failed (%s)",
                      n, hsa_err(st));
        return DSM_ERR_NO_DEVICE;
    }
    return DSM_OK;
}

static int hsa_launch_counts(uint64_t *kernels, uint64_t *host_fns)
{
    (void)kernels;
    (void)host_fns;
    return 0;
}

static uint64_t hsa_gpu_view(const void *p)
{
    return dsm_hsa_ptr_is_device(p) ? (uint64_t)(uintptr_t)p : 0;
}

const dsm_sdma_gpu_ops_t dsm_hsa_gpu_ops = {
    .name = "hsa",
    .active = hsa_gpu_active,
    .device = hsa_gpu_device,
    .uid = NULL, /* no PCI identity: no sharing note (that is CUDA MPS's) */
    .register_host = hsa_register_host,
    .unregister_host_all = hsa_unregister_host_all,
    .heap_create_handle = hsa_heap_create_handle,
    .heap_import_handle = hsa_heap_import_handle,
    .heap_unmap = hsa_heap_unmap,
    .ptr_is_device = dsm_hsa_ptr_is_device,
    .copy_sync = hsa_copy_sync,
    .launch_counts = hsa_launch_counts,
    .gpu_view = hsa_gpu_view,
};
