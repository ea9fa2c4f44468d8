/*
 * test_metrics.c - unit tests of ldmd's live figures (ldmd/metrics/): the
 * shared file (making, opening and its header checks, slot claim, bind
 * and release, a child that dies while it writes), the histogram's
 * bucketing, the Prometheus writer (escaping, numbers, histograms,
 * ordering), the ingesters' region (an entry claimed, counted, rendered,
 * freed; a killed ingester's entry dropped and taken again; every entry
 * taken) and the renderings, checked by the strict checker of
 * promcheck.h, which is itself shown to refuse malformed text.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ldmd/metrics/ingester.h"
#include "ldmd/metrics/metrics.h"
#include "ldmd/metrics/render.h"
#include "test/metrics/promcheck.h"

#define TU_TMPDIR_PREFIX "ldmm"
#include "test/lib/tu_tmpdir.h"

static ldmm_file *make(uint32_t nslots) {
  char err[1024];
  ldmm_file *f =
      ldmm_create("m.metrics", nslots, "/q/ldm.pq", "9.9", err, sizeof err);

  if (f == NULL)
    fail_msg("%s", err);
  return f;
}

static ldmm_file *reader(void) {
  char err[1024];
  ldmm_file *f = ldmm_open("m.metrics", err, sizeof err);

  if (f == NULL)
    fail_msg("%s", err);
  return f;
}

/* ---- buckets ---- */

static void test_bucket(void **state) {
  static const uint64_t bounds[LDMM_NBUCKETS] = LDMM_BOUNDS_US;
  unsigned i;
  (void)state;

  assert_int_equal(ldmm_bucket(-5000000), 0); /* clocks apart: the first */
  assert_int_equal(ldmm_bucket(0), 0);
  assert_int_equal(ldmm_bucket(100000), 0); /* le="0.1" holds 0.1 s */
  assert_int_equal(ldmm_bucket(100001), 1);
  assert_int_equal(ldmm_bucket(3600000000), LDMM_NBUCKETS - 2);
  assert_int_equal(ldmm_bucket(3600000001), LDMM_NBUCKETS - 1); /* +Inf */
  assert_int_equal(ldmm_bucket(INT64_MAX), LDMM_NBUCKETS - 1);
  for (i = 0; i + 1 < LDMM_NBUCKETS; i++) {
    assert_true(bounds[i] < bounds[i + 1]);
    assert_int_equal(ldmm_bucket((int64_t)bounds[i]), i);
    assert_int_equal(ldmm_bucket((int64_t)bounds[i] + 1), i + 1);
  }
  assert_int_equal(bounds[0], 100000);                        /* 0.1 s ... */
  assert_int_equal(bounds[LDMM_NBUCKETS - 2], 3600000000ull); /* ... 1 h */
}

static void test_feed_of(void **state) {
  ldmm_feed feeds[LDMM_NFEEDS];
  (void)state;

  assert_ptr_equal(ldmm_feed_of(feeds, 1u), &feeds[0]);
  assert_ptr_equal(ldmm_feed_of(feeds, 1u << 31), &feeds[31]);
  assert_ptr_equal(ldmm_feed_of(feeds, 0), &feeds[LDMM_FEED_OTHER]);
  assert_ptr_equal(ldmm_feed_of(feeds, 3u), &feeds[LDMM_FEED_OTHER]);
  assert_null(ldmm_feed_of(NULL, 1u));
}

/* ---- the file ---- */

