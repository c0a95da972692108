/*
 * The hsa backend without a GPU:
 *  - every packet encoder of include/shmemx_sdma_pkt.h, field by field,
 *    against the SDMA 4.x layouts;
 *  - the ring (reserve/commit/doorbell) with many producer threads on a
 *    small ring of the engine model (wrap-around, full ring), the way GPU
 *    kernels produce (the same header);
 *  - the model's refusals (what hardware refuses or faults on);
 *  - WAIT's wrap-safe 32-bit compare;
 *  - the backend (dsm_sdma_hsa_ops) over the model: split copies, BCAST,
 *    SWAP, SIGNAL across a 2^32 boundary, SIGNAL_ADD, a gated chain.
 * The model is test/hsa/.libs/libhsamodel.so (HSA_MODEL_LIB overrides).
 */
#include <check.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../unit/check_main.h"
#include "sdma/backend.h"
#include "sdma/hsa/hsa_int.h"
#include <shmemx_sdma_pkt.h>

static char model_path[4096];
static void *model;

static void *msym(const char *name)
{
    void *p = dlsym(model, name);
    ck_assert_msg(p != NULL, "model lacks %s", name);
    return p;
}


/* ------------------------------------------------------------ encoders */

START_TEST(test_copy_linear)
{
    uint32_t p[DSM_SDMA_COPY_DW];
    memset(p, 0xee, sizeof(p));
    dsm_pkt_copy_linear(p, 0x123456789abcdef0ull, 0x0fedcba987654321ull,
                        DSM_SDMA_COPY_MAX);
    ck_assert_uint_eq(p[0] & 0xff, 1);         /* op COPY */
    ck_assert_uint_eq((p[0] >> 8) & 0xff, 0);  /* sub_op LINEAR */
    ck_assert_uint_eq(p[0] >> 16, 0);          /* extra_info */
    ck_assert_uint_eq(p[1] & 0x3fffff, DSM_SDMA_COPY_MAX - 1); /* count */
    ck_assert_uint_eq(p[1] >> 22, 0);
    ck_assert_uint_eq(p[2], 0); /* dst_swap, src_swap */
    ck_assert_uint_eq(p[3], 0x87654321u);
    ck_assert_uint_eq(p[4], 0x0fedcba9u);
    ck_assert_uint_eq(p[5], 0x9abcdef0u);
    ck_assert_uint_eq(p[6], 0x12345678u);
    dsm_pkt_copy_linear(p, 8, 16, 1);
    ck_assert_uint_eq(p[1], 0); /* one byte: count 0 */
    ck_assert_uint_eq(dsm_pkt_dwords(p[0]), 7);
    ck_assert_uint_eq(DSM_SDMA_COPY_MAX, 0x3fffe0u);
}
END_TEST

START_TEST(test_fence_trap_nop)
{
    uint32_t p[8];
    dsm_pkt_fence(p, 0xaabbccdd11223344ull, 0xcafef00du);
    ck_assert_uint_eq(p[0] & 0xff, 5);
    ck_assert_uint_eq((p[0] >> 8) & 0xff, 0);
    ck_assert_uint_eq((p[0] >> 20) & 1, 1); /* sys */
    ck_assert_uint_eq((p[0] >> 22) & 1, 1); /* snp */
    ck_assert_uint_eq(p[1], 0x11223344u);
    ck_assert_uint_eq(p[2], 0xaabbccddu);
    ck_assert_uint_eq(p[3], 0xcafef00du);
    ck_assert_uint_eq(dsm_pkt_dwords(p[0]), 4);

    dsm_pkt_trap(p, 0xfedcba98u);
    ck_assert_uint_eq(p[0], 6);
    ck_assert_uint_eq(p[1], 0x0edcba98u); /* int_context: 28 bits */
    ck_assert_uint_eq(dsm_pkt_dwords(p[0]), 2);

    dsm_pkt_nop(p, 0);
    ck_assert_uint_eq(p[0], 0);
    ck_assert_uint_eq(dsm_pkt_dwords(p[0]), 1);
    dsm_pkt_nop(p, 5);
    ck_assert_uint_eq(p[0], 5u << 16);
    ck_assert_uint_eq(dsm_pkt_dwords(p[0]), 6);
    ck_assert_uint_eq(dsm_pkt_dwords(0x42), 0); /* unknown opcode */
}
END_TEST

