/*
 * rpc_io.h - ONC RPC over one connected TCP socket, as LDM peers use it.
 *
 * LDM's connections are symmetric: after FEEDME or NOTIFYME the socket is
 * "turned around" and the former server makes calls.  So one ldm6_io object
 * both calls and serves on the same socket: it sends calls (synchronous, or
 * one-way: HEREIS, NOTIFICATION, BLKDATA are never answered), receives
 * records (calls or replies), and sends replies.  Records are framed with
 * ONC RPC record marking (rpc_msg.h); received records are reassembled
 * from any number of fragments up to a maximum size, and a larger length
 * word, garbage or a truncated record is a protocol error that ends only
 * this connection.
 *
 * On a plain connection sending uses sendmsg(2) with the caller's iovecs,
 * so product data goes from the queue's mapping to the socket without a
 * copy (small one-way calls can instead be queued, copied, and written in
 * batches: ldm6_io_queue_call(); and a sender that must not wait can write
 * a record by pieces, ldm6_io_send_nowait()); receiving can stream the
 * rest of a long record into the caller's memory (a reservation in the
 * queue) without gathering it first.  The socket gets TCP_NODELAY: LDM's
 * flushes wait ~40 ms on Nagle's algorithm, ours do not.  Every wait has a
 * timeout; nothing polls.
 *
 * The bytes may instead go through TLS 1.3 (ldm6_io_start_tls(), tls.h),
 * before the first record: every function below then works the same,
 * with OpenSSL's wants to read or write mapped to the same polls and
 * deadlines.  What is sent is then copied on the way out: encrypted into
 * OpenSSL's buffer, the pieces shorter than a TLS record (16 KiB) first
 * gathered into one (transport.c); the rest of a streamed record is still
 * decrypted straight into the caller's memory.
 *
 * Not thread-safe: one ldm6_io per connection, used by one thread (LDM runs
 * one process per connection).  Never logs; returns LDM6_IO_* codes.
 */
#ifndef LDMD_PROTO_RPC_IO_H
#define LDMD_PROTO_RPC_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <signal.h>
#include <stdint.h>
#include <sys/uio.h>

#include "ldmd/proto/rpc_msg.h"
#include "ldmd/proto/tls.h"

/* Results (0 or negative). */
#define LDM6_IO_OK 0
#define LDM6_IO_CLOSED (-1)   /* the peer closed the connection */
#define LDM6_IO_TIMEDOUT (-2) /* nothing within the timeout */
#define LDM6_IO_EPROTO (-3)   /* bad record: garbage, too big, bad header */
#define LDM6_IO_ESYS (-4)     /* a system call failed (errno kept) */
#define LDM6_IO_EREPLY (-5)   /* the reply was not SUCCESS (see msg) */
#define LDM6_IO_AGAIN (-6)    /* ldm6_io_send_nowait(): the socket is full */
#define LDM6_IO_FULL (-7)     /* ldm6_io_queue_copy(): flush first */
#define LDM6_IO_DENIED (-8)   /* the peer refused us: not allowed */
#define LDM6_IO_STOPPED (-9)  /* a stop ended the wait (ldm6_io_set_cancel) */

/** Records of at most this many argument bytes are worth copying into a
 *  batch (ldm6_io_queue_call(), ldm6_io_queue_copy()). */
#define LDM6_IO_COPY_MAX (16u * 1024u)

/** Largest record accepted by default: LDM's MAX_RPC_BUF_NEEDED for
 *  calls, but products arrive in HEREIS records as big as the product. */
#define LDM6_IO_DEFAULT_MAX_RECORD (64u << 20)

typedef struct ldm6_io ldm6_io;

/** A received record: its decoded header, and the bytes after it (the
 *  arguments of a call or the results of a reply), valid until the next
 *  ldm6_io_recv() or ldm6_io_call() on the same object. */
typedef struct ldm6_io_msg {
  ldm6_rpc_msg hdr;
  const uint8_t *body;
  size_t body_len;
} ldm6_io_msg;

