/*
 * test_binstats - rtstats's computations (pqutils/net/binstats.c) with the
 * times and random draws the tests choose: binning by creation-time hour,
 * feedtype and origin, across hours and feedtypes, in order; the latency
 * sum, mean, maximum and the MMSS of its insertion; the newest product;
 * every field of the report line against lines written out by hand
 * (widths, padding, truncation of the host, the feedtype, the version);
 * the identifier; the 4000-bin cap and which bin it replaces; dropping old
 * bins; what is left to report after a confirmed or a failed report; and
 * the gap between reports (60 + 0..30 s by default) without sleeping.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "pqutils/net/binstats.h"

/* 2024-03-05 10:00:00 UTC */
#define H10 INT64_C(1709632800)
#define US INT64_C(1000000)

static pq_prod_info prod(int64_t created_sec, int32_t usec, const char *ft,
                         const char *origin, uint64_t size) {
  pq_prod_info p;

  memset(&p, 0, sizeof p);
  p.arrival.sec = created_sec;
  p.arrival.usec = usec;
  assert_int_equal(pq_feedtype_parse(ft, &p.feedtype), 0);
  snprintf(p.origin, sizeof p.origin, "%s", origin);
  p.size = size;
  return p;
}

/* Add a product created at created_sec and inserted latency_us later. */
static enum rts_add add(struct rts_bins *b, int64_t created_sec, const char *ft,
                        const char *origin, uint64_t size, int64_t latency_us) {
  pq_prod_info p = prod(created_sec, 0, ft, origin, size);

  return rts_bins_add(b, &p, (uint64_t)(created_sec * US + latency_us));
}

static void test_hour_of(void **state) {
  (void)state;
  assert_int_equal(rts_hour_of(H10), H10);
  assert_int_equal(rts_hour_of(H10 + 3599), H10);
  assert_int_equal(rts_hour_of(H10 + 3600), H10 + 3600);
  assert_int_equal(rts_hour_of(H10 - 1), H10 - 3600);
  assert_int_equal(rts_hour_of(0), 0);
  assert_int_equal(rts_hour_of(-1), -3600);
  assert_int_equal(rts_hour_of(-3600), -3600);
  assert_int_equal(rts_hour_of(-3601), -7200);
}

/* Hours, feedtypes and origins each make their own bins, kept sorted. */
static void test_bins_by_hour_feedtype_origin(void **state) {
  struct rts_bins b;

  (void)state;
  assert_int_equal(rts_bins_init(&b, RTS_MAX_BINS), 0);
  assert_int_equal(add(&b, H10 + 3599, "IDS", "a.edu", 10, 0), RTS_NEW_BIN);
  assert_int_equal(add(&b, H10 + 3600, "IDS", "a.edu", 20, 0), RTS_NEW_BIN);
  assert_int_equal(add(&b, H10 + 10, "IDS", "a.edu", 30, 0), RTS_ADDED);
  assert_int_equal(add(&b, H10 + 10, "HDS", "a.edu", 40, 0), RTS_NEW_BIN);
  assert_int_equal(add(&b, H10 + 10, "IDS", "b.edu", 50, 0), RTS_NEW_BIN);
  assert_int_equal(add(&b, H10 + 3700, "IDS", "a.edu", 60, 0), RTS_ADDED);
  assert_int_equal(add(&b, H10 - 1, "IDS", "a.edu", 70, 0), RTS_NEW_BIN);
  assert_int_equal(b.n, 5);

  /* Sorted: hour, then feedtype (HDS 0x4 < IDS 0x8), then origin. */
  assert_int_equal(b.v[0].hour, H10 - 3600);
  assert_int_equal(b.v[0].nbytes, 70);
  assert_int_equal(b.v[1].hour, H10);
  assert_int_equal(b.v[1].feedtype, 4);
  assert_int_equal(b.v[1].nbytes, 40);
  assert_int_equal(b.v[2].hour, H10);
  assert_int_equal(b.v[2].feedtype, 8);
  assert_string_equal(b.v[2].origin, "a.edu");
  assert_int_equal(b.v[2].nprods, 2);
  assert_int_equal(b.v[2].nbytes, 40);
  assert_string_equal(b.v[3].origin, "b.edu");
  assert_int_equal(b.v[3].feedtype, 8);
  assert_int_equal(b.v[3].nbytes, 50);
  assert_int_equal(b.v[4].hour, H10 + 3600);
  assert_int_equal(b.v[4].nprods, 2);
  assert_int_equal(b.v[4].nbytes, 80);
  assert_int_equal(rts_bins_changed(&b), 5);
  rts_bins_free(&b);
}

