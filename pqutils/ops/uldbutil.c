/*
 * uldbutil - LDM's utility for the upstream LDM database: list the
 * processes of the running server that feed a downstream (FEEDME) or send
 * it notifications (NOTIFYME), one a line, "pid protoVers type host
 * product-class" as LDM's prints them, with LDM's exit codes.  This file
 * owns the command line and that listing; the manual is
 * pqutils/ops/uldbutil.1.
 *
 * Our ldmd's upstream database (ldmd/server/feeds.h) lives in memory that
 * only the server's own processes map; what a process outside can see of
 * it is in ldmd's figures file (docs/metrics.md), where each connection
 * process writes its kind, its peer and the class it serves: that is what
 * is listed.  The file is found as pqmon finds it: the registry's
 * /metrics/live-path, else the queue's path with ".metrics".  -d, which
 * deletes LDM's database (a System V segment a crashed server could leave
 * behind), has nothing to delete here: the table is made at each start
 * and goes with the server.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "ldmd/metrics/metrics.h"
#include "ldmd/site/log.h"
#include "pqutils/common/cli.h"

/* LDM's exit codes. */
#define EXIT_USAGE 1
#define EXIT_NO_DB 2     /* the database does not exist: no server */
#define EXIT_NO_ACCESS 3 /* it exists but cannot be read */

static const char usage_text[] =
    "usage: uldbutil [options]      list the upstream LDM database\n"
    "       uldbutil -d             delete it (nothing to delete here)\n"
    "options:\n"
    "  -q queue     the server's queue (default: the registry's\n"
    "               /queue/path): its figures file is <queue>.metrics\n"
    "               unless the registry's /metrics/live-path names one\n"
    "  -l dest      log to dest: \"\" syslog, \"-\" stderr, or a file\n"
    "  -v           verbose\n"
    "  -x           debug\n"
    "  -h           print this text\n"
    "Lines: pid protoVers type host product-class\n";

struct opts {
  bool delete_db; /* -d */
};

static int option(struct cli *c, int ch, const char *arg, void *p) {
  struct opts *o = p;

  (void)c;
  (void)arg;
  if (ch == 'd')
    o->delete_db = true;
  return 0;
}

static int operands(struct cli *c, int argc, char **argv, void *p) {
  (void)p;
  if (optind < argc) {
    cli_usage_error(c, usage_text, "unexpected argument %s", argv[optind]);
    return -1;
  }
  return 0;
}

static const struct cli_spec spec = {":dq:l:vxh", usage_text, option, operands};

/* Is the process that made the file still there? */
static bool alive(pid_t pid) {
  return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

/* The host of a peer "name (address)": the name, which is the address
 * when it had none. */
static void host_of(const char *peer, char *buf, size_t len) {
  const char *paren = strstr(peer, " (");
  size_t n = paren != NULL ? (size_t)(paren - peer) : strlen(peer);

  if (n >= len)
    n = len - 1;
  memcpy(buf, peer, n);
  buf[n] = '\0';
  if (n == 0)
    snprintf(buf, len, "(unknown)");
}

static int by_pid(const void *a, const void *b) {
  const ldmm_conn_copy *x = a, *y = b;

  return (x->pid > y->pid) - (x->pid < y->pid);
}

/* Where the figures are: the registry's path, or the queue's default. */
static int figures_path(struct cli *c, char *buf, size_t len) {
  const char *queue;

  if (cli_reg_string(c, REG_METRICS_PATH, buf, len) != 0)
    return -1;
  if (buf[0] != '\0')
    return 0;
  queue = cli_queue_path(c);
  if (queue == NULL)
    return -1;
  if (ldmm_default_path(queue, buf, len) != 0) {
    log_error("the queue's path is too long: %s", queue);
    return -1;
  }
  return 0;
}

static int list(struct cli *c) {
  char path[LDMM_PATH_MAX], err[LDMM_PATH_MAX + 256];
  ldmm_snapshot snap;
  ldmm_file *f;
  size_t i;

  if (figures_path(c, path, sizeof path) != 0)
    return EXIT_NO_ACCESS;
  if (access(path, F_OK) != 0 && errno == ENOENT) {
    log_error("the upstream LDM database doesn't exist: no %s (the LDM "
              "server is not running, or runs with /metrics/enable FALSE)",
              path);
    return EXIT_NO_DB;
  }
  f = ldmm_open(path, err, sizeof err);
  if (f == NULL) {
    log_error("the upstream LDM database exists but cannot be read: %s", err);
    return EXIT_NO_ACCESS;
  }
  memset(&snap, 0, sizeof snap);
  if (ldmm_snapshot_take(f, &snap) != 0) {
    log_error("cannot read %s: %s", path, strerror(ENOMEM));
    ldmm_close(f, false);
    return EXIT_NO_ACCESS;
  }
  ldmm_close(f, false);
  if (!alive(snap.pid)) {
    log_error("the upstream LDM database doesn't exist: the LDM server "
              "(pid %ld) that made %s is gone",
              (long)snap.pid, path);
    ldmm_snapshot_free(&snap);
    return EXIT_NO_DB;
  }
  qsort(snap.conns, snap.nconns, sizeof snap.conns[0], by_pid);
  for (i = 0; i < snap.nconns; i++) {
    const ldmm_conn_copy *k = &snap.conns[i];
    char host[LDMM_PEER_MAX];

    if (!ldmm_kind_feeds(k->kind))
      continue;
    host_of(k->peer, host, sizeof host);
    printf("%ld 6 %s %s %s\n", (long)k->pid,
           k->kind == LDMM_KIND_NOTIFYME ? "notifier" : "feeder", host,
           k->feed[0] != '\0' ? k->feed : "(not yet known)");
  }
  ldmm_snapshot_free(&snap);
  if (fflush(stdout) != 0) {
    log_error("cannot write the list: %s", strerror(errno));
    return EXIT_NO_ACCESS;
  }
  return 0;
}

int main(int argc, char **argv) {
  struct cli c;
  struct opts o = {0};
  int rc = cli_parse(&c, argc, argv, &spec, &o);

  if (rc != CLI_GO_ON)
    return rc == CLI_EXIT_USAGE ? EXIT_USAGE : rc;
  if (o.delete_db) {
    log_notice("nothing to delete: ldmd keeps its upstream LDM database in "
               "its own memory, made at each start and gone when it stops");
    return 0;
  }
  return list(&c);
}
