/*
 * dmashmem: the profiling interface. Every shmem_NAME routine is a weak
 * alias of pshmem_NAME; a tool defines shmem_NAME, does its work and calls
 * pshmem_NAME.
 */
#ifndef PSHMEM_H
#define PSHMEM_H

#include <shmem.h>

#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

#define SHMEM_FN(name) pshmem_##name
#include <shmem/api.h>
#undef SHMEM_FN

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#endif /* PSHMEM_H */
