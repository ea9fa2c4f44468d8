/*
 * feedme - ask an LDM server for products and write their data to standard
 * output or a file, as LDM's feedme does: FEEDME(class) of the LDM-5
 * protocol, and once the server has said OK the connection turns around
 * and the server calls us, every call answered (ldm_replyt OK): HEREIS
 * (a product whole), COMINGSOON then BLKDATA packets (a product in pieces
 * of up to 16 KiB), NULLPROC, HIYA.  With -v each product is logged in
 * LDM's format once complete.
 *
 * The request is re-issued on the same connection with the class a
 * RECLASS answer returns (an empty one means "not allowed").  After a lost
 * connection we reconnect after 25 s, asking from 1 us after the creation
 * time of the last product received, so a restart resumes where it
 * stopped.  Connections are ldmclient.c's, as notifyme's.
 *
 * Differences from LDM's feedme, on purpose: HEREIS is served (LDM's
 * feedme refuses it, so the small products of an LDM-5 feed never reach
 * it); a product's data is written only once the product is complete and
 * its pieces agree (signature, sizes), so a connection lost in the middle
 * of a product leaves nothing of it in the output, and the product comes
 * again whole after the reconnection; an optional operand names a file to
 * append to instead of standard output; the port can be chosen; as for
 * our notifyme, a server that cannot be reached, or that refuses us,
 * before any session has started is an error (exit 3 or 2) rather than a
 * reason to retry forever.
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

enum {
  EXIT_OK = 0,      /* stopped by SIGINT or SIGTERM */
  EXIT_USAGE = 1,   /* bad command line */
  EXIT_REFUSED = 2, /* the server refused the request */
  EXIT_CONNECT = 3, /* no session could be started */
  EXIT_OUTPUT = 4,  /* the output could not be written */
};

#define DEFAULT_TIMEO 25  /* -t */
#define DEFAULT_TOTAL 300 /* -T: 12 x the timeout, LDM's */
#define RETRY_SECONDS 25  /* LDM's pause before reconnecting */
#define MAX_RECLASS 8

static const char usage_text[] =
    "usage: feedme [options] [file]\n"
    "options:\n"
    "  -h host[:port] LDM server (default localhost); IPv6 as [addr]:port\n"
    "  -P port        port when -h gives none (default: the registry's\n"
    "                 /server/port, else 388)\n"
    "  -S             speak TLS 1.3 and verify the server's certificate\n"
    "  -f feedtype    feedtype expression of the products (default ANY)\n"
    "  -p pattern     ERE their identifiers must match (default \".*\")\n"
    "  -o offset      ask from offset seconds before now (default 0)\n"
    "  -t timeout     seconds to connect and to get FEEDME answered, 1 to\n"
    "                 32767 (default 25)\n"
    "  -T timeout     seconds of silence before reconnecting, not below -t\n"
    "                 (default 300)\n"
    "  -l dest        log to dest: \"\" syslog, \"-\" stderr, or a file\n"
    "  -v             log each product received (INFO)\n"
    "  -x             debug: also log each call and signatures\n"
    "the data of each product is appended to file (default: standard "
    "output).\n"
    "exit: 0 stopped by a signal, 1 bad usage, 2 refused by the server,\n"
    "      3 no session could be started, 4 the output could not be "
    "written\n";

enum session_rc {
  SESS_OK,
  SESS_STOP,
  SESS_RETRY,
  SESS_FAILED,
  SESS_REFUSED,
  SESS_OUTPUT
};

struct feedme {
  struct cli cli;
  struct ldmc_peer peer;
  ldm6_prod_class request; /* from advances */
  int timeo_s, total_s;
  bool had_session;
  const char *output; /* NULL: standard output */
  int fd;

  /* the product coming in pieces (COMINGSOON, BLKDATA) */
  bool pending;
  ldm6_prod_info info;
  uint8_t *buf;
  size_t have, cap;
};

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

