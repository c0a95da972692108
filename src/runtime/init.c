/*
 * Library setup, exit and query routines.
 */
#include "rt.h"
#include "coll/coll.h"
#include "net/net.h"
#include "path.h"
#include "runtime/topo.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static int atexit_registered;
/* Initialized by the deprecated start_pes (1.2 had no shmem_finalize). */
static int by_start_pes;

/* Default for SHMEM_SDMA_INLINE_MAX with the cpu backend: below this a
 * blocking put/get is a memcpy by the caller. Measured with bench/shmem_bench
 * (docs/PERFORMANCE.md): handing a copy to an engine thread costs more than
 * copying it as long as the caller must wait for it anyway. */
#define DSM_CPU_INLINE_MAX_DEFAULT (SIZE_MAX)

/* Default for SHMEM_SDMA_NBI_INLINE_MAX: put_nbi/get_nbi to a local PE's host
 * memory up to this size are a direct copy at issue. Above it an engine
 * copying while the caller goes on wins (bench/shmem_bench put_nbi rows,
 * docs/PERFORMANCE.md); below it the request hand-off (~200 ns) costs more
 * than the copy. Device memory always goes to the engines. */
#define DSM_NBI_INLINE_MAX_DEFAULT ((size_t)16384)

/* A process that exits (or returns from main) while initialized. Since
 * OpenSHMEM 1.4 every shmem_init must be matched by a shmem_finalize; a
 * PE that leaves without it makes the others wait for it forever (issue
 * #27: one PE's exit(0) ran the old implicit finalize, whose barrier
 * matched the others' shmem_barrier_all, and the job hung in the next
 * collective). So it is an error: one line naming the PE and the exit
 * status, and the job ends with that status (1 for exit(0)). Programs
 * initialized by the deprecated start_pes, from before shmem_finalize
 * existed, are still finalized here. */
static void finalize_at_exit_status(int status)
{
    if (dsm_rt.initialized <= 0)
        return;
    if (by_start_pes) {
        dsm_rt.initialized = 1;
        pshmem_finalize();
        return;
    }
    fflush(stdout);
    dsm_log_error("exit: this PE exits with status %d without calling "
                  "shmem_finalize (the other PEs would wait for it); call "
                  "shmem_finalize before exit() or the return from main",
                  status);
    if (dsm_rt.boot_ops)
        dsm_rt.boot_ops->abort(status ? status : 1, NULL);
    _exit(status ? status : 1);
}

#ifdef __GLIBC__
static void finalize_at_exit(int status, void *arg)
{
    (void)arg;
    finalize_at_exit_status(status);
}
#else
static void finalize_at_exit(void)
{
    finalize_at_exit_status(0);
}
#endif

/* Waiters sleep only when this node's PEs outnumber the cores they may run
 * on: then a spinning waiter steals the core its writer needs. Otherwise
 * they yield forever and see a plain put within a yield. */
static int set_wait_mode(void)
{
    const char *m = dsm_env.wait_mode;
    if (!strcmp(m, "spin")) {
        dsm_backoff_may_sleep = 0;
    } else if (!strcmp(m, "sleep")) {
        dsm_backoff_may_sleep = 2;
    } else if (!strcmp(m, "auto")) {
        long cores = dsm_ncores();
        dsm_backoff_may_sleep = dsm_rt.boot.node_size > cores;
    } else {
        dsm_log_error("shmem_init: SHMEM_WAIT_MODE=%s: use auto, spin or "
                      "sleep", m);
        return -1;
    }
    return 0;
}

static void print_banner(void)
{
    if (dsm_env.version)
        dsm_out("dmashmem %d.%d.%d (OpenSHMEM %d.%d), sdma backend %s%s%s\n",
                DMASHMEM_VERSION_MAJOR, DMASHMEM_VERSION_MINOR,
                DMASHMEM_VERSION_PATCH, SHMEM_MAJOR_VERSION,
                SHMEM_MINOR_VERSION, dsm_sdma_backend_name(dsm_rt.sdma),
                dsm_net_provider() ? ", network " : "",
                dsm_net_provider() ? dsm_net_provider() : "");
    if (dsm_env.info)
        dsm_env_print();
    if (dsm_env.info)
        dsm_out("bootstrap: %s, %d PE%s on %d node%s%s%s\n",
                dsm_rt.boot_ops->name, dsm_rt.npes, dsm_rt.npes == 1 ? "" : "s",
                dsm_rt.boot.num_nodes, dsm_rt.boot.num_nodes == 1 ? "" : "s",
                dsm_rt.boot.how[0] ? "; " : "", dsm_rt.boot.how);
    if (dsm_env.info && dsm_sdma_describe(dsm_rt.sdma))
        dsm_out("sdma: %s\n", dsm_sdma_describe(dsm_rt.sdma));
    if (dsm_env.info && dsm_net_describe())
        dsm_out("network: %s\n", dsm_net_describe());
    if (dsm_env.info && dsm_rt_device_sharing_info())
        dsm_out("gpu: %s\n", dsm_rt_device_sharing_info());
}

