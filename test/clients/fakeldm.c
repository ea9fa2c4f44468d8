/*
 * fakeldm.c - a scripted LDM server for testing the protocol clients
 * (notifyme, ldmsend, ldmping) on the wire, built on the same transport
 * (ldmd/proto/rpc_io) and codec (ldmd/proto/ldm6_xdr) as they are, but
 * independent of ldmd: each mode plays one side of one LDM exchange, answers as
 * told (OK, RECLASS, BADPATTERN, DONT_SEND, AUTH_TOOWEAK...), and writes what
 * the client did into a report file that the shell tests read, one line
 * per event.  Anything a client must not do (answer a one-way call, make a
 * call it should not) is reported as "stray".
 *
 * usage: fakeldm -m notify|hiya|feed5|ping|full -a addr -p portfile -o report
 *                [-r answer] [-n count] [-H max_hereis] [-R pattern]
 *                [-D substring] [-c connections] [-K] [-T seconds] [-d dir]
 *
 *   notify: answers NOTIFYME (-r ok, reclass, deny, badpattern, tooweak,
 *           tooweak0, systemerr), then makes a FEEDME call and a version-5
 *           call (both must be refused), sends -n NOTIFICATIONs from a
 *           fixed table and a NULLPROC, and waits for the client to close
 *           (-K: closes first).
 *   hiya:   answers HIYA (-r ok with -H max_hereis, reclass to -R
 *           pattern, dontsend, tooweak, tooweak0), then records HEREIS,
 *           COMINGSOON (DONT_SEND for idents containing -D) and BLKDATA,
 *           checking each product's MD5, writing its data to -d dir;
 *           -r stall answers HIYA OK, reports "stalled" and reads nothing
 *           more, so that the client's sends fill the socket and wait.
 *   feed5:  answers an LDM-5 FEEDME OK (reporting its class), then calls
 *           the client as an LDM-5 upstream, reporting each answer:
 *           connection 1: a HEREIS of "first product\n", a BLKDATA of no
 *           product announced, then COMINGSOON of a 20-byte product, 10
 *           bytes of it, and a close in the middle; connection 2 (-c 2):
 *           that product whole (COMINGSOON, two BLKDATA), then NULLPROC.
 *   ping:   answers NULLPROC (-r ok, v6only, slow, mute, tooweak0); mute
 *           reports every call and answers none, whatever its procedure.
 *   full:   accepts no connection: it listens with a backlog of 0 that a
 *           connection of its own fills, reports "full", and waits to be
 *           killed; a client's connection attempt then stays in SYN_SENT
 *           (its SYNs are dropped) until the client gives up.
 *
 * The port chosen by the kernel is written to the port file (atomically);
 * the process serves -c connections one after another, and dies after -T
 * seconds (default 60) whatever happens, so a broken client cannot hang a
 * test.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ldmd/proto/ldm6_xdr.h"
#include "ldmd/proto/rpc_io.h"

#define WAIT_MS 20000
#define BUF_MAX (16u * 1024u)

struct opts {
  const char *mode;
  const char *addr;
  const char *portfile;
  const char *report;
  const char *answer;
  const char *reclass_pattern;
  const char *dontsend;
  const char *dir;
  unsigned count;
  uint32_t max_hereis;
  unsigned connections;
  bool close_first;
  unsigned lifetime;
};

static FILE *report_fp;
static unsigned products_seen;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void say(const char *fmt, ...) {
  va_list ap;

  va_start(ap, fmt);
  vfprintf(report_fp, fmt, ap);
  va_end(ap);
  fputc('\n', report_fp);
  fflush(report_fp);
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void die(const char *fmt, ...) {
  va_list ap;

  va_start(ap, fmt);
  fprintf(stderr, "fakeldm: ");
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  exit(2);
}

static size_t enc(ldm6_type type, const void *v, uint8_t *buf) {
  size_t len = 0;
  int rc = ldm6_encode(type, v, buf, BUF_MAX, &len);

  if (rc != 0)
    die("cannot encode %s: %s", ldm6_type_name(type), ldm6_strerror(rc));
  return len;
}

static int reply_value(ldm6_io *io, uint32_t xid, ldm6_type type,
                       const void *v) {
  uint8_t buf[BUF_MAX];
  struct iovec iov = {buf, enc(type, v, buf)};

  return ldm6_io_reply(io, xid, &iov, 1);
}

static void ts_text(ldm6_timestamp t, char *buf, size_t len) {
  snprintf(buf, len, "%ld.%06ld", (long)t.tv_sec, (long)t.tv_usec);
}

static void class_report(const char *what, const ldm6_prod_class *c) {
  char from[32], to[32];
  uint32_t i;

  ts_text(c->from, from, sizeof from);
  ts_text(c->to, to, sizeof to);
  for (i = 0; i < c->psa_len; i++)
    say("%s\tfeedtype=0x%08x\tpattern=%s\tfrom=%s\tto=%s", what,
        (unsigned)c->psa[i].feedtype, c->psa[i].pattern, from, to);
  if (c->psa_len == 0)
    say("%s\tempty", what);
}

/* Wait for a reply to xid, reporting anything else that arrives. */
static int await_reply(ldm6_io *io, uint32_t xid, const char *what,
                       ldm6_io_msg *m) {
  for (;;) {
    int rc = ldm6_io_recv(io, WAIT_MS, m);

    if (rc != LDM6_IO_OK) {
      say("%s\tno-answer\t%s", what, ldm6_io_strerror(rc));
      return rc;
    }
    if (m->hdr.type == LDM6_RPC_CALL) {
      say("stray\tcall\tproc=%u", (unsigned)m->hdr.u.call.proc);
      continue;
    }
    if (m->hdr.xid != xid) {
      say("stray\treply\txid=%u\taccept_stat=%u", (unsigned)m->hdr.xid,
          (unsigned)m->hdr.u.reply.accept_stat);
      continue;
    }
    return LDM6_IO_OK;
  }
}

