/*
 * Contexts of the libfabric path (ofi_int.h): their accounts, the
 * endpoints they post on (lanes), the CQ, and completion (quiet, flush,
 * fence).
 *
 * A context (dsm_net_ctx_t) is accounts, not an endpoint: every operation
 * is posted with FI_COMPLETION and counted in its context's `posted` and
 * in the account of its target PE (net_pe_t: posted by the poster, done
 * by the CQ reader, which also raises the context's `done`). Quiet waits
 * for the context's total, shmem_pe_quiet and the fence for one PE's
 * account. A small write (up to the provider's inject size) is copied
 * into a bounce buffer of its context instead of being injected (ofi_int.h:
 * an injected write reports no completion on tcp;ofi_rxm).
 *
 * So contexts may share endpoints. Lane 0 is the default context's
 * endpoint, the one whose name the PEs exchange (every peer targets it);
 * contexts created later open lanes of their own, which only initiate,
 * until SHMEM_OFI_CTX_EPS are open, and then share the least used lane.
 * Lanes stay open until finalize, so a later context finds its lane
 * enabled and connected. Why: enabling an endpoint costs 50-85 ms on
 * tcp;ofi_rxm (fi_enable clears its receive buffers) and its first
 * operation to each PE ~100 ms more (a TCP connection per endpoint and
 * peer), so a program that created 64 contexts on 4 PEs spent ~0.75 s per
 * context (issue #14); sharing costs nothing in completion (the accounts
 * are per context) or in ordering (a lane orders more, never less). What
 * a lane of its own buys is a provider queue that other threads' contexts
 * do not lock (tcp;ofi_rxm has one transmit context per endpoint, so no
 * scalable endpoint). All lanes share one CQ in selective-completion mode.
 *
 * A context that several threads may use at once (the default context
 * under SHMEM_THREAD_MULTIPLE, a context created without
 * SHMEM_CTX_PRIVATE/SERIALIZED) has a lock: posting holds it shared,
 * quiet and flush hold it exclusive, so that a quiet's count covers
 * exactly the operations posted before it and its reset of the marks
 * cannot drop a mark another thread set for an operation still in flight.
 *
 * Fence, where the provider does not place writes in order (tcp;ofi_rxm):
 * a fence only turns each PE written since the previous fence into a
 * `fenced` PE; the next write to such a PE first waits for that PE's
 * operations. A fence costs nothing itself, PEs not written again
 * are never waited for, and a PE written again pays the wait once. On a
 * shared context the marks would mix threads' epochs: its fence stays a
 * quiet.
 */
#include "common/common.h"

#ifdef DSM_HAVE_OFI /* the whole file: ofi.c refuses the network without */

#include "net/ofi_int.h"

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

dsm_net_ctx_t dsm_ofi_dflt;

/* ------------------------------------------------------------ progress */

/* fi_cq_read(cq) returned n < 0, not -FI_EAGAIN, to a reader holding
 * held: ends the job with one line (for an error entry, which the reader
 * must take: the PE its operation targeted, the provider's words),
 * releasing held first. */
static DSM_NORETURN void cq_failed(struct fid_cq *cq, ssize_t n,
                                   pthread_mutex_t *held)
{
    struct fi_cq_err_entry err = {0};
    char buf[256] = "";
    if (n != -FI_EAVAIL) {
        pthread_mutex_unlock(held);
        dsm_ofi_cfg.fatal("network", "fi_cq_read failed (provider %s): %s",
                          dsm_ofi.prov, dsm_ofi_lib.strerror((int)-n));
    }
    fi_cq_readerr(cq, &err, 0);
    pthread_mutex_unlock(held);
    dsm_ofi_peer_failure_grace();
    if (err.prov_errno)
        fi_cq_strerror(cq, err.prov_errno, err.err_data, buf, sizeof(buf));
    /* The operation's account names its target PE. */
    const net_op_t *op = err.op_context;
    if (op && op->pe && op->pe->nc)
        dsm_ofi_cfg.fatal("network",
                          "lost PE %d on node %s: an operation to it "
                          "failed (provider %s): %s%s%s",
                          (int)(op->pe - op->pe->nc->pe),
                          dsm_ofi_host((int)(op->pe - op->pe->nc->pe)),
                          dsm_ofi.prov, dsm_ofi_lib.strerror(err.err),
                          buf[0] ? ": " : "", buf);
    dsm_ofi_cfg.fatal("network",
                      "a libfabric operation failed (provider %s): %s%s%s",
                      dsm_ofi.prov, dsm_ofi_lib.strerror(err.err),
                      buf[0] ? ": " : "", buf);
}

