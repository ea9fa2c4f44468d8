/*
 * filing.c - the FILE and STDIOFILE actions: their options, the transforms
 * of the data (-removewmo, -strip, -metadata), and the set of open outputs,
 * most recently used first, that keeps an output open across products
 * (filing.h says which rules are LDM's), found by a hash of its type and
 * path (a FILE -close to a path not in it is opened, written and closed
 * without joining it); also what the other actions share with these: the making
 * of directories, and a place in the set for the outputs they open (DBFILE's
 * databases).
 */
#include "pqutils/pqact/filing.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ldmd/site/log.h"
#include "pqutils/common/cli_io.h"
#include "pqutils/pqact/edex_ring.h"

#define IDLE_CLOSE_S (6 * 3600) /* LDM closes outputs idle this long */

/* The options this file acts on (options.h has which action takes which). */
enum {
  OPT_OVERWRITE = PQACT_OPT_BIT(PQACT_OPT_OVERWRITE),
  OPT_STRIP = PQACT_OPT_BIT(PQACT_OPT_STRIP),
  OPT_METADATA = PQACT_OPT_BIT(PQACT_OPT_METADATA),
  OPT_LOG = PQACT_OPT_BIT(PQACT_OPT_LOG),
  OPT_EDEX = PQACT_OPT_BIT(PQACT_OPT_EDEX),
  OPT_REMOVEWMO = PQACT_OPT_BIT(PQACT_OPT_REMOVEWMO),
  OPT_FLUSH = PQACT_OPT_BIT(PQACT_OPT_FLUSH),
  OPT_CLOSE = PQACT_OPT_BIT(PQACT_OPT_CLOSE),
};

struct output {
  enum pqact_action type;
  char *path;
  unsigned flags;
  int fd;                          /* FILE */
  FILE *fp;                        /* STDIOFILE */
  void *handle;                    /* another part's (pqact_outputs_add) */
  pqact_output_close_fn *close_fn; /* closes handle */
  int64_t last_used;
  struct output *prev, *next;
  size_t hash;          /* of its type and path */
  struct output *hnext; /* in its bucket */
};

struct pqact_outputs {
  struct output *head; /* most recently used */
  size_t n, max;
  /* the outputs by type and path, so that a product finds its output
   * without comparing its path with every open one's (a table appending
   * to hundreds of files did that for each product): chains, at most one
   * output per bucket on average (the table grows; if it cannot, the
   * chains grow instead) */
  struct output **bucket;
  size_t nbucket; /* a power of two */
  /* what the outputs' last_used and the idle close are measured with */
  pqact_clock_fn *now;
  /* the first EMFILE is a warning, the others debug */
  bool said_emfile;
  struct pqact_edex *edex; /* pqact -e's ring, for -edex; NULL without */
};

/* The default clock: seconds that steps of the wall clock do not move. */
static int64_t monotonic_s(void) {
  return (int64_t)cli_monotonic();
}

static size_t hash_of(enum pqact_action type, const char *path) {
  size_t h = 14695981039346656037u ^ (size_t)type; /* FNV-1a */
  for (const unsigned char *p = (const unsigned char *)path; *p; p++)
    h = (h ^ *p) * 1099511628211u;
  return h;
}

/* Put o in the table (its hash set), growing the table first if full. */
static void hash_insert(struct pqact_outputs *outs, struct output *o) {
  if (outs->n >= outs->nbucket) {
    size_t nb = outs->nbucket * 2;
    struct output **b = calloc(nb, sizeof *b);
    if (b != NULL) { /* else: longer chains, still every output */
      for (size_t i = 0; i < outs->nbucket; i++)
        for (struct output *x = outs->bucket[i], *next; x != NULL; x = next) {
          next = x->hnext;
          x->hnext = b[x->hash & (nb - 1)];
          b[x->hash & (nb - 1)] = x;
        }
      free(outs->bucket);
      outs->bucket = b;
      outs->nbucket = nb;
    }
  }
  struct output **head = &outs->bucket[o->hash & (outs->nbucket - 1)];
  o->hnext = *head;
  *head = o;
}

