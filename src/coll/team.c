/*
 * Teams: the predefined teams, splits, slots, the pairwise signal and the
 * team barrier, and the internal teams of the deprecated active sets.
 *
 * A slot is agreed by the parent team at split: every member publishes its
 * mask of free slots in the exchange words of the parent's slot, the
 * members sync, and each ANDs the masks of all members; a slot free
 * everywhere is the candidate, each member takes it, and a second
 * exchange confirms that all could (threads splitting other parents may
 * have taken it meanwhile; then all retry, slots_reserve). No signal word of a free slot is ever nonzero
 * (the area starts zeroed and destroy zeroes a slot after the team's last
 * barrier), so a new team's first signal can arrive before its receiver
 * has even built the team object.
 */
#include "coll/chain.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctx.h" /* dsm_ctx_new: shmem_team_create_ctx's contexts */
#include "runtime/gpu.h" /* dsm_rt_device_ll_reset */
#include "wait.h"

_Static_assert(sizeof(dsm_ctrl_t) <= DSM_INTERNAL_CTRL_BYTES,
               "the control page outgrew its part of the internal area");
_Static_assert(DSM_CHAN_MAX == 2, "rt.h DSM_SLOT_BYTES assumes 2 channels");
_Static_assert(DSM_TEAM_SLOTS <= 64, "slot masks are one uint64_t");

dsm_team_t dsm_team_world, dsm_team_shared;
DSM_API shmem_team_t SHMEM_TEAM_WORLD = &dsm_team_world;
DSM_API shmem_team_t SHMEM_TEAM_SHARED = &dsm_team_shared;

/* Slots free on this PE (bit set = free), under slot_lock. */
static uint64_t slot_free;
static pthread_mutex_t slot_lock = PTHREAD_MUTEX_INITIALIZER;

/* Active sets: one cache of internal teams sharing one slot and one pair of
 * counter arrays indexed by world PE. */
static dsm_team_t *aset_list;
static uint64_t *aset_sent, *aset_recv, *aset_eg;
static dsm_eager_pend_t aset_bcp;
/* Changes (by 2: odd, never 0) at every init and finalize, when the
 * cached teams go (dsm_team_aset_gen). */
static uint64_t aset_gen = 1;

uint64_t dsm_team_aset_gen(void)
{
    return __atomic_load_n(&aset_gen, __ATOMIC_ACQUIRE);
}
static pthread_mutex_t aset_lock = PTHREAD_MUTEX_INITIALIZER;

/* ------------------------------------------------------------ slots */

static char *slot_base(int pe, int slot)
{
    return (char *)dsm_rt.peer_ctrl[pe] + DSM_INTERNAL_CTRL_BYTES +
           (size_t)slot * DSM_SLOT_BYTES(dsm_rt.npes);
}

static uint64_t *slot_sig(int pe, int slot)
{
    return (uint64_t *)slot_base(pe, slot) + DSM_SLOT_HDR_WORDS;
}

static void slot_clear(int slot)
{
    /* Only this PE's own words, after the team's last barrier. */
    memset(slot_base(dsm_rt.me, slot), 0, DSM_SLOT_BYTES(dsm_rt.npes));
}

/* ------------------------------------------------------------ signals */

void dsm_team_unreachable(const dsm_team_t *t, int m)
{
    dsm_rt_fatal("collective", "PE %d is not reachable (no shared memory "
                 "path to its team words)", t->pes[m]);
}

/* Each member's words for our signals and its wake words, as mapped
 * here (NULL words for a member only the network reaches). */
static void peers_setup(dsm_team_t *t)
{
    const int at = t->sig_world ? dsm_rt.me : t->my_idx;
    t->peer = calloc((size_t)t->size, sizeof(*t->peer));
    if (!t->peer)
        dsm_rt_fatal("shmem_team", "out of memory for %d members", t->size);
    for (int m = 0; m < t->size; m++) {
        const int pe = t->pes[m];
        dsm_ctrl_t *c = dsm_rt.peer_ctrl[pe];
        t->peer[m].dk = dsm_team_sig_idx(t, DSM_CHAN_DMA, m);
        if (!c || !dsm_coll_pe_mapped(pe))
            continue;
        uint64_t *w = slot_sig(pe, t->slot) + at;
        t->peer[m] = (dsm_team_peer_t){.dk = t->peer[m].dk,
                                       .cpu = w,
                                       .dma = w + t->sig_stride,
                                       .wake = &c->wake,
                                       .wake_app = &c->wake_app};
    }
}

