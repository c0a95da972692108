/*
 * Environment variables: one table (common/env_table.h, shared with
 * shmem_launcher) gives each variable's name, type, default and help
 * line. Parsed once at init into dsm_env; SHMEM_INFO=1 prints the table
 * with the values in force. SHMEM_X falls back to the deprecated SMA_X
 * where the spec had one.
 */
#ifndef DSM_ENV_H
#define DSM_ENV_H

#include <stdint.h>

#include "common/env_table.h"

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

/* The name a variable's value came from, for messages: its deprecated
 * SMA_ spelling where the user set that one (field##_set == 2), e.g.
 * DSM_ENV_NAME(symmetric_size, "SYMMETRIC_SIZE"). */
#define DSM_ENV_NAME(field, suffix)                                            \
    (dsm_env.field##_set == 2 ? "SMA_" suffix : "SHMEM_" suffix)

/* Parse the environment into dsm_env. Returns 0, or -1 after printing one
 * line that names the variable and the bad value. */
int dsm_env_init(void);
/* SHMEM_INFO: the table with the values in force. */
void dsm_env_print(void);
/* 1 when SIZE/INT value string v is valid; stores it. Used by the tests. */
int dsm_env_parse_int(const char *v, long *out);

#endif /* DSM_ENV_H */
