/*
 * Private to the libfabric path (src/net/ofi*.c), built only with
 * libfabric's headers (DSM_HAVE_OFI). One idea per file:
 *
 *   ofi.c      set-up: loading libfabric, fabric, domain, CQ, AV, memory
 *              registration, the job's secret, the address exchange, the
 *              progress thread; finalize
 *   ofi_pick.c the provider, its domain and attributes (write completion
 *              and order), unfit providers refused, the fence method
 *   ofi_ep.c   contexts: their accounts, the endpoints they share (lanes),
 *              reading the CQ, completion (quiet, per-PE flush, fence)
 *   ofi_rma.c  operations: addresses, put, get, atomics, signals
 *   ofi_agg.c  batches of non-fetching AMOs, applied by the target's
 *              progress (software-atomics providers only)
 *
 * Completion accounting (ofi_ep.c): every operation is posted with
 * FI_COMPLETION and a net_op_t as context that names the PE's account
 * (net_pe_t) in its context, so the CQ reader counts completions per
 * (context, PE): that is what lets shmem_pe_quiet wait for one PE and a
 * fence order only the PEs written before it, and the context's total
 * (dsm_net_ctx.done) is what quiet waits for. Nothing is injected (see
 * net_bounce_t), so every operation has its CQ entry, and an endpoint
 * carries no counters: several contexts may share one (net_lane_t).
 */
#ifndef DSM_NET_OFI_INT_H
#define DSM_NET_OFI_INT_H

#include "net/net.h"

#include "common/backoff.h"
#include "common/common.h"

#include <pthread.h>
#include <stdint.h>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#define NET_FI_VERSION FI_VERSION(1, 10)
#define NET_NSEG 2 /* heap (with the internal area), static */
/* The memory key of PE pe's region i (i = NET_NSEG: the heartbeat word)
 * from the job's secret; 0 where the provider chooses keys (ofi.c). */
uint64_t dsm_ofi_mr_key(int pe, int i);
/* The key in PE from's messages to PE to (auth.h: dsm_net_msg_key). */
uint64_t dsm_ofi_msg_key(int from, int to);
#define NET_NAME_MAX 256
/* The most endpoints contexts may open besides the default context's
 * (SHMEM_OFI_CTX_EPS is checked against it). */
#define NET_LANES_MAX 64

/* libfabric's entry points, loaded at the first job that needs it (ofi.c
 * says why it is not linked); the rest of the API is inline calls through
 * the objects' ops tables. */
struct dsm_ofi_lib {
    void *lib;
    int (*getinfo)(uint32_t, const char *, const char *, uint64_t,
                   const struct fi_info *, struct fi_info **);
    void (*freeinfo)(struct fi_info *);
    struct fi_info *(*dupinfo)(const struct fi_info *);
    int (*fabric)(struct fi_fabric_attr *, struct fid_fabric **, void *);
    const char *(*strerror)(int);
    char *(*tostr)(const void *, enum fi_type);
};
extern struct dsm_ofi_lib dsm_ofi_lib;

struct net_pe;
struct dsm_net_ctx;

/* The CQ context of an operation: whose account its completion raises,
 * and, for the one caller that waits for it alone, a flag. */
typedef struct net_op {
    struct net_pe *pe;
    int done;
    int bounce; /* the op of a net_bounce_t: freed at completion */
    int kind;   /* 0, or NET_OP_AGG_*: a batch's buffer (ofi_agg.c) */
} net_op_t;
enum { NET_OP_AGG_SEND = 1, NET_OP_AGG_RECV = 2 };
/* The most AMOs in one batch (ofi_agg.c). */
#define NET_AGG_MAX 256

/* A small write's payload, copied here so that the caller's buffer is free
 * on return. This is what FI_INJECT would do, but an injected write
 * reports no CQ entry on tcp;ofi_rxm (measured, libfabric 1.17: per-PE
 * accounts never caught up), and per-PE completion needs one. */