START_TEST(test_poll_atomic)
{
    uint32_t p[8];
    dsm_pkt_poll(p, 0x0000000100000040ull, 0x11112222u, 0xffff0000u,
                 DSM_SDMA_FUNC_GE, 0x1234, 0xabc);
    ck_assert_uint_eq(p[0] & 0xff, 8);
    ck_assert_uint_eq((p[0] >> 8) & 0xff, 0);
    ck_assert_uint_eq((p[0] >> 26) & 1, 0); /* hdp_flush */
    ck_assert_uint_eq((p[0] >> 28) & 7, 5); /* func >= */
    ck_assert_uint_eq(p[0] >> 31, 1);       /* mem_poll */
    ck_assert_uint_eq(p[1], 0x40u);
    ck_assert_uint_eq(p[2], 1u);
    ck_assert_uint_eq(p[3], 0x11112222u);
    ck_assert_uint_eq(p[4], 0xffff0000u);
    ck_assert_uint_eq(p[5] & 0xffff, 0x1234); /* interval */
    ck_assert_uint_eq((p[5] >> 16) & 0xfff, 0xabc); /* retry_count */
    ck_assert_uint_eq(p[5] >> 28, 0);
    ck_assert_uint_eq(dsm_pkt_dwords(p[0]), 6);

    dsm_pkt_atomic(p, DSM_SDMA_ATOMIC_ADD64, 0x0000000200000008ull,
                   0xffffffff00000001ull, 0x5ull);
    ck_assert_uint_eq(p[0] & 0xff, 10);
    ck_assert_uint_eq((p[0] >> 16) & 1, 0);  /* loop off */
    ck_assert_uint_eq(p[0] >> 25, 47);       /* add64 */
    ck_assert_uint_eq(p[1], 8u);
    ck_assert_uint_eq(p[2], 2u);
    ck_assert_uint_eq(p[3], 1u);
    ck_assert_uint_eq(p[4], 0xffffffffu);
    ck_assert_uint_eq(p[5], 5u);
    ck_assert_uint_eq(p[6], 0u);
    ck_assert_uint_eq(p[7], 0u);
    ck_assert_uint_eq(dsm_pkt_dwords(p[0]), 8);
}
END_TEST

START_TEST(test_wait_seq_encoding)
{
    uint32_t p[12];
    /* Below 2^31: the guard (word < ref + 2^31) then word >= ref. */
    ck_assert_uint_eq(dsm_pkt_wait_seq(p, 0x1000, 5, 7), 12);
    ck_assert_uint_eq((p[0] >> 28) & 7, DSM_SDMA_FUNC_LT);
    ck_assert_uint_eq(p[3], 0x80000005u);
    ck_assert_uint_eq((p[6] >> 28) & 7, DSM_SDMA_FUNC_GE);
    ck_assert_uint_eq(p[9], 5u);
    ck_assert_uint_eq(p[10], 0xffffffffu);
    ck_assert_uint_eq((p[11] >> 16) & 0xfff, DSM_SDMA_POLL_RETRY_FOREVER);
    /* At or above 2^31: one poll. */
    ck_assert_uint_eq(dsm_pkt_wait_seq(p, 0x1000, 0x90000000u, 7), 6);
    ck_assert_uint_eq((p[0] >> 28) & 7, DSM_SDMA_FUNC_GE);
}
END_TEST

/* ------------------------------------------------------------ the model */

typedef struct mq {
    dsm_sdma_ring_t r;
    HsaQueueResource res;
    void *buf;
} mq_t;

static hsa_status_t (*m_lock)(void *, size_t, hsa_agent_t *, int, void **);
static hsa_status_t (*m_unlock)(void *);
static HSAKMT_STATUS (*m_create)(HSAuint32, HSA_QUEUE_TYPE, HSAuint32,
                                 HSA_QUEUE_PRIORITY, void *, HSAuint64,
                                 HsaEvent *, HsaQueueResource *);
static HSAKMT_STATUS (*m_destroy)(HSA_QUEUEID);
static void (*m_kick)(volatile uint64_t *);
static uint64_t (*m_faults)(const char **);
static void (*m_fault_abort)(int);

static void model_setup(void)
{
    hsa_status_t (*init)(void);
    HSAKMT_STATUS (*open_kfd)(void);
    model = dlopen(model_path, RTLD_NOW | RTLD_LOCAL);
    ck_assert_msg(model != NULL, "cannot load %s: %s", model_path, dlerror());
    void *p;
#define TAKE(v, n) p = msym(n); memcpy(&v, &p, sizeof(p))
    TAKE(init, "hsa_init");
    TAKE(open_kfd, "hsaKmtOpenKFD");
    TAKE(m_lock, "hsa_amd_memory_lock");
    TAKE(m_unlock, "hsa_amd_memory_unlock");
    TAKE(m_create, "hsaKmtCreateQueue");
    TAKE(m_destroy, "hsaKmtDestroyQueue");
    TAKE(m_kick, "hsa_model_kick");
    TAKE(m_faults, "hsa_model_faults");
    TAKE(m_fault_abort, "hsa_model_fault_abort");
    ck_assert_int_eq(init(), HSA_STATUS_SUCCESS);
    ck_assert_int_eq(open_kfd(), HSAKMT_STATUS_SUCCESS);
    m_fault_abort(0);
}

