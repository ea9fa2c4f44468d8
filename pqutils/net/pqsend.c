/*
 * pqsend - send what the queue holds to a remote LDM, as LDM's pqsend
 * does: HIYA(offer {now - offset, TS_ENDT, {feedtype, pattern}}), then
 * every product of the queue that matches the offer and that the server
 * wants (all, or what a RECLASS answer accepts), oldest first, each with
 * HEREIS, or COMINGSOON and BLKDATA when larger than max_hereis (ldmpush.c,
 * which ldmsend and rtstats use too); at the end of the queue a NULLPROC,
 * whose answer confirms everything sent before it, then a wait for more
 * (-i interval; 0: one pass, then exit).
 *
 * Each product is copied out of the queue (into a buffer kept for the
 * next, as large as the largest product sent) and sent with no queue lock
 * held, so a slow server never keeps a product from being evicted.
 *
 * Nothing is lost on a broken connection: the products sent since the
 * last confirmation (NULLPROC answered, at the end of the queue and after
 * every FLUSH_PRODUCTS products or FLUSH_BYTES bytes) are sent again after
 * the reconnection, from just after the last product confirmed; the
 * server drops those it already has by their signatures (LDM's pqsend
 * starts again from now - offset instead).  A failed connection is retried
 * after the RPC timeout; after -T seconds without a session pqsend gives
 * up (exit 4), where LDM's pqsend counts -T from its start and only for
 * timeouts.
 *
 * Log ident: the remote host, as LDM's.  Statistics (LDM's lines) at exit
 * and on SIGUSR1.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ldmd/proto/ldm6_text.h"
#include "ldmd/site/log.h"
#include "pqutils/common/cli.h"
#include "pqutils/net/ldmclient.h"
#include "pqutils/net/ldmpush.h"

/* LDM's exit statuses (exitStatus.h). */
enum {
  EXIT_OK = 0,
  EXIT_CONN_TIMEO = 1,
  EXIT_PQ = 2,
  EXIT_SYSTEM = 3,
  EXIT_SESS_TIMEO = 4,
  EXIT_CONN_ABORT = 5,
  EXIT_USAGE = 6,
  EXIT_INTERRUPTED = 7,
};

#define DEFAULT_TIMEO 25
#define DEFAULT_INTERVAL 15
#define DEFAULT_TOTAL 3600
#define FLUSH_PRODUCTS 256 /* confirm at least this often */
#define FLUSH_BYTES ((size_t)64 << 20)
#define KEEPALIVE_S 30.0 /* a NULLPROC when idle this long */

static const char usage_text[] =
    "usage: pqsend [options]\n"
    "options:\n"
    "  -h host[:port] LDM to send to (default localhost, or the name pqsend\n"
    "                 is run under); IPv6 as [addr]:port\n"
    "  -P port        port when -h gives none (default: the registry's\n"
    "                 /server/port, else 388)\n"
    "  -S             speak TLS 1.3 and verify the server's certificate\n"
    "  -f feedtype    feedtype expression of the products (default ANY)\n"
    "  -p pattern     ERE their identifiers must match (default \".*\")\n"
    "  -q queue       queue (default: the registry's /queue/path)\n"
    "  -o offset      send what was inserted in the last offset seconds\n"
    "                 (default: -T; with -d, the whole queue)\n"
    "  -T timeout     give up after this many seconds without a session\n"
    "                 (default 3600); -o may not exceed it without -d\n"
    "  -d             decouple -o from -T\n"
    "  -t timeout     seconds for each answer (default 25)\n"
    "  -i interval    wait up to this many seconds for more at the end of\n"
    "                 the queue (default 15); 0: one pass, then exit\n"
    "  -l dest        log to dest: \"\" syslog, \"-\" stderr, or a file\n"
    "  -v             log each product sent\n"
    "  -x             debug: also log signatures\n"
    "exit: 0 done (-i 0), 2 queue error, 3 system error, 4 no session\n"
    "      within -T, 6 bad usage, 7 interrupted\n";

