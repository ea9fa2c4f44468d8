/*
 * test_pqmon_view.c - unit tests of the frame of pqmon's live view
 * (pqutils/queue/pqmon_view.c), rendered from fixed snapshots of ldmd's figures
 * and fixed queue statistics: rates from two snapshots of the same server,
 * the latency's mean and percentiles from the histogram over the interval
 * (and the quantile estimate itself), the order of feeds and connections,
 * the queue's line, a frame cut to the screen's width and height, no rates
 * against another server's snapshot, a frame without ldmd's figures, a
 * server with no feed and no connection yet, and text from the figures
 * that cannot drive the terminal.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pqutils/queue/pqmon_view.h"

#define S 1000000ll /* microseconds a second */
#define T0 (1700000000ll * S)

static const uint64_t bucket_bounds[LDMM_NBUCKETS] = LDMM_BOUNDS_US;

/* The index of a feed aggregate by name ("IDS"). */
static unsigned feed_index(const char *name) {
  unsigned i;

  for (i = 0; i < LDMM_NFEEDS; i++) {
    char n[32];

    ldmm_feed_name(i, n, sizeof n);
    if (strcmp(n, name) == 0)
      return i;
  }
  fail_msg("no feed %s", name);
  return 0;
}

/* A snapshot of server pid 100, started at T0, with room for n conns. */
static void snap_init(ldmm_snapshot *s, size_t n) {
  memset(s, 0, sizeof *s);
  s->pid = 100;
  s->start_us = T0;
  snprintf(s->version, sizeof s->version, "9.9");
  memcpy(s->bounds_us, bucket_bounds, sizeof bucket_bounds);
  s->cap = n;
  s->conns = n > 0 ? calloc(n, sizeof *s->conns) : NULL;
}

static ldmm_conn_copy *conn_add(ldmm_snapshot *s, int index, pid_t pid,
                                enum ldmm_kind kind, const char *peer,
                                const char *feed, uint64_t products) {
  ldmm_conn_copy *c = &s->conns[s->nconns++];

  assert_true(s->nconns <= s->cap);
  c->index = index;
  c->pid = pid;
  c->kind = kind;
  c->start_us = T0 + S;
  snprintf(c->peer, sizeof c->peer, "%s", peer);
  snprintf(c->feed, sizeof c->feed, "%s", feed);
  c->products = products;
  return c;
}

static void queue_init(ldmm_queue *q) {
  memset(q, 0, sizeof *q);
  q->ok = true;
  q->held_ok = true;
  q->held = 3;
  q->st.ps_nprods = 1234;
  q->st.ps_nreserved = 2;
  q->st.ps_data_size = 1000000;
  q->st.ps_nbytes = 500000;
  q->st.ps_slots = 100;
  q->st.ps_nempty = 75;
  q->st.ps_age_oldest = 3660;
  q->st.ps_mvrt_us = 7200 * S;
  q->st.ps_evicted = 5;
  q->st.ps_last_key = (uint64_t)(T0 + 600 * S);
}

static pqmon_view view(const ldmm_queue *q, const ldmm_snapshot *now,
                       const ldmm_snapshot *prev, int width, int height) {
  return (pqmon_view){.queue_path = "/q/ldm.pq",
                      .queue = q,
                      .now = now,
                      .prev = prev,
                      .dt = 2.0,
                      .interval = 2,
                      .wall = (double)(T0 / S) + 3725.5,
                      .width = width,
                      .height = height};
}

/* The frame of now against prev (NULL: the first frame) for the queue of
 * queue_init(), on a width x height screen; the caller frees it. */
static char *render(const ldmm_snapshot *now, const ldmm_snapshot *prev,
                    int width, int height) {
  ldmm_queue q;
  pqmon_view v;
  char *text;

  queue_init(&q);
  v = view(&q, now, prev, width, height);
  text = pqmon_view_render(&v);
  assert_non_null(text);
  return text;
}

/* Free a frame and the two snapshots it was made of. */
static void free_frame(char *text, ldmm_snapshot *prev, ldmm_snapshot *now) {
  free(text);
  ldmm_snapshot_free(prev);
  ldmm_snapshot_free(now);
}

