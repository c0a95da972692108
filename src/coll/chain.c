/*
 * Building, posting and waiting for the command chains of the data-moving
 * collectives (see chain.h for the protocol).
 *
 * Shared chain queues: up to DSM_CHAIN_MAXQ queues per process, created on
 * first use and spread over the engines, used by the blocking collectives
 * of every team and thread. A blocking collective may block only its
 * caller, so nothing it posts there ever waits: the caller waits for each
 * peer's ready on the CPU and posts that peer's commands (copies, arrival
 * signal) once it has come. A WAIT at the head of a shared queue would
 * hold every chain behind it, of any team or thread, until that peer
 * arrived; a peer that runs another team's collective first, which needs
 * one of those chains, would then never arrive (issue #14). Persistent
 * requests own their queues (persistent.c): their gated chains start with
 * a WAIT on the trigger.
 *
 * On the cpu backend the caller executes its own chains while it waits
 * (dsm_sdma_queue_help), so a small collective runs in the caller's thread
 * and the engine threads take over what the caller does not get to.
 */
#include "coll/chain.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static dsm_sdma_queue_t *pool[DSM_CHAIN_MAXQ];
static dsm_sdma_t *pool_sdma; /* the layer instance the pool belongs to */

/* Shared chain queue i (created on first use; engine i mod engines). */
static dsm_sdma_queue_t *chain_queue(int i)
{
    dsm_sdma_queue_t *q;

    if (DSM_LIKELY(pool_sdma == dsm_rt.sdma && pool[i]))
        return pool[i];
    pthread_mutex_lock(&pool_lock);
    if (pool_sdma != dsm_rt.sdma) {
        /* A new init: the old layer freed its queues at close. */
        memset(pool, 0, sizeof(pool));
        pool_sdma = dsm_rt.sdma;
    }
    if (!pool[i]) {
        dsm_status_t st = dsm_sdma_queue_create(
            dsm_rt.sdma, i % dsm_rt.nengines, &q);
        if (st != DSM_OK) {
            pthread_mutex_unlock(&pool_lock);
            dsm_rt_fatal("collective", "cannot create a DMA chain queue: %s",
                         dsm_status_str(st));
        }
        pool[i] = q;
    }
    q = pool[i];
    pthread_mutex_unlock(&pool_lock);
    return q;
}

/* ------------------------------------------------------------ storage */

/* Command list under construction (one queue's chain at a time). */
typedef struct cmdbuf {
    dsm_cmd_t *c;
    size_t n, cap;
} cmdbuf_t;

/* Per-thread plan and command storage, grown on demand and kept between
 * calls (a collective allocates nothing once warm). Freed by the key's
 * destructor when the thread exits, and for the thread that finalizes by
 * dsm_chain_fini: a program that runs collectives from short-lived threads
 * must not leak one set per thread. */
typedef struct chain_tls {
    dsm_part_t *peers;
    int npeers;
    unsigned char *pend; /* [npend] blocking run: item not posted yet */
    int npend;
    cmdbuf_t cb;
} chain_tls_t;

static __thread chain_tls_t *tls;
static pthread_key_t tls_key;
static pthread_once_t tls_once = PTHREAD_ONCE_INIT;
static int tls_key_ok;

static void tls_free(void *v)
{
    chain_tls_t *c = v;
    if (!c)
        return;
    free(c->peers);
    free(c->pend);
    free(c->cb.c);
    free(c);
}

static void tls_key_create(void)
{
    tls_key_ok = pthread_key_create(&tls_key, tls_free) == 0;
}

static chain_tls_t *tls_get(void)
{
    if (DSM_LIKELY(tls))
        return tls;
    pthread_once(&tls_once, tls_key_create);
    tls = calloc(1, sizeof(*tls));
    if (!tls)
        dsm_rt_fatal("collective", "out of memory for a thread's plan");
    /* Without a key (none left) the storage lives until finalize or the
     * process's end, as before. */
    if (tls_key_ok)
        pthread_setspecific(tls_key, tls);
    return tls;
}

void dsm_chain_fini(void)
{
    if (!tls)
        return;
    if (tls_key_ok)
        pthread_setspecific(tls_key, NULL);
    tls_free(tls);
    tls = NULL;
}

