/*
 * test_nats_reassembly.c - nats2pq's reading of the bridge's wire format
 * (pqutils/nats/reassembly.c): the headers of a product message into the
 * product's metadata, every header refused when missing or malformed, a
 * whole body checked against Ldm-Size and Ldm-Data-Md5, and chunks
 * reassembled in order into one buffer, with every way a chunk sequence
 * can be wrong (order, count, sizes, MD5) refused.  No server: the headers
 * come from a table, the chunks from memory.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pqutils/nats/reassembly.h"

#define MAXH 12

/* A message's headers: name/value pairs, a NULL value for one removed. */
struct hdrs {
  const char *name[MAXH];
  const char *value[MAXH];
  int n;
};

static const char *get(void *arg, const char *name) {
  struct hdrs *h = arg;
  for (int i = 0; i < h->n; i++)
    if (strcmp(h->name[i], name) == 0)
      return h->value[i];
  return NULL;
}

static void set(struct hdrs *h, const char *name, const char *value) {
  for (int i = 0; i < h->n; i++)
    if (strcmp(h->name[i], name) == 0) {
      h->value[i] = value;
      return;
    }
  assert_true(h->n < MAXH);
  h->name[h->n] = name;
  h->value[h->n++] = value;
}

/* The headers pq2nats puts on a product of 5 bytes, "hello". */
static void good(struct hdrs *h) {
  memset(h, 0, sizeof *h);
  set(h, "Ldm-Ident", "SAUS80 KWBC 021200");
  set(h, "Ldm-Origin", "ldm.example.edu");
  set(h, "Ldm-Created", "1764676800.012345");
  set(h, "Ldm-Seqno", "4294967295");
  set(h, "Ldm-Feedtype", "IDS|DDPLUS");
  set(h, "Ldm-Signature", "5d41402abc4b2a76b9719d911017c592");
  set(h, "Ldm-Size", "5");
  set(h, "Nats-Msg-Id", "5d41402abc4b2a76b9719d911017c592");
}

static void test_parse_good(void **state) {
  (void)state;
  struct hdrs h;
  struct n2p_product p;
  char why[256] = "";
  good(&h);
  assert_int_equal(n2p_parse_headers(get, &h, &p, why, sizeof why), 0);
  assert_string_equal(p.info.ident, "SAUS80 KWBC 021200");
  assert_string_equal(p.info.origin, "ldm.example.edu");
  assert_int_equal(p.info.arrival.sec, 1764676800);
  assert_int_equal(p.info.arrival.usec, 12345);
  assert_int_equal(p.info.seqno, 4294967295u);
  assert_int_equal(p.info.feedtype, PQ_FT_IDS | PQ_FT_DDPLUS);
  char sig[33];
  pq_sig_format(p.info.signature, sig);
  assert_string_equal(sig, "5d41402abc4b2a76b9719d911017c592");
  assert_int_equal(p.info.size, 5);
  assert_int_equal(p.nchunks, 0);
  assert_false(p.has_md5);
  assert_int_equal(n2p_check_body(&p, "hello", 5, why, sizeof why), 0);

  /* The subject token of a feedtype that is not one name. */
  set(&h, "Ldm-Feedtype", "x8000000F");
  assert_int_equal(n2p_parse_headers(get, &h, &p, why, sizeof why), 0);
  assert_int_equal(p.info.feedtype, 0x8000000fu);
  /* An empty identifier and a product of no bytes are products. */
  set(&h, "Ldm-Ident", "");
  set(&h, "Ldm-Size", "0");
  assert_int_equal(n2p_parse_headers(get, &h, &p, why, sizeof why), 0);
  assert_int_equal(n2p_check_body(&p, "", 0, why, sizeof why), 0);
}

/* Every name pq_feedtype_format() prints for one named bit reads back as
 * it (bit 31 has no name: pq2nats sends it as x80000000). */
static void test_feedtype_names_round_trip(void **state) {
  (void)state;
  struct hdrs h;
  struct n2p_product p;
  char why[256], name[180];
  for (int bit = 0; bit < 31; bit++) {
    uint32_t ft = 1u << bit;
    pq_feedtype_format(ft, name, sizeof name);
    good(&h);
    set(&h, "Ldm-Feedtype", name);
    assert_int_equal(n2p_parse_headers(get, &h, &p, why, sizeof why), 0);
    assert_int_equal(p.info.feedtype, ft);
  }
}

