/*
 * dmashmem device API for CUDA kernels (issue #12): GPU threads put, get,
 * signal, wait and synchronise on symmetric memory; payloads above a small
 * threshold move on the copy engines, driven by a host proxy.
 *
 * Header only: every device routine is a static inline __device__ function
 * in this file, so any .cu file compiled by nvcc can call them without
 * relocatable device code (-rdc), device libraries or link-time steps. The
 * runtime's state reaches the kernel as one plain struct, shmemx_dev_t,
 * which the host fills with shmemx_dev_get() and passes to the kernel by
 * value (a kernel argument): the request FIFO, the counters, the table of
 * every PE's segment bases. Man page: shmemx_dev(3).
 *
 * This file is the CUDA layer: the handle, the FIFO to the proxy, memory
 * order, atomics and the clock; the routines themselves are written once
 * for CUDA and HIP in shmemx_dev_routines.h, and the _warp/_block forms
 * and persistent requests from kernels (no HIP form yet) follow them here.
 *
 * How data moves:
 *  - engine path: a request (32 bytes) goes into a FIFO in pinned host
 *    memory. A thread reserves a slot with one atomicAdd on the issue
 *    counter (device memory), fills it and publishes it by storing the
 *    slot's control word last, after a system-scope fence; the control
 *    word carries the lap (ticket / slots + 1), so the proxy needs no tail
 *    pointer. When the FIFO is full the thread waits (never overwrites)
 *    until the proxy has taken enough slots. The proxy turns everything
 *    pending into one batch of copy-engine commands on one stream and, on
 *    the same stream after the copies, writes the number of slots done
 *    into the complete counter (device memory) that the kernel polls.
 *  - store path: p/g, AMOs, and putmem/getmem of at most store_max bytes
 *    (SHMEM_DEV_STORE_MAX) are loads, stores and system-scope atomics on the
 *    peer's mapping.
 * Order: engine requests are executed in issue order on one stream, so a
 * signal queued after data (putmem_signal_nbi) never overtakes it. Store
 * path operations are not ordered with engine requests still in flight:
 * shmemx_dev_fence therefore waits for them (it is shmemx_dev_quiet).
 */
#ifndef SHMEMX_CUDA_H
#define SHMEMX_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include <shmemx.h> /* shmemx_req_t */
#include <shmemx_dev_common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- what the host and the kernel share (plain C) ---- */

/* A FIFO slot. ctl is written last: lap (ticket / slots + 1) in the high
 * 32 bits, the operation in the low 8. */
typedef struct shmemx_dev_slot {
    uint64_t dst, src, len, ctl;
} shmemx_dev_slot_t;
#define SHMEMX_DEV_OP_COPY 1u   /* len bytes src -> dst on the engines */
#define SHMEMX_DEV_OP_SIGNAL 2u /* *(uint64_t *)dst = src, after the above */
/* Work for the host proxy's CPU, after every earlier slot is done: dst says
 * what, src is its argument (a shmemx_req_t). */
#define SHMEMX_DEV_OP_HOST 3u
/* Flag on COPY and SIGNAL: the kernel publishes the next ticket right
 * after this one and it belongs in the same submission to the engines
 * (a collective's requests); the proxy waits a few microseconds for it
 * before it posts what it took. */
#define SHMEMX_DEV_OP_MORE 0x100u
#define SHMEMX_DEV_HOST_REQ_START 1u
#define SHMEMX_DEV_HOST_REQ_WAIT 2u


/* Index (in 64-bit words) of the counters in a PE's word block (device
 * heap, symmetric); each on its own 128-byte line. */
#define SHMEMX_DEV_W_ISSUE 0     /* tickets handed out */
#define SHMEMX_DEV_W_COMPLETE 16 /* tickets done (written by the engines) */
#define SHMEMX_DEV_W_CONSUMED 32 /* cached copy of *consumed */
#define SHMEMX_DEV_W_EPOCH 48    /* barrier_all calls so far */
#define SHMEMX_DEV_W_ARRIVE 64   /* [npes]: barrier epoch from each PE */

/* The most PEs whose segment-table rows a handle carries (near_base). */
#define SHMEMX_DEV_NEAR 8

