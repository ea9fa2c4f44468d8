/*
 * test_send_nowait.c - sending without waiting (ldmd/proto/rpc_io.h), what
 * an upstream does while it holds a product of the queue: small one-way
 * calls copied into the batch (ldm6_io_queue_copy(), which never writes
 * and says when the batch is full), and a large record written by pieces
 * (ldm6_io_send_nowait()) to a peer that does not read, each call
 * returning at once, the pieces taken from another copy of the same bytes
 * each time, and the record arriving whole after the batch queued before
 * it; the batch written as far as the socket takes it
 * (ldm6_io_flush_nowait(), the feed hub's write), the rest kept in order
 * for the next write, and a queued call's transaction id given
 * (ldm6_io_queue_copy_xid()); records held back for the next
 * (MSG_MORE) and pushed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ldmd/proto/rpc_io.h"
#include "test/lib/tu_clock.h"
#include "test/lib/tu_fill.h"

#define BIG (8u << 20)

/* A connected loopback pair: the client's ldm6_io, the server's socket. */
static void tcp_pair(ldm6_io **client, int *server_fd) {
  struct sockaddr_in sa = {.sin_family = AF_INET};
  socklen_t sl = sizeof sa;
  int lfd = socket(AF_INET, SOCK_STREAM, 0);
  char err[256];

  assert_true(lfd >= 0);
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof sa), 0);
  assert_int_equal(listen(lfd, 4), 0);
  assert_int_equal(getsockname(lfd, (struct sockaddr *)&sa, &sl), 0);
  *client =
      ldm6_io_connect("127.0.0.1", ntohs(sa.sin_port), 2000, err, sizeof err);
  assert_non_null(*client);
  *server_fd = accept(lfd, NULL, NULL);
  assert_true(*server_fd >= 0);
  close(lfd);
}

/* tcp_pair() with the server's side an ldm6_io too. */
static void io_pair(ldm6_io **client, ldm6_io **server) {
  int sfd;

  tcp_pair(client, &sfd);
  *server = ldm6_io_new(sfd, 1u << 20);
  assert_non_null(*server);
}

/* The batch: copies, nothing written before a flush, full at 64 records
 * or when the bytes would not fit, arguments over 16 KiB refused. */
static void test_queue_copy(void **state) {
  static uint8_t chunk[LDM6_IO_COPY_MAX + 4];
  uint8_t arg[8] = {0, 0, 0, 3, 'a', 'b', 'c', 0};
  struct iovec a = {arg, 8}, c = {chunk, 16000};
  ldm6_io *io, *srv;
  ldm6_io_msg m;
  unsigned i;

  (void)state;
  io_pair(&io, &srv);
  for (i = 0; i < 64; i++)
    assert_int_equal(ldm6_io_queue_copy(io, 6, 5, &a, 1), LDM6_IO_OK);
  assert_int_equal(ldm6_io_queue_copy(io, 6, 5, &a, 1), LDM6_IO_FULL);
  assert_int_equal(ldm6_io_queued(io), 64 * (4 + 40 + 8));
  assert_int_equal(ldm6_io_recv(srv, 50, &m), LDM6_IO_TIMEDOUT);
  assert_int_equal(ldm6_io_flush(io), LDM6_IO_OK);
  for (i = 0; i < 64; i++) {
    assert_int_equal(ldm6_io_recv(srv, 2000, &m), LDM6_IO_OK);
    assert_int_equal(m.body_len, 8);
    assert_memory_equal(m.body, arg, 8);
  }
  /* 16 records of 16000 bytes fill 256 KiB: the next does not fit. */
  for (i = 0; i < 16; i++)
    assert_int_equal(ldm6_io_queue_copy(io, 6, 1, &c, 1), LDM6_IO_OK);
  assert_int_equal(ldm6_io_queue_copy(io, 6, 1, &c, 1), LDM6_IO_FULL);
  c.iov_len = sizeof chunk;
  assert_int_equal(ldm6_io_queue_copy(io, 6, 1, &c, 1), LDM6_IO_EPROTO);
  assert_int_equal(ldm6_io_flush(io), LDM6_IO_OK);
  for (i = 0; i < 16; i++) {
    assert_int_equal(ldm6_io_recv(srv, 2000, &m), LDM6_IO_OK);
    assert_int_equal(m.body_len, 16000);
  }
  ldm6_io_free(io);
  ldm6_io_free(srv);
}