typedef struct net_bounce {
    net_op_t op;
    struct net_bounce *next;     /* free list of its context */
    struct net_bounce *all_next; /* every bounce of its context */
    struct dsm_net_ctx *nc;
    uint64_t data[];             /* dsm_ofi.inject bytes */
} net_bounce_t;

/* What one context has outstanding to one PE. posted and the marks are
 * the poster's (under the context's lock where it is shared); done is
 * raised by whichever thread reads the CQ. */
typedef struct net_pe {
    net_op_t op;          /* context of the operations nobody waits for
                           * alone: op.pe is this account */
    struct dsm_net_ctx *nc; /* whose account: the CQ reader raises its
                             * total too */
    uint64_t posted;      /* operations posted to the PE */
    uint64_t done;        /* of them, completed */
    unsigned char written; /* a write since the PE's last quiet or flush
                            * (flush reads, data before signal) */
    unsigned char epoch;   /* a write since the last fence */
    unsigned char listed;  /* in the context's epoch_pes */
    unsigned char fenced;  /* writes before a fence not known complete:
                            * the next write to the PE orders behind them */
    struct agg_buf *agg;   /* AMOs collected for the PE, not sent yet
                            * (ofi_agg.c; under the context's agg_lock) */
    uint64_t agg_sent;     /* batches sent to the PE */
    uint64_t agg_acked;    /* of them, acknowledged (applied) */
} net_pe_t;

/* An endpoint that contexts post on (ofi_ep.c says when they share
 * one). Lane 0 is the default context's, the one every peer targets. */
typedef struct net_lane {
    struct fid_ep *ep;
    struct fid_cq *cq; /* lane 0: the shared CQ; others: their own */
    int wait_fd;       /* cq's wait fd (used where dsm_ofi.wait_on) */
    int refs; /* contexts using it (lane 0: the default context too) */
} net_lane_t;

/* One context's accounts and its lane (net.h). */
struct dsm_net_ctx {
    struct fid_ep *ep;      /* lane->ep */
    net_lane_t *lane;
    uint64_t posted;        /* operations posted by this context */
    uint64_t done;          /* of them, completed (the CQ reader) */
    net_pe_t *pe;           /* [npes] */
    int *epoch_pes;         /* the PEs with epoch marks since the last
                             * fence (each once: `listed`) */
    int nepoch;
    int shared;             /* threads may use it at once: lock */
    pthread_rwlock_t lock;  /* posting: shared; quiet, flush: exclusive */
    net_bounce_t *bfree, *ball; /* bounce buffers: free, all */
    pthread_mutex_t block;      /* bfree (the CQ reader returns them) */
    /* Batches of AMOs (ofi_agg.c): the PEs' collected ones are sent by
     * the context's thread or by progress, under agg_lock. */
    pthread_mutex_t agg_lock;
    int agg_held;               /* PEs with a batch collected */
    int agg_listed;             /* in ofi_agg.c's list of contexts */
    unsigned agg_tick;
};

/* How a fence orders writes (SHMEM_OFI_FENCE). */
enum {
    NET_FENCE_FREE,   /* the provider places writes in order */
    NET_FENCE_QUIET,  /* a full quiet of the context */
    NET_FENCE_TARGET, /* the next write to a PE written before the fence
                       * waits for those writes (that PE only) */
};

/* How one AMO is carried out on one word size. */
enum { AMO_NATIVE = 0, AMO_CAS_LOOP = 1 };

