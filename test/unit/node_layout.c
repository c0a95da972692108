/*
 * The node layout (src/boot/node_layout.c) over the answers PMIx servers
 * give: Open MPI 4.1 (PMIX_NODEID only for the caller's node, PMIX_HOSTNAME
 * for every rank, no node map: issue #32, where every multi-node job
 * failed in shmem_init), Open MPI 5 / PRRTE and Slurm (node map, host
 * names and node ids for every rank), one node, missing keys (the PEs then
 * exchange host names) and answers that contradict each other.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "boot/node_layout.h"

static char err[320];

static dsm_status_t layout(const dsm_node_answers_t *a, int *node_of,
                           dsm_boot_info_t *info, dsm_node_source_t *src)
{
    memset(info, 0, sizeof(*info));
    err[0] = '\0';
    return dsm_node_layout(a, node_of, info, src, err, sizeof(err));
}

static void expect_info(const dsm_boot_info_t *i, int id, int nodes,
                        int nrank, int nsize)
{
    ck_assert_int_eq(i->node_id, id);
    ck_assert_int_eq(i->num_nodes, nodes);
    ck_assert_int_eq(i->node_rank, nrank);
    ck_assert_int_eq(i->node_size, nsize);
}

START_TEST(one_node)
{
    const char *host[] = {"vm", "vm", "vm", "vm"};
    const int64_t id[] = {0, 0, 0, 0};
    dsm_node_answers_t a = {.size = 4, .host = host, .nodeid = id,
                            .local_peers = "0,1,2,3", .local_size = 4};
    int node_of[4];
    dsm_boot_info_t info;
    dsm_node_source_t src;
    for (int me = 0; me < 4; me++) {
        a.me = me;
        a.local_rank = me;
        ck_assert_int_eq(layout(&a, node_of, &info, &src), DSM_OK);
        ck_assert_int_eq(src, DSM_NODES_HOST);
        expect_info(&info, 0, 1, me, 4);
        for (int r = 0; r < 4; r++)
            ck_assert_int_eq(node_of[r], 0);
    }
}
END_TEST

/* Open MPI 4.1.4 under mpirun --host n1:2,n2:2,n3:2 --map-by node, as the
 * simulated cluster answered: host names for every rank, node ids only for
 * the caller's node, no node map. */
START_TEST(ompi41_three_nodes)
{
    const char *host[] = {"n1", "n2", "n3", "n1", "n2", "n3"};
    const char *peers[] = {"0,3", "1,4", "2,5"};
    int node_of[6];
    for (int me = 0; me < 6; me++) {
        int64_t id[6] = {-1, -1, -1, -1, -1, -1};
        id[me % 3] = id[me % 3 + 3] = me % 3;
        dsm_node_answers_t a = {.size = 6, .me = me, .host = host,
                                .nodeid = id, .local_peers = peers[me % 3],
                                .local_size = 2, .local_rank = me / 3};
        dsm_boot_info_t info;
        dsm_node_source_t src;
        ck_assert_int_eq(layout(&a, node_of, &info, &src), DSM_OK);
        ck_assert_int_eq(src, DSM_NODES_HOST);
        expect_info(&info, me % 3, 3, me / 3, 2);
        for (int r = 0; r < 6; r++)
            ck_assert_int_eq(node_of[r], r % 3);
    }
}
END_TEST

/* PRRTE / Slurm: the node map places every rank; it wins over host names
 * that would merge nodes (containers sharing a host name). Node ids follow
 * the lowest rank of each node, whatever order the map lists them in. */
START_TEST(node_map)
{
    const int n0[] = {4}, n1[] = {3, 2}, n2[] = {0, 1};
    const int *ranks[] = {n0, n1, n2};
    const int count[] = {1, 2, 2};
    const char *host[] = {"c", "c", "c", "c", "c"};
    const int64_t id[] = {5, 5, 9, 9, 2};
    dsm_node_answers_t a = {.size = 5, .me = 3, .map_nodes = 3,
                            .map_count = count, .map_ranks = ranks,
                            .host = host, .nodeid = id,
                            .local_peers = "2,3", .local_size = 2,
                            .local_rank = 1};
    int node_of[5];
    dsm_boot_info_t info;
    dsm_node_source_t src;
    ck_assert_int_eq(layout(&a, node_of, &info, &src), DSM_OK);
    ck_assert_int_eq(src, DSM_NODES_MAP);
    expect_info(&info, 1, 3, 1, 2);
    ck_assert_int_eq(node_of[0], 0);
    ck_assert_int_eq(node_of[1], 0);
    ck_assert_int_eq(node_of[2], 1);
    ck_assert_int_eq(node_of[4], 2);
    /* A map that leaves a rank out or places one twice is not used: the
     * host names (here one node) are, and the local peers object. */
    const int dup[] = {2, 4};
    const int *ranks2[] = {dup, n1, n2};
    a.map_ranks = ranks2;
    ck_assert_int_eq(layout(&a, node_of, &info, &src), DSM_ERR_INVAL);
    ck_assert_int_eq(src, DSM_NODES_HOST);
    ck_assert_ptr_nonnull(strstr(err, "PMIX_LOCAL_PEERS says PEs 2,3"));
    ck_assert_ptr_nonnull(strstr(err, "PMIX_HOSTNAME says PEs 0,1,2,3,4"));
    /* Without host names the node ids place every rank. */
    a.host = NULL;
    ck_assert_int_eq(layout(&a, node_of, &info, &src), DSM_OK);
    ck_assert_int_eq(src, DSM_NODES_ID);
    expect_info(&info, 1, 3, 1, 2);
    ck_assert_int_eq(node_of[4], 2);
}
END_TEST