/* The line of text that starts with prefix (a static copy), or NULL. */
static const char *line_of(const char *text, const char *prefix) {
  static char buf[1024];
  const char *p = text;

  while (*p != '\0') {
    const char *end = strchr(p, '\n');
    size_t len = end != NULL ? (size_t)(end - p) : strlen(p);

    if (strncmp(p, prefix, strlen(prefix)) == 0) {
      assert_true(len < sizeof buf);
      memcpy(buf, p, len);
      buf[len] = '\0';
      return buf;
    }
    p += len + (end != NULL);
  }
  return NULL;
}

/* The whitespace-separated fields of line, into f (at most n). */
static size_t fields(const char *line, char f[][64], size_t n) {
  size_t k = 0;
  const char *p = line;

  while (k < n) {
    int used = 0;

    if (sscanf(p, "%63s%n", f[k], &used) != 1)
      break;
    p += used;
    k++;
  }
  return k;
}

static size_t count_lines(const char *text) {
  size_t n = 0;

  for (; *text != '\0'; text++)
    n += *text == '\n';
  return n;
}

/* ---- the quantile ---- */

static void test_quantile(void **state) {
  uint64_t c[LDMM_NBUCKETS] = {0};
  (void)state;

  assert_true(pqmon_view_quantile(c, bucket_bounds, 0.5) == -1); /* empty */
  c[4] = 20; /* all within 1 to 2.5 s: linear in the bucket */
  assert_float_equal(pqmon_view_quantile(c, bucket_bounds, 0.5), 1.75, 1e-9);
  assert_float_equal(pqmon_view_quantile(c, bucket_bounds, 0.95), 2.425, 1e-9);
  c[5] = 20; /* half up to 2.5 s, half within 2.5 to 5 s */
  assert_float_equal(pqmon_view_quantile(c, bucket_bounds, 0.5), 2.5, 1e-9);
  assert_float_equal(pqmon_view_quantile(c, bucket_bounds, 0.95), 4.75, 1e-9);
  memset(c, 0, sizeof c);
  c[0] = 10; /* the first bucket starts at 0 */
  assert_float_equal(pqmon_view_quantile(c, bucket_bounds, 0.5), 0.05, 1e-9);
  memset(c, 0, sizeof c);
  c[LDMM_NBUCKETS - 1] = 1; /* past the last bound: unknown, above it */
  assert_true(isinf(pqmon_view_quantile(c, bucket_bounds, 0.5)));
  c[3] = 99; /* p50 in (0.5, 1], p95 too; the +Inf one is the last 1% */
  assert_true(pqmon_view_quantile(c, bucket_bounds, 0.5) > 0.5);
  assert_true(pqmon_view_quantile(c, bucket_bounds, 0.95) <= 1.0);
  assert_true(isinf(pqmon_view_quantile(c, bucket_bounds, 0.999)));
}

/* ---- two snapshots: rates, latency, order ---- */

/* prev and now 2 s apart: IDS 100 -> 120 products (10/s), 100 kB ->
 * 140 kB (20 kB/s), 10 more in the 1-2.5 s bucket and 10 in 2.5-5 s, 60 s
 * of latency more (mean 3 s); NEXRAD2 unchanged.  Connections: a requester
 * 50 -> 70 (10/s), an upstream 10 -> 50 (20/s) 3.5 s behind the queue's
 * newest, a connection new in now (no rate). */
