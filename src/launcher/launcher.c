/*
 * shmem_launcher (also installed as oshrun): starts N PEs of one program on
 * this node and serves their bootstrap (rank, size, key-value exchange,
 * barriers, descriptor passing, abort) on a unix socket, forwards their
 * output line by line, and ends the whole job as soon as one PE fails.
 *
 * One thread, one poll(2) loop over: a signalfd (SIGCHLD and the signals we
 * forward), the exec-error pipe, the listening socket, every PE connection
 * and every PE output pipe. Nothing busy-waits; timers are poll timeouts.
 *
 * Cleanup: the socket lives in a 0700 mkdtemp directory that is removed as
 * soon as all PEs have connected and on every exit path. A janitor process,
 * forked before the directory exists, holds the read end of a pipe from the
 * launcher; when it sees EOF (the launcher died, even by SIGKILL) it removes
 * the directory and kills the PEs the launcher told it about.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__has_include)
#if __has_include("dsm_config.h")
#include "dsm_config.h"
#endif
#endif

#include "common/common.h"
#include "boot/wire.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

#define PROG "shmem_launcher"
#define EXIT_USAGE 2
#define EXIT_NOEXEC 127
#define EXIT_TIMEOUT 124
#define MAX_PES 4096
#define NS_PER_S 1000000000ull
/* After a PE failed, the others get SIGTERM and, this much later, SIGKILL. */
#define FAIL_KILL_NS (NS_PER_S)
/* After a forwarded SIGINT/SIGTERM/SIGHUP, SIGKILL comes this much later. */
#define SIGNAL_KILL_NS (2 * NS_PER_S)
/* A line longer than this is forwarded in pieces rather than buffered. */
#define LINE_MAX_BYTES 65536
#define KV_BUCKETS 4096

/* ------------------------------------------------------------------ options */

/* Who starts the PEs: this program (one node), or an external PMIx
 * launcher the job is handed to (exec). */
enum { LAUNCH_UNSET, LAUNCH_LOCAL, LAUNCH_MPIRUN, LAUNCH_SRUN };

typedef struct options {
    int npes;
    bool tag_output;
    double timeout_s;  /* 0 = none */
    int launcher;      /* LAUNCH_*; UNSET = local, or mpirun with --hosts */
    const char *hosts; /* --hosts h1,h2,... or NULL */
    char **argv;       /* program and its arguments */
} options_t;

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: " PROG " -n N [options] program [args...]\n"
            "       oshrun -n N [options] program [args...]\n"
            "Start N processing elements (PEs) of an OpenSHMEM program on this "
            "node,\nor on several through mpirun or srun.\n\n"
            "Options:\n"
            "  -n, -np, --np N    number of PEs to start (1..%d)\n"
            "  --tag-output       prefix every output line with [PE] \n"
            "  --timeout SEC      end the job after SEC seconds (exit 124);\n"
            "                     default: $SHMEM_LAUNCHER_TIMEOUT, else none\n"
            "  --launcher L       local (default): start the PEs here;\n"
            "                     mpirun or srun: hand the job to that PMIx\n"
            "                     launcher (several nodes)\n"
            "  --hosts H1,H2,...  run on these hosts (implies mpirun)\n"
            "  -h, --help         show this help and exit\n"
            "  --version          show the version and exit\n",
            MAX_PES);
}

static int parse_npes(const char *s, options_t *o)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < 1 || v > MAX_PES) {
        fprintf(stderr, PROG ": invalid number of PEs '%s' (1..%d)\n", s,
                MAX_PES);
        return -1;
    }
    o->npes = (int)v;
    return 0;
}

static int parse_timeout_str(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v > 0) || v > 1e9)
        return -1;
    *out = v;
    return 0;
}

/* Whole units, rounded up (no libm for one ceil). */
static double ceil_s(double v)
{
    double w = (double)(long long)v;
    return w < v ? w + 1 : w;
}

static int parse_timeout(const char *s, options_t *o)
{
    if (parse_timeout_str(s, &o->timeout_s) == 0)
        return 0;
    fprintf(stderr, PROG ": invalid timeout '%s' (seconds > 0)\n", s);
    return -1;
}

static int set_tag_output(const char *s, options_t *o)
{
    o->tag_output = true;
    return 0;
}

static int set_launcher(const char *s, options_t *o)
{
    if (strcmp(s, "local") == 0)
        o->launcher = LAUNCH_LOCAL;
    else if (strcmp(s, "mpirun") == 0)
        o->launcher = LAUNCH_MPIRUN;
    else if (strcmp(s, "srun") == 0)
        o->launcher = LAUNCH_SRUN;
    else {
        fprintf(stderr, PROG ": invalid launcher '%s' (local, mpirun or "
                        "srun)\n", s);
        return -1;
    }
    return 0;
}

static int set_hosts(const char *s, options_t *o)
{
    /* A comma-separated list of names (Open MPI's host:slots accepted). */
    bool ok = *s && s[strlen(s) - 1] != ',' && *s != ',' && !strstr(s, ",,");
    for (const char *c = s; ok && *c; c++)
        ok = isalnum((unsigned char)*c) || strchr("-_.:,[]", *c);
    if (!ok) {
        fprintf(stderr, PROG ": invalid host list '%s' (names separated by "
                        "commas)\n", s);
        return -1;
    }
    o->hosts = s;
    return 0;
}

/* Options live in a table so that new ones (--hosts, --launcher, ...) are one
 * line plus a handler. Result codes of handlers: 0 ok, -1 usage error. */
typedef struct option_desc {
    const char *names[3];
    bool has_arg;
    int (*handle)(const char *arg, options_t *o);
} option_desc_t;

static const option_desc_t option_table[] = {
    {{"-n", "-np", "--np"}, true, parse_npes},
    {{"--tag-output", NULL, NULL}, false, set_tag_output},
    {{"--timeout", NULL, NULL}, true, parse_timeout},
    {{"--launcher", NULL, NULL}, true, set_launcher},
    {{"--hosts", "--host", NULL}, true, set_hosts},
};

/* Returns -1 to continue, else the exit code for main. */
static int parse_args(int argc, char **argv, options_t *o)
{
    int i;
    memset(o, 0, sizeof(*o));
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (a[0] != '-' || a[1] == '\0')
            break;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        }
        if (strcmp(a, "--version") == 0) {
            printf(PROG " (dmashmem) %s\n", PACKAGE_VERSION);
            return 0;
        }
        const option_desc_t *d = NULL;
        const char *arg = NULL;
        for (size_t k = 0; k < DSM_ARRAY_SIZE(option_table) && !d; k++) {
            for (size_t j = 0; j < 3 && option_table[k].names[j]; j++) {
                const char *nm = option_table[k].names[j];
                size_t nl = strlen(nm);
                if (strcmp(a, nm) == 0) {
                    d = &option_table[k];
                    break;
                }
                /* --name=value for long options */
                if (option_table[k].has_arg && nm[1] == '-' &&
                    strncmp(a, nm, nl) == 0 && a[nl] == '=') {
                    d = &option_table[k];
                    arg = a + nl + 1;
                    break;
                }
            }
        }
        if (!d) {
            fprintf(stderr, PROG ": unknown option '%s'\n", a);
            goto bad;
        }
        if (d->has_arg && !arg) {
            if (i + 1 >= argc) {
                fprintf(stderr, PROG ": option '%s' needs an argument\n", a);
                goto bad;
            }
            arg = argv[++i];
        }
        if (d->handle(arg, o) < 0)
            goto bad;
    }
    if (o->npes == 0) {
        fprintf(stderr, PROG ": the number of PEs (-n N) is required\n");
        goto bad;
    }
    if (i >= argc) {
        fprintf(stderr, PROG ": no program given\n");
        goto bad;
    }
    if (o->timeout_s == 0) {
        const char *env = getenv("SHMEM_LAUNCHER_TIMEOUT");
        if (env && *env && parse_timeout_str(env, &o->timeout_s) < 0) {
            fprintf(stderr, PROG ": invalid SHMEM_LAUNCHER_TIMEOUT '%s'\n",
                    env);
            goto bad;
        }
    }
    if (o->hosts && o->launcher == LAUNCH_LOCAL) {
        fprintf(stderr, PROG ": --hosts needs --launcher mpirun or srun (the "
                        "local launcher starts PEs on this node only)\n");
        goto bad;
    }
    if (o->launcher == LAUNCH_UNSET)
        o->launcher = o->hosts ? LAUNCH_MPIRUN : LAUNCH_LOCAL;
    o->argv = argv + i;
    return -1;
