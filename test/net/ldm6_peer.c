/*
 * ldm6_peer.c - a scriptable LDM-6 peer for the network tests of ldmd: it
 * plays the downstream of a FEEDME (primary or alternate) or NOTIFYME, the
 * sender of a HIYA push or its receiver, a client of single calls (NULLPROC of
 * every version, IS_ALIVE, unknown versions and procedures), and a hostile peer
 * (garbage, truncated records, huge length words, pushes whose records
 * hold more or fewer bytes than they declare, a slowloris that sends
 * nothing or a byte at a time, many connections held open), or a slow
 * downstream (one that never answers COMINGSOON, one that stops reading,
 * one that floods its upstream with calls after the turn-around).  It
 * also makes and fills queues, dumps them (insertion order, MD5 checked),
 * counts what readers hold in them, checks their soundness (pq_check()) and
 * measures the delay from an insert to its notification.
 *
 * Products it makes have random data whose MD5 is their signature, so a
 * receiver verifies every byte by hashing: "ok" lines mean the data matched.
 * Output is one line per event on stdout, for the test scripts to grep.
 * Every wait has a timeout; the exit status says how it went:
 *   0 done as asked, 1 failure or timeout, 2 usage, 3 RECLASS, 4 refused
 *   (AUTH_TOOWEAK), 5 BADPATTERN.
 */
#include <assert.h>
#include <errno.h>
#include <getopt.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "ldmd/proto/ldm6_xdr.h"
#include "ldmd/proto/rpc_io.h"
#include "ldmd/proto/rpc_msg.h"
#include "pq/pq.h"
#include "test/lib/tu_clock.h"
#include "test/lib/tu_fill.h"

#define EXIT_RECLASS 3
#define EXIT_DENIED 4
#define EXIT_BADPATTERN 5
#define CALL_MS 10000
#define INFO_BUF 512

/* Options shared by the subcommands. */
typedef struct peer_opts {
  const char *host;
  unsigned port;
  const char *feed;    /* feedtype expression */
  const char *pattern; /* ERE */
  long offset;         /* seconds back for class.from */
  long count;          /* products to expect or send */
  long size;           /* bytes per product */
  long timeout;        /* seconds */
  long age;            /* seconds: creation time in the past */
  long delay_ms;       /* between inserts */
  long big;            /* size above which -c pushes use COMINGSOON */
  const char *queue;   /* a queue to insert into or to verify against */
  const char *sig;     /* resume signature (hex) */
  const char *ident;   /* ident prefix */
  const char *kind;    /* hostile: what to send */
  bool alternate;      /* FEEDME alternate mode */
  bool reply_unavail;  /* answer NOTIFICATIONs with PROC_UNAVAIL */
  bool comingsoon;     /* push large products with COMINGSOON */
  bool dontsend;       /* answer COMINGSOON with DONT_SEND */
  bool hold;           /* never answer COMINGSOON */
  bool mute;           /* never answer NULLPROC */
  bool flood;          /* feedme: after OK, NULLPROC calls without end */
  long stall;          /* stop reading after this many products, -1 never */
  long declared;       /* push: the size the metadata declares, -1: true */
  long dbuf;           /* push: BLKDATA's length word, -1: true */
  unsigned vers, proc; /* call */
  long arg;            /* call: a u_int argument, -1 none */
  long threshold_us;   /* latency: fail if p50 exceeds */
  long specs;          /* subscribe: -P in this many specs (-N), each
                          compiled apart by the upstream, spec k for
                          feedtype bit k (they must not overlap) */
  unsigned seed;
} peer_opts;

/* A product: random data, MD5 signature, ident "<prefix>/<n>". */
static uint8_t *make_product(const peer_opts *o, uint32_t ft, long n,
                             pq_prod_info *info) {
  uint8_t *data = malloc(o->size > 0 ? (size_t)o->size : 1);

  if (data == NULL)
    return NULL;
  memset(info, 0, sizeof *info);
  tu_fill(data, (size_t)o->size, ((uint64_t)o->seed << 32) + (uint64_t)n);
  pq_md5(data, (size_t)o->size, info->signature);
  info->arrival = pq_ts_now();
  info->arrival.sec -= o->age;
  snprintf(info->origin, sizeof info->origin, "peer.test");
  info->feedtype = ft;
  info->seqno = (uint32_t)n;
  snprintf(info->ident, sizeof info->ident, "%s/%ld", o->ident, n);
  info->size = (uint64_t)o->size;
  return data;
}

static int feedtype(const char *expr, uint32_t *ft) {
  if (pq_feedtype_parse(expr, ft) != PQ_FT_OK) {
    fprintf(stderr, "ldm6_peer: bad feedtype %s\n", expr);
    return -1;
  }
  return 0;
}

/* The request class: now - offset .. TS_ENDT, one spec, maybe a SIG. */
static int make_class(const peer_opts *o, ldm6_prod_class *cls) {
  uint32_t ft;
  pq_timestamp from = pq_ts_now();

  memset(cls, 0, sizeof *cls);
  if (feedtype(o->feed, &ft) != 0)
    return -1;
  from.sec -= o->offset;
  from.usec = 0;
  ldm6_ts_from_pq(from, &cls->from);
  ldm6_ts_from_pq(PQ_TS_ENDT, &cls->to);
  cls->psa[0].feedtype = ft;
  snprintf(cls->psa[0].pattern, sizeof cls->psa[0].pattern, "%s", o->pattern);
  cls->psa_len = 1;
  /* -N: spec k is "(pattern)|^NONE<k>" for feedtype bit k: a product of
   * every feedtype (-f ANY) is matched against each. */
  if (o->specs > 1)
    cls->psa[0].feedtype = 1;
  /* A feedtype has 32 bits: one spec a bit, and one left for a signature. */
  static_assert(LDM6_PSA_MAX - 1 <= 32, "one feedtype bit per spec");
  for (long k = 1; k < o->specs && k < LDM6_PSA_MAX - 1; k++) {
    cls->psa[k].feedtype = 1u << k;
    snprintf(cls->psa[k].pattern, sizeof cls->psa[k].pattern, "(%s)|^NONE%ld",
             o->pattern, k);
    cls->psa_len = (uint32_t)k + 1;
  }
  if (o->sig != NULL) {
    cls->psa[cls->psa_len].feedtype = 0;
    snprintf(cls->psa[cls->psa_len].pattern, sizeof cls->psa[0].pattern,
             "SIG=%s", o->sig);
    cls->psa_len++;
  }
  return 0;
}

static void print_class(const char *what, const ldm6_prod_class *c) {
  uint32_t i;

  printf("%s %u", what, (unsigned)c->psa_len);
  for (i = 0; i < c->psa_len; i++) {
    char ft[192];

    pq_feedtype_format(c->psa[i].feedtype, ft, sizeof ft);
    printf(" {%s,\"%s\"}", ft, c->psa[i].pattern);
  }
  printf("\n");
  fflush(stdout);
}

/* A connection whose receive buffer is as small as the kernel allows
 * (-X): the upstream's writes block after a few kilobytes. */
static ldm6_io *connect_small(const peer_opts *o) {
  struct sockaddr_in sa = {.sin_family = AF_INET,
                           .sin_port = htons((uint16_t)o->port)};
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), small = 1;

  if (fd < 0 || inet_pton(AF_INET, o->host, &sa.sin_addr) != 1 ||
      setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small) != 0 ||
      connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
    perror("ldm6_peer: connect (small receive buffer, IPv4 address only)");
    if (fd >= 0)
      close(fd);
    return NULL;
  }
  return ldm6_io_new(fd, 0);
}

static ldm6_io *connect_peer(const peer_opts *o) {
  char err[256];
  ldm6_io *io;

  if (o->stall >= 0)
    return connect_small(o);
  io = ldm6_io_connect(o->host, o->port, 5000, err, sizeof err);
  if (io == NULL)
    fprintf(stderr, "ldm6_peer: %s\n", err);
  return io;
}

/* A synchronous call with an encoded argument: LDM6_IO_OK, LDM6_IO_EREPLY
 * for any error reply, refusals included (print_reply() tells them
 * apart), or an I/O result. */