/* Report whatever arrives within ms; stop at end of stream. */
static int drain(ldm6_io *io, int ms) {
  for (;;) {
    ldm6_io_msg m;
    int rc = ldm6_io_recv(io, ms, &m);

    if (rc == LDM6_IO_TIMEDOUT)
      return 0;
    if (rc != LDM6_IO_OK) {
      say("closed\t%s", ldm6_io_strerror(rc));
      return -1;
    }
    if (m.hdr.type == LDM6_RPC_CALL)
      say("stray\tcall\tproc=%u", (unsigned)m.hdr.u.call.proc);
    else
      say("stray\treply\txid=%u\taccept_stat=%u", (unsigned)m.hdr.xid,
          (unsigned)m.hdr.u.reply.accept_stat);
  }
}

/* The next call; replies that arrive are reported as stray.
 * @return false at the end of the connection (reported) */
static bool next_call(ldm6_io *io, ldm6_io_msg *m) {
  for (;;) {
    int rc = ldm6_io_recv(io, WAIT_MS, m);

    if (rc != LDM6_IO_OK) {
      say("closed\t%s", ldm6_io_strerror(rc));
      return false;
    }
    if (m->hdr.type == LDM6_RPC_CALL)
      return true;
    say("stray\treply\txid=%u", (unsigned)m->hdr.xid);
  }
}

/* Decode the argument of call m (what names it) into v.
 * @return false if it does not decode (reported) */
static bool decode_arg(ldm6_type type, const ldm6_io_msg *m, void *v,
                       const char *what) {
  size_t used;
  int rc = ldm6_decode(type, m->body, m->body_len, v, &used);

  if (rc != 0)
    say("undecodable\t%s\t%s", what, ldm6_strerror(rc));
  return rc == 0;
}

/* Refuse call xid with AUTH_TOOWEAK, as ldmd does. */
static void deny(ldm6_io *io, uint32_t xid) {
  if (ldm6_io_reply_auth_error(io, xid, LDM6_RPC_AUTH_TOOWEAK) != LDM6_IO_OK)
    say("error\tcannot send AUTH_TOOWEAK");
  say("denied\txid=%u", (unsigned)xid);
}

