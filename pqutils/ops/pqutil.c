/*
 * pqutil - LDM's queue utility as far as scripts use it: -w, the watch
 * (LDM's `ldmadmin watch` ran `pqutil -r -f feedset -w queue`): from now
 * on, a log line with LDM's product text for each product of the feedtype
 * inserted into the queue, until SIGINT or SIGTERM; and -C, clearing the
 * queue's minimum-virtual-residence-time figures (LDM's `ldmadmin start`
 * and vetqueuesize ran `pqutil -C`).  LDM's command line is taken whole;
 * its interactive commands, and creating a queue with it, are not
 * provided: the program says which of our programs does each.  This file
 * owns that; the manual is pqutils/ops/pqutil.1.
 *
 * The watch's lines are logged at INFO, whatever the level (LDM's pqutil
 * turns INFO on for them), with the signature under -x, as LDM's.  It
 * reads from the end of the queue (the products inserted from now on) and
 * sleeps on the queue's wake-up word between products.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ldmd/site/log.h"
#include "pqutils/common/cli.h"

static const char usage_text[] =
    "usage: pqutil [options] [queue]\n"
    "  -w           watch: log each product inserted from now on (until\n"
    "               SIGINT or SIGTERM)\n"
    "  -f feedtype  with -w, products of this feedtype only (default ANY)\n"
    "  -C           clear the queue's minimum virtual residence time\n"
    "               figures and exit\n"
    "  -r           open the queue read-only (what -w does anyway)\n"
    "  -P -L -F -M  taken for LDM's scripts; no effect here\n"
    "  -q queue     the queue (also as the operand; default: the\n"
    "               registry's /queue/path)\n"
    "  -l dest      log to dest: \"\" syslog, \"-\" stderr, or a file\n"
    "  -v           verbose\n"
    "  -x           debug: the watch's lines show signatures\n"
    "  -h           print this text\n"
    "Not provided: the interactive commands (pqcat, pqinsert, pqexpire,\n"
    "pqmon and ldmadmin watch do their work) and -c -n -s -S -a -p, which\n"
    "create a queue (pqcreate does).\n";

struct opts {
  bool watch, clear, read_only;
  uint32_t feedtype;
  char creating; /* the first of -c -n -s -S -a -p given, or 0 */
  const char *queue;
};

static int option(struct cli *c, int ch, const char *arg, void *p) {
  struct opts *o = p;

  switch (ch) {
  case 'w':
    o->watch = true;
    return 0;
  case 'C':
    o->clear = true;
    return 0;
  case 'r':
    o->read_only = true;
    return 0;
  case 'f':
    return cli_parse_feedtype(c, arg, &o->feedtype);
  case 'P':
  case 'L':
  case 'F':
  case 'M':
    return 0;
  default: /* c n s S a p */
    if (o->creating == 0)
      o->creating = (char)ch;
    return 0;
  }
}

static int operands(struct cli *c, int argc, char **argv, void *p) {
  struct opts *o = p;

  if (optind < argc)
    o->queue = argv[optind++];
  if (optind < argc) {
    cli_usage_error(c, usage_text, "unexpected argument %s", argv[optind]);
    return -1;
  }
  return 0;
}

static const struct cli_spec spec = {":vxl:pa:cs:nrPLFMS:wf:Cq:h", usage_text,
                                     option, operands};

/* One product of the watch: LDM's text, at INFO. */
static int on_product(const pq_prod_info *info, const void *data,
                      const pq_place *place, void *arg) {
  char line[600];

  (void)data;
  (void)place;
  (void)arg;
  if (pq_prod_info_format(info, ldm_log_enabled(LDM_LOG_DEBUG), line,
                          sizeof line) < 0)
    snprintf(line, sizeof line, "(a product whose line cannot be made)");
  log_info("%s", line);
  return 0;
}

static int watch(pq_t *pq, const pq_class *cls) {
  for (;;) {
    int rc;

    if (cli_stopping())
      return 0;
    rc = pq_next(pq, PQ_FORWARD, cls, on_product, NULL);
    if (rc == PQ_OK)
      continue;
    if (rc == PQ_DAMAGED) { /* skipped: the cursor is past it */
      log_error("%s", pq_last_error(pq)->pe_msg);
      continue;
    }
    if (rc != PQ_END) {
      log_error("pq_next failed: %s", pq_last_error(pq)->pe_msg);
      return 1;
    }
    rc = cli_wait_for_products(pq, 30);
    if (rc != PQ_OK) {
      log_error("pq_wait failed: %s", pq_strerror(rc));
      return 1;
    }
  }
}

static int clear_mvrt(pq_t *pq, const char *path) {
  int rc = pq_stats_clear_mvrt(pq);

  if (rc != PQ_OK) {
    log_error("cannot clear the minimum virtual residence time of %s: %s", path,
              pq_last_error(pq)->pe_msg);
    return 1;
  }
  log_info("cleared the minimum virtual residence time of %s", path);
  return 0;
}

int main(int argc, char **argv) {
  struct cli c;
  struct opts o = {.feedtype = PQ_FT_ANY};
  const char *path;
  pq_t *pq;
  int rc = cli_parse(&c, argc, argv, &spec, &o);

  if (rc != CLI_GO_ON)
    return rc;
  if (o.creating != 0) {
    fprintf(stderr,
            "%s: -%c: this pqutil does not create queues: pqcreate does "
            "(ldmadmin mkqueue)\n",
            c.progname, o.creating);
    return 1;
  }
  if (!o.watch && !o.clear) {
    fprintf(stderr,
            "%s: the interactive commands are not provided: pqcat writes "
            "products (display), pqinsert inserts them (read, new/put/"
            "write), pqexpire deletes old ones (delete), pqmon shows the "
            "figures (stats), and pqutil -w or ldmadmin watch watches\n",
            c.progname);
    return 1;
  }
  if (o.clear && o.read_only) {
    cli_usage_error(&c, usage_text, "-C changes the queue: not with -r");
    return CLI_EXIT_USAGE;
  }
  if (o.queue != NULL)
    c.queue = o.queue;
  path = cli_queue_path(&c);
  if (path == NULL)
    return 1;
  cli_signals();
  pq = cli_open_queue(path, o.clear ? 0 : PQ_READONLY, NULL);
  if (pq == NULL)
    return 1;
  if (o.clear) { /* LDM's -C exits at once, -w or not */
    rc = clear_mvrt(pq, path);
  } else {
    pq_class cls;

    if (cli_make_class(&c, &cls, PQ_TS_ZERO, o.feedtype, ".*") != 0) {
      pq_close(pq);
      return 1;
    }
    if (ldm_log_get_level() > LDM_LOG_INFO)
      ldm_log_set_level(LDM_LOG_INFO);
    pq_cursor_set(pq, pq_ts_to_us(pq_ts_now()));
    rc = watch(pq, &cls);
    pq_class_free(&cls);
  }
  pq_close(pq);
  return rc;
}
