/*
 * test_rpc_io.c - ONC RPC over a real loopback TCP connection
 * (ldmd/proto/rpc_io.h): a synchronous call and its reply, one-way calls whose
 * stray answers the caller discards, a record of several megabytes sent from a
 * caller's buffer, the error replies, a refusal (AUTH_TOOWEAK) whatever
 * its xid, the peer's address text (on ::1 too),
 * connection refused, timeouts, a peer that closes inside a record, a
 * length word beyond the limit and garbage where a header should be;
 * streamed records (the start gathered, the rest read into the caller's
 * memory across any fragments, an empty last fragment, records that end
 * early or go on too long); with a stream start, a long record returned
 * after its first bytes, the next read asking the socket for no more than
 * a record's start, and ldm6_io_body_ready() counting what has come (read
 * buffer and socket, never past a fragment's end).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ldmd/proto/rpc_io.h"
#include "test/lib/tu_skip.h"

/* A connected pair of loopback TCP sockets wrapped as ldm6_io objects. */
static void tcp_pair(const char *host, ldm6_io **client, ldm6_io **server) {
  struct sockaddr_storage ss;
  socklen_t sl;
  int fam = strchr(host, ':') != NULL ? AF_INET6 : AF_INET;
  int lfd = socket(fam, SOCK_STREAM, 0), cfd;
  unsigned port;
  char err[256];

  assert_true(lfd >= 0);
  memset(&ss, 0, sizeof ss);
  if (fam == AF_INET) {
    struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

    s4->sin_family = AF_INET;
    inet_pton(AF_INET, host, &s4->sin_addr);
    sl = sizeof *s4;
  } else {
    struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

    s6->sin6_family = AF_INET6;
    inet_pton(AF_INET6, host, &s6->sin6_addr);
    sl = sizeof *s6;
  }
  assert_int_equal(bind(lfd, (struct sockaddr *)&ss, sl), 0);
  assert_int_equal(listen(lfd, 4), 0);
  sl = sizeof ss;
  assert_int_equal(getsockname(lfd, (struct sockaddr *)&ss, &sl), 0);
  port = ntohs(fam == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
                              : ((struct sockaddr_in6 *)&ss)->sin6_port);
  *client = ldm6_io_connect(host, port, 2000, err, sizeof err);
  assert_non_null(*client);
  cfd = accept(lfd, NULL, NULL);
  assert_true(cfd >= 0);
  *server = ldm6_io_new(cfd, 1u << 20);
  assert_non_null(*server);
  close(lfd);
}

static void raw_write(ldm6_io *io, const void *buf, size_t n) {
  assert_int_equal(write(ldm6_io_fd(io), buf, n), (ssize_t)n);
}

static void test_call_and_reply(void **state) {
  ldm6_io *c, *s;
  ldm6_io_msg m;
  uint8_t arg[4] = {0, 0, 0x30, 0x39}, res[4] = {0, 0, 0, 1};
  struct iovec a = {arg, 4}, r = {res, 4};
  uint32_t xid;
  pid_t pid;

  (void)state;
  tcp_pair("127.0.0.1", &c, &s);
  assert_string_equal(ldm6_io_peer_addr(s), "127.0.0.1");
  assert_true(ldm6_io_peer_port(s) > 0);
  /* The server answers from a child process: the caller blocks meanwhile. */
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    ldm6_io_msg in;
    int ok = ldm6_io_recv(s, 5000, &in) == LDM6_IO_OK &&
             in.hdr.type == LDM6_RPC_CALL && in.hdr.u.call.proc == 14 &&
             in.body_len == 4 && memcmp(in.body, arg, 4) == 0;

    /* A stray answer to an imaginary one-way call comes first. */
    ok = ok &&
         ldm6_io_reply_error(s, in.hdr.xid - 1000, LDM6_RPC_PROC_UNAVAIL) == 0;
    ok = ok && ldm6_io_reply(s, in.hdr.xid, &r, 1) == LDM6_IO_OK;
    _exit(ok ? 0 : 1);
  }
  assert_int_equal(ldm6_io_call(c, 6, 14, &a, 1, 5000, &m), LDM6_IO_OK);
  assert_int_equal(m.body_len, 4);
  assert_memory_equal(m.body, res, 4);
  {
    int st;

    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  }
  /* One-way: returns at once, the peer sees it. */
  assert_int_equal(ldm6_io_send_call(c, 6, 8, &a, 1, &xid), LDM6_IO_OK);
  assert_int_equal(ldm6_io_recv(s, 2000, &m), LDM6_IO_OK);
  assert_int_equal(m.hdr.xid, xid);
  assert_int_equal(m.hdr.u.call.proc, 8);
  /* Error replies reach a caller as LDM6_IO_EREPLY with the header. */
  assert_int_equal(ldm6_io_send_call(c, 7, 0, NULL, 0, &xid), LDM6_IO_OK);
  assert_int_equal(ldm6_io_recv(s, 2000, &m), LDM6_IO_OK);
  assert_int_equal(ldm6_io_reply_prog_mismatch(s, m.hdr.xid, 4, 6), LDM6_IO_OK);
  assert_int_equal(ldm6_io_recv(c, 2000, &m), LDM6_IO_OK);
  assert_int_equal(m.hdr.type, LDM6_RPC_REPLY);
  assert_int_equal(m.hdr.u.reply.accept_stat, LDM6_RPC_PROG_MISMATCH);
  assert_int_equal(m.hdr.u.reply.low, 4);
  assert_int_equal(m.hdr.u.reply.high, 6);
  /* Nothing more: a timeout. */
  assert_int_equal(ldm6_io_recv(s, 50, &m), LDM6_IO_TIMEDOUT);
  ldm6_io_free(c);
  assert_int_equal(ldm6_io_recv(s, 2000, &m), LDM6_IO_CLOSED);
  ldm6_io_free(s);
}

