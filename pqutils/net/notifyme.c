/*
 * notifyme - ask an LDM server to tell us about the products it has, as
 * LDM's notifyme does: NOTIFYME(class), and once the server has said OK
 * the connection turns around and the server calls us, one NOTIFICATION
 * (product metadata, no data) per matching product and NULLPROC to flush
 * or to keep the connection alive.  Each notification is logged at INFO in
 * LDM's product format, so -v is needed to see them.
 *
 * The request is re-issued on the same connection with the class a
 * RECLASS answer returns (an empty one means "not allowed").  After a
 * lost connection we reconnect after 30 s, asking from 1 us after the
 * creation time of the last product notified, so a restart resumes where
 * it stopped.
 *
 * Differences from LDM's notifyme, on purpose: NOTIFICATION is a one-way
 * call and is never answered (LDM's notifyme falls through and sends
 * PROC_UNAVAIL for every one, a stray reply its upstream must skip); the
 * port can be chosen (host:port, [v6]:port, -P); a server that cannot be
 * reached, or that refuses us, before any session has started is an error
 * (exit 3 or 2) rather than a reason to retry forever; -t bounds the
 * connection and the NOTIFYME answer, -T the silence of a running session.
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

/* Exit statuses. */
enum {
  EXIT_OK = 0,      /* stopped by SIGINT or SIGTERM */
  EXIT_USAGE = 1,   /* bad command line */
  EXIT_REFUSED = 2, /* the server refused the request */
  EXIT_CONNECT = 3, /* no session could be started */
};

#define DEFAULT_TIMEO 25  /* -t: LDM's default RPC timeout */
#define DEFAULT_TOTAL 300 /* -T: LDM's default total timeout */
#define RETRY_SECONDS 30  /* pause before reconnecting */
#define MAX_RECLASS 8     /* RECLASS answers accepted in a row */

static const char usage_text[] =
    "usage: notifyme [options]\n"
    "options:\n"
    "  -h host[:port] LDM server (default localhost); IPv6 as [addr]:port\n"
    "  -P port        port when -h gives none (default: the registry's\n"
    "                 /server/port, else 388)\n"
    "  -S             speak TLS 1.3 and verify the server's certificate\n"
    "                 (the registry's /tls/ca; shows /tls/cert if set)\n"
    "  -f feedtype    feedtype expression of the products (default ANY)\n"
    "  -p pattern     ERE their identifiers must match (default \".*\")\n"
    "  -o offset      ask from offset seconds before now (default 0)\n"
    "  -O             append each product's origin\n"
    "  -t timeout     seconds to connect and to get NOTIFYME answered, 1 to\n"
    "                 32767 (default 25)\n"
    "  -T timeout     seconds of silence before reconnecting, not below -t\n"
    "                 (default 300)\n"
    "  -l dest        log to dest: \"\" syslog, \"-\" stderr, or a file\n"
    "  -v             log each notification (INFO); needed to see them\n"
    "  -x             debug: also log signatures\n"
    "exit: 0 stopped by a signal, 1 bad usage, 2 refused by the server,\n"
    "      3 no session could be started\n";

/* Outcome of a connection. */
enum session_rc {
  SESS_OK,      /* the request was accepted (internal) */
  SESS_STOP,    /* a signal asked us to stop */
  SESS_RETRY,   /* the session ended; reconnect later */
  SESS_FAILED,  /* no session: connection or protocol failure */
  SESS_REFUSED, /* the server refused the request: give up */
};

struct notifyme {
  struct cli cli;
  struct ldmc_peer peer;
  ldm6_prod_class request; /* what we ask for; from advances */
  bool show_origin;        /* -O */
  int timeo_s;             /* -t */
  int total_s;             /* -T */
  bool had_session;        /* a server has accepted us once */
};

/* LDM's timestamp_incr: one microsecond later. */
static ldm6_timestamp ts_next(ldm6_timestamp t) {
  if (t.tv_usec >= 999999) {
    if (t.tv_sec < INT32_MAX) {
      t.tv_sec++;
      t.tv_usec = 0;
    }
  } else {
    t.tv_usec++;
  }
  return t;
}

