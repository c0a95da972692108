/*
 * Symmetric segments: ranges of this process's address space whose every
 * byte has a twin at the same offset in every other PE's segment of the
 * same kind. Each is backed by a shareable handle (a memfd for host memory)
 * passed to the local peers through the bootstrap and mapped by them.
 */
#ifndef DSM_SEGMENT_H
#define DSM_SEGMENT_H

#include <stddef.h>
#include <stdint.h>

#define DSM_SEG_MAX 4

typedef enum {
    DSM_SEG_HEAP = 0, /* symmetric heap + the runtime's internal area */
    DSM_SEG_STATIC,   /* the executable's .data/.bss */
} dsm_seg_kind_t;

typedef struct dsm_seg {
    char *base;  /* my copy */
    size_t size; /* bytes valid from base */
    size_t map_size; /* bytes mapped (page multiple) */
    char **peer; /* [npes] each PE's copy mapped here; NULL = not mapped */
    int fd;      /* my memfd, -1 after the peers have it */
    int kind;
    const char *name;
} dsm_seg_t;

/* Find the executable's writable data (after RELRO), page aligned. Returns
 * 0 and fills start/len (len 0 if there is none). */
int dsm_seg_static_range(char **start, size_t *len);
/* Move [start, start+len) onto a new memfd mapped shared at the same
 * address, contents preserved. Returns the fd or -1 (errno set). */
int dsm_seg_static_remap(char *start, size_t len);

#endif /* DSM_SEGMENT_H */