/* Refuse the client as ldmd does, before reading its call (xid 0).  The
 * call is then read before closing, so that the close is a FIN and not a
 * reset that could destroy the refusal on its way to the client. */
static void deny0(ldm6_io *io) {
  ldm6_io_msg m;

  deny(io, 0);
  if (ldm6_io_recv(io, 5000, &m) == LDM6_IO_OK && m.hdr.type == LDM6_RPC_CALL)
    say("call-after-denial\tproc=%u", (unsigned)m.hdr.u.call.proc);
}

/* ---------------------------------------------------------------------- */
/* notify                                                                 */
/* ---------------------------------------------------------------------- */

/* The notifications, in order; -n cycles through them. */
static void table_info(unsigned i, ldm6_prod_info *p) {
  static const struct {
    int32_t sec, usec;
    uint32_t feedtype, seqno, sz;
    const char *ident, *origin;
  } t[] = {
      {1700000000, 123456, 0x08000000u, 42, 21474,
       "SDUS54 KLZK 142213 /pN0QLZK", "noaaport.x.edu"},
      {1700000001, 0, 0x0000000bu, 1234, 0, "SAUS44 KWBC 142200", "a.b"},
      {1700000002, 999999, 0xc0000000u, 7, 4294967295u, "x y", "h"},
  };
  unsigned k = i % (sizeof t / sizeof t[0]);
  unsigned j;

  memset(p, 0, sizeof *p);
  p->arrival.tv_sec = t[k].sec;
  p->arrival.tv_usec = t[k].usec;
  for (j = 0; j < LDM6_SIGLEN; j++)
    p->signature[j] = (uint8_t)(0x10 * k + j);
  snprintf(p->origin, sizeof p->origin, "%s", t[k].origin);
  p->feedtype = t[k].feedtype;
  p->seqno = t[k].seqno;
  snprintf(p->ident, sizeof p->ident, "%s", t[k].ident);
  p->sz = t[k].sz;
}

/* Answer NOTIFYME calls as -a says until one is accepted (a reclass answer
 * reclasses the first call only).
 * @return false if the session ends here (refused, or reported) */
static bool notify_accept(ldm6_io *io, const struct opts *o, unsigned conn) {
  const char *answer = o->answer;
  ldm6_io_msg m;
  unsigned round = 0;

  for (;;) {
    ldm6_prod_class cls;
    ldm6_fornme_reply rep;
    int rc = ldm6_io_recv(io, WAIT_MS, &m);

    if (rc != LDM6_IO_OK) {
      say("closed\t%s", ldm6_io_strerror(rc));
      return false;
    }
    if (m.hdr.type != LDM6_RPC_CALL || m.hdr.u.call.vers != LDM6_VERSION6 ||
        m.hdr.u.call.proc != LDM6_NOTIFYME) {
      say("unexpected\ttype=%u\tproc=%u", (unsigned)m.hdr.type,
          (unsigned)m.hdr.u.call.proc);
      return false;
    }
    if (!decode_arg(LDM6_T_PROD_CLASS, &m, &cls, "NOTIFYME"))
      return false;
    class_report("NOTIFYME", &cls);
    memset(&rep, 0, sizeof rep);
    if (strcmp(answer, "tooweak") == 0) {
      deny(io, m.hdr.xid);
      return false;
    }
    if (strcmp(answer, "systemerr") == 0) {
      ldm6_io_reply_error(io, m.hdr.xid, LDM6_RPC_SYSTEM_ERR);
      return false;
    }
    if (strcmp(answer, "badpattern") == 0) {
      rep.code = LDM6_BADPATTERN;
      reply_value(io, m.hdr.xid, LDM6_T_FORNME_REPLY, &rep);
      return false;
    }
    if (strcmp(answer, "deny") == 0) {
      rep.code = LDM6_RECLASS; /* the empty class */
      reply_value(io, m.hdr.xid, LDM6_T_FORNME_REPLY, &rep);
      return false;
    }
    if (strcmp(answer, "reclass") == 0 && round++ == 0) {
      rep.code = LDM6_RECLASS;
      rep.u.prod_class = cls;
      rep.u.prod_class.psa_len = 1;
      rep.u.prod_class.psa[0].feedtype = 0x08000000u;
      snprintf(rep.u.prod_class.psa[0].pattern,
               sizeof rep.u.prod_class.psa[0].pattern, "^SDUS");
      reply_value(io, m.hdr.xid, LDM6_T_FORNME_REPLY, &rep);
      continue;
    }
    rep.code = LDM6_OK;
    rep.u.id = 4242 + conn;
    reply_value(io, m.hdr.xid, LDM6_T_FORNME_REPLY, &rep);
    return true;
  }
}

