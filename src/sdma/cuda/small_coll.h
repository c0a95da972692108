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

#endif
