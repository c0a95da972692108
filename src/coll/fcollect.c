/*
 * AllGather: shmem_fcollect (the same count on every PE) and shmem_collect
 * (counts may differ), typed and mem forms, over a team, as chains of
 * chain.c and chain_run.c. Member i's block lands at dest + i * nbytes
 * (fcollect) or at dest + the sum of the counts of members 0..i-1
 * (collect).
 *
 * collect learns the counts from the ready signals themselves: the k-th
 * collect's ready from a PE with c bytes carries base + 2c + 1 and its
 * arrival base + 2c + 2, where base is the pair's count before the call, so
 * both still only grow, and the receiver decodes c from whichever of the
 * two it reads (parity). No scratch memory and no extra round.
 */
#include "coll/chain_int.h"

#include <string.h>

static const char fc_routine[] = "shmem_fcollect";
static const char co_routine[] = "shmem_collect";

/* In place (my block already at its place in dest) needs no local copy;
 * any other overlap of source with dest is erroneous. */
static size_t local_len(const char *routine, const char *mine,
                        const char *src, size_t nbytes, const char *dest,
                        size_t total)
{
    if (mine == src)
        return 0;
    if (src < dest + total && dest < src + nbytes)
        dsm_rt_fatal(routine, "source overlaps dest (only source == dest + "
                     "offset of this PE's block is allowed)");
    return nbytes;
}

/* Eager (coll.h): my block into every peer's eager area, then each
 * peer's block out of mine, in the order they were sent. */
static void fc_eager(dsm_team_t *t, char *dest, const char *src,
                     size_t nbytes, size_t local)
{
    const int n = t->size, me = t->my_idx;
    for (int i = 1; i < n; i++)
        dsm_eager_send(t, (me + i) % n, src, nbytes);
    dsm_eager_notify(t);
    if (local)
        memcpy(dest + (size_t)me * nbytes, src, nbytes);
    for (int i = 1; i < n; i++) {
        int m = (me - i + n) % n;
        dsm_eager_recv(t, m, dest + (size_t)m * nbytes, nbytes);
    }
}

void dsm_coll_fcollect(dsm_team_t *t, void *dest, const void *src,
                       size_t nbytes, const char *routine, size_t esize)
{
    const int n = t->size, me = t->my_idx;
    char *mine = (char *)dest + (size_t)me * nbytes;
    const dsm_call_t *call =
        DSM_CALL(routine, DSM_CALL_FCOLLECT, esize, nbytes, 0, 0);
    dsm_plan_t p;

    dsm_coll_tune_init();
    if (!nbytes) {
        dsm_coll_note(t, call);
        return;
    }
    /* Before any overlap test: a dest too small for n blocks usually
     * reaches into the next allocation, which is often source. */
    dsm_rt_check_alloc(fc_routine, "dest", dest, nbytes * (size_t)n);
    dsm_rt_check_alloc(fc_routine, "source", src, nbytes);
    /* Neither buffer in GPU memory: the CPU may move the blocks. */
    const int host = !dsm_mem_device_heap(dest) && !dsm_mem_device_heap(src);
    if (n == 1) {
        dsm_coll_self_copy(mine, src, nbytes, 1, 0, 0, fc_routine);
        return;
    }
    const size_t local = local_len(fc_routine, mine, src, nbytes, dest,
                                   nbytes * (size_t)n);
    const dsm_algo_t algo =
        dsm_coll_pick(t, DSM_COLL_AG, nbytes, 0, host, 0, fc_routine);
    pthread_mutex_lock(&t->lock);
    dsm_coll_call(t, call);
    if (algo == DSM_ALGO_EAGER) {
        fc_eager(t, dest, src, nbytes, local);
        pthread_mutex_unlock(&t->lock);
        return;
    }
    dsm_plan_fcollect(&p, t, algo, fc_routine, dest, src, nbytes, local,
                      t->store->peers);
    dsm_chain_run(&p);
    if (t->coll->done)
        t->coll->done(); /* src is the caller's again */
    pthread_mutex_unlock(&t->lock);
}

