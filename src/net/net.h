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
#include "common/status.h"

/* [npes]: 1 for the PEs reached through the network. NULL while the job
 * has none (every PE maps every other), so the test on the RMA fast path is
 * one load and a branch that is never taken. */
extern unsigned char *dsm_net_remote;

static inline int dsm_net_pe(int pe)
{
    return DSM_UNLIKELY(dsm_net_remote != NULL) && dsm_net_remote[pe];
}

static inline int dsm_net_active(void)
{
    return dsm_net_remote != NULL;
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

/* Put len bytes from src (any local memory) to PE pe's copy of sym. nbi: 0
 * returns when src may be reused, 1 may return earlier (quiet completes). */
void dsm_net_put(const char *routine, void *sym, const void *src, size_t len,
                 int pe, int nbi);
/* Get len bytes of PE pe's copy of sym into dst. nbi: complete at quiet. */
void dsm_net_get(const char *routine, void *dst, const void *sym, size_t len,
                 int pe, int nbi);
/* One AMO (op: a dsm_amo_op_t, amo.h) on the size-byte (4 or 8) word at
 * sym on PE pe. Fetching forms return with *fetched set; the others are
 * put-like: ordered by fence, complete at quiet. */
void dsm_net_amo(const char *routine, int op, void *sym, size_t size,
                 const void *val, const void *cmp, void *fetched, int pe);
/* Every network operation this PE issued is complete (puts and AMOs
 * visible at their targets). */
void dsm_net_quiet(void);
/* Reap completions and drive providers with manual progress. Cheap; waits
 * call it. */
void dsm_net_progress(void);

/* The 64-bit word sym on PE pe: store v (a signal or flag update that
 * must follow every earlier network write of this PE: quiets first). */
void dsm_net_signal(const char *routine, uint64_t *sym, uint64_t v, int add,
                    int pe);
/* Read the 64-bit word sym of PE pe (an atomic fetch). */
uint64_t dsm_net_load64(const char *routine, const uint64_t *sym, int pe);

#endif /* DSM_NET_H */
