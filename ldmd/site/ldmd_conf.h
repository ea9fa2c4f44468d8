/*
 * ldmd_conf.h - ldmd.conf: reading an LDM server's configuration file into
 * lists of entries, and the access rules those entries define for the server
 * (docs/protocol.md §14, §5 and §8).
 *
 * The file
 * --------
 * LDM users' files must work unchanged, so the lexical rules are LDM's, but
 * for one: an unquoted word in column 1 must be a keyword.
 *   - A keyword is recognised only in column 1, in any case: ALLOW, ACCEPT,
 *     EXEC, INCLUDE, REQUEST (also POLL or poll), RECEIVE, MULTICAST.  An
 *     indented keyword, or a longer word such as EXECUTE, is an ordinary
 *     string: usually the entry before it then has too many arguments (an
 *     error); when it does not, an indented keyword gets a warning.
 *   - Arguments are separated by spaces, tabs, form feeds and newlines, so
 *     an entry may continue on following indented lines.  An unquoted word
 *     in column 1 that is not a keyword is an error at its line (LDM takes
 *     it as more arguments of the entry above, so a misspelt REQEUST would
 *     silently lose its entry); a quoted string there continues the entry,
 *     as in LDM.  A carriage
 *     return is not white space (LDM's rule): in a DOS-format file it ends
 *     the last string of each line, which usually makes an entry fail; the
 *     message then says so.
 *   - An unquoted string runs to white space or a double quote; \" inside it
 *     is kept as the two characters.  A quoted string loses its quotes, a
 *     backslash in it makes the next character literal, and it may span
 *     lines.  No string may exceed LDM_CONF_MAX_TOKEN characters.
 *   - '#' at the start of a string begins a comment to the end of the line.
 *
 * Entries (the number of arguments is checked; a bad line is an error whose
 * message begins "<file>:<line>: "):
 *   ALLOW feedset [{ident}]hostERE [okERE [notERE]]
 *   ACCEPT feedset prodERE [{ident}]hostERE
 *   REQUEST feedset prodERE [{ident}]host[:port] [word]   (POLL: a synonym)
 *   EXEC "command"
 *   INCLUDE path
 *   RECEIVE (2, 5 or 6 arguments) and MULTICAST (2 to 9: LDM's versions
 *   disagree) are LDM-7 multicast: their arguments are counted, and they
 *   are otherwise ignored (with a warning), as by an LDM built without
 *   multicast.
 * Feedsets are feedtype expressions (pq_feedtype_parse).  Host EREs are
 * compiled REG_EXTENDED|REG_ICASE|REG_NOSUB; product EREs, OK and NOT EREs
 * are case-sensitive.  Like LDM, every ERE loses its leading ".*" while more
 * than two characters remain (a warning says so), and an empty host or
 * product ERE is an error.  So is an ERE whose repetitions are stacked or
 * nested so deeply ("a++++++++", "((a{99}){99}){99}", ".{1,5000}") that
 * glibc's regcomp would build a tree of tens of thousands of nodes or more
 * ("too complex"): it would take ldmd gigabytes and seconds.  Product EREs
 * must also fit a product class (PQ_PATTERN_MAX characters).
 *
 * REQUEST hosts are "name", "name:port", "a.b.c.d[:port]" or, as our
 * extension (LDM has only IPv4), an IPv6 literal in brackets "[::1]" or
 * "[::1]:38801".  The port is strtol base 0 (so 0x184 is 388), 1-65535; a
 * missing port is the default port (388, or the server's -P port given in
 * ldm_conf_options).  The optional fifth word is accepted and ignored, as
 * LDM does: PRIMARY and ALTERNATE are recorded in ldm_conf_request.word,
 * anything else also gives a warning.
 *
 * INCLUDE reads another file at that point of the entry order.  A relative
 * path is relative to the directory of the including file (LDM's rule), not
 * to the working directory.  An entry never continues across a file
 * boundary.  A file that includes itself, directly or not, and nesting
 * deeper than LDM_CONF_MAX_DEPTH are errors; the same file may be included
 * twice side by side.  Only regular files are read (a FIFO or device would
 * block or never end).
 *
 * Certificate identities (our extension; docs/security.md).  The host
 * field of ALLOW, ACCEPT and REQUEST may begin with "{items}", items
 * separated by commas, the rest of the field being the host ERE (ALLOW,
 * ACCEPT; empty: any host) or host[:port] (REQUEST):
 *   tls          the connection must be TLS
 *   cert         ... with a certificate that verifies against /tls/ca
 *   cn=ERE       ... whose subject CN matches ERE (case-insensitive)
 *   dns=ERE      ... with a SAN DNS name that matches ERE (likewise)
 *   sha256=HEX   ... whose public key (SubjectPublicKeyInfo, DER) has this
 *                SHA-256 (64 hex digits, colons allowed); a pin admits a
 *                self-signed certificate, never an expired one
 * Every item given must hold.  On a REQUEST any item means TLS to the
 * upstream, whose certificate must verify and name the host, unless cn=,
 * dns= or sha256= say what it must be instead.  An ERE here may not hold
 * ',' or '}'.  Old files parse as before: glibc's regcomp refuses a host
 * ERE that begins with '{' (REG_BADRPT), and no host name has one.
 *
 * EXEC commands are split shell-style with wordexp(3) at parse time, as LDM
 * does, so `ldmd -n` catches bad quoting; but command substitution ($(...)
 * or backquotes) is refused, since parsing a file must not run programs.
 *
 * What LDM does after parsing, and this module does too
 * ------------------------------------------------------
 * REQUESTs to the same host string and port whose product EREs are
 * byte-identical are reduced: the later one loses the feedtype bits of the
 * earlier ones, and is dropped when nothing remains.  Remaining REQUESTs are
 * grouped by identical (feedtype, ERE); in each group the first in file
 * order starts in primary mode and the others in alternate mode
 * (docs/protocol.md §10).  A reduced or dropped REQUEST, and a group of more
 * than two (where LDM's autoshift works badly), give warnings.
 *
 * Errors and warnings
 * -------------------
 * Nothing here logs or exits.  Parse errors come back as a code and a
 * message in the caller's buffer naming the file and line (and, for an
 * included file, " (included from <file>:<line>)" for each including file).
 * Warnings (reduced or dropped REQUESTs, EREs that lost a leading ".*",
 * ignored fields and entries, indented keywords) are kept in the parsed
 * configuration, each naming its file and line, for the
 * server to log.
 *
 * Threads and fork(): a parsed ldm_conf is read-only; every query function
 * is reentrant and may be used by many threads at once and in forked
 * children (which is how ldmd uses it: parse once, fork per connection).
 * Parsing and ldm_conf_free() are not async-signal-safe.
 */
