/*
 * What the hsa backend's files share (never included outside src/sdma/hsa
 * but by its white-box test, test/hsa/pkt.c). First its view of ROCm: the
 * entry points it takes at run time from hsa-runtime64 and the thunk
 * (hsaKmt*), so that one build runs with or without ROCm (the headers give
 * types and constants only; nothing is linked). The engine model
 * (test/hsa/model.c) exports the same names. Then the backend's state and
 * the calls between its files, one idea per file:
 *   load.c        dlopen of hsa-runtime64 and the thunk (dsm_hsa_api_t)
 *   hsa.c         the backend ops: probe, open/close, the SDMA queues of
 *                 the layer (creation, the SHMEM_HSA_MAX_QUEUES cap, the
 *                 engine choice), the event thread, SHMEM_INFO's line
 *   hsa_submit.c  commands into SDMA packets on a queue's ring, doorbells,
 *                 completions (submit and poll)
 *   hsa_async.c   the hsa_amd_memory_async_copy fallback where no SDMA
 *                 queue can be created
 *   hsa_mem.c     memory the engines reach: ranges locked for the GPU per
 *                 command, device memory (the device heap and its IPC
 *                 handles, private device buffers), the GPU table
 *   hsa_devq.c    the SDMA queue GPU kernels write themselves (the HIP
 *                 device API, shmemx_dev_get_hip)
 * Process-wide: one GPU per process, one dsm_sdma_t using it.
 */
#ifndef DSM_SDMA_HSA_INT_H
#define DSM_SDMA_HSA_INT_H

#include "sdma/backend.h"
#include <shmemx_sdma_pkt.h>

#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <hsakmt.h>

/* The queue type of hsaKmtCreateQueueExt that names the engine (ROCm
 * 6.4's hsakmttypes.h; Debian's 5.2.3 headers lack it). */
#define DSM_HSA_QUEUE_SDMA_BY_ENG_ID ((HSA_QUEUE_TYPE)6)

typedef struct dsm_hsa_api {
    void *lib;    /* hsa-runtime64 (or the model) */
    void *kmtlib; /* libhsakmt.so.1 when the thunk is a separate library */
    const char *kmt_from; /* which library gave the hsaKmt* entry points */
    int model;    /* the library is the engine model (hsa_model_version) */

    hsa_status_t (*init)(void);
    hsa_status_t (*shut_down)(void);
    hsa_status_t (*iterate_agents)(hsa_status_t (*cb)(hsa_agent_t, void *),
                                   void *data);
    hsa_status_t (*agent_get_info)(hsa_agent_t, hsa_agent_info_t, void *);
    hsa_status_t (*status_string)(hsa_status_t, const char **);
    hsa_status_t (*memory_lock)(void *, size_t, hsa_agent_t *, int, void **);
    hsa_status_t (*memory_unlock)(void *);
    /* The fallback where no queue can be created. */
    hsa_status_t (*async_copy)(void *, hsa_agent_t, const void *, hsa_agent_t,
                               size_t, uint32_t, const hsa_signal_t *,
                               hsa_signal_t);
    hsa_status_t (*signal_create)(hsa_signal_value_t, uint32_t,
                                  const hsa_agent_t *, hsa_signal_t *);
    hsa_status_t (*signal_destroy)(hsa_signal_t);
    hsa_signal_value_t (*signal_load)(hsa_signal_t);

    /* The device heap (optional: without them the GPU gives none). */
    hsa_status_t (*iterate_pools)(hsa_agent_t,
                                  hsa_status_t (*cb)(hsa_amd_memory_pool_t,
                                                     void *),
                                  void *data);
    hsa_status_t (*pool_get_info)(hsa_amd_memory_pool_t,
                                  hsa_amd_memory_pool_info_t, void *);
    hsa_status_t (*pool_allocate)(hsa_amd_memory_pool_t, size_t, uint32_t,
                                  void **);
    hsa_status_t (*pool_free)(void *);
    hsa_status_t (*ipc_create)(void *, size_t, hsa_amd_ipc_memory_t *);
    hsa_status_t (*ipc_attach)(const hsa_amd_ipc_memory_t *, size_t,
                               uint32_t, const hsa_agent_t *, void **);
    hsa_status_t (*ipc_detach)(void *);
    hsa_status_t (*memory_copy)(void *, const void *, size_t);
    /* Which memory a pointer is (private hipMalloc'ed buffers). */
    hsa_status_t (*pointer_info)(const void *, hsa_amd_pointer_info_t *,
                                 void *(*)(size_t), uint32_t *,
                                 hsa_agent_t **);

    HSAKMT_STATUS (*kmt_open)(void);
    HSAKMT_STATUS (*kmt_close)(void);
    HSAKMT_STATUS (*create_queue)(HSAuint32, HSA_QUEUE_TYPE, HSAuint32,
                                  HSA_QUEUE_PRIORITY, void *, HSAuint64,
                                  HsaEvent *, HsaQueueResource *);
    HSAKMT_STATUS (*destroy_queue)(HSA_QUEUEID);
    HSAKMT_STATUS (*create_event)(HsaEventDescriptor *, bool, bool,
                                  HsaEvent **);
    HSAKMT_STATUS (*destroy_event)(HsaEvent *);
    HSAKMT_STATUS (*wait_on_event)(HsaEvent *, HSAuint32);
    HSAKMT_STATUS (*set_event)(HsaEvent *); /* optional */
    /* ROCm >= 6.4 (engine choice by id, KFD interface >= 1.17): looked
     * up, optional; the same as create_queue with the engine id after the
     * priority. */
    HSAKMT_STATUS (*create_queue_ext)(HSAuint32, HSA_QUEUE_TYPE, HSAuint32,
                                      HSA_QUEUE_PRIORITY, HSAuint32, void *,
                                      HSAuint64, HsaEvent *,
                                      HsaQueueResource *);
    /* The model only: wake the engine thread after a doorbell store. */
    void (*model_kick)(volatile uint64_t *doorbell);
} dsm_hsa_api_t;