/* Queued one-way calls: nothing leaves before a flush (or another send),
 * then they arrive whole and in order, before the records sent after
 * them, a large one going out directly included. */
static void test_queued_calls(void **state) {
  static uint8_t big[40000];
  ldm6_io *c, *s;
  ldm6_io_msg m;
  uint8_t arg[8] = {0, 0, 0, 3, 'a', 'b', 'c', 0};
  struct iovec a[2] = {{arg, 4}, {arg + 4, 4}}, b = {big, sizeof big};
  unsigned i;

  (void)state;
  tcp_pair("127.0.0.1", &c, &s);
  for (i = 0; i < 3; i++)
    assert_int_equal(ldm6_io_queue_call(c, 6, 5, a, 2), LDM6_IO_OK);
  assert_int_equal(ldm6_io_queued(c), 3 * (4 + 40 + 8));
  assert_int_equal(ldm6_io_recv(s, 50, &m), LDM6_IO_TIMEDOUT);
  assert_int_equal(ldm6_io_flush(c), LDM6_IO_OK);
  assert_int_equal(ldm6_io_queued(c), 0);
  for (i = 0; i < 3; i++) {
    assert_int_equal(ldm6_io_recv(s, 2000, &m), LDM6_IO_OK);
    assert_int_equal(m.hdr.u.call.proc, 5);
    assert_int_equal(m.body_len, 8);
    assert_memory_equal(m.body, arg, 8);
  }
  /* Queued, then a large call (sent directly) and a synchronous-style
   * send: the queued one still comes first. */
  memset(big, 0x5a, sizeof big);
  assert_int_equal(ldm6_io_queue_call(c, 6, 5, a, 2), LDM6_IO_OK);
  assert_int_equal(ldm6_io_queue_call(c, 6, 6, &b, 1), LDM6_IO_OK);
  assert_int_equal(ldm6_io_queued(c), 0);
  assert_int_equal(ldm6_io_queue_call(c, 6, 7, a, 1), LDM6_IO_OK);
  assert_int_equal(ldm6_io_send_call(c, 6, 0, NULL, 0, NULL), LDM6_IO_OK);
  assert_int_equal(ldm6_io_recv(s, 2000, &m), LDM6_IO_OK);
  assert_int_equal(m.hdr.u.call.proc, 5);
  assert_int_equal(ldm6_io_recv(s, 2000, &m), LDM6_IO_OK);
  assert_int_equal(m.hdr.u.call.proc, 6);
  assert_int_equal(m.body_len, sizeof big);
  assert_memory_equal(m.body, big, sizeof big);
  assert_int_equal(ldm6_io_recv(s, 2000, &m), LDM6_IO_OK);
  assert_int_equal(m.hdr.u.call.proc, 7);
  assert_int_equal(m.body_len, 4);
  assert_int_equal(ldm6_io_recv(s, 2000, &m), LDM6_IO_OK);
  assert_int_equal(m.hdr.u.call.proc, 0);
  /* Many: written by themselves once the batch is full. */
  for (i = 0; i < 200; i++)
    assert_int_equal(ldm6_io_queue_call(c, 6, 5, a, 2), LDM6_IO_OK);
  assert_true(ldm6_io_queued(c) < 64 * (4 + 40 + 8));
  for (i = 0; i < 192; i++)
    assert_int_equal(ldm6_io_recv(s, 2000, &m), LDM6_IO_OK);
  assert_int_equal(ldm6_io_recv(s, 50, &m), LDM6_IO_TIMEDOUT);
  assert_int_equal(ldm6_io_flush(c), LDM6_IO_OK);
  for (i = 192; i < 200; i++)
    assert_int_equal(ldm6_io_recv(s, 2000, &m), LDM6_IO_OK);
  ldm6_io_free(c);
  ldm6_io_free(s);
}

