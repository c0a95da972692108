/*
 * Communication contexts. A context is a set of issued/done counters, one
 * pair per engine, so that a quiet on one context waits only for the
 * commands issued on it (rt.h struct dsm_ctx). The team engineer's
 * shmem_team_create_ctx builds on dsm_ctx_new.
 */
#ifndef DSM_CTX_H
#define DSM_CTX_H

#include "rt.h"

/* A new context with options (SHMEM_CTX_* bits, already checked by the
 * caller) on team (NULL: the world team). *out is written only on
 * success. */
dsm_status_t dsm_ctx_new(long options, struct dsm_team *team, dsm_ctx_t **out);
/* Complete what ctx issued, then free it. NULL and the default context
 * are ignored. */
void dsm_ctx_free(dsm_ctx_t *ctx);

#endif /* DSM_CTX_H */