typedef struct shmemx_dev {
    int me, npes;
    uint32_t slots;     /* FIFO slots, a power of two */
    uint32_t store_max; /* putmem/getmem up to this many bytes use stores */
    shmemx_dev_slot_t *fifo;            /* pinned host memory */
    const volatile uint64_t *consumed;  /* slots the proxy has taken */
    unsigned long long *words;          /* this PE's word block */
    const uint64_t *base;               /* [npes][SEGS], 0: unreachable */
    uint64_t lo[SHMEMX_DEV_SEGS];       /* this PE's segments */
    uint64_t size[SHMEMX_DEV_SEGS];
    /* A library wait (engines, FIFO room) that sees no progress this long
     * prints one line and traps (SHMEM_DEV_STALL_TIMEOUT); 0: for ever. */
    uint64_t stall_ns;
    /* A copy of base[]'s rows of PEs near .. near + near_n - 1 (this PE's
     * node where it fits; SHMEM_DEV_NEAR_PES): a kernel's handle is one
     * of its parameters, read through the constant cache, which a system
     * fence leaves valid. base[] is read through L1, which the fence
     * invalidates (CCTL.IVALL after MEMBAR.SC.SYS): each p + quiet paid
     * an L2 round trip for its table load, 0.13 us on an H100
     * (test/gpu/probes/quiet_probe.cu, tbl_ldg_quiet / tbl_param_quiet). */
    int near, near_n;
    uint64_t near_base[SHMEMX_DEV_NEAR * SHMEMX_DEV_SEGS];
} shmemx_dev_t;

/* Host: fill *d for kernels of this PE. Collective over all PEs the first
 * time (it allocates symmetric words in the device heap and starts the
 * proxy thread); later calls return the same handle, valid until
 * shmem_finalize. Returns 0. */
/* The types of the device atomics, X(C type, TYPENAME, CUDA atomic's
 * type); those of p/g are SHMEMX_DEV_TYPES_RMA (shmemx_dev_common.h). */
#define SHMEMX_DEV_TYPES_AMO(X)                                                \
    X(int32_t, int32, int)                                                     \
    X(uint32_t, uint32, unsigned int)                                          \
    X(int64_t, int64, unsigned long long)                                      \
    X(uint64_t, uint64, unsigned long long)

/* A persistent request as kernels start it (shmemx_req_device): 32 words
 * of device memory (GPU addresses), with a mirror in pinned host memory
 * for the host's threads.
 *  TRIGGER: instances are posted ahead behind the trigger word, as for the
 *           host; shmemx_dev_req_start stores the instance number into it
 *           (a team of one: trig below, in device memory, so no host in
 *           the path and no PCIe round trip) and shmemx_dev_req_wait polls
 *           done[], which the engines write after each queue's last
 *           command (and then the mirror's); the proxy thread posts the
 *           next instances off the critical path, after the mirror's
 *           waited.
 *  PROXY:   start and wait go through the FIFO as HOST requests for req
 *           (teams sharing this PE's GPU, teams across nodes,
 *           SHMEM_PRELAUNCH_DEPTH=0, SHMEM_PERSISTENT_SYNC other than dev
 *           on several GPUs). */
#define SHMEMX_DEV_REQ_PROXY 1u
#define SHMEMX_DEV_REQ_TRIGGER 2u
#define SHMEMX_DEV_REQ_MAXQ 16
typedef struct shmemx_dev_req {
    uint64_t mode;    /* SHMEMX_DEV_REQ_* */
    uint64_t req;     /* the shmemx_req_t (host address) */
    uint64_t trigger; /* GPU address of the word the engines wait on */
    uint64_t nq;      /* done words in use */
    uint64_t started; /* instances started (whoever starts writes it) */
    uint64_t waited;  /* instances waited for */
    uint64_t trig;    /* a team of one's trigger word (trigger = &trig) */
    uint64_t host;    /* GPU address of the mirror (shmemx_dev_req_host_t) */
    uint64_t done[SHMEMX_DEV_REQ_MAXQ]; /* queue q: last instance done */
    uint64_t spare[8];
} shmemx_dev_req_t;

/* The handle's mirror in pinned host memory: what the host's threads read
 * without a copy from the GPU. A kernel's start and wait store started and
 * waited here too (posted writes, nothing waits for them); the engines
 * write done[] here after the handle's. */
typedef struct shmemx_dev_req_host {
    uint64_t started, waited;
    uint64_t posted; /* instances posted so far (the host) */
    uint64_t pad;
    uint64_t done[SHMEMX_DEV_REQ_MAXQ];
    uint64_t spare[12];
} shmemx_dev_req_host_t;

