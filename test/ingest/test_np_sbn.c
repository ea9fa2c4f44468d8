/*
 * test_np_sbn.c - the SBN frame reader (pqutils/ingest/sbn_frame.h):
 * resynchronisation over junk, the frame-header checks, test and time-sync
 * frames, the PDH and PSH checks, frames split across calls (decided and
 * logged once), the end of input, and gap detection with its counters, in
 * LDM 6.15's words (docs/noaaport.md, "Frames" and "Log lines").  The
 * frames are made by np_test_frames.h.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "np_test_frames.h"
#include "pqutils/ingest/sbn_frame.h"

#define MAXF 16

/* What one read of a stream gave. */
struct run {
  struct tlog log;
  struct np_log lg;
  struct np_sbn r;
  struct np_frame f[MAXF];
  int n;
};

static void run_init(struct run *u, int level) {
  memset(u, 0, sizeof *u);
  u->lg = (struct np_log){tlog_add, &u->log, level};
  np_sbn_init(&u->r, &u->lg);
}

/* A new read at level of b->p[0, b->len) whole, as at the end of the
 * input. */
static void run_all(struct run *u, int level, const struct tbuf *b) {
  run_init(u, level);
  size_t pos = 0;
  struct np_frame f;
  while (np_sbn_next(&u->r, b->p, b->len, &pos, &f, true) == NP_SBN_FRAME)
    if (u->n < MAXF)
      u->f[u->n++] = f;
  assert_int_equal(pos, b->len);
}

static void run_free(struct run *u) {
  tb_free(&u->log.text);
}

static const char text[] = "NOUS41 KWBC 151200\r\r\nPNSWSH\r\r\nHello\r\r\n";

static struct tframe data_frame(uint32_t fh, uint32_t seq, unsigned block) {
  return (struct tframe){.fh_seq = fh,
                         .prod_seq = seq,
                         .block = block,
                         .tt = block == 0 ? 69 : 2,
                         .psh = block == 0,
                         .nfrag = 3,
                         .data = text,
                         .data_len = sizeof text - 1};
}

static void add(struct tbuf *b, struct tframe t) {
  tb_frame(b, &t);
}

static void test_one_frame(void **state) {
  (void)state;
  struct tbuf b = {0};
  add(&b, data_frame(1000, 500, 0));
  struct run u;
  run_all(&u, NP_INFO, &b);
  assert_int_equal(u.n, 1);
  const struct np_frame *f = &u.f[0];
  assert_int_equal(f->command, 3);
  assert_int_equal(f->datastream, 5);
  assert_int_equal(f->fh_seq, 1000);
  assert_int_equal(f->prod_seq, 500);
  assert_int_equal(f->tt, 69);
  assert_int_equal(f->pdh_len, 16);
  assert_int_equal(f->psh_len, 36);
  assert_true(f->has_psh);
  assert_int_equal(f->psh.len, 36);
  assert_int_equal(f->psh.type, 4);
  assert_int_equal(f->psh.category, 1);
  assert_int_equal(f->psh.nfrag, 3);
  assert_int_equal(f->data_len, sizeof text - 1);
  assert_memory_equal(f->data, text, sizeof text - 1);
  assert_ptr_equal(f->raw, b.p);
  assert_int_equal(f->raw_len, b.len);
  assert_false(f->psh_bad || f->truncated);
  assert_string_equal(tlog_str(&u.log), "INFO\tSBN seqnumber 1000\n"
                                        "INFO\tSBN datastream 5 command 3\n");
  run_free(&u);
  tb_free(&b);
}

static void test_resync_junk(void **state) {
  (void)state;
  struct tbuf b = {0};
  tb_str(&b, "garbage before\n");
  add(&b, data_frame(1, 1, 0));
  tb_str(&b, "\x01\x02");
  add(&b, data_frame(2, 2, 0));
  struct run u;
  run_all(&u, NP_INFO, &b);
  assert_int_equal(u.n, 2);
  /* one line per run of junk, with its first byte */
  assert_int_equal(tlog_count(&u.log, "Trying to resync"), 2);
  assert_int_equal(tlog_count(&u.log, "INFO\tTrying to resync 103\n"), 1);
  assert_int_equal(tlog_count(&u.log, "INFO\tTrying to resync 1\n"), 1);
  run_free(&u);
  tb_free(&b);
}