dsm_part_t *dsm_plan_peers(int np)
{
    chain_tls_t *c = tls_get();
    if (np > c->npeers) {
        dsm_part_t *p = realloc(c->peers, (size_t)np * sizeof(*p));
        if (!p)
            dsm_rt_fatal("collective", "out of memory for %d peers", np);
        c->peers = p;
        c->npeers = np;
    }
    return c->peers;
}

static unsigned char *pend_flags(int n)
{
    chain_tls_t *c = tls_get();
    if (n > c->npend) {
        unsigned char *p = realloc(c->pend, (size_t)n);
        if (!p)
            dsm_rt_fatal("collective", "out of memory for %d peers", n);
        c->pend = p;
        c->npend = n;
    }
    return c->pend;
}

static inline void cb_push(cmdbuf_t *b, const dsm_cmd_t *c)
{
    if (DSM_UNLIKELY(b->n == b->cap)) {
        size_t cap = b->cap ? 2 * b->cap : 64;
        dsm_cmd_t *n = realloc(b->c, cap * sizeof(*n));
        if (!n)
            dsm_rt_fatal("collective", "out of memory for a command chain");
        b->c = n;
        b->cap = cap;
    }
    b->c[b->n++] = *c;
}

static inline void cb_wait(cmdbuf_t *b, uint64_t *word, uint64_t v)
{
    dsm_cmd_t c = {.op = DSM_CMD_WAIT, .u.sig = {word, v}};
    cb_push(b, &c);
}

/* SIGNAL into member m's word: wakes its engines (a chain may be parked on
 * the word) and its application threads (a waiter may sleep on it). */
static inline void cb_signal(cmdbuf_t *b, dsm_team_t *t, int m, uint64_t v)
{
    int pe = dsm_team_pe(t, m);
    dsm_cmd_t c = {
        .op = DSM_CMD_SIGNAL,
        .u.sig = {dsm_team_peer_sig(t, DSM_CHAN_DMA, m), v},
        .wake = &dsm_rt.peer_ctrl[pe]->wake,
        .wake_app = &dsm_rt.peer_ctrl[pe]->wake_app,
    };
    cb_push(b, &c);
}

static inline void cb_copy(cmdbuf_t *b, const dsm_part_t *x)
{
    dsm_cmd_t c = {.op = DSM_CMD_COPY};
    for (size_t k = 0; k < x->count; k++) {
        c.u.copy.src = x->src + (ptrdiff_t)k * x->sstr;
        c.u.copy.dst = x->dst + (ptrdiff_t)k * x->dstr;
        c.u.copy.len = x->len;
        cb_push(b, &c);
    }
}

/* The CPU form of a signal (ready at entry, direct path). engines = 0
 * when no chain of the peer can be parked on the word (every member runs
 * the direct path): waking an idle engine thread costs a system call and,
 * on a small node, a core. */
static inline void part_memcpy(dsm_team_t *t, const dsm_part_t *x)
{
    if (x->by_path) { /* completed by the arrival signal's quiet */
        for (size_t k = 0; k < x->count; k++)
            dsm_path_put(&dsm_ctx_default, x->dst + (ptrdiff_t)k * x->dstr,
                         x->src + (ptrdiff_t)k * x->sstr, x->len,
                         dsm_team_pe(t, x->m), 1, "collective");
        return;
    }
    if (x->count == 1) {
        memmove(x->dst, x->src, x->len);
        return;
    }
    for (size_t k = 0; k < x->count; k++)
        memcpy(x->dst + (ptrdiff_t)k * x->dstr,
               x->src + (ptrdiff_t)k * x->sstr, x->len);
}

/* ------------------------------------------------------------ layout */

/* Broadcast pairs: destination slots 0..nd-1 where slot 0 is the local
 * part when there is one, then the peers. Pair k = slots 2k, 2k+1. */
static int bcast_slots(const dsm_plan_t *p)
{
    return p->np + (p->local.len ? 1 : 0);
}

static const dsm_part_t *bcast_slot(const dsm_plan_t *p, int s)
{
    if (p->local.len)
        return s == 0 ? &p->local : &p->peer[s - 1];
    return &p->peer[s];
}

int dsm_chain_nqueues(const dsm_plan_t *p)
{
    int n;
    switch (p->algo) {
    case DSM_ALGO_B2B:
        return 1;
    case DSM_ALGO_BCAST:
        n = (bcast_slots(p) + 1) / 2;
        break;
    case DSM_ALGO_DIRECT:
        return 0;
    default:
        n = p->np;
        break;
    }
    return DSM_MAX(1, DSM_MIN(n, DSM_CHAIN_MAXQ));
}

