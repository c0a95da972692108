// Device code of the cuda backend: the one command with no copy-engine
// form. Compiled to PTX (kernels_ptx.h) and JIT-loaded with
// cuModuleLoadData, so the library itself needs no nvcc at build time.
// Regenerate: nvcc -ptx -arch=compute_75 -o kernels.ptx kernels.cu
extern "C" __global__ void dsm_signal_add(unsigned long long *word,
                                          unsigned long long value)
{
    // System scope: the word may be read by the host or another GPU.
    atomicAdd_system(word, value);
    __threadfence_system();
}
