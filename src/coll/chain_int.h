/*
 * What chain.c (chain storage, the gated chains of persistent requests,
 * waiting) and chain_run.c (the blocking run on the shared chain queues)
 * share: the calling thread's command list and flags, the commands'
 * builders, the broadcast pairs and the wait for a run's completion.
 * Private to src/coll.
 */
#ifndef DSM_COLL_CHAIN_INT_H
#define DSM_COLL_CHAIN_INT_H

#include "coll/chain.h"

#include <stdlib.h>

/* Command list under construction (one queue's chain at a time). */
typedef struct cmdbuf {
    dsm_cmd_t *c;
    size_t n, cap;
} cmdbuf_t;

/* The calling thread's command list, and its n item flags (grown to n;
 * both kept between calls, freed at thread exit or dsm_chain_fini):
 * persistent requests'. */
cmdbuf_t *dsm_chain_cb(void);
unsigned char *dsm_chain_pend(int n);

/* A team's blocking runs' storage (t->store, under t->lock): the plan's
 * parts, the item flags (an item per peer at most) and the command
 * list, kept from one call to the next. */
struct dsm_chain_store {
    dsm_part_t *peers; /* [size - 1] */
    unsigned char *pend; /* [size] */
    cmdbuf_t cb;
};

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
static inline void cb_signal(cmdbuf_t *b, const dsm_team_t *t, int m,
                             uint64_t v)
{
    const dsm_team_peer_t *d = &t->peer[m]; /* a chain's team is mapped */
    dsm_cmd_t c = {
        .op = DSM_CMD_SIGNAL,
        .u.sig = {d->dma, v},
        .wake = d->wake,
        .wake_app = d->wake_app,
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

/* SIGNAL into a device word (no CPU sleeps on it: no wake). */
static inline void cb_signal_dev(cmdbuf_t *b, uint64_t *word, uint64_t v)
{
    dsm_cmd_t c = {.op = DSM_CMD_SIGNAL, .u.sig = {word, v}};
    cb_push(b, &c);
}

/* One chain variant's commands (emit.c), for the blocking run
 * (chain_run.c: the caller posts an item once it has seen the item's
 * readies) and the gated chains (dsm_chain_build_gated: the engines WAIT
 * for them). Items: pcpy/b2b one per peer, bcast one per pair of
 * destination slots, swap one per peer; item i goes to queue i mod nq. */
typedef struct dsm_chain_variant {
    int (*nqueues)(const dsm_plan_t *p); /* before the DSM_CHAIN_MAXQ cap */
    int (*nitems)(const dsm_plan_t *p);
    /* 1 when every receiver item i writes to has sent its ready */
    int (*item_ready)(const dsm_plan_t *p, int i);
    /* gated chains: the ready SIGNALs queue qi sends after its trigger */
    void (*readies)(const dsm_plan_t *p, int qi, int nq, cmdbuf_t *b);
    /* What queue qi runs before its items (the local copy; swap: also
     * the copies into my own slots and their readies). Clears pend[i]
     * of items that need nothing more. */
    void (*head)(const dsm_plan_t *p, int qi, int nq, cmdbuf_t *b,
                 unsigned char *pend);
    /* gated chains: the WAITs for item i's readies */
    void (*wait)(const dsm_plan_t *p, int i, cmdbuf_t *b);
    /* item i's commands: copies and arrival signals */
    void (*item)(const dsm_plan_t *p, int i, cmdbuf_t *b);
    /* the head sends the readies (swap): no ready from the CPU, and the
     * head leaves at once (never held back to merge a local copy) */
    int ready_in_head;
} dsm_chain_variant_t;

/* Indexed by dsm_algo_t; NULL for what is not a chain (direct, eager). */
extern const dsm_chain_variant_t *const dsm_chain_variants[DSM_ALGO_LAST];

/* Queue qi's gated chain of one instance into b (persistent requests,
 * on their own queues): WAIT(*trig >= gate), the readies, the head, then
 * per item the WAITs for its readies and its commands. pend: the
 * caller's scratch of max(nitems, 1) flags. */
void dsm_chain_build_gated(const dsm_plan_t *p, int qi, int nq, cmdbuf_t *b,
                           uint64_t *trig, uint64_t gate, unsigned char *pend);

/* Waiting for a run or an instance: its queues' completion, then the
 * peers' arrivals (unless the chains waited for them themselves). */
struct wait_arg {
    const dsm_plan_t *p;
    dsm_sdma_queue_t **q;
    const uint64_t *seq;
    int nq;
    int next_peer; /* arrivals below this one are in */
    const uint64_t *arr; /* [np] or NULL: p->peer[i].av_in */
    uint64_t tq; /* SHMEM_SDMA_STATS: when the queues were seen done */
    int call;    /* a blocking call's (t->call is its): stall checks run */
};

void dsm_chain_wait_all(struct wait_arg *a);

#endif /* DSM_COLL_CHAIN_INT_H */
