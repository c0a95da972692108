/*
 * Data-moving team collectives as DMA command chains (AllGather = fcollect
 * and collect, AlltoAll(s)), and the plans they are built from.
 *
 * A plan lists, for one PE, the block it keeps (local part) and the block
 * it pushes to each peer (peer parts, peers in rotation order me+1, me+2,
 * ... so that no two PEs hit the same peer first). Executing a plan:
 *
 *   1. ready:   tell every peer "my dest may be written" (pairwise signal
 *               on the team's DMA channel; a CPU store, or for persistent
 *               plans a SIGNAL right after the chain's trigger WAIT);
 *   2. chains:  per queue, for each peer it serves: WAIT(peer's ready),
 *               COPY (or BCAST/SWAP), SIGNAL(peer's arrival word); a
 *               blocking collective waits for the ready on the CPU
 *               instead and posts the peer's commands once it has come,
 *               so its chains on the shared queues never wait;
 *   3. wait:    for the chains' completion (source reusable) and the
 *               arrivals of every peer (dest complete).
 *
 * Every collective run from a plan moves exactly two signals per ordered
 * pair (ready, then arrival) and all of them travel through one queue or
 * the caller, so the peer's word only grows: back-to-back collectives need
 * no reset and no barrier. The variant only changes which queue carries
 * what. Small calls on host memory take no plan: their data goes as one
 * eager message per ordered pair into memory of the library's own, which
 * needs no ready (coll.h "eager messages", eager.c); they use neither
 * the plans' words nor their counts.
 */
#ifndef DSM_COLL_CHAIN_H
#define DSM_COLL_CHAIN_H

#include "coll/coll.h"
#include "coll/plan.h"

#include <string.h>

/* Flags of dsm_coll_pick. */
#define DSM_PICK_CHAIN 1 /* a persistent request: engine chains only */
#define DSM_PICK_MIXED 2 /* collect: the members' sizes may differ */
/* The variant of one call on team t (the planner, plan.c, fed with the
 * team's placement, the tunables and the engines' capabilities): bytes
 * each PE sends one peer, elem the element size of a strided alltoalls
 * (0: contiguous), host when every buffer is host memory. Fails the job
 * where the planner refuses (GPU memory on a team that spans nodes);
 * SHMEM_DEBUG says when a forced variant does not apply. */
dsm_algo_t dsm_coll_pick(dsm_team_t *t, dsm_coll_kind_t kind, size_t bytes,
                         size_t elem, int host, int flags,
                         const char *routine);

/* 1 when neither buffer is in GPU memory (the direct path may run). */
int dsm_coll_host(const void *dest, const void *src);
/* One block: count runs of len bytes, runs sstr/dstr bytes apart. */
typedef struct dsm_part {
    int m;          /* team member (the local part: my index) */
    const char *src; /* in this process */
    char *dst;       /* as mapped in this process (peer's dest) */
    size_t len;
    size_t count;   /* 1: contiguous */
    ptrdiff_t sstr, dstr;
    char *ldst;     /* swap: my own dest slot for this peer */
    /* Pairwise signal values of this call: ready and arrival I send, and
     * those I expect from the peer. */
    uint64_t rv_out, av_out, rv_in, av_in;
    /* The pair's count before this call and the X the peer's ready and
     * arrival carry (base + 2X + 1, + 2): the call's digest, or collect's
     * count (part_arrived, chain_run.c). */
    uint64_t base_in, x_in;
    int ready_sent; /* ready already sent (collect's size exchange) */
    /* My word for member m's signals on the DMA channel (its readies and
     * arrivals come there; dsm_plan_sigvals sets it). */
    const uint64_t *in;
    int by_path;    /* the peer is not mapped here: dst is the symmetric
                     * address in this process, moved by dsm_path_put */
    /* Device signal words (plan->dsync): the peer's words for my ready
     * and arrival, and my words for the peer's, as mapped here. */
    uint64_t *rw_out, *aw_out, *rw_in, *aw_in;
} dsm_part_t;

typedef struct dsm_plan {
    dsm_team_t *t;
    dsm_coll_kind_t kind;
    dsm_algo_t algo;
    const char *routine;
    dsm_part_t local; /* len 0: nothing to copy (in place) */
    int np;           /* peers, t->size - 1 */
    dsm_part_t *peer; /* [np] in rotation order */
    int nq;           /* queues the chain variant uses */
    int mixed;        /* members may pick different variants (collect) */
    /* The call's digest (t->dig of a blocking call, 0 for persistent
     * requests), which the signals carry (dsm_plan_sigvals). */
    uint32_t dig;
    /* Gated (persistent) chains signal through the parts' device words
     * (rw_out ...) instead of the team's host words, and wait for the
     * arrivals on the engines: a started instance then runs trigger ->
     * stream waits on device words -> copies -> device signals, and the
     * host waits only for the queues' completion. pcpy and b2b only. */
    int dsync;
    /* Gated chains of a request kernels may trigger (persistent.c): each
     * queue's instance ends with SIGNAL(kdone[q] := instance), which a
     * kernel polls (device memory), then SIGNAL(kdone_host[q] := instance)
     * for the host's threads. NULL: none. */
    uint64_t *kdone, *kdone_host;
} dsm_plan_t;