struct dsm_ofi {
    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av *av;
    struct fid_cq *cq;
    struct fid_mr *mr[NET_NSEG];
    void *desc[NET_NSEG];
    fi_addr_t *addr; /* [npes] */
    struct {
        uint64_t base[NET_NSEG], key[NET_NSEG];
    } *peer;         /* [npes] */
    int on;          /* the endpoint is up */
    int virt_addr;
    int delivery;    /* FI_DELIVERY_COMPLETE accepted (else FI_ORDER_RAW) */
    int ordered;     /* RMA and atomic writes placed in the order posted */
    int fence;       /* NET_FENCE_* */
    uint64_t wflags;
    size_t inject, max_msg;
    uint64_t app_polls; /* progress calls and posts by the application's
                         * threads (the progress thread stands aside while
                         * it grows) */
    int wait_fd;        /* the CQ's wait fd (wait_on): readable when a
                         * peer's operation or a completion arrives */
    int wait_on;
    int app_blocked;    /* application threads blocked on wait_fd */
    long prog_us;       /* progress thread interval, 0 = none */
    pthread_mutex_t cq_lock;
    pthread_t prog;
    int prog_on, prog_stop;
    unsigned char amo_mode[8][2][2]; /* [dsm_amo_op_t][size 4, 8][fetch] */
    int cpu_atomics; /* the provider applies atomics at the target with the
                      * CPU's atomic instructions (software atomics: tcp,
                      * sockets, udp): this PE may apply AMOs on its own
                      * words with them too (ofi_rma.c) */
    char prov[64];
    char dom_why[96]; /* how the domain was chosen (SHMEM_INFO) */
    char domain_line[NET_NAME_MAX + 100]; /* "name (why)": dsm_net_domain */
    char describe[800];
    net_lane_t lanes[1 + NET_LANES_MAX]; /* [0]: the default context's */
    int nlanes; /* open (stored with release once a lane is: the CQ
                 * reader reads the CQs of the first nlanes) */
    int max_lanes;                       /* 1 + SHMEM_OFI_CTX_EPS */
    pthread_mutex_t lane_lock;
};
extern struct dsm_ofi dsm_ofi;
/* What the runtime handed over at init (net.h). */
extern dsm_net_config_t dsm_ofi_cfg;
/* The default context's: its endpoint is the one every peer targets. */
extern dsm_net_ctx_t dsm_ofi_dflt;

static inline dsm_net_ctx_t *nc_of(dsm_net_ctx_t *nc)
{
    return nc ? nc : &dsm_ofi_dflt;
}

/* Around a post (and the marks it sets): shared. */
static inline void nc_post_begin(dsm_net_ctx_t *nc)
{
    if (nc->shared)
        pthread_rwlock_rdlock(&nc->lock);
}

static inline void nc_post_end(dsm_net_ctx_t *nc)
{
    if (nc->shared)
        pthread_rwlock_unlock(&nc->lock);
}

/* Around quiet and flush: no other thread posts on nc meanwhile, so the
 * counts reaching `posted` means exactly these operations are done. */
static inline void nc_excl_begin(dsm_net_ctx_t *nc)
{
    if (nc->shared)
        pthread_rwlock_wrlock(&nc->lock);
}

static inline void nc_excl_end(dsm_net_ctx_t *nc)
{
    if (nc->shared)
        pthread_rwlock_unlock(&nc->lock);
}

/* ofi.c */
/* A failed operation usually means its peer died: give the launcher a
 * moment to report that first. */
void dsm_ofi_peer_failure_grace(void);
/* The first thread to report a network failure returns; any later one
 * waits for it to end the process (one line per PE). */
void dsm_ofi_failing(void);
void dsm_ofi_fail(const char *routine, const char *what, int pe, ssize_t rc)
    DSM_NORETURN;

/* ofi_pick.c: the choices made at init, before anything is opened. */
/* The provider and domain (SHMEM_OFI_PROVIDER, SHMEM_OFI_DOMAIN,
 * SHMEM_OFI_COMPLETION): sets dsm_ofi.info, prov, delivery, ordered,
 * cpu_atomics, dom_why and domain_line, or says why none fits. */
dsm_status_t dsm_ofi_pick_info(void);
/* The fence method (SHMEM_OFI_FENCE), after dsm_ofi_pick_info. */
dsm_status_t dsm_ofi_pick_fence(void);
/* dsm_ofi.fence in words, for the SHMEM_INFO line. */
const char *dsm_ofi_fence_text(void);

/* ofi_ep.c */
/* A bounded wait for network completions (ofi_ep.c, "stalls"). */
typedef struct net_stall {
    uint64_t seen;  /* completions seen at the last progress */
    uint64_t since; /* when they last moved (0: not yet checked) */
    unsigned tick;  /* the clock is read every 64 checks */
} net_stall_t;
/* done: the completions waited on so far; ends the job, naming ps's PE
 * (or nc's first PE with operations outstanding), once they have not
 * moved for SHMEM_PEER_TIMEOUT. */
