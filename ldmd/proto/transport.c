/*
 * transport.c - the bytes of an ldm6_io, plain or through TLS 1.3: what
 * ldm6_io__read() and ldm6_io__sendv() do on each, the BIO through which
 * OpenSSL reaches the socket, the staging of small pieces into whole TLS
 * records, the handshake (ldm6_io_start_tls()) and the look at the first
 * byte that tells a TLS client from a plain one (ldm6_io_peek()).  What a
 * handshake says about the peer, and the contexts, are tls.c's.
 *
 * On a plain connection the two functions are read(2) and sendmsg(2),
 * which takes the caller's iovecs as they are.  After ldm6_io_start_tls()
 * they are SSL_read_ex() and SSL_write_ex(), keeping the system calls'
 * contract (bytes, 0 at the end, or -1 with errno) so that the record
 * layer above is the same for both; each sets io->want to what an EAGAIN
 * must wait for, since under TLS a read may need to write and a write to
 * read.  OpenSSL talks to the socket through our own BIO (send with
 * MSG_NOSIGNAL, so a closed peer is EPIPE and never SIGPIPE; errno kept
 * for us), on the same non-blocking descriptor, so every wait is still
 * ldm6_io__wait()'s poll with its deadline.
 *
 * Under TLS the bytes sent are copied: SSL_write_ex() encrypts them into
 * OpenSSL's own buffer, and ldm6_io__sendv() cuts the caller's pieces
 * into records of 16 KiB, the most one carries, gathering (copying) the
 * pieces shorter than that into one staged record, so that a mark, a
 * header, the metadata and the start of a product go as one record and
 * not one each; a piece of 16 KiB or more is handed to OpenSSL from the
 * caller's memory.  All but the last record of a call go with MSG_MORE.
 */
#include "ldmd/proto/transport.h"
#include "ldmd/proto/rpc_io_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/err.h>

#define IOV_CHUNK 1024 /* iovecs per sendmsg (IOV_MAX on Linux) */

/* The detail of a failed read or write: errno's text, or the TLS fault. */
void ldm6_io__sys_detail(ldm6_io *io, const char *what) {
  if (errno == EPROTO && io->tlserr[0] != '\0')
    snprintf(io->detail, sizeof io->detail, "TLS %s: %s", what, io->tlserr);
  else
    snprintf(io->detail, sizeof io->detail, "%s: %s", what, strerror(errno));
}

static int bio_write(BIO *b, const char *buf, size_t len, size_t *done) {
  ldm6_io *io = BIO_get_data(b);
  ssize_t w;

  BIO_clear_retry_flags(b);
  do
    w = send(io->fd, buf, len, MSG_NOSIGNAL | (io->more ? MSG_MORE : 0));
  while (w < 0 && errno == EINTR);
  if (w >= 0) {
    *done = (size_t)w;
    return 1;
  }
  io->bio_errno = errno;
  if (errno == EAGAIN || errno == EWOULDBLOCK)
    BIO_set_retry_write(b);
  return 0;
}

static int bio_read(BIO *b, char *buf, size_t len, size_t *done) {
  ldm6_io *io = BIO_get_data(b);
  ssize_t r;

  BIO_clear_retry_flags(b);
  do
    r = recv(io->fd, buf, len, 0);
  while (r < 0 && errno == EINTR);
  if (r > 0) {
    *done = (size_t)r;
    return 1;
  }
  if (r == 0) {
    io->bio_eof = true;
    return 0;
  }
  io->bio_errno = errno;
  if (errno == EAGAIN || errno == EWOULDBLOCK)
    BIO_set_retry_read(b);
  return 0;
}

static long bio_ctrl(BIO *b, int cmd, long num, void *ptr) {
  const ldm6_io *io = BIO_get_data(b);

  (void)num;
  (void)ptr;
  if (cmd == BIO_CTRL_FLUSH)
    return 1;
  if (cmd == BIO_CTRL_EOF)
    return io != NULL && io->bio_eof;
  return 0;
}

/* The BIO method, made once per process (before fork() in ldmd). */
static BIO_METHOD *bio_method(void) {
  static BIO_METHOD *m;

  if (m == NULL) {
    m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "ldm6_io");
    if (m != NULL && (BIO_meth_set_write_ex(m, bio_write) != 1 ||
                      BIO_meth_set_read_ex(m, bio_read) != 1 ||
                      BIO_meth_set_ctrl(m, bio_ctrl) != 1)) {
      BIO_meth_free(m);
      m = NULL;
    }
  }
  return m;
}

