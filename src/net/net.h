/*
 * The inter-node data path: PEs this PE cannot map (another node, or every
 * other PE under SHMEM_FORCE_NETWORK=1) are reached through libfabric
 * (src/net/ofi.c): an RDM endpoint with FI_RMA and FI_ATOMIC, the heap
 * (with the runtime's internal area) and the static data registered, puts
 * and gets as fi_write/fi_read, AMOs as fi_atomic/fi_fetch_atomic/
 * fi_compare_atomic; where the provider's atomics are software at the
 * target (tcp, sockets), AMOs on this PE's own words by the CPU and
 * non-fetching AMOs to a peer in batches (ofi_agg.c).
 *
 * Addresses: every routine here takes a symmetric address as seen in THIS
 * process (my copy of the object) and applies the operation to PE pe's copy;
 * the module turns it into (segment, offset) and the peer's registration.
 *
 * User RMA, AMOs and signals (put, get, amo, signal with internal 0) must
 * address the user part of a segment: the runtime's internal area after
 * the user heap fails with the same one-line error as for a PE on this
 * node. The runtime's own signals (internal 1: team and barrier words in
 * the internal area) and load64 may reach it.
 *
 * Layering: src/net uses only src/common (test/layers). What it needs of
 * the runtime comes in through dsm_net_config_t at dsm_net_init: the job's
 * layout, the bootstrap's put/fence/get for the address exchange, the
 * segments to register, the settings (SHMEM_OFI_*, read by
 * the runtime's environment table) and callbacks for what stays in the
 * runtime (fatal errors, the bad-address line, waiting).
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

/* A symmetric segment as the network sees it: [base, base + size) is the
 * user part (user RMA, AMOs and signals stay inside it), [base, base +
 * map_size) what is registered, the runtime's internal area after the user
 * part included (its own signals, load64, quiet's flush reads). */
typedef struct dsm_net_seg {
    char *base; /* this PE's copy; NULL: none */
    size_t size;
    size_t map_size;
} dsm_net_seg_t;

/* The segments registered: the heap (with the internal area; quiet's flush
 * reads read the internal area's first 8 bytes, base + size), then the
 * static data. */
#define DSM_NET_NSEG 2

/* The address exchange: the bootstrap's put, fence and get (boot/boot.h's
 * dsm_boot_ops_t; the network calls them only at init). */
typedef struct dsm_net_exchange {
    dsm_status_t (*put)(const char *key, const void *val, size_t len);
    dsm_status_t (*fence)(void);
    dsm_status_t (*get)(int rank, const char *key, void *val, size_t *len);
} dsm_net_exchange_t;

/* What the network takes from the runtime at init. Copied: the pointers
 * in it (mapped, strings) must stay valid until dsm_net_fini. */
typedef struct dsm_net_config {
    int me, npes;
    int node_size, num_nodes;         /* PEs on this node, nodes in the job */
    int node_id;                      /* this PE's node (its own rank under
                                       * SHMEM_FORCE_NETWORK): who watches
                                       * whom (ofi_live.c) */
    dsm_net_exchange_t exchange;      /* the bootstrap's put/fence/get */
    char *const *mapped;              /* [npes]: non-NULL for the PEs whose
                                       * heap is mapped here; the others are
                                       * reached through the network */
    dsm_net_seg_t segs[DSM_NET_NSEG]; /* heap, static */
    dsm_net_seg_t device;             /* the device heap (size 0: none):
                                       * never registered; addresses in it
                                       * fail with their own line */
    int thread_multiple;              /* SHMEM_THREAD_MULTIPLE */
    /* Settings (the runtime's environment table). */
    const char *provider;   /* SHMEM_OFI_PROVIDER: a name, or "auto" */
    const char *domain;     /* SHMEM_OFI_DOMAIN: a name, or "auto" */
    int force_network;      /* SHMEM_FORCE_NETWORK */
    long progress_us;       /* SHMEM_OFI_PROGRESS_US (-1: pick) */
    long ctx_eps;           /* SHMEM_OFI_CTX_EPS: endpoints that
                             * contexts may open besides the default
                             * context's (0: all share it) */
    const char *completion; /* SHMEM_OFI_COMPLETION: auto, delivery, read */
    const char *fence;      /* SHMEM_OFI_FENCE: auto, quiet, target
                             * (NULL: auto) */
    long peer_timeout_s;    /* SHMEM_PEER_TIMEOUT: a peer on another node
                             * silent this long ends the job; 0 = never */
    /* The job's secret as the launcher handed it (common.h
     * DSM_JOB_SECRET_ENV, 32 hex digits), or NULL: then PE 0 makes one and
     * the others take it from the bootstrap's store. */
    const char *secret;
    /* What stays in the runtime. fatal: print "routine: message" and end
     * the job; bad_addr: the one-line error for an address that is not
     * symmetric (or not reachable, or past its segment's end) on pe; wait:
     * return once cond(arg) holds, progressing meanwhile; if it lasts and
     * the PE is ended, describe(darg) says what it waited for after the
     * routine the program called (runtime/stall.h). */
    void (*fatal)(const char *routine, const char *fmt, ...)
        DSM_PRINTF(2, 3) DSM_NORETURN;
    void (*bad_addr)(const char *routine, const void *addr, size_t len,
                     int pe) DSM_NORETURN;
    void (*wait)(const char *routine,
                 void (*describe)(const void *, char *, size_t),
                 const void *darg, int (*cond)(void *), void *arg);
} dsm_net_config_t;

