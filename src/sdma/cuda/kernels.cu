// Device code of the cuda backend. Compiled to PTX (kernels_ptx.h) and
// JIT-loaded with cuModuleLoadData, so the library itself needs no nvcc at
// build time. Regenerate kernels_ptx.h with src/sdma/cuda/gen-ptx.sh.

// The one command with no copy-engine form: an add into a word.
extern "C" __global__ void dsm_signal_add(unsigned long long *word,
                                          unsigned long long value)
{
    // System scope: the word may be read by the host or another GPU.
    atomicAdd_system(word, value);
    __threadfence_system();
}

// An on-stream fcollect / alltoall of small blocks (src/coll/stream.c,
// SHMEM_STREAM_STORE_MAX) in one launch of one CTA: the same two phases of
// constant words as the stream memory operations of the engine path
// (dsm_cuda_exchange_on_stream), so both paths mix on one team, with the
// blocks stored by this CTA's threads between them. Its parameter:
// small_coll.h, filled by onstream.c.
#include "small_coll.h"

__device__ static unsigned long long sc_now(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// This thread's stores before the fence are seen before those after it by
// every peer of the call: at GPU scope where they all share this GPU
// (p.gpu_scope; H100, 2 PEs under MPS: two system-scope fences cost 1.5
// us of a 12.5 us exchange + sync, bench/gpu_devbench.cu's
// stream_exchange2_sysfence), else at system scope (peers on other GPUs,
// or a block in host memory).
__device__ static void sc_fence(const dsm_small_coll_t &p)
{
    if (p.gpu_scope)
        __threadfence();
    else
        __threadfence_system();
}

// Called at every spin of a wait: true once it has seen no change for
// stall_ns (0: never), and the caller prints its line and traps (the
// stream's next synchronisation fails).
__device__ static bool sc_stalled(unsigned long long stall_ns,
                                  unsigned long long &t0, unsigned &spins)
{
    if (!stall_ns || (++spins & 1023u))
        return false;
    unsigned long long now = sc_now();
    if (!t0)
        t0 = now;
    return now - t0 > stall_ns;
}

__device__ static const char *sc_routine(int routine)
{
    return routine == 0 ? "shmemx_fcollectmem_on_stream"
                        : "shmemx_alltoallmem_on_stream";
}

// One phase (thread 0): 1 into every peer's word for me, wait for every
// peer's 1 in mine, reset mine. A wait that sees no change for stall_ns
// prints one line and traps (the stream's next synchronisation fails).
__device__ static void sc_phase(const dsm_small_coll_t &p, int ph)
{
    if (threadIdx.x == 0) {
        for (int i = 0; i < p.np; i++)
            *(volatile unsigned long long *)p.out[ph][i] = 1;
        for (int i = 0; i < p.np; i++) {
            volatile unsigned long long *w =
                (volatile unsigned long long *)p.in[ph][i];
            unsigned long long t0 = 0;
            unsigned spins = 0;
            while (*w != 1) {
                if (sc_stalled(p.stall_ns, t0, spins)) {
                    printf("dmashmem: PE %d: %s: PE %d did not reach phase %d "
                           "of the call within %llu s (its word at %p is "
                           "%llu); SHMEM_DEV_STALL_TIMEOUT sets the bound\n",
                           p.me, sc_routine(p.routine), p.pe[i], ph,
                           (unsigned long long)(p.stall_ns / 1000000000ull),
                           (void *)w, *w);
                    __trap();
                }
            }
        }
        for (int i = 0; i < p.np; i++)
            *(volatile unsigned long long *)p.in[ph][i] = 0;
        sc_fence(p);
    }
    __syncthreads();
}

// Thread `r` of `nt`'s part of copying n bytes: 16-byte words where both
// sides and the length allow, 8-byte words next, bytes otherwise.
__device__ static void sc_copy(char *d, const char *s, unsigned long long n,
                               unsigned r, unsigned nt)
{
    unsigned long long a =
        (unsigned long long)d | (unsigned long long)s | n;
    if (!(a & 15)) {
        for (unsigned long long i = r; i < n / 16; i += nt)
            ((uint4 *)d)[i] = ((const uint4 *)s)[i];
    } else if (!(a & 7)) {
        for (unsigned long long i = r; i < n / 8; i += nt)
            ((unsigned long long *)d)[i] = ((const unsigned long long *)s)[i];
    } else {
        for (unsigned long long i = r; i < n; i += nt)
            d[i] = s[i];
    }
}

extern "C" __global__ void dsm_small_coll(const dsm_small_coll_t p)
{
    sc_phase(p, 0);
    for (int c = 0; c < p.nc; c++)
        sc_copy((char *)p.dst[c], (const char *)p.src[c], p.len[c],
                threadIdx.x, blockDim.x);
    // Every thread's stores visible to the peers before thread 0 signals.
    sc_fence(p);
    __syncthreads();
    sc_phase(p, 1);
}

// An on-stream fcollect / alltoall of blocks up to SHMEM_STREAM_LL_MAX in
// the LL form (src/coll/stream.c; parameter: small_coll.h): every 8 bytes
// of a block go to the receiver's scratch as one 16-byte line {lo, 1, hi,
// 1}; a line whose two flags read 1 holds its data whole (each 8-byte
// half is stored at once), so the receiver needs no other signal and the
// call no synchronisation phase, fence or second exchange: one launch,
// the data its own arrival signal. The reader zeroes each line it took,
// so every line is 0 again when a call completes. Two buffers per sender,
// alternated by a parity word of the team slot that the kernel flips at
// its end (a device word, so a captured call replays right): a sender's
// next call cannot start before it received this receiver's part of the
// current one, which the receiver sends before it reads, so only the
// buffer of the call before can still be unread.
__device__ static void ll_store(uint4 *p, uint4 w)
{
    asm volatile("st.volatile.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p),
                 "r"(w.x), "r"(w.y), "r"(w.z), "r"(w.w)
                 : "memory");
}

__device__ static uint4 ll_load(const uint4 *p)
{
    uint4 w;
    asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(w.x), "=r"(w.y), "=r"(w.z), "=r"(w.w)
                 : "l"(p)
                 : "memory");
    return w;
}