static int call(ldm6_io *io, uint32_t vers, uint32_t proc, ldm6_type type,
                const void *arg, ldm6_io_msg *reply) {
  uint8_t buf[16384];
  struct iovec iov = {buf, 0};
  int rc;

  if (type != LDM6_T_VOID &&
      ldm6_encode(type, arg, buf, sizeof buf, &iov.iov_len) != 0) {
    fprintf(stderr, "ldm6_peer: cannot encode the argument\n");
    return LDM6_IO_EPROTO;
  }
  /* ldmd, like LDM, refuses a host with xid 0 before reading the call:
   * ldm6_io_call() takes that as LDM6_IO_DENIED. */
  rc = ldm6_io_call(io, vers, proc, &iov, iov.iov_len > 0, CALL_MS, reply);
  return rc == LDM6_IO_DENIED ? LDM6_IO_EREPLY : rc;
}

/* Reply status line for the "call" subcommand and refusals. */
static int print_reply(int rc, const ldm6_io_msg *m) {
  if (rc == LDM6_IO_OK) {
    printf("REPLY SUCCESS %zu\n", m->body_len);
    return 0;
  }
  if (rc != LDM6_IO_EREPLY) {
    printf("FAILED %s\n", ldm6_io_strerror(rc));
    return 1;
  }
  if (m->hdr.u.reply.reply_stat == LDM6_RPC_MSG_DENIED) {
    printf("DENIED reject=%u auth=%u\n", (unsigned)m->hdr.u.reply.reject_stat,
           (unsigned)m->hdr.u.reply.auth_stat);
    return EXIT_DENIED;
  }
  printf("REPLY accept_stat=%u low=%u high=%u\n",
         (unsigned)m->hdr.u.reply.accept_stat, (unsigned)m->hdr.u.reply.low,
         (unsigned)m->hdr.u.reply.high);
  return 1;
}

/* ---------------------------------------------------------------------- */
/* Downstream of FEEDME / NOTIFYME                                        */
/* ---------------------------------------------------------------------- */

/* State of a receiving session. */
typedef struct recv_state {
  const peer_opts *o;
  long got;
  long bad;
  /* COMINGSOON in progress */
  bool pending;
  ldm6_prod_info pinfo;
  uint8_t *buf;
  uint32_t have;
} recv_state;

static void check_product(recv_state *s, const char *how,
                          const ldm6_prod_info *info, const void *data) {
  uint8_t sig[16];
  char hex[33];
  bool ok;

  pq_md5(data, info->sz, sig);
  ok = memcmp(sig, info->signature, 16) == 0;
  pq_sig_format(info->signature, hex);
  printf("%s %s %u %s %s %s\n", how, hex, (unsigned)info->sz, info->ident,
         info->origin, ok ? "ok" : "CORRUPT");
  fflush(stdout);
  s->got++;
  s->bad += !ok;
}

/* LDM-5 answers every call: an ldm_replyt OK.  v6 one-way calls: nothing. */
static int v5_ok(ldm6_io *io, const ldm6_io_msg *m) {
  static const uint8_t ok[4] = {0};
  struct iovec iov = {(void *)ok, 4};

  if (m->hdr.u.call.vers != LDM6_VERSION5)
    return LDM6_IO_OK;
  return ldm6_io_reply(io, m->hdr.xid, &iov, 1);
}

/* Answer a call received after the turn-around. */
static int serve_call(ldm6_io *io, recv_state *s, const ldm6_io_msg *m) {
  ldm6_value v;
  size_t used;
  uint32_t proc = m->hdr.u.call.proc;
  char hex[33];

  switch (proc) {
  case LDM6_NULLPROC:
    if (s->o->mute) { /* the upstream's flush, never answered */
      printf("NULLPROC-HELD\n");
      fflush(stdout);
      return LDM6_IO_OK;
    }
    printf("NULLPROC\n");
    return ldm6_io_reply(io, m->hdr.xid, NULL, 0);
  case LDM6_NOTIFICATION:
    if (ldm6_decode(LDM6_T_PROD_INFO, m->body, m->body_len, &v.prod_info,
                    &used) != 0)
      return LDM6_IO_EPROTO;
    pq_sig_format(v.prod_info.signature, hex);
    printf("NOTIFICATION %s %u %s %s\n", hex, (unsigned)v.prod_info.sz,
           v.prod_info.ident, v.prod_info.origin);
    fflush(stdout);
    s->got++;
    if (s->o->reply_unavail)
      return ldm6_io_reply_error(io, m->hdr.xid, LDM6_RPC_PROC_UNAVAIL);
    return LDM6_IO_OK;
  case LDM6_HEREIS:
    if (ldm6_decode(LDM6_T_PRODUCT, m->body, m->body_len, &v.product, &used) !=
        0)
      return LDM6_IO_EPROTO;
    check_product(s, "HEREIS", &v.product.info, v.product.data);
    return v5_ok(io, m);
  case LDM6_COMINGSOON: {
    uint8_t reply[4] = {0, 0, 0, s->o->dontsend ? LDM6_DONT_SEND : LDM6_OK};
    struct iovec iov = {reply, 4};

    if (ldm6_decode(LDM6_T_COMINGSOON_ARGS, m->body, m->body_len,
                    &v.comingsoon_args, &used) != 0)
      return LDM6_IO_EPROTO;
    if (s->o->hold) { /* a downstream that never answers */
      pq_sig_format(v.comingsoon_args.info.signature, hex);
      printf("COMINGSOON-HELD %s %s\n", v.comingsoon_args.info.ident, hex);
      fflush(stdout);
      return LDM6_IO_OK;
    }
    if (s->o->dontsend) {
      printf("COMINGSOON-DECLINED %s\n", v.comingsoon_args.info.ident);
      s->got++;
    } else {
      s->pending = true;
      s->pinfo = v.comingsoon_args.info;
      free(s->buf);
      s->buf = malloc(s->pinfo.sz + 1);
      s->have = 0;
    }
    return ldm6_io_reply(io, m->hdr.xid, &iov, 1);
  }
  case LDM6_BLKDATA:
    if (ldm6_decode(LDM6_T_DATAPKT, m->body, m->body_len, &v.datapkt, &used) !=
            0 ||
        !s->pending || v.datapkt.data_len > s->pinfo.sz - s->have)
      return LDM6_IO_EPROTO;
    memcpy(s->buf + s->have, v.datapkt.data, v.datapkt.data_len);
    s->have += v.datapkt.data_len;
    if (s->have == s->pinfo.sz) {
      s->pending = false;
      check_product(s, "BLKDATA", &s->pinfo, s->buf);
    }
    return v5_ok(io, m);
  default:
    printf("CALL %u\n", (unsigned)proc);
    return ldm6_io_reply_error(io, m->hdr.xid, LDM6_RPC_PROC_UNAVAIL);
  }
}

/* Serve the upstream's calls until count products or the timeout. */
static int receive(ldm6_io *io, const peer_opts *o) {
  recv_state s = {.o = o};
  int64_t end = tu_now_us() + (int64_t)o->timeout * 1000000;
  bool stall_done = false;
  int rc = 0;

  while (o->count < 0 || s.got < o->count) {
    ldm6_io_msg m;
    int64_t left = (end - tu_now_us()) / 1000;

    if (o->stall >= 0 && s.got >= o->stall && !stall_done) {
      /* A downstream that takes nothing more: the upstream's socket fills
       * up.  For -d ms (then it reads again), or until the timeout. */
      printf("STALLED after %ld products\n", s.got);
      fflush(stdout);
      if (o->delay_ms > 0 && o->delay_ms < left) {
        (void)poll(NULL, 0, (int)o->delay_ms);
        printf("READING again\n");
        fflush(stdout);
        stall_done = true;
      } else {
        if (left > 0)
          (void)poll(NULL, 0, (int)left);
        printf("TIMEOUT after %ld products\n", s.got);
        break;
      }
    }
    if (left <= 0) {
      printf("TIMEOUT after %ld products\n", s.got);
      rc = o->count < 0 ? 0 : 1;
      break;
    }
    rc = ldm6_io_recv(io, (int)left, &m);
    if (rc == LDM6_IO_TIMEDOUT)
      continue;
    if (rc != LDM6_IO_OK) {
      printf("CLOSED %s\n", ldm6_io_strerror(rc));
      rc = 1;
      break;
    }
    if (m.hdr.type != LDM6_RPC_CALL)
      continue;
    if (serve_call(io, &s, &m) != LDM6_IO_OK) {
      printf("BROKEN %s\n", ldm6_io_detail(io));
      rc = 1;
      break;
    }
  }
  free(s.buf);
  printf("RECEIVED %ld BAD %ld\n", s.got, s.bad);
  return rc != 0 ? rc : (s.bad > 0 ? 1 : 0);
}

