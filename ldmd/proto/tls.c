/*
 * tls.c - TLS 1.3 contexts for ldmd and its requesters, the verify
 * callback that records what is wrong with a peer's certificate instead of
 * ending the handshake, and the peer's identity read from a finished
 * handshake (subject CN, SAN DNS names, SHA-256 of the public key).  See
 * tls.h for the policy; the bytes go through transport.c.
 */
#include "ldmd/proto/tls.h"

#include <stdio.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

const char *ldm6_tls_error(char *buf, size_t len) {
  unsigned long e = ERR_get_error();

  if (e == 0)
    snprintf(buf, len, "no detail from OpenSSL");
  else
    ERR_error_string_n(e, buf, len);
  ERR_clear_error();
  return buf;
}

/* The index of our ex_data slot on SSL objects: the ldm6_tls_peer. */
static int peer_index(void) {
  static int idx = -1;

  if (idx < 0)
    idx = SSL_get_ex_new_index(0, "ldm6_tls_peer", NULL, NULL, NULL);
  return idx;
}

/* Faults that only say "we do not know who issued it": a pin may accept. */
static bool issuer_unknown(int e) {
  return e == X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT ||
         e == X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN ||
         e == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT ||
         e == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY ||
         e == X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE ||
         e == X509_V_ERR_CERT_UNTRUSTED;
}

/* Record the fault, let the handshake go on: ldmd.conf decides. */
static int verify_cb(int ok, X509_STORE_CTX *x) {
  SSL *ssl =
      X509_STORE_CTX_get_ex_data(x, SSL_get_ex_data_X509_STORE_CTX_idx());
  ldm6_tls_peer *peer = ssl != NULL ? SSL_get_ex_data(ssl, peer_index()) : NULL;
  int e;

  if (ok)
    return 1;
  if (peer == NULL)
    return 0;
  e = X509_STORE_CTX_get_error(x);
  if (peer->verify_error[0] == '\0')
    snprintf(peer->verify_error, sizeof peer->verify_error, "%s",
             X509_verify_cert_error_string(e));
  peer->verified = false;
  if (!issuer_unknown(e))
    peer->pin_ok = false;
  return 1;
}

static int load_fail(char *err, size_t errlen, const char *what,
                     const char *path) {
  char why[256];

  snprintf(err, errlen, "cannot load %s %s: %s", what, path,
           ldm6_tls_error(why, sizeof why));
  return -1;
}

static int load(SSL_CTX *ctx, bool server, const char *cert, const char *key,
                const char *ca, char *err, size_t errlen) {
  bool have_cert = cert != NULL && cert[0] != '\0';

  if (server && !have_cert) {
    snprintf(err, errlen, "a TLS server needs a certificate");
    return -1;
  }
  if (have_cert) {
    if (SSL_CTX_use_certificate_chain_file(ctx, cert) != 1)
      return load_fail(err, errlen, "certificate", cert);
    if (key == NULL || key[0] == '\0')
      key = cert;
    if (SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1)
      return load_fail(err, errlen, "key", key);
    if (SSL_CTX_check_private_key(ctx) != 1)
      return load_fail(err, errlen, "key (it does not match the certificate)",
                       key);
  }
  if (ca != NULL && ca[0] != '\0' &&
      SSL_CTX_load_verify_locations(ctx, ca, NULL) != 1)
    return load_fail(err, errlen, "CA bundle", ca);
  return 0;
}

SSL_CTX *ldm6_tls_ctx_new(bool server, const char *cert, const char *key,
                          const char *ca, char *err, size_t errlen) {
  SSL_CTX *ctx =
      SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
  char why[256];

  err[0] = '\0';
  (void)peer_index(); /* made before fork(), once */

  if (ctx == NULL) {
    snprintf(err, errlen, "cannot make a TLS context: %s",
             ldm6_tls_error(why, sizeof why));
    return NULL;
  }
  if (SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) != 1 ||
      load(ctx, server, cert, key, ca, err, errlen) != 0) {
    if (err[0] == '\0')
      snprintf(err, errlen, "cannot make a TLS 1.3 context: %s",
               ldm6_tls_error(why, sizeof why));
    SSL_CTX_free(ctx);
    return NULL;
  }
  /* Partial writes and a buffer found again at another address (a
   * product re-read from the queue: ldm6_io_send_nowait()); an EOF
   * without close_notify is a close (record marking sees truncation). */
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE |
                            SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
  /* Read what the socket has, not a record header then its body: two
   * system calls fewer per 16 KiB record (ldm6_io_buffered() sees what
   * OpenSSL holds). */
  SSL_CTX_set_read_ahead(ctx, 1);
  SSL_CTX_set_default_read_buffer_len(ctx, 128 * 1024);
  /* AES-128-GCM first: a tenth faster than AES-256-GCM here (openssl
   * speed -evp, 16 KiB blocks), and as fit for a relay's links; the
   * server takes the client's order, so a peer without AES instructions
   * may still ask for ChaCha20 first. */
  (void)SSL_CTX_set_ciphersuites(ctx, "TLS_AES_128_GCM_SHA256:"
                                      "TLS_AES_256_GCM_SHA384:"
                                      "TLS_CHACHA20_POLY1305_SHA256");
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, verify_cb);
  if (server) {
    /* No resumption: every connection shows its certificate. */
    (void)SSL_CTX_set_num_tickets(ctx, 0);
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
  }
  return ctx;
}