struct stats {
  pq_timestamp start;
  unsigned long nprods, nconnects, ndisco;
  double downtime, last_downtime;
  pq_timestamp last_disco;
  double min_latency, max_latency;
};

struct pqsend {
  struct cli cli;
  struct ldmc_peer peer;
  uint32_t feedtype;
  const char *pattern;
  bool have_offset, decoupled;
  uint64_t offset;
  int timeo_s, total_s;
  uint64_t interval;

  pq_t *pq;
  pq_class cls;       /* what is offered, compiled */
  uint64_t confirmed; /* insertion time of the last product confirmed */
  uint64_t sent;      /* ... of the last product sent or passed over */
  unsigned long unconfirmed;
  size_t unconfirmed_bytes;
  double last_call; /* cli_monotonic() of the last answered call */

  /* the product being sent, copied out of the queue */
  pq_prod_info info;
  uint8_t *buf;
  size_t cap;
  bool copy_failed;
  bool got;        /* take() was called */
  double alive_at; /* cli_monotonic() when the last session ended (0: none) */

  struct stats st;
};

/* ---- statistics: LDM's lines ---- */

static void ts_text(pq_timestamp t, char *buf, size_t len) {
  time_t s = (time_t)t.sec;
  struct tm tm;

  if (gmtime_r(&s, &tm) == NULL || strftime(buf, len, "%Y%m%d%H%M%S", &tm) == 0)
    snprintf(buf, len, "%lld", (long long)t.sec);
  else
    snprintf(buf + strlen(buf), len - strlen(buf), ".%03d", t.usec / 1000);
}

static void dump_stats(const struct stats *st) {
  char t[40];

  ts_text(st->start, t, sizeof t);
  log_notice("> Up since:          %s", t);
  if (st->nconnects == 0) {
    log_notice("> Never connected");
    return;
  }
  ts_text(st->last_disco, t, sizeof t);
  if (st->last_downtime != 0.)
    log_notice(">  last disconnect:  %s for %10.3f seconds", t,
               st->last_downtime);
  else
    log_notice(">  last disconnect:  %s", t);
  if (st->nprods > 0) {
    log_notice(">     nprods min_latency max_latency");
    log_notice("> %10lu  %10.3f  %10.3f", st->nprods, st->min_latency,
               st->max_latency);
  } else {
    log_notice(">     nprods");
    log_notice("> %10lu", st->nprods);
  }
  log_notice(">  nconnects      ndisco  secs_disco");
  log_notice("> %10lu  %10lu  %10.3f", st->nconnects, st->ndisco, st->downtime);
}

static double ts_diff(pq_timestamp a, pq_timestamp b) {
  return (double)(a.sec - b.sec) + (a.usec - b.usec) / 1e6;
}

/* ---- the queue ---- */

/* Copy the product out of the queue (pq_next()'s callback). */
static int take(const pq_prod_info *info, const void *data,
                const pq_place *place, void *arg) {
  struct pqsend *s = arg;

  s->got = true;
  s->sent = place->pp_inserted;
  s->info = *info;
  if (info->size > s->cap) {
    uint8_t *p = realloc(s->buf, (size_t)info->size);

    if (p == NULL) {
      s->copy_failed = true;
      return 0;
    }
    s->buf = p;
    s->cap = (size_t)info->size;
  }
  s->copy_failed = false;
  if (info->size > 0)
    memcpy(s->buf, data, (size_t)info->size);
  return 0; /* the cursor moves past it */
}

/* ---- a session ---- */

enum sess { SESS_DONE, SESS_STOP, SESS_TIMEDOUT, SESS_ABORTED, SESS_PQ };

static enum sess call_failed(struct pqsend *s, int rc, const char *err) {
  if (rc == LDMC_STOPPED || cli_stopping()) {
    log_notice("interrupted: %s", err);
    return SESS_STOP;
  }
  log_error("%s", err);
  (void)s;
  return rc == LDM6_IO_TIMEDOUT ? SESS_TIMEDOUT : SESS_ABORTED;
}

