/*
 * cuda backend: how a queue's commands become stream work (the overview is
 * in cuda.c). dsm_cuda_advance() cuts the commands [posted, upto) into
 * runs (copies, stream memory operations, host work) and puts them on the
 * queue's stream in queue order, with the completion report after them;
 * big local copies go on a side stream; SWAP goes through a staging
 * buffer; WAITs on the stream are bounded by DSM_CUDA_MAX_GATED.
 */
#include "sdma/cuda/cuda_int.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DSM_CUDA_STAGE (4u << 20)

enum { RUN_NONE = 0, RUN_COPY, RUN_MEMOP, RUN_HOST };

/* A copy within this PE's own device heap of at least this many bytes goes
 * on a side stream when other copies are in the same run, so that it
 * overlaps them instead of running before or after them (an AllGather's
 * local block and its NVLink copies: measured 835 us for 256 MiB per PE
 * with both on one stream, 2026-11-30). */
#define DSM_CUDA_SIDE_MIN ((size_t)1 << 20)

/* ------------------------------------------------------------ call times */

struct dsm_cuda_call_t dsm_cuda_call_t[DSM_CUDA_T_LAST];

void dsm_cuda_call_stats_print(void)
{
    static const char *const name[DSM_CUDA_T_LAST] = {
        "copies",           "graph launches", "graph builds",
        "memops",           "completion write", "context",
        "pointer lookups",  "whole post"};
    char line[640];
    int o = 0;
    for (int k = 0; k < DSM_CUDA_T_LAST && o < (int)sizeof(line); k++) {
        const struct dsm_cuda_call_t *c = &dsm_cuda_call_t[k];
        o += snprintf(line + o, sizeof(line) - (size_t)o, "%s%s %llu x %.2f us",
                      k ? ", " : "", name[k], (unsigned long long)c->n,
                      c->n ? (double)c->ns / 1e3 / (double)c->n : 0.0);
    }
    fprintf(stderr, "dmashmem: cuda posting PE %d: %s\n", dsm_log_pe, line);
}

/* ------------------------------------------------------------ runs */

typedef struct host_run {
    dsm_sdma_queue_t *q;
    uint64_t from, to;
} host_run_t;

static void exec_host(dsm_sdma_queue_t *q, uint64_t from, uint64_t to)
{
    for (uint64_t i = from; i < to; i++) {
        const dsm_cmd_t *c = &q->ring[i & (q->depth - 1)];
        while (!dsm_sdma_exec_cpu(c))
            sched_yield(); /* a WAIT on a word the GPU cannot see */
        if (c->wake)
            dsm_wake_notify(c->wake);
        if (c->wake_app)
            dsm_wake_notify(c->wake_app);
    }
}

static void CUDA_CB host_fn(void *arg)
{
    host_run_t *r = arg;
    cu_queue_t *cq = r->q->priv;
    exec_host(r->q, r->from, r->to);
    __atomic_store_n(cq->done, r->to, __ATOMIC_RELEASE);
    dsm_wake_notify(r->q->sdma->app_wake);
    free(r);
}

/* ------------------------------------------------------------ graphs */

/* SHMEM_CUDA_GRAPH_COPIES: a collective's run of copies that was seen once
 * before (the same pointers and sizes: a collective called again on the
 * same buffers) is instantiated as a CUDA graph of memcpy nodes and from
 * then on replayed with one cuGraphLaunch instead of being issued copy by
 * copy. Used by the chain queues and by the on-stream collectives, whose
 * pointers are symmetric; each pointer must also lie in a range the
 * backend recorded (heaps mapped until finalize), so a cached graph never
 * outlives its memory. */
#define GC_MAX_COPIES 8

typedef struct gc_entry {
    size_t nb;
    CUdeviceptr d[GC_MAX_COPIES], s[GC_MAX_COPIES];
    size_t l[GC_MAX_COPIES];
    CUgraphExec exec;
} gc_entry_t;

/* cap graphs, and the last cap runs seen once (candidates, exec NULL):
 * a run is built on its second sighting among those, so collectives that
 * alternate (fcollect, alltoall, fcollect, ...) are cached too, while a
 * stream of ever new buffers builds nothing. */
struct dsm_cuda_gcache {
    int cap, next, cnext;
    gc_entry_t *cand;
    gc_entry_t e[];
};

