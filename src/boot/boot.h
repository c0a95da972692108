/*
 * Bootstrap: how a PE learns who it is and meets the other PEs before any
 * symmetric memory exists. Three back ends fill one ops table:
 *   launcher  the unix-socket server run by shmem_launcher (boot_launcher.c)
 *   pmix      a PMIx server (srun --mpi=pmix, mpirun, prterun)  (boot_pmix.c)
 *   single    a program started alone is a 1-PE job             (boot_single.c)
 * The runtime calls these only at init, finalize and on fatal errors, never
 * on a data path.
 */
#ifndef DSM_BOOT_H
#define DSM_BOOT_H

#include <stddef.h>
#include <stdint.h>

#include "common/status.h"

/* Largest value one key may hold. */
#define DSM_BOOT_VAL_MAX 4096
#define DSM_BOOT_KEY_MAX 64

typedef struct dsm_boot_info {
    int rank;      /* this PE, 0..size-1 */
    int size;      /* PEs in the job */
    int node_rank; /* this PE's index among the PEs of its node */
    int node_size; /* PEs on this node */
    int node_id;   /* dense index of this node, 0..num_nodes-1 */
    int num_nodes;
    char how[96]; /* how the layout was learnt, for SHMEM_INFO ("" if
                   * there is nothing to say) */
} dsm_boot_info_t;

typedef struct dsm_boot_ops {
    size_t size; /* sizeof(struct dsm_boot_ops), checked at selection */
    const char *name;
    /* 1 when this back end applies to the current process (launcher env
     * present, PMIx server reachable, ...). Never fails the job. */
    int (*detect)(void);
    dsm_status_t (*init)(dsm_boot_info_t *info);
    /* Orderly end: the PE has finalized. After this the launcher treats the
     * PE's exit as normal whatever order PEs leave in. */
    void (*fini)(void);
    /* Publish a value under key for this rank; visible to other ranks after
     * the next fence(). */
    dsm_status_t (*put)(const char *key, const void *val, size_t len);
    /* Collective: makes every put() issued before it visible, then returns
     * on every rank (it is also a barrier). */
    dsm_status_t (*fence)(void);
    /* Read rank's value for key (published before the last fence). *len in:
     * capacity, out: size. */
    dsm_status_t (*get)(int rank, const char *key, void *val, size_t *len);
    dsm_status_t (*barrier)(void);
    /* File descriptor passing between PEs of one node. put_fd keeps its own
     * duplicate; get_fd returns a new descriptor the caller owns. Valid
     * after the next fence(). */
    dsm_status_t (*put_fd)(const char *key, int fd);
    dsm_status_t (*get_fd)(int rank, const char *key, int *fd);
    /* End the whole job with status; msg (may be NULL) is printed once by
     * whoever ends the job. Does not return. */
    void (*abort)(int status, const char *msg) __attribute__((noreturn));
    /* A descriptor that becomes readable (EOF) when the launcher is gone,
     * or -1. The runtime's proxy watches it so that orphaned PEs end. */
    int (*watch_fd)(void);
} dsm_boot_ops_t;

extern const dsm_boot_ops_t dsm_boot_launcher_ops;
extern const dsm_boot_ops_t dsm_boot_single_ops;
#ifdef DSM_HAVE_PMIX
extern const dsm_boot_ops_t dsm_boot_pmix_ops;
#endif

/* Pick a back end (SHMEM_BOOTSTRAP forces one) and initialise it. */
dsm_status_t dsm_boot_select(const char *forced, const dsm_boot_ops_t **ops,
                             dsm_boot_info_t *info);

#endif /* DSM_BOOT_H */
