/* Does a stream gated on a word keep a kernel from being launched or from
 * running? (#12: kernel-triggered persistent requests.) A stream waits
 * (cuStreamWaitValue64, or with "batch" one cuStreamBatchMemOp as the
 * cuda backend posts it) on a host (pinned, mapped) or device word, then
 * copies and writes a flag; then a first kernel is launched on another
 * non-blocking stream and, with "kstore", stores the word itself. Prints
 * one line: whether the launch returned, the kernel ran, the gate opened.
 * Run under CUDA_MODULE_LOADING=LAZY and EAGER by run-devapi.sh.
 *
 *   gate_kprobe host|dev [kstore|none] [wait|batch]
 */
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>

static char line[256];

static void on_alarm(int sig)
{
    (void)sig;
    ssize_t n = write(1, line, strlen(line));
    (void)n;
    _exit(0);
}

__global__ void k_flag(volatile unsigned long long *f, volatile unsigned long long *trig)
{
    *f = 1;
    if (trig) { __threadfence_system(); *trig = 1; }
}

int main(int argc, char **argv)
{
    const char *where = argc > 1 ? argv[1] : "host";
    int kstore = argc > 2 && !strcmp(argv[2], "kstore");
    int batch = argc > 3 && !strcmp(argv[3], "batch");
    cudaFree(0);
    unsigned long long *hw, *flag, *copyd; CUdeviceptr dw = 0;
    cudaHostAlloc((void **)&hw, 64, cudaHostAllocMapped); hw[0] = 0;
    cudaHostAlloc((void **)&flag, 64, cudaHostAllocMapped); flag[0] = 0;
    cudaMalloc((void **)&copyd, 64);
    if (!strcmp(where, "dev")) { cudaMalloc((void **)&dw, 8); cudaMemset((void *)dw, 0, 8); }
    else dw = (CUdeviceptr)hw;
    CUstream gs; cuStreamCreate(&gs, CU_STREAM_NON_BLOCKING);
    if (batch) {
        CUstreamBatchMemOpParams op[2];
        memset(op, 0, sizeof(op));
        op[0].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_64;
        op[0].writeValue.address = (CUdeviceptr)(flag + 6);
        op[0].writeValue.value64 = 1;
        op[1].waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_64;
        op[1].waitValue.address = dw;
        op[1].waitValue.value64 = 1;
        op[1].waitValue.flags = CU_STREAM_WAIT_VALUE_GEQ;
        cuStreamBatchMemOp(gs, 2, op, 0);
    } else {
        cuStreamWaitValue64(gs, dw, 1, CU_STREAM_WAIT_VALUE_GEQ);
    }
    cuMemcpyDtoHAsync(flag + 4, (CUdeviceptr)copyd, 8, gs);
    cuStreamWriteValue64(gs, (CUdeviceptr)(flag + 2), 7, 0);
    cudaStream_t ks; cudaStreamCreateWithFlags(&ks, cudaStreamNonBlocking);
    snprintf(line, sizeof(line), "gate_kprobe %s %s %s, modules %s: the "
             "launch did not return in 5 s\n", where, kstore ? "kstore" : "none",
             batch ? "batch" : "wait", getenv("CUDA_MODULE_LOADING") ?
             getenv("CUDA_MODULE_LOADING") : "default");
    signal(SIGALRM, on_alarm);
    alarm(5);
    k_flag<<<1, 1, 0, ks>>>(flag, kstore ? (unsigned long long *)dw : NULL);
    alarm(0);
    for (int i = 0; i < 3000 && !(flag[0] && (!kstore || flag[2] == 7)); i++) usleep(1000);
    printf("gate_kprobe %s %s %s, modules %s: launch returned, kernel %s, "
           "gate %s\n", where, kstore ? "kstore" : "none",
           batch ? "batch" : "wait", getenv("CUDA_MODULE_LOADING") ?
           getenv("CUDA_MODULE_LOADING") : "default",
           flag[0] ? "ran" : "did not run in 3 s",
           flag[2] == 7 ? "opened" : "still closed");
    fflush(stdout);
    _exit(0);
}
