/*
 * natspeek - what the tests of the NATS bridge (test/nats/) see from the
 * server's side, with libnats and no bridge code:
 *
 *   natspeek count URL STREAM
 *       the stream's message count ("0" when the stream does not exist)
 *   natspeek dump URL STREAM PREFIX
 *       one line a message of the product stream, in sequence order:
 *         <seq> <subject> <Ldm-Ident> <Ldm-Size> <Ldm-Signature>
 *         <Nats-Msg-Id> <Ldm-Chunks or -> <MD5 of the data>
 *       the data being the body, or for a chunked product the chunks
 *       fetched from the chunk stream STREAM_CHUNKS by subject
 *       (PREFIX_chunks.<sig>.<i>), put together; then a line with every
 *       header "<seq> H <name>=<value>..." (for the header checks).
 *       A chunk missing, or a length that is not Ldm-Size: exit 3.
 *
 * Exit 0, 2 when the server does not answer, 3 on a check that failed.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nats/nats.h>

#include "pq/product.h"

static const char *hdr(natsMsg *m, const char *key) {
  const char *v = NULL;
  return natsMsgHeader_Get(m, key, &v) == NATS_OK && v != NULL ? v : "-";
}

static int count(jsCtx *js, const char *stream) {
  jsStreamInfo *si = NULL;
  jsErrCode ec = 0;
  natsStatus s = js_GetStreamInfo(&si, js, stream, NULL, &ec);
  if (s == NATS_NOT_FOUND || ec == JSStreamNotFoundErr) {
    printf("0\n");
    return 0;
  }
  if (s != NATS_OK) {
    fprintf(stderr, "natspeek: stream info of %s: %s\n", stream,
            natsStatus_GetText(s));
    return 2;
  }
  printf("%" PRIu64 "\n", si->State.Msgs);
  jsStreamInfo_Destroy(si);
  return 0;
}

/* The data of a chunked product, from the chunk stream, into its MD5. */
static int chunks_md5(jsCtx *js, const char *cstream, const char *prefix,
                      const char *sig, unsigned long n, uint64_t size,
                      char *md5hex) {
  pq_md5_ctx *ctx = pq_md5_new();
  uint64_t total = 0;
  if (ctx == NULL)
    return 2;
  for (unsigned long i = 0; i < n; i++) {
    char subj[512];
    snprintf(subj, sizeof subj, "%s_chunks.%s.%lu", prefix, sig, i);
    natsMsg *c = NULL;
    jsErrCode ec = 0;
    natsStatus s = js_GetLastMsg(&c, js, cstream, subj, NULL, &ec);
    if (s != NATS_OK) {
      fprintf(stderr, "natspeek: chunk %s: %s\n", subj, natsStatus_GetText(s));
      pq_md5_free(ctx);
      return 3;
    }
    pq_md5_update(ctx, natsMsg_GetData(c), (size_t)natsMsg_GetDataLength(c));
    total += (uint64_t)natsMsg_GetDataLength(c);
    natsMsg_Destroy(c);
  }
  uint8_t dig[PQ_SIGLEN];
  if (pq_md5_final(ctx, dig) != 0)
    return 2;
  pq_sig_format(dig, md5hex);
  if (total != size) {
    fprintf(stderr,
            "natspeek: chunks of %s: %" PRIu64 " bytes, not %" PRIu64 "\n", sig,
            total, size);
    return 3;
  }
  return 0;
}

static int dump(jsCtx *js, const char *stream, const char *prefix) {
  jsStreamInfo *si = NULL;
  jsErrCode ec = 0;
  natsStatus s = js_GetStreamInfo(&si, js, stream, NULL, &ec);
  if (s != NATS_OK) {
    fprintf(stderr, "natspeek: stream info of %s: %s\n", stream,
            natsStatus_GetText(s));
    return 2;
  }
  uint64_t first = si->State.FirstSeq, last = si->State.LastSeq;
  jsStreamInfo_Destroy(si);
  char cstream[256];
  snprintf(cstream, sizeof cstream, "%s_CHUNKS", stream);
  int status = 0;
  for (uint64_t seq = first; seq <= last && seq != 0; seq++) {
    natsMsg *m = NULL;
    s = js_GetMsg(&m, js, stream, seq, NULL, &ec);
    if (s == NATS_NOT_FOUND)
      continue; /* deleted */
    if (s != NATS_OK) {
      fprintf(stderr, "natspeek: message %" PRIu64 ": %s\n", seq,
              natsStatus_GetText(s));
      return 2;
    }
    const char *chunks = hdr(m, "Ldm-Chunks"), *size = hdr(m, "Ldm-Size");
    const char *sig = hdr(m, "Ldm-Signature");
    char md5[33] = "-";
    uint64_t want = strtoull(size, NULL, 10);
    if (strcmp(chunks, "-") != 0) {
      int rc = chunks_md5(js, cstream, prefix, sig, strtoul(chunks, NULL, 10),
                          want, md5);
      if (rc != 0)
        status = rc;
    } else {
      uint8_t dig[PQ_SIGLEN];
      int len = natsMsg_GetDataLength(m);
      if (pq_md5(natsMsg_GetData(m), (size_t)len, dig) == 0)
        pq_sig_format(dig, md5);
      if ((uint64_t)len != want) {
        fprintf(stderr, "natspeek: message %" PRIu64 ": %d bytes, not %s\n",
                seq, len, size);
        status = 3;
      }
    }
    printf("%" PRIu64 " %s %s %s %s %s %s %s\n", seq, natsMsg_GetSubject(m),
           hdr(m, "Ldm-Ident"), size, sig, hdr(m, "Nats-Msg-Id"), chunks, md5);
    const char **keys = NULL;
    int n = 0;
    printf("%" PRIu64 " H", seq);
    if (natsMsgHeader_Keys(m, &keys, &n) == NATS_OK) {
      for (int i = 0; i < n; i++)
        printf(" %s=%s", keys[i], hdr(m, keys[i]));
      free((void *)keys);
    }
    printf("\n");
    natsMsg_Destroy(m);
  }
  return status;
}

int main(int argc, char **argv) {
  if (argc < 4 || (strcmp(argv[1], "count") != 0 &&
                   (strcmp(argv[1], "dump") != 0 || argc < 5))) {
    fprintf(stderr, "usage: natspeek count URL STREAM | "
                    "dump URL STREAM PREFIX\n");
    return 1;
  }
  natsConnection *nc = NULL;
  jsCtx *js = NULL;
  natsStatus s = natsConnection_ConnectTo(&nc, argv[2]);
  if (s == NATS_OK)
    s = natsConnection_JetStream(&js, nc, NULL);
  if (s != NATS_OK) {
    fprintf(stderr, "natspeek: cannot connect to %s: %s\n", argv[2],
            natsStatus_GetText(s));
    natsConnection_Destroy(nc);
    return 2;
  }
  int rc = strcmp(argv[1], "count") == 0 ? count(js, argv[3])
                                         : dump(js, argv[3], argv[4]);
  jsCtx_Destroy(js);
  natsConnection_Destroy(nc);
  nats_Close();
  return rc;
}
