/*
 * test_nats_inflight.c - pq2nats's books of what is in flight
 * (pqutils/nats/inflight.c, its rules in inflight.h), with the durable
 * position kept as pq2nats keeps it (a state file, cli_state.h, released
 * with the tags the books give back): acknowledgments in order and out of
 * order (the position moves only over the acknowledged prefix), a failure in
 * the middle and a disconnect with many in flight (everything unacknowledged
 * taken back and handed out again in the queue's order, nothing new
 * meanwhile), a retry acknowledged twice, chunked products (the product
 * message only once every chunk is acknowledged), the -m and byte limits,
 * the retry wait, a product of more chunks than the books held at the
 * start, and out of memory. No libnats, no server: messages are
 * addresses in an array, the clock is a number the test sets, and the test
 * plays libnats's part.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pqutils/common/cli_state.h"
#include "pqutils/nats/inflight.h"

#define NMSG 256

/* The messages: their addresses are all the books see. */
static char msgs[NMSG];
#define M(i) ((void *)&msgs[i])

/* The bytes of data of each message: 1, but for the chunks and the
 * product messages of chunked products, which a test sets. */
static uint64_t lens[NMSG];

/* The durable position, as pq2nats keeps it: a state file whose
 * low-water mark moves over the products whose tags p2n_ack() gave back.
 * Product i's tag is i; its state token is tok[i]. */
static struct cli_state *st;
static cli_state_token tok[NMSG];
static char st_path[4096];

static int setup(void **state) {
  (void)state;
  for (int i = 0; i < NMSG; i++)
    lens[i] = 1;
  const char *dir = getenv("PQ_TEST_DIR");
  snprintf(st_path, sizeof st_path, "%s/test_nats_inflight.%ld.state",
           dir != NULL && *dir != '\0' ? dir : "/tmp", (long)getpid());
  remove(st_path);
  st = cli_state_new(st_path);
  return st == NULL ? -1 : 0;
}

static int teardown(void **state) {
  (void)state;
  cli_state_free(st);
  st = NULL;
  remove(st_path);
  return 0;
}

/* Product i, inserted at pos, is read: begun in the state, as pq2nats
 * does before p2n_add(). */
static void begin(int i, uint64_t pos) {
  tok[i] = cli_state_begin(st, pos);
  assert_true(tok[i] != CLI_STATE_NOTOKEN);
}

/* The state file's mark: the insertion time of the newest product that,
 * with every product read before it, is acknowledged (0: none yet). */
static uint64_t mark(void) {
  return cli_state_mark(st);
}

/* The retry wait after n failures in a row: (n + 1) * 100 ms. */
static int64_t backoff(unsigned n) {
  return (int64_t)(n + 1) * 100;
}

/* A realloc() that fails: out of memory. */
static void *no_memory(void *p, size_t n) {
  (void)p;
  (void)n;
  return NULL;
}

/* What the test, as libnats, holds: messages handed out, not yet
 * acknowledged nor failed, in the order they went out. */
struct wire {
  void *out[NMSG];
  size_t n;
};

static void hand_out(struct p2n_inflight *f, struct wire *w, void *m) {
  assert_non_null(m);
  assert_true(w->n < NMSG);
  p2n_sending(f);
  w->out[w->n++] = m;
}

/* m leaves the wire (acknowledged or failed). */
static void off_wire(struct wire *w, const void *m) {
  for (size_t i = 0; i < w->n; i++)
    if (w->out[i] == m) {
      memmove(&w->out[i], &w->out[i + 1], (w->n - i - 1) * sizeof *w->out);
      w->n--;
      return;
    }
  fail_msg("message %p is not on the wire", m);
}

/* Add a plain product (message i, one byte) of pos, handing it out if the
 * books say its turn has come; return that. */
static void *add_plain(struct p2n_inflight *f, struct wire *w, int i,
                       uint64_t pos) {
  assert_true(p2n_room(f, 1, 1));
  begin(i, pos);
  void *now = p2n_add(f, (uint64_t)i, NULL, 0, M(i), 1);
  if (now != NULL)
    hand_out(f, w, now);
  return now;
}

/* Books for maxpending messages and max_bytes bytes, with n plain
 * products (messages 0 to n - 1, at pos0 onwards) added and handed out. */
