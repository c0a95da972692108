/*
 * A local process that is not part of a job and tries to write into one
 * of its PEs over the network path (net_secret.sh; docs/SECURITY.md):
 *
 *   net_stranger PID ADDR OFFSET [PROVIDER]
 *
 * It finds the TCP ports PE process PID listens on (its sockets in
 * /proc/PID/fd against /proc/net/tcp: what any process of the same user
 * can see; another user would scan /proc/net/tcp), opens a libfabric
 * endpoint of its own (tcp;ofi_rxm on lo by default, as a job under
 * SHMEM_FORCE_NETWORK=1 on one node uses) and writes 8 bytes to the
 * virtual address ADDR (hex) of every port with the memory keys a small
 * integer scheme would give (0..8), at ADDR where the provider takes
 * virtual addresses, else at OFFSET into the region (a heap's first
 * block is at offset 0). It knows no job secret.
 *
 * First it checks itself: a write to its own registered buffer with the
 * right key must complete, and with a wrong key must fail; otherwise the
 * test says so and exits 2 (a stranger that cannot write at all proves
 * nothing). Exit status: 0 when no write into the PE completed, 1 when one
 * did (each printed), 2 when it could not try, 77 when the provider is
 * missing.
 *
 * Then it sends each port messages shaped as the library's batches of
 * atomics (src/net/ofi_agg.c: kind, claimed sender PE 1, one entry: add
 * 0xbad to the 8-byte word at OFFSET of the heap segment), one without a
 * key field and three with the keys 0..2 (where the key field sits), and
 * waits a moment: the PE must drop them all (net_secret.sh checks the
 * word). Before the batches carried a key, the first one was applied.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static struct fid_fabric *fab;
static struct fid_domain *dom;
static struct fid_ep *ep;
static struct fid_cq *cq;
static struct fid_av *av;
static int last_err; /* of the last refused write */

#define TRY(call, what)                                                        \
    do {                                                                       \
        int rc_ = (int)(call);                                                 \
        if (rc_) {                                                             \
            fprintf(stderr, "net_stranger: %s: %s\n", what,                    \
                    fi_strerror(-rc_));                                        \
            exit(2);                                                           \
        }                                                                      \
    } while (0)

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* 1: the write completed; 0: it failed (error completion); -1: nothing
 * within the time (the target never answered). */
static int write_once(fi_addr_t to, const void *buf, uint64_t addr,
                      uint64_t key)
{
    ssize_t rc;
    double t0 = now();
    /* Delivery-complete: the completion says the data was placed (a
     * transmit completion would only say it left). */
    struct iovec iov = {(void *)buf, 8};
    struct fi_rma_iov rma = {addr, 8, key};
    struct fi_msg_rma msg = {.msg_iov = &iov, .iov_count = 1, .addr = to,
                             .rma_iov = &rma, .rma_iov_count = 1};
    do {
        rc = fi_writemsg(ep, &msg, FI_DELIVERY_COMPLETE | FI_COMPLETION);
        if (rc == -FI_EAGAIN)
            fi_cq_read(cq, NULL, 0);
    } while (rc == -FI_EAGAIN && now() - t0 < 2);
    if (rc) {
        last_err = (int)-rc;
        return 0;
    }
    while (now() - t0 < 3) {
        struct fi_cq_entry e;
        ssize_t n = fi_cq_read(cq, &e, 1);
        if (n == 1)
            return 1;
        if (n == -FI_EAVAIL) {
            struct fi_cq_err_entry err = {0};
            fi_cq_readerr(cq, &err, 0);
            last_err = err.err;
            return 0;
        }
        usleep(1000);
    }
    return -1;
}

/* A fresh endpoint with its CQ and AV: a target that refused a write may
 * have dropped the connection, so every try starts anew. */
static void open_ep(struct fi_info *info)
{
    struct fi_cq_attr cqa = {.format = FI_CQ_FORMAT_CONTEXT};
    struct fi_av_attr ava = {.type = FI_AV_TABLE};
    TRY(fi_endpoint(dom, info, &ep, NULL), "fi_endpoint");
    TRY(fi_cq_open(dom, &cqa, &cq, NULL), "fi_cq_open");
    TRY(fi_av_open(dom, &ava, &av, NULL), "fi_av_open");
    TRY(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV), "fi_ep_bind cq");
    TRY(fi_ep_bind(ep, &av->fid, 0), "fi_ep_bind av");
    TRY(fi_enable(ep), "fi_enable");
}