static void hash_remove(struct pqact_outputs *outs, struct output *o) {
  struct output **p = &outs->bucket[o->hash & (outs->nbucket - 1)];
  while (*p != NULL && *p != o)
    p = &(*p)->hnext;
  if (*p == o)
    *p = o->hnext;
}

struct pqact_outputs *pqact_outputs_new(unsigned max_open) {
  struct pqact_outputs *outs = calloc(1, sizeof *outs);
  if (outs == NULL)
    return NULL;
  outs->nbucket = 64;
  outs->bucket = calloc(outs->nbucket, sizeof *outs->bucket);
  if (outs->bucket == NULL) {
    free(outs);
    return NULL;
  }
  if (max_open == 0) { /* LDM's (openMax() - 6) - 1, at least one */
    long open_max = sysconf(_SC_OPEN_MAX);
    max_open = open_max > 8 ? (unsigned)(open_max - 7) : 1;
  }
  outs->max = max_open;
  outs->now = monotonic_s;
  return outs;
}

void pqact_outputs_set_clock(struct pqact_outputs *outs, pqact_clock_fn *now) {
  outs->now = now != NULL ? now : monotonic_s;
}

void pqact_outputs_set_edex(struct pqact_outputs *outs,
                            struct pqact_edex *ring) {
  outs->edex = ring;
}

size_t pqact_outputs_open(const struct pqact_outputs *outs) {
  return outs->n;
}

static void unlink_output(struct pqact_outputs *outs, struct output *o) {
  if (o->prev != NULL)
    o->prev->next = o->next;
  else
    outs->head = o->next;
  if (o->next != NULL)
    o->next->prev = o->prev;
  o->prev = o->next = NULL;
}

static void push_front(struct pqact_outputs *outs, struct output *o) {
  o->prev = NULL;
  o->next = outs->head;
  if (outs->head != NULL)
    outs->head->prev = o;
  outs->head = o;
}

/* Close o's file or handle; -1 if closing found a write error (logged). */
static int close_file(struct output *o, const char *why) {
  int rc = 0;
  log_debug("deleting %s %s entry: path=\"%s\"", why,
            pqact_action_name(o->type), o->path);
  if (o->close_fn != NULL) {
    rc = o->close_fn(o->handle, o->path);
  } else if (o->fp != NULL) {
    if (fclose(o->fp) != 0) {
      log_error("cannot close \"%s\": %s", o->path, strerror(errno));
      rc = -1;
    }
  } else if (o->fd >= 0 && close(o->fd) != 0) {
    log_error("cannot close \"%s\": %s", o->path, strerror(errno));
    rc = -1;
  }
  return rc;
}

/* Close and forget o; -1 if closing found a write error (logged). */
static int close_output(struct pqact_outputs *outs, struct output *o,
                        const char *why) {
  int rc = close_file(o, why);
  unlink_output(outs, o);
  hash_remove(outs, o);
  outs->n--;
  free(o->path);
  free(o);
  return rc;
}

static bool close_lru(struct pqact_outputs *outs, const char *why) {
  struct output *o = outs->head;
  if (o == NULL)
    return false;
  while (o->next != NULL)
    o = o->next;
  close_output(outs, o, why);
  return true;
}

void pqact_outputs_free(struct pqact_outputs *outs) {
  if (outs == NULL)
    return;
  while (outs->head != NULL)
    close_output(outs, outs->head, "closed");
  free(outs->bucket);
  free(outs);
}

void pqact_outputs_sync(struct pqact_outputs *outs) {
  int64_t now = outs->now();
  struct output *o = outs->head, *next;
  for (; o != NULL; o = next) {
    next = o->next;
    if (now - o->last_used >= IDLE_CLOSE_S)
      close_output(outs, o, "inactive");
    else if (o->fp != NULL && fflush(o->fp) != 0)
      log_error("cannot write to \"%s\": %s", o->path, strerror(errno));
  }
}

