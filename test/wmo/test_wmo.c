/*
 * test_wmo.c - pqing's parsers (pqutils/wmo/): the HDS CRC against the
 * standard's check value and the tests' own bitwise CRC; each framing
 * scanner on messages the tests build (wmo_build.h), whole and fed a byte
 * at a time: stuffing, an ETX inside binary data, the four bytes after an
 * ETX, bad CRCs, parity errors, lone SOH and ETX, AFOS and FAA604, messages
 * too short, too big, and unfinished at a reset; the identifiers (WMO
 * heading, PIL, GRIB model, refusals in LDM's words), the signatures with
 * and without -5, and what the program's name decides.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "pq/pq.h"
#include "pqutils/wmo/wmo_crc.h"
#include "pqutils/wmo/wmo_feed.h"
#include "pqutils/wmo/wmo_frame.h"
#include "pqutils/wmo/wmo_message.h"
#include "pqutils/wmo/wmo_sig.h"
#include "test/wmo/wmo_build.h"

/* ---- collecting events ---- */

#define MAXEV 32
struct got {
  int n;
  enum wmo_event_kind kind[MAXEV];
  size_t len[MAXEV];
  uint8_t data[MAXEV][4096];
  bool no_zczc[MAXEV];
};

static void collect(void *arg, const struct wmo_event *ev) {
  struct got *g = arg;
  assert_true(g->n < MAXEV);
  g->kind[g->n] = ev->kind;
  g->len[g->n] = ev->len;
  g->no_zczc[g->n] = ev->no_zczc;
  if (ev->data != NULL && ev->len <= sizeof g->data[0])
    memcpy(g->data[g->n], ev->data, ev->len);
  g->n++;
}

/* Scan p[0, n) whole (bytewise: one byte at a time), then flush. */
static void scan(struct got *g, enum wmo_framing f, bool check, size_t max,
                 const uint8_t *p, size_t n, bool bytewise) {
  struct wmo_scanner s;
  memset(g, 0, sizeof *g);
  assert_int_equal(wmo_scan_init(&s, f, check, max, collect, g), 0);
  if (bytewise)
    for (size_t i = 0; i < n; i++)
      wmo_scan_feed(&s, p + i, 1);
  else
    wmo_scan_feed(&s, p, n);
  (void)wmo_scan_reset(&s);
  wmo_scan_free(&s);
}

static void assert_message(const struct got *g, int i, const struct wb *m) {
  assert_int_equal(g->kind[i], WMO_EV_MESSAGE);
  assert_int_equal(g->len[i], m->n);
  assert_memory_equal(g->data[i], m->p, m->n);
}

static const char text[] = "METAR KDEN 071153Z 00000KT 10SM CLR 01/M07=";

/* ---- CRC ---- */

static void test_crc(void **state) {
  (void)state;
  /* CRC-16/ARC's check value: the CRC of "123456789" is 0xBB3D. */
  assert_int_equal(wmo_crc(0, (const uint8_t *)"123456789", 9), 0xBB3D);
  uint8_t p[300];
  for (size_t i = 0; i < sizeof p; i++)
    p[i] = (uint8_t)(i * 37 + 11);
  assert_int_equal(wmo_crc(0, p, sizeof p), wb_crc(p, sizeof p));
  /* With its check bytes, a message's CRC is zero. */
  uint8_t c[2];
  wmo_crc_check_bytes(wmo_crc(0, p, 100), c);
  assert_int_equal(wmo_crc(wmo_crc(0, p, 100), c, 2), 0);
}

/* ---- text framing ---- */

static void test_text(void **state) {
  (void)state;
  struct wb a = {0}, b = {0}, in = {0};
  wb_wmo(&a, 1, "SAUS70 KWBC 071200", "MTRDEN", text, strlen(text));
  wb_wmo(&b, 2, "NOUS41 KWBC 071200", NULL, text, strlen(text));
  wb_str(&in, "noise\r\n"); /* before the first SOH: no message */
  wb_put(&in, a.p, a.n);
  wb_str(&in, "\r\n");
  wb_put(&in, b.p, b.n);
  for (int bytewise = 0; bytewise < 2; bytewise++) {
    struct got g;
    scan(&g, WMO_FRAME_TEXT, false, 4096, in.p, in.n, bytewise);
    assert_int_equal(g.n, 2);
    assert_message(&g, 0, &a);
    assert_message(&g, 1, &b);
  }
  wb_free(&a);
  wb_free(&b);
  wb_free(&in);
}

