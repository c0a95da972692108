/*
 * Broadcast: nbytes from the root member's source to dest on every member,
 * in one of four ways (SHMEM_BCAST_ALGORITHM):
 *
 *   eager  (small, host memory, one node; auto's choice there) the root
 *          copies source into every member's eager area and returns; each
 *          member copies it out (eager.c).
 *   pull   the root signals "source ready" to every member; each member
 *          copies from the root's source through the shared mapping and
 *          signals "done" back, so the root may reuse its source. Copies
 *          run in parallel on the members' cores.
 *   push   each member signals "dest ready"; the root posts one chain on
 *          an engine queue: COPY to every member's dest, each followed by
 *          a SIGNAL of that member's word, one doorbell for all; members
 *          wait for their signal. The root's cores stay free.
 *   bcast  push with two destinations per BCAST command (one read of the
 *          source feeds two members), as DMA-Latte pairs its AllGather.
 *
 * The chains hold no WAIT (the root waits for the members on the CPU before
 * posting), so one shared queue serves every team without one team's chain
 * ever blocking another's. An engine-delivered SIGNAL stores an absolute
 * count, so the root waits for its chain to complete before it signals
 * that member again on the same channel.
 */
#include "coll/chain.h"
#include "rma.h"

#include <stdlib.h>
#include <string.h>

enum { BC_AUTO, BC_PULL, BC_PUSH, BC_BCAST, BC_EAGER };
static const char *const bc_names[] = {"auto", "pull", "push", "bcast",
                                       "eager"};

static int bc_alg;
static int bc_engine_native; /* the backend's engines reach host memory */
static dsm_sdma_queue_t *bc_queue;
static pthread_mutex_t bc_queue_lock = PTHREAD_MUTEX_INITIALIZER;

/* auto: pull up to this size (all members copy at once); above, engines
 * push when the backend has its own (non-CPU) engines. */
#define BC_AUTO_PULL_MAX (256u << 10)

dsm_status_t dsm_coll_bcast_init(void)
{
    const char *a = dsm_env.bcast_algorithm;
    unsigned i;

    bc_alg = -1;
    for (i = 0; i < DSM_ARRAY_SIZE(bc_names); i++)
        if (!strcmp(a, bc_names[i]))
            bc_alg = (int)i;
    if (bc_alg < 0) {
        dsm_log_error("shmem_init: SHMEM_BCAST_ALGORITHM=%s: use auto, "
                      "eager, pull, push or bcast", a);
        return DSM_ERR_INVAL;
    }
    /* The cpu backend's engines are threads on the same cores as the PEs:
     * there pulling in parallel always wins (2 cores, 2 PEs, us per call:
     * 4 KiB pull 0.46, push 20, bcast 46; 1 MiB pull 231, push 706, bcast
     * 554; 4 PEs 1 MiB pull 520, push 2425, bcast 2007). */
    bc_engine_native =
        !(dsm_sdma_caps(dsm_rt.sdma) & DSM_SDMA_CAP_HOST_CORES);
    bc_queue = NULL;
    return DSM_OK;
}

void dsm_coll_bcast_fini(void)
{
    /* The queue belongs to the sdma layer, which frees it at close. */
    bc_queue = NULL;
}

static dsm_sdma_queue_t *chain_queue(const char *routine)
{
    pthread_mutex_lock(&bc_queue_lock);
    if (!bc_queue) {
        dsm_status_t st = dsm_sdma_queue_create(dsm_rt.sdma, 0, &bc_queue);
        if (st != DSM_OK)
            dsm_rt_fatal(routine, "cannot create a DMA chain queue: %s",
                         dsm_status_str(st));
    }
    pthread_mutex_unlock(&bc_queue_lock);
    return bc_queue;
}

