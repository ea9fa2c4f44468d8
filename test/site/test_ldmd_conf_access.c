/*
 * test_ldmd_conf_access.c - ldmd.conf's access rules, the second half of
 * the test program test_ldmd_conf (main() is in test_ldmd_conf.c): the
 * connect check, the ALLOW reduction and upstream filter (docs/protocol.md,
 * "What ALLOW permits"), the ACCEPT class of a HIYA ("HIYA: products pushed
 * to us"), certificate identities matched against TLS peers, and LDM's
 * comparison of classes.
 *
 * Each test writes its ldmd.conf into a fresh directory under $PQ_TEST_DIR.
 */
#include "test/site/test_ldmd_conf.h"

/* ---------------------------------------------------------------------- */
/* Helpers                                                                */
/* ---------------------------------------------------------------------- */

static pq_class *new_class(pq_timestamp from, pq_timestamp to) {
  pq_class *cls = malloc(sizeof *cls);

  assert_non_null(cls);
  pq_class_init(cls, from, to);
  return cls;
}

static void add_spec(pq_class *cls, uint32_t ft, const char *pattern) {
  assert_int_equal(pq_class_add(cls, ft, pattern, NULL, 0), 0);
}

static void free_class(pq_class *cls) {
  pq_class_free(cls);
  free(cls);
}

static const pq_timestamp FROM = {1700000000, 0};

/* The access rules of one configuration put to work: the class asked for
 * (or offered), from FROM; the class given; the filter; the message. */
typedef struct rules {
  ldm_conf *conf;
  pq_class *want, *got;
  ldm_conf_filter filter;
  char err[ERRLEN];
} rules;

/* The filter and the message start as garbage: the calls must set them. */
static void rules_begin(rules *r, ldm_conf *conf) {
  r->conf = conf;
  r->want = new_class(FROM, PQ_TS_ENDT);
  r->got = new_class(PQ_TS_ZERO, PQ_TS_ZERO);
  memset(&r->filter, 0xa5, sizeof r->filter);
  memset(r->err, 'x', sizeof r->err - 1);
  r->err[sizeof r->err - 1] = '\0';
}

/* An empty class asked for again. */
static void want_again(rules *r) {
  pq_class_free(r->want);
  pq_class_init(r->want, FROM, PQ_TS_ENDT);
}

static int allowed(rules *r, const char *name, const char *addr) {
  return ldm_conf_allowed_class(r->conf, name, addr, r->want, r->got,
                                &r->filter, r->err, sizeof r->err);
}

static int accepted(rules *r, const char *name, const char *addr) {
  return ldm_conf_accepted_class(r->conf, name, addr, r->want, r->got, r->err,
                                 sizeof r->err);
}

static void rules_end(rules *r) {
  free_class(r->got);
  free_class(r->want);
  ldm_conf_free(r->conf);
}

/* ---------------------------------------------------------------------- */
/* Access rules                                                           */
/* ---------------------------------------------------------------------- */

