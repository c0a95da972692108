/*
 * The PMIx bootstrap's descriptor passing among the PEs of a node
 * (boot_pmix.c has the overview): each PE that puts a descriptor serves
 * it from a unix socket in the abstract namespace and a thread; get_fd
 * asks the owner's server, whose address PMIx carries.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include <pmix.h>

#include "boot/boot.h"
#include "common/common.h"
#include "common/fdpass.h"

#include "boot/boot_pmix_int.h"

/* Called with px.lock held. */
static fd_ent_t *fd_lookup(const char *key)
{
    for (fd_ent_t *e = px.fds; e; e = e->next)
        if (strcmp(e->key, key) == 0)
            return e;
    return NULL;
}

static bool token_ok(const uint8_t *t)
{
    uint8_t d = 0;
    for (int i = 0; i < TOKEN_LEN; i++)
        d |= (uint8_t)(t[i] ^ px.addr.token[i]);
    return d == 0;
}

static int send_reply(int c, dsm_status_t st, int fd)
{
    fd_rep_t rep = {.magic = FD_MAGIC, .status = (int32_t)st};
    struct iovec iov = {&rep, sizeof(rep)};
    return dsm_fd_send(c, &iov, 1, fd, MSG_NOSIGNAL) == (ssize_t)sizeof(rep)
               ? 0
               : -1;
}

/* One request on an accepted connection. Anything malformed or from
 * another user gets no descriptor. */
static void serve_one(int c)
{
    struct ucred cred;
    socklen_t cl = sizeof(cred);
    struct pollfd p = {.fd = c, .events = POLLIN};
    fd_req_t req;
    ssize_t r;
    int pr, fd = -1;
    dsm_status_t st;

    if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0 ||
        cred.uid != geteuid())
        return;
    do
        pr = poll(&p, 1, FD_IO_MS);
    while (pr < 0 && errno == EINTR);
    if (pr <= 0)
        return;
    do
        r = recv(c, &req, sizeof(req), 0);
    while (r < 0 && errno == EINTR);
    if (r != (ssize_t)sizeof(req) || req.magic != FD_MAGIC ||
        !token_ok(req.token)) {
        send_reply(c, DSM_ERR_INVAL, -1);
        return;
    }
    req.key[DSM_BOOT_KEY_MAX] = '\0';
    pthread_mutex_lock(&px.lock);
    fd_ent_t *e = fd_lookup(req.key);
    if (e)
        fd = e->fd; /* sendmsg duplicates it into the peer */
    st = e ? DSM_OK : DSM_ERR_NOT_FOUND;
    if (send_reply(c, st, fd) < 0)
        dsm_debug("pmix bootstrap: fd server: reply for '%s' not sent: %s",
                  req.key, strerror(errno));
    pthread_mutex_unlock(&px.lock);
}

static void *fdsrv_main(void *arg)
{
    (void)arg;
    for (;;) {
        struct pollfd p[2] = {{.fd = px.lfd, .events = POLLIN},
                              {.fd = px.stop_rd, .events = POLLIN}};
        int pr = poll(p, 2, -1);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr < 0 || p[1].revents)
            break;
        if (!(p[0].revents & POLLIN))
            continue;
        int c = accept4(px.lfd, NULL, NULL, SOCK_CLOEXEC);
        if (c < 0)
            continue;
        serve_one(c);
        close(c);
    }
    return NULL;
}

