/*
 * rpc_io.c - ONC RPC over one connected TCP socket: the bytes of an LDM
 * connection in both directions.  Owns the socket, a read buffer, the
 * record framer (rpc_msg.h) that reassembles fragments, the transaction
 * ids of calls, and every wait on the socket.
 *
 * The descriptor is made non-blocking so that every read and every write
 * waits in poll(2) with a timeout: a peer that stops reading cannot hang a
 * sender forever (the send timeout, reset whenever bytes move, is LDM's
 * 60 s RPC timeout unless changed).  Records go out with one sendmsg(2)
 * over the caller's iovecs (MSG_NOSIGNAL: a closed peer is a result, not a
 * SIGPIPE), so product data is never copied on the way out.  Bytes read
 * beyond the current record stay in the read buffer for the next one.
 */
#include "ldmd/proto/rpc_io.h"
#include "ldmd/proto/rpc_io_internal.h"
#include "ldmd/proto/tls.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/err.h>

#define RBUF_SIZE (128u * 1024u)
#define HDR_MAX 64     /* a CALL or REPLY header LDM-style, and more */
#define MAX_PIECES 16  /* header + caller's iovecs per record */
#define MAX_MARKS 8    /* fragments of LDM6_RPC_FRAG_MAX bytes */
#define IOV_CHUNK 1024 /* iovecs per sendmsg (IOV_MAX on Linux) */
#define DEFAULT_SEND_MS (60 * 1000)
#define OBUF_SIZE (256u * 1024u) /* one-way calls gathered for one write */
#define OBUF_RECORDS 64          /* records gathered at most before a write */
#define LOWAT_MIN (64u * 1024u)  /* bulk reads wait for this much at least */
#define LOWAT_MAX (512u * 1024u) /* and at most */
/* The longest TLS 1.3 record on the wire: header, 2^14 bytes, and the
 * most a record may add to them (RFC 8446 section 5.2). */
#define TLS_RECORD_PLAIN 16384u /* the most a TLS record carries */
#define TLS_RECORD_WIRE (5u + TLS_RECORD_PLAIN + 256u)

struct ldm6_io {
  int fd;
  size_t max_record;
  int send_timeout_ms;
  uint32_t next_xid;
  bool partial;   /* bytes of an unfinished record have been taken */
  bool streaming; /* ldm6_io_recv_head() stopped inside a record */
  uint64_t rx_bytes;
  int lowat;                           /* the socket's SO_RCVLOWAT */
  const volatile sig_atomic_t *cancel; /* ends waits when set */
  ldm6_rpc_framer fr;
  size_t rpos, rlen; /* unread bytes are rbuf[rpos..rlen) */
  uint8_t *obuf;     /* queued one-way calls (ldm6_io_queue_call), or NULL */
  size_t ostart;     /* obuf[ostart..olen) is still to be written */
  size_t olen;       /* end of them */
  unsigned orecords; /* records among them */
  char peer[INET6_ADDRSTRLEN];
  unsigned port;
  SSL *ssl;          /* after ldm6_io_start_tls(), else NULL */
  ldm6_tls_peer tls; /* what its handshake showed */
  short want;        /* what the last EAGAIN waits for: POLLIN, POLLOUT */
  int bio_errno;     /* errno of the last failed recv/send under TLS */
  bool bio_eof;      /* the socket's end was read under TLS */
  bool more;         /* under TLS, more records follow this one at once */
  uint8_t *stage;    /* under TLS, a record gathered from small pieces */
  char tlserr[128];  /* the last TLS fault (errno EPROTO) */
  char detail[160];
  uint8_t hdr[HDR_MAX];
  uint8_t rbuf[RBUF_SIZE];
};

/* ---------------------------------------------------------------------- */
/* Time                                                                   */
/* ---------------------------------------------------------------------- */

