/*
 * test_prodtext.c - times (clock, order, microsecond conversion) and the
 * text forms of product metadata: LDM's time text, the s_prod_info line of
 * every per-product log message (docs/protocol.md, "Text formats in logs
 * and output"), and signatures as hex.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "pq/product.h"

static pq_timestamp ts(int64_t sec, int32_t usec) {
  return (pq_timestamp){sec, usec};
}

static void check_time(pq_timestamp t, const char *want) {
  char buf[32];
  int n = pq_ts_format(t, buf, sizeof buf);

  assert_string_equal(buf, want);
  assert_int_equal(n, (int)strlen(want));
}

/* ------------------------------------------------------------------ */
/* timestamp.c                                                        */
/* ------------------------------------------------------------------ */

static void test_ts_now(void **state) {
  time_t before, after;
  pq_timestamp t;

  (void)state;
  before = time(NULL);
  t = pq_ts_now();
  after = time(NULL);
  assert_true(t.sec >= (int64_t)before);
  assert_true(t.sec <= (int64_t)after);
  assert_in_range(t.usec, 0, 999999);
}

static void test_ts_cmp(void **state) {
  (void)state;
  assert_int_equal(pq_ts_cmp(ts(5, 7), ts(5, 7)), 0);
  assert_true(pq_ts_cmp(ts(5, 7), ts(5, 8)) < 0);
  assert_true(pq_ts_cmp(ts(5, 8), ts(5, 7)) > 0);
  assert_true(pq_ts_cmp(ts(4, 999999), ts(5, 0)) < 0);
  assert_true(pq_ts_cmp(ts(6, 0), ts(5, 999999)) > 0);
  assert_true(pq_ts_cmp(ts(-3, 0), ts(2, 0)) < 0);
  /* 64-bit seconds: no 2038 wrap. */
  assert_true(pq_ts_cmp(ts(0x100000000LL, 0), PQ_TS_ENDT) > 0);
  assert_true(pq_ts_cmp(PQ_TS_NONE, PQ_TS_ZERO) < 0);
  assert_true(pq_ts_cmp(PQ_TS_ZERO, ts(1700000000, 0)) < 0);
  assert_true(pq_ts_cmp(ts(1700000000, 0), PQ_TS_ENDT) < 0);
  assert_true(pq_ts_cmp(ts(INT64_MIN, 0), ts(INT64_MAX, 0)) < 0);
}

static void test_ts_us(void **state) {
  uint64_t samples[] = {
      0, 1, 999999, 1000000, 1700000000123456ULL, UINT64_MAX - 1, UINT64_MAX};
  size_t i;

  (void)state;
  assert_int_equal(pq_ts_to_us(PQ_TS_ZERO), 0);
  assert_int_equal(pq_ts_to_us(ts(1, 2)), 1000002);
  assert_int_equal(pq_ts_to_us(ts(1700000000, 123456)), 1700000000123456ULL);
  assert_int_equal(pq_ts_to_us(PQ_TS_ENDT), 2147483647999999ULL);
  /* Before the epoch gives 0. */
  assert_int_equal(pq_ts_to_us(PQ_TS_NONE), 0);
  assert_int_equal(pq_ts_to_us(ts(-5, 3)), 0);
  assert_int_equal(pq_ts_to_us(ts(0, -1)), 0);
  assert_int_equal(pq_ts_to_us(ts(1, -1)), 999999);
  /* Beyond 2^64 microseconds saturates. */
  assert_int_equal(pq_ts_to_us(ts(INT64_MAX, 0)), UINT64_MAX);
  assert_int_equal(pq_ts_to_us(ts(18446744073709LL, 999999)), UINT64_MAX);
  assert_int_equal(pq_ts_to_us(ts(18446744073709LL, 551614)), UINT64_MAX - 1);

  assert_int_equal(pq_ts_from_us(0).sec, 0);
  assert_int_equal(pq_ts_from_us(0).usec, 0);
  assert_int_equal(pq_ts_from_us(1000002).sec, 1);
  assert_int_equal(pq_ts_from_us(1000002).usec, 2);
  assert_int_equal(pq_ts_from_us(UINT64_MAX).sec, 18446744073709LL);
  assert_int_equal(pq_ts_from_us(UINT64_MAX).usec, 551615);
  for (i = 0; i < sizeof samples / sizeof samples[0]; i++) {
    pq_timestamp t = pq_ts_from_us(samples[i]);

    assert_in_range(t.usec, 0, 999999);
    assert_int_equal(pq_ts_to_us(t), samples[i]);
  }
}

/* ------------------------------------------------------------------ */
/* Time text                                                          */
/* ------------------------------------------------------------------ */

