/*
 * Persistent collectives' request (shmemx_req(3)), shared by
 * src/coll/persistent.c (requests, their chains and the host's start, wait
 * and free) and the device API (src/devapi/kreq.c: kernel handles,
 * shmemx_req_device, the trigger mode and the proxy thread's re-posting).
 * This header is the device API's way into coll (test/layers): the device
 * API sits above coll, so coll reaches its part of a request only through
 * the operations it registers (dsm_coll_kernel_ops_t, below).
 */
#ifndef DSM_COLL_PERSISTENT_INT_H
#define DSM_COLL_PERSISTENT_INT_H

#include "coll/chain.h"

#include <shmemx_cuda.h> /* shmemx_dev_req_t (plain C part) */

_Static_assert(SHMEMX_DEV_REQ_MAXQ == DSM_CHAIN_MAXQ,
               "a kernel handle has a done word per chain queue");

struct dsm_coll_req {
    /* My engines WAIT(*trigger >= k). A library-owned word (common/words.h):
     * a GPU stream waits on its page by address until finalize, so it must
     * not be memory the allocator can return and hand out again. */
    uint64_t *trigger;
    dsm_team_t *t;                    /* the private copy of the team */
    dsm_plan_t plan;
    dsm_sdma_queue_t *q[DSM_CHAIN_MAXQ];
    int depth;
    int nslots;                          /* depth, or depth + 1 (dsync) */
    uint64_t posted, started, completed; /* instance numbers, from 1 */
    dsm_inst_t *inst;                    /* [nslots], instance k at k % nslots */
    uint64_t *arr;                       /* [nslots][np] */
    uint64_t *rdy;                       /* [nslots][np] (HOST) */
    const char *routine;
    uint32_t magic;
    int at_wait;          /* team not all mapped: run at wait (see above) */
    int lazy;             /* nothing posted ahead: each instance at start */
    int ahead;            /* counted as posted ahead where that holds work
                             (dsm_persist_ahead) */
    void *dest;
    const void *src;
    size_t nbytes;
    struct dsm_coll_req *prev, *next; /* live list (finalize) */
    /* Kernel handle (shmemx_req_device): kd in device memory (what
     * kernels read; the host writes it through copy_sync), kh its
     * mirror in pinned host memory (what the host's threads read), and 1
     * in kmode once their counters drive the request (TRIGGER mode; then
     * started, completed above are unused until release). They exist
     * from init for requests a kernel could trigger, so their chains end
     * with the done signals (plan.kdone, plan.kdone_host). dtrig: the
     * device trigger word the chains of a team of one in TRIGGER mode
     * wait on instead of *trigger (&kd->trig), NULL otherwise. */
    shmemx_dev_req_host_t *kh;
    shmemx_dev_req_t *kd;
    uint64_t kh_gpu; /* GPU address of kh */
    uint64_t *dtrig;
    int kmode;
    int khanded;                      /* shmemx_req_device returned kh */
    pthread_mutex_t plock;            /* posting (proxy thread and host) */
    struct dsm_coll_req *knext;       /* kernel-triggered list */
    uint64_t kseen[3], kseen_ns;      /* SHMEM_DEBUG stall report */
};

#define REQ_MAGIC 0x5e9c0a11u

/* persistent.c */
/* Post instance posted + 1 behind the request's trigger. */
void dsm_persist_post_next(struct dsm_coll_req *r);
/* Start instance k: ready values (HOST), then the trigger. */
void dsm_persist_fire(struct dsm_coll_req *r, uint64_t k);
/* A chain queue for engine index i, from the free list or new. */
dsm_sdma_queue_t *dsm_persist_queue_get(int i, const char *routine);
/* r's instances are now posted ahead (at init, or by a kernel handle in
 * TRIGGER mode): where that holds up some work of the program (cuda
 * backend; shmemx_req(3), NOTES), PE 0 says so once per job and r counts
 * for the stall handler's line (runtime/stall.h) until its release. */
void dsm_persist_ahead(struct dsm_coll_req *r);
/* The request behind a handle, or the job fails naming routine. */
struct dsm_coll_req *dsm_persist_req_check(shmemx_req_t req,
                                           const char *routine);
/* Start (wait 0) or wait for (wait 1) a request on behalf of a GPU
 * kernel (a FIFO HOST slot, on the device API's proxy thread): the
 * request is checked and errors end the job naming routine. */
void dsm_persist_req_kernel(shmemx_req_t req, int wait, const char *routine);

/* The device API's part of a request (src/devapi/kreq.c), registered by
 * it when the library is loaded; until then (and in a library without
 * it) requests have no kernel handle: kh_alloc fails, and the others are
 * unreachable, since only the device API sets kh, dtrig and kmode. */
typedef struct dsm_coll_kernel_ops {
    size_t size; /* sizeof(dsm_coll_kernel_ops_t) */
    /* A kernel handle for r (PROXY mode until shmemx_req_device): 0 when
     * made, -1 where the backend cannot give kernels words. */
    int (*kh_alloc)(struct dsm_coll_req *r);
    void (*kh_free)(struct dsm_coll_req *r);
    /* Open r's gates up to k in the device trigger word (r->dtrig). */
    void (*kd_trigger)(struct dsm_coll_req *r, uint64_t k);
    /* The host's start and wait of a request in TRIGGER mode (r->kmode). */
    int (*kstart)(struct dsm_coll_req *r);
    void (*kwait)(struct dsm_coll_req *r);
    /* Back from TRIGGER mode to the host's counters (release). */
    void (*kmode_end)(struct dsm_coll_req *r);
} dsm_coll_kernel_ops_t;
void dsm_coll_kernel_register(const dsm_coll_kernel_ops_t *ops);

#endif /* DSM_COLL_PERSISTENT_INT_H */
