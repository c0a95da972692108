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

/* ---- atomics, signals, contexts, locks, 1.6 additions, deprecated names
 * of those families (include/shmem/api_amo.h) ---- */
#define AMO_EXT_ALIASES(T, N)                                                  \
    ALIAS shmem_##N##_atomic_fetch shmem_atomic_fetch ;                        \
    ALIAS shmem_ctx_##N##_atomic_fetch shmem_atomic_fetch ;                    \
    ALIAS shmem_##N##_atomic_fetch_nbi shmem_atomic_fetch ;                    \
    ALIAS shmem_ctx_##N##_atomic_fetch_nbi shmem_atomic_fetch ;                \
    ALIAS shmem_##N##_fetch shmem_atomic_fetch ;                               \
    ALIAS shmem_##N##_atomic_set shmem_atomic_set ;                            \
    ALIAS shmem_ctx_##N##_atomic_set shmem_atomic_set ;                        \
    ALIAS shmem_##N##_set shmem_atomic_set ;                                   \
    ALIAS shmem_##N##_atomic_swap shmem_atomic_swap ;                          \
    ALIAS shmem_ctx_##N##_atomic_swap shmem_atomic_swap ;                      \
    ALIAS shmem_##N##_atomic_swap_nbi shmem_atomic_swap ;                      \
    ALIAS shmem_ctx_##N##_atomic_swap_nbi shmem_atomic_swap ;                  \
    ALIAS shmem_##N##_swap shmem_atomic_swap ;
SHMEM_TYPES_AMO_EXT(AMO_EXT_ALIASES)

#define AMO_STD_ALIASES(T, N)                                                  \
    ALIAS shmem_##N##_atomic_compare_swap shmem_atomic_compare_swap ;          \
    ALIAS shmem_ctx_##N##_atomic_compare_swap shmem_atomic_compare_swap ;      \
    ALIAS shmem_##N##_atomic_compare_swap_nbi shmem_atomic_compare_swap ;      \
    ALIAS shmem_ctx_##N##_atomic_compare_swap_nbi shmem_atomic_compare_swap ;  \
    ALIAS shmem_##N##_cswap shmem_atomic_compare_swap ;                        \
    ALIAS shmem_##N##_atomic_add shmem_atomic_add ;                            \
    ALIAS shmem_ctx_##N##_atomic_add shmem_atomic_add ;                        \
    ALIAS shmem_##N##_atomic_fetch_add shmem_atomic_add ;                      \
    ALIAS shmem_ctx_##N##_atomic_fetch_add shmem_atomic_add ;                  \
    ALIAS shmem_##N##_atomic_fetch_add_nbi shmem_atomic_add ;                  \
    ALIAS shmem_ctx_##N##_atomic_fetch_add_nbi shmem_atomic_add ;              \
    ALIAS shmem_##N##_atomic_inc shmem_atomic_add ;                            \
    ALIAS shmem_ctx_##N##_atomic_inc shmem_atomic_add ;                        \
    ALIAS shmem_##N##_atomic_fetch_inc shmem_atomic_add ;                      \
    ALIAS shmem_ctx_##N##_atomic_fetch_inc shmem_atomic_add ;                  \
    ALIAS shmem_##N##_atomic_fetch_inc_nbi shmem_atomic_add ;                  \
    ALIAS shmem_ctx_##N##_atomic_fetch_inc_nbi shmem_atomic_add ;              \
    ALIAS shmem_##N##_add shmem_atomic_add ;                                   \
    ALIAS shmem_##N##_fadd shmem_atomic_add ;                                  \
    ALIAS shmem_##N##_inc shmem_atomic_add ;                                   \
    ALIAS shmem_##N##_finc shmem_atomic_add ;
SHMEM_TYPES_AMO_STD(AMO_STD_ALIASES)

