/*
 * pqmon - report a queue's vital statistics, as LDM's pqmon does: a log
 * line with LDM's table (nprods nfree nempty nbytes maxprods maxfree
 * minempty maxext age, and maxbytes with -e), or with -S the one stdout line
 * of twelve numbers that `ldmadmin check` and `vetqueuesize` parse.  Opens
 * the queue read-only and changes none of its products or statistics (the
 * lock still repairs what a crash left, if the process may write the file);
 * repeats every -i seconds.
 *
 * Our statistics map onto LDM's as follows (see the man page): nprods counts
 * reservations too, as LDM's did; "nfree" is the number of free gaps in the
 * data area and "maxfree" the most there have ever been; "maxext" is the
 * largest gap.  New, after LDM's columns: "held", the products readers hold
 * now (which writers cannot evict).  -S keeps LDM's twelve fields: scripts
 * parse that line.
 *
 * Ours, not LDM's: -L, a one-screen live view like top(1), refreshed in
 * place every -i seconds (1 by default; fractions allowed), of the queue and,
 * when ldmd's figures file of this queue is there (docs/metrics.md), of its
 * feeds and connections (the frame: pqmon_view.c).  On a terminal it
 * redraws with plain ANSI escapes (home, clear), reads q from the terminal
 * in non-canonical mode and puts the terminal back as it found it when it
 * ends (q, SIGINT, SIGTERM, -n); on anything else it prints one frame per
 * interval without escapes, 80 columns by 24 lines.  -n stops after that
 * many frames.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "ldmd/site/log.h"
#include "ldmd/site/registry.h"
#include "pqutils/common/cli.h"
#include "pqutils/queue/pqmon_view.h"
#include "pqutils/common/cli_io.h"

static const char usage_text[] =
    "usage: pqmon [options] [outputfile]\n"
    "options:\n"
    "  -S           print the 12 statistics LDM's scripts read, on stdout:\n"
    "               isFull dataCapacity dataHighWater dataCurrent\n"
    "               prodCapacity prodHighWater prodCurrent ageOldest\n"
    "               ageYoungest minVirtResTime mvrtSize mvrtSlots\n"
    "  -e           add maxbytes to the table\n"
    "  -i interval  report every interval seconds; 0: once (default 0;\n"
    "               with -L 1, and fractions such as 0.2 allowed)\n"
    "  -L           a live view of the queue and of ldmd's figures, like top\n"
    "               (ours); q, SIGINT or SIGTERM ends it\n"
    "  -n frames    with -L, stop after that many frames (ours)\n"
    "  -o offset    accepted for LDM and ignored\n"
    "  -q queue     queue (default: the registry's /queue/path)\n"
    "  -l dest      log to dest: \"\" syslog, \"-\" stderr, or a file\n"
    "  -v           verbose\n"
    "  -x           debug\n"
    "  -h           print this text\n"
    "-S output is appended to outputfile if given.\n";

struct opts {
  bool size_par; /* -S */
  bool extended; /* -e */
  bool live;     /* -L */
  uint64_t interval;
  double live_interval;     /* -i with -L */
  const char *interval_arg; /* -i, parsed once -L is known */
  uint64_t frames;          /* -n; 0: until stopped */
  const char *output;
};

static double whole_seconds(double s) {
  return s < 0 ? -1 : s;
}

static int print_size_par(const pq_stats *st) {
  bool empty = st->ps_nprods == 0;
  long mvrt = -1, mvrt_bytes = -1;
  unsigned long long mvrt_slots = 0;
  if (!empty && st->ps_mvrt_us >= 0) {
    mvrt = (long)(st->ps_mvrt_us / 1000000);
    mvrt_bytes = (long)st->ps_mvrt_bytes;
    mvrt_slots = st->ps_mvrt_slots;
  }
  char line[512];
  int n = snprintf(
      line, sizeof line,
      "%d %llu %llu %llu %llu %llu %llu %.0f %.0f %ld %ld %llu\n",
      st->ps_is_full ? 1 : 0, (unsigned long long)st->ps_data_size,
      (unsigned long long)st->ps_maxbytes, (unsigned long long)st->ps_nbytes,
      (unsigned long long)st->ps_slots, (unsigned long long)st->ps_maxprods,
      (unsigned long long)(st->ps_nprods + st->ps_nreserved),
      empty ? 0.0 : whole_seconds(st->ps_age_oldest),
      empty ? -1.0 : whole_seconds(st->ps_age_youngest), mvrt, mvrt_bytes,
      mvrt_slots);
  /* One write, which a stop ends if the reader does not take it. */
  return n < 0 || (size_t)n >= sizeof line ||
                 cli_write_all(STDOUT_FILENO, line, (size_t)n) != 0
             ? -1
             : 0;
}

