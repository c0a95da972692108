/*
 * Atomic memory operations, byte level: every typed AMO (and the signal and
 * lock words) funnels into dsm_amo() on a 4- or 8-byte word.
 *
 * On host memory of a local PE an AMO is a CPU atomic (__atomic builtins) on
 * the shared mapping of the target's copy, done by the caller. The engines
 * execute SIGNAL/SIGNAL_ADD with the same builtins on the same words, so
 * AMOs, signal operations and engine-side signals are atomic with respect
 * to each other: one mechanism. Integer types of one size share one
 * implementation (two's complement add, bitwise ops and compare on the bit
 * pattern are the same for signed and unsigned); float and double fetch,
 * set and swap move the bit pattern through the integer of their size.
 */
#ifndef DSM_AMO_H
#define DSM_AMO_H

#include <string.h>

#include "rma.h"

typedef enum {
    DSM_AMO_FETCH, /* *fetched = *r */
    DSM_AMO_SET,   /* *r = *val */
    DSM_AMO_SWAP,  /* *fetched = *r, *r = *val */
    DSM_AMO_CSWAP, /* *fetched = *r, if it was *cmp: *r = *val */
    DSM_AMO_ADD,   /* *fetched = *r, *r += *val */
    DSM_AMO_AND,
    DSM_AMO_OR,
    DSM_AMO_XOR,
} dsm_amo_op_t;

void dsm_amo_bad_align(const char *routine, const void *addr, size_t size)
    DSM_NORETURN;

/* The word of PE pe's copy of the symmetric object at addr, checked; NULL
 * while the job uses the network (net.h): then every AMO, to this node's
 * PEs and to this PE too, is done by the provider at the target, because
 * a provider's atomics are only atomic with respect to each other (a CPU
 * atomic on a mapped word could interleave with a remote PE's update:
 * measured, the lock test lost mutual exclusion). One atomicity domain per
 * job, as OpenSHMEM implementations on NICs without CPU-coherent atomics
 * do. */
static inline void *dsm_amo_addr(shmem_ctx_t ctx, const void *addr,
                                 size_t size, int pe, const char *routine)
{
    dsm_rma_ctx(ctx, routine);
    DSM_CHECK_PE(routine, pe);
    if (DSM_UNLIKELY((uintptr_t)addr & (size - 1)))
        dsm_amo_bad_align(routine, addr, size);
    if (DSM_UNLIKELY(dsm_net_active()))
        return NULL; /* the network's atomicity domain: see dsm_amo */
    return dsm_rt_xlate(routine, addr, size, pe);
}

#define DSM_AMO_WORD(W, r, op, val, cmp, fetched)                              \
    do {                                                                       \
        W *w_ = (W *)(r), v_ = 0, c_ = 0, o_ = 0;                              \
        if (val)                                                               \
            memcpy(&v_, (val), sizeof(W));                                     \
        switch (op) {                                                          \
        case DSM_AMO_FETCH:                                                    \
            o_ = __atomic_load_n(w_, __ATOMIC_SEQ_CST);                        \
            break;                                                             \
        case DSM_AMO_SET:                                                      \
            __atomic_store_n(w_, v_, __ATOMIC_SEQ_CST);                        \
            break;                                                             \
        case DSM_AMO_SWAP:                                                     \
            o_ = __atomic_exchange_n(w_, v_, __ATOMIC_SEQ_CST);                \
            break;                                                             \
        case DSM_AMO_CSWAP:                                                    \
            memcpy(&c_, (cmp), sizeof(W));                                     \
            o_ = c_;                                                           \
            __atomic_compare_exchange_n(w_, &o_, v_, 0, __ATOMIC_SEQ_CST,      \
                                        __ATOMIC_SEQ_CST);                     \
            break;                                                             \
        case DSM_AMO_ADD:                                                      \
            o_ = __atomic_fetch_add(w_, v_, __ATOMIC_SEQ_CST);                 \
            break;                                                             \
        case DSM_AMO_AND:                                                      \
            o_ = __atomic_fetch_and(w_, v_, __ATOMIC_SEQ_CST);                 \
            break;                                                             \
        case DSM_AMO_OR:                                                       \
            o_ = __atomic_fetch_or(w_, v_, __ATOMIC_SEQ_CST);                  \
            break;                                                             \
        case DSM_AMO_XOR:                                                      \
            o_ = __atomic_fetch_xor(w_, v_, __ATOMIC_SEQ_CST);                 \
            break;                                                             \
        }                                                                      \
        if (fetched)                                                           \
            memcpy((fetched), &o_, sizeof(W));                                 \
    } while (0)

/* One AMO of size bytes (4 or 8) on PE pe's copy of dest. val/cmp point at
 * the operands, fetched (or NULL) receives the old value. Everything but
 * the addresses is a constant at each typed call site, so this folds to
 * one instruction after the checks. */
static inline void dsm_amo(shmem_ctx_t ctx, dsm_amo_op_t op, const void *dest,
                           size_t size, const void *val, const void *cmp,
                           void *fetched, int pe, const char *routine)
{
    void *r = dsm_amo_addr(ctx, dest, size, pe, routine);
    if (DSM_UNLIKELY(!r)) {
        dsm_net_amo(routine, op, (void *)dest, size, val, cmp, fetched, pe);
        return;
    }
    if (size == 8)
        DSM_AMO_WORD(uint64_t, r, op, val, cmp, fetched);
    else
        DSM_AMO_WORD(uint32_t, r, op, val, cmp, fetched);
}

#endif /* DSM_AMO_H */
