/*
 * dmashmem man page aliases. This file is never compiled: man/Makefile.inc
 * runs it through the C preprocessor and every "ALIAS name page ;" in the
 * output becomes man3/name.3 containing ".so man3/page.3". The typed names
 * come from the same X-macro tables (shmem/types.h) that declare and define
 * the routines, so a type added there gets its pages without an edit here.
 * A new routine family needs a hand page and one line below;
 * man/check-man.sh fails until both exist.
 */
#include <shmem/types.h>

/* ---- typed RMA: shmem_[ctx_]TYPENAME_OP ---- */
#define RMA_TYPED(T, N)                                                        \
    ALIAS shmem_##N##_put shmem_put ;                                          \
    ALIAS shmem_ctx_##N##_put shmem_put ;                                      \
    ALIAS shmem_##N##_get shmem_get ;                                          \
    ALIAS shmem_ctx_##N##_get shmem_get ;                                      \
    ALIAS shmem_##N##_put_nbi shmem_put_nbi ;                                  \
    ALIAS shmem_ctx_##N##_put_nbi shmem_put_nbi ;                              \
    ALIAS shmem_##N##_get_nbi shmem_get_nbi ;                                  \
    ALIAS shmem_ctx_##N##_get_nbi shmem_get_nbi ;                              \
    ALIAS shmem_##N##_p shmem_p ;                                              \
    ALIAS shmem_ctx_##N##_p shmem_p ;                                          \
    ALIAS shmem_##N##_g shmem_g ;                                              \
    ALIAS shmem_ctx_##N##_g shmem_g ;                                          \
    ALIAS shmem_##N##_iput shmem_iput ;                                        \
    ALIAS shmem_ctx_##N##_iput shmem_iput ;                                    \
    ALIAS shmem_##N##_iget shmem_iget ;                                        \
    ALIAS shmem_ctx_##N##_iget shmem_iget ;
SHMEM_TYPES_RMA(RMA_TYPED)

/* ---- sized RMA: shmem_[ctx_]OP{8,16,32,64,128}[_nbi] ---- */
#define RMA_SIZED(BITS, BYTES, T)                                              \
    ALIAS shmem_put##BITS shmem_put ;                                          \
    ALIAS shmem_ctx_put##BITS shmem_put ;                                      \
    ALIAS shmem_get##BITS shmem_get ;                                          \
    ALIAS shmem_ctx_get##BITS shmem_get ;                                      \
    ALIAS shmem_put##BITS##_nbi shmem_put_nbi ;                                \
    ALIAS shmem_ctx_put##BITS##_nbi shmem_put_nbi ;                            \
    ALIAS shmem_get##BITS##_nbi shmem_get_nbi ;                                \
    ALIAS shmem_ctx_get##BITS##_nbi shmem_get_nbi ;                            \
    ALIAS shmem_iput##BITS shmem_iput ;                                        \
    ALIAS shmem_ctx_iput##BITS shmem_iput ;                                    \
    ALIAS shmem_iget##BITS shmem_iget ;                                        \
    ALIAS shmem_ctx_iget##BITS shmem_iget ;
SHMEM_SIZES(RMA_SIZED)

/* ---- point-to-point synchronization: shmem_TYPENAME_wait_until* / test* */
#define P2P_TYPED(T, N)                                                        \
    ALIAS shmem_##N##_wait_until shmem_wait_until ;                            \
    ALIAS shmem_##N##_wait_until_all shmem_wait_until ;                        \
    ALIAS shmem_##N##_wait_until_any shmem_wait_until ;                        \
    ALIAS shmem_##N##_wait_until_some shmem_wait_until ;                       \
    ALIAS shmem_##N##_wait_until_all_vector shmem_wait_until ;                 \
    ALIAS shmem_##N##_wait_until_any_vector shmem_wait_until ;                 \
    ALIAS shmem_##N##_wait_until_some_vector shmem_wait_until ;                \
    ALIAS shmem_##N##_test shmem_test ;                                        \
    ALIAS shmem_##N##_test_all shmem_test ;                                    \
    ALIAS shmem_##N##_test_any shmem_test ;                                    \
    ALIAS shmem_##N##_test_some shmem_test ;                                   \
    ALIAS shmem_##N##_test_all_vector shmem_test ;                             \
    ALIAS shmem_##N##_test_any_vector shmem_test ;                             \
    ALIAS shmem_##N##_test_some_vector shmem_test ;
SHMEM_TYPES_P2P(P2P_TYPED)

/* ---- untyped names and C11 generic names without a page of their own ---- */
ALIAS shmem_putmem shmem_put ;
ALIAS shmem_ctx_putmem shmem_put ;
ALIAS shmem_getmem shmem_get ;
ALIAS shmem_ctx_getmem shmem_get ;
ALIAS shmem_putmem_nbi shmem_put_nbi ;
ALIAS shmem_ctx_putmem_nbi shmem_put_nbi ;
ALIAS shmem_getmem_nbi shmem_get_nbi ;
ALIAS shmem_ctx_getmem_nbi shmem_get_nbi ;
ALIAS shmem_ctx_quiet shmem_quiet ;
ALIAS shmem_ctx_fence shmem_fence ;
ALIAS shmem_query_thread shmem_init_thread ;
ALIAS shmem_calloc shmem_malloc ;
ALIAS shmem_align shmem_malloc ;
ALIAS shmem_realloc shmem_malloc ;
ALIAS shmem_free shmem_malloc ;
ALIAS shmem_malloc_with_hints shmem_malloc ;
ALIAS shmem_wait_until_all shmem_wait_until ;
ALIAS shmem_wait_until_any shmem_wait_until ;
ALIAS shmem_wait_until_some shmem_wait_until ;
ALIAS shmem_wait_until_all_vector shmem_wait_until ;
ALIAS shmem_wait_until_any_vector shmem_wait_until ;
ALIAS shmem_wait_until_some_vector shmem_wait_until ;
ALIAS shmem_test_all shmem_test ;
ALIAS shmem_test_any shmem_test ;
ALIAS shmem_test_some shmem_test ;
ALIAS shmem_test_all_vector shmem_test ;
ALIAS shmem_test_any_vector shmem_test ;
ALIAS shmem_test_some_vector shmem_test ;

/* ---- deprecated names (OpenSHMEM 1.2) ---- */
ALIAS start_pes shmem_init ;
ALIAS _my_pe shmem_my_pe ;
ALIAS _num_pes shmem_n_pes ;
ALIAS shmalloc shmem_malloc ;
ALIAS shfree shmem_malloc ;
ALIAS shrealloc shmem_malloc ;
ALIAS shmemalign shmem_malloc ;

/* ---- the type tables themselves, for check-man.sh: every TYPENAME must be
 * listed in intro_shmem(3) ---- */
#define TABLE_RMA(T, N) TYPENAME rma N ;
SHMEM_TYPES_RMA(TABLE_RMA)
#define TABLE_P2P(T, N) TYPENAME p2p N ;
SHMEM_TYPES_P2P(TABLE_P2P)
