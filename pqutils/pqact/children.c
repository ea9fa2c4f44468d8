/*
 * children.c - the processes pqact starts (children.h): the set of those
 * running, each with its command for the log lines and whether it counts
 * against the cap; fork and exec, with what the child must and must not
 * get from pqact; reaping; and the waits for one child, or for any capped
 * one, on pidfds (pidfd_open(2)) polled with the stop pipe of
 * pqutils/common/cli_io.h, so that a child's exit or a stop ends a wait at
 * once, without polling on a timer.
 *
 * A child given up on (pqact_children_terminate()) gets SIGTERM, and
 * SIGKILL if it is still there after a grace: its deadline is kept with it
 * and checked at each reap, so that nothing is left running as an orphan.
 *
 * The cap is reached in episodes: the first capped spawn it refuses logs a
 * warning naming the cap and its registry key, and the episode lasts until
 * no capped child runs, when a notice says how many spawns had to wait.
 */
#include "pqutils/pqact/children.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ldmd/site/log.h"
#include "ldmd/site/registry.h"
#include "pqutils/common/cli_io.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2) /* linux/close_range.h */
#endif

#define WHAT_MAX 256 /* the command as log lines show it */

struct child {
  pid_t pid;
  bool capped;
  pqact_child_exit_fn *on_exit;
  void *arg;
  int64_t kill_at; /* cli_now_ms() when SIGKILL is due; 0: not ending */
  bool killed;     /* SIGKILL sent: kill_at is when to look again */
  char what[WHAT_MAX];
};

struct pqact_children {
  struct child *v; /* running, in no order */
  size_t n, alloc;
  unsigned cap;     /* most capped ones at once; 0: no cap */
  unsigned ncapped; /* capped ones running */
  bool over;        /* an episode of the cap is under way */
  unsigned waited;  /* spawns refused in this episode */
};

struct pqact_children *pqact_children_new(unsigned cap) {
  struct pqact_children *k = calloc(1, sizeof *k);
  if (k != NULL)
    k->cap = cap;
  return k;
}

void pqact_children_free(struct pqact_children *k) {
  if (k == NULL)
    return;
  free(k->v);
  free(k);
}

unsigned pqact_children_running(const struct pqact_children *k,
                                bool capped_only) {
  return capped_only ? k->ncapped : (unsigned)k->n;
}

bool pqact_children_full(const struct pqact_children *k) {
  return k->cap > 0 && k->ncapped >= k->cap;
}

static struct child *find(struct pqact_children *k, pid_t pid) {
  for (size_t i = 0; i < k->n; i++)
    if (k->v[i].pid == pid)
      return &k->v[i];
  return NULL;
}

/* The command line, cut to fit, for the log lines. */
static void describe(char *what, char *const argv[]) {
  size_t len = 0;
  what[0] = '\0';
  for (int i = 0; argv[i] != NULL && len + 1 < WHAT_MAX; i++) {
    int n = snprintf(what + len, WHAT_MAX - len, "%s%s", i ? " " : "", argv[i]);
    if (n < 0)
      break;
    len += (size_t)n;
  }
}

/* ---- the child's side of the fork ---- */

/* Every descriptor from 3 up closed at exec: close_range(2), else one by
 * one.  Close-on-exec rather than closed, so that a failed exec can still
 * be logged (the log may be a file or syslog's socket). */
static void cloexec_from_3(void) {
#if defined(SYS_close_range)
  if (syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) == 0)
    return;
#endif
  long max = sysconf(_SC_OPEN_MAX);
  if (max < 0 || max > INT_MAX)
    max = 65536;
  for (int fd = 3; fd < max; fd++) {
    int fl = fcntl(fd, F_GETFD);
    if (fl >= 0 && (fl & FD_CLOEXEC) == 0)
      (void)fcntl(fd, F_SETFD, fl | FD_CLOEXEC);
  }
}

