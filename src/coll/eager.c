/*
 * Eager messages: the small collectives on host memory of a team whose
 * members are all mapped here (fcollect, alltoall(s), broadcast,
 * reductions and scans up to dsm_eager.max bytes per message; coll.h).
 *
 * The ready/arrival protocol of the direct path (chain.h) writes each
 * block straight into the peer's dest, so it must first hear that the
 * peer has entered the call (its dest is free): two signals and two
 * one-way trips per pair, and on an oversubscribed node two rounds in
 * which every PE has to be scheduled. Here the sender copies its block
 * into the receiver's eager area instead, which only the library touches,
 * and goes on; the receiver copies it out into its dest. One message per
 * ordered pair and call, one trip.
 *
 * Layout (rt.h): per team slot and sender, a ring of dsm_eager.lines lines
 * of 64 bytes in the receiver's memory, and a word per sender there that
 * counts the lines the receiver has consumed. A message of len bytes takes
 * ceil(len / 56) consecutive lines (wrapping at the ring's end); each line
 * is one word, then 56 bytes of data. The sender writes the first line and
 * its word, k << 24 | digest (k: the message's number on this ordered
 * pair, from 1; digest: the call's, coll.h "argument agreement"), then the
 * other lines' data, then the last line's word (release): the receiver
 * waits for that one (acquire), which makes the whole message visible. A
 * word only ever holds such a value, never data, so a line of an older
 * message (smaller k) never passes for this one's last; a first line with
 * this k and another digest is another call (the job fails, naming both).
 * An 8-byte message is one line: one cache line moves.
 *
 * Room: the sender reuses lines only after the receiver has counted them
 * consumed (it reads the receiver's word when its copy of the count says
 * the ring may be full). A message is at most half a ring, so in an
 * exchange (every member sends to every other) a sender never waits for
 * room: to send call c + 1 it finished call c, which needed the receiver's
 * call-c message, sent after the receiver had consumed everything of
 * call c - 1. A broadcast root, which hears nothing back in the call, may
 * run up to a ring ahead of its members.
 *
 * The counts are private to each PE (t->eg), per member, and like the
 * signal counts never reset while the team lives; a destroyed team's area
 * is zeroed before its slot is handed out again (dsm_eager_clear). The
 * active sets share one slot and one set of counts, indexed by world PE.
 *
 * Broadcast and argument agreement: the members of a broadcast send the
 * root no data, but each still signals it on the CPU channel (carrying
 * its call's digest) once its message came. The root does not wait for
 * those in the call: it looks at them when it next calls anything else on
 * the team (dsm_coll_call -> dsm_eager_flush), so the members' next CPU
 * signals are never mistaken for another call's and a member that made
 * another call (another PE_root, another collective) is still found, at
 * the latest there. The root writes its call's record, which the members'
 * stall checks compare with theirs.
 */
#include "coll/chain.h"

#include <string.h>

dsm_eager_cfg_t dsm_eager;

typedef struct eline {
    uint64_t seq;
    char d[DSM_EAGER_LINE_DATA];
} eline_t;
_Static_assert(sizeof(eline_t) == DSM_CACHELINE, "a line is a cache line");

void dsm_eager_init(void)
{
    const int n = dsm_rt.npes;
    const size_t l = dsm_eager_lines(n);
    const uint64_t env = dsm_env.coll_eager_max;

    dsm_eager.lines = l;
    dsm_eager.area_off =
        DSM_INTERNAL_CTRL_BYTES + DSM_TEAM_SLOTS * DSM_SLOT_BYTES(n);
    dsm_eager.slot_bytes = DSM_EAGER_SLOT_BYTES(n);
    dsm_eager.cons_off = l * (size_t)n * DSM_CACHELINE;
    /* A message fills at most half a ring (see above). auto: the
     * measured default for this node (plan.c: where PEs outnumber the
     * cores each round of the direct path is a scheduling round of every
     * PE, so eager wins up to larger sizes; docs/PERFORMANCE.md). */
    const size_t cap = l / 2 * DSM_EAGER_LINE_DATA;
    const size_t def =
        dsm_coll_eager_max_default(dsm_ncores(), dsm_rt.boot.node_size);
    dsm_eager.max = (size_t)DSM_MIN(env == UINT64_MAX ? def : env, cap);
    dsm_debug("collectives: eager messages up to %zu bytes (%zu-line rings)",
              dsm_eager.max, l);
}

/* ------------------------------------------------------------ places */

/* The index of member m in the counts, and in a receiver's area the index
 * of this PE as sender. */
static inline int eidx(const dsm_team_t *t, int m)
{
    return t->sig_world ? t->pes[m] : m;
}

static inline int my_eidx(const dsm_team_t *t)
{
    return t->sig_world ? dsm_rt.me : t->my_idx;
}

