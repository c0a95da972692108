/*
 * dmashmem extensions (shmemx_), included by shmemx.h with SHMEM_FN(n) =
 * shmemx_##n and by pshmemx.h with pshmemx_##n. No include guard on purpose.
 */
#ifndef SHMEM_FN
#error "include <shmemx.h> or <pshmemx.h>, not <shmem/apix.h>"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Seconds since an arbitrary point in the past (monotonic clock). */
double SHMEM_FN(wtime)(void);

#ifdef __cplusplus
}
#endif
