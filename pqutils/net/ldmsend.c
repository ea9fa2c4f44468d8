/*
 * ldmsend - send files to an LDM server as products, one product per file,
 * as LDM's ldmsend does.  The push protocol (HIYA) needs no turned-around
 * connection: we stay the RPC client throughout.
 *
 *   HIYA(offer {now, TS_ENDT, {feedtype, ".*"}})  ->  OK(max_hereis), or
 *   RECLASS(accepted class, max_hereis): send only what that class matches,
 *   or DONT_SEND: send nothing.  Then per file HEREIS (one-way) if its size
 *   is at most max_hereis, else COMINGSOON (answered; DONT_SEND means the
 *   server has it or does not want it) and one BLKDATA (one-way) with all
 *   the data.  A final NULLPROC flushes the one-way calls and confirms that
 *   the server has taken them.  The calls themselves are ldmpush.c's,
 *   which rtstats uses too; what is sent, and what is said, is here.
 *
 * Each product: ident = the file name as given, origin = the registry's
 * /hostname (else this host's name), creation time = now, signature = MD5
 * of the data, sequence numbers from -s up, one per file.  Data goes to
 * the socket from the buffer it was read into, without another copy.
 *
 * Differences from LDM's ldmsend, on purpose: the port can be chosen
 * (host:port, [v6]:port, -P; LDM's ldmsend always uses 388); a file that
 * cannot be sent (unreadable, not a regular file, over 4 GiB - 1, ident
 * over 255 bytes) is reported, the others are still sent, and the exit
 * status is then 3 rather than 0.  And nothing is lost without a word:
 * only the answer to the final NULLPROC says that the server took the
 * products, so when it does not come (the connection broke, the server's
 * process died, or the server answered SYSTEM_ERR because it could not
 * store one of them) every product offered is named on standard error,
 * identifier and signature, as not delivered, and every file not yet sent
 * as not sent (LDM's ldmsend says only that the call failed).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ldmd/proto/ldm6_text.h"
#include "ldmd/site/log.h"
#include "pqutils/common/cli.h"
#include "pqutils/net/ldmclient.h"
#include "pqutils/net/ldmpush.h"

/* Exit statuses, LDM's (exitStatus.h) where they apply. */
enum {
  EXIT_OK = 0,
  EXIT_USAGE = 1,       /* bad command line (LDM's usage() exits 1) */
  EXIT_CONN_TIMEO = 1,  /* the connection could not be made in time */
  EXIT_SYSTEM = 3,      /* a file could not be read, or memory ran out */
  EXIT_SESS_TIMEO = 4,  /* the server did not answer in time */
  EXIT_CONN_ABORT = 5,  /* refused, closed, a protocol failure, or the
                           products not confirmed */
  EXIT_INTERRUPTED = 7, /* stopped by SIGINT or SIGTERM */
};

#define CONNECT_TIMEOUT_MS (25 * 1000)
#define CALL_TIMEOUT_MS (60 * 1000) /* LDM's v6 synchronous timeout */

static const char usage_text[] =
    "usage: ldmsend [options] file ...\n"
    "options:\n"
    "  -h host[:port] LDM server (default localhost); IPv6 as [addr]:port\n"
    "  -P port        port when -h gives none (default: the registry's\n"
    "                 /server/port, else 388)\n"
    "  -S             speak TLS 1.3 and verify the server's certificate\n"
    "                 (the registry's /tls/ca; shows /tls/cert if set)\n"
    "  -f feedtype    feedtype of the products (default EXP)\n"
    "  -s seqno       sequence number of the first file, one more per file\n"
    "                 (default 0)\n"
    "  -l dest        log to dest: \"\" syslog, \"-\" stderr, or a file\n"
    "  -v             log each file sent\n"
    "  -x             debug: also log each product with its signature\n"
    "exit: 0 sent, 1 bad usage or connection timed out, 3 a file could not\n"
    "      be sent, 4 the server did not answer in time, 5 connection\n"
    "      refused or lost, or the products not confirmed, 7 interrupted\n";

/* A product offered in this session: the file it came from (its name is
 * the identifier) and its signature. */
struct offered {
  int file;
  uint8_t sig[PQ_SIGLEN];
};