static void two_snapshots(ldmm_snapshot *prev, ldmm_snapshot *now) {
  unsigned ids = feed_index("IDS"), nexrad = feed_index("NEXRAD2");
  ldmm_conn_copy *c;

  snap_init(prev, 4);
  snap_init(now, 4);
  prev->feeds[ids].products = 100;
  prev->feeds[ids].bytes = 100000;
  prev->feeds[ids].latency.bucket[4] = 100;
  prev->feeds[ids].latency.sum_us = 200 * S;
  now->feeds[ids] = prev->feeds[ids];
  now->feeds[ids].products = 120;
  now->feeds[ids].bytes = 140000;
  now->feeds[ids].latency.bucket[4] = 110;
  now->feeds[ids].latency.bucket[5] = 10;
  now->feeds[ids].latency.sum_us = 260 * S;
  now->feeds[ids].refused[LDMM_DUPLICATE] = 4;
  prev->feeds[nexrad].products = 500;
  now->feeds[nexrad].products = 500;
  conn_add(prev, 0, 201, LDMM_KIND_REQUESTER, "up.example port 388",
           "IDS \".*\"", 50);
  c = conn_add(now, 0, 201, LDMM_KIND_REQUESTER, "up.example port 388",
               "IDS \".*\"", 70);
  c->reconnections = 2;
  c->refused[LDMM_TOO_OLD] = 1;
  conn_add(prev, 1, 202, LDMM_KIND_UPSTREAM, "down.example (10.0.0.2)",
           "TS_ENDT {{IDS, \".*\"}}", 10);
  c = conn_add(now, 1, 202, LDMM_KIND_UPSTREAM, "down.example (10.0.0.2)",
               "TS_ENDT {{IDS, \".*\"}}", 50);
  c->cursor_us = (uint64_t)(T0 + 600 * S - 3500000);
  conn_add(now, 2, 203, LDMM_KIND_CONNECTION, "new.example (10.0.0.3)", "", 0);
}

/* The feed rows of two_snapshots' frame: FEED PRODUCTS PROD/S BYTES/S LATENCY
 * P50 P95 REFUSED. */
static void check_feed_rates(const char *text) {
  char f[12][64];
  const char *l;

  l = line_of(text, "IDS ");
  assert_non_null(l);
  assert_int_equal(fields(l, f, 12), 8);
  assert_string_equal(f[1], "120");
  assert_string_equal(f[2], "10.0");
  assert_string_equal(f[3], "20.0k");
  assert_string_equal(f[4], "3.00s");
  assert_string_equal(f[5], "2.50s");
  assert_string_equal(f[6], "4.75s");
  assert_string_equal(f[7], "4");
  /* No product in the interval: a rate of 0, no latency. */
  l = line_of(text, "NEXRAD2 ");
  assert_non_null(l);
  assert_int_equal(fields(l, f, 12), 8);
  assert_string_equal(f[1], "500");
  assert_string_equal(f[2], "0.0");
  assert_string_equal(f[4], "-");
  assert_string_equal(f[5], "-");
  /* Sorted: IDS (10/s) before NEXRAD2 (0/s, more products). */
  assert_true(strstr(text, "\nIDS ") < strstr(text, "\nNEXRAD2 "));
}

/* The connection rows of two_snapshots' frame: KIND PID PROD/S LAG RECON
 * REFUSED PEER... FEED... */
static void check_connection_rates(const char *text) {
  char f[12][64];
  const char *l, *kinds;

  l = line_of(text, "upstream ");
  assert_non_null(l);
  assert_true(fields(l, f, 12) >= 9);
  assert_string_equal(f[1], "202");
  assert_string_equal(f[2], "20.0");
  assert_string_equal(f[3], "3.50s");
  assert_string_equal(f[4], "-"); /* reconnections: requesters only */
  assert_string_equal(f[5], "-"); /* refusals: receivers only */
  assert_non_null(strstr(l, " down.example (10.0.0.2) TS_ENDT {{IDS, "
                            "\".*\"}}"));
  l = line_of(text, "requester ");
  assert_non_null(l);
  assert_true(fields(l, f, 12) >= 8);
  assert_string_equal(f[1], "201");
  assert_string_equal(f[2], "10.0");
  assert_string_equal(f[3], "-"); /* no lag: not a feeder */
  assert_string_equal(f[4], "2");
  assert_string_equal(f[5], "1");
  l = line_of(text, "connection ");
  assert_non_null(l);
  assert_true(fields(l, f, 12) >= 7);
  assert_string_equal(f[2], "-"); /* new: no rate yet */
  /* Sorted by products/s: upstream, requester, then the new one. */
  kinds = strstr(text, "\nupstream ");
  assert_non_null(kinds);
  assert_true(kinds < strstr(text, "\nrequester "));
  assert_true(strstr(text, "\nrequester ") < strstr(text, "\nconnection "));
}

