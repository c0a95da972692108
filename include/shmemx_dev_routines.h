/*
 * The device API's routines, written once for both vendors (issue #29):
 * included by shmemx_cuda.h and shmemx_hip.h after their vendor layer,
 * never on its own. Man pages: shmemx_dev(3), shmemx_dev_hip(3).
 *
 * What a vendor layer defines before including this file:
 *  - shmemx_dev_t, with at least me, npes, store_max, words, base, lo and
 *    size (shmemx_dev_common.h's segments);
 *  - SHMEMX_DEV_FN (the routines' qualifiers), SHMEMX_DEV__FAIL_FN (those
 *    of the one function that reports a misuse, not inlined: device
 *    printf is much code; noreturn), SHMEMX_DEV__PRINT and
 *    SHMEMX_DEV__ABORT (a kernel prints and traps; does not return),
 *    SHMEMX_DEV__UNROLL (a loop pragma, or nothing);
 *  - memory order: shmemx_dev__ld_acq, shmemx_dev__st_rel (system scope),
 *    shmemx_dev__fence_sys (stores before it are visible system-wide
 *    before those after it), shmemx_dev__relax (a waiting loop's pause),
 *    shmemx_dev__ld_base (PE pe's segment s base, from the segment
 *    table or a copy of its rows the vendor keeps nearer);
 *  - addresses: shmemx_dev__local (a local address as the GPU and its
 *    engines reach it);
 *  - the engine path: shmemx_dev__engine_copy (queue a copy of n bytes,
 *    return the token its completion is waited for with),
 *    shmemx_dev__engine_put_signal (queue data and then the signal; 0
 *    when the caller still has to deliver the signal, after the data
 *    completed), both with `more` (1: the caller queues more requests
 *    right after this one, which belong in the same submission to the
 *    engines; a vendor whose kernel writes the engines' queue itself
 *    ignores it), shmemx_dev__issued (the token of everything issued so
 *    far), shmemx_dev__wait_done (wait for a token; the waits that can
 *    stall are bounded there where the vendor can) and shmemx_dev__quiet
 *    (a system-scope fence and the wait for every token issued so far);
 *    optionally SHMEMX_DEV__ENGINE_COLL, a collective's whole engine
 *    part in one submission (shmemx_dev__engine_coll: every block, each
 *    peer's followed by its arrival signal; a proxy's FIFO then takes
 *    one reservation and one fence for all of it; 0: not done, the
 *    caller goes request by request);
 *  - atomics on the peer's mapping, system scope: SHMEMX_DEV__SIG_SET,
 *    SHMEMX_DEV__SIG_ADD (64-bit signal words), SHMEMX_DEV__FADD and
 *    SHMEMX_DEV__CAS (the AMOs; CAS stores the old value into its lvalue
 *    c), and SHMEMX_DEV__AMO_ALL, the AMO type table expanded with
 *    SHMEMX_DEV_AMO(C type, TYPENAME, the atomic's type).
 */
#ifndef SHMEMX_DEV_ROUTINES_H
#define SHMEMX_DEV_ROUTINES_H

/* A misuse found in a kernel: one line (dmashmem: PE n: routine: what),
 * then the kernel traps (the host sees the launch fail); on the host, the
 * process aborts. */
