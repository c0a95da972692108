/*
 * The PEs as processes: fork/exec with PR_SET_PDEATHSIG, their exits and
 * the verdict on the job, ending the job (SIGTERM, then SIGKILL), and the
 * janitor that cleans up when the launcher itself is SIGKILLed.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launcher/launcher.h"

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

void dsm_launcher_remove_dir(const char *dir)
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
 * EOF removes the directory and SIGKILLs the PEs still registered (and
 * stops an --mps daemon, mps.c). */
static DSM_NORETURN void janitor_main(int rfd)
{
    char dir[PATH_MAX] = "", mps[PATH_MAX] = "";
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
        } else if (m.kind == JAN_MPS) {
            if (m.val < 0 || (size_t)m.val >= sizeof(mps) ||
                (m.val && read_full(rfd, mps, (size_t)m.val) < 0))
                break;
            mps[m.val] = '\0';
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
    dsm_launcher_remove_dir(dir);
    /* A launcher SIGKILLed during an --mps job: its daemon goes too. */
    dsm_launcher_mps_quit(mps);
    _exit(0);
}

int dsm_launcher_janitor_start(job_t *job)
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

void dsm_launcher_janitor_send(job_t *job, int kind, int val, const char *data)
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
    if (dsm_launcher_write_full(job->janitor_fd, buf, n) < 0) {
        close(job->janitor_fd);
        job->janitor_fd = -1;
    }
}

/* ------------------------------------------------------------------ ending */

void dsm_launcher_kill_all(job_t *job, int sig, int except)
{
    for (int r = 0; r < job->opt.npes; r++)
        if (job->pes[r].pid > 0 && r != except)
            kill(job->pes[r].pid, sig);
}

void dsm_launcher_decide(job_t *job, int status)
{
    if (!job->decided) {
        job->decided = true;
        job->status = status;
    }
}

/* First failure (or abort, timeout): end every PE but 'except'. */
void dsm_launcher_end_job(job_t *job, int status, int sig, uint64_t grace_ns,
                          int except)
{
    dsm_launcher_decide(job, status);
    if (job->ending)
        return;
    job->ending = true;
    if (except >= 0)
        dsm_launcher_trace(job, "ending the job (status %d): signal %d to "
                           "the PEs still running but PE %d, SIGKILL %.1f s "
                           "later", status, sig, except,
                           (double)grace_ns / NS_PER_S);
    else
        dsm_launcher_trace(job, "ending the job (status %d): signal %d to "
                           "the %d PE(s) still running, SIGKILL %.1f s later",
                           status, sig, job->nalive,
                           (double)grace_ns / NS_PER_S);
    dsm_launcher_kill_all(job, sig, except);
    job->kill_at = dsm_now_ns() + grace_ns;
}

/* ------------------------------------------------------------------ children
 */

typedef struct exec_err {
    int32_t rank;
    int32_t err;
} exec_err_t;

void dsm_launcher_read_exec_errors(job_t *job)
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
            dsm_launcher_end_job(job, EXIT_NOEXEC, SIGTERM, FAIL_KILL_NS, -1);
        }
    }
}

static void on_exit_pe(job_t *job, int rank, int wstatus)
{
    pe_t *pe = &job->pes[rank];
    pid_t pid = pe->pid;
    pe->pid = 0;
    job->nalive--;
    dsm_launcher_janitor_send(job, JAN_DEL_PID, pid, NULL);
    /* Requests it sent before dying (ABORT, FINI) count: handle them first,
     * then flush its output so the verdict comes after its last words. */
    dsm_launcher_pe_read(job, rank);
    dsm_launcher_pe_close(job, rank);
    dsm_launcher_pe_gone(job, rank); /* also when it never connected */
    dsm_launcher_out_drain(job, rank);
    dsm_launcher_read_exec_errors(job);

    bool failed = WIFSIGNALED(wstatus) ||
                  (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) != 0);
    dsm_launcher_trace(job, "PE %d (pid %d) %s %d", rank, (int)pid,
                       WIFSIGNALED(wstatus) ? "was killed by signal"
                                            : "exited with status",
                       WIFSIGNALED(wstatus) ? WTERMSIG(wstatus)
                                            : WEXITSTATUS(wstatus));
    /* A PE that joined the job (said hello, i.e. called shmem_init) and
     * ended before its finalize completed (FINI) or an abort leaves the
     * others waiting for it, maybe in shared memory where nothing tells
     * them: that fails the job whatever its status. A process that never
     * connected (a program that is no OpenSHMEM one) may exit as it likes. */
    bool unfinished = pe->hello && !pe->finalized && !pe->aborted;
    if ((!failed && !unfinished) || job->ending)
        return;
    if (WIFSIGNALED(wstatus)) {
        int sig = WTERMSIG(wstatus);
        fprintf(stderr, PROG ": PE %d (pid %d) was killed by signal %d (%s)\n",
                rank, (int)pid, sig, strsignal(sig));
        dsm_launcher_end_job(job, 128 + sig, SIGTERM, FAIL_KILL_NS, -1);
    } else if (!failed) {
        fprintf(stderr,
                PROG ": PE %d (pid %d) exited with status 0 before "
                     "shmem_finalize\n",
                rank, (int)pid);
        dsm_launcher_end_job(job, 1, SIGTERM, FAIL_KILL_NS, -1);
    } else {
        fprintf(stderr, PROG ": PE %d (pid %d) exited with status %d\n", rank,
                (int)pid, WEXITSTATUS(wstatus));
        dsm_launcher_end_job(job, WEXITSTATUS(wstatus), SIGTERM, FAIL_KILL_NS,
                             -1);
    }
}

