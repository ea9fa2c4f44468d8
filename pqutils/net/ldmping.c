/*
 * ldmping - is an LDM server there and answering?  As LDM's ldmping: a
 * version-5 NULLPROC call to each server, timed, and one line per server
 * in LDM's format,
 *
 *       State    Elapsed Port   Remote_Host           rpc_stat
 *   RESPONDING   0.000412  388   localhost
 *
 * logged at INFO when the server answered and at ERROR when it did not.
 * State is how far the attempt got: NAMED (the name did not resolve),
 * ADDRESSED (no connection), H_CLNTED (connected, no answer), RESPONDING.
 * When stderr is a terminal it is verbose and repeats every 25 s; else it
 * makes one pass, prints only failures and answers slower than 1 s, and
 * exits 1 at the first server that does not respond.  A connection is kept
 * from one pass to the next, as LDM's ldmping keeps its RPC client.
 *
 * Differences from LDM's ldmping, on purpose: the port can be chosen
 * (host:port, [v6]:port, -P; LDM's always uses 388); there is no portmapper
 * fallback (LDM servers do not register with one), so the states
 * PMAP_CLNTED and MAPPED never appear; a server that serves only version 6
 * (PROG_MISMATCH for 5) is pinged with version 6 instead; any number of
 * servers may be given (LDM: 14).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ldmd/site/log.h"
#include "pqutils/common/cli.h"
#include "pqutils/net/ldmclient.h"

#define DEFAULT_INTERVAL 25 /* seconds between passes when interactive */
#define DEFAULT_TIMEO 10    /* seconds to connect, and to be answered */
#define SLOW_SECONDS 1      /* a slower answer is reported even when quiet */

static const char usage_text[] =
    "usage: ldmping [options] [host[:port] ...]\n"
    "options:\n"
    "  -h host[:port] a server to ping (may be repeated; default localhost);\n"
    "                 IPv6 as [addr]:port\n"
    "  -P port        port of the servers given without one (default: the\n"
    "                 registry's /server/port, else 388)\n"
    "  -S             speak TLS 1.3 and verify the server's certificate\n"
    "                 (the registry's /tls/ca; shows /tls/cert if set)\n"
    "  -t timeout     seconds to wait for each server (default 10)\n"
    "  -i interval    seconds between passes; 0: one pass (default 25 if\n"
    "                 stderr is a terminal, else 0)\n"
    "  -v             verbose: report every server (default on a terminal)\n"
    "  -q             quiet: report only failures and slow answers\n"
    "  -l dest        log to dest: \"\" syslog, \"-\" stderr, or a file\n"
    "  -x             debug\n"
    "exit: 0, or 1 for bad usage or (with -i 0) a server not responding\n";

/* One server and where the last attempt got. */
struct target {
  const char *spec; /* as given */
  struct ldmc_peer peer;
  ldm6_io *io;       /* kept between passes */
  uint32_t vers;     /* 5, or 6 for a server without version 5 */
  const char *state; /* NAMED, ADDRESSED, H_CLNTED or RESPONDING */
  uint64_t elapsed_us;
  char stat[700]; /* why it failed; empty when RESPONDING */
};

struct ldmping {
  struct cli cli;
  struct target *targets;
  int ntargets;
  bool verbose;
  unsigned interval;
  int timeout_ms;
  SSL_CTX *tls; /* -S, else NULL */
};

static bool is_version_mismatch(const ldm6_rpc_msg *hdr) {
  return hdr->type == LDM6_RPC_REPLY &&
         hdr->u.reply.reply_stat == LDM6_RPC_MSG_ACCEPTED &&
         hdr->u.reply.accept_stat == LDM6_RPC_PROG_MISMATCH &&
         hdr->u.reply.low <= LDM6_VERSION6 &&
         hdr->u.reply.high >= LDM6_VERSION6;
}

static void ping(struct target *t, int timeout_ms) {
  double t0 = cli_monotonic();
  ldm6_rpc_msg hdr;
  int rc;

  t->stat[0] = '\0';
  if (t->io == NULL) {
    bool unresolved = false;

    t->io = ldmc_connect(&t->peer, timeout_ms, &unresolved, t->stat,
                         sizeof t->stat);
    if (t->io == NULL) {
      t->state = unresolved ? "NAMED" : "ADDRESSED";
      goto done;
    }
  }
  t->state = "H_CLNTED";
  ldmc_watch(t->io); /* a stop ends the wait for the answer */
  memset(&hdr, 0, sizeof hdr);
  rc = ldmc_call(t->io, &t->peer, "NULLPROC", t->vers, LDM6_NULLPROC,
                 LDM6_T_VOID, NULL, LDM6_T_VOID, NULL, timeout_ms, &hdr,
                 t->stat, sizeof t->stat);
  if (rc == LDM6_IO_EREPLY && t->vers == LDM6_VERSION5 &&
      is_version_mismatch(&hdr)) {
    log_debug("%s does not serve version 5; pinging with version 6",
              t->peer.name);
    t->vers = LDM6_VERSION6;
    rc = ldmc_call(t->io, &t->peer, "NULLPROC", t->vers, LDM6_NULLPROC,
                   LDM6_T_VOID, NULL, LDM6_T_VOID, NULL, timeout_ms, NULL,
                   t->stat, sizeof t->stat);
  }
  ldmc_watch(NULL);
  if (rc == LDM6_IO_OK) {
    t->state = "RESPONDING";
    t->stat[0] = '\0';
  } else {
    ldm6_io_free(t->io); /* start again next time */
    t->io = NULL;
  }
done:
  t->elapsed_us = (uint64_t)((cli_monotonic() - t0) * 1e6);
}

