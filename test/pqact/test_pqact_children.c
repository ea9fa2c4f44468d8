/*
 * test_pqact_children - pqact's children (pqutils/pqact/children.c) with
 * real processes: what a child gets (its standard input, a process group
 * of its own, default signal dispositions and an empty mask, no
 * descriptor of the parent's but 0-2, even one opened without
 * close-on-exec), a command that cannot be executed, reaping and its
 * callback, the cap (a capped spawn over it fails with EAGAIN, uncapped
 * ones still start, wait_slot returns once a capped child exits), waiting
 * for one child, and a stop ending both waits at once, whether it came
 * before or during the wait.  The cap's default is the registry's.
 *
 * The children that must run for a while block reading a pipe the test
 * holds, and end when it closes the pipe: no timing.  To report what it
 * got, a child runs this program again with "--report FILE".
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ldmd/site/registry.h"
#include "pqutils/common/cli.h"
#include "pqutils/pqact/children.h"
#include "pqutils/common/cli_io.h"
#include "test/lib/tu_clock.h"
#include "test/lib/tu_skip.h"

#define TU_TMPDIR_PREFIX "pqact_children"
#include "test/lib/tu_tmpdir.h"

static char self[4096]; /* this program, for --report */

/* --report FILE: this process's pid and process group, its descriptors,
 * its signal mask and the signals it ignores, one line each. */
static int report(const char *path) {
  FILE *f = fopen(path, "we"); /* close-on-exec: not listed below */
  if (f == NULL)
    return 1;
  fprintf(f, "pid %d pgrp %d\n", (int)getpid(), (int)getpgrp());
  DIR *d = opendir("/proc/self/fd");
  fprintf(f, "fds");
  struct dirent *e;
  while (d != NULL && (e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.')
      continue;
    int fd = atoi(e->d_name);
    if (fd != dirfd(d) && fd != fileno(f))
      fprintf(f, " %d", fd);
  }
  if (d != NULL)
    closedir(d);
  fprintf(f, "\nblocked");
  sigset_t mask;
  sigprocmask(SIG_BLOCK, NULL, &mask);
  for (int s = 1; s < NSIG; s++)
    if (sigismember(&mask, s) == 1)
      fprintf(f, " %d", s);
  fprintf(f, "\nignored");
  for (int s = 1; s < NSIG; s++) {
    struct sigaction sa;
    if (sigaction(s, NULL, &sa) == 0 && sa.sa_handler == SIG_IGN)
      fprintf(f, " %d", s);
  }
  fprintf(f, "\n");
  return fclose(f) == 0 ? 0 : 1;
}

/* A pipe whose read end a child blocks on until the write end is closed. */
struct gate {
  int r, w;
};
static struct gate gate_new(void) {
  int p[2];
  assert_int_equal(pipe2(p, O_CLOEXEC), 0);
  return (struct gate){p[0], p[1]};
}

/* A child that runs until its gate closes. */
static pid_t blocker(struct pqact_children *k, struct gate g, bool capped) {
  char *argv[] = {"cat", NULL};
  int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
  assert_true(devnull >= 0);
  int saved = dup(1); /* cat's output: /dev/null, not the test's */
  assert_true(saved >= 0);
  assert_int_equal(dup2(devnull, 1), 1);
  pid_t pid = pqact_children_spawn(k, argv, g.r, capped, NULL, NULL);
  assert_int_equal(dup2(saved, 1), 1);
  close(saved);
  close(devnull);
  return pid;
}

static struct {
  int calls;
  pid_t pid;
  int status;
} exits;

static void on_exit_cb(void *arg, pid_t pid, int status) {
  assert_ptr_equal(arg, &exits);
  exits.calls++;
  exits.pid = pid;
  exits.status = status;
}

/* Until pid has exited, without reaping it (the reap is the test's). */
static void until_exited(pid_t pid) {
  siginfo_t si;
  assert_int_equal(waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT), 0);
}

