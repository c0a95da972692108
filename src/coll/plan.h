/*
 * Collective planning (plan.c): which variant a data-moving collective
 * (AllGather, AlltoAll) takes, as a pure function of explicit inputs,
 * the way dsm_path_plan (runtime/path_plan.c) chooses the path table.
 * Nothing here reads the environment, a team or the sdma layer: algo.c
 * gathers the inputs (the tunables read once, the team's placement, the
 * call's sizes and memory) and test/unit/coll_plan checks the choice for
 * every team, size and placement without a job.
 */
#ifndef DSM_COLL_PLAN_H
#define DSM_COLL_PLAN_H

#include <stddef.h>

#include "common/status.h"

/* Variants (DMA-Latte) plus the caller-executed direct path, and the
 * eager messages of small calls (coll.h, eager.c: no plan, no chain). */
#define DSM_ALGO_LIST(X)                                                       \
    X(AUTO, "auto")                                                            \
    X(PCPY, "pcpy")                                                            \
    X(B2B, "b2b")                                                              \
    X(BCAST, "bcast")                                                          \
    X(SWAP, "swap")                                                            \
    X(DIRECT, "direct")                                                        \
    X(EAGER, "eager")

typedef enum {
#define DSM_ALGO_ENUM(name, str) DSM_ALGO_##name,
    DSM_ALGO_LIST(DSM_ALGO_ENUM)
#undef DSM_ALGO_ENUM
        DSM_ALGO_LAST
} dsm_algo_t;

typedef enum { DSM_COLL_AG = 0, DSM_COLL_A2A = 1 } dsm_coll_kind_t;

const char *dsm_algo_name(dsm_algo_t a);
/* The variant named v (SHMEM_{FCOLLECT,ALLTOALL}_ALGORITHM): 1 and *out
 * set, or 0 for a name that is none. */
int dsm_algo_parse(const char *v, dsm_algo_t *out);

/* Tunables, read once (algo.c: these defaults, then the environment). */
typedef struct dsm_coll_tune {
    dsm_algo_t ag, a2a;     /* forced variant, AUTO = by size */
    size_t direct_max;      /* auto: direct path up to here (host memory) */
    size_t ag_pcpy_min;     /* auto AllGather: b2b below, pcpy from here */
    size_t a2a_pcpy_min;    /* auto AlltoAll: b2b below, pcpy from here */
    size_t strided_cpu_max; /* alltoalls: element size up to here by CPU */
    int prelaunch_depth;
} dsm_coll_tune_t;

/* The measured defaults for a node of `cores` cores running node_pes PEs
 * whose engines have engine_caps (DSM_SDMA_CAP_*): auto variants, the
 * crossovers of docs/PERFORMANCE.md, prelaunch depth 0. */
void dsm_coll_tune_defaults(dsm_coll_tune_t *t, unsigned engine_caps,
                            long cores, int node_pes);
/* auto SHMEM_COLL_EAGER_MAX for such a node (bytes per message). */
size_t dsm_coll_eager_max_default(long cores, int node_pes);

/* One call to plan. */
typedef struct dsm_coll_plan_in {
    dsm_coll_kind_t kind;
    size_t bytes;     /* bytes each PE sends one peer (one message) */
    size_t elem;      /* alltoalls with strides: bytes of one element, each
                       * element its own copy; 0: contiguous blocks */
    int npes;         /* team size; a team of one copies its own block and
                       * takes no plan (an error here) */
    int host;         /* every buffer of the call is host memory */
    int mapped;       /* every member is mapped here (team caps LOADSTORE);
                       * 0: some member only the network reaches */
    int chain;        /* a persistent request: an engine chain posted
                       * ahead, never the direct path or eager */
    int mixed;        /* collect: the members' sizes may differ, so none
                       * can go eager (which needs every member's size) */
    unsigned engine_caps; /* the sdma layer's DSM_SDMA_CAP_* */
    size_t eager_max; /* eager messages up to this many bytes; 0: off */
    const dsm_coll_tune_t *tune;
} dsm_coll_plan_in_t;

typedef struct dsm_coll_choice {
    dsm_algo_t algo;  /* never AUTO where err is DSM_OK */
    dsm_status_t err; /* DSM_ERR_UNSUPPORTED: device memory on a team that
                       * spans nodes; DSM_ERR_INVAL: a team of one */
    int overridden;   /* the forced variant did not apply (why says so) */
    const char *why;  /* one phrase: why this variant (SHMEM_DEBUG) */
} dsm_coll_choice_t;

/* The variant for one call: the forced one where it applies, else by
 * size from the crossovers; teams that span nodes run the direct path
 * over the members' paths (host memory only). Pure. */
dsm_coll_choice_t dsm_coll_plan(const dsm_coll_plan_in_t *in);

#endif /* DSM_COLL_PLAN_H */