/**
 * Wrap a connected socket.  Takes ownership of fd (closed by ldm6_io_free).
 * Sets TCP_NODELAY, close-on-exec and O_NONBLOCK (every wait is a poll(2)
 * with a timeout inside ldm6_io; do not read or write fd directly).
 * @param max_record  largest record accepted (0: the default)
 * @return NULL on allocation failure (fd is then closed).
 */
ldm6_io *ldm6_io_new(int fd, size_t max_record);
void ldm6_io_free(ldm6_io *io);
int ldm6_io_fd(const ldm6_io *io);
/** The peer's address as text ("127.0.0.1", "::1"), and its port. */
const char *ldm6_io_peer_addr(const ldm6_io *io);
unsigned ldm6_io_peer_port(const ldm6_io *io);

/**
 * Connect to host:port (a name, an IPv4 or an IPv6 address) trying every
 * address getaddrinfo() gives, within timeout_ms in all: the attempts
 * overlap, a new one every 250 ms or as soon as one fails, and the first
 * to connect wins (RFC 8305's way, without its sorting of the addresses).
 * @return an ldm6_io, or NULL with errno set (ETIMEDOUT when the time ran
 *         out) and a message in err.
 */
ldm6_io *ldm6_io_connect(const char *host, unsigned port, int timeout_ms,
                         char *err, size_t errlen);

/** ldm6_io_connect() that gives up at once (errno EINTR) when a signal
 *  interrupts the wait while *cancel is set; the ldm6_io it returns has
 *  ldm6_io_set_cancel(cancel) already. */
ldm6_io *ldm6_io_connect_cancel(const char *host, unsigned port, int timeout_ms,
                                const volatile sig_atomic_t *cancel, char *err,
                                size_t errlen);

/**
 * ldm6_io_connect() that a descriptor ends, for a caller that cannot miss
 * a stop (a flag and EINTR miss a signal that comes just before poll(2);
 * a self-pipe that the signal makes readable does not).
 * @param stop_fd     polled beside the attempts (-1: none): as soon as it
 *                    is readable (or in error), the connect gives up, errno
 *                    EINTR; never read.  The name's resolution is not
 *                    polled: a slow DNS server is waited for.
 * @param unresolved  if not NULL, set true when the name did not resolve
 *                    (err: "cannot resolve ..."), else false
 * @return as ldm6_io_connect()'s; the ldm6_io has no cancel flag.
 */
ldm6_io *ldm6_io_connect_stop(const char *host, unsigned port, int timeout_ms,
                              int stop_fd, bool *unresolved, char *err,
                              size_t errlen);

/**
 * Receive the next whole record (call or reply) within timeout_ms (-1: no
 * limit).  @return LDM6_IO_OK, LDM6_IO_CLOSED, LDM6_IO_TIMEDOUT,
 * LDM6_IO_EPROTO, LDM6_IO_ESYS.
 */
int ldm6_io_recv(ldm6_io *io, int timeout_ms, ldm6_io_msg *msg);

/*
 * Streaming a long record.  A receiver of products does not want a 20 MB
 * HEREIS gathered in a buffer and then copied into the queue: it takes the
 * start of the record (the header and the product's metadata), reserves
 * room in the queue, and has the data read from the socket straight into
 * it.  ldm6_io_recv_head() receives like ldm6_io_recv() but stops after the
 * first `head` bytes of a longer record; the caller must then take exactly
 * the rest with ldm6_io_recv_body() and close the record with
 * ldm6_io_recv_end() before anything else is received or sent.  After any
 * result other than LDM6_IO_OK in the middle of a record the connection is
 * out of step: close it.
 */

/**
 * Receive the next record, or its first head bytes if it is longer.
 * @param head  bytes of the record to gather at most (at least
 *              LDM6_RPC_CALL_HDR_LEN + 512 make sense)
 * @param more  set true when the record goes on after msg->body: take the
 *              rest with ldm6_io_recv_body() and ldm6_io_recv_end()
 * @return as ldm6_io_recv()
 */
int ldm6_io_recv_head(ldm6_io *io, int timeout_ms, size_t head,
                      ldm6_io_msg *msg, bool *more);