#ifndef LDMD_SITE_LDMD_CONF_H
#define LDMD_SITE_LDMD_CONF_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pq/product.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LDM_CONF_DEFAULT_PORT 388     /**< LDM's well-known port */
#define LDM_CONF_MAX_TOKEN 1999       /**< LDM's longest string */
#define LDM_CONF_MAX_DEPTH 16         /**< INCLUDE nesting below the top file */
#define LDM_CONF_MAX_FILE (16u << 20) /**< bytes in one file */
/** LDM's MAXHITS: at most this many host-matching entries are used. */
#define LDM_CONF_MAX_HITS 128

/** Results.  ldm_conf_strerror() names each. */
enum ldm_conf_status {
  LDM_CONF_OK = 0,
  LDM_CONF_ESYNTAX = 1,  /**< a bad entry, string, INCLUDE cycle or depth */
  LDM_CONF_EIO = 2,      /**< a file cannot be opened or read */
  LDM_CONF_ENOMEM = 3,   /**< out of memory */
  LDM_CONF_EDENIED = 4,  /**< no entry lets this host have anything */
  LDM_CONF_EOVERLAP = 5, /**< two requested specs overlap in the filter */
  LDM_CONF_EPATTERN = 6, /**< a requested ERE does not compile */
  LDM_CONF_EFULL = 7,    /**< the result would exceed PQ_CLASS_MAX specs */
  LDM_CONF_EINVAL = 8    /**< a NULL or invalid argument */
};

