/*
 * pqsurf - LDM's pqsurf: reads surface bulletins (SAO, SYNOP, SHIP, METAR,
 * SPECI) from the product queue, splits each into single observations
 * (surf_split.h) and inserts them into a private queue, where the
 * signature index drops an observation already there (the same report
 * in another bulletin); expires that queue itself; and runs a pqact of its
 * own on it with the pqsurf.conf given (pqutils/surf/pqsurf.1).
 *
 * The pqact is our pqact program, run as a child, as LDM runs its own:
 * the same command line (-d datadir -q private-queue conf, with -v, -x,
 * -l, -f, -o and -t passed on), the same file format, the same state
 * file, and nothing of pqact's code to keep in step; pqsurf exits when its
 * pqact does, with its status.  Products come to pqact by the queue itself
 * (it waits on the queue and is woken by each insertion), so LDM's SIGCONT
 * to the child has no counterpart.
 *
 * This file owns the command line, the loop over the input queue, the
 * insertions and their counts, the expiry, and the child.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ldmd/site/log.h"
#include "ldmd/site/registry.h"
#include "pqutils/common/cli.h"
#include "pqutils/surf/surf_split.h"

#define DEFAULT_INTERVAL 15
#define DEFAULT_AGE (1.0 + DEFAULT_INTERVAL / 3600.0)
#define DEFAULT_PATTERN "^S[AIMNP]"
#define DEFAULT_FEEDTYPE (PQ_FT_IDS | PQ_FT_DDS)
/* The longest wait between two looks at the child and the expiry clock:
 * input products wake pqsurf at once, whatever the interval. */
#define MAX_WAIT_S 1

static const char usage_text[] =
    "usage: pqsurf [options] [conffile]\n"
    "options:\n"
    "  -v           verbose: log each bulletin and duplicate (SIGUSR2 "
    "toggles)\n"
    "  -x           debug\n"
    "  -l dest      log to dest: \"\" syslog, \"-\" stderr, or a file\n"
    "  -d datadir   pqact's data directory (default: the registry's\n"
    "               /pqsurf/datadir-path)\n"
    "  -q queue     input queue (default: the registry's /queue/path)\n"
    "  -Q queue     private queue of the observations (default: the\n"
    "               registry's /surf-queue/path)\n"
    "  -p pattern   bulletins whose identifier matches this ERE\n"
    "               (default \"^S[AIMNP]\")\n"
    "  -f feedtype  bulletins of this feedtype (default IDS|DDS)\n"
    "  -i interval  expire every interval seconds (default 15); 0: split\n"
    "               what the queue holds, run pqact over it, exit\n"
    "  -a age       expire observations created more than age hours ago\n"
    "               (default 1.0042)\n"
    "  -t timeo     pqact's PIPE write timeout, seconds (default 60)\n"
    "  -o offset    start with bulletins created offset seconds ago\n"
    "               (default: those inserted from now on)\n"
    "  -h           print this text\n"
    "conffile: pqact's configuration (default: the registry's\n"
    "  /pqsurf/config-path)\n";

struct opts {
  uint32_t feedtype;
  const char *feedtype_arg; /* -f as given, for pqact */
  const char *pattern;
  const char *surfq; /* -Q */
  const char *datadir;
  const char *conf;
  const char *offset_arg; /* -o as given, for pqact */
  uint64_t offset;
  bool have_offset;
  uint64_t interval;
  double age_hours;
  const char *timeo;
};

/* LDM's counts, logged at exit and on SIGUSR1. */
static unsigned long nprods, nsplit, ndups;
static pq_t *surfq;
static pid_t act_pid = -1;

static void dump_stats(void) {
  log_notice("Number of products %lu", nprods);
  log_notice("Number of observations %lu", nsplit);
  log_notice("Number of dups %lu", ndups);
}

/* surf_split()'s callback: one observation into the private queue. */
static int insert_obs(const pq_prod_info *info, const void *body, void *arg) {
  int rc;

  (void)arg;
  if (ldm_log_enabled(LDM_LOG_DEBUG))
    cli_log_product("", info, false);
  nsplit++;
  rc = pq_insert(surfq, info, body);
  if (rc == PQ_OK)
    return 0;
  if (rc == PQ_DUP) {
    ndups++;
    if (ldm_log_enabled(LDM_LOG_INFO)) {
      char line[600];

      pq_prod_info_format(info, ldm_log_enabled(LDM_LOG_DEBUG), line,
                          sizeof line);
      log_info("Product already in queue: %s", line);
    }
    return rc;
  }
  log_error("pq_insert() returned %d: %s", rc, pq_last_error(surfq)->pe_msg);
  return rc;
}

