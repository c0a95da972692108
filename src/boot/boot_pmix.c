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
#include <sys/uio.h>
#include <unistd.h>

#include <pmix.h>

#include "boot/boot.h"
#include "common/common.h"

#include "boot/boot_pmix_int.h"

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
            dsm_pmix_load_proc(&p, (pmix_rank_t)r);
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
    PMIx_Finalize(NULL, 0);
    free(px.node_of);
    px.node_of = NULL;
    px.up = false;
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
    .put = dsm_pmix_put,
    .fence = dsm_pmix_fence,
    .get = dsm_pmix_get,
    .barrier = dsm_pmix_barrier,
    .put_fd = dsm_pmix_put_fd,
    .get_fd = dsm_pmix_get_fd,
    .abort = pmix_abort,
    .watch_fd = pmix_watch_fd,
};
