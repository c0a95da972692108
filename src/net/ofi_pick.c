/*
 * The libfabric path's choices at init (ofi_int.h), before ofi.c opens
 * anything: the provider, its domain and attributes (how writes complete,
 * whether they are placed in order), providers refused, and how a fence
 * orders writes (SHMEM_OFI_FENCE). Everything here reads dsm_ofi_cfg and
 * fills dsm_ofi's info, prov, delivery, ordered, cpu_atomics, fence,
 * dom_why and domain_line.
 */
#include "common/common.h"

#ifdef DSM_HAVE_OFI /* the whole file: ofi.c refuses the network without */

#include "net/domain.h"
#include "net/ofi_int.h"

#include "common/topo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct fi_info *hints_for(const char *prov, const char *domain,
                                 int delivery, int order)
{
    struct fi_info *h = dsm_ofi_lib.dupinfo(NULL);
    if (!h)
        return NULL;
    /* FI_MSG: batches of AMOs (ofi_agg.c). */
    h->caps = FI_RMA | FI_ATOMIC | FI_READ | FI_WRITE | FI_REMOTE_READ |
              FI_REMOTE_WRITE | FI_MSG;
    h->mode = 0; /* our contexts are bare flags: no FI_CONTEXT space */
    h->ep_attr->type = FI_EP_RDM;
    h->domain_attr->threading = FI_THREAD_SAFE;
    h->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
                              FI_MR_PROV_KEY | FI_MR_ENDPOINT;
    /* Our waits and the progress thread drive progress: a provider that
     * would run its own spinning thread (sockets) must not, on a node
     * whose cores the PEs already use. */
    h->domain_attr->data_progress = FI_PROGRESS_MANUAL;
    h->domain_attr->control_progress = FI_PROGRESS_MANUAL;
    /* delivery 1: delivery-complete writes; 0: reads ordered after
     * writes instead (quiet's flush reads); -1: neither (diagnostics). */
    if (delivery > 0)
        h->tx_attr->op_flags = FI_DELIVERY_COMPLETE;
    else if (delivery == 0)
        h->tx_attr->msg_order |= FI_ORDER_RAW;
    if (order)
        h->tx_attr->msg_order |= FI_ORDER_WAW;
    if (prov)
        h->fabric_attr->prov_name = strdup(prov);
    if (domain)
        h->domain_attr->name = strdup(domain);
    return h;
}

/* Providers that cannot reach another node: skipped by auto. */
static int node_local_prov(const char *name)
{
    return !strncmp(name, "shm", 3) || !strncmp(name, "sm2", 3) ||
           !strncmp(name, "udp", 3) || strstr(name, "ofi_hook") != NULL;
}

/* Providers whose atomics are carried out in software by the target's
 * progress (libfabric's util atomics, ofi_atomic.c: __atomic builtins and
 * compare-and-swap loops on the word, seq_cst, libfabric >= 1.10 built with
 * HAVE_BUILTIN_MM_ATOMICS, as Debian's is): an AMO applied to the same
 * word by this PE's CPU with __atomic builtins is atomic with theirs. A
 * NIC's atomics (verbs, cxi, efa ...) are not, so there every AMO stays
 * with the provider. rxm over tcp or sockets, and rxd over udp, emulate
 * them so. */
static int software_atomics(const char *prov)
{
    return !strncmp(prov, "tcp", 3) || !strncmp(prov, "sockets", 7) ||
           !strncmp(prov, "udp", 3);
}

/* The providers here that offer RMA and atomics, for error messages. */
static void list_capable(char *out, size_t n)
{
    struct fi_info *h = hints_for(NULL, NULL, -1, 0), *all = NULL, *i;
    size_t used = 0;
    out[0] = 0;
    if (!h)
        return;
    if (dsm_ofi_lib.getinfo(NET_FI_VERSION, NULL, NULL, 0, h, &all) == 0) {
        for (i = all; i && used + 1 < n; i = i->next) {
            const char *p = i->fabric_attr->prov_name;
            /* Only those refuse_unfit would take. */
            if (strstr(out, p) || node_local_prov(p) || strstr(p, "ofi_rxd"))
                continue;
            used += (size_t)snprintf(out + used, n - used, "%s%s",
                                     used ? ", " : "", p);
        }
        dsm_ofi_lib.freeinfo(all);
    }
    dsm_ofi_lib.freeinfo(h);
}

/* The fitting fi_infos of one query, most preferred first, that
 * SHMEM_OFI_DOMAIN=auto chooses among. */
#define NET_DOMS_MAX 64