/* Turned around: we call.  A FEEDME and a version-5 call are refused.
 * @return false if a reply did not come (reported) */
static bool notify_refused_calls(ldm6_io *io) {
  uint8_t buf[BUF_MAX];
  ldm6_io_msg m;
  uint32_t xid;
  ldm6_feedpar fp;
  struct iovec iov;

  memset(&fp, 0, sizeof fp);
  fp.prod_class.to.tv_sec = 0x7fffffff;
  fp.prod_class.psa_len = 1;
  fp.prod_class.psa[0].feedtype = 1;
  snprintf(fp.prod_class.psa[0].pattern, 4, ".*");
  iov = (struct iovec){buf, enc(LDM6_T_FEEDPAR, &fp, buf)};
  ldm6_io_send_call(io, LDM6_VERSION6, LDM6_FEEDME, &iov, 1, &xid);
  if (await_reply(io, xid, "FEEDME", &m) != LDM6_IO_OK)
    return false;
  say("FEEDME\taccept_stat=%u", (unsigned)m.hdr.u.reply.accept_stat);
  ldm6_io_send_call(io, LDM6_VERSION5, LDM6_NULLPROC, NULL, 0, &xid);
  if (await_reply(io, xid, "v5", &m) != LDM6_IO_OK)
    return false;
  say("v5\taccept_stat=%u\tlow=%u\thigh=%u",
      (unsigned)m.hdr.u.reply.accept_stat, (unsigned)m.hdr.u.reply.low,
      (unsigned)m.hdr.u.reply.high);
  return true;
}

/* Send -n notifications from the table.
 * @return false if one could not be sent (reported) */
static bool notify_send(ldm6_io *io, const struct opts *o) {
  uint8_t buf[BUF_MAX];
  unsigned i;

  for (i = 0; i < o->count; i++) {
    ldm6_prod_info info;
    struct iovec iov;
    int rc;

    table_info(i, &info);
    iov.iov_len = enc(LDM6_T_PROD_INFO, &info, buf);
    iov.iov_base = buf;
    rc = ldm6_io_send_call(io, LDM6_VERSION6, LDM6_NOTIFICATION, &iov, 1, NULL);
    if (rc != LDM6_IO_OK) {
      say("error\tcannot send NOTIFICATION: %s", ldm6_io_strerror(rc));
      return false;
    }
  }
  say("sent\t%u", o->count);
  return true;
}

static void notify_session(ldm6_io *io, const struct opts *o, unsigned conn) {
  ldm6_io_msg m;
  uint32_t xid;

  if (!notify_accept(io, o, conn) || !notify_refused_calls(io) ||
      !notify_send(io, o))
    return;
  ldm6_io_send_call(io, LDM6_VERSION6, LDM6_NULLPROC, NULL, 0, &xid);
  if (await_reply(io, xid, "NULLPROC", &m) != LDM6_IO_OK)
    return;
  say("NULLPROC\tanswered\taccept_stat=%u",
      (unsigned)m.hdr.u.reply.accept_stat);
  if (drain(io, 300) != 0)
    return;
  say("quiet");
  if (o->close_first) {
    say("closing");
    return;
  }
  drain(io, WAIT_MS);
}

/* ---------------------------------------------------------------------- */
/* hiya                                                                   */
/* ---------------------------------------------------------------------- */

