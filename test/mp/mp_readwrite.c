/*
 * mp_readwrite.c - writer and reader processes on one queue at once.
 *
 * W writer processes insert N products in all (random sizes and contents,
 * the MD5 of the data as signature, an ident that names the writer and its
 * sequence number) while R reader processes follow the queue with pq_next()
 * and pq_wait().  Every child opens the queue itself and reports through its
 * exit status; the parent checks the queue with pq_check() at the end.
 *
 * Two modes:
 *   exact (-x)  the queue holds everything: each reader must see every
 *               product exactly once, in insertion order, with each
 *               writer's sequence consecutive, byte-identical.
 *   evict       a small queue forces eviction: readers check that what they
 *               read is intact and in order; some callbacks sleep while
 *               holding their product and check that its bytes did not change
 *               (a held product is never overwritten); writers may see only
 *               PQ_OK or PQ_LOCKED (counted and printed).
 *
 * usage: mp_readwrite [-x] [-w writers] [-r readers] [-n products]
 *                     [-s data_bytes] [-S slots] [-H hold_one_in]
 *                     [-d deadline_s] [seed]
 * The seed is printed and may be given back as the argument or PQ_TEST_SEED.
 */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pq/format.h"
#include "pq/pq.h"
#include "test/mp/mp_util.h"

#define MAX_KIDS 16
#define MIN_SIZE 100u
#define MAX_SIZE 65536u
#define RND8(x) (((x) + 7u) / 8u * 8u)

struct writer_stats {
  uint64_t written, locked, gave_up;
};

struct reader_stats {
  uint64_t read, held, turnover, lagging, missed, dup_or_back;
};

/* Shared with the children (an anonymous mapping, not a queue handle). */
struct shared {
  atomic_uint ready;    /* children with their handle open */
  atomic_uint finished; /* writers that stopped writing, for any reason */
  struct writer_stats w[MAX_KIDS];
  struct reader_stats r[MAX_KIDS];
};

struct config {
  bool exact;
  unsigned writers, readers;
  uint64_t products; /* in all */
  uint64_t data_size, slots;
  unsigned hold_one_in; /* 0: never hold */
  int deadline_s;
  uint64_t seed;
  char path[512];
  struct shared *sh;
};

struct child {
  const struct config *cfg;
  unsigned id;
};

static uint64_t per_writer(const struct config *c, unsigned w) {
  return c->products / c->writers + (w < c->products % c->writers ? 1 : 0);
}

static uint64_t product_key(unsigned w, uint64_t seq) {
  return (uint64_t)w << 40 | seq;
}

static uint64_t product_size(const struct config *c, unsigned w, uint64_t seq) {
  uint64_t s = mp_mix(c->seed, product_key(w, seq));
  return mp_rand_range(&s, MIN_SIZE, MAX_SIZE);
}

static uint64_t content_seed(const struct config *c, unsigned w, uint64_t seq) {
  return mp_mix(c->seed ^ 0x636f6e74656e74ULL, product_key(w, seq));
}

static void make_names(unsigned w, uint64_t seq, char *origin, size_t olen,
                       char *ident, size_t ilen) {
  snprintf(origin, olen, "mp-writer-%u", w);
  snprintf(ident, ilen, "mp/w%u/s%07" PRIu64, w, seq);
}

/* Bytes a product takes in the data area (the record layout of format.h). */
static uint64_t product_extent(const struct config *c, unsigned w,
                               uint64_t seq) {
  char origin[PQ_ORIGIN_MAX + 1], ident[PQ_IDENT_MAX + 1];
  make_names(w, seq, origin, sizeof origin, ident, sizeof ident);
  return RND8(sizeof(struct pq_rec) + strlen(origin) + strlen(ident)) +
         RND8(product_size(c, w, seq));
}

/* Wait until every child has its handle open, so readers see the start. */
static bool start_barrier(const struct config *c) {
  atomic_fetch_add(&c->sh->ready, 1);
  int64_t deadline = tu_now_us() + 30 * 1000000LL;
  while (atomic_load(&c->sh->ready) < c->writers + c->readers) {
    if (tu_now_us() > deadline) {
      printf("start barrier: not every child opened the queue in 30 s\n");
      return false;
    }
    mp_sleep_us(200);
  }
  return true;
}

/* ---- writers ---- */