#define AMO_BIT_OP_ALIASES(N, OP)                                              \
    ALIAS shmem_##N##_atomic_##OP shmem_atomic_and ;                           \
    ALIAS shmem_ctx_##N##_atomic_##OP shmem_atomic_and ;                       \
    ALIAS shmem_##N##_atomic_fetch_##OP shmem_atomic_and ;                     \
    ALIAS shmem_ctx_##N##_atomic_fetch_##OP shmem_atomic_and ;                 \
    ALIAS shmem_##N##_atomic_fetch_##OP##_nbi shmem_atomic_and ;               \
    ALIAS shmem_ctx_##N##_atomic_fetch_##OP##_nbi shmem_atomic_and ;
#define AMO_BIT_ALIASES(T, N)                                                  \
    AMO_BIT_OP_ALIASES(N, and) AMO_BIT_OP_ALIASES(N, or)                       \
    AMO_BIT_OP_ALIASES(N, xor)
SHMEM_TYPES_AMO_BIT(AMO_BIT_ALIASES)

#define SIGNAL_TYPED_ALIASES(T, N)                                             \
    ALIAS shmem_##N##_put_signal shmem_put_signal ;                            \
    ALIAS shmem_ctx_##N##_put_signal shmem_put_signal ;                        \
    ALIAS shmem_##N##_put_signal_nbi shmem_put_signal ;                        \
    ALIAS shmem_ctx_##N##_put_signal_nbi shmem_put_signal ;                    \
    ALIAS shmem_##N##_ibput shmem_ibput ;                                      \
    ALIAS shmem_ctx_##N##_ibput shmem_ibput ;                                  \
    ALIAS shmem_##N##_ibget shmem_ibput ;                                      \
    ALIAS shmem_ctx_##N##_ibget shmem_ibput ;
SHMEM_TYPES_RMA(SIGNAL_TYPED_ALIASES)

#define SIGNAL_SIZED_ALIASES(BITS, BYTES, T)                                   \
    ALIAS shmem_put##BITS##_signal shmem_put_signal ;                          \
    ALIAS shmem_ctx_put##BITS##_signal shmem_put_signal ;                      \
    ALIAS shmem_put##BITS##_signal_nbi shmem_put_signal ;                      \
    ALIAS shmem_ctx_put##BITS##_signal_nbi shmem_put_signal ;                  \
    ALIAS shmem_ibput##BITS shmem_ibput ;                                      \
    ALIAS shmem_ctx_ibput##BITS shmem_ibput ;                                  \
    ALIAS shmem_ibget##BITS shmem_ibput ;                                      \
    ALIAS shmem_ctx_ibget##BITS shmem_ibput ;
SHMEM_SIZES(SIGNAL_SIZED_ALIASES)

/* ---- Sandia OpenSHMEM names (shmemx_sos(3), shmemx_pcntr(3)) ---- */
#define SOS_IB_TYPED(T, N)                                                     \
    ALIAS shmemx_##N##_ibput shmemx_sos ;                                      \
    ALIAS shmemx_ctx_##N##_ibput shmemx_sos ;                                  \
    ALIAS shmemx_##N##_ibget shmemx_sos ;                                      \
    ALIAS shmemx_ctx_##N##_ibget shmemx_sos ;
SHMEM_TYPES_RMA(SOS_IB_TYPED)
#define SOS_IB_SIZED(BITS, BYTES, T)                                           \
    ALIAS shmemx_ibput##BITS shmemx_sos ;                                      \
    ALIAS shmemx_ctx_ibput##BITS shmemx_sos ;                                  \
    ALIAS shmemx_ibget##BITS shmemx_sos ;                                      \
    ALIAS shmemx_ctx_ibget##BITS shmemx_sos ;
SHMEM_SIZES(SOS_IB_SIZED)
#define SOS_SCAN(T, N)                                                         \
    ALIAS shmemx_##N##_sum_inscan shmemx_sos ;                                 \
    ALIAS shmemx_##N##_sum_exscan shmemx_sos ;
