/*
 * test_fanout_sink.c - fanout_bench's sink (test/bench/fanout_sink.h)
 * against a fake upstream on loopback that answers its FEEDME and then
 * writes records of its choosing, both ways of taking the data (FS_DISCARD:
 * the data dropped in the kernel; FS_READ: read through rpc_io): products
 * counted by seqno with their bytes and latency, a product whose start
 * (header, prod_info) is cut across fragments, a large product's data in
 * several fragments, duplicates, strays, a wrong signature, a NULLPROC
 * answered; and each malformed input ending the sink with its reason and
 * nothing counted that did not come whole: a record that ends before its
 * contents, one that goes on past them, a connection closed inside a
 * record, a length word beyond the limit.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ldmd/proto/ldm6_xdr.h"
#include "ldmd/proto/rpc_io.h"
#include "pq/product.h"
#include "test/bench/fanout_sink.h"

#define CAP 8 /* seqnos the sink counts */
#define SCRIPT_MAX (4u << 20)

/* What the fake upstream writes after answering the FEEDME. */
typedef struct script {
  uint8_t *b;
  size_t len;
  uint32_t null_xid; /* a NULLPROC whose reply the upstream awaits, or 0 */
} script;

static uint8_t sigs[CAP * LDM6_SIGLEN];
static volatile sig_atomic_t never;

static void put(script *s, const void *p, size_t n) {
  assert_true(s->len + n <= SCRIPT_MAX);
  memcpy(s->b + s->len, p, n);
  s->len += n;
}

/* A record of len bytes, cut into fragments of the given lengths (the
 * rest in a last one). */
static void record(script *s, const uint8_t *rec, size_t len,
                   const size_t *frags, size_t nfrags) {
  size_t off = 0, i;

  for (i = 0; i <= nfrags; i++) {
    size_t n = frags != NULL && i < nfrags ? frags[i] : len - off;
    uint8_t mark[LDM6_RPC_MARK_LEN];

    assert_true(off + n <= len);
    ldm6_rpc_mark_put(mark, (uint32_t)n, i == nfrags);
    put(s, mark, sizeof mark);
    put(s, rec + off, n);
    off += n;
  }
}

/* A HEREIS of product seqno with sz data bytes, its signature the one the
 * sink expects unless bad_sig; its encoding in rec, its length returned.
 * The record holds cut bytes fewer than it should, or extra more. */
static size_t hereis(uint8_t *rec, size_t cap, uint32_t seqno, uint32_t sz,
                     bool bad_sig, size_t cut, size_t extra) {
  ldm6_prod_info info;
  size_t h, n, len;

  memset(&info, 0, sizeof info);
  assert_int_equal(ldm6_ts_from_pq(pq_ts_now(), &info.arrival), 0);
  memcpy(info.signature, sigs + (size_t)(seqno % CAP) * LDM6_SIGLEN,
         LDM6_SIGLEN);
  if (bad_sig)
    info.signature[0] ^= 0xff;
  snprintf(info.origin, sizeof info.origin, "test");
  info.feedtype = 1;
  info.seqno = seqno;
  snprintf(info.ident, sizeof info.ident, "product %u", seqno);
  info.sz = sz;
  assert_int_equal(ldm6_rpc_encode_call(7 + seqno, LDM6_PROG, LDM6_VERSION6,
                                        LDM6_HEREIS, rec, cap, &h),
                   0);
  assert_int_equal(ldm6_encode(LDM6_T_PROD_INFO, &info, rec + h, cap - h, &n),
                   0);
  len = h + n + sz + ldm6_xdr_pad(sz);
  assert_true(len + extra <= cap);
  memset(rec + h + n, 0x5a, sz + ldm6_xdr_pad(sz) + extra);
  return len + extra - cut;
}

static void nullproc(script *s, uint32_t xid) {
  uint8_t rec[64];
  size_t len;

  assert_int_equal(ldm6_rpc_encode_call(xid, LDM6_PROG, LDM6_VERSION6,
                                        LDM6_NULLPROC, rec, sizeof rec, &len),
                   0);
  record(s, rec, len, NULL, 0);
  s->null_xid = xid;
}

/* The fake upstream (a child): accept, answer the FEEDME OK, write the
 * script, await the NULLPROC's reply if there is one, close.  Exits 0 if
 * all of that went as it should. */
