/*
 * hsa backend: AMD SDMA queues driven by packets (shmemx_sdma_pkt.h).
 *
 * Every queue of the layer is one SDMA queue of the PE's GPU, created with
 * hsaKmtCreateQueue(HSA_QUEUE_SDMA) on a ring in host memory locked for
 * the GPU. Commands become packets:
 *   COPY        COPY_LINEAR, split at DSM_SDMA_COPY_MAX bytes
 *   BCAST       two COPY_LINEARs per piece (no native packet: emulated)
 *   SWAP        three COPY_LINEARs per piece through a per-queue bounce
 *               buffer (no native packet: emulated)
 *   WAIT        POLL_REGMEM on the word's low dword as a 32-bit sequence
 *               number (dsm_pkt_wait_seq), dropped when it already holds
 *   SIGNAL      FENCE of the low dword, then FENCE of the high dword (a
 *               64-bit reader never sees a value above the new one)
 *   SIGNAL_ADD  ATOMIC add64
 * and a batch ends with a FENCE of the queue's sequence (low 32 bits)
 * into a host word, a TRAP that wakes this process's event thread, and one
 * doorbell. A FENCE of the sequence also goes before every WAIT, so the
 * commands before a gate complete while the queue waits there.
 *
 * Packets are written while the ring has room ("pumping", from submit and
 * poll), never by waiting for room: a queue parked on a WAIT must not
 * block the thread that will fire its trigger.
 *
 * Memory the engine touches is locked for the GPU (hsa_amd_memory_lock)
 * while a command uses it and unlocked when the command retires; device
 * memory (the device heap, ours from the GPU's coarse-grained pool and
 * the local peers' attached through hsa_amd_ipc_memory_attach) is the
 * GPU's already and is used as it is (devmem below).
 *
 * Where no SDMA queue can be created (the thunk missing, no rights on
 * /dev/kfd, an old kernel) the backend falls back to ROCr's
 * hsa_amd_memory_async_copy: each copy piece depends on the previous
 * one's completion signal, so a queue stays in order; WAIT, SIGNAL and
 * SIGNAL_ADD run on the host once the copies before them completed (no
 * engine-side gating: prelaunched chains wait in the host). SHMEM_INFO
 * says which of the two runs.
 */
#include "sdma/backend.h"
#include "sdma/hsa/hsa_int.h"
#include <shmemx_sdma_pkt.h>

#include <errno.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define RING_BYTES (256u * 1024u)
#define SWAP_BOUNCE (64u * 1024u)
#define POLL_INTERVAL 20u  /* POLL_REGMEM retry interval field */
#define EVENT_WAIT_MS 100u
/* Room kept at the end of every batch: the sequence FENCE, the TRAP and
 * the padding before them. */
#define BATCH_TAIL_DW (DSM_SDMA_FENCE_DW + DSM_SDMA_TRAP_DW + 2 * DSM_SDMA_MAX_PKT_DW)

/* A range locked for the GPU, shared by the commands that use it. */
typedef struct hsa_reg {
    struct hsa_reg *next;
    uintptr_t base;
    size_t len;
    char *agent; /* the GPU's address of base */
    uint64_t refs;
    /* Device memory, never locked: 1 = a device heap (devmem below),
     * never freed here; 2 = a private allocation of the GPU's pools
     * (hipMalloc), refcounted like a lock and forgotten at 0. */
    int dev;
} hsa_reg_t;

/* The locked ranges one command uses (never overlapping, see reg_cover).
 * A copy touches two or three ranges: they live in the slot itself, so the
 * submit path allocates nothing and a queue's memory does not grow as
 * commands reach slots not used before (thread_exit counted 48 bytes of
 * heap per slot first used). v points at inl until a command needs more. */
#define SLOT_REGS_INLINE 4
typedef struct slot_regs {
    struct hsa_reg **v;
    uint32_t n, cap;
    struct hsa_reg *inl[SLOT_REGS_INLINE];
} slot_regs_t;
/* Async-copy fallback: copy pieces in flight per queue. */
#define ASYNC_INFLIGHT 256

typedef struct asig {
    hsa_signal_t sig;
    uint64_t upto; /* commands below this are done when sig reaches 0 */
} asig_t;

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

/* The queue GPU kernels write themselves (dsm_sdma_devq_open): a ring, a
 * control block the GPU reads and writes (the producers' ring words, the
 * completion dword, the caller's table) and the ranges made reachable for
 * kernels; none of it is a queue of the layer. */
#define DEVQ_RING_BYTES (256u * 1024u)
#define DEVQ_DONE_OFF 256u  /* the completion dword, a line of its own */
#define DEVQ_TABLE_OFF 512u
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

/* What probe found; kept until close so open does not load twice. */
static struct {
    dsm_hsa_api_t api;
    int loaded;
    hsa_agent_t gpu;
    hsa_agent_t cpu;
    uint32_t node;
    int ngpus;
    char name[64];
    char why[256];
    int async; /* no SDMA queue could be created: async copies */
    int nqueues; /* SDMA queues this process holds (the cap counts them) */
    int devindex; /* the GPU's index among the GPU agents */
    /* The layer closed while device memory was still mapped (the runtime
     * releases the device heap after closing the layer): hsa_shut_down
     * and the unload wait for the last heap_unmap. */
    int closed_early;
} g;

static dsm_sdma_gpu_settings_t settings = {.device = -1,
                                           .hsa_sdma_engine = -1};

static void hsa_configure(const dsm_sdma_gpu_settings_t *set)
{
    settings = *set;
}

/* SHMEM_HSA_MAX_QUEUES: take one of the process's SDMA queues, or refuse
 * with one line. Hardware offers a few dozen SDMA queues per process and
 * the model one host thread per queue; without a cap every chain queue
 * of the layer (persistent collectives: ~115 per PE on 4 PEs) is one. */
static int queue_take(const char *what)
{
    int n = __atomic_add_fetch(&g.nqueues, 1, __ATOMIC_ACQ_REL);
    if (settings.hsa_max_queues > 0 && n > settings.hsa_max_queues) {
        __atomic_sub_fetch(&g.nqueues, 1, __ATOMIC_ACQ_REL);
        dsm_log_error("hsa backend: %s refused: SHMEM_HSA_MAX_QUEUES=%ld "
                      "SDMA queues per process are in use (the RMA, chain "
                      "and device API queues count)",
                      what, settings.hsa_max_queues);
        return 0;
    }
    return 1;
}

static void queue_give(void)
{
    __atomic_sub_fetch(&g.nqueues, 1, __ATOMIC_ACQ_REL);
}

/* Create an SDMA queue on ring: on the engine SHMEM_HSA_SDMA_ENGINE names
 * (hsaKmtCreateQueueExt), else where the driver puts it. */
static HSAKMT_STATUS make_queue(void *ring, uint64_t size,
                                HsaQueueResource *res)
{
    if (settings.hsa_sdma_engine >= 0)
        return g.api.create_queue_ext(
            g.node, DSM_HSA_QUEUE_SDMA_BY_ENG_ID, 100,
            HSA_QUEUE_PRIORITY_MAXIMUM, (HSAuint32)settings.hsa_sdma_engine,
            ring, size, NULL, res);
    return g.api.create_queue(g.node, HSA_QUEUE_SDMA, 100,
                              HSA_QUEUE_PRIORITY_MAXIMUM, ring, size, NULL,
                              res);
}

/* How make_queue creates queues, for messages. */
static const char *queue_call(void)
{
    static char b[96];
    if (settings.hsa_sdma_engine < 0)
        return "hsaKmtCreateQueue(HSA_QUEUE_SDMA)";
    snprintf(b, sizeof(b), "hsaKmtCreateQueueExt(HSA_QUEUE_SDMA_BY_ENG_ID, "
             "engine %ld)", settings.hsa_sdma_engine);
    return b;
}

struct agent_walk {
    int want;
    int seen;
};

static hsa_status_t agent_cb(hsa_agent_t a, void *arg)
{
    struct agent_walk *w = arg;
    hsa_device_type_t type;

    if (g.api.agent_get_info(a, HSA_AGENT_INFO_DEVICE, &type) !=
        HSA_STATUS_SUCCESS)
        return HSA_STATUS_SUCCESS;
    if (type == HSA_DEVICE_TYPE_CPU && !g.cpu.handle)
        g.cpu = a;
    if (type != HSA_DEVICE_TYPE_GPU)
        return HSA_STATUS_SUCCESS;
    if (w->seen++ == w->want || !g.gpu.handle)
        g.gpu = a;
    return HSA_STATUS_SUCCESS;
}