bad:
    fprintf(stderr, "Try '" PROG " --help' for more information.\n");
    return EXIT_USAGE;
}

/* ------------------------------------------------------------------ state */

typedef struct outstream {
    int fd;     /* pipe read end, -1 once at EOF */
    int dest;   /* STDOUT_FILENO or STDERR_FILENO */
    char *buf;  /* partial line */
    size_t len; /* bytes in buf */
} outstream_t;

enum { WAIT_NONE, WAIT_COLL, WAIT_GET, WAIT_GET_FD };

typedef struct pe {
    pid_t pid;     /* 0 once reaped (or never started) */
    int conn;      /* bootstrap connection, -1 before hello / after EOF */
    bool hello;    /* connected once */
    bool finalized;
    bool aborted; /* sent ABORT: its own exit is expected */
    outstream_t out[2];
    /* The request the PE is blocked in, answered later. */
    int wait;
    uint16_t wait_op;
    int wait_rank;
    char wait_key[DSM_BOOT_KEY_MAX + 1];
} pe_t;

typedef struct kv {
    struct kv *next;
    int rank;
    int fd; /* PUT_FD: the launcher's duplicate, else -1 */
    size_t len;
    char key[DSM_BOOT_KEY_MAX + 1];
    unsigned char val[];
} kv_t;

typedef struct job {
    options_t opt;
    pe_t *pes;
    int nalive;     /* PEs not yet reaped */
    int nconnected; /* PEs that said hello */
    int ncoll;      /* PEs waiting in the current fence/barrier */
    bool lost_pe;   /* a connection closed before fini */
    pid_t self;

    char dir[PATH_MAX];  /* private directory, "" once removed */
    char sock[PATH_MAX + 32]; /* socket path in it */
    int listen_fd;
    int *anon; /* accepted, hello not yet received */
    int nanon;

    int sig_fd;
    int execerr_fd; /* read end; children report exec failures here */
    int watch_rd, watch_wr; /* PEs hold watch_rd: EOF = launcher gone */
    int janitor_fd;
    pid_t janitor;

    kv_t *kv[KV_BUCKETS];

    /* Ending: once set, the first failure's status stands. */
    bool ending;
    bool decided;
    int status;
    uint64_t kill_at;    /* SIGKILL the survivors at this time, 0 = none */
    uint64_t timeout_at; /* --timeout, 0 = none */
    bool exec_reported;
    sigset_t oldmask;
    struct rlimit old_nofile;
} job_t;

/* ------------------------------------------------------------------ janitor */

enum { JAN_PATH = 1, JAN_ADD_PID, JAN_DEL_PID };

typedef struct jan_msg {
    int32_t kind;
    int32_t val; /* pid, or length of the path that follows */
} jan_msg_t;

static int read_full(int fd, void *buf, size_t len)
{
    char *p = buf;
    while (len) {
        ssize_t r = read(fd, p, len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        p += r;
        len -= (size_t)r;
    }
    return 0;
}

static int write_full(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && errno == EAGAIN) {
            /* stdout set non-blocking by someone else: wait, keep order */
            struct pollfd pfd = {.fd = fd, .events = POLLOUT};
            poll(&pfd, 1, -1);
            continue;
        }
        if (w <= 0)
            return -1;
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

static void remove_dir(const char *dir)
{
    char path[PATH_MAX];
    if (!dir[0])
        return;
    if (snprintf(path, sizeof(path), "%s/%s", dir, DSM_WIRE_SOCK_NAME) <
        (int)sizeof(path))
        unlink(path);
    rmdir(dir);
}

/* The janitor outlives a SIGKILLed launcher: it only reads its pipe, and on
 * EOF removes the directory and SIGKILLs the PEs still registered. */
static DSM_NORETURN void janitor_main(int rfd)
{
    char dir[PATH_MAX] = "";
    pid_t *pids = NULL;
    size_t npids = 0, cap = 0;
    int devnull;

    /* Do not hold the launcher's stdout/stderr: a caller reading them would
     * otherwise wait for the janitor too. Ignore the terminal's and the
     * caller's signals: the janitor must survive to clean up. */
    devnull = open("/dev/null", O_RDWR);
    if (devnull >= 0) {
        dup2(devnull, 0);
        dup2(devnull, 1);
        dup2(devnull, 2);
        if (devnull > 2)
            close(devnull);
    }
    /* Nor any other descriptor of whoever started the launcher. */
    if (rfd > 3)
        close_range(3, (unsigned)rfd - 1, 0);
    close_range((unsigned)rfd + 1, ~0u, 0);
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    for (;;) {
        jan_msg_t m;
        if (read_full(rfd, &m, sizeof(m)) < 0)
            break;
        if (m.kind == JAN_PATH) {
            if (m.val <= 0 || (size_t)m.val >= sizeof(dir) ||
                read_full(rfd, dir, (size_t)m.val) < 0)
                break;
            dir[m.val] = '\0';
        } else if (m.kind == JAN_ADD_PID) {
            if (npids == cap) {
                size_t ncap = cap ? cap * 2 : 64;
                pid_t *np = realloc(pids, ncap * sizeof(*np));
                if (!np)
                    break;
                pids = np;
                cap = ncap;
            }
            pids[npids++] = m.val;
        } else if (m.kind == JAN_DEL_PID) {
            for (size_t i = 0; i < npids; i++)
                if (pids[i] == m.val) {
                    pids[i] = pids[--npids];
                    break;
                }
        } else if (m.kind == 0) {
            /* The launcher removed the directory itself. */
            dir[0] = '\0';
        }
    }
    for (size_t i = 0; i < npids; i++)
        kill(pids[i], SIGKILL);
    remove_dir(dir);
    _exit(0);
}

static int janitor_start(job_t *job)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0) {
        fprintf(stderr, PROG ": pipe: %s\n", strerror(errno));
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, PROG ": fork: %s\n", strerror(errno));
        close(p[0]);
        close(p[1]);
        return -1;
    }
    if (pid == 0) {
        close(p[1]);
        janitor_main(p[0]);
    }
    close(p[0]);
    job->janitor = pid;
    job->janitor_fd = p[1];
    return 0;
}

static void janitor_send(job_t *job, int kind, int val, const char *data)
{
    jan_msg_t m = {.kind = kind, .val = val};
    if (job->janitor_fd < 0)
        return;
    /* One write per message: small, so atomic on a pipe. */
    char buf[sizeof(m) + PATH_MAX];
    size_t n = sizeof(m);
    memcpy(buf, &m, sizeof(m));
    if (data) {
        memcpy(buf + n, data, (size_t)val);
        n += (size_t)val;
    }
    if (write_full(job->janitor_fd, buf, n) < 0) {
        close(job->janitor_fd);
        job->janitor_fd = -1;
    }
}

