/*
 * Operations of the libfabric path (ofi_int.h): addresses, put, get,
 * atomics, signals.
 *
 * Target addresses are the peer's virtual address (FI_MR_VIRT_ADDR) or
 * the offset in its region. User RMA, AMOs and signals are checked against
 * the user part of the heap (as the shm path's dsm_rt_xlate does); only the
 * runtime's own operations (its signals, load64, quiet's flush reads)
 * reach the internal area.
 *
 * Every write first passes the fence gate of its PE (ofi_int.h: a PE
 * written before the last fence orders the write behind those) and, if it
 * is not complete on return, marks the PE written (flush reads, data
 * before signal) and in the fence's epoch.
 *
 * Atomics: each (operation, 4/8-byte integer) is checked with
 * fi_query_atomic / fi_query_fetch_atomic / fi_query_compare_atomic at
 * startup. One the provider lacks is done as a compare-and-swap loop
 * (fetch, compute, FI_CSWAP until it sticks); a provider without FI_CSWAP
 * on 64-bit integers is refused with a message naming what to set.
 */
#include "common/common.h"

#ifdef DSM_HAVE_OFI /* the whole file: ofi.c refuses the network without */

#include "net/ofi_int.h"

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------ addresses */

/* PE pe's address and key for the symmetric range [sym, sym+len). User
 * operations (internal 0) may address only the user part of a segment, as
 * dsm_rt_xlate allows for PEs on this node; the runtime's (internal 1)
 * also the internal area after the user heap. */
void dsm_ofi_remote_of(const char *routine, const void *sym, size_t len,
                       int pe, int internal, uint64_t *raddr, uint64_t *key)
{
    for (int i = 0; i < NET_NSEG; i++) {
        const dsm_net_seg_t *s = &dsm_ofi_cfg.segs[i];
        size_t lim = internal ? s->map_size : s->size;
        uintptr_t off = (uintptr_t)sym - (uintptr_t)s->base;
        if (s->base && off < lim && len <= lim - off) {
            *raddr = (dsm_ofi.virt_addr ? dsm_ofi.peer[pe].base[i] : 0) + off;
            *key = dsm_ofi.peer[pe].key[i];
            return;
        }
    }
    if ((uintptr_t)sym - (uintptr_t)dsm_ofi_cfg.device.base < dsm_ofi_cfg.device.size)
        dsm_ofi_cfg.fatal(routine,
                      "PE %d is on another node: RMA on the device "
                      "heap (GPU memory) across nodes is not supported",
                      pe);
    dsm_ofi_cfg.bad_addr(routine, sym, len, pe);
}

/* ------------------------------------------------------------ RMA */

void dsm_net_put(dsm_net_ctx_t *nc, const char *routine, void *sym,
                 const void *src, size_t len, int pe, int nbi)
{
    uint64_t raddr, key;
    const char *s = src;

    nc = nc_of(nc);
    dsm_ofi_remote_of(routine, sym, len, pe, 0, &raddr, &key);
    dsm_ofi_agg_before(nc, pe, 0);
    while (len) {
        size_t n = DSM_MIN(len, dsm_ofi.max_msg);
        struct iovec iov = {.iov_base = (void *)s, .iov_len = n};
        struct fi_rma_iov rma = {.addr = raddr, .len = n, .key = key};
        net_op_t op = {0};
        /* Small: copied, so src is free on return with nothing to wait
         * for (ofi_int.h: net_bounce_t). */
        int inj = n <= dsm_ofi.inject;
        struct fi_msg_rma msg = {
            .msg_iov = &iov,
            .iov_count = 1,
            .addr = dsm_ofi.addr[pe],
            .rma_iov = &rma,
            .rma_iov_count = 1,
        };
        /* Blocking: src reusable on return (a copied one already is);
         * nbi: the caller keeps src valid until quiet. */
        int wait = !inj && !nbi;
        op.pe = &nc->pe[pe];
        msg.context = wait ? (void *)&op : (void *)&nc->pe[pe].op;
        if (inj) {
            net_bounce_t *b = dsm_ofi_bounce_get(nc);
            memcpy(b->data, s, n);
            b->op.pe = &nc->pe[pe];
            iov.iov_base = b->data;
            msg.context = &b->op;
        }
        nc_post_begin(nc);
        dsm_ofi_fence_gate(nc, pe);
        /* Marked under the lock, before the post: a quiet that clears the
         * mark waits for this write. A blocking delivery-complete write is
         * placed when we return and needs no mark. */
        int mark = !(wait && dsm_ofi.delivery);
        if (mark)
            __atomic_store_n(&nc->pe[pe].written, 1, __ATOMIC_RELAXED);
        NET_POST(nc, routine, "put", pe,
                 fi_writemsg(nc->ep, &msg,
                             dsm_ofi.wflags | FI_COMPLETION));
        if (mark)
            dsm_ofi_wrote(nc, pe);
        nc_post_end(nc);
        if (wait)
            dsm_ofi_op_wait(&op, routine);
        s += n;
        raddr += n;
        len -= n;
    }
}