void dsm_team_path_signal(dsm_team_t *t, int chan, int m, uint64_t v)
{
    /* The peer's word is at the offset of ours: name it by our address. */
    uint64_t *sym = slot_sig(dsm_rt.me, t->slot) + chan * t->sig_stride +
                    (t->sig_world ? dsm_rt.me : t->my_idx);
    dsm_path_signal(&dsm_ctx_default, sym, v, 0, t->pes[m], "collective");
}

uint64_t *dsm_team_slot_hdr(const dsm_team_t *t, int pe)
{
    return dsm_coll_pe_mapped(pe) && dsm_rt.peer_ctrl[pe]
               ? (uint64_t *)slot_base(pe, t->slot)
               : NULL;
}

/* The CPU channel's k-th signal of a pair carries the call's digest in
 * its low bits (coll.h "argument agreement"). */
void dsm_team_signal(dsm_team_t *t, int chan, int m)
{
    int i = dsm_team_sig_idx(t, chan, m);
    uint64_t v = ++t->sent[i] << DSM_DIG_BITS | t->dig;
    if (!dsm_coll_pe_mapped(t->pes[m])) {
        dsm_team_path_signal(t, chan, m, v);
        return;
    }
    const dsm_team_peer_t *d = &t->peer[m];
    dsm_store_rel(dsm_team_peer_sig(t, chan, m), v);
    dsm_wake_notify(d->wake_app);
    if (chan == DSM_CHAN_DMA)
        dsm_wake_notify(d->wake); /* engines may WAIT on it */
}

void dsm_team_wait(dsm_team_t *t, int chan, int m)
{
    int i = dsm_team_sig_idx(t, chan, m);
    const uint64_t want = ++t->recv[i] << DSM_DIG_BITS;
    uint64_t v = __atomic_load_n(&t->sig[i], __ATOMIC_ACQUIRE);
    if (DSM_UNLIKELY(v < want)) {
        dsm_coll_wait_ge(t, &t->sig[i], want);
        v = __atomic_load_n(&t->sig[i], __ATOMIC_ACQUIRE);
    }
    /* The k-th signal itself (not a later one: the member may already be
     * in its next call) carries the member's digest of this call. */
    if (DSM_UNLIKELY(v - want != t->dig && v - want <= DSM_DIG_MASK))
        dsm_coll_mismatch(t, m, (uint32_t)(v - want));
}

void dsm_team_sync(dsm_team_t *t)
{
    const int n = t->size, me = t->my_idx;

    /* Stores before the barrier are visible to every member after it. */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    /* Dissemination: round k signals member me + 2^k and waits for member
     * me - 2^k. The distances are distinct mod n, so a pair meets at most
     * once per barrier and the pairwise counts stay in step. */
    for (int d = 1; d < n; d <<= 1) {
        dsm_team_signal(t, DSM_CHAN_CPU, (me + d) % n);
        dsm_team_wait(t, DSM_CHAN_CPU, (me - d + n) % n);
    }
}

/* ------------------------------------------------------------ objects */

/* User teams live in one array, one object per slot (a PE is in at most
 * one team per slot), so that a handle is checked without reading
 * through it (dsm_team_check): SHMEM_TEAM_WORLD, SHMEM_TEAM_SHARED or an
 * element of this array, with the magic of a live team. */
static dsm_team_t user_teams[DSM_TEAM_SLOTS];

static dsm_team_t *team_alloc(int size, int slot)
{
    dsm_team_t *t = &user_teams[slot];
    memset(t, 0, sizeof(*t));
    t->pes = calloc((size_t)size, sizeof(int));
    t->sent = calloc((size_t)DSM_CHAN_MAX * (size_t)size, sizeof(uint64_t));
    t->recv = calloc((size_t)DSM_CHAN_MAX * (size_t)size, sizeof(uint64_t));
    t->eg = calloc((size_t)DSM_EG_N * (size_t)size, sizeof(uint64_t));
    if (!t->pes || !t->sent || !t->recv || !t->eg) {
        free(t->pes);
        free(t->sent);
        free(t->recv);
        free(t->eg);
        return NULL;
    }
    return t;
}

