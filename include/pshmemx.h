/*
 * dmashmem: profiling names of the shmemx_ extensions.
 */
#ifndef PSHMEMX_H
#define PSHMEMX_H

#include <shmemx.h>

#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

#define SHMEM_FN(name) pshmemx_##name
#include <shmem/apix.h>
#undef SHMEM_FN

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#endif /* PSHMEMX_H */
