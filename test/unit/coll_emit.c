/*
 * What a collective's plan emits, without a job (src/coll/emit.c): the
 * parts of a blocking fcollect and alltoall(s) (which block goes where,
 * by mapping or by path, and the call's signal values), and the commands
 * of each chain variant, as the blocking run posts them (every peer
 * ready: each queue's head, then its items) and as the gated chains of
 * persistent requests carry them (trigger, readies, head, per item its
 * WAITs and commands). Teams of 2 and 4 PEs, a strided team indexed by
 * world PE (the active sets of the deprecated routines), back-to-back
 * calls, readiness of an item and a ready carrying another call.
 *
 * The team is made up here: its members' mapped heaps, their words for
 * this PE's signals (t->peer, what team.c finds at set-up) and the
 * team's peer_dst (t->coll). Commands are printed as one line per queue
 * and compared with the expected line, so a failure shows both:
 *   C a>b:n      COPY n bytes from a to b
 *   B a>b,c:n    BCAST a to b and c
 *   X a<>b:n     SWAP
 *   Sm=v         SIGNAL member m's word for this PE := v (its wake words)
 *   Wm>=v        WAIT until my word for member m >= v
 *   T>=g         WAIT until the trigger >= g
 * where an address is me+off (this PE's heap) or Pm+off (member m's heap
 * as mapped here; a by-path part's dst is the symmetric address, me+off).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "coll/chain_int.h"

#define MAXM 8
#define HEAP 4096

/* emit.c fails the job on these two; here the test process exits with a
 * status the exit tests expect. */
enum { EXIT_MISMATCH = 3, EXIT_FATAL = 4 };
static uint32_t mismatch_theirs;
void dsm_coll_mismatch(dsm_team_t *t, int m, uint32_t theirs)
{
    (void)t;
    mismatch_theirs = theirs;
    fprintf(stderr, "mismatch: member %d carries digest %u\n", m, theirs);
    exit(EXIT_MISMATCH);
}
void dsm_rt_fatal(const char *routine, const char *fmt, ...)
{
    fprintf(stderr, "fatal in %s: %s\n", routine, fmt);
    exit(EXIT_FATAL);
}

/* ------------------------------------------------------------ a team */

static char heap[HEAP];          /* this PE's symmetric heap */
static char pheap[MAXM][HEAP];   /* member m's, as mapped here */
static uint64_t my_sig[2 * MAXM], sent[2 * MAXM], recv[2 * MAXM];
static uint64_t pword[MAXM][2 * MAXM]; /* member m's team words */
static dsm_wake_t wake[MAXM], wake_app[MAXM];
static dsm_team_peer_t peers[MAXM];
static int pes[MAXM];
static int by_path_member = -1; /* reached by path ("net" ops) */
static dsm_team_t team;
static dsm_part_t parts[MAXM];
static uint64_t trigger;

static char *fake_peer_dst(const char *routine, dsm_team_t *t, int m,
                           void *sym, size_t len, int *by_path)
{
    const size_t off = (size_t)((char *)sym - heap);
    (void)routine;
    ck_assert_msg(off + len <= HEAP, "peer_dst past the heap: %zu + %zu",
                  off, len);
    ck_assert_msg(m != t->my_idx, "peer_dst asked for this PE itself");
    *by_path = m == by_path_member;
    return *by_path ? (char *)sym : pheap[m] + off;
}
static const dsm_coll_ops_t fake_ops = {
    .name = "test", .mapped = 1, .peer_dst = fake_peer_dst, .done = NULL};

/* A team of n members, this PE member me; world PEs start + i * stride;
 * sig_world: indexed by world PE (an active set of npes PEs). */
static dsm_team_t *make_team(int n, int me, int start, int stride,
                             int sig_world, int npes)
{
    memset(&team, 0, sizeof(team));
    memset(my_sig, 0, sizeof(my_sig));
    memset(sent, 0, sizeof(sent));
    memset(recv, 0, sizeof(recv));
    memset(pword, 0, sizeof(pword));
    by_path_member = -1;
    trigger = 0;
    team.size = n;
    team.my_idx = me;
    team.pes = pes;
    for (int i = 0; i < n; i++)
        pes[i] = start + i * stride;
    team.sig_world = sig_world;
    team.sig_stride = sig_world ? npes : n;
    ck_assert_int_le(team.sig_stride, MAXM);
    team.sig = my_sig;
    team.sent = sent;
    team.recv = recv;
    team.coll = &fake_ops;
    team.peer = peers;
    const int at = sig_world ? pes[me] : me;
    for (int m = 0; m < n; m++)
        peers[m] = (dsm_team_peer_t){.dk = dsm_team_sig_idx(&team,
                                                            DSM_CHAN_DMA, m),
                                     .cpu = &pword[m][at],
                                     .dma = &pword[m][team.sig_stride + at],
                                     .wake = &wake[m],
                                     .wake_app = &wake_app[m]};
    team.dig = 1;
    return &team;
}

