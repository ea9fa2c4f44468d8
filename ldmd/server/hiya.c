/*
 * hiya.c - the receiving side of a push (ldmsend, pqsend, rtstats): HIYA
 * offers a class; the ACCEPT entries that match the peer decide what is
 * taken (docs/protocol.md §8); the answer is OK(max_hereis) when that is
 * the offer, RECLASS(accepted class) when it is less, and AUTH_TOOWEAK
 * (and the connection closes) when it is nothing.  The products that follow
 * (HEREIS, COMINGSOON + BLKDATA) are handed to downstream.c, which vets
 * and inserts them; requesters use the same handlers for the products of
 * their feeds.  A HEREIS or BLKDATA record that holds more or fewer data
 * bytes than it declares is refused whole (SYSTEM_ERR, and the connection
 * closes), and a NULLPROC ends a product whose data is still incomplete.
 * A HIYA receiver always asks for primary mode (max_hereis 0xFFFFFFFF), as
 * LDM's does; the sender still uses COMINGSOON + BLKDATA for products
 * larger than its own threshold.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "ldmd/proto/ldm6_text.h"
#include "ldmd/proto/ldm6_xdr.h"
#include "ldmd/site/log.h"
#include "ldmd/server/server.h"

#define RECORD_SLACK (1u << 20) /* record bytes beyond a product's data */

/* Decode the arguments of a call (the first *used bytes of its body), or
 * answer GARBAGE_ARGS.  @return 0, or the ldmd_next to return */
static int decode_used(ldmd_conn *c, const ldm6_io_msg *m, ldm6_type type,
                       void *value, size_t *used, int *next) {
  int rc = ldm6_decode(type, m->body, m->body_len, value, used);

  if (rc == 0)
    return 0;
  log_warning("undecodable %s from %s: %s", ldm6_type_name(type), c->peer,
              ldm6_strerror(rc));
  *next = ldmd_conn_reply_error(c, m->hdr.xid, LDM6_RPC_GARBAGE_ARGS);
  return -1;
}

static int decode_args(ldmd_conn *c, const ldm6_io_msg *m, ldm6_type type,
                       void *value, int *next) {
  size_t used;

  return decode_used(c, m, type, value, &used, next);
}

int ldmd_refuse_product(ldmd_conn *c, uint32_t xid, const char *call,
                        const char *ident, const uint8_t *sig,
                        uint64_t declared, const char *why) {
  char hex[33];

  pq_sig_format(sig, hex);
  if (c->down != NULL)
    (void)ldmd_down_discard(c->down, "its record was refused");
  log_error("refusing %s of %s%s(%s) from %s: %llu bytes declared, %s: "
            "nothing stored, closing",
            call, ident != NULL ? ident : "", ident != NULL ? " " : "", hex,
            c->peer, (unsigned long long)declared, why);
  (void)ldm6_io_reply_error(c->io, xid, LDM6_RPC_SYSTEM_ERR);
  return LDMD_FAIL;
}

int ldmd_product_size_check(ldmd_conn *c, uint32_t xid, const char *call,
                            const ldm6_prod_info *info) {
  char why[128];

  if (c->set->max_product == 0 || info->sz <= c->set->max_product)
    return LDMD_CONTINUE;
  snprintf(why, sizeof why, "more than the largest product taken (%s %llu)",
           "/server/max-product-size", (unsigned long long)c->set->max_product);
  return ldmd_refuse_product(c, xid, call, info->ident, info->signature,
                             info->sz, why);
}

uint64_t ldmd_product_record_max(const ldmd_settings *set, const pq_t *pq) {
  uint64_t biggest = pq_data_size(pq);

  if (set->max_product > 0 && set->max_product < biggest)
    biggest = set->max_product;
  return biggest + RECORD_SLACK;
}

/* The queue, opened for writing on the first push. */
static int open_queue(ldmd_conn *c) {
  pq_error err;
  uint64_t max;
  int rc;

  if (c->pq != NULL)
    return 0;
  rc = pq_open(c->set->queue_path, 0, &c->pq, &err);
  if (rc != PQ_OK) {
    log_error("cannot open the queue %s for writing: %s", c->set->queue_path,
              err.pe_msg);
    c->pq = NULL;
    return -1;
  }
  /* A HEREIS record holds a whole product. */
  max = ldmd_product_record_max(c->set, c->pq);
  if (max > SIZE_MAX)
    max = SIZE_MAX;
  ldm6_io_set_max_record(c->io, (size_t)max);
  ldm6_io_set_stream_start(c->io, LDMD_RECORD_START);
  return 0;
}