static void log_table(const pq_stats *st, uint64_t maxext, uint64_t held,
                      bool extended) {
  double age = st->ps_nprods == 0 ? 0 : whole_seconds(st->ps_age_oldest);
  unsigned long long nprods = st->ps_nprods + st->ps_nreserved;
  if (extended)
    log_notice(
        "%6llu %5llu %7llu %11llu %9llu %8llu %9llu %9llu %.0f %11llu %6llu",
        nprods, (unsigned long long)st->ps_nfree,
        (unsigned long long)st->ps_nempty, (unsigned long long)st->ps_nbytes,
        (unsigned long long)st->ps_maxprods,
        (unsigned long long)st->ps_maxnfree,
        (unsigned long long)st->ps_minempty, (unsigned long long)maxext, age,
        (unsigned long long)st->ps_maxbytes, (unsigned long long)held);
  else
    log_notice(
        "%6llu %5llu %7llu %11llu %9llu %8llu %9llu %9llu %.0f %6llu", nprods,
        (unsigned long long)st->ps_nfree, (unsigned long long)st->ps_nempty,
        (unsigned long long)st->ps_nbytes, (unsigned long long)st->ps_maxprods,
        (unsigned long long)st->ps_maxnfree,
        (unsigned long long)st->ps_minempty, (unsigned long long)maxext, age,
        (unsigned long long)held);
}

static int option(struct cli *c, int ch, const char *arg, void *opts) {
  struct opts *o = opts;
  uint64_t ignored;
  switch (ch) {
  case 'S':
    o->size_par = true;
    return 0;
  case 'e':
    o->extended = true;
    return 0;
  case 'L':
    o->live = true;
    return 0;
  case 'n':
    if (cli_parse_uint(c, "frame count", arg, UINT32_MAX, &o->frames) != 0)
      return -1;
    if (o->frames == 0) {
      cli_usage_error(c, usage_text, "bad frame count \"%s\": at least 1", arg);
      return -1;
    }
    return 0;
  case 'o':
    return cli_parse_uint(c, "offset", arg, INT32_MAX, &ignored);
  default: /* -i */
    o->interval_arg = arg;
    return 0;
  }
}

/* After the options: -i as the mode takes it, and what -L excludes. */
static int check_options(struct cli *c, struct opts *o) {
  if (!o->live) {
    if (o->frames > 0) {
      cli_usage_error(c, usage_text, "-n is for -L");
      return -1;
    }
    return o->interval_arg == NULL
               ? 0
               : cli_parse_uint(c, "interval", o->interval_arg, INT32_MAX,
                                &o->interval);
  }
  if (o->size_par || o->extended || o->output != NULL) {
    cli_usage_error(c, usage_text, "-L shows a screen: not with %s",
                    o->size_par   ? "-S"
                    : o->extended ? "-e"
                                  : "an output file");
    return -1;
  }
  o->live_interval = 1;
  if (o->interval_arg != NULL &&
      cli_parse_double(c, "interval", o->interval_arg, &o->live_interval) != 0)
    return -1;
  if (o->live_interval < 0.05 || o->live_interval > INT32_MAX) {
    cli_usage_error(c, usage_text,
                    "bad interval \"%s\": -L refreshes every 0.05 s to "
                    "%d s",
                    o->interval_arg, INT32_MAX);
    return -1;
  }
  return 0;
}

static int operands(struct cli *c, int argc, char **argv, void *opts) {
  struct opts *o = opts;
  return cli_output_operand(c, argc, argv, usage_text, &o->output);
}

static const struct cli_spec spec = {":hSeLvxl:q:o:i:n:", usage_text, option,
                                     operands};

