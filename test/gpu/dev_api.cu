/*
 * The device API from kernels (issue #12, include/shmemx_cuda.h): every
 * routine called from a kernel, its data checked. Built with nvcc without
 * -rdc (test/gpu/dev_compile.sh compiles it in CI; run-on-device.sh builds
 * and runs it on a GPU machine); exits 77 where no GPU is found. Runs on
 * 1 PE (every target is the PE itself) and on 2 or more (PE me targets
 * me + 1).
 *
 *   rma      putmem, putmem_nbi, getmem, getmem_nbi (+ quiet) for sources
 *            and destinations in the host heap, the device heap and (local
 *            side) a private cudaMalloc buffer; sizes on the store path
 *            (1, 8, 13, 256 B) and on the engines (4 KiB .. 1 MiB), each
 *            also with the local side 3 or the symmetric side 5 bytes off
 *            alignment; the 8 bytes after a destination must stay 0
 *   signal   putmem_signal_nbi SET and ADD, store path and engines, into
 *            device- and host-heap words: the receiving kernel waits with
 *            signal_wait_until and checks every byte (data before signal),
 *            answers with a p into the sender's ack word; 20 rounds
 *   pg       <T>_p into the next PE for every type, barrier_all, <T>_g
 *            back; signal_fetch; fence between p's
 *   amo      every thread of every PE: fetch_add/add on int32/int64/
 *            uint32/uint64 words of PE 0 (device and host heap), CAS
 *            increments on PE npes-1; exact totals, and the fetched values
 *            of each fetch_add counter are all distinct
 *   stress   many blocks x threads, each many put_nbi through the engines
 *            (run with SHMEM_DEV_FIFO_SLOTS=64: the FIFO wraps hundreds of
 *            times and is full most of the time), quiet, data checked
 *   barrier  1000 rounds of p to the next PE + barrier_all + check
 *   group    the _block and _warp forms: 2 blocks of 128 threads fill
 *            their part of the source together, then putmem_block /
 *            getmem_block (64 KiB a block) and putmem_nbi_warp +
 *            quiet_warp (4 KiB a warp), barrier_all_block; data checked
 *   graph    a kernel using the API captured in a CUDA graph and the graph
 *            launched 100 times: each replay puts 64 KiB with a signal
 *            (round number, kept in device memory) to the next PE, waits
 *            for the previous PE's, checks it and acks with a p
 *   req      persistent collectives made on the host, started and waited
 *            for from a kernel (shmemx_dev_req_start/_wait): fcollect of
 *            device-heap buffers 1000 times and alltoall of host-heap
 *            buffers 100 times, the kernel writing fresh source data
 *            before each start and checking every byte after each wait
 *
 *   bigself  putmem/getmem (+ nbi and quiet) of 64 MiB within the PE's
 *            own device heap (engines, the side stream of local copies),
 *            the last word checked by one thread right after the call,
 *            then every word by the block
 *   coll     fcollectmem / alltoallmem / broadcastmem and their _warp and
 *            _block forms from a kernel (#31), 8 B .. 64 KiB (store path
 *            and engines, broadcast's root rotating),
 *            into the device and the host heap, 10 rounds each with fresh
 *            source data, every byte checked in the kernel
 *
 *   dev_api [phase ...]   (default: all)
 *   dev_api hang MARK     every PE's kernel waits on a signal that never
 *                         comes after printing "ready" (gpu_kill.sh kills
 *                         a PE: the job must end, nothing left behind)
 *   dev_api badpe         the last PE's kernel calls shmemx_dev_uint64_p
 *                         with PE npes: the kernel prints the misuse line
 *                         and traps, the job fails (run-devapi.sh checks
 *                         the line)
 */