static int gc_same(const gc_entry_t *e, const CUdeviceptr *d,
                   const CUdeviceptr *s, const size_t *l, size_t nb)
{
    if (e->nb != nb)
        return 0;
    for (size_t i = 0; i < nb; i++)
        if (e->d[i] != d[i] || e->s[i] != s[i] || e->l[i] != l[i])
            return 0;
    return 1;
}

static CUgraphExec gc_build(const gc_entry_t *e)
{
    CUgraph g = NULL;
    CUgraphExec x = NULL;
    CUresult rc = dsm_cu.GraphCreate(&g, 0);
    for (size_t i = 0; rc == CUDA_SUCCESS && i < e->nb; i++) {
        CUDA_MEMCPY3D p;
        CUgraphNode node;
        memset(&p, 0, sizeof(p));
        p.srcMemoryType = CU_MEMORYTYPE_UNIFIED;
        p.srcDevice = e->s[i];
        p.dstMemoryType = CU_MEMORYTYPE_UNIFIED;
        p.dstDevice = e->d[i];
        p.WidthInBytes = e->l[i];
        p.Height = 1;
        p.Depth = 1;
        rc = dsm_cu.GraphAddMemcpyNode(&node, g, NULL, 0, &p, dsm_cuda_st.ctx);
    }
    if (rc == CUDA_SUCCESS)
        rc = dsm_cu.GraphInstantiateWithFlags(&x, g, 0);
    if (g)
        dsm_cu.GraphDestroy(g);
    if (rc != CUDA_SUCCESS) {
        dsm_debug("cuda: a copy graph could not be built (%s); copies are "
                  "issued one by one here from now on",
                  dsm_cu_err(rc));
        return NULL;
    }
    return x;
}

struct dsm_cuda_gcache *dsm_cuda_gcache_new(void)
{
    long n = dsm_cuda_st.set.graph_copies;
    struct dsm_cuda_gcache *c;
    if (n <= 0 || !dsm_cu.GraphCreate || !dsm_cu.GraphAddMemcpyNode ||
        !dsm_cu.GraphInstantiateWithFlags || !dsm_cu.GraphLaunch ||
        !dsm_cu.GraphDestroy || !dsm_cu.GraphExecDestroy)
        return NULL;
    n = DSM_MIN(n, 64L);
    c = calloc(1, sizeof(*c) + 2 * (size_t)n * sizeof(gc_entry_t));
    if (c) {
        c->cap = (int)n;
        c->cand = c->e + n;
    }
    return c;
}

void dsm_cuda_gcache_free(struct dsm_cuda_gcache **cp)
{
    struct dsm_cuda_gcache *c = *cp;
    if (!c)
        return;
    for (int i = 0; i < c->cap; i++)
        if (c->e[i].exec)
            dsm_cu.GraphExecDestroy(c->e[i].exec);
    free(c); /* the candidates share the allocation */
    *cp = NULL;
}

int dsm_cuda_gcache_launch(struct dsm_cuda_gcache **cp, const CUdeviceptr *d,
                           const CUdeviceptr *s, const size_t *l, size_t nb,
                           int big, CUstream st)
{
    struct dsm_cuda_gcache *c = *cp;
    gc_entry_t *e = NULL;
    uint64_t t0;

    if (!c || !nb || nb > GC_MAX_COPIES)
        return 0;
    for (size_t i = 0; i < nb; i++)
        if ((!big && l[i] >= DSM_CUDA_SIDE_MIN) || !dsm_cuda_in_ranges(d[i]) ||
            !dsm_cuda_in_ranges(s[i]))
            return 0;
    for (int i = 0; i < c->cap && !e; i++)
        if (c->e[i].exec && gc_same(&c->e[i], d, s, l, nb))
            e = &c->e[i];
    if (!e) {
        gc_entry_t *k = NULL;
        for (int i = 0; i < c->cap && !k; i++)
            if (gc_same(&c->cand[i], d, s, l, nb))
                k = &c->cand[i];
        if (!k) {
            k = &c->cand[c->cnext];
            c->cnext = (c->cnext + 1) % c->cap;
            k->nb = nb;
            memcpy(k->d, d, nb * sizeof(*d));
            memcpy(k->s, s, nb * sizeof(*s));
            memcpy(k->l, l, nb * sizeof(*l));
            return 0;
        }
        t0 = dsm_cuda_t_start();
        CUgraphExec x = gc_build(k);
        dsm_cuda_t_end(DSM_CUDA_T_BUILD, t0);
        if (!x) {
            dsm_cuda_gcache_free(cp);
            return 0;
        }
        e = &c->e[c->next];
        c->next = (c->next + 1) % c->cap;
        if (e->exec)
            dsm_cu.GraphExecDestroy(e->exec);
        *e = *k;
        e->exec = x;
        k->nb = 0;
    }
    t0 = dsm_cuda_t_start();
    CU_CHECK(dsm_cu.GraphLaunch(e->exec, st));
    dsm_cuda_t_end(DSM_CUDA_T_GRAPH, t0);
    return 1;
}

