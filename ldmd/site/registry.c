/*
 * registry.c - the LDM registry: site parameters kept as nested elements of
 * an XML file, each key path /a/b/c the text of <registry><a><b><c>.  This
 * file owns where the file is, reading it (libxml2, no network, errors with
 * their line; a missing file is all defaults, an empty one an error),
 * finding and getting keys, and walking them.  The built-in keys and the
 * value parsers are in registry_keys.c, writing in registry_write.c; what
 * they share is in registry_internal.h.
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

#include "ldmd/site/registry_internal.h"

/* ---- small helpers ---- */

__attribute__((format(printf, 4, 0))) static int
failv(char *buf, size_t len, int code, const char *fmt, va_list ap) {
  if (buf != NULL && len > 0)
    (void)vsnprintf(buf, len, fmt, ap);
  return code;
}

/* Put a message in buf (may be NULL) and return code. */
__attribute__((format(printf, 4, 5))) int
ldm__reg_fail(char *buf, size_t len, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  code = failv(buf, len, code, fmt, ap);
  va_end(ap);
  return code;
}

/* The same, into the handle's message. */
__attribute__((format(printf, 3, 4))) int
ldm__reg_set_error(ldm_registry *reg, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  code = failv(reg->err, sizeof reg->err, code, fmt, ap);
  va_end(ap);
  return code;
}

const char *ldm__reg_env_nonempty(const char *name) {
  const char *v = getenv(name);
  return v != NULL && *v != '\0' ? v : NULL;
}

const char *ldm__reg_ldm_home(void) {
  const char *home = ldm__reg_env_nonempty("LDMHOME");
  return home != NULL ? home : LDM_HOME_DEFAULT;
}

static bool is_name_char(int c, bool first) {
  if (isalpha(c) || c == '_')
    return true;
  return !first && (isdigit(c) || c == '-' || c == '.');
}

/* A key path: "/" then names ([A-Za-z_][A-Za-z0-9_.-]*) separated by single
 * slashes; "/" itself only if allow_root. */
bool ldm__reg_key_valid(const char *key, bool allow_root) {
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
bool ldm__reg_all_blank(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!isspace((unsigned char)s[i]))
      return false;
  return true;
}
/* ---- the default location ---- */

const char *ldm_reg_default_path(char *buf, size_t len) {
  const char *file = ldm__reg_env_nonempty("LDM_REGISTRY");
  const char *dir = ldm__reg_env_nonempty("LDM_REGISTRY_DIR");
  int n;

  if (buf == NULL || len == 0)
    return NULL;
  if (file != NULL)
    n = snprintf(buf, len, "%s", file);
  else if (dir != NULL)
    n = snprintf(buf, len, "%s/registry.xml", dir);
  else
    n = snprintf(buf, len, "%s/etc/registry.xml", ldm__reg_ldm_home());
  return n < 0 || (size_t)n >= len ? NULL : buf;
}

/* ---- reading the file ---- */

int ldm__reg_lock_fd(int fd, short type) {
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
    return ldm__reg_fail(err, errlen, LDM_REG_ESYS, "fstat %s: %s", path,
                         strerror(errno));
  if (!S_ISREG(st.st_mode))
    return ldm__reg_fail(err, errlen, LDM_REG_EFILE,
                         "read %s: not a regular file", path);
  if (st.st_size > (off_t)REG_MAX_FILE)
    return ldm__reg_fail(err, errlen, LDM_REG_EFILE,
                         "read %s: larger than %u bytes", path, REG_MAX_FILE);
  cap = (size_t)st.st_size + 1;
  buf = malloc(cap + 1);
  if (buf == NULL)
    return ldm__reg_fail(err, errlen, LDM_REG_ESYS, "read %s: %s", path,
                         strerror(ENOMEM));
  for (;;) {
    ssize_t got = pread(fd, buf + len, cap - len, (off_t)len);
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0) {
      int saved = errno;
      free(buf);
      return ldm__reg_fail(err, errlen, LDM_REG_ESYS, "read %s: %s", path,
                           strerror(saved));
    }
    if (got == 0)
      break;
    len += (size_t)got;
    if (len == cap) { /* grew while we read: the lock says it cannot */
      free(buf);
      return ldm__reg_fail(err, errlen, LDM_REG_EFILE,
                           "read %s: changed while read", path);
    }
  }
  buf[len] = '\0';
  *bufp = buf;
  *lenp = len;
  return LDM_REG_OK;
}