// Bytes 8l .. 8l + 7 of an n-byte block (those past n read as 0).
__device__ static unsigned long long ll_get(const char *s,
                                            unsigned long long l,
                                            unsigned long long n)
{
    if (!((unsigned long long)s & 7) && l * 8 + 8 <= n)
        return ((const unsigned long long *)s)[l];
    unsigned long long v = 0;
    for (unsigned b = 0; b < 8 && l * 8 + b < n; b++)
        v |= (unsigned long long)(unsigned char)s[l * 8 + b] << (8 * b);
    return v;
}

// The same bytes into d (none past n).
__device__ static void ll_put(char *d, unsigned long long l,
                              unsigned long long n, unsigned long long v)
{
    if (!((unsigned long long)d & 7) && l * 8 + 8 <= n) {
        ((unsigned long long *)d)[l] = v;
        return;
    }
    for (unsigned b = 0; b < 8 && l * 8 + b < n; b++)
        d[l * 8 + b] = (char)(v >> (8 * b));
}

extern "C" __global__ void dsm_ll_coll(const dsm_ll_coll_t p)
{
    __shared__ int reported;
    const unsigned long long n = p.nbytes, lines = (n + 7) / 8;
    const unsigned b =
        (unsigned)(*(volatile unsigned long long *)p.parity & 1);
    if (threadIdx.x == 0)
        reported = 0;
    for (int i = 0; i < p.np; i++) {
        uint4 *o = (uint4 *)p.out[i] + b * p.stride;
        for (unsigned long long l = threadIdx.x; l < lines; l += blockDim.x) {
            unsigned long long v = ll_get((const char *)p.src[i], l, n);
            ll_store(o + l, make_uint4((unsigned)v, 1u, (unsigned)(v >> 32),
                                       1u));
        }
    }
    if (p.own_dst)
        sc_copy((char *)p.own_dst, (const char *)p.own_src, n, threadIdx.x,
                blockDim.x);
    // All sent before any block of dest is written: a source staged in
    // dest (a pageable one) is read above.
    __syncthreads();
    for (int i = 0; i < p.np; i++) {
        uint4 *in = (uint4 *)p.in[i] + b * p.stride;
        for (unsigned long long l = threadIdx.x; l < lines; l += blockDim.x) {
            uint4 w = ll_load(in + l);
            unsigned long long t0 = 0;
            unsigned spins = 0;
            while (w.y != 1u || w.w != 1u) {
                w = ll_load(in + l);
                if (sc_stalled(p.stall_ns, t0, spins)) {
                    if (!atomicExch(&reported, 1))
                        printf("dmashmem: PE %d: %s: the block of PE %d did "
                               "not arrive within %llu s (line %llu of %llu "
                               "at %p, buffer %u, reads %x/%x); "
                               "SHMEM_DEV_STALL_TIMEOUT sets the bound\n",
                               p.me, sc_routine(p.routine), p.pe[i],
                               (unsigned long long)(p.stall_ns / 1000000000ull),
                               l, lines, (void *)(in + l), b, w.y, w.w);
                    __trap();
                }
            }
            ll_put((char *)p.dst[i], l, n,
                   (unsigned long long)w.x | (unsigned long long)w.z << 32);
            ll_store(in + l, make_uint4(0, 0, 0, 0));
        }
    }
    // Every thread read its lines (and the parity) before it flips.
    __syncthreads();
    if (threadIdx.x == 0)
        *(volatile unsigned long long *)p.parity = b ^ 1u;
}
