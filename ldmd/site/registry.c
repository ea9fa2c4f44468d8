/*
 * registry.c - the LDM registry: site parameters kept as nested elements of
 * an XML file, each key path /a/b/c the text of <registry><a><b><c>.  This
 * file owns where the file is, reading it (libxml2, no network, errors with
 * their line), the built-in defaults and types of LDM's keys and of ldmd's
 * own (the one place they are written), the value parsers (sizes,
 * integers, booleans), and writing: under an exclusive fcntl lock on the
 * registry file, re-read, change, written whole to a temporary file in the
 * same directory and renamed into place, so a reader sees the old file or
 * the new one and two writers never lose each other's change.
 *
 * A handle holds the document as it was read; sets and removes update it
 * from the file as re-read under the lock.  The library never logs: errors
 * are messages in the handle (or the caller's buffer) and codes.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>
#include <libxml/xmlstring.h>

#include "ldmd/site/registry.h"

#define REG_ERRLEN 512
/* A registry is a few kB: refuse anything silly before reading it. */
#define REG_MAX_FILE (16u << 20)
/* Reopens allowed while other writers keep replacing the file. */
#define REG_LOCK_TRIES 100

struct ldm_registry {
  char *path;
  xmlDocPtr doc; /* NULL: no file, or an empty one */
  char err[REG_ERRLEN];
};

/* ---- the built-in keys: defaults and the types a set must respect ---- */

enum reg_type {
  RT_STRING,   /* anything */
  RT_HOSTNAME, /* a non-empty string; default gethostname() when read */
  RT_UINT,     /* unsigned integer within [min, max] */
  RT_SIZE,     /* ldm_parse_size() */
  RT_BOOL,     /* parse_bool() */
  RT_SLOTS,    /* "default" or an unsigned integer > 0 */
  RT_CHOICE,   /* one of the strings in choices */
};

static const char *const reconciliation_modes[] = {
    "do nothing", "increase queue", "decrease maximum latency", NULL};

struct reg_default {
  const char *key;
  const char *value; /* a leading "$LDMHOME" is expanded when read */
  enum reg_type type;
  uint64_t min, max; /* RT_UINT only */
  const char *const *choices;
};

static const struct reg_default defaults[] = {
    {REG_HOSTNAME, NULL, RT_HOSTNAME, 0, 0, NULL},
    {REG_QUEUE_PATH, "/dev/shm/ldm.pq", RT_STRING, 0, 0, NULL},
    {REG_QUEUE_SIZE, "500M", RT_SIZE, 0, 0, NULL},
    {REG_QUEUE_SLOTS, "default", RT_SLOTS, 0, 0, NULL},
    {REG_LDMD_CONFIG, "$LDMHOME/etc/ldmd.conf", RT_STRING, 0, 0, NULL},
    {REG_IP_ADDR, "0.0.0.0", RT_STRING, 0, 0, NULL},
    {REG_PORT, "388", RT_UINT, 1, 65535, NULL},
    {REG_MAX_CLIENTS, "256", RT_UINT, 0, UINT32_MAX, NULL},
    {REG_MAX_LATENCY, "3600", RT_UINT, 0, UINT32_MAX, NULL},
    {REG_TIME_OFFSET, "3600", RT_UINT, 0, UINT32_MAX, NULL},
    {REG_ANTI_DOS, "TRUE", RT_BOOL, 0, 0, NULL},
    {REG_PQACT_CONFIG, "$LDMHOME/etc/pqact.conf", RT_STRING, 0, 0, NULL},
    {REG_PQACT_DATADIR, "$LDMHOME/var/data", RT_STRING, 0, 0, NULL},
    {REG_LOG_FILE, "$LDMHOME/var/logs/ldmd.log", RT_STRING, 0, 0, NULL},
    {REG_LOG_COUNT, "7", RT_UINT, 0, UINT32_MAX, NULL},
    {REG_LOG_ROTATE, "1", RT_BOOL, 0, 0, NULL},
    {REG_INSERTION_CHECK, "300", RT_UINT, 0, UINT32_MAX, NULL},
    {REG_RECONCILIATION, "do nothing", RT_CHOICE, 0, 0, reconciliation_modes},
    {REG_DELETE_INFO_FILES, "0", RT_BOOL, 0, 0, NULL},
    /* ldmd's own keys (ldmd.8): LDM's values where LDM has one. */
    {REG_INTERVAL, "30", RT_UINT, 1, REG_SECONDS_MAX, NULL},
    {REG_RESTART_MIN, "1", RT_UINT, 1, REG_SECONDS_MAX, NULL},
    {REG_RESTART_MAX, "60", RT_UINT, 1, REG_SECONDS_MAX, NULL},
    {REG_SILENCE_LIMIT, "300", RT_UINT, 1, REG_SECONDS_MAX, NULL},
    {REG_RETRY_MIN, "1", RT_UINT, 1, REG_SECONDS_MAX, NULL},
    {REG_RETRY_MAX, "60", RT_UINT, 1, REG_SECONDS_MAX, NULL},
    {REG_AUTOSHIFT, "60", RT_UINT, 1, REG_SECONDS_MAX, NULL},
    {REG_STATE_DIR, "", RT_STRING, 0, 0, NULL}, /* "": the queue's directory */
};
#define NDEFAULTS (sizeof defaults / sizeof defaults[0])