#define SHMEMX_DEV__E_PE 0     /* v: the PE */
#define SHMEMX_DEV__E_REMOTE 1 /* v: the PE, on another node */
#define SHMEMX_DEV__E_ADDR 2   /* v: the address */
#define SHMEMX_DEV__E_SIGOP 3  /* v: sig_op */
#define SHMEMX_DEV__E_CMP 4    /* v: the comparison */
#define SHMEMX_DEV__E_ACTIVE 5 /* v: the request (started twice) */
#define SHMEMX_DEV__E_END 6    /* v: the last byte's address */
SHMEMX_DEV__FAIL_FN void shmemx_dev__fail_at(int me, int npes,
                                             const char *routine, int what,
                                             uint64_t v)
{
    switch (what) {
    case SHMEMX_DEV__E_PE:
        SHMEMX_DEV__PRINT("dmashmem: PE %d: %s: invalid PE %d (npes %d)\n",
                          me, routine, (int)v, npes);
        break;
    case SHMEMX_DEV__E_REMOTE:
        SHMEMX_DEV__PRINT("dmashmem: PE %d: %s: PE %d is on another node: "
                          "kernels reach only PEs of this node\n",
                          me, routine, (int)v);
        break;
    case SHMEMX_DEV__E_ADDR:
        SHMEMX_DEV__PRINT("dmashmem: PE %d: %s: address %p is not "
                          "symmetric\n",
                          me, routine, (void *)(uintptr_t)v);
        break;
    case SHMEMX_DEV__E_SIGOP:
        SHMEMX_DEV__PRINT("dmashmem: PE %d: %s: invalid sig_op %d\n", me,
                          routine, (int)v);
        break;
    case SHMEMX_DEV__E_END:
        SHMEMX_DEV__PRINT("dmashmem: PE %d: %s: address %p, the last byte "
                          "of the symmetric range, is past the end of its "
                          "segment\n",
                          me, routine, (void *)(uintptr_t)v);
        break;
    case SHMEMX_DEV__E_ACTIVE:
        SHMEMX_DEV__PRINT("dmashmem: PE %d: %s: request %p is active "
                          "(started again without a wait)\n",
                          me, routine, (void *)(uintptr_t)v);
        break;
    default:
        SHMEMX_DEV__PRINT("dmashmem: PE %d: %s: invalid comparison %d\n",
                          me, routine, (int)v);
        break;
    }
    SHMEMX_DEV__ABORT();
}

/* The handle's fields go by value: its address never reaches the
 * out-of-line function, so a kernel keeps reading the handle from its
 * parameters instead of making a copy of it on the stack for every call
 * that checks something (p + fence: 0.86 us against 0.58 for a bare store
 * + fence on an H200, before). */
SHMEMX_DEV_FN void shmemx_dev__fail(const shmemx_dev_t *d, const char *routine,
                                    int what, uint64_t v)
{
    shmemx_dev__fail_at(d->me, d->npes, routine, what, v);
}

/* The GPU address of the n bytes at symmetric address sym on PE pe, all
 * of them in one segment (n = 0: the address alone): a range that runs
 * past its segment's end is a misuse (one line naming the last byte), not
 * a write into whatever lies beyond. The checks are combined into the one
 * condition of the table load and one branch after it (a zero base: some
 * misuse, or a PE on another node), which then names the misuse; a
 * branch per check cost a thread's put + quiet ~0.1 us more (H100). */
SHMEMX_DEV_FN char *shmemx_dev__ptr_n(const shmemx_dev_t *d, const void *sym,
                                      size_t n, int pe, const char *routine)
{
    uint64_t a = (uint64_t)(uintptr_t)sym, off = 0, room = 0;
    int s = 0, in = 0;
    SHMEMX_DEV__UNROLL
    for (int k = SHMEMX_DEV_SEGS - 1; k >= 0; k--) {
        uint64_t o = a - d->lo[k];
        if (o < d->size[k]) {
            s = k;
            off = o;
            room = d->size[k] - o;
            in = 1;
        }
    }
    uint64_t b = 0;
    if (in & ((unsigned)pe < (unsigned)d->npes) & (n <= room))
        b = shmemx_dev__ld_base(d, pe, s);
    if (!b) /* which misuse: the first that applies */
        shmemx_dev__fail_at(
            d->me, d->npes, routine,
            (unsigned)pe >= (unsigned)d->npes ? SHMEMX_DEV__E_PE
            : !in                             ? SHMEMX_DEV__E_ADDR
            : n > room                        ? SHMEMX_DEV__E_END
                                              : SHMEMX_DEV__E_REMOTE,
            (unsigned)pe >= (unsigned)d->npes ? (uint64_t)pe
            : !in                             ? a
            : n > room                        ? a + n - 1
                                              : (uint64_t)pe);
    return (char *)(uintptr_t)(b + off);
}

