/*
 * shmem_launcher's command line: a table of options, each one line plus a
 * handler, and the usage text.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launcher/launcher.h"

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
            "  --bind-to P        bind each PE at init to its share of the\n"
            "                     node: core, numa or none; default\n"
            "                     $SHMEM_BIND_TO, else core when the PEs fit\n"
            "                     the cores, else none\n"
            "  --mps              run a CUDA MPS daemon of the job's own while\n"
            "                     it runs (several PEs per GPU; this node)\n"
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

static const struct {
    const char *name, *def;
} lenv[LENV_COUNT] = {
#define LENV_ROW(name, type, field, def, help) [LENV_##field] = {#name, def},
    DSM_ENV_LAUNCHER(LENV_ROW)
#undef LENV_ROW
};

const char *dsm_launcher_env(int which, const char **name)
{
    const char *v = getenv(lenv[which].name);
    if (name)
        *name = lenv[which].name;
    return v && *v ? v : lenv[which].def;
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
        fprintf(stderr,
                PROG ": invalid launcher '%s' (local, mpirun or "
                     "srun)\n",
                s);
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
        fprintf(stderr,
                PROG ": invalid host list '%s' (names separated by "
                     "commas)\n",
                s);
        return -1;
    }
    o->hosts = s;
    return 0;
}

/* The PEs bind themselves at init (src/common/topo.c), so that every
 * bootstrap gets the same placement; the launcher only checks the value and
 * hands it to them as SHMEM_BIND_TO. */
static int set_bind_to(const char *s, options_t *o)
{
    static const char *const ok[] = {"none", "core", "numa", "auto"};
    for (size_t i = 0; i < DSM_ARRAY_SIZE(ok); i++)
        if (strcmp(s, ok[i]) == 0) {
            o->bind_to = ok[i];
            return 0;
        }
    fprintf(stderr, PROG ": invalid --bind-to '%s' (none, core or numa)\n",
            s);
    return -1;
}

static int set_mps(const char *s, options_t *o)
{
    (void)s;
    o->mps = true;
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
    {{"--bind-to", NULL, NULL}, true, set_bind_to},
    {{"--mps", NULL, NULL}, false, set_mps},
};

/* Returns -1 to continue, else the exit code for main. */
int dsm_launcher_parse_args(int argc, char **argv, options_t *o)
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
        const char *name;
        const char *env = dsm_launcher_env(LENV_launcher_timeout, &name);
        if (*env && parse_timeout_str(env, &o->timeout_s) < 0) {
            fprintf(stderr, PROG ": invalid %s '%s'\n", name, env);
            goto bad;
        }
    }
    {
        const char *name;
        const char *env = dsm_launcher_env(LENV_launcher_trace, &name);
        if (strcmp(env, "0") && strcmp(env, "1")) {
            fprintf(stderr, PROG ": invalid %s '%s' (0 or 1)\n", name, env);
            goto bad;
        }
        o->trace = *env == '1';
    }
    if (o->hosts && o->launcher == LAUNCH_LOCAL) {
        fprintf(stderr, PROG ": --hosts needs --launcher mpirun or srun (the "
                             "local launcher starts PEs on this node only)\n");
        goto bad;
    }
    if (o->launcher == LAUNCH_UNSET)
        o->launcher = o->hosts ? LAUNCH_MPIRUN : LAUNCH_LOCAL;
    if (o->mps && o->launcher != LAUNCH_LOCAL) {
        fprintf(stderr, PROG ": --mps starts a daemon on this node only: with "
                             "mpirun or srun start MPS on each node before "
                             "the job\n");
        goto bad;
    }
    /* The environment reaches the PEs both ways: copied by spawn.c, and
     * exported (-x SHMEM_*) by handoff.c. */
    if (o->bind_to && setenv("SHMEM_BIND_TO", o->bind_to, 1) < 0) {
        fprintf(stderr, PROG ": setenv: %s\n", strerror(errno));
        return 1;
    }
    /* CUDA's lazy loading makes a kernel's first launch wait for the
     * context's running kernels; one that waits in the device API for the
     * proxy then never ends (shmemx_dev(3), Hazards; issue #26). Loaded
     * at start unless the user chose. */
    if (setenv("CUDA_MODULE_LOADING", "EAGER", 0) < 0) {
        fprintf(stderr, PROG ": setenv: %s\n", strerror(errno));
        return 1;
    }
    o->argv = argv + i;
    return -1;
bad:
    fprintf(stderr, "Try '" PROG " --help' for more information.\n");
    return EXIT_USAGE;
}