static void test_checksum(void **state) {
  (void)state;
  struct tbuf b = {0};
  struct tframe t = data_frame(1, 1, 0);
  t.bad_sum = 1;
  tb_frame(&b, &t);
  add(&b, data_frame(2, 2, 0));
  /* The sum of bytes 0-13 of the first header: FF 00 14 00 03 05 01 00,
   * sequence 00 00 00 01, run 00 00. */
  unsigned sum = 0xFF + 0x14 + 3 + 5 + 1 + 1;
  char want[64];
  snprintf(want, sizeof want, "ERROR\tSBN checksum invalid %u %u\n", sum,
           sum + 1);
  struct run u;
  run_all(&u, NP_INFO, &b);
  assert_int_equal(u.n, 1);
  assert_int_equal(u.f[0].prod_seq, 2);
  assert_int_equal(tlog_count(&u.log, want), 1);
  /* the 16 bytes are gone; the rest of the frame is junk to resync over */
  assert_int_equal(tlog_count(&u.log, "Trying to resync"), 1);
  assert_int_equal(u.r.counts.frames, 0); /* only one frame got through */
  run_free(&u);
  tb_free(&b);
}

static void test_bad_command(void **state) {
  (void)state;
  struct tbuf b = {0};
  struct tframe t = data_frame(1, 1, 0);
  t.command = 4;
  tb_frame(&b, &t);
  t.command = 12;
  tb_frame(&b, &t);
  struct run u;
  run_all(&u, NP_WARN, &b);
  assert_int_equal(u.n, 0);
  assert_int_equal(tlog_count(&u.log, "ERROR\tInvalid SBN command 4\n"), 1);
  assert_int_equal(tlog_count(&u.log, "ERROR\tInvalid SBN command 12\n"), 1);
  run_free(&u);
  tb_free(&b);
}

static void test_test_and_timesync(void **state) {
  (void)state;
  struct tbuf b = {0};
  add(&b, data_frame(10, 7, 0));
  struct tframe t = {
      .command = 10, .fh_seq = 11, .data = "\0\0\0\0", .data_len = 4};
  tb_frame(&b, &t); /* test frame */
  t.command = 5;
  t.fh_seq = 12;
  tb_frame(&b, &t); /* time sync: no PSH, transfer type 0 */
  add(&b, data_frame(13, 7, 1));
  struct run u;
  run_all(&u, NP_DEBUG, &b);
  assert_int_equal(u.n, 2);
  assert_int_equal(u.f[1].block, 1);
  assert_int_equal(
      tlog_count(&u.log, "ERROR\tUnknown sbn command/version 10 PUNT\n"), 1);
  /* both were read and logged at INFO, neither counted: the data frame
   * after them sees a gap of two, which continues the product */
  assert_int_equal(tlog_count(&u.log, "SBN datastream 5 command 10"), 1);
  assert_int_equal(tlog_count(&u.log, "SBN datastream 5 command 5"), 1);
  assert_int_equal(tlog_count(&u.log, "DEBUG\t2 non-data frame(s) missed\n"),
                   1);
  assert_int_equal(tlog_count(&u.log, "Gap"), 0);
  assert_int_equal(u.r.counts.frames, 1);
  assert_int_equal(u.r.counts.missed, 0);
  run_free(&u);
  tb_free(&b);
}

static void test_timesync_with_psh(void **state) {
  (void)state;
  struct tbuf b = {0};
  add(&b, data_frame(1, 1, 0));
  struct tframe t = data_frame(2, 1, 0);
  t.command = 5; /* its PSH is read, then the frame is dropped */
  tb_frame(&b, &t);
  add(&b, data_frame(3, 1, 1));
  struct run u;
  run_all(&u, NP_WARN, &b);
  assert_int_equal(u.n, 2);
  assert_int_equal(u.r.counts.frames, 2); /* it is counted */
  run_free(&u);
  tb_free(&b);
}