/* SIGNAL into a device word (no CPU sleeps on it: no wake). */
static inline void cb_signal_dev(cmdbuf_t *b, uint64_t *word, uint64_t v)
{
    dsm_cmd_t c = {.op = DSM_CMD_SIGNAL, .u.sig = {word, v}};
    cb_push(b, &c);
}

/* A gated chain on device signal words (p->dsync, pcpy/b2b): trigger,
 * readies out, readies in, copies (local and peers in one run), arrivals
 * out, arrivals in. Waiting for every ready before the first copy keeps
 * the copies in one batch and the memory operations in two; on one node
 * the readies come within microseconds of each other. */
static void build_queue_dev(const dsm_plan_t *p, int qi, int nq, cmdbuf_t *b,
                            uint64_t *trig, uint64_t gate)
{
    dsm_team_t *t = p->t;
    int i;

    cb_wait(b, trig, gate);
    if (p->dsync == DSM_DSYNC_DEV) {
        for (i = qi; i < p->np; i += nq)
            cb_signal_dev(b, p->peer[i].rw_out, p->peer[i].rv_out);
        for (i = qi; i < p->np; i += nq)
            cb_wait(b, p->peer[i].rw_in, p->peer[i].rv_in);
    } else {
        /* The peer's CPU stored its ready value into my host word when it
         * started this instance (persistent.c fire()). */
        for (i = qi; i < p->np; i += nq)
            cb_wait(b, dsm_chain_in(t, p->peer[i].m), p->peer[i].rv_in);
    }
    if (qi == 0 && p->local.len)
        cb_copy(b, &p->local);
    for (i = qi; i < p->np; i += nq) {
        const dsm_part_t *x = &p->peer[i];
        if (!x->len || !x->count)
            continue;
        if (p->pull_min && x->len >= p->pull_min && x->count == 1 &&
            x->rsrc && x->ldst_pull) {
            /* First half pushed by me into the peer's slot, second half
             * of the peer's block pulled into mine; the peer does the
             * mirror image. Its ready says its source is filled and its
             * dest free; my arrival after both copies says I am done
             * with its source too. */
            size_t h = DSM_MIN((x->len / 2 + 255) & ~(size_t)255, x->len);
            dsm_cmd_t c = {.op = DSM_CMD_COPY};
            c.u.copy.src = x->src;
            c.u.copy.dst = x->dst;
            c.u.copy.len = h;
            cb_push(b, &c);
            c.u.copy.src = x->rsrc + h;
            c.u.copy.dst = x->ldst_pull + h;
            c.u.copy.len = x->len - h;
            cb_push(b, &c);
        } else {
            cb_copy(b, x);
        }
    }
    if (p->dsync == DSM_DSYNC_HOST) {
        /* Into the peer's host word (its CPU checks it at wait). */
        for (i = qi; i < p->np; i += nq)
            cb_signal_dev(b, dsm_team_peer_sig(t, DSM_CHAN_DMA, p->peer[i].m),
                          p->peer[i].av_out);
        return;
    }
    for (i = qi; i < p->np; i += nq)
        cb_signal_dev(b, p->peer[i].aw_out, p->peer[i].av_out);
    for (i = qi; i < p->np; i += nq)
        cb_wait(b, p->peer[i].aw_in, p->peer[i].av_in);
}

/* Build queue qi's gated chain into b (persistent requests, on their own
 * queues): trigger WAIT first, the ready signals in the chain, then per
 * peer WAIT(ready), copy, arrival. Blocking runs build theirs without
 * WAITs (build_head, build_item). */