int pqact_make_parents(const char *path) {
  char *dir = strdup(path);
  if (dir == NULL)
    return -1;
  for (char *s = dir + 1; *s != '\0'; s++) {
    if (*s != '/')
      continue;
    *s = '\0';
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
      int e = errno;
      log_error("cannot create directory \"%s\": %s", dir, strerror(e));
      free(dir);
      errno = e;
      return -1;
    }
    *s = '/';
  }
  free(dir);
  return 0;
}

/* Open path as its flags say, making directories and closing the least
 * recently used outputs when descriptors run out. */
static int open_path(struct pqact_outputs *outs, const char *path,
                     unsigned flags) {
  int oflags = O_WRONLY | O_CREAT | O_CLOEXEC |
               ((flags & OPT_OVERWRITE) ? O_TRUNC : O_APPEND);
  bool made = false;
  for (;;) {
    int fd = open(path, oflags, 0666);
    if (fd >= 0)
      return fd;
    if (errno == ENOENT && !made) {
      made = true;
      if (pqact_make_parents(path) != 0)
        return -1;
      continue;
    }
    if ((errno == EMFILE || errno == ENFILE) && outs->n > 0) {
      /* as LDM's: close the least recently used output and retry, until
       * the open succeeds or nothing is left to close */
      int e = errno;
      if (!outs->said_emfile)
        log_warning("cannot open \"%s\": %s: closing least-recently-used "
                    "outputs to retry (%zu open; said once)",
                    path, strerror(e), outs->n);
      else
        log_debug("cannot open \"%s\": %s: closing the least-recently-used "
                  "output (%zu open)",
                  path, strerror(e), outs->n);
      outs->said_emfile = true;
      close_lru(outs, "least-recently-used");
      continue;
    }
    log_error("cannot open \"%s\": %s", path, strerror(errno));
    return -1;
  }
}

static struct output *find_output(struct pqact_outputs *outs,
                                  enum pqact_action type, const char *path) {
  size_t h = hash_of(type, path);
  for (struct output *o = outs->bucket[h & (outs->nbucket - 1)]; o != NULL;
       o = o->hnext)
    if (o->hash == h && o->type == type && strcmp(o->path, path) == 0)
      return o;
  return NULL;
}

static struct output *open_output(struct pqact_outputs *outs,
                                  enum pqact_action type, const char *path,
                                  unsigned flags) {
  while (outs->n >= outs->max && outs->n > 0)
    close_lru(outs, "least-recently-used");
  struct output *o = calloc(1, sizeof *o);
  if (o == NULL || (o->path = strdup(path)) == NULL) {
    log_error("cannot open \"%s\": %s", path, strerror(ENOMEM));
    free(o);
    return NULL;
  }
  o->type = type;
  o->flags = flags;
  o->fd = open_path(outs, path, flags);
  if (o->fd >= 0 && type == PQACT_STDIOFILE) {
    o->fp = fdopen(o->fd, (flags & OPT_OVERWRITE) ? "w" : "a");
    if (o->fp == NULL) {
      log_error("cannot open \"%s\": %s", path, strerror(errno));
      close(o->fd);
      o->fd = -1;
    }
  }
  if (o->fd < 0) {
    free(o->path);
    free(o);
    return NULL;
  }
  o->hash = hash_of(type, path);
  hash_insert(outs, o);
  push_front(outs, o);
  outs->n++;
  return o;
}

/* ---- data transforms ---- */

/* The character classes of LDM's heading parser: isalpha(), isdigit(),
 * isspace() of the C locale (so headings in lowercase count too). */
static bool is_alpha(uint8_t c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}
static bool is_digit(uint8_t c) {
  return c >= '0' && c <= '9';
}
static bool is_alnum(uint8_t c) {
  return is_alpha(c) || is_digit(c);
}
static bool is_space(uint8_t c) {
  return c == ' ' || (c >= '\t' && c <= '\r');
}
static bool all_of(const uint8_t *p, size_t n, bool (*cls)(uint8_t)) {
  for (size_t i = 0; i < n; i++)
    if (!cls(p[i]))
      return false;
  return true;
}