static void test_header_checks(void **state) {
  (void)state;
  struct tbuf b = {0};
  struct tframe t = data_frame(1, 1, 0);
  t.fh_vl = 0x24; /* FH version 2 */
  tb_frame(&b, &t);
  t = data_frame(2, 1, 0);
  t.datastream = 14;
  tb_frame(&b, &t);
  t.datastream = 255;
  tb_frame(&b, &t);
  t = data_frame(3, 1, 0);
  t.pdh_vl = 0x24; /* PDH version 2 */
  tb_frame(&b, &t);
  struct run u;
  run_all(&u, NP_WARN, &b);
  assert_int_equal(u.n, 0);
  assert_int_equal(
      tlog_count(&u.log, "ERROR\tUnknown sbn command/version 3 PUNT\n"), 1);
  assert_int_equal(
      tlog_count(&u.log, "ERROR\tUnknown NOAAport channel 14 PUNT\n"), 1);
  assert_int_equal(
      tlog_count(&u.log, "ERROR\tUnknown NOAAport channel 255 PUNT\n"), 1);
  assert_int_equal(
      tlog_count(&u.log, "ERROR\tError: PDH transfer type 69, PUNT\n"), 1);
  run_free(&u);
  tb_free(&b);
}

static void test_pdh_flags_and_length(void **state) {
  (void)state;
  struct tbuf b = {0};
  struct tframe t = data_frame(1, 1, 0);
  t.tt = 69 | 8 | 32;
  tb_frame(&b, &t);
  t = data_frame(2, 2, 0);
  t.pdh_vl = 0x16; /* 24 bytes: 8 read and ignored */
  t.pdh_extra = 8;
  tb_frame(&b, &t);
  struct run u;
  run_all(&u, NP_WARN, &b);
  assert_int_equal(u.n, 2);
  assert_int_equal(
      tlog_count(&u.log, "ERROR\tProduct transfer flag error 109\n"), 2);
  assert_int_equal(u.f[1].pdh_len, 24);
  assert_int_equal(u.f[1].psh_len, 36);
  assert_int_equal(u.f[1].psh.nfrag, 3);
  assert_memory_equal(u.f[1].data, text, sizeof text - 1);
  run_free(&u);
  tb_free(&b);
}

static void test_psh_checks(void **state) {
  (void)state;
  struct tbuf b = {0};
  struct tframe t = data_frame(1, 1, 0);
  t.psh_len_diff = 1;
  t.cat = 6;
  tb_frame(&b, &t);
  t = data_frame(2, 2, 0);
  t.orig_run_id = 7;
  tb_frame(&b, &t);
  struct run u;
  run_all(&u, NP_WARN, &b);
  assert_int_equal(u.n, 2);
  /* the PSH's length and the PDH's length, as LDM prints them */
  assert_int_equal(
      tlog_count(&u.log, "ERROR\tERROR in calculation of psh len 37 16\n"), 1);
  assert_true(u.f[0].psh_bad);
  assert_null(u.f[0].data);
  assert_int_equal(u.f[0].psh.category, 6);
  assert_false(u.f[1].psh_bad);
  assert_int_equal(tlog_count(&u.log, "ERROR\toriginal runid 7\n"), 1);
  run_free(&u);
  tb_free(&b);
}

/* The same stream fed one byte at a time gives the same frames and the
 * same lines: nothing is logged twice. */
static void test_split_across_calls(void **state) {
  (void)state;
  struct tbuf b = {0};
  tb_str(&b, "junk");
  add(&b, data_frame(1, 1, 0));
  struct tframe t = {
      .command = 10, .fh_seq = 2, .data = "\xFF\x01", .data_len = 2};
  tb_frame(&b, &t);
  t = data_frame(3, 1, 0);
  t.bad_sum = 5;
  tb_frame(&b, &t);
  add(&b, data_frame(7, 1, 2));
  struct run whole, bytes;
  run_all(&whole, NP_DEBUG, &b);
  run_init(&bytes, NP_DEBUG);
  size_t pos = 0;
  struct np_frame f;
  for (size_t have = 0; have <= b.len; have++) {
    while (np_sbn_next(&bytes.r, b.p, have, &pos, &f, false) == NP_SBN_FRAME) {
      assert_int_equal(pos, (size_t)(f.raw - b.p) + f.raw_len);
      bytes.f[bytes.n++] = f;
    }
    assert_true(pos <= have);
  }
  assert_int_equal(np_sbn_next(&bytes.r, b.p, b.len, &pos, &f, true),
                   NP_SBN_MORE);
  assert_int_equal(pos, b.len);
  assert_int_equal(bytes.n, 2);
  assert_int_equal(whole.n, 2);
  assert_string_equal(tlog_str(&bytes.log), tlog_str(&whole.log));
  /* the junk "FF 01" after the test frame, then the bad header it shifts
   * to (the next 0xFF) */
  assert_int_equal(tlog_count(&whole.log, "SBN checksum invalid"), 2);
  assert_int_equal(tlog_count(&whole.log, "command/version 10"), 1);
  run_free(&whole);
  run_free(&bytes);
  tb_free(&b);
}

