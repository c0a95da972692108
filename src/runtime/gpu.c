/*
 * GPU memory in the runtime: the device heap segment (DSM_SEG_DEVICE), the
 * host segments made reachable by the GPU's engines, shmemx_malloc_device
 * and the on-stream RMA routines (shmemx_*_on_stream; the on-stream
 * collectives are in coll/stream.c). The GPU work itself is the open
 * backend's, reached through the sdma layer's GPU table (sdma.h,
 * dsm_sdma_gpu): this file only decides what to ask for and knows no
 * backend. Where no GPU backend is open (cpu), there is no device heap,
 * shmemx_malloc_device returns NULL and the on-stream routines fail the
 * job with one line that says so.
 */
#include "rma.h"
#include "gpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <shmemx.h>
#include <pshmemx.h>


static dsm_heap_t dev_heap;
static int dev_heap_ready;
/* The on-stream collectives' words: the top sync_bytes of every device
 * heap, DSM_TEAM_SLOTS slots of 2 phases x npes words (see "On-stream
 * collectives" below). Outside the allocator, zeroed at init. */
static size_t sync_off, sync_bytes;
/* The LL form of those collectives (coll/stream.c) just below: a page of
 * parity words, one per team slot, then per slot ll_areas areas (one per
 * peer of a team of at most DSM_SDMA_SMALL_COLL_PEERS + 1) of two buffers
 * of dsm_rt_device_ll_stride() 16-byte lines. Zeroed at init; ll_max 0: none. */
static size_t ll_off, ll_max, ll_areas;
#define LL_LINE 16
#define LL_PARITY_BYTES 4096
_Static_assert(DSM_TEAM_SLOTS * 8 <= LL_PARITY_BYTES, "a parity word a slot");

static size_t sync_slot_words(void)
{
    return 2 * (size_t)dsm_rt.npes;
}

/* The open backend's GPU memory, or NULL. Kept from init: finalize
 * releases the device heap and the registrations after the sdma layer is
 * closed. */
static const dsm_sdma_gpu_ops_t *gpu_at_init;

static const dsm_sdma_gpu_ops_t *gpu(void)
{
    return dsm_rt.sdma ? dsm_sdma_gpu(dsm_rt.sdma) : gpu_at_init;
}

dsm_heap_t *dsm_rt_device_heap(void)
{
    return dev_heap_ready ? &dev_heap : NULL;
}

void dsm_rt_device_pre_open(void)
{
    const dsm_sdma_gpu_settings_t set = {
        .local_rank = dsm_rt.boot.node_rank,
        .device = dsm_env.cuda_device,
        .batch_min = dsm_env.cuda_batch_min,
        .prefer_ce = dsm_env.cuda_prefer_ce,
        .coalesce = dsm_env.cuda_coalesce,
        .merge = dsm_env.cuda_merge,
        .graph_copies = dsm_env.cuda_graph_copies,
        .count_launches = dsm_env.cuda_count_launches,
        .hsa_library = dsm_env.hsa_library,
        .hsa_max_queues = dsm_env.hsa_max_queues,
        .hsa_sdma_engine = dsm_env.hsa_sdma_engine,
    };
    dsm_sdma_gpu_configure(&set);
}
typedef struct dev_info {
    uint64_t size;
    uint64_t ll_max; /* SHMEM_STREAM_LL_MAX */
    int32_t node_id;
    int32_t has;
} dev_info_t;

/* Why the open GPU backend gave no device heap (heap_create_handle
 * refused), for shmem_malloc_with_hints' line; empty otherwise. */
static char dev_heap_why[256];

const char *dsm_rt_device_heap_why(void)
{
    return dev_heap_why[0] ? dev_heap_why : NULL;
}

/* Create this PE's device heap and publish what local peers need to map
 * it: an fd (passed with SCM_RIGHTS, cuda) or an opaque handle blob (put
 * in the key-value store, hsa). *has = 0 when the backend refused with
 * DSM_ERR_UNSUPPORTED (no device heap on this GPU; why kept). */
