/*
 * Placement (topo.h): the node's cores and NUMA nodes, this PE's share of
 * them, the binding, and the PCI devices nearest to the share.
 *
 * Masks are glibc cpu_set_t throughout (hwloc's bitmaps are converted at
 * the edge), so the hwloc and the fallback paths share every decision.
 */
#include "common/topo.h"

#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/common.h"

#ifdef DSM_HAVE_HWLOC
#include <hwloc.h>
#include <hwloc/glibc-sched.h>
#endif

static struct {
    int ready;
    int job_known; /* job holds the first init's mask (kept by fini) */
    int bind;      /* resolved: NONE, CORE or NUMA */
    int rank, size;
    cpu_set_t job;   /* the mask the process started with */
    cpu_set_t *unit; /* the units of the share, inside job */
    int nunits;
    const char *source;
    int nic_done;
    char nic[64];
    /* The OS names of the nearest NIC's PCI function (nic first: mlx5_0,
     * ib0, ...), NULL-terminated; what the network matches domains to. */
    char nic_alias[DSM_TOPO_NIC_NAMES][64];
    const char *nic_names[DSM_TOPO_NIC_NAMES + 1];
#ifdef DSM_HAVE_HWLOC
    hwloc_topology_t hw;   /* cores and NUMA nodes; NULL if not loaded */
    hwloc_topology_t hwio; /* with PCI and OS devices, loaded on demand */
    int hwio_done;
#endif
} topo = {.bind = DSM_BIND_NONE, .source = "affinity mask"};

static const char *const bind_names[] = {
    [DSM_BIND_AUTO] = "auto",
    [DSM_BIND_NONE] = "none",
    [DSM_BIND_CORE] = "core",
    [DSM_BIND_NUMA] = "numa",
};

int dsm_topo_parse_bind(const char *s)
{
    for (size_t i = 0; s && i < DSM_ARRAY_SIZE(bind_names); i++)
        if (!strcmp(s, bind_names[i]))
            return (int)i;
    return -1;
}

const char *dsm_topo_bind_name(int bind)
{
    return bind >= 0 && bind < (int)DSM_ARRAY_SIZE(bind_names)
               ? bind_names[bind]
               : "?";
}

/* ------------------------------------------------------------ cpu lists */

/* "0-3,8,10-11" (sysfs cpulist) into set; 0, or -1 when malformed. */
static int parse_cpulist(const char *s, cpu_set_t *set)
{
    CPU_ZERO(set);
    while (*s && *s != '\n') {
        char *end;
        long a = strtol(s, &end, 10), b = a;
        if (end == s || a < 0)
            return -1;
        s = end;
        if (*s == '-') {
            b = strtol(s + 1, &end, 10);
            if (end == s + 1 || b < a)
                return -1;
            s = end;
        }
        for (long c = a; c <= b && c < CPU_SETSIZE; c++)
            CPU_SET((int)c, set);
        if (*s == ',')
            s++;
        else if (*s && *s != '\n')
            return -1;
    }
    return 0;
}

static int read_cpulist(const char *path, cpu_set_t *set)
{
    char buf[4096];
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    char *l = fgets(buf, sizeof(buf), f);
    fclose(f);
    return l ? parse_cpulist(buf, set) : -1;
}

static void format_cpulist(const cpu_set_t *set, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, set))
            continue;
        int e = c;
        while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, set))
            e++;
        int w = e == c ? snprintf(buf + n, len - n, "%s%d", n ? "," : "", c)
                       : snprintf(buf + n, len - n, "%s%d-%d", n ? "," : "",
                                  c, e);
        if (w < 0 || (size_t)w >= len - n)
            return; /* truncated, still terminated */
        n += (size_t)w;
        c = e;
    }
    if (!n)
        snprintf(buf, len, "-");
}

/* ------------------------------------------------------------ units */

/* Append u (masked by the job's CPUs) to the units unless empty or equal to
 * the last one (SMT siblings list the same core once per thread). */
static int add_unit(const cpu_set_t *u)
{
    cpu_set_t in;
    CPU_AND(&in, u, &topo.job);
    if (!CPU_COUNT(&in))
        return 0;
    for (int i = 0; i < topo.nunits; i++)
        if (CPU_EQUAL(&topo.unit[i], &in))
            return 0;
    cpu_set_t *nu = realloc(topo.unit, (size_t)(topo.nunits + 1) * sizeof(*nu));
    if (!nu)
        return -1;
    topo.unit = nu;
    topo.unit[topo.nunits++] = in;
    return 0;
}

#ifdef DSM_HAVE_HWLOC
static void hw_to_set(hwloc_const_cpuset_t c, cpu_set_t *set)
{
    /* Plain Linux CPU numbers: either topology converts them the same. */
    hwloc_cpuset_to_glibc_sched_affinity(topo.hw, c, set, sizeof(*set));
}

