/*
 * The collectives' variant choice (src/coll/plan.c, dsm_coll_plan)
 * without a job: which variant an AllGather or an AlltoAll takes for each
 * team (size, mapped here or spanning nodes), message size (around every
 * crossover), memory (host or GPU), forced variant (and its fallbacks),
 * eager on and off, strided alltoalls, collect (sizes that may differ),
 * persistent requests (chains only), and the measured defaults on a node
 * with cores to spare or oversubscribed. The inputs are what
 * dsm_coll_pick (algo.c) gathers from the tunables, the team and the
 * sdma layer.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "check_main.h"
#include "coll/plan.h"
#include "sdma/sdma.h"

/* Crossovers of the tests' own tune, all different, so that a planner
 * that reads one for another picks wrongly somewhere below. */
#define EAGER 300u
#define DIRECT 2000u
#define AG_PCPY 5000u
#define A2A_PCPY 9000u
#define STRIDED 64u

/* cpu engines (native bcast and swap, threads on the cores); engines
 * without bcast and swap commands (cuda, hsa). */
#define CPU_CAPS                                                               \
    (DSM_SDMA_CAP_BCAST_NATIVE | DSM_SDMA_CAP_SWAP_NATIVE |                   \
     DSM_SDMA_CAP_HOST_MEM | DSM_SDMA_CAP_HOST_CORES)
#define GPU_CAPS (DSM_SDMA_CAP_HOST_MEM | DSM_SDMA_CAP_DEVICE_MEM)

static dsm_coll_tune_t tune;

static void tune_reset(void)
{
    tune = (dsm_coll_tune_t){.ag = DSM_ALGO_AUTO,
                             .a2a = DSM_ALGO_AUTO,
                             .direct_max = DIRECT,
                             .ag_pcpy_min = AG_PCPY,
                             .a2a_pcpy_min = A2A_PCPY,
                             .strided_cpu_max = STRIDED};
}

/* A blocking call of 4 PEs on one node, host memory, cpu engines. */
static dsm_coll_plan_in_t call(dsm_coll_kind_t kind, size_t bytes)
{
    return (dsm_coll_plan_in_t){.kind = kind,
                                .bytes = bytes,
                                .npes = 4,
                                .host = 1,
                                .mapped = 1,
                                .engine_caps = CPU_CAPS,
                                .eager_max = EAGER,
                                .tune = &tune};
}

static const char *kind_name(dsm_coll_kind_t k)
{
    return k == DSM_COLL_AG ? "AllGather" : "AlltoAll";
}

/* The plan picks want, OK; overridden: whether it must say that the
 * forced variant did not apply (-1: either). */
static void expect_at(int line, const dsm_coll_plan_in_t *in,
                      dsm_algo_t want, int overridden)
{
    dsm_coll_choice_t c = dsm_coll_plan(in);
    ck_assert_msg(c.err == DSM_OK,
                  "line %d: %s of %zu B (%d PEs, host %d, mapped %d): "
                  "refused: %s",
                  line, kind_name(in->kind), in->bytes, in->npes, in->host,
                  in->mapped, c.why);
    ck_assert_msg(c.algo == want,
                  "line %d: %s of %zu B (elem %zu, %d PEs, host %d, chain "
                  "%d, mixed %d, forced %s/%s): %s (%s), not %s",
                  line, kind_name(in->kind), in->bytes, in->elem, in->npes,
                  in->host, in->chain, in->mixed, dsm_algo_name(tune.ag),
                  dsm_algo_name(tune.a2a), dsm_algo_name(c.algo), c.why,
                  dsm_algo_name(want));
    ck_assert_msg(c.why && *c.why, "line %d: no reason given", line);
    if (overridden >= 0)
        ck_assert_msg(c.overridden == overridden,
                      "line %d: %s of %zu B: overridden %d, want %d (%s)",
                      line, kind_name(in->kind), in->bytes, c.overridden,
                      overridden, c.why);
}
#define EXPECT(in, want) expect_at(__LINE__, &(in), DSM_ALGO_##want, 0)
#define EXPECT_OFF(in, want) expect_at(__LINE__, &(in), DSM_ALGO_##want, 1)

