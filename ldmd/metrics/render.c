/*
 * render.c - the snapshot and the queue's figures as Prometheus text and as
 * JSON (render.h).  Every family is written once, with all its series
 * after it: per feedtype (those that have seen a product or a refusal),
 * per connection (every live slot, labelled by pid, kind and peer), and
 * the queue's.  Names and units follow Prometheus' conventions: seconds,
 * bytes, counters ending in _total.
 */
#include "ldmd/metrics/render.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define PER_S 1e6 /* microseconds a second */

void ldmm_queue_read(pq_t *pq, ldmm_queue *q) {
  memset(q, 0, sizeof *q);
  if (pq == NULL)
    return;
  q->ok = pq_stats_get(pq, &q->st) == PQ_OK;
  q->held_ok = q->ok && pq_stats_held(pq, &q->held) == PQ_OK;
}

double ldmm_lag_seconds(const ldmm_conn_copy *c, const ldmm_queue *q) {
  if (!ldmm_kind_feeds(c->kind) || c->cursor_us == 0 || !q->ok)
    return -1;
  if (q->st.ps_last_key <= c->cursor_us)
    return 0;
  return (double)(q->st.ps_last_key - c->cursor_us) / PER_S;
}

static bool feed_seen(const ldmm_feed_copy *f) {
  unsigned k;

  if (f->products > 0)
    return true;
  for (k = 0; k < LDMM_NCAUSES; k++)
    if (f->refused[k] > 0)
      return true;
  return false;
}

/* ---------------------------------------------------------------------- */
/* Prometheus                                                             */
/* ---------------------------------------------------------------------- */

/* The labels of a connection: pid, kind, peer. */
typedef struct conn_labels {
  char pid[24];
  ldmm_prom_label l[4];
} conn_labels;

static void conn_labels_set(conn_labels *cl, const ldmm_conn_copy *c) {
  memset(cl, 0, sizeof *cl);
  snprintf(cl->pid, sizeof cl->pid, "%ld", (long)c->pid);
  cl->l[0] = (ldmm_prom_label){"pid", cl->pid};
  cl->l[1] = (ldmm_prom_label){"kind", ldmm_kind_name(c->kind)};
  cl->l[2] = (ldmm_prom_label){"peer", c->peer};
}

/* Which connections a family has series for. */
enum conn_pick { PICK_ALL, PICK_RECEIVERS, PICK_REQUESTERS };

/* The next connection from s->conns[*i] on that pick takes, with its labels
 * in cl, and *i past it; NULL after the last. */
static const ldmm_conn_copy *conn_next(const ldmm_snapshot *s, size_t *i,
                                       enum conn_pick pick, conn_labels *cl) {
  while (*i < s->nconns) {
    const ldmm_conn_copy *c = &s->conns[(*i)++];

    if ((pick == PICK_RECEIVERS && !ldmm_kind_receives(c->kind)) ||
        (pick == PICK_REQUESTERS && c->kind != LDMM_KIND_REQUESTER))
      continue;
    conn_labels_set(cl, c);
    return c;
  }
  return NULL;
}

enum conn_field { CF_PRODUCTS, CF_BYTES, CF_RECONNECTIONS };

static uint64_t conn_value(const ldmm_conn_copy *c, enum conn_field f) {
  switch (f) {
  case CF_PRODUCTS:
    return c->products;
  case CF_BYTES:
    return c->bytes;
  default:
    return c->reconnections;
  }
}

static void conn_counter(const ldmm_snapshot *s, ldmm_prom_buf *b,
                         const char *name, const char *help, enum conn_field f,
                         enum conn_pick pick) {
  const ldmm_conn_copy *c;
  conn_labels cl;
  size_t i = 0;

  ldmm_prom_family(b, name, "counter", help);
  while ((c = conn_next(s, &i, pick, &cl)) != NULL)
    ldmm_prom_sample_u64(b, name, cl.l, 3, conn_value(c, f));
}