static void test_text_errors(void **state) {
  (void)state;
  struct wb a = {0}, in = {0};
  wb_wmo(&a, 3, "SAUS70 KWBC 071200", NULL, text, strlen(text));
  /* A message cut by the next SOH, a short one, then a good one. */
  wb_str(&in, "\001\r\r\n001\r\r\nSAUS70 KW");
  wb_str(&in, "\001\r\r\n002\r\r\n\003");
  wb_put(&in, a.p, a.n);
  struct got g;
  scan(&g, WMO_FRAME_TEXT, false, 4096, in.p, in.n, false);
  assert_int_equal(g.n, 3);
  assert_int_equal(g.kind[0], WMO_EV_LONE_SOH);
  assert_int_equal(g.kind[1], WMO_EV_TOO_SHORT);
  assert_message(&g, 2, &a);
  /* Printable bytes outside any message, then an ETX: a lone ETX. */
  wb_free(&in);
  wb_str(&in, "junk\003");
  wb_put(&in, a.p, a.n);
  scan(&g, WMO_FRAME_TEXT, false, 4096, in.p, in.n, false);
  assert_int_equal(g.n, 2);
  assert_int_equal(g.kind[0], WMO_EV_LONE_ETX);
  assert_message(&g, 1, &a);
  /* Parity: a NUL inside a message drops it when checking, not else. */
  struct wb bad = {0};
  wb_wmo(&bad, 4, "SAUS70 KWBC 071200", NULL, "AB\0CD", 5);
  wb_free(&in);
  wb_put(&in, bad.p, bad.n);
  wb_put(&in, a.p, a.n);
  scan(&g, WMO_FRAME_TEXT, true, 4096, in.p, in.n, false);
  assert_int_equal(g.n, 2);
  assert_int_equal(g.kind[0], WMO_EV_PARITY);
  assert_message(&g, 1, &a);
  scan(&g, WMO_FRAME_TEXT, false, 4096, in.p, in.n, false);
  assert_int_equal(g.n, 2);
  assert_message(&g, 0, &bad);
  wb_free(&a);
  wb_free(&bad);
  wb_free(&in);
}

/* ---- binary framing ---- */

static void test_binary_etx_in_data(void **state) {
  (void)state;
  /* An ETX after CR CR LF inside the data, followed by what cannot begin a
   * message: data, unstuffed.  Then one followed by SOH CR CR LF, which
   * would end the message: the sender stuffs it with an ESC, which the
   * scanner removes. */
  static const uint8_t body1[] = "GRIB\r\r\n\003xyz binary \003 more";
  static const uint8_t body2[] = "data\r\r\n\003\001\r\r\nand on\r\r\n\033x";
  struct wb a = {0}, b = {0}, c = {0}, in = {0};
  wb_wmo(&a, 10, "HTUS70 KWBC 071200", NULL, body1, sizeof body1 - 1);
  wb_wmo(&b, 11, "HTUS70 KWBC 071200", NULL, body2, sizeof body2 - 1);
  wb_wmo(&c, 12, "SAUS70 KWBC 071200", NULL, text, strlen(text));
  wb_put(&in, a.p, a.n);
  wb_stuff(&in, b.p, b.n);
  wb_put(&in, c.p, c.n);
  assert_true(in.n > a.n + b.n + c.n); /* something was stuffed */
  for (int bytewise = 0; bytewise < 2; bytewise++) {
    struct got g;
    scan(&g, WMO_FRAME_BINARY, false, 4096, in.p, in.n, bytewise);
    assert_int_equal(g.n, 3);
    assert_message(&g, 0, &a);
    assert_message(&g, 1, &b);
    assert_message(&g, 2, &c);
  }
  /* The text framing ends the first message at its inner ETX. */
  struct got g;
  scan(&g, WMO_FRAME_TEXT, false, 4096, a.p, a.n, false);
  assert_true(g.n >= 1);
  assert_true(g.kind[0] != WMO_EV_MESSAGE || g.len[0] < a.n);
  wb_free(&a);
  wb_free(&b);
  wb_free(&c);
  wb_free(&in);
}

