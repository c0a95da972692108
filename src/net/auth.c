/*
 * The job's secret on the network path (auth.h, docs/SECURITY.md).
 */
#include "net/auth.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

static inline uint64_t rotl(uint64_t x, int b)
{
    return (x << b) | (x >> (64 - b));
}

#define SIPROUND                                                               \
    do {                                                                       \
        v0 += v1;                                                              \
        v1 = rotl(v1, 13);                                                     \
        v1 ^= v0;                                                              \
        v0 = rotl(v0, 32);                                                     \
        v2 += v3;                                                              \
        v3 = rotl(v3, 16);                                                     \
        v3 ^= v2;                                                              \
        v0 += v3;                                                              \
        v3 = rotl(v3, 21);                                                     \
        v3 ^= v0;                                                              \
        v2 += v1;                                                              \
        v1 = rotl(v1, 17);                                                     \
        v1 ^= v2;                                                              \
        v2 = rotl(v2, 32);                                                     \
    } while (0)

static uint64_t le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

uint64_t dsm_net_siphash(const uint8_t key[DSM_NET_SECRET_BYTES],
                         const void *data, size_t len)
{
    const uint8_t *in = data;
    const uint64_t k0 = le64(key), k1 = le64(key + 8);
    uint64_t v0 = 0x736f6d6570736575ull ^ k0, v1 = 0x646f72616e646f6dull ^ k1,
             v2 = 0x6c7967656e657261ull ^ k0, v3 = 0x7465646279746573ull ^ k1;
    uint64_t b = (uint64_t)len << 56, m;
    size_t i, full = len & ~(size_t)7;

    for (i = 0; i < full; i += 8) {
        m = le64(in + i);
        v3 ^= m;
        SIPROUND;
        SIPROUND;
        v0 ^= m;
    }
    for (size_t k = 0; k < (len & 7); k++)
        b |= (uint64_t)in[full + k] << (8 * k);
    v3 ^= b;
    SIPROUND;
    SIPROUND;
    v0 ^= b;
    v2 ^= 0xff;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    return v0 ^ v1 ^ v2 ^ v3;
}

int dsm_net_random(uint8_t *out, size_t len)
{
    size_t got = 0;
    while (got < len) {
        ssize_t r = getrandom(out + got, len - got, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    if (got == len)
        return 0;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    while (got < len) {
        ssize_t r = read(fd, out + got, len - got);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    return got == len ? 0 : -1;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int dsm_net_secret_parse(const char *hex, uint8_t out[DSM_NET_SECRET_BYTES])
{
    if (!hex || strlen(hex) != 2 * DSM_NET_SECRET_BYTES)
        return -1;
    for (int i = 0; i < DSM_NET_SECRET_BYTES; i++) {
        int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        out[i] = (uint8_t)(hi << 4 | lo);
    }
    return 0;
}

uint64_t dsm_net_mr_key(const uint8_t secret[DSM_NET_SECRET_BYTES], int pe,
                        int seg, size_t key_size)
{
    const struct {
        char tag[8];
        int32_t pe, seg;
    } in = {{'m', 'r', ' ', 'k', 'e', 'y', 0, 0}, pe, seg};
    uint64_t k = dsm_net_siphash(secret, &in, sizeof(in));
    if (key_size && key_size < 8)
        k &= ((uint64_t)1 << (8 * key_size)) - 1;
    return k ? k : 1;
}

uint64_t dsm_net_msg_key(const uint8_t secret[DSM_NET_SECRET_BYTES], int from,
                         int to)
{
    const struct {
        char tag[8];
        int32_t from, to;
    } in = {{'m', 's', 'g', ' ', 'k', 'e', 'y', 0}, from, to};
    uint64_t k = dsm_net_siphash(secret, &in, sizeof(in));
    return k ? k : 1;
}
