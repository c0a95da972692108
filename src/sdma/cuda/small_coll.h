/*
 * The parameter of kernels.cu's dsm_small_coll (an on-stream fcollect /
 * alltoall of small blocks in one launch), by value: included by the
 * kernel (compiled to kernels_ptx.h) and by onstream.c, which fills it.
 * All addresses are the GPU's.
 */
#ifndef DSM_CUDA_SMALL_COLL_H
#define DSM_CUDA_SMALL_COLL_H

#include <stdint.h>

#define DSM_SMALL_COLL_PEERS 8

typedef struct dsm_small_coll {
    uint64_t out[2][DSM_SMALL_COLL_PEERS]; /* peer's word [phase][me] */
    uint64_t in[2][DSM_SMALL_COLL_PEERS];  /* my word [phase][peer] */
    uint64_t dst[DSM_SMALL_COLL_PEERS + 1], src[DSM_SMALL_COLL_PEERS + 1];
    uint64_t len[DSM_SMALL_COLL_PEERS + 1];
    uint64_t stall_ns; /* a wait without progress this long traps */
    int32_t pe[DSM_SMALL_COLL_PEERS]; /* the peers' PE numbers (stall line) */
    int32_t me, routine, np, nc;      /* routine: 0 fcollect, 1 alltoall */
    int32_t gpu_scope; /* 1: every peer runs on this GPU, every block is
                        * GPU memory: fences at GPU scope */
    int32_t pad_;
} dsm_small_coll_t;

/* The parameter of kernels.cu's dsm_ll_coll (an on-stream fcollect /
 * alltoall in the LL form, one launch, no synchronisation phases): every
 * 8 bytes of a block travel in a 16-byte line {lo, 1, hi, 1} stored into
 * the receiver's scratch, which its reader polls and zeroes. */
typedef struct dsm_ll_coll {
    uint64_t out[DSM_SMALL_COLL_PEERS]; /* my area in peer i's scratch */
    uint64_t in[DSM_SMALL_COLL_PEERS];  /* peer i's area in mine */
    uint64_t src[DSM_SMALL_COLL_PEERS]; /* my block for peer i */
    uint64_t dst[DSM_SMALL_COLL_PEERS]; /* peer i's block in my dest */
    uint64_t own_src, own_dst;          /* my own block; 0: in place */
    uint64_t parity;  /* my word of the team slot: which buffer, 0 or 1 */
    uint64_t nbytes;  /* per block */
    uint64_t stride;  /* lines per buffer of an area */
    uint64_t stall_ns; /* a wait without progress this long traps */
    int32_t pe[DSM_SMALL_COLL_PEERS]; /* the peers' PE numbers */
    int32_t me, routine, np, pad_;    /* routine: 0 fcollect, 1 alltoall */
} dsm_ll_coll_t;

#endif
