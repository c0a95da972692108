/*
 * shmem_launcher (also installed as oshrun): starts N PEs of one program on
 * this node and serves their bootstrap (rank, size, key-value exchange,
 * barriers, descriptor passing, abort) on a unix socket, forwards their
 * output line by line, and ends the whole job as soon as one PE fails
 * (launcher.h lists the parts). This file holds the job's life: setup, the
 * poll loop, signals and timers.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launcher/launcher.h"

/* ------------------------------------------------------------------ signals */

static void on_signal(job_t *job, int sig)
{
    if (job->ending && job->kill_at) {
        /* Asked twice: stop waiting for a graceful end. */
        dsm_launcher_kill_all(job, SIGKILL, -1);
        job->kill_at = 0;
        dsm_launcher_decide(job, 128 + sig);
        return;
    }
    fprintf(stderr, PROG ": received signal %d (%s), ending the job\n", sig,
            strsignal(sig));
    dsm_launcher_end_job(job, 128 + sig, sig, SIGNAL_KILL_NS, -1);
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
    dsm_launcher_reap(job);
}

/* ------------------------------------------------------------------ setup */

static int setup_signals(job_t *job)
{
    sigset_t set;
    struct sigaction hup;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    /* Under nohup a hangup is to end nothing: SIGHUP is left as it is,
     * ignored, here and so in the PEs (a blocked signal would be queued
     * for the signalfd even while ignored). */
    if (sigaction(SIGHUP, NULL, &hup) < 0 || hup.sa_handler != SIG_IGN)
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
                job->opt.npes, (unsigned long)need, (unsigned long)rl.rlim_max);
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

void dsm_launcher_trace(const job_t *job, const char *fmt, ...)
{
    char b[512];
    struct timeval tv;
    va_list ap;
    if (!job->opt.trace)
        return;
    gettimeofday(&tv, NULL);
    const uint64_t rel = dsm_now_ns() - job->born_ns;
    int at = snprintf(b, sizeof(b), PROG ": trace %lld +%llu.%03llu s: ",
                      (long long)tv.tv_sec * 1000 + tv.tv_usec / 1000,
                      (unsigned long long)(rel / NS_PER_S),
                      (unsigned long long)(rel % NS_PER_S / 1000000));
    va_start(ap, fmt);
    vsnprintf(b + at, sizeof(b) - (size_t)at, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s\n", b);
}

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
        dsm_launcher_trace(job, "--timeout %g s reached", job->opt.timeout_s);
        fprintf(stderr, PROG ": job timed out after %g s, ending it (a PE "
                "waiting in the library says what for)\n",
                job->opt.timeout_s);
        dsm_launcher_end_job(job, EXIT_TIMEOUT, SIGTERM, FAIL_KILL_NS, -1);
    }
    if (job->kill_at && now >= job->kill_at) {
        dsm_launcher_trace(job, "SIGKILL to the %d PE(s) still running",
                           job->nalive);
        dsm_launcher_kill_all(job, SIGKILL, -1);
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
                dsm_launcher_read_exec_errors(job);
                break;
            case FD_LISTEN:
                if (job->listen_fd == pfd[i].fd)
                    dsm_launcher_accept(job);
                break;
            case FD_ANON:
                /* anon[] is compacted as hellos arrive: find by fd */
                for (int a = 0; a < job->nanon; a++)
                    if (job->anon[a] == pfd[i].fd) {
                        dsm_launcher_anon_read(job, a);
                        break;
                    }
                break;
            case FD_CONN:
                if (job->pes[f->idx].conn == pfd[i].fd)
                    dsm_launcher_pe_read(job, f->idx);
                break;
            case FD_OUT:
                if (job->pes[f->idx].out[f->sub].fd == pfd[i].fd)
                    dsm_launcher_out_read(job, f->idx,
                                          &job->pes[f->idx].out[f->sub], false);
                break;
            }
        }
        check_timers(job);
    }
    dsm_launcher_trace(job, "every PE has exited");
    /* Every PE is gone: forward what their pipes still hold, but do not wait
     * for grandchildren that may keep them open. */
    for (int r = 0; r < n; r++) {
        dsm_launcher_out_drain(job, r);
        for (int k = 0; k < 2; k++)
            dsm_launcher_out_flush(job, r, &job->pes[r].out[k]);
    }
    rc = 0;
out:
    free(pfd);
    free(ref);
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
    rc = dsm_launcher_parse_args(argc, argv, &job.opt);
    if (rc >= 0)
        return rc;
    if (job.opt.launcher != LAUNCH_LOCAL)
        return dsm_launcher_hand_off(&job.opt);
    rc = 1;
    job.self = getpid();
    job.born_ns = dsm_now_ns();
    dsm_launcher_trace(&job, "starting %d PE(s) of %s", job.opt.npes,
                       job.opt.argv[0]);

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
    if (dsm_launcher_janitor_start(&job) < 0)
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
    if (dsm_launcher_server_open(&job) < 0)
        goto cleanup;
    if (job.opt.mps && dsm_launcher_mps_start(&job) < 0)
        goto cleanup;
    if (job.opt.timeout_s > 0)
        job.timeout_at = dsm_now_ns() + (uint64_t)(job.opt.timeout_s * 1e9);
    if (dsm_launcher_spawn_all(&job) < 0) {
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
    dsm_launcher_trace(&job, "%d PE(s) started", job.opt.npes);
    if (run_loop(&job) < 0) {
        dsm_launcher_kill_all(&job, SIGKILL, -1);
        goto cleanup;
    }
    rc = job.decided ? job.status : 0;

cleanup:
    dsm_launcher_server_close(&job);
    /* Every PE is gone (reaped above, or never started). */
    dsm_launcher_mps_stop(&job);
    dsm_launcher_kv_free_all(&job);
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
    dsm_launcher_trace(&job, "done: exit status %d", rc);
    return rc;
}
