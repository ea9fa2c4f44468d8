/*
 * rpc_send.c - the send path of an ldm6_io: calls (with their transaction
 * ids) and replies laid out as records (rpc_msg.h's marks and header in
 * front of the caller's pieces) and written through the transport, after
 * the one-way calls queued in the batch, so that records keep their order.
 *
 * A record is written with one ldm6_io__sendv() over the caller's iovecs
 * (MSG_NOSIGNAL: a closed peer is a result, not a SIGPIPE).  On a plain
 * connection that is sendmsg(2), so product data goes from the queue's
 * mapping to the socket without a copy; under TLS it is encrypted, and the
 * smaller pieces staged, on the way (transport.c), so it is copied.  Small
 * one-way calls may instead be copied into the batch
 * (ldm6_io_queue_call(), ldm6_io_queue_copy()) and written together, one
 * system call for many.  A sender that must not wait writes a record by
 * pieces, as far as the socket takes each time (ldm6_io_send_nowait()).
 * On a plain connection a one-way call's data may instead go from a file
 * (the queue's) by reference (ldm6_io_send_file_nowait(), sendfile(2)):
 * its marks, header and metadata go into the batch, which is written with
 * MSG_MORE just before the data, so that they share its packets; its
 * padding goes into the batch for the next write.
 * Every wait has the send timeout, renewed whenever bytes move.
 */
#include "ldmd/proto/ldm6_xdr.h"
#include "ldmd/proto/rpc_io.h"
#include "ldmd/proto/rpc_io_internal.h"
#include "ldmd/proto/transport.h"

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>

#define MAX_PIECES 16            /* header + caller's iovecs per record */
#define MAX_MARKS 8              /* fragments of LDM6_RPC_FRAG_MAX bytes */
#define OBUF_SIZE (256u * 1024u) /* one-way calls gathered for one write */
#define OBUF_RECORDS 64          /* records gathered at most before a write */

void ldm6_io_set_send_timeout(ldm6_io *io, int timeout_ms) {
  io->send_timeout_ms = timeout_ms;
}

/* Write all of iov[0..n) (modified as it goes). */
static int send_all(ldm6_io *io, struct iovec *iov, size_t n) {
  int64_t deadline = ldm6_io__deadline(io->send_timeout_ms);

  while (n > 0) {
    ssize_t w = ldm6_io__sendv(io, iov, n, MSG_NOSIGNAL);

    if (w < 0) {
      if (errno == EINTR)
        continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        int r = ldm6_io__wait(io, io->want, deadline);

        if (r == LDM6_IO_TIMEDOUT)
          snprintf(io->detail, sizeof io->detail, "peer took nothing for %d ms",
                   io->send_timeout_ms);
        if (r != LDM6_IO_OK)
          return r;
        continue;
      }
      if (errno == EPIPE || errno == ECONNRESET)
        return LDM6_IO_CLOSED;
      ldm6_io__sys_detail(io, "sendmsg");
      return errno == EPROTO ? LDM6_IO_EPROTO : LDM6_IO_ESYS;
    }
    io->tx_bytes += (uint64_t)w;
    deadline = ldm6_io__deadline(io->send_timeout_ms); /* progress */
    while (n > 0 && (size_t)w >= iov->iov_len) {
      w -= (ssize_t)iov->iov_len;
      iov++;
      n--;
    }
    if (n > 0 && w > 0) {
      iov->iov_base = (uint8_t *)iov->iov_base + w;
      iov->iov_len -= (size_t)w;
    }
  }
  return LDM6_IO_OK;
}

int ldm6_io_flush(ldm6_io *io) {
  struct iovec iov;

  if (io->olen == io->ostart)
    return LDM6_IO_OK;
  iov.iov_base = io->obuf + io->ostart;
  iov.iov_len = io->olen - io->ostart;
  io->olen = io->ostart = 0; /* sent or not, these bytes are done with */
  io->orecords = 0;
  return send_all(io, &iov, 1);
}

size_t ldm6_io_queued(const ldm6_io *io) {
  return io->olen - io->ostart;
}

/* Write what iov[0..n) holds, as far as the socket takes it now.
 * @return bytes written (>= 0), or an LDM6_IO_* failure (< 0) */
