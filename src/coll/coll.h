/*
 * Teams and collectives: shared definitions.
 *
 * A team is an ordered list of world PEs. Every team owns a slot: a range of
 * the internal area (after the user heap, see rt.h DSM_INTERNAL_SIZE) at the
 * same offset on every member, agreed by the parent team at creation, that
 * holds the team's synchronization words.
 *
 * Synchronization is built from one primitive, the pairwise signal: member
 * a's k-th signal to member b stores k into b's word sig[a] of the team's
 * slot; b's k-th wait on a waits until sig[a] >= k. Both sides count, so no
 * word is ever reset, any number of collectives may run back to back, and a
 * DMA engine can deliver a signal (a SIGNAL command stores an absolute
 * value) as well as a CPU can. Barriers, ready/arrival handshakes of the
 * data-moving chains and reductions all use it.
 *
 * Indexing: the words of member m on channel chan are at
 * dsm_team_sig_idx(t, chan, m) in sig[], sent[] and recv[]. For teams made
 * by the team routines that is chan * size + m. The internal teams that
 * describe the active sets of the deprecated pSync routines index by world
 * PE instead (sig_world = 1, sig_stride = npes), because every active set
 * shares one reserved slot and the counts of a pair of PEs must carry over
 * from one active set to the next: use the helpers, not the formula.
 */
#ifndef DSM_COLL_H
#define DSM_COLL_H

#include "rt.h"
#include "path.h"
#include "stall.h"

/* Words of one team slot, per member: signals received from each member,
 * in two independent channels (CPU-side protocol and engine chains), so
 * that a chain posted ahead cannot be confused with a barrier. */
enum { DSM_CHAN_CPU = 0, DSM_CHAN_DMA = 1, DSM_CHAN_MAX = 2 };

/* Slots (rt.h sizes the internal area for DSM_TEAM_SLOTS of them): the
 * predefined teams and the active sets have fixed ones; user teams get the
 * lowest slot free on every PE of the parent team. */
enum {
    DSM_SLOT_WORLD = 0,
    DSM_SLOT_SHARED = 1,
    DSM_SLOT_ASET = 2, /* every active set (sig_world = 1) */
    DSM_SLOT_FIRST_USER = 3
};

/* Broadcasts this PE sent as root on the eager path whose members'
 * acknowledgements it has not looked at yet (eager.c): the team, how many
 * calls, the last one's digest. One per team; the active sets, which
 * share their counters, share one. */
typedef struct dsm_eager_pend {
    struct dsm_team *t; /* NULL: none pending */
    uint64_t n;
    uint32_t dig;
} dsm_eager_pend_t;

/* How a team's data-moving collectives reach its members, chosen once
 * from the members' paths when the team is set up (team.c, from t->caps;
 * algo.c): "shm" where every member is mapped here (eager, the direct
 * path's loads and stores, engine chains), "net" where some member only
 * the network reaches (the direct path, its blocks as network puts, host
 * memory only). What varies per call (the variant, by size and memory)
 * is the planner's (plan.h). */
typedef struct dsm_coll_ops {
    const char *name;
    int mapped; /* every member mapped here (caps LOADSTORE) */
    /* Where member m's copy of the symmetric range [sym, sym+len) is
     * written from here: its mapping, or (*by_path = 1) sym itself, for
     * dsm_path_put through the member's path. */
    char *(*peer_dst)(const char *routine, struct dsm_team *t, int m,
                      void *sym, size_t len, int *by_path);
    /* After a blocking AllGather/AlltoAll moved its blocks: the caller's
     * source is its own again (net: the network puts completed; NULL
     * where the blocks are complete when the run ends, shm). */
    void (*done)(void);
} dsm_coll_ops_t;

/* The operations for a team whose members' paths have caps in common. */
const dsm_coll_ops_t *dsm_coll_ops_for(unsigned caps);

/* Where this PE's signals to one member land, found once at team set-up
 * (team.c): the member's words for us on each channel, as mapped here,
 * and its wake words; cpu and dma are NULL for a member only the network
 * reaches (dsm_team_path_signal names its word by our own address). */
typedef struct dsm_team_peer {
    int dk; /* dsm_team_sig_idx(t, DSM_CHAN_DMA, m): the pair's DMA words
             * in sig[], sent[], recv[] */
    uint64_t *cpu, *dma;
    dsm_wake_t *wake;     /* its engines (a chain may WAIT on the word) */
    dsm_wake_t *wake_app; /* its application threads */
} dsm_team_peer_t;