static void render_conns(const ldmm_snapshot *s, const ldmm_queue *q,
                         ldmm_prom_buf *b) {
  const ldmm_conn_copy *c;
  conn_labels cl;
  size_t i;
  unsigned k;

  ldmm_prom_family(b, "ldmd_connection_info", "gauge",
                   "A connection or requester process of the server (1), with "
                   "the class it feeds or receives.");
  for (i = 0; (c = conn_next(s, &i, PICK_ALL, &cl)) != NULL;) {
    cl.l[3] = (ldmm_prom_label){"feed", c->feed};
    ldmm_prom_sample_u64(b, "ldmd_connection_info", cl.l, 4, 1);
  }
  ldmm_prom_family(b, "ldmd_connection_start_time_seconds", "gauge",
                   "When the connection's process started, seconds since the "
                   "epoch.");
  for (i = 0; (c = conn_next(s, &i, PICK_ALL, &cl)) != NULL;)
    ldmm_prom_sample_f(b, "ldmd_connection_start_time_seconds", cl.l, 3,
                       (double)c->start_us / PER_S);
  conn_counter(s, b, "ldmd_connection_products_total",
               "Products inserted (downstream, requester) or sent "
               "(upstream, notifyme) on the connection.",
               CF_PRODUCTS, PICK_ALL);
  conn_counter(s, b, "ldmd_connection_bytes_total",
               "Data bytes of those products.", CF_BYTES, PICK_ALL);
  ldmm_prom_family(b, "ldmd_connection_latency_seconds", "histogram",
                   "Received products: from their creation to their insertion "
                   "here.");
  for (i = 0; (c = conn_next(s, &i, PICK_RECEIVERS, &cl)) != NULL;)
    ldmm_prom_histogram(b, "ldmd_connection_latency_seconds", cl.l, 3,
                        s->bounds_us, c->latency.bucket, LDMM_NBUCKETS,
                        (double)c->latency.sum_us / PER_S, PER_S);
  ldmm_prom_family(b, "ldmd_connection_refused_total", "counter",
                   "Received products not stored, by cause.");
  for (i = 0; (c = conn_next(s, &i, PICK_RECEIVERS, &cl)) != NULL;)
    for (k = 0; k < LDMM_NCAUSES; k++) {
      cl.l[3] = (ldmm_prom_label){"cause", ldmm_cause_name((enum ldmm_cause)k)};
      ldmm_prom_sample_u64(b, "ldmd_connection_refused_total", cl.l, 4,
                           c->refused[k]);
    }
  ldmm_prom_family(
      b, "ldmd_connection_lag_seconds", "gauge",
      "Feeders: how far behind the queue's newest product the last "
      "product looked at was inserted.");
  for (i = 0; (c = conn_next(s, &i, PICK_ALL, &cl)) != NULL;) {
    double lag = ldmm_lag_seconds(c, q);

    if (lag >= 0)
      ldmm_prom_sample_f(b, "ldmd_connection_lag_seconds", cl.l, 3, lag);
  }
  conn_counter(s, b, "ldmd_connection_reconnections_total",
               "Requesters: connections to the upstream after the first.",
               CF_RECONNECTIONS, PICK_REQUESTERS);
}

