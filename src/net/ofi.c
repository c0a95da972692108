/*
 * libfabric data path for PEs on other nodes (net.h).
 *
 * One FI_THREAD_SAFE domain, one AV table holding every PE, one CQ in
 * selective-completion mode. Every context (dsm_net_ctx_t) has its own RDM
 * endpoint and its own pair of completion counters (FI_WRITE, FI_READ):
 * the default context's endpoint is the one whose name the PEs exchange
 * (every peer targets it), a context created later gets an endpoint of its
 * own that only initiates (tcp;ofi_rxm offers one transmit context per
 * endpoint, so no scalable endpoint). A blocking operation is posted with
 * FI_COMPLETION and its caller's flag as context, set by whichever thread
 * reads the shared CQ. Every operation is counted in its context's
 * `posted`; quiet waits until the context's two counters together reach
 * it (injected operations produce no CQ entry on some providers,
 * tcp;ofi_rxm, but always count; which counter a fetching atomic bumps
 * does not matter to the sum). A context that several threads may use at
 * once (the default context under SHMEM_THREAD_MULTIPLE, a context created
 * without SHMEM_CTX_PRIVATE/SERIALIZED) has a lock: posting holds it
 * shared, quiet and flush hold it exclusive, so that a quiet's count covers
 * exactly the operations posted before it and its reset of `written[]`
 * cannot drop a mark another thread set for an operation still in flight.
 *
 * Completion of writes: FI_DELIVERY_COMPLETE where the provider accepts it
 * (their completion means the data is visible at the target). Otherwise
 * the provider must order reads after writes (FI_ORDER_RAW, asked for and
 * checked at startup; a provider with neither is refused): quiet then adds
 * a read from every PE written since the last quiet, which completes only
 * after those writes were placed. SHMEM_OFI_COMPLETION=read forces the
 * second method (for testing it on a provider that has both).
 *
 * Memory: the heap segment (user heap + the runtime's internal area, so
 * that team signal words are reachable) and the static segment are
 * registered; each PE publishes its endpoint name, the segments' base
 * addresses and keys through the bootstrap. Target addresses are the
 * peer's virtual address (FI_MR_VIRT_ADDR) or the offset in the region.
 * User RMA, AMOs and signals are checked against the user part of the
 * heap (as the shm path's dsm_rt_xlate does); only the runtime's own
 * operations (its signals, load64, quiet's flush reads) reach the internal
 * area.
 *
 * The runtime is reached only through what dsm_net_init was handed
 * (net.h: dsm_net_config_t): the job's layout, the segments, the wake
 * word, the settings, and the fatal, bad-address and wait callbacks.
 *
 * Atomics: each (operation, 4/8-byte integer) is checked with
 * fi_query_atomic / fi_query_fetch_atomic / fi_query_compare_atomic at
 * startup. One the provider lacks is done as a compare-and-swap loop
 * (fetch, compute, FI_CSWAP until it sticks); a provider without FI_CSWAP
 * on 64-bit integers is refused with a message naming what to set.
 *
 * Progress: waits call dsm_net_progress; a thread (SHMEM_OFI_PROGRESS_US)
 * reads the CQ while the PE computes, so that providers with manual
 * progress (tcp;ofi_rxm) answer remote reads and atomics of idle targets.
 * Reading the shared CQ progresses every endpoint bound to it.
 */
#include "net/net.h"

#include "common/backoff.h"
#include "common/common.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

unsigned char *dsm_net_remote;

/* What the runtime handed over at init (net.h). */
static dsm_net_config_t net_cfg;

#ifndef DSM_HAVE_OFI

dsm_status_t dsm_net_init(const dsm_net_config_t *cfg)
{
    net_cfg = *cfg;
    for (int pe = 0; pe < cfg->npes; pe++)
        if (!cfg->mapped[pe]) {
            dsm_log_error("shmem_init: PE %d is on another node%s, but this "
                          "dmashmem was built without libfabric (install "
                          "libfabric-dev and reconfigure)",
                          pe,
                          cfg->force_network ? " (SHMEM_FORCE_NETWORK=1)" : "");
            return DSM_ERR_UNSUPPORTED;
        }
    return DSM_OK;
}

void dsm_net_fini(void) {}
const char *dsm_net_provider(void) { return NULL; }
const char *dsm_net_describe(void) { return NULL; }
int dsm_net_ordered(void) { return 0; }

/* Never reached: dsm_net_remote stays NULL in this build. */
static void no_net(const char *routine) DSM_NORETURN;
static void no_net(const char *routine)
{
    net_cfg.fatal(routine, "no network path in this build");
}
dsm_net_ctx_t *dsm_net_ctx_create(int flags)
{
    (void)flags;
    return NULL;
}
void dsm_net_ctx_destroy(dsm_net_ctx_t *nc) { (void)nc; }
void dsm_net_put(dsm_net_ctx_t *nc, const char *routine, void *sym,
                 const void *src, size_t len, int pe, int nbi)
{
    (void)nc, (void)sym, (void)src, (void)len, (void)pe, (void)nbi;
    no_net(routine);
}
void dsm_net_get(dsm_net_ctx_t *nc, const char *routine, void *dst,
                 const void *sym, size_t len, int pe, int nbi)
{
    (void)nc, (void)sym, (void)dst, (void)len, (void)pe, (void)nbi;
    no_net(routine);
}
void dsm_net_amo(dsm_net_ctx_t *nc, const char *routine, int op, void *sym,
                 size_t size, const void *val, const void *cmp, void *fetched,
                 int pe)
{
    (void)nc, (void)op, (void)sym, (void)size, (void)val, (void)cmp, (void)fetched,
        (void)pe;
    no_net(routine);
}
void dsm_net_quiet(dsm_net_ctx_t *nc) { (void)nc; }
void dsm_net_flush(dsm_net_ctx_t *nc, int pe) { (void)nc, (void)pe; }
void dsm_net_fence(dsm_net_ctx_t *nc) { (void)nc; }
void dsm_net_progress(void) {}
void dsm_net_signal(dsm_net_ctx_t *nc, const char *routine, uint64_t *sym,
                    uint64_t v, int add, int pe, int internal)
{
    (void)nc, (void)sym, (void)v, (void)add, (void)pe, (void)internal;
    no_net(routine);
}
uint64_t dsm_net_load64(const char *routine, const uint64_t *sym, int pe)
{
    (void)sym, (void)pe;
    no_net(routine);
}

#else /* DSM_HAVE_OFI */

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include <dlfcn.h>

/* libfabric is loaded when a job first needs the network, not linked: a
 * job on one node never maps it or the provider libraries it pulls in
 * (Debian's psm provider library installs signal handlers from its
 * constructor that turn abort() and crashes into exit(), which would run
 * the implicit shmem_finalize and hang the job). Only these entry points
 * are symbols; the rest of the API is inline calls through the objects'
 * ops tables. */
static struct {
    void *lib;
    int (*getinfo)(uint32_t, const char *, const char *, uint64_t,
                   const struct fi_info *, struct fi_info **);
    void (*freeinfo)(struct fi_info *);
    struct fi_info *(*dupinfo)(const struct fi_info *);
    int (*fabric)(struct fi_fabric_attr *, struct fid_fabric **, void *);
    const char *(*strerror)(int);
    char *(*tostr)(const void *, enum fi_type);
} ofi;