static dsm_status_t hsa_probe(void)
{
    struct agent_walk w;

    if (g.loaded)
        return DSM_OK;
    if (dsm_hsa_api_load(&g.api, settings.hsa_library, g.why, sizeof(g.why)))
        goto fail;
    if (g.api.init() != HSA_STATUS_SUCCESS) {
        snprintf(g.why, sizeof(g.why), "hsa_init failed (no GPU or /dev/kfd)");
        goto fail_unload;
    }
    /* First pass counts the GPUs, second takes local rank modulo. */
    memset(&w, 0, sizeof(w));
    w.want = -1;
    g.gpu.handle = 0;
    g.api.iterate_agents(agent_cb, &w);
    g.ngpus = w.seen;
    if (!g.ngpus) {
        snprintf(g.why, sizeof(g.why), "hsa_init succeeded but no GPU agent");
        goto fail_shut;
    }
    memset(&w, 0, sizeof(w));
    w.want = settings.device >= 0 ? (int)(settings.device % g.ngpus)
                                  : settings.local_rank % g.ngpus;
    g.gpu.handle = 0;
    g.api.iterate_agents(agent_cb, &w);
    g.devindex = w.want;
    if (g.api.agent_get_info(g.gpu,
                             (hsa_agent_info_t)HSA_AMD_AGENT_INFO_DRIVER_NODE_ID,
                             &g.node) != HSA_STATUS_SUCCESS)
        g.node = 0;
    if (g.api.agent_get_info(g.gpu, HSA_AGENT_INFO_NAME, g.name) !=
        HSA_STATUS_SUCCESS)
        snprintf(g.name, sizeof(g.name), "gpu");
    g.name[sizeof(g.name) - 1] = 0;
    g.loaded = 1;
    return DSM_OK;

fail_shut:
    g.api.shut_down();
fail_unload:
    dsm_hsa_api_unload(&g.api);
fail:
    dsm_debug("hsa backend not usable: %s", g.why);
    return DSM_ERR_NO_DEVICE;
}

/* ------------------------------------------------------------ memory */

/* Device memory the engines reach as it is (GPU address = pointer): our
 * device heap from the GPU's pool and the peers' heaps attached through
 * IPC. Entries are appended under devmem_lock and published by ndevmem;
 * readers (ptr_is_device on every RMA while a device heap exists, and
 * reg_cover) scan without a lock. A released entry keeps its slot with
 * len 0. */
#define DEVMEM_MAX 1024
typedef struct devmem {
    hsa_reg_t reg;
    int attached; /* a peer's, by hsa_amd_ipc_memory_attach */
} devmem_t;
static devmem_t devmem[DEVMEM_MAX];
static uint32_t ndevmem;
static int devmem_live;
static pthread_mutex_t devmem_lock = PTHREAD_MUTEX_INITIALIZER;

/* A private device allocation (hipMalloc'ed: ROCr's pools, owned by a
 * GPU agent, or attached through IPC) that holds p: 1 and its range, else
 * 0 (host memory, or no hsa_amd_pointer_info). */
static int devptr_range(const void *p, uintptr_t *base, size_t *len)
{
    hsa_amd_pointer_info_t info;
    hsa_device_type_t type;

    if (!g.api.pointer_info)
        return 0;
    memset(&info, 0, sizeof(info));
    info.size = sizeof(info);
    if (g.api.pointer_info(p, &info, NULL, NULL, NULL) != HSA_STATUS_SUCCESS)
        return 0;
    if (info.type == HSA_EXT_POINTER_TYPE_IPC)
        type = HSA_DEVICE_TYPE_GPU;
    else if (info.type != HSA_EXT_POINTER_TYPE_HSA ||
             g.api.agent_get_info(info.agentOwner, HSA_AGENT_INFO_DEVICE,
                                  &type) != HSA_STATUS_SUCCESS)
        return 0;
    if (type != HSA_DEVICE_TYPE_GPU || !info.sizeInBytes)
        return 0;
    *base = (uintptr_t)info.agentBaseAddress;
    *len = info.sizeInBytes;
    return (uintptr_t)p - *base < *len;
}

static devmem_t *devmem_find(const void *p)
{
    uint32_t n = __atomic_load_n(&ndevmem, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < n; i++) {
        size_t len = __atomic_load_n(&devmem[i].reg.len, __ATOMIC_ACQUIRE);
        if ((uintptr_t)p - devmem[i].reg.base < len)
            return &devmem[i];
    }
    return NULL;
}

/* Lock [p, p + len) page-rounded for a long-lived user (the ring, the
 * completion word, the bounce buffer): one range. */
static hsa_reg_t *reg_lock_new(hsas_t *hs, uintptr_t base, uintptr_t end)
{
    hsa_reg_t *r = calloc(1, sizeof(*r));
    void *agent = NULL;
    if (!r)
        return NULL;
    r->base = base;
    r->len = end - base;
    if (g.api.memory_lock((void *)r->base, r->len, &g.gpu, 1, &agent) !=
        HSA_STATUS_SUCCESS) {
        free(r);
        return NULL;
    }
    r->agent = agent;
    r->refs = 1;
    r->next = hs->regs;
    hs->regs = r;
    return r;
}

static int slot_add(slot_regs_t *sr, hsa_reg_t *r)
{
    if (!sr->v) {
        sr->v = sr->inl;
        sr->cap = SLOT_REGS_INLINE;
    }
    if (sr->n == sr->cap) {
        uint32_t c = sr->cap * 2;
        hsa_reg_t **v = sr->v == sr->inl ? malloc(c * sizeof(*v))
                                         : realloc(sr->v, c * sizeof(*v));
        if (!v)
            return 0;
        if (sr->v == sr->inl)
            memcpy(v, sr->inl, sizeof(sr->inl));
        sr->v = v;
        sr->cap = c;
    }
    sr->v[sr->n++] = r;
    return 1;
}

/* The array of a slot_regs_t, where it outgrew the inline one. */
static void slot_regs_free(slot_regs_t *sr)
{
    if (sr->v != sr->inl)
        free(sr->v);
    sr->v = NULL;
    sr->n = sr->cap = 0;
}

/* Cover [p, p + len) with locked ranges that never overlap (so no two
 * share a base address: unlock names a range by its base), locking only
 * the pages not yet locked, and add each to sr with a reference. A copy
 * is split where one range ends (their GPU addresses need not be
 * contiguous). Returns 0 when some page cannot be locked. */
static int reg_cover(hsas_t *hs, slot_regs_t *sr, const void *p, size_t len)
{
    long pg = sysconf(_SC_PAGESIZE);
    uintptr_t pos = (uintptr_t)p & ~(uintptr_t)(pg - 1);
    uintptr_t end = ((uintptr_t)p + (len ? len : 1) + (uintptr_t)pg - 1) &
                    ~(uintptr_t)(pg - 1);
    int ok = 1;

    pthread_mutex_lock(&hs->reg_lock);
    while (pos < end && ok) {
        hsa_reg_t *r, *hit = NULL;
        uintptr_t stop = end;
        devmem_t *d = devmem_find((const void *)pos);
        if (d) {
            /* The GPU's own memory: nothing to lock or count. */
            if (!slot_add(sr, &d->reg)) {
                ok = 0;
                break;
            }
            pos = d->reg.base + d->reg.len;
            continue;
        }
        for (r = hs->regs; r; r = r->next) {
            if (pos >= r->base && pos < r->base + r->len) {
                hit = r;
                break;
            }
            if (r->base > pos && r->base < stop)
                stop = r->base;
        }
        uintptr_t dbase;
        size_t dlen;
        if (hit) {
            hit->refs++;
        } else if (devptr_range((const void *)pos, &dbase, &dlen)) {
            /* A private device buffer: the GPU's own, nothing to lock. */
            hit = calloc(1, sizeof(*hit));
            if (!hit) {
                ok = 0;
                break;
            }
            hit->base = dbase;
            hit->len = dlen;
            hit->agent = (char *)dbase;
            hit->dev = 2;
            hit->refs = 1;
            hit->next = hs->regs;
            hs->regs = hit;
        } else {
            hit = reg_lock_new(hs, pos, stop);
            if (!hit) {
                ok = 0;
                break;
            }
        }
        if (!slot_add(sr, hit)) {
            hit->refs--;
            ok = 0;
            break;
        }
        pos = hit->base + hit->len;
    }
    pthread_mutex_unlock(&hs->reg_lock);
    return ok;
}

static hsa_reg_t *reg_get(hsas_t *hs, const void *p, size_t len)
{
    slot_regs_t one = {0};
    hsa_reg_t *r = NULL;
    /* Long-lived buffers are page-aligned allocations of their own:
     * one range each. */
    if (reg_cover(hs, &one, p, len) && one.n == 1)
        r = one.v[0];
    else
        for (uint32_t i = 0; i < one.n; i++) {
            if (one.v[i]->dev == 1)
                continue;
            pthread_mutex_lock(&hs->reg_lock);
            one.v[i]->refs--;
            pthread_mutex_unlock(&hs->reg_lock);
        }
    slot_regs_free(&one);
    return r;
}

static void reg_put(hsas_t *hs, hsa_reg_t *r)
{
    hsa_reg_t **pp;

    if (r->dev == 1)
        return;
    pthread_mutex_lock(&hs->reg_lock);
    if (--r->refs == 0) {
        for (pp = &hs->regs; *pp; pp = &(*pp)->next)
            if (*pp == r) {
                *pp = r->next;
                break;
            }
        if (!r->dev)
            g.api.memory_unlock((void *)r->base);
        free(r);
    }
    pthread_mutex_unlock(&hs->reg_lock);
}

