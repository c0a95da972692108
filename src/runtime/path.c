/*
 * The path table (path.h): the shm and net paths and the table built at
 * init from what the segments and the network found.
 */
#include "path.h"
#include "wait.h"
#include "stall.h"
#include "net/net.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct dsm_paths dsm_paths;

void dsm_rt_device_word(const char *routine, const void *addr, int pe)
{
    dsm_rt_fatal(routine, "address %p (PE %d) is on the device heap (GPU "
                 "memory): the CPU cannot operate on it; use host memory "
                 "for AMO, signal and wait words", addr, pe);
}

void dsm_rt_bad_wait_word(const char *routine, const void *addr, size_t n,
                          size_t size)
{
    if ((uintptr_t)addr & (size - 1))
        dsm_rt_fatal(routine, "address %p is not aligned to its %zu-byte "
                     "type", addr, size);
    for (int i = 0; i < dsm_rt.nsegs; i++) {
        const dsm_seg_t *s = &dsm_rt.segs[i];
        uintptr_t off = (uintptr_t)addr - (uintptr_t)s->base;
        if (off < s->size)
            dsm_rt_fatal(routine, "%zu word%s of %zu bytes at %p run%s past "
                         "the end of the %s segment (%zu bytes)", n,
                         n == 1 ? "" : "s", size, addr, n == 1 ? "s" : "",
                         s->name, s->size);
    }
    dsm_rt_fatal(routine, "address %p is not symmetric (not in the symmetric "
                 "heap nor in global/static data): no other PE can write it, "
                 "the wait would never end", addr);
}

void dsm_path_put_checked(dsm_ctx_t *c, void *sym, const void *src,
                          size_t len, int pe, int nbi, const char *routine)
{
    dsm_rma_check2(routine, sym, len);
    const dsm_path_ops_t *o = dsm_paths.pe[pe].rma;
    if (o == &dsm_path_shm)
        dsm_shm_put(c, sym, src, len, pe, nbi, routine);
    else
        o->put(c, sym, src, len, pe, nbi, routine);
}

void dsm_path_get_checked(dsm_ctx_t *c, void *dst, const void *sym,
                          size_t len, int pe, int nbi, const char *routine)
{
    dsm_rma_check2(routine, sym, len);
    const dsm_path_ops_t *o = dsm_paths.pe[pe].rma;
    if (o == &dsm_path_shm)
        dsm_shm_get(c, dst, sym, len, pe, nbi, routine);
    else
        o->get(c, dst, sym, len, pe, nbi, routine);
}

/* ------------------------------------------------------------ shm */

static void shm_put(dsm_ctx_t *c, void *sym, const void *src, size_t len,
                    int pe, int nbi, const char *routine)
{
    dsm_shm_put(c, sym, src, len, pe, nbi, routine);
}

static void shm_get(dsm_ctx_t *c, void *dst, const void *sym, size_t len,
                    int pe, int nbi, const char *routine)
{
    dsm_shm_get(c, dst, sym, len, pe, nbi, routine);
}

static void shm_amo(dsm_ctx_t *c, dsm_amo_op_t op, void *sym, size_t size,
                    const void *val, const void *cmp, void *fetched, int pe,
                    const char *routine)
{
    dsm_shm_amo(c, op, sym, size, val, cmp, fetched, pe, routine);
}

static void shm_signal_word(uint64_t *w, uint64_t v, int add, int pe)
{
    if (add)
        __atomic_fetch_add(w, v, __ATOMIC_ACQ_REL);
    else
        __atomic_store_n(w, v, __ATOMIC_RELEASE);
    dsm_wake_notify(&dsm_rt.peer_ctrl[pe]->wake_app);
}

/* A user's word: dsm_rt_xlate keeps it in the user part of a segment. */
static void shm_signal(dsm_ctx_t *c, uint64_t *sym, uint64_t v, int add, int pe,
                       const char *routine)
{
    (void)c;
    dsm_check_host_word(routine, sym, pe);
    uint64_t *w =
        (uint64_t *)(void *)dsm_rt_xlate(routine, sym, sizeof(*w), pe);
    shm_signal_word(w, v, add, pe);
}

/* The runtime's word: also the internal area after the user heap, which
 * every local peer maps with the heap. (The runtime stores to its words
 * on mapped PEs directly; this is for completeness of the table.) */
