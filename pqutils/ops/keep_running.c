/*
 * keep_running - run a program and start it again whenever it ends, as
 * LDM's keep_running does for an ldmd.conf EXEC entry ("EXEC
 * \"keep_running noaaportIngester ...\"").  This file owns the whole
 * program: its command line, the child's life (start, exit, restart), the
 * back-off between restarts, and the signals it passes on.  The manual is
 * pqutils/ops/keep_running.1.
 *
 * LDM's is a shell loop that restarts at once, for ever, and logs "Process
 * '<command>' terminated with status <N>. Restarting" (at ERROR, through
 * ulogger); ours logs the same words, with the status as the shell gives it
 * (the exit code, or 128 + the signal), and adds a bounded back-off: a run
 * shorter than the reset time (-r) waits before the next start, first -d
 * seconds, doubling up to -D; a run that lasted at least that long restarts
 * at once and starts the back-off over.  A program that crashes at once no
 * longer spins, and one that ran for hours is back at once.
 *
 * Signals: SIGTERM and SIGINT stop it: passed on to the program, which
 * keep_running then waits for, and exits 0 without restarting it (during a
 * back-off wait it exits at once).  SIGHUP, SIGUSR1 and SIGUSR2 are passed
 * on to the program (pqact rereads its table, a program reopens its log or
 * rolls its level), and SIGUSR1 and SIGUSR2 act on keep_running's own log
 * as in every program.  The program runs in keep_running's process group
 * (ldmd's, so it gets the queue's SIGCONT wake-ups), with keep_running's
 * signal mask and dispositions of before, and gets SIGTERM if keep_running
 * itself dies (PR_SET_PDEATHSIG), so it is never left behind.
 *
 * Every signal of interest is blocked and taken synchronously with
 * sigtimedwait(), so none is lost between a check and a wait.  A program
 * that cannot be started at all the first time (not found, not executable:
 * execvp()'s error comes back through a close-on-exec pipe) is reported and
 * keep_running exits 1; later, the same failure is an ordinary short run.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ldmd/site/log.h"
#include "pqutils/common/cli.h"

static const char usage_text[] =
    "usage: keep_running [options] program [argument ...]\n"
    "options (before the program; -- ends them):\n"
    "  -d seconds   first wait before a restart after a short run (1)\n"
    "  -D seconds   longest wait: the wait doubles up to it (60)\n"
    "  -r seconds   a run at least this long restarts at once and starts\n"
    "               the back-off over (60)\n"
    "  -l dest      log to dest: \"\" syslog, \"-\" stderr, or a file\n"
    "  -v           verbose: log each start\n"
    "  -x           debug\n"
    "  -h           print this text\n"
    "SIGTERM and SIGINT stop the program and keep_running (exit 0);\n"
    "SIGHUP, SIGUSR1 and SIGUSR2 are passed on to the program.\n";

struct opts {
  double first, longest, reset;
  char **argv; /* the program and its arguments */
};

static int option(struct cli *c, int ch, const char *arg, void *p) {
  struct opts *o = p;
  double *d = ch == 'd' ? &o->first : ch == 'D' ? &o->longest : &o->reset;
  const char *what = ch == 'd'   ? "first wait (-d)"
                     : ch == 'D' ? "longest wait (-D)"
                                 : "reset time (-r)";

  if (cli_parse_double(c, what, arg, d) != 0)
    return -1;
  if (*d > 86400) {
    cli_usage_error(c, usage_text, "%s: at most a day (86400), not %s", what,
                    arg);
    return -1;
  }
  return 0;
}

static int operands(struct cli *c, int argc, char **argv, void *p) {
  struct opts *o = p;

  if (optind >= argc) {
    cli_usage_error(c, usage_text, "no program to run");
    return -1;
  }
  o->argv = argv + optind;
  return 0;
}

/* "+" stops at the program's name: its own options are its own. */
static const struct cli_spec spec = {"+:d:D:r:l:vxh", usage_text, option,
                                     operands};

/* The command as LDM's line shows it ("$@" in a string: the words with
 * single spaces). */
