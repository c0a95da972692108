/*
 * Which libfabric domain SHMEM_OFI_DOMAIN=auto takes (#15): on a node
 * with several NICs, the one nearest the PE's cores. Pure (no libfabric,
 * no hwloc): ofi_pick.c describes each candidate fi_info as a dsm_net_dom_t
 * and hands over the nearest NIC's OS names from src/common/topo.c;
 * test/unit/net_domain checks it over made-up lists.
 */
#ifndef DSM_NET_DOMAIN_H
#define DSM_NET_DOMAIN_H

#include "common/topo.h"

/* One candidate, in libfabric's order of preference. */
typedef struct dsm_net_dom {
    const char *name; /* domain_attr->name: mlx5_0, eth0, ... */
    const char *nic;  /* fi_info nic device_attr->name, or NULL */
    int has_pci;      /* the fi_info nic's bus is PCI: pci is set */
    dsm_topo_pci_t pci;
} dsm_net_dom_t;

/* Why the choice fell where it did (for SHMEM_INFO). */
enum {
    DSM_NET_DOM_FIRST,   /* nothing located: libfabric's first */
    DSM_NET_DOM_NAME,    /* its name is one of the nearest NIC's */
    DSM_NET_DOM_NIC,     /* its fi_info nic names the nearest NIC */
    DSM_NET_DOM_PCI,     /* nearest by PCI locality (pick_pci) */
};

/* Of n >= 1 candidates, the index to use: the first whose name is one of
 * nic_names (the nearest NIC's OS names, NULL-terminated; verbs' "-xrc"
 * and "-dgram" variants of a name count), else the first whose fi_info
 * nic has one of those names, else, when pick_pci is given and two or
 * more distinct PCI functions are offered, the first candidate on the
 * function pick_pci chooses among them (dsm_topo_pick_pci: nearest to the
 * PE's cores, balanced among the node's PEs), else 0. *why gets a
 * DSM_NET_DOM_*. */
int dsm_net_pick_domain(const dsm_net_dom_t *d, int n,
                        const char *const *nic_names,
                        int (*pick_pci)(const dsm_topo_pci_t *, int),
                        int *why);

#endif /* DSM_NET_DOMAIN_H */
