/*
 * nats2pq - feed a product queue from a NATS JetStream stream, the
 * receiving half of the bridge (nats2pq.1; pq2nats is the sending half).
 * A durable pull consumer on the product stream, with explicit acks and a
 * bounded number of messages unacknowledged: each message's headers give
 * the product's metadata (reassembly.c), its body or its chunks (fetched
 * from the chunk stream by subject) its data, which goes straight into a
 * queue reservation, made only once every chunk is known to be in the
 * chunk stream (a message announcing chunks that are not there evicts
 * nothing: docs/security.md, "The NATS bridge"); the message is acknowledged
 * only once the product is committed, or found in the queue already (a
 * duplicate signature).  A message that cannot become a product (headers wrong,
 * data of the wrong size or MD5, larger than the queue takes, a chunk gone) is
 * logged and terminated, never acknowledged as if it had been inserted.
 *
 * Flow control is the pull itself: the next batch is fetched only when the
 * last one is in the queue, so a slow queue slows the fetches and loses
 * nothing (a product the queue has no room for now, PQ_LOCKED, is retried
 * until it goes in).  One consumer takes the messages in stream order, so
 * products enter the queue in order per subject.  A failure of the server
 * (a fetch or a chunk get that fails, the connection down) is retried with
 * a bounded wait and logged; the durable consumer keeps the position across
 * our restarts, and a message delivered but not acknowledged before a kill
 * comes again and is then dropped by the queue as a duplicate.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nats/nats.h>

#include "ldmd/site/log.h"
#include "pqutils/common/cli.h"
#include "pqutils/nats/ldmnats.h"
#include "pqutils/nats/reassembly.h"

#define EXIT_RUNTIME 2

/* How long one fetch waits for messages, in ms: a stop is seen within it. */
#define FETCH_WAIT_MS 1000
/* With -n: a fetch that gets nothing this soon asks whether all is done. */
#define FETCH_WAIT_ONCE_MS 250
/* The consumer's ack wait, and how old a message in hand may get before we
 * tell the server that we are still working on it. */
#define ACK_WAIT_MS 30000
#define IN_PROGRESS_MS 5000
/* The wait between tries of a product the queue has no room for now. */
#define LOCKED_WAIT_S 0.05
/* A failure that repeats is logged again at most this often, in s. */
#define RELOG_S 60.0

static const char usage_text[] =
    "usage: nats2pq [options]\n"
    "options:\n"
    "  -q queue     the queue to feed (default: the registry's /queue/path)\n"
    "  -d durable   durable consumer name (default: /nats/durable, else\n"
    "               nats2pq)\n"
    "  -F subject   filter subject (default: <prefix>.>)\n"
    "  -b batch     messages fetched at once (default 256)\n"
    "  -n           exit once the consumer has nothing pending\n" LDMNATS_USAGE
    "  -l dest      log to dest: \"\" syslog, \"-\" stderr, or a file\n"
    "  -v           log each product inserted\n"
    "  -x           debug\n"
    "  -h           print this text\n";

struct opts {
  struct ldmnats_opts nats;
  const char *filter; /* -F */
  uint64_t batch;     /* -b */
  bool once;          /* -n */
  char filter_buf[LDMNATS_SUBJECT_MAX];
};

/* The run: the queue, the connection, the consumer, the tallies. */
struct run {
  const struct opts *o;
  pq_t *pq;
  struct ldmnats_conn conn;
  natsSubscription *sub;
  char chunk_stream[LDMNATS_NAME_MAX];
  bool direct;          /* the chunk stream answers direct gets */
  bool direct_products; /* and the product stream */
  /* Where we are in the stream, for the order (see take_in_order()): the
   * stream sequence of the last message handled (at the start, the
   * consumer's acknowledgement floor), and the consumer sequence of the
   * last delivery (0: unknown, a gap may precede the next one). */
  uint64_t last_seq, last_cseq;
  bool locked; /* waiting for room in the queue (said once) */
  uint64_t inserted, dups, terminated, bytes;
  /* a failure being retried: when it was last logged, and how often */
  double failing_since_log;
  unsigned failures;
};

