/*
 * ldmclient.c - the shared part of the LDM protocol clients: naming a server
 * (host, host:port, IPv6 in brackets, the registry's port), connecting
 * (through the protocol library), one synchronous call (rpc_io's loop,
 * ldm6_io_await_reply(), which tells LDM's refusal, AUTH_TOOWEAK often with
 * xid 0, apart from a closed connection; here the arguments encoded, the
 * results decoded and every outcome put in words for the user), and the
 * command-line options they have in common (the text of a product class is
 * the protocol library's, ldmd/proto/ldm6_text.h).  Kept apart from the four
 * programs (notifyme, ldmsend, ldmping, rtstats) so that they parse hosts
 * and options and report failures the same way.
 *
 * Connecting is the protocol library's (ldm6_io_connect_stop(): every
 * address of the name within the one timeout, the attempts overlapping),
 * given the stop pipe (cli_io_stop_fd()) to poll beside its attempts, so
 * that a stop ends the connect at once even if it comes just before the
 * wait; here only the words for a stop and the TLS handshake are added.
 * Once connected the socket is rpc_io's, whose waits a stop ends by
 * shutting the watched socket down (ldmc_watch()).
 */
#include "pqutils/net/ldmclient.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ldmd/site/log.h"
#include "ldmd/site/registry.h"
#include "pqutils/common/cli_io.h"

/* Largest encoded argument: a class of 32 specs with 255-byte patterns is
 * about 8.5 KiB; a prod_info about 370 bytes. */
#define ARG_MAX (16u * 1024u)

int ldmc_parse_port(const char *s, unsigned *port) {
  unsigned long v = 0;
  size_t i;

  if (s == NULL || s[0] == '\0' || strlen(s) > 5)
    return -1;
  for (i = 0; s[i] != '\0'; i++) {
    if (s[i] < '0' || s[i] > '9')
      return -1;
    v = v * 10 + (unsigned long)(s[i] - '0');
  }
  if (v < 1 || v > 65535)
    return -1;
  *port = (unsigned)v;
  return 0;
}

static void peer_name(struct ldmc_peer *p) {
  if (strchr(p->host, ':') != NULL)
    snprintf(p->name, sizeof p->name, "[%s]:%u", p->host, p->port);
  else
    snprintf(p->name, sizeof p->name, "%s:%u", p->host, p->port);
}

int ldmc_parse_peer(const char *spec, unsigned default_port,
                    struct ldmc_peer *p, char *err, size_t errlen) {
  const char *host = spec;
  const char *port = NULL;
  size_t hostlen;

  memset(p, 0, sizeof *p);
  if (spec[0] == '[') {
    const char *close = strchr(spec, ']');

    if (close == NULL) {
      snprintf(err, errlen, "bad host \"%s\": no ']' after the address", spec);
      return -1;
    }
    host = spec + 1;
    hostlen = (size_t)(close - host);
    if (close[1] == ':') {
      port = close + 2;
    } else if (close[1] != '\0') {
      snprintf(err, errlen,
               "bad host \"%s\": expected \"[address]\" or "
               "\"[address]:port\"",
               spec);
      return -1;
    }
  } else {
    const char *colon = strchr(spec, ':');

    if (colon != NULL && strchr(colon + 1, ':') == NULL) {
      hostlen = (size_t)(colon - spec);
      port = colon + 1;
    } else {
      hostlen = strlen(spec); /* no port, or a bare IPv6 address */
    }
  }
  if (hostlen == 0) {
    snprintf(err, errlen, "bad host \"%s\": no host name or address", spec);
    return -1;
  }
  if (hostlen > LDMC_HOST_MAX) {
    snprintf(err, errlen, "bad host: longer than %d characters", LDMC_HOST_MAX);
    return -1;
  }
  memcpy(p->host, host, hostlen);
  p->host[hostlen] = '\0';
  if (port != NULL) {
    if (ldmc_parse_port(port, &p->port) != 0) {
      snprintf(err, errlen, "bad port \"%s\" in \"%s\": expected 1 to 65535",
               port, spec);
      return -1;
    }
    p->port_given = true;
  } else {
    p->port = default_port;
  }
  peer_name(p);
  return 0;
}