/* The same for one byte (a signal word, a p/g or AMO's first byte). */
SHMEMX_DEV_FN char *shmemx_dev__ptr(const shmemx_dev_t *d, const void *sym,
                                    int pe, const char *routine)
{
    return shmemx_dev__ptr_n(d, sym, 1, pe, routine);
}

/* The part of thread `rank` of `nthr` in copying n bytes with loads and
 * stores (the store path): words rank, rank + nthr, ... of 8 bytes where
 * both sides and the length allow, bytes otherwise (consecutive threads,
 * consecutive words: a warp's stores coalesce). */
SHMEMX_DEV_FN void shmemx_dev__copy_part(void *dst, const void *src,
                                         size_t n, unsigned rank,
                                         unsigned nthr)
{
    if ((((uintptr_t)dst | (uintptr_t)src | n) & 7) == 0) {
        volatile uint64_t *d_ = (volatile uint64_t *)dst;
        const volatile uint64_t *s_ = (const volatile uint64_t *)src;
        for (size_t i = rank; i < n / 8; i += nthr)
            d_[i] = s_[i];
    } else {
        volatile char *d_ = (volatile char *)dst;
        const volatile char *s_ = (const volatile char *)src;
        for (size_t i = rank; i < n; i += nthr)
            d_[i] = s_[i];
    }
}

/* Copy n bytes with loads and stores, one thread. */
SHMEMX_DEV_FN void shmemx_dev__copy(void *dst, const void *src, size_t n)
{
    shmemx_dev__copy_part(dst, src, n, 0, 1);
}

/* The store path of one thread's put of n <= store_max bytes to dest on
 * pe (src already local): the source's first word is loaded before dest is
 * translated, so that load and the segment table's are in flight together
 * (after the translation, whose checks may end the kernel, the source
 * load waited for the table's: put 8 B + quiet 1.34 -> 1.18 us on an
 * H100, with the combined checks of shmemx_dev__ptr_n). dest's alignment
 * is that of its translation: every segment starts 8-byte aligned in
 * every PE's view (checked where the table is built). */
SHMEMX_DEV_FN void shmemx_dev__put_stores(const shmemx_dev_t *d, void *dest,
                                          const void *src, size_t n, int pe,
                                          const char *routine)
{
    const int words =
        n >= 8 && (((uintptr_t)dest | (uintptr_t)src | n) & 7) == 0;
    const uint64_t w0 = words ? *(const volatile uint64_t *)src : 0;
    char *r = shmemx_dev__ptr_n(d, dest, n, pe, routine);
    if (words) {
        *(volatile uint64_t *)r = w0;
        shmemx_dev__copy(r + 8, (const char *)src + 8, n - 8);
    } else {
        shmemx_dev__copy(r, src, n);
    }
}

/* ---- completion and order ---- */

/* Every operation issued so far by any thread of this PE's kernels is
 * complete: engine requests done, stores visible system-wide. */
SHMEMX_DEV_FN void shmemx_dev_quiet(SHMEMX_DEV_H d)
{
    shmemx_dev__quiet(&d, "shmemx_dev_quiet");
}

/* Engine requests are ordered among themselves (one in-order stream or
 * queue), but a later store-path operation could overtake one in flight:
 * fence waits for the engines, i.e. it costs a quiet when engine requests
 * are outstanding and a system-scope fence otherwise. */
SHMEMX_DEV_FN void shmemx_dev_fence(SHMEMX_DEV_H d)
{
    shmemx_dev_quiet(d);
}

/* ---- RMA ---- */

SHMEMX_DEV_FN void shmemx_dev_putmem_nbi(SHMEMX_DEV_H d, void *dest,
                                         const void *src, size_t n, int pe)
{
    const char *rn = "shmemx_dev_putmem_nbi";
    src = shmemx_dev__local(&d, src);
    if (n <= d.store_max) {
        shmemx_dev__put_stores(&d, dest, src, n, pe, rn);
        return;
    }
    char *r = shmemx_dev__ptr_n(&d, dest, n, pe, rn);
    (void)shmemx_dev__engine_copy(&d, (uint64_t)(uintptr_t)r,
                                  (uint64_t)(uintptr_t)src, n, 0, rn);
}

