/*
 * children.c - the top-level ldmd's child processes: the table, starting
 * EXEC programs, reaping and logging their ends, and stopping them all at
 * shutdown (see children.h).
 */
#include "ldmd/children.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ldmd/log.h"

#define STOP_POLL_MS 50

int ldmd_children_add(ldmd_children *t, pid_t pid, bool exec,
                      const char *what) {
  if (t->n == t->cap) {
    size_t cap = t->cap == 0 ? 16 : t->cap * 2;
    ldmd_child *v = realloc(t->v, cap * sizeof *v);

    if (v == NULL)
      return -1;
    t->v = v;
    t->cap = cap;
  }
  t->v[t->n].pid = pid;
  t->v[t->n].exec = exec;
  snprintf(t->v[t->n].what, sizeof t->v[t->n].what, "%s", what);
  t->n++;
  if (!exec)
    t->nconn++;
  return 0;
}

pid_t *ldmd_children_conn_pids(const ldmd_children *t, size_t *n) {
  pid_t *v;
  size_t i, k = 0;

  *n = 0;
  if (t->nconn == 0)
    return NULL;
  v = malloc(t->nconn * sizeof *v);
  if (v == NULL)
    return NULL;
  for (i = 0; i < t->n; i++)
    if (!t->v[i].exec)
      v[k++] = t->v[i].pid;
  *n = k;
  return v;
}

static void log_end(const ldmd_child *c, int status) {
  const char *kind = c->exec ? "EXEC'd process" : "connection process";

  if (WIFEXITED(status)) {
    int code = WEXITSTATUS(status);

    if (c->exec)
      log_notice("%s %ld (%s) exited with status %d", kind, (long)c->pid,
                 c->what, code);
    else if (code != 0)
      log_info("%s %ld (%s) exited with status %d", kind, (long)c->pid, c->what,
               code);
    else
      log_debug("%s %ld (%s) ended", kind, (long)c->pid, c->what);
  } else if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);

    if (sig == SIGTERM || sig == SIGKILL || sig == SIGINT)
      log_notice("%s %ld (%s) ended by signal %d (%s)", kind, (long)c->pid,
                 c->what, sig, strsignal(sig));
    else
      log_error("%s %ld (%s) crashed: signal %d (%s)%s", kind, (long)c->pid,
                c->what, sig, strsignal(sig),
                WCOREDUMP(status) ? ", core dumped" : "");
  }
}

/* Forget entry i. */
static void drop(ldmd_children *t, size_t i) {
  if (!t->v[i].exec)
    t->nconn--;
  t->v[i] = t->v[t->n - 1];
  t->n--;
}

/* The child pid ended with status: log it and forget it. */
static void ended(ldmd_children *t, pid_t pid, int status) {
  size_t i;

  for (i = 0; i < t->n; i++)
    if (t->v[i].pid == pid) {
      log_end(&t->v[i], status);
      drop(t, i);
      return;
    }
}

void ldmd_children_reap(ldmd_children *t) {
  for (;;) {
    int status;
    pid_t pid = waitpid(-1, &status, WNOHANG);

    if (pid > 0) {
      ended(t, pid, status);
      continue;
    }
    if (pid < 0 && errno == EINTR)
      continue;
    return;
  }
}

void ldmd_children_signal(const ldmd_children *t, int sig) {
  size_t i;

  for (i = 0; i < t->n; i++)
    (void)kill(t->v[i].pid, sig);
}

static int64_t mono_ms(void) {
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void ldmd_children_stop(ldmd_children *t, int grace_ms, const void *waitmask) {
  int64_t end = mono_ms() + grace_ms;
  size_t i;

  ldmd_children_signal(t, SIGTERM);
  ldmd_children_reap(t);
  while (t->n > 0 && mono_ms() < end) {
    struct timespec ts = {0, STOP_POLL_MS * 1000000L};

    /* SIGCHLD (let through by waitmask) cuts the nap short. */
    (void)pselect(0, NULL, NULL, NULL, &ts, (const sigset_t *)waitmask);
    ldmd_children_reap(t);
  }
  for (i = 0; i < t->n; i++) {
    log_warning("process %ld (%s) did not stop within %d ms: killing it",
                (long)t->v[i].pid, t->v[i].what, grace_ms);
    (void)kill(t->v[i].pid, SIGKILL);
  }
  while (t->n > 0) {
    int status;
    pid_t pid = waitpid(-1, &status, 0);

    if (pid > 0)
      ended(t, pid, status);
    else if (errno != EINTR)
      break;
  }
}

/* In the child of an EXEC, before execvp(). */
static void exec_child(const ldmd_conf_exec *e, const int *close_fds,
                       size_t nclose) {
  static const int dflt[] = {SIGPIPE, SIGCHLD, SIGALRM,
                             SIGINT,  SIGTERM, SIGHUP};
  sigset_t none;
  size_t i;

  for (i = 0; i < sizeof dflt / sizeof dflt[0]; i++)
    (void)signal(dflt[i], SIG_DFL);
  (void)signal(SIGUSR1, SIG_IGN);
  (void)signal(SIGUSR2, SIG_IGN);
  sigemptyset(&none);
  (void)sigprocmask(SIG_SETMASK, &none, NULL);
  for (i = 0; i < nclose; i++)
    (void)close(close_fds[i]);
  execvp(e->argv[0], e->argv);
  log_error("cannot run EXEC \"%s\" (%s:%u): execvp %s: %s", e->command,
            e->where.file, e->where.line, e->argv[0], strerror(errno));
  _exit(127);
}

int ldmd_children_exec(ldmd_children *t, const ldmd_conf_exec *e,
                       const int *close_fds, size_t nclose) {
  pid_t pid;

  fflush(NULL);
  pid = fork();
  if (pid < 0) {
    log_error("cannot start EXEC \"%s\": fork: %s", e->command,
              strerror(errno));
    return -1;
  }
  if (pid == 0)
    exec_child(e, close_fds, nclose);
  if (ldmd_children_add(t, pid, true, e->command) != 0) {
    log_error("cannot record EXEC'd process %ld: out of memory", (long)pid);
    return -1;
  }
  log_notice("started EXEC'd process %ld: %s", (long)pid, e->command);
  return 0;
}

void ldmd_children_free(ldmd_children *t) {
  free(t->v);
  memset(t, 0, sizeof *t);
}