static void test_rates(void **state) {
  ldmm_snapshot prev, now;
  char *text;
  const char *l;
  (void)state;

  two_snapshots(&prev, &now);
  text = render(&now, &prev, 200, 50);

  l = line_of(text, "pqmon -L ");
  assert_string_equal(l, "pqmon -L  2023-11-14 23:15:25 UTC  every 2s  "
                         "/q/ldm.pq");
  l = line_of(text, "queue: ");
  assert_string_equal(l, "queue: 1234 products (2 being written), bytes "
                         "50.0% of 1.0MB, slots 25.0% of 100");
  assert_non_null(strstr(text, "       oldest 1h01m, mvrt 2h00m, "
                               "evictions 5, held 3\n"));
  l = line_of(text, "ldmd: ");
  assert_string_equal(l, "ldmd: pid 100, up 1h02m, version 9.9, "
                         "connections 3");
  check_feed_rates(text);
  check_connection_rates(text);
  free_frame(text, &prev, &now);
}

/* The first frame: no interval, no rates; sorted by products. */
static void test_rates_first_frame(void **state) {
  ldmm_snapshot prev, now;
  char *text, f[12][64];
  const char *l;
  (void)state;

  two_snapshots(&prev, &now);
  text = render(&now, NULL, 200, 50);
  l = line_of(text, "IDS ");
  assert_int_equal(fields(l, f, 12), 8);
  assert_string_equal(f[2], "-");
  assert_string_equal(f[3], "-");
  assert_string_equal(f[4], "-");
  assert_true(strstr(text, "\nNEXRAD2 ") < strstr(text, "\nIDS "));
  assert_true(strstr(text, "\nrequester ") < strstr(text, "\nupstream "));
  free_frame(text, &prev, &now);
}

/* Against another server's snapshot (restarted: another pid): no rates,
 * never a difference of unrelated counters. */
static void test_rates_restarted(void **state) {
  ldmm_snapshot prev, now;
  char *text, f[12][64];
  const char *l;
  (void)state;

  two_snapshots(&prev, &now);
  prev.pid = 999;
  text = render(&now, &prev, 200, 50);
  l = line_of(text, "IDS ");
  assert_int_equal(fields(l, f, 12), 8);
  assert_string_equal(f[2], "-");
  l = line_of(text, "upstream ");
  assert_true(fields(l, f, 12) >= 3);
  assert_string_equal(f[2], "-");
  free_frame(text, &prev, &now);
}

/* ---- the screen's size ---- */

static void test_cut(void **state) {
  ldmm_snapshot prev, now;
  ldmm_queue q;
  pqmon_view v;
  char *text, *all, *line, *save = NULL;
  size_t total, i;
  (void)state;

  /* Many connections. */
  snap_init(&prev, 1);
  snap_init(&now, 40);
  for (i = 0; i < 40; i++) {
    char peer[64];

    snprintf(peer, sizeof peer, "host%zu.example.org (10.0.0.%zu)", i, i);
    conn_add(&now, (int)i, (pid_t)(300 + i), LDMM_KIND_UPSTREAM, peer,
             "TS_ENDT {{ANY, \".*\"}}", i);
  }
  queue_init(&q);
  v = view(&q, &now, &prev, 1000, 1000);
  all = pqmon_view_render(&v);
  assert_non_null(all);
  total = count_lines(all);
  assert_true(total > 40);
  assert_null(strstr(all, "more lines"));

  /* 24 lines: 23 of the frame, then how many more there are. */
  v = view(&q, &now, &prev, 80, 24);
  text = pqmon_view_render(&v);
  assert_non_null(text);
  assert_int_equal(count_lines(text), 24);
  {
    char want[80];
    const char *last = strrchr(text, '\n');

    snprintf(want, sizeof want, "(%zu more lines: the screen is too small)\n",
             total - 23);
    while (last > text && last[-1] != '\n')
      last--;
    assert_string_equal(last, want);
  }
  /* 80 columns: no line wider; the title and the queue start as they
   * would at any width. */
  for (line = strtok_r(text, "\n", &save); line != NULL;
       line = strtok_r(NULL, "\n", &save))
    assert_true(strlen(line) <= 80);
  free(text);

  /* 30 columns, 8 lines. */
  v = view(&q, &now, &prev, 30, 8);
  text = pqmon_view_render(&v);
  assert_non_null(text);
  assert_int_equal(count_lines(text), 8);
  assert_non_null(strstr(text, "queue: 1234 products (2 being"));
  for (line = strtok_r(text, "\n", &save); line != NULL;
       line = strtok_r(NULL, "\n", &save))
    assert_true(strlen(line) <= 30);
  free(text);
  free(all);

  /* A screen too small for anything: still the title, cut. */
  v = view(&q, &now, &prev, 1, 1);
  text = pqmon_view_render(&v);
  assert_non_null(text);
  assert_int_equal(count_lines(text), 3);
  assert_non_null(strstr(text, "pqmon -L\n"));
  free_frame(text, &prev, &now);
}

