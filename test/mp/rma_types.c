/*
 * Every typed RMA family for every type of SHMEM_TYPES_RMA, expanded from
 * the type table: put, get, p, g, iput, iget, put_nbi, get_nbi and their
 * ctx forms (SHMEM_CTX_DEFAULT); then the sized 8/16/32/64/128 forms and
 * putmem/getmem (+ nbi, + ctx). Each PE writes to its right neighbour and
 * reads from it; data is checked on the PE that holds it, including the
 * elements a strided or sized transfer must leave alone.
 *
 * Built twice: rma_types (defaults: small blocking transfers are a memcpy
 * by the caller) and rma_types_engine (SHMEM_SDMA_INLINE_MAX=0: every
 * transfer goes through the DMA command layer).
 */
#include "mp.h"

#define NEL 48
#define SENT 111 /* a value val() never yields; fits every type */

static int me, npes, right, left;

/* Element i written by PE pe in test step k: small integers, exact in
 * every type (char included). */
static int val(int pe, size_t i, int k)
{
    return (int)((pe * 31 + (int)i * 7 + k * 13) % 100);
}

/* One function per type: f(dst_sym, src_sym, local) buffers of NEL. */
#define TEST_TYPE(T, N)                                                        \
    static void test_##N(int ctx)                                              \
    {                                                                          \
        const char *nm = ctx ? "ctx_" #N : #N;                                 \
        T *dst = shmem_malloc(NEL * sizeof(T));                                \
        T *src = shmem_malloc(NEL * sizeof(T));                                \
        T loc[NEL];                                                            \
        size_t i;                                                              \
        int k = ctx * 10;                                                      \
        CHECK(dst && src, "%s: shmem_malloc", nm);                             \
                                                                               \
        /* put: contiguous, right neighbour, checked at the target */          \
        for (i = 0; i < NEL; i++) {                                            \
            dst[i] = (T)SENT;                                                  \
            loc[i] = (T)val(me, i, k + 1);                                     \
        }                                                                      \
        shmem_barrier_all();                                                   \
        if (ctx)                                                               \
            shmem_ctx_##N##_put(SHMEM_CTX_DEFAULT, dst, loc, NEL - 1, right);  \
        else                                                                   \
            shmem_##N##_put(dst, loc, NEL - 1, right);                         \
        shmem_barrier_all();                                                   \
        for (i = 0; i < NEL - 1; i++)                                          \
            CHECK(dst[i] == (T)val(left, i, k + 1), "shmem_%s_put elem %zu:"   \
                  " %g", nm, i, (double)dst[i]);                               \
        CHECK(dst[NEL - 1] == (T)SENT, "shmem_%s_put wrote past nelems", nm);  \
                                                                               \
        /* get */                                                              \
        for (i = 0; i < NEL; i++) {                                            \
            src[i] = (T)val(me, i, k + 2);                                     \
            loc[i] = (T)SENT;                                                  \
        }                                                                      \
        shmem_barrier_all();                                                   \
        if (ctx)                                                               \
            shmem_ctx_##N##_get(SHMEM_CTX_DEFAULT, loc, src, NEL - 1, right);  \
        else                                                                   \
            shmem_##N##_get(loc, src, NEL - 1, right);                         \
        for (i = 0; i < NEL - 1; i++)                                          \
            CHECK(loc[i] == (T)val(right, i, k + 2), "shmem_%s_get elem %zu:"  \
                  " %g", nm, i, (double)loc[i]);                               \
        CHECK(loc[NEL - 1] == (T)SENT, "shmem_%s_get wrote past nelems", nm);  \
        shmem_barrier_all();                                                   \
                                                                               \
        /* p and g */                                                          \
        for (i = 0; i < NEL; i++)                                              \
            dst[i] = (T)SENT;                                                  \
        shmem_barrier_all();                                                   \
        for (i = 0; i < NEL; i += 5) {                                         \
            if (ctx)                                                           \
                shmem_ctx_##N##_p(SHMEM_CTX_DEFAULT, &dst[i],                  \
                                  (T)val(me, i, k + 3), right);                \
            else                                                               \
                shmem_##N##_p(&dst[i], (T)val(me, i, k + 3), right);           \
        }                                                                      \
        shmem_barrier_all();                                                   \
        for (i = 0; i < NEL; i++)                                              \
            CHECK(dst[i] == (i % 5 ? (T)SENT : (T)val(left, i, k + 3)),        \
                  "shmem_%s_p elem %zu: %g", nm, i, (double)dst[i]);           \
        for (i = 0; i < NEL; i += 3) {                                         \
            T g = ctx ? shmem_ctx_##N##_g(SHMEM_CTX_DEFAULT, &src[i], right)   \
                      : shmem_##N##_g(&src[i], right);                         \
            CHECK(g == (T)val(right, i, k + 2), "shmem_%s_g elem %zu: %g",     \
                  nm, i, (double)g);                                           \
        }                                                                      \
        shmem_barrier_all();                                                   \
                                                                               \
        /* iput: target stride 3, source stride 2 */                           \
        for (i = 0; i < NEL; i++) {                                            \
            dst[i] = (T)SENT;                                                  \
            loc[i] = (T)val(me, i, k + 4);                                     \
        }                                                                      \
        shmem_barrier_all();                                                   \
        if (ctx)                                                               \
            shmem_ctx_##N##_iput(SHMEM_CTX_DEFAULT, dst, loc, 3, 2, NEL / 3,   \
                                 right);                                       \
        else                                                                   \
            shmem_##N##_iput(dst, loc, 3, 2, NEL / 3, right);                  \
        shmem_barrier_all();                                                   \
        for (i = 0; i < NEL; i++)                                              \
            CHECK(dst[i] == (i % 3 ? (T)SENT : (T)val(left, i / 3 * 2, k + 4)),\
                  "shmem_%s_iput elem %zu: %g", nm, i, (double)dst[i]);        \
                                                                               \
        /* iget: target (local) stride 2, source stride 3 */                   \
        for (i = 0; i < NEL; i++) {                                            \
            src[i] = (T)val(me, i, k + 5);                                     \
            loc[i] = (T)SENT;                                                  \
        }                                                                      \
        shmem_barrier_all();                                                   \
        if (ctx)                                                               \
            shmem_ctx_##N##_iget(SHMEM_CTX_DEFAULT, loc, src, 2, 3, NEL / 3,   \
                                 right);                                       \
        else                                                                   \
            shmem_##N##_iget(loc, src, 2, 3, NEL / 3, right);                  \
        for (i = 0; i < NEL; i++) {                                            \
            int want = (i % 2 || i / 2 >= NEL / 3)                             \
                           ? SENT : val(right, i / 2 * 3, k + 5);              \
            CHECK(loc[i] == (T)want, "shmem_%s_iget elem %zu: %g", nm, i,      \
                  (double)loc[i]);                                             \
        }                                                                      \
        shmem_barrier_all();                                                   \
                                                                               \
        /* put_nbi + quiet */                                                  \
        for (i = 0; i < NEL; i++) {                                            \
            dst[i] = (T)SENT;                                                  \
            loc[i] = (T)val(me, i, k + 6);                                     \
        }                                                                      \
        shmem_barrier_all();                                                   \
        if (ctx) {                                                             \
            shmem_ctx_##N##_put_nbi(SHMEM_CTX_DEFAULT, dst, loc, NEL / 2,      \
                                    right);                                    \
            shmem_ctx_##N##_put_nbi(SHMEM_CTX_DEFAULT, dst + NEL / 2,          \
                                    loc + NEL / 2, NEL / 2, right);            \
            shmem_ctx_quiet(SHMEM_CTX_DEFAULT);                                \
        } else {                                                               \
            shmem_##N##_put_nbi(dst, loc, NEL / 2, right);                     \
            shmem_##N##_put_nbi(dst + NEL / 2, loc + NEL / 2, NEL / 2, right); \
            shmem_quiet();                                                     \
        }                                                                      \
        /* The source buffer may be reused after quiet. */                     \
        for (i = 0; i < NEL; i++)                                              \
            loc[i] = (T)SENT;                                                  \
        shmem_barrier_all();                                                   \
        for (i = 0; i < NEL; i++)                                              \
            CHECK(dst[i] == (T)val(left, i, k + 6), "shmem_%s_put_nbi elem "   \
                  "%zu: %g", nm, i, (double)dst[i]);                           \
                                                                               \
        /* get_nbi + quiet */                                                  \
        for (i = 0; i < NEL; i++)                                              \
            src[i] = (T)val(me, i, k + 7);                                     \
        shmem_barrier_all();                                                   \
        if (ctx) {                                                             \
            shmem_ctx_##N##_get_nbi(SHMEM_CTX_DEFAULT, loc, src, NEL, right);  \
            shmem_ctx_quiet(SHMEM_CTX_DEFAULT);                                \
        } else {                                                               \
            shmem_##N##_get_nbi(loc, src, NEL, right);                         \
            shmem_quiet();                                                     \
        }                                                                      \
        for (i = 0; i < NEL; i++)                                              \
            CHECK(loc[i] == (T)val(right, i, k + 7), "shmem_%s_get_nbi elem "  \
                  "%zu: %g", nm, i, (double)loc[i]);                           \
        shmem_barrier_all();                                                   \
        shmem_free(src);                                                       \
        shmem_free(dst);                                                       \
    }
