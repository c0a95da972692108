/*
 * Descriptor passing over unix sockets (SCM_RIGHTS), one record at a time:
 * the launcher's wire protocol, its client (boot_launcher.c) and the PMIx
 * bootstrap's descriptor servers all send at most one descriptor with a
 * record and must not leak any extra descriptor a broken peer attaches.
 */
#ifndef DSM_FDPASS_H
#define DSM_FDPASS_H

#include <sys/types.h>
#include <sys/uio.h>

/* sendmsg(2) of iov[0..iovcnt) with fd attached (none when fd < 0); flags
 * are sendmsg's (MSG_NOSIGNAL, MSG_DONTWAIT, ...). Retries EINTR. Returns
 * the bytes sent or -1 with errno. */
ssize_t dsm_fd_send(int sock, const struct iovec *iov, int iovcnt, int fd,
                    int flags);

/* recvmsg(2) of one record into iov[0..iovcnt), with MSG_CMSG_CLOEXEC
 * added to flags. Retries EINTR. *fd gets the first descriptor that came
 * with it (else -1); any further ones are closed. *msg_flags (may be NULL)
 * gets the record's msg_flags, to check MSG_TRUNC/MSG_CTRUNC. Returns the
 * bytes received, 0 at EOF or -1 with errno (then *fd is -1). */
ssize_t dsm_fd_recv(int sock, struct iovec *iov, int iovcnt, int *fd, int flags,
                    int *msg_flags);

#endif /* DSM_FDPASS_H */
