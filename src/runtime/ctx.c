/*
 * Contexts: shmem_ctx_create/destroy/get_team, and the per-PE quiet of 1.6.
 *
 * Each context owns its completion counters (issued/done per engine, on
 * separate cache lines), so a quiet on one context never waits for another
 * context's commands, and threads with private contexts do not share
 * counter lines. The options are accepted as hints and change nothing:
 * the counters stay atomic whatever SHMEM_CTX_PRIVATE/SERIALIZED promise
 * (one uncontended atomic add per command is small next to the command),
 * and SHMEM_CTX_NOSTORE needs nothing (a quiet completes stores anyway).
 */
#include "ctx.h"
#include "path.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define CTX_OPTIONS (SHMEM_CTX_PRIVATE | SHMEM_CTX_SERIALIZED | SHMEM_CTX_NOSTORE)

/* The context arena (rt.h dsm_ctx_check): address space for CTX_ARENA_SLOTS
 * contexts, reserved once and never unmapped (a handle used after
 * shmem_finalize must still be checkable), touched only as slots are
 * handed out. A destroyed context's slot is reused only once every slot
 * has been handed out once, so a stale handle is caught for as long as
 * possible. */
#define CTX_ARENA_SLOTS (DSM_CTX_ARENA_BYTES / DSM_CTX_SLOT)
_Static_assert(sizeof(dsm_ctx_t) <= DSM_CTX_SLOT, "a context outgrew its slot");
char *dsm_ctx_arena;
size_t dsm_ctx_arena_used;
static dsm_ctx_t *ctx_free_list; /* destroyed slots, linked through team */
static pthread_mutex_t ctx_arena_lock = PTHREAD_MUTEX_INITIALIZER;

