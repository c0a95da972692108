/*
 * Point-to-point synchronization between PEs, for every type of
 * SHMEM_TYPES_P2P and every comparison operator: wait_until and test, then
 * the all/any/some forms and their _vector variants (waiting and testing),
 * with a status array that excludes elements. Each PE waits on words its
 * left neighbour writes (a 1-PE job writes its own).
 */
#include "mp.h"

static int me, npes, right, left;

/* For operator c: the initial value (condition false against 5) and the
 * value the writer stores (condition true). */
static const struct {
    int cmp;
    const char *name;
    int init, write;
} cases[] = {
    {SHMEM_CMP_EQ, "EQ", 0, 5},  {SHMEM_CMP_NE, "NE", 5, 6},
    {SHMEM_CMP_GT, "GT", 5, 6},  {SHMEM_CMP_LE, "LE", 9, 5},
    {SHMEM_CMP_LT, "LT", 5, 4},  {SHMEM_CMP_GE, "GE", 0, 5},
};
#define NCASES (sizeof(cases) / sizeof(cases[0]))
#define NV 6

static void writer_pause(void)
{
    /* Give the waiter time to block first (usually). */
    usleep(300);
}

#define TEST_P2P(T, N)                                                         \
    static void test_##N(void)                                                 \
    {                                                                          \
        T *w = shmem_calloc(2, sizeof(T));                                     \
        T *v = shmem_calloc(NV, sizeof(T));                                    \
        size_t idx[NV], r;                                                     \
        CHECK(w && v, "shmem_calloc");                                         \
        for (size_t c = 0; c < NCASES; c++) {                                  \
            const int cmp = cases[c].cmp;                                      \
            w[0] = w[1] = (T)cases[c].init;                                    \
            CHECK(!shmem_##N##_test(&w[1], cmp, (T)5),                         \
                  "shmem_" #N "_test(%s) true before the write", cases[c].name); \
            shmem_barrier_all();                                               \
            writer_pause();                                                    \
            shmem_##N##_p(&w[0], (T)cases[c].write, right);                    \
            shmem_##N##_p(&w[1], (T)cases[c].write, right);                    \
            shmem_##N##_wait_until(&w[0], cmp, (T)5);                          \
            CHECK(w[0] == (T)cases[c].write, "shmem_" #N "_wait_until(%s) "    \
                  "returned with %g", cases[c].name, (double)w[0]);            \
            double t0 = mp_now();                                              \
            while (!shmem_##N##_test(&w[1], cmp, (T)5))                        \
                CHECK(mp_now() - t0 < 20, "shmem_" #N "_test(%s) never true",  \
                      cases[c].name);                                          \
            shmem_barrier_all();                                               \
        }                                                                      \
                                                                               \
        /* Sets: element 0 already satisfies but is excluded by status;       \
         * element 5 is excluded and never written. */                         \
        const int status[NV] = {1, 0, 0, 0, 0, 1};                             \
        const T cv[NV] = {7, 8, 9, 10, 11, 12};                                \
        memset(v, 0, NV * sizeof(T));                                          \
        v[0] = (T)7;                                                           \
        CHECK(!shmem_##N##_test_all(v, NV, status, SHMEM_CMP_GE, (T)7),        \
              "shmem_" #N "_test_all true before the writes");                 \
        CHECK(shmem_##N##_test_any(v, NV, status, SHMEM_CMP_GE, (T)7) ==       \
                  SIZE_MAX, "shmem_" #N "_test_any found an element before "   \
                  "the writes (status ignored?)");                             \
        CHECK(shmem_##N##_test_some(v, NV, idx, status, SHMEM_CMP_GE, (T)7) == \
                  0, "shmem_" #N "_test_some nonzero before the writes");      \
        CHECK(shmem_##N##_test_any_vector(v, NV, status, SHMEM_CMP_EQ, cv) ==  \
                  SIZE_MAX, "shmem_" #N "_test_any_vector before the writes"); \
        CHECK(!shmem_##N##_test_all_vector(v, NV, status, SHMEM_CMP_EQ, cv),   \
              "shmem_" #N "_test_all_vector before the writes");               \
        CHECK(shmem_##N##_test_some_vector(v, NV, idx, status, SHMEM_CMP_EQ,   \
                                           cv) == 0,                           \
              "shmem_" #N "_test_some_vector before the writes");              \
        shmem_barrier_all();                                                   \
        /* any: the writer sets element 3 only */                              \
        writer_pause();                                                        \
        shmem_##N##_p(&v[3], (T)10, right);                                    \
        r = shmem_##N##_wait_until_any(v, NV, status, SHMEM_CMP_GE, (T)7);     \
        CHECK(r == 3, "shmem_" #N "_wait_until_any returned %zu, not 3", r);   \
        r = shmem_##N##_wait_until_any_vector(v, NV, status, SHMEM_CMP_EQ, cv);\
        CHECK(r == 3, "shmem_" #N "_wait_until_any_vector returned %zu", r);   \
        r = shmem_##N##_test_any(v, NV, status, SHMEM_CMP_GE, (T)7);           \
        CHECK(r == 3, "shmem_" #N "_test_any returned %zu", r);                \
        r = shmem_##N##_test_any_vector(v, NV, status, SHMEM_CMP_EQ, cv);      \
        CHECK(r == 3, "shmem_" #N "_test_any_vector returned %zu", r);         \
        shmem_barrier_all();                                                   \
        /* some: the writer sets 1 and 4, then all of 1..4 */                  \
        shmem_##N##_p(&v[1], (T)8, right);                                     \
        shmem_##N##_p(&v[4], (T)11, right);                                    \
        shmem_barrier_all();                                                   \
        r = shmem_##N##_wait_until_some(v, NV, idx, status, SHMEM_CMP_GE,      \
                                        (T)7);                                 \
        CHECK(r == 3 && idx[0] == 1 && idx[1] == 3 && idx[2] == 4,             \
              "shmem_" #N "_wait_until_some: %zu indices", r);                 \
        r = shmem_##N##_test_some(v, NV, idx, status, SHMEM_CMP_GE, (T)7);     \
        CHECK(r == 3 && idx[0] == 1 && idx[1] == 3 && idx[2] == 4,             \
              "shmem_" #N "_test_some: %zu indices", r);                       \
        r = shmem_##N##_wait_until_some_vector(v, NV, idx, status,             \
                                               SHMEM_CMP_EQ, cv);              \
        CHECK(r == 3 && idx[0] == 1 && idx[1] == 3 && idx[2] == 4,             \
              "shmem_" #N "_wait_until_some_vector: %zu indices", r);          \
        r = shmem_##N##_test_some_vector(v, NV, idx, status, SHMEM_CMP_EQ,     \
                                         cv);                                  \
        CHECK(r == 3, "shmem_" #N "_test_some_vector: %zu indices", r);        \
        CHECK(!shmem_##N##_test_all(v, NV, status, SHMEM_CMP_GE, (T)7),        \
              "shmem_" #N "_test_all true with element 2 unwritten");          \
        shmem_barrier_all();                                                   \
        writer_pause();                                                        \
        shmem_##N##_p(&v[2], (T)9, right);                                     \
        shmem_##N##_wait_until_all(v, NV, status, SHMEM_CMP_GE, (T)7);         \
        for (int i = 1; i < 5; i++)                                            \
            CHECK(v[i] >= (T)7, "shmem_" #N "_wait_until_all returned with "   \
                  "element %d = %g", i, (double)v[i]);                         \
        shmem_##N##_wait_until_all_vector(v, NV, status, SHMEM_CMP_EQ, cv);    \
        CHECK(shmem_##N##_test_all(v, NV, status, SHMEM_CMP_GE, (T)7),         \
              "shmem_" #N "_test_all false after every write");                \
        CHECK(shmem_##N##_test_all_vector(v, NV, status, SHMEM_CMP_EQ, cv),    \
              "shmem_" #N "_test_all_vector false after every write");         \
        CHECK(v[5] == 0, "excluded element written");                          \
        /* Empty and fully excluded sets. */                                   \
        const int none[NV] = {1, 1, 1, 1, 1, 1};                               \
        CHECK(shmem_##N##_wait_until_any(v, NV, none, SHMEM_CMP_GE, (T)0) ==   \
                  SIZE_MAX, "shmem_" #N "_wait_until_any over an excluded set");\
        CHECK(shmem_##N##_wait_until_some(v, NV, idx, none, SHMEM_CMP_GE,      \
                                          (T)0) == 0,                          \
              "shmem_" #N "_wait_until_some over an excluded set");            \
        shmem_##N##_wait_until_all(v, 0, NULL, SHMEM_CMP_EQ, (T)99);           \
        CHECK(shmem_##N##_test_any(v, 0, NULL, SHMEM_CMP_GE, (T)0) == SIZE_MAX,\
              "shmem_" #N "_test_any over 0 elements");                        \
        /* status NULL: every element counts. */                               \
        CHECK(shmem_##N##_test_any(v, NV, NULL, SHMEM_CMP_EQ, (T)7) == 0,      \
              "shmem_" #N "_test_any with status NULL");                       \
        shmem_barrier_all();                                                   \
        shmem_free(v);                                                         \
        shmem_free(w);                                                         \
    }
SHMEM_TYPES_P2P(TEST_P2P)

int main(void)
{
    mp_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    right = (me + 1) % npes;
    left = (me + npes - 1) % npes;
    (void)left;
#define CALL_P2P(T, N) test_##N();
    SHMEM_TYPES_P2P(CALL_P2P)
    if (me == 0)
        printf("wait: %d PEs: every P2P type, operator and set form OK\n",
               npes);
    shmem_finalize();
    return 0;
}