SHMEMX_DEV_FN void shmemx_dev_putmem(SHMEMX_DEV_H d, void *dest,
                                     const void *src, size_t n, int pe)
{
    const char *rn = "shmemx_dev_putmem";
    src = shmemx_dev__local(&d, src);
    if (n <= d.store_max) {
        shmemx_dev__put_stores(&d, dest, src, n, pe, rn);
        shmemx_dev__fence_sys();
        return;
    }
    char *r = shmemx_dev__ptr_n(&d, dest, n, pe, rn);
    shmemx_dev__wait_done(&d,
                          shmemx_dev__engine_copy(&d, (uint64_t)(uintptr_t)r,
                                                  (uint64_t)(uintptr_t)src,
                                                  n, 0, rn),
                          rn);
}

SHMEMX_DEV_FN void shmemx_dev_getmem_nbi(SHMEMX_DEV_H d, void *dest,
                                         const void *src, size_t n, int pe)
{
    const char *rn = "shmemx_dev_getmem_nbi";
    char *r = shmemx_dev__ptr_n(&d, src, n, pe, rn);
    dest = shmemx_dev__local(&d, dest);
    if (n <= d.store_max) {
        shmemx_dev__copy(dest, r, n);
        return;
    }
    (void)shmemx_dev__engine_copy(&d, (uint64_t)(uintptr_t)dest,
                                  (uint64_t)(uintptr_t)r, n, 0, rn);
}

SHMEMX_DEV_FN void shmemx_dev_getmem(SHMEMX_DEV_H d, void *dest,
                                     const void *src, size_t n, int pe)
{
    const char *rn = "shmemx_dev_getmem";
    char *r = shmemx_dev__ptr_n(&d, src, n, pe, rn);
    dest = shmemx_dev__local(&d, dest);
    if (n <= d.store_max) {
        shmemx_dev__copy(dest, r, n);
        shmemx_dev__fence_sys();
        return;
    }
    shmemx_dev__wait_done(&d,
                          shmemx_dev__engine_copy(&d,
                                                  (uint64_t)(uintptr_t)dest,
                                                  (uint64_t)(uintptr_t)r, n,
                                                  0, rn),
                          rn);
}

/* ---- signals ---- */

/* Data, then the signal. Engine path: the vendor queues the signal behind
 * the data where its engines can (no wait here), otherwise it waits for
 * the data and the signal is a system-scope atomic. Small data: stores,
 * a system fence, a system-scope atomic store or add. */
SHMEMX_DEV_FN void shmemx_dev_putmem_signal_nbi(SHMEMX_DEV_H d, void *dest,
                                                const void *src, size_t n,
                                                uint64_t *sig_addr,
                                                uint64_t signal, int sig_op,
                                                int pe)
{
    const char *rn = "shmemx_dev_putmem_signal_nbi";
    char *r = shmemx_dev__ptr_n(&d, dest, n, pe, rn);
    uint64_t *sig =
        (uint64_t *)shmemx_dev__ptr_n(&d, sig_addr, sizeof(*sig), pe, rn);
    if (sig_op != SHMEM_SIGNAL_SET && sig_op != SHMEM_SIGNAL_ADD)
        shmemx_dev__fail(&d, rn, SHMEMX_DEV__E_SIGOP, (uint64_t)sig_op);
    src = shmemx_dev__local(&d, src);
    if (n > d.store_max) {
        if (shmemx_dev__engine_put_signal(&d, (uint64_t)(uintptr_t)r,
                                          (uint64_t)(uintptr_t)src, n,
                                          (uint64_t)(uintptr_t)sig, signal,
                                          sig_op, 0, rn))
            return;
    } else {
        shmemx_dev__copy(r, src, n);
        shmemx_dev__fence_sys();
    }
    if (sig_op == SHMEM_SIGNAL_SET)
        SHMEMX_DEV__SIG_SET(sig, signal);
    else
        SHMEMX_DEV__SIG_ADD(sig, signal);
}