void dsm_launcher_reap(job_t *job)
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
    char **envp;    /* environ + our three variables */
    char *rank_var; /* "DMASHMEM_RANK=..." inside envp, rewritten per PE */
    char *secret_var; /* "DMASHMEM_JOB_SECRET=...", the job's (wire.h) */
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
     * ignored dispositions and the mask would survive exec. The signals
     * it passes on to end the job take their default action in the PEs
     * whatever the launcher inherited: a shell script's background job
     * starts with SIGINT ignored, and its PEs then outlived the SIGINT
     * the launcher forwarded until the SIGKILL 2 s later (as Open MPI's
     * launcher does, for the same reason). SIGHUP is left as it is: at
     * its default, or ignored under nohup, where the launcher does not
     * catch it either (setup_signals). */
    struct sigaction sa = {.sa_handler = SIG_DFL};
    sigaction(SIGPIPE, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    setrlimit(RLIMIT_NOFILE, &job->old_nofile);
    sigprocmask(SIG_SETMASK, &job->oldmask, NULL);
    execvpe(job->opt.argv[0], job->opt.argv, sc->envp);
    child_fail(sc->errfd, rank);
}

static bool is_our_var(const char *e)
{
    static const char *const names[] = {DSM_WIRE_ENV_SOCK, DSM_WIRE_ENV_RANK,
                                        DSM_WIRE_ENV_SIZE,
                                        DSM_JOB_SECRET_ENV};
    for (size_t i = 0; i < DSM_ARRAY_SIZE(names); i++) {
        size_t n = strlen(names[i]);
        if (strncmp(e, names[i], n) == 0 && e[n] == '=')
            return true;
    }
    return false;
}

/* The job's network secret (docs/SECURITY.md): 16 random bytes as hex,
 * "DMASHMEM_JOB_SECRET=...". The PEs take it out of their environment at
 * init; only processes of this user can read it before. */
static char *make_secret_var(void)
{
    unsigned char r[DSM_JOB_SECRET_BYTES];
    size_t got = 0;
    while (got < sizeof(r)) {
        ssize_t n = getrandom(r + got, sizeof(r) - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return NULL;
        got += (size_t)n;
    }
    size_t len = strlen(DSM_JOB_SECRET_ENV) + 2 + 2 * sizeof(r);
    char *v = malloc(len), *p;
    if (!v)
        return NULL;
    p = v + sprintf(v, "%s=", DSM_JOB_SECRET_ENV);
    for (size_t i = 0; i < sizeof(r); i++)
        p += sprintf(p, "%02x", r[i]);
    return v;
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
    sc->envp = calloc(n + 5, sizeof(char *));
    sc->secret_var = make_secret_var();
    sc->rank_cap = strlen(DSM_WIRE_ENV_RANK) + 16;
    sc->rank_var = malloc(sc->rank_cap);
    if (asprintf(&size_var, DSM_WIRE_ENV_SIZE "=%d", job->opt.npes) < 0)
        size_var = NULL;
    if (asprintf(&sock_var, DSM_WIRE_ENV_SOCK "=%s", job->sock) < 0)
        sock_var = NULL;
    if (sc->devnull < 0 || !sc->envp || !sc->rank_var || !size_var ||
        !sock_var || !sc->secret_var) {
        fprintf(stderr, PROG ": cannot prepare the PEs' environment: %s\n",
                strerror(errno ? errno : ENOMEM));
        free(size_var);
        free(sock_var);
        return -1;
    }
    for (char **e = environ; e && *e; e++)
        if (!is_our_var(*e))
            sc->envp[k++] = *e;
    sc->envp[k++] = sc->secret_var;
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
    free(sc->secret_var);
}

int dsm_launcher_spawn_all(job_t *job)
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
        dsm_launcher_janitor_send(job, JAN_ADD_PID, pid, NULL);
    }
    rc = 0;
out:
    close(ep[1]);
    spawn_ctx_fini(&sc);
    if (rc < 0)
        dsm_launcher_end_job(job, 1, SIGKILL, 0, -1);
    return rc;
}
