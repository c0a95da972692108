/*
 * Persistent requests started by GPU kernels (shmemx_req_device,
 * shmemx_dev(3)): the kernel handle, 32 words of device memory with a
 * mirror in pinned host memory, and its two modes. PROXY: the kernel's
 * start and wait are FIFO HOST slots that the proxy thread runs
 * (dsm_dev_host_op: the request's own start and wait). TRIGGER
 * (SHMEM_DEV_REQ_TRIGGER=1): the kernel stores the instance number into
 * the trigger word and polls the done words each gated instance ends with;
 * the handle's counters (posted by the host; started and waited by
 * whoever starts, in the handle and its mirror) replace the request's
 * own, and the device API's proxy thread keeps SHMEM_PRELAUNCH_DEPTH
 * instances posted beyond the last one waited for (dsm_dev_req_poll). The
 * host writes the device handle only when it hands it out and when it
 * starts or waits itself (a synchronous copy each, copy_sync); its threads
 * read the mirror.
 *
 * The request is coll's (src/coll/persistent_int.h); coll reaches what is
 * here only through the operations registered at load (kernel_ops below),
 * so no call goes from coll up into the device API.
 */
#include "devapi/devapi.h"

#include "coll/persistent_int.h"
#include "common/words.h"
#include "runtime/gpu.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Requests in TRIGGER mode, which the device API's proxy thread keeps
 * posted ahead (dsm_dev_req_poll). */
static pthread_mutex_t klock = PTHREAD_MUTEX_INITIALIZER;
static struct dsm_coll_req *klist;
static int nk;

/* The mirror's words are written by the GPU (started, waited) and by the
 * engines (done): read them as the atomics they are for this CPU. */
#define KH_LOAD(r, f) __atomic_load_n(&(r)->kh->f, __ATOMIC_ACQUIRE)
#define KH_STORE(r, f, v) __atomic_store_n(&(r)->kh->f, (v), __ATOMIC_RELEASE)

/* Keep depth instances posted beyond the last one waited for, and retire
 * what the engines finished. Returns 1 when it posted. The proxy calls it
 * with trylock (it must not wait behind a host start). */
static int krepost_locked(struct dsm_coll_req *r)
{
    const uint64_t w = KH_LOAD(r, waited);
    int n = 0;

    for (int i = 0; i < r->plan.nq; i++)
        (void)dsm_sdma_queue_help(r->q[i]);
    while (r->posted < w + (uint64_t)r->depth) {
        dsm_persist_post_next(r);
        n++;
    }
    if (n)
        KH_STORE(r, posted, r->posted);
    return n != 0;
}

static void krepost(struct dsm_coll_req *r)
{
    pthread_mutex_lock(&r->plock);
    krepost_locked(r);
    pthread_mutex_unlock(&r->plock);
}

/* Device handles: chunks of dev_words, never given back (a stream may
 * wait on a trigger in one until the backend closes), reused through a
 * free list. */
#define KD_WORDS (sizeof(shmemx_dev_req_t) / sizeof(uint64_t))
#define KD_CHUNK 16
static shmemx_dev_req_t **kd_free;
static int kd_nfree, kd_cap;

static shmemx_dev_req_t *kd_get(const dsm_sdma_gpu_ops_t *g)
{
    shmemx_dev_req_t *d = NULL;
    pthread_mutex_lock(&klock);
    if (!kd_nfree) {
        uint64_t *w = g->dev_words(KD_WORDS * KD_CHUNK);
        shmemx_dev_req_t **f =
            w ? realloc(kd_free, (size_t)(kd_cap + KD_CHUNK) * sizeof(*f))
              : NULL;
        if (f) {
            kd_free = f;
            kd_cap += KD_CHUNK;
            for (int i = 0; i < KD_CHUNK; i++)
                kd_free[kd_nfree++] = (shmemx_dev_req_t *)(w + i * KD_WORDS);
        }
    }
    if (kd_nfree)
        d = kd_free[--kd_nfree];
    pthread_mutex_unlock(&klock);
    return d;
}

static void kd_put(shmemx_dev_req_t *d)
{
    pthread_mutex_lock(&klock);
    kd_free[kd_nfree++] = d; /* kd_cap covers every handle made */
    pthread_mutex_unlock(&klock);
}

/* Write n words of r's device handle from field f on. */
#define KD_WRITE(r, f, v, n)                                                   \
    kd_write((r), offsetof(shmemx_dev_req_t, f) / sizeof(uint64_t), (v), (n))