static void record_product(const struct opts *o, const char *how,
                           const ldm6_prod_info *info, const void *data,
                           uint32_t len) {
  uint8_t md5[PQ_SIGLEN];
  char hex[33];
  bool ok;
  uint32_t j;

  pq_md5(data, len, md5);
  ok = len == info->sz && memcmp(md5, info->signature, PQ_SIGLEN) == 0;
  for (j = 0; j < PQ_SIGLEN; j++)
    snprintf(hex + 2 * j, 3, "%02x", info->signature[j]);
  say("%s\t%s\t%u\t%s\t%s\t0x%08x\t%u\t%s\t%ld", how, info->ident,
      (unsigned)info->sz, ok ? "md5ok" : "md5BAD", hex,
      (unsigned)info->feedtype, (unsigned)info->seqno, info->origin,
      (long)info->arrival.tv_sec);
  if (o->dir != NULL) {
    char path[4096];
    FILE *f;

    snprintf(path, sizeof path, "%s/%u", o->dir, products_seen);
    f = fopen(path, "wb");
    if (f == NULL || (len > 0 && fwrite(data, 1, len, f) != len))
      die("cannot write %s", path);
    fclose(f);
  }
  products_seen++;
}

static void hiya_session(ldm6_io *io, const struct opts *o) {
  ldm6_comingsoon_args pending;
  bool have_pending = false;
  ldm6_io_msg m;

  while (next_call(io, &m)) {
    ldm6_value v;

    if (m.hdr.u.call.vers != LDM6_VERSION6) {
      say("unexpected\tvers=%u", (unsigned)m.hdr.u.call.vers);
      ldm6_io_reply_prog_mismatch(io, m.hdr.xid, 6, 6);
      continue;
    }
    switch (m.hdr.u.call.proc) {
    case LDM6_HIYA: {
      ldm6_hiya_reply rep;

      if (!decode_arg(LDM6_T_PROD_CLASS, &m, &v, "HIYA"))
        return;
      class_report("HIYA", &v.prod_class);
      memset(&rep, 0, sizeof rep);
      if (strcmp(o->answer, "tooweak") == 0) {
        deny(io, m.hdr.xid);
        return;
      }
      if (strcmp(o->answer, "stall") == 0) {
        rep.code = LDM6_OK;
        rep.u.max_hereis = o->max_hereis;
        reply_value(io, m.hdr.xid, LDM6_T_HIYA_REPLY, &rep);
        say("stalled");
        for (;;)
          pause(); /* until killed, or the -T alarm */
      }
      if (strcmp(o->answer, "reclass") == 0) {
        rep.code = LDM6_RECLASS;
        rep.u.feedpar.prod_class = v.prod_class;
        snprintf(rep.u.feedpar.prod_class.psa[0].pattern,
                 sizeof rep.u.feedpar.prod_class.psa[0].pattern, "%s",
                 o->reclass_pattern);
        rep.u.feedpar.max_hereis = o->max_hereis;
      } else if (strcmp(o->answer, "dontsend") == 0) {
        rep.code = LDM6_DONT_SEND;
      } else {
        rep.code = LDM6_OK;
        rep.u.max_hereis = o->max_hereis;
      }
      reply_value(io, m.hdr.xid, LDM6_T_HIYA_REPLY, &rep);
      break;
    }
    case LDM6_HEREIS:
      if (!decode_arg(LDM6_T_PRODUCT, &m, &v, "HEREIS"))
        return;
      record_product(o, "HEREIS", &v.product.info, v.product.data,
                     v.product.info.sz);
      break;
    case LDM6_COMINGSOON: {
      ldm6_comingsoon_reply ans = LDM6_OK;

      if (!decode_arg(LDM6_T_COMINGSOON_ARGS, &m, &pending, "COMINGSOON"))
        return;
      if (o->dontsend != NULL && strstr(pending.info.ident, o->dontsend)) {
        ans = LDM6_DONT_SEND;
        have_pending = false;
      } else {
        have_pending = true;
      }
      say("COMINGSOON\t%s\t%u\tpktsz=%u\t%s", pending.info.ident,
          (unsigned)pending.info.sz, (unsigned)pending.pktsz,
          ans == LDM6_OK ? "OK" : "DONT_SEND");
      reply_value(io, m.hdr.xid, LDM6_T_COMINGSOON_REPLY, &ans);
      break;
    }
    case LDM6_BLKDATA:
      if (!decode_arg(LDM6_T_DATAPKT, &m, &v, "BLKDATA"))
        return;
      if (!have_pending || v.datapkt.pktnum != 0 ||
          memcmp(v.datapkt.signature, pending.info.signature, LDM6_SIGLEN)) {
        say("unexpected\tBLKDATA\tpktnum=%u", (unsigned)v.datapkt.pktnum);
        break;
      }
      record_product(o, "BLKDATA", &pending.info, v.datapkt.data,
                     v.datapkt.data_len);
      have_pending = false;
      break;
    case LDM6_NULLPROC:
      say("NULLPROC");
      ldm6_io_reply(io, m.hdr.xid, NULL, 0);
      break;
    default:
      say("unexpected\tproc=%u", (unsigned)m.hdr.u.call.proc);
      ldm6_io_reply_error(io, m.hdr.xid, LDM6_RPC_PROC_UNAVAIL);
      break;
    }
  }
}

