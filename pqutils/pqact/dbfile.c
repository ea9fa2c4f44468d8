/*
 * dbfile.c - the DBFILE action (dbfile.h) on gdbm: its options, the XDR
 * encoding of the product it stores, and its databases.
 *
 * An open database is kept in FILE's set of outputs (filing.h's
 * pqact_outputs_add()) rather than in a cache of its own: one list, most
 * recently used first, and one limit on what is open, so that the least
 * recently used output, file or database, is the one closed when the
 * limit or EMFILE is reached, and idle databases are closed after six
 * hours like files.  A gdbm handle holds one descriptor, as a file does.
 */
#include "pqutils/pqact/dbfile.h"

#include <errno.h>
#include <gdbm.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ldmd/proto/ldm6_xdr.h"
#include "ldmd/site/log.h"

#define DEFAULT_BLOCKSIZE 512 /* LDM's: space over time */

/* DBFILE's options (options.h): -close, -dblocksize N. */
enum { OPT_CLOSE = PQACT_OPT_BIT(PQACT_OPT_CLOSE) };

int pqact_xdr_product(const pq_prod_info *info, const void *data, uint8_t **out,
                      size_t *len) {
  ldm6_product p = {.data = data};
  int rc = ldm6_info_from_pq(info, &p.info);
  if (rc != 0) {
    log_error("cannot encode %s as XDR: %s", info->ident, ldm6_strerror(rc));
    return -1;
  }
  /* the prod_info at its largest, the data and its padding */
  size_t cap = 512 + (size_t)info->size + 4;
  *out = malloc(cap);
  if (*out == NULL) {
    log_error("cannot encode %s as XDR: %s", info->ident, strerror(ENOMEM));
    return -1;
  }
  rc = ldm6_encode(LDM6_T_PRODUCT, &p, *out, cap, len);
  if (rc != 0) {
    log_error("cannot encode %s as XDR: %s", info->ident, ldm6_strerror(rc));
    free(*out);
    *out = NULL;
    return -1;
  }
  return 0;
}

static void on_unknown(void *arg, const char *word) {
  (void)arg;
  log_error("DBFILE: invalid argument \"%s\" (ignored)", word);
}

/* gdbm's report of a fatal error: said, never an exit. */
static void on_fatal(const char *msg) {
  log_error("gdbm: %s", msg);
}

static int close_db(void *handle, const char *path) {
  if (gdbm_close(handle) != 0) {
    log_error("cannot close database \"%s\": %s", path,
              gdbm_strerror(gdbm_errno));
    return -1;
  }
  return 0;
}

/* The system's errno behind gdbm's last error, or 0 if it was not one. */
static int gdbm_cause(void) {
  return gdbm_check_syserr(gdbm_errno) ? errno : 0;
}

/* Open (creating it and its directories) the database at path. */
static GDBM_FILE open_db(struct pqact_outputs *outs, const char *path,
                         int blocksize) {
  bool made = false;
  pqact_outputs_make_room(outs);
  for (;;) {
    GDBM_FILE db =
        gdbm_open(path, blocksize, GDBM_WRCREAT | GDBM_CLOEXEC, 0664, on_fatal);
    if (db != NULL)
      return db;
    int e = gdbm_cause();
    if (e == ENOENT && !made) {
      made = true;
      if (pqact_make_parents(path) != 0)
        return NULL;
      continue;
    }
    if ((e == EMFILE || e == ENFILE) && pqact_outputs_close_lru(outs))
      continue;
    log_error("cannot open database \"%s\": %s", path,
              e != 0 ? strerror(e) : gdbm_strerror(gdbm_errno));
    return NULL;
  }
}

/* -dblocksize's value: a positive number, else LDM's default (said). */
static int blocksize_of(const char *v) {
  if (v == NULL)
    return DEFAULT_BLOCKSIZE;
  char *end;
  errno = 0;
  long n = strtol(v, &end, 10);
  if (errno != 0 || end == v || *end != '\0' || n <= 0 || n > INT_MAX) {
    log_error("DBFILE: -dblocksize \"%s\" invalid: %d used", v,
              DEFAULT_BLOCKSIZE);
    return DEFAULT_BLOCKSIZE;
  }
  return (int)n;
}

int pqact_dbfile_path_index(int argc, char **argv) {
  unsigned flags;
  int first =
      pqact_decode_options(PQACT_DBFILE, argc, argv, &flags, NULL, NULL, NULL);
  return first < argc ? first : -1;
}

int pqact_dbfile_action(struct pqact_outputs *outs, int argc, char **argv,
                        const pq_prod_info *info, const void *data) {
  unsigned flags;
  const char *values[PQACT_NOPTIONS] = {NULL};
  int first = pqact_decode_options(PQACT_DBFILE, argc, argv, &flags, values,
                                   on_unknown, NULL);
  if (first >= argc) {
    log_error("DBFILE: no path");
    return -1;
  }
  const char *path = argv[first];
  const char *key = first + 1 < argc ? argv[first + 1] : info->ident;
  GDBM_FILE db = pqact_outputs_get(outs, PQACT_DBFILE, path);
  if (db == NULL) {
    db = open_db(outs, path, blocksize_of(values[PQACT_OPT_DBLOCKSIZE]));
    if (db == NULL ||
        pqact_outputs_add(outs, PQACT_DBFILE, path, db, close_db) != 0)
      return -1;
  }
  uint8_t *value;
  size_t len;
  if (pqact_xdr_product(info, data, &value, &len) != 0)
    return -1;
  int rc = -1;
  if (len > INT_MAX) {
    log_error("cannot store %s in \"%s\": %s", info->ident, path,
              strerror(EFBIG));
  } else {
    datum k = {.dptr = (char *)key, .dsize = (int)strlen(key) + 1};
    datum v = {.dptr = (char *)value, .dsize = (int)len};
    rc = gdbm_store(db, k, v, GDBM_REPLACE);
    if (rc != 0)
      log_error("cannot store %s in \"%s\" under key \"%s\": %s", info->ident,
                path, key, gdbm_db_strerror(db));
  }
  free(value);
  if (rc != 0) {
    (void)pqact_outputs_close(outs, PQACT_DBFILE, path, "failed");
    return -1;
  }
  if (flags & OPT_CLOSE)
    return pqact_outputs_close(outs, PQACT_DBFILE, path, "closed");
  return 0;
}
