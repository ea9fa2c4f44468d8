/*
 * test_ldmnats.c - the pure parts of the NATS bridge's wire format
 * (pqutils/nats/subject.c, ldmnats.h), against the contract between
 * pq2nats and nats2pq as typed here: subjects of feedtypes (one name, or x
 * and 8 hex digits), tokens, prefixes and stream names, chunk subjects and
 * ids, chunk counts and spans, Ldm-Created, and the subject rules (-r):
 * parsing, errors naming the line, first match wins, captures made tokens.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "pqutils/nats/ldmnats.h"

static void test_feed_token(void **state) {
  char buf[32];
  (void)state;
  assert_int_equal(ldmnats_feed_token(PQ_FT_NEXRAD3, buf), 7);
  assert_string_equal(buf, "NEXRAD3");
  ldmnats_feed_token(PQ_FT_WMO, buf); /* a name of several bits */
  assert_string_equal(buf, "WMO");
  ldmnats_feed_token(0xffffffffu, buf);
  assert_string_equal(buf, "ANY");
  ldmnats_feed_token(PQ_FT_NONE, buf);
  assert_string_equal(buf, "NONE");
  /* no one name: x and 8 hex digits */
  ldmnats_feed_token(PQ_FT_NEXRAD3 | PQ_FT_CONDUIT, buf);
  assert_string_equal(buf, "x08001000");
  ldmnats_feed_token(0x80000000u, buf);
  assert_string_equal(buf, "x80000000");
}

static void test_subjects(void **state) {
  char buf[LDMNATS_SUBJECT_MAX], id[48];
  const char *sig = "0123456789abcdef0123456789abcdef";
  (void)state;
  assert_int_equal(ldmnats_feed_subject("ldm", PQ_FT_NEXRAD3, buf, sizeof buf),
                   11);
  assert_string_equal(buf, "ldm.NEXRAD3");
  ldmnats_feed_subject("site.a", PQ_FT_WMO | PQ_FT_NEXRAD3, buf, sizeof buf);
  assert_string_equal(buf, "site.a.x0800000f");
  ldmnats_chunk_subject("ldm", sig, 25, buf, sizeof buf);
  assert_string_equal(buf, "ldm_chunks.0123456789abcdef0123456789abcdef.25");
  assert_int_equal(ldmnats_chunk_msgid(sig, 0, id), 34);
  assert_string_equal(id, "0123456789abcdef0123456789abcdef.0");
  ldmnats_chunk_stream("LDM", buf, sizeof buf);
  assert_string_equal(buf, "LDM_CHUNKS");
  ldmnats_chunk_prefix("ldm", buf, sizeof buf);
  assert_string_equal(buf, "ldm_chunks");
  assert_string_equal(LDMNATS_H_MSGID, "Nats-Msg-Id");
  assert_string_equal(LDMNATS_H_MD5, "Ldm-Data-Md5");
  assert_string_equal(LDMNATS_H_CHUNKS, "Ldm-Chunks");
}

static void test_tokens(void **state) {
  char buf[16];
  (void)state;
  assert_int_equal(ldmnats_token("a.b c*d>e", 9, buf, sizeof buf), 9);
  assert_string_equal(buf, "a_b_c_d_e");
  assert_int_equal(ldmnats_token("", 0, buf, sizeof buf), 1);
  assert_string_equal(buf, "_");
  ldmnats_token("\t\x80z", 3, buf, sizeof buf);
  assert_string_equal(buf, "__z");
  /* cut, NUL-terminated, the full length returned */
  assert_int_equal(ldmnats_token("0123456789abcdefXYZ", 19, buf, sizeof buf),
                   19);
  assert_string_equal(buf, "0123456789abcde");

  assert_true(ldmnats_prefix_ok("ldm"));
  assert_true(ldmnats_prefix_ok("site.ldm"));
  assert_false(ldmnats_prefix_ok(""));
  assert_false(ldmnats_prefix_ok("a..b"));
  assert_false(ldmnats_prefix_ok(".a"));
  assert_false(ldmnats_prefix_ok("a."));
  assert_false(ldmnats_prefix_ok("a.*"));
  assert_false(ldmnats_prefix_ok("a.>"));
  assert_false(ldmnats_prefix_ok("a b"));
  assert_true(ldmnats_stream_ok("LDM"));
  assert_true(ldmnats_stream_ok("LDM-2_x"));
  assert_false(ldmnats_stream_ok(""));
  assert_false(ldmnats_stream_ok("a.b"));
  assert_false(ldmnats_stream_ok("a/b"));
  assert_false(ldmnats_stream_ok("a b"));
}

static void test_chunks(void **state) {
  uint64_t off, len, total = 0;
  (void)state;
  assert_int_equal(ldmnats_chunks(0, 1000), 0);
  assert_int_equal(ldmnats_chunks(1000, 1000), 0); /* fits: no chunks */
  assert_int_equal(ldmnats_chunks(1001, 1000), 2);
  assert_int_equal(ldmnats_chunks(3000, 1000), 3);
  /* 25 MiB in the pieces pq2nats makes for a 1 MiB max_payload */
  uint64_t size = 25u << 20, piece = (1u << 20) - 256;
  uint64_t n = ldmnats_chunks(size, piece);
  assert_int_equal(n, 26);
  for (uint64_t i = 0; i < n; i++) {
    ldmnats_chunk_span(size, piece, i, &off, &len);
    assert_int_equal(off, total); /* contiguous */
    assert_true(len > 0 && len <= piece);
    total += len;
  }
  assert_int_equal(total, size);
  ldmnats_chunk_span(size, piece, n - 1, &off, &len);
  assert_int_equal(len, size - 25 * piece);
}

