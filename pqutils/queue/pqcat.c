/*
 * pqcat - write the data of the products in a queue to standard output (or
 * append it to a file), oldest first, raw and concatenated with no framing,
 * as LDM's pqcat does; filter with -f/-p/-o, verify signatures with -c,
 * count and compare with the queue's own count with -s, and follow the
 * queue with -i: at the end of the queue it sleeps on the queue's wake-up
 * word, so a new product is written at once rather than at the next poll.
 * New: each product is checked against the CRC32C the queue computed when
 * it was inserted (pq_set_verify()), since pqcat reads every byte anyway; a
 * damaged product is reported (its insertion time, signature and
 * identifier), not written, and makes the exit status 1.  -N leaves the
 * check out (LDM's pqcat has none); -C, which asked for it before it was
 * the default, is still taken.
 * -e starts at the end of the queue (the products inserted from now on,
 * whatever their creation time) and -L writes each product's LDM line (the
 * -v text) instead of its data: "ldmadmin watch" is pqcat -e -L -i.
 *
 * Data is copied out of the queue into an output buffer while the product is
 * read-locked and written after, so a slow consumer does not hold products;
 * the buffer is flushed whenever the end of the queue is reached.  A stop
 * (SIGTERM, SIGINT) ends a wait for the consumer too (cli_io.h): what does
 * not fit in its pipe then is not written.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ldmd/site/log.h"
#include "pqutils/common/cli.h"
#include "pqutils/common/cli_io.h"

#define OUTBUF (256u * 1024u)
#define WRITE_FAILED 1 /* our callback's stop value */

static const char usage_text[] =
    "usage: pqcat [options] [outputfile]\n"
    "options:\n"
    "  -f feedtype  products of this feedtype only (default ANY)\n"
    "  -p pattern   products whose identifier matches this ERE (default .*)\n"
    "  -o offset    start with products created offset seconds ago\n"
    "               (default: the oldest product)\n"
    "  -e           start at the end: products inserted from now on\n"
    "  -i interval  at the end of the queue, wait for new products, polling\n"
    "               at least every interval seconds; 0 exits (default 0)\n"
    "  -c           verify each product's MD5 signature\n"
    "  -N           do not check products against the CRC32C taken when\n"
    "               they were inserted (by default a damaged one is\n"
    "               reported and not written, and the exit status is 1)\n"
    "  -C           check them (the default; for older scripts)\n"
    "  -s           count the products and compare with the queue's count\n"
    "               (exit 0 if equal, 1 if not); writes no data\n"
    "  -O           add the origin to the -v and -L lines\n"
    "  -L           write each product's line (size, creation time,\n"
    "               feedtype, seqno, ident) instead of its data\n"
    "  -q queue     queue (default: the registry's /queue/path)\n"
    "  -l dest      log to dest: \"\" syslog, \"-\" stderr, or a file\n"
    "  -v           log each product\n"
    "  -x           debug: also log signatures\n"
    "  -h           print this text\n"
    "data is appended to outputfile if given, else written to stdout.\n";

struct opts {
  struct cli_select sel; /* -f, -p, -o */
  uint64_t interval;
  bool check_sig, no_crc, tally_only, show_origin;
  bool from_end; /* -e */
  bool lines;    /* -L */
  const char *output;
};

struct cat {
  const struct opts *o;
  int out;
  uint8_t *buf;
  size_t len;
  uint64_t nprods;
  uint64_t ndamaged; /* products that failed their CRC */
  int write_errno;
};

static int flush_out(struct cat *k) {
  if (k->len > 0 && cli_write_all(k->out, k->buf, k->len) != 0) {
    k->write_errno = errno;
    return -1;
  }
  k->len = 0;
  return 0;
}

static int out(struct cat *k, const void *data, uint64_t size) {
  bool direct = size >= OUTBUF / 2; /* large: no copy, after what is held */
  if ((direct || k->len + size > OUTBUF) && flush_out(k) != 0)
    return -1;
  if (direct) {
    if (cli_write_all(k->out, data, (size_t)size) != 0) {
      k->write_errno = errno;
      return -1;
    }
    return 0;
  }
  memcpy(k->buf + k->len, data, (size_t)size);
  k->len += (size_t)size;
  return 0;
}

