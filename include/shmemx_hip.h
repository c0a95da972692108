/*
 * dmashmem device API for HIP kernels (issues #12, #13): the routines of
 * shmemx_cuda.h, with the same names and semantics, for AMD GPUs over the
 * hsa backend. A kernel writes SDMA packets into its PE's own SDMA queue
 * and rings the queue's doorbell itself: no host proxy in the loop.
 *
 * Header only, like the CUDA one: every device routine is a static inline
 * function in this file and in shmemx_sdma_pkt.h (the one packet encoder,
 * shared with the library's host backend and its engine model), so hipcc
 * compiles kernels that call them without -fgpu-rdc or device libraries.
 * The runtime's state reaches the kernel as one plain struct, shmemx_dev_t,
 * which the host fills with shmemx_dev_get() and passes to the kernel by
 * value. Man page: shmemx_dev_hip(3).
 *
 * How data moves:
 *  - engine path: putmem/getmem (and the data of putmem_signal_nbi) above
 *    store_max bytes. The calling thread reserves ring space with one
 *    compare-and-swap on the ring's reserve word, writes COPY_LINEAR
 *    packets (split at the packet limit, 4 MiB - 32 bytes), then the
 *    signal (SET: two FENCEs, low then high dword; ADD: ATOMIC add64) and
 *    a FENCE that writes the low 32 bits of the reservation's end offset
 *    into the queue's completion dword; it publishes the write pointer and
 *    rings the doorbell once reservations before it are published (so
 *    the doorbell never moves backwards). The engine runs a queue's
 *    packets in order: completion of everything up to offset E is "the
 *    completion dword reached E" (a 32-bit sequence compare, with the
 *    64-bit read pointer as the wrap guard).
 *  - store path: p/g, AMOs, signals of small puts and putmem/getmem of at
 *    most store_max bytes (SHMEM_DEV_STORE_MAX) are loads, stores and
 *    system-scope atomics on the peer's mapping.
 * Lanes: the lanes of one wavefront that call an engine-path routine
 * together take turns (a ballot loop), since a lane that waits for another
 * lane's ring commit inside one wavefront would wait for ever.
 * Order: engine operations complete in issue order (one queue), so a
 * signal after data never overtakes it; a store-path operation may
 * overtake engine operations in flight, so shmemx_dev_fence waits for
 * them (it is shmemx_dev_quiet), as in the CUDA API.
 *
 * Verified here without an AMD GPU: hipcc (ROCm 5.2.3) compiles a kernel
 * that calls every routine for gfx90a and gfx940 (test/gpu/
 * dev_compile_hip.sh); the same code compiled for the host with
 * SHMEMX_HIP_HOST_PRODUCER defined (plain C, host threads in the place of
 * GPU threads) runs against the SDMA engine model (test/hsa/dev_host.sh).
 * Nothing of it has run on MI200/MI300 hardware.
 */
#ifndef SHMEMX_HIP_H
#define SHMEMX_HIP_H

#include <stddef.h>
#include <stdint.h>

#include <shmemx_dev_common.h>
#include <shmemx_sdma_pkt.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- what the host and the kernel share (plain C) ---- */


/* Index (in 64-bit words) of the barrier words in a PE's word block
 * (symmetric heap), each on its own 128-byte line. */
#define SHMEMX_DEV_W_EPOCH 0   /* barrier_all calls so far */
#define SHMEMX_DEV_W_ARRIVE 16 /* [npes]: barrier epoch from each PE */

/* Copy packets per ring reservation: a larger put takes several (each
 * ends with its completion FENCE); 256 packets are 1 GiB, 7 KiB of ring. */
#define SHMEMX_DEV_CHUNK_PKTS 256u

