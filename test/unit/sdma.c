/*
 * The DMA command layer with the cpu backend (src/sdma): ordering within a
 * queue, batching (one post = one doorbell), prelaunched chains behind a
 * trigger, monotonic completion sequences, queues smaller than what is
 * posted, BCAST/SWAP/SIGNAL/SIGNAL_ADD semantics, requests from several
 * threads at once, asynchronous progress by the engine and proxy
 * threads, and the waits handed to the runtime's wait (a queue's commands
 * retired, room in the request ring) with what they wait for.
 */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "sdma/backend.h"
#if DSM_BUILD_CUDA
#include "sdma/cuda/cuda_int.h"
#endif

static dsm_wake_t wake, app_wake;
/* The wait open_layer's layers hand their waits to (cfg.wait), or NULL. */
static void (*layer_wait)(const char *,
                          void (*)(const void *, char *, size_t),
                          const void *, int (*)(void *), void *);

static dsm_sdma_t *open_layer(int engines, uint64_t depth, uint64_t rdepth,
                              int proxy)
{
    dsm_sdma_config_t cfg = {
        .engines = engines,
        .depth = depth,
        .req_depth = rdepth,
        .stats = 0,
        .proxy_thread = proxy,
        .wake = &wake,
        .app_wake = &app_wake,
        .backend = "cpu",
        .wait = layer_wait,
    };
    dsm_sdma_t *s = NULL;
    ck_assert_int_eq(dsm_sdma_open(&cfg, &s), DSM_OK);
    ck_assert_ptr_nonnull(s);
    ck_assert_str_eq(dsm_sdma_backend_name(s), "cpu");
    ck_assert_int_eq(dsm_sdma_num_engines(s), engines);
    return s;
}

static dsm_cmd_t copy_cmd(const void *src, void *dst, size_t len)
{
    return (dsm_cmd_t){.op = DSM_CMD_COPY,
                       .u.copy = {.src = src, .dst = dst, .len = len}};
}

static dsm_cmd_t sig_cmd(int op, uint64_t *word, uint64_t value)
{
    return (dsm_cmd_t){.op = (uint8_t)op, .u.sig = {.word = word, .value = value}};
}

static double now_s(void)
{
    return (double)dsm_now_ns() * 1e-9;
}

#if DSM_BUILD_CUDA
/* The cuda backend's table of its own memory ranges (memkind.c) answers
 * without a driver call; it dropped every range past 256 silently (#14).
 * 3000 ranges: each is found, with its kind and offset, and addresses
 * between them are not. No driver is needed for ranges it holds. */
START_TEST(test_cuda_ranges_grow)
{
    static char area[3000 * 64];
    for (int i = 0; i < 3000; i++)
        dsm_cuda_add_range((uintptr_t)&area[i * 64], 32,
                           i % 2 ? DSM_CUDA_HOSTREG : DSM_CUDA_DEV, i);
    for (int i = 0; i < 3000; i += 7) {
        intptr_t delta = -1;
        int kind = dsm_cuda_classify(&area[i * 64 + 31], &delta);
        ck_assert_int_eq(kind, i % 2 ? DSM_CUDA_HOSTREG : DSM_CUDA_DEV);
        ck_assert_int_eq((int)delta, i);
    }
}
END_TEST
#endif

