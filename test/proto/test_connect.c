/*
 * test_connect.c - the connect timeout of ldmd/proto/connect.c bounds the
 * whole connect, not each address of a host in turn, and a stop
 * descriptor ends it.
 *
 * An address that never answers is made on loopback with a listener whose
 * accept queue is full (listen(2) with a backlog of 0 and one connection
 * never accepted): Linux drops the SYNs that arrive then, so a connect to
 * it hangs as one to a black-holed address does.  No name resolves to
 * several such listeners, so the lists of addresses are handed straight
 * to ldm6_io__connect_list() (connect.h), the loop that
 * ldm6_io_connect() runs on what getaddrinfo() gives; a name with one
 * address goes through ldm6_io_connect() itself.  Mixed IPv6 and IPv4
 * lists need ::1 (skipped without it: tu_skip, a failure under CI=true).
 * A readable stop descriptor (ldm6_io_connect_stop(), the clients' way)
 * ends a connect hanging on such an address at once.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ldmd/proto/rpc_io.h"
#include "ldmd/proto/connect.h"
#include "test/lib/tu_clock.h"
#include "test/lib/tu_skip.h"

/* A loopback listener, and the connection that fills its queue. */
typedef struct listener {
  int fd, filler;
  struct sockaddr_storage ss;
  socklen_t sl;
  unsigned port;
} listener;

/* A listener on 127.0.0.1 or ::1; dead: its queue is full, so it never
 * answers a SYN.  @return false if the family is not available here. */
static bool open_listener(int family, bool dead, listener *l) {
  memset(l, 0, sizeof *l);
  l->filler = -1;
  l->fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (l->fd < 0)
    return false;
  if (family == AF_INET) {
    struct sockaddr_in *s4 = (struct sockaddr_in *)&l->ss;

    s4->sin_family = AF_INET;
    s4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    l->sl = sizeof *s4;
  } else {
    struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&l->ss;

    s6->sin6_family = AF_INET6;
    s6->sin6_addr = in6addr_loopback;
    l->sl = sizeof *s6;
  }
  if (bind(l->fd, (struct sockaddr *)&l->ss, l->sl) != 0) {
    close(l->fd);
    return false;
  }
  assert_int_equal(listen(l->fd, dead ? 0 : 8), 0);
  l->sl = sizeof l->ss;
  assert_int_equal(getsockname(l->fd, (struct sockaddr *)&l->ss, &l->sl), 0);
  l->port =
      ntohs(family == AF_INET ? ((struct sockaddr_in *)&l->ss)->sin_port
                              : ((struct sockaddr_in6 *)&l->ss)->sin6_port);
  if (dead) {
    l->filler = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(l->filler >= 0);
    assert_int_equal(connect(l->filler, (struct sockaddr *)&l->ss, l->sl), 0);
  }
  return true;
}

/* An address where nothing listens: a listener's, closed. */
static void refusing(listener *l) {
  assert_true(open_listener(AF_INET, false, l));
  close(l->fd);
  l->fd = -1;
}

static void close_listener(listener *l) {
  if (l->fd >= 0)
    close(l->fd);
  if (l->filler >= 0)
    close(l->filler);
}

/* The list l[0..n) as getaddrinfo() would give it. */
static struct addrinfo *list_of(listener *l, size_t n) {
  struct addrinfo *ai = calloc(n, sizeof *ai);
  size_t i;

  assert_non_null(ai);
  for (i = 0; i < n; i++) {
    ai[i].ai_family = l[i].ss.ss_family;
    ai[i].ai_socktype = SOCK_STREAM;
    ai[i].ai_addr = (struct sockaddr *)&l[i].ss;
    ai[i].ai_addrlen = l[i].sl;
    ai[i].ai_next = i + 1 < n ? &ai[i + 1] : NULL;
  }
  return ai;
}

/* The local port of a connected socket. */
static unsigned local_port(int fd) {
  struct sockaddr_storage ss;
  socklen_t sl = sizeof ss;

  assert_int_equal(getsockname(fd, (struct sockaddr *)&ss, &sl), 0);
  return ntohs(ss.ss_family == AF_INET
                   ? ((struct sockaddr_in *)&ss)->sin_port
                   : ((struct sockaddr_in6 *)&ss)->sin6_port);
}

/* The connection fd made must be the one the listener l accepts. */
static void accepted_by(int fd, listener *l) {
  struct sockaddr_storage ss;
  socklen_t sl = sizeof ss;
  struct pollfd p = {.fd = l->fd, .events = POLLIN};
  int afd;

  assert_int_equal(poll(&p, 1, 2000), 1);
  afd = accept(l->fd, (struct sockaddr *)&ss, &sl);
  assert_true(afd >= 0);
  assert_int_equal(ntohs(ss.ss_family == AF_INET
                             ? ((struct sockaddr_in *)&ss)->sin_port
                             : ((struct sockaddr_in6 *)&ss)->sin6_port),
                   local_port(fd));
  close(afd);
}

