/*
 * ldmnats.h - what pq2nats and nats2pq share, the bridge between a queue and
 * NATS JetStream (README, "Bridging to NATS JetStream"): the NATS options of
 * their command lines and their registry defaults (/nats/...), the
 * connection (every URL a server of one cluster, credentials, token, TLS;
 * reconnection forever with a bounded wait, each disconnect and reconnect
 * logged), the two streams, and the wire format: the header names, the
 * subjects of products and of chunks, the chunking of products larger than
 * the server's max_payload, and pq2nats's subject rules (-r).
 *
 * The wire format, for a consumer in any language (pq2nats.1 says it too):
 *   - product stream <stream> (default LDM), subjects <prefix>.> (default
 *     prefix ldm); a product's subject is <prefix>.<FEEDTYPE>, the
 *     feedtype's name as pq_feedtype_format() prints it, or
 *     <prefix>.x<8 hex digits> for a feedtype that is not one name, or
 *     what a rule gives;
 *   - headers Ldm-Ident, Ldm-Origin, Ldm-Created (<seconds>.<6 digits>),
 *     Ldm-Seqno, Ldm-Feedtype, Ldm-Signature (32 lowercase hex digits),
 *     Ldm-Size (bytes of data), and Nats-Msg-Id = the signature, so that
 *     the stream drops a duplicate within its window;
 *   - a product whose data do not fit one message goes first as chunks to
 *     the chunk stream <stream>_CHUNKS (subjects <prefix>_chunks.>), chunk
 *     i on <prefix>_chunks.<signature>.<i> with Nats-Msg-Id
 *     <signature>.<i>; once every chunk is acknowledged the product
 *     message follows with an empty body and the headers Ldm-Chunks and
 *     Ldm-Data-Md5 (the MD5 of the whole data, 32 hex digits).
 *
 * The pure parts (subjects, tokens, rules, chunk sizes, header values) are
 * in subject.c and need no server: test/nats/test_ldmnats.c drives them.
 * The connection's parts are in ldmnats.c.  Messages go to the logger
 * (ldmd/site/log.h).  Not thread-safe but where a function says so.
 */
#ifndef PQUTILS_NATS_LDMNATS_H
#define PQUTILS_NATS_LDMNATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pq/product.h"

struct cli;

/* ---- the wire format ---- */

#define LDMNATS_H_IDENT "Ldm-Ident"
#define LDMNATS_H_ORIGIN "Ldm-Origin"
#define LDMNATS_H_CREATED "Ldm-Created"
#define LDMNATS_H_SEQNO "Ldm-Seqno"
#define LDMNATS_H_FEEDTYPE "Ldm-Feedtype"
#define LDMNATS_H_SIGNATURE "Ldm-Signature"
#define LDMNATS_H_SIZE "Ldm-Size"
#define LDMNATS_H_CHUNKS "Ldm-Chunks"
#define LDMNATS_H_MD5 "Ldm-Data-Md5"
#define LDMNATS_H_MSGID "Nats-Msg-Id"

/* The defaults the registry's keys have (ldmd/site/registry_keys.c). */
#define LDMNATS_URL_DEFAULT "nats://127.0.0.1:4222"
#define LDMNATS_STREAM_DEFAULT "LDM"
#define LDMNATS_PREFIX_DEFAULT "ldm"
#define LDMNATS_DURABLE_DEFAULT "nats2pq"

/* What the chunk stream's name and its subjects' prefix add. */
#define LDMNATS_CHUNK_STREAM_SUFFIX "_CHUNKS"
#define LDMNATS_CHUNK_PREFIX_SUFFIX "_chunks"

/* Room for a subject: a prefix, a rule's expansion or a chunk's. */
#define LDMNATS_SUBJECT_MAX 512
/* Room for a stream name or a prefix (with the suffixes above). */
#define LDMNATS_NAME_MAX 128

/**
 * A feedtype as one subject token: its name when pq_feedtype_format()
 * prints one name ("NEXRAD3", "WMO", "ANY"), else "x" and 8 lowercase hex
 * digits ("x08000003" for NEXRAD3|DDPLUS).  buf has at least 32 bytes.
 * @return the length
 */