typedef struct shmemx_dev {
    int me, npes;
    uint32_t store_max;  /* putmem/getmem up to this many bytes use stores */
    uint32_t pad_;
    dsm_sdma_ring_t *ring;     /* this PE's device SDMA queue */
    volatile uint32_t *done;   /* completion dword (FENCE target) */
    unsigned long long *words; /* this PE's word block (symmetric) */
    const uint64_t *base;      /* [npes][SEGS] GPU addresses, 0: unreachable */
    uint64_t lo[SHMEMX_DEV_SEGS]; /* this PE's segments, as the program
                                   * sees them (host addresses) */
    uint64_t size[SHMEMX_DEV_SEGS];
} shmemx_dev_t;

/* The types of the device atomics, X(C type, TYPENAME); those of p/g are
 * SHMEMX_DEV_TYPES_RMA (shmemx_dev_common.h). */
#define SHMEMX_DEV_TYPES_AMO(X)                                                \
    X(int32_t, int32)                                                          \
    X(uint32_t, uint32)                                                        \
    X(int64_t, int64)                                                          \
    X(uint64_t, uint64)

/* Host: fill *d (size: sizeof(shmemx_dev_t), checked against the
 * library's) for kernels of this PE. Collective over all PEs the first
 * time (it allocates symmetric words and opens the PE's device SDMA
 * queue); later calls return the same handle, valid until shmem_finalize.
 * Returns 0, or -1 after one line on stderr naming the reason (not the
 * hsa backend; the hsa backend without SDMA queues). */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif
int shmemx_dev_get_hip(shmemx_dev_t *d, size_t size);
int pshmemx_dev_get_hip(shmemx_dev_t *d, size_t size);
#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

/* The name of the CUDA API: shmemx_dev_get(&d). */
static inline int shmemx_dev_get(shmemx_dev_t *d)
{
    return shmemx_dev_get_hip(d, sizeof(*d));
}

#ifdef __cplusplus
}
#endif

/* ---- device routines ----
 * Compiled by hipcc for kernels, or for the host with
 * SHMEMX_HIP_HOST_PRODUCER defined (the library's tests: host threads
 * produce into the queue as GPU threads would, against the engine model,
 * where a GPU address is the host address). */
#if defined(__HIPCC__) || defined(SHMEMX_HIP_HOST_PRODUCER)

#if defined(__HIPCC__)
#include <hip/hip_runtime.h>
#define SHMEMX_DEV_FN static __device__ inline
#else
#include <stdio.h>
#include <stdlib.h>
#define SHMEMX_DEV_FN static inline
#endif

/* Comparisons of signal_wait_until (same values as shmem.h's). */
#ifndef SHMEM_CMP_EQ
#define SHMEM_CMP_EQ 0
#define SHMEM_CMP_NE 1
#define SHMEM_CMP_GT 2
#define SHMEM_CMP_LE 3
#define SHMEM_CMP_LT 4
#define SHMEM_CMP_GE 5
#endif
#ifndef SHMEM_SIGNAL_SET
#define SHMEM_SIGNAL_SET 0
#define SHMEM_SIGNAL_ADD 1
#endif

/* A misuse found in a kernel: one line, then the kernel traps (the host
 * sees the kernel fail); on the host, the process aborts. One function,
 * not inlined: device printf expands to much code, and every routine
 * has a misuse to report. */
