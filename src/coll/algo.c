/*
 * Variant choice for the chain collectives: SHMEM_FCOLLECT_ALGORITHM and
 * SHMEM_ALLTOALL_ALGORITHM force one; auto picks by size from crossovers
 * measured with bench/coll_bench on this project's machines
 * (docs/PERFORMANCE.md, "Collectives"); SHMEM_COLL_DIRECT_MAX,
 * SHMEM_FCOLLECT_PCPY_MIN and SHMEM_ALLTOALL_PCPY_MIN move them.
 */
#include "coll/chain.h"
#include "rma.h"

#include <sched.h>
#include <string.h>
#include <unistd.h>

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

dsm_coll_tune_t dsm_coll_tune;
static pthread_once_t tune_once = PTHREAD_ONCE_INIT;
static const char *tune_error;

static const char *const algo_names[] = {
#define DSM_ALGO_STR(name, str) str,
    DSM_ALGO_LIST(DSM_ALGO_STR)
#undef DSM_ALGO_STR
};

const char *dsm_algo_name(dsm_algo_t a)
{
    return (unsigned)a < DSM_ALGO_LAST ? algo_names[a] : "?";
}

static int parse_algo(const char *v, dsm_algo_t *out)
{
    for (int i = 0; i < DSM_ALGO_LAST; i++)
        if (!strcmp(v, algo_names[i])) {
            *out = (dsm_algo_t)i;
            return 1;
        }
    return 0;
}

static size_t size_or(uint64_t v, size_t def)
{
    return v == UINT64_MAX ? def : (size_t)v;
}

static void tune_read(void)
{
    dsm_coll_tune_t *t = &dsm_coll_tune;
    int cpu = (dsm_sdma_caps(dsm_rt.sdma) & DSM_SDMA_CAP_HOST_CORES) != 0;

    if (!parse_algo(dsm_env.fcollect_algorithm, &t->ag))
        tune_error = "SHMEM_FCOLLECT_ALGORITHM";
    if (!parse_algo(dsm_env.alltoall_algorithm, &t->a2a))
        tune_error = "SHMEM_ALLTOALL_ALGORITHM";
    /* Host memory: the caller's loads and stores beat any engine at small
     * sizes; measured for the cpu backend, and engines behind PCIe or a
     * driver (cuda, hsa) start even later. CPU engines only add bandwidth
     * when they have cores of their own: on a node where the PEs and their
     * engine threads outnumber the cores, direct won at every size
     * measured (2 cores, 2 and 4 PEs, up to 4 MiB; docs/PERFORMANCE.md). */
    size_t direct_def = DIRECT_MAX_CPU;
    if (cpu) {
        long cores = dsm_ncores();
        if (cores < 2L * dsm_rt.boot.node_size)
            direct_def = SIZE_MAX;
    }
    t->direct_max = size_or(dsm_env.coll_direct_max, direct_def);
    t->ag_pcpy_min = size_or(dsm_env.fcollect_pcpy_min, AG_PCPY_MIN);
    t->a2a_pcpy_min = size_or(dsm_env.alltoall_pcpy_min, A2A_PCPY_MIN);
    t->strided_cpu_max = STRIDED_CPU_MAX;
    t->prelaunch_depth = (int)DSM_MAX(0, DSM_MIN(dsm_env.prelaunch_depth, 64));
    dsm_debug("collectives: fcollect %s, alltoall %s, direct <= %zu B, "
              "pcpy from %zu B (AG) / %zu B (A2A), prelaunch depth %d",
              dsm_algo_name(t->ag), dsm_algo_name(t->a2a), t->direct_max,
              t->ag_pcpy_min, t->a2a_pcpy_min, t->prelaunch_depth);
}

void dsm_coll_tune_init(void)
{
    pthread_once(&tune_once, tune_read);
    if (DSM_UNLIKELY(tune_error))
        dsm_rt_fatal("collective", "%s=%s: use auto, eager, direct, pcpy, "
                     "b2b or %s",
                     tune_error,
                     tune_error[6] == 'F' ? dsm_env.fcollect_algorithm
                                          : dsm_env.alltoall_algorithm,
                     tune_error[6] == 'F' ? "bcast" : "swap");
}

