/*
 * Bootstrap through PMIx: jobs started by mpirun (Open MPI), prterun or
 * srun --mpi=pmix. Rank, size and the node layout come from the PMIx job
 * data; put/fence/get are PMIx_Put (+ commit), PMIx_Fence with data
 * collection and PMIx_Get; barrier is a fence without data; abort is
 * PMIx_Abort.
 *
 * PMIx cannot pass file descriptors, and the segments are memfds shared by
 * passing them (SCM_RIGHTS). So each PE that puts a descriptor serves its
 * descriptors itself: a listening SOCK_SEQPACKET unix socket, autobound in
 * the abstract namespace (a kernel-chosen unique name that exists only as
 * long as the socket: nothing in /tmp or /dev/shm, even after kill -9), and
 * a small thread that answers requests until fini. The socket's name and a
 * random 128-bit token are published to the PEs of the node through PMIx;
 * a request must carry the token and come from the same user
 * (SO_PEERCRED), because abstract sockets have no file permissions. The
 * client, in turn, sends the token only to a server whose SO_PEERCRED is
 * our user and the pid its owner published (a name freed by a dead PE may
 * be bound again by anyone).
 *
 * A PE whose PMIx server is gone (mpirun or slurmstepd killed) would wait
 * for ever in a shared-memory barrier: an event handler for
 * PMIX_ERR_LOST_CONNECTION ends it. watch_fd() gives -1: PMIx offers no
 * descriptor to watch, and the handler does that job.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
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

#include "boot/pmix_fd.h"

typedef struct fd_ent {
    struct fd_ent *next;
    int fd; /* our duplicate, kept until fini */
    char key[DSM_BOOT_KEY_MAX + 1];
} fd_ent_t;

static struct {
    bool up;
    pmix_proc_t me;
    int size;
    int *node_of;    /* dense node id of every rank */
    bool finalizing; /* lost-connection events are expected from here on */
    size_t evhdlr;
    bool evhdlr_set;

    /* descriptor server */
    pthread_mutex_t lock;
    fd_ent_t *fds;
    int lfd;              /* listening socket, -1 until the first put_fd */
    int stop_rd, stop_wr; /* fini closes stop_wr: the thread ends */
    pthread_t thr;
    bool thr_up;
    fdsrv_addr_t addr;
} px = {
    .lock = PTHREAD_MUTEX_INITIALIZER, .lfd = -1, .stop_rd = -1, .stop_wr = -1};

static int pmix_detect(void)
{
    return getenv("PMIX_RANK") != NULL;
}

static dsm_status_t check_key(const char *routine, const char *key)
{
    if (!key || !*key || strlen(key) > DSM_BOOT_KEY_MAX) {
        dsm_log_error("pmix bootstrap: %s: invalid key '%s' (1..%d "
                      "characters)",
                      routine, key ? key : "(null)", DSM_BOOT_KEY_MAX);
        return DSM_ERR_INVAL;
    }
    return DSM_OK;
}

static void load_proc(pmix_proc_t *p, pmix_rank_t rank)
{
    PMIX_LOAD_PROCID(p, px.me.nspace, rank);
}

/* A PMIx number of any integer type as a uint32. */
static int value_u32(const pmix_value_t *v, uint32_t *out)
{
    uint64_t x;
    switch (v->type) {
    case PMIX_UINT8:
        x = v->data.uint8;
        break;
    case PMIX_UINT16:
        x = v->data.uint16;
        break;
    case PMIX_UINT32:
        x = v->data.uint32;
        break;
    case PMIX_UINT64:
        x = v->data.uint64;
        break;
    case PMIX_SIZE:
        x = v->data.size;
        break;
    case PMIX_UINT:
        x = v->data.uint;
        break;
    case PMIX_INT:
        if (v->data.integer < 0)
            return -1;
        x = (uint64_t)v->data.integer;
        break;
    case PMIX_INT32:
        if (v->data.int32 < 0)
            return -1;
        x = (uint64_t)v->data.int32;
        break;
    case PMIX_INT16:
        if (v->data.int16 < 0)
            return -1;
        x = (uint64_t)v->data.int16;
        break;
    case PMIX_INT64:
        if (v->data.int64 < 0)
            return -1;
        x = (uint64_t)v->data.int64;
        break;
    default:
        return -1;
    }
    if (x > UINT32_MAX)
        return -1;
    *out = (uint32_t)x;
    return 0;
}

