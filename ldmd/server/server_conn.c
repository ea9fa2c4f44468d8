/*
 * server_conn.c - one accepted connection, in its own child process: who
 * the peer is (address, then reverse-DNS name, and on a TLS connection its
 * certificate), whether ALLOW or ACCEPT lets it in, and the call loop that
 * dispatches each ONC RPC call by version and procedure to the handlers of
 * upstream.c and hiya.c.
 *
 * The loop is where a bad peer ends: a record that is not an RPC message,
 * truncated, too long or garbage ends this connection (and only this
 * process) with a log line, as does silence longer than LDM's 120 s before
 * the connection is turned around or during a push, and a first call that
 * is not whole within /server/first-call-limit of the connection's start
 * (a peer that sends nothing, or a byte at a time: slowloris).  Undecodable
 * arguments get GARBAGE_ARGS, unknown procedures PROC_UNAVAIL, versions other
 * than 4-6 PROG_MISMATCH, and the connection goes on, as LDM's RPC library
 * does. Waits are cut into slices of at most a second, and SIGTERM cuts any
 * wait short (ldm6_io_set_cancel()), so that it is seen promptly.  After
 * HIYA, long product records are streamed into the queue (receive.c)
 * instead of being gathered whole.
 *
 * One port serves plain LDM-6 and TLS: the first byte a peer sends is
 * looked at before anything is read (rpc_io.h, ldm6_io_peek()).  0x16, a
 * TLS handshake record, starts TLS when the server has a certificate
 * (registry /tls/cert); anything else is LDM-6 as always, so LDM peers see
 * no change.
 */
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ldmd/proto/ldm6_xdr.h"
#include "ldmd/site/log.h"
#include "ldmd/server/clock.h"
#include "ldmd/server/peername.h"
#include "ldmd/server/server.h"

#define REPLY_BUF 12288       /* the largest result: a RECLASS class */
#define RESOLVE_WARN_MS 10000 /* LDM's slow name-lookup threshold */
#define DENY_LINGER_MS 1000   /* reading after a refusal, before closing */

int ldmd_conn_deadline_left_ms(const ldmd_conn *c) {
  int64_t left;

  if (c->deadline_ms == 0)
    return -1;
  left = c->deadline_ms - ldmd_now_ms();
  return left <= 0 ? 0 : left > INT_MAX ? INT_MAX : (int)left;
}

const char *ldmd_conn_peer(const ldmd_conn *c) {
  return c->peer;
}

int ldmd_conn_reply(ldmd_conn *c, uint32_t xid, int type, const void *value) {
  uint8_t buf[REPLY_BUF];
  struct iovec iov = {buf, 0};
  int rc;

  if (type != LDM6_T_VOID) {
    rc = ldm6_encode((ldm6_type)type, value, buf, sizeof buf, &iov.iov_len);
    if (rc != 0) {
      log_error("cannot encode a %s reply to %s: %s",
                ldm6_type_name((ldm6_type)type), c->peer, ldm6_strerror(rc));
      return ldmd_conn_reply_error(c, xid, LDM6_RPC_SYSTEM_ERR);
    }
  }
  rc = ldm6_io_reply(c->io, xid, &iov, iov.iov_len > 0 ? 1 : 0);
  if (rc == LDM6_IO_STOPPED)
    return LDMD_FAIL; /* the server stops: nothing to say */
  if (rc != LDM6_IO_OK) {
    log_notice("cannot reply to %s: %s %s", c->peer, ldm6_io_strerror(rc),
               ldm6_io_detail(c->io));
    return LDMD_FAIL;
  }
  return LDMD_CONTINUE;
}

int ldmd_conn_reply_error(ldmd_conn *c, uint32_t xid, uint32_t accept_stat) {
  int rc = ldm6_io_reply_error(c->io, xid, accept_stat);

  if (rc == LDM6_IO_STOPPED)
    return LDMD_FAIL; /* the server stops: nothing to say */
  if (rc != LDM6_IO_OK) {
    log_notice("cannot reply to %s: %s %s", c->peer, ldm6_io_strerror(rc),
               ldm6_io_detail(c->io));
    return LDMD_FAIL;
  }
  return LDMD_CONTINUE;
}

/* ---------------------------------------------------------------------- */
/* Who is there                                                           */
/* ---------------------------------------------------------------------- */

/* An IPv4-mapped IPv6 address (an IPv4 peer on a dual-stack listener) as
 * the IPv4 address it is, so that its name is looked up as an IPv4
 * peer's: the reverse zone (and /etc/hosts) knows 1.2.3.4, not
 * ::ffff:1.2.3.4. */