/* Reply to a v5 call: an ldm_replyt OK. */
static int reply_ok(ldm6_io *io, uint32_t xid) {
  ldm6_replyt r;
  uint8_t enc[64];
  size_t len = 0;
  struct iovec iov;

  memset(&r, 0, sizeof r);
  r.code = LDM6_OK;
  if (ldm6_encode(LDM6_T_REPLYT, &r, enc, sizeof enc, &len) != 0)
    return ldm6_io_reply_error(io, xid, LDM6_RPC_SYSTEM_ERR);
  iov.iov_base = enc;
  iov.iov_len = len;
  return ldm6_io_reply(io, xid, &iov, 1);
}

/* A whole product arrived: write its data, log it, ask from after it.
 * @return 0, or -1 if the output failed (logged). */
static int complete(struct feedme *f, const ldm6_prod_info *wire,
                    const void *data, size_t n) {
  pq_prod_info info;

  if (n > 0 && cli_write_all(f->fd, data, n) != 0) {
    if (errno == EINTR && cli_stopping())
      return 0;
    log_error("data write failed: %s: %s",
              f->output != NULL ? f->output : "standard output",
              strerror(errno));
    return -1;
  }
  f->request.from = ts_next(wire->arrival);
  if (ldm6_info_to_pq(wire, &info) == 0)
    cli_log_product("", &info, false);
  return 0;
}

static void drop_pending(struct feedme *f, const char *why) {
  if (!f->pending)
    return;
  log_error("dropping %s (%u of %u bytes received): %s", f->info.ident,
            (unsigned)f->have, (unsigned)f->info.sz, why);
  f->pending = false;
  f->have = 0;
}

/* What a call's handling ends in. */
enum { CALL_OK, CALL_BAD, CALL_OUTPUT };

static int on_hereis(struct feedme *f, const ldm6_io_msg *m) {
  ldm6_product p;
  size_t used = 0;
  int rc = ldm6_decode(LDM6_T_PRODUCT, m->body, m->body_len, &p, &used);

  if (rc != 0) {
    log_error("a HEREIS from %s does not decode: %s", f->peer.name,
              ldm6_strerror(rc));
    return CALL_BAD;
  }
  drop_pending(f, "another product came whole");
  return complete(f, &p.info, p.data, p.info.sz) == 0 ? CALL_OK : CALL_OUTPUT;
}

static int on_comingsoon(struct feedme *f, const ldm6_io_msg *m) {
  ldm6_comingsoon_args a;
  size_t used = 0;
  int rc = ldm6_decode(LDM6_T_COMINGSOON_ARGS, m->body, m->body_len, &a, &used);

  if (rc != 0) {
    log_error("a COMINGSOON from %s does not decode: %s", f->peer.name,
              ldm6_strerror(rc));
    return CALL_BAD;
  }
  drop_pending(f, "another product was announced");
  log_debug("comingsoon5: %s (pktsz %u)", a.info.ident, (unsigned)a.pktsz);
  f->info = a.info;
  f->pending = true;
  f->have = 0;
  if (a.info.sz == 0) { /* nothing will follow */
    f->pending = false;
    return complete(f, &a.info, NULL, 0) == 0 ? CALL_OK : CALL_OUTPUT;
  }
  return CALL_OK;
}

static int on_blkdata(struct feedme *f, const ldm6_io_msg *m) {
  ldm6_datapkt d;
  size_t used = 0;
  int rc = ldm6_decode(LDM6_T_DATAPKT, m->body, m->body_len, &d, &used);

  if (rc != 0) {
    log_error("a BLKDATA from %s does not decode: %s", f->peer.name,
              ldm6_strerror(rc));
    return CALL_BAD;
  }
  log_debug("   blkdata5: %u bytes, packet %u", (unsigned)d.data_len,
            (unsigned)d.pktnum);
  if (!f->pending || memcmp(d.signature, f->info.signature, LDM6_SIGLEN) != 0) {
    log_error("signature mismatch: a BLKDATA from %s for no product "
              "announced",
              f->peer.name);
    return CALL_BAD;
  }
  if (d.data_len > f->info.sz - f->have) {
    drop_pending(f, "more data than announced");
    return CALL_BAD;
  }
  if (f->have + d.data_len > f->cap) {
    size_t cap = f->cap ? f->cap : 65536;
    while (cap < f->have + d.data_len)
      cap *= 2;
    if (cap > f->info.sz)
      cap = f->info.sz;
    uint8_t *p = realloc(f->buf, cap);
    if (p == NULL) {
      drop_pending(f, "no memory for it");
      return CALL_BAD;
    }
    f->buf = p;
    f->cap = cap;
  }
  if (d.data_len > 0)
    memcpy(f->buf + f->have, d.data, d.data_len);
  f->have += d.data_len;
  if (f->have < f->info.sz)
    return CALL_OK;
  f->pending = false;
  return complete(f, &f->info, f->buf, f->have) == 0 ? CALL_OK : CALL_OUTPUT;
}

