/*
 * Persistent collectives (shmemx.h): shmemx_fcollectmem_init and
 * shmemx_alltoallmem_init build a plan once; the request keeps
 * SHMEM_PRELAUNCH_DEPTH instances posted ahead as chains that start with
 * WAIT(trigger >= k), so shmemx_req_start is one store to the trigger and
 * shmemx_req_wait waits for the instance, then posts the next one. Kernel
 * handles (shmemx_req_device) are the device API's (src/devapi/kreq.c),
 * reached through the operations it registers; the request itself is in
 * persistent_int.h.
 *
 * Each request owns:
 *  - a private copy of the team (a split with the same members), so its
 *    pairwise signal words and counts are its own: instances posted ahead
 *    reserve their signal values at post time, which would collide with any
 *    other collective of the user's team running in between;
 *  - its own chain queues: an unfired gated chain blocks its queue, and a
 *    queue shared with blocking collectives would deadlock them.
 * The queues come back to a free list at shmemx_req_free (the sdma layer
 * cannot delete a queue before close). Unfired instances are cancelled:
 * their commands become NOPs, then the trigger opens the gates. Backends
 * that cannot rewrite posted work run them instead (a real collective of
 * the same buffers, which every PE does alike at free). Finalize does the
 * same for requests never freed (dsm_coll_persist_fini), so no engine is
 * left waiting on a word finalize takes away. Init refuses a request one
 * of whose instances does not fit in an engine queue (it would wait for
 * space behind its own unfired trigger).
 *
 * On GPU buffers with the cuda backend (plan.dsync) one cross-GPU
 * exchange per instance is left (SHMEM_PERSISTENT_SYNC, chain.h
 * DSM_DSYNC_*; default host, measured fastest: persistent fcollect 1 KiB
 * on the H200 host 17.1 us, dev 27.4, the removed hready 22.3-23.7 and
 * the removed team protocol 40.2-42.8): shmemx_req_start stores the instance's
 * ready value into each peer's host word for me (dsm_persist_fire(): my dest is free
 * and my source filled from then on), the chain waits for my trigger and
 * for the peers' ready values on the stream, copies, and its engine writes
 * the arrival into each peer's host word, which the peer's CPU checks
 * after its queue's completion. Ready 2k-1 and arrival 2k share the
 * pair's word (monotonic: the peer stores 2k+1 only after its instance k,
 * whose arrival write came first in its stream, completed). `dev` is the
 * earlier protocol (ready and arrival through device words, both waited
 * for on the stream), kept because trigger-mode kernel handles over other
 * GPUs need it (shmemx_dev(3)); the PE zeroes its device words at free.
 * The next instance is posted when the wait begins (one more instance
 * slot), so the driver calls overlap the running instance.
 *
 * A team with a member on this PE's own GPU posts nothing ahead (r->lazy):
 * start fires the instance, then posts it, so its gate is open when the
 * engines reach it (why nothing ahead: at the posting loop in req_init).
 *
 * A team with members on other nodes has no chain to post (its copies are
 * network puts of the direct path): start only marks the request active
 * and wait runs the collective on the request's team.
 */
#include "coll/persistent_int.h"
#include "common/words.h"
#include "runtime/gpu.h"
#include "runtime/stall.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* ------------------------------------------------------------ kernels */

/* Until the device API registers its part (at load): no kernel handles. */
static void kernel_none_fatal(struct dsm_coll_req *r)
{
    dsm_rt_fatal(r->routine, "request %p has a kernel handle, but this "
                 "library has no device API", (void *)r);
}
static int kernel_none_alloc(struct dsm_coll_req *r)
{
    (void)r;
    return -1;
}
static void kernel_none_free(struct dsm_coll_req *r)
{
    (void)r; /* nothing was made */
}
static void kernel_none_trigger(struct dsm_coll_req *r, uint64_t k)
{
    (void)k;
    kernel_none_fatal(r);
}
static int kernel_none_start(struct dsm_coll_req *r)
{
    kernel_none_fatal(r);
    return -1;
}
static const dsm_coll_kernel_ops_t kernel_none = {
    .size = sizeof(dsm_coll_kernel_ops_t),
    .kh_alloc = kernel_none_alloc,
    .kh_free = kernel_none_free,
    .kd_trigger = kernel_none_trigger,
    .kstart = kernel_none_start,
    .kwait = kernel_none_fatal,
    .kmode_end = kernel_none_fatal,
};
static const dsm_coll_kernel_ops_t *kops = &kernel_none;

