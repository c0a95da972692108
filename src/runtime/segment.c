/*
 * Segments: the symmetric heap (memfd) and the executable's static data
 * (remapped onto a memfd at init), shared with the local peers by passing
 * the memfds through the bootstrap. memfds have no name in any file system,
 * so a job that dies leaves nothing in /dev/shm or /tmp.
 */
#include "rt.h"

#include <elf.h>
#include <errno.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct static_scan {
    uintptr_t start, end;
    int found;
};

static int scan_main(struct dl_phdr_info *info, size_t sz, void *arg)
{
    struct static_scan *sc = arg;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t relro_end = 0;
    (void)sz;

    /* The first object is the executable itself. */
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_GNU_RELRO)
            relro_end = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
    }
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W))
            continue;
        uintptr_t s = info->dlpi_addr + ph->p_vaddr;
        uintptr_t e = s + ph->p_memsz;
        /* ld.so makes [page_down(relro start), page_down(relro end))
         * read-only after relocation; the rest stays writable. */
        if (relro_end > s && relro_end <= e)
            s = relro_end;
        s = DSM_ALIGN_DOWN(s, page);
        e = DSM_ALIGN_UP(e, page);
        if (e > s && (!sc->found || e - s > sc->end - sc->start)) {
            sc->start = s;
            sc->end = e;
            sc->found = 1;
        }
    }
    return 1; /* stop after the executable */
}

int dsm_seg_static_range(char **start, size_t *len)
{
    struct static_scan sc = {0};
    dl_iterate_phdr(scan_main, &sc);
    *start = (char *)sc.start;
    *len = sc.found ? sc.end - sc.start : 0;
    return 0;
}

/* The program's other threads may run during shmem_init (threads started
 * before it, or by libraries). A write of theirs to static data between
 * the copy into the memfd and the remap would be lost: a condition
 * variable a thread had just started waiting on came back zeroed, and the
 * thread slept for ever (bind.sh, 4 PEs, once in a CI run). So the range
 * is read-only from before the copy until the remap: a write in that
 * window faults, waits in this handler until the remap is done, and is
 * retried on the new mapping. Faults anywhere else go to the handler the
 * program had. */
static struct {
    uintptr_t lo, hi;
    volatile int done;
    struct sigaction old;
} frz;

static void frz_fault(int sig, siginfo_t *si, void *uc)
{
    uintptr_t a = (uintptr_t)si->si_addr;
    if (a >= frz.lo && a < frz.hi) {
        while (!__atomic_load_n(&frz.done, __ATOMIC_ACQUIRE)) {
            struct timespec ts = {0, 100000};
            nanosleep(&ts, NULL); /* async-signal-safe */
        }
        return; /* the write is retried, on the memfd's pages */
    }
    if (frz.old.sa_flags & SA_SIGINFO) {
        frz.old.sa_sigaction(sig, si, uc);
        return;
    }
    if (frz.old.sa_handler != SIG_DFL && frz.old.sa_handler != SIG_IGN) {
        frz.old.sa_handler(sig);
        return;
    }
    /* Default: the fault recurs on return and ends the process as usual. */
    signal(sig, SIG_DFL);
}