/* Latency: sum, mean, maximum with the insertion time of its product; the
 * newest product by creation time (insertion breaks a tie). */
static void test_latency(void **state) {
  struct rts_bins b;
  const struct rts_bin *bin;
  pq_prod_info p;

  (void)state;
  assert_int_equal(rts_bins_init(&b, 10), 0);
  /* created 10:05:00, 2.5 s late; 10:10:00, 61 s late; 10:20:00, 0.5 s. */
  add(&b, H10 + 300, "EXP", "o", 1, 2500000);
  add(&b, H10 + 600, "EXP", "o", 1, 61000000);
  add(&b, H10 + 1200, "EXP", "o", 1, 500000);
  /* created before the newest, inserted after it: not the newest. */
  add(&b, H10 + 900, "EXP", "o", 1, 2000000);
  bin = &b.v[0];
  assert_int_equal(b.n, 1);
  assert_int_equal(bin->nprods, 4);
  assert_true(bin->latency_sum > 66.0 - 1e-9 && bin->latency_sum < 66.0 + 1e-9);
  assert_true(rts_bin_mean(bin) > 16.5 - 1e-9 &&
              rts_bin_mean(bin) < 16.5 + 1e-9);
  assert_true(bin->max_latency > 61.0 - 1e-9 && bin->max_latency < 61 + 1e-9);
  /* the slowest was inserted at 10:11:01 */
  assert_int_equal(bin->slowest_at_us, (H10 + 661) * US);
  assert_int_equal(bin->recent.sec, H10 + 1200);
  assert_int_equal(bin->recent_at_us, (H10 + 1200) * US + 500000);
  assert_true(rts_bin_latest(bin) > 0.5 - 1e-9 &&
              rts_bin_latest(bin) < 0.5 + 1e-9);

  /* The same creation time, inserted later: that one is the newest. */
  p = prod(H10 + 1200, 0, "EXP", "o", 1);
  rts_bins_add(&b, &p, (uint64_t)((H10 + 1200) * US + 3000000));
  assert_int_equal(bin->recent_at_us, (H10 + 1200) * US + 3000000);
  /* A product from the future (a clock ahead): a negative latency. */
  p = prod(H10 + 1800, 0, "EXP", "o", 1);
  rts_bins_add(&b, &p, (uint64_t)((H10 + 1795) * US));
  assert_true(rts_bin_latest(bin) > -5.0 - 1e-9 &&
              rts_bin_latest(bin) < -5.0 + 1e-9);
  assert_true(bin->max_latency > 61.0 - 1e-9 && bin->max_latency < 61 + 1e-9);

  char mmss[8];
  rts_format_mmss(bin->slowest_at_us, mmss);
  assert_string_equal(mmss, "1101");
  rts_format_mmss((uint64_t)(H10 + 3599) * US + 999999, mmss);
  assert_string_equal(mmss, "5959");
  rts_format_mmss((uint64_t)H10 * US, mmss);
  assert_string_equal(mmss, "0000");
  rts_bins_free(&b);
}

static struct rts_bin sample_bin(void) {
  struct rts_bin bin;

  memset(&bin, 0, sizeof bin);
  bin.hour = H10;
  bin.feedtype = 0x40000000; /* EXP */
  snprintf(bin.origin, sizeof bin.origin, "noaaport.x.edu_v_idd.y.edu");
  bin.nprods = 8949;
  bin.nbytes = 20333883;
  bin.latency_sum = 8949 * 982.48;
  bin.max_latency = 2207.4;
  bin.slowest_at_us = (uint64_t)(H10 + 3600 + 1) * US; /* 11:00:01 */
  bin.recent.sec = H10 + 2879;                         /* 10:47:59 */
  bin.recent.usec = 0;
  bin.recent_at_us = (uint64_t)(H10 + 2879) * US + 13610; /* 0.01361 s */
  return bin;
}