void ldmc_peer_default_port(struct ldmc_peer *p, unsigned port) {
  if (p->port_given)
    return;
  p->port = port;
  peer_name(p);
}

unsigned ldmc_registry_port(char *err, size_t errlen) {
  ldm_registry *reg = NULL;
  uint64_t v = 0;
  char why[512] = "";
  unsigned port = LDMC_PORT_DEFAULT;

  err[0] = '\0';
  if (ldm_reg_open(NULL, &reg, why, sizeof why) != LDM_REG_OK) {
    snprintf(err, errlen, "cannot read the registry (using port %u): %s",
             LDMC_PORT_DEFAULT, why);
    return port;
  }
  if (ldm_reg_get_uint(reg, REG_PORT, &v) == LDM_REG_OK) {
    if (v >= 1 && v <= 65535)
      port = (unsigned)v;
    else
      snprintf(err, errlen, "the registry's %s, %llu, is not a port (using %u)",
               REG_PORT, (unsigned long long)v, LDMC_PORT_DEFAULT);
  } else {
    snprintf(err, errlen, "cannot get %s from the registry %s (using %u): %s",
             REG_PORT, ldm_reg_path(reg), LDMC_PORT_DEFAULT,
             ldm_reg_error(reg));
  }
  ldm_reg_close(reg);
  return port;
}

static int start_tls(ldm6_io *io, const struct ldmc_peer *p, int64_t deadline,
                     char *err, size_t errlen);

ldm6_io *ldmc_connect(const struct ldmc_peer *p, int timeout_ms,
                      bool *unresolved, char *err, size_t errlen) {
  int64_t deadline = cli_now_ms() + timeout_ms; /* the TLS handshake's too */
  bool unres = false;
  ldm6_io *io;

  if (unresolved != NULL)
    *unresolved = false;
  if (cli_io_stopping()) {
    io = NULL;
    errno = EINTR;
  } else {
    io = ldm6_io_connect_stop(p->host, p->port, timeout_ms, cli_io_stop_fd(),
                              &unres, err, errlen);
  }
  if (io == NULL) {
    int saved = errno;

    if (unresolved != NULL)
      *unresolved = unres;
    if (!unres && saved == EINTR && cli_io_stopping())
      snprintf(err, errlen, "stopped while connecting to %s", p->name);
    errno = saved;
    return NULL;
  }
  if (p->tls != NULL && start_tls(io, p, deadline, err, errlen) != 0) {
    ldm6_io_free(io);
    errno = cli_io_stopping() ? EINTR : EPROTO; /* EINTR: a stop */
    return NULL;
  }
  return io;
}

/* TLS on a connected io (ldmc_peer.tls): the handshake within the time
 * left, then the server's certificate must verify and name the host.
 * @return 0, or -1 with the message in err (the caller frees io) */
static int start_tls(ldm6_io *io, const struct ldmc_peer *p, int64_t deadline,
                     char *err, size_t errlen) {
  const ldm6_tls_peer *t;
  int rc;

  /* A stop shuts the socket down, which ends the handshake's waits. */
  cli_io_watch_socket(ldm6_io_fd(io));
  rc = ldm6_io_start_tls(io, p->tls, false, p->host, cli_left_ms(deadline));
  cli_io_watch_socket(-1);
  if (rc != LDM6_IO_OK) {
    if (cli_io_stopping())
      snprintf(err, errlen, "stopped during the TLS handshake with %s",
               p->name);
    else
      snprintf(err, errlen, "TLS with %s failed: %s", p->name,
               ldm6_io_detail(io));
    return -1;
  }
  t = ldm6_io_tls_peer(io);
  if (!t->verified) {
    snprintf(err, errlen, "refusing %s: its certificate is not verified: %s",
             p->name, t->verify_error);
    return -1;
  }
  if (!ldm6_io_tls_names_host(io, p->host)) {
    snprintf(err, errlen,
             "refusing %s: its certificate (CN=%s) does not name %s", p->name,
             t->cn, p->host);
    return -1;
  }
  return 0;
}