/* Each header missing, then each with a value pq2nats cannot have written:
 * refused, and the reason names the header. */
static void test_parse_bad(void **state) {
  (void)state;
  static const struct {
    const char *name, *value;
  } cases[] = {
      {"Ldm-Ident", NULL},
      {"Ldm-Origin", NULL},
      {"Ldm-Origin", "o123456789o123456789o123456789o123456789o123456789o1234"
                     "56789o1234"},
      {"Ldm-Created", NULL},
      {"Ldm-Created", "1764676800"},
      {"Ldm-Created", "1764676800.12345"},
      {"Ldm-Created", "1764676800.1234567"},
      {"Ldm-Created", ".123456"},
      {"Ldm-Created", "-5.123456"},
      {"Ldm-Created", "17646x6800.123456"},
      {"Ldm-Created", "99999999999999999999.000000"},
      {"Ldm-Seqno", NULL},
      {"Ldm-Seqno", "4294967296"},
      {"Ldm-Seqno", "-1"},
      {"Ldm-Seqno", " 1"},
      {"Ldm-Seqno", ""},
      {"Ldm-Feedtype", NULL},
      {"Ldm-Feedtype", ""},
      {"Ldm-Feedtype", "NOSUCHFEED"},
      {"Ldm-Feedtype", "x1234567g"},
      {"Ldm-Signature", NULL},
      {"Ldm-Signature", "5d41402abc4b2a76b9719d911017c59"},
      {"Ldm-Signature", "5d41402abc4b2a76b9719d911017c5922"},
      {"Ldm-Signature", "zd41402abc4b2a76b9719d911017c592"},
      {"Ldm-Size", NULL},
      {"Ldm-Size", "18446744073709551616"},
      {"Ldm-Size", "5 "},
      {"Ldm-Chunks", "0"},
      {"Ldm-Chunks", "6"}, /* more chunks than bytes */
      {"Ldm-Chunks", "1048577"},
      {"Ldm-Data-Md5", "5d41402abc4b2a76"},
  };
  struct hdrs h;
  struct n2p_product p;
  char why[256];
  char ident[PQ_IDENT_MAX + 2];
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    good(&h);
    set(&h, cases[i].name, cases[i].value);
    why[0] = '\0';
    if (n2p_parse_headers(get, &h, &p, why, sizeof why) != -1)
      fail_msg("accepted %s: %s", cases[i].name,
               cases[i].value ? cases[i].value : "(missing)");
    assert_non_null(strstr(why, cases[i].name));
  }
  /* Ldm-Chunks without Ldm-Data-Md5: the missing one is named. */
  good(&h);
  set(&h, "Ldm-Chunks", "2");
  assert_int_equal(n2p_parse_headers(get, &h, &p, why, sizeof why), -1);
  assert_string_equal(why, "missing header Ldm-Data-Md5");
  /* An identifier of 256 characters: one too many. */
  memset(ident, 'a', sizeof ident - 1);
  ident[sizeof ident - 1] = '\0';
  good(&h);
  set(&h, "Ldm-Ident", ident);
  assert_int_equal(n2p_parse_headers(get, &h, &p, why, sizeof why), -1);
  assert_non_null(strstr(why, "Ldm-Ident"));
  ident[PQ_IDENT_MAX] = '\0';
  assert_int_equal(n2p_parse_headers(get, &h, &p, why, sizeof why), 0);
}

static void test_body_checks(void **state) {
  (void)state;
  struct hdrs h;
  struct n2p_product p;
  char why[256];
  good(&h);
  assert_int_equal(n2p_parse_headers(get, &h, &p, why, sizeof why), 0);
  assert_int_equal(n2p_check_body(&p, "hell", 4, why, sizeof why), -1);
  assert_non_null(strstr(why, "Ldm-Size"));
  /* With Ldm-Data-Md5 the body's MD5 is checked. */
  set(&h, "Ldm-Data-Md5", "5d41402abc4b2a76b9719d911017c592");
  assert_int_equal(n2p_parse_headers(get, &h, &p, why, sizeof why), 0);
  assert_int_equal(n2p_check_body(&p, "hello", 5, why, sizeof why), 0);
  assert_int_equal(n2p_check_body(&p, "jello", 5, why, sizeof why), -1);
  assert_non_null(strstr(why, "md5 mismatch"));
  /* A chunked product's message carries no data. */
  set(&h, "Ldm-Chunks", "2");
  assert_int_equal(n2p_parse_headers(get, &h, &p, why, sizeof why), 0);
  assert_int_equal(p.nchunks, 2);
  assert_int_equal(n2p_check_body(&p, "hello", 5, why, sizeof why), -1);
}

