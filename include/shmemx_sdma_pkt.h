/*
 * AMD SDMA packets and the queue ring, for every producer: the host
 * backend (src/sdma/hsa/hsa_submit.c), the engine model (test/hsa/model.c,
 * which decodes what this encodes) and GPU kernels (the HIP device API,
 * shmemx_hip.h: the same functions compile as __host__ __device__ code
 * under hipcc). Installed because shmemx_hip.h includes it; its names
 * (dsm_pkt_*, dsm_ring_*) are the library's internals, not an API.
 *
 * Layouts are those of the SDMA 4.x engines (gfx9: MI100/MI200/MI300),
 * as published in the kernel driver's and ROCr's headers: every packet is
 * a run of little-endian dwords, the first one the header with the opcode
 * in bits 0-7 and the sub-opcode in bits 8-15. Written from the field
 * tables, not copied.
 *
 * The ring: a power-of-two buffer in host memory the engine reads; the
 * read and write pointers are 64-bit byte offsets that only grow (the
 * engine masks them with the ring size, as on gfx9 and later); the
 * doorbell takes the new write pointer. Nothing before the doorbell is
 * the engine's; after it, everything up to the published write pointer.
 */
#ifndef DSM_SDMA_PKT_H
#define DSM_SDMA_PKT_H

#include <stdint.h>
#if !defined(__HIP_DEVICE_COMPILE__)
#include <sched.h>
#endif

#if defined(__HIPCC__) || defined(__HIP__)
#define DSM_PKT_FN __host__ __device__ static inline
#else
#define DSM_PKT_FN static inline
#endif

/* Opcodes and sub-opcodes (header bits 0-7, 8-15). */
#define DSM_SDMA_OP_NOP 0u
#define DSM_SDMA_OP_COPY 1u
#define DSM_SDMA_OP_FENCE 5u
#define DSM_SDMA_OP_TRAP 6u
#define DSM_SDMA_OP_POLL_REGMEM 8u
#define DSM_SDMA_OP_ATOMIC 10u
#define DSM_SDMA_SUBOP_COPY_LINEAR 0u

/* Packet sizes in dwords. */
#define DSM_SDMA_NOP_DW 1u
#define DSM_SDMA_COPY_DW 7u
#define DSM_SDMA_FENCE_DW 4u
#define DSM_SDMA_TRAP_DW 2u
#define DSM_SDMA_POLL_DW 6u
#define DSM_SDMA_ATOMIC_DW 8u
#define DSM_SDMA_MAX_PKT_DW 8u

/* COPY_LINEAR moves count + 1 bytes (gfx9 and later); count is 22 bits,
 * and ROCr keeps each packet at 4 MiB - 32 bytes. */
#define DSM_SDMA_COPY_MAX 0x3fffe0u

/* POLL_REGMEM compare functions (header bits 28-30): (mem & mask) OP ref,
 * unsigned 32-bit. */
#define DSM_SDMA_FUNC_ALWAYS 0u
#define DSM_SDMA_FUNC_LT 1u
#define DSM_SDMA_FUNC_LE 2u
#define DSM_SDMA_FUNC_EQ 3u
#define DSM_SDMA_FUNC_NE 4u
#define DSM_SDMA_FUNC_GE 5u
#define DSM_SDMA_FUNC_GT 6u
/* retry_count (12 bits) of 0xfff: poll for ever. */
#define DSM_SDMA_POLL_RETRY_FOREVER 0xfffu

/* ATOMIC operation (header bits 25-31): the TC atomic opcode. */
#define DSM_SDMA_ATOMIC_ADD64 47u

/* Ring alignment the driver asks for (and the model checks). */
#define DSM_SDMA_RING_ALIGN 256u

DSM_PKT_FN uint32_t dsm_pkt_header(uint32_t op, uint32_t sub, uint32_t bits)
{
    return (op & 0xffu) | ((sub & 0xffu) << 8) | bits;
}

DSM_PKT_FN uint32_t dsm_pkt_lo(uint64_t v)
{
    return (uint32_t)v;
}