/* LDM-5 FEEDME (as the old `feedme`), then receive. */
static int feedme5(ldm6_io *io, const peer_opts *o,
                   const ldm6_prod_class *cls) {
  ldm6_replyt rep;
  ldm6_io_msg m;
  size_t used;
  int rc = call(io, 5, LDM6_FEEDME, LDM6_T_PROD_CLASS, cls, &m);

  if (rc != LDM6_IO_OK) {
    rc = print_reply(rc, &m);
  } else if (ldm6_decode(LDM6_T_REPLYT, m.body, m.body_len, &rep, &used) != 0) {
    printf("UNDECODABLE reply\n");
    rc = 1;
  } else if (rep.code == LDM6_RECLASS) {
    print_class("RECLASS", &rep.u.reclass);
    rc = EXIT_RECLASS;
  } else if (rep.code != LDM6_OK) {
    printf("REFUSED %d\n", (int)rep.code);
    rc = 1;
  } else {
    printf("OK v5\n");
    rc = receive(io, o);
  }
  ldm6_io_free(io);
  return rc;
}

/* -k chatty: CHATTY_CALLS NULLPROC calls in one write after the
 * turn-around, which an upstream ignores, each.  @return 0 or 1 */
#define CHATTY_CALLS 200
static int send_chatty(ldm6_io *io) {
  static uint8_t buf[CHATTY_CALLS * 64];
  size_t at = 0, clen;
  uint32_t word;
  int i;

  for (i = 0; i < CHATTY_CALLS; i++) {
    if (ldm6_rpc_encode_call(0x7ffe0000u + (uint32_t)i, LDM6_PROG, 6,
                             LDM6_NULLPROC, buf + at + 4, 60, &clen) != 0)
      return 1;
    word = htonl(0x80000000u | (uint32_t)clen);
    memcpy(buf + at, &word, 4);
    at += 4 + clen;
  }
  if (write(ldm6_io_fd(io), buf, at) != (ssize_t)at)
    return 1;
  printf("SENT chatty %d\n", CHATTY_CALLS);
  fflush(stdout);
  return 0;
}

/* After OK: NULLPROC calls, as fast as the socket takes them, reading
 * nothing, until the timeout ("FLOODING", then "FLOODED <bytes>").  The
 * calls are legal, and answered by no one: an upstream ignores calls
 * after the turn-around. */
static int flood(ldm6_io *io, const peer_opts *o) {
  enum { N = 512, REC = LDM6_RPC_MARK_LEN + 40 };
  static uint8_t buf[N * REC];
  int64_t end = tu_now_us() + (int64_t)o->timeout * 1000000;
  int fd = ldm6_io_fd(io);
  unsigned long long sent = 0;
  size_t hlen, i;

  for (i = 0; i < N; i++) {
    uint8_t *r = buf + i * REC;

    if (ldm6_rpc_encode_call((uint32_t)(1000 + i), LDM6_PROG, LDM6_VERSION6,
                             LDM6_NULLPROC, r + LDM6_RPC_MARK_LEN, 40,
                             &hlen) != 0 ||
        hlen != 40)
      return 1;
    ldm6_rpc_mark_put(r, 40, true);
  }
  printf("FLOODING\n");
  fflush(stdout);
  while (tu_now_us() < end) {
    struct pollfd p = {.fd = fd, .events = POLLOUT};
    ssize_t n;

    if (poll(&p, 1, 100) <= 0)
      continue;
    n = write(fd, buf, sizeof buf);
    if (n < 0 && errno != EAGAIN && errno != EINTR) {
      printf("CLOSED %s\n", strerror(errno));
      break;
    }
    if (n > 0)
      sent += (unsigned long long)n;
  }
  printf("FLOODED %llu\n", sent);
  return 0;
}

/* FEEDME or NOTIFYME, then receive. */
static int subscribe(const peer_opts *o, bool notify) {
  ldm6_feedpar fp;
  ldm6_fornme_reply rep;
  ldm6_io_msg m;
  size_t used;
  ldm6_io *io;
  int rc;

  memset(&fp, 0, sizeof fp);
  if (make_class(o, &fp.prod_class) != 0)
    return 2;
  fp.max_hereis = o->alternate ? 0 : LDM6_MAX_HEREIS_PRIMARY;
  io = connect_peer(o);
  if (io == NULL)
    return 1;
  if (notify)
    rc = call(io, 6, LDM6_NOTIFYME, LDM6_T_PROD_CLASS, &fp.prod_class, &m);
  else if (o->vers == LDM6_VERSION5)
    return feedme5(io, o, &fp.prod_class);
  else
    rc = call(io, 6, LDM6_FEEDME, LDM6_T_FEEDPAR, &fp, &m);
  if (rc != LDM6_IO_OK) {
    rc = print_reply(rc, &m);
    ldm6_io_free(io);
    return rc;
  }
  if (ldm6_decode(LDM6_T_FORNME_REPLY, m.body, m.body_len, &rep, &used) != 0) {
    printf("UNDECODABLE reply\n");
    ldm6_io_free(io);
    return 1;
  }
  if (rep.code != LDM6_OK) {
    if (rep.code == LDM6_RECLASS)
      print_class("RECLASS", &rep.u.prod_class);
    else
      printf("BADPATTERN\n");
    ldm6_io_free(io);
    return rep.code == LDM6_RECLASS ? EXIT_RECLASS : EXIT_BADPATTERN;
  }
  printf("OK %u\n", (unsigned)rep.u.id);
  fflush(stdout);
  if (o->kind != NULL && strcmp(o->kind, "long") == 0) {
    /* -k long: the start of a record of 1 MiB, more than an upstream
     * takes from a downstream after the turn-around: it must close. */
    static const uint8_t start[8] = {0x80, 0x10, 0, 0, 0, 0, 0, 1};

    if (write(ldm6_io_fd(io), start, sizeof start) != (ssize_t)sizeof start) {
      ldm6_io_free(io);
      return 1;
    }
    printf("SENT long\n");
    fflush(stdout);
  }
  if (o->kind != NULL && strcmp(o->kind, "chatty") == 0 &&
      send_chatty(io) != 0) {
    ldm6_io_free(io);
    return 1;
  }
  rc = o->flood ? flood(io, o) : receive(io, o);
  ldm6_io_free(io);
  return rc;
}

/* ---------------------------------------------------------------------- */
/* HIYA push                                                              */
/* ---------------------------------------------------------------------- */

/* A record of call proc whose arguments are head[0..hlen) and data[0..sz)
 * (with its padding), of which only the first half of the data is
 * written before the connection is closed (-k cut): a sender that dies
 * in the middle of a product.  @return LDM6_IO_CLOSED, or LDM6_IO_ESYS */
static int send_cut(ldm6_io *io, uint32_t proc, const uint8_t *head,
                    size_t hlen, const uint8_t *data, uint32_t sz) {
  uint8_t hdr[64];
  size_t clen, len, keep;
  uint8_t *rec;
  uint32_t word;
  ssize_t put;

  if (ldm6_rpc_encode_call(0x7fff0000u, LDM6_PROG, 6, proc, hdr, sizeof hdr,
                           &clen) != 0)
    return LDM6_IO_ESYS;
  len = clen + hlen + sz + ldm6_xdr_pad(sz);
  keep = 4 + clen + hlen + sz / 2;
  rec = malloc(keep);
  if (rec == NULL)
    return LDM6_IO_ESYS;
  word = htonl(0x80000000u | (uint32_t)len);
  memcpy(rec, &word, 4);
  memcpy(rec + 4, hdr, clen);
  memcpy(rec + 4 + clen, head, hlen);
  memcpy(rec + 4 + clen + hlen, data, sz / 2);
  put = write(ldm6_io_fd(io), rec, keep);
  free(rec);
  printf("CUT after %zd of %zu record bytes\n", put, len + 4);
  return put == (ssize_t)keep ? LDM6_IO_CLOSED : LDM6_IO_ESYS;
}

