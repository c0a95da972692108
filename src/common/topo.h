/*
 * Placement: which cores, GPU and NIC belong to a PE (#15).
 *
 * The node is read once at init from hwloc (cores, NUMA nodes, the PCI
 * locality of devices), or without hwloc from the affinity mask (each CPU
 * one core) and sysfs. Its units (cores, or NUMA nodes) are the ones the
 * process may run on when it starts: what the launcher, a taskset or a
 * cgroup left the job. Local PE r of n takes the contiguous block of units
 * [r*U/n, (r+1)*U/n) (one unit, shared, when PEs outnumber units), so that
 * neighbouring PEs share caches and a NUMA node.
 *
 * Binding is done by the PE itself at init, before the library starts any
 * thread: every bootstrap (launcher, PMIx, single) gets it, and the threads
 * the library starts later (engine threads, the proxy, the network
 * progress thread) inherit the PE's cores. The launcher only passes
 * --bind-to on as SHMEM_BIND_TO.
 *
 * This is common code without state from other layers: the runtime calls
 * dsm_topo_init with the policy and the node layout, the GPU backends and
 * the network ask for the nearest of their devices by PCI address.
 */
#ifndef DSM_TOPO_H
#define DSM_TOPO_H

#include <stddef.h>

enum {
    DSM_BIND_AUTO, /* core when the node's PEs fit its cores, else none */
    DSM_BIND_NONE, /* leave the affinity mask as the process got it */
    DSM_BIND_CORE, /* the PE's share of the cores */
    DSM_BIND_NUMA, /* the PE's share of the NUMA nodes */
};

#define DSM_BIND_CHOICES "auto|none|core|numa"

/* DSM_BIND_* of "auto", "none", "core", "numa"; -1 for anything else. */
int dsm_topo_parse_bind(const char *s);
const char *dsm_topo_bind_name(int bind);

/* A PCI function, as the devices' drivers report it. */
typedef struct dsm_topo_pci {
    int domain, bus, dev, func;
} dsm_topo_pci_t;

/* Read the node and bind every thread of the process to local PE
 * local_rank's share under policy bind (DSM_BIND_*). Returns 0, or -1 after
 * printing one line naming the routine and the reason. */
int dsm_topo_init(int bind, int local_rank, int local_size);
void dsm_topo_fini(void);

/* The policy in force (auto resolved); DSM_BIND_NONE before init. */
int dsm_topo_bind(void);
/* CPUs the job may use on this node (the affinity mask before binding);
 * 0 before dsm_topo_init. */
long dsm_topo_job_cpus(void);
/* Units of the node the share was taken from (cores or NUMA nodes). */
int dsm_topo_units(void);
/* "hwloc" or "affinity mask": where the node's layout came from. */
const char *dsm_topo_source(void);
/* This PE's CPUs as a list ("0-3,8"), read back from the kernel. */
void dsm_topo_cpus_str(char *buf, size_t len);

/* Of n devices (GPUs, NICs) at these PCI addresses, the one this PE should
 * use: the nearest to its cores, balanced among the node's PEs (each local
 * PE before it takes one in turn, the nearest with the fewest users). With
 * no locality known this is local_rank modulo n. -1 when n < 1. */
int dsm_topo_pick_pci(const dsm_topo_pci_t *devs, int n);

/* Name of the network device nearest to this PE's cores (an OpenFabrics
 * device such as mlx5_0 before a plain interface such as eth0), or NULL
 * when none is known (no hwloc, or no PCI NIC). */
const char *dsm_topo_nic(void);

/* Every OS name of that NIC's PCI function, dsm_topo_nic()'s first (an
 * RDMA device and its interface: mlx5_0, ib0), NULL-terminated; empty
 * when no NIC is known. What the network matches libfabric domains to. */
#define DSM_TOPO_NIC_NAMES 8
const char *const *dsm_topo_nic_names(void);

#endif /* DSM_TOPO_H */