/* Which of the n fitting fi_infos SHMEM_OFI_DOMAIN=auto takes: the one on
 * the NIC nearest this PE (net/domain.c), described in dsm_ofi.dom_why. */
static int choose_domain(struct fi_info **fit, int n)
{
    dsm_net_dom_t d[NET_DOMS_MAX];
    const char *const *nic = dsm_topo_nic_names();
    int why, k;

    for (k = 0; k < n; k++) {
        struct fid_nic *fn = fit[k]->nic;
        d[k] = (dsm_net_dom_t){.name = fit[k]->domain_attr->name};
        if (fn && fn->device_attr)
            d[k].nic = fn->device_attr->name;
        if (fn && fn->bus_attr && fn->bus_attr->bus_type == FI_BUS_PCI) {
            const struct fi_pci_attr *p = &fn->bus_attr->attr.pci;
            d[k].has_pci = 1;
            d[k].pci = (dsm_topo_pci_t){p->domain_id, p->bus_id,
                                        p->device_id, p->function_id};
        }
    }
    k = dsm_net_pick_domain(d, n, nic, dsm_topo_pick_pci, &why);
    switch (why) {
    case DSM_NET_DOM_NAME:
    case DSM_NET_DOM_NIC:
        snprintf(dsm_ofi.dom_why, sizeof(dsm_ofi.dom_why),
                 "auto: nearest NIC %s", nic[0]);
        break;
    case DSM_NET_DOM_PCI:
        snprintf(dsm_ofi.dom_why, sizeof(dsm_ofi.dom_why),
                 "auto: nearest by PCI locality");
        break;
    default:
        snprintf(dsm_ofi.dom_why, sizeof(dsm_ofi.dom_why),
                 "auto: the provider's first%s%s%s", nic && nic[0] ? "; "
                 : "", nic && nic[0] ? nic[0] : "",
                 nic && nic[0] ? ", the nearest NIC, not offered" : "");
    }
    return k;
}

/* Providers that answer the hints but that the runtime cannot use
 * correctly, refused with the capability they lack (#32). A provider
 * named in SHMEM_OFI_PROVIDER gets here; auto never picks these. */
static dsm_status_t refuse_unfit(void)
{
    const char *lack = NULL;
    char cap[256];

    if (strstr(dsm_ofi.prov, "ofi_rxd"))
        /* Measured, libfabric 1.17: two PEs each reading 256 KiB from the
         * other (test/cluster/cluster_prog check) crash inside fi_cq_read
         * (SIGSEGV in the rxd progress), every run. */
        lack = "reliable RMA reads of any size (its 256 KiB gets crash "
               "inside fi_cq_read)";
    else if (node_local_prov(dsm_ofi.prov) && !dsm_ofi_cfg.force_network &&
             dsm_ofi_cfg.num_nodes > 1)
        lack = "a path to other nodes (it is node-local)";
    if (!lack)
        return DSM_OK;
    list_capable(cap, sizeof(cap));
    dsm_log_error("shmem_init: libfabric provider %s is refused: it lacks "
                  "%s; set SHMEM_OFI_PROVIDER to another%s%s%s",
                  dsm_ofi.prov, lack, cap[0] ? " (here: " : "",
                  cap[0] ? cap : "", cap[0] ? ")" : "");
    return DSM_ERR_UNSUPPORTED;
}

