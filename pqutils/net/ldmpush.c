/*
 * ldmpush.c - the sending side of LDM's push (HIYA, then HEREIS or
 * COMINGSOON + BLKDATA per product, then NULLPROC), for ldmsend and
 * rtstats (pqutils/net/ldmpush.h).  The product's data goes to the socket
 * from the caller's buffer, after its encoded head, with no copy.
 */
#include "pqutils/net/ldmpush.h"

#include <stdio.h>
#include <string.h>
#include <sys/uio.h>

#include "pqutils/common/cli_io.h"

static const uint8_t zeros[4];

void ldmc_push_init(struct ldmc_push *p, ldm6_io *io,
                    const struct ldmc_peer *peer, int timeout_ms) {
  memset(p, 0, sizeof *p);
  p->io = io;
  p->peer = peer;
  p->timeout_ms = timeout_ms;
}

void ldmc_push_free(struct ldmc_push *p) {
  pq_class_free(&p->want); /* empty unless RECLASS */
  memset(&p->want, 0, sizeof p->want);
}

int ldmc_push_hiya(struct ldmc_push *p, const ldm6_prod_class *offer, char *err,
                   size_t errlen) {
  ldm6_hiya_reply rep;
  char why[300];
  int rc;

  rc = ldmc_call(p->io, p->peer, "HIYA", LDM6_VERSION6, LDM6_HIYA,
                 LDM6_T_PROD_CLASS, offer, LDM6_T_HIYA_REPLY, &rep,
                 p->timeout_ms, NULL, err, errlen);
  if (rc != LDM6_IO_OK)
    return rc;
  p->answer = rep.code;
  switch (rep.code) {
  case LDM6_OK:
    p->max_hereis = rep.u.max_hereis;
    return LDM6_IO_OK;
  case LDM6_RECLASS:
    p->max_hereis = rep.u.feedpar.max_hereis;
    p->accepted = rep.u.feedpar.prod_class;
    rc = ldm6_class_to_pq(&p->accepted, &p->want, why, sizeof why);
    if (rc != 0) {
      snprintf(err, errlen, "cannot use the class %s accepts: %s%s%s",
               p->peer->name, ldm6_strerror(rc), why[0] != '\0' ? ": " : "",
               why);
      return LDMC_EANSWER;
    }
    return LDM6_IO_OK;
  case LDM6_DONT_SEND:
    return LDM6_IO_OK;
  default:
    snprintf(err, errlen, "%s answered HIYA with %s", p->peer->name,
             ldm6_errt_name(rep.code));
    return LDMC_EANSWER;
  }
}

bool ldmc_push_wanted(const struct ldmc_push *p, const pq_prod_info *info) {
  switch (p->answer) {
  case LDM6_OK:
    return true;
  case LDM6_RECLASS:
    return pq_class_match(&p->want, info);
  default:
    return false;
  }
}

/* Send call proc (HEREIS or BLKDATA): its argument head, hlen bytes, then
 * sz bytes of data, padded.  `what` precedes the product's name in the
 * message ("", "the data of "). */
static int send_data_call(struct ldmc_push *p, uint32_t proc, uint8_t *head,
                          size_t hlen, const void *data, uint32_t sz,
                          const char *what, const char *ident, char *err,
                          size_t errlen) {
  struct iovec iov[3] = {
      {head, hlen}, {(void *)data, sz}, {(void *)zeros, ldm6_xdr_pad(sz)}};
  char why[700];
  int rc = ldm6_io_send_call(p->io, LDM6_VERSION6, proc, iov, 3, NULL);

  if (rc == LDM6_IO_OK)
    return rc;
  snprintf(err, errlen, "cannot send %s%s to %s: %s", what, ident,
           p->peer->name, ldmc_io_text(p->io, rc, why, sizeof why));
  return cli_io_stopping() ? LDMC_STOPPED : rc;
}

int ldmc_push_product(struct ldmc_push *p, const pq_prod_info *info,
                      const void *data, char *err, size_t errlen) {
  ldm6_prod_info wire;
  uint8_t head[512];
  size_t hlen = 0;
  uint32_t sz;
  int rc;

  rc = ldm6_info_from_pq(info, &wire);
  if (rc != 0) {
    snprintf(err, errlen, "cannot describe %s for LDM: %s", info->ident,
             ldm6_strerror(rc));
    return LDMC_EPRODUCT;
  }
  sz = wire.sz;
  if (sz <= p->max_hereis) {
    rc = ldm6_encode(LDM6_T_PROD_INFO, &wire, head, sizeof head, &hlen);
    if (rc == 0)
      return send_data_call(p, LDM6_HEREIS, head, hlen, data, sz, "",
                            info->ident, err, errlen);
  } else {
    ldm6_comingsoon_args cs;
    ldm6_comingsoon_reply answer = LDM6_OK;
    ldm6_datapkt pkt;

    cs.info = wire;
    cs.pktsz = sz;
    rc = ldmc_call(p->io, p->peer, "COMINGSOON", LDM6_VERSION6, LDM6_COMINGSOON,
                   LDM6_T_COMINGSOON_ARGS, &cs, LDM6_T_COMINGSOON_REPLY,
                   &answer, p->timeout_ms, NULL, err, errlen);
    if (rc != LDM6_IO_OK)
      return rc;
    if (answer == LDM6_DONT_SEND)
      return LDMC_UNWANTED;
    if (answer != LDM6_OK) {
      snprintf(err, errlen, "%s answered COMINGSOON with %s", p->peer->name,
               ldm6_errt_name(answer));
      return LDMC_EANSWER;
    }
    memcpy(pkt.signature, wire.signature, sizeof pkt.signature);
    pkt.pktnum = 0;
    pkt.data_len = sz;
    pkt.data = data;
    rc = ldm6_encode_datapkt_head(&pkt, head, sizeof head, &hlen);
    if (rc == 0)
      return send_data_call(p, LDM6_BLKDATA, head, hlen, data, sz,
                            "the data of ", info->ident, err, errlen);
  }
  snprintf(err, errlen, "cannot encode %s: %s", info->ident, ldm6_strerror(rc));
  return LDMC_EPRODUCT;
}

int ldmc_push_flush(struct ldmc_push *p, char *err, size_t errlen) {
  return ldmc_call(p->io, p->peer, "NULLPROC", LDM6_VERSION6, LDM6_NULLPROC,
                   LDM6_T_VOID, NULL, LDM6_T_VOID, NULL, p->timeout_ms, NULL,
                   err, errlen);
}
