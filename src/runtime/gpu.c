/*
 * GPU memory in the runtime: the device heap segment (DSM_SEG_DEVICE), the
 * host segments made reachable by the copy engines, shmemx_malloc_device
 * and the on-stream routines (shmemx_*_on_stream). The CUDA work itself is
 * the cuda backend's (src/sdma/cuda/devmem.h); this file only decides what
 * to ask for. Built in every configuration: without DSM_BUILD_CUDA, or on
 * a machine where the cuda backend did not open, there is no device heap,
 * shmemx_malloc_device returns NULL and the on-stream routines fail the
 * job with one line that says so.
 */
#include "rma.h"
#include "gpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <shmemx.h>
#include <pshmemx.h>

#ifdef DSM_BUILD_CUDA
#include "sdma/cuda/devmem.h"
#endif

static dsm_heap_t dev_heap;
static int dev_heap_ready;
/* The on-stream collectives' words: the top sync_bytes of every device
 * heap, DSM_TEAM_SLOTS slots of 2 phases x npes words (see "On-stream
 * collectives" below). Outside the allocator, zeroed at init. */
#ifdef DSM_BUILD_CUDA
static size_t sync_off, sync_bytes;

static size_t sync_slot_words(void)
{
    return 2 * (size_t)dsm_rt.npes;
}
#endif

dsm_heap_t *dsm_rt_device_heap(void)
{
    return dev_heap_ready ? &dev_heap : NULL;
}

void dsm_rt_device_pre_open(void)
{
#ifdef DSM_BUILD_CUDA
    const dsm_cuda_settings_t set = {
        .local_rank = dsm_rt.boot.node_rank,
        .device = dsm_env.cuda_device,
        .batch_min = dsm_env.cuda_batch_min,
        .prefer_ce = dsm_env.cuda_prefer_ce,
        .coalesce = dsm_env.cuda_coalesce,
        .merge = dsm_env.cuda_merge,
        .count_launches = dsm_env.cuda_count_launches,
    };
    dsm_cuda_configure(&set);
#endif
}

#ifdef DSM_BUILD_CUDA
typedef struct dev_info {
    uint64_t size;
    int32_t node_id;
    int32_t has;
} dev_info_t;