/* The entries of one lane's CQ; the caller holds cq_lock. */
static int lane_cq_read(struct fid_cq *cq)
{
    struct fi_cq_entry e[16];
    ssize_t n = fi_cq_read(cq, e, DSM_ARRAY_SIZE(e));
    if (n > 0) {
        for (ssize_t i = 0; i < n; i++) {
            net_op_t *op = e[i].op_context;
            net_pe_t *ps = op->pe;
            if (op->kind == NET_OP_AGG_RECV) {
                dsm_ofi_agg_recv(op); /* not an operation of ours */
                continue;
            }
            if (op->kind == NET_OP_AGG_SEND) {
                dsm_ofi_agg_sent(op); /* the buffer is reused: no flag */
                __atomic_fetch_add(&ps->nc->done, 1, __ATOMIC_RELEASE);
                __atomic_fetch_add(&ps->done, 1, __ATOMIC_RELEASE);
                continue;
            }
            if (op->bounce) {
                net_bounce_t *b = (net_bounce_t *)(void *)op;
                pthread_mutex_lock(&b->nc->block);
                b->next = b->nc->bfree;
                b->nc->bfree = b;
                pthread_mutex_unlock(&b->nc->block);
            }
            /* Count last: a waiter that sees its flag returns, and its op
             * (on its stack) is gone; a context is closed only once its
             * accounts caught up. */
            if (op != &ps->op && !op->bounce)
                __atomic_store_n(&op->done, 1, __ATOMIC_RELEASE);
            __atomic_fetch_add(&ps->nc->done, 1, __ATOMIC_RELEASE);
            __atomic_fetch_add(&ps->done, 1, __ATOMIC_RELEASE);
        }
        return (int)n;
    }
    if (n != -FI_EAGAIN)
        cq_failed(cq, n, &dsm_ofi.cq_lock);
    return 0;
}

/* Every open lane's CQ: the shared one (lane 0: the default context's
 * operations and what peers do to this PE's memory) and each context
 * lane's own (lane_open_unlocked says why they have their own). */
int dsm_ofi_cq_poll(void)
{
    int got = 0;

    /* One reader at a time: an error entry must be read by the thread
     * that saw -FI_EAVAIL. */
    if (pthread_mutex_trylock(&dsm_ofi.cq_lock))
        return 0;
    const int nl = __atomic_load_n(&dsm_ofi.nlanes, __ATOMIC_ACQUIRE);
    got = lane_cq_read(dsm_ofi.cq);
    for (int i = 1; i < nl; i++)
        got += lane_cq_read(dsm_ofi.lanes[i].cq);
    pthread_mutex_unlock(&dsm_ofi.cq_lock);
    /* For the batches just applied, and the acknowledgements the provider
     * refused earlier (-FI_EAGAIN): a waiter that wakes with nothing new
     * must still send those, or the peer waits for them for ever. */
    dsm_ofi_agg_ack_drain();
    return got;
}

void dsm_net_progress(void)
{
    if (dsm_ofi.cq) {
        __atomic_fetch_add(&dsm_ofi.app_polls, 1, __ATOMIC_RELAXED);
        dsm_ofi_agg_progress();
        dsm_ofi_cq_poll();
    }
}

/* Block until network activity (a peer's operation on this PE's memory, a
 * completion) or ns nanoseconds, then read the CQ. With the CQ's wait fd
 * (dsm_ofi.wait_on): fi_trywait says whether blocking is safe (nothing
 * left for progress to do), then poll() on the fd. Without it: a sleep. */