/* The socket is needed only until every PE has connected. */
static void job_remove_dir(job_t *job)
{
    if (job->listen_fd >= 0) {
        close(job->listen_fd);
        job->listen_fd = -1;
    }
    if (job->dir[0]) {
        remove_dir(job->dir);
        job->dir[0] = '\0';
        janitor_send(job, 0, 0, NULL);
    }
}

/* ------------------------------------------------------------------ ending */

static void kill_all(job_t *job, int sig, int except)
{
    for (int r = 0; r < job->opt.npes; r++)
        if (job->pes[r].pid > 0 && r != except)
            kill(job->pes[r].pid, sig);
}

static void decide(job_t *job, int status)
{
    if (!job->decided) {
        job->decided = true;
        job->status = status;
    }
}

/* First failure (or abort, timeout): end every PE but 'except'. */
static void end_job(job_t *job, int status, int sig, uint64_t grace_ns,
                    int except)
{
    decide(job, status);
    if (job->ending)
        return;
    job->ending = true;
    kill_all(job, sig, except);
    job->kill_at = dsm_now_ns() + grace_ns;
}

/* ------------------------------------------------------------------ output */

static void out_emit(job_t *job, int rank, outstream_t *s, const char *p,
                     size_t n)
{
    char tag[32];
    int tl = 0;
    if (job->opt.tag_output)
        tl = snprintf(tag, sizeof(tag), "[%d] ", rank);
    if (!tl) {
        write_full(s->dest, p, n);
        return;
    }
    /* Prefix each line, then write the batch at once: lines of one PE in one
     * write never mix with another PE's. */
    size_t lines = 0;
    for (size_t i = 0; i < n; i++)
        lines += p[i] == '\n';
    if (n && p[n - 1] != '\n')
        lines++;
    char *buf = malloc(n + lines * (size_t)tl);
    if (!buf) {
        write_full(s->dest, p, n);
        return;
    }
    size_t o = 0, start = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '\n' || i == n - 1) {
            memcpy(buf + o, tag, (size_t)tl);
            o += (size_t)tl;
            memcpy(buf + o, p + start, i + 1 - start);
            o += i + 1 - start;
            start = i + 1;
        }
    }
    write_full(s->dest, buf, o);
    free(buf);
}

static void out_flush(job_t *job, int rank, outstream_t *s)
{
    if (s->len) {
        s->buf[s->len++] = '\n';
        out_emit(job, rank, s, s->buf, s->len);
        s->len = 0;
    }
}

/* Read what the pipe holds; forward complete lines, keep the rest. At EOF
 * the partial last line goes out with a newline added. With drain, read
 * until the pipe is empty, else stop after a short read (poll says when
 * there is more). Returns 1 at EOF, else 0. */
static int out_read(job_t *job, int rank, outstream_t *s, bool drain)
{
    char chunk[65536];
    for (;;) {
        ssize_t r = read(s->fd, chunk, sizeof(chunk));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && errno == EAGAIN)
            return 0;
        if (r <= 0) {
            out_flush(job, rank, s);
            close(s->fd);
            s->fd = -1;
            return 1;
        }
        const char *p = chunk;
        size_t n = (size_t)r;
        /* Complete lines: the buffered head plus up to the last newline. */
        const char *nl = memrchr(p, '\n', n);
        if (nl) {
            size_t head = (size_t)(nl - p) + 1;
            if (s->len) {
                /* Join buffered partial line and the rest in one batch. */
                char *tmp = malloc(s->len + head);
                if (tmp) {
                    memcpy(tmp, s->buf, s->len);
                    memcpy(tmp + s->len, p, head);
                    out_emit(job, rank, s, tmp, s->len + head);
                    free(tmp);
                } else {
                    out_emit(job, rank, s, s->buf, s->len);
                    out_emit(job, rank, s, p, head);
                }
                s->len = 0;
            } else {
                out_emit(job, rank, s, p, head);
            }
            p += head;
            n -= head;
        }
        while (n) {
            size_t room = LINE_MAX_BYTES - s->len;
            size_t take = DSM_MIN(room, n);
            memcpy(s->buf + s->len, p, take);
            s->len += take;
            p += take;
            n -= take;
            if (s->len == LINE_MAX_BYTES) {
                /* An endless line: forward it in pieces, not unbounded. */
                s->buf[s->len++] = '\n';
                out_emit(job, rank, s, s->buf, s->len);
                s->len = 0;
            }
        }
        if (!drain && (size_t)r < sizeof(chunk))
            return 0;
    }
}

/* The PE is dead: everything it wrote is in the pipe already. */
static void out_drain(job_t *job, int rank)
{
    for (int k = 0; k < 2; k++)
        if (job->pes[rank].out[k].fd >= 0)
            out_read(job, rank, &job->pes[rank].out[k], true);
}

/* ------------------------------------------------------------------ kv */

static unsigned kv_hash(int rank, const char *key)
{
    unsigned h = 2166136261u ^ (unsigned)rank;
    for (; *key; key++)
        h = (h ^ (unsigned char)*key) * 16777619u;
    return h % KV_BUCKETS;
}

static kv_t *kv_find(job_t *job, int rank, const char *key)
{
    for (kv_t *e = job->kv[kv_hash(rank, key)]; e; e = e->next)
        if (e->rank == rank && strcmp(e->key, key) == 0)
            return e;
    return NULL;
}

static void kv_free_all(job_t *job)
{
    for (int b = 0; b < KV_BUCKETS; b++) {
        kv_t *e = job->kv[b];
        while (e) {
            kv_t *n = e->next;
            if (e->fd >= 0)
                close(e->fd);
            free(e);
            e = n;
        }
        job->kv[b] = NULL;
    }
}

/* ------------------------------------------------------------------ protocol */

static int send_rec(int fd, uint16_t op, int status, const void *payload,
                    size_t len, int pass_fd)
{
    dsm_wire_hdr_t h = {.magic = DSM_WIRE_MAGIC,
                        .op = (uint16_t)(op | DSM_WIRE_REPLY),
                        .status = status,
                        .len = (uint32_t)len};
    struct iovec iov[2] = {{&h, sizeof(h)}, {(void *)payload, len}};
    union {
        struct cmsghdr c;
        char b[CMSG_SPACE(sizeof(int))];
    } cm;
    struct msghdr mh = {.msg_iov = iov, .msg_iovlen = len ? 2 : 1};
    if (pass_fd >= 0) {
        memset(&cm, 0, sizeof(cm));
        mh.msg_control = cm.b;
        mh.msg_controllen = sizeof(cm.b);
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &pass_fd, sizeof(int));
    }
    ssize_t w;
    do
        w = sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
    while (w < 0 && errno == EINTR);
    /* A client has one request outstanding, so its receive queue never
     * fills; EAGAIN or a short send means a broken peer. */
    return w == (ssize_t)(sizeof(h) + len) ? 0 : -1;
}

static void pe_close_conn(job_t *job, int rank);

static void reply(job_t *job, int rank, uint16_t op, int status,
                  const void *payload, size_t len, int pass_fd)
{
    pe_t *pe = &job->pes[rank];
    if (pe->conn < 0)
        return;
    if (send_rec(pe->conn, op, status, payload, len, pass_fd) < 0)
        pe_close_conn(job, rank);
}

static void answer_get(job_t *job, int rank, const kv_t *e)
{
    pe_t *pe = &job->pes[rank];
    uint16_t op = pe->wait_op;
    pe->wait = WAIT_NONE;
    if (!e)
        reply(job, rank, op, DSM_ERR_NOT_FOUND, NULL, 0, -1);
    else if (op == DSM_WIRE_GET_FD)
        reply(job, rank, op, e->fd >= 0 ? DSM_OK : DSM_ERR_INVAL, NULL, 0,
              e->fd);
    else
        reply(job, rank, op, DSM_OK, e->val, e->len, -1);
}

