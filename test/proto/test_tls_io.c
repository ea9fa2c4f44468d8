/*
 * test_tls_io.c - ldm6_io over TLS 1.3 on a real loopback TCP connection
 * (ldmd/proto/rpc_io.h, tls.h): the server tells TLS from plain LDM-6 by
 * the first byte; a handshake with a certificate on each side, made here
 * with OpenSSL's API into the test's directory (a CA, and leaves it signs,
 * one of them expired); what each side learns of the other (CN, SAN,
 * the key's SHA-256, verified or why not); a synchronous call, a record
 * of several megabytes streamed into the caller's memory, and one written
 * by pieces (ldm6_io_send_nowait()) while the peer does not read; records
 * of many small and large pieces, and a call whose reply must come at
 * once; a client with no certificate; a TLS 1.2-only client refused by the
 * handshake.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "ldmd/proto/rpc_io.h"
#include "test/lib/tu_clock.h"

#define TU_TMPDIR_PREFIX "test_tls_io"
#include "test/lib/tu_tmpdir.h"

static EVP_PKEY *ca_key;
static X509 *ca_cert;

/* A certificate for key, CN cn and SAN san (NULL: none), signed by the CA
 * (or by itself when ca_cert is NULL), valid from days_from to days_to
 * days from now. */
static X509 *make_cert(EVP_PKEY *key, const char *cn, const char *san,
                       long days_from, long days_to) {
  X509 *x = X509_new();

  assert_non_null(x);
  ASN1_INTEGER_set(X509_get_serialNumber(x), (long)(random() & 0x7fffffff));
  X509_gmtime_adj(X509_getm_notBefore(x), days_from * 86400);
  X509_gmtime_adj(X509_getm_notAfter(x), days_to * 86400);
  X509_set_pubkey(x, key);
  X509_NAME_add_entry_by_txt(X509_get_subject_name(x), "CN", MBSTRING_ASC,
                             (const unsigned char *)cn, -1, -1, 0);
  X509_set_issuer_name(x, ca_cert != NULL ? X509_get_subject_name(ca_cert)
                                          : X509_get_subject_name(x));
  if (san != NULL) {
    X509_EXTENSION *e =
        X509V3_EXT_conf_nid(NULL, NULL, NID_subject_alt_name, san);

    assert_non_null(e);
    assert_int_equal(X509_add_ext(x, e, -1), 1);
    X509_EXTENSION_free(e);
  }
  assert_true(X509_sign(x, ca_key != NULL ? ca_key : key, EVP_sha256()) > 0);
  return x;
}

static void write_pem(const char *path, X509 *x, EVP_PKEY *key) {
  FILE *f = fopen(path, "w");

  assert_non_null(f);
  if (x != NULL)
    assert_int_equal(PEM_write_X509(f, x), 1);
  if (key != NULL)
    assert_int_equal(PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL),
                     1);
  assert_int_equal(fclose(f), 0);
}

/* name.pem (certificate) and name.key, signed by the CA. */
static void make_leaf(const char *name, const char *cn, const char *san,
                      long from, long to) {
  EVP_PKEY *key = EVP_EC_gen("P-256");
  X509 *x;
  char path[64];

  assert_non_null(key);
  x = make_cert(key, cn, san, from, to);
  snprintf(path, sizeof path, "%s.pem", name);
  write_pem(path, x, NULL);
  snprintf(path, sizeof path, "%s.key", name);
  write_pem(path, NULL, key);
  X509_free(x);
  EVP_PKEY_free(key);
}

static int setup(void **state) {
  if (tu_tmpdir_setup(state) != 0)
    return -1;
  ca_key = EVP_EC_gen("P-256");
  if (ca_key == NULL)
    return -1;
  ca_cert = NULL;
  ca_cert = make_cert(ca_key, "test-ca", NULL, -1, 30);
  write_pem("ca.pem", ca_cert, NULL);
  make_leaf("srv", "srv.test", "DNS:srv.test,IP:127.0.0.1", -1, 2);
  make_leaf("cli", "cli.test", "DNS:cli.test,DNS:other.test", -1, 2);
  make_leaf("old", "old.test", "DNS:old.test", -400, -300);
  return 0;
}

static int teardown(void **state) {
  X509_free(ca_cert);
  EVP_PKEY_free(ca_key);
  ca_cert = NULL;
  ca_key = NULL;
  return tu_tmpdir_teardown(state);
}

