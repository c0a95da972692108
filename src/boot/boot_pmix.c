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
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/uio.h>
#include <unistd.h>

#include <pmix.h>

#include "boot/boot.h"
#include "common/common.h"

#include "boot/boot_pmix_int.h"
#include "boot/node_layout.h"

dsm_pmix_state_t dsm_pmix_px = {
    .lock = PTHREAD_MUTEX_INITIALIZER, .lfd = -1, .stop_rd = -1, .stop_wr = -1};

static int pmix_detect(void)
{
    return getenv("PMIX_RANK") != NULL;
}

dsm_status_t dsm_pmix_check_key(const char *routine, const char *key)
{
    if (!key || !*key || strlen(key) > DSM_BOOT_KEY_MAX) {
        dsm_log_error("pmix bootstrap: %s: invalid key '%s' (1..%d "
                      "characters)",
                      routine, key ? key : "(null)", DSM_BOOT_KEY_MAX);
        return DSM_ERR_INVAL;
    }
    return DSM_OK;
}

void dsm_pmix_load_proc(pmix_proc_t *p, pmix_rank_t rank)
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
    dsm_pmix_load_proc(&p, rank);
    rc = PMIx_Get(&p, key, NULL, 0, &v);
    if (rc != PMIX_SUCCESS)
        return rc;
    if (value_u32(v, out) < 0)
        rc = PMIX_ERR_BAD_PARAM;
    PMIX_VALUE_RELEASE(v);
    return rc;
}

/* ------------------------------------------------------------ node layout */

/* A string answer (PMIX_HOSTNAME, PMIX_LOCAL_PEERS) about rank; NULL when
 * the server has none. The caller frees it. */
static char *get_str(pmix_rank_t rank, const char *key)
{
    pmix_proc_t p;
    pmix_value_t *v = NULL;
    char *s = NULL;
    dsm_pmix_load_proc(&p, rank);
    if (PMIx_Get(&p, key, NULL, 0, &v) == PMIX_SUCCESS && v &&
        v->type == PMIX_STRING && v->data.string)
        s = strdup(v->data.string);
    if (v)
        PMIX_VALUE_RELEASE(v);
    return s;
}

/* The node map: PMIx_Resolve_nodes names the job's nodes, and
 * PMIx_Resolve_peers the ranks of each. Servers without PMIX_NODE_MAP
 * (Open MPI 4.1) answer "not found": map_nodes stays 0. */
typedef struct node_map {
    int nodes;
    int *count;
    int **ranks;
} node_map_t;

static void node_map_free(node_map_t *m)
{
    for (int i = 0; i < m->nodes; i++)
        free(m->ranks[i]);
    free(m->ranks);
    free(m->count);
    memset(m, 0, sizeof(*m));
}