void dsm_ofi_block(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000ull),
                          (long)(ns % 1000000000ull)};
    /* Acknowledgements still owed (the provider said -FI_EAGAIN): no
     * arrival may come to wake this thread until they go, so it does not
     * block on the fd, it naps and sends them again. */
    dsm_ofi_agg_ack_drain();
    if (dsm_ofi_agg_acks_owed()) {
        struct timespec nap = {0, ns < 50000 ? (long)ns : 50000L};
        nanosleep(&nap, NULL);
    } else if (dsm_ofi.wait_on) {
        /* fi_trywait under the CQs' reader lock, as every CQ read (it
         * progresses their endpoints). The lock taken: some thread is
         * reading the CQs right now, which is the progress we would block
         * for. Every open lane's CQ: a context's completion comes on its
         * lane's. */
        struct fid *f[1 + NET_LANES_MAX];
        struct pollfd pfd[1 + NET_LANES_MAX];
        const int nl = __atomic_load_n(&dsm_ofi.nlanes, __ATOMIC_ACQUIRE);
        int rc = -FI_EAGAIN;
        for (int i = 0; i < nl; i++) {
            f[i] = &dsm_ofi.lanes[i].cq->fid;
            pfd[i] = (struct pollfd){.fd = dsm_ofi.lanes[i].wait_fd,
                                     .events = POLLIN};
        }
        if (pthread_mutex_trylock(&dsm_ofi.cq_lock) == 0) {
            rc = fi_trywait(dsm_ofi.fabric, f, nl);
            pthread_mutex_unlock(&dsm_ofi.cq_lock);
        }
        if (rc == FI_SUCCESS) {
            ppoll(pfd, (nfds_t)nl, &ts, NULL);
        } else {
            sched_yield();
        }
    } else {
        nanosleep(&ts, NULL);
    }
    dsm_ofi_cq_poll();
}

/* The backoff's sleep (common/backoff.h) on a PE whose every peer is
 * reached through the network: what a waiter waits for comes in over the
 * fd, so it sleeps there and wakes when it does. */
static int block_hook(uint64_t ns)
{
    __atomic_fetch_add(&dsm_ofi.app_blocked, 1, __ATOMIC_RELAXED);
    dsm_ofi_block(ns);
    __atomic_fetch_sub(&dsm_ofi.app_blocked, 1, __ATOMIC_RELAXED);
    return 1;
}

void dsm_ofi_block_hook_set(int on)
{
    dsm_backoff_block = on && dsm_ofi.wait_on ? block_hook : NULL;
}

/* The progress thread stands in only for a PE whose threads are not in the
 * library: while one polls (on every check of a wait) the thread keeps off
 * the provider's lock and the cores (measured on 2 cores: it made fcollect
 * 1 MiB over sockets 1.2 ms instead of 0.65), and while they post (their
 * next quiet or wait reads the completions), sleeping prog_us at a time.
 * Once they do neither (the application computes) it blocks on the CQ's
 * wait fd, so that a peer's get or atomic on this PE's memory is answered
 * when it arrives, not at the next interval. While an application thread
 * blocks there itself (a sleeping waiter), that one answers: two threads
 * woken by each arrival cost an oversubscribed node a context switch. */
void *dsm_ofi_prog_main(void *arg)
{
    struct timespec ts = {dsm_ofi.prog_us / 1000000L,
                          (dsm_ofi.prog_us % 1000000L) * 1000L};
    uint64_t seen = 0;
    (void)arg;
    while (!__atomic_load_n(&dsm_ofi.prog_stop, __ATOMIC_ACQUIRE)) {
        uint64_t polls = __atomic_load_n(&dsm_ofi.app_polls, __ATOMIC_RELAXED);
        /* Batches of AMOs the application left collected go out. */
        dsm_ofi_agg_progress();
        if (polls != seen ||
            __atomic_load_n(&dsm_ofi.app_blocked, __ATOMIC_RELAXED))
            nanosleep(&ts, NULL);
        else if (!dsm_ofi_cq_poll())
            dsm_ofi_block((uint64_t)dsm_ofi.prog_us * 1000ull);
        seen = polls;
    }
    return NULL;
}