/* A NOAAPORT product of the NWSTG path: LDM's 11-byte FOS header (SOH CR
 * CR LF, three digits, SP CR CR LF) and 4-byte trailer (CR CR LF ETX).  Its
 * signature is the MD5 of the bytes after the header, which leave out the
 * NWS sequence number (docs/noaaport.md, "The product built"). */
static bool fos_framed(const uint8_t *p, uint64_t n) {
  return n >= 15 && memcmp(p, "\001\r\r\n", 4) == 0 &&
         memcmp(p + 7, " \r\r\n", 4) == 0 &&
         memcmp(p + n - 4, "\r\r\n\003", 4) == 0;
}

static void check_signature(const pq_prod_info *info, const void *data) {
  uint8_t sig[PQ_SIGLEN];
  if (pq_md5(data, (size_t)info->size, sig) != 0) {
    log_error("MD5 of %s failed", info->ident);
    return;
  }
  if (memcmp(sig, info->signature, PQ_SIGLEN) != 0 &&
      fos_framed(data, info->size)) { /* NOAAPORT's rule, then */
    uint8_t nws[PQ_SIGLEN];
    if (pq_md5((const uint8_t *)data + 11, (size_t)info->size - 11, nws) == 0 &&
        memcmp(nws, info->signature, PQ_SIGLEN) == 0)
      return;
  }
  if (memcmp(sig, info->signature, PQ_SIGLEN) != 0) {
    char want[33], got[33];
    pq_sig_format(info->signature, want);
    pq_sig_format(sig, got);
    log_error("signature mismatch: %s != %s: %s", want, got, info->ident);
  }
}

static int on_product(const pq_prod_info *info, const void *data,
                      const pq_place *place, void *arg) {
  struct cat *k = arg;
  (void)place;
  if (k->o->tally_only) {
    k->nprods++;
    return 0;
  }
  cli_log_product("", info, k->o->show_origin);
  if (k->o->check_sig)
    check_signature(info, data);
  if (k->o->lines) {
    /* the product's text (600 bytes suffice, product.h), then the origin */
    char line[600 + 1 + PQ_ORIGIN_MAX + 2];
    int n =
        pq_prod_info_format(info, ldm_log_enabled(LDM_LOG_DEBUG), line, 600);
    n = n < 0 ? 0 : n > 599 ? 599 : n;
    n += snprintf(line + n, sizeof line - (size_t)n, "%s%s\n",
                  k->o->show_origin ? " " : "",
                  k->o->show_origin ? info->origin : "");
    if (out(k, line, (uint64_t)n) != 0)
      return WRITE_FAILED;
  } else if (out(k, data, info->size) != 0)
    return WRITE_FAILED;
  k->nprods++;
  return 0;
}

/* A failed write: an error (1), or the end of a stop that came while the
 * consumer was not reading (0, as any stop). */
static int write_failed(const struct cat *k) {
  if (k->write_errno == EINTR && cli_stopping()) {
    log_notice("stopped with output the reader had not taken: not written");
    return 0;
  }
  log_error("data write failed: %s", strerror(k->write_errno));
  return 1;
}

/* The reading loop; returns the exit status. */
static int cat_queue(pq_t *pq, const pq_class *cls, struct cat *k) {
  for (;;) {
    if (cli_stats_requested())
      log_notice("Number of products %llu", (unsigned long long)k->nprods);
    if (cli_stopping())
      break;
    int rc = pq_next(pq, PQ_FORWARD, cls, on_product, k);
    if (rc == PQ_OK)
      continue;
    if (rc == PQ_DAMAGED) { /* skipped: the cursor is past it */
      log_error("%s", pq_last_error(pq)->pe_msg);
      k->ndamaged++;
      continue;
    }
    if (rc == WRITE_FAILED)
      return write_failed(k);
    if (rc != PQ_END) {
      log_error("pq_next failed: %s", pq_last_error(pq)->pe_msg);
      return 1;
    }
    log_debug("End of Queue");
    if (flush_out(k) != 0)
      return write_failed(k);
    if (k->o->interval == 0)
      break;
    rc = cli_wait_for_products(pq, k->o->interval);
    if (rc != PQ_OK) {
      log_error("pq_wait failed: %s", pq_strerror(rc));
      return 1;
    }
  }
  return flush_out(k) != 0 ? write_failed(k) : 0;
}

