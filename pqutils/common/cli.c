/*
 * cli.c - the setup every queue utility shares: the parse of its command
 * line (its own options and operands through the program's callbacks), the
 * common LDM options (-l, -v, -x, -q), the -f/-p/-o choice of products,
 * defaults read from the registry only when they are needed, LDM's signal
 * conventions (SIGTERM: stop cleanly, SIGUSR1: reopen the log and report,
 * SIGUSR2: cycle the log level; SIGHUP, for a program that asks: reread its
 * configuration and reopen the log; a stop, a report or a reread request
 * wakes the waits of cli_io.h), and strict parsers for the values users
 * type, so that "-s 10X" or "-i soon" is refused with a message instead of
 * being read as 0 the way atoi() would.
 */
#include "pqutils/common/cli.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <openssl/crypto.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ldmd/site/log.h"
#include "pqutils/common/cli_io.h"

void cli_init(struct cli *c, const char *argv0) {
  memset(c, 0, sizeof *c);
  const char *slash = argv0 ? strrchr(argv0, '/') : NULL;
  c->progname = slash ? slash + 1 : (argv0 ? argv0 : "pqutil");
  ldm_log_init(c->progname);
  /* MD5 is a product's identity here, not security: take it from OpenSSL's
   * default provider whatever openssl.cnf says (a FIPS-only configuration
   * would refuse it), and skip reading that file at each start (0.7 ms of
   * the 6 ms a one-file pqinsert takes). */
  (void)OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG, NULL);
}

int cli_common_option(struct cli *c, int opt, const char *arg) {
  switch (opt) {
  case 'l':
    if (ldm_log_set_destination(arg) != 0) {
      fprintf(stderr, "%s: cannot log to \"%s\": %s\n", c->progname, arg,
              strerror(errno));
      return -1;
    }
    return 1;
  case 'v':
    c->verbose = true;
    if (!ldm_log_enabled(LDM_LOG_INFO))
      ldm_log_set_level(LDM_LOG_INFO);
    return 1;
  case 'x':
    ldm_log_set_level(LDM_LOG_DEBUG);
    return 1;
  case 'q':
    if (arg[0] == '\0') {
      fprintf(stderr, "%s: the queue path given with -q is empty\n",
              c->progname);
      return -1;
    }
    c->queue = arg;
    return 1;
  default:
    return 0;
  }
}

/* Does option ch take a value in optstring?  (ch is in it.) */
static bool takes_value(const char *optstring, int ch) {
  const char *p = strchr(optstring + (optstring[0] == ':'), ch);
  return p != NULL && p[1] == ':';
}

int cli_next_option(struct cli *c, int argc, char **argv, const char *optstring,
                    const char *usage, int *ch) {
  opterr = 0;
  for (;;) {
    int opt = getopt(argc, argv, optstring);
    if (opt == -1)
      return CLI_OPT_DONE;
    if (opt == ':' || opt == '?')
      return cli_bad_option(c, usage, opt);
    if (opt == 'h' && !takes_value(optstring, 'h')) {
      fputs(usage, stdout);
      return CLI_OPT_HELP;
    }
    if (opt != 'q' || takes_value(optstring, 'q')) {
      int rc = cli_common_option(c, opt, optarg);
      if (rc < 0)
        return CLI_OPT_ERROR;
      if (rc > 0)
        continue;
    }
    *ch = opt;
    return CLI_OPT_OWN;
  }
}

/* None at all: 0, or -1 after a usage error. */
static int no_operands(struct cli *c, int argc, char **argv,
                       const char *usage) {
  if (optind == argc)
    return 0;
  cli_usage_error(c, usage, "unexpected argument %s", argv[optind]);
  return -1;
}

