/*
 * The PMIx bootstrap's descriptor servers (boot_pmix.c): what a PE
 * publishes about its server and the records a client exchanges with it.
 * A header of its own so that tests (test/launcher/boot_client.c) can play
 * a server that is not the one PE's.
 */
#ifndef DSM_PMIX_FD_H
#define DSM_PMIX_FD_H

#include <stdint.h>
#include <sys/un.h>

#include "boot/boot.h"

/* Prefix of our PMIx keys: PMIx reserves "pmix." for its own. */
#define KEY_PREFIX "dsm."
/* Key of a PE's descriptor server (PMIX_LOCAL: only its node needs it). */
#define FDSRV_KEY KEY_PREFIX "fdsrv"
#define FD_MAGIC 0x64736d66u /* "dsmf" */
#define TOKEN_LEN 16
/* How long either side of a descriptor request waits for the other. */
#define FD_IO_MS 10000

/* What a PE publishes about its descriptor server. */
typedef struct fdsrv_addr {
    uint32_t magic;
    uint32_t pid;
    uint8_t token[TOKEN_LEN];
    uint32_t namelen; /* bytes of name, the leading NUL included */
    char name[sizeof(((struct sockaddr_un *)0)->sun_path)];
} fdsrv_addr_t;

typedef struct fd_req {
    uint32_t magic;
    uint8_t token[TOKEN_LEN];
    char key[DSM_BOOT_KEY_MAX + 1];
} fd_req_t;

typedef struct fd_rep {
    uint32_t magic;
    int32_t status; /* dsm_status_t; a descriptor comes with DSM_OK */
} fd_rep_t;

#endif /* DSM_PMIX_FD_H */