#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif
int shmemx_dev_get(shmemx_dev_t *d);
int pshmemx_dev_get(shmemx_dev_t *d);
/* Host: the kernel handle of a persistent request (GPU address; the same
 * one on every call, freed with the request). The request must not be
 * active. From then on the host's shmemx_req_start/wait use the handle's
 * counters too, so host and kernels may take turns. */
shmemx_dev_req_t *shmemx_req_device(shmemx_req_t req);
shmemx_dev_req_t *pshmemx_req_device(shmemx_req_t req);
#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

/* ---- device routines: the CUDA layer ---- */
#ifdef __CUDACC__

#include <stdio.h>

#define SHMEMX_DEV_FN static __device__ __forceinline__
/* The misuse report: out of line (device printf is much code) and
 * noreturn, so a routine's checks keep nothing alive across its call
 * sites (k_lat 53 -> 37 registers; p + quiet 1.25 -> 1.09 us, H100). */
#define SHMEMX_DEV__FAIL_FN                                                    \
    static __device__ __noinline__ __attribute__((unused, noreturn))
#define SHMEMX_DEV__PRINT printf
#define SHMEMX_DEV__ABORT()                                                    \
    do {                                                                       \
        __trap();                                                              \
        __builtin_unreachable();                                               \
    } while (0)
#define SHMEMX_DEV__UNROLL _Pragma("unroll")

SHMEMX_DEV_FN uint64_t shmemx_dev__ld_acq(const volatile void *p)
{
    uint64_t v;
    asm volatile("ld.acquire.sys.global.u64 %0, [%1];"
                 : "=l"(v)
                 : "l"(p)
                 : "memory");
    return v;
}

SHMEMX_DEV_FN void shmemx_dev__st_rel(volatile void *p, uint64_t v)
{
    asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v)
                 : "memory");
}

SHMEMX_DEV_FN void shmemx_dev__fence_sys(void)
{
    __threadfence_system();
}

SHMEMX_DEV_FN void shmemx_dev__relax(void)
{
    __nanosleep(100);
}

/* PE pe's segment s base (pe valid): from the handle's copy where it has
 * pe's row, else from the table, read-only for the kernel's lifetime. */
SHMEMX_DEV_FN uint64_t shmemx_dev__ld_base(const shmemx_dev_t *d, int pe,
                                           int s)
{
    const unsigned r = (unsigned)(pe - d->near);
    return r < (unsigned)d->near_n
               ? d->near_base[r * SHMEMX_DEV_SEGS + s]
               : __ldg(&d->base[pe * SHMEMX_DEV_SEGS + s]);
}

/* Symmetric addresses in a CUDA kernel are the GPU's already (the handle's
 * lo[] are this PE's segments as the GPU addresses them). */
SHMEMX_DEV_FN char *shmemx_dev__local(const shmemx_dev_t *d, const void *p)
{
    (void)d;
    return (char *)(uintptr_t)p;
}

