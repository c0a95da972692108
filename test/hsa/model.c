/*
 * A model of AMD's SDMA engines behind the hsa-runtime64 and hsaKmt entry
 * points the hsa backend calls (src/sdma/hsa/load.c), so that the backend
 * and everything above it run where no AMD GPU is: the library is loaded
 * in place of libhsa-runtime64.so.1 (SHMEM_HSA_LIBRARY).
 *
 * What it models:
 *  - agents: one CPU and HSA_MODEL_GPUS GPUs (default 1), KFD nodes 1..n;
 *  - memory: hsa_amd_memory_lock/unlock keep a table of ranges the
 *    engines may touch (the agent address is the host address);
 *  - memory pools (hsa_amd_agent_iterate_memory_pools, _pool_get_info,
 *    _pool_allocate, _pool_free): the CPU agent has one system pool
 *    (global, fine-grained, kernarg), each GPU one device-local pool
 *    (global, coarse-grained; none with HSA_MODEL_NO_DEVICE_POOL=1).
 *    "Device memory" is host memory here: a memfd mapped shared, which
 *    the engines reach without a lock and which hsa_amd_memory_lock
 *    refuses (ROCr locks host memory only). The pointer given out is a
 *    PROT_NONE mapping (VRAM need not be host-visible): a CPU access by
 *    the runtime is a SIGSEGV, so the tests prove the CPU never touches
 *    device memory; the engines, the async copies and hsa_memory_copy
 *    use a second read-write mapping (HSA_MODEL_DEVICE_CPU_ACCESS=1: one
 *    read-write mapping, as on large-BAR systems);
 *  - IPC of device memory between processes (hsa_amd_ipc_memory_create,
 *    _attach, _detach). This is how the MODEL does it, not how ROCr does
 *    (ROCr exports a dmabuf/KFD handle): the handle carries the owner's
 *    pid, the number of the memfd in the owner and the length; attach
 *    takes the fd with pidfd_open + pidfd_getfd, or, where ptrace rules
 *    forbid that, opens /proc/<pid>/fd/<n>, and maps it shared, so both
 *    processes see the same bytes; the engines reach the mapping;
 *  - hsa_memory_copy: a synchronous copy (memmove) between host and
 *    device memory; hsa_amd_pointer_info: pool allocations (HSA, owned
 *    by GPU 1 or the CPU), IPC mappings, locked ranges, else UNKNOWN;
 *  - queues: hsaKmtCreateQueue(HSA_QUEUE_SDMA or _SDMA_XGMI) on a ring in
 *    locked memory (256-byte aligned, power-of-two size) returns read and
 *    write pointers and a doorbell (64-bit byte offsets that only grow),
 *    and starts one thread per queue that executes the packets from the
 *    read pointer up to the doorbell's value: nothing before a doorbell,
 *    everything up to the doorbell after it; the read pointer follows;
 *  - packets, decoded from the layouts in shmemx_sdma_pkt.h: COPY_LINEAR (count
 *    + 1 bytes, at most DSM_SDMA_COPY_MAX), FENCE (32-bit write), ATOMIC
 *    (add64 only), POLL_REGMEM (memory, any function, mask, retry interval
 *    in microseconds here, retry count or for ever), NOP (with skipped
 *    dwords), TRAP (signals the KFD event whose id is the context);
 *  - refusals, as hardware refuses or faults: a ring misaligned or not a
 *    power of two, a write pointer not dword aligned or beyond the ring,
 *    a packet crossing the doorbell's write pointer, an unknown opcode or
 *    sub-opcode, a copy over the packet limit, a FENCE/POLL address not
 *    dword aligned, an ATOMIC address not qword aligned, any access to
 *    memory not locked. A fault prints one line naming the queue, the
 *    packet and the value, stops the queue and (as a GPU VM fault does
 *    under ROCr) aborts the process unless hsa_model_fault_abort(0).
 *  - hsaKmtCreateQueueExt (ROCm >= 6.4) with HSA_QUEUE_SDMA_BY_ENG_ID:
 *    engines 0 .. HSA_MODEL_SDMA_ENGINES - 1 (default 4); absent to the
 *    loader with HSA_MODEL_NO_QUEUE_EXT=1; HSA_MODEL_LOG_QUEUES=1 prints
 *    one line per queue created (node, engine);
 *  - HSA_MODEL_NO_QUEUES=1: hsaKmtCreateQueue fails (HSAKMT_STATUS_
 *    UNAVAILABLE, as without the rights or on an old kernel), so the
 *    backend falls back to hsa_amd_memory_async_copy, which the model
 *    runs on one copy thread in submission order, after the dependency
 *    signals reach 0, decrementing the completion signal (ROCr's rules);
 *    a copy of memory not locked fails with HSA_STATUS_ERROR_INVALID_ARGUMENT.
 *
 * A doorbell is an MMIO store on hardware; here the engine thread sleeps
 * on the doorbell word, so a producer calls hsa_model_kick after the
 * store (the ring's kick hook, set only over the model).
 */
#include <shmemx_sdma_pkt.h>

#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <hsakmt.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define API __attribute__((visibility("default")))
#define DSM_MIN2(a, b) ((a) < (b) ? (a) : (b))

/* ------------------------------------------------------------ state */

typedef struct range {
    uintptr_t base;
    size_t len;
} range_t;

typedef struct mevent {
    HsaEvent ev; /* first: the handle given out is &ev */
    uint32_t seq;
    uint32_t seen;
    struct mevent *next;
} mevent_t;

typedef struct mqueue {
    uint64_t rptr __attribute__((aligned(64)));
    uint64_t wptr __attribute__((aligned(64)));
    uint64_t doorbell __attribute__((aligned(64)));
    uint32_t *ring;
    uint64_t size;
    uint32_t id;
    uint32_t node;
    volatile int stop;
    int faulted;
    pthread_t thread;
    struct mqueue *next;
} mqueue_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t reg_lock = PTHREAD_RWLOCK_INITIALIZER;
static range_t *regs;
static size_t nregs, capregs;
static mevent_t *events;
static mqueue_t *queues;
static uint32_t next_event_id = 1, next_queue_id = 1;
static int inits, kfd_opens, ngpus = 1;
static int fault_abort = 1;
static uint64_t faults;
static char last_fault[256];

API int hsa_model_version(void)
{
    return 1;
}