struct dsm_team {
    int size;      /* members */
    int my_idx;    /* this PE's index in the team, -1 if not a member */
    int *pes;      /* [size] world PE of each member */
    int start, stride; /* when the members are start + i*stride, else stride 0 */
    int slot;      /* internal slot index, same on every member */
    uint64_t *sig; /* this PE's words: sig[dsm_team_sig_idx(t, chan, member)] */
    uint64_t *sent; /* [same index] signals sent (private) */
    uint64_t *recv; /* [same index] signals waited for (private) */
    shmem_team_config_t config;
    long config_mask;
    int nctx;            /* contexts created from this team */
    struct dsm_team *parent;
    int predefined;      /* WORLD / SHARED: never destroyed by the user */
    pthread_mutex_t lock; /* serializes collectives of this team */
    /* Added by the teams side (the fields above are the agreed contract). */
    int sig_stride;      /* words per channel in sig/sent/recv */
    int sig_world;       /* 1: indexed by world PE (active sets), 0: member */
    int aset;            /* an internal active-set team (never a handle) */
    int log_stride;      /* active sets: logPE_stride */
    int ll_used;         /* ran an on-stream call in the LL form: its
                          * parity word is reset when the team goes */
    uint64_t *xchg;      /* this PE's exchange words of the slot header */
    uint64_t nxchg;      /* exchanges done (selects the word pair) */
    uint32_t magic;      /* DSM_TEAM_MAGIC while valid */
    struct dsm_team *next; /* active-set cache */
    unsigned caps;       /* AND of the members' path caps (runtime/path.h) */
    const dsm_coll_ops_t *coll; /* dsm_coll_ops_for(caps), at set-up */
    dsm_team_peer_t *peer; /* [size] signal targets, at set-up */
    struct dsm_chain_store *store; /* the blocking runs' plan and command
                                    * storage (chain.c, under t->lock) */
    /* The collective call in progress (agree.c): its number on this team
     * and the digest its synchronisation words carry. Under t->lock. */
    uint64_t ncall;
    uint32_t dig;
    const dsm_call_t *call; /* its description (the caller's, for its
                             * duration) */
    uint64_t rec_seq;       /* the call whose record is written */
    /* Eager messages (eager.c), private counts per member (indexed like
     * sent/recv, without the channel): eg[k * sig_stride + i] for k =
     * DSM_EG_SENT, ... (coll.h below). Active sets share one array. */
    uint64_t *eg;
    int eused;              /* an eager call ran: clear the area at destroy */
    dsm_eager_pend_t *bcp;  /* pending broadcast acks (&bcp_own, or the
                             * active sets' shared one) */
    dsm_eager_pend_t bcp_own;
};

typedef struct dsm_team dsm_team_t;

#define DSM_TEAM_MAGIC 0x7ea3c0deu

extern dsm_team_t dsm_team_world, dsm_team_shared;

/* A team's storage for its blocking AllGather/AlltoAll runs (chain.c),
 * made at set-up, freed with the team. */
void dsm_chain_store_new(dsm_team_t *t);
void dsm_chain_store_free(dsm_team_t *t);

/* Team set-up at init/finalize (after segments and sdma are up). */
dsm_status_t dsm_coll_init(void);
void dsm_coll_fini(void);

/* World PE of member i. */
/* Every member is reached through shared memory (the shm path): chains,
 * direct loads and stores. Otherwise the collective runs the direct path
 * with the members' paths (the network). */
static inline int dsm_team_mapped(const dsm_team_t *t)
{
    return t->coll->mapped;
}

static inline int dsm_coll_pe_mapped(int pe)
{
    return (dsm_path_of(pe)->caps & DSM_PATH_CAP_LOADSTORE) != 0;
}

static inline int dsm_team_pe(const dsm_team_t *t, int i)
{
    return t->pes[i];
}

/* Index of member m's words of channel chan in sig[], sent[], recv[]. */
static inline int dsm_team_sig_idx(const dsm_team_t *t, int chan, int m)
{
    return chan * t->sig_stride + (t->sig_world ? t->pes[m] : m);
}

