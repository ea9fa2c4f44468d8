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
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ldmd/site/log.h"
#include "pqutils/cli.h"
#include "pqutils/stopio.h"

static const char usage_text[] =
    "usage: pqmon [options] [outputfile]\n"
    "options:\n"
    "  -S           print the 12 statistics LDM's scripts read, on stdout:\n"
    "               isFull dataCapacity dataHighWater dataCurrent\n"
    "               prodCapacity prodHighWater prodCurrent ageOldest\n"
    "               ageYoungest minVirtResTime mvrtSize mvrtSlots\n"
    "  -e           add maxbytes to the table\n"
    "  -i interval  report every interval seconds; 0: once (default 0)\n"
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
  uint64_t interval;
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
  case 'o':
    return cli_parse_uint(c, "offset", arg, INT32_MAX, &ignored);
  default: /* -i */
    return cli_parse_uint(c, "interval", arg, INT32_MAX, &o->interval);
  }
}

static int operands(struct cli *c, int argc, char **argv, void *opts) {
  struct opts *o = opts;
  return cli_output_operand(c, argc, argv, usage_text, &o->output);
}

static const struct cli_spec spec = {":hSevxl:q:o:i:", usage_text, option,
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

int main(int argc, char **argv) {
  struct cli c;
  struct opts o = {0};
  int rc = cli_parse(&c, argc, argv, &spec, &o);
  if (rc != CLI_GO_ON)
    return rc;
  if (o.output != NULL) {
    int fd = cli_open_append(o.output);
    if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0) {
      fprintf(stderr, "%s: cannot open output file %s: %s\n", c.progname,
              o.output, strerror(errno));
      return 1;
    }
    close(fd);
  }
  stopio_prepare_output(STDOUT_FILENO); /* a pipe: its writes must not block */
  cli_signals();
  if (!o.size_par)
    log_notice("Starting Up (%d)", (int)getpgrp());
  const char *path = cli_queue_path(&c);
  pq_t *pq = path != NULL ? cli_open_queue(path, PQ_READONLY, NULL) : NULL;
  int status = pq != NULL ? monitor(pq, &o) : 1;
  if (!o.size_par)
    log_notice("Exiting");
  pq_close(pq);
  return status;
}