int cli_parse(struct cli *c, int argc, char **argv, const struct cli_spec *spec,
              void *opts) {
  int ch, rc;
  cli_init(c, argv[0]);
  while ((rc = cli_next_option(c, argc, argv, spec->optstring, spec->usage,
                               &ch)) == CLI_OPT_OWN)
    if (spec->option(c, ch, optarg, opts) != 0)
      return CLI_EXIT_USAGE;
  if (rc == CLI_OPT_HELP)
    return 0;
  if (rc == CLI_OPT_ERROR)
    return CLI_EXIT_USAGE;
  rc = spec->operands != NULL ? spec->operands(c, argc, argv, opts)
                              : no_operands(c, argc, argv, spec->usage);
  return rc == 0 ? CLI_GO_ON : CLI_EXIT_USAGE;
}

/* Read the registry; NULL on failure, logged the first time. */
static ldm_registry *reg_open(struct cli *c) {
  ldm_registry *reg = NULL;
  char err[512] = "";
  if (c->reg_failed)
    return NULL;
  if (ldm_reg_open(NULL, &reg, err, sizeof err) != LDM_REG_OK) {
    log_error("cannot read the registry: %s", err);
    c->reg_failed = true;
    return NULL;
  }
  return reg;
}

/* The end of a registry read: rc logged if it failed, reg closed.
 * @return 0, or -1 */
static int reg_done(ldm_registry *reg, const char *key, int rc) {
  if (rc != LDM_REG_OK)
    log_error("cannot get %s from the registry %s: %s", key, ldm_reg_path(reg),
              ldm_reg_error(reg));
  ldm_reg_close(reg);
  return rc == LDM_REG_OK ? 0 : -1;
}

int cli_reg_string(struct cli *c, const char *key, char *buf, size_t len) {
  ldm_registry *reg = reg_open(c);
  return reg == NULL
             ? -1
             : reg_done(reg, key, ldm_reg_get_string(reg, key, buf, len));
}

int cli_reg_size(struct cli *c, const char *key, uint64_t *value) {
  ldm_registry *reg = reg_open(c);
  return reg == NULL ? -1
                     : reg_done(reg, key, ldm_reg_get_size(reg, key, value));
}

int cli_reg_uint(struct cli *c, const char *key, uint64_t *value) {
  ldm_registry *reg = reg_open(c);
  return reg == NULL ? -1
                     : reg_done(reg, key, ldm_reg_get_uint(reg, key, value));
}

const char *cli_queue_path(struct cli *c) {
  if (c->queue != NULL)
    return c->queue;
  if (cli_reg_string(c, REG_QUEUE_PATH, c->queue_buf, sizeof c->queue_buf) != 0)
    return NULL;
  if (c->queue_buf[0] == '\0') {
    log_error("the registry's %s is empty", REG_QUEUE_PATH);
    return NULL;
  }
  c->queue = c->queue_buf;
  return c->queue;
}

pq_t *cli_open_queue(const char *path, unsigned flags, int *code) {
  pq_t *pq = NULL;
  pq_error err = {0};
  if (pq_open(path, flags, &pq, &err) == PQ_OK)
    return pq;
  log_error("pq_open failed: %s", err.pe_msg);
  if (code != NULL)
    *code = err.pe_code;
  return NULL;
}

void cli_hostname(struct cli *c, char buf[PQ_ORIGIN_MAX + 1]) {
  char name[1024] = "";
  if (cli_reg_string(c, REG_HOSTNAME, name, sizeof name) != 0 ||
      name[0] == '\0') {
    if (gethostname(name, sizeof name - 1) != 0)
      snprintf(name, sizeof name, "localhost");
    name[sizeof name - 1] = '\0';
  }
  size_t n = strnlen(name, PQ_ORIGIN_MAX);
  memcpy(buf, name, n);
  buf[n] = '\0';
}

/* ---- signals ---- */

static atomic_int interrupts; /* SIGINTs received */
static atomic_int stats_flag;
static atomic_int reread_flag;
static atomic_uint stop_bound_s; /* cli_signals_bound_stop(); 0: none */

