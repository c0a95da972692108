/*
 * Liveness of the peers on other nodes (#32): a PE that stops answering
 * (its link down, its node or its process stopped, hung in the kernel)
 * would leave every PE that waits for it waiting for ever, since TCP
 * retransmits for a quarter of an hour before a provider reports anything.
 * So each PE keeps a heartbeat word, registered for remote reads, that a
 * thread of its own raises every period, and each PE is watched by one
 * peer on another node: its watcher reads the word every period and, when
 * the word has not moved for SHMEM_PEER_TIMEOUT seconds (a read that never
 * completes counts as not moving), prints one line naming the PE and its
 * node and ends the job. A link that comes back within the timeout costs
 * nothing: the reads complete late and the word has moved.
 *
 * Who watches whom: PE q is watched by the last PE before q in cyclic rank
 * order that is on another node (pred(q)); so every PE with a peer on
 * another node is watched by exactly one PE, and a PE watches at most as
 * many as its node has PEs. Cost: one 8-byte read per watched PE per
 * period (SHMEM_PEER_TIMEOUT / 8, between 100 ms and 1 s).
 *
 * The thread also reads the CQ each period: a heartbeat read's completion
 * is counted even while the PE computes with no progress thread
 * (SHMEM_OFI_PROGRESS_US=0), and a manual-progress provider answers the
 * reads of its own watcher. At finalize the reads stop before the
 * bootstrap's last barrier (dsm_net_quiesce), after which peers close
 * their endpoints; the word goes on moving until this PE's network closes,
 * because a peer may still be working and watching it.
 */
#include "common/common.h"

#ifdef DSM_HAVE_OFI /* the whole file: ofi.c refuses the network without */

#include "net/ofi_int.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct watched {
    int pe;
    net_op_t op;      /* the read in flight, done set by the CQ reader */
    int inflight;
    uint64_t val;     /* the read's landing place */
    uint64_t last;    /* the last value seen */
    uint64_t seen_ns; /* when it last moved */
    uint64_t sent_ns; /* when the read in flight was posted */
} watched_t;

static struct {
    volatile uint64_t *beat; /* this PE's word (a page of its own) */
    struct fid_mr *mr;
    net_lane_t lane;         /* the heartbeat's own endpoint */
    fi_addr_t *addr;         /* [npes]: each PE's heartbeat endpoint */
    char *names;             /* [npes * namelen] until they are in the AV */
    size_t namelen;
    dsm_net_ctx_t nc;        /* the heartbeat reads' accounts */
    uint64_t (*peer)[2];     /* [npes]: {address, key} of each PE's word */
    int *node;               /* [npes]: node id (for who watches whom) */
    char (*host)[DSM_NET_HOST_MAX]; /* [npes]: host names, for messages */
    watched_t *w;
    int nw;
    uint64_t timeout_ns, period_ns;
    pthread_mutex_t lock; /* the thread's watching; quiesce ends it */
    int noreads;          /* quiesced: the thread only beats */
    pthread_t thr;
    int thr_on, stop;
} live = {.lock = PTHREAD_MUTEX_INITIALIZER};

const char *dsm_ofi_host(int pe)
{
    if (!live.host || pe < 0 || pe >= dsm_ofi_cfg.npes || !live.host[pe][0])
        return "?";
    return live.host[pe];
}

dsm_status_t dsm_ofi_live_register(uint64_t *base, uint64_t *key, void *name,
                                   size_t *namelen)
{
    const int n = dsm_ofi_cfg.npes;
    long pg = sysconf(_SC_PAGESIZE);
    void *p = NULL;
    dsm_status_t st;
    int rc;

    live.peer = calloc((size_t)n, sizeof(*live.peer));
    live.node = calloc((size_t)n, sizeof(*live.node));
    live.host = calloc((size_t)n, sizeof(*live.host));
    live.addr = calloc((size_t)n, sizeof(*live.addr));
    live.names = calloc((size_t)n, *namelen);
    if (!live.peer || !live.node || !live.host || !live.addr || !live.names ||
        posix_memalign(&p, pg > 0 ? (size_t)pg : 4096, 4096))
        return DSM_ERR_NOMEM;
    memset(p, 0, 4096);
    live.beat = p;
    /* An endpoint of its own: a heartbeat read waits behind no data on
     * its connection (on tcp;ofi_rxm one per endpoint and peer; measured:
     * on lane 0, behind an alltoall's blocks on a loaded machine, a read
     * took over 8 s). */
    if ((st = dsm_ofi_lane_open(&live.lane, 0, "shmem_init")) != DSM_OK)
        return st;
    rc = fi_mr_reg(dsm_ofi.domain, p, sizeof(uint64_t), FI_REMOTE_READ, 0,
                   dsm_ofi_mr_key(dsm_ofi_cfg.me, NET_NSEG), 0, &live.mr,
                   NULL);
    if (!rc && (dsm_ofi.info->domain_attr->mr_mode & FI_MR_ENDPOINT)) {
        rc = fi_mr_bind(live.mr, &live.lane.ep->fid, 0);
        if (!rc)
            rc = fi_mr_enable(live.mr);
    }
    if (!rc)
        rc = fi_getname(&live.lane.ep->fid, name, namelen);
    if (rc) {
        dsm_log_error("shmem_init: setting up the heartbeat failed "
                      "(libfabric provider %s): %s",
                      dsm_ofi.prov, dsm_ofi_lib.strerror(-rc));
        return DSM_ERR_UNSUPPORTED;
    }
    live.namelen = *namelen;
    *base = (uint64_t)(uintptr_t)p;
    *key = fi_mr_key(live.mr);
    return DSM_OK;
}