struct ldmsend {
  struct cli cli;
  struct ldmc_peer peer;
  uint32_t feedtype;
  uint32_t seqno;
  char origin[PQ_ORIGIN_MAX + 1];
  char **files;
  int nfiles;

  ldm6_io *io;
  struct ldmc_push push; /* what the server wants, once HIYA is answered */
  uint8_t *buf;          /* the file being sent */
  size_t cap;
  int status; /* the exit status so far */
  /* offered and not confirmed yet (one per file at most) */
  struct offered *offered;
  size_t noffered;
};

/* Status of a failed call (or send): a stop ends them by shutting the
 * socket down (ldmc_watch()), which is an interruption, not a failure. */
static int call_status(int rc) {
  if (rc == LDMC_STOPPED || cli_stopping())
    return EXIT_INTERRUPTED;
  return rc == LDM6_IO_TIMEDOUT ? EXIT_SESS_TIMEO : EXIT_CONN_ABORT;
}

/* Log a failed call's message, unless a stop ended it. */
static void log_call_error(const char *err) {
  if (cli_stopping())
    log_notice("interrupted: %s", err);
  else
    log_error("%s", err);
}

/* The first failure of the connection decides; a file's failure (3) only
 * until then. */
static void set_status(struct ldmsend *s, int status) {
  if (s->status == EXIT_OK || s->status == EXIT_SYSTEM)
    s->status = status;
}

/* HIYA: learn what the server wants.  @return 0 or -1 (status set). */
static int hiya(struct ldmsend *s) {
  ldm6_prod_class offer;
  char err[700];
  char text[9000];
  int rc;

  memset(&offer, 0, sizeof offer);
  if (ldm6_ts_from_pq(pq_ts_now(), &offer.from) != 0) {
    log_error("the clock is beyond what LDM can send (2038)");
    set_status(s, EXIT_SYSTEM);
    return -1;
  }
  offer.to.tv_sec = INT32_MAX;
  offer.to.tv_usec = 999999;
  offer.psa_len = 1;
  offer.psa[0].feedtype = s->feedtype;
  snprintf(offer.psa[0].pattern, sizeof offer.psa[0].pattern, ".*");
  ldm6_class_format(&offer, text, sizeof text);
  log_debug("offering %s to %s", text, s->peer.name);

  rc = ldmc_push_hiya(&s->push, &offer, err, sizeof err);
  if (rc != LDM6_IO_OK) {
    log_call_error(err);
    set_status(s, call_status(rc));
    return -1;
  }
  switch (s->push.answer) {
  case LDM6_OK:
    log_debug("%s accepts everything offered (max_hereis %u)", s->peer.name,
              (unsigned)s->push.max_hereis);
    break;
  case LDM6_RECLASS:
    ldm6_class_format(&s->push.accepted, text, sizeof text);
    log_info("%s accepts only %s", s->peer.name, text);
    break;
  default: /* DONT_SEND */
    log_notice("%s wants none of the products offered (DONT_SEND)",
               s->peer.name);
    break;
  }
  return 0;
}

/* Read the whole file into s->buf.  @return bytes read, or -1 (logged). */
static int64_t read_file(struct ldmsend *s, const char *path, int fd,
                         uint64_t size) {
  size_t got = 0;

  if (size > s->cap) {
    uint8_t *p = realloc(s->buf, (size_t)size);

    if (p == NULL) {
      log_error("cannot send %s: no memory for its %llu bytes", path,
                (unsigned long long)size);
      return -1;
    }
    s->buf = p;
    s->cap = (size_t)size;
  }
  while (got < size) {
    ssize_t n = read(fd, s->buf + got, (size_t)size - got);

    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      log_error("cannot read %s: %s", path, strerror(errno));
      return -1;
    }
    if (n == 0)
      break; /* the file shrank: send what it holds now */
    got += (size_t)n;
  }
  return (int64_t)got;
}

/* Send one product whose data is s->buf.  @return 0 offered; 1 not
 * offered (it could not be encoded: status set); -1 the connection failed
 * (status set). */
