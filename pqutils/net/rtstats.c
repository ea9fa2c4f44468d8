/*
 * rtstats - LDM's statistics reporter: follow the local queue from its end
 * (or from -o seconds back), bin every product by (creation-time hour,
 * feedtype, origin), and about every 60 + 0..30 s send one report product
 * per bin that changed to an LDM server (-h), which files them or passes
 * them on to a collector such as rtstats.unidata.ucar.edu.  As LDM's, the
 * first report does not wait for a gap: it goes as soon as the queue's
 * end is reached with something binned.  The bins, the
 * report line and the schedule are binstats.c's; the push (HIYA, HEREIS
 * or COMINGSOON + BLKDATA, NULLPROC) is ldmpush.c's, as ldmsend's.
 *
 * Each report: feedtype EXP; ident "rtstats-<version>/<myname>/<FEEDTYPE>/
 * <origin>"; origin myname (-H, else the registry's /hostname, else this
 * host's name, cut to 64 characters); creation time now; signature the MD5
 * of the line; sequence numbers 0 to 999, again and again; data one line
 * of 11 fields (pqutils/net/binstats.h).
 *
 * Each report cycle connects, says HIYA({TS_ZERO, TS_ENDT, {EXP, ".*"}}),
 * sends the changed bins the server wants, NULLPROC, and disconnects.  A
 * bin is reported again at the next cycle until a NULLPROC's answer has
 * confirmed a cycle: a server that is down or that refuses us is tried
 * again one gap later, and nothing binned is lost meanwhile (up to the
 * 4000-bin cap).  A cycle with nothing changed makes no connection.
 *
 * Differences from LDM's rtstats, on purpose: the port can be given with
 * the host (host:port, [v6]:port) as for our other clients; no LDM-5
 * fallback (LDM-6 servers only); -o starts at that insertion time without
 * also skipping products created before it (a late product is what
 * rtstats is for); -i 0 reads the queue to its end, sends one report and
 * exits (3 if it was not confirmed); -I, ours, sets the gap between
 * reports (for tests); SIGUSR1 logs every bin's line; the first report
 * waits for something to report, where LDM's first cycle, at its first end
 * of the queue, is an empty one when it starts from the end, and restarts
 * the gap (so its first product is reported 60 s or more after the start).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ldmd/site/log.h"
#include "pqutils/net/binstats.h"
#include "pqutils/common/cli.h"
#include "pqutils/net/ldmclient.h"
#include "pqutils/net/ldmpush.h"

#ifndef RTSTATS_VERSION
#define RTSTATS_VERSION "0.1.0"
#endif

/* Exit statuses. */
enum {
  EXIT_OK = 0,       /* stopped by SIGTERM or SIGINT; -i 0: reported */
  EXIT_USAGE = 1,    /* bad command line */
  EXIT_QUEUE = 2,    /* the queue could not be opened or read */
  EXIT_NOREPORT = 3, /* -i 0: the report was not confirmed */
  EXIT_NOMEM = 4,    /* no memory for the bins */
};

#define DEFAULT_INTERVAL 15 /* -i: LDM's */
#define GAP_BASE 60.0       /* LDM's gap: 60 s ... */
#define GAP_SPREAD 30.0     /* ... + 0..30 s */
#define CONNECT_TIMEOUT_MS (25 * 1000)
#define CALL_TIMEOUT_MS (60 * 1000)
#define SEQNO_CYCLE 1000u

static const char usage_text[] =
    "usage: rtstats [options]\n"
    "options:\n"
    "  -h host[:port] LDM server to send the reports to (default localhost);\n"
    "                 IPv6 as [addr]:port\n"
    "  -P port        port when -h gives none (default: the registry's\n"
    "                 /server/port, else 388)\n"
    "  -H myname      this host's name in the reports (default: the\n"
    "                 registry's /hostname, else the host's name)\n"
    "  -f feedtype    products of this feedtype only (default ANY)\n"
    "  -p pattern     products whose identifier matches this ERE (default .*)\n"
    "  -q queue       queue (default: the registry's /queue/path)\n"
    "  -o offset      start with the products inserted offset seconds ago\n"
    "                 (default: at the end of the queue)\n"
    "  -i interval    at the end of the queue, look again at least every\n"
    "                 interval seconds (default 15); 0: read to the end,\n"
    "                 report once and exit\n"
    "  -I gap         seconds between reports (default 60 + 0..30 at random;\n"
    "                 not LDM's: for tests)\n"
    "  -l dest        log to dest: \"\" syslog, \"-\" stderr, or a file\n"
    "  -v             log each product binned\n"
    "  -x             debug: also log each report line sent\n"
    "exit: 0 stopped by a signal (or -i 0 reported), 1 bad usage, 2 queue\n"
    "      error, 3 -i 0 and the report was not confirmed, 4 no memory\n";