static void test_claim_release(void **state) {
  ldmm_snapshot snap = {0};
  ldmm_file *f = make(3), *r;
  ldmm_slot *s;
  int a, b, c;
  (void)state;

  a = ldmm_claim(f);
  b = ldmm_claim(f);
  c = ldmm_claim(f);
  assert_int_equal(a, 0);
  assert_int_equal(b, 1);
  assert_int_equal(c, 2);
  assert_int_equal(ldmm_claim(f), -1); /* all taken: counted */
  r = reader();
  assert_int_equal(ldmm_snapshot_take(r, &snap), 0);
  assert_int_equal(snap.nconns, 0); /* claimed, not bound: not shown */
  assert_int_equal(snap.no_slot, 1);
  ldmm_bind(f, a, 1001);
  ldmm_bind(f, b, 1002);
  ldmm_bind(f, c, 1003);
  s = ldmm_slot_at(f, b);
  ldmm_describe(s, LDMM_KIND_REQUESTER, "up.example port 388", "ANY \".*\"");
  ldmm_inserted(s, ldmm_feeds(f), 1u << 3, 500, 1500000);
  ldmm_reconnected(s);
  assert_int_equal(ldmm_snapshot_take(r, &snap), 0);
  assert_int_equal(snap.nconns, 3);
  assert_int_equal(snap.conns[1].pid, 1002);
  assert_int_equal(snap.conns[1].kind, LDMM_KIND_REQUESTER);
  assert_string_equal(snap.conns[1].peer, "up.example port 388");
  assert_int_equal(snap.conns[1].products, 1);
  assert_int_equal(snap.conns[1].bytes, 500);
  assert_int_equal(snap.conns[1].reconnections, 1);
  assert_int_equal(snap.conns[1].latency.count, 1);
  assert_int_equal(snap.conns[1].latency.bucket[ldmm_bucket(1500000)], 1);
  assert_int_equal(snap.feeds[3].products, 1);
  assert_string_equal(snap.queue_path, "/q/ldm.pq");
  assert_string_equal(snap.version, "9.9");
  /* Released: gone; claimed again: the same slot, zeroed. */
  ldmm_release(f, b);
  assert_int_equal(ldmm_snapshot_take(r, &snap), 0);
  assert_int_equal(snap.nconns, 2);
  assert_int_equal(snap.conns[0].pid, 1001);
  assert_int_equal(snap.conns[1].pid, 1003);
  assert_int_equal(ldmm_claim(f), b);
  ldmm_bind(f, b, 1004);
  assert_int_equal(ldmm_snapshot_take(r, &snap), 0);
  assert_int_equal(snap.nconns, 3);
  assert_int_equal(snap.conns[1].pid, 1004);
  assert_int_equal(snap.conns[1].products, 0);
  assert_int_equal(snap.conns[1].reconnections, 0);
  assert_int_equal(snap.conns[1].latency.count, 0);
  assert_string_equal(snap.conns[1].peer, "");
  assert_int_equal(snap.feeds[3].products, 1); /* the aggregate stays */
  ldmm_release(f, -1);                         /* ignored */
  ldmm_snapshot_free(&snap);
  ldmm_close(r, false);
  ldmm_close(f, true);
  assert_int_equal(access("m.metrics", F_OK), -1); /* removed */
}

static uint64_t apart(uint64_t a, uint64_t b) {
  return a > b ? a - b : b - a;
}

/* A child that writes its slot as fast as it can is killed (SIGKILL) while
 * a reader takes snapshots: every snapshot is whole (a histogram's count is
 * its buckets' sum, products never go back), and once the parent releases
 * the slot the child's figures are gone but the aggregate's stay. */
