/*
 * cli.h - pqcli, the library the programs of pqutils/ share, prefix
 * cli_.  It owns three things, a header each:
 *   cli.h        the command line and the process's set-up (below);
 *   cli_io.h     the waits that a stop request ends (reading a pipe,
 *                writing, sleeping, polling a socket) and the monotonic
 *                clock;
 *   cli_state.h  the state file where pqact and pq2nats keep their place
 *                in the queue across restarts (LDM's format).
 * Code that one program alone uses stays in that program's folder.
 *
 * This header: what every program's command line and process setup shares:
 * the whole parse of the command line (cli_parse()), the LDM options -l,
 * -v, -x and -q, defaults from the registry (read only when a default is
 * needed, so a malformed registry does not stop a command that names
 * everything itself), the signal handling LDM users expect, the parsers for
 * sizes, counts, intervals, feedtypes and patterns, the -f/-p/-o choice of
 * products, opening the queue, and the line -v logs for a product.
 *
 * Messages about the command line itself go to stderr, beside the usage
 * text; messages about the work go to the logger (ldmd/site/log.h).
 *
 * Process-wide: one `struct cli` per program, in main().  Not thread-safe
 * except cli_stopping(), which any thread may call.
 */
#ifndef PQUTILS_COMMON_CLI_H
#define PQUTILS_COMMON_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ldmd/site/registry.h"
#include "pq/pq.h"
#include "pqutils/common/cli_io.h"

/* Exit status of a usage error, as LDM's utilities. */
#define CLI_EXIT_USAGE 1

struct cli {
  const char *progname; /* basename of argv[0] */
  const char *queue;    /* -q, or NULL: the registry's /queue/path */
  bool verbose;         /* -v was given (a program's own option that undoes
                           it, as ldmping's -q, may clear this) */
  bool reg_failed;      /* the registry could not be read (said once) */
  char queue_buf[4096]; /* the registry's queue path */
};

/** Name the program (basename of argv0) and start the logger. */
void cli_init(struct cli *c, const char *argv0);

/**
 * Handle one of the common options: -l dest, -v, -x, -q path.
 * @return 1 if handled, 0 if opt is not one of them, -1 on a bad value
 *         (message printed).
 */
int cli_common_option(struct cli *c, int opt, const char *arg);

/* What cli_next_option() returns. */
enum {
  CLI_OPT_ERROR = -1, /* a usage error, printed on stderr */
  CLI_OPT_DONE = 0,   /* no more options: the operands start at optind */
  CLI_OPT_HELP = 1,   /* -h: the usage text was printed on stdout */
  CLI_OPT_OWN = 2,    /* an option of the program's own is in *ch */
};

/**
 * getopt() for the utilities: the next option the program itself must
 * handle.  Takes care of what they all share: getopt's own messages are
 * off (opterr = 0); the common options -l, -v, -x and -q are handled with
 * cli_common_option(); -h, where it takes no value, prints the usage on
 * stdout; a missing value or an unknown option is a usage error
 * (cli_bad_option()).  An "h" that takes a value (the clients' -h host), or
 * a "q" that takes none (ldmping's -q quiet), is left to the program.
 *
 * @param optstring  getopt's, beginning with ':' so that a missing value is
 *                   told from an unknown option
 * @param usage      the usage text, for -h and for errors
 * @param[out] ch    the program's option; its value, if any, is in optarg
 * @return CLI_OPT_OWN, CLI_OPT_DONE, CLI_OPT_HELP or CLI_OPT_ERROR.  The
 *         last three suit parse_args() conventions: 0 go on, 1 exit 0
 *         (help), -1 exit with CLI_EXIT_USAGE.
 */
int cli_next_option(struct cli *c, int argc, char **argv, const char *optstring,
                    const char *usage, int *ch);

/* A queue utility's command line, for cli_parse(). */
struct cli_spec {
  const char *optstring; /* getopt's, as cli_next_option() takes it */
  const char *usage;     /* for -h and for usage errors */
  /* One of the program's own options, with its value arg (NULL if it takes
   * none), into opts: 0, or -1 after printing what is wrong.  NULL: the
   * program has no option beyond the common ones. */
  int (*option)(struct cli *c, int ch, const char *arg, void *opts);
  /* The operands, argv[optind] to argv[argc - 1], into opts: 0, or -1
   * after printing a usage error.  NULL: the program takes none. */
  int (*operands)(struct cli *c, int argc, char **argv, void *opts);
};

/* What cli_parse() returns when the program is to go on with its work. */
#define CLI_GO_ON (-1)

/**
 * The start every queue utility shares: cli_init(), then the options with
 * cli_next_option() (the program's own to spec->option), then the operands.
 * @return CLI_GO_ON, or the status to exit with at once: 0 after -h (the
 *         usage text is on stdout), CLI_EXIT_USAGE after a usage error or a
 *         bad value (said on stderr).
 */
