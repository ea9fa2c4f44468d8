/*
 * pqact - act on the products of a queue as a pqact.conf file says, in
 * place of LDM's pqact: the same command line, the same file, the same
 * output files.  This file owns the program: its options and registry
 * defaults, reading the table (conf.c) and the reading loop over the
 * queue, which takes products in batches (pq_next_many(): the queue's
 * locks once a batch) and hands each to the table walk (act.c).
 *
 * As LDM's pqact: `-q /dev/null` only checks the file, and exits 1 for a
 * good file too (the log says which it was); `-i 0` exits at the
 * end of the queue; a `_BEGIN_` pseudo-product goes through the table at
 * startup; without -o it starts where the state file (cli_state.h) says, else
 * at the end of the queue; SIGHUP rereads the table, which replaces the
 * old one only if it has no error; reading the oldest product of a full
 * queue is warned about.  SIGTERM and SIGINT stop it at the next product
 * or wait (cli_signals()); the state file is then written whole; one
 * still running PQACT_STOP_S seconds later (stuck in regexec()) is ended
 * by SIGALRM.  Beyond LDM's: the state is kept current product by
 * product (durable across a kill -9), and how far behind the queue's
 * newest product pqact is shows in that warning, in the SIGUSR1
 * statistics and in a notice while it is over a minute.  Decoders
 * (decoder.h) hold a product in the state until it is in their pipe; the
 * loop writes to them as they read, and tells the state which decoders
 * are behind since when, so that a restart after a kill -9 gives the
 * products after the state's time only to the decoders that had not
 * taken them (cli_state.h, act.h).  The cap on the children of EXEC and
 * PIPE -close is the registry's /pqact/max-children, read at startup.
 * With -e (and AWIPS's -k, -s) it makes the ring of EDEX notices FILE
 * -edex fills (edex_ring.h) before opening the queue, and removes it at
 * its exit, as LDM's pqact.
 */
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ldmd/site/log.h"
#include "pqutils/common/cli.h"
#include "pqutils/pqact/act.h"
#include "pqutils/common/cli_state.h"
#include "pqutils/pqact/edex_ring.h"

/* Seconds pqact has to exit by itself after SIGTERM or SIGINT, after which
 * SIGALRM ends it (cli_signals_bound_stop(); as ldmd's children,
 * LDMD_CHILD_STOP_S). */
#define PQACT_STOP_S 3

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
    "  -e           fill the shared-memory ring of EDEX notices (FILE -edex)\n"
    "               that AWIPS's edexBridge reads\n"
    "  -k char      the ring's shared-memory key character (default R)\n"
    "  -s char      the ring's semaphores key character (default e)\n"
    "  -h           print this text\n"
    "conffile defaults to the registry's /pqact/config-path.\n";

struct opts {
  const char *datadir, *conffile, *pattern;
  uint32_t feedtype;
  uint64_t interval, timeout, offset;
  bool have_offset;
  bool edex;              /* -e */
  int shm_proj, sem_proj; /* -k, -s: AWIPS's, the ring's ftok() characters */
};

static void say_conf(void *arg, bool error, const char *msg) {
  const char *path = arg;
  if (error)
    log_error("%s: %s", path, msg);
  else
    log_warning("%s: %s", path, msg);
}

/* What the loop over the queue keeps (one per run). */
struct loop {
  struct pqact_act *act;
  struct cli_state *state; /* the state file */
  pq_t *pq;
  const char *conf_path, *state_path;
  struct pqact_conf *conf; /* the table act->conf points to */
  uint64_t interval;
  /* the product just read, if it was the oldest in the queue */
  struct cli_oldest oldest;
  /* monotonic times: the lag last measured, and said */
  double lag_checked, lag_said;
  /* the decoders behind, for the state (room for behind_cap) */
  struct cli_state_dec *behind;
  size_t behind_cap;
  /* a restart's: what is redone, and the decoders read from the file */
  struct pqact_resume resume;
  struct cli_state_dec *resume_decs;
  bool closing; /* what decoders give back now was not done */
};

/* How far behind the queue's newest product the reader is measured every
 * LAG_EVERY products, at most once a second; a notice says it while it
 * is over LAG_NOTICE_S seconds, at most once every LAG_NOTICE_S seconds. */
#define LAG_EVERY 1024
#define LAG_NOTICE_S 60.0