/* pq_next()'s callback: one bulletin. */
static int split_bulletin(const pq_prod_info *info, const void *data,
                          const pq_place *place, void *arg) {
  (void)place;
  (void)arg;
  cli_log_product("", info, false);
  (void)surf_split(info, data, time(NULL), insert_obs, NULL);
  nprods++;
  return 0;
}

/* Delete the observations created more than age ago. */
static void expire(double age_hours) {
  uint64_t age_us = (uint64_t)llround(age_hours * 3600e6);
  uint64_t now_us = pq_ts_to_us(pq_ts_now());
  pq_timestamp before = pq_ts_from_us(now_us > age_us ? now_us - age_us : 0);
  uint64_t n = 0;
  int rc = pq_expire(surfq, before, NULL, &n, NULL, NULL);

  if (rc != PQ_OK)
    log_error("pq_expire failed: %s", pq_last_error(surfq)->pe_msg);
  else
    log_debug("expired %llu observations", (unsigned long long)n);
}

/* Start pqact on the private queue: its pid, or -1 (logged). */
static pid_t run_pqact(char *const argv[]) {
  pid_t pid;

  if (ldm_log_enabled(LDM_LOG_DEBUG)) {
    char cmd[1024] = "";
    size_t used = 0;

    for (int i = 0; argv[i] != NULL && used < sizeof cmd; i++)
      used += (size_t)snprintf(cmd + used, sizeof cmd - used, "%s%s",
                               i > 0 ? " " : "", argv[i]);
    log_debug("exec'ing: \"%s\"", cmd);
  }
  pid = fork();
  if (pid == -1) {
    log_error("fork() failed: %s", strerror(errno));
    return -1;
  }
  if (pid == 0) {
    sigset_t all;

    /* pqact sets up its own signals; what pqsurf ignores (SIGPIPE,
     * SIGHUP) must not stay ignored across exec for it and its decoders */
    static const int sigs[] = {SIGHUP,  SIGINT,  SIGPIPE, SIGTERM,
                               SIGUSR1, SIGUSR2, SIGALRM, SIGCHLD};

    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
      (void)signal(sigs[i], SIG_DFL);
    sigemptyset(&all);
    (void)sigprocmask(SIG_SETMASK, &all, NULL);
    execvp(argv[0], argv);
    log_error("Couldn't execute decoder \"%s\"; PATH=%s: %s", argv[0],
              getenv("PATH") != NULL ? getenv("PATH") : "", strerror(errno));
    _exit(127);
  }
  return pid;
}

/*
 * Has pqact ended?  Then say how and return the status pqsurf exits
 * with: its exit status, or 1 after a signal, unless pqsurf is stopping
 * (the signal was ours, or the group's).  -1 while it runs.
 */
static int reap_pqact(int flags) {
  int status;
  pid_t w;

  if (act_pid <= 0)
    return -1;
  w = waitpid(act_pid, &status, flags);
  if (w <= 0)
    return -1;
  act_pid = -1;
  if (WIFSIGNALED(status)) {
    log_notice("child %d terminated by signal %d", (int)w, WTERMSIG(status));
    return cli_stopping() ? 0 : 1;
  }
  if (WEXITSTATUS(status) != 0)
    log_notice("child %d exited with status %d", (int)w, WEXITSTATUS(status));
  else
    log_debug("child %d exited with status %d", (int)w, WEXITSTATUS(status));
  return WEXITSTATUS(status);
}

static void stop_pqact(void) {
  if (act_pid <= 0)
    return;
  (void)kill(act_pid, SIGTERM);
  while (reap_pqact(0) < 0 && act_pid > 0 && errno == EINTR)
    ;
}

static void queue_usage(void) {
  pq_stats st;

  if (surfq == NULL || pq_stats_get(surfq, &st) != PQ_OK)
    return;
  log_notice("  Queue usage (bytes):%8llu",
             (unsigned long long)st.ps_highwater);
  log_notice("           (nregions):%8llu", (unsigned long long)st.ps_maxprods);
}

