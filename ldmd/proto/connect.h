/*
 * connect.h - what connect.c shows its tests and nobody else: the
 * connect over a list of addresses that ldm6_io_connect() runs on what
 * getaddrinfo(3) gives, so that a test can hand it addresses no name
 * resolves to (several dead loopback listeners, say) and time it.
 */
#ifndef LDMD_PROTO_CONNECT_H
#define LDMD_PROTO_CONNECT_H

#include <netdb.h>
#include <signal.h>

/**
 * Connect to one of the addresses of list within timeout_ms in all (-1:
 * no limit): overlapping attempts a quarter of a second apart, the first
 * to connect wins (see connect.c).
 * @param cancel   as ldm6_io_connect_cancel()'s (NULL: none)
 * @param stop_fd  as ldm6_io_connect_stop()'s (-1: none)
 * @return a connected, non-blocking, close-on-exec descriptor, or -1 with
 *         errno: ETIMEDOUT when the time ran out with attempts in flight,
 *         EINTR when cancelled or stopped, else the error of the last
 *         attempt that failed (ECONNREFUSED...)
 */
int ldm6_io__connect_list(const struct addrinfo *list, int timeout_ms,
                          const volatile sig_atomic_t *cancel, int stop_fd);

#endif /* LDMD_PROTO_CONNECT_H */