int ldmc_opt_tls(SSL_CTX **ctx) {
  char cert[4096] = "", key[4096] = "", ca[4096] = "", why[512] = "";
  ldm_registry *reg = NULL;

  *ctx = NULL;
  if (ldm_reg_open(NULL, &reg, why, sizeof why) != LDM_REG_OK) {
    log_error("-S: cannot read the registry: %s", why);
    return -1;
  }
  if (ldm_reg_get_string(reg, REG_TLS_CA, ca, sizeof ca) != LDM_REG_OK ||
      ldm_reg_get_string(reg, REG_TLS_CERT, cert, sizeof cert) != LDM_REG_OK ||
      ldm_reg_get_string(reg, REG_TLS_KEY, key, sizeof key) != LDM_REG_OK) {
    log_error("-S: cannot read /tls from the registry %s: %s",
              ldm_reg_path(reg), ldm_reg_error(reg));
    ldm_reg_close(reg);
    return -1;
  }
  if (ca[0] == '\0') {
    log_error("-S: the registry %s sets no %s: no server could be verified",
              ldm_reg_path(reg), REG_TLS_CA);
    ldm_reg_close(reg);
    return -1;
  }
  ldm_reg_close(reg);
  *ctx = ldm6_tls_ctx_new(false, cert, key, ca, why, sizeof why);
  if (*ctx == NULL) {
    log_error("-S: %s", why);
    return -1;
  }
  return 0;
}

void ldmc_watch(const ldm6_io *io) {
  cli_io_watch_socket(io != NULL ? ldm6_io_fd(io) : -1);
}

const char *ldmc_io_text(const ldm6_io *io, int rc, char *buf, size_t len) {
  const char *detail = io != NULL ? ldm6_io_detail(io) : "";

  snprintf(buf, len, "%s%s%s", ldm6_io_strerror(rc),
           detail[0] != '\0' ? ": " : "", detail);
  return buf;
}

void ldmc_reply_error_text(const ldm6_rpc_msg *hdr, char *buf, size_t len) {
  const ldm6_rpc_reply *r = &hdr->u.reply;

  if (r->reply_stat == LDM6_RPC_MSG_DENIED) {
    if (r->reject_stat == LDM6_RPC_AUTH_ERROR &&
        r->auth_stat == LDM6_RPC_AUTH_TOOWEAK)
      snprintf(buf, len, "not allowed (AUTH_TOOWEAK)");
    else if (r->reject_stat == LDM6_RPC_AUTH_ERROR)
      snprintf(buf, len, "not allowed (authentication error %u)",
               (unsigned)r->auth_stat);
    else
      snprintf(buf, len, "RPC version mismatch (server has %u-%u)",
               (unsigned)r->low, (unsigned)r->high);
    return;
  }
  switch (r->accept_stat) {
  case LDM6_RPC_SUCCESS:
    snprintf(buf, len, "success");
    break;
  case LDM6_RPC_PROG_UNAVAIL:
    snprintf(buf, len, "program %u unavailable (not an LDM server?)",
             LDM6_PROG);
    break;
  case LDM6_RPC_PROG_MISMATCH:
    snprintf(buf, len, "program version mismatch (server has %u-%u)",
             (unsigned)r->low, (unsigned)r->high);
    break;
  case LDM6_RPC_PROC_UNAVAIL:
    snprintf(buf, len, "procedure unavailable (PROC_UNAVAIL)");
    break;
  case LDM6_RPC_GARBAGE_ARGS:
    snprintf(buf, len, "arguments not understood (GARBAGE_ARGS)");
    break;
  case LDM6_RPC_SYSTEM_ERR:
    snprintf(buf, len, "system error at the server (SYSTEM_ERR)");
    break;
  default:
    snprintf(buf, len, "error reply %u", (unsigned)r->accept_stat);
    break;
  }
}