static void test_host_allowed(void **state) {
  ldm_conf *conf = parse_ok(*state, "ALLOW ANY ^((localhost|loopback)|"
                                    "(127\\.0\\.0\\.1\\.?))$\n"
                                    "ALLOW WMO \\.edu$\n"
                                    "ALLOW ANY ^192\\.168\\.\n"
                                    "ACCEPT ANY .* ^pusher\\.org$\n");

  /* The address alone. */
  assert_true(ldm_conf_host_allowed(conf, NULL, "127.0.0.1"));
  assert_true(ldm_conf_host_allowed(conf, NULL, "192.168.7.7"));
  assert_false(ldm_conf_host_allowed(conf, NULL, "10.1.1.1"));
  /* Then the name, case-insensitively. */
  assert_true(ldm_conf_host_allowed(conf, "LOCALHOST", "10.1.1.1"));
  assert_true(ldm_conf_host_allowed(conf, "x.Example.EDU", "10.1.1.1"));
  assert_false(ldm_conf_host_allowed(conf, "x.edu.com", "10.1.1.1"));
  /* ACCEPT entries let a host connect too. */
  assert_true(ldm_conf_host_allowed(conf, "pusher.org", NULL));
  /* IPv4-mapped IPv6 is matched as the dotted quad. */
  assert_true(ldm_conf_host_allowed(conf, NULL, "::ffff:127.0.0.1"));
  assert_true(ldm_conf_host_allowed(conf, NULL, "::FFFF:192.168.0.1"));
  assert_false(ldm_conf_host_allowed(conf, NULL, "::1"));
  assert_false(ldm_conf_host_allowed(conf, NULL, NULL));
  assert_false(ldm_conf_host_allowed(NULL, "localhost", "127.0.0.1"));
  ldm_conf_free(conf);

  /* IPv6 addresses are matched as their text. */
  conf = parse_ok(*state, "ALLOW ANY ^::1$\n");
  assert_true(ldm_conf_host_allowed(conf, NULL, "::1"));
  ldm_conf_free(conf);
}

/* ---------------------------------------------------------------------- */
/* Certificate identities: "{...}" before a host field (our extension)    */
/* ---------------------------------------------------------------------- */

/* A TLS peer: CN, one DNS name, a key whose SHA-256 is PIN_HEX's bytes. */
static ldm_conf_peer_id tls_peer(const char *cn, bool verified,
                                 const char *const *dns) {
  ldm_conf_peer_id p = {.tls = true, .cert = true, .verified = verified};
  size_t i;

  p.pin_ok = verified;
  p.cn = cn;
  p.dns = dns;
  p.ndns = dns != NULL ? 1 : 0;
  for (i = 0; i < 16; i++)
    p.spki_sha256[i] = p.spki_sha256[i + 16] = (uint8_t)(i * 0x11);
  return p;
}

static void test_ident_match(void **state) {
  ldm_conf *conf = parse_ok(*state, "ALLOW ANY {cn=^b\\.test$}^127\\.\n"
                                    "ALLOW IDS {tls}\n"
                                    "ACCEPT EXP .* {dns=^d\\.test$}\n"
                                    "ACCEPT EXP .* {sha256=" PIN_HEX "}^10\\.\n"
                                    "ALLOW WMO ^192\\.168\\.\n");
  const char *dns_d[] = {"d.test"}, *dns_x[] = {"x.test"};
  ldm_conf_peer_id b = tls_peer("B.TEST", true, dns_x);
  ldm_conf_peer_id stale = tls_peer("b.test", false, dns_d);
  ldm_conf_peer_id d = tls_peer("other", true, dns_d);
  ldm_conf_peer_id none = {.tls = true};
  ldm_conf_peer_id pinned = tls_peer("self", false, NULL);

  /* Plain host rules: plain and TLS peers alike. */
  assert_true(ldm_conf_host_allowed_peer(conf, NULL, "192.168.1.1", NULL));
  assert_true(ldm_conf_host_allowed_peer(conf, NULL, "192.168.1.1", &none));
  /* An identity: never a plain peer, whatever its address. */
  assert_false(ldm_conf_host_allowed_peer(conf, NULL, "127.0.0.1", NULL));
  assert_false(ldm_conf_host_allowed(conf, NULL, "127.0.0.1"));
  /* cn= (any case) and the host ERE both. */
  assert_true(ldm_conf_ident_match(&conf->allows[0].id, &b));
  assert_true(ldm_conf_host_allowed_peer(conf, NULL, "127.0.0.1", &b));
  /* {tls}: any TLS peer, a certificate or not; never a plain one. */
  assert_true(ldm_conf_ident_match(&conf->allows[1].id, &none));
  assert_false(ldm_conf_ident_match(&conf->allows[1].id, NULL));
  /* A certificate that does not verify (expired, unknown CA) has no name. */
  assert_false(ldm_conf_ident_match(&conf->allows[0].id, &stale));
  assert_false(ldm_conf_ident_match(&conf->accepts[0].id, &stale));
  assert_false(ldm_conf_ident_match(&conf->allows[0].id, &none));
  /* dns=: some SAN DNS name. */
  assert_true(ldm_conf_ident_match(&conf->accepts[0].id, &d));
  assert_false(ldm_conf_ident_match(&conf->accepts[0].id, &b));
  /* sha256=: a self-signed certificate with that key; not an expired one,
   * nor another key. */
  pinned.pin_ok = true;
  assert_true(ldm_conf_ident_match(&conf->accepts[1].id, &pinned));
  pinned.pin_ok = false;
  assert_false(ldm_conf_ident_match(&conf->accepts[1].id, &pinned));
  pinned.pin_ok = true;
  pinned.spki_sha256[0] ^= 1;
  assert_false(ldm_conf_ident_match(&conf->accepts[1].id, &pinned));
  assert_false(ldm_conf_ident_match(&conf->accepts[1].id, &none));
  ldm_conf_free(conf);
}

