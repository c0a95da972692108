/*
 * Collective argument agreement (issue #27; coll.h "argument agreement").
 *
 * Every collective call describes itself once at entry (dsm_call_t: kind,
 * routine, sizes, root, operator). Two things come of it:
 *
 *  - a 24-bit digest of the call, which the call's own synchronisation
 *    words carry (no extra message): the CPU channel's k-th signal stores
 *    k << 24 | digest, the DMA channel's ready and arrival values step by
 *    2 digest + 1 and + 2. The first signal a PE receives from a member in
 *    a call tells it whether that member makes the same call; a member
 *    that does not fails the job before any data moves (a larger nelems
 *    on one PE used to write past every other PE's dest);
 *  - a record of the call in this PE's header of the team's slot (two,
 *    alternating by call number), which the members read only on the
 *    error path: to say what the other PE called, and, when a wait has
 *    lasted a second, to find a member that is in another call and will
 *    never signal this one (a broadcast whose PE_root differs on one PE,
 *    a shmem_malloc(0) against a shmem_malloc(8)).
 *
 * Cost on the fast path: the digest (a few multiplies), five stores into
 * this PE's own memory, a shift and compare per signal; nothing under
 * SHMEM_CHECK=0 but the call count. A digest misses a difference once in
 * 2^24; the record comparison after a stall does not.
 */
#include "coll/coll.h"

#include <ctype.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* Header words of the two records; each: [0] call number (written last),
 * [1] digest | kind << 24 | element size << 32 | team id << 48, [2] a,
 * [3] b, [4] c, [5] the routine name's offset from &dsm_rt (every PE runs
 * the same library, so the offset names the same string everywhere). */
#define REC_BASE 2
#define REC_WORDS 6
_Static_assert(REC_BASE + 2 * REC_WORDS <= DSM_SLOT_HDR_WORDS,
               "the call records outgrew the slot header");

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0xbf58476d1ce4e5b9ull;
    return h ^ (h >> 31);
}

/* One multiply per argument (each odd, so a differing argument always
 * changes its product) and one avalanche round: a handful of instructions
 * per call, differences spread over all 24 bits. */
uint32_t dsm_coll_digest(const dsm_call_t *c)
{
    uint64_t h = (uint64_t)c->kind * 0x9e3779b97f4a7c15ull;
    /* collect: the counts may differ, the call may not. */
    if (c->kind != DSM_CALL_COLLECT)
        h ^= c->a * 0xbf58476d1ce4e5b9ull ^ c->b * 0x94d049bb133111ebull ^
             c->c * 0xd6e8feb86659fd93ull;
    h ^= h >> 31;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return (uint32_t)h & DSM_DIG_MASK;
}

uint32_t dsm_coll_dig_barrier;

static void __attribute__((constructor)) dig_barrier_init(void)
{
    dsm_call_t b = {.kind = DSM_CALL_BARRIER};
    dsm_coll_dig_barrier = dsm_coll_digest(&b);
}

/* Which team a record belongs to: the slot, or for the active sets (which
 * share one slot) their triplet. */
static uint64_t team_id(const dsm_team_t *t)
{
    if (!t->aset)
        return (uint64_t)t->slot;
    return 0x8000u | (mix(mix(mix(1, (uint64_t)t->start),
                              (uint64_t)t->log_stride),
                          (uint64_t)t->size) & 0x7fffu);
}

static void write_rec(uint64_t *r, uint64_t seq, uint64_t tid, uint32_t d,
                      const dsm_call_t *c)
{
    __atomic_store_n(&r[0], 0, __ATOMIC_RELAXED);
    r[1] = d | (uint64_t)c->kind << 24 | (uint64_t)(c->esize & 0xffff) << 32 |
           tid << 48;
    r[2] = c->a;
    r[3] = c->b;
    r[4] = c->c;
    r[5] = (uint64_t)((uintptr_t)c->routine - (uintptr_t)&dsm_rt);
    __atomic_store_n(&r[0], seq, __ATOMIC_RELEASE);
}

void dsm_coll_record(dsm_team_t *t)
{
    const uint64_t seq = t->ncall;
    if (!dsm_rt.check || t->size == 1 || t->rec_seq == seq || !t->call)
        return;
    write_rec(t->xchg + REC_BASE + (seq & 1) * REC_WORDS, seq, team_id(t),
              t->dig, t->call);
    t->rec_seq = seq;
}

/* ------------------------------------------------------------ reading */

typedef struct rec {
    uint64_t w[REC_WORDS];
} rec_t;