static void test_child_dies(void **state) {
  ldmm_snapshot snap = {0};
  ldmm_file *f = make(4), *r;
  uint64_t last = 0;
  int slot = ldmm_claim(f), i, st;
  pid_t pid;
  (void)state;

  assert_int_equal(slot, 0);
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    ldmm_slot *s = ldmm_slot_at(f, slot);
    int64_t k;

    alarm(30); /* if the test fails before it kills us */
    ldmm_describe(s, LDMM_KIND_DOWNSTREAM, "pusher", "IDS \".*\"");
    for (k = 0;; k++) {
      ldmm_inserted(s, ldmm_feeds(f), 1u << 4, 100, k % 4000000000);
      if (k % 1000 == 0)
        ldmm_describe(s, LDMM_KIND_DOWNSTREAM, k % 2000 ? "a" : "bb", NULL);
    }
  }
  ldmm_bind(f, slot, pid);
  r = reader();
  for (i = 0; i < 2000 || last == 0; i++) {
    assert_int_equal(ldmm_snapshot_take(r, &snap), 0);
    assert_int_equal(snap.nconns, 1);
    assert_int_equal(snap.conns[0].pid, pid);
    assert_true(snap.conns[0].products >= last);
    last = snap.conns[0].products;
    /* "": not described yet, or being described again */
    assert_true(strcmp(snap.conns[0].peer, "") == 0 ||
                strcmp(snap.conns[0].peer, "pusher") == 0 ||
                strcmp(snap.conns[0].peer, "a") == 0 ||
                strcmp(snap.conns[0].peer, "bb") == 0);
  }
  assert_int_equal(kill(pid, SIGKILL), 0);
  assert_int_equal(waitpid(pid, &st, 0), pid);
  assert_true(WIFSIGNALED(st));
  assert_int_equal(ldmm_snapshot_take(r, &snap), 0);
  /* Not reaped yet: still shown, even if killed while it rewrote its
   * description. */
  assert_int_equal(snap.nconns, 1);
  assert_true(snap.conns[0].products >= last);
  /* Killed between the adds of one product: one apart at most. */
  assert_true(apart(snap.conns[0].products, snap.conns[0].latency.count) <= 1);
  assert_true(apart(snap.feeds[4].products, snap.conns[0].products) <= 1);
  assert_true(apart(snap.feeds[4].products, snap.feeds[4].latency.count) <= 1);
  last = snap.feeds[4].products;
  ldmm_release(f, slot); /* reaped */
  assert_int_equal(ldmm_snapshot_take(r, &snap), 0);
  assert_int_equal(snap.nconns, 0);
  assert_int_equal(snap.feeds[4].products, last);
  ldmm_snapshot_free(&snap);
  ldmm_close(r, false);
  ldmm_close(f, true);
}

/* ---- the ingesters' region (ingester.h) ---- */

static int lines_starting(const char *text, const char *prefix);

static ldmm_file *attach(void) {
  char err[1024];
  ldmm_file *f = ldmm_attach("m.metrics", err, sizeof err);

  if (f == NULL)
    fail_msg("%s", err);
  return f;
}

/* An ingester's figures: counted, in the snapshot, in the feed aggregates,
 * rendered (checked by promcheck), gone when it frees its entry. */