/* A call ended by a stop (the watched socket was shut down). */
static int stopped(const struct ldmc_peer *p, const char *what, char *err,
                   size_t errlen) {
  snprintf(err, errlen, "stopped while waiting for %s to answer %s", p->name,
           what);
  return LDMC_STOPPED;
}

/* The message, and the result, of a wait for an answer that did not end
 * in an answer (ldm6_io_await_reply()'s I/O failures; m holds a call that
 * came instead, if one did). */
static int no_answer(ldm6_io *io, const struct ldmc_peer *p, const char *what,
                     int rc, const ldm6_io_msg *m, int timeout_ms, char *err,
                     size_t errlen) {
  char why[256];

  if (rc == LDM6_IO_EPROTO && m->hdr.type == LDM6_RPC_CALL) {
    snprintf(err, errlen,
             "%s made a call (procedure %u) instead of answering %s", p->name,
             (unsigned)m->hdr.u.call.proc, what);
    return rc;
  }
  if (cli_io_stopping())
    return stopped(p, what, err, errlen);
  if (rc == LDM6_IO_TIMEDOUT)
    snprintf(err, errlen, "no answer to %s from %s within %d s", what, p->name,
             (timeout_ms + 999) / 1000);
  else if (rc == LDM6_IO_CLOSED)
    snprintf(err, errlen, "%s closed the connection before answering %s",
             p->name, what);
  else
    snprintf(err, errlen, "cannot get the answer to %s from %s: %s", what,
             p->name, ldmc_io_text(io, rc, why, sizeof why));
  return rc;
}

/* The results of an answer m (ldm6_io_await_reply() gave rc, one of
 * LDM6_IO_OK, LDM6_IO_DENIED, LDM6_IO_EREPLY), decoded into res. */
static int answer(const struct ldmc_peer *p, const char *what, int rc,
                  const ldm6_io_msg *m, ldm6_type res_type, void *res,
                  char *err, size_t errlen) {
  char why[128];
  size_t used = 0;

  if (rc == LDM6_IO_DENIED) {
    ldmc_reply_error_text(&m->hdr, why, sizeof why);
    snprintf(err, errlen, "%s refused %s: %s", p->name, what, why);
    return LDMC_DENIED;
  }
  if (rc == LDM6_IO_EREPLY) {
    ldmc_reply_error_text(&m->hdr, why, sizeof why);
    snprintf(err, errlen, "%s answered %s with an error: %s", p->name, what,
             why);
    return rc;
  }
  if (res_type == LDM6_T_VOID)
    return LDM6_IO_OK;
  rc = ldm6_decode(res_type, m->body, m->body_len, res, &used);
  if (rc != 0) {
    snprintf(err, errlen, "cannot decode the answer to %s from %s: %s", what,
             p->name, ldm6_strerror(rc));
    return LDMC_EDECODE;
  }
  return LDM6_IO_OK;
}