/* What handling one message came to. */
enum outcome {
  DONE,    /* inserted or a duplicate: acknowledge */
  REFUSED, /* cannot become a product: terminate */
  RETRY,   /* the server or the queue failed for now: try again */
  FATAL,   /* the queue failed: stop, unacknowledged */
};

/* ---- the command line ---- */

static int option(struct cli *c, int ch, const char *arg, void *opts) {
  struct opts *o = opts;
  if (ldmnats_option(&o->nats, ch, arg))
    return 0;
  switch (ch) {
  case 'd':
    o->nats.durable = arg;
    return 0;
  case 'F':
    if (*arg == '\0' || strpbrk(arg, " \t\r\n") != NULL) {
      cli_usage_error(c, usage_text, "bad filter subject: '%s'", arg);
      return -1;
    }
    o->filter = arg;
    return 0;
  case 'b':
    if (cli_parse_uint(c, "batch", arg, 100000, &o->batch) != 0)
      return -1;
    if (o->batch == 0) {
      cli_usage_error(c, usage_text, "batch must be at least 1");
      return -1;
    }
    return 0;
  case 'n':
    o->once = true;
    return 0;
  default:
    return -1;
  }
}

static const struct cli_spec spec = {":hl:vxq:" LDMNATS_OPTSTRING "d:F:b:n",
                                     usage_text, option, NULL};

/* ---- failures that are retried ---- */

/* Log a failure that will be retried: the first at WARNING, then once a
 * RELOG_S; then wait before the next try (bounded, ldmnats_backoff_ms()). */
static void retry_later(struct run *r, const char *what, natsStatus s) {
  double now = cli_monotonic();
  if (r->failures == 0 || now - r->failing_since_log >= RELOG_S) {
    const char *detail = nats_GetLastError(NULL);
    log_warning("%s failed: %s%s%s (retrying)", what, natsStatus_GetText(s),
                detail != NULL && *detail != '\0' ? ": " : "",
                detail != NULL ? detail : "");
    r->failing_since_log = now;
  }
  cli_sleep((double)ldmnats_backoff_ms(r->failures) / 1000.0);
  r->failures++;
}

static void retry_over(struct run *r) {
  if (r->failures > 0)
    log_notice("the server answers again after %u failed tries", r->failures);
  r->failures = 0;
}

/* ---- the consumer ---- */

/* The durable consumer: bind to it, making it first if the stream has
 * none of that name.  Waits for the stream to exist (pq2nats makes it).
 * 0, 1 (a configuration error, logged) or -1 (a stop). */