static void start(struct p2n_inflight *f, struct wire *w, uint64_t maxpending,
                  uint64_t max_bytes, int n, uint64_t pos0) {
  assert_int_equal(p2n_init(f, maxpending, max_bytes, backoff), 0);
  for (int i = 0; i < n; i++)
    assert_ptr_equal(add_plain(f, w, i, pos0 + (uint64_t)i), M(i));
}

static void ack(struct p2n_inflight *f, struct wire *w, int i,
                enum p2n_acked want) {
  uint64_t tag = 9999;
  off_wire(w, M(i));
  assert_int_equal(p2n_ack(f, M(i), lens[i], &tag), want);
  if (want == P2N_ACK_PRODUCT) { /* pq2nats's ack callback */
    assert_int_equal(tag, (uint64_t)i);
    cli_state_release(st, tok[i], true);
  }
}

/* Fail message i: it leaves the wire and waits for a retry. */
static void fail_one(struct p2n_inflight *f, struct wire *w, int i,
                     double now) {
  off_wire(w, M(i));
  assert_int_equal(p2n_fail(f, M(i), now), 0);
}

/* The recovery as pq2nats does it: libnats gives back what is on the wire
 * (in an order of its own: reversed here), then the books say what to hand
 * out again; it goes out.  Returns how many. */
static size_t take_back_and_resend(struct p2n_inflight *f, struct wire *w,
                                   void **order) {
  while (w->n > 0)
    assert_int_equal(p2n_take_back(f, w->out[--w->n]), 0);
  assert_int_equal(p2n_unacked(f), 0);
  size_t n = 0;
  void **v = p2n_resend_list(f, &n);
  for (size_t i = 0; i < n; i++) {
    order[i] = v[i];
    hand_out(f, w, v[i]);
  }
  free(v);
  return n;
}

/* p2n_recover() at now says to take back, and the recovery runs; returns
 * how many went out again. */
static size_t recover_and_resend(struct p2n_inflight *f, struct wire *w,
                                 void **order, double now) {
  assert_int_equal(p2n_recover(f, true, now), P2N_TAKE_BACK);
  return take_back_and_resend(f, w, order);
}

static void test_in_order(void **state) {
  (void)state;
  struct p2n_inflight f;
  struct wire w = {0};
  start(&f, &w, 8, 1000, 0, 0);
  assert_int_equal(mark(), 0);
  assert_true(p2n_idle(&f));
  for (int i = 0; i < 3; i++)
    assert_ptr_equal(add_plain(&f, &w, i, 100 + (uint64_t)i), M(i));
  assert_false(p2n_idle(&f));
  assert_int_equal(f.msgs, 3);
  assert_int_equal(f.bytes, 3);
  for (int i = 0; i < 3; i++) {
    ack(&f, &w, i, P2N_ACK_PRODUCT);
    assert_int_equal(mark(), 100 + (uint64_t)i);
  }
  assert_true(p2n_idle(&f));
  assert_int_equal(f.bytes, 0);
  assert_int_equal(p2n_unacked(&f), 0);
  assert_int_equal(p2n_recover(&f, true, 0), P2N_GO);
  p2n_free(&f);
}

static void test_out_of_order(void **state) {
  (void)state;
  struct p2n_inflight f;
  struct wire w = {0};
  start(&f, &w, 8, 1000, 4, 100);
  ack(&f, &w, 2, P2N_ACK_PRODUCT);
  ack(&f, &w, 3, P2N_ACK_PRODUCT);
  assert_int_equal(mark(), 0); /* 0 and 1 are not acknowledged */
  ack(&f, &w, 0, P2N_ACK_PRODUCT);
  assert_int_equal(mark(), 100); /* not over 1 */
  ack(&f, &w, 1, P2N_ACK_PRODUCT);
  assert_int_equal(mark(), 103); /* over 1, then 2 and 3 */
  assert_true(p2n_idle(&f));
  p2n_free(&f);
}