void dsm_ofi_post_read(dsm_net_ctx_t *nc, const char *routine, void *d,
                       size_t n, uint64_t raddr, uint64_t key, int pe,
                       net_op_t *op)
{
    struct iovec iov = {.iov_base = d, .iov_len = n};
    struct fi_rma_iov rma = {.addr = raddr, .len = n, .key = key};
    struct fi_msg_rma msg = {
        .msg_iov = &iov,
        .iov_count = 1,
        .addr = dsm_ofi.addr[pe],
        .rma_iov = &rma,
        .rma_iov_count = 1,
        .context = op ? (void *)op : (void *)&nc->pe[pe].op,
    };
    if (op)
        op->pe = &nc->pe[pe];
    NET_POST(nc, routine, "get", pe,
             fi_readmsg(nc->ep, &msg, FI_COMPLETION));
}

void dsm_net_get(dsm_net_ctx_t *nc, const char *routine, void *dst,
                 const void *sym, size_t len, int pe, int nbi)
{
    uint64_t raddr, key;
    char *d = dst;

    nc = nc_of(nc);
    dsm_ofi_remote_of(routine, sym, len, pe, 0, &raddr, &key);
    dsm_ofi_agg_before(nc, pe, 1);
    while (len) {
        size_t n = DSM_MIN(len, dsm_ofi.max_msg);
        net_op_t op = {0};
        /* Gets are not ordered by fence (only puts and AMOs are). */
        nc_post_begin(nc);
        dsm_ofi_post_read(nc, routine, d, n, raddr, key, pe, nbi ? NULL : &op);
        nc_post_end(nc);
        if (!nbi)
            dsm_ofi_op_wait(&op, routine);
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
        .addr = dsm_ofi.addr[pe],
        .rma_iov = &rma,
        .rma_iov_count = 1,
        .datatype = dt,
        .op = fi_op_of(op),
    };
    net_op_t done = {.pe = &nc->pe[pe]};
    uint64_t scratch = 0;

    if (op == DSM_AMO_FETCH)
        ioc.addr = &scratch; /* ignored operand of FI_ATOMIC_READ */
    nc_post_begin(nc);
    /* Every AMO is ordered by fence (the fetching ones too). */
    dsm_ofi_fence_gate(nc, pe);
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
    } else if (pe == dsm_ofi_cfg.me) {
        /* On my own word: complete on return, since the caller may read it
         * next with a plain load (every on-node AMO behaves so). */
        msg.context = &done;
        NET_POST(nc, routine, "atomic", pe,
                 fi_atomicmsg(nc->ep, &msg,
                              dsm_ofi.wflags | FI_COMPLETION));
    } else {
        /* Put-like: the operand is copied, completion comes at quiet. */
        net_bounce_t *b = dsm_ofi_bounce_get(nc);
        memcpy(b->data, val, dt == FI_UINT64 ? 8 : 4);
        b->op.pe = &nc->pe[pe];
        ioc.addr = b->data;
        msg.context = &b->op;
        __atomic_store_n(&nc->pe[pe].written, 1, __ATOMIC_RELAXED);
        NET_POST(nc, routine, "atomic", pe,
                 fi_atomicmsg(nc->ep, &msg,
                              dsm_ofi.wflags | FI_COMPLETION));
        dsm_ofi_wrote(nc, pe);
    }
    nc_post_end(nc);
    if (msg.context == &done)
        dsm_ofi_op_wait(&done, routine);
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
    if (dsm_ofi.amo_mode[DSM_AMO_FETCH][size == 8][1] == AMO_NATIVE)
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

/* An AMO on one of this PE's own words, where the provider's atomics are
 * the CPU's (dsm_ofi.cpu_atomics): applied here with the same seq_cst
 * __atomic builtins, so atomic with peers' AMOs on the word, and complete
 * on return, as before, without a round trip through the provider to
 * itself (it cost histo AGP one wait per update to this PE). Ordered as
 * the provider's path was: behind a fence (the gate) and behind this
 * context's writes to itself still in flight (a put or AMO to the same
 * word just before). */
void dsm_ofi_amo_local(dsm_net_ctx_t *nc, int op, void *p, size_t size,
                       const void *val, const void *cmp, void *fetched)
{
    const int me = dsm_ofi_cfg.me;
    nc_post_begin(nc);
    dsm_ofi_fence_gate(nc, me);
    nc_post_end(nc);
    if (__atomic_load_n(&nc->pe[me].written, __ATOMIC_RELAXED))
        dsm_net_flush(nc, me);
    if (size == 8)
        DSM_AMO_WORD(uint64_t, p, op, val, cmp, fetched);
    else
        DSM_AMO_WORD(uint32_t, p, op, val, cmp, fetched);
}