static void test_big_record(void **state) {
  ldm6_io *c, *s;
  ldm6_io_msg m;
  size_t n = 900000;
  uint8_t *big = malloc(n);
  struct iovec a[3];
  uint8_t head[8] = {1, 2, 3, 4, 5, 6, 7, 8}, pad[4] = {0};
  pid_t pid;
  int st;

  (void)state;
  for (size_t i = 0; i < n; i++)
    big[i] = (uint8_t)(i * 7 + 3);
  tcp_pair("127.0.0.1", &c, &s);
  a[0] = (struct iovec){head, 8};
  a[1] = (struct iovec){big, n};
  a[2] = (struct iovec){pad, 0};
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    int ok = 1;

    for (int k = 0; k < 3; k++)
      ok = ok && ldm6_io_send_call(c, 6, 1, a, 3, NULL) == LDM6_IO_OK;
    _exit(ok ? 0 : 1);
  }
  for (int k = 0; k < 3; k++) {
    assert_int_equal(ldm6_io_recv(s, 5000, &m), LDM6_IO_OK);
    assert_int_equal(m.body_len, n + 8);
    assert_memory_equal(m.body, head, 8);
    assert_memory_equal(m.body + 8, big, n);
  }
  assert_int_equal(waitpid(pid, &st, 0), pid);
  assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  ldm6_io_free(c);
  ldm6_io_free(s);
  free(big);
}

static void test_bad_records(void **state) {
  ldm6_io *c, *s;
  ldm6_io_msg m;
  /* a mark announcing 2 GiB - 1 */
  uint8_t huge[8] = {0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0};
  /* a whole record of 12 garbage bytes */
  uint8_t garbage[16] = {0x80, 0,   0,   12,  'g', 'a', 'r', 'b',
                         'a',  'g', 'e', '!', '!', '!', '!', '!'};
  /* the start of a 40-byte record, then EOF */
  uint8_t part[12] = {0x80, 0, 0, 40, 0, 0, 0, 1, 0, 0, 0, 0};

  (void)state;
  tcp_pair("127.0.0.1", &c, &s);
  raw_write(c, huge, sizeof huge);
  assert_int_equal(ldm6_io_recv(s, 2000, &m), LDM6_IO_EPROTO);
  assert_true(strlen(ldm6_io_detail(s)) > 0);
  ldm6_io_free(c);
  ldm6_io_free(s);

  tcp_pair("127.0.0.1", &c, &s);
  raw_write(c, garbage, sizeof garbage);
  assert_int_equal(ldm6_io_recv(s, 2000, &m), LDM6_IO_EPROTO);
  ldm6_io_free(c);
  ldm6_io_free(s);

  tcp_pair("127.0.0.1", &c, &s);
  raw_write(c, part, sizeof part);
  ldm6_io_free(c);
  assert_int_equal(ldm6_io_recv(s, 2000, &m), LDM6_IO_EPROTO);
  assert_non_null(strstr(ldm6_io_detail(s), "inside a record"));
  ldm6_io_free(s);
}

/* A refusal ends a synchronous call whatever its xid: ldmd, like LDM,
 * answers a peer it does not allow with AUTH_TOOWEAK of xid 0 before it
 * reads the call, then closes (docs/protocol.md sections 1.4 and 5.1).
 * Stray replies before it are still skipped; a refusal with the call's
 * own xid (a HIYA nothing is accepted from) is a refusal too; a call
 * arriving instead of a reply is a protocol error that shows the call. */