static void on_notification(struct notifyme *n, const ldm6_io_msg *m) {
  ldm6_prod_info wire;
  pq_prod_info info;
  size_t used = 0;
  int rc;

  rc = ldm6_decode(LDM6_T_PROD_INFO, m->body, m->body_len, &wire, &used);
  if (rc == 0)
    rc = ldm6_info_to_pq(&wire, &info);
  if (rc != 0) {
    log_warning("ignoring a NOTIFICATION from %s that does not decode: %s",
                n->peer.name, ldm6_strerror(rc));
    return;
  }
  n->request.from = ts_next(wire.arrival);
  cli_log_product("", &info, n->show_origin);
}

/* Answer (or not) one call from the server. */
static int dispatch(struct notifyme *n, ldm6_io *io, const ldm6_io_msg *m) {
  const ldm6_rpc_call *c = &m->hdr.u.call;
  const ldm6_proc_desc *d;

  if (c->prog != LDM6_PROG) {
    log_warning("refusing a call of program %u from %s", (unsigned)c->prog,
                n->peer.name);
    return ldm6_io_reply_error(io, m->hdr.xid, LDM6_RPC_PROG_UNAVAIL);
  }
  if (c->vers != LDM6_VERSION6) {
    log_warning("refusing a version %u call from %s: only version 6 is "
                "served",
                (unsigned)c->vers, n->peer.name);
    return ldm6_io_reply_prog_mismatch(io, m->hdr.xid, LDM6_VERSION6,
                                       LDM6_VERSION6);
  }
  switch (c->proc) {
  case LDM6_NULLPROC:
    log_debug("NULLPROC from %s", n->peer.name);
    return ldm6_io_reply(io, m->hdr.xid, NULL, 0);
  case LDM6_NOTIFICATION:
    on_notification(n, m); /* one-way: never answered */
    return LDM6_IO_OK;
  default:
    d = ldm6_proc_lookup(LDM6_VERSION6, c->proc);
    if (d != NULL && d->oneway) {
      log_warning("ignoring %s from %s: notifyme asked for notifications",
                  d->name, n->peer.name);
      return LDM6_IO_OK;
    }
    log_warning("refusing %s (procedure %u) from %s: not served by notifyme",
                d != NULL ? d->name : "an unknown call", (unsigned)c->proc,
                n->peer.name);
    return ldm6_io_reply_error(io, m->hdr.xid, LDM6_RPC_PROC_UNAVAIL);
  }
}

/* Log a failed transfer: "<what> <peer>: <why>". */
static void log_io_error(const struct notifyme *n, const ldm6_io *io,
                         const char *what, int rc) {
  char why[256];

  ldmc_io_text(io, rc, why, sizeof why);
  log_error("%s %s: %s", what, n->peer.name, why);
}

/* Serve the turned-around connection until it ends.  A stop shuts the
 * socket down (ldmc_watch()), which ends any wait here at once. */
static enum session_rc serve(struct notifyme *n, ldm6_io *io) {
  double last = cli_monotonic();

  for (;;) {
    ldm6_io_msg m;
    double quiet;
    int rc;

    if (cli_stopping())
      return SESS_STOP;
    quiet = cli_monotonic() - last;
    if (quiet >= n->total_s) {
      log_notice("nothing from %s for %d s", n->peer.name, n->total_s);
      return SESS_RETRY;
    }
    rc = ldm6_io_recv(io, (int)((n->total_s - quiet) * 1000) + 1, &m);
    if (rc != LDM6_IO_OK && cli_stopping())
      return SESS_STOP;
    if (rc == LDM6_IO_TIMEDOUT)
      continue;
    if (rc == LDM6_IO_CLOSED) {
      log_notice("%s closed the connection", n->peer.name);
      return SESS_RETRY;
    }
    if (rc != LDM6_IO_OK) {
      log_io_error(n, io, "lost the connection to", rc);
      return SESS_RETRY;
    }
    last = cli_monotonic();
    if (m.hdr.type != LDM6_RPC_CALL) {
      log_debug("ignoring a reply (xid %u) from %s", (unsigned)m.hdr.xid,
                n->peer.name);
      continue;
    }
    rc = dispatch(n, io, &m);
    if (rc != LDM6_IO_OK && cli_stopping())
      return SESS_STOP;
    if (rc != LDM6_IO_OK) {
      log_io_error(n, io, "cannot answer", rc);
      return SESS_RETRY;
    }
  }
}

