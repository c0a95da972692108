/*
 * Words the DMA engines wait on or write (triggers, ready and arrival
 * words of persistent collectives) in memory the library owns.
 *
 * A GPU backend pins the page of a host word the first time a stream waits
 * on it and keeps that mapping, by address, until finalize. Words in
 * malloc'ed memory break that: when glibc returns the page to the kernel
 * and a later allocation gets the same address, the stream waits on the
 * old physical page and the collective hangs (#14). These words come from
 * anonymous mappings that are never unmapped while the process runs, so an
 * address, once pinned, keeps its page.
 */
#ifndef DSM_COMMON_WORDS_H
#define DSM_COMMON_WORDS_H

#include <stddef.h>
#include <stdint.h>

/* n zeroed 64-bit words, cache-line aligned; NULL when out of memory.
 * Thread safe. */
uint64_t *dsm_words_alloc(size_t n);
/* Back to the library's free lists (n as allocated; NULL is ignored). */
void dsm_words_free(uint64_t *w, size_t n);

#endif /* DSM_COMMON_WORDS_H */
