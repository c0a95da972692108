/*
 * What the two device APIs have in common, whatever the vendor: the
 * segments a symmetric address may be in and the types of the device p/g.
 * Included by shmemx_cuda.h (NVIDIA: a FIFO to the host proxy) and
 * shmemx_hip.h (AMD: SDMA packets written by the kernel); plain C, no
 * device code. See shmemx_dev(3).
 */
#ifndef SHMEMX_DEV_COMMON_H
#define SHMEMX_DEV_COMMON_H

/* Segments a symmetric address may be in: host heap, static data, device
 * heap (empty on the hsa backend, which has no device heap yet). */
#define SHMEMX_DEV_SEGS 3

/* The types of the device p/g: the RMA types of shmem_p but long double,
 * X(C type, TYPENAME). */
#define SHMEMX_DEV_TYPES_RMA(X)                                                \
    X(float, float)                                                            \
    X(double, double)                                                          \
    X(char, char)                                                              \
    X(signed char, schar)                                                      \
    X(short, short)                                                            \
    X(int, int)                                                                \
    X(long, long)                                                              \
    X(long long, longlong)                                                     \
    X(unsigned char, uchar)                                                    \
    X(unsigned short, ushort)                                                  \
    X(unsigned int, uint)                                                      \
    X(unsigned long, ulong)                                                    \
    X(unsigned long long, ulonglong)                                           \
    X(int8_t, int8)                                                            \
    X(int16_t, int16)                                                          \
    X(int32_t, int32)                                                          \
    X(int64_t, int64)                                                          \
    X(uint8_t, uint8)                                                          \
    X(uint16_t, uint16)                                                        \
    X(uint32_t, uint32)                                                        \
    X(uint64_t, uint64)                                                        \
    X(size_t, size)                                                            \
    X(ptrdiff_t, ptrdiff)

#endif