static void command_text(char **argv, char *buf, size_t len) {
  size_t used = 0;

  buf[0] = '\0';
  for (; *argv != NULL && used + 1 < len; argv++) {
    int n = snprintf(buf + used, len - used, "%s%s", used ? " " : "", *argv);
    if (n < 0)
      break;
    used += (size_t)n;
  }
}

static double now_s(void) {
  struct timespec ts;

  (void)clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The signals keep_running takes itself (blocked; sigtimedwait()), and
 * their dispositions of before, which the program gets back (ldmd starts
 * an EXEC with SIGUSR1 and SIGUSR2 ignored). */
static const int taken[] = {SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2, SIGCHLD};
#define NTAKEN (sizeof taken / sizeof taken[0])
static struct sigaction before[NTAKEN];

/* Block them, and give each its default action: an ignored signal is
 * discarded, never pending, so sigtimedwait() would not see it. */
static int take_signals(sigset_t *set, sigset_t *old_mask) {
  size_t i;

  sigemptyset(set);
  for (i = 0; i < NTAKEN; i++)
    sigaddset(set, taken[i]);
  if (sigprocmask(SIG_BLOCK, set, old_mask) != 0)
    return -1;
  for (i = 0; i < NTAKEN; i++) {
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    if (sigaction(taken[i], &dfl, &before[i]) != 0)
      return -1;
  }
  return 0;
}

/*
 * Start the program.  In the child: the signal mask of before, SIGTERM
 * when keep_running dies, then execvp(); its errno, if it fails, goes back
 * through the pipe and the child exits 127 (a shell's "not found").
 * @return the child's pid and *exec_errno 0, or -1 (fork failed, logged),
 *         or the pid of a child that could not exec, *exec_errno its error
 */
static pid_t start(char **argv, const sigset_t *old_mask, int *exec_errno) {
  int fds[2];
  pid_t pid;
  pid_t parent = getpid();

  *exec_errno = 0;
  if (pipe2(fds, O_CLOEXEC) != 0) {
    log_error("cannot make a pipe to start %s: %s", argv[0], strerror(errno));
    return -1;
  }
  pid = fork();
  if (pid < 0) {
    log_error("cannot fork to start %s: %s", argv[0], strerror(errno));
    close(fds[0]);
    close(fds[1]);
    return -1;
  }
  if (pid == 0) {
    int e;

    close(fds[0]);
    (void)prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) /* keep_running died before prctl() */
      _exit(127);
    for (size_t i = 0; i < NTAKEN; i++)
      (void)sigaction(taken[i], &before[i], NULL);
    (void)sigprocmask(SIG_SETMASK, old_mask, NULL);
    execvp(argv[0], argv);
    e = errno;
    (void)!write(fds[1], &e, sizeof e);
    _exit(127);
  }
  close(fds[1]);
  for (;;) {
    ssize_t n = read(fds[0], exec_errno, sizeof *exec_errno);
    if (n >= 0 || errno != EINTR) {
      if (n != (ssize_t)sizeof *exec_errno)
        *exec_errno = 0; /* closed on exec: it runs */
      break;
    }
  }
  close(fds[0]);
  return pid;
}

/* The status as LDM's shell loop shows it: the exit code, or 128 + the
 * signal. */
static int shell_status(int status) {
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  if (WIFSIGNALED(status))
    return 128 + WTERMSIG(status);
  return 255;
}

/* Reap the child if it ended: true, with its wait status. */
static bool reaped(pid_t child, int *status) {
  pid_t r;

  do
    r = waitpid(child, status, WNOHANG);
  while (r < 0 && errno == EINTR);
  return r == child;
}

/*
 * Wait for a signal, for at most `seconds` (< 0: no limit).
 * @return the signal, or 0 when the time is up
 */
static int next_signal(const sigset_t *set, double seconds) {
  for (;;) {
    int sig;

    if (seconds < 0) {
      sig = sigwaitinfo(set, NULL);
    } else {
      struct timespec ts;
      ts.tv_sec = (time_t)seconds;
      ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
      sig = sigtimedwait(set, NULL, &ts);
    }
    if (sig > 0)
      return sig;
    if (errno == EAGAIN)
      return 0;
    if (errno != EINTR) {
      log_error("cannot wait for signals: %s", strerror(errno));
      return SIGTERM; /* cannot go on safely: stop as if told to */
    }
  }
}