static void test_denied(void **state) {
  ldm6_io *c, *s;
  ldm6_io_msg m;
  uint32_t xid;

  (void)state;
  tcp_pair("127.0.0.1", &c, &s);
  assert_int_equal(ldm6_io_reply_error(s, 12345, LDM6_RPC_PROC_UNAVAIL),
                   LDM6_IO_OK);
  assert_int_equal(ldm6_io_reply_auth_error(s, 0, LDM6_RPC_AUTH_TOOWEAK),
                   LDM6_IO_OK);
  assert_int_equal(shutdown(ldm6_io_fd(s), SHUT_WR), 0);
  assert_int_equal(ldm6_io_call(c, 6, 4, NULL, 0, 5000, &m), LDM6_IO_DENIED);
  assert_int_equal(m.hdr.xid, 0);
  assert_int_equal(m.hdr.u.reply.reply_stat, LDM6_RPC_MSG_DENIED);
  assert_int_equal(m.hdr.u.reply.auth_stat, LDM6_RPC_AUTH_TOOWEAK);
  assert_non_null(strstr(ldm6_io_detail(c), "AUTH_TOOWEAK"));
  assert_string_equal(ldm6_io_strerror(LDM6_IO_DENIED),
                      "not allowed by the peer");
  ldm6_io_free(c);
  ldm6_io_free(s);

  tcp_pair("127.0.0.1", &c, &s);
  assert_int_equal(ldm6_io_send_call(c, 6, 10, NULL, 0, &xid), LDM6_IO_OK);
  assert_int_equal(ldm6_io_recv(s, 2000, &m), LDM6_IO_OK);
  assert_int_equal(
      ldm6_io_reply_auth_error(s, m.hdr.xid, LDM6_RPC_AUTH_TOOWEAK),
      LDM6_IO_OK);
  assert_int_equal(ldm6_io_await_reply(c, xid, 2000, &m), LDM6_IO_DENIED);
  assert_int_equal(m.hdr.xid, xid);
  /* The peer calls instead of answering. */
  assert_int_equal(ldm6_io_send_call(c, 6, 0, NULL, 0, &xid), LDM6_IO_OK);
  assert_int_equal(ldm6_io_send_call(s, 6, 8, NULL, 0, NULL), LDM6_IO_OK);
  assert_int_equal(ldm6_io_await_reply(c, xid, 2000, &m), LDM6_IO_EPROTO);
  assert_int_equal(m.hdr.type, LDM6_RPC_CALL);
  assert_int_equal(m.hdr.u.call.proc, 8);
  ldm6_io_free(c);
  ldm6_io_free(s);
}

static void test_refused(void **state) {
  char err[256];
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in sin = {0};
  socklen_t sl = sizeof sin;
  unsigned port;

  (void)state;
  /* A port nobody listens on: bind without listen. */
  sin.sin_family = AF_INET;
  sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  assert_int_equal(bind(fd, (struct sockaddr *)&sin, sizeof sin), 0);
  assert_int_equal(getsockname(fd, (struct sockaddr *)&sin, &sl), 0);
  port = ntohs(sin.sin_port);
  assert_null(ldm6_io_connect("127.0.0.1", port, 2000, err, sizeof err));
  assert_non_null(strstr(err, "127.0.0.1"));
  close(fd);
}

/* Its own ctest entry (test_rpc_io_ipv6): it skips on a host without ::1,
 * and fails there under CI=true. */
static void test_ipv6(void **state) {
  struct sockaddr_in6 s6 = {0};
  ldm6_io *c, *s;
  int fd = socket(AF_INET6, SOCK_STREAM, 0);

  (void)state;
  s6.sin6_family = AF_INET6;
  s6.sin6_addr = in6addr_loopback;
  if (fd < 0 || bind(fd, (struct sockaddr *)&s6, sizeof s6) != 0) {
    int e = errno;

    if (fd >= 0)
      close(fd);
    tu_skip("no IPv6 loopback: cannot bind to [::1]: %s", strerror(e));
  }
  close(fd);
  tcp_pair("::1", &c, &s);
  assert_string_equal(ldm6_io_peer_addr(s), "::1");
  ldm6_io_free(c);
  ldm6_io_free(s);
}