static int writer_main(void *arg) {
  const struct child *ch = arg;
  const struct config *c = ch->cfg;
  struct writer_stats *st = &c->sh->w[ch->id];
  int rc = 1;
  uint8_t *buf = malloc(MAX_SIZE);
  pq_t *pq = NULL;
  pq_error err;
  if (buf == NULL)
    goto out;
  if (pq_open(c->path, 0, &pq, &err) != PQ_OK) {
    printf("writer %u: open: %s\n", ch->id, err.pe_msg);
    goto out;
  }
  if (!start_barrier(c))
    goto out;
  uint64_t n = per_writer(c, ch->id);
  for (uint64_t seq = 0; seq < n; seq++) {
    pq_prod_info info;
    memset(&info, 0, sizeof info);
    info.arrival = pq_ts_now();
    info.feedtype = PQ_FT_EXP;
    info.seqno = (uint32_t)seq;
    info.size = product_size(c, ch->id, seq);
    make_names(ch->id, seq, info.origin, sizeof info.origin, info.ident,
               sizeof info.ident);
    mp_fill(buf, info.size, content_seed(c, ch->id, seq));
    if (pq_md5(buf, info.size, info.signature) != 0) {
      printf("writer %u: pq_md5 failed\n", ch->id);
      goto out;
    }
    int irc;
    unsigned tries = 0;
    while ((irc = pq_insert(pq, &info, buf)) == PQ_LOCKED && ++tries < 2000) {
      st->locked++;
      mp_sleep_us(500);
    }
    if (irc == PQ_LOCKED) {
      st->locked++;
      st->gave_up++;
      continue;
    }
    if (irc != PQ_OK) {
      char what[64];
      snprintf(what, sizeof what, "writer %u: insert seq %" PRIu64, ch->id,
               seq);
      mp_ok(irc, pq, what);
      goto out;
    }
    st->written++;
  }
  rc = 0;
out:
  atomic_fetch_add(&c->sh->finished, 1);
  if (pq != NULL && pq_close(pq) != PQ_OK && rc == 0)
    rc = 1;
  free(buf);
  return rc;
}

/* ---- readers ---- */

struct reader_state {
  const struct config *cfg;
  unsigned id;
  uint64_t rng;
  uint64_t last_inserted;
  int64_t last_seq[MAX_KIDS]; /* -1: none yet */
  struct reader_stats *st;
  pq_t *watch; /* a second handle, to watch evictions during a hold */
  int64_t t0_sec;
  char why[768];
};

/* Every check of one product; 0 if sound, else 1 with the reason in why. */
static int check_product(const pq_prod_info *info, const void *data,
                         const pq_place *place, void *arg) {
  struct reader_state *rs = arg;
  const struct config *c = rs->cfg;
  unsigned w;
  uint64_t seq;
  char tail;
  if (sscanf(info->ident, "mp/w%u/s%" SCNu64 "%c", &w, &seq, &tail) != 2 ||
      w >= c->writers || seq >= per_writer(c, w)) {
    snprintf(rs->why, sizeof rs->why, "unexpected ident \"%s\"", info->ident);
    return 1;
  }
  char origin[PQ_ORIGIN_MAX + 1], ident[PQ_IDENT_MAX + 1];
  make_names(w, seq, origin, sizeof origin, ident, sizeof ident);
  if (strcmp(info->origin, origin) != 0 || strcmp(info->ident, ident) != 0 ||
      info->feedtype != PQ_FT_EXP || info->seqno != (uint32_t)seq ||
      info->size != product_size(c, w, seq) ||
      info->arrival.sec < rs->t0_sec - 60 ||
      info->arrival.sec > pq_ts_now().sec + 60 || info->arrival.usec < 0 ||
      info->arrival.usec > 999999) {
    snprintf(rs->why, sizeof rs->why,
             "%s: metadata wrong (origin \"%s\", feedtype %#x, seqno %u, "
             "size %" PRIu64 ")",
             info->ident, info->origin, info->feedtype, info->seqno,
             info->size);
    return 1;
  }
  if (place->pp_inserted <= rs->last_inserted) {
    snprintf(rs->why, sizeof rs->why,
             "%s: insertion time %" PRIu64 " not after %" PRIu64, info->ident,
             place->pp_inserted, rs->last_inserted);
    return 1;
  }
  int64_t last = rs->last_seq[w];
  if ((int64_t)seq <= last || (c->exact && (int64_t)seq != last + 1)) {
    snprintf(rs->why, sizeof rs->why,
             "%s: writer %u sequence %" PRIu64 " after %" PRId64, info->ident,
             w, seq, last);
    rs->st->dup_or_back++;
    return 1;
  }
  /* The first word ties the data to this ident; the MD5 to its signature. */
  uint64_t s = content_seed(c, w, seq), first = mp_rand(&s), got = 0;
  memcpy(&got, data, info->size < 8 ? info->size : 8);
  if (info->size >= 8 && got != first) {
    snprintf(rs->why, sizeof rs->why, "%s: data belongs to another product",
             info->ident);
    return 1;
  }
  uint8_t sig[PQ_SIGLEN];
  if (pq_md5(data, info->size, sig) != 0 ||
      memcmp(sig, info->signature, PQ_SIGLEN) != 0) {
    snprintf(rs->why, sizeof rs->why, "%s: MD5 of the data differs",
             info->ident);
    return 1;
  }
  if (c->hold_one_in && mp_rand(&rs->rng) % c->hold_one_in == 0) {
    /* Hold it while the writers evict around it: it must not change.  If
     * the queue evicted as many products as it held meanwhile, the write
     * head went all the way round and had to jump over this one. */
    pq_stats before, after;
    int src = pq_stats_get(rs->watch, &before);
    mp_sleep_us((int64_t)mp_rand_range(&rs->rng, 1000, 8000));
    if (src == PQ_OK && pq_stats_get(rs->watch, &after) == PQ_OK &&
        after.ps_evicted - before.ps_evicted >= before.ps_nprods)
      rs->st->turnover++;
    uint8_t again[PQ_SIGLEN];
    if (pq_md5(data, info->size, again) != 0 ||
        memcmp(again, sig, PQ_SIGLEN) != 0) {
      snprintf(rs->why, sizeof rs->why,
               "%s: data changed while the reader held it", info->ident);
      return 1;
    }
    rs->st->held++;
  }
  rs->st->missed += (uint64_t)((int64_t)seq - last - 1);
  rs->st->lagging += place->pp_oldest;
  rs->last_seq[w] = (int64_t)seq;
  rs->last_inserted = place->pp_inserted;
  rs->st->read++;
  return 0;
}

