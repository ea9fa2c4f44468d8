/*
 * ldmclient.h - what the LDM protocol clients (notifyme, ldmsend, ldmping,
 * rtstats) share: where the server is, connecting to it, and making one
 * synchronous LDM call, each of which a stop (SIGTERM, SIGINT) ends at
 * once.  (The sending side of a push is ldmpush.h's.)
 *
 * WHERE.  A server is named as LDM users name it, "host", plus what LDM's
 * own clients cannot do (they only ever use port 388): "host:port",
 * "[v6addr]", "[v6addr]:port", or a bare IPv6 address ("::1", which has no
 * port because its colons are the address).  A port not given with the host
 * comes from the program's -P option, else from the registry's /server/port
 * (the port our ldmd listens on), else 388.
 *
 * CALLS.  ldmc_call() encodes the argument, sends the call, waits for its
 * reply in rpc_io's loop (ldm6_io_await_reply(), which every synchronous
 * call runs), decodes the results and puts any failure in words for the
 * user.  The loop discards stray replies (answers to one-way calls) and
 * recognises LDM's refusal of a connection: an ldmd that does not allow
 * the client sends MSG_DENIED/AUTH_TOOWEAK, often with transaction id 0
 * and before the call is even read, and then closes.  Such a reply,
 * whatever its xid, is LDMC_DENIED rather than a closed connection, so the
 * user is told "not allowed" instead of "closed".
 *
 * TLS.  With -S a client speaks TLS 1.3 to the server (on the same port:
 * ldmd tells a TLS handshake from LDM-6 by its first byte) and verifies
 * the server's certificate against the registry's /tls/ca and that it
 * names the host; it shows the registry's /tls/cert, if set, so that a
 * server whose ldmd.conf asks for a certificate identity admits it
 * (docs/security.md).  ldmc_connect() then runs the handshake, which a stop
 * ends (errno EINTR).
 *
 * COMMAND LINE.  The options the four programs share (-P port, the
 * server named with -h or as an operand, feedtype and whole-number values)
 * are parsed by the ldmc_opt_*() functions, which report a bad value as
 * the clients do (the message, then the usage text, on stderr) and log a
 * registry that cannot be read as a warning; ldmc_opts_take() and
 * ldmc_opts_peer() handle -h, -P, -f and -S together for notifyme, ldmsend
 * and rtstats (ldmping takes -h more than once).
 *
 * Except for those, messages are written into the caller's buffer and name
 * the peer; nothing here logs or exits.  Not thread-safe (like ldm6_io);
 * fork-safe.
 */
#ifndef PQUTILS_NET_LDMCLIENT_H
#define PQUTILS_NET_LDMCLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ldmd/proto/ldm6_xdr.h"
#include "ldmd/proto/rpc_io.h"
#include "pqutils/common/cli.h"

#define LDMC_PORT_DEFAULT 388u /* LDM's well-known port */
#define LDMC_HOST_MAX 256      /* longest host name or address */
#define LDMC_NAME_MAX (LDMC_HOST_MAX + 16)

/* ldmc_call() results beyond rpc_io.h's LDM6_IO_* (its refusal has a name here
 * too). */
#define LDMC_DENIED LDM6_IO_DENIED /* the server does not allow us */
#define LDMC_EDECODE (-21)         /* the results do not decode as expected */
#define LDMC_STOPPED (-22)         /* a stop (SIGTERM, SIGINT) ended the call */

/** A server: its host and port, and how messages name it. */
struct ldmc_peer {
  char host[LDMC_HOST_MAX + 1]; /* name or address, without brackets */
  unsigned port;                /* 1..65535 */
  bool port_given;              /* the port came with the host */
  char name[LDMC_NAME_MAX];     /* "host:port" or "[v6]:port" */
  SSL_CTX *tls; /* borrowed: speak TLS with it (-S), or NULL: plain */
};

/**
 * Parse "host", "host:port", "[v6]", "[v6]:port" or a bare IPv6 address.
 * The port, if not in spec, is default_port (replace it later with
 * ldmc_peer_default_port()).
 * @param err, errlen  what is wrong, for the user
 * @return 0, or -1 (empty host, bad brackets, bad port, host too long).
 */
int ldmc_parse_peer(const char *spec, unsigned default_port,
                    struct ldmc_peer *p, char *err, size_t errlen);

/** Use port unless the peer was given with its own. */
void ldmc_peer_default_port(struct ldmc_peer *p, unsigned port);

/** Parse a port: a decimal number 1..65535.  @return 0 or -1. */
int ldmc_parse_port(const char *s, unsigned *port);

/**
 * The default port: the registry's /server/port, or 388 if the registry
 * does not set one.  A registry that cannot be read gives 388 and a
 * message in err (err[0] is '\0' otherwise).
 */
unsigned ldmc_registry_port(char *err, size_t errlen);

/**
 * Connect to the peer within timeout_ms in all, trying every address the
 * name has, the attempts overlapping (ldm6_io_connect_stop(), rpc_io.h);
 * a stop (cli_io.h) ends the wait at once.  The name is resolved first,
 * and that, for a name a slow DNS server must give, a stop does not end.
 * With ldmc_peer.tls the handshake follows, within what is left of
 * timeout_ms.
 * @return an ldm6_io, or NULL with errno set (ETIMEDOUT, ECONNREFUSED...;
 *         EINTR after a stop), a message naming the peer and the failure
 *         in err, and *unresolved set if the name did not resolve
 *         (unresolved may be NULL).
 */