/* What a child gets from the set. */
static void test_child_gets(void **state) {
  (void)state;
  struct pqact_children *k = pqact_children_new(4);
  assert_non_null(k);

  /* its standard input is the given descriptor, and pqact keeps its own */
  int p[2];
  assert_int_equal(pipe2(p, O_CLOEXEC), 0);
  assert_int_equal(write(p[1], "hello\n", 6), 6);
  close(p[1]);
  char *cat[] = {"sh", "-c", "cat >in.out", NULL};
  pid_t pid = pqact_children_spawn(k, cat, p[0], true, NULL, NULL);
  assert_true(pid > 0);
  assert_true(fcntl(p[0], F_GETFD) >= 0);
  assert_int_equal(pqact_children_wait(k, pid), 0);
  close(p[0]);
  assert_string_equal(tu_slurp("in.out"), "hello\n");
  /* without one, /dev/null */
  pid = pqact_children_spawn(k, cat, -1, true, NULL, NULL);
  assert_true(pid > 0);
  assert_int_equal(pqact_children_wait(k, pid), 0);
  assert_string_equal(tu_slurp("in.out"), "");

  /* its own process group, no descriptor but 0-2 (not even one opened
   * without close-on-exec), nothing blocked or ignored, though the parent
   * blocks SIGUSR1 and ignores SIGPIPE and SIGHUP */
  int leak = open("leak", O_WRONLY | O_CREAT, 0600); /* no O_CLOEXEC */
  assert_true(leak > 2);
  sigset_t usr1, old;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  assert_int_equal(sigprocmask(SIG_BLOCK, &usr1, &old), 0);
  void (*old_pipe)(int) = signal(SIGPIPE, SIG_IGN);
  void (*old_hup)(int) = signal(SIGHUP, SIG_IGN);
  char *rep[] = {self, "--report", "report", NULL};
  pid = pqact_children_spawn(k, rep, -1, true, on_exit_cb, &exits);
  sigprocmask(SIG_SETMASK, &old, NULL);
  signal(SIGPIPE, old_pipe);
  signal(SIGHUP, old_hup);
  close(leak);
  assert_true(pid > 0);
  memset(&exits, 0, sizeof exits);
  assert_int_equal(pqact_children_wait(k, pid), 0);
  assert_int_equal(exits.calls, 1);
  assert_true(WIFEXITED(exits.status) && WEXITSTATUS(exits.status) == 0);
  char want[200];
  snprintf(want, sizeof want, "pid %d pgrp %d\nfds 0 1 2\nblocked\nignored\n",
           (int)pid, (int)pid);
  assert_string_equal(tu_slurp("report"), want);
  pqact_children_free(k);
}

/* Reaping: exits and deaths, each logged and told to on_exit once; a
 * command that does not exist is a child that exits 127. */