/* After the segments exist (collective over the job; uses the bootstrap).
 * Does nothing when every PE is mapped; otherwise opens the provider or
 * prints one line saying which provider lacked what and what to set. */
dsm_status_t dsm_net_init(const dsm_net_config_t *cfg);
void dsm_net_fini(void);
/* Finalize, before the bootstrap's last barrier (after which peers close
 * their endpoints): this PE stops watching its peers' heartbeats. */
void dsm_net_quiesce(void);
/* "tcp;ofi_rxm" etc., or NULL when the network is not in use. */
const char *dsm_net_provider(void);
/* One line for SHMEM_INFO: the provider, how quiet completes writes
 * (delivery-complete, or reads ordered after writes), how a signal follows
 * data; NULL when the network is not in use. */
const char *dsm_net_describe(void);
/* This PE's libfabric domain and how it was chosen ("eth1 (auto: nearest
 * NIC eth1)", "lo (loopback: ...)", "mlx5_0 (SHMEM_OFI_DOMAIN)"): each PE
 * may take another, so SHMEM_INFO prints it on every PE's placement line.
 * NULL when the network is not in use. */
const char *dsm_net_domain(void);
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
 * peer targets), which NULL also names; otherwise new accounts on one of
 * at most 1 + ctx_eps endpoints (a new one while fewer are open, else the
 * least shared), or NULL when the provider cannot open one
 * (shmem_ctx_create then fails). DSM_NET_CTX_SHARED: several threads may use it at once
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
/* Every network operation of nc to PE pe is complete (shmem_pe_quiet);
 * those of nc to other PEs stay in flight. */
void dsm_net_flush(dsm_net_ctx_t *nc, int pe);
/* Later puts and AMOs of nc to a PE are placed after earlier ones
 * (shmem_fence). Free where the provider orders writes; otherwise the
 * next write to each PE written before the fence is ordered behind that
 * PE's earlier writes (a wait for that PE only), and a fence
 * itself waits for nothing (SHMEM_OFI_FENCE). */
void dsm_net_fence(dsm_net_ctx_t *nc);
/* Reap completions and drive providers with manual progress. Cheap; waits
 * call it. */
void dsm_net_progress(void);

/* The 64-bit word sym on PE pe: store v, or add v (add != 0), after every
 * earlier network write of nc to pe (data before signal). internal 0: a
 * user signal word, which must be in the user part of a segment; 1: the
 * runtime's (team, barrier), which may be in the internal area. */
void dsm_net_signal(dsm_net_ctx_t *nc, const char *routine, uint64_t *sym,
                    uint64_t v, int add, int pe, int internal);
/* Read the 64-bit word sym of PE pe (an atomic fetch). */
uint64_t dsm_net_load64(const char *routine, const uint64_t *sym, int pe);

#endif /* DSM_NET_H */