static dsm_status_t device_heap_publish(const dsm_sdma_gpu_ops_t *g,
                                        size_t *size, void **base, int *has)
{
    const dsm_boot_ops_t *b = dsm_rt.boot_ops;
    dsm_status_t st;

    *has = 0;
    if (g->heap_create_handle) {
        unsigned char h[DSM_SDMA_HEAP_HANDLE_MAX];
        size_t hlen = sizeof(h);
        st = g->heap_create_handle(size, h, &hlen, base, dev_heap_why,
                                   sizeof(dev_heap_why));
        if (st == DSM_ERR_UNSUPPORTED) {
            dsm_debug("init: no device heap: %s", dev_heap_why);
            return DSM_OK;
        }
        dev_heap_why[0] = '\0';
        if (st != DSM_OK)
            return st;
        *has = 1;
        return b->put("seg.device.h", h, hlen);
    }
    int fd = -1;
    st = g->heap_create(size, &fd, base);
    if (st != DSM_OK)
        return st;
    *has = 1;
    st = b->put_fd("seg.device", fd);
    close(fd); /* the bootstrap keeps its own duplicate */
    return st;
}

/* Map local peer pe's device heap (published by device_heap_publish). */
static dsm_status_t device_heap_import(const dsm_sdma_gpu_ops_t *g, int pe,
                                       size_t size, void **base)
{
    const dsm_boot_ops_t *b = dsm_rt.boot_ops;
    dsm_status_t st;

    if (g->heap_create_handle) {
        unsigned char h[DSM_SDMA_HEAP_HANDLE_MAX];
        size_t hlen = sizeof(h);
        if ((st = b->get(pe, "seg.device.h", h, &hlen)) != DSM_OK)
            return st;
        return g->heap_import_handle(h, hlen, size, base);
    }
    int pfd;
    if ((st = b->get_fd(pe, "seg.device", &pfd)) != DSM_OK)
        return st;
    st = g->heap_import(pfd, size, base);
    close(pfd);
    return st;
}

static dsm_status_t device_heap_init(const dsm_sdma_gpu_ops_t *g)
{
    const dsm_boot_ops_t *b = dsm_rt.boot_ops;
    dsm_seg_t *s = &dsm_rt.segs[DSM_SEG_DEVICE];
    size_t size = (size_t)dsm_env.device_heap_size;
    dev_info_t mine = {0}, theirs;
    dsm_status_t st;
    void *base = NULL;
    int has;

    s->peer = calloc((size_t)dsm_rt.npes, sizeof(char *));
    if (!s->peer)
        return DSM_ERR_NOMEM;
    s->fd = -1;
    s->kind = DSM_SEG_DEVICE;
    s->name = "device";
    if ((st = device_heap_publish(g, &size, &base, &has)) != DSM_OK)
        return st;
    mine.size = has ? size : 0;
    mine.ll_max = (uint64_t)dsm_env.stream_ll_max;
    mine.node_id = dsm_rt.boot.node_id;
    mine.has = has;
    /* Every PE publishes, with or without a heap, so that none waits for
     * a key that never comes. */
    if ((st = b->put("devinfo", &mine, sizeof(mine))) != DSM_OK ||
        (st = b->fence()) != DSM_OK)
        return st;
    if (!has) {
        free(s->peer);
        memset(s, 0, sizeof(*s));
        return DSM_OK;
    }
    s->base = base;
    s->size = size;
    s->map_size = size;
    s->peer[dsm_rt.me] = base;
    for (int pe = 0; pe < dsm_rt.npes; pe++) {
        size_t len = sizeof(theirs);
        if (pe == dsm_rt.me)
            continue;
        if ((st = b->get(pe, "devinfo", &theirs, &len)) != DSM_OK)
            return st;
        if (theirs.node_id != mine.node_id)
            continue;
        if (theirs.size != mine.size) {
            dsm_log_error("shmem_init: PE %d has a %llu-byte device heap, "
                          "this PE %llu: SHMEM_DEVICE_HEAP_SIZE must be the "
                          "same on every PE%s", pe,
                          (unsigned long long)theirs.size,
                          (unsigned long long)mine.size,
                          theirs.has ? "" : " (that PE's GPU gave none)");
            return DSM_ERR_INVAL;
        }
        if (theirs.ll_max != mine.ll_max) {
            dsm_log_error("shmem_init: PE %d has SHMEM_STREAM_LL_MAX=%llu, "
                          "this PE %llu: it must be the same on every PE",
                          pe, (unsigned long long)theirs.ll_max,
                          (unsigned long long)mine.ll_max);
            return DSM_ERR_INVAL;
        }
        if ((st = device_heap_import(g, pe, size, &base)) != DSM_OK)
            return st;
        s->peer[pe] = base;
    }
    /* The stream collectives' words at the top, zeroed before the init
     * barrier that every PE passes before it can signal one. */
    sync_bytes = DSM_ALIGN_UP(DSM_TEAM_SLOTS * sync_slot_words() *
                                  sizeof(uint64_t), (size_t)4096);
    if (sync_bytes >= size / 2) {
        dsm_log_error("shmem_init: a %zu-byte device heap cannot hold the "
                      "%zu bytes of stream synchronisation words of %d PEs "
                      "(raise SHMEM_DEVICE_HEAP_SIZE)", size, sync_bytes,
                      dsm_rt.npes);
        return DSM_ERR_INVAL;
    }
    sync_off = size - sync_bytes;
    /* The LL area where the heap keeps at least half (the same decision on
     * every PE: the heap size and SHMEM_STREAM_LL_MAX are). */
    ll_areas = g->ll_coll_on_stream ? (size_t)DSM_MIN(
                                          dsm_rt.npes - 1,
                                          DSM_SDMA_SMALL_COLL_PEERS)
                                    : 0;
    ll_max = ll_areas ? (size_t)dsm_env.stream_ll_max : 0;
    size_t ll_bytes = ll_max ? DSM_ALIGN_UP(LL_PARITY_BYTES +
                                                DSM_TEAM_SLOTS * ll_areas * 2 *
                                                    dsm_rt_device_ll_stride() *
                                                    LL_LINE,
                                            (size_t)4096)
                             : 0;
    if (ll_max && sync_bytes + ll_bytes >= size / 2) {
        dsm_debug("init: no LL form of the on-stream collectives: its %zu "
                  "bytes do not fit a %zu-byte device heap "
                  "(SHMEM_STREAM_LL_MAX)", ll_bytes, size);
        ll_max = 0;
        ll_bytes = 0;
    }
    ll_off = sync_off - ll_bytes;
    {
        void *z = calloc(1, size - ll_off);
        if (!z)
            return DSM_ERR_NOMEM;
        st = g->copy_sync(s->base + ll_off, z, size - ll_off);
        free(z);
        if (st != DSM_OK)
            return st;
    }
    if (dsm_heap_init(&dev_heap, ll_off))
        return DSM_ERR_NOMEM;
    dev_heap_ready = 1;
    dsm_rt.nsegs = DSM_MAX(dsm_rt.nsegs, DSM_SEG_DEVICE + 1);
    return DSM_OK;
}

