/*
 * cli_state.h - pqact's state file, `<absolute conf path>.state`: where a
 * restart resumes (pq2nats keeps its position in one too, pq2nats(1)).  It
 * holds, in LDM's format (three comment lines, then `%ld.%06ld\n`), the
 * insertion time of the last product processed with no failed action, so
 * that LDM's pqact and ours read each other's file.
 *
 * LDM writes it only at a clean exit.  Ours keeps it current as products
 * are done, so that a kill -9 at any moment loses nothing and redoes
 * nothing done before it (but the product whose actions were under way):
 *
 *   - The first product done in a run writes the whole file atomically (a
 *     temporary file, fsync, rename, fsync of the directory), keeps it
 *     open and maps its first page shared.  Each later one writes its
 *     record, the same number of bytes, over the one before, in place: no
 *     rename, no fsync.  On x86-64, when the bytes that differ from the
 *     record there span at most 16 (all but a change of the seconds' first
 *     digit, once in decades), one 16-byte store into the mapping: no
 *     system call per product.  Otherwise one pwrite(2) of the record.
 *   - Why a kill cannot tear the record.  The store is one instruction
 *     (MOVUPS), and a signal, SIGKILL too, is taken between instructions:
 *     it has stored all 16 bytes or none (a page fault in it is taken
 *     before any byte is stored, and the instruction runs again).  The
 *     bytes around the 16 are already the new record's.  (A memcpy() of
 *     the record would be several stores, between which a kill can land:
 *     torn.)  The pwrite: the record is a few bytes within the file's
 *     first page, and Linux copies a write into the page cache page by
 *     page, looking for a fatal signal only between pages; SIGKILL takes
 *     effect when the process goes back to user mode.  So it has written
 *     all of the record or none of it.  Either way the bytes are in the
 *     kernel's page cache, so they survive the process and reach the disk
 *     with the kernel's writeback (or cli_state_sync()'s fdatasync(2),
 *     which writes the pages stored into through the mapping too).
 *   - The state file must not be cut short under a running pqact (its
 *     header says not to touch it): a store beyond its end would end the
 *     process with SIGBUS.  Rewriting it by rename, as editors do, is
 *     harmless: pqact goes on writing the file it opened.
 *   - A crash of the machine may lose the records written since the last
 *     fsync: cli_state_sync() (pqact calls it when it reaches the end of
 *     the queue, at most once a second) and cli_state_save() (at a clean
 *     exit) bound that.
 *   - The record's width stays that of LDM's for every time from 2001 to
 *     2286 (ten digits of seconds); should it change, the whole file is
 *     rewritten atomically instead.  So the file is in LDM's format at all
 *     times.
 *
 * The low-water mark.  The state may advance to a product only when it and
 * every product before it are done, whatever order their actions complete
 * in (asynchronous decoders).  Each product is announced in the order
 * pq_next() gives them (increasing insertion times) with
 * cli_state_begin(), which returns a token holding it; each part still
 * working on it takes another hold (cli_state_hold()); each hold is given
 * back with cli_state_release(), saying whether that part failed.  When
 * the oldest products have no hold left, the mark moves over them to the
 * newest of them that had no failure (as LDM: a failed product does not
 * advance the state, a later one that succeeds does).  The synchronous path
 * is begin then release: O(1), one record written.
 *
 * Decoders behind.  While a decoder holds products back, the mark T0
 * stays before the oldest of them although every other action of the
 * products after it is done; a restart from T0 alone would do those
 * again.  So while products are held the file also says, after LDM's
 * time line (LDM's pqact reads only the first time after the comment
 * lines, so it ignores the rest), how far the rest went:
 *
 *   # done to here but for the decoders below (this pqact; LDM's ignores it)
 *   #+T1
 *   #-F TYPE COMMAND
 *
 * `#+T1`: every product up to T1 had all its actions done but those of
 * the decoders listed; `#-F TYPE COMMAND`: that decoder (its action and
 * its key, decoder.h) had every product it matched from insertion time F
 * on still waiting (its products wait in order, so one time says it).
 * T1 is the newest product whose synchronous part (cli_state_end())
 * ended with no failure.  With the lines, the file is exactly
 * CLI_STATE_PAGE bytes (the lines, spaces, a newline) and every update
 * pwrite(2)s that whole page at offset 0: a write within one page is not
 * torn by a kill, as above.  Lines that do not fit are dropped, and T1 is
 * lowered below the oldest F dropped (a restart redoes more, never less).
 * When nothing is held any more one last page without the lines is
 * written, and the records go back to the few bytes in place.
 *
 * Logs through ldmd/site/log.h (a failed write, with the path and
 * strerror).  Not thread-safe: one state per pqact, used by its main loop.
 */
#ifndef PQUTILS_COMMON_CLI_STATE_H
#define PQUTILS_COMMON_CLI_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The three comment lines LDM's pqact writes before the time. */
#define CLI_STATE_HEADER                                                       \
  "# The following line contains the insertion-time of the last, "             \
  "successfully-\n"                                                            \
  "# processed data-product.  Do not modify it unless you know exactly what\n" \
  "# you're doing!\n"

/* What cli_state_read() found. */
enum cli_state_found {
  CLI_STATE_FOUND = 0,  /* a time, not in the future: *inserted_us */
  CLI_STATE_ABSENT,     /* no such file */
  CLI_STATE_UNREADABLE, /* it could not be read: errno says why */
  CLI_STATE_MALFORMED,  /* no "sec.usec" after the comment lines */
  CLI_STATE_NEGATIVE,   /* a negative time (LDM refuses it too) */
  CLI_STATE_FUTURE,     /* a time after now_us: *inserted_us, to say */
};