/* Every element's children have different names: a second <metrics> (or
 * any element repeated beside itself) would be read as nothing, its keys
 * silently at their defaults, so the file is refused instead, naming both
 * lines.  Registries are small (REG_MAX_FILE): the pairs are compared. */
static int check_unique(const char *path, xmlNodePtr n, char *err,
                        size_t errlen) {
  for (xmlNodePtr c = n->children; c != NULL; c = c->next) {
    if (c->type != XML_ELEMENT_NODE)
      continue;
    for (xmlNodePtr d = c->next; d != NULL; d = d->next)
      if (d->type == XML_ELEMENT_NODE && xmlStrcmp(c->name, d->name) == 0)
        return ldm__reg_fail(err, errlen, LDM_REG_EFILE,
                             "parse %s: line %ld: <%s> again (first at line "
                             "%ld): write its keys in one element",
                             path, xmlGetLineNo(d), (const char *)d->name,
                             xmlGetLineNo(c));
    int rc = check_unique(path, c, err, errlen);
    if (rc != LDM_REG_OK)
      return rc;
  }
  return LDM_REG_OK;
}

/* Parse the text of a registry file.  Empty or blank text is an error,
 * except for a writer holding the lock (empty_ok), to which it is an empty
 * registry (*doc NULL). */
static int parse(const char *path, const char *buf, size_t len, bool empty_ok,
                 xmlDocPtr *docp, char *err, size_t errlen) {
  xmlParserCtxtPtr ctxt;
  xmlDocPtr doc;
  xmlNodePtr root;

  *docp = NULL;
  /* An empty file is not a registry: most often a write that never
   * finished or a mistake, and taking it silently as all defaults would
   * start a site on settings nobody chose.  A writer holding the lock
   * (empty_ok) may find it empty: it is about to write the file whole. */
  if (ldm__reg_all_blank(buf, len) && empty_ok)
    return LDM_REG_OK;
  if (ldm__reg_all_blank(buf, len))
    return ldm__reg_fail(err, errlen, LDM_REG_EFILE,
                         "parse %s: the file is empty, not a registry "
                         "(remove it to use the defaults)",
                         path);
  ctxt = xmlNewParserCtxt();
  if (ctxt == NULL)
    return ldm__reg_fail(err, errlen, LDM_REG_ESYS, "parse %s: %s", path,
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
    (void)ldm__reg_fail(err, errlen, LDM_REG_EFILE, "parse %s: line %d: %.*s",
                        path, e->line, (int)n, msg);
    xmlFreeDoc(doc);
    xmlFreeParserCtxt(ctxt);
    return LDM_REG_EFILE;
  }
  xmlFreeParserCtxt(ctxt);
  root = xmlDocGetRootElement(doc);
  if (root == NULL || xmlStrcmp(root->name, BAD_CAST "registry") != 0) {
    (void)ldm__reg_fail(
        err, errlen, LDM_REG_EFILE,
        "parse %s: line %ld: the root element is <%s>, not <registry>", path,
        root != NULL ? xmlGetLineNo(root) : 1L,
        root != NULL ? (const char *)root->name : "");
    xmlFreeDoc(doc);
    return LDM_REG_EFILE;
  }
  if (check_unique(path, root, err, errlen) != LDM_REG_OK) {
    xmlFreeDoc(doc);
    return LDM_REG_EFILE;
  }
  *docp = doc;
  return LDM_REG_OK;
}

/* Read and parse the file open on fd. */
int ldm__reg_read_fd(int fd, const char *path, bool empty_ok, xmlDocPtr *docp,
                     char *err, size_t errlen) {
  char *buf = NULL;
  size_t len = 0;
  int rc = slurp(fd, path, &buf, &len, err, errlen);

  if (rc != LDM_REG_OK)
    return rc;
  rc = parse(path, buf, len, empty_ok, docp, err, errlen);
  free(buf);
  return rc;
}