#include <cuda_runtime.h>
#include <shmem.h>
#include <shmemx.h>
#include <shmemx_cuda.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CK(call)                                                               \
    do {                                                                       \
        cudaError_t e_ = (call);                                               \
        if (e_ != cudaSuccess) {                                               \
            fprintf(stderr, "FAIL: PE %d: %s:%d: %s: %s\n", me, __FILE__,      \
                    __LINE__, #call, cudaGetErrorString(e_));                  \
            fflush(stderr);                                                    \
            _exit(1);                                                          \
        }                                                                      \
    } while (0)

static int me, npes, fails;

#define FAIL(...)                                                              \
    do {                                                                       \
        fprintf(stderr, "FAIL: PE %d: ", me);                                  \
        fprintf(stderr, __VA_ARGS__);                                          \
        fputc('\n', stderr);                                                   \
        fails++;                                                               \
    } while (0)

__host__ __device__ static inline unsigned char pat(int pe, size_t i, int round)
{
    return (unsigned char)(pe * 37 + i * 13 + (i >> 9) + round * 101 + 1);
}

/* fill_on(st, ...): the pattern into p, landed when it returns. cudaMemcpy
 * from pageable host memory returns once the bytes are staged, before they
 * land: without the synchronize a peer that reads them after the next
 * shmem_barrier_all may see the old ones (H100, 2 PEs under MPS,
 * 2026-12-05 22:26: rma getmem 1 MiB from the peer's device heap, the last
 * 96768 bytes stale). st 0: the legacy stream and cudaDeviceSynchronize;
 * else a copy on st, synchronised alone. While a request keeps instances
 * posted ahead a legacy-stream copy can wait behind their gate and
 * cudaDeviceSynchronize does not return before shmemx_req_free
 * (shmemx_req(3); the "trigger-mode hang" of shmemx_dev(3) BUGS was this
 * cudaDeviceSynchronize in req_run: H100, 2026-12-07): there the copies
 * use copy_stream, non-blocking. */
static cudaStream_t copy_stream;

static void fill_on(cudaStream_t st, void *p, size_t n, int pe, int round)
{
    unsigned char *h = (unsigned char *)malloc(n);
    for (size_t i = 0; i < n; i++)
        h[i] = pat(pe, i, round);
    if (st) {
        CK(cudaMemcpyAsync(p, h, n, cudaMemcpyDefault, st));
        CK(cudaStreamSynchronize(st));
    } else {
        CK(cudaMemcpy(p, h, n, cudaMemcpyDefault));
        CK(cudaDeviceSynchronize());
    }
    free(h);
}

static void fill(void *p, size_t n, int pe, int round)
{
    fill_on((cudaStream_t)0, p, n, pe, round);
}

static void zero(void *p, size_t n)
{
    void *z = calloc(1, n);
    CK(cudaMemcpy(p, z, n, cudaMemcpyDefault));
    CK(cudaDeviceSynchronize());
    free(z);
}

static int is_zero(const void *p, size_t n)
{
    unsigned char h[64] = {0};
    size_t i;
    CK(cudaMemcpy(h, p, n, cudaMemcpyDefault));
    for (i = 0; i < n && !h[i]; i++)
        ;
    return i == n;
}

static size_t check_on(cudaStream_t st, const void *p, size_t n, int pe,
                       int round);
static size_t check(const void *p, size_t n, int pe, int round)
{
    return check_on((cudaStream_t)0, p, n, pe, round);
}

static size_t check_on(cudaStream_t st, const void *p, size_t n, int pe,
                       int round)
{
    unsigned char *h = (unsigned char *)malloc(n);
    size_t bad = 0, first = n;
    if (st) {
        CK(cudaMemcpyAsync(h, p, n, cudaMemcpyDefault, st));
        CK(cudaStreamSynchronize(st));
    } else {
        CK(cudaMemcpy(h, p, n, cudaMemcpyDefault));
    }
    for (size_t i = 0; i < n; i++)
        if (h[i] != pat(pe, i, round)) {
            if (first == n)
                first = i;
            bad++;
        }
    free(h);
    if (bad)
        fprintf(stderr, "  %zu of %zu bytes wrong, first at %zu\n", bad, n,
                first);
    return bad;
}

/* ------------------------------------------------------------ rma */

enum { OP_PUT, OP_PUT_NBI, OP_GET, OP_GET_NBI, NOPS };
static const char *op_name[NOPS] = {"putmem", "putmem_nbi", "getmem",
                                    "getmem_nbi"};

__global__ void k_rma(shmemx_dev_t d, int op, void *dst, const void *src,
                      size_t n, int pe)
{
    switch (op) {
    case OP_PUT:
        shmemx_dev_putmem(d, dst, src, n, pe);
        break;
    case OP_PUT_NBI:
        shmemx_dev_putmem_nbi(d, dst, src, n, pe);
        shmemx_dev_quiet(d);
        break;
    case OP_GET:
        shmemx_dev_getmem(d, dst, src, n, pe);
        break;
    case OP_GET_NBI:
        shmemx_dev_getmem_nbi(d, dst, src, n, pe);
        shmemx_dev_quiet(d);
        break;
    }
}

/* One put or get of n bytes between my loc and the next PE's sym (a put
 * lands in my sym from the previous PE), its data checked and the 8 bytes
 * after the destination still 0. */
static void rma_case(shmemx_dev_t d, int op, char *loc, char *sym, size_t n,
                     int round, const char *what)
{
    int next = (me + 1) % npes, prev = (me - 1 + npes) % npes;
    int put = op == OP_PUT || op == OP_PUT_NBI;
    char *dst = put ? sym : loc;

    zero(dst, n + 8);
    fill(put ? loc : sym, n, me, round);
    shmem_barrier_all();
    if (put)
        k_rma<<<1, 1>>>(d, op, sym, loc, n, next);
    else
        k_rma<<<1, 1>>>(d, op, loc, sym, n, next);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    shmem_barrier_all();
    if (check(dst, n, put ? prev : next, round))
        FAIL("rma: %s %zu B, %s", op_name[op], n, what);
    if (!is_zero(dst + n, 8))
        FAIL("rma: %s %zu B, %s: wrote past the end", op_name[op], n, what);
}

static void phase_rma(shmemx_dev_t d)
{
    /* 1 and 13 bytes: the store path's byte copies; offsets: word copies
     * need both sides 8-byte aligned (the translated side's alignment is
     * judged on the symmetric address, shmemx_dev__put_stores). */
    const size_t sizes[] = {1, 8, 13, 256, 4096, 65536, 1 << 20};
    const size_t offs[][2] = {{0, 0}, {3, 0}, {0, 5}}; /* local, symmetric */
    const size_t max = (1 << 20) + 16;
    /* [0] host heap, [1] device heap, [2] private device memory (local
     * side only) */
    char *sym_src[2], *sym_dst[2], *priv_src, *priv_dst, what[96];
    const char *kind[3] = {"host", "device", "private"};

    sym_src[0] = (char *)shmem_malloc(max);
    sym_dst[0] = (char *)shmem_malloc(max);
    sym_src[1] = (char *)shmemx_malloc_device(max);
    sym_dst[1] = (char *)shmemx_malloc_device(max);
    CK(cudaMalloc(&priv_src, max));
    CK(cudaMalloc(&priv_dst, max));
    if (!sym_src[0] || !sym_dst[0] || !sym_src[1] || !sym_dst[1]) {
        FAIL("rma: allocation failed");
        return;
    }
    for (int op = 0; op < NOPS; op++) {
        int put = op == OP_PUT || op == OP_PUT_NBI;
        for (int a = 0; a < 3; a++)     /* local side */
            for (int b = 0; b < 2; b++) /* symmetric side */
                for (size_t si = 0; si < sizeof(sizes) / sizeof(*sizes); si++)
                    for (int o = 0; o < 3; o++) {
                        char *loc = a == 2 ? (put ? priv_src : priv_dst)
                                           : (put ? sym_src[a] : sym_dst[a]);
                        char *sym = put ? sym_dst[b] : sym_src[b];
                        snprintf(what, sizeof(what),
                                 "local %s + %zu, symmetric %s + %zu", kind[a],
                                 offs[o][0], kind[b], offs[o][1]);
                        rma_case(d, op, loc + offs[o][0], sym + offs[o][1],
                                 sizes[si], op * 16 + a * 4 + b, what);
                    }
    }
    shmem_barrier_all();
    CK(cudaFree(priv_src));
    CK(cudaFree(priv_dst));
    shmem_free(sym_src[0]);
    shmem_free(sym_dst[0]);
    shmem_free(sym_src[1]);
    shmem_free(sym_dst[1]);
}

/* ------------------------------------------------------------ bigself */

/* One thread puts (or gets) n bytes within this PE's own device heap on
 * the engines and returns from the blocking call (or the nbi + quiet);
 * then the whole block checks every word at once, in the same kernel: the
 * library's completion must cover the copy itself. (A local copy of 1 MiB
 * or more runs on a side stream; the proxy's completion word was written
 * before it finished: the 1-PE bandwidth rows read 10 TB/s, #31.) */
__global__ void k_bigself(shmemx_dev_t d, int op, uint64_t *dst,
                          const uint64_t *src, size_t n, uint64_t tag,
                          unsigned long long *bad)
{
    if (threadIdx.x == 0) {
        switch (op) {
        case OP_PUT:
            shmemx_dev_putmem(d, dst, src, n, d.me);
            break;
        case OP_PUT_NBI:
            shmemx_dev_putmem_nbi(d, dst, src, n, d.me);
            shmemx_dev_quiet(d);
            break;
        case OP_GET:
            shmemx_dev_getmem(d, dst, src, n, d.me);
            break;
        default:
            shmemx_dev_getmem_nbi(d, dst, src, n, d.me);
            shmemx_dev_quiet(d);
            break;
        }
    }
    const volatile uint64_t *v = dst;
    /* The copy's last word at once, before the block's reads (which trail
     * a copy still running from its start and would not see it). */
    if (threadIdx.x == 0 && v[n / 8 - 1] != (tag ^ (n / 8 - 1)))
        atomicAdd(bad, 1ull << 40);
    __syncthreads();
    unsigned long long b = 0;
    for (size_t i = threadIdx.x; i < n / 8; i += blockDim.x)
        b += v[i] != (tag ^ i);
    if (b)
        atomicAdd(bad, b);
}

__global__ void k_fill64(uint64_t *p, size_t n, uint64_t tag)
{
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n / 8;
         i += gridDim.x * blockDim.x)
        p[i] = tag ^ i;
}