static int reader_main(void *arg) {
  const struct child *ch = arg;
  const struct config *c = ch->cfg;
  struct reader_state rs;
  memset(&rs, 0, sizeof rs);
  rs.cfg = c;
  rs.id = ch->id;
  rs.rng = mp_mix(c->seed, 0x7265616465720000ULL + ch->id);
  rs.st = &c->sh->r[ch->id];
  rs.t0_sec = pq_ts_now().sec;
  for (unsigned w = 0; w < MAX_KIDS; w++)
    rs.last_seq[w] = -1;
  pq_t *pq;
  pq_error err;
  if (pq_open(c->path, PQ_READONLY, &pq, &err) != PQ_OK ||
      pq_open(c->path, PQ_READONLY, &rs.watch, &err) != PQ_OK) {
    printf("reader %u: open: %s\n", ch->id, err.pe_msg);
    pq_close(pq);
    return 1;
  }
  if (!start_barrier(c)) {
    pq_close(rs.watch);
    pq_close(pq);
    return 1;
  }
  int64_t deadline = tu_now_us() + (int64_t)c->deadline_s * 1000000;
  int rc = 1;
  for (;;) {
    if (tu_now_us() > deadline) {
      printf("reader %u: deadline: read %" PRIu64 " of %" PRIu64 "\n", ch->id,
             rs.st->read, c->products);
      break;
    }
    if (c->exact && rs.st->read == c->products) {
      rc = 0;
      break;
    }
    unsigned fin = atomic_load(&c->sh->finished);
    int nrc = pq_next(pq, PQ_FORWARD, NULL, check_product, &rs);
    if (nrc == PQ_OK)
      continue;
    if (nrc == PQ_END) {
      if (!c->exact && fin == c->writers) {
        rc = 0; /* the writers had stopped before this pass found the end */
        break;
      }
      int wrc = pq_wait(pq, 200);
      if (wrc != PQ_OK && wrc != PQ_TIMEDOUT) {
        mp_ok(wrc, pq, "reader: pq_wait");
        break;
      }
      continue;
    }
    if (nrc > 0)
      printf("reader %u: %s\n", ch->id, rs.why);
    else
      mp_ok(nrc, pq, "reader: pq_next");
    break;
  }
  if (pq_close(rs.watch) != PQ_OK || pq_close(pq) != PQ_OK)
    rc = 1;
  return rc;
}

/* ---- parent ---- */

static void usage(void) {
  fprintf(stderr, "usage: mp_readwrite [-x] [-w writers] [-r readers] "
                  "[-n products] [-s data_bytes] [-S slots] [-H hold_one_in] "
                  "[-d deadline_s] [seed]\n");
  exit(2);
}