void dsm_coll_kernel_register(const dsm_coll_kernel_ops_t *ops)
{
    if (ops && ops->size == sizeof(*ops))
        kops = ops;
}

/* ------------------------------------------------------------ queues */

/* Free chain queues, kept for the next request: the sdma layer cannot
 * delete a queue before close and its table is bounded, so a queue left
 * out of this list would be lost to the process. The list grows as
 * needed. */
static pthread_mutex_t fq_lock = PTHREAD_MUTEX_INITIALIZER;
static dsm_sdma_queue_t **fq;
static int fq_n, fq_cap;
static dsm_sdma_t *fq_sdma;
static int q_held; /* queues held by live requests (for the message) */

/* Live requests, for finalize (under fq_lock). */
static struct dsm_coll_req *live;
static int nlive;

static void live_add(struct dsm_coll_req *r)
{
    pthread_mutex_lock(&fq_lock);
    r->prev = NULL;
    r->next = live;
    if (live)
        live->prev = r;
    live = r;
    nlive++;
    pthread_mutex_unlock(&fq_lock);
}

static void live_remove(struct dsm_coll_req *r)
{
    pthread_mutex_lock(&fq_lock);
    if (r->prev)
        r->prev->next = r->next;
    else
        live = r->next;
    if (r->next)
        r->next->prev = r->prev;
    nlive--;
    pthread_mutex_unlock(&fq_lock);
}

static void fq_reset_locked(void)
{
    if (fq_sdma != dsm_rt.sdma) {
        fq_n = 0; /* the old layer freed its queues at close */
        q_held = 0;
        fq_sdma = dsm_rt.sdma;
    }
}

dsm_sdma_queue_t *dsm_persist_queue_get(int i, const char *routine)
{
    dsm_sdma_queue_t *q = NULL;

    pthread_mutex_lock(&fq_lock);
    fq_reset_locked();
    if (fq_n)
        q = fq[--fq_n];
    q_held++;
    int held = q_held - 1, reqs = nlive;
    pthread_mutex_unlock(&fq_lock);
    if (!q) {
        dsm_status_t st =
            dsm_sdma_queue_create(dsm_rt.sdma, i % dsm_rt.nengines, &q);
        if (st == DSM_ERR_OVERFLOW)
            dsm_rt_fatal(routine, "no engine queue left: %d persistent "
                         "requests alive hold %d queues, and a process has "
                         "at most %d (the runtime's own included; fewer "
                         "where the backend caps them, as the line before "
                         "says); free requests no longer used", reqs, held,
                         dsm_sdma_max_queues());
        if (st != DSM_OK)
            dsm_rt_fatal(routine, "cannot create a DMA chain queue: %s",
                         dsm_status_str(st));
    }
    return q;
}

static void queue_put(dsm_sdma_queue_t *q)
{
    pthread_mutex_lock(&fq_lock);
    if (fq_sdma == dsm_rt.sdma) {
        if (fq_n == fq_cap) {
            int cap = fq_cap ? 2 * fq_cap : 64;
            dsm_sdma_queue_t **n = realloc(fq, (size_t)cap * sizeof(*n));
            if (!n) {
                pthread_mutex_unlock(&fq_lock);
                dsm_rt_fatal("shmemx_req_free", "out of memory for the "
                             "free queue list");
            }
            fq = n;
            fq_cap = cap;
        }
        fq[fq_n++] = q;
        q_held--;
    }
    pthread_mutex_unlock(&fq_lock);
}

/* ------------------------------------------------------------ instances */

/* How long an instance posted at its start waits for the peers' readies
 * on the CPU before it is posted with WAITs for them: a few driver calls'
 * worth (the peers of a back-to-back loop start within microseconds). */
#define DSM_PERSIST_READY_SPIN_NS 20000

/* Post instance posted + 1; fire_first: start it before posting it (a
 * request posted at its start, pshmemx_req_start). */