static void build_queue(const dsm_plan_t *p, int qi, int nq, cmdbuf_t *b,
                        uint64_t *trig, uint64_t gate)
{
    dsm_team_t *t = p->t;
    const int gated = trig != NULL;
    int i;

    if (gated && p->dsync) {
        build_queue_dev(p, qi, nq, b, trig, gate);
        return;
    }

    if (gated) {
        cb_wait(b, trig, gate);
        if (p->algo != DSM_ALGO_SWAP)
            for (i = qi; i < p->np; i += nq) {
                if (p->algo == DSM_ALGO_BCAST)
                    break; /* per pair below */
                cb_signal(b, t, p->peer[i].m, p->peer[i].rv_out);
            }
    }

    switch (p->algo) {
    case DSM_ALGO_PCPY:
    case DSM_ALGO_B2B:
        if (qi == 0 && p->local.len)
            cb_copy(b, &p->local);
        for (i = qi; i < p->np; i += nq) {
            const dsm_part_t *x = &p->peer[i];
            if (x->len && x->count) {
                cb_wait(b, dsm_chain_in(t, x->m), x->rv_in);
                cb_copy(b, x);
            }
            cb_signal(b, t, x->m, x->av_out);
        }
        break;

    case DSM_ALGO_BCAST: {
        const int nd = bcast_slots(p);
        int s;
        if (gated)
            for (s = 2 * qi; s < nd; s += 2 * nq)
                for (int u = s; u < s + 2 && u < nd; u++) {
                    const dsm_part_t *x = bcast_slot(p, u);
                    if (x != &p->local)
                        cb_signal(b, t, x->m, x->rv_out);
                }
        for (s = 2 * qi; s < nd; s += 2 * nq) {
            const dsm_part_t *x = bcast_slot(p, s);
            const dsm_part_t *y = s + 1 < nd ? bcast_slot(p, s + 1) : NULL;
            if (x != &p->local && x->len)
                cb_wait(b, dsm_chain_in(t, x->m), x->rv_in);
            if (y && y->len)
                cb_wait(b, dsm_chain_in(t, y->m), y->rv_in);
            if (y && x->len) {
                /* Same source, two destinations (AllGather only). */
                dsm_cmd_t c = {.op = DSM_CMD_BCAST,
                               .u.copy = {x->src, x->dst, y->dst, x->len}};
                cb_push(b, &c);
            } else if (x->len) {
                cb_copy(b, x);
            }
            if (x != &p->local)
                cb_signal(b, t, x->m, x->av_out);
            if (y)
                cb_signal(b, t, y->m, y->av_out);
        }
        break;
    }

    case DSM_ALGO_SWAP:
        /* Local copy of my block for j into my dest slot j, then the lower
         * PE of each pair swaps its slot j with j's slot for it once j has
         * made its own local copy (j's ready). */
        if (qi == 0 && p->local.len)
            cb_copy(b, &p->local);
        for (i = qi; i < p->np; i += nq) {
            const dsm_part_t *x = &p->peer[i];
            dsm_part_t mine = *x;
            mine.dst = x->ldst;
            cb_copy(b, &mine);
            cb_signal(b, t, x->m, x->rv_out);
            if (x->m < t->my_idx) {
                /* The peer swaps; this arrival only keeps the count. */
                cb_signal(b, t, x->m, x->av_out);
                continue;
            }
            cb_wait(b, dsm_chain_in(t, x->m), x->rv_in);
            dsm_cmd_t c = {.op = DSM_CMD_SWAP,
                           .u.copy = {x->ldst, x->dst, NULL, x->len}};
            cb_push(b, &c);
            cb_signal(b, t, x->m, x->av_out);
        }
        break;

    default:
        break;
    }
}

/* ------------------------------------------------------------ waiting */

struct wait_arg {
    const dsm_plan_t *p;
    dsm_sdma_queue_t **q;
    const uint64_t *seq;
    int nq;
    int next_peer; /* arrivals below this one are in */
    const uint64_t *arr; /* [np] or NULL: p->peer[i].av_in */
    uint64_t tq; /* SHMEM_SDMA_STATS: when the queues were seen done */
};

static int all_done(void *v)
{
    struct wait_arg *a = v;
    const dsm_plan_t *p = a->p;
    int i, done = 1;

    for (i = 0; i < a->nq; i++)
        if (dsm_sdma_queue_help(a->q[i]) < a->seq[i])
            done = 0;
    if (!done)
        return 0;
    if (DSM_UNLIKELY(dsm_env.sdma_stats) && !a->tq)
        a->tq = dsm_now_ns();
    if (p->dsync && p->dsync != DSM_DSYNC_HOST && a->q)
        return 1; /* the chains waited for the arrivals themselves */
    for (; a->next_peer < p->np; a->next_peer++) {
        const dsm_part_t *x = &p->peer[a->next_peer];
        uint64_t want = a->arr ? a->arr[a->next_peer] : x->av_in;
        if (__atomic_load_n(dsm_chain_in(p->t, x->m), __ATOMIC_ACQUIRE) <
            want)
            return 0;
    }
    return 1;
}