static int consumer(struct run *r) {
  const struct opts *o = r->o;
  const char *stream = o->nats.stream, *durable = o->nats.durable;
  for (;;) {
    if (cli_stopping())
      return -1;
    jsErrCode jerr = 0;
    jsConsumerInfo *ci = NULL;
    natsStatus s =
        js_GetConsumerInfo(&ci, r->conn.js, stream, durable, NULL, &jerr);
    if (s == NATS_NOT_FOUND && jerr == JSConsumerNotFoundErr) {
      jsConsumerConfig cc;
      jsConsumerConfig_Init(&cc);
      cc.Durable = durable;
      cc.AckPolicy = js_AckExplicit;
      cc.AckWait = (int64_t)ACK_WAIT_MS * 1000000;
      cc.DeliverPolicy = js_DeliverAll;
      cc.FilterSubject = o->filter;
      cc.MaxAckPending = (int64_t)o->batch * 4;
      s = js_AddConsumer(&ci, r->conn.js, stream, &cc, NULL, &jerr);
      if (s == NATS_OK)
        log_notice("durable consumer %s made on stream %s, filter %s", durable,
                   stream, o->filter);
    }
    if (s == NATS_OK) {
      r->last_seq = ci->AckFloor.Stream;
      /* Deliveries not acknowledged (a previous run killed): the first
       * message may follow a gap. */
      r->last_cseq = ci->Delivered.Consumer == ci->AckFloor.Consumer
                         ? ci->Delivered.Consumer
                         : 0;
      if (r->last_cseq == 0 && ci->Delivered.Consumer > 0)
        log_notice("%" PRIu64 " messages of stream %s were delivered "
                   "before and not acknowledged: taking them again first, "
                   "in order",
                   ci->Delivered.Stream - ci->AckFloor.Stream, stream);
      const char *f = ci->Config->FilterSubject;
      if (f == NULL)
        f = "";
      if (strcmp(f, o->filter) != 0) {
        log_error("durable consumer %s of stream %s has the filter '%s', "
                  "not %s: delete it or name another with -d",
                  durable, stream, f, o->filter);
        jsConsumerInfo_Destroy(ci);
        return 1;
      }
      jsConsumerInfo_Destroy(ci);
      break;
    }
    char what[256];
    if (jerr == JSStreamNotFoundErr)
      snprintf(what, sizeof what, "stream %s (not there yet)", stream);
    else
      snprintf(what, sizeof what, "consumer %s of stream %s", durable, stream);
    retry_later(r, what, s);
  }
  retry_over(r);

  for (;;) {
    if (cli_stopping())
      return -1;
    jsSubOptions so;
    jsSubOptions_Init(&so);
    so.Stream = stream;
    so.Consumer = durable;
    jsErrCode jerr = 0;
    natsStatus s = js_PullSubscribe(&r->sub, r->conn.js, o->filter, durable,
                                    NULL, &so, &jerr);
    if (s == NATS_OK)
      break;
    retry_later(r, "pull subscription", s);
  }
  retry_over(r);

  /* How the chunks are fetched: direct gets where the chunk stream allows
   * them (any server of the cluster answers), else the stream's API. */
  ldmnats_chunk_stream(stream, r->chunk_stream, sizeof r->chunk_stream);
  jsStreamInfo *si = NULL;
  if (js_GetStreamInfo(&si, r->conn.js, r->chunk_stream, NULL, NULL) ==
      NATS_OK) {
    r->direct = si->Config != NULL && si->Config->AllowDirect;
    jsStreamInfo_Destroy(si);
  }
  si = NULL;
  if (js_GetStreamInfo(&si, r->conn.js, stream, NULL, NULL) == NATS_OK) {
    r->direct_products = si->Config != NULL && si->Config->AllowDirect;
    jsStreamInfo_Destroy(si);
  }
  log_info("chunks from stream %s by %s", r->chunk_stream,
           r->direct ? "direct get" : "message get");
  return 0;
}

/* Is everything the consumer has been given acknowledged, and nothing
 * more waiting?  (-n) */
static bool all_done(struct run *r) {
  jsConsumerInfo *ci = NULL;
  natsStatus s = js_GetConsumerInfo(&ci, r->conn.js, r->o->nats.stream,
                                    r->o->nats.durable, NULL, NULL);
  if (s != NATS_OK) {
    retry_later(r, "consumer info", s);
    return false;
  }
  retry_over(r);
  bool done = ci->NumPending == 0 && ci->NumAckPending == 0;
  log_debug("consumer: %" PRIu64 " pending, %" PRId64 " unacknowledged",
            ci->NumPending, ci->NumAckPending);
  jsConsumerInfo_Destroy(ci);
  return done;
}

/* ---- one message ---- */

static const char *header(void *arg, const char *name) {
  const char *v = NULL;
  return natsMsgHeader_Get(arg, name, &v) == NATS_OK ? v : NULL;
}

/* A message's sequence in the stream, and for a fetched one its consumer
 * sequence (0 if it has none: a message got from the stream directly). */
