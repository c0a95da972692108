/*
 * Shared helpers: futexes on shared words, diagnostics, size parsing.
 */
#include "common/common.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int dsm_log_pe = -1;
int dsm_log_debug = 0;

const char *dsm_status_str(dsm_status_t status)
{
    switch (status) {
#define DSM_STATUS_CASE(name, str)                                             \
    case DSM_##name:                                                           \
        return str;
        DSM_STATUS_LIST(DSM_STATUS_CASE)
#undef DSM_STATUS_CASE
    default:
        return "unknown status";
    }
}

void dsm_futex_wait(volatile uint32_t *word, uint32_t expected,
                    uint64_t timeout_ns)
{
    struct timespec ts, *tsp = NULL;
    if (timeout_ns) {
        ts.tv_sec = (time_t)(timeout_ns / 1000000000ull);
        ts.tv_nsec = (long)(timeout_ns % 1000000000ull);
        tsp = &ts;
    }
    /* Shared (not FUTEX_PRIVATE): the word may be in a memfd mapped by
     * several processes, and the key is then the page, not the address. */
    syscall(SYS_futex, word, FUTEX_WAIT, expected, tsp, NULL, 0);
}

void dsm_futex_wake(volatile uint32_t *word, int count)
{
    syscall(SYS_futex, word, FUTEX_WAKE, count, NULL, NULL, 0);
}

/* One write(2) per message, so lines of different PEs never interleave even
 * without the launcher's line forwarding. */
static void log_emit(const char *level, const char *fmt, va_list ap)
{
    char buf[1024];
    int n;
    if (dsm_log_pe >= 0)
        n = snprintf(buf, sizeof(buf), "dmashmem: %sPE %d: ", level,
                     dsm_log_pe);
    else
        n = snprintf(buf, sizeof(buf), "dmashmem: %s", level);
    if (n < 0)
        return;
    if ((size_t)n < sizeof(buf)) {
        int m = vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
        if (m > 0)
            n += m;
    }
    if ((size_t)n >= sizeof(buf) - 1)
        n = (int)sizeof(buf) - 2;
    if (buf[n - 1] != '\n')
        buf[n++] = '\n';
    ssize_t rc = write(STDERR_FILENO, buf, (size_t)n);
    (void)rc;
}

void dsm_log_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_emit("", fmt, ap);
    va_end(ap);
}

void dsm_out(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    fflush(stdout);
}

void dsm_log_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_emit("warning: ", fmt, ap);
    va_end(ap);
}

void dsm_log_debugf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_emit("debug: ", fmt, ap);
    va_end(ap);
}

int dsm_parse_size(const char *s, uint64_t *out)
{
    char *end;
    uint64_t mult = 1;
    if (!s || !*s)
        return -1;
    while (isspace((unsigned char)*s))
        s++;
    if (*s == '-')
        return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        return -1;
    switch (toupper((unsigned char)*end)) {
    case 'K':
        mult = 1ull << 10;
        end++;
        break;
    case 'M':
        mult = 1ull << 20;
        end++;
        break;
    case 'G':
        mult = 1ull << 30;
        end++;
        break;
    case 'T':
        mult = 1ull << 40;
        end++;
        break;
    default:
        break;
    }
    if (*end == 'B' || *end == 'b' || (mult > 1 && (*end == 'i' && toupper((unsigned char)end[1]) == 'B')))
        end += (*end == 'i') ? 2 : 1;
    if (*end != '\0')
        return -1;
    if (v > UINT64_MAX / mult)
        return -1;
    *out = v * mult;
    return 0;
}

long dsm_job_cpus;

long dsm_ncores(void)
{
    /* Once this PE is bound (topo.c) its own mask is its share: the
     * node-wide decisions want the CPUs the job started with. */
    if (dsm_job_cpus > 0)
        return dsm_job_cpus;
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0)
        return CPU_COUNT(&set);
    return sysconf(_SC_NPROCESSORS_ONLN);
}