/* batch 1: a user's AMO, which may join its PE's batch (not a signal:
 * one goes at once). */
static void amo_at(dsm_net_ctx_t *nc, const char *routine, int op,
                   const void *sym, size_t size, const void *val,
                   const void *cmp, void *fetched, int pe, int internal,
                   int batch)
{
    uint64_t raddr, key, scratch = 0;

    nc = nc_of(nc);
    dsm_ofi_remote_of(routine, sym, size, pe, internal, &raddr, &key);
    if (pe == dsm_ofi_cfg.me && dsm_ofi.cpu_atomics) {
        dsm_ofi_amo_local(nc, op, (void *)sym, size, val, cmp, fetched);
        return;
    }
    /* SWAP without a result buffer still fetches (FI_ATOMIC_WRITE through
     * fetch_atomic); its result goes to scratch. */
    if (op_fetches(op) && !fetched)
        fetched = &scratch;
    /* A user's non-fetching AMO may join the PE's batch (ofi_agg.c); any
     * other operation to the PE sends that batch first. */
    if (!fetched && batch) {
        for (int i = 0; i < NET_NSEG; i++) {
            const dsm_net_seg_t *s = &dsm_ofi_cfg.segs[i];
            uintptr_t off = (uintptr_t)sym - (uintptr_t)s->base;
            if (s->base && off < s->size) {
                if (dsm_ofi_agg_amo(nc, op, i, off, size, val, pe))
                    return;
                break;
            }
        }
    }
    dsm_ofi_agg_before(nc, pe, fetched != NULL);
    if (dsm_ofi.amo_mode[op][size == 8][fetched != NULL] == AMO_CAS_LOOP) {
        if (op == DSM_AMO_CSWAP) /* CSWAP itself is native (checked) */
            dsm_ofi_cfg.fatal(routine, "internal: CSWAP cannot be emulated");
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
    amo_at(nc, routine, op, sym, size, val, cmp, fetched, pe, 0, 1);
}

void dsm_net_signal(dsm_net_ctx_t *nc, const char *routine, uint64_t *sym,
                    uint64_t v, int add, int pe, int internal)
{
    nc = nc_of(nc);
    /* Data before signal: only nc's writes to pe must land first, and there
     * are none to wait for unless some were posted since the last quiet or
     * flush (a collective's ready signal, a barrier's: none). A mark read
     * as clear was cleared by a quiet that completed its write. */
    if (!dsm_ofi.ordered &&
        __atomic_load_n(&nc->pe[pe].written, __ATOMIC_RELAXED)) {
        dsm_net_flush(nc, pe);
    }
    /* The runtime's words (team, barrier) are in the internal area; a
     * user's must be in the user part, as for puts. */
    amo_at(nc, routine, add ? DSM_AMO_ADD : DSM_AMO_SET, sym, sizeof(v), &v,
           NULL, NULL, pe, internal, 0);
    /* Send it now: the caller may leave the library next. */
    dsm_ofi_cq_poll();
}

uint64_t dsm_net_load64(const char *routine, const uint64_t *sym, int pe)
{
    uint64_t v = 0;
    amo_at(NULL, routine, DSM_AMO_FETCH, sym, sizeof(v), NULL, NULL, &v, pe,
           1, 0);
    return v;
}

/* Native or CAS loop for every (op, size); fails without 64-bit CSWAP. */
dsm_status_t dsm_ofi_check_atomics(void)
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
                rc = fi_query_atomic(dsm_ofi.domain, dt, fi_op_of(op), &attr,
                                     kind);
                dsm_ofi.amo_mode[op][s8][f] = rc ? AMO_CAS_LOOP : AMO_NATIVE;
                if (rc && used + 1 < sizeof(lacked))
                    used += (size_t)snprintf(
                        lacked + used, sizeof(lacked) - used, "%s%s%s/%s",
                        used ? ", " : "", f ? "fetch " : "",
                        dsm_ofi_lib.tostr(&(enum fi_op){fi_op_of(op)},
                                 FI_TYPE_ATOMIC_OP),
                        s8 ? "u64" : "u32");
            }
        }
    }
    if (dsm_ofi.amo_mode[DSM_AMO_CSWAP][1][1] != AMO_NATIVE ||
        dsm_ofi.amo_mode[DSM_AMO_CSWAP][0][1] != AMO_NATIVE) {
        dsm_log_error("shmem_init: libfabric provider %s lacks FI_CSWAP on "
                      "32/64-bit integers, which every OpenSHMEM atomic "
                      "needs; set SHMEM_OFI_PROVIDER (e.g. tcp;ofi_rxm or "
                      "sockets)", dsm_ofi.prov);
        return DSM_ERR_UNSUPPORTED;
    }
    if (used)
        dsm_debug("network: provider %s lacks %s: done as compare-and-swap "
                  "loops", dsm_ofi.prov, lacked);
    return DSM_OK;
}

#endif /* DSM_HAVE_OFI */