static void render_feeds(const ldmm_snapshot *s, ldmm_prom_buf *b) {
  char name[LDMM_NFEEDS][32];
  bool seen[LDMM_NFEEDS];
  unsigned i, k;

  for (i = 0; i < LDMM_NFEEDS; i++) {
    ldmm_feed_name(i, name[i], sizeof name[i]);
    seen[i] = feed_seen(&s->feeds[i]);
  }
  ldmm_prom_family(b, "ldmd_feed_products_total", "counter",
                   "Products received and inserted, by feedtype.");
  for (i = 0; i < LDMM_NFEEDS; i++)
    if (seen[i])
      ldmm_prom_sample_u64(b, "ldmd_feed_products_total",
                           &(ldmm_prom_label){"feed", name[i]}, 1,
                           s->feeds[i].products);
  ldmm_prom_family(b, "ldmd_feed_bytes_total", "counter",
                   "Data bytes of those products, by feedtype.");
  for (i = 0; i < LDMM_NFEEDS; i++)
    if (seen[i])
      ldmm_prom_sample_u64(b, "ldmd_feed_bytes_total",
                           &(ldmm_prom_label){"feed", name[i]}, 1,
                           s->feeds[i].bytes);
  ldmm_prom_family(b, "ldmd_feed_latency_seconds", "histogram",
                   "Received products: from their creation to their insertion "
                   "here, by feedtype.");
  for (i = 0; i < LDMM_NFEEDS; i++)
    if (seen[i])
      ldmm_prom_histogram(b, "ldmd_feed_latency_seconds",
                          &(ldmm_prom_label){"feed", name[i]}, 1, s->bounds_us,
                          s->feeds[i].latency.bucket, LDMM_NBUCKETS,
                          (double)s->feeds[i].latency.sum_us / PER_S, PER_S);
  ldmm_prom_family(b, "ldmd_feed_refused_total", "counter",
                   "Received products not stored, by feedtype and cause.");
  for (i = 0; i < LDMM_NFEEDS; i++)
    if (seen[i])
      for (k = 0; k < LDMM_NCAUSES; k++) {
        ldmm_prom_label l[2] = {{"feed", name[i]},
                                {"cause", ldmm_cause_name((enum ldmm_cause)k)}};

        ldmm_prom_sample_u64(b, "ldmd_feed_refused_total", l, 2,
                             s->feeds[i].refused[k]);
      }
}

/* The ingesters (ingester.h): per process, labels pid and channel; per
 * receiver, receiver too; products by feedtype, feed too. */
enum ing_field { I_FRAMES, I_MISSED, I_BYTES, I_FULLFIFO, I_DUP, I_FAILED };

static uint64_t ing_value(const ldmm_ingester_copy *g, enum ing_field f) {
  switch (f) {
  case I_FRAMES:
    return g->frames;
  case I_MISSED:
    return g->missed;
  case I_BYTES:
    return g->bytes;
  case I_FULLFIFO:
    return g->fullfifo;
  case I_DUP:
    return g->duplicates;
  default:
    return g->failed;
  }
}

enum rx_field { R_DGRAMS, R_BYTES, R_QMAX, R_RCVBUF, R_DROPS };

static uint64_t rx_value(const ldmm_rx_copy *r, enum rx_field f) {
  switch (f) {
  case R_DGRAMS:
    return r->datagrams;
  case R_BYTES:
    return r->bytes;
  case R_QMAX:
    return r->queue_max;
  case R_RCVBUF:
    return r->rcvbuf;
  default:
    return r->drops;
  }
}

