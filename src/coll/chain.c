/*
 * Command chains of the data-moving collectives (see chain.h for the
 * protocol): the calling thread's plan and command storage, the chains
 * of a persistent request's instance, gated by its trigger (the
 * variant's commands of emit.c, or build_queue_dev on device words;
 * posted by persistent.c on its own queues), and the
 * wait for a run's or an instance's completion and arrivals. The blocking
 * run on the shared chain queues is chain_run.c.
 */
#include "coll/chain_int.h"

#include <string.h>

/* ------------------------------------------------------------ storage */

/* Per-thread plan and command storage, grown on demand and kept between
 * calls (a collective allocates nothing once warm). Freed by the key's
 * destructor when the thread exits, and for the thread that finalizes by
 * dsm_chain_fini: a program that runs collectives from short-lived threads
 * must not leak one set per thread. */
typedef struct chain_tls {
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

void dsm_chain_store_new(dsm_team_t *t)
{
    struct dsm_chain_store *s = calloc(1, sizeof(*s));
    if (s) {
        s->peers = calloc((size_t)t->size, sizeof(*s->peers));
        s->pend = calloc((size_t)t->size, 1);
    }
    if (!s || !s->peers || !s->pend)
        dsm_rt_fatal("shmem_team", "out of memory for a team of %d",
                     t->size);
    t->store = s;
}

void dsm_chain_store_free(dsm_team_t *t)
{
    struct dsm_chain_store *s = t->store;
    if (!s)
        return;
    free(s->peers);
    free(s->pend);
    free(s->cb.c);
    free(s);
    t->store = NULL;
}

unsigned char *dsm_chain_pend(int n)
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

cmdbuf_t *dsm_chain_cb(void)
{
    return &tls_get()->cb;
}

/* ------------------------------------------------------------ layout */

int dsm_chain_nqueues(const dsm_plan_t *p)
{
    const dsm_chain_variant_t *v = dsm_chain_variants[p->algo];
    if (!v)
        return 0; /* direct: the caller */
    return DSM_MAX(1, DSM_MIN(v->nqueues(p), DSM_CHAIN_MAXQ));
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
        cb_copy(b, x);
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

/* Queue qi's gated chain into b: on device signal words (p->dsync,
 * above), else the variant's own commands (emit.c). */
static void build_queue(const dsm_plan_t *p, int qi, int nq, cmdbuf_t *b,
                        uint64_t *trig, uint64_t gate)
{
    if (p->dsync)
        build_queue_dev(p, qi, nq, b, trig, gate);
    else
        dsm_chain_build_gated(
            p, qi, nq, b, trig, gate,
            dsm_chain_pend(DSM_MAX(dsm_chain_variants[p->algo]->nitems(p), 1)));
}

/* ------------------------------------------------------------ waiting */

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
        if (__atomic_load_n(x->in, __ATOMIC_ACQUIRE) < want)
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
                  (unsigned long long)__atomic_load_n(x->in,
                                                      __ATOMIC_ACQUIRE),
                  (unsigned long long)(a->arr ? a->arr[i] : x->av_in),
                  (int)p->dsync);
    }
}

void dsm_chain_wait_all(struct wait_arg *a)
{
    dsm_backoff_t b = {0};
    dsm_coll_stall_t stall = {.n = 0};
    uint64_t t0 = 0;
    while (!all_done(a)) {
        dsm_backoff(&b, &dsm_rt.ctrl->wake_app, all_done, a);
        if (a->call)
            dsm_coll_stall_tick(a->p->t, &stall);
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
    dsm_coll_stall_end(&stall);
}

/* ------------------------------------------------------------ gated */

void dsm_chain_post_gated(dsm_plan_t *p, dsm_sdma_queue_t **q,
                          uint64_t *trigger, uint64_t gate, dsm_inst_t *inst)
{
    cmdbuf_t *b = dsm_chain_cb();
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
    cmdbuf_t *b = dsm_chain_cb();
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
    dsm_chain_wait_all(&a);
}