static void test_ident_classes(void **state) {
  ldm_conf *conf = parse_ok(*state, "ALLOW IDS {cn=^b$}\n"
                                    "ALLOW EXP .*\n"
                                    "ACCEPT IDS .* {cn=^b$}\n");
  ldm_conf_peer_id b = tls_peer("b", true, NULL);
  rules r;

  rules_begin(&r, conf);
  add_spec(r.want, PQ_FT_IDS | PQ_FT_EXP, ".*");
  /* Plain: EXP only (RECLASS). */
  assert_int_equal(ldm_conf_allowed_class_peer(conf, "h", "1.2.3.4", NULL,
                                               r.want, r.got, &r.filter, r.err,
                                               sizeof r.err),
                   LDM_CONF_OK);
  assert_int_equal(r.got->nspecs, 1);
  assert_int_equal(r.got->specs[0].feedtype, PQ_FT_EXP);
  free_class(r.got);
  r.got = new_class(FROM, FROM);
  /* b over TLS: the entry with its CN matches. */
  assert_int_equal(ldm_conf_allowed_class_peer(conf, "h", "1.2.3.4", &b, r.want,
                                               r.got, &r.filter, r.err,
                                               sizeof r.err),
                   LDM_CONF_OK);
  /* (LDM's rule: the first matching entry gives the spec its feedtype.) */
  assert_int_equal(r.got->specs[0].feedtype, PQ_FT_IDS);
  assert_ptr_equal(r.filter.parts[0].allow, &conf->allows[0]);
  free_class(r.got);
  r.got = new_class(FROM, FROM);
  /* What a plain peer may push: nothing here; b may push IDS. */
  assert_int_equal(ldm_conf_accepted_class_peer(conf, "h", "1.2.3.4", NULL,
                                                r.want, r.got, r.err,
                                                sizeof r.err),
                   LDM_CONF_EDENIED);
  assert_int_equal(ldm_conf_accepted_class_peer(conf, "h", "1.2.3.4", &b,
                                                r.want, r.got, r.err,
                                                sizeof r.err),
                   LDM_CONF_OK);
  assert_int_equal(r.got->specs[0].feedtype, PQ_FT_IDS);
  rules_end(&r);
}

