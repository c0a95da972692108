/*
 * The commands of each chain variant (chain_int.h, dsm_chain_variant_t),
 * written once and used by both runs of a plan: the blocking run on the
 * shared queues (chain_run.c), where the caller has seen an item's
 * readies before it posts the item, and the gated chains of persistent
 * requests (chain.c, dsm_chain_build_gated), where the engines WAIT for
 * them. Where the synchronisation comes from is the only difference: the
 * gated chain adds the readies after its trigger and a WAIT before each
 * item; the commands that move data and signal arrivals are the same.
 *
 * Items: pcpy and b2b one per peer, bcast one per pair of destination
 * slots (slot 0 is the local part when there is one), swap one per peer
 * whose pair this PE swaps (the lower member of each pair).
 *
 * The plans of the blocking AllGather and AlltoAll (which block goes
 * where, and the call's signal values) are built here too, so that
 * test/unit/coll_emit checks a call's plan and commands without a job:
 * what this file reads of a team is its members, its counters, its
 * signal targets (t->peer, found at set-up) and t->coll->peer_dst.
 */
#include "coll/chain_int.h"

/* ------------------------------------------------------------ plans */

void dsm_plan_fcollect(dsm_plan_t *p, dsm_team_t *t, dsm_algo_t algo,
                       const char *routine, char *dest, const char *src,
                       size_t nbytes, size_t local, dsm_part_t *peers)
{
    const int n = t->size, me = t->my_idx;
    char *mine = dest + (size_t)me * nbytes;

    *p = (dsm_plan_t){
        .t = t,
        .kind = DSM_COLL_AG,
        .algo = algo,
        .routine = routine,
        .dig = t->dig,
        .local = {.m = me, .src = src, .dst = mine, .count = 1, .len = local},
        .np = n - 1,
        .peer = peers,
    };
    for (int i = 0; i < n - 1; i++) {
        dsm_part_t *x = &peers[i];
        const int m = (me + 1 + i) % n;
        *x = (dsm_part_t){.m = m, .src = src, .len = nbytes, .count = 1};
        x->dst = t->coll->peer_dst(routine, t, m, mine, nbytes, &x->by_path);
    }
    dsm_plan_sigvals(p);
}

void dsm_plan_alltoall(dsm_plan_t *p, dsm_team_t *t, dsm_algo_t algo,
                       const char *routine, char *dest, const char *src,
                       const dsm_a2a_shape_t *s, dsm_part_t *peers)
{
    const int n = t->size, me = t->my_idx;
    char *mine = dest + (size_t)me * s->dblk;

    *p = (dsm_plan_t){
        .t = t,
        .kind = DSM_COLL_A2A,
        .algo = algo,
        .routine = routine,
        .dig = t->dig,
        .local = {.m = me, .src = src + (size_t)me * s->sblk, .dst = mine,
                  .len = s->len, .count = s->count, .sstr = s->sstr,
                  .dstr = s->dstr},
        .np = n - 1,
        .peer = peers,
    };
    for (int i = 0; i < n - 1; i++) {
        dsm_part_t *x = &peers[i];
        const int m = (me + 1 + i) % n;
        *x = (dsm_part_t){
            .m = m,
            .src = src + (size_t)m * s->sblk,
            .len = s->len,
            .count = s->count,
            .sstr = s->sstr,
            .dstr = s->dstr,
            .ldst = dest + (size_t)m * s->dblk,
        };
        x->dst = t->coll->peer_dst(routine, t, m, mine, s->dlast, &x->by_path);
    }
    dsm_plan_sigvals(p);
}

/* ------------------------------------------------------------ helpers */

/* 1 when a part's receiver allows it to be written (or nothing moves). */
static int part_ready(const dsm_plan_t *p, const dsm_part_t *x)
{
    return x == &p->local || !x->len || !x->count || dsm_part_arrived(p, x);
}

/* ------------------------------------------------------------ pcpy, b2b
 * Per peer: COPY my block into its dest, SIGNAL its arrival word. pcpy
 * spreads the peers over one queue each, b2b puts them all on one. */