static void test_ingester(void **state) {
  static const char *const rx[] = {"224.0.1.1@10.0.0.1", "224.0.1.1@10.0.1.1"};
  ldmm_snapshot snap = {0};
  ldmm_queue q = {0};
  ldmm_prom_buf b = {0}, j = {0};
  ldmm_file *f = make(4), *a = attach();
  ldmm_ingester *e;
  const ldmm_ingester_copy *g;
  char err[512];
  size_t n;
  (void)state;

  e = ldmm_ingester_claim(a, "224.0.1.1", rx, 2);
  assert_non_null(e);
  ldmm_ingester_counts(e, 14, 2, 70000, 1);
  ldmm_ingester_product(e, ldmm_feeds(a), 1u << 11, 100, true, LDMM_NCAUSES);
  ldmm_ingester_product(e, ldmm_feeds(a), 1u << 11, 50, true, LDMM_NCAUSES);
  ldmm_ingester_product(e, ldmm_feeds(a), 3u, 10, true, LDMM_NCAUSES);
  ldmm_ingester_product(e, ldmm_feeds(a), 1u << 11, 100, false, LDMM_DUPLICATE);
  ldmm_ingester_product(e, ldmm_feeds(a), 1u << 11, 100, false, LDMM_NO_ROOM);
  ldmm_ingester_rcvbuf(e, 0, 212992);
  ldmm_ingester_datagram(e, 0, 5000, 9000, 3);
  ldmm_ingester_datagram(e, 0, 4000, 4000, 7);
  ldmm_ingester_datagram(e, 1, 5000, 0, -1);
  ldmm_ingester_datagram(e, LDMM_NRX, 5000, 0, -1); /* ignored */
  assert_int_equal(ldmm_snapshot_take(f, &snap), 0);
  assert_int_equal(snap.ningesters, 1);
  g = &snap.ingesters[0];
  assert_int_equal(g->pid, getpid());
  assert_string_equal(g->channel, "224.0.1.1");
  assert_int_equal(g->frames, 14);
  assert_int_equal(g->missed, 2);
  assert_int_equal(g->bytes, 70000);
  assert_int_equal(g->fullfifo, 1);
  assert_int_equal(g->products, 5);
  assert_int_equal(g->duplicates, 1);
  assert_int_equal(g->failed, 1);
  assert_int_equal(g->inserted[11], 2);
  assert_int_equal(g->inserted[LDMM_FEED_OTHER], 1);
  assert_int_equal(g->nrx, 2);
  assert_string_equal(g->rx[0].name, rx[0]);
  assert_int_equal(g->rx[0].datagrams, 2);
  assert_int_equal(g->rx[0].bytes, 9000);
  assert_int_equal(g->rx[0].queue_max, 9000); /* the most, not the last */
  assert_int_equal(g->rx[0].rcvbuf, 212992);
  assert_int_equal(g->rx[0].drops, 7);
  assert_int_equal(g->rx[1].datagrams, 1);
  assert_int_equal(g->rx[1].drops, 0);
  /* The feed aggregates: what the status page's feeds show. */
  assert_int_equal(snap.feeds[11].products, 2);
  assert_int_equal(snap.feeds[11].bytes, 150);
  assert_int_equal(snap.feeds[11].latency.bucket[0], 2);
  assert_int_equal(snap.feeds[11].refused[LDMM_DUPLICATE], 1);
  assert_int_equal(snap.feeds[11].refused[LDMM_NO_ROOM], 1);
  assert_int_equal(snap.feeds[LDMM_FEED_OTHER].products, 1);
  ldmm_render_prom(&snap, &q, &b);
  assert_false(b.failed);
  if (promcheck(b.p, &n, err, sizeof err) != 0)
    fail_msg("%s\n%s", err, b.p);
  {
    char want[256], feed[32];

    ldmm_feed_name(11, feed, sizeof feed);
    snprintf(want, sizeof want,
             "ldmd_noaaport_frames_total{pid=\"%ld\",channel=\"224.0.1.1\"} "
             "14\n",
             (long)getpid());
    assert_non_null(strstr(b.p, want));
    snprintf(want, sizeof want,
             "ldmd_noaaport_missed_frames_total{pid=\"%ld\","
             "channel=\"224.0.1.1\"} 2\n",
             (long)getpid());
    assert_non_null(strstr(b.p, want));
    snprintf(want, sizeof want,
             "ldmd_noaaport_products_total{pid=\"%ld\",channel=\"224.0.1.1\","
             "feed=\"%s\"} 2\n",
             (long)getpid(), feed);
    assert_non_null(strstr(b.p, want));
    snprintf(want, sizeof want,
             "ldmd_noaaport_receiver_queue_max_bytes{pid=\"%ld\","
             "channel=\"224.0.1.1\",receiver=\"224.0.1.1@10.0.0.1\"} 9000\n",
             (long)getpid());
    assert_non_null(strstr(b.p, want));
  }
  assert_int_equal(lines_starting(b.p, "ldmd_noaaport_receiver_dropped_total{"),
                   2);
  ldmm_render_json(&snap, &q, &j);
  assert_non_null(strstr(j.p, "\"channel\":\"224.0.1.1\""));
  assert_non_null(strstr(j.p, ",\"frames\":14,\"missed_frames\":2,"));
  assert_non_null(strstr(j.p, "\"OTHER\":1"));
  assert_non_null(strstr(j.p, "\"queue_max_bytes\":9000,"
                              "\"buffer_bytes\":212992,\"dropped\":7}"));
  ldmm_ingester_release(e);
  assert_int_equal(ldmm_snapshot_take(f, &snap), 0);
  assert_int_equal(snap.ningesters, 0);
  assert_int_equal(snap.feeds[11].products, 2); /* the aggregates stay */
  ldmm_prom_free(&b);
  b = (ldmm_prom_buf){0};
  ldmm_render_prom(&snap, &q, &b);
  assert_null(strstr(b.p, "ldmd_noaaport_"));
  ldmm_prom_free(&b);
  ldmm_prom_free(&j);
  ldmm_snapshot_free(&snap);
  ldmm_close(a, false);
  assert_int_equal(access("m.metrics", F_OK), 0); /* never removes it */
  ldmm_close(f, true);
}

/* An ingester killed while it counts: its entry is dropped by readers at
 * once (its pid is gone), and the next ingester takes it, zeroed; with
 * every entry held by a live process, a claim gets none. */
