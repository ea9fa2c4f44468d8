/*
 * timecmd.c - run a command and write how long it ran, in nanoseconds, to
 * a file: from just before fork() to the end of waitpid().  For the shell
 * benchmarks: bash's `time` (or date before and after) also charges the
 * program for bash's own work on the command line, which for 20,000 file
 * names is about 25 ms here (pqutils_bench.sh prints it), a fifth of what
 * pqinsert itself takes for them.  Here that work is done before the clock
 * starts; the kernel's copy of the arguments into the new program is still
 * counted.
 *
 * usage: timecmd FILE command [argument ...]
 * Exit: the command's exit status (128 + signal if killed), 127 if it could
 * not be run, 125 on a usage or output error.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test/lib/tu_clock.h"

int main(int argc, char **argv) {
  if (argc < 3) {
    fputs("usage: timecmd FILE command [argument ...]\n", stderr);
    return 125;
  }
  long long start = tu_now_ns();
  pid_t pid = fork();
  if (pid < 0) {
    fprintf(stderr, "timecmd: fork: %s\n", strerror(errno));
    return 125;
  }
  if (pid == 0) {
    execvp(argv[2], argv + 2);
    fprintf(stderr, "timecmd: %s: %s\n", argv[2], strerror(errno));
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) {
      fprintf(stderr, "timecmd: waitpid: %s\n", strerror(errno));
      return 125;
    }
  long long ns = tu_now_ns() - start;
  FILE *f = fopen(argv[1], "w");
  if (f == NULL || fprintf(f, "%lld\n", ns) < 0 || fclose(f) != 0) {
    fprintf(stderr, "timecmd: cannot write %s\n", argv[1]);
    return 125;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
