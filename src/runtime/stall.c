/*
 * What a PE waits for when its job is ended (stall.h).
 */
#include "stall.h"

#include "common/common.h"

#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

/* The one published wait of the PE (several threads may wait at once
 * under SHMEM_THREAD_MULTIPLE: the first to publish is shown). */
static struct {
    dsm_stall_t *owner; /* atomic */
    int ready;          /* atomic: text and since_ns are whole */
    uint64_t since_ns;
    char text[480];
} pub;

/* The routine of this library that frames pcs[from..n) are in: the
 * outermost one of this object named shmem* or pshmem* (without the p),
 * or NULL (a static link without -rdynamic names none). *in_lib (where
 * given): one of the first two of them is this object's code. */
static const char *lib_routine(void *const *pcs, int n, int from, int *in_lib)
{
    Dl_info self, di;
    const char *routine = NULL;
    if (!dladdr((void *)lib_routine, &self))
        return NULL;
    for (int k = from; k < n; k++) {
        if (!dladdr(pcs[k], &di) || di.dli_fbase != self.dli_fbase)
            continue;
        if (in_lib)
            *in_lib |= k <= from + 1;
        if (di.dli_sname && (!strncmp(di.dli_sname, "shmem", 5) ||
                             !strncmp(di.dli_sname, "pshmem", 6)))
            routine = di.dli_sname + (di.dli_sname[0] == 'p');
    }
    return routine;
}

#define STALL_FRAMES 32

