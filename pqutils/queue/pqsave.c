/*
 * pqsave, pqrestore - keep a queue across a reboot.  A queue on /dev/shm
 * dies with the machine; `pqsave QUEUE FILE` writes a snapshot of it to a
 * file (format in snapshot.h) while writers go on inserting, and
 * `pqrestore FILE QUEUE` puts the products back, each with its original
 * insertion time, metadata and signature.  New programs: LDM has neither.
 *
 * The snapshot is consistent without stopping writers: the products are
 * walked oldest first with pq_next(), each read-locked while it is copied,
 * so every saved product is intact and they are saved in insertion order.
 * A product evicted before the walk reaches it is simply not saved, and the
 * walk stops at the newest product present when the save began, so a busy
 * queue cannot keep it going forever.  pqrestore checks the whole file
 * before it touches the queue, so a truncated or damaged snapshot restores
 * nothing.  One source, two programs: pqrestore is built with PQ_RESTORE.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ldmd/site/log.h"
#include "pqutils/common/cli.h"
#include "pqutils/queue/snapshot.h"
#include "pqutils/queue/transfer.h"

#define SAVE_FAILED 1 /* callback stop values */
#define PAST_END 2

static const char save_usage[] =
    "usage: pqsave [options] queue file\n"
    "       pqsave [options] [-q queue] file\n"
    "save a snapshot of a (live) queue to file (\"-\": standard output).\n"
    "options:\n"
    "  -q queue   queue (default: the registry's /queue/path)\n"
    "  -l dest    log to dest: \"\" syslog, \"-\" stderr, or a file\n"
    "  -v         log each product saved\n"
    "  -x         debug\n"
    "  -h         print this text\n";

static const char restore_usage[] =
    "usage: pqrestore [options] file queue\n"
    "       pqrestore [options] file [-q queue]\n"
    "restore the products of a snapshot made by pqsave into a queue, with\n"
    "their insertion times; a missing queue is created.\n"
    "options:\n"
    "  -s size    data size of a queue to create (default: as saved)\n"
    "  -S slots   slot count of a queue to create (default: as saved)\n"
    "  -q queue   queue (default: the registry's /queue/path)\n"
    "  -l dest    log to dest: \"\" syslog, \"-\" stderr, or a file\n"
    "  -v         log each product restored\n"
    "  -x         debug\n"
    "  -h         print this text\n";

struct opts {
  bool restoring; /* pqrestore */
  const char *file;
  const char *size_arg, *slots_arg;
};

/* ---- save ---- */

struct save {
  snap_writer *w;
  uint64_t end;
  char err[512];
};

static int save_one(const pq_prod_info *info, const void *data,
                    const pq_place *place, void *arg) {
  struct save *s = arg;
  if (place->pp_inserted > s->end)
    return PAST_END;
  if (snap_write(s->w, info, place->pp_inserted, data, s->err, sizeof s->err) !=
      0)
    return SAVE_FAILED;
  cli_log_product("", info, false);
  return 0;
}

static int save(pq_t *pq, const char *qpath, const char *file) {
  pq_stats st;
  if (pq_stats_get(pq, &st) != PQ_OK) {
    log_error("pq_stats failed: %s", pq_last_error(pq)->pe_msg);
    return 1;
  }
  struct snap_meta meta = {.data_size = st.ps_data_size,
                           .slots = st.ps_slots,
                           .saved_us = pq_ts_to_us(pq_ts_now()),
                           .newest_us = st.ps_last_key};
  struct save s = {.end = st.ps_last_key};
  if (snap_create(file, &meta, &s.w, s.err, sizeof s.err) != 0) {
    if (cli_stopping())
      log_error("interrupted: no snapshot written to %s", file);
    else
      log_error("%s", s.err);
    return 1;
  }
  pq_cursor_oldest(pq);
  int rc = PQ_OK;
  while (!cli_stopping() &&
         (rc = pq_next(pq, PQ_FORWARD, NULL, save_one, &s)) == PQ_OK)
    ;
  if (cli_stopping()) {
    snap_abort(s.w);
    log_error("interrupted: no snapshot written to %s", file);
    return 1;
  }
  if (rc != PQ_END && rc != PAST_END) {
    if (rc == SAVE_FAILED)
      log_error("%s", s.err);
    else
      log_error("pq_next failed: %s", pq_last_error(pq)->pe_msg);
    snap_abort(s.w);
    return 1;
  }
  uint64_t n = snap_written_count(s.w), bytes = snap_written_bytes(s.w);
  if (snap_commit(s.w, s.err, sizeof s.err) != 0) {
    if (cli_stopping())
      log_error("interrupted: no snapshot written to %s", file);
    else
      log_error("%s", s.err);
    return 1;
  }
  log_notice("saved %llu products (%llu bytes of data) of %s to %s",
             (unsigned long long)n, (unsigned long long)bytes, qpath, file);
  return 0;
}