/* The GPU's address of p inside r. */
static uint64_t gva(const hsa_reg_t *r, const void *p)
{
    return (uint64_t)(uintptr_t)(r->agent + ((uintptr_t)p - r->base));
}

static const hsa_reg_t *slot_find(const slot_regs_t *sr, const void *p)
{
    for (uint32_t i = 0; i < sr->n; i++)
        if ((uintptr_t)p >= sr->v[i]->base &&
            (uintptr_t)p < sr->v[i]->base + sr->v[i]->len)
            return sr->v[i];
    return NULL;
}

/* The GPU's address of p, which one of the slot's ranges holds. */
static uint64_t sgva(const slot_regs_t *sr, const void *p)
{
    return gva(slot_find(sr, p), p);
}

/* Bytes from p to the end of the slot's range that holds it. */
static size_t slot_left(const slot_regs_t *sr, const void *p)
{
    const hsa_reg_t *r = slot_find(sr, p);
    return r->base + r->len - (uintptr_t)p;
}

/* ------------------------------------------------------------ encoding */

static void model_kick(volatile uint64_t *doorbell)
{
    g.api.model_kick(doorbell);
}

/* Dwords command c still needs from byte offset off on; *piece gets the
 * bytes the next piece covers. */
static uint32_t piece_dwords(const dsm_cmd_t *c, uint64_t off, size_t *piece)
{
    size_t left;

    *piece = 0;
    switch ((dsm_cmd_op_t)c->op) {
    case DSM_CMD_COPY:
    case DSM_CMD_BCAST:
        left = c->u.copy.len - off;
        if (!left)
            return 0;
        *piece = DSM_MIN(left, (size_t)DSM_SDMA_COPY_MAX);
        return (c->op == DSM_CMD_COPY ? 1 : 2) * DSM_SDMA_COPY_DW;
    case DSM_CMD_SWAP:
        left = c->u.copy.len - off;
        if (!left)
            return 0;
        *piece = DSM_MIN(left, (size_t)SWAP_BOUNCE);
        return 3 * DSM_SDMA_COPY_DW;
    case DSM_CMD_WAIT:
        return DSM_SDMA_FENCE_DW + DSM_SDMA_WAIT_MAX_DW;
    case DSM_CMD_SIGNAL:
        return 2 * DSM_SDMA_FENCE_DW;
    case DSM_CMD_SIGNAL_ADD:
        return DSM_SDMA_ATOMIC_DW;
    case DSM_CMD_NOP:
    case DSM_CMD_LAST:
        break;
    }
    return 0;
}

/* Lock what command c touches (once, at its first piece). Returns 0 when
 * some of it cannot be made visible to the engine. */
static int cmd_lock(hsas_t *hs, hsaq_t *hq, const dsm_cmd_t *c,
                    uint64_t slot)
{
    slot_regs_t *r = &hq->regs[slot];

    switch ((dsm_cmd_op_t)c->op) {
    case DSM_CMD_COPY:
    case DSM_CMD_BCAST:
    case DSM_CMD_SWAP:
        return reg_cover(hs, r, c->u.copy.src, c->u.copy.len) &&
               reg_cover(hs, r, c->u.copy.dst, c->u.copy.len) &&
               (c->op != DSM_CMD_BCAST ||
                reg_cover(hs, r, c->u.copy.dst2, c->u.copy.len));
    case DSM_CMD_WAIT:
    case DSM_CMD_SIGNAL:
    case DSM_CMD_SIGNAL_ADD:
        return reg_cover(hs, r, c->u.sig.word, sizeof(uint64_t));
    case DSM_CMD_NOP:
    case DSM_CMD_LAST:
        break;
    }
    return 1;
}

static void cmd_unlock(hsas_t *hs, hsaq_t *hq, uint64_t slot)
{
    slot_regs_t *r = &hq->regs[slot];
    for (uint32_t i = 0; i < r->n; i++)
        reg_put(hs, r->v[i]);
    r->n = 0;
}

/* A copy piece may not cross the end of a locked range at either end. */
static size_t clamp_piece(const hsaq_t *hq, const dsm_cmd_t *c,
                          uint64_t slot, uint64_t off, size_t piece)
{
    const slot_regs_t *r = &hq->regs[slot];
    if (!piece)
        return 0;
    piece = DSM_MIN(piece, slot_left(r, (const char *)c->u.copy.src + off));
    piece = DSM_MIN(piece, slot_left(r, (char *)c->u.copy.dst + off));
    if (c->op == DSM_CMD_BCAST)
        piece = DSM_MIN(piece, slot_left(r, (char *)c->u.copy.dst2 + off));
    return piece;
}

/* Write one piece of command c (its packets are n dwords at w). */
static uint32_t encode_piece(hsaq_t *hq, const dsm_cmd_t *c,
                             uint64_t slot, uint64_t off, size_t piece,
                             uint32_t *w, uint64_t seq)
{
    const slot_regs_t *r = &hq->regs[slot];
    const char *src = (const char *)c->u.copy.src + off;
    char *dst = (char *)c->u.copy.dst + off;

    switch ((dsm_cmd_op_t)c->op) {
    case DSM_CMD_COPY:
        dsm_pkt_copy_linear(w, sgva(r, dst), sgva(r, src),
                            (uint32_t)piece);
        return DSM_SDMA_COPY_DW;
    case DSM_CMD_BCAST:
        dsm_pkt_copy_linear(w, sgva(r, dst), sgva(r, src),
                            (uint32_t)piece);
        dsm_pkt_copy_linear(w + DSM_SDMA_COPY_DW,
                            sgva(r, (char *)c->u.copy.dst2 + off),
                            sgva(r, src), (uint32_t)piece);
        return 2 * DSM_SDMA_COPY_DW;
    case DSM_CMD_SWAP: {
        /* a -> bounce, b -> a, bounce -> b: the engine runs a queue's
         * packets in order. */
        uint64_t b = gva(hq->bounce_reg, hq->bounce);
        dsm_pkt_copy_linear(w, b, sgva(r, src), (uint32_t)piece);
        dsm_pkt_copy_linear(w + 7, sgva(r, src), sgva(r, dst),
                            (uint32_t)piece);
        dsm_pkt_copy_linear(w + 14, sgva(r, dst), b, (uint32_t)piece);
        return 3 * DSM_SDMA_COPY_DW;
    }
    case DSM_CMD_WAIT: {
        uint32_t n = 0;
        /* Commands before the gate complete while the queue waits. */
        dsm_pkt_fence(w, gva(hq->done_reg, hq->done), (uint32_t)seq);
        n += DSM_SDMA_FENCE_DW;
        /* Already holds: nothing to poll. Not asked of device memory,
         * which the CPU does not read. */
        if (!slot_find(r, c->u.sig.word)->dev &&
            __atomic_load_n(c->u.sig.word, __ATOMIC_ACQUIRE) >= c->u.sig.value)
            return n;
        n += dsm_pkt_wait_seq(w + n, sgva(r, c->u.sig.word),
                              (uint32_t)c->u.sig.value, POLL_INTERVAL);
        return n;
    }
    case DSM_CMD_SIGNAL: {
        uint64_t a = sgva(r, c->u.sig.word);
        dsm_pkt_fence(w, a, dsm_pkt_lo(c->u.sig.value));
        dsm_pkt_fence(w + DSM_SDMA_FENCE_DW, a + 4,
                      dsm_pkt_hi(c->u.sig.value));
        return 2 * DSM_SDMA_FENCE_DW;
    }
    case DSM_CMD_SIGNAL_ADD:
        dsm_pkt_atomic(w, DSM_SDMA_ATOMIC_ADD64, sgva(r, c->u.sig.word),
                       c->u.sig.value, 0);
        return DSM_SDMA_ATOMIC_DW;
    case DSM_CMD_NOP:
    case DSM_CMD_LAST:
        break;
    }
    return 0;
}

/* Packets in n dwords written by encode_piece (for the statistics). */
static uint64_t count_packets(const uint32_t *w, uint32_t n)
{
    uint64_t k = 0;
    for (uint32_t i = 0; i < n; k++) {
        uint32_t d = dsm_pkt_dwords(w[i]);
        i += d ? d : 1;
    }
    return k;
}

static int cmd_is_copy(const dsm_cmd_t *c)
{
    return c->op == DSM_CMD_COPY || c->op == DSM_CMD_BCAST ||
           c->op == DSM_CMD_SWAP;
}

/* The engine's completed sequence (64-bit, from the FENCEd low dword). */
static uint64_t engine_done(const hsaq_t *hq)
{
    if (g.async)
        return __atomic_load_n(&hq->adone, __ATOMIC_ACQUIRE);
    uint32_t lo = __atomic_load_n(hq->done, __ATOMIC_ACQUIRE);
    uint64_t e = __atomic_load_n(&hq->enc_pub, __ATOMIC_ACQUIRE);
    return e - (uint32_t)((uint32_t)e - lo);
}

/* Place n dwords at *pos, padding the ring's end with NOPs; 0 when past
 * limit. */