static void test_binary_flush(void **state) {
  (void)state;
  /* The last message's ETX has nothing after it: it ends at the flush
   * (and at the reset that ends the input), not before. */
  struct wb a = {0};
  wb_wmo(&a, 5, "SAUS70 KWBC 071200", NULL, text, strlen(text));
  struct got g;
  memset(&g, 0, sizeof g);
  struct wmo_scanner s;
  assert_int_equal(
      wmo_scan_init(&s, WMO_FRAME_BINARY, false, 4096, collect, &g), 0);
  wmo_scan_feed(&s, a.p, a.n);
  assert_int_equal(g.n, 0);
  wmo_scan_flush(&s);
  assert_int_equal(g.n, 1);
  assert_message(&g, 0, &a);
  /* Half a message, then the input breaks: its bytes are lost. */
  wmo_scan_feed(&s, a.p, 30);
  assert_int_equal(wmo_scan_reset(&s), 30);
  assert_int_equal(g.n, 2);
  assert_int_equal(g.kind[1], WMO_EV_LOST);
  assert_int_equal(g.len[1], 30);
  /* And the scanner starts afresh. */
  wmo_scan_feed(&s, a.p, a.n);
  wmo_scan_flush(&s);
  assert_int_equal(g.n, 3);
  assert_message(&g, 2, &a);
  wmo_scan_free(&s);
  wb_free(&a);
}

static void test_binary_crc(void **state) {
  (void)state;
  static const uint8_t body[] = "bin\r\r\n\003\033\r\r\n\003 tail";
  struct wb a = {0}, b = {0}, c = {0}, in = {0};
  wb_wmo(&a, 20, "HTUS70 KWBC 071200", NULL, body, sizeof body - 1);
  wb_wmo(&b, 21, "SAUS70 KWBC 071200", NULL, text, strlen(text));
  wb_wmo(&c, 22, "SAUS70 KWBC 071201", NULL, text, strlen(text));
  wb_stuff_crc(&in, a.p, a.n, 0);
  wb_stuff_crc(&in, b.p, b.n, 1); /* a bad CRC */
  wb_stuff_crc(&in, c.p, c.n, 0);
  for (int bytewise = 0; bytewise < 2; bytewise++) {
    struct got g;
    scan(&g, WMO_FRAME_BINARY, true, 4096, in.p, in.n, bytewise);
    assert_int_equal(g.n, 3);
    assert_message(&g, 0, &a); /* check bytes and ESCs out */
    assert_int_equal(g.kind[1], WMO_EV_BAD_CRC);
    assert_int_equal(g.len[1], b.n);
    assert_message(&g, 2, &c);
  }
  wb_free(&a);
  wb_free(&b);
  wb_free(&c);
  wb_free(&in);
}

static void test_too_big(void **state) {
  (void)state;
  char big[600];
  memset(big, 'x', sizeof big);
  struct wb a = {0}, b = {0}, c = {0}, in = {0};
  wb_wmo(&a, 1, "SAUS70 KWBC 071200", NULL, text, strlen(text));
  wb_wmo(&b, 2, "SAUS70 KWBC 071200", NULL, big, sizeof big);
  wb_wmo(&c, 3, "SAUS70 KWBC 071201", NULL, text, strlen(text));
  wb_put(&in, a.p, a.n);
  wb_put(&in, b.p, b.n);
  wb_put(&in, c.p, c.n);
  enum wmo_framing fs[] = {WMO_FRAME_TEXT, WMO_FRAME_BINARY};
  for (size_t k = 0; k < 2; k++) {
    struct got g;
    scan(&g, fs[k], false, 200, in.p, in.n, false);
    assert_int_equal(g.n, 3);
    assert_message(&g, 0, &a);
    assert_int_equal(g.kind[1], WMO_EV_TOO_BIG);
    assert_int_equal(g.len[1], 200);
    assert_message(&g, 2, &c);
  }
  wb_free(&a);
  wb_free(&b);
  wb_free(&c);
  wb_free(&in);
}