/**
 * The next n bytes of the record begun by ldm6_io_recv_head(), straight into
 * dst (NULL: read and dropped), fragment marks removed on the way.
 * timeout_ms bounds each wait for bytes, not the whole transfer.
 * @return LDM6_IO_OK; LDM6_IO_EPROTO (the record ends first, or a bad mark);
 *         LDM6_IO_TIMEDOUT; LDM6_IO_ESYS
 */
int ldm6_io_recv_body(ldm6_io *io, void *dst, size_t n, int timeout_ms);

/**
 * How many of the next n bytes of the body of the record begun by
 * ldm6_io_recv_head() have come already and can be taken without a wait:
 * those in io's read buffer and, on a plain connection, those in the
 * socket's receive queue, which nothing the peer does can take back.
 * Counts only bytes before the next fragment mark (a record of many
 * fragments is said to have fewer ready than it may have); under TLS only
 * the buffer's bytes.  One ioctl(2) when the buffer alone holds fewer
 * than n.  @return 0 .. n
 */
size_t ldm6_io_body_ready(ldm6_io *io, size_t n);

/**
 * Wait until the next n bytes of the streamed body have come (see
 * ldm6_io_body_ready()), or the socket has news (an end, an error), for at
 * most timeout_ms.  Returns at once when they cannot all be in hand
 * before a fragment mark, are more than the 512 KiB a wait is ever made
 * for, or the connection is under TLS.
 * @return LDM6_IO_OK (then ask ldm6_io_body_ready()), LDM6_IO_TIMEDOUT,
 *         LDM6_IO_STOPPED, LDM6_IO_ESYS
 */
int ldm6_io_body_wait(ldm6_io *io, size_t n, int timeout_ms);

/**
 * The record begun by ldm6_io_recv_head() must end here (an empty last
 * fragment may still follow; it is read).
 * @return LDM6_IO_OK; LDM6_IO_EPROTO (bytes remain: the record was longer than
 *         its contents said); LDM6_IO_TIMEDOUT; LDM6_IO_ESYS
 */
int ldm6_io_recv_end(ldm6_io *io, int timeout_ms);

/**
 * Send a call whose encoded arguments are in args[0..nargs).  One-way
 * calls return once the record is written.
 * @param[out] xid  the call's transaction id (may be NULL)
 */
int ldm6_io_send_call(ldm6_io *io, uint32_t vers, uint32_t proc,
                      const struct iovec *args, int nargs, uint32_t *xid);

/**
 * Queue a one-way call: its record is copied into io's output buffer
 * (256 KiB), which goes out in one write when it is full, when 64 records
 * are in it, before any other record is sent (so records keep their
 * order), or at ldm6_io_flush().  A sender of many small products thus
 * pays one system call, and one trip through TCP, per batch instead of
 * per product.  A call with more than 16 KiB of arguments is sent at once
 * (after the queued ones), from the caller's memory, as
 * ldm6_io_send_call() would.  A failed write drops what was queued (the
 * connection is then broken anyway).
 * @return LDM6_IO_OK (queued or sent), or a send failure
 */
int ldm6_io_queue_call(ldm6_io *io, uint32_t vers, uint32_t proc,
                       const struct iovec *args, int nargs);

/** Write the calls queued by ldm6_io_queue_call() or ldm6_io_queue_copy(),
 *  if any (it may wait).  Every other send, and so ldm6_io_call(), does it
 *  first by itself. */
int ldm6_io_flush(ldm6_io *io);

/*
 * Sending without waiting.  A sender that holds a lock (an upstream holds
 * the product it reads from the queue, and a held product cannot be
 * evicted) must not wait for a slow peer: it copies small records into the
 * batch, which it writes once the lock is released, and writes a large one
 * as far as the socket takes it at once, then finishes it later from the
 * same bytes found again.
 */

/**
 * Copy a one-way call into io's batch; never writes, never waits.
 * @param args  at most LDM6_IO_COPY_MAX bytes in all
 * @return LDM6_IO_OK; LDM6_IO_FULL (no room, or 64 records queued:
 *         ldm6_io_flush() first); LDM6_IO_EPROTO (bad arguments, too long);
 *         LDM6_IO_ESYS (no memory for the batch)
 */
int ldm6_io_queue_copy(ldm6_io *io, uint32_t vers, uint32_t proc,
                       const struct iovec *args, int nargs);

