/*
 * The on-stream collectives: shmemx_barrier_on_stream,
 * shmemx_fcollectmem_on_stream, shmemx_alltoallmem_on_stream. They enqueue
 * on the caller's stream through the sdma layer's GPU table (sdma.h) and
 * use the team's stream synchronisation words, which runtime/gpu.c keeps at
 * the top of the device heap. Kept apart from the host collectives: nothing
 * here touches the team's host-side signal counts (the protocol below says
 * why).
 */
#include "coll/coll.h"
#include "runtime/gpu.h"

#include <stdlib.h>

#include <shmemx.h>
#include <pshmemx.h>

/* ------------------------------------------------------------ on-stream
 * collectives
 *
 * shmemx_barrier_on_stream, shmemx_fcollectmem_on_stream and
 * shmemx_alltoallmem_on_stream enqueue on the caller's stream only:
 * stream memory operations for the synchronisation, copies for the data,
 * no kernel and no host synchronisation, so a call can be captured into a
 * CUDA graph and the graph replayed any number of times.
 *
 * Protocol (blocks up to SHMEM_STREAM_LL_MAX take the LL form instead,
 * below stream_small): every call is two exchanges ("phases") around its
 * copies:
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

/* Word [phase][idx] of PE pe's synchronisation words of team slot slot,
 * as mapped here (runtime/gpu.c keeps them at the top of the device heap). */
static uint64_t *sync_word(const char *routine, int pe, int slot, int phase,
                           int idx)
{
    uint64_t *w = dsm_rt_device_sync_word(pe, slot, phase, idx);
    if (!w) {
        if (!dsm_rt_device_heap())
            dsm_rt_fatal(routine, "needs a device heap "
                         "(SHMEM_DEVICE_HEAP_SIZE is 0)");
        dsm_rt_fatal(routine, "PE %d is not on this PE's node: on-stream "
                     "collectives need every member's device heap mapped",
                     pe);
    }
    return w;
}

/* The words of one phase, peers in rotation order (t->size - 1 each):
 * out[i] the peer's word for me, in[i] mine for the peer. */
static void phase_words(const char *routine, const dsm_team_t *t, int phase,
                        uint64_t **out, uint64_t **in)
{
    for (int i = 0; i < t->size - 1; i++) {
        int m = (t->my_idx + 1 + i) % t->size;
        out[i] = sync_word(routine, t->pes[m], t->slot, phase, t->my_idx);
        in[i] = sync_word(routine, dsm_rt.me, t->slot, phase, m);
    }
}

/* One phase over the team (see above). */
static void stream_phase(const char *routine, const dsm_sdma_gpu_ops_t *g,
                         const dsm_team_t *t, int phase, void *stream)
{
    const size_t np = (size_t)t->size - 1;
    uint64_t **out, **in;

    if (!np)
        return;
    out = malloc(2 * np * sizeof(*out));
    if (!out)
        dsm_rt_fatal(routine, "out of memory for %zu peers", np);
    in = out + np;
    phase_words(routine, t, phase, out, in);
    dsm_rt_stream_check(routine, g->exchange_on_stream(out, in, np, stream));
    free(out);
}

/* The blocks this PE sends in one fcollect (a2a = 0) or alltoall (a2a =
 * 1): peers first, in rotation order, then my own (none in place), into
 * dst/srcs/len (t->size entries each); returns how many. */
static size_t coll_blocks(const char *routine, const dsm_team_t *t,
                          char *dest, const char *src, size_t nbytes, int a2a,
                          void **dst, const void **srcs, size_t *len)
{
    char *mine = dest + (size_t)t->my_idx * nbytes;
    size_t k = 0;
    for (size_t i = 1; i <= (size_t)t->size; i++) {
        int m = (t->my_idx + (int)i) % t->size;
        const char *s = a2a ? src + (size_t)m * nbytes : src;
        if (m == t->my_idx) {
            if (s == mine)
                continue; /* in place */
            dst[k] = mine;
        } else {
            dst[k] = dsm_rt_xlate(routine, mine, nbytes, t->pes[m]);
        }
        srcs[k] = s;
        len[k++] = nbytes;
    }
    return k;
}

/* The copies of one fcollect (a2a = 0) or alltoall (a2a = 1). */
static void stream_copies(const char *routine, const dsm_sdma_gpu_ops_t *g,
                          const dsm_team_t *t,
                          char *dest, const char *src, size_t nbytes, int a2a,
                          void *stream)
{
    const size_t n = (size_t)t->size;
    void **dst = malloc(n * (sizeof(void *) * 2 + sizeof(size_t)));
    const void **srcs;
    size_t *len, k;

    if (!dst)
        dsm_rt_fatal(routine, "out of memory for %zu copies", n);
    srcs = (const void **)(dst + n);
    len = (size_t *)(void *)(srcs + n);
    k = coll_blocks(routine, t, dest, src, nbytes, a2a, dst, srcs, len);
    dsm_rt_stream_check(routine,
                 g->copies_on_stream(dst, srcs, len, k, stream));
    free(dst);
}

