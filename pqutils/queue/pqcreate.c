/*
 * pqcreate - create an empty product queue, as `ldmadmin mkqueue` runs it:
 * `pqcreate [-c] [-f] [-S slots] -q path -s size` or the positional form
 * `pqcreate size path`.  Sizes take LDM's decimal suffixes.  Everything that
 * can go wrong (a size or slot count the queue cannot hold, a file system
 * without room, an existing file) is refused by the library with a message
 * that we pass on; LDM hung on fewer than 8 slots and zero-filled the file,
 * where the library allocates the file's blocks without writing them.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ldmd/site/log.h"
#include "pqutils/common/cli.h"

static const char usage_text[] =
    "usage: pqcreate [options] -s size[k|M|G] [-q path]\n"
    "       pqcreate [options] size[k|M|G] path\n"
    "options:\n"
    "  -s size     bytes for products, with decimal suffixes k, M, G\n"
    "              (default: the registry's /queue/size)\n"
    "  -S slots    number of product slots (default: size / 140000, at\n"
    "              least 8, or the registry's /queue/slots)\n"
    "  -c          replace an existing queue (clobber)\n"
    "  -f          accepted for LDM; the space is always reserved\n"
    "              without writing it (fast)\n"
    "  -q path     queue file (default: the registry's /queue/path)\n"
    "  -l dest     log to dest: \"\" syslog, \"-\" stderr, or a file\n"
    "  -v          verbose: print what is being created\n"
    "  -x          debug\n"
    "  -h          print this text\n";

struct opts {
  const char *size_arg;
  const char *slots_arg;
  bool clobber;
};

/* Size and slots from the registry when the command line gives no size. */
static int registry_geometry(struct cli *c, uint64_t *size, uint64_t *slots) {
  char text[64] = "";
  if (cli_reg_size(c, REG_QUEUE_SIZE, size) != 0 ||
      cli_reg_string(c, REG_QUEUE_SLOTS, text, sizeof text) != 0)
    return -1;
  if (strcmp(text, "default") != 0 && text[0] != '\0' &&
      cli_parse_uint(c, "registry /queue/slots", text, UINT64_MAX, slots) != 0)
    return -1;
  return 0;
}

static int option(struct cli *c, int ch, const char *arg, void *opts) {
  struct opts *o = opts;
  (void)c;
  switch (ch) {
  case 'c':
    o->clobber = true;
    return 0;
  case 'f': /* creation always allocates without writing: fast */
    return 0;
  case 's':
    o->size_arg = arg;
    return 0;
  default: /* -S */
    o->slots_arg = arg;
    return 0;
  }
}

/* size path, or path alone. */
static int operands(struct cli *c, int argc, char **argv, void *opts) {
  struct opts *o = opts;
  int npos = argc - optind;
  if (npos > 2) {
    cli_usage_error(c, usage_text, "too many arguments");
    return -1;
  }
  if (npos == 2) {
    if (o->size_arg != NULL) {
      cli_usage_error(c, usage_text, "size given both with -s and as %s",
                      argv[optind]);
      return -1;
    }
    o->size_arg = argv[optind];
  }
  if (npos >= 1) {
    if (c->queue != NULL) {
      cli_usage_error(c, usage_text, "path given both with -q and as %s",
                      argv[argc - 1]);
      return -1;
    }
    c->queue = argv[argc - 1];
  }
  return 0;
}

static const struct cli_spec spec = {":xvcfq:s:S:l:h", usage_text, option,
                                     operands};

int main(int argc, char **argv) {
  struct cli c;
  struct opts o = {0};
  int rc = cli_parse(&c, argc, argv, &spec, &o);
  if (rc != CLI_GO_ON)
    return rc;

  uint64_t size = 0, slots = 0;
  if (o.size_arg != NULL) {
    if (cli_parse_size(&c, "size", o.size_arg, &size) != 0)
      return 1;
  } else if (registry_geometry(&c, &size, &slots) != 0) {
    return 1;
  }
  if (o.slots_arg != NULL &&
      cli_parse_uint(&c, "slot count", o.slots_arg, UINT64_MAX, &slots) != 0)
    return 1;
  if (o.slots_arg != NULL && slots == 0) {
    fprintf(stderr, "%s: bad slot count \"%s\": at least %u\n", c.progname,
            o.slots_arg, PQ_MIN_SLOTS);
    return 1;
  }
  const char *path = cli_queue_path(&c);
  if (path == NULL)
    return 1;

  pq_create_opts co = {.pc_data_size = size,
                       .pc_slots = slots,
                       .pc_flags = o.clobber ? PQ_CLOBBER : 0};
  if (c.verbose) /* -v */
    fprintf(stderr, "Creating %s, %llu bytes, %llu products.\n", path,
            (unsigned long long)size,
            (unsigned long long)(slots ? slots : pq_default_slots(size)));
  pq_t *pq = NULL;
  pq_error err = {0};
  rc = pq_create(path, &co, &pq, &err);
  if (rc != PQ_OK) {
    log_error("create \"%s\" failed: %s", path, err.pe_msg);
    return 1;
  }
  log_debug(
      "created %s: %llu bytes of data, %llu slots, file of %llu bytes", path,
      (unsigned long long)pq_data_size(pq),
      (unsigned long long)pq_slot_count(pq),
      (unsigned long long)pq_file_size(pq_data_size(pq), pq_slot_count(pq)));
  rc = pq_close(pq);
  return rc == PQ_OK ? 0 : 1;
}