static const struct reg_default *find_default(const char *key) {
  for (size_t i = 0; i < NDEFAULTS; i++)
    if (strcmp(defaults[i].key, key) == 0)
      return &defaults[i];
  return NULL;
}

/* ---- small helpers ---- */

static int failv(char *buf, size_t len, int code, const char *fmt, va_list ap) {
  if (buf != NULL && len > 0)
    (void)vsnprintf(buf, len, fmt, ap);
  return code;
}

/* Put a message in buf (may be NULL) and return code. */
__attribute__((format(printf, 4, 5))) static int
fail(char *buf, size_t len, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  code = failv(buf, len, code, fmt, ap);
  va_end(ap);
  return code;
}

/* The same, into the handle's message. */
__attribute__((format(printf, 3, 4))) static int
reg_fail(ldm_registry *reg, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  code = failv(reg->err, sizeof reg->err, code, fmt, ap);
  va_end(ap);
  return code;
}

static const char *env_nonempty(const char *name) {
  const char *v = getenv(name);
  return v != NULL && *v != '\0' ? v : NULL;
}

static const char *ldm_home(void) {
  const char *home = env_nonempty("LDMHOME");
  return home != NULL ? home : LDM_HOME_DEFAULT;
}

static bool is_name_char(int c, bool first) {
  if (isalpha(c) || c == '_')
    return true;
  return !first && (isdigit(c) || c == '-' || c == '.');
}

/* A key path: "/" then names ([A-Za-z_][A-Za-z0-9_.-]*) separated by single
 * slashes; "/" itself only if allow_root. */
static bool key_valid(const char *key, bool allow_root) {
  if (key == NULL || key[0] != '/')
    return false;
  if (key[1] == '\0')
    return allow_root;
  const char *p = key + 1;
  while (*p != '\0') {
    if (!is_name_char((unsigned char)*p, true))
      return false;
    while (*p != '\0' && *p != '/') {
      if (!is_name_char((unsigned char)*p, false))
        return false;
      p++;
    }
    if (*p == '/' && *++p == '\0')
      return false; /* trailing slash */
  }
  return true;
}

/* Is the text (of any length) only white space? */
static bool all_blank(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!isspace((unsigned char)s[i]))
      return false;
  return true;
}

/* ---- value parsers ---- */

/* Strict strtoull base 0: digits first, nothing after, no overflow. */
static int parse_uint(const char *s, uint64_t *value) {
  char *end;
  unsigned long long v;

  if (s == NULL || !isdigit((unsigned char)*s))
    return -1;
  errno = 0;
  v = strtoull(s, &end, 0);
  if (errno != 0 || *end != '\0')
    return -1;
  *value = v;
  return 0;
}

int ldm_parse_size(const char *s, uint64_t *value) {
  char *end;
  unsigned long long v;
  uint64_t mult = 1;

  if (s == NULL || value == NULL || !isdigit((unsigned char)*s))
    return -1;
  errno = 0;
  v = strtoull(s, &end, 0);
  if (errno != 0)
    return -1;
  switch (*end) {
  case '\0':
    break;
  case 'k':
  case 'K':
    mult = 1000;
    end++;
    break;
  case 'm':
  case 'M':
    mult = 1000 * 1000;
    end++;
    break;
  case 'g':
  case 'G':
    mult = 1000 * 1000 * 1000;
    end++;
    break;
  default:
    return -1;
  }
  if (*end != '\0' || v > UINT64_MAX / mult)
    return -1;
  *value = (uint64_t)v * mult;
  return 0;
}

/* LDM's booleans: words either way, or any integer (non-zero is true). */
static int parse_bool(const char *s, bool *value) {
  static const char *const yes[] = {"TRUE", "YES", "AFIRMATIVE", "AFFIRMATIVE",
                                    NULL};
  static const char *const no[] = {"FALSE", "NO", "NEGATIVE", NULL};
  char *end;
  long long v;

  for (size_t i = 0; yes[i] != NULL; i++)
    if (strcasecmp(s, yes[i]) == 0) {
      *value = true;
      return 0;
    }
  for (size_t i = 0; no[i] != NULL; i++)
    if (strcasecmp(s, no[i]) == 0) {
      *value = false;
      return 0;
    }
  if (!isdigit((unsigned char)*s) &&
      !((*s == '-' || *s == '+') && isdigit((unsigned char)s[1])))
    return -1;
  errno = 0;
  v = strtoll(s, &end, 0);
  if (errno != 0 || *end != '\0')
    return -1;
  *value = v != 0;
  return 0;
}