/*
 * Where -removewmo finds a WMO heading in b[0..n), by the rules of LDM's
 * parser (LDM's pqact.conf documentation describes the option; these are
 * its observable rules):
 *   1. TTAAii: four letters and two digits followed by a blank or a letter,
 *      searched for from the start; a "\r\r\n" met first ends the search
 *      (no heading);
 *   2. blanks, then CCCC: letter, letter or digit, letter, letter or digit
 *      (else no heading);
 *   3. blanks, then DDHHMM if six digits follow;
 *   4. up to three '\r' or '\n' end the heading; before them, blanks and at
 *      most one BBB (one to three letters, then a blank); anything else
 *      gives up: the heading's start is known but its length is 0; a CR/LF
 *      run shorter than three ends one character early;
 *   5. then an AWIPS line: six letters or digits and "\r\r\n".
 * @return the heading's offset, *len its length; -1 if none
 */
static long wmo_heading(const uint8_t *b, size_t n, size_t *len) {
  size_t p = 0;
  long off = -1;
  *len = 0;
  for (; p + 6 < n; p++) {
    if (all_of(b + p, 4, is_alpha)) {
      if (is_digit(b[p + 4]) && is_digit(b[p + 5]) &&
          (is_space(b[p + 6]) || is_alpha(b[p + 6]))) {
        off = (long)p;
        p += 6;
        break;
      }
    } else if (memcmp(b + p, "\r\r\n", 3) == 0) {
      break;
    }
  }
  if (off < 0)
    return -1;
  while (p < n && is_space(b[p]))
    p++;
  if (p + 4 > n || !is_alpha(b[p]) || !is_alnum(b[p + 1]) ||
      !is_alpha(b[p + 2]) || !is_alnum(b[p + 3]))
    return -1;
  p += 4;
  while (p < n && is_space(b[p]))
    p++;
  if (p + 6 <= n && all_of(b + p, 6, is_digit))
    p += 6;
  int crlf = 0;
  bool bbb = false;
  while (p < n) {
    if (b[p] == '\r' || b[p] == '\n') {
      crlf++;
      p++;
      if (crlf == 3)
        break;
    } else if (crlf > 0) {
      p--;
      break;
    } else if (is_alpha(b[p])) {
      size_t i = 1;
      if (bbb)
        return off;
      while (p + i < n && i < 3 && is_alpha(b[p + i]))
        i++;
      if (p + i >= n || !is_space(b[p + i]))
        return off;
      bbb = true;
      p += i;
    } else if (is_space(b[p])) {
      p++;
    } else {
      return off;
    }
  }
  if (p + 9 <= n && all_of(b + p, 6, is_alnum) &&
      memcmp(b + p + 6, "\r\r\n", 3) == 0)
    p += 9;
  *len = p - (size_t)off;
  return off;
}

void pqact_remove_wmo(const uint8_t *data, size_t len, size_t *start,
                      size_t *out_len) {
  size_t s = 0, n = len, hlen;
  *start = 0;
  *out_len = len;
  if (len < 21)
    return;
  if (memcmp(data, "\001\r\r\n", 4) == 0 && all_of(data + 4, 3, is_digit) &&
      memcmp(data + 7, " \r\r\n", 4) == 0) {
    s = 11;
    n = len - 15; /* the 4-byte trailer, whatever it holds */
  }
  /* the search covers the trailer too, as LDM's */
  long off = wmo_heading(data + s, len - s, &hlen);
  if (off >= 0) {
    size_t cut = (size_t)off + hlen;
    s += cut;
    n = cut < n ? n - cut : 0;
  }
  *start = s;
  *out_len = n;
}

size_t pqact_strip(uint8_t *data, size_t len) {
  size_t w = 0;
  for (size_t r = 0; r < len; r++) {
    uint8_t c = data[r];
    if ((c < 0x20 || c == 0x7f) && c != '\n')
      continue;
    data[w++] = c;
  }
  return w;
}