/* Every field, its width and its justification, against a line written
 * out by hand. */
static void test_line_fields(void **state) {
  struct rts_bin bin = sample_bin();
  char line[RTS_LINE_MAX];
  const char *want =
      "20240305104759 20240305104759                     laptop.local    "
      " EXP       noaaport.x.edu_v_idd.y.edu         8949     20333883 0."
      "01361     982.48 2207@0001                0.1.0\n";
  int n;

  (void)state;
  n = rts_format_line(&bin, "laptop.local", "0.1.0", line, sizeof line);
  assert_string_equal(line, want);
  assert_int_equal(n, (int)strlen(want));

  /* Wide values push the fields out, never into each other. */
  bin.feedtype = 0xb;           /* IDS|DDPLUS: exactly 10 characters */
  bin.nprods = 1099511627776.0; /* 2^40: the sums stay exact */
  bin.latency_sum = bin.nprods * 12345678.25;
  bin.max_latency = 99999.6;
  n = rts_format_line(&bin, "h", "6.15.0", line, sizeof line);
  want = "20240305104759 20240305104759                                h IDS"
         "|DDPLUS       noaaport.x.edu_v_idd.y.edu 1099511627776     2033388"
         "3 0.01361 12345678.25 100000@0001               6.15.0\n";
  assert_string_equal(line, want);
  assert_int_equal(n, (int)strlen(want));
}

/* Truncation: the feedtype's name to 10, the host to 255, the version to
 * 20; the origin (at most 64) is never cut. */
static void test_line_truncation(void **state) {
  struct rts_bin bin = sample_bin();
  char line[RTS_LINE_MAX], host[400], origin[PQ_ORIGIN_MAX + 1], want[900];
  const char *p;

  (void)state;
  memset(host, 'h', sizeof host - 1);
  host[sizeof host - 1] = '\0';
  memset(origin, 'o', PQ_ORIGIN_MAX);
  origin[PQ_ORIGIN_MAX] = '\0';
  snprintf(bin.origin, sizeof bin.origin, "%s", origin);
  bin.feedtype = 0x8200000; /* NEXRAD3|NIMAGE */
  assert_true(rts_format_line(&bin, host, "123456789012345678901234", line,
                              sizeof line) > 0);
  snprintf(want, sizeof want,
           "20240305104759 20240305104759 %.255s NEXRAD3|NI %s         8949 "
           "    20333883 0.01361     982.48 2207@0001 12345678901234567890\n",
           host, origin);
  assert_string_equal(line, want);

  /* Short: the minimum widths (7 for the feedtype, 32 for the names). */
  bin.feedtype = 0x4; /* HDS */
  snprintf(bin.origin, sizeof bin.origin, "o");
  rts_format_line(&bin, "me", "v", line, sizeof line);
  p = strstr(line, "     HDS ");
  assert_non_null(p);
  assert_int_equal(p - line, 14 + 1 + 14 + 1 + 32);
  assert_non_null(strstr(line, " HDS " /* 31 spaces then o */
                               "                               o "));
  assert_int_equal(strlen(line) - strlen(strstr(line, "@0001")),
                   14 + 1 + 14 + 1 + 32 + 1 + 7 + 1 + 32 + 1 + 12 + 1 + 12 + 1 +
                       7 + 1 + 10 + 1 + 4);
  assert_string_equal(strstr(line, "@0001"), "@0001                    v\n");

  /* Too small a buffer: -1, never a cut line. */
  assert_int_equal(rts_format_line(&bin, "me", "v", line, 50), -1);
}

