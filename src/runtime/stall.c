/*
 * What a PE waits for when its job is ended (stall.h).
 */
#include "stall.h"

#include "common/common.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The one published wait of the PE (several threads may wait at once
 * under SHMEM_THREAD_MULTIPLE: the first to publish is shown). */
static struct {
    dsm_stall_t *owner; /* atomic */
    int ready;          /* atomic: text and since_ns are whole */
    uint64_t since_ns;
    char text[480];
} pub;

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

static struct sigaction old_term, old_int, old_hup;
static int have_term, have_int, have_hup;

static void on_end(int sig)
{
    int saved = errno;
    if (__atomic_load_n(&pub.ready, __ATOMIC_ACQUIRE)) {
        char b[640];
        size_t at = 0;
        uint64_t ds = (dsm_now_ns() - pub.since_ns) / 100000000ull;
        at = put_s(b, at, sizeof(b), "dmashmem: PE ");
        at = put_u(b, at, sizeof(b), (uint64_t)(dsm_log_pe < 0 ? 0 : dsm_log_pe));
        at = put_s(b, at, sizeof(b), ": signal ");
        at = put_u(b, at, sizeof(b), (uint64_t)sig);
        at = put_s(b, at, sizeof(b), sig == SIGINT   ? " (Interrupt)"
                                     : sig == SIGHUP ? " (Hangup)"
                                                     : " (Terminated)");
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

static int install_one(int sig, struct sigaction *old)
{
    struct sigaction cur, sa;
    if (sigaction(sig, NULL, &cur) < 0 || cur.sa_handler != SIG_DFL ||
        (cur.sa_flags & SA_SIGINFO))
        return 0; /* the program's own handler, or ignored: kept */
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_end;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND;
    if (sigaction(sig, &sa, old) < 0)
        return 0;
    return 1;
}

static void uninstall_one(int sig, struct sigaction *old, int *have)
{
    struct sigaction cur;
    if (!*have)
        return;
    *have = 0;
    /* Only where ours is still the handler (the program may have set its
     * own since). */
    if (sigaction(sig, NULL, &cur) == 0 && !(cur.sa_flags & SA_SIGINFO) &&
        cur.sa_handler == on_end)
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
}

void dsm_stall_uninstall(void)
{
    uninstall_one(SIGTERM, &old_term, &have_term);
    uninstall_one(SIGINT, &old_int, &have_int);
    uninstall_one(SIGHUP, &old_hup, &have_hup);
}
