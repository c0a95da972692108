/*
 * The job's secret on the network path (docs/SECURITY.md): where it comes
 * from, the keyed hash that signs each PE's address record and derives its
 * memory keys. Pure functions but dsm_net_job_secret (test/unit/net_auth).
 */
#ifndef DSM_NET_AUTH_H
#define DSM_NET_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include "common/common.h"

/* The launcher's secret reaches the runtime as 32 hex digits
 * (DSM_JOB_SECRET_ENV), handed over in dsm_net_config_t. */
#define DSM_NET_SECRET_BYTES DSM_JOB_SECRET_BYTES

/* SipHash-2-4 of data under a 16-byte key. */
uint64_t dsm_net_siphash(const uint8_t key[DSM_NET_SECRET_BYTES],
                         const void *data, size_t len);

/* 16 bytes from the kernel's random source; 0, or -1 when there is none. */
int dsm_net_random(uint8_t *out, size_t len);

/* hex (2 * DSM_NET_SECRET_BYTES digits) into out; 0, or -1 when hex is
 * not that. */
int dsm_net_secret_parse(const char *hex, uint8_t out[DSM_NET_SECRET_BYTES]);

/* The memory key of segment seg of PE pe: 64 bits of the keyed hash,
 * cut to the provider's key size (bytes, 0: 8). Never 0. */
uint64_t dsm_net_mr_key(const uint8_t secret[DSM_NET_SECRET_BYTES], int pe,
                        int seg, size_t key_size);

/* The key PE 'from' puts into each of its own messages to PE 'to'
 * (batches of atomics and their acknowledgements, src/net/ofi_agg.c):
 * the receiver applies a message only when it carries it. Never 0. */
uint64_t dsm_net_msg_key(const uint8_t secret[DSM_NET_SECRET_BYTES], int from,
                         int to);

#endif /* DSM_NET_AUTH_H */