static void test_created(void **state) {
  char buf[32];
  (void)state;
  assert_int_equal(ldmnats_format_created((pq_timestamp){1700000000, 42}, buf),
                   17);
  assert_string_equal(buf, "1700000000.000042");
  ldmnats_format_created((pq_timestamp){0, 999999}, buf);
  assert_string_equal(buf, "0.999999");
}

static pq_prod_info product(uint32_t ft, const char *ident) {
  pq_prod_info info;
  memset(&info, 0, sizeof info);
  info.feedtype = ft;
  snprintf(info.ident, sizeof info.ident, "%s", ident);
  return info;
}

static void test_rules(void **state) {
  struct ldmnats_rules *r;
  char err[512], buf[LDMNATS_SUBJECT_MAX];
  (void)state;
  const char *text =
      "# comment\n"
      "\n"
      "NEXRAD3\t^SDUS[0-9]{2} .... [0-9]{6} /p(...)(...)\tnexrad3.K\\2.\\1\n"
      "WMO\t^([A-Z]{4})([0-9]{2}) (....)\twmo.\\1.\\3\r\n"
      "ANY\t(.*)\tall.\\0\n"
      "WMO\t^NEVER\tnever\n";
  assert_int_equal(ldmnats_rules_parse(text, "rules", &r, err, sizeof err), 0);
  assert_int_equal(ldmnats_rules_count(r), 4);

  pq_prod_info p = product(PQ_FT_NEXRAD3, "SDUS53 KFTG 021200 /pN0QFTG");
  assert_int_equal(ldmnats_subject(r, "ldm", &p, buf, sizeof buf), 20);
  assert_string_equal(buf, "ldm.nexrad3.KFTG.N0Q");
  p = product(PQ_FT_IDS, "SAUS43 KBOU 021200");
  ldmnats_subject(r, "ldm", &p, buf, sizeof buf);
  assert_string_equal(buf, "ldm.wmo.SAUS.KBOU");
  /* first match wins: a NEXRAD3 product that the first rule misses */
  p = product(PQ_FT_NEXRAD3, "a.b c*");
  ldmnats_subject(r, "ldm", &p, buf, sizeof buf);
  assert_string_equal(buf, "ldm.all.a_b_c_"); /* \0 made one token */
  ldmnats_rules_free(r);

  /* no rule matches: the default subject; no rules at all: the same */
  assert_int_equal(
      ldmnats_rules_parse("WMO\t^X\tx\n", "r", &r, err, sizeof err), 0);
  p = product(PQ_FT_NEXRAD3, "X");
  ldmnats_subject(r, "ldm", &p, buf, sizeof buf);
  assert_string_equal(buf, "ldm.NEXRAD3");
  ldmnats_subject(NULL, "ldm", &p, buf, sizeof buf);
  assert_string_equal(buf, "ldm.NEXRAD3");
  /* an empty group is a token of its own: "_" */
  ldmnats_rules_free(r);
  assert_int_equal(
      ldmnats_rules_parse("ANY\t^(a*)b\tx.\\1\n", "r", &r, err, sizeof err), 0);
  p = product(PQ_FT_WMO, "b");
  ldmnats_subject(r, "ldm", &p, buf, sizeof buf);
  assert_string_equal(buf, "ldm.x._");
  /* a subject too long: the default, and -1 */
  p = product(PQ_FT_WMO, "");
  memset(p.ident, 'a', PQ_IDENT_MAX);
  p.ident[PQ_IDENT_MAX] = '\0';
  ldmnats_rules_free(r);
  assert_int_equal(ldmnats_rules_parse("ANY\t(.*)\tx.\\1.\\1.\\0\n", "r", &r,
                                       err, sizeof err),
                   0);
  assert_int_equal(ldmnats_subject(r, "ldm", &p, buf, sizeof buf), -1);
  assert_string_equal(buf, "ldm.WMO");
  ldmnats_rules_free(r);
}

static void test_rule_errors(void **state) {
  struct ldmnats_rules *r = (struct ldmnats_rules *)&r;
  char err[512];
  (void)state;
  static const struct {
    const char *text, *want;
  } bad[] = {
      {"WMO ^a x\n", "rules:1: not \"feedtype<TAB>ERE<TAB>template\""},
      {"# c\nNOSUCH\ta\tx\n", "rules:2: feedtype \"NOSUCH\""},
      {"WMO\t(\tx\n", "rules:1: pattern \"(\""},
      {"WMO\ta\tx..y\n", "rules:1: template \"x..y\""},
      {"WMO\ta\t.x\n", "rules:1: template"},
      {"WMO\ta\tx.*\n", "rules:1: template"},
      {"WMO\t(a)\tx.\\2\n", "rules:1: template"}, /* no group 2 */
      {"WMO\ta\t\n", "rules:1: template"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    err[0] = '\0';
    assert_int_equal(
        ldmnats_rules_parse(bad[i].text, "rules", &r, err, sizeof err), -1);
    assert_null(r);
    if (strstr(err, bad[i].want) == NULL)
      fail_msg("%s: message \"%s\" lacks \"%s\"", bad[i].text, err,
               bad[i].want);
  }
  assert_int_equal(
      ldmnats_rules_read("/nonexistent/rules", &r, err, sizeof err), -1);
  assert_non_null(strstr(err, "/nonexistent/rules"));
  assert_non_null(strstr(err, "No such file"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_feed_token),  cmocka_unit_test(test_subjects),
      cmocka_unit_test(test_tokens),      cmocka_unit_test(test_chunks),
      cmocka_unit_test(test_created),     cmocka_unit_test(test_rules),
      cmocka_unit_test(test_rule_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