static uint32_t *place(dsm_sdma_ring_t *r, uint64_t *pos, uint32_t n,
                       uint64_t limit)
{
    uint64_t off = *pos & (r->size - 1);
    uint64_t pad = off + n * 4u > r->size ? r->size - off : 0;
    if (*pos + pad + n * 4u > limit)
        return NULL;
    for (uint64_t b = 0; b < pad; b += 4)
        dsm_pkt_nop(dsm_ring_at(r, *pos + b), 0);
    *pos += pad;
    return dsm_ring_at(r, *pos);
}

static void pump_async(dsm_sdma_queue_t *q);

/* Encode what was submitted while the ring has room; one doorbell. */
static void pump(dsm_sdma_queue_t *q)
{
    hsaq_t *hq = q->priv;
    hsas_t *hs = q->sdma->priv;
    dsm_sdma_ring_t *r = &hq->ring;
    uint64_t sub, first, pos, limit;

    if (__atomic_load_n(&hq->enc, __ATOMIC_ACQUIRE) ==
            __atomic_load_n(&q->submitted, __ATOMIC_ACQUIRE) &&
        __atomic_load_n(&hq->ahead, __ATOMIC_ACQUIRE) ==
            __atomic_load_n(&hq->atail, __ATOMIC_ACQUIRE))
        return;
    if (pthread_mutex_trylock(&hq->pump_lock))
        return;
    if (g.async) {
        pump_async(q);
        pthread_mutex_unlock(&hq->pump_lock);
        return;
    }
    sub = __atomic_load_n(&q->submitted, __ATOMIC_ACQUIRE);
    first = pos = r->reserved;
    limit = __atomic_load_n(r->rptr, __ATOMIC_ACQUIRE) + r->size -
            BATCH_TAIL_DW * 4u;
    while (hq->enc < sub) {
        uint64_t slot = hq->enc & (q->depth - 1);
        const dsm_cmd_t *c = &q->ring[slot];
        size_t piece;
        uint32_t ndw, n, *w;

        if (!hq->enc_locked) {
            if (!cmd_lock(hs, hq, c, slot)) {
                /* The engine cannot reach this memory: the CPU runs the
                 * command once the engine has finished everything
                 * before it, and reports it done in the engine's place. */
                cmd_unlock(hs, hq, slot);
                if (pos != first || engine_done(hq) != hq->enc ||
                    !dsm_sdma_exec_cpu(c))
                    break;
                hq->fallbacks++;
                hq->enc++;
                __atomic_store_n(&hq->enc_pub, hq->enc, __ATOMIC_RELEASE);
                __atomic_store_n(hq->done, (uint32_t)hq->enc,
                                 __ATOMIC_RELEASE);
                continue;
            }
            hq->enc_locked = 1;
        }
        ndw = piece_dwords(c, hq->enc_off, &piece);
        if (cmd_is_copy(c))
            piece = clamp_piece(hq, c, slot, hq->enc_off, piece);
        if (ndw) {
            w = place(r, &pos, ndw, limit);
            if (!w)
                break; /* ring full: the rest when the engine moves on */
            n = encode_piece(hq, c, slot, hq->enc_off, piece, w, hq->enc);
            r->packets += count_packets(w, n);
            pos += n * 4u;
        }
        hq->enc_off += piece;
        if (!cmd_is_copy(c) || hq->enc_off >= c->u.copy.len) {
            hq->enc++;
            hq->enc_off = 0;
            hq->enc_locked = 0;
        }
    }
    if (pos != first) {
        uint32_t *w = place(r, &pos, DSM_SDMA_FENCE_DW, UINT64_MAX);
        /* Completion: the sequence of the last whole command. */
        dsm_pkt_fence(w, gva(hq->done_reg, hq->done), (uint32_t)hq->enc);
        pos += DSM_SDMA_FENCE_DW * 4u;
        w = place(r, &pos, DSM_SDMA_TRAP_DW, UINT64_MAX);
        dsm_pkt_trap(w, hs->event ? hs->event->EventId : 0);
        pos += DSM_SDMA_TRAP_DW * 4u;
        r->packets += 2;
        r->reserved = pos;
        __atomic_store_n(&hq->enc_pub, hq->enc, __ATOMIC_RELEASE);
        dsm_ring_commit(r, first, pos);
        hq->batches++;
    }
    pthread_mutex_unlock(&hq->pump_lock);
}

/* ---- the async-copy fallback ---- */

/* Retire the pieces whose signal reached 0 (in order). A signal is
 * destroyed only once the piece that depends on it (the next one) has
 * completed too: the engine may still read it before starting that one. */
static void async_reap(hsaq_t *hq)
{
    while (hq->ahead != hq->atail) {
        asig_t *a = &hq->asig[hq->ahead % ASYNC_INFLIGHT];
        asig_t *next = &hq->asig[(hq->ahead + 1) % ASYNC_INFLIGHT];
        if (g.api.signal_load(a->sig) > 0)
            break;
        if (a->upto > hq->adone)
            __atomic_store_n(&hq->adone, a->upto, __ATOMIC_RELEASE);
        if (hq->ahead + 1 != hq->atail && g.api.signal_load(next->sig) > 0)
            break;
        if (a->sig.handle == hq->last_sig.handle)
            hq->last_sig.handle = 0;
        g.api.signal_destroy(a->sig);
        __atomic_store_n(&hq->ahead, hq->ahead + 1, __ATOMIC_RELEASE);
    }
}

/* One copy after everything before it in this queue. */
static int async_copy(hsaq_t *hq, void *dst, const void *src, size_t n,
                      uint64_t upto)
{
    hsa_signal_t sig;
    asig_t *a;

    if (g.api.signal_create(1, 0, NULL, &sig) != HSA_STATUS_SUCCESS)
        return 0;
    if (g.api.async_copy(dst, g.gpu, src, g.gpu, n, hq->last_sig.handle ? 1 : 0,
                         hq->last_sig.handle ? &hq->last_sig : NULL,
                         sig) != HSA_STATUS_SUCCESS) {
        g.api.signal_destroy(sig);
        return 0;
    }
    a = &hq->asig[hq->atail % ASYNC_INFLIGHT];
    a->sig = sig;
    a->upto = upto;
    hq->last_sig = sig;
    __atomic_store_n(&hq->atail, hq->atail + 1, __ATOMIC_RELEASE);
    hq->copies++;
    return 1;
}

/* The fallback runs WAIT, SIGNAL and SIGNAL_ADD on the host. A word in
 * device memory (the device heap's synchronisation words under
 * SHMEM_PERSISTENT_SYNC=hready|dev) is read and written with
 * hsa_memory_copy, never by this CPU: VRAM need not be host-visible (the
 * engine model maps it PROT_NONE). SIGNAL_ADD is then a read and a
 * write, not atomic against another writer of that word. */
static int exec_host(const dsm_cmd_t *c)
{
    uint64_t v;
    uintptr_t b;
    size_t n;

    if ((c->op != DSM_CMD_WAIT && c->op != DSM_CMD_SIGNAL &&
         c->op != DSM_CMD_SIGNAL_ADD) ||
        (!devmem_find(c->u.sig.word) &&
         !devptr_range(c->u.sig.word, &b, &n)))
        return dsm_sdma_exec_cpu(c);
    if (c->op != DSM_CMD_SIGNAL &&
        g.api.memory_copy(&v, c->u.sig.word, sizeof(v)) != HSA_STATUS_SUCCESS)
        goto fail;
    if (c->op == DSM_CMD_WAIT)
        return v >= c->u.sig.value;
    v = c->op == DSM_CMD_SIGNAL ? c->u.sig.value : v + c->u.sig.value;
    if (g.api.memory_copy(c->u.sig.word, &v, sizeof(v)) != HSA_STATUS_SUCCESS)
        goto fail;
    return 1;
fail:
    dsm_log_error("hsa backend: hsa_memory_copy of a device word at %p "
                  "failed", (void *)c->u.sig.word);
    abort();
}

