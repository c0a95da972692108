/*
 * The atomic operations every path implements (runtime/path.h: CPU atomics
 * on a mapping; src/net: provider atomics).
 */
#ifndef DSM_AMO_OP_H
#define DSM_AMO_OP_H

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

#endif /* DSM_AMO_OP_H */