/* NULLPROC: everything sent is confirmed. */
static enum sess flush(struct pqsend *s, struct ldmc_push *push) {
  char err[700];
  int rc = ldmc_push_flush(push, err, sizeof err);

  if (rc != LDM6_IO_OK)
    return call_failed(s, rc, err);
  s->confirmed = s->sent;
  s->unconfirmed = 0;
  s->unconfirmed_bytes = 0;
  s->last_call = cli_monotonic();
  return SESS_DONE;
}

/* Send s->info with s->buf.  @return SESS_DONE or a failure. */
static enum sess send_one(struct pqsend *s, struct ldmc_push *push) {
  char err[1000], line[700];
  bool debug = ldm_log_enabled(LDM_LOG_DEBUG);

  pq_prod_info_format(&s->info, debug, line, sizeof line);
  if (!ldmc_push_wanted(push, &s->info)) {
    log_info("%s doesn't want %s", s->peer.name, line);
    return SESS_DONE;
  }
  int rc = ldmc_push_product(push, &s->info, s->buf, err, sizeof err);
  switch (rc) {
  case LDM6_IO_OK: {
    double latency = ts_diff(pq_ts_now(), s->info.arrival);
    log_info("%s", line);
    s->st.nprods++;
    if (latency < s->st.min_latency)
      s->st.min_latency = latency;
    if (latency > s->st.max_latency)
      s->st.max_latency = latency;
    s->unconfirmed++;
    s->unconfirmed_bytes += (size_t)s->info.size;
    return SESS_DONE;
  }
  case LDMC_UNWANTED:
    log_info(" dup: %s", line);
    return SESS_DONE;
  case LDMC_EPRODUCT:
    log_error("%s", err); /* cannot go on the wire: the next may */
    return SESS_DONE;
  default:
    return call_failed(s, rc, err);
  }
}

/* Send the queue's products until its end (then wait for more, or return
 * with -i 0). */
static enum sess send_loop(struct pqsend *s, struct ldmc_push *push) {
  for (;;) {
    if (cli_stopping())
      return SESS_STOP;
    if (cli_stats_requested())
      dump_stats(&s->st);
    s->got = false;
    int rc = pq_next(s->pq, PQ_FORWARD, &s->cls, take, s);
    if (rc == PQ_OK && s->got) {
      enum sess r;

      if (s->copy_failed) {
        log_error("no memory for a product of %llu bytes: not sent: %s",
                  (unsigned long long)s->info.size, s->info.ident);
        continue;
      }
      r = send_one(s, push);
      if (r != SESS_DONE)
        return r;
      if (s->unconfirmed >= FLUSH_PRODUCTS ||
          s->unconfirmed_bytes >= FLUSH_BYTES) {
        r = flush(s, push);
        if (r != SESS_DONE)
          return r;
      }
      continue;
    }
    if (rc == PQ_OK)
      continue; /* products stepped over */
    if (rc == PQ_DAMAGED) {
      log_error("%s", pq_last_error(s->pq)->pe_msg);
      continue;
    }
    if (rc != PQ_END) {
      log_error("pq_next failed: %s", pq_last_error(s->pq)->pe_msg);
      return SESS_PQ;
    }
    log_debug("End of Queue");
    if (s->unconfirmed > 0 || s->interval == 0 ||
        cli_monotonic() - s->last_call >= KEEPALIVE_S) {
      enum sess r = flush(s, push);
      if (r != SESS_DONE)
        return r;
    }
    s->confirmed = s->sent; /* passed over: nothing to resend */
    if (s->interval == 0)
      return SESS_DONE;
    rc = cli_wait_for_products(s->pq, s->interval);
    if (rc != PQ_OK && rc != PQ_TIMEDOUT) {
      log_error("pq_wait failed: %s", pq_strerror(rc));
      return SESS_PQ;
    }
  }
}

static enum sess session(struct pqsend *s) {
  char err[700], text[9000];
  ldm6_prod_class offer;
  struct ldmc_push push;
  enum sess r;