static void test_failure_in_the_middle(void **state) {
  (void)state;
  struct p2n_inflight f;
  struct wire w = {0};
  void *order[NMSG];
  start(&f, &w, 16, 1000, 5, 100);
  ack(&f, &w, 0, P2N_ACK_PRODUCT);
  fail_one(&f, &w, 2, 10.0);
  ack(&f, &w, 4, P2N_ACK_PRODUCT); /* stored after the failure: kept */
  /* nothing new goes out while recovering */
  assert_false(p2n_room(&f, 1, 1));
  assert_int_equal(p2n_recover(&f, true, 10.05), P2N_WAIT); /* the wait */
  assert_int_equal(p2n_recover(&f, false, 11.0), P2N_WAIT); /* down */
  assert_int_equal(p2n_recover(&f, true, 11.0), P2N_TAKE_BACK);
  /* 1 and 3 are still on the wire: taken back; with 2, in order */
  assert_int_equal(p2n_unacked(&f), 2);
  assert_int_equal(take_back_and_resend(&f, &w, order), 3);
  assert_ptr_equal(order[0], M(1));
  assert_ptr_equal(order[1], M(2));
  assert_ptr_equal(order[2], M(3));
  assert_int_equal(f.nretried, 3);
  /* until all of it is acknowledged, nothing new */
  assert_int_equal(p2n_recover(&f, true, 11.1), P2N_WAIT);
  assert_false(p2n_room(&f, 1, 1));
  assert_null(p2n_next_ready(&f));
  ack(&f, &w, 3, P2N_ACK_PRODUCT);
  ack(&f, &w, 1, P2N_ACK_PRODUCT);
  assert_int_equal(mark(), 101); /* not over 2 */
  assert_int_equal(p2n_recover(&f, true, 11.2), P2N_WAIT);
  ack(&f, &w, 2, P2N_ACK_PRODUCT);
  assert_int_equal(mark(), 104);
  assert_int_equal(p2n_recover(&f, true, 11.3), P2N_GO);
  assert_true(p2n_room(&f, 1, 1));
  assert_true(p2n_idle(&f));
  p2n_free(&f);
}

static void test_disconnect_many(void **state) {
  (void)state;
  enum { N = 200 };
  struct p2n_inflight f;
  struct wire w = {0};
  void *order[NMSG];
  start(&f, &w, N, 1u << 20, N, 1000);
  assert_false(p2n_room(&f, 1, 1)); /* -m reached */
  for (int i = 0; i < 10; i++)
    ack(&f, &w, i, P2N_ACK_PRODUCT);
  /* the connection goes: no failure came, but nothing new goes out */
  assert_int_equal(p2n_recover(&f, false, 5.0), P2N_WAIT);
  assert_false(p2n_room(&f, 1, 1));
  assert_int_equal(p2n_recover(&f, false, 6.0), P2N_WAIT);
  assert_int_equal(recover_and_resend(&f, &w, order, 6.0), N - 10);
  for (int i = 10; i < N; i++)
    assert_ptr_equal(order[i - 10], M(i));
  /* a second disconnect before they are all acknowledged: again, in
   * order, what is left */
  for (int i = 10; i < 20; i++)
    ack(&f, &w, i, P2N_ACK_PRODUCT);
  assert_int_equal(p2n_recover(&f, false, 7.0), P2N_WAIT);
  assert_int_equal(recover_and_resend(&f, &w, order, 7.0), N - 20);
  for (int i = 20; i < N; i++)
    assert_ptr_equal(order[i - 20], M(i));
  for (int i = N - 1; i >= 20; i--)
    ack(&f, &w, i, P2N_ACK_PRODUCT);
  assert_int_equal(mark(), 1000 + N - 1);
  assert_int_equal(p2n_recover(&f, true, 7.0), P2N_GO);
  assert_true(p2n_idle(&f));
  p2n_free(&f);
}

static void test_duplicate_ack(void **state) {
  (void)state;
  struct p2n_inflight f;
  struct wire w = {0};
  void *order[NMSG];
  start(&f, &w, 8, 1000, 2, 100);
  fail_one(&f, &w, 0, 0.0);
  assert_int_equal(recover_and_resend(&f, &w, order, 1.0), 2);
  ack(&f, &w, 0, P2N_ACK_PRODUCT);
  /* the first publish's acknowledgment, late: changes nothing */
  uint64_t tag = 7;
  assert_int_equal(p2n_ack(&f, M(0), 1, &tag), P2N_ACK_UNKNOWN);
  assert_int_equal(tag, 7);
  assert_int_equal(p2n_unacked(&f), 1);
  assert_int_equal(f.msgs, 1);
  assert_int_equal(mark(), 100);
  /* nor does a failure of it */
  assert_int_equal(p2n_fail(&f, M(0), 2.0), 1);
  assert_int_equal(p2n_unacked(&f), 1);
  assert_int_equal(p2n_recover(&f, true, 2.0), P2N_WAIT); /* draining */
  ack(&f, &w, 1, P2N_ACK_PRODUCT);
  assert_int_equal(p2n_ack(&f, M(1), 1, &tag), P2N_ACK_UNKNOWN);
  assert_int_equal(mark(), 101);
  assert_int_equal(p2n_recover(&f, true, 2.0), P2N_GO);
  assert_true(p2n_idle(&f));
  p2n_free(&f);
}