/* Read the file at path under a shared lock; no file is no document. */
/* Open path and take a shared lock on the file that is there once the lock
 * is held: a writer replaces the file by rename under its lock, so a file
 * found replaced after the wait is opened again.  *fdp is -1 if there is
 * no file. */
static int open_locked(const char *path, int *fdp, char *err, size_t errlen) {
  for (int tries = 0; tries < REG_LOCK_TRIES; tries++) {
    struct stat held, now;
    int fd;

    do
      fd = open(path, O_RDONLY | O_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    if (fd < 0) {
      *fdp = -1;
      return errno == ENOENT
                 ? LDM_REG_OK
                 : ldm__reg_fail(err, errlen, LDM_REG_ESYS, "open %s: %s", path,
                                 strerror(errno));
    }
    if (ldm__reg_lock_fd(fd, F_RDLCK) != 0 || fstat(fd, &held) != 0) {
      int saved = errno;
      (void)close(fd);
      return ldm__reg_fail(err, errlen, LDM_REG_ESYS, "lock %s: %s", path,
                           strerror(saved));
    }
    if (stat(path, &now) == 0 && now.st_dev == held.st_dev &&
        now.st_ino == held.st_ino) {
      *fdp = fd;
      return LDM_REG_OK;
    }
    (void)close(fd); /* replaced or removed while we waited */
  }
  return ldm__reg_fail(err, errlen, LDM_REG_ESYS,
                       "lock %s: the file keeps changing", path);
}

static int read_path(const char *path, xmlDocPtr *docp, char *err,
                     size_t errlen) {
  int fd = -1, rc;

  *docp = NULL;
  rc = open_locked(path, &fd, err, errlen);
  if (rc != LDM_REG_OK || fd < 0)
    return rc;
  rc = ldm__reg_read_fd(fd, path, false, docp, err, errlen);
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
    return ldm__reg_fail(err, errlen, LDM_REG_EINVAL,
                         "ldm_reg_open: NULL handle");
  *regp = NULL;
  if (path == NULL && (path = ldm_reg_default_path(def, sizeof def)) == NULL)
    return ldm__reg_fail(err, errlen, LDM_REG_ESYS, "registry path: %s",
                         strerror(ENAMETOOLONG));
  xmlInitParser();
  rc = read_path(path, &doc, err, errlen);
  if (rc != LDM_REG_OK)
    return rc;
  reg = calloc(1, sizeof *reg);
  if (reg == NULL || (reg->path = strdup(path)) == NULL) {
    free(reg);
    xmlFreeDoc(doc);
    return ldm__reg_fail(err, errlen, LDM_REG_ESYS, "open %s: %s", path,
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

bool ldm__reg_has_element_children(xmlNodePtr n) {
  for (xmlNodePtr c = n->children; c != NULL; c = c->next)
    if (c->type == XML_ELEMENT_NODE)
      return true;
  return false;
}

xmlNodePtr ldm__reg_child_named(xmlNodePtr parent, const char *name, size_t n) {
  for (xmlNodePtr c = parent->children; c != NULL; c = c->next)
    if (c->type == XML_ELEMENT_NODE &&
        strncmp((const char *)c->name, name, n) == 0 && c->name[n] == '\0')
      return c;
  return NULL;
}

/* The element at a valid key path ("/" is the root), or NULL. */
xmlNodePtr ldm__reg_find_element(xmlDocPtr doc, const char *key) {
  xmlNodePtr n = doc != NULL ? xmlDocGetRootElement(doc) : NULL;
  const char *p = key + 1;

  while (n != NULL && *p != '\0') {
    size_t len = strcspn(p, "/");
    n = ldm__reg_child_named(n, p, len);
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
              !ldm__reg_all_blank((const char *)c->content,
                                  strlen((const char *)c->content))))
      return true;
  }
  return !comment;
}

/* The element of a key that is set in the file (a leaf), or NULL. */
static xmlNodePtr find_leaf(xmlDocPtr doc, const char *key) {
  xmlNodePtr n = ldm__reg_find_element(doc, key);
  return n != NULL && n->parent != (xmlNodePtr)doc && is_value(n) ? n : NULL;
}

/* A leaf's text without surrounding white space, malloc'ed. */
char *ldm__reg_leaf_value(xmlNodePtr n) {
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
    if (asprintf(&v, "%s%s", ldm__reg_ldm_home(), d->value + 8) < 0)
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
  if (!ldm__reg_key_valid(key, false))
    return ldm__reg_set_error(reg, LDM_REG_EINVAL, "bad registry key \"%s\"",
                              key != NULL ? key : "(null)");
  n = find_leaf(reg->doc, key);
  if (n != NULL) {
    *value = ldm__reg_leaf_value(n);
    if (*value == NULL)
      return ldm__reg_set_error(reg, LDM_REG_ESYS, "get %s: %s", key,
                                strerror(ENOMEM));
    return LDM_REG_OK;
  }
  d = ldm__reg_find_default(key);
  if (d == NULL)
    return ldm__reg_set_error(reg, LDM_REG_NOENT, "no such key in %s: %s",
                              reg->path, key);
  *value = default_value(d);
  if (*value == NULL)
    return ldm__reg_set_error(reg, LDM_REG_ESYS, "default of %s: %s", key,
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
    return ldm__reg_set_error(
        reg, LDM_REG_EINVAL,
        "get %s: the value (%zu bytes) does not fit in %zu", key, n, len);
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
  if (value == NULL || ldm_parse_uint(v, value) != 0)
    rc = ldm__reg_set_error(reg, LDM_REG_EVALUE,
                            "value of %s in %s is \"%s\": %s", key, reg->path,
                            v, ldm_uint_problem(v));
  free(v);
  return rc;
}

int ldm_reg_get_size(ldm_registry *reg, const char *key, uint64_t *value) {
  char *v;
  int rc = lookup(reg, key, &v);

  if (rc != LDM_REG_OK)
    return rc;
  if (value == NULL || ldm_parse_size(v, value) != 0)
    rc = ldm__reg_set_error(reg, LDM_REG_EVALUE,
                            "value of %s in %s is \"%s\": %s", key, reg->path,
                            v, ldm_size_problem(v));
  free(v);
  return rc;
}

int ldm_reg_get_bool(ldm_registry *reg, const char *key, bool *value) {
  char *v;
  int rc = lookup(reg, key, &v);

  if (rc != LDM_REG_OK)
    return rc;
  if (value == NULL || ldm_parse_bool(v, value) != 0)
    rc = ldm__reg_set_error(reg, LDM_REG_EVALUE,
                            "value of %s in %s is not a boolean: \"%s\"", key,
                            reg->path, v);
  free(v);
  return rc;
}

bool ldm_reg_is_set(ldm_registry *reg, const char *key) {
  return reg != NULL && ldm__reg_key_valid(key, false) &&
         find_leaf(reg->doc, key) != NULL;
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
    } else if (add_entry(es, key, ldm__reg_leaf_value(c), false) != 0) {
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
  bool ok = p != NULL && ldm__reg_key_valid(p, true);
  free(p);
  if (!ok)
    return ldm__reg_set_error(reg, LDM_REG_EINVAL, "bad registry key \"%s\"",
                              prefix);
  root = reg->doc != NULL ? xmlDocGetRootElement(reg->doc) : NULL;
  if (root != NULL && collect(reg->doc, root, "", &es) != 0)
    goto nomem;
  for (size_t i = 0; i < ldm__reg_ndefaults; i++) {
    const struct reg_default *d = &ldm__reg_defaults[i];
    if (find_leaf(reg->doc, d->key) != NULL)
      continue;
    char *v = default_value(d);
    if (v == NULL) {
      rc = ldm__reg_set_error(reg, LDM_REG_ESYS, "default of %s: %s", d->key,
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
  return ldm__reg_set_error(reg, LDM_REG_ESYS, "walk %s: %s", reg->path,
                            strerror(ENOMEM));
}