int cli_parse(struct cli *c, int argc, char **argv, const struct cli_spec *spec,
              void *opts);

/** The queue path: -q if given, else the registry's /queue/path.  NULL on
 *  failure (logged). */
const char *cli_queue_path(struct cli *c);

/**
 * Open the queue at path with pq_open()'s flags.
 * @param code  if not NULL and the open fails, pq_open()'s status
 * @return the handle, or NULL after logging "pq_open failed: <why>".
 */
pq_t *cli_open_queue(const char *path, unsigned flags, int *code);

/**
 * A value from the registry (its default if the file does not set it).  The
 * registry is read for each call and not kept open.
 * @return 0, or -1 after logging what failed (the file and the key).
 */
int cli_reg_string(struct cli *c, const char *key, char *buf, size_t len);
int cli_reg_size(struct cli *c, const char *key, uint64_t *value);
int cli_reg_uint(struct cli *c, const char *key, uint64_t *value);

/** The origin of inserted products: the registry's /hostname if it can be
 *  read, else gethostname(); cut to PQ_ORIGIN_MAX characters. */
void cli_hostname(struct cli *c, char buf[PQ_ORIGIN_MAX + 1]);

/* ---- signals ---- */

/**
 * Install the handlers LDM users expect: SIGTERM and SIGINT ask for a
 * clean stop (a second SIGINT exits at once), SIGUSR1 reopens the log file
 * and asks for statistics, SIGUSR2 cycles the log level; SIGHUP (unless
 * cli_signals_reread() follows) and SIGPIPE are ignored.  A stop ends every
 * wait of cli_io.h at once, whenever it comes (cli_io_request_stop()); other
 * system calls are not restarted, so a blocking call under way returns early
 * with EINTR.
 */
void cli_signals(void);
/**
 * After cli_signals(), for a program that rereads its configuration on
 * SIGHUP (pqact): SIGHUP then asks for a reread (cli_reread_requested()),
 * reopens the log file and wakes the waits as SIGUSR1 does, instead of
 * being ignored.
 */
void cli_signals_reread(void);
/**
 * After cli_signals(), for a program whose work may not notice a stop for
 * long (pqact, in regexec() on a pattern with back-references, which can
 * take exponential time on one identifier: docs/security.md): from a stop
 * request (SIGTERM, the first SIGINT) the program has `seconds` to exit by
 * itself, after which SIGALRM, given its default action here, ends it
 * whatever it is doing.  The program must not use alarm() or SIGALRM for
 * anything else.  0 turns the bound off.
 */
void cli_signals_bound_stop(unsigned seconds);
/** Was SIGHUP received since the last call (after cli_signals_reread())?
 *  Clears the request.  Async-signal-safe flag, read by the main loop. */
bool cli_reread_requested(void);
/** Is a reread request waiting?  Does not clear it. */
bool cli_reread_pending(void);
/** Has a stop been asked for?  Async-signal-safe, thread-safe. */
bool cli_stopping(void);
/** Was SIGUSR1 received since the last call?  Clears the request.  A
 *  program that does not report statistics calls it after cli_sleep(),
 *  which otherwise ends at once while a request waits. */
bool cli_stats_requested(void);
/** Is a statistics request waiting?  Does not clear it. */
bool cli_stats_pending(void);
/** Sleep up to `seconds`, returning early on a stop, a statistics or a
 *  reread request, even one that comes just before the sleep begins. */
void cli_sleep(double seconds);
/* cli_monotonic(), the clock, is in cli_io.h with the waits. */

/* ---- parsing; each returns 0, or -1 after printing what is wrong ---- */

/** A size as the registry reads it, ldm_parse_size(): decimal digits (0x
 *  refused, leading zeros decimal) with LDM's decimal suffixes (k, M, G,
 *  either case). */
int cli_parse_size(struct cli *c, const char *what, const char *s,
                   uint64_t *out);
/** An unsigned integer as the registry reads it, ldm_parse_uint(): decimal
 *  digits (0x refused, leading zeros decimal), no larger than max. */
int cli_parse_uint(struct cli *c, const char *what, const char *s, uint64_t max,
                   uint64_t *out);
/** A finite, non-negative decimal number. */
int cli_parse_double(struct cli *c, const char *what, const char *s,
                     double *out);
/** A feedtype expression. */
int cli_parse_feedtype(struct cli *c, const char *s, uint32_t *out);
/** A feedtype expression that selects something (not NONE: a usage
 *  error, with the usage text). */
int cli_parse_feedtype_some(struct cli *c, const char *usage, const char *s,
                            uint32_t *out);
/** -a: an age in hours, a number from 0 to 1e6 (beyond: a usage error,
 *  with the usage text). */
int cli_parse_age_hours(struct cli *c, const char *usage, const char *s,
                        double *hours);
/** Build the -f/-p/-o class: creation time from `from` onward. */
int cli_make_class(struct cli *c, pq_class *cls, pq_timestamp from,
                   uint32_t feedtype, const char *pattern);