static void test_allowed_class_reduce(void **state) {
  rules r;
  char text[512];

  rules_begin(&r, parse_ok(*state, "ALLOW WMO ^a\\.edu$\n"
                                   "ALLOW ANY ^a\\.edu$ ^SA ^SAUS\n"
                                   "ALLOW NEXRAD3 ^b\\.edu$\n"));
  /* ANY from a.edu: the first matching entry, WMO, wins (section 4.1). */
  add_spec(r.want, PQ_FT_ANY, ".*");
  assert_int_equal(allowed(&r, "a.edu", "10.0.0.1"), LDM_CONF_OK);
  assert_string_equal(r.err, "");
  assert_int_equal(r.got->nspecs, 1);
  assert_int_equal(r.got->specs[0].feedtype, PQ_FT_WMO);
  assert_string_equal(r.got->specs[0].pattern, ".*");
  assert_int_equal(pq_ts_cmp(r.got->from, FROM), 0);
  assert_int_equal(pq_ts_cmp(r.got->to, PQ_TS_ENDT), 0);
  assert_false(ldm_conf_class_equal(r.got, r.want));
  assert_int_equal(r.filter.nparts, 1);
  assert_int_equal(r.filter.parts[0].feedtype, PQ_FT_WMO);
  assert_ptr_equal(r.filter.parts[0].allow, &r.conf->allows[0]);
  pq_class_free(r.got);

  /* Two specs: the second misses WMO and takes the ANY entry, with its OK
   * and NOT EREs in the filter. */
  want_again(&r);
  add_spec(r.want, PQ_FT_WMO | PQ_FT_NEXRAD3, "^S");
  add_spec(r.want, PQ_FT_EXP, "^T");
  assert_int_equal(allowed(&r, "A.EDU", NULL), LDM_CONF_OK);
  assert_int_equal(r.got->nspecs, 2);
  assert_int_equal(r.got->specs[0].feedtype, PQ_FT_WMO);
  assert_string_equal(r.got->specs[0].pattern, "^S");
  assert_int_equal(r.got->specs[1].feedtype, PQ_FT_EXP);
  assert_string_equal(r.got->specs[1].pattern, "^T");
  assert_int_equal(r.filter.nparts, 2);
  assert_int_equal(r.filter.parts[1].feedtype, PQ_FT_EXP);
  assert_ptr_equal(r.filter.parts[1].allow, &r.conf->allows[1]);
  assert_true(ldm_conf_filter_format(&r.filter, text, sizeof text) > 0);
  assert_string_equal(text, "{{EXP, (^SA) - (^SAUS)}, {WMO, (.*)}}");
  /* The filter: WMO products pass whatever their ident; EXP ones need
   * ^SA and not ^SAUS; others never pass. */
  assert_true(ldm_conf_filter_match(&r.filter, PQ_FT_IDS, "anything"));
  assert_true(ldm_conf_filter_match(&r.filter, PQ_FT_EXP, "SAXX01"));
  assert_false(ldm_conf_filter_match(&r.filter, PQ_FT_EXP, "SAUS01"));
  assert_false(ldm_conf_filter_match(&r.filter, PQ_FT_EXP, "TEST"));
  assert_false(ldm_conf_filter_match(&r.filter, PQ_FT_NEXRAD3, "SDUS"));
  pq_class_free(r.got);

  /* Unchanged: the server replies OK. */
  want_again(&r);
  add_spec(r.want, PQ_FT_IDS | PQ_FT_DDS, "^SA");
  assert_int_equal(allowed(&r, "a.edu", NULL), LDM_CONF_OK);
  assert_true(ldm_conf_class_equal(r.got, r.want));
  pq_class_free(r.got);

  rules_end(&r);
}

static void test_allowed_class_badpattern(void **state) {
  /* A pattern that does not compile at step 4 is LDM's BADPATTERN.  (A
   * server compiles the request first, so this needs a doctored class.) */
  rules r;

  rules_begin(&r, parse_ok(*state, "ALLOW WMO ^x$\n"
                                   "ALLOW ANY ^h$\n"));
  add_spec(r.want, PQ_FT_WMO, "^A");
  strcpy(r.want->specs[0].pattern, "^A(");
  assert_int_equal(allowed(&r, "h", NULL), LDM_CONF_EPATTERN);
  assert_non_null(strstr(r.err, "bad pattern \"^A(\""));
  assert_int_equal(r.got->nspecs, 0);
  assert_int_equal(r.filter.nparts, 0);
  rules_end(&r);
}