/* Every PE pays this at init, so only what placement needs: Linux's
 * sysfs view, not the x86 backend (it runs CPUID on every CPU, moving the
 * thread there) nor the GPU plugins (the cuda one would initialise CUDA).
 * Nor the pci plugin (libpciaccess): Linux's component reads the same PCI
 * devices and their locality from /sys/bus/pci, and the plugin leaves
 * about 1 KiB behind on every load (LeakSanitizer found it through
 * SHMEM_INFO's NIC line).
 * Measured on the 2-core machine: 10-20 ms instead of 45-110 ms with I/O
 * devices and every component. */
static hwloc_topology_t hw_open(int io)
{
    static const char *const skip[] = {"x86", "cuda", "nvml",     "opencl",
                                       "gl",  "rsmi", "levelzero", "pci"};
    hwloc_topology_t t;
    if (hwloc_topology_init(&t) < 0)
        return NULL;
#if HWLOC_API_VERSION >= 0x20100
    for (size_t i = 0; i < DSM_ARRAY_SIZE(skip); i++)
        hwloc_topology_set_components(
            t, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, skip[i]);
#endif
    /* PCI devices and their OS devices (GPUs, NICs) for the locality
     * questions; bridges only as far as they place a device. */
    if (io)
        hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    if (hwloc_topology_load(t) < 0) {
        hwloc_topology_destroy(t);
        return NULL;
    }
    return t;
}

static int hw_load(void)
{
    topo.hw = hw_open(0);
    if (!topo.hw)
        return -1;
    topo.source = "hwloc";
    return 0;
}

/* The I/O topology, only when a device question is asked (a GPU backend
 * choosing its GPU, SHMEM_INFO's NIC). */
static hwloc_topology_t hw_io(void)
{
    if (!topo.hwio_done && topo.hw) {
        topo.hwio_done = 1;
        topo.hwio = hw_open(1);
    }
    return topo.hwio;
}

/* Cores (or PUs where the topology has no cores) or NUMA nodes, in hwloc's
 * logical order, which follows the machine's hierarchy. */
static int hw_units(int numa)
{
    hwloc_obj_type_t t = numa ? HWLOC_OBJ_NUMANODE : HWLOC_OBJ_CORE;
    int n = hwloc_get_nbobjs_by_type(topo.hw, t);
    if (n <= 0 && !numa) {
        t = HWLOC_OBJ_PU;
        n = hwloc_get_nbobjs_by_type(topo.hw, t);
    }
    for (int i = 0; i < n; i++) {
        hwloc_obj_t o = hwloc_get_obj_by_type(topo.hw, t, (unsigned)i);
        cpu_set_t s;
        if (!o || !o->cpuset)
            continue;
        hw_to_set(o->cpuset, &s);
        if (add_unit(&s) < 0)
            return -1;
    }
    return 0;
}
#endif

/* Without hwloc: a core is a set of SMT siblings, a NUMA node its sysfs
 * cpulist; where sysfs says nothing, each CPU is a core and the job's CPUs
 * one NUMA node. */
static int sysfs_units(int numa)
{
    char path[128];
    cpu_set_t s;
    if (numa) {
        for (int i = 0; i < CPU_SETSIZE; i++) {
            snprintf(path, sizeof(path),
                     "/sys/devices/system/node/node%d/cpulist", i);
            if (read_cpulist(path, &s) == 0 && add_unit(&s) < 0)
                return -1;
        }
        return topo.nunits ? 0 : add_unit(&topo.job);
    }
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, &topo.job))
            continue;
        snprintf(path, sizeof(path),
                 "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list",
                 c);
        if (read_cpulist(path, &s) < 0) {
            CPU_ZERO(&s);
            CPU_SET(c, &s);
        }
        if (add_unit(&s) < 0)
            return -1;
    }
    return 0;
}

static int load_units(int numa)
{
    free(topo.unit);
    topo.unit = NULL;
    topo.nunits = 0;
#ifdef DSM_HAVE_HWLOC
    if (topo.hw) {
        if (hw_units(numa) < 0)
            return -1;
        if (topo.nunits)
            return 0;
    }
#endif
    return sysfs_units(numa);
}

/* Local PE j's share: the block [j*U/n, (j+1)*U/n) of the units, at least
 * one unit; the whole job mask when unbound. */
static void share_of(int j, cpu_set_t *out)
{
    if (topo.bind == DSM_BIND_NONE || topo.nunits == 0) {
        *out = topo.job;
        return;
    }
    long u = topo.nunits, n = topo.size;
    long lo = j * u / n, hi = (j + 1) * u / n;
    if (hi <= lo)
        hi = lo + 1;
    CPU_ZERO(out);
    for (long i = lo; i < hi; i++)
        CPU_OR(out, out, &topo.unit[i]);
}