static dsm_status_t ofi_load(void)
{
    if (ofi.lib)
        return DSM_OK;
    ofi.lib = dlopen("libfabric.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!ofi.lib) {
        dsm_log_error("shmem_init: PEs on other nodes need libfabric, which "
                      "cannot be loaded: %s (install libfabric1)", dlerror());
        return DSM_ERR_UNSUPPORTED;
    }
#define OFI_SYM(field, name)                                                   \
    *(void **)&ofi.field = dlsym(ofi.lib, name);                               \
    if (!ofi.field) {                                                          \
        dsm_log_error("shmem_init: libfabric.so.1 lacks %s", name);            \
        return DSM_ERR_UNSUPPORTED;                                            \
    }
    OFI_SYM(getinfo, "fi_getinfo")
    OFI_SYM(freeinfo, "fi_freeinfo")
    OFI_SYM(dupinfo, "fi_dupinfo")
    OFI_SYM(fabric, "fi_fabric")
    OFI_SYM(strerror, "fi_strerror")
    OFI_SYM(tostr, "fi_tostr")
#undef OFI_SYM
    return DSM_OK;
}

#define NET_FI_VERSION FI_VERSION(1, 10)
#define NET_NSEG 2 /* heap (with the internal area), static */
#define NET_NAME_MAX 256

typedef struct net_op {
    int done;
} net_op_t;

/* What every peer publishes. */
typedef struct net_pub {
    uint64_t base[NET_NSEG];
    uint64_t key[NET_NSEG];
    uint64_t len[NET_NSEG];
    uint32_t namelen;
    char name[NET_NAME_MAX];
} net_pub_t;

typedef struct net_peer {
    uint64_t base[NET_NSEG], key[NET_NSEG];
} net_peer_t;

/* How one AMO is carried out on one word size. */
enum { AMO_NATIVE = 0, AMO_CAS_LOOP = 1 };

/* One context's endpoint, counters and marks (net.h). */
struct dsm_net_ctx {
    struct dsm_net_ctx *next; /* in the pool of idle endpoints */
    struct fid_ep *ep;
    struct fid_cntr *wcntr, *rcntr;
    uint64_t posted;        /* operations posted on ep (counters: done) */
    unsigned char *written; /* [npes] written since the last quiet/flush */
    int shared;             /* threads may use it at once: lock */
    pthread_rwlock_t lock;  /* posting: shared; quiet, flush: exclusive */
};

static struct net {
    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av *av;
    struct fid_cq *cq;
    struct fid_mr *mr[NET_NSEG];
    void *desc[NET_NSEG];
    fi_addr_t *addr;  /* [npes] */
    net_peer_t *peer; /* [npes] */
    int on;           /* the endpoint is up */
    int virt_addr;
    int delivery; /* FI_DELIVERY_COMPLETE accepted (else FI_ORDER_RAW) */
    int ordered;  /* RMA and atomic writes placed in the order posted */
    uint64_t wflags;
    size_t inject, max_msg;
    uint64_t app_polls; /* progress calls by the application's threads */
    long prog_us;       /* progress thread interval, 0 = none */
    pthread_mutex_t cq_lock;
    pthread_t prog;
    int prog_on, prog_stop;
    unsigned char amo_mode[8][2][2]; /* [dsm_amo_op_t][size 4, 8][fetch] */
    char prov[64];
    char describe[256];
    /* Endpoints of destroyed contexts, complete and unmarked, for the next
     * context: tcp;ofi_rxm takes about 100 ms to enable an endpoint and
     * more to connect it to each peer (measured, libfabric 1.17), which a
     * program that creates a context per task would pay every time. */
    dsm_net_ctx_t *pool;
    pthread_mutex_t pool_lock;
} net;

/* The default context's: its endpoint is the one every peer targets. */
static dsm_net_ctx_t net_dflt;

static net_op_t nbi_op; /* context of operations nobody waits for alone */

static inline dsm_net_ctx_t *nc_of(dsm_net_ctx_t *nc)
{
    return nc ? nc : &net_dflt;
}

/* Around a post (and the mark it sets): shared. */
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
 * counters reaching `posted` means exactly these operations are done. */
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

/* ------------------------------------------------------------ errors */

/* A failed operation usually means its peer died; the launcher (or
 * mpirun) ends the job within milliseconds of seeing that, and reports
 * the dead PE's status. Give it a second before this PE fails the job
 * with status 1 in its place (measured: without it, `kill -9` of one PE
 * made the job return 1 instead of 137 in about half the runs). */
static void peer_failure_grace(void)
{
    struct timespec ts = {1, 0};
    nanosleep(&ts, NULL);
}

static void net_fail(const char *routine, const char *what, int pe,
                     ssize_t rc) DSM_NORETURN;
static void net_fail(const char *routine, const char *what, int pe, ssize_t rc)
{
    peer_failure_grace();
    net_cfg.fatal(routine, "%s to PE %d failed over libfabric provider %s: %s",
                  what, pe, net.prov, ofi.strerror((int)-rc));
}

/* ------------------------------------------------------------ progress */

static int cq_poll(void)
{
    struct fi_cq_entry e[16];
    ssize_t n;
    int got = 0;

    /* One reader at a time: an error entry must be read by the thread
     * that saw -FI_EAVAIL. */
    if (pthread_mutex_trylock(&net.cq_lock))
        return 0;
    n = fi_cq_read(net.cq, e, DSM_ARRAY_SIZE(e));
    if (n > 0) {
        for (ssize_t i = 0; i < n; i++) {
            net_op_t *op = e[i].op_context;
            if (op && op != &nbi_op)
                __atomic_store_n(&op->done, 1, __ATOMIC_RELEASE);
        }
        got = (int)n;
    } else if (n == -FI_EAVAIL) {
        struct fi_cq_err_entry err = {0};
        char buf[256] = "";
        fi_cq_readerr(net.cq, &err, 0);
        pthread_mutex_unlock(&net.cq_lock);
        peer_failure_grace();
        if (err.prov_errno)
            fi_cq_strerror(net.cq, err.prov_errno, err.err_data, buf,
                           sizeof(buf));
        net_cfg.fatal("network",
                      "a libfabric operation failed (provider %s): "
                      "%s%s%s",
                      net.prov, ofi.strerror(err.err), buf[0] ? ": " : "", buf);
    } else if (n < 0 && n != -FI_EAGAIN) {
        pthread_mutex_unlock(&net.cq_lock);
        net_cfg.fatal("network", "fi_cq_read failed (provider %s): %s",
                      net.prov, ofi.strerror((int)-n));
    }
    pthread_mutex_unlock(&net.cq_lock);
    return got;
}

void dsm_net_progress(void)
{
    if (net.cq) {
        __atomic_fetch_add(&net.app_polls, 1, __ATOMIC_RELAXED);
        cq_poll();
    }
}

/* The progress thread stands in only for a PE whose threads are not in the
 * library: while one waits (and so progresses on every check) the thread
 * keeps off the provider's lock and the cores (measured on 2 cores: it
 * made fcollect 1 MiB over sockets 1.2 ms instead of 0.65). */