/* Address of this PE's word that receives member m's signals on chan
 * (what an engine's WAIT command polls). */
static inline uint64_t *dsm_team_my_sig(dsm_team_t *t, int chan, int m)
{
    return &t->sig[dsm_team_sig_idx(t, chan, m)];
}

/* Address, in this process, of member m's signal word that receives our
 * signals on channel chan (a member the network reaches has none: the
 * job fails naming it). */
void dsm_team_unreachable(const dsm_team_t *t, int m) DSM_NORETURN;
static inline uint64_t *dsm_team_peer_sig(const dsm_team_t *t, int chan,
                                          int m)
{
    uint64_t *w = chan == DSM_CHAN_DMA ? t->peer[m].dma : t->peer[m].cpu;
    if (DSM_UNLIKELY(!w))
        dsm_team_unreachable(t, m);
    return w;
}

/* ---- argument agreement (agree.c, issue #27) ----
 * dsm_coll_call(t, c) starts collective call c on t (under t->lock,
 * before its first signal): it numbers the call, writes the call's record
 * where the members can read it (this PE's header of the team's slot) and
 * sets t->dig, the call's 24-bit digest, which the call's signals carry:
 *   CPU channel: the k-th signal stores k << DSM_DIG_BITS | dig;
 *   DMA channel: ready = base + 2 dig + 1, arrival = base + 2 dig + 2
 *                (base: the pair's count before the call), so that the
 *                words still only grow and an engine WAIT (>=) still works.
 * A receiver that sees a digest other than its own fails the job naming
 * both calls (dsm_coll_mismatch). A wait that lasts (a PE waiting for a
 * member that is in another call and will never signal it) looks at the
 * members' records every second (dsm_coll_stall_tick). SHMEM_CHECK=0:
 * digest 0 and no records. */
#define DSM_DIG_BITS 24
#define DSM_DIG_MASK ((1u << DSM_DIG_BITS) - 1)
uint32_t dsm_coll_digest(const dsm_call_t *c);
extern uint32_t dsm_coll_dig_barrier; /* every barrier's (a constant) */
void dsm_eager_flush(dsm_eager_pend_t *p);
/* dsm_coll_call without looking at pending broadcast acks first (the
 * eager broadcast's root, eager.c, decides itself). */
static inline void dsm_coll_call_keep(dsm_team_t *t, const dsm_call_t *c)
{
    t->ncall++;
    t->call = c;
    t->dig = DSM_UNLIKELY(!dsm_rt.check) ? 0
             : c->kind == DSM_CALL_BARRIER ? dsm_coll_dig_barrier
                                           : dsm_coll_digest(c);
}
/* Every collective call goes through here: acknowledgements of eager
 * broadcasts this PE sent as root are checked before anything else
 * (they are the members' next signals on the CPU channel). */
static inline void dsm_coll_call(dsm_team_t *t, const dsm_call_t *c)
{
    if (DSM_UNLIKELY(t->bcp->t != NULL))
        dsm_eager_flush(t->bcp);
    dsm_coll_call_keep(t, c);
}
/* Write the record of t's call in progress, once: only when a wait of
 * the call lasts, the call reports a mismatch or moves nothing (the fast
 * path writes none; a member that needs it waits for it). */
void dsm_coll_record(dsm_team_t *t);
void dsm_coll_mismatch(dsm_team_t *t, int m, uint32_t theirs) DSM_NORETURN;
typedef struct dsm_coll_stall {
    unsigned n;
    uint64_t next_ns;
    dsm_stall_t st; /* what the PE waits for, once it lasts (stall.h) */
} dsm_coll_stall_t;
void dsm_coll_stall_check(dsm_team_t *t, dsm_coll_stall_t *s);
/* At the end of every wait that ticked: withdraws its description. */
static inline void dsm_coll_stall_end(dsm_coll_stall_t *s)
{
    dsm_stall_done(&s->st);
}
/* Call from every turn of a collective's wait loop: cheap until the wait
 * has lasted a second. */
static inline void dsm_coll_stall_tick(dsm_team_t *t, dsm_coll_stall_t *s)
{
    if (DSM_UNLIKELY((++s->n & 127) == 0))
        dsm_coll_stall_check(t, s);
}
/* Wait until *word >= value, a word of t's collective in progress (the
 * stall check runs meanwhile). */