static void phase_bigself(shmemx_dev_t d)
{
    const size_t n = 64u << 20;
    uint64_t *src = (uint64_t *)shmemx_malloc_device(n);
    uint64_t *dst = (uint64_t *)shmemx_malloc_device(n);
    unsigned long long *bad;
    if (!src || !dst) {
        FAIL("bigself: allocation failed (SHMEM_DEVICE_HEAP_SIZE)");
        return;
    }
    CK(cudaMalloc(&bad, sizeof(*bad)));
    for (int op = 0; op < NOPS; op++)
        for (int r = 0; r < 5; r++) {
            uint64_t tag = ((uint64_t)(op * 8 + r + 1) << 40) | (uint64_t)me;
            unsigned long long h = 0;
            CK(cudaMemset(dst, 0, n));
            k_fill64<<<64, 256>>>(src, n, tag);
            CK(cudaMemset(bad, 0, sizeof(*bad)));
            CK(cudaDeviceSynchronize());
            k_bigself<<<1, 1024>>>(d, op, dst, src, n, tag, bad);
            CK(cudaGetLastError());
            CK(cudaDeviceSynchronize());
            CK(cudaMemcpy(&h, bad, sizeof(h), cudaMemcpyDeviceToHost));
            if (h) {
                FAIL("bigself: %s of %zu B within PE %d: %s%llu of %zu words "
                     "not there when the call returned (round %d)",
                     op_name[op], n, me,
                     h >> 40 ? "the last word and " : "",
                     h & ((1ull << 40) - 1), n / 8, r);
                break;
            }
        }
    shmem_barrier_all();
    CK(cudaFree(bad));
    shmem_free(src);
    shmem_free(dst);
}

/* ------------------------------------------------------------ signal */

#define SIG_ROUNDS 20

/* Round r: wait for my ack from next (my previous data was checked), send
 * round r's data + signal to next; wait for prev's signal, check its
 * data, ack prev. */
__global__ void k_signal(shmemx_dev_t d, char *dst, char *src, size_t n,
                         uint64_t *sig, uint64_t *ack, int sig_op,
                         unsigned long long *bad)
{
    int next = (d.me + 1) % d.npes, prev = (d.me - 1 + d.npes) % d.npes;
    for (int r = 0; r < SIG_ROUNDS; r++) {
        shmemx_dev_signal_wait_until(d, ack, SHMEM_CMP_GE, (uint64_t)r);
        for (size_t i = 0; i < n; i++)
            src[i] = (char)pat(d.me, i, r);
        __threadfence_system();
        uint64_t v = sig_op == SHMEM_SIGNAL_SET ? (uint64_t)r + 1 : 1;
        shmemx_dev_putmem_signal_nbi(d, dst, src, n, sig, v, sig_op, next);
        uint64_t got = shmemx_dev_signal_wait_until(d, sig, SHMEM_CMP_GE,
                                                    (uint64_t)r + 1);
        if (got != (uint64_t)r + 1 || shmemx_dev_signal_fetch(d, sig) != got)
            atomicAdd(bad, 1ull << 32);
        const volatile char *vd = dst;
        for (size_t i = 0; i < n; i++)
            if ((unsigned char)vd[i] != pat(prev, i, r))
                atomicAdd(bad, 1ull);
        shmemx_dev_uint64_p(d, ack, (uint64_t)r + 1, prev);
    }
    shmemx_dev_quiet(d);
}

static void phase_signal(shmemx_dev_t d)
{
    const size_t sizes[] = {256, 65536, 1 << 20};
    unsigned long long *bad;
    CK(cudaMalloc(&bad, sizeof(*bad)));
    for (int wk = 0; wk < 2; wk++) /* signal/ack words: host, device heap */
        for (int op = 0; op < 2; op++)
            for (size_t si = 0; si < 3; si++) {
                size_t n = sizes[si];
                char *dst = (char *)shmemx_malloc_device(n);
                char *src = (char *)shmemx_malloc_device(n);
                uint64_t *w = (uint64_t *)(wk ? shmemx_malloc_device(16)
                                              : shmem_malloc(16));
                unsigned long long h = 0;
                zero(w, 16);
                zero(dst, n);
                CK(cudaMemset(bad, 0, sizeof(*bad)));
                shmem_barrier_all();
                k_signal<<<1, 1>>>(d, dst, src, n, w, w + 1,
                                   op ? SHMEM_SIGNAL_ADD : SHMEM_SIGNAL_SET,
                                   bad);
                CK(cudaGetLastError());
                CK(cudaDeviceSynchronize());
                CK(cudaMemcpy(&h, bad, sizeof(h), cudaMemcpyDefault));
                if (h)
                    FAIL("signal: putmem_signal_nbi %s %zu B, words in %s "
                         "heap: %llu signal values and %llu data bytes wrong",
                         op ? "ADD" : "SET", n, wk ? "device" : "host",
                         h >> 32, h & 0xffffffffull);
                shmem_barrier_all();
                shmem_free(w);
                shmem_free(src);
                shmem_free(dst);
            }
    CK(cudaFree(bad));
}

/* ------------------------------------------------------------ p / g */

#define PG_SLOTS 32

__global__ void k_pg(shmemx_dev_t d, char *slots, unsigned long long *bad)
{
    int next = (d.me + 1) % d.npes;
    int k = 0;
#define P_ONE(T, N)                                                            \
    shmemx_dev_##N##_p(d, (T *)(slots + 8 * k), (T)(d.me * 10 + k + 1), next); \
    shmemx_dev_fence(d);                                                       \
    k++;
    SHMEMX_DEV_TYPES_RMA(P_ONE)
#undef P_ONE
    shmemx_dev_barrier_all(d);
    k = 0;
    /* next's slots hold what I stored there */
#define G_ONE(T, N)                                                            \
    if (shmemx_dev_##N##_g(d, (const T *)(slots + 8 * k), next) !=             \
        (T)(d.me * 10 + k + 1))                                                \
        atomicAdd(bad, 1ull << k);                                             \
    k++;
    SHMEMX_DEV_TYPES_RMA(G_ONE)
#undef G_ONE
    shmemx_dev_barrier_all(d);
}

