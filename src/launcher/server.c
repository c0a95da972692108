/*
 * The bootstrap server (protocol: src/boot/wire.h): the listening socket in
 * a private directory, the PEs' connections, the key-value store with its
 * descriptors, fences and barriers, gets that wait for a later put, abort
 * and fini.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/fdpass.h"
#include "launcher/launcher.h"

int dsm_launcher_server_open(job_t *job)
{
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp)
        tmp = "/tmp";
    int n = snprintf(job->dir, sizeof(job->dir), "%s/dmashmem-XXXXXX", tmp);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (n < 0 || (size_t)n >= sizeof(job->dir) ||
        (size_t)n + 1 + strlen(DSM_WIRE_SOCK_NAME) >= sizeof(sa.sun_path)) {
        fprintf(stderr, PROG ": TMPDIR path too long for a unix socket: %s\n",
                tmp);
        job->dir[0] = '\0';
        return -1;
    }
    /* mkdtemp makes the directory 0700: only our user can connect. */
    if (!mkdtemp(job->dir)) {
        fprintf(stderr, PROG ": cannot create a directory in %s: %s\n", tmp,
                strerror(errno));
        job->dir[0] = '\0';
        return -1;
    }
    dsm_launcher_janitor_send(job, JAN_PATH, (int)strlen(job->dir), job->dir);
    snprintf(job->sock, sizeof(job->sock), "%s/%s", job->dir,
             DSM_WIRE_SOCK_NAME);
    memcpy(sa.sun_path, job->sock, strlen(job->sock) + 1);
    job->listen_fd =
        socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (job->listen_fd < 0 ||
        bind(job->listen_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
        listen(job->listen_fd, SOMAXCONN) < 0) {
        fprintf(stderr, PROG ": cannot listen on %s: %s\n", job->sock,
                strerror(errno));
        return -1;
    }
    return 0;
}

/* The socket is needed only until every PE has connected. */
void dsm_launcher_server_close(job_t *job)
{
    if (job->listen_fd >= 0) {
        close(job->listen_fd);
        job->listen_fd = -1;
    }
    if (job->dir[0]) {
        dsm_launcher_remove_dir(job->dir);
        job->dir[0] = '\0';
        dsm_launcher_janitor_send(job, 0, 0, NULL);
    }
}

/* ------------------------------------------------------------------ kv */

static unsigned kv_hash(int rank, const char *key)
{
    unsigned h = 2166136261u ^ (unsigned)rank;
    for (; *key; key++)
        h = (h ^ (unsigned char)*key) * 16777619u;
    return h % KV_BUCKETS;
}

static kv_t *kv_find(job_t *job, int rank, const char *key)
{
    for (kv_t *e = job->kv[kv_hash(rank, key)]; e; e = e->next)
        if (e->rank == rank && strcmp(e->key, key) == 0)
            return e;
    return NULL;
}

/* Forget what PE 'rank' published (its shmem_finalize). */
static void kv_drop_rank(job_t *job, int rank)
{
    for (int b = 0; b < KV_BUCKETS; b++) {
        kv_t **pp = &job->kv[b];
        while (*pp) {
            kv_t *e = *pp;
            if (e->rank != rank) {
                pp = &e->next;
                continue;
            }
            *pp = e->next;
            if (e->fd >= 0)
                close(e->fd);
            free(e);
        }
    }
}

void dsm_launcher_kv_free_all(job_t *job)
{
    for (int b = 0; b < KV_BUCKETS; b++) {
        kv_t *e = job->kv[b];
        while (e) {
            kv_t *n = e->next;
            if (e->fd >= 0)
                close(e->fd);
            free(e);
            e = n;
        }
        job->kv[b] = NULL;
    }
}

/* ------------------------------------------------------------------ protocol
 */

static int send_rec(int fd, uint16_t op, int status, const void *payload,
                    size_t len, int pass_fd)
{
    dsm_wire_hdr_t h = {.magic = DSM_WIRE_MAGIC,
                        .op = (uint16_t)(op | DSM_WIRE_REPLY),
                        .status = status,
                        .len = (uint32_t)len};
    struct iovec iov[2] = {{&h, sizeof(h)}, {(void *)payload, len}};
    ssize_t w =
        dsm_fd_send(fd, iov, len ? 2 : 1, pass_fd, MSG_NOSIGNAL | MSG_DONTWAIT);
    /* A client has one request outstanding, so its receive queue never
     * fills; EAGAIN or a short send means a broken peer. */
    return w == (ssize_t)(sizeof(h) + len) ? 0 : -1;
}

