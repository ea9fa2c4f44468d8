/*
 * fanout_sink.c - fanout_bench's FEEDME sink (see fanout_sink.h): connect,
 * FEEDME, then serve the upstream's calls: HEREIS (metadata decoded, data
 * read and dropped, latency noted by seqno) and NULLPROC (answered).
 */
#include "test/bench/fanout_sink.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ldmd/proto/ldm6_xdr.h"
#include "ldmd/proto/rpc_io.h"
#include "pq/product.h"

#define HEAD 4096    /* bytes of a record gathered before streaming */
#define WAIT_MS 1000 /* each wait for the upstream; *stop is seen */
/* Connecting and the FEEDME's answer: with hundreds of subscribers
 * started at once on a small machine, the upstream's new processes wait
 * their turn behind the feeds already sending (a real downstream would
 * give up after 60 s and try again). */
#define SYNC_MS 120000
#define SILENT_S 120       /* an upstream that says nothing this long */
#define SINCE_S 3600       /* the class starts this long ago */
#define FEEDPAR_BUF 12288u /* an encoded feedpar */

static uint64_t now_us(void) {
  struct timespec ts;

  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static int fail(fs_slot *slot, const char *what, ldm6_io *io, int rc) {
  snprintf(slot->error, sizeof slot->error, "%s: %s %s", what,
           rc != 0 ? ldm6_io_strerror(rc) : "",
           io != NULL ? ldm6_io_detail(io) : "");
  return -1;
}

/* FEEDME everything created in the last SINCE_S seconds, primary mode. */
static int feedme(ldm6_io *io, fs_slot *slot) {
  static uint8_t buf[FEEDPAR_BUF];
  ldm6_feedpar fp;
  ldm6_fornme_reply rep;
  ldm6_io_msg reply;
  struct iovec iov = {buf, 0};
  size_t used;
  int rc;

  memset(&fp, 0, sizeof fp);
  if (ldm6_ts_from_pq(pq_ts_from_us(now_us() - SINCE_S * 1000000ull),
                      &fp.prod_class.from) != 0 ||
      ldm6_ts_from_pq(PQ_TS_ENDT, &fp.prod_class.to) != 0)
    return fail(slot, "time", NULL, 0);
  fp.prod_class.psa_len = 1;
  fp.prod_class.psa[0].feedtype = PQ_FT_ANY;
  snprintf(fp.prod_class.psa[0].pattern, sizeof fp.prod_class.psa[0].pattern,
           ".*");
  fp.max_hereis = LDM6_MAX_HEREIS_PRIMARY;
  if (ldm6_encode(LDM6_T_FEEDPAR, &fp, buf, sizeof buf, &iov.iov_len) != 0)
    return fail(slot, "cannot encode FEEDME", NULL, 0);
  rc = ldm6_io_call(io, LDM6_VERSION6, LDM6_FEEDME, &iov, 1, SYNC_MS, &reply);
  if (rc != LDM6_IO_OK)
    return fail(slot, "FEEDME", io, rc);
  if (ldm6_decode(LDM6_T_FORNME_REPLY, reply.body, reply.body_len, &rep,
                  &used) != 0 ||
      rep.code != LDM6_OK) {
    snprintf(slot->error, sizeof slot->error,
             "FEEDME not answered OK (code %d)", (int)rep.code);
    return -1;
  }
  slot->connected = 1;
  return 0;
}

/* One HEREIS begun by ldm6_io_recv_head(): the rest read and dropped. */
static int hereis(ldm6_io *io, const ldm6_io_msg *m, bool more, fs_slot *slot,
                  int32_t *lat, uint32_t cap) {
  ldm6_prod_info info;
  size_t used, total;
  uint64_t now;

  if (ldm6_decode(LDM6_T_PROD_INFO, m->body, m->body_len, &info, &used) != 0)
    return fail(slot, "undecodable HEREIS", NULL, 0);
  total = used + info.sz + ldm6_xdr_pad(info.sz);
  if (more) {
    int rc;

    if (total < m->body_len)
      return fail(slot, "HEREIS shorter than its record", NULL, 0);
    rc = ldm6_io_recv_body(io, NULL, total - m->body_len, WAIT_MS * 10);
    if (rc == LDM6_IO_OK)
      rc = ldm6_io_recv_end(io, WAIT_MS * 10);
    if (rc != LDM6_IO_OK)
      return fail(slot, "HEREIS data", io, rc);
  } else if (total != m->body_len) {
    return fail(slot, "HEREIS of the wrong length", NULL, 0);
  }
  now = now_us();
  slot->last_us = now;
  if (info.seqno >= cap) {
    slot->strays++;
  } else if (lat[info.seqno] >= 0) {
    slot->dups++;
  } else {
    int64_t d =
        (int64_t)now - (int64_t)pq_ts_to_us(ldm6_ts_to_pq(info.arrival));

    lat[info.seqno] = d < 0 ? 0 : d > INT32_MAX ? INT32_MAX : (int32_t)d;
    slot->bytes += info.sz;
    slot->arrived++;
  }
  return 0;
}

/* Serve the upstream's calls until *stop or the end of the connection. */
static int serve(ldm6_io *io, fs_slot *slot, int32_t *lat, uint32_t cap,
                 const volatile sig_atomic_t *stop) {
  unsigned silent = 0;

  while (!*stop) {
    ldm6_io_msg m;
    bool more = false;
    int rc = ldm6_io_recv_head(io, WAIT_MS, HEAD, &m, &more);

    if (rc == LDM6_IO_TIMEDOUT || rc == LDM6_IO_STOPPED) {
      if (++silent > SILENT_S)
        return fail(slot, "upstream silent", io, rc);
      continue;
    }
    silent = 0;
    if (rc != LDM6_IO_OK)
      return *stop ? 0 : fail(slot, "receive", io, rc);
    if (m.hdr.type != LDM6_RPC_CALL)
      return fail(slot, "a reply where a call was due", NULL, 0);
    if (m.hdr.u.call.proc == LDM6_HEREIS) {
      if (hereis(io, &m, more, slot, lat, cap) != 0)
        return -1;
    } else if (more) {
      return fail(slot, "long record that is not a HEREIS", NULL, 0);
    } else if (m.hdr.u.call.proc == LDM6_NULLPROC) {
      rc = ldm6_io_reply(io, m.hdr.xid, NULL, 0);
      if (rc != LDM6_IO_OK)
        return fail(slot, "NULLPROC reply", io, rc);
    } else {
      rc = ldm6_io_reply_error(io, m.hdr.xid, LDM6_RPC_PROC_UNAVAIL);
      if (rc != LDM6_IO_OK)
        return fail(slot, "reply", io, rc);
    }
  }
  return 0;
}

int fs_run(unsigned port, fs_slot *slot, int32_t *lat, uint32_t cap,
           const volatile sig_atomic_t *stop) {
  char err[256];
  ldm6_io *io =
      ldm6_io_connect_cancel("127.0.0.1", port, SYNC_MS, stop, err, sizeof err);
  int rc;

  if (io == NULL) {
    snprintf(slot->error, sizeof slot->error, "%.150s", err);
    return -1;
  }
  rc = feedme(io, slot);
  if (rc == 0)
    rc = serve(io, slot, lat, cap, stop);
  ldm6_io_free(io);
  return rc;
}