void dsm_ofi_stall_check(net_stall_t *s, uint64_t done, const net_pe_t *ps,
                         const struct dsm_net_ctx *nc);
int dsm_ofi_cq_poll(void);
/* Block until network activity or ns nanoseconds, then read the CQ. */
void dsm_ofi_block(uint64_t ns);
/* on: waiters' sleeps (common/backoff.h) block on the network. */
void dsm_ofi_block_hook_set(int on);
void *dsm_ofi_prog_main(void *arg);
/* Wait for op alone (a blocking put, get or AMO of routine; a PE ended
 * meanwhile names routine and the PE waited for). */
void dsm_ofi_op_wait(net_op_t *op, const char *routine);
/* An endpoint bound to the shared CQ, or own_cq: to a CQ of the lane's
 * own (closed with it), and the AV, enabled; who names the routine in an
 * error line. */
dsm_status_t dsm_ofi_lane_open(net_lane_t *lane, int own_cq, const char *who);
void dsm_ofi_lane_close(net_lane_t *lane);
/* A context's accounts and locks (no endpoint: see dsm_net_ctx_create). */
dsm_status_t dsm_ofi_ctx_init(dsm_net_ctx_t *nc, int shared);
void dsm_ofi_ctx_fini(dsm_net_ctx_t *nc);
/* Before a write to pe: the writes to pe before the last fence are
 * ordered ahead of it by waiting for them (NET_FENCE_TARGET). The caller
 * holds nc's post lock. */
void dsm_ofi_fence_gate_slow(dsm_net_ctx_t *nc, int pe);
static inline void dsm_ofi_fence_gate(dsm_net_ctx_t *nc, int pe)
{
    if (DSM_UNLIKELY(nc->pe[pe].fenced))
        dsm_ofi_fence_gate_slow(nc, pe);
}
/* After a write to pe is posted: the next fence orders it. */
static inline void dsm_ofi_wrote(dsm_net_ctx_t *nc, int pe)
{
    net_pe_t *ps = &nc->pe[pe];
    if (!ps->epoch && dsm_ofi.fence >= NET_FENCE_TARGET && !nc->shared) {
        ps->epoch = 1;
        if (!ps->listed) {
            ps->listed = 1;
            nc->epoch_pes[nc->nepoch++] = pe;
        }
    }
}

/* Post on nc's endpoint with retries (a full queue answers -FI_EAGAIN
 * until completions are read), counted in nc->posted and in pe's account.
 * The caller holds nc's lock (shared to post, or exclusive inside
 * quiet/flush). */
#define NET_POST(nc, routine, what, pe, call)                                  \
    do {                                                                       \
        ssize_t rc_;                                                           \
        net_stall_t st_ = {0, 0, 0};                                           \
        while ((rc_ = (call)) == -FI_EAGAIN) {                                 \
            dsm_ofi_cq_poll();                                                 \
            dsm_ofi_stall_check(&st_, (nc)->done, &(nc)->pe[pe], NULL);        \
        }                                                                      \
        if (rc_)                                                               \
            dsm_ofi_fail(routine, what, pe, rc_);                              \
        __atomic_fetch_add(&(nc)->posted, 1, __ATOMIC_ACQ_REL);                \
        __atomic_fetch_add(&dsm_ofi.app_polls, 1, __ATOMIC_RELAXED);           \
        __atomic_fetch_add(&(nc)->pe[pe].posted, 1, __ATOMIC_ACQ_REL);         \
    } while (0)

/* A bounce buffer of nc for a small write (returned to nc at its
 * completion by the CQ reader). */
net_bounce_t *dsm_ofi_bounce_get(dsm_net_ctx_t *nc);

