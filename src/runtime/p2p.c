/*
 * Point-to-point synchronization: wait_until and test, in the single,
 * all/any/some and _vector forms, for every type of the P2P table.
 * Each type contributes one element comparator; the set logic is shared.
 */
#include "path.h"
#include "wait.h"

typedef int (*elem_fn)(const void *ivars, size_t i, int cmp, const void *vals,
                       int vector);

typedef struct p2p_set {
    const void *ivars;
    size_t n;
    const int *status;
    int cmp;
    const void *vals;
    int vector;
    elem_fn f;
    size_t *indices;
    size_t result;
} p2p_set_t;

static int excluded(const p2p_set_t *s, size_t i)
{
    return s->status && s->status[i];
}

static int all_excluded(const p2p_set_t *s)
{
    for (size_t i = 0; i < s->n; i++)
        if (!excluded(s, i))
            return 0;
    return 1;
}

static int set_all(void *p)
{
    p2p_set_t *s = p;
    for (size_t i = 0; i < s->n; i++)
        if (!excluded(s, i) && !s->f(s->ivars, i, s->cmp, s->vals, s->vector))
            return 0;
    return 1;
}

/* Round robin from where the thread's last _any search stopped (wait.h). */
static int set_any(void *p)
{
    p2p_set_t *s = p;
    size_t i = s->n ? dsm_rt_any_start(s->n) : 0;
    for (size_t k = 0; k < s->n; k++, i = i + 1 < s->n ? i + 1 : 0)
        if (!excluded(s, i) && s->f(s->ivars, i, s->cmp, s->vals, s->vector)) {
            s->result = i;
            dsm_rt_any_found(i);
            return 1;
        }
    s->result = SIZE_MAX;
    return 0;
}

static int set_some(void *p)
{
    p2p_set_t *s = p;
    size_t k = 0;
    for (size_t i = 0; i < s->n; i++)
        if (!excluded(s, i) && s->f(s->ivars, i, s->cmp, s->vals, s->vector))
            s->indices[k++] = i;
    s->result = k;
    return k > 0;
}

static void wait_all(p2p_set_t *s)
{
    if (!set_all(s))
        dsm_rt_wait(set_all, s);
}

static size_t wait_any(p2p_set_t *s)
{
    if (!s->n || all_excluded(s))
        return SIZE_MAX;
    if (!set_any(s))
        dsm_rt_wait(set_any, s);
    return s->result;
}

static size_t wait_some(p2p_set_t *s)
{
    if (!s->n || all_excluded(s))
        return 0;
    if (!set_some(s))
        dsm_rt_wait(set_some, s);
    return s->result;
}

#define CHECK_CMP(routine, cmp)                                                \
    do {                                                                       \
        DSM_CHECK_INIT(routine);                                               \
        if (DSM_UNLIKELY(!DSM_CMP_OK(cmp)))                                    \
            dsm_rt_bad_cmp(routine, cmp);                                      \
    } while (0)

#define SET(f_, iv, n_, st, c, v, vec, idx)                                    \
    {                                                                          \
        .ivars = (iv), .n = (n_), .status = (st), .cmp = (c), .vals = (v),     \
        .vector = (vec), .f = (f_), .indices = (idx), .result = 0              \
    }

