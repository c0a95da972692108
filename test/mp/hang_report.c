/*
 * The program of test/mp/hang_report.sh: each mode makes the PEs wait in
 * the library for something that never comes (or not wait at all), after
 * printing "PE <me> waits" (or "PE <me> computes"), so that the script can
 * end the job from outside and check each PE's line (src/runtime/stall.h):
 *   mixed     even PEs in shmem_barrier_all, odd PEs in
 *             shmem_long_wait_until(&word, SHMEM_CMP_EQ, 5) (2+ PEs)
 *   set       every PE in shmem_int_wait_until_all(3 words, SHMEM_CMP_LT, -2)
 *   signal    every PE in shmem_signal_wait_until(SHMEM_CMP_GE, 3)
 *   lock      PE 0 holds a lock and sleeps; the others in shmem_set_lock
 *   team      PE 0 sleeps; the others in shmem_team_sync of a team of all
 *             PEs made by shmem_team_split_strided (2+ PEs)
 *   coll      PE 0 sleeps; the others in shmem_long_fcollect (2+ PEs)
 *   sleep     every PE sleeps in its own code (no line)
 *   waited    PE 0 sleeps 2 s, then every PE meets in shmem_barrier_all
 *             (the others' wait lasted: described, then withdrawn) and
 *             sleeps in its own code (no line) (2+ PEs)
 *   quiet     PE 0 puts 1 MiB to PE 1 with putmem_nbi, once PE 1 has
 *             left the library, and waits in shmem_quiet; the others sleep
 *             in their own code (2+ PEs; run over the network with no
 *             progress thread, where the write needs PE 1 to progress: it
 *             never completes)
 *   get       the same with a blocking shmem_getmem of 1 MiB from PE 1
 *   handler   the program's own SIGTERM handler, set before shmem_init,
 *             prints "PE <me>: own handler" and exits 3; the PE waits as
 *             in set (the library's handler is not installed)
 * The marker argument the scripts add is ignored.
 */
#include <fcntl.h>
#include <signal.h>

#include "mp.h"

static long word;
static int set[3];
static uint64_t sig;
static long lock;
static long src[2], dst[2 * 64];

static void own_handler(int s)
{
    char b[64];
    int n = snprintf(b, sizeof(b), "PE %d: own handler\n", shmem_my_pe());
    ssize_t rc = write(STDERR_FILENO, b, (size_t)n);
    (void)rc;
    (void)s;
    _exit(3);
}

static void say(int me, const char *what)
{
    printf("PE %d %s\n", me, what);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    const char *m = argc > 1 ? argv[1] : "set";
    if (!strcmp(m, "handler"))
        signal(SIGTERM, own_handler);
    shmem_init();
    const int me = shmem_my_pe(), n = shmem_n_pes();
    CHECK(n <= 64, "at most 64 PEs");
    shmem_barrier_all();
    if (!strcmp(m, "mixed")) {
        CHECK(n >= 2, "mixed needs 2 PEs");
        say(me, "waits");
        if (me % 2 == 0)
            shmem_barrier_all();
        else
            shmem_long_wait_until(&word, SHMEM_CMP_EQ, 5);
    } else if (!strcmp(m, "set") || !strcmp(m, "handler")) {
        say(me, "waits");
        shmem_int_wait_until_all(set, 3, NULL, SHMEM_CMP_LT, -2);
    } else if (!strcmp(m, "signal")) {
        say(me, "waits");
        shmem_signal_wait_until(&sig, SHMEM_CMP_GE, 3);
    } else if (!strcmp(m, "lock")) {
        CHECK(n >= 2, "lock needs 2 PEs");
        if (me == 0)
            shmem_set_lock(&lock);
        shmem_barrier_all();
        say(me, me == 0 ? "computes" : "waits");
        if (me == 0)
            for (;;)
                sleep(100);
        shmem_set_lock(&lock);
    } else if (!strcmp(m, "team") || !strcmp(m, "coll")) {
        CHECK(n >= 2, "%s needs 2 PEs", m);
        shmem_team_t t = SHMEM_TEAM_INVALID;
        if (!strcmp(m, "team"))
            CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, n, NULL,
                                           0, &t) == 0,
                  "team split");
        say(me, me == 0 ? "computes" : "waits");
        if (me == 0)
            for (;;)
                sleep(100);
        if (t != SHMEM_TEAM_INVALID)
            shmem_team_sync(t);
        else
            shmem_long_fcollect(SHMEM_TEAM_WORLD, dst, src, 2);
    } else if (!strcmp(m, "waited")) {
        CHECK(n >= 2, "waited needs 2 PEs");
        if (me == 0)
            sleep(2);
        shmem_barrier_all();
        say(me, "computes");
        for (;;)
            sleep(100);
    } else if (!strcmp(m, "quiet") || !strcmp(m, "get")) {
        CHECK(n >= 2, "%s needs 2 PEs", m);
        const size_t big = 1 << 20;
        char *to = shmem_malloc(big), *from = malloc(big);
        CHECK(to && from, "allocation");
        memset(from, 1, big);
        shmem_barrier_all();
        /* PE 1 says, through a file, once it is out of the library: a PE
         * still polling in the barrier's last round would serve the
         * operation (one CI run saw the get complete). */
        char go[256];
        const char *tmp = getenv("TMPDIR");
        snprintf(go, sizeof(go), "%s/dsm-hang-report-go.%d",
                 tmp && *tmp ? tmp : "/tmp", (int)getppid());
        say(me, me == 0 ? "waits" : "computes");
        if (me != 0) {
            if (me == 1)
                close(open(go, O_CREAT | O_WRONLY, 0600));
            for (;;)
                sleep(100);
        }
        for (int i = 0; access(go, F_OK) != 0; i++) {
            CHECK(i < 3000, "PE 1 did not leave the library within 30 s");
            usleep(10000);
        }
        unlink(go);
        if (!strcmp(m, "get")) {
            shmem_getmem(from, to, big, 1);
        } else {
            shmem_putmem_nbi(to, from, big, 1);
            shmem_quiet();
        }
    } else if (!strcmp(m, "sleep")) {
        say(me, "computes");
        for (;;)
            sleep(100);
    } else {
        MP_FAIL("unknown mode %s", m);
    }
    MP_FAIL("the wait of mode %s ended", m);
}