static void *locked(size_t n)
{
    void *p = NULL, *agent = NULL;
    hsa_agent_t gpu = {2};
    ck_assert_int_eq(posix_memalign(&p, 4096, n), 0);
    memset(p, 0, n);
    ck_assert_int_eq(m_lock(p, n, &gpu, 1, &agent), HSA_STATUS_SUCCESS);
    ck_assert_ptr_eq(agent, p);
    return p;
}

static void unlocked_free(void *p)
{
    ck_assert_int_eq(m_unlock(p), HSA_STATUS_SUCCESS);
    free(p);
}

static void mq_open(mq_t *q, uint64_t size)
{
    memset(q, 0, sizeof(*q));
    q->buf = locked(size);
    ck_assert_int_eq(m_create(1, HSA_QUEUE_SDMA, 100, HSA_QUEUE_PRIORITY_MAXIMUM,
                              q->buf, size, NULL, &q->res),
                     HSAKMT_STATUS_SUCCESS);
    q->r.buf = q->buf;
    q->r.size = size;
    q->r.rptr = q->res.Queue_read_ptr_aql;
    q->r.wptr = q->res.Queue_write_ptr_aql;
    q->r.doorbell = q->res.Queue_DoorBell_aql;
    q->r.kick = m_kick;
}

static void mq_close(mq_t *q)
{
    ck_assert_int_eq(m_destroy(q->res.QueueId), HSAKMT_STATUS_SUCCESS);
    unlocked_free(q->buf);
}

/* Wait (bounded) until the engine read everything committed. */
static int mq_drain(mq_t *q)
{
    for (int i = 0; i < 300000; i++) {
        if (__atomic_load_n(q->r.rptr, __ATOMIC_ACQUIRE) ==
            __atomic_load_n(&q->r.committed, __ATOMIC_ACQUIRE))
            return 1;
        usleep(100);
    }
    return 0;
}

/* One producer's packets at once: reserve, write, commit. */
static void put_pkts(mq_t *q, const uint32_t *pk, uint32_t n)
{
    uint64_t first, pos = dsm_ring_reserve(&q->r, n, &first);
    for (uint32_t i = 0; i < n; i++)
        dsm_ring_at(&q->r, pos)[i] = pk[i];
    dsm_ring_commit(&q->r, first, pos + n * 4u);
}

#define PRODUCERS 8
#define BATCHES 500

struct prod {
    mq_t *q;
    uint64_t *counter;
    uint32_t *mine;
    int id;
};

static void *producer(void *arg)
{
    struct prod *a = arg;
    for (uint32_t b = 1; b <= BATCHES; b++) {
        /* A batch: an ATOMIC add and a FENCE of this producer's count,
         * one reservation, one doorbell. */
        uint32_t pk[DSM_SDMA_ATOMIC_DW + DSM_SDMA_FENCE_DW];
        dsm_pkt_atomic(pk, DSM_SDMA_ATOMIC_ADD64, (uintptr_t)a->counter,
                       (uint64_t)a->id + 1, 0);
        dsm_pkt_fence(pk + DSM_SDMA_ATOMIC_DW, (uintptr_t)a->mine, b);
        put_pkts(a->q, pk, DSM_SDMA_ATOMIC_DW + DSM_SDMA_FENCE_DW);
    }
    return NULL;
}

START_TEST(test_ring_many_producers)
{
    mq_t q;
    uint64_t *mem;
    pthread_t t[PRODUCERS];
    struct prod a[PRODUCERS];
    uint64_t want = 0, faults0 = m_faults(NULL);

    /* 4 KiB: 48-byte batches wrap the ring dozens of times and fill it. */
    mq_open(&q, 4096);
    mem = locked(4096);
    for (int i = 0; i < PRODUCERS; i++) {
        a[i] = (struct prod){&q, &mem[0], (uint32_t *)&mem[8 + i], i};
        ck_assert_int_eq(pthread_create(&t[i], NULL, producer, &a[i]), 0);
        want += (uint64_t)(i + 1) * BATCHES;
    }
    for (int i = 0; i < PRODUCERS; i++)
        pthread_join(t[i], NULL);
    ck_assert(mq_drain(&q));
    ck_assert_uint_eq(__atomic_load_n(&mem[0], __ATOMIC_ACQUIRE), want);
    for (int i = 0; i < PRODUCERS; i++)
        ck_assert_uint_eq(*(uint32_t *)&mem[8 + i], BATCHES);
    ck_assert_uint_eq(q.r.doorbells, (uint64_t)PRODUCERS * BATCHES);
    ck_assert_uint_eq(*q.r.doorbell, q.r.committed);
    ck_assert_uint_eq(*q.r.wptr, q.r.committed);
    ck_assert_uint_gt(q.r.committed, 40 * 4096); /* wrapped many times */
    ck_assert_uint_eq(m_faults(NULL), faults0);
    mq_close(&q);
    unlocked_free(mem);
}
END_TEST

