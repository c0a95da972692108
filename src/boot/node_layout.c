/*
 * The node layout as a pure function of the process manager's answers
 * (node_layout.h says which answers and in which order).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boot/node_layout.h"

const char *dsm_node_source_name(dsm_node_source_t s)
{
    switch (s) {
    case DSM_NODES_MAP:
        return "the node map";
    case DSM_NODES_HOST:
        return "PMIX_HOSTNAME";
    case DSM_NODES_ID:
        return "PMIX_NODEID";
    default:
        return "nothing";
    }
}

static int by_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

int dsm_node_parse_ranks(const char *list, int size, int **out)
{
    int cap = 16, n = 0, j = 0;
    int *r = malloc((size_t)cap * sizeof(int));
    const char *p = list;

    *out = NULL;
    if (!r)
        return -1;
    while (p && *p) {
        char *end;
        long lo, hi;
        errno = 0;
        lo = strtol(p, &end, 10);
        if (end == p || errno || lo < 0 || lo >= size)
            goto bad;
        hi = lo;
        p = end;
        if (*p == '-') {
            p++;
            hi = strtol(p, &end, 10);
            if (end == p || errno || hi < lo || hi >= size)
                goto bad;
            p = end;
        }
        for (long v = lo; v <= hi; v++) {
            if (n == cap) {
                int *g;
                if (cap > size) /* more entries than ranks: repeats */
                    goto bad;
                cap *= 2;
                g = realloc(r, (size_t)cap * sizeof(int));
                if (!g)
                    goto bad;
                r = g;
            }
            r[n++] = (int)v;
        }
        if (*p == ',')
            p++;
        else if (*p)
            goto bad;
    }
    if (n == 0)
        goto bad;
    qsort(r, (size_t)n, sizeof(int), by_int);
    for (int i = 0; i < n; i++)
        if (i == 0 || r[i] != r[i - 1])
            r[j++] = r[i];
    *out = r;
    return j;
bad:
    free(r);
    return -1;
}

/* ------------------------------------------------------------ grouping */

/* Sorting context for hosts and node ids (qsort has none). */
typedef struct key {
    int rank;
    const char *host;
    int64_t id;
} nkey_t;

static int by_host(const void *a, const void *b)
{
    const nkey_t *x = a, *y = b;
    int c = strcmp(x->host, y->host);
    return c ? c : x->rank - y->rank;
}

static int by_id(const void *a, const void *b)
{
    const nkey_t *x = a, *y = b;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return x->rank - y->rank;
}

/* leader[r] = lowest rank with r's key, from a per-rank key. */
static dsm_status_t leaders_by_key(const dsm_node_answers_t *a, bool host,
                                   int *leader)
{
    const int n = a->size;
    nkey_t *k = malloc((size_t)n * sizeof(*k));
    if (!k)
        return DSM_ERR_NOMEM;
    for (int r = 0; r < n; r++) {
        k[r].rank = r;
        k[r].host = host ? a->host[r] : NULL;
        k[r].id = host ? 0 : a->nodeid[r];
    }
    qsort(k, (size_t)n, sizeof(*k), host ? by_host : by_id);
    for (int i = 0, first = 0; i < n; i++) {
        bool same = i > 0 && (host ? strcmp(k[i].host, k[i - 1].host) == 0
                                   : k[i].id == k[i - 1].id);
        if (!same)
            first = k[i].rank; /* sorted by rank within a node */
        leader[k[i].rank] = first;
    }
    free(k);
    return DSM_OK;
}

/* leader[r] from the node map; false unless it places every rank once. */
static bool leaders_by_map(const dsm_node_answers_t *a, int *leader)
{
    const int n = a->size;
    for (int r = 0; r < n; r++)
        leader[r] = -1;
    for (int i = 0; i < a->map_nodes; i++) {
        int low = n;
        if (!a->map_ranks || !a->map_count || a->map_count[i] < 1 ||
            !a->map_ranks[i])
            return false;
        for (int j = 0; j < a->map_count[i]; j++) {
            int r = a->map_ranks[i][j];
            if (r < 0 || r >= n || leader[r] != -1)
                return false;
            leader[r] = -2; /* placed; the node's leader follows */
            low = r < low ? r : low;
        }
        for (int j = 0; j < a->map_count[i]; j++)
            leader[a->map_ranks[i][j]] = low;
    }
    for (int r = 0; r < n; r++)
        if (leader[r] < 0)
            return false;
    return true;
}

