/*
 * Small helpers shared by every layer (runtime, sdma, coll, net, launcher):
 * compiler hints, atomics on shared words, futex sleep/wake, clocks and the
 * one-line diagnostics. Nothing OpenSHMEM-specific lives here.
 */
#ifndef DSM_COMMON_H
#define DSM_COMMON_H

#ifdef HAVE_CONFIG_H
#include "dsm_config.h"
#endif

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "common/status.h"

#define DSM_API __attribute__((visibility("default")))
#define DSM_LIKELY(x) __builtin_expect(!!(x), 1)
#define DSM_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define DSM_NORETURN __attribute__((noreturn))
#define DSM_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define DSM_CACHELINE 64
#define DSM_ALIGNED_CL __attribute__((aligned(DSM_CACHELINE)))
#define DSM_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define DSM_MIN(a, b) ((a) < (b) ? (a) : (b))
#define DSM_MAX(a, b) ((a) > (b) ? (a) : (b))
#define DSM_ALIGN_UP(x, a) (((x) + ((a)-1)) & ~((__typeof__(x))(a)-1))
#define DSM_ALIGN_DOWN(x, a) ((x) & ~((__typeof__(x))(a)-1))
/* The job's network secret (docs/SECURITY.md): shmem_launcher hands its
 * PEs 2 * DSM_JOB_SECRET_BYTES hex digits in this variable; the runtime
 * takes it out of the environment at init and gives it to src/net. */
#define DSM_JOB_SECRET_ENV "DMASHMEM_JOB_SECRET"
#define DSM_JOB_SECRET_BYTES 16
#define dsm_container_of(ptr, type, member)                                    \
    ((type *)((char *)(ptr)-offsetof(type, member)))

/* Public routine naming: the strong symbol is pshmem_NAME, shmem_NAME a weak
 * alias of it, so a profiling tool can define shmem_NAME and call pshmem_NAME
 * (spec section 10, the profiling interface). */
#define DSM_PRAGMA_(x) _Pragma(#x)
#define DSM_WEAK_ALIAS(alias, target) DSM_PRAGMA_(weak alias = target)
#define DSM_WEAK(name) DSM_WEAK_ALIAS(shmem_##name, pshmem_##name)
#define DSM_WEAKX(name) DSM_WEAK_ALIAS(shmemx_##name, pshmemx_##name)

static inline void dsm_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#else
    __asm__ __volatile__("" ::: "memory");
#endif
}

/* Atomic access to 64-bit words in shared memory (signals, triggers,
 * completion sequences). */
static inline uint64_t dsm_load_acq(const volatile uint64_t *p)
{
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}
static inline void dsm_store_rel(volatile uint64_t *p, uint64_t v)
{
    __atomic_store_n(p, v, __ATOMIC_RELEASE);
}
static inline uint32_t dsm_load32_acq(const volatile uint32_t *p)
{
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

/* Monotonic clock in nanoseconds and seconds. */
static inline uint64_t dsm_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Futex on a 32-bit word that may live in memory shared between processes
 * (memfd mappings): never FUTEX_PRIVATE. timeout_ns 0 = wait forever.
 * Returns when woken, on timeout, on a signal or when *word != expected. */
void dsm_futex_wait(volatile uint32_t *word, uint32_t expected,
                    uint64_t timeout_ns);
void dsm_futex_wake(volatile uint32_t *word, int count);


/* A wake word: threads that sleep waiting for memory written by another
 * thread or process (a signal, a put, a doorbell) sleep on seq; writers call
 * dsm_wake_notify() after their store, which costs one load when nobody
 * sleeps. One lives in each PE's shared control page. */
typedef struct dsm_wake {
    volatile uint32_t seq;
    volatile uint32_t sleepers;
} dsm_wake_t;

/* The wake without the fence: for a writer that notifies several words
 * after one __atomic_thread_fence(__ATOMIC_SEQ_CST) of its own. */
static inline void dsm_wake_sleepers(dsm_wake_t *w)
{
    if (DSM_UNLIKELY(__atomic_load_n(&w->sleepers, __ATOMIC_RELAXED))) {
        __atomic_fetch_add(&w->seq, 1, __ATOMIC_RELEASE);
        dsm_futex_wake(&w->seq, 0x7fffffff);
    }
}

static inline void dsm_wake_notify(dsm_wake_t *w)
{
    /* The caller's data store must be visible before we read sleepers, and
     * a sleeper registers before re-checking its condition (Dekker). */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    dsm_wake_sleepers(w);
}

/* Sleep on w unless cond(arg) holds once registered; timeout_ns bounds the
 * sleep (writers that cannot notify, e.g. a GPU or the network, exist). */
static inline void dsm_wake_sleep(dsm_wake_t *w, int (*cond)(void *), void *arg,
                                  uint64_t timeout_ns)
{
    uint32_t seen = __atomic_load_n(&w->seq, __ATOMIC_ACQUIRE);
    __atomic_fetch_add(&w->sleepers, 1, __ATOMIC_SEQ_CST);
    if (!cond(arg))
        dsm_futex_wait(&w->seq, seen, timeout_ns);
    __atomic_fetch_sub(&w->sleepers, 1, __ATOMIC_RELEASE);
}

/* Diagnostics. The prefix names the library and, once known, the PE. */
extern int dsm_log_pe;     /* -1 before the PE knows its rank */
extern int dsm_log_debug;  /* SHMEM_DEBUG */
void dsm_log_error(const char *fmt, ...) DSM_PRINTF(1, 2);
void dsm_log_warn(const char *fmt, ...) DSM_PRINTF(1, 2);
void dsm_log_debugf(const char *fmt, ...) DSM_PRINTF(1, 2);
/* What the library reports on stdout (SHMEM_VERSION, SHMEM_INFO, the
 * placement line): printf, then the stream flushed, so each call reaches
 * the file in one write of whole lines (keep a call under PIPE_BUF). A
 * launcher that forwards its PEs' output as it reads it (Open MPI's
 * mpirun) then never puts one PE's line inside another's, as it did where
 * stdio's buffer filled mid-line. */
void dsm_out(const char *fmt, ...) DSM_PRINTF(1, 2);
#define dsm_debug(...)                                                         \
    do {                                                                       \
        if (DSM_UNLIKELY(dsm_log_debug))                                       \
            dsm_log_debugf(__VA_ARGS__);                                       \
    } while (0)

/* Parse "512M", "4k", "1G", "4096" into bytes; 0 on success. */
int dsm_parse_size(const char *s, uint64_t *out);

/* Cores this process may run on: its affinity mask's CPU count, else the
 * online CPUs. Sizing decisions (waiting mode, progress and engine threads)
 * must see what a cpuset or taskset leaves us, not the whole machine. */
long dsm_ncores(void);
/* The job's CPUs on this node, set by dsm_topo_init (topo.h) before it
 * binds the PE to a share of them; 0 until then. */
extern long dsm_job_cpus;

#endif /* DSM_COMMON_H */