static void shm_sys_signal(dsm_ctx_t *c, uint64_t *sym, uint64_t v, int add,
                           int pe, const char *routine)
{
    const dsm_seg_t *h = &dsm_rt.segs[DSM_SEG_HEAP];
    uintptr_t off = (uintptr_t)sym - (uintptr_t)h->base;
    if (off >= h->size && off < h->map_size &&
        sizeof(*sym) <= h->map_size - off && h->peer[pe]) {
        shm_signal_word((uint64_t *)(void *)(h->peer[pe] + off), v, add, pe);
        return;
    }
    shm_signal(c, sym, v, add, pe, routine);
}

static uint64_t shm_load64(const uint64_t *sym, int pe, const char *routine)
{
    dsm_check_host_word(routine, sym, pe);
    const uint64_t *w =
        (const uint64_t *)(const void *)dsm_rt_xlate(routine, sym, 8, pe);
    return __atomic_load_n(w, __ATOMIC_ACQUIRE);
}

struct quiet_arg {
    uint64_t *done;
    uint64_t target;
    int engine;
};

static int quiet_reached(void *p)
{
    struct quiet_arg *a = p;
    dsm_sdma_progress(dsm_rt.sdma, 1);
    return __atomic_load_n(a->done, __ATOMIC_ACQUIRE) >= a->target;
}

/* For the line of a PE ended during a quiet that lasted (stall.h). */
static void quiet_describe(const void *p, char *buf, size_t n)
{
    const struct quiet_arg *a = p;
    uint64_t done = __atomic_load_n(a->done, __ATOMIC_ACQUIRE);
    uint64_t left = a->target > done ? a->target - done : 0;
    snprintf(buf, n,
             "%llu transfer%s on DMA engine %d (sdma backend %s) not "
             "complete",
             (unsigned long long)left, left == 1 ? "" : "s", a->engine,
             dsm_sdma_backend_name(dsm_rt.sdma));
}

/* Wait for what ctx issued to engine e so far. */
static void shm_quiet_engine(dsm_ctx_t *ctx, int e)
{
    struct quiet_arg a = {
        &ctx->done[e], __atomic_load_n(&ctx->issued[e], __ATOMIC_ACQUIRE), e};
    if (__atomic_load_n(a.done, __ATOMIC_ACQUIRE) >= a.target)
        return;
    dsm_backoff_t b = {0};
    dsm_stall_t st = {0, 0, 0};
    while (!quiet_reached(&a)) {
        dsm_backoff(&b, &dsm_rt.ctrl->wake_app, quiet_reached, &a);
        dsm_stall_tick(&st, NULL, quiet_describe, &a);
    }
    dsm_stall_done(&st);
}

/* Commands to one PE go to its engine's queue: completing that engine's
 * commands of the context completes every operation to the PE. */
static void shm_flush(dsm_ctx_t *c, int pe)
{
    shm_quiet_engine(c, dsm_rt_engine_of(pe));
}

static void shm_quiet(dsm_ctx_t *c)
{
    for (int e = 0; e < dsm_rt.nengines; e++)
        shm_quiet_engine(c, e);
}

/* Puts to one PE travel one engine queue in order; a fence has only to
 * keep later direct (inline) stores behind queued commands still in
 * flight, which it does by completing them. */
static void shm_fence(dsm_ctx_t *c)
{
    for (int e = 0; e < dsm_rt.nengines; e++)
        if (__atomic_load_n(&c->done[e], __ATOMIC_ACQUIRE) !=
            __atomic_load_n(&c->issued[e], __ATOMIC_ACQUIRE)) {
            shm_quiet(c);
            return;
        }
}

const dsm_path_ops_t dsm_path_shm = {
    .name = "shm",
    .put = shm_put,
    .get = shm_get,
    .amo = shm_amo,
    .signal = shm_signal,
    .sys_signal = shm_sys_signal,
    .load64 = shm_load64,
    .flush = shm_flush,
    .quiet = shm_quiet,
    .fence = shm_fence,
};

/* ------------------------------------------------------------ net */

static void net_put(dsm_ctx_t *c, void *sym, const void *src, size_t len,
                    int pe, int nbi, const char *routine)
{
    dsm_net_put(c->net, routine, sym, src, len, pe, nbi);
}

static void net_get(dsm_ctx_t *c, void *dst, const void *sym, size_t len,
                    int pe, int nbi, const char *routine)
{
    dsm_net_get(c->net, routine, dst, sym, len, pe, nbi);
}