static uint8_t *put_bytes(uint8_t *p, const void *v, size_t n) {
  memcpy(p, v, n);
  return p + n;
}

size_t pqact_metadata(const pq_prod_info *info, uint32_t data_size,
                      uint8_t *buf) {
  uint32_t ilen = (uint32_t)strlen(info->ident);
  uint32_t olen = (uint32_t)strlen(info->origin);
  uint32_t total = PQACT_META_FIXED + 4 + ilen + 4 + olen;
  uint64_t sec = (uint64_t)info->arrival.sec;
  int32_t usec = info->arrival.usec;
  uint8_t *p = buf;
  p = put_bytes(p, &total, 4);
  p = put_bytes(p, info->signature, PQ_SIGLEN);
  p = put_bytes(p, &data_size, 4);
  p = put_bytes(p, &sec, 8);
  p = put_bytes(p, &usec, 4);
  p = put_bytes(p, &info->feedtype, 4);
  p = put_bytes(p, &info->seqno, 4);
  p = put_bytes(p, &ilen, 4);
  p = put_bytes(p, info->ident, ilen);
  p = put_bytes(p, &olen, 4);
  p = put_bytes(p, info->origin, olen);
  return (size_t)(p - buf);
}

/* ---- writing ---- */

static int write_all(int fd, const uint8_t *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR)
        continue;
      return -1;
    }
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

static int file_out(struct output *o, const uint8_t *meta, size_t mlen,
                    const uint8_t *data, size_t len) {
  bool over = (o->flags & OPT_OVERWRITE) != 0;
  if (o->type == PQACT_STDIOFILE) { /* -overwrite: as LDM's, seek, write,
                                       cut the file, and let stdio flush */
    if ((over && fseek(o->fp, 0, SEEK_SET) != 0) ||
        fwrite(data, 1, len, o->fp) != len ||
        (over && ftruncate(fileno(o->fp), (off_t)len) != 0) ||
        ((o->flags & OPT_FLUSH) && fflush(o->fp) != 0))
      return -1;
    return 0;
  }
  if (over && lseek(o->fd, 0, SEEK_SET) < 0)
    return -1;
  if (write_all(o->fd, meta, mlen) != 0 || write_all(o->fd, data, len) != 0)
    return -1;
  if (over && ftruncate(o->fd, (off_t)(mlen + len)) != 0)
    return -1;
  if ((o->flags & OPT_FLUSH) && fsync(o->fd) != 0)
    return -1;
  return 0;
}

