/*
 * What test/lsan.supp leaves reported: an fi_info that a caller asked
 * libfabric for and never freed is a leak of the caller's, and the
 * suppressions for libfabric's own allocations (reached through its
 * progress and data calls) must not hide it. Run by lsan_scope.sh in the
 * sanitizer build:
 *   lsan_scope free   asks for an fi_info and frees it (no leak);
 *   lsan_scope leak   asks for one and drops it (LeakSanitizer reports it).
 */
#include <rdma/fabric.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    /* volatile: the store of NULL that drops it is done, so no copy of
     * the pointer is left where LeakSanitizer's scan would find it. */
    struct fi_info *volatile info;
    if (argc != 2 || (strcmp(argv[1], "free") && strcmp(argv[1], "leak"))) {
        fprintf(stderr, "usage: lsan_scope free|leak\n");
        return 2;
    }
    info = fi_dupinfo(NULL);
    if (!info) {
        fprintf(stderr, "lsan_scope: fi_dupinfo(NULL) returned NULL\n");
        return 1;
    }
    if (!strcmp(argv[1], "free"))
        fi_freeinfo(info);
    else
        info = NULL;
    printf("lsan_scope %s: done\n", argv[1]);
    return 0;
}
