/*
 * children.h - the child processes of the top-level ldmd: one per
 * connection, and the programs of the EXEC entries.  A table of their
 * pids, what each is (for log lines when it ends), reaping, forwarding of
 * signals, and the shutdown that stops them all.
 *
 * The table lives in the top-level process only (a connection child gets a
 * copy of the connection pids for IS_ALIVE).  Children are signalled by pid,
 * never by process group, so ldmd started from a shell in the foreground
 * leaves the shell's other processes alone.  Not thread-safe.
 */
#ifndef LDMD_CHILDREN_H
#define LDMD_CHILDREN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "ldmd/ldmd_conf.h"

typedef struct ldmd_child {
  pid_t pid;
  bool exec;      /**< an EXEC entry's program, else a connection */
  char what[160]; /**< the command or the peer, for messages */
} ldmd_child;

typedef struct ldmd_children {
  ldmd_child *v;
  size_t n, cap;
  size_t nconn; /**< connection children among them */
} ldmd_children;

/** Record a child.  @return 0, or -1 when out of memory */
int ldmd_children_add(ldmd_children *t, pid_t pid, bool exec, const char *what);

/** The pids of the connection children, in a new array (NULL if none or
 *  out of memory); *n is set to their number. */
pid_t *ldmd_children_conn_pids(const ldmd_children *t, size_t *n);

/** Collect every child that ended, without waiting, and log how it ended
 *  (a crash of a connection child is an ERROR; it ends nothing else). */
void ldmd_children_reap(ldmd_children *t);

/** Send sig to every child. */
void ldmd_children_signal(const ldmd_children *t, int sig);

/**
 * Stop every child: SIGTERM, up to grace_ms for them to end, then SIGKILL
 * for those left (logged).  Returns when all are reaped.  Expects SIGCHLD
 * blocked; waits with the signal mask `waitmask` (which should let SIGCHLD
 * through).
 */
void ldmd_children_stop(ldmd_children *t, int grace_ms, const void *waitmask);

/**
 * Start the program of an EXEC entry: in the child, default dispositions
 * for SIGPIPE, SIGCHLD, SIGALRM, SIGINT and SIGTERM, SIGUSR1 and SIGUSR2
 * ignored (as LDM), no signal blocked, the descriptors close_fds closed,
 * then execvp(3).
 * @return 0, or -1 (logged)
 */
int ldmd_children_exec(ldmd_children *t, const ldmd_conf_exec *e,
                       const int *close_fds, size_t nclose);

void ldmd_children_free(ldmd_children *t);

#endif /* LDMD_CHILDREN_H */
