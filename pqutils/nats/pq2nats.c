/*
 * pq2nats - publish the products of a queue to a NATS JetStream stream
 * (the wire format is ldmnats.h's, the manual pq2nats.1).  This
 * file owns the program: its options, the reading loop over the queue (in
 * batches, pq_next_many(), as pqact), the asynchronous publishes with at
 * most -m messages in flight, the chunking of products larger than the
 * server's max_payload, the retries, and the durable position (-S).
 *
 * The position is pqact's state file and low-water mark
 * (pqutils/common/cli_state.h): each product read is begun in the state, and
 * released when JetStream has acknowledged its product message, which is
 * published only after all its chunks were acknowledged; the mark then
 * moves over the oldest products whose publishes are all acknowledged, and
 * only over those.  A restart resumes after the mark: nothing acknowledged
 * is published again but what a kill -9 caught in flight, which the
 * stream drops (Nats-Msg-Id is the signature; chunk i's is
 * <signature>.<i>).
 *
 * Order: chunks go out as soon as a product is read, but product messages
 * go out in the queue's order, each once the chunks of its own product
 * are acknowledged, so that a stream's consumer sees the products in the
 * queue's order, failures included (below).
 *
 * The books of what is in flight, and the rules of order, retries and
 * the position that they keep, are inflight.h's (a unit without libnats,
 * test/nats/test_nats_inflight.c); this file drives them: it makes and
 * publishes the messages, and hands the books each acknowledgment.
 *
 * Threads: the main thread reads the queue and publishes; libnats's thread
 * for the acknowledgments runs on_ack(), which only counts, under `mu`,
 * hands a failed message back for a retry, and an acknowledged one to the
 * main thread, which destroys it (the thread that allocates frees).  The state
 * and the ring of products in flight are used under `mu` only.  A publish that
 * fails or is not acknowledged within ACK_WAIT_MS is published again (the same
 * message, the same Msg-Id) after a bounded wait, once the connection is
 * up; never skipped.  After a failure or a disconnect nothing new goes out
 * until every message then unacknowledged is published again, in the
 * queue's order, and acknowledged (recovering()), so that a failure does
 * not let later products overtake the ones it lost (a server that
 * refuses a message but stores the ones after it still can).  The
 * queue's reader never waits inside a batch: when -m (or
 * MAX_BYTES_IN_FLIGHT) is reached the batch ends before the product,
 * which the next batch offers again.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <nats/nats.h>

#include "ldmd/site/log.h"
#include "pqutils/common/cli.h"
#include "pqutils/nats/inflight.h"
#include "pqutils/nats/ldmnats.h"
#include "pqutils/common/cli_state.h"

static const char usage_text[] =
    "usage: pq2nats [options]\n"
    "options:\n"
    "  -v           log each product published\n"
    "  -x           debug\n"
    "  -l dest      log to dest: \"\" syslog, \"-\" stderr, or a file\n"
    "  -q queue     queue (default: the registry's /queue/path)\n" LDMNATS_USAGE
    "  -f feedtype  products of this feedtype only (default ANY)\n"
    "  -p pattern   products whose identifier matches this ERE (default .*)\n"
    "  -o offset    start with products created offset seconds ago (the\n"
    "               state file is not read)\n"
    "  -i interval  at the end of the queue, wait up to interval seconds\n"
    "               at a time for new products (default 15)\n"
    "  -S statefile the position (default: <queue>.pq2nats.state)\n"
    "  -r rulesfile subject rules: feedtype<TAB>ERE<TAB>template lines\n"
    "  -m maxpending  messages in flight at most (default 4096)\n"
    "  -n           exit once the end of the queue is reached and every\n"
    "               publish is acknowledged\n"
    "  -w seconds   a created stream's duplicate window (default 120)\n"
    "  -R replicas  a created stream's replicas (default 1)\n"
    "  -h           print this text\n";

/* An acknowledgment not come within this many milliseconds: published
 * again. */
#define ACK_WAIT_MS 5000
/* The most bytes of data in flight (a product larger than this goes alone). */
#define MAX_BYTES_IN_FLIGHT (64u * 1024 * 1024)
/* How long a stop waits for the acknowledgments of what is in flight. */
#define STOP_WAIT_S 10.0
/* At most one warning about failed publishes in this many seconds. */
#define FAIL_SAY_EVERY_S 10.0

struct opts {
  struct ldmnats_opts nats;
  struct cli_select sel;
  uint64_t interval, maxpending, dup_window, replicas;
  const char *state_path, *rules_path;
  bool once;
};