/* Job data: a number about proc (rank, or PMIX_RANK_WILDCARD). */
static pmix_status_t get_u32(pmix_rank_t rank, const char *key, uint32_t *out)
{
    pmix_proc_t p;
    pmix_value_t *v = NULL;
    pmix_status_t rc;
    load_proc(&p, rank);
    rc = PMIx_Get(&p, key, NULL, 0, &v);
    if (rc != PMIX_SUCCESS)
        return rc;
    if (value_u32(v, out) < 0)
        rc = PMIX_ERR_BAD_PARAM;
    PMIX_VALUE_RELEASE(v);
    return rc;
}

/* ------------------------------------------------------------ node layout */

typedef struct node_key {
    int rank;
    uint32_t id; /* PMIX_NODEID, when every rank has one */
    char *host;  /* else PMIX_HOSTNAME */
} node_key_t;

static int by_node(const void *a, const void *b)
{
    const node_key_t *x = a, *y = b;
    if (x->host || y->host) {
        int c = strcmp(x->host ? x->host : "", y->host ? y->host : "");
        if (c)
            return c;
    } else if (x->id != y->id) {
        return x->id < y->id ? -1 : 1;
    }
    return x->rank - y->rank;
}

static bool same_node(const node_key_t *x, const node_key_t *y)
{
    if (x->host || y->host)
        return strcmp(x->host ? x->host : "", y->host ? y->host : "") == 0;
    return x->id == y->id;
}

/* Dense node ids 0..num_nodes-1, in the order of the servers' node ids (or
 * host names), from PMIX_NODEID of every rank, else PMIX_HOSTNAME. */
static dsm_status_t node_layout(dsm_boot_info_t *info)
{
    const int n = px.size;
    node_key_t *k = calloc((size_t)n, sizeof(*k));
    bool by_host = false;
    dsm_status_t st = DSM_OK;
    pmix_status_t rc = PMIX_SUCCESS;
    int r, i;

    px.node_of = calloc((size_t)n, sizeof(int));
    if (!k || !px.node_of) {
        free(k);
        return DSM_ERR_NOMEM;
    }
    for (r = 0; r < n; r++) {
        k[r].rank = r;
        rc = get_u32((pmix_rank_t)r, PMIX_NODEID, &k[r].id);
        if (rc != PMIX_SUCCESS)
            break;
    }
    if (rc != PMIX_SUCCESS) {
        by_host = true;
        for (r = 0; r < n; r++) {
            pmix_proc_t p;
            pmix_value_t *v = NULL;
            load_proc(&p, (pmix_rank_t)r);
            rc = PMIx_Get(&p, PMIX_HOSTNAME, NULL, 0, &v);
            if (rc == PMIX_SUCCESS && v->type == PMIX_STRING && v->data.string)
                k[r].host = strdup(v->data.string);
            if (v)
                PMIX_VALUE_RELEASE(v);
            if (!k[r].host) {
                dsm_log_error("pmix bootstrap: PE %d: neither %s nor %s of "
                              "PE %d is known to the PMIx server (%s)",
                              px.me.rank, PMIX_NODEID, PMIX_HOSTNAME, r,
                              PMIx_Error_string(rc));
                st = DSM_ERR_NOT_FOUND;
                goto out;
            }
        }
    }
    qsort(k, (size_t)n, sizeof(*k), by_node);
    info->num_nodes = 0;
    info->node_size = 0;
    for (i = 0; i < n; i++) {
        if (i > 0 && !same_node(&k[i], &k[i - 1]))
            info->num_nodes++;
        px.node_of[k[i].rank] = info->num_nodes;
    }
    info->num_nodes++;
    info->node_id = px.node_of[px.me.rank];
    /* Node rank: index among the PEs of the node in rank order (k is sorted
     * by rank within a node). */
    for (i = 0; i < n; i++) {
        if (px.node_of[k[i].rank] != info->node_id)
            continue;
        if (k[i].rank == (int)px.me.rank)
            info->node_rank = info->node_size;
        info->node_size++;
    }
    dsm_debug("pmix bootstrap: node %d of %d (by %s), node rank %d of %d",
              info->node_id, info->num_nodes,
              by_host ? PMIX_HOSTNAME : PMIX_NODEID, info->node_rank,
              info->node_size);
out:
    for (r = 0; r < n; r++)
        free(k[r].host);
    free(k);
    return st;
}