/* ------------------------------------------------------------ stalls */

/* A wait for completions from the network, bounded: the heartbeat
 * (ofi_live.c) ends the job when a peer goes silent, but a peer that
 * answers its heartbeat may still have lost operations (seen on
 * tcp;ofi_rxm when a link came back after its TCP connection gave up:
 * a quiet waited for ever). So a wait that sees no completion of what it
 * waits for during SHMEM_PEER_TIMEOUT ends the job, naming the PE. */
/* First PE of nc with operations outstanding, or -1. */
static int pending_pe(const dsm_net_ctx_t *nc)
{
    for (int pe = 0; pe < dsm_ofi_cfg.npes; pe++)
        if (__atomic_load_n(&nc->pe[pe].done, __ATOMIC_ACQUIRE) !=
            __atomic_load_n(&nc->pe[pe].posted, __ATOMIC_ACQUIRE))
            return pe;
    return -1;
}

void dsm_ofi_stall_check(net_stall_t *s, uint64_t done, const net_pe_t *ps,
                         const dsm_net_ctx_t *nc)
{
    const long t = dsm_ofi_cfg.peer_timeout_s;
    uint64_t now;
    if (t <= 0 || (s->since && done == s->seen && (++s->tick & 63)))
        return;
    now = dsm_now_ns();
    if (!s->since || done != s->seen) {
        s->seen = done;
        s->since = now;
        return;
    }
    if (now - s->since < (uint64_t)t * 1000000000ull)
        return;
    int pe = ps ? (int)(ps - ps->nc->pe) : pending_pe(nc);
    dsm_ofi_failing();
    dsm_ofi_cfg.fatal("network",
                      "lost PE %d on node %s: a network operation to it has "
                      "not completed for %ld s; ending the job "
                      "(SHMEM_PEER_TIMEOUT=%ld)",
                      pe, dsm_ofi_host(pe), t, t);
}

/* What a wait for the network is for, for the line of a PE ended
 * meanwhile (net.h, wait): "2 network operations to PE 1 on node n1 not
 * complete"; `more`: counted over the context, pe one of their PEs. */
static void describe_ops(char *buf, size_t len, uint64_t n, const char *what,
                         int pe, int more)
{
    if (pe < 0) {
        snprintf(buf, len, "%llu network %s%s not complete",
                 (unsigned long long)n, what, n == 1 ? "" : "s");
        return;
    }
    snprintf(buf, len,
             more && n > 1
                 ? "%llu network %s%s not complete (PE %d on node %s among "
                   "their targets)"
                 : "%llu network %s%s to PE %d on node %s not complete",
             (unsigned long long)n, what, n == 1 ? "" : "s", pe,
             dsm_ofi_host(pe));
}

struct op_arg {
    net_op_t *op;
    net_stall_t stall;
};

static int op_done(void *p)
{
    struct op_arg *a = p;
    dsm_ofi_cq_poll();
    if (__atomic_load_n(&a->op->done, __ATOMIC_ACQUIRE))
        return 1;
    dsm_ofi_stall_check(&a->stall, 0, a->op->pe, NULL);
    return 0;
}

static void op_describe(const void *p, char *buf, size_t len)
{
    const struct op_arg *a = p;
    const net_pe_t *ps = a->op->pe;
    describe_ops(buf, len, 1, "operation", ps ? (int)(ps - ps->nc->pe) : -1,
                 0);
}

void dsm_ofi_op_wait(net_op_t *op, const char *routine)
{
    struct op_arg a = {.op = op};
    if (!op_done(&a))
        dsm_ofi_cfg.wait(routine, op_describe, &a, op_done, &a);
}

/* ------------------------------------------------------------ completion */

struct count_arg {
    dsm_net_ctx_t *nc;
    uint64_t target;
    net_stall_t stall;
};

/* 1 once nc's total shows target completions (the CQ reader raises it;
 * reading the CQ drives every lane and fails the job on an operation that
 * completed in error). */
