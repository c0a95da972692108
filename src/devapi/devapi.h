/*
 * The device API's host side (src/devapi): what its files share. The
 * room sits above coll and runtime and nothing below calls into it
 * (test/layers): it hands kernels their handles (cuda.c: shmemx_dev_get
 * over the cuda backend's request FIFO and proxy thread, which stay in
 * src/sdma/cuda/devapi.c; hip.c: shmemx_dev_get_hip over the hsa
 * backend's device SDMA queue) and serves persistent requests that
 * kernels start (kreq.c), registering that part with coll.
 */
#ifndef DSM_DEVAPI_H
#define DSM_DEVAPI_H

#include <stdint.h>

/* The proxy thread's work for a FIFO HOST slot (a persistent request's
 * start or wait from a kernel): the request's own start or wait. */
void dsm_dev_host_op(uint64_t what, uint64_t arg);
/* The proxy thread, on every pass: post the next instances of requests
 * kernels trigger by a store; nonzero while one is in use. */
int dsm_dev_req_poll(void);

#endif /* DSM_DEVAPI_H */