/* Member m's record for call seq (0: it has none for that call). */
static int read_rec(dsm_team_t *t, int m, uint64_t seq, rec_t *out)
{
    const int pe = dsm_team_pe(t, m);
    uint64_t *mine = t->xchg + REC_BASE + (seq & 1) * REC_WORDS;
    uint64_t *w = dsm_team_slot_hdr(t, pe);

    for (int i = 0; i < REC_WORDS; i++) {
        if (w) /* mapped */
            out->w[i] = __atomic_load_n(&w[REC_BASE + (seq & 1) * REC_WORDS + i],
                                        __ATOMIC_ACQUIRE);
        else /* our word's address names theirs */
            out->w[i] = dsm_path_load64(&mine[i], pe, "collective");
    }
    /* Rewritten while we read: it moved on to another call. */
    if (w && __atomic_load_n(&w[REC_BASE + (seq & 1) * REC_WORDS],
                             __ATOMIC_ACQUIRE) != out->w[0])
        return 0;
    return out->w[0] == seq && (out->w[1] >> 48) == team_id(t);
}

/* The routine a record names, if it is a name in this library. */
static const char *rec_routine(const rec_t *r)
{
    const char *p = (const char *)((uintptr_t)&dsm_rt + (uintptr_t)r->w[5]);
    Dl_info a, b;
    if (!dladdr(p, &a) || !dladdr((void *)&dsm_rt, &b) ||
        a.dli_fbase != b.dli_fbase)
        return "a collective";
    for (int i = 0; i < 64; i++) {
        if (!p[i])
            return i ? p : "a collective";
        if (!isprint((unsigned char)p[i]))
            break;
    }
    return "a collective";
}

static void describe(const rec_t *r, char *b, size_t n)
{
    const int kind = (int)(r->w[1] >> 24 & 0xff);
    const uint64_t es = r->w[1] >> 32 & 0xffff ? r->w[1] >> 32 & 0xffff : 1;
    const unsigned long long a = r->w[2], bb = r->w[3], c = r->w[4];
    const char *name = rec_routine(r);

    switch (kind) {
    case DSM_CALL_ALLOC:
        if (bb)
            snprintf(b, n, "%s(alignment %llu, %llu bytes)", name, bb, a);
        else
            snprintf(b, n, "%s(%llu bytes)", name, a);
        break;
    case DSM_CALL_CALLOC:
        snprintf(b, n, "%s(%llu, %llu)", name, a, bb);
        break;
    case DSM_CALL_REALLOC:
        snprintf(b, n, "%s(%llu bytes)", name, a);
        break;
    case DSM_CALL_BCAST:
        snprintf(b, n, "%s with nelems %llu, PE_root %llu", name,
                 a / (unsigned long long)es, bb);
        break;
    case DSM_CALL_FCOLLECT:
    case DSM_CALL_COLLECT:
    case DSM_CALL_ALLTOALL:
    case DSM_CALL_REDUCE:
    case DSM_CALL_INSCAN:
    case DSM_CALL_EXSCAN:
        snprintf(b, n, "%s with nelems %llu", name,
                 a / (unsigned long long)es);
        break;
    case DSM_CALL_ALLTOALLS:
        snprintf(b, n, "%s with nelems %llu, dst %lld, sst %lld", name,
                 a / (unsigned long long)es, (long long)bb, (long long)c);
        break;
    case DSM_CALL_SPLIT:
        snprintf(b, n, "%s with (%lld, %lld, %lld)", name, (long long)a,
                 (long long)bb, (long long)c);
        break;
    default:
        snprintf(b, n, "%s", name);
    }
}

static void report(dsm_team_t *t, int m, const rec_t *theirs, int have,
                   uint32_t dig) DSM_NORETURN;
static void report(dsm_team_t *t, int m, const rec_t *theirs, int have,
                   uint32_t dig)
{
    rec_t mine;
    char me_s[160], them_s[160];
    const uint64_t seq = t->ncall;

    if (t->call) {
        write_rec(mine.w, seq, team_id(t), t->dig, t->call);
    } else {
        /* A call that returned before the check (an eager broadcast's
         * root, eager.c): its record was written during it. */
        const uint64_t *r = t->xchg + REC_BASE + (seq & 1) * REC_WORDS;
        for (int i = 0; i < REC_WORDS; i++)
            mine.w[i] = r[i];
    }
    describe(&mine, me_s, sizeof(me_s));
    if (have)
        describe(theirs, them_s, sizeof(them_s));
    else
        snprintf(them_s, sizeof(them_s), "another collective (digest "
                 "%06x, this PE's %06x)", dig, t->dig);
    dsm_rt_fatal_job(rec_routine(&mine),
                     "collective calls differ: PE %d called %s, PE %d %s "
                     "(every PE of the team must make the same call with "
                     "the same arguments)", dsm_team_pe(t, m), them_s,
                     dsm_rt.me, me_s);
}

void dsm_coll_mismatch(dsm_team_t *t, int m, uint32_t theirs)
{
    rec_t r;
    int have = 0;
    /* Records are written lazily (dsm_coll_record): ours first, for the
     * member that is finding the same now; then wait up to half a second
     * for the member's (it writes it when it finds the mismatch too, or
     * once its wait has lasted). */
    dsm_coll_record(t);
    for (uint64_t t0 = dsm_now_ns();
         !(have = read_rec(t, m, t->ncall, &r)) &&
         dsm_now_ns() - t0 < 500000000ull;) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    report(t, m, &r, have, theirs);
}

