/*
 * The DMA command layer.
 *
 * Commands (COPY, BCAST, SWAP, WAIT, SIGNAL, SIGNAL_ADD) are appended to
 * queues; one queue is executed in order by one engine; a producer rings one
 * doorbell per batch; an engine reports completion as a monotonic sequence
 * number per queue. A chain is a command list that starts with WAIT on a
 * trigger word, posted ahead of need and fired by one store.
 *
 * Two ways in:
 *  - dsm_sdma_request(): any application thread hands one command to the
 *    host proxy through a lock-free ring; the proxy (or a thread that waits
 *    and lends a hand, see dsm_sdma_progress) moves requests into the
 *    engines' queues, one doorbell per queue per batch.
 *  - dsm_sdma_post(): a caller that owns a queue (collectives) appends a
 *    whole chain and rings its doorbell itself.
 *
 * Nothing here knows OpenSHMEM: PEs, contexts and teams are the runtime's.
 * Backends (cpu, cuda, hsa) live behind dsm_sdma_backend_ops_t (backend.h).
 */
#ifndef DSM_SDMA_H
#define DSM_SDMA_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "common/backoff.h"
#include "common/common.h"

typedef enum {
    DSM_CMD_NOP = 0,
    DSM_CMD_COPY,       /* dst := src, len bytes */
    DSM_CMD_BCAST,      /* dst := src and dst2 := src, len bytes */
    DSM_CMD_SWAP,       /* exchange len bytes of src and dst in place */
    DSM_CMD_WAIT,       /* block this queue until *word >= value */
    DSM_CMD_SIGNAL,     /* *word := value, after every earlier command */
    DSM_CMD_SIGNAL_ADD, /* *word += value (atomic), after every earlier one */
    DSM_CMD_LAST
} dsm_cmd_op_t;

typedef struct dsm_cmd {
    uint8_t op;
    uint8_t flags;
    uint16_t reserved;
    uint32_t len_hi; /* unused; keeps the union 8-byte aligned */
    union {
        struct {
            const void *src;
            void *dst;
            void *dst2;
            size_t len;
        } copy;
        struct {
            uint64_t *word;
            uint64_t value;
        } sig;
    } u;
    /* Sleepers to wake once this command has taken effect: the engine wake
     * word and the application wake word of the process whose memory it
     * wrote (signals, triggers), or NULL (plain data). */
    dsm_wake_t *wake;
    dsm_wake_t *wake_app;
    /* Counter incremented by one when the command is retired (a context's
     * completion count), or NULL. */
    uint64_t *done;
} dsm_cmd_t;

typedef struct dsm_sdma dsm_sdma_t;
typedef struct dsm_sdma_queue dsm_sdma_queue_t;

/* Per-queue counters for SHMEM_SDMA_STATS. Times in nanoseconds:
 * control = building and appending commands, schedule = ringing doorbells,
 * copy = engines executing commands, sync = completions reaching the host. */
typedef struct dsm_sdma_stats {
    uint64_t commands;
    uint64_t batches;
    uint64_t requests;
    uint64_t ns_control;
    uint64_t ns_schedule;
    uint64_t ns_copy;
    uint64_t ns_sync;
} dsm_sdma_stats_t;

struct dsm_sdma_queue {
    /* Producer side: appends under lock, then rings the doorbell. */
    pthread_mutex_t lock;
    dsm_cmd_t *ring;
    uint64_t depth; /* power of two */
    uint64_t tail;  /* next sequence number to fill (under lock) */
    /* Doorbell: commands below this sequence number belong to the engine. */
    uint64_t submitted DSM_ALIGNED_CL;
    /* Commands below this sequence number have completed (backend writes). */
    uint64_t completed DSM_ALIGNED_CL;
    /* Commands below this one were retired: slots free, done counters
     * bumped (progress lock holders write). */
    uint64_t retired DSM_ALIGNED_CL;
    int index;  /* in sdma->queues[] */
    int engine; /* engine that executes it */
    int chain;  /* 1 when gated chains may be posted here (never RMA) */
    dsm_sdma_t *sdma;
    void *priv; /* backend state */
    dsm_sdma_stats_t stats;
};