static void *prog_main(void *arg)
{
    struct timespec ts = {net.prog_us / 1000000L,
                          (net.prog_us % 1000000L) * 1000L};
    uint64_t seen = 0;
    (void)arg;
    while (!__atomic_load_n(&net.prog_stop, __ATOMIC_ACQUIRE)) {
        uint64_t polls = __atomic_load_n(&net.app_polls, __ATOMIC_RELAXED);
        if (polls != seen || !cq_poll())
            nanosleep(&ts, NULL);
        seen = polls;
    }
    return NULL;
}

/* Post on nc's endpoint with retries (a full queue answers -FI_EAGAIN
 * until completions are read), counted in nc->posted. The caller holds
 * nc's lock (shared to post, or exclusive inside quiet/flush). */
#define NET_POST(nc, routine, what, pe, call)                                  \
    do {                                                                       \
        ssize_t rc_;                                                           \
        while ((rc_ = (call)) == -FI_EAGAIN) {                                 \
            cq_poll();                                                         \
            (void)fi_cntr_read((nc)->wcntr);                                   \
        }                                                                      \
        if (rc_)                                                               \
            net_fail(routine, what, pe, rc_);                                  \
        __atomic_fetch_add(&(nc)->posted, 1, __ATOMIC_ACQ_REL);                \
    } while (0)

static int op_done(void *p)
{
    cq_poll();
    return __atomic_load_n(&((net_op_t *)p)->done, __ATOMIC_ACQUIRE);
}

static void op_wait(net_op_t *op)
{
    dsm_backoff_t b = {0};
    while (!op_done(op))
        dsm_backoff(&b, net_cfg.wake, op_done, op);
}

struct count_arg {
    dsm_net_ctx_t *nc;
    uint64_t target;
};

/* 1 once nc's counters cover target operations (failing the job on an
 * operation that completed in error: an injected one has no CQ entry to
 * report it). */
static int counted(void *p)
{
    const struct count_arg *a = p;
    struct fid_cntr *w = a->nc->wcntr, *r = a->nc->rcntr;
    /* Reading a counter drives the provider's progress itself. */
    if (DSM_UNLIKELY(fi_cntr_readerr(w) || fi_cntr_readerr(r))) {
        peer_failure_grace();
        net_cfg.fatal(
            "shmem_quiet",
            "%llu network operation(s) failed "
            "(libfabric provider %s)",
            (unsigned long long)(fi_cntr_readerr(w) + fi_cntr_readerr(r)),
            net.prov);
    }
    return fi_cntr_read(w) + fi_cntr_read(r) >= a->target;
}

/* Every operation posted on nc so far is complete (exact while the caller
 * keeps other threads from posting on nc: nc_excl_begin). */
static void nc_complete(dsm_net_ctx_t *nc)
{
    struct count_arg a = {nc, __atomic_load_n(&nc->posted, __ATOMIC_ACQUIRE)};
    if (!counted(&a))
        net_cfg.wait(counted, &a);
}

/* ------------------------------------------------------------ addresses */

/* PE pe's address and key for the symmetric range [sym, sym+len). User
 * operations (internal 0) may address only the user part of a segment, as
 * dsm_rt_xlate allows for PEs on this node; the runtime's (internal 1)
 * also the internal area after the user heap. */
static void remote_of(const char *routine, const void *sym, size_t len, int pe,
                      int internal, uint64_t *raddr, uint64_t *key)
{
    for (int i = 0; i < NET_NSEG; i++) {
        const dsm_net_seg_t *s = &net_cfg.segs[i];
        size_t lim = internal ? s->map_size : s->size;
        uintptr_t off = (uintptr_t)sym - (uintptr_t)s->base;
        if (s->base && off < lim && len <= lim - off) {
            *raddr = (net.virt_addr ? net.peer[pe].base[i] : 0) + off;
            *key = net.peer[pe].key[i];
            return;
        }
    }
    if ((uintptr_t)sym - (uintptr_t)net_cfg.device.base < net_cfg.device.size)
        net_cfg.fatal(routine,
                      "PE %d is on another node: RMA on the device "
                      "heap (GPU memory) across nodes is not supported",
                      pe);
    net_cfg.bad_addr(routine, sym, len, pe);
}

/* ------------------------------------------------------------ RMA */

void dsm_net_put(dsm_net_ctx_t *nc, const char *routine, void *sym,
                 const void *src, size_t len, int pe, int nbi)
{
    uint64_t raddr, key;
    const char *s = src;

    nc = nc_of(nc);
    remote_of(routine, sym, len, pe, 0, &raddr, &key);
    while (len) {
        size_t n = DSM_MIN(len, net.max_msg);
        struct iovec iov = {.iov_base = (void *)s, .iov_len = n};
        struct fi_rma_iov rma = {.addr = raddr, .len = n, .key = key};
        net_op_t op = {0};
        int inj = n <= net.inject;
        struct fi_msg_rma msg = {
            .msg_iov = &iov,
            .iov_count = 1,
            .addr = net.addr[pe],
            .rma_iov = &rma,
            .rma_iov_count = 1,
            .context = inj || nbi ? (void *)&nbi_op : (void *)&op,
        };
        /* Blocking: src reusable on return (an injected one already is);
         * nbi: the caller keeps src valid until quiet, the counters tell. */
        int wait = !inj && !nbi;
        nc_post_begin(nc);
        /* Marked under the lock, before the post: a quiet that clears the
         * mark waits for this write. A blocking delivery-complete write is
         * visible when we return and needs no mark. */
        if (!(wait && net.delivery))
            __atomic_store_n(&nc->written[pe], 1, __ATOMIC_RELAXED);
        NET_POST(nc, routine, "put", pe,
                 fi_writemsg(nc->ep, &msg,
                             net.wflags | (inj ? FI_INJECT : 0) |
                                 (wait ? FI_COMPLETION : 0)));
        nc_post_end(nc);
        if (wait)
            op_wait(&op);
        s += n;
        raddr += n;
        len -= n;
    }
}

/* Post one read of n bytes at (raddr, key) of pe into d; the caller holds
 * nc's lock. op: waited for by the caller (FI_COMPLETION), or NULL. */
static void post_read(dsm_net_ctx_t *nc, const char *routine, void *d,
                      size_t n, uint64_t raddr, uint64_t key, int pe,
                      net_op_t *op)
{
    struct iovec iov = {.iov_base = d, .iov_len = n};
    struct fi_rma_iov rma = {.addr = raddr, .len = n, .key = key};
    struct fi_msg_rma msg = {
        .msg_iov = &iov,
        .iov_count = 1,
        .addr = net.addr[pe],
        .rma_iov = &rma,
        .rma_iov_count = 1,
        .context = op ? (void *)op : (void *)&nbi_op,
    };
    NET_POST(nc, routine, "get", pe,
             fi_readmsg(nc->ep, &msg, op ? FI_COMPLETION : 0));
}

void dsm_net_get(dsm_net_ctx_t *nc, const char *routine, void *dst,
                 const void *sym, size_t len, int pe, int nbi)
{
    uint64_t raddr, key;
    char *d = dst;

    nc = nc_of(nc);
    remote_of(routine, sym, len, pe, 0, &raddr, &key);
    while (len) {
        size_t n = DSM_MIN(len, net.max_msg);
        net_op_t op = {0};
        nc_post_begin(nc);
        post_read(nc, routine, d, n, raddr, key, pe, nbi ? NULL : &op);
        nc_post_end(nc);
        if (!nbi)
            op_wait(&op);
        d += n;
        raddr += n;
        len -= n;
    }
}

/* ------------------------------------------------------------ atomics */