int pqact_file_action(struct pqact_outputs *outs, enum pqact_action type,
                      int argc, char **argv, const pq_prod_info *info,
                      const void *data) {
  unsigned flags;
  (void)pqact_decode_options(type, argc, argv, &flags, NULL, NULL, NULL);
  if (argc == 0) {
    log_error("%s: no path", pqact_action_name(type));
    return -1;
  }
  const char *path = argv[argc - 1];
  struct output *o = find_output(outs, type, path);
  /* FILE -close to a path not open: opened, written and closed here, not
   * kept in the set (no allocation, no hashing, no clock per product);
   * descriptors made room for as for any output */
  struct output once;
  bool is_once = false;
  if (o != NULL) {
    unlink_output(outs, o);
    push_front(outs, o);
    o->last_used = outs->now();
  } else if (type == PQACT_FILE && (flags & OPT_CLOSE)) {
    pqact_outputs_make_room(outs);
    int fd = open_path(outs, path, flags);
    if (fd < 0)
      return -1;
    once = (struct output){
        .type = type, .path = (char *)path, .flags = flags, .fd = fd};
    o = &once;
    is_once = true;
  } else if ((o = open_output(outs, type, path, flags)) == NULL) {
    return -1;
  } else {
    o->last_used = outs->now();
  }
  const bool edex = (o->flags & OPT_EDEX) != 0;
  if (edex && outs->edex == NULL) /* needs pqact -e */
    log_error("Notification specified but shared memory is not available. "
              "(\"%s\")", /* LDM's words, then the path */
              path);

  size_t start = 0, len = (size_t)info->size;
  if (o->flags & OPT_REMOVEWMO)
    pqact_remove_wmo(data, len, &start, &len);
  const uint8_t *bytes = (const uint8_t *)data + start;
  uint8_t *copy = NULL;
  if (o->flags & OPT_STRIP) {
    copy = malloc(len > 0 ? len : 1);
    if (copy == NULL) {
      log_error("cannot strip %s for \"%s\": %s", info->ident, path,
                strerror(ENOMEM));
      return -1;
    }
    memcpy(copy, bytes, len);
    len = pqact_strip(copy, len);
    bytes = copy;
  }
  uint8_t meta[PQACT_META_FIXED + 8 + PQ_IDENT_MAX + PQ_ORIGIN_MAX];
  size_t mlen = 0;
  if (o->flags & OPT_METADATA)
    mlen = pqact_metadata(info, (uint32_t)len, meta); /* what is written */
  int rc = file_out(o, meta, mlen, bytes, len);
  free(copy);
  if (rc != 0) {
    log_error("cannot write %s to \"%s\": %s", info->ident, path,
              strerror(errno));
    if (is_once)
      (void)close_file(o, "failed");
    else
      close_output(outs, o, "failed");
    return -1;
  }
  if (o->flags & OPT_LOG) {
    char line[600];
    pq_prod_info_format(info, ldm_log_enabled(LDM_LOG_DEBUG), line,
                        sizeof line);
    /* LDM's exact words and case: sites' scripts grep for them (our
     * pqutils/pqact/pqact.1, -log) */
    log_notice("%s in \"%s\": %s",
               type == PQACT_STDIOFILE ? "StdioFiled" : "Filed", path, line);
  }
  if ((o->flags & OPT_CLOSE) &&
      (is_once ? close_file(o, "closed") : close_output(outs, o, "closed")) !=
          0)
    return -1;
  /* -edex: once the file is written (and closed, with -close), the path as
   * the action gives it; a notice that cannot be given is logged, the
   * product filed all the same (as LDM's) */
  if (edex && outs->edex != NULL)
    (void)pqact_edex_notify(outs->edex, path, info->ident);
  return 0;
}

/* ---- outputs that other parts open ---- */

void *pqact_outputs_get(struct pqact_outputs *outs, enum pqact_action type,
                        const char *path) {
  struct output *o = find_output(outs, type, path);
  if (o == NULL)
    return NULL;
  unlink_output(outs, o);
  push_front(outs, o);
  o->last_used = outs->now();
  return o->handle;
}

void pqact_outputs_make_room(struct pqact_outputs *outs) {
  while (outs->n >= outs->max && outs->n > 0)
    close_lru(outs, "least-recently-used");
}

bool pqact_outputs_close_lru(struct pqact_outputs *outs) {
  return close_lru(outs, "least-recently-used");
}

int pqact_outputs_add(struct pqact_outputs *outs, enum pqact_action type,
                      const char *path, void *handle,
                      pqact_output_close_fn *close_fn) {
  struct output *o = calloc(1, sizeof *o);
  if (o == NULL || (o->path = strdup(path)) == NULL) {
    log_error("cannot keep \"%s\" open: %s", path, strerror(ENOMEM));
    free(o);
    (void)close_fn(handle, path);
    return -1;
  }
  o->type = type;
  o->fd = -1;
  o->handle = handle;
  o->close_fn = close_fn;
  o->last_used = outs->now();
  o->hash = hash_of(type, path);
  hash_insert(outs, o);
  push_front(outs, o);
  outs->n++;
  return 0;
}

int pqact_outputs_close(struct pqact_outputs *outs, enum pqact_action type,
                        const char *path, const char *why) {
  struct output *o = find_output(outs, type, path);
  return o == NULL ? 0 : close_output(outs, o, why);
}