/* The answer to an acceptable offer: OK, or RECLASS with what is taken. */
static int answer(ldmd_conn *c, uint32_t xid, const pq_class *offer,
                  const pq_class *accepted) {
  ldm6_hiya_reply reply;
  int rc;

  memset(&reply, 0, sizeof reply);
  if (ldm_conf_class_equal(accepted, offer)) {
    reply.code = LDM6_OK;
    reply.u.max_hereis = LDM6_MAX_HEREIS_PRIMARY;
    return ldmd_conn_reply(c, xid, LDM6_T_HIYA_REPLY, &reply);
  }
  reply.code = LDM6_RECLASS;
  reply.u.feedpar.max_hereis = LDM6_MAX_HEREIS_PRIMARY;
  rc = ldm6_class_from_pq(accepted, &reply.u.feedpar.prod_class);
  if (rc != 0) {
    log_error("cannot express the accepted class for %s: %s", c->peer,
              ldm6_strerror(rc));
    return ldmd_conn_reply_error(c, xid, LDM6_RPC_SYSTEM_ERR);
  }
  log_info("hiya from %s: taking only part of the offer (RECLASS)", c->peer);
  return ldmd_conn_reply(c, xid, LDM6_T_HIYA_REPLY, &reply);
}

/* The live figures: this process receives the accepted class. */
static void describe(ldmd_conn *c, const pq_class *accepted) {
  ldm6_prod_class wire;
  char text[LDMM_FEED_MAX] = "";

  if (c->ms == NULL)
    return;
  if (ldm6_class_from_pq(accepted, &wire) == 0)
    (void)ldm6_class_format(&wire, text, sizeof text);
  ldmm_describe(c->ms, LDMM_KIND_DOWNSTREAM, c->peer, text);
}

int ldmd_hiya(ldmd_conn *c, const ldm6_io_msg *m) {
  ldm6_prod_class offer;
  pq_class want, accepted;
  char err[512];
  int next = LDMD_CONTINUE, rc;

  if (decode_args(c, m, LDM6_T_PROD_CLASS, &offer, &next) != 0)
    return next;
  rc = ldm6_class_to_pq(&offer, &want, err, sizeof err);
  if (rc != 0) {
    log_warning("hiya from %s: bad class: %s %s", c->peer, ldm6_strerror(rc),
                rc == LDM6_EPATTERN ? err : "");
    return ldmd_conn_reply_error(c, m->hdr.xid, LDM6_RPC_SYSTEM_ERR);
  }
  rc = ldm_conf_accepted_class_peer(c->set->conf, c->named ? c->name : NULL,
                                    c->ip, c->tls, &want, &accepted, err,
                                    sizeof err);
  if (rc == LDM_CONF_EDENIED) {
    log_notice("denying products from %s: no ACCEPT entry takes the offer",
               c->peer);
    pq_class_free(&want);
    pq_class_free(&accepted);
    (void)ldm6_io_reply_auth_error(c->io, m->hdr.xid, LDM6_RPC_AUTH_TOOWEAK);
    return LDMD_DONE;
  }
  if (rc != LDM_CONF_OK) {
    log_error("hiya from %s: %s", c->peer, err);
    pq_class_free(&want);
    pq_class_free(&accepted);
    return ldmd_conn_reply_error(c, m->hdr.xid, LDM6_RPC_SYSTEM_ERR);
  }
  if (open_queue(c) != 0) {
    pq_class_free(&want);
    pq_class_free(&accepted);
    (void)ldmd_conn_reply_error(c, m->hdr.xid, LDM6_RPC_SYSTEM_ERR);
    return LDMD_FAIL;
  }
  next = answer(c, m->hdr.xid, &want, &accepted);
  pq_class_free(&want);
  ldmd_down_free(c->down);
  describe(c, &accepted);
  c->down = ldmd_down_new(c->pq, c->name, c->set->max_latency, &accepted);
  if (c->down == NULL) {
    log_error("cannot receive from %s: out of memory", c->peer);
    return LDMD_FAIL;
  }
  ldmd_down_set_metrics(c->down, c->ms, c->mfeeds);
  ldmd_down_set_hold(c->down, c->set->max_product_memory);
  c->push = true;
  c->lost_told = 0;
  if (next == LDMD_CONTINUE)
    log_info("receiving products from %s", c->peer);
  return next;
}

/* A product's data has no length word of its own: info.sz says how long
 * it is, so what follows the metadata must be exactly that many bytes and
 * their padding.  A record with more or fewer is refused whole (LDM stored
 * the first info.sz bytes of a longer one, or answered GARBAGE_ARGS to a
 * shorter one, and went on). */
static int hereis(ldmd_conn *c, const ldm6_io_msg *m) {
  ldm6_product prod;
  size_t used, have;
  int next = LDMD_CONTINUE;

  if (decode_used(c, m, LDM6_T_PROD_INFO, &prod.info, &used, &next) != 0)
    return next;
  if (ldmd_product_size_check(c, m->hdr.xid, "HEREIS", &prod.info) !=
      LDMD_CONTINUE)
    return LDMD_FAIL;
  have = m->body_len - used;
  if (have != (size_t)prod.info.sz + ldm6_xdr_pad(prod.info.sz)) {
    char why[96];

    snprintf(why, sizeof why, "the record holds %zu", have);
    return ldmd_refuse_product(c, m->hdr.xid, "HEREIS", prod.info.ident,
                               prod.info.signature, prod.info.sz, why);
  }
  prod.data = m->body + used;
  return ldmd_down_hereis(c->down, &prod) == LDMD_DOWN_OK ? LDMD_CONTINUE
                                                          : LDMD_FAIL;
}

