/*
 * pqing - LDM's ingester of WMO (and AFOS, and FAA604) byte streams: each
 * message of a serial line, a file, standard input or a TCP connection
 * becomes one product in the queue (docs/pqing.md; pqing(1)).  Installed
 * also as ids, hds, ddplus, dds, pps, afos, hrs and feedtest: the name sets
 * the feedtype and the scanner (wmo_feed.h), and feedtest inserts nothing.
 *
 * This file: LDM's command line and exit codes, and the loop that reads,
 * scans (wmo_frame.h) and hands the messages on (pqing_insert.h).  The
 * loop reads at most a second at a time: a pause in the input lets a
 * message whose last ETX has nothing after it end (wmo_scan_flush()), and
 * SIGUSR1's statistics are logged between reads.  A TCP source that ends
 * or idles past -T is connected again, and what was lost of the message
 * under way is logged; the end of any other input ends pqing (exit 0).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ldmd/site/log.h"
#include "pqutils/common/cli.h"
#include "pqutils/common/cli_io.h"
#include "pqutils/wmo/pqing_input.h"
#include "pqutils/wmo/pqing_insert.h"
#include "pqutils/wmo/wmo_feed.h"
#include "pqutils/wmo/wmo_frame.h"

#define DEFAULT_MAX_PRODUCT 1048576u /* -s, LDM's */
#define DEFAULT_RESET_S 600u         /* -T, LDM's */
#define READ_CHUNK 65536u
#define PAUSE_MS 1000

/* LDM's exit codes: 0 the input ended (or a stop), 1 anything else. */
enum { EXIT_OK = 0, EXIT_FAIL = 1 };

static const char usage_text[] =
    "usage: pqing [options] feedname\n"
    "  (also run as ids, hds, ddplus, dds, pps, afos, hrs, feedtest)\n"
    "options:\n"
    "  -5            signature over the whole message, sequence number too\n"
    "  -b baud       terminal speed (default by feedtype)\n"
    "  -c            check the HDS CRC, or parity, on input not a terminal\n"
    "  -F            XON/XOFF flow control on a terminal\n"
    "  -f type       feedtype of the products (default: the program's name)\n"
    "  -i            no \" /p\" PIL in identifiers\n"
    "  -l dest       log to dest: \"\" syslog, \"-\" stderr, or a file\n"
    "  -N            no NEXRAD feedtype for radar headings\n"
    "  -n            no check on a terminal\n"
    "  -p parity     terminal parity: even, odd or none\n"
    "  -P port       read a TCP connection to port on host feedname\n"
    "  -q queue      queue (default: the registry's /queue/path)\n"
    "  -r rawfile    copy the raw input to rawfile\n"
    "  -s size       largest message, bytes (default 1048576)\n"
    "  -T timeout    TCP: reconnect after timeout idle seconds (0: never;\n"
    "                default 600)\n"
    "  -v            log each product\n"
    "  -x            log debug messages\n"
    "  -h            print this text\n"
    "feedname: a file, - (standard input), a terminal (/dev/tty...), or\n"
    "  with -P a host.\n"
    "exit: 0 the input ended or a stop, 1 otherwise\n";

struct opts {
  uint32_t feedtype;
  bool feedtype_given;
  enum wmo_check_opt check;
  bool flow_control, no_pil, no_nexrad, whole_sig;
  unsigned baud;
  const char *parity;
  bool baud_given, parity_given;
  unsigned port;
  uint64_t reset_s;
  uint64_t max;
  const char *raw;
  const char *feedname;
};