static void test_ingester_dies(void **state) {
  ldmm_snapshot snap = {0};
  ldmm_file *f = make(2), *a = attach();
  ldmm_ingester *e, *mine[LDMM_NINGESTERS];
  int st, i;
  pid_t pid;
  (void)state;

  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    ldmm_ingester *c = ldmm_ingester_claim(a, "stdin", NULL, 0);
    uint64_t k;

    alarm(30);
    for (k = 1;; k++)
      ldmm_ingester_counts(c, k, 0, k, 0);
  }
  for (i = 0; i < 100000; i++) {
    assert_int_equal(ldmm_snapshot_take(f, &snap), 0);
    if (snap.ningesters == 1 && snap.ingesters[0].frames > 0)
      break;
    (void)sched_yield();
  }
  assert_int_equal(snap.ningesters, 1);
  assert_int_equal(snap.ingesters[0].pid, pid);
  assert_int_equal(kill(pid, SIGKILL), 0);
  assert_int_equal(waitpid(pid, &st, 0), pid);
  assert_int_equal(ldmm_snapshot_take(f, &snap), 0);
  assert_int_equal(snap.ningesters, 0);
  e = ldmm_ingester_claim(a, "224.0.1.2", NULL, 0);
  assert_ptr_equal(e, ldmm__ingester_at(a, 0)); /* the dead one's */
  assert_int_equal(ldmm_snapshot_take(f, &snap), 0);
  assert_int_equal(snap.ningesters, 1);
  assert_int_equal(snap.ingesters[0].frames, 0);
  assert_string_equal(snap.ingesters[0].channel, "224.0.1.2");
  mine[0] = e;
  for (i = 1; i < LDMM_NINGESTERS; i++) {
    mine[i] = ldmm_ingester_claim(a, "x", NULL, 0);
    assert_non_null(mine[i]);
  }
  assert_null(ldmm_ingester_claim(a, "y", NULL, 0));
  assert_null(ldmm_ingester_claim(NULL, "y", NULL, 0));
  for (i = 0; i < LDMM_NINGESTERS; i++)
    ldmm_ingester_release(mine[i]);
  assert_int_equal(ldmm_snapshot_take(f, &snap), 0);
  assert_int_equal(snap.ningesters, 0);
  ldmm_snapshot_free(&snap);
  ldmm_close(a, false);
  ldmm_close(f, true);
}

static void write_bytes(const char *path, const void *p, size_t n) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

  assert_true(fd >= 0);
  assert_int_equal(write(fd, p, n), (ssize_t)n);
  close(fd);
}

static void test_open_refuses(void **state) {
  char err[1024], buf[8192];
  ldmm_file *f = make(2), *r;
  FILE *in;
  size_t n;
  (void)state;

  assert_null(ldmm_open("none.metrics", err, sizeof err));
  assert_non_null(strstr(err, "none.metrics"));
  assert_non_null(strstr(err, "No such file"));
  in = fopen("m.metrics", "rb");
  assert_non_null(in);
  n = fread(buf, 1, sizeof buf, in);
  fclose(in);
  write_bytes("short.metrics", buf, 100);
  assert_null(ldmm_open("short.metrics", err, sizeof err));
  assert_non_null(strstr(err, "too short"));
  write_bytes("cut.metrics", buf, n); /* the header, not the slots */
  assert_null(ldmm_open("cut.metrics", err, sizeof err));
  assert_non_null(strstr(err, "past the end"));
  buf[0] = 'X';
  write_bytes("magic.metrics", buf, n);
  assert_null(ldmm_open("magic.metrics", err, sizeof err));
  assert_non_null(strstr(err, "magic.metrics"));
  assert_non_null(strstr(err, "bad magic"));
  r = reader();
  ldmm_close(r, true); /* a reader never removes it */
  assert_int_equal(access("m.metrics", F_OK), 0);
  ldmm_close(f, true);
}

/* ---- the Prometheus writer ---- */

