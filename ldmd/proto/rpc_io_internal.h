/*
 * rpc_io_internal.h - what the files that make up an ldm6_io share, and
 * nothing outside ldmd/proto may use: the connection object itself, and
 * the clock and the one wait on its socket that every path goes through.
 *
 * An ldm6_io is written by four files, each owning the fields of its
 * concern (marked below): rpc_io.c the connection (descriptor, peer,
 * cancel flag, the detail of the last failure) and the synchronous call;
 * transport.c the bytes (plain, or TLS through its own BIO); rpc_recv.c
 * the receive path (read buffer, framer); rpc_send.c the send path
 * (transaction ids, the batch of one-way calls).  Connecting
 * (connect.c) only makes one with ldm6_io_new().  ldm6_io_new() and
 * ldm6_io_free() set up and release every field, and every file writes
 * the detail of its failures; otherwise a file only reads the fields of
 * another, to ask what the owner would answer (is there TLS, what must a
 * wait wait for, has a record been sent or received yet, what byte is
 * buffered first).
 */
#ifndef LDMD_PROTO_RPC_IO_INTERNAL_H
#define LDMD_PROTO_RPC_IO_INTERNAL_H

#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ldmd/proto/rpc_io.h"
#include "ldmd/proto/rpc_msg.h"
#include "ldmd/proto/tls.h"

#define LDM6_IO__RBUF_SIZE (128u * 1024u) /* the read buffer */
#define LDM6_IO__HDR_MAX 64 /* a CALL or REPLY header LDM-style, and more */

struct ldm6_io {
  /* The connection (rpc_io.c). */
  int fd;
  char peer[INET6_ADDRSTRLEN];
  unsigned port;
  const volatile sig_atomic_t *cancel; /* ends waits when set */
  char detail[160];                    /* the last failure, for logs */
  /* The transport (transport.c). */
  SSL *ssl;          /* after ldm6_io_start_tls(), else NULL */
  ldm6_tls_peer tls; /* what its handshake showed */
  short want;        /* what the last EAGAIN waits for: POLLIN, POLLOUT */
  int bio_errno;     /* errno of the last failed recv/send under TLS */
  bool bio_eof;      /* the socket's end was read under TLS */
  bool more;         /* under TLS, more records follow this one at once */
  uint8_t *stage;    /* under TLS, a record gathered from small pieces */
  char tlserr[128];  /* the last TLS fault (errno EPROTO) */
  /* Sending (rpc_send.c). */
  int send_timeout_ms;
  uint32_t next_xid;
  uint8_t *obuf;     /* queued one-way calls (ldm6_io_queue_call), or NULL */
  size_t ostart;     /* obuf[ostart..olen) is still to be written */
  size_t olen;       /* end of them */
  unsigned orecords; /* records among them */
  uint8_t hdr[LDM6_IO__HDR_MAX];
  uint64_t tx_bytes; /* bytes the socket has taken (plain connections) */
  /* Receiving (rpc_recv.c). */
  size_t max_record;
  bool partial;   /* bytes of an unfinished record have been taken */
  bool streaming; /* ldm6_io_recv_head() stopped inside a record */
  size_t start;   /* ldm6_io_set_stream_start(), 0: off */
  bool long_last; /* the last record begun was streamed */
  uint64_t rx_bytes;
  int lowat; /* the socket's SO_RCVLOWAT */
  ldm6_rpc_framer fr;
  size_t rpos, rlen; /* unread bytes are rbuf[rpos..rlen) */
  uint8_t rbuf[LDM6_IO__RBUF_SIZE];
};

/** The monotonic clock in milliseconds. */
int64_t ldm6_io__now_ms(void);

/** The deadline timeout_ms from now (-1: none). */
int64_t ldm6_io__deadline(int timeout_ms);

/** Milliseconds left until deadline (-1: none), for poll(2): 0 once it
 *  has passed. */
int ldm6_io__left_ms(int64_t deadline);

/**
 * Wait until io's socket has events, or the deadline (-1: none) passes; a
 * signal ends the wait only while *io->cancel is set.
 * @return LDM6_IO_OK (ready), LDM6_IO_TIMEDOUT, LDM6_IO_STOPPED (cancelled),
 *         or LDM6_IO_ESYS with the detail
 */
int ldm6_io__wait(ldm6_io *io, short events, int64_t deadline);

#endif /* LDMD_PROTO_RPC_IO_INTERNAL_H */
