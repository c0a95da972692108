/*
 * shmem_pe_accessible, shmem_addr_accessible, shmem_ptr: what this PE can
 * reach, from the segments and the path table. Apart from init.c so that
 * coll/ (shmem_team_ptr) depends on a leaf, not on the module that starts
 * coll/ (test/layers).
 */
#include "path.h"

int pshmem_pe_accessible(int pe)
{
    DSM_CHECK_INIT("shmem_pe_accessible");
    if (pe < 0 || pe >= dsm_rt.npes)
        return 0;
    return dsm_rt.segs[DSM_SEG_HEAP].peer[pe] != NULL ||
           dsm_path_of(pe)->rma != &dsm_path_shm;
}
DSM_WEAK(pe_accessible)

int pshmem_addr_accessible(const void *addr, int pe)
{
    DSM_CHECK_INIT("shmem_addr_accessible");
    if (pe < 0 || pe >= dsm_rt.npes)
        return 0;
    for (int i = 0; i < dsm_rt.nsegs; i++) {
        const dsm_seg_t *s = &dsm_rt.segs[i];
        if ((uintptr_t)addr - (uintptr_t)s->base < s->size)
            return s->peer[pe] != NULL ||
                   (dsm_path_of(pe)->rma != &dsm_path_shm &&
                    i != DSM_SEG_DEVICE);
    }
    return 0;
}
DSM_WEAK(addr_accessible)

void *pshmem_ptr(const void *dest, int pe)
{
    DSM_CHECK_INIT("shmem_ptr");
    if (pe < 0 || pe >= dsm_rt.npes)
        return NULL;
    for (int i = 0; i < dsm_rt.nsegs; i++) {
        const dsm_seg_t *s = &dsm_rt.segs[i];
        uintptr_t off = (uintptr_t)dest - (uintptr_t)s->base;
        if (off < s->size)
            return s->peer[pe] ? s->peer[pe] + off : NULL;
    }
    return NULL;
}
DSM_WEAK(ptr)