size_t ldmnats_feed_token(uint32_t feedtype, char *buf);

/**
 * Copy n bytes of in as one subject token: each byte that a subject token
 * may not hold (anything but printable ASCII, and '.', '*', '>') becomes
 * '_'; an empty token is "_".  Always NUL-terminates out when cap > 0.
 * @return the length the token has (as snprintf: >= cap means it was cut)
 */
size_t ldmnats_token(const char *in, size_t n, char *out, size_t cap);

/** Is s a valid subject prefix: one or more tokens separated by '.', no
 *  wildcard, no empty token, at most LDMNATS_NAME_MAX - 8 bytes? */
bool ldmnats_prefix_ok(const char *s);
/** Is s a valid stream name (no '.', '*', '>', '/', '\\', blank or
 *  control character; 1 to LDMNATS_NAME_MAX - 8 bytes)? */
bool ldmnats_stream_ok(const char *s);

/** The default subject of a product: <prefix>.<feedtoken>.
 *  @return as snprintf */
int ldmnats_feed_subject(const char *prefix, uint32_t feedtype, char *buf,
                         size_t len);

/** The subject of chunk i of the product with that signature (32 hex
 *  digits): <prefix>_chunks.<sig>.<i>.  @return as snprintf */
int ldmnats_chunk_subject(const char *prefix, const char *sighex, unsigned i,
                          char *buf, size_t len);
/** The Nats-Msg-Id of chunk i: <sig>.<i>.  buf has 48 bytes.  @return
 *  the length */
int ldmnats_chunk_msgid(const char *sighex, unsigned i, char *buf);
/** The chunk stream's name, <stream>_CHUNKS, and its subjects' prefix,
 *  <prefix>_chunks.  @return as snprintf */
int ldmnats_chunk_stream(const char *stream, char *buf, size_t len);
int ldmnats_chunk_prefix(const char *prefix, char *buf, size_t len);

/**
 * How a product of size bytes is carried in messages of at most max_body
 * bytes of data: 0 when it fits one product message, else the number of
 * chunks (each max_body bytes, the last the rest).  max_body > 0.
 */
uint64_t ldmnats_chunks(uint64_t size, uint64_t max_body);
/** Chunk i's offset and length within the data (i < the count). */
void ldmnats_chunk_span(uint64_t size, uint64_t max_body, uint64_t i,
                        uint64_t *offset, uint64_t *len);

/** Room that a product message's headers may take (the identifier and the
 *  origin at their longest, the names, the NATS header line): what
 *  pq2nats keeps free of max_payload for them. */
#define LDMNATS_HEADERS_MAX 1024

/** Ldm-Created: "<seconds>.<6 digits>" into buf[32].  @return the length */
size_t ldmnats_format_created(pq_timestamp t, char *buf);

/* ---- pq2nats's subject rules (-r) ---- */

/*
 * A rules file: one rule a line, "feedtype<TAB>ERE<TAB>template"; blank
 * lines and lines that begin with '#' are skipped.  A product matches a
 * rule when its feedtype shares a bit with the rule's feedtype expression
 * and its identifier matches the ERE; the first rule that matches gives
 * the subject: <prefix>.<template expanded>, where \1..\9 are the ERE's
 * captures (each made a token with ldmnats_token(), so a capture never
 * adds a token), \0 the whole match and \\ a backslash.  A template is one
 * or more tokens separated by '.', without wildcards.
 */
struct ldmnats_rules;

/**
 * Read a rules file.  On an error, a message naming the file and the line
 * goes into err.
 * @return 0, or -1 (*rules is NULL)
 */
int ldmnats_rules_read(const char *path, struct ldmnats_rules **rules,
                       char *err, size_t errlen);
/** The same from a string (for the tests); name is what messages call it. */
int ldmnats_rules_parse(const char *text, const char *name,
                        struct ldmnats_rules **rules, char *err, size_t errlen);
void ldmnats_rules_free(struct ldmnats_rules *rules);
/** How many rules. */
size_t ldmnats_rules_count(const struct ldmnats_rules *rules);