static uint64_t arg_u64(const char *s) {
  uint64_t v;
  if (!mp_parse_u64(s, &v))
    usage();
  return v;
}

static bool final_check(const struct config *c) {
  pq_t *pq;
  pq_error err;
  if (pq_open(c->path, 0, &pq, &err) != PQ_OK) {
    printf("reopen: %s\n", err.pe_msg);
    return false;
  }
  bool ok = true;
  pq_check_report rep;
  int rc = pq_check(pq, &rep);
  if (rc != PQ_OK) {
    printf("FAIL pq_check: %s: invariant %d: %s\n", pq_errname(rc),
           rep.pr_invariant, rep.pr_msg);
    ok = false;
  } else if (rep.pr_reserved != 0 || rep.pr_reclaimed != 0) {
    printf("FAIL pq_check: %" PRIu64 " reservations left, %" PRIu64
           " reclaimed, after every writer closed\n",
           rep.pr_reserved, rep.pr_reclaimed);
    ok = false;
  }
  pq_stats st;
  if (!mp_ok(pq_stats_get(pq, &st), pq, "pq_stats_get"))
    ok = false;
  else {
    printf("queue: %" PRIu64 " products, %" PRIu64 " bytes, %" PRIu64
           " evicted, %" PRIu64 " reserved, %u writer(s), full=%d\n",
           st.ps_nprods, st.ps_nbytes, st.ps_evicted, st.ps_nreserved,
           st.ps_writers, st.ps_is_full);
    if (st.ps_nreserved != 0 || st.ps_writers != 1) {
      printf("FAIL stats: %" PRIu64 " reservations and %u writers after "
             "the writers closed\n",
             st.ps_nreserved, st.ps_writers);
      ok = false;
    }
    if (c->exact && (st.ps_nprods != c->products || st.ps_evicted != 0)) {
      printf("FAIL exact mode: the queue should hold all %" PRIu64
             " products without eviction\n",
             c->products);
      ok = false;
    }
  }
  pq_close(pq);
  return ok;
}

/* Fills *c from the command line, exiting through usage() on a bad one. */
static void parse_args(int argc, char **argv, struct config *c) {
  int opt;
  while ((opt = getopt(argc, argv, "xw:r:n:s:S:H:d:")) != -1) {
    switch (opt) {
    case 'x':
      c->exact = true;
      break;
    case 'w':
      c->writers = (unsigned)arg_u64(optarg);
      break;
    case 'r':
      c->readers = (unsigned)arg_u64(optarg);
      break;
    case 'n':
      c->products = arg_u64(optarg);
      break;
    case 's':
      c->data_size = arg_u64(optarg);
      break;
    case 'S':
      c->slots = arg_u64(optarg);
      break;
    case 'H':
      c->hold_one_in = (unsigned)arg_u64(optarg);
      break;
    case 'd':
      c->deadline_s = (int)arg_u64(optarg);
      break;
    default:
      usage();
    }
  }
  if (c->writers < 1 || c->writers > MAX_KIDS || c->readers > MAX_KIDS ||
      c->products < c->writers || c->products >= (1ULL << 40))
    usage();
  if (optind < argc) {
    if (!mp_parse_u64(argv[optind], &c->seed))
      usage();
  } else {
    c->seed = mp_seed_from_env("PQ_TEST_SEED");
  }
}

/* Exact mode: room for everything, and not a byte of slack needed. */
static void size_for_exact(struct config *c) {
  uint64_t total = 0;
  for (unsigned w = 0; w < c->writers; w++)
    for (uint64_t s = 0; s < per_writer(c, w); s++)
      total += product_extent(c, w, s);
  c->data_size = total + (64u << 10);
  c->slots = c->products + 64;
}

/* Creates (clobbering) the queue and closes it again: no handle may cross
 * fork(). */
static bool create_queue(const struct config *c) {
  pq_create_opts opts = {.pc_data_size = c->data_size,
                         .pc_slots = c->slots,
                         .pc_flags = PQ_CLOBBER};
  pq_t *pq;
  pq_error err;
  if (pq_create(c->path, &opts, &pq, &err) != PQ_OK) {
    printf("FAIL create %s: %s\n", c->path, err.pe_msg);
    return false;
  }
  pq_close(pq);
  return true;
}

/* Spawns the readers, then the writers, and waits for them all; returns the
 * number that failed and the seconds taken in *secs. */