static enum fi_op fi_op_of(int op)
{
    switch (op) {
    case DSM_AMO_FETCH:
        return FI_ATOMIC_READ;
    case DSM_AMO_SET:
    case DSM_AMO_SWAP:
        return FI_ATOMIC_WRITE;
    case DSM_AMO_CSWAP:
        return FI_CSWAP;
    case DSM_AMO_ADD:
        return FI_SUM;
    case DSM_AMO_AND:
        return FI_BAND;
    case DSM_AMO_OR:
        return FI_BOR;
    default:
        return FI_BXOR;
    }
}

/* Operations that always return the old value (the others do when the
 * caller asks: fetch_add, fetch_and, ...). */
static int op_fetches(int op)
{
    return op != DSM_AMO_SET && op != DSM_AMO_ADD && op != DSM_AMO_AND &&
           op != DSM_AMO_OR && op != DSM_AMO_XOR;
}

/* fetched != NULL: the fetching form (fi_fetch_atomic/fi_compare_atomic,
 * waited for); NULL: put-like fi_atomic, complete at quiet. */
static void amo_native(dsm_net_ctx_t *nc, const char *routine, int op,
                       uint64_t raddr, uint64_t key, enum fi_datatype dt,
                       const void *val, const void *cmp, void *fetched, int pe)
{
    struct fi_ioc ioc = {.addr = (void *)val, .count = 1};
    struct fi_ioc res = {.addr = fetched, .count = 1};
    struct fi_ioc cmpv = {.addr = (void *)cmp, .count = 1};
    struct fi_rma_ioc rma = {.addr = raddr, .count = 1, .key = key};
    struct fi_msg_atomic msg = {
        .msg_iov = &ioc,
        .iov_count = 1,
        .addr = net.addr[pe],
        .rma_iov = &rma,
        .rma_iov_count = 1,
        .datatype = dt,
        .op = fi_op_of(op),
    };
    net_op_t done = {0};
    uint64_t scratch = 0;

    if (op == DSM_AMO_FETCH)
        ioc.addr = &scratch; /* ignored operand of FI_ATOMIC_READ */
    nc_post_begin(nc);
    if (fetched) {
        msg.context = &done;
        if (op == DSM_AMO_CSWAP)
            NET_POST(nc, routine, "compare-and-swap", pe,
                     fi_compare_atomicmsg(nc->ep, &msg, &cmpv, NULL, 1, &res,
                                          NULL, 1, FI_COMPLETION));
        else
            NET_POST(nc, routine, "fetching atomic", pe,
                     fi_fetch_atomicmsg(nc->ep, &msg, &res, NULL, 1,
                                        FI_COMPLETION));
    } else if (pe == net_cfg.me) {
        /* On my own word: complete on return, since the caller may read it
         * next with a plain load (every on-node AMO behaves so). */
        msg.context = &done;
        NET_POST(nc, routine, "atomic", pe,
                 fi_atomicmsg(nc->ep, &msg, net.wflags | FI_COMPLETION));
    } else {
        /* Put-like: the operand is injected, completion comes at quiet. */
        msg.context = &nbi_op;
        __atomic_store_n(&nc->written[pe], 1, __ATOMIC_RELAXED);
        NET_POST(nc, routine, "atomic", pe,
                 fi_atomicmsg(nc->ep, &msg, net.wflags | FI_INJECT));
    }
    nc_post_end(nc);
    if (msg.context == &done)
        op_wait(&done);
}

#define AMO_APPLY(W, op, old, val)                                             \
    ((op) == DSM_AMO_ADD   ? (W)((old) + (val))                                \
     : (op) == DSM_AMO_AND ? (W)((old) & (val))                                \
     : (op) == DSM_AMO_OR  ? (W)((old) | (val))                                \
     : (op) == DSM_AMO_XOR ? (W)((old) ^ (val))                                \
                           : (W)(val))

/* The documented alternative for an operation the provider lacks:
 * compare-and-swap until the word did not change under us. */
static void amo_cas_loop(dsm_net_ctx_t *nc, const char *routine, int op,
                         uint64_t raddr, uint64_t key, size_t size,
                         const void *val, void *fetched, int pe)
{
    enum fi_datatype dt = size == 8 ? FI_UINT64 : FI_UINT32;
    uint64_t old = 0, seen = 0, nv = 0, v = 0, zero = 0;

    memcpy(&v, val ? val : &zero, size);
    /* First guess by an atomic read (or a CAS of 0 by 0 when the provider
     * lacks even that: it returns the word unchanged). */
    if (net.amo_mode[DSM_AMO_FETCH][size == 8][1] == AMO_NATIVE)
        amo_native(nc, routine, DSM_AMO_FETCH, raddr, key, dt, NULL, NULL,
                   &old, pe);
    else
        amo_native(nc, routine, DSM_AMO_CSWAP, raddr, key, dt, &zero, &zero,
                   &old, pe);
    for (;;) {
        if (op == DSM_AMO_FETCH) {
            seen = old;
            nv = old;
        } else if (size == 8) {
            nv = AMO_APPLY(uint64_t, op, old, v);
        } else {
            nv = AMO_APPLY(uint32_t, op, (uint32_t)old, (uint32_t)v);
        }
        amo_native(nc, routine, DSM_AMO_CSWAP, raddr, key, dt, &nv, &old,
                   &seen, pe);
        if (seen == old)
            break;
        old = seen;
    }
    if (fetched)
        memcpy(fetched, &old, size);
}

static void amo_at(dsm_net_ctx_t *nc, const char *routine, int op,
                   const void *sym, size_t size, const void *val,
                   const void *cmp, void *fetched, int pe, int internal)
{
    uint64_t raddr, key, scratch = 0;

    nc = nc_of(nc);
    remote_of(routine, sym, size, pe, internal, &raddr, &key);
    /* SWAP without a result buffer still fetches (FI_ATOMIC_WRITE through
     * fetch_atomic); its result goes to scratch. */
    if (op_fetches(op) && !fetched)
        fetched = &scratch;
    if (net.amo_mode[op][size == 8][fetched != NULL] == AMO_CAS_LOOP) {
        if (op == DSM_AMO_CSWAP) /* CSWAP itself is native (checked) */
            net_cfg.fatal(routine, "internal: CSWAP cannot be emulated");
        amo_cas_loop(nc, routine, op, raddr, key, size, val, fetched, pe);
        return;
    }
    amo_native(nc, routine, op, raddr, key, size == 8 ? FI_UINT64 : FI_UINT32,
               val, cmp, fetched, pe);
}

void dsm_net_amo(dsm_net_ctx_t *nc, const char *routine, int op, void *sym,
                 size_t size, const void *val, const void *cmp, void *fetched,
                 int pe)
{
    amo_at(nc, routine, op, sym, size, val, cmp, fetched, pe, 0);
}

/* ------------------------------------------------------------ contexts */

static dsm_status_t nc_open(dsm_net_ctx_t *nc, int shared);
static void nc_close(dsm_net_ctx_t *nc);