struct rtstats {
  struct cli cli;
  struct ldmc_peer peer;
  char myname[RTS_HOST_MAX + 1];  /* -H or this host's name */
  char origin[PQ_ORIGIN_MAX + 1]; /* of the reports: myname, cut */
  uint32_t feedtype;              /* -f */
  const char *pattern;            /* -p */
  bool have_offset;               /* -o given */
  uint64_t offset;
  uint64_t interval; /* -i */
  double gap;        /* -I, or 0: LDM's 60 + 0..30 s */
  struct rts_bins bins;
  struct rts_sched sched;
  uint32_t seqno; /* of the next report */
};

static double draw_uniform(void *arg) {
  (void)arg;
  return (double)random() / (double)RAND_MAX;
}

/* ---- binning ---- */

static int on_product(const pq_prod_info *info, const void *data,
                      const pq_place *place, void *arg) {
  struct rtstats *r = arg;

  (void)data;
  cli_log_product("", info, true);
  switch (rts_bins_add(&r->bins, info, place->pp_inserted)) {
  case RTS_EVICTED:
    log_warning("more than %d bins: the oldest one with nothing left to "
                "report was dropped (%llu so far)",
                RTS_MAX_BINS, (unsigned long long)r->bins.evicted);
    break;
  case RTS_DROPPED:
    log_warning("more than %d bins, all with figures to report: %s not "
                "binned (%llu products so far)",
                RTS_MAX_BINS, info->ident, (unsigned long long)r->bins.dropped);
    break;
  default:
    break;
  }
  return 0;
}

/* SIGUSR1: every bin's line, at NOTICE. */
static void log_bins(const struct rtstats *r) {
  char line[RTS_LINE_MAX];

  log_notice("%zu bins, %zu with figures to report", r->bins.n,
             rts_bins_changed(&r->bins));
  for (size_t i = 0; i < r->bins.n; i++) {
    int n = rts_format_line(&r->bins.v[i], r->myname, RTSTATS_VERSION, line,
                            sizeof line);

    if (n > 0) {
      line[n - 1] = '\0';
      log_notice("%s", line);
    }
  }
}

/* ---- reporting ---- */

/* The report product of one bin into info, its line into line.  @return
 * 0, or -1 if the bin cannot be put in a line (logged). */
static int make_report(struct rtstats *r, const struct rts_bin *bin,
                       pq_prod_info *info, char line[RTS_LINE_MAX]) {
  int n = rts_format_line(bin, r->myname, RTSTATS_VERSION, line, RTS_LINE_MAX);

  memset(info, 0, sizeof *info);
  if (n < 0 || rts_format_ident(line, RTSTATS_VERSION, r->myname, info->ident,
                                sizeof info->ident) != 0) {
    log_error("cannot make the report of the bin of %s: its line does not "
              "fit",
              bin->origin);
    return -1;
  }
  snprintf(info->origin, sizeof info->origin, "%s", r->origin);
  info->feedtype = PQ_FT_EXP;
  info->arrival = pq_ts_now();
  info->size = (uint64_t)n;
  if (pq_md5(line, (size_t)n, info->signature) != 0) {
    log_error("cannot compute the MD5 of a report: libcrypto failed");
    return -1;
  }
  return 0;
}

/* Log the failure of a report cycle (a notice if a stop caused it). */
static void cycle_failed(const char *err, size_t nchanged) {
  if (cli_stopping())
    log_notice("interrupted: %s", err);
  else
    log_error("%s (%zu reports kept for the next try)", err, nchanged);
}

/* Send every changed bin the server wants on a connected push.  @return
 * 0 (all sent or unwanted), or -1 (logged). */
static int send_bins(struct rtstats *r, struct ldmc_push *push, size_t nchanged,
                     size_t *nsent) {
  char line[RTS_LINE_MAX], err[1000];
  pq_prod_info info;
  size_t nunwanted = 0;

  for (size_t i = 0; i < r->bins.n; i++) {
    const struct rts_bin *bin = &r->bins.v[i];
    int rc;

    if (!bin->changed || make_report(r, bin, &info, line) != 0)
      continue;
    if (!ldmc_push_wanted(push, &info)) {
      nunwanted++;
      continue;
    }
    info.seqno = r->seqno; /* one more for each report offered */
    r->seqno = (r->seqno + 1) % SEQNO_CYCLE;
    rc = ldmc_push_product(push, &info, line, err, sizeof err);
    if (rc == LDM6_IO_OK) {
      (*nsent)++;
      line[info.size - 1] = '\0';
      log_debug("sent %s: %s", info.ident, line);
    } else if (rc == LDMC_UNWANTED) {
      nunwanted++;
    } else if (rc == LDMC_EPRODUCT) {
      log_error("%s", err);
    } else {
      cycle_failed(err, nchanged);
      return -1;
    }
  }
  if (nunwanted > 0)
    log_notice("%s does not want %zu of the reports: not sent", r->peer.name,
               nunwanted);
  return 0;
}