/* ------------------------------------------------------------ lost server */

static void lost_server(size_t id, pmix_status_t status,
                        const pmix_proc_t *source, pmix_info_t info[],
                        size_t ninfo, pmix_info_t results[], size_t nresults,
                        pmix_event_notification_cbfunc_fn_t cbfunc,
                        void *cbdata)
{
    if (!__atomic_load_n(&px.finalizing, __ATOMIC_ACQUIRE)) {
        char msg[256];
        int n = snprintf(msg, sizeof(msg),
                         "dmashmem: PE %d: lost the PMIx server (%s): the "
                         "job's launcher is gone; ending\n",
                         (int)px.me.rank, PMIx_Error_string(status));
        if (n > 0) {
            ssize_t w =
                write(STDERR_FILENO, msg, DSM_MIN((size_t)n, sizeof(msg) - 1));
            (void)w;
        }
        _exit(1);
    }
    if (cbfunc)
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

/* ------------------------------------------------------------ init, fini */

static dsm_status_t pmix_init(dsm_boot_info_t *info)
{
    pmix_status_t rc;
    uint32_t size, lrank, lsize;

    if (px.up)
        return DSM_ERR_INVAL;
    rc = PMIx_Init(&px.me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        dsm_log_error("pmix bootstrap: PMIx_Init failed: %s (PMIX_RANK=%s; "
                      "start the program with mpirun or srun --mpi=pmix)",
                      PMIx_Error_string(rc),
                      getenv("PMIX_RANK") ? getenv("PMIX_RANK") : "unset");
        return DSM_ERR_IO;
    }
    px.up = true;
    px.finalizing = false;
    dsm_log_pe = (int)px.me.rank;
    rc = get_u32(PMIX_RANK_WILDCARD, PMIX_JOB_SIZE, &size);
    if (rc != PMIX_SUCCESS || size < 1 || size > (1u << 30)) {
        dsm_log_error("pmix bootstrap: PE %d: PMIx_Get(%s) failed: %s",
                      (int)px.me.rank, PMIX_JOB_SIZE,
                      rc != PMIX_SUCCESS ? PMIx_Error_string(rc)
                                         : "out of range");
        goto fail;
    }
    px.size = (int)size;
    info->rank = (int)px.me.rank;
    info->size = px.size;
    if (node_layout(info) != DSM_OK)
        goto fail;
    /* The server's own view of the node must agree with the layout. */
    if (get_u32(px.me.rank, PMIX_LOCAL_RANK, &lrank) == PMIX_SUCCESS &&
        get_u32(PMIX_RANK_WILDCARD, PMIX_LOCAL_SIZE, &lsize) == PMIX_SUCCESS &&
        (lsize != (uint32_t)info->node_size || lrank >= lsize)) {
        dsm_log_error("pmix bootstrap: PE %d: the PMIx server says local "
                      "rank %u of %u, but %d PEs share this node",
                      (int)px.me.rank, lrank, lsize, info->node_size);
        goto fail;
    }

    pmix_status_t codes[] = {PMIX_ERR_LOST_CONNECTION, PMIX_ERR_UNREACH};
    rc = PMIx_Register_event_handler(codes, DSM_ARRAY_SIZE(codes), NULL, 0,
                                     lost_server, NULL, NULL);
    if (rc < 0) {
        dsm_log_error("pmix bootstrap: PE %d: PMIx_Register_event_handler "
                      "failed: %s",
                      (int)px.me.rank, PMIx_Error_string(rc));
        goto fail;
    }
    px.evhdlr = (size_t)rc;
    px.evhdlr_set = true;
    return DSM_OK;

fail:
    free(px.node_of);
    px.node_of = NULL;
    px.finalizing = true;
    PMIx_Finalize(NULL, 0);
    px.up = false;
    return DSM_ERR_IO;
}

static void fdsrv_stop(void);

static void pmix_fini(void)
{
    if (!px.up)
        return;
    fdsrv_stop();
    __atomic_store_n(&px.finalizing, true, __ATOMIC_RELEASE);
    if (px.evhdlr_set) {
        PMIx_Deregister_event_handler(px.evhdlr, NULL, NULL);
        px.evhdlr_set = false;
    }
    PMIx_Finalize(NULL, 0);
    free(px.node_of);
    px.node_of = NULL;
    px.up = false;
}

/* ------------------------------------------------------------ key-value */

static void full_key(char *out, size_t cap, const char *key)
{
    snprintf(out, cap, KEY_PREFIX "%s", key);
}

static dsm_status_t put_scoped(pmix_scope_t scope, const char *key,
                               const void *val, size_t len)
{
    static char empty;
    pmix_value_t v;
    pmix_status_t rc;

    v.type = PMIX_BYTE_OBJECT;
    v.data.bo.bytes = len ? (char *)val : &empty;
    v.data.bo.size = len;
    rc = PMIx_Put(scope, key, &v); /* copies the value */
    if (rc == PMIX_SUCCESS)
        rc = PMIx_Commit();
    if (rc != PMIX_SUCCESS) {
        dsm_log_error("pmix bootstrap: PE %d: PMIx_Put(%s, %zu bytes) "
                      "failed: %s",
                      (int)px.me.rank, key, len, PMIx_Error_string(rc));
        return DSM_ERR_IO;
    }
    return DSM_OK;
}

static dsm_status_t pmix_put(const char *key, const void *val, size_t len)
{
    char k[DSM_BOOT_KEY_MAX + sizeof(KEY_PREFIX)];
    dsm_status_t st = check_key("put", key);
    if (st != DSM_OK)
        return st;
    if (len > DSM_BOOT_VAL_MAX)
        return DSM_ERR_OVERFLOW;
    full_key(k, sizeof(k), key);
    return put_scoped(PMIX_GLOBAL, k, val, len);
}

static dsm_status_t pmix_fence(void)
{
    pmix_info_t info;
    bool collect = true;
    pmix_status_t rc;

    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    rc = PMIx_Fence(NULL, 0, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS) {
        dsm_log_error("pmix bootstrap: PE %d: PMIx_Fence (collecting data) "
                      "failed: %s",
                      (int)px.me.rank, PMIx_Error_string(rc));
        return DSM_ERR_PEER;
    }
    return DSM_OK;
}

/* The raw bytes of rank's value for an already prefixed key. */
/* wait: a key not published yet is waited for (up to 10 s). */
static dsm_status_t get_raw(int rank, const char *k, void *val, size_t *len,
                            int wait)
{
    pmix_proc_t p;
    pmix_value_t *v = NULL;
    pmix_status_t rc;
    dsm_status_t st = DSM_OK;

    if (rank < 0 || rank >= px.size) {
        dsm_log_error("pmix bootstrap: PE %d: get of '%s' from invalid PE "
                      "%d (the job has %d PEs)",
                      (int)px.me.rank, k, rank, px.size);
        return DSM_ERR_INVAL;
    }
    load_proc(&p, (pmix_rank_t)rank);
    /* A key its owner has not published yet is waited for, as the launcher
     * bootstrap does (Open MPI 4.1's server answers "not found" at once
     * when the owner has not committed it: seen under load in
     * test/pmix/boot.sh). Values read after a fence are there at once. */
    for (unsigned us = 1000, waited = 0;; waited += us, us = us < 64000 ? 2 * us : us) {
        rc = PMIx_Get(&p, k, NULL, 0, &v);
        if ((rc != PMIX_ERR_NOT_FOUND && rc != PMIX_ERR_PROC_ENTRY_NOT_FOUND) ||
            !wait || waited >= 10000000u)
            break;
        usleep(us);
    }
    if (rc == PMIX_ERR_NOT_FOUND || rc == PMIX_ERR_PROC_ENTRY_NOT_FOUND)
        return DSM_ERR_NOT_FOUND;
    if (rc != PMIX_SUCCESS) {
        dsm_log_error("pmix bootstrap: PE %d: PMIx_Get(PE %d, %s) failed: %s",
                      (int)px.me.rank, rank, k, PMIx_Error_string(rc));
        return DSM_ERR_IO;
    }
    if (v->type != PMIX_BYTE_OBJECT) {
        dsm_log_error("pmix bootstrap: PE %d: PE %d's %s has PMIx type %s, "
                      "not a byte object",
                      (int)px.me.rank, rank, k, PMIx_Data_type_string(v->type));
        st = DSM_ERR_IO;
    } else if (v->data.bo.size > *len) {
        *len = v->data.bo.size;
        st = DSM_ERR_OVERFLOW;
    } else {
        if (v->data.bo.size)
            memcpy(val, v->data.bo.bytes, v->data.bo.size);
        *len = v->data.bo.size;
    }
    PMIX_VALUE_RELEASE(v);
    return st;
}

static dsm_status_t pmix_get(int rank, const char *key, void *val, size_t *len)
{
    char k[DSM_BOOT_KEY_MAX + sizeof(KEY_PREFIX)];
    dsm_status_t st = check_key("get", key);
    if (st != DSM_OK)
        return st;
    full_key(k, sizeof(k), key);
    return get_raw(rank, k, val, len, 1);
}

static dsm_status_t pmix_barrier(void)
{
    pmix_status_t rc = PMIx_Fence(NULL, 0, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        dsm_log_error("pmix bootstrap: PE %d: PMIx_Fence (barrier) failed: "
                      "%s",
                      (int)px.me.rank, PMIx_Error_string(rc));
        return DSM_ERR_PEER;
    }
    return DSM_OK;
}

/* ------------------------------------------------------------ descriptors */

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
    if (put_scoped(PMIX_LOCAL, FDSRV_KEY, &px.addr, sizeof(px.addr)) !=
        DSM_OK) {
        fdsrv_stop();
        return DSM_ERR_IO;
    }
    return DSM_OK;
fail:
    fdsrv_stop();
    return DSM_ERR_IO;
}