struct bridge {
  pthread_mutex_t mu;
  pthread_cond_t cv;      /* an acknowledgment came (told only to a waiter) */
  bool waiting;           /* the main thread waits on cv */
  struct p2n_inflight fl; /* what is in flight (inflight.h) */
  /* messages acknowledged, for the main thread to destroy: the thread
   * that allocates them frees them, so that malloc's per-thread caches
   * serve the next products (a third of the time at 1 KiB otherwise) */
  natsMsg **done;
  size_t ndone, done_cap;
  double fail_said; /* last warning */
  uint64_t nfailed; /* failures since the last warning */
  char why[256];    /* the last failure */
  struct cli_state *state;
  /* counters, for the statistics */
  uint64_t nprods, nbytes, nchunked;
};

/* What the main thread keeps. */
struct run {
  struct opts *o;
  struct cli *c;
  struct bridge *b;
  struct ldmnats_conn conn;
  jsOptions *jo; /* the JetStream context's, for a reconnection */
  jsPubOptions po;
  struct ldmnats_rules *rules;
  pq_t *pq;
  uint64_t body_max, chunk_max; /* of a product message, of a chunk */
  /* the subject of the last feedtype, without rules */
  uint32_t last_ft;
  char last_subject[LDMNATS_SUBJECT_MAX];
  bool have_last;
  /* the product just read, if it was the oldest in the queue */
  struct cli_oldest oldest;
  uint64_t evicted; /* the queue's evictions at the last warning (start) */
  bool warned;
  bool failed; /* a runtime failure: exit 2 */
};

/* ---- acknowledgments (libnats's thread) ---- */

/* Hand m back for a publish again (under mu).  Out of memory the books
 * set nomem (service() ends the run) and m is lost from view. */
static void retry_later(struct bridge *b, natsMsg *m, const char *why) {
  snprintf(b->why, sizeof b->why, "%s", why);
  b->nfailed++;
  (void)p2n_fail(&b->fl, m, cli_monotonic());
}

/* Destroy the n messages of v. */
static void destroy_all(natsMsg **v, size_t n) {
  for (size_t i = 0; i < n; i++)
    natsMsg_Destroy(v[i]);
}

/* Room for more acknowledged messages (under mu).  false if out of
 * memory: the caller destroys the message itself. */
static bool grow_done(struct bridge *b) {
  size_t cap = b->done_cap ? b->done_cap * 2 : 1024;
  natsMsg **v = realloc(b->done, cap * sizeof *v);
  if (v == NULL)
    return false;
  b->done = v;
  b->done_cap = cap;
  return true;
}

/* libnats's jsPubAckHandler: its arguments are not const. */
// cppcheck-suppress constParameter
static void on_ack(jsCtx *js, natsMsg *msg, jsPubAck *pa, jsPubAckErr *pae,
                   void *arg) {
  (void)js;
  struct bridge *b = arg;
  pthread_mutex_lock(&b->mu);
  if (pa == NULL) {
    char why[256];
    if (pae != NULL && pae->Err == NATS_TIMEOUT)
      snprintf(why, sizeof why, "no acknowledgment within %d ms", ACK_WAIT_MS);
    else if (pae != NULL && pae->ErrText != NULL && pae->ErrText[0] != '\0')
      snprintf(why, sizeof why, "%s (JetStream error %d)", pae->ErrText,
               (int)pae->ErrCode);
    else
      snprintf(why, sizeof why, "%s",
               natsStatus_GetText(pae != NULL ? pae->Err : NATS_ERR));
    if (p2n_fail(&b->fl, msg, cli_monotonic()) == 1) {
      pthread_mutex_unlock(&b->mu); /* not ours: cannot happen */
      natsMsg_Destroy(msg);
      return;
    }
    snprintf(b->why, sizeof b->why, "%s", why);
    b->nfailed++;
    if (b->waiting)
      pthread_cond_signal(&b->cv);
    pthread_mutex_unlock(&b->mu);
    return;
  }
  uint64_t token = 0;
  switch (p2n_ack(&b->fl, msg, (uint64_t)natsMsg_GetDataLength(msg), &token)) {
  case P2N_ACK_UNKNOWN: /* not ours: cannot happen */
    pthread_mutex_unlock(&b->mu);
    natsMsg_Destroy(msg);
    return;
  case P2N_ACK_PRODUCT:
    cli_state_release(b->state, (cli_state_token)token, true);
    break;
  case P2N_ACK_CHUNK:
    break;
  }
  bool kept = false;
  if (b->ndone < b->done_cap || grow_done(b)) {
    b->done[b->ndone++] = msg;
    kept = true;
  }
  if (b->waiting)
    pthread_cond_signal(&b->cv);
  pthread_mutex_unlock(&b->mu);
  if (!kept)
    natsMsg_Destroy(msg);
}

/* Destroy the messages acknowledged (the main thread), a few at a time
 * out of the lock. */
