/*
 * Distributed locks: shmem_set_lock, shmem_test_lock, shmem_clear_lock.
 *
 * A ticket lock on PE 0's copy of the symmetric long (which the spec makes
 * the user zero before first use). The 64-bit word holds two 32-bit
 * fields: the next ticket in the high half and the ticket now served in the
 * low half; 0 is "free, nobody waiting". Tickets are served in the order
 * they were drawn, so the lock is fair under contention from every PE
 * (FIFO), and a waiter only reads the word. Drawing a ticket is one atomic
 * add of 1 << 32, whose carry out of bit 63 is dropped, so the ticket field
 * wraps without touching the served field; the holder advances the served
 * field with a compare-and-swap, so its wrap cannot carry into the tickets.
 * A waiter sleeps on its own application wake word; clear_lock wakes every
 * local PE's (the next holder is whichever PE drew the next ticket).
 *
 * When PE 0 is reached through the network, each look at the word is a
 * round trip that PE 0 must serve. Waiters that looked again at once (16
 * threads on each of 4 PEs: SOS test/unit mt_locking, issue #14) kept
 * PE 0 answering them while the holder's own operations (its data, its
 * quiet, the clear) waited in the same queues: the test did not finish in
 * 150 s on 2 cores. So there a waiter looks again only after a pause
 * proportional to the tickets ahead of it (proportional backoff for
 * ticket locks, Mellor-Crummey and Scott 1991), and a thread that polls
 * with shmem_test_lock is paced the same way: a failed try is answered at
 * once, the next try of that thread waits out the pause first.
 */
#include "amo.h"
#include "path.h"
#include "wait.h"
#include "stall.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define LOCK_PE 0
#define TICKET_ONE ((uint64_t)1 << 32)
#define TICKET(w) ((uint32_t)((w) >> 32))
#define SERVING(w) ((uint32_t)(w))
/* Over the network: the pause per ticket ahead (about one holder's round
 * trip on a loaded node), and its cap. */
#define LOCK_NET_PAUSE_NS 100000ull
#define LOCK_NET_PAUSE_MAX_NS 2000000ull

/* Every access goes through dsm_amo on PE 0's word: a CPU atomic when PE 0
 * is mapped, a libfabric atomic when it is on another node. */
static long *lock_check(long *lock, const char *routine)
{
    DSM_CHECK_INIT(routine);
    if (DSM_UNLIKELY(!lock))
        dsm_rt_fatal(routine, "lock is NULL");
    return lock;
}

static uint64_t lock_op(long *lock, dsm_amo_op_t op, uint64_t val,
                        uint64_t cmp, const char *routine)
{
    uint64_t old = 0;
    dsm_amo(DSM_CTX_DEFAULT, op, lock, sizeof(uint64_t), &val, &cmp, &old,
            LOCK_PE, routine);
    return old;
}

struct lock_wait {
    long *lock;
    uint32_t ticket;
};

static int my_turn(void *p)
{
    struct lock_wait *l = p;
    return SERVING(lock_op(l->lock, DSM_AMO_FETCH, 0, 0, "shmem_set_lock")) ==
           l->ticket;
}

/* The word lives on another node: each look costs PE 0 a round trip. */
static int lock_remote(void)
{
    return !(dsm_path_of(LOCK_PE)->caps & DSM_PATH_CAP_CPU_AMO);
}

/* Sleep while `ahead` holders go before us (the progress thread serves
 * the network meanwhile), then progress the network: without a progress
 * thread (SHMEM_OFI_PROGRESS_US=0) the lock's home PE, whose own ticket
 * reads are CPU atomics, read no completions while its threads waited
 * for the lock, and the other PEs' AMOs on it waited for the heartbeat
 * thread's read of the CQ, once a second (net_mt_lock, 2 PEs: 23 s for
 * 200 takes). */
static void lock_pause(uint32_t ahead)
{
    uint64_t ns = DSM_MIN((uint64_t)ahead * LOCK_NET_PAUSE_NS,
                          LOCK_NET_PAUSE_MAX_NS);
    struct timespec ts = {(time_t)(ns / 1000000000ull),
                          (long)(ns % 1000000000ull)};
    nanosleep(&ts, NULL);
    dsm_path_progress();
}

/* The locks this PE holds, with the thread that took each (SHMEM_CHECK
 * >= 1): a second shmem_set_lock of a lock by the thread that holds it
 * would wait for itself forever (a ticket lock knows no owner), so it
 * fails the job instead. Another thread of the PE waits, as locks order
 * the PE's threads too (SOS's mt_locking). Few locks are held at once: a
 * short list under a mutex, next to a call that costs a round of atomics. */
static void set_lock(long *lock);

static struct held_lock {
    const long *lock;
    pthread_t thread;
} *held;
static size_t nheld, cap_held;
static pthread_mutex_t held_mu = PTHREAD_MUTEX_INITIALIZER;

static void held_check(const long *lock)
{
    pthread_mutex_lock(&held_mu);
    for (size_t i = 0; i < nheld; i++)
        if (held[i].lock == lock &&
            pthread_equal(held[i].thread, pthread_self())) {
            pthread_mutex_unlock(&held_mu);
            dsm_rt_fatal("shmem_set_lock", "lock %p is already held by this "
                         "PE (this thread): a second shmem_set_lock would "
                         "wait for itself forever (locks are not "
                         "recursive)", (const void *)lock);
        }
    pthread_mutex_unlock(&held_mu);
}

