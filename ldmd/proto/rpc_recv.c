/*
 * rpc_recv.c - the receive path of an ldm6_io: bytes from the transport
 * into a read buffer, records reassembled from their fragments by the
 * framer (rpc_msg.h) up to the connection's largest record, and their
 * RPC headers decoded.  Bytes read beyond the current record stay in the
 * buffer for the next one.
 *
 * A long record can instead be streamed (ldm6_io_recv_head(), _body(),
 * _end()): its start is gathered and decoded, and the rest is read from
 * the socket straight into the caller's memory (a reservation in the
 * queue), the fragment marks taken out on the way, without a copy in the
 * read buffer but for the bytes it already held.  A record longer than
 * the limit, a truncated one or garbage where a header should be is
 * LDM6_IO_EPROTO, which ends only this connection.
 */
#include "ldmd/proto/rpc_io.h"
#include "ldmd/proto/rpc_io_internal.h"
#include "ldmd/proto/transport.h"

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#define LOWAT_MIN (64u * 1024u)  /* bulk reads wait for this much at least */
#define LOWAT_MAX (512u * 1024u) /* and at most */
#define MARK_LEN 4u              /* a record mark */

/*
 * How many bytes must be in the socket before a wait for input ends.  A
 * receiver reading a large product straight into the queue as fast as it
 * arrives would otherwise wake for every 64 KiB segment loopback delivers
 * (a poll, a read of a few pages, EAGAIN, again); waiting for what it knows
 * is coming, up to LOWAT_MAX, took a running 1 MiB relay here from 4.0-4.4
 * to 5.0-5.4 GB/s (relay_bench -t thr1m).  The sender is bound to send those
 * bytes (they belong to the record being read), and a closed or broken
 * connection ends the wait anyway.
 */
static void set_lowat(ldm6_io *io, size_t want) {
  int v;

  /* Under TLS OpenSSL may hold the start of the record that carries the
   * next of these bytes (it asks for more only when it has no whole
   * record): the socket is bound to get the rest of want's ciphertext,
   * which is at least want less one record on the wire. */
  if (io->ssl != NULL)
    want = want > LDM6_TLS_RECORD_WIRE ? want - LDM6_TLS_RECORD_WIRE : 0;
  v = want < LOWAT_MIN ? 1 : (int)(want < LOWAT_MAX ? want : LOWAT_MAX);
  if (v != io->lowat &&
      setsockopt(io->fd, SOL_SOCKET, SO_RCVLOWAT, &v, sizeof v) == 0)
    io->lowat = v;
}

/* Read what the socket has, at most max bytes, into the buffer.
 * @return LDM6_IO_OK, CLOSED, TIMEDOUT, EPROTO (closed inside a record) or
 * ESYS. */
static int fill_at_most(ldm6_io *io, size_t max, int64_t deadline) {
  int rc;

  set_lowat(io, 1);
  for (;;) {
    ssize_t n = ldm6_io__read(io, io->rbuf, max);

    if (n > 0) {
      io->rpos = 0;
      io->rlen = (size_t)n;
      io->rx_bytes += (uint64_t)n;
      return LDM6_IO_OK;
    }
    if (n == 0) {
      if (!io->partial)
        return LDM6_IO_CLOSED;
      snprintf(io->detail, sizeof io->detail,
               "connection closed inside a record");
      return LDM6_IO_EPROTO;
    }
    if (errno == EINTR)
      continue;
    if (errno == ECONNRESET) {
      ldm6_io__sys_detail(io, "read");
      return LDM6_IO_CLOSED;
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      ldm6_io__sys_detail(io, "read");
      return errno == EPROTO ? LDM6_IO_EPROTO : LDM6_IO_ESYS;
    }
    rc = ldm6_io__wait(io, io->want, deadline);
    if (rc != LDM6_IO_OK)
      return rc;
  }
}

static int fill(ldm6_io *io, int64_t deadline) {
  return fill_at_most(io, sizeof io->rbuf, deadline);
}

/* Decode the header of the record the framer holds. */
static int take_record(ldm6_io *io, ldm6_io_msg *msg) {
  uint8_t *rec;
  size_t len, used;
  int rc;

  if (!ldm6_rpc_framer_record(&io->fr, &rec, &len))
    return LDM6_IO_EPROTO;
  rc = ldm6_rpc_decode(rec, len, &msg->hdr, &used);
  if (rc != 0) {
    snprintf(io->detail, sizeof io->detail,
             "bad RPC header in a record of %zu bytes: %s", len,
             ldm6_strerror(rc));
    return LDM6_IO_EPROTO;
  }
  msg->body = rec + used;
  msg->body_len = len - used;
  return LDM6_IO_OK;
}

/* Decode the header of the start of a record that goes on. */
static int take_head(ldm6_io *io, ldm6_io_msg *msg) {
  uint8_t *rec;
  size_t len = ldm6_rpc_framer_stored(&io->fr, &rec), used;
  int rc = ldm6_rpc_decode(rec, len, &msg->hdr, &used);

  if (rc != 0) {
    snprintf(io->detail, sizeof io->detail,
             "bad RPC header at the start of a long record: %s",
             ldm6_strerror(rc));
    return LDM6_IO_EPROTO;
  }
  msg->body = rec + used;
  msg->body_len = len - used;
  return LDM6_IO_OK;
}