/* Collectives need every PE: once one is gone, waiting ones fail. */
static void coll_check(job_t *job)
{
    int n = job->opt.npes;
    if (job->ncoll == 0)
        return;
    if (job->ncoll < n && !job->lost_pe)
        return;
    int st = job->ncoll == n ? DSM_OK : DSM_ERR_PEER;
    job->ncoll = 0;
    for (int r = 0; r < n; r++)
        if (job->pes[r].wait == WAIT_COLL) {
            job->pes[r].wait = WAIT_NONE;
            reply(job, r, job->pes[r].wait_op, st, NULL, 0, -1);
        }
}

/* PE 'rank' can no longer take part (connection closed or process gone):
 * collectives in progress fail, gets waiting for its keys find nothing. */
static void pe_gone(job_t *job, int rank)
{
    job->lost_pe = true;
    coll_check(job);
    for (int r = 0; r < job->opt.npes; r++) {
        pe_t *o = &job->pes[r];
        if ((o->wait == WAIT_GET || o->wait == WAIT_GET_FD) &&
            o->wait_rank == rank)
            answer_get(job, r, NULL);
    }
}

static void pe_close_conn(job_t *job, int rank)
{
    pe_t *pe = &job->pes[rank];
    if (pe->conn < 0)
        return;
    close(pe->conn);
    pe->conn = -1;
    if (pe->wait == WAIT_COLL)
        job->ncoll--;
    pe->wait = WAIT_NONE;
    pe_gone(job, rank);
}

static void handle_abort(job_t *job, int rank, int status, const char *msg,
                         size_t len)
{
    pe_t *pe = &job->pes[rank];
    if (!job->ending && len) {
        /* One write so that the message is one block on stderr. */
        char *b = malloc(len + 2);
        if (b) {
            memcpy(b, msg, len);
            size_t n = len;
            if (b[n - 1] != '\n')
                b[n++] = '\n';
            write_full(STDERR_FILENO, b, n);
            free(b);
        }
    }
    pe->aborted = true;
    end_job(job, status & 0xff, SIGTERM, FAIL_KILL_NS, rank);
}

static int hello_ack(job_t *job, int fd, int rank)
{
    dsm_wire_info_t info = {.rank = rank,
                            .size = job->opt.npes,
                            .node_rank = rank,
                            .node_size = job->opt.npes,
                            .node_id = 0,
                            .num_nodes = 1};
    return send_rec(fd, DSM_WIRE_HELLO, DSM_OK, &info, sizeof(info),
                    job->watch_rd);
}

/* A record from PE 'rank'. Returns -1 when the peer breaks the protocol. */
static int handle_request(job_t *job, int rank, const dsm_wire_hdr_t *h,
                          const char *key, const void *payload, int rfd)
{
    pe_t *pe = &job->pes[rank];
    if (rfd >= 0 && h->op != DSM_WIRE_PUT_FD) {
        close(rfd); /* a descriptor nobody asked for */
        rfd = -1;
    }
    switch (h->op) {
    case DSM_WIRE_PUT:
    case DSM_WIRE_PUT_FD: {
        if (h->op == DSM_WIRE_PUT_FD && rfd < 0) {
            reply(job, rank, h->op, DSM_ERR_INVAL, NULL, 0, -1);
            return 0;
        }
        kv_t *e = kv_find(job, rank, key);
        if (!e || e->len < h->len) {
            kv_t *ne = malloc(sizeof(*ne) + h->len);
            if (!ne) {
                if (rfd >= 0)
                    close(rfd);
                reply(job, rank, h->op, DSM_ERR_NOMEM, NULL, 0, -1);
                return 0;
            }
            if (e) {
                /* unlink the old, smaller entry */
                kv_t **pp = &job->kv[kv_hash(rank, key)];
                while (*pp != e)
                    pp = &(*pp)->next;
                *pp = e->next;
                if (e->fd >= 0)
                    close(e->fd);
                free(e);
            }
            e = ne;
            e->rank = rank;
            e->fd = -1;
            snprintf(e->key, sizeof(e->key), "%s", key);
            unsigned b = kv_hash(rank, key);
            e->next = job->kv[b];
            job->kv[b] = e;
        } else if (e->fd >= 0) {
            close(e->fd);
            e->fd = -1;
        }
        e->len = h->len;
        memcpy(e->val, payload, h->len);
        e->fd = rfd; /* the launcher's duplicate, kept until the end */
        reply(job, rank, h->op, DSM_OK, NULL, 0, -1);
        for (int r = 0; r < job->opt.npes; r++) {
            pe_t *o = &job->pes[r];
            if ((o->wait == WAIT_GET || o->wait == WAIT_GET_FD) &&
                o->wait_rank == rank && strcmp(o->wait_key, key) == 0)
                answer_get(job, r, e);
        }
        return 0;
    }
    case DSM_WIRE_GET:
    case DSM_WIRE_GET_FD: {
        if (h->rank < 0 || h->rank >= job->opt.npes) {
            reply(job, rank, h->op, DSM_ERR_INVAL, NULL, 0, -1);
            return 0;
        }
        pe->wait = h->op == DSM_WIRE_GET ? WAIT_GET : WAIT_GET_FD;
        pe->wait_op = h->op;
        pe->wait_rank = h->rank;
        snprintf(pe->wait_key, sizeof(pe->wait_key), "%s", key);
        kv_t *e = kv_find(job, h->rank, key);
        pe_t *t = &job->pes[h->rank];
        /* Not published yet: wait, unless its owner can no longer publish. */
        if (e || t->pid == 0 || (t->hello && t->conn < 0) || t->finalized)
            answer_get(job, rank, e);
        return 0;
    }
    case DSM_WIRE_FENCE:
    case DSM_WIRE_BARRIER:
        pe->wait = WAIT_COLL;
        pe->wait_op = h->op;
        job->ncoll++;
        coll_check(job);
        return 0;
    case DSM_WIRE_ABORT:
        reply(job, rank, h->op, DSM_OK, NULL, 0, -1);
        handle_abort(job, rank, h->status, payload, h->len);
        return 0;
    case DSM_WIRE_FINI:
        pe->finalized = true;
        reply(job, rank, h->op, DSM_OK, NULL, 0, -1);
        return 0;
    default:
        return -1;
    }
}

/* Receive one record. Returns 1 with a record, 0 at EOF or nothing
 * (EAGAIN: *again set), -1 on a protocol error. */
static int recv_rec(int fd, dsm_wire_hdr_t *h, char *key, char *payload,
                    int *rfd, bool *again)
{
    char buf[DSM_WIRE_MSG_MAX];
    union {
        struct cmsghdr c;
        char b[CMSG_SPACE(sizeof(int) * 4)];
    } cm;
    struct iovec iov = {buf, sizeof(buf)};
    struct msghdr mh = {.msg_iov = &iov,
                        .msg_iovlen = 1,
                        .msg_control = cm.b,
                        .msg_controllen = sizeof(cm.b)};
    ssize_t r;
    *rfd = -1;
    *again = false;
    do
        r = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    while (r < 0 && errno == EINTR);
    if (r < 0 && errno == EAGAIN) {
        *again = true;
        return 0;
    }
    if (r <= 0)
        return 0;
    /* Take every passed descriptor so none leaks, keep the first. */
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        size_t nfd = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < nfd; i++) {
            int f;
            memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
            if (*rfd < 0)
                *rfd = f;
            else
                close(f);
        }
    }
    if ((mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ||
        (size_t)r < sizeof(*h))
        goto bad;
    memcpy(h, buf, sizeof(*h));
    if (h->magic != DSM_WIRE_MAGIC || h->keylen > DSM_BOOT_KEY_MAX ||
        h->len > DSM_BOOT_VAL_MAX ||
        (size_t)r != sizeof(*h) + h->keylen + h->len)
        goto bad;
    memcpy(key, buf + sizeof(*h), h->keylen);
    key[h->keylen] = '\0';
    if (memchr(key, '\0', h->keylen))
        goto bad;
    memcpy(payload, buf + sizeof(*h) + h->keylen, h->len);
    payload[h->len] = '\0';
    return 1;
bad:
    if (*rfd >= 0)
        close(*rfd);
    *rfd = -1;
    return -1;
}