/* ------------------------------------------------------------ printing */

static void addr(char *s, size_t n, const void *a)
{
    const char *p = a;
    if (p >= heap && p < heap + HEAP) {
        snprintf(s, n, "me+%td", p - heap);
        return;
    }
    for (int m = 0; m < MAXM; m++)
        if (p >= pheap[m] && p < pheap[m] + HEAP) {
            snprintf(s, n, "P%d+%td", m, p - pheap[m]);
            return;
        }
    snprintf(s, n, "?%p", a);
}

/* The member whose word w is: a peer's word for this PE on the DMA
 * channel (SIGNAL) or mine for that member (WAIT); -1 for none. */
static int signal_member(const dsm_team_t *t, const uint64_t *w)
{
    for (int m = 0; m < t->size; m++)
        if (w == t->peer[m].dma)
            return m;
    return -1;
}
static int wait_member(const dsm_team_t *t, const uint64_t *w)
{
    for (int m = 0; m < t->size; m++)
        if (w == &t->sig[t->sig_stride + (t->sig_world ? t->pes[m] : m)])
            return m;
    return -1;
}

/* b's commands as one line. */
static const char *show(const dsm_team_t *t, const cmdbuf_t *b)
{
    static char out[4096];
    char a1[32], a2[32], a3[32];
    size_t k = 0;

    out[0] = 0;
    for (size_t i = 0; i < b->n; i++) {
        const dsm_cmd_t *c = &b->c[i];
        const char *sep = i ? " " : "";
        switch (c->op) {
        case DSM_CMD_COPY:
            addr(a1, sizeof(a1), c->u.copy.src);
            addr(a2, sizeof(a2), c->u.copy.dst);
            k += (size_t)snprintf(out + k, sizeof(out) - k, "%sC %s>%s:%zu",
                                  sep, a1, a2, c->u.copy.len);
            break;
        case DSM_CMD_BCAST:
            addr(a1, sizeof(a1), c->u.copy.src);
            addr(a2, sizeof(a2), c->u.copy.dst);
            addr(a3, sizeof(a3), c->u.copy.dst2);
            k += (size_t)snprintf(out + k, sizeof(out) - k,
                                  "%sB %s>%s,%s:%zu", sep, a1, a2, a3,
                                  c->u.copy.len);
            break;
        case DSM_CMD_SWAP:
            addr(a1, sizeof(a1), c->u.copy.src);
            addr(a2, sizeof(a2), c->u.copy.dst);
            k += (size_t)snprintf(out + k, sizeof(out) - k, "%sX %s<>%s:%zu",
                                  sep, a1, a2, c->u.copy.len);
            break;
        case DSM_CMD_SIGNAL: {
            const int m = signal_member(t, c->u.sig.word);
            ck_assert_msg(m >= 0, "SIGNAL into a word of no member");
            /* The member's engines and threads are woken. */
            ck_assert_ptr_eq(c->wake, &wake[m]);
            ck_assert_ptr_eq(c->wake_app, &wake_app[m]);
            k += (size_t)snprintf(out + k, sizeof(out) - k, "%sS%d=%llu", sep,
                                  m, (unsigned long long)c->u.sig.value);
            break;
        }
        case DSM_CMD_WAIT:
            if (c->u.sig.word == &trigger) {
                k += (size_t)snprintf(out + k, sizeof(out) - k, "%sT>=%llu",
                                      sep,
                                      (unsigned long long)c->u.sig.value);
                break;
            }
            ck_assert_msg(wait_member(t, c->u.sig.word) >= 0,
                          "WAIT on a word that is not mine for a member");
            k += (size_t)snprintf(out + k, sizeof(out) - k, "%sW%d>=%llu",
                                  sep, wait_member(t, c->u.sig.word),
                                  (unsigned long long)c->u.sig.value);
            break;
        default:
            ck_abort_msg("command %u", c->op);
        }
    }
    return out;
}