/* Runs in the child: never returns. */
static void become(char *const argv[], int stdin_fd) {
  (void)setpgid(0, 0); /* a process group of its own, as LDM's */
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = SIG_DFL;
  (void)sigemptyset(&sa.sa_mask);
  for (int sig = 1; sig < NSIG; sig++) /* pqact ignores SIGPIPE, SIGHUP */
    (void)sigaction(sig, &sa, NULL);   /* (fails for KILL, STOP: fine) */
  sigset_t none;
  (void)sigemptyset(&none);
  (void)sigprocmask(SIG_SETMASK, &none, NULL);

  int in = stdin_fd;
  if (in < 0 && (in = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) {
    log_error("cannot open /dev/null for \"%s\": %s", argv[0], strerror(errno));
    _exit(127);
  }
  if (in == 0) {
    int fl = fcntl(0, F_GETFD);
    if (fl >= 0)
      (void)fcntl(0, F_SETFD, fl & ~FD_CLOEXEC);
  } else if (dup2(in, 0) < 0) {
    log_error("cannot give \"%s\" its standard input: %s", argv[0],
              strerror(errno));
    _exit(127);
  }
  cloexec_from_3();
  execvp(argv[0], argv);
  log_error("cannot execute \"%s\": %s", argv[0], strerror(errno));
  _exit(127);
}

/* ---- the parent's side ---- */

pid_t pqact_children_spawn(struct pqact_children *k, char *const argv[],
                           int stdin_fd, bool capped,
                           pqact_child_exit_fn *on_exit, void *arg) {
  if (capped && pqact_children_full(k)) {
    (void)pqact_children_reap(k);
    if (pqact_children_full(k)) {
      if (!k->over)
        log_warning("%u children are running, the cap (registry %s): "
                    "products wait for one to exit",
                    k->cap, REG_PQACT_MAX_CHILDREN);
      k->over = true;
      k->waited++;
      errno = EAGAIN;
      return -1;
    }
  }
  if (k->n == k->alloc) {
    size_t alloc = k->alloc ? 2 * k->alloc : 16;
    struct child *v = realloc(k->v, alloc * sizeof *v);
    if (v == NULL) {
      errno = ENOMEM;
      return -1;
    }
    k->v = v;
    k->alloc = alloc;
  }
  struct child *c = &k->v[k->n];
  describe(c->what, argv);
  pid_t pid = fork();
  if (pid < 0)
    return -1;
  if (pid == 0)
    become(argv, stdin_fd);
  c->pid = pid;
  c->capped = capped;
  c->on_exit = on_exit;
  c->arg = arg;
  c->kill_at = 0;
  c->killed = false;
  k->n++;
  if (capped)
    k->ncapped++;
  log_debug("started child %d: %s", (int)pid, c->what);
  return pid;
}

/* Take c out of the set; the end of an episode of the cap is said. */
static void forget(struct pqact_children *k, struct child *c) {
  if (c->capped)
    k->ncapped--;
  *c = k->v[--k->n];
  if (k->over && k->ncapped == 0) {
    log_notice("no child runs now: %u spawns waited for the cap of %u",
               k->waited, k->cap);
    k->over = false;
    k->waited = 0;
  }
}

/* A child of pid has exited with status: log it, forget it, tell its
 * owner. */
static void reaped(struct pqact_children *k, pid_t pid, int status) {
  struct child *c = find(k, pid);
  const char *what = c != NULL ? c->what : "not started by this set";
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
    log_debug("Child %d exited with status 0 (%s)", (int)pid, what);
  else if (WIFEXITED(status))
    log_warning("Child %d exited with status %d (%s)", (int)pid,
                WEXITSTATUS(status), what);
  else if (WIFSIGNALED(status))
    log_warning("Child %d terminated by signal %d (%s)", (int)pid,
                WTERMSIG(status), what);
  if (c == NULL)
    return;
  pqact_child_exit_fn *fn = c->on_exit;
  void *arg = c->arg;
  forget(k, c);
  if (fn != NULL)
    fn(arg, pid, status);
}

/* sig to c's process group, which it leads (become()), or to c alone if
 * it left it.  c is unreaped, so neither its pid nor its group is reused. */
static void signal_child(const struct child *c, int sig) {
  if (kill(-c->pid, sig) != 0 && errno == ESRCH)
    (void)kill(c->pid, sig);
}

/* Children past their grace after SIGTERM get SIGKILL; those killed
 * already are looked at again a second later, until reaped. */
static void end_overdue(struct pqact_children *k) {
  int64_t now = cli_now_ms();
  for (size_t i = 0; i < k->n; i++) {
    struct child *c = &k->v[i];
    if (c->kill_at == 0 || now < c->kill_at)
      continue;
    if (!c->killed)
      log_warning("child %d still running after SIGTERM: sending SIGKILL "
                  "(%s)",
                  (int)c->pid, c->what);
    signal_child(c, SIGKILL);
    c->killed = true;
    c->kill_at = now + 1000;
  }
}

unsigned pqact_children_reap(struct pqact_children *k) {
  unsigned n = 0;
  int status;
  pid_t pid;
  if (k->n == 0)
    return 0; /* no child: spare the system call */
  while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
    reaped(k, pid, status);
    n++;
  }
  end_overdue(k);
  return n;
}