/* The job's network secret the launcher handed over (net/auth.h), taken
 * out of the environment at init so that programs the PE starts do not
 * inherit it; NULL under another launcher. */
static char job_secret[2 * DSM_JOB_SECRET_BYTES + 1];

static const char *take_job_secret(void)
{
    const char *v = getenv(DSM_JOB_SECRET_ENV);
    if (!v)
        return job_secret[0] ? job_secret : NULL;
    snprintf(job_secret, sizeof(job_secret), "%s", v);
    if (strlen(v) != 2 * DSM_JOB_SECRET_BYTES)
        job_secret[0] = '!'; /* refused by the network with its line */
    unsetenv(DSM_JOB_SECRET_ENV);
    return job_secret;
}

static int do_init(int requested)
{
    dsm_status_t st;

    if (dsm_env_init())
        return -1;
    dsm_log_debug = dsm_env.debug;
    dsm_rt.check = (int)dsm_env.check;
    st = dsm_boot_select(dsm_env.bootstrap, &dsm_rt.boot_ops, &dsm_rt.boot);
    if (st != DSM_OK) {
        dsm_log_error("shmem_init: bootstrap failed: %s", dsm_status_str(st));
        return -1;
    }
    dsm_rt.me = dsm_rt.boot.rank;
    dsm_rt.npes = dsm_rt.boot.size;
    dsm_log_pe = dsm_rt.me;
    dsm_rt.thread_level = requested;
    /* topo.c: bind to this PE's cores before the library starts a thread,
     * so that engine, proxy and progress threads inherit them. */
    if (dsm_rt_topo_init() != 0)
        goto fail;

    if (dsm_rt_segments_init() != DSM_OK)
        goto fail;
    pthread_mutex_init(&dsm_rt.heap_lock, NULL);
    if (dsm_heap_init(&dsm_rt.heap, dsm_rt.segs[DSM_SEG_HEAP].size))
        goto fail;

    long eng = dsm_env.sdma_engines;
    if (eng < 1 || eng > 64) {
        dsm_log_error("shmem_init: SHMEM_SDMA_ENGINES=%ld: must be 1..64",
                      eng);
        goto fail;
    }
    long depth = dsm_env.sdma_queue_depth, rdepth = dsm_env.sdma_request_depth;
    if (depth < 16 || (depth & (depth - 1)) || rdepth < 16 ||
        (rdepth & (rdepth - 1))) {
        dsm_log_error("shmem_init: SHMEM_SDMA_QUEUE_DEPTH=%ld and "
                      "SHMEM_SDMA_REQUEST_DEPTH=%ld must be powers of two "
                      ">= 16", depth, rdepth);
        goto fail;
    }
    int proxy = !strcmp(dsm_env.sdma_proxy, "auto") ? -1
                : !strcmp(dsm_env.sdma_proxy, "1")  ? 1
                : !strcmp(dsm_env.sdma_proxy, "0")  ? 0
                                                    : -2;
    if (proxy == -2) {
        dsm_log_error("shmem_init: SHMEM_SDMA_PROXY=%s: use auto, 0 or 1",
                      dsm_env.sdma_proxy);
        goto fail;
    }
    if (set_wait_mode() != 0)
        goto fail;
    if (strcmp(dsm_env.dev_req_trigger_word, "dev") &&
        strcmp(dsm_env.dev_req_trigger_word, "host")) {
        dsm_log_error("shmem_init: SHMEM_DEV_REQ_TRIGGER_WORD=%s: use dev or "
                      "host", dsm_env.dev_req_trigger_word);
        goto fail;
    }
    dsm_rt_device_pre_open(); /* gpu.c: which GPU (cuda backend) */
    dsm_sdma_config_t cfg = {
        .engines = (int)eng,
        .depth = (uint64_t)depth,
        .req_depth = (uint64_t)rdepth,
        .stats = dsm_env.sdma_stats,
        .proxy_thread = proxy,
        .wake = &dsm_rt.ctrl->wake,
        .app_wake = &dsm_rt.ctrl->wake_app,
        .backend = dsm_env.sdma_backend,
        .wait = dsm_rt_wait_in,
    };
    st = dsm_sdma_open(&cfg, &dsm_rt.sdma);
    if (st != DSM_OK) {
        dsm_log_error("shmem_init: cannot open the DMA command layer: %s",
                      dsm_status_str(st));
        goto fail;
    }
    dsm_rt.nengines = dsm_sdma_num_engines(dsm_rt.sdma);
    dsm_rt.inline_max = dsm_env.sdma_inline_max == UINT64_MAX
                            ? DSM_CPU_INLINE_MAX_DEFAULT
                            : (size_t)dsm_env.sdma_inline_max;
    dsm_rt.nbi_inline_max = dsm_env.sdma_nbi_inline_max == UINT64_MAX
                                ? DSM_NBI_INLINE_MAX_DEFAULT
                                : (size_t)dsm_env.sdma_nbi_inline_max;
    if (dsm_rt_device_init() != DSM_OK) /* gpu.c: device heap */
        goto fail;
    /* src/net: PEs on other nodes; it sees the runtime only through this. */
    const dsm_seg_t *hs = &dsm_rt.segs[DSM_SEG_HEAP],
                    *ss = &dsm_rt.segs[DSM_SEG_STATIC],
                    *ds = &dsm_rt.segs[DSM_SEG_DEVICE];
    dsm_net_config_t ncfg = {
        .me = dsm_rt.me,
        .npes = dsm_rt.npes,
        .node_size = dsm_rt.boot.node_size,
        .num_nodes = dsm_rt.boot.num_nodes,
        .node_id = dsm_env.force_network ? dsm_rt.me : dsm_rt.boot.node_id,
        .exchange = {dsm_rt.boot_ops->put, dsm_rt.boot_ops->fence,
                     dsm_rt.boot_ops->get},
        .mapped = hs->peer,
        .segs = {{hs->base, hs->size, hs->map_size},
                 {ss->base, ss->size, ss->map_size}},
        .device = {ds->base, ds->size, ds->map_size},
        .thread_multiple = dsm_rt.thread_level == SHMEM_THREAD_MULTIPLE,
        .provider = dsm_env.ofi_provider,
        .domain = dsm_env.ofi_domain,
        .force_network = dsm_env.force_network,
        .progress_us = dsm_env.ofi_progress_us,
        .ctx_eps = dsm_env.ofi_ctx_eps,
        .completion = dsm_env.ofi_completion,
        .fence = dsm_env.ofi_fence,
        .peer_timeout_s = dsm_env.peer_timeout,
        .secret = take_job_secret(),
        .fatal = dsm_rt_fatal,
        .bad_addr = dsm_rt_bad_addr,
        .wait = dsm_rt_wait_in,
    };
    if (dsm_net_init(&ncfg) != DSM_OK)
        goto fail;
    if (dsm_paths_init() != DSM_OK) /* path.h: how each PE is reached */
        goto fail;
    dsm_ctx_default_reset();
    dsm_debug("init: %d PEs, node %d/%d, heap %zu bytes, static %zu bytes, "
              "sdma %s with %d engine(s), inline max %zu, nbi inline max %zu",
              dsm_rt.npes, dsm_rt.boot.node_rank, dsm_rt.boot.node_size,
              dsm_rt.segs[DSM_SEG_HEAP].size,
              dsm_rt.segs[DSM_SEG_STATIC].size,
              dsm_sdma_backend_name(dsm_rt.sdma), dsm_rt.nengines,
              dsm_rt.inline_max, dsm_rt.nbi_inline_max);

    if (dsm_rt.boot_ops->barrier() != DSM_OK) {
        dsm_log_error("shmem_init: bootstrap barrier failed");
        goto fail;
    }
    /* Every fd is mapped by every peer now: the bootstrap holds no more
     * reason to keep them, and neither do we. */
    for (int i = 0; i < dsm_rt.nsegs; i++)
        if (dsm_rt.segs[i].fd >= 0) {
            close(dsm_rt.segs[i].fd);
            dsm_rt.segs[i].fd = -1;
        }
    if (dsm_coll_init() != DSM_OK)
        goto fail;
    dsm_rt_device_sharing(); /* every local PE's GPU is published now */
    if (dsm_rt.me == 0)
        print_banner();
    if (dsm_env.info)
        dsm_rt_topo_print(); /* every PE: its cores, GPU and NIC */
    dsm_stall_install(); /* SIGTERM, SIGINT: what this PE waits for */
    return 0;

fail:
    if (dsm_rt.boot_ops)
        dsm_rt.boot_ops->abort(1, NULL);
    _exit(1);
}