static long write_nowait_flags(ldm6_io *io, const struct iovec *iov, size_t n,
                               int more) {
  long total = 0;

  while (n > 0) {
    ssize_t w = ldm6_io__sendv(io, iov, n, MSG_NOSIGNAL | MSG_DONTWAIT | more);

    if (w < 0) {
      if (errno == EINTR)
        continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK)
        return total;
      if (errno == EPIPE || errno == ECONNRESET)
        return LDM6_IO_CLOSED;
      ldm6_io__sys_detail(io, "sendmsg");
      return errno == EPROTO ? LDM6_IO_EPROTO : LDM6_IO_ESYS;
    }
    total += (long)w;
    io->tx_bytes += (uint64_t)w;
    while (n > 0 && (size_t)w >= iov->iov_len) {
      w -= (ssize_t)iov->iov_len;
      iov++;
      n--;
    }
    if (n > 0 && w > 0)
      return total; /* a short write: the socket is full */
  }
  return total;
}

/* The queued calls, as far as the socket takes them now (more: MSG_MORE,
 * more bytes follow at once).
 * @return LDM6_IO_OK (all written), LDM6_IO_AGAIN, or a failure */
static int flush_nowait_more(ldm6_io *io, int more) {
  struct iovec iov;
  long w;

  if (io->olen == io->ostart)
    return LDM6_IO_OK;
  iov.iov_base = io->obuf + io->ostart;
  iov.iov_len = io->olen - io->ostart;
  w = write_nowait_flags(io, &iov, 1, more);
  if (w < 0) {
    io->olen = io->ostart = 0;
    io->orecords = 0;
    return (int)w;
  }
  io->ostart += (size_t)w;
  if (io->ostart < io->olen)
    return LDM6_IO_AGAIN;
  io->olen = io->ostart = 0;
  io->orecords = 0;
  return LDM6_IO_OK;
}

static int flush_nowait(ldm6_io *io) {
  return flush_nowait_more(io, 0);
}

int ldm6_io_flush_nowait(ldm6_io *io) {
  io->detail[0] = '\0';
  return flush_nowait(io);
}

/* Can args, nargs be a record's body (the header takes one piece)? */
static bool args_ok(const struct iovec *args, int nargs) {
  return nargs >= 0 && nargs <= MAX_PIECES - 1 && (nargs == 0 || args != NULL);
}

/* A record laid out for writev(); out[] points into marks[]. */
struct layout {
  uint8_t marks[MAX_MARKS][LDM6_RPC_MARK_LEN];
  struct iovec out[2 * MAX_MARKS + MAX_PIECES];
  size_t nout;
};

/* Lay out the record of the header in io->hdr (hlen bytes) and the body
 * (args_ok()): LDM6_IO_OK, or LDM6_IO_EPROTO with the detail. */
static int lay_out(ldm6_io *io, size_t hlen, const struct iovec *body,
                   int nbody, struct layout *l) {
  struct iovec pieces[MAX_PIECES];
  size_t np = 0;
  int i, rc;

  pieces[np].iov_base = io->hdr;
  pieces[np++].iov_len = hlen;
  for (i = 0; i < nbody; i++)
    pieces[np++] = body[i];
  rc = ldm6_rpc_record_iov(pieces, np, 0, l->marks, MAX_MARKS, l->out,
                           sizeof l->out / sizeof l->out[0], &l->nout);
  if (rc != 0) {
    snprintf(io->detail, sizeof io->detail, "cannot lay out record: %s",
             ldm6_strerror(rc));
    return LDM6_IO_EPROTO;
  }
  return LDM6_IO_OK;
}

/* Send one record: the header in io->hdr (hlen bytes) then the pieces,
 * after the queued calls. */
static int send_record(ldm6_io *io, size_t hlen, const struct iovec *body,
                       int nbody) {
  struct layout l;
  int rc;

  io->detail[0] = '\0';
  rc = ldm6_io_flush(io);
  if (rc != LDM6_IO_OK)
    return rc;
  if (!args_ok(body, nbody))
    return LDM6_IO_EPROTO;
  rc = lay_out(io, hlen, body, nbody, &l);
  if (rc != LDM6_IO_OK)
    return rc;
  return send_all(io, l.out, l.nout);
}

