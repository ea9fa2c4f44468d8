/*
 * pqcheck - is the queue sound?  With no option, as LDM's pqcheck: count
 * the writers that have the queue open (exit 3 if any, 0 if none).  Ours is
 * a count of live writers, read from the lock bytes the kernel holds for
 * them, so a writer that crashed is not counted and never leaves the count
 * stuck; pqcheck opens the queue read-only so that it does not count itself.
 * Before it counts, it reads every product as a verifying reader does
 * (pq_set_verify(), pq_next_many(): the control lock held only to find
 * each batch, so writers hardly wait) and reports each whose bytes fail
 * the CRC32C of their commit (exit 4, LDM's "corrupt"): one pass over the
 * queue's bytes at several GB/s, cheap enough to be the default (the
 * figure is in docs/security.md, "Damaged products").  A read that fails
 * on damage other than a product's runs the full check below to name it.
 *
 * New: -C runs the full check of every numbered invariant of the file format
 * (pq_check()) and names the first that fails (exit 4).  It is read-only:
 * what a crash left (a change half done, a dead writer's reservation) is no
 * damage, since the next writer repairs it; -C says so and exits 3, LDM's
 * "a writer is open, or one crashed" (after which ldmadmin repairs with
 * pqcheck -F rather than delete the queue, as it does on 4).  -F opens the
 * queue read-write, which lets the queue repair a crash left behind and
 * reclaim the reservations of dead writers; if damage remains, it rebuilds
 * the indexes and drops what cannot be saved (pq_repair_ex()), names each
 * product it dropped and says what it changed in the header (write head,
 * last insertion time, counts), then checks again.
 */
#include <stdio.h>
#include <unistd.h>

#include "ldmd/site/log.h"
#include "pqutils/common/cli.h"

enum {
  EXIT_CLEAN = 0,   /* no writer */
  EXIT_SYSTEM = 1,  /* system error */
  EXIT_WRITERS = 3, /* writers have the queue open, or a crash left traces */
  EXIT_CORRUPT = 4, /* the queue is inconsistent */
};

static const char usage_text[] =
    "usage: pqcheck [options]\n"
    "options:\n"
    "  (none)     report damaged products (exit 4), count the writers\n"
    "  -C         check every invariant of the queue, read-only (exit 4 if\n"
    "             one fails, 3 if a crash left what the next writer repairs)\n"
    "  -F         open read-write and repair: undo a crash, reclaim the\n"
    "             reservations of dead writers, rebuild a damaged index\n"
    "  -q queue   queue (default: the registry's /queue/path)\n"
    "  -l dest    log to dest: \"\" syslog, \"-\" stderr, or a file\n"
    "  -v         report the writer count\n"
    "  -x         debug\n"
    "  -h         print this text\n"
    "exit: 0 no writer has the queue open (and it is sound), 1 error,\n"
    "      3 writers have it open, or one crashed and left what the next\n"
    "      writer repairs, 4 the queue is inconsistent or holds damaged\n"
    "      products\n";

struct opts {
  bool full;   /* -C */
  bool repair; /* -F */
};

static void report_repairs(const char *path, const pq_check_report *r) {
  if (r->pr_repaired)
    log_notice("repaired: %s had been left mid-change by a crashed "
               "process, or by a change that found its header damaged",
               path);
  if (r->pr_reclaimed > 0)
    log_notice("reclaimed %llu reservations of dead writers in %s",
               (unsigned long long)r->pr_reclaimed, path);
}

/* What a read-only check found that a crash left and a writer repairs;
 * true if anything. */
static bool report_leftovers(const char *path, const pq_check_report *r) {
  if (r->pr_interrupted)
    log_notice("%s was left mid-change by a crashed process; the next "
               "process that locks it and may write it repairs it",
               path);
  if (r->pr_dead_resv > 0)
    log_notice("%s: %llu reservation%s left by a dead writer; writers "
               "reclaim %s when they need the room (pqcheck -F: now)",
               path, (unsigned long long)r->pr_dead_resv,
               r->pr_dead_resv == 1 ? "" : "s",
               r->pr_dead_resv == 1 ? "it" : "them");
  return r->pr_interrupted || r->pr_dead_resv > 0;
}