static void unmap(struct sockaddr_storage *ss, socklen_t *sl) {
  const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;
  struct sockaddr_in s4;

  if (ss->ss_family != AF_INET6 || !IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr))
    return;
  memset(&s4, 0, sizeof s4);
  s4.sin_family = AF_INET;
  s4.sin_port = s6->sin6_port;
  memcpy(&s4.sin_addr, &s6->sin6_addr.s6_addr[12], 4);
  memcpy(ss, &s4, sizeof s4);
  *sl = sizeof s4;
}

/* The reverse-DNS name of the peer, kept only if forward-confirmed
 * (peername.h): an unconfirmed name is logged and never matched nor
 * shown as the peer's. */
static void resolve_name(ldmd_conn *c) {
  struct sockaddr_storage ss;
  socklen_t sl = sizeof ss;
  char host[NI_MAXHOST];
  int64_t t0 = ldmd_now_ms(), took;
  int rc;

  if (getpeername(ldm6_io_fd(c->io), (struct sockaddr *)&ss, &sl) != 0)
    return;
  unmap(&ss, &sl);
  rc = getnameinfo((struct sockaddr *)&ss, sl, host, sizeof host, NULL, 0,
                   NI_NAMEREQD);
  took = ldmd_now_ms() - t0;
  if (took >= RESOLVE_WARN_MS)
    log_warning("resolving the name of %s took %lld ms", c->ip,
                (long long)took);
  if (rc != 0) {
    log_debug("no name for %s: %s", c->ip, gai_strerror(rc));
    return;
  }
  if (!ldmd_name_confirmed(host, (struct sockaddr *)&ss, sl, NULL)) {
    log_notice("the name %s of %s is not confirmed by its addresses: "
               "matching and naming the peer by its address only",
               host, c->ip);
    return;
  }
  snprintf(c->name, sizeof c->name, "%s", host);
  c->named = true;
  snprintf(c->peer, sizeof c->peer, "%s (%s)", c->name, c->ip);
}

void ldmd_conn_tls_identity(ldmd_conn *c) {
  const ldm6_tls_peer *t = ldm6_io_tls_peer(c->io);
  size_t i;

  memset(&c->tls_id, 0, sizeof c->tls_id);
  c->tls = NULL;
  if (!t->tls)
    return;
  for (i = 0; i < t->ndns; i++)
    c->tls_dns[i] = t->dns[i];
  c->tls_id.tls = true;
  c->tls_id.cert = t->cert;
  c->tls_id.verified = t->verified;
  c->tls_id.pin_ok = t->pin_ok;
  c->tls_id.cn = t->cn[0] != '\0' ? t->cn : NULL;
  c->tls_id.dns = c->tls_dns;
  c->tls_id.ndns = t->ndns;
  memcpy(c->tls_id.spki_sha256, t->spki_sha256, sizeof t->spki_sha256);
  c->tls = &c->tls_id;
}

/* "TLS, CN=..., verified" or "plain LDM-6", for log lines. */
static void transport_text(const ldmd_conn *c, char *buf, size_t len) {
  const ldm6_tls_peer *t = ldm6_io_tls_peer(c->io);
  char who[1024];

  if (!t->tls) {
    snprintf(buf, len, "plain LDM-6");
    return;
  }
  ldm6_tls_peer_text(t, who, sizeof who);
  if (t->verified)
    snprintf(buf, len, "%s, %s, certificate %s, verified", t->version,
             t->cipher, who);
  else if (t->cert)
    snprintf(buf, len, "%s, %s, certificate %s, not verified: %s", t->version,
             t->cipher, who, t->verify_error);
  else
    snprintf(buf, len, "%s, %s, no certificate", t->version, t->cipher);
}

/* The first-call deadline closed the connection from who. */
static void log_deadline(const ldmd_conn *c, const char *who) {
  log_notice("no call from %s within %d s of connecting (%s): closing", who,
             c->set->first_call_ms / 1000, "/server/first-call-limit");
}

/*
 * Plain or TLS, as the first byte says; a TLS handshake is run here.  Both
 * the wait for the first byte and the handshake are inside the first-call
 * deadline (/server/first-call-limit, ldmd_conn_deadline_left_ms()), the
 * handshake also within LDMD_HANDSHAKE_MS.  @return 0 (go on), -1 (logged:
 * close)
 */