static void team_free(dsm_team_t *t)
{
    if (!t->aset) {
        free(t->sent);
        free(t->recv);
        free(t->eg);
    }
    free(t->pes);
    free(t->peer);
    t->peer = NULL;
    dsm_chain_store_free(t);
    __atomic_store_n(&t->magic, 0, __ATOMIC_RELEASE);
    pthread_mutex_destroy(&t->lock);
    if (t->aset)
        free(t);
}

/* Fill in what follows from pes[], size and slot. */
static void team_setup(dsm_team_t *t, int slot)
{
    int i;

    t->slot = slot;
    t->my_idx = -1;
    for (i = 0; i < t->size; i++)
        if (t->pes[i] == dsm_rt.me)
            t->my_idx = i;
    t->start = t->pes[0];
    t->stride = t->size > 1 ? t->pes[1] - t->pes[0] : 1;
    for (i = 2; i < t->size; i++)
        if (t->pes[i] - t->pes[i - 1] != t->stride)
            t->stride = 0;
    if (!t->sig_world)
        t->sig_stride = t->size;
    t->sig = slot_sig(dsm_rt.me, slot);
    if (!t->bcp)
        t->bcp = &t->bcp_own;
    t->xchg = (uint64_t *)slot_base(dsm_rt.me, slot);
    t->caps = dsm_path_caps_of(&dsm_paths, t->pes, t->size);
    t->coll = dsm_coll_ops_for(t->caps);
    peers_setup(t);
    dsm_chain_store_new(t);
    pthread_mutex_init(&t->lock, NULL);
    t->magic = DSM_TEAM_MAGIC;
}

dsm_team_t *dsm_team_check(shmem_team_t team, const char *routine)
{
    dsm_team_t *t = (dsm_team_t *)team;
    DSM_CHECK_INIT(routine);
    if (DSM_UNLIKELY(team == SHMEM_TEAM_INVALID))
        dsm_rt_fatal(routine, "invalid team (SHMEM_TEAM_INVALID)");
    /* Only where a handle can point: the predefined teams or a slot of
     * user_teams (above), never read through before that. */
    const uintptr_t off = (uintptr_t)t - (uintptr_t)user_teams;
    if (DSM_UNLIKELY(t != &dsm_team_world && t != &dsm_team_shared &&
                     (off >= sizeof(user_teams) ||
                      off % sizeof(dsm_team_t) != 0)))
        dsm_rt_fatal(routine, "%p is not a team (not SHMEM_TEAM_WORLD, "
                     "SHMEM_TEAM_SHARED or a team a split returned)",
                     (void *)team);
    if (DSM_UNLIKELY(__atomic_load_n(&t->magic, __ATOMIC_ACQUIRE) !=
                     DSM_TEAM_MAGIC))
        dsm_rt_fatal(routine, "team %p was destroyed (shmem_team_destroy)",
                     (void *)team);
    return t;
}

/* Team queries tolerate SHMEM_TEAM_INVALID (the spec's -1 returns). */
static dsm_team_t *team_or_null(shmem_team_t team, const char *routine)
{
    DSM_CHECK_INIT(routine);
    if (team == SHMEM_TEAM_INVALID)
        return NULL;
    return dsm_team_check(team, routine);
}

/* ------------------------------------------------------------ init */

static dsm_status_t predefined(dsm_team_t *t, int slot, int n, const int *pes)
{
    memset(t, 0, sizeof(*t));
    t->size = n;
    t->pes = malloc((size_t)n * sizeof(int));
    t->sent = calloc((size_t)DSM_CHAN_MAX * (size_t)n, sizeof(uint64_t));
    t->recv = calloc((size_t)DSM_CHAN_MAX * (size_t)n, sizeof(uint64_t));
    t->eg = calloc((size_t)DSM_EG_N * (size_t)n, sizeof(uint64_t));
    if (!t->pes || !t->sent || !t->recv || !t->eg)
        return DSM_ERR_NOMEM;
    memcpy(t->pes, pes, (size_t)n * sizeof(int));
    t->predefined = 1;
    team_setup(t, slot);
    return DSM_OK;
}

