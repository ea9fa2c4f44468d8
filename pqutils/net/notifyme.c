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
 * Requests, sessions and reconnections are ldmsub.c's, as feedme's.
 */
#include <stdio.h>
#include <time.h>

#include "ldmd/proto/ldm6_text.h"
#include "ldmd/site/log.h"
#include "pqutils/common/cli.h"
#include "pqutils/net/ldmclient.h"
#include "pqutils/net/ldmsub.h"

/* Exit statuses. */
enum {
  EXIT_OK = 0,      /* stopped by SIGINT or SIGTERM */
  EXIT_USAGE = 1,   /* bad command line */
  EXIT_REFUSED = 2, /* the server refused the request */
  EXIT_CONNECT = 3, /* no session could be started */
};
_Static_assert((int)EXIT_OK == (int)LDMC_SUB_STOPPED &&
                   (int)EXIT_REFUSED == (int)LDMC_SUB_REFUSED &&
                   (int)EXIT_CONNECT == (int)LDMC_SUB_CONNECT,
               "ldmc_sub_run() returns the exit status");

#define DEFAULT_TIMEO 25  /* -t: LDM's default RPC timeout */
#define DEFAULT_TOTAL 300 /* -T: LDM's default total timeout */
#define RETRY_SECONDS 30  /* pause before reconnecting */

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

struct notifyme {
  struct cli cli;
  struct ldmc_sub sub; /* the peer, the request, -t and -T */
  bool show_origin;    /* -O */
};

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
                n->sub.peer.name, ldm6_strerror(rc));
    return;
  }
  ldmc_sub_got(&n->sub, wire.arrival);
  cli_log_product("", &info, n->show_origin);
}

/* Answer (or not) one call from the server (ldmc_sub.dispatch). */
static int dispatch(void *ctx, ldm6_io *io, const ldm6_io_msg *m,
                    bool *output) {
  struct notifyme *n = ctx;
  const ldm6_rpc_call *c = &m->hdr.u.call;
  const char *peer = n->sub.peer.name;
  const ldm6_proc_desc *d;

  (void)output; /* notifyme writes no output */
  if (c->prog != LDM6_PROG) {
    log_warning("refusing a call of program %u from %s", (unsigned)c->prog,
                peer);
    return ldm6_io_reply_error(io, m->hdr.xid, LDM6_RPC_PROG_UNAVAIL);
  }
  if (c->vers != LDM6_VERSION6) {
    log_warning("refusing a version %u call from %s: only version 6 is "
                "served",
                (unsigned)c->vers, peer);
    return ldm6_io_reply_prog_mismatch(io, m->hdr.xid, LDM6_VERSION6,
                                       LDM6_VERSION6);
  }
  switch (c->proc) {
  case LDM6_NULLPROC:
    log_debug("NULLPROC from %s", peer);
    return ldm6_io_reply(io, m->hdr.xid, NULL, 0);
  case LDM6_NOTIFICATION:
    on_notification(n, m); /* one-way: never answered */
    return LDM6_IO_OK;
  default:
    d = ldm6_proc_lookup(LDM6_VERSION6, c->proc);
    if (d != NULL && d->oneway) {
      log_warning("ignoring %s from %s: notifyme asked for notifications",
                  d->name, peer);
      return LDM6_IO_OK;
    }
    log_warning("refusing %s (procedure %u) from %s: not served by notifyme",
                d != NULL ? d->name : "an unknown call", (unsigned)c->proc,
                peer);
    return ldm6_io_reply_error(io, m->hdr.xid, LDM6_RPC_PROC_UNAVAIL);
  }
}

static int parse_args(struct notifyme *n, int argc, char **argv) {
  struct ldmc_opts o = {.host = "localhost", .feedtype = PQ_FT_ANY};
  struct ldmc_sub *s = &n->sub;
  const char *pattern = ".*";
  int offset = 0;
  int opt, rc;

  s->timeo_s = DEFAULT_TIMEO;
  s->total_s = DEFAULT_TOTAL;
  while ((rc = cli_next_option(&n->cli, argc, argv, ":h:P:f:p:o:Ot:T:Sl:vx",
                               usage_text, &opt)) == CLI_OPT_OWN) {
    if (ldmc_opts_take(&n->cli, usage_text, opt, optarg, &o) < 0)
      return -1;
    if (opt == 'O') /* the option feedme does not take */
      n->show_origin = true;
    else if (ldmc_sub_take(&n->cli, usage_text, opt, optarg, s, &pattern,
                           &offset) < 0)
      return -1;
  }
  if (rc != CLI_OPT_DONE)
    return -1;
  if (optind < argc) {
    cli_usage_error(&n->cli, usage_text, "unexpected argument \"%s\"",
                    argv[optind]);
    return -1;
  }
  if (s->total_s < s->timeo_s) {
    cli_usage_error(&n->cli, usage_text,
                    "-T %d is shorter than the timeout -t %d", s->total_s,
                    s->timeo_s);
    return -1;
  }
  if (ldmc_opts_peer(&n->cli, usage_text, &o, &s->peer) != 0)
    return -1;

  /* LDM's re_vetSpec, done here so that the server gets the pattern used. */
  const char *given = pattern;
  pattern = ldmc_sub_vet_pattern(pattern);
  if (pattern != given)
    log_notice("adjusting pathological regular expression \"%s\" to \"%s\"",
               given, pattern);
  return ldmc_sub_class(&n->cli, usage_text, o.feedtype, pattern, offset,
                        &s->request);
}

int main(int argc, char **argv) {
  static struct notifyme n;
  int status;

  cli_init(&n.cli, argv[0]);
  if (parse_args(&n, argc, argv) != 0)
    return EXIT_USAGE;
  n.sub.what = "NOTIFYME";
  n.sub.vers = LDM6_VERSION6;
  n.sub.proc = LDM6_NOTIFYME;
  n.sub.retry_s = RETRY_SECONDS;
  n.sub.dispatch = dispatch;
  n.sub.ctx = &n;
  cli_signals();
  status = (int)ldmc_sub_run(&n.sub); /* its exit statuses are ours */
  log_notice("Exiting");
  SSL_CTX_free(n.sub.peer.tls);
  return status;
}