static inline char *area(int pe, int slot)
{
    return (char *)dsm_rt.peer_ctrl[pe] + dsm_eager.area_off +
           (size_t)slot * dsm_eager.slot_bytes;
}

/* On PE pe: the ring that receives sender s's messages. */
static inline eline_t *ring(int pe, int slot, int s)
{
    return (eline_t *)(area(pe, slot) + (size_t)s * dsm_eager.lines *
                                            DSM_CACHELINE);
}

/* On PE pe: the count of sender s's lines it consumed. */
static inline uint64_t *cons(int pe, int slot, int s)
{
    return (uint64_t *)(area(pe, slot) + dsm_eager.cons_off) + s;
}

static inline uint64_t *eg(const dsm_team_t *t, int k, int i)
{
    return &t->eg[(size_t)k * (size_t)t->sig_stride + (size_t)i];
}

static inline uint64_t nlines(size_t len)
{
    return len ? (len + DSM_EAGER_LINE_DATA - 1) / DSM_EAGER_LINE_DATA : 1;
}

/* ------------------------------------------------------------ send */

struct room {
    dsm_team_t *t;
    const uint64_t *word; /* the receiver's consumed count of our lines */
    uint64_t need;
    dsm_coll_stall_t stall;
};

static int room_ok(void *p)
{
    struct room *r = p;
    if (__atomic_load_n(r->word, __ATOMIC_ACQUIRE) >= r->need)
        return 1;
    dsm_coll_stall_tick(r->t, &r->stall);
    return 0;
}

void dsm_eager_send(dsm_team_t *t, int m, const void *src, size_t len)
{
    const int i = eidx(t, m), pe = dsm_team_pe(t, m), me = my_eidx(t);
    const uint64_t L = dsm_eager.lines, nl = nlines(len);
    uint64_t *slines = eg(t, DSM_EG_SLINES, i), *cred = eg(t, DSM_EG_CRED, i);
    const uint64_t pos = *slines;

    /* Lines [pos, pos + nl) are free once the receiver consumed up to
     * pos + nl - L. */
    if (DSM_UNLIKELY(pos + nl > *cred + L)) {
        struct room r = {t, cons(pe, t->slot, me), pos + nl - L, {.n = 0}};
        if (!room_ok(&r)) {
            dsm_rt_wait(room_ok, &r);
            dsm_coll_stall_end(&r.stall);
        }
        *cred = __atomic_load_n(r.word, __ATOMIC_ACQUIRE);
    }
    const uint64_t v = ++*eg(t, DSM_EG_SENT, i) << DSM_DIG_BITS | t->dig;
    eline_t *rg = ring(pe, t->slot, me);
    const char *s = src;
    /* The first line's word at once (a receiver of another call finds it
     * there), the middle lines' data, the last line's word last: its
     * release makes every line before it visible. The middle lines' words
     * keep older messages' numbers: never data, never this message's. */
    eline_t *l = &rg[pos & (L - 1)];
    if (nl == 1) {
        memcpy(l->d, s, len);
        __atomic_store_n(&l->seq, v, __ATOMIC_RELEASE);
    } else {
        memcpy(l->d, s, DSM_EAGER_LINE_DATA);
        __atomic_store_n(&l->seq, v, __ATOMIC_RELEASE);
        size_t off = DSM_EAGER_LINE_DATA;
        for (uint64_t j = 1; j + 1 < nl; j++, off += DSM_EAGER_LINE_DATA)
            memcpy(rg[(pos + j) & (L - 1)].d, s + off, DSM_EAGER_LINE_DATA);
        l = &rg[(pos + nl - 1) & (L - 1)];
        memcpy(l->d, s + off, len - off);
        __atomic_store_n(&l->seq, v, __ATOMIC_RELEASE);
    }
    *slines = pos + nl;
    t->eused = 1;
}

void dsm_eager_notify(dsm_team_t *t)
{
    /* The lines' words before the sleepers' counts (dsm_wake_notify). */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    for (int m = 0; m < t->size; m++)
        if (m != t->my_idx)
            dsm_wake_sleepers(&dsm_rt.peer_ctrl[dsm_team_pe(t, m)]->wake_app);
}

/* ------------------------------------------------------------ receive */

struct msg {
    dsm_team_t *t;
    const eline_t *first, *last;
    uint64_t v;
    int m;
    dsm_coll_stall_t stall;
};

/* 1 when the message is in: its last line's word (the sender's release
 * after every line). Until then the first line's word tells a message of
 * another call (this number, another digest). */
static int msg_in(void *p)
{
    struct msg *w = p;
    if (__atomic_load_n(&w->last->seq, __ATOMIC_ACQUIRE) == w->v)
        return 1;
    uint64_t s = __atomic_load_n(&w->first->seq, __ATOMIC_ACQUIRE);
    if (DSM_UNLIKELY(s != w->v && s >> DSM_DIG_BITS == w->v >> DSM_DIG_BITS))
        dsm_coll_mismatch(w->t, w->m, (uint32_t)s & DSM_DIG_MASK);
    dsm_coll_stall_tick(w->t, &w->stall);
    return 0;
}

