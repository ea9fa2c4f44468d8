/*
 * registry_write.c - changing the registry file: under an exclusive fcntl
 * lock on the file, the document is re-read, changed, written whole to a
 * temporary file in the same directory, synced and renamed into place, so a
 * reader sees the old file or the new one and two writers never lose each
 * other's change.  Also creating a registry (regutil -c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlstring.h>

#include "ldmd/site/registry_internal.h"

/* ---- writing ---- */

/*
 * Open the registry file (creating it empty if create and missing) and hold
 * an exclusive lock on the file that is at path once locked: a writer that
 * waited on a file another one then replaced opens the new one and waits
 * again.  *target is the file's real path (malloc'ed), where the new file
 * must be renamed so that a symbolic link to the registry stays one.
 */
static int create_file(const char *path, char *err, size_t errlen);

static int lock_for_write(const char *path, bool create, int *fdp,
                          struct stat *st, char **target, char *err,
                          size_t errlen) {
  for (int tries = 0; tries < REG_LOCK_TRIES; tries++) {
    struct stat now;
    char *real;
    int fd;

    do
      fd = open(path, O_RDWR | O_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    if (fd < 0 && errno == ENOENT && create) {
      int rc = create_file(path, err, errlen);
      if (rc != LDM_REG_OK)
        return rc;
      continue; /* open what is there now */
    }
    if (fd < 0) {
      int saved = errno;
      return ldm__reg_fail(err, errlen,
                           saved == ENOENT && !create ? LDM_REG_NOENT
                                                      : LDM_REG_ESYS,
                           "open %s: %s", path, strerror(saved));
    }
    if (ldm__reg_lock_fd(fd, F_WRLCK) != 0 || fstat(fd, st) != 0) {
      int saved = errno;
      (void)close(fd);
      return ldm__reg_fail(err, errlen, LDM_REG_ESYS, "lock %s: %s", path,
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
  return ldm__reg_fail(err, errlen, LDM_REG_ESYS,
                       "lock %s: the file keeps changing", path);
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
/* Write doc whole to a temporary file beside path and put it in place:
 * replace it (rename), or, for a file that does not exist yet, link it
 * there only if nobody else made one meanwhile (EEXIST is success: the
 * other writer's file stands).  Either way no reader ever sees the file
 * empty or half written. */
static int write_doc(const char *path, xmlDocPtr doc, const struct stat *st,
                     bool replace, char *err, size_t errlen) {
  xmlChar *mem = NULL;
  int size = 0, fd, rc = LDM_REG_OK;
  char *tmp = NULL;

  xmlDocDumpFormatMemoryEnc(doc, &mem, &size, "UTF-8", 1);
  if (mem == NULL || size < 0 || asprintf(&tmp, "%s.XXXXXX", path) < 0) {
    xmlFree(mem);
    return ldm__reg_fail(err, errlen, LDM_REG_ESYS, "write %s: %s", path,
                         strerror(ENOMEM));
  }
  fd = mkostemp(tmp, O_CLOEXEC);
  if (fd < 0) {
    rc = ldm__reg_fail(err, errlen, LDM_REG_ESYS, "create %s: %s", tmp,
                       strerror(errno));
    goto out;
  }
  if ((st->st_uid != geteuid() || st->st_gid != getegid()) &&
      fchown(fd, st->st_uid, st->st_gid) != 0) {
    /* Not ours to give away (not root): the file becomes ours. */
  }
  if (fchmod(fd, st->st_mode & 07777) != 0 ||
      write_all(fd, (const char *)mem, (size_t)size) != 0 || fsync(fd) != 0) {
    rc = ldm__reg_fail(err, errlen, LDM_REG_ESYS, "write %s: %s", tmp,
                       strerror(errno));
    (void)close(fd);
    (void)unlink(tmp);
    goto out;
  }
  if (close(fd) != 0 ||
      (replace ? rename(tmp, path)
               : (link(tmp, path) != 0 && errno != EEXIST ? -1 : 0)) != 0) {
    rc = ldm__reg_fail(err, errlen, LDM_REG_ESYS, "%s %s to %s: %s",
                       replace ? "rename" : "link", tmp, path, strerror(errno));
    (void)unlink(tmp);
    goto out;
  }
  if (!replace)
    (void)unlink(tmp);
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

/* A registry file where there is none: an empty <registry> put in place
 * whole, so that no reader finds the file empty. */
static int create_file(const char *path, char *err, size_t errlen) {
  struct stat st;
  xmlDocPtr doc = empty_doc();
  int rc;

  if (doc == NULL)
    return ldm__reg_fail(err, errlen, LDM_REG_ESYS, "create %s: %s", path,
                         strerror(ENOMEM));
  memset(&st, 0, sizeof st);
  st.st_uid = geteuid();
  st.st_gid = getegid();
  st.st_mode = 0644;
  rc = write_doc(path, doc, &st, false, err, errlen);
  xmlFreeDoc(doc);
  return rc;
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
  rc = ldm__reg_read_fd(fd, reg->path, true, &doc, reg->err, sizeof reg->err);
  if (rc == LDM_REG_OK && doc == NULL && (doc = empty_doc()) == NULL)
    rc = ldm__reg_set_error(reg, LDM_REG_ESYS, "update %s: %s", reg->path,
                            strerror(ENOMEM));
  if (rc == LDM_REG_OK)
    rc = change(reg, doc, arg);
  if (rc == LDM_REG_OK)
    rc = write_doc(target, doc, &st, true, reg->err, sizeof reg->err);
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
    xmlNodePtr c = ldm__reg_child_named(n, p, len);

    if (c == NULL) {
      char name[256];
      if (len >= sizeof name)
        return ldm__reg_set_error(reg, LDM_REG_EINVAL,
                                  "set %s: a name is too long", a->key);
      memcpy(name, p, len);
      name[len] = '\0';
      c = xmlNewChild(n, NULL, BAD_CAST name, NULL);
      if (c == NULL)
        return ldm__reg_set_error(reg, LDM_REG_ESYS, "set %s: %s", a->key,
                                  strerror(ENOMEM));
    } else if (p[len] == '/' && !ldm__reg_has_element_children(c)) {
      char *v = ldm__reg_leaf_value(c);
      bool holds_text = v == NULL || *v != '\0';
      free(v);
      if (holds_text)
        return ldm__reg_set_error(
            reg, LDM_REG_EINVAL, "set %s in %s: %.*s is a value, not a node",
            a->key, reg->path, (int)(p + len - a->key), a->key);
    }
    n = c;
    p += len;
    if (*p == '/')
      p++;
  }
  if (ldm__reg_has_element_children(n))
    return ldm__reg_set_error(reg, LDM_REG_EINVAL,
                              "set %s in %s: it is a node, not a value", a->key,
                              reg->path);
  free_children(n);
  text = xmlNewDocText(doc, BAD_CAST a->value);
  if (text == NULL || xmlAddChild(n, text) == NULL) {
    xmlFreeNode(text);
    return ldm__reg_set_error(reg, LDM_REG_ESYS, "set %s: %s", a->key,
                              strerror(ENOMEM));
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
  if (!ldm__reg_key_valid(key, false))
    return ldm__reg_set_error(reg, LDM_REG_EINVAL, "bad registry key \"%s\"",
                              key != NULL ? key : "(null)");
  if (value == NULL)
    return ldm__reg_set_error(reg, LDM_REG_EINVAL, "set %s: NULL value", key);
  if (!value_storable(value))
    return ldm__reg_set_error(
        reg, LDM_REG_EVALUE,
        "set %s: the value has control characters or is not "
        "UTF-8",
        key);
  d = ldm__reg_find_default(key);
  if (d != NULL && (why = ldm__reg_type_mismatch(d, value)) != NULL)
    return ldm__reg_set_error(reg, LDM_REG_EVALUE, "set %s: value \"%s\" is %s",
                              key, value, why);
  return update(reg, true, set_in_doc, &a);
}

static int remove_in_doc(ldm_registry *reg, xmlDocPtr doc, const void *arg) {
  const char *key = arg;
  xmlNodePtr n = ldm__reg_find_element(doc, key);
  xmlNodePtr root, parent;

  if (n == NULL)
    return ldm__reg_set_error(reg, LDM_REG_NOENT, "no such key in %s: %s",
                              reg->path, key);
  root = xmlDocGetRootElement(doc);
  if (n == root) { /* "/": every key */
    if (!ldm__reg_has_element_children(root))
      return ldm__reg_set_error(reg, LDM_REG_NOENT, "no keys in %s", reg->path);
    free_children(root);
    return LDM_REG_OK;
  }
  parent = n->parent;
  xmlUnlinkNode(n);
  xmlFreeNode(n);
  /* Nodes left with no keys go too: they would read as empty values. */
  while (parent != root && !ldm__reg_has_element_children(parent)) {
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
  if (!ldm__reg_key_valid(key, true))
    return ldm__reg_set_error(reg, LDM_REG_EINVAL, "bad registry key \"%s\"",
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
    return ldm__reg_fail(err, errlen, LDM_REG_ESYS, "registry path: %s",
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
  rc = doc == NULL ? ldm__reg_fail(err, errlen, LDM_REG_ESYS, "create %s: %s",
                                   path, strerror(ENOMEM))
                   : write_doc(target, doc, &st, true, err, errlen);
  xmlFreeDoc(doc);
  free(target);
  (void)close(fd);
  return rc;
}