static int counted(void *p)
{
    struct count_arg *a = p;
    if (__atomic_load_n(&a->nc->done, __ATOMIC_ACQUIRE) >= a->target)
        return 1;
    dsm_ofi_cq_poll();
    uint64_t done = __atomic_load_n(&a->nc->done, __ATOMIC_ACQUIRE);
    if (done >= a->target)
        return 1;
    dsm_ofi_stall_check(&a->stall, done, NULL, a->nc);
    return 0;
}

static void counted_describe(const void *p, char *buf, size_t len)
{
    const struct count_arg *a = p;
    uint64_t done = __atomic_load_n(&a->nc->done, __ATOMIC_ACQUIRE);
    describe_ops(buf, len, a->target > done ? a->target - done : 0,
                 "operation", pending_pe(a->nc), 1);
}

/* Every operation posted on nc so far is complete (exact while the caller
 * keeps other threads from posting on nc: nc_excl_begin). */
static void nc_complete(dsm_net_ctx_t *nc)
{
    struct count_arg a = {nc, __atomic_load_n(&nc->posted, __ATOMIC_ACQUIRE),
                          {0}};
    if (!counted(&a))
        dsm_ofi_cfg.wait(NULL, counted_describe, &a, counted, &a);
}

struct pe_arg {
    net_pe_t *ps;
    uint64_t target;
    net_stall_t stall;
};

/* 1 once the PE's account shows target completions (the CQ reader raises
 * it; reading the CQ here also drives the provider). */
static int pe_counted(void *p)
{
    struct pe_arg *a = p;
    if (__atomic_load_n(&a->ps->done, __ATOMIC_ACQUIRE) >= a->target)
        return 1;
    dsm_ofi_cq_poll();
    uint64_t done = __atomic_load_n(&a->ps->done, __ATOMIC_ACQUIRE);
    if (done >= a->target)
        return 1;
    dsm_ofi_stall_check(&a->stall, done, a->ps, NULL);
    return 0;
}

static void pe_counted_describe(const void *p, char *buf, size_t len)
{
    const struct pe_arg *a = p;
    uint64_t done = __atomic_load_n(&a->ps->done, __ATOMIC_ACQUIRE);
    describe_ops(buf, len, a->target > done ? a->target - done : 0,
                 "operation", (int)(a->ps - a->ps->nc->pe), 0);
}

/* A read of 8 bytes from the start of pe's internal area (its control
 * page): with reads ordered after writes (FI_ORDER_RAW, checked at
 * startup), it completes only after nc's earlier writes to pe were placed.
 * Counted in pe's account. */
static void post_flush_read(dsm_net_ctx_t *nc, int pe, uint64_t *scratch)
{
    uint64_t raddr, key;
    const dsm_net_seg_t *heap = &dsm_ofi_cfg.segs[0];
    dsm_ofi_remote_of("shmem_quiet", heap->base + heap->size,
                      sizeof(*scratch), pe, 1, &raddr, &key);
    dsm_ofi_post_read(nc, "shmem_quiet", scratch, sizeof(*scratch), raddr,
                      key, pe, NULL);
}

/* Every operation of nc to pe posted so far is complete and its writes
 * placed. Exact while no other thread posts to pe on nc (the caller's
 * exclusive lock, or a context of one thread): completions of one PE's
 * operations may arrive in any order, so the count is only a proof when
 * nothing was posted after the snapshot. */
static void pe_complete(dsm_net_ctx_t *nc, int pe)
{
    net_pe_t *ps = &nc->pe[pe];
    uint64_t scratch;
    dsm_ofi_agg_send(nc, pe);
    if (!dsm_ofi.delivery && ps->written)
        post_flush_read(nc, pe, &scratch);
    struct pe_arg a = {ps, __atomic_load_n(&ps->posted, __ATOMIC_ACQUIRE),
                       {0}};
    if (!pe_counted(&a))
        dsm_ofi_cfg.wait(NULL, pe_counted_describe, &a, pe_counted, &a);
    ps->written = 0;
    ps->fenced = 0;
    ps->epoch = 0; /* may stay listed: the fence skips it */
}

