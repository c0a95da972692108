/*
 * Teams and collectives: shared definitions.
 *
 * A team is an ordered list of world PEs. Every team owns a slot: a range of
 * the internal area (after the user heap, see rt.h DSM_INTERNAL_SIZE) at the
 * same offset on every member, agreed by the parent team at creation, that
 * holds the team's synchronization words.
 *
 * Synchronization is built from one primitive, the pairwise signal: member
 * a's k-th signal to member b stores k into b's word sig[a] of the team's
 * slot; b's k-th wait on a waits until sig[a] >= k. Both sides count, so no
 * word is ever reset, any number of collectives may run back to back, and a
 * DMA engine can deliver a signal (a SIGNAL command stores an absolute
 * value) as well as a CPU can. Barriers, ready/arrival handshakes of the
 * data-moving chains and reductions all use it.
 */
#ifndef DSM_COLL_H
#define DSM_COLL_H

#include "rt.h"

/* Words of one team slot, per member: signals received from each member,
 * in two independent channels (CPU-side protocol and engine chains), so
 * that a chain posted ahead cannot be confused with a barrier. */
enum { DSM_CHAN_CPU = 0, DSM_CHAN_DMA = 1, DSM_CHAN_MAX = 2 };

struct dsm_team {
    int size;      /* members */
    int my_idx;    /* this PE's index in the team, -1 if not a member */
    int *pes;      /* [size] world PE of each member */
    int start, stride; /* when the members are start + i*stride, else stride 0 */
    int slot;      /* internal slot index, same on every member */
    uint64_t *sig; /* this PE's words: sig[chan * size + member] */
    uint64_t *sent; /* [chan * size + member] signals sent (private) */
    uint64_t *recv; /* [chan * size + member] signals waited for (private) */
    shmem_team_config_t config;
    long config_mask;
    int nctx;            /* contexts created from this team */
    struct dsm_team *parent;
    int predefined;      /* WORLD / SHARED: never destroyed by the user */
    pthread_mutex_t lock; /* serializes collectives of this team */
};

typedef struct dsm_team dsm_team_t;

extern dsm_team_t dsm_team_world, dsm_team_shared;

/* Team set-up at init/finalize (after segments and sdma are up). */
dsm_status_t dsm_coll_init(void);
void dsm_coll_fini(void);

/* World PE of member i. */
static inline int dsm_team_pe(const dsm_team_t *t, int i)
{
    return t->pes[i];
}

/* Address, in this process, of member m's signal word that receives our
 * signals on channel chan. */
uint64_t *dsm_team_peer_sig(dsm_team_t *t, int chan, int m);

/* CPU pairwise signals. */
void dsm_team_signal(dsm_team_t *t, int chan, int m);
void dsm_team_wait(dsm_team_t *t, int chan, int m);
/* Barrier over the team's members (dissemination), CPU channel. */
void dsm_team_sync(dsm_team_t *t);

#endif /* DSM_COLL_H */
