/*
 * The domain choice of SHMEM_OFI_DOMAIN=auto (src/net/domain.c, #15) over
 * made-up candidate lists: a domain named after the nearest NIC (or one
 * of its other OS names, or a verbs variant of it) first, in libfabric's
 * order; then the fi_info nic attributes; then PCI locality (a stand-in
 * for dsm_topo_pick_pci records what it was offered); else the provider's
 * first.
 */
#include <check.h>
#include <stdlib.h>

#include "check_main.h"
#include "net/domain.h"

static int offered;          /* PCI functions the last pick_pci saw */
static dsm_topo_pci_t seen[8];
static int answer;           /* what the stand-in picks */

static int fake_pick(const dsm_topo_pci_t *devs, int n)
{
    offered = n;
    for (int i = 0; i < n && i < 8; i++)
        seen[i] = devs[i];
    return answer;
}

#define DOM(n) {.name = (n)}

START_TEST(by_name)
{
    const dsm_net_dom_t d[] = {DOM("eth0"), DOM("ib0"), DOM("eth1")};
    const char *nic[] = {"ib0", NULL};
    int why = -1;
    ck_assert_int_eq(dsm_net_pick_domain(d, 3, nic, fake_pick, &why), 1);
    ck_assert_int_eq(why, DSM_NET_DOM_NAME);
}
END_TEST

START_TEST(by_alias_and_variant)
{
    /* hwloc names the RDMA device first; tcp names the interface. */
    const dsm_net_dom_t tcp[] = {DOM("eth0"), DOM("ib1"), DOM("ib0")};
    const char *nic[] = {"mlx5_1", "ib1", NULL};
    int why = -1;
    ck_assert_int_eq(dsm_net_pick_domain(tcp, 3, nic, NULL, &why), 1);
    ck_assert_int_eq(why, DSM_NET_DOM_NAME);
    /* verbs: "-xrc"/"-dgram" variants count; the first in order wins;
     * mlx5_10 is not mlx5_1. */
    const dsm_net_dom_t verbs[] = {DOM("mlx5_10"), DOM("mlx5_0-xrc"),
                                   DOM("mlx5_1-xrc"), DOM("mlx5_1")};
    ck_assert_int_eq(dsm_net_pick_domain(verbs, 4, nic, NULL, &why), 2);
    ck_assert_int_eq(why, DSM_NET_DOM_NAME);
    const char *ten[] = {"mlx5_1", NULL};
    const dsm_net_dom_t only10[] = {DOM("mlx5_10"), DOM("mlx5_100")};
    ck_assert_int_eq(dsm_net_pick_domain(only10, 2, ten, NULL, &why), 0);
    ck_assert_int_eq(why, DSM_NET_DOM_FIRST);
}
END_TEST

START_TEST(by_nic_attr)
{
    /* Domains with the provider's own names; the nic attributes say which
     * device each drives. */
    const dsm_net_dom_t d[] = {{.name = "cxi0", .nic = "hsn0"},
                               {.name = "cxi1", .nic = "hsn1"}};
    const char *nic[] = {"hsn1", NULL};
    int why = -1;
    offered = 0;
    ck_assert_int_eq(dsm_net_pick_domain(d, 2, nic, fake_pick, &why), 1);
    ck_assert_int_eq(why, DSM_NET_DOM_NIC);
    ck_assert_int_eq(offered, 0); /* PCI not consulted */
}
END_TEST

START_TEST(by_pci)
{
    /* Nothing named: PCI locality, each function offered once, the
     * answer mapped back to its first candidate. */
    const dsm_net_dom_t d[] = {
        {.name = "a", .has_pci = 1, .pci = {0, 0x17, 0, 0}},
        {.name = "a2", .has_pci = 1, .pci = {0, 0x17, 0, 0}},
        {.name = "x"},
        {.name = "b", .has_pci = 1, .pci = {0, 0x98, 0, 1}},
    };
    const char *nic[] = {"eno1", NULL};
    int why = -1;
    answer = 1;
    ck_assert_int_eq(dsm_net_pick_domain(d, 4, nic, fake_pick, &why), 3);
    ck_assert_int_eq(why, DSM_NET_DOM_PCI);
    ck_assert_int_eq(offered, 2);
    ck_assert_int_eq(seen[0].bus, 0x17);
    ck_assert_int_eq(seen[1].bus, 0x98);
    ck_assert_int_eq(seen[1].func, 1);
    answer = 0;
    ck_assert_int_eq(dsm_net_pick_domain(d, 4, NULL, fake_pick, &why), 0);
    ck_assert_int_eq(why, DSM_NET_DOM_PCI);
    /* No locality known: the provider's first. */
    answer = -1;
    ck_assert_int_eq(dsm_net_pick_domain(d, 4, nic, fake_pick, &why), 0);
    ck_assert_int_eq(why, DSM_NET_DOM_FIRST);
}
END_TEST

START_TEST(first_otherwise)
{
    const dsm_net_dom_t d[] = {DOM("eth0"), DOM("eth1")};
    const char *none[] = {NULL};
    int why = -1;
    offered = 0;
    ck_assert_int_eq(dsm_net_pick_domain(d, 2, none, fake_pick, &why), 0);
    ck_assert_int_eq(why, DSM_NET_DOM_FIRST);
    ck_assert_int_eq(dsm_net_pick_domain(d, 2, NULL, NULL, &why), 0);
    ck_assert_int_eq(why, DSM_NET_DOM_FIRST);
    /* One PCI function only: nothing to choose. */
    const dsm_net_dom_t one[] = {
        {.name = "p", .has_pci = 1, .pci = {0, 3, 0, 0}},
        {.name = "q", .has_pci = 1, .pci = {0, 3, 0, 0}},
    };
    ck_assert_int_eq(dsm_net_pick_domain(one, 2, none, fake_pick, &why), 0);
    ck_assert_int_eq(why, DSM_NET_DOM_FIRST);
    ck_assert_int_eq(offered, 0);
    /* A single candidate is taken as it is. */
    ck_assert_int_eq(dsm_net_pick_domain(d, 1, none, fake_pick, &why), 0);
}
END_TEST

static Suite *net_domain_suite(void)
{
    Suite *s = suite_create("net_domain");
    TCase *tc = tcase_create("net_domain");
    tcase_add_test(tc, by_name);
    tcase_add_test(tc, by_alias_and_variant);
    tcase_add_test(tc, by_nic_attr);
    tcase_add_test(tc, by_pci);
    tcase_add_test(tc, first_otherwise);
    suite_add_tcase(s, tc);
    return s;
}

DSM_CHECK_MAIN(net_domain_suite)