/* SHMEM_DEBUG: a collective still waiting after 10 s says once what for
 * (each queue's completed and wanted sequence, each arrival word's value
 * and the value wanted): a hang then names the step that never came. */
static void stall_report(const struct wait_arg *a)
{
    const dsm_plan_t *p = a->p;
    for (int i = 0; i < a->nq; i++)
        dsm_debug("%s: stalled 10 s: queue %d done %llu, want %llu",
                  p->routine ? p->routine : "collective", i,
                  (unsigned long long)dsm_sdma_queue_help(a->q[i]),
                  (unsigned long long)a->seq[i]);
    for (int i = 0; i < p->np; i++) {
        const dsm_part_t *x = &p->peer[i];
        dsm_debug("%s: stalled 10 s: arrival word for team member %d is "
                  "%llu, want %llu (sync %d)",
                  p->routine ? p->routine : "collective", x->m,
                  (unsigned long long)__atomic_load_n(dsm_chain_in(p->t, x->m),
                                                      __ATOMIC_ACQUIRE),
                  (unsigned long long)(a->arr ? a->arr[i] : x->av_in),
                  (int)p->dsync);
    }
}

static void wait_all(struct wait_arg *a)
{
    dsm_backoff_t b = {0};
    uint64_t t0 = 0;
    while (!all_done(a)) {
        dsm_backoff(&b, &dsm_rt.ctrl->wake_app, all_done, a);
        if (DSM_UNLIKELY(dsm_env.debug) &&
            (b.sleep_us || (b.n & 1023) == 0)) {
            uint64_t now = dsm_now_ns();
            if (!t0)
                t0 = now;
            else if (t0 != UINT64_MAX && now - t0 > 10000000000ull) {
                stall_report(a);
                t0 = UINT64_MAX;
            }
        }
    }
}

/* ------------------------------------------------------------ direct */

/* 1 when some peer still owed a block has signalled ready. */
static int any_ready(void *v)
{
    dsm_plan_t *p = v;
    for (int i = 0; i < p->np; i++) {
        const dsm_part_t *x = &p->peer[i];
        if (x->count && __atomic_load_n(dsm_chain_in(p->t, x->m),
                                        __ATOMIC_ACQUIRE) >= x->rv_in)
            return 1;
    }
    return 0;
}

/* The same protocol executed by the caller with loads and stores: each
 * peer's block goes as soon as that peer is ready, in rotation order. */
static void run_direct(dsm_plan_t *p)
{
    dsm_team_t *t = p->t;
    dsm_backoff_t bo = {0};
    int i, left = 0;

    if (p->local.len)
        part_memcpy(t, &p->local);
    for (i = 0; i < p->np; i++) {
        dsm_part_t *x = &p->peer[i];
        x->count = x->len ? x->count : 0;
        if (!x->count)
            dsm_chain_signal(t, x->m, x->av_out, p->mixed);
        else
            left++;
    }
    while (left) {
        int moved = 0;
        for (i = 0; i < p->np; i++) {
            dsm_part_t *x = &p->peer[i];
            if (!x->count)
                continue;
            const uint64_t *in = dsm_chain_in(t, x->m);
            if (__atomic_load_n(in, __ATOMIC_ACQUIRE) < x->rv_in) {
                if (moved || left > 1)
                    continue;
                /* Only this peer is left: wait for it. */
                dsm_rt_wait_ge(in, x->rv_in);
            }
            part_memcpy(t, x);
            dsm_chain_signal(t, x->m, x->av_out, p->mixed);
            x->count = 0;
            left--;
            moved = 1;
        }
        /* Nobody ready yet: back off (yield, maybe sleep) rather than spin,
         * or on an oversubscribed node the peers we wait for never run. */
        if (!moved && left > 1)
            dsm_backoff(&bo, &dsm_rt.ctrl->wake_app, any_ready, p);
        else
            bo.n = 0;
    }
    struct wait_arg a = {.p = p};
    wait_all(&a);
}

/* ------------------------------------------------------------ run */

/* Blocking runs post, per queue, what is runnable now and nothing that
 * waits. Items: pcpy/b2b one per peer, bcast one per pair of destination
 * slots, swap one per peer whose pair this PE swaps; item i goes to queue
 * i mod nq, as the gated chains spread them. */
