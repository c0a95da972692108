/*
 * Bootstrap for a program started alone: a 1-PE job. Keys live in a local
 * list; passing a descriptor to oneself is a dup; collectives are no-ops.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "boot/boot.h"
#include "common/common.h"

typedef struct single_kv {
    struct single_kv *next;
    int fd; /* put_fd's duplicate, else -1 */
    size_t len;
    char key[DSM_BOOT_KEY_MAX + 1];
    unsigned char val[DSM_BOOT_VAL_MAX];
} single_kv_t;

static single_kv_t *kv_head;
static pthread_mutex_t kv_lock = PTHREAD_MUTEX_INITIALIZER;

static int single_detect(void)
{
    return 1; /* the fallback always applies */
}

static dsm_status_t single_init(dsm_boot_info_t *info)
{
    info->rank = 0;
    info->size = 1;
    info->node_rank = 0;
    info->node_size = 1;
    info->node_id = 0;
    info->num_nodes = 1;
    return DSM_OK;
}

static void single_fini(void)
{
    pthread_mutex_lock(&kv_lock);
    while (kv_head) {
        single_kv_t *n = kv_head->next;
        if (kv_head->fd >= 0)
            close(kv_head->fd);
        free(kv_head);
        kv_head = n;
    }
    pthread_mutex_unlock(&kv_lock);
}

static dsm_status_t check_key(const char *key)
{
    if (!key || !*key || strlen(key) > DSM_BOOT_KEY_MAX) {
        dsm_log_error("single bootstrap: invalid key (1..%d characters)",
                      DSM_BOOT_KEY_MAX);
        return DSM_ERR_INVAL;
    }
    return DSM_OK;
}

/* Called with kv_lock held. */
static single_kv_t *kv_lookup(const char *key, int create)
{
    single_kv_t *e;
    for (e = kv_head; e; e = e->next)
        if (strcmp(e->key, key) == 0)
            return e;
    if (!create)
        return NULL;
    e = calloc(1, sizeof(*e));
    if (!e)
        return NULL;
    e->fd = -1;
    snprintf(e->key, sizeof(e->key), "%s", key);
    e->next = kv_head;
    kv_head = e;
    return e;
}

static dsm_status_t single_put(const char *key, const void *val, size_t len)
{
    dsm_status_t st = check_key(key);
    if (st != DSM_OK)
        return st;
    if (len > DSM_BOOT_VAL_MAX)
        return DSM_ERR_OVERFLOW;
    pthread_mutex_lock(&kv_lock);
    single_kv_t *e = kv_lookup(key, 1);
    if (e) {
        memcpy(e->val, val, len);
        e->len = len;
    }
    pthread_mutex_unlock(&kv_lock);
    return e ? DSM_OK : DSM_ERR_NOMEM;
}

static dsm_status_t single_fence(void)
{
    return DSM_OK;
}

static dsm_status_t single_get(int rank, const char *key, void *val,
                               size_t *len)
{
    dsm_status_t st = check_key(key);
    if (st != DSM_OK)
        return st;
    if (rank != 0)
        return DSM_ERR_INVAL;
    pthread_mutex_lock(&kv_lock);
    single_kv_t *e = kv_lookup(key, 0);
    /* Nobody else could publish it later: not found, rather than a wait
     * for ever. */
    if (!e)
        st = DSM_ERR_NOT_FOUND;
    else if (e->len > *len)
        st = DSM_ERR_OVERFLOW;
    else
        memcpy(val, e->val, e->len);
    if (e)
        *len = e->len;
    pthread_mutex_unlock(&kv_lock);
    return st;
}

static dsm_status_t single_barrier(void)
{
    return DSM_OK;
}

static dsm_status_t single_put_fd(const char *key, int fd)
{
    dsm_status_t st = check_key(key);
    if (st != DSM_OK)
        return st;
    int dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (dup_fd < 0) {
        dsm_log_error("single bootstrap: dup: %s", strerror(errno));
        return DSM_ERR_INVAL;
    }
    pthread_mutex_lock(&kv_lock);
    single_kv_t *e = kv_lookup(key, 1);
    if (e) {
        if (e->fd >= 0)
            close(e->fd);
        e->fd = dup_fd;
    }
    pthread_mutex_unlock(&kv_lock);
    if (!e) {
        close(dup_fd);
        return DSM_ERR_NOMEM;
    }
    return DSM_OK;
}

static dsm_status_t single_get_fd(int rank, const char *key, int *fd)
{
    dsm_status_t st = check_key(key);
    if (st != DSM_OK)
        return st;
    if (rank != 0)
        return DSM_ERR_INVAL;
    pthread_mutex_lock(&kv_lock);
    single_kv_t *e = kv_lookup(key, 0);
    if (!e || e->fd < 0) {
        st = DSM_ERR_NOT_FOUND;
    } else {
        *fd = fcntl(e->fd, F_DUPFD_CLOEXEC, 0);
        if (*fd < 0) {
            dsm_log_error("single bootstrap: dup: %s", strerror(errno));
            st = DSM_ERR_IO;
        }
    }
    pthread_mutex_unlock(&kv_lock);
    return st;
}

static DSM_NORETURN void single_abort(int status, const char *msg)
{
    /* Printed as given, one write, as shmem_launcher prints it. */
    if (msg && *msg) {
        size_t n = strnlen(msg, DSM_BOOT_VAL_MAX);
        struct iovec iov[2] = {{(void *)msg, n}, {(void *)"\n", 1}};
        ssize_t w = writev(STDERR_FILENO, iov, msg[n - 1] == '\n' ? 1 : 2);
        (void)w;
    }
    _exit(status);
}

static int single_watch_fd(void)
{
    return -1;
}

const dsm_boot_ops_t dsm_boot_single_ops = {
    .size = sizeof(dsm_boot_ops_t),
    .name = "single",
    .detect = single_detect,
    .init = single_init,
    .fini = single_fini,
    .put = single_put,
    .fence = single_fence,
    .get = single_get,
    .barrier = single_barrier,
    .put_fd = single_put_fd,
    .get_fd = single_get_fd,
    .abort = single_abort,
    .watch_fd = single_watch_fd,
};