static void reply(job_t *job, int rank, uint16_t op, int status,
                  const void *payload, size_t len, int pass_fd)
{
    pe_t *pe = &job->pes[rank];
    if (pe->conn < 0)
        return;
    if (send_rec(pe->conn, op, status, payload, len, pass_fd) < 0)
        dsm_launcher_pe_close(job, rank);
}

static void answer_get(job_t *job, int rank, const kv_t *e)
{
    pe_t *pe = &job->pes[rank];
    uint16_t op = pe->wait_op;
    pe->wait = WAIT_NONE;
    if (!e)
        reply(job, rank, op, DSM_ERR_NOT_FOUND, NULL, 0, -1);
    else if (op == DSM_WIRE_GET_FD)
        reply(job, rank, op, e->fd >= 0 ? DSM_OK : DSM_ERR_INVAL, NULL, 0,
              e->fd);
    else
        reply(job, rank, op, DSM_OK, e->val, e->len, -1);
}

/* Collectives need every PE: once one is gone, waiting ones fail. */
static void coll_check(job_t *job)
{
    int n = job->opt.npes;
    if (job->ncoll == 0)
        return;
    if (job->ncoll < n && !job->lost_pe)
        return;
    int st = job->ncoll == n ? DSM_OK : DSM_ERR_PEER;
    job->ncoll = 0;
    for (int r = 0; r < n; r++)
        if (job->pes[r].wait == WAIT_COLL) {
            job->pes[r].wait = WAIT_NONE;
            reply(job, r, job->pes[r].wait_op, st, NULL, 0, -1);
        }
}

/* PE 'rank' can no longer take part (connection closed or process gone):
 * collectives in progress fail, gets waiting for its keys find nothing. */
void dsm_launcher_pe_gone(job_t *job, int rank)
{
    job->lost_pe = true;
    coll_check(job);
    for (int r = 0; r < job->opt.npes; r++) {
        pe_t *o = &job->pes[r];
        if ((o->wait == WAIT_GET || o->wait == WAIT_GET_FD) &&
            o->wait_rank == rank)
            answer_get(job, r, NULL);
    }
}

void dsm_launcher_pe_close(job_t *job, int rank)
{
    pe_t *pe = &job->pes[rank];
    if (pe->conn < 0)
        return;
    close(pe->conn);
    pe->conn = -1;
    if (pe->wait == WAIT_COLL)
        job->ncoll--;
    pe->wait = WAIT_NONE;
    dsm_launcher_pe_gone(job, rank);
}

static void handle_abort(job_t *job, int rank, int status, const char *msg,
                         size_t len)
{
    pe_t *pe = &job->pes[rank];
    if (!job->ending && len) {
        /* One write so that the message is one block on stderr. */
        char *b = malloc(len + 2);
        if (b) {
            memcpy(b, msg, len);
            size_t n = len;
            if (b[n - 1] != '\n')
                b[n++] = '\n';
            dsm_launcher_write_full(STDERR_FILENO, b, n);
            free(b);
        }
    }
    pe->aborted = true;
    dsm_launcher_end_job(job, status & 0xff, SIGTERM, FAIL_KILL_NS, rank);
}

static int hello_ack(job_t *job, int fd, int rank)
{
    dsm_wire_info_t info = {.rank = rank,
                            .size = job->opt.npes,
                            .node_rank = rank,
                            .node_size = job->opt.npes,
                            .node_id = 0,
                            .num_nodes = 1};
    return send_rec(fd, DSM_WIRE_HELLO, DSM_OK, &info, sizeof(info),
                    job->watch_rd);
}

