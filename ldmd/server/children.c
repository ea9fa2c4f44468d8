/*
 * children.c - the top-level ldmd's child processes: the table, starting
 * EXEC programs and requesters, reaping and logging their ends, restarting
 * the tasks that died after a bounded, growing delay, and stopping them
 * all at shutdown (see children.h).
 */
#include "ldmd/server/children.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ldmd/server/clock.h"
#include "ldmd/server/notify.h"
#include "ldmd/site/log.h"

#define STOP_POLL_MS 50
#define MAX_SHIFT 20 /* restart_min << 20 is past any sane restart_max */

static const char *kind_name(enum ldmd_child_kind kind) {
  switch (kind) {
  case LDMD_CHILD_EXEC:
    return "EXEC'd process";
  case LDMD_CHILD_REQUESTER:
    return "requester process";
  case LDMD_CHILD_METRICS:
    return "metrics server process";
  case LDMD_CHILD_HUB:
    return "feed hub process";
  default:
    return "connection process";
  }
}

void ldmd_child_stop_due(void) {
  unsigned left = alarm(LDMD_CHILD_STOP_S);

  if (left > 0 && left < LDMD_CHILD_STOP_S) /* a second SIGTERM: no later */
    (void)alarm(left);
}

void ldmd_child_follow_parent(pid_t parent) {
  (void)prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != parent) /* it died before prctl took effect */
    _exit(0);
}

/* Record a child of any kind.  @return 0 or -1 (out of memory) */
static int add(ldmd_children *t, pid_t pid, enum ldmd_child_kind kind,
               size_t task, const char *what, int mslot) {
  if (t->n == t->cap) {
    size_t cap = t->cap == 0 ? 16 : t->cap * 2;
    ldmd_child *v = realloc(t->v, cap * sizeof *v);

    if (v == NULL)
      return -1;
    t->v = v;
    t->cap = cap;
  }
  t->v[t->n].pid = pid;
  t->v[t->n].kind = kind;
  t->v[t->n].task = task;
  t->v[t->n].mslot = mslot;
  snprintf(t->v[t->n].what, sizeof t->v[t->n].what, "%s", what);
  t->n++;
  if (kind == LDMD_CHILD_CONN)
    t->nconn++;
  return 0;
}

int ldmd_children_add(ldmd_children *t, pid_t pid, const char *what,
                      int mslot) {
  return add(t, pid, LDMD_CHILD_CONN, 0, what, mslot);
}

size_t ldmd_children_running(const ldmd_children *t,
                             enum ldmd_child_kind kind) {
  size_t i, n = 0;

  for (i = 0; i < t->ntasks; i++)
    if (t->tasks[i].kind == kind && t->tasks[i].pid > 0)
      n++;
  return n;
}

size_t ldmd_children_conn_from(const ldmd_children *t, const char *what) {
  size_t i, k = 0;

  for (i = 0; i < t->n; i++)
    if (t->v[i].kind == LDMD_CHILD_CONN && strcmp(t->v[i].what, what) == 0)
      k++;
  return k;
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
    if (t->v[i].kind == LDMD_CHILD_CONN)
      v[k++] = t->v[i].pid;
  *n = k;
  return v;
}

static void log_end(const ldmd_child *c, int status) {
  const char *kind = kind_name(c->kind);

  if (WIFEXITED(status)) {
    int code = WEXITSTATUS(status);

    if (c->kind != LDMD_CHILD_CONN)
      log_notice("%s %ld (%s) exited with status %d", kind, (long)c->pid,
                 c->what, code);
    else if (code != 0)
      log_info("%s %ld (%s) exited with status %d", kind, (long)c->pid, c->what,
               code);
    else
      log_debug("%s %ld (%s) ended", kind, (long)c->pid, c->what);
  } else if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);

    /* SIGALRM: still busy LDMD_CHILD_STOP_S s after SIGTERM. */
    if (sig == SIGTERM || sig == SIGKILL || sig == SIGINT || sig == SIGALRM)
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
  if (t->v[i].kind == LDMD_CHILD_CONN)
    t->nconn--;
  t->v[i] = t->v[t->n - 1];
  t->n--;
}

/* When should a task that ended after running ran_ms start again?  The
 * delay doubles with each quick death in a row, up to restart_max. */
static int backoff(ldmd_children *t, ldmd_task *k, int64_t ran_ms) {
  const ldmd_supervision *s = &t->sup;
  int64_t delay;

  if (ran_ms >= s->restart_max_ms)
    k->quick = 0;
  delay = (int64_t)s->restart_min_ms
          << (k->quick < MAX_SHIFT ? k->quick : MAX_SHIFT);
  if (delay > s->restart_max_ms)
    delay = s->restart_max_ms;
  if (k->quick < MAX_SHIFT)
    k->quick++;
  return (int)delay;
}

/* Task k's process ended with status (or never started: status -1). */
static void schedule(ldmd_children *t, ldmd_task *k, int status) {
  int64_t now = ldmd_now_ms();
  int delay;

  k->pid = 0;
  if (t->stopping)
    return;
  if (k->kind == LDMD_CHILD_EXEC && status != -1 && WIFEXITED(status) &&
      WEXITSTATUS(status) == 0) {
    k->done = true;
    log_notice("EXEC'd program finished (%s): not restarted", k->what);
    return;
  }
  delay = backoff(t, k, now - k->started_ms);
  k->due_ms = now + delay;
  log_notice("restarting %s (%s) in %d ms", kind_name(k->kind), k->what, delay);
}