static int init_common(int requested, int *provided, const char *routine)
{
    int rc = 0;

    if (requested < SHMEM_THREAD_SINGLE || requested > SHMEM_THREAD_MULTIPLE) {
        dsm_log_error("%s: invalid thread level %d (SHMEM_THREAD_SINGLE.."
                      "SHMEM_THREAD_MULTIPLE)", routine, requested);
        return -1;
    }
    pthread_mutex_lock(&init_lock);
    if (dsm_rt.initialized > 0) {
        /* 1.6: further calls are allowed and must be matched by
         * shmem_finalize; the thread level stays the first one. */
        dsm_rt.initialized++;
    } else {
        rc = do_init(requested);
        if (rc == 0) {
            dsm_rt.initialized = 1;
            dsm_rt.finalized = 0;
            if (!atexit_registered) {
#ifdef __GLIBC__
                on_exit(finalize_at_exit, NULL);
#else
                atexit(finalize_at_exit);
#endif
                atexit_registered = 1;
            }
        }
    }
    if (rc == 0 && provided)
        *provided = dsm_rt.thread_level;
    pthread_mutex_unlock(&init_lock);
    return rc;
}

void pshmem_init(void)
{
    if (init_common(SHMEM_THREAD_SINGLE, NULL, "shmem_init"))
        exit(1);
}
DSM_WEAK(init)