dsm_net_ctx_t *dsm_net_ctx_create(int flags)
{
    int shared = !!(flags & DSM_NET_CTX_SHARED);
    if (!net.on)
        return NULL;
    if (flags & DSM_NET_CTX_DEFAULT) {
        /* Set before any other thread of the program can post. */
        net_dflt.shared = shared;
        return &net_dflt;
    }
    pthread_mutex_lock(&net.pool_lock);
    dsm_net_ctx_t *nc = net.pool;
    if (nc)
        net.pool = nc->next;
    pthread_mutex_unlock(&net.pool_lock);
    if (nc) {
        nc->shared = shared;
        return nc;
    }
    nc = calloc(1, sizeof(*nc));
    if (!nc)
        return NULL;
    if (nc_open(nc, shared) != DSM_OK) {
        nc_close(nc);
        free(nc);
        return NULL;
    }
    return nc;
}

void dsm_net_ctx_destroy(dsm_net_ctx_t *nc)
{
    if (!nc || !net.on)
        return;
    dsm_net_quiet(nc);
    if (nc == &net_dflt)
        return;
    /* Idle: nothing outstanding, no marks (quiet cleared them). */
    pthread_mutex_lock(&net.pool_lock);
    nc->next = net.pool;
    net.pool = nc;
    pthread_mutex_unlock(&net.pool_lock);
}

/* ------------------------------------------------------------ quiet */

/* A read of 8 bytes from the start of pe's internal area (its control
 * page): with reads ordered after writes (FI_ORDER_RAW, checked at
 * startup), it completes only after nc's earlier writes to pe were placed.
 * The caller holds nc exclusive. */
static void post_flush_read(dsm_net_ctx_t *nc, int pe, uint64_t *scratch)
{
    uint64_t raddr, key;
    const dsm_net_seg_t *heap = &net_cfg.segs[0];
    remote_of("shmem_quiet", heap->base + heap->size, sizeof(*scratch), pe, 1,
              &raddr, &key);
    post_read(nc, "shmem_quiet", scratch, sizeof(*scratch), raddr, key, pe,
              NULL);
}

void dsm_net_quiet(dsm_net_ctx_t *nc)
{
    if (!net.on)
        return;
    nc = nc_of(nc);
    nc_excl_begin(nc);
    nc_complete(nc);
    if (net.delivery) {
        /* Every write of nc was delivered; none posted meanwhile. */
        memset(nc->written, 0, (size_t)net_cfg.npes);
    } else {
        uint64_t scratch;
        int any = 0;
        for (int pe = 0; pe < net_cfg.npes; pe++)
            if (nc->written[pe]) {
                nc->written[pe] = 0;
                post_flush_read(nc, pe, &scratch);
                any = 1;
            }
        if (any)
            nc_complete(nc);
    }
    nc_excl_end(nc);
}

void dsm_net_flush(dsm_net_ctx_t *nc, int pe)
{
    if (!net.on)
        return;
    nc = nc_of(nc);
    nc_excl_begin(nc);
    /* The counters do not tell operations to pe from the others': all of
     * nc's complete; only pe's writes need the flush read. */
    nc_complete(nc);
    if (net.delivery) {
        memset(nc->written, 0, (size_t)net_cfg.npes);
    } else if (nc->written[pe]) {
        uint64_t scratch;
        nc->written[pe] = 0;
        post_flush_read(nc, pe, &scratch);
        nc_complete(nc);
    }
    nc_excl_end(nc);
}

void dsm_net_fence(dsm_net_ctx_t *nc)
{
    if (!net.ordered)
        dsm_net_quiet(nc);
}

void dsm_net_signal(dsm_net_ctx_t *nc, const char *routine, uint64_t *sym,
                    uint64_t v, int add, int pe, int internal)
{
    nc = nc_of(nc);
    /* Data before signal: only nc's writes to pe must land first, and there
     * are none to wait for unless some were posted since the last quiet or
     * flush (a collective's ready signal, a barrier's: none). A mark read
     * as clear was cleared by a quiet that completed its write. */
    if (!net.ordered && __atomic_load_n(&nc->written[pe], __ATOMIC_RELAXED))
        dsm_net_flush(nc, pe);
    /* The runtime's words (team, barrier) are in the internal area; a
     * user's must be in the user part, as for puts. */
    amo_at(nc, routine, add ? DSM_AMO_ADD : DSM_AMO_SET, sym, sizeof(v), &v,
           NULL, NULL, pe, internal);
    /* Send it now: the caller may leave the library next. */
    cq_poll();
}

uint64_t dsm_net_load64(const char *routine, const uint64_t *sym, int pe)
{
    uint64_t v = 0;
    amo_at(NULL, routine, DSM_AMO_FETCH, sym, sizeof(v), NULL, NULL, &v, pe,
           1);
    return v;
}

int dsm_net_ordered(void)
{
    return net.ordered;
}

const char *dsm_net_provider(void)
{
    return net.on ? net.prov : NULL;
}

const char *dsm_net_describe(void)
{
    return net.on ? net.describe : NULL;
}

/* ------------------------------------------------------------ setup */

static struct fi_info *hints_for(const char *prov, const char *domain,
                                 int delivery, int order)
{
    struct fi_info *h = ofi.dupinfo(NULL);
    if (!h)
        return NULL;
    h->caps = FI_RMA | FI_ATOMIC | FI_READ | FI_WRITE | FI_REMOTE_READ |
              FI_REMOTE_WRITE;
    h->mode = 0; /* our contexts are bare flags: no FI_CONTEXT space */
    h->ep_attr->type = FI_EP_RDM;
    h->domain_attr->threading = FI_THREAD_SAFE;
    h->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
                              FI_MR_PROV_KEY | FI_MR_ENDPOINT;
    /* Our waits and the progress thread drive progress: a provider that
     * would run its own spinning thread (sockets) must not, on a node
     * whose cores the PEs already use. */
    h->domain_attr->data_progress = FI_PROGRESS_MANUAL;
    h->domain_attr->control_progress = FI_PROGRESS_MANUAL;
    /* delivery 1: delivery-complete writes; 0: reads ordered after
     * writes instead (quiet's flush reads); -1: neither (diagnostics). */
    if (delivery > 0)
        h->tx_attr->op_flags = FI_DELIVERY_COMPLETE;
    else if (delivery == 0)
        h->tx_attr->msg_order |= FI_ORDER_RAW;
    if (order)
        h->tx_attr->msg_order |= FI_ORDER_WAW;
    if (prov)
        h->fabric_attr->prov_name = strdup(prov);
    if (domain)
        h->domain_attr->name = strdup(domain);
    return h;
}

/* Providers that cannot reach another node: skipped by auto. */
static int node_local_prov(const char *name)
{
    return !strncmp(name, "shm", 3) || !strncmp(name, "sm2", 3) ||
           !strncmp(name, "udp", 3) || strstr(name, "ofi_hook") != NULL;
}

/* The providers here that offer RMA and atomics, for error messages. */
static void list_capable(char *out, size_t n)
{
    struct fi_info *h = hints_for(NULL, NULL, -1, 0), *all = NULL, *i;
    size_t used = 0;
    out[0] = 0;
    if (!h)
        return;
    if (ofi.getinfo(NET_FI_VERSION, NULL, NULL, 0, h, &all) == 0) {
        for (i = all; i && used + 1 < n; i = i->next) {
            const char *p = i->fabric_attr->prov_name;
            if (strstr(out, p))
                continue;
            used += (size_t)snprintf(out + used, n - used, "%s%s",
                                     used ? ", " : "", p);
        }
        ofi.freeinfo(all);
    }
    ofi.freeinfo(h);
}