dsm_status_t dsm_rt_device_init(void)
{
    const dsm_sdma_gpu_ops_t *g = gpu();
    gpu_at_init = g;
    if (!g)
        return DSM_OK;
    /* Published for the local peers (dsm_rt_device_sharing). */
    if (dsm_rt.ctrl && g->uid)
        dsm_rt.ctrl->gpu_uid = g->uid() | DSM_CTRL_GPU_SET;
    /* Host segments, ours and the local peers', become reachable by our
     * GPU's copy engines and stream memory operations: host<->device RMA
     * then runs without staging, and signal/trigger words in them can be
     * written and waited for on a stream. */
    for (int i = 0; i < dsm_rt.nsegs && i < DSM_SEG_DEVICE; i++) {
        const dsm_seg_t *s = &dsm_rt.segs[i];
        for (int pe = 0; pe < dsm_rt.npes; pe++)
            if (s->peer && s->peer[pe] && s->map_size)
                g->register_host(s->peer[pe], s->map_size);
    }
    if (!dsm_env.device_heap_size)
        return DSM_OK;
    dsm_status_t st = device_heap_init(g);
    if (st != DSM_OK || !dev_heap_ready)
        return st;
    dsm_debug("init: device heap of %zu bytes on GPU %d (%s)",
              dsm_rt.segs[DSM_SEG_DEVICE].size, g->device(), g->name);
    return DSM_OK;
}

void dsm_rt_device_fini(void)
{
    const dsm_sdma_gpu_ops_t *g = gpu();
    uint64_t kernels = 0, host_fns = 0;
    if (g && g->launch_counts(&kernels, &host_fns)) {
        /* SHMEM_CUDA_COUNT_LAUNCHES=1 (cu.h): test/gpu/run-on-device.sh
         * checks this line. */
        fprintf(stderr, "dmashmem: PE %d: cuda launches by the library: "
                "kernels %llu, host functions %llu\n", dsm_rt.me,
                (unsigned long long)kernels, (unsigned long long)host_fns);
        fflush(stderr);
    }
    if (g)
        g->unregister_host_all();
    dsm_rt_device_seg_fini(&dsm_rt.segs[DSM_SEG_DEVICE]);
    gpu_at_init = NULL;
}