static void test_chunks_first(void **state) {
  (void)state;
  struct p2n_inflight f;
  struct wire w = {0};
  void *order[NMSG];
  start(&f, &w, 16, 1000, 0, 0);
  /* product 10 of three chunks (0, 1, 2), then products 11 and 12 */
  void *chunks[] = {M(0), M(1), M(2)};
  lens[0] = lens[1] = lens[2] = 10;
  lens[10] = 0;
  assert_true(p2n_room(&f, 4, 30));
  begin(10, 110);
  assert_null(p2n_add(&f, 10, chunks, 3, M(10), 30));
  for (int i = 0; i < 3; i++)
    hand_out(&f, &w, M(i));
  assert_null(add_plain(&f, &w, 11, 111)); /* waits for 10 */
  assert_null(add_plain(&f, &w, 12, 112));
  assert_int_equal(f.msgs, 6);
  assert_int_equal(f.bytes, 32);
  assert_null(p2n_next_ready(&f));
  ack(&f, &w, 0, P2N_ACK_CHUNK);
  ack(&f, &w, 2, P2N_ACK_CHUNK);
  assert_null(p2n_next_ready(&f)); /* chunk 1 is not acknowledged */
  /* chunk 1 fails: taken back, it goes out again before anything else */
  fail_one(&f, &w, 1, 0.0);
  assert_int_equal(recover_and_resend(&f, &w, order, 1.0), 1);
  assert_ptr_equal(order[0], M(1));
  ack(&f, &w, 1, P2N_ACK_CHUNK);
  assert_int_equal(mark(), 0); /* chunks: no product leaves */
  assert_int_equal(p2n_recover(&f, true, 1.0), P2N_GO);
  assert_ptr_equal(p2n_next_ready(&f), M(10));
  assert_ptr_equal(p2n_next_ready(&f), M(11));
  assert_ptr_equal(p2n_next_ready(&f), M(12));
  assert_null(p2n_next_ready(&f));
  hand_out(&f, &w, M(10));
  hand_out(&f, &w, M(11));
  hand_out(&f, &w, M(12));
  /* the product message fails, with a later one on the wire: resent in
   * order, the chunks are not sent again */
  fail_one(&f, &w, 10, 2.0);
  assert_int_equal(recover_and_resend(&f, &w, order, 3.0), 3);
  assert_ptr_equal(order[0], M(10));
  assert_ptr_equal(order[1], M(11));
  assert_ptr_equal(order[2], M(12));
  ack(&f, &w, 10, P2N_ACK_PRODUCT);
  ack(&f, &w, 11, P2N_ACK_PRODUCT);
  ack(&f, &w, 12, P2N_ACK_PRODUCT);
  assert_int_equal(mark(), 112);
  assert_true(p2n_idle(&f));
  assert_int_equal(p2n_recover(&f, true, 3.0), P2N_GO);
  assert_int_equal(f.bytes, 0);

  /* a chunk failed with its product's neighbours on the wire: the resend
   * puts each product's chunks before its product message */
  void *c2[] = {M(20), M(21)};
  lens[20] = lens[21] = 10;
  lens[31] = 0;
  assert_ptr_equal(add_plain(&f, &w, 30, 130), M(30));
  begin(31, 131);
  assert_null(p2n_add(&f, 31, c2, 2, M(31), 20));
  hand_out(&f, &w, M(20));
  hand_out(&f, &w, M(21));
  ack(&f, &w, 20, P2N_ACK_CHUNK);
  fail_one(&f, &w, 21, 4.0);
  assert_int_equal(recover_and_resend(&f, &w, order, 5.0), 2);
  assert_ptr_equal(order[0], M(30));
  assert_ptr_equal(order[1], M(21));
  ack(&f, &w, 21, P2N_ACK_CHUNK);
  ack(&f, &w, 30, P2N_ACK_PRODUCT);
  assert_int_equal(p2n_recover(&f, true, 5.0), P2N_GO);
  assert_ptr_equal(p2n_next_ready(&f), M(31));
  hand_out(&f, &w, M(31));
  ack(&f, &w, 31, P2N_ACK_PRODUCT);
  assert_int_equal(mark(), 131);
  p2n_free(&f);
}

