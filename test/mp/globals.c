/*
 * Globals and statics are symmetric: puts and gets to a file-scope static,
 * a function-scope static, a global array, initialized data (.data, whose
 * initial values must survive the runtime making it shareable) and
 * zero-initialized data (.bss, including a large array). A thread started
 * before shmem_init keeps writing a static counter while shmem_init makes
 * the static data shareable: none of its writes may be lost (they were,
 * between the copy of the data and its remapping: a condition variable
 * came back zeroed and bind.sh's thread slept for ever).
 */
#include "mp.h"

#include <pthread.h>

#define BIG (1 << 20)

int g_data[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
long g_bss[64];
double g_scalar = 2.5;
static int s_file[32];
static long s_file_init = 12345;
static unsigned char s_big[BIG]; /* .bss, 1 MiB */

static long *fn_static(void)
{
    static long v[8] = {100, 101, 102, 103, 104, 105, 106, 107};
    return v;
}

static int *fn_static_bss(void)
{
    static int v[8];
    return v;
}

static volatile unsigned long s_count; /* written by the bumper only */
static volatile int s_stop, s_started;

static void *bumper(void *arg)
{
    unsigned long mine = 0;
    s_started = 1;
    while (!s_stop) {
        s_count = s_count + 1;
        mine++;
    }
    *(unsigned long *)arg = mine;
    return NULL;
}

int main(void)
{
    pthread_t bump;
    unsigned long bumped = 0;
    if (pthread_create(&bump, NULL, bumper, &bumped)) {
        fprintf(stderr, "FAIL: globals: pthread_create\n");
        return 1;
    }
    while (!s_started)
        sched_yield();
    mp_init();
    s_stop = 1;
    pthread_join(bump, NULL);
    CHECK(s_count == bumped,
          "a thread's writes to static data during shmem_init were lost: "
          "counter %lu after %lu increments",
          (unsigned long)s_count, bumped);
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;
    long *fs = fn_static();
    int *fb = fn_static_bss();
    int stack_var = 0;

    /* Initial values are intact after shmem_init. */
    for (int i = 0; i < 16; i++)
        CHECK(g_data[i] == i + 1, ".data g_data[%d] = %d after shmem_init", i,
              g_data[i]);
    CHECK(g_scalar == 2.5, ".data g_scalar after shmem_init");
    CHECK(s_file_init == 12345, ".data static after shmem_init");
    CHECK(fs[3] == 103, "function static after shmem_init");
    for (int i = 0; i < 64; i++)
        CHECK(g_bss[i] == 0, ".bss g_bss[%d] not zero", i);

    /* Every kind is accessible from every PE; the stack is not. */
    const void *objs[] = {g_data, g_bss, &g_scalar, s_file, &s_file_init,
                          s_big, s_big + BIG - 1, fs, fb};
    for (size_t o = 0; o < sizeof(objs) / sizeof(objs[0]); o++)
        for (int pe = 0; pe < npes; pe++)
            CHECK(shmem_addr_accessible(objs[o], pe),
                  "object %zu not accessible on PE %d", o, pe);
    CHECK(!shmem_addr_accessible(&stack_var, right),
          "a stack address is accessible");
    shmem_barrier_all();

    /* Reads of the neighbour's initial values. */
    CHECK(shmem_int_g(&g_data[5], right) == 6, "g of .data");
    CHECK(shmem_long_g(&s_file_init, right) == 12345, "g of static .data");
    CHECK(shmem_long_g(&fs[7], right) == 107, "g of function static");
    CHECK(shmem_double_g(&g_scalar, right) == 2.5, "g of .data double");
    shmem_barrier_all();

    /* Puts into the right neighbour's copies. */
    int vals[16];
    for (int i = 0; i < 16; i++)
        vals[i] = me * 100 + i;
    shmem_int_put(g_data, vals, 16, right);
    for (int i = 0; i < 64; i++)
        shmem_long_p(&g_bss[i], (long)me * 1000 + i, right);
    shmem_double_p(&g_scalar, 0.5 + me, right);
    shmem_int_put(s_file, vals, 16, right);
    shmem_long_p(&s_file_init, -(long)me, right);
    long fv[8];
    for (int i = 0; i < 8; i++)
        fv[i] = me * 10 + i;
    shmem_long_put(fs, fv, 8, right);
    shmem_int_put_nbi(fb, vals, 8, right);
    unsigned char *big = malloc(BIG);
    CHECK(big, "malloc");
    for (size_t b = 0; b < BIG; b++)
        big[b] = mp_byte(me, b, 0);
    shmem_putmem_nbi(s_big, big, BIG, right);
    shmem_quiet();
    shmem_barrier_all();

    for (int i = 0; i < 16; i++) {
        CHECK(g_data[i] == left * 100 + i, "global array elem %d = %d", i,
              g_data[i]);
        CHECK(s_file[i] == left * 100 + i, "file static elem %d = %d", i,
              s_file[i]);
    }
    for (int i = 16; i < 32; i++)
        CHECK(s_file[i] == 0, "file static elem %d written", i);
    for (int i = 0; i < 64; i++)
        CHECK(g_bss[i] == (long)left * 1000 + i, ".bss elem %d = %ld", i,
              g_bss[i]);
    CHECK(g_scalar == 0.5 + left, ".data double = %g", g_scalar);
    CHECK(s_file_init == -(long)left, "static .data long = %ld", s_file_init);
    for (int i = 0; i < 8; i++) {
        CHECK(fs[i] == left * 10 + i, "function static elem %d = %ld", i,
              fs[i]);
        CHECK(fb[i] == left * 100 + i, "function static .bss elem %d", i);
    }
    for (size_t b = 0; b < BIG; b++)
        CHECK(s_big[b] == mp_byte(left, b, 0), "large .bss byte %zu", b);

    /* Gets from the right neighbour's copies (now holding our values). */
    int gi[16];
    shmem_int_get(gi, g_data, 16, right);
    for (int i = 0; i < 16; i++)
        CHECK(gi[i] == me * 100 + i, "get of global array elem %d", i);
    long gl[8];
    shmem_long_get_nbi(gl, fs, 8, right);
    shmem_quiet();
    for (int i = 0; i < 8; i++)
        CHECK(gl[i] == me * 10 + i, "get_nbi of function static elem %d", i);
    memset(big, 0, BIG);
    shmem_getmem(big, s_big, BIG, right);
    for (size_t b = 0; b < BIG; b++)
        CHECK(big[b] == mp_byte(me, b, 0), "get of large .bss byte %zu", b);
    shmem_barrier_all();
    free(big);
    if (me == 0)
        printf("globals: %d PEs: .data, .bss, statics OK\n", npes);
    shmem_finalize();
    return 0;
}
