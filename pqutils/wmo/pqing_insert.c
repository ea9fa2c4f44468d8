/*
 * pqing_insert.c - messages into products and products into the queue
 * (pqing_insert.h), with LDM's log lines.
 */
#include "pqutils/wmo/pqing_insert.h"

#include <stdio.h>
#include <string.h>

#include "ldmd/site/log.h"
#include "pqutils/common/cli.h"
#include "pqutils/wmo/wmo_feed.h"
#include "pqutils/wmo/wmo_message.h"
#include "pqutils/wmo/wmo_sig.h"

/* The library's messages, to the logger at their level. */
static void to_log(void *arg, int level, const char *msg) {
  (void)arg;
  ldm_log((enum ldm_log_level)level, "%s", msg);
}

void pqing_out_init(struct pqing_out *o, pq_t *pq, uint32_t feedtype,
                    enum wmo_framing framing) {
  memset(o, 0, sizeof *o);
  o->pq = pq;
  o->feedtype = feedtype;
  o->framing = framing;
  o->nexrad = true;
  o->log = (struct np_log){.fn = to_log, .arg = NULL, .level = NP_DEBUG};
}

/* LDM's toClients(): sign, log at INFO, insert. */
static void to_queue(struct pqing_out *o, const struct wmo_product *p,
                     const uint8_t *data, size_t len) {
  pq_prod_info info;
  memset(&info, 0, sizeof info);
  if (wmo_signature(data, len, o->whole_sig, info.signature) != 0) {
    log_error("cannot compute the MD5 signature (OpenSSL); %s not inserted",
              p->ident);
    return;
  }
  memcpy(info.origin, o->origin, sizeof info.origin);
  info.feedtype = wmo_feed_of_product(o->feedtype, p->ident, o->nexrad);
  info.seqno = p->seqno;
  snprintf(info.ident, sizeof info.ident, "%s", p->ident);
  info.size = len;
  info.arrival = pq_ts_now();
  cli_log_product("", &info, false);
  if (o->pq == NULL) /* feedtest */
    return;
  int rc = pq_insert(o->pq, &info, data);
  switch (rc) {
  case PQ_OK:
    o->inserted++;
    return;
  case PQ_DUP:
    o->ndups++;
    log_info("Product already in queue");
    return;
  case PQ_BIG: {
    char line[600];
    pq_prod_info_format(&info, true, line, sizeof line);
    log_error("Product too big for queue: %s", line);
    return;
  }
  default:
    log_error("pq_insert: %s", pq_last_error(o->pq)->pe_msg);
    o->failed = true;
    return;
  }
}

static void message(struct pqing_out *o, const struct wmo_event *ev) {
  struct wmo_product p;
  int rc;
  switch (o->framing) {
  case WMO_FRAME_AFOS:
    o->afos_seqno++;
    if (ev->no_zczc)
      o->zczc_missed++;
    rc = wmo_parse_afos(ev->data, ev->len, o->afos_seqno, &p, &o->log);
    if (rc != 0)
      o->unrecognizable++;
    break;
  case WMO_FRAME_FAA604:
    rc = wmo_parse_faa604(ev->data, ev->len, &p, &o->log);
    if (rc != 0)
      o->not_wmo++;
    break;
  default:
    rc = wmo_parse(ev->data, ev->len, o->pil, &p, &o->log);
    if (rc != 0)
      o->not_wmo++;
    break;
  }
  if (rc != 0)
    return;
  o->completed++;
  to_queue(o, &p, ev->data, ev->len);
}

void pqing_out_event(void *arg, const struct wmo_event *ev) {
  struct pqing_out *o = arg;
  bool faa = o->framing == WMO_FRAME_FAA604;
  char why[160];
  if (faa)
    wmo_faa604_err_ident(ev->data, ev->data ? ev->len : 0, why, sizeof why);
  else
    wmo_err_ident(ev->data, ev->data ? ev->len : 0, why, sizeof why);
  switch (ev->kind) {
  case WMO_EV_MESSAGE:
    message(o, ev);
    return;
  case WMO_EV_TOO_SHORT:
    if (o->framing == WMO_FRAME_AFOS) {
      o->afos_seqno++;
      o->unrecognizable++;
      log_error("new_afos_message: length %zu too short", ev->len);
      log_error("Unrecognizable: %5s %03u %8zu", "AFOS", o->afos_seqno,
                ev->len);
      return;
    }
    o->not_wmo++;
    log_error("%s length %zu too short",
              faa                              ? "scan_faa604 -"
              : o->framing == WMO_FRAME_BINARY ? "scan_wmo_binary:"
                                               : "scan_wmo:",
              ev->len);
    return;
  case WMO_EV_BAD_CRC:
    o->bad_cksum++;
    log_error("Checksum (0x%04x) error          %s", ev->crc, why);
    return;
  case WMO_EV_PARITY:
    o->bad_cksum++;
    log_error(faa ? "Parity error             - %s"
                  : "Parity error                     %s",
              why);
    return;
  case WMO_EV_LONE_SOH:
    o->sohetx_missed++;
    log_error(faa ? "Lone SOH error           - %s"
                  : "Lone SOH error                   %s",
              why);
    return;
  case WMO_EV_LONE_ETX:
    o->sohetx_missed++;
    log_error(faa ? "Lone ETX error           - %s"
                  : "Lone ETX error                   %s",
              why);
    return;
  case WMO_EV_NO_NNNN: {
    struct wmo_product p;
    o->afos_seqno++;
    o->nnnn_missed++;
    (void)wmo_parse_afos(ev->data, ev->len, o->afos_seqno, &p, &o->log);
    return;
  }
  case WMO_EV_TOO_BIG:
    o->too_big++;
    log_warning("Data-product would exceed %zu bytes. Resetting input buffer.",
                ev->len);
    return;
  case WMO_EV_LOST:
    o->lost_bytes += ev->len;
    return;
  }
}

void pqing_out_stats(const struct pqing_out *o) {
  switch (o->framing) {
  case WMO_FRAME_AFOS:
    log_notice("  AFOS Messages seen: %8lu",
               (unsigned long)o->afos_seqno - o->unrecognizable);
    log_notice("  Errors:  lone ZCZC: %8lu", o->nnnn_missed);
    log_notice("           lone NNNN: %8lu", o->zczc_missed);
    log_notice("      Unrecognizable: %8lu", o->unrecognizable);
    break;
  case WMO_FRAME_FAA604:
    log_notice("  FAA Messages seen:  %8lu", o->completed);
    log_notice("  SOH/ETX missing  :  %8lu", o->sohetx_missed);
    log_notice("  parity errors    :  %8lu", o->bad_cksum);
    log_notice("  format errors    :  %8lu", o->not_wmo);
    break;
  default:
    log_notice("  WMO Messages seen:  %8lu", o->completed);
    log_notice("  SOH/ETX missing  :  %8lu", o->sohetx_missed);
    log_notice("  parity/chksum err:  %8lu", o->bad_cksum);
    log_notice("  WMO format errors:  %8lu", o->not_wmo);
    break;
  }
}