static void test_limits(void **state) {
  (void)state;
  struct p2n_inflight f;
  struct wire w = {0};
  start(&f, &w, 4, 100, 0, 0);
  /* a product larger than -m or the bytes goes, alone */
  assert_true(p2n_room(&f, 9, 1));
  assert_true(p2n_room(&f, 1, 500));
  for (int i = 0; i < 3; i++)
    add_plain(&f, &w, i, 100 + (uint64_t)i);
  assert_true(p2n_room(&f, 1, 1));
  assert_false(p2n_room(&f, 2, 1));  /* 3 + 2 > -m 4 */
  assert_false(p2n_room(&f, 1, 98)); /* 3 + 98 > 100 bytes */
  assert_true(p2n_room(&f, 1, 97));
  add_plain(&f, &w, 3, 103);
  assert_false(p2n_room(&f, 1, 1)); /* -m reached */
  /* acknowledged out of order, the products stay in the ring: no room
   * for another product until the oldest is acknowledged */
  ack(&f, &w, 1, P2N_ACK_PRODUCT);
  ack(&f, &w, 2, P2N_ACK_PRODUCT);
  ack(&f, &w, 3, P2N_ACK_PRODUCT);
  assert_false(p2n_room(&f, 1, 1));
  ack(&f, &w, 0, P2N_ACK_PRODUCT);
  assert_true(p2n_room(&f, 1, 1));
  p2n_free(&f);
}

/* A product of more chunks than the map of messages in flight held at the
 * start (four times -m, and 64) goes alone, and the books grow for it: it
 * went round the map for ever before (pq2nats hung).  An alarm turns such
 * a hang into a failure before ctest's timeout. */
static void test_more_chunks_than_the_map(void **state) {
  (void)state;
  struct p2n_inflight f;
  struct wire w = {0};
  enum { N = 200 };
  start(&f, &w, 1, 1000, 0, 0);
  assert_true(f.map_mask + 1 < N); /* the map holds fewer than N */
  void *chunks[N];
  for (int i = 0; i < N; i++)
    chunks[i] = M(i);
  lens[N] = 0;
  alarm(30);
  assert_true(p2n_room(&f, N + 1, N));
  begin(N, 100);
  assert_null(p2n_add(&f, N, chunks, N, M(N), N));
  for (int i = 0; i < N; i++)
    hand_out(&f, &w, M(i));
  assert_int_equal(f.msgs, N + 1);
  assert_false(p2n_room(&f, 1, 1)); /* -m: it goes alone */
  for (int i = N - 1; i >= 0; i--)
    ack(&f, &w, i, P2N_ACK_CHUNK);
  assert_ptr_equal(p2n_next_ready(&f), M(N));
  hand_out(&f, &w, M(N));
  ack(&f, &w, N, P2N_ACK_PRODUCT);
  assert_int_equal(mark(), 100);
  assert_true(p2n_idle(&f));
  assert_ptr_equal(add_plain(&f, &w, N + 1, 101), M(N + 1));
  ack(&f, &w, N + 1, P2N_ACK_PRODUCT);
  assert_int_equal(mark(), 101);
  alarm(0);
  p2n_free(&f);

  /* a map that cannot grow: no room, nomem (the run ends) */
  start(&f, &w, 1, 1000, 0, 0);
  f.realloc_fn = no_memory;
  assert_false(p2n_room(&f, N + 1, N));
  assert_true(f.nomem);
  assert_true(p2n_room(&f, 1, 1)); /* what fits needs no memory */
  p2n_free(&f);
}