static SSL_CTX *ctx(bool server, const char *name) {
  char cert[64], key[64], err[512];
  SSL_CTX *c;

  snprintf(cert, sizeof cert, "%s.pem", name != NULL ? name : "");
  snprintf(key, sizeof key, "%s.key", name != NULL ? name : "");
  c = ldm6_tls_ctx_new(server, name != NULL ? cert : NULL,
                       name != NULL ? key : NULL, "ca.pem", err, sizeof err);
  if (c == NULL)
    fail_msg("%s", err);
  return c;
}

/* A loopback TCP pair: the client connected with ldm6_io_connect(). */
static void tcp_pair(ldm6_io **client, ldm6_io **server) {
  struct sockaddr_in s4 = {.sin_family = AF_INET};
  socklen_t sl = sizeof s4;
  int lfd = socket(AF_INET, SOCK_STREAM, 0), cfd;
  char err[256];

  assert_true(lfd >= 0);
  inet_pton(AF_INET, "127.0.0.1", &s4.sin_addr);
  assert_int_equal(bind(lfd, (struct sockaddr *)&s4, sizeof s4), 0);
  assert_int_equal(listen(lfd, 4), 0);
  assert_int_equal(getsockname(lfd, (struct sockaddr *)&s4, &sl), 0);
  *client =
      ldm6_io_connect("127.0.0.1", ntohs(s4.sin_port), 2000, err, sizeof err);
  assert_non_null(*client);
  cfd = accept(lfd, NULL, NULL);
  assert_true(cfd >= 0);
  *server = ldm6_io_new(cfd, 64u << 20);
  assert_non_null(*server);
  close(lfd);
}

/* The sender must have to wait while the receiver does not read: socket
 * buffers far smaller than the records sent. */
static void small_buffers(ldm6_io *c, ldm6_io *s) {
  int n = 64 << 10;

  assert_int_equal(
      setsockopt(ldm6_io_fd(c), SOL_SOCKET, SO_SNDBUF, &n, sizeof n), 0);
  assert_int_equal(
      setsockopt(ldm6_io_fd(s), SOL_SOCKET, SO_RCVBUF, &n, sizeof n), 0);
}

/* The sender's side: say, once, on fd, that a write had to wait. */
static void say_waited(int fd, bool *said) {
  if (!*said)
    *said = write(fd, "w", 1) == 1;
}

/* The receiver's side: wait (10 s at most) until the sender says that a
 * write had to wait, so that what it sends next is a write made again. */
static void wait_sender_waited(int fd) {
  struct pollfd p = {.fd = fd, .events = POLLIN};
  char b;

  assert_int_equal(poll(&p, 1, 10000), 1);
  assert_int_equal(read(fd, &b, 1), 1);
}

static void wait_ok(pid_t pid) {
  int st;

  assert_int_equal(waitpid(pid, &st, 0), pid);
  assert_true(WIFEXITED(st));
  assert_int_equal(WEXITSTATUS(st), 0);
}

/* The server's side of a handshake: the first byte, then TLS. */
static void server_start(ldm6_io *s, SSL_CTX *sctx) {
  uint8_t first = 0;

  assert_int_equal(ldm6_io_peek(s, 5000, &first), LDM6_IO_OK);
  assert_int_equal(first, LDM6_TLS_RECORD_HANDSHAKE);
  assert_int_equal(ldm6_io_start_tls(s, sctx, true, NULL, 5000), LDM6_IO_OK);
  assert_true(ldm6_io_is_tls(s));
}

#define BIG (3u << 20)

static uint8_t *pattern(size_t n, unsigned seed) {
  uint8_t *p = malloc(n);

  assert_non_null(p);
  for (size_t i = 0; i < n; i++)
    p[i] = (uint8_t)(i * 31 + seed + (i >> 12));
  return p;
}

/* Mutual authentication; a call, a streamed big record, a record sent by
 * pieces; what each side knows of the other. */