static void destroy_done(struct bridge *b) {
  enum { BATCH = 256 };
  natsMsg *v[BATCH];
  for (;;) {
    size_t n = 0;
    pthread_mutex_lock(&b->mu);
    while (n < BATCH && b->ndone > 0)
      v[n++] = b->done[--b->ndone];
    pthread_mutex_unlock(&b->mu);
    destroy_all(v, n);
    if (n < BATCH)
      return;
  }
}

/* ---- publishing (the main thread) ---- */

/* Publish m; on a failure it waits for a retry.  Not under mu.  Not
 * while the connection is down.  The connection is ldmnats_connect_own()'s,
 * which libnats does not reconnect: libnats would otherwise keep a publish
 * made as the connection broke (after the check here) in its reconnect
 * buffer and send it to the next server first, before the messages the
 * break lost, which recovering() publishes again: a product stored ahead
 * of those before it. */
static void publish(struct run *r, natsMsg *m) {
  pthread_mutex_lock(&r->b->mu);
  p2n_sending(&r->b->fl); /* before: its acknowledgment may come at once */
  pthread_mutex_unlock(&r->b->mu);
  natsStatus s = ldmnats_connected(&r->conn)
                     ? js_PublishMsgAsync(r->conn.js, &m, &r->po)
                     : NATS_CONNECTION_DISCONNECTED;
  if (s == NATS_OK)
    return;
  pthread_mutex_lock(&r->b->mu);
  retry_later(r->b, m, natsStatus_GetText(s));
  pthread_mutex_unlock(&r->b->mu);
}

/* The product messages whose turn has come (their chunks acknowledged, the
 * products before them published), in order. */
static void publish_ready(struct run *r) {
  struct bridge *b = r->b;
  /* (not while recovering: service() calls it only in between) */
  for (;;) {
    natsMsg *batch[64];
    size_t n = 0;
    pthread_mutex_lock(&b->mu);
    while (n < 64 && (batch[n] = p2n_next_ready(&b->fl)) != NULL)
      n++;
    pthread_mutex_unlock(&b->mu);
    for (size_t i = 0; i < n; i++)
      publish(r, batch[i]);
    if (n < 64)
      return;
  }
}

/* After a failure: is pq2nats recovering (no new message goes out)?  A
 * disconnect or a failed publish disrupts; once the connection is up and
 * the retry wait over, every message still unacknowledged is taken back
 * from libnats and, with the failed ones, published again in the queue's
 * order (the stream drops what it had: Nats-Msg-Id), so that what follows
 * a failure never overtakes what the failure lost; then, until all of it
 * is acknowledged, nothing else goes out (inflight.h, rule 3).  Out of
 * memory, nomem is set (service() ends the run). */
/* What libnats still waits for, taken back into the books (its
 * acknowledgments, should they come now, are dropped by libnats); only
 * when there is some: libnats 3.4.1 crashes on a context that never
 * published asynchronously. */
static void take_back(struct run *r, bool some) {
  struct bridge *b = r->b;
  natsMsgList pending = {0};
  if (some && js_PublishAsyncGetPendingList(&pending, r->conn.js) != NATS_OK)
    pending = (natsMsgList){0};
  pthread_mutex_lock(&b->mu);
  for (int i = 0; i < pending.Count; i++) {
    if (pending.Msgs[i] == NULL)
      continue;
    if (p2n_take_back(&b->fl, pending.Msgs[i]) != 0)
      break;
    pending.Msgs[i] = NULL; /* ours now */
  }
  pthread_mutex_unlock(&b->mu);
  natsMsgList_Destroy(&pending); /* the array: its messages are taken */
}

/* The connection broke (closed: libnats does not reconnect it, publish()):
 * the books disrupted, what it held taken back, and a new connection.  A
 * stop while waiting for the server leaves none (ldmnats_lost()). */
static void reconnect(struct run *r) {
  struct bridge *b = r->b;
  pthread_mutex_lock(&b->mu);
  (void)p2n_recover(&b->fl, false, cli_monotonic());
  bool some = p2n_unacked(&b->fl) > 0;
  pthread_mutex_unlock(&b->mu);
  if (r->conn.js != NULL)
    take_back(r, some);
  if (r->conn.nc != NULL)
    log_warning("disconnected from the NATS server: reconnecting");
  ldmnats_close(&r->conn);
  (void)ldmnats_connect_own(&r->o->nats, "pq2nats", r->jo, true, &r->conn);
}