/* The line always has the 11 fields when the names have no blanks. */
static void test_line_eleven_fields(void **state) {
  struct rts_bin bin = sample_bin();
  char line[RTS_LINE_MAX];
  int fields = 0;
  bool in = false;

  (void)state;
  bin.nprods = 0;
  bin.nbytes = 0;
  bin.latency_sum = 0;
  rts_format_line(&bin, "x", "0.1.0", line, sizeof line);
  for (const char *p = line; *p != '\0'; p++) {
    bool blank = *p == ' ' || *p == '\n';

    if (!blank && !in)
      fields++;
    in = !blank;
  }
  assert_int_equal(fields, 11);
  assert_non_null(strstr(line, "           0            0 "));
  assert_non_null(strstr(line, "       0.00 "));
}

static void test_ident(void **state) {
  struct rts_bin bin = sample_bin();
  char line[RTS_LINE_MAX], ident[PQ_IDENT_MAX + 1], host[300];

  (void)state;
  rts_format_line(&bin, "laptop.local", "0.1.0", line, sizeof line);
  assert_int_equal(
      rts_format_ident(line, "0.1.0", "laptop.local", ident, sizeof ident), 0);
  assert_string_equal(
      ident, "rtstats-0.1.0/laptop.local/EXP/noaaport.x.edu_v_idd.y.edu");
  /* The feedtype as the line shows it: cut to 10. */
  bin.feedtype = 0x8200000;
  rts_format_line(&bin, "h", "0.1.0", line, sizeof line);
  rts_format_ident(line, "0.1.0", "h", ident, sizeof ident);
  assert_string_equal(ident,
                      "rtstats-0.1.0/h/NEXRAD3|NI/noaaport.x.edu_v_idd.y.edu");
  /* Cut to the buffer (an identifier is at most 255 characters). */
  memset(host, 'h', 299);
  host[299] = '\0';
  rts_format_ident(line, "0.1.0", host, ident, sizeof ident);
  assert_int_equal(strlen(ident), PQ_IDENT_MAX);
  assert_int_equal(rts_format_ident("a b c d", "v", "h", ident, sizeof ident),
                   -1);
  assert_int_equal(rts_format_ident("", "v", "h", ident, sizeof ident), -1);
}

/* At most max bins; which one a new bin replaces. */
static void test_cap(void **state) {
  struct rts_bins b;
  char origin[32];

  (void)state;
  assert_int_equal(rts_bins_init(&b, RTS_MAX_BINS), 0);
  for (int i = 0; i < RTS_MAX_BINS; i++) {
    snprintf(origin, sizeof origin, "o%05d", i);
    assert_int_equal(add(&b, H10, "EXP", origin, 1, 0), RTS_NEW_BIN);
  }
  assert_int_equal(b.n, RTS_MAX_BINS);
  /* Existing bins still take products. */
  assert_int_equal(add(&b, H10, "EXP", "o00007", 1, 0), RTS_ADDED);
  /* Every bin has figures to report: the first (o00000) makes room for a
   * newer bin, and its figures are lost; an older one is not binned. */
  assert_int_equal(add(&b, H10 + 3600, "EXP", "new", 1, 0), RTS_EVICTED);
  assert_int_equal(b.n, RTS_MAX_BINS);
  assert_string_equal(b.v[0].origin, "o00001");
  assert_string_equal(b.v[RTS_MAX_BINS - 1].origin, "new");
  assert_int_equal(b.lost, 1);
  assert_int_equal(add(&b, H10 - 3600, "EXP", "old", 1, 0), RTS_DROPPED);
  assert_int_equal(b.dropped, 1);
  assert_int_equal(b.n, RTS_MAX_BINS);

  /* Reported: the first bin with nothing left to report goes, even for
   * an older bin, and nothing is lost. */
  rts_bins_mark_sent(&b);
  assert_int_equal(add(&b, H10, "EXP", "o00005", 1, 0), RTS_ADDED);
  assert_int_equal(add(&b, H10 - 3600, "EXP", "old", 1, 0), RTS_EVICTED);
  assert_string_equal(b.v[0].origin, "old");
  assert_string_equal(b.v[1].origin, "o00002");
  assert_int_equal(b.lost, 1);
  assert_int_equal(b.evicted, 2);
  /* o00001 went; o00005, which changed, is still there. */
  assert_int_equal(add(&b, H10 + 7200, "EXP", "newer", 1, 0), RTS_EVICTED);
  assert_string_equal(b.v[1].origin, "o00003");
  assert_int_equal(add(&b, H10, "EXP", "o00005", 1, 0), RTS_ADDED);
  assert_int_equal(b.n, RTS_MAX_BINS);
  assert_int_equal(rts_bins_changed(&b), 3); /* o00005, old, newer */
  for (size_t i = 1; i < b.n; i++)
    assert_true(b.v[i - 1].hour < b.v[i].hour ||
                (b.v[i - 1].hour == b.v[i].hour &&
                 strcmp(b.v[i - 1].origin, b.v[i].origin) < 0));
  rts_bins_free(&b);
  assert_int_equal(rts_bins_init(&b, 0), -1);
}