/* NOTIFYME, following RECLASS answers.  @return SESS_OK or a failure. */
static enum session_rc request(struct notifyme *n, ldm6_io *io) {
  ldm6_prod_class cls;
  ldm6_fornme_reply rep;
  char text[9000];
  int round;

  cls = n->request;
  for (round = 0; round < MAX_RECLASS; round++) {
    char err[600];
    int rc = ldmc_call(io, &n->peer, "NOTIFYME", LDM6_VERSION6, LDM6_NOTIFYME,
                       LDM6_T_PROD_CLASS, &cls, LDM6_T_FORNME_REPLY, &rep,
                       n->timeo_s * 1000, NULL, err, sizeof err);

    if (rc == LDMC_STOPPED)
      return SESS_STOP;
    if (rc == LDMC_DENIED) {
      log_error("%s", err);
      return SESS_REFUSED;
    }
    if (rc == LDM6_IO_EREPLY) {
      log_error("%s", err);
      return n->had_session ? SESS_RETRY : SESS_REFUSED;
    }
    if (rc != LDM6_IO_OK) {
      log_error("%s", err);
      return SESS_FAILED;
    }
    switch (rep.code) {
    case LDM6_OK:
      log_info("%s accepted NOTIFYME (upstream process %u)", n->peer.name,
               (unsigned)rep.u.id);
      return SESS_OK;
    case LDM6_BADPATTERN:
      log_error("%s refused NOTIFYME: bad pattern (BADPATTERN)", n->peer.name);
      return SESS_REFUSED;
    case LDM6_RECLASS:
      if (rep.u.prod_class.psa_len == 0) {
        log_error("%s refused NOTIFYME: none of the request is allowed "
                  "(empty RECLASS)",
                  n->peer.name);
        return SESS_REFUSED;
      }
      ldm6_class_format(&rep.u.prod_class, text, sizeof text);
      log_notice("%s allows only %s: asking for that", n->peer.name, text);
      cls = rep.u.prod_class;
      break;
    default:
      log_error("%s answered NOTIFYME with %s", n->peer.name,
                ldm6_errt_name(rep.code));
      return SESS_FAILED;
    }
  }
  log_error("%s answered RECLASS %d times in a row; giving up", n->peer.name,
            MAX_RECLASS);
  return SESS_FAILED;
}

static enum session_rc session(struct notifyme *n) {
  char err[700];
  ldm6_io *io =
      ldmc_connect(&n->peer, n->timeo_s * 1000, NULL, err, sizeof err);
  enum session_rc rc;

  if (io == NULL && cli_stopping())
    return SESS_STOP;
  if (io == NULL) {
    log_error("%s", err);
    return SESS_FAILED;
  }
  ldmc_watch(io);
  rc = request(n, io);
  if (rc == SESS_OK) {
    n->had_session = true;
    rc = serve(n, io);
  }
  ldmc_watch(NULL);
  ldm6_io_free(io);
  return rc;
}

/* Parse a whole number of seconds in [lo, hi] for option opt. */
static int parse_secs(struct notifyme *n, int opt, const char *arg, uint64_t lo,
                      uint64_t hi, int *out) {
  char what[32];
  uint64_t v;

  snprintf(what, sizeof what, "-%c value", opt);
  if (ldmc_opt_uint(&n->cli, usage_text, what, arg, lo, hi, &v) != 0)
    return -1;
  *out = (int)v;
  return 0;
}