typedef struct dsm_sdma_backend_ops dsm_sdma_backend_ops_t;

/* Capability bits reported by a backend. */
#define DSM_SDMA_CAP_BCAST_NATIVE (1u << 0) /* BCAST is one engine command */
#define DSM_SDMA_CAP_SWAP_NATIVE (1u << 1)  /* SWAP is one engine command */
#define DSM_SDMA_CAP_HOST_MEM (1u << 2)     /* engines reach host memory */
#define DSM_SDMA_CAP_DEVICE_MEM (1u << 3)   /* engines reach device memory */
#define DSM_SDMA_CAP_INLINE_HELP (1u << 4)  /* a waiting thread may execute */
#define DSM_SDMA_CAP_SIGNAL_ADD (1u << 5)   /* SIGNAL_ADD without a kernel */
/* The backend's engine threads take the proxy's role (drain requests,
 * retire), so no separate proxy thread is needed. */
#define DSM_SDMA_CAP_ENGINE_PROXY (1u << 6)
/* Posted commands stay in the ring until executed, so work no engine has
 * started can still be rewritten (dsm_sdma_queue_cancel). */
#define DSM_SDMA_CAP_CANCEL (1u << 7)
/* A thread that hands in a request may move the request ring into the
 * queues itself when nobody else is doing so (dsm_sdma_request), rather
 * than wait for the proxy thread to pick it up: worth it where a doorbell
 * is a driver call that the caller would otherwise wait for across two
 * thread hand-offs (cuda). */
#define DSM_SDMA_CAP_CALLER_SUBMIT (1u << 8)
/* The backend is better served without a proxy thread by default: its
 * doorbells are posted by the thread that waits (quiet, a blocking put,
 * a collective), and a proxy thread polling beside it only costs (cuda,
 * measured on H200: docs/PERFORMANCE.md). SHMEM_SDMA_PROXY=1 still
 * starts one. */
#define DSM_SDMA_CAP_NO_PROXY (1u << 9)
/* The engines are threads on the node's CPU cores (cpu backend): they
 * compete with the PEs for cores and add bandwidth only where cores are
 * to spare. */
#define DSM_SDMA_CAP_HOST_CORES (1u << 10)
/* A chain posted ahead and waiting for its trigger can hold up work of
 * the program on the same GPU until it runs (cuda: a gated stream of the
 * program's context; cudaDeviceSynchronize and a copy on the legacy
 * stream wait for it, shmemx_req(3)). */
#define DSM_SDMA_CAP_GATES_HOLD (1u << 11)

typedef struct dsm_sdma_config {
    int engines;        /* engines (queues for RMA) per process */
    uint64_t depth;     /* commands per queue */
    uint64_t req_depth; /* proxy request ring entries */
    int stats;          /* collect phase timings */
    int proxy_thread;   /* 1 start the proxy thread, 0 never, -1 as the
                         * backend prefers (not with ENGINE_PROXY or
                         * NO_PROXY) */
    dsm_wake_t *wake;   /* this process's engine wake word (doorbells) */
    dsm_wake_t *app_wake; /* this process's waiters (notified on completion) */
    const char *backend; /* NULL/"auto" or a backend name */
    /* Where set (the runtime's dsm_rt_wait_in), the layer's waits for its
     * engines in a program's thread go through it: a queue's commands
     * retired (dsm_sdma_queue_wait) and room in the full request ring
     * (dsm_sdma_request); describe(darg) says which, for the line of a PE
     * ended while it waits (runtime/stall.h). NULL: the layer's own
     * backoff. (dsm_sdma_post's wait for room in a full queue stays a
     * yield: the device API's proxy thread posts too.) */
    void (*wait)(const char *routine,
                 void (*describe)(const void *, char *, size_t),
                 const void *darg, int (*cond)(void *), void *arg);
} dsm_sdma_config_t;

/* Open the layer: pick a backend, create cfg->engines RMA queues, start the
 * engines and the proxy thread. */
