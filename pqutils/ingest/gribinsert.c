/*
 * gribinsert - insert each GRIB message of files into the queue as a
 * product, as LDM's gribinsert does: the identifier
 * "<file> !<GRIB name>! <seqno>", whose GRIB name is the one the NOAAPORT
 * ingester gives the same message (grib_file.h: the search for messages
 * and the identifier are libnoaaport's), then, unless -S, a status
 * product ".status.<file> <seqno>" that lists each message inserted.
 *
 * Each file is mapped and searched from its first byte; every message
 * found is inserted from the mapping (no copy).  Signature: the MD5 of the
 * file's name followed by the message, so that the same message in two
 * files is two products (LDM's rule, except that LDM hashes only the first
 * 10,000 bytes of the message, which makes two messages that differ only
 * after that duplicates: one would be lost).
 *
 * A damaged message (truncated, no "7777", an unknown edition) is logged
 * as an error and the search goes on after its "GRIB"; a file that cannot
 * be read is logged and the next one is taken.  Either makes the exit
 * status 3 (LDM's exits 0), as does a message the queue refuses (PQ_BIG,
 * no room); a duplicate does not.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ldmd/site/log.h"
#include "pqutils/common/cli.h"
#include "pqutils/ingest/grib_file.h"

/* LDM's exit codes, and ours. */
enum {
  EXIT_OK = 0,
  EXIT_USAGE = 1,
  EXIT_PQ_OPEN = 2,
  EXIT_INPUT = 3, /* ours: a file or a message could not be inserted */
  EXIT_MD5 = 6,
};

static const char usage_text[] =
    "usage: gribinsert [options] file ...\n"
    "options:\n"
    "  -f feedtype  feedtype of the products (default EXP)\n"
    "  -s seqno     sequence number of the first product (default 0)\n"
    "  -S           no .status product after each file\n"
    "  -q queue     queue (default: the registry's /queue/path)\n"
    "  -l dest      log to dest: \"\" syslog, \"-\" stderr, or a file\n"
    "  -v           log each product inserted\n"
    "  -x           debug\n"
    "  -h           print this text\n"
    "exit: 0 every message inserted or already there, 1 bad usage,\n"
    "      2 queue not opened, 3 a file or message could not be inserted\n";

struct opts {
  uint32_t feedtype;
  uint32_t seqno;
  bool no_status;
  char **files;
  int nfiles;
};

/* One message inserted (or not), for the status product. */
struct done {
  int status;
  uint32_t seqno;
  uint64_t size;
  char ident[256];
};

struct run {
  pq_t *pq;
  struct opts *o;
  char origin[PQ_ORIGIN_MAX + 1];
  struct np_log log;
  struct np_namer namer;
  int exit;
  struct done *done; /* this file's messages */
  size_t ndone, cap;
};

static void to_logger(void *arg, int level, const char *msg) {
  (void)arg;
  if (ldm_log_enabled((enum ldm_log_level)level))
    ldm_log_write((enum ldm_log_level)level, "gribinsert.c", "name", 0, "%s",
                  msg);
}

static int option(struct cli *c, int ch, const char *arg, void *opts) {
  struct opts *o = opts;
  uint64_t v;

  switch (ch) {
  case 'f':
    return cli_parse_feedtype_some(c, usage_text, arg, &o->feedtype);
  case 's':
    if (cli_parse_uint(c, "sequence number", arg, UINT32_MAX, &v) != 0)
      return -1;
    o->seqno = (uint32_t)v;
    return 0;
  case 'S':
    o->no_status = true;
    return 0;
  default:
    return -1;
  }
}

static int operands(struct cli *c, int argc, char **argv, void *opts) {
  struct opts *o = opts;

  if (optind >= argc) {
    cli_usage_error(c, usage_text, "no file to insert");
    return -1;
  }
  o->files = argv + optind;
  o->nfiles = argc - optind;
  return 0;
}

static const struct cli_spec spec = {":hvxl:q:f:s:S", usage_text, option,
                                     operands};