/** Where an entry was written.  file points into ldm_conf.files. */
typedef struct ldm_conf_origin {
  const char *file; /**< path as opened (relative INCLUDEs joined) */
  unsigned line;    /**< line of the entry's keyword, from 1 */
} ldm_conf_origin;

/** The "{...}" of an entry's host field (see above). */
typedef struct ldm_conf_ident {
  bool given;         /**< there is one: the connection must be TLS */
  bool cert;          /**< a verified certificate is required */
  char *cn_ere;       /**< or NULL */
  regex_t cn_re;      /**< REG_EXTENDED|REG_ICASE|REG_NOSUB */
  char *dns_ere;      /**< or NULL */
  regex_t dns_re;     /**< likewise */
  bool pin;           /**< sha256 is given */
  uint8_t sha256[32]; /**< SHA-256 of the peer's SubjectPublicKeyInfo */
} ldm_conf_ident;

/** What a TLS handshake showed of a peer, for matching identities (the
 *  server fills it from the connection; NULL or tls false: plain). */
typedef struct ldm_conf_peer_id {
  bool tls;               /**< the connection is TLS */
  bool cert;              /**< the peer showed a certificate */
  bool verified;          /**< it verifies against /tls/ca and is in date */
  bool pin_ok;            /**< no fault but an unknown issuer (for a pin) */
  const char *cn;         /**< subject CN, or NULL */
  const char *const *dns; /**< SAN DNS names */
  size_t ndns;
  uint8_t spki_sha256[32];
} ldm_conf_peer_id;

/** ALLOW feedset hostERE [okERE [notERE]]: what a downstream may request. */
typedef struct ldm_conf_allow {
  ldm_conf_origin where;
  ldm_conf_ident id; /**< "{...}" before the host ERE, if any */
  uint32_t feedtype; /**< the feedset, evaluated */
  char *host_ere;    /**< as compiled (leading ".*" stripped) */
  regex_t host_re;   /**< REG_EXTENDED|REG_ICASE|REG_NOSUB */
  char *ok_ere;      /**< as compiled; ".*" when not given */
  bool ok_all;       /**< ok_ere is ".*": matches without regexec */
  regex_t ok_re;     /**< REG_EXTENDED|REG_NOSUB; unused when ok_all */
  char *not_ere;     /**< as compiled, or NULL: no NOT test */
  regex_t not_re;    /**< valid only when not_ere != NULL */
} ldm_conf_allow;

/** ACCEPT feedset prodERE hostERE: what an upstream may push (HIYA). */
typedef struct ldm_conf_accept {
  ldm_conf_origin where;
  ldm_conf_ident id; /**< "{...}" before the host ERE, if any */
  uint32_t feedtype;
  char *pattern;   /**< prodERE as written: sent back in RECLASS */
  char *host_ere;  /**< as compiled (leading ".*" stripped) */
  regex_t host_re; /**< REG_EXTENDED|REG_ICASE|REG_NOSUB */
} ldm_conf_accept;

/** The optional fifth word of a REQUEST (ignored for the mode, as LDM). */
enum ldm_conf_word {
  LDM_CONF_WORD_NONE = 0,  /**< no fifth word */
  LDM_CONF_WORD_PRIMARY,   /**< "PRIMARY", any case */
  LDM_CONF_WORD_ALTERNATE, /**< "ALTERNATE", any case */
  LDM_CONF_WORD_OTHER      /**< anything else (a warning says so) */
};