/* Does value suit the key's type?  If not, why (for "value ... is %s"). */
static const char *type_mismatch(const struct reg_default *d,
                                 const char *value) {
  uint64_t u;
  bool b;

  switch (d->type) {
  case RT_STRING:
    return NULL;
  case RT_HOSTNAME:
    return *value == '\0' ? "empty" : NULL;
  case RT_UINT:
    if (parse_uint(value, &u) != 0)
      return "not an unsigned integer";
    return u < d->min || u > d->max ? "out of range" : NULL;
  case RT_SIZE:
    return ldm_parse_size(value, &u) != 0
               ? "not a size (digits with an optional k, M or G)"
               : NULL;
  case RT_BOOL:
    return parse_bool(value, &b) != 0 ? "not a boolean (TRUE or FALSE)" : NULL;
  case RT_SLOTS:
    if (strcmp(value, "default") == 0)
      return NULL;
    return parse_uint(value, &u) != 0 || u == 0
               ? "neither \"default\" nor a positive integer"
               : NULL;
  case RT_CHOICE:
    for (size_t i = 0; d->choices[i] != NULL; i++)
      if (strcmp(value, d->choices[i]) == 0)
        return NULL;
    return "not one of the allowed values";
  }
  return NULL;
}

/* ---- the default location ---- */

const char *ldm_reg_default_path(char *buf, size_t len) {
  const char *file = env_nonempty("LDM_REGISTRY");
  const char *dir = env_nonempty("LDM_REGISTRY_DIR");
  int n;

  if (buf == NULL || len == 0)
    return NULL;
  if (file != NULL)
    n = snprintf(buf, len, "%s", file);
  else if (dir != NULL)
    n = snprintf(buf, len, "%s/registry.xml", dir);
  else
    n = snprintf(buf, len, "%s/etc/registry.xml", ldm_home());
  return n < 0 || (size_t)n >= len ? NULL : buf;
}

/* ---- reading the file ---- */

static int lock_fd(int fd, short type) {
  struct flock fl = {.l_type = type, .l_whence = SEEK_SET};
  int rc;
  do
    rc = fcntl(fd, F_OFD_SETLKW, &fl);
  while (rc != 0 && errno == EINTR);
  return rc;
}

/* Read all of fd into a NUL-terminated malloc'ed buffer. */
static int slurp(int fd, const char *path, char **bufp, size_t *lenp, char *err,
                 size_t errlen) {
  struct stat st;
  char *buf;
  size_t cap, len = 0;

  if (fstat(fd, &st) != 0)
    return fail(err, errlen, LDM_REG_ESYS, "fstat %s: %s", path,
                strerror(errno));
  if (!S_ISREG(st.st_mode))
    return fail(err, errlen, LDM_REG_EFILE, "read %s: not a regular file",
                path);
  if (st.st_size > (off_t)REG_MAX_FILE)
    return fail(err, errlen, LDM_REG_EFILE, "read %s: larger than %u bytes",
                path, REG_MAX_FILE);
  cap = (size_t)st.st_size + 1;
  buf = malloc(cap + 1);
  if (buf == NULL)
    return fail(err, errlen, LDM_REG_ESYS, "read %s: %s", path,
                strerror(ENOMEM));
  for (;;) {
    ssize_t got = pread(fd, buf + len, cap - len, (off_t)len);
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0) {
      int saved = errno;
      free(buf);
      return fail(err, errlen, LDM_REG_ESYS, "read %s: %s", path,
                  strerror(saved));
    }
    if (got == 0)
      break;
    len += (size_t)got;
    if (len == cap) { /* grew while we read: the lock says it cannot */
      free(buf);
      return fail(err, errlen, LDM_REG_EFILE, "read %s: changed while read",
                  path);
    }
  }
  buf[len] = '\0';
  *bufp = buf;
  *lenp = len;
  return LDM_REG_OK;
}

/* Parse the text of a registry file.  Empty or blank text is an empty
 * registry (*doc NULL): a writer creating the file leaves it so briefly. */
