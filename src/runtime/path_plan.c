/*
 * The path table's choice (path.h, dsm_path_plan): which path reaches each
 * PE and with which capabilities, from what the segments, the network and
 * the sdma layer found. Pure: no state, no call out, so test/unit/path_plan
 * checks every placement without a job; dsm_paths_init (path.c) gathers
 * the inputs and keeps the result.
 */
#include "path.h"

static void use(struct dsm_paths *out, const dsm_path_ops_t *o)
{
    for (int i = 0; i < out->nused; i++)
        if (out->used[i] == o)
            return;
    out->used[out->nused++] = o;
}

void dsm_path_plan(const dsm_path_place_t *in, struct dsm_paths *out)
{
    int spans_nodes = 0;

    out->nused = 0;
    for (int pe = 0; pe < in->npes; pe++)
        spans_nodes |= in->remote[pe] != 0;
    out->caps_all = ~0u;
    for (int pe = 0; pe < in->npes; pe++) {
        dsm_path_t *p = &out->pe[pe];
        if (in->remote[pe]) {
            p->rma = in->net;
            p->caps = in->net_ordered ? DSM_PATH_CAP_ORDERED : 0;
        } else {
            p->rma = in->shm;
            /* One engine queue per target keeps its writes in order. */
            p->caps = DSM_PATH_CAP_LOADSTORE | DSM_PATH_CAP_ENGINES |
                      DSM_PATH_CAP_ORDERED;
            if (in->device && in->device[pe] &&
                (in->engine_caps & DSM_SDMA_CAP_DEVICE_MEM))
                p->caps |= DSM_PATH_CAP_DEVICE;
        }
        /* The atomicity domain (path.h): provider atomics are atomic only
         * with each other, so once the job spans nodes every AMO, to this
         * node's PEs and to this PE too, goes through the network. */
        if (spans_nodes) {
            p->amo = in->net;
        } else {
            p->amo = in->shm;
            p->caps |= DSM_PATH_CAP_CPU_AMO;
        }
        out->caps_all &= p->caps;
        use(out, p->rma);
        use(out, p->amo);
    }
    out->shm_only = out->nused == 1 && out->used[0] == in->shm &&
                    in->check < 2;
}

unsigned dsm_path_caps_of(const struct dsm_paths *paths, const int *pes,
                          int n)
{
    unsigned caps = ~0u;
    for (int i = 0; i < n; i++)
        caps &= paths->pe[pes[i]].caps;
    return caps;
}
