/*
 * SCM_RIGHTS send and receive (fdpass.h).
 */
#include "common/fdpass.h"
#include "common/common.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Room for a few descriptors, so that a peer that sends more than one
 * does not make us drop the record's control data (MSG_CTRUNC) and lose
 * track of the descriptors we must close. */
#define FDPASS_MAX_RECV 4

ssize_t dsm_fd_send(int sock, const struct iovec *iov, int iovcnt, int fd,
                    int flags)
{
    union {
        struct cmsghdr c;
        char b[CMSG_SPACE(sizeof(int))];
    } cm;
    struct msghdr mh = {.msg_iov = (struct iovec *)iov,
                        .msg_iovlen = (size_t)iovcnt};
    ssize_t w;

    if (fd >= 0) {
        memset(&cm, 0, sizeof(cm));
        mh.msg_control = cm.b;
        mh.msg_controllen = sizeof(cm.b);
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof(int));
    }
    do
        w = sendmsg(sock, &mh, flags);
    while (w < 0 && errno == EINTR);
    return w;
}

ssize_t dsm_fd_recv(int sock, struct iovec *iov, int iovcnt, int *fd, int flags,
                    int *msg_flags)
{
    union {
        struct cmsghdr c;
        char b[CMSG_SPACE(sizeof(int) * FDPASS_MAX_RECV)];
    } cm;
    struct msghdr mh = {.msg_iov = iov,
                        .msg_iovlen = (size_t)iovcnt,
                        .msg_control = cm.b,
                        .msg_controllen = sizeof(cm.b)};
    ssize_t r;

    *fd = -1;
    if (msg_flags)
        *msg_flags = 0;
    do
        r = recvmsg(sock, &mh, flags | MSG_CMSG_CLOEXEC);
    while (r < 0 && errno == EINTR);
    if (r <= 0)
        return r;
    /* Take every passed descriptor so none leaks, keep the first. */
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        size_t nfd = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < nfd; i++) {
            int f;
            memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
            if (*fd < 0)
                *fd = f;
            else
                close(f);
        }
    }
    if (msg_flags)
        *msg_flags = mh.msg_flags;
    return r;
}