/* An asynchronous action takes a hold on the product in the state... */
static void hold_product(void *arg, uint64_t token) {
  struct loop *l = arg;
  cli_state_hold(l->state, token);
}

/* ...and a decoder gives it back once the product is in its pipe, or was
 * given up. */
static void on_decoded(void *arg, uint64_t token, bool ok) {
  struct loop *l = arg;
  if (!l->closing)
    cli_state_release(l->state, token, ok);
}

/* During a restart, the decoders the run before left behind that have
 * nothing waiting now still need what they match after the last product
 * read, up to the old T1: appended to the n of l->behind.  The new n. */
static size_t add_resumed(struct loop *l, size_t n) {
  for (size_t i = 0; i < l->resume.n; i++) {
    const struct cli_state_dec *d = &l->resume.decs[i];
    size_t k = 0;
    while (k < n && (strcmp(l->behind[k].cmd, d->cmd) != 0 ||
                     strcmp(l->behind[k].type, d->type) != 0))
      k++;
    if (k < n)
      continue; /* waiting now: its oldest product waiting says it */
    uint64_t next = l->act->inserted_us + 1;
    l->behind[n++] = (struct cli_state_dec){
        d->type, d->cmd, d->from_us > next ? d->from_us : next};
  }
  return n;
}

/* Tell the state which decoders are behind, if some product is held
 * beyond the own holds of the product being acted on (or some decoder was
 * behind, or a restart is under way): the cheap test first, for the
 * products no decoder holds. */
static void keep_behind(struct loop *l, size_t own) {
  if (cli_state_holds(l->state) <= own && !cli_state_any_behind(l->state) &&
      l->act->resume == NULL)
    return;
  size_t extra = l->act->resume != NULL ? l->resume.n : 0;
  if (l->behind_cap < extra + 8) {
    struct cli_state_dec *b = realloc(l->behind, (extra + 8) * sizeof *b);
    if (b == NULL)
      goto nomem;
    l->behind = b;
    l->behind_cap = extra + 8;
  }
  size_t n =
      pqact_decoders_behind(l->act->decs, l->behind, l->behind_cap - extra);
  if (n + extra > l->behind_cap) {
    struct cli_state_dec *b = realloc(l->behind, (n + extra) * 2 * sizeof *b);
    if (b == NULL)
      goto nomem;
    l->behind = b;
    l->behind_cap = (n + extra) * 2;
    n = pqact_decoders_behind(l->act->decs, l->behind, l->behind_cap - extra);
  }
  if (extra > 0)
    n = add_resumed(l, n);
  cli_state_behind(l->state, l->behind, n);
  return;
nomem: /* T0 alone says what was done */
  log_error("cannot list the decoders behind: %s", strerror(ENOMEM));
  cli_state_behind(l->state, NULL, 0);
}

/* After the decoders were written to: the state, as they are now. */
static void pumped(struct loop *l) {
  keep_behind(l, 0);
  cli_state_flush(l->state);
}

/* The restart is over: products from now on go through every entry. */
static void end_resume(struct loop *l) {
  l->act->resume = NULL;
  cli_state_decs_free(l->resume_decs, l->resume.n);
  l->resume_decs = NULL;
  l->resume = (struct pqact_resume){0};
}

/* What on_product() returns to end a batch when asked to stop (pq's own
 * codes are negative). */
#define STOP_BATCH 1

static int on_product(const pq_prod_info *info, const void *data,
                      const pq_place *place, void *arg) {
  struct loop *l = arg;
  if (cli_stopping())
    return STOP_BATCH; /* the product stays for the next run */
  if (l->act->resume != NULL && place->pp_inserted > l->resume.t1)
    end_resume(l);
  cli_state_token t = cli_state_begin(l->state, place->pp_inserted);
  l->act->token = t;
  l->act->inserted_us = place->pp_inserted;
  unsigned failed = pqact_process(l->act, info, data);
  keep_behind(l, 1);
  cli_state_end(l->state, t, failed == 0);
  l->act->nprods++;
  cli_oldest_note(&l->oldest, info, place); /* said after pq_next() */
  return 0;
}

/* Seconds from the cursor to the queue's newest product, from st. */
static double lag_of(const struct loop *l, const pq_stats *st) {
  uint64_t at = pq_cursor_get(l->pq);
  return st->ps_last_key > at ? (double)(st->ps_last_key - at) / 1e6 : 0.0;
}

/* The product read was the oldest: if the queue is full (it has evicted
 * for room), products may go before pqact reads them.  LDM's warning. */