static int send_product(struct ldmsend *s, const pq_prod_info *info) {
  char err[1000];
  int rc = ldmc_push_product(&s->push, info, s->buf, err, sizeof err);

  switch (rc) {
  case LDM6_IO_OK:
    return 0;
  case LDMC_UNWANTED: {
    char line[700];

    pq_prod_info_format(info, ldm_log_enabled(LDM_LOG_DEBUG), line,
                        sizeof line);
    log_notice("Unwanted product: %s", line);
    return 0;
  }
  case LDMC_EPRODUCT:
    log_error("%s", err);
    set_status(s, EXIT_SYSTEM);
    return 1; /* the next file may do */
  default:
    log_call_error(err);
    set_status(s, call_status(rc));
    return -1;
  }
}

/* Send file i.  @return 0 (sent, skipped or failed alone) or -1 (the
 * connection is unusable).  A product offered is added to s->offered. */
static int send_file(struct ldmsend *s, int i) {
  const char *path = s->files[i];
  uint32_t seqno = s->seqno + (uint32_t)i;
  pq_prod_info info;
  struct stat st;
  int64_t got;
  int fd, rc;

  memset(&info, 0, sizeof info);
  if (strlen(path) > PQ_IDENT_MAX) {
    log_error("cannot send %s: its name is longer than LDM's %d-byte "
              "identifier",
              path, PQ_IDENT_MAX);
    set_status(s, EXIT_SYSTEM);
    return 0;
  }
  snprintf(info.ident, sizeof info.ident, "%s", path);
  snprintf(info.origin, sizeof info.origin, "%s", s->origin);
  info.feedtype = s->feedtype;
  info.seqno = seqno;
  info.arrival = pq_ts_now();
  if (!ldmc_push_wanted(&s->push, &info)) {
    log_info("%s doesn't want %s", s->peer.name, path);
    return 0;
  }

  fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    log_error("cannot open %s: %s", path, strerror(errno));
    set_status(s, EXIT_SYSTEM);
    return 0;
  }
  if (fstat(fd, &st) != 0) {
    log_error("cannot fstat %s: %s", path, strerror(errno));
    close(fd);
    set_status(s, EXIT_SYSTEM);
    return 0;
  }
  if (!S_ISREG(st.st_mode)) {
    log_error("cannot send %s: not a regular file", path);
    close(fd);
    set_status(s, EXIT_SYSTEM);
    return 0;
  }
  if ((uint64_t)st.st_size > UINT32_MAX) {
    log_error("cannot send %s: %lld bytes, more than LDM's limit of %u", path,
              (long long)st.st_size, UINT32_MAX);
    close(fd);
    set_status(s, EXIT_SYSTEM);
    return 0;
  }
  log_info("Sending %s, %lld bytes", path, (long long)st.st_size);
  got = read_file(s, path, fd, (uint64_t)st.st_size);
  close(fd);
  if (got < 0) {
    set_status(s, EXIT_SYSTEM);
    return 0;
  }
  info.size = (uint64_t)got;
  if (pq_md5(s->buf, (size_t)got, info.signature) != 0) {
    log_error("cannot compute the MD5 of %s: libcrypto failed", path);
    set_status(s, EXIT_SYSTEM);
    return 0;
  }
  rc = send_product(s, &info);
  if (rc == 1)
    return 0; /* not offered */
  s->offered[s->noffered].file = i;
  memcpy(s->offered[s->noffered].sig, info.signature, PQ_SIGLEN);
  s->noffered++;
  if (rc == 0 && ldm_log_enabled(LDM_LOG_DEBUG)) {
    char line[700];

    pq_prod_info_format(&info, true, line, sizeof line);
    log_debug("sent %s", line);
  }
  return rc;
}

/* Name, on standard error whatever the log, each product offered that the
 * server did not confirm, and each file from `next` on that was not sent. */