static bool all_hosts(const dsm_node_answers_t *a)
{
    if (!a->host)
        return false;
    for (int r = 0; r < a->size; r++)
        if (!a->host[r] || !*a->host[r])
            return false;
    return true;
}

static bool all_ids(const dsm_node_answers_t *a)
{
    if (!a->nodeid)
        return false;
    for (int r = 0; r < a->size; r++)
        if (a->nodeid[r] < 0)
            return false;
    return true;
}

/* "0,3,5" of the ranks on node id, at most cap characters ("..." past). */
static void node_list(const int *node_of, int n, int id, char *out, size_t cap)
{
    size_t len = 0;
    out[0] = '\0';
    for (int r = 0; r < n; r++) {
        int w;
        if (node_of[r] != id)
            continue;
        w = snprintf(out + len, cap - len, "%s%d", len ? "," : "", r);
        if (w < 0 || (size_t)w >= cap - len) {
            if (cap > 4)
                memcpy(out + cap - 4, "...", 4);
            return;
        }
        len += (size_t)w;
    }
}

dsm_status_t dsm_node_layout(const dsm_node_answers_t *a, int *node_of,
                             dsm_boot_info_t *info, dsm_node_source_t *src,
                             char *err, size_t errlen)
{
    const int n = a->size;
    int *leader = NULL, *peers = NULL;
    dsm_status_t st = DSM_OK;
    int npeers;

    *src = DSM_NODES_NONE;
    if (n < 1 || a->me < 0 || a->me >= n) {
        snprintf(err, errlen, "rank %d of a job of %d PEs", a->me, n);
        return DSM_ERR_INVAL;
    }
    leader = malloc((size_t)n * sizeof(int));
    if (!leader)
        return DSM_ERR_NOMEM;
    if (a->map_nodes > 0 && leaders_by_map(a, leader)) {
        *src = DSM_NODES_MAP;
    } else if (all_hosts(a)) {
        st = leaders_by_key(a, true, leader);
        *src = DSM_NODES_HOST;
    } else if (all_ids(a)) {
        st = leaders_by_key(a, false, leader);
        *src = DSM_NODES_ID;
    } else {
        st = DSM_ERR_NOT_FOUND;
    }
    if (st != DSM_OK)
        goto out;

    /* Dense ids by lowest rank: a leader is always seen before its
     * followers, and leader[r] == r only for leaders. */
    info->num_nodes = 0;
    for (int r = 0; r < n; r++)
        node_of[r] = leader[r] == r ? info->num_nodes++ : node_of[leader[r]];
    info->node_id = node_of[a->me];
    info->node_size = 0;
    info->node_rank = 0;
    for (int r = 0; r < n; r++) {
        if (node_of[r] != info->node_id)
            continue;
        if (r == a->me)
            info->node_rank = info->node_size;
        info->node_size++;
    }

    /* What the server says of this node must agree. */
    if (a->local_peers) {
        char mine[128];
        bool same;
        npeers = dsm_node_parse_ranks(a->local_peers, n, &peers);
        if (npeers < 0) {
            snprintf(err, errlen,
                     "PMIX_LOCAL_PEERS is '%.64s', not a list of ranks below "
                     "%d",
                     a->local_peers, n);
            st = DSM_ERR_INVAL;
            goto out;
        }
        same = npeers == info->node_size;
        for (int i = 0; same && i < npeers; i++)
            same = node_of[peers[i]] == info->node_id;
        if (!same) {
            node_list(node_of, n, info->node_id, mine, sizeof(mine));
            snprintf(err, errlen,
                     "PMIX_LOCAL_PEERS says PEs %.64s share this node, %s "
                     "says PEs %s",
                     a->local_peers, dsm_node_source_name(*src), mine);
            st = DSM_ERR_INVAL;
            goto out;
        }
    }
    if (a->local_size >= 0 && a->local_size != info->node_size) {
        snprintf(err, errlen,
                 "PMIX_LOCAL_SIZE says %d PEs share this node, %s says %d",
                 a->local_size, dsm_node_source_name(*src), info->node_size);
        st = DSM_ERR_INVAL;
        goto out;
    }
    if (a->local_rank >= 0 && a->local_rank >= info->node_size) {
        snprintf(err, errlen,
                 "PMIX_LOCAL_RANK is %d, but %s puts %d PEs on this node",
                 a->local_rank, dsm_node_source_name(*src), info->node_size);
        st = DSM_ERR_INVAL;
    }
out:
    free(peers);
    free(leader);
    return st;
}
