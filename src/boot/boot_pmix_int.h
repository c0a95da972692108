/*
 * Private to the PMIx bootstrap, which is split over boot_pmix.c (init,
 * fini, job data, node layout, abort), boot_pmix_kv.c (key-value exchange
 * and barriers) and boot_pmix_fd.c (descriptor passing): the state they
 * share and the functions one of them calls in another.
 */
#ifndef DSM_BOOT_PMIX_INT_H
#define DSM_BOOT_PMIX_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include <pmix.h>

#include "boot/boot.h"
#include "boot/pmix_fd.h"

typedef struct fd_ent {
    struct fd_ent *next;
    int fd; /* our duplicate, kept until fini */
    char key[DSM_BOOT_KEY_MAX + 1];
} fd_ent_t;

typedef struct dsm_pmix_state {
    bool up;
    pmix_proc_t me;
    int size;
    int *node_of;    /* dense node id of every rank */
    bool finalizing; /* lost-connection events are expected from here on */
    size_t evhdlr;
    bool evhdlr_set;
    /* Re-initialization (OpenSHMEM 1.5: shmem_init after the last
     * shmem_finalize): fini leaves PMIx initialized (dormant; PMIx_Finalize
     * runs at exit). Finalizing and starting a new session failed: a PE's
     * PMIx_Finalize while a peer already fences for its next init fails
     * that fence (PARTIAL SUCCESS, 4 PEs under mpirun), and with that
     * fence retried, 6 of 12 re-inits across the simulated cluster's
     * nodes still failed (INVALID-ARG from a later fence, Open MPI 4.1).
     * The price: a program that _exit()s after shmem_finalize skips
     * PMIx_Finalize, which mpirun calls an improper exit
     * (shmem_finalize(3)). Each init after the first publishes its keys
     * under "<key>@<epoch>", so no value of an earlier one is read. */
    bool dormant;
    bool exit_hook; /* pmix_at_exit registered */
    unsigned epoch;

    /* descriptor server */
    pthread_mutex_t lock;
    fd_ent_t *fds;
    int lfd;              /* listening socket, -1 until the first put_fd */
    int stop_rd, stop_wr; /* fini closes stop_wr: the thread ends */
    pthread_t thr;
    bool thr_up;
    fdsrv_addr_t addr;
} dsm_pmix_state_t;

/* The bootstrap's state (defined in boot_pmix.c); its files call it px. */
extern dsm_pmix_state_t dsm_pmix_px;
#define px dsm_pmix_px

/* boot_pmix.c */
/* DSM_ERR_INVAL (logged) unless key has 1..DSM_BOOT_KEY_MAX characters. */
dsm_status_t dsm_pmix_check_key(const char *routine, const char *key);
/* *p = rank (or PMIX_RANK_WILDCARD) of our namespace. */
void dsm_pmix_load_proc(pmix_proc_t *p, pmix_rank_t rank);

/* boot_pmix_kv.c */
/* PMIx_Put (+ commit) of a byte object under an already prefixed key. */
dsm_status_t dsm_pmix_put_scoped(pmix_scope_t scope, const char *key,
                                 const void *val, size_t len);
/* rank's bytes for an already prefixed key; wait: up to 10 s for it. */
dsm_status_t dsm_pmix_get_raw(int rank, const char *k, void *val, size_t *len,
                              int wait);
/* The put op: val under "dsm." + key, for every PE. */
dsm_status_t dsm_pmix_put(const char *key, const void *val, size_t len);
/* The fence op: PMIx_Fence collecting the data put. */
dsm_status_t dsm_pmix_fence(void);
/* The get op: rank's value of key, waited for if not published yet. */
dsm_status_t dsm_pmix_get(int rank, const char *key, void *val, size_t *len);
/* The barrier op: PMIx_Fence without data. */
dsm_status_t dsm_pmix_barrier(void);

/* boot_pmix_fd.c */
/* Ends the descriptor server, if any, and closes the descriptors put. */
void dsm_pmix_fdsrv_stop(void);
/* The put_fd op: serve a duplicate of fd under key (starts the server). */
dsm_status_t dsm_pmix_put_fd(const char *key, int fd);
/* The get_fd op: key's descriptor from a PE of this node. */
dsm_status_t dsm_pmix_get_fd(int rank, const char *key, int *fd);

#endif /* DSM_BOOT_PMIX_INT_H */
