/*
 * ldmsub.c - a subscribing client's request, sessions and reconnections
 * (ldmsub.h), shared by notifyme and feedme.
 */
#include "pqutils/net/ldmsub.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ldmd/proto/ldm6_text.h"
#include "ldmd/site/log.h"

/* Outcome of a connection. */
enum session_rc {
  SESS_OK,      /* the request was accepted (internal) */
  SESS_STOP,    /* a signal asked us to stop */
  SESS_RETRY,   /* the session ended; reconnect later */
  SESS_FAILED,  /* no session: connection or protocol failure */
  SESS_REFUSED, /* the server refused the request: give up */
  SESS_OUTPUT,  /* the output failed: give up */
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

void ldmc_sub_got(struct ldmc_sub *s, ldm6_timestamp arrival) {
  s->request.from = ts_next(arrival);
}

/* Log a failed transfer: "<what> <peer>: <why>". */
static void log_io_error(const struct ldmc_sub *s, const ldm6_io *io,
                         const char *what, int rc) {
  char why[256];

  ldmc_io_text(io, rc, why, sizeof why);
  log_error("%s %s: %s", what, s->peer.name, why);
}

/* Serve the turned-around connection until it ends.  A stop shuts the
 * socket down (ldmc_watch()), which ends any wait here at once. */
static enum session_rc serve(struct ldmc_sub *s, ldm6_io *io) {
  double last = cli_monotonic();

  for (;;) {
    ldm6_io_msg m;
    bool output = false;
    double quiet;
    int rc;

    if (cli_stopping())
      return SESS_STOP;
    quiet = cli_monotonic() - last;
    if (quiet >= s->total_s) {
      log_notice("nothing from %s for %d s", s->peer.name, s->total_s);
      return SESS_RETRY;
    }
    rc = ldm6_io_recv(io, (int)((s->total_s - quiet) * 1000) + 1, &m);
    if (rc != LDM6_IO_OK && cli_stopping())
      return SESS_STOP;
    if (rc == LDM6_IO_TIMEDOUT)
      continue;
    if (rc == LDM6_IO_CLOSED) {
      log_notice("%s closed the connection", s->peer.name);
      return SESS_RETRY;
    }
    if (rc != LDM6_IO_OK) {
      log_io_error(s, io, "lost the connection to", rc);
      return SESS_RETRY;
    }
    last = cli_monotonic();
    if (m.hdr.type != LDM6_RPC_CALL) {
      log_debug("ignoring a reply (xid %u) from %s", (unsigned)m.hdr.xid,
                s->peer.name);
      continue;
    }
    rc = s->dispatch(s->ctx, io, &m, &output);
    if (output)
      return SESS_OUTPUT;
    if (rc != LDM6_IO_OK && cli_stopping())
      return SESS_STOP;
    if (rc != LDM6_IO_OK) {
      log_io_error(s, io, "cannot answer", rc);
      return SESS_RETRY;
    }
  }
}

/* The request, following RECLASS answers.  @return SESS_OK or a failure. */
static enum session_rc request(struct ldmc_sub *s, ldm6_io *io) {
  bool v6 = s->vers == LDM6_VERSION6; /* fornme_reply_t, else ldm_replyt */
  ldm6_prod_class cls = s->request;
  ldm6_value rep;
  char text[9000];

  for (int round = 0; round < LDMC_SUB_MAX_RECLASS; round++) {
    char err[600];
    int rc =
        ldmc_call(io, &s->peer, s->what, s->vers, s->proc, LDM6_T_PROD_CLASS,
                  &cls, v6 ? LDM6_T_FORNME_REPLY : LDM6_T_REPLYT, &rep,
                  s->timeo_s * 1000, NULL, err, sizeof err);

    if (rc == LDMC_STOPPED)
      return SESS_STOP;
    if (rc == LDMC_DENIED) {
      log_error("%s", err);
      return SESS_REFUSED;
    }
    if (rc == LDM6_IO_EREPLY) {
      log_error("%s", err);
      return s->had_session ? SESS_RETRY : SESS_REFUSED;
    }
    if (rc != LDM6_IO_OK) {
      log_error("%s", err);
      return SESS_FAILED;
    }
    ldm6_errt code = v6 ? rep.fornme_reply.code : rep.replyt.code;
    const ldm6_prod_class *reclass =
        v6 ? &rep.fornme_reply.u.prod_class : &rep.replyt.u.reclass;
    switch (code) {
    case LDM6_OK:
      if (v6)
        log_info("%s accepted %s (upstream process %u)", s->peer.name, s->what,
                 (unsigned)rep.fornme_reply.u.id);
      else
        log_info("%s accepted %s", s->peer.name, s->what);
      return SESS_OK;
    case LDM6_BADPATTERN:
      log_error("%s refused %s: bad pattern (BADPATTERN)", s->peer.name,
                s->what);
      return SESS_REFUSED;
    case LDM6_RECLASS:
      if (reclass->psa_len == 0) {
        log_error("%s refused %s: none of the request is allowed "
                  "(empty RECLASS)",
                  s->peer.name, s->what);
        return SESS_REFUSED;
      }
      ldm6_class_format(reclass, text, sizeof text);
      log_notice("%s allows only %s: asking for that", s->peer.name, text);
      cls = *reclass;
      break;
    default:
      log_error("%s answered %s with %s", s->peer.name, s->what,
                ldm6_errt_name(code));
      return SESS_FAILED;
    }
  }
  log_error("%s answered RECLASS %d times in a row; giving up", s->peer.name,
            LDMC_SUB_MAX_RECLASS);
  return SESS_FAILED;
}

static enum session_rc session(struct ldmc_sub *s) {
  char err[700];
  ldm6_io *io =
      ldmc_connect(&s->peer, s->timeo_s * 1000, NULL, err, sizeof err);
  enum session_rc rc;