static void net_amo(dsm_ctx_t *c, dsm_amo_op_t op, void *sym, size_t size,
                    const void *val, const void *cmp, void *fetched, int pe,
                    const char *routine)
{
    dsm_check_host_word(routine, sym, pe);
    dsm_net_amo(c->net, routine, op, sym, size, val, cmp, fetched, pe);
}

/* A user's word: the internal area is refused as for puts. */
static void net_signal(dsm_ctx_t *c, uint64_t *sym, uint64_t v, int add,
                       int pe, const char *routine)
{
    dsm_check_host_word(routine, sym, pe);
    dsm_net_signal(c->net, routine, sym, v, add, pe, 0);
}

/* The runtime's word (team, barrier): may be in the internal area. */
static void net_sys_signal(dsm_ctx_t *c, uint64_t *sym, uint64_t v, int add,
                           int pe, const char *routine)
{
    dsm_check_host_word(routine, sym, pe);
    dsm_net_signal(c->net, routine, sym, v, add, pe, 1);
}

static uint64_t net_load64(const uint64_t *sym, int pe, const char *routine)
{
    dsm_check_host_word(routine, sym, pe);
    return dsm_net_load64(routine, sym, pe);
}

static void net_flush(dsm_ctx_t *c, int pe)
{
    dsm_net_flush(c->net, pe);
}

static void net_quiet(dsm_ctx_t *c)
{
    dsm_net_quiet(c->net);
}

static void net_fence(dsm_ctx_t *c)
{
    dsm_net_fence(c->net);
}

/* Each context has its own network accounts (src/net: contexts share at
 * most SHMEM_OFI_CTX_EPS endpoints), locked only where threads may share
 * it. */
static dsm_status_t net_ctx_open(dsm_ctx_t *c)
{
    int flags = c == &dsm_ctx_default ? DSM_NET_CTX_DEFAULT : 0;
    if (dsm_rt.thread_level == SHMEM_THREAD_MULTIPLE &&
        !(c->options & (SHMEM_CTX_PRIVATE | SHMEM_CTX_SERIALIZED)))
        flags |= DSM_NET_CTX_SHARED;
    c->net = dsm_net_ctx_create(flags);
    return c->net ? DSM_OK : DSM_ERR_UNSUPPORTED;
}

static void net_ctx_close(dsm_ctx_t *c)
{
    dsm_net_ctx_destroy(c->net);
    c->net = NULL;
}

const dsm_path_ops_t dsm_path_net = {
    .name = "net",
    .put = net_put,
    .get = net_get,
    .amo = net_amo,
    .signal = net_signal,
    .sys_signal = net_sys_signal,
    .load64 = net_load64,
    .flush = net_flush,
    .quiet = net_quiet,
    .fence = net_fence,
    .ctx_open = net_ctx_open,
    .ctx_close = net_ctx_close,
};

/* ------------------------------------------------------------ table */

/* How PE pe is reached, in words: "shm (load/store, cpu engines), AMOs
 * net" or "net (tcp;ofi_rxm on eth1), AMOs net". */
static void path_words(int pe, char *out, size_t cap)
{
    const dsm_path_t *p = &dsm_paths.pe[pe];
    const char *dom = dsm_net_domain();
    size_t dl = dom ? strcspn(dom, " ") : 0;
    if (p->rma == &dsm_path_shm)
        snprintf(out, cap, "shm (%s%s engines%s)",
                 p->caps & DSM_PATH_CAP_LOADSTORE ? "load/store, " : "",
                 dsm_sdma_backend_name(dsm_rt.sdma),
                 p->caps & DSM_PATH_CAP_DEVICE ? ", device heap" : "");
    else
        snprintf(out, cap, "net (%s on %.*s)", dsm_net_provider(), (int)dl,
                 dom ? dom : "?");
    size_t n = strlen(out);
    if (n < cap)
        snprintf(out + n, cap - n, ", AMOs %s", p->amo->name);
}

/* SHMEM_DEBUG: the path table, one line per distinct path with the PEs it
 * reaches ("paths: PEs 0,3 -> shm (...)"), so that a 1000-PE job prints
 * a few lines per PE, not a thousand. */