static void test_more_keeps_position(void **state) {
  (void)state;
  struct tbuf b = {0};
  tb_str(&b, "xy");
  add(&b, data_frame(1, 1, 0));
  struct run u;
  run_init(&u, NP_DEBUG);
  size_t pos = 0;
  struct np_frame f;
  assert_int_equal(np_sbn_next(&u.r, b.p, b.len - 1, &pos, &f, false),
                   NP_SBN_MORE);
  assert_int_equal(pos, 2); /* at the frame's 0xFF */
  assert_int_equal(tlog_count(&u.log, "SBN seqnumber"), 0);
  assert_int_equal(np_sbn_next(&u.r, b.p, b.len, &pos, &f, false),
                   NP_SBN_FRAME);
  assert_int_equal(pos, b.len);
  assert_int_equal(tlog_count(&u.log, "SBN seqnumber 1\n"), 1);
  run_free(&u);
  tb_free(&b);
}

static void test_end_of_input(void **state) {
  (void)state;
  struct tbuf b = {0};
  add(&b, data_frame(1, 1, 0));
  add(&b, data_frame(2, 1, 1));
  b.len -= 5; /* the second frame's data is cut short */
  struct run u;
  run_all(&u, NP_WARN, &b);
  assert_int_equal(u.n, 2);
  assert_true(u.f[1].truncated);
  assert_null(u.f[1].data);
  assert_int_equal(u.r.counts.frames, 1);
  run_free(&u);
  /* a PSH cut short: LDM's read of it fails */
  b.len = 0;
  add(&b, data_frame(1, 1, 0));
  b.len = 32 + 10;
  run_all(&u, NP_WARN, &b);
  assert_int_equal(u.n, 0);
  assert_string_equal(tlog_str(&u.log), "ERROR\tproblem reading psh\n");
  run_free(&u);
  /* a header cut short, or a lone 0xFF: nothing */
  b.len = 20;
  run_all(&u, NP_WARN, &b);
  assert_int_equal(u.n + u.log.n, 0);
  run_free(&u);
  b.len = 1;
  run_all(&u, NP_DEBUG, &b);
  assert_int_equal(u.n + u.log.n, 0);
  run_free(&u);
  tb_free(&b);
}

static void test_gaps(void **state) {
  (void)state;
  struct tbuf b = {0};
  add(&b, data_frame(100, 1, 0));
  add(&b, data_frame(102, 1, 1)); /* continues product 1: no WARN */
  add(&b, data_frame(106, 2, 0)); /* starts product 2: no WARN either */
  add(&b, data_frame(109, 2, 2)); /* a real gap */
  add(&b, data_frame(109, 2, 3)); /* the same FH number */
  add(&b, data_frame(105, 2, 4)); /* going back */
  add(&b, data_frame(106, 2, 5));
  struct run u;
  run_all(&u, NP_DEBUG, &b);
  assert_int_equal(u.n, 7);
  assert_int_equal(tlog_count(&u.log, "DEBUG\t1 non-data frame(s) missed\n"),
                   1);
  assert_int_equal(tlog_count(&u.log, "DEBUG\t3 non-data frame(s) missed\n"),
                   1);
  assert_int_equal(
      tlog_count(&u.log, "WARN\tGap in packet sequence: 106 to 109 "
                         "[skipped 2]\nWARN\tprevProdSeqNum=2, pdh->seqno=2, "
                         "prevBlockNum=0, pdh->dbno=2\n"),
      1);
  assert_int_equal(tlog_count(&u.log,
                              "WARN\tRetrograde packet number: previous=109, "
                              "latest=109, difference=0\n"),
                   1);
  assert_int_equal(tlog_count(&u.log,
                              "WARN\tRetrograde packet number: previous=109, "
                              "latest=105, difference=4294967292\n"),
                   1);
  /* counted: 102, 106, 109 and 106 (the first only initialises) */
  assert_int_equal(u.r.counts.frames, 4);
  assert_int_equal(u.r.counts.missed, 2);
  run_free(&u);
  tb_free(&b);
}