static void test_mutual(void **state) {
  SSL_CTX *sctx = ctx(true, "srv"), *cctx = ctx(false, "cli");
  uint8_t *big = pattern(BIG, 1), *got = malloc(BIG);
  ldm6_io *c, *s;
  ldm6_io_msg m;
  bool more = false;
  pid_t pid;

  int waited[2];

  (void)state;
  assert_non_null(got);
  assert_int_equal(pipe(waited), 0);
  tcp_pair(&c, &s);
  small_buffers(c, s);
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) { /* the client */
    bool said = false;
    const ldm6_tls_peer *t;
    struct iovec a = {big, BIG}, small = {big, 4};
    ldm6_io_partial st = {0};
    ldm6_io_msg r;
    int ok = ldm6_io_start_tls(c, cctx, false, "127.0.0.1", 5000) == 0;
    int rc = LDM6_IO_AGAIN;

    t = ldm6_io_tls_peer(c);
    ok = ok && t->tls && t->cert && t->verified &&
         strcmp(t->cn, "srv.test") == 0 && strcmp(t->version, "TLSv1.3") == 0 &&
         strcmp(t->cipher, "TLS_AES_128_GCM_SHA256") == 0;
    ok = ok && ldm6_io_tls_names_host(c, "127.0.0.1") &&
         ldm6_io_tls_names_host(c, "srv.test") &&
         !ldm6_io_tls_names_host(c, "other.test");
    ok = ok && ldm6_io_call(c, 6, 14, &small, 1, 5000, &r) == LDM6_IO_OK &&
         r.body_len == 4 && memcmp(r.body, "pong", 4) == 0;
    ok = ok && ldm6_io_send_call(c, 6, 1, &a, 1, NULL) == LDM6_IO_OK;
    /* By pieces: the server does not read until the socket is full. */
    while (ok &&
           (rc = ldm6_io_send_nowait(c, 6, 2, &a, 1, &st)) == LDM6_IO_AGAIN) {
      say_waited(waited[1], &said);
      ok = ldm6_io_wait_writable(c, 5000) == LDM6_IO_OK;
    }
    ok = ok && rc == LDM6_IO_OK;
    ok = ok && ldm6_io_recv(c, 5000, &r) == LDM6_IO_CLOSED;
    ldm6_io_free(c);
    _exit(ok ? 0 : 1);
  }
  ldm6_io_free(c);
  server_start(s, sctx);
  {
    const ldm6_tls_peer *t = ldm6_io_tls_peer(s);
    uint8_t zero[32] = {0};

    assert_true(t->cert);
    assert_true(t->verified);
    assert_string_equal(t->verify_error, "");
    assert_string_equal(t->cn, "cli.test");
    assert_int_equal(t->ndns, 2);
    assert_string_equal(t->dns[1], "other.test");
    assert_memory_not_equal(t->spki_sha256, zero, 32);
  }
  assert_int_equal(ldm6_io_recv(s, 5000, &m), LDM6_IO_OK);
  assert_int_equal(m.hdr.u.call.proc, 14);
  {
    struct iovec pong = {"pong", 4};

    assert_int_equal(ldm6_io_reply(s, m.hdr.xid, &pong, 1), LDM6_IO_OK);
  }
  /* The big record, its body streamed into our memory. */
  assert_int_equal(ldm6_io_recv_head(s, 5000, 4096, &m, &more), LDM6_IO_OK);
  assert_true(more);
  assert_memory_equal(m.body, big, m.body_len);
  memcpy(got, m.body, m.body_len);
  assert_int_equal(
      ldm6_io_recv_body(s, got + m.body_len, BIG - m.body_len, 5000),
      LDM6_IO_OK);
  assert_int_equal(ldm6_io_recv_end(s, 5000), LDM6_IO_OK);
  assert_memory_equal(got, big, BIG);
  /* The one sent by pieces, read once the sender had to wait. */
  wait_sender_waited(waited[0]);
  assert_int_equal(ldm6_io_recv(s, 5000, &m), LDM6_IO_OK);
  assert_int_equal(m.hdr.u.call.proc, 2);
  assert_int_equal(m.body_len, BIG);
  assert_memory_equal(m.body, big, BIG);
  ldm6_io_free(s);
  wait_ok(pid);
  close(waited[0]);
  close(waited[1]);
  free(big);
  free(got);
  SSL_CTX_free(sctx);
  SSL_CTX_free(cctx);
}

/* The pieces of test_pieces()'s record: small ones around large ones,
 * empty ones, one at the end (as the padding of a product whose size is a
 * multiple of four). */
static const size_t piece_len[] = {4,        40, 0,     100,   3, 20000,    7,
                                   1u << 20, 1,  16384, 16383, 5, 2u << 20, 0};
#define NPIECES (sizeof piece_len / sizeof piece_len[0])
#define PINGS 40