/* Neither key for every rank: NOT_FOUND (the bootstrap then exchanges host
 * names and asks again). */
START_TEST(missing_keys)
{
    const char *host[] = {"a", NULL, "b", "b"};
    const int64_t id[] = {0, 0, -1, 1};
    dsm_node_answers_t a = {.size = 4, .me = 2, .host = host, .nodeid = id,
                            .local_size = -1, .local_rank = -1};
    int node_of[4];
    dsm_boot_info_t info;
    dsm_node_source_t src;
    ck_assert_int_eq(layout(&a, node_of, &info, &src), DSM_ERR_NOT_FOUND);
    ck_assert_int_eq(src, DSM_NODES_NONE);
    a.host = NULL;
    a.nodeid = NULL;
    ck_assert_int_eq(layout(&a, node_of, &info, &src), DSM_ERR_NOT_FOUND);
    const char *empty[] = {"a", "", "b", "b"};
    a.host = empty;
    ck_assert_int_eq(layout(&a, node_of, &info, &src), DSM_ERR_NOT_FOUND);
    /* After the exchange. */
    const char *all[] = {"a", "a", "b", "b"};
    a.host = all;
    ck_assert_int_eq(layout(&a, node_of, &info, &src), DSM_OK);
    expect_info(&info, 1, 2, 0, 2);
    /* No local answers: nothing to check against. */
    a.me = 0;
    ck_assert_int_eq(layout(&a, node_of, &info, &src), DSM_OK);
    expect_info(&info, 0, 2, 0, 2);
}
END_TEST

START_TEST(contradictions)
{
    const char *host[] = {"a", "b", "a", "b"};
    dsm_node_answers_t a = {.size = 4, .me = 1, .host = host,
                            .local_peers = "1,3", .local_size = 2,
                            .local_rank = 0};
    int node_of[4];
    dsm_boot_info_t info;
    dsm_node_source_t src;
    ck_assert_int_eq(layout(&a, node_of, &info, &src), DSM_OK);
    a.local_size = 3;
    ck_assert_int_eq(layout(&a, node_of, &info, &src), DSM_ERR_INVAL);
    ck_assert_str_eq(err, "PMIX_LOCAL_SIZE says 3 PEs share this node, "
                          "PMIX_HOSTNAME says 2");
    a.local_size = 2;
    a.local_rank = 2;
    ck_assert_int_eq(layout(&a, node_of, &info, &src), DSM_ERR_INVAL);
    ck_assert_ptr_nonnull(strstr(err, "PMIX_LOCAL_RANK is 2"));
    a.local_rank = 1;
    a.local_peers = "1,2";
    ck_assert_int_eq(layout(&a, node_of, &info, &src), DSM_ERR_INVAL);
    ck_assert_str_eq(err, "PMIX_LOCAL_PEERS says PEs 1,2 share this node, "
                          "PMIX_HOSTNAME says PEs 1,3");
    a.local_peers = "1,x";
    ck_assert_int_eq(layout(&a, node_of, &info, &src), DSM_ERR_INVAL);
    ck_assert_ptr_nonnull(strstr(err, "not a list of ranks"));
    a.local_peers = "1,3";
    a.me = 4;
    ck_assert_int_eq(layout(&a, node_of, &info, &src), DSM_ERR_INVAL);
}
END_TEST

START_TEST(parse_ranks)
{
    int *r = NULL;
    ck_assert_int_eq(dsm_node_parse_ranks("0,3,5-7", 8, &r), 5);
    ck_assert_int_eq(r[0], 0);
    ck_assert_int_eq(r[1], 3);
    ck_assert_int_eq(r[4], 7);
    free(r);
    ck_assert_int_eq(dsm_node_parse_ranks("3,1,1", 4, &r), 2);
    ck_assert_int_eq(r[0], 1);
    ck_assert_int_eq(r[1], 3);
    free(r);
    ck_assert_int_eq(dsm_node_parse_ranks("0-39", 40, &r), 40);
    ck_assert_int_eq(r[39], 39);
    free(r);
    ck_assert_int_eq(dsm_node_parse_ranks("a", 4, &r), -1);
    ck_assert_int_eq(dsm_node_parse_ranks("4", 4, &r), -1);
    ck_assert_int_eq(dsm_node_parse_ranks("", 4, &r), -1);
    ck_assert_int_eq(dsm_node_parse_ranks("3-1", 4, &r), -1);
    ck_assert_int_eq(dsm_node_parse_ranks("1;2", 4, &r), -1);
    ck_assert_ptr_null(r);
}
END_TEST

static Suite *node_layout_suite(void)
{
    Suite *s = suite_create("node_layout");
    TCase *tc = tcase_create("node_layout");
    tcase_add_test(tc, one_node);
    tcase_add_test(tc, ompi41_three_nodes);
    tcase_add_test(tc, node_map);
    tcase_add_test(tc, missing_keys);
    tcase_add_test(tc, contradictions);
    tcase_add_test(tc, parse_ranks);
    suite_add_tcase(s, tc);
    return s;
}

DSM_CHECK_MAIN(node_layout_suite)