START_TEST(test_open_invalid)
{
    dsm_sdma_config_t cfg = {.engines = 1, .depth = 24, .req_depth = 16,
                             .wake = &wake, .backend = "cpu"};
    dsm_sdma_t *s = NULL;
    ck_assert_int_eq(dsm_sdma_open(&cfg, &s), DSM_ERR_INVAL);
    cfg.depth = 16;
    cfg.engines = 0;
    ck_assert_int_eq(dsm_sdma_open(&cfg, &s), DSM_ERR_INVAL);
    cfg.engines = 1;
    cfg.req_depth = 0;
    ck_assert_int_eq(dsm_sdma_open(&cfg, &s), DSM_ERR_INVAL);
    cfg.req_depth = 16;
    cfg.backend = "no-such-backend";
    ck_assert_int_ne(dsm_sdma_open(&cfg, &s), DSM_OK);
    ck_assert_ptr_null(s);
    s = open_layer(2, 16, 16, 0);
    dsm_sdma_queue_t *q;
    ck_assert_int_eq(dsm_sdma_queue_create(s, 2, &q), DSM_ERR_INVAL);
    ck_assert_int_eq(dsm_sdma_queue_create(s, -1, &q), DSM_ERR_INVAL);
    uint32_t caps = dsm_sdma_caps(s);
    ck_assert(caps & DSM_SDMA_CAP_HOST_MEM);
    ck_assert(caps & DSM_SDMA_CAP_BCAST_NATIVE);
    ck_assert(caps & DSM_SDMA_CAP_SWAP_NATIVE);
    dsm_sdma_close(s, 0);
}
END_TEST

/* Commands of one queue run in order: a chain of dependent copies and
 * repeated writes to one word, all in one post. */
START_TEST(test_order)
{
    dsm_sdma_t *s = open_layer(1, 64, 64, 0);
    dsm_sdma_queue_t *q;
    ck_assert_int_eq(dsm_sdma_queue_create(s, 0, &q), DSM_OK);
    enum { HOPS = 40 };
    static unsigned char buf[HOPS + 1][1000];
    uint64_t word = 0, vals[HOPS];
    dsm_cmd_t cmds[2 * HOPS];
    memset(buf, 0, sizeof(buf));
    for (int b = 0; b < 1000; b++)
        buf[0][b] = (unsigned char)(b * 7 + 3);
    for (int i = 0; i < HOPS; i++) {
        vals[i] = (uint64_t)i + 100;
        cmds[2 * i] = copy_cmd(buf[i], buf[i + 1], 1000);
        cmds[2 * i + 1] = copy_cmd(&vals[i], &word, sizeof(word));
    }
    uint64_t seq = dsm_sdma_post(q, cmds, 2 * HOPS);
    ck_assert_uint_eq(seq, 2 * HOPS);
    dsm_sdma_queue_wait(q, seq);
    ck_assert_int_eq(memcmp(buf[HOPS], buf[0], 1000), 0);
    ck_assert_uint_eq(word, HOPS - 1 + 100);
    dsm_sdma_close(s, 0);
}
END_TEST

START_TEST(test_batching)
{
    dsm_sdma_t *s = open_layer(1, 64, 64, 0);
    dsm_sdma_queue_t *q;
    ck_assert_int_eq(dsm_sdma_queue_create(s, 0, &q), DSM_OK);
    uint64_t src[10], dst[10] = {0};
    dsm_cmd_t cmds[10];
    for (int i = 0; i < 10; i++) {
        src[i] = (uint64_t)i * 3 + 1;
        cmds[i] = copy_cmd(&src[i], &dst[i], sizeof(uint64_t));
    }
    uint64_t b0 = q->stats.batches, c0 = q->stats.commands;
    uint64_t seq = dsm_sdma_post(q, cmds, 10);
    ck_assert_uint_eq(q->stats.batches - b0, 1);
    ck_assert_uint_eq(q->stats.commands - c0, 10);
    dsm_sdma_queue_wait(q, seq);
    for (int i = 0; i < 10; i++)
        ck_assert_uint_eq(dst[i], src[i]);
    /* Ten posts of one: ten doorbells. */
    for (int i = 0; i < 10; i++)
        seq = dsm_sdma_post(q, &cmds[i], 1);
    ck_assert_uint_eq(q->stats.batches - b0, 11);
    ck_assert_uint_eq(q->stats.commands - c0, 20);
    dsm_sdma_queue_wait(q, seq);
    dsm_sdma_close(s, 0);
}
END_TEST

/* A chain WAIT(trigger >= 1), COPY, SIGNAL posted ahead does nothing until
 * the trigger fires, then completes; a second chain behind it waits for
 * trigger >= 2. */