static dsm_ctx_t *ctx_slot_get(void)
{
    dsm_ctx_t *c = NULL;

    pthread_mutex_lock(&ctx_arena_lock);
    if (!dsm_ctx_arena) {
        void *a = mmap(NULL, (size_t)CTX_ARENA_SLOTS * DSM_CTX_SLOT,
                       PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (a != MAP_FAILED)
            dsm_ctx_arena = a;
    }
    if (dsm_ctx_arena &&
        dsm_ctx_arena_used < (size_t)CTX_ARENA_SLOTS * DSM_CTX_SLOT) {
        c = (dsm_ctx_t *)(void *)(dsm_ctx_arena + dsm_ctx_arena_used);
        /* Published after the slot is filled in (dsm_ctx_new), but a
         * handle to it exists only then too. */
        __atomic_store_n(&dsm_ctx_arena_used,
                         dsm_ctx_arena_used + DSM_CTX_SLOT, __ATOMIC_RELEASE);
    } else if (ctx_free_list) {
        c = ctx_free_list;
        ctx_free_list = (dsm_ctx_t *)(void *)c->team;
    }
    pthread_mutex_unlock(&ctx_arena_lock);
    if (c)
        memset(c, 0, sizeof(*c));
    return c;
}

static void ctx_slot_put(dsm_ctx_t *c)
{
    pthread_mutex_lock(&ctx_arena_lock);
    __atomic_store_n(&c->magic, 0, __ATOMIC_RELEASE);
    c->team = (struct dsm_team *)(void *)ctx_free_list;
    ctx_free_list = c;
    pthread_mutex_unlock(&ctx_arena_lock);
}

void dsm_rt_bad_ctx(const char *routine, shmem_ctx_t ctx)
{
    uintptr_t off = (uintptr_t)ctx - (uintptr_t)dsm_ctx_arena;

    if (ctx == SHMEM_CTX_INVALID)
        dsm_rt_fatal(routine, "invalid context (SHMEM_CTX_INVALID)");
    if (dsm_ctx_arena && off < dsm_ctx_arena_used && !(off % DSM_CTX_SLOT))
        dsm_rt_fatal(routine, "context %p was destroyed (shmem_ctx_destroy)",
                     (void *)ctx);
    dsm_rt_fatal(routine, "%p is not a context (not one that "
                 "shmem_ctx_create or shmem_team_create_ctx returned)",
                 (void *)ctx);
}

dsm_status_t dsm_ctx_new(long options, struct dsm_team *team, dsm_ctx_t **out)
{
    const size_t line = DSM_ALIGN_UP((size_t)dsm_rt.nengines * sizeof(uint64_t),
                                     (size_t)DSM_CACHELINE);
    dsm_ctx_t *c;
    void *cnt;

    c = ctx_slot_get();
    if (!c)
        return DSM_ERR_NOMEM;
    if (posix_memalign(&cnt, DSM_CACHELINE, 2 * line))
        goto err_free_ctx;
    memset(cnt, 0, 2 * line);
    c->issued = cnt;
    c->done = (uint64_t *)((char *)cnt + line);
    c->options = options;
    c->team = team;
    if (dsm_path_ctx_open(c) != DSM_OK) {
        free(c->issued);
        goto err_free_ctx;
    }
    __atomic_store_n(&c->magic, DSM_CTX_MAGIC, __ATOMIC_RELEASE);
    *out = c;
    return DSM_OK;

err_free_ctx:
    ctx_slot_put(c);
    return DSM_ERR_NOMEM;
}

void dsm_ctx_free(dsm_ctx_t *ctx)
{
    if (!ctx || ctx == &dsm_ctx_default)
        return;
    dsm_rt_quiet(ctx);
    dsm_path_ctx_close(ctx);
    free(ctx->issued);
    ctx_slot_put(ctx);
}

int pshmem_ctx_create(long options, shmem_ctx_t *ctx)
{
    dsm_ctx_t *c;
    dsm_status_t st;

    DSM_CHECK_INIT("shmem_ctx_create");
    if (!ctx)
        dsm_rt_fatal("shmem_ctx_create", "ctx is NULL");
    *ctx = SHMEM_CTX_INVALID;
    if (options & ~CTX_OPTIONS) {
        dsm_debug("shmem_ctx_create: unknown options 0x%lx", options);
        return 1;
    }
    st = dsm_ctx_new(options, NULL, &c);
    if (st != DSM_OK) {
        dsm_debug("shmem_ctx_create: %s", dsm_status_str(st));
        return 1;
    }
    *ctx = (shmem_ctx_t)c;
    return 0;
}
DSM_WEAK(ctx_create)

void pshmem_ctx_destroy(shmem_ctx_t ctx)
{
    DSM_CHECK_INIT("shmem_ctx_destroy");
    if (ctx == SHMEM_CTX_INVALID)
        return;
    if (ctx == DSM_CTX_DEFAULT)
        dsm_rt_fatal("shmem_ctx_destroy", "SHMEM_CTX_DEFAULT cannot be "
                     "destroyed");
    dsm_ctx_free(dsm_ctx_check(ctx, "shmem_ctx_destroy"));
}
DSM_WEAK(ctx_destroy)

/* Each target's path completes the context's operations to it (shm: the
 * engine queue of the PE; net: the provider's completions). */
void pshmem_ctx_pe_quiet(shmem_ctx_t ctx, const int *target_pes, size_t npes)
{
    DSM_CHECK_INIT("shmem_ctx_pe_quiet");
    if (ctx == SHMEM_CTX_INVALID)
        return;
    dsm_ctx_t *c = dsm_ctx_check(ctx, "shmem_ctx_pe_quiet");
    for (size_t i = 0; i < npes; i++) {
        DSM_CHECK_PE("shmem_ctx_pe_quiet", target_pes[i]);
        dsm_path_flush(c, target_pes[i]);
    }
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
DSM_WEAK(ctx_pe_quiet)

void pshmem_pe_quiet(const int *target_pes, size_t npes)
{
    pshmem_ctx_pe_quiet(SHMEM_CTX_DEFAULT, target_pes, npes);
}
DSM_WEAK(pe_quiet)
