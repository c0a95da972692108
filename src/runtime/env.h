/*
 * Environment variables: one table gives each variable's name, type,
 * default and help line. Parsed once at init into dsm_env; SHMEM_INFO=1
 * prints the table with the values in force. SHMEM_X falls back to the
 * deprecated SMA_X where the spec had one.
 */
#ifndef DSM_ENV_H
#define DSM_ENV_H

#include <stdint.h>

/* X(name, type, field, default, help). type: SIZE (bytes, K/M/G suffixes),
 * INT, BOOL, STR. */
#define DSM_ENV_LIST(X)                                                        \
    X(SHMEM_SYMMETRIC_SIZE, SIZE, symmetric_size, "512M",                      \
      "bytes of symmetric heap per PE (K/M/G suffixes)")                       \
    X(SHMEM_DEBUG, BOOL, debug, "0",                                           \
      "print debugging messages (allocation failures, selections)")           \
    X(SHMEM_INFO, BOOL, info, "0",                                             \
      "print every environment variable with its value at init")              \
    X(SHMEM_VERSION, BOOL, version, "0",                                       \
      "print the library version at init")                                    \
    X(SHMEM_BOOTSTRAP, STR, bootstrap, "auto",                                 \
      "bootstrap: auto, launcher, pmix or single")                            \
    X(SHMEM_SDMA_BACKEND, STR, sdma_backend, "auto",                           \
      "DMA backend: auto, cuda, hsa or cpu")                                  \
    X(SHMEM_SDMA_ENGINES, INT, sdma_engines, "1",                              \
      "DMA engines (queues for RMA) per PE; cpu backend: engine threads")     \
    X(SHMEM_SDMA_QUEUE_DEPTH, INT, sdma_queue_depth, "4096",                   \
      "commands per engine queue (power of two)")                             \
    X(SHMEM_SDMA_REQUEST_DEPTH, INT, sdma_request_depth, "4096",               \
      "entries of the request ring to the proxy thread (power of two)")       \
    X(SHMEM_SDMA_INLINE_MAX, SIZE, sdma_inline_max, "auto",                    \
      "blocking RMA to a local PE's host memory up to this size is a direct " \
      "copy by the caller; auto = the backend's measured default")            \
    X(SHMEM_SDMA_STATS, BOOL, sdma_stats, "0",                                 \
      "print per-PE command, batch and phase time counters at finalize")      \
    X(SHMEM_WAIT_MODE, STR, wait_mode, "auto",                                 \
      "how blocked PEs wait: spin (spin, then yield), sleep (spin, yield, "   \
      "then sleep), auto (sleep only when PEs outnumber the cores)")          \
    X(SHMEM_SDMA_PROXY, STR, sdma_proxy, "auto",                               \
      "host proxy thread: auto (only for backends whose engines cannot "      \
      "take requests themselves), 1 always, 0 never")

typedef struct dsm_env {
#define DSM_ENV_FIELD_SIZE uint64_t
#define DSM_ENV_FIELD_INT long
#define DSM_ENV_FIELD_BOOL int
#define DSM_ENV_FIELD_STR const char *
#define DSM_ENV_FIELD(name, type, field, def, help)                            \
    DSM_ENV_FIELD_##type field;                                                \
    int field##_set;
    DSM_ENV_LIST(DSM_ENV_FIELD)
#undef DSM_ENV_FIELD
} dsm_env_t;

extern dsm_env_t dsm_env;

/* Parse the environment into dsm_env. Returns 0, or -1 after printing one
 * line that names the variable and the bad value. */
int dsm_env_init(void);
/* SHMEM_INFO: the table with the values in force. */
void dsm_env_print(void);
/* 1 when SIZE/INT value string v is valid; stores it. Used by the tests. */
int dsm_env_parse_int(const char *v, long *out);

#endif /* DSM_ENV_H */