static int start_transport(ldmd_conn *c) {
  uint8_t first = 0;
  int left;
  int rc = ldm6_io_peek(c->io, ldmd_conn_deadline_left_ms(c), &first);

  if (rc != LDM6_IO_OK) {
    if (rc == LDM6_IO_CLOSED)
      log_info("connection from %s closed before its first call", c->ip);
    else if (rc == LDM6_IO_TIMEDOUT && ldmd_conn_deadline_left_ms(c) == 0)
      log_deadline(c, c->ip);
    else if (rc != LDM6_IO_STOPPED) /* a stop is no failure: nothing to say */
      log_notice("nothing from %s: %s %s: closing", c->ip, ldm6_io_strerror(rc),
                 ldm6_io_detail(c->io));
    return -1;
  }
  if (first != LDM6_TLS_RECORD_HANDSHAKE)
    return 0;
  if (c->set->tls_server == NULL) {
    log_warning("refusing a TLS handshake from %s: TLS is not configured "
                "(registry /tls/cert is not set)",
                c->ip);
    return -1;
  }
  left = ldmd_conn_deadline_left_ms(c);
  if (left == 0) {
    log_notice("no TLS handshake from %s within %d s of its connection: "
               "closing",
               c->ip, c->set->first_call_ms / 1000);
    return -1;
  }
  rc = ldm6_io_start_tls(c->io, c->set->tls_server, true, NULL,
                         left < LDMD_HANDSHAKE_MS ? left : LDMD_HANDSHAKE_MS);
  if (rc == LDM6_IO_STOPPED)
    return -1; /* the server stops: nothing to say */
  if (rc != LDM6_IO_OK) {
    log_notice("TLS handshake with %s failed: %s", c->ip,
               ldm6_io_detail(c->io));
    return -1;
  }
  ldmd_conn_tls_identity(c);
  return 0;
}

/* Refuse as LDM does: AUTH_TOOWEAK with xid 0, then close.  The peer's
 * first call is read and dropped for a moment, so that closing with it
 * unread does not reset the connection before the refusal is read. */
static void deny(ldmd_conn *c) {
  int64_t end = ldmd_now_ms() + DENY_LINGER_MS;
  ldm6_io_msg m;

  char how[1400];

  transport_text(c, how, sizeof how);
  log_notice("denying connection from %s because not allowed (%s)", c->peer,
             how);
  if (ldm6_io_reply_auth_error(c->io, 0, LDM6_RPC_AUTH_TOOWEAK) != LDM6_IO_OK)
    return;
  (void)shutdown(ldm6_io_fd(c->io), SHUT_WR);
  for (;;) {
    int64_t left = end - ldmd_now_ms();

    if (left <= 0 || ldm6_io_recv(c->io, (int)left, &m) != LDM6_IO_OK)
      return;
  }
}

/* The access check (docs/protocol.md §5.1): the address first, the
 * name only if the address is not enough.  The name is looked up in any
 * case, for the log ident and for ALLOW entries written with names. */
static bool admitted(ldmd_conn *c) {
  bool ok = ldm_conf_host_allowed_peer(c->set->conf, NULL, c->ip, c->tls);

  resolve_name(c);
  if (!ok && c->named)
    ok = ldm_conf_host_allowed_peer(c->set->conf, c->name, c->ip, c->tls);
  return ok;
}

/* ---------------------------------------------------------------------- */
/* Calls                                                                  */
/* ---------------------------------------------------------------------- */

/* IS_ALIVE: is that pid a connection child of the server, still alive? */
static int is_alive(ldmd_conn *c, const ldm6_io_msg *m) {
  uint32_t pid;
  size_t used;
  bool alive = false;
  size_t i;
  int rc;

  if (ldm6_decode(LDM6_T_UINT, m->body, m->body_len, &pid, &used) != 0) {
    log_warning("undecodable IS_ALIVE from %s", c->peer);
    return ldmd_conn_reply_error(c, m->hdr.xid, LDM6_RPC_GARBAGE_ARGS);
  }
  for (i = 0; i < c->nsiblings && !alive; i++)
    if ((uint32_t)c->siblings[i] == pid && pid != 0 &&
        (kill((pid_t)pid, 0) == 0 || errno == EPERM))
      alive = true;
  log_info("is_alive(%u) from %s: %s", (unsigned)pid, c->peer,
           alive ? "yes" : "no");
  rc = ldmd_conn_reply(c, m->hdr.xid, LDM6_T_BOOL, &alive);
  return rc == LDMD_CONTINUE ? LDMD_DONE : rc;
}