/* ---- streamed records ---- */

/* Write a call record (proc 1) of body[0..n) in fragments of frag bytes;
 * with empty_last, the last data fragment is not marked last and an empty
 * last fragment follows. */
static void write_frags(int fd, const uint8_t *body, size_t n, size_t frag,
                        bool empty_last) {
  uint8_t hdr[64], mark[4];
  size_t hlen, total, off = 0;
  uint8_t *rec;

  assert_int_equal(
      ldm6_rpc_encode_call(77, 300029, 6, 1, hdr, sizeof hdr, &hlen), 0);
  total = hlen + n;
  rec = malloc(total);
  memcpy(rec, hdr, hlen);
  memcpy(rec + hlen, body, n);
  while (off < total) {
    size_t k = total - off < frag ? total - off : frag;
    bool last = off + k == total && !empty_last;

    ldm6_rpc_mark_put(mark, (uint32_t)k, last);
    assert_int_equal(write(fd, mark, 4), 4);
    assert_int_equal(write(fd, rec + off, k), (ssize_t)k);
    off += k;
  }
  if (empty_last) {
    ldm6_rpc_mark_put(mark, 0, true);
    assert_int_equal(write(fd, mark, 4), 4);
  }
  free(rec);
}

/* In a child: the records the streaming tests read, then exit. */
static void stream_writer(int fd, const uint8_t *body, size_t n) {
  uint8_t small[8] = {9, 9, 9, 9, 8, 8, 8, 8};

  write_frags(fd, body, n, 1000, false);    /* many fragments */
  write_frags(fd, small, 8, 1000, false);   /* shorter than head */
  write_frags(fd, body, n, 70000, true);    /* empty last fragment */
  write_frags(fd, body, n, n + 100, false); /* one fragment, dropped */
  _exit(0);
}

static void test_streamed(void **state) {
  ldm6_io *c, *s;
  ldm6_io_msg m;
  size_t n = 300000;
  uint8_t *body = malloc(n), *dst = malloc(n);
  bool more;
  pid_t pid;
  int st;

  (void)state;
  for (size_t i = 0; i < n; i++)
    body[i] = (uint8_t)(i * 13 + 5);
  tcp_pair("127.0.0.1", &c, &s);
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0)
    stream_writer(ldm6_io_fd(c), body, n);

  /* Many fragments: 100 bytes gathered (header + 60), the rest direct. */
  assert_int_equal(ldm6_io_recv_head(s, 5000, 100, &m, &more), LDM6_IO_OK);
  assert_true(more);
  assert_int_equal(m.hdr.u.call.proc, 1);
  assert_int_equal(m.body_len, 60);
  assert_memory_equal(m.body, body, 60);
  assert_int_equal(ldm6_io_recv(s, 100, &m), LDM6_IO_EPROTO); /* not finished */
  assert_int_equal(ldm6_io_recv_body(s, dst, n - 60, 5000), LDM6_IO_OK);
  assert_memory_equal(dst, body + 60, n - 60);
  assert_int_equal(ldm6_io_recv_end(s, 5000), LDM6_IO_OK);

  /* A short record comes whole. */
  assert_int_equal(ldm6_io_recv_head(s, 5000, 100, &m, &more), LDM6_IO_OK);
  assert_false(more);
  assert_int_equal(m.body_len, 8);

  /* An empty last fragment is read by ldm6_io_recv_end(). */
  assert_int_equal(ldm6_io_recv_head(s, 5000, 1000, &m, &more), LDM6_IO_OK);
  assert_true(more);
  assert_int_equal(m.body_len, 960);
  memset(dst, 0, n);
  assert_int_equal(ldm6_io_recv_body(s, dst, n - 960, 5000), LDM6_IO_OK);
  assert_memory_equal(dst, body + 960, n - 960);
  assert_int_equal(ldm6_io_recv_end(s, 5000), LDM6_IO_OK);

  /* Dropped data (NULL); then asking for too little: the end says so. */
  assert_int_equal(ldm6_io_recv_head(s, 5000, 200, &m, &more), LDM6_IO_OK);
  assert_true(more);
  assert_int_equal(ldm6_io_recv_body(s, NULL, n - 160 - 4, 5000), LDM6_IO_OK);
  assert_int_equal(ldm6_io_recv_end(s, 5000), LDM6_IO_EPROTO);
  assert_non_null(strstr(ldm6_io_detail(s), "longer"));
  ldm6_io_free(s);
  assert_int_equal(waitpid(pid, &st, 0), pid);
  assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  ldm6_io_free(c);

  /* A record that ends before the bytes asked for. */
  tcp_pair("127.0.0.1", &c, &s);
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    write_frags(ldm6_io_fd(c), body, 5000, 300, false);
    _exit(0);
  }
  assert_int_equal(ldm6_io_recv_head(s, 5000, 100, &m, &more), LDM6_IO_OK);
  assert_true(more);
  assert_int_equal(ldm6_io_recv_body(s, dst, 6000, 5000), LDM6_IO_EPROTO);
  assert_non_null(strstr(ldm6_io_detail(s), "ends before"));
  assert_int_equal(waitpid(pid, &st, 0), pid);
  ldm6_io_free(c);
  ldm6_io_free(s);
  free(body);
  free(dst);
}

