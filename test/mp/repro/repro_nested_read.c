/*
 * repro_nested_read.c - a read through the handle whose callback is running
 * ends the callback's hold on its product (pq/lock.c pq__prod_lock() and
 * pq__prod_unlock(), called by deliver() in pq/read.c).
 *
 * A handle remembers one held region (holding, held_off, held_len).  When a
 * pq_next() or pq_find() callback calls pq_find() or pq_next() on the same
 * handle, the nested deliver() overwrites that record and its
 * pq__prod_unlock() clears `holding` and unlocks its range:
 *   (1) nested read of ANOTHER product: the outer product's OFD lock stays,
 *       but `holding` is false, so this handle's own pq_delete() or inserts
 *       (pq__prod_held() cannot see its own OFD locks) evict the product
 *       the outer callback is still reading;
 *   (2) nested read of the SAME product: the unlock removes the outer lock
 *       too (fcntl locks do not nest), so any handle can evict it.
 * pq.h forbids only closing the handle in a callback.  Either refuse nested
 * reads (and document it) or keep a stack of held regions.
 *
 * Exit status 1 while the bug is present, 0 once fixed, 2 if the
 * reproduction cannot be set up.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "pq/pq.h"
#include "test/mp/repro/repro_util.h"

struct ctx {
  pq_t *self, *other;
  uint8_t held[PQ_SIGLEN], nested[PQ_SIGLEN];
  pq_t *deleter;
  int del_rc;
};

static int outer(const pq_prod_info *info, const void *data,
                 const pq_place *place, void *arg) {
  struct ctx *c = arg;
  (void)info;
  (void)data;
  (void)place;
  pq_find(c->self, c->nested, repro_noop, NULL); /* the nested read */
  c->del_rc = pq_delete(c->deleter, c->held);    /* must be PQ_LOCKED */
  return 0;
}

static int put(pq_t *pq, const char *text, uint8_t sig[PQ_SIGLEN]) {
  pq_prod_info info;
  memset(&info, 0, sizeof info);
  snprintf(info.ident, sizeof info.ident, "%s", text);
  info.size = strlen(text);
  pq_md5(text, info.size, info.signature);
  memcpy(sig, info.signature, PQ_SIGLEN);
  return pq_insert(pq, &info, text);
}

static int one_case(const char *path, int same_product) {
  struct ctx c;
  pq_error e;
  memset(&c, 0, sizeof c);
  c.self = repro_create(path, 1 << 20, 64);
  if (c.self == NULL)
    return 2;
  if (pq_open(path, 0, &c.other, &e) != PQ_OK) {
    printf("open: %s\n", e.pe_msg);
    return 2;
  }
  c.del_rc = -1; /* the callback has not run */
  int rc = put(c.self, "held product", c.held);
  if (rc == PQ_OK)
    rc = put(c.self, "another product", c.nested);
  if (same_product)
    memcpy(c.nested, c.held, PQ_SIGLEN);
  /* (1): the handle itself deletes; (2): another handle deletes. */
  c.deleter = same_product ? c.other : c.self;
  if (rc == PQ_OK)
    rc = pq_next(c.self, PQ_FORWARD, NULL, outer, &c);
  if (rc != PQ_OK || c.del_rc == -1) {
    printf("SETUP: %s, the callback %s\n", pq_errname(rc),
           c.del_rc == -1 ? "did not run" : "ran");
    pq_close(c.other);
    pq_close(c.self);
    return 2;
  }
  int bug = c.del_rc != PQ_LOCKED;
  printf("%s: nested pq_find of %s, then pq_delete of the held product "
         "through %s: %s\n",
         bug ? "BUG" : "OK", same_product ? "the same product" : "another",
         same_product ? "another handle" : "the same handle",
         pq_errname(c.del_rc));
  pq_close(c.other);
  pq_close(c.self);
  return bug;
}

int main(void) {
  char path[256];
  repro_path(path, sizeof path, "nested");
  int a = one_case(path, 0), b = one_case(path, 1);
  unlink(path);
  return a == 2 || b == 2 ? 2 : a || b ? 1 : 0;
}