  memset(&offer, 0, sizeof offer);
  offer.from.tv_sec = 0;
  if (s->cls.from.sec > 0 && ldm6_ts_from_pq(s->cls.from, &offer.from) != 0)
    offer.from.tv_sec = 0;
  offer.to.tv_sec = INT32_MAX;
  offer.to.tv_usec = 999999;
  offer.psa_len = 1;
  offer.psa[0].feedtype = s->feedtype;
  snprintf(offer.psa[0].pattern, sizeof offer.psa[0].pattern, "%s",
           s->cls.specs[0].pattern);

  ldm6_io *io =
      ldmc_connect(&s->peer, s->timeo_s * 1000, NULL, err, sizeof err);
  if (io == NULL) {
    if (cli_stopping())
      return SESS_STOP;
    log_error("%s", err);
    return errno == ETIMEDOUT ? SESS_TIMEDOUT : SESS_ABORTED;
  }
  ldmc_watch(io);
  ldmc_push_init(&push, io, &s->peer, s->timeo_s * 1000);
  s->st.nconnects++;
  s->st.last_downtime = ts_diff(pq_ts_now(), s->st.last_disco);
  s->st.downtime += s->st.last_downtime;

  ldm6_class_format(&offer, text, sizeof text);
  log_debug("offering %s", text);
  int rc = ldmc_push_hiya(&push, &offer, err, sizeof err);
  if (rc != LDM6_IO_OK) {
    r = call_failed(s, rc, err);
  } else {
    s->last_call = cli_monotonic();
    if (push.answer == LDM6_RECLASS) {
      ldm6_class_format(&push.accepted, text, sizeof text);
      log_notice("%s accepts only %s", s->peer.name, text);
    } else if (push.answer != LDM6_OK) {
      log_notice("%s wants none of the products offered (DONT_SEND)",
                 s->peer.name);
    }
    pq_cursor_set(s->pq, s->confirmed);
    s->sent = s->confirmed;
    s->unconfirmed = 0;
    s->unconfirmed_bytes = 0;
    r = send_loop(s, &push);
    s->alive_at = cli_monotonic();
  }
  if (r != SESS_DONE && s->unconfirmed > 0)
    log_notice("%lu products sent to %s not confirmed: they will be sent "
               "again",
               s->unconfirmed, s->peer.name);
  s->st.ndisco++;
  s->st.last_disco = pq_ts_now();
  ldmc_watch(NULL);
  ldm6_io_free(io);
  ldmc_push_free(&push);
  return r;
}

/* ---- the command line ---- */

static int parse_args(struct pqsend *s, int argc, char **argv) {
  struct ldmc_opts o = {.host = "localhost", .feedtype = PQ_FT_ANY};
  uint64_t v;
  int opt, rc;

  if (strcmp(s->cli.progname, "pqsend") != 0)
    o.host = s->cli.progname; /* LDM's: run under the remote's name */
  s->pattern = ".*";
  s->timeo_s = DEFAULT_TIMEO;
  s->total_s = DEFAULT_TOTAL;
  s->interval = DEFAULT_INTERVAL;
  while ((rc = cli_next_option(&s->cli, argc, argv, ":h:P:Sf:p:q:o:T:dt:i:l:vx",
                               usage_text, &opt)) == CLI_OPT_OWN) {
    if (ldmc_opts_take(&s->cli, usage_text, opt, optarg, &o) < 0)
      return -1;
    switch (opt) {
    case 'p':
      s->pattern = optarg;
      break;
    case 'd':
      s->decoupled = true;
      break;
    case 'o':
      if (ldmc_opt_uint(&s->cli, usage_text, "offset", optarg, 0, INT32_MAX,
                        &s->offset) != 0)
        return -1;
      s->have_offset = true;
      break;
    case 'T':
      if (ldmc_opt_uint(&s->cli, usage_text, "total timeout", optarg, 1,
                        INT32_MAX / 1000, &v) != 0)
        return -1;
      s->total_s = (int)v;
      break;
    case 't':
      if (ldmc_opt_uint(&s->cli, usage_text, "timeout", optarg, 1, 32767, &v) !=
          0)
        return -1;
      s->timeo_s = (int)v;
      break;
    case 'i':
      if (ldmc_opt_uint(&s->cli, usage_text, "interval", optarg, 0,
                        INT32_MAX / 1000, &s->interval) != 0)
        return -1;
      break;
    }
  }
  if (rc != CLI_OPT_DONE)
    return -1;
  if (optind < argc) {
    cli_usage_error(&s->cli, usage_text, "unexpected argument \"%s\"",
                    argv[optind]);
    return -1;
  }
  if (o.feedtype == PQ_FT_NONE) {
    cli_usage_error(&s->cli, usage_text, "feedtype NONE: nothing to send");
    return -1;
  }
  if (2 * s->timeo_s >= s->total_s) { /* LDM's check and words */
    cli_usage_error(&s->cli, usage_text,
                    "Total timeout %d too small for rpc timeout %d", s->total_s,
                    s->timeo_s);
    return -1;
  }
  if (!s->decoupled && s->have_offset && s->offset > (uint64_t)s->total_s) {
    cli_usage_error(&s->cli, usage_text,
                    "Total timeout %d too small for offset %llu", s->total_s,
                    (unsigned long long)s->offset);
    return -1;
  }
  if (!s->decoupled && !s->have_offset) {
    s->offset = (uint64_t)s->total_s;
    s->have_offset = true;
  }
  s->feedtype = o.feedtype;
  return ldmc_opts_peer(&s->cli, usage_text, &o, &s->peer);
}