/* Feed the framer from the read buffer, storing at most head bytes of a
 * record (SIZE_MAX: all of it), or io->start bytes once the fragment being
 * read is known to go past head.  Between fragments only the mark's bytes
 * are fed, so no fragment byte past that is stored.
 * @return 1 a record is complete; 2 head bytes are stored and the record
 *         goes on; 0 more bytes are needed; LDM6_IO_EPROTO */
static int feed(ldm6_io *io, size_t head) {
  for (;;) {
    size_t avail = io->rlen - io->rpos, used = 0;
    size_t left = ldm6_rpc_framer_frag_left(&io->fr);
    int rc;

    if (left > 0 && head != SIZE_MAX) {
      size_t stored = ldm6_rpc_framer_stored(&io->fr, NULL), lim = head;

      if (io->start > 0 && io->start < head && stored < head &&
          left > head - stored)
        lim = io->start; /* a long record: its start will do */
      if (stored >= lim)
        return 2;
      if (avail > lim - stored)
        avail = lim - stored;
    } else if (left == 0 && head != SIZE_MAX &&
               avail > ldm6_rpc_framer_want(&io->fr)) {
      avail = ldm6_rpc_framer_want(&io->fr); /* the mark only */
    }
    if (avail == 0)
      return 0;
    if (!io->partial)
      io->fr.max = io->max_record;
    rc = ldm6_rpc_framer_feed(&io->fr, io->rbuf + io->rpos, avail, &used);
    io->rpos += used;
    if (rc < 0) {
      snprintf(io->detail, sizeof io->detail, "%s (limit %zu bytes)",
               ldm6_strerror(rc), io->max_record);
      return LDM6_IO_EPROTO;
    }
    if (rc == 1) {
      io->partial = false;
      return 1;
    }
    if (used > 0)
      io->partial = true;
  }
}

int ldm6_io_recv_head(ldm6_io *io, int timeout_ms, size_t head,
                      ldm6_io_msg *msg, bool *more) {
  int64_t deadline = 0;
  bool timed = false; /* the clock is read only if bytes are wanted */
  /* After a long record the next is likely long too: the first read asks
   * for its start only (and the mark before it), so that its data stays
   * in the socket; a short record takes one more read. */
  size_t first = io->long_last && io->start > 0 && head != SIZE_MAX
                     ? io->start + MARK_LEN
                     : sizeof io->rbuf;

  io->detail[0] = '\0';
  *more = false;
  if (io->streaming) {
    snprintf(io->detail, sizeof io->detail,
             "the streamed record before is not finished");
    return LDM6_IO_EPROTO;
  }
  for (;;) {
    int rc = feed(io, head);

    if (rc == 1) {
      io->long_last = false;
      return take_record(io, msg);
    }
    if (rc == 2) {
      io->streaming = true;
      io->long_last = true;
      *more = true;
      return take_head(io, msg);
    }
    if (rc < 0)
      return rc;
    if (!timed) {
      deadline = ldm6_io__deadline(timeout_ms);
      timed = true;
    }
    rc = fill_at_most(io, first, deadline);
    first = sizeof io->rbuf;
    if (rc != LDM6_IO_OK)
      return rc;
  }
}

int ldm6_io_recv(ldm6_io *io, int timeout_ms, ldm6_io_msg *msg) {
  bool more;

  return ldm6_io_recv_head(io, timeout_ms, SIZE_MAX, msg, &more);
}

/* Read up to n bytes straight from the socket into dst (the buffer must
 * be empty).  With a stream start, bytes the socket has after them, up to
 * what ends this record and starts the next (its padding, an empty last
 * fragment, the next mark and start), go into the buffer in the same call:
 * one read per long record where there would be two.  @return the bytes
 * read into dst (> 0), or an LDM6_IO_* result (< 0) */
static long read_direct(ldm6_io *io, uint8_t *dst, size_t n, int64_t deadline) {
  size_t extra = io->start > 0 ? io->start + 3 * MARK_LEN + 4 : 0;
  int rc;

  for (;;) {
    ssize_t r = ldm6_io__read2(io, dst, n, io->rbuf, extra);

    if (r > 0) {
      io->rx_bytes += (uint64_t)r;
      if ((size_t)r <= n)
        return (long)r;
      io->rpos = 0;
      io->rlen = (size_t)r - n;
      return (long)n;
    }
    if (r == 0 || errno == ECONNRESET) {
      snprintf(io->detail, sizeof io->detail,
               "connection closed inside a record");
      return LDM6_IO_EPROTO;
    }
    if (errno == EINTR)
      continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      ldm6_io__sys_detail(io, "read");
      return errno == EPROTO ? LDM6_IO_EPROTO : LDM6_IO_ESYS;
    }
    set_lowat(io, n);
    rc = ldm6_io__wait(io, io->want, deadline);
    if (rc != LDM6_IO_OK)
      return rc;
  }
}