DSM_PKT_FN uint32_t dsm_pkt_hi(uint64_t v)
{
    return (uint32_t)(v >> 32);
}

/* NOP: header with count (bits 16-29) = dwords that follow and are
 * skipped. */
DSM_PKT_FN void dsm_pkt_nop(uint32_t *p, uint32_t extra_dw)
{
    p[0] = dsm_pkt_header(DSM_SDMA_OP_NOP, 0, (extra_dw & 0x3fffu) << 16);
}

/* COPY_LINEAR of n bytes (1 <= n <= DSM_SDMA_COPY_MAX): header, count,
 * parameter (byte swaps: none), src lo/hi, dst lo/hi. */
DSM_PKT_FN void dsm_pkt_copy_linear(uint32_t *p, uint64_t dst, uint64_t src,
                                    uint32_t n)
{
    p[0] = dsm_pkt_header(DSM_SDMA_OP_COPY, DSM_SDMA_SUBOP_COPY_LINEAR, 0);
    p[1] = (n - 1u) & 0x3fffffu;
    p[2] = 0;
    p[3] = dsm_pkt_lo(src);
    p[4] = dsm_pkt_hi(src);
    p[5] = dsm_pkt_lo(dst);
    p[6] = dsm_pkt_hi(dst);
}

/* FENCE: the engine writes one dword to a dword-aligned address once
 * every earlier packet of the queue has completed. The header asks for
 * a system-scope, snooped write (bits: sys 20, snp 22) so that host
 * memory sees it. */
#define DSM_SDMA_FENCE_SYS (1u << 20)
#define DSM_SDMA_FENCE_SNP (1u << 22)
DSM_PKT_FN void dsm_pkt_fence(uint32_t *p, uint64_t addr, uint32_t data)
{
    p[0] = dsm_pkt_header(DSM_SDMA_OP_FENCE, 0,
                          DSM_SDMA_FENCE_SYS | DSM_SDMA_FENCE_SNP);
    p[1] = dsm_pkt_lo(addr);
    p[2] = dsm_pkt_hi(addr);
    p[3] = data;
}

/* TRAP: raise the queue's interrupt with a 28-bit context (the KFD event
 * id the host waits on). */
DSM_PKT_FN void dsm_pkt_trap(uint32_t *p, uint32_t ctx)
{
    p[0] = dsm_pkt_header(DSM_SDMA_OP_TRAP, 0, 0);
    p[1] = ctx & 0xfffffffu;
}

/* POLL_REGMEM on memory (mem_poll, bit 31): re-read the dword at addr
 * every `interval` until (value & mask) func ref holds or retry_count
 * polls failed (DSM_SDMA_POLL_RETRY_FOREVER: never give up). */
DSM_PKT_FN void dsm_pkt_poll(uint32_t *p, uint64_t addr, uint32_t ref,
                             uint32_t mask, uint32_t func, uint32_t interval,
                             uint32_t retry)
{
    p[0] = dsm_pkt_header(DSM_SDMA_OP_POLL_REGMEM, 0,
                          ((func & 7u) << 28) | (1u << 31));
    p[1] = dsm_pkt_lo(addr);
    p[2] = dsm_pkt_hi(addr);
    p[3] = ref;
    p[4] = mask;
    p[5] = (interval & 0xffffu) | ((retry & 0xfffu) << 16);
}

/* ATOMIC: op (bits 25-31) on the qword at addr with src (and cmp for
 * compare-swap); loop (bit 16) off; loop interval dword 7 unused. */
DSM_PKT_FN void dsm_pkt_atomic(uint32_t *p, uint32_t op, uint64_t addr,
                               uint64_t src, uint64_t cmp)
{
    p[0] = dsm_pkt_header(DSM_SDMA_OP_ATOMIC, 0, (op & 0x7fu) << 25);
    p[1] = dsm_pkt_lo(addr);
    p[2] = dsm_pkt_hi(addr);
    p[3] = dsm_pkt_lo(src);
    p[4] = dsm_pkt_hi(src);
    p[5] = dsm_pkt_lo(cmp);
    p[6] = dsm_pkt_hi(cmp);
    p[7] = 0;
}