SHMEM_TYPES_REDUCE_ARITH(SOS_SCAN)
ALIAS shmemx_ibput shmemx_sos ;
ALIAS shmemx_ibget shmemx_sos ;
ALIAS shmemx_sum_inscan shmemx_sos ;
ALIAS shmemx_sum_exscan shmemx_sos ;
ALIAS shmemx_signal_add shmemx_sos ;
ALIAS shmemx_ctx_signal_add shmemx_sos ;
ALIAS shmemx_signal_set shmemx_sos ;
ALIAS shmemx_ctx_signal_set shmemx_sos ;
ALIAS shmemx_signal_fetch shmemx_sos ;
ALIAS shmemx_register_gettid shmemx_sos ;
ALIAS shmemx_pcntr_get_issued_write shmemx_pcntr ;
ALIAS shmemx_pcntr_get_completed_write shmemx_pcntr ;
ALIAS shmemx_pcntr_get_issued_read shmemx_pcntr ;
ALIAS shmemx_pcntr_get_completed_read shmemx_pcntr ;
ALIAS shmemx_pcntr_get_completed_target shmemx_pcntr ;
ALIAS shmemx_pcntr_get_all shmemx_pcntr ;
ALIAS shmemx_pcntr_get_pending_put shmemx_pcntr ;
ALIAS shmemx_pcntr_get_completed_put shmemx_pcntr ;
ALIAS shmemx_pcntr_get_pending_get shmemx_pcntr ;
ALIAS shmemx_pcntr_get_completed_get shmemx_pcntr ;

/* The deprecated shmem_TYPENAME_wait types (api_amo.h's table). */
#define WAIT_DEPRECATED_ALIASES(T, N) ALIAS shmem_##N##_wait shmem_wait ;
WAIT_DEPRECATED_ALIASES(short, short)
WAIT_DEPRECATED_ALIASES(int, int)
WAIT_DEPRECATED_ALIASES(long, long)
WAIT_DEPRECATED_ALIASES(long long, longlong)

ALIAS shmem_putmem_signal shmem_put_signal ;
ALIAS shmem_ctx_putmem_signal shmem_put_signal ;
ALIAS shmem_putmem_signal_nbi shmem_put_signal ;
ALIAS shmem_ctx_putmem_signal_nbi shmem_put_signal ;
ALIAS shmem_put_signal_nbi shmem_put_signal ;
ALIAS shmem_ctx_signal_add shmem_signal_add ;
ALIAS shmem_signal_set shmem_signal_add ;
ALIAS shmem_ctx_signal_set shmem_signal_add ;
ALIAS shmem_ibget shmem_ibput ;
ALIAS shmem_ctx_destroy shmem_ctx_create ;
ALIAS shmem_ctx_get_team shmem_ctx_create ;
ALIAS shmem_ctx_session_stop shmem_ctx_session_start ;
ALIAS shmem_ctx_pe_quiet shmem_pe_quiet ;
ALIAS shmem_test_lock shmem_set_lock ;
ALIAS shmem_clear_lock shmem_set_lock ;
ALIAS shmem_set_cache_inv shmem_clear_cache_inv ;
ALIAS shmem_clear_cache_line_inv shmem_clear_cache_inv ;
ALIAS shmem_set_cache_line_inv shmem_clear_cache_inv ;
ALIAS shmem_udcflush shmem_clear_cache_inv ;
ALIAS shmem_udcflush_line shmem_clear_cache_inv ;
ALIAS shmem_atomic_fetch_nbi shmem_atomic_fetch ;
ALIAS shmem_atomic_swap_nbi shmem_atomic_swap ;
ALIAS shmem_atomic_compare_swap_nbi shmem_atomic_compare_swap ;
ALIAS shmem_atomic_fetch_add shmem_atomic_add ;
ALIAS shmem_atomic_fetch_add_nbi shmem_atomic_add ;
ALIAS shmem_atomic_inc shmem_atomic_add ;
ALIAS shmem_atomic_fetch_inc shmem_atomic_add ;
ALIAS shmem_atomic_fetch_inc_nbi shmem_atomic_add ;
ALIAS shmem_atomic_or shmem_atomic_and ;
ALIAS shmem_atomic_xor shmem_atomic_and ;
ALIAS shmem_atomic_fetch_and shmem_atomic_and ;
ALIAS shmem_atomic_fetch_or shmem_atomic_and ;
ALIAS shmem_atomic_fetch_xor shmem_atomic_and ;
ALIAS shmem_atomic_fetch_and_nbi shmem_atomic_and ;
ALIAS shmem_atomic_fetch_or_nbi shmem_atomic_and ;
ALIAS shmem_atomic_fetch_xor_nbi shmem_atomic_and ;
ALIAS shmem_fetch shmem_atomic_fetch ;
ALIAS shmem_set shmem_atomic_set ;
ALIAS shmem_swap shmem_atomic_swap ;
ALIAS shmem_cswap shmem_atomic_compare_swap ;
ALIAS shmem_fadd shmem_atomic_add ;
ALIAS shmem_finc shmem_atomic_add ;
ALIAS shmem_add shmem_atomic_add ;
ALIAS shmem_inc shmem_atomic_add ;