/* ------------------------------------------------------------ runs */

static cmdbuf_t cb;
static unsigned char pend[MAXM];

/* The commands of each queue against want[qi]: gated 0, the blocking run
 * with every peer ready (the head, then the queue's items: item i on
 * queue i mod nq); gated 1, the gated chain (gate 7). */
static void expect_at(int line, const dsm_plan_t *p, int nq,
                      const char *const *want, int gated)
{
    const dsm_chain_variant_t *v = dsm_chain_variants[p->algo];
    int n = 0;
    if (!gated) {
        ck_assert_msg(v != NULL, "line %d: %s has no commands", line,
                      dsm_algo_name(p->algo));
        ck_assert_msg(v->nqueues(p) == nq, "line %d: %s: %d queues, want %d",
                      line, dsm_algo_name(p->algo), v->nqueues(p), nq);
        n = v->nitems(p);
        memset(pend, 1, sizeof(pend));
    }
    for (int qi = 0; qi < nq; qi++) {
        cb.n = 0;
        if (gated) {
            dsm_chain_build_gated(p, qi, nq, &cb, &trigger, 7, pend);
        } else {
            v->head(p, qi, nq, &cb, pend);
            for (int i = qi; i < n; i += nq)
                if (pend[i])
                    v->item(p, i, &cb);
        }
        ck_assert_msg(!strcmp(show(p->t, &cb), want[qi]),
                      "line %d: %s%s queue %d of %d:\n  got  %s\n  want %s",
                      line, gated ? "gated " : "", dsm_algo_name(p->algo), qi,
                      nq, show(p->t, &cb), want[qi]);
    }
}
#define EXPECT_AT(gated, p, nq, ...)                                           \
    do {                                                                       \
        static const char *const want_[] = {__VA_ARGS__};                      \
        ck_assert_int_eq(sizeof(want_) / sizeof(want_[0]), nq);                \
        expect_at(__LINE__, p, nq, want_, gated);                              \
    } while (0)
#define EXPECT_RUN(p, nq, ...) EXPECT_AT(0, p, nq, __VA_ARGS__)
#define EXPECT_GATED(p, nq, ...) EXPECT_AT(1, p, nq, __VA_ARGS__)

/* An fcollect of nb bytes per member: dest at heap+0 (n blocks), source
 * at heap+2048 (local bytes copied: nb, or 0 in place). */
#define SRC_OFF 2048
static void fcollect(dsm_plan_t *p, dsm_team_t *t, dsm_algo_t algo,
                     size_t nb, int in_place)
{
    const char *src = in_place ? heap + (size_t)t->my_idx * nb
                               : heap + SRC_OFF;
    dsm_plan_fcollect(p, t, algo, "shmem_fcollect", heap, src, nb,
                      in_place ? 0 : nb, parts);
}

/* An alltoall of nb bytes per block (contiguous): dest heap+0, source
 * heap+2048. */
static void alltoall(dsm_plan_t *p, dsm_team_t *t, dsm_algo_t algo,
                     size_t nb)
{
    const dsm_a2a_shape_t s = {.len = nb, .count = 1, .dstr = 1, .sstr = 1,
                               .dblk = nb, .sblk = nb, .dlast = nb};
    dsm_plan_alltoall(p, t, algo, "shmem_alltoall", heap, heap + SRC_OFF, &s,
                      parts);
}

/* ------------------------------------------------------------ plans */

