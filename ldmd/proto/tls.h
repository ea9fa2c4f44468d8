/*
 * tls.h - the TLS side of an LDM connection that is not about moving bytes:
 * the contexts (TLS 1.3 only, our certificate, key and CA bundle) that
 * ldmd and its requesters share, and what a finished handshake says about
 * the peer: whether it showed a certificate, whether that certificate
 * verifies against our CA and is in date, its subject CN, its SAN DNS
 * names and the SHA-256 of its public key (SubjectPublicKeyInfo, DER).
 * The bytes themselves go through ldm6_io (rpc_io.h:
 * ldm6_io_start_tls()).
 *
 * A handshake never fails because of the peer's certificate: the verify
 * callback records what is wrong with it (ldm6_tls_peer.verify_error) and
 * lets the handshake finish, so that the server can refuse by ldmd.conf's
 * rules with an RPC answer and a log line that says why, and so that a
 * pinned key (ldmd.conf's sha256=) can admit a self-signed certificate.
 * The peer still has to prove it holds the certificate's key: TLS does
 * that in the handshake whatever the callback says.
 *
 * Contexts are made once before fork() and used read-only by the children.
 * Never logs; failures come back as a message in the caller's buffer.
 */
#ifndef LDMD_PROTO_TLS_H
#define LDMD_PROTO_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/ssl.h>

#define LDM6_TLS_MAX_DNS 16 /**< SAN DNS names of a peer kept at most */
#define LDM6_TLS_NAME_MAX 256

/** What a handshake showed of the peer. */
typedef struct ldm6_tls_peer {
  bool tls;      /**< the connection is TLS (all else is unset if not) */
  bool cert;     /**< the peer showed a certificate */
  bool verified; /**< it verifies against our CA bundle and is in date */
  /** Good enough for a pinned key: no fault but an issuer we do not
   *  know (a self-signed certificate); not expired, not badly signed. */
  bool pin_ok;
  char verify_error[128]; /**< the first fault found ("" if none) */
  char cn[LDM6_TLS_NAME_MAX];
  char dns[LDM6_TLS_MAX_DNS][LDM6_TLS_NAME_MAX];
  size_t ndns;
  uint8_t spki_sha256[32];
  char version[16]; /**< "TLSv1.3" */
  char cipher[64];  /**< "TLS_AES_128_GCM_SHA256" */
} ldm6_tls_peer;

/**
 * Make a TLS 1.3 context.
 * @param server  true: ldmd's listener; false: a client (a requester)
 * @param cert, key  PEM files of our certificate (chain) and its key; NULL
 *                or "" for a client without a certificate (not for a server)
 * @param ca      PEM bundle of the CAs whose certificates we verify; NULL or
 *                "": none (only pinned keys can then be admitted)
 * @return a context, or NULL with a message in err ("cannot load
 *         certificate <path>: <OpenSSL's reason>")
 */
SSL_CTX *ldm6_tls_ctx_new(bool server, const char *cert, const char *key,
                          const char *ca, char *err, size_t errlen);

/** Prepare ssl for a handshake whose results go to *peer (zeroed here);
 *  peer must outlive the handshake.  @return 0, or -1 (no memory) */
int ldm6_tls_prepare(SSL *ssl, ldm6_tls_peer *peer);

/** Fill *peer from a finished handshake (what the callback did not). */
void ldm6_tls_peer_fill(SSL *ssl, ldm6_tls_peer *peer);

/** Does the peer's certificate name host (a DNS name, or an IPv4 or IPv6
 *  address in its SAN)?  False without a certificate. */
bool ldm6_tls_names_host(SSL *ssl, const char *host);

/** The last OpenSSL error as text, and the error queue cleared. */
const char *ldm6_tls_error(char *buf, size_t len);

/** "CN=name, DNS=a,b, SHA256=ab12..." (first 16 hex digits), for logs. */
void ldm6_tls_peer_text(const ldm6_tls_peer *peer, char *buf, size_t len);

#endif /* LDMD_PROTO_TLS_H */