/* Answer one call from the server.  @return an ldm6_io result, or
 * LDM6_IO_OK with *output set when the output failed. */
static int dispatch(struct feedme *f, ldm6_io *io, const ldm6_io_msg *m,
                    bool *output) {
  const ldm6_rpc_call *c = &m->hdr.u.call;
  int r;

  if (c->prog != LDM6_PROG)
    return ldm6_io_reply_error(io, m->hdr.xid, LDM6_RPC_PROG_UNAVAIL);
  if (c->vers != LDM6_VERSION5) {
    log_warning("refusing a version %u call from %s: feedme asked for "
                "version 5",
                (unsigned)c->vers, f->peer.name);
    return ldm6_io_reply_prog_mismatch(io, m->hdr.xid, LDM6_VERSION5,
                                       LDM6_VERSION5);
  }
  switch (c->proc) {
  case LDM6_NULLPROC:
    log_debug("NULLPROC from %s", f->peer.name);
    return ldm6_io_reply(io, m->hdr.xid, NULL, 0);
  case LDM6_HIYA:
    log_info("hiya5: %s", f->peer.name);
    return reply_ok(io, m->hdr.xid);
  case LDM6_HEREIS:
    r = on_hereis(f, m);
    break;
  case LDM6_COMINGSOON:
    r = on_comingsoon(f, m);
    break;
  case LDM6_BLKDATA:
    r = on_blkdata(f, m);
    break;
  default:
    log_warning("refusing procedure %u from %s: not served by feedme",
                (unsigned)c->proc, f->peer.name);
    return ldm6_io_reply_error(io, m->hdr.xid, LDM6_RPC_PROC_UNAVAIL);
  }
  if (r == CALL_OUTPUT) {
    *output = true;
    return LDM6_IO_OK;
  }
  if (r == CALL_BAD)
    return ldm6_io_reply_error(io, m->hdr.xid, LDM6_RPC_SYSTEM_ERR);
  return reply_ok(io, m->hdr.xid);
}

static void log_io_error(const struct feedme *f, const ldm6_io *io,
                         const char *what, int rc) {
  char why[256];

  ldmc_io_text(io, rc, why, sizeof why);
  log_error("%s %s: %s", what, f->peer.name, why);
}

/* Serve the turned-around connection until it ends. */
static enum session_rc serve(struct feedme *f, ldm6_io *io) {
  double last = cli_monotonic();

  for (;;) {
    ldm6_io_msg m;
    bool output = false;
    double quiet;
    int rc;

    if (cli_stopping())
      return SESS_STOP;
    quiet = cli_monotonic() - last;
    if (quiet >= f->total_s) {
      log_notice("nothing from %s for %d s", f->peer.name, f->total_s);
      return SESS_RETRY;
    }
    rc = ldm6_io_recv(io, (int)((f->total_s - quiet) * 1000) + 1, &m);
    if (rc != LDM6_IO_OK && cli_stopping())
      return SESS_STOP;
    if (rc == LDM6_IO_TIMEDOUT)
      continue;
    if (rc == LDM6_IO_CLOSED) {
      log_notice("%s closed the connection", f->peer.name);
      return SESS_RETRY;
    }
    if (rc != LDM6_IO_OK) {
      log_io_error(f, io, "lost the connection to", rc);
      return SESS_RETRY;
    }
    last = cli_monotonic();
    if (m.hdr.type != LDM6_RPC_CALL)
      continue; /* a stray reply */
    rc = dispatch(f, io, &m, &output);
    if (output)
      return SESS_OUTPUT;
    if (rc != LDM6_IO_OK && cli_stopping())
      return SESS_STOP;
    if (rc != LDM6_IO_OK) {
      log_io_error(f, io, "cannot answer", rc);
      return SESS_RETRY;
    }
  }
}