static void upstream(int lfd, const script *s) {
  int fd = accept(lfd, NULL, NULL), fl;
  ldm6_io *io;
  ldm6_io_msg m;
  ldm6_fornme_reply rep;
  uint8_t buf[64];
  struct iovec iov = {buf, 0};
  size_t off = 0;

  if (fd < 0 || (io = ldm6_io_new(fd, 0)) == NULL)
    _exit(10);
  if (ldm6_io_recv(io, 10000, &m) != LDM6_IO_OK ||
      m.hdr.type != LDM6_RPC_CALL || m.hdr.u.call.proc != LDM6_FEEDME)
    _exit(11);
  memset(&rep, 0, sizeof rep);
  rep.code = LDM6_OK;
  if (ldm6_encode(LDM6_T_FORNME_REPLY, &rep, buf, sizeof buf, &iov.iov_len) !=
          0 ||
      ldm6_io_reply(io, m.hdr.xid, &iov, 1) != LDM6_IO_OK)
    _exit(12);
  fl = fcntl(fd, F_GETFL);
  fcntl(fd, F_SETFL, fl & ~O_NONBLOCK); /* the script's writes block */
  while (off < s->len) {
    ssize_t n = write(fd, s->b + off, s->len - off);

    if (n <= 0)
      _exit(13); /* the sink ended early: the parent says how */
    off += (size_t)n;
  }
  fcntl(fd, F_SETFL, fl);
  if (s->null_xid != 0 &&
      (ldm6_io_recv(io, 10000, &m) != LDM6_IO_OK ||
       m.hdr.type != LDM6_RPC_REPLY || m.hdr.xid != s->null_xid))
    _exit(14);
  ldm6_io_free(io);
  _exit(0);
}

/* Run a sink of the given way against the script; the upstream's exit
 * status in *up_status.  @return fs_run()'s result */
static int run_sink(fs_way way, const script *s, fs_slot *slot, int32_t *lat,
                    int *up_status) {
  struct sockaddr_in a;
  socklen_t al = sizeof a;
  int lfd = socket(AF_INET, SOCK_STREAM, 0), rc, st;
  pid_t pid;
  fs_conf c;

  assert_true(lfd >= 0);
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  assert_int_equal(bind(lfd, (struct sockaddr *)&a, sizeof a), 0);
  assert_int_equal(listen(lfd, 1), 0);
  assert_int_equal(getsockname(lfd, (struct sockaddr *)&a, &al), 0);
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0)
    upstream(lfd, s);
  close(lfd);
  memset(slot, 0, sizeof *slot);
  for (int i = 0; i < CAP; i++)
    lat[i] = -1;
  c.port = ntohs(a.sin_port);
  c.way = way;
  c.lat = lat;
  c.cap = CAP;
  c.sigs = sigs;
  rc = fs_run(&c, slot, &never);
  assert_int_equal(waitpid(pid, &st, 0), pid);
  *up_status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return rc;
}

static script *new_script(void) {
  script *s = calloc(1, sizeof *s);

  assert_non_null(s);
  s->b = malloc(SCRIPT_MAX);
  assert_non_null(s->b);
  return s;
}

static void free_script(script *s) {
  free(s->b);
  free(s);
}

/* Products of every shape arrive, counted once each, and the NULLPROC is
 * answered; the upstream's close then ends the sink, with the reason. */
static void good_stream(fs_way way) {
  static uint8_t rec[1u << 20];
  script *s = new_script();
  fs_slot slot;
  int32_t lat[CAP];
  int up;
  size_t len;
  static const size_t cut_head[] = {30, 100};    /* inside header, info */
  static const size_t three[] = {70000, 123457}; /* marks inside the data */

  len = hereis(rec, sizeof rec, 0, 100, false, 0, 0);
  record(s, rec, len, NULL, 0);
  len = hereis(rec, sizeof rec, 1, 300001, false, 0, 0);
  record(s, rec, len, three, 2);
  nullproc(s, 4242);
  len = hereis(rec, sizeof rec, 2, 50000, false, 0, 0);
  record(s, rec, len, cut_head, 2);
  len = hereis(rec, sizeof rec, 3, 5000, true, 0, 0); /* wrong signature */
  record(s, rec, len, NULL, 0);
  len = hereis(rec, sizeof rec, 1, 300001, false, 0, 0); /* again */
  record(s, rec, len, NULL, 0);
  len = hereis(rec, sizeof rec, 9, 64, false, 0, 0); /* seqno >= CAP */
  record(s, rec, len, NULL, 0);
  len = hereis(rec, sizeof rec, 4, 0, false, 0, 0); /* empty */
  record(s, rec, len, NULL, 0);

  assert_int_equal(run_sink(way, s, &slot, lat, &up), -1);
  assert_int_equal(up, 0); /* wrote it all, got the NULLPROC's reply */
  assert_int_equal(slot.connected, 1);
  assert_int_equal(slot.arrived, 4);
  assert_int_equal(slot.bytes, 100 + 300001 + 50000 + 0);
  assert_int_equal(slot.dups, 1);
  assert_int_equal(slot.strays, 1);
  assert_int_equal(slot.badsig, 1);
  assert_true(lat[0] >= 0 && lat[1] >= 0 && lat[2] >= 0 && lat[4] >= 0);
  assert_int_equal(lat[3], -1);
  assert_true(slot.error[0] != '\0'); /* the upstream closed: said so */
  free_script(s);
}