/* ------------------------------------------------------------ side stream */

static int is_local_big(CUdeviceptr d, CUdeviceptr s, size_t len)
{
    const uintptr_t lo = dsm_cuda_st.own_lo, hi = dsm_cuda_st.own_hi;
    return len >= DSM_CUDA_SIDE_MIN && hi && d - lo < hi - lo &&
           s - lo < hi - lo;
}

int dsm_cuda_side_fork(CUstream st, dsm_cuda_side_t *sd, CUdeviceptr *d,
                       CUdeviceptr *s, size_t *l, size_t *n, int alone)
{
    size_t i, k = 0, big = 0;

    for (i = 0; i < *n; i++)
        big += is_local_big(d[i], s[i], l[i]);
    if (!big || (big == *n && !alone))
        return 0;
    if (!sd->st) {
        CU_CHECK(dsm_cu.StreamCreate(&sd->st, CU_STREAM_NON_BLOCKING));
        CU_CHECK(dsm_cu.EventCreate(&sd->fork, CU_EVENT_DISABLE_TIMING));
        CU_CHECK(dsm_cu.EventCreate(&sd->join, CU_EVENT_DISABLE_TIMING));
    }
    CU_CHECK(dsm_cu.EventRecord(sd->fork, st));
    CU_CHECK(dsm_cu.StreamWaitEvent(sd->st, sd->fork, 0));
    for (i = 0; i < *n; i++) {
        if (is_local_big(d[i], s[i], l[i])) {
            CU_CHECK(dsm_cu.MemcpyAsync(d[i], s[i], l[i], sd->st));
            continue;
        }
        d[k] = d[i];
        s[k] = s[i];
        l[k++] = l[i];
    }
    *n = k;
    CU_CHECK(dsm_cu.EventRecord(sd->join, sd->st));
    return 1;
}

void dsm_cuda_side_destroy(dsm_cuda_side_t *sd)
{
    if (sd->st) {
        dsm_cu.StreamDestroy(sd->st);
        dsm_cu.EventDestroy(sd->fork);
        dsm_cu.EventDestroy(sd->join);
    }
    memset(sd, 0, sizeof(*sd));
}

/* ------------------------------------------------------------ posting */