static dsm_status_t device_heap_init(void)
{
    const dsm_boot_ops_t *b = dsm_rt.boot_ops;
    dsm_seg_t *s = &dsm_rt.segs[DSM_SEG_DEVICE];
    size_t size = (size_t)dsm_env.device_heap_size;
    dev_info_t mine = {0}, theirs;
    dsm_status_t st;
    int fd = -1;
    void *base;

    s->peer = calloc((size_t)dsm_rt.npes, sizeof(char *));
    if (!s->peer)
        return DSM_ERR_NOMEM;
    s->fd = -1;
    s->kind = DSM_SEG_DEVICE;
    s->name = "device";
    st = dsm_cuda_heap_create(&size, &fd, &base);
    if (st != DSM_OK)
        return st;
    mine.size = size;
    mine.node_id = dsm_rt.boot.node_id;
    mine.has = 1;
    if ((st = b->put("devinfo", &mine, sizeof(mine))) != DSM_OK ||
        (st = b->put_fd("seg.device", fd)) != DSM_OK ||
        (st = b->fence()) != DSM_OK) {
        close(fd);
        return st;
    }
    close(fd); /* the bootstrap keeps its own duplicate */
    s->base = base;
    s->size = size;
    s->map_size = size;
    s->peer[dsm_rt.me] = base;
    for (int pe = 0; pe < dsm_rt.npes; pe++) {
        size_t len = sizeof(theirs);
        int pfd;
        if (pe == dsm_rt.me)
            continue;
        if ((st = b->get(pe, "devinfo", &theirs, &len)) != DSM_OK)
            return st;
        if (theirs.node_id != mine.node_id)
            continue;
        if (theirs.size != mine.size) {
            dsm_log_error("shmem_init: PE %d has a %llu-byte device heap, "
                          "this PE %llu: SHMEM_DEVICE_HEAP_SIZE must be the "
                          "same on every PE", pe,
                          (unsigned long long)theirs.size,
                          (unsigned long long)mine.size);
            return DSM_ERR_INVAL;
        }
        if ((st = b->get_fd(pe, "seg.device", &pfd)) != DSM_OK)
            return st;
        st = dsm_cuda_heap_import(pfd, size, &base);
        close(pfd);
        if (st != DSM_OK)
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
    {
        void *z = calloc(1, sync_bytes);
        if (!z)
            return DSM_ERR_NOMEM;
        st = dsm_cuda_copy_sync(s->base + sync_off, z, sync_bytes);
        free(z);
        if (st != DSM_OK)
            return st;
    }
    if (dsm_heap_init(&dev_heap, sync_off))
        return DSM_ERR_NOMEM;
    dev_heap_ready = 1;
    dsm_rt.nsegs = DSM_MAX(dsm_rt.nsegs, DSM_SEG_DEVICE + 1);
    return DSM_OK;
}
#endif

dsm_status_t dsm_rt_device_init(void)
{
#ifdef DSM_BUILD_CUDA
    if (!dsm_cuda_active())
        return DSM_OK;
    /* Host segments, ours and the local peers', become reachable by our
     * GPU's copy engines and stream memory operations: host<->device RMA
     * then runs without staging, and signal/trigger words in them can be
     * written and waited for on a stream. */
    for (int i = 0; i < dsm_rt.nsegs && i < DSM_SEG_DEVICE; i++) {
        const dsm_seg_t *s = &dsm_rt.segs[i];
        for (int pe = 0; pe < dsm_rt.npes; pe++)
            if (s->peer && s->peer[pe] && s->map_size)
                dsm_cuda_register_host(s->peer[pe], s->map_size);
    }
    if (!dsm_env.device_heap_size)
        return DSM_OK;
    dsm_status_t st = device_heap_init();
    if (st != DSM_OK)
        return st;
    dsm_debug("init: device heap of %zu bytes on GPU %d",
              dsm_rt.segs[DSM_SEG_DEVICE].size, dsm_cuda_device());
#endif
    return DSM_OK;
}

void dsm_rt_device_fini(void)
{
#ifdef DSM_BUILD_CUDA
    uint64_t kernels = 0, host_fns = 0;
    if (dsm_cuda_launch_counts(&kernels, &host_fns)) {
        /* SHMEM_CUDA_COUNT_LAUNCHES=1 (cu.h): test/gpu/run-on-device.sh
         * checks this line. */
        fprintf(stderr, "dmashmem: PE %d: cuda launches by the library: "
                "kernels %llu, host functions %llu\n", dsm_rt.me,
                (unsigned long long)kernels, (unsigned long long)host_fns);
        fflush(stderr);
    }
    if (dsm_cuda_active())
        dsm_cuda_unregister_host_all();
#endif
    dsm_rt_device_seg_fini(&dsm_rt.segs[DSM_SEG_DEVICE]);
}

void dsm_rt_device_seg_fini(dsm_seg_t *s)
{
#ifdef DSM_BUILD_CUDA
    for (int pe = 0; pe < dsm_rt.npes; pe++)
        if (s->peer && s->peer[pe])
            dsm_cuda_heap_unmap(s->peer[pe]);
#endif
    if (dev_heap_ready) {
        dsm_heap_fini(&dev_heap);
        dev_heap_ready = 0;
    }
    free(s->peer);
    memset(s, 0, sizeof(*s));
}

int dsm_rt_private_device(const void *p)
{
#ifdef DSM_BUILD_CUDA
    return dsm_cuda_ptr_is_device(p);
#else
    (void)p;
    return 0;
#endif
}

uint64_t *dsm_rt_device_sync_word(int pe, int slot, int phase, int idx)
{
#ifdef DSM_BUILD_CUDA
    const dsm_seg_t *g = &dsm_rt.segs[DSM_SEG_DEVICE];
    if (!dev_heap_ready || !g->peer || pe < 0 || pe >= dsm_rt.npes ||
        !g->peer[pe] || slot < 0 || slot >= DSM_TEAM_SLOTS)
        return NULL;
    return (uint64_t *)(void *)(g->peer[pe] + sync_off) +
           (size_t)slot * sync_slot_words() +
           (size_t)phase * (size_t)dsm_rt.npes + (size_t)idx;
#else
    (void)pe, (void)slot, (void)phase, (void)idx;
    return NULL;
#endif
}

void dsm_rt_device_sync_clear(int slot)
{
#ifdef DSM_BUILD_CUDA
    uint64_t *w = dsm_rt_device_sync_word(dsm_rt.me, slot, 0, 0);
    size_t n = sync_slot_words() * sizeof(uint64_t);
    void *z = w ? calloc(1, n) : NULL;
    if (!w)
        return;
    if (!z || dsm_cuda_copy_sync(w, z, n) != DSM_OK)
        dsm_rt_fatal("shmemx_req_free", "cannot reset the device "
                     "synchronisation words of team slot %d", slot);
    free(z);
#else
    (void)slot;
#endif
}

/* ------------------------------------------------------------ API */

void *pshmemx_malloc_device(size_t size)
{
    return pshmem_malloc_with_hints(size, SHMEMX_MALLOC_DEVICE);
}
DSM_WEAKX(malloc_device)

#ifdef DSM_BUILD_CUDA
static void stream_check(const char *routine, dsm_status_t st)
{
    if (DSM_UNLIKELY(st != DSM_OK))
        dsm_rt_fatal(routine, "%s", st == DSM_ERR_UNSUPPORTED
                                        ? "the GPU cannot reach this word "
                                          "(signal words must be symmetric; "
                                          "SIGNAL_ADD needs device memory)"
                                        : "the CUDA call failed (above)");
}
#endif

static void need_gpu(const char *routine)
{
    DSM_CHECK_INIT(routine);
#ifdef DSM_BUILD_CUDA
    if (dsm_cuda_active())
        return;
#endif
    dsm_rt_fatal(routine, "needs the cuda sdma backend (this PE runs '%s'; "
                 "no GPU or driver found, or not built with CUDA)",
                 dsm_sdma_backend_name(dsm_rt.sdma));
}

void pshmemx_putmem_on_stream(void *dest, const void *source, size_t nelems,
                              int pe, void *stream)
{
    const char *routine = "shmemx_putmem_on_stream";
    need_gpu(routine);
    DSM_CHECK_PE(routine, pe);
    if (!nelems)
        return;
    char *r = dsm_rt_xlate(routine, dest, nelems, pe);
#ifdef DSM_BUILD_CUDA
    stream_check(routine, dsm_cuda_memcpy_on_stream(r, source, nelems, stream));
#else
    (void)r, (void)source, (void)stream;
#endif
}
DSM_WEAKX(putmem_on_stream)

void pshmemx_getmem_on_stream(void *dest, const void *source, size_t nelems,
                              int pe, void *stream)
{
    const char *routine = "shmemx_getmem_on_stream";
    need_gpu(routine);
    DSM_CHECK_PE(routine, pe);
    if (!nelems)
        return;
    const char *r = dsm_rt_xlate(routine, source, nelems, pe);
#ifdef DSM_BUILD_CUDA
    stream_check(routine, dsm_cuda_memcpy_on_stream(dest, r, nelems, stream));
#else
    (void)r, (void)dest, (void)stream;
#endif
}
DSM_WEAKX(getmem_on_stream)

void pshmemx_putmem_signal_on_stream(void *dest, const void *source,
                                     size_t nelems, uint64_t *sig_addr,
                                     uint64_t signal, int sig_op, int pe,
                                     void *stream)
{
    const char *routine = "shmemx_putmem_signal_on_stream";
    need_gpu(routine);
    DSM_CHECK_PE(routine, pe);
    if (sig_op != SHMEM_SIGNAL_SET && sig_op != SHMEM_SIGNAL_ADD)
        dsm_rt_fatal(routine, "invalid sig_op %d", sig_op);
    uint64_t *sig = (uint64_t *)(void *)dsm_rt_xlate(routine, sig_addr,
                                                    sizeof(uint64_t), pe);
#ifdef DSM_BUILD_CUDA
    if (nelems) {
        char *r = dsm_rt_xlate(routine, dest, nelems, pe);
        stream_check(routine,
                     dsm_cuda_memcpy_on_stream(r, source, nelems, stream));
    }
    /* Stream order puts the signal after the data; the write carries a
     * memory barrier (CU_STREAM_WRITE_VALUE_DEFAULT). */
    stream_check(routine,
                 dsm_cuda_signal_on_stream(sig, signal,
                                           sig_op == SHMEM_SIGNAL_ADD, stream));
#else
    (void)sig, (void)dest, (void)source, (void)nelems, (void)signal,
        (void)stream;
#endif
}
DSM_WEAKX(putmem_signal_on_stream)

void pshmemx_signal_wait_until_on_stream(uint64_t *sig_addr, int cmp,
                                         uint64_t cmp_value, void *stream)
{
    const char *routine = "shmemx_signal_wait_until_on_stream";
    need_gpu(routine);
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
#ifdef DSM_BUILD_CUDA
    stream_check(routine, dsm_cuda_wait_on_stream(w, cmp_value, eq, stream));
#else
    (void)w, (void)eq, (void)stream;
#endif
}
DSM_WEAKX(signal_wait_until_on_stream)

void pshmemx_quiet_on_stream(void *stream)
{
    const char *routine = "shmemx_quiet_on_stream";
    need_gpu(routine);
#ifdef DSM_BUILD_CUDA
    /* On-stream operations are ordered by the stream itself; what remains
     * is what went through the engines' queues (put_nbi and friends). */
    stream_check(routine, dsm_cuda_quiet_on_stream(dsm_rt.sdma, stream));
#else
    (void)stream;
#endif
}
DSM_WEAKX(quiet_on_stream)

/* ------------------------------------------------------------ on-stream
 * collectives
 *
 * shmemx_barrier_on_stream, shmemx_fcollectmem_on_stream and
 * shmemx_alltoallmem_on_stream enqueue on the caller's stream only:
 * stream memory operations for the synchronisation, copies for the data,
 * no kernel and no host synchronisation, so a call can be captured into a
 * CUDA graph and the graph replayed any number of times.
 *
 * Protocol: every call is two exchanges ("phases") around its copies:
 *   phase 0 (ready):    store 1 into word [0][me] of every peer, wait until
 *                       my words [0][m] of every peer m are 1, store 0 into
 *                       them;
 *   copies:             my blocks into the peers' dest (and my own);
 *   phase 1 (arrival):  the same on words [1][*].
 * A barrier is the two phases without copies. The words are device memory
 * (the top of each PE's device heap, one group of 2 x npes words per team
 * slot), written by the peers' streams over NVLink and waited for by the
 * owner's stream, so no word crosses PCIe or passes through a host thread.
 *
 * Why not the monotonic pairwise counts of the host collectives (coll.h):
 * a count is a value chosen when the call is made; a captured call would
 * bake the value of its capture into the graph, and every replay would
 * signal and expect the same k. Counting on the GPU needs an atomic add,
 * i.e. a kernel (the copy engines and stream memory operations have none).
 * So the values are constants and each word is reset by its owner: every
 * call enqueues exactly the same operations, whether run directly or
 * replayed, and direct calls and replays mix freely. The reset is safe
 * because the two phases alternate: a peer's next store into my word
 * [p][peer] happens in its next call's phase p, after it passed phase 1-p,
 * which needs my store of phase 1-p, which my stream issues after my reset
 * of [p][peer]. For the same reason a call never uses a single phase.
 * Every word is 0 again when a call completes, so a slot is clean for the
 * next team that gets it. Like the host collectives, calls on one team must
 * be issued in the same order on every member, and not on two streams at
 * once.
 */

#ifdef DSM_BUILD_CUDA
/* Member m's synchronisation words of team slot slot, as mapped here. */
static uint64_t *sync_words(const char *routine, int pe, int slot)
{
    const dsm_seg_t *g = &dsm_rt.segs[DSM_SEG_DEVICE];
    if (!dev_heap_ready)
        dsm_rt_fatal(routine, "needs a device heap (SHMEM_DEVICE_HEAP_SIZE "
                     "is 0)");
    if (!g->peer[pe])
        dsm_rt_fatal(routine, "PE %d is not on this PE's node: on-stream "
                     "collectives need every member's device heap mapped",
                     pe);
    return (uint64_t *)(void *)(g->peer[pe] + sync_off) +
           (size_t)slot * sync_slot_words();
}

/* One phase over the team (see above). */
static void stream_phase(const char *routine, const dsm_stream_team_t *t,
                         int phase, void *stream)
{
    const size_t npes = (size_t)dsm_rt.npes, np = (size_t)t->size - 1;
    uint64_t **out, **in;
    uint64_t *mine;

    if (!np)
        return;
    out = malloc(2 * np * sizeof(*out));
    if (!out)
        dsm_rt_fatal(routine, "out of memory for %zu peers", np);
    in = out + np;
    mine = sync_words(routine, dsm_rt.me, t->slot) + (size_t)phase * npes;
    for (size_t i = 0; i < np; i++) {
        int m = (t->me + 1 + (int)i) % t->size;
        out[i] = sync_words(routine, t->pes[m], t->slot) +
                 (size_t)phase * npes + (size_t)t->me;
        in[i] = mine + m;
    }
    stream_check(routine, dsm_cuda_exchange_on_stream(out, in, np, stream));
    free(out);
}

/* The copies of one fcollect (a2a = 0) or alltoall (a2a = 1). */
static void stream_copies(const char *routine, const dsm_stream_team_t *t,
                          char *dest, const char *src, size_t nbytes, int a2a,
                          void *stream)
{
    const size_t n = (size_t)t->size;
    void **dst = malloc(n * (sizeof(void *) * 2 + sizeof(size_t)));
    const void **srcs;
    size_t *len, k = 0;
    char *mine = dest + (size_t)t->me * nbytes;

    if (!dst)
        dsm_rt_fatal(routine, "out of memory for %zu copies", n);
    srcs = (const void **)(dst + n);
    len = (size_t *)(void *)(srcs + n);
    /* Peers first, in rotation order, then my own block. */
    for (size_t i = 1; i <= n; i++) {
        int m = (t->me + (int)i) % t->size;
        const char *s = a2a ? src + (size_t)m * nbytes : src;
        if (m == t->me) {
            if (s == mine)
                continue; /* in place */
            dst[k] = mine;
        } else {
            dst[k] = dsm_rt_xlate(routine, mine, nbytes, t->pes[m]);
        }
        srcs[k] = s;
        len[k++] = nbytes;
    }
    stream_check(routine,
                 dsm_cuda_copies_on_stream(dst, srcs, len, k, stream));
    free(dst);
}
#endif

int pshmemx_barrier_on_stream(shmem_team_t team, void *stream)
{
    const char *routine = "shmemx_barrier_on_stream";
    dsm_stream_team_t t;
    need_gpu(routine);
    dsm_coll_stream_team(team, routine, &t);
#ifdef DSM_BUILD_CUDA
    stream_phase(routine, &t, 0, stream);
    stream_phase(routine, &t, 1, stream);
#else
    (void)stream;
#endif
    return 0;
}
DSM_WEAKX(barrier_on_stream)

static void stream_coll(const char *routine, shmem_team_t team, void *dest,
                        const void *source, size_t nbytes, int a2a,
                        void *stream)
{
    dsm_stream_team_t t;
    need_gpu(routine);
    dsm_coll_stream_team(team, routine, &t);
    if (!nbytes)
        return;
    const size_t total = nbytes * (size_t)t.size;
    const char *s = source, *d = dest;
    const size_t sspan = a2a ? total : nbytes;
    if (!dest || !source)
        dsm_rt_fatal(routine, "%s is NULL", dest ? "source" : "dest");
    /* dest must be symmetric (checked by the translation below, here for
     * the whole span) and, except for an in-place fcollect, apart from
     * source. */
    (void)dsm_rt_xlate(routine, dest, total, dsm_rt.me);
    if (!(!a2a && s == d + (size_t)t.me * nbytes) && s < d + total &&
        d < s + sspan)
        dsm_rt_fatal(routine, "source %p overlaps dest %p (%zu bytes per PE)",
                     source, dest, nbytes);
#ifdef DSM_BUILD_CUDA
    stream_phase(routine, &t, 0, stream);
    stream_copies(routine, &t, dest, source, nbytes, a2a, stream);
    stream_phase(routine, &t, 1, stream);
#else
    (void)stream;
#endif
}

int pshmemx_fcollectmem_on_stream(shmem_team_t team, void *dest,
                                  const void *source, size_t nelems,
                                  void *stream)
{
    stream_coll("shmemx_fcollectmem_on_stream", team, dest, source, nelems, 0,
                stream);
    return 0;
}
DSM_WEAKX(fcollectmem_on_stream)

int pshmemx_alltoallmem_on_stream(shmem_team_t team, void *dest,
                                  const void *source, size_t nelems,
                                  void *stream)
{
    stream_coll("shmemx_alltoallmem_on_stream", team, dest, source, nelems, 1,
                stream);
    return 0;
}
DSM_WEAKX(alltoallmem_on_stream)