/* ---- AFOS and FAA604 ---- */

static void test_afos(void **state) {
  (void)state;
  struct wb a = {0}, b = {0}, in = {0};
  wb_afos(&a, "MKCSWOMKC", "WOUS64 KWNS 071200\r\r\nsome warning\r\r\n");
  wb_afos(&b, "DENZFPBOU", "zone forecast\r\r\n");
  wb_str(&in, "\r\n");
  wb_put(&in, a.p, a.n);
  wb_str(&in, "ZCZCABCDEF cut short\r\r\n"); /* no NNNN: the next ZCZC */
  wb_put(&in, b.p, b.n);
  struct got g;
  scan(&g, WMO_FRAME_AFOS, false, 4096, in.p, in.n, true);
  assert_int_equal(g.n, 3);
  assert_int_equal(g.kind[0], WMO_EV_MESSAGE);
  /* The first message's bytes from ZCZC. */
  assert_int_equal(g.len[0], a.n);
  assert_memory_equal(g.data[0], a.p, a.n);
  assert_false(g.no_zczc[0]);
  assert_int_equal(g.kind[1], WMO_EV_NO_NNNN);
  assert_message(&g, 2, &b);

  struct wmo_product p = {0};
  assert_int_equal(wmo_parse_afos(a.p, a.n, 7, &p, NULL), 0);
  assert_string_equal(p.ident, "MKCSWOMKC   (WOUS64 KWNS 071200)");
  assert_int_equal(p.seqno, 7);
  assert_int_equal(wmo_parse_afos(b.p, b.n, 8, &p, NULL), 0);
  assert_string_equal(p.ident, "DENZFPBOU");
  assert_int_equal(wmo_parse_afos(g.data[1], g.len[1], 9, &p, NULL), -1);
  wb_free(&a);
  wb_free(&b);
  wb_free(&in);
}

static void test_faa604(void **state) {
  (void)state;
  struct wb a = {0}, in = {0};
  wb_faa604(&a, 17, "12345", "071200",
            "\r\nSAUS70 KWBC 071200\r\nsome text here\r\n");
  wb_put(&in, a.p, a.n);
  struct got g;
  scan(&g, WMO_FRAME_FAA604, false, 4096, in.p, in.n, false);
  assert_int_equal(g.n, 1);
  assert_message(&g, 0, &a);
  struct wmo_product p = {0};
  assert_int_equal(wmo_parse_faa604(a.p, a.n, &p, NULL), 0);
  assert_string_equal(p.ident, "12345 071200 (SAUS70 KWBC 071200)");
  assert_int_equal(p.seqno, 17);
  /* A bad catalogue number is refused. */
  struct wb b = {0};
  wb_faa604(&b, 18, "12a45", "071200", "\r\ntext text text text\r\n");
  assert_int_equal(wmo_parse_faa604(b.p, b.n, &p, NULL), -1);
  wb_free(&a);
  wb_free(&b);
  wb_free(&in);
}

/* ---- identifiers ---- */

static char logged[1024];
static void keep(void *arg, int level, const char *msg) {
  (void)arg;
  (void)level;
  snprintf(logged, sizeof logged, "%s", msg);
}
static const struct np_log keep_log = {.fn = keep, .level = 0};