dsm_status_t dsm_sdma_open(const dsm_sdma_config_t *cfg, dsm_sdma_t **out);
/* Wait for everything issued, stop threads, print stats if asked. */
void dsm_sdma_close(dsm_sdma_t *s, int rank);
const char *dsm_sdma_backend_name(const dsm_sdma_t *s);
/* The backend's line for SHMEM_INFO, or NULL when it has none. */
const char *dsm_sdma_describe(const dsm_sdma_t *s);
uint32_t dsm_sdma_caps(const dsm_sdma_t *s);
int dsm_sdma_num_engines(const dsm_sdma_t *s);

/* Extra queues for gated chains (collectives): one per engine asked for.
 * WAIT commands block only their own queue. */
dsm_status_t dsm_sdma_queue_create(dsm_sdma_t *s, int engine,
                                   dsm_sdma_queue_t **out);
/* Queues a process may have open at once (RMA and chain queues together;
 * dsm_sdma_queue_create fails with DSM_ERR_OVERFLOW past it). */
int dsm_sdma_max_queues(void);

/* Hand one command to the proxy for RMA queue `engine`. Lock-free, callable
 * from any thread; blocks (helping progress) only when the ring is full. */
void dsm_sdma_request(dsm_sdma_t *s, int engine, const dsm_cmd_t *cmd);

/* Append n commands to q and ring its doorbell once. Returns the sequence
 * number after the last one (wait for it with dsm_sdma_queue_wait). */
uint64_t dsm_sdma_post(dsm_sdma_queue_t *q, const dsm_cmd_t *cmds, size_t n);

/* Move requests to queues, ring doorbells, retire completions. help = 1
 * when the caller is a thread waiting for a result, who may execute queued
 * commands itself if the backend allows (cpu) rather than sleep. Returns
 * nonzero if anything moved. */
int dsm_sdma_progress(dsm_sdma_t *s, int help);

/* Wait until q completed everything below seq (and retired it). */
void dsm_sdma_queue_wait(dsm_sdma_queue_t *q, uint64_t seq);
/* Completed sequence of q, without waiting. */
uint64_t dsm_sdma_queue_completed(dsm_sdma_queue_t *q);
/* Completed sequence of q after letting the calling thread execute what is
 * runnable in q itself, where the backend allows (cpu). Cheaper than
 * dsm_sdma_progress for a waiter that cares about one queue. */
uint64_t dsm_sdma_queue_help(dsm_sdma_queue_t *q);
/* Turn every command of q after the one the engine is blocked on into a
 * NOP. Only for a queue parked at a WAIT that nothing will satisfy yet (an
 * unfired gated chain); the caller then satisfies that WAIT so the queue
 * drains without effect. DSM_ERR_UNSUPPORTED when the backend has already
 * handed the commands to hardware (no DSM_SDMA_CAP_CANCEL). */
dsm_status_t dsm_sdma_queue_cancel(dsm_sdma_queue_t *q);

/* Fire a trigger: the store that starts chains waiting on word. */
void dsm_sdma_trigger(dsm_sdma_t *s, uint64_t *word, uint64_t value,
                      dsm_wake_t *wake);

/* ---- GPU memory: the device side of a GPU backend ----
 * A backend that drives a GPU's engines (cuda; hsa) also owns that GPU's
 * memory: the device heap, which pointers are device memory, host memory
 * registered for its engines, synchronous copies, the stream operations of
 * the on-stream API. The runtime reaches them only through this table
 * (src/runtime/gpu.c), never through a backend's own header. */
typedef struct dsm_sdma_gpu_settings {
    int local_rank;     /* the PE's GPU is local_rank modulo the GPU count */
    long device;        /* ... unless >= 0 (SHMEM_CUDA_DEVICE) */
    long batch_min;     /* runs of at least this many copies go through one
                         * batched call (SHMEM_CUDA_BATCH_MIN) */
    int prefer_ce;      /* keep batched copies on the copy engines
                         * (SHMEM_CUDA_PREFER_CE) */
    int coalesce;       /* hold back plain-copy doorbells while the stream
                         * runs (SHMEM_CUDA_COALESCE) */
    int merge;          /* merge adjacent copies of a run (SHMEM_CUDA_MERGE) */
    long graph_copies;  /* copy runs of chain queues replayed from cached
                         * graphs, entries per queue (SHMEM_CUDA_GRAPH_COPIES) */
    int count_launches; /* count the library's kernel and host-function
                         * launches (SHMEM_CUDA_COUNT_LAUNCHES) */
    const char *hsa_library; /* hsa backend: hsa-runtime64 (or the engine
                              * model) to load (SHMEM_HSA_LIBRARY) */
    long hsa_max_queues;     /* hsa backend: SDMA queues per process, 0 =
                              * no cap (SHMEM_HSA_MAX_QUEUES) */
    long hsa_sdma_engine;    /* hsa backend: the engine id of every SDMA
                              * queue, -1: the driver's choice
                              * (SHMEM_HSA_SDMA_ENGINE) */
} dsm_sdma_gpu_settings_t;