/* ofi_live.c: the heartbeat (the file says how peers watch each other) */
#define DSM_NET_HOST_MAX 64
/* Registers this PE's heartbeat word; its address and key to publish. */
/* Opens the heartbeat's endpoint and registers this PE's word: its
 * address, key and the endpoint's name (*namelen in: capacity, out: the
 * size, the lane 0 name's) to publish. */
dsm_status_t dsm_ofi_live_register(uint64_t *base, uint64_t *key, void *name,
                                   size_t *namelen);
/* What PE pe published: its word, node id, host name, endpoint name. */
void dsm_ofi_live_peer(int pe, uint64_t base, uint64_t key, int node,
                       const char *host, const void *name);
/* Once the network is up: picks the PEs to watch, starts the thread
 * (nothing with SHMEM_PEER_TIMEOUT=0). */
dsm_status_t dsm_ofi_live_start(void);
/* No more heartbeat reads (finalize); the word keeps moving. */
void dsm_ofi_live_quiesce(void);
/* Quiesce, and the thread ends (finalize, before the progress thread). */
void dsm_ofi_live_stop(void);
/* Closes the endpoint and the word's registration: no other thread may
 * read the CQ meanwhile (ofi_ep.c: lane_open_locked says why). */
void dsm_ofi_live_fini(void);
/* PE pe's host name as it published it ("?" before the exchange). */
const char *dsm_ofi_host(int pe);

/* ofi_rma.c */
/* PE pe's address and key for [sym, sym+len); internal 1 also allows the
 * runtime's internal area. */
void dsm_ofi_remote_of(const char *routine, const void *sym, size_t len,
                       int pe, int internal, uint64_t *raddr, uint64_t *key);
/* One read into d (caller holds nc's lock); op: waited for by the caller,
 * or NULL (counted in pe's account). */
void dsm_ofi_post_read(dsm_net_ctx_t *nc, const char *routine, void *d,
                       size_t n, uint64_t raddr, uint64_t key, int pe,
                       net_op_t *op);
/* Native or CAS loop for every (op, size); fails without 64-bit CSWAP. */
dsm_status_t dsm_ofi_check_atomics(void);
/* ofi_agg.c: batches of non-fetching AMOs (the file says when and why). */
/* After lane 0 opened: posts its receives (where the provider's atomics
 * are software and it offers FI_MSG). */
dsm_status_t dsm_ofi_agg_init(void);
void dsm_ofi_agg_fini(void);
int dsm_ofi_agg_on(void);
/* Collect a non-fetching AMO (op on the size-byte word at offset off of
 * segment seg) for pe; 0: not batched here (the caller posts it). */
int dsm_ofi_agg_amo(dsm_net_ctx_t *nc, int op, int seg, uint64_t off,
                    size_t size, const void *val, int pe);
/* Send what nc collected for pe / for every PE. */
void dsm_ofi_agg_send(dsm_net_ctx_t *nc, int pe);
void dsm_ofi_agg_send_all(dsm_net_ctx_t *nc);
/* Before another operation of nc to pe: its batch goes first; reads 1:
 * and is applied before (the operation reads what it changed). */
void dsm_ofi_agg_before(dsm_net_ctx_t *nc, int pe, int reads);
/* The CQ reader: a batch's send completed / a message arrived. */
void dsm_ofi_agg_sent(net_op_t *op);
void dsm_ofi_agg_recv(net_op_t *op);
/* Acknowledgements owed to peers, sent outside the CQ reader's lock. */
void dsm_ofi_agg_ack_drain(void);
int dsm_ofi_agg_acks_owed(void); /* acknowledgements not yet sent */
/* Progress: send what every context holds; acknowledgements owed. */
void dsm_ofi_agg_progress(void);
/* A context closes. */
void dsm_ofi_agg_ctx_fini(dsm_net_ctx_t *nc);

/* An AMO (op, size 4 or 8) on this PE's own word p with the CPU's atomics
 * (only where dsm_ofi.cpu_atomics), complete on return. */
void dsm_ofi_amo_local(dsm_net_ctx_t *nc, int op, void *p, size_t size,
                       const void *val, const void *cmp, void *fetched);

#endif /* DSM_NET_OFI_INT_H */