static void post(struct dsm_coll_req *r, int fire_first)
{
    uint64_t k = ++r->posted;
    dsm_inst_t *in = &r->inst[k % (uint64_t)r->nslots];

    dsm_plan_sigvals(&r->plan);
    if (fire_first) {
        dsm_chain_inst_vals(&r->plan, in); /* the ready values it sends */
        dsm_persist_fire(r, k);
        /* The peers that started too have stored their readies: with
         * those in, the instance's WAITs are open and the backend posts
         * none (cuda: its copies may then be a cached graph). */
        if (r->plan.dsync == DSM_DSYNC_HOST)
            dsm_chain_await_readies(&r->plan, DSM_PERSIST_READY_SPIN_NS);
    }
    dsm_chain_post_gated(&r->plan, r->q, r->dtrig ? r->dtrig : r->trigger, k,
                         in);
}

void dsm_persist_post_next(struct dsm_coll_req *r)
{
    post(r, 0);
}

/* Open r's gates up to k: the trigger word its chains wait on. */
static void gate(struct dsm_coll_req *r, uint64_t k)
{
    if (r->dtrig)
        kops->kd_trigger(r, k);
    else
        dsm_sdma_trigger(dsm_rt.sdma, r->trigger, k, &dsm_rt.ctrl->wake);
}

/* Device signal words for this request (see the top of the file): GPU
 * buffers, a pcpy/b2b chain, every member's device heap mapped here.
 * Fills the parts' words. Decided alike on every member (same buffers'
 * kinds, same team, same variant). */
static int use_dsync(struct dsm_coll_req *r, void *dest, const void *src,
                     size_t nbytes)
{
    dsm_plan_t *p = &r->plan;
    int i, mode = DSM_DSYNC_HOST;

    /* host: measured fastest (persistent fcollect 1 KiB on H200: dev
     * 27.4 us, host 17.1; docs/PERFORMANCE.md). The environment table
     * allows only host and dev. */
    if (!strcmp(dsm_env.persistent_sync, "dev"))
        mode = DSM_DSYNC_DEV;
    if (!nbytes ||
        (p->algo != DSM_ALGO_PCPY && p->algo != DSM_ALGO_B2B) ||
        !dsm_rt_private_device(dest) || !dsm_rt_private_device(src))
        return 0;
    const int me = r->t->my_idx, slot = r->t->slot;
    for (i = 0; i < p->np; i++) {
        dsm_part_t *x = &p->peer[i];
        int pe = dsm_team_pe(r->t, x->m);
        x->rw_out = dsm_rt_device_sync_word(pe, slot, 0, me);
        x->aw_out = dsm_rt_device_sync_word(pe, slot, 1, me);
        x->rw_in = dsm_rt_device_sync_word(dsm_rt.me, slot, 0, x->m);
        x->aw_in = dsm_rt_device_sync_word(dsm_rt.me, slot, 1, x->m);
        if (!x->rw_out || !x->aw_out || !x->rw_in || !x->aw_in)
            return 0;
        if (mode != DSM_DSYNC_DEV && !dsm_coll_pe_mapped(pe))
            mode = DSM_DSYNC_DEV; /* not reached: r->at_wait teams run at wait */
    }
    return mode;
}

/* Start instance k: (HOST) my ready value into every peer's host
 * word for me, which its engines wait for, then my trigger. In that
 * order: under HOST my chain's arrival SIGNAL goes into the same word,
 * and with the trigger first my engine could deliver the arrival (the
 * peer's ready already there) before this CPU stored the smaller ready,
 * which would then overwrite it and leave the peer waiting for ever
 * (seen with the hsa backend over the engine model, whose engine thread
 * starts within microseconds). */
void dsm_persist_fire(struct dsm_coll_req *r, uint64_t k)
{
    if (r->plan.dsync == DSM_DSYNC_HOST) {
        const dsm_inst_t *in = &r->inst[k % (uint64_t)r->nslots];
        for (int i = 0; i < r->plan.np; i++)
            __atomic_store_n(
                dsm_team_peer_sig(r->t, DSM_CHAN_DMA, r->plan.peer[i].m),
                in->rdy[i], __ATOMIC_RELEASE);
    }
    gate(r, k);
}

/* Instances posted ahead on CUDA streams hold up some work of the program
 * until they run (shmemx_req(3), NOTES; a hang is hard to trace back to
 * here): PE 0 says so once per job, and a PE ended while such requests
 * live says so too (runtime/stall.h). Counted where the posting happens,
 * once per request (a team of one posts nothing at init, but does for a
 * kernel handle in TRIGGER mode), uncounted at its release. */