static void issue_copies(cu_queue_t *cq)
{
    for (size_t i = 0; i < cq->nb; i++)
        cq->last_bytes += cq->sizes[i];
    /* Not behind a WAIT still closed on the stream (an instance posted
     * ahead): with 2 PEs on one H200 under MPS a graph launched there
     * never ran (gpu_coll hung when instances were posted ahead there,
     * a lever since removed; 2026-12-02), while the same copies issued one by one pass. */
    if (cq->gc && !dsm_cuda_gates_pending(cq) &&
        dsm_cuda_gcache_launch(&cq->gc, cq->dsts, cq->srcs, cq->sizes, cq->nb, 0,
                               cq->stream)) {
        cq->nb = 0;
        cq->gpu_dirty = 1;
        return;
    }
    /* A queue's local copy may sit alone in its run (a chain's WAIT splits
     * it from the peer copies): fork it anyway and join only before the
     * next command that is not a copy (begin_run, join_side), so the
     * copies that follow in the queue overlap it. */
    if (dsm_cuda_side_fork(cq->stream, &cq->side, cq->dsts, cq->srcs, cq->sizes,
                           &cq->nb, 1))
        cq->join_pending = 1;
    uint64_t t0 = dsm_cuda_t_start();
    if (cq->nb < dsm_cuda_st.batch_min || !dsm_cu.MemcpyBatchAsync) {
        for (size_t i = 0; i < cq->nb; i++)
            CU_CHECK(dsm_cu.MemcpyAsync(cq->dsts[i], cq->srcs[i], cq->sizes[i],
                                        cq->stream));
    } else {
        /* Sources are read in stream order: an nbi source may be reused
         * only after quiet, and a blocking one is waited for. */
        CUmemcpyAttributes attr;
        size_t idx = 0;
        memset(&attr, 0, sizeof(attr));
        attr.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
        /* SHMEM_CUDA_PREFER_CE=1 asks for copy engines also within one
         * GPU; measured 2026-11-30 on H200 it doubled the cost of small
         * batches between GPUs (64 x 1 KiB: 43 -> 81 us), so off. */
        attr.flags = dsm_cuda_st.copy_flags;
        CUresult rc = dsm_cu.MemcpyBatchAsync(
            cq->dsts, cq->srcs, cq->sizes, cq->nb, &attr, &idx, 1, cq->stream);
        if (rc != CUDA_SUCCESS) {
            /* Refused (graph capture, an odd pointer): the same copies one
             * by one, and this driver's batch path is not tried again. */
            dsm_debug("cuda: cuMemcpyBatchAsync(%zu) failed (%s); copying "
                      "one by one from now on",
                      cq->nb, dsm_cu_err(rc));
            dsm_cu.MemcpyBatchAsync = NULL;
            for (size_t i = 0; i < cq->nb; i++)
                CU_CHECK(dsm_cu.MemcpyAsync(cq->dsts[i], cq->srcs[i],
                                            cq->sizes[i], cq->stream));
        }
    }
    dsm_cuda_t_end(DSM_CUDA_T_COPY, t0);
    cq->nb = 0;
    cq->gpu_dirty = 1;
}

/* Make the stream wait for local copies forked to the side stream; before
 * any command but a copy (begin_run) and before a completion report. */
static void join_side(cu_queue_t *cq)
{
    if (cq->join_pending)
        CU_CHECK(dsm_cu.StreamWaitEvent(cq->stream, cq->side.join, 0));
    cq->join_pending = 0;
}

static void issue_memops(cu_queue_t *cq)
{
    uint64_t t0 = cq->nops ? dsm_cuda_t_start() : 0;
    if (cq->nops == 1 &&
        cq->ops[0].operation == CU_STREAM_MEM_OP_WRITE_VALUE_64)
        CU_CHECK(dsm_cu.StreamWriteValue64(cq->stream,
                                           cq->ops[0].writeValue.address,
                                           cq->ops[0].writeValue.value64, 0));
    else if (cq->nops == 1)
        CU_CHECK(dsm_cu.StreamWaitValue64(
            cq->stream, cq->ops[0].waitValue.address,
            cq->ops[0].waitValue.value64, CU_STREAM_WAIT_VALUE_GEQ));
    else if (cq->nops)
        CU_CHECK(dsm_cu.StreamBatchMemOp(cq->stream, cq->nops, cq->ops, 0));
    dsm_cuda_t_end(DSM_CUDA_T_MEMOP, t0);
    cq->nops = 0;
    cq->gpu_dirty = 1;
}

/* Host-only commands [from, to): by this thread when the stream is idle,
 * else by a host function behind the stream's earlier work. */
static void issue_host(dsm_sdma_queue_t *q, cu_queue_t *cq, uint64_t from,
                       uint64_t to)
{
    if (!cq->gpu_dirty && __atomic_load_n(cq->done, __ATOMIC_ACQUIRE) == from) {
        uint64_t i;
        for (i = from; i < to; i++) {
            const dsm_cmd_t *c = &q->ring[i & (q->depth - 1)];
            if (c->op == DSM_CMD_WAIT && !dsm_sdma_exec_cpu(c))
                break; /* not satisfied: the rest goes behind the stream */
            exec_host(q, i, i + 1);
        }
        __atomic_store_n(cq->done, i, __ATOMIC_RELEASE);
        if (i == to)
            return;
        from = i;
    }
    host_run_t *r = malloc(sizeof(*r));
    if (!r) {
        dsm_log_error("cuda backend: out of memory");
        _exit(1);
    }
    r->q = q;
    r->from = from;
    r->to = to;
    join_side(cq);
    CU_CHECK(dsm_cu.LaunchHostFunc(cq->stream, host_fn, r));
    /* The host function writes the completion word itself, covering the
     * GPU work before it. */
    cq->gpu_dirty = 0;
}

