/*
 * Placement in the runtime (#15): SHMEM_BIND_TO applied at init, and the
 * per-PE placement line of SHMEM_INFO. The mechanism is common/topo.h.
 */
#ifndef DSM_RT_TOPO_H
#define DSM_RT_TOPO_H

/* Right after the bootstrap, before the library starts any thread: bind
 * this PE to its share of the node. 0, or -1 after a one-line error. */
int dsm_rt_topo_init(void);
/* SHMEM_INFO: one line per PE with its cores, GPU and NIC. */
void dsm_rt_topo_print(void);
void dsm_rt_topo_fini(void);

#endif /* DSM_RT_TOPO_H */