void dsm_net_quiet(dsm_net_ctx_t *nc)
{
    if (!dsm_ofi.on)
        return;
    nc = nc_of(nc);
    nc_excl_begin(nc);
    dsm_ofi_agg_send_all(nc);
    nc_complete(nc);
    if (!dsm_ofi.delivery) {
        uint64_t scratch;
        int any = 0;
        for (int pe = 0; pe < dsm_ofi_cfg.npes; pe++)
            if (nc->pe[pe].written) {
                post_flush_read(nc, pe, &scratch);
                any = 1;
            }
        if (any)
            nc_complete(nc);
    }
    /* Every write of nc was placed; none posted meanwhile. */
    for (int pe = 0; pe < dsm_ofi_cfg.npes; pe++) {
        net_pe_t *ps = &nc->pe[pe];
        ps->written = ps->fenced = ps->epoch = ps->listed = 0;
    }
    nc->nepoch = 0;
    nc_excl_end(nc);
}

void dsm_net_flush(dsm_net_ctx_t *nc, int pe)
{
    if (!dsm_ofi.on)
        return;
    nc = nc_of(nc);
    nc_excl_begin(nc);
    /* Only pe's operations: the others' stay in flight. */
    pe_complete(nc, pe);
    nc_excl_end(nc);
}

void dsm_net_fence(dsm_net_ctx_t *nc)
{
    if (!dsm_ofi.on || dsm_ofi.fence == NET_FENCE_FREE)
        return;
    nc = nc_of(nc);
    if (dsm_ofi.fence == NET_FENCE_QUIET || nc->shared) {
        dsm_net_quiet(nc);
        return;
    }
    /* Collected AMOs belong to the epoch before the fence. */
    dsm_ofi_agg_send_all(nc);
    for (int i = 0; i < nc->nepoch; i++) {
        net_pe_t *ps = &nc->pe[nc->epoch_pes[i]];
        ps->listed = 0;
        if (ps->epoch) {
            ps->epoch = 0;
            ps->fenced = 1;
        }
    }
    nc->nepoch = 0;
}

void dsm_ofi_fence_gate_slow(dsm_net_ctx_t *nc, int pe)
{
    pe_complete(nc, pe);
}

/* ------------------------------------------------------------ contexts */

net_bounce_t *dsm_ofi_bounce_get(dsm_net_ctx_t *nc)
{
    pthread_mutex_lock(&nc->block);
    net_bounce_t *b = nc->bfree;
    if (b)
        nc->bfree = b->next;
    pthread_mutex_unlock(&nc->block);
    if (b)
        return b;
    /* As many as writes in flight: the provider's queue bounds them. */
    b = calloc(1, sizeof(*b) + DSM_MAX(dsm_ofi.inject, sizeof(uint64_t)));
    if (!b)
        dsm_ofi_cfg.fatal("network", "out of memory for a small write's "
                          "buffer");
    b->op.bounce = 1;
    b->nc = nc;
    pthread_mutex_lock(&nc->block);
    b->all_next = nc->ball;
    nc->ball = b;
    pthread_mutex_unlock(&nc->block);
    return b;
}

/* A context's lane has a CQ of its own, which no thread reads until the
 * lane is open (nlanes counts it), so opening it needs no lock of the
 * CQ readers'. On the shared CQ it did: an endpoint bound to a CQ that
 * another thread reads (which progresses every endpoint bound to it)
 * crashed tcp;ofi_rxm (libfabric 1.17) until the enable was done, so the
 * open held the readers' lock, and fi_enable takes ~0.2 s there (four
 * 17 MB buffer pools touched) and seconds on a loaded node: no operation
 * of the PE's, nor a peer's on its memory, progressed meanwhile, and a
 * peer waiting for one ended the job ("a network operation to it has not
 * completed", 4 PEs on 2 cores, SHMEM_PEER_TIMEOUT=2). */