dsm_status_t dsm_ofi_pick_info(void)
{
    const char *prov =
        strcmp(dsm_ofi_cfg.provider, "auto") ? dsm_ofi_cfg.provider : NULL;
    const char *dom = strcmp(dsm_ofi_cfg.domain, "auto") ? dsm_ofi_cfg.domain : NULL;
    /* One machine pretending to be several: loopback unless told. */
    int lo = !dom && dsm_ofi_cfg.force_network && dsm_ofi_cfg.num_nodes == 1;
    int rc = -FI_ENODATA;
    dsm_status_t st;

    /* tcp and sockets skip the loopback interface while another exists
     * unless told to use it (their own variables win when set). */
    if (lo) {
        setenv("FI_TCP_IFACE", "lo", 0);
        setenv("FI_SOCKETS_IFACE", "lo", 0);
    } else if (dom) {
        /* A domain given is that interface for them too: without this,
         * tcp;ofi_rxm asked for domain lo answered with eth0. */
        setenv("FI_TCP_IFACE", dom, 0);
        setenv("FI_SOCKETS_IFACE", dom, 0);
    }
    /* Preferences, most important first: the domain (loopback when one
     * machine plays several nodes), delivery-complete writes (else flush
     * reads at quiet), write-after-write order (else a quiet before each
     * signal that follows data). */
    const char *doms[2] = {dom ? dom : (lo ? "lo" : NULL), NULL};
    /* auto: the provider is libfabric's first that fits at all (its list
     * is in order of preference: tcp;ofi_rxm before sockets); only then
     * the attributes are refined for it. */
    static char first[64];
    for (int di = 0; di < (lo ? 2 : 1) && !prov; di++) {
        struct fi_info *h = hints_for(NULL, doms[di], -1, 0), *all = NULL, *i;
        if (!h)
            return DSM_ERR_NOMEM;
        rc = dsm_ofi_lib.getinfo(NET_FI_VERSION, NULL, NULL, 0, h, &all);
        dsm_ofi_lib.freeinfo(h);
        for (i = rc ? NULL : all; i; i = i->next)
            if (!node_local_prov(i->fabric_attr->prov_name)) {
                snprintf(first, sizeof(first), "%s",
                         i->fabric_attr->prov_name);
                prov = first;
                break;
            }
        if (all)
            dsm_ofi_lib.freeinfo(all);
    }
    /* SHMEM_OFI_COMPLETION=read: flush reads even where delivery-complete
     * is offered (tests that method on a provider that has both). */
    const char *cm = dsm_ofi_cfg.completion;
    int dmax = 1, dmin = 0;
    if (cm && !strcmp(cm, "read"))
        dmax = 0;
    else if (cm && !strcmp(cm, "delivery"))
        dmin = 1;
    else if (cm && *cm && strcmp(cm, "auto")) {
        dsm_log_error("shmem_init: SHMEM_OFI_COMPLETION=%s: use auto, "
                      "delivery or read", cm);
        return DSM_ERR_INVAL;
    }
    for (int di = 0; di < (lo ? 2 : 1) && !dsm_ofi.info; di++)
        for (int delivery = dmax; delivery >= dmin && !dsm_ofi.info; delivery--)
            for (int order = 1; order >= 0 && !dsm_ofi.info; order--) {
                struct fi_info *h = hints_for(prov, doms[di], delivery, order);
                struct fi_info *all = NULL, *i;
                if (!h)
                    return DSM_ERR_NOMEM;
                rc = dsm_ofi_lib.getinfo(NET_FI_VERSION, NULL, NULL, 0, h, &all);
                dsm_ofi_lib.freeinfo(h);
                if (rc)
                    continue;
                struct fi_info *fit[NET_DOMS_MAX];
                int nfit = 0;
                for (i = all; i && nfit < NET_DOMS_MAX; i = i->next) {
                    if (!prov && node_local_prov(i->fabric_attr->prov_name))
                        continue;
                    /* Without delivery-complete, quiet's flush read must
                     * come after writes of any size we post (1 GiB). */
                    if (!delivery &&
                        (!(i->tx_attr->msg_order & FI_ORDER_RAW) ||
                         i->ep_attr->max_order_raw_size < ((size_t)1 << 30)))
                        continue;
                    fit[nfit++] = i;
                }
                /* auto: the domain nearest this PE (a name given, or
                 * loopback, leaves libfabric only that one). */
                i = nfit ? fit[dom || lo ? 0 : choose_domain(fit, nfit)]
                         : NULL;
                if (i) {
                    dsm_ofi.info = dsm_ofi_lib.dupinfo(i);
                    dsm_ofi.delivery = delivery;
                    /* Signals ride behind data of any size we post (one
                     * write is at most 1 GiB, dsm_ofi.max_msg). */
                    dsm_ofi.ordered = order &&
                                  (i->tx_attr->msg_order & FI_ORDER_WAW) &&
                                  i->ep_attr->max_order_waw_size >=
                                      ((size_t)1 << 30);
                }
                dsm_ofi_lib.freeinfo(all);
            }
    if (!dsm_ofi.info) {
        /* Would the provider do without a way to complete writes? */
        struct fi_info *h = hints_for(prov, doms[0], -1, 0), *all = NULL;
        int any = h && dsm_ofi_lib.getinfo(NET_FI_VERSION, NULL, NULL, 0, h, &all) == 0;
        if (h)
            dsm_ofi_lib.freeinfo(h);
        if (all)
            dsm_ofi_lib.freeinfo(all);
        if (!any)
            goto none;
        /* Providers answered, but none can complete writes: neither
         * delivery-complete nor reads ordered after writes. */
        dsm_log_error("shmem_init: libfabric provider %s %s read-after-"
                      "write order (FI_ORDER_RAW): quiet could not complete "
                      "puts; %s",
                      prov ? prov : "(auto)",
                      dmax ? "offers neither FI_DELIVERY_COMPLETE nor"
                           : "lacks (SHMEM_OFI_COMPLETION=read)",
                      dmax ? "set SHMEM_OFI_PROVIDER to one that has either "
                             "(e.g. tcp;ofi_rxm or sockets)"
                           : "unset SHMEM_OFI_COMPLETION or use a provider "
                             "with that order (e.g. sockets)");
        return DSM_ERR_UNSUPPORTED;
    }
none:
    if (!dsm_ofi.info) {
        char cap[256];
        list_capable(cap, sizeof(cap));
        dsm_log_error("shmem_init: no libfabric provider%s%s%s%s offers an "
                      "RDM endpoint with FI_RMA and FI_ATOMIC (%s); set "
                      "SHMEM_OFI_PROVIDER to one that does%s%s",
                      prov ? " '" : "", prov ? prov : "", prov ? "'" : "",
                      dom ? " on that domain" : "", dsm_ofi_lib.strerror(-rc),
                      cap[0] ? ": here " : "", cap[0] ? cap : "");
        return DSM_ERR_UNSUPPORTED;
    }
    snprintf(dsm_ofi.prov, sizeof(dsm_ofi.prov), "%s",
             dsm_ofi.info->fabric_attr->prov_name);
    dsm_ofi.cpu_atomics = software_atomics(dsm_ofi.prov);
    if ((st = refuse_unfit()) != DSM_OK) {
        dsm_ofi_lib.freeinfo(dsm_ofi.info);
        dsm_ofi.info = NULL;
        return st;
    }
    const char *got = dsm_ofi.info->domain_attr->name;
    if (dom && (strncmp(got, dom, strlen(dom)) ||
                (got[strlen(dom)] && got[strlen(dom)] != '-'))) {
        dsm_log_error("shmem_init: SHMEM_OFI_DOMAIN=%s: libfabric provider "
                      "%s offers no such domain (it answered with %s); set "
                      "a domain it has, or SHMEM_OFI_DOMAIN=auto", dom,
                      dsm_ofi.prov, got);
        dsm_ofi_lib.freeinfo(dsm_ofi.info);
        dsm_ofi.info = NULL;
        return DSM_ERR_UNSUPPORTED;
    }
    if (dom)
        snprintf(dsm_ofi.dom_why, sizeof(dsm_ofi.dom_why),
                 "SHMEM_OFI_DOMAIN");
    else if (lo && !strcmp(dsm_ofi.info->domain_attr->name, "lo"))
        snprintf(dsm_ofi.dom_why, sizeof(dsm_ofi.dom_why),
                 "loopback: one node plays several");
    else if (!dsm_ofi.dom_why[0])
        snprintf(dsm_ofi.dom_why, sizeof(dsm_ofi.dom_why),
                 "the provider's first");
    snprintf(dsm_ofi.domain_line, sizeof(dsm_ofi.domain_line), "%s (%s)",
             dsm_ofi.info->domain_attr->name, dsm_ofi.dom_why);
    return DSM_OK;
}

