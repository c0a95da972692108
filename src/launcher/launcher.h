/*
 * shmem_launcher (also installed as oshrun): internal interface between its
 * parts, one idea per file:
 *   main.c     the job's life: setup, the poll(2) loop, signals, timers
 *   args.c     command line and usage
 *   spawn.c    fork/exec of the PEs, their exits, ending the job, and the
 *              janitor that cleans up after a SIGKILLed launcher
 *   server.c   the bootstrap server: socket, wire protocol, key-value store
 *   output.c   forwarding the PEs' output line by line
 *   handoff.c  handing a multi-node job to mpirun or srun (exec)
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
#ifndef DSM_LAUNCHER_H
#define DSM_LAUNCHER_H

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#if defined(__has_include)
#if __has_include("dsm_config.h")
#include "dsm_config.h"
#endif
#endif

#include "common/common.h"
#include "common/env_table.h"
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

/* Who starts the PEs: this program (one node), or an external PMIx
 * launcher the job is handed to (exec). */
enum { LAUNCH_UNSET, LAUNCH_LOCAL, LAUNCH_MPIRUN, LAUNCH_SRUN };

typedef struct options {
    int npes;
    bool tag_output;
    double timeout_s;  /* 0 = none */
    int launcher;      /* LAUNCH_*; UNSET = local, or mpirun with --hosts */
    const char *hosts; /* --hosts h1,h2,... or NULL */
    const char *bind_to; /* --bind-to, passed on as SHMEM_BIND_TO, or NULL */
    bool mps;          /* --mps: a CUDA MPS daemon of the job's own */
    bool trace;        /* SHMEM_LAUNCHER_TRACE=1 */
    char **argv;       /* program and its arguments */
} options_t;

typedef struct outstream {
    int fd;     /* pipe read end, -1 once at EOF */
    int dest;   /* STDOUT_FILENO or STDERR_FILENO */
    char *buf;  /* partial line */
    size_t len; /* bytes in buf */
} outstream_t;

enum { WAIT_NONE, WAIT_COLL, WAIT_GET, WAIT_GET_FD };

typedef struct pe {
    pid_t pid;  /* 0 once reaped (or never started) */
    int conn;   /* bootstrap connection, -1 before hello / after EOF */
    bool hello; /* connected once */
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

    char dir[PATH_MAX];       /* private directory, "" once removed */
    char sock[PATH_MAX + 32]; /* socket path in it */
    int listen_fd;
    int *anon; /* accepted, hello not yet received */
    int nanon;

    int sig_fd;
    int execerr_fd;         /* read end; children report exec failures here */
    int watch_rd, watch_wr; /* PEs hold watch_rd: EOF = launcher gone */
    int janitor_fd;
    pid_t janitor;
    char mps_dir[PATH_MAX]; /* --mps: the daemon's directory, "" = none */

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
    uint64_t born_ns; /* dsm_now_ns() at start, for the trace */
} job_t;

/* SHMEM_LAUNCHER_TRACE=1: "shmem_launcher: trace <wall ms> +<s>: what" on
 * stderr (the wall clock in ms, to line up with the PEs' own clocks). */
void dsm_launcher_trace(const job_t *job, const char *fmt, ...)
    DSM_PRINTF(2, 3);

/* Messages to the janitor (spawn.c); kind 0: the directory is gone.
 * JAN_MPS: the MPS daemon's directory (length 0: stopped already). */
enum { JAN_PATH = 1, JAN_ADD_PID, JAN_DEL_PID, JAN_MPS };

/* args.c: -1 to go on, else the exit status for main. */
int dsm_launcher_parse_args(int argc, char **argv, options_t *o);

/* The launcher's own variables, named and defaulted by the environment
 * table (DSM_ENV_LAUNCHER, common/env_table.h): LENV_launcher_timeout,
 * LENV_mps_control. dsm_launcher_env gives the value, or the table's
 * default where the variable is unset or empty; *name (if not NULL)
 * receives the variable's name, for messages. */
enum {
#define LENV_ENUM(name, type, field, def, help) LENV_##field,
    DSM_ENV_LAUNCHER(LENV_ENUM)
#undef LENV_ENUM
    LENV_COUNT
};
const char *dsm_launcher_env(int which, const char **name);

/* handoff.c: exec mpirun or srun; returns only on failure, with the exit
 * status for main. */
int dsm_launcher_hand_off(const options_t *o);

/* output.c */
int dsm_launcher_write_full(int fd, const void *buf, size_t len);
int dsm_launcher_out_read(job_t *job, int rank, outstream_t *s, bool drain);
void dsm_launcher_out_flush(job_t *job, int rank, outstream_t *s);
void dsm_launcher_out_drain(job_t *job, int rank);

/* spawn.c */
int dsm_launcher_janitor_start(job_t *job);
void dsm_launcher_janitor_send(job_t *job, int kind, int val, const char *data);
void dsm_launcher_remove_dir(const char *dir);
int dsm_launcher_spawn_all(job_t *job);
void dsm_launcher_read_exec_errors(job_t *job);
void dsm_launcher_reap(job_t *job);
void dsm_launcher_kill_all(job_t *job, int sig, int except);
void dsm_launcher_decide(job_t *job, int status);
/* First failure (or abort, timeout): end every PE but 'except'. */
void dsm_launcher_end_job(job_t *job, int status, int sig, uint64_t grace_ns,
                          int except);

/* mps.c: --mps. start: make the directory, start the daemon, export its
 * variables (one line and -1 on failure); stop: quit it and remove the
 * directory; quit: the same for a directory (the janitor). */
int dsm_launcher_mps_start(job_t *job);
void dsm_launcher_mps_stop(job_t *job);
void dsm_launcher_mps_quit(const char *dir);

/* server.c */
int dsm_launcher_server_open(job_t *job);
void dsm_launcher_server_close(job_t *job);
void dsm_launcher_accept(job_t *job);
void dsm_launcher_anon_read(job_t *job, int idx);
void dsm_launcher_pe_read(job_t *job, int rank);
void dsm_launcher_pe_close(job_t *job, int rank);
void dsm_launcher_pe_gone(job_t *job, int rank);
void dsm_launcher_kv_free_all(job_t *job);

#endif /* DSM_LAUNCHER_H */
