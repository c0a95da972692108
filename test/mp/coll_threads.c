/*
 * Chain collectives of two teams in two threads (issue #14, Threads):
 * blocking routines may block only their caller.
 *
 * Teams A and B both hold every PE. Even PEs run a collective on A in one
 * thread and, a moment later, the same collective on B in a second thread;
 * odd PEs run B, then A, in one thread. An even PE's A cannot finish before
 * the odd PEs reach A, which they do only after B finished everywhere, so
 * B must run on the even PEs while their A waits. It hangs when A's chain
 * holds an engine queue that B's chain needs (a WAIT for the odd PEs' ready
 * at the head of a shared queue). Blocks of 128 KiB, above the direct-path
 * size (set to 64 KiB here: on a node with fewer than two cores per PE
 * auto runs every size direct), so fcollect, collect and alltoall run
 * engine chains.
 */
#include <pthread.h>

#include "mp.h"

#define NB (128 * 1024) /* bytes per PE block */
#define ROUNDS 3

enum { OP_FCOLLECT, OP_COLLECT, OP_ALLTOALL, NOPS };
static const char *const op_name[NOPS] = {"fcollect", "collect", "alltoall"};

static int me, npes;
static shmem_team_t team[2];
static unsigned char *src[2], *dst[2]; /* per team: NB*npes each */

static unsigned char pat(int from, int to, int tm, int op, int round,
                         size_t k)
{
    return (unsigned char)(from * 31 + to * 7 + tm * 13 + op * 5 + round * 3 +
                           (int)(k % 251));
}

struct job {
    int tm, op, round;
    int delay_ms;
};

static void run_one(int tm, int op, int round)
{
    unsigned char *s = src[tm], *d = dst[tm];
    size_t k;
    int j, rc = -1;

    for (j = 0; j < npes; j++)
        for (k = 0; k < NB; k++)
            s[(size_t)j * NB + k] = pat(me, op == OP_ALLTOALL ? j : 0, tm, op,
                                        round, k);
    memset(d, 0xee, (size_t)npes * NB);
    switch (op) {
    case OP_FCOLLECT:
        rc = shmem_fcollectmem(team[tm], d, s, NB);
        break;
    case OP_COLLECT:
        rc = shmem_collectmem(team[tm], d, s, NB);
        break;
    case OP_ALLTOALL:
        rc = shmem_alltoallmem(team[tm], d, s, NB);
        break;
    }
    CHECK(rc == 0, "%s on team %c returned %d", op_name[op], 'A' + tm, rc);
    for (j = 0; j < npes; j++)
        for (k = 0; k < NB; k++) {
            unsigned char w = pat(j, op == OP_ALLTOALL ? me : 0, tm, op,
                                  round, k);
            CHECK(d[(size_t)j * NB + k] == w,
                  "%s round %d team %c: byte %zu of PE %d's block is %u, "
                  "expected %u", op_name[op], round, 'A' + tm, k, j,
                  d[(size_t)j * NB + k], w);
        }
}

static void *thread_main(void *arg)
{
    const struct job *jb = arg;
    if (jb->delay_ms)
        usleep((useconds_t)jb->delay_ms * 1000);
    run_one(jb->tm, jb->op, jb->round);
    return NULL;
}

int main(void)
{
    int provided, tm, op, round;

    alarm(MP_ALARM_S);
    setenv("SHMEM_COLL_DIRECT_MAX", "65536", 0);
    CHECK(shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided) == 0,
          "init_thread");
    CHECK(provided == SHMEM_THREAD_MULTIPLE, "provided %d", provided);
    me = shmem_my_pe();
    npes = shmem_n_pes();
    for (tm = 0; tm < 2; tm++) {
        CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, npes, NULL, 0,
                                       &team[tm]) == 0,
              "split team %c", 'A' + tm);
        src[tm] = shmem_malloc((size_t)npes * NB);
        dst[tm] = shmem_malloc((size_t)npes * NB);
        CHECK(src[tm] && dst[tm], "shmem_malloc");
    }

    for (op = 0; op < NOPS; op++)
        for (round = 0; round < ROUNDS; round++) {
            if (me % 2 == 0) {
                /* A first in T1; B in T2 once A's chain is posted. */
                struct job ja = {0, op, round, 0}, jb = {1, op, round, 30};
                pthread_t t1, t2;
                CHECK(pthread_create(&t1, NULL, thread_main, &ja) == 0,
                      "pthread_create");
                CHECK(pthread_create(&t2, NULL, thread_main, &jb) == 0,
                      "pthread_create");
                pthread_join(t1, NULL);
                pthread_join(t2, NULL);
            } else {
                run_one(1, op, round); /* B, then A */
                run_one(0, op, round);
            }
            shmem_barrier_all();
        }

    for (tm = 0; tm < 2; tm++) {
        shmem_free(src[tm]);
        shmem_free(dst[tm]);
        shmem_team_destroy(team[tm]);
    }
    if (me == 0)
        printf("coll_threads: %d PEs, %d ops x %d rounds OK\n", npes, NOPS,
               ROUNDS);
    shmem_finalize();
    return 0;
}