static int run_nitems(const dsm_plan_t *p)
{
    return p->algo == DSM_ALGO_BCAST ? (bcast_slots(p) + 1) / 2 : p->np;
}

/* 1 when a part's receiver allows it to be written (or nothing moves). */
static int part_ready(const dsm_plan_t *p, const dsm_part_t *x)
{
    return x == &p->local || !x->len || !x->count ||
           __atomic_load_n(dsm_chain_in(p->t, x->m), __ATOMIC_ACQUIRE) >=
               x->rv_in;
}

static int item_ready(const dsm_plan_t *p, int i)
{
    if (p->algo != DSM_ALGO_BCAST)
        return part_ready(p, &p->peer[i]);
    const int nd = bcast_slots(p);
    for (int u = 2 * i; u < 2 * i + 2 && u < nd; u++)
        if (!part_ready(p, bcast_slot(p, u)))
            return 0;
    return 1;
}

/* What queue qi can run at once: the local copy, and for swap each
 * peer's block copied into my own slot followed by my ready (the peer
 * swaps with that slot), plus the arrival for pairs the peer swaps. */
static void build_head(const dsm_plan_t *p, int qi, int nq, cmdbuf_t *b,
                       unsigned char *pend)
{
    dsm_team_t *t = p->t;

    if (qi == 0 && p->local.len && p->algo != DSM_ALGO_BCAST)
        cb_copy(b, &p->local); /* bcast: the local part is slot 0 */
    if (p->algo != DSM_ALGO_SWAP)
        return;
    for (int i = qi; i < p->np; i += nq) {
        const dsm_part_t *x = &p->peer[i];
        dsm_part_t mine = *x;
        mine.dst = x->ldst;
        cb_copy(b, &mine);
        cb_signal(b, t, x->m, x->rv_out);
        if (x->m < t->my_idx) {
            /* The peer swaps; this arrival only keeps the count. */
            cb_signal(b, t, x->m, x->av_out);
            pend[i] = 0;
        }
    }
}

/* Item i's commands, once item_ready. */
static void build_item(const dsm_plan_t *p, int i, cmdbuf_t *b)
{
    dsm_team_t *t = p->t;
    const dsm_part_t *x;

    switch (p->algo) {
    case DSM_ALGO_PCPY:
    case DSM_ALGO_B2B:
        x = &p->peer[i];
        if (x->len && x->count)
            cb_copy(b, x);
        cb_signal(b, t, x->m, x->av_out);
        break;
    case DSM_ALGO_BCAST: {
        const int nd = bcast_slots(p), s = 2 * i;
        const dsm_part_t *y = s + 1 < nd ? bcast_slot(p, s + 1) : NULL;
        x = bcast_slot(p, s);
        if (y && x->len) {
            /* Same source, two destinations (AllGather only). */
            dsm_cmd_t c = {.op = DSM_CMD_BCAST,
                           .u.copy = {x->src, x->dst, y->dst, x->len}};
            cb_push(b, &c);
        } else if (x->len) {
            cb_copy(b, x);
        }
        if (x != &p->local)
            cb_signal(b, t, x->m, x->av_out);
        if (y)
            cb_signal(b, t, y->m, y->av_out);
        break;
    }
    case DSM_ALGO_SWAP: {
        x = &p->peer[i];
        dsm_cmd_t c = {.op = DSM_CMD_SWAP,
                       .u.copy = {x->ldst, x->dst, NULL, x->len}};
        cb_push(b, &c);
        cb_signal(b, t, x->m, x->av_out);
        break;
    }
    default:
        break;
    }
}

struct ready_arg {
    const dsm_plan_t *p;
    dsm_sdma_queue_t **q;
    const unsigned char *pend;
    int nq, n;
};

/* Backoff predicate: lends the engines a hand (the caller's own posted
 * commands run meanwhile), then looks for an item whose peers are ready. */
static int any_item_ready(void *v)
{
    const struct ready_arg *a = v;
    int i;

    for (i = 0; i < a->nq; i++)
        dsm_sdma_queue_help(a->q[i]);
    for (i = 0; i < a->n; i++)
        if (a->pend[i] && item_ready(a->p, i))
            return 1;
    return 0;
}