/* sched_setaffinity binds one thread: walk them all, so that a thread the
 * application started before shmem_init moves too. */
static int bind_process(const cpu_set_t *set)
{
    DIR *d = opendir("/proc/self/task");
    int rc = 0;
    if (!d)
        return sched_setaffinity(0, sizeof(*set), set);
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        pid_t tid = (pid_t)atoi(e->d_name);
        if (sched_setaffinity(tid, sizeof(*set), set) < 0 && errno != ESRCH) {
            rc = -1;
            break;
        }
    }
    closedir(d);
    return rc;
}

int dsm_topo_init(int bind, int local_rank, int local_size)
{
    if (bind < DSM_BIND_AUTO || bind > DSM_BIND_NUMA || local_size < 1 ||
        local_rank < 0 || local_rank >= local_size) {
        dsm_log_error("shmem_init: invalid placement (bind %d, local PE %d "
                      "of %d)", bind, local_rank, local_size);
        return -1;
    }
    dsm_topo_fini();
    topo.rank = local_rank;
    topo.size = local_size;
    /* A second shmem_init (after shmem_finalize) finds the process bound
     * already: the job's CPUs are those of the first. */
    if (!topo.job_known &&
        sched_getaffinity(0, sizeof(topo.job), &topo.job) < 0) {
        CPU_ZERO(&topo.job);
        for (long c = 0; c < sysconf(_SC_NPROCESSORS_ONLN) && c < CPU_SETSIZE;
             c++)
            CPU_SET((int)c, &topo.job);
    }
    topo.job_known = 1;
    dsm_job_cpus = CPU_COUNT(&topo.job);
#ifdef DSM_HAVE_HWLOC
    if (hw_load() < 0)
        dsm_debug("placement: hwloc could not load the topology; using the "
                  "affinity mask");
#endif
    if (load_units(bind == DSM_BIND_NUMA) < 0) {
        dsm_log_error("shmem_init: placement: out of memory");
        return -1;
    }
    /* auto: a core each (or more) when the node's PEs fit its cores;
     * oversubscribed, binding would only stop the scheduler from moving a
     * PE off a core its peer (or its own engine thread) needs. */
    if (bind == DSM_BIND_AUTO)
        bind = local_size <= topo.nunits ? DSM_BIND_CORE : DSM_BIND_NONE;
    topo.bind = bind;
    topo.ready = 1;
    if (bind == DSM_BIND_NONE)
        return 0;
    cpu_set_t mine, cur;
    share_of(local_rank, &mine);
    if (sched_getaffinity(0, sizeof(cur), &cur) == 0 && CPU_EQUAL(&cur, &mine))
        return 0;
    if (bind_process(&mine) < 0) {
        char l[256];
        format_cpulist(&mine, l, sizeof(l));
        dsm_log_error("shmem_init: cannot bind to CPUs %s (SHMEM_BIND_TO=%s): "
                      "%s", l, dsm_topo_bind_name(bind), strerror(errno));
        return -1;
    }
    return 0;
}

void dsm_topo_fini(void)
{
    free(topo.unit);
    topo.unit = NULL;
    topo.nunits = 0;
#ifdef DSM_HAVE_HWLOC
    if (topo.hw)
        hwloc_topology_destroy(topo.hw);
    if (topo.hwio)
        hwloc_topology_destroy(topo.hwio);
    topo.hw = topo.hwio = NULL;
    topo.hwio_done = 0;
#endif
    topo.ready = 0;
    topo.bind = DSM_BIND_NONE;
    topo.nic_done = 0;
    topo.source = "affinity mask";
}

int dsm_topo_bind(void)
{
    return topo.bind;
}

long dsm_topo_job_cpus(void)
{
    return topo.ready ? CPU_COUNT(&topo.job) : 0;
}

int dsm_topo_units(void)
{
    return topo.nunits;
}

const char *dsm_topo_source(void)
{
    return topo.source;
}

void dsm_topo_cpus_str(char *buf, size_t len)
{
    cpu_set_t s;
    if (sched_getaffinity(0, sizeof(s), &s) < 0)
        CPU_ZERO(&s);
    format_cpulist(&s, buf, len);
}

/* ------------------------------------------------------------ devices */

/* CPUs near a PCI function: hwloc's non-I/O ancestor, else sysfs. 0, or
 * -1 when unknown. */