#define P2P_TYPED(T, N)                                                        \
    static int N##_elem(const void *ivars, size_t i, int cmp,                  \
                        const void *vals, int vector)                          \
    {                                                                          \
        T x = __atomic_load_n((const T *)ivars + i, __ATOMIC_ACQUIRE);         \
        T v = ((const T *)vals)[vector ? i : 0];                               \
        return DSM_COMPARE(x, cmp, v);                                         \
    }                                                                          \
    static int N##_one(void *p)                                                \
    {                                                                          \
        p2p_set_t *s = p;                                                      \
        return N##_elem(s->ivars, 0, s->cmp, s->vals, 0);                      \
    }                                                                          \
    void pshmem_##N##_wait_until(T *ivar, int cmp, T cmp_value)                \
    {                                                                          \
        CHECK_CMP("shmem_" #N "_wait_until", cmp);                             \
        dsm_check_wait_words("shmem_" #N "_wait_until", ivar, 1, sizeof(T));   \
        p2p_set_t s = SET(N##_elem, ivar, 1, NULL, cmp, &cmp_value, 0, NULL);  \
        if (!N##_one(&s))                                                      \
            dsm_rt_wait(N##_one, &s);                                          \
    }                                                                          \
    int pshmem_##N##_test(T *ivar, int cmp, T cmp_value)                       \
    {                                                                          \
        CHECK_CMP("shmem_" #N "_test", cmp);                                   \
        dsm_check_wait_words("shmem_" #N "_test", ivar, 1, sizeof(T));         \
        dsm_rt_progress();                                                     \
        p2p_set_t s = SET(N##_elem, ivar, 1, NULL, cmp, &cmp_value, 0, NULL);  \
        return N##_one(&s);                                                    \
    }                                                                          \
    void pshmem_##N##_wait_until_all(T *ivars, size_t nelems,                  \
                                     const int *status, int cmp, T cmp_value)  \
    {                                                                          \
        CHECK_CMP("shmem_" #N "_wait_until_all", cmp);                         \
        dsm_check_wait_words("shmem_" #N "_wait_until_all", ivars, nelems,     \
                             sizeof(T));                                       \
        p2p_set_t s =                                                          \
            SET(N##_elem, ivars, nelems, status, cmp, &cmp_value, 0, NULL);    \
        wait_all(&s);                                                          \
    }                                                                          \
    size_t pshmem_##N##_wait_until_any(                                        \
        T *ivars, size_t nelems, const int *status, int cmp, T cmp_value)      \
    {                                                                          \
        CHECK_CMP("shmem_" #N "_wait_until_any", cmp);                         \
        dsm_check_wait_words("shmem_" #N "_wait_until_any", ivars, nelems,     \
                             sizeof(T));                                       \
        p2p_set_t s =                                                          \
            SET(N##_elem, ivars, nelems, status, cmp, &cmp_value, 0, NULL);    \
        return wait_any(&s);                                                   \
    }                                                                          \
    size_t pshmem_##N##_wait_until_some(T *ivars, size_t nelems,               \
                                        size_t *indices, const int *status,    \
                                        int cmp, T cmp_value)                  \
    {                                                                          \
        CHECK_CMP("shmem_" #N "_wait_until_some", cmp);                        \
        dsm_check_wait_words("shmem_" #N "_wait_until_some", ivars, nelems,    \
                             sizeof(T));                                       \
        p2p_set_t s =                                                          \
            SET(N##_elem, ivars, nelems, status, cmp, &cmp_value, 0, indices); \
        return wait_some(&s);                                                  \
    }                                                                          \
    void pshmem_##N##_wait_until_all_vector(T *ivars, size_t nelems,           \
                                            const int *status, int cmp,        \
                                            const T *cmp_values)               \
    {                                                                          \
        CHECK_CMP("shmem_" #N "_wait_until_all_vector", cmp);                  \
        dsm_check_wait_words("shmem_" #N "_wait_until_all_vector", ivars,      \
                             nelems, sizeof(T));                               \
        p2p_set_t s =                                                          \
            SET(N##_elem, ivars, nelems, status, cmp, cmp_values, 1, NULL);    \
        wait_all(&s);                                                          \
    }                                                                          \
    size_t pshmem_##N##_wait_until_any_vector(T *ivars, size_t nelems,         \
                                              const int *status, int cmp,      \
                                              const T *cmp_values)             \
    {                                                                          \
        CHECK_CMP("shmem_" #N "_wait_until_any_vector", cmp);                  \
        dsm_check_wait_words("shmem_" #N "_wait_until_any_vector", ivars,      \
                             nelems, sizeof(T));                               \
        p2p_set_t s =                                                          \
            SET(N##_elem, ivars, nelems, status, cmp, cmp_values, 1, NULL);    \
        return wait_any(&s);                                                   \
    }                                                                          \
    size_t pshmem_##N##_wait_until_some_vector(                                \
        T *ivars, size_t nelems, size_t *indices, const int *status, int cmp,  \
        const T *cmp_values)                                                   \
    {                                                                          \
        CHECK_CMP("shmem_" #N "_wait_until_some_vector", cmp);                 \
        dsm_check_wait_words("shmem_" #N "_wait_until_some_vector", ivars,     \
                             nelems, sizeof(T));                               \
        p2p_set_t s =                                                          \
            SET(N##_elem, ivars, nelems, status, cmp, cmp_values, 1, indices); \
        return wait_some(&s);                                                  \
    }                                                                          \
    int pshmem_##N##_test_all(T *ivars, size_t nelems, const int *status,      \
                              int cmp, T cmp_value)                            \
    {                                                                          \
        CHECK_CMP("shmem_" #N "_test_all", cmp);                               \
        dsm_check_wait_words("shmem_" #N "_test_all", ivars, nelems,           \
                             sizeof(T));                                       \
        dsm_rt_progress();                                                     \
        p2p_set_t s =                                                          \
            SET(N##_elem, ivars, nelems, status, cmp, &cmp_value, 0, NULL);    \
        return set_all(&s);                                                    \
    }                                                                          \
    size_t pshmem_##N##_test_any(T *ivars, size_t nelems, const int *status,   \
                                 int cmp, T cmp_value)                         \
    {                                                                          \
        CHECK_CMP("shmem_" #N "_test_any", cmp);                               \
        dsm_check_wait_words("shmem_" #N "_test_any", ivars, nelems,           \
                             sizeof(T));                                       \
        dsm_rt_progress();                                                     \
        p2p_set_t s =                                                          \
            SET(N##_elem, ivars, nelems, status, cmp, &cmp_value, 0, NULL);    \
        set_any(&s);                                                           \
        return s.result;                                                       \
    }                                                                          \
    size_t pshmem_##N##_test_some(T *ivars, size_t nelems, size_t *indices,    \
                                  const int *status, int cmp, T cmp_value)     \
    {                                                                          \
        CHECK_CMP("shmem_" #N "_test_some", cmp);                              \
        dsm_check_wait_words("shmem_" #N "_test_some", ivars, nelems,          \
                             sizeof(T));                                       \
        dsm_rt_progress();                                                     \
        p2p_set_t s =                                                          \
            SET(N##_elem, ivars, nelems, status, cmp, &cmp_value, 0, indices); \
        set_some(&s);                                                          \
        return s.result;                                                       \
    }                                                                          \
    int pshmem_##N##_test_all_vector(T *ivars, size_t nelems,                  \
                                     const int *status, int cmp,               \
                                     const T *cmp_values)                      \
    {                                                                          \
        CHECK_CMP("shmem_" #N "_test_all_vector", cmp);                        \
        dsm_check_wait_words("shmem_" #N "_test_all_vector", ivars, nelems,    \
                             sizeof(T));                                       \
        dsm_rt_progress();                                                     \
        p2p_set_t s =                                                          \
            SET(N##_elem, ivars, nelems, status, cmp, cmp_values, 1, NULL);    \
        return set_all(&s);                                                    \
    }                                                                          \
    size_t pshmem_##N##_test_any_vector(T *ivars, size_t nelems,               \
                                        const int *status, int cmp,            \
                                        const T *cmp_values)                   \
    {                                                                          \
        CHECK_CMP("shmem_" #N "_test_any_vector", cmp);                        \
        dsm_check_wait_words("shmem_" #N "_test_any_vector", ivars, nelems,    \
                             sizeof(T));                                       \
        dsm_rt_progress();                                                     \
        p2p_set_t s =                                                          \
            SET(N##_elem, ivars, nelems, status, cmp, cmp_values, 1, NULL);    \
        set_any(&s);                                                           \
        return s.result;                                                       \
    }                                                                          \
    size_t pshmem_##N##_test_some_vector(T *ivars, size_t nelems,              \
                                         size_t *indices, const int *status,   \
                                         int cmp, const T *cmp_values)         \
    {                                                                          \
        CHECK_CMP("shmem_" #N "_test_some_vector", cmp);                       \
        dsm_check_wait_words("shmem_" #N "_test_some_vector", ivars, nelems,   \
                             sizeof(T));                                       \
        dsm_rt_progress();                                                     \
        p2p_set_t s =                                                          \
            SET(N##_elem, ivars, nelems, status, cmp, cmp_values, 1, indices); \
        set_some(&s);                                                          \
        return s.result;                                                       \
    }                                                                          \
    DSM_WEAK(N##_wait_until)                                                   \
    DSM_WEAK(N##_test)                                                         \
    DSM_WEAK(N##_wait_until_all)                                               \
    DSM_WEAK(N##_wait_until_any)                                               \
    DSM_WEAK(N##_wait_until_some)                                              \
    DSM_WEAK(N##_wait_until_all_vector)                                        \
    DSM_WEAK(N##_wait_until_any_vector)                                        \
    DSM_WEAK(N##_wait_until_some_vector)                                       \
    DSM_WEAK(N##_test_all)                                                     \
    DSM_WEAK(N##_test_any)                                                     \
    DSM_WEAK(N##_test_some)                                                    \
    DSM_WEAK(N##_test_all_vector)                                              \
    DSM_WEAK(N##_test_any_vector)                                              \
    DSM_WEAK(N##_test_some_vector)
SHMEM_TYPES_P2P(P2P_TYPED)