static bool recovering(struct run *r) {
  struct bridge *b = r->b;
  if (ldmnats_lost(&r->conn))
    reconnect(r);
  bool up = ldmnats_connected(&r->conn);
  pthread_mutex_lock(&b->mu);
  enum p2n_recovery rec = p2n_recover(&b->fl, up, cli_monotonic());
  bool some = p2n_unacked(&b->fl) > 0;
  pthread_mutex_unlock(&b->mu);
  if (rec != P2N_TAKE_BACK)
    return rec == P2N_WAIT;
  take_back(r, some);
  pthread_mutex_lock(&b->mu);
  size_t n = 0;
  void **v = p2n_resend_list(&b->fl, &n);
  pthread_mutex_unlock(&b->mu);
  for (size_t i = 0; i < n; i++)
    publish(r, v[i]);
  free(v);
  return true;
}

/* A warning, at most every FAIL_SAY_EVERY_S, while publishes fail. */
static void say_failures(struct run *r) {
  struct bridge *b = r->b;
  double now = cli_monotonic();
  pthread_mutex_lock(&b->mu);
  if (b->nfailed > 0 &&
      (b->fail_said == 0 || now - b->fail_said >= FAIL_SAY_EVERY_S)) {
    log_warning("%" PRIu64 " publish%s to the stream %s failed (last: %s); "
                "publishing them again",
                b->nfailed, b->nfailed == 1 ? "" : "es", r->o->nats.stream,
                b->why);
    b->nfailed = 0;
    b->fail_said = now;
  }
  pthread_mutex_unlock(&b->mu);
}

/* Set the headers of a product message.  NATS_OK or libnats's error. */
static natsStatus set_headers(natsMsg *m, const pq_prod_info *info,
                              const char *sig, const char *feed) {
  char created[32], seqno[16], size[24];
  ldmnats_format_created(info->arrival, created);
  snprintf(seqno, sizeof seqno, "%" PRIu32, info->seqno);
  snprintf(size, sizeof size, "%" PRIu64, info->size);
  natsStatus s = natsMsgHeader_Set(m, LDMNATS_H_IDENT, info->ident);
  if (s == NATS_OK)
    s = natsMsgHeader_Set(m, LDMNATS_H_ORIGIN, info->origin);
  if (s == NATS_OK)
    s = natsMsgHeader_Set(m, LDMNATS_H_CREATED, created);
  if (s == NATS_OK)
    s = natsMsgHeader_Set(m, LDMNATS_H_SEQNO, seqno);
  if (s == NATS_OK)
    s = natsMsgHeader_Set(m, LDMNATS_H_FEEDTYPE, feed);
  if (s == NATS_OK)
    s = natsMsgHeader_Set(m, LDMNATS_H_SIGNATURE, sig);
  if (s == NATS_OK)
    s = natsMsgHeader_Set(m, LDMNATS_H_SIZE, size);
  if (s == NATS_OK)
    s = natsMsgHeader_Set(m, LDMNATS_H_MSGID, sig);
  return s;
}

/* The subject of a product into buf[LDMNATS_SUBJECT_MAX]. */
static const char *subject_of(struct run *r, const pq_prod_info *info,
                              char *buf) {
  if (r->rules == NULL) {
    if (!r->have_last || r->last_ft != info->feedtype) {
      ldmnats_feed_subject(r->o->nats.prefix, info->feedtype, r->last_subject,
                           sizeof r->last_subject);
      r->last_ft = info->feedtype;
      r->have_last = true;
    }
    return r->last_subject;
  }
  if (ldmnats_subject(r->rules, r->o->nats.prefix, info, buf,
                      LDMNATS_SUBJECT_MAX) < 0)
    log_warning("the rule's subject for \"%s\" is longer than %d bytes: "
                "published on %s",
                info->ident, LDMNATS_SUBJECT_MAX - 1, buf);
  return buf;
}

/* What on_product() returns to end a batch (pq's own codes are negative):
 * the product stays for the next batch. */
#define END_BATCH 1
/* ... and to stop after a failure (logged). */
#define FAIL_BATCH 2

/* Make the messages of a product: its chunks into chunks[], its product
 * message into *prod.  NATS_OK or libnats's error (nothing made). */
