/*
 * fuzz_nats_headers.c - libFuzzer target for nats2pq's reading of a product
 * message (pqutils/nats/reassembly.c: n2p_parse_headers(), then the checks
 * of the data), a trust boundary: whoever may publish on the subjects
 * nats2pq consumes writes these headers (docs/security.md, "The NATS
 * bridge").  An input is a message as lines: "Name:value" headers (the
 * value a C string, as libnats gives it: no NUL, no line break), then an
 * empty line and the body.  The headers are parsed; a product they
 * describe is checked against the body, whole (n2p_check_body()) or, for a
 * chunked product of at most 64 KiB, as chunks cut from the body and
 * reassembled (n2p_asm_*()).
 *
 * Properties checked: no crash, leak or sanitizer report; a refusal comes
 * with a message, NUL-terminated within its buffer (a short one too);
 * headers that parse give an identifier and an origin within LDM's limits,
 * microseconds below a million, a chunk count no larger than the size and
 * N2P_MAX_CHUNKS, with an MD5 for a chunked product; an assembly that
 * finishes filled exactly the product's size.
 *
 * Seeds: with FUZZ_SEEDS_DIR set in the environment, the target writes the
 * messages pq2nats writes for a small product, whole and in chunks, there
 * and exits (the test fuzz_nats_headers_seeds does it before the brief
 * run).
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pqutils/nats/ldmnats.h"
#include "pqutils/nats/reassembly.h"
#include "test/fuzz/fuzz_util.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_HEADERS 32
#define ASSEMBLY_MAX 65536

/* The headers of one input: names and values, NUL-terminated copies. */
struct headers {
  char *name[MAX_HEADERS], *value[MAX_HEADERS];
  int n;
};

/* As natsMsgHeader_Get(): the first value of that name, or NULL. */
static const char *get(void *arg, const char *name) {
  const struct headers *h = arg;
  for (int i = 0; i < h->n; i++)
    if (strcmp(h->name[i], name) == 0)
      return h->value[i];
  return NULL;
}

/* Split data into headers (each line "name:value" up to an empty line;
 * a line without ':' is skipped, a NUL ends its line's text) and the body
 * after them.  The copies live in buf (size + 1 bytes). */
static void split(const uint8_t *data, size_t size, char *buf,
                  struct headers *h, const uint8_t **body, size_t *len) {
  memcpy(buf, data, size);
  buf[size] = '\0';
  h->n = 0;
  *body = data + size;
  *len = 0;
  size_t at = 0;
  while (at < size) {
    char *line = buf + at;
    char *nl = memchr(line, '\n', size - at);
    size_t end = nl != NULL ? (size_t)(nl - buf) : size;
    buf[end] = '\0';
    if (end == at) { /* the empty line: the body follows */
      *body = data + end + 1;
      *len = size - end - 1;
      return;
    }
    char *colon = strchr(line, ':');
    if (colon != NULL && h->n < MAX_HEADERS) {
      *colon = '\0';
      h->name[h->n] = line;
      h->value[h->n] = colon + 1;
      h->n++;
    }
    at = end + 1;
  }
}

static void check_why(const char *why, size_t whylen) {
  if (why[0] == '\0' || strnlen(why, whylen) >= whylen)
    abort();
}

/* The body cut into p->nchunks chunks (the last takes the rest; empty
 * ones where the body is short) and reassembled. */
static void assemble(const struct n2p_product *p, const uint8_t *body,
                     size_t len) {
  char why[256];
  uint8_t *dst = malloc(p->info.size > 0 ? (size_t)p->info.size : 1);
  if (dst == NULL)
    abort();
  struct n2p_assembly a;
  why[0] = '\0';
  if (n2p_asm_begin(&a, p, dst, why, sizeof why) != 0) {
    check_why(why, sizeof why);
    free(dst);
    return;
  }
  size_t piece = len / p->nchunks, off = 0;
  int rc = 0;
  for (unsigned i = 0; rc == 0 && i < p->nchunks; i++) {
    size_t n = i + 1 == p->nchunks ? len - off : piece;
    why[0] = '\0';
    rc = n2p_asm_chunk(&a, i, body + off, n, why, sizeof why);
    if (rc != 0)
      check_why(why, sizeof why);
    off += n;
  }
  if (rc == 0) {
    why[0] = '\0';
    if (n2p_asm_finish(&a, why, sizeof why) == 0) {
      if (a.filled != p->info.size)
        abort();
    } else {
      check_why(why, sizeof why);
    }
  }
  n2p_asm_abort(&a);
  free(dst);
}