void dsm_rt_device_seg_fini(dsm_seg_t *s)
{
    const dsm_sdma_gpu_ops_t *g = gpu();
    for (int pe = 0; g && pe < dsm_rt.npes; pe++)
        if (s->peer && s->peer[pe])
            g->heap_unmap(s->peer[pe]);
    if (dev_heap_ready) {
        dsm_heap_fini(&dev_heap);
        dev_heap_ready = 0;
    }
    free(s->peer);
    memset(s, 0, sizeof(*s));
}

int dsm_rt_private_device(const void *p)
{
    const dsm_sdma_gpu_ops_t *g = gpu();
    return g && g->ptr_is_device(p);
}

uint64_t *dsm_rt_device_sync_word(int pe, int slot, int phase, int idx)
{
    const dsm_seg_t *g = &dsm_rt.segs[DSM_SEG_DEVICE];
    if (!dev_heap_ready || !g->peer || pe < 0 || pe >= dsm_rt.npes ||
        !g->peer[pe] || slot < 0 || slot >= DSM_TEAM_SLOTS)
        return NULL;
    return (uint64_t *)(void *)(g->peer[pe] + sync_off) +
           (size_t)slot * sync_slot_words() +
           (size_t)phase * (size_t)dsm_rt.npes + (size_t)idx;
}

void dsm_rt_device_sync_clear(int slot)
{
    uint64_t *w = dsm_rt_device_sync_word(dsm_rt.me, slot, 0, 0);
    size_t n = sync_slot_words() * sizeof(uint64_t);
    void *z = w ? calloc(1, n) : NULL;
    if (!w)
        return;
    if (!z || gpu()->copy_sync(w, z, n) != DSM_OK)
        dsm_rt_fatal("shmemx_req_free", "cannot reset the device "
                     "synchronisation words of team slot %d", slot);
    free(z);
}

size_t dsm_rt_device_ll_max(void)
{
    return dev_heap_ready ? ll_max : 0;
}

size_t dsm_rt_device_ll_stride(void)
{
    return (ll_max + 7) / 8;
}

void *dsm_rt_device_ll_area(int pe, int slot, int area)
{
    const dsm_seg_t *g = &dsm_rt.segs[DSM_SEG_DEVICE];
    if (!dsm_rt_device_ll_max() || !g->peer || pe < 0 || pe >= dsm_rt.npes ||
        !g->peer[pe] || slot < 0 || slot >= DSM_TEAM_SLOTS || area < 0 ||
        (size_t)area >= ll_areas)
        return NULL;
    return g->peer[pe] + ll_off + LL_PARITY_BYTES +
           (((size_t)slot * ll_areas + (size_t)area) * 2 *
            dsm_rt_device_ll_stride()) *
               LL_LINE;
}

uint64_t *dsm_rt_device_ll_parity(int slot)
{
    const dsm_seg_t *g = &dsm_rt.segs[DSM_SEG_DEVICE];
    if (!dsm_rt_device_ll_max() || slot < 0 || slot >= DSM_TEAM_SLOTS)
        return NULL;
    return (uint64_t *)(void *)(g->peer[dsm_rt.me] + ll_off) + slot;
}

void dsm_rt_device_ll_reset(int slot)
{
    static const uint64_t zero;
    uint64_t *w = dsm_rt_device_ll_parity(slot);
    if (w && gpu()->copy_sync(w, &zero, sizeof(zero)) != DSM_OK)
        dsm_rt_fatal("shmem_team_destroy", "cannot reset the LL parity word "
                     "of team slot %d", slot);
}

/* ------------------------------------------------------------ sharing */

/* Several processes on one GPU without CUDA MPS time-slice it: every
 * exchange between them waits for a context switch (~290 us per collective
 * on an H200, whatever its size; 21 us under MPS). The MPS control daemon
 * is found by its pipe, as the CUDA driver finds it at cuInit: the
 * "control" entry of CUDA_MPS_PIPE_DIRECTORY (default /tmp/nvidia-mps). */
static char sharing_line[256];