START_TEST(test_doorbell_semantics)
{
    mq_t q;
    uint32_t *w;
    uint64_t first, pos;

    mq_open(&q, 4096);
    w = locked(4096);
    /* Packets written but not rung: the engine does nothing. */
    pos = dsm_ring_reserve(&q.r, DSM_SDMA_FENCE_DW * 2, &first);
    dsm_pkt_fence(dsm_ring_at(&q.r, pos), (uintptr_t)&w[0], 1);
    dsm_pkt_fence(dsm_ring_at(&q.r, pos + 16), (uintptr_t)&w[1], 2);
    usleep(20000);
    ck_assert_uint_eq(w[0], 0);
    ck_assert_uint_eq(*q.r.rptr, 0);
    /* A doorbell that publishes only the first packet runs only it. */
    __atomic_store_n(q.r.doorbell, pos + 16, __ATOMIC_RELEASE);
    m_kick(q.r.doorbell);
    for (int i = 0; i < 300000 && !__atomic_load_n(&w[0], __ATOMIC_ACQUIRE); i++)
        usleep(100);
    ck_assert_uint_eq(w[0], 1);
    usleep(20000);
    ck_assert_uint_eq(w[1], 0);
    ck_assert_uint_eq(*q.r.rptr, pos + 16);
    /* The rest after the next one. */
    q.r.committed = pos + 16;
    dsm_ring_commit(&q.r, pos + 16, pos + 32);
    ck_assert(mq_drain(&q));
    ck_assert_uint_eq(w[1], 2);
    mq_close(&q);
    unlocked_free(w);
}
END_TEST

/* Run pk on a fresh queue; returns the new fault count minus the old. */
static uint64_t run_bad(const uint32_t *pk, uint32_t n, const char *want)
{
    mq_t q;
    const char *last = NULL;
    uint64_t f0 = m_faults(NULL), f = f0;
    mq_open(&q, 4096);
    put_pkts(&q, pk, n);
    for (int i = 0; i < 300000 && f == f0; i++) {
        usleep(100);
        f = m_faults(&last);
    }
    ck_assert_msg(f == f0 + 1, "no fault for %s", want);
    ck_assert_msg(strstr(last, want) != NULL, "fault '%s' lacks '%s'", last,
                  want);
    mq_close(&q);
    return f - f0;
}

START_TEST(test_model_refuses)
{
    uint32_t pk[8];
    char *mem = locked(8192);
    char *plain = malloc(64);
    HsaQueueResource res;

    /* Over the packet limit (count is 22 bits; the limit is below). */
    dsm_pkt_copy_linear(pk, (uintptr_t)mem, (uintptr_t)mem + 4096, 0x3ffff0);
    run_bad(pk, 7, "over the packet limit");
    /* Memory not locked for the GPU. */
    dsm_pkt_copy_linear(pk, (uintptr_t)plain, (uintptr_t)mem, 16);
    run_bad(pk, 7, "not locked");
    dsm_pkt_atomic(pk, DSM_SDMA_ATOMIC_ADD64, (uintptr_t)plain, 1, 0);
    run_bad(pk, 8, "not locked");
    /* Misaligned. */
    dsm_pkt_fence(pk, (uintptr_t)mem + 2, 1);
    run_bad(pk, 4, "not dword aligned");
    dsm_pkt_atomic(pk, DSM_SDMA_ATOMIC_ADD64, (uintptr_t)mem + 4, 1, 0);
    run_bad(pk, 8, "not qword aligned");
    dsm_pkt_poll(pk, (uintptr_t)mem + 1, 0, ~0u, DSM_SDMA_FUNC_GE, 1, 1);
    run_bad(pk, 6, "not dword aligned");
    /* Unknown opcode, sub-opcode, atomic. */
    pk[0] = 0x7f;
    run_bad(pk, 1, "undefined");
    dsm_pkt_copy_linear(pk, (uintptr_t)mem, (uintptr_t)mem + 64, 16);
    pk[0] |= 4u << 8; /* a tiled/sub-window copy */
    run_bad(pk, 7, "sub-opcode");
    dsm_pkt_atomic(pk, 39, (uintptr_t)mem, 1, 0);
    run_bad(pk, 8, "not modelled");
    /* A poll that gives up. */
    dsm_pkt_poll(pk, (uintptr_t)mem, 1, ~0u, DSM_SDMA_FUNC_EQ, 1, 3);
    run_bad(pk, 6, "retries failed");
    /* A doorbell that is not a dword offset, and one past the ring. */
    {
        mq_t q;
        const char *last;
        uint64_t f0 = m_faults(NULL);
        mq_open(&q, 4096);
        __atomic_store_n(q.r.doorbell, 6, __ATOMIC_RELEASE);
        m_kick(q.r.doorbell);
        for (int i = 0; i < 300000 && m_faults(&last) == f0; i++)
            usleep(100);
        ck_assert_uint_eq(m_faults(&last), f0 + 1);
        ck_assert_ptr_nonnull(strstr(last, "not dword aligned"));
        mq_close(&q);
        mq_open(&q, 4096);
        __atomic_store_n(q.r.doorbell, 8192, __ATOMIC_RELEASE);
        m_kick(q.r.doorbell);
        for (int i = 0; i < 300000 && m_faults(&last) == f0 + 1; i++)
            usleep(100);
        ck_assert_ptr_nonnull(strstr(last, "ahead of the read pointer"));
        mq_close(&q);
    }
    /* Rings the driver refuses. */
    ck_assert_int_eq(m_create(1, HSA_QUEUE_SDMA, 100, HSA_QUEUE_PRIORITY_MAXIMUM,
                              mem + 64, 1024, NULL, &res),
                     HSAKMT_STATUS_INVALID_PARAMETER);
    ck_assert_int_eq(m_create(1, HSA_QUEUE_SDMA, 100, HSA_QUEUE_PRIORITY_MAXIMUM,
                              mem, 3072, NULL, &res),
                     HSAKMT_STATUS_INVALID_PARAMETER);
    ck_assert_int_ne(m_create(1, HSA_QUEUE_SDMA, 100, HSA_QUEUE_PRIORITY_MAXIMUM,
                              plain, 1024, NULL, &res),
                     HSAKMT_STATUS_SUCCESS); /* not locked, or misaligned */
    ck_assert_int_eq(m_create(1, HSA_QUEUE_COMPUTE, 100,
                              HSA_QUEUE_PRIORITY_MAXIMUM, mem, 4096, NULL, &res),
                     HSAKMT_STATUS_NOT_SUPPORTED);
    free(plain);
    unlocked_free(mem);
}
END_TEST

