/*
 * Library-owned engine words (words.h). Requests are rounded up to a
 * power-of-two number of cache lines; blocks of one size class are carved
 * from 64 KiB chunks and come back to that class's free list. Blocks larger
 * than a chunk get a mapping of their own, kept on a list by size. Nothing
 * is ever unmapped: the pool only grows, by what the job's largest number
 * of live persistent requests needed.
 */
#include "common/words.h"
#include "common/common.h"

#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

#define WORDS_CHUNK ((size_t)64 << 10)
#define WORDS_CLASSES 11 /* 64 B .. 64 KiB */

struct free_block {
    struct free_block *next;
    size_t bytes; /* large blocks: their size */
};

static pthread_mutex_t words_lock = PTHREAD_MUTEX_INITIALIZER;
static struct free_block *free_class[WORDS_CLASSES];
static struct free_block *free_large;
static char *chunk_cur, *chunk_end;

static void *map_bytes(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static int class_of(size_t bytes, size_t *rounded)
{
    size_t b = DSM_CACHELINE;
    int c = 0;
    while (b < bytes) {
        b <<= 1;
        c++;
    }
    *rounded = b;
    return c;
}

uint64_t *dsm_words_alloc(size_t n)
{
    size_t bytes, rounded;
    void *p = NULL;

    if (!n || n > SIZE_MAX / sizeof(uint64_t))
        return NULL;
    bytes = n * sizeof(uint64_t);
    pthread_mutex_lock(&words_lock);
    if (bytes > WORDS_CHUNK) {
        rounded = DSM_ALIGN_UP(bytes, (size_t)4096);
        struct free_block **pp = &free_large;
        for (; *pp; pp = &(*pp)->next)
            if ((*pp)->bytes == rounded) {
                p = *pp;
                *pp = (*pp)->next;
                break;
            }
        if (!p)
            p = map_bytes(rounded);
    } else {
        int c = class_of(bytes, &rounded);
        if (free_class[c]) {
            p = free_class[c];
            free_class[c] = free_class[c]->next;
        } else {
            if ((size_t)(chunk_end - chunk_cur) < rounded) {
                /* The rest of the old chunk stays unused: classes are
                 * powers of two, so the waste is below one block. */
                char *ch = map_bytes(WORDS_CHUNK);
                if (ch) {
                    chunk_cur = ch;
                    chunk_end = ch + WORDS_CHUNK;
                }
            }
            if ((size_t)(chunk_end - chunk_cur) >= rounded) {
                /* Chunks are page aligned and blocks multiples of a cache
                 * line: every block starts on a cache line. */
                p = chunk_cur;
                chunk_cur += rounded;
            }
        }
    }
    pthread_mutex_unlock(&words_lock);
    if (p)
        memset(p, 0, rounded);
    return p;
}

void dsm_words_free(uint64_t *w, size_t n)
{
    size_t bytes, rounded;
    if (!w || !n)
        return;
    bytes = n * sizeof(uint64_t);
    struct free_block *b = (struct free_block *)(void *)w;
    pthread_mutex_lock(&words_lock);
    if (bytes > WORDS_CHUNK) {
        b->bytes = DSM_ALIGN_UP(bytes, (size_t)4096);
        b->next = free_large;
        free_large = b;
    } else {
        int c = class_of(bytes, &rounded);
        b->next = free_class[c];
        free_class[c] = b;
    }
    pthread_mutex_unlock(&words_lock);
}