static uint64_t stream_seq2(natsMsg *m, uint64_t *cseq) {
  jsMsgMetaData *meta = NULL;
  if (cseq != NULL)
    *cseq = 0;
  if (natsMsg_GetMetaData(&meta, m) != NATS_OK)
    return natsMsg_GetSequence(m);
  uint64_t seq = meta->Sequence.Stream;
  if (cseq != NULL)
    *cseq = meta->Sequence.Consumer;
  jsMsgMetaData_Destroy(meta);
  return seq;
}

static uint64_t stream_seq(natsMsg *m) {
  return stream_seq2(m, NULL);
}

/* The message's place, for log lines: "stream sequence N, subject S". */
static void where(natsMsg *m, char *buf, size_t len) {
  snprintf(buf, len, "stream sequence %" PRIu64 ", subject %s", stream_seq(m),
           natsMsg_GetSubject(m));
}

/* Chunk i of p: the last message on its subject of the chunk stream. */
static natsStatus get_chunk(struct run *r, const struct n2p_product *p,
                            unsigned i, natsMsg **chunk) {
  char sighex[33], subject[LDMNATS_SUBJECT_MAX];
  pq_sig_format(p->info.signature, sighex);
  ldmnats_chunk_subject(r->o->nats.prefix, sighex, i, subject, sizeof subject);
  *chunk = NULL;
  if (r->direct) {
    jsDirectGetMsgOptions dg;
    jsDirectGetMsgOptions_Init(&dg);
    dg.LastBySubject = subject;
    return js_DirectGetMsg(chunk, r->conn.js, r->chunk_stream, NULL, &dg);
  }
  return js_GetLastMsg(chunk, r->conn.js, r->chunk_stream, subject, NULL, NULL);
}

/* Is chunk subject subj the chunk of index < nchunks of the subjects that
 * begin with head (<prefix>_chunks.<signature>.)?  The index, or -1. */
static long chunk_index(const char *subj, const char *head, unsigned nchunks) {
  size_t n = strlen(head);
  if (strncmp(subj, head, n) != 0 || subj[n] == '\0')
    return -1;
  unsigned long i = 0;
  for (const char *c = subj + n; *c != '\0'; c++) {
    if (*c < '0' || *c > '9' || i >= nchunks)
      return -1;
    i = i * 10 + (unsigned long)(*c - '0');
  }
  return i < nchunks ? (long)i : -1;
}

/* Mark in seen (a bit a chunk) the chunks of p that the chunk stream's
 * info lists: their subjects and counts, no data.  NATS_OK, or what the
 * server said. */
static natsStatus chunks_listed(struct run *r, const struct n2p_product *p,
                                const char *head, uint8_t *seen) {
  char filter[LDMNATS_SUBJECT_MAX];
  snprintf(filter, sizeof filter, "%s*", head);
  jsOptions jo;
  jsOptions_Init(&jo);
  jo.Stream.Info.SubjectsFilter = filter;
  jsStreamInfo *si = NULL;
  natsStatus s = js_GetStreamInfo(&si, r->conn.js, r->chunk_stream, &jo, NULL);
  if (s != NATS_OK)
    return s;
  const jsStreamStateSubjects *list = si->State.Subjects;
  for (int k = 0; list != NULL && k < list->Count; k++) {
    long i = chunk_index(list->List[k].Subject, head, p->nchunks);
    if (i >= 0 && list->List[k].Msgs > 0)
      seen[i / 8] |= (uint8_t)(1u << (i % 8));
  }
  jsStreamInfo_Destroy(si);
  return NATS_OK;
}

/*
 * Are all the chunks of p in the chunk stream?  Asked before any room is
 * reserved for p, so that a product message whose chunks are not there (a
 * publisher's lie, or chunks the stream's limits removed) evicts nothing
 * from the queue (docs/security.md, "The NATS bridge").  The stream's info
 * lists the chunk subjects of p's signature with their counts, which moves
 * no data; a chunk not in that list (a list the server cut short, or no
 * memory for the bitmap) is looked for by itself.  DONE when every chunk is
 * there, REFUSED (logged) when one is not, RETRY when the server failed.
 */