  if (io == NULL && cli_stopping())
    return SESS_STOP;
  if (io == NULL) {
    log_error("%s", err);
    return SESS_FAILED;
  }
  ldmc_watch(io);
  rc = request(s, io);
  if (rc == SESS_OK) {
    s->had_session = true;
    rc = serve(s, io);
  }
  if (s->ended != NULL)
    s->ended(s->ctx);
  ldmc_watch(NULL);
  ldm6_io_free(io);
  return rc;
}

enum ldmc_sub_end ldmc_sub_run(struct ldmc_sub *s) {
  char text[9000];

  ldm6_class_format(&s->request, text, sizeof text);
  log_notice("Starting Up: %s: %s", s->peer.name, text); /* LDM's words */
  for (;;) {
    enum session_rc rc = session(s);

    if (rc == SESS_STOP || cli_stopping())
      return LDMC_SUB_STOPPED;
    if (rc == SESS_OUTPUT)
      return LDMC_SUB_OUTPUT;
    if (rc == SESS_REFUSED)
      return LDMC_SUB_REFUSED;
    if (!s->had_session)
      return LDMC_SUB_CONNECT;
    log_notice("reconnecting to %s in %d s", s->peer.name, s->retry_s);
    double end = cli_monotonic() + s->retry_s;
    while (!cli_stopping() && cli_monotonic() < end) {
      cli_sleep(end - cli_monotonic());
      (void)cli_stats_requested(); /* SIGUSR1 only reopens the log */
    }
    if (cli_stopping())
      return LDMC_SUB_STOPPED;
  }
}

int ldmc_sub_take(struct cli *c, const char *usage, int opt, const char *arg,
                  struct ldmc_sub *s, const char **pattern, int *offset) {
  int rc = 0;

  switch (opt) {
  case 'p':
    *pattern = arg;
    return 1;
  case 'o':
    rc = ldmc_opt_secs(c, usage, opt, arg, 0, (uint64_t)time(NULL), offset);
    break;
  case 't':
    rc = ldmc_opt_secs(c, usage, opt, arg, 1, 32767, &s->timeo_s);
    break;
  case 'T':
    rc = ldmc_opt_secs(c, usage, opt, arg, 1, INT32_MAX / 1000, &s->total_s);
    break;
  default:
    return 0;
  }
  return rc != 0 ? -1 : 1;
}

const char *ldmc_sub_vet_pattern(const char *pattern) {
  while (strlen(pattern) > 2 && pattern[0] == '.' && pattern[1] == '*')
    pattern += 2;
  return pattern;
}

int ldmc_sub_class(struct cli *c, const char *usage, uint32_t feedtype,
                   const char *pattern, int offset, ldm6_prod_class *out) {
  pq_class cls;

  if (cli_make_class(c, &cls, PQ_TS_ZERO, feedtype, pattern) != 0) {
    fputs(usage, stderr);
    return -1;
  }
  pq_class_free(&cls);
  memset(out, 0, sizeof *out);
  out->from.tv_sec = (int32_t)(time(NULL) - offset);
  out->to.tv_sec = INT32_MAX;
  out->to.tv_usec = 999999;
  out->psa_len = 1;
  out->psa[0].feedtype = feedtype;
  snprintf(out->psa[0].pattern, sizeof out->psa[0].pattern, "%s", pattern);
  return 0;
}