static void render_ingesters(const ldmm_snapshot *s, ldmm_prom_buf *b) {
  static const struct {
    const char *name, *help;
  } ing[] = {
      {"ldmd_noaaport_frames_total", "Frames received (gap detection)."},
      {"ldmd_noaaport_missed_frames_total", "Frames missed (gaps)."},
      {"ldmd_noaaport_bytes_total", "Bytes read from the input."},
      {"ldmd_noaaport_fifo_full_total",
       "Times the reader waited for room in the FIFO."},
      {"ldmd_noaaport_duplicates_total", "Products already in the queue."},
      {"ldmd_noaaport_failed_total", "Products not inserted, another reason."},
  };
  static const struct {
    const char *name, *type, *help;
  } rx[] = {
      {"ldmd_noaaport_receiver_datagrams_total", "counter",
       "Datagrams read from a receiver's socket."},
      {"ldmd_noaaport_receiver_bytes_total", "counter",
       "Bytes of those datagrams."},
      {"ldmd_noaaport_receiver_queue_max_bytes", "gauge",
       "Most bytes the socket held queued (the kernel's accounting)."},
      {"ldmd_noaaport_receiver_buffer_bytes", "gauge",
       "The socket's receive buffer (same units): queued bytes reaching it "
       "are datagrams dropped."},
      {"ldmd_noaaport_receiver_dropped_total", "counter",
       "Datagrams the kernel dropped, the socket's buffer full."},
  };
  char pid[LDMM_NINGESTERS][24];
  size_t i, k, r;

  if (s->ningesters == 0)
    return;
  for (i = 0; i < s->ningesters; i++)
    snprintf(pid[i], sizeof pid[i], "%ld", (long)s->ingesters[i].pid);
  ldmm_prom_family(b, "ldmd_noaaport_start_time_seconds", "gauge",
                   "When the ingester started, seconds since the epoch.");
  for (i = 0; i < s->ningesters; i++) {
    ldmm_prom_label l[2] = {{"pid", pid[i]},
                            {"channel", s->ingesters[i].channel}};
    ldmm_prom_sample_f(b, "ldmd_noaaport_start_time_seconds", l, 2,
                       (double)s->ingesters[i].start_us / PER_S);
  }
  for (k = 0; k < sizeof ing / sizeof ing[0]; k++) {
    ldmm_prom_family(b, ing[k].name, "counter", ing[k].help);
    for (i = 0; i < s->ningesters; i++) {
      ldmm_prom_label l[2] = {{"pid", pid[i]},
                              {"channel", s->ingesters[i].channel}};
      ldmm_prom_sample_u64(b, ing[k].name, l, 2,
                           ing_value(&s->ingesters[i], (enum ing_field)k));
    }
  }
  ldmm_prom_family(b, "ldmd_noaaport_products_total", "counter",
                   "Products inserted, by feedtype.");
  for (i = 0; i < s->ningesters; i++)
    for (k = 0; k < LDMM_NFEEDS; k++) {
      char name[32];

      if (s->ingesters[i].inserted[k] == 0)
        continue;
      ldmm_feed_name((unsigned)k, name, sizeof name);
      ldmm_prom_label l[3] = {{"pid", pid[i]},
                              {"channel", s->ingesters[i].channel},
                              {"feed", name}};
      ldmm_prom_sample_u64(b, "ldmd_noaaport_products_total", l, 3,
                           s->ingesters[i].inserted[k]);
    }
  for (k = 0; k < sizeof rx / sizeof rx[0]; k++) {
    ldmm_prom_family(b, rx[k].name, rx[k].type, rx[k].help);
    for (i = 0; i < s->ningesters; i++)
      for (r = 0; r < s->ingesters[i].nrx; r++) {
        ldmm_prom_label l[3] = {{"pid", pid[i]},
                                {"channel", s->ingesters[i].channel},
                                {"receiver", s->ingesters[i].rx[r].name}};
        ldmm_prom_sample_u64(
            b, rx[k].name, l, 3,
            rx_value(&s->ingesters[i].rx[r], (enum rx_field)k));
      }
  }
}

static void gauge(ldmm_prom_buf *b, const char *name, const char *help,
                  double v) {
  ldmm_prom_family(b, name, "gauge", help);
  ldmm_prom_sample_f(b, name, NULL, 0, v);
}

