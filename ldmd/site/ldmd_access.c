/*
 * ldmd_access.c - the LDM access semantics of a parsed ldmd.conf: who may
 * connect at all (docs/protocol.md §5.1), what a downstream may have and
 * through which upstream filter its products pass (ALLOW, docs/protocol.md
 * §5.3), and what an upstream may push (ACCEPT, docs/protocol.md §8), with
 * the certificate identities of our extension ("{...}", docs/security.md)
 * matched against what a TLS handshake showed.  These
 * are the rules users' files rely on, matched as LDM matches them; they
 * live apart from the parser (ldmd_conf.c) so each can be read and tested
 * on its own, and they only read the configuration it built.
 *
 * Nothing here logs, exits or changes the configuration: every function is
 * reentrant, and failures come back as a code and a message in the
 * caller's buffer.
 */
#include "ldmd/site/ldmd_conf.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ldmd/site/ldmd_conf_internal.h"

/* An IPv4-mapped IPv6 address is matched as its dotted quad. */
static const char *address_text(const char *ip) {
  if (strncasecmp(ip, "::ffff:", 7) == 0 && strchr(ip + 7, '.') != NULL &&
      strchr(ip + 7, ':') == NULL)
    return ip + 7;
  return ip;
}

static bool host_matches(const regex_t *re, const char *name, const char *ip) {
  if (ip != NULL && regexec(re, address_text(ip), 0, NULL, 0) == 0)
    return true;
  return name != NULL && regexec(re, name, 0, NULL, 0) == 0;
}

static bool any_dns_matches(const regex_t *re, const ldm_conf_peer_id *peer) {
  size_t i;

  for (i = 0; i < peer->ndns; i++)
    if (peer->dns[i] != NULL && regexec(re, peer->dns[i], 0, NULL, 0) == 0)
      return true;
  return false;
}

bool ldm_conf_ident_match(const ldm_conf_ident *id,
                          const ldm_conf_peer_id *peer) {
  if (!id->given)
    return true;
  if (peer == NULL || !peer->tls)
    return false;
  if (id->pin && (!peer->cert || !peer->pin_ok ||
                  memcmp(id->sha256, peer->spki_sha256, 32) != 0))
    return false;
  if ((id->cert || id->cn_ere != NULL || id->dns_ere != NULL) &&
      !peer->verified)
    return false;
  if (id->cn_ere != NULL &&
      (peer->cn == NULL || regexec(&id->cn_re, peer->cn, 0, NULL, 0) != 0))
    return false;
  return id->dns_ere == NULL || any_dns_matches(&id->dns_re, peer);
}

/* An entry matches when its identity (if any) and its host ERE do. */
static bool entry_matches(const ldm_conf_ident *id, const regex_t *re,
                          const char *name, const char *ip,
                          const ldm_conf_peer_id *peer) {
  return ldm_conf_ident_match(id, peer) && host_matches(re, name, ip);
}

bool ldm_conf_host_allowed_peer(const ldm_conf *conf, const char *name,
                                const char *ip, const ldm_conf_peer_id *peer) {
  size_t i;

  if (conf == NULL)
    return false;
  for (i = 0; i < conf->nallows; i++)
    if (entry_matches(&conf->allows[i].id, &conf->allows[i].host_re, name, ip,
                      peer))
      return true;
  for (i = 0; i < conf->naccepts; i++)
    if (entry_matches(&conf->accepts[i].id, &conf->accepts[i].host_re, name, ip,
                      peer))
      return true;
  return false;
}

bool ldm_conf_host_allowed(const ldm_conf *conf, const char *name,
                           const char *ip) {
  return ldm_conf_host_allowed_peer(conf, name, ip, NULL);
}

static const char *peer_text(const char *name, const char *ip, char *buf,
                             size_t len) {
  char b1[SHOW_LEN], b2[SHOW_LEN];

  snprintf(buf, len, "%s [%s]", name != NULL ? show(name, b1) : "?",
           ip != NULL ? show(ip, b2) : "?");
  return buf;
}

/* Which ALLOW entries match the peer, computed once: 0 no, 1 yes. */
static unsigned char *allow_hits(const ldm_conf *conf, const char *name,
                                 const char *ip, const ldm_conf_peer_id *peer) {
  unsigned char *hit = calloc(conf->nallows + 1, 1);

  if (hit != NULL) {
    size_t i;

    for (i = 0; i < conf->nallows; i++)
      hit[i] = entry_matches(&conf->allows[i].id, &conf->allows[i].host_re,
                             name, ip, peer);
  }
  return hit;
}

/* docs/protocol.md §5.3, item 1: one filter part per spec, from the first ALLOW
 * entry that matches the host and shares a feedtype; parts must be disjoint. */
