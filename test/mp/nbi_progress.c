/*
 * put_nbi progresses while the application computes (issue #11): with
 * engine queues of 16 commands and every put_nbi going to the engines, each
 * PE issues 200 x 32 KiB put_nbi to the next PE and then makes no OpenSHMEM
 * call until the data it is sent has arrived, watching its own buffer with
 * plain loads. No PE reaches quiet before then, so only the engines (and
 * whoever holds the proxy role, an engine thread on the cpu backend) can
 * move the data; an engine that waits for room in its own full queue
 * without executing it moves nothing and every PE times out.
 */
#include <sched.h>

#include "mp.h"

#define NPUT 200
#define CHUNK ((size_t)32 << 10)
#define WAIT_S 20.0

/* The word a sender s puts at the end of chunk i: never 0. */
static uint64_t marker(int s, int i)
{
    return ((uint64_t)(s + 1) << 32) | (uint64_t)(i + 1);
}

static void fill(unsigned char *buf, int s)
{
    for (size_t o = 0; o < NPUT * CHUNK; o++)
        buf[o] = mp_byte(s, o, 0);
    for (int i = 0; i < NPUT; i++) {
        uint64_t m = marker(s, i);
        memcpy(buf + (size_t)(i + 1) * CHUNK - sizeof(m), &m, sizeof(m));
    }
}

int main(void)
{
    setenv("SHMEM_SDMA_QUEUE_DEPTH", "16", 1);
    setenv("SHMEM_SDMA_NBI_INLINE_MAX", "0", 1);
    mp_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;
    unsigned char *src = malloc(NPUT * CHUNK);
    unsigned char *expect = malloc(NPUT * CHUNK);
    unsigned char *dst = shmem_malloc(NPUT * CHUNK);
    CHECK(src && expect && dst, "buffers of %zu bytes", NPUT * CHUNK);
    fill(src, me);
    fill(expect, left);
    memset(dst, 0, NPUT * CHUNK);
    shmem_barrier_all();

    for (int i = 0; i < NPUT; i++)
        shmem_putmem_nbi(dst + (size_t)i * CHUNK, src + (size_t)i * CHUNK,
                         CHUNK, right);
    /* From here until every chunk arrived: no OpenSHMEM call. */
    double t0 = mp_now();
    for (int i = 0; i < NPUT;) {
        const volatile uint64_t *w =
            (const volatile uint64_t *)(dst + (size_t)(i + 1) * CHUNK) - 1;
        if (*w == marker(left, i)) {
            i++;
            continue;
        }
        if (mp_now() - t0 > WAIT_S)
            MP_FAIL("only %d of %d put_nbi chunks from PE %d arrived in %.0f "
                    "s without a quiet on their sender",
                    i, NPUT, left, WAIT_S);
        sched_yield(); /* the engines may need this core */
    }
    __atomic_thread_fence(__ATOMIC_ACQUIRE);

    shmem_quiet();
    shmem_barrier_all();
    for (size_t o = 0; o < NPUT * CHUNK; o++)
        CHECK(dst[o] == expect[o],
              "byte %zu from PE %d: 0x%02x, expected "
              "0x%02x",
              o, left, dst[o], expect[o]);
    shmem_barrier_all();
    shmem_free(dst);
    free(expect);
    free(src);
    if (me == 0)
        printf("nbi_progress: %d PE(s), %d x %zu B put_nbi arrived before "
               "quiet\n",
               npes, NPUT, CHUNK);
    shmem_finalize();
    return 0;
}