static dsm_status_t lane_open_unlocked(net_lane_t *lane)
{
    return dsm_ofi_lane_open(lane, 1, "shmem_ctx_create");
}

/* The lane for a new context: a new endpoint while fewer than max_lanes
 * are open, else the one fewest contexts use (the first of equals, so the
 * default context's before the others). */
static net_lane_t *lane_take(void)
{
    net_lane_t *best = NULL;
    pthread_mutex_lock(&dsm_ofi.lane_lock);
    for (int i = 0; i < dsm_ofi.nlanes; i++)
        if (!best || dsm_ofi.lanes[i].refs < best->refs)
            best = &dsm_ofi.lanes[i];
    if (best->refs > 0 && dsm_ofi.nlanes < dsm_ofi.max_lanes) {
        net_lane_t *l = &dsm_ofi.lanes[dsm_ofi.nlanes];
        /* Opened under the lane lock: two contexts created at once do not
         * both open one past the cap. */
        if (lane_open_unlocked(l) == DSM_OK) {
            __atomic_store_n(&dsm_ofi.nlanes, dsm_ofi.nlanes + 1,
                             __ATOMIC_RELEASE);
            best = l;
        } else {
            best = NULL; /* the error line said why */
        }
    }
    if (best)
        best->refs++;
    pthread_mutex_unlock(&dsm_ofi.lane_lock);
    return best;
}

static void lane_put(net_lane_t *lane)
{
    pthread_mutex_lock(&dsm_ofi.lane_lock);
    lane->refs--;
    pthread_mutex_unlock(&dsm_ofi.lane_lock);
}

dsm_net_ctx_t *dsm_net_ctx_create(int flags)
{
    int shared = !!(flags & DSM_NET_CTX_SHARED);
    if (!dsm_ofi.on)
        return NULL;
    if (flags & DSM_NET_CTX_DEFAULT) {
        /* Set before any other thread of the program can post. */
        dsm_ofi_dflt.shared = shared;
        return &dsm_ofi_dflt;
    }
    dsm_net_ctx_t *nc = calloc(1, sizeof(*nc));
    if (!nc)
        return NULL;
    if (dsm_ofi_ctx_init(nc, shared) != DSM_OK ||
        !(nc->lane = lane_take())) {
        dsm_ofi_ctx_fini(nc);
        free(nc);
        return NULL;
    }
    nc->ep = nc->lane->ep;
    return nc;
}

/* 1 once the CQ holds no entry of nc's: every account caught up. */
static int accounts_settled(void *p)
{
    dsm_net_ctx_t *nc = p;
    dsm_ofi_cq_poll();
    for (int pe = 0; pe < dsm_ofi_cfg.npes; pe++)
        if (__atomic_load_n(&nc->pe[pe].done, __ATOMIC_ACQUIRE) !=
            __atomic_load_n(&nc->pe[pe].posted, __ATOMIC_ACQUIRE))
            return 0;
    return 1;
}

void dsm_net_ctx_destroy(dsm_net_ctx_t *nc)
{
    if (!nc || !dsm_ofi.on)
        return;
    dsm_net_quiet(nc);
    if (nc == &dsm_ofi_dflt)
        return;
    /* Quiet saw the total; the CQ entries that point into nc's accounts
     * (each raises a PE's account after the total) must be read before
     * the accounts are freed. */
    if (!accounts_settled(nc))
        dsm_ofi_cfg.wait(NULL, NULL, NULL, accounts_settled, nc);
    lane_put(nc->lane);
    dsm_ofi_ctx_fini(nc);
    free(nc);
}