/**
 * Read a state file as LDM's pqact reads it: lines that begin with '#' are
 * skipped, then "%ld.%ld" (seconds, microseconds) is scanned; negative
 * seconds are refused, as are microseconds outside 0..999999.
 * @param now_us  the time now (microseconds since the epoch)
 * @param[out] inserted_us  the time read (CLI_STATE_FOUND, _FUTURE)
 */
enum cli_state_found cli_state_read(const char *path, uint64_t now_us,
                                    uint64_t *inserted_us);

/**
 * cli_state_read(), and for a file there that cannot be used, a warning
 * naming path that says why (pqact and pq2nats both start so).
 * @return true with *inserted_us when the file holds a time to resume
 *         after; false when there is none (the caller picks its default)
 */
bool cli_state_start_at(const char *path, uint64_t now_us,
                        uint64_t *inserted_us);

/** "YYYY-mm-dd HH:MM:SS.uuuuuu" (UTC), microseconds since the epoch. */
void cli_state_format_time(uint64_t us, char buf[40]);

/* The size of the file while it lists decoders behind. */
#define CLI_STATE_PAGE 4096

/* A decoder behind: its action's name ("PIPE", "SPIPE", "XPIPE"), its key
 * (decoder.h) and the insertion time of its oldest product waiting. */
struct cli_state_dec {
  const char *type;
  const char *cmd;
  uint64_t from_us;
};

/**
 * Read what a state file says beyond LDM's time: T1 and the decoders
 * behind (their strings are allocated; cli_state_decs_free()).  Lines
 * that do not parse are ignored; so is a T1 not after t0.
 * @param t0  the time cli_state_read() found
 * @param[out] t1  T1, or 0 when the file has none (then *n is 0)
 * @return 0, or -1 when the file cannot be read or memory ran out (errno)
 */
int cli_state_read_behind(const char *path, uint64_t t0, uint64_t *t1,
                          struct cli_state_dec **decs, size_t *n);

/** Free what cli_state_read_behind() allocated. */
void cli_state_decs_free(struct cli_state_dec *decs, size_t n);

/** Format a time as the file's record, LDM's "%ld.%06ld\n", into buf
 *  (at least 32 bytes).  @return its length */
size_t cli_state_format(uint64_t inserted_us, char *buf);

struct cli_state;

/** Products tracked: a token, or CLI_STATE_NOTOKEN when memory ran out
 *  (logged; that product then holds nothing back). */
typedef uint64_t cli_state_token;
#define CLI_STATE_NOTOKEN UINT64_MAX

/**
 * A state to record into the file at path (nothing is written until a
 * product is done).  The path is copied.  NULL if out of memory.
 */
struct cli_state *cli_state_new(const char *path);

/** Close the file and free the state (NULL: nothing).  Writes nothing:
 *  cli_state_save() first for a clean exit. */
void cli_state_free(struct cli_state *st);

/**
 * A product read from the queue, inserted at inserted_us (each later than
 * the one begun before it), is about to be acted on.
 * @return its token, holding it once; CLI_STATE_NOTOKEN if out of memory
 */
cli_state_token cli_state_begin(struct cli_state *st, uint64_t inserted_us);

/** One more part works on the product (it must still be held). */
void cli_state_hold(struct cli_state *st, cli_state_token t);

/**
 * A part is done with the product: ok is false if its action failed.  The
 * last release of the oldest products held moves the mark and writes it.
 */
void cli_state_release(struct cli_state *st, cli_state_token t, bool ok);

/**
 * The synchronous part of the product is over (its actions but those that
 * end later, which hold it): a release, and the product becomes T1 if ok.
 * Writes the page when decoders are behind and T1 moved.
 */
void cli_state_end(struct cli_state *st, cli_state_token t, bool ok);

/**
 * A restart's T1 (cli_state_read_behind()): this run's T1 starts there,
 * so that the file goes on saying what the run before did until this one
 * passes it (the caller lists the old decoders behind meanwhile).
 */
void cli_state_resume(struct cli_state *st, uint64_t t1);

/** Holds not yet released, over every product (the synchronous one of a
 *  product being acted on included). */
size_t cli_state_holds(const struct cli_state *st);

/**
 * The decoders behind now (copied; n == 0: none).  When it is not what the
 * file says, the page is written with the next record, cli_state_end()
 * or cli_state_flush().
 */
void cli_state_behind(struct cli_state *st, const struct cli_state_dec *decs,
                      size_t n);

/** Are decoders behind (cli_state_behind() was given some)? */
bool cli_state_any_behind(const struct cli_state *st);

/** Write the page now if the decoders behind changed since it was last
 *  written. */
void cli_state_flush(struct cli_state *st);

/** The mark: the insertion time recorded this run (0: none yet). */
uint64_t cli_state_mark(const struct cli_state *st);

/** How many products are begun and not yet done. */
size_t cli_state_pending(const struct cli_state *st);

/**
 * fdatasync the file if a record was written since the last sync and at
 * least min_interval_s seconds have passed since then: a bound on what a
 * crash of the machine loses.  0, or -1 (logged).
 */
int cli_state_sync(struct cli_state *st, double min_interval_s);

/**
 * The clean exit: if a product was recorded this run, write the whole file
 * atomically (the temporary `<path>.tmp`, fsync, rename, fsync of the
 * directory).  Nothing is written otherwise: a state read at startup stays.
 * @return 0, or -1 (logged)
 */
int cli_state_save(struct cli_state *st);

#endif /* PQUTILS_COMMON_CLI_STATE_H */