/** ldm6_io_queue_copy() that gives the call's transaction id in *xid (a
 *  synchronous call, NULLPROC, whose answer is read later). */
int ldm6_io_queue_copy_xid(ldm6_io *io, uint32_t vers, uint32_t proc,
                           const struct iovec *args, int nargs, uint32_t *xid);

/** Write the batch as far as the socket takes it now, never waiting; what
 *  it does not take stays queued, in order, for the next write.
 *  @return LDM6_IO_OK (the batch is empty), LDM6_IO_AGAIN (the socket is
 *          full), or a send failure (the batch is then dropped) */
int ldm6_io_flush_nowait(ldm6_io *io);

/** Where a record sent by pieces stands (ldm6_io_send_nowait()); zero it
 *  before the first call. */
typedef struct ldm6_io_partial {
  uint32_t xid;  /**< the call's transaction id, chosen at the start */
  uint64_t sent; /**< bytes of the record written (its marks included) */
  bool started;  /**< some of it may have been written */
} ldm6_io_partial;

/**
 * Write a call's record (after the batch, which goes first) as far as the
 * socket takes it now, without waiting.  Call again with the same *st and
 * arguments of the same lengths and bytes (they may be at another address:
 * the product found again) until it returns LDM6_IO_OK; wait between
 * calls with ldm6_io_wait_writable().  Until then nothing else may be sent
 * on io, and a record abandoned after st->started leaves the connection
 * out of step: close it.
 * @return LDM6_IO_OK (all of it written); LDM6_IO_AGAIN (the socket is
 *         full); LDM6_IO_CLOSED, LDM6_IO_ESYS, LDM6_IO_EPROTO
 */
int ldm6_io_send_nowait(ldm6_io *io, uint32_t vers, uint32_t proc,
                        const struct iovec *args, int nargs,
                        ldm6_io_partial *st);

/** ldm6_io_send_nowait() that, when more is true, tells TCP another
 *  record follows at once (MSG_MORE): its last bytes may wait for the
 *  next record's to fill a segment.  The sender pushes them with a later
 *  write without it, ldm6_io_flush_nowait(), or ldm6_io_push(). */
int ldm6_io_send_nowait_more(ldm6_io *io, uint32_t vers, uint32_t proc,
                             const struct iovec *args, int nargs,
                             ldm6_io_partial *st, bool more);

/** Send what earlier writes with MSG_MORE left waiting (plain
 *  connections: TCP_NODELAY set again pushes them).  Never waits. */
void ldm6_io_push(ldm6_io *io);

/**
 * Write a one-way call whose arguments are head (hlen bytes, at most
 * LDM6_IO_COPY_MAX: the encoded metadata) then dlen bytes of file fd from
 * off (and the XDR padding), without waiting, on a plain connection only.
 * The data goes by sendfile(2): the kernel sends the file's pages by
 * reference, so they must stay unchanged until the peer has them (see
 * docs/protocol.md, section 6.8).  The record's marks, header and
 * head go into the batch, written with the batch (MSG_MORE) just before
 * the data; the padding into the batch for the next write.  Call again
 * with the same *st and arguments until LDM6_IO_OK; wait between calls
 * with ldm6_io_wait_writable().  Until then nothing else may be sent on
 * io, and a record abandoned after st->started leaves the connection out
 * of step: close it.
 * @return LDM6_IO_OK (all of it taken by the socket, but the padding);
 *         LDM6_IO_AGAIN (the socket is full); LDM6_IO_EPROTO (TLS, or a
 *         record too long for one fragment); LDM6_IO_CLOSED, LDM6_IO_ESYS
 */
int ldm6_io_send_file_nowait(ldm6_io *io, uint32_t vers, uint32_t proc,
                             const void *head, size_t hlen, int fd,
                             uint64_t off, uint32_t dlen, ldm6_io_partial *st);

/** Bytes this connection's socket has taken so far (plain connections;
 *  under TLS, the bytes before encryption): with the socket's unsent and
 *  unacknowledged bytes (ioctl SIOCOUTQ), where the peer stands. */
uint64_t ldm6_io_tx_bytes(const ldm6_io *io);

