/*
 * exec.c - the EXEC action (exec.h): its option, and starting its command
 * through children.c, waiting for a slot under the cap first when the cap
 * is reached, and for the command's exit with -wait.
 */
#include "pqutils/pqact/exec.h"

#include <errno.h>
#include <string.h>

#include "ldmd/site/log.h"
#include "pqutils/pqact/conf.h"
#include "pqutils/pqact/options.h"
#include "pqutils/pqact/subst.h"

enum { OPT_WAIT = PQACT_OPT_BIT(PQACT_OPT_WAIT) }; /* options.h */

int pqact_exec_action(struct pqact_children *k, int argc, char **argv) {
  unsigned flags;
  int first =
      pqact_decode_options(PQACT_EXEC, argc, argv, &flags, NULL, NULL, NULL);
  if (first >= argc) {
    log_error("EXEC: no command");
    return -1;
  }
  char *args[PQACT_MAX_ARGS + 1]; /* execvp's, with its NULL */
  int n = argc - first;
  memcpy(args, argv + first, (size_t)n * sizeof args[0]);
  args[n] = NULL;
  pid_t pid;
  while ((pid = pqact_children_spawn(k, args, -1, true, NULL, NULL)) < 0) {
    if (errno != EAGAIN || !pqact_children_full(k)) {
      log_error("cannot start \"%s\": %s", args[0], strerror(errno));
      return -1;
    }
    if (pqact_children_wait_slot(k, -1) < 0) {
      log_notice("stopped while \"%s\" waited for a child to exit", args[0]);
      return -1;
    }
  }
  if ((flags & OPT_WAIT) && pqact_children_wait(k, pid) != 0) {
    log_notice("stopped while waiting for child %d (%s) to exit", (int)pid,
               args[0]);
    return -1;
  }
  return 0;
}