ldm6_io *ldmc_connect(const struct ldmc_peer *p, int timeout_ms,
                      bool *unresolved, char *err, size_t errlen);

/**
 * Let a stop shut io's socket down, which ends any wait of rpc_io on it at
 * once (the call waiting then fails, and ldmc_call() says LDMC_STOPPED);
 * NULL forgets it.  One connection at a time: watch the one being used,
 * and forget it before ldm6_io_free().
 */
void ldmc_watch(const ldm6_io *io);

/**
 * Make a synchronous call of program 300029 and decode its results.
 * @param what     the call's name for messages ("NOTIFYME")
 * @param arg_type, arg  the argument (LDM6_T_VOID, NULL for none)
 * @param res_type, res  where to decode the results (LDM6_T_VOID, NULL)
 * @param reply    if not NULL, the reply's header (for LDM6_IO_EREPLY: which
 *                 error, and the versions of a PROG_MISMATCH)
 * @return LDM6_IO_OK; LDMC_DENIED; LDM6_IO_EREPLY (another error reply);
 *         LDMC_EDECODE; LDM6_IO_CLOSED, LDM6_IO_TIMEDOUT, LDM6_IO_EPROTO,
 *         LDM6_IO_ESYS; LDMC_STOPPED (a stop came: see ldmc_watch()); every
 *         failure with a message in err.
 */
int ldmc_call(ldm6_io *io, const struct ldmc_peer *p, const char *what,
              uint32_t vers, uint32_t proc, ldm6_type arg_type, const void *arg,
              ldm6_type res_type, void *res, int timeout_ms,
              ldm6_rpc_msg *reply, char *err, size_t errlen);

/** Text of an ldm6_io result with rpc_io's detail, into buf ("protocol
 *  error: connection closed inside a record").  @return buf. */
const char *ldmc_io_text(const ldm6_io *io, int rc, char *buf, size_t len);

/** Text of an error reply's header ("procedure unavailable", "not allowed
 *  (AUTH_TOOWEAK)", "program version mismatch (5-6)"...). */
void ldmc_reply_error_text(const ldm6_rpc_msg *hdr, char *buf, size_t len);

/* ---- command line; each returns 0, or -1 after printing the message and
 * the usage text on stderr ---- */

/** -P: a port, 1 to 65535. */
int ldmc_opt_port(struct cli *c, const char *usage, const char *arg,
                  unsigned *port);

/**
 * The server spec names ("host", "host:port", "[v6]:port"...), with *port
 * unless spec gives its own.  *port is -P's, or 0: then the registry's
 * /server/port (388 if it sets none, with a warning logged if it cannot be
 * read) is looked up once and left in *port for the next server.
 */
int ldmc_opt_peer(struct cli *c, const char *usage, const char *spec,
                  unsigned *port, struct ldmc_peer *p);

/**
 * -S: a TLS 1.3 client context from the registry's /tls/ca, /tls/cert and
 * /tls/key, for the peers' tls field; free it with SSL_CTX_free() after
 * the last connection.  A registry without /tls/ca is refused (nothing
 * could be verified).  @return 0, or -1 after printing why.
 */
int ldmc_opt_tls(SSL_CTX **ctx);

/** A feedtype expression (-f). */
int ldmc_opt_feedtype(struct cli *c, const char *usage, const char *arg,
                      uint32_t *feedtype);

/** A whole number from lo to hi; `what` names it in messages ("timeout"). */
int ldmc_opt_uint(struct cli *c, const char *usage, const char *what,
                  const char *arg, uint64_t lo, uint64_t hi, uint64_t *out);

/** Option opt's whole number of seconds, lo to hi (hi at most INT_MAX):
 *  ldmc_opt_uint() naming it "-<opt> value". */
int ldmc_opt_secs(struct cli *c, const char *usage, int opt, const char *arg,
                  uint64_t lo, uint64_t hi, int *out);

/**
 * The server options that notifyme, ldmsend and rtstats all take: -h host,
 * -P port, -f feedtype and (where the program offers it) -S.  The caller
 * sets the defaults (host "localhost", port 0, its own feedtype), hands
 * every option cli_next_option() returns to ldmc_opts_take(), and after the
 * loop calls ldmc_opts_peer().
 */
struct ldmc_opts {
  const char *host;  /**< -h: the server spec */
  unsigned port;     /**< -P, or 0: ldmc_opt_peer()'s *port */
  uint32_t feedtype; /**< -f */
  bool tls;          /**< -S */
};

/**
 * If opt is 'h', 'P', 'f' or 'S', stores arg (parsed) in o.
 * @return 1 if opt was one of them, 0 if it is the caller's own, -1 after
 *         printing why arg is bad.
 */
int ldmc_opts_take(struct cli *c, const char *usage, int opt, const char *arg,
                   struct ldmc_opts *o);

/**
 * After the options: the peer o->host names (ldmc_opt_peer()) and, with
 * -S, its TLS context (ldmc_opt_tls()).  @return 0, or -1 after printing
 * why.
 */
int ldmc_opts_peer(struct cli *c, const char *usage, struct ldmc_opts *o,
                   struct ldmc_peer *p);

#endif /* PQUTILS_NET_LDMCLIENT_H */
