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

#define CTX_OPTIONS (SHMEM_CTX_PRIVATE | SHMEM_CTX_SERIALIZED | SHMEM_CTX_NOSTORE)

dsm_status_t dsm_ctx_new(long options, struct dsm_team *team, dsm_ctx_t **out)
{
    const size_t line = DSM_ALIGN_UP((size_t)dsm_rt.nengines * sizeof(uint64_t),
                                     (size_t)DSM_CACHELINE);
    dsm_ctx_t *c;
    void *cnt;

    c = calloc(1, sizeof(*c));
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
    *out = c;
    return DSM_OK;

err_free_ctx:
    free(c);
    return DSM_ERR_NOMEM;
}

void dsm_ctx_free(dsm_ctx_t *ctx)
{
    if (!ctx || ctx == &dsm_ctx_default)
        return;
    dsm_rt_quiet(ctx);
    dsm_path_ctx_close(ctx);
    free(ctx->issued);
    free(ctx);
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
    if (ctx == SHMEM_CTX_DEFAULT)
        dsm_rt_fatal("shmem_ctx_destroy", "SHMEM_CTX_DEFAULT cannot be "
                     "destroyed");
    dsm_ctx_free((dsm_ctx_t *)ctx);
}
DSM_WEAK(ctx_destroy)

/* Each target's path completes the context's operations to it (shm: the
 * engine queue of the PE; net: the provider's completions). */
void pshmem_ctx_pe_quiet(shmem_ctx_t ctx, const int *target_pes, size_t npes)
{
    DSM_CHECK_INIT("shmem_ctx_pe_quiet");
    if (ctx == SHMEM_CTX_INVALID)
        return;
    dsm_ctx_t *c = (dsm_ctx_t *)ctx;
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