static int mps_daemon(const char **dir)
{
    const char *d = getenv("CUDA_MPS_PIPE_DIRECTORY");
    char path[512];
    struct stat st;
    *dir = d && *d ? d : "/tmp/nvidia-mps";
    snprintf(path, sizeof(path), "%s/control", *dir);
    return stat(path, &st) == 0;
}

void dsm_rt_device_sharing(void)
{
    const dsm_sdma_gpu_ops_t *g = gpu();
    uint64_t mine = dsm_rt.ctrl ? dsm_rt.ctrl->gpu_uid : 0;
    int n = 0, lowest = -1;
    const char *dir;

    sharing_line[0] = '\0';
    if (!g || !(mine & DSM_CTRL_GPU_SET))
        return;
    for (int pe = 0; pe < dsm_rt.npes; pe++) {
        const dsm_ctrl_t *c = dsm_rt.peer_ctrl[pe];
        if (c && __atomic_load_n(&c->gpu_uid, __ATOMIC_ACQUIRE) == mine) {
            if (lowest < 0)
                lowest = pe;
            n++;
        }
    }
    if (n < 2)
        return;
    uint64_t u = mine & ~DSM_CTRL_GPU_SET;
    int mps = mps_daemon(&dir);
    snprintf(sharing_line, sizeof(sharing_line),
             "GPU %d (PCI %04x:%02x:%02x) shared by %d PEs of this node, %s "
             "(%s/control)", g->device(), (unsigned)(u >> 32),
             (unsigned)((u >> 16) & 0xffff), (unsigned)((u >> 8) & 0xff), n,
             mps ? "MPS daemon found" : "no MPS daemon", dir);
    if (!mps && dsm_rt.me == lowest)
        fprintf(stderr,
                "dmashmem: note: %d PEs share GPU %d without CUDA MPS: the "
                "GPU time-slices between them and every exchange waits for "
                "a context switch; start nvidia-cuda-mps-control -d "
                "(README, \"Several PEs on one GPU\")\n",
                n, g->device());
}

int dsm_rt_gpu_shared_with(int pe)
{
    uint64_t mine = dsm_rt.ctrl ? dsm_rt.ctrl->gpu_uid : 0;
    const dsm_ctrl_t *c;
    if (pe == dsm_rt.me || pe < 0 || pe >= dsm_rt.npes ||
        !(mine & DSM_CTRL_GPU_SET) || !(c = dsm_rt.peer_ctrl[pe]))
        return 0;
    return __atomic_load_n(&c->gpu_uid, __ATOMIC_ACQUIRE) == mine;
}

const char *dsm_rt_device_sharing_info(void)
{
    return sharing_line[0] ? sharing_line : NULL;
}

/* ------------------------------------------------------------ API */

void *pshmemx_malloc_device(size_t size)
{
    return pshmem_malloc_with_hints(size, SHMEMX_MALLOC_DEVICE);
}
DSM_WEAKX(malloc_device)

void dsm_rt_stream_check(const char *routine, dsm_status_t st)
{
    if (DSM_UNLIKELY(st != DSM_OK))
        dsm_rt_fatal(routine, "%s", st == DSM_ERR_UNSUPPORTED
                                        ? "the GPU cannot reach this word "
                                          "(signal words must be symmetric; "
                                          "SIGNAL_ADD needs device memory)"
                                        : "the GPU driver call failed (above)");
}

const dsm_sdma_gpu_ops_t *dsm_rt_need_gpu(const char *routine)
{
    DSM_CHECK_INIT(routine);
    const dsm_sdma_gpu_ops_t *g = gpu();
    if (DSM_UNLIKELY(!g))
        dsm_rt_fatal(routine, "needs a GPU sdma backend (this PE runs '%s'; "
                     "no GPU or driver found, or not built with CUDA)",
                     dsm_sdma_backend_name(dsm_rt.sdma));
    return g;
}

const dsm_sdma_gpu_ops_t *dsm_rt_need_stream(const char *routine)
{
    const dsm_sdma_gpu_ops_t *g = dsm_rt_need_gpu(routine);
    /* The hsa backend has a GPU (a device heap) but no streams. */
    if (DSM_UNLIKELY(!g->memcpy_on_stream))
        dsm_rt_fatal(routine, "the on-stream routines need the cuda "
                     "backend (this PE runs '%s', which has no stream "
                     "operations)", dsm_sdma_backend_name(dsm_rt.sdma));
    return g;
}