/** REQUEST feedset prodERE host[:port] [word]: one requester process. */
typedef struct ldm_conf_request {
  ldm_conf_origin where;
  ldm_conf_ident id; /**< "{...}" before host[:port]: TLS to the upstream */
  uint32_t feedtype; /**< after reduction by earlier REQUESTs; never 0 */
  uint32_t written;  /**< the feedset as written */
  char *pattern;     /**< prodERE as written (pq_class_add strips ".*") */
  char *host;        /**< name or address, without brackets or port */
  bool ipv6;         /**< host was a bracketed IPv6 literal */
  unsigned port;     /**< 1-65535 */
  bool port_given;   /**< false: port is the default port */
  enum ldm_conf_word word;
  bool primary; /**< initial mode: first of its group (docs/protocol.md §10) */
  unsigned group;      /**< index of its (feedtype, pattern) group, from 0 */
  unsigned group_size; /**< LDM's feedCount (RECEIVE not counted) */
} ldm_conf_request;

/** EXEC "command": a program ldmd starts. */
typedef struct ldm_conf_exec {
  ldm_conf_origin where;
  char *command; /**< as written */
  size_t argc;   /**< >= 1 */
  char **argv;   /**< wordexp(3) words, argv[argc] == NULL */
} ldm_conf_exec;

/**
 * A parsed configuration: every list in file order (INCLUDEd entries where
 * the INCLUDE was).  Read-only for users; free with ldm_conf_free().
 */
typedef struct ldm_conf {
  ldm_conf_allow *allows;
  size_t nallows;
  ldm_conf_accept *accepts;
  size_t naccepts;
  ldm_conf_request *requests; /**< only the REQUESTs still in effect */
  size_t nrequests;
  size_t nrequest_entries; /**< REQUEST lines, including dropped ones */
  ldm_conf_exec *execs;
  size_t nexecs;
  size_t nignored; /**< RECEIVE and MULTICAST entries (ignored) */
  char **files;    /**< every file read, the top one first */
  size_t nfiles;
  char **warnings; /**< "<file>:<line>: <text>", for the server to log */
  size_t nwarnings;
  unsigned default_port; /**< the port of REQUESTs without one */
} ldm_conf;

/** Parse options.  Zero-initialised means the defaults. */
typedef struct ldm_conf_options {
  unsigned default_port; /**< 0: LDM_CONF_DEFAULT_PORT; else ldmd -P */
} ldm_conf_options;

/**
 * Read a configuration file and everything it INCLUDEs.
 * @param path    the top file; a relative path is relative to the working
 *                directory (INCLUDEs in it are relative to its directory)
 * @param out     set to a new configuration on success, NULL on failure
 * @param err, errlen  on failure, a message: "<file>:<line>: <what>" for an
 *                error in the content, "cannot open <file>: <strerror>"
 *                for the top file (may be NULL, 0)
 * @return LDM_CONF_OK, LDM_CONF_ESYNTAX, LDM_CONF_EIO, LDM_CONF_ENOMEM
 *         or LDM_CONF_EINVAL (NULL path or out)
 */
int ldm_conf_parse(const char *path, ldm_conf **out, char *err, size_t errlen);

/** ldm_conf_parse() with options (opts may be NULL). */
int ldm_conf_parse_opts(const char *path, const ldm_conf_options *opts,
                        ldm_conf **out, char *err, size_t errlen);

/** Free a configuration (NULL is fine). */
void ldm_conf_free(ldm_conf *conf);

/** Message for an enum ldm_conf_status value ("unknown error" else). */
const char *ldm_conf_strerror(int code);

/**
 * LDM's "effectively empty" test: true when the file has no EXEC, REQUEST
 * (even one dropped by reduction), ALLOW or ACCEPT entry.  ldmd then fails.
 */
bool ldm_conf_is_empty(const ldm_conf *conf);

/** True when the server must listen: there is an ALLOW or ACCEPT entry. */
bool ldm_conf_needs_listener(const ldm_conf *conf);