int ldm6_io_send_call(ldm6_io *io, uint32_t vers, uint32_t proc,
                      const struct iovec *args, int nargs, uint32_t *xid) {
  uint32_t x = io->next_xid++;
  size_t hlen;

  if (ldm6_rpc_encode_call(x, LDM6_PROG, vers, proc, io->hdr, sizeof io->hdr,
                           &hlen) != 0)
    return LDM6_IO_EPROTO;
  if (xid != NULL)
    *xid = x;
  return send_record(io, hlen, args, nargs);
}

/* The bytes of a body (args_ok()). */
static size_t args_total(const struct iovec *args, int nargs) {
  size_t total = 0;
  int i;

  for (i = 0; i < nargs; i++)
    total += args[i].iov_len;
  return total;
}

/* Add a call record of total body bytes to the batch in io->obuf, which
 * has room for it: LDM6_IO_OK, or LDM6_IO_EPROTO.  *xid: its transaction
 * id (xid may be NULL). */
static int append_call(ldm6_io *io, uint32_t vers, uint32_t proc,
                       const struct iovec *args, int nargs, size_t total,
                       uint32_t *xid) {
  size_t hlen, at = io->olen + LDM6_RPC_MARK_LEN;
  int i;

  io->detail[0] = '\0';
  if (xid != NULL)
    *xid = io->next_xid;
  if (ldm6_rpc_encode_call(io->next_xid++, LDM6_PROG, vers, proc, io->obuf + at,
                           LDM6_IO__HDR_MAX, &hlen) != 0)
    return LDM6_IO_EPROTO;
  at += hlen;
  for (i = 0; i < nargs; i++) {
    if (args[i].iov_len > 0)
      memcpy(io->obuf + at, args[i].iov_base, args[i].iov_len);
    at += args[i].iov_len;
  }
  ldm6_rpc_mark_put(io->obuf + io->olen, (uint32_t)(hlen + total), true);
  io->olen = at;
  io->orecords++;
  return LDM6_IO_OK;
}

/* Does a record of total body bytes still fit in the batch? */
static bool batch_room(const ldm6_io *io, size_t total) {
  return io->olen + LDM6_RPC_MARK_LEN + LDM6_IO__HDR_MAX + total <= OBUF_SIZE;
}

int ldm6_io_queue_call(ldm6_io *io, uint32_t vers, uint32_t proc,
                       const struct iovec *args, int nargs) {
  size_t total;
  int rc;

  if (!args_ok(args, nargs))
    return LDM6_IO_EPROTO;
  total = args_total(args, nargs);
  if (total > LDM6_IO_COPY_MAX)
    return ldm6_io_send_call(io, vers, proc, args, nargs, NULL);
  if (io->obuf == NULL) {
    io->obuf = malloc(OBUF_SIZE);
    if (io->obuf == NULL) /* no buffer: send it on its own */
      return ldm6_io_send_call(io, vers, proc, args, nargs, NULL);
  }
  if (!batch_room(io, total)) {
    rc = ldm6_io_flush(io);
    if (rc != LDM6_IO_OK)
      return rc;
  }
  rc = append_call(io, vers, proc, args, nargs, total, NULL);
  if (rc == LDM6_IO_OK && io->orecords >= OBUF_RECORDS)
    return ldm6_io_flush(io);
  return rc;
}

int ldm6_io_queue_copy(ldm6_io *io, uint32_t vers, uint32_t proc,
                       const struct iovec *args, int nargs) {
  return ldm6_io_queue_copy_xid(io, vers, proc, args, nargs, NULL);
}

int ldm6_io_queue_copy_xid(ldm6_io *io, uint32_t vers, uint32_t proc,
                           const struct iovec *args, int nargs, uint32_t *xid) {
  size_t total;

  if (!args_ok(args, nargs))
    return LDM6_IO_EPROTO;
  total = args_total(args, nargs);
  if (total > LDM6_IO_COPY_MAX)
    return LDM6_IO_EPROTO;
  if (io->obuf == NULL) {
    io->obuf = malloc(OBUF_SIZE);
    if (io->obuf == NULL) {
      snprintf(io->detail, sizeof io->detail, "no memory for a batch");
      return LDM6_IO_ESYS;
    }
  }
  if (io->orecords >= OBUF_RECORDS || !batch_room(io, total))
    return LDM6_IO_FULL;
  return append_call(io, vers, proc, args, nargs, total, xid);
}