#define SHMEMX_DEV__E_PE 0     /* v: the PE */
#define SHMEMX_DEV__E_REMOTE 1 /* v: the PE, on another node */
#define SHMEMX_DEV__E_ADDR 2   /* v: the address */
#define SHMEMX_DEV__E_SIGOP 3  /* v: sig_op */
#define SHMEMX_DEV__E_CMP 4    /* v: the comparison */
#if defined(__HIPCC__)
#define SHMEMX_DEV__PRINT printf
#define SHMEMX_DEV__ABORT() __builtin_trap()
#else
#define SHMEMX_DEV__PRINT(...) fprintf(stderr, __VA_ARGS__)
#define SHMEMX_DEV__ABORT() abort()
#endif
#if defined(__HIPCC__)
static __device__ __attribute__((noinline, unused)) void
#else
static __attribute__((noinline, unused)) void
#endif
shmemx_dev__fail(const shmemx_dev_t *d, const char *routine, int what,
                 uint64_t v)
{
    switch (what) {
    case SHMEMX_DEV__E_PE:
        SHMEMX_DEV__PRINT("dmashmem: %s: PE %d: invalid PE %d (npes %d)\n",
                          routine, d->me, (int)v, d->npes);
        break;
    case SHMEMX_DEV__E_REMOTE:
        SHMEMX_DEV__PRINT("dmashmem: %s: PE %d: PE %d is on another node: "
                          "kernels reach only PEs of this node\n",
                          routine, d->me, (int)v);
        break;
    case SHMEMX_DEV__E_ADDR:
        SHMEMX_DEV__PRINT("dmashmem: %s: PE %d: address %p is not "
                          "symmetric\n",
                          routine, d->me, (void *)(uintptr_t)v);
        break;
    case SHMEMX_DEV__E_SIGOP:
        SHMEMX_DEV__PRINT("dmashmem: %s: PE %d: invalid sig_op %d\n",
                          routine, d->me, (int)v);
        break;
    default:
        SHMEMX_DEV__PRINT("dmashmem: %s: PE %d: invalid comparison %d\n",
                          routine, d->me, (int)v);
        break;
    }
    SHMEMX_DEV__ABORT();
}

/* The lanes of one wavefront that arrive together run `body` one after
 * the other (lowest lane first); on the host, a thread is one lane. */
#if defined(__HIP_DEVICE_COMPILE__)
#define SHMEMX_DEV__SERIAL(body)                                               \
    do {                                                                       \
        unsigned long long shmemx__m = __ballot(1);                            \
        while (shmemx__m) {                                                    \
            if ((int)__lane_id() == (int)__ffsll((long long)shmemx__m) - 1) {  \
                body;                                                          \
            }                                                                  \
            shmemx__m &= shmemx__m - 1;                                        \
        }                                                                      \
    } while (0)
#else
#define SHMEMX_DEV__SERIAL(body)                                               \
    do {                                                                       \
        body;                                                                  \
    } while (0)
#endif

SHMEMX_DEV_FN uint64_t shmemx_dev__ld_acq(const volatile void *p)
{
    return __atomic_load_n((const volatile uint64_t *)p, __ATOMIC_ACQUIRE);
}

SHMEMX_DEV_FN void shmemx_dev__st_rel(volatile void *p, uint64_t v)
{
    __atomic_store_n((volatile uint64_t *)p, v, __ATOMIC_RELEASE);
}

/* Stores before it are visible system-wide before those after it. */
SHMEMX_DEV_FN void shmemx_dev__fence_sys(void)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* The GPU address of symmetric address sym on PE pe. */
SHMEMX_DEV_FN char *shmemx_dev__ptr(const shmemx_dev_t *d, const void *sym,
                                    int pe, const char *routine)
{
    uint64_t a = (uint64_t)(uintptr_t)sym;
    if ((unsigned)pe >= (unsigned)d->npes)
        shmemx_dev__fail(d, routine, SHMEMX_DEV__E_PE, (uint64_t)pe);
    for (int s = 0; s < SHMEMX_DEV_SEGS; s++) {
        uint64_t off = a - d->lo[s];
        if (off < d->size[s]) {
            uint64_t b = d->base[pe * SHMEMX_DEV_SEGS + s];
            if (!b)
                shmemx_dev__fail(d, routine, SHMEMX_DEV__E_REMOTE,
                                 (uint64_t)pe);
            return (char *)(uintptr_t)(b + off);
        }
    }
    shmemx_dev__fail(d, routine, SHMEMX_DEV__E_ADDR, a);
    return 0;
}

/* A local address as the GPU and its engine reach it: a symmetric one
 * through this PE's own table entry (symmetric addresses are the host's,
 * as in host code), anything else as given (device memory, host memory
 * registered for the GPU). */