START_TEST(plan_fcollect)
{
    dsm_plan_t p;
    /* 4 PEs, me 1, dig 1: peers in rotation 2, 3, 0; each gets my block
     * at its dest + 1 * 16; ready base + 2 dig + 1 = 3, arrival 4. */
    dsm_team_t *t = make_team(4, 1, 0, 1, 0, 4);
    fcollect(&p, t, DSM_ALGO_DIRECT, 16, 0);
    ck_assert_int_eq(p.np, 3);
    ck_assert_int_eq(p.kind, DSM_COLL_AG);
    ck_assert_ptr_eq(p.local.src, heap + SRC_OFF);
    ck_assert_ptr_eq(p.local.dst, heap + 16);
    ck_assert_uint_eq(p.local.len, 16);
    const int order[] = {2, 3, 0};
    for (int i = 0; i < 3; i++) {
        const dsm_part_t *x = &p.peer[i];
        ck_assert_int_eq(x->m, order[i]);
        ck_assert_ptr_eq(x->src, heap + SRC_OFF);
        ck_assert_ptr_eq(x->dst, pheap[order[i]] + 16);
        ck_assert_uint_eq(x->len, 16);
        ck_assert_uint_eq(x->count, 1);
        ck_assert_int_eq(x->by_path, 0);
        ck_assert_uint_eq(x->rv_out, 3);
        ck_assert_uint_eq(x->av_out, 4);
        ck_assert_uint_eq(x->rv_in, 3);
        ck_assert_uint_eq(x->av_in, 4);
        ck_assert_uint_eq(x->base_in, 0);
        ck_assert_uint_eq(x->x_in, 1);
    }
    /* The team's counters moved by one call: the next starts at 4. */
    for (int m = 0; m < 4; m++) {
        const uint64_t want = m == 1 ? 0 : 4;
        ck_assert_uint_eq(sent[4 + m], want);
        ck_assert_uint_eq(recv[4 + m], want);
        ck_assert_uint_eq(sent[m], 0); /* the CPU channel untouched */
    }
    /* Direct is no chain: the caller copies the parts. */
    ck_assert_ptr_null(dsm_chain_variants[p.algo]);
    ck_assert_ptr_null(dsm_chain_variants[DSM_ALGO_EAGER]);

    /* Back to back, dig 5: base 4, ready 4 + 11, arrival 4 + 12. */
    t->dig = 5;
    fcollect(&p, t, DSM_ALGO_DIRECT, 16, 1);
    ck_assert_uint_eq(p.local.len, 0); /* in place */
    ck_assert_uint_eq(p.peer[0].rv_out, 15);
    ck_assert_uint_eq(p.peer[0].av_out, 16);
    ck_assert_uint_eq(p.peer[2].base_in, 4);
    ck_assert_uint_eq(p.peer[2].rv_in, 15);
    ck_assert_uint_eq(p.peer[2].av_in, 16);
    ck_assert_uint_eq(p.peer[2].x_in, 5);
}
END_TEST

START_TEST(plan_by_path)
{
    dsm_plan_t p;
    /* Member 3 only the network reaches: its dst is the symmetric
     * address here, moved by dsm_path_put (direct path). */
    dsm_team_t *t = make_team(4, 0, 0, 1, 0, 4);
    by_path_member = 3;
    fcollect(&p, t, DSM_ALGO_DIRECT, 8, 0);
    ck_assert_int_eq(p.peer[2].m, 3);
    ck_assert_int_eq(p.peer[2].by_path, 1);
    ck_assert_ptr_eq(p.peer[2].dst, heap + 0);
    ck_assert_int_eq(p.peer[0].by_path, 0);
    ck_assert_ptr_eq(p.peer[0].dst, pheap[1] + 0);

    alltoall(&p, t, DSM_ALGO_DIRECT, 8);
    /* Block m of source (2048 + 8 m) to member m's dest at my index 0. */
    for (int i = 0; i < 3; i++) {
        const int m = i + 1;
        ck_assert_int_eq(p.peer[i].m, m);
        ck_assert_ptr_eq(p.peer[i].src, heap + SRC_OFF + 8 * m);
        ck_assert_ptr_eq(p.peer[i].dst, m == 3 ? heap : pheap[m]);
        ck_assert_int_eq(p.peer[i].by_path, m == 3);
        ck_assert_ptr_eq(p.peer[i].ldst, heap + 8 * m);
        ck_assert_uint_eq(p.peer[i].rv_out, 7); /* second call: 4 + 3 */
    }
    ck_assert_ptr_eq(p.local.src, heap + SRC_OFF);
    ck_assert_ptr_eq(p.local.dst, heap);
}
END_TEST