/* ---------------------------------------------------------------------- */
/* ping                                                                   */
/* ---------------------------------------------------------------------- */

/* ---------------------------------------------------------------------- */
/* feed5                                                                  */
/* ---------------------------------------------------------------------- */

/* Make a v5 call with argument type/v, and report its answer.
 * @return false if none came (reported) */
static bool v5_call(ldm6_io *io, uint32_t proc, ldm6_type type, const void *v,
                    const char *what) {
  uint8_t buf[BUF_MAX];
  struct iovec iov = {buf, enc(type, v, buf)};
  ldm6_io_msg m;
  uint32_t xid;

  if (ldm6_io_send_call(io, LDM6_VERSION5, proc, &iov, 1, &xid) != LDM6_IO_OK)
    return false;
  if (await_reply(io, xid, what, &m) != LDM6_IO_OK)
    return false;
  say("%s\taccept_stat=%u", what, (unsigned)m.hdr.u.reply.accept_stat);
  return true;
}

static void feed5_info(ldm6_prod_info *p, const char *ident, uint32_t sz,
                       int32_t sec, uint8_t sig) {
  memset(p, 0, sizeof *p);
  p->arrival.tv_sec = sec;
  memset(p->signature, sig, LDM6_SIGLEN);
  snprintf(p->origin, sizeof p->origin, "fake");
  p->feedtype = 0x40000000u; /* EXP */
  snprintf(p->ident, sizeof p->ident, "%s", ident);
  p->sz = sz;
}