int dsm_seg_static_remap(char *start, size_t len)
{
    struct sigaction sa;
    int fd = memfd_create("dmashmem-static", MFD_CLOEXEC), frozen = 0;
    if (fd < 0)
        return -1;
    if (ftruncate(fd, (off_t)len) < 0)
        goto err;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = frz_fault;
    sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    frz.lo = (uintptr_t)start;
    frz.hi = (uintptr_t)start + len;
    __atomic_store_n(&frz.done, 0, __ATOMIC_RELEASE);
    if (sigaction(SIGSEGV, &sa, &frz.old) < 0)
        goto err;
    frozen = 1;
    if (mprotect(start, len, PROT_READ) < 0)
        goto err;
    /* A raw syscall: sanitizer interceptors would flag the redzones that
     * lie between instrumented globals. */
    size_t done = 0;
    while (done < len) {
        long n = syscall(SYS_pwrite64, fd, start + done, len - done,
                         (off_t)done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            goto err;
        done += (size_t)n;
    }
    if (mmap(start, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
             0) == MAP_FAILED)
        goto err;
    __atomic_store_n(&frz.done, 1, __ATOMIC_RELEASE);
    sigaction(SIGSEGV, &frz.old, NULL);
    return fd;
err: {
    int e = errno;
    if (frozen) {
        (void)mprotect(start, len, PROT_READ | PROT_WRITE);
        __atomic_store_n(&frz.done, 1, __ATOMIC_RELEASE);
        sigaction(SIGSEGV, &frz.old, NULL);
    }
    close(fd);
    errno = e;
    return -1;
}
}

/* ------------------------------------------------------------ strided */

ptrdiff_t dsm_seg_check_strided(const char *routine, const void *addr,
                                ptrdiff_t stride, size_t count, size_t piece,
                                size_t size, int pe, int sym)
{
    const uintptr_t first = (uintptr_t)addr;
    uintptr_t last, lo = first, hi = first;
    ptrdiff_t step = 0, span = 0;
    size_t len = 0;

    if (!count)
        return 0;
    /* [lo, hi): every byte the pieces touch, whatever the stride's sign. */
    int bad = __builtin_mul_overflow(piece, size, &len) |
              __builtin_mul_overflow(stride, size, &step) |
              __builtin_mul_overflow(count - 1, step, &span);
    if (!bad) {
        last = first + (uintptr_t)span;
        bad = span >= 0 ? last < first : last > first;
        lo = span >= 0 ? first : last;
        bad |= __builtin_add_overflow(span >= 0 ? last : first, len, &hi);
    }
    /* "3 elements of 8 bytes" or "3 blocks of 2 x 8 bytes" */
    char what[96];
    if (piece == 1)
        snprintf(what, sizeof(what), "%zu element%s of %zu bytes", count,
                 count == 1 ? "" : "s", size);
    else
        snprintf(what, sizeof(what), "%zu block%s of %zu x %zu bytes", count,
                 count == 1 ? "" : "s", piece, size);
    if (bad)
        dsm_rt_fatal(routine,
                     "%s at %p with stride %td (target PE %d): the range "
                     "overflows the address space",
                     what, addr, stride, pe);
    if (!sym)
        return step;
    for (int i = 0; i < dsm_rt.nsegs; i++) {
        const dsm_seg_t *s = &dsm_rt.segs[i];
        const uintptr_t b = (uintptr_t)s->base;
        if (first - b >= s->size)
            continue;
        if (lo < b || hi - b > s->size)
            dsm_rt_fatal(routine,
                         "%s at %p with stride %td (target PE %d) span "
                         "%p..%p, outside the %s segment [%p, %p) that holds "
                         "the first",
                         what, addr, stride, pe, (void *)lo, (void *)hi,
                         s->name, (void *)s->base, (void *)(s->base + s->size));
        return step;
    }
    dsm_rt_bad_addr(routine, addr, len, pe);
}

/* ------------------------------------------------------------ setup */

typedef struct seg_info {
    uint64_t heap_size, static_size;
    int32_t node_id;
} seg_info_t;

static dsm_status_t map_peer(dsm_seg_t *s, int pe, size_t size)
{
    const dsm_boot_ops_t *b = dsm_rt.boot_ops;
    char key[32];
    int fd;
    dsm_status_t st;

    snprintf(key, sizeof(key), "seg.%s", s->name);
    st = b->get_fd(pe, key, &fd);
    if (st != DSM_OK) {
        dsm_log_error("shmem_init: could not get PE %d's %s segment from the "
                      "bootstrap: %s", pe, s->name, dsm_status_str(st));
        return st;
    }
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        dsm_log_error("shmem_init: mapping PE %d's %s segment (%zu bytes) "
                      "failed: %s", pe, s->name, size, strerror(errno));
        return DSM_ERR_NOMEM;
    }
    s->peer[pe] = p;
    return DSM_OK;
}