/* The data's record, or its first half (-k cut). */
static int send_data(ldm6_io *io, const peer_opts *o, uint32_t proc,
                     struct iovec iov[3]) {
  if (o->kind != NULL && strcmp(o->kind, "cut") == 0)
    return send_cut(io, proc, iov[0].iov_base, iov[0].iov_len, iov[1].iov_base,
                    (uint32_t)iov[1].iov_len);
  return ldm6_io_send_call(io, 6, proc, iov, 3, NULL);
}

/* Push one product: HEREIS, or COMINGSOON and BLKDATA.  A crafted one
 * (-Z, -Y) declares another size than the bytes it carries; -k announce
 * sends only the COMINGSOON, -k cut half the data's record. */
static int push_one(ldm6_io *io, const peer_opts *o, const pq_prod_info *info,
                    const uint8_t *data, uint32_t max_hereis) {
  ldm6_prod_info w;
  uint8_t head[INFO_BUF];
  static const uint8_t zeros[4] = {0};
  size_t hlen;
  ldm6_io_msg m;
  uint32_t sz; /* the bytes sent */
  char hex[33];

  ldm6_info_from_pq(info, &w);
  sz = w.sz;
  if (o->declared >= 0)
    w.sz = (uint32_t)o->declared;
  pq_sig_format(w.signature, hex);
  if (!o->comingsoon || (o->big >= 0 && sz <= (uint32_t)o->big) ||
      (o->big < 0 && sz <= max_hereis)) {
    struct iovec iov[3] = {
        {head, 0}, {(void *)data, sz}, {(void *)zeros, ldm6_xdr_pad(sz)}};

    ldm6_encode(LDM6_T_PROD_INFO, &w, head, sizeof head, &iov[0].iov_len);
    printf("SENT-HEREIS %s %s\n", w.ident, hex);
    return send_data(io, o, LDM6_HEREIS, iov);
  } else {
    ldm6_comingsoon_args a = {.info = w, .pktsz = w.sz};
    ldm6_comingsoon_reply r;
    ldm6_datapkt pkt = {.pktnum = 0,
                        .data_len = o->dbuf >= 0 ? (uint32_t)o->dbuf : sz};
    struct iovec iov[3] = {
        {head, 0}, {(void *)data, sz}, {(void *)zeros, ldm6_xdr_pad(sz)}};

    int rc = call(io, 6, LDM6_COMINGSOON, LDM6_T_COMINGSOON_ARGS, &a, &m);

    if (rc != LDM6_IO_OK || ldm6_decode(LDM6_T_COMINGSOON_REPLY, m.body,
                                        m.body_len, &r, &hlen) != 0)
      return rc != LDM6_IO_OK ? rc : LDM6_IO_EPROTO;
    if (r != LDM6_OK) {
      printf("DONT_SEND %s\n", w.ident);
      return LDM6_IO_OK;
    }
    if (o->kind != NULL && strcmp(o->kind, "announce") == 0) {
      printf("ANNOUNCED %s %u\n", w.ident, (unsigned)w.sz);
      return LDM6_IO_OK;
    }
    memcpy(pkt.signature, w.signature, 16);
    ldm6_encode_datapkt_head(&pkt, head, sizeof head, &iov[0].iov_len);
    printf("SENT-COMINGSOON %s %s\n", w.ident, hex);
    return send_data(io, o, LDM6_BLKDATA, iov);
  }
}

/* Every product sent must be in the queue, byte for byte. */
typedef struct verify_arg {
  const uint8_t *data;
  uint64_t size;
  bool same;
  char origin[PQ_ORIGIN_MAX + 1];
} verify_arg;

static int verify_cb(const pq_prod_info *info, const void *data,
                     const pq_place *place, void *arg) {
  verify_arg *v = arg;

  (void)place;
  v->same = info->size == v->size && memcmp(data, v->data, v->size) == 0;
  snprintf(v->origin, sizeof v->origin, "%s", info->origin);
  return 0;
}

/* o->queue opened read-only, or NULL (said on stderr). */
static pq_t *open_readonly(const peer_opts *o) {
  pq_t *pq = NULL;
  pq_error err;

  if (pq_open(o->queue, PQ_READONLY, &pq, &err) != PQ_OK) {
    fprintf(stderr, "ldm6_peer: %s\n", err.pe_msg);
    return NULL;
  }
  return pq;
}

/* fn(arg) on every product of pq, oldest first.  @return 0 once all are
 * read, 1 if reading failed first (said on stderr) */
static int read_all(const peer_opts *o, pq_t *pq, pq_read_fn *fn, void *arg) {
  int rc;

  pq_cursor_oldest(pq);
  do
    rc = pq_next(pq, PQ_FORWARD, NULL, fn, arg);
  while (rc == PQ_OK);
  if (rc != PQ_END)
    fprintf(stderr, "ldm6_peer: reading %s: %s\n", o->queue, pq_strerror(rc));
  return rc != PQ_END;
}

static int verify(const peer_opts *o, uint32_t ft) {
  pq_t *pq = open_readonly(o);
  long n, bad = 0;

  if (pq == NULL)
    return 1;
  for (n = 0; n < o->count; n++) {
    pq_prod_info info;
    uint8_t *data = make_product(o, ft, n, &info);
    verify_arg v = {.data = data, .size = info.size};
    int rc = pq_find(pq, info.signature, verify_cb, &v);

    printf("QUEUED %s %s %s\n", info.ident,
           rc != PQ_OK ? "MISSING"
           : v.same    ? "identical"
                       : "DIFFERENT",
           v.origin);
    bad += rc != PQ_OK || !v.same;
    free(data);
  }
  pq_close(pq);
  printf("VERIFIED %ld BAD %ld\n", o->count, bad);
  return bad > 0;
}

static int hiya(const peer_opts *o) {
  ldm6_prod_class offer;
  ldm6_hiya_reply rep;
  uint32_t ft, max_hereis;
  ldm6_io_msg m;
  size_t used;
  ldm6_io *io;
  long n;
  int rc;

  if (make_class(o, &offer) != 0 || feedtype(o->feed, &ft) != 0)
    return 2;
  io = connect_peer(o);
  if (io == NULL)
    return 1;
  rc = call(io, 6, LDM6_HIYA, LDM6_T_PROD_CLASS, &offer, &m);
  if (rc != LDM6_IO_OK) {
    rc = print_reply(rc, &m);
    ldm6_io_free(io);
    return rc;
  }
  if (ldm6_decode(LDM6_T_HIYA_REPLY, m.body, m.body_len, &rep, &used) != 0) {
    ldm6_io_free(io);
    return 1;
  }
  if (rep.code == LDM6_RECLASS) {
    print_class("RECLASS", &rep.u.feedpar.prod_class);
    max_hereis = rep.u.feedpar.max_hereis;
  } else {
    max_hereis = rep.u.max_hereis;
    printf("OK %u\n", (unsigned)max_hereis);
  }
  for (n = 0, rc = LDM6_IO_OK; n < o->count && rc == LDM6_IO_OK; n++) {
    pq_prod_info info;
    uint8_t *data = make_product(o, ft, n, &info);

    rc = data == NULL ? LDM6_IO_ESYS : push_one(io, o, &info, data, max_hereis);
    free(data);
  }
  if (rc == LDM6_IO_OK && o->kind != NULL) { /* announce: leave, unconfirmed */
    printf("LEAVING after %ld\n", n);
    ldm6_io_free(io);
    return 0;
  }
  if (rc == LDM6_IO_OK)
    rc = call(io, 6, LDM6_NULLPROC, LDM6_T_VOID, NULL, &m);
  printf("PUSHED %ld %s\n", n, ldm6_io_strerror(rc));
  if (rc == LDM6_IO_CLOSED && o->kind != NULL && strcmp(o->kind, "cut") == 0) {
    ldm6_io_free(io); /* closed by us, as asked */
    return 0;
  }
  ldm6_io_free(io);
  if (rc != LDM6_IO_OK)
    return 1;
  return o->queue != NULL ? verify(o, ft) : 0;
}

/* The receiving side of a push, for testing a sender (ldmsend): listen on
 * 127.0.0.1 (a line "PORT n"), take one connection, answer HIYA with OK
 * (max_hereis -b, else 0xFFFFFFFF) and COMINGSOON with OK, and print a
 * line per product.  After -n products, -k close closes the connection at
 * once, as a server whose process dies; -k systemerr answers the NULLPROC
 * with SYSTEM_ERR, as a server that could not store them; otherwise the
 * NULLPROC gets SUCCESS.  Ends when the sender closes. */