SHMEMX_DEV_FN char *shmemx_dev__local(const shmemx_dev_t *d, const void *p)
{
    uint64_t a = (uint64_t)(uintptr_t)p;
    for (int s = 0; s < SHMEMX_DEV_SEGS; s++) {
        uint64_t off = a - d->lo[s];
        if (off < d->size[s])
            return (char *)(uintptr_t)(d->base[d->me * SHMEMX_DEV_SEGS + s] +
                                       off);
    }
    return (char *)(uintptr_t)p;
}

/* Everything up to ring offset `end` completed: the completion dword
 * (low 32 bits of the last completed reservation's end) is at or past
 * it as a sequence number; a waiter that slept through 2^31 bytes of
 * packets is caught by the 64-bit read pointer, far past end. */
SHMEMX_DEV_FN int shmemx_dev__done_by(const shmemx_dev_t *d, uint64_t end)
{
    uint32_t v = __atomic_load_n(d->done, __ATOMIC_ACQUIRE);
    uint64_t rp;
    if ((int32_t)(v - (uint32_t)end) >= 0)
        return 1;
    rp = __atomic_load_n(d->ring->rptr, __ATOMIC_ACQUIRE);
    return rp > end && rp - end > (1ull << 30);
}

SHMEMX_DEV_FN void shmemx_dev__wait_done(const shmemx_dev_t *d, uint64_t end)
{
    while (!shmemx_dev__done_by(d, end))
        dsm_ring_relax();
}

/* Engine path: n bytes src -> dst (GPU addresses) in COPY_LINEARs, then
 * the signal when sig (SET: FENCE low dword, FENCE high dword; ADD: ATOMIC
 * add64), then the completion FENCE; at most SHMEMX_DEV_CHUNK_PKTS copies
 * per reservation. Returns the end offset of the last reservation. */
SHMEMX_DEV_FN uint64_t shmemx_dev__issue(const shmemx_dev_t *d, uint64_t dst,
                                         uint64_t src, uint64_t n,
                                         uint64_t sig, uint64_t sigval,
                                         int sigop)
{
    dsm_sdma_ring_t *r = d->ring;
    for (;;) {
        uint64_t left = (n + DSM_SDMA_COPY_MAX - 1) / DSM_SDMA_COPY_MAX;
        uint32_t pk = left > SHMEMX_DEV_CHUNK_PKTS ? SHMEMX_DEV_CHUNK_PKTS
                                                   : (uint32_t)left;
        int last = pk == left;
        uint32_t sdw = !last || !sig ? 0
                       : sigop == SHMEM_SIGNAL_SET ? 2 * DSM_SDMA_FENCE_DW
                                                   : DSM_SDMA_ATOMIC_DW;
        uint32_t ndw = pk * DSM_SDMA_COPY_DW + sdw + DSM_SDMA_FENCE_DW;
        uint64_t first, pos = dsm_ring_reserve(r, ndw, &first), end;
        uint32_t npk = pk + 1;
        for (uint32_t i = 0; i < pk; i++) {
            uint32_t m = n > DSM_SDMA_COPY_MAX ? DSM_SDMA_COPY_MAX
                                               : (uint32_t)n;
            dsm_pkt_copy_linear(dsm_ring_at(r, pos), dst, src, m);
            pos += DSM_SDMA_COPY_DW * 4u;
            dst += m;
            src += m;
            n -= m;
        }
        /* (Both signal forms are 8 dwords: tell them by the op.) */
        if (sdw && sigop == SHMEM_SIGNAL_SET) {
            dsm_pkt_fence(dsm_ring_at(r, pos), sig, dsm_pkt_lo(sigval));
            dsm_pkt_fence(dsm_ring_at(r, pos + DSM_SDMA_FENCE_DW * 4u),
                          sig + 4, dsm_pkt_hi(sigval));
            npk += 2;
        } else if (sdw) {
            dsm_pkt_atomic(dsm_ring_at(r, pos), DSM_SDMA_ATOMIC_ADD64, sig,
                           sigval, 0);
            npk++;
        }
        pos += sdw * 4u;
        end = pos + DSM_SDMA_FENCE_DW * 4u;
        dsm_pkt_fence(dsm_ring_at(r, pos), (uint64_t)(uintptr_t)d->done,
                      (uint32_t)end);
        __atomic_fetch_add(&r->packets, npk, __ATOMIC_RELAXED);
        dsm_ring_commit(r, first, end);
        if (last)
            return end;
    }
}