/* One report cycle: connect, HIYA, the changed bins, NULLPROC, disconnect.
 * @return 0 (confirmed, or nothing to report), or -1 (logged; the bins
 * keep their figures for the next cycle). */
static int report(struct rtstats *r) {
  size_t nchanged = rts_bins_changed(&r->bins), nsent = 0;
  ldm6_prod_class offer;
  struct ldmc_push push;
  char err[1000];
  ldm6_io *io;
  int rc, status = -1;

  if (nchanged == 0) {
    rts_sched_idle(&r->sched, cli_monotonic());
    rts_bins_expire(&r->bins, pq_ts_now().sec);
    return 0;
  }
  rts_sched_done(&r->sched, cli_monotonic());
  io = ldmc_connect(&r->peer, CONNECT_TIMEOUT_MS, NULL, err, sizeof err);
  if (io == NULL) {
    cycle_failed(err, nchanged);
    return -1;
  }
  ldmc_watch(io); /* a stop ends every wait on it */
  ldmc_push_init(&push, io, &r->peer, CALL_TIMEOUT_MS);
  memset(&offer, 0, sizeof offer);
  offer.to.tv_sec = INT32_MAX;
  offer.to.tv_usec = 999999;
  offer.psa_len = 1;
  offer.psa[0].feedtype = PQ_FT_EXP;
  snprintf(offer.psa[0].pattern, sizeof offer.psa[0].pattern, ".*");
  rc = ldmc_push_hiya(&push, &offer, err, sizeof err);
  if (rc != LDM6_IO_OK) {
    cycle_failed(err, nchanged);
  } else if (push.answer == LDM6_DONT_SEND) {
    log_notice("%s wants none of the reports (DONT_SEND): %zu not sent",
               r->peer.name, nchanged);
    status = 0;
  } else if (send_bins(r, &push, nchanged, &nsent) == 0) {
    rc = ldmc_push_flush(&push, err, sizeof err);
    if (rc == LDM6_IO_OK) {
      log_info("sent %zu reports to %s", nsent, r->peer.name);
      status = 0;
    } else {
      cycle_failed(err, nchanged);
    }
  }
  ldmc_watch(NULL);
  ldmc_push_free(&push);
  ldm6_io_free(io);
  if (status == 0)
    rts_bins_mark_sent(&r->bins);
  rts_bins_expire(&r->bins, pq_ts_now().sec);
  return status;
}

/* The queue loop: bin what comes, report when due.  @return the exit
 * status. */
static int follow(struct rtstats *r, pq_t *pq, const pq_class *cls) {
  for (;;) {
    int rc;

    if (cli_stats_requested())
      log_bins(r);
    if (cli_stopping())
      return EXIT_OK;
    rc = pq_next(pq, PQ_FORWARD, cls, on_product, r);
    if (rc != PQ_OK && rc != PQ_END) {
      log_error("pq_next failed on %s: %s", pq_path(pq),
                pq_last_error(pq)->pe_msg);
      return EXIT_QUEUE;
    }
    if (rc == PQ_END && r->interval == 0)
      return report(r) == 0 ? EXIT_OK : EXIT_NOREPORT;
    if (rts_sched_due(&r->sched, cli_monotonic(), rc == PQ_END))
      (void)report(r); /* a failure is logged and tried again later */
    if (rc == PQ_OK)
      continue;
    {
      double left_ms = rts_sched_left(&r->sched, cli_monotonic()) * 1000;
      uint64_t wait_ms = r->interval * 1000;

      if (left_ms < (double)wait_ms)
        wait_ms = (uint64_t)left_ms + 1;
      rc = cli_wait_for_products_ms(pq, wait_ms);
      if (rc != PQ_OK) {
        log_error("pq_wait failed on %s: %s", pq_path(pq), pq_strerror(rc));
        return EXIT_QUEUE;
      }
    }
  }
}

/* ---- command line ---- */

/* -H: a name the line can show as one field. */
static int set_myname(struct rtstats *r, const char *arg) {
  if (arg[0] == '\0' || strlen(arg) > RTS_HOST_MAX ||
      strpbrk(arg, " \t\n\r\v\f") != NULL) {
    cli_usage_error(&r->cli, usage_text,
                    "bad name \"%s\" for -H: 1 to %d characters, no blanks "
                    "(the report's fields are separated by blanks)",
                    arg, RTS_HOST_MAX);
    return -1;
  }
  snprintf(r->myname, sizeof r->myname, "%s", arg);
  return 0;
}

