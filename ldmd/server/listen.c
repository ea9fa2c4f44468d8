/*
 * listen.c - binding ldmd's listening sockets: the IPv4/IPv6 wildcard pair,
 * a dual-stack "::", or the addresses a name resolves to.  See listen.h
 * for the rules.  Owns nothing after it returns: the sockets are the
 * caller's.
 */
#include "ldmd/server/listen.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void sa_text(const struct sockaddr *sa, char *buf, size_t len) {
  char host[INET6_ADDRSTRLEN] = "?";
  unsigned port = 0;

  if (sa->sa_family == AF_INET) {
    const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;

    inet_ntop(AF_INET, &s4->sin_addr, host, sizeof host);
    port = ntohs(s4->sin_port);
  } else if (sa->sa_family == AF_INET6) {
    const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;

    inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof host);
    port = ntohs(s6->sin6_port);
  }
  snprintf(buf, len, "%s port %u", host, port);
}

static void set_port(struct sockaddr *sa, unsigned port) {
  if (sa->sa_family == AF_INET)
    ((struct sockaddr_in *)sa)->sin_port = htons((uint16_t)port);
  else if (sa->sa_family == AF_INET6)
    ((struct sockaddr_in6 *)sa)->sin6_port = htons((uint16_t)port);
}

/*
 * Bind one socket.  v6only: -1 leave the system's default, else the value.
 * @return 0; -1 with err set; -2 when the address family is not available
 * (no IPv6 on this host).
 */
static int bind_one(ldmd_listeners *l, struct sockaddr *sa, socklen_t sl,
                    int v6only, char *err, size_t errlen) {
  char text[80];
  int one = 1, fd;

  if (l->n >= LDMD_MAX_LISTEN) {
    snprintf(err, errlen, "more than %d listening addresses", LDMD_MAX_LISTEN);
    return -1;
  }
  if (l->port != 0)
    set_port(sa, l->port);
  sa_text(sa, text, sizeof text);
  fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    if (errno == EAFNOSUPPORT)
      return -2;
    snprintf(err, errlen, "cannot create a socket for %s: socket: %s", text,
             strerror(errno));
    return -1;
  }
  (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (v6only >= 0)
    (void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof v6only);
  if (bind(fd, sa, sl) != 0 || listen(fd, LDMD_BACKLOG) != 0) {
    int e = errno;

    close(fd);
    if (sa->sa_family == AF_INET6 && e == EADDRNOTAVAIL)
      return -2;
    snprintf(err, errlen, "cannot listen on %s: bind: %s", text, strerror(e));
    return -1;
  }
  if (l->port == 0) {
    struct sockaddr_storage ss;
    socklen_t ssl = sizeof ss;

    if (getsockname(fd, (struct sockaddr *)&ss, &ssl) == 0) {
      l->port = ((struct sockaddr *)&ss)->sa_family == AF_INET
                    ? ntohs(((struct sockaddr_in *)&ss)->sin_port)
                    : ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
      set_port(sa, l->port);
      sa_text(sa, text, sizeof text);
    }
  }
  l->fds[l->n] = fd;
  snprintf(l->names[l->n], sizeof l->names[l->n], "%s", text);
  l->n++;
  return 0;
}

/* Every IPv6 and every IPv4 address: two sockets. */
static int bind_wildcard(ldmd_listeners *l, char *err, size_t errlen) {
  struct sockaddr_in6 s6;
  struct sockaddr_in s4;
  int rc;

  memset(&s6, 0, sizeof s6);
  s6.sin6_family = AF_INET6;
  s6.sin6_addr = in6addr_any;
  s6.sin6_port = htons((uint16_t)l->port);
  memset(&s4, 0, sizeof s4);
  s4.sin_family = AF_INET;
  s4.sin_addr.s_addr = htonl(INADDR_ANY);
  s4.sin_port = htons((uint16_t)l->port);
  /* IPv4 first, so that port 0 is chosen where it surely works. */
  rc = bind_one(l, (struct sockaddr *)&s4, sizeof s4, -1, err, errlen);
  if (rc != 0)
    return -1;
  rc = bind_one(l, (struct sockaddr *)&s6, sizeof s6, 1, err, errlen);
  if (rc == -1)
    return -1;
  return 0; /* -2: no IPv6 here; IPv4 is enough */
}

static int bind_address(ldmd_listeners *l, const char *addr, char *err,
                        size_t errlen) {
  struct addrinfo hints, *res = NULL, *ai;
  char service[16];
  int rc, bound = 0;

  if (strcmp(addr, "::") == 0) {
    struct sockaddr_in6 s6;

    memset(&s6, 0, sizeof s6);
    s6.sin6_family = AF_INET6;
    s6.sin6_addr = in6addr_any;
    s6.sin6_port = htons((uint16_t)l->port);
    rc = bind_one(l, (struct sockaddr *)&s6, sizeof s6, 0, err, errlen);
    if (rc == -2)
      snprintf(err, errlen, "cannot listen on ::: IPv6 is not available");
    return rc == 0 ? 0 : -1;
  }
  memset(&hints, 0, sizeof hints);
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  snprintf(service, sizeof service, "%u", l->port);
  rc = getaddrinfo(addr, service, &hints, &res);
  if (rc != 0) {
    snprintf(err, errlen, "cannot resolve listening address %s: %s", addr,
             gai_strerror(rc));
    return -1;
  }
  for (ai = res; ai != NULL; ai = ai->ai_next) {
    rc = bind_one(l, ai->ai_addr, ai->ai_addrlen,
                  ai->ai_family == AF_INET6 ? 1 : -1, err, errlen);
    if (rc == -1) {
      freeaddrinfo(res);
      return -1;
    }
    bound += rc == 0;
  }
  freeaddrinfo(res);
  if (bound == 0) {
    snprintf(err, errlen, "cannot listen on %s: no usable address", addr);
    return -1;
  }
  return 0;
}

static bool is_wildcard(const char *a) {
  return a[0] == '\0' || strcmp(a, "0.0.0.0") == 0 || strcmp(a, "*") == 0;
}

int ldmd_listen(const char *const *addrs, size_t naddrs, unsigned port,
                ldmd_listeners *out, char *err, size_t errlen) {
  size_t i;
  int rc = 0;

  memset(out, 0, sizeof *out);
  out->port = port;
  if (naddrs == 0)
    rc = bind_wildcard(out, err, errlen);
  for (i = 0; i < naddrs && rc == 0; i++)
    rc = is_wildcard(addrs[i]) ? bind_wildcard(out, err, errlen)
                               : bind_address(out, addrs[i], err, errlen);
  if (rc != 0)
    ldmd_listen_close(out);
  return rc;
}

void ldmd_listen_close(ldmd_listeners *l) {
  size_t i;

  for (i = 0; i < l->n; i++)
    close(l->fds[i]);
  l->n = 0;
}
