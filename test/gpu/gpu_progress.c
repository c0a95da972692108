/*
 * Progress without a later call (issue #11): on the cuda backend a request
 * issued must start without any later call from the PE that issued it.
 * Exits 77 where no GPU is found; checks with 2 PEs or more (PEs past 1
 * only take part in the barriers; 1 PE passes with nothing to check).
 *
 * Phase 1, the program of the bug report: PE 0 shmem_putmem_signal_nbi of
 * 1 MiB between device buffers to PE 1, then spins on shmem_uint64_test
 * (which makes no progress); PE 1 waits for the signal with
 * shmem_signal_wait_until, checks the data and answers with
 * shmem_uint64_p(&ack, 1, 0). It deadlocked while the request stayed in
 * PE 0's request ring until PE 0's next quiet or wait.
 *
 * Phase 2: the same, but PE 0 watches ack with plain loads, making no
 * call at all (shmem_test may make progress itself, which hides the
 * defect in phase 1).
 *
 * Phase 3, copies the backend holds back: PE 0 issues a big put_nbi (the
 * stream is busy with it) and then 64 small put_nbi, which the backend
 * holds back while the stream runs (SHMEM_CUDA_COALESCE), then watches ack
 * with plain loads; PE 1 reads its device buffer until every block has
 * arrived, then answers. Nothing but a progress agent posts the held
 * copies here.
 *
 * A phase that does not end within PHASE_S seconds fails the test.
 */
#include "test/gpu/gpu_util.h"
#define MP_ALARM_S 120
#include "test/mp/mp.h"

#include <signal.h>

#include <shmemx.h>

#define PHASE_S 20
#define N1 (1u << 20) /* phase 1: bytes */
/* phase 2: the put that keeps the stream busy; at most the backend's
 * "short work" bound (4 MiB), behind which copies are held back */
#define BIG (4u << 20)
#define SMALL 4096u /* phase 2: each held-back put */
#define NSMALL 64

static uint64_t sig, ack;

static void on_alarm(int s)
{
    static const char msg[] = "FAIL: gpu_progress: a phase did not end "
                              "within the time limit: a request issued was "
                              "not started without a later call\n";
    (void)s;
    if (write(2, msg, sizeof(msg) - 1) < 0)
        _exit(2);
    _exit(1);
}

static void arm(void)
{
    signal(SIGALRM, on_alarm);
    alarm(PHASE_S);
}

static unsigned char pat(size_t o, int r)
{
    return mp_byte(0, o, r);
}

/* PE 1: poll n bytes at offset off of the device buffer until they hold
 * round r's pattern. */
static void wait_bytes(unsigned char *dev, size_t off, unsigned char *h,
                       size_t n, int r)
{
    for (;;) {
        size_t o;
        GPU_CK(gcu.MemcpyDtoH(h, DP(dev + off), n));
        for (o = 0; o < n && h[o] == pat(off + o, r); o++)
            ;
        if (o == n)
            return;
        usleep(100);
    }
}

int main(void)
{
    gpu_skip_unless_gpu("gpu_progress");
    mp_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    gpu_ctx();
    if (n < 2) {
        printf("gpu_progress: 1 PE, nothing to check\n");
        shmem_finalize();
        return 0;
    }

    const size_t big_off = 2 * NSMALL * SMALL, total = big_off + BIG;
    unsigned char *src = shmemx_malloc_device(total);
    unsigned char *dst = shmemx_malloc_device(total);
    unsigned char *h = malloc(total);
    CHECK(src && dst && h, "device buffers of %zu bytes", total);

    /* ---- phase 1: put_signal_nbi, then test in a loop */
    if (me == 0) {
        for (size_t o = 0; o < N1; o++)
            h[o] = pat(o, 1);
        gpu_htod(DP(src), h, N1);
    } else if (me == 1) {
        gpu_memset(DP(dst), 0, total);
    }
    shmem_barrier_all();
    arm();
    if (me == 0) {
        shmem_putmem_signal_nbi(dst, src, N1, &sig, 1, SHMEM_SIGNAL_SET, 1);
        while (!shmem_uint64_test(&ack, SHMEM_CMP_EQ, 1))
            ;
    } else if (me == 1) {
        shmem_signal_wait_until(&sig, SHMEM_CMP_EQ, 1);
        GPU_CK(gcu.MemcpyDtoH(h, DP(dst), N1));
        for (size_t o = 0; o < N1; o++)
            if (h[o] != pat(o, 1))
                MP_FAIL("phase 1: byte %zu is %u, expected %u", o, h[o],
                        pat(o, 1));
        shmem_uint64_p(&ack, 1, 0);
    }
    alarm(0);
    shmem_quiet();
    shmem_barrier_all();
    if (me == 0)
        printf("gpu_progress: phase 1 (putmem_signal_nbi + test loop) ok\n");

    /* ---- phase 2: the same without any call: PE 0 watches ack with plain
     * loads (shmem_test may itself make progress) */
    if (me == 1)
        gpu_memset(DP(dst), 0, N1);
    shmem_barrier_all();
    arm();
    if (me == 0) {
        shmem_putmem_signal_nbi(dst, src, N1, &sig, 2, SHMEM_SIGNAL_SET, 1);
        while (__atomic_load_n(&ack, __ATOMIC_ACQUIRE) != 2)
            ;
    } else if (me == 1) {
        shmem_signal_wait_until(&sig, SHMEM_CMP_EQ, 2);
        wait_bytes(dst, 0, h, N1, 1);
        shmem_uint64_p(&ack, 2, 0);
    }
    alarm(0);
    shmem_quiet();
    shmem_barrier_all();
    if (me == 0)
        printf("gpu_progress: phase 2 (putmem_signal_nbi + load loop) ok\n");

    /* ---- phase 3: held-back put_nbi, then plain loads */
    if (me == 0) {
        for (size_t o = 0; o < total; o++)
            h[o] = pat(o, 2);
        gpu_htod(DP(src), h, total);
    } else if (me == 1) {
        gpu_memset(DP(dst), 0, total);
    }
    shmem_barrier_all();
    arm();
    if (me == 0) {
        /* The small blocks first in the buffer, the big one after them:
         * each small put is its own 4 KiB, one block apart (no merging
         * into the big one or with each other). */
        shmem_putmem_nbi(dst + big_off, src + big_off, BIG, 1);
        for (size_t i = 0; i < NSMALL; i++)
            shmem_putmem_nbi(dst + 2 * i * SMALL, src + 2 * i * SMALL, SMALL,
                             1);
        while (__atomic_load_n(&ack, __ATOMIC_ACQUIRE) != 3)
            ;
    } else if (me == 1) {
        /* Every small block, and the big one; the gaps stay 0. */
        for (size_t i = 0; i < NSMALL; i++)
            wait_bytes(dst, 2 * i * SMALL, h, SMALL, 2);
        wait_bytes(dst, big_off, h, BIG, 2);
        shmem_uint64_p(&ack, 3, 0);
    }
    alarm(0);
    shmem_quiet();
    shmem_barrier_all();
    if (me == 1) {
        GPU_CK(gcu.MemcpyDtoH(h, DP(dst), big_off));
        for (size_t i = 0; i < NSMALL; i++)
            for (size_t o = 0; o < SMALL; o++)
                if (h[(2 * i + 1) * SMALL + o] != 0)
                    MP_FAIL("phase 3: gap %zu byte %zu was written", i, o);
    }
    if (me == 0)
        printf("gpu_progress: phase 3 (held-back put_nbi + load loop) ok\n");
    free(h);
    shmem_free(dst);
    shmem_free(src);
    shmem_finalize();
    return 0;
}
