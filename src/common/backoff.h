/*
 * The waiting policy shared by every waiter in the library (runtime, sdma,
 * net): spin, then yield, then sleep on a wake word.
 */
#ifndef DSM_BACKOFF_H
#define DSM_BACKOFF_H

#include <stdint.h>

#include "common/common.h"

/* Waiting policy shared by every waiter in the library: spin, then yield,
 * then sleep on a wake word. Call dsm_backoff() once per failed check. */
/* Set at init from SHMEM_WAIT_MODE. 0: waiters spin, then yield forever,
 * so a flag written by a plain put is seen within a yield, never after a
 * bounded sleep; 1: they yield a few times, then sleep (PEs outnumber
 * cores); 2: they never spin: they sleep at the first failed check. */
extern int dsm_backoff_may_sleep;

typedef struct dsm_backoff {
    uint32_t n;
    uint32_t sleep_us;
} dsm_backoff_t;
void dsm_backoff(dsm_backoff_t *b, dsm_wake_t *wake, int (*cond)(void *),
                 void *arg);
/* Called at every backoff step when set: the network path's progress
 * (src/net), so that every wait of the library, whatever it waits for,
 * also answers remote operations on this PE's memory. */
extern void (*dsm_backoff_progress)(void);
/* When set, a waiter's sleep step calls it instead of sleeping on its wake
 * word: the network path on a PE whose every peer is remote (src/net),
 * which blocks until network activity arrives or ns nanoseconds pass. */
extern int (*dsm_backoff_block)(uint64_t ns);

#endif /* DSM_BACKOFF_H */