/* A product of `size` random bytes in chunks of `chunk`, its headers. */
struct chunked {
  uint8_t *data;
  size_t size, chunk;
  unsigned n;
  char md5[33], size_s[24], n_s[24];
  struct hdrs h;
  struct n2p_product p;
};

static void make_chunked(struct chunked *c, size_t size, size_t chunk) {
  c->size = size;
  c->chunk = chunk;
  c->n = (unsigned)((size + chunk - 1) / chunk);
  c->data = malloc(size);
  assert_non_null(c->data);
  srand(14);
  for (size_t i = 0; i < size; i++)
    c->data[i] = (uint8_t)rand();
  uint8_t sig[PQ_SIGLEN];
  assert_int_equal(pq_md5(c->data, size, sig), 0);
  pq_sig_format(sig, c->md5);
  snprintf(c->size_s, sizeof c->size_s, "%zu", size);
  snprintf(c->n_s, sizeof c->n_s, "%u", c->n);
  good(&c->h);
  set(&c->h, "Ldm-Size", c->size_s);
  set(&c->h, "Ldm-Chunks", c->n_s);
  set(&c->h, "Ldm-Data-Md5", c->md5);
  char why[256];
  assert_int_equal(n2p_parse_headers(get, &c->h, &c->p, why, sizeof why), 0);
  assert_int_equal(c->p.nchunks, c->n);
}

static size_t chunk_len(const struct chunked *c, unsigned i) {
  size_t off = (size_t)i * c->chunk;
  return c->size - off < c->chunk ? c->size - off : c->chunk;
}

static void test_reassemble(void **state) {
  (void)state;
  /* 25 MiB + 1 in chunks of 1 MiB, the last of one byte; and one chunk. */
  static const size_t shapes[][2] = {
      {25u * 1048576u + 1u, 1048576u}, {4096, 4096}, {3, 1}};
  for (size_t s = 0; s < 3; s++) {
    struct chunked c;
    make_chunked(&c, shapes[s][0], shapes[s][1]);
    uint8_t *dst = malloc(c.size);
    assert_non_null(dst);
    struct n2p_assembly a;
    char why[256];
    assert_int_equal(n2p_asm_begin(&a, &c.p, dst, why, sizeof why), 0);
    for (unsigned i = 0; i < c.n; i++)
      assert_int_equal(n2p_asm_chunk(&a, i, c.data + (size_t)i * c.chunk,
                                     chunk_len(&c, i), why, sizeof why),
                       0);
    assert_int_equal(n2p_asm_finish(&a, why, sizeof why), 0);
    assert_memory_equal(dst, c.data, c.size);
    n2p_asm_abort(&a); /* safe after finish */
    free(dst);
    free(c.data);
  }
}

/* Each wrong chunk sequence of a product of 10 bytes in 3 chunks (4, 4, 2)
 * is refused by the chunk call or by finish, never accepted. */