START_TEST(test_chain_trigger)
{
    dsm_sdma_t *s = open_layer(1, 64, 64, 0);
    dsm_sdma_queue_t *q;
    ck_assert_int_eq(dsm_sdma_queue_create(s, 0, &q), DSM_OK);
    static uint64_t trig, flag, flag2;
    char src[256], dst[256], dst2[256];
    memset(src, 'S', sizeof(src));
    memset(dst, 0, sizeof(dst));
    memset(dst2, 0, sizeof(dst2));
    trig = flag = flag2 = 0;
    dsm_cmd_t chain[] = {
        sig_cmd(DSM_CMD_WAIT, &trig, 1),
        copy_cmd(src, dst, sizeof(src)),
        sig_cmd(DSM_CMD_SIGNAL, &flag, 1),
        sig_cmd(DSM_CMD_WAIT, &trig, 2),
        copy_cmd(src, dst2, sizeof(src)),
        sig_cmd(DSM_CMD_SIGNAL, &flag2, 7),
    };
    uint64_t base = dsm_sdma_queue_completed(q);
    uint64_t seq1 = dsm_sdma_post(q, chain, 3);
    uint64_t seq2 = dsm_sdma_post(q, chain + 3, 3);
    /* Engines and helpers run for a while: nothing may pass the gate. */
    double t0 = now_s();
    while (now_s() - t0 < 0.05)
        dsm_sdma_progress(s, 1);
    ck_assert_uint_eq(__atomic_load_n(&flag, __ATOMIC_ACQUIRE), 0);
    ck_assert_int_eq(dst[0], 0);
    ck_assert_uint_eq(dsm_sdma_queue_completed(q), base);

    dsm_sdma_trigger(s, &trig, 1, &wake);
    dsm_sdma_queue_wait(q, seq1);
    ck_assert_uint_eq(flag, 1);
    ck_assert_int_eq(memcmp(dst, src, sizeof(src)), 0);
    t0 = now_s();
    while (now_s() - t0 < 0.02)
        dsm_sdma_progress(s, 1);
    ck_assert_uint_eq(dsm_sdma_queue_completed(q), seq1);
    ck_assert_uint_eq(flag2, 0);
    ck_assert_int_eq(dst2[0], 0);

    dsm_sdma_trigger(s, &trig, 2, &wake);
    dsm_sdma_queue_wait(q, seq2);
    ck_assert_uint_eq(flag2, 7);
    ck_assert_int_eq(memcmp(dst2, src, sizeof(src)), 0);
    dsm_sdma_close(s, 0);
}
END_TEST

/* A gated queue blocks only itself: the RMA queue of the same engine still
 * runs. */
START_TEST(test_chain_isolation)
{
    dsm_sdma_t *s = open_layer(1, 64, 64, 0);
    dsm_sdma_queue_t *gated, *other;
    ck_assert_int_eq(dsm_sdma_queue_create(s, 0, &gated), DSM_OK);
    ck_assert_int_eq(dsm_sdma_queue_create(s, 0, &other), DSM_OK);
    static uint64_t trig, a, b;
    trig = a = b = 0;
    dsm_cmd_t g[] = {sig_cmd(DSM_CMD_WAIT, &trig, 1),
                     sig_cmd(DSM_CMD_SIGNAL, &a, 1)};
    dsm_cmd_t o = sig_cmd(DSM_CMD_SIGNAL, &b, 1);
    uint64_t gs = dsm_sdma_post(gated, g, 2);
    uint64_t os = dsm_sdma_post(other, &o, 1);
    dsm_sdma_queue_wait(other, os);
    ck_assert_uint_eq(b, 1);
    ck_assert_uint_eq(a, 0);
    dsm_sdma_trigger(s, &trig, 1, &wake);
    dsm_sdma_queue_wait(gated, gs);
    ck_assert_uint_eq(a, 1);
    dsm_sdma_close(s, 0);
}
END_TEST