/* ---- Device-initiated requests (the device API, issue #12) ----
 * GPU threads write requests into a FIFO of slots in pinned host memory;
 * a proxy thread turns what is pending into one batch of commands on a
 * queue of its own (COPY, SIGNAL), followed by SIGNAL(complete := number
 * of slots done), so the kernel sees completion in a device word written
 * by the engine's stream. Slot layout (the public header shmemx_cuda.h
 * has the same one): dst, src, len, then ctl = lap << 32 | op, stored
 * last; lap = slot's ticket / slots + 1, so a slot is fresh when its lap
 * is the one expected and no tail pointer is shared. */
typedef struct dsm_sdma_devreq {
    uint64_t dst, src, len, ctl;
} dsm_sdma_devreq_t;
#define DSM_SDMA_DEVREQ_COPY 1u
#define DSM_SDMA_DEVREQ_SIGNAL 2u
/* Work for the CPU (dst: what, src: its argument; e.g. start a persistent
 * collective): the proxy runs host_op once every earlier slot is done,
 * and counts the slot complete when host_op has returned. */
#define DSM_SDMA_DEVREQ_HOST 3u
/* Flag bit on COPY and SIGNAL: the next ticket follows at once and goes
 * in the same submission (shmemx_cuda.h's SHMEMX_DEV_OP_MORE). */
#define DSM_SDMA_DEVREQ_MORE 0x100u
typedef struct dsm_sdma_devfifo_config {
    uint64_t slots;     /* power of two */
    long spin_us;       /* the proxy polls without sleeping this long after
                         * the last request, then sleeps in growing steps */
    uint64_t *complete; /* device word: slots done (written by the stream) */
    void (*host_op)(uint64_t what, uint64_t arg); /* DSM_SDMA_DEVREQ_HOST */
    /* Called on every pass of the proxy (may be NULL): posts the next
     * instances of kernel-triggered persistent requests. Returns nonzero
     * while such a request is in use, which keeps the proxy polling
     * rather than sleeping. */
    int (*poll_op)(void);
    /* A stall (SHMEM_DEV_STALL_TIMEOUT): no progress for stall_ns (0:
     * never checked); fatal ends the job after printing the line. */
    uint64_t stall_ns;
    void (*fatal)(const char *routine, const char *msg);
} dsm_sdma_devfifo_config_t;
typedef struct dsm_sdma_devfifo {
    uint64_t fifo;     /* GPU address of the slots */
    uint64_t consumed; /* GPU address of the count of slots taken */
} dsm_sdma_devfifo_t;

/* The largest handle blob heap_create_handle may give (below). */
#define DSM_SDMA_HEAP_HANDLE_MAX 64

/* One on-stream collective of small blocks (gpu ops' small_coll_on_stream):
 * out[ph * np + i] is peer i's word [ph][me] and in[ph * np + i] my word
 * [ph][peer i], as mapped here (phase 0 then 1, as exchange_on_stream
 * takes them); nc copies dst[c] <- src[c] of len[c] bytes; pe[i] and me
 * name the PEs and routine the call (0 fcollect, 1 alltoall) in the line
 * a wait that stalls for stall_ns prints; gpu_scope: every peer runs on
 * this GPU (PEs sharing it), so fences need not reach past it where the
 * blocks are GPU memory. */
#define DSM_SDMA_SMALL_COLL_PEERS 8
typedef struct dsm_sdma_small_coll {
    uint64_t *const *out, *const *in;
    size_t np;
    void *const *dst;
    const void *const *src;
    const size_t *len;
    size_t nc;
    const int *pe;
    int me, routine, gpu_scope;
    uint64_t stall_ns;
} dsm_sdma_small_coll_t;