static int hiya_server(const peer_opts *o) {
  struct sockaddr_in sa = {.sin_family = AF_INET};
  socklen_t sl = sizeof sa;
  int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), fd;
  const char *kind = o->kind != NULL ? o->kind : "";
  struct pollfd p;
  ldm6_io *io;
  long got = 0;

  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
      listen(lfd, 4) != 0 ||
      getsockname(lfd, (struct sockaddr *)&sa, &sl) != 0) {
    perror("ldm6_peer: listen");
    return 1;
  }
  printf("PORT %u\n", (unsigned)ntohs(sa.sin_port));
  fflush(stdout);
  p.fd = lfd;
  p.events = POLLIN;
  if (poll(&p, 1, (int)o->timeout * 1000) != 1 ||
      (fd = accept(lfd, NULL, NULL)) < 0) {
    printf("NO-CONNECTION\n");
    return 1;
  }
  close(lfd);
  io = ldm6_io_new(fd, 64u << 20);
  for (;;) {
    ldm6_value v;
    ldm6_io_msg m;
    size_t used;
    int rc = ldm6_io_recv(io, (int)o->timeout * 1000, &m);

    if (rc != LDM6_IO_OK) {
      printf("END %s\n", ldm6_io_strerror(rc));
      break;
    }
    if (m.hdr.type != LDM6_RPC_CALL)
      continue;
    switch (m.hdr.u.call.proc) {
    case LDM6_HIYA: {
      ldm6_hiya_reply r = {.code = LDM6_OK};
      uint8_t buf[16];
      struct iovec iov = {buf, 0};

      r.u.max_hereis = o->big >= 0 ? (uint32_t)o->big : LDM6_MAX_HEREIS_PRIMARY;
      ldm6_encode(LDM6_T_HIYA_REPLY, &r, buf, sizeof buf, &iov.iov_len);
      rc = ldm6_io_reply(io, m.hdr.xid, &iov, 1);
      break;
    }
    case LDM6_COMINGSOON: {
      static const uint8_t ok[4] = {0};
      struct iovec iov = {(void *)ok, 4};

      rc = ldm6_io_reply(io, m.hdr.xid, &iov, 1);
      break;
    }
    case LDM6_HEREIS:
    case LDM6_BLKDATA:
      got++;
      if (m.hdr.u.call.proc == LDM6_HEREIS &&
          ldm6_decode(LDM6_T_PRODUCT, m.body, m.body_len, &v.product, &used) ==
              0)
        printf("GOT %s\n", v.product.info.ident);
      else
        printf("GOT blkdata\n");
      if (got == o->count && strcmp(kind, "close") == 0) {
        printf("CLOSING\n");
        ldm6_io_free(io);
        return 0;
      }
      break;
    case LDM6_NULLPROC:
      if (got >= o->count && strcmp(kind, "systemerr") == 0) {
        printf("NULLPROC SYSTEM_ERR\n");
        rc = ldm6_io_reply_error(io, m.hdr.xid, LDM6_RPC_SYSTEM_ERR);
      } else {
        printf("NULLPROC\n");
        rc = ldm6_io_reply(io, m.hdr.xid, NULL, 0);
      }
      break;
    default:
      rc = ldm6_io_reply_error(io, m.hdr.xid, LDM6_RPC_PROC_UNAVAIL);
      break;
    }
    fflush(stdout);
    if (rc != LDM6_IO_OK) {
      printf("END %s\n", ldm6_io_strerror(rc));
      break;
    }
  }
  ldm6_io_free(io);
  return 0;
}

/* ---------------------------------------------------------------------- */
/* Single calls, hostile bytes, queues, latency                           */
/* ---------------------------------------------------------------------- */

static int one_call(const peer_opts *o) {
  ldm6_io *io = connect_peer(o);
  uint32_t arg = (uint32_t)o->arg;
  ldm6_io_msg m;
  int rc;

  if (io == NULL)
    return 1;
  rc = call(io, o->vers, o->proc, o->arg >= 0 ? LDM6_T_UINT : LDM6_T_VOID, &arg,
            &m);
  rc = print_reply(rc, &m);
  if (rc == 0 && o->proc == LDM6_IS_ALIVE && o->vers == 6) {
    bool alive;
    size_t used;

    ldm6_decode(LDM6_T_BOOL, m.body, m.body_len, &alive, &used);
    printf("ALIVE %s\n", alive ? "yes" : "no");
  }
  ldm6_io_free(io);
  return rc;
}

/* Wait up to ms for the server to close fd (EOF or reset; what it sends
 * first is read and dropped).  @return true if it closed */
static bool closed_within(int fd, int64_t ms) {
  int64_t end = tu_now_ms() + ms;

  for (;;) {
    struct pollfd p = {fd, POLLIN, 0};
    int64_t left = end - tu_now_ms();
    char b[512];
    ssize_t n;

    if (left < 0)
      left = 0;
    if (poll(&p, 1, (int)left) == 0)
      return false;
    n = read(fd, b, sizeof b);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
      return true;
  }
}

/* Slowloris: send nothing ("silent"), or a NULLPROC call a byte every -d
 * ms ("trickle"); print when the server closed, counted from the connect.
 * @return 0 if it closed within the timeout */
static int slow(const peer_opts *o, const char *kind) {
  static const uint8_t nullproc[44] = {0x80, 0, 0,    40,   0, 0, 0, 7,
                                       0,    0, 0,    0,    0, 0, 0, 2,
                                       0,    4, 0x93, 0x7d, 0, 0, 0, 6};
  int64_t t0 = tu_now_ms(), end = t0 + o->timeout * 1000;
  ldm6_io *io = connect_peer(o);
  size_t sent = 0;
  bool closed = false;
  int fd;

  if (io == NULL)
    return 1;
  fd = ldm6_io_fd(io);
  while (!closed && tu_now_ms() < end) {
    int64_t step = strcmp(kind, "trickle") == 0 && sent < sizeof nullproc
                       ? (o->delay_ms > 0 ? o->delay_ms : 100)
                       : end - tu_now_ms();

    if (strcmp(kind, "trickle") == 0 && sent < sizeof nullproc) {
      if (send(fd, nullproc + sent, 1, MSG_NOSIGNAL) != 1) {
        closed = true;
        break;
      }
      sent++;
    }
    closed = closed_within(fd, step);
  }
  printf("%s after %lld ms, %zu bytes sent\n", closed ? "CLOSED" : "STILL-OPEN",
         (long long)(tu_now_ms() - t0), sent);
  ldm6_io_free(io);
  return closed ? 0 : 1;
}

/* Open -n connections that send nothing, and hold them for the timeout:
 * "OPEN n" once all are connected, then "CLOSED i after ms" for each the
 * server closes, "HELD k" at the end (those still open).  @return 0 */
static int hold(const peer_opts *o) {
  long n = o->count > 0 ? o->count : 1, i, open_n;
  int64_t t0 = tu_now_ms(), end = t0 + o->timeout * 1000;
  struct pollfd *p = calloc((size_t)n, sizeof *p);
  ldm6_io **io = calloc((size_t)n, sizeof *io);

  if (p == NULL || io == NULL)
    return 1;
  for (i = 0; i < n; i++) {
    io[i] = connect_peer(o);
    if (io[i] == NULL)
      return 1;
    p[i].fd = ldm6_io_fd(io[i]);
    p[i].events = POLLIN;
  }
  printf("OPEN %ld\n", n);
  open_n = n;
  while (open_n > 0 && tu_now_ms() < end) {
    if (poll(p, (nfds_t)n, (int)(end - tu_now_ms())) <= 0)
      continue;
    for (i = 0; i < n; i++) {
      char b[512];
      ssize_t r;

      if (p[i].fd < 0 || p[i].revents == 0)
        continue;
      r = read(p[i].fd, b, sizeof b);
      if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
        printf("CLOSED %ld after %lld ms\n", i, (long long)(tu_now_ms() - t0));
        p[i].fd = -1;
        open_n--;
      }
    }
  }
  printf("HELD %ld\n", open_n);
  for (i = 0; i < n; i++)
    ldm6_io_free(io[i]);
  free(p);
  free(io);
  return 0;
}