/** The first ALLOW or ACCEPT entry (requests false) or REQUEST (true)
 *  that asks for TLS ("{...}"), or NULL: ldmd refuses to start with one
 *  while TLS is not configured for it. */
const ldm_conf_origin *ldm_conf_tls_entry(const ldm_conf *conf, bool requests);

/**
 * Does a TLS peer meet an entry's "{...}"?  True when id->given is false
 * (the entry is a plain host rule, for plain and TLS peers alike).
 * Otherwise peer must be TLS, and every item must hold: cert, cn= and dns=
 * need peer->verified; sha256= needs a certificate with that key and
 * peer->pin_ok.
 */
bool ldm_conf_ident_match(const ldm_conf_ident *id,
                          const ldm_conf_peer_id *peer);

/*
 * Access rules (implemented in ldmd_access.c).
 *
 * Host identity.  Every query below takes the peer's reverse-DNS name and
 * its address text, and an entry's host ERE matches when it matches either
 * (address first).  Either may be NULL: not known (yet).  An IPv4 address is
 * its dotted quad; an IPv4-mapped IPv6 address ("::ffff:1.2.3.4") is
 * matched as its dotted quad, so dual-stack listeners see what LDM's IPv4
 * listener saw; any other IPv6 address is matched as its text.
 */

/**
 * The access check at accept time (docs/protocol.md §5.1): may this peer
 * connect at all?  True when the host ERE of some ALLOW or ACCEPT entry
 * matches.  LDM tries the address first and looks the name up only when
 * that fails: call with name NULL first, and again with the name only if
 * the answer was false.
 */
bool ldm_conf_host_allowed(const ldm_conf *conf, const char *name,
                           const char *ip);

/** ldm_conf_host_allowed() for a peer whose TLS identity is peer (NULL:
 *  a plain connection, which no entry with "{...}" matches). */
bool ldm_conf_host_allowed_peer(const ldm_conf *conf, const char *name,
                                const char *ip, const ldm_conf_peer_id *peer);

/** One part of an upstream filter: products of these feedtypes are sent
 *  iff their ident matches the ALLOW entry's OK ERE and not its NOT ERE. */
typedef struct ldm_conf_filter_part {
  uint32_t feedtype;           /**< disjoint from every other part's */
  const ldm_conf_allow *allow; /**< borrowed from the configuration */
} ldm_conf_filter_part;

/** An upstream filter (docs/protocol.md §5.3).  Borrows from the ldm_conf it
 *  was made from, which must outlive it.  Needs no freeing. */
typedef struct ldm_conf_filter {
  unsigned nparts;
  ldm_conf_filter_part parts[PQ_CLASS_MAX];
} ldm_conf_filter;

/**
 * What a downstream may have (FEEDME and NOTIFYME; docs/protocol.md §5.3).
 *
 * Step 3, the filter: for each spec of want, in order, the first ALLOW
 * entry (file order) whose feedtype intersects the spec's and whose host
 * ERE matches gives a part {spec feedtype & entry feedtype, entry}.
 * Step 4, the reduction: the feedtypes of the ALLOW entries whose host ERE
 * matches are gathered in order (at most LDM_CONF_MAX_HITS); each spec's
 * feedtype becomes its intersection with the first gathered feedtype that
 * intersects it, and specs left with none are dropped.  Patterns and the
 * time window are copied from want.  When no spec remains, allowed's window
 * is TS_ZERO..TS_ZERO (the empty RECLASS LDM sends).
 *
 * The caller (the server) has already compiled want and removed the
 * signature spec and NONE specs (docs/protocol.md §5.2).  It replies RECLASS
 * with allowed when !ldm_conf_class_equal(allowed, want), OK otherwise.
 *
 * @param want     the requested class
 * @param allowed  always initialised; on LDM_CONF_OK the reduced class,
 *                 else empty.  The caller pq_class_free()s it in any case.
 * @param filter   always initialised; on LDM_CONF_OK the upstream filter
 *                 (use ldm_conf_filter_match() on each product)
 * @param err, errlen  a message on failure (may be NULL, 0)
 * @return LDM_CONF_OK;
 *         LDM_CONF_EDENIED: the filter is empty ("upstream filter prevents
 *           data-transfer": LDM replies AUTH_TOOWEAK);
 *         LDM_CONF_EOVERLAP: two parts would overlap ("feedtype X overlaps
 *           with feedtype Y": LDM replies SYSTEM_ERR);
 *         LDM_CONF_EPATTERN: a pattern of want does not compile (LDM
 *           replies BADPATTERN);
 *         LDM_CONF_ENOMEM, LDM_CONF_EINVAL.
 */