static void render_queue(const ldmm_queue *q, ldmm_prom_buf *b) {
  const pq_stats *st = &q->st;
  bool empty = st->ps_nprods == 0;

  ldmm_prom_family(
      b, "ldmd_queue_up", "gauge",
      "1 if the queue's statistics could be read for this scrape.");
  ldmm_prom_sample_u64(b, "ldmd_queue_up", NULL, 0, q->ok ? 1 : 0);
  if (!q->ok)
    return;
  gauge(b, "ldmd_queue_products", "Products in the queue.",
        (double)st->ps_nprods);
  gauge(b, "ldmd_queue_reserved", "Reservations being filled.",
        (double)st->ps_nreserved);
  gauge(b, "ldmd_queue_used_bytes",
        "Bytes of the data area used by products and reservations.",
        (double)st->ps_nbytes);
  gauge(b, "ldmd_queue_capacity_bytes", "Bytes of the data area.",
        (double)st->ps_data_size);
  gauge(b, "ldmd_queue_used_slots", "Product slots in use.",
        (double)(st->ps_slots - st->ps_nempty));
  gauge(b, "ldmd_queue_capacity_slots", "Product slots.", (double)st->ps_slots);
  gauge(b, "ldmd_queue_oldest_age_seconds",
        "Age of the oldest product (since its insertion); NaN when empty.",
        empty ? (double)NAN : st->ps_age_oldest);
  gauge(b, "ldmd_queue_newest_age_seconds",
        "Age of the newest product (since its insertion); NaN when empty.",
        empty ? (double)NAN : st->ps_age_youngest);
  gauge(b, "ldmd_queue_min_virtual_residence_seconds",
        "Minimum virtual residence time: the least time a product evicted "
        "for room had spent in the queue; NaN before any eviction.",
        st->ps_mvrt_us < 0 ? (double)NAN : (double)st->ps_mvrt_us / PER_S);
  ldmm_prom_family(b, "ldmd_queue_evictions_total", "counter",
                   "Products evicted for room since the queue was made.");
  ldmm_prom_sample_u64(b, "ldmd_queue_evictions_total", NULL, 0,
                       st->ps_evicted);
  if (q->held_ok)
    gauge(b, "ldmd_queue_held_products",
          "Products readers hold now (writers cannot evict them).",
          (double)q->held);
}

void ldmm_render_prom(const ldmm_snapshot *s, const ldmm_queue *q,
                      ldmm_prom_buf *b) {
  ldmm_prom_label info[2] = {{"version", s->version}, {"queue", s->queue_path}};

  ldmm_prom_family(b, "ldmd_info", "gauge",
                   "The server (1): version and queue.");
  ldmm_prom_sample_u64(b, "ldmd_info", info, 2, 1);
  gauge(b, "ldmd_start_time_seconds",
        "When the server started, seconds since the epoch.",
        (double)s->start_us / PER_S);
  ldmm_prom_family(b, "ldmd_untracked_processes_total", "counter",
                   "Connection and requester processes started with every slot "
                   "of the metrics file taken (their figures are not kept).");
  ldmm_prom_sample_u64(b, "ldmd_untracked_processes_total", NULL, 0,
                       s->no_slot);
  render_feeds(s, b);
  render_conns(s, q, b);
  render_ingesters(s, b);
  render_queue(q, b);
}

/* ---------------------------------------------------------------------- */
/* JSON                                                                   */
/* ---------------------------------------------------------------------- */

static void json_string(ldmm_prom_buf *b, const char *s) {
  ldmm_prom_printf(b, "\"");
  for (; *s != '\0'; s++) {
    unsigned char ch = (unsigned char)*s;

    if (ch == '"' || ch == '\\')
      ldmm_prom_printf(b, "\\%c", ch);
    else if (ch < 0x20)
      ldmm_prom_printf(b, "\\u%04x", ch);
    else
      ldmm_prom_printf(b, "%c", ch);
  }
  ldmm_prom_printf(b, "\"");
}

/* A number, or null when it is not finite (JSON has no NaN). */
static void json_number(ldmm_prom_buf *b, double v) {
  if (v != v || v > 1e300 || v < -1e300)
    ldmm_prom_printf(b, "null");
  else
    ldmm_prom_printf(b, "%.6f", v);
}

