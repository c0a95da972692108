/*
 * libfabric data path for PEs on other nodes (net.h): set-up. The
 * provider and domain choice is in ofi_pick.c, the contexts and
 * completion in ofi_ep.c, the operations in ofi_rma.c (ofi_int.h has the
 * map and the accounting).
 *
 * One FI_THREAD_SAFE domain, one AV table holding every PE, RDM
 * endpoints ("lanes") in selective-completion mode: lane 0 and the
 * heartbeat's on the shared CQ, each context lane on a CQ of its own;
 * contexts are accounts on a lane (ofi_ep.c).
 *
 * Completion of writes: FI_DELIVERY_COMPLETE where the provider accepts it
 * (their completion means the data is visible at the target). Otherwise
 * the provider must order reads after writes (FI_ORDER_RAW, asked for and
 * checked at startup; a provider with neither is refused): quiet then adds
 * a read from every PE written since the last quiet, which completes only
 * after those writes were placed. SHMEM_OFI_COMPLETION=read forces the
 * second method (for testing it on a provider that has both).
 *
 * Fence (SHMEM_OFI_FENCE): free where the provider places writes in order
 * (FI_ORDER_WAW for any size); otherwise the next write to a PE written
 * before the fence waits for that PE's earlier operations only (ofi_ep.c;
 * dsm_ofi_pick_fence in ofi_pick.c says why not FI_FENCE).
 *
 * Memory: the heap segment (user heap + the runtime's internal area, so
 * that team signal words are reachable) and the static segment are
 * registered; each PE publishes its endpoint name, the segments' base
 * addresses and keys through the bootstrap.
 *
 * The runtime is reached only through what dsm_net_init was handed
 * (net.h: dsm_net_config_t): the job's layout, the segments, the
 * settings, and the fatal, bad-address and wait callbacks.
 *
 * Progress: waits call dsm_net_progress; a thread (SHMEM_OFI_PROGRESS_US)
 * reads the CQ while the PE computes, so that providers with manual
 * progress (tcp;ofi_rxm) answer remote reads and atomics of idle targets.
 * Reading a CQ progresses the endpoint bound to it; the reader reads
 * every lane's (dsm_ofi_cq_poll).
 */
#include "net/net.h"

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

#ifndef DSM_HAVE_OFI

/* What the runtime handed over at init (net.h). */
static dsm_net_config_t net_cfg;

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
void dsm_net_quiesce(void) {}
const char *dsm_net_provider(void) { return NULL; }
const char *dsm_net_describe(void) { return NULL; }
const char *dsm_net_domain(void) { return NULL; }
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

#include "net/auth.h"
#include "net/ofi_int.h"

#include <dlfcn.h>

/* libfabric is loaded when a job first needs the network, not linked: a
 * job on one node never maps it or the provider libraries it pulls in
 * (Debian's psm provider library installs signal handlers from its
 * constructor that turn abort() and crashes into exit(), which would run
 * the implicit shmem_finalize and hang the job). Only these entry points
 * are symbols; the rest of the API is inline calls through the objects'
 * ops tables. */
struct dsm_ofi_lib dsm_ofi_lib;
struct dsm_ofi dsm_ofi;
dsm_net_config_t dsm_ofi_cfg;

/* What every peer publishes: signed with the job's secret (tag, over
 * the PE's rank and every byte after tag), so that only a record made by
 * a PE of this job is taken (docs/SECURITY.md). */
typedef struct net_pub {
    uint64_t tag;
    uint64_t base[NET_NSEG];
    uint64_t key[NET_NSEG];
    uint64_t len[NET_NSEG];
    uint64_t live_base, live_key; /* the heartbeat word (ofi_live.c) */
    int32_t node;                 /* node id, for who watches whom */
    char live_name[NET_NAME_MAX]; /* the heartbeat's endpoint (namelen) */
    char host[DSM_NET_HOST_MAX];  /* for the lines that name a lost PE */
    uint32_t namelen;
    char name[NET_NAME_MAX];
} net_pub_t;