/* Device memory of the model's pools: the engines reach a device-local
 * allocation without a lock, hsa_amd_memory_lock refuses it (locking is
 * for host memory), an IPC handle attached (here in the same process, a
 * second mapping of the same memfd) shows the same bytes and is reachable
 * too, and once freed or detached the engines fault on it as on host
 * memory not locked. */
static hsa_status_t dev_pool_cb(hsa_amd_memory_pool_t p, void *arg)
{
    *(hsa_amd_memory_pool_t *)arg = p;
    return HSA_STATUS_INFO_BREAK;
}

START_TEST(test_model_device_memory)
{
    hsa_status_t (*iter)(hsa_agent_t,
                         hsa_status_t (*)(hsa_amd_memory_pool_t, void *),
                         void *);
    hsa_status_t (*alloc)(hsa_amd_memory_pool_t, size_t, uint32_t, void **);
    hsa_status_t (*pfree)(void *);
    hsa_status_t (*ipc_create)(void *, size_t, hsa_amd_ipc_memory_t *);
    hsa_status_t (*ipc_attach)(const hsa_amd_ipc_memory_t *, size_t,
                               uint32_t, const hsa_agent_t *, void **);
    hsa_status_t (*ipc_detach)(void *);
    hsa_agent_t gpu = {2};
    hsa_amd_memory_pool_t pool = {0};
    hsa_amd_ipc_memory_t h;
    uint32_t pk[2 * DSM_SDMA_COPY_DW];
    void *p, *agent = NULL, *att = NULL;
    unsigned char *d, *host = locked(4096);
    mq_t q;

    TAKE(iter, "hsa_amd_agent_iterate_memory_pools");
    TAKE(alloc, "hsa_amd_memory_pool_allocate");
    TAKE(pfree, "hsa_amd_memory_pool_free");
    TAKE(ipc_create, "hsa_amd_ipc_memory_create");
    TAKE(ipc_attach, "hsa_amd_ipc_memory_attach");
    TAKE(ipc_detach, "hsa_amd_ipc_memory_detach");
    ck_assert_int_eq(iter(gpu, dev_pool_cb, &pool), HSA_STATUS_SUCCESS);
    ck_assert_uint_ne(pool.handle, 0);
    ck_assert_int_eq(alloc(pool, 8192, 0, &p), HSA_STATUS_SUCCESS);
    d = p;
    for (int i = 0; i < 4096; i++)
        host[i] = (unsigned char)(i * 7 + 3);
    /* host -> device, device -> device: no lock asked for. */
    mq_open(&q, 4096);
    dsm_pkt_copy_linear(pk, (uintptr_t)d, (uintptr_t)host, 4096);
    dsm_pkt_copy_linear(pk + DSM_SDMA_COPY_DW, (uintptr_t)d + 4096,
                        (uintptr_t)d, 4096);
    put_pkts(&q, pk, 2 * DSM_SDMA_COPY_DW);
    ck_assert(mq_drain(&q));
    mq_close(&q);
    /* The CPU may not touch device memory (the model maps it PROT_NONE):
     * read it back by engine. */
    {
        unsigned char *back = locked(4096);
        mq_open(&q, 4096);
        dsm_pkt_copy_linear(pk, (uintptr_t)back, (uintptr_t)d + 4096, 4096);
        put_pkts(&q, pk, DSM_SDMA_COPY_DW);
        ck_assert(mq_drain(&q));
        mq_close(&q);
        ck_assert_int_eq(memcmp(back, host, 4096), 0);
        unlocked_free(back);
    }
    ck_assert_int_ne(m_lock(d, 4096, &gpu, 1, &agent), HSA_STATUS_SUCCESS);
    /* IPC: another mapping of the same bytes, reachable by the engines. */
    ck_assert_int_eq(ipc_create(d, 8192, &h), HSA_STATUS_SUCCESS);
    ck_assert_int_eq(ipc_attach(&h, 8192, 1, &gpu, &att), HSA_STATUS_SUCCESS);
    ck_assert_ptr_ne(att, d);
    memset(host, 0, 4096);
    mq_open(&q, 4096);
    dsm_pkt_copy_linear(pk, (uintptr_t)host, (uintptr_t)att + 4096, 4096);
    put_pkts(&q, pk, DSM_SDMA_COPY_DW);
    ck_assert(mq_drain(&q));
    mq_close(&q);
    for (int i = 0; i < 4096; i++)
        ck_assert_uint_eq(host[i], (unsigned char)(i * 7 + 3));
    ck_assert_int_eq(ipc_detach(att), HSA_STATUS_SUCCESS);
    dsm_pkt_copy_linear(pk, (uintptr_t)host, (uintptr_t)att, 16);
    run_bad(pk, DSM_SDMA_COPY_DW, "not locked");
    ck_assert_int_eq(pfree(d), HSA_STATUS_SUCCESS);
    dsm_pkt_copy_linear(pk, (uintptr_t)d, (uintptr_t)host, 16);
    run_bad(pk, DSM_SDMA_COPY_DW, "not locked");
    unlocked_free(host);
}
END_TEST