START_TEST(test_monotonic)
{
    dsm_sdma_t *s = open_layer(1, 16, 16, 0);
    dsm_sdma_queue_t *q;
    ck_assert_int_eq(dsm_sdma_queue_create(s, 0, &q), DSM_OK);
    static char src[4096], dst[4096];
    uint64_t last = dsm_sdma_queue_completed(q), seq = 0;
    dsm_cmd_t c = copy_cmd(src, dst, sizeof(src));
    for (int i = 0; i < 2000; i++) {
        seq = dsm_sdma_post(q, &c, 1);
        ck_assert_uint_eq(seq, (uint64_t)i + 1);
        uint64_t now = dsm_sdma_queue_completed(q);
        ck_assert_msg(now >= last, "completion went back: %llu < %llu",
                      (unsigned long long)now, (unsigned long long)last);
        ck_assert_uint_le(now, seq);
        last = now;
        if (i % 7 == 0)
            dsm_sdma_progress(s, i % 2);
    }
    dsm_sdma_queue_wait(q, seq);
    ck_assert_uint_eq(dsm_sdma_queue_completed(q), seq);
    ck_assert_uint_eq(q->retired, seq);
    dsm_sdma_close(s, 0);
}
END_TEST

/* Posting far more than the queue depth in one call completes: the poster
 * rings, retires and reuses slots. The counter (SIGNAL_ADD) sees every
 * command exactly once. */
START_TEST(test_full_queue)
{
    dsm_sdma_t *s = open_layer(1, 16, 16, 0);
    dsm_sdma_queue_t *q;
    ck_assert_int_eq(dsm_sdma_queue_create(s, 0, &q), DSM_OK);
    enum { N = 1000 };
    static uint64_t src[N], dst[N], counter;
    static dsm_cmd_t cmds[2 * N];
    counter = 0;
    for (int i = 0; i < N; i++) {
        src[i] = (uint64_t)i * 11 + 5;
        dst[i] = 0;
        cmds[2 * i] = copy_cmd(&src[i], &dst[i], sizeof(uint64_t));
        cmds[2 * i + 1] = sig_cmd(DSM_CMD_SIGNAL_ADD, &counter, 1);
    }
    uint64_t seq = dsm_sdma_post(q, cmds, 2 * N);
    ck_assert_uint_eq(seq, 2 * N);
    ck_assert_uint_gt(q->stats.batches, 1); /* it had to ring early */
    dsm_sdma_queue_wait(q, seq);
    ck_assert_uint_eq(counter, N);
    for (int i = 0; i < N; i++)
        ck_assert_uint_eq(dst[i], src[i]);
    /* Through the request ring too (depth 16 as well). */
    counter = 0;
    uint64_t done = 0;
    for (int i = 0; i < N; i++) {
        dsm_cmd_t c = sig_cmd(DSM_CMD_SIGNAL_ADD, &counter, 2);
        c.done = &done;
        dsm_sdma_request(s, 0, &c);
    }
    double t0 = now_s();
    while (__atomic_load_n(&done, __ATOMIC_ACQUIRE) < N) {
        dsm_sdma_progress(s, 1);
        ck_assert_msg(now_s() - t0 < 20, "requests stuck at %llu",
                      (unsigned long long)done);
    }
    ck_assert_uint_eq(done, N);
    ck_assert_uint_eq(counter, 2 * N);
    dsm_sdma_close(s, 0);
}
END_TEST