SHMEM_TYPES_RMA(TEST_TYPE)

/* ---- sized and mem forms: bytes, with guards around each transfer ---- */

#define SZ_BUF 1024

static unsigned char sbyte(int pe, size_t i, int k)
{
    return (unsigned char)(pe * 37 + i * 11 + k * 5 + 1);
}

/* Check buf[0, n) == sbyte(pe, ., k) at element stride (in bytes) es
 * with elements of eb bytes every step elements, the rest untouched (0xee). */
static void check_strided(const unsigned char *buf, size_t n_el, size_t eb,
                          size_t step, int pe, size_t src_step, int k,
                          const char *what)
{
    for (size_t b = 0; b < SZ_BUF; b++) {
        size_t e = b / eb, byte = b % eb;
        int written = e % step == 0 && e / step < n_el;
        unsigned char want =
            written ? sbyte(pe, (e / step) * src_step * eb + byte, k) : 0xee;
        CHECK(buf[b] == want, "%s: byte %zu is 0x%02x, expected 0x%02x", what,
              b, buf[b], want);
    }
}

#define TEST_SIZED(BITS, BYTES, T)                                             \
    static void test_sized##BITS(int ctx)                                      \
    {                                                                          \
        unsigned char *dst = shmem_malloc(SZ_BUF), *src = shmem_malloc(SZ_BUF);\
        unsigned char loc[SZ_BUF];                                             \
        const size_t nel = SZ_BUF / BYTES / 4;                                 \
        int k = 100 + BITS + ctx;                                              \
        char what[64];                                                         \
        CHECK(dst && src, "shmem_malloc");                                     \
        /* put */                                                              \
        memset(dst, 0xee, SZ_BUF);                                             \
        for (size_t b = 0; b < SZ_BUF; b++)                                    \
            loc[b] = sbyte(me, b, k);                                          \
        shmem_barrier_all();                                                   \
        if (ctx)                                                               \
            shmem_ctx_put##BITS(SHMEM_CTX_DEFAULT, dst, loc, nel, right);      \
        else                                                                   \
            shmem_put##BITS(dst, loc, nel, right);                             \
        shmem_barrier_all();                                                   \
        snprintf(what, sizeof(what), "shmem_%sput%d", ctx ? "ctx_" : "", BITS);\
        check_strided(dst, nel, BYTES, 1, left, 1, k, what);                   \
        /* put_nbi */                                                          \
        memset(dst, 0xee, SZ_BUF);                                             \
        shmem_barrier_all();                                                   \
        if (ctx) {                                                             \
            shmem_ctx_put##BITS##_nbi(SHMEM_CTX_DEFAULT, dst, loc, nel, right);\
            shmem_ctx_quiet(SHMEM_CTX_DEFAULT);                                \
        } else {                                                               \
            shmem_put##BITS##_nbi(dst, loc, nel, right);                       \
            shmem_quiet();                                                     \
        }                                                                      \
        shmem_barrier_all();                                                   \
        snprintf(what, sizeof(what), "shmem_%sput%d_nbi", ctx ? "ctx_" : "",   \
                 BITS);                                                        \
        check_strided(dst, nel, BYTES, 1, left, 1, k, what);                   \
        /* iput: target stride 2, source stride 3 */                           \
        memset(dst, 0xee, SZ_BUF);                                             \
        shmem_barrier_all();                                                   \
        if (ctx)                                                               \
            shmem_ctx_iput##BITS(SHMEM_CTX_DEFAULT, dst, loc, 2, 3, nel,       \
                                 right);                                       \
        else                                                                   \
            shmem_iput##BITS(dst, loc, 2, 3, nel, right);                      \
        shmem_barrier_all();                                                   \
        snprintf(what, sizeof(what), "shmem_%siput%d", ctx ? "ctx_" : "",      \
                 BITS);                                                        \
        check_strided(dst, nel, BYTES, 2, left, 3, k, what);                   \
        /* get, get_nbi, iget from the right neighbour's src */                \
        for (size_t b = 0; b < SZ_BUF; b++)                                    \
            src[b] = sbyte(me, b, k + 1);                                      \
        shmem_barrier_all();                                                   \
        memset(loc, 0xee, SZ_BUF);                                             \
        if (ctx)                                                               \
            shmem_ctx_get##BITS(SHMEM_CTX_DEFAULT, loc, src, nel, right);      \
        else                                                                   \
            shmem_get##BITS(loc, src, nel, right);                             \
        snprintf(what, sizeof(what), "shmem_%sget%d", ctx ? "ctx_" : "", BITS);\
        check_strided(loc, nel, BYTES, 1, right, 1, k + 1, what);              \
        memset(loc, 0xee, SZ_BUF);                                             \
        if (ctx) {                                                             \
            shmem_ctx_get##BITS##_nbi(SHMEM_CTX_DEFAULT, loc, src, nel, right);\
            shmem_ctx_quiet(SHMEM_CTX_DEFAULT);                                \
        } else {                                                               \
            shmem_get##BITS##_nbi(loc, src, nel, right);                       \
            shmem_quiet();                                                     \
        }                                                                      \
        snprintf(what, sizeof(what), "shmem_%sget%d_nbi", ctx ? "ctx_" : "",   \
                 BITS);                                                        \
        check_strided(loc, nel, BYTES, 1, right, 1, k + 1, what);              \
        memset(loc, 0xee, SZ_BUF);                                             \
        if (ctx)                                                               \
            shmem_ctx_iget##BITS(SHMEM_CTX_DEFAULT, loc, src, 2, 3, nel,       \
                                 right);                                       \
        else                                                                   \
            shmem_iget##BITS(loc, src, 2, 3, nel, right);                      \
        snprintf(what, sizeof(what), "shmem_%siget%d", ctx ? "ctx_" : "",      \
                 BITS);                                                        \
        check_strided(loc, nel, BYTES, 2, right, 3, k + 1, what);              \
        shmem_barrier_all();                                                   \
        shmem_free(src);                                                       \
        shmem_free(dst);                                                       \
    }