/* Each product a repair drops is named, up to DROPS_NAMED of them (a slot
 * table overwritten whole could otherwise flood the log); the count says
 * how many there were in all. */
#define DROPS_NAMED 100

static void note_drop(const pq_dropped *d, void *arg) {
  unsigned *n = arg;
  if ((*n)++ >= DROPS_NAMED)
    return;
  char when[32] = "?";
  if (d->pd_inserted != 0)
    pq_ts_format(pq_ts_from_us(d->pd_inserted), when, sizeof when);
  if (d->pd_known)
    log_warning("dropped product %s (inserted %s, slot %u): %s",
                d->pd_info.ident, when, d->pd_slot, d->pd_why);
  else
    log_warning("dropped slot %u (inserted %s, record unreadable): %s",
                d->pd_slot, when, d->pd_why);
}

/* What pq_repair_ex() changed in the header's roots. */
static void report_changes(const char *path, const pq_repair_report *r) {
  if (r->rr_head[0] != r->rr_head[1] ||
      r->rr_head_prev[0] != r->rr_head_prev[1])
    log_notice("%s: write head moved from %llu (after slot %u) to %llu "
               "(after slot %u)",
               path, (unsigned long long)r->rr_head[0], r->rr_head_prev[0],
               (unsigned long long)r->rr_head[1], r->rr_head_prev[1]);
  if (r->rr_last_key[0] != r->rr_last_key[1])
    log_notice("%s: last insertion time was %llu, now %llu us", path,
               (unsigned long long)r->rr_last_key[0],
               (unsigned long long)r->rr_last_key[1]);
  if (r->rr_free_slots[0] != r->rr_free_slots[1])
    log_notice("%s: free slots counted %llu, now %llu", path,
               (unsigned long long)r->rr_free_slots[0],
               (unsigned long long)r->rr_free_slots[1]);
  log_notice("repaired: rebuilt the indexes of %s, dropped %llu damaged "
             "products; the header counted %llu products, the queue holds "
             "%llu",
             path, (unsigned long long)r->rr_dropped,
             (unsigned long long)r->rr_products[0],
             (unsigned long long)r->rr_products[1]);
}

/* Full check (and repair with -F); returns an exit status. */
static int full_check(pq_t *pq, const char *path, const struct opts *o) {
  pq_check_report r;
  int rc = pq_check(pq, &r);
  report_repairs(path, &r);
  if (rc == PQ_CORRUPT && o->repair) {
    log_warning("invariant %d failed: %s", r.pr_invariant, r.pr_msg);
    pq_repair_report rr;
    unsigned named = 0;
    rc = pq_repair_ex(pq, &rr, note_drop, &named);
    if (rc != PQ_OK) {
      log_error("pq_repair failed: %s", pq_last_error(pq)->pe_msg);
      return EXIT_CORRUPT;
    }
    if (named > DROPS_NAMED)
      log_warning("%u more dropped, not named", named - DROPS_NAMED);
    report_changes(path, &rr);
    rc = pq_check(pq, &r);
    report_repairs(path, &r);
  }
  if (rc == PQ_CORRUPT) {
    log_error("%s is inconsistent: invariant %d failed: %s", path,
              r.pr_invariant, r.pr_msg);
    if (!o->repair)
      log_error("run pqcheck -F to repair it");
    return EXIT_CORRUPT;
  }
  if (rc != PQ_OK) {
    log_error("pq_check failed: %s", pq_last_error(pq)->pe_msg);
    return EXIT_SYSTEM;
  }
  bool leftovers = report_leftovers(path, &r);
  log_info("every invariant holds: %llu products, %llu reservations%s",
           (unsigned long long)r.pr_products, (unsigned long long)r.pr_reserved,
           leftovers ? ", and what a crash left (see above)" : "");
  return leftovers ? EXIT_WRITERS : EXIT_CLEAN;
}

/* The default scan's tally. */
struct scan {
  uint64_t newest; /* the last insertion when the scan began: it ends there */
  uint64_t nprods, nbytes, ndamaged;
  bool past; /* reached a product inserted after the scan began */
};

