/*
 * notify_listen.c - the test's side of systemd's notification socket, for
 * test/service/ (lib.sh gives its path to ldmd as NOTIFY_SOCKET, as
 * systemd does for a unit of Type=notify).
 *
 * usage: notify_listen [-g] SOCKET
 *
 * Binds an AF_UNIX datagram socket at SOCKET with SO_PASSCRED, so that each
 * datagram comes with its sender's pid, as systemd's does, and prints every
 * line of every datagram as "PID LINE" on standard output, flushed after
 * each datagram.  Lines of its own start with "#": "# listening" once the
 * socket is bound (and the gate closed with -g), "# gate closed" and
 * "# gate open" when the gate changes.
 *
 * The gate makes a sender wait in sendmsg(2) where it notifies, so that a
 * test can look at the sender at that moment (does its port accept
 * connections yet?) before the notification is read.  Closing it (-g at
 * the start, or SIGUSR2) fills the socket's receive queue with datagrams
 * of the listener's own, one past the kernel's limit
 * (/proc/sys/net/unix/max_dgram_qlen; the limit does not apply to a socket
 * sending to itself), and stops reading: a blocking sendmsg() from another
 * socket then sleeps until there is room.  SIGUSR1 opens it: the listener
 * reads again, dropping its own datagrams, and the sender goes on.
 * SIGTERM or SIGINT: exit 0.  Any failure: a message and exit 1.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static volatile sig_atomic_t want_open, want_closed, stop;

static void on_usr1(int sig) {
  (void)sig;
  want_open = 1;
}

static void on_usr2(int sig) {
  (void)sig;
  want_closed = 1;
}

static void on_stop(int sig) {
  (void)sig;
  stop = 1;
}

static void die(const char *what, const char *path) {
  fprintf(stderr, "notify_listen: %s %s: %s\n", what, path, strerror(errno));
  exit(1);
}

/* The kernel's limit of queued datagrams per socket. */
static long queue_limit(void) {
  const char *path = "/proc/sys/net/unix/max_dgram_qlen";
  FILE *f = fopen(path, "r");
  long n = -1;

  if (f == NULL)
    die("cannot open", path);
  if (fscanf(f, "%ld", &n) != 1 || n < 0) {
    fprintf(stderr, "notify_listen: cannot read a number from %s\n", path);
    exit(1);
  }
  fclose(f);
  return n;
}

/* Close the gate: the queue one past its limit with our own datagrams. */
static void close_gate(int fd, const struct sockaddr_un *sa, const char *path) {
  long i, n = queue_limit() + 1;

  for (i = 0; i < n; i++)
    if (sendto(fd, "#", 1, 0, (const struct sockaddr *)sa, sizeof *sa) != 1)
      die("cannot fill the queue of", path);
  printf("# gate closed\n");
  fflush(stdout);
}

/* Read one datagram and print its lines, unless it is one of ours. */
static void receive(int fd, const char *path) {
  char buf[65536 + 1];
  union {
    struct cmsghdr h;
    char space[CMSG_SPACE(sizeof(struct ucred))];
  } ctl;
  struct iovec iov = {buf, sizeof buf - 1};
  struct msghdr mh;
  struct cmsghdr *c;
  long pid = 0;
  ssize_t n;
  char *line, *save = NULL;

  memset(&mh, 0, sizeof mh);
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = ctl.space;
  mh.msg_controllen = sizeof ctl.space;
  n = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
  if (n < 0) {
    if (errno == EAGAIN || errno == EINTR)
      return;
    die("cannot receive on", path);
  }
  for (c = CMSG_FIRSTHDR(&mh); c != NULL; c = CMSG_NXTHDR(&mh, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
      struct ucred uc;

      memcpy(&uc, CMSG_DATA(c), sizeof uc);
      pid = (long)uc.pid;
    }
  if (pid == (long)getpid())
    return;
  buf[n] = '\0';
  for (line = strtok_r(buf, "\n", &save); line != NULL;
       line = strtok_r(NULL, "\n", &save))
    printf("%ld %s\n", pid, line);
  fflush(stdout);
}

int main(int argc, char **argv) {
  struct sockaddr_un sa;
  struct sigaction act;
  sigset_t block, wait_mask;
  const char *path;
  int fd, one = 1, gated = 0;

  if (argc == 3 && strcmp(argv[1], "-g") == 0)
    gated = 1;
  else if (argc != 2) {
    fprintf(stderr, "usage: notify_listen [-g] SOCKET\n");
    return 1;
  }
  path = argv[argc - 1];
  memset(&sa, 0, sizeof sa);
  sa.sun_family = AF_UNIX;
  if (strlen(path) >= sizeof sa.sun_path) {
    fprintf(stderr, "notify_listen: socket path too long: %s\n", path);
    return 1;
  }
  memcpy(sa.sun_path, path, strlen(path));

  memset(&act, 0, sizeof act);
  sigemptyset(&act.sa_mask);
  act.sa_handler = on_usr1;
  sigaction(SIGUSR1, &act, NULL);
  act.sa_handler = on_usr2;
  sigaction(SIGUSR2, &act, NULL);
  act.sa_handler = on_stop;
  sigaction(SIGTERM, &act, NULL);
  sigaction(SIGINT, &act, NULL);
  sigemptyset(&block);
  sigaddset(&block, SIGUSR1);
  sigaddset(&block, SIGUSR2);
  sigaddset(&block, SIGTERM);
  sigaddset(&block, SIGINT);
  sigprocmask(SIG_BLOCK, &block, &wait_mask);

  fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    die("cannot make a socket for", path);
  if (setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof one) != 0)
    die("cannot set SO_PASSCRED on", path);
  if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0)
    die("cannot bind", path);
  if (gated)
    close_gate(fd, &sa, path);
  printf("# listening\n");
  fflush(stdout);

  while (!stop) {
    struct pollfd p = {fd, POLLIN, 0};

    if (want_closed && !gated) {
      close_gate(fd, &sa, path);
      gated = 1;
    }
    if (want_open && gated) {
      printf("# gate open\n");
      fflush(stdout);
      gated = 0;
    }
    want_open = want_closed = 0;
    /* Closed: wait for a signal only, the socket not polled. */
    p.fd = gated ? -1 : fd;
    if (ppoll(&p, 1, NULL, &wait_mask) < 0) {
      if (errno == EINTR)
        continue;
      die("cannot wait on", path);
    }
    if (p.revents & POLLIN)
      receive(fd, path);
  }
  close(fd);
  return 0;
}