static int peers_nitems(const dsm_plan_t *p)
{
    return p->np;
}

static int pcpy_nqueues(const dsm_plan_t *p)
{
    return p->np;
}

static int b2b_nqueues(const dsm_plan_t *p)
{
    return 1;
}

static int peer_ready(const dsm_plan_t *p, int i)
{
    const dsm_part_t *x = &p->peer[i];
    return !x->len || !x->count || dsm_part_arrived(p, x);
}

static void peer_readies(const dsm_plan_t *p, int qi, int nq, cmdbuf_t *b)
{
    for (int i = qi; i < p->np; i += nq)
        cb_signal(b, p->t, p->peer[i].m, p->peer[i].rv_out);
}

/* Queue 0 carries the local copy. */
static void copy_head(const dsm_plan_t *p, int qi, int nq, cmdbuf_t *b,
                      unsigned char *pend)
{
    if (qi == 0 && p->local.len)
        cb_copy(b, &p->local);
}

static void peer_wait(const dsm_plan_t *p, int i, cmdbuf_t *b)
{
    const dsm_part_t *x = &p->peer[i];
    if (x->len && x->count)
        cb_wait(b, (uint64_t *)x->in, x->rv_in);
}

static void copy_item(const dsm_plan_t *p, int i, cmdbuf_t *b)
{
    const dsm_part_t *x = &p->peer[i];
    if (x->len && x->count)
        cb_copy(b, x);
    cb_signal(b, p->t, x->m, x->av_out);
}

/* ------------------------------------------------------------ bcast
 * AllGather only: one BCAST command writes my block to a pair of
 * destination slots (my own dest and a peer's, or two peers'). */

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

static int bcast_nitems(const dsm_plan_t *p)
{
    return (bcast_slots(p) + 1) / 2;
}

static int bcast_ready(const dsm_plan_t *p, int i)
{
    const int nd = bcast_slots(p);
    for (int u = 2 * i; u < 2 * i + 2 && u < nd; u++)
        if (!part_ready(p, bcast_slot(p, u)))
            return 0;
    return 1;
}

static void bcast_readies(const dsm_plan_t *p, int qi, int nq, cmdbuf_t *b)
{
    const int nd = bcast_slots(p);
    for (int s = 2 * qi; s < nd; s += 2 * nq)
        for (int u = s; u < s + 2 && u < nd; u++) {
            const dsm_part_t *x = bcast_slot(p, u);
            if (x != &p->local)
                cb_signal(b, p->t, x->m, x->rv_out);
        }
}

static void bcast_head(const dsm_plan_t *p, int qi, int nq, cmdbuf_t *b,
                       unsigned char *pend)
{
    /* Nothing: the local part is slot 0 of the first item. */
}

static void bcast_wait(const dsm_plan_t *p, int i, cmdbuf_t *b)
{
    const int nd = bcast_slots(p), s = 2 * i;
    const dsm_part_t *x = bcast_slot(p, s);
    const dsm_part_t *y = s + 1 < nd ? bcast_slot(p, s + 1) : NULL;
    if (x != &p->local && x->len)
        cb_wait(b, (uint64_t *)x->in, x->rv_in);
    if (y && y->len)
        cb_wait(b, (uint64_t *)y->in, y->rv_in);
}

static void bcast_item(const dsm_plan_t *p, int i, cmdbuf_t *b)
{
    const int nd = bcast_slots(p), s = 2 * i;
    const dsm_part_t *x = bcast_slot(p, s);
    const dsm_part_t *y = s + 1 < nd ? bcast_slot(p, s + 1) : NULL;
    if (y && x->len) {
        /* Same source, two destinations (AllGather only). */
        dsm_cmd_t c = {.op = DSM_CMD_BCAST,
                       .u.copy = {x->src, x->dst, y->dst, x->len}};
        cb_push(b, &c);
    } else if (x->len) {
        cb_copy(b, x);
    }
    if (x != &p->local)
        cb_signal(b, p->t, x->m, x->av_out);
    if (y)
        cb_signal(b, p->t, y->m, y->av_out);
}