/* ------------------------------------------------------------ stalls */

/* Two records of one call number describe the same call: the kind and
 * every argument (a collect's count may differ), not only the digest. */
static int same_call(const uint64_t *a, const uint64_t *b)
{
    const uint64_t kind = a[1] >> 24 & 0xff;
    return kind == (b[1] >> 24 & 0xff) &&
           (kind == DSM_CALL_COLLECT || a[2] == b[2]) && a[3] == b[3] &&
           a[4] == b[4];
}

/* Every second of a wait: a member whose record of this call (or, when
 * it is one call behind, of this PE's previous call) differs from this
 * PE's is in another call and will never signal this one. */
/* What a collective's wait waits for (stall.h): its team's other PEs. */
static void describe_team(const void *arg, char *b, size_t n)
{
    const dsm_team_t *t = arg;
    size_t at;
    if (t == &dsm_team_world) {
        snprintf(b, n, "the other PEs of SHMEM_TEAM_WORLD (%d PEs)", t->size);
        return;
    }
    at = (size_t)snprintf(b, n, "the other PEs of %s (%d PEs:",
                          t == &dsm_team_shared ? "SHMEM_TEAM_SHARED"
                                                : "its team",
                          t->size);
    for (int m = 0; m < t->size && at < n; m++) {
        if (m == 8) {
            at += (size_t)snprintf(b + at, n - at, " ...");
            break;
        }
        at += (size_t)snprintf(b + at, n - at, "%s %d", m ? "," : "",
                               dsm_team_pe(t, m));
    }
    if (at < n)
        snprintf(b + at, n - at, ")");
}

void dsm_coll_stall_check(dsm_team_t *t, dsm_coll_stall_t *s)
{
    uint64_t now = dsm_now_ns();

    dsm_stall_slow(&s->st, t->call ? t->call->routine : "a collective",
                   describe_team, t);
    if (!dsm_rt.check || t->size == 1)
        return;
    if (!s->next_ns) {
        /* The wait lasts: the members may want our record. */
        dsm_coll_record(t);
        s->next_ns = now + 1000000000ull;
        return;
    }
    if (now < s->next_ns)
        return;
    s->next_ns = now + 1000000000ull;
    for (int m = 0; m < t->size; m++) {
        rec_t r;
        if (m == t->my_idx)
            continue;
        for (uint64_t back = 0; back < 2 && t->ncall > back; back++) {
            const uint64_t seq = t->ncall - back;
            const uint64_t *mine = t->xchg + REC_BASE + (seq & 1) * REC_WORDS;
            if (mine[0] != seq) /* ours was never written (no wait) */
                break;
            if (!read_rec(t, m, seq, &r))
                continue;
            if (!same_call(r.w, mine)) {
                if (back) {
                    /* Report this PE's previous call. */
                    rec_t me;
                    char a[160], b[160];
                    for (int i = 0; i < REC_WORDS; i++)
                        me.w[i] = mine[i];
                    describe(&r, a, sizeof(a));
                    describe(&me, b, sizeof(b));
                    dsm_rt_fatal_job(rec_routine(&me),
                                     "collective calls differ: PE %d "
                                     "called %s, PE %d %s (every PE of the "
                                     "team must make the same call with "
                                     "the same arguments)",
                                     dsm_team_pe(t, m), a, dsm_rt.me, b);
                }
                report(t, m, &r, 1, (uint32_t)(r.w[1] & DSM_DIG_MASK));
            }
            break;
        }
    }
}

struct wait_ge {
    dsm_team_t *t;
    const uint64_t *word;
    uint64_t want;
    dsm_coll_stall_t stall;
};

static int reached(void *p)
{
    struct wait_ge *w = p;
    if (__atomic_load_n(w->word, __ATOMIC_ACQUIRE) >= w->want)
        return 1;
    dsm_coll_stall_tick(w->t, &w->stall);
    return 0;
}

void dsm_coll_wait_ge(dsm_team_t *t, const uint64_t *word, uint64_t value)
{
    struct wait_ge w = {t, word, value, {.n = 0}};
    if (!reached(&w)) {
        dsm_rt_wait(reached, &w);
        dsm_coll_stall_end(&w.stall);
    }
}

void dsm_coll_note(dsm_team_t *t, const dsm_call_t *c)
{
    if (t->size == 1)
        return;
    pthread_mutex_lock(&t->lock);
    dsm_coll_call(t, c);
    dsm_coll_record(t);
    pthread_mutex_unlock(&t->lock);
}

void dsm_coll_sync_world(const dsm_call_t *c)
{
    dsm_coll_sync_call(&dsm_team_world, c);
}

void dsm_coll_sync_call(dsm_team_t *t, const dsm_call_t *c)
{
    if (t->size == 1) {
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        return;
    }
    pthread_mutex_lock(&t->lock);
    dsm_coll_call(t, c);
    dsm_team_sync(t);
    pthread_mutex_unlock(&t->lock);
}
