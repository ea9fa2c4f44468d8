/*
 * pqing_input.h - where pqing's bytes come from (its operand): a file, "-"
 * for standard input, a terminal (a name beginning "tty", as LDM decides),
 * or, with -P port, a TCP connection to the host named.  Each open logs
 * LDM's line (FILE "<path>", FILE stdin, TERMIOS ..., NET "<host>" <port>).
 * Beyond LDM, a TCP source that drops or cannot be reached is tried again
 * for as long as pqing runs, with a back-off from 1 s doubling to 60 s
 * (LDM: ten seconds more each time, and it gives up after 30 tries); a
 * stop ends every wait at once.  With -r, every byte read is copied to the
 * raw file too.
 */
#ifndef PQUTILS_WMO_PQING_INPUT_H
#define PQUTILS_WMO_PQING_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pqutils/wmo/pqing_tty.h"

enum pqing_kind { PQING_FILE, PQING_STDIN, PQING_TTY, PQING_TCP };

struct pqing_input {
  enum pqing_kind kind;
  const char *name; /* the operand */
  unsigned port;    /* -P */
  unsigned baud;
  const char *parity;
  bool flow_control; /* -F */
  const char *raw_path;
  int fd, raw_fd;
  struct pqing_tty tty;
  uint64_t bytes;       /* read in all */
  uint64_t parity_errs; /* terminal with parity: NUL bytes read */
  unsigned tries;       /* TCP: failed connects in a row */
  unsigned long drops;  /* TCP: connections lost */
};

/** Decide the kind from the operand and -P (port 0: none). */
void pqing_input_init(struct pqing_input *in, const char *name, unsigned port);

/**
 * Open the input (a TCP source: connect once).  Logs LDM's line, or what
 * failed.  @return 0, or -1
 */
int pqing_input_open(struct pqing_input *in);

/**
 * Read what is there, waiting up to timeout_ms.
 * @return bytes read (> 0); 0 at the end of the input (a TCP peer closed);
 *         -2 when the time passed with nothing to read; -1 on an error
 *         (errno; EINTR: a stop)
 */
ssize_t pqing_input_read(struct pqing_input *in, void *buf, size_t n,
                         int timeout_ms);

/** Close (the terminal's settings put back). */
void pqing_input_close(struct pqing_input *in);

/**
 * TCP: connect again, waiting the back-off between tries, for as long as
 * it takes, logging LDM's lines ("Trying to re-open connection on port
 * <p>", "sleeping <s> seconds before retry <n>").
 * @param stats_fn  called (with arg) when SIGUSR1 asks for the statistics
 *                  meanwhile; NULL: nothing
 * @return 0 once connected, -1 if a stop came first
 */
int pqing_input_reconnect(struct pqing_input *in, void (*stats_fn)(void *),
                          void *arg);

/** Log the input's statistics, LDM's lines (NOTICE). */
void pqing_input_stats(const struct pqing_input *in);

#endif