/* Send hostile bytes; the server must close within the timeout. */
static int hostile(const peer_opts *o, const char *kind) {
  static const uint8_t huge[8] = {0x7f, 0xff, 0xff, 0xff, 1, 2, 3, 4};
  static const uint8_t badhdr[16] = {0x80, 0, 0, 12, 0, 0, 0, 1,
                                     0,    0, 0, 9,  0, 0, 0, 0};
  uint8_t junk[4096];
  const uint8_t *p = junk;
  size_t n = sizeof junk;
  ldm6_io *io = connect_peer(o);
  ldm6_io_msg m;
  int rc;

  if (io == NULL)
    return 1;
  tu_fill(junk, sizeof junk, 99);
  junk[0] &= 0x7f; /* a length word of a big, non-final fragment */
  if (strcmp(kind, "huge") == 0) {
    p = huge;
    n = sizeof huge;
  } else if (strcmp(kind, "badheader") == 0) {
    p = badhdr;
    n = sizeof badhdr;
  } else if (strcmp(kind, "truncated") == 0) {
    static const uint8_t part[20] = {0x80, 0, 0, 200, 0, 0, 0, 5, 0,    0,
                                     0,    0, 0, 0,   0, 2, 0, 4, 0x93, 0xfd};

    rc = (int)write(ldm6_io_fd(io), part, sizeof part);
    ldm6_io_free(io); /* the server sees EOF inside a record */
    printf("SENT truncated %d\n", rc);
    return rc == (int)sizeof part ? 0 : 1;
  }
  if (write(ldm6_io_fd(io), p, n) != (ssize_t)n) {
    ldm6_io_free(io);
    return 1;
  }
  do
    rc = ldm6_io_recv(io, (int)o->timeout * 1000, &m);
  while (rc == LDM6_IO_OK);
  printf("%s %s\n", rc == LDM6_IO_TIMEDOUT ? "STILL-OPEN" : "CLOSED",
         ldm6_io_strerror(rc));
  ldm6_io_free(io);
  return rc == LDM6_IO_TIMEDOUT;
}

static int insert(const peer_opts *o) {
  pq_t *pq = NULL;
  pq_error err;
  uint32_t ft;
  long n;
  int rc = PQ_OK;

  if (feedtype(o->feed, &ft) != 0)
    return 2;
  if (pq_open(o->queue, 0, &pq, &err) != PQ_OK) {
    fprintf(stderr, "ldm6_peer: %s\n", err.pe_msg);
    return 1;
  }
  for (n = 0; n < o->count && rc == PQ_OK; n++) {
    pq_prod_info info;
    uint8_t *data = make_product(o, ft, n, &info);
    char hex[33];

    rc = pq_insert(pq, &info, data);
    pq_sig_format(info.signature, hex);
    printf("INSERTED %s %s %s\n", hex, info.ident, pq_errname(rc));
    fflush(stdout);
    free(data);
    if (o->delay_ms > 0)
      usleep((useconds_t)o->delay_ms * 1000);
  }
  pq_close(pq);
  return rc != PQ_OK;
}

static int mkqueue(const peer_opts *o) {
  pq_create_opts co = {.pc_data_size = (uint64_t)o->size,
                       .pc_slots = o->count > 0 ? (uint64_t)o->count : 0,
                       .pc_flags = PQ_CLOBBER};
  pq_t *pq = NULL;
  pq_error err;

  if (pq_create(o->queue, &co, &pq, &err) != PQ_OK) {
    fprintf(stderr, "ldm6_peer: %s\n", err.pe_msg);
    return 1;
  }
  pq_close(pq);
  return 0;
}

/* ---------------------------------------------------------------------- */
/* Replaying a real LDM session                                           */
/* ---------------------------------------------------------------------- */

/*
 * A script made from a capture of real LDM 6.15 peers, one record a line:
 *   C <hex>   the client's record: sent as captured (a reply gets the xid
 *             of our server's call that the captured one stands for)
 *   S <hex>   the server's record: ours must be the same bytes, except the
 *             xids of its calls and the pid in a FEEDME/NOTIFYME OK
 *   I <hex>   a HEREIS record: its product is inserted into -q first
 *   J <hex>   a COMINGSOON record whose product K completes
 *   K <hex>   a BLKDATA record: J's product with this data is inserted
 *   L <hex>   a HEREIS record: J's product with its data is inserted
 */
typedef struct replay_state {
  ldm6_io *io;
  pq_t *pq;
  uint32_t map_from[64], map_to[64];
  unsigned nmap;
  uint32_t last_proc; /* of the last call the client sent */
  ldm6_prod_info pending;
  long line;
} replay_state;

static size_t unhex(const char *p, uint8_t *out, size_t cap) {
  size_t n = 0;
  unsigned v;
  int used;

  while (n < cap && sscanf(p, " %2x%n", &v, &used) == 1) {
    out[n++] = (uint8_t)v;
    p += used;
  }
  return n;
}

static uint32_t get32(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
         p[3];
}

static void put32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(v >> 24);
  p[1] = (uint8_t)(v >> 16);
  p[2] = (uint8_t)(v >> 8);
  p[3] = (uint8_t)v;
}

/* The captured record rec (mark included) against the one we received. */
static int replay_expect(replay_state *st, const uint8_t *rec, size_t n) {
  ldm6_io_msg m;
  ldm6_rpc_msg want;
  size_t used, i;
  int rc = ldm6_io_recv(st->io, 10000, &m);

  if (rc != LDM6_IO_OK || n < 8 ||
      ldm6_rpc_decode(rec + 4, n - 4, &want, &used)) {
    printf("MISMATCH line %ld: %s\n", st->line, ldm6_io_strerror(rc));
    return 1;
  }
  if (m.hdr.type != want.type || used + m.body_len != n - 4 ||
      (want.type == LDM6_RPC_CALL && m.hdr.u.call.proc != want.u.call.proc) ||
      (want.type == LDM6_RPC_REPLY && m.hdr.xid != want.xid)) {
    printf("MISMATCH line %ld: header or length (%zu bytes, want %zu)\n",
           st->line, used + m.body_len, n - 4);
    return 1;
  }
  for (i = 0; i < m.body_len; i++) {
    bool pid = want.type == LDM6_RPC_REPLY && i >= 4 && i < 8 &&
               rec[4 + used] == 0 && rec[5 + used] == 0 && rec[6 + used] == 0 &&
               rec[7 + used] == 0 &&
               (st->last_proc == LDM6_FEEDME || st->last_proc == LDM6_NOTIFYME);

    if (m.body[i] != rec[4 + used + i] && !pid) {
      printf("MISMATCH line %ld: byte %zu of the body: %02x, want %02x\n",
             st->line, i, m.body[i], rec[4 + used + i]);
      return 1;
    }
  }
  if (want.type == LDM6_RPC_CALL && st->nmap < 64) {
    st->map_from[st->nmap] = want.xid;
    st->map_to[st->nmap++] = m.hdr.xid;
  }
  printf("SAME line %ld\n", st->line);
  return 0;
}

/* Send the client's record, its reply xid mapped to our server's. */
static int replay_send(replay_state *st, uint8_t *rec, size_t n) {
  if (n < 16)
    return 1;
  if (get32(rec + 8) == LDM6_RPC_REPLY) {
    unsigned i;

    for (i = 0; i < st->nmap; i++)
      if (st->map_from[i] == get32(rec + 4)) {
        put32(rec + 4, st->map_to[i]);
        break;
      }
  } else {
    st->last_proc = get32(rec + 24);
  }
  return write(ldm6_io_fd(st->io), rec, n) != (ssize_t)n;
}

