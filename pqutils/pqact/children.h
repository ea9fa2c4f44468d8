/*
 * children.h - the processes pqact starts: EXEC's commands and the
 * decoders of PIPE, SPIPE and XPIPE.  As LDM's pqact (our
 * pqutils/pqact/pqact.1): the command is found through PATH (execvp),
 * each child leads a process group of its own, its standard input is the
 * pipe it is given or /dev/null, its standard output and error are
 * pqact's, and no other descriptor of pqact's leaks into it; at exit
 * pqact does not wait for its children.  Exits are logged as LDM logs
 * them, in LDM's words and case: "Child N exited with status S" (a
 * warning unless S is 0) and "Child N terminated by signal S" (a
 * warning), each followed by the command in parentheses.
 *
 * Better than LDM's: a cap on the children that come and go (EXEC and
 * `PIPE -close`), so that catching up after downtime cannot fork
 * thousands of processes (LDM issue #34).  Long-running decoders are not
 * counted.  Over the cap, pqact_children_wait_slot() waits for one to exit.
 *
 * Waits end at once on a stop (pqutils/common/cli_io.h).  One set per process
 * (children are reaped with waitpid(-1)); not thread-safe.
 */
#ifndef PQACT_CHILDREN_H
#define PQACT_CHILDREN_H

#include <stdbool.h>
#include <sys/types.h>

/* The cap when the registry does not set /pqact/max-children. */
#define PQACT_CHILDREN_CAP 32

struct pqact_children;

/* Called from pqact_children_reap() when a child of the set has exited;
 * status as waitpid() gives it. */
typedef void pqact_child_exit_fn(void *arg, pid_t pid, int status);

/** An empty set whose capped children are at most cap (0: no cap).
 *  NULL if out of memory. */
struct pqact_children *pqact_children_new(unsigned cap);

/** Forget the set; its children run on (LDM's pqact does not wait). */
void pqact_children_free(struct pqact_children *k);

/**
 * Start a child running argv (argv[0] through PATH).
 * @param stdin_fd  its standard input (-1: /dev/null); pqact keeps its own
 * @param capped    counts against the cap (EXEC, PIPE -close)
 * @param on_exit   called when it has been reaped (NULL: nothing)
 * @return its pid; -1 with errno: EAGAIN when capped and the cap is
 *         reached (wait for a slot, then try again), or fork's errno.
 *         A command that cannot be executed is a child that exits with
 *         status 127 after logging why.
 */
pid_t pqact_children_spawn(struct pqact_children *k, char *const argv[],
                           int stdin_fd, bool capped,
                           pqact_child_exit_fn *on_exit, void *arg);

/** Reap every child that has exited, without waiting; log each and call
 *  its on_exit.  @return how many were reaped */
unsigned pqact_children_reap(struct pqact_children *k);

/**
 * Wait for pid to exit (EXEC -wait), reaping it.  Ends early on a stop.
 * @return 0 when it has been reaped, -1 with errno EINTR on a stop
 */
int pqact_children_wait(struct pqact_children *k, pid_t pid);

/**
 * Wait, reaping, until a capped child may be started, the wait lasts
 * timeout_ms (-1: no limit) or a stop comes.
 * @return 1 a slot is free, 0 timed out, -1 with errno EINTR on a stop
 */
int pqact_children_wait_slot(struct pqact_children *k, int timeout_ms);

/** How many children of the set are running (capped ones only, or all). */
unsigned pqact_children_running(const struct pqact_children *k,
                                bool capped_only);

/** Is the cap reached (so that a capped spawn's EAGAIN is the cap's, not
 *  fork's)?  Always false without a cap. */
bool pqact_children_full(const struct pqact_children *k);

/**
 * End a child pqact gives up on (a decoder that read nothing for -t):
 * SIGTERM now to its process group (to pid alone if it left the group),
 * then, if it has not been reaped grace_ms later, SIGKILL the same way
 * (logged as a warning), sent by pqact_children_reap().  Nothing if pid
 * is not a running child of the set.  Safe from pid reuse: a child is
 * signalled only while it is unreaped.
 */
void pqact_children_terminate(struct pqact_children *k, pid_t pid,
                              int grace_ms);

/** Milliseconds until pqact_children_reap() has a SIGKILL to send or a
 *  killed child to look for (0: now); -1 if none. */
int pqact_children_due_ms(const struct pqact_children *k);

#endif /* PQACT_CHILDREN_H */