static int64_t now_ms(void) {
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Milliseconds left until deadline (-1: none), for poll(). */
static int left_ms(int64_t deadline) {
  int64_t left;

  if (deadline < 0)
    return -1;
  left = deadline - now_ms();
  if (left <= 0)
    return 0;
  return left > INT_MAX ? INT_MAX : (int)left;
}

static int64_t deadline_of(int timeout_ms) {
  return timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
}

/* Wait for events on fd.  @return 1 ready, 0 timed out, -1 errno set
 * (EINTR when a signal came and *cancel is set). */
static int wait_fd(int fd, short events, int64_t deadline,
                   const volatile sig_atomic_t *cancel) {
  for (;;) {
    struct pollfd p = {.fd = fd, .events = events};
    int n = poll(&p, 1, left_ms(deadline));

    if (n > 0)
      return 1;
    if (n == 0)
      return 0;
    if (errno != EINTR || (cancel != NULL && *cancel))
      return -1;
  }
}

/* wait_fd() on the connection: LDM6_IO_OK (ready), LDM6_IO_TIMEDOUT, or
 * LDM6_IO_ESYS with the detail. */
static int io_wait(ldm6_io *io, short events, int64_t deadline) {
  int r = wait_fd(io->fd, events, deadline, io->cancel);

  if (r > 0)
    return LDM6_IO_OK;
  if (r == 0)
    return LDM6_IO_TIMEDOUT;
  snprintf(io->detail, sizeof io->detail, "poll: %s", strerror(errno));
  return LDM6_IO_ESYS;
}

/* ---------------------------------------------------------------------- */
/* The transport: the socket itself, or TLS over it                      */
/* ---------------------------------------------------------------------- */

/*
 * Everything below reads and writes through io_read() and io_sendv(): on a
 * plain connection read(2) and sendmsg(2), after ldm6_io_start_tls()
 * SSL_read_ex() and SSL_write_ex().  Both keep the system calls' contract
 * (bytes, 0 at the end, or -1 with errno) so that the record layer is the
 * same for both, and set io->want to what an EAGAIN must wait for: under
 * TLS a read may need to write and a write to read.  OpenSSL talks to the
 * socket through our own BIO (send with MSG_NOSIGNAL, so a closed peer is
 * EPIPE and never SIGPIPE; errno kept for us), on the same non-blocking
 * descriptor, so every wait is still io_wait()'s poll with its deadline.
 * Under TLS io_sendv() cuts the caller's pieces into records of 16 KiB,
 * the most one carries (small pieces gathered into one), and sends all
 * but the last record of a call with MSG_MORE.
 */

/* The detail of a failed read or write: errno's text, or the TLS fault. */
static void sys_detail(ldm6_io *io, const char *what) {
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

static ssize_t io_read(ldm6_io *io, void *buf, size_t n) {
  size_t got = 0;

  io->want = POLLIN;
  if (io->ssl == NULL)
    return read(io->fd, buf, n);
  ERR_clear_error();
  if (SSL_read_ex(io->ssl, buf, n, &got) == 1)
    return (ssize_t)got;
  return tls_fail(io, 0);
}

/* Send now what went with MSG_MORE and waits for more. */
static void uncork(const ldm6_io *io) {
  int one = 1;

  (void)setsockopt(io->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
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

  if (k >= TLS_RECORD_PLAIN || k == left) {
    *p = (const uint8_t *)iov[i].iov_base + off;
    return k < TLS_RECORD_PLAIN ? k : TLS_RECORD_PLAIN;
  }
  for (; i < n && got < TLS_RECORD_PLAIN; i++, off = 0) {
    k = iov[i].iov_len - off;
    if (k > TLS_RECORD_PLAIN - got)
      k = TLS_RECORD_PLAIN - got;
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
static ssize_t io_sendv(ldm6_io *io, const struct iovec *iov, size_t n,
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

  io->stage = malloc(TLS_RECORD_PLAIN);
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
  int64_t deadline = deadline_of(timeout_ms);

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
    rc = io_wait(io, io->want, deadline);
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
  int64_t deadline = deadline_of(timeout_ms);

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
    rc = io_wait(io, POLLIN, deadline);
    if (rc != LDM6_IO_OK)
      return rc;
  }
}

/* ---------------------------------------------------------------------- */
/* Construction                                                           */
/* ---------------------------------------------------------------------- */

/* Text form of an address; an IPv4-mapped IPv6 address as plain IPv4, as
 * access rules written for IPv4 expect. */
static void addr_text(const struct sockaddr_storage *ss, char *out,
                      size_t outlen, unsigned *port) {
  *port = 0;
  snprintf(out, outlen, "unknown");
  if (ss->ss_family == AF_INET) {
    const struct sockaddr_in *s4 = (const struct sockaddr_in *)ss;

    inet_ntop(AF_INET, &s4->sin_addr, out, (socklen_t)outlen);
    *port = ntohs(s4->sin_port);
  } else if (ss->ss_family == AF_INET6) {
    const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;

    if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr))
      inet_ntop(AF_INET, &s6->sin6_addr.s6_addr[12], out, (socklen_t)outlen);
    else
      inet_ntop(AF_INET6, &s6->sin6_addr, out, (socklen_t)outlen);
    *port = ntohs(s6->sin6_port);
  }
}

static uint32_t initial_xid(void) {
  struct timespec ts;

  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint32_t)getpid() ^ (uint32_t)ts.tv_sec ^ (uint32_t)ts.tv_nsec;
}

ldm6_io *ldm6_io_new(int fd, size_t max_record) {
  ldm6_io *io = calloc(1, sizeof *io);
  struct sockaddr_storage ss;
  socklen_t sl = sizeof ss;
  int one = 1, fl;

  if (io == NULL) {
    close(fd);
    return NULL;
  }
  io->fd = fd;
  io->max_record = max_record == 0 ? LDM6_IO_DEFAULT_MAX_RECORD : max_record;
  io->send_timeout_ms = DEFAULT_SEND_MS;
  io->next_xid = initial_xid();
  io->lowat = 1;
  io->want = POLLIN;
  ldm6_rpc_framer_init(&io->fr, io->max_record);
  (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
  fl = fcntl(fd, F_GETFL);
  if (fl >= 0)
    (void)fcntl(fd, F_SETFL, fl | O_NONBLOCK);
  memset(&ss, 0, sizeof ss);
  if (getpeername(fd, (struct sockaddr *)&ss, &sl) == 0)
    addr_text(&ss, io->peer, sizeof io->peer, &io->port);
  else
    snprintf(io->peer, sizeof io->peer, "unknown");
  return io;
}

void ldm6_io_free(ldm6_io *io) {
  if (io == NULL)
    return;
  ldm6_rpc_framer_free(&io->fr);
  free(io->obuf);
  free(io->stage);
  if (io->ssl != NULL) {
    (void)SSL_shutdown(io->ssl); /* one try: close_notify if it fits */
    SSL_free(io->ssl);
  }
  if (io->fd >= 0)
    close(io->fd);
  free(io);
}

int ldm6_io_fd(const ldm6_io *io) {
  return io->fd;
}

const char *ldm6_io_peer_addr(const ldm6_io *io) {
  return io->peer;
}

unsigned ldm6_io_peer_port(const ldm6_io *io) {
  return io->port;
}

void ldm6_io_set_send_timeout(ldm6_io *io, int timeout_ms) {
  io->send_timeout_ms = timeout_ms;
}

void ldm6_io_set_max_record(ldm6_io *io, size_t max_record) {
  /* The framer takes it when it starts a record (see ldm6_io_recv). */
  io->max_record = max_record == 0 ? LDM6_IO_DEFAULT_MAX_RECORD : max_record;
}

const char *ldm6_io_detail(const ldm6_io *io) {
  return io->detail;
}

bool ldm6_io_buffered(const ldm6_io *io) {
  return io->rpos < io->rlen || io->partial ||
         (io->ssl != NULL && SSL_has_pending(io->ssl));
}

uint64_t ldm6_io_rx_bytes(const ldm6_io *io) {
  return io->rx_bytes;
}

void ldm6_io_set_cancel(ldm6_io *io, const volatile sig_atomic_t *flag) {
  io->cancel = flag;
}

/*
 * Connecting.  timeout_ms bounds the whole connect, however many addresses
 * the name has (it used to bound each address in turn, so a host with
 * three dead addresses took three timeouts).  The attempts overlap as in
 * RFC 8305 ("Happy Eyeballs"), without its sorting of the addresses: the
 * first starts at once, the next one ATTEMPT_DELAY_MS later or as soon as
 * an attempt fails, the earlier ones stay in flight, and the first to
 * connect wins; all of them share the one deadline.  So a dead first
 * address costs a quarter of a second, not the timeout, and a slow one
 * can still win.
 */

#define ATTEMPT_DELAY_MS 250 /* RFC 8305's connection attempt delay */
#define MAX_ATTEMPTS 16      /* connects in flight at once */

/* Start connecting to ai.  @return a descriptor, with *done true if it is
 * connected already, or -1 (errno). */
static int start_attempt(const struct addrinfo *ai, bool *done) {
  int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
                  ai->ai_protocol);
  int err;

  *done = false;
  if (fd < 0)
    return -1;
  if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
    *done = true;
    return fd;
  }
  if (errno == EINPROGRESS || errno == EINTR)
    return fd;
  err = errno;
  close(fd);
  errno = err;
  return -1;
}