static void flush_run(dsm_sdma_queue_t *q, cu_queue_t *cq, uint64_t seq)
{
    switch (cq->run) {
    case RUN_COPY:
        issue_copies(cq);
        break;
    case RUN_MEMOP:
        issue_memops(cq);
        break;
    case RUN_HOST:
        issue_host(q, cq, cq->run_start, seq);
        break;
    }
    cq->run = RUN_NONE;
}

static void begin_run(dsm_sdma_queue_t *q, cu_queue_t *cq, int run,
                      uint64_t seq)
{
    if (cq->run != run) {
        flush_run(q, cq, seq);
        /* What follows copies forked to the side stream (local, 1 MiB or
         * more) waits for them, as queue order says: a signal (the device
         * API's completion word was written while such a copy ran), a
         * wait, host work. Later copies may overlap them. */
        if (run != RUN_COPY)
            join_side(cq);
        cq->run = run;
        cq->run_start = seq;
    }
}

static void add_copy(dsm_sdma_queue_t *q, cu_queue_t *cq, void *dst,
                     const void *src, size_t len, uint64_t seq)
{
    if (!len)
        return;
    begin_run(q, cq, RUN_COPY, seq);
    if (dsm_cuda_st.set.merge && cq->nb) {
        /* Adjacent at both ends to the previous copy of the run (a
         * stream of put_nbi walking a buffer): one longer copy. Each copy
         * in a batch costs the driver ~0.6 us (64 x 1 KiB: 42 us as 64
         * copies, GPU-FACTS.md). Not when the longer copy would read what
         * it writes. */
        size_t j = cq->nb - 1;
        CUdeviceptr d = (CUdeviceptr)(uintptr_t)dst;
        CUdeviceptr s_ = (CUdeviceptr)(uintptr_t)src;
        if (cq->dsts[j] + cq->sizes[j] == d &&
            cq->srcs[j] + cq->sizes[j] == s_) {
            CUdeviceptr d0 = cq->dsts[j], s0 = cq->srcs[j];
            size_t n = cq->sizes[j] + len;
            if (d0 + n <= s0 || s0 + n <= d0) {
                cq->sizes[j] = n;
                return;
            }
        }
    }
    if (cq->nb == cq->cap)
        issue_copies(cq);
    cq->dsts[cq->nb] = (CUdeviceptr)(uintptr_t)dst;
    cq->srcs[cq->nb] = (CUdeviceptr)(uintptr_t)src;
    cq->sizes[cq->nb] = len;
    cq->nb++;
}

static void add_memop(dsm_sdma_queue_t *q, cu_queue_t *cq, int wait,
                      CUdeviceptr addr, uint64_t value, uint64_t seq)
{
    CUstreamBatchMemOpParams *op;
    begin_run(q, cq, RUN_MEMOP, seq);
    if (cq->nops == DSM_CUDA_MAX_MEMOPS)
        issue_memops(cq);
    op = &cq->ops[cq->nops++];
    memset(op, 0, sizeof(*op));
    if (wait) {
        op->waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_64;
        op->waitValue.address = addr;
        op->waitValue.value64 = value;
        op->waitValue.flags = CU_STREAM_WAIT_VALUE_GEQ;
    } else {
        op->writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_64;
        op->writeValue.address = addr;
        op->writeValue.value64 = value;
        op->writeValue.flags = CU_STREAM_WRITE_VALUE_DEFAULT;
    }
}

/* Commands that need their own ordered stream operations. */
static void single_copy(dsm_sdma_queue_t *q, cu_queue_t *cq, void *dst,
                        const void *src, size_t len, uint64_t seq)
{
    flush_run(q, cq, seq);
    if (len)
        CU_CHECK(dsm_cu.MemcpyAsync((CUdeviceptr)(uintptr_t)dst,
                                    (CUdeviceptr)(uintptr_t)src, len,
                                    cq->stream));
    cq->gpu_dirty = 1;
}

