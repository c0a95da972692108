/*
 * --mps: a CUDA MPS control daemon of the job's own (issue #15). Several
 * PEs on one GPU without MPS time-slice the GPU between their contexts
 * (~290 us per exchange on an H200; fcollect 1 KiB 10.9 us under MPS,
 * docs/PERFORMANCE.md).
 *
 * Before the PEs start, the launcher makes a private directory
 * ($TMPDIR/dmashmem-mps-XXXXXX, with pipe/ and log/ in it), starts
 * `nvidia-cuda-mps-control -d` with CUDA_MPS_PIPE_DIRECTORY and
 * CUDA_MPS_LOG_DIRECTORY pointing there, and exports both to the PEs, so
 * their CUDA contexts go to that daemon's server and no other job's. When
 * the PEs are gone it sends the daemon `quit` and removes the directory;
 * the janitor (spawn.c) does both if the launcher itself is SIGKILLed.
 * SHMEM_MPS_CONTROL names another control program (tests use a fake one).
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "launcher/launcher.h"

#define MPS_QUIT_WAIT_MS 10000

static const char *control(void)
{
    return dsm_launcher_env(LENV_mps_control, NULL);
}

/* Run the control program with the job's directories; "-d" starts the
 * daemon, else `input` goes to its stdin. Returns its exit status, 127
 * when it could not be run, -1 when it did not end within wait_ms (then
 * it is killed). */
static int run_control(const char *dir, const char *arg, const char *input,
                       int wait_ms)
{
    char pipe_dir[PATH_MAX], log_dir[PATH_MAX];
    int in[2] = {-1, -1};

    snprintf(pipe_dir, sizeof(pipe_dir), "%s/pipe", dir);
    snprintf(log_dir, sizeof(log_dir), "%s/log", dir);
    if (input && pipe2(in, O_CLOEXEC) < 0)
        return 127;
    pid_t pid = fork();
    if (pid < 0) {
        if (input) {
            close(in[0]);
            close(in[1]);
        }
        return 127;
    }
    if (pid == 0) {
        int devnull = open("/dev/null", O_RDWR);
        if (input)
            dup2(in[0], 0);
        else if (devnull >= 0)
            dup2(devnull, 0);
        /* The daemon must not hold the job's output open. */
        if (devnull >= 0) {
            dup2(devnull, 1);
            if (!input)
                dup2(devnull, 2);
        }
        /* The launcher blocks the signals it reads through a signalfd:
         * not the daemon's business. */
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        setenv("CUDA_MPS_PIPE_DIRECTORY", pipe_dir, 1);
        setenv("CUDA_MPS_LOG_DIRECTORY", log_dir, 1);
        signal(SIGPIPE, SIG_DFL);
        if (arg)
            execlp(control(), control(), arg, (char *)NULL);
        else
            execlp(control(), control(), (char *)NULL);
        _exit(127);
    }
    if (input) {
        close(in[0]);
        (void)!write(in[1], input, strlen(input));
        close(in[1]);
    }
    for (int waited = 0;; waited += 10) {
        int ws;
        pid_t r = waitpid(pid, &ws, WNOHANG);
        if (r == pid)
            return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
        if (r < 0 && errno != EINTR)
            return 127;
        if (waited >= wait_ms) {
            kill(pid, SIGKILL);
            waitpid(pid, NULL, 0);
            return -1;
        }
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

static int rm_entry(const char *path, const struct stat *st, int flag,
                    struct FTW *f)
{
    (void)st;
    (void)flag;
    (void)f;
    remove(path);
    return 0;
}

void dsm_launcher_mps_quit(const char *dir)
{
    if (!dir || !dir[0])
        return;
    run_control(dir, NULL, "quit\n", MPS_QUIT_WAIT_MS);
    /* The daemon removes its pipes as it goes; what is left (logs) goes
     * with the directory. */
    nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int dsm_launcher_mps_start(job_t *job)
{
    const char *tmp = getenv("TMPDIR");
    char sub[PATH_MAX];

    if (!tmp || !*tmp)
        tmp = "/tmp";
    int n = snprintf(job->mps_dir, sizeof(job->mps_dir),
                     "%s/dmashmem-mps-XXXXXX", tmp);
    if (n < 0 || (size_t)n + 8 >= sizeof(job->mps_dir) ||
        !mkdtemp(job->mps_dir)) {
        fprintf(stderr, PROG ": --mps: cannot create a directory in %s: %s\n",
                tmp, n < 0 ? "path too long" : strerror(errno));
        job->mps_dir[0] = '\0';
        return -1;
    }
    dsm_launcher_janitor_send(job, JAN_MPS, (int)strlen(job->mps_dir),
                              job->mps_dir);
    snprintf(sub, sizeof(sub), "%s/pipe", job->mps_dir);
    int ok = mkdir(sub, 0700) == 0 && setenv("CUDA_MPS_PIPE_DIRECTORY", sub,
                                             1) == 0;
    snprintf(sub, sizeof(sub), "%s/log", job->mps_dir);
    ok = ok && mkdir(sub, 0700) == 0 &&
         setenv("CUDA_MPS_LOG_DIRECTORY", sub, 1) == 0;
    if (!ok) {
        fprintf(stderr, PROG ": --mps: cannot prepare %s: %s\n",
                job->mps_dir, strerror(errno));
        dsm_launcher_mps_stop(job);
        return -1;
    }
    int st = run_control(job->mps_dir, "-d", NULL, MPS_QUIT_WAIT_MS);
    if (st == 0)
        return 0;
    if (st == 127)
        fprintf(stderr, PROG ": --mps: cannot run %s (not in PATH? CUDA MPS "
                             "comes with the NVIDIA driver)\n",
                control());
    else if (st < 0)
        fprintf(stderr, PROG ": --mps: '%s -d' did not return within %d s\n",
                control(), MPS_QUIT_WAIT_MS / 1000);
    else
        fprintf(stderr, PROG ": --mps: '%s -d' failed with status %d\n",
                control(), st);
    dsm_launcher_mps_stop(job);
    return -1;
}

void dsm_launcher_mps_stop(job_t *job)
{
    if (!job->mps_dir[0])
        return;
    dsm_launcher_mps_quit(job->mps_dir);
    job->mps_dir[0] = '\0';
    dsm_launcher_janitor_send(job, JAN_MPS, 0, NULL);
}