static void close_attempts(struct pollfd *p, size_t n) {
  size_t i;

  for (i = 0; i < n; i++)
    close(p[i].fd);
}

int ldm6_io__connect_list(const struct addrinfo *list, int timeout_ms,
                          const volatile sig_atomic_t *cancel) {
  int64_t deadline = deadline_of(timeout_ms), next = now_ms();
  const struct addrinfo *ai = list;
  struct pollfd p[MAX_ATTEMPTS];
  size_t n = 0, i;
  int saved = ECONNREFUSED;

  for (;;) {
    int64_t now = now_ms(), wait;
    int r;

    if (ai != NULL && n < MAX_ATTEMPTS && (n == 0 || now >= next)) {
      bool done;
      int fd = start_attempt(ai, &done);

      ai = ai->ai_next;
      if (fd >= 0 && done) {
        close_attempts(p, n);
        return fd;
      }
      if (fd < 0) {
        saved = errno; /* refused at once, say: the next one now */
        continue;
      }
      p[n].fd = fd;
      p[n].events = POLLOUT;
      p[n].revents = 0;
      n++;
      next = now + ATTEMPT_DELAY_MS;
      continue;
    }
    if (n == 0) { /* every address failed */
      errno = saved;
      return -1;
    }
    if (deadline >= 0 && now >= deadline) {
      close_attempts(p, n);
      errno = ETIMEDOUT;
      return -1;
    }
    wait = deadline < 0 ? -1 : deadline - now;
    if (ai != NULL && n < MAX_ATTEMPTS && (wait < 0 || next - now < wait))
      wait = next - now;
    r = poll(p, (nfds_t)n, wait > INT_MAX ? INT_MAX : (int)wait);
    if (r < 0) {
      if (errno == EINTR && (cancel == NULL || !*cancel))
        continue;
      saved = errno;
      close_attempts(p, n);
      errno = saved;
      return -1;
    }
    for (i = 0; i < n;) {
      int err = 0;
      socklen_t el = sizeof err;

      if (p[i].revents == 0) {
        i++;
        continue;
      }
      if (getsockopt(p[i].fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0)
        err = errno;
      if (err == 0) {
        int fd = p[i].fd;

        p[i] = p[--n];
        close_attempts(p, n);
        return fd;
      }
      saved = err;
      close(p[i].fd);
      p[i] = p[--n];
      next = now; /* it failed: the next address at once */
    }
  }
}

ldm6_io *ldm6_io_connect(const char *host, unsigned port, int timeout_ms,
                         char *err, size_t errlen) {
  return ldm6_io_connect_cancel(host, port, timeout_ms, NULL, err, errlen);
}

ldm6_io *ldm6_io_connect_cancel(const char *host, unsigned port, int timeout_ms,
                                const volatile sig_atomic_t *cancel, char *err,
                                size_t errlen) {
  struct addrinfo hints = {0}, *res = NULL;
  char service[16];
  int rc, fd, saved;
  ldm6_io *io;

  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  /* No AI_ADDRCONFIG: it hides ::1 on hosts whose only IPv6 address is
   * the loopback one; an unusable family just fails to connect. */
  snprintf(service, sizeof service, "%u", port);
  rc = getaddrinfo(host, service, &hints, &res);
  if (rc != 0) {
    if (err != NULL)
      snprintf(err, errlen, "cannot resolve %s: %s", host, gai_strerror(rc));
    errno = rc == EAI_SYSTEM ? errno : EHOSTUNREACH;
    return NULL;
  }
  fd = ldm6_io__connect_list(res, timeout_ms, cancel);
  saved = errno;
  freeaddrinfo(res);
  if (fd < 0) {
    if (err != NULL)
      snprintf(err, errlen, "cannot connect to %s port %u: %s", host, port,
               strerror(saved));
    errno = saved;
    return NULL;
  }
  io = ldm6_io_new(fd, 0);
  if (io == NULL) {
    if (err != NULL)
      snprintf(err, errlen, "cannot connect to %s port %u: %s", host, port,
               strerror(ENOMEM));
    errno = ENOMEM;
    return NULL;
  }
  io->cancel = cancel;
  return io;
}

/* ---------------------------------------------------------------------- */
/* Receiving                                                              */
/* ---------------------------------------------------------------------- */

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
    want = want > TLS_RECORD_WIRE ? want - TLS_RECORD_WIRE : 0;
  v = want < LOWAT_MIN ? 1 : (int)(want < LOWAT_MAX ? want : LOWAT_MAX);
  if (v != io->lowat &&
      setsockopt(io->fd, SOL_SOCKET, SO_RCVLOWAT, &v, sizeof v) == 0)
    io->lowat = v;
}

