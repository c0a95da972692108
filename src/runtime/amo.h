/*
 * Atomic memory operations, byte level: every typed AMO (and the signal and
 * lock words) funnels into dsm_amo() on a 4- or 8-byte word.
 *
 * On the shm path (host memory of a local PE, one-node job) an AMO is a CPU
 * atomic (__atomic builtins, path.h) on the shared mapping of the target's
 * copy, done by the caller. The engines
 * execute SIGNAL/SIGNAL_ADD with the same builtins on the same words, so
 * AMOs, signal operations and engine-side signals are atomic with respect
 * to each other: one mechanism. Integer types of one size share one
 * implementation (two's complement add, bitwise ops and compare on the bit
 * pattern are the same for signed and unsigned); float and double fetch,
 * set and swap move the bit pattern through the integer of their size.
 */
#ifndef DSM_AMO_H
#define DSM_AMO_H

#include "rma.h"

void dsm_amo_bad_align(const char *routine, const void *addr, size_t size)
    DSM_NORETURN;
/* An AMO off the shm_only fast path (the network, SHMEM_CHECK=2): out of
 * line, so that the fast path keeps no registers for it. */
void dsm_amo_by_table(dsm_ctx_t *c, dsm_amo_op_t op, const void *dest,
                      size_t size, const void *val, const void *cmp,
                      void *fetched, int pe, const char *routine);

static inline dsm_ctx_t *dsm_amo_check(shmem_ctx_t ctx, const void *addr,
                                       size_t size, int pe,
                                       const char *routine)
{
    dsm_ctx_t *c = dsm_rma_ctx(ctx, routine);
    DSM_CHECK_PE(routine, pe);
    if (DSM_UNLIKELY((uintptr_t)addr & (size - 1)))
        dsm_amo_bad_align(routine, addr, size);
    return c;
}

/* One AMO of size bytes (4 or 8) on PE pe's copy of dest, through the
 * target's amo path: the job's atomicity domain (path.h). val/cmp point at
 * the operands, fetched (or NULL) receives the old value. Everything but
 * the addresses is a constant at each typed call site, so on the shm path
 * this folds to one instruction after the checks. */
static inline void dsm_amo(shmem_ctx_t ctx, dsm_amo_op_t op, const void *dest,
                           size_t size, const void *val, const void *cmp,
                           void *fetched, int pe, const char *routine)
{
    dsm_ctx_t *c = dsm_amo_check(ctx, dest, size, pe, routine);
    if (DSM_LIKELY(dsm_paths.shm_only)) {
        dsm_shm_amo(c, op, (void *)dest, size, val, cmp, fetched, pe, routine);
        return;
    }
    dsm_amo_by_table(c, op, dest, size, val, cmp, fetched, pe, routine);
}

#endif /* DSM_AMO_H */