static void close_ep(void)
{
    fi_close(&ep->fid);
    fi_close(&av->fid);
    fi_close(&cq->fid);
}

/* The TCP ports (IPv4) the process listens on. */
static int listening_ports(int pid, int *ports, int max)
{
    char path[64], line[512], link[128];
    unsigned long inodes[256];
    int ni = 0, np = 0;

    snprintf(path, sizeof(path), "/proc/%d/fd", pid);
    DIR *d = opendir(path);
    if (!d)
        return 0;
    for (struct dirent *e; (e = readdir(d)) && ni < 256;) {
        char fp[340];
        snprintf(fp, sizeof(fp), "%s/%s", path, e->d_name);
        ssize_t n = readlink(fp, link, sizeof(link) - 1);
        if (n <= 0)
            continue;
        link[n] = 0;
        if (sscanf(link, "socket:[%lu]", &inodes[ni]) == 1)
            ni++;
    }
    closedir(d);
    FILE *f = fopen("/proc/net/tcp", "r");
    if (!f)
        return 0;
    while (fgets(line, sizeof(line), f) && np < max) {
        unsigned port, st;
        unsigned long inode;
        if (sscanf(line, " %*d: %*x:%x %*x:%*x %x %*s %*s %*s %*s %*s %lu",
                   &port, &st, &inode) != 3 || st != 0x0a)
            continue;
        for (int i = 0; i < ni; i++)
            if (inodes[i] == inode)
                ports[np++] = (int)port;
    }
    fclose(f);
    return np;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: net_stranger PID ADDR OFFSET [PROVIDER]\n");
        return 2;
    }
    int pid = atoi(argv[1]);
    uint64_t target = strtoull(argv[2], NULL, 16);
    const uint64_t offset = strtoull(argv[3], NULL, 16);
    const char *prov = argc > 4 ? argv[4] : "tcp;ofi_rxm";
    int ports[32], np = listening_ports(pid, ports, 32);
    if (!np) {
        fprintf(stderr, "net_stranger: PE %d listens on no TCP port\n", pid);
        return 2;
    }

    setenv("FI_TCP_IFACE", "lo", 0);
    setenv("FI_SOCKETS_IFACE", "lo", 0);
    struct fi_info *h = fi_allocinfo(), *info = NULL;
    h->caps = FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE |
              FI_MSG | FI_SEND;
    h->ep_attr->type = FI_EP_RDM;
    h->addr_format = FI_SOCKADDR_IN;
    h->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
                              FI_MR_PROV_KEY | FI_MR_ENDPOINT;
    h->tx_attr->op_flags = FI_DELIVERY_COMPLETE;
    h->fabric_attr->prov_name = strdup(prov);
    h->domain_attr->name = strdup("lo");
    if (fi_getinfo(FI_VERSION(1, 10), NULL, NULL, 0, h, &info) || !info) {
        printf("net_stranger: no provider %s on lo\n", prov);
        return 77;
    }
    TRY(fi_fabric(info->fabric_attr, &fab, NULL), "fi_fabric");
    TRY(fi_domain(fab, info, &dom, NULL), "fi_domain");
    open_ep(info);

    /* Self check: our own buffer, registered with key 77. */
    static uint64_t mine[2], src = 0x5ec2e7ull;
    struct fid_mr *mr;
    TRY(fi_mr_reg(dom, mine, sizeof(mine), FI_REMOTE_WRITE, 0, 77, 0, &mr,
                  NULL), "fi_mr_reg");
    if (info->domain_attr->mr_mode & FI_MR_ENDPOINT) {
        TRY(fi_mr_bind(mr, &ep->fid, 0), "fi_mr_bind");
        TRY(fi_mr_enable(mr), "fi_mr_enable");
    }
    uint64_t mykey = fi_mr_key(mr);
    char name[128];
    size_t nl = sizeof(name);
    fi_addr_t self;
    TRY(fi_getname(&ep->fid, name, &nl), "fi_getname");
    if (fi_av_insert(av, name, 1, &self, 0, NULL) != 1) {
        fprintf(stderr, "net_stranger: fi_av_insert (self) failed\n");
        return 2;
    }
    const int virt = !!(info->domain_attr->mr_mode & FI_MR_VIRT_ADDR);
    uint64_t vaddr = virt ? (uint64_t)(uintptr_t)mine : 0;
    if (!virt)
        target = offset;
    int good = write_once(self, &src, vaddr, mykey);
    uint64_t other = 0xbadbadull;
    int bad = write_once(self, &other, vaddr, mykey + 1);
    if (good != 1 || mine[0] != src || bad == 1 || mine[0] == other) {
        fprintf(stderr, "net_stranger: self check failed (right key %d, "
                "wrong key %d): this stranger proves nothing\n", good, bad);
        return 2;
    }
    printf("net_stranger: self check passed (key %llu writes, key %llu "
           "does not)\n", (unsigned long long)mykey,
           (unsigned long long)mykey + 1);

    int landed = 0;
    fi_close(&mr->fid);
    close_ep();
    for (int i = 0; i < np; i++) {
        struct sockaddr_in sa = {.sin_family = AF_INET,
                                 .sin_port = htons((uint16_t)ports[i])};
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        for (uint64_t key = 0; key <= 8; key++) {
            uint64_t val = 0xbad0000ull + key;
            fi_addr_t to;
            open_ep(info);
            if (fi_av_insert(av, &sa, 1, &to, 0, NULL) != 1) {
                close_ep();
                continue;
            }
            int r = write_once(to, &val, target, key);
            printf("net_stranger: port %d key %llu: %s%s\n", ports[i],
                   (unsigned long long)key,
                   r == 1 ? "WRITE COMPLETED" : r == 0 ? "refused: "
                                                       : "no answer",
                   r == 0 ? fi_strerror(last_err) : "");
            landed += r == 1;
            close_ep();
        }
    }
    /* Messages shaped as batches of atomics (ofi_agg.c's agg_msg_t). */
    const uint64_t entry = (offset & ((UINT64_C(1) << 56) - 1)) |
                           UINT64_C(1) << 57 | /* 8 bytes, heap segment */
                           UINT64_C(4) << 58;  /* DSM_AMO_ADD */
    for (int i = 0; i < np; i++) {
        struct sockaddr_in sa = {.sin_family = AF_INET,
                                 .sin_port = htons((uint16_t)ports[i])};
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        for (int k = -1; k <= 2; k++) {
            struct {
                uint32_t kind;
                int32_t from;
                uint32_t count, pad;
                uint64_t cookie, w[3];
            } m = {0x41474201u, 1, 1, 0, 0, {entry, 0xbad, 0}};
            size_t len = sizeof(m) - sizeof(uint64_t);
            if (k >= 0) { /* key field, then the entry */
                m.w[0] = (uint64_t)k, m.w[1] = entry, m.w[2] = 0xbad;
                len = sizeof(m);
            }
            fi_addr_t to;
            open_ep(info);
            if (fi_av_insert(av, &sa, 1, &to, 0, NULL) != 1) {
                close_ep();
                continue;
            }
            double t0 = now();
            ssize_t rc;
            while ((rc = fi_send(ep, &m, len, NULL, to, NULL)) == -FI_EAGAIN &&
                   now() - t0 < 2)
                fi_cq_read(cq, NULL, 0);
            int sent = 0;
            while (!rc && now() - t0 < 3) {
                struct fi_cq_entry e;
                ssize_t n = fi_cq_read(cq, &e, 1);
                if (n == 1 || n == -FI_EAVAIL) {
                    sent = n == 1;
                    break;
                }
                usleep(1000);
            }
            if (k < 0)
                printf("net_stranger: port %d batch message without a key: "
                       "%s\n", ports[i], sent ? "sent" : "not sent");
            else
                printf("net_stranger: port %d batch message with key %d: "
                       "%s\n", ports[i], k, sent ? "sent" : "not sent");
            close_ep();
        }
    }
    usleep(500000); /* the PE reads its messages as it progresses */
    fflush(stdout);
    /* Leave without closing: a half-open connection is the target's to
     * clean up, as with a stranger that dies. */
    _exit(landed ? 1 : 0);
}