/* Process every record queued on PE 'rank''s connection. */
static void pe_read_conn(job_t *job, int rank)
{
    static char key[DSM_BOOT_KEY_MAX + 1], payload[DSM_BOOT_VAL_MAX + 1];
    pe_t *pe = &job->pes[rank];
    while (pe->conn >= 0) {
        dsm_wire_hdr_t h;
        int rfd;
        bool again;
        int r = recv_rec(pe->conn, &h, key, payload, &rfd, &again);
        if (r == 0 && again)
            return;
        if (r < 0 || (r == 1 && handle_request(job, rank, &h, key, payload,
                                               rfd) < 0)) {
            fprintf(stderr, PROG ": PE %d broke the bootstrap protocol\n",
                    rank);
            pe_close_conn(job, rank);
            end_job(job, 1, SIGTERM, FAIL_KILL_NS, -1);
            return;
        }
        if (r == 0)
            pe_close_conn(job, rank);
    }
}

/* A connection that has not said hello: expect HELLO and move it to its PE. */
static void anon_read(job_t *job, int idx)
{
    int fd = job->anon[idx];
    dsm_wire_hdr_t h;
    char key[DSM_BOOT_KEY_MAX + 1], payload[DSM_BOOT_VAL_MAX + 1];
    int rfd;
    bool again;
    int r = recv_rec(fd, &h, key, payload, &rfd, &again);
    if (r == 0 && again)
        return;
    if (rfd >= 0)
        close(rfd);
    job->anon[idx] = job->anon[--job->nanon];
    if (r <= 0 || h.op != DSM_WIRE_HELLO) {
        close(fd);
        return;
    }
    uint32_t ver = 0;
    if (h.len == sizeof(ver))
        memcpy(&ver, payload, sizeof(ver));
    int rank = h.rank;
    if (ver != DSM_WIRE_VERSION) {
        fprintf(stderr,
                PROG ": PE %d speaks bootstrap protocol version %u, this "
                     "launcher %u (library and launcher do not match)\n",
                rank, ver, DSM_WIRE_VERSION);
        send_rec(fd, DSM_WIRE_HELLO, DSM_ERR_UNSUPPORTED, NULL, 0, -1);
        close(fd);
        end_job(job, 1, SIGTERM, FAIL_KILL_NS, -1);
        return;
    }
    if (rank < 0 || rank >= job->opt.npes || job->pes[rank].hello) {
        send_rec(fd, DSM_WIRE_HELLO, DSM_ERR_INVAL, NULL, 0, -1);
        close(fd);
        return;
    }
    if (hello_ack(job, fd, rank) < 0) {
        close(fd);
        return;
    }
    job->pes[rank].conn = fd;
    job->pes[rank].hello = true;
    if (++job->nconnected == job->opt.npes)
        job_remove_dir(job);
}

static void accept_conns(job_t *job)
{
    for (;;) {
        int fd = accept4(job->listen_fd, NULL, NULL,
                         SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0)
            return;
        if (job->nanon >= job->opt.npes) {
            /* More strangers than PEs: not ours. */
            close(fd);
            continue;
        }
        job->anon[job->nanon++] = fd;
    }
}

/* ------------------------------------------------------------------ children */

typedef struct exec_err {
    int32_t rank;
    int32_t err;
} exec_err_t;

static void read_exec_errors(job_t *job)
{
    exec_err_t e;
    while (job->execerr_fd >= 0) {
        ssize_t r = read(job->execerr_fd, &e, sizeof(e));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && errno == EAGAIN)
            return;
        if (r != (ssize_t)sizeof(e)) {
            close(job->execerr_fd);
            job->execerr_fd = -1;
            return;
        }
        if (!job->exec_reported && !job->ending) {
            job->exec_reported = true;
            fprintf(stderr, PROG ": cannot execute '%s': %s\n",
                    job->opt.argv[0], strerror(e.err));
            end_job(job, EXIT_NOEXEC, SIGTERM, FAIL_KILL_NS, -1);
        }
    }
}

static void on_exit_pe(job_t *job, int rank, int wstatus)
{
    pe_t *pe = &job->pes[rank];
    pid_t pid = pe->pid;
    pe->pid = 0;
    job->nalive--;
    janitor_send(job, JAN_DEL_PID, pid, NULL);
    /* Requests it sent before dying (ABORT, FINI) count: handle them first,
     * then flush its output so the verdict comes after its last words. */
    pe_read_conn(job, rank);
    pe_close_conn(job, rank);
    pe_gone(job, rank); /* also when it never connected */
    out_drain(job, rank);
    read_exec_errors(job);

    bool failed = WIFSIGNALED(wstatus) ||
                  (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) != 0);
    if (!failed || job->ending)
        return;
    if (WIFSIGNALED(wstatus)) {
        int sig = WTERMSIG(wstatus);
        fprintf(stderr, PROG ": PE %d (pid %d) was killed by signal %d (%s)\n",
                rank, (int)pid, sig, strsignal(sig));
        end_job(job, 128 + sig, SIGTERM, FAIL_KILL_NS, -1);
    } else {
        fprintf(stderr, PROG ": PE %d (pid %d) exited with status %d\n", rank,
                (int)pid, WEXITSTATUS(wstatus));
        end_job(job, WEXITSTATUS(wstatus), SIGTERM, FAIL_KILL_NS, -1);
    }
}

static void reap(job_t *job)
{
    for (;;) {
        int ws;
        pid_t pid = waitpid(-1, &ws, WNOHANG);
        if (pid <= 0)
            return;
        if (pid == job->janitor) {
            job->janitor = 0;
            continue;
        }
        for (int r = 0; r < job->opt.npes; r++)
            if (job->pes[r].pid == pid) {
                on_exit_pe(job, r, ws);
                break;
            }
    }
}

static void on_signal(job_t *job, int sig)
{
    if (job->ending && job->kill_at) {
        /* Asked twice: stop waiting for a graceful end. */
        kill_all(job, SIGKILL, -1);
        job->kill_at = 0;
        decide(job, 128 + sig);
        return;
    }
    fprintf(stderr, PROG ": received signal %d (%s), ending the job\n", sig,
            strsignal(sig));
    end_job(job, 128 + sig, sig, SIGNAL_KILL_NS, -1);
}

static void read_signals(job_t *job)
{
    struct signalfd_siginfo si;
    for (;;) {
        ssize_t r = read(job->sig_fd, &si, sizeof(si));
        if (r < 0 && errno == EINTR)
            continue;
        if (r != (ssize_t)sizeof(si))
            break;
        if (si.ssi_signo != SIGCHLD)
            on_signal(job, (int)si.ssi_signo);
    }
    /* SIGCHLDs coalesce: always reap everything. */
    reap(job);
}