/* Three dead addresses: one timeout in all, not three. */
static void test_dead_addresses_share_the_timeout(void **state) {
  listener l[3];
  struct addrinfo *ai;
  int64_t t0, took;
  int fd;

  (void)state;
  for (int i = 0; i < 3; i++)
    assert_true(open_listener(AF_INET, true, &l[i]));
  ai = list_of(l, 3);
  t0 = tu_now_ms();
  fd = ldm6_io__connect_list(ai, 900, NULL, -1);
  took = tu_now_ms() - t0;
  assert_int_equal(fd, -1);
  assert_int_equal(errno, ETIMEDOUT);
  printf("three dead addresses, timeout 900 ms: gave up after %lld ms\n",
         (long long)took);
  assert_true(took >= 850);
  assert_true(took < 1400); /* the old loop took 2700 */
  free(ai);
  for (int i = 0; i < 3; i++)
    close_listener(&l[i]);
}

/* Dead addresses before a live one: it is reached within the timeout, a
 * quarter of a second per dead address. */
static void test_live_address_after_dead_ones(void **state) {
  listener l[3];
  struct addrinfo *ai;
  int64_t t0, took;
  int fd;

  (void)state;
  assert_true(open_listener(AF_INET, true, &l[0]));
  assert_true(open_listener(AF_INET, true, &l[1]));
  assert_true(open_listener(AF_INET, false, &l[2]));
  ai = list_of(l, 3);
  t0 = tu_now_ms();
  fd = ldm6_io__connect_list(ai, 3000, NULL, -1);
  took = tu_now_ms() - t0;
  assert_true(fd >= 0);
  printf("two dead addresses, then a live one: connected after %lld ms\n",
         (long long)took);
  assert_true(took >= 450);
  assert_true(took < 1500); /* the old loop took 6000 */
  accepted_by(fd, &l[2]);
  close(fd);
  free(ai);
  for (int i = 0; i < 3; i++)
    close_listener(&l[i]);
}

/* A refused address costs nothing: the next one is tried at once. */
static void test_refused_then_live(void **state) {
  listener l[2];
  struct addrinfo *ai;
  int64_t t0;
  int fd;

  (void)state;
  refusing(&l[0]);
  assert_true(open_listener(AF_INET, false, &l[1]));
  ai = list_of(l, 2);
  t0 = tu_now_ms();
  fd = ldm6_io__connect_list(ai, 3000, NULL, -1);
  assert_true(fd >= 0);
  assert_true(tu_now_ms() - t0 < 200);
  accepted_by(fd, &l[1]);
  close(fd);
  /* Every address refused: the error is the refusal, at once. */
  ai[1] = ai[0];
  ai[0].ai_next = &ai[1];
  ai[1].ai_next = NULL;
  t0 = tu_now_ms();
  assert_int_equal(ldm6_io__connect_list(ai, 3000, NULL, -1), -1);
  assert_int_equal(errno, ECONNREFUSED);
  assert_true(tu_now_ms() - t0 < 200);
  free(ai);
  close_listener(&l[1]);
}

/* Is a connection to 127.0.0.1 port `port` in SYN_SENT (state 02 in
 * /proc/net/tcp): an attempt on its way that nobody has answered? */
static bool syn_sent_to(unsigned port) {
  FILE *f = fopen("/proc/net/tcp", "r");
  char line[256];
  bool found = false;

  if (f == NULL)
    return false;
  while (!found && fgets(line, sizeof line, f) != NULL) {
    unsigned rport, st;

    found = sscanf(line, " %*d: %*x:%*x %*x:%x %x", &rport, &st) == 2 &&
            rport == port && st == 2;
  }
  fclose(f);
  return found;
}

/* An attempt still in flight can win after the next one started: the
 * first listener makes room (a child accepts its filler) once the attempt
 * on the second address is seen on its way, and the SYN that the kernel
 * sends again to the first gets through. */
static void test_slow_first_address_still_wins(void **state) {
  listener l[2];
  struct addrinfo *ai;
  pid_t pid;
  int fd, status;

  (void)state;
  assert_true(open_listener(AF_INET, true, &l[0]));
  assert_true(open_listener(AF_INET, true, &l[1]));
  ai = list_of(l, 2);
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    struct timespec ts = {0, 1000 * 1000L};
    int t;

    for (t = 0; t < 10000 && !syn_sent_to(l[1].port); t++)
      nanosleep(&ts, NULL); /* 10 s at most for the second attempt */
    if (t == 10000)
      _exit(2);
    _exit(accept(l[0].fd, NULL, NULL) >= 0 ? 0 : 1);
  }
  fd = ldm6_io__connect_list(ai, 5000, NULL, -1);
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  assert_true(fd >= 0);
  accepted_by(fd, &l[0]);
  close(fd);
  free(ai);
  for (int i = 0; i < 2; i++)
    close_listener(&l[i]);
}

