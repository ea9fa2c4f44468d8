/*
 * peername.h - whether a peer's reverse-DNS name may be trusted: only when
 * it is forward-confirmed, that is when the name's own addresses include
 * the peer's (as LDM vets host names, html/networkSecurityAndSetup.html).
 * Anyone who controls the reverse zone of an address can make it say any
 * name, "data.example.edu" included; only the owner of that name's zone
 * can make the name point back at the address.  An IPv4-mapped IPv6 peer
 * (::ffff:1.2.3.4, on a dual-stack listener) is compared as its IPv4
 * address, so it is confirmed by the name's A records as an IPv4 peer is.
 *
 * Reentrant; it may block in the resolver.
 */
#ifndef LDMD_SERVER_PEERNAME_H
#define LDMD_SERVER_PEERNAME_H

#include <netdb.h>
#include <stdbool.h>
#include <sys/socket.h>

/** getaddrinfo(3)'s signature, so that a test can stand in for the
 *  resolver. */
typedef int ldmd_gai_fn(const char *node, const char *service,
                        const struct addrinfo *hints, struct addrinfo **res);

/**
 * Is name forward-confirmed for the peer at sa (len bytes)?
 * @param gai  the resolver (NULL: getaddrinfo); its results are freed
 *             with freeaddrinfo(3)
 * @return true if one of name's addresses is the peer's
 */
bool ldmd_name_confirmed(const char *name, const struct sockaddr *sa,
                         socklen_t len, ldmd_gai_fn *gai);

#endif /* LDMD_SERVER_PEERNAME_H */