START_TEST(test_bcast_swap_signal)
{
    dsm_sdma_t *s = open_layer(1, 64, 64, 0);
    dsm_sdma_queue_t *q;
    ck_assert_int_eq(dsm_sdma_queue_create(s, 0, &q), DSM_OK);
    enum { L = 10000 }; /* larger than the backend's swap chunk */
    static unsigned char src[L], d1[L], d2[L], a[L], b[L], a0[L], b0[L];
    static uint64_t w1, w2;
    for (int i = 0; i < L; i++) {
        src[i] = (unsigned char)(i * 13 + 1);
        a[i] = a0[i] = (unsigned char)(i * 5 + 2);
        b[i] = b0[i] = (unsigned char)(i * 3 + 7);
    }
    memset(d1, 0, L);
    memset(d2, 0, L);
    w1 = 5;
    w2 = 0;
    dsm_cmd_t cmds[] = {
        {.op = DSM_CMD_BCAST, .u.copy = {.src = src, .dst = d1, .dst2 = d2,
                                         .len = L - 1}},
        {.op = DSM_CMD_SWAP, .u.copy = {.src = a, .dst = b, .len = L}},
        sig_cmd(DSM_CMD_SIGNAL_ADD, &w1, 3),
        sig_cmd(DSM_CMD_SIGNAL_ADD, &w1, 4),
        sig_cmd(DSM_CMD_SIGNAL, &w2, 9),
        sig_cmd(DSM_CMD_SIGNAL, &w2, 4), /* a set, not a max */
        {.op = DSM_CMD_NOP},
    };
    uint64_t seq = dsm_sdma_post(q, cmds, sizeof(cmds) / sizeof(cmds[0]));
    dsm_sdma_queue_wait(q, seq);
    ck_assert_int_eq(memcmp(d1, src, L - 1), 0);
    ck_assert_int_eq(memcmp(d2, src, L - 1), 0);
    ck_assert_int_eq(d1[L - 1], 0);
    ck_assert_int_eq(d2[L - 1], 0);
    ck_assert_int_eq(memcmp(a, b0, L), 0);
    ck_assert_int_eq(memcmp(b, a0, L), 0);
    ck_assert_uint_eq(w1, 12);
    ck_assert_uint_eq(w2, 4);
    /* Swapping back restores both. */
    seq = dsm_sdma_post(q, &cmds[1], 1);
    dsm_sdma_queue_wait(q, seq);
    ck_assert_int_eq(memcmp(a, a0, L), 0);
    ck_assert_int_eq(memcmp(b, b0, L), 0);
    dsm_sdma_close(s, 0);
}
END_TEST

/* Four threads issue requests at once through the lock-free ring; every
 * request is executed and retired exactly once. */
#define NTHREADS 4
#define NREQ 5000
typedef struct {
    dsm_sdma_t *s;
    int t;
    uint64_t src[NREQ], dst[NREQ];
    uint64_t done;
} req_arg_t;

static void *req_thread(void *p)
{
    req_arg_t *a = p;
    for (int i = 0; i < NREQ; i++) {
        a->src[i] = ((uint64_t)a->t << 32) | (uint64_t)i;
        dsm_cmd_t c = copy_cmd(&a->src[i], &a->dst[i], sizeof(uint64_t));
        c.done = &a->done;
        dsm_sdma_request(a->s, i % dsm_sdma_num_engines(a->s), &c);
    }
    return NULL;
}

static void run_threads(int proxy)
{
    dsm_sdma_t *s = open_layer(2, 64, 64, proxy);
    static req_arg_t args[NTHREADS];
    pthread_t th[NTHREADS];
    memset(args, 0, sizeof(args));
    for (int t = 0; t < NTHREADS; t++) {
        args[t].s = s;
        args[t].t = t + 1;
        ck_assert_int_eq(pthread_create(&th[t], NULL, req_thread, &args[t]), 0);
    }
    for (int t = 0; t < NTHREADS; t++)
        pthread_join(th[t], NULL);
    double t0 = now_s();
    for (;;) {
        uint64_t sum = 0;
        for (int t = 0; t < NTHREADS; t++)
            sum += __atomic_load_n(&args[t].done, __ATOMIC_ACQUIRE);
        if (sum == (uint64_t)NTHREADS * NREQ)
            break;
        ck_assert_uint_lt(sum, (uint64_t)NTHREADS * NREQ + 1);
        ck_assert_msg(now_s() - t0 < 30, "stuck at %llu of %d",
                      (unsigned long long)sum, NTHREADS * NREQ);
        if (!proxy)
            dsm_sdma_progress(s, 1);
    }
    for (int t = 0; t < NTHREADS; t++) {
        ck_assert_uint_eq(args[t].done, NREQ);
        for (int i = 0; i < NREQ; i++)
            ck_assert_uint_eq(args[t].dst[i], args[t].src[i]);
    }
    dsm_sdma_close(s, 0);
    /* Nothing retired twice after close either. */
    for (int t = 0; t < NTHREADS; t++)
        ck_assert_uint_eq(args[t].done, NREQ);
}