/* Local signal word: its value (acquire, system scope). */
SHMEMX_DEV_FN uint64_t shmemx_dev_signal_fetch(SHMEMX_DEV_H d,
                                               const uint64_t *sig_addr)
{
    return shmemx_dev__ld_acq(shmemx_dev__local(&d, sig_addr));
}

SHMEMX_DEV_FN int shmemx_dev__cmp(uint64_t v, int cmp, uint64_t value)
{
    switch (cmp) {
    case SHMEM_CMP_EQ: return v == value;
    case SHMEM_CMP_NE: return v != value;
    case SHMEM_CMP_GT: return v > value;
    case SHMEM_CMP_LE: return v <= value;
    case SHMEM_CMP_LT: return v < value;
    case SHMEM_CMP_GE: return v >= value;
    }
    return -1;
}

/* Wait until the local signal word satisfies cmp value; returns it. Not
 * bounded: it waits for a peer, as the host's shmem_signal_wait_until. */
SHMEMX_DEV_FN uint64_t shmemx_dev_signal_wait_until(SHMEMX_DEV_H d,
                                                    uint64_t *sig_addr,
                                                    int cmp, uint64_t value)
{
    const void *w = shmemx_dev__local(&d, sig_addr);
    uint64_t v = shmemx_dev__ld_acq(w);
    int ok = shmemx_dev__cmp(v, cmp, value);
    if (ok < 0)
        shmemx_dev__fail(&d, "shmemx_dev_signal_wait_until",
                         SHMEMX_DEV__E_CMP, (uint64_t)cmp);
    while (!ok) {
        shmemx_dev__relax();
        v = shmemx_dev__ld_acq(w);
        ok = shmemx_dev__cmp(v, cmp, value);
    }
    return v;
}

/* ---- p / g (stores and loads on the peer's mapping) ---- */

