/*
 * pqact - act on the products of a queue as a pqact.conf file says, in
 * place of LDM's pqact: the same command line, the same file, the same
 * output files.  This file owns the program: its options and registry
 * defaults, reading the table (conf.c) and the reading loop over the
 * queue, which takes products in batches (pq_next_many(): the queue's
 * locks once a batch) and hands each to the table walk (act.c).
 *
 * As LDM's pqact: `-q /dev/null` only checks the file; `-i 0` exits at the
 * end of the queue; a `_BEGIN_` pseudo-product goes through the table at
 * startup; without -o it starts at the end of the queue.  Not yet: PIPE,
 * EXEC, DBFILE, SPIPE and XPIPE (a table that uses them is refused at
 * startup), the state file, and rereading the table on SIGHUP.
 * SIGTERM and SIGINT stop it at the next product or wait (cli_signals()).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ldmd/site/log.h"
#include "pqutils/cli.h"
#include "pqutils/pqact/act.h"

static const char usage_text[] =
    "usage: pqact [options] [conffile]\n"
    "options:\n"
    "  -v           log each product and action\n"
    "  -x           debug\n"
    "  -l dest      log to dest: \"\" syslog, \"-\" stderr, or a file\n"
    "  -d datadir   act in this directory (default: the registry's\n"
    "               /pqact/datadir-path)\n"
    "  -q queue     queue (default: $LDMPQFNAME, else the registry's\n"
    "               /queue/path); /dev/null only checks conffile\n"
    "  -f feedtype  products of this feedtype only (default ANY)\n"
    "  -p pattern   products whose identifier matches this ERE (default .*)\n"
    "  -i interval  at the end of the queue, wait up to interval seconds\n"
    "               for new products; 0 exits (default 15)\n"
    "  -t timeout   seconds a decoder may take to read (PIPE; default 60)\n"
    "  -o offset    start with products inserted offset seconds ago\n"
    "               (default: only new products)\n"
    "  -h           print this text\n"
    "conffile defaults to the registry's /pqact/config-path.\n";

struct opts {
  const char *datadir, *conffile, *pattern;
  uint32_t feedtype;
  uint64_t interval, timeout, offset;
  bool have_offset;
};

static void say_conf(void *arg, bool error, const char *msg) {
  const char *path = arg;
  if (error)
    log_error("%s: %s", path, msg);
  else
    log_warning("%s: %s", path, msg);
}

/* What on_product() returns to end a batch when asked to stop (pq's own
 * codes are negative). */
#define STOP_BATCH 1

static int on_product(const pq_prod_info *info, const void *data,
                      const pq_place *place, void *arg) {
  struct pqact_act *a = arg;
  (void)place;
  if (cli_stopping())
    return STOP_BATCH; /* the product stays for the next run */
  (void)pqact_process(a, info, data);
  a->nprods++;
  return 0;
}

static int act_queue(pq_t *pq, const pq_class *cls, struct pqact_act *a,
                     uint64_t interval) {
  while (!cli_stopping()) {
    /* pending first: asking clears the signal pipe, a system call */
    if (cli_stats_pending() && cli_stats_requested())
      log_notice("number of products %llu", (unsigned long long)a->nprods);
    /* a batch of products under one hold of the queue's locks */
    int rc = pq_next_many(pq, PQ_FORWARD, cls, 0, on_product, a);
    if (rc == PQ_OK || rc == STOP_BATCH)
      continue;
    if (rc == PQ_DAMAGED) { /* skipped: the cursor is past it */
      log_error("%s", pq_last_error(pq)->pe_msg);
      continue;
    }
    if (rc != PQ_END) {
      log_error("pq_next failed: %s", pq_last_error(pq)->pe_msg);
      return 1;
    }
    pqact_outputs_sync(a->outs);
    if (interval == 0)
      break;
    rc = cli_wait_for_products(pq, interval);
    if (rc != PQ_OK) {
      log_error("pq_wait failed: %s", pq_strerror(rc));
      return 1;
    }
  }
  return 0;
}

static int parse_args(struct cli *c, int argc, char **argv, struct opts *o) {
  int ch, rc;
  while ((rc = cli_next_option(c, argc, argv, ":hvxl:d:f:q:o:p:i:t:",
                               usage_text, &ch)) == CLI_OPT_OWN) {
    switch (ch) {
    case 'd':
      o->datadir = optarg;
      break;
    case 'p':
      o->pattern = optarg;
      break;
    case 'f':
      if (cli_parse_feedtype(c, optarg, &o->feedtype) != 0)
        return -1;
      break;
    case 'o':
      if (cli_parse_uint(c, "offset", optarg, INT32_MAX, &o->offset) != 0)
        return -1;
      o->have_offset = true;
      break;
    case 'i':
      if (cli_parse_uint(c, "interval", optarg, INT32_MAX, &o->interval) != 0)
        return -1;
      break;
    case 't':
      if (cli_parse_uint(c, "timeout", optarg, INT32_MAX, &o->timeout) != 0)
        return -1;
      break;
    }
  }
  if (rc != CLI_OPT_DONE)
    return rc;
  if (argc - optind > 1) {
    cli_usage_error(c, usage_text, "at most one configuration file");
    return -1;
  }
  if (optind < argc)
    o->conffile = argv[optind];
  return 0;
}