/* One on-stream collective in the LL form (gpu ops' ll_coll_on_stream;
 * src/coll/stream.c has the protocol): np peers (at most
 * DSM_SDMA_SMALL_COLL_PEERS); out[i] my area in peer i's scratch, in[i]
 * peer i's area in mine (each two buffers of `stride` 16-byte lines, as
 * mapped here); src[i] my block for peer i, dst[i] peer i's block in my
 * dest; own_src -> own_dst my own block (own_dst NULL: in place);
 * parity my parity word of the team slot; nbytes per block; pe, me,
 * routine and stall_ns as above. */
typedef struct dsm_sdma_ll_coll {
    void *const *out, *const *in;
    const void *const *src;
    void *const *dst;
    const void *own_src;
    void *own_dst;
    uint64_t *parity;
    size_t np, nbytes, stride;
    const int *pe;
    int me, routine;
    uint64_t stall_ns;
} dsm_sdma_ll_coll_t;

typedef struct dsm_sdma_gpu_ops {
    const char *name;
    int (*active)(void); /* the GPU side opened (device and driver found) */
    int (*device)(void); /* the GPU's index */
    /* The GPU's identity on the node, the same in every process that uses
     * it whatever CUDA_VISIBLE_DEVICES says: its PCI address (domain << 32 |
     * bus << 16 | device << 8); 0 when unknown. */
    uint64_t (*uid)(void);
    dsm_status_t (*register_host)(void *p, size_t len);
    void (*unregister_host_all)(void);
    /* The device heap: create (size rounded up, an fd to share with local
     * peers), import a peer's fd, unmap. */
    dsm_status_t (*heap_create)(size_t *size, int *fd, void **base);
    dsm_status_t (*heap_import)(int fd, size_t size, void **base);
    void (*heap_unmap)(void *base);
    /* ... or, where the driver shares memory by a handle rather than an
     * fd (hsa: hsa_amd_ipc_memory_create), the same through an opaque
     * blob of at most DSM_SDMA_HEAP_HANDLE_MAX bytes that the runtime
     * exchanges over the bootstrap's put/get. A backend fills either
     * pair; the runtime uses this one when heap_create_handle is set.
     * heap_create_handle returns DSM_ERR_UNSUPPORTED, with why (one
     * line), where the GPU cannot give a device heap at all; the job
     * then runs without one. heap_unmap releases both kinds. */
    dsm_status_t (*heap_create_handle)(size_t *size, void *handle,
                                       size_t *handle_len, void **base,
                                       char *why, size_t whylen);
    dsm_status_t (*heap_import_handle)(const void *handle, size_t handle_len,
                                       size_t size, void **base);
    int (*ptr_is_device)(const void *p);
    /* Returns when the n bytes landed; not ordered with the program's
     * streams (the legacy one included: a copy on it can wait behind a
     * gated persistent instance for ever). */
    dsm_status_t (*copy_sync)(void *dst, const void *src, size_t n);
    /* The on-stream operations (stream: the caller's stream handle).
     * NULL where the backend has no streams (hsa): the on-stream routines
     * then fail the job with one line (dsm_rt_need_stream). */
    dsm_status_t (*memcpy_on_stream)(void *dst, const void *src, size_t n,
                                     void *stream);
    dsm_status_t (*signal_on_stream)(uint64_t *word, uint64_t value, int add,
                                     void *stream);
    dsm_status_t (*wait_on_stream)(uint64_t *word, uint64_t value, int eq,
                                   void *stream);
    dsm_status_t (*quiet_on_stream)(dsm_sdma_t *s, void *stream);
    dsm_status_t (*copies_on_stream)(void *const *dst,
                                     const void *const *src,
                                     const size_t *len, size_t n,
                                     void *stream);
    dsm_status_t (*exchange_on_stream)(uint64_t *const *out,
                                       uint64_t *const *in, size_t n,
                                       void *stream);
    /* An on-stream fcollect or alltoall of small blocks in one kernel of
     * one CTA: the two phases of exchange_on_stream (same words, same
     * constant values, so both forms mix on a team) with the copies
     * stored by the CTA between them. DSM_ERR_UNSUPPORTED where it cannot
     * (more peers than DSM_SDMA_SMALL_COLL_PEERS, a pointer the GPU
     * cannot reach, no kernel): the caller takes the engine path. NULL
     * where the backend has no such kernel. */
    dsm_status_t (*small_coll_on_stream)(const dsm_sdma_small_coll_t *c,
                                         void *stream);
    /* The same call in the LL form (dsm_sdma_ll_coll_t), one launch of
     * one CTA. DSM_ERR_UNSUPPORTED where a source is memory its kernel
     * cannot reach (nothing enqueued: the caller stages it and calls
     * again); any other failure is the job's end, since the peers take
     * this form too. NULL where the backend has no such kernel. */
    dsm_status_t (*ll_coll_on_stream)(const dsm_sdma_ll_coll_t *c,
                                      void *stream);
    /* SHMEM_CUDA_COUNT_LAUNCHES: 1 and the counts when counting. */
    int (*launch_counts)(uint64_t *kernels, uint64_t *host_fns);
    /* 1 when a kernel's first launch may wait for the work running on the
     * GPU (CUDA lazy module loading, as the driver reports it), so that a
     * kernel launched while engine work waits behind a trigger does not
     * return; NULL where the driver has no such mode. */
    int (*lazy_loading)(void);
    /* The GPU's address of p (device memory: p; registered host memory:
     * its mapping); 0 when the GPU cannot reach p. */
    uint64_t (*gpu_view)(const void *p);
    /* The same for a library word (common/words.h) that kernels read or
     * write: its page is pinned and mapped first; 0 when it cannot be.
     * NULL where kernels cannot trigger persistent requests (hsa). */
    uint64_t (*word_view)(uint64_t *w);
    /* n words of device memory, zeroed, for words kernels poll and
     * streams wait on (kernel handles of persistent requests); kept until
     * the backend closes, as a stream may wait on them (the caller reuses
     * them). NULL where it cannot. The host writes them with copy_sync. */
    uint64_t *(*dev_words)(size_t n);
    /* The device API's request FIFO and its proxy thread (above); both go
     * when the sdma layer closes. */
    dsm_status_t (*devfifo_open)(const dsm_sdma_devfifo_config_t *c,
                                 dsm_sdma_devfifo_t *out);
} dsm_sdma_gpu_ops_t;

