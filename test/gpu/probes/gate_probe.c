/*
 * gate_probe: does work gated behind cuStreamWaitValue64 on one
 * non-blocking stream hold up a synchronous cuMemcpyHtoD of the same
 * process on the legacy stream? Each case runs in a child with a 5 s
 * alarm; the child opens the gate itself afterwards (or dies), so the
 * GPU is never left waiting. Prints one line per case: "ok" or "HANG".
 * Built and run by test/gpu/run-on-device.sh (probe); not part of make
 * check. Links -lcuda.
 */
#include <cuda.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define CK(x)                                                                 \
    do {                                                                      \
        CUresult r_ = (x);                                                    \
        if (r_ != CUDA_SUCCESS) {                                             \
            fprintf(stderr, "%s: error %d\n", #x, (int)r_);                   \
            _exit(2);                                                         \
        }                                                                     \
    } while (0)

enum { AFTER_NONE, AFTER_D2D, AFTER_D2H, AFTER_WRITE, AFTER_HOSTFN,
       AFTER_BATCHOP, AFTER_BATCHCPY, AFTER_N };

static void hostfn(void *arg)
{
    (void)arg;
}

/* pair: the gate in this process, the HtoD in another (hold = 1: set
 * up the gate, sleep 6 s, open it; hold = 2: only the HtoD). */
static int hold;
/* Arguments: dtoh (the synchronous copy goes device to host), devword
 * (the gate waits on a word in device memory, opened by a stream write on
 * another stream), ownstream (the copy is async on a non-blocking stream
 * of its own, then that stream is synchronised), quick (after none, d2h
 * and d2d only, pinned, one wait). */
static int dtoh, devword, ownstream, quick;

static void one(int after, int pinned_src, int nwait)
{
    CUdevice dev;
    CUcontext ctx;
    CUstream s, s2;
    CUdeviceptr d1, d2, wd, gw;
    uint64_t *word, *hdst;
    char *pg = malloc(1 << 20), *pin;
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
    CK(cuMemAlloc(&d1, 1 << 20));
    CK(cuMemAlloc(&d2, 1 << 20));
    CK(cuMemHostAlloc((void **)&word, 4096, CU_MEMHOSTALLOC_DEVICEMAP));
    CK(cuMemHostAlloc((void **)&hdst, 1 << 20, CU_MEMHOSTALLOC_DEVICEMAP));
    CK(cuMemHostAlloc((void **)&pin, 1 << 20, CU_MEMHOSTALLOC_DEVICEMAP));
    CK(cuMemHostGetDevicePointer(&wd, word, 0));
    memset(word, 0, 4096);
    memset(pg, 1, 1 << 20);
    gw = wd;
    if (devword) {
        CK(cuMemAlloc(&gw, 64));
        CK(cuMemsetD8(gw, 0, 64));
    }
    for (int k = 0; hold != 2 && k < nwait; k++) {
        CK(cuStreamWaitValue64(s, gw, (cuuint64_t)k + 1,
                               CU_STREAM_WAIT_VALUE_GEQ));
        if (after == AFTER_D2D)
            CK(cuMemcpyAsync(d2, d1, 1024, s));
        else if (after == AFTER_D2H)
            CK(cuMemcpyDtoHAsync(hdst, d1, 1024, s));
        else if (after == AFTER_WRITE)
            CK(cuStreamWriteValue64(s, wd + 8, (cuuint64_t)k + 1, 0));
        else if (after == AFTER_HOSTFN)
            CK(cuLaunchHostFunc(s, hostfn, NULL));
        else if (after == AFTER_BATCHOP) {
            CUstreamBatchMemOpParams op[2];
            memset(op, 0, sizeof(op));
            op[0].operation = CU_STREAM_MEM_OP_WAIT_VALUE_64;
            op[0].waitValue.address = wd + 16;
            op[0].waitValue.value64 = (cuuint64_t)k + 1;
            op[0].waitValue.flags = CU_STREAM_WAIT_VALUE_GEQ;
            op[1].operation = CU_STREAM_MEM_OP_WRITE_VALUE_64;
            op[1].writeValue.address = wd + 8;
            op[1].writeValue.value64 = (cuuint64_t)k + 1;
            CK(cuStreamBatchMemOp(s, 2, op, 0));
        } else if (after == AFTER_BATCHCPY) {
            CUdeviceptr ds[2] = {d2, d2 + 4096}, ss[2] = {d1, d1 + 8192};
            size_t ls[2] = {1024, 1024}, fi = 0;
            CUmemcpyAttributes at;
            memset(&at, 0, sizeof(at));
            at.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
            CK(cuMemcpyBatchAsync(ds, ss, ls, 2, &at, &fi, 1, s));
        }
    }
    if (hold == 1) {
        sleep(6);
        if (devword)
            CK(cuStreamWriteValue64(s2, gw, (cuuint64_t)nwait, 0));
        __atomic_store_n(word, (uint64_t)nwait, __ATOMIC_RELEASE);
        __atomic_store_n(word + 2, (uint64_t)nwait, __ATOMIC_RELEASE);
        CK(cuStreamSynchronize(s));
        _exit(0);
    }
    alarm(4);
    void *hp = pinned_src ? (void *)pin : (void *)pg;
    if (ownstream) {
        if (dtoh)
            CK(cuMemcpyDtoHAsync(hp, d1 + 4096, 1024, s2));
        else
            CK(cuMemcpyHtoDAsync(d1 + 4096, hp, 1024, s2));
        CK(cuStreamSynchronize(s2));
    } else {
        if (dtoh)
            CK(cuMemcpyDtoH(hp, d1 + 4096, 1024));
        else
            CK(cuMemcpyHtoD(d1 + 4096, hp, 1024));
        CK(cuStreamSynchronize(NULL));
    }
    alarm(0);
    printf("ok\n");
    fflush(stdout);
    if (devword) {
        alarm(4);
        CK(cuStreamWriteValue64(s2, gw, (cuuint64_t)nwait, 0));
        CK(cuStreamSynchronize(s2));
        alarm(0);
    }
    __atomic_store_n(word, (uint64_t)nwait, __ATOMIC_RELEASE);
    __atomic_store_n(word + 2, (uint64_t)nwait, __ATOMIC_RELEASE);
    CK(cuStreamSynchronize(s));
    _exit(0);
}

int main(int argc, char **argv)
{
    int pair = 0;
    for (int i = 1; i < argc; i++) {
        pair |= !strcmp(argv[i], "pair");
        dtoh |= !strcmp(argv[i], "dtoh");
        devword |= !strcmp(argv[i], "devword");
        ownstream |= !strcmp(argv[i], "ownstream");
        quick |= !strcmp(argv[i], "quick");
    }
    static const char *an[] = {"none",    "d2d copy", "d2h copy", "write",
                               "hostfn",  "batchop",  "batchcpy"};
    for (int after = 0; after < (quick ? AFTER_D2H + 1 : AFTER_N); after++)
        for (int pinned = quick; pinned < (pair ? 1 : 2); pinned++)
            for (int nw = 1; nw <= (pair || quick ? 1 : 2); nw++) {
                printf("gate_probe: %s wait x%d then %-8s | %s%s %s %-8s: ",
                       devword ? "dev word" : "host word", nw, an[after],
                       ownstream ? "async+sync " : "", dtoh ? "DtoH" : "HtoD",
                       dtoh ? "to" : "from", pinned ? "pinned" : "pageable");
                fflush(stdout);
                pid_t g = -1, p;
                if (pair) {
                    g = fork();
                    if (g == 0) {
                        hold = 1;
                        one(after, pinned, nw);
                    }
                    sleep(1);
                    hold = 2;
                }
                p = fork();
                if (p == 0)
                    one(after, pinned, nw);
                int st, gst;
                waitpid(p, &st, 0);
                if (pair)
                    waitpid(g, &gst, 0);
                if (WIFSIGNALED(st))
                    printf("HANG (signal %d)\n", WTERMSIG(st));
                else if (WEXITSTATUS(st))
                    printf("error\n");
            }
    return 0;
}