/* Read the table from path; refuse the actions not done yet.  0 or -1. */
static int load_conf(const char *path, struct pqact_conf *conf) {
  FILE *f = fopen(path, "re");
  if (f == NULL) {
    log_error("cannot open configuration-file \"%s\": %s", path,
              strerror(errno));
    return -1;
  }
  int rc = pqact_conf_read(f, conf, say_conf, (void *)path);
  fclose(f);
  if (rc != 0) {
    log_error("error in configuration-file \"%s\"", path);
    return -1;
  }
  unsigned unsupported = 0;
  for (size_t i = 0; i < conf->n; i++) {
    const struct pqact_entry *e = &conf->entries[i];
    if (e->action == PQACT_NOOP || e->action == PQACT_FILE ||
        e->action == PQACT_STDIOFILE)
      continue;
    log_error("%s: line %u: action %s is not yet supported by this pqact", path,
              e->line, pqact_action_name(e->action));
    unsupported++;
  }
  if (unsupported > 0) {
    pqact_conf_free(conf);
    return -1;
  }
  if (conf->n == 0)
    log_notice("configuration-file \"%s\" has no entries", path);
  else
    log_info("successfully read configuration-file \"%s\"", path);
  return 0;
}

/* The configuration file's absolute path into buf (-1 logged). */
static int conf_path(struct cli *c, const struct opts *o, char *buf,
                     size_t len) {
  char given[PATH_MAX];
  if (o->conffile != NULL)
    snprintf(given, sizeof given, "%s", o->conffile);
  else if (cli_reg_string(c, REG_PQACT_CONFIG, given, sizeof given) != 0)
    return -1;
  if (given[0] == '/') {
    snprintf(buf, len, "%s", given);
    return 0;
  }
  char cwd[PATH_MAX];
  if (getcwd(cwd, sizeof cwd) == NULL) {
    log_error("cannot get the working directory: %s", strerror(errno));
    return -1;
  }
  if ((size_t)snprintf(buf, len, "%s/%s", cwd, given) >= len) {
    log_error("configuration-file path too long: \"%s/%s\"", cwd, given);
    return -1;
  }
  return 0;
}

static int change_dir(struct cli *c, const struct opts *o) {
  char dir[PATH_MAX];
  if (o->datadir != NULL)
    snprintf(dir, sizeof dir, "%s", o->datadir);
  else if (cli_reg_string(c, REG_PQACT_DATADIR, dir, sizeof dir) != 0)
    return -1;
  if (chdir(dir) != 0) {
    log_error("cannot change to data directory \"%s\": %s", dir,
              strerror(errno));
    return -1;
  }
  return 0;
}

static int run(struct cli *c, const struct opts *o, struct pqact_act *a) {
  if (c->queue == NULL && getenv("LDMPQFNAME") != NULL)
    c->queue = getenv("LDMPQFNAME");
  const char *qpath = cli_queue_path(c);
  if (qpath == NULL)
    return 1;
  if (change_dir(c, o) != 0)
    return 1;
  const struct cli_select sel = {.feedtype = o->feedtype,
                                 .pattern = o->pattern,
                                 .have_offset = o->have_offset,
                                 .offset = o->offset};
  pq_class cls;
  if (cli_select_class(c, &sel, &cls) != 0)
    return CLI_EXIT_USAGE;
  pq_t *pq = NULL;
  pq_error err = {0};
  int status = 1;
  if (pq_open(qpath, PQ_READONLY, &pq, &err) != PQ_OK) {
    log_error("cannot open the queue: %s", err.pe_msg);
  } else if (o->have_offset) {
    cli_select_cursor(pq, &sel, &cls);
    status = 0;
  } else if (pq_cursor_newest(pq) != PQ_OK) {
    log_error("cannot go to the end of the queue: %s",
              pq_last_error(pq)->pe_msg);
  } else {
    log_notice("starting at tail-end of product-queue");
    status = 0;
  }
  if (status == 0) {
    pqact_begin_product(a);
    status = act_queue(pq, &cls, a, o->interval);
  }
  pq_close(pq);
  pq_class_free(&cls);
  return status;
}

/* Standard input, output and error open, on /dev/null if they were closed
 * (as LDM's pqact): else the first output file would get one of their
 * numbers, and log lines or a child's output would go into it. */
static void standard_fds(void) {
  for (int fd = 0; fd <= 2; fd++) {
    if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
      continue;
    int n = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
    if (n >= 0 && n != fd) /* lower ones are open: n is fd */
      close(n);
  }
}

int main(int argc, char **argv) {
  standard_fds();
  struct cli c;
  struct opts o = {
      .feedtype = PQ_FT_ANY, .pattern = ".*", .interval = 15, .timeout = 60};
  cli_init(&c, argv[0]);
  int rc = parse_args(&c, argc, argv, &o);
  if (rc != 0)
    return rc > 0 ? 0 : CLI_EXIT_USAGE;
  char path[PATH_MAX];
  struct pqact_conf conf = {0};
  if (conf_path(&c, &o, path, sizeof path) != 0 || load_conf(path, &conf) != 0)
    return 1;
  if (c.queue != NULL && strcmp(c.queue, "/dev/null") == 0) {
    pqact_conf_free(&conf);
    return 0; /* a syntax check */
  }
  cli_signals();
  log_notice("starting up (%d)", (int)getpgrp());
  struct pqact_act a = {.conf = &conf, .outs = pqact_outputs_new(0)};
  int status = 1;
  if (a.outs == NULL)
    log_error("cannot allocate the outputs: %s", strerror(ENOMEM));
  else
    status = run(&c, &o, &a);
  pqact_outputs_free(a.outs);
  pqact_conf_free(&conf);
  log_notice("exiting: %llu products", (unsigned long long)a.nprods);
  return status;
}