dsm_status_t dsm_coll_init(void)
{
    const int n = dsm_rt.npes;
    int *pes = calloc((size_t)n, sizeof(int)), nshared = 0;
    dsm_status_t st;

    if (!pes)
        return DSM_ERR_NOMEM;
    for (int pe = 0; pe < n; pe++)
        pes[pe] = pe;
    st = predefined(&dsm_team_world, DSM_SLOT_WORLD, n, pes);
    /* SHARED: the PEs whose heap this PE maps, in world order. */
    for (int pe = 0; pe < n; pe++)
        if (dsm_rt.segs[DSM_SEG_HEAP].peer[pe])
            pes[nshared++] = pe;
    if (st == DSM_OK)
        st = predefined(&dsm_team_shared, DSM_SLOT_SHARED, nshared, pes);
    free(pes);
    aset_sent = calloc((size_t)DSM_CHAN_MAX * (size_t)n, sizeof(uint64_t));
    aset_recv = calloc((size_t)DSM_CHAN_MAX * (size_t)n, sizeof(uint64_t));
    aset_eg = calloc((size_t)DSM_EG_N * (size_t)n, sizeof(uint64_t));
    if (!aset_sent || !aset_recv || !aset_eg)
        st = DSM_ERR_NOMEM;
    memset(&aset_bcp, 0, sizeof(aset_bcp));
    __atomic_fetch_add(&aset_gen, 2, __ATOMIC_RELEASE);
    dsm_eager_init();
    slot_free = (DSM_TEAM_SLOTS == 64 ? ~0ull : (1ull << DSM_TEAM_SLOTS) - 1) &
                ~((1ull << DSM_SLOT_FIRST_USER) - 1);
    if (st != DSM_OK) {
        dsm_log_error("shmem_init: cannot set up the predefined teams: %s",
                      dsm_status_str(st));
        return st;
    }
    /* The runtime's collective calls (allocation, finalize) run on the
     * world team from now on, checked like every collective. */
    __atomic_store_n(&dsm_rt.world_sync, dsm_coll_sync_world,
                     __ATOMIC_RELEASE);
    return dsm_coll_bcast_init(); /* says what is wrong itself */
}

void dsm_coll_fini(void)
{
    __atomic_store_n(&dsm_rt.world_sync, NULL, __ATOMIC_RELEASE);
    dsm_coll_persist_fini();
    __atomic_fetch_add(&aset_gen, 2, __ATOMIC_RELEASE);
    while (aset_list) {
        dsm_team_t *t = aset_list;
        aset_list = t->next;
        team_free(t);
    }
    free(aset_sent);
    free(aset_recv);
    free(aset_eg);
    aset_sent = aset_recv = aset_eg = NULL;
    team_free(&dsm_team_world);
    team_free(&dsm_team_shared);
    dsm_coll_bcast_fini();
    if (dsm_env.sdma_stats)
        dsm_chain_stats_print(dsm_rt.me);
    dsm_chain_fini();
}

/* ------------------------------------------------------------ splits */

/* AND of every parent member's v. Collective over parent, whose lock the
 * caller holds. Two exchange words alternate, so a member that runs ahead
 * into the next exchange never overwrites a word another member may still
 * read: it had to pass this exchange's barrier first, which that member
 * enters only after reading. */
static uint64_t xchg_and(dsm_team_t *p, uint64_t v)
{
    uint64_t *mine = &p->xchg[p->nxchg & 1], all;

    __atomic_store_n(mine, v, __ATOMIC_RELAXED);
    dsm_team_sync(p);
    all = ~0ull;
    for (int m = 0; m < p->size; m++) {
        int pe = p->pes[m];
        if (!dsm_coll_pe_mapped(pe)) { /* the same word of ours names theirs */
            all &= dsm_path_load64(&mine[0], pe, "shmem_team_split");
            continue;
        }
        const uint64_t *w = (const uint64_t *)slot_base(pe, p->slot);
        all &= __atomic_load_n(&w[p->nxchg & 1], __ATOMIC_RELAXED);
    }
    p->nxchg++;
    return all;
}

static uint64_t slots_free_now(void)
{
    pthread_mutex_lock(&slot_lock);
    uint64_t f = slot_free;
    pthread_mutex_unlock(&slot_lock);
    return f;
}

static void slot_give(int slot)
{
    pthread_mutex_lock(&slot_lock);
    slot_free |= 1ull << slot;
    pthread_mutex_unlock(&slot_lock);
}

/* Take every slot of want if all are still free here; else none. */
static int slots_try_take(uint64_t want)
{
    int ok;
    pthread_mutex_lock(&slot_lock);
    ok = (slot_free & want) == want;
    if (ok)
        slot_free &= ~want;
    pthread_mutex_unlock(&slot_lock);
    return ok;
}