static size_t pieces_of(uint8_t *big, struct iovec *iov) {
  size_t i, at = 0;

  for (i = 0; i < NPIECES; i++) {
    iov[i].iov_base = big + at;
    iov[i].iov_len = piece_len[i];
    at += piece_len[i];
  }
  return at;
}

/* Records of many pieces, small and large, sent by pieces while the peer
 * does not read until the socket is full (TLS records are gathered across the
 * pieces, and a write that must wait is made again with the same bytes), then a
 * call whose last piece is empty: its reply comes (nothing held back by
 * MSG_MORE). */
static void test_pieces(void **state) {
  SSL_CTX *sctx = ctx(true, "srv"), *cctx = ctx(false, "cli");
  uint8_t *big = pattern(4u << 20, 7);
  struct iovec iov[NPIECES];
  size_t total = pieces_of(big, iov);
  ldm6_io *c, *s;
  ldm6_io_msg m;
  pid_t pid;
  int k, waited[2];

  (void)state;
  assert_int_equal(pipe(waited), 0);
  tcp_pair(&c, &s);
  small_buffers(c, s);
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    struct iovec last[2] = {{big, 10}, {big, 0}};
    bool said = false;
    int64_t t0;
    ldm6_io_msg r;
    long ms;
    int ok = ldm6_io_start_tls(c, cctx, false, "127.0.0.1", 5000) == 0;

    for (k = 0; ok && k < 3; k++) {
      ldm6_io_partial st = {0};
      int rc;

      while ((rc = ldm6_io_send_nowait(c, 6, 2, iov, (int)NPIECES, &st)) ==
                 LDM6_IO_AGAIN &&
             ok) {
        say_waited(waited[1], &said);
        ok = ldm6_io_wait_writable(c, 5000) == LDM6_IO_OK;
      }
      ok = ok && rc == LDM6_IO_OK;
    }
    ok = ok && ldm6_io_send_call(c, 6, 3, iov, (int)NPIECES, NULL) == 0;
    /* A record held back by MSG_MORE would go only when the kernel's
     * probe timer fires (200 ms at least): PINGS of them take seconds. */
    t0 = tu_now_ms();
    for (k = 0; ok && k < PINGS; k++)
      ok = ldm6_io_call(c, 6, 14, last, 2, 5000, &r) == LDM6_IO_OK &&
           r.body_len == 4 && memcmp(r.body, "pong", 4) == 0;
    ms = (long)(tu_now_ms() - t0);
    if (ok && ms > PINGS * 50) {
      fprintf(stderr, "%d calls took %ld ms\n", PINGS, ms);
      ok = 0;
    }
    ldm6_io_free(c);
    _exit(ok ? 0 : 1);
  }
  ldm6_io_free(c);
  server_start(s, sctx);
  wait_sender_waited(waited[0]); /* the client's socket is full */
  for (k = 0; k < 4; k++) {
    assert_int_equal(ldm6_io_recv(s, 5000, &m), LDM6_IO_OK);
    assert_int_equal(m.hdr.u.call.proc, k < 3 ? 2 : 3);
    assert_int_equal(m.body_len, total);
    assert_memory_equal(m.body, big, total);
  }
  for (k = 0; k < PINGS; k++) {
    struct iovec pong = {"pong", 4};

    assert_int_equal(ldm6_io_recv(s, 5000, &m), LDM6_IO_OK);
    assert_int_equal(m.hdr.u.call.proc, 14);
    assert_int_equal(m.body_len, 10);
    assert_int_equal(ldm6_io_reply(s, m.hdr.xid, &pong, 1), LDM6_IO_OK);
  }
  ldm6_io_free(s);
  wait_ok(pid);
  close(waited[0]);
  close(waited[1]);
  free(big);
  SSL_CTX_free(sctx);
  SSL_CTX_free(cctx);
}

/* No certificate; an expired one; another CA's (self-signed): the
 * handshake succeeds and says what is wrong. */
