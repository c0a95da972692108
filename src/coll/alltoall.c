/*
 * AlltoAll: shmem_alltoall (block j of my source to member j's dest at my
 * index) and shmem_alltoalls (the same with element strides), typed and
 * mem forms, over a team, as chains of chain.c and chain_run.c.
 *
 * alltoalls with strides moves nelems separate elements per peer: one COPY
 * command each on the chain variants, or CPU copies on the direct path,
 * which auto takes in host memory for elements up to
 * dsm_coll_tune.strided_cpu_max bytes (a command costs more than a small
 * element; PERFORMANCE.md; the planner, plan.c).
 */
#include "coll/chain_int.h"

#include <string.h>

static void check_overlap(const char *routine, const char *dest,
                          const char *src, size_t dspan, size_t sspan)
{
    if (src < dest + dspan && dest < src + sspan)
        dsm_rt_fatal(routine, "source and dest overlap (not allowed for "
                     "alltoall)");
}

/* Eager (coll.h): block m of source into member m's eager area, then each
 * member's block for me out of mine. Strided blocks are packed into one
 * message of count elements of len bytes. */
static void a2a_eager(dsm_team_t *t, char *dest, const char *src,
                      size_t len, size_t count, ptrdiff_t dstr,
                      ptrdiff_t sstr, size_t dblk, size_t sblk)
{
    const int n = t->size, me = t->my_idx;
    const size_t bytes = len * count;
    char buf[DSM_EAGER_LINES_MAX / 2 * DSM_EAGER_LINE_DATA]
        __attribute__((aligned(16)));

    for (int i = 1; i < n; i++) {
        const int m = (me + i) % n;
        const char *s = src + (size_t)m * sblk;
        if (count > 1) {
            dsm_coll_copy_elems(buf, (ptrdiff_t)len, s, sstr, len, count);
            s = buf;
        }
        dsm_eager_send(t, m, s, bytes);
    }
    dsm_eager_notify(t);
    dsm_coll_copy_elems(dest + (size_t)me * dblk, dstr,
                        src + (size_t)me * sblk, sstr, len, count);
    for (int i = 1; i < n; i++) {
        const int m = (me - i + n) % n;
        char *d = dest + (size_t)m * dblk;
        if (count == 1) {
            dsm_eager_recv(t, m, d, bytes);
            continue;
        }
        dsm_eager_recv(t, m, buf, bytes);
        dsm_coll_copy_elems(d, dstr, buf, (ptrdiff_t)len, len, count);
    }
}

static void a2a_run(dsm_team_t *t, char *dest, const char *src,
                    size_t elem, size_t nelems, ptrdiff_t dstr,
                    ptrdiff_t sstr, int strided, const char *routine,
                    const dsm_call_t *call)
{
    const int n = t->size;
    size_t span;
    /* n blocks of nelems elements at the strides must fit a size_t. */
    if (__builtin_mul_overflow(nelems, strided ? (size_t)DSM_MAX(dstr, sstr)
                                               : elem, &span) ||
        __builtin_mul_overflow(span, (size_t)n, &span))
        dsm_rt_fatal(routine, "nelems %zu with strides %td and %td (bytes) "
                     "for %d PEs does not fit a size_t", nelems, dstr, sstr,
                     n);
    /* Bytes of one block as laid out in dest and in source. */
    const size_t dblk = strided ? nelems * (size_t)dstr : nelems * elem;
    const size_t sblk = strided ? nelems * (size_t)sstr : nelems * elem;
    const size_t dlast = strided ? (nelems - 1) * (size_t)dstr + elem : dblk;
    const size_t len = strided ? elem : nelems * elem;
    const size_t count = strided ? nelems : 1;
    dsm_algo_t algo;
    dsm_plan_t p;

    /* The last member's block ends the span (its last element, strided). */
    dsm_rt_check_alloc(routine, "dest", dest, (size_t)(n - 1) * dblk + dlast);
    dsm_rt_check_alloc(routine, "source", src,
                       (size_t)(n - 1) * sblk +
                           (strided ? (nelems - 1) * (size_t)sstr + elem
                                    : sblk));
    /* Neither buffer in GPU memory: the CPU may move the blocks. */
    const int host = !dsm_mem_device_heap(dest) && !dsm_mem_device_heap(src);
    check_overlap(routine, dest, src, dblk * (size_t)n, sblk * (size_t)n);
    if (n == 1) {
        dsm_coll_self_copy(dest, src, len, count, dstr, sstr, routine);
        return;
    }
    algo = dsm_coll_pick(t, DSM_COLL_A2A, len * count, strided ? elem : 0,
                         host, 0, routine);
    pthread_mutex_lock(&t->lock);
    dsm_coll_call(t, call);
    if (algo == DSM_ALGO_EAGER) {
        a2a_eager(t, dest, src, len, count, dstr, sstr, dblk, sblk);
        pthread_mutex_unlock(&t->lock);
        return;
    }
    const dsm_a2a_shape_t shape = {.len = len, .count = count,
                                   .dstr = dstr, .sstr = sstr,
                                   .dblk = dblk, .sblk = sblk,
                                   .dlast = dlast};
    dsm_plan_alltoall(&p, t, algo, routine, dest, src, &shape,
                      t->store->peers);
    dsm_chain_run(&p);
    if (t->coll->done)
        t->coll->done(); /* src is the caller's again */
    pthread_mutex_unlock(&t->lock);
}

