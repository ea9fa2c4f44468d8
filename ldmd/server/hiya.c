/*
 * hiya.c - the receiving side of a push (ldmsend, pqsend, rtstats): HIYA
 * offers a class; the ACCEPT entries that match the peer decide what is
 * taken (docs/protocol.md §8); the answer is OK(max_hereis) when that is
 * the offer, RECLASS(accepted class) when it is less, and AUTH_TOOWEAK
 * (and the connection closes) when it is nothing.  The products that follow
 * (HEREIS, COMINGSOON + BLKDATA) are handed to downstream.c, which vets
 * and inserts them; requesters use the same handlers for the products of
 * their feeds.  A HIYA receiver always asks for primary mode
 * (max_hereis 0xFFFFFFFF), as LDM's does; the sender still uses
 * COMINGSOON + BLKDATA for products larger than its own threshold.
 */
#include <stdio.h>
#include <string.h>

#include "ldmd/proto/ldm6_xdr.h"
#include "ldmd/site/log.h"
#include "ldmd/server/server.h"

#define RECORD_SLACK (1u << 20) /* record bytes beyond a product's data */

/* Decode the arguments of a call, or answer GARBAGE_ARGS.
 * @return 0, or the ldmd_next to return */
static int decode_args(ldmd_conn *c, const ldm6_io_msg *m, ldm6_type type,
                       void *value, int *next) {
  size_t used;
  int rc = ldm6_decode(type, m->body, m->body_len, value, &used);

  if (rc == 0)
    return 0;
  log_warning("undecodable %s from %s: %s", ldm6_type_name(type), c->peer,
              ldm6_strerror(rc));
  *next = ldmd_conn_reply_error(c, m->hdr.xid, LDM6_RPC_GARBAGE_ARGS);
  return -1;
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
  max = pq_data_size(c->pq) + RECORD_SLACK;
  if (max > SIZE_MAX)
    max = SIZE_MAX;
  ldm6_io_set_max_record(c->io, (size_t)max);
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
  rc = ldm_conf_accepted_class(c->set->conf, c->named ? c->name : NULL, c->ip,
                               &want, &accepted, err, sizeof err);
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
  c->down = ldmd_down_new(c->pq, c->name, c->set->max_latency, &accepted);
  if (c->down == NULL) {
    log_error("cannot receive from %s: out of memory", c->peer);
    return LDMD_FAIL;
  }
  if (next == LDMD_CONTINUE)
    log_info("receiving products from %s", c->peer);
  return next;
}

static int hereis(ldmd_conn *c, const ldm6_io_msg *m) {
  ldm6_product prod;
  int next = LDMD_CONTINUE;

  if (decode_args(c, m, LDM6_T_PRODUCT, &prod, &next) != 0)
    return next;
  return ldmd_down_hereis(c->down, &prod) == LDMD_DOWN_OK ? LDMD_CONTINUE
                                                          : LDMD_FAIL;
}

static int comingsoon(ldmd_conn *c, const ldm6_io_msg *m) {
  ldm6_comingsoon_args args;
  ldm6_comingsoon_reply reply;
  int next = LDMD_CONTINUE;

  if (decode_args(c, m, LDM6_T_COMINGSOON_ARGS, &args, &next) != 0)
    return next;
  if (ldmd_down_comingsoon(c->down, &args, &reply) != LDMD_DOWN_OK) {
    (void)ldmd_conn_reply_error(c, m->hdr.xid, LDM6_RPC_SYSTEM_ERR);
    return LDMD_FAIL;
  }
  return ldmd_conn_reply(c, m->hdr.xid, LDM6_T_COMINGSOON_REPLY, &reply);
}

static int blkdata(ldmd_conn *c, const ldm6_io_msg *m) {
  ldm6_datapkt pkt;
  int next = LDMD_CONTINUE;

  if (decode_args(c, m, LDM6_T_DATAPKT, &pkt, &next) != 0)
    return next;
  switch (ldmd_down_blkdata(c->down, &pkt)) {
  case LDMD_DOWN_OK:
    return LDMD_CONTINUE;
  case LDMD_DOWN_EPROTO:
    log_error("invalid BLKDATA from %s: closing", c->peer);
    (void)ldmd_conn_reply_error(c, m->hdr.xid, LDM6_RPC_SYSTEM_ERR);
    return LDMD_FAIL;
  default:
    return LDMD_FAIL;
  }
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
