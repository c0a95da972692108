/*
 * Test client for the bootstrap back ends: links boot*.c and common.c
 * directly (not libdmashmem) and exercises the ops the way the runtime will.
 *
 *   boot_client [--marker=X] [--ignore-term] MODE [ARGS]
 *
 * --marker=X is ignored: tests use it to find their processes with pgrep.
 * --ignore-term ignores SIGTERM, so only the launcher's SIGKILL ends us.
 * Modes (all start with init and a barrier unless said otherwise):
 *   info                 print the backend and layout, then fini
 *   env NAME             (no barrier) print NAME=value or NAME unset, fini
 *   kv [ROUNDS]          key-value exchange among all ranks, fence, barrier
 *   fd                   every rank passes a memfd, every other reads it
 *   exit RANK STATUS     RANK exits with STATUS (no fini), the others sleep
 *   done RANK            RANK calls fini and exits 0, the others sleep
 *   signal RANK SIG      RANK raises SIG, the others sleep
 *   abort RANK STATUS [MSG]  RANK calls abort, the others sleep
 *   sleep                every rank sleeps for ever
 *   spam LINES LEN       every rank prints LINES lines of about LEN bytes
 *   partial              print a last line without newline
 *   stdin                rank 0 echoes one stdin line, others expect EOF
 *   lostpeer RANK        RANK exits 0 without fini, the others' barrier fails
 *   hang                 sleep for ever without even starting the bootstrap
 *   noboot STATUS        exit with STATUS without starting the bootstrap
 *   fakefd               (PMIx, >= 2 ranks) rank 1 publishes as its
 *                        descriptor server a socket another process listens
 *                        on; rank 0 must refuse it rather than take the
 *                        descriptor it offers
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "boot/boot.h"
#include "boot/pmix_fd.h"
#include "common/common.h"
#include "common/fdpass.h"

static const dsm_boot_ops_t *ops;
static dsm_boot_info_t info;

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "boot_client[%d]: check failed: %s: ", info.rank,  \
                    #cond);                                                    \
            fprintf(stderr, __VA_ARGS__);                                      \
            fputc('\n', stderr);                                               \
            exit(99);                                                          \
        }                                                                      \
    } while (0)

static DSM_NORETURN void sleep_forever(void)
{
    for (;;)
        pause();
}

static void value_for(char *buf, size_t cap, int rank, int round)
{
    /* Lengths differ per rank so that sizes are checked too. */
    int n = snprintf(buf, cap, "value-of-rank-%d-round-%d-", rank, round);
    for (int i = 0; i < rank % 17 && (size_t)n + 1 < cap; i++)
        buf[n++] = (char)('a' + i);
    buf[n] = '\0';
}

static int mode_kv(int rounds)
{
    char key[DSM_BOOT_KEY_MAX + 1], val[DSM_BOOT_VAL_MAX], want[256];
    size_t len;
    dsm_status_t st;

    /* A get of a key not yet published waits for it: rank r+1 publishes
     * "late" a little after rank r asks for it. */
    usleep((useconds_t)(info.rank % 8) * 5000);
    value_for(want, sizeof(want), info.rank, -1);
    CHECK(ops->put("late", want, strlen(want)) == DSM_OK, "put late");
    int next = (info.rank + 1) % info.size;
    len = sizeof(val);
    st = ops->get(next, "late", val, &len);
    value_for(want, sizeof(want), next, -1);
    CHECK(st == DSM_OK && len == strlen(want) && !memcmp(val, want, len),
          "get late from %d: %s", next, dsm_status_str(st));

    for (int r = 0; r < rounds; r++) {
        snprintf(key, sizeof(key), "key-%d", r);
        value_for(want, sizeof(want), info.rank, r);
        CHECK(ops->put(key, want, strlen(want)) == DSM_OK, "put");
        CHECK(ops->fence() == DSM_OK, "fence");
        for (int p = 0; p < info.size; p++) {
            len = sizeof(val);
            st = ops->get(p, key, val, &len);
            value_for(want, sizeof(want), p, r);
            CHECK(st == DSM_OK && len == strlen(want) &&
                      !memcmp(val, want, len),
                  "round %d get from %d: %s", r, p, dsm_status_str(st));
        }
        CHECK(ops->barrier() == DSM_OK, "barrier");
    }

    /* Largest value, and a buffer too small for it. */
    memset(val, 'A' + info.rank % 26, sizeof(val));
    CHECK(ops->put("big", val, sizeof(val)) == DSM_OK, "put big");
    CHECK(ops->put("big", val, sizeof(val)) == DSM_OK, "put big again");
    CHECK(ops->put("huge", val, DSM_BOOT_VAL_MAX + 1) != DSM_OK, "too big");
    CHECK(ops->fence() == DSM_OK, "fence");
    len = sizeof(val);
    CHECK(ops->get(next, "big", val, &len) == DSM_OK &&
              len == DSM_BOOT_VAL_MAX && val[0] == 'A' + next % 26 &&
              val[len - 1] == 'A' + next % 26,
          "get big");
    len = 10;
    CHECK(ops->get(next, "big", val, &len) == DSM_ERR_OVERFLOW, "overflow");
    CHECK(ops->barrier() == DSM_OK, "barrier");
    printf("kv ok rank %d size %d\n", info.rank, info.size);
    return 0;
}