/* plan.dsync: how a gated chain on device buffers synchronises.
 *  DEV     ready and arrival are SIGNALs into the peers' device words,
 *          waited for on the stream (two cross-GPU exchanges);
 *  HOST    ready is the peer's CPU store into my host word at its
 *          shmemx_req_start (its dest is free and its source filled from
 *          then on), waited for on the stream; arrival is the peer's
 *          engine writing my host word, which my CPU checks after the
 *          queue's completion (no stream wait for it).
 * (HREADY, 2, host ready and device arrival, lost to HOST and was
 * removed: persistent fcollect 1 KiB on the H200 22.3-23.7 us against
 * 17.1; HOST keeps its number, which SHMEM_DEBUG lines print.) */
enum { DSM_DSYNC_OFF = 0, DSM_DSYNC_DEV = 1, DSM_DSYNC_HOST = 3 };

/* The plan of a blocking fcollect on t (emit.c): member m's block (src,
 * nbytes) to dest + my index * nbytes of every member (as
 * t->coll->peer_dst names it), local bytes of it to my own dest (0: in
 * place), this call's signal values; peers: storage for size - 1 parts. */
void dsm_plan_fcollect(dsm_plan_t *p, dsm_team_t *t, dsm_algo_t algo,
                       const char *routine, char *dest, const char *src,
                       size_t nbytes, size_t local, dsm_part_t *peers);
/* An alltoall(s)'s blocks: count runs of len bytes, sstr/dstr apart; one
 * block spans sblk bytes of source and dblk of dest, dlast of which are
 * written (the last run's end, strided). */
typedef struct dsm_a2a_shape {
    size_t len, count;
    ptrdiff_t dstr, sstr;
    size_t dblk, sblk, dlast;
} dsm_a2a_shape_t;
/* The plan of a blocking alltoall(s) on t (emit.c): block m of source to
 * member m's dest at my index, mine to my own (swap: ldst, my slot m). */
void dsm_plan_alltoall(dsm_plan_t *p, dsm_team_t *t, dsm_algo_t algo,
                       const char *routine, char *dest, const char *src,
                       const dsm_a2a_shape_t *s, dsm_part_t *peers);
/* Take this call's two signals per ordered pair from the team's counters:
 * ready base + 2 dig + 1, arrival base + 2 dig + 2 (coll.h "argument
 * agreement"; persistent plans have dig 0: +1, +2). */
static inline void dsm_plan_sigvals(dsm_plan_t *p)
{
    const uint64_t x2 = 2 * (uint64_t)p->dig;
    for (int i = 0; i < p->np; i++) {
        dsm_part_t *x = &p->peer[i];
        const int k = p->t->peer[x->m].dk;
        uint64_t *s = &p->t->sent[k], *r = &p->t->recv[k];
        x->in = &p->t->sig[k];
        x->rv_out = *s + x2 + 1;
        x->av_out = *s = *s + x2 + 2;
        x->base_in = *r;
        x->x_in = p->dig;
        x->rv_in = *r + x2 + 1;
        x->av_in = *r = *r + x2 + 2;
        x->ready_sent = 0;
    }
}


/* Queues and expected arrivals of one posted instance. */
#define DSM_CHAIN_MAXQ 16
typedef struct dsm_inst {
    uint64_t seq[DSM_CHAIN_MAXQ]; /* completion sequence per queue */
    uint64_t *arr;                /* [np] arrival value expected per peer */
    uint64_t *rdy;                /* [np] ready value I send (HOST) */
} dsm_inst_t;

/* Run a plan now (blocking): ready by the caller, chains on the shared
 * chain queues (or the direct path), wait. Blocks only its caller: what
 * it posts on the shared queues never waits (chain_run.c). */
void dsm_chain_run(dsm_plan_t *p);
/* SHMEM_SDMA_STATS: one line on where the blocking chain runs' time went
 * (nothing when none ran). */
void dsm_chain_stats_print(int rank);
/* Free the calling thread's plan and command storage (finalize; other
 * threads' storage goes at their exit). */
void dsm_chain_fini(void);
/* Finalize: release the persistent requests the program did not free
 * (persistent.c), before the sdma layer closes. */
