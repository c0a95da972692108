/*
 * The node layout of a job (which PEs share a node) computed from what a
 * process manager answered, as a pure function: no PMIx call, no global
 * state, so test/unit/node_layout feeds it the answers of every server we
 * meet (Open MPI 4.1 and 5, Slurm's pmix plugin) and of broken ones.
 *
 * Servers differ in what they answer for ranks on other nodes: Open MPI
 * 4.1 gives PMIX_NODEID only for the caller's node but PMIX_HOSTNAME for
 * every rank; PRRTE (Open MPI 5) and Slurm give both and the node map. So
 * every source is optional and the first complete one wins, in this order:
 *   1. the node map (PMIX_NODE_MAP resolved into the ranks of each node:
 *      PMIx_Resolve_nodes + PMIx_Resolve_peers), when it places every rank
 *      exactly once;
 *   2. PMIX_HOSTNAME, when every rank has one;
 *   3. PMIX_NODEID, when every rank has one;
 * and when none is complete the bootstrap exchanges each PE's own host
 * name and calls again with (2). The result is then checked against what
 * the server says of the caller's own node: PMIX_LOCAL_PEERS (the same
 * set of ranks), PMIX_LOCAL_SIZE (the same count), PMIX_LOCAL_RANK (below
 * it). A disagreement is an error, never a guess: PEs that disagree about
 * who shares memory would map the wrong segments.
 *
 * Node ids are dense, 0..num_nodes-1, numbered by the lowest rank on each
 * node (node 0 holds rank 0); a node rank is the index among the node's PEs
 * in rank order. Every PE computes the same layout from the same job data.
 */
#ifndef DSM_BOOT_NODE_LAYOUT_H
#define DSM_BOOT_NODE_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "boot/boot.h"

typedef struct dsm_node_answers {
    int size; /* PEs in the job */
    int me;   /* the caller's rank */
    /* The node map: map_nodes nodes, node i holding map_count[i] ranks
     * map_ranks[i][0..]. map_nodes 0: not known. */
    int map_nodes;
    const int *map_count;
    const int *const *map_ranks;
    /* PMIX_HOSTNAME of every rank (entries NULL where not known), or NULL. */
    const char *const *host;
    /* PMIX_NODEID of every rank (-1 where not known), or NULL. */
    const int64_t *nodeid;
    /* What the server says of the caller's node: PMIX_LOCAL_PEERS (a comma
     * list of ranks, "a-b" ranges allowed), or NULL; PMIX_LOCAL_SIZE and
     * PMIX_LOCAL_RANK, or -1. */
    const char *local_peers;
    int local_size;
    int local_rank;
} dsm_node_answers_t;

/* The source a layout was built from. */
typedef enum dsm_node_source {
    DSM_NODES_NONE = 0, /* no complete source: exchange host names */
    DSM_NODES_MAP,
    DSM_NODES_HOST,
    DSM_NODES_ID,
} dsm_node_source_t;

/* "node map", "PMIX_HOSTNAME", ... for diagnostics. */
const char *dsm_node_source_name(dsm_node_source_t s);

/* Fills node_of[0..size-1] with each rank's dense node id and info's
 * node_rank, node_size, node_id and num_nodes (rank and size are left as
 * they are); *src says which answer was used. Returns DSM_OK;
 * DSM_ERR_NOT_FOUND when no source is complete (nothing written to err);
 * DSM_ERR_INVAL with one line in err (no trailing newline) when the layout
 * contradicts what the server says of the caller's node; DSM_ERR_NOMEM. */
dsm_status_t dsm_node_layout(const dsm_node_answers_t *a, int *node_of,
                             dsm_boot_info_t *info, dsm_node_source_t *src,
                             char *err, size_t errlen);

/* Parses a PMIX_LOCAL_PEERS list ("0,3,5-7") into a sorted, deduplicated
 * array of ranks below size; *out is malloc'ed (free it). Returns the
 * count, or -1 when the list is malformed or names a rank out of range. */
int dsm_node_parse_ranks(const char *list, int size, int **out);

#endif /* DSM_BOOT_NODE_LAYOUT_H */