static DSM_NORETURN void child_fail(int errfd, int rank)
{
    exec_err_t e = {.rank = rank, .err = errno};
    ssize_t w = write(errfd, &e, sizeof(e));
    (void)w;
    _exit(EXIT_NOEXEC);
}

/* What every child needs, prepared once by the parent, so that between fork
 * and exec the child only makes system calls (nothing that allocates or
 * could deadlock) and N PEs do not each rebuild the environment. */
typedef struct spawn_ctx {
    char **envp;     /* environ + our three variables */
    char *rank_var;  /* "DMASHMEM_RANK=..." inside envp, rewritten per PE */
    size_t rank_cap;
    int devnull;
    int errfd;
} spawn_ctx_t;

static DSM_NORETURN void child_exec(job_t *job, const spawn_ctx_t *sc, int rank,
                                    int out_wr, int err_wr)
{
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != job->self)
        _exit(EXIT_NOEXEC); /* the launcher died before we armed it */
    if ((rank != 0 && dup2(sc->devnull, STDIN_FILENO) < 0) ||
        dup2(out_wr, STDOUT_FILENO) < 0 || dup2(err_wr, STDERR_FILENO) < 0)
        child_fail(sc->errfd, rank);
    /* The launcher ignores SIGPIPE and blocks the signals it handles;
     * ignored dispositions and the mask would survive exec. */
    struct sigaction sa = {.sa_handler = SIG_DFL};
    sigaction(SIGPIPE, &sa, NULL);
    setrlimit(RLIMIT_NOFILE, &job->old_nofile);
    sigprocmask(SIG_SETMASK, &job->oldmask, NULL);
    execvpe(job->opt.argv[0], job->opt.argv, sc->envp);
    child_fail(sc->errfd, rank);
}

static bool is_our_var(const char *e)
{
    static const char *const names[] = {DSM_WIRE_ENV_SOCK, DSM_WIRE_ENV_RANK,
                                        DSM_WIRE_ENV_SIZE};
    for (size_t i = 0; i < DSM_ARRAY_SIZE(names); i++) {
        size_t n = strlen(names[i]);
        if (strncmp(e, names[i], n) == 0 && e[n] == '=')
            return true;
    }
    return false;
}

static int spawn_ctx_init(job_t *job, spawn_ctx_t *sc)
{
    extern char **environ;
    size_t n = 0, k = 0;
    char *size_var = NULL, *sock_var = NULL;

    memset(sc, 0, sizeof(*sc));
    sc->devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    for (char **e = environ; e && *e; e++)
        n++;
    sc->envp = calloc(n + 4, sizeof(char *));
    sc->rank_cap = strlen(DSM_WIRE_ENV_RANK) + 16;
    sc->rank_var = malloc(sc->rank_cap);
    if (asprintf(&size_var, DSM_WIRE_ENV_SIZE "=%d", job->opt.npes) < 0)
        size_var = NULL;
    if (asprintf(&sock_var, DSM_WIRE_ENV_SOCK "=%s", job->sock) < 0)
        sock_var = NULL;
    if (sc->devnull < 0 || !sc->envp || !sc->rank_var || !size_var ||
        !sock_var) {
        fprintf(stderr, PROG ": cannot prepare the PEs' environment: %s\n",
                strerror(errno ? errno : ENOMEM));
        free(size_var);
        free(sock_var);
        return -1;
    }
    for (char **e = environ; e && *e; e++)
        if (!is_our_var(*e))
            sc->envp[k++] = *e;
    sc->envp[k++] = sock_var;
    sc->envp[k++] = size_var;
    sc->envp[k++] = sc->rank_var;
    sc->envp[k] = NULL;
    return 0;
}

static void spawn_ctx_fini(spawn_ctx_t *sc)
{
    if (sc->devnull >= 0)
        close(sc->devnull);
    if (sc->envp) {
        /* The last three entries are ours. */
        size_t k = 0;
        while (sc->envp[k])
            k++;
        if (k >= 3) {
            free(sc->envp[k - 3]);
            free(sc->envp[k - 2]);
        }
    }
    free(sc->envp);
    free(sc->rank_var);
}

static int spawn_all(job_t *job)
{
    int ep[2];
    spawn_ctx_t sc;
    int rc = -1;

    if (pipe2(ep, O_CLOEXEC) < 0) {
        fprintf(stderr, PROG ": pipe: %s\n", strerror(errno));
        return -1;
    }
    job->execerr_fd = ep[0];
    fcntl(ep[0], F_SETFL, O_NONBLOCK);
    if (spawn_ctx_init(job, &sc) < 0)
        goto out;
    sc.errfd = ep[1];
    for (int r = 0; r < job->opt.npes; r++) {
        int po[2], pe2[2];
        if (pipe2(po, O_CLOEXEC) < 0) {
            fprintf(stderr, PROG ": pipe: %s\n", strerror(errno));
            goto out;
        }
        if (pipe2(pe2, O_CLOEXEC) < 0) {
            fprintf(stderr, PROG ": pipe: %s\n", strerror(errno));
            close(po[0]);
            close(po[1]);
            goto out;
        }
        snprintf(sc.rank_var, sc.rank_cap, DSM_WIRE_ENV_RANK "=%d", r);
        pid_t pid = fork();
        if (pid == 0)
            child_exec(job, &sc, r, po[1], pe2[1]);
        close(po[1]);
        close(pe2[1]);
        if (pid < 0) {
            fprintf(stderr, PROG ": fork: %s\n", strerror(errno));
            close(po[0]);
            close(pe2[0]);
            goto out;
        }
        fcntl(po[0], F_SETFL, O_NONBLOCK);
        fcntl(pe2[0], F_SETFL, O_NONBLOCK);
        job->pes[r].pid = pid;
        job->pes[r].out[0].fd = po[0];
        job->pes[r].out[1].fd = pe2[0];
        job->nalive++;
        janitor_send(job, JAN_ADD_PID, pid, NULL);
    }
    rc = 0;
out:
    close(ep[1]);
    spawn_ctx_fini(&sc);
    if (rc < 0)
        end_job(job, 1, SIGKILL, 0, -1);
    return rc;
}

/* ------------------------------------------------------------------ setup */

static int make_server(job_t *job)
{
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp)
        tmp = "/tmp";
    int n = snprintf(job->dir, sizeof(job->dir), "%s/dmashmem-XXXXXX", tmp);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (n < 0 || (size_t)n >= sizeof(job->dir) ||
        (size_t)n + 1 + strlen(DSM_WIRE_SOCK_NAME) >= sizeof(sa.sun_path)) {
        fprintf(stderr, PROG ": TMPDIR path too long for a unix socket: %s\n",
                tmp);
        job->dir[0] = '\0';
        return -1;
    }
    /* mkdtemp makes the directory 0700: only our user can connect. */
    if (!mkdtemp(job->dir)) {
        fprintf(stderr, PROG ": cannot create a directory in %s: %s\n", tmp,
                strerror(errno));
        job->dir[0] = '\0';
        return -1;
    }
    janitor_send(job, JAN_PATH, (int)strlen(job->dir), job->dir);
    snprintf(job->sock, sizeof(job->sock), "%s/%s", job->dir,
             DSM_WIRE_SOCK_NAME);
    memcpy(sa.sun_path, job->sock, strlen(job->sock) + 1);
    job->listen_fd =
        socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (job->listen_fd < 0 ||
        bind(job->listen_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
        listen(job->listen_fd, SOMAXCONN) < 0) {
        fprintf(stderr, PROG ": cannot listen on %s: %s\n", job->sock,
                strerror(errno));
        return -1;
    }
    return 0;
}