/* The batch written without waiting to a peer that does not read: some
 * write leaves part of it queued (LDM6_IO_AGAIN), none waits; once the
 * peer reads, the rest goes, and every record arrives once, in order,
 * with the transaction id queue_copy_xid() gave. */
static void test_flush_nowait(void **state) {
  static uint8_t chunk[16000];
  struct iovec c = {chunk, sizeof chunk};
  uint32_t xids[4096];
  ldm6_io *io, *srv;
  ldm6_io_msg m;
  unsigned n = 0, i, tries;
  uint32_t seq;
  int rc = LDM6_IO_OK;

  (void)state;
  io_pair(&io, &srv);
  /* Until a write leaves bytes behind: the socket buffers are full. */
  while (rc != LDM6_IO_AGAIN && n < 4096) {
    seq = htonl(n);
    memcpy(chunk, &seq, sizeof seq);
    rc = ldm6_io_queue_copy_xid(io, 6, 1, &c, 1, &xids[n]);
    if (rc == LDM6_IO_FULL) {
      int64_t t0 = tu_now_ms();

      rc = ldm6_io_flush_nowait(io);
      /* never waits (a wait would last the send timeout, 60 s) */
      assert_true(tu_now_ms() - t0 < 10000);
      assert_true(rc == LDM6_IO_OK || rc == LDM6_IO_AGAIN);
      continue;
    }
    assert_int_equal(rc, LDM6_IO_OK);
    if (n > 0)
      assert_int_equal(xids[n], xids[n - 1] + 1);
    n++;
  }
  assert_int_equal(rc, LDM6_IO_AGAIN);
  assert_true(ldm6_io_queued(io) > 0);
  /* The peer reads; the rest is written by later calls. */
  for (i = 0, tries = 0; i < n; tries++) {
    assert_true(tries < 100000);
    rc = ldm6_io_flush_nowait(io);
    assert_true(rc == LDM6_IO_OK || rc == LDM6_IO_AGAIN);
    if (ldm6_io_recv(srv, rc == LDM6_IO_OK ? 2000 : 10, &m) != LDM6_IO_OK)
      continue;
    assert_int_equal(m.hdr.xid, xids[i]);
    assert_int_equal(m.body_len, sizeof chunk);
    memcpy(&seq, m.body, sizeof seq);
    assert_int_equal(ntohl(seq), i);
    i++;
  }
  assert_int_equal(ldm6_io_flush_nowait(io), LDM6_IO_OK);
  assert_int_equal(ldm6_io_queued(io), 0);
  assert_int_equal(ldm6_io_recv(srv, 50, &m), LDM6_IO_TIMEDOUT);
  ldm6_io_free(io);
  ldm6_io_free(srv);
}

/* Records written with MSG_MORE (ldm6_io_send_nowait_more()), then
 * pushed (ldm6_io_push()): each arrives once, whole and in order. */
static void test_send_more(void **state) {
  static uint8_t data[100000];
  struct iovec a = {data, sizeof data};
  ldm6_io *io, *srv;
  ldm6_io_msg m;
  ldm6_io_partial st;
  unsigned i;

  (void)state;
  io_pair(&io, &srv);
  for (i = 0; i < 3; i++) {
    memset(&st, 0, sizeof st);
    data[0] = (uint8_t)i;
    assert_int_equal(ldm6_io_send_nowait_more(io, 6, 1, &a, 1, &st, true),
                     LDM6_IO_OK);
  }
  ldm6_io_push(io);
  for (i = 0; i < 3; i++) {
    assert_int_equal(ldm6_io_recv(srv, 10000, &m), LDM6_IO_OK);
    assert_int_equal(m.body_len, sizeof data);
    assert_int_equal(m.body[0], i);
  }
  assert_int_equal(ldm6_io_recv(srv, 50, &m), LDM6_IO_TIMEDOUT);
  ldm6_io_free(io);
  ldm6_io_free(srv);
}