static void pump_async(dsm_sdma_queue_t *q)
{
    hsaq_t *hq = q->priv;
    hsas_t *hs = q->sdma->priv;
    uint64_t sub = __atomic_load_n(&q->submitted, __ATOMIC_ACQUIRE);

    async_reap(hq);
    while (hq->enc < sub) {
        uint64_t slot = hq->enc & (q->depth - 1);
        const dsm_cmd_t *c = &q->ring[slot];
        const slot_regs_t *r = &hq->regs[slot];
        size_t piece, n;
        int copy = cmd_is_copy(c), ok = 1;

        if (copy && !hq->enc_locked) {
            if (!cmd_lock(hs, hq, c, slot)) {
                cmd_unlock(hs, hq, slot);
                copy = 0; /* the CPU copies, in order, below */
            } else {
                hq->enc_locked = 1;
            }
        }
        if (copy) {
            if (!piece_dwords(c, hq->enc_off, &piece)) {
                piece = 0;
            } else if ((piece = clamp_piece(hq, c, slot, hq->enc_off,
                                            piece)) == 0) {
                break; /* not reached: a locked range holds each byte */
            } else if (hq->atail - hq->ahead + 3 > ASYNC_INFLIGHT) {
                break; /* enough in flight */
            } else {
                const char *src = (const char *)c->u.copy.src + hq->enc_off;
                char *dst = (char *)c->u.copy.dst + hq->enc_off;
                int last = hq->enc_off + piece >= c->u.copy.len;
                uint64_t upto = last ? hq->enc + 1 : hq->enc;
                n = piece;
                if (c->op == DSM_CMD_COPY) {
                    ok = async_copy(hq, (void *)sgva(r, dst),
                                    (const void *)sgva(r, src), n, upto);
                } else if (c->op == DSM_CMD_BCAST) {
                    char *d2 = (char *)c->u.copy.dst2 + hq->enc_off;
                    ok = async_copy(hq, (void *)sgva(r, dst),
                                    (const void *)sgva(r, src), n, hq->enc) &&
                         async_copy(hq, (void *)sgva(r, d2),
                                    (const void *)sgva(r, src), n, upto);
                } else {
                    void *b = (void *)gva(hq->bounce_reg, hq->bounce);
                    ok = async_copy(hq, b, (const void *)sgva(r, src), n,
                                    hq->enc) &&
                         async_copy(hq, (void *)sgva(r, src),
                                    (const void *)sgva(r, dst), n,
                                    hq->enc) &&
                         async_copy(hq, (void *)sgva(r, dst), b, n, upto);
                }
                if (!ok) {
                    dsm_log_error("hsa backend: hsa_amd_memory_async_copy "
                                  "of %zu bytes failed", n);
                    abort();
                }
            }
            hq->enc_off += piece;
            if (hq->enc_off < c->u.copy.len)
                continue;
            if (!piece) {
                /* Empty: done when everything before it is. */
                if (hq->ahead != hq->atail)
                    break;
                __atomic_store_n(&hq->adone, hq->enc + 1, __ATOMIC_RELEASE);
            }
        } else {
            /* WAIT, SIGNAL, SIGNAL_ADD (and copies the engine cannot
             * reach): on the host, after the copies before them. */
            if (hq->ahead != hq->atail || !exec_host(c))
                break;
            if (cmd_is_copy(c))
                hq->fallbacks++;
            __atomic_store_n(&hq->adone, hq->enc + 1, __ATOMIC_RELEASE);
        }
        hq->enc++;
        hq->enc_off = 0;
        hq->enc_locked = 0;
    }
    __atomic_store_n(&hq->enc_pub, hq->enc, __ATOMIC_RELEASE);
}

static void hsa_submit(dsm_sdma_queue_t *q, uint64_t upto)
{
    (void)upto;
    pump(q);
}

static uint64_t hsa_poll(dsm_sdma_queue_t *q, int help)
{
    hsaq_t *hq = q->priv;
    hsas_t *hs = q->sdma->priv;
    uint64_t done, i;

    (void)help;
    pump(q);
    done = engine_done(hq);
    /* Completions are reported only once walked: the walk notifies the
     * sleepers of signals the engine delivered and unlocks the memory,
     * and the slot may not be reused before. */
    if (done > __atomic_load_n(&hq->seen, __ATOMIC_ACQUIRE) &&
        !__atomic_exchange_n(&hq->walking, 1, __ATOMIC_ACQUIRE)) {
        for (i = hq->seen; i < done; i++) {
            uint64_t slot = i & (q->depth - 1);
            const dsm_cmd_t *c = &q->ring[slot];
            if (c->wake)
                dsm_wake_notify(c->wake);
            if (c->wake_app)
                dsm_wake_notify(c->wake_app);
            cmd_unlock(hs, hq, slot);
        }
        __atomic_store_n(&hq->seen, done, __ATOMIC_RELEASE);
        __atomic_store_n(&q->completed, done, __ATOMIC_RELEASE);
        __atomic_store_n(&hq->walking, 0, __ATOMIC_RELEASE);
        dsm_wake_notify(q->sdma->app_wake);
        /* Space freed in the ring: what was held back goes now. */
        pump(q);
    }
    return __atomic_load_n(&hq->seen, __ATOMIC_ACQUIRE);
}

/* ------------------------------------------------------------ events */

/* The TRAP at the end of each batch raises the event; this thread turns
 * it into the layer's wake-ups (the proxy retires, waiters re-check). */
static int async_busy(void *arg)
{
    hsas_t *hs = arg;
    dsm_sdma_t *s = hs->s;
    int nq = __atomic_load_n(&s->num_queues, __ATOMIC_ACQUIRE);
    if (hs->stop)
        return 1;
    for (int i = 0; i < nq; i++) {
        hsaq_t *hq = s->queues[i]->priv;
        if (hq && (__atomic_load_n(&hq->ahead, __ATOMIC_ACQUIRE) !=
                       __atomic_load_n(&hq->atail, __ATOMIC_ACQUIRE) ||
                   __atomic_load_n(&hq->enc, __ATOMIC_ACQUIRE) !=
                       __atomic_load_n(&s->queues[i]->submitted,
                                       __ATOMIC_ACQUIRE)))
            return 1;
    }
    return 0;
}

static void *event_main(void *arg)
{
    hsas_t *hs = arg;
    dsm_sdma_t *s = hs->s;

    while (!hs->stop) {
        int nq, i, moved = 0;
        if (!g.async)
            g.api.wait_on_event(hs->event, EVENT_WAIT_MS);
        else if (async_busy(hs))
            sched_yield(); /* no interrupt for async copies: poll them */
        else
            dsm_wake_sleep(s->wake, async_busy, hs,
                           (uint64_t)EVENT_WAIT_MS * 1000000ull);
        nq = __atomic_load_n(&s->num_queues, __ATOMIC_ACQUIRE);
        for (i = 0; i < nq; i++) {
            dsm_sdma_queue_t *q = s->queues[i];
            hsaq_t *hq = q->priv;
            if (!hq)
                continue;
            uint64_t before = __atomic_load_n(&hq->seen, __ATOMIC_ACQUIRE);
            if (hsa_poll(q, 0) != before)
                moved = 1;
        }
        if (moved) {
            dsm_wake_notify(s->wake);
            dsm_wake_notify(s->app_wake);
        }
    }
    return NULL;
}

/* ------------------------------------------------------------ open */

/* Whether this process may create an SDMA queue (rights on /dev/kfd, a
 * kernel that offers them): one is created and destroyed. */
static int queue_possible(hsas_t *hs)
{
    HsaQueueResource res;
    void *ring = NULL;
    hsa_reg_t *reg;
    HSAKMT_STATUS st;

    if (posix_memalign(&ring, 4096, 4096))
        return 0;
    memset(ring, 0, 4096);
    reg = reg_get(hs, ring, 4096);
    if (!reg) {
        free(ring);
        snprintf(g.why, sizeof(g.why), "hsa_amd_memory_lock failed");
        return 0;
    }
    memset(&res, 0, sizeof(res));
    st = make_queue(ring, 4096, &res);
    if (st == HSAKMT_STATUS_SUCCESS)
        g.api.destroy_queue(res.QueueId);
    else if (settings.hsa_sdma_engine < 0)
        snprintf(g.why, sizeof(g.why),
                 "hsaKmtCreateQueue(node %u, HSA_QUEUE_SDMA) failed with "
                 "status %d", (unsigned)g.node, (int)st);
    else
        snprintf(g.why, sizeof(g.why), "%s on node %u failed with status %d",
                 queue_call(), (unsigned)g.node, (int)st);
    reg_put(hs, reg);
    free(ring);
    return st == HSAKMT_STATUS_SUCCESS;
}