static void expect_refused(int line, const dsm_coll_plan_in_t *in,
                           dsm_status_t err)
{
    dsm_coll_choice_t c = dsm_coll_plan(in);
    ck_assert_msg(c.err == err, "line %d: status %s (%s), want %s", line,
                  dsm_status_str(c.err), c.why ? c.why : "",
                  dsm_status_str(err));
    ck_assert_msg(c.why && *c.why, "line %d: a refusal without a reason",
                  line);
}
#define EXPECT_REFUSED(in, err) expect_refused(__LINE__, &(in), DSM_ERR_##err)

/* The status strings live in common.c, which this test does not link. */
const char *dsm_status_str(dsm_status_t s)
{
    return s == DSM_OK                ? "OK"
           : s == DSM_ERR_INVAL       ? "ERR_INVAL"
           : s == DSM_ERR_UNSUPPORTED ? "ERR_UNSUPPORTED"
                                      : "other";
}

/* Host memory under auto, at and around every crossover, 2 and 4 PEs. */
struct step {
    size_t bytes;
    dsm_algo_t want;
};

static void walk(dsm_coll_kind_t kind, const struct step *st, size_t n)
{
    tune_reset();
    for (int npes = 2; npes <= 4; npes += 2)
        for (size_t i = 0; i < n; i++) {
            dsm_coll_plan_in_t in = call(kind, st[i].bytes);
            in.npes = npes;
            expect_at(__LINE__, &in, st[i].want, 0);
        }
}

START_TEST(auto_allgather)
{
    static const struct step st[] = {
        {1, DSM_ALGO_EAGER},
        {EAGER, DSM_ALGO_EAGER},
        {EAGER + 1, DSM_ALGO_DIRECT},
        {DIRECT, DSM_ALGO_DIRECT},
        {DIRECT + 1, DSM_ALGO_B2B},
        {AG_PCPY - 1, DSM_ALGO_B2B},
        {AG_PCPY, DSM_ALGO_PCPY},
        {A2A_PCPY - 1, DSM_ALGO_PCPY}, /* the AlltoAll's crossover */
        {4 << 20, DSM_ALGO_PCPY},
    };
    walk(DSM_COLL_AG, st, sizeof(st) / sizeof(st[0]));
}
END_TEST

START_TEST(auto_alltoall)
{
    static const struct step st[] = {
        {8, DSM_ALGO_EAGER},
        {EAGER, DSM_ALGO_EAGER},
        {EAGER + 1, DSM_ALGO_DIRECT},
        {DIRECT, DSM_ALGO_DIRECT},
        {DIRECT + 1, DSM_ALGO_B2B},
        {AG_PCPY, DSM_ALGO_B2B}, /* the AllGather's crossover */
        {A2A_PCPY - 1, DSM_ALGO_B2B},
        {A2A_PCPY, DSM_ALGO_PCPY},
        {4 << 20, DSM_ALGO_PCPY},
    };
    walk(DSM_COLL_A2A, st, sizeof(st) / sizeof(st[0]));
}
END_TEST