static void test_retry_wait(void **state) {
  (void)state;
  struct p2n_inflight f;
  struct wire w = {0};
  void *order[NMSG];
  start(&f, &w, 8, 1000, 1, 100);
  fail_one(&f, &w, 0, 10.0); /* waits 100 ms */
  assert_int_equal(p2n_recover(&f, true, 10.05), P2N_WAIT);
  assert_int_equal(recover_and_resend(&f, &w, order, 10.15), 1);
  fail_one(&f, &w, 0, 20.0); /* a second in a row: 200 ms */
  assert_int_equal(p2n_recover(&f, true, 20.15), P2N_WAIT);
  assert_int_equal(recover_and_resend(&f, &w, order, 20.25), 1);
  ack(&f, &w, 0, P2N_ACK_PRODUCT); /* resets the count: 100 ms again */
  assert_int_equal(p2n_recover(&f, true, 21.0), P2N_GO);
  add_plain(&f, &w, 1, 101);
  fail_one(&f, &w, 1, 30.0);
  assert_int_equal(p2n_recover(&f, true, 30.05), P2N_WAIT);
  assert_int_equal(p2n_recover(&f, true, 30.15), P2N_TAKE_BACK);
  p2n_free(&f);
}

static void test_out_of_memory(void **state) {
  (void)state;
  struct p2n_inflight f;
  struct wire w = {0};
  start(&f, &w, 8, 1000, 3, 100);
  /* a failure that cannot be kept: nomem, the caller's to free, and the
   * position never passes it */
  f.realloc_fn = no_memory;
  off_wire(&w, M(0));
  assert_int_equal(p2n_fail(&f, M(0), 0.0), -1);
  assert_true(f.nomem);
  assert_int_equal(f.nretry, 0);
  f.nomem = false;
  f.realloc_fn = realloc;
  fail_one(&f, &w, 1, 0.0);
  /* taking back what cannot be kept */
  f.realloc_fn = no_memory;
  assert_int_equal(p2n_recover(&f, true, 1.0), P2N_TAKE_BACK);
  void **v = NULL;
  size_t n = 9;
  /* the retry array has room for 64: a take back needs no memory, but the
   * resend list does */
  assert_int_equal(p2n_take_back(&f, M(2)), 0);
  w.n = 0;
  assert_null(v = p2n_resend_list(&f, &n));
  assert_int_equal(n, 0);
  assert_true(f.nomem);
  assert_int_equal(f.nretry, 2); /* the books unchanged */
  f.nomem = false;
  f.realloc_fn = realloc;
  assert_non_null(v = p2n_resend_list(&f, &n));
  assert_int_equal(n, 2);
  assert_ptr_equal(v[0], M(1));
  assert_ptr_equal(v[1], M(2));
  free(v);
  /* a take back into a full retry array that cannot grow */
  for (int i = 0; i < 2; i++)
    hand_out(&f, &w, M(1 + i));
  f.realloc_fn = no_memory;
  assert_int_equal(p2n_take_back(&f, M(1)), -1);
  assert_true(f.nomem);
  assert_int_equal(mark(), 0);
  /* what the books still hold, given back once each */
  assert_null(p2n_drop(&f));
  p2n_free(&f);
}

static void test_drop(void **state) {
  (void)state;
  struct p2n_inflight f;
  struct wire w = {0};
  start(&f, &w, 8, 1000, 0, 0);
  void *chunks[] = {M(0)};
  begin(10, 110);
  assert_null(p2n_add(&f, 10, chunks, 1, M(10), 30));
  hand_out(&f, &w, M(0));
  assert_null(add_plain(&f, &w, 11, 111));
  fail_one(&f, &w, 0, 0.0);
  /* the product messages never handed out, then the failed chunk */
  assert_ptr_equal(p2n_drop(&f), M(10));
  assert_ptr_equal(p2n_drop(&f), M(11));
  assert_ptr_equal(p2n_drop(&f), M(0));
  assert_null(p2n_drop(&f));
  p2n_free(&f);
  p2n_free(&f); /* twice: harmless */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_in_order, setup, teardown),
      cmocka_unit_test_setup_teardown(test_out_of_order, setup, teardown),
      cmocka_unit_test_setup_teardown(test_failure_in_the_middle, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_disconnect_many, setup, teardown),
      cmocka_unit_test_setup_teardown(test_duplicate_ack, setup, teardown),
      cmocka_unit_test_setup_teardown(test_chunks_first, setup, teardown),
      cmocka_unit_test_setup_teardown(test_limits, setup, teardown),
      cmocka_unit_test_setup_teardown(test_more_chunks_than_the_map, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_retry_wait, setup, teardown),
      cmocka_unit_test_setup_teardown(test_out_of_memory, setup, teardown),
      cmocka_unit_test_setup_teardown(test_drop, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