static int build_filter(const ldm_conf *conf, const unsigned char *hit,
                        const pq_class *want, ldm_conf_filter *filter,
                        char *err, size_t errlen) {
  char f1[FT_LEN], f2[FT_LEN];
  unsigned i, k;
  size_t j;

  for (i = 0; i < want->nspecs; i++) {
    for (j = 0; j < conf->nallows; j++) {
      uint32_t ft = conf->allows[j].feedtype & want->specs[i].feedtype;

      if (ft == PQ_FT_NONE || !hit[j])
        continue;
      for (k = 0; k < filter->nparts; k++)
        if (filter->parts[k].feedtype & ft) {
          set_err(err, errlen, "feedtype %s overlaps with feedtype %s",
                  ft_text(ft, f1), ft_text(filter->parts[k].feedtype, f2));
          filter->nparts = 0;
          return LDM_CONF_EOVERLAP;
        }
      filter->parts[filter->nparts].feedtype = ft;
      filter->parts[filter->nparts].allow = &conf->allows[j];
      filter->nparts++;
      break; /* the first matching entry controls */
    }
  }
  return LDM_CONF_OK;
}

/* docs/protocol.md §5.3, item 2: each spec's feedtype meets the first gathered
 * ALLOW feedtype it intersects; specs with none left are dropped. */
static int reduce_class(const ldm_conf *conf, const unsigned char *hit,
                        const pq_class *want, pq_class *allowed, char *err,
                        size_t errlen) {
  char msg[ERE_ERRLEN], b[SHOW_LEN];
  unsigned i;

  pq_class_init(allowed, want->from, want->to);
  for (i = 0; i < want->nspecs; i++) {
    const pq_spec *spec = &want->specs[i];
    uint32_t ft = PQ_FT_NONE;
    size_t j, nhits = 0;
    int rc;

    for (j = 0; j < conf->nallows && nhits < LDM_CONF_MAX_HITS; j++) {
      if (!hit[j])
        continue;
      nhits++;
      ft = spec->feedtype & conf->allows[j].feedtype;
      if (ft != PQ_FT_NONE)
        break;
    }
    if (ft == PQ_FT_NONE)
      continue;
    rc = pq_class_add(allowed, ft, spec->pattern, msg, sizeof msg);
    if (rc != 0) {
      set_err(err, errlen, "bad pattern \"%s\": %s", show(spec->pattern, b),
              rc == PQ_CLASS_EPATTERN ? msg : "too long");
      pq_class_free(allowed);
      pq_class_init(allowed, PQ_TS_ZERO, PQ_TS_ZERO);
      return LDM_CONF_EPATTERN;
    }
  }
  if (allowed->nspecs == 0)
    pq_class_init(allowed, PQ_TS_ZERO, PQ_TS_ZERO);
  return LDM_CONF_OK;
}

int ldm_conf_allowed_class(const ldm_conf *conf, const char *name,
                           const char *ip, const pq_class *want,
                           pq_class *allowed, ldm_conf_filter *filter,
                           char *err, size_t errlen) {
  return ldm_conf_allowed_class_peer(conf, name, ip, NULL, want, allowed,
                                     filter, err, errlen);
}

int ldm_conf_allowed_class_peer(const ldm_conf *conf, const char *name,
                                const char *ip, const ldm_conf_peer_id *id,
                                const pq_class *want, pq_class *allowed,
                                ldm_conf_filter *filter, char *err,
                                size_t errlen) {
  unsigned char *hit;
  int rc;

  if (allowed != NULL)
    pq_class_init(allowed, PQ_TS_ZERO, PQ_TS_ZERO);
  if (filter != NULL)
    filter->nparts = 0;
  if (conf == NULL || want == NULL || allowed == NULL || filter == NULL) {
    set_err(err, errlen, "ldm_conf_allowed_class: NULL argument");
    return LDM_CONF_EINVAL;
  }
  set_err(err, errlen, "%s", "");
  hit = allow_hits(conf, name, ip, id);
  if (hit == NULL) {
    set_err(err, errlen, "out of memory");
    return LDM_CONF_ENOMEM;
  }
  rc = build_filter(conf, hit, want, filter, err, errlen);
  if (rc == LDM_CONF_OK && filter->nparts == 0) {
    char peer[2 * SHOW_LEN + 8];

    set_err(err, errlen,
            "upstream filter prevents data-transfer: no ALLOW entry gives "
            "%s any requested feedtype",
            peer_text(name, ip, peer, sizeof peer));
    rc = LDM_CONF_EDENIED;
  }
  if (rc == LDM_CONF_OK)
    rc = reduce_class(conf, hit, want, allowed, err, errlen);
  if (rc != LDM_CONF_OK)
    filter->nparts = 0;
  free(hit);
  return rc;
}

