/*
 * SHMEM_BIND_TO at init and the placement line of SHMEM_INFO (topo.h).
 */
#include "runtime/topo.h"

#include <stdio.h>

#include "common/common.h"
#include "common/topo.h"
#include "env.h"
#include "rt.h"
#include "net/net.h"
#include "sdma/sdma.h"

int dsm_rt_topo_init(void)
{
    int bind = dsm_topo_parse_bind(dsm_env.bind_to);
    if (bind < 0) {
        /* env.c checks the choices first; this guards a table edit. */
        dsm_log_error("shmem_init: invalid value '%s' for SHMEM_BIND_TO (one "
                      "of " DSM_BIND_CHOICES ")", dsm_env.bind_to);
        return -1;
    }
    if (dsm_topo_init(bind, dsm_rt.boot.node_rank, dsm_rt.boot.node_size) < 0)
        return -1;
    if (dsm_log_debug) {
        char cpus[256];
        dsm_topo_cpus_str(cpus, sizeof(cpus));
        dsm_debug("placement: SHMEM_BIND_TO=%s -> %s, local PE %d of %d, "
                  "CPUs %s (%s, %d units)", dsm_env.bind_to,
                  dsm_topo_bind_name(dsm_topo_bind()), dsm_rt.boot.node_rank,
                  dsm_rt.boot.node_size, cpus, dsm_topo_source(),
                  dsm_topo_units());
    }
    return 0;
}

void dsm_rt_topo_print(void)
{
    char cpus[256], gpu[16] = "-";
    const dsm_sdma_gpu_ops_t *g = dsm_rt.sdma ? dsm_sdma_gpu(dsm_rt.sdma) : NULL;
    const char *nic = dsm_topo_nic();

    dsm_topo_cpus_str(cpus, sizeof(cpus));
    if (g)
        snprintf(gpu, sizeof(gpu), "%d", g->device());
    /* One write per line (dsm_out): the launchers forward whole lines, so
     * the PEs' lines do not mix. Engine and proxy threads inherit these
     * CPUs. */
    dsm_out("placement: PE %d (local %d of %d): bind %s, CPUs %s, GPU %s, "
            "NIC %s (from %s)%s%s\n",
            dsm_rt.me, dsm_rt.boot.node_rank, dsm_rt.boot.node_size,
            dsm_topo_bind_name(dsm_topo_bind()), cpus, gpu, nic ? nic : "-",
            dsm_topo_source(), dsm_net_domain() ? ", network domain " : "",
            dsm_net_domain() ? dsm_net_domain() : "");
}

void dsm_rt_topo_fini(void)
{
    dsm_topo_fini();
}