/* WAIT on a word that wraps its low dword: with the guard the queue waits
 * for 0x1_00000005; a single unsigned ">= 5" poll would pass at once. */
START_TEST(test_wait_wrap_safe)
{
    mq_t q;
    uint64_t *mem = locked(4096);
    uint32_t pk[16], n;

    mq_open(&q, 4096);
    mem[0] = 0xfffffff0ull;
    n = dsm_pkt_wait_seq(pk, (uintptr_t)&mem[0], 5, 1);
    dsm_pkt_fence(pk + n, (uintptr_t)&mem[1], 1);
    put_pkts(&q, pk, n + DSM_SDMA_FENCE_DW);
    usleep(20000);
    ck_assert_uint_eq(__atomic_load_n((uint32_t *)&mem[1], __ATOMIC_ACQUIRE), 0);
    __atomic_store_n(&mem[0], 0x100000003ull, __ATOMIC_RELEASE);
    usleep(20000);
    ck_assert_uint_eq(__atomic_load_n((uint32_t *)&mem[1], __ATOMIC_ACQUIRE), 0);
    __atomic_store_n(&mem[0], 0x100000005ull, __ATOMIC_RELEASE);
    ck_assert(mq_drain(&q));
    ck_assert_uint_eq(*(uint32_t *)&mem[1], 1);
    mq_close(&q);
    unlocked_free(mem);
}
END_TEST

/* ------------------------------------------------------------ backend */

#ifdef DSM_BUILD_CUDA
/* sdma.c lists the cuda backend in builds that have it; this test links
 * the layer without it (its sources are not under test here), so the
 * table entry is a backend that is never usable. */
static dsm_status_t no_device(void)
{
    return DSM_ERR_NO_DEVICE;
}
const dsm_sdma_backend_ops_t dsm_sdma_cuda_ops = {
    .size = sizeof(dsm_sdma_backend_ops_t),
    .name = "cuda",
    .probe = no_device,
};
#endif

static dsm_wake_t wake, app_wake;

