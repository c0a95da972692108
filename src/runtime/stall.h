/*
 * What a PE waits for when its job is ended: a wait of the library that
 * lasts (wait_until, signal waits, locks, barriers and collectives)
 * publishes a one-line description of itself once it has lasted a
 * second; a PE ended by SIGTERM, SIGINT or SIGHUP (the launcher's
 * --timeout, mpirun's or srun's end of a job, Ctrl-C) prints it before it
 * dies:
 *
 *   dmashmem: PE 1: signal 15 (Terminated) ended a wait of 5.0 s in
 *   shmem_long_wait_until: the word at 0x4040a0 SHMEM_CMP_EQ 5 (it held 0)
 *
 * Waits below the API (a quiet's for the network or the DMA engines, a
 * blocking network operation's, the DMA layer's for a queue or its
 * request ring) name the routine the program called, found from the
 * stack when they publish (routine NULL), and what they wait for
 * (net/ofi_ep.c, runtime/path.c, runtime/rma.c, sdma/sdma.c).
 *
 * A PE that prints nothing was not waiting in the library. The waits
 * themselves pay nothing until they have lasted (a counter, then a clock
 * read every 64 backoff steps); the description is written once.
 *
 * The same file reports faults (SIGSEGV, SIGBUS, SIGFPE, SIGILL): one
 * line with the address and, inside the library, the routine and the
 * likely cause, then the stack, a line per frame.
 */
#ifndef DSM_RT_STALL_H
#define DSM_RT_STALL_H

#include <stddef.h>
#include <stdint.h>

/* Describes a wait into buf (n bytes, always terminated): "the word at
 * 0x... SHMEM_CMP_EQ 5 (it held 0)". */
typedef void (*dsm_stall_describe_fn)(const void *arg, char *buf, size_t n);

typedef struct dsm_stall {
    uint32_t n;          /* backoff steps so far */
    int published;       /* this wait's description is the PE's */
    uint64_t since_ns;   /* first clock read of the wait, 0 before */
} dsm_stall_t;

/* A wait that lasts publishes what it waits for after PUBLISH_NS. */
#define DSM_STALL_PUBLISH_NS 1000000000ull

void dsm_stall_slow(dsm_stall_t *s, const char *routine,
                    dsm_stall_describe_fn describe, const void *arg);
/* At every backoff step of a wait (cheap: a counter). */
static inline void dsm_stall_tick(dsm_stall_t *s, const char *routine,
                                  dsm_stall_describe_fn describe,
                                  const void *arg)
{
    if ((++s->n & 63) == 0)
        dsm_stall_slow(s, routine, describe, arg);
}
/* At the end of the wait: withdraws its description. */
void dsm_stall_withdraw(dsm_stall_t *s);
static inline void dsm_stall_done(dsm_stall_t *s)
{
    if (s->published)
        dsm_stall_withdraw(s);
}

/* Persistent requests whose instances are posted ahead where that holds
 * up other work of the process (CUDA streams: cudaDeviceSynchronize and
 * legacy-stream copies wait behind them; coll/persistent.c): +1 when one
 * posts ahead, -1 at its release (shmemx_req_free, finalize). A PE ended
 * by a signal outside the library's waits while some are live says so:
 * the one hang the library can name though the program's own call is the
 * one waiting:
 *
 *   dmashmem: PE 0: signal 15 (Terminated) ended this PE outside the
 *   library's waits while 1 persistent request keeps instances posted
 *   ahead on CUDA streams: ...
 */
void dsm_stall_posted_ahead(int delta);
/* What waits behind such instances: the line above, and the note PE 0
 * prints when a request first posts ahead (coll/persistent.c). */
#define DSM_STALL_AHEAD_HOLDS                                                  \
    "until shmemx_req_free, cudaDeviceSynchronize does not return and a "     \
    "cudaMemcpy on the legacy stream can wait behind them"

/* shmem_init / shmem_finalize: the handlers of SIGTERM, SIGINT and
 * SIGHUP, and of the faults, each
 * only where the program left the signal at its default action. */
void dsm_stall_install(void);
void dsm_stall_uninstall(void);

#endif /* DSM_RT_STALL_H */