void dsm_ofi_live_peer(int pe, uint64_t base, uint64_t key, int node,
                       const char *host, const void *name)
{
    live.peer[pe][0] = dsm_ofi.virt_addr ? base : 0;
    live.peer[pe][1] = key;
    live.node[pe] = node;
    snprintf(live.host[pe], sizeof(live.host[pe]), "%s", host);
    memcpy(live.names + (size_t)pe * live.namelen, name, live.namelen);
}

/* The last PE before q (cyclic) on another node than q's, or -1. */
static int watcher_of(int q)
{
    const int n = dsm_ofi_cfg.npes;
    for (int k = 1; k < n; k++) {
        int p = (q - k + n) % n;
        if (live.node[p] != live.node[q])
            return p;
    }
    return -1;
}

static void post_read(watched_t *w, uint64_t now)
{
    struct iovec iov = {.iov_base = &w->val, .iov_len = sizeof(w->val)};
    struct fi_rma_iov rma = {.addr = live.peer[w->pe][0],
                             .len = sizeof(w->val),
                             .key = live.peer[w->pe][1]};
    struct fi_msg_rma msg = {
        .msg_iov = &iov,
        .iov_count = 1,
        .addr = live.addr[w->pe],
        .rma_iov = &rma,
        .rma_iov_count = 1,
        .context = &w->op,
    };
    ssize_t rc;
    w->op.done = 0;
    w->op.pe = &live.nc.pe[w->pe];
    rc = fi_readmsg(live.nc.ep, &msg, FI_COMPLETION);
    if (rc == -FI_EAGAIN)
        return; /* a full queue: the next period tries again */
    if (rc)
        dsm_ofi_fail("network", "a heartbeat read", w->pe, rc);
    __atomic_fetch_add(&live.nc.posted, 1, __ATOMIC_ACQ_REL);
    __atomic_fetch_add(&live.nc.pe[w->pe].posted, 1, __ATOMIC_ACQ_REL);
    w->inflight = 1;
    w->sent_ns = now;
}

static void lost(const watched_t *w, uint64_t now)
{
    const long t = (long)(dsm_ofi_cfg.peer_timeout_s);
    dsm_ofi_failing();
    (void)now;
    if (w->inflight)
        dsm_ofi_cfg.fatal(
            "network",
            "lost PE %d on node %s: no answer over the network for %ld s "
            "(link down, node or process stopped?); ending the job "
            "(SHMEM_PEER_TIMEOUT=%ld)",
            w->pe, dsm_ofi_host(w->pe), t, t);
    dsm_ofi_cfg.fatal("network",
                      "lost PE %d on node %s: its heartbeat has not moved "
                      "for %ld s (process stopped or hung?); ending the job "
                      "(SHMEM_PEER_TIMEOUT=%ld)",
                      w->pe, dsm_ofi_host(w->pe), t, t);
}

static void *live_main(void *arg)
{
    struct timespec slice = {0, 0};
    (void)arg;
    slice.tv_nsec = (long)DSM_MIN(live.period_ns, 100000000ull);
    uint64_t next = dsm_now_ns();
    while (!__atomic_load_n(&live.stop, __ATOMIC_ACQUIRE)) {
        uint64_t now = dsm_now_ns();
        if (now < next) {
            nanosleep(&slice, NULL);
            continue;
        }
        /* This thread was not run for a while (the PE stopped and
         * continued, or starved of CPU): the silence it measured is its
         * own, not its peers'. They get a full timeout again. */
        int stalled = now - next > 2 * live.period_ns;
        next = now + live.period_ns;
        __atomic_store_n(live.beat, *live.beat + 1, __ATOMIC_RELEASE);
        dsm_ofi_cq_poll();
        now = dsm_now_ns();
        pthread_mutex_lock(&live.lock);
        for (int i = 0; !live.noreads && i < live.nw; i++) {
            watched_t *w = &live.w[i];
            if (stalled)
                w->seen_ns = now;
            if (w->inflight &&
                __atomic_load_n(&w->op.done, __ATOMIC_ACQUIRE)) {
                w->inflight = 0;
                if (w->val != w->last) {
                    w->last = w->val;
                    w->seen_ns = now;
                }
            }
            if (now - w->seen_ns >= live.timeout_ns)
                lost(w, now);
            if (!w->inflight)
                post_read(w, now);
        }
        pthread_mutex_unlock(&live.lock);
    }
    return NULL;
}