static enum outcome chunks_there(struct run *r, natsMsg *m,
                                 const struct n2p_product *p) {
  char sighex[33], head[LDMNATS_SUBJECT_MAX];
  pq_sig_format(p->info.signature, sighex);
  ldmnats_chunk_subject(r->o->nats.prefix, sighex, 0, head, sizeof head);
  head[strlen(head) - 1] = '\0'; /* <prefix>_chunks.<sig>. */
  uint8_t *seen = calloc((size_t)p->nchunks / 8 + 1, 1);
  natsStatus s = seen == NULL ? NATS_OK : chunks_listed(r, p, head, seen);
  for (unsigned i = 0; s == NATS_OK && i < p->nchunks; i++) {
    if (seen != NULL && (seen[i / 8] & (1u << (i % 8))) != 0)
      continue;
    natsMsg *chunk = NULL;
    s = get_chunk(r, p, i, &chunk);
    natsMsg_Destroy(chunk);
    if (s == NATS_NOT_FOUND) {
      char at[LDMNATS_SUBJECT_MAX + 64];
      where(m, at, sizeof at);
      log_error("product refused: chunk %u of %u of %s is not in stream "
                "%s (%s)",
                i, p->nchunks, p->info.ident, r->chunk_stream, at);
      free(seen);
      return REFUSED;
    }
  }
  free(seen);
  if (s != NATS_OK) {
    char what[LDMNATS_NAME_MAX + 64];
    snprintf(what, sizeof what, "look-up of the chunks in stream %s",
             r->chunk_stream);
    retry_later(r, what, s);
    return RETRY;
  }
  return DONE;
}

/* A chunked product into its reservation; resv is committed or discarded.
 * The reservation holds the signature: a second copy is refused meanwhile. */
static enum outcome put_chunked(struct run *r, natsMsg *m,
                                const struct n2p_product *p, pq_resv *resv) {
  char why[320], at[LDMNATS_SUBJECT_MAX + 64];
  struct n2p_assembly a;
  if (n2p_asm_begin(&a, p, resv->pr_data, why, sizeof why) != 0) {
    pq_discard(r->pq, resv);
    log_error("product not inserted: %s", why);
    return RETRY;
  }
  for (unsigned i = 0; i < p->nchunks; i++) {
    natsMsg *chunk = NULL;
    natsStatus s = get_chunk(r, p, i, &chunk);
    if (s == NATS_NOT_FOUND) {
      where(m, at, sizeof at);
      log_error("product refused: chunk %u of %u of %s is not in stream "
                "%s (%s)",
                i, p->nchunks, p->info.ident, r->chunk_stream, at);
      n2p_asm_abort(&a);
      pq_discard(r->pq, resv);
      return REFUSED;
    }
    if (s != NATS_OK) {
      n2p_asm_abort(&a);
      pq_discard(r->pq, resv);
      char what[LDMNATS_NAME_MAX + 64];
      snprintf(what, sizeof what, "get of chunk %u from stream %s", i,
               r->chunk_stream);
      retry_later(r, what, s);
      return RETRY;
    }
    int rc =
        n2p_asm_chunk(&a, i, natsMsg_GetData(chunk),
                      (size_t)natsMsg_GetDataLength(chunk), why, sizeof why);
    natsMsg_Destroy(chunk);
    if (rc != 0) {
      n2p_asm_abort(&a);
      pq_discard(r->pq, resv);
      where(m, at, sizeof at);
      log_error("product refused: %s: %s (%s)", why, p->info.ident, at);
      return REFUSED;
    }
  }
  if (n2p_asm_finish(&a, why, sizeof why) != 0) {
    pq_discard(r->pq, resv);
    where(m, at, sizeof at);
    log_error("product refused: %s: %s (%s)", why, p->info.ident, at);
    return REFUSED;
  }
  retry_over(r);
  int rc = pq_commit(r->pq, resv);
  if (rc != PQ_OK) {
    log_error("pq_commit failed: %s", pq_last_error(r->pq)->pe_msg);
    pq_discard(r->pq, resv);
    return FATAL;
  }
  return DONE;
}