void pshmemx_putmem_on_stream(void *dest, const void *source, size_t nelems,
                              int pe, void *stream)
{
    const char *routine = "shmemx_putmem_on_stream";
    const dsm_sdma_gpu_ops_t *g = dsm_rt_need_stream(routine);
    DSM_CHECK_PE(routine, pe);
    if (!nelems)
        return;
    char *r = dsm_rt_xlate(routine, dest, nelems, pe);
    dsm_rt_stream_check(routine, g->memcpy_on_stream(r, source, nelems, stream));
}
DSM_WEAKX(putmem_on_stream)

void pshmemx_getmem_on_stream(void *dest, const void *source, size_t nelems,
                              int pe, void *stream)
{
    const char *routine = "shmemx_getmem_on_stream";
    const dsm_sdma_gpu_ops_t *g = dsm_rt_need_stream(routine);
    DSM_CHECK_PE(routine, pe);
    if (!nelems)
        return;
    const char *r = dsm_rt_xlate(routine, source, nelems, pe);
    dsm_rt_stream_check(routine, g->memcpy_on_stream(dest, r, nelems, stream));
}
DSM_WEAKX(getmem_on_stream)

void pshmemx_putmem_signal_on_stream(void *dest, const void *source,
                                     size_t nelems, uint64_t *sig_addr,
                                     uint64_t signal, int sig_op, int pe,
                                     void *stream)
{
    const char *routine = "shmemx_putmem_signal_on_stream";
    const dsm_sdma_gpu_ops_t *g = dsm_rt_need_stream(routine);
    DSM_CHECK_PE(routine, pe);
    if (sig_op != SHMEM_SIGNAL_SET && sig_op != SHMEM_SIGNAL_ADD)
        dsm_rt_fatal(routine, "invalid sig_op %d", sig_op);
    uint64_t *sig = (uint64_t *)(void *)dsm_rt_xlate(routine, sig_addr,
                                                    sizeof(uint64_t), pe);
    if (nelems) {
        char *r = dsm_rt_xlate(routine, dest, nelems, pe);
        dsm_rt_stream_check(routine,
                     g->memcpy_on_stream(r, source, nelems, stream));
    }
    /* Stream order puts the signal after the data; the write carries a
     * memory barrier (CU_STREAM_WRITE_VALUE_DEFAULT). */
    dsm_rt_stream_check(routine,
                 g->signal_on_stream(sig, signal,
                                           sig_op == SHMEM_SIGNAL_ADD, stream));
}
DSM_WEAKX(putmem_signal_on_stream)

void pshmemx_signal_wait_until_on_stream(uint64_t *sig_addr, int cmp,
                                         uint64_t cmp_value, void *stream)
{
    const char *routine = "shmemx_signal_wait_until_on_stream";
    const dsm_sdma_gpu_ops_t *g = dsm_rt_need_stream(routine);
    uint64_t *w = (uint64_t *)(void *)dsm_rt_xlate(routine, sig_addr,
                                                  sizeof(uint64_t), dsm_rt.me);
    int eq;
    /* What a stream can wait for: >= and ==. */
    switch (cmp) {
    case SHMEM_CMP_GE:
        eq = 0;
        break;
    case SHMEM_CMP_GT:
        if (cmp_value == UINT64_MAX)
            dsm_rt_fatal(routine, "SHMEM_CMP_GT UINT64_MAX never holds");
        cmp_value++;
        eq = 0;
        break;
    case SHMEM_CMP_EQ:
        eq = 1;
        break;
    default:
        dsm_rt_fatal(routine, "comparison %d: a stream can wait only for "
                     "SHMEM_CMP_GE, SHMEM_CMP_GT or SHMEM_CMP_EQ", cmp);
    }
    dsm_rt_stream_check(routine, g->wait_on_stream(w, cmp_value, eq, stream));
}
DSM_WEAKX(signal_wait_until_on_stream)

void pshmemx_quiet_on_stream(void *stream)
{
    const char *routine = "shmemx_quiet_on_stream";
    const dsm_sdma_gpu_ops_t *g = dsm_rt_need_stream(routine);
    /* On-stream operations are ordered by the stream itself; what remains
     * is what went through the engines' queues (put_nbi and friends). */
    dsm_rt_stream_check(routine, g->quiet_on_stream(dsm_rt.sdma, stream));
}
DSM_WEAKX(quiet_on_stream)