static void check_product(const struct n2p_product *p, const uint8_t *body,
                          size_t len) {
  const pq_prod_info *i = &p->info;
  if (strnlen(i->ident, sizeof i->ident) > PQ_IDENT_MAX ||
      strnlen(i->origin, sizeof i->origin) > PQ_ORIGIN_MAX ||
      i->arrival.usec < 0 || i->arrival.usec > 999999 ||
      p->nchunks > N2P_MAX_CHUNKS || p->nchunks > i->size ||
      (p->nchunks > 0 && !p->has_md5))
    abort();
  if (p->nchunks == 0) {
    char why[256] = "";
    if (n2p_check_body(p, body, len, why, sizeof why) != 0)
      check_why(why, sizeof why);
  } else if (i->size <= ASSEMBLY_MAX) {
    assemble(p, body, len);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *buf = malloc(size + 1);
  if (buf == NULL)
    abort();
  struct headers h;
  const uint8_t *body;
  size_t len;
  split(data, size, buf, &h, &body, &len);
  struct n2p_product p;
  char why[256] = "", small[12] = "";
  int rc = n2p_parse_headers(get, &h, &p, why, sizeof why);
  /* The same with a message buffer too short for any message. */
  if (n2p_parse_headers(get, &h, &p, small, sizeof small) != rc)
    abort();
  if (rc != 0) {
    check_why(why, sizeof why);
    check_why(small, sizeof small);
  } else {
    check_product(&p, body, len);
  }
  free(buf);
  return 0;
}

/* One seed: pq2nats's headers for data (chunked in `chunks` if > 0), an
 * empty line, then the data (for a chunked product, what the target cuts
 * into its chunks). */
static void write_seed(const char *dir, const char *name, const char *feed,
                       const char *data, unsigned chunks) {
  char path[4096], sig[33], text[1024];
  uint8_t md5[PQ_SIGLEN];
  size_t len = strlen(data);
  if (pq_md5(data, len, md5) != 0)
    abort();
  pq_sig_format(md5, sig);
  char more[128] = "";
  if (chunks > 0)
    snprintf(more, sizeof more, LDMNATS_H_CHUNKS ":%u\n" LDMNATS_H_MD5 ":%s\n",
             chunks, sig);
  int n =
      snprintf(text, sizeof text,
               LDMNATS_H_IDENT
               ":SDUS54 KLZK 142213 /pN0QLZK\n" LDMNATS_H_ORIGIN
               ":noaaport.example.edu\n" LDMNATS_H_CREATED
               ":1764676800.000001\n" LDMNATS_H_SEQNO ":7\n" LDMNATS_H_FEEDTYPE
               ":%s\n" LDMNATS_H_SIGNATURE ":%s\n" LDMNATS_H_SIZE
               ":%zu\n" LDMNATS_H_MSGID ":%s\n%s\n%s",
               feed, sig, len, sig, more, data);
  snprintf(path, sizeof path, "%s/%s", dir, name);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  bool ok = n > 0 && (size_t)n < sizeof text && fd >= 0 &&
            fuzz_write_all(fd, text, (size_t)n) == 0;
  if (fd >= 0 && close(fd) != 0)
    ok = false;
  if (!ok) {
    fprintf(stderr, "fuzz_nats_headers: cannot write the seed %s\n", path);
    exit(1);
  }
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  const char *dir = fuzz_seeds_dir();
  if (dir == NULL)
    return 0; /* a fuzzing run */
  write_seed(dir, "whole", "NEXRAD3", "hello, world", 0);
  write_seed(dir, "chunked", "x08000003",
             "three chunks of a product too large for one message", 3);
  write_seed(dir, "expression", "WMO|NEXRAD3", "x", 0);
  exit(0);
}
