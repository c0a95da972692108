/*
 * Helpers for the multi-PE test programs. A failed check prints one line
 * naming the PE, the place and the condition, then ends this PE with _exit(1)
 * (not exit(): the implicit shmem_finalize at exit is collective and would
 * wait for peers that may themselves be waiting for us); the launcher then
 * ends the job with that status. An alarm turns a hang into a failure long
 * before the launcher's --timeout.
 */
#ifndef DSM_TEST_MP_H
#define DSM_TEST_MP_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <shmem.h>

#define MP_FAIL(...)                                                           \
    do {                                                                       \
        char mp_msg_[1024];                                                     \
        snprintf(mp_msg_, sizeof(mp_msg_), __VA_ARGS__);                       \
        fprintf(stderr, "FAIL: PE %d: %s:%d: %s\n", shmem_my_pe(), __FILE__,   \
                __LINE__, mp_msg_);                                            \
        fflush(stdout);                                                        \
        fflush(stderr);                                                        \
        _exit(1);                                                              \
    } while (0)

/* CHECK(cond, fmt, ...): fmt says what was being checked. */
#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            char mp_what_[400];                                                \
            snprintf(mp_what_, sizeof(mp_what_), __VA_ARGS__);                 \
            MP_FAIL("check failed: %s (%s)", #cond, mp_what_);                 \
        }                                                                      \
    } while (0)

/* Seconds a test may take before it counts as hung; the environment's
 * MP_ALARM_S (seconds) replaces it for runs known to be slow (a script
 * that sets it bounds the run with the launcher's --timeout too). */
#ifndef MP_ALARM_S
#define MP_ALARM_S 60
#endif

static inline void mp_init(void)
{
    const char *a = getenv("MP_ALARM_S");
    const int s = a ? atoi(a) : 0;
    alarm(s > 0 ? (unsigned)s : MP_ALARM_S);
    shmem_init();
}

/* 1 when the job runs with SHMEM_FORCE_NETWORK (every PE its own node):
 * nothing is shared between PEs, shmem_ptr of a peer is NULL and
 * SHMEM_TEAM_SHARED holds only this PE. */
static inline int mp_network(void)
{
    const char *v = getenv("SHMEM_FORCE_NETWORK");
    return v && (!strcmp(v, "1") || !strcasecmp(v, "yes") ||
                 !strcasecmp(v, "y") || !strcasecmp(v, "true") ||
                 !strcasecmp(v, "on"));
}

static inline double mp_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Deterministic generator (splitmix64): every PE can replay another's. */
static inline uint64_t mp_rand(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The byte a sender s writes at offset o in round r. */
static inline unsigned char mp_byte(int s, size_t o, int r)
{
    return (unsigned char)(o * 131u + (o >> 9) + (size_t)s * 17u +
                           (size_t)r * 29u + 1u);
}

#endif /* DSM_TEST_MP_H */