static void held_add(const long *lock)
{
    pthread_mutex_lock(&held_mu);
    if (nheld == cap_held) {
        size_t c = cap_held ? 2 * cap_held : 8;
        struct held_lock *h = realloc(held, c * sizeof(*h));
        if (!h) { /* the check is lost for this lock, nothing else */
            pthread_mutex_unlock(&held_mu);
            return;
        }
        held = h;
        cap_held = c;
    }
    held[nheld++] = (struct held_lock){lock, pthread_self()};
    pthread_mutex_unlock(&held_mu);
}

static void held_remove(const long *lock)
{
    pthread_mutex_lock(&held_mu);
    for (size_t i = 0; i < nheld; i++)
        if (held[i].lock == lock) {
            held[i] = held[--nheld];
            break;
        }
    pthread_mutex_unlock(&held_mu);
}

void pshmem_set_lock(long *lock)
{
    lock_check(lock, "shmem_set_lock");
    if (dsm_rt.check)
        held_check(lock);
    set_lock(lock);
    if (dsm_rt.check)
        held_add(lock);
}

/* What a wait that lasts waits for (stall.h). */
static void describe_lock(const void *p, char *b, size_t n)
{
    const struct lock_wait *l = p;
    snprintf(b, n, "the lock at %p (another PE or thread holds it, or "
             "waits for it before this one)", (void *)l->lock);
}

static void set_lock(long *lock)
{
    struct lock_wait l = {
        lock, TICKET(lock_op(lock, DSM_AMO_ADD, TICKET_ONE, 0,
                             "shmem_set_lock"))};
    if (lock_remote()) {
        uint32_t serving;
        dsm_stall_t st = {0, 0, 0};
        while ((serving = SERVING(lock_op(lock, DSM_AMO_FETCH, 0, 0,
                                          "shmem_set_lock"))) != l.ticket) {
            lock_pause(l.ticket - serving);
            dsm_stall_tick(&st, "shmem_set_lock", describe_lock, &l);
        }
        dsm_stall_done(&st);
        return;
    }
    if (!my_turn(&l))
        dsm_rt_wait_in("shmem_set_lock", describe_lock, &l, my_turn, &l);
}

/* This thread's last failed shmem_test_lock over the network: the lock,
 * and how long to leave it before asking again. */
static _Thread_local const long *test_last;
static _Thread_local uint64_t test_next_ns;
DSM_WEAK(set_lock)

int pshmem_test_lock(long *lock)
{
    lock_check(lock, "shmem_test_lock");
    const int remote = lock_remote();
    if (remote && test_last == lock) {
        uint64_t now = dsm_now_ns();
        if (now < test_next_ns) {
            struct timespec ts = {0, (long)(test_next_ns - now)};
            nanosleep(&ts, NULL);
        }
        dsm_path_progress(); /* as lock_pause */
        test_last = NULL;
    }
    uint64_t old = lock_op(lock, DSM_AMO_FETCH, 0, 0, "shmem_test_lock"), seen;

    /* Free means nobody holds it and nobody waits: take the next ticket
     * only if it is served at once. */
    while (TICKET(old) == SERVING(old)) {
        seen = lock_op(lock, DSM_AMO_CSWAP, old + TICKET_ONE, old,
                       "shmem_test_lock");
        if (seen == old) {
            if (dsm_rt.check)
                held_add(lock);
            return 0;
        }
        old = seen;
    }
    if (remote) {
        uint32_t queue = TICKET(old) - SERVING(old);
        test_last = lock;
        test_next_ns = dsm_now_ns() +
                       DSM_MIN((uint64_t)queue * LOCK_NET_PAUSE_NS,
                               LOCK_NET_PAUSE_MAX_NS);
    }
    return 1;
}
DSM_WEAK(test_lock)

void pshmem_clear_lock(long *lock)
{
    lock_check(lock, "shmem_clear_lock");
    uint64_t old = lock_op(lock, DSM_AMO_FETCH, 0, 0, "shmem_clear_lock");
    uint64_t next, seen;

    /* The protected updates (puts, nbi included) are complete and visible
     * before the next holder can see its turn. */
    dsm_rt_quiet(&dsm_ctx_default);
    /* Before the lock is free: another thread of this PE may take it at
     * once and record itself. */
    if (dsm_rt.check)
        held_remove(lock);
    for (;;) {
        if (DSM_UNLIKELY(TICKET(old) == SERVING(old)))
            dsm_rt_fatal("shmem_clear_lock", "lock %p is not held",
                         (void *)lock);
        next = (old & ~(uint64_t)UINT32_MAX) | (uint32_t)(SERVING(old) + 1);
        seen = lock_op(lock, DSM_AMO_CSWAP, next, old, "shmem_clear_lock");
        if (seen == old)
            break;
        old = seen;
    }
    if (TICKET(next) != SERVING(next))
        for (int pe = 0; pe < dsm_rt.npes; pe++)
            if (dsm_rt.peer_ctrl[pe])
                dsm_wake_notify(&dsm_rt.peer_ctrl[pe]->wake_app);
}
DSM_WEAK(clear_lock)