void dsm_coll_alltoall(dsm_team_t *t, void *dest, const void *src,
                       size_t nbytes, const char *name, size_t esize)
{
    const dsm_call_t *call =
        DSM_CALL(name, DSM_CALL_ALLTOALL, esize, nbytes, 0, 0);
    dsm_coll_tune_init();
    if (!nbytes) {
        dsm_coll_note(t, call);
        return;
    }
    a2a_run(t, dest, src, 1, nbytes, 1, 1, 0, "shmem_alltoall", call);
}

void dsm_coll_alltoalls(dsm_team_t *t, void *dest, const void *src,
                        ptrdiff_t dst, ptrdiff_t sst, size_t nelems,
                        size_t elem_size, const char *name)
{
    static const char routine[] = "shmem_alltoalls";
    const dsm_call_t *call =
        DSM_CALL(name, DSM_CALL_ALLTOALLS, elem_size, nelems * elem_size,
                 dst, sst);

    dsm_coll_tune_init();
    if (!nelems || !elem_size) {
        dsm_coll_note(t, call);
        return;
    }
    if (dst < 1 || sst < 1)
        dsm_rt_fatal(routine, "strides must be >= 1 (dst %td, sst %td)", dst,
                     sst);
    if (dst > PTRDIFF_MAX / (ptrdiff_t)elem_size ||
        sst > PTRDIFF_MAX / (ptrdiff_t)elem_size)
        dsm_rt_fatal(routine, "strides dst %td, sst %td of %zu-byte elements "
                     "do not fit a ptrdiff_t", dst, sst, elem_size);
    if (dst == 1 && sst == 1) {
        a2a_run(t, dest, src, elem_size, nelems, 1, 1, 0, routine, call);
        return;
    }
    a2a_run(t, dest, src, elem_size, nelems, dst * (ptrdiff_t)elem_size,
            sst * (ptrdiff_t)elem_size, 1, routine, call);
}

/* ------------------------------------------------------------ entry points */

int pshmem_alltoallmem(shmem_team_t team, void *dest, const void *source,
                       size_t nelems)
{
    dsm_coll_alltoall(dsm_team_check(team, "shmem_alltoallmem"), dest, source,
                      nelems, "shmem_alltoallmem", 1);
    return 0;
}
DSM_WEAK(alltoallmem)

int pshmem_alltoallsmem(shmem_team_t team, void *dest, const void *source,
                        ptrdiff_t dst, ptrdiff_t sst, size_t nelems)
{
    dsm_coll_alltoalls(dsm_team_check(team, "shmem_alltoallsmem"), dest,
                       source, dst, sst, nelems, 1, "shmem_alltoallsmem");
    return 0;
}
DSM_WEAK(alltoallsmem)

#define DSM_A2A_T(T, N)                                                        \
    int pshmem_##N##_alltoall(shmem_team_t team, T *dest, const T *source,     \
                              size_t nelems)                                   \
    {                                                                          \
        static const char routine[] = "shmem_" #N "_alltoall";                 \
        dsm_coll_alltoall(dsm_team_check(team, routine), dest, source,         \
                          DSM_NBYTES(nelems, sizeof(T), routine), routine,     \
                          sizeof(T));                                          \
        return 0;                                                              \
    }                                                                          \
    DSM_WEAK(N##_alltoall)                                                     \
    int pshmem_##N##_alltoalls(shmem_team_t team, T *dest, const T *source,    \
                               ptrdiff_t dst, ptrdiff_t sst, size_t nelems)    \
    {                                                                          \
        dsm_coll_alltoalls(dsm_team_check(team, "shmem_" #N "_alltoalls"),     \
                           dest, source, dst, sst, nelems, sizeof(T),          \
                           "shmem_" #N "_alltoalls");                          \
        return 0;                                                              \
    }                                                                          \
    DSM_WEAK(N##_alltoalls)
SHMEM_TYPES_RMA(DSM_A2A_T)
#undef DSM_A2A_T