/* A record from PE 'rank'. Returns -1 when the peer breaks the protocol. */
static int handle_request(job_t *job, int rank, const dsm_wire_hdr_t *h,
                          const char *key, const void *payload, int rfd)
{
    pe_t *pe = &job->pes[rank];
    if (rfd >= 0 && h->op != DSM_WIRE_PUT_FD) {
        close(rfd); /* a descriptor nobody asked for */
        rfd = -1;
    }
    switch (h->op) {
    case DSM_WIRE_PUT:
    case DSM_WIRE_PUT_FD: {
        if (h->op == DSM_WIRE_PUT_FD && rfd < 0) {
            reply(job, rank, h->op, DSM_ERR_INVAL, NULL, 0, -1);
            return 0;
        }
        kv_t *e = kv_find(job, rank, key);
        if (!e || e->len < h->len) {
            kv_t *ne = malloc(sizeof(*ne) + h->len);
            if (!ne) {
                if (rfd >= 0)
                    close(rfd);
                reply(job, rank, h->op, DSM_ERR_NOMEM, NULL, 0, -1);
                return 0;
            }
            if (e) {
                /* unlink the old, smaller entry */
                kv_t **pp = &job->kv[kv_hash(rank, key)];
                while (*pp != e)
                    pp = &(*pp)->next;
                *pp = e->next;
                if (e->fd >= 0)
                    close(e->fd);
                free(e);
            }
            e = ne;
            e->rank = rank;
            e->fd = -1;
            snprintf(e->key, sizeof(e->key), "%s", key);
            unsigned b = kv_hash(rank, key);
            e->next = job->kv[b];
            job->kv[b] = e;
        } else if (e->fd >= 0) {
            close(e->fd);
            e->fd = -1;
        }
        e->len = h->len;
        memcpy(e->val, payload, h->len);
        e->fd = rfd; /* the launcher's duplicate, kept until the end */
        reply(job, rank, h->op, DSM_OK, NULL, 0, -1);
        for (int r = 0; r < job->opt.npes; r++) {
            pe_t *o = &job->pes[r];
            if ((o->wait == WAIT_GET || o->wait == WAIT_GET_FD) &&
                o->wait_rank == rank && strcmp(o->wait_key, key) == 0)
                answer_get(job, r, e);
        }
        return 0;
    }
    case DSM_WIRE_GET:
    case DSM_WIRE_GET_FD: {
        if (h->rank < 0 || h->rank >= job->opt.npes) {
            reply(job, rank, h->op, DSM_ERR_INVAL, NULL, 0, -1);
            return 0;
        }
        pe->wait = h->op == DSM_WIRE_GET ? WAIT_GET : WAIT_GET_FD;
        pe->wait_op = h->op;
        pe->wait_rank = h->rank;
        snprintf(pe->wait_key, sizeof(pe->wait_key), "%s", key);
        kv_t *e = kv_find(job, h->rank, key);
        pe_t *t = &job->pes[h->rank];
        /* Not published yet: wait, unless its owner can no longer publish
         * (a finalized PE still can: its next shmem_init). */
        if (e || t->pid == 0 || (t->hello && t->conn < 0))
            answer_get(job, rank, e);
        return 0;
    }
    case DSM_WIRE_FENCE:
    case DSM_WIRE_BARRIER:
        pe->wait = WAIT_COLL;
        pe->wait_op = h->op;
        job->ncoll++;
        coll_check(job);
        return 0;
    case DSM_WIRE_ABORT:
        dsm_launcher_trace(job, "PE %d aborts the job (status %d)", rank,
                           (int)h->status);
        reply(job, rank, h->op, DSM_OK, NULL, 0, -1);
        handle_abort(job, rank, h->status, payload, h->len);
        return 0;
    case DSM_WIRE_FINI:
        dsm_launcher_trace(job, "PE %d finalizes", rank);
        pe->finalized = true;
        /* What it published is no longer valid: a peer's next
         * shmem_init must wait for the values of this PE's. */
        kv_drop_rank(job, rank);
        reply(job, rank, h->op, DSM_OK, NULL, 0, -1);
        return 0;
    case DSM_WIRE_HELLO:
        /* Re-initialization after the last shmem_finalize (OpenSHMEM
         * 1.5): HELLO again on the connection kept open. */
        if (!pe->finalized)
            return -1;
        pe->finalized = false;
        return hello_ack(job, pe->conn, rank) < 0 ? -1 : 0;
    default:
        return -1;
    }
}

/* Receive one record. Returns 1 with a record, 0 at EOF or nothing
 * (EAGAIN: *again set), -1 on a protocol error. */