/* MD5 of the file's name and then the message. */
static int signature(const char *file, const uint8_t *msg, size_t len,
                     uint8_t sig[PQ_SIGLEN]) {
  pq_md5_ctx *ctx = pq_md5_new();

  if (ctx == NULL)
    return -1;
  if (pq_md5_update(ctx, file, strlen(file)) != 0 ||
      pq_md5_update(ctx, msg, len) != 0) {
    pq_md5_free(ctx);
    return -1;
  }
  return pq_md5_final(ctx, sig); /* frees ctx */
}

static void note_done(struct run *r, const pq_prod_info *info, int status) {
  if (r->o->no_status)
    return;
  if (r->ndone == r->cap) {
    size_t cap = r->cap ? r->cap * 2 : 64;
    struct done *p = realloc(r->done, cap * sizeof *p);

    if (p == NULL) {
      log_error("no memory to remember %zu messages for the status product",
                cap);
      return;
    }
    r->done = p;
    r->cap = cap;
  }
  struct done *d = &r->done[r->ndone++];
  d->status = status;
  d->seqno = info->seqno;
  d->size = info->size;
  snprintf(d->ident, sizeof d->ident, "%s", info->ident);
}

/* Insert one message.  @return the insert's status, or 1 if the MD5 could
 * not be computed (then nothing is inserted). */
static int insert_message(struct run *r, const char *file, const uint8_t *msg,
                          size_t len, uint32_t seqno) {
  pq_prod_info info;

  memset(&info, 0, sizeof info);
  np_grib_file_ident(msg, len, file, seqno, info.ident, &r->namer);
  snprintf(info.origin, sizeof info.origin, "%s", r->origin);
  info.feedtype = r->o->feedtype;
  info.seqno = seqno;
  info.size = len;
  if (signature(file, msg, len, info.signature) != 0) {
    log_error("cannot compute the MD5 of message %u of %s", (unsigned)seqno,
              file);
    r->exit = EXIT_MD5;
    return 1;
  }
  info.arrival = pq_ts_now();
  int rc = pq_insert(r->pq, &info, msg);
  log_info("%d %s", rc, info.ident); /* LDM's line */
  if (rc != PQ_OK && rc != PQ_DUP) {
    log_error("cannot insert message %u of %s (%zu bytes): %s", (unsigned)seqno,
              file, len, pq_strerror(rc));
    if (r->exit == EXIT_OK)
      r->exit = EXIT_INPUT;
  }
  note_done(r, &info, rc);
  return rc;
}

/* The status product of a file: LDM's text, then a line per message. */
static void insert_status(struct run *r, const char *file, uint64_t fsize,
                          uint64_t inserted) {
  size_t cap = 256 + strlen(file) + r->ndone * 300;
  char *text = malloc(cap);
  char when[64];
  time_t now = time(NULL);
  struct tm tm;
  size_t n;

  if (text == NULL) {
    log_error("no memory for the status product of %s", file);
    return;
  }
  if (localtime_r(&now, &tm) == NULL ||
      strftime(when, sizeof when, "%a %b %e %H:%M:%S %Y\n", &tm) == 0)
    snprintf(when, sizeof when, "%lld\n", (long long)now);
  n = (size_t)snprintf(text, cap,
                       "%s complete (%llu bytes) at %sInserted %llu of %llu\n",
                       file, (unsigned long long)fsize, when,
                       (unsigned long long)inserted, (unsigned long long)fsize);
  for (size_t i = 0; i < r->ndone && n < cap; i++) {
    const struct done *d = &r->done[i];

    n += (size_t)snprintf(text + n, cap - n, "%3d %5u %8llu %s\n", d->status,
                          (unsigned)d->seqno, (unsigned long long)d->size,
                          d->ident);
  }
  if (n >= cap)
    n = cap - 1;

  pq_prod_info info;
  memset(&info, 0, sizeof info);
  snprintf(info.ident, sizeof info.ident, ".status.%.200s %06u", file,
           (unsigned)r->o->seqno);
  snprintf(info.origin, sizeof info.origin, "%s", r->origin);
  info.feedtype = r->o->feedtype;
  info.seqno = r->o->seqno;
  info.size = n;
  info.arrival = pq_ts_now();
  if (pq_md5(text, n, info.signature) != 0) {
    log_error("cannot compute the MD5 of the status product of %s", file);
    r->exit = EXIT_MD5;
    free(text);
    return;
  }
  int rc = pq_insert(r->pq, &info, text);
  if (rc != PQ_OK && rc != PQ_DUP)
    log_error("cannot insert the status product of %s: %s", file,
              pq_strerror(rc));
  cli_log_product("", &info, false);
  r->o->seqno++;
  free(text);
}

