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
                if (!p.stall_ns || (++spins & 1023u))
                    continue;
                unsigned long long now = sc_now();
                if (!t0) {
                    t0 = now;
                } else if (now - t0 > p.stall_ns) {
                    const char *r = p.routine == 0
                                        ? "shmemx_fcollectmem_on_stream"
                                        : "shmemx_alltoallmem_on_stream";
                    printf("dmashmem: PE %d: %s: PE %d did not reach phase %d "
                           "of the call within %llu s (its word at %p is "
                           "%llu); SHMEM_DEV_STALL_TIMEOUT sets the bound\n",
                           p.me, r, p.pe[i], ph,
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