static void warn_oldest(struct loop *l) {
  pq_stats st;
  double age;
  if (!cli_oldest_due(&l->oldest, l->pq, &st, &age))
    return;
  cli_oldest_said(&l->oldest);
  log_warning("Processed oldest product in full queue: age=%g s, prod=%s", age,
              l->oldest.prod);
  log_warning("Products might be deleted before being acted upon! Queue too "
              "small? System overloaded?");
  log_warning("%.3f s behind the newest product in the queue", lag_of(l, &st));
}

/* Every LAG_EVERY products: a notice while pqact lags far behind. */
static void check_lag(struct loop *l) {
  double now = cli_monotonic();
  if (now - l->lag_checked < 1.0)
    return;
  l->lag_checked = now;
  pq_stats st;
  if (pq_stats_get(l->pq, &st) != PQ_OK)
    return;
  double lag = lag_of(l, &st);
  if (lag > LAG_NOTICE_S &&
      (l->lag_said == 0 || now - l->lag_said >= LAG_NOTICE_S)) {
    l->lag_said = now;
    log_notice("%.3f s behind the newest product in the queue", lag);
  }
}

/* SIGUSR1: the statistics. */
static void say_stats(struct loop *l) {
  pq_stats st;
  if (pq_stats_get(l->pq, &st) == PQ_OK)
    log_notice("number of products %llu; %.3f s behind the newest product "
               "in the queue",
               (unsigned long long)l->act->nprods, lag_of(l, &st));
  else
    log_notice("number of products %llu", (unsigned long long)l->act->nprods);
}

static int load_conf(const char *path, struct pqact_conf *conf);

/* SIGHUP: the new table replaces the old only if it reads without error;
 * open outputs stay open (as LDM's pqact). */
static void reread(struct loop *l) {
  log_notice("Rereading configuration file %s", l->conf_path);
  struct pqact_conf fresh = {0};
  if (load_conf(l->conf_path, &fresh) != 0) {
    log_error("keeping the rules read before from \"%s\"", l->conf_path);
    return;
  }
  pqact_conf_free(l->conf);
  *l->conf = fresh;
}

static int act_queue(struct loop *l, const pq_class *cls) {
  unsigned since_lag = 0;
  while (!cli_stopping()) {
    /* The flags first: taking a request drains a pipe (a system call),
     * which is too dear for every product. */
    if (cli_reread_pending() && cli_reread_requested())
      reread(l);
    if (cli_stats_pending() && cli_stats_requested())
      say_stats(l);
    /* a batch of products under one hold of the queue's locks */
    int rc = pq_next_many(l->pq, PQ_FORWARD, cls, 0, on_product, l);
    warn_oldest(l);
    if (rc == PQ_OK || rc == STOP_BATCH) {
      if ((since_lag & 63) == 0) /* EXEC's children, now and then */
        (void)pqact_children_reap(l->act->kids);
      (void)pqact_decoders_pump(l->act->decs);
      while (pqact_decoders_full(l->act->decs) && !cli_stopping()) {
        (void)pqact_decoders_wait(l->act->decs, 100); /* let them drain */
        pumped(l);
      }
      pumped(l);
      if (++since_lag >= LAG_EVERY) {
        since_lag = 0;
        check_lag(l);
      }
      continue;
    }
    if (rc == PQ_DAMAGED) { /* skipped: the cursor is past it */
      log_error("%s", pq_last_error(l->pq)->pe_msg);
      continue;
    }
    if (rc != PQ_END) {
      log_error("pq_next failed: %s", pq_last_error(l->pq)->pe_msg);
      return 1;
    }
    pqact_outputs_sync(l->act->outs);
    (void)pqact_children_reap(l->act->kids);
    bool waiting = pqact_decoders_pump(l->act->decs);
    pumped(l);
    (void)cli_state_sync(l->state, 1.0);
    if (l->interval == 0) { /* the end: once the decoders have it all */
      while (waiting && !cli_stopping()) {
        waiting = pqact_decoders_wait(l->act->decs, 1000);
        pumped(l);
      }
      break;
    }
    if (waiting || pqact_decoders_reading(l->act->decs)) {
      /* write to them as they read, notice if one dies, and look for
       * products every 10 ms */
      (void)pqact_decoders_wait(l->act->decs, 10);
      pumped(l);
      continue;
    }
    /* until a product comes, or a given-up decoder's SIGKILL is due */
    uint64_t limit_ms = l->interval * 1000;
    int due = pqact_children_due_ms(l->act->kids);
    if (due >= 0 && (uint64_t)due < limit_ms)
      limit_ms = (uint64_t)due;
    rc = cli_wait_for_products_ms(l->pq, limit_ms);
    if (rc != PQ_OK) {
      log_error("pq_wait failed: %s", pq_strerror(rc));
      return 1;
    }
  }
  return 0;
}

