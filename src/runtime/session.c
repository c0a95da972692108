/*
 * Sessions (OpenSHMEM 1.6): shmem_ctx_session_start / _stop tell the library
 * that a burst of small operations on a context follows, so it may batch
 * their submission. Here submission is already batched without being told:
 * every nbi operation is one entry in the lock-free request ring, and the
 * engine (or proxy) thread moves all pending entries of a queue with one
 * doorbell. So a session changes nothing; start checks its arguments and
 * stop completes nothing (the program still needs a quiet for that, as the
 * spec says).
 */
#include "rt.h"

#define SESSION_CONFIG_MASK                                                    \
    (SHMEM_CTX_SESSION_TOTAL_OPS | SHMEM_CTX_SESSION_MAX_OPS)

void pshmem_ctx_session_start(shmem_ctx_t ctx, long options,
                              const shmem_ctx_session_config_t *config,
                              long config_mask)
{
    DSM_CHECK_INIT("shmem_ctx_session_start");
    (void)options;
    if (ctx == SHMEM_CTX_INVALID)
        return;
    if (config_mask & ~SESSION_CONFIG_MASK)
        dsm_rt_fatal("shmem_ctx_session_start", "unknown config_mask bits "
                     "0x%lx", config_mask & ~SESSION_CONFIG_MASK);
    if (config_mask && !config)
        dsm_rt_fatal("shmem_ctx_session_start", "config_mask 0x%lx with a "
                     "NULL config", config_mask);
}
DSM_WEAK(ctx_session_start)

void pshmem_ctx_session_stop(shmem_ctx_t ctx)
{
    DSM_CHECK_INIT("shmem_ctx_session_stop");
    (void)ctx;
}
DSM_WEAK(ctx_session_stop)