static int serve_v6(ldmd_conn *c, const ldm6_io_msg *m) {
  switch (m->hdr.u.call.proc) {
  case LDM6_NULLPROC:
    if (c->down != NULL) /* after HIYA: the flush of a push */
      return ldmd_product_flush(c, m);
    return ldmd_conn_reply(c, m->hdr.xid, LDM6_T_VOID, NULL);
  case LDM6_FEEDME:
  case LDM6_NOTIFYME:
    return ldmd_upstream(c, m);
  case LDM6_HIYA:
    return ldmd_hiya(c, m);
  case LDM6_HEREIS:
  case LDM6_COMINGSOON:
  case LDM6_BLKDATA:
    return ldmd_product_call(c, m);
  case LDM6_NOTIFICATION:
    log_warning("unexpected NOTIFICATION from %s ignored", c->peer);
    return LDMD_CONTINUE; /* one-way: never answered */
  case LDM6_IS_ALIVE:
    return is_alive(c, m);
  default:
    log_info("unknown procedure %u (version 6) from %s",
             (unsigned)m->hdr.u.call.proc, c->peer);
    return ldmd_conn_reply_error(c, m->hdr.xid, LDM6_RPC_PROC_UNAVAIL);
  }
}

/* Version 5: what LDM's own tools still use (ldmping, feedme). */
static int serve_v5(ldmd_conn *c, const ldm6_io_msg *m) {
  switch (m->hdr.u.call.proc) {
  case LDM6_NULLPROC:
    log_info("ldmping (version 5) from %s", c->peer);
    return ldmd_conn_reply(c, m->hdr.xid, LDM6_T_VOID, NULL);
  case LDM6_FEEDME:
    return ldmd_upstream(c, m);
  default:
    log_info("procedure %u of version 5 from %s is not served",
             (unsigned)m->hdr.u.call.proc, c->peer);
    return ldmd_conn_reply_error(c, m->hdr.xid, LDM6_RPC_PROC_UNAVAIL);
  }
}

static int dispatch(ldmd_conn *c, const ldm6_io_msg *m) {
  const ldm6_rpc_call *call = &m->hdr.u.call;

  if (call->rpcvers != LDM6_RPC_VERSION) {
    log_warning("ONC RPC version %u from %s", (unsigned)call->rpcvers, c->peer);
    return ldm6_io_reply_rpc_mismatch(c->io, m->hdr.xid) == LDM6_IO_OK
               ? LDMD_CONTINUE
               : LDMD_FAIL;
  }
  if (call->prog != LDM6_PROG) {
    log_warning("call of RPC program %u from %s", (unsigned)call->prog,
                c->peer);
    return ldmd_conn_reply_error(c, m->hdr.xid, LDM6_RPC_PROG_UNAVAIL);
  }
  switch (call->vers) {
  case LDM6_VERSION6:
    return serve_v6(c, m);
  case LDM6_VERSION5:
    return serve_v5(c, m);
  case LDM6_VERSION4:
    if (call->proc == LDM6_NULLPROC) {
      log_info("ldmping (version 4) from %s", c->peer);
      return ldmd_conn_reply(c, m->hdr.xid, LDM6_T_VOID, NULL);
    }
    return ldmd_conn_reply_error(c, m->hdr.xid, LDM6_RPC_PROC_UNAVAIL);
  default:
    log_info("LDM version %u from %s", (unsigned)call->vers, c->peer);
    return ldm6_io_reply_prog_mismatch(c->io, m->hdr.xid, LDM6_VERSION4,
                                       LDM6_VERSION6) == LDM6_IO_OK
               ? LDMD_CONTINUE
               : LDMD_FAIL;
  }
}

/* Serve calls until a handler ends the connection, the peer leaves or
 * breaks the protocol, it stays silent too long, or the server stops. */