static int mode_fd(void)
{
    char want[64], got[64];
    int fd = memfd_create("boot_client", MFD_CLOEXEC);
    CHECK(fd >= 0, "memfd_create: %s", strerror(errno));
    int n = snprintf(want, sizeof(want), "memfd of rank %d", info.rank);
    CHECK(write(fd, want, (size_t)n) == n, "write");
    CHECK(ops->put_fd("mem", fd) == DSM_OK, "put_fd");
    /* The launcher keeps its own duplicate: closing ours must not matter. */
    close(fd);
    CHECK(ops->fence() == DSM_OK, "fence");
    for (int p = 0; p < info.size; p++) {
        if (p == info.rank && info.size > 1)
            continue;
        int pfd = -1;
        dsm_status_t st = ops->get_fd(p, "mem", &pfd);
        CHECK(st == DSM_OK && pfd >= 0, "get_fd from %d: %s", p,
              dsm_status_str(st));
        snprintf(want, sizeof(want), "memfd of rank %d", p);
        ssize_t r = pread(pfd, got, sizeof(got), 0);
        CHECK(r == (ssize_t)strlen(want) && !memcmp(got, want, (size_t)r),
              "content of rank %d's memfd", p);
        close(pfd);
    }
    CHECK(ops->barrier() == DSM_OK, "barrier");
    printf("fd ok rank %d size %d\n", info.rank, info.size);
    return 0;
}

/* A descriptor server that is not the publishing PE: it answers every
 * request (whatever the token) with a memfd. Runs in a child process, so
 * the socket's SO_PEERCRED names the child, not the PE. */
static DSM_NORETURN void fake_server(int report)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    socklen_t sl = sizeof(sa_family_t);
    int lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    int mfd = memfd_create("not_yours", MFD_CLOEXEC);

    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (lfd < 0 || mfd < 0 || bind(lfd, (struct sockaddr *)&sa, sl) < 0 ||
        listen(lfd, 8) < 0)
        _exit(1);
    sl = sizeof(sa);
    if (getsockname(lfd, (struct sockaddr *)&sa, &sl) < 0)
        _exit(1);
    uint32_t n = (uint32_t)(sl - offsetof(struct sockaddr_un, sun_path));
    if (write(report, &n, sizeof(n)) != sizeof(n) ||
        write(report, sa.sun_path, n) != (ssize_t)n)
        _exit(1);
    close(report);
    for (;;) {
        fd_req_t req;
        fd_rep_t rep = {.magic = FD_MAGIC, .status = DSM_OK};
        struct iovec iov = {&rep, sizeof(rep)};
        int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (c < 0)
            continue;
        if (recv(c, &req, sizeof(req), 0) > 0)
            dsm_fd_send(c, &iov, 1, mfd, MSG_NOSIGNAL);
        close(c);
    }
}

static int mode_fakefd(void)
{
    pid_t child = -1;
    int rc = 0;

    CHECK(info.size >= 2, "fakefd needs 2 ranks");
    if (info.rank == 1) {
        int p[2];
        fdsrv_addr_t a;
        CHECK(pipe(p) == 0, "pipe: %s", strerror(errno));
        child = fork();
        CHECK(child >= 0, "fork: %s", strerror(errno));
        if (child == 0) {
            close(p[0]);
            fake_server(p[1]);
        }
        close(p[1]);
        /* The address the PMIx bootstrap would publish, with our pid but
         * the child's socket. */
        memset(&a, 0, sizeof(a));
        a.magic = FD_MAGIC;
        a.pid = (uint32_t)getpid();
        CHECK(read(p[0], &a.namelen, sizeof(a.namelen)) == sizeof(a.namelen) &&
                  a.namelen <= sizeof(a.name) &&
                  read(p[0], a.name, a.namelen) == (ssize_t)a.namelen,
              "fake server's name");
        close(p[0]);
        /* put() prefixes "dsm.": the same key as the real server's. */
        CHECK(ops->put(FDSRV_KEY + strlen(KEY_PREFIX), &a, sizeof(a)) == DSM_OK,
              "put fdsrv");
    }
    CHECK(ops->fence() == DSM_OK, "fence");
    if (info.rank == 0) {
        int fd = -1;
        dsm_status_t st = ops->get_fd(1, "mem", &fd);
        printf("fakefd: get_fd from rank 1: %s\n",
               st == DSM_OK ? "accepted" : "refused");
        if (fd >= 0)
            close(fd);
        rc = st == DSM_OK;
    }
    CHECK(ops->barrier() == DSM_OK, "barrier");
    if (child > 0) {
        kill(child, SIGKILL);
        waitpid(child, NULL, 0);
    }
    return rc;
}