/* n slots of mask into out[], searching upwards from bit `from` and
 * wrapping; 0 if fewer are free. */
static int slots_pick(uint64_t mask, int n, int from, int *out)
{
    uint64_t rot = from ? (mask >> from) | (mask << (64 - from)) : mask;
    for (int i = 0; i < n; i++) {
        if (!rot)
            return 0;
        out[i] = (__builtin_ctzll(rot) + from) & 63;
        rot &= rot - 1;
    }
    return 1;
}

/* Agree on n new slots over parent p and reserve them on this PE when
 * `member` (it joins a new team). Threads may split different parents at
 * once, so agreement and reservation cannot be one step: another split
 * can take a slot between this PE publishing its free mask and taking
 * the slot the members agreed on. So: agree on candidates from the free
 * masks, take them here (atomically), and agree again that every member
 * could; if one could not, all give back and try again from fresh masks.
 * Splits of different parents start their search at different slots
 * (the parent's slot decides), and a retry waits a while that differs
 * per PE and thread, so two splits that keep colliding drift apart.
 * Returns 0 when the parent has no n slots free on every member. */
static int slots_reserve(dsm_team_t *p, int n, int member, int *out)
{
    unsigned seed = (unsigned)dsm_rt.me * 2654435761u ^
                    (unsigned)(uintptr_t)&seed;

    for (unsigned attempt = 0;; attempt++) {
        uint64_t want = 0;
        int ok, i;

        pthread_mutex_lock(&p->lock);
        uint64_t mask = xchg_and(p, slots_free_now());
        if (!slots_pick(mask, n, (p->slot * 37 + (int)attempt * 11) & 63,
                        out)) {
            pthread_mutex_unlock(&p->lock);
            return 0;
        }
        for (i = 0; i < n; i++)
            want |= 1ull << out[i];
        ok = !member || slots_try_take(want);
        int all = (int)(xchg_and(p, (uint64_t)ok) & 1);
        pthread_mutex_unlock(&p->lock);
        if (all)
            return 1;
        if (ok && member)
            for (i = 0; i < n; i++)
                slot_give(out[i]);
        seed = seed * 1103515245u + 12345u;
        usleep(((seed >> 16) % 200u + 1u) * DSM_MIN(attempt + 1, 10u));
    }
}

static void apply_config(dsm_team_t *t, const shmem_team_config_t *config,
                         long mask, const char *routine)
{
    t->config_mask = 0;
    t->config.num_contexts = 0;
    if (config && (mask & SHMEM_TEAM_NUM_CONTEXTS)) {
        t->config.num_contexts = config->num_contexts;
        t->config_mask |= SHMEM_TEAM_NUM_CONTEXTS;
    } else if (config) {
        /* Valid (the mask picks the fields; 0 means the defaults), but a
         * program that expected the fields to apply, as SOS's
         * shmem_team_get_config test does, learns here why they did not. */
        dsm_debug("%s: config given with config_mask 0x%lx: its "
                  "num_contexts is not used, the team has the default 0",
                  routine, mask);
    }
}

/* A split fails (the spec's non-zero return) for want of team slots: the
 * parent's member 0 says why, once per process (every later failure under
 * SHMEM_DEBUG), since a program that splits in a loop and never destroys
 * would otherwise only see SHMEM_TEAM_INVALID. */
static void no_slots(const dsm_team_t *p, int n, const char *routine)
{
    static int said;
    int live = 0;
    uint64_t f = slots_free_now();

    for (int s = DSM_SLOT_FIRST_USER; s < DSM_TEAM_SLOTS; s++)
        live += !(f >> s & 1);
    if (p->my_idx == 0 &&
        (dsm_env.debug || !__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED)))
        dsm_log_error("%s: returns -1: %s team slot%s free on every PE of "
                      "the parent team (this PE is in %d team%s besides "
                      "SHMEM_TEAM_WORLD and SHMEM_TEAM_SHARED, at most %d); "
                      "destroy teams no longer used (shmem_team_destroy)",
                      routine, n == 1 ? "no" : "fewer than two",
                      n == 1 ? " is" : "s are", live, live == 1 ? "" : "s",
                      DSM_TEAM_SLOTS - DSM_SLOT_FIRST_USER);
}