/* Decoding (model, tests). */
DSM_PKT_FN uint32_t dsm_pkt_op(uint32_t h)
{
    return h & 0xffu;
}

DSM_PKT_FN uint32_t dsm_pkt_subop(uint32_t h)
{
    return (h >> 8) & 0xffu;
}

/* Size in dwords of the packet whose header is h; 0 when unknown. */
DSM_PKT_FN uint32_t dsm_pkt_dwords(uint32_t h)
{
    switch (dsm_pkt_op(h)) {
    case DSM_SDMA_OP_NOP:
        return 1u + ((h >> 16) & 0x3fffu);
    case DSM_SDMA_OP_COPY:
        return DSM_SDMA_COPY_DW;
    case DSM_SDMA_OP_FENCE:
        return DSM_SDMA_FENCE_DW;
    case DSM_SDMA_OP_TRAP:
        return DSM_SDMA_TRAP_DW;
    case DSM_SDMA_OP_POLL_REGMEM:
        return DSM_SDMA_POLL_DW;
    case DSM_SDMA_OP_ATOMIC:
        return DSM_SDMA_ATOMIC_DW;
    default:
        return 0;
    }
}

/* ---- WAIT as POLL_REGMEM, wrap-safe on 32 bits ----
 * The layer's WAIT is "64-bit word >= value"; the engine compares one
 * dword, unsigned. The words WAIT is used on only grow (trigger and
 * signal counters), so the low dword is compared as a sequence number
 * (RFC 1982: ahead when (int32)(word - ref) >= 0). With ref below 2^31
 * that is two polls: first until the word leaves [ref + 2^31, 2^32) (it
 * is behind across the wrap), then until it is >= ref. With ref at or
 * above 2^31 one poll >= ref, exact while the word is within 2^31 behind
 * and the engine sees it before it passes 2^32. Two polls on the low
 * dword cannot express the last case (a word that jumps from below ref
 * past 2^32 between two reads): the host checks the 64-bit word before
 * encoding and drops a WAIT that already holds. */
#define DSM_SDMA_WAIT_MAX_DW (2u * DSM_SDMA_POLL_DW)

/* Encode WAIT(*word >= ref) polling the low dword at addr. Returns the
 * dwords written (6 or 12). */
DSM_PKT_FN uint32_t dsm_pkt_wait_seq(uint32_t *p, uint64_t addr, uint32_t ref,
                                     uint32_t interval)
{
    uint32_t n = 0;
    if (ref < 0x80000000u) {
        dsm_pkt_poll(p, addr, ref + 0x80000000u, 0xffffffffu,
                     DSM_SDMA_FUNC_LT, interval, DSM_SDMA_POLL_RETRY_FOREVER);
        n += DSM_SDMA_POLL_DW;
    }
    dsm_pkt_poll(p + n, addr, ref, 0xffffffffu, DSM_SDMA_FUNC_GE, interval,
                 DSM_SDMA_POLL_RETRY_FOREVER);
    return n + DSM_SDMA_POLL_DW;
}

/* ---- The ring: reserve, write, commit (+ doorbell) ----
 * Any number of producers (host threads, GPU threads) share one ring:
 * reserve takes a byte range with one CAS, padding the ring's end with
 * NOPs so that no packet straddles it; commit publishes ranges in the
 * order they were reserved (each waits for its predecessor) and rings the
 * doorbell with its end, so the doorbell never moves backwards and a
 * batch of packets costs one doorbell. */