static void fdsrv_stop(void)
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

static dsm_status_t pmix_put_fd(const char *key, int fd)
{
    dsm_status_t st = check_key("put_fd", key);
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

static dsm_status_t pmix_get_fd(int rank, const char *key, int *fd)
{
    fdsrv_addr_t a;
    size_t alen = sizeof(a);
    struct sockaddr_un sa;
    fd_req_t req;
    fd_rep_t rep;
    dsm_status_t st = check_key("get_fd", key);
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
    st = get_raw(rank, FDSRV_KEY, &a, &alen, 0);
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

/* ------------------------------------------------------------ abort */

static DSM_NORETURN void pmix_abort(int status, const char *msg)
{
    /* Open MPI's mpirun ends the job with our status but does not print
     * the message: print it here, once, as one write. */
    if (msg && *msg) {
        size_t n = strnlen(msg, DSM_BOOT_VAL_MAX);
        struct iovec iov[2] = {{(void *)msg, n}, {(void *)"\n", 1}};
        ssize_t w = writev(STDERR_FILENO, iov, msg[n - 1] == '\n' ? 1 : 2);
        (void)w;
    }
    if (px.up) {
        /* Our own exit below is part of the abort, not a lost server. */
        __atomic_store_n(&px.finalizing, true, __ATOMIC_RELEASE);
        PMIx_Abort(status, msg && *msg ? msg : "dmashmem: job aborted", NULL,
                   0);
    }
    _exit(status);
}

static int pmix_watch_fd(void)
{
    /* PMIx gives no descriptor for its server connection; the
     * PMIX_ERR_LOST_CONNECTION handler ends the PE instead. */
    return -1;
}

const dsm_boot_ops_t dsm_boot_pmix_ops = {
    .size = sizeof(dsm_boot_ops_t),
    .name = "pmix",
    .detect = pmix_detect,
    .init = pmix_init,
    .fini = pmix_fini,
    .put = pmix_put,
    .fence = pmix_fence,
    .get = pmix_get,
    .barrier = pmix_barrier,
    .put_fd = pmix_put_fd,
    .get_fd = pmix_get_fd,
    .abort = pmix_abort,
    .watch_fd = pmix_watch_fd,
};
