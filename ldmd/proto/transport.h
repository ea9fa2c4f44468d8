/*
 * transport.h - the byte layer under an ldm6_io's records (transport.c):
 * the socket itself, or TLS 1.3 over it once ldm6_io_start_tls() has run.
 * The record layer (rpc_recv.c, rpc_send.c) reads and writes only through
 * ldm6_io__read() and ldm6_io__sendv(), which keep the system calls'
 * contract whichever it is.  Internal to ldmd/proto.
 */
#ifndef LDMD_PROTO_TRANSPORT_H
#define LDMD_PROTO_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "ldmd/proto/rpc_io.h"

/** The most a TLS record carries, and the longest one on the wire:
 *  header, 2^14 bytes, and the most a record may add to them (RFC 8446
 *  section 5.2). */
#define LDM6_TLS_RECORD_PLAIN 16384u
#define LDM6_TLS_RECORD_WIRE (5u + LDM6_TLS_RECORD_PLAIN + 256u)

/**
 * read(2) on the connection: up to n bytes into buf.  Sets io->want to
 * what an EAGAIN must wait for (under TLS a read may need to write).
 * @return bytes read, 0 at the end, or -1 with errno (EPROTO: a TLS
 *         fault, its text in io->tlserr)
 */
ssize_t ldm6_io__read(ldm6_io *io, void *buf, size_t n);

/**
 * readv(2) of two pieces on the connection: up to n bytes into buf and
 * then, if the socket has more, up to n2 into buf2; under TLS only the
 * first piece is read.  As ldm6_io__read() otherwise.
 * @return bytes read into both, 0 at the end, or -1 with errno
 */
ssize_t ldm6_io__read2(ldm6_io *io, void *buf, size_t n, void *buf2, size_t n2);

/**
 * sendmsg(2) of iov[0..n) with flags (MSG_NOSIGNAL, MSG_DONTWAIT), at most
 * the first 1024 pieces; under TLS, records of those bytes in turn.  Sets
 * io->want as ldm6_io__read().  After a short count or EAGAIN the caller
 * must come back with the same bytes from where it stopped (OpenSSL's
 * rule for a write that must be made again).
 * @return bytes written (short when the socket is full), or -1 with errno
 */
ssize_t ldm6_io__sendv(ldm6_io *io, const struct iovec *iov, size_t n,
                       int flags);

/** Put the detail of a failed read or write into io->detail: "what:
 *  <errno's text>", or "TLS what: <OpenSSL's reason>" for EPROTO. */
void ldm6_io__sys_detail(ldm6_io *io, const char *what);

/** Under TLS: bytes OpenSSL has decrypted and not yet handed over. */
bool ldm6_io__tls_pending(const ldm6_io *io);

/** End TLS on io, if it was started: one try at close_notify, then
 *  OpenSSL's state freed (the descriptor stays open). */
void ldm6_io__tls_end(ldm6_io *io);

#endif /* LDMD_PROTO_TRANSPORT_H */