/* An SSL_*_ex() failure r as a system call's: -1 with errno, or 0. */
static ssize_t tls_fail(ldm6_io *io, int r) {
  switch (SSL_get_error(io->ssl, r)) {
  case SSL_ERROR_WANT_READ:
    io->want = POLLIN;
    errno = EAGAIN;
    return -1;
  case SSL_ERROR_WANT_WRITE:
    io->want = POLLOUT;
    errno = EAGAIN;
    return -1;
  case SSL_ERROR_ZERO_RETURN:
    return 0;
  case SSL_ERROR_SYSCALL:
    errno = io->bio_errno != 0 ? io->bio_errno : ECONNRESET;
    return -1;
  default:
    (void)ldm6_tls_error(io->tlserr, sizeof io->tlserr);
    errno = EPROTO;
    return -1;
  }
}

ssize_t ldm6_io__read(ldm6_io *io, void *buf, size_t n) {
  size_t got = 0;

  io->want = POLLIN;
  if (io->ssl == NULL)
    return read(io->fd, buf, n);
  ERR_clear_error();
  if (SSL_read_ex(io->ssl, buf, n, &got) == 1)
    return (ssize_t)got;
  return tls_fail(io, 0);
}

ssize_t ldm6_io__read2(ldm6_io *io, void *buf, size_t n, void *buf2,
                       size_t n2) {
  struct iovec iov[2] = {{buf, n}, {buf2, n2}};

  if (io->ssl != NULL)
    return ldm6_io__read(io, buf, n);
  io->want = POLLIN;
  return readv(io->fd, iov, n2 > 0 ? 2 : 1);
}

