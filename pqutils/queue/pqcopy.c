/*
 * pqcopy - copy the products of one queue into another, as `ldmadmin
 * vetqueuesize` does to resize a queue.  Unlike LDM's pqcopy, which
 * re-inserted every product and so gave it a new insertion time, ours keeps
 * each product's insertion time (and its metadata and signature, as LDM
 * did): the copy has the same order and the same ages, so the minimum
 * virtual residence time and downstream resumption work on it as on the
 * original.  A product whose signature the destination already holds is
 * skipped and counted.  The copy covers the products present when it
 * starts; the data goes from one mapping to the other with one memcpy.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ldmd/site/log.h"
#include "pqutils/common/cli.h"
#include "pqutils/queue/transfer.h"

#define COPY_FAILED 1 /* our callback's stop value */
#define PAST_END 2    /* reached products newer than the start */

static const char usage_text[] =
    "usage: pqcopy [options] inPath outPath\n"
    "       pqcopy [options] [-q inPath] outPath\n"
    "options:\n"
    "  -f feedtype  copy products of this feedtype only (default ANY)\n"
    "  -p pattern   copy products whose identifier matches this ERE\n"
    "               (default .*)\n"
    "  -o offset    copy products created in the last offset seconds\n"
    "               (default: all)\n"
    "  -q inPath    source queue (default: the registry's /queue/path)\n"
    "  -l dest      log to dest: \"\" syslog, \"-\" stderr, or a file\n"
    "  -v           log each product copied\n"
    "  -x           debug\n"
    "  -h           print this text\n";

struct opts {
  struct cli_select sel; /* -f, -p, -o */
  const char *out_path;
};

struct copy {
  pq_t *dst;
  uint64_t end; /* newest insertion time when the copy started */
  uint64_t copied, dups, retimed, failed;
};

static int fill_from(void *dst, uint64_t size, void *arg) {
  memcpy(dst, arg, (size_t)size);
  return 0;
}

static int copy_one(const pq_prod_info *info, const void *data,
                    const pq_place *place, void *arg) {
  struct copy *k = arg;
  char line[600];
  if (place->pp_inserted > k->end)
    return PAST_END;
  bool retimed;
  int rc = xfer_put(k->dst, info, place->pp_inserted, fill_from, (void *)data,
                    &retimed);
  switch (rc) {
  case PQ_OK:
    k->copied++;
    if (retimed) {
      k->retimed++;
      log_debug("insertion time taken in the destination; copied with a new "
                "one: %s",
                info->ident);
    }
    cli_log_product("", info, false);
    return 0;
  case PQ_DUP:
    k->dups++;
    cli_log_product("duplicate product: ", info, false);
    return 0;
  case PQ_BIG:
  case PQ_INVAL:
    k->failed++;
    pq_prod_info_format(info, true, line, sizeof line);
    log_error("product not copied: %s: %s", pq_last_error(k->dst)->pe_msg,
              line);
    return 0;
  default:
    log_error("product copy failed: %s", pq_last_error(k->dst)->pe_msg);
    return COPY_FAILED;
  }
}

static int copy_queue(pq_t *src, const pq_class *cls, struct copy *k) {
  pq_stats st;
  if (pq_stats_get(src, &st) != PQ_OK) {
    log_error("pq_stats failed: %s", pq_last_error(src)->pe_msg);
    return 1;
  }
  k->end = st.ps_last_key;
  while (!cli_stopping()) {
    if (cli_stats_requested())
      log_notice("Number of products copied: %llu",
                 (unsigned long long)k->copied);
    int rc = pq_next(src, PQ_FORWARD, cls, copy_one, k);
    if (rc == PQ_OK)
      continue;
    if (rc == PQ_END || rc == PAST_END)
      break;
    if (rc == COPY_FAILED)
      return 1;
    log_error("pq_next failed: %s", pq_last_error(src)->pe_msg);
    return 1;
  }
  return k->failed > 0 ? 1 : 0;
}

static int option(struct cli *c, int ch, const char *arg, void *opts) {
  struct opts *o = opts;
  return cli_select_option(c, &o->sel, ch, arg); /* -f, -p, -o */
}

/* inPath outPath, or outPath alone. */
static int operands(struct cli *c, int argc, char **argv, void *opts) {
  struct opts *o = opts;
  int npos = argc - optind;
  if (npos == 2 && c->queue == NULL) {
    c->queue = argv[optind];
    o->out_path = argv[optind + 1];
  } else if (npos == 1) {
    o->out_path = argv[optind];
  } else {
    cli_usage_error(c, usage_text,
                    npos == 0 ? "no destination queue" : "too many arguments");
    return -1;
  }
  return 0;
}

static const struct cli_spec spec = {":hf:l:o:p:q:vx", usage_text, option,
                                     operands};

int main(int argc, char **argv) {
  struct cli c;
  struct opts o = {.sel = CLI_SELECT_ALL};
  int rc = cli_parse(&c, argc, argv, &spec, &o);
  if (rc != CLI_GO_ON)
    return rc;
  pq_class cls;
  if (cli_select_class(&c, &o.sel, &cls) != 0)
    return CLI_EXIT_USAGE;
  cli_signals();
  log_notice("Starting Up (%d)", (int)getpgrp());
  const char *in_path = cli_queue_path(&c);
  pq_t *src = NULL, *dst = NULL;
  struct copy k = {0};
  int status = 1;
  if (in_path != NULL && /* else logged */
      (src = cli_open_queue(in_path, PQ_READONLY, NULL)) != NULL &&
      (dst = cli_open_queue(o.out_path, 0, NULL)) != NULL) {
    k.dst = dst;
    cli_select_cursor(src, &o.sel, &cls);
    status = copy_queue(src, &cls, &k);
  }
  log_notice("Exiting");
  log_notice("Number of products copied: %llu", (unsigned long long)k.copied);
  if (k.dups > 0 || k.retimed > 0 || k.failed > 0)
    log_notice("duplicates skipped: %llu, given a new insertion time: %llu, "
               "not copied: %llu",
               (unsigned long long)k.dups, (unsigned long long)k.retimed,
               (unsigned long long)k.failed);
  pq_close(src);
  if (pq_close(dst) != PQ_OK)
    status = 1;
  pq_class_free(&cls);
  return status;
}