/* IPv6 and IPv4 addresses of one host: a dead ::1 before a live
 * 127.0.0.1, and the reverse. */
static void test_mixed_families(void **state) {
  listener l[2];
  struct addrinfo *ai;
  int64_t t0;
  int fd;

  (void)state;
  if (!open_listener(AF_INET6, true, &l[0]))
    tu_skip("no ::1 on this host: mixed IPv6 and IPv4 lists");
  assert_true(open_listener(AF_INET, false, &l[1]));
  ai = list_of(l, 2);
  t0 = tu_now_ms();
  fd = ldm6_io__connect_list(ai, 3000, NULL, -1);
  assert_true(fd >= 0);
  assert_true(tu_now_ms() - t0 < 1000);
  accepted_by(fd, &l[1]);
  close(fd);
  free(ai);
  close_listener(&l[0]);
  close_listener(&l[1]);

  assert_true(open_listener(AF_INET, true, &l[0]));
  assert_true(open_listener(AF_INET6, false, &l[1]));
  ai = list_of(l, 2);
  fd = ldm6_io__connect_list(ai, 3000, NULL, -1);
  assert_true(fd >= 0);
  accepted_by(fd, &l[1]);
  close(fd);
  free(ai);
  close_listener(&l[0]);
  close_listener(&l[1]);
}

/* Through the public call: one dead address gets the whole timeout, and
 * the message says so. */
static void test_connect_by_name(void **state) {
  listener l;
  char err[256];
  int64_t t0, took;

  (void)state;
  assert_true(open_listener(AF_INET, true, &l));
  t0 = tu_now_ms();
  assert_null(ldm6_io_connect("127.0.0.1", l.port, 700, err, sizeof err));
  took = tu_now_ms() - t0;
  assert_int_equal(errno, ETIMEDOUT);
  assert_non_null(strstr(err, "timed out"));
  assert_true(took >= 650 && took < 1200);
  close_listener(&l);
}

/* A stop descriptor that becomes readable while an attempt hangs on a
 * dead address ends the connect at once, errno EINTR, well before the
 * timeout; the time is bounded on both sides (a child makes it readable
 * after 200 ms). */
static void test_stop_fd_ends_connect(void **state) {
  listener l[2];
  struct addrinfo *ai;
  int64_t t0, took;
  int fd, pfd[2], status;
  pid_t pid;

  (void)state;
  assert_true(open_listener(AF_INET, true, &l[0]));
  assert_true(open_listener(AF_INET, true, &l[1]));
  ai = list_of(l, 2);
  assert_int_equal(pipe(pfd), 0);
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    struct timespec ts = {0, 200 * 1000 * 1000L};

    nanosleep(&ts, NULL);
    _exit(write(pfd[1], "", 1) == 1 ? 0 : 1);
  }
  t0 = tu_now_ms();
  fd = ldm6_io__connect_list(ai, 5000, NULL, pfd[0]);
  took = tu_now_ms() - t0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  assert_int_equal(fd, -1);
  assert_int_equal(errno, EINTR);
  printf("two dead addresses, stopped after 200 ms: gave up after %lld ms\n",
         (long long)took);
  assert_true(took >= 150 && took < 1500);
  free(ai);
  close_listener(&l[0]);
  close_listener(&l[1]);

  /* Through the public call, the descriptor readable before it starts:
   * it ends at once, and the name did resolve. */
  assert_true(open_listener(AF_INET, true, &l[0]));
  {
    char err[256];
    bool unresolved = true;

    t0 = tu_now_ms();
    assert_null(ldm6_io_connect_stop("127.0.0.1", l[0].port, 5000, pfd[0],
                                     &unresolved, err, sizeof err));
    assert_int_equal(errno, EINTR);
    assert_false(unresolved);
    assert_non_null(strstr(err, "cannot connect to 127.0.0.1 port"));
    assert_true(tu_now_ms() - t0 < 1000);
  }
  close_listener(&l[0]);
  close(pfd[0]);
  close(pfd[1]);
}

int main(int argc, char **argv) {
  if (tu_select(argc, argv) != 0)
    return 2;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dead_addresses_share_the_timeout),
      cmocka_unit_test(test_live_address_after_dead_ones),
      cmocka_unit_test(test_refused_then_live),
      cmocka_unit_test(test_slow_first_address_still_wins),
      cmocka_unit_test(test_mixed_families),
      cmocka_unit_test(test_connect_by_name),
      cmocka_unit_test(test_stop_fd_ends_connect),
  };

  return tu_exit_code(cmocka_run_group_tests(tests, NULL, NULL));
}