static void test_reap(void **state) {
  (void)state;
  struct pqact_children *k = pqact_children_new(0);
  assert_non_null(k);
  assert_int_equal(pqact_children_reap(k), 0); /* nothing to reap */
  struct {
    char *cmd[4];
    bool signaled;
    int code;
  } cases[] = {
      {{"sh", "-c", "exit 3", NULL}, false, 3},
      {{"sh", "-c", "kill -KILL $$", NULL}, true, SIGKILL},
      {{"no-such-command-for-pqact", NULL, NULL, NULL}, false, 127},
      {{"true", NULL, NULL, NULL}, false, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    memset(&exits, 0, sizeof exits);
    pid_t pid =
        pqact_children_spawn(k, cases[i].cmd, -1, false, on_exit_cb, &exits);
    assert_true(pid > 0);
    assert_int_equal(pqact_children_running(k, false), 1);
    assert_int_equal(pqact_children_running(k, true), 0);
    until_exited(pid);
    assert_int_equal(exits.calls, 0);
    assert_int_equal(pqact_children_reap(k), 1);
    assert_int_equal(exits.calls, 1);
    assert_int_equal(exits.pid, pid);
    if (cases[i].signaled) {
      assert_true(WIFSIGNALED(exits.status));
      assert_int_equal(WTERMSIG(exits.status), cases[i].code);
    } else {
      assert_true(WIFEXITED(exits.status));
      assert_int_equal(WEXITSTATUS(exits.status), cases[i].code);
    }
    assert_int_equal(pqact_children_running(k, false), 0);
    assert_int_equal(pqact_children_reap(k), 0);
    assert_int_equal(exits.calls, 1);
  }
  pqact_children_free(k);
}

/* The cap: EAGAIN over it, uncapped children not counted, wait_slot. */
static void test_cap(void **state) {
  (void)state;
  struct pqact_children *k = pqact_children_new(2);
  assert_non_null(k);
  struct gate g1 = gate_new(), g2 = gate_new(), g3 = gate_new();
  pid_t a = blocker(k, g1, true), b = blocker(k, g2, true);
  assert_true(a > 0 && b > 0);
  assert_true(pqact_children_full(k));
  char *never[] = {"sh", "-c", "echo ran >never.out", NULL};
  errno = 0;
  assert_int_equal(pqact_children_spawn(k, never, -1, true, NULL, NULL), -1);
  assert_int_equal(errno, EAGAIN);
  assert_int_equal(access("never.out", F_OK), -1);
  /* a long-running decoder is not counted */
  pid_t c = blocker(k, g3, false);
  assert_true(c > 0);
  assert_int_equal(pqact_children_running(k, true), 2);
  assert_int_equal(pqact_children_running(k, false), 3);
  /* no slot yet: a wait of 0 ms times out; then one exits */
  assert_int_equal(pqact_children_wait_slot(k, 0), 0);
  assert_int_equal(pqact_children_wait_slot(k, 20), 0);
  close(g3.w); /* the uncapped one ending frees no slot */
  until_exited(c);
  assert_int_equal(pqact_children_wait_slot(k, 20), 0);
  assert_int_equal(pqact_children_running(k, false), 2);
  close(g1.w);
  double t0 = tu_now_s();
  assert_int_equal(pqact_children_wait_slot(k, 30000), 1);
  assert_true(tu_now_s() - t0 < 30);
  assert_false(pqact_children_full(k));
  assert_int_equal(pqact_children_running(k, true), 1);
  pid_t d = pqact_children_spawn(k, never, -1, true, NULL, NULL);
  assert_true(d > 0);
  assert_int_equal(pqact_children_wait(k, d), 0);
  assert_string_equal(tu_slurp("never.out"), "ran\n");
  /* waiting for one child: it returns when that one exits */
  close(g2.w);
  assert_int_equal(pqact_children_wait(k, b), 0);
  assert_int_equal(pqact_children_running(k, false), 0);
  assert_int_equal(pqact_children_wait(k, b), 0); /* already reaped */
  close(g1.r);
  close(g2.r);
  close(g3.r);
  /* without a cap, never full */
  pqact_children_free(k);
  k = pqact_children_new(0);
  assert_false(pqact_children_full(k));
  assert_int_equal(pqact_children_wait_slot(k, -1), 1);
  pqact_children_free(k);
}

/* The cap's default is the registry's default for /pqact/max-children. */
static void test_default_cap(void **state) {
  (void)state;
  ldm_registry *reg = NULL;
  assert_int_equal(ldm_reg_open("no-registry.xml", &reg, NULL, 0), LDM_REG_OK);
  uint64_t v = 0;
  assert_int_equal(ldm_reg_get_uint(reg, REG_PQACT_MAX_CHILDREN, &v),
                   LDM_REG_OK);
  assert_int_equal(v, PQACT_CHILDREN_CAP);
  ldm_reg_close(reg);
}

/* A stop ends both waits at once, during the wait or before it.  Last:
 * a stop is for good. */
static void test_stop(void **state) {
  (void)state;
  struct pqact_children *k = pqact_children_new(1);
  assert_non_null(k);
  struct gate g = gate_new();
  pid_t a = blocker(k, g, true);
  assert_true(a > 0);
  cli_signals();
  /* during: a helper sends SIGTERM once this process sleeps in poll */
  char script[400];
  snprintf(script, sizeof script,
           "i=0; while [ $i -lt 2000 ]; do "
           "grep -q poll /proc/%d/wchan 2>/dev/null && "
           "exec kill -TERM %d; i=$((i+1)); sleep 0.01; done",
           (int)getpid(), (int)getpid());
  char *helper[] = {"sh", "-c", script, NULL};
  pid_t h = pqact_children_spawn(k, helper, -1, false, NULL, NULL);
  assert_true(h > 0);
  double t0 = tu_now_s();
  errno = 0;
  assert_int_equal(pqact_children_wait_slot(k, 60000), -1);
  assert_int_equal(errno, EINTR);
  assert_true(tu_now_s() - t0 < 30); /* the helper's bound: 20 s */
  assert_true(cli_io_stopping());
  /* before: every wait ends at once */
  t0 = tu_now_s();
  errno = 0;
  assert_int_equal(pqact_children_wait(k, a), -1);
  assert_int_equal(errno, EINTR);
  errno = 0;
  assert_int_equal(pqact_children_wait_slot(k, -1), -1);
  assert_int_equal(errno, EINTR);
  assert_true(tu_now_s() - t0 < 5);
  close(g.w);
  close(g.r);
  until_exited(a);
  until_exited(h);
  (void)pqact_children_reap(k);
  assert_int_equal(pqact_children_running(k, false), 0);
  pqact_children_free(k);
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "--report") == 0)
    return report(argv[2]);
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0)
    return 1;
  self[n] = '\0';
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_child_gets, tu_tmpdir_setup,
                                      tu_tmpdir_teardown),
      cmocka_unit_test_setup_teardown(test_reap, tu_tmpdir_setup,
                                      tu_tmpdir_teardown),
      cmocka_unit_test_setup_teardown(test_cap, tu_tmpdir_setup,
                                      tu_tmpdir_teardown),
      cmocka_unit_test_setup_teardown(test_default_cap, tu_tmpdir_setup,
                                      tu_tmpdir_teardown),
      cmocka_unit_test_setup_teardown(test_stop, tu_tmpdir_setup,
                                      tu_tmpdir_teardown),
  };
  return tu_exit_code(cmocka_run_group_tests(tests, NULL, NULL));
}