static natsStatus make_msgs(struct run *r, const pq_prod_info *info,
                            const void *data, uint64_t nchunks,
                            natsMsg **chunks, natsMsg **prod) {
  char sig[33], feed[32], subject[LDMNATS_SUBJECT_MAX],
      sub[LDMNATS_SUBJECT_MAX];
  pq_sig_format(info->signature, sig);
  ldmnats_feed_token(info->feedtype, feed);
  const char *subj = subject_of(r, info, subject);
  natsStatus s = NATS_OK;
  uint64_t made = 0; /* chunks made */
  while (s == NATS_OK && made < nchunks) {
    uint64_t off, len;
    char id[48];
    ldmnats_chunk_span(info->size, r->chunk_max, made, &off, &len);
    ldmnats_chunk_subject(r->o->nats.prefix, sig, (unsigned)made, sub,
                          sizeof sub);
    ldmnats_chunk_msgid(sig, (unsigned)made, id);
    natsMsg *m = NULL;
    s = natsMsg_Create(&m, sub, NULL, (const char *)data + off, (int)len);
    if (s == NATS_OK &&
        (s = natsMsgHeader_Set(m, LDMNATS_H_MSGID, id)) == NATS_OK)
      chunks[made++] = m;
    else
      natsMsg_Destroy(m);
  }
  *prod = NULL;
  if (s == NATS_OK)
    s = natsMsg_Create(prod, subj, NULL, nchunks ? NULL : data,
                       nchunks ? 0 : (int)info->size);
  if (s == NATS_OK)
    s = set_headers(*prod, info, sig, feed);
  if (s == NATS_OK && nchunks > 0) {
    char n[24], md5[33];
    uint8_t dig[PQ_SIGLEN];
    snprintf(n, sizeof n, "%" PRIu64, nchunks);
    s = pq_md5(data, info->size, dig) == 0 ? NATS_OK : NATS_NO_MEMORY;
    pq_sig_format(dig, md5);
    if (s == NATS_OK)
      s = natsMsgHeader_Set(*prod, LDMNATS_H_CHUNKS, n);
    if (s == NATS_OK)
      s = natsMsgHeader_Set(*prod, LDMNATS_H_MD5, md5);
  }
  if (s != NATS_OK) {
    natsMsg_Destroy(*prod);
    *prod = NULL;
    destroy_all(chunks, made);
  }
  return s;
}

static int on_product(const pq_prod_info *info, const void *data,
                      const pq_place *place, void *arg) {
  struct run *r = arg;
  struct bridge *b = r->b;
  if (cli_stopping())
    return END_BATCH;
  uint64_t nchunks =
      info->size > r->body_max ? ldmnats_chunks(info->size, r->chunk_max) : 0;
  uint64_t nmsgs = nchunks + 1;
  pthread_mutex_lock(&b->mu);
  bool room = p2n_room(&b->fl, nmsgs, info->size);
  pthread_mutex_unlock(&b->mu);
  if (!room)
    return END_BATCH;
  natsMsg *stack[8], **chunks = stack, *prod = NULL;
  if (nchunks > 8 && (chunks = malloc(nchunks * sizeof *chunks)) == NULL) {
    log_error("cannot publish %s: %s", info->ident, strerror(ENOMEM));
    r->failed = true;
    return FAIL_BATCH;
  }
  natsStatus s = make_msgs(r, info, data, nchunks, chunks, &prod);
  if (s != NATS_OK) {
    log_error("cannot make the messages of %s: %s", info->ident,
              natsStatus_GetText(s));
    if (chunks != stack)
      free(chunks);
    r->failed = true;
    return FAIL_BATCH;
  }
  pthread_mutex_lock(&b->mu);
  cli_state_token t = cli_state_begin(b->state, place->pp_inserted);
  if (t == CLI_STATE_NOTOKEN) {
    pthread_mutex_unlock(&b->mu);
    log_error("cannot keep the position of %s: %s", info->ident,
              strerror(ENOMEM));
    destroy_all(chunks, nchunks);
    natsMsg_Destroy(prod);
    if (chunks != stack)
      free(chunks);
    r->failed = true;
    return FAIL_BATCH;
  }
  /* the product message now, if its turn has come */
  natsMsg *now = p2n_add(&b->fl, (uint64_t)t, (void *const *)chunks,
                         (uint32_t)nchunks, prod, info->size);
  b->nprods++;
  b->nbytes += info->size;
  if (nchunks > 0)
    b->nchunked++;
  pthread_mutex_unlock(&b->mu);
  if (r->c->verbose)
    cli_log_product(nchunks ? "publishing (chunked)" : "publishing", info,
                    false);
  for (uint64_t i = 0; i < nchunks; i++)
    publish(r, chunks[i]);
  if (chunks != stack)
    free(chunks);
  if (now != NULL)
    publish(r, now);
  cli_oldest_note(&r->oldest, info, place);
  return 0;
}

/* ---- the loop ---- */

/* The product read was the oldest of a full queue that evicted products
 * since the last look: some may have gone before pq2nats read them
 * (pqact's warning, with how many the queue evicted). */
static void warn_oldest(struct run *r) {
  pq_stats st;
  double age;
  if (!cli_oldest_due(&r->oldest, r->pq, &st, &age))
    return;
  uint64_t n = st.ps_evicted - r->evicted;
  if (n == 0)
    return;
  r->evicted = st.ps_evicted;
  cli_oldest_said(&r->oldest);
  log_warning("read the oldest product of the full queue: age=%g s, prod=%s",
              age, r->oldest.prod);
  log_warning("the queue evicted %" PRIu64 " products since %s: those "
              "pq2nats had not read are lost! queue too small? NATS server "
              "slow or away?",
              n, r->warned ? "the last warning" : "pq2nats started");
  r->warned = true;
}

