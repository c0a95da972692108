/*
 * Team management: the predefined teams, strided splits (stride 1, 2,
 * negative, zero with one PE), 2-D splits with the last partial row,
 * translate_pe against the expected numbering, team_ptr, get_config,
 * invalid triplets (SHMEM_TEAM_INVALID and a nonzero return on every PE),
 * and destroy/re-split far more times than there are team slots.
 */
#include "mp.h"

static int me, npes;
static long flag[4];

/* The new team must be exactly the world PEs exp[0..n-1] (or INVALID when
 * this PE is not among them), with every query consistent. */
static void check_team(shmem_team_t t, const int *exp, int n, const char *what)
{
    int idx = -1;
    for (int i = 0; i < n; i++)
        if (exp[i] == me)
            idx = i;
    if (idx < 0) {
        CHECK(t == SHMEM_TEAM_INVALID, "%s: PE not in team got a handle", what);
        CHECK(shmem_team_my_pe(t) == -1 && shmem_team_n_pes(t) == -1,
              "%s: queries on INVALID", what);
        return;
    }
    CHECK(t != SHMEM_TEAM_INVALID, "%s: member got INVALID", what);
    CHECK(shmem_team_n_pes(t) == n, "%s: n_pes %d expected %d", what,
          shmem_team_n_pes(t), n);
    CHECK(shmem_team_my_pe(t) == idx, "%s: my_pe %d expected %d", what,
          shmem_team_my_pe(t), idx);
    for (int i = 0; i < n; i++) {
        int w = shmem_team_translate_pe(t, i, SHMEM_TEAM_WORLD);
        CHECK(w == exp[i], "%s: translate %d -> world %d expected %d", what, i,
              w, exp[i]);
        CHECK(shmem_team_translate_pe(SHMEM_TEAM_WORLD, exp[i], t) == i,
              "%s: translate world %d back", what, exp[i]);
        /* team_ptr of a member reaches that member's copy (none across
         * the network but my own). */
        long *p = shmem_team_ptr(t, flag, i);
        CHECK((p || (mp_network() && exp[i] != me)) &&
                  p == shmem_ptr(flag, exp[i]),
              "%s: team_ptr %d", what, i);
    }
    for (int w = 0; w < npes; w++) {
        int in = -1;
        for (int i = 0; i < n; i++)
            if (exp[i] == w)
                in = i;
        CHECK(shmem_team_translate_pe(SHMEM_TEAM_WORLD, w, t) == in,
              "%s: world %d translates to %d, expected %d", what, w,
              shmem_team_translate_pe(SHMEM_TEAM_WORLD, w, t), in);
    }
    int oor = shmem_team_translate_pe(t, n, SHMEM_TEAM_WORLD) == -1 &&
              shmem_team_translate_pe(t, -1, SHMEM_TEAM_WORLD) == -1;
    CHECK(oor, "%s: out-of-range translate", what);
    CHECK(shmem_team_ptr(t, flag, n) == NULL, "%s: team_ptr past the end",
          what);
    /* The new team synchronizes (and its members agree on its size). */
    CHECK(shmem_team_sync(t) == 0, "%s: team_sync", what);
}

static void strided(int start, int stride, int size, int valid_exp)
{
    shmem_team_t t = (shmem_team_t)&t; /* must be overwritten */
    char what[96];
    int exp[64] = {0}, ok;
    snprintf(what, sizeof(what), "split(%d,%d,%d)", start, stride, size);
    int rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, start, stride, size,
                                      NULL, 0, &t);
    ok = valid_exp;
    if (!ok) {
        CHECK(rc != 0 && t == SHMEM_TEAM_INVALID, "%s: rc %d, want invalid",
              what, rc);
        return;
    }
    CHECK(rc == 0, "%s: rc %d", what, rc);
    for (int i = 0; i < size; i++)
        exp[i] = start + i * stride;
    check_team(t, exp, size, what);
    shmem_team_destroy(t);
}