static void node_map_load(node_map_t *m)
{
    char *list = NULL, *save = NULL, *tok;
    int cap = 0;

    memset(m, 0, sizeof(*m));
    if (PMIx_Resolve_nodes(px.me.nspace, &list) != PMIX_SUCCESS || !list)
        return;
    for (tok = strtok_r(list, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        pmix_proc_t *procs = NULL;
        size_t np = 0;
        if (PMIx_Resolve_peers(tok, px.me.nspace, &procs, &np) !=
                PMIX_SUCCESS ||
            np == 0) {
            if (procs)
                PMIX_PROC_FREE(procs, np);
            continue; /* a node of the allocation without PEs of ours */
        }
        if (m->nodes == cap) {
            int nc = cap ? 2 * cap : 8;
            int *c = realloc(m->count, (size_t)nc * sizeof(int));
            int **r = c ? realloc(m->ranks, (size_t)nc * sizeof(int *)) : NULL;
            if (c)
                m->count = c;
            if (!r) {
                PMIX_PROC_FREE(procs, np);
                goto bad;
            }
            m->ranks = r;
            cap = nc;
        }
        m->ranks[m->nodes] = malloc(np * sizeof(int));
        if (!m->ranks[m->nodes]) {
            PMIX_PROC_FREE(procs, np);
            goto bad;
        }
        m->count[m->nodes] = (int)np;
        for (size_t j = 0; j < np; j++)
            m->ranks[m->nodes][j] = (int)procs[j].rank;
        m->nodes++;
        PMIX_PROC_FREE(procs, np);
    }
    free(list);
    return;
bad:
    free(list);
    node_map_free(m);
}

/* Every PE publishes its own host name; used when no answer of the server
 * places every rank. Collective (a fence): every PE takes this branch or
 * none: what decides it is the job's data (the node map, PMIX_HOSTNAME of
 * every rank), the same on every PE, or PMIX_NODEID, which a server that
 * answers it only for the caller's node leaves incomplete on every node of
 * a job over several. */
static dsm_status_t exchange_hosts(char **host)
{
    char me[256] = "";
    dsm_status_t st;
    gethostname(me, sizeof(me) - 1);
    st = dsm_pmix_put_scoped(PMIX_GLOBAL, KEY_PREFIX "host", me, strlen(me));
    if (st == DSM_OK)
        st = dsm_pmix_fence();
    for (int r = 0; st == DSM_OK && r < px.size; r++) {
        char buf[256];
        size_t len = sizeof(buf) - 1;
        st = dsm_pmix_get_raw(r, KEY_PREFIX "host", buf, &len, 1);
        if (st == DSM_OK) {
            buf[len] = '\0';
            free(host[r]);
            host[r] = strdup(buf);
            if (!host[r])
                st = DSM_ERR_NOMEM;
        }
    }
    return st;
}

/* px.node_of and info's node fields from the server's answers
 * (node_layout.h: the node map, else PMIX_HOSTNAME, else PMIX_NODEID of
 * every rank, else the host names the PEs exchange), checked against
 * PMIX_LOCAL_PEERS, PMIX_LOCAL_SIZE and PMIX_LOCAL_RANK. */
static dsm_status_t node_layout(dsm_boot_info_t *info)
{
    const int n = px.size;
    dsm_node_answers_t a = {.size = n, .me = (int)px.me.rank,
                            .local_size = -1, .local_rank = -1};
    char **host = calloc((size_t)n, sizeof(char *));
    int64_t *id = malloc((size_t)n * sizeof(int64_t));
    node_map_t map;
    dsm_node_source_t src = DSM_NODES_NONE;
    dsm_status_t st = DSM_ERR_NOMEM;
    char err[320] = "";
    uint32_t u;

    node_map_load(&map);
    px.node_of = calloc((size_t)n, sizeof(int));
    if (!host || !id || !px.node_of)
        goto out;
    a.map_nodes = map.nodes;
    a.map_count = map.count;
    a.map_ranks = (const int *const *)map.ranks;
    for (int r = 0; r < n; r++) {
        host[r] = get_str((pmix_rank_t)r, PMIX_HOSTNAME);
        id[r] = get_u32((pmix_rank_t)r, PMIX_NODEID, &u) == PMIX_SUCCESS
                    ? (int64_t)u
                    : -1;
    }
    a.host = (const char *const *)host;
    a.nodeid = id;
    a.local_peers = get_str(PMIX_RANK_WILDCARD, PMIX_LOCAL_PEERS);
    if (get_u32(PMIX_RANK_WILDCARD, PMIX_LOCAL_SIZE, &u) == PMIX_SUCCESS)
        a.local_size = (int)u;
    if (get_u32(px.me.rank, PMIX_LOCAL_RANK, &u) == PMIX_SUCCESS)
        a.local_rank = (int)u;

    st = dsm_node_layout(&a, px.node_of, info, &src, err, sizeof(err));
    if (st == DSM_ERR_NOT_FOUND) {
        /* No answer places every rank: the PEs tell each other. */
        st = exchange_hosts(host);
        if (st == DSM_OK)
            st = dsm_node_layout(&a, px.node_of, info, &src, err,
                                 sizeof(err));
        if (st == DSM_OK)
            src = DSM_NODES_NONE; /* reported as the exchange below */
    }
    if (st == DSM_ERR_INVAL)
        dsm_log_error("pmix bootstrap: PE %d: the PMIx server's node layout "
                      "does not hold together: %s",
                      (int)px.me.rank, err);
    else if (st != DSM_OK)
        dsm_log_error("pmix bootstrap: PE %d: no node layout: %s",
                      (int)px.me.rank, dsm_status_str(st));
    if (st == DSM_OK) {
        snprintf(info->how, sizeof(info->how), "node layout from %s",
                 src == DSM_NODES_NONE ? "the PEs' own host names"
                                       : dsm_node_source_name(src));
        dsm_debug("pmix bootstrap: node %d of %d (%s), node rank %d of %d",
                  info->node_id, info->num_nodes, info->how, info->node_rank,
                  info->node_size);
    }
out:
    if (host)
        for (int r = 0; r < n; r++)
            free(host[r]);
    free(host);
    free(id);
    free((char *)a.local_peers);
    node_map_free(&map);
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

/* At exit: PMIx left initialized by shmem_finalize (dormant) is
 * finalized, so the launcher sees an orderly end. */
static void pmix_at_exit(void)
{
    if (px.dormant) {
        px.dormant = false;
        PMIx_Finalize(NULL, 0);
    }
}

static dsm_status_t pmix_init(dsm_boot_info_t *info)
{
    pmix_status_t rc;
    uint32_t size;

    if (px.up)
        return DSM_ERR_INVAL;
    if (px.dormant) {
        /* Again after the last shmem_finalize: PMIx is still up. */
        px.dormant = false;
        px.epoch++;
        rc = PMIX_SUCCESS;
    } else {
        rc = PMIx_Init(&px.me, NULL, 0);
        if (rc == PMIX_SUCCESS && !px.exit_hook) {
            atexit(pmix_at_exit);
            px.exit_hook = true;
        }
    }
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

static void pmix_fini(void)
{
    if (!px.up)
        return;
    dsm_pmix_fdsrv_stop();
    __atomic_store_n(&px.finalizing, true, __ATOMIC_RELEASE);
    if (px.evhdlr_set) {
        PMIx_Deregister_event_handler(px.evhdlr, NULL, NULL);
        px.evhdlr_set = false;
    }
    /* Dormant, not finalized: see boot_pmix_int.h. */
    px.dormant = true;
    free(px.node_of);
    px.node_of = NULL;
    px.up = false;
}

/* ------------------------------------------------------------ abort */

/* PMIx_Abort asks the server to have the launcher end the job and waits
 * for its answer; a server cut off from the launcher (a link down between
 * nodes) never answers. The PE ends within this bound anyway. */
#define ABORT_WAIT_S 3

static int abort_status;

static void *abort_timer(void *arg)
{
    struct timespec ts = {ABORT_WAIT_S, 0};
    (void)arg;
    nanosleep(&ts, NULL);
    _exit(abort_status);
}

static DSM_NORETURN void pmix_abort(int status, const char *msg)
{
    pthread_t t;
    abort_status = status;
    if (pthread_create(&t, NULL, abort_timer, NULL) == 0)
        pthread_detach(t);
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
    .put = dsm_pmix_put,
    .fence = dsm_pmix_fence,
    .get = dsm_pmix_get,
    .barrier = dsm_pmix_barrier,
    .put_fd = dsm_pmix_put_fd,
    .get_fd = dsm_pmix_get_fd,
    .abort = pmix_abort,
    .watch_fd = pmix_watch_fd,
};