static dsm_sdma_t *open_hsa(int stats)
{
    dsm_sdma_gpu_settings_t set = {.device = -1, .hsa_library = model_path,
                                   .hsa_sdma_engine = -1};
    dsm_sdma_config_t cfg = {.engines = 2, .depth = 256, .req_depth = 256,
                             .stats = stats, .proxy_thread = -1,
                             .wake = &wake, .app_wake = &app_wake,
                             .backend = "hsa"};
    dsm_sdma_t *s = NULL;
    dsm_sdma_gpu_configure(&set);
    ck_assert_int_eq(dsm_sdma_open(&cfg, &s), DSM_OK);
    ck_assert_str_eq(dsm_sdma_backend_name(s), "hsa");
    ck_assert_ptr_nonnull(strstr(dsm_sdma_describe(s), "ENGINE MODEL"));
    /* Emulated, so not claimed native. */
    ck_assert_uint_eq(dsm_sdma_caps(s) &
                      (DSM_SDMA_CAP_BCAST_NATIVE | DSM_SDMA_CAP_SWAP_NATIVE), 0);
    ck_assert(dsm_sdma_caps(s) & DSM_SDMA_CAP_SIGNAL_ADD);
    return s;
}

START_TEST(test_backend_commands)
{
    dsm_sdma_t *s = open_hsa(0);
    dsm_sdma_queue_t *q = s->queues[0];
    size_t big = 10u << 20; /* three COPY_LINEAR packets */
    unsigned char *a = malloc(big), *b = calloc(1, big), *c = calloc(1, big);
    unsigned char x[100], y[100];
    uint64_t *w = calloc(4, sizeof(uint64_t));
    uint64_t seq;

    for (size_t i = 0; i < big; i++)
        a[i] = (unsigned char)(i * 7 + 1);
    memset(x, 1, sizeof(x));
    memset(y, 2, sizeof(y));
    w[0] = 0xfffffffeull;
    dsm_cmd_t cmds[] = {
        {.op = DSM_CMD_COPY, .u.copy = {.src = a, .dst = b, .len = big}},
        {.op = DSM_CMD_BCAST,
         .u.copy = {.src = a, .dst = c, .dst2 = c + big / 2, .len = 4096}},
        {.op = DSM_CMD_SWAP, .u.copy = {.src = x, .dst = y, .len = sizeof(x)}},
        {.op = DSM_CMD_SIGNAL, .u.sig = {.word = &w[0], .value = 0x100000001ull}},
        {.op = DSM_CMD_SIGNAL_ADD, .u.sig = {.word = &w[1], .value = 41}},
        {.op = DSM_CMD_SIGNAL_ADD, .u.sig = {.word = &w[1], .value = 1}},
    };
    seq = dsm_sdma_post(q, cmds, DSM_ARRAY_SIZE(cmds));
    dsm_sdma_queue_wait(q, seq);
    ck_assert_int_eq(memcmp(a, b, big), 0);
    ck_assert_int_eq(memcmp(a, c, 4096), 0);
    ck_assert_int_eq(memcmp(a, c + big / 2, 4096), 0);
    ck_assert_uint_eq(x[0], 2);
    ck_assert_uint_eq(y[99], 1);
    ck_assert_uint_eq(w[0], 0x100000001ull);
    ck_assert_uint_eq(w[1], 42);
    dsm_sdma_close(s, 0);
    free(a);
    free(b);
    free(c);
    free(w);
}
END_TEST

START_TEST(test_backend_chain)
{
    dsm_sdma_t *s = open_hsa(1);
    dsm_sdma_queue_t *cq = NULL;
    uint64_t *trig = calloc(1, sizeof(uint64_t)), *flag = calloc(1, 8);
    char src[64] = "gated", dst[64] = "";
    uint64_t seq;

    ck_assert_int_eq(dsm_sdma_queue_create(s, 1, &cq), DSM_OK);
    dsm_cmd_t chain[] = {
        {.op = DSM_CMD_WAIT, .u.sig = {.word = trig, .value = 3}},
        {.op = DSM_CMD_COPY, .u.copy = {.src = src, .dst = dst, .len = 6}},
        {.op = DSM_CMD_SIGNAL, .u.sig = {.word = flag, .value = 9}},
    };
    seq = dsm_sdma_post(cq, chain, 3);
    usleep(30000);
    ck_assert_uint_eq(__atomic_load_n(flag, __ATOMIC_ACQUIRE), 0);
    ck_assert_str_eq(dst, "");
    dsm_sdma_trigger(s, trig, 2, NULL);
    usleep(30000);
    ck_assert_uint_eq(__atomic_load_n(flag, __ATOMIC_ACQUIRE), 0);
    dsm_sdma_trigger(s, trig, 3, NULL);
    dsm_sdma_queue_wait(cq, seq);
    ck_assert_str_eq(dst, "gated");
    ck_assert_uint_eq(*flag, 9);
    /* Many requests from the proxy path, one doorbell per batch. */
    uint64_t *ctr = calloc(1, sizeof(uint64_t)), done = 0;
    for (int i = 0; i < 1000; i++) {
        dsm_cmd_t c = {.op = DSM_CMD_SIGNAL_ADD,
                       .u.sig = {.word = ctr, .value = 1}, .done = &done};
        dsm_sdma_request(s, i & 1, &c);
    }
    while (__atomic_load_n(&done, __ATOMIC_ACQUIRE) < 1000)
        dsm_sdma_progress(s, 1);
    ck_assert_uint_eq(*ctr, 1000);
    dsm_sdma_close(s, 0); /* prints the per-queue packet counters */
    free(trig);
    free(flag);
    free(ctr);
}
END_TEST