int main(int argc, char **argv) {
  static struct pqsend s;
  int status = EXIT_OK;

  cli_init(&s.cli, argv[0]);
  if (parse_args(&s, argc, argv) != 0)
    return EXIT_USAGE;
  pq_timestamp from = PQ_TS_ZERO;
  if (s.have_offset) {
    from = pq_ts_now();
    from.sec -= (int64_t)s.offset;
  }
  if (cli_make_class(&s.cli, &s.cls, from, s.feedtype, s.pattern) != 0) {
    fputs(usage_text, stderr);
    return EXIT_USAGE;
  }
  ldm_log_set_ident(s.peer.host); /* LDM's: the remote names the log */
  cli_signals();
  s.st.start = s.st.last_disco = pq_ts_now();
  s.st.min_latency = 2147483647.;
  log_notice("Starting Up (%d)", (int)getpgrp());

  const char *path = cli_queue_path(&s.cli);
  s.pq = path != NULL ? cli_open_queue(path, PQ_READONLY, NULL) : NULL;
  if (s.pq == NULL) {
    status = EXIT_PQ;
  } else {
    s.confirmed = s.have_offset ? pq_ts_to_us(from) : 0;
    double since = cli_monotonic(); /* of the last session, or the start */
    for (;;) {
      enum sess r = session(&s);

      if (r == SESS_DONE) {
        status = EXIT_OK;
        break;
      }
      if (r == SESS_STOP || cli_stopping()) {
        status = EXIT_INTERRUPTED;
        break;
      }
      if (r == SESS_PQ) {
        status = EXIT_PQ;
        break;
      }
      if (s.alive_at > since)
        since = s.alive_at; /* -T counts from the last session's end */
      if (cli_monotonic() - since >= s.total_s) {
        log_error("Session time-limit reached (%d seconds)", s.total_s);
        status = EXIT_SESS_TIMEO;
        break;
      }
      if (r == SESS_ABORTED) { /* LDM's pause; a timeout took its time */
        double end = cli_monotonic() + s.timeo_s;
        while (!cli_stopping() && cli_monotonic() < end) {
          cli_sleep(end - cli_monotonic());
          if (cli_stats_requested())
            dump_stats(&s.st);
        }
      }
      if (cli_stopping()) {
        status = EXIT_INTERRUPTED;
        break;
      }
    }
    pq_close(s.pq);
  }
  log_notice("Exiting");
  s.st.downtime += s.st.last_downtime;
  dump_stats(&s.st);
  pq_class_free(&s.cls);
  free(s.buf);
  SSL_CTX_free(s.peer.tls);
  return status;
}