void dsm_persist_ahead(struct dsm_coll_req *r)
{
    static int said;
    if (!(dsm_sdma_caps(dsm_rt.sdma) & DSM_SDMA_CAP_GATES_HOLD))
        return;
    if (!r->ahead) {
        r->ahead = 1;
        dsm_stall_posted_ahead(1);
    }
    if (dsm_rt.me || __atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
        return;
    fprintf(stderr,
            "dmashmem: note: %s keeps instances posted ahead on CUDA streams, "
            "waiting for their start: " DSM_STALL_AHEAD_HOLDS
            "; copy with cudaMemcpyAsync on non-blocking streams "
            "(shmemx_req(3), NOTES)\n",
            r->routine);
}

static int req_init(shmem_team_t team, void *dest, const void *source,
                    size_t nbytes, shmemx_req_t *out, dsm_coll_kind_t kind,
                    const char *routine)
{
    dsm_team_t *ut = dsm_team_check(team, routine);
    struct dsm_coll_req *r;
    shmem_team_t dup = SHMEM_TEAM_INVALID;
    const int n = ut->size, me = ut->my_idx;
    dsm_plan_t *p;
    int i;

    dsm_coll_tune_init();
    if (!out)
        dsm_rt_fatal(routine, "req is NULL");
    /* Every instance writes n blocks to dest (and reads n from source for
     * alltoall): checked once, here, against the allocations. */
    dsm_rt_check_alloc(routine, "dest", dest, nbytes * (size_t)n);
    dsm_rt_check_alloc(routine, "source", source,
                       kind == DSM_COLL_A2A ? nbytes * (size_t)n : nbytes);
    *out = NULL;
    if (posix_memalign((void **)&r, DSM_CACHELINE, sizeof(*r)))
        return -1;
    memset(r, 0, sizeof(*r));
    r->trigger = dsm_words_alloc(1);
    if (!r->trigger) {
        free(r);
        return -1;
    }
    r->routine = routine;
    r->magic = REQ_MAGIC;
    pthread_mutex_init(&r->plock, NULL);
    p = &r->plan;
    p->kind = kind;
    p->routine = routine;
    p->np = n - 1;
    if (n > 1) {
        /* Collective over the team, as the init is. */
        if (pshmem_team_split_strided(team, 0, 1, n, NULL, 0, &dup) ||
            dup == SHMEM_TEAM_INVALID) {
            dsm_debug("%s: no team slot left for the request's signals",
                      routine);
            dsm_words_free(r->trigger, 1);
            free(r);
            return -1;
        }
        r->t = (dsm_team_t *)dup;
    }
    p->t = r->t;

    /* Blocks as fcollect/alltoall lay them out. */
    const char *src = source;
    char *d = dest;
    const size_t sblk = kind == DSM_COLL_A2A ? nbytes : 0;
    p->local = (dsm_part_t){.m = me, .src = src + (size_t)me * sblk,
                            .dst = d + (size_t)me * nbytes, .len = nbytes,
                            .count = 1};
    if (kind == DSM_COLL_AG && p->local.src == p->local.dst)
        p->local.len = 0; /* in place */
    p->peer = calloc((size_t)DSM_MAX(p->np, 1), sizeof(dsm_part_t));
    /* SHMEM_PRELAUNCH_DEPTH=0: nothing posted ahead, each instance at its
     * start (as for a team sharing this PE's GPU, below). */
    r->depth = dsm_coll_tune.prelaunch_depth;
    r->lazy = r->depth == 0;
    if (r->lazy)
        r->depth = 1;
    r->nslots = r->depth + 1;
    r->inst = calloc((size_t)r->nslots, sizeof(dsm_inst_t));
    r->arr = calloc((size_t)r->nslots * (size_t)DSM_MAX(p->np, 1),
                    sizeof(uint64_t));
    r->rdy = calloc((size_t)r->nslots * (size_t)DSM_MAX(p->np, 1),
                    sizeof(uint64_t));
    if (!p->peer || !r->inst || !r->arr || !r->rdy)
        dsm_rt_fatal(routine, "out of memory for a persistent request");
    for (i = 0; i < r->nslots; i++) {
        r->inst[i].arr = r->arr + (size_t)i * (size_t)DSM_MAX(p->np, 1);
        r->inst[i].rdy = r->rdy + (size_t)i * (size_t)DSM_MAX(p->np, 1);
    }
    if (n == 1) {
        live_add(r);
        *out = r;
        return 0;
    }
    /* Always a chain where the team is mapped here (the direct path has
     * nothing to post ahead); a team that spans nodes runs the direct
     * path, as a blocking collective at each wait (host memory only). */
    p->algo = dsm_coll_pick(r->t, kind, nbytes, 0,
                            dsm_coll_host(dest, source), DSM_PICK_CHAIN,
                            routine);
    if (!dsm_team_mapped(r->t)) {
        r->at_wait = 1;
        r->dest = dest;
        r->src = source;
        r->nbytes = nbytes;
        live_add(r);
        *out = r;
        return 0;
    }
    for (i = 0; i < p->np; i++) {
        int m = (me + 1 + i) % n;
        p->peer[i] = (dsm_part_t){
            .m = m,
            .src = src + (size_t)m * sblk,
            .dst = dsm_rt_xlate(routine, d + (size_t)me * nbytes, nbytes,
                                dsm_team_pe(r->t, m)),
            .len = nbytes,
            .count = 1,
            .ldst = d + (size_t)m * nbytes,
        };
    }
    p->nq = dsm_chain_nqueues(p);
    p->dsync = use_dsync(r, dest, source, nbytes);
    if (!p->dsync)
        r->nslots = r->depth; /* posted after the wait, as always */
    /* Bounded: a queue full of gated chains would block its producer.
     * Instances posted ahead take at most half a queue; one that does not
     * fit at all would wait for queue space behind its own unfired
     * trigger, forever: refuse it, naming the depth it needs. */
    size_t per = dsm_chain_gated_len(p);
    uint64_t qdepth = (uint64_t)dsm_env.sdma_queue_depth;
    if (per > qdepth) {
        uint64_t need = 1;
        while (need < per)
            need <<= 1;
        dsm_rt_fatal(routine, "one instance of this %s over %d PEs is %zu "
                     "commands on one engine queue, more than the queue "
                     "holds (SHMEM_SDMA_QUEUE_DEPTH=%llu): set "
                     "SHMEM_SDMA_QUEUE_DEPTH to %llu or more",
                     dsm_algo_name(p->algo), n, per,
                     (unsigned long long)qdepth, (unsigned long long)need);
    }
    while (r->depth > 1 && (uint64_t)r->nslots * per > qdepth / 2) {
        r->depth--;
        r->nslots--;
    }
    for (i = 0; i < p->nq; i++)
        r->q[i] = dsm_persist_queue_get(i, routine);
    /* A peer on my own GPU (several PEs per GPU): post nothing ahead.
     * On one H200 with 2-4 PEs, with or without MPS, a synchronous
     * cuMemcpyHtoD by the program (gpu_coll's copy-in before each start)
     * never completed while the instances posted ahead waited for their
     * trigger, so every such job hung at its first start. The cause
     * (test/gpu/probes/gate_probe.c, 2026-12-02): a synchronous legacy-stream
     * copy can wait behind a gated copy; copies on the
     * program's own non-blocking streams passed with 2 PEs (persistent
     * fcollect 1 KiB 14.5 us instead of 27.6 under MPS) and still hung
     * with 3 and 4 (more gated streams than the GPU's copy queues). So
     * each instance is posted by shmemx_req_start, right before its
     * trigger: the same chain and protocol, the posting's driver calls on
     * the start's path, and since its copies replay a cached graph
     * faster than posting ahead was (2 PEs under MPS, persistent fcollect
     * 1 KiB: 10.6-11.9 us against 15.2-16.4; docs/PERFORMANCE.md). The
     * lever that posted ahead anyway (SHMEM_PERSISTENT_SHARED_AHEAD) was
     * removed (#29). */
    for (i = 0; i < p->np && !r->lazy; i++)
        r->lazy = dsm_rt_gpu_shared_with(dsm_team_pe(r->t, p->peer[i].m));
    /* A kernel may trigger this one by a store (shmemx_req_device): its
     * chains end with the done words the kernel polls. */
    if (dsm_env.dev_req_trigger && !r->lazy && p->dsync == DSM_DSYNC_DEV &&
        !kops->kh_alloc(r)) {
        p->kdone = r->kd->done;
        p->kdone_host = r->kh->done;
    }
    for (i = 0; !r->lazy && i < r->depth; i++)
        dsm_persist_post_next(r);
    if (!r->lazy && r->depth)
        dsm_persist_ahead(r);
    dsm_debug("%s: %s over %d PEs, %zu bytes, %d instance(s) posted ahead "
              "on %d queue(s), sync %s", routine,
              dsm_algo_name(p->algo), n, nbytes,
              r->lazy ? 0 : r->depth, p->nq,
              p->dsync == DSM_DSYNC_DEV    ? "device words"
              : p->dsync == DSM_DSYNC_HOST ? "host ready and arrival"
                                           : "host words (team)");
    live_add(r);
    *out = r;
    return 0;
}

struct dsm_coll_req *dsm_persist_req_check(shmemx_req_t req, const char *routine)
{
    DSM_CHECK_INIT(routine);
    if (DSM_UNLIKELY(!req || req->magic != REQ_MAGIC))
        dsm_rt_fatal(routine, "invalid request handle %p", (void *)req);
    return req;
}

static void local_run(struct dsm_coll_req *r)
{
    /* GPU buffers by engine (dsm_coll_self_copy), never by this CPU. */
    dsm_coll_self_copy(r->plan.local.dst, r->plan.local.src,
                       r->plan.local.len, 1, 0, 0, "shmemx_req_start");
}

static void wait_started(struct dsm_coll_req *r)
{
    uint64_t k = r->started;
    if (r->at_wait) {
        if (r->plan.kind == DSM_COLL_AG)
            dsm_coll_fcollect(r->t, r->dest, r->src, r->nbytes,
                              "shmemx_req_wait", 1);
        else
            dsm_coll_alltoall(r->t, r->dest, r->src, r->nbytes,
                              "shmemx_req_wait", 1);
        r->completed = k;
        return;
    }
    dsm_chain_wait(&r->plan, r->q, &r->inst[k % (uint64_t)r->nslots]);
    r->completed = k;
}

/* ------------------------------------------------------------ entry points */

int pshmemx_fcollectmem_init(shmem_team_t team, void *dest,
                             const void *source, size_t nbytes,
                             shmemx_req_t *req)
{
    return req_init(team, dest, source, nbytes, req, DSM_COLL_AG,
                    "shmemx_fcollectmem_init");
}
DSM_WEAKX(fcollectmem_init)

int pshmemx_alltoallmem_init(shmem_team_t team, void *dest,
                             const void *source, size_t nbytes,
                             shmemx_req_t *req)
{
    return req_init(team, dest, source, nbytes, req, DSM_COLL_A2A,
                    "shmemx_alltoallmem_init");
}
DSM_WEAKX(alltoallmem_init)

int pshmemx_req_start(shmemx_req_t req)
{
    struct dsm_coll_req *r = dsm_persist_req_check(req, "shmemx_req_start");

    if (r->kmode)
        return kops->kstart(r);
    if (r->started != r->completed) {
        dsm_debug("shmemx_req_start: the request is active (started without "
                  "shmemx_req_wait)");
        return -1;
    }
    r->started++;
    if (!r->t) {
        local_run(r); /* a team of one: done, but active until the wait */
        return 0;
    }
    if (r->at_wait)
        return 0; /* runs at wait */
    if (r->lazy) {
        /* Posted at its start: its ready values and trigger first, so the
         * engines find the gate open (the cuda backend then drops that
         * WAIT from the stream) and the peers that started before us
         * ready (theirs too). Ready before any command of mine also keeps
         * it ahead of my arrival in the shared HOST word (fire()). */
        post(r, 1);
        return 0;
    }
    dsm_persist_fire(r, r->started);
    return 0;
}
DSM_WEAKX(req_start)

int pshmemx_req_wait(shmemx_req_t req)
{
    struct dsm_coll_req *r = dsm_persist_req_check(req, "shmemx_req_wait");

    if (r->kmode) {
        kops->kwait(r);
        return 0;
    }
    if (r->started == r->completed)
        return 0; /* inactive: nothing to wait for */
    if (!r->t) {
        r->completed = r->started;
        return 0;
    }
    if (r->plan.dsync) {
        /* The next instance's driver calls overlap this one's copies. */
        if (!r->lazy)
            dsm_persist_post_next(r);
        wait_started(r);
        return 0;
    }
    wait_started(r);
    if (!r->at_wait && !r->lazy)
        dsm_persist_post_next(r);
    return 0;
}
DSM_WEAKX(req_wait)

void dsm_persist_req_kernel(shmemx_req_t req, int wait, const char *routine)
{
    struct dsm_coll_req *r = dsm_persist_req_check(req, routine);
    if (wait) {
        pshmemx_req_wait(r);
        return;
    }
    if (r->started != r->completed)
        dsm_rt_fatal(routine, "request %p is active (started again without "
                     "shmemx_dev_req_wait or shmemx_req_wait)", (void *)r);
    pshmemx_req_start(r);
}

/* Finish what r has running and give back what it holds. fini: called by
 * finalize for a request the program never freed; its team goes without
 * the collective destroy (finalize has synchronised every PE already). */
static void req_release(struct dsm_coll_req *r, int fini)
{
    int i, cancelled = 1;

    live_remove(r);
    if (r->ahead)
        dsm_stall_posted_ahead(-1);
    if (r->kmode)
        kops->kmode_end(r);
    if (r->t && r->at_wait) {
        if (r->started != r->completed)
            wait_started(r);
    } else if (r->t || r->plan.nq) { /* r->plan.nq: a team of one's chain */
        if (r->started != r->completed)
            wait_started(r);
        for (i = 0; i < r->plan.nq; i++)
            if (dsm_sdma_queue_cancel(r->q[i]) != DSM_OK)
                cancelled = 0;
        if (cancelled) {
            uint64_t seq[DSM_CHAIN_MAXQ];
            for (i = 0; i < r->plan.nq; i++)
                seq[i] = r->inst[r->posted % (uint64_t)r->nslots].seq[i];
            gate(r, UINT64_MAX);
            for (i = 0; i < r->plan.nq; i++) {
                dsm_backoff_t b = {0};
                while (dsm_sdma_queue_help(r->q[i]) < seq[i])
                    dsm_backoff(&b, NULL, NULL, NULL);
            }
        } else {
            /* Every PE runs its posted instances to the end alike: work
             * on a stream cannot be withdrawn, so dest is written once
             * more per instance posted ahead, with the source as it is
             * now (shmemx_req(3) states it). */
            dsm_debug("%s: shmemx_req_free runs the %llu instance(s) posted "
                      "ahead (the %s backend cannot withdraw posted work): "
                      "dest is written again", r->routine,
                      (unsigned long long)(r->posted - r->started),
                      dsm_sdma_backend_name(dsm_rt.sdma));
            while (r->started < r->posted) {
                r->started++;
                dsm_persist_fire(r, r->started);
                wait_started(r);
            }
        }
        /* Every peer's last write into my device words came before the
         * arrival my last instance waited for. */
        if (r->plan.dsync)
            dsm_rt_device_sync_clear(r->t->slot);
        for (i = 0; i < r->plan.nq; i++)
            queue_put(r->q[i]);
    }
    if (r->t) {
        if (fini)
            dsm_team_release(r->t);
        else
            pshmem_team_destroy((shmem_team_t)r->t);
    }
    r->magic = 0;
    free(r->plan.peer);
    free(r->inst);
    free(r->arr);
    free(r->rdy);
    dsm_words_free(r->trigger, 1);
    kops->kh_free(r);
    pthread_mutex_destroy(&r->plock);
    free(r);
}

int pshmemx_req_free(shmemx_req_t req)
{
    req_release(dsm_persist_req_check(req, "shmemx_req_free"), 0);
    return 0;
}
DSM_WEAKX(req_free)

void dsm_coll_persist_fini(void)
{
    /* Requests the program did not free: an instance started and not
     * waited for completes, instances posted ahead are cancelled, so no
     * engine is left waiting on a trigger or a signal word that finalize
     * is about to unmap or unregister. Every PE finalizes with the same
     * requests, created in the same order. The list is newest first:
     * release oldest first, as they were created. */
    for (;;) {
        struct dsm_coll_req *r;
        pthread_mutex_lock(&fq_lock);
        for (r = live; r && r->next; r = r->next)
            ;
        pthread_mutex_unlock(&fq_lock);
        if (!r)
            break;
        dsm_debug("shmem_finalize: releasing a %s request never freed",
                  r->routine);
        req_release(r, 1);
    }
    pthread_mutex_lock(&fq_lock);
    free(fq);
    fq = NULL;
    fq_n = fq_cap = q_held = 0;
    fq_sdma = NULL;
    pthread_mutex_unlock(&fq_lock);
}