START_TEST(test_model_loads)
{
    model_setup();
}
END_TEST

/* The model is loaded by the first test, where ck_assert may report. */
static Suite *setup_suite(void)
{
    Suite *su = suite_create("hsa-model");
    TCase *tc = tcase_create("load");
    tcase_add_test(tc, test_model_loads);
    suite_add_tcase(su, tc);
    return su;
}

/* Two commands lock ranges with the same first page: the shorter one
 * retires while the longer one waits behind a trigger. The engine must
 * still reach all of the longer range (before the fix the backend made
 * two locks with one base address, and unlocking the first dropped the
 * second: a fault). */
START_TEST(test_backend_overlapping_locks)
{
    dsm_sdma_t *s = open_hsa(0);
    dsm_sdma_queue_t *q1 = NULL, *q2 = NULL;
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    char *a = NULL, *b = calloc(1, 3 * pg), *c = calloc(1, 16);
    uint64_t *t = calloc(2, sizeof(uint64_t)), s1, s2, f0 = m_faults(NULL);

    ck_assert_int_eq(posix_memalign((void **)&a, pg, 3 * pg), 0);
    memset(a, 7, 3 * pg);
    ck_assert_int_eq(dsm_sdma_queue_create(s, 0, &q1), DSM_OK);
    ck_assert_int_eq(dsm_sdma_queue_create(s, 1, &q2), DSM_OK);
    dsm_cmd_t c1[] = {
        {.op = DSM_CMD_WAIT, .u.sig = {.word = &t[0], .value = 1}},
        {.op = DSM_CMD_COPY, .u.copy = {.src = a, .dst = c, .len = 16}},
    };
    dsm_cmd_t c2[] = {
        {.op = DSM_CMD_WAIT, .u.sig = {.word = &t[1], .value = 1}},
        {.op = DSM_CMD_COPY, .u.copy = {.src = a, .dst = b, .len = 3 * pg}},
    };
    s1 = dsm_sdma_post(q1, c1, 2);
    s2 = dsm_sdma_post(q2, c2, 2);
    dsm_sdma_trigger(s, &t[0], 1, NULL);
    dsm_sdma_queue_wait(q1, s1);
    dsm_sdma_trigger(s, &t[1], 1, NULL);
    for (int i = 0; i < 100000 && dsm_sdma_queue_completed(q2) < s2 &&
                    m_faults(NULL) == f0; i++)
        usleep(100);
    ck_assert_uint_eq(m_faults(NULL), f0);
    dsm_sdma_queue_wait(q2, s2);
    ck_assert_int_eq(memcmp(a, b, 3 * pg), 0);
    dsm_sdma_close(s, 0);
    free(a);
    free(b);
    free(c);
    free(t);
}
END_TEST

static Suite *hsa_suite(void)
{
    Suite *su = suite_create("hsa");
    TCase *tc = tcase_create("packets");
    tcase_add_test(tc, test_copy_linear);
    tcase_add_test(tc, test_fence_trap_nop);
    tcase_add_test(tc, test_poll_atomic);
    tcase_add_test(tc, test_wait_seq_encoding);
    suite_add_tcase(su, tc);
    tc = tcase_create("model");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_ring_many_producers);
    tcase_add_test(tc, test_doorbell_semantics);
    tcase_add_test(tc, test_model_refuses);
    tcase_add_test(tc, test_wait_wrap_safe);
    tcase_add_test(tc, test_model_device_memory);
    suite_add_tcase(su, tc);
    tc = tcase_create("backend");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_backend_commands);
    tcase_add_test(tc, test_backend_chain);
    tcase_add_test(tc, test_backend_overlapping_locks);
    suite_add_tcase(su, tc);
    return su;
}

int main(void)
{
    static const dsm_check_suite_fn suites[] = {setup_suite, hsa_suite};
    const char *env = getenv("HSA_MODEL_LIB");
    const char *top = getenv("top_builddir");

    if (env)
        snprintf(model_path, sizeof(model_path), "%s", env);
    else
        snprintf(model_path, sizeof(model_path),
                 "%s/test/hsa/.libs/libhsamodel.so", top ? top : ".");
    if (access(model_path, R_OK)) {
        fprintf(stderr, "SKIP: engine model %s not built\n", model_path);
        return 77;
    }
    /* One process: the model that setup_suite's test loads serves the
     * tests after it. */
    return dsm_check_run(suites, DSM_ARRAY_SIZE(suites), CK_NOFORK);
}