static int comingsoon(ldmd_conn *c, const ldm6_io_msg *m) {
  ldm6_comingsoon_args args;
  ldm6_comingsoon_reply reply;
  int next = LDMD_CONTINUE;

  if (decode_args(c, m, LDM6_T_COMINGSOON_ARGS, &args, &next) != 0)
    return next;
  if (ldmd_product_size_check(c, m->hdr.xid, "COMINGSOON", &args.info) !=
      LDMD_CONTINUE)
    return LDMD_FAIL;
  if (ldmd_down_comingsoon(c->down, &args, &reply) != LDMD_DOWN_OK) {
    (void)ldmd_conn_reply_error(c, m->hdr.xid, LDM6_RPC_SYSTEM_ERR);
    return LDMD_FAIL;
  }
  return ldmd_conn_reply(c, m->hdr.xid, LDM6_T_COMINGSOON_REPLY, &reply);
}

/* The identifier of the pending product into ident if sig is its
 * signature.  @return ident, or NULL */
static const char *pending_ident(const ldmd_conn *c, const uint8_t *sig,
                                 char ident[PQ_IDENT_MAX + 1]) {
  const pq_prod_info *p = ldmd_down_pending(c->down);

  if (p == NULL || memcmp(p->signature, sig, PQ_SIGLEN) != 0)
    return NULL;
  snprintf(ident, PQ_IDENT_MAX + 1, "%s", p->ident);
  return ident;
}

/* A BLKDATA's data has its own length word: the record must end with
 * those bytes and their padding, and they must fit in what COMINGSOON
 * announced. */
static int blkdata(ldmd_conn *c, const ldm6_io_msg *m) {
  ldm6_datapkt pkt;
  char ident[PQ_IDENT_MAX + 1];
  const char *name;
  size_t used;
  int next = LDMD_CONTINUE;

  if (m->body_len >= LDMD_DATAPKT_HEAD) {
    uint32_t len;
    size_t have = m->body_len - LDMD_DATAPKT_HEAD;

    memcpy(&len, m->body + LDMD_DATAPKT_HEAD - 4, 4);
    len = ntohl(len);
    if (have != (size_t)len + ldm6_xdr_pad(len)) {
      char why[96];

      snprintf(why, sizeof why, "the record holds %zu", have);
      return ldmd_refuse_product(c, m->hdr.xid, "BLKDATA",
                                 pending_ident(c, m->body, ident), m->body, len,
                                 why);
    }
  }
  if (decode_used(c, m, LDM6_T_DATAPKT, &pkt, &used, &next) != 0)
    return next;
  name = pending_ident(c, pkt.signature, ident); /* before it is dropped */
  switch (ldmd_down_blkdata(c->down, &pkt)) {
  case LDMD_DOWN_OK:
    return LDMD_CONTINUE;
  case LDMD_DOWN_EPROTO:
    /* downstream.c said why */
    return ldmd_refuse_product(c, m->hdr.xid, "BLKDATA", name, pkt.signature,
                               pkt.data_len,
                               "not the data COMINGSOON announced");
  default:
    return LDMD_FAIL;
  }
}

int ldmd_product_flush(ldmd_conn *c, const ldm6_io_msg *m) {
  uint64_t lost;

  if (c->down == NULL)
    return ldmd_conn_reply(c, m->hdr.xid, LDM6_T_VOID, NULL);
  (void)ldmd_down_discard(c->down, "NULLPROC came before the rest");
  lost = ldmd_down_lost(ldmd_down_stats_get(c->down));
  if (c->push && lost > c->lost_told) {
    log_error("%llu products from %s since its last NULLPROC were not "
              "stored: answering SYSTEM_ERR, not confirming them",
              (unsigned long long)(lost - c->lost_told), c->peer);
    c->lost_told = lost;
    return ldmd_conn_reply_error(c, m->hdr.xid, LDM6_RPC_SYSTEM_ERR);
  }
  c->lost_told = lost;
  return ldmd_conn_reply(c, m->hdr.xid, LDM6_T_VOID, NULL);
}

int ldmd_product_call(ldmd_conn *c, const ldm6_io_msg *m) {
  uint32_t proc = m->hdr.u.call.proc;

  if (c->down == NULL) {
    log_warning("product call %u from %s before HIYA", (unsigned)proc, c->peer);
    if (proc == LDM6_COMINGSOON)
      return ldmd_conn_reply_error(c, m->hdr.xid, LDM6_RPC_SYSTEM_ERR);
    return LDMD_CONTINUE; /* one-way: never answered */
  }
  switch (proc) {
  case LDM6_HEREIS:
    return hereis(c, m);
  case LDM6_COMINGSOON:
    return comingsoon(c, m);
  default:
    return blkdata(c, m);
  }
}