/* Before dsm_sdma_open: the settings of every GPU backend built in. */
void dsm_sdma_gpu_configure(const dsm_sdma_gpu_settings_t *set);
/* The open backend's GPU memory, or NULL (no GPU backend open, or its GPU
 * side is not active). */
const dsm_sdma_gpu_ops_t *dsm_sdma_gpu(const dsm_sdma_t *s);

/* ---- Engine queues GPU kernels write themselves (HIP device API, #13) ----
 * The hsa backend gives the process one SDMA queue of its own whose ring
 * kernels fill with packets and whose doorbell they ring (shmemx_hip.h,
 * shmemx_sdma_pkt.h): no host proxy. Addresses are the GPU's. Built with
 * the hsa backend only (DSM_HAVE_HSA); both calls refuse (DSM_ERR_
 * UNSUPPORTED, why filled with one line) where s is another backend or
 * the hsa backend runs hsa_amd_memory_async_copy (no queues). */
typedef struct dsm_sdma_devq {
    uint64_t ring;    /* the queue's dsm_sdma_ring_t (producers' words) */
    uint64_t done;    /* dword the completion FENCEs write */
    uint64_t table;   /* table_bytes of zeroed memory for the caller */
    void *table_host; /* ... as the host writes it */
} dsm_sdma_devq_t;
/* Create the queue (once per open layer; later calls return it). */
dsm_status_t dsm_sdma_devq_open(dsm_sdma_t *s, size_t table_bytes,
                                dsm_sdma_devq_t *out, char *why,
                                size_t whylen);
/* Make [p, p + len) reachable by the queue's engine and the GPU until s
 * closes; *gpu = the GPU's address of p. */
dsm_status_t dsm_sdma_devq_map(dsm_sdma_t *s, const void *p, size_t len,
                               uint64_t *gpu, char *why, size_t whylen);

#endif /* DSM_SDMA_H */