static void test_prom_escaping(void **state) {
  ldmm_prom_buf b = {0};
  ldmm_prom_label l[2] = {{"peer", "a\\b\"c\nd"}, {"x", ""}};
  char err[512];
  (void)state;

  ldmm_prom_family(&b, "t_total", "counter", "back\\slash \"quote\"\nnewline");
  ldmm_prom_sample_u64(&b, "t_total", l, 2, 18446744073709551615ull);
  ldmm_prom_family(&b, "g", "gauge", "floats");
  ldmm_prom_sample_f(&b, "g", NULL, 0, 0.1);
  ldmm_prom_sample_f(&b, "g", l + 1, 1, (double)NAN);
  assert_false(b.failed);
  assert_string_equal(b.p, "# HELP t_total back\\\\slash \"quote\"\\nnewline\n"
                           "# TYPE t_total counter\n"
                           "t_total{peer=\"a\\\\b\\\"c\\nd\",x=\"\"} "
                           "18446744073709551615\n"
                           "# HELP g floats\n"
                           "# TYPE g gauge\n"
                           "g 0.1\n"
                           "g{x=\"\"} NaN\n");
  if (promcheck(b.p, NULL, err, sizeof err) != 0)
    fail_msg("%s", err);
  ldmm_prom_free(&b);
}

static void test_prom_numbers(void **state) {
  ldmm_prom_buf b = {0};
  (void)state;

  ldmm_prom_sample_f(&b, "a", NULL, 0, 20.0);
  ldmm_prom_sample_f(&b, "a", NULL, 0, 1796178845.934553);
  ldmm_prom_sample_f(&b, "a", NULL, 0, (double)INFINITY);
  ldmm_prom_sample_f(&b, "a", NULL, 0, -(double)INFINITY);
  ldmm_prom_sample_f(&b, "a", NULL, 0, 3600000000.0 / 1e6);
  ldmm_prom_sample_f(&b, "a", NULL, 0, 1e300);
  assert_string_equal(b.p, "a 20\na 1796178845.934553\na +Inf\na -Inf\n"
                           "a 3600\na 1e+300\n");
  ldmm_prom_free(&b);
}

static void test_prom_histogram(void **state) {
  static const uint64_t bounds[LDMM_NBUCKETS] = LDMM_BOUNDS_US;
  uint64_t counts[LDMM_NBUCKETS] = {0};
  ldmm_prom_label l = {"feed", "IDS"};
  ldmm_prom_buf b = {0};
  char err[512];
  (void)state;

  counts[0] = 2;
  counts[5] = 3;
  counts[LDMM_NBUCKETS - 1] = 1;
  ldmm_prom_family(&b, "h_seconds", "histogram", "h");
  ldmm_prom_histogram(&b, "h_seconds", &l, 1, bounds, counts, LDMM_NBUCKETS,
                      12.5, 1e6);
  assert_non_null(strstr(b.p,
                         "h_seconds_bucket{feed=\"IDS\",le=\"0.1\"} 2\n"
                         "h_seconds_bucket{feed=\"IDS\",le=\"0.25\"} 2\n"));
  assert_non_null(strstr(b.p, "h_seconds_bucket{feed=\"IDS\",le=\"5\"} 5\n"));
  assert_non_null(strstr(b.p, "h_seconds_bucket{feed=\"IDS\",le=\"3600\"} 5\n"
                              "h_seconds_bucket{feed=\"IDS\",le=\"+Inf\"} 6\n"
                              "h_seconds_sum{feed=\"IDS\"} 12.5\n"
                              "h_seconds_count{feed=\"IDS\"} 6\n"));
  if (promcheck(b.p, NULL, err, sizeof err) != 0)
    fail_msg("%s", err);
  ldmm_prom_free(&b);
}

/* ---- the renderings ---- */

/* How many lines of text start with prefix. */
static int lines_starting(const char *text, const char *prefix) {
  const char *p = text;
  int n = 0;

  while (p != NULL && *p != '\0') {
    if (strncmp(p, prefix, strlen(prefix)) == 0)
      n++;
    p = strchr(p, '\n');
    if (p != NULL)
      p++;
  }
  return n;
}