API void hsa_model_fault_abort(int on)
{
    fault_abort = on;
}

API uint64_t hsa_model_faults(const char **last)
{
    if (last)
        *last = last_fault;
    return __atomic_load_n(&faults, __ATOMIC_ACQUIRE);
}

static long futex(void *addr, int op, uint32_t val, const struct timespec *ts)
{
    return syscall(SYS_futex, addr, op, val, ts, NULL, 0);
}

API void hsa_model_kick(volatile uint64_t *doorbell)
{
    /* The low dword changes with every doorbell (rings are < 4 GiB). */
    futex((void *)doorbell, FUTEX_WAKE, 0x7fffffff, NULL);
}

static void fault(mqueue_t *q, const char *fmt, ...)
{
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&lock);
    snprintf(last_fault, sizeof(last_fault), "hsa model: SDMA queue %u: %s",
             q->id, msg);
    pthread_mutex_unlock(&lock);
    fprintf(stderr, "%s\n", last_fault);
    q->faulted = 1;
    __atomic_fetch_add(&faults, 1, __ATOMIC_RELEASE);
    if (fault_abort)
        abort();
}

/* Device memory: pool allocations of this process and peers' allocations
 * attached through IPC (the pool section below). */
typedef struct dmem {
    uintptr_t base;
    size_t len;   /* 0: a free slot */
    int fd;       /* the memfd (owner) or -1 */
    int attached; /* mapped by hsa_amd_ipc_memory_attach */
    int system;   /* from the system pool (host memory, GPU-visible) */
    uintptr_t shadow; /* the engines' mapping of the same bytes (below) */
} dmem_t;
#define DMEM_MAX 1024
static dmem_t dmems[DMEM_MAX];

/* The device allocation that holds [p, p + n), or NULL (reg_lock held). */
static dmem_t *dmem_of(uint64_t p, uint64_t n)
{
    for (size_t i = 0; i < DMEM_MAX; i++)
        if (dmems[i].len && p >= dmems[i].base &&
            p + n <= dmems[i].base + dmems[i].len && p + n >= p)
            return &dmems[i];
    return NULL;
}

/* Where the engines touch address a: device memory is given out as a
 * mapping the CPU may not touch (PROT_NONE, as VRAM need not be
 * host-visible: a CPU access to it is a bug the model catches with
 * SIGSEGV) and reached by the engines through a second, read-write
 * mapping of the same memfd. HSA_MODEL_DEVICE_CPU_ACCESS=1 gives out the
 * read-write mapping instead (large-BAR or APU systems). */
static void *eng(uint64_t a)
{
    uintptr_t r = (uintptr_t)a;
    pthread_rwlock_rdlock(&reg_lock);
    for (size_t i = 0; i < DMEM_MAX; i++)
        if (dmems[i].len && dmems[i].shadow &&
            a - dmems[i].base < dmems[i].len) {
            r = dmems[i].shadow + (uintptr_t)(a - dmems[i].base);
            break;
        }
    pthread_rwlock_unlock(&reg_lock);
    return (void *)r;
}

/* 1 when [p, p + n) lies in locked memory or device memory. */
static int reachable(uint64_t p, uint64_t n)
{
    int ok = 0;
    pthread_rwlock_rdlock(&reg_lock);
    if (dmem_of(p, n))
        ok = 1;
    for (size_t i = 0; i < nregs; i++)
        if (p >= regs[i].base && p + n <= regs[i].base + regs[i].len &&
            p + n >= p) {
            ok = 1;
            break;
        }
    pthread_rwlock_unlock(&reg_lock);
    return ok;
}

/* ------------------------------------------------------------ hsa_* */

API hsa_status_t hsa_init(void)
{
    const char *e = getenv("HSA_MODEL_GPUS");
    pthread_mutex_lock(&lock);
    inits++;
    if (e && atoi(e) > 0)
        ngpus = atoi(e);
    pthread_mutex_unlock(&lock);
    return HSA_STATUS_SUCCESS;
}

static void copier_end(void);

API hsa_status_t hsa_shut_down(void)
{
    hsa_status_t st = HSA_STATUS_SUCCESS;
    pthread_mutex_lock(&lock);
    if (inits > 0)
        inits--;
    else
        st = HSA_STATUS_ERROR_NOT_INITIALIZED;
    if (inits == 0) {
        /* The last shut-down releases what the runtime kept, as ROCr does:
         * the async-copy thread (it finishes its queued copies first) and
         * the table of locked ranges. The runtime may dlclose this library
         * next: a thread left waiting in it would wake in unmapped code,
         * and LeakSanitizer counts a table no pointer reaches. */
        copier_end();
        pthread_rwlock_wrlock(&reg_lock);
        free(regs);
        regs = NULL;
        nregs = capregs = 0;
        pthread_rwlock_unlock(&reg_lock);
    }
    pthread_mutex_unlock(&lock);
    return st;
}

API hsa_status_t hsa_status_string(hsa_status_t st, const char **s)
{
    *s = st == HSA_STATUS_SUCCESS ? "success" : "error (hsa model)";
    return HSA_STATUS_SUCCESS;
}

/* Agent handles: 1 = CPU, 2.. = GPUs (KFD node = handle - 1). */
API hsa_status_t hsa_iterate_agents(hsa_status_t (*cb)(hsa_agent_t, void *),
                                    void *data)
{
    if (!inits)
        return HSA_STATUS_ERROR_NOT_INITIALIZED;
    for (int i = 0; i <= ngpus; i++) {
        hsa_agent_t a = {(uint64_t)i + 1};
        hsa_status_t st = cb(a, data);
        if (st != HSA_STATUS_SUCCESS)
            return st == HSA_STATUS_INFO_BREAK ? HSA_STATUS_SUCCESS : st;
    }
    return HSA_STATUS_SUCCESS;
}

