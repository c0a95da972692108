/*
 * CPU-side routines on device-heap words (#11): an AMO, a wait, a test, a
 * signal operation, signal_fetch, a blocking put_signal whose signal word is
 * on the device heap, and a strided put into the device heap. Each must
 * either work through the engines (the strided put: data checked) or end
 * the job with one line naming the routine (the others: the CPU cannot
 * operate on GPU memory). Before the path table they dereferenced GPU
 * memory from the CPU and died with SIGSEGV.
 *
 *   gpu_devword MODE     (run by gpu_devword.sh on 2 PEs)
 *
 * MODE: amo, wait, test, signal_add, signal_fetch, put_signal: expected to
 * fail (the script checks the message and exit status 1); iput: expected
 * to pass; ahead_sync: a persistent fcollect over a team of one, handed
 * to kernels in TRIGGER mode (its instances posted ahead on CUDA
 * streams), then cuCtxSynchronize, which
 * does not return before shmemx_req_free (shmemx_req(3), NOTES): the
 * launcher's --timeout ends the job, and each PE must say why in one line
 * though it waits outside the library (a test of the device API hung
 * that way with no word, 2026-12-07); stream_stall: PE 0 calls an
 * on-stream fcollect of 64 B that no other PE calls and synchronises the
 * stream: the library's kernel (the LL form, or the two-phase one with
 * SHMEM_STREAM_LL_MAX=0) must give up after SHMEM_DEV_STALL_TIMEOUT with
 * one line naming the routine and the PE it waits for, and the job must
 * fail.
 */
#include "test/gpu/gpu_util.h"
#define MP_ALARM_S 40
#include "test/mp/mp.h"

#include <shmemx.h>
#include <shmemx_cuda.h> /* shmemx_req_device (plain C part) */

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "iput";
    gpu_skip_unless_gpu("gpu_devword");
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes(), peer = (me + 1) % n;
    uint64_t *dw = shmemx_malloc_device(64 * sizeof(uint64_t));
    if (!dw)
        MP_FAIL("shmemx_malloc_device returned NULL");
    uint64_t *hsig = shmem_malloc(sizeof(uint64_t));
    uint64_t src[64];
    for (int i = 0; i < 64; i++)
        src[i] = (uint64_t)me * 1000 + (uint64_t)i;
    shmem_barrier_all();
    if (!strcmp(mode, "amo")) {
        shmem_uint64_atomic_add(dw, 1, peer);
    } else if (!strcmp(mode, "wait")) {
        shmem_uint64_wait_until(dw, SHMEM_CMP_EQ, 1);
    } else if (!strcmp(mode, "test")) {
        (void)shmem_uint64_test(dw, SHMEM_CMP_EQ, 1);
    } else if (!strcmp(mode, "signal_add")) {
        shmem_signal_add(dw, 1, peer);
    } else if (!strcmp(mode, "signal_fetch")) {
        (void)shmem_signal_fetch(dw);
    } else if (!strcmp(mode, "put_signal")) {
        shmem_putmem_signal(hsig, src, 8, dw, 1, SHMEM_SIGNAL_SET, peer);
    } else if (!strcmp(mode, "iput")) {
        /* Every other word of the peer's device buffer, by the engines. */
        shmem_uint64_iput(dw, src, 2, 1, 32, peer);
        shmem_quiet();
        shmem_barrier_all();
        uint64_t got[64];
        GPU_CK(gcu.MemcpyDtoH(got, DP(dw), sizeof(got)));
        int from = (me + n - 1) % n;
        for (int i = 0; i < 32; i++)
            if (got[2 * i] != (uint64_t)from * 1000 + (uint64_t)i)
                MP_FAIL("iput: word %d is %llu, expected %llu", 2 * i,
                        (unsigned long long)got[2 * i],
                        (unsigned long long)from * 1000 + (unsigned long long)i);
        /* And back: a strided get from the peer's device buffer. */
        uint64_t back[32];
        shmem_uint64_iget(back, dw, 1, 2, 32, peer);
        for (int i = 0; i < 32; i++)
            if (back[i] != (uint64_t)me * 1000 + (uint64_t)i)
                MP_FAIL("iget: element %d is %llu", i,
                        (unsigned long long)back[i]);
    } else if (!strcmp(mode, "ahead_sync")) {
        /* A team of one each, its request handed to kernels in TRIGGER
         * mode (gpu_devword.sh sets SHMEM_DEV_REQ_TRIGGER=1): the device
         * API's proxy keeps its instances posted ahead (a team with
         * another PE on this GPU posts nothing ahead, nor does a team of
         * one's request on the host). */
        shmem_team_t one, rest;
        shmemx_req_t req;
        if (shmem_team_split_2d(SHMEM_TEAM_WORLD, 1, NULL, 0, &one, NULL, 0,
                                &rest) ||
            shmem_team_n_pes(one) != 1)
            MP_FAIL("ahead_sync: no team of one");
        if (shmemx_fcollectmem_init(one, dw + 8, dw, 8, &req))
            MP_FAIL("ahead_sync: shmemx_fcollectmem_init");
        if (!shmemx_req_device(req))
            MP_FAIL("ahead_sync: shmemx_req_device returned NULL");
        if (me == 0) {
            printf("ready\n");
            fflush(stdout);
        }
        gpu_ctx();
        GPU_CK(gcu.CtxSynchronize()); /* behind the instances: no return */
        fprintf(stderr, "gpu_devword: PE %d: cuCtxSynchronize returned while "
                "a request keeps instances posted ahead\n", me);
        shmemx_req_free(req);
        _exit(3);
    } else if (!strcmp(mode, "stream_stall")) {
        if (me == 0) {
            CUstream s;
            gpu_ctx();
            GPU_CK(gcu.StreamCreate(&s, CU_STREAM_NON_BLOCKING));
            shmemx_fcollectmem_on_stream(SHMEM_TEAM_WORLD, dw + 8, dw, 64, s);
            CUresult rc = gcu.StreamSynchronize(s);
            fprintf(stderr, "gpu_devword: PE 0: the stream's synchronisation "
                    "returned %d\n", (int)rc);
            _exit(rc == CUDA_SUCCESS ? 3 : 1);
        }
        sleep(30); /* never calls: the launcher ends it when PE 0 fails */
        _exit(4);
    } else {
        MP_FAIL("unknown mode %s", mode);
    }
    shmem_barrier_all();
    shmem_finalize();
    return 0;
}