static void test_render(void **state) {
  static const enum ldmm_kind kinds[] = {
      LDMM_KIND_UPSTREAM, LDMM_KIND_NOTIFYME, LDMM_KIND_DOWNSTREAM,
      LDMM_KIND_REQUESTER, LDMM_KIND_CONNECTION};
  ldmm_snapshot snap = {0};
  ldmm_queue q;
  ldmm_file *f = make(8);
  ldmm_prom_buf b = {0}, j = {0};
  char err[512];
  size_t n, i;
  const char *p;
  (void)state;

  for (i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
    int k = ldmm_claim(f);
    ldmm_slot *s = ldmm_slot_at(f, k);

    ldmm_bind(f, k, (pid_t)(2000 + i));
    ldmm_describe(s, kinds[i], "host \"quoted\"\\ (127.0.0.1)",
                  "20240101000000.000000 TS_ENDT {{IDS, \".*\"}}");
    if (kinds[i] == LDMM_KIND_UPSTREAM || kinds[i] == LDMM_KIND_NOTIFYME) {
      ldmm_sent(s, 1000);
      ldmm_cursor(s, 5000000);
    } else {
      ldmm_inserted(s, ldmm_feeds(f), 1u << 3, 1000, 200000);
      ldmm_refused(s, ldmm_feeds(f), 1u << 3, LDMM_DUPLICATE);
    }
  }
  ldmm_refused(NULL, ldmm_feeds(f), 0, LDMM_TOO_OLD); /* feed OTHER */
  assert_int_equal(ldmm_snapshot_take(f, &snap), 0);
  memset(&q, 0, sizeof q);
  q.ok = true;
  q.held_ok = true;
  q.st.ps_nprods = 3;
  q.st.ps_slots = 10;
  q.st.ps_nempty = 7;
  q.st.ps_last_key = 7500000; /* 2.5 s past the feeders' cursors */
  q.st.ps_mvrt_us = -1;
  ldmm_render_prom(&snap, &q, &b);
  assert_false(b.failed);
  if (promcheck(b.p, &n, err, sizeof err) != 0)
    fail_msg("%s\n%s", err, b.p);
  assert_true(n > 100);
  /* Each family once. */
  for (p = b.p; (p = strstr(p, "# TYPE ")) != NULL; p++) {
    char name[128], prefix[160];

    assert_int_equal(sscanf(p, "# TYPE %127s", name), 1);
    snprintf(prefix, sizeof prefix, "# TYPE %s ", name);
    assert_int_equal(lines_starting(b.p, prefix), 1);
  }
  assert_int_equal(lines_starting(b.p, "ldmd_connection_info{"), 5);
  assert_int_equal(lines_starting(b.p, "ldmd_connection_lag_seconds{"), 2);
  assert_non_null(strstr(b.p, "ldmd_connection_lag_seconds{pid=\"2000\","
                              "kind=\"upstream\",peer=\"host \\\"quoted\\\"\\\\"
                              " (127.0.0.1)\"} 2.5\n"));
  assert_int_equal(lines_starting(b.p, "ldmd_connection_reconnections_total{"),
                   1);
  assert_non_null(strstr(b.p, "ldmd_feed_products_total{feed=\"IDS\"} 3\n"));
  assert_non_null(strstr(b.p, "ldmd_feed_refused_total{feed=\"OTHER\","
                              "cause=\"too_old\"} 1\n"));
  assert_non_null(strstr(b.p, "ldmd_queue_used_slots 3\n"));
  assert_non_null(
      strstr(b.p, "ldmd_queue_min_virtual_residence_seconds NaN\n"));
  /* Without the queue's figures: no lag, no queue series but ldmd_queue_up. */
  q.ok = false;
  ldmm_prom_free(&b);
  ldmm_render_prom(&snap, &q, &b);
  if (promcheck(b.p, NULL, err, sizeof err) != 0)
    fail_msg("%s", err);
  assert_int_equal(lines_starting(b.p, "ldmd_connection_lag_seconds{"), 0);
  assert_non_null(strstr(b.p, "ldmd_queue_up 0\n"));
  assert_null(strstr(b.p, "ldmd_queue_products"));
  q.ok = true;
  ldmm_render_json(&snap, &q, &j);
  assert_false(j.failed);
  assert_int_equal(j.p[0], '{');
  assert_non_null(
      strstr(j.p, "\"peer\":\"host \\\"quoted\\\"\\\\ (127.0.0.1)\""));
  assert_non_null(strstr(j.p, "\"lag_seconds\":2.500000"));
  assert_non_null(strstr(j.p, "\"feed\":\"IDS\",\"products\":3"));
  ldmm_prom_free(&b);
  ldmm_prom_free(&j);
  ldmm_snapshot_free(&snap);
  ldmm_close(f, true);
}

