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
 * stopped.  Requests, sessions and reconnections are ldmsub.c's, as
 * notifyme's.
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
#include "pqutils/net/ldmsub.h"

enum {
  EXIT_OK = 0,      /* stopped by SIGINT or SIGTERM */
  EXIT_USAGE = 1,   /* bad command line */
  EXIT_REFUSED = 2, /* the server refused the request */
  EXIT_CONNECT = 3, /* no session could be started */
  EXIT_OUTPUT = 4,  /* the output could not be written */
};
_Static_assert((int)EXIT_OK == (int)LDMC_SUB_STOPPED &&
                   (int)EXIT_REFUSED == (int)LDMC_SUB_REFUSED &&
                   (int)EXIT_CONNECT == (int)LDMC_SUB_CONNECT &&
                   (int)EXIT_OUTPUT == (int)LDMC_SUB_OUTPUT,
               "ldmc_sub_run() returns the exit status");

#define DEFAULT_TIMEO 25  /* -t */
#define DEFAULT_TOTAL 300 /* -T: 12 x the timeout, LDM's */
#define RETRY_SECONDS 25  /* LDM's pause before reconnecting */

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

struct feedme {
  struct cli cli;
  struct ldmc_sub sub; /* the peer, the request, -t and -T */
  const char *output;  /* NULL: standard output */
  int fd;

  /* the product coming in pieces (COMINGSOON, BLKDATA) */
  bool pending;
  ldm6_prod_info info;
  uint8_t *buf;
  size_t have, cap;
};

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
  ldmc_sub_got(&f->sub, wire->arrival);
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
    log_error("a HEREIS from %s does not decode: %s", f->sub.peer.name,
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
    log_error("a COMINGSOON from %s does not decode: %s", f->sub.peer.name,
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
    log_error("a BLKDATA from %s does not decode: %s", f->sub.peer.name,
              ldm6_strerror(rc));
    return CALL_BAD;
  }
  log_debug("   blkdata5: %u bytes, packet %u", (unsigned)d.data_len,
            (unsigned)d.pktnum);
  if (!f->pending || memcmp(d.signature, f->info.signature, LDM6_SIGLEN) != 0) {
    log_error("signature mismatch: a BLKDATA from %s for no product "
              "announced",
              f->sub.peer.name);
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

/* Answer one call from the server (ldmc_sub.dispatch).  @return an ldm6_io
 * result, or LDM6_IO_OK with *output set when the output failed. */
static int dispatch(void *ctx, ldm6_io *io, const ldm6_io_msg *m,
                    bool *output) {
  struct feedme *f = ctx;
  const ldm6_rpc_call *c = &m->hdr.u.call;
  int r;

  if (c->prog != LDM6_PROG)
    return ldm6_io_reply_error(io, m->hdr.xid, LDM6_RPC_PROG_UNAVAIL);
  if (c->vers != LDM6_VERSION5) {
    log_warning("refusing a version %u call from %s: feedme asked for "
                "version 5",
                (unsigned)c->vers, f->sub.peer.name);
    return ldm6_io_reply_prog_mismatch(io, m->hdr.xid, LDM6_VERSION5,
                                       LDM6_VERSION5);
  }
  switch (c->proc) {
  case LDM6_NULLPROC:
    log_debug("NULLPROC from %s", f->sub.peer.name);
    return ldm6_io_reply(io, m->hdr.xid, NULL, 0);
  case LDM6_HIYA:
    log_info("hiya5: %s", f->sub.peer.name);
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
                (unsigned)c->proc, f->sub.peer.name);
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

/* A session ended (ldmc_sub.ended): a product half received is lost. */
static void ended(void *ctx) {
  drop_pending(ctx, "the connection ended; it will come again whole");
}

static int parse_args(struct feedme *f, int argc, char **argv) {
  struct ldmc_opts o = {.host = "localhost", .feedtype = PQ_FT_ANY};
  struct ldmc_sub *s = &f->sub;
  const char *pattern = ".*";
  int offset = 0, opt, rc;

  s->timeo_s = DEFAULT_TIMEO;
  s->total_s = DEFAULT_TOTAL;
  while ((rc = cli_next_option(&f->cli, argc, argv, ":h:P:Sf:p:o:t:T:l:vx",
                               usage_text, &opt)) == CLI_OPT_OWN) {
    if (ldmc_opts_take(&f->cli, usage_text, opt, optarg, &o) < 0 ||
        ldmc_sub_take(&f->cli, usage_text, opt, optarg, s, &pattern, &offset) <
            0)
      return -1;
  }
  if (rc != CLI_OPT_DONE)
    return -1;
  if (cli_output_operand(&f->cli, argc, argv, usage_text, &f->output) != 0)
    return -1;
  if (s->total_s < s->timeo_s) {
    cli_usage_error(&f->cli, usage_text, "TotalTimeo %d < timeo %d", s->total_s,
                    s->timeo_s);
    return -1;
  }
  if (ldmc_opts_peer(&f->cli, usage_text, &o, &s->peer) != 0)
    return -1;

  const char *given = pattern; /* LDM's re_vetSpec */
  pattern = ldmc_sub_vet_pattern(pattern);
  if (pattern != given)
    log_notice("Adjusting pathological regular-expression: \"%s\"", given);
  return ldmc_sub_class(&f->cli, usage_text, o.feedtype, pattern, offset,
                        &s->request);
}

int main(int argc, char **argv) {
  static struct feedme f;
  int status;

  cli_init(&f.cli, argv[0]);
  if (parse_args(&f, argc, argv) != 0)
    return EXIT_USAGE;
  f.fd = STDOUT_FILENO;
  if (f.output != NULL && (f.fd = cli_open_append(f.output)) < 0) {
    fprintf(stderr, "%s: cannot open %s: %s\n", f.cli.progname, f.output,
            strerror(errno));
    return EXIT_USAGE;
  }
  f.sub.what = "FEEDME";
  f.sub.vers = LDM6_VERSION5;
  f.sub.proc = LDM6_FEEDME;
  f.sub.retry_s = RETRY_SECONDS;
  f.sub.dispatch = dispatch;
  f.sub.ended = ended;
  f.sub.ctx = &f;
  cli_signals();
  status = (int)ldmc_sub_run(&f.sub); /* its exit statuses are ours */
  log_notice("exiting");              /* LDM's word */
  if (f.output != NULL)
    close(f.fd);
  free(f.buf);
  SSL_CTX_free(f.sub.peer.tls);
  return status;
}