START_TEST(plan_alltoalls_strided)
{
    dsm_plan_t p;
    /* alltoalls, 2 PEs, me 1: 3 elements of 4 bytes, dest stride 8,
     * source stride 12: block 24 B of dest, 36 of source, 20 written. */
    dsm_team_t *t = make_team(2, 1, 0, 1, 0, 2);
    const dsm_a2a_shape_t s = {.len = 4, .count = 3, .dstr = 8, .sstr = 12,
                               .dblk = 24, .sblk = 36, .dlast = 20};
    dsm_plan_alltoall(&p, t, DSM_ALGO_PCPY, "shmem_alltoalls", heap,
                      heap + SRC_OFF, &s, parts);
    ck_assert_ptr_eq(p.local.src, heap + SRC_OFF + 36);
    ck_assert_ptr_eq(p.local.dst, heap + 24);
    ck_assert_ptr_eq(p.peer[0].src, heap + SRC_OFF);
    ck_assert_ptr_eq(p.peer[0].dst, pheap[0] + 24);
    /* One COPY per element, to and from the strides. */
    EXPECT_RUN(&p, 1,
               "C me+2084>me+24:4 C me+2096>me+32:4 C me+2108>me+40:4 "
               "C me+2048>P0+24:4 C me+2060>P0+32:4 C me+2072>P0+40:4 S0=4");
    /* me 0: block 1 from source + 36, my slot for member 1 (swap) at
     * dest + 24 (a dest block, not a source one). */
    t = make_team(2, 0, 0, 1, 0, 2);
    dsm_plan_alltoall(&p, t, DSM_ALGO_SWAP, "shmem_alltoalls", heap,
                      heap + SRC_OFF, &s, parts);
    ck_assert_ptr_eq(p.peer[0].src, heap + SRC_OFF + 36);
    ck_assert_ptr_eq(p.peer[0].ldst, heap + 24);
    ck_assert_ptr_eq(p.peer[0].dst, pheap[1] + 0);
    ck_assert_int_eq(p.peer[0].sstr, 12);
    ck_assert_int_eq(p.peer[0].dstr, 8);
}
END_TEST

/* ------------------------------------------------------------ chains */

START_TEST(fcollect_2pes)
{
    dsm_plan_t p;
    dsm_team_t *t = make_team(2, 0, 0, 1, 0, 2);
    fcollect(&p, t, DSM_ALGO_PCPY, 64, 0);
    EXPECT_RUN(&p, 1, "C me+2048>me+0:64 C me+2048>P1+0:64 S1=4");
    EXPECT_GATED(&p, 1, "T>=7 S1=3 C me+2048>me+0:64 W1>=3 "
                        "C me+2048>P1+0:64 S1=4");
    t->dig = 0;
    fcollect(&p, t, DSM_ALGO_B2B, 64, 1); /* in place: no local copy */
    EXPECT_RUN(&p, 1, "C me+0>P1+0:64 S1=6");
    /* bcast: my block to my dest and the peer's in one command. */
    t = make_team(2, 1, 0, 1, 0, 2);
    fcollect(&p, t, DSM_ALGO_BCAST, 64, 0);
    EXPECT_RUN(&p, 1, "B me+2048>me+64,P0+64:64 S0=4");
    EXPECT_GATED(&p, 1, "T>=7 S0=3 W0>=3 B me+2048>me+64,P0+64:64 S0=4");
}
END_TEST

START_TEST(fcollect_4pes)
{
    dsm_plan_t p;
    /* me 1: peers 2, 3, 0; my block lands at +32 everywhere. */
    dsm_team_t *t = make_team(4, 1, 0, 1, 0, 4);
    fcollect(&p, t, DSM_ALGO_PCPY, 32, 0);
    EXPECT_RUN(&p, 3, "C me+2048>me+32:32 C me+2048>P2+32:32 S2=4",
               "C me+2048>P3+32:32 S3=4", "C me+2048>P0+32:32 S0=4");
    EXPECT_GATED(&p, 3,
                 "T>=7 S2=3 C me+2048>me+32:32 W2>=3 C me+2048>P2+32:32 S2=4",
                 "T>=7 S3=3 W3>=3 C me+2048>P3+32:32 S3=4",
                 "T>=7 S0=3 W0>=3 C me+2048>P0+32:32 S0=4");
    fcollect(&p, t, DSM_ALGO_B2B, 32, 0);
    EXPECT_RUN(&p, 1,
               "C me+2048>me+32:32 C me+2048>P2+32:32 S2=8 "
               "C me+2048>P3+32:32 S3=8 C me+2048>P0+32:32 S0=8");
    EXPECT_GATED(&p, 1,
                 "T>=7 S2=7 S3=7 S0=7 C me+2048>me+32:32 W2>=7 "
                 "C me+2048>P2+32:32 S2=8 W3>=7 C me+2048>P3+32:32 S3=8 "
                 "W0>=7 C me+2048>P0+32:32 S0=8");
    /* bcast: slots (local, 2), (3, 0), one queue per pair. */
    fcollect(&p, t, DSM_ALGO_BCAST, 32, 0);
    EXPECT_RUN(&p, 2, "B me+2048>me+32,P2+32:32 S2=12",
               "B me+2048>P3+32,P0+32:32 S3=12 S0=12");
    EXPECT_GATED(&p, 2,
                 "T>=7 S2=11 W2>=11 B me+2048>me+32,P2+32:32 S2=12",
                 "T>=7 S3=11 S0=11 W3>=11 W0>=11 "
                 "B me+2048>P3+32,P0+32:32 S3=12 S0=12");
    /* In place: slots (2, 3), (0). */
    fcollect(&p, t, DSM_ALGO_BCAST, 32, 1);
    EXPECT_RUN(&p, 2, "B me+32>P2+32,P3+32:32 S2=16 S3=16",
               "C me+32>P0+32:32 S0=16");
}
END_TEST