void pqact_children_terminate(struct pqact_children *k, pid_t pid,
                              int grace_ms) {
  struct child *c = find(k, pid);
  if (c == NULL || c->kill_at != 0)
    return; /* reaped, or being ended already */
  log_notice("sending SIGTERM to child %d (%s)", (int)pid, c->what);
  signal_child(c, SIGTERM);
  c->kill_at = cli_now_ms() + (grace_ms > 0 ? grace_ms : 1);
}

int pqact_children_due_ms(const struct pqact_children *k) {
  int64_t soonest = 0;
  for (size_t i = 0; i < k->n; i++)
    if (k->v[i].kill_at != 0 && (soonest == 0 || k->v[i].kill_at < soonest))
      soonest = k->v[i].kill_at;
  return soonest == 0 ? -1 : cli_left_ms(soonest);
}

static int pidfd_of(pid_t pid) {
#if defined(SYS_pidfd_open)
  return (int)syscall(SYS_pidfd_open, pid, 0);
#else
  (void)pid;
  errno = ENOSYS;
  return -1;
#endif
}

/* Without a pidfd (none left, or a kernel before 5.3), a wait looks again
 * this often: a stop still ends it at once. */
#define FALLBACK_MS 50

int pqact_children_wait(struct pqact_children *k, pid_t pid) {
  if (find(k, pid) == NULL)
    return 0; /* reaped already */
  int fd = pidfd_of(pid);
  int status, rc = 0;
  for (;;) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) {
      reaped(k, pid, status);
      break;
    }
    if (w < 0 && errno != EINTR) { /* reaped elsewhere: forget it */
      struct child *c = find(k, pid);
      if (c != NULL)
        forget(k, c);
      break;
    }
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (cli_io_poll(&p, fd >= 0 ? 1 : 0, fd >= 0 ? -1 : FALLBACK_MS) < 0) {
      if (errno == EINTR || cli_io_stopping()) {
        rc = -1;
        break;
      }
      if (fd >= 0) /* poll cannot take it: look again from time to time */
        close(fd);
      fd = -1;
    }
  }
  if (fd >= 0)
    close(fd);
  if (rc != 0)
    errno = EINTR;
  return rc;
}

int pqact_children_wait_slot(struct pqact_children *k, int timeout_ms) {
  int64_t deadline = timeout_ms < 0 ? -1 : cli_now_ms() + timeout_ms;
  for (;;) {
    if (cli_io_stopping()) {
      errno = EINTR;
      return -1;
    }
    (void)pqact_children_reap(k);
    if (!pqact_children_full(k))
      return 1;
    int left = cli_left_ms(deadline);
    if (left == 0)
      return 0;
    struct pollfd *p = calloc(k->ncapped, sizeof *p);
    size_t m = 0;
    for (size_t i = 0; p != NULL && i < k->n; i++) {
      if (!k->v[i].capped)
        continue;
      int fd = pidfd_of(k->v[i].pid);
      if (fd >= 0)
        p[m++] = (struct pollfd){.fd = fd, .events = POLLIN};
    }
    if (m == 0 && (left < 0 || left > FALLBACK_MS))
      left = FALLBACK_MS;
    struct pollfd none;
    int rc = cli_io_poll(p != NULL ? p : &none, m, left);
    int e = errno;
    for (size_t i = 0; i < m; i++)
      close(p[i].fd);
    free(p);
    if (rc < 0 && (e == EINTR || cli_io_stopping())) {
      errno = EINTR;
      return -1;
    }
    if (rc < 0) /* poll failed (ENOMEM...): do not spin */
      (void)cli_io_sleep(FALLBACK_MS / 1000.0);
  }
}