/* A new team of the given parent indices, this PE among them. */
static dsm_team_t *team_new(dsm_team_t *parent, int size, const int *idx,
                            int slot, const shmem_team_config_t *config,
                            long mask, const char *routine)
{
    dsm_team_t *t = team_alloc(size, slot);
    if (!t)
        dsm_rt_fatal(routine, "out of memory for a team of %d PEs", size);
    t->size = size;
    for (int i = 0; i < size; i++)
        t->pes[i] = parent->pes[idx[i]];
    t->parent = parent;
    team_setup(t, slot);
    apply_config(t, config, mask, routine);
    return t; /* the slot was reserved by slots_reserve */
}

int pshmem_team_split_strided(shmem_team_t parent_team, int start, int stride,
                              int size, const shmem_team_config_t *config,
                              long config_mask, shmem_team_t *new_team)
{
    static const char routine[] = "shmem_team_split_strided";
    dsm_team_t *p;
    int slot, *idx, mine = -1, i;

    DSM_CHECK_INIT(routine);
    if (!new_team)
        dsm_rt_fatal(routine, "new_team is NULL");
    *new_team = SHMEM_TEAM_INVALID;
    if (parent_team == SHMEM_TEAM_INVALID)
        return -1;
    p = dsm_team_check(parent_team, routine);
    /* Recorded before anything may return: a member whose triplet differs
     * is found by the others' stall check (agree.c). */
    dsm_coll_note(p, DSM_CALL(routine, DSM_CALL_SPLIT, 0, start, stride,
                              size));
    /* Every PE sees the same triplet, so every PE rejects it alike without
     * a word exchanged. 1.6: all of start + i*stride within the parent
     * (no wrap-around); stride 0 only with size 1. */
    long last = (long)start + (long)stride * (long)(size - 1);
    if (size < 1 || size > p->size || start < 0 || start >= p->size ||
        last < 0 || last >= p->size || (stride == 0 && size != 1)) {
        dsm_debug("%s: invalid triplet start %d stride %d size %d for a "
                  "parent team of %d PEs", routine, start, stride, size,
                  p->size);
        return -1;
    }
    idx = malloc((size_t)size * sizeof(int));
    if (!idx)
        dsm_rt_fatal(routine, "out of memory");
    for (i = 0; i < size; i++) {
        idx[i] = start + i * stride;
        if (idx[i] == p->my_idx)
            mine = i;
    }
    if (!slots_reserve(p, 1, mine >= 0, &slot)) {
        no_slots(p, 1, routine);
        free(idx);
        return -1;
    }
    if (mine >= 0)
        *new_team = team_new(p, size, idx, slot, config, config_mask, routine);
    free(idx);
    return 0;
}
DSM_WEAK(team_split_strided)

int pshmem_team_split_2d(shmem_team_t parent_team, int xrange,
                         const shmem_team_config_t *xaxis_config,
                         long xaxis_mask, shmem_team_t *xaxis_team,
                         const shmem_team_config_t *yaxis_config,
                         long yaxis_mask, shmem_team_t *yaxis_team)
{
    static const char routine[] = "shmem_team_split_2d";
    dsm_team_t *p;
    int slots[2], *idx, n, me, x, y, nx, ny, i;

    DSM_CHECK_INIT(routine);
    if (!xaxis_team || !yaxis_team)
        dsm_rt_fatal(routine, "%s is NULL",
                     !xaxis_team ? "xaxis_team" : "yaxis_team");
    *xaxis_team = *yaxis_team = SHMEM_TEAM_INVALID;
    if (parent_team == SHMEM_TEAM_INVALID)
        return -1;
    p = dsm_team_check(parent_team, routine);
    dsm_coll_note(p, DSM_CALL(routine, DSM_CALL_SPLIT, 0, xrange, 0, 0));
    if (xrange < 1) {
        dsm_debug("%s: xrange %d must be positive", routine, xrange);
        return -1;
    }
    n = p->size;
    if (xrange > n)
        xrange = n; /* one row: the x team is the whole parent */
    if (!slots_reserve(p, 2, 1, slots)) {
        no_slots(p, 2, routine);
        return -1;
    }
    /* (x, y) = (i mod xrange, i / xrange); the last row may be short, so
     * the y teams differ in size by up to one. Every disjoint x team shares
     * slot 0 and every y team slot 1. */
    me = p->my_idx;
    x = me % xrange;
    y = me / xrange;
    idx = malloc((size_t)n * sizeof(int));
    if (!idx)
        dsm_rt_fatal(routine, "out of memory");
    nx = 0;
    for (i = y * xrange; i < n && i < (y + 1) * xrange; i++)
        idx[nx++] = i;
    *xaxis_team = team_new(p, nx, idx, slots[0], xaxis_config, xaxis_mask,
                           routine);
    ny = 0;
    for (i = x; i < n; i += xrange)
        idx[ny++] = i;
    *yaxis_team = team_new(p, ny, idx, slots[1], yaxis_config, yaxis_mask,
                           routine);
    free(idx);
    return 0;
}
DSM_WEAK(team_split_2d)