START_TEST(alltoall_2pes)
{
    dsm_plan_t p;
    dsm_team_t *t = make_team(2, 0, 0, 1, 0, 2);
    alltoall(&p, t, DSM_ALGO_PCPY, 16);
    /* My block 0 to my dest 0, block 1 to member 1's dest at index 0. */
    EXPECT_RUN(&p, 1, "C me+2048>me+0:16 C me+2064>P1+0:16 S1=4");
    /* swap: the lower member (me, 0) copies block 1 into my own slot 1,
     * sends its ready and swaps the slot with the peer's slot 0 once
     * the peer's ready came. */
    alltoall(&p, t, DSM_ALGO_SWAP, 16);
    EXPECT_RUN(&p, 1, "C me+2048>me+0:16 C me+2064>me+16:16 S1=7 "
                      "X me+16<>P1+0:16 S1=8");
    EXPECT_GATED(&p, 1, "T>=7 C me+2048>me+0:16 C me+2064>me+16:16 S1=7 "
                        "W1>=7 X me+16<>P1+0:16 S1=8");
    /* The higher member copies and signals ready and arrival at once:
     * the lower one swaps. */
    t = make_team(2, 1, 0, 1, 0, 2);
    alltoall(&p, t, DSM_ALGO_SWAP, 16);
    EXPECT_RUN(&p, 1, "C me+2064>me+16:16 C me+2048>me+0:16 S0=3 S0=4");
    alltoall(&p, t, DSM_ALGO_SWAP, 16);
    EXPECT_GATED(&p, 1, "T>=7 C me+2064>me+16:16 C me+2048>me+0:16 S0=7 "
                        "S0=8");
}
END_TEST

START_TEST(alltoall_4pes)
{
    dsm_plan_t p;
    /* me 2: peers 3, 0, 1. */
    dsm_team_t *t = make_team(4, 2, 0, 1, 0, 4);
    alltoall(&p, t, DSM_ALGO_PCPY, 8);
    EXPECT_RUN(&p, 3, "C me+2064>me+16:8 C me+2072>P3+16:8 S3=4",
               "C me+2048>P0+16:8 S0=4", "C me+2056>P1+16:8 S1=4");
    alltoall(&p, t, DSM_ALGO_B2B, 8);
    EXPECT_GATED(&p, 1,
                 "T>=7 S3=7 S0=7 S1=7 C me+2064>me+16:8 W3>=7 "
                 "C me+2072>P3+16:8 S3=8 W0>=7 C me+2048>P0+16:8 S0=8 "
                 "W1>=7 C me+2056>P1+16:8 S1=8");
    /* swap: I swap with 3 (I am the lower); 0 and 1 swap with me. */
    alltoall(&p, t, DSM_ALGO_SWAP, 8);
    EXPECT_RUN(&p, 3,
               "C me+2064>me+16:8 C me+2072>me+24:8 S3=11 X me+24<>P3+16:8 "
               "S3=12",
               "C me+2048>me+0:8 S0=11 S0=12", "C me+2056>me+8:8 S1=11 S1=12");
}
END_TEST