/* After a stop request: SIGALRM in stop_bound_s seconds, unless one is due
 * sooner (a second SIGTERM does not put the end off).  Async-signal-safe. */
static void bound_stop(void) {
  unsigned s = atomic_load(&stop_bound_s);
  if (s == 0)
    return;
  unsigned left = alarm(s);
  if (left > 0 && left < s)
    (void)alarm(left);
}

static void on_signal(int sig) {
  switch (sig) {
  case SIGINT:
    if (atomic_fetch_add(&interrupts, 1) > 0)
      _exit(1); /* a second interrupt: the user means it */
    cli_io_request_stop();
    bound_stop();
    break;
  case SIGTERM:
    cli_io_request_stop();
    bound_stop();
    break;
  case SIGUSR1:
    ldm_log_request_refresh();
    atomic_store(&stats_flag, 1);
    cli_io_notice();
    break;
  case SIGUSR2:
    ldm_log_request_roll();
    break;
  case SIGHUP: /* only after cli_signals_reread(): a reread, and the log
                 reopened as SIGUSR1 does (pqutils/pqact/pqact.1) */
    ldm_log_request_refresh();
    atomic_store(&reread_flag, 1);
    cli_io_notice();
    break;
  default:
    break;
  }
}

void cli_signals(void) {
  /* Without the pipes a stop that comes just before a wait is missed, but
   * the program still works: say so and go on. */
  if (cli_io_init() != 0)
    log_warning("cannot make the pipes that signals wake waits with: %s; "
                "a stop may then be noticed late",
                strerror(errno));
  ldm_log_set_stop(cli_io_stopping); /* a stop never waits on the log */
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sigemptyset(&sa.sa_mask);
  sa.sa_handler = SIG_IGN;
  (void)sigaction(SIGHUP, &sa, NULL);
  (void)sigaction(SIGPIPE, &sa, NULL);
  sa.sa_handler = on_signal; /* no SA_RESTART: blocking calls end early */
  (void)sigaction(SIGTERM, &sa, NULL);
  (void)sigaction(SIGINT, &sa, NULL);
  (void)sigaction(SIGUSR1, &sa, NULL);
  (void)sigaction(SIGUSR2, &sa, NULL);
}

void cli_signals_reread(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sigemptyset(&sa.sa_mask);
  sa.sa_handler = on_signal; /* as the others: no SA_RESTART */
  (void)sigaction(SIGHUP, &sa, NULL);
}

void cli_signals_bound_stop(unsigned seconds) {
  struct sigaction sa;
  sigset_t alrm;
  memset(&sa, 0, sizeof sa);
  sigemptyset(&sa.sa_mask);
  sa.sa_handler = SIG_DFL; /* even if whoever started us ignored it */
  (void)sigaction(SIGALRM, &sa, NULL);
  sigemptyset(&alrm);
  sigaddset(&alrm, SIGALRM);
  (void)sigprocmask(SIG_UNBLOCK, &alrm, NULL);
  atomic_store(&stop_bound_s, seconds);
}

bool cli_reread_requested(void) {
  cli_io_notice_clear(); /* as cli_stats_requested() */
  return atomic_exchange(&reread_flag, 0) != 0;
}

bool cli_reread_pending(void) {
  return atomic_load(&reread_flag) != 0;
}

bool cli_stopping(void) {
  return cli_io_stopping();
}

bool cli_stats_requested(void) {
  /* The pipe first: a request that comes after it is drained is still in
   * the flag, which every sleep looks at before it waits. */
  cli_io_notice_clear();
  return atomic_exchange(&stats_flag, 0) != 0;
}

bool cli_stats_pending(void) {
  return atomic_load(&stats_flag) != 0;
}

void cli_sleep(double seconds) {
  double end = cli_monotonic() + seconds;
  for (;;) {
    if (cli_stopping() || cli_stats_pending() || cli_reread_pending())
      return;
    double left = end - cli_monotonic();
    if (left <= 0 || cli_io_sleep(left) == 0)
      return;
    /* Woken early: by a stop or a request (the flags above tell), by a
     * notice already handled (drop it), or by another signal. */
    if (!cli_stats_pending() && !cli_reread_pending())
      cli_io_notice_clear();
  }
}