/* Insert the product of message m.  Returns how it ended. */
static enum outcome put(struct run *r, natsMsg *m) {
  char why[320], at[LDMNATS_SUBJECT_MAX + 64];
  struct n2p_product p;
  if (n2p_parse_headers(header, m, &p, why, sizeof why) != 0) {
    where(m, at, sizeof at);
    log_error("message refused: %s (%s)", why, at);
    return REFUSED;
  }
  const void *body = natsMsg_GetData(m);
  size_t len = (size_t)natsMsg_GetDataLength(m);
  if (p.nchunks == 0 && n2p_check_body(&p, body, len, why, sizeof why) != 0) {
    where(m, at, sizeof at);
    log_error("product refused: %s: %s (%s)", why, p.info.ident, at);
    return REFUSED;
  }
  uint64_t max =
      pq_max_product_size(r->pq, strlen(p.info.origin), strlen(p.info.ident));
  if (p.info.size > max) {
    where(m, at, sizeof at);
    log_error("product refused: %" PRIu64 " bytes, more than the %" PRIu64
              " queue %s takes: %s (%s)",
              p.info.size, max, pq_path(r->pq), p.info.ident, at);
    return REFUSED;
  }

  if (p.nchunks > 0) {
    enum outcome there = chunks_there(r, m, &p);
    if (there != DONE)
      return there;
  }
  int rc;
  pq_resv resv;
  if (p.nchunks == 0)
    rc = pq_insert(r->pq, &p.info, body);
  else
    rc = pq_reserve(r->pq, &p.info, &resv);
  if (rc == PQ_OK && p.nchunks > 0) {
    enum outcome out = put_chunked(r, m, &p, &resv);
    if (out != DONE)
      return out;
  }
  if (rc != PQ_LOCKED && r->locked) {
    log_notice("room in queue %s again", pq_path(r->pq));
    r->locked = false;
  }
  switch (rc) {
  case PQ_OK:
    r->inserted++;
    r->bytes += p.info.size;
    cli_log_product("", &p.info, false);
    return DONE;
  case PQ_DUP:
    r->dups++;
    cli_log_product("duplicate product: ", &p.info, false);
    return DONE;
  case PQ_LOCKED:
    /* Readers hold what would make room: wait for them, keep the
     * message. */
    if (!r->locked)
      log_warning("no room in queue %s for %s (%" PRIu64 " bytes): what "
                  "could make room is held by readers; waiting",
                  pq_path(r->pq), p.info.ident, p.info.size);
    r->locked = true;
    cli_sleep(LOCKED_WAIT_S);
    return RETRY;
  case PQ_BIG:
  case PQ_INVAL:
    where(m, at, sizeof at);
    log_error("product refused by the queue: %s: %s (%s)",
              pq_last_error(r->pq)->pe_msg, p.info.ident, at);
    return REFUSED;
  default:
    log_error("%s failed: %s", p.nchunks == 0 ? "pq_insert" : "pq_reserve",
              pq_last_error(r->pq)->pe_msg);
    return FATAL;
  }
}

/* Handle message m until it is done with (acknowledged or terminated; a
 * message got from the stream directly, with fetched < 0, is neither: the
 * consumer delivers it again later), the queue fails, or a stop comes
 * while it waits.  0, or -1 to stop. */