SHMEM_SIZES(TEST_SIZED)

static void test_mem(int ctx)
{
    const size_t big = 3 * 1024 * 1024 + 17; /* odd size, several MiB */
    unsigned char *dst = shmem_malloc(big + 64), *src = shmem_malloc(big);
    unsigned char *loc = malloc(big + 64);
    const char *pfx = ctx ? "ctx_" : "";
    int k = 200 + ctx;
    size_t sizes[] = {1, 7, 64, 4096, 65537, big};

    CHECK(dst && src && loc, "allocation");
    for (size_t b = 0; b < big; b++)
        src[b] = sbyte(me, b, k);
    for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
        size_t n = sizes[si];
        for (int nbi = 0; nbi < 2; nbi++) {
            memset(dst, 0xee, n + 64);
            shmem_barrier_all();
            if (ctx && nbi)
                shmem_ctx_putmem_nbi(SHMEM_CTX_DEFAULT, dst, src, n, right);
            else if (ctx)
                shmem_ctx_putmem(SHMEM_CTX_DEFAULT, dst, src, n, right);
            else if (nbi)
                shmem_putmem_nbi(dst, src, n, right);
            else
                shmem_putmem(dst, src, n, right);
            if (nbi)
                shmem_quiet();
            shmem_barrier_all();
            for (size_t b = 0; b < n + 64; b++)
                CHECK(dst[b] == (b < n ? sbyte(left, b, k) : 0xee),
                      "shmem_%sputmem%s of %zu bytes: byte %zu", pfx,
                      nbi ? "_nbi" : "", n, b);

            memset(loc, 0xee, n + 64);
            if (ctx && nbi)
                shmem_ctx_getmem_nbi(SHMEM_CTX_DEFAULT, loc, src, n, right);
            else if (ctx)
                shmem_ctx_getmem(SHMEM_CTX_DEFAULT, loc, src, n, right);
            else if (nbi)
                shmem_getmem_nbi(loc, src, n, right);
            else
                shmem_getmem(loc, src, n, right);
            if (nbi)
                shmem_quiet();
            for (size_t b = 0; b < n + 64; b++)
                CHECK(loc[b] == (b < n ? sbyte(right, b, k) : 0xee),
                      "shmem_%sgetmem%s of %zu bytes: byte %zu", pfx,
                      nbi ? "_nbi" : "", n, b);
        }
    }
    /* Zero-length transfers are no-ops, even with a NULL source. */
    memset(dst, 0xee, 64);
    shmem_barrier_all();
    shmem_putmem(dst, NULL, 0, right);
    shmem_putmem_nbi(dst, NULL, 0, right);
    shmem_quiet();
    shmem_barrier_all();
    for (size_t b = 0; b < 64; b++)
        CHECK(dst[b] == 0xee, "zero-length putmem wrote byte %zu", b);
    shmem_barrier_all();
    free(loc);
    shmem_free(src);
    shmem_free(dst);
}

int main(void)
{
#ifdef MP_FORCE_ENGINE
    setenv("SHMEM_SDMA_INLINE_MAX", "0", 1);
    setenv("SHMEM_SDMA_NBI_INLINE_MAX", "0", 1);
#endif
    mp_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    right = (me + 1) % npes;
    left = (me + npes - 1) % npes;

    for (int ctx = 0; ctx < 2; ctx++) {
#define CALL_TYPE(T, N) test_##N(ctx);
        SHMEM_TYPES_RMA(CALL_TYPE)
#define CALL_SIZED(BITS, BYTES, T) test_sized##BITS(ctx);
        SHMEM_SIZES(CALL_SIZED)
        test_mem(ctx);
    }
    if (me == 0)
        printf("rma_types: %d PEs: every typed, sized and mem RMA form OK\n",
               npes);
    shmem_finalize();
    return 0;
}