START_TEST(test_threads)
{
    run_threads(0);
}
END_TEST

START_TEST(test_threads_proxy)
{
    run_threads(1);
}
END_TEST

/* A request completes without the caller calling progress: with the proxy
 * thread (proxy_thread = 1), and with the cpu engines taking the proxy's
 * role (0: no proxy thread; -1: as the backend prefers, which for cpu is
 * no proxy thread either). */
static void async_request(int proxy)
{
    dsm_sdma_t *s = open_layer(1, 64, 64, proxy);
    static uint64_t src = 0xfeedface, dst, flag;
    dst = flag = 0;
    ck_assert_int_eq(s->proxy_running, proxy > 0);
    /* Let the proxy and the engine go to sleep first. */
    usleep(300000);
    dsm_cmd_t c = copy_cmd(&src, &dst, sizeof(src));
    c.done = &flag;
    dsm_sdma_request(s, 0, &c);
    double t0 = now_s();
    while (!__atomic_load_n(&flag, __ATOMIC_ACQUIRE)) {
        ck_assert_msg(now_s() - t0 < 5, "the request did not complete "
                      "without the caller's progress (proxy_thread %d)", proxy);
        usleep(100);
    }
    ck_assert_uint_eq(dst, src);
    ck_assert_uint_eq(s->proxy_stats.requests, 1);
    dsm_sdma_close(s, 0);
}

START_TEST(test_proxy_async)
{
    async_request(1);
}
END_TEST

START_TEST(test_engine_proxy_async)
{
    async_request(0);
    async_request(-1);
}
END_TEST

/* Without the proxy, engine threads still execute posted commands (the
 * completed sequence advances) with nobody calling progress. */
START_TEST(test_engine_async)
{
    dsm_sdma_t *s = open_layer(1, 64, 64, 0);
    dsm_sdma_queue_t *q;
    ck_assert_int_eq(dsm_sdma_queue_create(s, 0, &q), DSM_OK);
    static uint64_t w;
    w = 0;
    usleep(300000);
    dsm_cmd_t c = sig_cmd(DSM_CMD_SIGNAL, &w, 3);
    uint64_t seq = dsm_sdma_post(q, &c, 1);
    double t0 = now_s();
    while (__atomic_load_n(&w, __ATOMIC_ACQUIRE) != 3) {
        ck_assert_msg(now_s() - t0 < 5, "the engine thread did not run");
        usleep(100);
    }
    t0 = now_s();
    while (q->sdma->ops->poll(q, 0) < seq) {
        ck_assert_msg(now_s() - t0 < 5, "completion not reported");
        usleep(100);
    }
    dsm_sdma_close(s, 0);
}
END_TEST

/* A runtime's wait (cfg.wait) gets the layer's waits that do not end at
 * once, with what they wait for: hook_wait records its calls and the
 * description, checks the condition does not hold yet, runs `release`
 * (what lets the wait end), then waits for the condition. */
static struct {
    int calls, held_before;
    const char *routine;
    char text[256];
    void (*release)(void);
} hook;

static void hook_wait(const char *routine,
                      void (*describe)(const void *, char *, size_t),
                      const void *darg, int (*cond)(void *), void *arg)
{
    hook.calls++;
    hook.routine = routine;
    describe(darg, hook.text, sizeof(hook.text));
    hook.held_before = cond(arg);
    hook.release();
    double t0 = now_s();
    while (!cond(arg))
        ck_assert_msg(now_s() - t0 < 20, "the wait did not end: %s",
                      hook.text);
}

static uint64_t hook_trig;
static dsm_sdma_t *hook_layer;
static void release_trigger(void)
{
    dsm_sdma_trigger(hook_layer, &hook_trig, 1, &wake);
}
static void release_progress(void)
{
    pthread_mutex_unlock(&hook_layer->progress_lock);
}