/* ---- parsing ---- */

static void complain(struct cli *c, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

static void complain(struct cli *c, const char *fmt, va_list ap) {
  fprintf(stderr, "%s: ", c->progname);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
}

static void say(struct cli *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void say(struct cli *c, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  complain(c, fmt, ap);
  va_end(ap);
}

void cli_usage_error(struct cli *c, const char *usage, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  complain(c, fmt, ap);
  va_end(ap);
  fputs(usage, stderr);
}

int cli_parse_size(struct cli *c, const char *what, const char *s,
                   uint64_t *out) {
  /* The registry's parser, so that a size on a command line means what it
   * means in the registry and to ldmadmin (through regutil -T size). */
  if (ldm_parse_size(s, out) == 0)
    return 0;
  say(c,
      "bad %s \"%s\": %s (a number of bytes; k, M and G multiply by "
      "1000, 1000000 and 1000000000)",
      what, s, ldm_size_problem(s));
  return -1;
}

int cli_parse_uint(struct cli *c, const char *what, const char *s, uint64_t max,
                   uint64_t *out) {
  /* The registry's parser, so that an integer on a command line means what
   * it means in the registry and to ldmadmin (through regutil -T uint). */
  uint64_t v;
  bool is_uint = ldm_parse_uint(s, &v) == 0;
  if (is_uint && v <= max) {
    *out = v;
    return 0;
  }
  say(c, "bad %s \"%s\": %s (a whole number from 0 to %llu)", what, s,
      is_uint ? "out of range" : ldm_uint_problem(s), (unsigned long long)max);
  return -1;
}

int cli_parse_double(struct cli *c, const char *what, const char *s,
                     double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (s[0] == '\0' || isspace((unsigned char)s[0]) || *end != '\0' ||
      errno == ERANGE || !isfinite(v) || v < 0) {
    say(c, "bad %s \"%s\": expected a number not below 0", what, s);
    return -1;
  }
  *out = v;
  return 0;
}

int cli_parse_feedtype(struct cli *c, const char *s, uint32_t *out) {
  int rc = pq_feedtype_parse(s, out);
  if (rc != PQ_FT_OK) {
    say(c, "bad feedtype \"%s\": %s", s, pq_feedtype_strerror(rc));
    return -1;
  }
  return 0;
}

int cli_parse_feedtype_some(struct cli *c, const char *usage, const char *s,
                            uint32_t *out) {
  if (cli_parse_feedtype(c, s, out) != 0)
    return -1;
  if (*out == PQ_FT_NONE) {
    cli_usage_error(c, usage, "feedtype \"%s\" is NONE", s);
    return -1;
  }
  return 0;
}

int cli_parse_age_hours(struct cli *c, const char *usage, const char *s,
                        double *hours) {
  if (cli_parse_double(c, "age", s, hours) != 0)
    return -1;
  if (*hours > 1e6) {
    cli_usage_error(c, usage, "age %s hours is too large", s);
    return -1;
  }
  return 0;
}

int cli_make_class(struct cli *c, pq_class *cls, pq_timestamp from,
                   uint32_t feedtype, const char *pattern) {
  char err[256] = "";
  int rc = pq_class_simple(cls, from, PQ_TS_ENDT, feedtype, pattern, err,
                           sizeof err);
  if (rc != 0) {
    say(c, "bad pattern \"%s\": %s", pattern,
        rc == PQ_CLASS_ELONG ? "longer than 255 characters" : err);
    return -1;
  }
  return 0;
}

/* ---- output ---- */

void cli_log_product(const char *prefix, const pq_prod_info *info,
                     bool with_origin) {
  if (!ldm_log_enabled(LDM_LOG_INFO))
    return;
  char line[600]; /* enough: pq_prod_info_format() */
  pq_prod_info_format(info, ldm_log_enabled(LDM_LOG_DEBUG), line, sizeof line);
  if (with_origin)
    log_info("%s%s %s", prefix, line, info->origin);
  else
    log_info("%s%s", prefix, line);
}

void cli__oldest_keep(struct cli_oldest *o, const pq_prod_info *info,
                      const pq_place *place) {
  o->pending = true;
  o->inserted_us = place->pp_inserted;
  pq_prod_info_format(info, false, o->prod, sizeof o->prod);
}

bool cli_oldest_due(struct cli_oldest *o, pq_t *pq, pq_stats *st, double *age) {
  if (!o->pending)
    return false;
  o->pending = false;
  double now = cli_monotonic();
  if ((o->said != 0 && now - o->said < CLI_OLDEST_EVERY_S) ||
      pq_stats_get(pq, st) != PQ_OK || !st->ps_is_full)
    return false;
  *age = (double)(pq_ts_to_us(pq_ts_now()) - o->inserted_us) / 1e6;
  return true;
}

void cli_oldest_said(struct cli_oldest *o) {
  o->said = cli_monotonic();
}

int cli_write_all(int fd, const void *buf, size_t len) {
  return cli_io_write_all(fd, buf, len);
}

int cli_open_append(const char *path) {
  return open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
}

int cli_output_operand(struct cli *c, int argc, char **argv, const char *usage,
                       const char **output) {
  if (argc - optind > 1) {
    cli_usage_error(c, usage, "more than one output file");
    return -1;
  }
  if (argc - optind == 1)
    *output = argv[optind];
  return 0;
}

int cli_bad_option(struct cli *c, const char *usage, int ch) {
  if (ch == ':')
    cli_usage_error(c, usage, "option -%c needs a value", optopt);
  else
    cli_usage_error(c, usage, "unknown option -%c", optopt);
  return -1;
}

/* ---- which products ---- */

int cli_select_option(struct cli *c, struct cli_select *s, int ch,
                      const char *arg) {
  switch (ch) {
  case 'f':
    return cli_parse_feedtype(c, arg, &s->feedtype);
  case 'p':
    s->pattern = arg;
    return 0;
  default: /* 'o' */
    if (cli_parse_uint(c, "offset", arg, INT32_MAX, &s->offset) != 0)
      return -1;
    s->have_offset = true;
    return 0;
  }
}

int cli_select_class(struct cli *c, const struct cli_select *s, pq_class *cls) {
  pq_timestamp from = PQ_TS_ZERO;
  if (s->have_offset) {
    from = pq_ts_now();
    from.sec -= (int64_t)s->offset;
  }
  return cli_make_class(c, cls, from, s->feedtype, s->pattern);
}

void cli_select_cursor(pq_t *pq, const struct cli_select *s,
                       const pq_class *cls) {
  if (s->have_offset)
    pq_cursor_set(pq, pq_ts_to_us(cls->from));
}

/* How often a waiting follower looks at signals and statistics requests. */
#define WAIT_SLICE_MS 100

int cli_wait_for_products(pq_t *pq, uint64_t seconds) {
  return cli_wait_for_products_ms(pq, seconds * 1000);
}

int cli_wait_for_products_ms(pq_t *pq, uint64_t limit_ms) {
  uint64_t waited_ms = 0;
  while (waited_ms < limit_ms && !cli_stopping() && !cli_stats_pending() &&
         !cli_reread_pending()) {
    uint64_t slice = limit_ms - waited_ms;
    if (slice > WAIT_SLICE_MS)
      slice = WAIT_SLICE_MS;
    int rc = pq_wait(pq, (int)slice);
    if (rc == PQ_OK)
      return PQ_OK;
    if (rc != PQ_TIMEDOUT)
      return rc;
    waited_ms += slice;
  }
  return PQ_OK;
}