/* Small blocks (SHMEM_STREAM_STORE_MAX): the whole call as one kernel of
 * one CTA, the same two phases on the same words with the blocks stored
 * between them (kernels.cu). 0 where the backend cannot (too many peers,
 * memory its kernel cannot reach, no kernel): the engine path follows. */
static int stream_small(const char *routine, const dsm_sdma_gpu_ops_t *g,
                        const dsm_team_t *t, char *dest, const char *src,
                        size_t nbytes, int a2a, void *stream)
{
    const size_t np = (size_t)t->size - 1;
    uint64_t *words[4 * DSM_SDMA_SMALL_COLL_PEERS];
    void *dst[DSM_SDMA_SMALL_COLL_PEERS + 1];
    const void *srcs[DSM_SDMA_SMALL_COLL_PEERS + 1];
    size_t len[DSM_SDMA_SMALL_COLL_PEERS + 1], k;
    int pe[DSM_SDMA_SMALL_COLL_PEERS];
    dsm_status_t st;

    /* Alone, one copy on the engines is cheaper than a launch (H100: 2.0
     * against 4.8 us per call queued, 1 KiB). */
    if (!g->small_coll_on_stream || !np || np > DSM_SDMA_SMALL_COLL_PEERS)
        return 0;
    int same_gpu = 1;
    for (size_t i = 0; i < np; i++) {
        pe[i] = t->pes[(t->my_idx + 1 + (int)i) % t->size];
        same_gpu &= dsm_rt_gpu_shared_with(pe[i]);
    }
    for (int ph = 0; ph < 2; ph++)
        phase_words(routine, t, ph, words + ph * np, words + (2 + ph) * np);
    k = coll_blocks(routine, t, dest, src, nbytes, a2a, dst, srcs, len);
    const dsm_sdma_small_coll_t c = {
        .out = words, .in = words + 2 * np, .np = np,
        .dst = dst, .src = srcs, .len = len, .nc = k,
        .pe = pe, .me = dsm_rt.me, .routine = a2a, .gpu_scope = same_gpu,
        .stall_ns = (uint64_t)dsm_env.dev_stall_timeout * 1000000000ull,
    };
    st = g->small_coll_on_stream(&c, stream);
    if (st == DSM_ERR_UNSUPPORTED)
        return 0;
    dsm_rt_stream_check(routine, st);
    return 1;
}

/* ------------------------------------------------------------ LL form
 *
 * Blocks up to SHMEM_STREAM_LL_MAX (runtime/gpu.h) on a team of 2 ..
 * DSM_SDMA_SMALL_COLL_PEERS + 1 members whose dest is in the device heap
 * (a choice every member makes alike: the sizes, the team and the heap
 * are the same on all) go in one launch without synchronisation phases:
 * each 8 bytes of a block travel to the receiver's scratch as a 16-byte
 * line {lo, 1, hi, 1}, so a line that reads its two flags holds its data
 * (kernels.cu, dsm_ll_coll), and each PE copies what it received into its
 * own dest. Nothing else ever writes into a PE's dest, so a call need not
 * wait for its peers to enter it: what the two-phase form pays a second
 * exchange and its fences for. The scratch: per team slot and PE, one
 * area per sender (by rotation distance), two buffers each, chosen by the
 * slot's parity word that the kernel flips (graph replays stay right);
 * lines are zeroed by their reader, the parity by shmem_team_destroy.
 * A source the kernel cannot read (pageable) is first copied into dest
 * on the stream (the kernel reads all it sends before it writes dest). */
