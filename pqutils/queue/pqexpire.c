/*
 * pqexpire - delete the products created more than -a hours ago, once (-i 0)
 * or every -i seconds, as LDM's (deprecated) pqexpire does, and log LDM's
 * statistics lines at exit and on SIGUSR1.  The queue evicts old products by
 * itself; this is for sites that want a bound on age, not only on space.
 *
 * Each pass first walks the products that the pass will delete, to learn the
 * creation times of the first and last of them for the statistics, then
 * deletes them with pq_expire(), which works in batches so that a large
 * expiry does not stall writers.  A product a reader holds is not deleted:
 * it is counted and left for the next pass (LDM's -w, waiting for it while
 * holding the queue's lock, is accepted and ignored).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ldmd/site/log.h"
#include "pqutils/common/cli.h"

#define DEFAULT_INTERVAL 300
#define DEFAULT_AGE (1.0 + DEFAULT_INTERVAL / 3600.0)

static const char usage_text[] =
    "usage: pqexpire [options]\n"
    "options:\n"
    "  -a age       delete products created more than age hours ago\n"
    "               (default 1.0833)\n"
    "  -i interval  run a pass every interval seconds; 0: one pass\n"
    "               (default 300)\n"
    "  -f feedtype  delete products of this feedtype only (default ANY)\n"
    "  -p pattern   delete products whose identifier matches this ERE\n"
    "               (default .*)\n"
    "  -w           accepted for LDM (held products are skipped)\n"
    "  -q queue     queue (default: the registry's /queue/path)\n"
    "  -l dest      log to dest: \"\" syslog, \"-\" stderr, or a file\n"
    "  -v           log the queue usage after each pass\n"
    "  -x           debug\n"
    "  -h           print this text\n";

struct opts {
  double age_hours;
  uint64_t interval;
  struct cli_select sel; /* -f, -p (no -o) */
};

struct stats {
  pq_timestamp start;
  pq_timestamp first; /* creation time of the oldest product deleted */
  pq_timestamp last;  /* and of the newest */
  uint64_t nprods, nbytes, nheld;
  uint64_t last_reported;
};

/* Learn the creation times of the products a pass will delete. */
struct span {
  pq_timestamp first, last;
  uint64_t n;
};

static int note_span(const pq_prod_info *info, const void *data,
                     const pq_place *place, void *arg) {
  struct span *s = arg;
  (void)data;
  (void)place;
  if (s->n == 0 || pq_ts_cmp(info->arrival, s->first) < 0)
    s->first = info->arrival;
  if (s->n == 0 || pq_ts_cmp(info->arrival, s->last) > 0)
    s->last = info->arrival;
  s->n++;
  return 0;
}

static double hours_between(pq_timestamp a, pq_timestamp b) {
  double s = (double)(b.sec - a.sec) + (double)(b.usec - a.usec) / 1e6;
  return (s < 1 ? 1 : s) / 3600; /* one product: rate over one second */
}

static void queue_usage(pq_t *pq, enum ldm_log_level level) {
  pq_stats st;
  if (pq == NULL || !ldm_log_enabled(level) || pq_stats_get(pq, &st) != PQ_OK)
    return;
  ldm_log(level, "> Queue usage (bytes):%8llu",
          (unsigned long long)st.ps_highwater);
  ldm_log(level, ">          (nregions):%8llu",
          (unsigned long long)st.ps_maxprods);
}

static void dump_stats(pq_t *pq, const struct stats *s) {
  char t[40];
  pq_ts_format(s->start, t, sizeof t);
  log_notice("> Up since:      %s", t);
  queue_usage(pq, LDM_LOG_NOTICE);
  if (s->nprods == 0) {
    log_notice("> nprods deleted 0");
    return;
  }
  double h = hours_between(s->first, s->last);
  log_notice("> nbytes recycle:   %10llu (%10.3f kb/hr)",
             (unsigned long long)s->nbytes, (double)s->nbytes / 1024 / h);
  log_notice("> nprods deleted:   %10llu (%10.3f per hour)",
             (unsigned long long)s->nprods, (double)s->nprods / h);
  pq_ts_format(s->first, t, sizeof t);
  log_notice("> First deleted: %s", t);
  pq_ts_format(s->last, t, sizeof t);
  log_notice("> Last  deleted: %s", t);
}