/* Copy n bytes with loads and stores (the store path). */
SHMEMX_DEV__DEFINE_COPY(SHMEMX_DEV_FN)

/* ---- completion and order ---- */

/* Every operation issued so far by any thread of this PE is complete:
 * the engine has run every reserved packet, stores are visible. */
SHMEMX_DEV_FN void shmemx_dev_quiet(shmemx_dev_t d)
{
    shmemx_dev__fence_sys();
    shmemx_dev__wait_done(&d, __atomic_load_n(&d.ring->reserved,
                                              __ATOMIC_ACQUIRE));
}

/* Engine operations are ordered among themselves (one queue, run in
 * order), but a later store-path operation could overtake one in flight:
 * fence waits for the engine (a quiet). */
SHMEMX_DEV_FN void shmemx_dev_fence(shmemx_dev_t d)
{
    shmemx_dev_quiet(d);
}

/* ---- RMA ---- */

SHMEMX_DEV_FN void shmemx_dev_putmem_nbi(shmemx_dev_t d, void *dest,
                                         const void *src, size_t n, int pe)
{
    char *r = shmemx_dev__ptr(&d, dest, pe, "shmemx_dev_putmem_nbi");
    src = shmemx_dev__local(&d, src);
    if (n <= d.store_max) {
        shmemx_dev__copy(r, src, n);
        return;
    }
    SHMEMX_DEV__SERIAL(shmemx_dev__issue(&d, (uint64_t)(uintptr_t)r,
                                         (uint64_t)(uintptr_t)src, n, 0, 0,
                                         0));
}

SHMEMX_DEV_FN void shmemx_dev_putmem(shmemx_dev_t d, void *dest,
                                     const void *src, size_t n, int pe)
{
    char *r = shmemx_dev__ptr(&d, dest, pe, "shmemx_dev_putmem");
    uint64_t end = 0;
    src = shmemx_dev__local(&d, src);
    if (n <= d.store_max) {
        shmemx_dev__copy(r, src, n);
        shmemx_dev__fence_sys();
        return;
    }
    SHMEMX_DEV__SERIAL(end = shmemx_dev__issue(&d, (uint64_t)(uintptr_t)r,
                                               (uint64_t)(uintptr_t)src, n,
                                               0, 0, 0));
    shmemx_dev__wait_done(&d, end);
}

SHMEMX_DEV_FN void shmemx_dev_getmem_nbi(shmemx_dev_t d, void *dest,
                                         const void *src, size_t n, int pe)
{
    char *r = shmemx_dev__ptr(&d, src, pe, "shmemx_dev_getmem_nbi");
    dest = shmemx_dev__local(&d, dest);
    if (n <= d.store_max) {
        shmemx_dev__copy(dest, r, n);
        return;
    }
    SHMEMX_DEV__SERIAL(shmemx_dev__issue(&d, (uint64_t)(uintptr_t)dest,
                                         (uint64_t)(uintptr_t)r, n, 0, 0,
                                         0));
}

SHMEMX_DEV_FN void shmemx_dev_getmem(shmemx_dev_t d, void *dest,
                                     const void *src, size_t n, int pe)
{
    char *r = shmemx_dev__ptr(&d, src, pe, "shmemx_dev_getmem");
    uint64_t end = 0;
    dest = shmemx_dev__local(&d, dest);
    if (n <= d.store_max) {
        shmemx_dev__copy(dest, r, n);
        shmemx_dev__fence_sys();
        return;
    }
    SHMEMX_DEV__SERIAL(end = shmemx_dev__issue(&d, (uint64_t)(uintptr_t)dest,
                                               (uint64_t)(uintptr_t)r, n, 0,
                                               0, 0));
    shmemx_dev__wait_done(&d, end);
}