dsm_algo_t dsm_coll_algo(dsm_coll_kind_t kind, size_t nbytes, int npes,
                         int host)
{
    const dsm_coll_tune_t *t = &dsm_coll_tune;
    dsm_algo_t a = kind == DSM_COLL_AG ? t->ag : t->a2a;

    (void)npes;
    /* The common small call first. */
    if (a == DSM_ALGO_AUTO && host && nbytes <= dsm_eager.max)
        return DSM_ALGO_EAGER;
    uint32_t caps = dsm_sdma_caps(dsm_rt.sdma);
    if (a == DSM_ALGO_SWAP && kind == DSM_COLL_AG) {
        dsm_debug("SHMEM_FCOLLECT_ALGORITHM=swap does not apply to an "
                  "AllGather; using auto");
        a = DSM_ALGO_AUTO;
    } else if (a == DSM_ALGO_BCAST && kind == DSM_COLL_A2A) {
        dsm_debug("SHMEM_ALLTOALL_ALGORITHM=bcast does not apply to an "
                  "AlltoAll; using auto");
        a = DSM_ALGO_AUTO;
    } else if ((a == DSM_ALGO_DIRECT || a == DSM_ALGO_EAGER) && !host) {
        dsm_debug("%s collectives need host memory; using auto",
                  dsm_algo_name(a));
        a = DSM_ALGO_AUTO;
    } else if (a == DSM_ALGO_EAGER && nbytes > dsm_eager.max) {
        dsm_debug("%zu bytes per message are more than eager takes (%zu); "
                  "using auto", nbytes, dsm_eager.max);
        a = DSM_ALGO_AUTO;
    } else if ((a == DSM_ALGO_BCAST && !(caps & DSM_SDMA_CAP_BCAST_NATIVE)) ||
               (a == DSM_ALGO_SWAP && !(caps & DSM_SDMA_CAP_SWAP_NATIVE))) {
        dsm_debug("the %s backend has no native %s command; using pcpy",
                  dsm_sdma_backend_name(dsm_rt.sdma), dsm_algo_name(a));
        a = DSM_ALGO_PCPY;
    }
    if (a != DSM_ALGO_AUTO)
        return a;
    if (host && nbytes <= dsm_eager.max)
        return DSM_ALGO_EAGER;
    if (host && nbytes <= t->direct_max)
        return DSM_ALGO_DIRECT;
    if (nbytes < (kind == DSM_COLL_AG ? t->ag_pcpy_min : t->a2a_pcpy_min))
        return DSM_ALGO_B2B;
    return DSM_ALGO_PCPY;
}

int dsm_coll_host(const void *dest, const void *src)
{
    return !dsm_mem_device_heap(dest) && !dsm_mem_device_heap(src);
}

void dsm_coll_self_copy(char *dst, const char *src, size_t len, size_t count,
                        ptrdiff_t dstr, ptrdiff_t sstr, const char *routine)
{
    const int host = dsm_coll_host(dst, src);
    if (!len || (count == 1 && dst == src))
        return;
    if (host && count == 1) {
        memmove(dst, src, len);
        return;
    }
    for (size_t k = 0; k < count; k++) {
        char *d = dst + (ptrdiff_t)k * dstr;
        const char *s = src + (ptrdiff_t)k * sstr;
        if (host)
            memcpy(d, s, len);
        else
            dsm_rma_get(DSM_CTX_DEFAULT, d, s, len, dsm_rt.me, routine);
    }
}

dsm_algo_t dsm_coll_algo_team(dsm_team_t *t, dsm_coll_kind_t kind,
                              size_t nbytes, const void *dest,
                              const void *src, const char *routine)
{
    int host = dsm_coll_host(dest, src);
    if (dsm_team_mapped(t))
        return dsm_coll_algo(kind, nbytes, t->size, host);
    if (!host)
        dsm_rt_fatal(routine, "the team spans nodes: collectives on the "
                     "device heap (GPU memory) across nodes are not "
                     "supported");
    return DSM_ALGO_DIRECT;
}

char *dsm_coll_peer_dst(const char *routine, dsm_team_t *t, int m, void *sym,
                        size_t len, int *by_path)
{
    int pe = dsm_team_pe(t, m);
    *by_path = !dsm_coll_pe_mapped(pe);
    return *by_path ? (char *)sym : dsm_rt_xlate(routine, sym, len, pe);
}
