/*
 * children.h - the child processes of the top-level ldmd: one per
 * connection, the programs of the EXEC entries and one requester per
 * REQUEST entry.  A table of their pids, what each is (for log lines when
 * it ends), reaping, forwarding of signals, supervision and the shutdown
 * that stops them all.
 *
 * SUPERVISION.  EXEC programs and requesters are tasks that ldmd keeps
 * running: when one dies it is started again after a delay that doubles
 * with each quick death in a row (restart_min, 2 x restart_min, ...) up to
 * restart_max, and falls back to restart_min once a run lasted
 * restart_max or more.  A requester is restarted however it ended (it
 * only ends by itself on a failure); an EXEC program that exits with
 * status 0 has finished its work and is not restarted (a script that
 * starts something in the background and returns must not be run again
 * and again), while one that exits non-zero or is killed by a signal is.
 * Nothing is restarted once the server stops.  Connection processes are
 * never restarted: their peer reconnects.
 *
 * Every child gets SIGTERM when the top-level process dies, whatever kills
 * it (prctl PR_SET_PDEATHSIG, set in the child right after fork), so no
 * requester or program outlives an ldmd killed with SIGKILL and races a
 * new one.  EXEC programs keep this across execve(2) (not set-uid ones).
 *
 * METRICS.  Connection and requester processes get a slot of the metrics
 * file (ldmd/metrics/metrics.h), claimed before fork(), bound to the pid
 * after it, and freed when the child is reaped; t->metrics NULL: none.
 *
 * The table lives in the top-level process only (a connection child gets a
 * copy of the connection pids for IS_ALIVE).  Children are signalled by pid,
 * never by process group, so ldmd started from a shell in the foreground
 * leaves the shell's other processes alone.  Not thread-safe.
 */
#ifndef LDMD_SERVER_CHILDREN_H
#define LDMD_SERVER_CHILDREN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ldmd/metrics/metrics.h"
#include "ldmd/site/ldmd_conf.h"

enum ldmd_child_kind {
  LDMD_CHILD_CONN = 0,  /**< serves one accepted connection */
  LDMD_CHILD_EXEC,      /**< the program of an EXEC entry */
  LDMD_CHILD_REQUESTER, /**< the requester of a REQUEST entry */
  LDMD_CHILD_METRICS,   /**< the HTTP server of the live figures */
  LDMD_CHILD_HUB,       /**< the feed hub (hub.h) */
};

typedef struct ldmd_child {
  pid_t pid;
  enum ldmd_child_kind kind;
  size_t task;    /**< its task (EXEC, REQUESTER, METRICS) */
  int mslot;      /**< its slot of the metrics file, or -1 */
  char what[160]; /**< the command, request or peer, for messages */
} ldmd_child;

/** A task: an EXEC or REQUEST entry that ldmd keeps running. */
typedef struct ldmd_task {
  enum ldmd_child_kind kind; /**< LDMD_CHILD_EXEC, _REQUESTER, _METRICS, _HUB */
  const void *entry; /**< its ldm_conf_exec or ldm_conf_request, or NULL */
  char what[160];
  pid_t pid;          /**< running process, or 0 */
  int64_t started_ms; /**< when the last run started (monotonic) */
  int64_t due_ms;     /**< when to start it again (pid 0, !done) */
  unsigned quick;     /**< quick deaths in a row: the backoff's exponent */
  bool done;          /**< finished for good: not to be started again */
  int mslot;          /**< the running process's metrics slot, or -1 */
} ldmd_task;

/**
 * In a new child process, the body of a requester or metrics task: must
 * not return (it exits).  arg is ldmd_supervision.arg.
 */
typedef void ldmd_task_main(void *arg, const ldmd_task *task);

/** How tasks are run. */
typedef struct ldmd_supervision {
  int restart_min_ms;   /**< the first restart delay */
  int restart_max_ms;   /**< its bound */
  const int *close_fds; /**< descriptors an EXEC'd program must not get */
  size_t nclose;
  ldmd_task_main *task_main; /**< requester and metrics tasks */
  void *arg;
} ldmd_supervision;

