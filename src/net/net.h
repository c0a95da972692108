/*
 * The inter-node data path: PEs this PE cannot map (another node, or every
 * other PE under SHMEM_FORCE_NETWORK=1) are reached through libfabric
 * (src/net/ofi.c): an RDM endpoint with FI_RMA and FI_ATOMIC, the heap
 * (with the runtime's internal area) and the static data registered, puts
 * and gets as fi_write/fi_read, AMOs as fi_atomic/fi_fetch_atomic/
 * fi_compare_atomic.
 *
 * Addresses: every routine here takes a symmetric address as seen in THIS
 * process (my copy of the object) and applies the operation to PE pe's copy;
 * the module turns it into (segment, offset) and the peer's registration.
 *
 * Completion: every operation is posted with a completion; quiet waits until
 * none is outstanding, and writes are posted with FI_DELIVERY_COMPLETE where
 * the provider offers it, so a completed put is visible at the target.
 * Data-before-signal ordering: a signal goes out only after a quiet.
 */
#ifndef DSM_NET_H
#define DSM_NET_H

#include <stddef.h>
#include <stdint.h>

#include "common/common.h"
#include "common/amo_op.h"
#include "common/status.h"

/* [npes]: 1 for the PEs reached through the network; NULL while the job
 * has none. Read through dsm_net_reaches by the path table
 * (runtime/path.c), which is the only place that asks. */
extern unsigned char *dsm_net_remote;

static inline int dsm_net_reaches(int pe)
{
    return dsm_net_remote != NULL && dsm_net_remote[pe];
}

/* After the segments exist (collective over the job; uses the bootstrap).
 * Does nothing when every PE is mapped; otherwise opens the provider or
 * prints one line saying which provider lacked what and what to set. */
dsm_status_t dsm_net_init(void);
void dsm_net_fini(void);
/* "tcp;ofi_rxm" etc., or NULL when the network is not in use. */
const char *dsm_net_provider(void);
/* 1 when the provider places RMA and atomic writes to a PE in the order
 * they were posted (FI_ORDER_WAW, any size): fence and data-before-signal
 * then need no completion wait. */
int dsm_net_ordered(void);

/* Per-context network state: each shmem context has its own, so that its
 * quiet waits only for its own operations (NULL: the default context's).
 * Created by the path table when a context is created, only while the job
 * uses the network. */
typedef struct dsm_net_ctx dsm_net_ctx_t;
dsm_net_ctx_t *dsm_net_ctx_create(void);
void dsm_net_ctx_destroy(dsm_net_ctx_t *nc);

/* Put len bytes from src (any local memory) to PE pe's copy of sym. nbi: 0
 * returns when src may be reused, 1 may return earlier (quiet completes). */
void dsm_net_put(dsm_net_ctx_t *nc, const char *routine, void *sym,
                 const void *src, size_t len, int pe, int nbi);
/* Get len bytes of PE pe's copy of sym into dst. nbi: complete at quiet. */
void dsm_net_get(dsm_net_ctx_t *nc, const char *routine, void *dst,
                 const void *sym, size_t len, int pe, int nbi);
/* One AMO (op: a dsm_amo_op_t, common/amo_op.h) on the size-byte (4 or 8)
 * word at sym on PE pe. Fetching forms return with *fetched set; the
 * others are put-like: ordered by fence, complete at quiet. */
void dsm_net_amo(dsm_net_ctx_t *nc, const char *routine, int op, void *sym,
                 size_t size, const void *val, const void *cmp, void *fetched,
                 int pe);
/* Every network operation of nc is complete (puts and AMOs visible at their
 * targets). */
void dsm_net_quiet(dsm_net_ctx_t *nc);
/* Every network operation of nc to PE pe is complete (shmem_pe_quiet). */
void dsm_net_flush(dsm_net_ctx_t *nc, int pe);
/* Later operations of nc to a PE are placed after earlier ones (shmem_fence). */
void dsm_net_fence(dsm_net_ctx_t *nc);
/* Reap completions and drive providers with manual progress. Cheap; waits
 * call it. */
void dsm_net_progress(void);

/* The 64-bit word sym on PE pe: store v, or add v (add != 0), after every
 * earlier network write of nc to pe (data before signal). */
void dsm_net_signal(dsm_net_ctx_t *nc, const char *routine, uint64_t *sym,
                    uint64_t v, int add, int pe);
/* Read the 64-bit word sym of PE pe (an atomic fetch). */
uint64_t dsm_net_load64(const char *routine, const uint64_t *sym, int pe);

#endif /* DSM_NET_H */