static int option(struct cli *c, int ch, const char *arg, void *opts) {
  struct opts *o = opts;

  switch (ch) {
  case 'd':
    o->datadir = arg;
    return 0;
  case 'f':
    o->feedtype_arg = arg;
    return cli_parse_feedtype(c, arg, &o->feedtype);
  case 'p':
    o->pattern = arg;
    return 0;
  case 'Q':
    o->surfq = arg;
    return 0;
  case 'o':
    o->offset_arg = arg;
    o->have_offset = true;
    return cli_parse_uint(c, "offset", arg, INT32_MAX, &o->offset);
  case 'i':
    return cli_parse_uint(c, "interval", arg, INT32_MAX, &o->interval);
  case 'a':
    return cli_parse_age_hours(c, usage_text, arg, &o->age_hours);
  case 't':
    o->timeo = arg;
    return 0;
  default:
    return -1;
  }
}

static int operands(struct cli *c, int argc, char **argv, void *opts) {
  struct opts *o = opts;

  if (argc - optind > 1) {
    cli_usage_error(c, usage_text, "too many operands");
    return -1;
  }
  if (argc - optind == 1)
    o->conf = argv[optind];
  return 0;
}

static const struct cli_spec spec = {":hvxl:d:f:p:q:Q:o:i:a:t:", usage_text,
                                     option, operands};

/* The path of a registry key into buf, unless given: NULL on failure. */
static const char *reg_path(struct cli *c, const char *given, const char *key,
                            char *buf, size_t len) {
  if (given != NULL)
    return given;
  return cli_reg_string(c, key, buf, len) == 0 ? buf : NULL;
}