static int parse_args(struct notifyme *n, int argc, char **argv) {
  struct ldmc_opts o = {.host = "localhost", .feedtype = PQ_FT_ANY};
  const char *pattern = ".*";
  int offset = 0;
  pq_class cls;
  int opt, rc;

  n->timeo_s = DEFAULT_TIMEO;
  n->total_s = DEFAULT_TOTAL;
  while ((rc = cli_next_option(&n->cli, argc, argv, ":h:P:f:p:o:Ot:T:Sl:vx",
                               usage_text, &opt)) == CLI_OPT_OWN) {
    if (ldmc_opts_take(&n->cli, usage_text, opt, optarg, &o) < 0)
      return -1;
    switch (opt) { /* the options other clients do not take */
    case 'p':
      pattern = optarg;
      break;
    case 'o':
      if (parse_secs(n, opt, optarg, 0, (uint64_t)time(NULL), &offset) != 0)
        return -1;
      break;
    case 'O':
      n->show_origin = true;
      break;
    case 't':
      if (parse_secs(n, opt, optarg, 1, 32767, &n->timeo_s) != 0)
        return -1;
      break;
    case 'T':
      if (parse_secs(n, opt, optarg, 1, INT32_MAX / 1000, &n->total_s) != 0)
        return -1;
      break;
    }
  }
  if (rc != CLI_OPT_DONE)
    return -1;
  if (optind < argc) {
    cli_usage_error(&n->cli, usage_text, "unexpected argument \"%s\"",
                    argv[optind]);
    return -1;
  }
  if (n->total_s < n->timeo_s) {
    cli_usage_error(&n->cli, usage_text,
                    "-T %d is shorter than the timeout -t %d", n->total_s,
                    n->timeo_s);
    return -1;
  }
  if (ldmc_opts_peer(&n->cli, usage_text, &o, &n->peer) != 0)
    return -1;

  /* LDM's re_vetSpec, done here so that the server gets the pattern used. */
  const char *given = pattern;
  while (strlen(pattern) > 2 && pattern[0] == '.' && pattern[1] == '*')
    pattern += 2;
  if (pattern != given)
    log_notice("adjusting pathological regular expression \"%s\" to \"%s\"",
               given, pattern);
  if (cli_make_class(&n->cli, &cls, PQ_TS_ZERO, o.feedtype, pattern) != 0) {
    fputs(usage_text, stderr);
    return -1;
  }
  pq_class_free(&cls);

  memset(&n->request, 0, sizeof n->request);
  n->request.from.tv_sec = (int32_t)(time(NULL) - offset);
  n->request.to.tv_sec = INT32_MAX;
  n->request.to.tv_usec = 999999;
  n->request.psa_len = 1;
  n->request.psa[0].feedtype = o.feedtype;
  snprintf(n->request.psa[0].pattern, sizeof n->request.psa[0].pattern, "%s",
           pattern);
  return 0;
}

int main(int argc, char **argv) {
  static struct notifyme n;
  char text[9000];
  int status = EXIT_OK;

  cli_init(&n.cli, argv[0]);
  if (parse_args(&n, argc, argv) != 0)
    return EXIT_USAGE;
  cli_signals();
  ldm6_class_format(&n.request, text, sizeof text);
  log_notice("Starting Up: %s: %s", n.peer.name, text); /* LDM's words */
  for (;;) {
    enum session_rc rc = session(&n);

    if (rc == SESS_STOP || cli_stopping())
      break;
    if (rc == SESS_REFUSED) {
      status = EXIT_REFUSED;
      break;
    }
    if (!n.had_session) {
      status = EXIT_CONNECT;
      break;
    }
    log_notice("reconnecting to %s in %d s", n.peer.name, RETRY_SECONDS);
    double end = cli_monotonic() + RETRY_SECONDS;
    while (!cli_stopping() && cli_monotonic() < end) {
      cli_sleep(end - cli_monotonic());
      (void)cli_stats_requested(); /* SIGUSR1 only reopens the log */
    }
    if (cli_stopping())
      break;
  }
  log_notice("Exiting");
  SSL_CTX_free(n.peer.tls);
  return status;
}