SHMEMX_DEV_FN uint64_t shmemx_dev__now(void)
{
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* A library wait that makes no progress: the value it waits on has not
 * moved for d->stall_ns (SHMEM_DEV_STALL_TIMEOUT). Says who and what in one
 * line, with the PE's counters, and traps: the host sees the kernel fail
 * and the job ends instead of hanging without a word. */
SHMEMX_DEV_FN void shmemx_dev__stalled(const shmemx_dev_t *d,
                                       const char *routine, const char *what,
                                       unsigned long long want,
                                       unsigned long long have)
{
    printf("dmashmem: PE %d: %s: no progress for %llu ms waiting for %s "
           "(want %llu, have %llu; tickets issued %llu, completed %llu, "
           "taken by the proxy %llu; shmemx_dev(3), Stalls)\n",
           d->me, routine, (unsigned long long)(d->stall_ns / 1000000), what,
           want, have,
           *(volatile unsigned long long *)&d->words[SHMEMX_DEV_W_ISSUE],
           *(volatile unsigned long long *)&d->words[SHMEMX_DEV_W_COMPLETE],
           (unsigned long long)*d->consumed);
    __trap();
}

/* Progress watch of a wait loop: call with the value waited on each time
 * round; a value that has not changed for d->stall_ns is a stall. */
typedef struct shmemx_dev__watch {
    unsigned long long seen, since;
    unsigned n;
} shmemx_dev__watch_t;
SHMEMX_DEV_FN void shmemx_dev__tick(const shmemx_dev_t *d,
                                    shmemx_dev__watch_t *w,
                                    unsigned long long v, const char *routine,
                                    const char *what, unsigned long long want)
{
    if (!d->stall_ns || (++w->n & 255u))
        return; /* the clock is read every 256 turns */
    unsigned long long now = shmemx_dev__now();
    if (w->n == 256u || v != w->seen) {
        w->seen = v;
        w->since = now;
    } else if (now - w->since > d->stall_ns) {
        shmemx_dev__stalled(d, routine, what, want, v);
    }
}

/* Reserve n consecutive FIFO slots; waits while the FIFO is full. */
SHMEMX_DEV_FN unsigned long long shmemx_dev__reserve(const shmemx_dev_t *d,
                                                     unsigned n,
                                                     const char *routine)
{
    unsigned long long t = atomicAdd(&d->words[SHMEMX_DEV_W_ISSUE], n);
    unsigned long long end = t + n;
    if (end > d->slots) {
        unsigned long long c =
            *(volatile unsigned long long *)&d->words[SHMEMX_DEV_W_CONSUMED];
        shmemx_dev__watch_t w = {0, 0, 0};
        while (c + d->slots < end) {
            c = shmemx_dev__ld_acq(d->consumed);
            atomicMax(&d->words[SHMEMX_DEV_W_CONSUMED], c);
            if (c + d->slots < end) {
                shmemx_dev__tick(d, &w, c, routine,
                                 "room in the request FIFO (slots taken)",
                                 end - d->slots);
                __nanosleep(200);
            }
        }
    }
    return t;
}

/* Fill slot t (not yet published). */
SHMEMX_DEV_FN void shmemx_dev__fill(const shmemx_dev_t *d,
                                    unsigned long long t, uint64_t dst,
                                    uint64_t src, uint64_t len)
{
    volatile shmemx_dev_slot_t *s = &d->fifo[t & (d->slots - 1)];
    s->dst = dst;
    s->src = src;
    s->len = len;
}

/* Publish filled slot t: its control word, after a system fence that
 * made the fill visible (one fence may cover several fills). */
SHMEMX_DEV_FN void shmemx_dev__publish(const shmemx_dev_t *d,
                                       unsigned long long t, uint32_t op)
{
    volatile shmemx_dev_slot_t *s = &d->fifo[t & (d->slots - 1)];
    s->ctl = ((uint64_t)(uint32_t)(t / d->slots + 1) << 32) | op;
}

/* Fill slot t and publish it (control word last, after a system fence). */
SHMEMX_DEV_FN void shmemx_dev__push(const shmemx_dev_t *d,
                                    unsigned long long t, uint32_t op,
                                    uint64_t dst, uint64_t src, uint64_t len)
{
    shmemx_dev__fill(d, t, dst, src, len);
    __threadfence_system();
    shmemx_dev__publish(d, t, op);
}

/* Wait until every ticket below t is done by the engines. */
SHMEMX_DEV_FN void shmemx_dev__wait_done(const shmemx_dev_t *d,
                                         unsigned long long t,
                                         const char *routine)
{
    unsigned long long c;
    shmemx_dev__watch_t w = {0, 0, 0};
    while ((c = shmemx_dev__ld_acq(&d->words[SHMEMX_DEV_W_COMPLETE])) < t) {
        shmemx_dev__tick(d, &w, c, routine, "the copy engines (tickets done)",
                         t);
        __nanosleep(100);
    }
}

/* Tickets handed out so far: a quiet waits until that many are done. */
SHMEMX_DEV_FN unsigned long long shmemx_dev__issued(const shmemx_dev_t *d)
{
    return *(volatile unsigned long long *)&d->words[SHMEMX_DEV_W_ISSUE];
}

/* The quiet: both counters are loaded before the fence, so that their
 * round trips may overlap its drain of this thread's stores, and compared
 * after it. Tickets done never exceed tickets handed out, so done >=
 * issued, in whichever order the two loads were served, means every
 * ticket handed out before the call is done; the fence after the loads
 * orders them before what follows, as an acquire would.
 * The compare is tied to a timer read after the fence: ptxas otherwise
 * hoists it above the fence, which then waits for both loads before it
 * starts (test/gpu/probes/quiet_probe.cu; an H200 gave the loads + fence
 * alone 0.61 us against 0.77 for the quiet so compiled). The timer never
 * reads 0; if it did, the wait would only be entered once more than
 * needed. An H100's fence waits for the loads either way (0.86-0.96 us
 * with or without the tie). */
SHMEMX_DEV_FN void shmemx_dev__quiet(const shmemx_dev_t *d,
                                     const char *routine)
{
    unsigned long long t =
        *(volatile unsigned long long *)&d->words[SHMEMX_DEV_W_ISSUE];
    unsigned long long c =
        *(volatile unsigned long long *)&d->words[SHMEMX_DEV_W_COMPLETE];
    unsigned long long now;
    __threadfence_system();
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    if (c < t + (now == 0))
        shmemx_dev__wait_done(d, t, routine);
}

/* One COPY slot; done once ticket + 1 is complete. */
SHMEMX_DEV_FN unsigned long long
shmemx_dev__engine_copy(const shmemx_dev_t *d, uint64_t dst, uint64_t src,
                        uint64_t n, int more, const char *routine)
{
    unsigned long long t = shmemx_dev__reserve(d, 1, routine);
    shmemx_dev__push(d, t, SHMEMX_DEV_OP_COPY | (more ? SHMEMX_DEV_OP_MORE : 0),
                     dst, src, n);
    return t + 1;
}

/* SET: the signal is a stream write queued after the copy (two
 * consecutive tickets, no wait). ADD has no engine command (stream memory
 * operations cannot add): wait for the data, and the caller adds with a
 * system-scope atomic (returns 0). */
SHMEMX_DEV_FN int shmemx_dev__engine_put_signal(const shmemx_dev_t *d,
                                                uint64_t dst, uint64_t src,
                                                uint64_t n, uint64_t sig,
                                                uint64_t signal, int sig_op,
                                                int more, const char *routine)
{
    if (sig_op == SHMEM_SIGNAL_SET) {
        /* Both slots filled, one fence (each costs a PCIe flush), then
         * both control words. */
        unsigned long long t = shmemx_dev__reserve(d, 2, routine);
        shmemx_dev__fill(d, t, dst, src, n);
        shmemx_dev__fill(d, t + 1, sig, signal, 8);
        __threadfence_system();
        shmemx_dev__publish(d, t, SHMEMX_DEV_OP_COPY | SHMEMX_DEV_OP_MORE);
        shmemx_dev__publish(
            d, t + 1, SHMEMX_DEV_OP_SIGNAL | (more ? SHMEMX_DEV_OP_MORE : 0));
        return 1;
    }
    shmemx_dev__wait_done(
        d, shmemx_dev__engine_copy(d, dst, src, n, 0, routine), routine);
    return 0;
}

/* A collective's engine part (shmemx_dev__coll_part, thread 0): for each
 * PE from this one on, its block (src + pe * stride) to `at` there, and
 * on a peer then this PE's arrival word there set to e; every slot
 * reserved at once and filled, one system fence, then the control words
 * in ticket order, all but the last flagged MORE: the proxy posts the
 * collective as one batch. One fence instead of one per request: each
 * costs a flush over PCIe (H100, 2 PEs, 64 KiB fcollect: its requests
 * 3.9 -> 3.1 us, the call 18.1-18.8 -> 16.2-16.4 us). Each address is
 * checked as its slot is filled: a misuse traps there, and the process's
 * kernels end with it, so the reserved slots left unwritten hold up no
 * later request. Returns 0, doing nothing, where the FIFO is too small to
 * hold it all twice over: the caller issues the requests one by one. */
#define SHMEMX_DEV__ENGINE_COLL 1
SHMEMX_DEV_FN char *shmemx_dev__ptr(const shmemx_dev_t *d, const void *sym,
                                    int pe, const char *routine);
SHMEMX_DEV_FN int shmemx_dev__engine_coll(const shmemx_dev_t *d, char *at,
                                           const char *src, size_t n,
                                           size_t stride, unsigned long long e,
                                           const char *routine)
{
    const int me = d->me, np = d->npes;
    const unsigned m = 2 * (unsigned)np - 1;
    if (m > d->slots / 2)
        return 0; /* a FIFO this small takes the requests one by one */
    unsigned long long t = shmemx_dev__reserve(d, m, routine), k = t;
    for (int i = 0; i < np; i++) {
        const int pe = (me + i) % np;
        char *r = shmemx_dev__ptr(d, at, pe, routine);
        shmemx_dev__fill(d, k++, (uint64_t)(uintptr_t)r,
                         (uint64_t)(uintptr_t)(src + (size_t)pe * stride), n);
        if (pe != me)
            shmemx_dev__fill(
                d, k++,
                (uint64_t)(uintptr_t)shmemx_dev__ptr(
                    d, &d->words[SHMEMX_DEV_W_ARRIVE + me], pe, routine),
                e, 8);
    }
    __threadfence_system();
    for (k = t; k < t + m; k++) {
        /* Slot order: self copy, then (copy, signal) per peer. */
        const unsigned j = (unsigned)(k - t);
        const uint32_t op = j && !(j & 1) ? SHMEMX_DEV_OP_SIGNAL
                                          : SHMEMX_DEV_OP_COPY;
        shmemx_dev__publish(
            d, k, op | (k + 1 < t + m ? SHMEMX_DEV_OP_MORE : 0));
    }
    return 1;
}

#define SHMEMX_DEV__SIG_SET(p, v)                                              \
    atomicExch_system((unsigned long long *)(p), (unsigned long long)(v))
#define SHMEMX_DEV__SIG_ADD(p, v)                                              \
    atomicAdd_system((unsigned long long *)(p), (unsigned long long)(v))
#define SHMEMX_DEV__FADD(p, v) atomicAdd_system((p), (v))
#define SHMEMX_DEV__CAS(p, c, v) ((c) = atomicCAS_system((p), (c), (v)))
#define SHMEMX_DEV__AMO_ALL SHMEMX_DEV_TYPES_AMO(SHMEMX_DEV_AMO)

#include <shmemx_dev_routines.h>

/* ---- _warp and _block forms ----
 *
 * Thin wrappers, for code written against NVSHMEM's group routines: every
 * thread of the warp (all 32 lanes) or of the block calls with the same
 * arguments; the group synchronises (so what its threads wrote to the
 * source is visible), one leader (lane 0, thread 0) issues the single
 * routine, and the group synchronises again, so the blocking forms return
 * in every thread once the transfer is complete. One thread already moves
 * any amount of data on the engines: the group adds no bandwidth, only the
 * convenience of calling from all threads. */
SHMEMX_DEV_FN unsigned shmemx_dev__tid(void)
{
    return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}
#define SHMEMX_DEV__GROUP(NAME, PARAMS, ARGS)                                  \
    SHMEMX_DEV_FN void shmemx_dev_##NAME##_warp PARAMS                         \
    {                                                                          \
        __syncwarp();                                                          \
        if ((shmemx_dev__tid() & 31u) == 0)                                    \
            shmemx_dev_##NAME ARGS;                                            \
        __syncwarp();                                                          \
    }                                                                          \
    SHMEMX_DEV_FN void shmemx_dev_##NAME##_block PARAMS                        \
    {                                                                          \
        __syncthreads();                                                       \
        if (shmemx_dev__tid() == 0)                                            \
            shmemx_dev_##NAME ARGS;                                            \
        __syncthreads();                                                       \
    }
#define SHMEMX_DEV__RMA_PARAMS                                                 \
    (SHMEMX_DEV_H d, void *dest, const void *src, size_t n, int pe)
SHMEMX_DEV__GROUP(putmem, SHMEMX_DEV__RMA_PARAMS, (d, dest, src, n, pe))
SHMEMX_DEV__GROUP(putmem_nbi, SHMEMX_DEV__RMA_PARAMS, (d, dest, src, n, pe))
SHMEMX_DEV__GROUP(getmem, SHMEMX_DEV__RMA_PARAMS, (d, dest, src, n, pe))
SHMEMX_DEV__GROUP(getmem_nbi, SHMEMX_DEV__RMA_PARAMS, (d, dest, src, n, pe))
SHMEMX_DEV__GROUP(putmem_signal_nbi,
                  (SHMEMX_DEV_H d, void *dest, const void *src, size_t n,
                   uint64_t *sig_addr, uint64_t signal, int sig_op, int pe),
                  (d, dest, src, n, sig_addr, signal, sig_op, pe))
SHMEMX_DEV__GROUP(quiet, (SHMEMX_DEV_H d), (d))
SHMEMX_DEV__GROUP(barrier_all, (SHMEMX_DEV_H d), (d))
#undef SHMEMX_DEV__RMA_PARAMS
#undef SHMEMX_DEV__GROUP

/* The collectives' group forms are not leader wrappers: on the store path
 * the group's threads split every block (a warp's 32 lanes store
 * consecutive words), on the engine path they take turns issuing the
 * PEs' requests; each thread makes its stores visible system-wide, the
 * group synchronises, its leader ends the call (shmemx_dev__coll_end: the
 * arrival round), and the group synchronises again, so every thread may
 * read dest on return. Every thread reads the epoch before the group's
 * first synchronisation (the leader stores the new one after the
 * second). block: the group is the thread block, else the warp (the
 * same for every thread of the group, so the synchronisation is too). */
SHMEMX_DEV_FN void shmemx_dev__coll_group(const shmemx_dev_t *d, void *dest,
                                          const void *src, size_t n,
                                          int kind, int root, int block,
                                          const char *routine)
{
    unsigned r = block ? shmemx_dev__tid() : shmemx_dev__tid() & 31u;
    unsigned nthr = block ? blockDim.x * blockDim.y * blockDim.z : 32u;
    unsigned long long e = shmemx_dev__next_epoch(d);
#define SHMEMX_DEV__GSYNC()                                                    \
    do {                                                                       \
        if (block)                                                             \
            __syncthreads();                                                   \
        else                                                                   \
            __syncwarp();                                                      \
    } while (0)
    SHMEMX_DEV__GSYNC();
    shmemx_dev__coll_part(d, (char *)dest, (const char *)src, n, kind, root,
                          e, r, nthr, routine);
    /* No fence per thread: the group's barrier orders its threads' stores
     * before the leader's, whose one fence in shmemx_dev__coll_end is
     * cumulative over them (a second fence in a row cost ~0.7 us: each
     * costs that even with nothing to drain, H100). */
    SHMEMX_DEV__GSYNC();
    if (r == 0)
        shmemx_dev__coll_end(d, shmemx_dev__coll_sends(d, kind, root, n), e,
                             routine);
    SHMEMX_DEV__GSYNC();
#undef SHMEMX_DEV__GSYNC
}

#define SHMEMX_DEV__COLL_GROUP(NAME, KIND)                                     \
    SHMEMX_DEV_FN void shmemx_dev_##NAME##_warp(SHMEMX_DEV_H d, void *dest,   \
                                                const void *src, size_t n)    \
    {                                                                          \
        shmemx_dev__coll_group(&d, dest, src, n, KIND, 0, 0,                   \
                               "shmemx_dev_" #NAME "_warp");                   \
    }                                                                          \
    SHMEMX_DEV_FN void shmemx_dev_##NAME##_block(SHMEMX_DEV_H d, void *dest,  \
                                                 const void *src, size_t n)   \
    {                                                                          \
        shmemx_dev__coll_group(&d, dest, src, n, KIND, 0, 1,                   \
                               "shmemx_dev_" #NAME "_block");                  \
    }
SHMEMX_DEV__COLL_GROUP(fcollectmem, SHMEMX_DEV__FCOLLECT)
SHMEMX_DEV__COLL_GROUP(alltoallmem, SHMEMX_DEV__ALLTOALL)
#undef SHMEMX_DEV__COLL_GROUP

SHMEMX_DEV_FN void shmemx_dev_broadcastmem_warp(SHMEMX_DEV_H d, void *dest,
                                                const void *src, size_t n,
                                                int root)
{
    shmemx_dev__coll_group(&d, dest, src, n, SHMEMX_DEV__BCAST, root, 0,
                           "shmemx_dev_broadcastmem_warp");
}

SHMEMX_DEV_FN void shmemx_dev_broadcastmem_block(SHMEMX_DEV_H d, void *dest,
                                                 const void *src, size_t n,
                                                 int root)
{
    shmemx_dev__coll_group(&d, dest, src, n, SHMEMX_DEV__BCAST, root, 1,
                           "shmemx_dev_broadcastmem_block");
}

/* ---- persistent collectives (shmemx_req(3)) ----
 *
 * A request made on the host (shmemx_fcollectmem_init,
 * shmemx_alltoallmem_init) is started and waited for from a kernel: one
 * thread of the PE calls these, with the handle passed to the kernel as an
 * argument. Both go through the FIFO as HOST requests: the proxy thread
 * runs the request's own shmemx_req_start / shmemx_req_wait on the CPU
 * once every request issued before them is done, so a start sees the data
 * the kernel put before it (its own stores to source need nothing more:
 * the slot is published after a system-scope fence). The instance itself
 * is the pre-launched chain of the host API: the start is the trigger.
 * While the proxy waits for a collective, later FIFO requests of the PE
 * wait behind it. The host must not start, wait for or free the same
 * request while a kernel uses it. */
SHMEMX_DEV_FN void shmemx_dev_req_start(SHMEMX_DEV_H d, shmemx_req_t req)
{
    shmemx_dev__push(&d, shmemx_dev__reserve(&d, 1, "shmemx_dev_req_start"),
                     SHMEMX_DEV_OP_HOST, SHMEMX_DEV_HOST_REQ_START,
                     (uint64_t)(uintptr_t)req, 0);
}

/* Returns when the started instance is complete: dest holds every PE's
 * block and may be read (system scope) by this kernel. */
SHMEMX_DEV_FN void shmemx_dev_req_wait(SHMEMX_DEV_H d, shmemx_req_t req)
{
    unsigned long long t = shmemx_dev__reserve(&d, 1, "shmemx_dev_req_wait");
    shmemx_dev__push(&d, t, SHMEMX_DEV_OP_HOST, SHMEMX_DEV_HOST_REQ_WAIT,
                     (uint64_t)(uintptr_t)req, 0);
    shmemx_dev__wait_done(&d, t + 1, "shmemx_dev_req_wait");
    __threadfence_system();
}

/* The same with the request's kernel handle (shmemx_req_device). In
 * TRIGGER mode a start is one system-scope store into the trigger word the
 * engines' stream already waits on, and a wait polls the engines' done
 * words: no host thread is in the path, and the handle is device memory
 * (only the mirror's stores cross PCIe, and nothing waits for them). An
 * instance not yet posted runs when the proxy posts it (the trigger only
 * grows). One thread of one kernel at a time per request. */
SHMEMX_DEV_FN void shmemx_dev_req_start(SHMEMX_DEV_H d, shmemx_dev_req_t *h)
{
    volatile shmemx_dev_req_t *v = h;
    if (v->mode != SHMEMX_DEV_REQ_TRIGGER) {
        shmemx_dev_req_start(d, (shmemx_req_t)(uintptr_t)v->req);
        return;
    }
    uint64_t k = v->started + 1;
    if (k != v->waited + 1)
        shmemx_dev__fail(&d, "shmemx_dev_req_start", SHMEMX_DEV__E_ACTIVE,
                         v->req);
    v->started = k;
    /* The kernel's writes to source before the engines read it. */
    __threadfence_system();
    shmemx_dev__st_rel((volatile void *)(uintptr_t)v->trigger, k);
    /* The mirror last, a plain store: no fence waits for it over PCIe. */
    ((volatile shmemx_dev_req_host_t *)(uintptr_t)v->host)->started = k;
}

SHMEMX_DEV_FN void shmemx_dev_req_wait(SHMEMX_DEV_H d, shmemx_dev_req_t *h)
{
    volatile shmemx_dev_req_t *v = h;
    if (v->mode != SHMEMX_DEV_REQ_TRIGGER) {
        shmemx_dev_req_wait(d, (shmemx_req_t)(uintptr_t)v->req);
        return;
    }
    uint64_t k = v->started, nq = v->nq, c;
    if (k == v->waited)
        return; /* inactive */
    /* Bounded like every other wait (SHMEM_DEV_STALL_TIMEOUT): a queue
     * whose done word stops short ends the kernel with the line instead
     * of a silent hang (shmemx_dev(3), BUGS). */
    shmemx_dev__watch_t w = {0, 0, 0};
    for (uint64_t q = 0; q < nq; q++)
        while ((c = shmemx_dev__ld_acq(&v->done[q])) < k)
            shmemx_dev__tick(&d, &w, c, "shmemx_dev_req_wait",
                             "a trigger-mode request's engine queue (its "
                             "done word)",
                             k);
    __threadfence_system();
    v->waited = k;
    /* For the proxy's re-posting; nothing here waits for it. */
    ((volatile shmemx_dev_req_host_t *)(uintptr_t)v->host)->waited = k;
}

#endif /* __CUDACC__ */

#endif /* SHMEMX_CUDA_H */