/* Between fragments: feed the next mark.  @return LDM6_IO_OK or a failure */
static int next_fragment(ldm6_io *io, int64_t deadline) {
  for (;;) {
    int rc = feed(io, 0);

    if (rc == 2)
      return LDM6_IO_OK; /* inside a fragment with bytes to take */
    if (rc == 1 || ldm6_rpc_framer_complete(&io->fr)) {
      snprintf(io->detail, sizeof io->detail,
               "record ends before its contents do");
      return LDM6_IO_EPROTO;
    }
    if (rc < 0)
      return rc;
    rc = fill(io, deadline);
    if (rc != LDM6_IO_OK)
      return rc;
  }
}

int ldm6_io_recv_body(ldm6_io *io, void *dst, size_t n, int timeout_ms) {
  uint8_t *p = dst;

  if (!io->streaming) {
    snprintf(io->detail, sizeof io->detail, "no streamed record");
    return LDM6_IO_EPROTO;
  }
  while (n > 0) {
    int64_t deadline = ldm6_io__deadline(timeout_ms); /* renewed by progress */
    size_t left = ldm6_rpc_framer_frag_left(&io->fr), k;
    long got;

    if (left == 0) {
      int rc = next_fragment(io, deadline);

      if (rc != LDM6_IO_OK)
        return rc;
      continue;
    }
    k = n < left ? n : left;
    if (io->rpos < io->rlen) {
      got = (long)(k < io->rlen - io->rpos ? k : io->rlen - io->rpos);
      if (p != NULL)
        memcpy(p, io->rbuf + io->rpos, (size_t)got);
      io->rpos += (size_t)got;
    } else if (p != NULL) {
      got = read_direct(io, p, k, deadline);
    } else {
      got = fill(io, deadline);
      if (got == LDM6_IO_OK)
        continue;
    }
    if (got < 0)
      return (int)got;
    (void)ldm6_rpc_framer_skip(&io->fr, (size_t)got);
    if (p != NULL)
      p += got;
    n -= (size_t)got;
  }
  set_lowat(io, 1); /* never left raised for whoever polls next */
  return LDM6_IO_OK;
}

size_t ldm6_io_body_ready(ldm6_io *io, size_t n) {
  size_t left = ldm6_rpc_framer_frag_left(&io->fr), have = io->rlen - io->rpos;
  int inq = 0;

  if (!io->streaming)
    return 0;
  if (n > left)
    n = left; /* the next mark may declare anything */
  if (have >= n)
    return n;
  if (io->ssl == NULL && ioctl(io->fd, FIONREAD, &inq) == 0 && inq > 0)
    have += (size_t)inq;
  return have < n ? have : n;
}

int ldm6_io_body_wait(ldm6_io *io, size_t n, int timeout_ms) {
  size_t have = io->rlen - io->rpos;
  int rc;

  if (!io->streaming || io->ssl != NULL || n > LOWAT_MAX ||
      n > ldm6_rpc_framer_frag_left(&io->fr) || have >= n)
    return LDM6_IO_OK;
  set_lowat(io, n - have);
  rc = ldm6_io__wait(io, POLLIN, ldm6_io__deadline(timeout_ms));
  set_lowat(io, 1);
  return rc;
}

int ldm6_io_recv_end(ldm6_io *io, int timeout_ms) {
  int64_t deadline = ldm6_io__deadline(timeout_ms);

  if (!io->streaming) {
    snprintf(io->detail, sizeof io->detail, "no streamed record");
    return LDM6_IO_EPROTO;
  }
  for (;;) {
    int rc;

    if (ldm6_rpc_framer_complete(&io->fr)) {
      io->streaming = false;
      io->partial = false;
      return LDM6_IO_OK;
    }
    if (ldm6_rpc_framer_frag_left(&io->fr) > 0) {
      snprintf(io->detail, sizeof io->detail,
               "record longer than its contents");
      return LDM6_IO_EPROTO;
    }
    rc = feed(io, 0);
    if (rc < 0)
      return rc;
    if (rc == 0) {
      rc = fill(io, deadline);
      if (rc != LDM6_IO_OK)
        return rc;
    }
  }
}

void ldm6_io_set_stream_start(ldm6_io *io, size_t start) {
  io->start = start < sizeof io->rbuf ? start : sizeof io->rbuf - MARK_LEN;
}

void ldm6_io_set_max_record(ldm6_io *io, size_t max_record) {
  /* The framer takes it when it starts a record (see feed()). */
  io->max_record = max_record == 0 ? LDM6_IO_DEFAULT_MAX_RECORD : max_record;
}

bool ldm6_io_buffered(const ldm6_io *io) {
  return io->rpos < io->rlen || io->partial || ldm6_io__tls_pending(io);
}

uint64_t ldm6_io_rx_bytes(const ldm6_io *io) {
  return io->rx_bytes;
}