static dsm_status_t pick_info(void)
{
    const char *prov =
        strcmp(net_cfg.provider, "auto") ? net_cfg.provider : NULL;
    const char *dom = strcmp(net_cfg.domain, "auto") ? net_cfg.domain : NULL;
    /* One machine pretending to be several: loopback unless told. */
    int lo = !dom && net_cfg.force_network && net_cfg.num_nodes == 1;
    int rc = -FI_ENODATA;

    /* tcp and sockets skip the loopback interface while another exists
     * unless told to use it (their own variables win when set). */
    if (lo) {
        setenv("FI_TCP_IFACE", "lo", 0);
        setenv("FI_SOCKETS_IFACE", "lo", 0);
    }
    /* Preferences, most important first: the domain (loopback when one
     * machine plays several nodes), delivery-complete writes (else flush
     * reads at quiet), write-after-write order (else a quiet before each
     * signal that follows data). */
    const char *doms[2] = {dom ? dom : (lo ? "lo" : NULL), NULL};
    /* auto: the provider is libfabric's first that fits at all (its list
     * is in order of preference: tcp;ofi_rxm before sockets); only then
     * the attributes are refined for it. */
    static char first[64];
    for (int di = 0; di < (lo ? 2 : 1) && !prov; di++) {
        struct fi_info *h = hints_for(NULL, doms[di], -1, 0), *all = NULL, *i;
        if (!h)
            return DSM_ERR_NOMEM;
        rc = ofi.getinfo(NET_FI_VERSION, NULL, NULL, 0, h, &all);
        ofi.freeinfo(h);
        for (i = rc ? NULL : all; i; i = i->next)
            if (!node_local_prov(i->fabric_attr->prov_name)) {
                snprintf(first, sizeof(first), "%s",
                         i->fabric_attr->prov_name);
                prov = first;
                break;
            }
        if (all)
            ofi.freeinfo(all);
    }
    /* SHMEM_OFI_COMPLETION=read: flush reads even where delivery-complete
     * is offered (tests that method on a provider that has both). */
    const char *cm = net_cfg.completion;
    int dmax = 1, dmin = 0;
    if (cm && !strcmp(cm, "read"))
        dmax = 0;
    else if (cm && !strcmp(cm, "delivery"))
        dmin = 1;
    else if (cm && *cm && strcmp(cm, "auto")) {
        dsm_log_error("shmem_init: SHMEM_OFI_COMPLETION=%s: use auto, "
                      "delivery or read", cm);
        return DSM_ERR_INVAL;
    }
    for (int di = 0; di < (lo ? 2 : 1) && !net.info; di++)
        for (int delivery = dmax; delivery >= dmin && !net.info; delivery--)
            for (int order = 1; order >= 0 && !net.info; order--) {
                struct fi_info *h = hints_for(prov, doms[di], delivery, order);
                struct fi_info *all = NULL, *i;
                if (!h)
                    return DSM_ERR_NOMEM;
                rc = ofi.getinfo(NET_FI_VERSION, NULL, NULL, 0, h, &all);
                ofi.freeinfo(h);
                if (rc)
                    continue;
                for (i = all; i; i = i->next) {
                    if (!prov && node_local_prov(i->fabric_attr->prov_name))
                        continue;
                    /* Without delivery-complete, quiet's flush read must
                     * come after writes of any size we post (1 GiB). */
                    if (!delivery &&
                        (!(i->tx_attr->msg_order & FI_ORDER_RAW) ||
                         i->ep_attr->max_order_raw_size < ((size_t)1 << 30)))
                        continue;
                    break;
                }
                if (i) {
                    net.info = ofi.dupinfo(i);
                    net.delivery = delivery;
                    /* Signals ride behind data of any size we post (one
                     * write is at most 1 GiB, net.max_msg). */
                    net.ordered = order &&
                                  (i->tx_attr->msg_order & FI_ORDER_WAW) &&
                                  i->ep_attr->max_order_waw_size >=
                                      ((size_t)1 << 30);
                }
                ofi.freeinfo(all);
            }
    if (!net.info) {
        /* Would the provider do without a way to complete writes? */
        struct fi_info *h = hints_for(prov, doms[0], -1, 0), *all = NULL;
        int any = h && ofi.getinfo(NET_FI_VERSION, NULL, NULL, 0, h, &all) == 0;
        if (h)
            ofi.freeinfo(h);
        if (all)
            ofi.freeinfo(all);
        if (!any)
            goto none;
        /* Providers answered, but none can complete writes: neither
         * delivery-complete nor reads ordered after writes. */
        dsm_log_error("shmem_init: libfabric provider %s %s read-after-"
                      "write order (FI_ORDER_RAW): quiet could not complete "
                      "puts; %s",
                      prov ? prov : "(auto)",
                      dmax ? "offers neither FI_DELIVERY_COMPLETE nor"
                           : "lacks (SHMEM_OFI_COMPLETION=read)",
                      dmax ? "set SHMEM_OFI_PROVIDER to one that has either "
                             "(e.g. tcp;ofi_rxm or sockets)"
                           : "unset SHMEM_OFI_COMPLETION or use a provider "
                             "with that order (e.g. sockets)");
        return DSM_ERR_UNSUPPORTED;
    }
none:
    if (!net.info) {
        char cap[256];
        list_capable(cap, sizeof(cap));
        dsm_log_error("shmem_init: no libfabric provider%s%s%s%s offers an "
                      "RDM endpoint with FI_RMA and FI_ATOMIC (%s); set "
                      "SHMEM_OFI_PROVIDER to one that does%s%s",
                      prov ? " '" : "", prov ? prov : "", prov ? "'" : "",
                      dom ? " on that domain" : "", ofi.strerror(-rc),
                      cap[0] ? ": here " : "", cap[0] ? cap : "");
        return DSM_ERR_UNSUPPORTED;
    }
    snprintf(net.prov, sizeof(net.prov), "%s",
             net.info->fabric_attr->prov_name);
    return DSM_OK;
}

/* Native or CAS loop for every (op, size); fails without 64-bit CSWAP. */
static dsm_status_t check_atomics(void)
{
    static const int ops[] = {DSM_AMO_FETCH, DSM_AMO_SET, DSM_AMO_SWAP,
                              DSM_AMO_CSWAP, DSM_AMO_ADD, DSM_AMO_AND,
                              DSM_AMO_OR, DSM_AMO_XOR};
    char lacked[256] = "";
    size_t used = 0;

    for (size_t k = 0; k < DSM_ARRAY_SIZE(ops); k++) {
        for (int s8 = 0; s8 < 2; s8++) {
            for (int f = 0; f < 2; f++) {
                int op = ops[k], rc;
                struct fi_atomic_attr attr;
                enum fi_datatype dt = s8 ? FI_UINT64 : FI_UINT32;
                if (op_fetches(op) && !f)
                    continue; /* only the fetching form exists */
                uint64_t kind = op == DSM_AMO_CSWAP ? FI_COMPARE_ATOMIC
                                : f                 ? FI_FETCH_ATOMIC
                                                    : 0;
                rc = fi_query_atomic(net.domain, dt, fi_op_of(op), &attr,
                                     kind);
                net.amo_mode[op][s8][f] = rc ? AMO_CAS_LOOP : AMO_NATIVE;
                if (rc && used + 1 < sizeof(lacked))
                    used += (size_t)snprintf(
                        lacked + used, sizeof(lacked) - used, "%s%s%s/%s",
                        used ? ", " : "", f ? "fetch " : "",
                        ofi.tostr(&(enum fi_op){fi_op_of(op)},
                                 FI_TYPE_ATOMIC_OP),
                        s8 ? "u64" : "u32");
            }
        }
    }
    if (net.amo_mode[DSM_AMO_CSWAP][1][1] != AMO_NATIVE ||
        net.amo_mode[DSM_AMO_CSWAP][0][1] != AMO_NATIVE) {
        dsm_log_error("shmem_init: libfabric provider %s lacks FI_CSWAP on "
                      "32/64-bit integers, which every OpenSHMEM atomic "
                      "needs; set SHMEM_OFI_PROVIDER (e.g. tcp;ofi_rxm or "
                      "sockets)", net.prov);
        return DSM_ERR_UNSUPPORTED;
    }
    if (used)
        dsm_debug("network: provider %s lacks %s: done as compare-and-swap "
                  "loops", net.prov, lacked);
    return DSM_OK;
}

