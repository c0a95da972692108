/*
 * Reductions (and the scans of scan.c) compute on the CPU: host memory of
 * every member is mapped here, so after a barrier (every source is ready)
 * each member reads all the members' sources in place and reduces them into
 * a private buffer, block by block so the accumulator stays in cache; a
 * second barrier (nobody reads a source any more) lets each member write
 * its own dest, which is why dest == source works. Every member folds the
 * sources in the same order (member 0, 1, ...), so floating-point results
 * are the same on every member.
 */
#include "coll/chain.h"
#include "rma.h"

#include <stdlib.h>
#include <string.h>

/* Bytes reduced per block: the accumulator and one source block stay in
 * L1/L2 while every member's block is folded in. */
#define RED_BLOCK (16u << 10)
/* Teams across nodes fetch remote members' blocks with one blocking get
 * each: a round trip per block, so blocks are larger (measured: 1 MiB
 * sum_to_all over tcp took 12-22 ms with 16 KiB blocks). */
#define RED_NET_BLOCK (512u << 10)

#define OP_AND(a, b) ((a) & (b))
#define OP_OR(a, b) ((a) | (b))
#define OP_XOR(a, b) ((a) ^ (b))
#define OP_MAX(a, b) ((a) > (b) ? (a) : (b))
#define OP_MIN(a, b) ((a) < (b) ? (a) : (b))
#define OP_SUM(a, b) ((a) + (b))
#define OP_PROD(a, b) ((a) * (b))

/* One body per operator function. */
#define DSM_OP_FN(T, N, OP, EXPR)                                              \
    void dsm_coll_op_##N##_##OP(void *acc, const void *in, size_t n)          \
    {                                                                          \
        T *a = acc;                                                            \
        const T *b = in;                                                       \
        for (size_t i = 0; i < n; i++)                                         \
            a[i] = EXPR(a[i], b[i]);                                           \
    }
#define DSM_OP_FN_BIT(T, N)                                                    \
    DSM_OP_FN(T, N, and, OP_AND)                                               \
    DSM_OP_FN(T, N, or, OP_OR) DSM_OP_FN(T, N, xor, OP_XOR)
#define DSM_OP_FN_MINMAX(T, N)                                                 \
    DSM_OP_FN(T, N, max, OP_MAX) DSM_OP_FN(T, N, min, OP_MIN)
#define DSM_OP_FN_ARITH(T, N)                                                  \
    DSM_OP_FN(T, N, sum, OP_SUM) DSM_OP_FN(T, N, prod, OP_PROD)
SHMEM_TYPES_REDUCE_BIT(DSM_OP_FN_BIT)
SHMEM_TYPES_REDUCE_MINMAX(DSM_OP_FN_MINMAX)
SHMEM_TYPES_REDUCE_ARITH(DSM_OP_FN_ARITH)

/* Fold members [lo, hi) of the sources into acc; zeros when the range is
 * empty (the exclusive scan's first member). */
static void fold(dsm_team_t *t, char *acc, const void *src, size_t n,
                 size_t esz, dsm_coll_op_t op, int lo, int hi,
                 const char *routine)
{
    const size_t bytes = n * esz;
    /* GPU memory: sources are staged into host memory by the copy
     * engines (RMA gets), folded by this CPU; no kernel, no SM. */
    const int dev = !dsm_coll_host(acc, src);
    const int staged = !dsm_team_mapped(t) || dev;
    const size_t blk =
        DSM_MAX((staged ? RED_NET_BLOCK : RED_BLOCK) / esz, (size_t)1) * esz;
    const char **in;
    char *tmp = NULL;
    int m;

    if (lo >= hi) {
        memset(acc, 0, bytes);
        return;
    }
    in = malloc((size_t)t->size * sizeof(*in));
    if (staged)
        tmp = malloc(blk);
    if (!in || (staged && !tmp))
        dsm_rt_fatal(routine, "out of memory");
    /* Members on other nodes, and GPU memory (NULL here): their block is
     * fetched into tmp first (network or copy engine). */
    for (m = lo; m < hi; m++)
        in[m] = !dsm_coll_pe_mapped(t->pes[m]) || dev
                    ? NULL
                    : dsm_rt_xlate(routine, src, bytes, t->pes[m]);
    for (size_t off = 0; off < bytes; off += blk) {
        size_t len = DSM_MIN(blk, bytes - off);
        for (m = lo; m < hi; m++) {
            const char *b = in[m] ? in[m] + off : tmp;
            if (!in[m])
                dsm_rma_get(DSM_CTX_DEFAULT, tmp, (const char *)src + off, len,
                            t->pes[m], routine);
            if (m == lo)
                memcpy(acc + off, b, len);
            else
                op(acc + off, b, len / esz);
        }
    }
    free(tmp);
    free(in);
}

/* Small (coll.h eager messages): every member sends its source to every
 * other, then folds members [lo, hi) in member order from what came, as
 * fold() does: the same result on every member, no barrier. */
static void reduce_eager(dsm_team_t *t, void *dest, const void *src,
                         size_t n, size_t esz, dsm_coll_op_t op, int lo,
                         int hi)
{
    const size_t bytes = n * esz;
    char acc[DSM_EAGER_LINES_MAX / 2 * DSM_EAGER_LINE_DATA]
        __attribute__((aligned(64)));
    char in[sizeof(acc)] __attribute__((aligned(64)));
    const int me = t->my_idx;

    for (int i = 1; i < t->size; i++)
        dsm_eager_send(t, (me + i) % t->size, src, bytes);
    dsm_eager_notify(t);
    if (lo >= hi)
        memset(acc, 0, bytes);
    /* Every member's message is taken, in member order; those outside
     * [lo, hi) (a scan's) are only consumed. */
    for (int m = 0; m < t->size; m++) {
        const void *b = src;
        if (m != me) {
            dsm_eager_recv(t, m, in, bytes);
            b = in;
        }
        if (m < lo || m >= hi)
            continue;
        if (m == lo)
            memcpy(acc, b, bytes);
        else
            op(acc, b, n);
    }
    memcpy(dest, acc, bytes);
}