int ldm6_io_send_nowait(ldm6_io *io, uint32_t vers, uint32_t proc,
                        const struct iovec *args, int nargs,
                        ldm6_io_partial *st) {
  return ldm6_io_send_nowait_more(io, vers, proc, args, nargs, st, false);
}

int ldm6_io_send_nowait_more(ldm6_io *io, uint32_t vers, uint32_t proc,
                             const struct iovec *args, int nargs,
                             ldm6_io_partial *st, bool more) {
  int flag = more ? MSG_MORE : 0;
  struct layout l;
  struct iovec *out = l.out;
  size_t nout, k = 0, hlen;
  uint64_t skip;
  long w;
  int rc;

  io->detail[0] = '\0';
  rc = flush_nowait_more(io, MSG_MORE); /* the queued calls go first */
  if (rc != LDM6_IO_OK)
    return rc;
  if (!args_ok(args, nargs))
    return LDM6_IO_EPROTO;
  if (!st->started) {
    st->xid = io->next_xid++;
    st->sent = 0;
    st->started = true;
  }
  if (ldm6_rpc_encode_call(st->xid, LDM6_PROG, vers, proc, io->hdr,
                           sizeof io->hdr, &hlen) != 0)
    return LDM6_IO_EPROTO;
  rc = lay_out(io, hlen, args, nargs, &l);
  if (rc != LDM6_IO_OK)
    return rc;
  nout = l.nout;
  /* The same layout as before: skip what went then. */
  for (skip = st->sent; k < nout && skip >= out[k].iov_len; k++)
    skip -= out[k].iov_len;
  if (k < nout) {
    out[k].iov_base = (uint8_t *)out[k].iov_base + skip;
    out[k].iov_len -= (size_t)skip;
  }
  w = write_nowait_flags(io, out + k, nout - k, flag);
  if (w < 0)
    return (int)w;
  st->sent += (uint64_t)w;
  for (; k < nout; k++) {
    if ((size_t)w < out[k].iov_len)
      return LDM6_IO_AGAIN;
    w -= (long)out[k].iov_len;
  }
  st->started = false; /* done: st may start the next record */
  return LDM6_IO_OK;
}

int ldm6_io_wait_writable(ldm6_io *io, int timeout_ms) {
  /* Under TLS a write may wait for the peer's bytes (io->want). */
  return ldm6_io__wait(io, io->ssl != NULL ? io->want : POLLOUT,
                       ldm6_io__deadline(timeout_ms));
}

int ldm6_io_reply(ldm6_io *io, uint32_t xid, const struct iovec *res,
                  int nres) {
  size_t hlen;

  if (ldm6_rpc_encode_accepted(xid, LDM6_RPC_SUCCESS, io->hdr, sizeof io->hdr,
                               &hlen) != 0)
    return LDM6_IO_EPROTO;
  return send_record(io, hlen, res, nres);
}

int ldm6_io_reply_error(ldm6_io *io, uint32_t xid, uint32_t accept_stat) {
  size_t hlen;

  if (ldm6_rpc_encode_accepted(xid, accept_stat, io->hdr, sizeof io->hdr,
                               &hlen) != 0)
    return LDM6_IO_EPROTO;
  return send_record(io, hlen, NULL, 0);
}

int ldm6_io_reply_prog_mismatch(ldm6_io *io, uint32_t xid, uint32_t low,
                                uint32_t high) {
  size_t hlen;

  if (ldm6_rpc_encode_prog_mismatch(xid, low, high, io->hdr, sizeof io->hdr,
                                    &hlen) != 0)
    return LDM6_IO_EPROTO;
  return send_record(io, hlen, NULL, 0);
}

int ldm6_io_reply_auth_error(ldm6_io *io, uint32_t xid, uint32_t auth_stat) {
  size_t hlen;

  if (ldm6_rpc_encode_auth_error(xid, auth_stat, io->hdr, sizeof io->hdr,
                                 &hlen) != 0)
    return LDM6_IO_EPROTO;
  return send_record(io, hlen, NULL, 0);
}

