/*
 * The network path's job secret (src/net/auth.c, issue #27): SipHash-2-4
 * against the reference vectors, the secret's hex form, and memory keys
 * that differ per PE and segment, fit the provider's key size and are
 * never 0.
 */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "check_main.h"
#include "net/auth.h"

START_TEST(siphash_vectors)
{
    uint8_t key[16], msg[64];
    for (int i = 0; i < 16; i++)
        key[i] = (uint8_t)i;
    for (int i = 0; i < 64; i++)
        msg[i] = (uint8_t)i;
    /* The reference implementation's vectors (Aumasson & Bernstein). */
    ck_assert_uint_eq(dsm_net_siphash(key, msg, 0), 0x726fdb47dd0e0e31ull);
    ck_assert_uint_eq(dsm_net_siphash(key, msg, 1), 0x74f839c593dc67fdull);
    ck_assert_uint_eq(dsm_net_siphash(key, msg, 8), 0x93f5f5799a932462ull);
    ck_assert_uint_eq(dsm_net_siphash(key, msg, 15), 0xa129ca6149be45e5ull);
    ck_assert_uint_eq(dsm_net_siphash(key, msg, 63), 0x958a324ceb064572ull);
}
END_TEST

START_TEST(secret_hex)
{
    uint8_t s[DSM_NET_SECRET_BYTES];
    ck_assert_int_eq(dsm_net_secret_parse("000102030405060708090a0b0c0d0eFF",
                                          s), 0);
    ck_assert_uint_eq(s[0], 0);
    ck_assert_uint_eq(s[10], 10);
    ck_assert_uint_eq(s[15], 0xff);
    ck_assert_int_eq(dsm_net_secret_parse("00", s), -1);
    ck_assert_int_eq(dsm_net_secret_parse(NULL, s), -1);
    ck_assert_int_eq(dsm_net_secret_parse("zz0102030405060708090a0b0c0d0e0f",
                                          s), -1);
}
END_TEST

START_TEST(mr_keys)
{
    uint8_t s[DSM_NET_SECRET_BYTES], t[DSM_NET_SECRET_BYTES];
    ck_assert_int_eq(dsm_net_random(s, sizeof(s)), 0);
    memcpy(t, s, sizeof(s));
    t[3] ^= 1;
    uint64_t k00 = dsm_net_mr_key(s, 0, 0, 8), k01 = dsm_net_mr_key(s, 0, 1, 8),
             k10 = dsm_net_mr_key(s, 1, 0, 8);
    ck_assert_uint_ne(k00, k01);
    ck_assert_uint_ne(k00, k10);
    ck_assert_uint_ne(k00, dsm_net_mr_key(t, 0, 0, 8)); /* another job */
    ck_assert_uint_eq(k00, dsm_net_mr_key(s, 0, 0, 0)); /* 0: 8 bytes */
    ck_assert_uint_le(dsm_net_mr_key(s, 0, 0, 4), 0xffffffffull);
    /* Never one of the small integers a guess would try first: 64 random
     * bits are above 8 but once in 2^61. */
    ck_assert_uint_gt(k00, 8);
    ck_assert_uint_ne(dsm_net_mr_key(s, 2, 0, 1), 0);
}
END_TEST

/* The key of a batch of atomics (src/net/ofi_agg.c): one per direction
 * and pair, another job's differs, never 0 nor a memory key. */
START_TEST(msg_keys)
{
    uint8_t s[DSM_NET_SECRET_BYTES], t[DSM_NET_SECRET_BYTES];
    ck_assert_int_eq(dsm_net_random(s, sizeof(s)), 0);
    memcpy(t, s, sizeof(s));
    t[0] ^= 0x80;
    uint64_t k01 = dsm_net_msg_key(s, 0, 1), k10 = dsm_net_msg_key(s, 1, 0);
    ck_assert_uint_ne(k01, k10);
    ck_assert_uint_ne(k01, dsm_net_msg_key(s, 0, 2));
    ck_assert_uint_ne(k01, dsm_net_msg_key(t, 0, 1));
    ck_assert_uint_eq(k01, dsm_net_msg_key(s, 0, 1));
    ck_assert_uint_ne(k01, dsm_net_mr_key(s, 0, 1, 8));
    ck_assert_uint_gt(k01, 8);
    ck_assert_uint_ne(dsm_net_msg_key(s, 5, 5), 0);
}
END_TEST

static Suite *net_auth_suite(void)
{
    Suite *su = suite_create("net_auth");
    TCase *tc = tcase_create("net_auth");
    tcase_add_test(tc, siphash_vectors);
    tcase_add_test(tc, secret_hex);
    tcase_add_test(tc, mr_keys);
    tcase_add_test(tc, msg_keys);
    suite_add_tcase(su, tc);
    return su;
}

DSM_CHECK_MAIN(net_auth_suite)
