/*
 * SOS's pre-1.5 name shmemx_signal_fetch (shmemx_sos(3)), as SOS's 2020
 * test/shmemx signal_fetch program calls it: every PE adds its number to
 * a signal word on every PE with shmem_long_put_signal(SHMEM_SIGNAL_ADD),
 * and each PE reads the sum back through shmemx_signal_fetch, which must
 * agree with shmem_signal_fetch and find the data in place. Did not link
 * before the name existed.
 */
#include "mp.h"

#include <shmemx.h>

#define MSG 10

static uint64_t sig;
static long target[MSG];

int main(void)
{
    mp_init();
    const int me = shmem_my_pe(), npes = shmem_n_pes();
    const uint64_t want = (uint64_t)npes * (uint64_t)(npes - 1) / 2;
    long source[MSG];

    for (int i = 0; i < MSG; i++)
        source[i] = 100 + i;
    CHECK(shmemx_signal_fetch(&sig) == 0, "a fresh signal word is 0");
    shmem_barrier_all();
    for (int pe = 0; pe < npes; pe++)
        shmem_long_put_signal(target, source, MSG, &sig, (uint64_t)me,
                              SHMEM_SIGNAL_ADD, pe);
    uint64_t v = shmemx_signal_fetch(&sig);
    while (v != want) {
        CHECK(v < want, "signal %llu passed the sum %llu",
              (unsigned long long)v, (unsigned long long)want);
        shmem_uint64_wait_until(&sig, SHMEM_CMP_NE, v);
        v = shmemx_signal_fetch(&sig);
    }
    CHECK(shmem_signal_fetch(&sig) == want, "shmem_signal_fetch agrees");
    for (int i = 0; i < MSG; i++)
        CHECK(target[i] == 100 + i, "target[%d] = %ld", i, target[i]);
    shmem_barrier_all();
    shmem_finalize();
    return 0;
}
