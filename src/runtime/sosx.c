/*
 * Sandia OpenSHMEM compatibility (shmemx_sos(3)): the shmemx_ names SOS
 * programs use for what OpenSHMEM 1.6 made standard (blocked strided RMA,
 * signal add/set), its performance counters and its thread-id hook; the
 * team side (node team, scans) is coll/sosx.c. Each routine is the standard one under the SOS name:
 * a real exported symbol with its pshmemx_ twin (the names are linked
 * against, and profiling tools see them), forwarding to the pshmem_
 * implementation, so nothing here has behaviour of its own to drift.
 */
#include "rma.h"

/* shmemx.h names the generic shmem_signal_add/set for these two (C11 and
 * C++ programs), but here they are the exported symbols themselves. */
#undef shmemx_signal_add
#undef shmemx_signal_set

/* ---- blocked strided RMA ---- */
#define SOSX_IB_TYPED(T, N)                                                    \
    void pshmemx_##N##_ibput(T *dest, const T *source, ptrdiff_t dst,          \
                             ptrdiff_t sst, size_t bsize, size_t nblocks,      \
                             int pe)                                           \
    {                                                                          \
        pshmem_##N##_ibput(dest, source, dst, sst, bsize, nblocks, pe);        \
    }                                                                          \
    void pshmemx_ctx_##N##_ibput(shmem_ctx_t ctx, T *dest, const T *source,    \
                                 ptrdiff_t dst, ptrdiff_t sst, size_t bsize,   \
                                 size_t nblocks, int pe)                       \
    {                                                                          \
        pshmem_ctx_##N##_ibput(ctx, dest, source, dst, sst, bsize, nblocks,    \
                               pe);                                            \
    }                                                                          \
    void pshmemx_##N##_ibget(T *dest, const T *source, ptrdiff_t dst,          \
                             ptrdiff_t sst, size_t bsize, size_t nblocks,      \
                             int pe)                                           \
    {                                                                          \
        pshmem_##N##_ibget(dest, source, dst, sst, bsize, nblocks, pe);        \
    }                                                                          \
    void pshmemx_ctx_##N##_ibget(shmem_ctx_t ctx, T *dest, const T *source,    \
                                 ptrdiff_t dst, ptrdiff_t sst, size_t bsize,   \
                                 size_t nblocks, int pe)                       \
    {                                                                          \
        pshmem_ctx_##N##_ibget(ctx, dest, source, dst, sst, bsize, nblocks,    \
                               pe);                                            \
    }                                                                          \
    DSM_WEAKX(N##_ibput)                                                       \
    DSM_WEAKX(ctx_##N##_ibput)                                                 \
    DSM_WEAKX(N##_ibget)                                                       \
    DSM_WEAKX(ctx_##N##_ibget)
SHMEM_TYPES_RMA(SOSX_IB_TYPED)

#define SOSX_IB_SIZED(BITS, BYTES, T)                                          \
    void pshmemx_ibput##BITS(void *dest, const void *source, ptrdiff_t dst,    \
                             ptrdiff_t sst, size_t bsize, size_t nblocks,      \
                             int pe)                                           \
    {                                                                          \
        pshmem_ibput##BITS(dest, source, dst, sst, bsize, nblocks, pe);        \
    }                                                                          \
    void pshmemx_ctx_ibput##BITS(shmem_ctx_t ctx, void *dest,                  \
                                 const void *source, ptrdiff_t dst,            \
                                 ptrdiff_t sst, size_t bsize, size_t nblocks,  \
                                 int pe)                                       \
    {                                                                          \
        pshmem_ctx_ibput##BITS(ctx, dest, source, dst, sst, bsize, nblocks,    \
                               pe);                                            \
    }                                                                          \
    void pshmemx_ibget##BITS(void *dest, const void *source, ptrdiff_t dst,    \
                             ptrdiff_t sst, size_t bsize, size_t nblocks,      \
                             int pe)                                           \
    {                                                                          \
        pshmem_ibget##BITS(dest, source, dst, sst, bsize, nblocks, pe);        \
    }                                                                          \
    void pshmemx_ctx_ibget##BITS(shmem_ctx_t ctx, void *dest,                  \
                                 const void *source, ptrdiff_t dst,            \
                                 ptrdiff_t sst, size_t bsize, size_t nblocks,  \
                                 int pe)                                       \
    {                                                                          \
        pshmem_ctx_ibget##BITS(ctx, dest, source, dst, sst, bsize, nblocks,    \
                               pe);                                            \
    }                                                                          \
    DSM_WEAKX(ibput##BITS)                                                     \
    DSM_WEAKX(ctx_ibput##BITS)                                                 \
    DSM_WEAKX(ibget##BITS)                                                     \
    DSM_WEAKX(ctx_ibget##BITS)
SHMEM_SIZES(SOSX_IB_SIZED)

/* ---- signals ---- */
void pshmemx_signal_add(uint64_t *sig_addr, uint64_t signal, int pe)
{
    pshmem_signal_add(sig_addr, signal, pe);
}
void pshmemx_ctx_signal_add(shmem_ctx_t ctx, uint64_t *sig_addr,
                            uint64_t signal, int pe)
{
    pshmem_ctx_signal_add(ctx, sig_addr, signal, pe);
}
void pshmemx_signal_set(uint64_t *sig_addr, uint64_t signal, int pe)
{
    pshmem_signal_set(sig_addr, signal, pe);
}
void pshmemx_ctx_signal_set(shmem_ctx_t ctx, uint64_t *sig_addr,
                            uint64_t signal, int pe)
{
    pshmem_ctx_signal_set(ctx, sig_addr, signal, pe);
}
DSM_WEAKX(signal_add)
DSM_WEAKX(ctx_signal_add)
DSM_WEAKX(signal_set)
DSM_WEAKX(ctx_signal_set)

/* ---- performance counters ----
 * What carries over from SOS: a context's operations handed to the DMA
 * engines (the commands SHMEM_SDMA_STATS counts per queue: nbi puts and
 * gets above the inline limit, the data and signal of put_signal_nbi) and,
 * of those, the ones retired, i.e. its issued[] and done[] counters that
 * shmem_quiet waits on. An engine command is a copy that writes its destination,
 * whichever side is remote, so gets handed to the engines count as writes
 * too. Nothing counts as a read, and nothing counts operations of other
 * PEs into this one (peers write this PE's memory directly; SOS reports 0
 * as well when it has no target counter). Operations the caller completes
 * itself (below SHMEM_SDMA_INLINE_MAX / SHMEM_SDMA_NBI_INLINE_MAX) and
 * network operations are complete at return and not counted. */
static void ctx_sum(shmem_ctx_t ctx, uint64_t *issued, uint64_t *done,
                    const char *routine)
{
    DSM_CHECK_INIT(routine);
    dsm_ctx_t *c = dsm_rma_ctx(ctx, routine);
    uint64_t i = 0, d = 0;
    /* done first: a command retiring between the loads can then only make
     * issued >= done hold more strongly, never break it. */
    for (int e = 0; e < dsm_rt.nengines; e++)
        d += __atomic_load_n(&c->done[e], __ATOMIC_ACQUIRE);
    for (int e = 0; e < dsm_rt.nengines; e++)
        i += __atomic_load_n(&c->issued[e], __ATOMIC_ACQUIRE);
    if (issued)
        *issued = i;
    if (done)
        *done = d;
}

static void check_out(uint64_t *out, const char *routine)
{
    if (DSM_UNLIKELY(!out))
        dsm_rt_fatal(routine, "cntr_value is NULL");
}

void pshmemx_pcntr_get_issued_write(shmem_ctx_t ctx, uint64_t *cntr_value)
{
    check_out(cntr_value, "shmemx_pcntr_get_issued_write");
    ctx_sum(ctx, cntr_value, NULL, "shmemx_pcntr_get_issued_write");
}
void pshmemx_pcntr_get_completed_write(shmem_ctx_t ctx, uint64_t *cntr_value)
{
    check_out(cntr_value, "shmemx_pcntr_get_completed_write");
    ctx_sum(ctx, NULL, cntr_value, "shmemx_pcntr_get_completed_write");
}
void pshmemx_pcntr_get_issued_read(shmem_ctx_t ctx, uint64_t *cntr_value)
{
    check_out(cntr_value, "shmemx_pcntr_get_issued_read");
    ctx_sum(ctx, NULL, NULL, "shmemx_pcntr_get_issued_read");
    *cntr_value = 0;
}
void pshmemx_pcntr_get_completed_read(shmem_ctx_t ctx, uint64_t *cntr_value)
{
    check_out(cntr_value, "shmemx_pcntr_get_completed_read");
    ctx_sum(ctx, NULL, NULL, "shmemx_pcntr_get_completed_read");
    *cntr_value = 0;
}
void pshmemx_pcntr_get_completed_target(uint64_t *cntr_value)
{
    check_out(cntr_value, "shmemx_pcntr_get_completed_target");
    DSM_CHECK_INIT("shmemx_pcntr_get_completed_target");
    *cntr_value = 0;
}
void pshmemx_pcntr_get_all(shmem_ctx_t ctx, shmemx_pcntr_t *pcntr)
{
    if (DSM_UNLIKELY(!pcntr))
        dsm_rt_fatal("shmemx_pcntr_get_all", "pcntr is NULL");
    uint64_t issued, done;
    ctx_sum(ctx, &issued, &done, "shmemx_pcntr_get_all");
    pcntr->pending_put = issued;
    pcntr->completed_put = done;
    pcntr->pending_get = 0;
    pcntr->completed_get = 0;
    pcntr->target = 0;
}
DSM_WEAKX(pcntr_get_issued_write)
DSM_WEAKX(pcntr_get_completed_write)
DSM_WEAKX(pcntr_get_issued_read)
DSM_WEAKX(pcntr_get_completed_read)
DSM_WEAKX(pcntr_get_completed_target)
DSM_WEAKX(pcntr_get_all)

/* ---- thread ids ----
 * SOS asks a threading package for thread ids to pick per-thread network
 * resources. dmashmem keeps no per-thread state from one call to the next
 * that a user-level thread could carry between OS threads (per-thread
 * scratch lives in thread-local storage and is used within one call), so
 * it needs no ids and never calls the function; SHMEM_DEBUG says so. */
void pshmemx_register_gettid(uint64_t (*gettid_fn)(void))
{
    dsm_debug("shmemx_register_gettid: %s: dmashmem identifies threads by "
              "thread-local storage and never calls it",
              gettid_fn ? "accepted" : "cleared");
}
DSM_WEAKX(register_gettid)
