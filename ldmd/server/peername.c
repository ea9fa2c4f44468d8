/*
 * peername.c - forward confirmation of a peer's reverse-DNS name: the
 * name's addresses must include the peer's (see peername.h).
 */
#include "ldmd/server/peername.h"

#include <netinet/in.h>
#include <string.h>

/* The peer's address as 16 bytes of IPv6 or 4 of IPv4 (an IPv4-mapped
 * IPv6 address as its IPv4 part).  @return its length, 0 if neither */
static size_t addr_bytes(const struct sockaddr *sa, socklen_t len,
                         unsigned char out[16]) {
  if (sa->sa_family == AF_INET &&
      len >= (socklen_t)sizeof(struct sockaddr_in)) {
    memcpy(out, &((const struct sockaddr_in *)sa)->sin_addr, 4);
    return 4;
  }
  if (sa->sa_family == AF_INET6 &&
      len >= (socklen_t)sizeof(struct sockaddr_in6)) {
    const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;

    if (IN6_IS_ADDR_V4MAPPED(a)) {
      memcpy(out, &a->s6_addr[12], 4);
      return 4;
    }
    memcpy(out, a->s6_addr, 16);
    return 16;
  }
  return 0;
}

bool ldmd_name_confirmed(const char *name, const struct sockaddr *sa,
                         socklen_t len, ldmd_gai_fn *gai) {
  struct addrinfo hints, *res = NULL, *p;
  unsigned char want[16];
  size_t n = addr_bytes(sa, len, want);
  bool ok = false;

  if (n == 0 || name == NULL || name[0] == '\0')
    return false;
  memset(&hints, 0, sizeof hints);
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  if ((gai != NULL ? gai : getaddrinfo)(name, NULL, &hints, &res) != 0)
    return false;
  for (p = res; p != NULL && !ok; p = p->ai_next) {
    unsigned char got[16];

    ok = p->ai_addr != NULL &&
         addr_bytes(p->ai_addr, p->ai_addrlen, got) == n &&
         memcmp(got, want, n) == 0;
  }
  freeaddrinfo(res);
  return ok;
}
