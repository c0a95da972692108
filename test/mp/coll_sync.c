/*
 * Barriers back to back: shmem_barrier_all, shmem_sync_all and
 * shmem_team_sync (world, a strided team, a reversed team, and the C11
 * shmem_sync generic), thousands of times, with only the barrier itself
 * between one PE's write and its neighbour's check. Each round writes the
 * round number into the neighbour's slot of parity r (double buffering:
 * the slot is rewritten two barriers later, after its reader checked it).
 */
#include "mp.h"

/* Rounds per barrier kind; a tenth across the network (each barrier
 * round is then a network atomic, ~100 us on loopback tcp). */
#define ROUNDS (mp_network() ? 200 : 2000)

static long slot[2];

static void ring(shmem_team_t t, int rounds, int kind, const char *what)
{
    int n = shmem_team_n_pes(t), i = shmem_team_my_pe(t);
    if (t == SHMEM_TEAM_INVALID)
        return;
    int right = shmem_team_translate_pe(t, (i + 1) % n, SHMEM_TEAM_WORLD);
    for (int r = 1; r <= rounds; r++) {
        shmem_long_p(&slot[r & 1], r * 7 + kind, right);
        switch (kind) {
        case 0:
            shmem_barrier_all();
            break;
        case 1:
            shmem_quiet();
            shmem_sync_all();
            break;
        case 2:
            shmem_quiet();
            CHECK(shmem_team_sync(t) == 0, "team_sync returns 0");
            break;
        default:
            shmem_quiet();
            shmem_sync(t); /* C11: one argument selects shmem_team_sync */
            break;
        }
        long v = slot[r & 1];
        if (v != r * 7 + kind)
            MP_FAIL("%s round %d: slot holds %ld, expected %d", what, r, v,
                    r * 7 + kind);
    }
}

int main(void)
{
    mp_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    shmem_team_t odd = SHMEM_TEAM_INVALID, rev;
    double t0 = mp_now();

    ring(SHMEM_TEAM_WORLD, ROUNDS, 0, "barrier_all");
    ring(SHMEM_TEAM_WORLD, ROUNDS, 1, "sync_all");
    ring(SHMEM_TEAM_WORLD, ROUNDS, 2, "team_sync(WORLD)");
    ring(SHMEM_TEAM_SHARED, ROUNDS / 2, 3, "sync(SHARED)");
    shmem_barrier_all();
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, npes - 1, -1, npes,
                                   NULL, 0, &rev) == 0,
          "reversed");
    ring(rev, ROUNDS, 2, "team_sync(reversed)");
    shmem_barrier_all();
    if (npes > 1) {
        CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 1, 2, npes / 2, NULL,
                                       0, &odd) == 0,
              "odds");
        /* Only the odd PEs run these; the evens go straight on. */
        ring(odd, ROUNDS, 2, "team_sync(odd)");
    }
    /* Mixed: a world barrier, then a team sync, many times over. */
    for (int r = 0; r < ROUNDS / 3; r++) {
        shmem_barrier_all();
        shmem_team_sync(rev);
        shmem_sync_all();
    }
    /* The deprecated active-set shmem_sync / shmem_barrier as the C11
     * macro's 4-argument form. */
    static long psync[SHMEM_BARRIER_SYNC_SIZE];
    for (int i = 0; i < SHMEM_BARRIER_SYNC_SIZE; i++)
        psync[i] = SHMEM_SYNC_VALUE;
    shmem_barrier_all();
    for (int r = 1; r <= ROUNDS / 3; r++) {
        shmem_long_p(&slot[r & 1], -r, (me + 1) % npes);
        shmem_barrier(0, 0, npes, psync);
        CHECK(slot[r & 1] == -r, "active-set barrier round %d", r);
        shmem_long_p(&slot[(r + 1) & 1], -r - 1000000, (me + 1) % npes);
        shmem_quiet();
        shmem_sync(0, 0, npes, psync);
        CHECK(slot[(r + 1) & 1] == -r - 1000000,
              "active-set sync round %d", r);
        shmem_barrier(0, 0, npes, psync);
    }
    shmem_team_destroy(odd);
    shmem_team_destroy(rev);
    if (me == 0)
        printf("coll_sync: %d PEs, %.2f s\n", npes, mp_now() - t0);
    shmem_finalize();
    return 0;
}