static void phase_pg(shmemx_dev_t d)
{
    unsigned long long *bad, h;
    int prev = (me - 1 + npes) % npes;
    CK(cudaMalloc(&bad, sizeof(*bad)));
    for (int wk = 0; wk < 2; wk++) {
        char *slots = (char *)(wk ? shmemx_malloc_device(8 * PG_SLOTS)
                                  : shmem_malloc(8 * PG_SLOTS));
        zero(slots, 8 * PG_SLOTS);
        CK(cudaMemset(bad, 0, sizeof(*bad)));
        shmem_barrier_all();
        k_pg<<<1, 1>>>(d, slots, bad);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(&h, bad, sizeof(h), cudaMemcpyDefault));
        if (h)
            FAIL("pg: _g in the %s heap returned wrong values (type mask "
                 "%#llx)", wk ? "device" : "host", h);
        /* What prev stored here, checked by the host. */
        char host[8 * PG_SLOTS];
        int k = 0;
        CK(cudaMemcpy(host, slots, sizeof(host), cudaMemcpyDefault));
#define H_ONE(T, N)                                                            \
    {                                                                          \
        T v;                                                                   \
        memcpy(&v, host + 8 * k, sizeof(T));                                   \
        if (v != (T)(prev * 10 + k + 1))                                       \
            FAIL("pg: shmemx_dev_" #N "_p into the %s heap: wrong value",     \
                 wk ? "device" : "host");                                      \
        k++;                                                                   \
    }
        SHMEMX_DEV_TYPES_RMA(H_ONE)
#undef H_ONE
        shmem_barrier_all();
        shmem_free(slots);
    }
    CK(cudaFree(bad));
}

/* ------------------------------------------------------------ amo */

#define AMO_ITERS 64
#define AMO_BLOCKS 4
#define AMO_THREADS 128

struct amo_words {
    int32_t i32;
    uint32_t u32;
    int64_t i64;
    uint64_t u64;
    uint64_t cas;
};

/* Every thread: AMO_ITERS of each AMO. Fetched values of the 64-bit
 * counter go to seen[] (distinctness is checked by the host). */
__global__ void k_amo(shmemx_dev_t d, amo_words *w, uint32_t *seen)
{
    unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;
    int last = d.npes - 1;
    for (int i = 0; i < AMO_ITERS; i++) {
        shmemx_dev_int32_atomic_add(d, &w->i32, 1, 0);
        shmemx_dev_uint32_atomic_fetch_add(d, &w->u32, 2u, 0);
        int64_t f = shmemx_dev_int64_atomic_fetch_add(d, &w->i64, 1, 0);
        shmemx_dev_uint64_atomic_add(d, &w->u64, 3, 0);
        seen[tid * AMO_ITERS + i] = (uint32_t)f;
        if (i < 4) {
            uint64_t old = shmemx_dev_uint64_g(d, &w->cas, last), got;
            while ((got = shmemx_dev_uint64_atomic_compare_swap(
                        d, &w->cas, old, old + 1, last)) != old)
                old = got;
        }
    }
    /* int32/int64 compare_swap and fetch_add of the other types once. */
    if (tid == 0) {
        shmemx_dev_int32_atomic_compare_swap(d, &w->i32, -12345, 0, 0);
        shmemx_dev_int64_atomic_compare_swap(d, &w->i64, -12345, 0, 0);
        shmemx_dev_uint32_atomic_compare_swap(d, &w->u32, 0xdeadu, 0, 0);
        shmemx_dev_uint64_atomic_fetch_add(d, &w->u64, 0, 0);
        shmemx_dev_int32_atomic_fetch_add(d, &w->i32, 0, 0);
        shmemx_dev_uint32_atomic_add(d, &w->u32, 0, 0);
        shmemx_dev_int64_atomic_add(d, &w->i64, 0, 0);
    }
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static void phase_amo(shmemx_dev_t d)
{
    const size_t nt = AMO_BLOCKS * AMO_THREADS;
    const uint64_t total = (uint64_t)npes * nt * AMO_ITERS;
    for (int wk = 0; wk < 2; wk++) {
        amo_words *w = (amo_words *)(wk ? shmemx_malloc_device(sizeof(*w))
                                        : shmem_malloc(sizeof(*w)));
        uint32_t *seen = (uint32_t *)shmemx_malloc_device(
            nt * AMO_ITERS * sizeof(uint32_t));
        amo_words h;
        zero(w, sizeof(*w));
        shmem_barrier_all();
        k_amo<<<AMO_BLOCKS, AMO_THREADS>>>(d, w, seen);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        shmem_barrier_all();
        CK(cudaMemcpy(&h, w, sizeof(h), cudaMemcpyDefault));
        const char *k = wk ? "device" : "host";
        if (me == 0 && ((uint64_t)h.i32 != total || h.u32 != 2 * total ||
                        (uint64_t)h.i64 != total || h.u64 != 3 * total))
            FAIL("amo (%s heap): totals i32 %d u32 %u i64 %lld u64 %llu, "
                 "expected %llu, %llu, %llu, %llu",
                 k, h.i32, h.u32, (long long)h.i64,
                 (unsigned long long)h.u64, (unsigned long long)total,
                 (unsigned long long)(2 * total), (unsigned long long)total,
                 (unsigned long long)(3 * total));
        if (me == npes - 1 && h.cas != (uint64_t)npes * nt * 4)
            FAIL("amo (%s heap): compare_swap increments %llu, expected "
                 "%llu",
                 k, (unsigned long long)h.cas,
                 (unsigned long long)npes * nt * 4);
        /* Every fetched value of the int64 counter, from all PEs: each
         * once. */
        {
            size_t per = nt * AMO_ITERS, all = per * (size_t)npes;
            uint32_t *mine = (uint32_t *)malloc(per * 4);
            uint32_t *v = (uint32_t *)shmem_malloc(all * 4);
            CK(cudaMemcpy(mine, seen, per * 4, cudaMemcpyDefault));
            shmem_fcollectmem(SHMEM_TEAM_WORLD, v, mine, per * 4);
            if (me == 0) {
                qsort(v, all, 4, cmp_u32);
                for (size_t i = 0; i < all; i++)
                    if (v[i] != i) {
                        FAIL("amo (%s heap): fetch_add returned %u at rank "
                             "%zu (values must be 0..%zu, each once)",
                             k, v[i], i, all - 1);
                        break;
                    }
            }
            free(mine);
            shmem_barrier_all();
            shmem_free(v);
        }
        shmem_free(seen);
        shmem_free(w);
    }
}

/* ------------------------------------------------------------ stress */

#define ST_BLOCKS 8
#define ST_THREADS 64
#define ST_ITERS 16
#define ST_LEN 2048 /* above the store threshold: every put on the engines */

__global__ void k_stress(shmemx_dev_t d, char *dst, const char *src)
{
    unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;
    int next = (d.me + 1) % d.npes;
    for (int i = 0; i < ST_ITERS; i++) {
        size_t off = ((size_t)tid * ST_ITERS + i) * ST_LEN;
        shmemx_dev_putmem_nbi(d, dst + off, src + off, ST_LEN, next);
        if (i == ST_ITERS / 2 && (tid & 7) == 0)
            shmemx_dev_quiet(d); /* quiet while others keep issuing */
    }
    shmemx_dev_quiet(d);
}

static void phase_stress(shmemx_dev_t d)
{
    const size_t n = (size_t)ST_BLOCKS * ST_THREADS * ST_ITERS * ST_LEN;
    int prev = (me - 1 + npes) % npes;
    char *dst = (char *)shmemx_malloc_device(n);
    char *src = (char *)shmemx_malloc_device(n);
    CK(cudaMemset(dst, 0, n));
    fill(src, n, me, 7);
    for (int rep = 0; rep < 3; rep++) {
        shmem_barrier_all();
        k_stress<<<ST_BLOCKS, ST_THREADS>>>(d, dst, src);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        shmem_barrier_all();
        if (check(dst, n, prev, 7))
            FAIL("stress: %d x %d threads x %d put_nbi of %d B (FIFO of %u "
                 "slots), repetition %d",
                 ST_BLOCKS, ST_THREADS, ST_ITERS, ST_LEN, d.slots, rep);
        CK(cudaMemset(dst, 0, n));
    }
    shmem_barrier_all();
    shmem_free(src);
    shmem_free(dst);
}

/* ------------------------------------------------------------ barrier */

#define BAR_ROUNDS 1000

__global__ void k_barrier(shmemx_dev_t d, uint64_t *word,
                          unsigned long long *bad)
{
    int next = (d.me + 1) % d.npes;
    for (int r = 1; r <= BAR_ROUNDS; r++) {
        shmemx_dev_uint64_p(d, word, (uint64_t)r, next);
        shmemx_dev_barrier_all(d);
        if (*(volatile uint64_t *)word != (uint64_t)r)
            atomicAdd(bad, 1ull);
        shmemx_dev_barrier_all(d); /* before anyone writes r + 1 */
    }
}

static void phase_barrier(shmemx_dev_t d)
{
    unsigned long long *bad, h;
    uint64_t *word = (uint64_t *)shmemx_malloc_device(8);
    CK(cudaMalloc(&bad, sizeof(*bad)));
    CK(cudaMemset(bad, 0, sizeof(*bad)));
    zero(word, 8);
    shmem_barrier_all();
    k_barrier<<<1, 1>>>(d, word, bad);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(&h, bad, sizeof(h), cudaMemcpyDefault));
    if (h)
        FAIL("barrier: %llu of %d rounds saw a stale word", h, BAR_ROUNDS);
    shmem_barrier_all();
    CK(cudaFree(bad));
    shmem_free(word);
}

