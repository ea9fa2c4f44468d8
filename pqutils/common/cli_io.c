/*
 * cli_io.c - waits that a stop request ends (see cli_io.h): a stop flag,
 * a pipe that a stop makes readable for good, a second pipe for notices
 * (drained by whoever handles them), and the reads, writes, sleeps and
 * waits built on poll(2) over the descriptor and those pipes.  A watched
 * socket is shut down by the stop itself, for the waits that cannot poll
 * the pipe; a wait that polls descriptors of its own is given the pipe's
 * read end (cli_io_stop_fd()).
 */
#include "pqutils/common/cli_io.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static atomic_int stop_flag;
static atomic_int watched = -1;
/* Made by cli_io_init() before any handler or thread can use them. */
static int stop_pipe[2] = {-1, -1};
static int notice_pipe[2] = {-1, -1};

int cli_io_init(void) {
  if (stop_pipe[0] < 0 && pipe2(stop_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
    return -1;
  if (notice_pipe[0] < 0 && pipe2(notice_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
    return -1;
  return 0;
}

/* One byte into a pipe from a signal handler: a full pipe is readable
 * already, so EAGAIN is as good as success. */
static void poke(int fd) {
  if (fd >= 0) {
    ssize_t n = write(fd, "", 1);
    (void)n;
  }
}

void cli_io_request_stop(void) {
  int saved = errno;
  atomic_store(&stop_flag, 1);
  poke(stop_pipe[1]);
  int s = atomic_load(&watched);
  if (s >= 0)
    (void)shutdown(s, SHUT_RDWR);
  errno = saved;
}

bool cli_io_stopping(void) {
  return atomic_load(&stop_flag) != 0;
}

int cli_io_stop_fd(void) {
  return stop_pipe[0];
}

void cli_io_notice(void) {
  int saved = errno;
  poke(notice_pipe[1]);
  errno = saved;
}

void cli_io_notice_clear(void) {
  if (notice_pipe[0] < 0)
    return;
  char buf[64];
  while (read(notice_pipe[0], buf, sizeof buf) > 0)
    ;
}

void cli_io_watch_socket(int fd) {
  atomic_store(&watched, fd);
  if (fd >= 0 && cli_io_stopping()) /* the stop came first */
    (void)shutdown(fd, SHUT_RDWR);
}

double cli_monotonic(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int64_t cli_now_ms(void) {
  return (int64_t)(cli_monotonic() * 1000.0);
}

int cli_left_ms(int64_t deadline) {
  if (deadline < 0)
    return -1;
  int64_t left = deadline - cli_now_ms();
  if (left <= 0)
    return 0;
  return left > INT_MAX ? INT_MAX : (int)left;
}

int cli_io_wait(int fd, short events, int timeout_ms) {
  int64_t deadline = timeout_ms < 0 ? -1 : cli_now_ms() + timeout_ms;
  for (;;) {
    if (cli_io_stopping()) {
      errno = EINTR;
      return -1;
    }
    struct pollfd p[2] = {{.fd = fd, .events = events},
                          {.fd = stop_pipe[0], .events = POLLIN}};
    int n = poll(p, 2, cli_left_ms(deadline));
    if (n < 0 && errno != EINTR)
      return -1;
    if (n > 0 && p[0].revents != 0)
      return 1;
    if (n == 0)
      return 0;
    /* EINTR or the stop pipe: look at the flag again. */
  }
}

int cli_io_poll(struct pollfd *fds, size_t n, int timeout_ms) {
  int64_t deadline = timeout_ms < 0 ? -1 : cli_now_ms() + timeout_ms;
  struct pollfd small[9];
  struct pollfd *p = n < 9 ? small : malloc((n + 1) * sizeof *p);
  if (p == NULL)
    return -1;
  int rc;
  for (;;) {
    if (cli_io_stopping()) {
      errno = EINTR;
      rc = -1;
      break;
    }
    memcpy(p, fds, n * sizeof *p);
    p[n] = (struct pollfd){.fd = stop_pipe[0], .events = POLLIN};
    rc = poll(p, (nfds_t)n + 1, cli_left_ms(deadline));
    if (rc < 0 && errno != EINTR)
      break;
    if (rc == 0)
      break;
    if (rc > 0) {
      rc = 0;
      for (size_t i = 0; i < n; i++) {
        fds[i].revents = p[i].revents;
        rc += p[i].revents != 0;
      }
      if (rc > 0)
        break;
    }
    /* EINTR or the stop pipe: look at the flag again. */
  }
  if (p != small)
    free(p);
  return rc;
}

int cli_io_sleep(double seconds) {
  int64_t deadline = cli_now_ms() + (int64_t)(seconds * 1000.0 + 0.5);
  if (cli_io_stopping())
    return 1;
  struct pollfd p[2] = {{.fd = stop_pipe[0], .events = POLLIN},
                        {.fd = notice_pipe[0], .events = POLLIN}};
  int n = poll(p, 2, cli_left_ms(deadline));
  return n == 0 ? 0 : 1; /* ready, or a signal (EINTR): ended early */
}

ssize_t cli_io_read(int fd, void *buf, size_t n) {
  for (;;) {
    /* Poll first: a read of a FIFO that no writer has opened yet would
     * say end of file, where a blocking open would have waited. */
    if (cli_io_wait(fd, POLLIN, -1) < 0)
      return -1;
    ssize_t k = read(fd, buf, n);
    if (k >= 0)
      return k;
    if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK)
      return -1;
  }
}

int cli_io_write_all(int fd, const void *buf, size_t n) {
  const char *p = buf;
  while (n > 0) {
    /* After a stop, only what fits now: no waiting for room. */
    int ready;
    if (cli_io_stopping()) {
      struct pollfd q = {.fd = fd, .events = POLLOUT};
      ready = poll(&q, 1, 0);
      if (ready == 0) {
        errno = EINTR;
        return -1;
      }
    } else {
      ready = cli_io_wait(fd, POLLOUT, -1);
    }
    if (ready < 0 && errno != EINTR)
      return -1;
    if (ready < 0)
      continue; /* a stop while waiting: try what fits now */
    ssize_t k = write(fd, p, n);
    if (k < 0) {
      bool again = errno == EAGAIN || errno == EWOULDBLOCK;
      if (again && cli_io_stopping()) {
        errno = EINTR; /* full after all: do not spin */
        return -1;
      }
      if (again || errno == EINTR)
        continue;
      return -1;
    }
    p += k;
    n -= (size_t)k;
  }
  return 0;
}

int cli_io_open_read(const char *path) {
  return open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
}

void cli_io_prepare_output(int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode))
    return;
  int fl = fcntl(fd, F_GETFL);
  int fdfl = fcntl(fd, F_GETFD);
  if (fl < 0 || fdfl < 0 || (fl & O_NONBLOCK) || (fl & O_ACCMODE) == O_RDONLY)
    return;
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  int nfd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (nfd < 0)
    return; /* no /proc, or no reader left: writes will tell */
  if (dup2(nfd, fd) >= 0 && (fdfl & FD_CLOEXEC))
    (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
  close(nfd);
}