/* FEEDME (version 5), following RECLASS answers. */
static enum session_rc request(struct feedme *f, ldm6_io *io) {
  ldm6_prod_class cls = f->request;
  ldm6_replyt rep;
  char text[9000];

  for (int round = 0; round < MAX_RECLASS; round++) {
    char err[600];
    int rc = ldmc_call(io, &f->peer, "FEEDME", LDM6_VERSION5, LDM6_FEEDME,
                       LDM6_T_PROD_CLASS, &cls, LDM6_T_REPLYT, &rep,
                       f->timeo_s * 1000, NULL, err, sizeof err);

    if (rc == LDMC_STOPPED)
      return SESS_STOP;
    if (rc == LDMC_DENIED) {
      log_error("%s", err);
      return SESS_REFUSED;
    }
    if (rc == LDM6_IO_EREPLY) {
      log_error("%s", err);
      return f->had_session ? SESS_RETRY : SESS_REFUSED;
    }
    if (rc != LDM6_IO_OK) {
      log_error("%s", err);
      return SESS_FAILED;
    }
    switch (rep.code) {
    case LDM6_OK:
      log_info("%s accepted FEEDME", f->peer.name);
      return SESS_OK;
    case LDM6_BADPATTERN:
      log_error("%s refused FEEDME: bad pattern (BADPATTERN)", f->peer.name);
      return SESS_REFUSED;
    case LDM6_RECLASS:
      if (rep.u.reclass.psa_len == 0) {
        log_error("%s refused FEEDME: none of the request is allowed "
                  "(empty RECLASS)",
                  f->peer.name);
        return SESS_REFUSED;
      }
      ldm6_class_format(&rep.u.reclass, text, sizeof text);
      log_notice("%s allows only %s: asking for that", f->peer.name, text);
      cls = rep.u.reclass;
      break;
    default:
      log_error("%s answered FEEDME with %s", f->peer.name,
                ldm6_errt_name(rep.code));
      return SESS_FAILED;
    }
  }
  log_error("%s answered RECLASS %d times in a row; giving up", f->peer.name,
            MAX_RECLASS);
  return SESS_FAILED;
}

static enum session_rc session(struct feedme *f) {
  char err[700];
  ldm6_io *io =
      ldmc_connect(&f->peer, f->timeo_s * 1000, NULL, err, sizeof err);
  enum session_rc rc;

  if (io == NULL && cli_stopping())
    return SESS_STOP;
  if (io == NULL) {
    log_error("%s", err);
    return SESS_FAILED;
  }
  ldmc_watch(io);
  rc = request(f, io);
  if (rc == SESS_OK) {
    f->had_session = true;
    rc = serve(f, io);
  }
  drop_pending(f, "the connection ended; it will come again whole");
  ldmc_watch(NULL);
  ldm6_io_free(io);
  return rc;
}

static int parse_secs(struct feedme *f, int opt, const char *arg, uint64_t lo,
                      uint64_t hi, int *out) {
  char what[32];
  uint64_t v;

  snprintf(what, sizeof what, "-%c value", opt);
  if (ldmc_opt_uint(&f->cli, usage_text, what, arg, lo, hi, &v) != 0)
    return -1;
  *out = (int)v;
  return 0;
}

