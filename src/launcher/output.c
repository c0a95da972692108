/*
 * Forwarding the PEs' output: each PE's stdout and stderr are pipes read by
 * the loop; complete lines go out whole (optionally tagged with the rank),
 * so lines of different PEs never mix, and a partial last line is
 * completed with a newline when the PE ends.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launcher/launcher.h"

int dsm_launcher_write_full(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && errno == EAGAIN) {
            /* stdout set non-blocking by someone else: wait, keep order */
            struct pollfd pfd = {.fd = fd, .events = POLLOUT};
            poll(&pfd, 1, -1);
            continue;
        }
        if (w <= 0)
            return -1;
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

static void out_emit(job_t *job, int rank, outstream_t *s, const char *p,
                     size_t n)
{
    char tag[32];
    int tl = 0;
    if (job->opt.tag_output)
        tl = snprintf(tag, sizeof(tag), "[%d] ", rank);
    if (!tl) {
        dsm_launcher_write_full(s->dest, p, n);
        return;
    }
    /* Prefix each line, then write the batch at once: lines of one PE in one
     * write never mix with another PE's. */
    size_t lines = 0;
    for (size_t i = 0; i < n; i++)
        lines += p[i] == '\n';
    if (n && p[n - 1] != '\n')
        lines++;
    char *buf = malloc(n + lines * (size_t)tl);
    if (!buf) {
        dsm_launcher_write_full(s->dest, p, n);
        return;
    }
    size_t o = 0, start = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '\n' || i == n - 1) {
            memcpy(buf + o, tag, (size_t)tl);
            o += (size_t)tl;
            memcpy(buf + o, p + start, i + 1 - start);
            o += i + 1 - start;
            start = i + 1;
        }
    }
    dsm_launcher_write_full(s->dest, buf, o);
    free(buf);
}

void dsm_launcher_out_flush(job_t *job, int rank, outstream_t *s)
{
    if (s->len) {
        s->buf[s->len++] = '\n';
        out_emit(job, rank, s, s->buf, s->len);
        s->len = 0;
    }
}

/* Read what the pipe holds; forward complete lines, keep the rest. At EOF
 * the partial last line goes out with a newline added. With drain, read
 * until the pipe is empty, else stop after a short read (poll says when
 * there is more). Returns 1 at EOF, else 0. */
int dsm_launcher_out_read(job_t *job, int rank, outstream_t *s, bool drain)
{
    char chunk[65536];
    for (;;) {
        ssize_t r = read(s->fd, chunk, sizeof(chunk));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && errno == EAGAIN)
            return 0;
        if (r <= 0) {
            dsm_launcher_out_flush(job, rank, s);
            close(s->fd);
            s->fd = -1;
            return 1;
        }
        const char *p = chunk;
        size_t n = (size_t)r;
        /* Complete lines: the buffered head plus up to the last newline. */
        const char *nl = memrchr(p, '\n', n);
        if (nl) {
            size_t head = (size_t)(nl - p) + 1;
            if (s->len) {
                /* Join buffered partial line and the rest in one batch. */
                char *tmp = malloc(s->len + head);
                if (tmp) {
                    memcpy(tmp, s->buf, s->len);
                    memcpy(tmp + s->len, p, head);
                    out_emit(job, rank, s, tmp, s->len + head);
                    free(tmp);
                } else {
                    out_emit(job, rank, s, s->buf, s->len);
                    out_emit(job, rank, s, p, head);
                }
                s->len = 0;
            } else {
                out_emit(job, rank, s, p, head);
            }
            p += head;
            n -= head;
        }
        while (n) {
            size_t room = LINE_MAX_BYTES - s->len;
            size_t take = DSM_MIN(room, n);
            memcpy(s->buf + s->len, p, take);
            s->len += take;
            p += take;
            n -= take;
            if (s->len == LINE_MAX_BYTES) {
                /* An endless line: forward it in pieces, not unbounded. */
                s->buf[s->len++] = '\n';
                out_emit(job, rank, s, s->buf, s->len);
                s->len = 0;
            }
        }
        if (!drain && (size_t)r < sizeof(chunk))
            return 0;
    }
}

/* The PE is dead: everything it wrote is in the pipe already. */
void dsm_launcher_out_drain(job_t *job, int rank)
{
    for (int k = 0; k < 2; k++)
        if (job->pes[rank].out[k].fd >= 0)
            dsm_launcher_out_read(job, rank, &job->pes[rank].out[k], true);
}