static void say_stats(struct run *r) {
  struct bridge *b = r->b;
  pthread_mutex_lock(&b->mu);
  log_notice("products %" PRIu64 " (%" PRIu64 " bytes, %" PRIu64
             " chunked); in flight %" PRIu64
             " messages; published again %" PRIu64,
             b->nprods, b->nbytes, b->nchunked, b->fl.msgs, b->fl.nretried);
  pthread_mutex_unlock(&b->mu);
}

/* Nothing in flight? */
static bool idle(struct bridge *b) {
  pthread_mutex_lock(&b->mu);
  bool done = p2n_idle(&b->fl);
  pthread_mutex_unlock(&b->mu);
  return done;
}

/* Wait up to ms for an acknowledgment. */
static void wait_ack(struct bridge *b, int ms) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ts.tv_nsec += (long)ms * 1000000;
  ts.tv_sec += ts.tv_nsec / 1000000000;
  ts.tv_nsec %= 1000000000;
  pthread_mutex_lock(&b->mu);
  if (b->fl.msgs > 0) {
    b->waiting = true;
    (void)pthread_cond_timedwait(&b->cv, &b->mu, &ts);
    b->waiting = false;
  }
  pthread_mutex_unlock(&b->mu);
}

/* What is in flight and waiting: destroyed, published, published again.
 * 0; 1 while recovering from a failure (read nothing new); -1 when a
 * failed message could not be kept for a retry (out of memory): the
 * position stays before its product, and the run ends (logged). */
static int service(struct run *r) {
  destroy_done(r->b);
  bool rec = recovering(r);
  if (!rec)
    publish_ready(r);
  say_failures(r);
  pthread_mutex_lock(&r->b->mu);
  bool nomem = r->b->fl.nomem;
  pthread_mutex_unlock(&r->b->mu);
  if (nomem) {
    log_error("cannot keep a failed publish for a retry: %s; exiting, the "
              "next run publishes it again",
              strerror(ENOMEM));
    return -1;
  }
  return rec ? 1 : 0;
}

static int publish_queue(struct run *r, const pq_class *cls) {
  while (!cli_stopping()) {
    if (cli_stats_pending() && cli_stats_requested())
      say_stats(r);
    int sv = service(r);
    if (sv < 0)
      return 2;
    if (sv > 0) { /* recovering: the queue waits */
      wait_ack(r->b, 100);
      continue;
    }
    int rc = pq_next_many(r->pq, PQ_FORWARD, cls, 0, on_product, r);
    warn_oldest(r);
    if (rc == PQ_OK)
      continue;
    if (rc == END_BATCH) { /* full: wait for acknowledgments */
      wait_ack(r->b, 100);
      continue;
    }
    if (rc == FAIL_BATCH)
      return 2;
    if (rc == PQ_DAMAGED) { /* skipped: the cursor is past it */
      log_error("%s", pq_last_error(r->pq)->pe_msg);
      continue;
    }
    if (rc != PQ_END) {
      log_error("pq_next failed: %s", pq_last_error(r->pq)->pe_msg);
      return 2;
    }
    pthread_mutex_lock(&r->b->mu);
    (void)cli_state_sync(r->b->state, 1.0);
    pthread_mutex_unlock(&r->b->mu);
    if (!idle(r->b)) {
      wait_ack(r->b, 100);
      continue;
    }
    if (r->o->once)
      return 0;
    rc = cli_wait_for_products(r->pq, r->o->interval);
    if (rc != PQ_OK) {
      log_error("pq_wait failed: %s", pq_strerror(rc));
      return 2;
    }
  }
  return 0;
}

/* A stop: what is in flight may still be acknowledged, for STOP_WAIT_S. */
static void drain(struct run *r) {
  double end = cli_monotonic() + STOP_WAIT_S;
  while (!idle(r->b) && cli_monotonic() < end) {
    if (service(r) < 0)
      break;
    wait_ack(r->b, 100);
  }
  if (!idle(r->b)) {
    pthread_mutex_lock(&r->b->mu);
    log_warning("%" PRIu64 " messages were not acknowledged within %g s: "
                "the next run publishes their products again",
                r->b->fl.msgs, STOP_WAIT_S);
    pthread_mutex_unlock(&r->b->mu);
  }
}

/* ---- options ---- */