static int scan_one(const pq_prod_info *info, const void *data,
                    const pq_place *place, void *arg) {
  struct scan *t = arg;
  (void)data;
  if (place->pp_inserted > t->newest) {
    t->past = true;
    return 1; /* any non-zero value: the scan stops */
  }
  t->nprods++;
  t->nbytes += info->size;
  return 0;
}

/* Without options: read every product, verified, and report each damaged
 * one.  Returns an exit status: 0, 4 (damage: a product, else the full
 * check's finding, which may be 3 for what a crash left), 1. */
static int scan_products(pq_t *pq, const char *path, const struct opts *o) {
  struct scan t = {0};
  int rc = pq_cursor_newest(pq);
  t.newest = pq_cursor_get(pq);
  pq_cursor_oldest(pq);
  pq_set_verify(pq, PQ_VERIFY_EACH); /* whatever another reader found */
  while (rc == PQ_OK && !t.past && !cli_stopping()) {
    rc = pq_next_many(pq, PQ_FORWARD, NULL, 0, scan_one, &t);
    if (rc == PQ_DAMAGED) { /* not counted; the cursor is past it */
      log_error("%s", pq_last_error(pq)->pe_msg);
      t.ndamaged++;
      rc = PQ_OK;
    }
  }
  if (rc == PQ_CORRUPT) { /* the index or a record: the full check says */
    log_error("%s", pq_last_error(pq)->pe_msg);
    return full_check(pq, path, o);
  }
  if (rc == PQ_OK && !t.past) { /* a stop (SIGTERM, SIGINT) */
    log_notice("stopped after %llu products: the others not checked",
               (unsigned long long)t.nprods);
    return EXIT_SYSTEM;
  }
  if (rc != PQ_OK && rc != PQ_END && !t.past) {
    log_error("cannot read %s: %s", path, pq_last_error(pq)->pe_msg);
    return EXIT_SYSTEM;
  }
  if (t.ndamaged > 0) {
    log_error("%s holds %llu damaged product%s (above): pqcheck -F drops "
              "them",
              path, (unsigned long long)t.ndamaged, t.ndamaged == 1 ? "" : "s");
    return EXIT_CORRUPT;
  }
  log_info("%llu products (%llu bytes) read, none damaged",
           (unsigned long long)t.nprods, (unsigned long long)t.nbytes);
  return EXIT_CLEAN;
}

static int option(struct cli *c, int ch, const char *arg, void *opts) {
  struct opts *o = opts;
  (void)c;
  (void)arg;
  if (ch == 'C')
    o->full = true;
  else /* -F */
    o->repair = true;
  return 0;
}

static const struct cli_spec spec = {":hCFvxl:q:", usage_text, option, NULL};

int main(int argc, char **argv) {
  struct cli c;
  struct opts o = {0};
  int rc = cli_parse(&c, argc, argv, &spec, &o);
  if (rc != CLI_GO_ON)
    return rc;
  cli_signals();
  const char *path = cli_queue_path(&c);
  if (path == NULL)
    return EXIT_SYSTEM;
  int code = PQ_OK;
  pq_t *pq = cli_open_queue(path, o.repair ? 0 : PQ_READONLY, &code);
  if (pq == NULL) /* a file that is not a sound queue is corrupt */
    return code == PQ_FORMAT || code == PQ_VERSION || code == PQ_CORRUPT
               ? EXIT_CORRUPT
               : EXIT_SYSTEM;
  int status = EXIT_CLEAN;
  if (o.full || o.repair)
    status = full_check(pq, path, &o);
  else
    status = scan_products(pq, path, &o);
  unsigned writers = 0;
  if (status != EXIT_SYSTEM) {
    if (pq_writer_count(pq, &writers) != PQ_OK) {
      log_error("cannot count the writers of %s: %s", path,
                pq_last_error(pq)->pe_msg);
      if (status == EXIT_CLEAN)
        status = EXIT_SYSTEM;
    } else {
      if (o.repair && writers > 0)
        writers--; /* ourselves */
      log_info("The writer-counter of the product-queue is %u", writers);
      if (status == EXIT_CLEAN && writers > 0 && !o.repair)
        status = EXIT_WRITERS;
    }
  }
  pq_close(pq);
  return status;
}
