/*
 * decoder.h - pqact's PIPE, SPIPE and XPIPE actions: products written to
 * the standard input of decoders, programs that pqact starts and keeps
 * running (our pqutils/pqact/pqact.1 says what a site sees).
 *
 * As LDM's pqact: a decoder is known by its whole command line after
 * substitution, so products whose command lines are equal go to one
 * running decoder; its options (-transient -strip -metadata -nodata
 * -removewmo -flush -close, each known by its first two letters) are the
 * leading "-..." words, and those of the entry that started it stay; PIPE
 * writes the product's data (after -removewmo and -strip, -metadata's
 * header of filing.h first, -nodata the header alone), SPIPE LDM's framed
 * record, XPIPE the product as XDR (docs/protocol.md); `-close` ends the
 * decoder's input after each product; a decoder whose input is closed
 * sees end of file, and at exit pqact does not wait for its decoders.
 *
 * Better than LDM's, whose single thread blocks on a decoder that does not
 * read (up to -t seconds for each 4 KiB), stalling every other action:
 *
 *   - writes never block.  What a decoder does not take at once waits in
 *     a buffer of its own, written as the decoder reads, while pqact goes
 *     on with the other entries.  Past PQACT_DECODER_BUFFER bytes, the
 *     products for it wait in the queue instead (their signatures in
 *     memory, found again with pq_find() when the buffer has room: see
 *     pqact_decoders_set_queue()); one that leaves the queue before the
 *     decoder takes it is logged and fails.  A decoder that takes no byte
 *     for the -t timeout is given up: its waiting products fail, its input is
 *     closed, it is sent SIGTERM, and SIGKILL if it is still there
 *     PQACT_DECODER_KILL_GRACE_S seconds later (with its process group);
 *     the next product for it starts a new one.  A decoder that
 *     falls behind is logged with its command line and how far behind it
 *     is (LDM issue #77).
 *   - a decoder that exits or crashes is restarted, after a delay that
 *     doubles with each consecutive death up to PQACT_DECODER_BACKOFF_MAX
 *     seconds (none for the first); an exit with status 0 is a death
 *     too, unless the decoder read a product whole before it.  What it
 *     had not read is written to the new one: pqact keeps each product
 *     until the decoder has read all of it, which it learns from the bytes
 *     left in the pipe (FIONREAD).  The product it was reading, or the
 *     last it read whole if it died of a signal or a non-zero status
 *     within the -t timeout of reading it, is written once more; a product
 *     it dies on a second time is logged and skipped.  No decoder can stop
 *     pqact (LDM issue #71).
 *   - `-close` decoders are children under the cap of children.h.
 *
 * Each product given to a decoder is reported done once through the
 * callback: ok when all its bytes are in the pipe, failed when it is
 * given up.  Not thread-safe; one set per process.
 */
#ifndef PQACT_DECODER_H
#define PQACT_DECODER_H

#include <stdbool.h>
#include <stdint.h>

#include "pq/pq.h"
#include "pqutils/pqact/children.h"
#include "pqutils/pqact/conf.h"
#include "pqutils/common/cli_state.h"

/* Bytes a decoder's buffer may hold; past them its products wait in the
 * queue (or, with no queue set, pqact waits for it to drain). */
#define PQACT_DECODER_BUFFER (32u << 20)
/* How long a decoder given up after -t has to exit after SIGTERM before
 * SIGKILL, seconds. */
#define PQACT_DECODER_KILL_GRACE_S 5
/* The longest delay before a dead decoder is started again, seconds. */
#define PQACT_DECODER_BACKOFF_MAX 30
/* A decoder that has waiting bytes and takes none for this long is logged
 * as behind (and again each time this much more passes), seconds. */
#define PQACT_DECODER_SLOW_S 5

struct pqact_decoders;

/* A product handed to pqact_pipe_action() is taken (hold), and later done
 * (ok, or given up). */
typedef void pqact_hold_fn(void *arg, uint64_t token);
typedef void pqact_done_fn(void *arg, uint64_t token, bool ok);

/**
 * An empty set of decoders.
 * @param kids       where the decoders are started (not owned)
 * @param timeout_s  pqact -t: how long a decoder may take no bytes
 * @param hold       called once for each product taken, before its done
 *                   (NULL: nothing)
 * @param done       called once for each product taken (NULL: nothing)
 * @return NULL if out of memory
 */
struct pqact_decoders *pqact_decoders_new(struct pqact_children *kids,
                                          uint64_t timeout_s,
                                          pqact_hold_fn *hold,
                                          pqact_done_fn *done, void *arg);

/** Write what the decoders take without waiting, close their inputs, and
 *  free the set; products still waiting are reported failed.  The
 *  decoders run on.  NULL: nothing. */
void pqact_decoders_free(struct pqact_decoders *d);

/**
 * Give a product to the decoder of a PIPE, SPIPE or XPIPE action, starting
 * the decoder if it is not running.  Never waits.
 * @param argv   the substituted arguments: options, then the command
 * @param token  passed to the hold and done callbacks
 * @param inserted_us  the product's insertion time (pqact_decoders_behind())
 * @return 0 (the product is taken: hold was called, done comes now or
 *         later), or -1 after logging why (neither is called)
 */
int pqact_pipe_action(struct pqact_decoders *d, enum pqact_action type,
                      int argc, char **argv, const pq_prod_info *info,
                      const void *data, uint64_t token, uint64_t inserted_us);

/**
 * The key of the decoder a PIPE, SPIPE or XPIPE action goes to: its
 * substituted command line after the options, words joined by blanks (a
 * decoder is known by its action and this key).
 * @return the key (free() it), or NULL after logging why
 */
char *pqact_decoder_key(enum pqact_action type, int argc, char **argv);

/**
 * The decoders with products waiting (not yet wholly in their pipe), for
 * the state file (cli_state.h): for each, its action's name, its key and the
 * insertion time of its oldest product waiting; decoders of one key (PIPE
 * -close) are one, with the oldest time.  The strings are the set's, good
 * until it next changes.
 * @param out  room for max of them
 * @return how many there are (more than max: only max were stored)
 */
size_t pqact_decoders_behind(const struct pqact_decoders *d,
                             struct cli_state_dec *out, size_t max);

/** The queue the products were read from, where those a decoder has no
 *  room for are left and found again (NULL: they all wait in memory).
 *  pqact_decoders_pump() and _wait() then read it: call them outside a
 *  read of the queue. */
void pqact_decoders_set_queue(struct pqact_decoders *d, pq_t *pq);

/**
 * Write what the decoders take now, notice the ones that died or hung,
 * and start again the ones whose delay has passed.  Never waits.
 * @return true if some product is still waiting for a decoder
 */
bool pqact_decoders_pump(struct pqact_decoders *d);

/** Has a decoder more waiting than it may (PQACT_DECODER_BUFFER bytes
 *  without a queue, else a million products in the queue), or are many
 *  decoders waiting to start?  (pqact should wait, pumping, before taking
 *  another product.) */
bool pqact_decoders_full(const struct pqact_decoders *d);

/**
 * Wait until a waiting decoder can take bytes, dies, or its delay or
 * timeout is due, or timeout_ms passes, or a stop comes; then pump.
 * @return true if some product is still waiting (as pqact_decoders_pump)
 */
bool pqact_decoders_wait(struct pqact_decoders *d, int timeout_ms);

/** Has a running decoder not read yet all that was written to it?  (Then
 *  pqact_decoders_wait() notices at once if it dies, to write what it did
 *  not read to the next one.) */
bool pqact_decoders_reading(const struct pqact_decoders *d);

#endif /* PQACT_DECODER_H */