/* In a child: receive two records, the small one queued first, then the
 * big one, and check their bytes.  @return the exit status */
static int receive_two(int fd, const uint8_t *arg, const uint8_t *want) {
  ldm6_io *srv = ldm6_io_new(fd, 16u << 20);
  ldm6_io_msg m;

  if (srv == NULL || ldm6_io_recv(srv, 10000, &m) != LDM6_IO_OK ||
      m.hdr.u.call.proc != 5 || m.body_len != 8 || memcmp(m.body, arg, 8))
    return 1;
  if (ldm6_io_recv(srv, 10000, &m) != LDM6_IO_OK || m.hdr.u.call.proc != 1 ||
      m.body_len != BIG || memcmp(m.body, want, BIG) != 0)
    return 2;
  ldm6_io_free(srv);
  return 0;
}

/* A large record to a peer that reads nothing yet: each call returns at
 * once, with part of it written; then, the peer reading, it is finished
 * from another copy of the bytes, and arrives whole. */
static void test_send_nowait(void **state) {
  uint8_t arg[8] = {0, 0, 0, 3, 'x', 'y', 'z', 0};
  struct iovec a = {arg, 8}, b;
  uint8_t *data = malloc(BIG), *copy = malloc(BIG);
  ldm6_io_partial st;
  ldm6_io *io;
  int64_t t0;
  int sfd, rc, status, calls = 0;
  uint64_t first;
  pid_t pid;

  (void)state;
  assert_non_null(data);
  assert_non_null(copy);
  tu_fill(data, BIG, 7);
  memcpy(copy, data, BIG);
  tcp_pair(&io, &sfd);
  assert_int_equal(ldm6_io_queue_copy(io, 6, 5, &a, 1), LDM6_IO_OK);
  memset(&st, 0, sizeof st);
  b.iov_base = data;
  b.iov_len = BIG;
  t0 = tu_now_ms();
  rc = ldm6_io_send_nowait(io, 6, 1, &b, 1, &st);
  assert_int_equal(rc, LDM6_IO_AGAIN); /* nobody reads: more than fits */
  assert_true(tu_now_ms() - t0 < 500);
  assert_true(st.started);
  assert_true(st.sent > 0 && st.sent < BIG);
  assert_int_equal(ldm6_io_queued(io), 0); /* the batch went first */
  first = st.sent;
  /* Nothing more goes while nobody reads, and nothing waits. */
  assert_int_equal(ldm6_io_send_nowait(io, 6, 1, &b, 1, &st), LDM6_IO_AGAIN);
  assert_true(st.sent - first < 1u << 20);
  assert_int_equal(ldm6_io_wait_writable(io, 100), LDM6_IO_TIMEDOUT);
  memset(data, 0, BIG); /* the bytes are taken from elsewhere now */
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0)
    _exit(receive_two(sfd, arg, copy));
  close(sfd);
  b.iov_base = copy;
  do {
    assert_int_equal(ldm6_io_wait_writable(io, 10000), LDM6_IO_OK);
    rc = ldm6_io_send_nowait(io, 6, 1, &b, 1, &st);
    calls++;
  } while (rc == LDM6_IO_AGAIN);
  assert_int_equal(rc, LDM6_IO_OK);
  assert_false(st.started);
  printf("an 8 MiB record in %d more pieces\n", calls);
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  ldm6_io_free(io);
  free(data);
  free(copy);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_queue_copy),
      cmocka_unit_test(test_flush_nowait),
      cmocka_unit_test(test_send_more),
      cmocka_unit_test(test_send_nowait),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