static int run_children(struct config *c, double *secs) {
  struct child args[2 * MAX_KIDS];
  struct mp_child kids[2 * MAX_KIDS];
  memset(kids, 0, sizeof kids);
  int nk = 0;
  int64_t t0 = tu_now_us();
  for (unsigned i = 0; i < c->readers; i++, nk++) {
    args[nk] = (struct child){.cfg = c, .id = i};
    snprintf(kids[nk].name, sizeof kids[nk].name, "reader %u", i);
    kids[nk].pid = mp_spawn(reader_main, &args[nk]);
  }
  for (unsigned i = 0; i < c->writers; i++, nk++) {
    args[nk] = (struct child){.cfg = c, .id = i};
    snprintf(kids[nk].name, sizeof kids[nk].name, "writer %u", i);
    kids[nk].pid = mp_spawn(writer_main, &args[nk]);
  }
  int failed =
      mp_wait_children(kids, nk, t0 + ((int64_t)c->deadline_s + 30) * 1000000);
  *secs = (double)(tu_now_us() - t0) / 1e6;
  return failed;
}

/* Prints what the writers and readers counted and returns how many of the
 * checks on those counts failed. */
static int report_counts(const struct config *c, double secs) {
  int failed = 0;
  uint64_t written = 0, locked = 0, gave_up = 0;
  for (unsigned i = 0; i < c->writers; i++) {
    written += c->sh->w[i].written;
    locked += c->sh->w[i].locked;
    gave_up += c->sh->w[i].gave_up;
  }
  printf("writers: %" PRIu64 " inserted in %.2f s, PQ_LOCKED %" PRIu64
         " time(s), %" PRIu64 " product(s) given up\n",
         written, secs, locked, gave_up);
  for (unsigned i = 0; i < c->readers; i++) {
    const struct reader_stats *r = &c->sh->r[i];
    printf("reader %u: read %" PRIu64 ", missed (evicted first) %" PRIu64
           ", held and rechecked %" PRIu64 " (%" PRIu64
           " across a full turnover), read as oldest %" PRIu64 "\n",
           i, r->read, r->missed, r->held, r->turnover, r->lagging);
    if (c->exact && r->read != c->products) {
      printf("FAIL reader %u read %" PRIu64 " of %" PRIu64 "\n", i, r->read,
             c->products);
      failed++;
    }
    if (c->hold_one_in && r->held == 0) {
      printf("FAIL reader %u never held a product\n", i);
      failed++;
    }
  }
  uint64_t turnovers = 0;
  for (unsigned i = 0; i < c->readers; i++)
    turnovers += c->sh->r[i].turnover;
  if (c->hold_one_in && c->readers > 0 && turnovers == 0) {
    printf("FAIL no hold lasted a full turnover of the queue: the test did "
           "not prove that writers jump over held products\n");
    failed++;
  }
  if (gave_up != 0) {
    printf("FAIL writers gave up on %" PRIu64 " product(s) after PQ_LOCKED\n",
           gave_up);
    failed++;
  }
  return failed;
}

int main(int argc, char **argv) {
  struct config c = {.writers = 4,
                     .readers = 4,
                     .products = 40000,
                     .data_size = 4u << 20,
                     .slots = 1024,
                     .hold_one_in = 0,
                     .deadline_s = 150};
  parse_args(argc, argv, &c);
  if (c.exact)
    size_for_exact(&c);
  mp_queue_path(c.path, sizeof c.path, c.exact ? "mp_exact" : "mp_evict");
  printf("mp_readwrite: seed %" PRIu64 " (PQ_TEST_SEED=%" PRIu64
         " to repeat), %s mode, %u writers, %u readers, %" PRIu64
         " products of %u..%u bytes, queue %s: %" PRIu64 " data bytes, %" PRIu64
         " slots, hold 1 in %u\n",
         c.seed, c.seed, c.exact ? "exact" : "evict", c.writers, c.readers,
         c.products, MIN_SIZE, MAX_SIZE, c.path, c.data_size, c.slots,
         c.hold_one_in);
  if (!create_queue(&c))
    return 1;

  c.sh = mp_shared(sizeof *c.sh);
  double secs;
  int failed = run_children(&c, &secs);
  failed += report_counts(&c, secs);
  if (!final_check(&c))
    failed++;
  unlink(c.path);
  mp_unshare(c.sh, sizeof *c.sh);
  printf("%s (seed %" PRIu64 ")\n", failed ? "FAILED" : "PASSED", c.seed);
  return failed ? 1 : 0;
}