int ldm_conf_allowed_class(const ldm_conf *conf, const char *name,
                           const char *ip, const pq_class *want,
                           pq_class *allowed, ldm_conf_filter *filter,
                           char *err, size_t errlen);

/** ldm_conf_allowed_class() for a peer of TLS identity peer (NULL: plain):
 *  an ALLOW entry with "{...}" matches only when its identity does. */
int ldm_conf_allowed_class_peer(const ldm_conf *conf, const char *name,
                                const char *ip, const ldm_conf_peer_id *peer,
                                const pq_class *want, pq_class *allowed,
                                ldm_conf_filter *filter, char *err,
                                size_t errlen);

/**
 * Does the upstream filter let this product through?  The parts are tried
 * last to first, as LDM does, and the first whose feedtype intersects the
 * product's decides: its OK ERE must match the ident and its NOT ERE (if
 * any) must not.  No intersecting part: false.
 */
bool ldm_conf_filter_match(const ldm_conf_filter *filter, uint32_t feedtype,
                           const char *ident);

/**
 * LDM's text of an upstream filter, for the "topo:" log line:
 * "{{FEEDTYPE, (okERE)}, {FEEDTYPE, (okERE) - (notERE)}}", parts last to
 * first.  @return as snprintf (the full length; always NUL-terminated when
 * len > 0).
 */
int ldm_conf_filter_format(const ldm_conf_filter *filter, char *buf,
                           size_t len);

/**
 * What an upstream may push (HIYA; docs/protocol.md §8).  For each ACCEPT entry
 * whose host ERE matches, in file order (at most LDM_CONF_MAX_HITS), the
 * first offered spec whose feedtype intersects the entry's gives a spec
 * {offered feedtype & entry feedtype, the entry's pattern}.  The window is
 * copied from offer.  Entries with no intersecting spec give nothing.
 *
 * @param accepted always initialised; pq_class_free() it in any case.  On
 *                 LDM_CONF_OK the acceptable class, never empty.  The
 *                 server replies OK when ldm_conf_class_equal(accepted,
 *                 offer), RECLASS with it otherwise.
 * @return LDM_CONF_OK; LDM_CONF_EDENIED when nothing is acceptable (LDM
 *         replies AUTH_TOOWEAK and closes); LDM_CONF_EFULL when more than
 *         PQ_CLASS_MAX specs would result; LDM_CONF_EPATTERN, EINVAL.
 */
int ldm_conf_accepted_class(const ldm_conf *conf, const char *name,
                            const char *ip, const pq_class *offer,
                            pq_class *accepted, char *err, size_t errlen);

/** ldm_conf_accepted_class() for a peer of TLS identity peer (NULL:
 *  plain): an ACCEPT entry with "{...}" matches only when its identity
 *  does. */
int ldm_conf_accepted_class_peer(const ldm_conf *conf, const char *name,
                                 const char *ip, const ldm_conf_peer_id *peer,
                                 const pq_class *offer, pq_class *accepted,
                                 char *err, size_t errlen);

/** LDM's class equality: same from, to, and specs in the same order with
 *  the same feedtype and byte-identical pattern. */
bool ldm_conf_class_equal(const pq_class *a, const pq_class *b);

#ifdef __cplusplus
}
#endif
#endif /* LDMD_SITE_LDMD_CONF_H */
