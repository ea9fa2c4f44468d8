/*
 * test_np_insert.c - a finished product into a real queue
 * (pqutils/ingest/ingest_insert.h): LDM's "inserted" line, "already in
 * queue" for a second copy, LDM's error for an empty product, and, beyond
 * LDM, an identifier longer than the queue's 255 bytes cut with a warning
 * and the product kept (LDM's insert fails and the product is lost).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "pq/pq.h"
#include "pqutils/ingest/ingest_insert.h"
#include "test/lib/testutil.h"

static char last[2][600];
static int nlog;

static void collect(void *arg, int level, const char *msg) {
  (void)arg;
  (void)level;
  snprintf(last[nlog++ % 2], sizeof last[0], "%s", msg);
}

static int get_ident(const pq_prod_info *info, const void *data,
                     const pq_place *place, void *arg) {
  (void)data;
  (void)place;
  snprintf(arg, PQ_IDENT_MAX + 1, "%s", info->ident);
  return 0;
}

static void test_insert_lines(void **state) {
  (void)state;
  char path[512];
  tu_path(path, sizeof path, "np_insert");
  pq_create_opts co = {.pc_data_size = 1u << 20, .pc_flags = PQ_CLOBBER};
  pq_t *pq;
  assert_int_equal(pq_create(path, &co, &pq, NULL), PQ_OK);
  struct np_log lg = {collect, NULL, NP_DEBUG};
  struct np_inserter in = {.pq = pq, .origin = "o.example.org", .log = &lg};
  static const uint8_t data[] = "\001\r\r\n500 \r\r\nbody\r\r\n\003";
  struct np_product p = {.ident = "NOUS41 KWBC 151200 /pPNSWSH",
                         .feedtype = PQ_FT_IDS | PQ_FT_DDPLUS,
                         .seqno = 500,
                         .data = data,
                         .size = sizeof data - 1,
                         .sig = {1, 2, 3},
                         .category = 1,
                         .type = 4,
                         .ccb_mode = 1};
  assert_int_equal(np_insert(&in, &p), PQ_OK);
  assert_string_equal(last[0], "NOUS41 KWBC 151200 /pPNSWSH inserted "
                               "IDS|DDPLUS [cat 1 type 4 ccb 1/0 seq 500 "
                               "size 19]");
  assert_int_equal(np_insert(&in, &p), PQ_DUP);
  assert_string_equal(last[1],
                      "NOUS41 KWBC 151200 /pPNSWSH already in queue [500]");

  p.size = 0;
  p.sig[0] = 9;
  assert_int_equal(np_insert(&in, &p), PQ_INVAL);
  assert_string_equal(last[0], "heapsize is invalid 0 for prod NOUS41 KWBC "
                               "151200 /pPNSWSH");

  char longid[400];
  memset(longid, 'G', sizeof longid - 1);
  longid[sizeof longid - 1] = '\0';
  p.ident = longid;
  p.size = sizeof data - 1;
  p.sig[0] = 10;
  nlog = 0;
  assert_int_equal(np_insert(&in, &p), PQ_OK);
  assert_non_null(strstr(last[0], "Identifier of 399 bytes cut to 255"));
  char stored[PQ_IDENT_MAX + 1];
  pq_cursor_oldest(pq);
  stored[0] = '\0';
  while (pq_next(pq, PQ_FORWARD, NULL, get_ident, stored) == PQ_OK &&
         stored[0] != 'G')
    ;
  assert_int_equal(strlen(stored), PQ_IDENT_MAX);
  assert_int_equal(in.products, 4);
  assert_int_equal(in.inserted, 2);
  assert_int_equal(in.duplicates, 1);
  assert_int_equal(in.failed, 1);
  pq_close(pq);
  unlink(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_insert_lines),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