static void paths_print(void)
{
    const int n = dsm_rt.npes;
    unsigned char *done = calloc((size_t)n, 1);
    char what[160], other[160], list[256];
    if (!done)
        return;
    for (int pe = 0; pe < n; pe++) {
        size_t len = 0;
        int many = 0;
        if (done[pe])
            continue;
        path_words(pe, what, sizeof(what));
        list[0] = '\0';
        for (int q = pe; q < n; q++) {
            if (done[q])
                continue;
            path_words(q, other, sizeof(other));
            if (strcmp(what, other))
                continue;
            /* q starts a run of PEs with this path: q..last */
            int last = q;
            done[q] = 1;
            while (last + 1 < n && !done[last + 1]) {
                path_words(last + 1, other, sizeof(other));
                if (strcmp(what, other))
                    break;
                done[++last] = 1;
            }
            int w = last == q ? snprintf(list + len, sizeof(list) - len,
                                         "%s%d", len ? "," : "", q)
                              : snprintf(list + len, sizeof(list) - len,
                                         "%s%d-%d", len ? "," : "", q, last);
            many |= len > 0 || last > q;
            if (w < 0 || (size_t)w >= sizeof(list) - len) {
                snprintf(list + sizeof(list) - 4, 4, "...");
                len = sizeof(list) - 1;
            } else {
                len += (size_t)w;
            }
            q = last;
        }
        dsm_debug("paths: PE%s %s -> %s", many ? "s" : "", list, what);
    }
    free(done);
}

dsm_status_t dsm_paths_init(void)
{
    const int n = dsm_rt.npes;
    const dsm_seg_t *dev = &dsm_rt.segs[DSM_SEG_DEVICE];
    unsigned char *flags = calloc((size_t)n, 2); /* remote[n], device[n] */
    dsm_path_place_t in = {
        .npes = n,
        .remote = flags,
        .device = flags ? flags + n : NULL,
        .engine_caps = dsm_sdma_caps(dsm_rt.sdma),
        .net_ordered = dsm_net_ordered(),
        .check = dsm_rt.check,
        .shm = &dsm_path_shm,
        .net = &dsm_path_net,
    };

    dsm_paths.pe = calloc((size_t)n, sizeof(*dsm_paths.pe));
    if (!dsm_paths.pe || !flags) {
        free(flags);
        return DSM_ERR_NOMEM;
    }
    for (int pe = 0; pe < n; pe++) {
        flags[pe] = dsm_net_reaches(pe) != 0;
        flags[n + pe] = dev->size && dev->peer[pe];
    }
    dsm_path_plan(&in, &dsm_paths);
    free(flags);
    if (dsm_log_debug)
        paths_print();
    return dsm_path_ctx_open(&dsm_ctx_default);
}

void dsm_paths_fini(void)
{
    dsm_path_ctx_close(&dsm_ctx_default);
    dsm_paths.shm_only = 0;
    free(dsm_paths.pe);
    dsm_paths.pe = NULL;
    dsm_paths.nused = 0;
}

/* A one-node job has one path, shm: called directly (inlined) rather than
 * through the table, since quiet and fence sit on the put+quiet and
 * pingpong critical paths. */
void dsm_path_quiet(dsm_ctx_t *c)
{
    if (DSM_LIKELY(dsm_paths.shm_only)) {
        shm_quiet(c);
        return;
    }
    for (int i = 0; i < dsm_paths.nused; i++)
        dsm_paths.used[i]->quiet(c);
}

void dsm_path_fence(dsm_ctx_t *c)
{
    if (DSM_LIKELY(dsm_paths.shm_only)) {
        shm_fence(c);
        return;
    }
    for (int i = 0; i < dsm_paths.nused; i++)
        dsm_paths.used[i]->fence(c);
}

void dsm_path_flush(dsm_ctx_t *c, int pe)
{
    const dsm_path_t *p = &dsm_paths.pe[pe];
    p->rma->flush(c, pe);
    if (p->amo != p->rma)
        p->amo->flush(c, pe);
}

void dsm_path_progress_net(void)
{
    if (!dsm_paths_all_shm())
        dsm_net_progress();
}

dsm_status_t dsm_path_ctx_open(dsm_ctx_t *c)
{
    for (int i = 0; i < dsm_paths.nused; i++)
        if (dsm_paths.used[i]->ctx_open) {
            dsm_status_t st = dsm_paths.used[i]->ctx_open(c);
            if (st != DSM_OK) {
                while (i-- > 0)
                    if (dsm_paths.used[i]->ctx_close)
                        dsm_paths.used[i]->ctx_close(c);
                return st;
            }
        }
    return DSM_OK;
}

void dsm_path_ctx_close(dsm_ctx_t *c)
{
    for (int i = 0; i < dsm_paths.nused; i++)
        if (dsm_paths.used[i]->ctx_close)
            dsm_paths.used[i]->ctx_close(c);
}