static void swap_staged(dsm_sdma_queue_t *q, cu_queue_t *cq, char *a, char *b,
                        size_t len, uint64_t seq)
{
    flush_run(q, cq, seq);
    if (!cq->stage)
        CU_CHECK(dsm_cu.MemAlloc(&cq->stage, DSM_CUDA_STAGE));
    for (size_t off = 0; off < len; off += DSM_CUDA_STAGE) {
        size_t n = DSM_MIN(len - off, (size_t)DSM_CUDA_STAGE);
        CUdeviceptr pa = (CUdeviceptr)(uintptr_t)(a + off);
        CUdeviceptr pb = (CUdeviceptr)(uintptr_t)(b + off);
        CU_CHECK(dsm_cu.MemcpyAsync(cq->stage, pa, n, cq->stream));
        CU_CHECK(dsm_cu.MemcpyAsync(pa, pb, n, cq->stream));
        CU_CHECK(dsm_cu.MemcpyAsync(pb, cq->stage, n, cq->stream));
    }
    cq->gpu_dirty = 1;
}

int dsm_cuda_gates_pending(cu_queue_t *cq)
{
    uint64_t done = __atomic_load_n(cq->done, __ATOMIC_ACQUIRE);
    int k = 0;
    for (int i = 0; i < cq->ngates; i++)
        if (cq->gates[i] >= done)
            cq->gates[k++] = cq->gates[i];
    cq->ngates = k;
    return k;
}

