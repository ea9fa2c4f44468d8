/*
 * pqactdb - reads the gdbm databases pqact's DBFILE writes, for
 * test/pqact/dbfile.sh, with gdbm itself rather than with pqact's code:
 *
 *   pqactdb keys DB         every key as stored (its bytes, a NUL
 *                           included, then a newline), in gdbm's order
 *   pqactdb get DB KEY      the value stored under KEY and its NUL, raw
 *   pqactdb blocksize DB    the database's block size
 *
 * Exit status 0; 1 if the database cannot be opened as a reader (a writer
 * holds it, or it is missing) or the key is not there, with a message on
 * stderr; 2 for a usage error.
 */
#include <errno.h>
#include <gdbm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static GDBM_FILE open_db(const char *path) {
  GDBM_FILE db = gdbm_open(path, 0, GDBM_READER, 0, NULL);
  if (db == NULL)
    fprintf(stderr, "pqactdb: cannot open %s: %s\n", path,
            gdbm_strerror(gdbm_errno));
  return db;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: pqactdb keys|get|blocksize DB [KEY]\n");
    return 2;
  }
  GDBM_FILE db = open_db(argv[2]);
  if (db == NULL)
    return 1;
  int rc = 0;
  if (strcmp(argv[1], "keys") == 0 && argc == 3) {
    for (datum k = gdbm_firstkey(db); k.dptr != NULL;) {
      fwrite(k.dptr, 1, (size_t)k.dsize, stdout);
      putchar('\n');
      datum next = gdbm_nextkey(db, k);
      free(k.dptr);
      k = next;
    }
  } else if (strcmp(argv[1], "get") == 0 && argc == 4) {
    datum k = {.dptr = argv[3], .dsize = (int)strlen(argv[3]) + 1};
    datum v = gdbm_fetch(db, k);
    if (v.dptr == NULL) {
      fprintf(stderr, "pqactdb: no key \"%s\" in %s\n", argv[3], argv[2]);
      rc = 1;
    } else {
      fwrite(v.dptr, 1, (size_t)v.dsize, stdout);
      free(v.dptr);
    }
  } else if (strcmp(argv[1], "blocksize") == 0 && argc == 3) {
    int bs = 0;
    if (gdbm_setopt(db, GDBM_GETBLOCKSIZE, &bs, sizeof bs) != 0) {
      fprintf(stderr, "pqactdb: %s\n", gdbm_strerror(gdbm_errno));
      rc = 1;
    } else {
      printf("%d\n", bs);
    }
  } else {
    fprintf(stderr, "usage: pqactdb keys|get|blocksize DB [KEY]\n");
    rc = 2;
  }
  gdbm_close(db);
  return rc;
}
