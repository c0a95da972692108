/*
 * A program written against the OpenSHMEM 1.3 API (and older): start_pes,
 * shmalloc, _my_pe/_num_pes, the untyped and typed AMO names of 1.3
 * (shmem_long_fadd, _finc, _add, _inc, _cswap, _swap, _fetch, _set),
 * shmem_wait / shmem_TYPENAME_wait / shmem_wait_until(long *) with the old
 * _SHMEM_CMP_ constants, the cache routines and shmem_pcontrol.
 */
#include <shmem.h>

#include "mp.h"

static short s_flag;
static int i_flag;
static long l_flag;
static long long ll_flag;

int main(void)
{
    alarm(MP_ALARM_S);
    start_pes(0);
    int me = _my_pe(), npes = _num_pes();
    int right = (me + 1) % npes;
    long *ticket = (long *)shmalloc(sizeof(long));
    long *flag = (long *)shmalloc(sizeof(long));
    CHECK(ticket && flag, "shmalloc");
    *ticket = 0;
    *flag = 0;
    shmem_barrier_all();

    /* fadd: every PE draws a ticket from PE 0; tickets are distinct */
    long t = shmem_long_fadd(ticket, 1, 0);
    CHECK(t >= 0 && t < npes, "fadd ticket %ld", t);
    shmem_barrier_all();
    CHECK(shmem_long_fetch(ticket, 0) == npes, "tickets %ld", *ticket);
    shmem_barrier_all();

    /* PE 0 releases everyone with a set; they wait with shmem_wait */
    if (me == 0)
        for (int pe = 0; pe < npes; pe++)
            shmem_long_set(flag, 42, pe);
    shmem_wait(flag, 0);
    CHECK(*flag == 42, "shmem_wait returned with %ld", *flag);
    shmem_wait_until(flag, _SHMEM_CMP_EQ, 42);
    shmem_barrier_all();

    /* the other 1.3 AMO names, on int, long and long long */
    int *ic = (int *)shmalloc(sizeof(int));
    long long *lc = (long long *)shmalloc(sizeof(long long));
    double *dc = (double *)shmalloc(sizeof(double));
    CHECK(ic && lc && dc, "shmalloc");
    *ic = 0;
    *lc = 0;
    *dc = 0;
    shmem_barrier_all();
    for (int i = 0; i < 10; i++) {
        shmem_int_inc(ic, 0);
        shmem_int_add(ic, 2, 0);
        (void)shmem_int_finc(ic, 0);
        shmem_longlong_add(lc, 5, 0);
        shmem_longlong_inc(lc, 0);
    }
    shmem_barrier_all();
    if (me == 0) {
        CHECK(*ic == 40 * npes, "int inc/add/finc total %d", *ic);
        CHECK(*lc == 60LL * npes, "longlong add/inc total %lld", *lc);
    }
    shmem_barrier_all();
    int won = shmem_int_cswap(ic, 40 * npes, -1, 0) == 40 * npes;
    long *wins = (long *)shmalloc(sizeof(long));
    *wins = 0;
    shmem_barrier_all();
    if (won)
        shmem_long_add(wins, 1, 0);
    shmem_barrier_all();
    if (me == 0)
        CHECK(*wins == 1 && *ic == -1, "cswap winners %ld, value %d", *wins,
              *ic);
    shmem_double_set(dc, 2.5, right);
    shmem_barrier_all();
    CHECK(shmem_double_fetch(dc, me) == 2.5, "double set/fetch");
    CHECK(shmem_double_swap(dc, 3.5, me) == 2.5 && *dc == 3.5, "double swap");
    CHECK(shmem_long_swap(flag, 7, me) == 42 && shmem_long_finc(flag, me) == 7,
          "long swap/finc");
    shmem_barrier_all();

    /* typed 1.3 waits: each PE's left neighbour writes */
    shmem_short_p(&s_flag, 1, right);
    shmem_int_p(&i_flag, 2, right);
    shmem_long_p(&l_flag, 3, right);
    shmem_longlong_p(&ll_flag, 4, right);
    shmem_short_wait(&s_flag, 0);
    shmem_int_wait(&i_flag, 0);
    shmem_long_wait(&l_flag, 0);
    shmem_longlong_wait(&ll_flag, 0);
    CHECK(s_flag == 1 && i_flag == 2 && l_flag == 3 && ll_flag == 4,
          "typed waits: %d %d %ld %lld", s_flag, i_flag, l_flag, ll_flag);

    /* deprecated no-ops and profiling control */
    shmem_clear_cache_inv();
    shmem_set_cache_inv();
    shmem_clear_cache_line_inv(flag);
    shmem_set_cache_line_inv(flag);
    shmem_udcflush();
    shmem_udcflush_line(flag);
    shmem_pcontrol(0);
    shmem_pcontrol(1, "ignored");
    shmem_barrier_all();
    shfree(wins);
    shfree(dc);
    shfree(lc);
    shfree(ic);
    shfree(flag);
    shfree(ticket);
    if (me == 0)
        printf("compat_v13: %d PEs OK\n", npes);
    return 0; /* implicit finalize at exit, as 1.2 programs do */
}