/* ---- the checker refuses what is malformed ---- */

static void test_promcheck_refuses(void **state) {
  static const struct {
    const char *text, *why;
  } bad[] = {
      {"a 1", "newline"},
      {"a{x=\"1\"} 1\na{x=\"1\"} 2\n", "twice"},
      {"a{x=\"1\",y=\"2\"} 1\na{y=\"2\",x=\"1\"} 2\n", "twice"},
      {"# TYPE a countr\na 1\n", "bad TYPE"},
      {"# TYPE a counter\n# TYPE a counter\na 1\n", "second TYPE"},
      {"a 1\n# TYPE a gauge\n", "after its samples"},
      {"a 1\nb 1\na 2\n", "not together"},
      {"1a 1\n", "bad metric name"},
      {"a{1x=\"1\"} 1\n", "bad label name"},
      {"a{x=\"\\t\"} 1\n", "bad escape"},
      {"a{x=\"1} 1\n", "not closed"},
      {"a{x=\"1\",x=\"2\"} 1\n", "twice"},
      {"a one\n", "bad value"},
      {"a 1 x\n", "bad timestamp"},
      {"# HELP a bad \\q\n", "bad escape"},
      {"# TYPE c counter\nc -1\n", "negative"},
      {"# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"2\"} 1\n"
       "h_bucket{le=\"+Inf\"} 2\nh_sum 1\nh_count 2\n",
       "less than"},
      {"# TYPE h histogram\nh_bucket{le=\"2\"} 1\nh_bucket{le=\"1\"} 1\n"
       "h_bucket{le=\"+Inf\"} 2\nh_sum 1\nh_count 2\n",
       "not above"},
      {"# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_sum 1\nh_count 1\n",
       "+Inf"},
      {"# TYPE h histogram\nh_bucket{le=\"+Inf\"} 3\nh_sum 1\nh_count 2\n",
       "_count"},
      {"# TYPE h histogram\nh_bucket{le=\"+Inf\"} 3\nh_count 3\n", "_sum"},
      {"# TYPE h histogram\nh_bucket 3\n", "le missing"},
      {"# TYPE h histogram\nh 3\n", "without _bucket"},
      {"a 1\r\n", "carriage return"},
  };
  char err[512];
  size_t i, n;
  (void)state;

  for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    if (promcheck(bad[i].text, NULL, err, sizeof err) == 0)
      fail_msg("accepted: %s", bad[i].text);
    if (strstr(err, bad[i].why) == NULL)
      fail_msg("\"%s\": \"%s\", not about %s", bad[i].text, err, bad[i].why);
  }
  assert_int_equal(
      promcheck("# comment\n\n# HELP a x\n# TYPE a gauge\na{x=\"1\",} -2.5e3 "
                "1700000000000\na{x=\"2\"} -Inf\n",
                &n, err, sizeof err),
      0);
  assert_int_equal(n, 2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bucket),
      cmocka_unit_test(test_feed_of),
      cmocka_unit_test_setup_teardown(test_claim_release, tu_tmpdir_setup,
                                      tu_tmpdir_teardown),
      cmocka_unit_test_setup_teardown(test_child_dies, tu_tmpdir_setup,
                                      tu_tmpdir_teardown),
      cmocka_unit_test_setup_teardown(test_ingester, tu_tmpdir_setup,
                                      tu_tmpdir_teardown),
      cmocka_unit_test_setup_teardown(test_ingester_dies, tu_tmpdir_setup,
                                      tu_tmpdir_teardown),
      cmocka_unit_test_setup_teardown(test_open_refuses, tu_tmpdir_setup,
                                      tu_tmpdir_teardown),
      cmocka_unit_test(test_prom_escaping),
      cmocka_unit_test(test_prom_numbers),
      cmocka_unit_test(test_prom_histogram),
      cmocka_unit_test_setup_teardown(test_render, tu_tmpdir_setup,
                                      tu_tmpdir_teardown),
      cmocka_unit_test(test_promcheck_refuses),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