static int pci_locality(const dsm_topo_pci_t *p, cpu_set_t *out)
{
#ifdef DSM_HAVE_HWLOC
    hwloc_topology_t io = hw_io();
    if (io) {
        hwloc_obj_t o = hwloc_get_pcidev_by_busid(
            io, (unsigned)p->domain, (unsigned)p->bus, (unsigned)p->dev,
            (unsigned)p->func);
        hwloc_obj_t a = o ? hwloc_get_non_io_ancestor_obj(io, o) : NULL;
        if (a && a->cpuset) {
            hw_to_set(a->cpuset, out);
            return 0;
        }
    }
#endif
    char path[128];
    snprintf(path, sizeof(path),
             "/sys/bus/pci/devices/%04x:%02x:%02x.%x/local_cpulist",
             (unsigned)p->domain, (unsigned)p->bus, (unsigned)p->dev,
             (unsigned)p->func);
    return read_cpulist(path, out);
}

/* 2: the share lies inside the device's locality, 1: partly, 0: not (or
 * unknown). */
static int nearness(const cpu_set_t *share, const cpu_set_t *loc)
{
    cpu_set_t in;
    CPU_AND(&in, share, loc);
    int k = CPU_COUNT(&in);
    return k == 0 ? 0 : k == CPU_COUNT(share) ? 2 : 1;
}

int dsm_topo_pick_pci(const dsm_topo_pci_t *devs, int n)
{
    if (n < 1)
        return -1;
    if (!topo.ready)
        return 0;
    cpu_set_t *loc = calloc((size_t)n, sizeof(*loc));
    int *users = calloc((size_t)n, sizeof(*users));
    int pick = topo.rank % n;
    if (!loc || !users)
        goto out;
    for (int d = 0; d < n; d++)
        if (pci_locality(&devs[d], &loc[d]) < 0)
            CPU_ZERO(&loc[d]);
    /* Every PE computes every local PE's choice the same way, in local
     * rank order, so the choices agree without an exchange. */
    for (int j = 0; j <= topo.rank; j++) {
        cpu_set_t share;
        int best = -1, best_near = -1;
        share_of(j, &share);
        for (int d = 0; d < n; d++) {
            int nr = nearness(&share, &loc[d]);
            if (nr > best_near || (nr == best_near && users[d] < users[best])) {
                best = d;
                best_near = nr;
            }
        }
        users[best]++;
        pick = best;
    }
out:
    free(loc);
    free(users);
    return pick;
}

const char *dsm_topo_nic(void)
{
    if (topo.nic_done)
        return topo.nic[0] ? topo.nic : NULL;
    topo.nic_done = 1;
    topo.nic[0] = '\0';
    topo.nic_names[0] = NULL;
#ifdef DSM_HAVE_HWLOC
    hwloc_topology_t io = hw_io();
    if (!io)
        return NULL;
    cpu_set_t share;
    int best_rank = -1;
    hwloc_obj_t best = NULL;
    share_of(topo.rank, &share);
    for (hwloc_obj_t o = hwloc_get_next_osdev(io, NULL); o;
         o = hwloc_get_next_osdev(io, o)) {
        int kind = o->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS ? 1
                   : o->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK   ? 0
                                                                      : -1;
        hwloc_obj_t a = hwloc_get_non_io_ancestor_obj(io, o);
        if (kind < 0 || !o->name || !a || !a->cpuset)
            continue;
        cpu_set_t loc;
        hw_to_set(a->cpuset, &loc);
        /* A fabric device (what libfabric's RDMA providers drive) before
         * an Ethernet interface, then the nearer; first found on a tie. */
        int r = kind * 3 + nearness(&share, &loc);
        if (r > best_rank) {
            best_rank = r;
            best = o;
            snprintf(topo.nic, sizeof(topo.nic), "%s", o->name);
        }
    }
    /* Its other names: the OS devices of the same PCI function (an RDMA
     * device and its interface), which libfabric providers name domains
     * by (verbs: mlx5_0, tcp: ib0). */
    int k = 0;
    if (best) {
        snprintf(topo.nic_alias[k++], sizeof(topo.nic_alias[0]), "%s",
                 best->name);
        for (hwloc_obj_t o = best->parent ? best->parent->io_first_child
                                          : NULL;
             o && k < DSM_TOPO_NIC_NAMES; o = o->next_sibling)
            if (o != best && o->type == HWLOC_OBJ_OS_DEVICE && o->name &&
                (o->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS ||
                 o->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK))
                snprintf(topo.nic_alias[k++], sizeof(topo.nic_alias[0]),
                         "%s", o->name);
    }
    for (int i = 0; i < k; i++)
        topo.nic_names[i] = topo.nic_alias[i];
    topo.nic_names[k] = NULL;
#endif
    return topo.nic[0] ? topo.nic : NULL;
}

const char *const *dsm_topo_nic_names(void)
{
    (void)dsm_topo_nic();
    return topo.nic_names;
}