/* -s: compare the tally with the queue's own count. */
static int sanity_check(pq_t *pq, uint64_t tallied) {
  pq_stats st;
  int rc = pq_stats_get(pq, &st);
  if (rc != PQ_OK) {
    log_error("pq_stats failed: %s", pq_last_error(pq)->pe_msg);
    return 1;
  }
  if (tallied == st.ps_nprods) {
    log_notice("pqcat queueSanityCheck: Number of products tallied "
               "consistent with value in queue");
    return 0;
  }
  log_error("pqcat queueSanityCheck: Product count doesn't match");
  log_error("products tallied: %llu   Value in queue: %llu",
            (unsigned long long)tallied, (unsigned long long)st.ps_nprods);
  return 1;
}

static int option(struct cli *c, int ch, const char *arg, void *opts) {
  struct opts *o = opts;
  switch (ch) {
  case 'c':
    o->check_sig = true;
    return 0;
  case 'C':
    o->no_crc = false;
    return 0;
  case 'N':
    o->no_crc = true;
    return 0;
  case 'O':
    o->show_origin = true;
    return 0;
  case 'e':
    o->from_end = true;
    return 0;
  case 'L':
    o->lines = true;
    return 0;
  case 's':
    o->tally_only = true;
    return 0;
  case 'i':
    return cli_parse_uint(c, "interval", arg, INT32_MAX, &o->interval);
  default: /* -f, -p, -o */
    return cli_select_option(c, &o->sel, ch, arg);
  }
}

static int operands(struct cli *c, int argc, char **argv, void *opts) {
  struct opts *o = opts;
  return cli_output_operand(c, argc, argv, usage_text, &o->output);
}

static const struct cli_spec spec = {":hcCNvxOseLl:p:f:q:o:i:", usage_text,
                                     option, operands};

int main(int argc, char **argv) {
  struct cli c;
  struct opts o = {.sel = CLI_SELECT_ALL};
  int rc = cli_parse(&c, argc, argv, &spec, &o);
  if (rc != CLI_GO_ON)
    return rc;
  pq_class cls;
  if (cli_select_class(&c, &o.sel, &cls) != 0)
    return CLI_EXIT_USAGE;
  struct cat k = {.o = &o, .out = STDOUT_FILENO};
  if (o.output != NULL && (k.out = cli_open_append(o.output)) < 0) {
    fprintf(stderr, "%s: cannot open output file %s: %s\n", c.progname,
            o.output, strerror(errno));
    pq_class_free(&cls);
    return 1;
  }
  cli_io_prepare_output(k.out); /* a pipe: its writes must not block */
  cli_signals();
  log_notice("Starting Up (%d)", (int)getpgrp());
  const char *path = cli_queue_path(&c);
  pq_t *pq = NULL;
  int status = 1;
  k.buf = malloc(OUTBUF);
  if (k.buf == NULL) {
    log_error("cannot allocate the output buffer: %s", strerror(errno));
  } else if (path != NULL &&
             (pq = cli_open_queue(path, PQ_READONLY, NULL)) != NULL) {
    cli_select_cursor(pq, &o.sel, &cls);
    if (o.from_end)
      pq_cursor_set(pq, pq_ts_to_us(pq_ts_now()));
    /* Every product checked, whatever another reader found. */
    pq_set_verify(pq, o.no_crc ? PQ_VERIFY_OFF : PQ_VERIFY_EACH);
    status = cat_queue(pq, &cls, &k);
    if (k.ndamaged > 0) {
      log_error("damaged products not written: %llu",
                (unsigned long long)k.ndamaged);
      status = 1;
    }
    if (status == 0 && o.tally_only)
      status = sanity_check(pq, k.nprods);
  }
  log_notice("Exiting");
  log_notice("Number of products %llu", (unsigned long long)k.nprods);
  pq_close(pq);
  pq_class_free(&cls);
  free(k.buf);
  if (o.output != NULL)
    close(k.out);
  return status;
}
