/* PTX of kernels.cu (nvcc -ptx -arch=compute_75; .version lowered to 7.0
 * so that drivers older than the toolkit still JIT it). Loaded lazily with
 * cuModuleLoadData the first time a SIGNAL_ADD targets device memory. */
#ifndef DSM_CUDA_KERNELS_PTX_H
#define DSM_CUDA_KERNELS_PTX_H
static const char dsm_cuda_kernels_ptx[] =
    ".version 7.0\n"
    ".target sm_75\n"
    ".address_size 64\n"
    ".visible .entry dsm_signal_add(\n"
    "  .param .u64 dsm_signal_add_param_0,\n"
    "  .param .u64 dsm_signal_add_param_1\n"
    ")\n"
    "{\n"
    "  .reg .b64 %rd<5>;\n"
    "  ld.param.u64 %rd1, [dsm_signal_add_param_0];\n"
    "  ld.param.u64 %rd2, [dsm_signal_add_param_1];\n"
    "  cvta.to.global.u64 %rd3, %rd1;\n"
    "  atom.global.sys.add.u64 %rd4, [%rd3], %rd2;\n"
    "  membar.sys;\n"
    "  ret;\n"
    "}\n";
#endif