static int option(struct cli *c, int ch, const char *arg, void *opts) {
  struct opts *o = opts;
  uint64_t v;
  switch (ch) {
  case '5':
    o->whole_sig = true;
    return 0;
  case 'c':
    o->check = WMO_CHECK_ON;
    return 0;
  case 'n':
    o->check = WMO_CHECK_OFF;
    return 0;
  case 'F':
    o->flow_control = true;
    return 0;
  case 'i':
    o->no_pil = true;
    return 0;
  case 'N':
    o->no_nexrad = true;
    return 0;
  case 'b':
    if (cli_parse_uint(c, "baud rate", arg, 4000000, &v) != 0)
      return -1;
    if (!pqing_tty_speed_ok((unsigned)v)) {
      cli_usage_error(c, usage_text, "%s is not a supported speed", arg);
      return -1;
    }
    o->baud = (unsigned)v;
    o->baud_given = true;
    return 0;
  case 'p':
    if (strcmp(arg, "even") != 0 && strcmp(arg, "odd") != 0 &&
        strcmp(arg, "none") != 0) {
      cli_usage_error(c, usage_text, "parity \"%s\": even, odd or none", arg);
      return -1;
    }
    o->parity = arg;
    o->parity_given = true;
    return 0;
  case 'P':
    if (cli_parse_uint(c, "port", arg, 65535, &v) != 0)
      return -1;
    if (v == 0) {
      cli_usage_error(c, usage_text, "Invalid server port: \"%s\"", arg);
      return -1;
    }
    o->port = (unsigned)v;
    return 0;
  case 'T':
    return cli_parse_uint(c, "timeout", arg, 86400u * 365, &o->reset_s);
  case 's':
    if (cli_parse_uint(c, "maximum data-product size", arg, 1ull << 32, &v) !=
            0 ||
        v < 1) {
      if (v < 1)
        cli_usage_error(c, usage_text,
                        "Invalid maximum data-product size: \"%s\"", arg);
      return -1;
    }
    o->max = v;
    return 0;
  case 'r':
    o->raw = arg;
    return 0;
  case 'f': {
    uint32_t ft;
    if (cli_parse_feedtype(c, arg, &ft) != 0)
      return -1;
    if (ft != PQ_FT_NONE) { /* LDM ignores NONE */
      o->feedtype = ft;
      o->feedtype_given = true;
    }
    return 0;
  }
  default:
    return -1;
  }
}

static int operands(struct cli *c, int argc, char **argv, void *opts) {
  struct opts *o = opts;
  if (argc - optind != 1) {
    cli_usage_error(c, usage_text, "Wrong number of operands: %d",
                    argc - optind);
    return -1;
  }
  o->feedname = argv[optind];
  return 0;
}

static const struct cli_spec spec = {":hvxcFni5Nl:b:p:P:T:q:r:f:s:", usage_text,
                                     option, operands};

/* The lines LDM logs for SIGUSR1 ("Statistics Request") and at exit. */
static void queue_stats(pq_t *pq) {
  pq_stats st;
  if (pq == NULL || pq_stats_get(pq, &st) != PQ_OK)
    return;
  log_notice("  Queue usage (bytes):%8llu",
             (unsigned long long)st.ps_highwater);
  log_notice("           (nregions):%8llu", (unsigned long long)st.ps_maxnfree);
}

static void stats(const struct pqing_out *out, const struct pqing_input *in,
                  double idle) {
  log_notice("Statistics Request");
  queue_stats(out->pq);
  log_notice("       Idle: %8lu seconds", (unsigned long)idle);
  log_notice("%21s: %s", "Status",
             in->fd < 0 ? "Not connected or input not open." : "Connected.");
  pqing_out_stats(out);
  pqing_input_stats(in);
}

/* SIGUSR1 while pqing waits to connect again. */
struct stats_ctx {
  const struct pqing_out *out;
  const struct pqing_input *in;
  double since; /* cli_monotonic() of the last input */
};

static void stats_while_away(void *arg) {
  const struct stats_ctx *sc = arg;
  stats(sc->out, sc->in, cli_monotonic() - sc->since);
}

/* The input broke or ended: what was under way is lost. */
static void lost(struct wmo_scanner *sc, struct pqing_input *in,
                 const char *what) {
  size_t n = wmo_scan_reset(sc);
  if (n > 0 && in->kind == PQING_TCP)
    log_warning("%s %s port %u: %zu bytes of an unfinished message lost", what,
                in->name, in->port, n);
  else if (n > 0)
    log_warning("%s: %zu bytes of an unfinished message lost", what, n);
}