static void bc_pull(dsm_team_t *t, void *dest, const void *src, size_t n,
                    int root, int root_too, const char *routine)
{
    int m;
    /* GPU memory: the copies go to the copy engines (RMA gets: no SM, no
     * CPU load of device memory). */
    int dev = !dsm_coll_host(dest, src);

    if (t->my_idx == root) {
        for (m = 0; m < t->size; m++)
            if (m != root)
                dsm_team_signal(t, DSM_CHAN_CPU, m);
        if (root_too && dest != src && dev)
            dsm_rma_get(DSM_CTX_DEFAULT, dest, src, n, dsm_rt.me, routine);
        else if (root_too && dest != src)
            memmove(dest, src, n);
        for (m = 0; m < t->size; m++)
            if (m != root)
                dsm_team_wait(t, DSM_CHAN_CPU, m);
    } else if (!dsm_coll_pe_mapped(t->pes[root]) || dev) {
        dsm_team_wait(t, DSM_CHAN_CPU, root);
        dsm_rma_get(DSM_CTX_DEFAULT, dest, src, n, t->pes[root], routine);
        dsm_team_signal(t, DSM_CHAN_CPU, root);
    } else {
        const char *r = dsm_rt_xlate(routine, src, n, t->pes[root]);
        dsm_team_wait(t, DSM_CHAN_CPU, root);
        memcpy(dest, r, n);
        dsm_team_signal(t, DSM_CHAN_CPU, root);
    }
}

static void sig_cmd(dsm_cmd_t *c, dsm_team_t *t, int m)
{
    const dsm_team_peer_t *d = &t->peer[m];
    memset(c, 0, sizeof(*c));
    c->op = DSM_CMD_SIGNAL;
    c->u.sig.word = dsm_team_peer_sig(t, DSM_CHAN_CPU, m);
    c->u.sig.value = ++t->sent[dsm_team_sig_idx(t, DSM_CHAN_CPU, m)]
                         << DSM_DIG_BITS |
                     t->dig;
    c->wake = d->wake;
    c->wake_app = d->wake_app;
}

static void bc_push(dsm_team_t *t, void *dest, const void *src, size_t n,
                    int root, int root_too, int pairs, const char *routine)
{
    int m, k = 0, pend = -1;

    if (t->my_idx != root) {
        dsm_team_signal(t, DSM_CHAN_CPU, root); /* dest may be written */
        dsm_team_wait(t, DSM_CHAN_CPU, root);   /* it has been */
        return;
    }
    dsm_cmd_t *cmds = calloc(2 * (size_t)t->size, sizeof(dsm_cmd_t));
    if (!cmds)
        dsm_rt_fatal(routine, "out of memory for %d commands", 2 * t->size);
    for (m = 0; m < t->size; m++) {
        if (m == root)
            continue;
        char *d = dsm_rt_xlate(routine, dest, n, t->pes[m]);
        dsm_team_wait(t, DSM_CHAN_CPU, m);
        if (pairs && pend >= 0) {
            /* Second destination of the pending BCAST command. */
            cmds[k - 1].op = DSM_CMD_BCAST;
            cmds[k - 1].u.copy.dst2 = d;
            sig_cmd(&cmds[k++], t, pend);
            sig_cmd(&cmds[k++], t, m);
            pend = -1;
            continue;
        }
        cmds[k].op = DSM_CMD_COPY;
        cmds[k].u.copy.src = src;
        cmds[k].u.copy.dst = d;
        cmds[k].u.copy.len = n;
        k++;
        if (pairs) {
            pend = m;
            continue;
        }
        sig_cmd(&cmds[k++], t, m);
    }
    if (pend >= 0)
        sig_cmd(&cmds[k++], t, pend);
    /* The root's own copy: GPU memory is never touched by the CPU, so it
     * rides the same chain (one doorbell; the member slot of the root left
     * room for it); host memory is the CPU's memmove, parallel with the
     * engines. */
    int host = dsm_coll_host(dest, src);
    if (root_too && dest != src && !host) {
        cmds[k].op = DSM_CMD_COPY;
        cmds[k].u.copy.src = src;
        cmds[k].u.copy.dst = dest;
        cmds[k].u.copy.len = n;
        k++;
    }
    if (k) {
        dsm_sdma_queue_t *q = chain_queue(routine);
        dsm_sdma_queue_wait(q, dsm_sdma_post(q, cmds, (size_t)k));
    }
    if (root_too && dest != src && host)
        memmove(dest, src, n);
    free(cmds);
}