static void json_hist(ldmm_prom_buf *b, const ldmm_hist_copy *h,
                      const uint64_t *bounds) {
  unsigned i;
  uint64_t total = 0;

  ldmm_prom_printf(
      b, "{\"count\":%llu,\"sum_seconds\":", (unsigned long long)h->count);
  json_number(b, (double)h->sum_us / PER_S);
  ldmm_prom_printf(b, ",\"buckets\":[");
  for (i = 0; i < LDMM_NBUCKETS; i++) {
    total += h->bucket[i];
    ldmm_prom_printf(b, "%s{\"le\":", i > 0 ? "," : "");
    if (i == LDMM_NBUCKETS - 1)
      ldmm_prom_printf(b, "null");
    else
      json_number(b, (double)bounds[i] / PER_S);
    ldmm_prom_printf(b, ",\"count\":%llu}", (unsigned long long)total);
  }
  ldmm_prom_printf(b, "]}");
}

static void json_refused(ldmm_prom_buf *b, const uint64_t *refused) {
  unsigned k;

  ldmm_prom_printf(b, "{");
  for (k = 0; k < LDMM_NCAUSES; k++)
    ldmm_prom_printf(b, "%s\"%s\":%llu", k > 0 ? "," : "",
                     ldmm_cause_name((enum ldmm_cause)k),
                     (unsigned long long)refused[k]);
  ldmm_prom_printf(b, "}");
}

/* The ingesters' objects (docs/metrics.md, §6). */
static void json_ingesters(const ldmm_snapshot *s, ldmm_prom_buf *b) {
  size_t i, k;

  ldmm_prom_printf(b, ",\"ingesters\":[");
  for (i = 0; i < s->ningesters; i++) {
    const ldmm_ingester_copy *g = &s->ingesters[i];
    bool first = true;

    ldmm_prom_printf(b, "%s{\"pid\":%ld,\"channel\":", i ? "," : "",
                     (long)g->pid);
    json_string(b, g->channel);
    ldmm_prom_printf(b, ",\"start_time\":");
    json_number(b, (double)g->start_us / PER_S);
    ldmm_prom_printf(
        b,
        ",\"frames\":%llu,\"missed_frames\":%llu,\"bytes\":%llu,"
        "\"fifo_full\":%llu,\"products\":%llu,\"duplicates\":%llu,"
        "\"failed\":%llu,\"inserted\":{",
        (unsigned long long)g->frames, (unsigned long long)g->missed,
        (unsigned long long)g->bytes, (unsigned long long)g->fullfifo,
        (unsigned long long)g->products, (unsigned long long)g->duplicates,
        (unsigned long long)g->failed);
    for (k = 0; k < LDMM_NFEEDS; k++) {
      char name[32];

      if (g->inserted[k] == 0)
        continue;
      ldmm_feed_name((unsigned)k, name, sizeof name);
      ldmm_prom_printf(b, "%s", first ? "" : ",");
      first = false;
      json_string(b, name);
      ldmm_prom_printf(b, ":%llu", (unsigned long long)g->inserted[k]);
    }
    ldmm_prom_printf(b, "},\"receivers\":[");
    for (k = 0; k < g->nrx; k++) {
      const ldmm_rx_copy *r = &g->rx[k];

      ldmm_prom_printf(b, "%s{\"name\":", k ? "," : "");
      json_string(b, r->name);
      ldmm_prom_printf(
          b,
          ",\"datagrams\":%llu,\"bytes\":%llu,"
          "\"queue_max_bytes\":%llu,\"buffer_bytes\":%llu,"
          "\"dropped\":%llu}",
          (unsigned long long)r->datagrams, (unsigned long long)r->bytes,
          (unsigned long long)r->queue_max, (unsigned long long)r->rcvbuf,
          (unsigned long long)r->drops);
    }
    ldmm_prom_printf(b, "]}");
  }
  ldmm_prom_printf(b, "]");
}