static int monitor(pq_t *pq, const struct opts *o) {
  if (!o->size_par)
    log_notice(o->extended ? "nprods nfree  nempty      nbytes  maxprods  "
                             "maxfree  minempty    maxext    age    maxbytes"
                             "   held"
                           : "nprods nfree  nempty      nbytes  maxprods  "
                             "maxfree  minempty    maxext  age   held");
  for (;;) {
    pq_stats st;
    if (pq_stats_get(pq, &st) != PQ_OK) {
      log_error("pq_stats failed: %s", pq_last_error(pq)->pe_msg);
      return 1;
    }
    if (o->size_par) {
      if (print_size_par(&st) != 0) {
        if (cli_stopping())
          return 0; /* the reader took nothing: stopping anyway */
        log_error("cannot write the statistics: %s", strerror(errno));
        return 1;
      }
    } else {
      uint64_t maxext = 0, held = 0; /* -S prints neither: no walk there */
      if (pq_stats_largest_free(pq, &maxext) != PQ_OK) {
        log_error("pq_stats_largest_free failed: %s",
                  pq_last_error(pq)->pe_msg);
        return 1;
      }
      if (pq_stats_held(pq, &held) != PQ_OK) {
        log_error("pq_stats_held failed: %s", pq_last_error(pq)->pe_msg);
        return 1;
      }
      log_table(&st, maxext, held, o->extended);
    }
    if (o->interval == 0)
      return 0;
    double end = cli_monotonic() + (double)o->interval;
    while (!cli_stopping() && cli_monotonic() < end) {
      cli_sleep(end - cli_monotonic());
      (void)cli_stats_requested(); /* SIGUSR1 only reopens the log */
    }
    if (cli_stopping())
      return 0;
  }
}

/* ---------------------------------------------------------------------- */
/* -L: the live view                                                      */
/* ---------------------------------------------------------------------- */

/* The terminal, as pqmon found it: put back at the end. */
static struct termios saved_tty;
static bool tty_saved;

/* SIGINT in the live view: a stop like SIGTERM, never the immediate exit of
 * a second SIGINT (cli_signals()), so that the terminal is always put back.
 * cli_io_request_stop() is async-signal-safe (cli_io.h). */
static void on_interrupt(int sig) {
  (void)sig;
  cli_io_request_stop();
}

/* ldmd's figures of the queue: the file open, and what it is. */
struct figures {
  char cand[2][LDMM_PATH_MAX]; /* where to look: the registry's, the default */
  int ncand;
  ldmm_file *f;
  int which;       /* the candidate open */
  bool is_default; /* the last candidate is <queue>.metrics */
  dev_t dev;
  ino_t ino;
  char why[2 * LDMM_PATH_MAX + 512]; /* why none is open */
};