int ldm6_tls_prepare(SSL *ssl, ldm6_tls_peer *peer) {
  memset(peer, 0, sizeof *peer);
  peer->tls = true;
  peer->verified = true; /* until the callback finds a fault */
  peer->pin_ok = true;
  return peer_index() >= 0 && SSL_set_ex_data(ssl, peer_index(), peer) == 1
             ? 0
             : -1;
}

static void utf8_of(const ASN1_STRING *s, char *out, size_t len) {
  unsigned char *u = NULL;
  int n = ASN1_STRING_to_UTF8(&u, s);

  out[0] = '\0';
  if (n >= 0 && (size_t)n < len && memchr(u, '\0', (size_t)n) == NULL) {
    memcpy(out, u, (size_t)n);
    out[n] = '\0';
  }
  OPENSSL_free(u);
}

static void fill_names(X509 *cert, ldm6_tls_peer *peer) {
  X509_NAME *subj = X509_get_subject_name(cert);
  int i =
      subj != NULL ? X509_NAME_get_index_by_NID(subj, NID_commonName, -1) : -1;
  GENERAL_NAMES *san;

  if (i >= 0)
    utf8_of(X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subj, i)), peer->cn,
            sizeof peer->cn);
  san = X509_get_ext_d2i(cert, NID_subject_alt_name, NULL, NULL);
  for (i = 0; san != NULL && i < sk_GENERAL_NAME_num(san) &&
              peer->ndns < LDM6_TLS_MAX_DNS;
       i++) {
    const GENERAL_NAME *g = sk_GENERAL_NAME_value(san, i);

    if (g->type != GEN_DNS)
      continue;
    utf8_of(g->d.dNSName, peer->dns[peer->ndns], sizeof peer->dns[0]);
    if (peer->dns[peer->ndns][0] != '\0')
      peer->ndns++;
  }
  GENERAL_NAMES_free(san);
}

static void fill_pin(X509 *cert, ldm6_tls_peer *peer) {
  unsigned char *der = NULL;
  int n = i2d_X509_PUBKEY(X509_get_X509_PUBKEY(cert), &der);
  unsigned mdlen = 0;

  if (n > 0)
    (void)EVP_Digest(der, (size_t)n, peer->spki_sha256, &mdlen, EVP_sha256(),
                     NULL);
  OPENSSL_free(der);
}

void ldm6_tls_peer_fill(SSL *ssl, ldm6_tls_peer *peer) {
  X509 *cert = SSL_get0_peer_certificate(ssl);

  snprintf(peer->version, sizeof peer->version, "%s", SSL_get_version(ssl));
  snprintf(peer->cipher, sizeof peer->cipher, "%s",
           SSL_CIPHER_get_name(SSL_get_current_cipher(ssl)));
  peer->cert = cert != NULL;
  if (cert == NULL) {
    peer->verified = peer->pin_ok = false;
    snprintf(peer->verify_error, sizeof peer->verify_error, "no certificate");
    return;
  }
  /* A client verifies its server's chain here too (the callback saw it). */
  if (SSL_get_verify_result(ssl) != X509_V_OK && peer->verify_error[0] == '\0')
    snprintf(peer->verify_error, sizeof peer->verify_error, "%s",
             X509_verify_cert_error_string(SSL_get_verify_result(ssl)));
  if (peer->verify_error[0] != '\0')
    peer->verified = false;
  fill_names(cert, peer);
  fill_pin(cert, peer);
}

bool ldm6_tls_names_host(SSL *ssl, const char *host) {
  X509 *cert = SSL_get0_peer_certificate(ssl);

  if (cert == NULL)
    return false;
  if (X509_check_ip_asc(cert, host, 0) == 1)
    return true;
  return X509_check_host(cert, host, 0, 0, NULL) == 1;
}

void ldm6_tls_peer_text(const ldm6_tls_peer *peer, char *buf, size_t len) {
  size_t at, i;

  if (!peer->cert) {
    snprintf(buf, len, "no certificate");
    return;
  }
  at = (size_t)snprintf(buf, len, "CN=%s", peer->cn);
  for (i = 0; i < peer->ndns && at < len; i++)
    at += (size_t)snprintf(buf + at, len - at, "%s%s", i == 0 ? ", DNS=" : ",",
                           peer->dns[i]);
  if (at < len)
    at += (size_t)snprintf(buf + at, len - at, ", SHA256=");
  for (i = 0; i < 8 && at < len; i++)
    at += (size_t)snprintf(buf + at, len - at, "%02x", peer->spki_sha256[i]);
  if (at < len)
    snprintf(buf + at, len - at, "...");
}
