/* TEMPORARY stand-in for testing decoder.c; replaced by the real one. */
#include "pqutils/pqact/children.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ldmd/site/log.h"

struct kid {
  pid_t pid;
  bool capped;
  pqact_child_exit_fn *fn;
  void *arg;
};
struct pqact_children {
  struct kid k[4096];
  unsigned n, cap;
};
struct pqact_children *pqact_children_new(unsigned cap) {
  struct pqact_children *k = calloc(1, sizeof *k);
  if (k)
    k->cap = cap;
  return k;
}
void pqact_children_free(struct pqact_children *k) {
  free(k);
}
unsigned pqact_children_running(const struct pqact_children *k, bool c) {
  unsigned n = 0;
  for (unsigned i = 0; i < k->n; i++)
    n += !c || k->k[i].capped;
  return n;
}
pid_t pqact_children_spawn(struct pqact_children *k, char *const argv[],
                           int stdin_fd, bool capped,
                           pqact_child_exit_fn *on_exit, void *arg) {
  if (capped && k->cap && pqact_children_running(k, true) >= k->cap) {
    errno = EAGAIN;
    return -1;
  }
  pid_t pid = fork();
  if (pid < 0)
    return -1;
  if (pid == 0) {
    setpgid(0, 0);
    signal(SIGPIPE, SIG_DFL);
    if (stdin_fd >= 0)
      dup2(stdin_fd, 0);
    closefrom(3);
    execvp(argv[0], argv);
    _exit(127);
  }
  k->k[k->n++] = (struct kid){pid, capped, on_exit, arg};
  return pid;
}
unsigned pqact_children_reap(struct pqact_children *k) {
  unsigned r = 0;
  int st;
  pid_t pid;
  while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
    for (unsigned i = 0; i < k->n; i++)
      if (k->k[i].pid == pid) {
        struct kid c = k->k[i];
        k->k[i] = k->k[--k->n];
        if (c.fn)
          c.fn(c.arg, pid, st);
        r++;
        break;
      }
  }
  return r;
}
int pqact_children_wait(struct pqact_children *k, pid_t pid) {
  (void)k;
  (void)pid;
  return 0;
}
int pqact_children_wait_slot(struct pqact_children *k, int t) {
  (void)k;
  (void)t;
  return 1;
}
