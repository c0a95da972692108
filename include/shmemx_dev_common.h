/*
 * What the two device APIs have in common, whatever the vendor: the
 * segments a symmetric address may be in and the types of the device p/g
 * (plain C), and the constants of the device routines. Included by
 * shmemx_cuda.h (NVIDIA: a FIFO to the host proxy) and shmemx_hip.h (AMD:
 * SDMA packets written by the kernel), whose routines are written once in
 * shmemx_dev_routines.h over each vendor's thin layer. See shmemx_dev(3).
 */
#ifndef SHMEMX_DEV_COMMON_H
#define SHMEMX_DEV_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include <shmem/types.h>

/* Segments a symmetric address may be in: host heap, static data, device
 * heap (on the hsa backend, the GPU pool's where the job has one). */
#define SHMEMX_DEV_SEGS 3

/* The types of the device p/g: the RMA types of shmem_p but long double,
 * X(C type, TYPENAME). */
#define SHMEMX_DEV_TYPES_RMA(X)                                                \
    SHMEM_TYPES_RMA_FLOATS(X)                                                  \
    SHMEM_TYPES_RMA_INTEGERS(X)

/* Where device routines are compiled (a CUDA or HIP kernel, or HIP's host
 * producer): the comparisons of signal_wait_until and the signal
 * operations, the same values as shmem.h's. */
#if defined(__CUDACC__) || defined(__HIPCC__) ||                               \
    defined(SHMEMX_HIP_HOST_PRODUCER)
#ifndef SHMEM_CMP_EQ
#define SHMEM_CMP_EQ 0
#define SHMEM_CMP_NE 1
#define SHMEM_CMP_GT 2
#define SHMEM_CMP_LE 3
#define SHMEM_CMP_LT 4
#define SHMEM_CMP_GE 5
#endif
#ifndef SHMEM_SIGNAL_SET
#define SHMEM_SIGNAL_SET 0
#define SHMEM_SIGNAL_ADD 1
#endif
#endif

/* How the device routines take the handle: by reference in C++ (CUDA,
 * HIP), so that a kernel's handle is read where it is, among the kernel's
 * parameters (the constant bank), never copied: a by-value copy that is
 * indexed at run time (the handle's table rows, shmemx_dev__ld_base) is
 * made in local memory, 300 bytes per call (H100: put 8 B + quiet paid
 * for it). Callers pass the handle the same way either way; in C (the
 * HIP host producer) by value. */
#ifdef __cplusplus
#define SHMEMX_DEV_H const shmemx_dev_t &
#else
#define SHMEMX_DEV_H shmemx_dev_t
#endif

#endif
