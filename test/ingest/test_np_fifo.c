/*
 * test_np_fifo.c - noaaportIngester's reader-to-builder FIFO
 * (pqutils/ingest/ingest_fifo.h), with a real writer thread: every
 * datagram comes out whole and in order across many wraps of a ring that
 * holds only a few, the writer's waits are counted, and closing ends both
 * sides with nothing lost.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pqutils/ingest/ingest_fifo.h"

#define COUNT 3000

/* The size of datagram i: from 1 byte to the largest, spread. */
static size_t size_of(unsigned i) {
  return 1 + (size_t)(i * 2654435761u % NP_DATAGRAM_MAX);
}

static void *writer(void *arg) {
  struct np_fifo *q = arg;
  for (unsigned i = 0; i < COUNT; i++) {
    uint8_t *p = np_fifo_reserve(q);
    if (p == NULL)
      return NULL;
    size_t n = size_of(i);
    memset(p, (int)(i & 0xff), n);
    memcpy(p, &i, n < sizeof i ? n : sizeof i);
    np_fifo_commit(q, n, i % 3);
  }
  np_fifo_close(q);
  return NULL;
}

static void test_order_across_wraps(void **state) {
  (void)state;
  struct np_fifo q;
  assert_int_equal(np_fifo_init(&q, 3 * (NP_DATAGRAM_MAX + 4) + 100), 0);
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, writer, &q), 0);
  unsigned got = 0;
  size_t n;
  const uint8_t *p;
  unsigned src;
  while ((p = np_fifo_next(&q, &n, &src, -1)) != NULL) {
    assert_int_equal(n, size_of(got));
    assert_int_equal(src, got % 3);
    if (n > sizeof got) { /* the id first, the fill byte last */
      unsigned id;
      memcpy(&id, p, sizeof id);
      assert_int_equal(id, got);
      assert_int_equal(p[n - 1], got & 0xff);
    }
    np_fifo_release(&q);
    got++;
  }
  assert_int_equal(got, COUNT);
  assert_int_equal(pthread_join(th, NULL), 0);
  /* The ring holds 3 big datagrams: the writer must have waited. */
  assert_true(q.fullfifo > 0);
  np_fifo_destroy(&q);
}

static void test_close_keeps_what_was_written(void **state) {
  (void)state;
  struct np_fifo q;
  assert_int_equal(np_fifo_init(&q, 1 << 20), 0);
  for (int i = 0; i < 3; i++) {
    uint8_t *p = np_fifo_reserve(&q);
    assert_non_null(p);
    p[0] = (uint8_t)i;
    np_fifo_commit(&q, 1, 7);
  }
  np_fifo_close(&q);
  assert_null(np_fifo_reserve(&q));
  size_t n;
  unsigned src;
  for (int i = 0; i < 3; i++) {
    assert_false(np_fifo_done(&q));
    const uint8_t *p = np_fifo_next(&q, &n, &src, -1);
    assert_non_null(p);
    assert_int_equal(n, 1);
    assert_int_equal(p[0], i);
    assert_int_equal(src, 7);
    np_fifo_release(&q);
  }
  assert_null(np_fifo_next(&q, &n, &src, -1));
  assert_true(np_fifo_done(&q));
  assert_int_equal(q.fullfifo, 0);
  np_fifo_destroy(&q);
}

/* A wait with a timeout ends empty-handed, and not done. */
static void test_timeout(void **state) {
  (void)state;
  struct np_fifo q;
  assert_int_equal(np_fifo_init(&q, 1 << 20), 0);
  size_t n;
  unsigned src;
  assert_null(np_fifo_next(&q, &n, &src, 10));
  assert_false(np_fifo_done(&q));
  np_fifo_destroy(&q);
}

static void test_too_small(void **state) {
  (void)state;
  struct np_fifo q;
  assert_int_equal(np_fifo_init(&q, NP_DATAGRAM_MAX), -1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_order_across_wraps),
      cmocka_unit_test(test_close_keeps_what_was_written),
      cmocka_unit_test(test_timeout),
      cmocka_unit_test(test_too_small),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