void dsm_stall_slow(dsm_stall_t *s, const char *routine,
                    dsm_stall_describe_fn describe, const void *arg)
{
    uint64_t now = dsm_now_ns();
    if (!s->since_ns) {
        s->since_ns = now;
        return;
    }
    if (s->published || now - s->since_ns < DSM_STALL_PUBLISH_NS)
        return;
    dsm_stall_t *none = NULL;
    if (!__atomic_compare_exchange_n(&pub.owner, &none, s, 0,
                                     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        /* Another thread's wait is shown; this one stays unpublished
         * (and its counter goes on: it tries again 64 steps later). */
        return;
    }
    if (!routine) {
        /* A wait below the API (a quiet's, a network operation's, a
         * queue's): the routine the program called, from the stack, once
         * per wait that lasted. */
        void *pcs[STALL_FRAMES];
        routine = lib_routine(pcs, backtrace(pcs, STALL_FRAMES), 1, NULL);
        if (!routine)
            routine = "a dmashmem routine";
    }
    int n = snprintf(pub.text, sizeof(pub.text), "%s", routine);
    if (describe && n > 0 && (size_t)n + 2 < sizeof(pub.text)) {
        pub.text[n++] = ':';
        pub.text[n++] = ' ';
        describe(arg, pub.text + n, sizeof(pub.text) - (size_t)n);
    }
    pub.text[sizeof(pub.text) - 1] = '\0';
    pub.since_ns = s->since_ns;
    __atomic_store_n(&pub.ready, 1, __ATOMIC_RELEASE);
    s->published = 1;
}

void dsm_stall_withdraw(dsm_stall_t *s)
{
    __atomic_store_n(&pub.ready, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&pub.owner, NULL, __ATOMIC_RELEASE);
    s->published = 0;
}

/* ------------------------------------------------------------ handler */

/* Async-signal-safe formatting: a string, an unsigned number. */
static size_t put_s(char *b, size_t at, size_t cap, const char *s)
{
    while (*s && at + 1 < cap)
        b[at++] = *s++;
    return at;
}

static size_t put_u(char *b, size_t at, size_t cap, uint64_t v)
{
    char d[24];
    int k = 0;
    do {
        d[k++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (k && at + 1 < cap)
        b[at++] = d[--k];
    return at;
}

static size_t put_x(char *b, size_t at, size_t cap, uint64_t v)
{
    char d[20];
    int k = 0;
    do {
        d[k++] = "0123456789abcdef"[v & 15];
        v >>= 4;
    } while (v);
    at = put_s(b, at, cap, "0x");
    while (k && at + 1 < cap)
        b[at++] = d[--k];
    return at;
}

/* "dmashmem: PE n: " */
static size_t put_pe(char *b, size_t cap)
{
    size_t at = put_s(b, 0, cap, "dmashmem: PE ");
    at = put_u(b, at, cap, (uint64_t)(dsm_log_pe < 0 ? 0 : dsm_log_pe));
    return put_s(b, at, cap, ": ");
}

/* "dmashmem: PE n: signal 15 (Terminated)": every report's start. */
static size_t put_signal(char *b, size_t cap, int sig)
{
    size_t at = put_pe(b, cap);
    at = put_s(b, at, cap, "signal ");
    at = put_u(b, at, cap, (uint64_t)sig);
    return put_s(b, at, cap,
                 sig == SIGINT    ? " (Interrupt)"
                 : sig == SIGHUP  ? " (Hangup)"
                 : sig == SIGTERM ? " (Terminated)"
                 : sig == SIGSEGV ? " (Segmentation fault)"
                 : sig == SIGBUS  ? " (Bus error)"
                 : sig == SIGFPE  ? " (Floating point exception)"
                                  : " (Illegal instruction)");
}

static struct sigaction old_term, old_int, old_hup;
static int have_term, have_int, have_hup;
static int posted_ahead; /* dsm_stall_posted_ahead */

void dsm_stall_posted_ahead(int delta)
{
    __atomic_add_fetch(&posted_ahead, delta, __ATOMIC_RELAXED);
}

static void on_end(int sig)
{
    int saved = errno;
    int ahead = __atomic_load_n(&posted_ahead, __ATOMIC_RELAXED);
    if (!__atomic_load_n(&pub.ready, __ATOMIC_ACQUIRE) && ahead > 0) {
        char b[640];
        size_t at = put_signal(b, sizeof(b), sig);
        at = put_s(b, at, sizeof(b), " ended this PE outside the library's "
                   "waits while ");
        at = put_u(b, at, sizeof(b), (uint64_t)ahead);
        at = put_s(b, at, sizeof(b) - 1,
                   ahead == 1 ? " persistent request keeps"
                              : " persistent requests keep");
        at = put_s(b, at, sizeof(b) - 1,
                   " instances posted ahead on CUDA streams: "
                   DSM_STALL_AHEAD_HOLDS " (shmemx_req(3), NOTES)");
        b[at++] = '\n';
        ssize_t rc = write(STDERR_FILENO, b, at);
        (void)rc;
    }
    if (__atomic_load_n(&pub.ready, __ATOMIC_ACQUIRE)) {
        char b[640];
        uint64_t ds = (dsm_now_ns() - pub.since_ns) / 100000000ull;
        size_t at = put_signal(b, sizeof(b), sig);
        at = put_s(b, at, sizeof(b), " ended a wait of ");
        at = put_u(b, at, sizeof(b), ds / 10);
        at = put_s(b, at, sizeof(b), ".");
        at = put_u(b, at, sizeof(b), ds % 10);
        at = put_s(b, at, sizeof(b), " s in ");
        char text[sizeof(pub.text)];
        memcpy(text, pub.text, sizeof(text));
        text[sizeof(text) - 1] = '\0';
        at = put_s(b, at, sizeof(b) - 1, text);
        b[at++] = '\n';
        ssize_t rc = write(STDERR_FILENO, b, at);
        (void)rc;
    }
    /* The signal's own end: its default action, once this returns (the
     * handler was installed with SA_RESETHAND; the signal is blocked in
     * here). */
    raise(sig);
    errno = saved;
}

/* ------------------------------------------------------------ crashes */

/* A fault (a bad pointer given to a routine, or the program's own): one
 * line naming the signal, the address and the thread, then the stack, a
 * line per frame (symbol+offset, object), then the default action (a core
 * where enabled). A fault in a thread of the library (dsm-engineN,
 * dsm-proxy: they copy for the PE's puts and gets) names the likely
 * cause. */
#define CRASH_FRAMES 24

static void crash_frame(int k, void *pc)
{
    char b[512];
    size_t at = put_pe(b, sizeof(b) - 1);
    Dl_info di;
    at = put_s(b, at, sizeof(b) - 1, "  #");
    at = put_u(b, at, sizeof(b) - 1, (uint64_t)k);
    at = put_s(b, at, sizeof(b) - 1, " ");
    if (dladdr(pc, &di) && di.dli_fname) {
        const char *obj = strrchr(di.dli_fname, '/');
        obj = obj ? obj + 1 : di.dli_fname;
        if (di.dli_sname && di.dli_saddr) {
            at = put_s(b, at, sizeof(b) - 1, di.dli_sname);
            at = put_s(b, at, sizeof(b) - 1, "+");
            at = put_x(b, at, sizeof(b) - 1,
                       (uint64_t)((uintptr_t)pc - (uintptr_t)di.dli_saddr));
        } else {
            at = put_x(b, at, sizeof(b) - 1,
                       (uint64_t)((uintptr_t)pc - (uintptr_t)di.dli_fbase));
        }
        at = put_s(b, at, sizeof(b) - 1, " (");
        at = put_s(b, at, sizeof(b) - 1, *obj ? obj : "?");
        at = put_s(b, at, sizeof(b) - 1, ")");
    } else {
        at = put_x(b, at, sizeof(b) - 1, (uint64_t)(uintptr_t)pc);
    }
    b[at++] = '\n';
    ssize_t rc = write(STDERR_FILENO, b, at);
    (void)rc;
}

static void on_crash(int sig, siginfo_t *si, void *uc)
{
    int saved = errno;
    char b[512], name[17] = "";
    size_t at = put_signal(b, sizeof(b) - 1, sig);
    (void)uc;
    if (si->si_code <= 0) { /* kill(2), tgkill(2), sigqueue(3) */
        at = put_s(b, at, sizeof(b) - 1, " sent by process ");
        at = put_u(b, at, sizeof(b) - 1, (uint64_t)si->si_pid);
    } else if (sig == SIGSEGV || sig == SIGBUS) {
        at = put_s(b, at, sizeof(b) - 1, " at address ");
        at = put_x(b, at, sizeof(b) - 1, (uint64_t)(uintptr_t)si->si_addr);
        at = put_s(b, at, sizeof(b) - 1,
                   sig == SIGSEGV && si->si_code == SEGV_MAPERR
                       ? " (not mapped)"
                   : sig == SIGSEGV && si->si_code == SEGV_ACCERR
                       ? " (no access)"
                       : "");
    }
    void *pcs[CRASH_FRAMES];
    int n = backtrace(pcs, CRASH_FRAMES);
    /* The routine of this library the fault is in, and whether the fault
     * is in the library at all (its code, or a libc copy it called). */
    int in_lib = 0;
    const char *routine = lib_routine(pcs, n, 2, &in_lib);
    (void)prctl(PR_GET_NAME, name, 0, 0, 0); /* this thread's name */
    name[16] = '\0';
    if (!strncmp(name, "dsm-", 4)) {
        at = put_s(b, at, sizeof(b) - 1, " in the library's thread ");
        at = put_s(b, at, sizeof(b) - 1, name);
        in_lib = 1;
    } else if (routine) {
        at = put_s(b, at, sizeof(b) - 1, " in ");
        at = put_s(b, at, sizeof(b) - 1, routine);
    }
    if (in_lib && si->si_code > 0)
        at = put_s(b, at, sizeof(b) - 1,
                   " (inside dmashmem, which moves this PE's puts, gets and "
                   "collectives: a buffer that is not mapped, too short, or "
                   "freed before the transfer completed?)");
    at = put_s(b, at, sizeof(b) - 1, "; the stack:");
    b[at++] = '\n';
    ssize_t rc = write(STDERR_FILENO, b, at);
    (void)rc;
    /* pcs[0] is this handler, pcs[1] the kernel's return trampoline. */
    for (int k = 2; k < n; k++)
        crash_frame(k - 2, pcs[k]);
    /* Installed with SA_RESETHAND: the fault recurs on return (or the
     * raised signal is delivered) under the default action. */
    raise(sig);
    errno = saved;
}

static const int crash_sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
#define NCRASH ((int)(sizeof(crash_sigs) / sizeof(crash_sigs[0])))
static struct sigaction old_crash[NCRASH];
static int have_crash[NCRASH];

static int install_as(int sig, struct sigaction *old, void (*h)(int),
                      void (*ha)(int, siginfo_t *, void *))
{
    struct sigaction cur, sa;
    if (sigaction(sig, NULL, &cur) < 0 || cur.sa_handler != SIG_DFL ||
        (cur.sa_flags & SA_SIGINFO))
        return 0; /* the program's own handler, or ignored: kept */
    memset(&sa, 0, sizeof(sa));
    if (ha) {
        sa.sa_sigaction = ha;
        sa.sa_flags = SA_RESETHAND | SA_SIGINFO;
    } else {
        sa.sa_handler = h;
        sa.sa_flags = SA_RESETHAND;
    }
    sigemptyset(&sa.sa_mask);
    if (sigaction(sig, &sa, old) < 0)
        return 0;
    return 1;
}

static int install_one(int sig, struct sigaction *old)
{
    return install_as(sig, old, on_end, NULL);
}

static void uninstall_one(int sig, struct sigaction *old, int *have)
{
    struct sigaction cur;
    if (!*have)
        return;
    *have = 0;
    /* Only where ours is still the handler (the program may have set its
     * own since). */
    if (sigaction(sig, NULL, &cur) == 0 &&
        ((!(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == on_end) ||
         ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_crash)))
        sigaction(sig, old, NULL);
}

void dsm_stall_install(void)
{
    if (!have_term)
        have_term = install_one(SIGTERM, &old_term);
    if (!have_int)
        have_int = install_one(SIGINT, &old_int);
    if (!have_hup)
        have_hup = install_one(SIGHUP, &old_hup);
    /* backtrace() loads its unwinder on first use (a malloc): before any
     * fault, not in the handler. */
    void *pc[2];
    (void)backtrace(pc, 2);
    for (int i = 0; i < NCRASH; i++)
        if (!have_crash[i])
            have_crash[i] = install_as(crash_sigs[i], &old_crash[i], NULL,
                                       on_crash);
}

void dsm_stall_uninstall(void)
{
    uninstall_one(SIGTERM, &old_term, &have_term);
    uninstall_one(SIGINT, &old_int, &have_int);
    uninstall_one(SIGHUP, &old_hup, &have_hup);
    for (int i = 0; i < NCRASH; i++)
        uninstall_one(crash_sigs[i], &old_crash[i], &have_crash[i]);
}
