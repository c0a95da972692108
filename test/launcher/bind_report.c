/*
 * Placement test program (bind.sh, #15): after shmem_init, print the CPUs
 * of every thread of this PE, read back from the kernel: the main thread,
 * a thread the program started before shmem_init (bound too: the PE binds
 * all its threads) and the library's own threads (engine, proxy: they
 * inherit the PE's CPUs). One line per PE:
 *
 *   bind PE <me> of <npes> cpus <list> threads <n> same <0|1>
 *
 * argv[1] (ignored) carries the test's marker for pgrep.
 */
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <shmem.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int done;

static void *sleeper(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&lock);
    while (!done)
        pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
    return NULL;
}

static void list(const cpu_set_t *s, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, s))
            continue;
        int e = c;
        while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, s))
            e++;
        int w = e == c ? snprintf(buf + n, len - n, "%s%d", n ? "," : "", c)
                       : snprintf(buf + n, len - n, "%s%d-%d", n ? "," : "",
                                  c, e);
        if (w < 0 || (size_t)w >= len - n)
            break;
        n += (size_t)w;
        c = e;
    }
}

int main(void)
{
    pthread_t t;
    cpu_set_t mine, other;
    char buf[1024];
    int nthreads = 0, same = 1;

    if (pthread_create(&t, NULL, sleeper, NULL))
        return 1;
    shmem_init();
    if (sched_getaffinity(0, sizeof(mine), &mine) < 0)
        return 1;
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return 1;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        nthreads++;
        if (sched_getaffinity(atoi(e->d_name), sizeof(other), &other) < 0 ||
            !CPU_EQUAL(&mine, &other)) {
            list(&other, buf, sizeof(buf));
            fprintf(stderr, "PE %d: thread %s runs on CPUs %s\n", shmem_my_pe(),
                    e->d_name, buf);
            same = 0;
        }
    }
    closedir(d);
    list(&mine, buf, sizeof(buf));
    printf("bind PE %d of %d cpus %s threads %d same %d\n", shmem_my_pe(),
           shmem_n_pes(), buf, nthreads, same);
    fflush(stdout);
    shmem_finalize();
    pthread_mutex_lock(&lock);
    done = 1;
    pthread_cond_signal(&cond);
    pthread_mutex_unlock(&lock);
    pthread_join(t, NULL);
    return 0;
}