/* I, J, K, L: put the captured products into the queue. */
static int replay_insert(replay_state *st, char op, const uint8_t *rec,
                         size_t n) {
  ldm6_value v;
  pq_prod_info info;
  size_t used;
  int rc = 1;

  if (n < 44)
    return 1;
  rec += 44; /* the mark and the CALL header */
  n -= 44;
  if (op == 'I' &&
      ldm6_decode(LDM6_T_PRODUCT, rec, n, &v.product, &used) == 0 &&
      ldm6_info_to_pq(&v.product.info, &info) == 0)
    rc = pq_insert(st->pq, &info, v.product.data);
  else if (op == 'L' &&
           ldm6_decode(LDM6_T_PRODUCT, rec, n, &v.product, &used) == 0 &&
           ldm6_info_to_pq(&st->pending, &info) == 0)
    rc = pq_insert(st->pq, &info, v.product.data);
  else if (op == 'J' && ldm6_decode(LDM6_T_COMINGSOON_ARGS, rec, n,
                                    &v.comingsoon_args, &used) == 0) {
    st->pending = v.comingsoon_args.info;
    return 0;
  } else if (op == 'K' &&
             ldm6_decode(LDM6_T_DATAPKT, rec, n, &v.datapkt, &used) == 0 &&
             ldm6_info_to_pq(&st->pending, &info) == 0)
    rc = pq_insert(st->pq, &info, v.datapkt.data);
  printf("INSERT line %ld: %s\n", st->line, pq_errname(rc));
  return rc != PQ_OK;
}

static int replay(const peer_opts *o) {
  replay_state st = {0};
  static uint8_t rec[65536];
  static char line[200000];
  pq_error err;
  FILE *f = fopen(o->kind, "r");
  int rc = 0;

  if (f == NULL || pq_open(o->queue, 0, &st.pq, &err) != PQ_OK) {
    fprintf(stderr, "ldm6_peer: cannot open %s or %s\n", o->kind, o->queue);
    return 2;
  }
  while (rc == 0 && fgets(line, sizeof line, f) != NULL) {
    size_t n = unhex(line + 1, rec, sizeof rec);

    st.line++;
    if (strchr("IJKL", line[0]) != NULL) {
      rc = replay_insert(&st, line[0], rec, n);
      continue;
    }
    if (st.io == NULL && (st.io = connect_peer(o)) == NULL)
      rc = 1;
    else if (line[0] == 'C')
      rc = replay_send(&st, rec, n);
    else if (line[0] == 'S')
      rc = replay_expect(&st, rec, n);
  }
  fclose(f);
  ldm6_io_free(st.io);
  pq_close(st.pq);
  printf("REPLAY %s\n", rc == 0 ? "done" : "failed");
  return rc;
}

/* The queue must pass every invariant without repair. */
static int check(const peer_opts *o) {
  pq_t *pq = open_readonly(o);
  pq_check_report rep;
  int rc;

  if (pq == NULL)
    return 1;
  rc = pq_check(pq, &rep);
  /* Read-only, pq_check() repairs nothing: a crash's traces are reported
   * as pr_interrupted and pr_dead_resv instead. */
  bool traces = rep.pr_repaired || rep.pr_interrupted || rep.pr_dead_resv;
  printf("CHECK %s products %llu reserved %llu repaired %d %s\n",
         pq_errname(rc), (unsigned long long)rep.pr_products,
         (unsigned long long)rep.pr_reserved, (int)traces, rep.pr_msg);
  pq_close(pq);
  return rc != PQ_OK || traces;
}

/* One line per product of the queue, in insertion order: signature,
 * ident, size, whether the data's MD5 is the signature ("ok"), origin,
 * insertion time (microseconds). */
static int dump_one(const pq_prod_info *info, const void *data,
                    const pq_place *place, void *arg) {
  uint8_t md5[PQ_SIGLEN];
  char hex[33];
  long *bad = arg;

  pq_md5(data, (size_t)info->size, md5);
  pq_sig_format(info->signature, hex);
  if (memcmp(md5, info->signature, PQ_SIGLEN) != 0)
    ++*bad;
  printf("%s %s %llu %s %s %llu\n", hex, info->ident,
         (unsigned long long)info->size,
         memcmp(md5, info->signature, PQ_SIGLEN) == 0 ? "ok" : "CORRUPT",
         info->origin, (unsigned long long)place->pp_inserted);
  return 0;
}

static int dump(const peer_opts *o) {
  pq_t *pq = open_readonly(o);
  long bad = 0;
  int rc;

  if (pq == NULL)
    return 1;
  rc = read_all(o, pq, dump_one, &bad);
  pq_close(pq);
  return rc != 0 || bad > 0;
}

/* The number of products in the queue (no data read). */
static int count_one(const pq_prod_info *info, const void *data,
                     const pq_place *place, void *arg) {
  (void)info;
  (void)data;
  (void)place;
  ++*(long *)arg;
  return 0;
}

static int count(const peer_opts *o) {
  pq_t *pq = open_readonly(o);
  long n = 0;
  int rc;

  if (pq == NULL)
    return 1;
  rc = read_all(o, pq, count_one, &n);
  pq_close(pq);
  printf("%ld\n", n);
  return rc;
}

/* The products readers hold now (pins included): "HELD n". */
static int held(const peer_opts *o) {
  pq_t *pq = open_readonly(o);
  uint64_t n = 0;
  int rc;

  if (pq == NULL)
    return 1;
  rc = pq_stats_held(pq, &n);
  pq_close(pq);
  if (rc != PQ_OK) {
    fprintf(stderr, "ldm6_peer: held: %s\n", pq_strerror(rc));
    return 1;
  }
  printf("HELD %llu\n", (unsigned long long)n);
  return 0;
}

/* Every invariant of the queue (pq_check(), a writer's handle: a crash's
 * leftovers are repaired first, as the next writer would): "SOUND n
 * products" or "UNSOUND <invariant>: <what>". */
static int sound(const peer_opts *o) {
  pq_t *pq = NULL;
  pq_error err;
  pq_check_report r;
  int rc;

  if (pq_open(o->queue, 0, &pq, &err) != PQ_OK) {
    fprintf(stderr, "ldm6_peer: %s\n", err.pe_msg);
    return 1;
  }
  memset(&r, 0, sizeof r);
  rc = pq_check(pq, &r);
  pq_close(pq);
  if (rc != PQ_OK) {
    printf("UNSOUND %d: %s (%s)\n", r.pr_invariant, r.pr_msg, pq_strerror(rc));
    return 1;
  }
  printf("SOUND %llu products%s\n", (unsigned long long)r.pr_products,
         r.pr_repaired ? ", repaired first" : "");
  return 0;
}

/* Can this host use ::1?  (Containers often have no IPv6.) */
static int have_ipv6(void) {
  struct sockaddr_in6 s6;
  int fd = socket(AF_INET6, SOCK_STREAM, 0), rc;

  if (fd < 0)
    return 1;
  memset(&s6, 0, sizeof s6);
  s6.sin6_family = AF_INET6;
  s6.sin6_addr = in6addr_loopback;
  rc = bind(fd, (struct sockaddr *)&s6, sizeof s6);
  close(fd);
  return rc == 0 ? 0 : 1;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

  return (x > y) - (x < y);
}

/* Insert product n and wait up to 5 s for its NOTIFICATION, answering the
 * NULLPROCs before it; its latency in *us.  @return 0 or -1 */
static int notified(const peer_opts *o, pq_t *pq, ldm6_io *io, uint32_t ft,
                    long n, int64_t *us) {
  pq_prod_info info;
  uint8_t *data = make_product(o, ft, n, &info);
  int64_t t0 = tu_now_us();
  ldm6_io_msg m;
  int rc;

  if (data == NULL)
    return -1;
  rc = pq_insert(pq, &info, data);
  free(data);
  if (rc != PQ_OK) {
    printf("INSERT %s\n", pq_errname(rc));
    return -1;
  }
  for (;;) {
    if (ldm6_io_recv(io, 5000, &m) != LDM6_IO_OK)
      return -1;
    if (m.hdr.type == LDM6_RPC_CALL && m.hdr.u.call.proc == LDM6_NOTIFICATION)
      break;
    if (m.hdr.type == LDM6_RPC_CALL)
      ldm6_io_reply(io, m.hdr.xid, NULL, 0); /* NULLPROC */
  }
  *us = tu_now_us() - t0;
  return 0;
}

/* NOTIFYME, then insert products one by one; each must be notified.  A
 * first product, not counted, is notified before the clock starts: the
 * upstream has then reached the end of the queue. */
