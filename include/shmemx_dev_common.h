/*
 * What the two device APIs have in common, whatever the vendor: the
 * segments a symmetric address may be in and the types of the device p/g.
 * Included by shmemx_cuda.h (NVIDIA: a FIFO to the host proxy) and
 * shmemx_hip.h (AMD: SDMA packets written by the kernel); plain C: the
 * one function is a macro each vendor header expands with its own
 * qualifiers. See shmemx_dev(3).
 */
#ifndef SHMEMX_DEV_COMMON_H
#define SHMEMX_DEV_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include <shmem/types.h>

/* Segments a symmetric address may be in: host heap, static data, device
 * heap (empty on the hsa backend, which has no device heap yet). */
#define SHMEMX_DEV_SEGS 3

/* The types of the device p/g: the RMA types of shmem_p but long double,
 * X(C type, TYPENAME). */
#define SHMEMX_DEV_TYPES_RMA(X)                                                \
    SHMEM_TYPES_RMA_FLOATS(X)                                                  \
    SHMEM_TYPES_RMA_INTEGERS(X)

/* The store path's copy (loads and stores, 8 bytes at a time where both
 * sides and the length allow), defined by each vendor header with its own
 * function qualifiers: SHMEMX_DEV__DEFINE_COPY(SHMEMX_DEV_FN). */
#define SHMEMX_DEV__DEFINE_COPY(QUAL)                                          \
    QUAL void shmemx_dev__copy(void *dst, const void *src, size_t n)           \
    {                                                                          \
        if ((((uintptr_t)dst | (uintptr_t)src | n) & 7) == 0) {                \
            volatile uint64_t *d_ = (volatile uint64_t *)dst;                  \
            const volatile uint64_t *s_ = (const volatile uint64_t *)src;      \
            for (size_t i = 0; i < n / 8; i++)                                 \
                d_[i] = s_[i];                                                 \
        } else {                                                               \
            volatile char *d_ = (volatile char *)dst;                          \
            const volatile char *s_ = (const volatile char *)src;              \
            for (size_t i = 0; i < n; i++)                                     \
                d_[i] = s_[i];                                                 \
        }                                                                      \
    }

#endif
