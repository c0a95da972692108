/*
 * First-fit allocator over [0, size) with a sorted block array. Offsets
 * depend only on the sequence of calls, so every PE computes the same ones.
 * Linear scans are fine: symmetric allocations are few and collective.
 */
#include "heap.h"

#include <stdlib.h>
#include <string.h>

#define ALIGN_UP(x, a) (((x) + ((a)-1)) & ~((a)-1))

uint64_t dsm_heap_gen;

int dsm_heap_init(dsm_heap_t *h, size_t size)
{
    dsm_heap_changed();
    memset(h, 0, sizeof(*h));
    h->cap = 64;
    h->blk = malloc(h->cap * sizeof(*h->blk));
    if (!h->blk)
        return -1;
    h->size = size;
    h->nblk = 1;
    h->blk[0] = (dsm_heap_blk_t){.off = 0, .size = size, .used = 0};
    return 0;
}

void dsm_heap_fini(dsm_heap_t *h)
{
    dsm_heap_changed();
    free(h->blk);
    memset(h, 0, sizeof(*h));
}

static int reserve(dsm_heap_t *h, size_t extra)
{
    if (h->nblk + extra <= h->cap)
        return 0;
    size_t cap = h->cap * 2;
    while (cap < h->nblk + extra)
        cap *= 2;
    dsm_heap_blk_t *b = realloc(h->blk, cap * sizeof(*b));
    if (!b)
        return -1;
    h->blk = b;
    h->cap = cap;
    return 0;
}

static void insert_at(dsm_heap_t *h, size_t i, dsm_heap_blk_t b)
{
    memmove(&h->blk[i + 1], &h->blk[i], (h->nblk - i) * sizeof(b));
    h->blk[i] = b;
    h->nblk++;
}

static void remove_at(dsm_heap_t *h, size_t i)
{
    memmove(&h->blk[i], &h->blk[i + 1], (h->nblk - i - 1) * sizeof(h->blk[0]));
    h->nblk--;
}

/* Merge free block i with free neighbours. */
static void coalesce(dsm_heap_t *h, size_t i)
{
    if (i + 1 < h->nblk && !h->blk[i + 1].used) {
        h->blk[i].size += h->blk[i + 1].size;
        remove_at(h, i + 1);
    }
    if (i > 0 && !h->blk[i - 1].used) {
        h->blk[i - 1].size += h->blk[i].size;
        remove_at(h, i);
    }
}

static size_t find_used(const dsm_heap_t *h, size_t off)
{
    size_t lo = 0, hi = h->nblk;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (h->blk[mid].off < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < h->nblk && h->blk[lo].off == off && h->blk[lo].used)
        return lo;
    return SIZE_MAX;
}

size_t dsm_heap_alloc(dsm_heap_t *h, size_t size, size_t align)
{
    dsm_heap_changed();
    size_t i, req = size;

    if (align < DSM_HEAP_MIN_ALIGN)
        align = DSM_HEAP_MIN_ALIGN;
    if (align & (align - 1))
        return SIZE_MAX;
    if (size == 0)
        size = 1;
    if (size > h->size)
        return SIZE_MAX;
    size = ALIGN_UP(size, (size_t)DSM_HEAP_MIN_ALIGN);
    if (reserve(h, 2))
        return SIZE_MAX;
    for (i = 0; i < h->nblk; i++) {
        dsm_heap_blk_t b = h->blk[i];
        if (b.used)
            continue;
        size_t start = ALIGN_UP(b.off, align);
        if (start < b.off || start - b.off > b.size ||
            b.size - (start - b.off) < size)
            continue;
        size_t pad = start - b.off, rest = b.size - pad - size;
        h->blk[i] =
            (dsm_heap_blk_t){.off = start, .size = size, .req = req, .used = 1};
        if (rest)
            insert_at(h, i + 1,
                      (dsm_heap_blk_t){.off = start + size, .size = rest});
        if (pad)
            insert_at(h, i, (dsm_heap_blk_t){.off = b.off, .size = pad});
        h->used += size;
        if (h->used > h->peak)
            h->peak = h->used;
        return start;
    }
    return SIZE_MAX;
}

int dsm_heap_free(dsm_heap_t *h, size_t off)
{
    dsm_heap_changed();
    size_t i = find_used(h, off);
    if (i == SIZE_MAX)
        return -1;
    h->used -= h->blk[i].size;
    h->blk[i].used = 0;
    coalesce(h, i);
    return 0;
}

size_t dsm_heap_realloc(dsm_heap_t *h, size_t off, size_t size, int *moved)
{
    size_t i = find_used(h, off), cur, n, req = size;

    dsm_heap_changed();
    *moved = 0;
    if (i == SIZE_MAX)
        return SIZE_MAX;
    if (size == 0)
        size = 1;
    if (size > h->size)
        return SIZE_MAX;
    n = ALIGN_UP(size, (size_t)DSM_HEAP_MIN_ALIGN);
    cur = h->blk[i].size;
    if (reserve(h, 2))
        return SIZE_MAX;
    if (n <= cur) {
        /* Shrink in place; the tail goes back to the free space. */
        if (n < cur) {
            h->blk[i].size = n;
            insert_at(h, i + 1,
                      (dsm_heap_blk_t){.off = off + n, .size = cur - n});
            coalesce(h, i + 1);
            h->used -= cur - n;
        }
        h->blk[i].req = req;
        return off;
    }
    if (i + 1 < h->nblk && !h->blk[i + 1].used &&
        cur + h->blk[i + 1].size >= n) {
        /* Grow into the free neighbour. */
        size_t take = n - cur;
        h->blk[i].size = n;
        if (h->blk[i + 1].size == take)
            remove_at(h, i + 1);
        else {
            h->blk[i + 1].off += take;
            h->blk[i + 1].size -= take;
        }
        h->blk[i].req = req;
        h->used += take;
        if (h->used > h->peak)
            h->peak = h->used;
        return off;
    }
    /* Move: allocate first so the new block cannot overlap the old one. */
    size_t noff = dsm_heap_alloc(h, req, DSM_HEAP_MIN_ALIGN);
    if (noff == SIZE_MAX)
        return SIZE_MAX;
    dsm_heap_free(h, off);
    *moved = 1;
    return noff;
}

size_t dsm_heap_block_size(const dsm_heap_t *h, size_t off)
{
    size_t i = find_used(h, off);
    return i == SIZE_MAX ? 0 : h->blk[i].size;
}

int dsm_heap_find(const dsm_heap_t *h, size_t off, size_t *start,
                  size_t *req)
{
    size_t lo = 0, hi = h->nblk;
    /* The last block starting at or before off. */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (h->blk[mid].off <= off)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (!lo)
        return -1;
    const dsm_heap_blk_t *b = &h->blk[lo - 1];
    if (!b->used || off - b->off >= b->size)
        return -1;
    *start = b->off;
    *req = b->req;
    return 0;
}

int dsm_heap_copy(dsm_heap_t *dst, const dsm_heap_t *src)
{
    *dst = *src;
    dst->blk = malloc(src->cap * sizeof(*dst->blk));
    if (!dst->blk)
        return -1;
    memcpy(dst->blk, src->blk, src->nblk * sizeof(*dst->blk));
    return 0;
}

size_t dsm_heap_largest_free(const dsm_heap_t *h)
{
    size_t m = 0;
    for (size_t i = 0; i < h->nblk; i++)
        if (!h->blk[i].used && h->blk[i].size > m)
            m = h->blk[i].size;
    return m;
}