void pshmem_team_destroy(shmem_team_t team)
{
    static const char routine[] = "shmem_team_destroy";
    dsm_team_t *t;

    if (team == SHMEM_TEAM_INVALID) {
        DSM_CHECK_INIT(routine);
        return; /* nothing to destroy: the PE was not in the new team */
    }
    t = dsm_team_check(team, routine);
    if (t->predefined)
        dsm_rt_fatal(routine, "cannot destroy the predefined team %s",
                     t == &dsm_team_world ? "SHMEM_TEAM_WORLD"
                                          : "SHMEM_TEAM_SHARED");
    /* Collective: after the last barrier no member sends on this team
     * again, and every signal to this PE has arrived, so the words can be
     * zeroed and the slot handed back. */
    pthread_mutex_lock(&t->lock);
    dsm_coll_call(t, DSM_CALL(routine, DSM_CALL_DESTROY, 0, 0, 0, 0));
    dsm_team_sync(t);
    pthread_mutex_unlock(&t->lock);
    dsm_team_release(t);
}
DSM_WEAK(team_destroy)

void dsm_team_release(dsm_team_t *t)
{
    /* The LL form's parity of the slot back to 0 for the next team (its
     * calls completed: a team is destroyed after its streams ran them). */
    if (t->ll_used)
        dsm_rt_device_ll_reset(t->slot);
    slot_clear(t->slot);
    dsm_eager_clear(t);
    slot_give(t->slot);
    team_free(t);
}

/* ------------------------------------------------------------ queries */

int pshmem_team_my_pe(shmem_team_t team)
{
    dsm_team_t *t = team_or_null(team, "shmem_team_my_pe");
    return t ? t->my_idx : -1;
}
DSM_WEAK(team_my_pe)

int pshmem_team_n_pes(shmem_team_t team)
{
    dsm_team_t *t = team_or_null(team, "shmem_team_n_pes");
    return t ? t->size : -1;
}
DSM_WEAK(team_n_pes)

int pshmem_team_get_config(shmem_team_t team, long config_mask,
                           shmem_team_config_t *config)
{
    dsm_team_t *t = team_or_null(team, "shmem_team_get_config");
    if (!t)
        return -1;
    if (config_mask & ~SHMEM_TEAM_NUM_CONTEXTS) {
        dsm_debug("shmem_team_get_config: unknown bits 0x%lx in config_mask",
                  config_mask & ~SHMEM_TEAM_NUM_CONTEXTS);
        return -1;
    }
    if (!config)
        return config_mask ? -1 : 0;
    if (config_mask & SHMEM_TEAM_NUM_CONTEXTS)
        config->num_contexts = t->config.num_contexts;
    return 0;
}
DSM_WEAK(team_get_config)

/* Member index of world PE pe in t, or -1. */
static int team_index_of(const dsm_team_t *t, int pe)
{
    if (t->stride) {
        long d = (long)pe - t->start;
        if (d % t->stride)
            return -1;
        long i = d / t->stride;
        return i >= 0 && i < t->size ? (int)i : -1;
    }
    for (int i = 0; i < t->size; i++)
        if (t->pes[i] == pe)
            return i;
    return -1;
}

int pshmem_team_translate_pe(shmem_team_t src_team, int src_pe,
                             shmem_team_t dest_team)
{
    static const char routine[] = "shmem_team_translate_pe";
    dsm_team_t *s = team_or_null(src_team, routine);
    dsm_team_t *d = team_or_null(dest_team, routine);
    if (!s || !d || src_pe < 0 || src_pe >= s->size)
        return -1;
    return team_index_of(d, s->pes[src_pe]);
}
DSM_WEAK(team_translate_pe)

