/*
 * Point-to-point synchronization: wait_until and test, in the single,
 * all/any/some and _vector forms, for every type of the P2P table.
 * Each type contributes one element comparator; the set logic is shared.
 */
#include "path.h"
#include "wait.h"

#include <stdio.h>
#include <string.h>

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
    int esize; /* bytes of an element */
    int sgn;   /* 1: a signed type */
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

/* What a wait that lasts waits for (stall.h): "the word at 0x...
 * SHMEM_CMP_EQ 5 (it holds 0)", "4 words from 0x...: SHMEM_CMP_EQ 5 (the
 * first holds 0)", "... each its own value" for the _vector forms. */

static int put_val(char *b, size_t n, const p2p_set_t *s, const void *v)
{
    int8_t i8;
    int16_t i16;
    int32_t i32;
    int64_t i64;
    switch (s->esize) {
    case 1:
        memcpy(&i8, v, 1);
        return s->sgn ? snprintf(b, n, "%d", i8)
                      : snprintf(b, n, "%u", (unsigned)(uint8_t)i8);
    case 2:
        memcpy(&i16, v, 2);
        return s->sgn ? snprintf(b, n, "%d", i16)
                      : snprintf(b, n, "%u", (unsigned)(uint16_t)i16);
    case 4:
        memcpy(&i32, v, 4);
        return s->sgn ? snprintf(b, n, "%d", i32)
                      : snprintf(b, n, "%u", (uint32_t)i32);
    default:
        memcpy(&i64, v, 8);
        return s->sgn ? snprintf(b, n, "%lld", (long long)i64)
                      : snprintf(b, n, "%llu", (unsigned long long)i64);
    }
}

static void describe_set(const void *arg, char *b, size_t n)
{
    const p2p_set_t *s = arg;
    size_t at;
    if (s->n == 1)
        at = (size_t)snprintf(b, n, "the word at %p %s ", s->ivars,
                              dsm_cmp_name(s->cmp));
    else
        at = (size_t)snprintf(b, n, "%zu words from %p: %s ", s->n, s->ivars,
                              dsm_cmp_name(s->cmp));
    if (at >= n)
        return;
    if (s->vector)
        at += (size_t)snprintf(b + at, n - at, "each its own value");
    else
        at += (size_t)put_val(b + at, n - at, s, s->vals);
    if (at >= n)
        return;
    at += (size_t)snprintf(b + at, n - at, " (%s ",
                           s->n == 1 ? "it holds" : "the first holds");
    if (at < n)
        at += (size_t)put_val(b + at, n - at, s, s->ivars);
    if (at < n)
        snprintf(b + at, n - at, ")");
}

static void wait_all(p2p_set_t *s, const char *routine)
{
    if (!set_all(s))
        dsm_rt_wait_in(routine, describe_set, s, set_all, s);
}

static size_t wait_any(p2p_set_t *s, const char *routine)
{
    if (!s->n || all_excluded(s))
        return SIZE_MAX;
    if (!set_any(s))
        dsm_rt_wait_in(routine, describe_set, s, set_any, s);
    return s->result;
}

static size_t wait_some(p2p_set_t *s, const char *routine)
{
    if (!s->n || all_excluded(s))
        return 0;
    if (!set_some(s))
        dsm_rt_wait_in(routine, describe_set, s, set_some, s);
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
        .vector = (vec), .f = (f_), .indices = (idx), .result = 0,             \
        .esize = (int)sizeof(*(iv)), .sgn = !((__typeof__(*(iv)))0 < (__typeof__(*(iv)))-1) \
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
            dsm_rt_wait_in("shmem_" #N "_wait_until", describe_set, &s,        \
                           N##_one, &s);                                       \
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
        wait_all(&s, "shmem_" #N "_wait_until_all");                           \
    }                                                                          \
    size_t pshmem_##N##_wait_until_any(                                        \
        T *ivars, size_t nelems, const int *status, int cmp, T cmp_value)      \
    {                                                                          \
        CHECK_CMP("shmem_" #N "_wait_until_any", cmp);                         \
        dsm_check_wait_words("shmem_" #N "_wait_until_any", ivars, nelems,     \
                             sizeof(T));                                       \
        p2p_set_t s =                                                          \
            SET(N##_elem, ivars, nelems, status, cmp, &cmp_value, 0, NULL);    \
        return wait_any(&s, "shmem_" #N "_wait_until_any");                    \
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
        return wait_some(&s, "shmem_" #N "_wait_until_some");                  \
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
        wait_all(&s, "shmem_" #N "_wait_until_all_vector");                    \
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
        return wait_any(&s, "shmem_" #N "_wait_until_any_vector");             \
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
        return wait_some(&s, "shmem_" #N "_wait_until_some_vector");           \
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
