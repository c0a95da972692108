/*
 * Wire protocol between shmem_launcher and its PEs (boot_launcher.c).
 *
 * Transport: a unix SOCK_SEQPACKET socket. Each sendmsg() is one record and
 * each recvmsg() returns one whole record, so neither side has to reassemble
 * partial messages, and a descriptor passed with SCM_RIGHTS always travels
 * with the record it belongs to.
 *
 * A record is a fixed header, then keylen bytes of key (no NUL), then len
 * bytes of payload. The client has at most one request outstanding; every
 * request gets exactly one reply record whose op is the request's op with
 * DSM_WIRE_REPLY set, and whose status is a dsm_status_t.
 *
 * The PE learns where to connect and who it is from the environment:
 *   DMASHMEM_BOOT_SOCK  path of the launcher's socket
 *   DMASHMEM_RANK       this PE's rank
 *   DMASHMEM_SIZE       number of PEs
 */
#ifndef DSM_WIRE_H
#define DSM_WIRE_H

#include <stdint.h>

#include "boot/boot.h"

#define DSM_WIRE_ENV_SOCK "DMASHMEM_BOOT_SOCK"
#define DSM_WIRE_ENV_RANK "DMASHMEM_RANK"
#define DSM_WIRE_ENV_SIZE "DMASHMEM_SIZE"

/* "DSMW": catches a stray connection speaking something else. */
#define DSM_WIRE_MAGIC 0x44534d57u
/* Bumped whenever a record layout changes; launcher and library of
 * different versions then refuse each other with a clear message. */
#define DSM_WIRE_VERSION 1u

/* Name of the socket inside the launcher's private directory. */
#define DSM_WIRE_SOCK_NAME "boot.sock"

typedef enum {
    /* request: rank, payload = u32 wire version; reply: payload =
     * dsm_wire_info_t and the launcher-death watch pipe as SCM_RIGHTS */
    DSM_WIRE_HELLO = 1,
    DSM_WIRE_PUT,     /* key, payload = value */
    DSM_WIRE_FENCE,   /* collective */
    DSM_WIRE_GET,     /* rank, key; reply payload = value (waits) */
    DSM_WIRE_BARRIER, /* collective */
    DSM_WIRE_PUT_FD,  /* key, descriptor as SCM_RIGHTS */
    DSM_WIRE_GET_FD,  /* rank, key; reply carries the descriptor (waits) */
    DSM_WIRE_ABORT,   /* status, payload = message (may be empty) */
    /* finalize complete, sent last: the PE's exit is orderly from now on.
     * A PE that said HELLO and ends without FINI or ABORT fails the job,
     * even with status 0 (its peers may wait for it in shared memory). */
    DSM_WIRE_FINI,
    DSM_WIRE_OP_LAST
} dsm_wire_op_t;

#define DSM_WIRE_REPLY 0x8000u

typedef struct dsm_wire_hdr {
    uint32_t magic;
    uint16_t op;     /* dsm_wire_op_t, | DSM_WIRE_REPLY in replies */
    uint16_t keylen; /* <= DSM_BOOT_KEY_MAX */
    int32_t rank;    /* target rank of GET/GET_FD, own rank in HELLO */
    int32_t status;  /* ABORT: exit status; replies: dsm_status_t */
    uint32_t len;    /* payload bytes, <= DSM_BOOT_VAL_MAX */
} dsm_wire_hdr_t;

typedef struct dsm_wire_info {
    int32_t rank, size;
    int32_t node_rank, node_size;
    int32_t node_id, num_nodes;
} dsm_wire_info_t;

/* Largest record either side sends or receives. */
#define DSM_WIRE_MSG_MAX                                                       \
    (sizeof(dsm_wire_hdr_t) + DSM_BOOT_KEY_MAX + DSM_BOOT_VAL_MAX)

#endif /* DSM_WIRE_H */