/* Wait (5 s at most) until io's socket holds n unread bytes. */
static void wait_socket_holds(ldm6_io *io, int n) {
  struct pollfd p = {ldm6_io_fd(io), POLLIN, 0};
  int one = 1, inq = 0;

  assert_int_equal(setsockopt(p.fd, SOL_SOCKET, SO_RCVLOWAT, &n, sizeof n), 0);
  assert_int_equal(poll(&p, 1, 5000), 1);
  assert_int_equal(setsockopt(p.fd, SOL_SOCKET, SO_RCVLOWAT, &one, sizeof one),
                   0);
  assert_int_equal(ioctl(p.fd, FIONREAD, &inq), 0);
  assert_int_equal(inq, n);
}

static void test_stream_start(void **state) {
  ldm6_io *c, *s;
  ldm6_io_msg m;
  size_t n = 20000;
  uint8_t *body = malloc(n), *dst = malloc(n);
  uint8_t small[8] = {9, 9, 9, 9, 8, 8, 8, 8};
  uint64_t rx;
  bool more;

  (void)state;
  for (size_t i = 0; i < n; i++)
    body[i] = (uint8_t)(i * 7 + 3);
  tcp_pair("127.0.0.1", &c, &s);
  ldm6_io_set_stream_start(s, 200);

  /* A long record (one fragment: 4 + 40 + 20000 bytes) read whole into
   * the buffer: returned after its first 200 bytes, the rest ready. */
  write_frags(ldm6_io_fd(c), body, n, n + 100, false);
  wait_socket_holds(s, 4 + 40 + (int)n);
  assert_int_equal(ldm6_io_body_ready(s, 10), 0); /* nothing streamed yet */
  assert_int_equal(ldm6_io_recv_head(s, 5000, 1000, &m, &more), LDM6_IO_OK);
  assert_true(more);
  assert_int_equal(m.body_len, 160);
  assert_memory_equal(m.body, body, 160);
  assert_int_equal(ldm6_io_body_ready(s, n - 160), n - 160);
  assert_int_equal(ldm6_io_body_ready(s, 10), 10);
  assert_int_equal(ldm6_io_body_ready(s, 1u << 20), n - 160); /* the end */
  assert_int_equal(ldm6_io_recv_body(s, dst, n - 160, 5000), LDM6_IO_OK);
  assert_memory_equal(dst, body + 160, n - 160);
  assert_int_equal(ldm6_io_recv_end(s, 5000), LDM6_IO_OK);
  assert_int_equal(ldm6_io_body_ready(s, 10), 0);

  /* The next, after a long one: the first read takes its start only (the
   * mark and 200 bytes); the rest is in the socket, and ready. */
  write_frags(ldm6_io_fd(c), body, n, n + 100, false);
  wait_socket_holds(s, 4 + 40 + (int)n);
  rx = ldm6_io_rx_bytes(s);
  assert_int_equal(ldm6_io_recv_head(s, 5000, 1000, &m, &more), LDM6_IO_OK);
  assert_true(more);
  assert_int_equal(ldm6_io_rx_bytes(s) - rx, 4 + 200);
  assert_int_equal(ldm6_io_body_ready(s, n - 160), n - 160);
  memset(dst, 0, n);
  assert_int_equal(ldm6_io_recv_body(s, dst, n - 160, 5000), LDM6_IO_OK);
  assert_memory_equal(dst, body + 160, n - 160);
  assert_int_equal(ldm6_io_recv_end(s, 5000), LDM6_IO_OK);

  /* A short record after a long one comes whole all the same; then a
   * record of 1000-byte fragments: not known long until head bytes are
   * in, and only the rest of the fragment being read counts as ready. */
  write_frags(ldm6_io_fd(c), small, 8, 1000, false);
  write_frags(ldm6_io_fd(c), body, 5000, 1000, false);
  wait_socket_holds(s, 4 + 48 + 6 * 4 + 5040);
  assert_int_equal(ldm6_io_recv_head(s, 5000, 1000, &m, &more), LDM6_IO_OK);
  assert_false(more);
  assert_int_equal(m.body_len, 8);
  assert_memory_equal(m.body, small, 8);
  assert_int_equal(ldm6_io_recv_head(s, 5000, 1000, &m, &more), LDM6_IO_OK);
  assert_true(more);
  assert_int_equal(m.body_len, 960);
  assert_int_equal(ldm6_io_body_ready(s, 5000 - 960), 1000);
  assert_int_equal(ldm6_io_body_ready(s, 300), 300);
  memset(dst, 0, n);
  assert_int_equal(ldm6_io_recv_body(s, dst, 5000 - 960, 5000), LDM6_IO_OK);
  assert_memory_equal(dst, body + 960, 5000 - 960);
  assert_int_equal(ldm6_io_recv_end(s, 5000), LDM6_IO_OK);
  ldm6_io_free(c);
  ldm6_io_free(s);
  free(body);
  free(dst);
}