START_TEST(strided_team)
{
    dsm_plan_t p;
    /* An active set of 4 of 8 PEs (start 1, stride 2): members are world
     * PEs 1, 3, 5, 7, words indexed by world PE; me member 1 (PE 3). */
    dsm_team_t *t = make_team(4, 1, 1, 2, 1, 8);
    fcollect(&p, t, DSM_ALGO_B2B, 8, 0);
    /* Counters by world PE: member 2 (PE 5) at 8 + 5. */
    ck_assert_uint_eq(sent[8 + 5], 4);
    ck_assert_uint_eq(sent[8 + 2], 0);
    EXPECT_GATED(&p, 1,
                 "T>=7 S2=3 S3=3 S0=3 C me+2048>me+8:8 W2>=3 "
                 "C me+2048>P2+8:8 S2=4 W3>=3 C me+2048>P3+8:8 S3=4 "
                 "W0>=3 C me+2048>P0+8:8 S0=4");
    /* The WAITs are on my words for PEs 5, 7, 1 on the DMA channel. */
    cb.n = 0;
    dsm_chain_build_gated(&p, 0, 1, &cb, &trigger, 7, pend);
    ck_assert_ptr_eq(cb.c[5].u.sig.word, &my_sig[8 + 5]);
    ck_assert_ptr_eq(cb.c[8].u.sig.word, &my_sig[8 + 7]);
    ck_assert_ptr_eq(cb.c[11].u.sig.word, &my_sig[8 + 1]);
    alltoall(&p, t, DSM_ALGO_PCPY, 8);
    EXPECT_RUN(&p, 3, "C me+2056>me+8:8 C me+2064>P2+8:8 S2=8",
               "C me+2072>P3+8:8 S3=8", "C me+2048>P0+8:8 S0=8");
}
END_TEST

/* ------------------------------------------------------------ readiness */

START_TEST(ready)
{
    dsm_plan_t p;
    dsm_team_t *t = make_team(4, 1, 0, 1, 0, 4);
    t->dig = 2; /* ready 5, arrival 6 */
    fcollect(&p, t, DSM_ALGO_PCPY, 8, 0);
    const dsm_chain_variant_t *v = dsm_chain_variants[p.algo];
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(v->item_ready(&p, i), 0);
    my_sig[4 + 3] = 5; /* member 3's ready: item 1 */
    ck_assert_int_eq(v->item_ready(&p, 0), 0);
    ck_assert_int_eq(v->item_ready(&p, 1), 1);
    my_sig[4 + 0] = 6; /* member 0's arrival already */
    ck_assert_int_eq(v->item_ready(&p, 2), 1);
    /* bcast: item 0 is (local, member 2), item 1 (3, 0). */
    fcollect(&p, t, DSM_ALGO_BCAST, 8, 0);
    v = dsm_chain_variants[p.algo];
    my_sig[4 + 3] = 6 + 5;
    ck_assert_int_eq(v->item_ready(&p, 1), 0); /* 0 not yet */
    my_sig[4 + 0] = 6 + 5;
    ck_assert_int_eq(v->item_ready(&p, 1), 1);
    ck_assert_int_eq(v->item_ready(&p, 0), 0);
    my_sig[4 + 2] = 6 + 5;
    ck_assert_int_eq(v->item_ready(&p, 0), 1);
}
END_TEST

START_TEST(ready_other_call)
{
    dsm_plan_t p;
    dsm_team_t *t = make_team(2, 0, 0, 1, 0, 2);
    t->dig = 2;
    fcollect(&p, t, DSM_ALGO_PCPY, 8, 0);
    /* The peer's ready carries digest 3 (another call): the job fails. */
    my_sig[2 + 1] = 2 * 3 + 1;
    dsm_chain_variants[p.algo]->item_ready(&p, 0);
}
END_TEST

static Suite *coll_emit_suite(void)
{
    Suite *s = suite_create("coll_emit");
    TCase *tc = tcase_create("coll_emit");
    tcase_add_test(tc, plan_fcollect);
    tcase_add_test(tc, plan_by_path);
    tcase_add_test(tc, plan_alltoalls_strided);
    tcase_add_test(tc, fcollect_2pes);
    tcase_add_test(tc, fcollect_4pes);
    tcase_add_test(tc, alltoall_2pes);
    tcase_add_test(tc, alltoall_4pes);
    tcase_add_test(tc, strided_team);
    tcase_add_test(tc, ready);
    tcase_add_exit_test(tc, ready_other_call, EXIT_MISMATCH);
    suite_add_tcase(s, tc);
    return s;
}

/* ready_other_call is an exit test: fork mode. */
DSM_CHECK_MAIN_FORK(coll_emit_suite)
