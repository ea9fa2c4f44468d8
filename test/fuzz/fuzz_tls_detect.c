/*
 * fuzz_tls_detect.c - libFuzzer target for the start of a server's
 * connection (ldmd/server/server_conn.c): the first byte tells TLS from
 * plain LDM-6 (ldm6_io_peek()), a 0x16 starts a TLS handshake as the
 * server (ldm6_io_start_tls(), with a self-signed certificate made once
 * at start), and then records are read until the connection fails, as the
 * call loop reads them.  The input is what the peer sends: written into
 * one end of a socketpair whose writing side is then shut, so every wait
 * ends (at the end of the input, or within the short timeouts here).
 *
 * Properties checked: no crash, leak or sanitizer report; a peek returns
 * the input's first byte or CLOSED on an empty input; whatever the bytes,
 * every call returns an LDM6_IO_* result.
 *
 * Seeds: with FUZZ_SEEDS_DIR set, the target writes a plain NULLPROC call,
 * a TLS 1.3 ClientHello record header with garbage, and a lone 0x16 there,
 * and exits.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/x509.h>

#include "ldmd/proto/ldm6_types.h"
#include "ldmd/proto/rpc_io.h"
#include "test/fuzz/fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* Inputs fit a socketpair's buffer: the write never waits. */
#define INPUT_MAX 16384

static SSL_CTX *server_ctx;

/* A NULLPROC call of LDM-6 (record mark, xid, CALL, rpcvers 2, prog
 * 300029, vers 6, proc 0, two null auths). */
static const uint8_t nullproc[] = {
    0x80, 0, 0,    40,                /* the last fragment, 40 bytes */
    0,    0, 0,    1,                 /* xid */
    0,    0, 0,    0,                 /* CALL */
    0,    0, 0,    2,                 /* rpcvers */
    0,    4, 0x93, 0xfd,              /* LDM6_PROG */
    0,    0, 0,    6,                 /* version 6 */
    0,    0, 0,    0,                 /* NULLPROC */
    0,    0, 0,    0,    0, 0, 0, 0,  /* AUTH_NONE credentials */
    0,    0, 0,    0,    0, 0, 0, 0}; /* AUTH_NONE verifier */
static const uint8_t hello[] = {0x16, 0x03, 0x01, 0x00, 0x08, 0x01, 0x00,
                                0x00, 0x04, 0x03, 0x03, 0xde, 0xad};

static void write_seed(const char *dir, const char *name, const uint8_t *p,
                       size_t n) {
  char path[4096];
  int fd;

  snprintf(path, sizeof path, "%s/%s", dir, name);
  fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0 || fuzz_write_all(fd, p, n) != 0) {
    perror(path);
    exit(1);
  }
  close(fd);
}

/* A self-signed P-256 certificate and its key in a server context. */
static SSL_CTX *make_ctx(void) {
  EVP_PKEY *key = EVP_EC_gen("P-256");
  X509 *x = X509_new();
  SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());

  if (key == NULL || x == NULL || ctx == NULL)
    abort();
  ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
  X509_gmtime_adj(X509_getm_notBefore(x), 0);
  X509_gmtime_adj(X509_getm_notAfter(x), 3600);
  X509_set_pubkey(x, key);
  X509_NAME_add_entry_by_txt(X509_get_subject_name(x), "CN", MBSTRING_ASC,
                             (const unsigned char *)"fuzz", -1, -1, 0);
  X509_set_issuer_name(x, X509_get_subject_name(x));
  if (X509_sign(x, key, EVP_sha256()) == 0 ||
      SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) != 1 ||
      SSL_CTX_use_certificate(ctx, x) != 1 ||
      SSL_CTX_use_PrivateKey(ctx, key) != 1)
    abort();
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
  X509_free(x);
  EVP_PKEY_free(key);
  return ctx;
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  const char *dir = fuzz_seeds_dir();

  (void)argc;
  (void)argv;
  if (dir != NULL) {
    write_seed(dir, "nullproc", nullproc, sizeof nullproc);
    write_seed(dir, "hello", hello, sizeof hello);
    write_seed(dir, "handshake", hello, 1);
    exit(0);
  }
  server_ctx = make_ctx();
  return 0;
}

static bool is_result(int rc) {
  return rc <= LDM6_IO_OK && rc >= LDM6_IO_FULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int sv[2], rc, i;
  uint8_t first = 0;
  ldm6_io *io;

  if (size > INPUT_MAX)
    return 0;
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    abort();
  if (fuzz_write_all(sv[1], data, size) != 0)
    abort();
  (void)shutdown(sv[1], SHUT_WR);
  io = ldm6_io_new(sv[0], LDM6_MAX_RPC_BUF);
  if (io == NULL)
    abort();
  ldm6_io_set_send_timeout(io, 100);
  rc = ldm6_io_peek(io, 100, &first);
  if (size == 0 ? rc != LDM6_IO_CLOSED : rc != LDM6_IO_OK || first != data[0])
    abort();
  if (rc == LDM6_IO_OK && first == LDM6_TLS_RECORD_HANDSHAKE) {
    rc = ldm6_io_start_tls(io, server_ctx, true, NULL, 100);
    if (!is_result(rc))
      abort();
  }
  for (i = 0; i < 64 && rc == LDM6_IO_OK; i++) {
    ldm6_io_msg m;

    rc = ldm6_io_recv(io, 100, &m);
    if (!is_result(rc))
      abort();
  }
  ldm6_io_free(io);
  close(sv[1]);
  return 0;
}