/* For getopt's ':' (an option lacks its value) and '?' (an unknown
 * option), with `ch` what getopt returned: print the usage error; -1.
 * (cli_next_option() calls it.) */
int cli_bad_option(struct cli *c, const char *usage, int ch);

/* ---- which products: -f feedtype, -p pattern, -o offset ---- */

/* What pqcat, pqcopy and pqexpire read, as LDM's utilities take it. */
struct cli_select {
  uint32_t feedtype;   /* -f */
  const char *pattern; /* -p: an ERE the identifier matches */
  bool have_offset;    /* -o was given: */
  uint64_t offset;     /* products created in the last offset seconds */
};

/* Every product: feedtype ANY, pattern ".*", no offset. */
#define CLI_SELECT_ALL                                                         \
  ((struct cli_select){.feedtype = PQ_FT_ANY, .pattern = ".*"})

/** Take option ch, one of -f, -p and -o, with its value arg into s: 0, or
 *  -1 after printing what is wrong with the value. */
int cli_select_option(struct cli *c, struct cli_select *s, int ch,
                      const char *arg);

/** The class of what s selects: created from offset seconds ago (with -o,
 *  else from the beginning), of its feedtype, matching its pattern.  0, or
 *  -1 after printing what is wrong with the pattern (cli_make_class()). */
int cli_select_class(struct cli *c, const struct cli_select *s, pq_class *cls);

/** With -o, set pq's cursor to the start of cls's window (without -o it
 *  stays at the oldest product). */
void cli_select_cursor(pq_t *pq, const struct cli_select *s,
                       const pq_class *cls);

/** Print "<prog>: <msg>" and the usage text to stderr; for usage errors. */
void cli_usage_error(struct cli *c, const char *usage, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The operands after the options (from optind): at most one output file
 * (*output stays as it was without one).  0, or -1 after a usage error. */
int cli_output_operand(struct cli *c, int argc, char **argv, const char *usage,
                       const char **output);

/* ---- output ---- */

/** The line -v logs for a product: at INFO, prefix then LDM's product line
 *  (with the signature at DEBUG, -x), then the origin if with_origin. */
void cli_log_product(const char *prefix, const pq_prod_info *info,
                     bool with_origin);

/* ---- the oldest-product warning ---- */

/*
 * A reader that reads the oldest product of a full queue is about to lose
 * products to eviction: LDM's pqact warns then, at most every
 * CLI_OLDEST_EVERY_S seconds, and so do pqact and pq2nats, each in its own
 * words.  The read callback notes the product (cli_oldest_note(), under
 * the read lock); after pq_next() returns, out of it, cli_oldest_due()
 * says whether to warn, and cli_oldest_said() starts the quiet period.
 */
#define CLI_OLDEST_EVERY_S 10.0
struct cli_oldest {
  bool pending;         /* the product noted was the queue's oldest */
  uint64_t inserted_us; /* its insertion time */
  char prod[600];       /* its line, pq_prod_info_format() */
  double said;          /* cli_monotonic() of the last warning, 0: none */
};

void cli__oldest_keep(struct cli_oldest *o, const pq_prod_info *info,
                      const pq_place *place);
/** Note a product read: remembered only if it was the queue's oldest
 *  (place->pp_oldest).  Inline: it runs for every product read, and
 *  almost none is the oldest. */
static inline void cli_oldest_note(struct cli_oldest *o,
                                   const pq_prod_info *info,
                                   const pq_place *place) {
  if (place->pp_oldest)
    cli__oldest_keep(o, info, place);
}

/** Is a warning due: the product noted was the oldest, the queue is full
 *  (pq_stats into *st) and the last warning is CLI_OLDEST_EVERY_S old?
 *  Clears the note either way; *age is the product's age in seconds. */
bool cli_oldest_due(struct cli_oldest *o, pq_t *pq, pq_stats *st, double *age);

/** The warning was given: none again for CLI_OLDEST_EVERY_S. */
void cli_oldest_said(struct cli_oldest *o);

/** Write all of buf, retrying short writes, waiting for a slow reader but
 *  not past a stop (cli_io_write_all(): after a stop, only what fits
 *  without waiting).  0, or -1 with errno (EINTR: stopped). */
int cli_write_all(int fd, const void *buf, size_t len);

/** Open an output file for appending, as LDM's "a+b"; -1 on failure. */
int cli_open_append(const char *path);

/** Wait up to `seconds` for a commit to the queue (pq_wait() in slices),
 *  returning early on a stop, a statistics or a reread request: PQ_OK, or
 *  pq_wait()'s error.  For the followers (pqcat -i, pqact). */
int cli_wait_for_products(pq_t *pq, uint64_t seconds);
/** The same, for up to limit_ms milliseconds (rtstats: until a report). */
int cli_wait_for_products_ms(pq_t *pq, uint64_t limit_ms);

#endif /* PQUTILS_COMMON_CLI_H */
