/*
 * Environment table parsing and SHMEM_INFO output.
 */
#include "env.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/common.h"

dsm_env_t dsm_env;

#define DSM_ENV_AUTO UINT64_MAX

int dsm_env_parse_int(const char *v, long *out)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 0);
    if (errno || end == v || *end)
        return 0;
    *out = x;
    return 1;
}

static int parse_bool(const char *v, int *out)
{
    if (!strcmp(v, "1") || !strcasecmp(v, "y") || !strcasecmp(v, "yes") ||
        !strcasecmp(v, "true") || !strcasecmp(v, "on")) {
        *out = 1;
        return 1;
    }
    if (!strcmp(v, "0") || !strcasecmp(v, "n") || !strcasecmp(v, "no") ||
        !strcasecmp(v, "false") || !strcasecmp(v, "off") || !*v) {
        *out = 0;
        return 1;
    }
    return 0;
}

/* def: the variable's default. "auto" is a size only where the default
 * is auto (the consumer then picks a value); elsewhere, e.g. for
 * SHMEM_SYMMETRIC_SIZE, it would reach the consumer as UINT64_MAX, which
 * no value may be either. */
static int parse_SIZE(const char *v, const char *def, uint64_t *out)
{
    uint64_t x;
    if (!strcasecmp(v, "auto")) {
        if (strcasecmp(def, "auto"))
            return 0;
        *out = DSM_ENV_AUTO;
        return 1;
    }
    if (dsm_parse_size(v, &x) || x == DSM_ENV_AUTO)
        return 0;
    *out = x;
    return 1;
}
static int parse_INT(const char *v, const char *def, long *out)
{
    (void)def;
    return dsm_env_parse_int(v, out);
}
static int parse_BOOL(const char *v, const char *def, int *out)
{
    (void)def;
    return parse_bool(v, out);
}
static int parse_STR(const char *v, const char *def, const char **out)
{
    (void)def;
    *out = v;
    return 1;
}

/* The value of name, or of its deprecated SMA_ spelling (spec annex);
 * *used receives the name the value came from, for error messages. */
static const char *lookup(const char *name, char *used, size_t cap)
{
    const char *v = getenv(name);
    snprintf(used, cap, "%s", name);
    if (v)
        return v;
    if (!strncmp(name, "SHMEM_", 6)) {
        static const char *const sma[] = {"SYMMETRIC_SIZE", "DEBUG", "INFO",
                                          "VERSION"};
        for (size_t i = 0; i < DSM_ARRAY_SIZE(sma); i++)
            if (!strcmp(name + 6, sma[i])) {
                snprintf(used, cap, "SMA_%s", sma[i]);
                return getenv(used);
            }
    }
    return NULL;
}

/* STR variables whose value is one of a fixed list, checked at init (the
 * others are checked where they are used, with their own messages). */
static const struct {
    const char *name;
    const char *const *value;
    const char *choices; /* '|'-separated */
} str_choices[] = {
    {"SHMEM_PERSISTENT_SYNC", &dsm_env.persistent_sync, "host|dev"},
    {"SHMEM_OFI_COMPLETION", &dsm_env.ofi_completion, "auto|delivery|read"},
    {"SHMEM_OFI_FENCE", &dsm_env.ofi_fence, "auto|quiet|target"},
    {"SHMEM_BIND_TO", &dsm_env.bind_to, "auto|none|core|numa"},
};

/* INT variables with a range, checked at init (the others are checked
 * where they are used, with their own messages). */
static const struct {
    const char *name;
    const long *value;
    long min, max;
} int_ranges[] = {
    {"SHMEM_CHECK", &dsm_env.check, 0, 2},
    {"SHMEM_PRELAUNCH_DEPTH", &dsm_env.prelaunch_depth, 0, 64},
    /* -1: auto. At most 0.1 s: finalize waits for the thread's sleep. */
    {"SHMEM_OFI_PROGRESS_US", &dsm_env.ofi_progress_us, -1, 100000},
};

static int check_ranges(void)
{
    for (size_t i = 0; i < DSM_ARRAY_SIZE(int_ranges); i++) {
        long v = *int_ranges[i].value;
        if (v < int_ranges[i].min || v > int_ranges[i].max) {
            dsm_log_error("shmem_init: invalid value '%ld' for %s (%ld..%ld)",
                          v, int_ranges[i].name, int_ranges[i].min,
                          int_ranges[i].max);
            return -1;
        }
    }
    return 0;
}

static int one_of(const char *v, const char *choices)
{
    size_t n = strlen(v);
    for (const char *c = choices; *c;) {
        size_t l = strcspn(c, "|");
        if (l == n && !strncmp(c, v, n))
            return 1;
        c += l + (c[l] == '|');
    }
    return 0;
}

static int check_choices(void)
{
    for (size_t i = 0; i < DSM_ARRAY_SIZE(str_choices); i++) {
        const char *v = *str_choices[i].value;
        if (!one_of(v ? v : "", str_choices[i].choices)) {
            dsm_log_error("shmem_init: invalid value '%s' for %s (one of %s)",
                          v ? v : "", str_choices[i].name,
                          str_choices[i].choices);
            return -1;
        }
    }
    return 0;
}

int dsm_env_init(void)
{
    const char *v;
    char used[64];
    memset(&dsm_env, 0, sizeof(dsm_env));
#define DSM_ENV_PARSE(name, type, field, def, help)                            \
    if (!parse_##type(def, def, &dsm_env.field)) {                             \
        dsm_log_error("internal: bad default for " #name);                    \
        return -1;                                                             \
    }                                                                          \
    v = lookup(#name, used, sizeof(used));                                     \
    if (v) {                                                                   \
        if (!parse_##type(v, def, &dsm_env.field)) {                           \
            dsm_log_error("shmem_init: invalid value '%s' for %s (%s)", v,     \
                          used, help);                                         \
            return -1;                                                         \
        }                                                                      \
        dsm_env.field##_set = strncmp(used, "SMA_", 4) ? 1 : 2;                \
    }
    DSM_ENV_LIST(DSM_ENV_PARSE)
#undef DSM_ENV_PARSE
    return check_choices() || check_ranges() ? -1 : 0;
}

static void fmt_SIZE(char *b, size_t n, uint64_t v)
{
    if (v == DSM_ENV_AUTO)
        snprintf(b, n, "auto");
    else
        snprintf(b, n, "%llu", (unsigned long long)v);
}
static void fmt_INT(char *b, size_t n, long v)
{
    snprintf(b, n, "%ld", v);
}
static void fmt_BOOL(char *b, size_t n, int v)
{
    snprintf(b, n, "%d", v);
}
static void fmt_STR(char *b, size_t n, const char *v)
{
    snprintf(b, n, "%s", v && *v ? v : "\"\""); /* "" shows as "" */
}

void dsm_env_print(void)
{
    char val[64];
    dsm_out("dmashmem environment variables (value, default, meaning):\n");
#define DSM_ENV_PRINT(name, type, field, def, help)                            \
    fmt_##type(val, sizeof(val), dsm_env.field);                               \
    dsm_out("  %-26s %-12s (default %s%s)\n      %s\n", #name, val,            \
            *def ? def : "\"\"", dsm_env.field##_set ? ", set" : "", help);
    DSM_ENV_LIST(DSM_ENV_PRINT)
#undef DSM_ENV_PRINT
}
