/*
 * Fatal errors: one line naming the routine, the PE and the bad value, then
 * the whole job ends with a non-zero status (the bootstrap's abort makes the
 * launcher end the other PEs).
 */
#include "rt.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

void dsm_rt_fatal(const char *routine, const char *fmt, ...)
{
    char msg[768];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    dsm_log_error("%s: %s", routine, msg);
    if (dsm_rt.boot_ops)
        dsm_rt.boot_ops->abort(1, NULL);
    _exit(1);
}

void dsm_rt_fatal_job(const char *routine, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    int n = snprintf(msg, sizeof(msg), "dmashmem: PE %d: %s: ", dsm_rt.me,
                     routine);

    va_start(ap, fmt);
    if (n > 0 && (size_t)n < sizeof(msg))
        vsnprintf(msg + n, sizeof(msg) - (size_t)n, fmt, ap);
    va_end(ap);
    if (dsm_rt.boot_ops)
        dsm_rt.boot_ops->abort(1, msg);
    fprintf(stderr, "%s\n", msg);
    _exit(1);
}

void dsm_rt_bad_pe(const char *routine, int pe)
{
    if (dsm_rt.initialized <= 0)
        dsm_rt_not_initialized(routine);
    dsm_rt_fatal(routine, "invalid PE %d (the job has %d PE%s: 0..%d)", pe,
                 dsm_rt.npes, dsm_rt.npes == 1 ? "" : "s", dsm_rt.npes - 1);
}

void dsm_rt_count_wraps(const char *routine, size_t nelems, size_t size)
{
    dsm_rt_fatal(routine, "nelems %zu x %zu-byte elements does not fit a "
                 "size_t (the byte count would wrap to %zu)", nelems, size,
                 nelems * size);
}

void dsm_rt_bad_addr(const char *routine, const void *addr, size_t len,
                     int pe)
{
    for (int i = 0; i < dsm_rt.nsegs; i++) {
        const dsm_seg_t *s = &dsm_rt.segs[i];
        uintptr_t off = (uintptr_t)addr - (uintptr_t)s->base;
        /* The range first: the network path (no mapping of pe) calls here
         * only for a range outside the segments. */
        if (off < s->size && len > s->size - off)
            dsm_rt_fatal(routine,
                         "range %p + %zu bytes (target PE %d) runs past the "
                         "end of the %s segment (%zu bytes)",
                         addr, len, pe, s->name, s->size);
        if (off < s->size)
            dsm_rt_fatal(routine, "PE %d is not reachable from this PE (no "
                         "shared memory or network path to it)", pe);
    }
    dsm_rt_fatal(routine,
                 "address %p (target PE %d) is not symmetric: not in the "
                 "symmetric heap nor in the program's global/static data",
                 addr, pe);
}

void dsm_rt_null_buffer(const char *routine, const char *what, size_t len,
                        int pe)
{
    dsm_rt_fatal(routine, "%s is NULL (%zu bytes, target PE %d)", what, len,
                 pe);
}

void dsm_rt_not_initialized(const char *routine)
{
    dsm_log_error("%s: called %s", routine,
                  dsm_rt.finalized ? "after shmem_finalize (the library is "
                                     "finalized: no routine but the queries "
                                     "that may precede shmem_init)"
                                   : "before shmem_init");
    if (dsm_rt.boot_ops)
        dsm_rt.boot_ops->abort(1, NULL);
    _exit(1);
}