/* Old bins go once reported; changed ones wait for their report. */
static void test_expire(void **state) {
  struct rts_bins b;
  int64_t now = H10 + 3600 * 3 + 120; /* 13:02 */

  (void)state;
  assert_int_equal(rts_bins_init(&b, 100), 0);
  add(&b, H10, "EXP", "a", 1, 0);                /* 10:00 */
  add(&b, H10 + 3600, "EXP", "a", 1, 0);         /* 11:00 */
  add(&b, H10 + 7200, "EXP", "a", 1, 0);         /* 12:00, the previous hour */
  add(&b, H10 + 3 * 3600, "EXP", "a", 1, 0);     /* 13:00 */
  assert_int_equal(rts_bins_expire(&b, now), 0); /* not reported yet */
  assert_int_equal(b.n, 4);
  rts_bins_mark_sent(&b);
  add(&b, H10 + 5, "EXP", "a", 1, 0); /* 10:00 changed again */
  assert_int_equal(rts_bins_expire(&b, now), 1);
  assert_int_equal(b.n, 3);
  assert_int_equal(b.v[0].hour, H10);
  assert_int_equal(b.v[1].hour, H10 + 7200);
  assert_int_equal(b.v[2].hour, H10 + 3 * 3600);
  rts_bins_mark_sent(&b);
  assert_int_equal(rts_bins_expire(&b, now), 1);
  assert_int_equal(b.n, 2);
  assert_int_equal(b.v[0].hour, H10 + 7200);
  /* A bin dropped and fed again starts from nothing. */
  assert_int_equal(add(&b, H10, "EXP", "a", 1, 0), RTS_NEW_BIN);
  assert_int_equal(b.v[0].nprods, 1);
  rts_bins_free(&b);
}

/* A report that fails leaves everything to report; one confirmed leaves
 * nothing until new products come. */
static void test_changed(void **state) {
  struct rts_bins b;

  (void)state;
  assert_int_equal(rts_bins_init(&b, 10), 0);
  add(&b, H10, "EXP", "a", 1, 0);
  add(&b, H10, "IDS", "a", 1, 0);
  assert_int_equal(rts_bins_changed(&b), 2);
  rts_bins_mark_sent(&b);
  assert_int_equal(rts_bins_changed(&b), 0);
  add(&b, H10 + 1, "IDS", "a", 5, 0);
  assert_int_equal(rts_bins_changed(&b), 1);
  assert_int_equal(b.v[0].feedtype, 8); /* IDS, before EXP */
  assert_true(b.v[0].changed);
  assert_false(b.v[1].changed);
  assert_int_equal(b.v[0].nprods, 2); /* figures are for the whole hour */
  assert_int_equal(b.v[0].nbytes, 6);
  rts_bins_free(&b);
}

static double draws[8];
static int ndraws;

static double draw(void *arg) {
  int *i = arg;

  ndraws++;
  return draws[(*i)++];
}