void dsm_coll_collect(dsm_team_t *t, void *dest, const void *src,
                      size_t nbytes, const char *routine, size_t esize)
{
    const int n = t->size, me = t->my_idx;
    dsm_plan_t p;
    size_t off = 0, total = nbytes;
    int i;

    dsm_coll_tune_init();
    dsm_rt_check_alloc(co_routine, "source", src, nbytes);
    if (n == 1) {
        dsm_rt_check_alloc(co_routine, "dest", dest, nbytes);
        dsm_coll_self_copy(dest, src, nbytes, 1, 0, 0, co_routine);
        return;
    }
    pthread_mutex_lock(&t->lock);
    /* The record only: the counts ride on the readies (X = the count). */
    dsm_coll_call(t, DSM_CALL(routine, DSM_CALL_COLLECT, esize, nbytes, 0, 0));
    p = (dsm_plan_t){
        .t = t,
        .kind = DSM_COLL_AG,
        /* Each member picks by its own count; never eager, which
         * needs every member's size (the planner gives direct). */
        .algo = dsm_coll_pick(t, DSM_COLL_AG, nbytes, 0,
                              dsm_coll_host(dest, src), DSM_PICK_MIXED,
                              co_routine),
        .routine = co_routine,
        .mixed = 1, /* the variant follows each member's own count */
        .np = n - 1,
        .peer = t->store->peers,
    };
    /* Ready, carrying my count. */
    for (i = 0; i < n - 1; i++) {
        dsm_part_t *x = &p.peer[i];
        int m = (me + 1 + i) % n;
        uint64_t *s = &t->sent[dsm_team_sig_idx(t, DSM_CHAN_DMA, m)];
        *x = (dsm_part_t){.m = m, .src = src, .len = nbytes, .count = 1};
        x->rv_out = *s + 2 * (uint64_t)nbytes + 1;
        x->av_out = *s = x->rv_out + 1;
        x->ready_sent = 1;
        dsm_chain_signal(t, m, x->rv_out, 1);
    }
    /* Every peer's count, from its ready (or already its arrival). */
    for (i = 0; i < n - 1; i++) {
        dsm_part_t *x = &p.peer[i];
        uint64_t *r = &t->recv[dsm_team_sig_idx(t, DSM_CHAN_DMA, x->m)];
        const uint64_t *in = x->in = dsm_chain_in(t, x->m);
        dsm_coll_wait_ge(t, in, *r + 1);
        uint64_t d = __atomic_load_n(in, __ATOMIC_ACQUIRE) - *r;
        uint64_t c = (d - 1) / 2; /* ready: 2c + 1, arrival: 2c + 2 */
        x->base_in = *r;
        x->x_in = c;
        x->rv_in = *r + 2 * c + 1;
        x->av_in = *r = x->rv_in + 1;
        total += c;
        if (x->m < me)
            off += c;
    }
    /* Every member learnt the same total: each fails here, before its
     * blocks leave, when dest cannot hold them all. */
    dsm_rt_check_alloc(co_routine, "dest", dest, total);
    char *mine = (char *)dest + off;
    p.local = (dsm_part_t){.m = me, .src = src, .dst = mine, .count = 1,
                           .len = nbytes ? local_len(co_routine, mine, src,
                                                     nbytes, dest, total)
                                         : 0};
    for (i = 0; i < n - 1; i++) {
        dsm_part_t *x = &p.peer[i];
        x->dst = nbytes ? t->coll->peer_dst(co_routine, t, x->m, mine, nbytes,
                                            &x->by_path)
                        : NULL;
    }
    dsm_chain_run(&p);
    if (t->coll->done)
        t->coll->done(); /* src is the caller's again */
    pthread_mutex_unlock(&t->lock);
}

/* ------------------------------------------------------------ entry points */

int pshmem_fcollectmem(shmem_team_t team, void *dest, const void *source,
                       size_t nelems)
{
    dsm_coll_fcollect(dsm_team_check(team, "shmem_fcollectmem"), dest,
                      source, nelems, "shmem_fcollectmem", 1);
    return 0;
}
DSM_WEAK(fcollectmem)

int pshmem_collectmem(shmem_team_t team, void *dest, const void *source,
                      size_t nelems)
{
    dsm_coll_collect(dsm_team_check(team, "shmem_collectmem"), dest, source,
                     nelems, "shmem_collectmem", 1);
    return 0;
}
DSM_WEAK(collectmem)

#define DSM_AG_T(T, N)                                                         \
    int pshmem_##N##_fcollect(shmem_team_t team, T *dest, const T *source,     \
                              size_t nelems)                                   \
    {                                                                          \
        static const char routine[] = "shmem_" #N "_fcollect";                 \
        dsm_coll_fcollect(dsm_team_check(team, routine), dest, source,         \
                          DSM_NBYTES(nelems, sizeof(T), routine), routine,     \
                          sizeof(T));                                          \
        return 0;                                                              \
    }                                                                          \
    DSM_WEAK(N##_fcollect)                                                     \
    int pshmem_##N##_collect(shmem_team_t team, T *dest, const T *source,      \
                             size_t nelems)                                    \
    {                                                                          \
        static const char routine[] = "shmem_" #N "_collect";                  \
        dsm_coll_collect(dsm_team_check(team, routine), dest, source,          \
                         DSM_NBYTES(nelems, sizeof(T), routine), routine,      \
                         sizeof(T));                                           \
        return 0;                                                              \
    }                                                                          \
    DSM_WEAK(N##_collect)
SHMEM_TYPES_RMA(DSM_AG_T)
#undef DSM_AG_T