static void test_allowed_class_denied(void **state) {
  rules r;

  rules_begin(&r, parse_ok(*state, "ALLOW WMO ^a\\.edu$\n"
                                   "ALLOW NEXRAD3 ^b\\.edu$\n"));
  /* Nothing for this host: AUTH_TOOWEAK. */
  add_spec(r.want, PQ_FT_WMO, ".*");
  assert_int_equal(allowed(&r, "c.edu", "10.9.9.9"), LDM_CONF_EDENIED);
  assert_non_null(strstr(r.err, "upstream filter prevents data-transfer"));
  assert_non_null(strstr(r.err, "c.edu [10.9.9.9]"));
  assert_int_equal(r.got->nspecs, 0);
  assert_int_equal(r.filter.nparts, 0);
  pq_class_free(r.got);
  /* The host matches, but not for this feedtype. */
  assert_int_equal(allowed(&r, "b.edu", NULL), LDM_CONF_EDENIED);
  pq_class_free(r.got);
  /* An empty request. */
  want_again(&r);
  assert_int_equal(allowed(&r, "a.edu", NULL), LDM_CONF_EDENIED);
  pq_class_free(r.got);
  /* Bad arguments. */
  assert_int_equal(ldm_conf_allowed_class(NULL, "a.edu", NULL, r.want, r.got,
                                          &r.filter, r.err, sizeof r.err),
                   LDM_CONF_EINVAL);
  assert_int_equal(ldm_conf_allowed_class(r.conf, "a.edu", NULL, r.want, r.got,
                                          NULL, NULL, 0),
                   LDM_CONF_EINVAL);
  rules_end(&r);
}

static void test_allowed_class_overlap(void **state) {
  rules r;

  rules_begin(&r, parse_ok(*state, "ALLOW WMO ^a\\.edu$\n"
                                   "ALLOW ANY ^a\\.edu$\n"));
  /* Two specs meeting the same ALLOW feedtype overlap in the filter:
   * LDM replies SYSTEM_ERR. */
  add_spec(r.want, PQ_FT_IDS, "^A");
  add_spec(r.want, PQ_FT_IDS | PQ_FT_HDS, "^B");
  assert_int_equal(allowed(&r, "a.edu", NULL), LDM_CONF_EOVERLAP);
  assert_string_equal(r.err, "feedtype IDS|HDS overlaps with feedtype IDS");
  assert_int_equal(r.got->nspecs, 0);
  assert_int_equal(r.filter.nparts, 0);
  pq_class_free(r.got);

  /* Disjoint feedtypes through the same entry are fine. */
  want_again(&r);
  add_spec(r.want, PQ_FT_IDS, "^A");
  add_spec(r.want, PQ_FT_HDS, "^B");
  add_spec(r.want, PQ_FT_EXP, "^C");
  assert_int_equal(allowed(&r, "a.edu", NULL), LDM_CONF_OK);
  assert_int_equal(r.filter.nparts, 3);
  assert_int_equal(r.got->nspecs, 3);
  assert_true(ldm_conf_class_equal(r.got, r.want));
  pq_class_free(r.got);
  rules_end(&r);
}

static void test_allowed_class_partial(void **state) {
  /* A spec no gathered ALLOW feedtype meets is dropped from the reduced
   * class (step 4) while the others stay. */
  rules r;
  char text[256];

  rules_begin(&r, parse_ok(*state, "ALLOW NEXRAD3 ^b\\.edu$\n"
                                   "ALLOW WMO ^b\\.edu$ ^SA\n"));
  add_spec(r.want, PQ_FT_EXP, "^X");
  add_spec(r.want, PQ_FT_ANY, ".*");
  assert_int_equal(allowed(&r, "b.edu", NULL), LDM_CONF_OK);
  assert_int_equal(r.got->nspecs, 1);
  assert_int_equal(r.got->specs[0].feedtype, PQ_FT_NEXRAD3);
  assert_int_equal(r.filter.nparts, 1);
  ldm_conf_filter_format(&r.filter, text, sizeof text);
  assert_string_equal(text, "{{NEXRAD3, (.*)}}");
  /* The format is cut safely and reports the full length. */
  assert_int_equal(ldm_conf_filter_format(&r.filter, text, 5),
                   (int)strlen("{{NEXRAD3, (.*)}}"));
  assert_string_equal(text, "{{NE");
  pq_class_free(r.got);
  rules_end(&r);
}