void *pshmem_team_ptr(shmem_team_t team, const void *dest, int pe)
{
    dsm_team_t *t = team_or_null(team, "shmem_team_ptr");
    if (!t || pe < 0 || pe >= t->size)
        return NULL;
    return pshmem_ptr(dest, t->pes[pe]);
}
DSM_WEAK(team_ptr)

/* A team question about a context: here, beside team_create_ctx. */
int pshmem_ctx_get_team(shmem_ctx_t ctx, shmem_team_t *team)
{
    DSM_CHECK_INIT("shmem_ctx_get_team");
    if (!team)
        return -1;
    if (ctx == SHMEM_CTX_INVALID) {
        *team = SHMEM_TEAM_INVALID;
        return -1;
    }
    dsm_ctx_t *c = dsm_ctx_check(ctx, "shmem_ctx_get_team");
    if (c->team)
        *team = (shmem_team_t)c->team;
    else
        *team = SHMEM_TEAM_WORLD;
    return 0;
}
DSM_WEAK(ctx_get_team)

int pshmem_team_create_ctx(shmem_team_t team, long options, shmem_ctx_t *ctx)
{
    static const char routine[] = "shmem_team_create_ctx";
    dsm_team_t *t = team_or_null(team, routine);
    dsm_ctx_t *c = NULL;

    if (!ctx)
        dsm_rt_fatal(routine, "ctx is NULL");
    *ctx = SHMEM_CTX_INVALID;
    if (!t)
        return -1;
    if ((t->config_mask & SHMEM_TEAM_NUM_CONTEXTS) &&
        __atomic_load_n(&t->nctx, __ATOMIC_RELAXED) >=
            t->config.num_contexts)
        dsm_debug("%s: the team was configured for %d context(s); creating "
                  "one more", routine, t->config.num_contexts);
    if (dsm_ctx_new(options, t == &dsm_team_world ? NULL : t, &c) != 0 || !c)
        return -1;
    __atomic_fetch_add(&t->nctx, 1, __ATOMIC_RELAXED);
    *ctx = (shmem_ctx_t)c;
    return 0;
}
DSM_WEAK(team_create_ctx)

/* ------------------------------------------------------------ active sets */

dsm_team_t *dsm_team_aset(int start, int log_stride, int size,
                          const char *routine)
{
    dsm_team_t *t;
    long stride, last;

    DSM_CHECK_INIT(routine);
    if (size < 1 || size > dsm_rt.npes)
        dsm_rt_fatal(routine, "PE_size %d out of range (1..%d)", size,
                     dsm_rt.npes);
    if (log_stride < 0 || log_stride > 30)
        dsm_rt_fatal(routine, "logPE_stride %d out of range (0..30)",
                     log_stride);
    stride = 1L << log_stride;
    last = (long)start + stride * (long)(size - 1);
    if (start < 0 || last >= dsm_rt.npes)
        dsm_rt_fatal(routine, "active set PE_start %d, stride %ld, PE_size "
                     "%d reaches PE %ld (the job has %d PEs)", start, stride,
                     size, start < 0 ? (long)start : last, dsm_rt.npes);
    if ((dsm_rt.me - start) % stride || dsm_rt.me < start ||
        dsm_rt.me > last)
        dsm_rt_fatal(routine, "this PE is not in the active set (PE_start "
                     "%d, logPE_stride %d, PE_size %d)", start, log_stride,
                     size);
    pthread_mutex_lock(&aset_lock);
    for (t = aset_list; t; t = t->next)
        if (t->start == start && t->log_stride == log_stride &&
            t->size == size)
            break;
    if (!t) {
        t = calloc(1, sizeof(*t));
        if (t)
            t->pes = malloc((size_t)size * sizeof(int));
        if (!t || !t->pes)
            dsm_rt_fatal(routine, "out of memory");
        t->size = size;
        for (int i = 0; i < size; i++)
            t->pes[i] = start + (int)stride * i;
        t->aset = 1;
        t->sig_world = 1;
        t->sig_stride = dsm_rt.npes;
        t->log_stride = log_stride;
        t->sent = aset_sent;
        t->recv = aset_recv;
        t->eg = aset_eg;
        t->bcp = &aset_bcp;
        team_setup(t, DSM_SLOT_ASET);
        t->next = aset_list;
        aset_list = t;
    }
    pthread_mutex_unlock(&aset_lock);
    return t;
}
