/*
 * The path table's choice (src/runtime/path_plan.c, dsm_path_plan) without
 * a job: which path (rma and amo entry) and which capabilities each peer
 * gets for each placement (one node; two nodes; SHMEM_FORCE_NETWORK, where
 * every other PE is its own node; device heaps mapped or not, engines that
 * reach device memory or not; a network that orders writes or not), the
 * fast-path flag, the distinct paths in use, and the AND of the
 * capabilities over a team (dsm_path_caps_of, what coll/team.c keeps in
 * t->caps). The inputs are what dsm_paths_init gathers from the segments,
 * the network and the sdma layer.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "path.h"

#define NPES 4

/* Stand-ins for the two tables: the choice hands out pointers only. */
static const dsm_path_ops_t shm = {.name = "shm"}, net = {.name = "net"};

#define SHM_CAPS                                                               \
    (DSM_PATH_CAP_LOADSTORE | DSM_PATH_CAP_ENGINES | DSM_PATH_CAP_ORDERED)

static dsm_path_t table[NPES];
static struct dsm_paths out;

/* remote, device: one char per PE ('1' or '0'); device NULL: no heap. */
static void plan(const char *remote, const char *device, unsigned engine_caps,
                 int net_ordered, int check)
{
    static unsigned char r[NPES], d[NPES];
    for (int pe = 0; pe < NPES; pe++) {
        r[pe] = remote[pe] == '1';
        d[pe] = device && device[pe] == '1';
    }
    dsm_path_place_t in = {.npes = NPES,
                           .remote = r,
                           .device = device ? d : NULL,
                           .engine_caps = engine_caps,
                           .net_ordered = net_ordered,
                           .check = check,
                           .shm = &shm,
                           .net = &net};
    memset(table, 0xa5, sizeof(table)); /* every entry must be written */
    memset(&out, 0, sizeof(out));
    out.pe = table;
    out.nused = 3; /* reset by the plan */
    dsm_path_plan(&in, &out);
}

static const char *name_of(const dsm_path_ops_t *o)
{
    return o == &shm ? "shm" : o == &net ? "net" : "(not written)";
}

static void expect_pe(int pe, const dsm_path_ops_t *rma,
                      const dsm_path_ops_t *amo, unsigned caps)
{
    ck_assert_msg(out.pe[pe].rma == rma, "PE %d: rma path %s, not %s", pe,
                  name_of(out.pe[pe].rma), rma->name);
    ck_assert_msg(out.pe[pe].amo == amo, "PE %d: amo path %s, not %s", pe,
                  name_of(out.pe[pe].amo), amo->name);
    ck_assert_msg(out.pe[pe].caps == caps, "PE %d: caps %#x, not %#x", pe,
                  out.pe[pe].caps, caps);
}

static int uses(const dsm_path_ops_t *o)
{
    for (int i = 0; i < out.nused; i++)
        if (out.used[i] == o)
            return 1;
    return 0;
}

START_TEST(one_node)
{
    /* cpu backend: engines on host memory only. */
    plan("0000", NULL, DSM_SDMA_CAP_HOST_MEM, 0, 1);
    for (int pe = 0; pe < NPES; pe++)
        expect_pe(pe, &shm, &shm, SHM_CAPS | DSM_PATH_CAP_CPU_AMO);
    ck_assert_uint_eq(out.caps_all, SHM_CAPS | DSM_PATH_CAP_CPU_AMO);
    ck_assert_int_eq(out.nused, 1);
    ck_assert(out.used[0] == &shm);
    ck_assert_int_eq(out.shm_only, 1);
    /* SHMEM_CHECK=2: the checked entry points, off the fast path. */
    plan("0000", NULL, DSM_SDMA_CAP_HOST_MEM, 0, 2);
    ck_assert_int_eq(out.shm_only, 0);
    plan("0000", NULL, DSM_SDMA_CAP_HOST_MEM, 0, 0);
    ck_assert_int_eq(out.shm_only, 1);
}
END_TEST

START_TEST(two_nodes)
{
    /* PEs 0 and 1 here, 2 and 3 on another node; tcp;ofi_rxm keeps no
     * write order. Every AMO goes through the network, to this node's PEs
     * too (the atomicity domain). */
    plan("0011", NULL, DSM_SDMA_CAP_HOST_MEM, 0, 1);
    expect_pe(0, &shm, &net, SHM_CAPS);
    expect_pe(1, &shm, &net, SHM_CAPS);
    expect_pe(2, &net, &net, 0);
    expect_pe(3, &net, &net, 0);
    ck_assert_uint_eq(out.caps_all, 0);
    ck_assert_int_eq(out.nused, 2);
    ck_assert(uses(&shm) && uses(&net));
    ck_assert_int_eq(out.shm_only, 0);
    /* A provider that orders writes (sockets). */
    plan("0011", NULL, DSM_SDMA_CAP_HOST_MEM, 1, 1);
    expect_pe(0, &shm, &net, SHM_CAPS);
    expect_pe(2, &net, &net, DSM_PATH_CAP_ORDERED);
    ck_assert_uint_eq(out.caps_all, DSM_PATH_CAP_ORDERED);
}
END_TEST