void dsm_coll_wait_ge(dsm_team_t *t, const uint64_t *word, uint64_t value);
/* A call that moves nothing on this PE (nelems 0): recorded for the
 * members' stall checks, nothing sent. */
void dsm_coll_note(dsm_team_t *t, const dsm_call_t *c);
/* dsm_coll_sync_call on SHMEM_TEAM_WORLD (dsm_rt.world_sync while the
 * teams exist). */
void dsm_coll_sync_world(const dsm_call_t *c);
/* Barrier over t as collective call c (dsm_team_sync under t->lock). */
void dsm_coll_sync_call(dsm_team_t *t, const dsm_call_t *c);

/* This PE's (pe == dsm_rt.me) or a mapped member's header of t's slot
 * (split exchange words, call records); NULL for a PE reached through the
 * network, whose header is named by the address of ours. */
uint64_t *dsm_team_slot_hdr(const dsm_team_t *t, int pe);

/* CPU pairwise signals. */
void dsm_team_signal(dsm_team_t *t, int chan, int m);
/* Store the absolute count v into member m's word for us on chan, m being
 * reached through the network (after this PE's earlier network writes:
 * data before signal). */
void dsm_team_path_signal(dsm_team_t *t, int chan, int m, uint64_t v);
void dsm_team_wait(dsm_team_t *t, int chan, int m);
/* Barrier over the team's members (dissemination), CPU channel. Takes no
 * lock: callers (the collectives) hold t->lock. */
void dsm_team_sync(dsm_team_t *t);


/* ---- checks shared by the entry points ---- */

/* The team behind a handle; fails the job (naming routine) on
 * SHMEM_TEAM_INVALID or a destroyed/garbage handle. */
dsm_team_t *dsm_team_check(shmem_team_t team, const char *routine);

/* The internal team describing an active set (start, 2^log_stride, size)
 * of the deprecated pSync routines; fails the job on a bad set or when the
 * calling PE is not in it. Cached: the same object for the same set. */
dsm_team_t *dsm_team_aset(int start, int log_stride, int size,
                          const char *routine);
/* Changes whenever the cached active-set teams may go (init, finalize). */
uint64_t dsm_team_aset_gen(void);

/* ---- data-moving collectives (src/coll/chain*.c, fcollect.c, ...) ----
 * Collectives over t with sizes in bytes. Each takes t->lock for its
 * duration (callers do not), writes dest on every member including this
 * one, and fails the job on misuse. The deprecated active-set routines call
 * them with an active-set team (sig_world = 1: see "Indexing" above). */
/* routine and esize (the element size) describe the call (agree.c). */
void dsm_coll_fcollect(dsm_team_t *t, void *dest, const void *src,
                       size_t nbytes, const char *routine, size_t esize);
void dsm_coll_collect(dsm_team_t *t, void *dest, const void *src,
                      size_t nbytes, const char *routine, size_t esize);
void dsm_coll_alltoall(dsm_team_t *t, void *dest, const void *src,
                       size_t nbytes, const char *routine, size_t esize);
void dsm_coll_alltoalls(dsm_team_t *t, void *dest, const void *src,
                        ptrdiff_t dst, ptrdiff_t sst, size_t nelems,
                        size_t elem_size, const char *routine);

/* ---- eager messages (eager.c) ----
 * Small collectives on host memory of a mapped team copy their data into
 * the receivers' eager area (rt.h) instead of their dest: one message per
 * ordered pair and call, no ready signal, no wait for the receiver. Each
 * 64-byte line of a message carries its own word (message number << 24 |
 * the call's digest) before 56 bytes of data, so a receiver sees each line
 * complete and a stale line never passes for a new one; the receiver
 * copies the data out and counts the lines consumed in a word the sender
 * reads before reusing them (credit). */
#define DSM_EAGER_LINE_DATA 56
enum { DSM_EG_SENT = 0, DSM_EG_SLINES, DSM_EG_CRED, DSM_EG_RECV,
       DSM_EG_RLINES, DSM_EG_N };