/**
 * The subject of a product: the first matching rule's, else the default
 * (ldmnats_feed_subject()).  rules may be NULL.
 * @return the subject's length, or -1 if the rule's subject did not fit
 *         in len bytes: buf then holds the default subject (which fits in
 *         LDMNATS_SUBJECT_MAX bytes with a valid prefix)
 */
int ldmnats_subject(const struct ldmnats_rules *rules, const char *prefix,
                    const pq_prod_info *info, char *buf, size_t len);

/* ---- the command line and the registry ---- */

/* The NATS options both programs take, and their lines of the usage. */
#define LDMNATS_OPTSTRING "u:s:P:C:T:t:A:E:K:"
#define LDMNATS_USAGE                                                          \
  "  -u url       NATS server URL(s), comma-separated (default: the\n"         \
  "               registry's /nats/url, else " LDMNATS_URL_DEFAULT ")\n"       \
  "  -s stream    JetStream stream (default: /nats/stream, else LDM)\n"        \
  "  -P prefix    subject prefix (default: /nats/prefix, else ldm)\n"          \
  "  -C file      NATS credentials file (default: /nats/credentials)\n"        \
  "  -T token     NATS authentication token (seen by ps: prefer -t)\n"         \
  "  -t file      file holding the token, mode 0600 or 0400 (default:\n"       \
  "               /nats/token-file)\n"                                         \
  "  -A ca.pem    TLS: CA certificates (default: /nats/ca)\n"                  \
  "  -E cert.pem  TLS: client certificate (default: /nats/cert)\n"             \
  "  -K key.pem   TLS: client key (default: /nats/key)\n"

/* The longest token a token file may hold (bytes, without the newline). */
#define LDMNATS_TOKEN_MAX 1023

struct ldmnats_opts {
  /* From the command line, or NULL until ldmnats_resolve(): then each
   * points at the value used ("" for an unset file or token; token at
   * token_buf when it came from the token file). */
  const char *url, *stream, *prefix, *creds, *token, *token_file, *ca, *cert,
      *key;
  /* nats2pq's -d: resolved only when want_durable is set */
  const char *durable;
  bool want_durable;
  /* the registry's values */
  char url_buf[4096], stream_buf[LDMNATS_NAME_MAX],
      prefix_buf[LDMNATS_NAME_MAX], durable_buf[LDMNATS_NAME_MAX];
  char creds_buf[4096], ca_buf[4096], cert_buf[4096], key_buf[4096];
  char token_file_buf[4096], token_buf[LDMNATS_TOKEN_MAX + 2];
};

/**
 * One of the NATS options (LDMNATS_OPTSTRING) with its value.
 * @return 1 if handled, 0 if ch is not one of them
 */
int ldmnats_option(struct ldmnats_opts *o, int ch, const char *arg);

/**
 * Fill what the command line did not give from the registry (read only if
 * something is missing), and check the stream name, the prefix and the
 * durable name.  The token is -T's, else the token file's (-t, else
 * /nats/token-file; ldmnats_read_token()); -T and -t together are an
 * error.
 * @return 0, or -1 after logging what is wrong
 */
int ldmnats_resolve(struct cli *c, struct ldmnats_opts *o);

/**
 * Read a token file: one line, the token (a final newline, and a CR before
 * it, dropped), 1 to LDMNATS_TOKEN_MAX bytes, no control character.  The
 * file must be a regular file that neither its group nor others may read
 * or write (mode 0600 or 0400, as ssh asks of a private key): a token
 * that other users can read is refused, not just warned about, since the
 * point of the file is that only the bridge's user reads the token.
 * @param buf  LDMNATS_TOKEN_MAX + 2 bytes
 * @return 0, or -1 with what is wrong (naming the file) in err
 */
int ldmnats_read_token(const char *path, char *buf, char *err, size_t errlen);

/* ---- the connection (ldmnats.c) ---- */

/* libnats's types, without its header for the pure parts' users. */
typedef struct __natsConnection natsConnection;
typedef struct __jsCtx jsCtx;
struct jsOptions;

