/*
 * The atomic operations every path implements (runtime/path.h: CPU atomics
 * on a mapping; src/net: provider atomics).
 */
#ifndef DSM_AMO_OP_H
#define DSM_AMO_OP_H

#include <string.h>

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

/* One AMO on the W-typed word r with the CPU's seq_cst atomics (val, cmp,
 * fetched as above; fetched may be NULL). The shm path applies every AMO
 * so; the network path its own words' and the batches peers send it
 * (src/net/ofi_agg.c), where the provider's atomics are the CPU's too. */
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

#endif /* DSM_AMO_OP_H */