/* Read and scan until the input ends, a stop, or the queue fails. */
static int run(struct wmo_scanner *sc, struct pqing_out *out,
               struct pqing_input *in, const struct opts *o) {
  uint8_t buf[READ_CHUNK];
  double last = cli_monotonic();
  struct stats_ctx away = {.out = out, .in = in};
  while (!cli_stopping() && !out->failed) {
    if (cli_stats_requested())
      stats(out, in, cli_monotonic() - last);
    ssize_t n = pqing_input_read(in, buf, sizeof buf, PAUSE_MS);
    if (n > 0) {
      last = cli_monotonic();
      (void)wmo_scan_feed(sc, buf, (size_t)n);
      continue;
    }
    if (n == -1 && errno == EINTR)
      continue; /* a stop, or a signal: looked at above */
    if (n == -2) {
      wmo_scan_flush(sc);
      double idle = cli_monotonic() - last;
      if (in->kind != PQING_TCP || o->reset_s == 0 || idle < (double)o->reset_s)
        continue;
      log_notice("Idle for %ld seconds, reconnecting", (long)idle);
      lost(sc, in, "idle connection to");
    } else if (in->kind == PQING_TCP) {
      in->drops++;
      if (n == 0)
        log_warning("connection to %s port %u closed by the peer", in->name,
                    in->port);
      else
        log_warning("connection to %s port %u lost: %s", in->name, in->port,
                    strerror(errno));
      lost(sc, in, "connection to");
    } else {
      if (n < 0)
        log_error("read of \"%s\": %s", in->name, strerror(errno));
      lost(sc, in, "end of input");
      return n < 0 ? EXIT_FAIL : EXIT_OK;
    }
    away.since = last;
    if (pqing_input_reconnect(in, stats_while_away, &away) != 0)
      break;
    last = cli_monotonic();
  }
  lost(sc, in, in->kind == PQING_TCP ? "stop: connection to" : "stop");
  return out->failed ? EXIT_FAIL : EXIT_OK;
}

int main(int argc, char **argv) {
  struct cli c;
  struct opts o = {.reset_s = DEFAULT_RESET_S, .max = DEFAULT_MAX_PRODUCT};
  o.feedtype = wmo_feed_by_name(argv[0]);
  int rc = cli_parse(&c, argc, argv, &spec, &o);
  if (rc != CLI_GO_ON)
    return rc;
  /* A terminal's defaults come from the name, or from -f unless -b or -p
   * was given (LDM's rule). */
  unsigned baud;
  const char *parity;
  wmo_feed_tty_defaults(o.feedtype, &baud, &parity);
  if (o.feedtype_given && (o.baud_given || o.parity_given))
    wmo_feed_tty_defaults(wmo_feed_by_name(argv[0]), &baud, &parity);
  if (!o.baud_given)
    o.baud = baud;
  if (!o.parity_given)
    o.parity = parity;

  cli_signals();
  log_notice("Starting Up");
  bool feedtest = strcmp(c.progname, "feedtest") == 0;
  if (feedtest && !ldm_log_enabled(LDM_LOG_INFO)) /* it shows the products */
    ldm_log_set_level(LDM_LOG_INFO);
  pq_t *pq = NULL;
  if (!feedtest) {
    const char *path = cli_queue_path(&c);
    if (path == NULL || (pq = cli_open_queue(path, 0, NULL)) == NULL) {
      log_notice("Exiting");
      return EXIT_FAIL;
    }
  }
  struct pqing_input in;
  pqing_input_init(&in, o.feedname, o.port);
  in.baud = o.baud;
  in.parity = o.parity;
  in.flow_control = o.flow_control;
  in.raw_path = o.raw;
  if (pqing_input_open(&in) != 0) {
    log_notice("Exiting");
    if (pq != NULL)
      pq_close(pq);
    return EXIT_FAIL;
  }
  enum wmo_framing framing;
  bool check;
  wmo_feed_scanner(o.feedtype, o.check, in.kind == PQING_TTY && isatty(in.fd),
                   o.parity[0] == 'n', &framing, &check);
  struct pqing_out out;
  pqing_out_init(&out, pq, o.feedtype, framing);
  out.pil = !o.no_pil && wmo_feed_uses_pil(o.feedtype);
  out.nexrad = !o.no_nexrad;
  out.whole_sig = o.whole_sig;
  cli_hostname(&c, out.origin);
  if (out.pil)
    log_info("Creating AFOS-like pil tags");
  if (o.feedtype == (PQ_FT_DDPLUS | PQ_FT_IDS))
    log_notice("Note: Using the wmo_binary scanner for SDI ingest");
  log_info("reading %s messages", wmo_framing_name(framing, check));
  struct wmo_scanner sc;
  if (wmo_scan_init(&sc, framing, check, (size_t)o.max, pqing_out_event,
                    &out) != 0) {
    log_error("cannot allocate the input buffer: %s", strerror(errno));
    pqing_input_close(&in);
    if (pq != NULL)
      pq_close(pq);
    return EXIT_FAIL;
  }
  int code = run(&sc, &out, &in, &o);
  pqing_input_close(&in);
  log_notice("Exiting");
  if (pq != NULL) {
    queue_stats(pq);
    log_notice("  Duplicates rejected:%8lu", out.ndups);
    if (pq_close(pq) != PQ_OK)
      code = EXIT_FAIL;
  }
  pqing_out_stats(&out);
  pqing_input_stats(&in);
  wmo_scan_free(&sc);
  return code;
}