typedef struct dsm_eager_cfg {
    size_t lines;    /* ring lines per sender (a power of two), 0: off */
    size_t max;      /* auto: message bytes up to which calls go eager */
    size_t area_off; /* from a PE's control page to slot 0's eager area */
    size_t slot_bytes, cons_off;
} dsm_eager_cfg_t;
extern dsm_eager_cfg_t dsm_eager;
/* At init, after the env table (SHMEM_COLL_EAGER_MAX). */
void dsm_eager_init(void);
/* 1 when a call on t whose largest message is len bytes may go eager:
 * a mapped team of several PEs, host memory (the caller checks), len
 * within SHMEM_COLL_EAGER_MAX and half a ring. */
static inline int dsm_eager_ok(const dsm_team_t *t, size_t len)
{
    return len <= dsm_eager.max && t->size > 1 && dsm_team_mapped(t);
}
/* My next message to member m: len bytes from src (waits for room). */
void dsm_eager_send(dsm_team_t *t, int m, const void *src, size_t len);
/* Wake the members that sleep waiting for what was sent (one fence). */
void dsm_eager_notify(dsm_team_t *t);
/* The next message from member m into dst (len bytes; waits for it,
 * fails the job when it carries another call's digest). */
void dsm_eager_recv(dsm_team_t *t, int m, void *dst, size_t len);
/* Broadcast of nbytes (within dsm_eager_ok) from member root: the root
 * sends and returns; members send the root a CPU-channel signal after
 * theirs came, which the root checks at its next call. */
void dsm_eager_bcast(dsm_team_t *t, void *dest, const void *src,
                     size_t nbytes, int root, int root_too,
                     const dsm_call_t *call);
/* Team destroy, after its last barrier: the area zeroed for the slot's
 * next team. */
void dsm_eager_clear(dsm_team_t *t);

/* ---- the non-chain collectives (bcast.c, reduce.c, scan.c) ---- */

/* SHMEM_BCAST_ALGORITHM and the broadcast chain queue (team.c calls). */
dsm_status_t dsm_coll_bcast_init(void);
void dsm_coll_bcast_fini(void);

/* Broadcast nbytes from member root's src to dest of every member (and of
 * the root itself when root_too, the 1.5 team semantics). */
void dsm_coll_broadcast(dsm_team_t *t, void *dest, const void *src,
                        size_t nbytes, int root, int root_too,
                        const char *routine, size_t esize);

/* acc[i] = acc[i] OP in[i] for n elements. */
typedef void (*dsm_coll_op_t)(void *acc, const void *in, size_t n);
/* Reduction of n elements of esz bytes over t; dest may equal src. */
void dsm_coll_reduce(dsm_team_t *t, void *dest, const void *src, size_t n,
                     size_t esz, dsm_coll_op_t op, const char *routine);
/* The operator functions, dsm_coll_op_TYPENAME_OP, for the team tables
 * (the deprecated active-set tables are subsets of them). */
#define DSM_COLL_OP_DECL(T, N, OP)                                             \
    void dsm_coll_op_##N##_##OP(void *acc, const void *in, size_t n);
#define DSM_COLL_OP_DECL_BIT(T, N)                                             \
    DSM_COLL_OP_DECL(T, N, and) DSM_COLL_OP_DECL(T, N, or)                    \
    DSM_COLL_OP_DECL(T, N, xor)
#define DSM_COLL_OP_DECL_MINMAX(T, N)                                          \
    DSM_COLL_OP_DECL(T, N, max) DSM_COLL_OP_DECL(T, N, min)
#define DSM_COLL_OP_DECL_ARITH(T, N)                                           \
    DSM_COLL_OP_DECL(T, N, sum) DSM_COLL_OP_DECL(T, N, prod)
SHMEM_TYPES_REDUCE_BIT(DSM_COLL_OP_DECL_BIT)
SHMEM_TYPES_REDUCE_MINMAX(DSM_COLL_OP_DECL_MINMAX)
SHMEM_TYPES_REDUCE_ARITH(DSM_COLL_OP_DECL_ARITH)
#undef DSM_COLL_OP_DECL_BIT
#undef DSM_COLL_OP_DECL_MINMAX
#undef DSM_COLL_OP_DECL_ARITH
#undef DSM_COLL_OP_DECL

/* Prefix reduction: inclusive (member i: 0..i) or exclusive (0..i-1, and
 * zeros on member 0). */
void dsm_coll_scan(dsm_team_t *t, void *dest, const void *src, size_t n,
                   size_t esz, dsm_coll_op_t op, int inclusive,
                   const char *routine);

#endif /* DSM_COLL_H */