/* SHMEM_SDMA_STATS: where the blocking chain runs' time goes (printed at
 * finalize): entry to the last post (waiting for readies, building and
 * the driver calls, which "post" counts alone), then to the queues'
 * completion, then to the last arrival. */
static struct {
    uint64_t calls, posts, ns_posted, ns_post, ns_queues, ns_arrived;
} run_stats;

static void stats_add(uint64_t *c, uint64_t v)
{
    __atomic_fetch_add(c, v, __ATOMIC_RELAXED);
}

void dsm_chain_stats_print(int rank)
{
    const double c = run_stats.calls ? (double)run_stats.calls : 1.0;
    if (!run_stats.calls)
        return;
    fprintf(stderr,
            "dmashmem: chain stats PE %d: blocking runs %llu, posts %.2f per "
            "run | us per run: to last post %.2f (driver %.2f), to queues "
            "done %.2f, to last arrival %.2f\n",
            rank, (unsigned long long)run_stats.calls,
            (double)run_stats.posts / c, (double)run_stats.ns_posted / c / 1e3,
            (double)run_stats.ns_post / c / 1e3,
            (double)run_stats.ns_queues / c / 1e3,
            (double)run_stats.ns_arrived / c / 1e3);
}

/* A small local block in GPU memory waits for a peer's block to post
 * with on queue 0 (one doorbell for both): it cannot make the call end
 * sooner, and on GPUs every post costs driver calls. Big ones leave at
 * entry and overlap the wait for the readies; in host memory the caller
 * copies its local block itself while it waits (cpu backend). */
static int local_merges(const dsm_plan_t *p)
{
    return p->algo != DSM_ALGO_SWAP && p->local.len &&
           p->local.len * p->local.count <= dsm_env.coll_local_merge_max &&
           !dsm_coll_host(p->local.dst, p->local.src);
}

/* Marks queue qi's pending items that are ready now (pend 2: post them
 * in this round; the readiness is looked at once, so that what the head
 * decides and what is posted agree). 1 when one is ready or none waits. */
static int queue_snapshot(const dsm_plan_t *p, int qi, int nq, int n,
                          unsigned char *pend)
{
    int any = 0, waiting = 0;
    for (int i = qi; i < n; i += nq)
        if (pend[i]) {
            pend[i] = item_ready(p, i) ? 2 : 1;
            any |= pend[i] == 2;
            waiting |= pend[i] == 1;
        }
    return any || !waiting;
}

void dsm_chain_run(dsm_plan_t *p)
{
    dsm_sdma_queue_t *q[DSM_CHAIN_MAXQ];
    uint64_t seq[DSM_CHAIN_MAXQ];
    dsm_team_t *t = p->t;
    cmdbuf_t *b;
    dsm_backoff_t bo = {0};
    unsigned char *pend;
    int i, qi, nq, n, left = 0, first = 1, head = 1, merge;
    const int stats = dsm_env.sdma_stats;
    uint64_t t0 = stats ? dsm_now_ns() : 0, tp = 0, posts = 0;

    /* Ready: my dest may be written from now on. The swap variant sends it
     * from its chain, after the local copies the peer will swap with. */
    if (p->algo != DSM_ALGO_SWAP)
        for (i = 0; i < p->np; i++)
            if (!p->peer[i].ready_sent)
                dsm_chain_signal(t, p->peer[i].m, p->peer[i].rv_out,
                           p->algo != DSM_ALGO_DIRECT || p->mixed);

    if (p->algo == DSM_ALGO_DIRECT) {
        run_direct(p);
        return;
    }
    b = &tls_get()->cb;
    nq = dsm_chain_nqueues(p);
    n = run_nitems(p);
    pend = pend_flags(DSM_MAX(n, 1));
    memset(pend, 1, (size_t)DSM_MAX(n, 1));
    for (qi = 0; qi < nq; qi++) {
        q[qi] = chain_queue(qi);
        seq[qi] = 0;
    }
    merge = local_merges(p);
    struct ready_arg ra = {.p = p, .q = q, .pend = pend, .nq = nq, .n = n};
    for (;;) {
        int moved = 0;
        for (qi = 0; qi < nq; qi++) {
            b->n = 0;
            /* The head is queue 0's local copy (swap: every queue's
             * local copies and readies, at once). */
            int go = queue_snapshot(p, qi, nq, n, pend);
            if (qi == 0 && head && (!merge || go)) {
                build_head(p, 0, nq, b, pend);
                head = 0;
            } else if (first && qi) {
                build_head(p, qi, nq, b, pend);
            }
            for (i = qi; i < n; i += nq)
                if (pend[i] == 2) {
                    build_item(p, i, b);
                    pend[i] = 0;
                }
            if (b->n) {
                uint64_t ts = stats ? dsm_now_ns() : 0;
                seq[qi] = dsm_sdma_post(q[qi], b->c, b->n);
                moved = 1;
                if (stats) {
                    tp = dsm_now_ns();
                    stats_add(&run_stats.ns_post, tp - ts);
                    posts++;
                }
            }
        }
        first = 0;
        for (i = left = 0; i < n; i++)
            left += pend[i];
        if (!left)
            break;
        /* Nobody new is ready: back off (the predicate helps the queues)
         * rather than spin, or on an oversubscribed node the peers we
         * wait for never run. */
        if (!moved)
            dsm_backoff(&bo, &dsm_rt.ctrl->wake_app, any_item_ready, &ra);
        else
            bo.n = 0;
    }
    if (DSM_UNLIKELY(head)) {
        /* Not reached (the head goes with queue 0's first item, or at
         * once when it has none); kept so that no path drops it. */
        b->n = 0;
        build_head(p, 0, nq, b, pend);
        if (b->n)
            seq[0] = dsm_sdma_post(q[0], b->c, b->n);
    }
    struct wait_arg a = {.p = p, .q = q, .seq = seq, .nq = nq};
    wait_all(&a);
    if (stats) {
        uint64_t te = dsm_now_ns();
        stats_add(&run_stats.calls, 1);
        stats_add(&run_stats.posts, posts);
        stats_add(&run_stats.ns_posted, tp - t0);
        stats_add(&run_stats.ns_queues, (a.tq ? a.tq : te) - tp);
        stats_add(&run_stats.ns_arrived, te - (a.tq ? a.tq : te));
    }
}