/* A PSH shorter than 36 bytes: LDM reads past it (stale memory); here the
 * bytes it lacks read as 0. */
static void test_short_psh(void **state) {
  (void)state;
  struct tbuf b = {0};
  struct tframe t = data_frame(1, 1, 0);
  t.psh = false;
  tb_frame(&b, &t);
  b.p[16 + 3] = 16 + 4; /* header length: a 4-byte PSH */
  static const uint8_t psh[4] = {0, 0, 0, 4};
  struct tbuf c = {0};
  tb_add(&c, b.p, 32);
  tb_add(&c, psh, sizeof psh);
  tb_add(&c, b.p + 32, b.len - 32);
  struct run u;
  run_all(&u, NP_WARN, &c);
  assert_int_equal(u.n, 1);
  assert_true(u.f[0].has_psh);
  assert_int_equal(u.f[0].psh_len, 4);
  assert_int_equal(u.f[0].psh.len, 4);
  assert_int_equal(u.f[0].psh.category, 0);
  assert_int_equal(u.f[0].psh.nfrag, 0);
  assert_memory_equal(u.f[0].data, text, sizeof text - 1);
  assert_int_equal(u.log.n, 0);
  run_free(&u);
  tb_free(&b);
  tb_free(&c);
}

/* A rejected header whose byte 14 is 0xFF, at the end of the input: LDM's
 * read of the shifted candidate fails and the 16 bytes it had are gone, so
 * the scan goes on at byte 16, whether the input came whole or not. */
static void test_shift_at_end(void **state) {
  (void)state;
  static const uint8_t in[] = {0xff, 0x00, 0x14, 0x00, 0x03, 0x85, 0x01, 0x73,
                               0x65, 0x63, 0x72, 0x02, 0x14, 0x20, 0xff, 0x00,
                               0x04, 0x00, 0x00, 0x00, 0x00, 0x02, 0x01, 0x00,
                               0x00, 0x00, 0x00, 0x00, 0x00};
  struct tbuf b = {0};
  tb_add(&b, in, sizeof in);
  static const char want[] = "ERROR\tSBN checksum invalid 895 65280\n"
                             "INFO\tTrying to resync 4\n";
  struct run u;
  run_all(&u, NP_INFO, &b);
  assert_string_equal(tlog_str(&u.log), want);
  run_free(&u);
  run_init(&u, NP_INFO);
  size_t pos = 0;
  struct np_frame f;
  assert_int_equal(np_sbn_next(&u.r, b.p, 21, &pos, &f, false), NP_SBN_MORE);
  assert_int_equal(pos, 14);
  assert_int_equal(np_sbn_next(&u.r, b.p, b.len, &pos, &f, true), NP_SBN_MORE);
  assert_int_equal(pos, b.len);
  assert_string_equal(tlog_str(&u.log), want);
  run_free(&u);
  tb_free(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_one_frame),
      cmocka_unit_test(test_resync_junk),
      cmocka_unit_test(test_checksum),
      cmocka_unit_test(test_bad_command),
      cmocka_unit_test(test_test_and_timesync),
      cmocka_unit_test(test_timesync_with_psh),
      cmocka_unit_test(test_header_checks),
      cmocka_unit_test(test_pdh_flags_and_length),
      cmocka_unit_test(test_psh_checks),
      cmocka_unit_test(test_split_across_calls),
      cmocka_unit_test(test_more_keeps_position),
      cmocka_unit_test(test_end_of_input),
      cmocka_unit_test(test_gaps),
      cmocka_unit_test(test_short_psh),
      cmocka_unit_test(test_shift_at_end),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