int pshmem_init_thread(int requested, int *provided)
{
    return init_common(requested, provided, "shmem_init_thread") ? -1 : 0;
}
DSM_WEAK(init_thread)

void pshmem_query_thread(int *provided)
{
    DSM_CHECK_INIT("shmem_query_thread");
    *provided = dsm_rt.thread_level;
}
DSM_WEAK(query_thread)

int pshmem_query_initialized(int *initialized)
{
    *initialized = dsm_rt.initialized > 0;
    return 0;
}
DSM_WEAK(query_initialized)

void pshmem_finalize(void)
{
    pthread_mutex_lock(&init_lock);
    if (dsm_rt.initialized <= 0 || --dsm_rt.initialized > 0) {
        pthread_mutex_unlock(&init_lock);
        return;
    }
    /* Collective: everything issued completes, every PE arrives, then the
     * resources go. */
    dsm_rt_quiet(&dsm_ctx_default);
    dsm_rt_sync_call(
        DSM_CALL("shmem_finalize", DSM_CALL_FINALIZE, 0, 0, 0, 0));
    /* The barrier's last network signals are delivered before this PE
     * blocks in the bootstrap, where nothing progresses the network. */
    dsm_path_quiet(&dsm_ctx_default);
    dsm_coll_fini();
    dsm_sdma_close(dsm_rt.sdma, dsm_rt.me);
    dsm_rt.sdma = NULL;
    dsm_net_quiesce(); /* peers close their endpoints after the barrier */
    dsm_rt.boot_ops->barrier();
    dsm_paths_fini();
    dsm_net_fini(); /* no PE touches our memory any more */
    dsm_rt_segments_fini();
    pthread_mutex_lock(&dsm_rt.heap_lock);
    dsm_heap_fini(&dsm_rt.heap);
    pthread_mutex_unlock(&dsm_rt.heap_lock);
    dsm_rt.boot_ops->fini();
    dsm_rt.boot_ops = NULL;
    dsm_rt_topo_fini();
    dsm_stall_uninstall();
    dsm_rt.finalized = 1;
    /* Every routine that names a PE now fails its PE check (which then
     * says "after shmem_finalize") instead of reaching the unmapped
     * segments: no cost on the paths that check the PE anyway. */
    dsm_rt.npes = 0;
    pthread_mutex_unlock(&init_lock);
}
DSM_WEAK(finalize)

int pshmem_my_pe(void)
{
    return dsm_rt.initialized > 0 ? dsm_rt.me : -1;
}
DSM_WEAK(my_pe)

int pshmem_n_pes(void)
{
    return dsm_rt.initialized > 0 ? dsm_rt.npes : -1;
}
DSM_WEAK(n_pes)

void pshmem_global_exit(int status)
{
    char msg[96];
    fflush(stdout);
    fflush(stderr);
    snprintf(msg, sizeof(msg), "PE %d called shmem_global_exit(%d)",
             dsm_rt.me, status);
    if (dsm_rt.boot_ops)
        dsm_rt.boot_ops->abort(status, msg);
    _exit(status);
}
DSM_WEAK(global_exit)

void pshmem_info_get_version(int *major, int *minor)
{
    *major = SHMEM_MAJOR_VERSION;
    *minor = SHMEM_MINOR_VERSION;
}
DSM_WEAK(info_get_version)

void pshmem_info_get_name(char *name)
{
    strncpy(name, SHMEM_VENDOR_STRING, SHMEM_MAX_NAME_LEN - 1);
    name[SHMEM_MAX_NAME_LEN - 1] = '\0';
}
DSM_WEAK(info_get_name)

/* Deprecated 1.2 names. */
DSM_API void start_pes(int npes)
{
    (void)npes;
    by_start_pes = 1;
    pshmem_init();
}

DSM_API int _my_pe(void)
{
    return pshmem_my_pe();
}

DSM_API int _num_pes(void)
{
    return pshmem_n_pes();
}