/* SHMEM_OFI_FENCE: auto is free where the provider places writes in order,
 * else the next write to a PE written before the fence waits for that
 * PE's earlier operations (ofi_ep.c); target forces that, quiet the full
 * quiet of the method before (for comparison). FI_FENCE on that next
 * write would wait for nothing here, but tcp;ofi_rxm does not offer it,
 * and on sockets (the one provider here that does, where writes are
 * ordered anyway) a fenced write took 1.7 ms instead of 0.04 and the
 * 3-PE fence test (test/mp/fence_net) hung: not used. */
dsm_status_t dsm_ofi_pick_fence(void)
{
    const char *f = dsm_ofi_cfg.fence ? dsm_ofi_cfg.fence : "auto";

    if (!*f || !strcmp(f, "auto")) {
        dsm_ofi.fence = dsm_ofi.ordered ? NET_FENCE_FREE : NET_FENCE_TARGET;
    } else if (!strcmp(f, "quiet")) {
        dsm_ofi.fence = NET_FENCE_QUIET;
    } else if (!strcmp(f, "target")) {
        dsm_ofi.fence = NET_FENCE_TARGET;
    } else {
        dsm_log_error("shmem_init: SHMEM_OFI_FENCE=%s: use auto, quiet or "
                      "target", f);
        return DSM_ERR_INVAL;
    }
    return DSM_OK;
}

const char *dsm_ofi_fence_text(void)
{
    switch (dsm_ofi.fence) {
    case NET_FENCE_FREE:
        return "free (write order)";
    case NET_FENCE_QUIET:
        return "a quiet";
    default:
        return "the next write to a PE written before it waits for that "
               "PE's";
    }
}

#endif /* DSM_HAVE_OFI */