/* ldm6_io_body_wait(): for bytes the peer has not sent, a timeout; once
 * they are in the socket, at once; never for what lies past a fragment. */
static void test_body_wait(void **state) {
  ldm6_io *c, *s;
  ldm6_io_msg m;
  uint8_t hdr[64], mark[4], *body = calloc(1, 30000);
  size_t hlen;
  bool more;

  (void)state;
  tcp_pair("127.0.0.1", &c, &s);
  ldm6_io_set_stream_start(s, 200);
  assert_int_equal(
      ldm6_rpc_encode_call(77, 300029, 6, 1, hdr, sizeof hdr, &hlen), 0);
  ldm6_rpc_mark_put(mark, (uint32_t)(hlen + 30000), true);
  raw_write(c, mark, 4);
  raw_write(c, hdr, hlen);
  raw_write(c, body, 10000); /* a third of the data */
  wait_socket_holds(s, 4 + (int)hlen + 10000);
  assert_int_equal(ldm6_io_recv_head(s, 5000, 1000, &m, &more), LDM6_IO_OK);
  assert_true(more);
  assert_int_equal(ldm6_io_body_ready(s, 30000 - m.body_len),
                   10000 - m.body_len);
  assert_int_equal(ldm6_io_body_wait(s, 30000 - m.body_len, 100),
                   LDM6_IO_TIMEDOUT);
  raw_write(c, body + 10000, 20000);
  assert_int_equal(ldm6_io_body_wait(s, 30000 - m.body_len, 5000), LDM6_IO_OK);
  assert_int_equal(ldm6_io_body_ready(s, 30000 - m.body_len),
                   30000 - m.body_len);
  /* Past the fragment's end: no wait, whatever the timeout. */
  assert_int_equal(ldm6_io_body_wait(s, 40000, -1), LDM6_IO_OK);
  assert_int_equal(ldm6_io_recv_body(s, body, 30000 - m.body_len, 5000),
                   LDM6_IO_OK);
  assert_int_equal(ldm6_io_recv_end(s, 5000), LDM6_IO_OK);
  ldm6_io_free(c);
  ldm6_io_free(s);
  free(body);
}

int main(int argc, char **argv) {
  if (tu_select(argc, argv) != 0)
    return 2;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_call_and_reply),
      cmocka_unit_test(test_queued_calls),
      cmocka_unit_test(test_big_record),
      cmocka_unit_test(test_bad_records),
      cmocka_unit_test(test_denied),
      cmocka_unit_test(test_refused),
      cmocka_unit_test(test_ipv6),
      cmocka_unit_test(test_streamed),
      cmocka_unit_test(test_stream_start),
      cmocka_unit_test(test_body_wait),
  };
  return tu_exit_code(cmocka_run_group_tests(tests, NULL, NULL));
}
