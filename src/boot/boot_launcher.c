/*
 * Bootstrap client for shmem_launcher: one SOCK_SEQPACKET connection to the
 * launcher's socket, synchronous request/reply records (src/boot/wire.h).
 * The runtime calls these only at init, finalize and on fatal errors, so a
 * mutex that serialises whole exchanges is all the threading needed.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "boot/boot.h"
#include "common/common.h"
#include "common/fdpass.h"
#include "boot/wire.h"

/* How long abort() waits for the launcher's acknowledgement. */
#define ABORT_ACK_MS 2000

static int conn_fd = -1;
/* Set by launcher_fini: conn_fd is kept only for a later shmem_init. */
static int conn_finalized;
static int watch_rd = -1; /* EOF when the launcher is gone */
static pthread_mutex_t conn_lock = PTHREAD_MUTEX_INITIALIZER;

static int launcher_detect(void)
{
    return getenv(DSM_WIRE_ENV_SOCK) && getenv(DSM_WIRE_ENV_RANK) &&
           getenv(DSM_WIRE_ENV_SIZE);
}

static int parse_int_env(const char *name, int *out)
{
    const char *s = getenv(name);
    char *end;
    if (!s || !*s)
        return -1;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < 0 || v > 1 << 30)
        return -1;
    *out = (int)v;
    return 0;
}

static dsm_status_t send_req(uint16_t op, int rank, int status,
                             const char *key, const void *val, size_t len,
                             int pass_fd)
{
    size_t keylen = key ? strlen(key) : 0;
    dsm_wire_hdr_t h = {.magic = DSM_WIRE_MAGIC,
                        .op = op,
                        .keylen = (uint16_t)keylen,
                        .rank = rank,
                        .status = status,
                        .len = (uint32_t)len};
    struct iovec iov[3] = {
        {&h, sizeof(h)}, {(void *)key, keylen}, {(void *)val, len}};
    ssize_t w = dsm_fd_send(conn_fd, iov, 3, pass_fd, MSG_NOSIGNAL);

    if (w != (ssize_t)(sizeof(h) + keylen + len)) {
        dsm_log_error("launcher bootstrap: lost the launcher (send: %s)",
                      w < 0 ? strerror(errno) : "short write");
        return DSM_ERR_PEER;
    }
    return DSM_OK;
}

/* One reply record. timeout_ms < 0 waits for ever (a get waits until the
 * key is published). The payload is copied into val (capacity *len). */
static dsm_status_t recv_reply(uint16_t op, int timeout_ms, void *val,
                               size_t *len, int *rfd)
{
    char buf[DSM_WIRE_MSG_MAX];
    struct iovec iov = {buf, sizeof(buf)};
    dsm_wire_hdr_t h;
    ssize_t r;
    int got_fd = -1, mflags;

    if (rfd)
        *rfd = -1;
    if (timeout_ms >= 0) {
        struct pollfd p = {.fd = conn_fd, .events = POLLIN};
        int pr;
        do
            pr = poll(&p, 1, timeout_ms);
        while (pr < 0 && errno == EINTR);
        if (pr <= 0)
            return DSM_ERR_TIMEOUT;
    }
    r = dsm_fd_recv(conn_fd, &iov, 1, &got_fd, 0, &mflags);
    if (r <= 0) {
        dsm_log_error("launcher bootstrap: lost the launcher (%s)",
                      r < 0 ? strerror(errno) : "connection closed");
        return DSM_ERR_PEER;
    }
    if ((size_t)r < sizeof(h) || (mflags & (MSG_TRUNC | MSG_CTRUNC)))
        goto bad;
    memcpy(&h, buf, sizeof(h));
    if (h.magic != DSM_WIRE_MAGIC || h.op != (op | DSM_WIRE_REPLY) ||
        h.len > DSM_BOOT_VAL_MAX || (size_t)r != sizeof(h) + h.keylen + h.len)
        goto bad;
    if (h.status != DSM_OK) {
        if (got_fd >= 0)
            close(got_fd);
        return (dsm_status_t)h.status;
    }
    if (len) {
        if (h.len > *len) {
            if (got_fd >= 0)
                close(got_fd);
            *len = h.len;
            return DSM_ERR_OVERFLOW;
        }
        memcpy(val, buf + sizeof(h) + h.keylen, h.len);
        *len = h.len;
    }
    if (rfd)
        *rfd = got_fd;
    else if (got_fd >= 0)
        close(got_fd);
    return DSM_OK;
bad:
    if (got_fd >= 0)
        close(got_fd);
    dsm_log_error("launcher bootstrap: malformed reply from the launcher");
    return DSM_ERR_IO;
}