bool ldm_conf_filter_match(const ldm_conf_filter *filter, uint32_t feedtype,
                           const char *ident) {
  unsigned i;

  for (i = filter->nparts; i-- > 0;) {
    const ldm_conf_allow *a = filter->parts[i].allow;

    if ((filter->parts[i].feedtype & feedtype) == 0)
      continue;
    if (!a->ok_all && regexec(&a->ok_re, ident, 0, NULL, 0) != 0)
      return false;
    return a->not_ere == NULL || regexec(&a->not_re, ident, 0, NULL, 0) != 0;
  }
  return false;
}

int ldm_conf_filter_format(const ldm_conf_filter *filter, char *buf,
                           size_t len) {
  sbuf sb = sb_over(buf, len);
  char f[FT_LEN];
  unsigned i;

  sb_printf(&sb, "{");
  for (i = filter->nparts; i-- > 0;) {
    const ldm_conf_allow *a = filter->parts[i].allow;

    sb_printf(&sb, "%s{%s, (%s)", i + 1 == filter->nparts ? "" : ", ",
              ft_text(filter->parts[i].feedtype, f), a->ok_ere);
    if (a->not_ere != NULL)
      sb_printf(&sb, " - (%s)", a->not_ere);
    sb_printf(&sb, "}");
  }
  sb_printf(&sb, "}");
  return sb.want > (size_t)INT_MAX ? INT_MAX : (int)sb.want;
}

/* The first offered feedtype that meets the ACCEPT entry's, intersected. */
static uint32_t offered_part(const pq_class *offer, uint32_t ft) {
  unsigned j;

  for (j = 0; j < offer->nspecs; j++)
    if ((offer->specs[j].feedtype & ft) != 0)
      return offer->specs[j].feedtype & ft;
  return PQ_FT_NONE;
}

static int accept_fail(pq_class *accepted, int rc) {
  pq_class_free(accepted);
  pq_class_init(accepted, PQ_TS_ZERO, PQ_TS_ZERO);
  return rc;
}

int ldm_conf_accepted_class(const ldm_conf *conf, const char *name,
                            const char *ip, const pq_class *offer,
                            pq_class *accepted, char *err, size_t errlen) {
  return ldm_conf_accepted_class_peer(conf, name, ip, NULL, offer, accepted,
                                      err, errlen);
}

int ldm_conf_accepted_class_peer(const ldm_conf *conf, const char *name,
                                 const char *ip, const ldm_conf_peer_id *id,
                                 const pq_class *offer, pq_class *accepted,
                                 char *err, size_t errlen) {
  char msg[ERE_ERRLEN], peer[2 * SHOW_LEN + 8], b[SHOW_LEN];
  size_t i, nhits = 0;

  if (accepted != NULL)
    pq_class_init(accepted, PQ_TS_ZERO, PQ_TS_ZERO);
  if (conf == NULL || offer == NULL || accepted == NULL) {
    set_err(err, errlen, "ldm_conf_accepted_class: NULL argument");
    return LDM_CONF_EINVAL;
  }
  set_err(err, errlen, "%s", "");
  pq_class_init(accepted, offer->from, offer->to);
  for (i = 0; i < conf->naccepts && nhits < LDM_CONF_MAX_HITS; i++) {
    const ldm_conf_accept *a = &conf->accepts[i];
    uint32_t ft;
    int rc;

    if (!entry_matches(&a->id, &a->host_re, name, ip, id))
      continue;
    nhits++;
    ft = offered_part(offer, a->feedtype);
    if (ft == PQ_FT_NONE)
      continue;
    rc = pq_class_add(accepted, ft, a->pattern, msg, sizeof msg);
    if (rc == PQ_CLASS_EFULL) {
      set_err(err, errlen, "ACCEPT entries give %s more than %d specs",
              peer_text(name, ip, peer, sizeof peer), PQ_CLASS_MAX);
      return accept_fail(accepted, LDM_CONF_EFULL);
    }
    if (rc != 0) {
      set_err(err, errlen, "%s:%u: bad ACCEPT pattern \"%s\": %s",
              a->where.file, a->where.line, show(a->pattern, b), msg);
      return accept_fail(accepted, LDM_CONF_EPATTERN);
    }
  }
  if (accepted->nspecs == 0) {
    set_err(err, errlen, "no ACCEPT entry takes what %s offers",
            peer_text(name, ip, peer, sizeof peer));
    return accept_fail(accepted, LDM_CONF_EDENIED);
  }
  return LDM_CONF_OK;
}

bool ldm_conf_class_equal(const pq_class *a, const pq_class *b) {
  unsigned i;

  if (pq_ts_cmp(a->from, b->from) != 0 || pq_ts_cmp(a->to, b->to) != 0 ||
      a->nspecs != b->nspecs)
    return false;
  for (i = 0; i < a->nspecs; i++)
    if (a->specs[i].feedtype != b->specs[i].feedtype ||
        strcmp(a->specs[i].pattern, b->specs[i].pattern) != 0)
      return false;
  return true;
}