/* ------------------------------------------------------------ group */

#define GRP_CH (64 << 10)  /* bytes a block */
#define GRP_WCH (4 << 10)  /* bytes a warp */
#define GRP_BLOCKS 2
#define GRP_THREADS 128
#define GRP_WARPS (GRP_BLOCKS * GRP_THREADS / 32)
#define GRP_BYTES (GRP_BLOCKS * GRP_CH + GRP_WARPS * GRP_WCH)

__global__ void k_group(shmemx_dev_t d, char *src, char *dst, int next)
{
    const size_t b = blockIdx.x, t = threadIdx.x;
    const size_t w = (b * GRP_THREADS + t) / 32, lane = t & 31;
    /* The block's part, filled by all its threads: the leader's put must
     * wait for them (the form's first synchronisation). */
    for (size_t i = t; i < GRP_CH; i += GRP_THREADS)
        src[b * GRP_CH + i] = (char)pat(d.me, b * GRP_CH + i, 50);
    char *wsrc = src + GRP_BLOCKS * GRP_CH + w * GRP_WCH;
    for (size_t i = lane; i < GRP_WCH; i += 32)
        wsrc[i] = (char)pat(d.me, GRP_BLOCKS * GRP_CH + w * GRP_WCH + i, 50);
    shmemx_dev_putmem_block(d, dst + b * GRP_CH, src + b * GRP_CH, GRP_CH,
                            next);
    shmemx_dev_putmem_nbi_warp(d, dst + (wsrc - src), wsrc, GRP_WCH, next);
    shmemx_dev_quiet_warp(d);
    /* The block form of the barrier (block 0 of every PE; b is uniform
     * in a block, so its __syncthreads are too). */
    if (b == 0)
        shmemx_dev_barrier_all_block(d);
}

__global__ void k_group_get(shmemx_dev_t d, char *src, char *gbuf, int next)
{
    const size_t b = blockIdx.x;
    shmemx_dev_getmem_block(d, gbuf + b * GRP_CH, src + b * GRP_CH, GRP_CH,
                            next);
}

static void phase_group(shmemx_dev_t d)
{
    char *src = (char *)shmemx_malloc_device(GRP_BYTES);
    char *dst = (char *)shmemx_malloc_device(GRP_BYTES);
    char *gbuf = (char *)shmemx_malloc_device(GRP_BLOCKS * GRP_CH);
    const int next = (me + 1) % npes, prev = (me - 1 + npes) % npes;
    if (!src || !dst || !gbuf) {
        FAIL("group: allocation failed");
        return;
    }
    zero(src, GRP_BYTES);
    zero(dst, GRP_BYTES);
    zero(gbuf, GRP_BLOCKS * GRP_CH);
    shmem_barrier_all();
    k_group<<<GRP_BLOCKS, GRP_THREADS>>>(d, src, dst, next);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    shmem_barrier_all();
    k_group_get<<<GRP_BLOCKS, GRP_THREADS>>>(d, src, gbuf, next);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    shmem_barrier_all();
    if (check(dst, GRP_BYTES, prev, 50))
        FAIL("group: putmem_block / putmem_nbi_warp data from PE %d", prev);
    if (check(gbuf, GRP_BLOCKS * GRP_CH, next, 50))
        FAIL("group: getmem_block data from PE %d", next);
    shmem_barrier_all();
    shmem_free(gbuf);
    shmem_free(dst);
    shmem_free(src);
}

/* ------------------------------------------------------------ graph */

#define GRAPH_N (64 << 10)
#define GRAPH_REPLAYS 100

struct graph_words {
    uint64_t sig;  /* round + 1 from the previous PE */
    uint64_t ack;  /* round + 1 from the next PE: it has checked round */
    unsigned long long round, bad;
};

__global__ void k_graph(shmemx_dev_t d, char *src, char *dst,
                        graph_words *w)
{
    const int next = (d.me + 1) % d.npes, prev = (d.me - 1 + d.npes) % d.npes;
    const unsigned long long r = w->round++; /* this replay's round */
    /* The next PE has checked the previous round before dst is reused. */
    shmemx_dev_signal_wait_until(d, &w->ack, SHMEM_CMP_GE, r);
    for (size_t i = 0; i < GRAPH_N; i++)
        src[i] = (char)pat(d.me, i, (int)r);
    __threadfence_system();
    shmemx_dev_putmem_signal_nbi(d, dst, src, GRAPH_N, &w->sig, r + 1,
                                 SHMEM_SIGNAL_SET, next);
    shmemx_dev_signal_wait_until(d, &w->sig, SHMEM_CMP_GE, r + 1);
    for (size_t i = 0; i < GRAPH_N; i++)
        if (((volatile char *)dst)[i] != (char)pat(prev, i, (int)r)) {
            w->bad++;
            break;
        }
    shmemx_dev_uint64_p(d, &w->ack, r + 1, prev);
    shmemx_dev_quiet(d);
}