static void test_ident(void **state) {
  (void)state;
  struct wmo_product p = {0};
  struct wb m = {0};
  wb_wmo(&m, 123, "SAUS70 KWBC 071200", "MTRDEN", text, strlen(text));
  assert_int_equal(wmo_parse(m.p, m.n, true, &p, NULL), 0);
  assert_string_equal(p.ident, "SAUS70 KWBC 071200 /pMTRDEN");
  assert_int_equal(p.seqno, 123);
  assert_int_equal(wmo_parse(m.p, m.n, false, &p, NULL), 0);
  assert_string_equal(p.ident, "SAUS70 KWBC 071200");
  wb_free(&m);
  /* The canonical form: ii padded, BBB kept. */
  wb_wmo(&m, 5, "SRUS8 KWBC 151303 RRA", NULL, text, strlen(text));
  assert_int_equal(wmo_parse(m.p, m.n, true, &p, NULL), 0);
  assert_string_equal(p.ident, "SRUS08 KWBC 151303 RRA");
  wb_free(&m);
  /* Not WMO: a sequence number over 999 digits long is cut at three, a
   * heading of digits is refused, as is a missing sequence number. */
  wb_wmo(&m, 5, "12US70 KWBC 071200", NULL, text, strlen(text));
  logged[0] = '\0';
  assert_int_equal(wmo_parse(m.p, m.n, true, &p, &keep_log), -1);
  assert_non_null(strstr(logged, "Not a WMO format message."));
  wb_free(&m);
  wb_str(&m, "\001\r\r\nSAUS70 KWBC 071200\r\r\nsome text, enough bytes\003");
  assert_int_equal(wmo_parse(m.p, m.n, true, &p, NULL), -1);
  wb_free(&m);
}

static void test_grib(void **state) {
  (void)state;
  struct wmo_product p = {0};
  struct wb g = {0}, m = {0};
  wb_grib1(&g, 120, 7, 96);
  wb_wmo(&m, 9, "HTUS70 KWBC 071200", NULL, g.p, g.n);
  assert_int_equal(wmo_parse(m.p, m.n, true, &p, NULL), 0);
  assert_string_equal(p.ident, "HTUS70 KWBC 071200 /mGFS");
  wb_free(&m);
  /* A GRIB message cut short: refused, in LDM's words. */
  wb_wmo(&m, 9, "HTUS70 KWBC 071200", NULL, g.p, 80);
  logged[0] = '\0';
  assert_int_equal(wmo_parse(m.p, m.n, true, &p, &keep_log), -1);
  assert_non_null(strstr(logged, "Not a WMO GRIB format message."));
  wb_free(&m);
  /* Without GRIB at all: a product, without a model. */
  wb_wmo(&m, 9, "YTUS70 KWBC 071200", NULL, text, strlen(text));
  assert_int_equal(wmo_parse(m.p, m.n, true, &p, NULL), 0);
  assert_string_equal(p.ident, "YTUS70 KWBC 071200");
  wb_free(&m);
  wb_free(&g);
}

/* ---- signatures ---- */

static void test_signature(void **state) {
  (void)state;
  struct wb a = {0}, b = {0};
  wb_wmo(&a, 1, "SAUS70 KWBC 071200", NULL, text, strlen(text));
  wb_wmo(&b, 2, "SAUS70 KWBC 071200", NULL, text, strlen(text));
  assert_int_equal(wmo_sig_skip(a.p, a.n, false), WB_SIG_SKIP);
  assert_int_equal(wmo_sig_skip(a.p, a.n, true), 0);
  uint8_t sa[16], sb[16];
  assert_int_equal(wmo_signature(a.p, a.n, false, sa), 0);
  assert_int_equal(wmo_signature(b.p, b.n, false, sb), 0);
  assert_memory_equal(sa, sb, 16); /* only the sequence number differs */
  assert_int_equal(wmo_signature(a.p, a.n, true, sa), 0);
  assert_int_equal(wmo_signature(b.p, b.n, true, sb), 0);
  assert_memory_not_equal(sa, sb, 16);
  /* Not SOH CR CR LF first, or a sequence line over four bytes: all. */
  assert_int_equal(wmo_sig_skip(a.p + 1, a.n - 1, false), 0);
  static const uint8_t longseq[] = "\001\r\r\n12345\r\r\nSAUS";
  assert_int_equal(wmo_sig_skip(longseq, sizeof longseq - 1, false), 0);
  wb_free(&a);
  wb_free(&b);
}