static void report_undelivered(const struct ldmsend *s, int next) {
  size_t i;
  int k;

  for (i = 0; i < s->noffered; i++) {
    char hex[33];

    pq_sig_format(s->offered[i].sig, hex);
    fprintf(stderr, "%s: not delivered to %s: %s %s\n", s->cli.progname,
            s->peer.name, hex, s->files[s->offered[i].file]);
  }
  for (k = next; k < s->nfiles; k++)
    fprintf(stderr, "%s: not sent to %s: %s\n", s->cli.progname, s->peer.name,
            s->files[k]);
  if ((s->noffered > 0 || next < s->nfiles) && cli_stopping())
    log_notice("%zu products not confirmed by %s, %d files not sent: "
               "stopped",
               s->noffered, s->peer.name, s->nfiles - next);
  else if (s->noffered > 0 || next < s->nfiles)
    log_error("%zu products not delivered to %s (not confirmed by it), %d "
              "files not sent",
              s->noffered, s->peer.name, s->nfiles - next);
}

static int parse_args(struct ldmsend *s, int argc, char **argv) {
  struct ldmc_opts o = {.host = "localhost", .feedtype = PQ_FT_EXP};
  uint64_t v;
  int opt, rc;

  while ((rc = cli_next_option(&s->cli, argc, argv, ":h:P:f:s:Sl:vx",
                               usage_text, &opt)) == CLI_OPT_OWN) {
    if (ldmc_opts_take(&s->cli, usage_text, opt, optarg, &o) < 0)
      return -1;
    if (opt == 'f' && o.feedtype == PQ_FT_NONE) {
      cli_usage_error(&s->cli, usage_text,
                      "feedtype \"%s\" is NONE: nothing would be sent", optarg);
      return -1;
    }
    if (opt == 's') {
      if (ldmc_opt_uint(&s->cli, usage_text, "sequence number", optarg, 0,
                        UINT32_MAX, &v) != 0)
        return -1;
      s->seqno = (uint32_t)v;
    }
  }
  if (rc != CLI_OPT_DONE)
    return -1;
  if (optind >= argc) {
    cli_usage_error(&s->cli, usage_text, "no file to send");
    return -1;
  }
  s->files = argv + optind;
  s->nfiles = argc - optind;
  s->feedtype = o.feedtype;
  return ldmc_opts_peer(&s->cli, usage_text, &o, &s->peer);
}

int main(int argc, char **argv) {
  static struct ldmsend s;
  char err[700];
  int next = 0; /* the first file not tried */

  cli_init(&s.cli, argv[0]);
  if (parse_args(&s, argc, argv) != 0)
    return EXIT_USAGE;
  cli_signals();
  cli_hostname(&s.cli, s.origin);
  s.offered = calloc((size_t)s.nfiles, sizeof *s.offered);
  if (s.offered == NULL) {
    log_error("cannot send %d files: %s", s.nfiles, strerror(ENOMEM));
    return EXIT_SYSTEM;
  }

  s.io = ldmc_connect(&s.peer, CONNECT_TIMEOUT_MS, NULL, err, sizeof err);
  if (s.io == NULL) {
    int timedout = errno == ETIMEDOUT;

    if (cli_stopping()) {
      log_notice("interrupted: %s; no file sent", err);
      s.status = EXIT_INTERRUPTED;
    } else {
      log_error("%s", err);
      s.status = timedout ? EXIT_CONN_TIMEO : EXIT_CONN_ABORT;
    }
  } else {
    ldmc_watch(s.io); /* a stop ends every wait on it */
    ldmc_push_init(&s.push, s.io, &s.peer, CALL_TIMEOUT_MS);
  }
  if (s.io != NULL && hiya(&s) == 0) {
    bool broken = false;

    for (int i = 0; i < s.nfiles && !broken; i++) {
      if (cli_stopping()) {
        log_notice("interrupted: %d of %d files not sent", s.nfiles - i,
                   s.nfiles);
        set_status(&s, EXIT_INTERRUPTED);
        break;
      }
      next = i + 1;
      broken = send_file(&s, i) != 0;
    }
    if (!broken) {
      /* Flush the one-way calls; the answer confirms their arrival. */
      int rc = ldmc_push_flush(&s.push, err, sizeof err);

      if (rc != LDM6_IO_OK) {
        log_call_error(err);
        set_status(&s, call_status(rc));
      } else {
        s.noffered = 0; /* all confirmed */
      }
    }
  }
  ldmc_watch(NULL);
  report_undelivered(&s, next);
  ldm6_io_free(s.io);
  ldmc_push_free(&s.push);
  free(s.buf);
  free(s.offered);
  return s.status;
}