void dsm_chain_post_gated(dsm_plan_t *p, dsm_sdma_queue_t **q,
                          uint64_t *trigger, uint64_t gate, dsm_inst_t *inst)
{
    cmdbuf_t *b = &tls_get()->cb;
    int i;

    for (i = 0; i < p->nq; i++) {
        b->n = 0;
        build_queue(p, i, p->nq, b, trigger, gate);
        if (p->kdone) {
            cb_signal_dev(b, &p->kdone[i], gate);
            cb_signal_dev(b, &p->kdone_host[i], gate);
        }
        inst->seq[i] = dsm_sdma_post(q[i], b->c, b->n);
    }
    dsm_chain_inst_vals(p, inst);
}

int dsm_chain_await_readies(const dsm_plan_t *p, uint64_t ns)
{
    uint64_t t0 = 0;
    for (int i = 0; i < p->np; i++) {
        const uint64_t *w = dsm_chain_in(p->t, p->peer[i].m);
        while (__atomic_load_n(w, __ATOMIC_ACQUIRE) < p->peer[i].rv_in) {
            uint64_t now = dsm_now_ns();
            if (!t0)
                t0 = now;
            else if (now - t0 > ns)
                return 0;
            dsm_cpu_relax();
        }
    }
    return 1;
}

void dsm_chain_inst_vals(const dsm_plan_t *p, dsm_inst_t *inst)
{
    for (int i = 0; i < p->np; i++) {
        inst->arr[i] = p->peer[i].av_in;
        if (inst->rdy)
            inst->rdy[i] = p->peer[i].rv_out;
    }
}

size_t dsm_chain_gated_len(const dsm_plan_t *p)
{
    cmdbuf_t *b = &tls_get()->cb;
    uint64_t dummy = 0;
    size_t most = 0;

    /* Built as posted (the signal values do not change the count). */
    for (int i = 0; i < p->nq; i++) {
        b->n = 0;
        build_queue(p, i, p->nq, b, &dummy, 1);
        most = DSM_MAX(most, b->n + 2 * (p->kdone != NULL));
    }
    return most;
}

void dsm_chain_wait(dsm_plan_t *p, dsm_sdma_queue_t **q, dsm_inst_t *inst)
{
    struct wait_arg a = {
        .p = p, .q = q, .seq = inst->seq, .nq = p->nq, .arr = inst->arr};
    wait_all(&a);
}
