/*
 * Broadcast: every RMA type from every root on SHMEM_TEAM_WORLD, a strided
 * team and the 2-D teams; broadcastmem of 1 byte to 1 MiB (odd sizes too)
 * from every root; dest is written on the root as well (1.5), bytes past
 * the end are left alone, and the deprecated broadcast32/64 leave the
 * root's dest alone. Built three times: COLL_BCAST_ALG selects
 * SHMEM_BCAST_ALGORITHM (auto by default, push, bcast; pull).
 */
#include "mp.h"

#define MAXB (1u << 20)
#define GUARD 64

static unsigned char *src, *dst;

static void fill(unsigned char *p, size_t n, int root, int round)
{
    for (size_t i = 0; i < n; i++)
        p[i] = mp_byte(root, i, round);
}

/* One broadcastmem over team t of n bytes from member root. */
static void mem_case(shmem_team_t t, size_t n, int root, int round)
{
    int me = shmem_team_my_pe(t);
    fill(src, n, root, round);
    memset(dst, 0xee, n + GUARD);
    shmem_barrier_all(); /* nobody is still checking the last round */
    CHECK(shmem_broadcastmem(t, dst, src, n, root) == 0, "broadcastmem");
    for (size_t i = 0; i < n; i++)
        if (dst[i] != mp_byte(root, i, round))
            MP_FAIL("broadcastmem %zu bytes root %d (team PE %d): byte %zu is "
                    "%#x, expected %#x", n, root, me, i, dst[i],
                    mp_byte(root, i, round));
    for (size_t i = n; i < n + GUARD; i++)
        CHECK(dst[i] == 0xee, "byte %zu past a %zu-byte broadcast changed", i,
              n);
}