START_TEST(test_wait_hook)
{
    layer_wait = hook_wait;
    dsm_sdma_t *s = open_layer(1, 64, 4, 0);
    layer_wait = NULL;
    hook_layer = s;
    memset(&hook, 0, sizeof(hook));

    /* A queue's commands, held behind a trigger. */
    dsm_sdma_queue_t *q;
    ck_assert_int_eq(dsm_sdma_queue_create(s, 0, &q), DSM_OK);
    static uint64_t flag;
    char src[64], dst[64], want[256];
    memset(src, 'W', sizeof(src));
    memset(dst, 0, sizeof(dst));
    hook_trig = flag = 0;
    dsm_cmd_t chain[] = {sig_cmd(DSM_CMD_WAIT, &hook_trig, 1),
                         copy_cmd(src, dst, sizeof(src)),
                         sig_cmd(DSM_CMD_SIGNAL, &flag, 1)};
    uint64_t seq = dsm_sdma_post(q, chain, 3);
    hook.release = release_trigger;
    dsm_sdma_queue_wait(q, seq);
    ck_assert_int_eq(hook.calls, 1);
    ck_assert_ptr_null(hook.routine); /* the runtime finds the routine */
    ck_assert_int_eq(hook.held_before, 0);
    snprintf(want, sizeof(want),
             "the cpu DMA engine 0's queue %d to retire its commands up to "
             "%llu (retired 0, completed 0, submitted %llu)",
             q->index, (unsigned long long)seq, (unsigned long long)seq);
    ck_assert_str_eq(hook.text, want);
    ck_assert_uint_eq(flag, 1);
    ck_assert_int_eq(memcmp(dst, src, sizeof(src)), 0);
    /* Done already: no wait at all. */
    dsm_sdma_queue_wait(q, seq);
    ck_assert_int_eq(hook.calls, 1);

    /* The request ring (4 entries) full: nobody may drain it while this
     * thread holds the progress lock, so the fifth request waits. */
    static uint64_t counter, done;
    counter = done = 0;
    pthread_mutex_lock(&s->progress_lock);
    hook.release = release_progress;
    for (int i = 0; i < 5; i++) {
        dsm_cmd_t c = sig_cmd(DSM_CMD_SIGNAL_ADD, &counter, 1);
        c.done = &done;
        dsm_sdma_request(s, 0, &c);
    }
    ck_assert_int_eq(hook.calls, 2);
    ck_assert_int_eq(hook.held_before, 0);
    ck_assert_str_eq(hook.text,
                     "room in the cpu DMA layer's request ring (4 entries, "
                     "all taken; 0 moved to the engines' queues)");
    double t0 = now_s();
    while (__atomic_load_n(&done, __ATOMIC_ACQUIRE) < 5) {
        dsm_sdma_progress(s, 1);
        ck_assert_msg(now_s() - t0 < 20, "requests stuck at %llu",
                      (unsigned long long)done);
    }
    ck_assert_uint_eq(counter, 5);
    dsm_sdma_close(s, 0);
}
END_TEST

static Suite *sdma_suite(void)
{
    Suite *s = suite_create("sdma");
    TCase *tc = tcase_create("cpu");
#if DSM_BUILD_CUDA
    tcase_add_test(tc, test_cuda_ranges_grow);
#endif
    tcase_add_test(tc, test_open_invalid);
    tcase_add_test(tc, test_order);
    tcase_add_test(tc, test_batching);
    tcase_add_test(tc, test_chain_trigger);
    tcase_add_test(tc, test_chain_isolation);
    tcase_add_test(tc, test_monotonic);
    tcase_add_test(tc, test_full_queue);
    tcase_add_test(tc, test_bcast_swap_signal);
    tcase_add_test(tc, test_threads);
    tcase_add_test(tc, test_threads_proxy);
    tcase_add_test(tc, test_proxy_async);
    tcase_add_test(tc, test_engine_proxy_async);
    tcase_add_test(tc, test_engine_async);
    tcase_add_test(tc, test_wait_hook);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    return s;
}

DSM_CHECK_MAIN(sdma_suite)