typedef struct dsm_sdma_ring {
    uint32_t *buf;      /* the ring (dwords), DSM_SDMA_RING_ALIGN aligned */
    uint64_t size;      /* bytes, power of two */
    volatile uint64_t *rptr; /* engine's read pointer (bytes, grows) */
    volatile uint64_t *wptr; /* write pointer the engine reads */
    volatile uint64_t *doorbell;
    uint64_t reserved;  /* producers reserve from here (bytes) */
    uint64_t committed; /* published up to here (bytes) */
    /* Called after each doorbell store when set: the model's engine
     * thread sleeps on the doorbell word (on hardware the store is the
     * doorbell and this is NULL). */
    void (*kick)(volatile uint64_t *doorbell);
    uint64_t doorbells; /* statistics */
    uint64_t packets;
} dsm_sdma_ring_t;

/* Waiting for another producer or for the engine: on the host, give the
 * core away (the producer we wait for may be the one descheduled). */
DSM_PKT_FN void dsm_ring_relax(void)
{
#if defined(__HIP_DEVICE_COMPILE__)
    __builtin_amdgcn_s_sleep(1);
#else
    sched_yield();
#endif
}

/* Try to reserve ndw dwords (ndw * 4 <= size / 2). Returns 1 and the
 * byte offsets (unmasked) of the reservation's first byte (*first: what
 * commit needs) and of the packet (*pos: after the padding that keeps it
 * from straddling the ring's end); 0 when the engine has not read far
 * enough yet. */
DSM_PKT_FN int dsm_ring_try_reserve(dsm_sdma_ring_t *r, uint32_t ndw,
                                    uint64_t *first, uint64_t *pos)
{
    uint64_t need = (uint64_t)ndw * 4u, cur, pad, next;
    cur = __atomic_load_n(&r->reserved, __ATOMIC_RELAXED);
    for (;;) {
        uint64_t off = cur & (r->size - 1);
        pad = off + need > r->size ? r->size - off : 0;
        next = cur + pad + need;
        if (next - __atomic_load_n(r->rptr, __ATOMIC_ACQUIRE) > r->size)
            return 0;
        if (__atomic_compare_exchange_n(&r->reserved, &cur, next, 1,
                                        __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
            break;
    }
    /* The tail of the ring before the wrap: one-dword NOPs. */
    for (uint64_t b = 0; b < pad; b += 4)
        dsm_pkt_nop(&r->buf[((cur + b) & (r->size - 1)) / 4], 0);
    *first = cur;
    *pos = cur + pad;
    return 1;
}

/* The same, waiting while the ring is full (the engine frees space as it
 * reads). Returns the packet's offset. */
DSM_PKT_FN uint64_t dsm_ring_reserve(dsm_sdma_ring_t *r, uint32_t ndw,
                                     uint64_t *first)
{
    uint64_t pos;
    while (!dsm_ring_try_reserve(r, ndw, first, &pos))
        dsm_ring_relax();
    return pos;
}

/* Where the packet at byte offset pos goes. */
DSM_PKT_FN uint32_t *dsm_ring_at(const dsm_sdma_ring_t *r, uint64_t pos)
{
    return &r->buf[(pos & (r->size - 1)) / 4];
}

/* Publish the reservation [first, end) once every earlier reservation is
 * published: write the write pointer and ring the doorbell with end. */
DSM_PKT_FN void dsm_ring_commit(dsm_sdma_ring_t *r, uint64_t first,
                                uint64_t end)
{
    while (__atomic_load_n(&r->committed, __ATOMIC_ACQUIRE) != first)
        dsm_ring_relax();
    /* Packets before the pointer that publishes them. */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    __atomic_store_n(r->wptr, end, __ATOMIC_RELEASE);
    __atomic_store_n(r->doorbell, end, __ATOMIC_RELEASE);
#if !defined(__HIP_DEVICE_COMPILE__)
    if (r->kick)
        r->kick(r->doorbell);
#endif
    __atomic_fetch_add(&r->doorbells, 1, __ATOMIC_RELAXED);
    /* Only now may the next producer ring: its doorbell store must come
     * after ours, or the doorbell would move backwards. */
    __atomic_store_n(&r->committed, end, __ATOMIC_RELEASE);
}

#endif /* DSM_SDMA_PKT_H */