/* Search the mapped file and insert its messages. */
static void insert_messages(struct run *r, const char *file, const uint8_t *p,
                            size_t size) {
  uint64_t inserted = 0;
  size_t from = 0;
  struct np_grib_msg m;
  int rc;

  r->ndone = 0;
  while ((rc = np_grib_next(p, size, from, &m)) != NP_GRIB_END) {
    if (cli_stopping()) {
      log_notice("interrupted: the rest of %s not inserted, from byte %zu",
                 file, from);
      if (r->exit == EXIT_OK)
        r->exit = EXIT_INPUT;
      return;
    }
    log_debug("griboff %zu", m.off);
    from = m.resume;
    if (rc != NP_GRIB_MSG) {
      log_error("%s: the GRIB at byte %zu (edition %d, length %llu): %s; "
                "searching on from byte %zu",
                file, m.off, m.edition, (unsigned long long)m.len,
                np_grib_scan_text(rc), from);
      if (r->exit == EXIT_OK)
        r->exit = EXIT_INPUT;
      continue;
    }
    uint32_t seqno = r->o->seqno++;
    if (insert_message(r, file, p + m.off, (size_t)m.len, seqno) == PQ_OK)
      inserted += m.len;
  }
  if (!r->o->no_status && r->ndone > 0)
    insert_status(r, file, size, inserted);
}

static void insert_file(struct run *r, const char *file) {
  struct stat st;
  int fd;

  log_notice("open and memorymap %s", file); /* LDM's line */
  fd = open(file, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    log_error("open: %s: %s", file, strerror(errno));
    r->exit = r->exit == EXIT_OK ? EXIT_INPUT : r->exit;
    return;
  }
  const char *why = fstat(fd, &st) != 0    ? strerror(errno)
                    : !S_ISREG(st.st_mode) ? "not a regular file"
                                           : NULL;
  if (why != NULL) {
    log_error("%s: %s", file, why);
    close(fd);
    r->exit = r->exit == EXIT_OK ? EXIT_INPUT : r->exit;
    return;
  }
  size_t size = (size_t)st.st_size;
  void *p = size > 0 ? mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
  close(fd);
  if (size > 0 && p == MAP_FAILED) {
    log_error("mmap: %s: %s", file, strerror(errno));
    r->exit = r->exit == EXIT_OK ? EXIT_INPUT : r->exit;
    return;
  }
  log_notice("%zu bytes memory mapped", size); /* LDM's line */
  insert_messages(r, file, p, size);
  if (size > 0)
    munmap(p, size);
}

int main(int argc, char **argv) {
  static struct run r;
  struct cli c;
  struct opts o = {.feedtype = PQ_FT_EXP};
  int rc = cli_parse(&c, argc, argv, &spec, &o);

  if (rc != CLI_GO_ON)
    return rc;
  cli_signals();
  r.o = &o;
  r.log = (struct np_log){to_logger, NULL, (int)ldm_log_get_level()};
  r.namer = (struct np_namer){.log = &r.log};
  cli_hostname(&c, r.origin);
  const char *path = cli_queue_path(&c);
  r.pq = path != NULL ? cli_open_queue(path, 0, NULL) : NULL;
  if (r.pq == NULL)
    return EXIT_PQ_OPEN;
  for (int i = 0; i < o.nfiles && !cli_stopping(); i++) {
    r.log.level = (int)ldm_log_get_level(); /* SIGUSR2 may change it */
    insert_file(&r, o.files[i]);
  }
  if (cli_stopping() && r.exit == EXIT_OK)
    r.exit = EXIT_INPUT;
  pq_close(r.pq);
  free(r.done);
  return r.exit;
}