/* ---- without figures; an unread queue; hostile text ---- */

static void test_no_figures(void **state) {
  ldmm_queue q;
  pqmon_view v;
  char *text;
  char why[300];
  (void)state;

  queue_init(&q);
  snprintf(why, sizeof why,
           "cannot open the metrics file /a/very/long/path/of/the/"
           "queue/file/ldm.pq.metrics: No such file or directory");
  v = view(&q, NULL, NULL, 40, 24);
  v.why_none = why;
  text = pqmon_view_render(&v);
  assert_non_null(text);
  assert_non_null(strstr(text, "\nqueue: 1234 products"));
  assert_non_null(strstr(text, "\nldmd: its figures are not there:\n"
                               "  cannot open the metrics file /a/very/l\n"
                               "  ong/path/of/the/queue/file/ldm.pq.metr\n"
                               "  ics: No such file or directory\n"));
  assert_null(strstr(text, "FEED"));
  assert_null(strstr(text, "KIND"));
  free(text);

  q.ok = false;
  v.width = 100;
  v.queue_why = "cannot lock the queue: Resource deadlock avoided";
  text = pqmon_view_render(&v);
  assert_non_null(text);
  assert_non_null(strstr(text, "\nqueue: its statistics could not be read: "
                               "cannot lock the queue: Resource deadlock "
                               "avoided\n"));
  free(text);
}

/* A server that has had no connection and no product yet. */
static void test_empty(void **state) {
  ldmm_snapshot prev, now;
  char *text;
  (void)state;

  snap_init(&prev, 0);
  snap_init(&now, 0);
  text = render(&now, &prev, 80, 24);
  assert_non_null(strstr(text, "\nldmd: pid 100, up 1h02m, version 9.9, "
                               "connections 0\n\nFEED "));
  assert_non_null(strstr(text, "\n  (no product received yet)\n\nKIND "));
  assert_non_null(strstr(text, "\n  (no connection)\n"));
  free_frame(text, &prev, &now);
}

static void test_hostile_text(void **state) {
  ldmm_snapshot now;
  ldmm_queue q;
  pqmon_view v;
  char *text;
  (void)state;

  snap_init(&now, 1);
  conn_add(&now, 0, 400, LDMM_KIND_DOWNSTREAM, "evil\033[2J\033]0;x\007",
           "IDS \"\r\n\"", 1);
  queue_init(&q);
  v = view(&q, &now, NULL, 200, 50);
  v.queue_path = "/q/\033[31mred.pq";
  text = pqmon_view_render(&v);
  assert_non_null(text);
  assert_null(strchr(text, '\033'));
  assert_null(strchr(text, '\r'));
  assert_null(strchr(text, '\007'));
  assert_non_null(strstr(text, "evil?[2J?]0;x?"));
  assert_non_null(strstr(text, "IDS \"??\""));
  assert_non_null(strstr(text, "/q/?[31mred.pq"));
  free(text);
  ldmm_snapshot_free(&now);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_quantile),
      cmocka_unit_test(test_rates),
      cmocka_unit_test(test_rates_first_frame),
      cmocka_unit_test(test_rates_restarted),
      cmocka_unit_test(test_cut),
      cmocka_unit_test(test_no_figures),
      cmocka_unit_test(test_empty),
      cmocka_unit_test(test_hostile_text),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