void dsm_coll_persist_fini(void);
/* Free a team without the collective destroy (finalize only). */
void dsm_team_release(dsm_team_t *t);

/* The arrival and ready values of the plan's current signals into inst
 * (dsm_chain_post_gated does it too; a start that fires before it posts
 * needs them first). */
void dsm_chain_inst_vals(const dsm_plan_t *p, dsm_inst_t *inst);
/* Wait up to ns on the CPU until every peer's ready of the plan's current
 * signals is in my host word (HOST persistent plans); returns 1 when
 * all came. */
int dsm_chain_await_readies(const dsm_plan_t *p, uint64_t ns);
/* Post one instance of a plan gated by WAIT(*trigger >= gate) on queues
 * q[0..p->nq-1] (persistent collectives). Fills inst. */
void dsm_chain_post_gated(dsm_plan_t *p, dsm_sdma_queue_t **q,
                          uint64_t *trigger, uint64_t gate, dsm_inst_t *inst);
/* Commands of one gated instance on its longest queue: a queue must hold
 * every unfired instance posted on it, or posting blocks behind its own
 * trigger. */
size_t dsm_chain_gated_len(const dsm_plan_t *p);
/* Wait for one posted instance: its queues and its arrivals. */
void dsm_chain_wait(dsm_plan_t *p, dsm_sdma_queue_t **q, dsm_inst_t *inst);

/* Queues a plan's variant spreads over. */
int dsm_chain_nqueues(const dsm_plan_t *p);

/* My word that receives member m's signals on the DMA channel. */
static inline uint64_t *dsm_chain_in(dsm_team_t *t, int m)
{
    return dsm_team_my_sig(t, DSM_CHAN_DMA, m);
}

/* 1 when member x->m's ready (or already its arrival) for this call is in
 * my word, 0 while it is not; a ready that carries another X than this
 * PE's fails the job (the member makes another call). */
static inline int dsm_part_arrived(const dsm_plan_t *p, const dsm_part_t *x)
{
    uint64_t v = __atomic_load_n(x->in, __ATOMIC_ACQUIRE);
    if (v <= x->base_in)
        return 0;
    if (DSM_UNLIKELY((v - x->base_in - 1) >> 1 != x->x_in))
        dsm_coll_mismatch(p->t, x->m,
                          (uint32_t)((v - x->base_in - 1) >> 1) & DSM_DIG_MASK);
    return 1;
}

/* A CPU-side signal on the DMA channel: store the absolute count v in member
 * m's word for us, then wake its application waiters (and its engines when
 * a chain there may WAIT on the word). */
static inline void dsm_chain_signal(dsm_team_t *t, int m, uint64_t v,
                                    int engines)
{
    const dsm_team_peer_t *d = &t->peer[m];
    if (!d->dma) {
        dsm_team_path_signal(t, DSM_CHAN_DMA, m, v);
        return;
    }
    __atomic_store_n(d->dma, v, __ATOMIC_RELEASE);
    if (engines)
        dsm_wake_notify(d->wake);
    dsm_wake_notify(d->wake_app);
}

/* count elements of len bytes, dstr and sstr bytes apart, by the CPU:
 * the common element sizes as single loads and stores (a memcpy call per
 * element costs more than a small element). */
static inline void dsm_coll_copy_elems(char *dst, ptrdiff_t dstr,
                                       const char *src, ptrdiff_t sstr,
                                       size_t len, size_t count)
{
#define DSM_COPY_ELEMS(N)                                                      \
    for (size_t k = 0; k < count; k++)                                         \
        memcpy(dst + (ptrdiff_t)k * dstr, src + (ptrdiff_t)k * sstr, N);       \
    break;
    switch (len) {
    case 1: DSM_COPY_ELEMS(1)
    case 2: DSM_COPY_ELEMS(2)
    case 4: DSM_COPY_ELEMS(4)
    case 8: DSM_COPY_ELEMS(8)
    case 16: DSM_COPY_ELEMS(16)
    default: DSM_COPY_ELEMS(len)
    }
#undef DSM_COPY_ELEMS
}

/* Tunables read once (algo.c; the struct is plan.h's). */
extern dsm_coll_tune_t dsm_coll_tune;
void dsm_coll_tune_init(void);

/* A team of one copies its own block: by the CPU for host memory, by
 * engine (a get from itself) where either side is GPU memory, which the
 * CPU may not touch. count blocks of len bytes, strides in bytes. */
void dsm_coll_self_copy(char *dst, const char *src, size_t len, size_t count,
                        ptrdiff_t dstr, ptrdiff_t sstr, const char *routine);

#endif /* DSM_COLL_CHAIN_H */