/* ---- restore ---- */

struct restore {
  snap_reader *r;
  char err[512];
  uint64_t restored, dups, retimed, failed;
};

static int fill_from_snapshot(void *dst, uint64_t size, void *arg) {
  struct restore *k = arg;
  (void)size;
  return snap_read_data(k->r, dst, k->err, sizeof k->err);
}

/* Open the queue, creating it if it does not exist. */
static pq_t *open_or_create(struct cli *c, const char *path,
                            const struct opts *o, const struct snap_meta *m) {
  pq_t *pq = NULL;
  pq_error err = {0};
  if (pq_open(path, 0, &pq, &err) == PQ_OK)
    return pq;
  if (err.pe_code != PQ_SYSTEM || err.pe_errno != ENOENT) {
    log_error("pq_open failed: %s", err.pe_msg);
    return NULL;
  }
  pq_create_opts co = {.pc_data_size = m->data_size, .pc_slots = m->slots};
  if (o->size_arg != NULL &&
      cli_parse_size(c, "size", o->size_arg, &co.pc_data_size) != 0)
    return NULL;
  if (o->slots_arg != NULL && cli_parse_uint(c, "slot count", o->slots_arg,
                                             UINT64_MAX, &co.pc_slots) != 0)
    return NULL;
  if (pq_create(path, &co, &pq, &err) != PQ_OK) {
    log_error("create \"%s\" failed: %s", path, err.pe_msg);
    return NULL;
  }
  log_notice("created %s: %llu bytes of data, %llu slots", path,
             (unsigned long long)pq_data_size(pq),
             (unsigned long long)pq_slot_count(pq));
  return pq;
}

/* Put one record into the queue; 0 go on, -1 stop. */
static int restore_one(pq_t *pq, struct restore *k,
                       const struct snap_record *rec) {
  bool retimed = false;
  int rc = xfer_put(pq, &rec->info, rec->inserted_us, fill_from_snapshot, k,
                    &retimed);
  switch (rc) {
  case PQ_OK:
    k->restored++;
    k->retimed += retimed;
    cli_log_product("", &rec->info, false);
    return 0;
  case PQ_DUP:
    k->dups++;
    cli_log_product("duplicate product: ", &rec->info, false);
    return 0;
  case PQ_BIG:
  case PQ_INVAL:
    k->failed++;
    log_error("product not restored: %s: %s", pq_last_error(pq)->pe_msg,
              rec->info.ident);
    return 0;
  case XFER_FILL_FAILED:
    log_error("%s", k->err);
    return -1;
  default:
    log_error("cannot restore %s: %s", rec->info.ident,
              pq_last_error(pq)->pe_msg);
    return -1;
  }
}

