/*
 * pins.h - the products an upstream has handed to the kernel by reference
 * (sendfile(2) from the queue file) and the kernel may still read: each is
 * pinned in the queue (pq_pin()) until the peer has its bytes, so that no
 * writer overwrites pages a socket still sends (docs/protocol.md, section
 * 6.8).  One per connection, a FIFO of (the connection's byte
 * position at the product's end, pin), bounded in products and bytes.
 *
 * Where the peer stands: the bytes the socket has taken minus its unsent
 * and unacknowledged bytes (ioctl SIOCOUTQ).  A peer on this host (found
 * by sock_diag(7) at the other end of the connection) does not copy what
 * it receives: its receive queue refers to the same pages until it reads
 * them, so its unread bytes (the peer socket's receive queue) count too.
 */
#ifndef LDMD_SERVER_PINS_H
#define LDMD_SERVER_PINS_H

#include <stdbool.h>
#include <stdint.h>

#include "pq/pq.h"

#define LDMD_PINS_MAX 64 /* products pinned at most per connection */

typedef struct ldmd_pins {
  pq_t *pq;
  int sock;         /* the connection's socket */
  int diag;         /* NETLINK_SOCK_DIAG for a peer on this host, or -1 */
  bool local;       /* the peer's socket is on this host */
  uint64_t limit;   /* bytes pinned at most */
  uint64_t bytes;   /* bytes pinned now */
  unsigned head, n; /* the FIFO: ring[head], ... */
  struct {
    uint64_t end; /* connection byte position after the product's data */
    pq_pin_t pin;
  } ring[LDMD_PINS_MAX];
  uint8_t id[64]; /* the sock_diag request for the peer's socket */
  unsigned idlen;
} ldmd_pins;

/** Set up for the connection on sock, products pinned in pq: at most
 *  LDMD_PINS_MAX products and limit bytes.  Sets SO_LINGER 0 on sock:
 *  however the process ends, even by SIGKILL, its close drops the
 *  unsent bytes instead of sending pages no longer pinned.  Cannot fail:
 *  a peer that cannot be looked up is taken as remote. */
void ldmd_pins_init(ldmd_pins *p, pq_t *pq, int sock, uint64_t limit);

/** Set up a connection that pins nothing (every call a no-op). */
void ldmd_pins_init_off(ldmd_pins *p);

/** Can a product of size bytes be pinned now (after releasing what the
 *  peer has)?  tx: the bytes the socket has taken so far. */
bool ldmd_pins_room(ldmd_pins *p, uint64_t size, uint64_t tx);

/** Add a pin whose product's data ends at connection byte end. */
void ldmd_pins_add(ldmd_pins *p, const pq_pin_t *pin, uint64_t end);

/** Release the pins of products the peer has: all of those ending at or
 *  before tx minus what is still in the sockets.  @return pins left */
unsigned ldmd_pins_reap(ldmd_pins *p, uint64_t tx);

/** The peer has everything sent so far (it answered a later call):
 *  release every pin. */
void ldmd_pins_release_all(ldmd_pins *p);

/** The peer has every byte before connection position pos (it answered a
 *  call sent there): release the pins of products ending at or before it. */
void ldmd_pins_release_to(ldmd_pins *p, uint64_t pos);

/**
 * At the end of the connection: wait up to timeout_ms for a peer on this
 * host to read what it has queued, then, if anything is still pinned,
 * drop what the socket holds (an abortive disconnect, so that no page
 * goes out later), and release every pin.  @return the pins a peer on
 * this host still had unread when the wait ended (0: none)
 */
unsigned ldmd_pins_end(ldmd_pins *p, uint64_t tx, int timeout_ms);

/** Free the sock_diag socket (pins must have been released). */
void ldmd_pins_close(ldmd_pins *p);

#endif /* LDMD_SERVER_PINS_H */