#define TYPED_CASE(T, N)                                                       \
    {                                                                          \
        T *s = (T *)src, *d = (T *)dst;                                        \
        for (size_t i = 0; i < nel; i++)                                       \
            s[i] = (T)((i * 3 + (size_t)root * 5 + 1) % 100);                 \
        for (size_t i = 0; i < nel + 2; i++)                                   \
            d[i] = (T)111;                                                     \
        shmem_barrier_all();                                                   \
        CHECK(shmem_##N##_broadcast(t, d, s, nel, root) == 0,                  \
              #N "_broadcast");                                                \
        for (size_t i = 0; i < nel; i++)                                       \
            CHECK(d[i] == (T)((i * 3 + (size_t)root * 5 + 1) % 100),          \
                  #N "_broadcast %zu elements root %d: elem %zu", nel, root,  \
                  i);                                                          \
        CHECK(d[nel] == (T)111 && d[nel + 1] == (T)111,                        \
              #N "_broadcast wrote past the end");                             \
    }

static void typed(shmem_team_t t, size_t nel, int root)
{
    SHMEM_TYPES_RMA(TYPED_CASE)
}

static void team_cases(shmem_team_t t, const char *what, int big)
{
    static const size_t sizes[] = {1, 2, 3, 8, 13, 1000, 4097, 65535, 262147,
                                   MAXB};
    int n;
    if (t == SHMEM_TEAM_INVALID)
        return;
    n = shmem_team_n_pes(t);
    (void)what;
    for (int root = 0; root < n; root++) {
        typed(t, 1, root);
        typed(t, 37, root);
        for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++)
            if (big || sizes[k] <= 65535)
                mem_case(t, sizes[k], root, (int)k);
    }
}

int main(void)
{
#ifdef COLL_BCAST_ALG
    setenv("SHMEM_BCAST_ALGORITHM", COLL_BCAST_ALG, 1);
#endif
    mp_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    src = shmem_malloc(MAXB + GUARD);
    dst = shmem_malloc(MAXB + GUARD);
    CHECK(src && dst, "shmem_malloc");

    team_cases(SHMEM_TEAM_WORLD, "world", 1);

    /* Strided teams: barrier_all inside the cases needs every PE, so PEs
     * outside a team still call it the same number of times. */
    shmem_team_t ev, rev, xt, yt;
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (npes + 1) / 2,
                                   NULL, 0, &ev) == 0, "evens");
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, npes - 1, -1, npes, NULL,
                                   0, &rev) == 0, "reversed");
    CHECK(shmem_team_split_2d(SHMEM_TEAM_WORLD, 2, NULL, 0, &xt, NULL, 0,
                              &yt) == 0, "2d");
    team_cases(rev, "reversed", 0);
    /* Every PE belongs to exactly one x team and one y team, but the evens
     * team leaves the odd PEs out: they mirror its barriers. */
    if (ev != SHMEM_TEAM_INVALID) {
        team_cases(ev, "evens", 0);
    } else {
        int ne = (npes + 1) / 2;
        int calls = ne * (2 * 24 + 8); /* typed barriers + mem cases */
        for (int i = 0; i < calls; i++)
            shmem_barrier_all();
    }
    /* x teams have 2 members except maybe the last; y teams differ by one:
     * run a fixed count of cases per PE so that barriers match. */
    for (int root = 0; root < 2; root++) {
        int nx = shmem_team_n_pes(xt), ny = shmem_team_n_pes(yt);
        if (root < nx)
            mem_case(xt, 4097, root, 3);
        else
            shmem_barrier_all();
        if (root < ny)
            mem_case(yt, 65535, root, 4);
        else
            shmem_barrier_all();
    }

    /* Deprecated broadcast32/64: the root's dest is not written. */
    static long psync[SHMEM_BCAST_SYNC_SIZE];
    for (int i = 0; i < SHMEM_BCAST_SYNC_SIZE; i++)
        psync[i] = SHMEM_SYNC_VALUE;
    for (int root = 0; root < npes; root++) {
        uint32_t *s32 = (uint32_t *)src, *d32 = (uint32_t *)dst;
        for (int i = 0; i < 100; i++) {
            s32[i] = (uint32_t)(root * 1000 + i);
            d32[i] = 7;
        }
        shmem_barrier_all();
        shmem_broadcast32(d32, s32, 100, root, 0, 0, npes, psync);
        for (int i = 0; i < 100; i++)
            CHECK(d32[i] == (me == root ? 7u : (uint32_t)(root * 1000 + i)),
                  "broadcast32 root %d elem %d: %u", root, i, d32[i]);
        uint64_t *s64 = (uint64_t *)src, *d64 = (uint64_t *)dst;
        for (int i = 0; i < 50; i++) {
            s64[i] = (uint64_t)root << 40 | (uint64_t)i;
            d64[i] = 9;
        }
        shmem_barrier_all();
        shmem_broadcast64(d64, s64, 50, root, 0, 0, npes, psync);
        for (int i = 0; i < 50; i++)
            CHECK(d64[i] == (me == root ? 9u : ((uint64_t)root << 40 | (uint64_t)i)),
                  "broadcast64 root %d elem %d", root, i);
    }
    /* The same on the odd PEs' active set (start 1, stride 2). */
    if (npes >= 2 && me % 2 == 1) {
        int n = npes / 2;
        for (int root = 0; root < n; root++) {
            uint32_t *s32 = (uint32_t *)src, *d32 = (uint32_t *)dst;
            for (int i = 0; i < 33; i++) {
                s32[i] = (uint32_t)(root * 77 + i);
                d32[i] = 5;
            }
            shmem_sync(1, 1, n, psync);
            shmem_broadcast32(d32, s32, 33, root, 1, 1, n, psync);
            for (int i = 0; i < 33; i++)
                CHECK(d32[i] == (me == 1 + 2 * root ? 5u
                                                    : (uint32_t)(root * 77 + i)),
                      "odd-set broadcast32 root %d elem %d", root, i);
            shmem_sync(1, 1, n, psync);
        }
    }
    shmem_barrier_all();
    shmem_team_destroy(xt);
    shmem_team_destroy(yt);
    shmem_team_destroy(ev);
    shmem_team_destroy(rev);
    shmem_free(dst);
    shmem_free(src);
    shmem_finalize();
    return 0;
}