/* Load `path` (NULL: libhsa-runtime64.so.1) and take every entry point;
 * the hsaKmt* ones from that library when it carries the thunk (ROCm >=
 * 6.3: a second copy in one process breaks), else from libhsakmt.so.1.
 * On failure fills why (one line) and leaves nothing loaded. */
int dsm_hsa_api_load(dsm_hsa_api_t *api, const char *path, char *why,
                     size_t whylen);
void dsm_hsa_api_unload(dsm_hsa_api_t *api);

/* ------------------------------------------------------------ state */

/* Sizes more than one file needs: SWAP's bounce buffer (one piece of a
 * SWAP at most; hsa.c allocates it per queue) and the copy pieces the
 * async fallback keeps in flight per queue. */
#define DSM_HSA_SWAP_BOUNCE (64u * 1024u)
#define DSM_HSA_ASYNC_INFLIGHT 256

/* A range locked for the GPU, shared by the commands that use it. */
typedef struct hsa_reg {
    struct hsa_reg *next;
    uintptr_t base;
    size_t len;
    char *agent; /* the GPU's address of base */
    uint64_t refs;
    /* Device memory, never locked: 1 = a device heap (hsa_mem.c's
     * devmem), never freed here; 2 = a private allocation of the GPU's
     * pools (hipMalloc), refcounted like a lock and forgotten at 0. */
    int dev;
} hsa_reg_t;

/* The locked ranges one command uses (never overlapping, see
 * dsm_hsa_reg_cover). A copy touches two or three ranges: they live in
 * the slot itself, so the submit path allocates nothing and a queue's
 * memory does not grow as commands reach slots not used before
 * (thread_exit counted 48 bytes of heap per slot first used). v points at
 * inl until a command needs more. */
#define DSM_HSA_SLOT_REGS_INLINE 4
typedef struct slot_regs {
    struct hsa_reg **v;
    uint32_t n, cap;
    struct hsa_reg *inl[DSM_HSA_SLOT_REGS_INLINE];
} slot_regs_t;

/* Async-copy fallback: one copy piece in flight. */
typedef struct asig {
    hsa_signal_t sig;
    uint64_t upto; /* commands below this are done when sig reaches 0 */
} asig_t;

