/*
 * ldm6_seeds.c - writes the seed corpus of fuzz_ldm6 into a directory: each
 * message of the captured LDM session (test/lib/ldm6_capture.h) three ways,
 * as a framed record (mark included), as a bare message (header and
 * arguments) and as the arguments or results alone, plus a few messages
 * built with the codec (a RECLASS, which the capture lacks).  The capture
 * is part of the tree (test/vectors/ldm6): without it this fails.
 *
 * Usage: ldm6_seeds CAPTURE_DIR OUT_DIR.  Exit 0, or 1 if the capture
 * cannot be read or a seed cannot be written.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "ldmd/proto/ldm6_xdr.h"
#include "ldmd/proto/rpc_msg.h"
#include "test/lib/ldm6_capture.h"

static int put(const char *dir, const char *name, const void *buf, size_t len) {
  char path[1024];
  FILE *fp;
  int ok;

  snprintf(path, sizeof path, "%s/%s", dir, name);
  fp = fopen(path, "wb");
  if (fp == NULL) {
    fprintf(stderr, "ldm6_seeds: %s: %s\n", path, strerror(errno));
    return -1;
  }
  ok = fwrite(buf, 1, len, fp) == len;
  if (fclose(fp) != 0 || !ok) {
    fprintf(stderr, "ldm6_seeds: %s: write failed\n", path);
    return -1;
  }
  return 0;
}

/* A FEEDME call record and a RECLASS reply record, from the codec. */
static int builtin(const char *dir) {
  ldm6_feedpar fp;
  ldm6_fornme_reply r;
  uint8_t rec[512];
  size_t n = 0, n2 = 0;

  memset(&fp, 0, sizeof fp);
  fp.prod_class.from = (ldm6_timestamp){1700000000, 0};
  fp.prod_class.to = (ldm6_timestamp){0x7fffffff, 999999};
  fp.prod_class.psa_len = 2;
  fp.prod_class.psa[0].feedtype = PQ_FT_WMO;
  strcpy(fp.prod_class.psa[0].pattern, "^SA");
  strcpy(fp.prod_class.psa[1].pattern, "SIG=00112233445566778899aabbccddeeff");
  fp.max_hereis = LDM6_MAX_HEREIS_PRIMARY;
  if (ldm6_rpc_encode_call(1, LDM6_PROG, LDM6_VERSION6, LDM6_FEEDME, rec + 4,
                           sizeof rec - 4, &n) != 0 ||
      ldm6_encode(LDM6_T_FEEDPAR, &fp, rec + 4 + n, sizeof rec - 4 - n, &n2) !=
          0)
    return -1;
  ldm6_rpc_mark_put(rec, (uint32_t)(n + n2), true);
  if (put(dir, "builtin_feedme_rec", rec, 4 + n + n2) != 0)
    return -1;
  memset(&r, 0, sizeof r);
  r.code = LDM6_RECLASS;
  r.u.prod_class = fp.prod_class;
  r.u.prod_class.psa_len = 1;
  if (ldm6_rpc_encode_accepted(1, LDM6_RPC_SUCCESS, rec + 4, sizeof rec - 4,
                               &n) != 0 ||
      ldm6_encode(LDM6_T_FORNME_REPLY, &r, rec + 4 + n, sizeof rec - 4 - n,
                  &n2) != 0)
    return -1;
  ldm6_rpc_mark_put(rec, (uint32_t)(n + n2), true);
  return put(dir, "builtin_reclass_rec", rec, 4 + n + n2);
}

int main(int argc, char **argv) {
  capture cap;
  size_t i;
  unsigned bad = 0;
  int rc;

  if (argc != 3) {
    fprintf(stderr, "usage: ldm6_seeds CAPTURE_DIR OUT_DIR\n");
    return 2;
  }
  if (mkdir(argv[2], 0755) != 0 && errno != EEXIST) {
    fprintf(stderr, "ldm6_seeds: %s: %s\n", argv[2], strerror(errno));
    return 1;
  }
  if (builtin(argv[2]) != 0)
    return 1;
  rc = cap_load(argv[1], &cap, &bad);
  if (rc != 0) {
    if (rc == -1)
      fprintf(stderr, "ldm6_seeds: cannot read %s/session_decoded.txt: %s\n",
              argv[1], strerror(errno));
    else
      fprintf(stderr,
              "ldm6_seeds: %s/session_decoded.txt: line %u not "
              "understood\n",
              argv[1], bad);
    return 1;
  }
  for (i = 0; i < cap.n; i++) {
    const cap_msg *m = &cap.msgs[i];
    char name[96];
    ldm6_rpc_msg h;
    size_t hlen = 0;

    snprintf(name, sizeof name, "f%03u_%s_%s_rec", m->frame,
             m->is_call ? "call" : "reply", m->proc_name);
    if (put(argv[2], name, m->bytes, m->len) != 0)
      break;
    name[strlen(name) - 3] = '\0';
    strcat(name, "msg");
    if (put(argv[2], name, m->bytes + 4, m->len - 4) != 0)
      break;
    if (ldm6_rpc_decode(m->bytes + 4, m->len - 4, &h, &hlen) == 0 &&
        hlen < m->len - 4) {
      name[strlen(name) - 3] = '\0';
      strcat(name, "val");
      if (put(argv[2], name, m->bytes + 4 + hlen, m->len - 4 - hlen) != 0)
        break;
    }
  }
  printf("ldm6_seeds: %zu messages of the capture written to %s\n", i, argv[2]);
  rc = i == cap.n ? 0 : 1;
  cap_free(&cap);
  return rc;
}