/* ---- signals ---- */

/* Data, then the signal. Engine path: the signal is packets after the
 * copies in the same reservation (SET: two FENCEs, low dword first, so a
 * 64-bit reader never sees a value above the new one; ADD: ATOMIC add64),
 * no wait here. Small data: stores, a system fence, a system-scope atomic
 * store or add. */
SHMEMX_DEV_FN void shmemx_dev_putmem_signal_nbi(shmemx_dev_t d, void *dest,
                                                const void *src, size_t n,
                                                uint64_t *sig_addr,
                                                uint64_t signal, int sig_op,
                                                int pe)
{
    const char *rn = "shmemx_dev_putmem_signal_nbi";
    char *r = shmemx_dev__ptr(&d, dest, pe, rn);
    uint64_t *sig = (uint64_t *)shmemx_dev__ptr(&d, sig_addr, pe, rn);
    if (sig_op != SHMEM_SIGNAL_SET && sig_op != SHMEM_SIGNAL_ADD)
        shmemx_dev__fail(&d, rn, SHMEMX_DEV__E_SIGOP, (uint64_t)sig_op);
    src = shmemx_dev__local(&d, src);
    if (n > d.store_max) {
        SHMEMX_DEV__SERIAL(shmemx_dev__issue(
            &d, (uint64_t)(uintptr_t)r, (uint64_t)(uintptr_t)src, n,
            (uint64_t)(uintptr_t)sig, signal, sig_op));
        return;
    }
    shmemx_dev__copy(r, src, n);
    shmemx_dev__fence_sys();
    if (sig_op == SHMEM_SIGNAL_SET)
        __atomic_store_n(sig, signal, __ATOMIC_RELEASE);
    else
        __atomic_fetch_add(sig, signal, __ATOMIC_ACQ_REL);
}

/* Local signal word: its value (acquire, system scope). */
SHMEMX_DEV_FN uint64_t shmemx_dev_signal_fetch(shmemx_dev_t d,
                                               const uint64_t *sig_addr)
{
    return shmemx_dev__ld_acq(shmemx_dev__local(&d, sig_addr));
}

SHMEMX_DEV_FN int shmemx_dev__cmp(uint64_t v, int cmp, uint64_t value)
{
    switch (cmp) {
    case SHMEM_CMP_EQ: return v == value;
    case SHMEM_CMP_NE: return v != value;
    case SHMEM_CMP_GT: return v > value;
    case SHMEM_CMP_LE: return v <= value;
    case SHMEM_CMP_LT: return v < value;
    case SHMEM_CMP_GE: return v >= value;
    }
    return -1;
}

/* Wait until the local signal word satisfies cmp value; returns it. */
SHMEMX_DEV_FN uint64_t shmemx_dev_signal_wait_until(shmemx_dev_t d,
                                                    uint64_t *sig_addr,
                                                    int cmp, uint64_t value)
{
    const char *w = shmemx_dev__local(&d, sig_addr);
    uint64_t v = shmemx_dev__ld_acq(w);
    int ok = shmemx_dev__cmp(v, cmp, value);
    if (ok < 0)
        shmemx_dev__fail(&d, "shmemx_dev_signal_wait_until",
                         SHMEMX_DEV__E_CMP, (uint64_t)cmp);
    while (!ok) {
        dsm_ring_relax();
        v = shmemx_dev__ld_acq(w);
        ok = shmemx_dev__cmp(v, cmp, value);
    }
    return v;
}

/* ---- p / g (stores and loads on the peer's mapping) ---- */