/* The shared skeleton: barrier, fold [lo, hi), barrier, write dest. */
static void reduce_range(dsm_team_t *t, void *dest, const void *src,
                         size_t n, size_t esz, dsm_coll_op_t op, int lo,
                         int hi, int kind, const char *routine)
{
    /* The operator and type: the function's place in this library, the
     * same on every PE (the same library). */
    const dsm_call_t *call =
        DSM_CALL(routine, kind, esz, n * esz,
                 (uintptr_t)op - (uintptr_t)&dsm_rt, 0);
    char *acc;

    if (!n) {
        dsm_coll_note(t, call);
        return;
    }
    if (DSM_UNLIKELY(n > SIZE_MAX / esz))
        dsm_rt_fatal(routine, "%zu elements of %zu bytes overflow", n, esz);
    if (dsm_eager_ok(t, n * esz) && dsm_coll_host(dest, src)) {
        pthread_mutex_lock(&t->lock);
        dsm_coll_call(t, call);
        reduce_eager(t, dest, src, n, esz, op, lo, hi);
        pthread_mutex_unlock(&t->lock);
        return;
    }
    acc = malloc(n * esz);
    if (!acc)
        dsm_rt_fatal(routine, "out of memory for a %zu-byte reduction "
                     "buffer", n * esz);
    pthread_mutex_lock(&t->lock);
    dsm_coll_call(t, call);
    dsm_team_sync(t);
    fold(t, acc, src, n, esz, op, lo, hi, routine);
    dsm_team_sync(t);
    pthread_mutex_unlock(&t->lock);
    if (!dsm_coll_host(dest, src)) /* GPU memory: by a copy engine */
        dsm_rma_put(DSM_CTX_DEFAULT, dest, acc, n * esz, dsm_rt.me, routine);
    else
        memcpy(dest, acc, n * esz);
    free(acc);
}

/* Reductions and scans read n elements of every member's source and
 * write n to dest (an overflowing n * esz fails in reduce_range). */
static void check_sizes(const void *dest, const void *src, size_t n,
                        size_t esz, const char *routine)
{
    size_t bytes;
    if (__builtin_mul_overflow(n, esz, &bytes))
        return;
    dsm_rt_check_alloc(routine, "dest", dest, bytes);
    dsm_rt_check_alloc(routine, "source", src, bytes);
}

void dsm_coll_reduce(dsm_team_t *t, void *dest, const void *src, size_t n,
                     size_t esz, dsm_coll_op_t op, const char *routine)
{
    check_sizes(dest, src, n, esz, routine);
    if (t->size == 1 && dsm_coll_host(dest, src)) {
        if (dest != src && n)
            memmove(dest, src, n * esz);
        return;
    }
    reduce_range(t, dest, src, n, esz, op, 0, t->size, DSM_CALL_REDUCE,
                 routine);
}

void dsm_coll_scan(dsm_team_t *t, void *dest, const void *src, size_t n,
                   size_t esz, dsm_coll_op_t op, int inclusive,
                   const char *routine)
{
    int hi = t->my_idx + (inclusive ? 1 : 0);
    check_sizes(dest, src, n, esz, routine);
    if (t->size == 1 && dsm_coll_host(dest, src)) {
        if (!n)
            return;
        if (inclusive && dest != src)
            memmove(dest, src, n * esz);
        else if (!inclusive)
            memset(dest, 0, n * esz);
        return;
    }
    reduce_range(t, dest, src, n, esz, op, 0, hi,
                 inclusive ? DSM_CALL_INSCAN : DSM_CALL_EXSCAN, routine);
}

/* ------------------------------------------------------------ entry points */

#define DSM_REDUCE_DEF(T, N, OP)                                               \
    int pshmem_##N##_##OP##_reduce(shmem_team_t team, T *dest,                \
                                   const T *source, size_t nreduce)            \
    {                                                                          \
        static const char routine[] = "shmem_" #N "_" #OP "_reduce";          \
        dsm_coll_reduce(dsm_team_check(team, routine), dest, source, nreduce,  \
                        sizeof(T), dsm_coll_op_##N##_##OP, routine);          \
        return 0;                                                              \
    }                                                                          \
    DSM_WEAK(N##_##OP##_reduce)
#define DSM_REDUCE_BIT(T, N)                                                   \
    DSM_REDUCE_DEF(T, N, and) DSM_REDUCE_DEF(T, N, or)                        \
    DSM_REDUCE_DEF(T, N, xor)
#define DSM_REDUCE_MINMAX(T, N)                                                \
    DSM_REDUCE_DEF(T, N, max) DSM_REDUCE_DEF(T, N, min)
#define DSM_REDUCE_ARITH(T, N)                                                 \
    DSM_REDUCE_DEF(T, N, sum) DSM_REDUCE_DEF(T, N, prod)
SHMEM_TYPES_REDUCE_BIT(DSM_REDUCE_BIT)
SHMEM_TYPES_REDUCE_MINMAX(DSM_REDUCE_MINMAX)
SHMEM_TYPES_REDUCE_ARITH(DSM_REDUCE_ARITH)