static dsm_status_t hsa_open(dsm_sdma_t *s)
{
    hsas_t *hs;
    HsaEventDescriptor ed;

    if (settings.hsa_max_queues < 0) {
        dsm_log_error("hsa backend: SHMEM_HSA_MAX_QUEUES=%ld: must be >= 0 "
                      "(0: no cap)", settings.hsa_max_queues);
        return DSM_ERR_INVAL;
    }
    if (!g.loaded && hsa_probe() != DSM_OK)
        return DSM_ERR_NO_DEVICE;
    hs = calloc(1, sizeof(*hs));
    if (!hs)
        return DSM_ERR_NOMEM;
    hs->s = s;
    pthread_mutex_init(&hs->reg_lock, NULL);
    pthread_mutex_init(&hs->devq_lock, NULL);
    g.async = 0;
    if (settings.hsa_sdma_engine >= 0 && g.api.create_queue &&
        !g.api.create_queue_ext) {
        dsm_log_error("hsa backend: SHMEM_HSA_SDMA_ENGINE=%ld needs "
                      "hsaKmtCreateQueueExt (ROCm >= 6.4, KFD interface >= "
                      "1.17); %s lacks it",
                      settings.hsa_sdma_engine, g.api.kmt_from);
        goto err_free;
    }
    if (!g.api.create_queue || g.api.kmt_open() != HSAKMT_STATUS_SUCCESS) {
        g.async = 1;
        snprintf(g.why, sizeof(g.why), "%s",
                 g.api.create_queue ? "hsaKmtOpenKFD failed"
                                    : "no hsaKmt* entry points");
    } else if (!queue_possible(hs)) {
        g.api.kmt_close();
        if (settings.hsa_sdma_engine >= 0) {
            /* Asked for by name: no quiet fallback elsewhere. */
            dsm_log_error("hsa backend: SHMEM_HSA_SDMA_ENGINE=%ld: %s",
                          settings.hsa_sdma_engine, g.why);
            goto err_free;
        }
        g.async = 1;
    }
    if (g.async) {
        if (!g.api.async_copy || !g.api.signal_create ||
            !g.api.signal_destroy || !g.api.signal_load) {
            dsm_log_error("hsa backend: no SDMA queue (%s) and no "
                          "hsa_amd_memory_async_copy to fall back to", g.why);
            goto err_free;
        }
        dsm_debug("hsa backend: no SDMA queue (%s): async copies", g.why);
        goto start;
    }
    memset(&ed, 0, sizeof(ed));
    ed.EventType = HSA_EVENTTYPE_SIGNAL;
    ed.NodeId = g.node;
    if (g.api.create_event(&ed, false, false, &hs->event) !=
        HSAKMT_STATUS_SUCCESS) {
        dsm_log_error("hsa backend: hsaKmtCreateEvent failed");
        g.api.kmt_close();
        goto err_free;
    }
start:
    s->priv = hs;
    if (pthread_create(&hs->event_thread, NULL, event_main, hs) == 0) {
        hs->event_running = 1;
        pthread_setname_np(hs->event_thread, "dsm-hsa-event");
    }
    return DSM_OK;

err_free:
    pthread_mutex_destroy(&hs->devq_lock);
    pthread_mutex_destroy(&hs->reg_lock);
    free(hs);
    return DSM_ERR_NO_DEVICE;
}

static void queue_teardown(hsas_t *hs, dsm_sdma_queue_t *q)
{
    hsaq_t *hq = q->priv;

    if (!hq)
        return;
    if (hq->have_queue) {
        g.api.destroy_queue(hq->res.QueueId);
        queue_give();
    }
    /* Copies in flight finish (each depends only on earlier ones). */
    while (hq->asig && hq->ahead != hq->atail) {
        async_reap(hq);
        sched_yield();
    }
    free(hq->asig);
    /* Chains that never fired still hold their memory. */
    for (uint64_t i = 0; hq->regs && i < q->depth; i++) {
        cmd_unlock(hs, hq, i);
        slot_regs_free(&hq->regs[i]);
    }
    if (hq->bounce_reg)
        reg_put(hs, hq->bounce_reg);
    if (hq->done_reg)
        reg_put(hs, hq->done_reg);
    if (hq->ring_reg)
        reg_put(hs, hq->ring_reg);
    pthread_mutex_destroy(&hq->pump_lock);
    free(hq->regs);
    free(hq->bounce);
    free(hq->done);
    free(hq->ringbuf);
    free(hq);
    q->priv = NULL;
}

/* ------------------------------------------------------------ device queue */

/* Whether s can give kernels a queue: the hsa backend with SDMA queues. */
static hsas_t *devq_backend(dsm_sdma_t *s, char *why, size_t whylen)
{
    if (!s || s->ops != &dsm_sdma_hsa_ops || !s->priv) {
        snprintf(why, whylen,
                 "needs the hsa sdma backend (this PE runs '%s')",
                 s && s->ops ? s->ops->name : "none");
        return NULL;
    }
    if (g.async) {
        snprintf(why, whylen,
                 "the hsa backend runs hsa_amd_memory_async_copy here (no "
                 "SDMA queue: %s), and kernels need an SDMA queue of their "
                 "own", g.why);
        return NULL;
    }
    return s->priv;
}

static void devq_teardown(hsas_t *hs, int stats)
{
    hsa_devq_t *d = &hs->devq;

    if (d->open) {
        /* The engine stops before anything it reads goes. */
        g.api.destroy_queue(d->res.QueueId);
        queue_give();
        if (stats) {
            const dsm_sdma_ring_t *r = (const dsm_sdma_ring_t *)d->ctl;
            fprintf(stderr,
                    "dmashmem: hsa stats PE %d device queue (kernels): "
                    "packets %llu doorbells %llu\n",
                    dsm_log_pe, (unsigned long long)r->packets,
                    (unsigned long long)r->doorbells);
        }
    }
    for (uint32_t i = 0; i < d->maps.n; i++)
        reg_put(hs, d->maps.v[i]);
    slot_regs_free(&d->maps);
    if (d->ctl_reg)
        reg_put(hs, d->ctl_reg);
    if (d->ring_reg)
        reg_put(hs, d->ring_reg);
    free(d->ctl);
    free(d->ringbuf);
    memset(d, 0, sizeof(*d));
}

dsm_status_t dsm_sdma_devq_open(dsm_sdma_t *s, size_t table_bytes,
                                dsm_sdma_devq_t *out, char *why,
                                size_t whylen)
{
    hsas_t *hs = devq_backend(s, why, whylen);
    hsa_devq_t *d;
    dsm_sdma_ring_t *r;
    HSAKMT_STATUS st;
    long pg = sysconf(_SC_PAGESIZE);

    if (!hs)
        return DSM_ERR_UNSUPPORTED;
    d = &hs->devq;
    pthread_mutex_lock(&hs->devq_lock);
    if (d->open)
        goto done;
    d->ctl_bytes = (DEVQ_TABLE_OFF + table_bytes + (size_t)pg - 1) &
                   ~((size_t)pg - 1);
    if (posix_memalign((void **)&d->ringbuf, (size_t)pg, DEVQ_RING_BYTES) ||
        posix_memalign((void **)&d->ctl, (size_t)pg, d->ctl_bytes)) {
        snprintf(why, whylen, "out of memory for the device queue");
        goto fail;
    }
    memset(d->ringbuf, 0, DEVQ_RING_BYTES);
    memset(d->ctl, 0, d->ctl_bytes);
    d->ring_reg = reg_get(hs, d->ringbuf, DEVQ_RING_BYTES);
    d->ctl_reg = reg_get(hs, d->ctl, d->ctl_bytes);
    if (!d->ring_reg || !d->ctl_reg) {
        snprintf(why, whylen, "hsa_amd_memory_lock of the device queue's "
                 "ring or control block failed");
        goto fail;
    }
    if (!queue_take("the device API's SDMA queue")) {
        snprintf(why, whylen,
                 "no SDMA queue left for kernels: SHMEM_HSA_MAX_QUEUES=%ld "
                 "are in use", settings.hsa_max_queues);
        devq_teardown(hs, 0);
        pthread_mutex_unlock(&hs->devq_lock);
        return DSM_ERR_OVERFLOW;
    }
    st = make_queue(d->ringbuf, DEVQ_RING_BYTES, &d->res);
    if (st != HSAKMT_STATUS_SUCCESS) {
        queue_give();
        snprintf(why, whylen,
                 "%s on node %u for the device queue failed with status %d",
                 queue_call(), (unsigned)g.node, (int)st);
        goto fail;
    }
    d->open = 1;
    /* The ring's words as kernels see them: GPU addresses throughout
     * (the read/write pointers and the doorbell as the thunk mapped
     * them); the host never produces into this ring (but a test over
     * the model, where a GPU address is the host address). */
    r = (dsm_sdma_ring_t *)d->ctl;
    r->buf = (uint32_t *)(uintptr_t)gva(d->ring_reg, d->ringbuf);
    r->size = DEVQ_RING_BYTES;
    r->rptr = d->res.Queue_read_ptr_aql;
    r->wptr = d->res.Queue_write_ptr_aql;
    r->doorbell = d->res.Queue_DoorBell_aql;
    r->reserved = r->committed = *r->wptr;
    if (g.api.model && g.api.model_kick)
        r->kick = model_kick;
    d->out.ring = gva(d->ctl_reg, d->ctl);
    d->out.done = gva(d->ctl_reg, d->ctl + DEVQ_DONE_OFF);
    d->out.table = gva(d->ctl_reg, d->ctl + DEVQ_TABLE_OFF);
    d->out.table_host = d->ctl + DEVQ_TABLE_OFF;
    dsm_debug("hsa: device queue %u (ring %u KiB) for kernels",
              (unsigned)d->res.QueueId, DEVQ_RING_BYTES / 1024u);
done:
    *out = d->out;
    pthread_mutex_unlock(&hs->devq_lock);
    return DSM_OK;

fail:
    devq_teardown(hs, 0);
    pthread_mutex_unlock(&hs->devq_lock);
    return DSM_ERR_NO_DEVICE;
}