START_TEST(device_memory)
{
    /* GPU buffers: the CPU may not touch them, so no eager and no direct
     * at any size, forced or not; engines without bcast/swap. */
    tune_reset();
    for (int k = DSM_COLL_AG; k <= DSM_COLL_A2A; k++) {
        const size_t pcpy = k == DSM_COLL_AG ? AG_PCPY : A2A_PCPY;
        dsm_coll_plan_in_t in = call((dsm_coll_kind_t)k, 1);
        in.host = 0;
        in.engine_caps = GPU_CAPS;
        EXPECT(in, B2B);
        in.bytes = EAGER;
        EXPECT(in, B2B);
        in.bytes = DIRECT;
        EXPECT(in, B2B);
        in.bytes = pcpy - 1;
        EXPECT(in, B2B);
        in.bytes = pcpy;
        EXPECT(in, PCPY);
        in.bytes = 8;
        tune.ag = tune.a2a = DSM_ALGO_DIRECT;
        EXPECT_OFF(in, B2B);
        tune.ag = tune.a2a = DSM_ALGO_EAGER;
        EXPECT_OFF(in, B2B);
        in.bytes = pcpy;
        EXPECT_OFF(in, PCPY);
        tune.ag = tune.a2a = DSM_ALGO_B2B;
        EXPECT(in, B2B);
        tune_reset();
    }
}
END_TEST

START_TEST(forced)
{
    dsm_coll_plan_in_t ag = call(DSM_COLL_AG, 64 << 10);
    dsm_coll_plan_in_t a2a = call(DSM_COLL_A2A, 64 << 10);

    tune_reset();
    /* Each variant where it applies, at a size auto would not pick it. */
    tune.ag = tune.a2a = DSM_ALGO_B2B;
    EXPECT(ag, B2B);
    EXPECT(a2a, B2B);
    tune.ag = tune.a2a = DSM_ALGO_DIRECT;
    EXPECT(ag, DIRECT);
    EXPECT(a2a, DIRECT);
    tune.ag = tune.a2a = DSM_ALGO_PCPY;
    ag.bytes = a2a.bytes = 16;
    EXPECT(ag, PCPY);
    EXPECT(a2a, PCPY);
    tune.ag = DSM_ALGO_BCAST;
    tune.a2a = DSM_ALGO_SWAP;
    EXPECT(ag, BCAST);
    EXPECT(a2a, SWAP);
    tune.ag = tune.a2a = DSM_ALGO_EAGER;
    ag.bytes = a2a.bytes = EAGER;
    EXPECT(ag, EAGER);
    EXPECT(a2a, EAGER);

    /* swap has no AllGather, bcast no AlltoAll: auto, said. */
    tune.ag = DSM_ALGO_SWAP;
    tune.a2a = DSM_ALGO_BCAST;
    ag.bytes = a2a.bytes = EAGER + 1;
    EXPECT_OFF(ag, DIRECT);
    EXPECT_OFF(a2a, DIRECT);
    ag.bytes = a2a.bytes = 1 << 20;
    EXPECT_OFF(ag, PCPY);
    EXPECT_OFF(a2a, PCPY);

    /* bcast and swap without the engines' native command: pcpy. */
    tune.ag = DSM_ALGO_BCAST;
    tune.a2a = DSM_ALGO_SWAP;
    ag.engine_caps = a2a.engine_caps = GPU_CAPS;
    ag.bytes = a2a.bytes = 16;
    EXPECT_OFF(ag, PCPY);
    EXPECT_OFF(a2a, PCPY);
    /* Only the one command missing counts. */
    ag.engine_caps = a2a.engine_caps = DSM_SDMA_CAP_SWAP_NATIVE;
    EXPECT_OFF(ag, PCPY);
    EXPECT(a2a, SWAP);
    ag.engine_caps = a2a.engine_caps = DSM_SDMA_CAP_BCAST_NATIVE;
    EXPECT(ag, BCAST);
    EXPECT_OFF(a2a, PCPY);

    /* eager beyond its limit, or with eager off: auto by size. */
    tune.ag = tune.a2a = DSM_ALGO_EAGER;
    ag.engine_caps = a2a.engine_caps = CPU_CAPS;
    ag.bytes = a2a.bytes = EAGER + 1;
    EXPECT_OFF(ag, DIRECT);
    EXPECT_OFF(a2a, DIRECT);
    ag.bytes = a2a.bytes = 8;
    ag.eager_max = a2a.eager_max = 0;
    EXPECT_OFF(ag, DIRECT);
    EXPECT_OFF(a2a, DIRECT);
}
END_TEST