static void one_peer(const char *client_name, bool cert, bool pin_ok,
                     const char *error) {
  SSL_CTX *sctx = ctx(true, "srv"), *cctx = ctx(false, client_name);
  ldm6_io *c, *s;
  pid_t pid;

  tcp_pair(&c, &s);
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    ldm6_io_msg r;
    int ok = ldm6_io_start_tls(c, cctx, false, "127.0.0.1", 5000) == 0 &&
             ldm6_io_recv(c, 5000, &r) == LDM6_IO_CLOSED;

    _exit(ok ? 0 : 1);
  }
  ldm6_io_free(c);
  server_start(s, sctx);
  {
    const ldm6_tls_peer *t = ldm6_io_tls_peer(s);

    assert_int_equal(t->cert, cert);
    assert_false(t->verified);
    assert_int_equal(t->pin_ok, pin_ok);
    assert_string_equal(t->verify_error, error);
  }
  ldm6_io_free(s);
  wait_ok(pid);
  SSL_CTX_free(sctx);
  SSL_CTX_free(cctx);
}

static void test_no_cert(void **state) {
  (void)state;
  one_peer(NULL, false, false, "no certificate");
}

static void test_expired(void **state) {
  (void)state;
  one_peer("old", true, false, "certificate has expired");
}

static void test_self_signed(void **state) {
  EVP_PKEY *key = EVP_EC_gen("P-256");
  X509 *saved = ca_cert, *x;
  EVP_PKEY *saved_key = ca_key;

  (void)state;
  ca_cert = NULL; /* self-signed */
  ca_key = NULL;
  x = make_cert(key, "self.test", NULL, -1, 2);
  ca_cert = saved;
  ca_key = saved_key;
  write_pem("self.pem", x, NULL);
  write_pem("self.key", NULL, key);
  X509_free(x);
  EVP_PKEY_free(key);
  one_peer("self", true, true, "self-signed certificate");
}

/* A client that offers TLS 1.2 at most: the server's handshake fails with
 * OpenSSL's reason, and the connection is left to close. */
static void test_tls12_refused(void **state) {
  SSL_CTX *sctx = ctx(true, "srv");
  SSL_CTX *old = SSL_CTX_new(TLS_client_method());
  ldm6_io *c, *s;
  pid_t pid;

  (void)state;
  assert_non_null(old);
  assert_int_equal(SSL_CTX_set_max_proto_version(old, TLS1_2_VERSION), 1);
  tcp_pair(&c, &s);
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    int rc = ldm6_io_start_tls(c, old, false, NULL, 5000);

    _exit(rc != LDM6_IO_OK ? 0 : 1);
  }
  ldm6_io_free(c);
  {
    uint8_t first = 0;

    assert_int_equal(ldm6_io_peek(s, 5000, &first), LDM6_IO_OK);
    assert_int_equal(first, LDM6_TLS_RECORD_HANDSHAKE);
  }
  assert_int_equal(ldm6_io_start_tls(s, sctx, true, NULL, 5000),
                   LDM6_IO_EPROTO);
  assert_non_null(strstr(ldm6_io_detail(s), "TLS handshake: "));
  ldm6_io_free(s);
  wait_ok(pid);
  SSL_CTX_free(sctx);
  SSL_CTX_free(old);
}

/* A plain LDM-6 call: its first byte is a record mark's, and it is read
 * as always after the peek. */
static void test_plain_first_byte(void **state) {
  ldm6_io *c, *s;
  ldm6_io_msg m;
  uint8_t first = 0;

  (void)state;
  tcp_pair(&c, &s);
  assert_int_equal(ldm6_io_send_call(c, 6, 0, NULL, 0, NULL), LDM6_IO_OK);
  assert_int_equal(ldm6_io_peek(s, 5000, &first), LDM6_IO_OK);
  assert_int_equal(first, 0x80);
  assert_false(ldm6_io_is_tls(s));
  assert_false(ldm6_io_tls_peer(s)->tls);
  assert_int_equal(ldm6_io_recv(s, 5000, &m), LDM6_IO_OK);
  assert_int_equal(m.hdr.u.call.proc, 0);
  ldm6_io_free(c);
  assert_int_equal(ldm6_io_peek(s, 5000, &first), LDM6_IO_CLOSED);
  ldm6_io_free(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_mutual, setup, teardown),
      cmocka_unit_test_setup_teardown(test_pieces, setup, teardown),
      cmocka_unit_test_setup_teardown(test_no_cert, setup, teardown),
      cmocka_unit_test_setup_teardown(test_expired, setup, teardown),
      cmocka_unit_test_setup_teardown(test_self_signed, setup, teardown),
      cmocka_unit_test_setup_teardown(test_tls12_refused, setup, teardown),
      cmocka_unit_test(test_plain_first_byte),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}