static int parse_args(struct rtstats *r, int argc, char **argv) {
  struct ldmc_opts o = {.host = "localhost", .feedtype = PQ_FT_ANY};
  uint64_t v;
  int opt, rc;

  r->pattern = ".*";
  r->interval = DEFAULT_INTERVAL;
  while ((rc = cli_next_option(&r->cli, argc, argv, ":vxl:H:h:P:f:p:q:o:i:I:",
                               usage_text, &opt)) == CLI_OPT_OWN) {
    if (ldmc_opts_take(&r->cli, usage_text, opt, optarg, &o) < 0)
      return -1;
    switch (opt) { /* the options other clients do not take */
    case 'H':
      if (set_myname(r, optarg) != 0)
        return -1;
      break;
    case 'p':
      r->pattern = optarg;
      break;
    case 'o':
      if (ldmc_opt_uint(&r->cli, usage_text, "offset", optarg, 0, INT32_MAX,
                        &r->offset) != 0)
        return -1;
      r->have_offset = true;
      break;
    case 'i':
      if (ldmc_opt_uint(&r->cli, usage_text, "interval", optarg, 0, 86400,
                        &v) != 0)
        return -1;
      r->interval = v;
      break;
    case 'I':
      if (cli_parse_double(&r->cli, "gap", optarg, &r->gap) != 0) {
        fputs(usage_text, stderr);
        return -1;
      }
      if (r->gap < 0.01 || r->gap > 86400) {
        cli_usage_error(&r->cli, usage_text,
                        "bad gap \"%s\": 0.01 to 86400 seconds", optarg);
        return -1;
      }
      break;
    }
  }
  if (rc != CLI_OPT_DONE)
    return -1;
  if (optind < argc) {
    cli_usage_error(&r->cli, usage_text, "unexpected operand \"%s\"",
                    argv[optind]);
    return -1;
  }
  r->feedtype = o.feedtype;
  return ldmc_opts_peer(&r->cli, usage_text, &o, &r->peer);
}

/* Open the queue and put the cursor where reading starts.  NULL (logged)
 * on failure. */
static pq_t *open_queue(struct rtstats *r) {
  const char *path = cli_queue_path(&r->cli);
  pq_t *pq;

  if (path == NULL)
    return NULL;
  pq = cli_open_queue(path, PQ_READONLY, NULL);
  if (pq == NULL)
    return NULL;
  if (r->have_offset) {
    uint64_t now = pq_ts_to_us(pq_ts_now());
    uint64_t back = r->offset * 1000000;

    pq_cursor_set(pq, now > back ? now - back : 0);
  } else if (pq_cursor_newest(pq) != PQ_OK) {
    log_error("cannot go to the end of %s: %s", path,
              pq_last_error(pq)->pe_msg);
    pq_close(pq);
    return NULL;
  }
  if (r->have_offset)
    log_notice("following %s from %llu s ago", path,
               (unsigned long long)r->offset);
  else
    log_notice("following %s from its end", path);
  return pq;
}

int main(int argc, char **argv) {
  static struct rtstats r;
  pq_class cls;
  pq_t *pq;
  int status;

  cli_init(&r.cli, argv[0]);
  if (parse_args(&r, argc, argv) != 0)
    return EXIT_USAGE;
  if (cli_make_class(&r.cli, &cls, PQ_TS_ZERO, r.feedtype, r.pattern) != 0) {
    fputs(usage_text, stderr);
    return EXIT_USAGE;
  }
  if (r.myname[0] == '\0') {
    char name[PQ_ORIGIN_MAX + 1];

    cli_hostname(&r.cli, name);
    snprintf(r.myname, sizeof r.myname, "%s", name);
  }
  snprintf(r.origin, sizeof r.origin, "%.*s", PQ_ORIGIN_MAX, r.myname);
  cli_signals();
  log_notice("Starting Up (%d): reporting as %s to %s", (int)getpgrp(),
             r.myname, r.peer.name);
  if (rts_bins_init(&r.bins, RTS_MAX_BINS) != 0) {
    log_error("cannot allocate %d bins: %s", RTS_MAX_BINS, strerror(errno));
    pq_class_free(&cls);
    return EXIT_NOMEM;
  }
  srandom((unsigned)time(NULL) ^ (unsigned)getpid());
  if (r.gap > 0)
    rts_sched_init(&r.sched, r.gap, 0, NULL, NULL, cli_monotonic());
  else
    rts_sched_init(&r.sched, GAP_BASE, GAP_SPREAD, draw_uniform, NULL,
                   cli_monotonic());
  pq = open_queue(&r);
  status = pq != NULL ? follow(&r, pq, &cls) : EXIT_QUEUE;
  log_notice("Exiting");
  pq_close(pq);
  pq_class_free(&cls);
  rts_bins_free(&r.bins);
  return status;
}
