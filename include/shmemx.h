/*
 * dmashmem extensions to OpenSHMEM. Names start with shmemx_; each has a
 * pshmemx_ profiling twin.
 */
#ifndef SHMEMX_H
#define SHMEMX_H

#include <shmem.h>

#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

#define SHMEM_FN(name) shmemx_##name
#include <shmem/apix.h>
#undef SHMEM_FN

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#endif /* SHMEMX_H */
