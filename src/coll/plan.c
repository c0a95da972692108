/*
 * The collectives' variant choice (plan.h, dsm_coll_plan) and the
 * measured defaults it starts from. Pure: no state, no call out, so
 * test/unit/coll_plan checks every team, size and placement without a
 * job; algo.c gathers the inputs and fails the job on an error.
 */
#include "coll/plan.h"
#include "sdma/sdma.h"

#include <stdint.h>
#include <string.h>

/* Measured crossovers (2 cores, cpu backend, 2 and 4 PEs; PERFORMANCE.md).
 * direct: up to this many bytes per peer the caller's own loads/stores
 * beat handing commands to a queue, even one the caller executes itself.
 * pcpy: from this size one queue per peer wins over one queue for all. */
#define DIRECT_MAX_CPU (64u << 10)
#define AG_PCPY_MIN (4u << 10)
#define A2A_PCPY_MIN (4u << 10)
/* alltoalls: elements up to this size are copied by the CPU (one COPY
 * command per element costs more than the element). */
#define STRIDED_CPU_MAX 256u
/* Eager messages (eager.c) where every PE has a core: the ready round of
 * the direct path costs one trip (a few hundred ns), the copy through
 * the eager area one more pass over the data: eager wins up to about
 * 256 B (2 PEs, 2 cores). Where PEs outnumber the cores each round is a
 * scheduling round of every PE, which no copy costs: up to 1 KiB. */
#define EAGER_AUTO 256u
#define EAGER_AUTO_OVER 1024u

static const char *const algo_names[] = {
#define DSM_ALGO_STR(name, str) str,
    DSM_ALGO_LIST(DSM_ALGO_STR)
#undef DSM_ALGO_STR
};

const char *dsm_algo_name(dsm_algo_t a)
{
    return (unsigned)a < DSM_ALGO_LAST ? algo_names[a] : "?";
}

int dsm_algo_parse(const char *v, dsm_algo_t *out)
{
    for (int i = 0; i < DSM_ALGO_LAST; i++)
        if (!strcmp(v, algo_names[i])) {
            *out = (dsm_algo_t)i;
            return 1;
        }
    return 0;
}

void dsm_coll_tune_defaults(dsm_coll_tune_t *t, unsigned engine_caps,
                            long cores, int node_pes)
{
    memset(t, 0, sizeof(*t)); /* auto, auto, depth 0 */
    /* Host memory: the caller's loads and stores beat any engine at small
     * sizes; measured for the cpu backend, and engines behind PCIe or a
     * driver (cuda, hsa) start even later. CPU engines only add bandwidth
     * when they have cores of their own: on a node where the PEs and their
     * engine threads outnumber the cores, direct won at every size
     * measured (2 cores, 2 and 4 PEs, up to 4 MiB; docs/PERFORMANCE.md). */
    t->direct_max = DIRECT_MAX_CPU;
    if ((engine_caps & DSM_SDMA_CAP_HOST_CORES) && cores < 2L * node_pes)
        t->direct_max = SIZE_MAX;
    t->ag_pcpy_min = AG_PCPY_MIN;
    t->a2a_pcpy_min = A2A_PCPY_MIN;
    t->strided_cpu_max = STRIDED_CPU_MAX;
}

size_t dsm_coll_eager_max_default(long cores, int node_pes)
{
    return node_pes > cores ? EAGER_AUTO_OVER : EAGER_AUTO;
}

static dsm_coll_choice_t chose(dsm_algo_t a, const char *why)
{
    return (dsm_coll_choice_t){.algo = a, .err = DSM_OK, .why = why};
}

static dsm_coll_choice_t refuse(dsm_status_t err, const char *why)
{
    return (dsm_coll_choice_t){.algo = DSM_ALGO_AUTO, .err = err, .why = why};
}

/* A forced variant that applies to this call, or AUTO; *off says why
 * the forced one did not (NULL when it applied or none was forced). */