/* The gap: base + spread * draw, from the last report; no sleeping. */
static void test_schedule(void **state) {
  struct rts_sched s;
  int i = 0;

  (void)state;
  draws[0] = 0;
  draws[1] = 0.5;
  draws[2] = 1;
  draws[3] = 7; /* out of range: taken as 1 */
  draws[4] = -3;
  draws[5] = 0.5;
  rts_sched_init(&s, 60, 30, draw, &i, 1000);
  assert_false(rts_sched_due(&s, 1000, false));
  assert_false(rts_sched_due(&s, 1059.999, false));
  assert_true(rts_sched_due(&s, 1060, false));
  assert_true(rts_sched_left(&s, 1010) > 50 - 1e-9 &&
              rts_sched_left(&s, 1010) < 50 + 1e-9);
  assert_true(rts_sched_left(&s, 2000) == 0);
  rts_sched_done(&s, 1061); /* gap 75 */
  assert_false(rts_sched_due(&s, 1135.9, false));
  assert_true(rts_sched_due(&s, 1136, false));
  rts_sched_done(&s, 1200); /* gap 90 */
  assert_false(rts_sched_due(&s, 1289.9, false));
  assert_true(rts_sched_due(&s, 1290, false));
  rts_sched_done(&s, 1300); /* 7 -> 1: gap 90 */
  assert_true(rts_sched_due(&s, 1390, false));
  assert_false(rts_sched_due(&s, 1389.9, false));
  rts_sched_done(&s, 1400); /* -3 -> 0: gap 60 */
  assert_true(rts_sched_due(&s, 1460, false));
  assert_false(rts_sched_due(&s, 1459.9, false));
  /* After a report, the end of the queue changes nothing; a cycle with
   * nothing to report restarts the gap, as LDM's does. */
  assert_false(rts_sched_due(&s, 1459.9, true));
  rts_sched_idle(&s, 1460); /* gap 75 */
  assert_false(rts_sched_due(&s, 1534.9, true));
  assert_true(rts_sched_due(&s, 1535, true));
  assert_int_equal(ndraws, 6);

  /* Our -I: a fixed gap, no draw. */
  rts_sched_init(&s, 0.2, 0, NULL, NULL, 5);
  assert_false(rts_sched_due(&s, 5.1, false));
  assert_true(rts_sched_due(&s, 5.2, false));
  assert_int_equal(ndraws, 6);
}

/* The first report waits for no gap (LDM's last-sent time starts at 0): it
 * is due at the end of the queue from the start, and stays so through
 * cycles with nothing to report until one has something. */
static void test_schedule_first(void **state) {
  struct rts_sched s;
  int i = 0;

  (void)state;
  ndraws = 0;
  draws[0] = 0;
  draws[1] = 0;
  draws[2] = 0;
  rts_sched_init(&s, 60, 30, draw, &i, 1000);
  assert_true(rts_sched_due(&s, 1000, true));
  /* Reading products: not before the end (a backlog goes in whole). */
  assert_false(rts_sched_due(&s, 1000.5, false));
  rts_sched_idle(&s, 1001); /* nothing binned yet */
  assert_true(rts_sched_due(&s, 1001, true));
  assert_true(rts_sched_due(&s, 1030, true));
  /* A queue that never runs dry: one gap after the last cycle. */
  assert_false(rts_sched_due(&s, 1060.9, false));
  assert_true(rts_sched_due(&s, 1061, false));
  rts_sched_done(&s, 1030);
  assert_false(rts_sched_due(&s, 1031, true));
  assert_false(rts_sched_due(&s, 1089.9, true));
  assert_true(rts_sched_due(&s, 1090, true));
  assert_int_equal(ndraws, 3);
}

static void test_format_time(void **state) {
  char t[16];

  (void)state;
  rts_format_time(H10 + 2879, t);
  assert_string_equal(t, "20240305104759");
  rts_format_time(0, t);
  assert_string_equal(t, "19700101000000");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_hour_of),
      cmocka_unit_test(test_bins_by_hour_feedtype_origin),
      cmocka_unit_test(test_latency),
      cmocka_unit_test(test_line_fields),
      cmocka_unit_test(test_line_truncation),
      cmocka_unit_test(test_line_eleven_fields),
      cmocka_unit_test(test_ident),
      cmocka_unit_test(test_cap),
      cmocka_unit_test(test_expire),
      cmocka_unit_test(test_changed),
      cmocka_unit_test(test_schedule),
      cmocka_unit_test(test_schedule_first),
      cmocka_unit_test(test_format_time),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