dsm_status_t dsm_sdma_devq_map(dsm_sdma_t *s, const void *p, size_t len,
                               uint64_t *gpu, char *why, size_t whylen)
{
    hsas_t *hs = devq_backend(s, why, whylen);
    slot_regs_t *m;
    uint32_t first;
    dsm_status_t st = DSM_OK;

    if (!hs)
        return DSM_ERR_UNSUPPORTED;
    pthread_mutex_lock(&hs->devq_lock);
    m = &hs->devq.maps;
    first = m->n;
    /* Pages commands already hold stay their own ranges (no two locks
     * overlap): the GPU must see the pieces back to back, since a kernel
     * adds offsets to one base per range it was given. */
    if (!reg_cover(hs, m, p, len)) {
        snprintf(why, whylen,
                 "hsa_amd_memory_lock of %zu bytes at %p failed", len, p);
        st = DSM_ERR_NOMEM;
    }
    for (uint32_t i = first + 1; st == DSM_OK && i < m->n; i++)
        if (gva(m->v[i - 1], (void *)m->v[i - 1]->base) + m->v[i - 1]->len !=
            gva(m->v[i], (void *)m->v[i]->base)) {
            snprintf(why, whylen,
                     "%zu bytes at %p are locked for the GPU in pieces "
                     "that it does not see back to back", len, p);
            st = DSM_ERR_UNSUPPORTED;
        }
    if (st == DSM_OK)
        *gpu = gva(m->v[first], p);
    pthread_mutex_unlock(&hs->devq_lock);
    return st;
}

static void print_queue_stats(dsm_sdma_queue_t *q)
{
    hsaq_t *hq = q->priv;
    fprintf(stderr,
            "dmashmem: hsa stats PE %d queue %d (engine %d%s): packets %llu "
            "doorbells %llu batches %llu commands %llu cpu-run %llu%s\n",
            dsm_log_pe, q->index, q->engine, q->chain ? ", chains" : "",
            (unsigned long long)(g.async ? hq->copies : hq->ring.packets),
            (unsigned long long)hq->ring.doorbells,
            (unsigned long long)hq->batches,
            (unsigned long long)q->stats.commands,
            (unsigned long long)hq->fallbacks,
            g.async ? " (async copies: packets = hsa_amd_memory_async_copy "
                      "calls)"
                    : "");
}

/* hsa_shut_down and the unload, once nothing of ours is mapped. */
static void api_release(void)
{
    g.api.shut_down();
    dsm_hsa_api_unload(&g.api);
    g.loaded = 0;
    g.closed_early = 0;
    __atomic_store_n(&ndevmem, 0, __ATOMIC_RELEASE);
}

static void hsa_close(dsm_sdma_t *s)
{
    hsas_t *hs = s->priv;
    int i;

    hs->stop = 1;
    if (hs->event_running) {
        if (!g.async && g.api.set_event)
            g.api.set_event(hs->event);
        dsm_wake_notify(s->wake);
        pthread_join(hs->event_thread, NULL);
    }
    devq_teardown(hs, s->cfg.stats);
    for (i = 0; i < s->num_queues; i++) {
        if (s->cfg.stats && s->queues[i]->priv)
            print_queue_stats(s->queues[i]);
        queue_teardown(hs, s->queues[i]);
    }
    if (!g.async) {
        g.api.destroy_event(hs->event);
        g.api.kmt_close();
    }
    pthread_mutex_destroy(&hs->devq_lock);
    pthread_mutex_destroy(&hs->reg_lock);
    free(hs);
    s->priv = NULL;
    pthread_mutex_lock(&devmem_lock);
    if (devmem_live) {
        /* The device heap is released after the layer closes. */
        g.closed_early = 1;
        pthread_mutex_unlock(&devmem_lock);
        return;
    }
    pthread_mutex_unlock(&devmem_lock);
    api_release();
}

static dsm_status_t hsa_queue_init(dsm_sdma_queue_t *q)
{
    hsas_t *hs = q->sdma->priv;
    hsaq_t *hq;
    HSAKMT_STATUS st;

    if (posix_memalign((void **)&hq, DSM_CACHELINE, sizeof(*hq)))
        return DSM_ERR_NOMEM;
    memset(hq, 0, sizeof(*hq));
    pthread_mutex_init(&hq->pump_lock, NULL);
    q->priv = hq;
    if (posix_memalign((void **)&hq->ringbuf, 4096, RING_BYTES) ||
        posix_memalign((void **)&hq->done, DSM_CACHELINE, DSM_CACHELINE) ||
        posix_memalign((void **)&hq->bounce, 4096, SWAP_BOUNCE))
        goto err;
    memset(hq->ringbuf, 0, RING_BYTES);
    memset(hq->done, 0, DSM_CACHELINE);
    hq->regs = calloc(q->depth, sizeof(*hq->regs));
    hq->ring_reg = reg_get(hs, hq->ringbuf, RING_BYTES);
    hq->done_reg = reg_get(hs, hq->done, sizeof(uint32_t));
    hq->bounce_reg = reg_get(hs, hq->bounce, SWAP_BOUNCE);
    if (!hq->regs || !hq->ring_reg || !hq->done_reg || !hq->bounce_reg)
        goto err;
    if (g.async) {
        hq->asig = calloc(ASYNC_INFLIGHT, sizeof(*hq->asig));
        return hq->asig ? DSM_OK : DSM_ERR_NOMEM;
    }
    if (!queue_take(q->chain ? "an SDMA queue for a chain queue"
                              : "an SDMA queue for an RMA queue")) {
        queue_teardown(hs, q);
        return DSM_ERR_OVERFLOW;
    }
    st = make_queue(hq->ringbuf, RING_BYTES, &hq->res);
    if (st != HSAKMT_STATUS_SUCCESS) {
        queue_give();
        dsm_log_error("hsa backend: %s on node %u failed with status %d",
                      queue_call(), (unsigned)g.node, (int)st);
        goto err;
    }
    hq->have_queue = 1;
    hq->ring.buf = hq->ringbuf;
    hq->ring.size = RING_BYTES;
    hq->ring.rptr = hq->res.Queue_read_ptr_aql;
    hq->ring.wptr = hq->res.Queue_write_ptr_aql;
    hq->ring.doorbell = hq->res.Queue_DoorBell_aql;
    hq->ring.reserved = hq->ring.committed = *hq->ring.wptr;
    if (g.api.model && g.api.model_kick)
        hq->ring.kick = model_kick;
    return DSM_OK;

err:
    queue_teardown(hs, q);
    return DSM_ERR_NOMEM;
}

static void hsa_queue_fini(dsm_sdma_queue_t *q)
{
    /* close() tore the queues down; this is the error path before it. */
    if (q->priv && q->sdma->priv)
        queue_teardown(q->sdma->priv, q);
}

static uint32_t hsa_caps(const dsm_sdma_t *s)
{
    (void)s;
    /* BCAST and SWAP are emulated with COPY_LINEARs: no NATIVE bits. The
     * engines reach the device heap (ours and the local peers'). */
    return DSM_SDMA_CAP_HOST_MEM | DSM_SDMA_CAP_DEVICE_MEM |
           DSM_SDMA_CAP_SIGNAL_ADD;
}

static const char *hsa_describe(const dsm_sdma_t *s)
{
    static char buf[768];
    if (g.async) {
        snprintf(buf, sizeof(buf),
                 "hsa: hsa_amd_memory_async_copy on %s (%d GPU%s), no SDMA "
                 "queue (%s): WAIT/SIGNAL run on the host%s",
                 g.name, g.ngpus, g.ngpus == 1 ? "" : "s", g.why,
                 g.api.model ? "; ENGINE MODEL (no GPU: copies executed on "
                               "the host)"
                             : "");
        return buf;
    }
    char cap[64] = "";
    if (settings.hsa_max_queues > 0)
        snprintf(cap, sizeof(cap), " (at most %ld: SHMEM_HSA_MAX_QUEUES)",
                 settings.hsa_max_queues);
    snprintf(buf, sizeof(buf),
             "hsa: %d SDMA queue%s%s through %s "
             "on %s (KFD node %u, %d GPU%s), thunk from %s%s%s",
             s->num_queues, s->num_queues == 1 ? "" : "s", cap, queue_call(),
             g.name,
             (unsigned)g.node, g.ngpus, g.ngpus == 1 ? "" : "s",
             g.api.kmt_from ? g.api.kmt_from : "?",
             g.api.create_queue_ext && settings.hsa_sdma_engine < 0
                 ? ", hsaKmtCreateQueueExt present"
                 : "",
             g.api.model ? "; ENGINE MODEL (no GPU: packets executed on "
                           "the host)"
                         : "");
    return buf;
}

/* ------------------------------------------------------------ GPU memory */

/* The GPU side (sdma.h, dsm_sdma_gpu_ops_t): the device heap, which
 * pointers are device memory, synchronous copies. No streams (the
 * on-stream routines are cuda's) and no host registration of its own:
 * commands lock the host memory they touch (reg_cover). */

static int hsa_gpu_active(void)
{
    return g.loaded && !g.closed_early;
}

static int hsa_gpu_device(void)
{
    return g.devindex;
}

static dsm_status_t hsa_register_host(void *p, size_t len)
{
    (void)p;
    (void)len;
    return DSM_OK;
}

static void hsa_unregister_host_all(void)
{
}

/* The device heap's pool: the GPU's device-local memory, global,
 * coarse-grained (ROCr's VRAM pool; fine-grained pools are host memory
 * or coherent VRAM, slower for the engines and not what hipMalloc
 * gives), allocatable by the runtime. */