static int parse_args(struct feedme *f, int argc, char **argv) {
  struct ldmc_opts o = {.host = "localhost", .feedtype = PQ_FT_ANY};
  const char *pattern = ".*";
  int offset = 0, opt, rc;
  pq_class cls;

  f->timeo_s = DEFAULT_TIMEO;
  f->total_s = DEFAULT_TOTAL;
  while ((rc = cli_next_option(&f->cli, argc, argv, ":h:P:Sf:p:o:t:T:l:vx",
                               usage_text, &opt)) == CLI_OPT_OWN) {
    if (ldmc_opts_take(&f->cli, usage_text, opt, optarg, &o) < 0)
      return -1;
    switch (opt) {
    case 'p':
      pattern = optarg;
      break;
    case 'o':
      if (parse_secs(f, opt, optarg, 0, (uint64_t)time(NULL), &offset) != 0)
        return -1;
      break;
    case 't':
      if (parse_secs(f, opt, optarg, 1, 32767, &f->timeo_s) != 0)
        return -1;
      break;
    case 'T':
      if (parse_secs(f, opt, optarg, 1, INT32_MAX / 1000, &f->total_s) != 0)
        return -1;
      break;
    }
  }
  if (rc != CLI_OPT_DONE)
    return -1;
  if (cli_output_operand(&f->cli, argc, argv, usage_text, &f->output) != 0)
    return -1;
  if (f->total_s < f->timeo_s) {
    cli_usage_error(&f->cli, usage_text, "TotalTimeo %d < timeo %d", f->total_s,
                    f->timeo_s);
    return -1;
  }
  if (ldmc_opts_peer(&f->cli, usage_text, &o, &f->peer) != 0)
    return -1;

  const char *given = pattern; /* LDM's re_vetSpec */
  while (strlen(pattern) > 2 && pattern[0] == '.' && pattern[1] == '*')
    pattern += 2;
  if (pattern != given)
    log_notice("Adjusting pathological regular-expression: \"%s\"", given);
  if (cli_make_class(&f->cli, &cls, PQ_TS_ZERO, o.feedtype, pattern) != 0) {
    fputs(usage_text, stderr);
    return -1;
  }
  pq_class_free(&cls);

  memset(&f->request, 0, sizeof f->request);
  f->request.from.tv_sec = (int32_t)(time(NULL) - offset);
  f->request.to.tv_sec = INT32_MAX;
  f->request.to.tv_usec = 999999;
  f->request.psa_len = 1;
  f->request.psa[0].feedtype = o.feedtype;
  snprintf(f->request.psa[0].pattern, sizeof f->request.psa[0].pattern, "%s",
           pattern);
  return 0;
}

int main(int argc, char **argv) {
  static struct feedme f;
  char text[9000];
  int status = EXIT_OK;

  cli_init(&f.cli, argv[0]);
  if (parse_args(&f, argc, argv) != 0)
    return EXIT_USAGE;
  f.fd = STDOUT_FILENO;
  if (f.output != NULL && (f.fd = cli_open_append(f.output)) < 0) {
    fprintf(stderr, "%s: cannot open %s: %s\n", f.cli.progname, f.output,
            strerror(errno));
    return EXIT_USAGE;
  }
  cli_signals();
  ldm6_class_format(&f.request, text, sizeof text);
  log_notice("Starting Up: %s: %s", f.peer.name, text); /* LDM's words */
  for (;;) {
    enum session_rc rc = session(&f);

    if (rc == SESS_STOP || cli_stopping())
      break;
    if (rc == SESS_OUTPUT) {
      status = EXIT_OUTPUT;
      break;
    }
    if (rc == SESS_REFUSED) {
      status = EXIT_REFUSED;
      break;
    }
    if (!f.had_session) {
      status = EXIT_CONNECT;
      break;
    }
    log_notice("reconnecting to %s in %d s", f.peer.name, RETRY_SECONDS);
    double end = cli_monotonic() + RETRY_SECONDS;
    while (!cli_stopping() && cli_monotonic() < end) {
      cli_sleep(end - cli_monotonic());
      (void)cli_stats_requested(); /* SIGUSR1 only reopens the log */
    }
    if (cli_stopping())
      break;
  }
  log_notice("exiting"); /* LDM's word */
  if (f.output != NULL)
    close(f.fd);
  free(f.buf);
  SSL_CTX_free(f.peer.tls);
  return status;
}