static int call_loop(ldmd_conn *c) {
  int64_t last = ldmd_now_ms();

  for (;;) {
    ldm6_io_msg m;
    bool more = false;
    int rc;

    int wait = LDMD_SLICE_MS, left = ldmd_conn_deadline_left_ms(c);

    if (*c->set->stop)
      return LDMD_DONE;
    if (left >= 0 && left < wait)
      wait = left;
    /* After HIYA the data of long products is streamed into the queue. */
    if (c->down != NULL)
      rc = ldm6_io_recv_head(c->io, wait, LDMD_RECORD_HEAD, &m, &more);
    else
      rc = ldm6_io_recv(c->io, wait, &m);
    switch (rc) {
    case LDM6_IO_OK:
      break;
    case LDM6_IO_TIMEDOUT:
      ldmd_down_idle(c->down); /* NULL before HIYA */
      if (ldmd_conn_deadline_left_ms(c) == 0) {
        log_deadline(c, c->peer);
        return LDMD_DONE;
      }
      if (ldmd_now_ms() - last >= LDMD_IDLE_MS) {
        log_notice("no message from %s for %d s: closing", c->peer,
                   LDMD_IDLE_MS / 1000);
        return LDMD_DONE;
      }
      continue;
    case LDM6_IO_CLOSED:
      log_info("connection closed by %s", c->peer);
      return LDMD_DONE;
    case LDM6_IO_STOPPED: /* the server stops: no failure */
      return LDMD_DONE;
    case LDM6_IO_EPROTO:
      log_error("bad RPC record from %s: %s: closing", c->peer,
                ldm6_io_detail(c->io));
      return LDMD_FAIL;
    default:
      log_error("cannot read from %s: %s: closing", c->peer,
                ldm6_io_detail(c->io));
      return LDMD_FAIL;
    }
    last = ldmd_now_ms();
    if (more) {
      rc = ldmd_product_stream(c, &m, LDMD_IDLE_MS);
      if (rc != LDMD_CONTINUE)
        return rc;
      last = ldmd_now_ms();
      continue;
    }
    if (m.hdr.type != LDM6_RPC_CALL) {
      log_debug("stray reply (xid %u) from %s ignored", (unsigned)m.hdr.xid,
                c->peer);
      continue;
    }
    c->deadline_ms = 0; /* the first call came */
    rc = dispatch(c, &m);
    if (rc != LDMD_CONTINUE)
      return rc;
  }
}

static void log_push_summary(const ldmd_conn *c) {
  const ldmd_down_stats *st;

  if (c->down == NULL)
    return;
  st = ldmd_down_stats_get(c->down);
  log_notice("from %s: %llu products received, %llu inserted (%llu bytes), "
             "%llu duplicates, %llu too old, %llu unwanted, %llu not stored",
             c->peer, (unsigned long long)st->received,
             (unsigned long long)st->inserted, (unsigned long long)st->bytes,
             (unsigned long long)st->duplicates,
             (unsigned long long)st->too_old, (unsigned long long)st->unwanted,
             (unsigned long long)ldmd_down_lost(st));
}

int ldmd_conn_serve(const ldmd_settings *set, int fd, const pid_t *siblings,
                    size_t nsiblings) {
  ldmd_conn c;
  int rc;

  memset(&c, 0, sizeof c);
  c.set = set;
  /* Counted from here, right after accept(2): the name lookup is in it. */
  c.deadline_ms = ldmd_now_ms() +
                  (set->first_call_ms > 0 ? set->first_call_ms : LDMD_IDLE_MS);
  c.siblings = siblings;
  c.nsiblings = nsiblings;
  /* Calls are small until a push raises the limit (hiya.c). */
  c.io = ldm6_io_new(fd, LDM6_MAX_RPC_BUF);
  if (c.io == NULL) {
    log_error("cannot serve a connection: %s", strerror(ENOMEM));
    return 1;
  }
  /* SIGTERM ends any wait at once: a synchronous call may wait 60 s. */
  ldm6_io_set_cancel(c.io, set->stop);
  snprintf(c.ip, sizeof c.ip, "%s", ldm6_io_peer_addr(c.io));
  snprintf(c.name, sizeof c.name, "%s", c.ip);
  snprintf(c.peer, sizeof c.peer, "%s", c.ip);
  c.ms = ldmm_slot_at(set->metrics, set->metrics_slot);
  c.mfeeds = ldmm_feeds(set->metrics);
  if (start_transport(&c) != 0) {
    ldm6_io_free(c.io);
    return 0;
  }
  if (!admitted(&c)) {
    ldm_log_set_ident(c.name);
    deny(&c);
    ldm6_io_free(c.io);
    return 0;
  }
  ldm_log_set_ident(c.name);
  ldmm_describe(c.ms, LDMM_KIND_CONNECTION, c.peer, NULL);
  if (c.tls != NULL) {
    char how[1400];

    transport_text(&c, how, sizeof how);
    log_notice("TLS connection from %s port %u: %s", c.peer,
               ldm6_io_peer_port(c.io), how);
  } else {
    log_info("connection from %s port %u", c.peer, ldm6_io_peer_port(c.io));
  }
  rc = call_loop(&c);
  log_push_summary(&c);
  ldmd_down_free(c.down);
  if (c.pq != NULL)
    pq_close(c.pq);
  ldm6_io_free(c.io);
  return rc == LDMD_FAIL ? 1 : 0;
}
