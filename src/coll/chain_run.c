/*
 * The blocking run of a collective's plan (dsm_chain_run, chain.h): the
 * direct path, or the chains posted on the shared chain queues.
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
#include "coll/chain_int.h"

#include <stdio.h>
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

/* ------------------------------------------------------------ direct */

/* One block copied by the caller: through the PE's path when it is not
 * mapped here, else with loads and stores. */
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
    dsm_coll_copy_elems(x->dst, x->dstr, x->src, x->sstr, x->len, x->count);
}

/* 1 when some peer still owed a block has signalled ready. */
static int any_ready(void *v)
{
    dsm_plan_t *p = v;
    for (int i = 0; i < p->np; i++) {
        const dsm_part_t *x = &p->peer[i];
        if (x->count && dsm_part_arrived(p, x))
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
    dsm_coll_stall_t stall = {.n = 0};
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
            if (!dsm_part_arrived(p, x)) {
                if (moved || left > 1)
                    continue;
                /* Only this peer is left: wait for anything from it. */
                dsm_coll_wait_ge(t, x->in, x->base_in + 1);
                dsm_part_arrived(p, x);
            }
            part_memcpy(t, x);
            dsm_chain_signal(t, x->m, x->av_out, p->mixed);
            x->count = 0;
            left--;
            moved = 1;
        }
        /* Nobody ready yet: back off (yield, maybe sleep) rather than spin,
         * or on an oversubscribed node the peers we wait for never run. */
        if (!moved && left > 1) {
            dsm_backoff(&bo, &dsm_rt.ctrl->wake_app, any_ready, p);
            dsm_coll_stall_tick(t, &stall);
        } else {
            bo.n = 0;
        }
    }
    dsm_coll_stall_end(&stall);
    struct wait_arg a = {.p = p, .call = 1};
    dsm_chain_wait_all(&a);
}

/* ------------------------------------------------------------ run */

/* Blocking runs post, per queue, what is runnable now and nothing that
 * waits: the variant's head, then each item once its readies came (the
 * variant's commands, emit.c); item i goes to queue i mod nq, as the
 * gated chains spread them. */

struct ready_arg {
    const dsm_plan_t *p;
    const dsm_chain_variant_t *v;
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
        if (a->pend[i] && a->v->item_ready(a->p, i))
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

/* Marks queue qi's pending items that are ready now (pend 2: post them
 * in this round; the readiness is looked at once, so that what the head
 * decides and what is posted agree). 1 when one is ready or none waits. */
static int queue_snapshot(const dsm_plan_t *p, const dsm_chain_variant_t *v,
                          int qi, int nq, int n, unsigned char *pend)
{
    int any = 0, waiting = 0;
    for (int i = qi; i < n; i += nq)
        if (pend[i]) {
            pend[i] = v->item_ready(p, i) ? 2 : 1;
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
    dsm_coll_stall_t stall = {.n = 0};
    unsigned char *pend;
    int i, qi, nq, n, left = 0, first = 1, head = 1, merge;
    const int stats = dsm_env.sdma_stats;
    uint64_t t0 = stats ? dsm_now_ns() : 0, tp = 0, posts = 0;

    const dsm_chain_variant_t *v = dsm_chain_variants[p->algo];

    /* Ready: my dest may be written from now on. The swap variant sends it
     * from its chain, after the local copies the peer will swap with. */
    if (!v || !v->ready_in_head)
        for (i = 0; i < p->np; i++)
            if (!p->peer[i].ready_sent)
                dsm_chain_signal(t, p->peer[i].m, p->peer[i].rv_out,
                                 v != NULL || p->mixed);

    if (!v) {
        run_direct(p);
        return;
    }
    b = &t->store->cb;
    nq = dsm_chain_nqueues(p);
    n = v->nitems(p); /* at most one per peer: pend holds them */
    pend = t->store->pend;
    memset(pend, 1, (size_t)DSM_MAX(n, 1));
    for (qi = 0; qi < nq; qi++) {
        q[qi] = chain_queue(qi);
        seq[qi] = 0;
    }
    /* A small local block in GPU memory waits for a peer's block to post
     * with on queue 0 (one doorbell for both): it cannot make the call
     * end sooner, and on GPUs every post costs driver calls. Big ones
     * leave at entry and overlap the wait for the readies; in host memory
     * the caller copies its local block itself while it waits (cpu
     * backend). */
    merge = !v->ready_in_head && p->local.len &&
            p->local.len * p->local.count <= dsm_env.coll_local_merge_max &&
            !dsm_coll_host(p->local.dst, p->local.src);
    struct ready_arg ra = {
        .p = p, .v = v, .q = q, .pend = pend, .nq = nq, .n = n};
    for (;;) {
        int moved = 0;
        for (qi = 0; qi < nq; qi++) {
            b->n = 0;
            /* The head is queue 0's local copy (swap: every queue's
             * local copies and readies, at once). */
            int go = queue_snapshot(p, v, qi, nq, n, pend);
            if (qi == 0 && head && (!merge || go)) {
                v->head(p, 0, nq, b, pend);
                head = 0;
            } else if (first && qi) {
                v->head(p, qi, nq, b, pend);
            }
            for (i = qi; i < n; i += nq)
                if (pend[i] == 2) {
                    v->item(p, i, b);
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
        if (!moved) {
            dsm_backoff(&bo, &dsm_rt.ctrl->wake_app, any_item_ready, &ra);
            dsm_coll_stall_tick(t, &stall);
        } else {
            bo.n = 0;
        }
    }
    dsm_coll_stall_end(&stall);
    struct wait_arg a = {.p = p, .q = q, .seq = seq, .nq = nq, .call = 1};
    dsm_chain_wait_all(&a);
    if (stats) {
        uint64_t te = dsm_now_ns();
        stats_add(&run_stats.calls, 1);
        stats_add(&run_stats.posts, posts);
        stats_add(&run_stats.ns_posted, tp - t0);
        stats_add(&run_stats.ns_queues, (a.tq ? a.tq : te) - tp);
        stats_add(&run_stats.ns_arrived, te - (a.tq ? a.tq : te));
    }
}