START_TEST(eager_limits)
{
    tune_reset();
    dsm_coll_plan_in_t in = call(DSM_COLL_AG, 8);
    /* SHMEM_COLL_EAGER_MAX=0: off. */
    in.eager_max = 0;
    EXPECT(in, DIRECT);
    in.bytes = 0;
    EXPECT(in, DIRECT);
    /* The limit is the message (bytes per peer), inclusive. */
    in.eager_max = 64 << 10;
    in.bytes = 64 << 10;
    EXPECT(in, EAGER);
    in.bytes++;
    EXPECT(in, PCPY);
    in.eager_max = 1;
    in.bytes = 1;
    EXPECT(in, EAGER);
    in.bytes = 2;
    EXPECT(in, DIRECT);
}
END_TEST

START_TEST(collect_mixed)
{
    /* collect: the members' sizes may differ; eager needs all of them,
     * so where it would go eager it runs direct. */
    tune_reset();
    dsm_coll_plan_in_t in = call(DSM_COLL_AG, 8);
    in.mixed = 1;
    EXPECT(in, DIRECT);
    in.bytes = 0;
    EXPECT(in, DIRECT);
    in.bytes = AG_PCPY;
    EXPECT(in, PCPY);
    in.bytes = DIRECT + 1;
    EXPECT(in, B2B);
    tune.ag = DSM_ALGO_EAGER;
    in.bytes = 8;
    EXPECT(in, DIRECT);
    in.host = 0;
    EXPECT_OFF(in, B2B);
}
END_TEST

START_TEST(strided)
{
    /* alltoalls with strides: bytes is the packed message, elem one
     * element. */
    tune_reset();
    dsm_coll_plan_in_t in = call(DSM_COLL_A2A, EAGER);
    in.elem = 4;
    EXPECT(in, EAGER);
    /* Past eager: small elements by the CPU at any size... */
    in.bytes = 1 << 20;
    EXPECT(in, DIRECT);
    in.elem = STRIDED;
    EXPECT(in, DIRECT);
    /* ...larger ones one COPY each, by size. */
    in.elem = STRIDED + 1;
    EXPECT(in, PCPY);
    in.bytes = DIRECT + 1;
    EXPECT(in, B2B);
    in.bytes = DIRECT;
    EXPECT(in, DIRECT);
    /* GPU memory: never by the CPU, however small the elements. */
    in.host = 0;
    in.elem = 4;
    in.bytes = 64;
    EXPECT(in, B2B);
    in.bytes = A2A_PCPY;
    EXPECT(in, PCPY);
    tune.a2a = DSM_ALGO_DIRECT;
    EXPECT_OFF(in, PCPY);
    /* swap needs contiguous blocks: pcpy, with the command or not. */
    in.host = 1;
    tune.a2a = DSM_ALGO_SWAP;
    in.bytes = 64;
    EXPECT_OFF(in, PCPY);
    in.engine_caps = GPU_CAPS;
    EXPECT_OFF(in, PCPY);
    /* bcast has no AlltoAll, strided or not (it would send one block to
     * two peers). */
    in.engine_caps = CPU_CAPS;
    tune.a2a = DSM_ALGO_BCAST;
    EXPECT_OFF(in, EAGER);
    in.bytes = 1 << 20;
    EXPECT_OFF(in, DIRECT);
    tune.a2a = DSM_ALGO_B2B;
    EXPECT(in, B2B);
}
END_TEST