static int setup_signals(job_t *job)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    if (sigprocmask(SIG_BLOCK, &set, &job->oldmask) < 0)
        return -1;
    job->sig_fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
    if (job->sig_fd < 0) {
        fprintf(stderr, PROG ": signalfd: %s\n", strerror(errno));
        return -1;
    }
    /* A closed stdout must not kill the launcher: the PEs still need it. */
    signal(SIGPIPE, SIG_IGN);
    return 0;
}

/* Room for three descriptors per PE plus a few of our own. */
static int setup_nofile(job_t *job)
{
    struct rlimit rl;
    rlim_t need = (rlim_t)job->opt.npes * 4 + 32;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        return 0;
    job->old_nofile = rl;
    if (rl.rlim_cur >= need)
        return 0;
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need) {
        fprintf(stderr,
                PROG ": %d PEs need %lu open files, the limit is %lu "
                     "(ulimit -n)\n",
                job->opt.npes, (unsigned long)need,
                (unsigned long)rl.rlim_max);
        return -1;
    }
    rl.rlim_cur = need;
    setrlimit(RLIMIT_NOFILE, &rl);
    return 0;
}

/* ------------------------------------------------------------------ loop */

enum { FD_SIG, FD_EXECERR, FD_LISTEN, FD_ANON, FD_CONN, FD_OUT };

typedef struct fdref {
    int kind;
    int idx; /* rank or anon index */
    int sub; /* output stream 0/1 */
} fdref_t;

static int poll_timeout(job_t *job)
{
    uint64_t next = 0;
    if (job->kill_at)
        next = job->kill_at;
    if (job->timeout_at && !job->ending && (!next || job->timeout_at < next))
        next = job->timeout_at;
    if (!next)
        return -1;
    uint64_t now = dsm_now_ns();
    if (next <= now)
        return 0;
    /* round up so we do not wake just before the deadline and spin */
    return (int)DSM_MIN((next - now + 999999) / 1000000, (uint64_t)INT_MAX);
}

static void check_timers(job_t *job)
{
    uint64_t now = dsm_now_ns();
    if (job->timeout_at && !job->ending && now >= job->timeout_at) {
        fprintf(stderr, PROG ": job timed out after %g s, ending it\n",
                job->opt.timeout_s);
        end_job(job, EXIT_TIMEOUT, SIGTERM, FAIL_KILL_NS, -1);
    }
    if (job->kill_at && now >= job->kill_at) {
        kill_all(job, SIGKILL, -1);
        job->kill_at = 0;
    }
}

static int run_loop(job_t *job)
{
    int n = job->opt.npes;
    size_t cap = 3 + (size_t)n * 4;
    struct pollfd *pfd = calloc(cap, sizeof(*pfd));
    fdref_t *ref = calloc(cap, sizeof(*ref));
    int rc = -1;
    if (!pfd || !ref) {
        fprintf(stderr, PROG ": out of memory\n");
        goto out;
    }
    while (job->nalive > 0) {
        size_t np = 0;
#define ADD(fd_, kind_, idx_, sub_)                                            \
    do {                                                                       \
        pfd[np] = (struct pollfd){.fd = (fd_), .events = POLLIN};              \
        ref[np++] = (fdref_t){(kind_), (idx_), (sub_)};                        \
    } while (0)
        ADD(job->sig_fd, FD_SIG, 0, 0);
        if (job->execerr_fd >= 0)
            ADD(job->execerr_fd, FD_EXECERR, 0, 0);
        if (job->listen_fd >= 0)
            ADD(job->listen_fd, FD_LISTEN, 0, 0);
        for (int i = 0; i < job->nanon; i++)
            ADD(job->anon[i], FD_ANON, i, 0);
        for (int r = 0; r < n; r++) {
            pe_t *pe = &job->pes[r];
            if (pe->conn >= 0)
                ADD(pe->conn, FD_CONN, r, 0);
            for (int k = 0; k < 2; k++)
                if (pe->out[k].fd >= 0)
                    ADD(pe->out[k].fd, FD_OUT, r, k);
        }
#undef ADD
        int pr = poll(pfd, np, poll_timeout(job));
        if (pr < 0 && errno != EINTR) {
            fprintf(stderr, PROG ": poll: %s\n", strerror(errno));
            goto out;
        }
        for (size_t i = 0; pr > 0 && i < np; i++) {
            if (!pfd[i].revents)
                continue;
            fdref_t *f = &ref[i];
            /* Handling an earlier entry may have closed this fd. */
            switch (f->kind) {
            case FD_SIG:
                read_signals(job);
                break;
            case FD_EXECERR:
                read_exec_errors(job);
                break;
            case FD_LISTEN:
                if (job->listen_fd == pfd[i].fd)
                    accept_conns(job);
                break;
            case FD_ANON:
                /* anon[] is compacted as hellos arrive: find by fd */
                for (int a = 0; a < job->nanon; a++)
                    if (job->anon[a] == pfd[i].fd) {
                        anon_read(job, a);
                        break;
                    }
                break;
            case FD_CONN:
                if (job->pes[f->idx].conn == pfd[i].fd)
                    pe_read_conn(job, f->idx);
                break;
            case FD_OUT:
                if (job->pes[f->idx].out[f->sub].fd == pfd[i].fd)
                    out_read(job, f->idx, &job->pes[f->idx].out[f->sub],
                             false);
                break;
            }
        }
        check_timers(job);
    }
    /* Every PE is gone: forward what their pipes still hold, but do not wait
     * for grandchildren that may keep them open. */
    for (int r = 0; r < n; r++) {
        out_drain(job, r);
        for (int k = 0; k < 2; k++)
            out_flush(job, r, &job->pes[r].out[k]);
    }
    rc = 0;
out:
    free(pfd);
    free(ref);
    return rc;
}

/* ------------------------------------------------------------------ hand-off */

/* The external launcher's executable, found in PATH as execvp(3) would. */
static char *find_in_path(const char *name)
{
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/bin:/usr/bin";
    while (*path) {
        const char *end = strchr(path, ':');
        size_t dl = end ? (size_t)(end - path) : strlen(path);
        char *cand = NULL;
        struct stat st;
        if (asprintf(&cand, "%.*s/%s", (int)dl, dl ? path : ".", name) < 0)
            return NULL;
        if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) &&
            access(cand, X_OK) == 0)
            return cand;
        free(cand);
        path += dl + (end ? 1 : 0);
    }
    return NULL;
}

/* One word of the printed command line, quoted for a POSIX shell when it
 * holds anything but plain characters. */
static void print_word(const char *w)
{
    bool plain = *w != '\0';
    for (const char *c = w; plain && *c; c++)
        plain = isalnum((unsigned char)*c) || strchr("_@%+=:,./-", *c);
    if (plain) {
        fputs(w, stderr);
        return;
    }
    fputc('\'', stderr);
    for (const char *c = w; *c; c++) {
        if (*c == '\'')
            fputs("'\\''", stderr);
        else
            fputc(*c, stderr);
    }
    fputc('\'', stderr);
}

/* Variables the PEs read, exported by name to remote nodes (mpirun -x;
 * srun exports the whole environment by default). */
static bool forwarded_var(const char *e)
{
    return (strncmp(e, "SHMEM_", 6) == 0 || strncmp(e, "SMA_", 4) == 0) &&
           strchr(e, '=');
}

/* --launcher mpirun|srun, or --hosts: exec the external PMIx launcher with
 * the job. Returns only on failure, with the exit status for main. */