static bool same_file(const char *a, const char *b) {
  struct stat sa, sb;

  return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

/* Where ldmd writes the figures of the queue at qpath (docs/metrics.md):
 * the registry's /metrics/live-path when it names one, and the queue's path
 * with ".metrics" (ldmd's default).  figures_take() takes the first whose
 * header names this queue (the registry's may be another queue's, with -q). */
static void figures_init(struct cli *c, struct figures *fg, const char *qpath) {
  char reg[LDMM_PATH_MAX] = "";

  memset(fg, 0, sizeof *fg);
  fg->which = -1;
  if (cli_reg_string(c, REG_METRICS_PATH, reg, sizeof reg) == 0 &&
      reg[0] != '\0')
    snprintf(fg->cand[fg->ncand++], LDMM_PATH_MAX, "%s", reg);
  if (ldmm_default_path(qpath, fg->cand[fg->ncand], LDMM_PATH_MAX) == 0) {
    if (fg->ncand == 0 || strcmp(fg->cand[0], fg->cand[fg->ncand]) != 0)
      fg->ncand++;
    fg->is_default = true;
  }
}

static void figures_close(struct figures *fg) {
  ldmm_close(fg->f, false);
  fg->f = NULL;
  fg->which = -1;
}

/* Take a snapshot into snap, opening the file first if it is not open, or
 * again if the file at its path is no longer the one mapped (ldmd stopped,
 * or another started).  false, with fg->why, when there are no figures. */
static bool figures_take(struct figures *fg, const char *qpath,
                         ldmm_snapshot *snap) {
  struct stat st;
  int i;

  if (fg->f != NULL && (stat(fg->cand[fg->which], &st) != 0 ||
                        st.st_dev != fg->dev || st.st_ino != fg->ino))
    figures_close(fg);
  if (fg->f != NULL) {
    if (ldmm_snapshot_take(fg->f, snap) == 0)
      return true;
    snprintf(fg->why, sizeof fg->why, "cannot copy them: %s", strerror(ENOMEM));
    return false;
  }
  fg->why[0] = '\0';
  for (i = 0; i < fg->ncand; i++) {
    char err[LDMM_PATH_MAX + 128];
    size_t used = strlen(fg->why);
    ldmm_file *f = ldmm_open(fg->cand[i], err, sizeof err);

    if (f != NULL && stat(fg->cand[i], &st) == 0 &&
        ldmm_snapshot_take(f, snap) == 0) {
      /* The default file is this queue's unless its header names another
       * file that exists; the registry's must name this queue (a queue
       * path the server was given relative to its own directory may not
       * be found from here). */
      bool mine = same_file(snap->queue_path, qpath);
      struct stat other;

      if (mine || (i == fg->ncand - 1 && fg->is_default &&
                   stat(snap->queue_path, &other) != 0)) {
        fg->f = f;
        fg->which = i;
        fg->dev = st.st_dev;
        fg->ino = st.st_ino;
        return true;
      }
      snprintf(err, sizeof err, "%s is the figures of another queue, %s",
               fg->cand[i], snap->queue_path);
    } else if (f != NULL) {
      snprintf(err, sizeof err, "cannot read the metrics file %s: %s",
               fg->cand[i], strerror(errno));
    }
    ldmm_close(f, false);
    snprintf(fg->why + used, sizeof fg->why - used, "%s%s", used ? "; " : "",
             err);
  }
  return false;
}

/* The screen's size: the terminal's, or 80x24. */
static void screen_size(bool tty, int *width, int *height) {
  struct winsize ws;

  *width = 80;
  *height = 24;
  if (tty && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 &&
      ws.ws_row > 0) {
    *width = ws.ws_col;
    *height = ws.ws_row;
  }
}

/* Keys from the terminal: no echo, no line editing, reads that do not wait
 * (SIGINT from ^C stays).  false when stdin is not a terminal. */
static bool keys_on(void) {
  struct termios t;

  if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &saved_tty) != 0)
    return false;
  t = saved_tty;
  t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
  t.c_cc[VMIN] = 0;
  t.c_cc[VTIME] = 0;
  if (tcsetattr(STDIN_FILENO, TCSANOW, &t) != 0)
    return false;
  tty_saved = true;
  return true;
}

static void keys_off(void) {
  if (tty_saved)
    (void)tcsetattr(STDIN_FILENO, TCSANOW, &saved_tty);
  tty_saved = false;
}

/* Wait until `end` (cli_monotonic()), a stop, or q on the terminal (*keys:
 * read it; set false once the terminal is gone).  true: q was typed. */
static bool wait_frame(double end, bool *keys) {
  while (!cli_stopping()) {
    double left = end - cli_monotonic();
    char buf[64];
    ssize_t n, i;

    if (left <= 0)
      return false;
    if (!*keys) {
      cli_sleep(left);
      (void)cli_stats_requested(); /* SIGUSR1 only reopens the log */
      continue;
    }
    if (cli_io_wait(STDIN_FILENO, POLLIN, (int)(left * 1000) + 1) != 1)
      continue;
    n = read(STDIN_FILENO, buf, sizeof buf);
    if (n <= 0 && !(n < 0 && (errno == EINTR || errno == EAGAIN))) {
      *keys = false; /* end of the terminal's input: keys no more */
      continue;
    }
    for (i = 0; i < n; i++)
      if (buf[i] == 'q' || buf[i] == 'Q')
        return true;
  }
  return false;
}

/* Write a frame; false (logged) when it cannot be, but not when the reader
 * went away (EPIPE) or a stop came: that is an end, not a failure. */
static bool put(const char *text, size_t len, bool *failed) {
  if (cli_write_all(STDOUT_FILENO, text, len) == 0)
    return true;
  if (!cli_stopping() && errno != EPIPE) {
    log_error("cannot write the live view to standard output: %s",
              strerror(errno));
    *failed = true;
  }
  return false;
}