static int parse_args(struct cli *c, int argc, char **argv, struct opts *o) {
  int ch, rc;
  while ((rc = cli_next_option(
              c, argc, argv, ":hvxl:q:" LDMNATS_OPTSTRING "f:p:o:i:S:r:m:nw:R:",
              usage_text, &ch)) == CLI_OPT_OWN) {
    if (ldmnats_option(&o->nats, ch, optarg))
      continue;
    switch (ch) {
    case 'f':
    case 'p':
    case 'o':
      if (cli_select_option(c, &o->sel, ch, optarg) != 0)
        return -1;
      break;
    case 'i':
      if (cli_parse_uint(c, "interval", optarg, INT32_MAX, &o->interval) != 0)
        return -1;
      break;
    case 'S':
      o->state_path = optarg;
      break;
    case 'r':
      o->rules_path = optarg;
      break;
    case 'm':
      if (cli_parse_uint(c, "maxpending", optarg, 1u << 20, &o->maxpending) !=
          0)
        return -1;
      if (o->maxpending == 0) {
        cli_usage_error(c, usage_text, "maxpending must be at least 1");
        return -1;
      }
      break;
    case 'n':
      o->once = true;
      break;
    case 'w':
      if (cli_parse_uint(c, "duplicate window", optarg, 86400 * 365,
                         &o->dup_window) != 0)
        return -1;
      if (o->dup_window == 0) {
        cli_usage_error(c, usage_text,
                        "the duplicate window must be at "
                        "least 1 second");
        return -1;
      }
      break;
    case 'R':
      if (cli_parse_uint(c, "replicas", optarg, 5, &o->replicas) != 0)
        return -1;
      if (o->replicas == 0) {
        cli_usage_error(c, usage_text, "replicas must be 1 to 5");
        return -1;
      }
      break;
    }
  }
  if (rc != CLI_OPT_DONE)
    return rc;
  if (o->interval == 0) /* as pqact: -i 0 exits at the end of the queue */
    o->once = true;
  if (optind < argc) {
    cli_usage_error(c, usage_text, "no operands are taken");
    return -1;
  }
  return 0;
}

/* Where to start: with -o, offset seconds back; else after the state's
 * time; else at the oldest product. */
static void start_position(struct run *r, const pq_class *cls) {
  const char *path = r->o->state_path;
  if (r->o->sel.have_offset) {
    cli_select_cursor(r->pq, &r->o->sel, cls);
    log_notice("starting with products created in the last %" PRIu64 " s",
               r->o->sel.offset);
    return;
  }
  uint64_t us = 0;
  if (cli_state_start_at(path, pq_ts_to_us(pq_ts_now()), &us)) {
    char when[40];
    pq_cursor_set(r->pq, us);
    cli_state_format_time(us, when);
    log_notice("starting after insertion-time %s UTC (%s)", when, path);
    return;
  }
  pq_cursor_oldest(r->pq);
  log_notice("starting at the oldest product of the queue");
}

static int make_bridge(struct bridge *b, const struct opts *o,
                       const char *state_path) {
  memset(b, 0, sizeof *b);
  pthread_mutex_init(&b->mu, NULL);
  pthread_cond_init(&b->cv, NULL);
  int rc =
      p2n_init(&b->fl, o->maxpending, MAX_BYTES_IN_FLIGHT, ldmnats_backoff_ms);
  b->state = cli_state_new(state_path);
  if (rc != 0 || b->state == NULL) {
    log_error("cannot allocate the state of %" PRIu64 " messages in flight: %s",
              o->maxpending, strerror(ENOMEM));
    return -1;
  }
  return 0;
}

/* After the connection is closed: what is left is ours to free. */
static void free_bridge(struct bridge *b) {
  for (void *m; (m = p2n_drop(&b->fl)) != NULL;)
    natsMsg_Destroy(m);
  p2n_free(&b->fl);
  destroy_all(b->done, b->ndone);
  free(b->done);
  cli_state_free(b->state);
  pthread_cond_destroy(&b->cv);
  pthread_mutex_destroy(&b->mu);
}

/* The messages libnats still holds unacknowledged, back and destroyed.
 * Only when some are in flight: libnats 3.4.1 crashes in the call on a
 * context that never published asynchronously. */
static void take_back_pending(struct run *r) {
  pthread_mutex_lock(&r->b->mu);
  bool some = r->b->fl.msgs > 0;
  pthread_mutex_unlock(&r->b->mu);
  natsMsgList pending = {0};
  if (some && r->conn.js != NULL &&
      js_PublishAsyncGetPendingList(&pending, r->conn.js) == NATS_OK)
    natsMsgList_Destroy(&pending);
}