/* SIGUSR1 and SIGUSR2 also act on our own log. */
static void own_log(int sig) {
  if (sig == SIGUSR1)
    ldm_log_request_refresh();
  else if (sig == SIGUSR2)
    ldm_log_request_roll();
}

int main(int argc, char **argv) {
  struct cli c;
  struct opts o = {.first = 1, .longest = 60, .reset = 60};
  char cmd[4096];
  sigset_t set, old_mask;
  double delay = 0;
  bool first_start = true;
  int rc = cli_parse(&c, argc, argv, &spec, &o);

  if (rc != CLI_GO_ON)
    return rc;
  if (o.longest < o.first) {
    cli_usage_error(
        &c, usage_text,
        "the longest wait (-D %g) is shorter than the first (-d %g)", o.longest,
        o.first);
    return CLI_EXIT_USAGE;
  }
  command_text(o.argv, cmd, sizeof cmd);
  if (take_signals(&set, &old_mask) != 0) {
    log_error("cannot take the signals: %s", strerror(errno));
    return 1;
  }
  /* A stop that came before the block is still pending: taken below. */
  for (;;) {
    int exec_errno, status = 0, sig;
    double started = now_s(), ran;
    pid_t child = start(o.argv, &old_mask, &exec_errno);

    if (child < 0) {
      ran = 0;
    } else if (exec_errno != 0 && first_start) {
      (void)waitpid(child, NULL, 0);
      log_error("cannot run %s: %s", o.argv[0], strerror(exec_errno));
      return 1;
    } else {
      if (exec_errno != 0)
        log_error("cannot run %s: %s", o.argv[0], strerror(exec_errno));
      else
        log_info("started '%s' (pid %ld)", cmd, (long)child);
      first_start = false;
      /* The child's life: pass signals on until it ends. */
      for (;;) {
        if (reaped(child, &status))
          break;
        sig = next_signal(&set, -1);
        if (sig == SIGCHLD)
          continue;
        own_log(sig);
        (void)kill(child, sig);
        if (sig == SIGTERM || sig == SIGINT) {
          log_notice("%s: stopping '%s' (pid %ld)",
                     sig == SIGTERM ? "SIGTERM" : "SIGINT", cmd, (long)child);
          while (!reaped(child, &status)) {
            int again = next_signal(&set, -1);
            if (again != SIGCHLD) {
              own_log(again);
              (void)kill(child, again);
            }
          }
          log_notice("'%s' ended with status %d: exiting", cmd,
                     shell_status(status));
          return 0;
        }
      }
      ran = now_s() - started;
      /* LDM's words, which operators grep for. */
      log_error("Process '%s' terminated with status %d. Restarting", cmd,
                shell_status(status));
    }
    if (ran >= o.reset)
      delay = 0;
    else
      delay = delay <= 0 ? o.first : fmin(delay * 2, o.longest);
    if (delay > 0) {
      if (child >= 0 && WIFSIGNALED(status))
        log_notice("it ran %.3g s, killed by signal %d (%s): waiting %.3g s "
                   "before the restart",
                   ran, WTERMSIG(status), strsignal(WTERMSIG(status)), delay);
      else
        log_notice("it ran %.3g s: waiting %.3g s before the restart", ran,
                   delay);
      double end = now_s() + delay;
      for (;;) {
        double left = end - now_s();
        if (left <= 0)
          break;
        sig = next_signal(&set, left);
        if (sig == 0)
          break;
        own_log(sig);
        if (sig == SIGTERM || sig == SIGINT) {
          log_notice("%s: exiting, '%s' not restarted",
                     sig == SIGTERM ? "SIGTERM" : "SIGINT", cmd);
          return 0;
        }
      }
    } else {
      /* A stop that came just as it ended: nothing to restart. */
      struct timespec zero = {0, 0};
      sigset_t stop;
      sigemptyset(&stop);
      sigaddset(&stop, SIGTERM);
      sigaddset(&stop, SIGINT);
      sig = sigtimedwait(&stop, NULL, &zero);
      if (sig == SIGTERM || sig == SIGINT) {
        log_notice("%s: exiting, '%s' not restarted",
                   sig == SIGTERM ? "SIGTERM" : "SIGINT", cmd);
        return 0;
      }
    }
  }
}