/* One queue of the layer (dsm_sdma_queue_t.priv). */
typedef struct hsaq {
    dsm_sdma_ring_t ring;
    uint32_t *ringbuf;
    HsaQueueResource res;
    int have_queue;
    uint32_t *done; /* the sequence FENCE target */
    char *bounce;   /* SWAP's staging buffer */
    slot_regs_t *regs; /* per command slot */
    hsa_reg_t *ring_reg, *done_reg, *bounce_reg;
    int enc_locked;   /* command `enc` holds its locks */
    uint64_t enc_pub; /* enc as of the last doorbell (poll extends the
                       * 32-bit sequence from it) */
    pthread_mutex_t pump_lock;
    uint64_t enc;     /* commands below this are fully encoded */
    uint64_t enc_off; /* bytes of command `enc` already encoded */
    uint64_t seen;    /* retire-walk cursor (wakes notified, regs put) */
    int walking;
    uint64_t batches;
    uint64_t fallbacks;
    /* Async-copy fallback: signals of the pieces in flight (FIFO), the
     * last one (the next piece's dependency), commands completed. */
    asig_t *asig;
    uint64_t ahead, atail;
    hsa_signal_t last_sig;
    uint64_t adone;
    uint64_t copies;
} hsaq_t;

/* The queue GPU kernels write themselves (hsa_devq.c): a ring, a control
 * block the GPU reads and writes (the producers' ring words, the
 * completion dword, the caller's table) and the ranges made reachable for
 * kernels; none of it is a queue of the layer. */
typedef struct hsa_devq {
    int open;
    uint32_t *ringbuf;
    char *ctl;
    size_t ctl_bytes;
    HsaQueueResource res;
    hsa_reg_t *ring_reg, *ctl_reg;
    slot_regs_t maps;
    dsm_sdma_devq_t out;
} hsa_devq_t;

/* The open backend (dsm_sdma_t.priv). */
typedef struct hsas {
    dsm_sdma_t *s;
    pthread_t event_thread;
    int event_running;
    volatile int stop;
    HsaEvent *event;
    pthread_mutex_t reg_lock;
    hsa_reg_t *regs;
    pthread_mutex_t devq_lock;
    hsa_devq_t devq;
} hsas_t;

/* Process-wide: what probe found, kept until close so open does not load
 * twice, and the runtime's settings (hsa.c defines it). */
typedef struct dsm_hsa_state {
    dsm_sdma_gpu_settings_t set; /* from the runtime (gpu_configure) */
    dsm_hsa_api_t api;
    int loaded;
    hsa_agent_t gpu;
    hsa_agent_t cpu;
    uint32_t node;
    int ngpus;
    char name[64];
    char why[256];
    int async;    /* no SDMA queue could be created: async copies */
    int nqueues;  /* SDMA queues this process holds (the cap counts them) */
    int devindex; /* the GPU's index among the GPU agents */
    /* The layer closed while device memory was still mapped (the runtime
     * releases the device heap after closing the layer): hsa_shut_down
     * and the unload wait for the last heap_unmap. */
    int closed_early;
} dsm_hsa_state_t;

extern dsm_hsa_state_t dsm_hsa;

/* ------------------------------------------------------------ hsa.c */

/* Take one of the process's SDMA queues under SHMEM_HSA_MAX_QUEUES, or
 * refuse with one line naming what (returns 0); give it back. */
int dsm_hsa_queue_take(const char *what);
void dsm_hsa_queue_give(void);
/* Create an SDMA queue on ring (SHMEM_HSA_SDMA_ENGINE's engine or the
 * driver's choice), and how it does so, for messages. */
HSAKMT_STATUS dsm_hsa_make_queue(void *ring, uint64_t size,
                                 HsaQueueResource *res);
const char *dsm_hsa_queue_call(void);
/* The ring's kick over the model: wake the engine thread. */
void dsm_hsa_model_kick(volatile uint64_t *doorbell);

/* ------------------------------------------------------------ hsa_mem.c */

/* Cover [p, p + len) with locked ranges (device memory as it is) and add
 * each to sr with a reference; 0 when some page cannot be locked. */