/* Send now what went with MSG_MORE and waits for more. */
static void uncork(const ldm6_io *io) {
  int one = 1;

  (void)setsockopt(io->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

void ldm6_io_push(ldm6_io *io) {
  uncork(io);
}

/* The next TLS record's bytes from iov[i] at off on: straight from the
 * caller's piece when it holds a whole record or the last bytes, else
 * gathered from the pieces that follow into io->stage (so that a header,
 * a mark and the start of the data go as one record, not one each).  The
 * same bytes always make the same record, as OpenSSL wants of a write
 * that must be made again.  @return its length (left > 0 bytes remain) */
static size_t next_record(ldm6_io *io, const struct iovec *iov, size_t n,
                          size_t i, size_t off, size_t left,
                          const uint8_t **p) {
  size_t k = iov[i].iov_len - off, got = 0;

  if (k >= LDM6_TLS_RECORD_PLAIN || k == left) {
    *p = (const uint8_t *)iov[i].iov_base + off;
    return k < LDM6_TLS_RECORD_PLAIN ? k : LDM6_TLS_RECORD_PLAIN;
  }
  for (; i < n && got < LDM6_TLS_RECORD_PLAIN; i++, off = 0) {
    k = iov[i].iov_len - off;
    if (k > LDM6_TLS_RECORD_PLAIN - got)
      k = LDM6_TLS_RECORD_PLAIN - got;
    if (k > 0)
      memcpy(io->stage + got, (const uint8_t *)iov[i].iov_base + off, k);
    got += k;
  }
  *p = io->stage;
  return got;
}

/* sendmsg(2) of iov[0..n), or under TLS records of its bytes in turn:
 * bytes written (a short count when the socket is full), or -1 with
 * errno. */
ssize_t ldm6_io__sendv(ldm6_io *io, const struct iovec *iov, size_t n,
                       int flags) {
  size_t total = 0, left = 0, i, off = 0;

  io->want = POLLOUT;
  if (io->ssl == NULL) {
    struct msghdr mh = {0};

    mh.msg_iov = (struct iovec *)iov;
    mh.msg_iovlen = n < IOV_CHUNK ? n : IOV_CHUNK;
    return sendmsg(io->fd, &mh, flags);
  }
  for (i = 0; i < n && i < IOV_CHUNK; i++)
    left += iov[i].iov_len;
  n = i;
  /* Records until the socket is full, one SSL_write_ex() each: a partial
   * write goes on from where it stopped.  All but the last go with
   * MSG_MORE, so that the kernel sends full segments, not one per record,
   * and the receiver wakes once for several. */
  for (i = 0; left > 0;) {
    const uint8_t *p;
    size_t w = 0, k;

    while (off == iov[i].iov_len) { /* empty pieces, or one done */
      i++;
      off = 0;
    }
    k = next_record(io, iov, n, i, off, left, &p);
    io->more = k < left;
    ERR_clear_error();
    if (SSL_write_ex(io->ssl, p, k, &w) != 1) {
      /* The caller comes back with these same bytes at this same offset,
       * as OpenSSL wants after a write that must wait; what went with
       * MSG_MORE is pushed now (TCP_NODELAY set again pushes). */
      uncork(io);
      return total > 0 ? (ssize_t)total : tls_fail(io, 0);
    }
    total += w;
    left -= w;
    for (; w > 0; i++, off = 0) { /* past the w bytes written */
      size_t in = iov[i].iov_len - off;

      if (w < in) {
        off += w;
        break;
      }
      w -= in;
      if (w == 0) {
        off = iov[i].iov_len; /* i stays: the loop skips it */
        break;
      }
    }
  }
  return (ssize_t)total;
}

static bool is_address(const char *host) {
  struct in6_addr a6;
  struct in_addr a4;

  return inet_pton(AF_INET, host, &a4) == 1 ||
         inet_pton(AF_INET6, host, &a6) == 1;
}

/* Set up io->ssl over the socket.  @return 0 or -1 (detail set) */
static int tls_new(ldm6_io *io, SSL_CTX *ctx, bool server, const char *host) {
  BIO_METHOD *m = bio_method();
  BIO *bio = m != NULL ? BIO_new(m) : NULL;

  io->stage = malloc(LDM6_TLS_RECORD_PLAIN);
  io->ssl = bio != NULL && io->stage != NULL ? SSL_new(ctx) : NULL;
  if (io->ssl == NULL || ldm6_tls_prepare(io->ssl, &io->tls) != 0) {
    char why[128];

    snprintf(io->detail, sizeof io->detail, "cannot start TLS: %s",
             ldm6_tls_error(why, sizeof why));
    BIO_free(bio);
    SSL_free(io->ssl);
    io->ssl = NULL;
    free(io->stage);
    io->stage = NULL;
    return -1;
  }
  BIO_set_data(bio, io);
  BIO_set_init(bio, 1);
  SSL_set_bio(io->ssl, bio, bio);
  if (server) {
    SSL_set_accept_state(io->ssl);
  } else {
    SSL_set_connect_state(io->ssl);
    if (host != NULL && !is_address(host))
      (void)SSL_set_tlsext_host_name(io->ssl, host);
  }
  return 0;
}

int ldm6_io_start_tls(ldm6_io *io, SSL_CTX *ctx, bool server, const char *host,
                      int timeout_ms) {
  int64_t deadline = ldm6_io__deadline(timeout_ms);

  io->detail[0] = '\0';
  if (io->ssl != NULL || io->rpos < io->rlen || io->olen > io->ostart) {
    snprintf(io->detail, sizeof io->detail, "TLS must start before any record");
    return LDM6_IO_EPROTO;
  }
  if (tls_new(io, ctx, server, host) != 0)
    return LDM6_IO_ESYS;
  for (;;) {
    int r, rc;

    ERR_clear_error();
    r = SSL_do_handshake(io->ssl);
    if (r == 1)
      break;
    if (tls_fail(io, r) == 0 || errno != EAGAIN) {
      bool fault = r != 0 && errno == EPROTO;

      if (fault)
        snprintf(io->detail, sizeof io->detail, "TLS handshake: %s",
                 io->tlserr);
      else
        snprintf(io->detail, sizeof io->detail,
                 "TLS handshake: connection closed by the peer");
      return fault ? LDM6_IO_EPROTO : LDM6_IO_CLOSED;
    }
    rc = ldm6_io__wait(io, io->want, deadline);
    if (rc == LDM6_IO_TIMEDOUT)
      snprintf(io->detail, sizeof io->detail,
               "TLS handshake not finished within %d ms", timeout_ms);
    if (rc != LDM6_IO_OK)
      return rc;
  }
  ldm6_tls_peer_fill(io->ssl, &io->tls);
  return LDM6_IO_OK;
}

bool ldm6_io_is_tls(const ldm6_io *io) {
  return io->ssl != NULL;
}

const ldm6_tls_peer *ldm6_io_tls_peer(const ldm6_io *io) {
  return &io->tls;
}

bool ldm6_io_tls_names_host(const ldm6_io *io, const char *host) {
  return io->ssl != NULL && ldm6_tls_names_host(io->ssl, host);
}

int ldm6_io_peek(ldm6_io *io, int timeout_ms, uint8_t *byte) {
  int64_t deadline = ldm6_io__deadline(timeout_ms);

  io->detail[0] = '\0';
  if (io->rpos < io->rlen) {
    *byte = io->rbuf[io->rpos];
    return LDM6_IO_OK;
  }
  for (;;) {
    ssize_t n = recv(io->fd, byte, 1, MSG_PEEK);
    int rc;

    if (n == 1)
      return LDM6_IO_OK;
    if (n == 0)
      return LDM6_IO_CLOSED;
    if (errno == ECONNRESET)
      return LDM6_IO_CLOSED;
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      snprintf(io->detail, sizeof io->detail, "recv: %s", strerror(errno));
      return LDM6_IO_ESYS;
    }
    rc = ldm6_io__wait(io, POLLIN, deadline);
    if (rc != LDM6_IO_OK)
      return rc;
  }
}

bool ldm6_io__tls_pending(const ldm6_io *io) {
  return io->ssl != NULL && SSL_has_pending(io->ssl);
}

void ldm6_io__tls_end(ldm6_io *io) {
  free(io->stage);
  io->stage = NULL;
  if (io->ssl != NULL) {
    (void)SSL_shutdown(io->ssl); /* one try: close_notify if it fits */
    SSL_free(io->ssl);
    io->ssl = NULL;
  }
}
