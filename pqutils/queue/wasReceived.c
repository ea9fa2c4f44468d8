/*
 * wasReceived - say by the exit status whether the queue received a
 * product of a feedtype and identifier pattern in the last seconds, as
 * LDM's wasReceived script does for cron jobs (it counts what
 * "pqcat -o offset" reads).  Here the queue is read directly: from the
 * insertion time offset seconds ago, forward, stopping at the first
 * product that matches, so the answer costs one pass over the window at
 * most and usually much less.
 *
 * A product counts when it was inserted within the window, whatever its
 * creation time (LDM's script, through pqcat -o, also wants it created
 * within the window, so a product relayed late does not count there).
 * A failure is exit 2 with a message (LDM's script answers 0, "received",
 * when its pqcat fails).  Nothing is written on success or on "not
 * received", so a cron job mails only what it adds itself.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ldmd/site/log.h"
#include "pqutils/common/cli.h"

enum {
  EXIT_RECEIVED = 0,
  EXIT_NOT_RECEIVED = 1,
  EXIT_ERROR = 2, /* bad usage, the queue cannot be read: no answer */
};

#define FOUND 1 /* read callback: stop at this product */
#define DEFAULT_OFFSET 3600

static const char usage_text[] =
    "usage: wasReceived [-f feedset] [-p pattern] [-o offset] [options]\n"
    "  -f feedset   feedtypes to look for, e.g. \"IDS|DDPLUS\" (default ANY)\n"
    "  -p pattern   ERE the identifier must match (default \".*\")\n"
    "  -o offset    look back this many seconds (default 3600)\n"
    "  -q queue     queue (default: the registry's /queue/path)\n"
    "  -l dest      log to dest: \"\" syslog, \"-\" stderr, or a file\n"
    "  -v           log the product found\n"
    "  -x           debug\n"
    "  -h           print this text\n"
    "exit: 0 a matching product was received in the last offset seconds,\n"
    "      1 none was, 2 no answer (bad usage, the queue could not be read)\n";

static int option(struct cli *c, int ch, const char *arg, void *opts) {
  return cli_select_option(c, opts, ch, arg);
}

static int operands(struct cli *c, int argc, char **argv, void *opts) {
  (void)opts;
  if (optind < argc) {
    cli_usage_error(c, usage_text, "unexpected argument \"%s\"", argv[optind]);
    return -1;
  }
  return 0;
}

static const struct cli_spec spec = {":hvxl:q:f:p:o:", usage_text, option,
                                     operands};

static int on_product(const pq_prod_info *info, const void *data,
                      const pq_place *place, void *arg) {
  (void)data;
  (void)place;
  *(pq_prod_info *)arg = *info;
  return FOUND;
}

int main(int argc, char **argv) {
  struct cli c;
  struct cli_select sel = CLI_SELECT_ALL;
  pq_class cls;
  pq_prod_info found;
  int rc;

  sel.have_offset = true;
  sel.offset = DEFAULT_OFFSET;
  rc = cli_parse(&c, argc, argv, &spec, &sel);
  if (rc == 0)
    return 0; /* -h: the usage text is on standard output */
  if (rc != CLI_GO_ON)
    return EXIT_ERROR;
  /* Insertion time decides, not creation time: no "from" in the class. */
  if (cli_make_class(&c, &cls, PQ_TS_ZERO, sel.feedtype, sel.pattern) != 0)
    return EXIT_ERROR;
  cli_signals();
  const char *path = cli_queue_path(&c);
  pq_t *pq = path != NULL ? cli_open_queue(path, PQ_READONLY, NULL) : NULL;
  if (pq == NULL) {
    pq_class_free(&cls);
    return EXIT_ERROR;
  }
  uint64_t now = pq_ts_to_us(pq_ts_now()), back = sel.offset * 1000000u;
  pq_cursor_set(pq, back < now ? now - back : 0);
  int status = EXIT_NOT_RECEIVED;
  for (;;) {
    if (cli_stopping()) {
      log_notice("interrupted: no answer");
      status = EXIT_ERROR;
      break;
    }
    rc = pq_next(pq, PQ_FORWARD, &cls, on_product, &found);
    if (rc == PQ_OK || rc == PQ_DAMAGED)
      continue; /* products stepped over, or one damaged: go on */
    if (rc == FOUND) {
      cli_log_product("received: ", &found, false);
      status = EXIT_RECEIVED;
    } else if (rc != PQ_END) {
      log_error("cannot read the queue %s: %s", path,
                pq_last_error(pq)->pe_msg);
      status = EXIT_ERROR;
    }
    break;
  }
  if (status == EXIT_NOT_RECEIVED)
    log_info("nothing received in the last %llu seconds",
             (unsigned long long)sel.offset);
  pq_close(pq);
  pq_class_free(&cls);
  return status;
}