static void feed5_session(ldm6_io *io, unsigned conn) {
  static const char first[] = "first product\n";
  static const char second[] = "0123456789abcdefghij";
  ldm6_io_msg m;
  ldm6_prod_class cls;
  ldm6_replyt ok;
  ldm6_product prod;
  ldm6_comingsoon_args cs;
  ldm6_datapkt pkt;
  uint32_t xid;

  if (!next_call(io, &m))
    return;
  if (m.hdr.u.call.vers != LDM6_VERSION5 || m.hdr.u.call.proc != LDM6_FEEDME ||
      !decode_arg(LDM6_T_PROD_CLASS, &m, &cls, "FEEDME")) {
    say("unexpected\tvers=%u\tproc=%u", (unsigned)m.hdr.u.call.vers,
        (unsigned)m.hdr.u.call.proc);
    return;
  }
  class_report("FEEDME5", &cls);
  memset(&ok, 0, sizeof ok);
  ok.code = LDM6_OK;
  if (reply_value(io, m.hdr.xid, LDM6_T_REPLYT, &ok) != LDM6_IO_OK)
    return;
  feed5_info(&cs.info, "second", sizeof second - 1, 1700000100, 0x22);
  cs.pktsz = cs.info.sz;
  memset(&pkt, 0, sizeof pkt);
  memcpy(pkt.signature, cs.info.signature, LDM6_SIGLEN);
  if (conn == 0) {
    feed5_info(&prod.info, "first", sizeof first - 1, 1700000000, 0x11);
    prod.data = first;
    if (!v5_call(io, LDM6_HEREIS, LDM6_T_PRODUCT, &prod, "HEREIS"))
      return;
    ldm6_datapkt stray = {.data_len = 3, .data = "xyz"};
    memset(stray.signature, 0x99, LDM6_SIGLEN);
    if (!v5_call(io, LDM6_BLKDATA, LDM6_T_DATAPKT, &stray, "BLKDATA-stray") ||
        !v5_call(io, LDM6_COMINGSOON, LDM6_T_COMINGSOON_ARGS, &cs,
                 "COMINGSOON"))
      return;
    pkt.data_len = 10;
    pkt.data = second;
    if (!v5_call(io, LDM6_BLKDATA, LDM6_T_DATAPKT, &pkt, "BLKDATA-half"))
      return;
    say("closing\tmid-product");
    return;
  }
  if (!v5_call(io, LDM6_COMINGSOON, LDM6_T_COMINGSOON_ARGS, &cs, "COMINGSOON"))
    return;
  pkt.data_len = 10;
  pkt.data = second;
  if (!v5_call(io, LDM6_BLKDATA, LDM6_T_DATAPKT, &pkt, "BLKDATA-1"))
    return;
  pkt.pktnum = 1;
  pkt.data = second + 10;
  if (!v5_call(io, LDM6_BLKDATA, LDM6_T_DATAPKT, &pkt, "BLKDATA-2"))
    return;
  ldm6_io_send_call(io, LDM6_VERSION5, LDM6_NULLPROC, NULL, 0, &xid);
  if (await_reply(io, xid, "NULLPROC", &m) == LDM6_IO_OK)
    say("NULLPROC\tanswered");
}

static void ping_session(ldm6_io *io, const struct opts *o) {
  ldm6_io_msg m;

  while (next_call(io, &m)) {
    uint32_t vers = m.hdr.u.call.vers;

    say("call\tvers=%u\tproc=%u", (unsigned)vers, (unsigned)m.hdr.u.call.proc);
    if (strcmp(o->answer, "mute") == 0)
      continue;
    if (vers == LDM6_VERSION5 && strcmp(o->answer, "v6only") == 0) {
      ldm6_io_reply_prog_mismatch(io, m.hdr.xid, 6, 6);
      continue;
    }
    if (strcmp(o->answer, "slow") == 0)
      usleep(1300 * 1000);
    ldm6_io_reply(io, m.hdr.xid, NULL, 0);
  }
}

/* ---------------------------------------------------------------------- */

/* The stream address of the numeric host addr and port (0: any port, to
 * listen on); dies if addr is not one. */
static struct addrinfo *numeric_addr(const char *addr, unsigned port,
                                     int flags) {
  struct addrinfo hints, *res = NULL;
  char service[16];

  memset(&hints, 0, sizeof hints);
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST | flags;
  snprintf(service, sizeof service, "%u", port);
  if (getaddrinfo(addr, service, &hints, &res) != 0)
    die("bad address %s", addr);
  return res;
}

static int listen_on(const char *addr, int backlog, unsigned *port) {
  struct addrinfo *res = numeric_addr(addr, 0, AI_PASSIVE);
  struct sockaddr_storage ss;
  socklen_t sl = sizeof ss;
  int fd, one = 1;

  fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    die("socket: %s", strerror(errno));
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(fd, res->ai_addr, res->ai_addrlen) != 0 || listen(fd, backlog) != 0)
    die("cannot listen on %s: %s", addr, strerror(errno));
  freeaddrinfo(res);
  getsockname(fd, (struct sockaddr *)&ss, &sl);
  *port =
      ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
                                    : ((struct sockaddr_in6 *)&ss)->sin6_port);
  return fd;
}