static void report(const struct target *t) {
  long sec = (long)(t->elapsed_us / 1000000);
  long usec = (long)(t->elapsed_us % 1000000);

  if (strcmp(t->state, "RESPONDING") == 0)
    log_info("%10s %3ld.%06ld %4d   %-11s  %s", t->state, sec, usec,
             (int)t->peer.port, t->peer.host, t->stat);
  else
    log_error("%10s %3ld.%06ld %4d   %-11s  %s", t->state, sec, usec,
              (int)t->peer.port, t->peer.host, t->stat);
}

static int parse_args(struct ldmping *p, int argc, char **argv) {
  const char **specs = calloc((size_t)argc + 1, sizeof *specs);
  unsigned port = 0;
  int nspecs = 0, opt, rc, i;
  uint64_t v;

  if (specs == NULL) {
    fprintf(stderr, "%s: out of memory\n", p->cli.progname);
    return -1;
  }
  p->timeout_ms = DEFAULT_TIMEO * 1000;
  if (isatty(STDERR_FILENO)) {
    p->verbose = true;
    p->interval = DEFAULT_INTERVAL;
  }
  /* -q is quiet here (cli leaves a -q without a value to us), -v verbose:
   * the last of them wins. */
  while ((rc = cli_next_option(&p->cli, argc, argv, ":h:P:t:i:Sl:vqx",
                               usage_text, &opt)) == CLI_OPT_OWN) {
    switch (opt) {
    case 'q':
      p->verbose = false;
      p->cli.verbose = false; /* undo an earlier -v */
      break;
    case 'h':
      specs[nspecs++] = optarg;
      break;
    case 'P':
      if (ldmc_opt_port(&p->cli, usage_text, optarg, &port) != 0)
        goto bad;
      break;
    case 't':
      if (ldmc_opt_uint(&p->cli, usage_text, "timeout", optarg, 1, 32767, &v) !=
          0)
        goto bad;
      p->timeout_ms = (int)v * 1000;
      break;
    case 'i':
      if (ldmc_opt_uint(&p->cli, usage_text, "interval", optarg, 0, 86400,
                        &v) != 0)
        goto bad;
      p->interval = (unsigned)v;
      break;
    case 'S':
      if (p->tls == NULL && ldmc_opt_tls(&p->tls) != 0)
        goto bad;
      break;
    }
  }
  if (rc != CLI_OPT_DONE)
    goto bad;
  if (p->cli.verbose) /* -v, not undone by a later -q */
    p->verbose = true;
  for (; optind < argc; optind++)
    specs[nspecs++] = argv[optind];
  if (nspecs == 0)
    specs[nspecs++] = "localhost";

  p->targets = calloc((size_t)nspecs, sizeof *p->targets);
  if (p->targets == NULL) {
    fprintf(stderr, "%s: out of memory\n", p->cli.progname);
    goto bad;
  }
  for (i = 0; i < nspecs; i++) {
    struct target *t = &p->targets[p->ntargets++];

    t->spec = specs[i];
    t->vers = LDM6_VERSION5;
    if (ldmc_opt_peer(&p->cli, usage_text, specs[i], &port, &t->peer) != 0)
      goto bad;
    t->peer.tls = p->tls;
  }
  free(specs);
  return 0;
bad:
  free(specs);
  return -1;
}

int main(int argc, char **argv) {
  static struct ldmping p;
  int status = 0, i;

  cli_init(&p.cli, argv[0]);
  ldm_log_set_level(LDM_LOG_INFO); /* LDM's ldmping: verbosity is -v/-q */
  if (parse_args(&p, argc, argv) != 0) {
    free(p.targets);
    return 1;
  }
  cli_signals();
  if (p.verbose)
    log_info("%10s %10s %4s   %-21s %s", "State", "Elapsed", "Port",
             "Remote_Host", "rpc_stat");
  while (!cli_stopping() && status == 0) {
    for (i = 0; i < p.ntargets && !cli_stopping(); i++) {
      struct target *t = &p.targets[i];

      ping(t, p.timeout_ms);
      if (cli_stopping())
        break; /* an attempt a stop cut short tells nothing */
      if (p.verbose || t->elapsed_us > SLOW_SECONDS * 1000000u ||
          strcmp(t->state, "RESPONDING") != 0)
        report(t);
      if (p.interval == 0 && strcmp(t->state, "RESPONDING") != 0) {
        status = 1;
        break;
      }
    }
    if (p.interval == 0)
      break;
    double end = cli_monotonic() + p.interval;
    while (!cli_stopping() && cli_monotonic() < end) {
      cli_sleep(end - cli_monotonic());
      (void)cli_stats_requested(); /* SIGUSR1 only reopens the log */
    }
  }
  for (i = 0; i < p.ntargets; i++)
    ldm6_io_free(p.targets[i].io);
  free(p.targets);
  SSL_CTX_free(p.tls);
  return status;
}