static int parse_args(struct cli *c, int argc, char **argv, struct opts *o) {
  int ch, rc;
  while ((rc = cli_next_option(c, argc, argv, ":hvxel:d:f:q:o:p:i:t:k:s:",
                               usage_text, &ch)) == CLI_OPT_OWN) {
    switch (ch) {
    case 'e':
      o->edex = true;
      break;
    case 'k':
    case 's':
      if (strlen(optarg) != 1) { /* as AWIPS's pqact: one character */
        cli_usage_error(c, usage_text,
                        ch == 'k' ? "-k takes one character"
                                  : "-s takes one character");
        return -1;
      }
      *(ch == 'k' ? &o->shm_proj : &o->sem_proj) = (unsigned char)optarg[0];
      break;
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

/* Read the table from path.  0 or -1 (logged). */
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
  if (conf->n == 0)
    log_notice("configuration-file \"%s\" has no entries", path);
  else
    log_info("Successfully read configuration-file \"%s\"", path);
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

/* The cap on EXEC's children: the registry's /pqact/max-children, read
 * by the registry's integer parser (ldm_parse_uint()).  0, or -1 logged. */
static int children_cap(struct cli *c, unsigned *cap) {
  uint64_t n;
  if (cli_reg_uint(c, REG_PQACT_MAX_CHILDREN, &n) != 0)
    return -1;
  if (n > UINT_MAX) {
    log_error("the registry's %s is too large: %" PRIu64 " children",
              REG_PQACT_MAX_CHILDREN, n);
    return -1;
  }
  *cap = (unsigned)n;
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

/* The state file's decoders behind: what the restart from t0 redoes. */
static void read_behind(struct loop *l, uint64_t t0) {
  uint64_t t1;
  struct cli_state_dec *decs;
  size_t n;
  if (cli_state_read_behind(l->state_path, t0, &t1, &decs, &n) != 0) {
    log_warning("cannot read the decoders behind in the state file \"%s\": "
                "%s; doing again every product after its time",
                l->state_path, strerror(errno));
    return;
  }
  if (t1 == 0)
    return;
  char to[40], from[40] = "";
  uint64_t oldest = t1;
  for (size_t i = 0; i < n; i++)
    if (decs[i].from_us < oldest)
      oldest = decs[i].from_us;
  cli_state_format_time(t1, to);
  cli_state_format_time(oldest < t0 ? t0 : oldest, from);
  log_notice("products to insertion-time %s UTC were done but for %zu "
             "decoder%s behind, resumed from %s UTC",
             to, n, n == 1 ? "" : "s", from);
  l->resume = (struct pqact_resume){.t1 = t1, .decs = decs, .n = n};
  l->resume_decs = decs;
}

/* Without -o: where the state file says, as LDM's pqact reads it, else the
 * end of the queue.  0, or -1 (logged). */
static int start_position(pq_t *pq, struct loop *l) {
  const char *state_path = l->state_path;
  uint64_t us = 0;
  if (cli_state_start_at(state_path, pq_ts_to_us(pq_ts_now()), &us)) {
    char when[40];
    pq_cursor_set(pq, us);
    cli_state_format_time(us, when);
    log_notice("Starting from insertion-time %s UTC", when);
    read_behind(l, us);
    return 0;
  }
  if (pq_cursor_newest(pq) != PQ_OK) {
    log_error("cannot go to the end of the queue: %s",
              pq_last_error(pq)->pe_msg);
    return -1;
  }
  log_notice("Starting at tail-end of product-queue");
  return 0;
}

static int run(struct cli *c, const struct opts *o, struct loop *l) {
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
  pq_error err = {0};
  int status = 1;
  if (pq_open(qpath, PQ_READONLY, &l->pq, &err) != PQ_OK) {
    log_error("cannot open the queue: %s", err.pe_msg);
  } else if (o->have_offset) { /* -o: the state file is not read */
    cli_select_cursor(l->pq, &sel, &cls);
    status = 0;
  } else {
    status = start_position(l->pq, l) == 0 ? 0 : 1;
  }
  if (status == 0) {
    pqact_decoders_set_queue(l->act->decs, l->pq);
    pqact_begin_product(l->act);
    if (l->resume.t1 != 0) {
      l->act->resume = &l->resume;
      cli_state_resume(l->state, l->resume.t1);
    }
    status = act_queue(l, &cls);
    (void)pqact_decoders_pump(l->act->decs); /* the last from the queue */
    pqact_decoders_set_queue(l->act->decs, NULL);
  }
  pq_close(l->pq);
  l->pq = NULL;
  pq_class_free(&cls);
  return status;
}

/* -e: the ring of EDEX notices, named by the file edexBridge names it by
 * unless PQACT_EDEX_FTOK_PATH says another (pqact.1).  NULL logged: pqact
 * goes on, as LDM's, and FILE -edex says notification is not available. */
static struct pqact_edex *open_ring(const struct opts *o) {
  const char *path = getenv("PQACT_EDEX_FTOK_PATH");
  if (path == NULL || path[0] == '\0')
    path = PQACT_EDEX_FTOK_PATH;
  return pqact_edex_open(path, o->shm_proj, o->sem_proj);
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
  struct opts o = {.feedtype = PQ_FT_ANY,
                   .pattern = ".*",
                   .interval = 15,
                   .timeout = 60,
                   .shm_proj = PQACT_EDEX_SHM_PROJ,
                   .sem_proj = PQACT_EDEX_SEM_PROJ};
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
    return 1; /* a syntax check: 1 even for a good file, as LDM's pqact,
                 which then fails to open /dev/null as a queue */
  }
  cli_signals();
  cli_signals_reread();
  /* A pattern with back-references can keep one regexec() busy for ever
   * (the check warns about it): a stop is bounded all the same. */
  cli_signals_bound_stop(PQACT_STOP_S);
  log_notice("Starting Up (%d)", (int)getpgrp());
  unsigned cap = PQACT_CHILDREN_CAP;
  if (children_cap(&c, &cap) != 0) {
    pqact_conf_free(&conf);
    return 1;
  }
  struct pqact_act a = {.conf = &conf,
                        .outs = pqact_outputs_new(0),
                        .kids = pqact_children_new(cap)};
  /* -e: the ring, before the queue (edexBridge waits for it); without it,
   * FILE -edex says notification is not available */
  struct pqact_edex *ring = o.edex ? open_ring(&o) : NULL;
  if (a.outs != NULL)
    pqact_outputs_set_edex(a.outs, ring);
  char state_path[PATH_MAX + 8];
  snprintf(state_path, sizeof state_path, "%s.state", path);
  struct loop l = {.act = &a,
                   .state = cli_state_new(state_path),
                   .conf_path = path,
                   .state_path = state_path,
                   .conf = &conf,
                   .interval = o.interval};
  if (a.kids != NULL)
    a.decs =
        pqact_decoders_new(a.kids, o.timeout, hold_product, on_decoded, &l);
  int status = 1;
  if (a.outs == NULL || l.state == NULL || a.kids == NULL || a.decs == NULL)
    log_error("cannot allocate the outputs and the state: %s",
              strerror(ENOMEM));
  else
    status = run(&c, &o, &l);
  if (a.decs != NULL && l.state != NULL) {
    /* What the decoders have not taken is not done: the state keeps it
     * behind for the next run, which gives it to them (not given up). */
    (void)pqact_decoders_pump(a.decs);
    pumped(&l);
    l.closing = true;
  }
  pqact_decoders_free(a.decs);
  pqact_children_free(a.kids);
  pqact_outputs_free(a.outs);
  pqact_edex_close(ring, true); /* as LDM's pqact at its exit */
  pqact_conf_free(&conf);
  if (l.state != NULL) {
    uint64_t mark = cli_state_mark(l.state);
    if (mark == 0) {
      log_notice("No product was processed");
    } else {
      log_notice("Last product processed was inserted %g s ago",
                 (double)(pq_ts_to_us(pq_ts_now()) - mark) / 1e6);
      (void)cli_state_save(l.state); /* logged; as LDM's, not fatal */
    }
  }
  cli_state_free(l.state);
  end_resume(&l); /* kept to here: a clean exit still lists its decoders */
  free(l.behind);
  log_notice("%llu products processed", (unsigned long long)a.nprods);
  log_notice("Exiting");
  return status;
}