void dsm_coll_broadcast(dsm_team_t *t, void *dest, const void *src,
                        size_t nbytes, int root, int root_too,
                        const char *routine, size_t esize)
{
    const dsm_call_t *call =
        DSM_CALL(routine, DSM_CALL_BCAST, esize, nbytes, root, root_too);
    int alg = bc_alg;

    if (DSM_UNLIKELY(root < 0 || root >= t->size))
        dsm_rt_fatal(routine, "PE_root %d out of range (the team has %d "
                     "PE%s: 0..%d)", root, t->size, t->size == 1 ? "" : "s",
                     t->size - 1);
    if (!nbytes) {
        dsm_coll_note(t, call);
        return;
    }
    /* dest is written on every member but a 1.4 root; source read at the
     * root only. */
    if (root_too || t->my_idx != root)
        dsm_rt_check_alloc(routine, "dest", dest, nbytes);
    if (t->my_idx == root)
        dsm_rt_check_alloc(routine, "source", src, nbytes);
    if (t->size == 1) {
        if (root_too && dest != src && !dsm_coll_host(dest, src))
            dsm_rma_get(DSM_CTX_DEFAULT, dest, src, nbytes, dsm_rt.me, routine);
        else if (root_too && dest != src)
            memmove(dest, src, nbytes);
        return;
    }
    /* Small, host memory, one node: the root copies into the members'
     * eager areas and returns (eager.c). */
    if ((alg == BC_AUTO || alg == BC_EAGER) && dsm_eager_ok(t, nbytes) &&
        dsm_coll_host(dest, src)) {
        pthread_mutex_lock(&t->lock);
        dsm_eager_bcast(t, dest, src, nbytes, root, root_too, call);
        pthread_mutex_unlock(&t->lock);
        return;
    }
    if (alg == BC_AUTO || alg == BC_EAGER || !dsm_team_mapped(t) ||
        !dsm_coll_host(dest, src))
        /* across nodes, or GPU memory: members get */
        alg = bc_engine_native && nbytes > BC_AUTO_PULL_MAX && dsm_team_mapped(t)
                  ? BC_BCAST
                  : BC_PULL;
    pthread_mutex_lock(&t->lock);
    dsm_coll_call(t, call);
    if (alg == BC_PULL)
        bc_pull(t, dest, src, nbytes, root, root_too, routine);
    else
        bc_push(t, dest, src, nbytes, root, root_too, alg == BC_BCAST,
                routine);
    pthread_mutex_unlock(&t->lock);
}

/* ------------------------------------------------------------ entry points */

int pshmem_broadcastmem(shmem_team_t team, void *dest, const void *source,
                        size_t nelems, int PE_root)
{
    dsm_coll_broadcast(dsm_team_check(team, "shmem_broadcastmem"), dest,
                       source, nelems, PE_root, 1, "shmem_broadcastmem", 1);
    return 0;
}
DSM_WEAK(broadcastmem)

#define DSM_BCAST_T(T, N)                                                      \
    int pshmem_##N##_broadcast(shmem_team_t team, T *dest, const T *source,    \
                               size_t nelems, int PE_root)                     \
    {                                                                          \
        static const char routine[] = "shmem_" #N "_broadcast";                \
        dsm_coll_broadcast(dsm_team_check(team, routine), dest, source,        \
                           DSM_NBYTES(nelems, sizeof(T), routine), PE_root, 1, \
                           routine, sizeof(T));                                \
        return 0;                                                              \
    }                                                                          \
    DSM_WEAK(N##_broadcast)
SHMEM_TYPES_RMA(DSM_BCAST_T)
#undef DSM_BCAST_T