/* Do the two paths name one file (the same queue)? */
static bool same_file(const char *a, const char *b) {
  struct stat sa, sb;

  if (strcmp(a, b) == 0)
    return true;
  return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

/* pqact's command line. */
static void pqact_argv(const struct opts *o, const char *surfpath,
                       const char *datadir, const char *conf, bool once,
                       const char *argv[24]) {
  int n = 0;

  argv[n++] = "pqact";
  if (ldm_log_enabled(LDM_LOG_INFO))
    argv[n++] = "-v";
  if (ldm_log_enabled(LDM_LOG_DEBUG))
    argv[n++] = "-x";
  argv[n++] = "-l";
  argv[n++] = ldm_log_get_destination();
  if (o->feedtype_arg != NULL) {
    argv[n++] = "-f";
    argv[n++] = o->feedtype_arg;
  }
  if (o->offset_arg != NULL) {
    argv[n++] = "-o";
    argv[n++] = o->offset_arg;
  }
  if (o->timeo != NULL) {
    argv[n++] = "-t";
    argv[n++] = o->timeo;
  }
  if (once) {
    argv[n++] = "-i";
    argv[n++] = "0";
  }
  argv[n++] = "-d";
  argv[n++] = datadir;
  argv[n++] = "-q";
  argv[n++] = surfpath;
  argv[n++] = conf;
  argv[n] = NULL;
}

/* pqsurf's work once the command line is read: 0, or its exit status. */
static int serve(struct cli *c, const struct opts *o, const pq_class *cls,
                 pq_timestamp from) {
  char surfbuf[4096], databuf[4096], confbuf[4096];
  const char *surfpath, *datadir, *conf, *inpath;
  const char *act_argv[24];
  pq_t *in;
  int rc, code = 0;
  int status = 0;
  double last_expire = 0;

  surfpath = reg_path(c, o->surfq, REG_SURFQUEUE_PATH, surfbuf, sizeof surfbuf);
  datadir =
      reg_path(c, o->datadir, REG_PQSURF_DATADIR, databuf, sizeof databuf);
  conf = reg_path(c, o->conf, REG_PQSURF_CONFIG, confbuf, sizeof confbuf);
  inpath = cli_queue_path(c);
  if (surfpath == NULL || datadir == NULL || conf == NULL || inpath == NULL)
    return 1;
  if (same_file(surfpath, inpath)) {
    cli_usage_error(c, usage_text,
                    "the private queue %s is the input queue: give -Q "
                    "another (ldmadmin mksurfqueue makes the registry's)",
                    surfpath);
    return CLI_EXIT_USAGE;
  }
  cli_signals();
  log_notice("Starting Up (%d)", (int)getpgrp());

  surfq = cli_open_queue(surfpath, 0, &code);
  if (surfq == NULL) {
    if (code == PQ_CORRUPT)
      log_error("The output product-queue \"%s\" is inconsistent", surfpath);
    status = 1;
    goto out;
  }
  pqact_argv(o, surfpath, datadir, conf, o->interval == 0, act_argv);
  if (o->interval != 0) {
    act_pid = run_pqact((char *const *)act_argv);
    if (act_pid == -1) {
      status = 1;
      goto out;
    }
  }
  in = cli_open_queue(inpath, PQ_READONLY, &code);
  if (in == NULL) {
    if (code == PQ_CORRUPT)
      log_error("The product-queue \"%s\" is inconsistent", inpath);
    status = 1;
    goto out;
  }
  if (o->have_offset)
    pq_cursor_set(in, pq_ts_to_us(from));
  else if (pq_cursor_newest(in) != PQ_OK)
    log_warning("cannot find the end of the queue: %s",
                pq_last_error(in)->pe_msg);
  if (ldm_log_enabled(LDM_LOG_INFO)) {
    /* LDM's line of the class, once reading starts */
    char t[40], ft[180];

    pq_ts_format(from, t, sizeof t);
    pq_feedtype_format(o->feedtype, ft, sizeof ft);
    log_info("%s TS_ENDT {{%s, \"%s\"}}", t, ft, o->pattern);
  }

  while (!cli_stopping()) {
    if (cli_stats_requested())
      dump_stats();
    rc = pq_next(in, PQ_FORWARD, cls, split_bulletin, NULL);
    if (rc == PQ_OK)
      continue;
    if (rc != PQ_END) {
      log_error("pq_sequence failed: %s", pq_last_error(in)->pe_msg);
      status = 1;
      break;
    }
    if (o->interval == 0)
      break;
    if (cli_monotonic() - last_expire >= (double)o->interval ||
        last_expire == 0) {
      expire(o->age_hours);
      last_expire = cli_monotonic();
    }
    rc = cli_wait_for_products(in, o->interval < MAX_WAIT_S ? o->interval
                                                            : MAX_WAIT_S);
    if (rc != PQ_OK && rc != PQ_TIMEDOUT) {
      log_error("pq_wait failed: %s", pq_last_error(in)->pe_msg);
      status = 1;
      break;
    }
    if ((rc = reap_pqact(WNOHANG)) >= 0) {
      status = rc;
      break;
    }
  }
  pq_close(in);
  if (o->interval == 0 && status == 0 && !cli_stopping()) {
    /* One pass: now pqact over what it holds, to the end. */
    act_pid = run_pqact((char *const *)act_argv);
    if (act_pid == -1) {
      status = 1;
    } else {
      bool told = false;

      /* A stop (waitpid() then fails with EINTR) is passed on to it. */
      while ((rc = reap_pqact(0)) < 0 && act_pid > 0)
        if (cli_stopping() && !told) {
          (void)kill(act_pid, SIGTERM);
          told = true;
        }
      status = rc < 0 ? 1 : rc;
    }
  }
out:
  log_notice("Exiting");
  stop_pqact();
  queue_usage();
  pq_close(surfq);
  dump_stats();
  return status;
}

int main(int argc, char **argv) {
  struct cli c;
  struct opts o = {.feedtype = DEFAULT_FEEDTYPE,
                   .pattern = DEFAULT_PATTERN,
                   .interval = DEFAULT_INTERVAL,
                   .age_hours = DEFAULT_AGE};
  pq_class cls;
  pq_timestamp from;
  int rc;

  rc = cli_parse(&c, argc, argv, &spec, &o);
  if (rc != CLI_GO_ON)
    return rc;
  from = pq_ts_now();
  if (o.have_offset)
    from.sec -= (int64_t)o.offset;
  else
    from.sec -= (int64_t)llround(o.age_hours * 3600) - (int64_t)o.interval;
  if (cli_make_class(&c, &cls, from, o.feedtype, o.pattern) != 0)
    return CLI_EXIT_USAGE;
  rc = serve(&c, &o, &cls, from);
  pq_class_free(&cls);
  return rc;
}