#define OFI_CHECK(call, what)                                                  \
    do {                                                                       \
        int rc_ = (int)(call);                                                 \
        if (rc_) {                                                             \
            dsm_log_error("shmem_init: %s failed (libfabric provider %s): %s", \
                          what, net.prov, ofi.strerror(-rc_));                  \
            return DSM_ERR_UNSUPPORTED;                                        \
        }                                                                      \
    } while (0)

/* A context's endpoint, bound to its own counters and to the shared CQ
 * (reading it progresses every endpoint) and AV. who: the routine named in
 * an error line. */
static dsm_status_t nc_open_as(dsm_net_ctx_t *nc, int shared, const char *who)
{
    struct fi_cntr_attr cna = {.events = FI_CNTR_EVENTS_COMP,
                               .wait_obj = FI_WAIT_NONE};
    const char *what = "fi_endpoint";
    int rc;

    nc->shared = shared;
    pthread_rwlockattr_t la;
    pthread_rwlockattr_init(&la);
    /* A quiet waiting for the lock must not starve behind posters. */
    pthread_rwlockattr_setkind_np(&la,
                                  PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&nc->lock, &la);
    pthread_rwlockattr_destroy(&la);
    nc->written = calloc((size_t)net_cfg.npes, 1);
    if (!nc->written)
        return DSM_ERR_NOMEM;
    if ((rc = fi_endpoint(net.domain, net.info, &nc->ep, NULL)))
        goto fail;
    what = "fi_cntr_open";
    if ((rc = fi_cntr_open(net.domain, &cna, &nc->wcntr, NULL)) ||
        (rc = fi_cntr_open(net.domain, &cna, &nc->rcntr, NULL)))
        goto fail;
    what = "binding the counters";
    if ((rc = fi_ep_bind(nc->ep, &nc->wcntr->fid, FI_WRITE)) ||
        (rc = fi_ep_bind(nc->ep, &nc->rcntr->fid, FI_READ)))
        goto fail;
    what = "binding the completion queue";
    if ((rc = fi_ep_bind(nc->ep, &net.cq->fid,
                         FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION)))
        goto fail;
    what = "binding the AV";
    if ((rc = fi_ep_bind(nc->ep, &net.av->fid, 0)))
        goto fail;
    what = "fi_enable";
    if ((rc = fi_enable(nc->ep)))
        goto fail;
    return DSM_OK;
fail:
    dsm_log_error("%s: %s failed (libfabric provider %s): %s", who, what,
                  net.prov, ofi.strerror(-rc));
    return DSM_ERR_UNSUPPORTED;
}

/* Opening and closing an endpoint bound to the shared CQ while another
 * thread reads that CQ (which progresses every endpoint bound to it)
 * crashed tcp;ofi_rxm (libfabric 1.17): both hold the CQ's reader lock. */
static dsm_status_t nc_open(dsm_net_ctx_t *nc, int shared)
{
    pthread_mutex_lock(&net.cq_lock);
    dsm_status_t st = nc_open_as(nc, shared, "shmem_ctx_create");
    pthread_mutex_unlock(&net.cq_lock);
    return st;
}

static void nc_close(dsm_net_ctx_t *nc)
{
    pthread_mutex_lock(&net.cq_lock);
    if (nc->ep)
        fi_close(&nc->ep->fid);
    if (nc->wcntr)
        fi_close(&nc->wcntr->fid);
    if (nc->rcntr)
        fi_close(&nc->rcntr->fid);
    if (nc->written)
        pthread_rwlock_destroy(&nc->lock);
    free(nc->written);
    memset(nc, 0, sizeof(*nc));
    pthread_mutex_unlock(&net.cq_lock);
}

static dsm_status_t open_endpoint(void)
{
    struct fi_cq_attr cqa = {.format = FI_CQ_FORMAT_CONTEXT,
                             .wait_obj = FI_WAIT_NONE};
    struct fi_av_attr ava = {.type = FI_AV_TABLE};
    dsm_status_t st;

    OFI_CHECK(ofi.fabric(net.info->fabric_attr, &net.fabric, NULL),
              "fi_fabric");
    OFI_CHECK(fi_domain(net.fabric, net.info, &net.domain, NULL),
              "fi_domain");
    OFI_CHECK(fi_cq_open(net.domain, &cqa, &net.cq, NULL), "fi_cq_open");
    OFI_CHECK(fi_av_open(net.domain, &ava, &net.av, NULL), "fi_av_open");
    /* The default context's endpoint: the one every peer targets. Shared
     * under SHMEM_THREAD_MULTIPLE (dsm_net_ctx_create sets it again when
     * the path table opens the default context). */
    st = nc_open_as(&net_dflt, net_cfg.thread_multiple, "shmem_init");
    if (st != DSM_OK)
        return st;
    net.virt_addr = !!(net.info->domain_attr->mr_mode & FI_MR_VIRT_ADDR);
    net.inject = net.info->tx_attr->inject_size;
    net.max_msg = DSM_MIN(net.info->ep_attr->max_msg_size, (size_t)1 << 30);
    net.wflags = net.delivery ? FI_DELIVERY_COMPLETE : 0;
    return DSM_OK;
}

static dsm_status_t register_segments(net_pub_t *pub)
{
    for (int i = 0; i < NET_NSEG; i++) {
        const dsm_net_seg_t *s = &net_cfg.segs[i];
        if (!s->base || !s->map_size)
            continue;
        OFI_CHECK(fi_mr_reg(net.domain, s->base, s->map_size,
                            FI_REMOTE_READ | FI_REMOTE_WRITE, 0,
                            (uint64_t)i + 1, 0, &net.mr[i], NULL),
                  i == 0 ? "registering the symmetric heap"
                         : "registering the static data");
        if (net.info->domain_attr->mr_mode & FI_MR_ENDPOINT) {
            OFI_CHECK(fi_mr_bind(net.mr[i], &net_dflt.ep->fid, 0),
                      "binding a memory region");
            OFI_CHECK(fi_mr_enable(net.mr[i]), "enabling a memory region");
        }
        net.desc[i] = fi_mr_desc(net.mr[i]);
        pub->base[i] = (uint64_t)(uintptr_t)s->base;
        pub->key[i] = fi_mr_key(net.mr[i]);
        pub->len[i] = s->map_size;
    }
    return DSM_OK;
}