static int latency(const peer_opts *o) {
  ldm6_prod_class cls;
  ldm6_fornme_reply rep;
  int64_t *lat = calloc((size_t)o->count, sizeof *lat), first;
  pq_t *pq = NULL;
  pq_error err;
  ldm6_io_msg m;
  uint32_t ft;
  size_t used;
  ldm6_io *io;
  long n;
  int rc = 1;

  if (lat == NULL || make_class(o, &cls) != 0 || feedtype(o->feed, &ft) != 0 ||
      pq_open(o->queue, 0, &pq, &err) != PQ_OK)
    return 2;
  io = connect_peer(o);
  if (io == NULL ||
      call(io, 6, LDM6_NOTIFYME, LDM6_T_PROD_CLASS, &cls, &m) != LDM6_IO_OK ||
      ldm6_decode(LDM6_T_FORNME_REPLY, m.body, m.body_len, &rep, &used) != 0 ||
      rep.code != LDM6_OK || notified(o, pq, io, ft, o->count, &first) != 0)
    goto out;
  for (n = 0; n < o->count; n++) {
    usleep(o->delay_ms > 0 ? (useconds_t)o->delay_ms * 1000 : 20000);
    if (notified(o, pq, io, ft, n, &lat[n]) != 0)
      goto out;
  }
  qsort(lat, (size_t)o->count, sizeof *lat, cmp_i64);
  printf("LATENCY us p50 %lld p90 %lld max %lld\n",
         (long long)lat[o->count / 2], (long long)lat[o->count * 9 / 10],
         (long long)lat[o->count - 1]);
  rc = lat[o->count / 2] > o->threshold_us;
out:
  if (rc != 0)
    printf("LATENCY failed\n");
  ldm6_io_free(io);
  pq_close(pq);
  free(lat);
  return rc;
}

/* ---------------------------------------------------------------------- */

static void usage(void) {
  fprintf(
      stderr,
      "usage: ldm6_peer CMD [options]\n"
      "  notifyme|feedme|hiya|call|hostile|hold|insert|mkqueue|latency|check\n"
      "  hiya-server (-n count -k close|systemerr -b max_hereis)\n"
      "  replay (-k script -q queue)|dump|count|held|sound (-q queue)\n"
      "  have-ipv6\n"
      "  -h host -p port -f feed -P pattern -o offset -n count -s size\n"
      "  -t timeout -a age -d delay_ms -q queue -S sig -i ident -A\n"
      "  -k huge|garbage|badheader|truncated|silent|trickle (hostile;\n"
      "     trickle: a NULLPROC a byte every -d ms)\n"
      "  hold (-n connections held for -t seconds, sending nothing)\n"
      "  -U (reply PROC_UNAVAIL) -c (COMINGSOON) -b big -D (DONT_SEND)\n"
      "  -Z declared size -Y BLKDATA length word (crafted pushes)\n"
      "  hiya -k announce (COMINGSOON only, then close) | cut (half of\n"
      "     the first data record, then close)\n"
      "  -W (never answer COMINGSOON) -G (never answer NULLPROC)\n"
      "  -F (feedme: after OK, send NULLPROC calls without end, reading\n"
      "     nothing, until -t)\n"
      "  -X n (stop reading after n products, for -d ms if given)\n"
      "  -V vers -R proc -x arg -L p50_us -z seed\n"
      "  -N n (notifyme, feedme: the pattern in n specs)\n"
      "  feedme -k long (after OK, the start of a 1 MiB record)\n"
      "  feedme -k chatty (after OK, 200 NULLPROC calls in one write)\n");
}

static long num(const char *s) {
  return strtol(s, NULL, 0);
}

/* Options that take a string, and the flags.  @return false if ch is not
 * one of them */
static bool set_text_opt(int ch, const char *arg, peer_opts *o) {
  switch (ch) {
  case 'h':
    o->host = arg;
    break;
  case 'f':
    o->feed = arg;
    break;
  case 'P':
    o->pattern = arg;
    break;
  case 'q':
    o->queue = arg;
    break;
  case 'S':
    o->sig = arg;
    break;
  case 'i':
    o->ident = arg;
    break;
  case 'k':
    o->kind = arg;
    break;
  case 'A':
    o->alternate = true;
    break;
  case 'U':
    o->reply_unavail = true;
    break;
  case 'c':
    o->comingsoon = true;
    break;
  case 'D':
    o->dontsend = true;
    break;
  case 'W':
    o->hold = true;
    break;
  case 'G':
    o->mute = true;
    break;
  case 'F':
    o->flood = true;
    break;
  default:
    return false;
  }
  return true;
}

/* Options that take a number, each beside the field it sets.  @return
 * false if ch is not one of them */
static bool set_number_opt(int ch, const char *arg, peer_opts *o) {
  long *const longs[128] = {
      ['o'] = &o->offset,   ['n'] = &o->count, ['s'] = &o->size,
      ['t'] = &o->timeout,  ['a'] = &o->age,   ['d'] = &o->delay_ms,
      ['b'] = &o->big,      ['x'] = &o->arg,   ['L'] = &o->threshold_us,
      ['Z'] = &o->declared, ['Y'] = &o->dbuf,  ['X'] = &o->stall,
      ['N'] = &o->specs};
  unsigned *const uints[128] = {
      ['p'] = &o->port, ['V'] = &o->vers, ['R'] = &o->proc, ['z'] = &o->seed};

  if (ch < 0 || ch >= 128)
    return false;
  if (longs[ch] != NULL)
    *longs[ch] = num(arg);
  else if (uints[ch] != NULL)
    *uints[ch] = (unsigned)num(arg);
  else
    return false;
  return true;
}

/* The options after the command.  @return 0, or -1 (usage printed) */
static int parse(int argc, char **argv, peer_opts *po) {
  peer_opts o = *po;
  int ch;

  optind = 2;
  while ((ch = getopt(
              argc, argv,
              "h:p:f:P:o:n:s:t:a:d:q:S:i:k:AUcb:DV:R:x:L:z:Z:Y:WGFX:N:")) !=
         -1) {
    if (!set_text_opt(ch, optarg, &o) && !set_number_opt(ch, optarg, &o)) {
      usage();
      return -1;
    }
  }
  *po = o;
  return 0;
}

int main(int argc, char **argv) {
  peer_opts o = {.host = "127.0.0.1",
                 .feed = "ANY",
                 .pattern = ".*",
                 .offset = 0,
                 .count = -1,
                 .size = 100,
                 .timeout = 10,
                 .ident = "peer",
                 .vers = 6,
                 .arg = -1,
                 .big = -1,
                 .declared = -1,
                 .stall = -1,
                 .dbuf = -1,
                 .threshold_us = 5000,
                 .seed = 1};
  const char *cmd = argc > 1 ? argv[1] : "";

  if (argc < 2 || parse(argc, argv, &o) != 0) {
    if (argc < 2)
      usage();
    return 2;
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (strcmp(cmd, "notifyme") == 0)
    return subscribe(&o, true);
  if (strcmp(cmd, "feedme") == 0)
    return subscribe(&o, false);
  if (strcmp(cmd, "hiya") == 0)
    return hiya(&o);
  if (strcmp(cmd, "hiya-server") == 0)
    return hiya_server(&o);
  if (strcmp(cmd, "call") == 0)
    return one_call(&o);
  if (strcmp(cmd, "hold") == 0)
    return hold(&o);
  if (strcmp(cmd, "hostile") == 0 && o.kind != NULL &&
      (strcmp(o.kind, "silent") == 0 || strcmp(o.kind, "trickle") == 0))
    return slow(&o, o.kind);
  if (strcmp(cmd, "hostile") == 0 && o.kind != NULL)
    return hostile(&o, o.kind);
  if (strcmp(cmd, "replay") == 0 && o.queue != NULL && o.kind != NULL)
    return replay(&o);
  if (strcmp(cmd, "check") == 0 && o.queue != NULL)
    return check(&o);
  if (strcmp(cmd, "dump") == 0 && o.queue != NULL)
    return dump(&o);
  if (strcmp(cmd, "count") == 0 && o.queue != NULL)
    return count(&o);
  if (strcmp(cmd, "held") == 0 && o.queue != NULL)
    return held(&o);
  if (strcmp(cmd, "sound") == 0 && o.queue != NULL)
    return sound(&o);
  if (strcmp(cmd, "have-ipv6") == 0)
    return have_ipv6();
  if (strcmp(cmd, "insert") == 0 && o.queue != NULL)
    return insert(&o);
  if (strcmp(cmd, "mkqueue") == 0 && o.queue != NULL)
    return mkqueue(&o);
  if (strcmp(cmd, "latency") == 0 && o.queue != NULL && o.count > 0)
    return latency(&o);
  usage();
  return 2;
}