/** Wait until the socket takes bytes (or has failed: the next write
 *  says how), within timeout_ms (-1: no limit).
 *  @return LDM6_IO_OK, LDM6_IO_TIMEDOUT, LDM6_IO_STOPPED, LDM6_IO_ESYS */
int ldm6_io_wait_writable(ldm6_io *io, int timeout_ms);

/** Bytes queued by ldm6_io_queue_call() and not yet written. */
size_t ldm6_io_queued(const ldm6_io *io);

/**
 * Wait up to timeout_ms (-1: no limit) for the reply to call xid, sent
 * with ldm6_io_send_call(): the one loop of every synchronous call, the
 * server's, its requesters' and the protocol clients' (ldmc_call()).
 * Replies with other xids (answers to one-way calls, which notifyme
 * sends) are discarded, but for a refusal: a peer that does not allow us
 * answers MSG_DENIED / AUTH_ERROR (LDM's "not allowed" is AUTH_TOOWEAK),
 * and at connection time it does so with xid 0, often before it has read
 * our call, and then closes (docs/protocol.md sections 1.4 and 5.1).  So
 * such a reply ends the wait whatever its xid.  A call arriving meanwhile
 * is a protocol error.
 * @param[out] reply  set only when a whole record came that ends the wait:
 *                    the reply (LDM6_IO_OK, LDM6_IO_DENIED,
 *                    LDM6_IO_EREPLY), or the call that came instead
 *                    (LDM6_IO_EPROTO with reply->hdr.type LDM6_RPC_CALL);
 *                    valid as ldm6_io_recv()'s
 * @return LDM6_IO_OK (reply->body holds the results); LDM6_IO_DENIED (the
 *         peer refused us; reply->hdr is the refusal, its auth_stat says
 *         why); LDM6_IO_EREPLY (the reply to xid was another error;
 *         reply->hdr says which); LDM6_IO_EPROTO; LDM6_IO_CLOSED,
 *         LDM6_IO_TIMEDOUT, LDM6_IO_ESYS.  The detail says which call
 *         came, or which refusal.
 */
int ldm6_io_await_reply(ldm6_io *io, uint32_t xid, int timeout_ms,
                        ldm6_io_msg *reply);

/**
 * Synchronous call: ldm6_io_send_call(), then ldm6_io_await_reply() for
 * its xid (timeout_ms counts from when the call is sent).
 * @return a send failure, or as ldm6_io_await_reply()
 */
int ldm6_io_call(ldm6_io *io, uint32_t vers, uint32_t proc,
                 const struct iovec *args, int nargs, int timeout_ms,
                 ldm6_io_msg *reply);

/** Reply SUCCESS to call xid with the encoded results res[0..nres). */
int ldm6_io_reply(ldm6_io *io, uint32_t xid, const struct iovec *res, int nres);
/** Reply with an accept_stat error (PROC_UNAVAIL, GARBAGE_ARGS,
 *  SYSTEM_ERR...). */
int ldm6_io_reply_error(ldm6_io *io, uint32_t xid, uint32_t accept_stat);
/** Reply PROG_MISMATCH with the versions served. */
int ldm6_io_reply_prog_mismatch(ldm6_io *io, uint32_t xid, uint32_t low,
                                uint32_t high);
/** Reply MSG_DENIED / AUTH_ERROR with auth_stat (LDM's "not allowed" is
 *  AUTH_TOOWEAK). */
int ldm6_io_reply_auth_error(ldm6_io *io, uint32_t xid, uint32_t auth_stat);

/** Reply MSG_DENIED / RPC_MISMATCH (2, 2): the answer to a call whose
 *  rpcvers is not 2. */
int ldm6_io_reply_rpc_mismatch(ldm6_io *io, uint32_t xid);

/*
 * TLS.  A server looks at the first byte a peer sends (ldm6_io_peek()):
 * 0x16 begins a TLS handshake record (a ClientHello), while a plain LDM-6
 * connection begins with the high byte of an RPC record mark (0x80 for
 * every call of LDM's size).  A client starts TLS right after connecting.
 */

/** The first byte of a TLS connection: a handshake record's type. */
#define LDM6_TLS_RECORD_HANDSHAKE 0x16