static void spam(int lines, int len)
{
    /* "<rank>:<line>:<letters>:end", letters all one letter that depends
     * on rank and line, so a line mixed with another one is detected. */
    char *buf = malloc((size_t)len + 64);
    CHECK(buf, "malloc");
    for (int i = 0; i < lines; i++) {
        int n = sprintf(buf, "%d:%d:", info.rank, i);
        memset(buf + n, 'a' + (info.rank + i) % 26, (size_t)len);
        n += len;
        n += sprintf(buf + n, ":end\n");
        /* stderr too, unbuffered: many small writes */
        fwrite(buf, 1, (size_t)n, (i % 10 == 0) ? stderr : stdout);
    }
    free(buf);
}

int main(int argc, char **argv)
{
    int i = 1;
    for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
        if (strcmp(argv[i], "--ignore-term") == 0)
            signal(SIGTERM, SIG_IGN);
        else if (strncmp(argv[i], "--marker=", 9) != 0) {
            fprintf(stderr, "boot_client: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (i >= argc) {
        fprintf(stderr, "boot_client: no mode\n");
        return 2;
    }
    const char *mode = argv[i++];
    int nargs = argc - i;
    char **args = argv + i;

    if (strcmp(mode, "hang") == 0)
        sleep_forever();
    if (strcmp(mode, "noboot") == 0)
        return nargs > 0 ? atoi(args[0]) : 0;
    dsm_status_t st = dsm_boot_select(getenv("SHMEM_BOOTSTRAP"), &ops, &info);
    if (st != DSM_OK) {
        fprintf(stderr, "boot_client: bootstrap failed: %s\n",
                dsm_status_str(st));
        return 98;
    }
    dsm_log_pe = info.rank;
    if (strcmp(mode, "env") == 0 && nargs == 1) {
        /* What the launcher exported (--mps): NAME=value, or NAME unset. */
        const char *v = getenv(args[0]);
        printf("rank %d %s%s%s\n", info.rank, args[0], v ? "=" : " unset",
               v ? v : "");
        ops->fini();
        return 0;
    }
    if (strcmp(mode, "info") == 0) {
        int wfd = ops->watch_fd();
        if (wfd >= 0) {
            /* Not readable while the launcher lives. */
            struct pollfd p = {.fd = wfd, .events = POLLIN};
            CHECK(poll(&p, 1, 0) == 0, "watch_fd readable");
        }
        printf("backend %s rank %d size %d node_rank %d node_size %d node_id "
               "%d num_nodes %d watch %s\n",
               ops->name, info.rank, info.size, info.node_rank,
               info.node_size, info.node_id, info.num_nodes,
               wfd >= 0 ? "yes" : "no");
        ops->fini();
        return 0;
    }
    CHECK(ops->barrier() == DSM_OK, "first barrier");
    int rc = 0;
    if (strcmp(mode, "kv") == 0) {
        rc = mode_kv(nargs > 0 ? atoi(args[0]) : 3);
    } else if (strcmp(mode, "fd") == 0) {
        rc = mode_fd();
    } else if (strcmp(mode, "exit") == 0 && nargs == 2) {
        if (info.rank == atoi(args[0])) {
            fflush(stdout);
            _exit(atoi(args[1]));
        }
        sleep_forever();
    } else if (strcmp(mode, "fakefd") == 0) {
        rc = mode_fakefd();
    } else if (strcmp(mode, "done") == 0 && nargs == 1) {
        if (info.rank == atoi(args[0])) {
            fflush(stdout);
            ops->fini();
            _exit(0);
        }
        sleep_forever();
    } else if (strcmp(mode, "signal") == 0 && nargs == 2) {
        if (info.rank == atoi(args[0])) {
            signal(atoi(args[1]), SIG_DFL);
            raise(atoi(args[1]));
        }
        sleep_forever();
    } else if (strcmp(mode, "abort") == 0 && nargs >= 2) {
        if (info.rank == atoi(args[0]))
            ops->abort(atoi(args[1]), nargs > 2 ? args[2] : NULL);
        sleep_forever();
    } else if (strcmp(mode, "sleep") == 0) {
        sleep_forever();
    } else if (strcmp(mode, "spam") == 0 && nargs == 2) {
        spam(atoi(args[0]), atoi(args[1]));
    } else if (strcmp(mode, "partial") == 0) {
        printf("rank %d says no newline", info.rank);
    } else if (strcmp(mode, "stdin") == 0) {
        char line[256];
        if (fgets(line, sizeof(line), stdin))
            printf("rank %d read: %s", info.rank, line);
        else
            printf("rank %d stdin eof\n", info.rank);
    } else if (strcmp(mode, "lostpeer") == 0 && nargs == 1) {
        if (info.rank == atoi(args[0]))
            _exit(0); /* no fini: the others cannot complete a barrier */
        st = ops->barrier();
        printf("rank %d barrier after lost peer: %s\n", info.rank,
               dsm_status_str(st));
        rc = st == DSM_ERR_PEER ? 0 : 1;
    } else {
        fprintf(stderr, "boot_client: bad mode or arguments: %s\n", mode);
        rc = 2;
    }
    fflush(stdout);
    ops->fini();
    return rc;
}