#define SHMEMX_DEV_PG(T, N)                                                    \
    SHMEMX_DEV_FN void shmemx_dev_##N##_p(SHMEMX_DEV_H d, T *dest, T value,    \
                                          int pe)                              \
    {                                                                          \
        *(volatile T *)shmemx_dev__ptr_n(&d, dest, sizeof(T), pe,              \
                                         "shmemx_dev_" #N "_p") = value;       \
    }                                                                          \
    SHMEMX_DEV_FN T shmemx_dev_##N##_g(SHMEMX_DEV_H d, const T *src, int pe)   \
    {                                                                          \
        return *(volatile T *)shmemx_dev__ptr_n(&d, src, sizeof(T), pe,        \
                                                "shmemx_dev_" #N "_g");        \
    }
SHMEMX_DEV_TYPES_RMA(SHMEMX_DEV_PG)
#undef SHMEMX_DEV_PG

/* ---- atomics: system scope on the peer's mapping ---- */

#define SHMEMX_DEV_AMO(T, N, A)                                                \
    SHMEMX_DEV_FN T shmemx_dev_##N##_atomic_fetch_add(SHMEMX_DEV_H d,          \
                                                      T *dest, T value,        \
                                                      int pe)                  \
    {                                                                          \
        A *p = (A *)shmemx_dev__ptr_n(&d, dest, sizeof(A), pe,                 \
                                      "shmemx_dev_" #N "_atomic_fetch_add");   \
        return (T)SHMEMX_DEV__FADD(p, (A)value);                               \
    }                                                                          \
    SHMEMX_DEV_FN void shmemx_dev_##N##_atomic_add(SHMEMX_DEV_H d, T *dest,    \
                                                   T value, int pe)            \
    {                                                                          \
        A *p = (A *)shmemx_dev__ptr_n(&d, dest, sizeof(A), pe,                 \
                                      "shmemx_dev_" #N "_atomic_add");         \
        (void)SHMEMX_DEV__FADD(p, (A)value);                                   \
    }                                                                          \
    SHMEMX_DEV_FN T shmemx_dev_##N##_atomic_compare_swap(                      \
        SHMEMX_DEV_H d, T *dest, T cond, T value, int pe)                      \
    {                                                                          \
        A *p = (A *)shmemx_dev__ptr_n(&d, dest, sizeof(A), pe,                 \
                                      "shmemx_dev_" #N "_atomic_compare_swap");\
        A c_ = (A)cond;                                                        \
        SHMEMX_DEV__CAS(p, c_, (A)value);                                      \
        return (T)c_;                                                          \
    }
SHMEMX_DEV__AMO_ALL
#undef SHMEMX_DEV_AMO

/* ---- collectives over all PEs (#31) ----
 *
 * fcollectmem: every PE's n bytes of src land at dest + pe * n on every
 * PE; alltoallmem: block pe of src (src + pe * n) lands at dest + me * n
 * on PE pe. One shot, nothing made ahead on the host: each block goes
 * straight to its PE, by stores through the peer's mapping when n is at
 * most 16 x store_max (the store path; a group's threads split every block),
 * by one engine request per PE above it, each followed on the engines by
 * the signal of its arrival (no SM moves those bytes); then one round of
 * arrival words (shmemx_dev__coll_end), so on return dest holds every
 * block on every PE. Over the PEs of the handle (the world team), which
 * are on this node. As the host's: dest on every PE must be ready for
 * the data before any PE calls (two calls in a row into one dest with
 * reads of it between need a barrier, or alternate two buffers); the
 * source may be any local GPU address, the destination is symmetric. */

/* The epoch of this PE's next collective or barrier (its count of them so
 * far + 1). Every thread of a group reads it before the group's leader
 * ends the call (shmemx_dev__coll_end stores it). */
SHMEMX_DEV_FN unsigned long long shmemx_dev__next_epoch(const shmemx_dev_t *d)
{
    return ((volatile unsigned long long *)shmemx_dev__local(
               d, d->words))[SHMEMX_DEV_W_EPOCH] +
           1;
}

/* The collectives' store threshold per block: 16 x store_max (4 KiB by
 * default; 0 keeps everything on the engines). store_max was measured for
 * one thread's stores; a collective's are a group's, mostly to a peer on
 * the same GPU (H100 under MPS, 2 PEs, one warp: 1 KiB by stores 5.7-5.9
 * us, by the engines 30 us). */
SHMEMX_DEV_FN size_t shmemx_dev__coll_store_max(const shmemx_dev_t *d)
{
    return (size_t)d->store_max * 16;
}

/* The collectives; what a PE sends: fcollect its block to every PE,
 * alltoall block pe of src to PE pe, broadcast root's block to every PE
 * (root included) and nothing from the others. */
#define SHMEMX_DEV__FCOLLECT 0
#define SHMEMX_DEV__ALLTOALL 1
#define SHMEMX_DEV__BCAST 2

/* The bytes this PE sends to each PE in a collective of this kind: n,
 * but none from a broadcast's other PEs. What its end waits for. */
SHMEMX_DEV_FN size_t shmemx_dev__coll_sends(const shmemx_dev_t *d, int kind,
                                            int root, size_t n)
{
    return kind == SHMEMX_DEV__BCAST && d->me != root ? 0 : n;
}

/* Thread `rank` of `nthr`'s share of collective e's data movement (all of
 * it with 0 of 1): on the store path the words of every block it stores
 * (the leader signals the peers after the group's stores); on the engine
 * path thread 0 issues every request, each block to a peer followed on
 * the engines by its signal: this PE's arrival word there (ARRIVE + me)
 * set to e. Self first: at 2 PEs the copies then come in one run before
 * the peer's signal. The caller then
 * makes its stores visible and one thread of the group calls
 * shmemx_dev__coll_end with shmemx_dev__coll_sends. */
SHMEMX_DEV_FN void shmemx_dev__coll_part(const shmemx_dev_t *d, char *dest,
                                         const char *src, size_t n, int kind,
                                         int root, unsigned long long e,
                                         unsigned rank, unsigned nthr,
                                         const char *routine)
{
    const int bcast = kind == SHMEMX_DEV__BCAST;
    if (bcast && (unsigned)root >= (unsigned)d->npes)
        shmemx_dev__fail(d, routine, SHMEMX_DEV__E_PE, (uint64_t)root);
    (void)shmemx_dev__ptr_n(d, dest, bcast ? n : n * (size_t)d->npes, d->me,
                            routine);
    n = shmemx_dev__coll_sends(d, kind, root, n);
    if (!n)
        return;
    src = shmemx_dev__local(d, src);
    char *at = bcast ? dest : dest + (size_t)d->me * n; /* on every PE */
    /* The engine path is issued by one thread, every request but the last
     * marked `more`: the whole collective reaches the engines as one
     * submission (one batch of copies, then the signals), not one per
     * request the proxy happened to see (H100: 29 us at 64 KiB over 2 PEs
     * against 10.6 for one put + quiet on the engines). */
    const int eng = n > shmemx_dev__coll_store_max(d);
    if (eng && rank)
        return;
#ifdef SHMEMX_DEV__ENGINE_COLL
    if (eng && shmemx_dev__engine_coll(d, at, src, n,
                                       kind == SHMEMX_DEV__ALLTOALL ? n : 0,
                                       e, routine))
        return;
#endif
    for (int i = 0; i < d->npes; i++) {
        int pe = (d->me + i) % d->npes;
        const char *s = kind == SHMEMX_DEV__ALLTOALL ? src + (size_t)pe * n
                                                     : src;
        char *r = shmemx_dev__ptr(d, at, pe, routine);
        const int more = i + 1 < d->npes;
        if (!eng) {
            shmemx_dev__copy_part(r, s, n, rank, nthr);
        } else if (pe == d->me) {
            (void)shmemx_dev__engine_copy(d, (uint64_t)(uintptr_t)r,
                                          (uint64_t)(uintptr_t)s, n, more,
                                          routine);
        } else {
            char *w = shmemx_dev__ptr(
                d, &d->words[SHMEMX_DEV_W_ARRIVE + d->me], pe, routine);
            if (!shmemx_dev__engine_put_signal(
                    d, (uint64_t)(uintptr_t)r, (uint64_t)(uintptr_t)s, n,
                    (uint64_t)(uintptr_t)w, e, SHMEM_SIGNAL_SET, more,
                    routine))
                shmemx_dev__st_rel(w, e); /* the data is there */
        }
    }
}

/* Every engine request this PE's kernels issued so far is done: the
 * quiet's engine half (its fence is the caller's). */
SHMEMX_DEV_FN void shmemx_dev__engines_done(const shmemx_dev_t *d,
                                            const char *routine)
{
    shmemx_dev__wait_done(d, shmemx_dev__issued(d), routine);
}

/* Wait until every peer's arrival word here says e (or later). */
SHMEMX_DEV_FN void shmemx_dev__coll_arrivals(const shmemx_dev_t *d,
                                             unsigned long long e)
{
    volatile unsigned long long *my =
        (volatile unsigned long long *)shmemx_dev__local(d, d->words);
    for (int j = 0; j < d->npes; j++)
        if (j != d->me)
            while (shmemx_dev__ld_acq(&my[SHMEMX_DEV_W_ARRIVE + j]) < e)
                shmemx_dev__relax();
}

/* The end of collective (or barrier) e, one thread of the group, after
 * its threads' parts: on the store path e into every peer's arrival word
 * for this PE (release stores); on the engine path the PE's
 * requests done (as a quiet: its own block, and the engines' signals,
 * are out). Then wait until every peer's arrival word here says e: every
 * block is in dest. One round (a dissemination barrier would take
 * log2(npes) in a row); PE j's word ARRIVE + j on PE x is written by j
 * only, with j's epochs, which grow, so waits compare with >=. */
SHMEMX_DEV_FN void shmemx_dev__coll_end(const shmemx_dev_t *d, size_t n,
                                        unsigned long long e,
                                        const char *routine)
{
    volatile unsigned long long *my =
        (volatile unsigned long long *)shmemx_dev__local(d, d->words);
    my[SHMEMX_DEV_W_EPOCH] = e;
    /* The store path: one system fence, then the arrival words (relaxed
     * system-scope stores): the fence is cumulative over the stores of
     * this thread and of the group's threads, which synchronised with it
     * before (shmemx_dev__coll_group). One fence for all peers: each costs
     * ~0.7 us even with nothing to drain (H100), a release store per peer
     * was one each. */
    if (n <= shmemx_dev__coll_store_max(d)) {
        shmemx_dev__fence_sys();
        for (int i = 1; i < d->npes; i++)
            *(volatile unsigned long long *)shmemx_dev__ptr(
                d, &d->words[SHMEMX_DEV_W_ARRIVE + d->me],
                (d->me + i) % d->npes, routine) = e;
    } else {
        shmemx_dev__engines_done(d, routine);
    }
    shmemx_dev__coll_arrivals(d, e);
}

/* ---- barrier ---- */

/* All PEs: quiet, then one round of arrival words (shmemx_dev__coll_end
 * with no data: this PE's epoch into its word on every peer, then wait
 * for every peer's here). Called by one thread per PE (any one; the
 * others of the kernel are not involved). Not bounded: it waits for
 * peers. The quiet is its engine half only, every request issued done:
 * its system fence is the one shmemx_dev__coll_end's store path makes
 * before the arrival words, which orders this thread's stores and the
 * completions it saw before them as the quiet's own would (one fence
 * instead of two; each costs ~0.7 us on an H100). */
SHMEMX_DEV_FN void shmemx_dev_barrier_all(SHMEMX_DEV_H d)
{
    shmemx_dev__engines_done(&d, "shmemx_dev_barrier_all");
    shmemx_dev__coll_end(&d, 0, shmemx_dev__next_epoch(&d),
                         "shmemx_dev_barrier_all");
}

/* A collective by one thread of the PE. */
SHMEMX_DEV_FN void shmemx_dev__coll(const shmemx_dev_t *d, void *dest,
                                    const void *src, size_t n, int kind,
                                    int root, const char *routine)
{
    unsigned long long e = shmemx_dev__next_epoch(d);
    shmemx_dev__coll_part(d, (char *)dest, (const char *)src, n, kind, root,
                          e, 0, 1, routine);
    shmemx_dev__coll_end(d, shmemx_dev__coll_sends(d, kind, root, n), e,
                         routine);
}

SHMEMX_DEV_FN void shmemx_dev_fcollectmem(SHMEMX_DEV_H d, void *dest,
                                          const void *src, size_t n)
{
    shmemx_dev__coll(&d, dest, src, n, SHMEMX_DEV__FCOLLECT, 0,
                     "shmemx_dev_fcollectmem");
}

SHMEMX_DEV_FN void shmemx_dev_alltoallmem(SHMEMX_DEV_H d, void *dest,
                                          const void *src, size_t n)
{
    shmemx_dev__coll(&d, dest, src, n, SHMEMX_DEV__ALLTOALL, 0,
                     "shmemx_dev_alltoallmem");
}

/* broadcastmem: root's n bytes of src land at dest on every PE, root
 * included (OpenSHMEM 1.5's team broadcast); the other PEs move nothing
 * but arrive in the same round (shmemx_dev__coll_end), so every PE has
 * entered the call when any returns, and two destinations in turn are
 * as safe as for fcollect. */
SHMEMX_DEV_FN void shmemx_dev_broadcastmem(SHMEMX_DEV_H d, void *dest,
                                           const void *src, size_t n,
                                           int root)
{
    shmemx_dev__coll(&d, dest, src, n, SHMEMX_DEV__BCAST, root,
                     "shmemx_dev_broadcastmem");
}

#endif /* SHMEMX_DEV_ROUTINES_H */