START_TEST(persistent)
{
    /* A request posts engine chains ahead: never direct or eager, even
     * for host memory. */
    tune_reset();
    dsm_coll_plan_in_t in = call(DSM_COLL_AG, 8);
    in.chain = 1;
    EXPECT(in, B2B);
    in.bytes = AG_PCPY;
    EXPECT(in, PCPY);
    tune.ag = DSM_ALGO_DIRECT;
    EXPECT_OFF(in, PCPY);
    tune.ag = DSM_ALGO_EAGER;
    in.bytes = 8;
    EXPECT_OFF(in, B2B);
    tune.ag = DSM_ALGO_BCAST;
    EXPECT(in, BCAST);
    in.engine_caps = GPU_CAPS;
    EXPECT_OFF(in, PCPY);
    in.kind = DSM_COLL_A2A;
    tune.a2a = DSM_ALGO_AUTO;
    in.bytes = A2A_PCPY - 1;
    EXPECT(in, B2B);
}
END_TEST

START_TEST(spans_nodes)
{
    /* Some member only the network reaches: direct over the members'
     * paths, whatever the size or the forced variant (host memory). */
    tune_reset();
    for (int k = DSM_COLL_AG; k <= DSM_COLL_A2A; k++) {
        dsm_coll_plan_in_t in = call((dsm_coll_kind_t)k, 8);
        in.mapped = 0;
        EXPECT(in, DIRECT);
        in.bytes = 4 << 20;
        EXPECT(in, DIRECT);
        tune.ag = tune.a2a = DSM_ALGO_PCPY;
        EXPECT(in, DIRECT);
        tune.ag = tune.a2a = DSM_ALGO_EAGER;
        in.bytes = 8;
        EXPECT(in, DIRECT);
        in.chain = 1; /* a persistent request: runs at each wait */
        EXPECT(in, DIRECT);
        in.mixed = 1;
        EXPECT(in, DIRECT);
        /* GPU memory across nodes: refused (the caller fails the job). */
        in.host = 0;
        EXPECT_REFUSED(in, UNSUPPORTED);
        in.chain = in.mixed = 0;
        EXPECT_REFUSED(in, UNSUPPORTED);
        tune_reset();
    }
}
END_TEST

START_TEST(team_of_one)
{
    tune_reset();
    dsm_coll_plan_in_t in = call(DSM_COLL_AG, 8);
    in.npes = 1;
    EXPECT_REFUSED(in, INVAL);
    in.npes = 0;
    EXPECT_REFUSED(in, INVAL);
}
END_TEST

START_TEST(defaults)
{
    dsm_coll_tune_t t;

    /* cpu engines, cores to spare (2 per PE: one for its engine). */
    dsm_coll_tune_defaults(&t, CPU_CAPS, 16, 4);
    ck_assert_int_eq(t.ag, DSM_ALGO_AUTO);
    ck_assert_int_eq(t.a2a, DSM_ALGO_AUTO);
    ck_assert_uint_eq(t.direct_max, 64u << 10);
    ck_assert_uint_eq(t.ag_pcpy_min, 4u << 10);
    ck_assert_uint_eq(t.a2a_pcpy_min, 4u << 10);
    ck_assert_uint_eq(t.strided_cpu_max, 256);
    ck_assert_int_eq(t.prelaunch_depth, 0);
    dsm_coll_tune_defaults(&t, CPU_CAPS, 2, 1);
    ck_assert_uint_eq(t.direct_max, 64u << 10);
    /* PEs and their engine threads outnumber the cores: direct always. */
    dsm_coll_tune_defaults(&t, CPU_CAPS, 2, 2);
    ck_assert_uint_eq(t.direct_max, SIZE_MAX);
    dsm_coll_tune_defaults(&t, CPU_CAPS, 7, 4);
    ck_assert_uint_eq(t.direct_max, SIZE_MAX);
    /* Engines that are not the PEs' cores (cuda, hsa): the crossover. */
    dsm_coll_tune_defaults(&t, GPU_CAPS, 2, 4);
    ck_assert_uint_eq(t.direct_max, 64u << 10);

    /* Eager: 256 B where each PE has a core, 1 KiB oversubscribed. */
    ck_assert_uint_eq(dsm_coll_eager_max_default(2, 2), 256);
    ck_assert_uint_eq(dsm_coll_eager_max_default(16, 4), 256);
    ck_assert_uint_eq(dsm_coll_eager_max_default(2, 3), 1024);
    ck_assert_uint_eq(dsm_coll_eager_max_default(2, 4), 1024);
}
END_TEST