static void kd_write(struct dsm_coll_req *r, size_t off, const uint64_t *v,
                     size_t n)
{
    const dsm_sdma_gpu_ops_t *g = dsm_sdma_gpu(dsm_rt.sdma);
    if (g->copy_sync((uint64_t *)r->kd + off, v, n * sizeof(uint64_t)) !=
        DSM_OK)
        dsm_rt_fatal(r->routine, "cannot write the kernel handle of request "
                     "%p in GPU memory", (void *)r);
}

static void kd_trigger(struct dsm_coll_req *r, uint64_t k)
{
    KD_WRITE(r, trig, &k, 1);
}

/* The host's start and wait of a request in TRIGGER mode: the kernel's
 * protocol (shmemx_cuda.h), on the mirror's counters, then the handle's. */
static int kstart(struct dsm_coll_req *r)
{
    uint64_t k = KH_LOAD(r, started) + 1;
    if (k != KH_LOAD(r, waited) + 1) {
        dsm_debug("shmemx_req_start: the request is active (started without "
                  "shmemx_req_wait)");
        return -1;
    }
    while (KH_LOAD(r, posted) < k)
        krepost(r);
    KH_STORE(r, started, k);
    /* started, waited, and (a team of one) the trigger in one copy. */
    const uint64_t v[3] = {k, k - 1, k};
    KD_WRITE(r, started, v, r->dtrig ? 3 : 2);
    if (!r->dtrig)
        dsm_persist_fire(r, k);
    return 0;
}

static int kdone(void *v)
{
    struct dsm_coll_req *r = v;
    const uint64_t k = KH_LOAD(r, started);
    for (int i = 0; i < r->plan.nq; i++) {
        (void)dsm_sdma_queue_help(r->q[i]);
        if (KH_LOAD(r, done[i]) < k)
            return 0;
    }
    return 1;
}

/* Until the engines' done words reach the started instance. */
static void kdone_wait(struct dsm_coll_req *r)
{
    dsm_backoff_t b = {0};
    while (!kdone(r))
        dsm_backoff(&b, &dsm_rt.ctrl->wake_app, kdone, r);
}

static void kwait(struct dsm_coll_req *r)
{
    const uint64_t k = KH_LOAD(r, started);

    if (k == KH_LOAD(r, waited))
        return;
    kdone_wait(r);
    KD_WRITE(r, waited, &k, 1);
    KH_STORE(r, waited, k);
    krepost(r);
}

/* SHMEM_DEBUG: a request in TRIGGER mode with an instance in flight (or
 * instances to post) and nothing moving for 10 s says once where it stands (the counters, the
 * trigger word, each queue's completed sequence against the instance's). */
static void kstall_check(struct dsm_coll_req *r)
{
    const uint64_t s = KH_LOAD(r, started), w = KH_LOAD(r, waited),
                   p = KH_LOAD(r, posted), now = dsm_now_ns();
    /* Stalled: an instance in flight, or one to post that is not. */
    if (s != r->kseen[0] || w != r->kseen[1] || p != r->kseen[2] ||
        (s == w && p >= w + (uint64_t)r->depth)) {
        r->kseen[0] = s;
        r->kseen[1] = w;
        r->kseen[2] = p;
        r->kseen_ns = now;
        return;
    }
    if (!r->kseen_ns || now - r->kseen_ns < 10000000000ull)
        return;
    r->kseen_ns = 0; /* once */
    const dsm_inst_t *in = &r->inst[s % (uint64_t)r->nslots];
    char tw[40] = "in GPU memory";
    if (!r->dtrig)
        snprintf(tw, sizeof(tw), "%llu",
                 (unsigned long long)__atomic_load_n(r->trigger,
                                                     __ATOMIC_ACQUIRE));
    dsm_debug("%s: kernel-triggered request stalled 10 s: posted %llu, "
              "started %llu, waited %llu (the mirror's), trigger word %s",
              r->routine, (unsigned long long)p, (unsigned long long)s,
              (unsigned long long)w, tw);
    for (int i = 0; i < r->plan.nq; i++)
        dsm_debug("%s: stalled: queue %d done word %llu, completed %llu, "
                  "instance's sequence %llu", r->routine, i,
                  (unsigned long long)KH_LOAD(r, done[i]),
                  (unsigned long long)dsm_sdma_queue_help(r->q[i]),
                  (unsigned long long)in->seq[i]);
}