static void test_ts_format(void **state) {
  (void)state;
  check_time(PQ_TS_NONE, "TS_NONE");
  check_time(PQ_TS_ZERO, "TS_ZERO");
  check_time(PQ_TS_ENDT, "TS_ENDT");
  check_time(ts(1700000000, 123456), "20231114221320.123456");
  check_time(ts(1700000000, 0), "20231114221320.000000");
  check_time(ts(0, 1), "19700101000000.000001");
  check_time(ts(0x7fffffff, 999998), "20380119031407.999998");
  check_time(ts(0x7fffffff, 0), "20380119031407.000000");
  /* 64-bit seconds print past 2038, and before 1970. */
  check_time(ts(0x80000000LL, 0), "20380119031408.000000");
  check_time(ts(253402300800LL, 42), "100000101000000.000042");
  check_time(ts(-1, 0), "19691231235959.000000");
  /* Out-of-range usec is carried into the seconds. */
  check_time(ts(10, -1), "19700101000009.999999");
  check_time(ts(10, 1000000), "19700101000011.000000");
  /* Beyond struct tm: seconds since the epoch. */
  check_time(ts(INT64_MAX, 999999), "9223372036854775807.999999");
  check_time(ts(INT64_MIN, -1), "-9223372036854775808.999999");
}

static void test_ts_format_bounds(void **state) {
  pq_timestamp worst[] = {{INT64_MIN, INT32_MIN},
                          {INT64_MAX, INT32_MAX},
                          {INT64_MIN, INT32_MAX},
                          {INT64_MAX, INT32_MIN},
                          {-67768040609740800LL, 0}};
  char buf[32];
  size_t i;

  (void)state;
  for (i = 0; i < sizeof worst / sizeof worst[0]; i++)
    assert_true(pq_ts_format(worst[i], buf, sizeof buf) < 32);
  /* As snprintf: the full length, and a cut, terminated text. */
  assert_int_equal(pq_ts_format(ts(1700000000, 123456), NULL, 0), 21);
  assert_int_equal(pq_ts_format(ts(1700000000, 123456), buf, 9), 21);
  assert_string_equal(buf, "20231114");
  assert_int_equal(pq_ts_format(PQ_TS_ENDT, buf, 4), 7);
  assert_string_equal(buf, "TS_");
}

/* ------------------------------------------------------------------ */
/* Product line                                                       */
/* ------------------------------------------------------------------ */

static const uint8_t SIG[PQ_SIGLEN] = {0x10, 0x11, 0x12, 0x13, 0x14, 0x15,
                                       0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b,
                                       0x1c, 0x1d, 0x1e, 0x1f};

static pq_prod_info nexrad_info(void) {
  pq_prod_info info;

  memset(&info, 0, sizeof info);
  info.arrival = ts(1700000000, 123456);
  memcpy(info.signature, SIG, sizeof SIG);
  strcpy(info.origin, "host.example.com");
  info.feedtype = PQ_FT_NEXRAD3;
  info.seqno = 42;
  strcpy(info.ident, "SDUS54 KLZK 142213 /pN0QLZK");
  info.size = 21474;
  return info;
}

static void check_line(const pq_prod_info *info, bool with_sig,
                       const char *want) {
  char buf[600];
  int n = pq_prod_info_format(info, with_sig, buf, sizeof buf);

  assert_string_equal(buf, want);
  assert_int_equal(n, (int)strlen(want));
}

static void test_prod_info_spec_example(void **state) {
  pq_prod_info info = nexrad_info();

  (void)state;
  /* LDM's notifyme line for this product, byte for byte; the origin is
   * not shown. */
  check_line(&info, false,
             "     21474 20231114221320.123456 NEXRAD3 042  "
             "SDUS54 KLZK 142213 /pN0QLZK");
  check_line(&info, true,
             "101112131415161718191a1b1c1d1e1f "
             "     21474 20231114221320.123456 NEXRAD3 042  "
             "SDUS54 KLZK 142213 /pN0QLZK");
}

static void test_prod_info_fields(void **state) {
  pq_prod_info info = nexrad_info();

  (void)state;
  info.seqno = 7;
  info.size = 0;
  info.feedtype = PQ_FT_IDS | PQ_FT_DDPLUS;
  strcpy(info.ident, "SAUS01");
  check_line(&info, false,
             "         0 20231114221320.123456 IDS|DDPLUS 007  SAUS01");
  info.seqno = 1234;
  info.size = 5000000000ULL; /* past 32 bits */
  check_line(&info, false,
             "5000000000 20231114221320.123456 IDS|DDPLUS 1234  SAUS01");
  info.seqno = UINT32_MAX;
  info.size = 12345678901ULL;
  check_line(&info, false,
             "12345678901 20231114221320.123456 IDS|DDPLUS "
             "4294967295  SAUS01");
  /* Special times, no feedtype, empty ident: two trailing spaces. */
  info.arrival = PQ_TS_NONE;
  info.feedtype = PQ_FT_NONE;
  info.seqno = 0;
  info.size = 1;
  info.ident[0] = '\0';
  check_line(&info, false, "         1 TS_NONE NONE 000  ");
  info.arrival = PQ_TS_ENDT;
  check_line(&info, false, "         1 TS_ENDT NONE 000  ");
  info.arrival = PQ_TS_ZERO;
  info.feedtype = PQ_FT_ANY;
  check_line(&info, false, "         1 TS_ZERO ANY 000  ");
}