/* ---- teams and the non-chain collectives ---- */
#define BCAST_TYPED(T, N) ALIAS shmem_##N##_broadcast shmem_broadcast ;
SHMEM_TYPES_RMA(BCAST_TYPED)
ALIAS shmem_broadcastmem shmem_broadcast ;
ALIAS shmem_broadcast32 shmem_broadcast ;
ALIAS shmem_broadcast64 shmem_broadcast ;
ALIAS shmem_team_sync shmem_sync ;

#define REDUCE_TYPED(N, OP)                                                    \
    ALIAS shmem_##N##_##OP##_reduce shmem_##OP##_reduce ;
#define REDUCE_BIT(T, N)                                                       \
    REDUCE_TYPED(N, and) REDUCE_TYPED(N, or) REDUCE_TYPED(N, xor)
#define REDUCE_MINMAX(T, N) REDUCE_TYPED(N, max) REDUCE_TYPED(N, min)
#define REDUCE_ARITH(T, N)                                                     \
    REDUCE_TYPED(N, sum) REDUCE_TYPED(N, prod)                                 \
    ALIAS shmem_##N##_sum_inscan shmem_scan ;                                  \
    ALIAS shmem_##N##_sum_exscan shmem_scan ;
SHMEM_TYPES_REDUCE_BIT(REDUCE_BIT)
SHMEM_TYPES_REDUCE_MINMAX(REDUCE_MINMAX)
SHMEM_TYPES_REDUCE_ARITH(REDUCE_ARITH)
ALIAS shmem_sum_inscan shmem_scan ;
ALIAS shmem_sum_exscan shmem_scan ;

#define TO_ALL_TYPED(N, OP) ALIAS shmem_##N##_##OP##_to_all shmem_##OP##_reduce ;
#define TO_ALL_BIT(T, N)                                                       \
    TO_ALL_TYPED(N, and) TO_ALL_TYPED(N, or) TO_ALL_TYPED(N, xor)
#define TO_ALL_MINMAX(T, N) TO_ALL_TYPED(N, max) TO_ALL_TYPED(N, min)
#define TO_ALL_ARITH(T, N) TO_ALL_TYPED(N, sum) TO_ALL_TYPED(N, prod)
SHMEM_TYPES_TO_ALL_BIT(TO_ALL_BIT)
SHMEM_TYPES_TO_ALL_MINMAX(TO_ALL_MINMAX)
SHMEM_TYPES_TO_ALL_ARITH(TO_ALL_ARITH)

/* GPU extensions (cuda backend): one family page each. */
ALIAS shmemx_getmem_on_stream shmemx_putmem_on_stream ;
ALIAS shmemx_putmem_signal_on_stream shmemx_putmem_on_stream ;
ALIAS shmemx_signal_wait_until_on_stream shmemx_putmem_on_stream ;
ALIAS shmemx_quiet_on_stream shmemx_putmem_on_stream ;
ALIAS shmemx_barrier_on_stream shmemx_fcollectmem_on_stream ;
ALIAS shmemx_alltoallmem_on_stream shmemx_fcollectmem_on_stream ;

/* ---- AllGather / AlltoAll (src/coll/fcollect.c, alltoall.c) ---- */
#define CHAIN_TYPED(T, N)                                                      \
    ALIAS shmem_##N##_fcollect shmem_fcollect ;                                \
    ALIAS shmem_##N##_collect shmem_fcollect ;                                 \
    ALIAS shmem_##N##_alltoall shmem_alltoall ;                                \
    ALIAS shmem_##N##_alltoalls shmem_alltoalls ;
