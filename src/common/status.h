/*
 * One internal status enum for every layer, with its strings, from one list
 * (as UCX ucs_status_t / libuv uv_strerror).
 */
#ifndef DSM_STATUS_H
#define DSM_STATUS_H

#define DSM_STATUS_LIST(X)                                                     \
    X(OK, "success")                                                           \
    X(ERR_NOMEM, "out of memory")                                              \
    X(ERR_INVAL, "invalid argument")                                           \
    X(ERR_IO, "input/output error")                                            \
    X(ERR_UNSUPPORTED, "operation not supported")                              \
    X(ERR_NOT_FOUND, "not found")                                              \
    X(ERR_NO_DEVICE, "no device found")                                        \
    X(ERR_AGAIN, "resource temporarily unavailable")                           \
    X(ERR_PEER, "a peer failed")                                               \
    X(ERR_TIMEOUT, "timed out")                                                \
    X(ERR_OVERFLOW, "value too large")

typedef enum {
#define DSM_STATUS_ENUM(name, str) DSM_##name,
    DSM_STATUS_LIST(DSM_STATUS_ENUM)
#undef DSM_STATUS_ENUM
        DSM_STATUS_LAST
} dsm_status_t;

const char *dsm_status_str(dsm_status_t status);

#endif /* DSM_STATUS_H */
