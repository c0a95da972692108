/*
 * dmashmem: the OpenSHMEM type tables, as X-macros.
 *
 * Every typed routine family (put/get, atomics, waits, reductions, the C11
 * _Generic selections, the pshmem_ profiling names and the man page aliases)
 * is expanded from these lists, so a type is added in exactly one place.
 * Each entry is X(C type, TYPENAME) with TYPENAME as in the spec tables.
 */
#ifndef SHMEM_TYPES_H
#define SHMEM_TYPES_H

#include <stddef.h>
#include <stdint.h>

/* Table "Standard RMA Types and Names" (24 types), in the table's order:
 * its two binary floating types, long double, then the rest. The parts
 * without long double also make the device API's p/g types
 * (shmemx_dev_common.h: GPUs have no long double). */
#define SHMEM_TYPES_RMA(X)                                                     \
    SHMEM_TYPES_RMA_FLOATS(X)                                                  \
    X(long double, longdouble)                                                 \
    SHMEM_TYPES_RMA_INTEGERS(X)
#define SHMEM_TYPES_RMA_FLOATS(X)                                              \
    X(float, float)                                                            \
    X(double, double)
#define SHMEM_TYPES_RMA_INTEGERS(X)                                            \
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

/* Table "Standard AMO Types and Names" (12 types). */
#define SHMEM_TYPES_AMO_STD(X)                                                 \
    X(int, int)                                                                \
    X(long, long)                                                              \
    X(long long, longlong)                                                     \
    X(unsigned int, uint)                                                      \
    X(unsigned long, ulong)                                                    \
    X(unsigned long long, ulonglong)                                           \
    X(int32_t, int32)                                                          \
    X(int64_t, int64)                                                          \
    X(uint32_t, uint32)                                                        \
    X(uint64_t, uint64)                                                        \
    X(size_t, size)                                                            \
    X(ptrdiff_t, ptrdiff)

/* Table "Extended AMO Types and Names": standard plus float and double. */
#define SHMEM_TYPES_AMO_EXT(X)                                                 \
    SHMEM_TYPES_AMO_STD(X)                                                     \
    X(float, float)                                                            \
    X(double, double)

/* Table "Bitwise AMO Types and Names" (7 types). */
#define SHMEM_TYPES_AMO_BIT(X)                                                 \
    X(unsigned int, uint)                                                      \
    X(unsigned long, ulong)                                                    \
    X(unsigned long long, ulonglong)                                           \
    X(int32_t, int32)                                                          \
    X(int64_t, int64)                                                          \
    X(uint32_t, uint32)                                                        \
    X(uint64_t, uint64)

/* Point-to-point synchronization: the standard AMO types, plus short and
 * unsigned short that 1.5 deprecated but old codes still wait on. */
#define SHMEM_TYPES_P2P(X)                                                     \
    X(short, short)                                                            \
    X(unsigned short, ushort)                                                  \
    SHMEM_TYPES_AMO_STD(X)

/* Team reductions: AND/OR/XOR (integer types). */
#define SHMEM_TYPES_REDUCE_BIT(X)                                              \
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
    X(short, short)                                                            \
    X(int, int)                                                                \
    X(long, long)                                                              \
    X(long long, longlong)

/* Team reductions: MAX/MIN (every RMA type). */
#define SHMEM_TYPES_REDUCE_MINMAX(X) SHMEM_TYPES_RMA(X)

/* Team reductions: SUM/PROD (RMA types plus the two complex types). */
#define SHMEM_TYPES_REDUCE_ARITH(X)                                            \
    SHMEM_TYPES_RMA(X)                                                         \
    X(double _Complex, complexd)                                               \
    X(float _Complex, complexf)

/* Deprecated active-set reductions (shmem_TYPENAME_OP_to_all). */
#define SHMEM_TYPES_TO_ALL_BIT(X)                                              \
    X(short, short)                                                            \
    X(int, int)                                                                \
    X(long, long)                                                              \
    X(long long, longlong)

#define SHMEM_TYPES_TO_ALL_MINMAX(X)                                           \
    SHMEM_TYPES_TO_ALL_BIT(X)                                                  \
    X(float, float)                                                            \
    X(double, double)                                                          \
    X(long double, longdouble)

#define SHMEM_TYPES_TO_ALL_ARITH(X)                                            \
    SHMEM_TYPES_TO_ALL_MINMAX(X)                                               \
    X(double _Complex, complexd)                                               \
    X(float _Complex, complexf)

/* Sized RMA: X(bits, bytes, C type of that width). 128 moves two uint64s. */
#define SHMEM_SIZES(X)                                                         \
    X(8, 1, uint8_t)                                                           \
    X(16, 2, uint16_t)                                                         \
    X(32, 4, uint32_t)                                                         \
    X(64, 8, uint64_t)                                                         \
    X(128, 16, uint64_t)

#endif /* SHMEM_TYPES_H */
