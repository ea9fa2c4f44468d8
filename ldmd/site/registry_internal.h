/*
 * registry_internal.h - what the files of the registry share and nobody
 * else sees: the handle, the table of built-in keys, and the helpers one
 * file calls in another.  registry.c reads the file and answers lookups,
 * registry_keys.c holds the built-in keys and the value parsers,
 * registry_write.c changes the file under its lock.  Internal names carry
 * the ldm__reg_ prefix.
 */
#ifndef LDMD_SITE_REGISTRY_INTERNAL_H
#define LDMD_SITE_REGISTRY_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libxml/tree.h>

#include "ldmd/site/registry.h"

#define REG_ERRLEN 512
/* A registry is a few kB: refuse anything silly before reading it. */
#define REG_MAX_FILE (16u << 20)
/* Reopens allowed while other writers keep replacing the file. */
#define REG_LOCK_TRIES 100

struct ldm_registry {
  char *path;
  xmlDocPtr doc; /* NULL: no file */
  char err[REG_ERRLEN];
};

enum reg_type {
  RT_STRING,   /* anything */
  RT_HOSTNAME, /* a non-empty string; default gethostname() when read */
  RT_UINT,     /* unsigned integer within [min, max] */
  RT_SIZE,     /* ldm_parse_size() */
  RT_BOOL,     /* ldm_parse_bool() */
  RT_SLOTS,    /* "default" or an unsigned integer > 0 */
  RT_CHOICE,   /* one of the strings in choices */
};

struct reg_default {
  const char *key;
  const char *value; /* a leading "$LDMHOME" is expanded when read */
  enum reg_type type;
  uint64_t min, max; /* RT_UINT only */
  const char *const *choices;
};

/* registry_keys.c: the built-in keys and the value parsers */
extern const struct reg_default ldm__reg_defaults[];
extern const size_t ldm__reg_ndefaults;
const struct reg_default *ldm__reg_find_default(const char *key);
const char *ldm__reg_type_mismatch(const struct reg_default *d,
                                   const char *value);

/* registry.c: messages, names, reading and finding */
__attribute__((format(printf, 4, 5))) int
ldm__reg_fail(char *buf, size_t len, int code, const char *fmt, ...);
__attribute__((format(printf, 3, 4))) int
ldm__reg_set_error(ldm_registry *reg, int code, const char *fmt, ...);
const char *ldm__reg_env_nonempty(const char *name);
const char *ldm__reg_ldm_home(void);
bool ldm__reg_key_valid(const char *key, bool allow_root);
bool ldm__reg_all_blank(const char *s, size_t n);
int ldm__reg_lock_fd(int fd, short type);
/* empty_ok: an empty file reads as an empty document (writers only). */
int ldm__reg_read_fd(int fd, const char *path, bool empty_ok, xmlDocPtr *docp,
                     char *err, size_t errlen);
bool ldm__reg_has_element_children(xmlNodePtr n);
xmlNodePtr ldm__reg_child_named(xmlNodePtr parent, const char *name, size_t n);
xmlNodePtr ldm__reg_find_element(xmlDocPtr doc, const char *key);
char *ldm__reg_leaf_value(xmlNodePtr n);

#endif /* LDMD_SITE_REGISTRY_INTERNAL_H */