SHMEM_TYPES_RMA(CHAIN_TYPED)
ALIAS shmem_fcollectmem shmem_fcollect ;
ALIAS shmem_collect shmem_fcollect ;
ALIAS shmem_collectmem shmem_fcollect ;
ALIAS shmem_alltoallmem shmem_alltoall ;
ALIAS shmem_alltoallsmem shmem_alltoalls ;
ALIAS shmem_fcollect32 shmem_fcollect ;
ALIAS shmem_fcollect64 shmem_fcollect ;
ALIAS shmem_collect32 shmem_fcollect ;
ALIAS shmem_collect64 shmem_fcollect ;
ALIAS shmem_alltoall32 shmem_alltoall ;
ALIAS shmem_alltoall64 shmem_alltoall ;
ALIAS shmem_alltoalls32 shmem_alltoalls ;
ALIAS shmem_alltoalls64 shmem_alltoalls ;
ALIAS shmemx_fcollectmem_init shmemx_req ;
ALIAS shmemx_alltoallmem_init shmemx_req ;
ALIAS shmemx_req_start shmemx_req ;
ALIAS shmemx_req_wait shmemx_req ;
ALIAS shmemx_req_free shmemx_req ;
ALIAS shmemx_req_device shmemx_dev ;

/* ---- the device API (include/shmemx_cuda.h): one page, shmemx_dev(3) ---- */
#include <shmemx_cuda.h>
ALIAS shmemx_dev_get shmemx_dev ;
ALIAS shmemx_dev_putmem shmemx_dev ;
ALIAS shmemx_dev_putmem_nbi shmemx_dev ;
ALIAS shmemx_dev_getmem shmemx_dev ;
ALIAS shmemx_dev_getmem_nbi shmemx_dev ;
ALIAS shmemx_dev_putmem_signal_nbi shmemx_dev ;
ALIAS shmemx_dev_signal_wait_until shmemx_dev ;
ALIAS shmemx_dev_signal_fetch shmemx_dev ;
ALIAS shmemx_dev_quiet shmemx_dev ;
ALIAS shmemx_dev_fence shmemx_dev ;
ALIAS shmemx_dev_barrier_all shmemx_dev ;
ALIAS shmemx_dev_fcollectmem shmemx_dev ;
ALIAS shmemx_dev_alltoallmem shmemx_dev ;
ALIAS shmemx_dev_broadcastmem shmemx_dev ;
ALIAS shmemx_dev_req_start shmemx_dev ;
ALIAS shmemx_dev_req_wait shmemx_dev ;
/* The _warp and _block forms (CUDA). */
#define DEV_GROUP(NAME)                                                        \
    ALIAS shmemx_dev_##NAME##_warp shmemx_dev ;                                \
    ALIAS shmemx_dev_##NAME##_block shmemx_dev ;
DEV_GROUP(putmem)
DEV_GROUP(putmem_nbi)
DEV_GROUP(getmem)
DEV_GROUP(getmem_nbi)
DEV_GROUP(putmem_signal_nbi)
DEV_GROUP(quiet)
DEV_GROUP(barrier_all)
DEV_GROUP(fcollectmem)
DEV_GROUP(alltoallmem)
DEV_GROUP(broadcastmem)
#define DEV_PG(T, N)                                                           \
    ALIAS shmemx_dev_##N##_p shmemx_dev ;                                      \
    ALIAS shmemx_dev_##N##_g shmemx_dev ;
SHMEMX_DEV_TYPES_RMA(DEV_PG)
#define DEV_AMO(T, N, A)                                                       \
    ALIAS shmemx_dev_##N##_atomic_fetch_add shmemx_dev ;                       \
    ALIAS shmemx_dev_##N##_atomic_add shmemx_dev ;                             \
    ALIAS shmemx_dev_##N##_atomic_compare_swap shmemx_dev ;
SHMEMX_DEV_TYPES_AMO(DEV_AMO)
/* Its HIP form (include/shmemx_hip.h, same routine names as inline code):
 * the one exported name, on shmemx_dev_hip(3). */
ALIAS shmemx_dev_get_hip shmemx_dev_hip ;