int dsm_dev_req_poll(void)
{
    int busy = 0;

    if (!__atomic_load_n(&nk, __ATOMIC_ACQUIRE))
        return 0;
    pthread_mutex_lock(&klock);
    for (struct dsm_coll_req *r = klist; r; r = r->knext) {
        if (KH_LOAD(r, started) != KH_LOAD(r, waited))
            busy = 1; /* an instance in flight: its wait comes soon */
        if (DSM_UNLIKELY(dsm_env.debug))
            kstall_check(r);
        if (r->posted < KH_LOAD(r, waited) + (uint64_t)r->depth) {
            busy = 1;
            if (!pthread_mutex_trylock(&r->plock)) {
                krepost_locked(r);
                pthread_mutex_unlock(&r->plock);
            }
        }
    }
    pthread_mutex_unlock(&klock);
    return busy;
}

/* A handle for r's kernels in device memory, done words included, and
 * its mirror (pinned, mapped). -1 when this backend cannot give kernels
 * words (no GPU, hsa). */
static int kh_alloc(struct dsm_coll_req *r)
{
    const dsm_sdma_gpu_ops_t *g = dsm_sdma_gpu(dsm_rt.sdma);
    const size_t n = sizeof(shmemx_dev_req_host_t) / sizeof(uint64_t);
    uint64_t *w;

    if (!g || !g->word_view || !g->dev_words)
        return -1;
    w = dsm_words_alloc(n);
    if (!w)
        return -1;
    /* Every page it spans (blocks of one size class may cross one). */
    r->kh_gpu = g->word_view(w);
    if (!r->kh_gpu || !g->word_view(w + n - 1) ||
        g->word_view(w + n - 1) - r->kh_gpu != (n - 1) * sizeof(uint64_t) ||
        !(r->kd = kd_get(g))) {
        dsm_words_free(w, n);
        r->kh_gpu = 0;
        return -1;
    }
    r->kh = (shmemx_dev_req_host_t *)w;
    /* The whole handle: a reused one keeps its last request's words. */
    const shmemx_dev_req_t img = {.mode = SHMEMX_DEV_REQ_PROXY,
                                  .req = (uint64_t)(uintptr_t)r,
                                  .host = r->kh_gpu};
    kd_write(r, 0, (const uint64_t *)&img, KD_WORDS);
    return 0;
}

static void kh_free(struct dsm_coll_req *r)
{
    if (r->kh)
        dsm_words_free((uint64_t *)r->kh,
                       sizeof(shmemx_dev_req_host_t) / sizeof(uint64_t));
    if (r->kd)
        kd_put(r->kd);
    r->kh = NULL;
    r->kd = NULL;
    r->dtrig = NULL;
}

void dsm_dev_host_op(uint64_t what, uint64_t arg)
{
    shmemx_req_t req = (shmemx_req_t)(uintptr_t)arg;
    if (what == SHMEMX_DEV_HOST_REQ_START)
        dsm_persist_req_kernel(req, 0, "shmemx_dev_req_start");
    else if (what == SHMEMX_DEV_HOST_REQ_WAIT)
        dsm_persist_req_kernel(req, 1, "shmemx_dev_req_wait");
    else
        dsm_rt_fatal("shmemx_dev_get", "a kernel wrote an unknown host "
                     "request %llu into the device API's FIFO",
                     (unsigned long long)what);
}