static dsm_algo_t forced(const dsm_coll_plan_in_t *in, int host, int fits,
                         const char **off)
{
    const int ag = in->kind == DSM_COLL_AG;
    dsm_algo_t a = ag ? in->tune->ag : in->tune->a2a;

    *off = NULL;
    if (a == DSM_ALGO_SWAP && in->elem) {
        *off = "swap needs contiguous blocks; using pcpy";
        return DSM_ALGO_PCPY;
    }
    if (a == DSM_ALGO_SWAP && ag) {
        *off = "SHMEM_FCOLLECT_ALGORITHM=swap does not apply to an "
               "AllGather; using auto";
        return DSM_ALGO_AUTO;
    }
    if (a == DSM_ALGO_BCAST && !ag) {
        *off = "SHMEM_ALLTOALL_ALGORITHM=bcast does not apply to an "
               "AlltoAll; using auto";
        return DSM_ALGO_AUTO;
    }
    if ((a == DSM_ALGO_DIRECT || a == DSM_ALGO_EAGER) && !host) {
        *off = in->chain ? "a persistent request posts engine chains "
                           "ahead (not direct, not eager); using auto"
               : a == DSM_ALGO_DIRECT
                   ? "direct collectives need host memory; using auto"
                   : "eager collectives need host memory; using auto";
        return DSM_ALGO_AUTO;
    }
    if (a == DSM_ALGO_EAGER && !fits) {
        *off = "the messages are more than eager takes "
               "(SHMEM_COLL_EAGER_MAX); using auto";
        return DSM_ALGO_AUTO;
    }
    if (a == DSM_ALGO_BCAST &&
        !(in->engine_caps & DSM_SDMA_CAP_BCAST_NATIVE)) {
        *off = "the backend has no native bcast command; using pcpy";
        return DSM_ALGO_PCPY;
    }
    if (a == DSM_ALGO_SWAP && !(in->engine_caps & DSM_SDMA_CAP_SWAP_NATIVE)) {
        *off = "the backend has no native swap command; using pcpy";
        return DSM_ALGO_PCPY;
    }
    return a;
}

dsm_coll_choice_t dsm_coll_plan(const dsm_coll_plan_in_t *in)
{
    const dsm_coll_tune_t *t = in->tune;

    if (in->npes < 2)
        return refuse(DSM_ERR_INVAL, "a team of one copies its own block "
                                     "(no plan)");
    /* Some member only the network reaches: its blocks go as network
     * puts from the caller (direct), whatever was forced. */
    if (!in->mapped) {
        if (!in->host)
            return refuse(DSM_ERR_UNSUPPORTED,
                          "the team spans nodes: collectives on the device "
                          "heap (GPU memory) across nodes are not "
                          "supported");
        return chose(DSM_ALGO_DIRECT, "the team spans nodes: the direct "
                                      "path over the members' paths");
    }
    /* A persistent request's instances are engine chains posted ahead:
     * it plans as for GPU memory (never direct, never eager). */
    const int host = in->host && !in->chain;
    const int fits = in->eager_max && in->bytes <= in->eager_max;
    const char *off;
    dsm_coll_choice_t c;
    dsm_algo_t a = forced(in, host, fits, &off);

    if (a != DSM_ALGO_AUTO)
        c = chose(a, off ? off : "forced (SHMEM_*_ALGORITHM)");
    else if (host && fits)
        c = chose(DSM_ALGO_EAGER, "auto: within SHMEM_COLL_EAGER_MAX");
    else if (host && in->elem && in->elem <= t->strided_cpu_max)
        c = chose(DSM_ALGO_DIRECT, "auto: strided elements small enough "
                                   "for the CPU");
    else if (host && in->bytes <= t->direct_max)
        c = chose(DSM_ALGO_DIRECT, "auto: host memory within "
                                   "SHMEM_COLL_DIRECT_MAX");
    else if (in->bytes < (in->kind == DSM_COLL_AG ? t->ag_pcpy_min
                                                  : t->a2a_pcpy_min))
        c = chose(DSM_ALGO_B2B, "auto: below the pcpy crossover");
    else
        c = chose(DSM_ALGO_PCPY, "auto: from the pcpy crossover");
    if (off) {
        c.overridden = 1;
        c.why = off;
    }
    /* collect: eager needs every member's size, which only the readies
     * carry; the direct path is what eager would have replaced. */
    if (in->mixed && c.algo == DSM_ALGO_EAGER) {
        c.algo = DSM_ALGO_DIRECT;
        if (!off)
            c.why = "collect: sizes may differ, so direct instead of eager";
    }
    return c;
}