static int handle(struct run *r, natsMsg *m, double fetched) {
  bool direct = fetched < 0;
  for (;;) {
    /* A message that waited long in our hands (a slow queue, large
     * products before it): tell the server, so that it does not deliver
     * it again meanwhile. */
    if (!direct && cli_monotonic() - fetched > IN_PROGRESS_MS / 1000.0)
      (void)natsMsg_InProgress(m, NULL);
    enum outcome out = put(r, m);
    natsStatus s;
    switch (out) {
    case DONE:
      if (direct)
        return 0;
      s = natsMsg_Ack(m, NULL);
      if (s != NATS_OK)
        log_debug("ack of stream sequence %" PRIu64 " failed: %s (it "
                  "comes again, then as a duplicate)",
                  stream_seq(m), natsStatus_GetText(s));
      return 0;
    case REFUSED:
      r->terminated++;
      if (direct)
        return 0;
      s = natsMsg_Term(m, NULL);
      if (s != NATS_OK)
        log_warning("terminating stream sequence %" PRIu64 " failed: %s",
                    stream_seq(m), natsStatus_GetText(s));
      return 0;
    case FATAL:
      return -1;
    case RETRY:
      if (cli_stopping())
        return -1;
      if (!direct)
        fetched = cli_monotonic() - IN_PROGRESS_MS; /* say so next time */
      break;
    }
  }
}

/* The messages of the stream after r->last_seq and before upto that the
 * consumer's filter takes, got from the stream directly (direct gets of
 * the next message on the filter, else each sequence in turn) and
 * inserted in order.  0, or -1 to stop. */
static int catch_up(struct run *r, uint64_t upto) {
  const char *stream = r->o->nats.stream;
  while (r->last_seq + 1 < upto) {
    natsMsg *m = NULL;
    natsStatus s;
    if (r->direct_products) {
      jsDirectGetMsgOptions dg;
      jsDirectGetMsgOptions_Init(&dg);
      dg.Sequence = r->last_seq + 1;
      dg.NextBySubject = r->o->filter;
      s = js_DirectGetMsg(&m, r->conn.js, stream, NULL, &dg);
    } else {
      s = js_GetMsg(&m, r->conn.js, stream, r->last_seq + 1, NULL, NULL);
    }
    if (s == NATS_NOT_FOUND) {
      /* Nothing more on the filter (direct), or a deleted message. */
      if (r->direct_products)
        r->last_seq = upto - 1;
      else
        r->last_seq++;
      continue;
    }
    if (s != NATS_OK) {
      if (cli_stopping())
        return -1;
      retry_later(r, "get of a message delivered before", s);
      continue;
    }
    retry_over(r);
    uint64_t seq = stream_seq(m);
    if (seq <= r->last_seq || seq >= upto) {
      natsMsg_Destroy(m);
      r->last_seq = upto - 1;
      break;
    }
    if (!r->direct_products &&
        !n2p_subject_match(r->o->filter, natsMsg_GetSubject(m))) {
      natsMsg_Destroy(m);
      r->last_seq = seq;
      continue;
    }
    log_info("stream sequence %" PRIu64 " taken again (delivered before, "
             "not acknowledged)",
             seq);
    int rc = handle(r, m, -1.0);
    natsMsg_Destroy(m);
    if (rc != 0)
      return -1;
    r->last_seq = seq;
  }
  return 0;
}

/*
 * Message m, fetched, in stream order.  The consumer delivers in stream
 * order, but a message it delivered that never reached us (a run killed
 * before acknowledging, a response lost with a server) comes again only
 * after the ack wait, behind newer ones: so when a delivery follows a gap
 * (its consumer sequence is not the next one) the messages of the stream
 * between the last one handled and m are taken first (catch_up()), and a
 * message that comes again after that is acknowledged without inserting
 * it again (it was handled: inserted, found there or refused).
 * 0, or -1 to stop.
 */
static int take_in_order(struct run *r, natsMsg *m, double fetched) {
  uint64_t cseq, seq = stream_seq2(m, &cseq);
  if (seq != 0 && seq <= r->last_seq) {
    log_debug("stream sequence %" PRIu64 " again: handled already", seq);
    (void)natsMsg_Ack(m, NULL);
    r->last_cseq = cseq;
    return 0;
  }
  if (seq > r->last_seq + 1 && (r->last_cseq == 0 || cseq != r->last_cseq + 1))
    if (catch_up(r, seq) != 0)
      return -1;
  if (handle(r, m, fetched) != 0)
    return -1;
  r->last_seq = seq;
  r->last_cseq = cseq;
  return 0;
}