static int stream_ll(const char *routine, const dsm_sdma_gpu_ops_t *g,
                     dsm_team_t *t, char *dest, const char *src,
                     size_t nbytes, int a2a, void *stream)
{
    const size_t np = (size_t)t->size - 1;
    const dsm_seg_t *ds = &dsm_rt.segs[DSM_SEG_DEVICE];
    void *out[DSM_SDMA_SMALL_COLL_PEERS], *in[DSM_SDMA_SMALL_COLL_PEERS];
    void *dst[DSM_SDMA_SMALL_COLL_PEERS];
    const void *srcs[DSM_SDMA_SMALL_COLL_PEERS];
    int pe[DSM_SDMA_SMALL_COLL_PEERS];
    const size_t total = nbytes * (size_t)t->size;
    char *mine = dest + (size_t)t->my_idx * nbytes;

    if (!g->ll_coll_on_stream || !np || np > DSM_SDMA_SMALL_COLL_PEERS ||
        nbytes > dsm_rt_device_ll_max() ||
        (uintptr_t)dest - (uintptr_t)ds->base >= ds->size)
        return 0;
    for (int staged = 0;; staged = 1) {
        for (size_t i = 0; i < np; i++) {
            int m = (t->my_idx + 1 + (int)i) % t->size;
            pe[i] = t->pes[m];
            /* My area at m is the one of rotation distance size - 2 - i
             * there; m's at me that of distance i. */
            out[i] = dsm_rt_device_ll_area(pe[i], t->slot,
                                           t->size - 2 - (int)i);
            in[i] = dsm_rt_device_ll_area(dsm_rt.me, t->slot, (int)i);
            if (!out[i] || !in[i])
                dsm_rt_fatal(routine, "PE %d is not on this PE's node: "
                             "on-stream collectives need every member's "
                             "device heap mapped", pe[i]);
            srcs[i] = staged ? (a2a ? dest + (size_t)m * nbytes : mine)
                             : (a2a ? src + (size_t)m * nbytes : src);
            dst[i] = dest + (size_t)m * nbytes;
        }
        const char *own = staged ? NULL
                          : a2a  ? src + (size_t)t->my_idx * nbytes
                                 : src;
        const dsm_sdma_ll_coll_t c = {
            .out = out, .in = in, .src = srcs, .dst = dst,
            .own_src = own, .own_dst = own == mine || !own ? NULL : mine,
            .parity = dsm_rt_device_ll_parity(t->slot),
            .np = np, .nbytes = nbytes,
            .stride = dsm_rt_device_ll_stride(),
            .pe = pe, .me = dsm_rt.me, .routine = a2a,
            .stall_ns = (uint64_t)dsm_env.dev_stall_timeout * 1000000000ull,
        };
        dsm_status_t st = g->ll_coll_on_stream(&c, stream);
        if (st == DSM_ERR_UNSUPPORTED && !staged) {
            /* A source the kernel cannot read: into dest first. */
            void *d = a2a ? (void *)dest : (void *)mine;
            const void *s = src;
            size_t len = a2a ? total : nbytes;
            dsm_rt_stream_check(routine,
                                g->copies_on_stream(&d, &s, &len, 1, stream));
            continue;
        }
        /* The peers take this form too: no other is left. */
        if (st != DSM_OK)
            dsm_rt_fatal(routine, "the LL-form kernel cannot run here (%s); "
                         "SHMEM_STREAM_LL_MAX=0 on every PE turns it off",
                         st == DSM_ERR_UNSUPPORTED ? "a block it cannot reach"
                                                   : "the launch failed, above");
        t->ll_used = 1;
        return 1;
    }
}

int pshmemx_barrier_on_stream(shmem_team_t team, void *stream)
{
    const char *routine = "shmemx_barrier_on_stream";
    const dsm_sdma_gpu_ops_t *g = dsm_rt_need_stream(routine);
    dsm_team_t *t = dsm_team_check(team, routine);
    stream_phase(routine, g, t, 0, stream);
    stream_phase(routine, g, t, 1, stream);
    return 0;
}
DSM_WEAKX(barrier_on_stream)

static void stream_coll(const char *routine, shmem_team_t team, void *dest,
                        const void *source, size_t nbytes, int a2a,
                        void *stream)
{
    const dsm_sdma_gpu_ops_t *g = dsm_rt_need_stream(routine);
    dsm_team_t *t = dsm_team_check(team, routine);
    if (!nbytes)
        return;
    const size_t total = nbytes * (size_t)t->size;
    const char *s = source, *d = dest;
    const size_t sspan = a2a ? total : nbytes;
    if (!dest || !source)
        dsm_rt_fatal(routine, "%s is NULL", dest ? "source" : "dest");
    /* dest must be symmetric (checked by the translation below, here for
     * the whole span) and, except for an in-place fcollect, apart from
     * source. */
    dsm_rt_check_alloc(routine, "dest", dest, total);
    dsm_rt_check_alloc(routine, "source", source, sspan);
    (void)dsm_rt_xlate(routine, dest, total, dsm_rt.me);
    if (!(!a2a && s == d + (size_t)t->my_idx * nbytes) && s < d + total &&
        d < s + sspan)
        dsm_rt_fatal(routine, "source %p overlaps dest %p (%zu bytes per PE)",
                     source, dest, nbytes);
    if (stream_ll(routine, g, t, dest, source, nbytes, a2a, stream))
        return;
    if (nbytes <= dsm_env.stream_store_max &&
        stream_small(routine, g, t, dest, source, nbytes, a2a, stream))
        return;
    stream_phase(routine, g, t, 0, stream);
    stream_copies(routine, g, t, dest, source, nbytes, a2a, stream);
    stream_phase(routine, g, t, 1, stream);
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