int ldmc_call(ldm6_io *io, const struct ldmc_peer *p, const char *what,
              uint32_t vers, uint32_t proc, ldm6_type arg_type, const void *arg,
              ldm6_type res_type, void *res, int timeout_ms,
              ldm6_rpc_msg *reply, char *err, size_t errlen) {
  uint8_t buf[ARG_MAX];
  size_t len = 0;
  struct iovec iov;
  uint32_t xid = 0;
  ldm6_io_msg m;
  int rc;

  if (arg_type != LDM6_T_VOID) {
    rc = ldm6_encode(arg_type, arg, buf, sizeof buf, &len);
    if (rc != 0) {
      snprintf(err, errlen, "cannot encode %s for %s: %s", what, p->name,
               ldm6_strerror(rc));
      return LDM6_IO_EPROTO;
    }
  }
  iov.iov_base = buf;
  iov.iov_len = len;
  rc = ldm6_io_send_call(io, vers, proc, len > 0 ? &iov : NULL, len > 0 ? 1 : 0,
                         &xid);
  if (rc != LDM6_IO_OK && cli_io_stopping())
    return stopped(p, what, err, errlen);
  if (rc != LDM6_IO_OK) {
    char why[256];

    snprintf(err, errlen, "cannot send %s to %s: %s", what, p->name,
             ldmc_io_text(io, rc, why, sizeof why));
    return rc;
  }
  m.hdr.type = LDM6_RPC_REPLY; /* no call came (yet) */
  rc = ldm6_io_await_reply(io, xid, timeout_ms, &m);
  if (rc != LDM6_IO_OK && rc != LDM6_IO_DENIED && rc != LDM6_IO_EREPLY)
    return no_answer(io, p, what, rc, &m, timeout_ms, err, errlen);
  if (reply != NULL)
    *reply = m.hdr;
  return answer(p, what, rc, &m, res_type, res, err, errlen);
}

/* ---- command line ---- */

int ldmc_opt_port(struct cli *c, const char *usage, const char *arg,
                  unsigned *port) {
  if (ldmc_parse_port(arg, port) != 0) {
    cli_usage_error(c, usage, "bad port \"%s\": expected 1 to 65535", arg);
    return -1;
  }
  return 0;
}

int ldmc_opt_peer(struct cli *c, const char *usage, const char *spec,
                  unsigned *port, struct ldmc_peer *p) {
  char err[300];

  if (ldmc_parse_peer(spec, LDMC_PORT_DEFAULT, p, err, sizeof err) != 0) {
    cli_usage_error(c, usage, "%s", err);
    return -1;
  }
  if (*port == 0 && !p->port_given) {
    *port = ldmc_registry_port(err, sizeof err);
    if (err[0] != '\0')
      log_warning("%s", err);
  }
  ldmc_peer_default_port(p, *port);
  return 0;
}

int ldmc_opt_feedtype(struct cli *c, const char *usage, const char *arg,
                      uint32_t *feedtype) {
  if (cli_parse_feedtype(c, arg, feedtype) != 0) {
    fputs(usage, stderr);
    return -1;
  }
  return 0;
}

int ldmc_opt_uint(struct cli *c, const char *usage, const char *what,
                  const char *arg, uint64_t lo, uint64_t hi, uint64_t *out) {
  uint64_t v;

  if (cli_parse_uint(c, what, arg, hi, &v) != 0) {
    fputs(usage, stderr);
    return -1;
  }
  if (v < lo) {
    cli_usage_error(c, usage, "bad %s \"%s\": at least %llu", what, arg,
                    (unsigned long long)lo);
    return -1;
  }
  *out = v;
  return 0;
}

int ldmc_opt_secs(struct cli *c, const char *usage, int opt, const char *arg,
                  uint64_t lo, uint64_t hi, int *out) {
  char what[32];
  uint64_t v;

  snprintf(what, sizeof what, "-%c value", opt);
  if (ldmc_opt_uint(c, usage, what, arg, lo, hi, &v) != 0)
    return -1;
  *out = (int)v;
  return 0;
}

int ldmc_opts_take(struct cli *c, const char *usage, int opt, const char *arg,
                   struct ldmc_opts *o) {
  switch (opt) {
  case 'h':
    o->host = arg;
    return 1;
  case 'P':
    return ldmc_opt_port(c, usage, arg, &o->port) != 0 ? -1 : 1;
  case 'f':
    return ldmc_opt_feedtype(c, usage, arg, &o->feedtype) != 0 ? -1 : 1;
  case 'S':
    o->tls = true;
    return 1;
  default:
    return 0;
  }
}

int ldmc_opts_peer(struct cli *c, const char *usage, struct ldmc_opts *o,
                   struct ldmc_peer *p) {
  if (ldmc_opt_peer(c, usage, o->host, &o->port, p) != 0)
    return -1;
  return o->tls ? ldmc_opt_tls(&p->tls) : 0;
}