void dsm_eager_recv(dsm_team_t *t, int m, void *dst, size_t len)
{
    const int i = eidx(t, m);
    const uint64_t L = dsm_eager.lines;
    uint64_t *rlines = eg(t, DSM_EG_RLINES, i), *recv = eg(t, DSM_EG_RECV, i);
    const eline_t *rg = ring(dsm_rt.me, t->slot, i);
    const uint64_t pos = *rlines, nl = nlines(len);
    struct msg w = {
        .t = t,
        .first = &rg[pos & (L - 1)],
        .last = &rg[(pos + nl - 1) & (L - 1)],
        .v = (*recv + 1) << DSM_DIG_BITS | t->dig,
        .m = m,
    };
    if (!msg_in(&w)) {
        dsm_rt_wait(msg_in, &w);
        dsm_coll_stall_end(&w.stall);
    }
    char *d = dst;
    if (nl == 1) {
        memcpy(d, w.first->d, len);
    } else {
        size_t off = 0;
        for (uint64_t j = 0; j + 1 < nl; j++, off += DSM_EAGER_LINE_DATA)
            memcpy(d + off, rg[(pos + j) & (L - 1)].d, DSM_EAGER_LINE_DATA);
        memcpy(d + off, w.last->d, len - off);
    }
    ++*recv;
    *rlines = pos + nl;
    /* The data is read before the sender may reuse the lines. No wake:
     * in an exchange the sender never waits for room (see above), and a
     * broadcast member's signal to its root wakes it. */
    __atomic_store_n(cons(dsm_rt.me, t->slot, i), *rlines, __ATOMIC_RELEASE);
    t->eused = 1;
}

/* ------------------------------------------------------------ broadcast */

void dsm_eager_flush(dsm_eager_pend_t *p)
{
    dsm_team_t *t = p->t;
    const uint64_t n = p->n;
    const uint32_t dig = p->dig;

    p->t = NULL;
    p->n = 0;
    /* Each member's n-th signal from now carries its broadcast's digest
     * (unless it has gone on since: then a later signal is there). */
    for (int m = 0; m < t->size; m++) {
        if (m == t->my_idx)
            continue;
        const int k = dsm_team_sig_idx(t, DSM_CHAN_CPU, m);
        const uint64_t want = (t->recv[k] + n) << DSM_DIG_BITS;
        uint64_t v = __atomic_load_n(&t->sig[k], __ATOMIC_ACQUIRE);
        if (v < want) {
            dsm_coll_wait_ge(t, &t->sig[k], want);
            v = __atomic_load_n(&t->sig[k], __ATOMIC_ACQUIRE);
        }
        t->recv[k] += n;
        if (DSM_UNLIKELY(v - want != dig && v - want <= DSM_DIG_MASK))
            dsm_coll_mismatch(t, m, (uint32_t)(v - want));
    }
}

void dsm_eager_bcast(dsm_team_t *t, void *dest, const void *src,
                     size_t nbytes, int root, int root_too,
                     const dsm_call_t *call)
{
    if (t->my_idx != root) {
        dsm_coll_call(t, call);
        dsm_eager_recv(t, root, dest, nbytes);
        /* My consumed count and my acknowledgement, then one fence and
         * the root's wake (dsm_team_signal): it may wait for either. */
        dsm_team_signal(t, DSM_CHAN_CPU, root);
        return;
    }
    dsm_eager_pend_t *p = t->bcp;
    const uint32_t dig = !dsm_rt.check ? 0 : dsm_coll_digest(call);
    /* Acks of this PE's earlier broadcasts as root on this team wait, as
     * long as it keeps broadcasting the same call; anything else first
     * looks at them (their digest is checked against one call). */
    if (p->t && (p->t != t || p->dig != dig))
        dsm_eager_flush(p);
    dsm_coll_call_keep(t, call);
    /* The members' stall checks compare their records with the root's. */
    dsm_coll_record(t);
    for (int i = 1; i < t->size; i++)
        dsm_eager_send(t, (root + i) % t->size, src, nbytes);
    dsm_eager_notify(t);
    if (root_too && dest != src)
        memmove(dest, src, nbytes);
    p->t = t;
    p->n++;
    p->dig = t->dig;
    /* The description lives in the caller's frame: gone after return
     * (the record written above describes the call from now on). */
    t->call = NULL;
}

/* ------------------------------------------------------------ teams */

void dsm_eager_clear(dsm_team_t *t)
{
    if (t->eused && dsm_eager.slot_bytes)
        memset(area(dsm_rt.me, t->slot), 0, dsm_eager.slot_bytes);
    t->eused = 0;
}