static void phase_graph(shmemx_dev_t d)
{
    char *src = (char *)shmemx_malloc_device(GRAPH_N);
    char *dst = (char *)shmemx_malloc_device(GRAPH_N);
    graph_words *w = (graph_words *)shmemx_malloc_device(sizeof(graph_words));
    graph_words h;
    cudaStream_t st;
    cudaGraph_t g;
    cudaGraphExec_t ge;
    if (!src || !dst || !w) {
        FAIL("graph: allocation failed");
        return;
    }
    zero(w, sizeof(*w));
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
    k_graph<<<1, 1, 0, st>>>(d, src, dst, w);
    CK(cudaStreamEndCapture(st, &g));
    CK(cudaGraphInstantiate(&ge, g, 0));
    shmem_barrier_all(); /* every PE's words are zero */
    for (int k = 0; k < GRAPH_REPLAYS; k++)
        CK(cudaGraphLaunch(ge, st));
    CK(cudaStreamSynchronize(st));
    CK(cudaMemcpy(&h, w, sizeof(h), cudaMemcpyDefault));
    if (h.round != GRAPH_REPLAYS || h.bad)
        FAIL("graph: %llu replays ran (want %d), %llu saw wrong data",
             h.round, GRAPH_REPLAYS, h.bad);
    shmem_barrier_all();
    CK(cudaGraphExecDestroy(ge));
    CK(cudaGraphDestroy(g));
    CK(cudaStreamDestroy(st));
    shmem_free(w);
    shmem_free(dst);
    shmem_free(src);
}

/* ------------------------------------------------------------ req */

#define REQ_NB 256

/* One thread: fresh source, start, wait, check, rounds times. a2a: source
 * holds n blocks (block t for team member t), else one. n: the team's
 * size (1: one, whose blocks are this PE's). R: the host's
 * shmemx_req_t, or the kernel handle of shmemx_req_device. */
template <typename R>
__global__ void k_req(shmemx_dev_t d, R req, unsigned char *src,
                      const unsigned char *dst, int a2a, int n, int rounds,
                      unsigned long long *bad, volatile unsigned long long *at)
{
    const int self = n == 1;
    for (int r = 0; r < rounds; r++) {
        *at = 4ull * r;
        for (int t = 0; t < (a2a ? n : 1); t++)
            for (size_t i = 0; i < REQ_NB; i++)
                src[(size_t)t * REQ_NB + i] =
                    pat(a2a ? d.me * n + t : d.me, i, r);
        /* Every PE has checked instance r - 1 before anyone starts r. */
        shmemx_dev_barrier_all(d);
        *at = 4ull * r + 1;
        shmemx_dev_req_start(d, req);
        *at = 4ull * r + 2;
        shmemx_dev_req_wait(d, req);
        *at = 4ull * r + 3;
        for (int s = 0; s < n; s++)
            for (size_t i = 0; i < REQ_NB; i++)
                if (((const volatile unsigned char *)dst)[(size_t)s * REQ_NB +
                                                          i] !=
                    pat(a2a ? s * n + d.me : self ? d.me : s, i, r)) {
                    atomicAdd(bad, 1ull);
                    break;
                }
    }
}

/* The stream of the req kernels (DEVAPI_STREAM=nonblocking: a stream of
 * its own that does not synchronise with the legacy default stream) and
 * the kernel's progress word in pinned host memory: round * 4 + step
 * (0 fill, 1 start, 2 wait, 3 check). */
static cudaStream_t req_stream;
static volatile unsigned long long *req_at;

/* Wait for the req kernel; after 20 s say where it stands and fail. */
static void req_sync(const char *what, int rounds)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        cudaError_t e = cudaStreamQuery(req_stream);
        if (e != cudaErrorNotReady) {
            CK(e);
            return;
        }
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (t.tv_sec - t0.tv_sec > 20) {
            unsigned long long a = *req_at;
            if (a == ~0ull) {
                fprintf(stderr, "PE %d: req: %s kernel did not begin in "
                        "20 s\n", me, what);
                _exit(1);
            }
            fprintf(stderr,
                    "PE %d: req: %s kernel stuck 20 s in round %llu of %d, "
                    "at the %s\n",
                    me, what, a / 4, rounds,
                    (const char *[]){"fill and barrier", "start", "wait",
                                     "check"}[a % 4]);
            _exit(1);
        }
        usleep(1000);
    }
}

/* Where a request's buffers live. */
enum { REQ_HOST = 0, REQ_SRC_DEV = 1, REQ_DST_DEV = 2, REQ_DEV = 3 };
/* How the kernel holds it: the host request, or its kernel handle (whose
 * mode must be want, 0: either). */
enum { REQ_BY_REQ = 0, REQ_BY_HANDLE = 1 };

static const char *req_mode(uint64_t m)
{
    return m == SHMEMX_DEV_REQ_TRIGGER ? "trigger"
           : m == SHMEMX_DEV_REQ_PROXY ? "proxy"
                                       : "unknown";
}