/* Read what the socket has into the buffer.  @return LDM6_IO_OK, CLOSED,
 * TIMEDOUT, EPROTO (closed inside a record) or ESYS. */
static int fill(ldm6_io *io, int64_t deadline) {
  int rc;

  set_lowat(io, 1);
  for (;;) {
    ssize_t n = io_read(io, io->rbuf, sizeof io->rbuf);

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
      sys_detail(io, "read");
      return LDM6_IO_CLOSED;
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      sys_detail(io, "read");
      return errno == EPROTO ? LDM6_IO_EPROTO : LDM6_IO_ESYS;
    }
    rc = io_wait(io, io->want, deadline);
    if (rc != LDM6_IO_OK)
      return rc;
  }
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
 * record (SIZE_MAX: all of it).  Between fragments only the mark's bytes
 * are fed, so no fragment byte past head is stored.
 * @return 1 a record is complete; 2 head bytes are stored and the record
 *         goes on; 0 more bytes are needed; LDM6_IO_EPROTO */
static int feed(ldm6_io *io, size_t head) {
  for (;;) {
    size_t avail = io->rlen - io->rpos, used = 0;
    size_t left = ldm6_rpc_framer_frag_left(&io->fr);
    int rc;

    if (left > 0 && head != SIZE_MAX) {
      size_t stored = ldm6_rpc_framer_stored(&io->fr, NULL);

      if (stored >= head)
        return 2;
      if (avail > head - stored)
        avail = head - stored;
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

  io->detail[0] = '\0';
  *more = false;
  if (io->streaming) {
    snprintf(io->detail, sizeof io->detail,
             "the streamed record before is not finished");
    return LDM6_IO_EPROTO;
  }
  for (;;) {
    int rc = feed(io, head);

    if (rc == 1)
      return take_record(io, msg);
    if (rc == 2) {
      io->streaming = true;
      *more = true;
      return take_head(io, msg);
    }
    if (rc < 0)
      return rc;
    if (!timed) {
      deadline = deadline_of(timeout_ms);
      timed = true;
    }
    rc = fill(io, deadline);
    if (rc != LDM6_IO_OK)
      return rc;
  }
}

int ldm6_io_recv(ldm6_io *io, int timeout_ms, ldm6_io_msg *msg) {
  bool more;

  return ldm6_io_recv_head(io, timeout_ms, SIZE_MAX, msg, &more);
}

/* Read up to n bytes straight from the socket into dst.  @return the
 * bytes read (> 0), or an LDM6_IO_* result (< 0) */
static long read_direct(ldm6_io *io, uint8_t *dst, size_t n, int64_t deadline) {
  int rc;

  for (;;) {
    ssize_t r = io_read(io, dst, n);

    if (r > 0) {
      io->rx_bytes += (uint64_t)r;
      return (long)r;
    }
    if (r == 0 || errno == ECONNRESET) {
      snprintf(io->detail, sizeof io->detail,
               "connection closed inside a record");
      return LDM6_IO_EPROTO;
    }
    if (errno == EINTR)
      continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      sys_detail(io, "read");
      return errno == EPROTO ? LDM6_IO_EPROTO : LDM6_IO_ESYS;
    }
    set_lowat(io, n);
    rc = io_wait(io, io->want, deadline);
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
    int64_t deadline = deadline_of(timeout_ms); /* renewed by progress */
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

int ldm6_io_recv_end(ldm6_io *io, int timeout_ms) {
  int64_t deadline = deadline_of(timeout_ms);

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

/* ---------------------------------------------------------------------- */
/* Sending                                                                */
/* ---------------------------------------------------------------------- */

/* Write all of iov[0..n) (modified as it goes). */
static int send_all(ldm6_io *io, struct iovec *iov, size_t n) {
  int64_t deadline = deadline_of(io->send_timeout_ms);

  while (n > 0) {
    ssize_t w = io_sendv(io, iov, n, MSG_NOSIGNAL);

    if (w < 0) {
      if (errno == EINTR)
        continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        int r = io_wait(io, io->want, deadline);

        if (r == LDM6_IO_TIMEDOUT)
          snprintf(io->detail, sizeof io->detail, "peer took nothing for %d ms",
                   io->send_timeout_ms);
        if (r != LDM6_IO_OK)
          return r;
        continue;
      }
      if (errno == EPIPE || errno == ECONNRESET)
        return LDM6_IO_CLOSED;
      sys_detail(io, "sendmsg");
      return errno == EPROTO ? LDM6_IO_EPROTO : LDM6_IO_ESYS;
    }
    deadline = deadline_of(io->send_timeout_ms); /* progress */
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
static long write_nowait(ldm6_io *io, const struct iovec *iov, size_t n) {
  long total = 0;

  while (n > 0) {
    ssize_t w = io_sendv(io, iov, n, MSG_NOSIGNAL | MSG_DONTWAIT);

    if (w < 0) {
      if (errno == EINTR)
        continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK)
        return total;
      if (errno == EPIPE || errno == ECONNRESET)
        return LDM6_IO_CLOSED;
      sys_detail(io, "sendmsg");
      return errno == EPROTO ? LDM6_IO_EPROTO : LDM6_IO_ESYS;
    }
    total += (long)w;
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

/* The queued calls, as far as the socket takes them now.
 * @return LDM6_IO_OK (all written), LDM6_IO_AGAIN, or a failure */
static int flush_nowait(ldm6_io *io) {
  struct iovec iov;
  long w;

  if (io->olen == io->ostart)
    return LDM6_IO_OK;
  iov.iov_base = io->obuf + io->ostart;
  iov.iov_len = io->olen - io->ostart;
  w = write_nowait(io, &iov, 1);
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
 * has room for it: LDM6_IO_OK, or LDM6_IO_EPROTO. */
static int append_call(ldm6_io *io, uint32_t vers, uint32_t proc,
                       const struct iovec *args, int nargs, size_t total) {
  size_t hlen, at = io->olen + LDM6_RPC_MARK_LEN;
  int i;

  io->detail[0] = '\0';
  if (ldm6_rpc_encode_call(io->next_xid++, LDM6_PROG, vers, proc, io->obuf + at,
                           HDR_MAX, &hlen) != 0)
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
  return io->olen + LDM6_RPC_MARK_LEN + HDR_MAX + total <= OBUF_SIZE;
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
  rc = append_call(io, vers, proc, args, nargs, total);
  if (rc == LDM6_IO_OK && io->orecords >= OBUF_RECORDS)
    return ldm6_io_flush(io);
  return rc;
}

int ldm6_io_queue_copy(ldm6_io *io, uint32_t vers, uint32_t proc,
                       const struct iovec *args, int nargs) {
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
  return append_call(io, vers, proc, args, nargs, total);
}

int ldm6_io_send_nowait(ldm6_io *io, uint32_t vers, uint32_t proc,
                        const struct iovec *args, int nargs,
                        ldm6_io_partial *st) {
  struct layout l;
  struct iovec *out = l.out;
  size_t nout, k = 0, hlen;
  uint64_t skip;
  long w;
  int rc;

  io->detail[0] = '\0';
  rc = flush_nowait(io); /* the queued calls go first */
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
  w = write_nowait(io, out + k, nout - k);
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
  return io_wait(io, io->ssl != NULL ? io->want : POLLOUT,
                 deadline_of(timeout_ms));
}

int ldm6_io_call(ldm6_io *io, uint32_t vers, uint32_t proc,
                 const struct iovec *args, int nargs, int timeout_ms,
                 ldm6_io_msg *reply) {
  int64_t deadline;
  uint32_t xid;
  int rc = ldm6_io_send_call(io, vers, proc, args, nargs, &xid);

  if (rc != LDM6_IO_OK)
    return rc;
  deadline = deadline_of(timeout_ms);
  for (;;) {
    int left = deadline < 0 ? -1 : left_ms(deadline);

    rc = ldm6_io_recv(io, left, reply);
    if (rc != LDM6_IO_OK)
      return rc;
    if (reply->hdr.type == LDM6_RPC_CALL) {
      snprintf(io->detail, sizeof io->detail,
               "call (procedure %u) received while awaiting a reply",
               (unsigned)reply->hdr.u.call.proc);
      return LDM6_IO_EPROTO;
    }
    if (!ldm6_rpc_reply_is_awaited(&reply->hdr, true, xid))
      continue; /* a stray answer to a one-way call */
    if (reply->hdr.u.reply.reply_stat != LDM6_RPC_MSG_ACCEPTED ||
        reply->hdr.u.reply.accept_stat != LDM6_RPC_SUCCESS)
      return LDM6_IO_EREPLY;
    return LDM6_IO_OK;
  }
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

const char *ldm6_io_strerror(int rc) {
  switch (rc) {
  case LDM6_IO_OK:
    return "success";
  case LDM6_IO_CLOSED:
    return "connection closed by peer";
  case LDM6_IO_TIMEDOUT:
    return "timed out";
  case LDM6_IO_EPROTO:
    return "protocol error";
  case LDM6_IO_ESYS:
    return "system error";
  case LDM6_IO_EREPLY:
    return "call not accepted";
  case LDM6_IO_AGAIN:
    return "the socket takes no more for now";
  case LDM6_IO_FULL:
    return "the batch of queued calls is full";
  default:
    return "unknown ldm6_io result";
  }
}