static void test_allowed_class_maxhits(void **state) {
  /* LDM gathers at most 128 host-matching ALLOW entries for step 4; the
   * filter of step 3 looks at all of them. */
  size_t size = 64 * (LDM_CONF_MAX_HITS + 2);
  char *text = malloc(size);
  rules r;
  size_t n = 0;
  int i;

  assert_non_null(text);
  for (i = 0; i < LDM_CONF_MAX_HITS; i++)
    n += (size_t)snprintf(text + n, size - n, "ALLOW WMO ^h$ ^x%d\n", i);
  snprintf(text + n, size - n, "ALLOW EXP ^h$\n");
  rules_begin(&r, parse_ok(*state, text));
  add_spec(r.want, PQ_FT_EXP, ".*");
  assert_int_equal(allowed(&r, "h", NULL), LDM_CONF_OK);
  assert_int_equal(r.filter.nparts, 1);
  assert_int_equal(r.filter.parts[0].feedtype, PQ_FT_EXP);
  assert_int_equal(r.got->nspecs, 0);
  /* An emptied class is LDM's empty RECLASS: TS_ZERO..TS_ZERO. */
  assert_int_equal(pq_ts_cmp(r.got->from, PQ_TS_ZERO), 0);
  assert_int_equal(pq_ts_cmp(r.got->to, PQ_TS_ZERO), 0);
  pq_class_free(r.got);
  rules_end(&r);
  free(text);
}

static void test_filter_multibit(void **state) {
  /* A product with bits in two parts: the later part decides (LDM walks
   * its filter from the last component added). */
  rules r;

  rules_begin(&r, parse_ok(*state, "ALLOW IDS ^h$ ^A\n"
                                   "ALLOW HDS ^h$ ^B\n"));
  add_spec(r.want, PQ_FT_IDS, ".*");
  add_spec(r.want, PQ_FT_HDS, ".*");
  assert_int_equal(allowed(&r, "h", NULL), LDM_CONF_OK);
  assert_true(ldm_conf_filter_match(&r.filter, PQ_FT_IDS | PQ_FT_HDS, "B1"));
  assert_false(ldm_conf_filter_match(&r.filter, PQ_FT_IDS | PQ_FT_HDS, "A1"));
  assert_true(ldm_conf_filter_match(&r.filter, PQ_FT_IDS, "A1"));
  pq_class_free(r.got);
  rules_end(&r);
}

