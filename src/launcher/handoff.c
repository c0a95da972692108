/*
 * --launcher mpirun|srun or --hosts: the job is handed to an external PMIx
 * launcher by exec, so that its signals, output and exit status are that
 * launcher's own.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "launcher/launcher.h"

/* Whole units, rounded up (no libm for one ceil). */
static double ceil_s(double v)
{
    double w = (double)(long long)v;
    return w < v ? w + 1 : w;
}

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
 * srun exports the whole environment by default); CUDA_MODULE_LOADING
 * too (args.c sets it). */
static bool forwarded_var(const char *e)
{
    return (strncmp(e, "SHMEM_", 6) == 0 || strncmp(e, "SMA_", 4) == 0 ||
            strncmp(e, "CUDA_MODULE_LOADING=", 20) == 0) &&
           strchr(e, '=');
}

/* --launcher mpirun|srun, or --hosts: exec the external PMIx launcher with
 * the job. Returns only on failure, with the exit status for main. */
int dsm_launcher_hand_off(const options_t *o)
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
        fprintf(stderr, PROG ": --launcher %s: '%s' not found in PATH (%s)\n",
                name, name,
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
    unsetenv(DSM_JOB_SECRET_ENV);
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