dsm_status_t dsm_ofi_ctx_init(dsm_net_ctx_t *nc, int shared)
{
    const int n = dsm_ofi_cfg.npes;
    pthread_rwlockattr_t la;

    nc->shared = shared;
    pthread_rwlockattr_init(&la);
    /* A quiet waiting for the lock must not starve behind posters. */
    pthread_rwlockattr_setkind_np(&la,
                                  PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&nc->lock, &la);
    pthread_rwlockattr_destroy(&la);
    pthread_mutex_init(&nc->block, NULL);
    pthread_mutex_init(&nc->agg_lock, NULL);
    nc->pe = calloc((size_t)n, sizeof(*nc->pe));
    nc->epoch_pes = calloc((size_t)n, sizeof(*nc->epoch_pes));
    if (!nc->pe || !nc->epoch_pes) {
        dsm_log_error("shmem_ctx_create: out of memory for the network "
                      "accounts of %d PEs", n);
        return DSM_ERR_NOMEM;
    }
    for (int pe = 0; pe < n; pe++) {
        nc->pe[pe].op.pe = &nc->pe[pe];
        nc->pe[pe].nc = nc;
    }
    return DSM_OK;
}

void dsm_ofi_ctx_fini(dsm_net_ctx_t *nc)
{
    dsm_ofi_agg_ctx_fini(nc);
    if (nc->pe) {
        pthread_rwlock_destroy(&nc->lock);
        pthread_mutex_destroy(&nc->block);
        pthread_mutex_destroy(&nc->agg_lock);
    }
    while (nc->ball) {
        net_bounce_t *b = nc->ball;
        nc->ball = b->all_next;
        free(b);
    }
    free(nc->pe);
    free(nc->epoch_pes);
    memset(nc, 0, sizeof(*nc));
}

/* An endpoint bound to the shared CQ, or to a CQ of its own (own_cq), and
 * the AV. No thread reads a CQ of the lane's own before the lane is
 * published; the shared CQ is bound at init (lane 0, the heartbeat's),
 * before any reader runs. */
dsm_status_t dsm_ofi_lane_open(net_lane_t *lane, int own_cq, const char *who)
{
    const char *what = "fi_cq_open";
    struct fid_cq *cq = dsm_ofi.cq;
    int rc = 0;

    lane->ep = NULL;
    lane->cq = NULL;
    lane->wait_fd = dsm_ofi.wait_fd;
    if (own_cq) {
        /* As the shared CQ: with a wait fd where waiters sleep. */
        struct fi_cq_attr cqa = {.format = FI_CQ_FORMAT_CONTEXT,
                                 .wait_obj = dsm_ofi.wait_on ? FI_WAIT_FD
                                                             : FI_WAIT_NONE};
        if ((rc = fi_cq_open(dsm_ofi.domain, &cqa, &lane->cq, NULL)))
            goto fail;
        what = "fi_control(FI_GETWAIT)";
        if (dsm_ofi.wait_on &&
            (rc = fi_control(&lane->cq->fid, FI_GETWAIT, &lane->wait_fd)))
            goto fail;
        cq = lane->cq;
    }
    what = "fi_endpoint";
    if ((rc = fi_endpoint(dsm_ofi.domain, dsm_ofi.info, &lane->ep, NULL)))
        goto fail;
    what = "binding the completion queue";
    if ((rc = fi_ep_bind(lane->ep, &cq->fid,
                         FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION)))
        goto fail;
    what = "binding the AV";
    if ((rc = fi_ep_bind(lane->ep, &dsm_ofi.av->fid, 0)))
        goto fail;
    what = "fi_enable";
    if ((rc = fi_enable(lane->ep)))
        goto fail;
    lane->refs = 0;
    lane->cq = cq;
    return DSM_OK;
fail:
    dsm_log_error("%s: %s failed (libfabric provider %s): %s", who, what,
                  dsm_ofi.prov, dsm_ofi_lib.strerror(-rc));
    if (lane->ep)
        fi_close(&lane->ep->fid);
    if (lane->cq)
        fi_close(&lane->cq->fid);
    lane->ep = NULL;
    lane->cq = NULL;
    return DSM_ERR_UNSUPPORTED;
}

/* The caller is alone (finalize). */
void dsm_ofi_lane_close(net_lane_t *lane)
{
    if (lane->ep)
        fi_close(&lane->ep->fid);
    if (lane->cq && lane->cq != dsm_ofi.cq) /* its own */
        fi_close(&lane->cq->fid);
    memset(lane, 0, sizeof(*lane));
}

#endif /* DSM_HAVE_OFI */