typedef struct ldmd_children {
  ldmd_child *v;
  size_t n, cap;
  size_t nconn; /**< connection children among them */
  ldmd_task *tasks;
  size_t ntasks;
  ldmd_supervision sup;
  bool stopping;      /**< no more restarts */
  ldmm_file *metrics; /**< slots for the children, or NULL */
  /** Called when a connection child has been reaped (or NULL): what the
   *  server recorded for it goes (feeds.h). */
  void (*conn_ended)(void *arg, pid_t pid);
  void *conn_ended_arg;
} ldmd_children;

/** Record a connection child, with its metrics slot (or -1), which is
 *  released when it is reaped.  @return 0, or -1 when out of memory */
int ldmd_children_add(ldmd_children *t, pid_t pid, const char *what, int mslot);

/** How many tasks of that kind have a process running now. */
size_t ldmd_children_running(const ldmd_children *t, enum ldmd_child_kind kind);

/** The connection children recorded with `what` (their peer's address):
 *  the per-address limit of the accept loop (ldmd.c). */
size_t ldmd_children_conn_from(const ldmd_children *t, const char *what);

/** The pids of the connection children, in a new array (NULL if none or
 *  out of memory); *n is set to their number. */
pid_t *ldmd_children_conn_pids(const ldmd_children *t, size_t *n);

/**
 * Collect every child that ended, without waiting, log how it ended (a
 * crash of a connection child is an ERROR; it ends nothing else), and
 * schedule the restart of a task that should run again.
 */
void ldmd_children_reap(ldmd_children *t);

/** Send sig to every child. */
void ldmd_children_signal(const ldmd_children *t, int sig);

/**
 * Stop every child: no more restarts, SIGTERM, up to grace_ms for them to
 * end, then SIGKILL for those left (logged).  Returns when all are
 * reaped.  Expects SIGCHLD blocked; waits with the signal mask `waitmask`
 * (which should let SIGCHLD through).
 */
void ldmd_children_stop(ldmd_children *t, int grace_ms, const void *waitmask);

/** Set how tasks run; before the first ldmd_children_task(). */
void ldmd_children_supervise(ldmd_children *t, const ldmd_supervision *sup);

/**
 * Add a task and start it now.  An EXEC'd program gets, before execvp(3),
 * default dispositions for SIGPIPE, SIGCHLD, SIGALRM, SIGINT, SIGTERM and
 * SIGHUP, SIGUSR1 and SIGUSR2 ignored (as LDM), no signal blocked, and the
 * descriptors sup.close_fds closed.  A requester or metrics task runs
 * sup.task_main; a requester gets a metrics slot (task->mslot).
 * @param entry  an ldm_conf_exec (EXEC) or ldm_conf_request (REQUESTER),
 *               which must outlive the table, or NULL (METRICS)
 * @return 0, or -1 when out of memory (a failed fork is logged and retried
 *         like a death)
 */
int ldmd_children_task(ldmd_children *t, enum ldmd_child_kind kind,
                       const void *entry, const char *what);

/**
 * Start the tasks whose restart is due.
 * @return milliseconds until the next restart is due, or -1 if none waits
 */
int ldmd_children_restart_due(ldmd_children *t);

void ldmd_children_free(ldmd_children *t);

/**
 * Seconds a child of ours (connection, requester) has to end by itself
 * after SIGTERM: one more than the top-level's grace before SIGKILL
 * (LDMD_STOP_GRACE_MS), so that ldmd normally kills a straggler first and
 * logs it, and a child whose ldmd is gone (killed: the child got SIGTERM
 * from PR_SET_PDEATHSIG) still ends.  A stop is thus bounded whatever a
 * child is doing, a regexec() that checks no flag included
 * (docs/security.md, "Patterns from peers").
 */
#define LDMD_STOP_GRACE_MS 2000
#define LDMD_CHILD_STOP_S 3

/**
 * In a child's SIGTERM handler (async-signal-safe): SIGALRM, whose action
 * in our children is the default one (the process ends), comes
 * LDMD_CHILD_STOP_S seconds from now unless the process has exited.
 */
void ldmd_child_stop_due(void);

/**
 * In a child right after fork(): get SIGTERM when the process that forked
 * it (parent, its pid taken before fork()) dies; exit at once if it
 * already has.
 */
void ldmd_child_follow_parent(pid_t parent);

#endif /* LDMD_SERVER_CHILDREN_H */