static int restore(struct cli *c, const char *qpath, const struct opts *o) {
  struct restore k = {0};
  struct snap_meta meta;
  uint64_t count = 0, bytes = 0;
  if (snap_open(o->file, &k.r, &meta, k.err, sizeof k.err) != 0 ||
      snap_verify(k.r, &count, &bytes, k.err, sizeof k.err) != 0) {
    log_error("%s; nothing restored", k.err);
    snap_close(k.r);
    return 1;
  }
  log_info("%s: intact snapshot of %llu products (%llu bytes of data)", o->file,
           (unsigned long long)count, (unsigned long long)bytes);
  pq_t *pq = open_or_create(c, qpath, o, &meta);
  if (pq == NULL) {
    snap_close(k.r);
    return 1;
  }
  int status = 0;
  struct snap_record rec;
  int rc = 1;
  while (!cli_stopping() &&
         (rc = snap_next(k.r, &rec, k.err, sizeof k.err)) == 1)
    if (restore_one(pq, &k, &rec) != 0) {
      status = 1;
      break;
    }
  if (status == 0 && cli_stopping()) {
    log_error("interrupted after %llu of %llu products",
              (unsigned long long)(k.restored + k.dups + k.failed),
              (unsigned long long)count);
    status = 1;
  } else if (status == 0 && rc < 0) {
    log_error("%s", k.err);
    status = 1;
  }
  log_notice("restored %llu of %llu products from %s into %s",
             (unsigned long long)k.restored, (unsigned long long)count, o->file,
             qpath);
  if (k.dups > 0 || k.retimed > 0 || k.failed > 0)
    log_notice("duplicates skipped: %llu, given a new insertion time: %llu, "
               "not restored: %llu",
               (unsigned long long)k.dups, (unsigned long long)k.retimed,
               (unsigned long long)k.failed);
  if (k.failed > 0)
    status = 1;
  if (pq_close(pq) != PQ_OK)
    status = 1;
  snap_close(k.r);
  return status;
}

/* ---- command line ---- */

static int option(struct cli *c, int ch, const char *arg, void *opts) {
  struct opts *o = opts;
  (void)c;
  if (ch == 's')
    o->size_arg = arg;
  else /* -S */
    o->slots_arg = arg;
  return 0;
}

/* pqsave QUEUE FILE, pqrestore FILE QUEUE, or FILE alone; then the values
 * of -s and -S, checked before anything is done. */
static int operands(struct cli *c, int argc, char **argv, void *opts) {
  struct opts *o = opts;
  int npos = argc - optind;
  if (npos == 2 && c->queue == NULL) {
    c->queue = argv[optind + (o->restoring ? 1 : 0)];
    o->file = argv[optind + (o->restoring ? 0 : 1)];
  } else if (npos == 1) {
    o->file = argv[optind];
  } else {
    cli_usage_error(c, o->restoring ? restore_usage : save_usage,
                    npos == 0 ? "no snapshot file" : "too many arguments");
    return -1;
  }
  uint64_t v;
  if ((o->size_arg && cli_parse_size(c, "size", o->size_arg, &v) != 0) ||
      (o->slots_arg &&
       cli_parse_uint(c, "slot count", o->slots_arg, UINT64_MAX, &v) != 0))
    return -1;
  return 0;
}

static const struct cli_spec save_spec = {":hvxl:q:", save_usage, NULL,
                                          operands};
static const struct cli_spec restore_spec = {":hvxl:q:s:S:", restore_usage,
                                             option, operands};

int main(int argc, char **argv) {
#ifdef PQ_RESTORE
  const bool restoring = true;
#else
  const bool restoring = false;
#endif
  struct cli c;
  struct opts o = {.restoring = restoring};
  int rc =
      cli_parse(&c, argc, argv, restoring ? &restore_spec : &save_spec, &o);
  if (rc != CLI_GO_ON)
    return rc;
  cli_signals();
  const char *qpath = cli_queue_path(&c);
  if (qpath == NULL)
    return 1;
  int status;
  if (restoring) {
    status = restore(&c, qpath, &o);
  } else {
    pq_t *pq = cli_open_queue(qpath, PQ_READONLY, NULL);
    status = pq != NULL ? save(pq, qpath, o.file) : 1;
    pq_close(pq);
  }
  return status;
}