/* Put commands [cq->posted, upto) on the stream. Caller holds q->lock. */
void dsm_cuda_advance(dsm_sdma_queue_t *q, uint64_t upto)
{
    cu_queue_t *cq = q->priv;
    const uint64_t ta = dsm_cuda_t_start();
    CUcontext prev = dsm_cuda_ctx_enter();
    uint64_t i = cq->posted;

    dsm_cuda_t_end(DSM_CUDA_T_CTX, ta);

    cq->blocked = 0;
    cq->last_bytes = 0;
    for (; i < upto; i++) {
        const dsm_cmd_t *c = &q->ring[i & (q->depth - 1)];
        int ks, kd, k2;
        intptr_t delta;

        switch ((dsm_cmd_op_t)c->op) {
        case DSM_CMD_COPY:
        case DSM_CMD_BCAST:
            ks = dsm_cuda_kind_of(c->u.copy.src);
            kd = dsm_cuda_kind_of(c->u.copy.dst);
            k2 = c->op == DSM_CMD_BCAST ? dsm_cuda_kind_of(c->u.copy.dst2)
                                        : DSM_CUDA_HOSTREG;
            if (ks != DSM_CUDA_DEV && kd != DSM_CUDA_DEV &&
                (c->op == DSM_CMD_COPY || k2 != DSM_CUDA_DEV)) {
                begin_run(q, cq, RUN_HOST, i);
            } else if (ks == DSM_CUDA_PAGEABLE || kd == DSM_CUDA_PAGEABLE ||
                       k2 == DSM_CUDA_PAGEABLE) {
                single_copy(q, cq, c->u.copy.dst, c->u.copy.src, c->u.copy.len,
                            i);
                if (c->op == DSM_CMD_BCAST)
                    single_copy(q, cq, c->u.copy.dst2, c->u.copy.src,
                                c->u.copy.len, i);
            } else {
                add_copy(q, cq, c->u.copy.dst, c->u.copy.src, c->u.copy.len, i);
                if (c->op == DSM_CMD_BCAST)
                    add_copy(q, cq, c->u.copy.dst2, c->u.copy.src,
                             c->u.copy.len, i);
            }
            break;
        case DSM_CMD_SWAP:
            ks = dsm_cuda_kind_of(c->u.copy.src);
            kd = dsm_cuda_kind_of(c->u.copy.dst);
            if (ks != DSM_CUDA_DEV && kd != DSM_CUDA_DEV)
                begin_run(q, cq, RUN_HOST, i);
            else
                swap_staged(q, cq, (char *)(uintptr_t)c->u.copy.src,
                            c->u.copy.dst, c->u.copy.len, i);
            break;
        case DSM_CMD_WAIT:
            ks = dsm_cuda_classify(c->u.sig.word, &delta);
            if (ks == DSM_CUDA_PAGEABLE &&
                dsm_cuda_pin_word_page(c->u.sig.word))
                ks = dsm_cuda_classify(c->u.sig.word, &delta);
            if (ks == DSM_CUDA_PAGEABLE) {
                begin_run(q, cq, RUN_HOST, i);
                break;
            }
            if (ks == DSM_CUDA_HOSTREG && cq->run != RUN_HOST &&
                __atomic_load_n(c->u.sig.word, __ATOMIC_ACQUIRE) >=
                    c->u.sig.value) {
                /* Already open: nothing to wait for on the stream, and
                 * the run goes on (copies on both sides of it stay one
                 * batch; only host runs track their commands). */
                if (cq->run == RUN_NONE)
                    begin_run(q, cq, RUN_MEMOP, i);
                break;
            }
            if (dsm_cuda_gates_pending(cq) >= DSM_CUDA_MAX_GATED) {
                cq->blocked = 1;
                goto out;
            }
            /* Report what came before before the stream may stop here.
             * A memory-operation run in progress takes the report and the
             * wait in the same cuStreamBatchMemOp (they run in order). */
            if (cq->run != RUN_MEMOP || cq->join_pending)
                flush_run(q, cq, i);
            join_side(cq);
            if (cq->gpu_dirty || (cq->run == RUN_MEMOP && cq->nops))
                add_memop(q, cq, 0, cq->done_dev, i, i);
            add_memop(q, cq, 1,
                      (CUdeviceptr)((intptr_t)(uintptr_t)c->u.sig.word + delta),
                      c->u.sig.value, i);
            cq->gates[cq->ngates++] = i;
            break;
        case DSM_CMD_SIGNAL:
            ks = dsm_cuda_classify(c->u.sig.word, &delta);
            /* A host word is stored by the CPU when nothing on the stream
             * is ahead of it (far cheaper than a stream round trip). */
            if (ks == DSM_CUDA_PAGEABLE ||
                (ks == DSM_CUDA_HOSTREG &&
                 (cq->run == RUN_HOST ||
                  (cq->run == RUN_NONE && !cq->gpu_dirty &&
                   __atomic_load_n(cq->done, __ATOMIC_ACQUIRE) == i))))
                begin_run(q, cq, RUN_HOST, i);
            else
                add_memop(
                    q, cq, 0,
                    (CUdeviceptr)((intptr_t)(uintptr_t)c->u.sig.word + delta),
                    c->u.sig.value, i);
            break;
        case DSM_CMD_SIGNAL_ADD:
            if (dsm_cuda_kind_of(c->u.sig.word) != DSM_CUDA_DEV) {
                begin_run(q, cq, RUN_HOST, i);
            } else {
                flush_run(q, cq, i);
                join_side(cq); /* no run: as begin_run does */
                CU_CHECK(dsm_cuda_launch_add(
                    cq->stream, (CUdeviceptr)(uintptr_t)c->u.sig.word,
                    c->u.sig.value));
                cq->gpu_dirty = 1;
            }
            break;
        case DSM_CMD_NOP:
        case DSM_CMD_LAST:
            begin_run(q, cq, RUN_HOST, i);
            break;
        }
    }
out:
    if (cq->run == RUN_MEMOP && cq->nops && !cq->join_pending) {
        /* The completion report rides in the last memory-operation run. */
        add_memop(q, cq, 0, cq->done_dev, i, i);
        flush_run(q, cq, i);
        cq->gpu_dirty = 0;
    }
    flush_run(q, cq, i);
    join_side(cq);
    if (cq->gpu_dirty) {
        uint64_t t0 = dsm_cuda_t_start();
        CU_CHECK(dsm_cu.StreamWriteValue64(cq->stream, cq->done_dev, i, 0));
        dsm_cuda_t_end(DSM_CUDA_T_DONE, t0);
        cq->gpu_dirty = 0;
    } else if (cq->posted != i &&
               __atomic_load_n(cq->done, __ATOMIC_ACQUIRE) < i) {
        /* Only "already open" WAITs since the last report: nothing will
         * write the word, so say so from here once the stream is idle. */
        CU_CHECK(dsm_cu.StreamWriteValue64(cq->stream, cq->done_dev, i, 0));
    }
    __atomic_store_n(&cq->posted, i, __ATOMIC_RELEASE);
    dsm_cuda_ctx_leave(prev);
    dsm_cuda_t_end(DSM_CUDA_T_ADVANCE, ta);
    /* Stopped at the gate bound: poll() resumes it when a thread of this
     * PE next waits, the agent if none does. */
    if (cq->blocked && dsm_cuda_agent_start(q->sdma))
        dsm_cuda_agent_kick();
}