int dsm_hsa_reg_cover(hsas_t *hs, slot_regs_t *sr, const void *p,
                      size_t len);
/* One range for a long-lived page-aligned buffer (NULL: cannot lock), and
 * its release. */
hsa_reg_t *dsm_hsa_reg_get(hsas_t *hs, const void *p, size_t len);
void dsm_hsa_reg_put(hsas_t *hs, hsa_reg_t *r);
/* The array of a slot_regs_t, where it outgrew the inline one. */
void dsm_hsa_slot_regs_free(slot_regs_t *sr);
/* p is device memory: a device heap, or ROCr says so (hipMalloc). */
int dsm_hsa_ptr_is_device(const void *p);
/* hsa_shut_down and the unload at close, or at the last heap_unmap when
 * a device heap is still mapped then. */
void dsm_hsa_release(void);
extern const dsm_sdma_gpu_ops_t dsm_hsa_gpu_ops;

/* The GPU's address of p inside r. */
static inline uint64_t gva(const hsa_reg_t *r, const void *p)
{
    return (uint64_t)(uintptr_t)(r->agent + ((uintptr_t)p - r->base));
}

static inline const hsa_reg_t *slot_find(const slot_regs_t *sr,
                                         const void *p)
{
    for (uint32_t i = 0; i < sr->n; i++)
        if ((uintptr_t)p >= sr->v[i]->base &&
            (uintptr_t)p < sr->v[i]->base + sr->v[i]->len)
            return sr->v[i];
    return NULL;
}

/* The GPU's address of p, which one of the slot's ranges holds. */
static inline uint64_t sgva(const slot_regs_t *sr, const void *p)
{
    return gva(slot_find(sr, p), p);
}

/* Bytes from p to the end of the slot's range that holds it. */
static inline size_t slot_left(const slot_regs_t *sr, const void *p)
{
    const hsa_reg_t *r = slot_find(sr, p);
    return r->base + r->len - (uintptr_t)p;
}

/* ------------------------------------------------------------ hsa_submit.c */

void dsm_hsa_submit(dsm_sdma_queue_t *q, uint64_t upto);
/* Encode, retire (wakes, unlocks) and report the completed sequence. */
uint64_t dsm_hsa_poll(dsm_sdma_queue_t *q, int help);
/* Dwords command c still needs from byte offset off on; *piece gets the
 * bytes the next piece covers (before dsm_hsa_clamp_piece). */
uint32_t dsm_hsa_piece_dwords(const dsm_cmd_t *c, uint64_t off,
                              size_t *piece);
/* Lock what command c in slot touches (0: the engine cannot reach some
 * of it); unlock the slot's ranges. */
int dsm_hsa_cmd_lock(hsas_t *hs, hsaq_t *hq, const dsm_cmd_t *c,
                     uint64_t slot);
void dsm_hsa_cmd_unlock(hsas_t *hs, hsaq_t *hq, uint64_t slot);
/* A copy piece may not cross the end of a locked range at either end. */
size_t dsm_hsa_clamp_piece(const hsaq_t *hq, const dsm_cmd_t *c,
                           uint64_t slot, uint64_t off, size_t piece);

static inline int cmd_is_copy(const dsm_cmd_t *c)
{
    return c->op == DSM_CMD_COPY || c->op == DSM_CMD_BCAST ||
           c->op == DSM_CMD_SWAP;
}

/* ------------------------------------------------------------ hsa_async.c */

/* Issue what was submitted as async copies (caller holds pump_lock). */
void dsm_hsa_pump_async(dsm_sdma_queue_t *q);
/* Retire the copy pieces that completed. */
void dsm_hsa_async_reap(hsaq_t *hq);
/* The event thread's wait predicate in the fallback: work in flight or
 * not yet issued on some queue (or stop). arg: the hsas_t. */
int dsm_hsa_async_busy(void *arg);

/* ------------------------------------------------------------ hsa_devq.c */

/* Destroy the device queue and release what it holds (close; stats:
 * print its counters). Caller holds devq_lock or owns hs alone. */
void dsm_hsa_devq_teardown(hsas_t *hs, int stats);

#endif /* DSM_SDMA_HSA_INT_H */