static int hand_off(const options_t *o)
{
    extern char **environ;
    const bool mpirun = o->launcher == LAUNCH_MPIRUN;
    const char *name = mpirun ? "mpirun" : "srun";
    char np[16], tbuf[48], *hostarg = NULL;
    char **av = NULL, **names = NULL;
    size_t nenv = 0, nargs = 0, nnames = 0, k = 0;
    int rc = EXIT_NOEXEC;
    char *exe = find_in_path(name);

    if (!exe) {
        fprintf(stderr,
                PROG ": --launcher %s: '%s' not found in PATH (%s)\n", name,
                name,
                mpirun ? "install Open MPI's mpirun, e.g. Debian's "
                         "openmpi-bin, or run on this node without "
                         "--launcher/--hosts"
                       : "run inside a Slurm allocation with srun in PATH, "
                         "or use --launcher mpirun");
        return rc;
    }
    for (char **e = environ; e && *e; e++)
        nenv++;
    while (o->argv[nargs])
        nargs++;
    av = calloc(16 + 2 * nenv + nargs + 1, sizeof(char *));
    names = calloc(nenv + 1, sizeof(char *));
    if (!av || !names) {
        fprintf(stderr, PROG ": out of memory\n");
        rc = 1;
        goto out;
    }
    snprintf(np, sizeof(np), "%d", o->npes);
    av[k++] = exe;
    if (mpirun) {
        av[k++] = "--oversubscribe";
        av[k++] = "-np";
        av[k++] = np;
        /* Open MPI refuses root without it; CI and containers run as
         * root. */
        if (geteuid() == 0)
            av[k++] = "--allow-run-as-root";
        if (o->hosts) {
            av[k++] = "--host";
            av[k++] = (char *)o->hosts;
        }
        if (o->tag_output)
            av[k++] = "--tag-output";
        if (o->timeout_s > 0) {
            snprintf(tbuf, sizeof(tbuf), "%.0f", ceil_s(o->timeout_s));
            av[k++] = "--timeout";
            av[k++] = tbuf;
        }
        for (char **e = environ; e && *e; e++) {
            if (!forwarded_var(*e))
                continue;
            names[nnames] = strndup(*e, (size_t)(strchr(*e, '=') - *e));
            if (!names[nnames]) {
                fprintf(stderr, PROG ": out of memory\n");
                rc = 1;
                goto out;
            }
            av[k++] = "-x";
            av[k++] = names[nnames++];
        }
    } else {
        av[k++] = "--mpi=pmix";
        av[k++] = "-n";
        av[k++] = np;
        if (o->hosts) {
            if (asprintf(&hostarg, "--nodelist=%s", o->hosts) < 0) {
                hostarg = NULL;
                fprintf(stderr, PROG ": out of memory\n");
                rc = 1;
                goto out;
            }
            av[k++] = hostarg;
        }
        if (o->tag_output)
            av[k++] = "--label";
        if (o->timeout_s > 0) {
            /* srun's limit is in minutes. */
            snprintf(tbuf, sizeof(tbuf), "--time=%.0f",
                     ceil_s(o->timeout_s / 60.0));
            av[k++] = tbuf;
        }
    }
    for (size_t i = 0; i < nargs; i++)
        av[k++] = o->argv[i];
    av[k] = NULL;

    /* Our own bootstrap's variables must not reach the PEs: they would
     * pick the launcher bootstrap instead of PMIx. */
    unsetenv(DSM_WIRE_ENV_SOCK);
    unsetenv(DSM_WIRE_ENV_RANK);
    unsetenv(DSM_WIRE_ENV_SIZE);
    fputs(PROG ": running:", stderr);
    for (size_t i = 0; i < k; i++) {
        fputc(' ', stderr);
        print_word(av[i]);
    }
    fputc('\n', stderr);
    fflush(stderr);
    execv(exe, av);
    fprintf(stderr, PROG ": cannot run %s: %s\n", exe, strerror(errno));
out:
    for (size_t i = 0; i < nnames; i++)
        free(names[i]);
    free(names);
    free(hostarg);
    free(av);
    free(exe);
    return rc;
}

/* ------------------------------------------------------------------ main */

int main(int argc, char **argv)
{
    job_t job;
    int rc;

    memset(&job, 0, sizeof(job));
    job.listen_fd = job.sig_fd = job.execerr_fd = -1;
    job.watch_rd = job.watch_wr = job.janitor_fd = -1;
    rc = parse_args(argc, argv, &job.opt);
    if (rc >= 0)
        return rc;
    if (job.opt.launcher != LAUNCH_LOCAL)
        return hand_off(&job.opt);
    rc = 1;
    job.self = getpid();

    job.pes = calloc((size_t)job.opt.npes, sizeof(*job.pes));
    job.anon = calloc((size_t)job.opt.npes, sizeof(*job.anon));
    if (!job.pes || !job.anon) {
        fprintf(stderr, PROG ": out of memory\n");
        goto cleanup;
    }
    for (int r = 0; r < job.opt.npes; r++) {
        pe_t *pe = &job.pes[r];
        pe->conn = -1;
        for (int k = 0; k < 2; k++) {
            pe->out[k].fd = -1;
            pe->out[k].dest = k ? STDERR_FILENO : STDOUT_FILENO;
            pe->out[k].buf = malloc(LINE_MAX_BYTES + 1);
            if (!pe->out[k].buf) {
                fprintf(stderr, PROG ": out of memory\n");
                goto cleanup;
            }
        }
    }
    if (setup_nofile(&job) < 0)
        goto cleanup;
    /* The janitor first: from now on no exit path leaves the directory. */
    if (janitor_start(&job) < 0)
        goto cleanup;
    if (setup_signals(&job) < 0)
        goto cleanup;
    int wp[2];
    if (pipe2(wp, O_CLOEXEC) < 0) {
        fprintf(stderr, PROG ": pipe: %s\n", strerror(errno));
        goto cleanup;
    }
    job.watch_rd = wp[0];
    job.watch_wr = wp[1];
    if (make_server(&job) < 0)
        goto cleanup;
    if (job.opt.timeout_s > 0)
        job.timeout_at = dsm_now_ns() + (uint64_t)(job.opt.timeout_s * 1e9);
    if (spawn_all(&job) < 0) {
        /* Started ones were SIGKILLed: wait for them, then fail. */
        while (job.nalive > 0) {
            int ws;
            pid_t pid = waitpid(-1, &ws, 0);
            if (pid < 0)
                break;
            for (int r = 0; r < job.opt.npes; r++)
                if (job.pes[r].pid == pid) {
                    job.pes[r].pid = 0;
                    job.nalive--;
                }
        }
        goto cleanup;
    }
    if (run_loop(&job) < 0) {
        kill_all(&job, SIGKILL, -1);
        goto cleanup;
    }
    rc = job.decided ? job.status : 0;

cleanup:
    job_remove_dir(&job);
    kv_free_all(&job);
    if (job.pes) {
        for (int r = 0; r < job.opt.npes; r++) {
            pe_t *pe = &job.pes[r];
            if (pe->conn >= 0)
                close(pe->conn);
            for (int k = 0; k < 2; k++) {
                if (pe->out[k].fd >= 0)
                    close(pe->out[k].fd);
                free(pe->out[k].buf);
            }
        }
    }
    for (int i = 0; i < job.nanon; i++)
        close(job.anon[i]);
    if (job.watch_rd >= 0)
        close(job.watch_rd);
    if (job.watch_wr >= 0)
        close(job.watch_wr);
    if (job.execerr_fd >= 0)
        close(job.execerr_fd);
    if (job.sig_fd >= 0)
        close(job.sig_fd);
    /* EOF tells the janitor to exit; wait so it is gone when we are. */
    if (job.janitor_fd >= 0)
        close(job.janitor_fd);
    if (job.janitor > 0)
        waitpid(job.janitor, NULL, 0);
    free(job.pes);
    free(job.anon);
    return rc;
}