START_TEST(force_network)
{
    /* SHMEM_FORCE_NETWORK=1 on PE 1: every other PE is its own node. Its
     * own segments stay mapped (rma shm), its AMOs, even to itself, go
     * through the network. */
    plan("1011", NULL, DSM_SDMA_CAP_HOST_MEM, 0, 0);
    expect_pe(0, &net, &net, 0);
    expect_pe(1, &shm, &net, SHM_CAPS);
    expect_pe(2, &net, &net, 0);
    expect_pe(3, &net, &net, 0);
    ck_assert_int_eq(out.nused, 2);
    ck_assert_int_eq(out.shm_only, 0);
}
END_TEST

START_TEST(device_memory)
{
    const unsigned gpu = DSM_SDMA_CAP_HOST_MEM | DSM_SDMA_CAP_DEVICE_MEM;
    /* cuda-like engines; PE 2's device heap is not mapped here (no peer
     * access to its GPU), PE 3 is on another node (its flag is ignored). */
    plan("0001", "1101", gpu, 0, 1);
    expect_pe(0, &shm, &net, SHM_CAPS | DSM_PATH_CAP_DEVICE);
    expect_pe(1, &shm, &net, SHM_CAPS | DSM_PATH_CAP_DEVICE);
    expect_pe(2, &shm, &net, SHM_CAPS);
    expect_pe(3, &net, &net, 0);
    /* One node, every heap mapped. */
    plan("0000", "1111", gpu, 0, 1);
    for (int pe = 0; pe < NPES; pe++)
        expect_pe(pe, &shm, &shm,
                  SHM_CAPS | DSM_PATH_CAP_CPU_AMO | DSM_PATH_CAP_DEVICE);
    ck_assert_uint_eq(out.caps_all,
                      SHM_CAPS | DSM_PATH_CAP_CPU_AMO | DSM_PATH_CAP_DEVICE);
    /* Engines that cannot reach device memory (cpu): no device path even
     * where a heap is mapped. */
    plan("0000", "1111", DSM_SDMA_CAP_HOST_MEM, 0, 1);
    for (int pe = 0; pe < NPES; pe++)
        expect_pe(pe, &shm, &shm, SHM_CAPS | DSM_PATH_CAP_CPU_AMO);
    /* No device heap at all. */
    plan("0000", NULL, gpu, 0, 1);
    ck_assert_uint_eq(out.caps_all, SHM_CAPS | DSM_PATH_CAP_CPU_AMO);
}
END_TEST

START_TEST(team_caps)
{
    const int pair[] = {0, 1}, across[] = {0, 2}, all[] = {0, 1, 2, 3};
    const unsigned gpu = DSM_SDMA_CAP_HOST_MEM | DSM_SDMA_CAP_DEVICE_MEM;

    plan("0000", "1110", gpu, 0, 1);
    ck_assert_uint_eq(dsm_path_caps_of(&out, pair, 2),
                      SHM_CAPS | DSM_PATH_CAP_CPU_AMO | DSM_PATH_CAP_DEVICE);
    /* One member without a mapped device heap takes DEVICE from all. */
    ck_assert_uint_eq(dsm_path_caps_of(&out, all, 4),
                      SHM_CAPS | DSM_PATH_CAP_CPU_AMO);
    /* Two nodes: a team of this node's PEs keeps loads/stores and engines
     * (chain collectives), not CPU AMOs; a team across nodes keeps nothing
     * but what the network gives (the direct path over the paths). */
    plan("0011", NULL, gpu, 0, 1);
    ck_assert_uint_eq(dsm_path_caps_of(&out, pair, 2), SHM_CAPS);
    ck_assert_uint_eq(dsm_path_caps_of(&out, across, 2), 0);
    plan("0011", NULL, gpu, 1, 1);
    ck_assert_uint_eq(dsm_path_caps_of(&out, across, 2), DSM_PATH_CAP_ORDERED);
    ck_assert_uint_eq(dsm_path_caps_of(&out, all, 4), DSM_PATH_CAP_ORDERED);
    /* A team of no PEs requires nothing. */
    ck_assert_uint_eq(dsm_path_caps_of(&out, all, 0), ~0u);
}
END_TEST

static Suite *path_plan_suite(void)
{
    Suite *s = suite_create("path_plan");
    TCase *tc = tcase_create("path_plan");
    tcase_add_test(tc, one_node);
    tcase_add_test(tc, two_nodes);
    tcase_add_test(tc, force_network);
    tcase_add_test(tc, device_memory);
    tcase_add_test(tc, team_caps);
    suite_add_tcase(s, tc);
    return s;
}

DSM_CHECK_MAIN(path_plan_suite)