static void test_accepted_class(void **state) {
  rules r;

  rules_begin(&r, parse_ok(*state, "ACCEPT EXP ^TEST ^p\\.org$\n"
                                   "ACCEPT WMO ^SA ^p\\.org$\n"
                                   "ACCEPT NEXRAD3 .* ^other$\n"
                                   "ACCEPT ANY .* ^10\\.\n"));
  /* Each matching ACCEPT entry takes the first offered spec it meets, with
   * its own pattern (section 4.3). */
  add_spec(r.want, PQ_FT_IDS | PQ_FT_EXP, "^X");
  add_spec(r.want, PQ_FT_ANY, ".*");
  assert_int_equal(accepted(&r, "P.ORG", "192.0.2.1"), LDM_CONF_OK);
  assert_int_equal(r.got->nspecs, 2);
  assert_int_equal(r.got->specs[0].feedtype, PQ_FT_EXP);
  assert_string_equal(r.got->specs[0].pattern, "^TEST");
  assert_int_equal(r.got->specs[1].feedtype, PQ_FT_IDS);
  assert_string_equal(r.got->specs[1].pattern, "^SA");
  assert_int_equal(pq_ts_cmp(r.got->from, FROM), 0);
  assert_false(ldm_conf_class_equal(r.got, r.want));
  pq_class_free(r.got);

  /* By address; equal to the offer: the server replies OK. */
  want_again(&r);
  add_spec(r.want, PQ_FT_ANY, ".*");
  assert_int_equal(accepted(&r, NULL, "10.1.2.3"), LDM_CONF_OK);
  assert_true(ldm_conf_class_equal(r.got, r.want));
  pq_class_free(r.got);

  /* Nothing acceptable: AUTH_TOOWEAK. */
  assert_int_equal(accepted(&r, "nobody", "192.0.2.9"), LDM_CONF_EDENIED);
  assert_int_equal(r.got->nspecs, 0);
  want_again(&r);
  add_spec(r.want, PQ_FT_NEXRAD2, ".*");
  assert_int_equal(accepted(&r, "p.org", NULL), LDM_CONF_EDENIED);
  assert_int_equal(ldm_conf_accepted_class(r.conf, "p.org", NULL, NULL, r.got,
                                           r.err, sizeof r.err),
                   LDM_CONF_EINVAL);
  rules_end(&r);
}

static void test_accepted_class_full(void **state) {
  /* More specs than a class holds. */
  char text[64 * (PQ_CLASS_MAX + 1)];
  rules r;
  size_t n = 0;
  int i;

  for (i = 0; i <= PQ_CLASS_MAX; i++)
    n += (size_t)snprintf(text + n, sizeof text - n, "ACCEPT ANY ^p%d h\n", i);
  rules_begin(&r, parse_ok(*state, text));
  add_spec(r.want, PQ_FT_ANY, ".*");
  assert_int_equal(accepted(&r, "h", NULL), LDM_CONF_EFULL);
  assert_int_equal(r.got->nspecs, 0);
  rules_end(&r);
}

static void test_class_equal(void **state) {
  pq_class *a = new_class(FROM, PQ_TS_ENDT);
  pq_class *b = new_class(FROM, PQ_TS_ENDT);

  (void)state;
  assert_true(ldm_conf_class_equal(a, b));
  add_spec(a, PQ_FT_WMO, ".*");
  assert_false(ldm_conf_class_equal(a, b));
  add_spec(b, PQ_FT_WMO, ".*");
  assert_true(ldm_conf_class_equal(a, b));
  b->specs[0].feedtype = PQ_FT_IDS;
  assert_false(ldm_conf_class_equal(a, b));
  b->specs[0].feedtype = PQ_FT_WMO;
  b->to.usec = 0;
  assert_false(ldm_conf_class_equal(a, b));
  b->to = a->to;
  strcpy(b->specs[0].pattern, ".*.*");
  assert_false(ldm_conf_class_equal(a, b));
  free_class(a);
  free_class(b);
}

int ldmd_conf_access_tests(void) {
  const struct CMUnitTest tests[] = {
      SCRATCH_TEST(test_host_allowed),
      SCRATCH_TEST(test_allowed_class_reduce),
      SCRATCH_TEST(test_allowed_class_denied),
      SCRATCH_TEST(test_allowed_class_badpattern),
      SCRATCH_TEST(test_allowed_class_overlap),
      SCRATCH_TEST(test_allowed_class_partial),
      SCRATCH_TEST(test_allowed_class_maxhits),
      SCRATCH_TEST(test_filter_multibit),
      SCRATCH_TEST(test_accepted_class),
      SCRATCH_TEST(test_accepted_class_full),
      SCRATCH_TEST(test_ident_match),
      SCRATCH_TEST(test_ident_classes),
      cmocka_unit_test(test_class_equal),
  };

  return cmocka_run_group_tests_name("access rules", tests, NULL, NULL);
}
