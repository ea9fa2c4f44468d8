/*
 * test_peername.c - forward confirmation of a peer's name
 * (ldmd/server/peername.h), with a stand-in resolver that answers from a
 * table, so that names that lie can be tested: a name whose addresses
 * include the peer's is confirmed, IPv4 and IPv6 alike; one whose
 * addresses do not, or that does not resolve, is not; an IPv4-mapped IPv6
 * peer is confirmed by the name's IPv4 address and not by another.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

#include "ldmd/server/peername.h"

/* What the stand-in resolver knows: a name and its addresses. */
static const struct {
  const char *name, *addrs[3];
} zone[] = {
    {"honest.example", {"192.0.2.7", NULL}},
    {"liar.example", {"198.51.100.1", "2001:db8::9", NULL}},
    {"dual.example", {"2001:db8::1", "192.0.2.8", NULL}},
    {"six.example", {"2001:db8::5", NULL}},
};

/* Answers from zone[], each address through the real getaddrinfo() on its
 * numeric text, so that freeaddrinfo() frees them. */
static int fake_gai(const char *node, const char *service,
                    const struct addrinfo *hints, struct addrinfo **res) {
  struct addrinfo num = *hints, **tail = res;
  size_t i, k;

  *res = NULL;
  num.ai_flags |= AI_NUMERICHOST;
  for (i = 0; i < sizeof zone / sizeof zone[0]; i++) {
    if (strcmp(zone[i].name, node) != 0)
      continue;
    for (k = 0; zone[i].addrs[k] != NULL; k++) {
      struct addrinfo *one = NULL;

      if (getaddrinfo(zone[i].addrs[k], service, &num, &one) != 0)
        return EAI_FAIL;
      *tail = one;
      while (*tail != NULL)
        tail = &(*tail)->ai_next;
    }
    return 0;
  }
  return EAI_NONAME;
}

static bool confirmed4(const char *name, const char *ip) {
  struct sockaddr_in s4;

  memset(&s4, 0, sizeof s4);
  s4.sin_family = AF_INET;
  assert_int_equal(inet_pton(AF_INET, ip, &s4.sin_addr), 1);
  return ldmd_name_confirmed(name, (struct sockaddr *)&s4, sizeof s4, fake_gai);
}

static bool confirmed6(const char *name, const char *ip) {
  struct sockaddr_in6 s6;

  memset(&s6, 0, sizeof s6);
  s6.sin6_family = AF_INET6;
  assert_int_equal(inet_pton(AF_INET6, ip, &s6.sin6_addr), 1);
  return ldmd_name_confirmed(name, (struct sockaddr *)&s6, sizeof s6, fake_gai);
}

static void test_ipv4(void **state) {
  (void)state;
  assert_true(confirmed4("honest.example", "192.0.2.7"));
  /* A reverse zone that says "honest.example" for another address. */
  assert_false(confirmed4("honest.example", "192.0.2.99"));
  assert_false(confirmed4("liar.example", "192.0.2.7"));
  assert_false(confirmed4("nowhere.example", "192.0.2.7"));
  assert_false(confirmed4("", "192.0.2.7"));
  assert_false(confirmed4(NULL, "192.0.2.7"));
  assert_true(confirmed4("dual.example", "192.0.2.8"));
}

static void test_ipv6(void **state) {
  (void)state;
  assert_true(confirmed6("six.example", "2001:db8::5"));
  assert_true(confirmed6("liar.example", "2001:db8::9"));
  assert_true(confirmed6("dual.example", "2001:db8::1"));
  assert_false(confirmed6("six.example", "2001:db8::6"));
  assert_false(confirmed6("honest.example", "2001:db8::5"));
}

/* On a dual-stack listener an IPv4 peer is ::ffff:a.b.c.d. */
static void test_mapped(void **state) {
  (void)state;
  assert_true(confirmed6("honest.example", "::ffff:192.0.2.7"));
  assert_false(confirmed6("honest.example", "::ffff:192.0.2.99"));
  assert_false(confirmed6("six.example", "::ffff:192.0.2.7"));
}

/* The real resolver, on names every host has (/etc/hosts). */
static void test_localhost(void **state) {
  struct sockaddr_in s4;

  (void)state;
  memset(&s4, 0, sizeof s4);
  s4.sin_family = AF_INET;
  s4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  assert_true(ldmd_name_confirmed("localhost", (struct sockaddr *)&s4,
                                  sizeof s4, NULL));
  assert_false(ldmd_name_confirmed("no-such-host.invalid",
                                   (struct sockaddr *)&s4, sizeof s4, NULL));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ipv4),
      cmocka_unit_test(test_ipv6),
      cmocka_unit_test(test_mapped),
      cmocka_unit_test(test_localhost),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