static void write_port(const char *path, unsigned port) {
  char tmp[4096];
  FILE *f;

  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  f = fopen(tmp, "w");
  if (f == NULL || fprintf(f, "%u\n", port) < 0 || fclose(f) != 0 ||
      rename(tmp, path) != 0)
    die("cannot write %s", path);
}

/* Fill the accept queue of lfd (backlog 0: one connection fills it) with a
 * connection of our own, write the port file, and wait, never accepting. */
static void stay_full(int lfd, const char *addr, unsigned port,
                      const char *portfile) {
  struct addrinfo *res = numeric_addr(addr, port, 0);
  int fd;

  fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || connect(fd, res->ai_addr, res->ai_addrlen) != 0)
    die("cannot fill the backlog of port %u: %s", port, strerror(errno));
  freeaddrinfo(res);
  say("full");
  write_port(portfile, port); /* once full: the test may connect now */
  (void)lfd;                  /* kept open, never accepted from */
  for (;;)
    pause(); /* until killed, or the -T alarm */
}

int main(int argc, char **argv) {
  struct opts o = {.answer = "ok",
                   .reclass_pattern = ".*",
                   .count = 3,
                   .max_hereis = 0xffffffffu,
                   .connections = 1,
                   .lifetime = 60};
  unsigned port, c;
  int opt, lfd;

  while ((opt = getopt(argc, argv, "m:a:p:o:r:n:H:R:D:c:KT:d:")) != -1) {
    switch (opt) {
    case 'm':
      o.mode = optarg;
      break;
    case 'a':
      o.addr = optarg;
      break;
    case 'p':
      o.portfile = optarg;
      break;
    case 'o':
      o.report = optarg;
      break;
    case 'r':
      o.answer = optarg;
      break;
    case 'n':
      o.count = (unsigned)strtoul(optarg, NULL, 10);
      break;
    case 'H':
      o.max_hereis = (uint32_t)strtoul(optarg, NULL, 0);
      break;
    case 'R':
      o.reclass_pattern = optarg;
      break;
    case 'D':
      o.dontsend = optarg;
      break;
    case 'c':
      o.connections = (unsigned)strtoul(optarg, NULL, 10);
      break;
    case 'K':
      o.close_first = true;
      break;
    case 'T':
      o.lifetime = (unsigned)strtoul(optarg, NULL, 10);
      break;
    case 'd':
      o.dir = optarg;
      break;
    default:
      die("bad usage (see the comment at the top of fakeldm.c)");
    }
  }
  if (o.mode == NULL || o.addr == NULL || o.portfile == NULL ||
      o.report == NULL)
    die("-m, -a, -p and -o are required");
  report_fp = fopen(o.report, "a");
  if (report_fp == NULL)
    die("cannot open %s: %s", o.report, strerror(errno));
  signal(SIGPIPE, SIG_IGN);
  alarm(o.lifetime);
  lfd = listen_on(o.addr, strcmp(o.mode, "full") == 0 ? 0 : 8, &port);
  if (strcmp(o.mode, "full") == 0)
    stay_full(lfd, o.addr, port, o.portfile);
  write_port(o.portfile, port);
  for (c = 0; c < o.connections; c++) {
    int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
    ldm6_io *io;

    if (fd < 0)
      die("accept: %s", strerror(errno));
    io = ldm6_io_new(fd, 256u << 20);
    if (io == NULL)
      die("out of memory");
    say("connection\t%u\tfrom=%s", c + 1, ldm6_io_peer_addr(io));
    if (strcmp(o.answer, "tooweak0") == 0)
      deny0(io); /* in every mode */
    else if (strcmp(o.mode, "notify") == 0)
      notify_session(io, &o, c);
    else if (strcmp(o.mode, "hiya") == 0)
      hiya_session(io, &o);
    else if (strcmp(o.mode, "ping") == 0)
      ping_session(io, &o);
    else if (strcmp(o.mode, "feed5") == 0)
      feed5_session(io, c);
    else
      die("unknown mode %s", o.mode);
    ldm6_io_free(io);
    say("end\t%u", c + 1);
  }
  close(lfd);
  fclose(report_fp);
  return 0;
}