static dsm_status_t xfer(uint16_t op, int rank, const char *key,
                         const void *val, size_t len, int pass_fd, void *out,
                         size_t *outlen, int *rfd)
{
    dsm_status_t st;
    if (conn_fd < 0 || conn_finalized)
        return DSM_ERR_INVAL;
    pthread_mutex_lock(&conn_lock);
    st = send_req(op, rank, 0, key, val, len, pass_fd);
    if (st == DSM_OK)
        st = recv_reply(op, -1, out, outlen, rfd);
    pthread_mutex_unlock(&conn_lock);
    return st;
}

static dsm_status_t check_key(const char *key)
{
    if (!key || !*key || strlen(key) > DSM_BOOT_KEY_MAX) {
        dsm_log_error("launcher bootstrap: invalid key (1..%d characters)",
                      DSM_BOOT_KEY_MAX);
        return DSM_ERR_INVAL;
    }
    return DSM_OK;
}

static dsm_status_t launcher_init(dsm_boot_info_t *info)
{
    const char *path = getenv(DSM_WIRE_ENV_SOCK);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    dsm_wire_info_t wi;
    size_t wlen = sizeof(wi);
    int rank, size, wfd = -1;
    uint32_t ver = DSM_WIRE_VERSION;
    dsm_status_t st;

    if (conn_fd >= 0 && !conn_finalized)
        return DSM_ERR_INVAL;
    if (!path || parse_int_env(DSM_WIRE_ENV_RANK, &rank) < 0 ||
        parse_int_env(DSM_WIRE_ENV_SIZE, &size) < 0 || rank >= size) {
        dsm_log_error("launcher bootstrap: %s, %s and %s must be set by "
                      "shmem_launcher (start the program with oshrun)",
                      DSM_WIRE_ENV_SOCK, DSM_WIRE_ENV_RANK, DSM_WIRE_ENV_SIZE);
        return DSM_ERR_INVAL;
    }
    if (strlen(path) >= sizeof(sa.sun_path)) {
        dsm_log_error("launcher bootstrap: socket path too long: %s", path);
        return DSM_ERR_INVAL;
    }
    memcpy(sa.sun_path, path, strlen(path) + 1);
    if (conn_fd >= 0) {
        /* Re-initialization after the last shmem_finalize: the launcher's
         * socket is gone (it listens until every PE has connected), so
         * the connection kept by launcher_fini says HELLO again. */
        conn_finalized = 0;
        goto hello;
    }
    /* Close-on-exec: a program the PE starts must not hold the launcher's
     * connection (nor keep watch_fd from reporting EOF). */
    conn_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (conn_fd < 0) {
        dsm_log_error("launcher bootstrap: socket: %s", strerror(errno));
        return DSM_ERR_IO;
    }
    if (connect(conn_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        dsm_log_error("launcher bootstrap: cannot connect to %s: %s", path,
                      strerror(errno));
        st = DSM_ERR_IO;
        goto fail;
    }
hello:
    st = send_req(DSM_WIRE_HELLO, rank, 0, NULL, &ver, sizeof(ver), -1);
    if (st != DSM_OK)
        goto fail;
    st = recv_reply(DSM_WIRE_HELLO, -1, &wi, &wlen, &wfd);
    if (st != DSM_OK || wlen != sizeof(wi)) {
        dsm_log_error("launcher bootstrap: the launcher refused PE %d: %s",
                      rank, dsm_status_str(st == DSM_OK ? DSM_ERR_IO : st));
        if (wfd >= 0)
            close(wfd);
        if (st == DSM_OK)
            st = DSM_ERR_IO;
        goto fail;
    }
    watch_rd = wfd;
    info->rank = wi.rank;
    info->size = wi.size;
    info->node_rank = wi.node_rank;
    info->node_size = wi.node_size;
    info->node_id = wi.node_id;
    info->num_nodes = wi.num_nodes;
    return DSM_OK;
fail:
    close(conn_fd);
    conn_fd = -1;
    return st;
}

static void launcher_fini(void)
{
    if (conn_fd < 0 || conn_finalized)
        return;
    /* Tell the launcher first, so our exit counts as an orderly one. The
     * connection stays open (close-on-exec, closed by the exit) for a
     * later shmem_init, which says HELLO on it again. */
    if (xfer(DSM_WIRE_FINI, 0, NULL, NULL, 0, -1, NULL, NULL, NULL) ==
        DSM_OK) {
        conn_finalized = 1;
    } else {
        close(conn_fd);
        conn_fd = -1;
    }
    if (watch_rd >= 0) {
        close(watch_rd);
        watch_rd = -1;
    }
}

static dsm_status_t launcher_put(const char *key, const void *val, size_t len)
{
    dsm_status_t st = check_key(key);
    if (st != DSM_OK)
        return st;
    if (len > DSM_BOOT_VAL_MAX)
        return DSM_ERR_OVERFLOW;
    return xfer(DSM_WIRE_PUT, 0, key, val, len, -1, NULL, NULL, NULL);
}

static dsm_status_t launcher_fence(void)
{
    return xfer(DSM_WIRE_FENCE, 0, NULL, NULL, 0, -1, NULL, NULL, NULL);
}

static dsm_status_t launcher_get(int rank, const char *key, void *val,
                                 size_t *len)
{
    dsm_status_t st = check_key(key);
    if (st != DSM_OK)
        return st;
    return xfer(DSM_WIRE_GET, rank, key, NULL, 0, -1, val, len, NULL);
}

static dsm_status_t launcher_barrier(void)
{
    return xfer(DSM_WIRE_BARRIER, 0, NULL, NULL, 0, -1, NULL, NULL, NULL);
}

static dsm_status_t launcher_put_fd(const char *key, int fd)
{
    dsm_status_t st = check_key(key);
    if (st != DSM_OK)
        return st;
    if (fd < 0)
        return DSM_ERR_INVAL;
    /* The kernel duplicates fd into the launcher, which keeps it. */
    return xfer(DSM_WIRE_PUT_FD, 0, key, NULL, 0, fd, NULL, NULL, NULL);
}

static dsm_status_t launcher_get_fd(int rank, const char *key, int *fd)
{
    dsm_status_t st = check_key(key);
    int got = -1;
    if (st != DSM_OK)
        return st;
    st = xfer(DSM_WIRE_GET_FD, rank, key, NULL, 0, -1, NULL, NULL, &got);
    if (st == DSM_OK && got < 0)
        st = DSM_ERR_IO;
    if (st == DSM_OK)
        *fd = got;
    return st;
}

static DSM_NORETURN void launcher_abort(int status, const char *msg)
{
    bool acked = false;
    size_t len = msg ? strnlen(msg, DSM_BOOT_VAL_MAX) : 0;

    /* Another thread may be blocked in a get for ever while holding the
     * lock: then send without waiting. SEQPACKET keeps the record whole,
     * and the launcher reads it before it looks at how we exited. */
    int locked = conn_fd >= 0 && pthread_mutex_trylock(&conn_lock) == 0;
    if (conn_fd >= 0 &&
        send_req(DSM_WIRE_ABORT, 0, status, NULL, msg, len, -1) == DSM_OK) {
        acked = !locked || recv_reply(DSM_WIRE_ABORT, ABORT_ACK_MS, NULL,
                                      NULL, NULL) == DSM_OK;
    }
    if (!acked && len) {
        /* The launcher is gone: nobody else will print it. */
        struct iovec iov[2] = {{(void *)msg, len}, {(void *)"\n", 1}};
        ssize_t w = writev(STDERR_FILENO, iov, msg[len - 1] == '\n' ? 1 : 2);
        (void)w;
    }
    _exit(status);
}

static int launcher_watch_fd(void)
{
    return watch_rd >= 0 ? watch_rd : conn_finalized ? -1 : conn_fd;
}

const dsm_boot_ops_t dsm_boot_launcher_ops = {
    .size = sizeof(dsm_boot_ops_t),
    .name = "launcher",
    .detect = launcher_detect,
    .init = launcher_init,
    .fini = launcher_fini,
    .put = launcher_put,
    .fence = launcher_fence,
    .get = launcher_get,
    .barrier = launcher_barrier,
    .put_fd = launcher_put_fd,
    .get_fd = launcher_get_fd,
    .abort = launcher_abort,
    .watch_fd = launcher_watch_fd,
};