/* The first put_fd: socket, token, thread, and the address in PMIx. */
static dsm_status_t fdsrv_start(void)
{
    struct sockaddr_un sa;
    socklen_t sl = sizeof(sa_family_t);
    int sp[2];
    sigset_t all, old;
    int e;

    px.addr.magic = FD_MAGIC;
    px.addr.pid = (uint32_t)getpid();
    if (getrandom(px.addr.token, TOKEN_LEN, 0) != TOKEN_LEN) {
        dsm_log_error("pmix bootstrap: PE %d: getrandom: %s", (int)px.me.rank,
                      strerror(errno));
        return DSM_ERR_IO;
    }
    px.lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    /* An address of just the family: the kernel binds a unique abstract
     * name ("\0" + 5 hex digits) that dies with the socket. */
    if (px.lfd < 0 || bind(px.lfd, (struct sockaddr *)&sa, sl) < 0 ||
        listen(px.lfd, 128) < 0) {
        dsm_log_error("pmix bootstrap: PE %d: cannot make the descriptor "
                      "server's socket: %s",
                      (int)px.me.rank, strerror(errno));
        goto fail;
    }
    sl = sizeof(sa);
    if (getsockname(px.lfd, (struct sockaddr *)&sa, &sl) < 0 ||
        sl <= offsetof(struct sockaddr_un, sun_path) || sa.sun_path[0]) {
        dsm_log_error("pmix bootstrap: PE %d: descriptor server's socket "
                      "has no abstract name: %s",
                      (int)px.me.rank, strerror(errno));
        goto fail;
    }
    px.addr.namelen = (uint32_t)(sl - offsetof(struct sockaddr_un, sun_path));
    memcpy(px.addr.name, sa.sun_path, px.addr.namelen);
    if (pipe2(sp, O_CLOEXEC) < 0) {
        dsm_log_error("pmix bootstrap: PE %d: pipe: %s", (int)px.me.rank,
                      strerror(errno));
        goto fail;
    }
    px.stop_rd = sp[0];
    px.stop_wr = sp[1];
    /* The thread takes no signals: they belong to the application. */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    e = pthread_create(&px.thr, NULL, fdsrv_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (e) {
        dsm_log_error("pmix bootstrap: PE %d: cannot start the descriptor "
                      "server thread: %s",
                      (int)px.me.rank, strerror(e));
        goto fail;
    }
    px.thr_up = true;
    if (dsm_pmix_put_scoped(PMIX_LOCAL, FDSRV_KEY, &px.addr, sizeof(px.addr)) !=
        DSM_OK) {
        dsm_pmix_fdsrv_stop();
        return DSM_ERR_IO;
    }
    return DSM_OK;
fail:
    dsm_pmix_fdsrv_stop();
    return DSM_ERR_IO;
}

void dsm_pmix_fdsrv_stop(void)
{
    if (px.stop_wr >= 0) {
        close(px.stop_wr);
        px.stop_wr = -1;
    }
    if (px.thr_up) {
        pthread_join(px.thr, NULL);
        px.thr_up = false;
    }
    if (px.stop_rd >= 0) {
        close(px.stop_rd);
        px.stop_rd = -1;
    }
    if (px.lfd >= 0) {
        close(px.lfd);
        px.lfd = -1;
    }
    pthread_mutex_lock(&px.lock);
    while (px.fds) {
        fd_ent_t *n = px.fds->next;
        close(px.fds->fd);
        free(px.fds);
        px.fds = n;
    }
    pthread_mutex_unlock(&px.lock);
}

dsm_status_t dsm_pmix_put_fd(const char *key, int fd)
{
    dsm_status_t st = dsm_pmix_check_key("put_fd", key);
    fd_ent_t *e;
    int d;

    if (st != DSM_OK)
        return st;
    if (!px.up)
        return DSM_ERR_INVAL;
    if (!px.thr_up && (st = fdsrv_start()) != DSM_OK)
        return st;
    d = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (d < 0) {
        dsm_log_error("pmix bootstrap: PE %d: put_fd('%s', %d): %s",
                      (int)px.me.rank, key, fd, strerror(errno));
        return DSM_ERR_INVAL;
    }
    pthread_mutex_lock(&px.lock);
    e = fd_lookup(key);
    if (e) {
        close(e->fd);
    } else if ((e = calloc(1, sizeof(*e)))) {
        snprintf(e->key, sizeof(e->key), "%s", key);
        e->next = px.fds;
        px.fds = e;
    }
    if (e)
        e->fd = d;
    pthread_mutex_unlock(&px.lock);
    if (!e) {
        close(d);
        return DSM_ERR_NOMEM;
    }
    return DSM_OK;
}

dsm_status_t dsm_pmix_get_fd(int rank, const char *key, int *fd)
{
    fdsrv_addr_t a;
    size_t alen = sizeof(a);
    struct sockaddr_un sa;
    fd_req_t req;
    fd_rep_t rep;
    dsm_status_t st = dsm_pmix_check_key("get_fd", key);
    int c = -1, got = -1;

    if (st != DSM_OK)
        return st;
    if (rank < 0 || rank >= px.size) {
        dsm_log_error("pmix bootstrap: PE %d: get_fd('%s') from invalid PE "
                      "%d (the job has %d PEs)",
                      (int)px.me.rank, key, rank, px.size);
        return DSM_ERR_INVAL;
    }
    if (px.node_of[rank] != px.node_of[px.me.rank]) {
        dsm_log_error("pmix bootstrap: PE %d: get_fd('%s') from PE %d, which "
                      "runs on another node (%d, this is %d)",
                      (int)px.me.rank, key, rank, px.node_of[rank],
                      px.node_of[px.me.rank]);
        return DSM_ERR_INVAL;
    }
    if (rank == (int)px.me.rank) {
        pthread_mutex_lock(&px.lock);
        fd_ent_t *e = fd_lookup(key);
        got = e ? fcntl(e->fd, F_DUPFD_CLOEXEC, 0) : -1;
        pthread_mutex_unlock(&px.lock);
        if (!e)
            return DSM_ERR_NOT_FOUND;
        if (got < 0) {
            dsm_log_error("pmix bootstrap: PE %d: get_fd('%s'): dup: %s",
                          (int)px.me.rank, key, strerror(errno));
            return DSM_ERR_IO;
        }
        *fd = got;
        return DSM_OK;
    }
    st = dsm_pmix_get_raw(rank, FDSRV_KEY, &a, &alen, 0);
    if (st == DSM_ERR_NOT_FOUND)
        return st; /* that PE put no descriptor */
    if (st != DSM_OK)
        return st;
    if (alen != sizeof(a) || a.magic != FD_MAGIC || a.namelen < 2 ||
        a.namelen > sizeof(a.name) || a.name[0]) {
        dsm_log_error("pmix bootstrap: PE %d: PE %d published a malformed "
                      "descriptor server address (%zu bytes)",
                      (int)px.me.rank, rank, alen);
        return DSM_ERR_IO;
    }
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    memcpy(sa.sun_path, a.name, a.namelen);
    c = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (c < 0 || connect(c, (struct sockaddr *)&sa,
                         (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
                                     a.namelen)) < 0) {
        dsm_log_error("pmix bootstrap: PE %d: get_fd('%s'): cannot reach PE "
                      "%d's descriptor server (pid %u, @%.*s): %s",
                      (int)px.me.rank, key, rank, a.pid, (int)a.namelen - 1,
                      a.name + 1, strerror(errno));
        st = DSM_ERR_PEER;
        goto out;
    }
    /* The token is the key to every descriptor PE 'rank' serves: give it
     * only to that PE. An abstract name has no owner or permissions, and
     * once the owner's socket is gone any process may bind it; SO_PEERCRED
     * names whoever called listen() on the socket we reached. */
    struct ucred cred = {.pid = 0, .uid = (uid_t)-1, .gid = (gid_t)-1};
    socklen_t cl = sizeof(cred);
    if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0 ||
        cl != sizeof(cred) || cred.uid != geteuid() ||
        cred.pid != (pid_t)a.pid) {
        dsm_log_error("pmix bootstrap: PE %d: get_fd('%s'): refusing the "
                      "descriptor server at @%.*s: it is not PE %d's (pid "
                      "%ld uid %ld, expected pid %u uid %ld)",
                      (int)px.me.rank, key, (int)a.namelen - 1, a.name + 1,
                      rank, (long)cred.pid, (long)cred.uid, a.pid,
                      (long)geteuid());
        st = DSM_ERR_PEER;
        goto out;
    }
    memset(&req, 0, sizeof(req));
    req.magic = FD_MAGIC;
    memcpy(req.token, a.token, TOKEN_LEN);
    snprintf(req.key, sizeof(req.key), "%s", key);
    ssize_t w;
    do
        w = send(c, &req, sizeof(req), MSG_NOSIGNAL);
    while (w < 0 && errno == EINTR);
    if (w != (ssize_t)sizeof(req)) {
        dsm_log_error("pmix bootstrap: PE %d: get_fd('%s'): request to PE "
                      "%d failed: %s",
                      (int)px.me.rank, key, rank,
                      w < 0 ? strerror(errno) : "short write");
        st = DSM_ERR_PEER;
        goto out;
    }

    struct iovec iov = {&rep, sizeof(rep)};
    struct pollfd p = {.fd = c, .events = POLLIN};
    int pr, mflags = 0;
    ssize_t r = -1;
    do
        pr = poll(&p, 1, FD_IO_MS);
    while (pr < 0 && errno == EINTR);
    if (pr > 0)
        r = dsm_fd_recv(c, &iov, 1, &got, 0, &mflags);
    if (r != (ssize_t)sizeof(rep) || rep.magic != FD_MAGIC ||
        (mflags & (MSG_TRUNC | MSG_CTRUNC))) {
        dsm_log_error("pmix bootstrap: PE %d: get_fd('%s'): no valid reply "
                      "from PE %d's descriptor server: %s",
                      (int)px.me.rank, key, rank,
                      pr == 0 ? "timed out"
                      : r < 0 ? strerror(errno)
                              : "malformed or closed");
        st = DSM_ERR_PEER;
        goto out;
    }
    st = (dsm_status_t)rep.status;
    if (st == DSM_OK && got < 0) {
        dsm_log_error("pmix bootstrap: PE %d: get_fd('%s'): PE %d's reply "
                      "carried no descriptor",
                      (int)px.me.rank, key, rank);
        st = DSM_ERR_IO;
    }
    if (st == DSM_OK) {
        *fd = got;
        got = -1;
    }
out:
    if (got >= 0)
        close(got);
    if (c >= 0)
        close(c);
    return st;
}