/**
 * The first byte the peer sends, left in the socket, within timeout_ms.
 * @return LDM6_IO_OK, LDM6_IO_CLOSED (nothing ever came), LDM6_IO_TIMEDOUT,
 *         LDM6_IO_ESYS
 */
int ldm6_io_peek(ldm6_io *io, int timeout_ms, uint8_t *byte);

/**
 * Run a TLS handshake on the connection (nothing read or sent before it
 * but a peek), as the server (accepting) or as a client, within
 * timeout_ms; from then on every record goes through TLS.  host (a client,
 * may be NULL) is sent as SNI when it is a name.  The peer's certificate
 * does not end the handshake: ldm6_io_tls_peer() says what it is worth.
 * @return LDM6_IO_OK; LDM6_IO_EPROTO (a TLS fault: no common version, bad
 *         messages; the detail has OpenSSL's reason); LDM6_IO_CLOSED;
 *         LDM6_IO_TIMEDOUT; LDM6_IO_ESYS
 */
int ldm6_io_start_tls(ldm6_io *io, SSL_CTX *ctx, bool server, const char *host,
                      int timeout_ms);

/** True after a successful ldm6_io_start_tls(). */
bool ldm6_io_is_tls(const ldm6_io *io);

/** What the handshake showed of the peer (->tls false on a plain
 *  connection). */
const ldm6_tls_peer *ldm6_io_tls_peer(const ldm6_io *io);

/** Does the peer's certificate name host (DNS name or address)? */
bool ldm6_io_tls_names_host(const ldm6_io *io, const char *host);

/** Text of an LDM6_IO_* result. */
const char *ldm6_io_strerror(int rc);

/**
 * What went wrong in the last failed call on io, for a log line ("bad RPC
 * header in a record of 12 bytes: ...", "connection closed inside a
 * record", "sendmsg: Broken pipe"); "" when there is no detail.  Valid
 * until the next call on io.
 */
const char *ldm6_io_detail(const ldm6_io *io);

/**
 * Give up a send when the peer takes no byte for timeout_ms (-1: never).
 * The default is 60 000 ms, LDM's RPC timeout.  Applies to every send,
 * calls and replies alike.
 */
void ldm6_io_set_send_timeout(ldm6_io *io, int timeout_ms);

/** Change the largest record accepted (0: the default), e.g. raise it to
 *  the queue's size once a peer is known to push products.  Applies from
 *  the next record on. */
void ldm6_io_set_max_record(ldm6_io *io, size_t max_record);

/**
 * Stream long records from their first start bytes (0: off, the default).
 * A record whose fragment alone goes past ldm6_io_recv_head()'s head is
 * then returned once start bytes of it are in (instead of head), and,
 * after such a record, the next read for a record's start asks the socket
 * for at most start bytes: the data of a run of long records is left in
 * the socket for ldm6_io_recv_body() to read straight where it goes (the
 * queue) instead of being copied through the read buffer.  A record that
 * turns out short is gathered whole as before, and ends that: the next
 * read fills the buffer again, so small records still come many to a read.
 * start must hold the start of every long record the caller decodes.
 */
void ldm6_io_set_stream_start(ldm6_io *io, size_t start);

/** True if bytes already read from the socket wait in io's buffer (so
 *  poll(2) on ldm6_io_fd() alone would miss them). */
bool ldm6_io_buffered(const ldm6_io *io);

/** Bytes read from the socket so far: progress inside a long record,
 *  which a caller watching for a silent peer counts as life. */
uint64_t ldm6_io_rx_bytes(const ldm6_io *io);

/**
 * Make every wait give up when *flag is non-zero after a signal
 * interrupts it (a SIGTERM handler sets the flag): the call then returns
 * LDM6_IO_STOPPED at once instead of waiting out its timeout, which is
 * not a failure: a caller says nothing of it, or an info line at most
 * (LDM6_IO_ESYS stays a failed system call).  NULL (the default): signals
 * never end a wait.
 */
void ldm6_io_set_cancel(ldm6_io *io, const volatile sig_atomic_t *flag);

#endif /* LDMD_PROTO_RPC_IO_H */