static void good_discard(void **state) {
  (void)state;
  good_stream(FS_DISCARD);
}

static void good_read(void **state) {
  (void)state;
  good_stream(FS_READ);
}

/* One good product, then a bad record made by make(); the sink ends with
 * an error containing why (for FS_DISCARD) and counts only the first. */
static void bad_stream(fs_way way, void (*make)(script *), const char *why) {
  static uint8_t rec[1u << 20];
  script *s = new_script();
  fs_slot slot;
  int32_t lat[CAP];
  int up;
  size_t len = hereis(rec, sizeof rec, 0, 20000, false, 0, 0);

  record(s, rec, len, NULL, 0);
  make(s);
  assert_int_equal(run_sink(way, s, &slot, lat, &up), -1);
  assert_int_equal(slot.arrived, 1);
  assert_true(lat[0] >= 0);
  assert_int_equal(lat[1], -1);
  assert_true(slot.error[0] != '\0');
  if (way == FS_DISCARD && strstr(slot.error, why) == NULL)
    fail_msg("error \"%s\" does not say \"%s\"", slot.error, why);
  (void)up; /* its writes may fail once the sink has gone */
  free_script(s);
}

/* A record that ends (last fragment) 1,000 bytes before its data does. */
static void make_short(script *s) {
  static uint8_t rec[1u << 20];
  size_t len = hereis(rec, sizeof rec, 1, 100000, false, 1000, 0);
  static const size_t two[] = {50000};

  record(s, rec, len, two, 1);
}

/* A record with 8 bytes more than its contents, in a fragment of its own. */
static void make_long(script *s) {
  static uint8_t rec[1u << 20];
  size_t len = hereis(rec, sizeof rec, 1, 100000, false, 0, 8);
  const size_t two[] = {len - 8};

  record(s, rec, len, two, 1);
}

/* The connection closes 10,000 bytes into a product's data. */
static void make_cut(script *s) {
  static uint8_t rec[1u << 20];
  size_t len = hereis(rec, sizeof rec, 1, 100000, false, 0, 0);
  uint8_t mark[LDM6_RPC_MARK_LEN];

  ldm6_rpc_mark_put(mark, (uint32_t)len, true);
  put(s, mark, sizeof mark);
  put(s, rec, len - 90000);
}

/* A length word of 2 GiB - 1, beyond any record the sink takes. */
static void make_huge(script *s) {
  uint8_t mark[LDM6_RPC_MARK_LEN];
  static const uint8_t junk[64];

  ldm6_rpc_mark_put(mark, LDM6_RPC_FRAG_MAX, true);
  put(s, mark, sizeof mark);
  put(s, junk, sizeof junk);
}

static void short_discard(void **state) {
  (void)state;
  bad_stream(FS_DISCARD, make_short, "ends before its contents");
}

static void short_read(void **state) {
  (void)state;
  bad_stream(FS_READ, make_short, "");
}

static void long_discard(void **state) {
  (void)state;
  bad_stream(FS_DISCARD, make_long, "longer than its contents");
}

static void long_read(void **state) {
  (void)state;
  bad_stream(FS_READ, make_long, "");
}

static void cut_discard(void **state) {
  (void)state;
  bad_stream(FS_DISCARD, make_cut, "closed inside a record");
}

static void cut_read(void **state) {
  (void)state;
  bad_stream(FS_READ, make_cut, "");
}

static void huge_discard(void **state) {
  (void)state;
  bad_stream(FS_DISCARD, make_huge, "bad record mark");
}

static void huge_read(void **state) {
  (void)state;
  bad_stream(FS_READ, make_huge, "");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(good_discard),  cmocka_unit_test(good_read),
      cmocka_unit_test(short_discard), cmocka_unit_test(short_read),
      cmocka_unit_test(long_discard),  cmocka_unit_test(long_read),
      cmocka_unit_test(cut_discard),   cmocka_unit_test(cut_read),
      cmocka_unit_test(huge_discard),  cmocka_unit_test(huge_read),
  };

  for (size_t i = 0; i < sizeof sigs; i++)
    sigs[i] = (uint8_t)(i * 7 + 3);
  signal(SIGPIPE, SIG_IGN);
  return cmocka_run_group_tests(tests, NULL, NULL);
}