/* One pass: delete what was created before now - age. */
static int expire_pass(pq_t *pq, const struct opts *o, struct stats *s) {
  pq_timestamp now = pq_ts_now();
  uint64_t age_us = (uint64_t)llround(o->age_hours * 3600e6);
  uint64_t now_us = pq_ts_to_us(now);
  pq_timestamp before = pq_ts_from_us(now_us > age_us ? now_us - age_us : 0);
  pq_class cls;
  char err[256];
  /* The class window is inclusive; pq_expire's cutoff is not: one
   * microsecond less makes them agree. */
  pq_timestamp to =
      pq_ts_from_us(pq_ts_to_us(before) ? pq_ts_to_us(before) - 1 : 0);
  if (pq_class_simple(&cls, PQ_TS_ZERO, to, o->sel.feedtype, o->sel.pattern,
                      err, sizeof err) != 0) {
    log_error("cannot build the product class: %s", err);
    return 1;
  }
  struct span sp = {.n = 0};
  pq_cursor_oldest(pq);
  int rc;
  do
    rc = pq_next(pq, PQ_FORWARD, &cls, note_span, &sp);
  while (rc == PQ_OK && !cli_stopping());
  if (rc != PQ_OK && rc != PQ_END)
    log_warning("pq_next failed: %s", pq_last_error(pq)->pe_msg);
  if (cli_stopping()) { /* stopped in the walk: delete nothing */
    pq_class_free(&cls);
    return 0;
  }
  uint64_t n = 0, bytes = 0, held = 0;
  rc = pq_expire(pq, before, &cls, &n, &bytes, &held);
  pq_class_free(&cls);
  if (rc != PQ_OK) {
    log_error("pq_expire failed: %s", pq_last_error(pq)->pe_msg);
    return 1;
  }
  if (n > 0 && sp.n > 0) {
    if (s->nprods == 0 || pq_ts_cmp(sp.first, s->first) < 0)
      s->first = sp.first;
    if (s->nprods == 0 || pq_ts_cmp(sp.last, s->last) > 0)
      s->last = sp.last;
  }
  s->nprods += n;
  s->nbytes += bytes;
  s->nheld += held;
  log_debug("pass: %llu products (%llu bytes) deleted, %llu held by readers",
            (unsigned long long)n, (unsigned long long)bytes,
            (unsigned long long)held);
  return 0;
}

/* After a pass of the loop: LDM's per-pass lines. */
static void pass_stats(pq_t *pq, struct stats *s) {
  queue_usage(pq, LDM_LOG_INFO);
  if (s->nprods != 0 && s->nprods != s->last_reported) {
    double h = hours_between(s->first, s->last);
    log_info("> Recycled %10.3f kb/hr (%10.3f prods per hour)",
             (double)s->nbytes / 1024 / h, (double)s->nprods / h);
    s->last_reported = s->nprods;
  }
}

static int option(struct cli *c, int ch, const char *arg, void *opts) {
  struct opts *o = opts;
  switch (ch) {
  case 'w':
    return 0;
  case 'a':
    return cli_parse_age_hours(c, usage_text, arg, &o->age_hours);
  case 'i':
    return cli_parse_uint(c, "interval", arg, INT32_MAX, &o->interval);
  default: /* -f, -p */
    return cli_select_option(c, &o->sel, ch, arg);
  }
}

static const struct cli_spec spec = {":hwvxl:p:f:q:a:i:", usage_text, option,
                                     NULL};

int main(int argc, char **argv) {
  struct cli c;
  struct opts o = {.age_hours = DEFAULT_AGE,
                   .interval = DEFAULT_INTERVAL,
                   .sel = CLI_SELECT_ALL};
  int rc = cli_parse(&c, argc, argv, &spec, &o);
  if (rc != CLI_GO_ON)
    return rc;
  pq_class probe; /* refuse a bad pattern before starting */
  if (cli_select_class(&c, &o.sel, &probe) != 0)
    return CLI_EXIT_USAGE;
  pq_class_free(&probe);
  cli_signals();
  struct stats s = {.start = pq_ts_now()};
  log_notice("Starting Up");
  const char *path = cli_queue_path(&c);
  pq_t *pq = path != NULL ? cli_open_queue(path, 0, NULL) : NULL;
  if (pq == NULL)
    return 1;
  int status = 0;
  while (!cli_stopping()) {
    if (cli_stats_requested())
      dump_stats(pq, &s);
    if (expire_pass(pq, &o, &s) != 0) {
      status = 1;
      break;
    }
    if (o.interval == 0)
      break;
    pass_stats(pq, &s);
    double end = cli_monotonic() + (double)o.interval;
    while (!cli_stopping() && cli_monotonic() < end) {
      cli_sleep(end - cli_monotonic());
      if (cli_stats_requested())
        dump_stats(pq, &s);
    }
  }
  log_notice("Exiting");
  dump_stats(pq, &s);
  pq_close(pq);
  return status;
}