/* The fetch loop.  0 when done (-n) or stopped, EXIT_RUNTIME when the
 * queue failed. */
static int feed(struct run *r) {
  const struct opts *o = r->o;
  bool stop_asked = false;
  while (!stop_asked) {
    if (cli_stats_requested())
      log_notice("%" PRIu64 " products inserted, %" PRIu64
                 " duplicates, %" PRIu64 " refused",
                 r->inserted, r->dups, r->terminated);
    if (cli_stopping())
      break;
    natsMsgList list = {0};
    jsErrCode jerr = 0;
    natsStatus s = natsSubscription_Fetch(
        &list, r->sub, (int)o->batch,
        o->once ? FETCH_WAIT_ONCE_MS : FETCH_WAIT_MS, &jerr);
    if (s == NATS_TIMEOUT || (s == NATS_OK && list.Count == 0)) {
      natsMsgList_Destroy(&list);
      if (ldmnats_connected(&r->conn))
        retry_over(r);
      if (o->once && all_done(r))
        return 0;
      continue;
    }
    if (s != NATS_OK) {
      natsMsgList_Destroy(&list);
      retry_later(r, "fetch", s);
      continue;
    }
    retry_over(r);
    double fetched = cli_monotonic();
    /* A stop now finishes the batch in hand, then ends the loop. */
    for (int i = 0; i < list.Count; i++) {
      if (take_in_order(r, list.Msgs[i], fetched) != 0) {
        natsMsgList_Destroy(&list);
        return cli_stopping() ? 0 : EXIT_RUNTIME;
      }
    }
    natsMsgList_Destroy(&list);
    stop_asked = cli_stopping();
  }
  return 0;
}

int main(int argc, char **argv) {
  struct cli c;
  struct opts o = {.batch = 256};
  ldmnats_init();
  int rc = cli_parse(&c, argc, argv, &spec, &o);
  if (rc != CLI_GO_ON)
    return rc;
  o.nats.want_durable = true;
  if (ldmnats_resolve(&c, &o.nats) != 0)
    return CLI_EXIT_USAGE;
  if (o.filter == NULL) {
    snprintf(o.filter_buf, sizeof o.filter_buf, "%s.>", o.nats.prefix);
    o.filter = o.filter_buf;
  }
  const char *path = cli_queue_path(&c);
  if (path == NULL)
    return CLI_EXIT_USAGE;
  cli_signals();
  log_notice("Starting Up (%d)", (int)getpgrp());

  struct run r = {.o = &o};
  r.pq = cli_open_queue(path, 0, NULL);
  if (r.pq == NULL)
    return CLI_EXIT_USAGE; /* logged; as the other utilities */
  int status = 0;
  rc = ldmnats_connect(&o.nats, "nats2pq", NULL, &r.conn);
  if (rc == LDMNATS_ECONFIG)
    status = CLI_EXIT_USAGE;
  else if (rc == LDMNATS_EFAIL)
    status = EXIT_RUNTIME;
  if (rc == 0) {
    rc = consumer(&r);
    if (rc > 0)
      status = CLI_EXIT_USAGE;
    else if (rc == 0)
      status = feed(&r);
  }
  if (r.sub != NULL) {
    /* The acks sent last reach the server before we go. */
    (void)natsConnection_FlushTimeout(r.conn.nc, 2000);
    natsSubscription_Destroy(r.sub);
  }
  ldmnats_close(&r.conn);
  log_notice("%" PRIu64 " products inserted (%" PRIu64 " bytes), %" PRIu64
             " duplicates, %" PRIu64 " refused",
             r.inserted, r.bytes, r.dups, r.terminated);
  pq_close(r.pq);
  log_notice("Exiting");
  return status;
}