static int run(struct cli *c, struct opts *o, struct bridge *b) {
  struct run r = {.o = o, .c = c, .b = b};
  const char *qpath = cli_queue_path(c);
  if (qpath == NULL)
    return 1;
  char state_buf[PATH_MAX + 16];
  if (o->state_path == NULL) {
    snprintf(state_buf, sizeof state_buf, "%s.pq2nats.state", qpath);
    o->state_path = state_buf;
  }
  if (ldmnats_resolve(c, &o->nats) != 0)
    return 1;
  if (o->rules_path != NULL) {
    char err[1024];
    if (ldmnats_rules_read(o->rules_path, &r.rules, err, sizeof err) != 0) {
      log_error("%s", err);
      return 1;
    }
    log_info("%zu subject rules from \"%s\"", ldmnats_rules_count(r.rules),
             o->rules_path);
  }
  pq_class cls;
  if (cli_select_class(c, &o->sel, &cls) != 0) {
    ldmnats_rules_free(r.rules);
    return 1;
  }
  int status = 1;
  if (make_bridge(b, o, o->state_path) != 0)
    goto out;
  pq_error err = {0};
  if (pq_open(qpath, PQ_READONLY, &r.pq, &err) != PQ_OK) {
    log_error("cannot open the queue: %s", err.pe_msg);
    goto out;
  }
  jsOptions jo;
  jsOptions_Init(&jo);
  jo.PublishAsync.MaxPending = (int64_t)(2 * o->maxpending + 64);
  jo.PublishAsync.AckHandler = on_ack;
  jo.PublishAsync.AckHandlerClosure = b;
  r.jo = &jo;
  int rc = ldmnats_connect_own(&o->nats, "pq2nats", &jo, false, &r.conn);
  while (rc == 0 &&
         (rc = ldmnats_streams(&r.conn, &o->nats, (int64_t)o->dup_window,
                               (int)o->replicas)) == LDMNATS_ELOST) {
    ldmnats_close(&r.conn);
    rc = ldmnats_connect_own(&o->nats, "pq2nats", &jo, true, &r.conn);
  }
  if (rc != 0) {
    status = rc == LDMNATS_ESTOP ? 0 : rc == LDMNATS_ECONFIG ? 1 : 2;
    goto out;
  }
  if (r.conn.max_payload <= LDMNATS_HEADERS_MAX + 1024) {
    log_error("the server's max_payload (%" PRId64 " bytes) is too small",
              r.conn.max_payload);
    status = 2;
    goto out;
  }
  r.body_max = (uint64_t)r.conn.max_payload - LDMNATS_HEADERS_MAX;
  r.chunk_max = (uint64_t)r.conn.max_payload - 256;
  jsPubOptions_Init(&r.po);
  r.po.MaxWait = ACK_WAIT_MS;
  pq_stats st;
  if (pq_stats_get(r.pq, &st) == PQ_OK)
    r.evicted = st.ps_evicted;
  start_position(&r, &cls);
  status = publish_queue(&r, &cls);
  drain(&r);
out:
  if (b->state != NULL) {
    pthread_mutex_lock(&b->mu);
    uint64_t mark = cli_state_mark(b->state);
    if (mark != 0 && cli_state_save(b->state) != 0 && status == 0)
      status = 2;
    pthread_mutex_unlock(&b->mu);
  }
  take_back_pending(&r);
  ldmnats_close(&r.conn);
  if (b->fl.ring != NULL || b->fl.map != NULL || b->state != NULL) {
    pthread_mutex_lock(&b->mu);
    log_notice("exiting: %" PRIu64 " products published (%" PRIu64
               " bytes, %" PRIu64 " chunked), %" PRIu64 " messages published "
               "again",
               b->nprods, b->nbytes, b->nchunked, b->fl.nretried);
    pthread_mutex_unlock(&b->mu);
  }
  if (r.pq != NULL)
    pq_close(r.pq);
  pq_class_free(&cls);
  ldmnats_rules_free(r.rules);
  return status;
}

int main(int argc, char **argv) {
  struct cli c;
  struct opts o = {.sel = CLI_SELECT_ALL,
                   .interval = 15,
                   .maxpending = 4096,
                   .dup_window = 120,
                   .replicas = 1};
  ldmnats_init();
  cli_init(&c, argv[0]);
  int rc = parse_args(&c, argc, argv, &o);
  if (rc != 0)
    return rc > 0 ? 0 : CLI_EXIT_USAGE;
  cli_signals();
  log_notice("starting up (%d)", (int)getpid());
  struct bridge b;
  memset(&b, 0, sizeof b);
  int status = run(&c, &o, &b);
  if (b.fl.ring != NULL || b.fl.map != NULL || b.state != NULL)
    free_bridge(&b);
  /* No nats_Close(): after a TLS connection, libnats 3.4.1's cleanup
   * leaves OpenSSL's in the exit handlers to crash (OPENSSL_cleanup). */
  return status;
}