static dsm_status_t seg_create_heap(dsm_seg_t *s, size_t user, size_t total)
{
    s->kind = DSM_SEG_HEAP;
    s->name = "heap";
    s->fd = memfd_create("dmashmem-heap", MFD_CLOEXEC);
    if (s->fd < 0 || ftruncate(s->fd, (off_t)total) < 0) {
        dsm_log_error("shmem_init: cannot create a symmetric heap of %zu "
                      "bytes: %s (lower %s)", total, strerror(errno),
                      DSM_ENV_NAME(symmetric_size, "SYMMETRIC_SIZE"));
        return DSM_ERR_NOMEM;
    }
    /* Base aligned to DSM_HEAP_BASE_ALIGN, so that an offset aligned by the
     * allocator is an address aligned as much (shmem_align). Reserve, then
     * map the memfd over the aligned part and give back the rest. */
    size_t span = total + DSM_HEAP_BASE_ALIGN;
    char *res = mmap(NULL, span, PROT_NONE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (res == MAP_FAILED)
        goto map_failed;
    char *base = (char *)DSM_ALIGN_UP((uintptr_t)res, DSM_HEAP_BASE_ALIGN);
    s->base = mmap(base, total, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
                   s->fd, 0);
    if (s->base == MAP_FAILED) {
        munmap(res, span);
        goto map_failed;
    }
    if (base > res)
        munmap(res, (size_t)(base - res));
    if (res + span > base + total)
        munmap(base + total, (size_t)(res + span - (base + total)));
    /* The user part; the internal area after it is reached through
     * dsm_rt.ctrl/peer_ctrl, never through user addresses. */
    s->size = user;
    s->map_size = total;
    return DSM_OK;

map_failed:
    dsm_log_error("shmem_init: cannot map a symmetric heap of %zu bytes: %s "
                  "(lower %s)", total, strerror(errno),
                  DSM_ENV_NAME(symmetric_size, "SYMMETRIC_SIZE"));
    s->base = NULL;
    return DSM_ERR_NOMEM;
}

static dsm_status_t seg_create_static(dsm_seg_t *s)
{
    char *start;
    size_t len;

    s->kind = DSM_SEG_STATIC;
    s->name = "static";
    s->fd = -1;
    dsm_seg_static_range(&start, &len);
    if (!len)
        return DSM_OK;
    s->fd = dsm_seg_static_remap(start, len);
    if (s->fd < 0) {
        dsm_log_error("shmem_init: cannot make the program's global and "
                      "static data (%zu bytes at %p) symmetric: %s",
                      len, (void *)start, strerror(errno));
        return DSM_ERR_NOMEM;
    }
    s->base = start;
    s->size = len;
    s->map_size = len;
    return DSM_OK;
}

dsm_status_t dsm_rt_segments_init(void)
{
    const dsm_boot_ops_t *b = dsm_rt.boot_ops;
    const int n = dsm_rt.npes, me = dsm_rt.me;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t user, total;
    seg_info_t mine = {0}, theirs;
    dsm_status_t st;
    int i, pe;

    if (dsm_seg_heap_sizes(dsm_env.symmetric_size, page,
                           DSM_ALIGN_UP(DSM_INTERNAL_SIZE(n), page),
                           DSM_HEAP_BASE_ALIGN, &user, &total)) {
        dsm_log_error("shmem_init: %s=%llu is too large: the heap would not "
                      "fit in the address space",
                      DSM_ENV_NAME(symmetric_size, "SYMMETRIC_SIZE"),
                      (unsigned long long)dsm_env.symmetric_size);
        return DSM_ERR_INVAL;
    }
    for (i = 0; i < 2; i++) {
        dsm_rt.segs[i].peer = calloc((size_t)n, sizeof(char *));
        dsm_rt.segs[i].fd = -1;
        if (!dsm_rt.segs[i].peer)
            return DSM_ERR_NOMEM;
    }
    dsm_rt.peer_ctrl = calloc((size_t)n, sizeof(dsm_ctrl_t *));
    if (!dsm_rt.peer_ctrl)
        return DSM_ERR_NOMEM;
    st = seg_create_heap(&dsm_rt.segs[DSM_SEG_HEAP], user, total);
    if (st != DSM_OK)
        return st;
    st = seg_create_static(&dsm_rt.segs[DSM_SEG_STATIC]);
    if (st != DSM_OK)
        return st;
    dsm_rt.nsegs = 2;

    mine.heap_size = user; /* total follows from it and npes */
    mine.static_size = dsm_rt.segs[DSM_SEG_STATIC].size;
    /* SHMEM_FORCE_NETWORK: every PE its own node, so that one machine
     * runs the inter-node path (src/net). */
    mine.node_id = dsm_env.force_network ? me : dsm_rt.boot.node_id;
    if ((st = b->put("seginfo", &mine, sizeof(mine))) != DSM_OK ||
        (st = b->put_fd("seg.heap", dsm_rt.segs[DSM_SEG_HEAP].fd)) != DSM_OK)
        goto boot_err;
    if (dsm_rt.segs[DSM_SEG_STATIC].fd >= 0 &&
        (st = b->put_fd("seg.static", dsm_rt.segs[DSM_SEG_STATIC].fd)) !=
            DSM_OK)
        goto boot_err;
    if ((st = b->fence()) != DSM_OK)
        goto boot_err;

    for (pe = 0; pe < n; pe++) {
        size_t len = sizeof(theirs);
        if (pe == me) {
            for (i = 0; i < dsm_rt.nsegs; i++)
                dsm_rt.segs[i].peer[pe] = dsm_rt.segs[i].base;
            continue;
        }
        if ((st = b->get(pe, "seginfo", &theirs, &len)) != DSM_OK)
            goto boot_err;
        /* Across the whole job, not only among PEs that map each other:
         * a network peer resolves (segment, offset) in its own copy. */
        if (theirs.heap_size != mine.heap_size) {
            dsm_log_error("shmem_init: PE %d has a %llu-byte symmetric heap, "
                          "PE %d a %llu-byte one: %s must be the same on "
                          "every PE",
                          pe, (unsigned long long)theirs.heap_size, me,
                          (unsigned long long)mine.heap_size,
                          DSM_ENV_NAME(symmetric_size, "SYMMETRIC_SIZE"));
            return DSM_ERR_INVAL;
        }
        if (theirs.static_size != mine.static_size) {
            dsm_log_error("shmem_init: PE %d's program has %llu bytes of "
                          "static data, PE %d's %llu: every PE must run the "
                          "same executable",
                          pe, (unsigned long long)theirs.static_size, me,
                          (unsigned long long)mine.static_size);
            return DSM_ERR_INVAL;
        }
        if (theirs.node_id != mine.node_id)
            continue; /* another node: reached through the network */
        if ((st = map_peer(&dsm_rt.segs[DSM_SEG_HEAP], pe, total)) != DSM_OK)
            return st;
        if (mine.static_size &&
            (st = map_peer(&dsm_rt.segs[DSM_SEG_STATIC], pe,
                           mine.static_size)) != DSM_OK)
            return st;
    }
    for (pe = 0; pe < n; pe++)
        if (dsm_rt.segs[DSM_SEG_HEAP].peer[pe])
            dsm_rt.peer_ctrl[pe] =
                (dsm_ctrl_t *)(dsm_rt.segs[DSM_SEG_HEAP].peer[pe] + user);
    dsm_rt.ctrl = dsm_rt.peer_ctrl[me];
    return DSM_OK;

boot_err:
    dsm_log_error("shmem_init: bootstrap exchange failed: %s",
                  dsm_status_str(st));
    return st;
}

void dsm_rt_segments_fini(void)
{
    dsm_rt_device_fini(); /* gpu.c: GPU views of the segments go first */
    for (int i = 0; i < dsm_rt.nsegs; i++) {
        dsm_seg_t *s = &dsm_rt.segs[i];
        if (i == DSM_SEG_DEVICE) /* GPU memory: gpu.c, above */
            continue;
        for (int pe = 0; pe < dsm_rt.npes; pe++)
            if (s->peer[pe] && pe != dsm_rt.me)
                munmap(s->peer[pe], s->map_size);
        /* The static segment stays mapped: it is the program's data. */
        if (s->kind == DSM_SEG_HEAP && s->base)
            munmap(s->base, s->map_size);
        if (s->fd >= 0)
            close(s->fd);
        free(s->peer);
        memset(s, 0, sizeof(*s));
    }
    dsm_rt.nsegs = 0;
    free(dsm_rt.peer_ctrl);
    dsm_rt.peer_ctrl = NULL;
    dsm_rt.ctrl = NULL;
}