START_TEST(oversubscribed)
{
    /* The defaults through the planner: 4 PEs on 2 cores (the CI
     * machine) take direct at every host size, 4 PEs on 16 cores the
     * engines from 64 KiB. */
    dsm_coll_tune_t over, spare;
    dsm_coll_tune_defaults(&over, CPU_CAPS, 2, 4);
    dsm_coll_tune_defaults(&spare, CPU_CAPS, 16, 4);
    dsm_coll_plan_in_t in = call(DSM_COLL_AG, 4 << 20);
    in.eager_max = dsm_coll_eager_max_default(2, 4);
    in.tune = &over;
    ck_assert_int_eq(dsm_coll_plan(&in).algo, DSM_ALGO_DIRECT);
    in.bytes = 1024;
    ck_assert_int_eq(dsm_coll_plan(&in).algo, DSM_ALGO_EAGER);
    in.bytes = 1025;
    ck_assert_int_eq(dsm_coll_plan(&in).algo, DSM_ALGO_DIRECT);
    in.eager_max = dsm_coll_eager_max_default(16, 4);
    in.tune = &spare;
    in.bytes = 4 << 20;
    ck_assert_int_eq(dsm_coll_plan(&in).algo, DSM_ALGO_PCPY);
    in.bytes = 64 << 10;
    ck_assert_int_eq(dsm_coll_plan(&in).algo, DSM_ALGO_DIRECT);
    in.bytes = 257;
    ck_assert_int_eq(dsm_coll_plan(&in).algo, DSM_ALGO_DIRECT);
    in.bytes = 256;
    ck_assert_int_eq(dsm_coll_plan(&in).algo, DSM_ALGO_EAGER);
    /* GPU memory oversubscribed: still the engines. */
    in.tune = &over;
    in.host = 0;
    in.bytes = 4 << 20;
    ck_assert_int_eq(dsm_coll_plan(&in).algo, DSM_ALGO_PCPY);
}
END_TEST

START_TEST(names)
{
    dsm_algo_t a;
    for (int i = 0; i < DSM_ALGO_LAST; i++) {
        ck_assert(dsm_algo_parse(dsm_algo_name((dsm_algo_t)i), &a));
        ck_assert_int_eq(a, i);
    }
    a = DSM_ALGO_PCPY;
    ck_assert(!dsm_algo_parse("bogus", &a));
    ck_assert(!dsm_algo_parse("", &a));
    ck_assert(!dsm_algo_parse("PCPY", &a));
    ck_assert_int_eq(a, DSM_ALGO_PCPY);
    ck_assert_str_eq(dsm_algo_name(DSM_ALGO_LAST), "?");
    ck_assert_str_eq(dsm_algo_name(DSM_ALGO_EAGER), "eager");
}
END_TEST

static Suite *coll_plan_suite(void)
{
    Suite *s = suite_create("coll_plan");
    TCase *tc = tcase_create("coll_plan");
    tcase_add_test(tc, auto_allgather);
    tcase_add_test(tc, auto_alltoall);
    tcase_add_test(tc, device_memory);
    tcase_add_test(tc, forced);
    tcase_add_test(tc, eager_limits);
    tcase_add_test(tc, collect_mixed);
    tcase_add_test(tc, strided);
    tcase_add_test(tc, persistent);
    tcase_add_test(tc, spans_nodes);
    tcase_add_test(tc, team_of_one);
    tcase_add_test(tc, defaults);
    tcase_add_test(tc, oversubscribed);
    tcase_add_test(tc, names);
    suite_add_tcase(s, tc);
    return s;
}

DSM_CHECK_MAIN(coll_plan_suite)