/* The child pid ended with status: log it, forget it, maybe restart. */
static void ended(ldmd_children *t, pid_t pid, int status) {
  size_t i;

  for (i = 0; i < t->n; i++)
    if (t->v[i].pid == pid) {
      ldmd_child c = t->v[i];

      log_end(&c, status);
      drop(t, i);
      ldmm_release(t->metrics, c.mslot);
      if (c.kind == LDMD_CHILD_CONN && t->conn_ended != NULL)
        t->conn_ended(t->conn_ended_arg, pid);
      if (c.kind != LDMD_CHILD_CONN && c.task < t->ntasks &&
          t->tasks[c.task].pid == pid)
        schedule(t, &t->tasks[c.task], status);
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

void ldmd_children_stop(ldmd_children *t, int grace_ms, const void *waitmask) {
  int64_t end = ldmd_now_ms() + grace_ms;
  size_t i;

  t->stopping = true;
  ldmd_children_signal(t, SIGTERM);
  ldmd_children_reap(t);
  while (t->n > 0 && ldmd_now_ms() < end) {
    struct timespec ts = {0, STOP_POLL_MS * 1000000L};

    /* SIGCHLD (let through by waitmask) cuts the nap short. */
    (void)pselect(0, NULL, NULL, NULL, &ts, (const sigset_t *)waitmask);
    ldmd_children_reap(t);
  }
  for (i = 0; i < t->n; i++) {
    log_warning("%s %ld (%s) did not stop within %d ms of SIGTERM: killing "
                "it (SIGKILL)",
                kind_name(t->v[i].kind), (long)t->v[i].pid, t->v[i].what,
                grace_ms);
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
static void exec_child(const ldm_conf_exec *e, const int *close_fds,
                       size_t nclose) {
  static const int dflt[] = {SIGPIPE, SIGCHLD, SIGALRM,
                             SIGINT,  SIGTERM, SIGHUP};
  sigset_t none;
  size_t i;

  ldmd_notify_child();
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

/* Start task i now. */
static void spawn(ldmd_children *t, size_t i) {
  ldmd_task *k = &t->tasks[i];
  pid_t parent = getpid(), pid;

  k->started_ms = ldmd_now_ms();
  k->mslot = k->kind == LDMD_CHILD_REQUESTER ? ldmm_claim(t->metrics) : -1;
  fflush(NULL);
  pid = fork();
  if (pid < 0) {
    log_error("cannot start %s (%s): fork: %s", kind_name(k->kind), k->what,
              strerror(errno));
    ldmm_release(t->metrics, k->mslot);
    schedule(t, k, -1);
    return;
  }
  if (pid == 0) {
    ldmd_child_follow_parent(parent);
    if (k->kind == LDMD_CHILD_EXEC)
      exec_child(k->entry, t->sup.close_fds, t->sup.nclose);
    t->sup.task_main(t->sup.arg, k);
    _exit(1); /* not reached */
  }
  k->pid = pid;
  ldmm_bind(t->metrics, k->mslot, pid);
  if (add(t, pid, k->kind, i, k->what, k->mslot) != 0)
    log_error("cannot record %s %ld: out of memory", kind_name(k->kind),
              (long)pid);
  log_notice("started %s %ld: %s", kind_name(k->kind), (long)pid, k->what);
}

void ldmd_children_supervise(ldmd_children *t, const ldmd_supervision *sup) {
  t->sup = *sup;
  if (t->sup.restart_min_ms < 1)
    t->sup.restart_min_ms = 1;
  if (t->sup.restart_max_ms < t->sup.restart_min_ms)
    t->sup.restart_max_ms = t->sup.restart_min_ms;
}

int ldmd_children_task(ldmd_children *t, enum ldmd_child_kind kind,
                       const void *entry, const char *what) {
  ldmd_task *v = realloc(t->tasks, (t->ntasks + 1) * sizeof *v);

  if (v == NULL) {
    log_error("cannot start %s (%s): out of memory", kind_name(kind), what);
    return -1;
  }
  t->tasks = v;
  memset(&v[t->ntasks], 0, sizeof v[t->ntasks]);
  v[t->ntasks].kind = kind;
  v[t->ntasks].entry = entry;
  snprintf(v[t->ntasks].what, sizeof v[t->ntasks].what, "%s", what);
  t->ntasks++;
  spawn(t, t->ntasks - 1);
  return 0;
}

int ldmd_children_restart_due(ldmd_children *t) {
  int64_t now = ldmd_now_ms(), next = -1;
  size_t i;

  if (t->stopping)
    return -1;
  for (i = 0; i < t->ntasks; i++) {
    ldmd_task *k = &t->tasks[i];

    if (k->pid != 0 || k->done)
      continue;
    if (k->due_ms <= now) {
      spawn(t, i);
      now = ldmd_now_ms();
      continue;
    }
    if (next < 0 || k->due_ms - now < next)
      next = k->due_ms - now;
  }
  return (int)next;
}

void ldmd_children_free(ldmd_children *t) {
  free(t->v);
  free(t->tasks);
  memset(t, 0, sizeof *t);
}