static void test_reassemble_refuses(void **state) {
  (void)state;
  struct chunked c;
  make_chunked(&c, 10, 4);
  uint8_t dst[10], bad[10];
  char why[256];
  struct n2p_assembly a;
  memcpy(bad, c.data, sizeof bad);
  bad[9] ^= 1;

  /* Out of order: chunk 1 first. */
  assert_int_equal(n2p_asm_begin(&a, &c.p, dst, why, sizeof why), 0);
  assert_int_equal(n2p_asm_chunk(&a, 1, c.data + 4, 4, why, sizeof why), -1);
  assert_non_null(strstr(why, "expected"));
  n2p_asm_abort(&a);

  /* Too many bytes in a chunk (no byte left for the last one). */
  assert_int_equal(n2p_asm_begin(&a, &c.p, dst, why, sizeof why), 0);
  assert_int_equal(n2p_asm_chunk(&a, 0, c.data, 4, why, sizeof why), 0);
  assert_int_equal(n2p_asm_chunk(&a, 1, c.data + 4, 6, why, sizeof why), -1);
  n2p_asm_abort(&a);

  /* An empty chunk. */
  assert_int_equal(n2p_asm_begin(&a, &c.p, dst, why, sizeof why), 0);
  assert_int_equal(n2p_asm_chunk(&a, 0, c.data, 0, why, sizeof why), -1);
  n2p_asm_abort(&a);

  /* A last chunk shorter than what is left. */
  assert_int_equal(n2p_asm_begin(&a, &c.p, dst, why, sizeof why), 0);
  assert_int_equal(n2p_asm_chunk(&a, 0, c.data, 4, why, sizeof why), 0);
  assert_int_equal(n2p_asm_chunk(&a, 1, c.data + 4, 4, why, sizeof why), 0);
  assert_int_equal(n2p_asm_chunk(&a, 2, c.data + 8, 1, why, sizeof why), -1);
  n2p_asm_abort(&a);

  /* A chunk past the count. */
  assert_int_equal(n2p_asm_begin(&a, &c.p, dst, why, sizeof why), 0);
  assert_int_equal(n2p_asm_chunk(&a, 3, c.data, 1, why, sizeof why), -1);
  n2p_asm_abort(&a);

  /* Finish before the last chunk. */
  assert_int_equal(n2p_asm_begin(&a, &c.p, dst, why, sizeof why), 0);
  assert_int_equal(n2p_asm_chunk(&a, 0, c.data, 4, why, sizeof why), 0);
  assert_int_equal(n2p_asm_finish(&a, why, sizeof why), -1);
  assert_non_null(strstr(why, "1 of 3 chunks"));

  /* Every chunk there, one bit of the data wrong: the MD5 says so. */
  assert_int_equal(n2p_asm_begin(&a, &c.p, dst, why, sizeof why), 0);
  assert_int_equal(n2p_asm_chunk(&a, 0, bad, 4, why, sizeof why), 0);
  assert_int_equal(n2p_asm_chunk(&a, 1, bad + 4, 4, why, sizeof why), 0);
  assert_int_equal(n2p_asm_chunk(&a, 2, bad + 8, 2, why, sizeof why), 0);
  assert_int_equal(n2p_asm_finish(&a, why, sizeof why), -1);
  assert_non_null(strstr(why, "md5 mismatch"));
  assert_non_null(strstr(why, c.md5));

  /* Uneven chunks that add up are accepted (the publisher may cut them
   * as it likes, within max_payload). */
  assert_int_equal(n2p_asm_begin(&a, &c.p, dst, why, sizeof why), 0);
  assert_int_equal(n2p_asm_chunk(&a, 0, c.data, 1, why, sizeof why), 0);
  assert_int_equal(n2p_asm_chunk(&a, 1, c.data + 1, 8, why, sizeof why), 0);
  assert_int_equal(n2p_asm_chunk(&a, 2, c.data + 9, 1, why, sizeof why), 0);
  assert_int_equal(n2p_asm_finish(&a, why, sizeof why), 0);
  assert_memory_equal(dst, c.data, 10);
  free(c.data);
}

/* Subjects against filters, as the server matches them. */
static void test_subject_match(void **state) {
  (void)state;
  static const struct {
    const char *filter, *subject;
    bool match;
  } cases[] = {
      {"ldm.>", "ldm.IDS", true},
      {"ldm.>", "ldm.IDS.KWBC", true},
      {"ldm.>", "ldm", false},
      {"ldm.>", "ldmx.IDS", false},
      {"ldm.*", "ldm.IDS", true},
      {"ldm.*", "ldm.IDS.KWBC", false},
      {"ldm.*.KWBC", "ldm.IDS.KWBC", true},
      {"ldm.*.KWBC", "ldm.IDS.KOUN", false},
      {"ldm.IDS", "ldm.IDS", true},
      {"ldm.IDS", "ldm.ID", false},
      {"ldm.IDS", "ldm.IDSX", false},
      {"ldm.IDS", "ldm.IDS.x", false},
      {"ldm.IDS.x", "ldm.IDS", false},
      {">", "anything.at.all", true},
      {"*", "one", true},
      {"*", "one.two", false},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    if (n2p_subject_match(cases[i].filter, cases[i].subject) != cases[i].match)
      fail_msg("%s against %s: expected %s", cases[i].subject, cases[i].filter,
               cases[i].match ? "a match" : "none");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parse_good),
      cmocka_unit_test(test_feedtype_names_round_trip),
      cmocka_unit_test(test_parse_bad),
      cmocka_unit_test(test_body_checks),
      cmocka_unit_test(test_reassemble),
      cmocka_unit_test(test_reassemble_refuses),
      cmocka_unit_test(test_subject_match),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