#define SHMEMX_DEV_PG(T, N)                                                    \
    SHMEMX_DEV_FN void shmemx_dev_##N##_p(shmemx_dev_t d, T *dest, T value,    \
                                          int pe)                              \
    {                                                                          \
        *(volatile T *)shmemx_dev__ptr(&d, dest, pe, "shmemx_dev_" #N "_p") =  \
            value;                                                             \
    }                                                                          \
    SHMEMX_DEV_FN T shmemx_dev_##N##_g(shmemx_dev_t d, const T *src, int pe)   \
    {                                                                          \
        return *(volatile T *)shmemx_dev__ptr(&d, src, pe,                     \
                                              "shmemx_dev_" #N "_g");          \
    }
SHMEMX_DEV_TYPES_RMA(SHMEMX_DEV_PG)
#undef SHMEMX_DEV_PG

/* ---- atomics: system scope on the peer's mapping ---- */

#define SHMEMX_DEV_AMO(T, N)                                                   \
    SHMEMX_DEV_FN T shmemx_dev_##N##_atomic_fetch_add(shmemx_dev_t d,          \
                                                      T *dest, T value,        \
                                                      int pe)                  \
    {                                                                          \
        T *p = (T *)shmemx_dev__ptr(&d, dest, pe,                              \
                                    "shmemx_dev_" #N "_atomic_fetch_add");     \
        return __atomic_fetch_add(p, value, __ATOMIC_SEQ_CST);                 \
    }                                                                          \
    SHMEMX_DEV_FN void shmemx_dev_##N##_atomic_add(shmemx_dev_t d, T *dest,    \
                                                   T value, int pe)            \
    {                                                                          \
        T *p = (T *)shmemx_dev__ptr(&d, dest, pe,                              \
                                    "shmemx_dev_" #N "_atomic_add");           \
        __atomic_fetch_add(p, value, __ATOMIC_SEQ_CST);                        \
    }                                                                          \
    SHMEMX_DEV_FN T shmemx_dev_##N##_atomic_compare_swap(                      \
        shmemx_dev_t d, T *dest, T cond, T value, int pe)                      \
    {                                                                          \
        T *p = (T *)shmemx_dev__ptr(&d, dest, pe,                              \
                                    "shmemx_dev_" #N "_atomic_compare_swap");  \
        __atomic_compare_exchange_n(p, &cond, value, 0, __ATOMIC_SEQ_CST,      \
                                    __ATOMIC_SEQ_CST);                         \
        return cond;                                                           \
    }
SHMEMX_DEV_TYPES_AMO(SHMEMX_DEV_AMO)
#undef SHMEMX_DEV_AMO

/* ---- barrier ---- */

/* All PEs: quiet, then a dissemination barrier of stores into the peers'
 * arrival words (epoch e from PE j goes to word ARRIVE + j). Called by one
 * thread per PE (any one; the others of the kernel are not involved). */
SHMEMX_DEV_FN void shmemx_dev_barrier_all(shmemx_dev_t d)
{
    volatile unsigned long long *my =
        (volatile unsigned long long *)shmemx_dev__local(&d, d.words);
    shmemx_dev_quiet(d);
    unsigned long long e = ++my[SHMEMX_DEV_W_EPOCH];
    for (int k = 1; k < d.npes; k <<= 1) {
        int to = (d.me + k) % d.npes, from = (d.me - k + d.npes) % d.npes;
        char *w = shmemx_dev__ptr(&d, &d.words[SHMEMX_DEV_W_ARRIVE + d.me],
                                  to, "shmemx_dev_barrier_all");
        shmemx_dev__st_rel(w, e);
        while (shmemx_dev__ld_acq(&my[SHMEMX_DEV_W_ARRIVE + from]) < e)
            dsm_ring_relax();
    }
}

#undef SHMEMX_DEV__PRINT
#undef SHMEMX_DEV__ABORT
#undef SHMEMX_DEV__SERIAL
#endif /* __HIPCC__ || SHMEMX_HIP_HOST_PRODUCER */

#endif /* SHMEMX_HIP_H */