struct pool_walk {
    hsa_amd_memory_pool_t pool;
    size_t granule;
    int found;
};

static hsa_status_t pool_cb(hsa_amd_memory_pool_t p, void *arg)
{
    struct pool_walk *w = arg;
    hsa_amd_segment_t seg;
    uint32_t flags = 0;
    bool alloc = false;
    size_t granule = 0;

    if (g.api.pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &seg) !=
            HSA_STATUS_SUCCESS ||
        seg != HSA_AMD_SEGMENT_GLOBAL ||
        g.api.pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS,
                            &flags) != HSA_STATUS_SUCCESS ||
        !(flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED) ||
        g.api.pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED,
                            &alloc) != HSA_STATUS_SUCCESS ||
        !alloc)
        return HSA_STATUS_SUCCESS;
    if (g.api.pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE,
                            &granule) != HSA_STATUS_SUCCESS)
        granule = 0;
    w->pool = p;
    w->granule = granule;
    w->found = 1;
    return HSA_STATUS_INFO_BREAK;
}

static int devmem_add(void *p, size_t len, int attached)
{
    pthread_mutex_lock(&devmem_lock);
    uint32_t i = ndevmem;
    /* A released slot first: init/finalize cycles do not run it out. */
    for (uint32_t k = 0; k < ndevmem; k++)
        if (!devmem[k].reg.len) {
            i = k;
            break;
        }
    if (i == DEVMEM_MAX) {
        pthread_mutex_unlock(&devmem_lock);
        return 0;
    }
    devmem[i].attached = attached;
    devmem[i].reg.base = (uintptr_t)p;
    devmem[i].reg.agent = p; /* the GPU's address is the pointer */
    devmem[i].reg.dev = 1;
    devmem[i].reg.refs = 1;
    __atomic_store_n(&devmem[i].reg.len, len, __ATOMIC_RELEASE);
    if (i == ndevmem)
        __atomic_store_n(&ndevmem, i + 1, __ATOMIC_RELEASE);
    devmem_live++;
    pthread_mutex_unlock(&devmem_lock);
    return 1;
}

static const char *hsa_err(hsa_status_t st)
{
    const char *m = NULL;
    if (!g.api.status_string || g.api.status_string(st, &m) !=
                                    HSA_STATUS_SUCCESS || !m)
        return "unknown status";
    return m;
}

static dsm_status_t hsa_heap_create_handle(size_t *size, void *handle,
                                           size_t *handle_len, void **base,
                                           char *why, size_t whylen)
{
    struct pool_walk w = {0};
    hsa_amd_ipc_memory_t h;
    hsa_status_t st;
    void *p = NULL;
    size_t n, gran, pg = (size_t)sysconf(_SC_PAGESIZE);

    if (!g.api.iterate_pools || !g.api.pool_get_info ||
        !g.api.pool_allocate || !g.api.pool_free || !g.api.ipc_create ||
        !g.api.ipc_attach || !g.api.ipc_detach || !g.api.memory_copy) {
        snprintf(why, whylen,
                 "%s lacks hsa_amd_memory_pool_allocate, "
                 "hsa_amd_ipc_memory_* or hsa_memory_copy",
                 settings.hsa_library && *settings.hsa_library
                     ? settings.hsa_library
                     : "libhsa-runtime64.so.1");
        return DSM_ERR_UNSUPPORTED;
    }
    if (*handle_len < sizeof(h)) {
        snprintf(why, whylen, "an IPC handle of %zu bytes does not fit",
                 sizeof(h));
        return DSM_ERR_UNSUPPORTED;
    }
    g.api.iterate_pools(g.gpu, pool_cb, &w);
    if (!w.found) {
        snprintf(why, whylen,
                 "GPU %d (%s) has no device-local coarse-grained memory "
                 "pool the runtime may allocate from", g.devindex, g.name);
        return DSM_ERR_UNSUPPORTED;
    }
    gran = w.granule > pg ? w.granule : pg;
    n = (*size + gran - 1) / gran * gran;
    st = g.api.pool_allocate(w.pool, n, 0, &p);
    if (st != HSA_STATUS_SUCCESS) {
        dsm_log_error("hsa backend: hsa_amd_memory_pool_allocate of a "
                      "%zu-byte device heap on GPU %d failed (%s): lower "
                      "SHMEM_DEVICE_HEAP_SIZE, or 0 for none",
                      n, g.devindex, hsa_err(st));
        return DSM_ERR_NOMEM;
    }
    memset(&h, 0, sizeof(h));
    st = g.api.ipc_create(p, n, &h);
    if (st != HSA_STATUS_SUCCESS) {
        dsm_log_error("hsa backend: hsa_amd_ipc_memory_create of the "
                      "device heap failed (%s)", hsa_err(st));
        g.api.pool_free(p);
        return DSM_ERR_NO_DEVICE;
    }
    if (!devmem_add(p, n, 0)) {
        g.api.pool_free(p);
        return DSM_ERR_OVERFLOW;
    }
    memcpy(handle, &h, sizeof(h));
    *handle_len = sizeof(h);
    *size = n;
    *base = p;
    return DSM_OK;
}

static dsm_status_t hsa_heap_import_handle(const void *handle,
                                           size_t handle_len, size_t size,
                                           void **base)
{
    hsa_amd_ipc_memory_t h;
    hsa_status_t st;
    void *p = NULL;

    if (handle_len != sizeof(h))
        return DSM_ERR_INVAL;
    memcpy(&h, handle, sizeof(h));
    /* Mapped for our GPU: its engines then reach the peer's heap. */
    st = g.api.ipc_attach(&h, size, 1, &g.gpu, &p);
    if (st != HSA_STATUS_SUCCESS) {
        dsm_log_error("hsa backend: hsa_amd_ipc_memory_attach of a local "
                      "peer's %zu-byte device heap failed (%s)", size,
                      hsa_err(st));
        return DSM_ERR_NO_DEVICE;
    }
    if (!devmem_add(p, size, 1)) {
        g.api.ipc_detach(p);
        return DSM_ERR_OVERFLOW;
    }
    *base = p;
    return DSM_OK;
}

static void hsa_heap_unmap(void *base)
{
    devmem_t *d = devmem_find(base);
    int release;

    if (!d || d->reg.base != (uintptr_t)base)
        return;
    if (d->attached)
        g.api.ipc_detach(base);
    else
        g.api.pool_free(base);
    pthread_mutex_lock(&devmem_lock);
    __atomic_store_n(&d->reg.len, 0, __ATOMIC_RELEASE);
    release = --devmem_live == 0 && g.closed_early;
    pthread_mutex_unlock(&devmem_lock);
    if (release)
        api_release();
}

/* The device heaps from the table; anything else asked of ROCr, as
 * cuda asks the driver (private hipMalloc'ed buffers are device memory). */
static int hsa_ptr_is_device(const void *p)
{
    uintptr_t b;
    size_t n;
    return devmem_find(p) != NULL || devptr_range(p, &b, &n);
}

static dsm_status_t hsa_copy_sync(void *dst, const void *src, size_t n)
{
    hsa_status_t st;
    if (!n)
        return DSM_OK;
    st = g.api.memory_copy(dst, src, n);
    if (st != HSA_STATUS_SUCCESS) {
        dsm_log_error("hsa backend: hsa_memory_copy of %zu bytes failed (%s)",
                      n, hsa_err(st));
        return DSM_ERR_NO_DEVICE;
    }
    return DSM_OK;
}

static int hsa_launch_counts(uint64_t *kernels, uint64_t *host_fns)
{
    (void)kernels;
    (void)host_fns;
    return 0;
}

static uint64_t hsa_gpu_view(const void *p)
{
    return hsa_ptr_is_device(p) ? (uint64_t)(uintptr_t)p : 0;
}

static const dsm_sdma_gpu_ops_t hsa_gpu_ops = {
    .name = "hsa",
    .active = hsa_gpu_active,
    .device = hsa_gpu_device,
    .uid = NULL, /* no PCI identity: no sharing note (that is CUDA MPS's) */
    .register_host = hsa_register_host,
    .unregister_host_all = hsa_unregister_host_all,
    .heap_create_handle = hsa_heap_create_handle,
    .heap_import_handle = hsa_heap_import_handle,
    .heap_unmap = hsa_heap_unmap,
    .ptr_is_device = hsa_ptr_is_device,
    .copy_sync = hsa_copy_sync,
    .launch_counts = hsa_launch_counts,
    .gpu_view = hsa_gpu_view,
};

const dsm_sdma_backend_ops_t dsm_sdma_hsa_ops = {
    .size = sizeof(dsm_sdma_backend_ops_t),
    .name = "hsa",
    .probe = hsa_probe,
    .open = hsa_open,
    .close = hsa_close,
    .queue_init = hsa_queue_init,
    .queue_fini = hsa_queue_fini,
    .submit = hsa_submit,
    .poll = hsa_poll,
    .caps = hsa_caps,
    .describe = hsa_describe,
    .gpu_configure = hsa_configure,
    .gpu = &hsa_gpu_ops,
};