static dsm_status_t exchange(net_pub_t *pub)
{
    const dsm_net_exchange_t *b = &net_cfg.exchange;
    const int n = net_cfg.npes;
    size_t namelen = sizeof(pub->name);
    char *names;
    dsm_status_t st;

    OFI_CHECK(fi_getname(&net_dflt.ep->fid, pub->name, &namelen),
              "fi_getname");
    pub->namelen = (uint32_t)namelen;
    if ((st = b->put("net.pub", pub, sizeof(*pub))) != DSM_OK ||
        (st = b->fence()) != DSM_OK)
        return st;
    names = calloc((size_t)n, NET_NAME_MAX);
    net.addr = calloc((size_t)n, sizeof(fi_addr_t));
    net.peer = calloc((size_t)n, sizeof(net_peer_t));
    if (!names || !net.addr || !net.peer) {
        free(names);
        return DSM_ERR_NOMEM;
    }
    for (int pe = 0; pe < n; pe++) {
        net_pub_t theirs;
        size_t len = sizeof(theirs);
        if ((st = b->get(pe, "net.pub", &theirs, &len)) != DSM_OK) {
            free(names);
            return st;
        }
        if (theirs.namelen != pub->namelen) {
            dsm_log_error("shmem_init: PE %d's endpoint name has %u bytes, "
                          "this PE's %u: every PE must use the same libfabric "
                          "provider (SHMEM_OFI_PROVIDER)", pe,
                          theirs.namelen, pub->namelen);
            free(names);
            return DSM_ERR_INVAL;
        }
        memcpy(names + (size_t)pe * pub->namelen, theirs.name, pub->namelen);
        memcpy(net.peer[pe].base, theirs.base, sizeof(theirs.base));
        memcpy(net.peer[pe].key, theirs.key, sizeof(theirs.key));
    }
    /* The AV must take names packed back to back. */
    int got = fi_av_insert(net.av, names, (size_t)n, net.addr, 0, NULL);
    free(names);
    if (got != n) {
        dsm_log_error("shmem_init: fi_av_insert took %d of %d PE addresses "
                      "(libfabric provider %s)", got, n, net.prov);
        return DSM_ERR_UNSUPPORTED;
    }
    return DSM_OK;
}

/* Signals whose handlers provider libraries replace when libfabric loads
 * them: Debian's psm provider library (libinfinipath) installs, from its
 * constructor, handlers that call exit(), which would run the implicit
 * shmem_finalize in a PE that aborts and hang the job instead of ending it
 * (measured: abort() under SHMEM_FORCE_NETWORK=1). The application's
 * handlers are put back once libfabric is loaded and opened. */
static const int kept_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE,
                                   SIGABRT, SIGINT, SIGTERM, SIGQUIT};

dsm_status_t dsm_net_init(const dsm_net_config_t *cfg)
{
    const int n = cfg->npes;
    struct sigaction saved[DSM_ARRAY_SIZE(kept_signals)];
    net_pub_t pub;
    dsm_status_t st;
    int remote = 0;

    net_cfg = *cfg;
    for (int pe = 0; pe < n; pe++)
        remote += !cfg->mapped[pe];
    if (!remote)
        return DSM_OK;
    pthread_mutex_init(&net.cq_lock, NULL);
    pthread_mutex_init(&net.pool_lock, NULL);
    memset(&pub, 0, sizeof(pub));
    for (size_t i = 0; i < DSM_ARRAY_SIZE(kept_signals); i++)
        sigaction(kept_signals[i], NULL, &saved[i]);
    st = ofi_load();
    if (st == DSM_OK)
        st = pick_info();
    if (st == DSM_OK)
        st = open_endpoint();
    for (size_t i = 0; i < DSM_ARRAY_SIZE(kept_signals); i++)
        sigaction(kept_signals[i], &saved[i], NULL);
    if (st != DSM_OK || 
        (st = check_atomics()) != DSM_OK ||
        (st = register_segments(&pub)) != DSM_OK ||
        (st = exchange(&pub)) != DSM_OK)
        return st;
    net.on = 1;
    snprintf(net.describe, sizeof(net.describe),
             "%s on %s; quiet: %s; signal after data: %s; an endpoint per "
             "context", net.prov, net.info->domain_attr->name,
             net.delivery ? "delivery-complete writes"
                          : "a read per PE written (read-after-write order)",
             net.ordered ? "write order" : "completion wait");
    dsm_net_remote = calloc((size_t)n, 1);
    if (!dsm_net_remote)
        return DSM_ERR_NOMEM;
    for (int pe = 0; pe < n; pe++)
        dsm_net_remote[pe] = !cfg->mapped[pe];
    dsm_backoff_progress = dsm_net_progress;
    net.prog_us = cfg->progress_us;
    if (net.prog_us < 0) {
        /* The thread costs where it has no core of its own (measured on 2
         * cores, 2 PEs: fcollect 1 MiB over sockets 0.64 ms without it,
         * 0.94 ms with a 1 ms interval, 1.2 ms with 100 us), but some
         * providers (sockets) send a posted operation only when progressed:
         * without any thread, a signal posted just before the PE leaves the
         * library waits for its next call (a 3-PE job hung in finalize).
         * So: 100 us with a core per thread, else a slow 1 ms. */
        long cores = dsm_ncores();
        net.prog_us = cores >= 2L * cfg->node_size ? 100 : 1000;
    }
    if (net.prog_us > 0) {
        if (pthread_create(&net.prog, NULL, prog_main, NULL)) {
            dsm_log_error("shmem_init: cannot start the network progress "
                          "thread: %s", strerror(errno));
            return DSM_ERR_NOMEM;
        }
        net.prog_on = 1;
    }
    dsm_debug("network: %d of %d PEs through libfabric provider %s on %s "
              "(%s, delivery-complete %s, write order %s, inject %zu B, "
              "progress thread %ld us)",
              remote, n, net.prov, net.info->domain_attr->name,
              net.virt_addr ? "virtual addresses" : "offsets",
              net.delivery ? "yes" : "no (flush reads)",
              net.ordered ? "yes" : "no (quiet before signals)", net.inject,
              net.prog_us);
    return DSM_OK;
}

void dsm_net_fini(void)
{
    dsm_backoff_progress = NULL;
    if (net.prog_on) {
        __atomic_store_n(&net.prog_stop, 1, __ATOMIC_RELEASE);
        pthread_join(net.prog, NULL);
        net.prog_on = 0;
    }
    if (net.on)
        dsm_net_quiet(NULL);
    while (net.pool) {
        dsm_net_ctx_t *nc = net.pool;
        net.pool = nc->next;
        nc_close(nc);
        free(nc);
    }
    nc_close(&net_dflt);
    for (int i = 0; i < NET_NSEG; i++)
        if (net.mr[i])
            fi_close(&net.mr[i]->fid);
    if (net.av)
        fi_close(&net.av->fid);
    if (net.cq)
        fi_close(&net.cq->fid);
    if (net.domain)
        fi_close(&net.domain->fid);
    if (net.fabric)
        fi_close(&net.fabric->fid);
    if (net.info)
        ofi.freeinfo(net.info);
    free(net.addr);
    free(net.peer);
    free(dsm_net_remote);
    dsm_net_remote = NULL;
    memset(&net, 0, sizeof(net));
}

#endif /* DSM_HAVE_OFI */