int main(void)
{
    mp_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();

    /* Predefined teams. */
    CHECK(shmem_team_my_pe(SHMEM_TEAM_WORLD) == me &&
              shmem_team_n_pes(SHMEM_TEAM_WORLD) == npes,
          "world queries");
    /* One node: every PE; forced network: only me. */
    int shared_n = mp_network() ? 1 : npes, shared_me = mp_network() ? 0 : me;
    CHECK(shmem_team_n_pes(SHMEM_TEAM_SHARED) == shared_n &&
              shmem_team_my_pe(SHMEM_TEAM_SHARED) == shared_me,
          "shared team: %d PEs, me %d",
          shmem_team_n_pes(SHMEM_TEAM_SHARED),
          shmem_team_my_pe(SHMEM_TEAM_SHARED));
    int q_ok = shmem_team_my_pe(SHMEM_TEAM_INVALID) == -1 &&
               shmem_team_n_pes(SHMEM_TEAM_INVALID) == -1 &&
               shmem_team_translate_pe(SHMEM_TEAM_INVALID, 0,
                                       SHMEM_TEAM_WORLD) == -1 &&
               shmem_team_translate_pe(SHMEM_TEAM_WORLD, 0,
                                       SHMEM_TEAM_INVALID) == -1 &&
               shmem_team_ptr(SHMEM_TEAM_INVALID, flag, 0) == NULL;
    CHECK(q_ok, "queries on SHMEM_TEAM_INVALID");
    shmem_team_config_t cfg = {.num_contexts = 77};
    int rc = shmem_team_get_config(SHMEM_TEAM_WORLD, SHMEM_TEAM_NUM_CONTEXTS,
                                   &cfg);
    CHECK(rc == 0 && cfg.num_contexts == 0, "world config num_contexts %d",
          cfg.num_contexts);
    CHECK(shmem_team_get_config(SHMEM_TEAM_INVALID, 0, &cfg) != 0,
          "get_config on INVALID");

    /* Strided splits. */
    strided(0, 1, npes, 1);
    strided(0, 2, (npes + 1) / 2, 1);
    if (npes > 1)
        strided(1, 2, npes / 2, 1);
    strided(npes - 1, -1, npes, 1); /* reversed */
    if (npes >= 3)
        strided(npes - 1, -2, (npes + 1) / 2, 1);
    strided(npes - 1, 0, 1, 1); /* a team of one PE, stride 0 */
    strided(0, 1, 1, 1);
    /* Invalid triplets: wrap-around, out of range, bad sizes. */
    strided(0, 1, npes + 1, 0);
    strided(npes - 1, 1, 2, 0);
    strided(0, -1, 2, 0);
    strided(-1, 1, 1, 0);
    strided(npes, 1, 1, 0);
    strided(0, 1, 0, 0);
    strided(0, 1, -3, 0);
    strided(0, 0, 2, 0);
    shmem_team_t inv = (shmem_team_t)&inv;
    rc = shmem_team_split_strided(SHMEM_TEAM_INVALID, 0, 1, 1, NULL, 0, &inv);
    CHECK(rc != 0 && inv == SHMEM_TEAM_INVALID, "split of SHMEM_TEAM_INVALID");

    /* Config travels with the team. */
    shmem_team_t tc;
    cfg.num_contexts = 3;
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, npes, &cfg,
                                   SHMEM_TEAM_NUM_CONTEXTS, &tc) == 0,
          "split with config");
    cfg.num_contexts = -1;
    CHECK(shmem_team_get_config(tc, SHMEM_TEAM_NUM_CONTEXTS, &cfg) == 0 &&
              cfg.num_contexts == 3,
          "config num_contexts %d, expected 3", cfg.num_contexts);

    /* Split of a split: every other PE of the reversed world. */
    shmem_team_t rev, sub;
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, npes - 1, -1, npes, NULL,
                                   0, &rev) == 0,
          "reverse split");
    CHECK(shmem_team_split_strided(rev, 0, 2, (npes + 1) / 2, NULL, 0,
                                   &sub) == 0,
          "split of the reversed team");
    {
        int exp[64] = {0}, n = 0;
        for (int i = 0; i < npes; i += 2)
            exp[n++] = npes - 1 - i;
        check_team(sub, exp, n, "sub of reversed");
        if (sub != SHMEM_TEAM_INVALID) {
            for (int i = 0; i < n; i++)
                CHECK(shmem_team_translate_pe(sub, i, rev) == 2 * i,
                      "sub -> rev translate %d", i);
        }
    }
    shmem_team_destroy(sub);

    /* 2-D splits, including a short last row. */
    for (int xr = 1; xr <= npes + 1; xr++) {
        shmem_team_t xt, yt;
        int x = xr > npes ? npes : xr, exp[64] = {0}, n;
        char what[64];
        CHECK(shmem_team_split_2d(SHMEM_TEAM_WORLD, xr, NULL, 0, &xt, NULL, 0,
                                  &yt) == 0,
              "split_2d xrange %d", xr);
        snprintf(what, sizeof(what), "2d x-team xrange %d", xr);
        n = 0;
        for (int p = (me / x) * x; p < npes && p < (me / x + 1) * x; p++)
            exp[n++] = p;
        check_team(xt, exp, n, what);
        CHECK(shmem_team_my_pe(xt) == me % x, "x coordinate");
        snprintf(what, sizeof(what), "2d y-team xrange %d", xr);
        n = 0;
        for (int p = me % x; p < npes; p += x)
            exp[n++] = p;
        check_team(yt, exp, n, what);
        CHECK(shmem_team_my_pe(yt) == me / x, "y coordinate");
        shmem_team_destroy(xt);
        shmem_team_destroy(yt);
    }
    shmem_team_t xt = (shmem_team_t)&xt, yt = (shmem_team_t)&yt;
    rc = shmem_team_split_2d(SHMEM_TEAM_WORLD, 0, NULL, 0, &xt, NULL, 0, &yt);
    CHECK(rc != 0 && xt == SHMEM_TEAM_INVALID && yt == SHMEM_TEAM_INVALID,
          "split_2d xrange 0");
    /* 2-D split of a strided team. */
    {
        shmem_team_t ev, ex, ey;
        int ne = (npes + 1) / 2;
        CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, ne, NULL, 0,
                                       &ev) == 0,
              "evens");
        if (ev != SHMEM_TEAM_INVALID) {
            CHECK(shmem_team_split_2d(ev, 2, NULL, 0, &ex, NULL, 0, &ey) == 0,
                  "2d of evens");
            int e = me / 2, exp[64] = {0}, n = 0;
            for (int i = (e / 2) * 2; i < ne && i < (e / 2) * 2 + 2; i++)
                exp[n++] = 2 * i;
            CHECK(shmem_team_n_pes(ex) == n, "2d-of-evens x size");
            for (int i = 0; i < n; i++)
                CHECK(shmem_team_translate_pe(ex, i, SHMEM_TEAM_WORLD) ==
                          exp[i],
                      "2d-of-evens x member %d", i);
            CHECK(shmem_team_translate_pe(ey, shmem_team_my_pe(ey), ev) == e,
                  "2d-of-evens y back to evens");
            shmem_team_destroy(ex);
            shmem_team_destroy(ey);
            shmem_team_destroy(ev);
        }
    }

    /* Slot reuse: many more create/destroy rounds than slots, with a sync
     * on each new team; teams kept alive at the same time must not share a
     * slot. */
    for (int r = 0; r < 300; r++) {
        shmem_team_t a, b;
        CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, npes, NULL, 0,
                                       &a) == 0,
              "round %d split a", r);
        CHECK(shmem_team_split_strided(a, npes - 1, -1, npes, NULL, 0, &b) ==
                  0,
              "round %d split b", r);
        CHECK(shmem_team_my_pe(b) == npes - 1 - me, "round %d b numbering", r);
        /* The new team's barrier really waits (a reused slot starts from
         * zero): a value put before it is there after it. Double-buffered
         * by round parity. */
        int nb = (shmem_team_my_pe(b) + 1) % npes;
        shmem_long_p(&flag[r & 1], r + 1,
                     shmem_team_translate_pe(b, nb, SHMEM_TEAM_WORLD));
        shmem_quiet();
        shmem_team_sync(b);
        CHECK(flag[r & 1] == r + 1, "round %d: flag %ld after team_sync", r,
              flag[r & 1]);
        shmem_team_sync(a);
        shmem_team_destroy(b);
        shmem_team_destroy(a);
    }
    /* Exhaustion: keep splitting until it fails; it must fail alike on every
     * PE, then everything comes back. */
    {
        shmem_team_t keep[80];
        int n = 0;
        rc = 0;
        while (n < 80 &&
               (rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, npes,
                                              NULL, 0, &keep[n])) == 0)
            n++;
        CHECK(rc != 0 && n >= 32 && n < 80, "slots: %d teams, rc %d", n, rc);
        CHECK(keep[n] == SHMEM_TEAM_INVALID, "failed split gives INVALID");
        static int counts[64];
        counts[me] = n;
        shmem_barrier_all();
        for (int p = 0; p < npes; p++)
            CHECK(shmem_int_g(&counts[p], p) == n, "PE %d made %d teams", p,
                  shmem_int_g(&counts[p], p));
        while (n > 0)
            shmem_team_destroy(keep[--n]);
        shmem_team_t again;
        CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, npes, NULL, 0,
                                       &again) == 0,
              "split after freeing every slot");
        shmem_team_destroy(again);
    }
    shmem_team_destroy(rev);
    shmem_team_destroy(tc);
    shmem_team_destroy(SHMEM_TEAM_INVALID); /* a no-op */
    shmem_finalize();
    return 0;
}