static int parse(const char *path, const char *buf, size_t len, xmlDocPtr *docp,
                 char *err, size_t errlen) {
  xmlParserCtxtPtr ctxt;
  xmlDocPtr doc;
  xmlNodePtr root;

  *docp = NULL;
  if (all_blank(buf, len))
    return LDM_REG_OK;
  ctxt = xmlNewParserCtxt();
  if (ctxt == NULL)
    return fail(err, errlen, LDM_REG_ESYS, "parse %s: %s", path,
                strerror(ENOMEM));
  doc = xmlCtxtReadMemory(ctxt, buf, (int)len, path, NULL,
                          XML_PARSE_NONET | XML_PARSE_NOBLANKS |
                              XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
  if (doc == NULL || !ctxt->wellFormed) {
    const xmlError *e = &ctxt->lastError;
    const char *msg = e->message != NULL ? e->message : "not well-formed";
    size_t n = strlen(msg);

    while (n > 0 && isspace((unsigned char)msg[n - 1]))
      n--;
    (void)fail(err, errlen, LDM_REG_EFILE, "parse %s: line %d: %.*s", path,
               e->line, (int)n, msg);
    xmlFreeDoc(doc);
    xmlFreeParserCtxt(ctxt);
    return LDM_REG_EFILE;
  }
  xmlFreeParserCtxt(ctxt);
  root = xmlDocGetRootElement(doc);
  if (root == NULL || xmlStrcmp(root->name, BAD_CAST "registry") != 0) {
    (void)fail(err, errlen, LDM_REG_EFILE,
               "parse %s: line %ld: the root element is <%s>, not <registry>",
               path, root != NULL ? xmlGetLineNo(root) : 1L,
               root != NULL ? (const char *)root->name : "");
    xmlFreeDoc(doc);
    return LDM_REG_EFILE;
  }
  *docp = doc;
  return LDM_REG_OK;
}

/* Read and parse the file open on fd. */
static int read_fd(int fd, const char *path, xmlDocPtr *docp, char *err,
                   size_t errlen) {
  char *buf = NULL;
  size_t len = 0;
  int rc = slurp(fd, path, &buf, &len, err, errlen);

  if (rc != LDM_REG_OK)
    return rc;
  rc = parse(path, buf, len, docp, err, errlen);
  free(buf);
  return rc;
}

/* Read the file at path under a shared lock; no file is no document. */
static int read_path(const char *path, xmlDocPtr *docp, char *err,
                     size_t errlen) {
  int fd, rc;

  *docp = NULL;
  do
    fd = open(path, O_RDONLY | O_CLOEXEC);
  while (fd < 0 && errno == EINTR);
  if (fd < 0)
    return errno == ENOENT ? LDM_REG_OK
                           : fail(err, errlen, LDM_REG_ESYS, "open %s: %s",
                                  path, strerror(errno));
  if (lock_fd(fd, F_RDLCK) != 0)
    rc = fail(err, errlen, LDM_REG_ESYS, "lock %s: %s", path, strerror(errno));
  else
    rc = read_fd(fd, path, docp, err, errlen);
  (void)close(fd); /* releases the lock */
  return rc;
}

int ldm_reg_open(const char *path, ldm_registry **regp, char *err,
                 size_t errlen) {
  char def[PATH_MAX];
  ldm_registry *reg;
  xmlDocPtr doc;
  int rc;

  if (regp == NULL)
    return fail(err, errlen, LDM_REG_EINVAL, "ldm_reg_open: NULL handle");
  *regp = NULL;
  if (path == NULL && (path = ldm_reg_default_path(def, sizeof def)) == NULL)
    return fail(err, errlen, LDM_REG_ESYS, "registry path: %s",
                strerror(ENAMETOOLONG));
  xmlInitParser();
  rc = read_path(path, &doc, err, errlen);
  if (rc != LDM_REG_OK)
    return rc;
  reg = calloc(1, sizeof *reg);
  if (reg == NULL || (reg->path = strdup(path)) == NULL) {
    free(reg);
    xmlFreeDoc(doc);
    return fail(err, errlen, LDM_REG_ESYS, "open %s: %s", path,
                strerror(ENOMEM));
  }
  reg->doc = doc;
  *regp = reg;
  return LDM_REG_OK;
}

void ldm_reg_close(ldm_registry *reg) {
  if (reg == NULL)
    return;
  xmlFreeDoc(reg->doc);
  free(reg->path);
  free(reg);
}

const char *ldm_reg_path(const ldm_registry *reg) {
  return reg != NULL ? reg->path : NULL;
}

const char *ldm_reg_error(const ldm_registry *reg) {
  return reg != NULL ? reg->err : "no registry handle";
}

/* ---- finding keys in a document ---- */

static bool has_element_children(xmlNodePtr n) {
  for (xmlNodePtr c = n->children; c != NULL; c = c->next)
    if (c->type == XML_ELEMENT_NODE)
      return true;
  return false;
}

static xmlNodePtr child_named(xmlNodePtr parent, const char *name, size_t n) {
  for (xmlNodePtr c = parent->children; c != NULL; c = c->next)
    if (c->type == XML_ELEMENT_NODE &&
        strncmp((const char *)c->name, name, n) == 0 && c->name[n] == '\0')
      return c;
  return NULL;
}

/* The element at a valid key path ("/" is the root), or NULL. */
static xmlNodePtr find_element(xmlDocPtr doc, const char *key) {
  xmlNodePtr n = doc != NULL ? xmlDocGetRootElement(doc) : NULL;
  const char *p = key + 1;

  while (n != NULL && *p != '\0') {
    size_t len = strcspn(p, "/");
    n = child_named(n, p, len);
    p += len;
    if (*p == '/')
      p++;
  }
  return n;
}

/*
 * Does element n hold a value?  Not if it has elements inside (a node), nor
 * if it has only comments and blanks: that is a node whose keys are all
 * commented out, as in etc/registry.xml.  <a/> is a key with value "".
 */
static bool is_value(xmlNodePtr n) {
  bool comment = false;

  for (xmlNodePtr c = n->children; c != NULL; c = c->next) {
    if (c->type == XML_ELEMENT_NODE)
      return false;
    if (c->type == XML_COMMENT_NODE)
      comment = true;
    else if (c->type == XML_CDATA_SECTION_NODE ||
             (c->type == XML_TEXT_NODE && c->content != NULL &&
              !all_blank((const char *)c->content,
                         strlen((const char *)c->content))))
      return true;
  }
  return !comment;
}

/* The element of a key that is set in the file (a leaf), or NULL. */
static xmlNodePtr find_leaf(xmlDocPtr doc, const char *key) {
  xmlNodePtr n = find_element(doc, key);
  return n != NULL && n->parent != (xmlNodePtr)doc && is_value(n) ? n : NULL;
}

/* A leaf's text without surrounding white space, malloc'ed. */
static char *leaf_value(xmlNodePtr n) {
  xmlChar *content = xmlNodeGetContent(n);
  const char *s = content != NULL ? (const char *)content : "";
  size_t len;
  char *v;

  while (isspace((unsigned char)*s))
    s++;
  len = strlen(s);
  while (len > 0 && isspace((unsigned char)s[len - 1]))
    len--;
  v = strndup(s, len);
  xmlFree(content);
  return v;
}

/* A default's value, $LDMHOME expanded or the host name found, malloc'ed;
 * NULL with errno set on failure. */
static char *default_value(const struct reg_default *d) {
  char *v = NULL;

  if (d->type == RT_HOSTNAME) {
    char host[HOST_NAME_MAX + 1];
    if (gethostname(host, sizeof host) != 0)
      return NULL;
    host[sizeof host - 1] = '\0';
    return strdup(host);
  }
  if (strncmp(d->value, "$LDMHOME", 8) == 0) {
    if (asprintf(&v, "%s%s", ldm_home(), d->value + 8) < 0)
      return NULL;
    return v;
  }
  return strdup(d->value);
}

/* The value of key, from the file or else by default, malloc'ed. */
static int lookup(ldm_registry *reg, const char *key, char **value) {
  const struct reg_default *d;
  xmlNodePtr n;

  *value = NULL;
  if (reg == NULL)
    return LDM_REG_EINVAL;
  if (!key_valid(key, false))
    return reg_fail(reg, LDM_REG_EINVAL, "bad registry key \"%s\"",
                    key != NULL ? key : "(null)");
  n = find_leaf(reg->doc, key);
  if (n != NULL) {
    *value = leaf_value(n);
    if (*value == NULL)
      return reg_fail(reg, LDM_REG_ESYS, "get %s: %s", key, strerror(ENOMEM));
    return LDM_REG_OK;
  }
  d = find_default(key);
  if (d == NULL)
    return reg_fail(reg, LDM_REG_NOENT, "no such key in %s: %s", reg->path,
                    key);
  *value = default_value(d);
  if (*value == NULL)
    return reg_fail(reg, LDM_REG_ESYS, "default of %s: %s", key,
                    strerror(errno));
  return LDM_REG_OK;
}

/* ---- getting ---- */

int ldm_reg_get_string(ldm_registry *reg, const char *key, char *buf,
                       size_t len) {
  char *v;
  size_t n;
  int rc = lookup(reg, key, &v);

  if (rc != LDM_REG_OK)
    return rc;
  n = strlen(v);
  if (buf == NULL || n >= len) {
    free(v);
    return reg_fail(reg, LDM_REG_EINVAL,
                    "get %s: the value (%zu bytes) does not fit in %zu", key, n,
                    len);
  }
  memcpy(buf, v, n + 1);
  free(v);
  return LDM_REG_OK;
}

int ldm_reg_get_uint(ldm_registry *reg, const char *key, uint64_t *value) {
  char *v;
  int rc = lookup(reg, key, &v);

  if (rc != LDM_REG_OK)
    return rc;
  if (value == NULL || parse_uint(v, value) != 0)
    rc = reg_fail(reg, LDM_REG_EVALUE,
                  "value of %s in %s is not an unsigned integer: \"%s\"", key,
                  reg->path, v);
  free(v);
  return rc;
}

int ldm_reg_get_size(ldm_registry *reg, const char *key, uint64_t *value) {
  char *v;
  int rc = lookup(reg, key, &v);

  if (rc != LDM_REG_OK)
    return rc;
  if (value == NULL || ldm_parse_size(v, value) != 0)
    rc = reg_fail(reg, LDM_REG_EVALUE,
                  "value of %s in %s is not a size: \"%s\"", key, reg->path, v);
  free(v);
  return rc;
}

int ldm_reg_get_bool(ldm_registry *reg, const char *key, bool *value) {
  char *v;
  int rc = lookup(reg, key, &v);

  if (rc != LDM_REG_OK)
    return rc;
  if (value == NULL || parse_bool(v, value) != 0)
    rc = reg_fail(reg, LDM_REG_EVALUE,
                  "value of %s in %s is not a boolean: \"%s\"", key, reg->path,
                  v);
  free(v);
  return rc;
}

bool ldm_reg_is_set(ldm_registry *reg, const char *key) {
  return reg != NULL && key_valid(key, false) &&
         find_leaf(reg->doc, key) != NULL;
}

/* ---- writing ---- */

/*
 * Open the registry file (creating it empty if create and missing) and hold
 * an exclusive lock on the file that is at path once locked: a writer that
 * waited on a file another one then replaced opens the new one and waits
 * again.  *target is the file's real path (malloc'ed), where the new file
 * must be renamed so that a symbolic link to the registry stays one.
 */
static int lock_for_write(const char *path, bool create, int *fdp,
                          struct stat *st, char **target, char *err,
                          size_t errlen) {
  for (int tries = 0; tries < REG_LOCK_TRIES; tries++) {
    struct stat now;
    char *real;
    int fd;

    do
      fd = open(path, O_RDWR | O_CLOEXEC | (create ? O_CREAT : 0), 0644);
    while (fd < 0 && errno == EINTR);
    if (fd < 0) {
      int saved = errno;
      return fail(err, errlen,
                  saved == ENOENT && !create ? LDM_REG_NOENT : LDM_REG_ESYS,
                  "open %s: %s", path, strerror(saved));
    }
    if (lock_fd(fd, F_WRLCK) != 0 || fstat(fd, st) != 0) {
      int saved = errno;
      (void)close(fd);
      return fail(err, errlen, LDM_REG_ESYS, "lock %s: %s", path,
                  strerror(saved));
    }
    real = realpath(path, NULL);
    if (real != NULL && stat(real, &now) == 0 && now.st_dev == st->st_dev &&
        now.st_ino == st->st_ino) {
      *fdp = fd;
      *target = real;
      return LDM_REG_OK;
    }
    free(real);
    (void)close(fd); /* replaced or removed while we waited */
  }
  return fail(err, errlen, LDM_REG_ESYS, "lock %s: the file keeps changing",
              path);
}

static int write_all(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w < 0)
      return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

/* Make a rename in path's directory durable. */
static void sync_dir(const char *path) {
  char *dir = strdup(path);
  char *slash;
  int fd;

  if (dir == NULL)
    return;
  slash = strrchr(dir, '/');
  if (slash == dir)
    slash[1] = '\0';
  else if (slash != NULL)
    *slash = '\0';
  fd = open(slash != NULL ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    (void)fsync(fd);
    (void)close(fd);
  }
  free(dir);
}

/* Write doc to a temporary file beside path, with the mode and owner of the
 * file it replaces (st), and rename it into place. */
static int write_doc(const char *path, xmlDocPtr doc, const struct stat *st,
                     char *err, size_t errlen) {
  xmlChar *mem = NULL;
  int size = 0, fd, rc = LDM_REG_OK;
  char *tmp = NULL;

  xmlDocDumpFormatMemoryEnc(doc, &mem, &size, "UTF-8", 1);
  if (mem == NULL || size < 0 || asprintf(&tmp, "%s.XXXXXX", path) < 0) {
    xmlFree(mem);
    return fail(err, errlen, LDM_REG_ESYS, "write %s: %s", path,
                strerror(ENOMEM));
  }
  fd = mkostemp(tmp, O_CLOEXEC);
  if (fd < 0) {
    rc = fail(err, errlen, LDM_REG_ESYS, "create %s: %s", tmp, strerror(errno));
    goto out;
  }
  if ((st->st_uid != geteuid() || st->st_gid != getegid()) &&
      fchown(fd, st->st_uid, st->st_gid) != 0) {
    /* Not ours to give away (not root): the file becomes ours. */
  }
  if (fchmod(fd, st->st_mode & 07777) != 0 ||
      write_all(fd, (const char *)mem, (size_t)size) != 0 || fsync(fd) != 0) {
    rc = fail(err, errlen, LDM_REG_ESYS, "write %s: %s", tmp, strerror(errno));
    (void)close(fd);
    (void)unlink(tmp);
    goto out;
  }
  if (close(fd) != 0 || rename(tmp, path) != 0) {
    rc = fail(err, errlen, LDM_REG_ESYS, "rename %s to %s: %s", tmp, path,
              strerror(errno));
    (void)unlink(tmp);
    goto out;
  }
  sync_dir(path);
out:
  free(tmp);
  xmlFree(mem);
  return rc;
}

static xmlDocPtr empty_doc(void) {
  xmlDocPtr doc = xmlNewDoc(BAD_CAST "1.0");
  xmlNodePtr root;

  if (doc == NULL)
    return NULL;
  root = xmlNewDocNode(doc, NULL, BAD_CAST "registry", NULL);
  if (root == NULL) {
    xmlFreeDoc(doc);
    return NULL;
  }
  (void)xmlDocSetRootElement(doc, root);
  return doc;
}

/* A change to a document: returns LDM_REG_* with a message in reg. */
typedef int (*reg_mutation)(ldm_registry *reg, xmlDocPtr doc, const void *arg);

/*
 * The write protocol: lock, re-read the file as it is now, apply change,
 * write and rename; the handle then holds the new document.  A file that
 * does not exist is created only if create.
 */
static int update(ldm_registry *reg, bool create, reg_mutation change,
                  const void *arg) {
  struct stat st;
  xmlDocPtr doc = NULL;
  char *target = NULL;
  int fd = -1, rc;

  rc = lock_for_write(reg->path, create, &fd, &st, &target, reg->err,
                      sizeof reg->err);
  if (rc == LDM_REG_NOENT) /* no file: nothing to change */
    return change(reg, NULL, arg);
  if (rc != LDM_REG_OK)
    return rc;
  rc = read_fd(fd, reg->path, &doc, reg->err, sizeof reg->err);
  if (rc == LDM_REG_OK && doc == NULL && (doc = empty_doc()) == NULL)
    rc = reg_fail(reg, LDM_REG_ESYS, "update %s: %s", reg->path,
                  strerror(ENOMEM));
  if (rc == LDM_REG_OK)
    rc = change(reg, doc, arg);
  if (rc == LDM_REG_OK)
    rc = write_doc(target, doc, &st, reg->err, sizeof reg->err);
  if (rc == LDM_REG_OK) {
    xmlFreeDoc(reg->doc);
    reg->doc = doc;
  } else {
    xmlFreeDoc(doc);
  }
  free(target);
  (void)close(fd); /* releases the lock */
  return rc;
}

static void free_children(xmlNodePtr n) {
  xmlNodePtr c = n->children;
  while (c != NULL) {
    xmlNodePtr next = c->next;
    xmlUnlinkNode(c);
    xmlFreeNode(c);
    c = next;
  }
}

struct set_arg {
  const char *key;
  const char *value;
};

static int set_in_doc(ldm_registry *reg, xmlDocPtr doc, const void *arg) {
  const struct set_arg *a = arg;
  xmlNodePtr n = xmlDocGetRootElement(doc);
  const char *p = a->key + 1;
  xmlNodePtr text;

  while (*p != '\0') {
    size_t len = strcspn(p, "/");
    xmlNodePtr c = child_named(n, p, len);

    if (c == NULL) {
      char name[256];
      if (len >= sizeof name)
        return reg_fail(reg, LDM_REG_EINVAL, "set %s: a name is too long",
                        a->key);
      memcpy(name, p, len);
      name[len] = '\0';
      c = xmlNewChild(n, NULL, BAD_CAST name, NULL);
      if (c == NULL)
        return reg_fail(reg, LDM_REG_ESYS, "set %s: %s", a->key,
                        strerror(ENOMEM));
    } else if (p[len] == '/' && !has_element_children(c)) {
      char *v = leaf_value(c);
      bool holds_text = v == NULL || *v != '\0';
      free(v);
      if (holds_text)
        return reg_fail(reg, LDM_REG_EINVAL,
                        "set %s in %s: %.*s is a value, not a node", a->key,
                        reg->path, (int)(p + len - a->key), a->key);
    }
    n = c;
    p += len;
    if (*p == '/')
      p++;
  }
  if (has_element_children(n))
    return reg_fail(reg, LDM_REG_EINVAL,
                    "set %s in %s: it is a node, not a value", a->key,
                    reg->path);
  free_children(n);
  text = xmlNewDocText(doc, BAD_CAST a->value);
  if (text == NULL || xmlAddChild(n, text) == NULL) {
    xmlFreeNode(text);
    return reg_fail(reg, LDM_REG_ESYS, "set %s: %s", a->key, strerror(ENOMEM));
  }
  return LDM_REG_OK;
}

/* Can value go into an XML file: UTF-8, no control characters but tab and
 * newline? */
static bool value_storable(const char *value) {
  for (const unsigned char *p = (const unsigned char *)value; *p; p++)
    if ((*p < 0x20 && *p != '\t' && *p != '\n' && *p != '\r') || *p == 0x7f)
      return false;
  return xmlCheckUTF8(BAD_CAST value) != 0;
}

int ldm_reg_set_string(ldm_registry *reg, const char *key, const char *value) {
  const struct reg_default *d;
  struct set_arg a = {key, value};
  const char *why;

  if (reg == NULL)
    return LDM_REG_EINVAL;
  if (!key_valid(key, false))
    return reg_fail(reg, LDM_REG_EINVAL, "bad registry key \"%s\"",
                    key != NULL ? key : "(null)");
  if (value == NULL)
    return reg_fail(reg, LDM_REG_EINVAL, "set %s: NULL value", key);
  if (!value_storable(value))
    return reg_fail(reg, LDM_REG_EVALUE,
                    "set %s: the value has control characters or is not "
                    "UTF-8",
                    key);
  d = find_default(key);
  if (d != NULL && (why = type_mismatch(d, value)) != NULL)
    return reg_fail(reg, LDM_REG_EVALUE, "set %s: value \"%s\" is %s", key,
                    value, why);
  return update(reg, true, set_in_doc, &a);
}

static int remove_in_doc(ldm_registry *reg, xmlDocPtr doc, const void *arg) {
  const char *key = arg;
  xmlNodePtr n = find_element(doc, key);
  xmlNodePtr root, parent;

  if (n == NULL)
    return reg_fail(reg, LDM_REG_NOENT, "no such key in %s: %s", reg->path,
                    key);
  root = xmlDocGetRootElement(doc);
  if (n == root) { /* "/": every key */
    if (!has_element_children(root))
      return reg_fail(reg, LDM_REG_NOENT, "no keys in %s", reg->path);
    free_children(root);
    return LDM_REG_OK;
  }
  parent = n->parent;
  xmlUnlinkNode(n);
  xmlFreeNode(n);
  /* Nodes left with no keys go too: they would read as empty values. */
  while (parent != root && !has_element_children(parent)) {
    xmlNodePtr up = parent->parent;
    xmlUnlinkNode(parent);
    xmlFreeNode(parent);
    parent = up;
  }
  return LDM_REG_OK;
}

int ldm_reg_remove(ldm_registry *reg, const char *key) {
  if (reg == NULL)
    return LDM_REG_EINVAL;
  if (!key_valid(key, true))
    return reg_fail(reg, LDM_REG_EINVAL, "bad registry key \"%s\"",
                    key != NULL ? key : "(null)");
  return update(reg, false, remove_in_doc, key);
}

int ldm_reg_create(const char *path, bool reset, char *err, size_t errlen) {
  char def[PATH_MAX];
  struct stat st;
  xmlDocPtr doc;
  char *target = NULL;
  int fd = -1, rc;

  if (path == NULL && (path = ldm_reg_default_path(def, sizeof def)) == NULL)
    return fail(err, errlen, LDM_REG_ESYS, "registry path: %s",
                strerror(ENAMETOOLONG));
  xmlInitParser();
  rc = lock_for_write(path, true, &fd, &st, &target, err, errlen);
  if (rc != LDM_REG_OK)
    return rc;
  if (!reset && st.st_size > 0) { /* it exists: leave it be */
    free(target);
    (void)close(fd);
    return LDM_REG_OK;
  }
  doc = empty_doc();
  rc = doc == NULL ? fail(err, errlen, LDM_REG_ESYS, "create %s: %s", path,
                          strerror(ENOMEM))
                   : write_doc(target, doc, &st, err, errlen);
  xmlFreeDoc(doc);
  free(target);
  (void)close(fd);
  return rc;
}

/* ---- walking ---- */

struct entry {
  char *key;
  char *value;
  bool is_default;
};

struct entries {
  struct entry *v;
  size_t n, cap;
};

static int add_entry(struct entries *es, char *key, char *value,
                     bool is_default) {
  if (key == NULL || value == NULL)
    goto nomem;
  if (es->n == es->cap) {
    size_t cap = es->cap != 0 ? es->cap * 2 : 32;
    struct entry *v = realloc(es->v, cap * sizeof *v);
    if (v == NULL)
      goto nomem;
    es->v = v;
    es->cap = cap;
  }
  es->v[es->n++] = (struct entry){key, value, is_default};
  return 0;
nomem:
  free(key);
  free(value);
  return -1;
}

static void free_entries(struct entries *es) {
  for (size_t i = 0; i < es->n; i++) {
    free(es->v[i].key);
    free(es->v[i].value);
  }
  free(es->v);
}

/* Add the keys below element n, whose key path is path ("" for the root). */
static int collect(xmlDocPtr doc, xmlNodePtr n, const char *path,
                   struct entries *es) {
  for (xmlNodePtr c = n->children; c != NULL; c = c->next) {
    char *key;

    if (c->type != XML_ELEMENT_NODE)
      continue;
    if (asprintf(&key, "%s/%s", path, (const char *)c->name) < 0)
      return -1;
    if (!is_value(c)) {
      int rc = collect(doc, c, key, es);
      free(key);
      if (rc != 0)
        return rc;
    } else if (find_leaf(doc, key) != c) { /* a repeat: the first counts */
      free(key);
    } else if (add_entry(es, key, leaf_value(c), false) != 0) {
      return -1;
    }
  }
  return 0;
}

/* Path order: component by component, so "/a/b" comes before "/a-b". */
static int path_cmp(const char *a, const char *b) {
  while (*a != '\0' && *a == *b) {
    a++;
    b++;
  }
  int ca = *a == '\0' ? 0 : *a == '/' ? 1 : (unsigned char)*a + 2;
  int cb = *b == '\0' ? 0 : *b == '/' ? 1 : (unsigned char)*b + 2;
  return ca - cb;
}

static int entry_cmp(const void *x, const void *y) {
  const struct entry *a = x, *b = y;
  return path_cmp(a->key, b->key);
}

static bool under(const char *key, const char *prefix, size_t plen) {
  return plen == 1 || (strncmp(key, prefix, plen) == 0 &&
                       (key[plen] == '\0' || key[plen] == '/'));
}

int ldm_reg_walk(ldm_registry *reg, const char *prefix,
                 int (*fn)(const char *key, const char *value, bool is_default,
                           void *arg),
                 void *arg) {
  struct entries es = {NULL, 0, 0};
  xmlNodePtr root;
  size_t plen;
  int rc = LDM_REG_OK;

  if (reg == NULL || fn == NULL)
    return LDM_REG_EINVAL;
  if (prefix == NULL)
    prefix = "/";
  plen = strlen(prefix);
  while (plen > 1 && prefix[plen - 1] == '/')
    plen--; /* "/queue/" is "/queue" */
  char *p = strndup(prefix, plen);
  bool ok = p != NULL && key_valid(p, true);
  free(p);
  if (!ok)
    return reg_fail(reg, LDM_REG_EINVAL, "bad registry key \"%s\"", prefix);
  root = reg->doc != NULL ? xmlDocGetRootElement(reg->doc) : NULL;
  if (root != NULL && collect(reg->doc, root, "", &es) != 0)
    goto nomem;
  for (size_t i = 0; i < NDEFAULTS; i++) {
    const struct reg_default *d = &defaults[i];
    if (find_leaf(reg->doc, d->key) != NULL)
      continue;
    char *v = default_value(d);
    if (v == NULL) {
      rc = reg_fail(reg, LDM_REG_ESYS, "default of %s: %s", d->key,
                    strerror(errno));
      free_entries(&es);
      return rc;
    }
    if (add_entry(&es, strdup(d->key), v, true) != 0)
      goto nomem;
  }
  qsort(es.v, es.n, sizeof *es.v, entry_cmp);
  for (size_t i = 0; i < es.n && rc == 0; i++)
    if (under(es.v[i].key, prefix, plen))
      rc = fn(es.v[i].key, es.v[i].value, es.v[i].is_default, arg);
  free_entries(&es);
  return rc;
nomem:
  free_entries(&es);
  return reg_fail(reg, LDM_REG_ESYS, "walk %s: %s", reg->path,
                  strerror(ENOMEM));
}