static void test_prod_info_bounds(void **state) {
  pq_prod_info info = nexrad_info();
  char buf[600], want[64];
  int n;

  (void)state;
  /* The longest line: every field at its widest. */
  info.arrival = ts(INT64_MIN, INT32_MIN);
  info.feedtype = 0xFF7FF3FDu;
  info.seqno = UINT32_MAX;
  info.size = UINT64_MAX;
  memset(info.ident, 'I', PQ_IDENT_MAX);
  info.ident[PQ_IDENT_MAX] = '\0';
  n = pq_prod_info_format(&info, true, buf, sizeof buf);
  assert_true(n < 600);
  assert_int_equal(n, (int)strlen(buf));
  assert_non_null(strstr(buf, "|PPS|0x80000000 4294967295  IIII"));
  assert_int_equal(buf[n - 1], 'I');

  /* An ident without its NUL prints at most PQ_IDENT_MAX bytes. */
  memset(info.ident, 'J', sizeof info.ident);
  n = pq_prod_info_format(&info, true, buf, sizeof buf);
  assert_int_equal(n, (int)strlen(buf));
  assert_int_equal(strspn(strchr(buf, 'J'), "J"), PQ_IDENT_MAX);

  /* As snprintf: full length returned, text cut and terminated. */
  info = nexrad_info();
  n = pq_prod_info_format(&info, true, NULL, 0);
  assert_int_equal(n, 33 + 10 + 1 + 21 + 1 + 7 + 1 + 3 + 2 + 27);
  memset(want, 'x', sizeof want);
  assert_int_equal(pq_prod_info_format(&info, true, want, 12), n);
  assert_string_equal(want, "10111213141");
}

/* ------------------------------------------------------------------ */
/* Signatures                                                         */
/* ------------------------------------------------------------------ */

static const uint8_t SIG2[PQ_SIGLEN] = {0x00, 0x11, 0x22, 0x33, 0x44, 0x55,
                                        0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb,
                                        0xcc, 0xdd, 0xee, 0xff};

static void test_sig_format(void **state) {
  char buf[33];

  (void)state;
  memset(buf, 'x', sizeof buf);
  pq_sig_format(SIG2, buf);
  assert_string_equal(buf, "00112233445566778899aabbccddeeff");
  pq_sig_format(SIG, buf);
  assert_string_equal(buf, "101112131415161718191a1b1c1d1e1f");
}

static void test_sig_parse(void **state) {
  const char *bad[] = {
      "",
      "0",
      "00112233445566778899aabbccddeef",   /* 31 digits */
      "00112233445566778899aabbccddeeff0", /* 33 digits */
      "00112233445566778899aabbccddeef ",
      "g0112233445566778899aabbccddeeff",
      "0g112233445566778899aabbccddeeff",
      "00112233445566778899aabbccddeefg",
      "0x112233445566778899aabbccddeeff",
      " 00112233445566778899aabbccddeeff",
      "SIG=00112233445566778899aabbccddeeff",
  };
  uint8_t sig[PQ_SIGLEN], keep[PQ_SIGLEN];
  char buf[33];
  size_t i;

  (void)state;
  memset(sig, 0, sizeof sig);
  assert_int_equal(pq_sig_parse("00112233445566778899aabbccddeeff", sig), 0);
  assert_memory_equal(sig, SIG2, PQ_SIGLEN);
  memset(sig, 0, sizeof sig);
  assert_int_equal(pq_sig_parse("00112233445566778899AABBCCDDEEFF", sig), 0);
  assert_memory_equal(sig, SIG2, PQ_SIGLEN);
  memset(sig, 0, sizeof sig);
  assert_int_equal(pq_sig_parse("00112233445566778899aAbBcCdDeEfF", sig), 0);
  assert_memory_equal(sig, SIG2, PQ_SIGLEN);

  memset(keep, 0x5a, sizeof keep);
  for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    memcpy(sig, keep, sizeof sig);
    assert_int_equal(pq_sig_parse(bad[i], sig), -1);
    assert_memory_equal(sig, keep, PQ_SIGLEN); /* untouched */
  }

  /* Round trip. */
  pq_sig_format(SIG, buf);
  assert_int_equal(pq_sig_parse(buf, sig), 0);
  assert_memory_equal(sig, SIG, PQ_SIGLEN);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ts_now),
      cmocka_unit_test(test_ts_cmp),
      cmocka_unit_test(test_ts_us),
      cmocka_unit_test(test_ts_format),
      cmocka_unit_test(test_ts_format_bounds),
      cmocka_unit_test(test_prod_info_spec_example),
      cmocka_unit_test(test_prod_info_fields),
      cmocka_unit_test(test_prod_info_bounds),
      cmocka_unit_test(test_sig_format),
      cmocka_unit_test(test_sig_parse),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
