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
 * User RMA and AMOs (put, get, amo) must address the user part of a
 * segment: the runtime's internal area after the user heap fails with the
 * same one-line error as for a PE on this node. Signals and load64 are the
 * runtime's (team and barrier words in the internal area) and may.
 *
 * Completion: every operation is counted by its context; quiet waits until
 * none of the context's is outstanding, and writes are posted with
 * FI_DELIVERY_COMPLETE where the provider offers it (else quiet reads from
 * each PE written, the provider ordering reads after writes), so a
 * completed put is visible at the target. Data-before-signal ordering: a
 * signal goes out only after the writes of its context to its PE complete,
 * unless the provider places writes in order.
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
/* One line for SHMEM_INFO: the provider, how quiet completes writes
 * (delivery-complete, or reads ordered after writes), how a signal follows
 * data; NULL when the network is not in use. */
const char *dsm_net_describe(void);
/* 1 when the provider places RMA and atomic writes to a PE in the order
 * they were posted (FI_ORDER_WAW, any size): fence and data-before-signal
 * then need no completion wait. */
int dsm_net_ordered(void);

/* Per-context network state: each shmem context has its own, so that its
 * quiet waits only for its own operations (NULL: the default context's).
 * Created by the path table when a context is created, only while the job
 * uses the network. */
typedef struct dsm_net_ctx dsm_net_ctx_t;
/* DSM_NET_CTX_DEFAULT: the default context's state (the endpoint every
 * peer targets), which NULL also names; otherwise a new endpoint with its
 * own counters, or NULL when the provider cannot open one (shmem_ctx_create
 * then fails). DSM_NET_CTX_SHARED: several threads may use it at once
 * (SHMEM_THREAD_MULTIPLE without SHMEM_CTX_PRIVATE/SERIALIZED): posting
 * and quiet then take its lock, which makes quiet exact among threads. */
#define DSM_NET_CTX_DEFAULT 1
#define DSM_NET_CTX_SHARED 2
dsm_net_ctx_t *dsm_net_ctx_create(int flags);
/* Completes nc's operations first; the default context's state stays. */
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
