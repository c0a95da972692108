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
 * This file is the HIP layer: the handle, the SDMA packets a kernel
 * writes, memory order and atomics; the routines themselves are written
 * once for CUDA and HIP in shmemx_dev_routines.h.
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

/* ---- device routines: the HIP layer ----
 * Compiled by hipcc for kernels, or for the host with
 * SHMEMX_HIP_HOST_PRODUCER defined (the library's tests: host threads
 * produce into the queue as GPU threads would, against the engine model,
 * where a GPU address is the host address). */
#if defined(__HIPCC__) || defined(SHMEMX_HIP_HOST_PRODUCER)

#if defined(__HIPCC__)
#include <hip/hip_runtime.h>
#define SHMEMX_DEV_FN static __device__ inline
#define SHMEMX_DEV__FAIL_FN                                                    \
    static __device__ __attribute__((noinline, unused, noreturn))
#define SHMEMX_DEV__PRINT printf
#define SHMEMX_DEV__ABORT() __builtin_trap()
#else
#include <stdio.h>
#include <stdlib.h>
#define SHMEMX_DEV_FN static inline
#define SHMEMX_DEV__FAIL_FN static __attribute__((noinline, unused, noreturn))
#define SHMEMX_DEV__PRINT(...) fprintf(stderr, __VA_ARGS__)
#define SHMEMX_DEV__ABORT() abort()
#endif
#define SHMEMX_DEV__UNROLL

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

SHMEMX_DEV_FN void shmemx_dev__relax(void)
{
    dsm_ring_relax();
}

/* PE pe's segment s base (pe valid), from the table. */
SHMEMX_DEV_FN uint64_t shmemx_dev__ld_base(const shmemx_dev_t *d, int pe,
                                           int s)
{
    return d->base[pe * SHMEMX_DEV_SEGS + s];
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

SHMEMX_DEV_FN void shmemx_dev__wait_done(const shmemx_dev_t *d, uint64_t end,
                                         const char *routine)
{
    (void)routine;
    while (!shmemx_dev__done_by(d, end))
        dsm_ring_relax();
}

/* Ring bytes reserved so far: a quiet waits until the engine is there. */
SHMEMX_DEV_FN uint64_t shmemx_dev__issued(const shmemx_dev_t *d)
{
    return __atomic_load_n(&d->ring->reserved, __ATOMIC_ACQUIRE);
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

/* No fence-overlapped form here: the quiet is the fence, then the wait
 * for every reservation so far. */
SHMEMX_DEV_FN void shmemx_dev__quiet(const shmemx_dev_t *d,
                                     const char *routine)
{
    shmemx_dev__fence_sys();
    shmemx_dev__wait_done(d, shmemx_dev__issued(d), routine);
}

/* `more` is for a proxy that batches: here the kernel writes the packets
 * into the engine's ring itself and every reservation is on the engine
 * as soon as it is committed, so there is nothing to hold. */
SHMEMX_DEV_FN uint64_t shmemx_dev__engine_copy(const shmemx_dev_t *d,
                                               uint64_t dst, uint64_t src,
                                               uint64_t n, int more,
                                               const char *routine)
{
    uint64_t end = 0;
    (void)routine;
    (void)more;
    SHMEMX_DEV__SERIAL(end = shmemx_dev__issue(d, dst, src, n, 0, 0, 0));
    return end;
}

/* The signal is packets after the copies in the same reservation (SET:
 * two FENCEs, low dword first, so a 64-bit reader never sees a value above
 * the new one; ADD: ATOMIC add64): no wait, nothing left to the caller. */
SHMEMX_DEV_FN int shmemx_dev__engine_put_signal(const shmemx_dev_t *d,
                                                uint64_t dst, uint64_t src,
                                                uint64_t n, uint64_t sig,
                                                uint64_t signal, int sig_op,
                                                int more, const char *routine)
{
    (void)routine;
    (void)more;
    SHMEMX_DEV__SERIAL(
        shmemx_dev__issue(d, dst, src, n, sig, signal, sig_op));
    return 1;
}

#define SHMEMX_DEV__SIG_SET(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define SHMEMX_DEV__SIG_ADD(p, v) __atomic_fetch_add((p), (v), __ATOMIC_ACQ_REL)
#define SHMEMX_DEV__FADD(p, v) __atomic_fetch_add((p), (v), __ATOMIC_SEQ_CST)
#define SHMEMX_DEV__CAS(p, c, v)                                               \
    ((void)__atomic_compare_exchange_n((p), &(c), (v), 0, __ATOMIC_SEQ_CST,    \
                                       __ATOMIC_SEQ_CST))
/* The AMO table names no separate atomic type: it is the C type. */
#define SHMEMX_DEV__AMO_SAME(T, N) SHMEMX_DEV_AMO(T, N, T)
#define SHMEMX_DEV__AMO_ALL SHMEMX_DEV_TYPES_AMO(SHMEMX_DEV__AMO_SAME)

#include <shmemx_dev_routines.h>

#undef SHMEMX_DEV__PRINT
#undef SHMEMX_DEV__ABORT
#undef SHMEMX_DEV__SERIAL
#endif /* __HIPCC__ || SHMEMX_HIP_HOST_PRODUCER */

#endif /* SHMEMX_HIP_H */