void ldmm_render_json(const ldmm_snapshot *s, const ldmm_queue *q,
                      ldmm_prom_buf *b) {
  const pq_stats *st = &q->st;
  bool first = true;
  size_t i;
  unsigned f;

  ldmm_prom_printf(b, "{\"version\":");
  json_string(b, s->version);
  ldmm_prom_printf(b, ",\"pid\":%ld,\"queue_path\":", (long)s->pid);
  json_string(b, s->queue_path);
  ldmm_prom_printf(b, ",\"start_time\":");
  json_number(b, (double)s->start_us / PER_S);
  ldmm_prom_printf(b, ",\"feeds\":[");
  for (f = 0; f < LDMM_NFEEDS; f++) {
    char name[32];

    if (!feed_seen(&s->feeds[f]))
      continue;
    ldmm_feed_name(f, name, sizeof name);
    ldmm_prom_printf(b, "%s{\"feed\":", first ? "" : ",");
    first = false;
    json_string(b, name);
    ldmm_prom_printf(b, ",\"products\":%llu,\"bytes\":%llu,\"refused\":",
                     (unsigned long long)s->feeds[f].products,
                     (unsigned long long)s->feeds[f].bytes);
    json_refused(b, s->feeds[f].refused);
    ldmm_prom_printf(b, ",\"latency\":");
    json_hist(b, &s->feeds[f].latency, s->bounds_us);
    ldmm_prom_printf(b, "}");
  }
  ldmm_prom_printf(b, "],\"connections\":[");
  for (i = 0; i < s->nconns; i++) {
    const ldmm_conn_copy *c = &s->conns[i];

    ldmm_prom_printf(b,
                     "%s{\"pid\":%ld,\"kind\":\"%s\",\"peer\":", i ? "," : "",
                     (long)c->pid, ldmm_kind_name(c->kind));
    json_string(b, c->peer);
    ldmm_prom_printf(b, ",\"feed\":");
    json_string(b, c->feed);
    ldmm_prom_printf(b, ",\"start_time\":");
    json_number(b, (double)c->start_us / PER_S);
    ldmm_prom_printf(b,
                     ",\"products\":%llu,\"bytes\":%llu,\"reconnections\":%llu,"
                     "\"lag_seconds\":",
                     (unsigned long long)c->products,
                     (unsigned long long)c->bytes,
                     (unsigned long long)c->reconnections);
    if (ldmm_lag_seconds(c, q) < 0)
      ldmm_prom_printf(b, "null");
    else
      json_number(b, ldmm_lag_seconds(c, q));
    ldmm_prom_printf(b, ",\"refused\":");
    json_refused(b, c->refused);
    ldmm_prom_printf(b, ",\"latency\":");
    json_hist(b, &c->latency, s->bounds_us);
    ldmm_prom_printf(b, "}");
  }
  ldmm_prom_printf(b, "]");
  json_ingesters(s, b);
  ldmm_prom_printf(b, ",\"queue\":");
  if (!q->ok) {
    ldmm_prom_printf(b, "null}\n");
    return;
  }
  ldmm_prom_printf(
      b,
      "{\"products\":%llu,\"used_bytes\":%llu,\"capacity_bytes\":%llu,"
      "\"used_slots\":%llu,\"capacity_slots\":%llu,\"evictions\":%llu,"
      "\"oldest_age_seconds\":",
      (unsigned long long)st->ps_nprods, (unsigned long long)st->ps_nbytes,
      (unsigned long long)st->ps_data_size,
      (unsigned long long)(st->ps_slots - st->ps_nempty),
      (unsigned long long)st->ps_slots, (unsigned long long)st->ps_evicted);
  json_number(b, st->ps_nprods == 0 ? (double)NAN : st->ps_age_oldest);
  ldmm_prom_printf(b, ",\"min_virtual_residence_seconds\":");
  json_number(b, st->ps_mvrt_us < 0 ? (double)NAN
                                    : (double)st->ps_mvrt_us / PER_S);
  ldmm_prom_printf(b, ",\"held_products\":");
  if (q->held_ok)
    ldmm_prom_printf(b, "%llu", (unsigned long long)q->held);
  else
    ldmm_prom_printf(b, "null");
  ldmm_prom_printf(b, "}}\n");
}