static void req_run(shmemx_dev_t d, int a2a, int where, int rounds,
                    shmem_team_t team, int by, uint64_t want)
{
    const int n = shmem_team_n_pes(team);
    const size_t nb = (size_t)REQ_NB * (size_t)n;
    unsigned char *src, *dst;
    unsigned long long *bad, h;
    shmemx_req_t req;
    const char *what = a2a ? "alltoall" : "fcollect";

    src = (unsigned char *)((where & REQ_SRC_DEV) ? shmemx_malloc_device(nb)
                                                  : shmem_malloc(nb));
    dst = (unsigned char *)((where & REQ_DST_DEV) ? shmemx_malloc_device(nb)
                                                  : shmem_malloc(nb));
    if (!src || !dst) {
        FAIL("req: symmetric allocation");
        return;
    }
    zero(dst, nb);
    /* Load both kernels (rounds 0) before any instance is posted ahead: a
     * first launch that loads a module lazily or grows local memory waits
     * for the whole GPU to be idle, which a stream gated on a trigger
     * never is (shmemx_req(3)). */
    k_req<<<1, 1, 0, req_stream>>>(d, (shmemx_dev_req_t *)NULL, src, dst, a2a,
                                    n, 0, NULL, req_at);
    k_req<<<1, 1, 0, req_stream>>>(d, (shmemx_req_t)NULL, src, dst, a2a, n, 0,
                                    NULL, req_at);
    CK(cudaStreamSynchronize(req_stream));
    if ((a2a ? shmemx_alltoallmem_init(team, dst, src, REQ_NB, &req)
             : shmemx_fcollectmem_init(team, dst, src, REQ_NB, &req)) != 0) {
        FAIL("req: %s_init", a2a ? "alltoallmem" : "fcollectmem");
        return;
    }
    CK(cudaMalloc(&bad, sizeof(*bad)));
    CK(cudaMemset(bad, 0, sizeof(*bad)));
    shmem_barrier_all();
    *req_at = ~0ull; /* the kernel has not begun */
    if (by == REQ_BY_HANDLE) {
        shmemx_dev_req_t *kh = shmemx_req_device(req), hv;
        if (shmemx_req_device(req) != kh)
            FAIL("req: shmemx_req_device gave two handles for one request");
        /* On the request's stream: with instances posted ahead a copy on
         * the legacy stream may wait behind their gate (shmemx_req(3)). */
        CK(cudaMemcpyAsync(&hv, kh, sizeof(hv), cudaMemcpyDefault,
                           req_stream));
        CK(cudaStreamSynchronize(req_stream));
        if (want && hv.mode != want)
            FAIL("req: %s handle over %d PEs is in %s mode, want %s", what,
                 n, req_mode(hv.mode), req_mode(want));
        if (me == 0)
            printf("dev_api req: %s over %d PE(s) by kernel handle, %s "
                   "mode\n", what, n, req_mode(hv.mode));
        k_req<<<1, 1, 0, req_stream>>>(d, kh, src, dst, a2a, n, rounds, bad,
                                        req_at);
    } else {
        k_req<<<1, 1, 0, req_stream>>>(d, req, src, dst, a2a, n, rounds, bad,
                                        req_at);
    }
    CK(cudaGetLastError());
    req_sync(what, rounds);
    CK(cudaMemcpyAsync(&h, bad, sizeof(h), cudaMemcpyDefault, req_stream));
    CK(cudaStreamSynchronize(req_stream));
    if (h)
        FAIL("req: %s of memory %d from a kernel (%s): %llu of %d rounds "
             "wrong", what, where, by ? "handle" : "request", h, rounds);
    /* The host may use the request again once the kernel is done, twice
     * (a handle's counters carry on). */
    for (int rep = 7; rep < 9 && !a2a; rep++) {
        fill_on(copy_stream, src, REQ_NB, me, rep);
        shmem_barrier_all();
        shmemx_req_start(req);
        shmemx_req_wait(req);
        for (int s = 0; s < n; s++)
            if (check_on(copy_stream, dst + (size_t)s * REQ_NB, REQ_NB,
                      n == 1 ? me : s, rep))
                FAIL("req: host start after the kernel: block %d", s);
        shmem_barrier_all();
    }
    shmem_barrier_all();
    shmemx_req_free(req);
    CK(cudaFree(bad));
    shmem_free(dst);
    shmem_free(src);
}

static void phase_req(shmemx_dev_t d)
{
    req_run(d, 0, REQ_DEV, 1000, SHMEM_TEAM_WORLD, REQ_BY_REQ, 0);
    req_run(d, 1, REQ_HOST, 100, SHMEM_TEAM_WORLD, REQ_BY_REQ, 0);
}

/* A team of one on every PE (the x teams of a split with rows of one). */
static shmem_team_t team_of_one(shmem_team_t *other)
{
    shmem_team_t x = SHMEM_TEAM_INVALID;
    *other = SHMEM_TEAM_INVALID;
    if (shmem_team_split_2d(SHMEM_TEAM_WORLD, 1, NULL, 0, &x, NULL, 0,
                            other) ||
        x == SHMEM_TEAM_INVALID || shmem_team_n_pes(x) != 1) {
        fprintf(stderr, "PE %d: cannot make a team of one\n", shmem_my_pe());
        _exit(1);
    }
    return x;
}

/* Kernel handles (shmemx_req_device). By default every handle is in proxy
 * mode. With SHMEM_DEV_REQ_TRIGGER=1 a team of one is triggered by the
 * kernel's store on every PE, a team sharing this GPU still goes through
 * the proxy, one PE's world is a team of one; SHMEM_PRELAUNCH_DEPTH=0
 * posts nothing ahead: proxy mode. (Trigger mode "hung" on the H100s of
 * 2026-12-06/07 in fill's cudaDeviceSynchronize of req_run's reuse loop,
 * behind the request's instances posted ahead: shmemx_dev(3) BUGS.) */
static void phase_kreq(shmemx_dev_t d)
{
    shmem_team_t rows, one = team_of_one(&rows);
    const char *e = getenv("SHMEM_PRELAUNCH_DEPTH"),
               *t = getenv("SHMEM_DEV_REQ_TRIGGER");
    const uint64_t trig = (e && atoi(e) == 0) || !t || atoi(t) == 0
                              ? SHMEMX_DEV_REQ_PROXY
                              : SHMEMX_DEV_REQ_TRIGGER;
    req_run(d, 0, REQ_SRC_DEV, 1000, one, REQ_BY_HANDLE, trig);
    req_run(d, 1, REQ_DST_DEV, 200, one, REQ_BY_HANDLE, trig);
    req_run(d, 0, REQ_DEV, 200, one, REQ_BY_HANDLE, trig);
    req_run(d, 0, REQ_DEV, 200, SHMEM_TEAM_WORLD, REQ_BY_HANDLE,
            npes == 1 ? trig : 0);
    req_run(d, 1, REQ_HOST, 100, SHMEM_TEAM_WORLD, REQ_BY_HANDLE,
            npes == 1 ? trig : 0);
    shmem_team_destroy(one);
    shmem_team_destroy(rows);
}

/* ------------------------------------------------------------ badpe */

__global__ void k_badpe(shmemx_dev_t d, uint64_t *dst)
{
    shmemx_dev_uint64_p(d, dst, 1, d.npes);
}

static void badpe(shmemx_dev_t d)
{
    uint64_t *dst = (uint64_t *)shmemx_malloc_device(8);
    shmem_barrier_all();
    if (me == npes - 1) {
        k_badpe<<<1, 1>>>(d, dst);
        cudaError_t e = cudaDeviceSynchronize();
        fprintf(stderr, "dev_api badpe: PE %d: the kernel ended: %s\n", me,
                cudaGetErrorString(e));
        exit(e == cudaSuccess ? 0 : 3);
    }
    /* The others wait for the launcher to end the job. */
    for (;;)
        sleep(1);
}

/* ------------------------------------------------------------ hang */

__global__ void k_hang(shmemx_dev_t d, uint64_t *sig)
{
    shmemx_dev_signal_wait_until(d, sig, SHMEM_CMP_GE, 1);
}

static void hang(shmemx_dev_t d)
{
    uint64_t *sig = (uint64_t *)shmemx_malloc_device(8);
    zero(sig, 8);
    shmem_barrier_all();
    k_hang<<<1, 1>>>(d, sig);
    CK(cudaGetLastError());
    shmem_barrier_all();
    if (me == 0) {
        printf("ready\n");
        fflush(stdout);
    }
    CK(cudaDeviceSynchronize()); /* until a PE is killed */
    FAIL("hang: the kernel returned");
}

/* ------------------------------------------------------------ coll */

/* fcollectmem / alltoallmem / broadcastmem from a kernel (#31): one
 * block of 128 threads; the form is thread 0's one-thread call, warp 0's
 * _warp or the block's _block. Each round the block writes fresh source data, calls,
 * and checks every byte of dest (volatile loads: a round two back left
 * the same lines in L1); rounds alternate two destinations. */