static int live(struct cli *c, pq_t *pq, const char *qpath,
                const struct opts *o) {
  static const char hide[] = "\033[?25l", show[] = "\033[?25h\n",
                    home_clear[] = "\033[H\033[2J";
  bool tty = isatty(STDOUT_FILENO) != 0, keys = tty && keys_on();
  bool failed = false, have_prev = false;
  ldmm_snapshot snaps[2] = {{0}, {0}};
  ldmm_snapshot *now = &snaps[0], *prev = &snaps[1];
  double prev_t = 0, next = cli_monotonic();
  struct figures fg;
  uint64_t frame;
  struct sigaction sa;

  memset(&sa, 0, sizeof sa);
  sigemptyset(&sa.sa_mask);
  sa.sa_handler = on_interrupt;
  (void)sigaction(SIGINT, &sa, NULL);
  figures_init(c, &fg, qpath);
  if (tty && !put(hide, sizeof hide - 1, &failed))
    goto done;
  for (frame = 0; o->frames == 0 || frame < o->frames; frame++) {
    pqmon_view v = {.queue_path = qpath, .interval = o->live_interval};
    ldmm_queue q;
    double t;
    char *text;
    size_t len;

    if (frame > 0 && (wait_frame(next, &keys) || cli_stopping()))
      break;
    /* The next frame one interval after this one was due, or after now if
     * this one came late (a slow frame does not make a burst of them). */
    next = next + o->live_interval > cli_monotonic()
               ? next + o->live_interval
               : cli_monotonic() + o->live_interval;
    ldmm_queue_read(pq, &q);
    if (!q.ok)
      v.queue_why = pq_last_error(pq)->pe_msg;
    t = cli_monotonic();
    if (figures_take(&fg, qpath, now)) {
      v.now = now;
      v.prev = have_prev ? prev : NULL;
      v.dt = t - prev_t;
    } else {
      v.why_none = fg.why;
    }
    v.queue = &q;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    v.wall = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
    screen_size(tty, &v.width, &v.height);
    text = pqmon_view_render(&v);
    if (text == NULL) {
      log_error("cannot make the live view's frame: %s", strerror(ENOMEM));
      failed = true;
      break;
    }
    len = strlen(text);
    if (tty && len > 0)
      len--; /* no newline after the last line: the screen does not scroll */
    bool written = (!tty || put(home_clear, sizeof home_clear - 1, &failed)) &&
                   put(text, len, &failed);
    if (!tty && written)
      written = put("\n", 1, &failed); /* a blank line between frames */
    free(text);
    if (!written)
      break;
    if (v.now != NULL) {
      ldmm_snapshot *swap = prev;

      prev = now;
      now = swap;
      prev_t = t;
      have_prev = true;
    } else {
      have_prev = false;
    }
  }
  if (tty)
    (void)cli_write_all(STDOUT_FILENO, show, sizeof show - 1);
done:
  keys_off();
  figures_close(&fg);
  ldmm_snapshot_free(&snaps[0]);
  ldmm_snapshot_free(&snaps[1]);
  return failed ? 1 : 0;
}

int main(int argc, char **argv) {
  struct cli c;
  struct opts o = {0};
  int rc = cli_parse(&c, argc, argv, &spec, &o);
  if (rc != CLI_GO_ON)
    return rc;
  if (check_options(&c, &o) != 0)
    return CLI_EXIT_USAGE;
  if (o.output != NULL) {
    int fd = cli_open_append(o.output);
    if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0) {
      fprintf(stderr, "%s: cannot open output file %s: %s\n", c.progname,
              o.output, strerror(errno));
      return 1;
    }
    close(fd);
  }
  cli_io_prepare_output(STDOUT_FILENO); /* a pipe: its writes must not block */
  cli_signals();
  bool table = !o.size_par && !o.live; /* the others own stdout or a screen */
  if (table)
    log_notice("Starting Up (%d)", (int)getpgrp());
  const char *path = cli_queue_path(&c);
  pq_t *pq = path != NULL ? cli_open_queue(path, PQ_READONLY, NULL) : NULL;
  int status = pq == NULL ? 1
               : o.live   ? live(&c, pq, path, &o)
                          : monitor(pq, &o);
  if (table)
    log_notice("Exiting");
  pq_close(pq);
  return status;
}