int ldm6_io_reply_rpc_mismatch(ldm6_io *io, uint32_t xid) {
  size_t hlen;

  if (ldm6_rpc_encode_rpc_mismatch(xid, LDM6_RPC_VERSION, LDM6_RPC_VERSION,
                                   io->hdr, sizeof io->hdr, &hlen) != 0)
    return LDM6_IO_EPROTO;
  return send_record(io, hlen, NULL, 0);
}

uint64_t ldm6_io_tx_bytes(const ldm6_io *io) {
  return io->tx_bytes;
}

/* Put the marks, header and metadata of a file-data record into the
 * batch, which has room: LDM6_IO_OK or LDM6_IO_EPROTO. */
static int append_file_head(ldm6_io *io, uint32_t vers, uint32_t proc,
                            const void *head, size_t hlen, uint32_t dlen,
                            ldm6_io_partial *st) {
  size_t chdr, at = io->olen + LDM6_RPC_MARK_LEN;
  uint64_t body;

  st->xid = io->next_xid++;
  if (ldm6_rpc_encode_call(st->xid, LDM6_PROG, vers, proc, io->obuf + at,
                           LDM6_IO__HDR_MAX, &chdr) != 0)
    return LDM6_IO_EPROTO;
  body = (uint64_t)chdr + hlen + dlen + ldm6_xdr_pad(dlen);
  if (body > LDM6_RPC_FRAG_MAX)
    return LDM6_IO_EPROTO; /* one fragment only: the caller copies */
  at += chdr;
  memcpy(io->obuf + at, head, hlen);
  ldm6_rpc_mark_put(io->obuf + io->olen, (uint32_t)body, true);
  io->olen = at + hlen;
  io->orecords++;
  return LDM6_IO_OK;
}

int ldm6_io_send_file_nowait(ldm6_io *io, uint32_t vers, uint32_t proc,
                             const void *head, size_t hlen, int fd,
                             uint64_t off, uint32_t dlen, ldm6_io_partial *st) {
  static const uint8_t zeros[4];
  int rc;

  io->detail[0] = '\0';
  if (io->ssl != NULL || hlen > LDM6_IO_COPY_MAX) {
    snprintf(io->detail, sizeof io->detail,
             "file data only on a plain connection, after a short head");
    return LDM6_IO_EPROTO;
  }
  if (io->obuf == NULL && (io->obuf = malloc(OBUF_SIZE)) == NULL) {
    snprintf(io->detail, sizeof io->detail, "no memory for a batch");
    return LDM6_IO_ESYS;
  }
  if (!st->started) {
    if (!batch_room(io, hlen + 4)) {
      rc = flush_nowait(io);
      if (rc != LDM6_IO_OK)
        return rc; /* LDM6_IO_AGAIN: nothing of the record taken yet */
    }
    rc = append_file_head(io, vers, proc, head, hlen, dlen, st);
    if (rc != LDM6_IO_OK)
      return rc;
    st->started = true;
    st->sent = 0; /* here: bytes of the data */
  }
  /* The batch, this record's head last, with the data following. */
  rc = flush_nowait_more(io, dlen > 0 ? MSG_MORE : 0);
  if (rc != LDM6_IO_OK)
    return rc;
  while (st->sent < dlen) {
    off_t at = (off_t)(off + st->sent);
    ssize_t w = sendfile(io->fd, fd, &at, dlen - st->sent);

    if (w < 0) {
      if (errno == EINTR)
        continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        io->want = POLLOUT;
        return LDM6_IO_AGAIN;
      }
      if (errno == EPIPE || errno == ECONNRESET)
        return LDM6_IO_CLOSED;
      ldm6_io__sys_detail(io, "sendfile");
      return LDM6_IO_ESYS;
    }
    if (w == 0) { /* the file is shorter than the caller said */
      snprintf(io->detail, sizeof io->detail, "sendfile: end of file");
      return LDM6_IO_ESYS;
    }
    st->sent += (uint64_t)w;
    io->tx_bytes += (uint64_t)w;
  }
  /* The padding goes with the next write (the batch has room: it was
   * just written out). */
  memcpy(io->obuf + io->olen, zeros, ldm6_xdr_pad(dlen));
  io->olen += ldm6_xdr_pad(dlen);
  st->started = false;
  return LDM6_IO_OK;
}