dsm_status_t dsm_ofi_live_start(void)
{
    const int n = dsm_ofi_cfg.npes, me = dsm_ofi_cfg.me;
    uint64_t now = dsm_now_ns();
    dsm_status_t st;

    if (dsm_ofi_cfg.peer_timeout_s < 0 ||
        dsm_ofi_cfg.peer_timeout_s > 86400) {
        dsm_log_error("shmem_init: SHMEM_PEER_TIMEOUT=%ld: use 0 (no "
                      "watching) or 1..86400 seconds",
                      dsm_ofi_cfg.peer_timeout_s);
        return DSM_ERR_INVAL;
    }
    if (dsm_ofi_cfg.peer_timeout_s == 0)
        return DSM_OK;
    live.timeout_ns = (uint64_t)dsm_ofi_cfg.peer_timeout_s * 1000000000ull;
    live.period_ns = DSM_MAX(DSM_MIN(live.timeout_ns / 8, 1000000000ull),
                             100000000ull);
    /* The AV takes the heartbeat endpoints after the PEs' own. */
    int got = fi_av_insert(dsm_ofi.av, live.names, (size_t)n, live.addr, 0,
                           NULL);
    free(live.names);
    live.names = NULL;
    if (got != n) {
        dsm_log_error("shmem_init: fi_av_insert took %d of %d heartbeat "
                      "addresses (libfabric provider %s)",
                      got, n, dsm_ofi.prov);
        return DSM_ERR_UNSUPPORTED;
    }
    if ((st = dsm_ofi_ctx_init(&live.nc, 0)) != DSM_OK)
        return st;
    live.nc.ep = live.lane.ep;
    live.w = calloc((size_t)n, sizeof(*live.w));
    if (!live.w)
        return DSM_ERR_NOMEM;
    for (int q = 0; q < n; q++)
        if (q != me && watcher_of(q) == me) {
            watched_t *w = &live.w[live.nw++];
            w->pe = q;
            w->seen_ns = now;
        }
    if (pthread_create(&live.thr, NULL, live_main, NULL)) {
        dsm_log_error("shmem_init: cannot start the heartbeat thread: %s",
                      strerror(errno));
        return DSM_ERR_NOMEM;
    }
    live.thr_on = 1;
    if (live.nw)
        dsm_debug("network: watching %d PE(s) on other nodes, first PE %d "
                  "on %s (heartbeat every %llu ms, lost after %ld s)",
                  live.nw, live.w[0].pe, dsm_ofi_host(live.w[0].pe),
                  (unsigned long long)(live.period_ns / 1000000),
                  dsm_ofi_cfg.peer_timeout_s);
    return DSM_OK;
}

/* 1 once no heartbeat read is in flight. */
static int reads_done(void *arg)
{
    (void)arg;
    dsm_ofi_cq_poll();
    return __atomic_load_n(&live.nc.done, __ATOMIC_ACQUIRE) ==
           __atomic_load_n(&live.nc.posted, __ATOMIC_ACQUIRE);
}

void dsm_ofi_live_quiesce(void)
{
    if (!live.thr_on || live.noreads)
        return;
    /* No more reads; those in flight complete (a peer alive enough to
     * reach finalize answers them; a lost one is what the timeout is
     * for). The word goes on moving: a peer may still be on its way to
     * finalize, watching this PE. */
    pthread_mutex_lock(&live.lock);
    live.noreads = 1;
    pthread_mutex_unlock(&live.lock);
    uint64_t t0 = dsm_now_ns();
    while (!reads_done(NULL)) {
        if (dsm_now_ns() - t0 >= live.timeout_ns)
            for (int i = 0; i < live.nw; i++)
                if (live.w[i].inflight &&
                    !__atomic_load_n(&live.w[i].op.done, __ATOMIC_ACQUIRE))
                    lost(&live.w[i], dsm_now_ns());
        sched_yield();
    }
}

void dsm_ofi_live_stop(void)
{
    dsm_ofi_live_quiesce();
    if (live.thr_on) {
        __atomic_store_n(&live.stop, 1, __ATOMIC_RELEASE);
        pthread_join(live.thr, NULL);
        live.thr_on = 0;
    }
}

void dsm_ofi_live_fini(void)
{
    dsm_ofi_live_stop();
    if (live.mr)
        fi_close(&live.mr->fid);
    dsm_ofi_lane_close(&live.lane);
    free((void *)live.beat);
    if (live.nc.pe)
        dsm_ofi_ctx_fini(&live.nc);
    free(live.w);
    free(live.peer);
    free(live.node);
    free(live.host);
    free(live.addr);
    free(live.names);
    live.addr = NULL;
    live.names = NULL;
    live.beat = NULL;
    live.mr = NULL;
    live.w = NULL;
    live.peer = NULL;
    live.node = NULL;
    live.host = NULL;
    live.nw = 0;
    live.noreads = live.stop = 0;
}

#endif /* DSM_HAVE_OFI */
