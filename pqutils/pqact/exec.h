/*
 * exec.h - pqact's EXEC action, as LDM's pqact (LDM's
 * html/basics/pqact.conf.html; our pqutils/pqact/pqact.1):
 * `EXEC [-wait] command args...` starts the command (found through PATH)
 * with no channel to pqact: its standard input is /dev/null, its output
 * and errors are pqact's (children.h says what else it gets).  -wait,
 * known by its first two letters like every option, makes pqact wait for
 * the command to exit before it goes on; a stop ends that wait.
 *
 * Better than LDM's: EXEC's children count against the cap of children.h
 * (/pqact/max-children).  Over it, the product waits until a child exits
 * and its command then runs: nothing is dropped.
 *
 * Logs through ldmd/site/log.h; not thread-safe.
 */
#ifndef PQACT_EXEC_H
#define PQACT_EXEC_H

#include "pqutils/pqact/children.h"

/**
 * Do an EXEC action.
 * @param argv  the substituted arguments (argc of them)
 * @return 0 once the command is started (with -wait: has exited, whatever
 *         its status); -1 after logging what failed: no command, fork
 *         failed, or a stop ended a wait
 */
int pqact_exec_action(struct pqact_children *k, int argc, char **argv);

#endif /* PQACT_EXEC_H */
