/*
 * The domain choice of SHMEM_OFI_DOMAIN=auto (domain.h). A name match
 * comes first because it is exact where the provider names domains after
 * devices (verbs: the RDMA device, tcp and sockets: the interface); the
 * fi_info nic attributes cover providers whose domain names are their own;
 * PCI locality is the last resort, for NICs hwloc did not name.
 */
#include "net/domain.h"

#include <stdlib.h>
#include <string.h>

/* name is alias, or alias followed by a variant suffix ("mlx5_0-xrc"). */
static int names_nic(const char *name, const char *const *aliases)
{
    for (int i = 0; name && aliases && aliases[i]; i++) {
        size_t l = strlen(aliases[i]);
        if (!strncmp(name, aliases[i], l) &&
            (name[l] == '\0' || name[l] == '-'))
            return 1;
    }
    return 0;
}

static int same_pci(const dsm_topo_pci_t *a, const dsm_topo_pci_t *b)
{
    return a->domain == b->domain && a->bus == b->bus && a->dev == b->dev &&
           a->func == b->func;
}

int dsm_net_pick_domain(const dsm_net_dom_t *d, int n,
                        const char *const *nic_names,
                        int (*pick_pci)(const dsm_topo_pci_t *, int),
                        int *why)
{
    *why = DSM_NET_DOM_FIRST;
    for (int i = 0; i < n; i++)
        if (names_nic(d[i].name, nic_names)) {
            *why = DSM_NET_DOM_NAME;
            return i;
        }
    for (int i = 0; i < n; i++)
        if (names_nic(d[i].nic, nic_names)) {
            *why = DSM_NET_DOM_NIC;
            return i;
        }
    if (!pick_pci || n < 2)
        return 0;
    /* Each PCI function once, at its first candidate. */
    dsm_topo_pci_t *pci = malloc((size_t)n * sizeof(*pci));
    int *first = malloc((size_t)n * sizeof(*first)), np = 0, pick = 0;
    if (!pci || !first)
        goto out;
    for (int i = 0; i < n; i++) {
        int k;
        if (!d[i].has_pci)
            continue;
        for (k = 0; k < np && !same_pci(&pci[k], &d[i].pci); k++)
            ;
        if (k == np) {
            pci[np] = d[i].pci;
            first[np++] = i;
        }
    }
    if (np >= 2) {
        int k = pick_pci(pci, np);
        if (k >= 0 && k < np) {
            pick = first[k];
            *why = DSM_NET_DOM_PCI;
        }
    }
out:
    free(pci);
    free(first);
    return pick;
}