static dsm_status_t ofi_load(void)
{
    if (dsm_ofi_lib.lib)
        return DSM_OK;
    dsm_ofi_lib.lib = dlopen("libfabric.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!dsm_ofi_lib.lib) {
        dsm_log_error("shmem_init: PEs on other nodes need libfabric, which "
                      "cannot be loaded: %s (install libfabric1)", dlerror());
        return DSM_ERR_UNSUPPORTED;
    }
#define OFI_SYM(field, name)                                                   \
    *(void **)&dsm_ofi_lib.field = dlsym(dsm_ofi_lib.lib, name);                               \
    if (!dsm_ofi_lib.field) {                                                          \
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

/* ------------------------------------------------------------ errors */

/* A failed operation usually means its peer died; the launcher (or
 * mpirun) ends the job within milliseconds of seeing that, and reports
 * the dead PE's status. Give it a second before this PE fails the job
 * with status 1 in its place (measured: without it, `kill -9` of one PE
 * made the job return 1 instead of 137 in about half the runs). */
void dsm_ofi_peer_failure_grace(void)
{
    struct timespec ts = {1, 0};
    dsm_ofi_failing();
    nanosleep(&ts, NULL);
}

void dsm_ofi_failing(void)
{
    static int failing;
    /* One line per PE: a second thread that finds a failure (the CQ's next
     * error entry, the heartbeat) waits for the first to end the process. */
    if (__atomic_exchange_n(&failing, 1, __ATOMIC_ACQ_REL))
        for (;;)
            pause();
}

void dsm_ofi_fail(const char *routine, const char *what, int pe, ssize_t rc)
{
    dsm_ofi_peer_failure_grace();
    dsm_ofi_cfg.fatal(routine, "%s to PE %d failed over libfabric provider %s: %s",
                  what, pe, dsm_ofi.prov, dsm_ofi_lib.strerror((int)-rc));
}

int dsm_net_ordered(void)
{
    return dsm_ofi.ordered;
}

const char *dsm_net_provider(void)
{
    return dsm_ofi.on ? dsm_ofi.prov : NULL;
}

const char *dsm_net_describe(void)
{
    return dsm_ofi.on ? dsm_ofi.describe : NULL;
}

const char *dsm_net_domain(void)
{
    return dsm_ofi.on ? dsm_ofi.domain_line : NULL;
}

/* ------------------------------------------------------------ setup */

#define OFI_CHECK(call, what)                                                  \
    do {                                                                       \
        int rc_ = (int)(call);                                                 \
        if (rc_) {                                                             \
            dsm_log_error("shmem_init: %s failed (libfabric provider %s): %s", \
                          what, dsm_ofi.prov, dsm_ofi_lib.strerror(-rc_));                  \
            return DSM_ERR_UNSUPPORTED;                                        \
        }                                                                      \
    } while (0)

static dsm_status_t open_endpoint(void)
{
    struct fi_cq_attr cqa = {.format = FI_CQ_FORMAT_CONTEXT,
                             .wait_obj = FI_WAIT_NONE};
    struct fi_av_attr ava = {.type = FI_AV_TABLE};
    dsm_status_t st;

    OFI_CHECK(dsm_ofi_lib.fabric(dsm_ofi.info->fabric_attr, &dsm_ofi.fabric, NULL),
              "fi_fabric");
    OFI_CHECK(fi_domain(dsm_ofi.fabric, dsm_ofi.info, &dsm_ofi.domain, NULL),
              "fi_domain");
    /* Where waiters sleep (PEs outnumber cores, or SHMEM_WAIT_MODE=sleep),
     * a CQ with a wait fd if the provider offers one: a thread with nothing
     * else to do (the progress thread while the application computes, a
     * waiter that sleeps) blocks in poll() on it and wakes when a peer's
     * operation arrives, instead of after a fixed interval (ofi_ep.c,
     * dsm_ofi_block; measured: barrier_all over tcp;ofi_rxm, 4 PEs on 2
     * cores, 6.3 -> 2.2 ms). Not elsewhere: the wait object costs every
     * operation a signal of the fd (measured, 2 PEs, the same build with
     * and without it: fetching atomics 19.2 -> 21.0 us, 8 B put message
     * rate 0.137 -> 0.126 M/s), and waiters that never sleep need none. */
    cqa.wait_obj = dsm_backoff_may_sleep ? FI_WAIT_FD : FI_WAIT_NONE;
    if (cqa.wait_obj == FI_WAIT_FD &&
        fi_cq_open(dsm_ofi.domain, &cqa, &dsm_ofi.cq, NULL) == 0 &&
        fi_control(&dsm_ofi.cq->fid, FI_GETWAIT, &dsm_ofi.wait_fd) == 0) {
        dsm_ofi.wait_on = 1;
    } else {
        if (dsm_ofi.cq)
            fi_close(&dsm_ofi.cq->fid);
        dsm_ofi.cq = NULL;
        cqa.wait_obj = FI_WAIT_NONE;
        OFI_CHECK(fi_cq_open(dsm_ofi.domain, &cqa, &dsm_ofi.cq, NULL),
                  "fi_cq_open");
    }
    OFI_CHECK(fi_av_open(dsm_ofi.domain, &ava, &dsm_ofi.av, NULL), "fi_av_open");
    /* The default context's endpoint (lane 0): the one every peer
     * targets. Shared under SHMEM_THREAD_MULTIPLE (dsm_net_ctx_create sets
     * it again when the path table opens the default context). */
    if ((st = dsm_ofi_lane_open(&dsm_ofi.lanes[0], 0, "shmem_init")) != DSM_OK ||
        (st = dsm_ofi_ctx_init(&dsm_ofi_dflt,
                               dsm_ofi_cfg.thread_multiple)) != DSM_OK)
        return st;
    dsm_ofi.nlanes = 1;
    dsm_ofi.lanes[0].refs = 1;
    dsm_ofi_dflt.lane = &dsm_ofi.lanes[0];
    dsm_ofi_dflt.ep = dsm_ofi.lanes[0].ep;
    dsm_ofi.virt_addr = !!(dsm_ofi.info->domain_attr->mr_mode & FI_MR_VIRT_ADDR);
    dsm_ofi.inject = dsm_ofi.info->tx_attr->inject_size;
    dsm_ofi.max_msg = DSM_MIN(dsm_ofi.info->ep_attr->max_msg_size, (size_t)1 << 30);
    dsm_ofi.wflags = dsm_ofi.delivery ? FI_DELIVERY_COMPLETE : 0;
    /* Receives for batches of AMOs, before any peer knows our address. */
    return dsm_ofi_agg_init();
}

/* ------------------------------------------------------------ the secret */

/* The job's secret (docs/SECURITY.md): the launcher's, handed over in the
 * environment, or, under another launcher (PMIx), PE 0's, taken from the
 * bootstrap's store, which only the job's processes reach. */
static uint8_t job_secret[DSM_NET_SECRET_BYTES];

static dsm_status_t get_secret(void)
{
    const dsm_net_exchange_t *b = &dsm_ofi_cfg.exchange;
    size_t len = sizeof(job_secret);
    dsm_status_t st;

    if (dsm_ofi_cfg.secret) {
        if (dsm_net_secret_parse(dsm_ofi_cfg.secret, job_secret)) {
            dsm_log_error("shmem_init: the launcher's job secret is not %d "
                          "hex digits: the launcher and the library do not "
                          "match", 2 * DSM_NET_SECRET_BYTES);
            return DSM_ERR_INVAL;
        }
        return DSM_OK;
    }
    if (dsm_ofi_cfg.me == 0) {
        if (dsm_net_random(job_secret, sizeof(job_secret))) {
            dsm_log_error("shmem_init: no random source for the job's "
                          "network secret (getrandom and /dev/urandom "
                          "failed)");
            return DSM_ERR_UNSUPPORTED;
        }
        if ((st = b->put("dsm_ofi.secret", job_secret, len)) != DSM_OK)
            return st;
    }
    if ((st = b->fence()) != DSM_OK ||
        (st = b->get(0, "dsm_ofi.secret", job_secret, &len)) != DSM_OK)
        return st;
    return len == sizeof(job_secret) ? DSM_OK : DSM_ERR_INVAL;
}

/* The record's signature: the secret's hash of the PE's rank and the
 * record after its tag. */
static uint64_t pub_tag(int pe, const net_pub_t *pub)
{
    struct {
        int32_t pe;
        uint8_t rec[sizeof(net_pub_t) - sizeof(uint64_t)];
    } in;
    memset(&in, 0, sizeof(in));
    in.pe = pe;
    memcpy(in.rec, (const char *)pub + sizeof(uint64_t), sizeof(in.rec));
    return dsm_net_siphash(job_secret, &in, sizeof(in));
}

/* The key PE pe asks for its region i (the segments, then NET_NSEG: the
 * heartbeat word of ofi_live.c): from the secret (64 bits, or the
 * provider's key size), 0 where the provider chooses keys itself. */
uint64_t dsm_ofi_msg_key(int from, int to)
{
    return dsm_net_msg_key(job_secret, from, to);
}

uint64_t dsm_ofi_mr_key(int pe, int i)
{
    if (dsm_ofi.info->domain_attr->mr_mode & FI_MR_PROV_KEY)
        return 0;
    return dsm_net_mr_key(job_secret, pe, i,
                          dsm_ofi.info->domain_attr->mr_key_size);
}

static dsm_status_t register_segments(net_pub_t *pub)
{
    for (int i = 0; i < NET_NSEG; i++) {
        const dsm_net_seg_t *s = &dsm_ofi_cfg.segs[i];
        if (!s->base || !s->map_size)
            continue;
        OFI_CHECK(fi_mr_reg(dsm_ofi.domain, s->base, s->map_size,
                            FI_REMOTE_READ | FI_REMOTE_WRITE, 0,
                            dsm_ofi_mr_key(dsm_ofi_cfg.me, i), 0, &dsm_ofi.mr[i],
                            NULL),
                  i == 0 ? "registering the symmetric heap"
                         : "registering the static data");
        if (dsm_ofi.info->domain_attr->mr_mode & FI_MR_ENDPOINT) {
            OFI_CHECK(fi_mr_bind(dsm_ofi.mr[i], &dsm_ofi.lanes[0].ep->fid, 0),
                      "binding a memory region");
            OFI_CHECK(fi_mr_enable(dsm_ofi.mr[i]), "enabling a memory region");
        }
        dsm_ofi.desc[i] = fi_mr_desc(dsm_ofi.mr[i]);
        pub->base[i] = (uint64_t)(uintptr_t)s->base;
        pub->key[i] = fi_mr_key(dsm_ofi.mr[i]);
        pub->len[i] = s->map_size;
    }
    return DSM_OK;
}

static dsm_status_t exchange(net_pub_t *pub)
{
    const dsm_net_exchange_t *b = &dsm_ofi_cfg.exchange;
    const int n = dsm_ofi_cfg.npes;
    size_t namelen = sizeof(pub->name);
    char *names;
    dsm_status_t st;

    OFI_CHECK(fi_getname(&dsm_ofi.lanes[0].ep->fid, pub->name, &namelen),
              "fi_getname");
    pub->namelen = (uint32_t)namelen;
    pub->node = dsm_ofi_cfg.node_id;
    if (gethostname(pub->host, sizeof(pub->host) - 1))
        snprintf(pub->host, sizeof(pub->host), "?");
    namelen = pub->namelen;
    if ((st = dsm_ofi_live_register(&pub->live_base, &pub->live_key,
                                    pub->live_name, &namelen)) != DSM_OK)
        return st;
    if (namelen != pub->namelen) {
        dsm_log_error("shmem_init: the heartbeat endpoint's name has %zu "
                      "bytes, lane 0's %u (libfabric provider %s)",
                      namelen, pub->namelen, dsm_ofi.prov);
        return DSM_ERR_UNSUPPORTED;
    }
    pub->tag = pub_tag(dsm_ofi_cfg.me, pub);
    if ((st = b->put("dsm_ofi.pub", pub, sizeof(*pub))) != DSM_OK ||
        (st = b->fence()) != DSM_OK)
        return st;
    names = calloc((size_t)n, NET_NAME_MAX);
    dsm_ofi.addr = calloc((size_t)n, sizeof(fi_addr_t));
    dsm_ofi.peer = calloc((size_t)n, sizeof(*dsm_ofi.peer));
    if (!names || !dsm_ofi.addr || !dsm_ofi.peer) {
        free(names);
        return DSM_ERR_NOMEM;
    }
    for (int pe = 0; pe < n; pe++) {
        net_pub_t theirs;
        size_t len = sizeof(theirs);
        if ((st = b->get(pe, "dsm_ofi.pub", &theirs, &len)) != DSM_OK) {
            free(names);
            return st;
        }
        /* Connection set-up: only a record signed with this job's secret
         * becomes an address, and (where we choose keys) its keys are the
         * ones the secret gives that PE. */
        int keys_ok = !dsm_ofi_mr_key(pe, NET_NSEG) ||
                      theirs.live_key == dsm_ofi_mr_key(pe, NET_NSEG);
        for (int i = 0; i < NET_NSEG; i++)
            if (theirs.len[i] && dsm_ofi_mr_key(pe, i) &&
                theirs.key[i] != dsm_ofi_mr_key(pe, i))
                keys_ok = 0;
        if (len != sizeof(theirs) || theirs.tag != pub_tag(pe, &theirs) ||
            !keys_ok) {
            dsm_log_error("shmem_init: PE %d's network address record does "
                          "not carry this job's secret: refused (a record "
                          "from another job or program in the bootstrap's "
                          "store?)", pe);
            free(names);
            return DSM_ERR_INVAL;
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
        memcpy(dsm_ofi.peer[pe].base, theirs.base, sizeof(theirs.base));
        memcpy(dsm_ofi.peer[pe].key, theirs.key, sizeof(theirs.key));
        theirs.host[sizeof(theirs.host) - 1] = '\0';
        dsm_ofi_live_peer(pe, theirs.live_base, theirs.live_key, theirs.node,
                          theirs.host, theirs.live_name);
    }
    /* The AV must take names packed back to back. */
    int got = fi_av_insert(dsm_ofi.av, names, (size_t)n, dsm_ofi.addr, 0, NULL);
    free(names);
    if (got != n) {
        dsm_log_error("shmem_init: fi_av_insert took %d of %d PE addresses "
                      "(libfabric provider %s)", got, n, dsm_ofi.prov);
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

    dsm_ofi_cfg = *cfg;
    for (int pe = 0; pe < n; pe++)
        remote += !cfg->mapped[pe];
    if (!remote)
        return DSM_OK;
    pthread_mutex_init(&dsm_ofi.cq_lock, NULL);
    pthread_mutex_init(&dsm_ofi.lane_lock, NULL);
    if (cfg->ctx_eps < 0 || cfg->ctx_eps > NET_LANES_MAX) {
        dsm_log_error("shmem_init: SHMEM_OFI_CTX_EPS=%ld: use 0 (every "
                      "context on the default context's endpoint) to %d",
                      cfg->ctx_eps, NET_LANES_MAX);
        return DSM_ERR_INVAL;
    }
    dsm_ofi.max_lanes = 1 + (int)cfg->ctx_eps;
    memset(&pub, 0, sizeof(pub));
    for (size_t i = 0; i < DSM_ARRAY_SIZE(kept_signals); i++)
        sigaction(kept_signals[i], NULL, &saved[i]);
    st = ofi_load();
    if (st == DSM_OK)
        st = dsm_ofi_pick_info();
    if (st == DSM_OK)
        st = dsm_ofi_pick_fence();
    if (st == DSM_OK)
        st = open_endpoint();
    for (size_t i = 0; i < DSM_ARRAY_SIZE(kept_signals); i++)
        sigaction(kept_signals[i], &saved[i], NULL);
    if (st != DSM_OK ||
        (st = dsm_ofi_check_atomics()) != DSM_OK ||
        (st = get_secret()) != DSM_OK ||
        (st = register_segments(&pub)) != DSM_OK ||
        (st = exchange(&pub)) != DSM_OK)
        return st;
    dsm_ofi.on = 1;
    snprintf(dsm_ofi.describe, sizeof(dsm_ofi.describe),
             "%s on %s (%s); quiet: %s; fence: %s; signal after data: %s; "
             "AMOs: %s; "
             "contexts: on %d endpoint(s) besides the default's "
             "(SHMEM_OFI_CTX_EPS), then shared; a peer on another node "
             "silent for %ld s is lost (SHMEM_PEER_TIMEOUT%s); memory keys: "
             "%s; address records signed with the job's secret (from %s); "
             "waiters sleep: %s",
             dsm_ofi.prov,
             dsm_ofi.info->domain_attr->name, dsm_ofi.dom_why,
             dsm_ofi.delivery ? "delivery-complete writes"
                              : "a read per PE written (read-after-write "
                                "order)",
             dsm_ofi_fence_text(),
             dsm_ofi.ordered ? "write order" : "completion wait (its PE)",
             dsm_ofi_agg_on() ? "on this PE's words by the CPU, non-fetching "
                                "ones to a peer in batches"
             : dsm_ofi.cpu_atomics ? "on this PE's words by the CPU"
                                   : "the provider's",
             dsm_ofi.max_lanes - 1, cfg->peer_timeout_s,
             cfg->peer_timeout_s ? "" : ": never",
             dsm_ofi.info->domain_attr->mr_mode & FI_MR_PROV_KEY
                 ? "the provider's"
                 : "from the job's secret",
             cfg->secret ? "the launcher" : "PE 0, through the bootstrap",
             !dsm_backoff_may_sleep ? "never (SHMEM_WAIT_MODE)"
             : dsm_ofi.wait_on && remote == n - 1
                 ? "on the completion queue's fd"
                 : "on their wake word");
    dsm_net_remote = calloc((size_t)n, 1);
    if (!dsm_net_remote)
        return DSM_ERR_NOMEM;
    for (int pe = 0; pe < n; pe++)
        dsm_net_remote[pe] = !cfg->mapped[pe];
    dsm_backoff_progress = dsm_net_progress;
    /* Every peer remote: what a waiter waits for comes over the network. */
    dsm_ofi_block_hook_set(remote == n - 1);
    dsm_ofi.prog_us = cfg->progress_us;
    if (dsm_ofi.prog_us < 0) {
        /* The thread costs where it has no core of its own (measured on 2
         * cores, 2 PEs: fcollect 1 MiB over sockets 0.64 ms without it,
         * 0.94 ms with a 1 ms interval, 1.2 ms with 100 us), but some
         * providers (sockets) send a posted operation only when progressed:
         * without any thread, a signal posted just before the PE leaves the
         * library waits for its next call (a 3-PE job hung in finalize).
         * So: 100 us with a core per thread, else a slow 1 ms. */
        long cores = dsm_ncores();
        dsm_ofi.prog_us = cores >= 2L * cfg->node_size ? 100 : 1000;
    }
    if (dsm_ofi.prog_us > 0) {
        if (pthread_create(&dsm_ofi.prog, NULL, dsm_ofi_prog_main, NULL)) {
            dsm_log_error("shmem_init: cannot start the network progress "
                          "thread: %s", strerror(errno));
            return DSM_ERR_NOMEM;
        }
        dsm_ofi.prog_on = 1;
    }
    if ((st = dsm_ofi_live_start()) != DSM_OK)
        return st;
    dsm_debug("network: %d of %d PEs through libfabric provider %s on %s "
              "(%s, delivery-complete %s, write order %s, inject %zu B, "
              "progress thread %ld us, CQ wait fd %s)",
              remote, n, dsm_ofi.prov, dsm_ofi.info->domain_attr->name,
              dsm_ofi.virt_addr ? "virtual addresses" : "offsets",
              dsm_ofi.delivery ? "yes" : "no (flush reads)",
              dsm_ofi.ordered ? "yes" : "no (quiet before signals)", dsm_ofi.inject,
              dsm_ofi.prog_us, dsm_ofi.wait_on ? "yes" : "no");
    return DSM_OK;
}

void dsm_net_quiesce(void)
{
    if (dsm_ofi.on)
        dsm_ofi_live_quiesce();
}

void dsm_net_fini(void)
{
    dsm_ofi_live_stop();
    dsm_backoff_progress = NULL;
    dsm_ofi_block_hook_set(0);
    if (dsm_ofi.prog_on) {
        __atomic_store_n(&dsm_ofi.prog_stop, 1, __ATOMIC_RELEASE);
        pthread_join(dsm_ofi.prog, NULL);
        dsm_ofi.prog_on = 0;
    }
    if (dsm_ofi.on)
        dsm_net_quiet(NULL);
    /* The heartbeat's endpoint, and the lanes of contexts the program did
     * not destroy, close too; no thread reads the CQ any more. */
    dsm_ofi_live_fini();
    dsm_ofi_ctx_fini(&dsm_ofi_dflt);
    for (int i = dsm_ofi.nlanes - 1; i >= 0; i--)
        dsm_ofi_lane_close(&dsm_ofi.lanes[i]);
    dsm_ofi_agg_fini();
    for (int i = 0; i < NET_NSEG; i++)
        if (dsm_ofi.mr[i])
            fi_close(&dsm_ofi.mr[i]->fid);
    if (dsm_ofi.av)
        fi_close(&dsm_ofi.av->fid);
    if (dsm_ofi.cq)
        fi_close(&dsm_ofi.cq->fid);
    if (dsm_ofi.domain)
        fi_close(&dsm_ofi.domain->fid);
    if (dsm_ofi.fabric)
        fi_close(&dsm_ofi.fabric->fid);
    if (dsm_ofi.info)
        dsm_ofi_lib.freeinfo(dsm_ofi.info);
    free(dsm_ofi.addr);
    free(dsm_ofi.peer);
    free(dsm_net_remote);
    dsm_net_remote = NULL;
    memset(&dsm_ofi, 0, sizeof(dsm_ofi));
}

#endif /* DSM_HAVE_OFI */