static int recv_rec(int fd, dsm_wire_hdr_t *h, char *key, char *payload,
                    int *rfd, bool *again)
{
    char buf[DSM_WIRE_MSG_MAX];
    struct iovec iov = {buf, sizeof(buf)};
    int mflags;
    ssize_t r = dsm_fd_recv(fd, &iov, 1, rfd, MSG_DONTWAIT, &mflags);

    *again = false;
    if (r < 0 && errno == EAGAIN) {
        *again = true;
        return 0;
    }
    if (r <= 0)
        return 0;
    if ((mflags & (MSG_TRUNC | MSG_CTRUNC)) || (size_t)r < sizeof(*h))
        goto bad;
    memcpy(h, buf, sizeof(*h));
    if (h->magic != DSM_WIRE_MAGIC || h->keylen > DSM_BOOT_KEY_MAX ||
        h->len > DSM_BOOT_VAL_MAX ||
        (size_t)r != sizeof(*h) + h->keylen + h->len)
        goto bad;
    memcpy(key, buf + sizeof(*h), h->keylen);
    key[h->keylen] = '\0';
    if (memchr(key, '\0', h->keylen))
        goto bad;
    memcpy(payload, buf + sizeof(*h) + h->keylen, h->len);
    payload[h->len] = '\0';
    return 1;
bad:
    if (*rfd >= 0)
        close(*rfd);
    *rfd = -1;
    return -1;
}

/* Process every record queued on PE 'rank''s connection. */
void dsm_launcher_pe_read(job_t *job, int rank)
{
    static char key[DSM_BOOT_KEY_MAX + 1], payload[DSM_BOOT_VAL_MAX + 1];
    pe_t *pe = &job->pes[rank];
    while (pe->conn >= 0) {
        dsm_wire_hdr_t h;
        int rfd;
        bool again;
        int r = recv_rec(pe->conn, &h, key, payload, &rfd, &again);
        if (r == 0 && again)
            return;
        if (r < 0 ||
            (r == 1 && handle_request(job, rank, &h, key, payload, rfd) < 0)) {
            fprintf(stderr, PROG ": PE %d broke the bootstrap protocol\n",
                    rank);
            dsm_launcher_pe_close(job, rank);
            dsm_launcher_end_job(job, 1, SIGTERM, FAIL_KILL_NS, -1);
            return;
        }
        if (r == 0)
            dsm_launcher_pe_close(job, rank);
    }
}

/* A connection that has not said hello: expect HELLO and move it to its PE. */
void dsm_launcher_anon_read(job_t *job, int idx)
{
    int fd = job->anon[idx];
    dsm_wire_hdr_t h;
    char key[DSM_BOOT_KEY_MAX + 1], payload[DSM_BOOT_VAL_MAX + 1];
    int rfd;
    bool again;
    int r = recv_rec(fd, &h, key, payload, &rfd, &again);
    if (r == 0 && again)
        return;
    if (rfd >= 0)
        close(rfd);
    job->anon[idx] = job->anon[--job->nanon];
    if (r <= 0 || h.op != DSM_WIRE_HELLO) {
        close(fd);
        return;
    }
    uint32_t ver = 0;
    if (h.len == sizeof(ver))
        memcpy(&ver, payload, sizeof(ver));
    int rank = h.rank;
    if (ver != DSM_WIRE_VERSION) {
        fprintf(stderr,
                PROG ": PE %d speaks bootstrap protocol version %u, this "
                     "launcher %u (library and launcher do not match)\n",
                rank, ver, DSM_WIRE_VERSION);
        send_rec(fd, DSM_WIRE_HELLO, DSM_ERR_UNSUPPORTED, NULL, 0, -1);
        close(fd);
        dsm_launcher_end_job(job, 1, SIGTERM, FAIL_KILL_NS, -1);
        return;
    }
    if (rank < 0 || rank >= job->opt.npes || job->pes[rank].hello) {
        send_rec(fd, DSM_WIRE_HELLO, DSM_ERR_INVAL, NULL, 0, -1);
        close(fd);
        return;
    }
    if (hello_ack(job, fd, rank) < 0) {
        close(fd);
        return;
    }
    job->pes[rank].conn = fd;
    job->pes[rank].hello = true;
    dsm_launcher_trace(job, "PE %d connected (shmem_init)", rank);
    if (++job->nconnected == job->opt.npes)
        dsm_launcher_server_close(job);
}

void dsm_launcher_accept(job_t *job)
{
    for (;;) {
        int fd =
            accept4(job->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0)
            return;
        if (job->nanon >= job->opt.npes) {
            /* More strangers than PEs: not ours. */
            close(fd);
            continue;
        }
        job->anon[job->nanon++] = fd;
    }
}