API hsa_status_t hsa_agent_get_info(hsa_agent_t a, hsa_agent_info_t what,
                                    void *out)
{
    if (!inits)
        return HSA_STATUS_ERROR_NOT_INITIALIZED;
    if (a.handle < 1 || a.handle > (uint64_t)ngpus + 1)
        return HSA_STATUS_ERROR_INVALID_AGENT;
    switch ((int)what) {
    case HSA_AGENT_INFO_DEVICE:
        *(hsa_device_type_t *)out =
            a.handle == 1 ? HSA_DEVICE_TYPE_CPU : HSA_DEVICE_TYPE_GPU;
        return HSA_STATUS_SUCCESS;
    case HSA_AGENT_INFO_NAME:
        memset(out, 0, 64);
        snprintf(out, 64, a.handle == 1 ? "model-cpu" : "model-gfx90a");
        return HSA_STATUS_SUCCESS;
    case HSA_AMD_AGENT_INFO_DRIVER_NODE_ID:
        *(uint32_t *)out = (uint32_t)(a.handle - 1);
        return HSA_STATUS_SUCCESS;
    default:
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
}

API hsa_status_t hsa_amd_memory_lock(void *p, size_t size, hsa_agent_t *agents,
                                     int n, void **agent_ptr)
{
    (void)agents;
    (void)n;
    if (!inits)
        return HSA_STATUS_ERROR_NOT_INITIALIZED;
    if (!p || !size || !agent_ptr)
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    pthread_rwlock_wrlock(&reg_lock);
    for (size_t i = 0; i < DMEM_MAX; i++)
        if (dmems[i].len && !dmems[i].system &&
            (uintptr_t)p < dmems[i].base + dmems[i].len &&
            (uintptr_t)p + size > dmems[i].base) {
            /* Locking is for host memory; device memory is the GPU's. */
            pthread_rwlock_unlock(&reg_lock);
            fprintf(stderr, "hsa model: hsa_amd_memory_lock of %p (%zu "
                    "bytes): device memory cannot be locked\n", p, size);
            return HSA_STATUS_ERROR_INVALID_ARGUMENT;
        }
    if (nregs == capregs) {
        size_t c = capregs ? capregs * 2 : 64;
        range_t *r = realloc(regs, c * sizeof(*r));
        if (!r) {
            pthread_rwlock_unlock(&reg_lock);
            return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
        }
        regs = r;
        capregs = c;
    }
    regs[nregs].base = (uintptr_t)p;
    regs[nregs].len = size;
    nregs++;
    pthread_rwlock_unlock(&reg_lock);
    *agent_ptr = p;
    return HSA_STATUS_SUCCESS;
}

API hsa_status_t hsa_amd_memory_unlock(void *p)
{
    hsa_status_t st = HSA_STATUS_ERROR_INVALID_ARGUMENT;
    pthread_rwlock_wrlock(&reg_lock);
    for (size_t i = nregs; i-- > 0;)
        if (regs[i].base == (uintptr_t)p) {
            regs[i] = regs[--nregs];
            st = HSA_STATUS_SUCCESS;
            break;
        }
    pthread_rwlock_unlock(&reg_lock);
    return st;
}

/* ------------------------------------------------------------ events */

API HSAKMT_STATUS hsaKmtOpenKFD(void)
{
    pthread_mutex_lock(&lock);
    kfd_opens++;
    pthread_mutex_unlock(&lock);
    return HSAKMT_STATUS_SUCCESS;
}

API HSAKMT_STATUS hsaKmtCloseKFD(void)
{
    HSAKMT_STATUS st = HSAKMT_STATUS_SUCCESS;
    pthread_mutex_lock(&lock);
    if (kfd_opens > 0)
        kfd_opens--;
    else
        st = HSAKMT_STATUS_KERNEL_IO_CHANNEL_NOT_OPENED;
    pthread_mutex_unlock(&lock);
    return st;
}

API HSAKMT_STATUS hsaKmtCreateEvent(HsaEventDescriptor *d, bool manual,
                                    bool signaled, HsaEvent **out)
{
    mevent_t *e;
    (void)manual;
    if (!d || !out)
        return HSAKMT_STATUS_INVALID_PARAMETER;
    if (!kfd_opens)
        return HSAKMT_STATUS_KERNEL_IO_CHANNEL_NOT_OPENED;
    e = calloc(1, sizeof(*e));
    if (!e)
        return HSAKMT_STATUS_NO_MEMORY;
    pthread_mutex_lock(&lock);
    e->ev.EventId = next_event_id++;
    e->ev.EventData.EventType = d->EventType;
    e->seq = signaled ? 1 : 0;
    e->next = events;
    events = e;
    pthread_mutex_unlock(&lock);
    *out = &e->ev;
    return HSAKMT_STATUS_SUCCESS;
}

API HSAKMT_STATUS hsaKmtDestroyEvent(HsaEvent *ev)
{
    mevent_t **pp;
    pthread_mutex_lock(&lock);
    for (pp = &events; *pp; pp = &(*pp)->next)
        if (&(*pp)->ev == ev) {
            mevent_t *e = *pp;
            *pp = e->next;
            free(e);
            pthread_mutex_unlock(&lock);
            return HSAKMT_STATUS_SUCCESS;
        }
    pthread_mutex_unlock(&lock);
    return HSAKMT_STATUS_INVALID_HANDLE;
}

static void event_signal(mevent_t *e)
{
    __atomic_fetch_add(&e->seq, 1, __ATOMIC_RELEASE);
    futex(&e->seq, FUTEX_WAKE, 0x7fffffff, NULL);
}

API HSAKMT_STATUS hsaKmtSetEvent(HsaEvent *ev)
{
    event_signal((mevent_t *)ev);
    return HSAKMT_STATUS_SUCCESS;
}

/* Auto-reset: returns once the event was signalled since the last
 * successful wait. */
API HSAKMT_STATUS hsaKmtWaitOnEvent(HsaEvent *ev, HSAuint32 ms)
{
    mevent_t *e = (mevent_t *)ev;
    struct timespec end, now, ts;
    clock_gettime(CLOCK_MONOTONIC, &end);
    end.tv_sec += ms / 1000;
    end.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (end.tv_nsec >= 1000000000L) {
        end.tv_sec++;
        end.tv_nsec -= 1000000000L;
    }
    for (;;) {
        uint32_t s = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE);
        if (s != e->seen) {
            e->seen = s;
            return HSAKMT_STATUS_SUCCESS;
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        ts.tv_sec = end.tv_sec - now.tv_sec;
        ts.tv_nsec = end.tv_nsec - now.tv_nsec;
        if (ts.tv_nsec < 0) {
            ts.tv_sec--;
            ts.tv_nsec += 1000000000L;
        }
        if (ts.tv_sec < 0)
            return HSAKMT_STATUS_WAIT_TIMEOUT;
        futex(&e->seq, FUTEX_WAIT, s, &ts);
    }
}

static void trap(uint32_t ctx)
{
    mevent_t *e;
    pthread_mutex_lock(&lock);
    for (e = events; e; e = e->next)
        if (e->ev.EventId == ctx)
            break;
    if (e)
        event_signal(e);
    pthread_mutex_unlock(&lock);
}

/* ------------------------------------------------------------ engine */

static uint32_t dw(const mqueue_t *q, uint64_t pos, uint32_t i)
{
    return __atomic_load_n(&q->ring[((pos / 4) + i) & (q->size / 4 - 1)],
                           __ATOMIC_RELAXED);
}

static uint64_t addr(const mqueue_t *q, uint64_t pos, uint32_t lo)
{
    return (uint64_t)dw(q, pos, lo) | ((uint64_t)dw(q, pos, lo + 1) << 32);
}

static int compare(uint32_t func, uint32_t v, uint32_t ref)
{
    switch (func) {
    case DSM_SDMA_FUNC_ALWAYS:
        return 1;
    case DSM_SDMA_FUNC_LT:
        return v < ref;
    case DSM_SDMA_FUNC_LE:
        return v <= ref;
    case DSM_SDMA_FUNC_EQ:
        return v == ref;
    case DSM_SDMA_FUNC_NE:
        return v != ref;
    case DSM_SDMA_FUNC_GE:
        return v >= ref;
    case DSM_SDMA_FUNC_GT:
        return v > ref;
    default:
        return -1;
    }
}

static void sleep_us(uint32_t us)
{
    struct timespec ts = {0, (long)us * 1000L};
    nanosleep(&ts, NULL);
}

/* Execute the packet at pos (n dwords). Returns 0 to stop the queue. */
static int execute(mqueue_t *q, uint64_t pos, uint32_t h)
{
    switch (dsm_pkt_op(h)) {
    case DSM_SDMA_OP_NOP:
        return 1;
    case DSM_SDMA_OP_COPY: {
        uint64_t n = (uint64_t)(dw(q, pos, 1) & 0x3fffffu) + 1;
        uint64_t src = addr(q, pos, 3), dst = addr(q, pos, 5);
        if (dsm_pkt_subop(h) != DSM_SDMA_SUBOP_COPY_LINEAR) {
            fault(q, "COPY sub-opcode %u not modelled", dsm_pkt_subop(h));
            return 0;
        }
        if (n > DSM_SDMA_COPY_MAX) {
            fault(q, "COPY_LINEAR of %llu bytes over the packet limit %u",
                  (unsigned long long)n, DSM_SDMA_COPY_MAX);
            return 0;
        }
        if (!reachable(src, n) || !reachable(dst, n)) {
            fault(q, "COPY_LINEAR %#llx -> %#llx (%llu bytes): memory not "
                  "locked for the GPU",
                  (unsigned long long)src, (unsigned long long)dst,
                  (unsigned long long)n);
            return 0;
        }
        memmove(eng(dst), eng(src), n);
        return 1;
    }
    case DSM_SDMA_OP_FENCE: {
        uint64_t a = addr(q, pos, 1);
        if (a & 3) {
            fault(q, "FENCE address %#llx not dword aligned",
                  (unsigned long long)a);
            return 0;
        }
        if (!reachable(a, 4)) {
            fault(q, "FENCE to %#llx: memory not locked for the GPU",
                  (unsigned long long)a);
            return 0;
        }
        /* After every earlier packet: this thread ran them in order. */
        __atomic_store_n((uint32_t *)eng(a), dw(q, pos, 3),
                         __ATOMIC_RELEASE);
        return 1;
    }
    case DSM_SDMA_OP_TRAP:
        trap(dw(q, pos, 1) & 0xfffffffu);
        return 1;
    case DSM_SDMA_OP_POLL_REGMEM: {
        uint64_t a = addr(q, pos, 1);
        uint32_t ref = dw(q, pos, 3), mask = dw(q, pos, 4), d5 = dw(q, pos, 5);
        uint32_t func = (h >> 28) & 7u, interval = d5 & 0xffffu;
        uint32_t retry = (d5 >> 16) & 0xfffu, tries = 0;
        if (!(h >> 31)) {
            fault(q, "POLL_REGMEM on a register (mem_poll = 0) not modelled");
            return 0;
        }
        if (a & 3) {
            fault(q, "POLL_REGMEM address %#llx not dword aligned",
                  (unsigned long long)a);
            return 0;
        }
        if (!reachable(a, 4)) {
            fault(q, "POLL_REGMEM on %#llx: memory not locked for the GPU",
                  (unsigned long long)a);
            return 0;
        }
        for (;;) {
            uint32_t v = __atomic_load_n((uint32_t *)eng(a),
                                         __ATOMIC_ACQUIRE);
            int r = compare(func, v & mask, ref);
            if (r < 0) {
                fault(q, "POLL_REGMEM function %u undefined", func);
                return 0;
            }
            if (r)
                return 1;
            if (q->stop)
                return 0;
            tries++;
            if (retry != DSM_SDMA_POLL_RETRY_FOREVER && tries > retry) {
                fault(q, "POLL_REGMEM on %#llx: %u retries failed "
                      "(value %#x, reference %#x)",
                      (unsigned long long)a, retry, v, ref);
                return 0;
            }
            /* The retry interval (microseconds here); the first rounds
             * only yield, as the waited-for store is often imminent. The
             * sleep then doubles up to 1 ms: every queue is a thread on
             * the host's cores here, and a job with a hundred queues
             * parked on triggers (persistent collectives) would otherwise
             * take the cores from the PEs that fire them. */
            if (tries < 32) {
                sched_yield();
            } else {
                sleep_us(interval ? interval : 1);
                if (interval < 1000)
                    interval = interval ? DSM_MIN2(interval * 2, 1000u) : 1;
            }
        }
    }
    case DSM_SDMA_OP_ATOMIC: {
        uint64_t a = addr(q, pos, 1), src = addr(q, pos, 3);
        uint32_t op = h >> 25;
        if (op != DSM_SDMA_ATOMIC_ADD64) {
            fault(q, "ATOMIC operation %u not modelled", op);
            return 0;
        }
        if (a & 7) {
            fault(q, "ATOMIC address %#llx not qword aligned",
                  (unsigned long long)a);
            return 0;
        }
        if (!reachable(a, 8)) {
            fault(q, "ATOMIC on %#llx: memory not locked for the GPU",
                  (unsigned long long)a);
            return 0;
        }
        __atomic_fetch_add((uint64_t *)eng(a), src, __ATOMIC_ACQ_REL);
        return 1;
    }
    default:
        fault(q, "opcode %u at ring offset %#llx undefined", dsm_pkt_op(h),
              (unsigned long long)pos);
        return 0;
    }
}

static void *engine_main(void *arg)
{
    mqueue_t *q = arg;
    unsigned idle = 0;

    while (!q->stop) {
        uint64_t db = __atomic_load_n(&q->doorbell, __ATOMIC_ACQUIRE);
        uint64_t rp = q->rptr;
        if (q->faulted || db == rp) {
            struct timespec ts = {0, 20 * 1000000L};
            if (!q->faulted && ++idle < 64) {
                sched_yield();
                continue;
            }
            futex(&q->doorbell, FUTEX_WAIT, (uint32_t)db, &ts);
            idle = 0;
            continue;
        }
        idle = 0;
        if (db & 3) {
            fault(q, "doorbell write pointer %#llx not dword aligned",
                  (unsigned long long)db);
            continue;
        }
        if (db - rp > q->size) {
            fault(q, "doorbell write pointer %#llx more than the ring "
                  "(%llu bytes) ahead of the read pointer %#llx",
                  (unsigned long long)db, (unsigned long long)q->size,
                  (unsigned long long)rp);
            continue;
        }
        while (rp != db && !q->stop && !q->faulted) {
            uint32_t h = dw(q, rp, 0), n = dsm_pkt_dwords(h);
            if (!n) {
                fault(q, "opcode %u at ring offset %#llx undefined",
                      dsm_pkt_op(h), (unsigned long long)rp);
                break;
            }
            if (rp + n * 4u > db) {
                fault(q, "packet (opcode %u, %u dwords) at %#llx crosses the "
                      "write pointer %#llx", dsm_pkt_op(h), n,
                      (unsigned long long)rp, (unsigned long long)db);
                break;
            }
            if (!execute(q, rp, h))
                break;
            rp += n * 4u;
            __atomic_store_n(&q->rptr, rp, __ATOMIC_RELEASE);
        }
    }
    return NULL;
}

/* Engines per GPU that hsaKmtCreateQueueExt may name. */
static int model_engines(void)
{
    const char *e = getenv("HSA_MODEL_SDMA_ENGINES");
    return e && atoi(e) > 0 ? atoi(e) : 4;
}

/* engine: the id asked for, -1: the driver's choice. */
static HSAKMT_STATUS create_queue(HSAuint32 node, int engine, void *ring,
                                  HSAuint64 size, HsaQueueResource *res)
{
    const char *nq = getenv("HSA_MODEL_NO_QUEUES");
    const char *lg = getenv("HSA_MODEL_LOG_QUEUES");
    mqueue_t *q;

    if (!kfd_opens)
        return HSAKMT_STATUS_KERNEL_IO_CHANNEL_NOT_OPENED;
    if (nq && *nq == '1')
        return HSAKMT_STATUS_UNAVAILABLE;
    if (node < 1 || node > (HSAuint32)ngpus)
        return HSAKMT_STATUS_INVALID_NODE_UNIT;
    if (!ring || ((uintptr_t)ring & (DSM_SDMA_RING_ALIGN - 1)) ||
        size < 1024 || (size & (size - 1)) || !res)
        return HSAKMT_STATUS_INVALID_PARAMETER;
    if (!reachable((uintptr_t)ring, size))
        return HSAKMT_STATUS_MEMORY_NOT_REGISTERED;
    if (posix_memalign((void **)&q, 64, sizeof(*q)))
        return HSAKMT_STATUS_NO_MEMORY;
    memset(q, 0, sizeof(*q));
    q->ring = ring;
    q->size = size;
    q->node = node;
    pthread_mutex_lock(&lock);
    q->id = next_queue_id++;
    pthread_mutex_unlock(&lock);
    if (pthread_create(&q->thread, NULL, engine_main, q)) {
        free(q);
        return HSAKMT_STATUS_OUT_OF_RESOURCES;
    }
    pthread_setname_np(q->thread, "hsa-model-sdma");
    pthread_mutex_lock(&lock);
    q->next = queues;
    queues = q;
    pthread_mutex_unlock(&lock);
    memset(res, 0, sizeof(*res));
    res->QueueId = q->id;
    res->Queue_DoorBell_aql = &q->doorbell;
    res->Queue_write_ptr_aql = &q->wptr;
    res->Queue_read_ptr_aql = &q->rptr;
    if (lg && *lg == '1') {
        if (engine >= 0)
            fprintf(stderr, "hsa model: SDMA queue %u on node %u, engine "
                    "%d\n", q->id, node, engine);
        else
            fprintf(stderr, "hsa model: SDMA queue %u on node %u, engine "
                    "of the driver's choice\n", q->id, node);
    }
    return HSAKMT_STATUS_SUCCESS;
}

API HSAKMT_STATUS hsaKmtCreateQueue(HSAuint32 node, HSA_QUEUE_TYPE type,
                                    HSAuint32 pct, HSA_QUEUE_PRIORITY prio,
                                    void *ring, HSAuint64 size, HsaEvent *ev,
                                    HsaQueueResource *res)
{
    (void)pct;
    (void)prio;
    (void)ev;
    if (type != HSA_QUEUE_SDMA && type != HSA_QUEUE_SDMA_XGMI)
        return HSAKMT_STATUS_NOT_SUPPORTED; /* only SDMA is modelled */
    return create_queue(node, -1, ring, size, res);
}

/* ROCm >= 6.4: the queue on SDMA engine `engine` (type 6,
 * HSA_QUEUE_SDMA_BY_ENG_ID); an engine the GPU lacks is refused as the
 * driver refuses it. Offered unless HSA_MODEL_NO_QUEUE_EXT=1, which the
 * loader asks through hsa_model_queue_ext (a symbol cannot come and go). */
API int hsa_model_queue_ext(void)
{
    const char *e = getenv("HSA_MODEL_NO_QUEUE_EXT");
    return !(e && *e == '1');
}

API HSAKMT_STATUS hsaKmtCreateQueueExt(HSAuint32 node, HSA_QUEUE_TYPE type,
                                       HSAuint32 pct, HSA_QUEUE_PRIORITY prio,
                                       HSAuint32 engine, void *ring,
                                       HSAuint64 size, HsaEvent *ev,
                                       HsaQueueResource *res)
{
    (void)pct;
    (void)prio;
    (void)ev;
    if (!hsa_model_queue_ext())
        return HSAKMT_STATUS_NOT_SUPPORTED;
    if ((int)type != 6)
        return HSAKMT_STATUS_NOT_SUPPORTED;
    if (engine >= (HSAuint32)model_engines())
        return HSAKMT_STATUS_INVALID_PARAMETER;
    return create_queue(node, (int)engine, ring, size, res);
}

API HSAKMT_STATUS hsaKmtDestroyQueue(HSA_QUEUEID id)
{
    mqueue_t **pp, *q = NULL;
    pthread_mutex_lock(&lock);
    for (pp = &queues; *pp; pp = &(*pp)->next)
        if ((*pp)->id == id) {
            q = *pp;
            *pp = q->next;
            break;
        }
    pthread_mutex_unlock(&lock);
    if (!q)
        return HSAKMT_STATUS_INVALID_HANDLE;
    q->stop = 1;
    hsa_model_kick(&q->doorbell);
    __atomic_fetch_add(&q->doorbell, 0, __ATOMIC_SEQ_CST);
    futex(&q->doorbell, FUTEX_WAKE, 0x7fffffff, NULL);
    pthread_join(q->thread, NULL);
    free(q);
    return HSAKMT_STATUS_SUCCESS;
}

/* ------------------------------------------------------------ async copies */

typedef struct msignal {
    int64_t value;
} msignal_t;

typedef struct job {
    struct job *next;
    void *dst;
    const void *src;
    size_t n;
    uint32_t ndeps;
    hsa_signal_t deps[4];
    hsa_signal_t done;
} job_t;

static pthread_mutex_t job_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t job_cond = PTHREAD_COND_INITIALIZER;
static job_t *job_head, *job_tail;
static int copier_running, copier_stop;
static pthread_t copier;

API hsa_status_t hsa_signal_create(hsa_signal_value_t v, uint32_t nc,
                                   const hsa_agent_t *c, hsa_signal_t *out)
{
    msignal_t *m = calloc(1, sizeof(*m));
    (void)nc;
    (void)c;
    if (!m)
        return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    m->value = v;
    out->handle = (uint64_t)(uintptr_t)m;
    return HSA_STATUS_SUCCESS;
}

API hsa_status_t hsa_signal_destroy(hsa_signal_t sig)
{
    if (!sig.handle)
        return HSA_STATUS_ERROR_INVALID_SIGNAL;
    free((void *)(uintptr_t)sig.handle);
    return HSA_STATUS_SUCCESS;
}

API hsa_signal_value_t hsa_signal_load_scacquire(hsa_signal_t sig)
{
    return __atomic_load_n(&((msignal_t *)(uintptr_t)sig.handle)->value,
                           __ATOMIC_ACQUIRE);
}

static void *copier_main(void *arg)
{
    (void)arg;
    for (;;) {
        job_t *j;
        pthread_mutex_lock(&job_lock);
        while (!job_head && !copier_stop)
            pthread_cond_wait(&job_cond, &job_lock);
        j = job_head;
        pthread_mutex_unlock(&job_lock);
        if (!j)
            break; /* hsa_shut_down, every job done */
        /* Dependencies first (the engine polls them). */
        for (uint32_t i = 0; i < j->ndeps; i++)
            while (hsa_signal_load_scacquire(j->deps[i]) > 0)
                sched_yield();
        memmove(eng((uintptr_t)j->dst), eng((uintptr_t)j->src), j->n);
        pthread_mutex_lock(&job_lock);
        job_head = j->next;
        if (!job_head)
            job_tail = NULL;
        pthread_mutex_unlock(&job_lock);
        __atomic_fetch_sub(&((msignal_t *)(uintptr_t)j->done.handle)->value,
                           1, __ATOMIC_RELEASE);
        free(j);
    }
    return NULL;
}

static void copier_end(void)
{
    int join;
    pthread_mutex_lock(&job_lock);
    join = copier_running;
    copier_stop = 1;
    pthread_cond_signal(&job_cond);
    pthread_mutex_unlock(&job_lock);
    if (join)
        pthread_join(copier, NULL);
    pthread_mutex_lock(&job_lock);
    copier_running = 0;
    pthread_mutex_unlock(&job_lock);
}

API hsa_status_t hsa_amd_memory_async_copy(void *dst, hsa_agent_t da,
                                           const void *src, hsa_agent_t sa,
                                           size_t n, uint32_t ndeps,
                                           const hsa_signal_t *deps,
                                           hsa_signal_t done)
{
    job_t *j;
    (void)da;
    (void)sa;
    if (!inits)
        return HSA_STATUS_ERROR_NOT_INITIALIZED;
    if (!done.handle || ndeps > 4 || (ndeps && !deps))
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    if (!reachable((uintptr_t)dst, n) || !reachable((uintptr_t)src, n)) {
        fprintf(stderr, "hsa model: hsa_amd_memory_async_copy %p -> %p "
                "(%zu bytes): memory not locked for the GPU\n", src, dst, n);
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    j = calloc(1, sizeof(*j));
    if (!j)
        return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    j->dst = dst;
    j->src = src;
    j->n = n;
    j->ndeps = ndeps;
    for (uint32_t i = 0; i < ndeps; i++)
        j->deps[i] = deps[i];
    j->done = done;
    pthread_mutex_lock(&job_lock);
    if (!copier_running) {
        /* Until the last hsa_shut_down (copier_end), as ROCr's own
         * threads: the runtime may dlclose this library after it. */
        if (pthread_create(&copier, NULL, copier_main, NULL)) {
            pthread_mutex_unlock(&job_lock);
            free(j);
            return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
        }
        copier_running = 1;
        copier_stop = 0;
    }
    if (job_tail)
        job_tail->next = j;
    else
        job_head = j;
    job_tail = j;
    pthread_cond_signal(&job_cond);
    pthread_mutex_unlock(&job_lock);
    return HSA_STATUS_SUCCESS;
}

/* ------------------------------------------------------------ memory pools */

/* Pool handles: 0x100 = the system pool (CPU agent), 0x200 + k = GPU
 * agent k + 2's device-local pool. */
#define POOL_SYSTEM 0x100u
#define POOL_DEVICE 0x200u
#define POOL_GRANULE 4096u

static int no_device_pool(void)
{
    const char *e = getenv("HSA_MODEL_NO_DEVICE_POOL");
    return e && *e == '1';
}

static int pool_valid(hsa_amd_memory_pool_t p)
{
    return p.handle == POOL_SYSTEM ||
           (!no_device_pool() && p.handle >= POOL_DEVICE + 2 &&
            p.handle <= POOL_DEVICE + 1 + (uint64_t)ngpus);
}

API hsa_status_t hsa_amd_agent_iterate_memory_pools(
    hsa_agent_t a, hsa_status_t (*cb)(hsa_amd_memory_pool_t, void *),
    void *data)
{
    hsa_amd_memory_pool_t p;
    hsa_status_t st;
    if (!inits)
        return HSA_STATUS_ERROR_NOT_INITIALIZED;
    if (a.handle < 1 || a.handle > (uint64_t)ngpus + 1)
        return HSA_STATUS_ERROR_INVALID_AGENT;
    if (a.handle > 1 && no_device_pool())
        return HSA_STATUS_SUCCESS;
    p.handle = a.handle == 1 ? POOL_SYSTEM : POOL_DEVICE + a.handle;
    st = cb(p, data);
    return st == HSA_STATUS_INFO_BREAK ? HSA_STATUS_SUCCESS : st;
}

API hsa_status_t hsa_amd_memory_pool_get_info(hsa_amd_memory_pool_t p,
                                              hsa_amd_memory_pool_info_t what,
                                              void *out)
{
    if (!inits)
        return HSA_STATUS_ERROR_NOT_INITIALIZED;
    if (!pool_valid(p))
        return (hsa_status_t)HSA_STATUS_ERROR_INVALID_MEMORY_POOL;
    switch ((int)what) {
    case HSA_AMD_MEMORY_POOL_INFO_SEGMENT:
        *(hsa_amd_segment_t *)out = HSA_AMD_SEGMENT_GLOBAL;
        return HSA_STATUS_SUCCESS;
    case HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS:
        *(uint32_t *)out =
            p.handle == POOL_SYSTEM
                ? HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED |
                      HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT
                : HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED;
        return HSA_STATUS_SUCCESS;
    case HSA_AMD_MEMORY_POOL_INFO_SIZE:
        *(size_t *)out = (size_t)64 << 30;
        return HSA_STATUS_SUCCESS;
    case HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED:
        *(bool *)out = true;
        return HSA_STATUS_SUCCESS;
    case HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE:
    case HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALIGNMENT:
        *(size_t *)out = POOL_GRANULE;
        return HSA_STATUS_SUCCESS;
    default:
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
}

/* A free slot of the device-memory table, filled (reg_lock held). */
static dmem_t *dmem_new(void *p, size_t len, int fd, int attached,
                        int system)
{
    for (size_t i = 0; i < DMEM_MAX; i++)
        if (!dmems[i].len) {
            dmems[i].base = (uintptr_t)p;
            dmems[i].fd = fd;
            dmems[i].attached = attached;
            dmems[i].system = system;
            dmems[i].shadow = 0;
            dmems[i].len = len;
            return &dmems[i];
        }
    return NULL;
}

static dmem_t *dmem_at(void *p)
{
    for (size_t i = 0; i < DMEM_MAX; i++)
        if (dmems[i].len && dmems[i].base == (uintptr_t)p)
            return &dmems[i];
    return NULL;
}

/* The CPU's view of size bytes of fd (PROT_NONE unless
 * HSA_MODEL_DEVICE_CPU_ACCESS=1) and, in *shadow, the engines' read-write
 * one (0 when they are the same mapping). MAP_FAILED on failure. */
static void *map_device(int fd, size_t size, uintptr_t *shadow)
{
    const char *e = getenv("HSA_MODEL_DEVICE_CPU_ACCESS");
    void *rw = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    void *p;
    *shadow = 0;
    if (rw == MAP_FAILED || (e && *e == '1'))
        return rw;
    p = mmap(NULL, size, PROT_NONE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        munmap(rw, size);
        return MAP_FAILED;
    }
    *shadow = (uintptr_t)rw;
    return p;
}

static void unmap_device(void *p, size_t size, uintptr_t shadow)
{
    munmap(p, size);
    if (shadow)
        munmap((void *)shadow, size);
}

API hsa_status_t hsa_amd_memory_pool_allocate(hsa_amd_memory_pool_t pool,
                                              size_t size, uint32_t flags,
                                              void **ptr)
{
    void *p;
    uintptr_t shadow = 0;
    int fd = -1;
    (void)flags;
    if (!inits)
        return HSA_STATUS_ERROR_NOT_INITIALIZED;
    if (!pool_valid(pool))
        return (hsa_status_t)HSA_STATUS_ERROR_INVALID_MEMORY_POOL;
    if (!size || !ptr)
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    size = (size + POOL_GRANULE - 1) / POOL_GRANULE * POOL_GRANULE;
    if (pool.handle == POOL_SYSTEM) {
        p = mmap(NULL, size, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    } else {
        /* "VRAM": a memfd, so that another process can map it (IPC). */
        fd = memfd_create("hsa-model-vram", MFD_CLOEXEC);
        if (fd < 0 || ftruncate(fd, (off_t)size) != 0) {
            if (fd >= 0)
                close(fd);
            return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
        }
        p = map_device(fd, size, &shadow);
    }
    if (p == MAP_FAILED) {
        if (fd >= 0)
            close(fd);
        return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    }
    pthread_rwlock_wrlock(&reg_lock);
    dmem_t *d = dmem_new(p, size, fd, 0, pool.handle == POOL_SYSTEM);
    if (d)
        d->shadow = shadow;
    pthread_rwlock_unlock(&reg_lock);
    if (!d) {
        unmap_device(p, size, shadow);
        if (fd >= 0)
            close(fd);
        return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    }
    *ptr = p;
    return HSA_STATUS_SUCCESS;
}

API hsa_status_t hsa_amd_memory_pool_free(void *ptr)
{
    pthread_rwlock_wrlock(&reg_lock);
    dmem_t *d = dmem_at(ptr);
    if (!d || d->attached) {
        pthread_rwlock_unlock(&reg_lock);
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    unmap_device(ptr, d->len, d->shadow);
    if (d->fd >= 0)
        close(d->fd);
    d->len = 0;
    pthread_rwlock_unlock(&reg_lock);
    return HSA_STATUS_SUCCESS;
}

/* The model's IPC handle (hsa_amd_ipc_memory_t is 8 dwords). */
#define IPC_MAGIC 0x4d445348u /* "HSDM" */

API hsa_status_t hsa_amd_ipc_memory_create(void *ptr, size_t len,
                                           hsa_amd_ipc_memory_t *h)
{
    if (!inits)
        return HSA_STATUS_ERROR_NOT_INITIALIZED;
    pthread_rwlock_rdlock(&reg_lock);
    dmem_t *d = dmem_at(ptr);
    int ok = d && !d->attached && d->fd >= 0 && len && len <= d->len;
    int fd = ok ? d->fd : -1;
    pthread_rwlock_unlock(&reg_lock);
    if (!ok || !h)
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    memset(h, 0, sizeof(*h));
    h->handle[0] = IPC_MAGIC;
    h->handle[1] = (uint32_t)getpid();
    h->handle[2] = (uint32_t)fd;
    h->handle[3] = (uint32_t)len;
    h->handle[4] = (uint32_t)((uint64_t)len >> 32);
    return HSA_STATUS_SUCCESS;
}

/* The owner's memfd, as an fd of this process. */
static int ipc_fd(pid_t pid, int fd)
{
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_getfd)
    int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (pfd >= 0) {
        int nfd = (int)syscall(SYS_pidfd_getfd, pfd, fd, 0);
        close(pfd);
        if (nfd >= 0)
            return nfd;
    }
#endif
    /* pidfd_getfd needs ptrace-attach rights (Yama may refuse them to a
     * sibling); reopening the memfd through /proc needs read rights. */
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, fd);
    return open(path, O_RDWR | O_CLOEXEC);
}

API hsa_status_t hsa_amd_ipc_memory_attach(const hsa_amd_ipc_memory_t *h,
                                           size_t len, uint32_t nagents,
                                           const hsa_agent_t *agents,
                                           void **mapped)
{
    (void)nagents;
    (void)agents;
    if (!inits)
        return HSA_STATUS_ERROR_NOT_INITIALIZED;
    if (!h || !mapped || h->handle[0] != IPC_MAGIC || !len)
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    size_t hlen = (size_t)h->handle[3] | ((size_t)h->handle[4] << 32);
    if (len > hlen)
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    int fd = ipc_fd((pid_t)h->handle[1], (int)h->handle[2]);
    if (fd < 0) {
        fprintf(stderr, "hsa model: hsa_amd_ipc_memory_attach: cannot take "
                "fd %u of pid %u (%s)\n", h->handle[2], h->handle[1],
                strerror(errno));
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    uintptr_t shadow;
    void *p = map_device(fd, len, &shadow);
    close(fd);
    if (p == MAP_FAILED)
        return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    pthread_rwlock_wrlock(&reg_lock);
    dmem_t *d = dmem_new(p, len, -1, 1, 0);
    if (d)
        d->shadow = shadow;
    pthread_rwlock_unlock(&reg_lock);
    if (!d) {
        unmap_device(p, len, shadow);
        return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    }
    *mapped = p;
    return HSA_STATUS_SUCCESS;
}

API hsa_status_t hsa_amd_ipc_memory_detach(void *mapped)
{
    pthread_rwlock_wrlock(&reg_lock);
    dmem_t *d = dmem_at(mapped);
    if (!d || !d->attached) {
        pthread_rwlock_unlock(&reg_lock);
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    unmap_device(mapped, d->len, d->shadow);
    d->len = 0;
    pthread_rwlock_unlock(&reg_lock);
    return HSA_STATUS_SUCCESS;
}

API hsa_status_t hsa_memory_copy(void *dst, const void *src, size_t n)
{
    if (!inits)
        return HSA_STATUS_ERROR_NOT_INITIALIZED;
    if (!dst || !src)
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    memmove(eng((uintptr_t)dst), eng((uintptr_t)src), n);
    return HSA_STATUS_SUCCESS;
}

/* What ROCr knows of a pointer: pool allocations (HSA; the owner is the
 * GPU for device-local pools, the CPU for the system pool), attached IPC
 * mappings (IPC), locked host ranges (LOCKED), else UNKNOWN. */
API hsa_status_t hsa_amd_pointer_info(const void *ptr,
                                      hsa_amd_pointer_info_t *info,
                                      void *(*alloc)(size_t),
                                      uint32_t *nacc, hsa_agent_t **acc)
{
    uintptr_t p = (uintptr_t)ptr;
    (void)alloc;
    if (!inits)
        return HSA_STATUS_ERROR_NOT_INITIALIZED;
    if (!info || info->size < sizeof(*info))
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    memset(info, 0, sizeof(*info));
    info->size = sizeof(*info);
    info->type = HSA_EXT_POINTER_TYPE_UNKNOWN;
    if (nacc)
        *nacc = 0;
    if (acc)
        *acc = NULL;
    pthread_rwlock_rdlock(&reg_lock);
    dmem_t *d = dmem_of(p, 1);
    if (d) {
        info->type = d->attached ? HSA_EXT_POINTER_TYPE_IPC
                                 : HSA_EXT_POINTER_TYPE_HSA;
        info->agentBaseAddress = info->hostBaseAddress = (void *)d->base;
        info->sizeInBytes = d->len;
        /* Device pools belong to the first GPU here (one pool is enough
         * for the backend's question: GPU or not). */
        info->agentOwner.handle = d->system ? 1 : 2;
        info->global_flags =
            d->system ? HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED
                      : HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED;
    } else {
        for (size_t i = 0; i < nregs; i++)
            if (p - regs[i].base < regs[i].len) {
                info->type = HSA_EXT_POINTER_TYPE_LOCKED;
                info->agentBaseAddress = info->hostBaseAddress =
                    (void *)regs[i].base;
                info->sizeInBytes = regs[i].len;
                info->agentOwner.handle = 1;
                break;
            }
    }
    pthread_rwlock_unlock(&reg_lock);
    return HSA_STATUS_SUCCESS;
}
