/*
 * listen.h - the listening sockets of ldmd, on IPv4 and IPv6.
 *
 * LDM listens on one IPv4 address (-I, default 0.0.0.0).  We listen on
 * each address given: the wildcards "0.0.0.0", "*" and "" mean every IPv4
 * and every IPv6 address (two sockets, the IPv6 one IPV6_V6ONLY, so both
 * work on hosts where dual-stack sockets are disabled); "::" is one
 * dual-stack socket; anything else is resolved (numerically or by name)
 * and every address it gives is bound.  A host without IPv6 keeps its IPv4
 * wildcard socket with a warning.  Sockets are non-blocking, close-on-exec,
 * SO_REUSEADDR, with LDM's backlog of 1024.  Port 0 lets the kernel choose
 * a port, and every further socket takes the same one.
 *
 * Not thread-safe; the sockets are the caller's to close.
 */
#ifndef LDMD_SERVER_LISTEN_H
#define LDMD_SERVER_LISTEN_H

#include <stddef.h>

#define LDMD_MAX_LISTEN 16
#define LDMD_BACKLOG 1024

typedef struct ldmd_listeners {
  int fds[LDMD_MAX_LISTEN];
  char names[LDMD_MAX_LISTEN][80]; /**< "127.0.0.1 port 388", for logs */
  size_t n;
  unsigned port; /**< the port bound (the kernel's choice for port 0) */
} ldmd_listeners;

/**
 * Open and bind listening sockets.
 * @param addrs   addresses as described above (naddrs 0: the wildcard)
 * @param out     set to the sockets; on failure none stays open
 * @param err     message naming the address and the syscall on failure
 * @return 0, or -1 (err says why)
 */
int ldmd_listen(const char *const *addrs, size_t naddrs, unsigned port,
                ldmd_listeners *out, char *err, size_t errlen);

/** Close every socket. */
void ldmd_listen_close(ldmd_listeners *l);

#endif /* LDMD_SERVER_LISTEN_H */