/* ------------------------------------------------------------ swap
 * AlltoAll only: each PE copies its block for peer j into its own dest
 * slot j and sends j its ready; the lower member of each pair then
 * exchanges the two slots in place with one SWAP command once the
 * other's ready came. */

static void noop_readies(const dsm_plan_t *p, int qi, int nq, cmdbuf_t *b)
{
    /* Nothing: swap sends its readies in the head. */
}

/* What queue qi runs at once: the local copy, each peer's block into my
 * own slot followed by my ready, and the arrival for pairs the peer
 * swaps (it only keeps the count; their items need nothing more). */
static void swap_head(const dsm_plan_t *p, int qi, int nq, cmdbuf_t *b,
                      unsigned char *pend)
{
    copy_head(p, qi, nq, b, pend);
    for (int i = qi; i < p->np; i += nq) {
        const dsm_part_t *x = &p->peer[i];
        dsm_part_t mine = *x;
        mine.dst = x->ldst;
        cb_copy(b, &mine);
        cb_signal(b, p->t, x->m, x->rv_out);
        if (x->m < p->t->my_idx) {
            cb_signal(b, p->t, x->m, x->av_out);
            pend[i] = 0;
        }
    }
}

static void swap_item(const dsm_plan_t *p, int i, cmdbuf_t *b)
{
    const dsm_part_t *x = &p->peer[i];
    dsm_cmd_t c = {.op = DSM_CMD_SWAP,
                   .u.copy = {x->ldst, x->dst, NULL, x->len}};
    cb_push(b, &c);
    cb_signal(b, p->t, x->m, x->av_out);
}

/* ------------------------------------------------------------ table */

static const dsm_chain_variant_t v_pcpy = {
    .nqueues = pcpy_nqueues, .nitems = peers_nitems,
    .item_ready = peer_ready, .readies = peer_readies, .head = copy_head,
    .wait = peer_wait, .item = copy_item,
};
static const dsm_chain_variant_t v_b2b = {
    .nqueues = b2b_nqueues, .nitems = peers_nitems,
    .item_ready = peer_ready, .readies = peer_readies, .head = copy_head,
    .wait = peer_wait, .item = copy_item,
};
static const dsm_chain_variant_t v_bcast = {
    .nqueues = bcast_nitems, .nitems = bcast_nitems,
    .item_ready = bcast_ready, .readies = bcast_readies, .head = bcast_head,
    .wait = bcast_wait, .item = bcast_item,
};
static const dsm_chain_variant_t v_swap = {
    .nqueues = pcpy_nqueues, .nitems = peers_nitems,
    .item_ready = peer_ready, .readies = noop_readies, .head = swap_head,
    .wait = peer_wait, .item = swap_item, .ready_in_head = 1,
};

const dsm_chain_variant_t *const dsm_chain_variants[DSM_ALGO_LAST] = {
    [DSM_ALGO_PCPY] = &v_pcpy,
    [DSM_ALGO_B2B] = &v_b2b,
    [DSM_ALGO_BCAST] = &v_bcast,
    [DSM_ALGO_SWAP] = &v_swap,
};

void dsm_chain_build_gated(const dsm_plan_t *p, int qi, int nq, cmdbuf_t *b,
                           uint64_t *trig, uint64_t gate, unsigned char *pend)
{
    const dsm_chain_variant_t *v = dsm_chain_variants[p->algo];
    const int n = v->nitems(p);

    memset(pend, 1, (size_t)DSM_MAX(n, 1));
    cb_wait(b, trig, gate);
    v->readies(p, qi, nq, b);
    v->head(p, qi, nq, b, pend);
    for (int i = qi; i < n; i += nq)
        if (pend[i]) {
            v->wait(p, i, b);
            v->item(p, i, b);
        }
}