shmemx_dev_req_t *pshmemx_req_device(shmemx_req_t req)
{
    static const char rn[] = "shmemx_req_device";
    struct dsm_coll_req *r = dsm_persist_req_check(req, rn);
    const dsm_sdma_gpu_ops_t *g = dsm_rt_need_gpu(rn);
    dsm_plan_t *p = &r->plan;

    if (!g->word_view || !g->dev_words)
        dsm_rt_fatal(rn, "the %s backend cannot hand persistent requests to "
                     "kernels", g->name);
    if (r->khanded)
        return r->kd; /* handed out */
    if (r->started != r->completed)
        dsm_rt_fatal(rn, "request %p is active (started without "
                     "shmemx_req_wait)", (void *)r);
    /* Trigger mode only where asked for (SHMEM_DEV_REQ_TRIGGER=1): on the
     * H200 a kernel launched while instances waited behind their trigger
     * did not run (shmemx_dev(3); docs/PERFORMANCE-HISTORY.md,
     * 2026-12-02). */
    const int allow = dsm_env.dev_req_trigger;
    int trig = allow && r->kh != NULL; /* dsync DEV, posted ahead */
    if (allow && !r->t && !r->lazy &&
        (!p->local.len ||
         (g->gpu_view(p->local.dst) && g->gpu_view(p->local.src)))) {
        /* A team of one: its block moves by an engine chain of its own
         * (WAIT trigger, COPY, SIGNAL done) instead of at each start. */
        if (!r->kh && kh_alloc(r))
            dsm_rt_fatal(rn, "cannot make a request handle in GPU memory");
        p->algo = DSM_ALGO_PCPY;
        p->nq = 1;
        r->q[0] = dsm_persist_queue_get(0, rn);
        p->kdone = r->kd->done;
        p->kdone_host = r->kh->done;
        /* Its chain waits on a trigger in GPU memory: the kernel's store
         * stays on the GPU, the stream's wait polls no host memory. */
        if (strcmp(dsm_env.dev_req_trigger_word, "host"))
            r->dtrig = &r->kd->trig;
        trig = 1;
    } else if (!r->kh && kh_alloc(r)) {
        dsm_rt_fatal(rn, "cannot make a request handle in GPU memory");
    }
    shmemx_dev_req_host_t *h = r->kh;
    r->khanded = 1;
    if (!trig) {
        dsm_debug("%s: request %p is started by the proxy thread (%s)", rn,
                  (void *)r,
                  !allow       ? "SHMEM_DEV_REQ_TRIGGER=0"
                  : r->lazy    ? "nothing posted ahead"
                  : r->at_wait ? "members on other nodes"
                               : "its start stores ready values");
        return r->kd;
    }
    /* What hung on the H200 (shmemx_dev(3)): say it once. The backend
     * asks its driver (CUDA_MODULE_LOADING, LAZY by default). */
    static int lazy_said;
    if (g->lazy_loading && g->lazy_loading() &&
        !__atomic_exchange_n(&lazy_said, 1, __ATOMIC_RELAXED))
        dsm_log_warn("%s: trigger mode with lazy module loading "
                     "(CUDA_MODULE_LOADING unset or LAZY): the first launch "
                     "of a kernel does not return while instances wait "
                     "behind their trigger; set CUDA_MODULE_LOADING=EAGER "
                     "or launch every kernel once before this call "
                     "(shmemx_dev(3))",
                     rn);
    /* The handle's fixed part and counters, then the mode last. */
    shmemx_dev_req_t img = {.mode = SHMEMX_DEV_REQ_PROXY,
                            .req = (uint64_t)(uintptr_t)r,
                            .trigger = r->dtrig ? (uint64_t)(uintptr_t)r->dtrig
                                                : g->word_view(r->trigger),
                            .nq = (uint64_t)p->nq,
                            .started = r->started,
                            .waited = r->started,
                            .trig = r->started,
                            .host = r->kh_gpu};
    if (!img.trigger)
        dsm_rt_fatal(rn, "cannot map the request's trigger word for the GPU");
    for (int i = 0; i < p->nq; i++)
        img.done[i] = r->started;
    h->started = h->waited = r->started;
    h->posted = r->posted;
    for (int i = 0; i < p->nq; i++)
        h->done[i] = r->started;
    kd_write(r, 0, (const uint64_t *)&img, KD_WORDS);
    const uint64_t mode = SHMEMX_DEV_REQ_TRIGGER;
    KD_WRITE(r, mode, &mode, 1);
    r->kmode = 1;
    krepost(r);
    dsm_persist_ahead(r);
    pthread_mutex_lock(&klock);
    r->knext = klist;
    klist = r;
    __atomic_store_n(&nk, nk + 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&klock);
    dsm_debug("%s: request %p is started by a store from kernels, %d "
              "instance(s) posted ahead on %d queue(s)", rn, (void *)r,
              r->depth, p->nq);
    return r->kd;
}
DSM_WEAKX(req_device)

/* Out of the proxy's list, and back to the host's counters: the started
 * instance is waited for (release). */
static void kmode_end(struct dsm_coll_req *r)
{
    pthread_mutex_lock(&klock);
    struct dsm_coll_req **pp = &klist;
    while (*pp && *pp != r)
        pp = &(*pp)->knext;
    if (*pp) {
        *pp = r->knext;
        __atomic_store_n(&nk, nk - 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&klock);
    pthread_mutex_lock(&r->plock);
    pthread_mutex_unlock(&r->plock);
    if (KH_LOAD(r, started) != KH_LOAD(r, waited))
        kdone_wait(r);
    r->started = r->completed = KH_LOAD(r, started);
    r->kmode = 0;
}

/* coll's way to the kernel handles (persistent_int.h), registered before
 * any request exists. */
static const dsm_coll_kernel_ops_t kernel_ops = {
    .size = sizeof(dsm_coll_kernel_ops_t),
    .kh_alloc = kh_alloc,
    .kh_free = kh_free,
    .kd_trigger = kd_trigger,
    .kstart = kstart,
    .kwait = kwait,
    .kmode_end = kmode_end,
};

static void __attribute__((constructor)) kernel_ops_register(void)
{
    dsm_coll_kernel_register(&kernel_ops);
}
