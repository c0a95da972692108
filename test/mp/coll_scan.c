/*
 * Scans (1.6): shmem_TYPENAME_sum_inscan / _exscan for every SUM type, on
 * SHMEM_TEAM_WORLD and a reversed team, out of place and in place, with
 * exact expected prefix sums (member 0's exclusive scan is zero), and the
 * C11 generic names.
 */
#include "mp.h"

#define MAXN 2000

static char *src, *dst;

#define VAL(T, p, i) ((T)(((p)*3 + (i)) % 5 + 1))

#define SCAN_BODY(T, N, KIND, INCL)                                            \
    {                                                                          \
        T *s = (T *)src, *d = inplace ? (T *)src : (T *)dst;                   \
        for (size_t i = 0; i < nel; i++)                                       \
            s[i] = VAL(T, p, i);                                               \
        CHECK(shmem_##N##_sum_##KIND(t, d, s, nel) == 0, #N "_sum_" #KIND);    \
        for (size_t i = 0; i < nel; i++) {                                     \
            T e = (T)0;                                                        \
            for (int q = 0; q < p + (INCL); q++)                               \
                e += VAL(T, q, i);                                             \
            if (d[i] != e)                                                     \
                MP_FAIL("%s_sum_%s %zu elements%s: elem %zu is %g, expected " \
                        "%g", #N, #KIND, nel, inplace ? " in place" : "", i,  \
                        (double)d[i], (double)e);                              \
        }                                                                      \
    }
#define SCAN_T(T, N) SCAN_BODY(T, N, inscan, 1) SCAN_BODY(T, N, exscan, 0)

static void scans(shmem_team_t t, size_t nel, int inplace)
{
    int p = shmem_team_my_pe(t);
    SHMEM_TYPES_REDUCE_ARITH(SCAN_T)
}

int main(void)
{
    mp_init();
    int npes = shmem_n_pes();
    src = shmem_malloc(MAXN * 16);
    dst = shmem_malloc(MAXN * 16);
    CHECK(src && dst, "shmem_malloc");
    shmem_team_t rev;
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, npes - 1, -1, npes, NULL,
                                   0, &rev) == 0, "reversed");
    scans(SHMEM_TEAM_WORLD, 1, 0);
    scans(SHMEM_TEAM_WORLD, 33, 1);
    scans(SHMEM_TEAM_WORLD, MAXN, 0);
    scans(rev, 7, 0);
    scans(rev, 7, 1);
    /* C11 generic names. */
    {
        long *s = (long *)src, *d = (long *)dst;
        int p = shmem_my_pe();
        s[0] = p + 1;
        shmem_sum_inscan(SHMEM_TEAM_WORLD, d, s, 1);
        CHECK(d[0] == (long)(p + 1) * (p + 2) / 2, "generic inscan %ld", d[0]);
        shmem_sum_exscan(SHMEM_TEAM_WORLD, d, s, 1);
        CHECK(d[0] == (long)p * (p + 1) / 2, "generic exscan %ld", d[0]);
        double *ds = (double *)src, *dd = (double *)dst;
        ds[0] = 2.0;
        shmem_sum_reduce(SHMEM_TEAM_WORLD, dd, ds, 1);
        CHECK(dd[0] == 2.0 * npes, "generic sum_reduce %g", dd[0]);
        unsigned *us = (unsigned *)src, *ud = (unsigned *)dst;
        us[0] = 1u << p % 32;
        shmem_or_reduce(SHMEM_TEAM_WORLD, ud, us, 1);
        CHECK(ud[0] == (npes >= 32 ? ~0u : (1u << npes) - 1),
              "generic or_reduce %#x", ud[0]);
        int *is = (int *)src, *id = (int *)dst;
        is[0] = p;
        shmem_max_reduce(SHMEM_TEAM_WORLD, id, is, 1);
        CHECK(id[0] == npes - 1, "generic max_reduce %d", id[0]);
        shmem_min_reduce(SHMEM_TEAM_WORLD, is, is, 1);
        CHECK(is[0] == 0, "generic min_reduce in place %d", is[0]);
    }
    shmem_team_destroy(rev);
    shmem_free(dst);
    shmem_free(src);
    shmem_finalize();
    return 0;
}