/* ---- names ---- */

static void test_feed(void **state) {
  (void)state;
  assert_int_equal(wmo_feed_by_name("/usr/bin/ids"), PQ_FT_IDS);
  assert_int_equal(wmo_feed_by_name("hds"), PQ_FT_HDS);
  assert_int_equal(wmo_feed_by_name("hrs"), PQ_FT_HDS);
  assert_int_equal(wmo_feed_by_name("ddplus"), PQ_FT_DDPLUS);
  assert_int_equal(wmo_feed_by_name("afos"), 0x800u);
  assert_int_equal(wmo_feed_by_name("pqing"), PQ_FT_WMO);
  assert_int_equal(wmo_feed_by_name("feedtest"), PQ_FT_WMO);
  unsigned baud;
  const char *par;
  wmo_feed_tty_defaults(PQ_FT_DDPLUS, &baud, &par);
  assert_int_equal(baud, 19200);
  assert_string_equal(par, "even");
  wmo_feed_tty_defaults(PQ_FT_HDS, &baud, &par);
  assert_int_equal(baud, 19200);
  assert_string_equal(par, "none");
  wmo_feed_tty_defaults(PQ_FT_WMO, &baud, &par);
  assert_int_equal(baud, 1200);
  enum wmo_framing f;
  bool check;
  wmo_feed_scanner(PQ_FT_HDS, WMO_CHECK_UNSET, false, true, &f, &check);
  assert_int_equal(f, WMO_FRAME_BINARY);
  assert_false(check);
  wmo_feed_scanner(PQ_FT_HDS, WMO_CHECK_UNSET, true, true, &f, &check);
  assert_true(check); /* a terminal checks the CRC unless -n */
  wmo_feed_scanner(PQ_FT_HDS, WMO_CHECK_OFF, true, true, &f, &check);
  assert_false(check);
  wmo_feed_scanner(PQ_FT_IDS, WMO_CHECK_UNSET, false, false, &f, &check);
  assert_int_equal(f, WMO_FRAME_TEXT);
  wmo_feed_scanner(PQ_FT_IDS | PQ_FT_DDPLUS, WMO_CHECK_ON, false, false, &f,
                   &check);
  assert_int_equal(f, WMO_FRAME_BINARY);
  assert_false(check);
  wmo_feed_scanner(0x800u, WMO_CHECK_UNSET, false, false, &f, &check);
  assert_int_equal(f, WMO_FRAME_AFOS);
  wmo_feed_scanner(0x20000u, WMO_CHECK_ON, false, false, &f, &check);
  assert_int_equal(f, WMO_FRAME_FAA604);
  assert_true(check);
  assert_true(wmo_feed_uses_pil(PQ_FT_IDS));
  assert_true(wmo_feed_uses_pil(PQ_FT_WMO));
  assert_false(wmo_feed_uses_pil(0x800u));
  assert_int_equal(wmo_feed_of_product(PQ_FT_IDS, "SDUS54 KOUN 071200", true),
                   PQ_FT_NEXRAD3);
  assert_int_equal(wmo_feed_of_product(PQ_FT_IDS, "SDUS54 KOUN 071200", false),
                   PQ_FT_IDS);
  assert_int_equal(wmo_feed_of_product(PQ_FT_IDS, "SDUS64 KOUN 071200", true),
                   PQ_FT_IDS);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_crc),
      cmocka_unit_test(test_text),
      cmocka_unit_test(test_text_errors),
      cmocka_unit_test(test_binary_etx_in_data),
      cmocka_unit_test(test_binary_flush),
      cmocka_unit_test(test_binary_crc),
      cmocka_unit_test(test_too_big),
      cmocka_unit_test(test_afos),
      cmocka_unit_test(test_faa604),
      cmocka_unit_test(test_ident),
      cmocka_unit_test(test_grib),
      cmocka_unit_test(test_signature),
      cmocka_unit_test(test_feed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