__host__ __device__ static inline unsigned char cpat(int from, int to,
                                                    int round, size_t k)
{
    return (unsigned char)(k * 7 + (k >> 9) + from * 31 + to * 57 +
                           round * 13 + 1);
}

enum { CF_THREAD, CF_WARP, CF_BLOCK, NCF };
static const char *cf_name[NCF] = {"", "_warp", "_block"};

/* kind: 0 fcollectmem, 1 alltoallmem, 2 broadcastmem (root: the round
 * modulo npes). */
__global__ void k_coll(shmemx_dev_t d, int form, int kind, unsigned char *src,
                       unsigned char *dst0, unsigned char *dst1, size_t n,
                       int rounds, int round0, unsigned long long *bad)
{
    const unsigned t = threadIdx.x;
    const int a2a = kind == 1;
    for (int r = 0; r < rounds; r++) {
        const int round = round0 + r, root = round % d.npes;
        unsigned char *dst = r % 2 ? dst1 : dst0;
        for (size_t i = t; i < (a2a ? n * d.npes : n); i += blockDim.x)
            src[i] = cpat(d.me, a2a ? (int)(i / n) : 0, round, i % n);
        __syncthreads();
        /* The routine of this kind in the form SFX ("", _warp, _block). */
#define K_COLL_CALL(SFX)                                                       \
    do {                                                                       \
        if (kind == 2)                                                         \
            shmemx_dev_broadcastmem##SFX(d, dst, src, n, root);                \
        else if (a2a)                                                          \
            shmemx_dev_alltoallmem##SFX(d, dst, src, n);                       \
        else                                                                   \
            shmemx_dev_fcollectmem##SFX(d, dst, src, n);                       \
    } while (0)
        if (form == CF_THREAD && t == 0)
            K_COLL_CALL();
        else if (form == CF_WARP && t < 32)
            K_COLL_CALL(_warp);
        else if (form == CF_BLOCK)
            K_COLL_CALL(_block);
#undef K_COLL_CALL
        __syncthreads();
        for (size_t i = t; i < n * (kind == 2 ? 1 : d.npes); i += blockDim.x)
            if (((volatile unsigned char *)dst)[i] !=
                cpat(kind == 2 ? root : (int)(i / n), a2a ? d.me : 0, round,
                     i % n))
                atomicAdd(bad, 1ull);
        __syncthreads();
    }
}

static void phase_coll(shmemx_dev_t d)
{
    const size_t max = 64u << 10;
    const size_t sizes[] = {8, 1024, d.store_max + 8, max};
    const int rounds = 10;
    unsigned char *src = (unsigned char *)shmemx_malloc_device(max * npes);
    unsigned char *dd[2] = {
        (unsigned char *)shmemx_malloc_device(max * npes),
        (unsigned char *)shmemx_malloc_device(max * npes)};
    unsigned char *hd[2] = {(unsigned char *)shmem_malloc(max * npes),
                            (unsigned char *)shmem_malloc(max * npes)};
    unsigned long long *bad, hbad;
    if (!src || !dd[0] || !dd[1] || !hd[0] || !hd[1]) {
        FAIL("coll: allocation failed");
        return;
    }
    CK(cudaMalloc(&bad, sizeof(*bad)));
    int round = 0;
    static const char *const kname[3] = {"fcollectmem", "alltoallmem",
                                         "broadcastmem"};
    for (int where = 0; where < 2; where++)
        for (int form = 0; form < NCF; form++)
            for (int kind = 0; kind < 3; kind++)
                for (size_t si = 0; si < sizeof(sizes) / sizeof(*sizes);
                     si++) {
                    unsigned char **dst = where ? hd : dd;
                    CK(cudaMemset(bad, 0, sizeof(*bad)));
                    shmem_barrier_all();
                    k_coll<<<1, 128>>>(d, form, kind, src, dst[0], dst[1],
                                       sizes[si], rounds, round, bad);
                    CK(cudaGetLastError());
                    CK(cudaDeviceSynchronize());
                    CK(cudaMemcpy(&hbad, bad, sizeof(hbad),
                                  cudaMemcpyDefault));
                    if (hbad)
                        FAIL("coll: %s%s of %zu bytes into the %s heap: "
                             "%llu bytes wrong in %d rounds",
                             kname[kind], cf_name[form], sizes[si],
                             where ? "host" : "device", hbad, rounds);
                    round += rounds;
                }
    shmem_barrier_all();
    CK(cudaFree(bad));
    shmem_free(hd[1]);
    shmem_free(hd[0]);
    shmem_free(dd[1]);
    shmem_free(dd[0]);
    shmem_free(src);
}

/* ------------------------------------------------------------ main */

static const struct {
    const char *name;
    void (*fn)(shmemx_dev_t);
} phases[] = {
    {"rma", phase_rma},       {"signal", phase_signal},
    {"pg", phase_pg},         {"amo", phase_amo},
    {"stress", phase_stress}, {"barrier", phase_barrier},
    {"group", phase_group},   {"graph", phase_graph},
    {"req", phase_req},       {"kreq", phase_kreq},
    {"coll", phase_coll},     {"bigself", phase_bigself},
};

int main(int argc, char **argv)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1) {
        printf("SKIP: dev_api: no CUDA driver or GPU\n");
        return 77;
    }
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    shmemx_dev_t d;
    shmemx_dev_get(&d);
    const char *rs = getenv("DEVAPI_STREAM");
    if (rs && !strcmp(rs, "nonblocking"))
        CK(cudaStreamCreateWithFlags(&req_stream, cudaStreamNonBlocking));
    CK(cudaHostAlloc((void **)&req_at, sizeof(*req_at), cudaHostAllocMapped));
    CK(cudaStreamCreateWithFlags(&copy_stream, cudaStreamNonBlocking));
    if (argc > 1 && !strcmp(argv[1], "hang")) {
        hang(d);
        return 1;
    }
    if (argc > 1 && !strcmp(argv[1], "badpe")) {
        badpe(d);
        return 1;
    }
    for (size_t i = 0; i < sizeof(phases) / sizeof(*phases); i++) {
        int run = argc < 2;
        for (int a = 1; a < argc; a++)
            run |= !strcmp(argv[a], phases[i].name);
        if (!run)
            continue;
        int before = fails;
        phases[i].fn(d);
        if (me == 0)
            printf("dev_api %-8s %d PEs: %s\n", phases[i].name, npes,
                   fails == before ? "ok" : "FAILED");
        fflush(stdout);
    }
    int all = 0;
    static int f;
    f = fails;
    /* Fail if any PE failed. */
    int *sym = (int *)shmem_malloc(sizeof(int));
    *sym = 0;
    shmem_barrier_all();
    shmem_int_atomic_add(sym, f, 0);
    shmem_barrier_all();
    all = me == 0 ? *sym : 0;
    shmem_free(sym);
    shmem_finalize();
    if (me == 0)
        printf("%s: dev_api, %d PEs\n", all ? "FAIL" : "PASS", npes);
    return fails ? 1 : 0;
}