struct ldmnats_conn {
  natsConnection *nc;
  jsCtx *js;
  int64_t max_payload; /* the server's, at the first connection */
};

/* What ldmnats_connect() and ldmnats_streams() return beside 0. */
#define LDMNATS_ECONFIG (-1) /* a bad option or file: exit 1 */
#define LDMNATS_ESTOP (-2)   /* a stop was asked for while waiting */
#define LDMNATS_EFAIL (-3)   /* something else failed (logged): exit 2 */
#define LDMNATS_ELOST                                                          \
  (-4) /* the connection broke (ldmnats_streams() on                           \
          one of ldmnats_connect_own()'s): again */

/**
 * Connect to the servers of o (ldmnats_resolve() first), waiting for one
 * to answer (the wait between tries grows to at most 2 s; each failure is
 * logged, the first at WARNING, then once a minute) until a stop is asked
 * for (cli_stopping()); then open a JetStream context with jo (NULL: the
 * defaults).  The connection reconnects forever, with the same bounded
 * wait; disconnects and reconnects are logged.  name is the client's name
 * the server shows (the program's).
 * @return 0, LDMNATS_ECONFIG, LDMNATS_ESTOP or LDMNATS_EFAIL (logged)
 */
int ldmnats_connect(const struct ldmnats_opts *o, const char *name,
                    struct jsOptions *jo, struct ldmnats_conn *conn);

/**
 * As ldmnats_connect(), but libnats does not reconnect: once the server is
 * gone the connection is closed (ldmnats_lost()), and the caller closes it
 * and connects again (again: logged as a reconnection).  A publish made
 * after the connection broke then fails, or is lost with the connection:
 * libnats never keeps it in its reconnection buffer to send it to the next
 * server ahead of everything else, before the messages the break lost
 * are published again (pq2nats: the stream's order, pq2nats.1).
 */
int ldmnats_connect_own(const struct ldmnats_opts *o, const char *name,
                        struct jsOptions *jo, bool again,
                        struct ldmnats_conn *conn);

/** The first call of a program's main(), before anything uses OpenSSL:
 *  OpenSSL is told not to clean up at exit (OPENSSL_INIT_NO_ATEXIT).
 *  libnats's threads outlive main() (the programs do not call nats_Close(),
 *  below), and OpenSSL's exit handler, freeing what such a thread still
 *  uses after a TLS connection, made a program crash at exit now and then;
 *  the kernel frees it all anyway. */
void ldmnats_init(void);

/** Close and free what ldmnats_connect() made (a zeroed conn: nothing).
 *  A program then exits without nats_Close(): after a TLS connection,
 *  libnats 3.4.1's global cleanup makes OpenSSL's exit handler crash. */
void ldmnats_close(struct ldmnats_conn *conn);

/** Is the connection up now?  Thread-safe. */
bool ldmnats_connected(const struct ldmnats_conn *conn);

/** Is the connection gone for good (none, or closed: after a break, that
 *  of ldmnats_connect_own())?  Thread-safe. */
bool ldmnats_lost(const struct ldmnats_conn *conn);

/**
 * Make sure the product stream and the chunk stream exist, creating each
 * one that does not: subjects <prefix>.> and <prefix>_chunks.>, file
 * storage, a duplicate window of dup_window_s seconds, replicas copies,
 * direct gets allowed.  A stream that exists is left as it is.  Retries
 * while JetStream does not answer (bounded wait, as ldmnats_connect())
 * until a stop.
 * @return 0, LDMNATS_ESTOP, LDMNATS_EFAIL (logged), or LDMNATS_ELOST
 *         when conn, one of ldmnats_connect_own()'s, broke meanwhile
 */
int ldmnats_streams(struct ldmnats_conn *conn, const struct ldmnats_opts *o,
                    int64_t dup_window_s, int replicas);

/** The wait before try n (0-based) of a loop that waits for the server:
 *  100 ms doubled each try, at most LDMNATS_WAIT_MAX_MS. */
#define LDMNATS_WAIT_MAX_MS 2000
int64_t ldmnats_backoff_ms(unsigned n);

#endif /* PQUTILS_NATS_LDMNATS_H */
