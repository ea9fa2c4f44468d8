/*
 * snapshot.c - writing and reading the snapshot files of pqsave and
 * pqrestore (the format is documented in snapshot.h): little-endian frames
 * with a CRC-32C per record and a trailer that counts the records and
 * chains their checksums, so that a truncated, damaged or spliced file is
 * refused as a whole before anything is restored from it.
 *
 * Writing goes through a buffer, with large data written straight from the
 * queue's mapping, and stops waiting for a slow standard output when a
 * stop is asked for (cli_io.h); the file is built under a temporary name
 * and renamed into place after fsync.  Reading is a buffered stream with an
 * exact byte offset for every message.  The CRC is the queue library's,
 * pq_crc32c() (pq/pq.h).
 */
#include "pqutils/queue/snapshot.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pqutils/common/cli_io.h"

#define BUF_SIZE (1u << 20)
#define MAGIC_HEADER "LDMPQSNP"
#define MAGIC_RECORD 0x52535150u  /* "PQSR" */
#define MAGIC_TRAILER 0x45535150u /* "PQSE" */

/* ---- little-endian fields ---- */

static void put16(uint8_t *p, uint16_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++)
    p[i] = (uint8_t)(v >> (8 * i));
}

static uint16_t get16(const uint8_t *p) {
  return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}

static uint64_t get64(const uint8_t *p) {
  return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

__attribute__((format(printf, 3, 4))) static int fail(char *err, size_t errlen,
                                                      const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (err != NULL && errlen > 0)
    vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
  return -1;
}

static void encode_header(uint8_t h[SNAP_HEADER_SIZE],
                          const struct snap_meta *m) {
  memset(h, 0, SNAP_HEADER_SIZE);
  memcpy(h, MAGIC_HEADER, 8);
  put32(h + 8, SNAP_VERSION);
  put32(h + 12, SNAP_HEADER_SIZE);
  put64(h + 16, m->data_size);
  put64(h + 24, m->slots);
  put64(h + 32, m->saved_us);
  put64(h + 40, m->newest_us);
  put32(h + 60, pq_crc32c(0, h, 60));
}

/* ---- writing ---- */

struct snap_writer {
  int fd;
  bool to_stdout;
  char *path, *tmp;
  uint8_t *buf;
  size_t len;
  uint32_t chain;
  uint64_t count, bytes;
};

/* Write n bytes; a reader of standard output that stops reading holds us
 * only until a stop is asked for (cli_io.h: EINTR). */
static int w_write(snap_writer *w, const void *p, size_t n, char *err,
                   size_t errlen) {
  if (cli_io_write_all(w->fd, p, n) != 0)
    return fail(err, errlen, "cannot write %s: %s", w->tmp ? w->tmp : "-",
                strerror(errno));
  return 0;
}

static int w_flush(snap_writer *w, char *err, size_t errlen) {
  if (w->len > 0 && w_write(w, w->buf, w->len, err, errlen) != 0)
    return -1;
  w->len = 0;
  return 0;
}

static int w_put(snap_writer *w, const void *p, size_t n, char *err,
                 size_t errlen) {
  if (w->len + n > BUF_SIZE && w_flush(w, err, errlen) != 0)
    return -1;
  if (n >= BUF_SIZE / 2) /* large data: straight from the caller */
    return w_write(w, p, n, err, errlen);
  memcpy(w->buf + w->len, p, n);
  w->len += n;
  return 0;
}

static void w_free(snap_writer *w) {
  free(w->path);
  free(w->tmp);
  free(w->buf);
  free(w);
}

int snap_create(const char *path, const struct snap_meta *meta,
                snap_writer **wp, char *err, size_t errlen) {
  snap_writer *w = calloc(1, sizeof *w);
  if (w == NULL || (w->buf = malloc(BUF_SIZE)) == NULL ||
      (w->path = strdup(path)) == NULL) {
    if (w != NULL)
      w_free(w);
    return fail(err, errlen, "cannot allocate a snapshot buffer: %s",
                strerror(ENOMEM));
  }
  if (strcmp(path, "-") == 0) {
    w->fd = STDOUT_FILENO;
    w->to_stdout = true;
    cli_io_prepare_output(w->fd);
  } else {
    size_t n = strlen(path) + 16;
    w->tmp = malloc(n);
    if (w->tmp == NULL) {
      w_free(w);
      return fail(err, errlen, "cannot allocate: %s", strerror(ENOMEM));
    }
    snprintf(w->tmp, n, "%s.tmpXXXXXX", path);
    w->fd = mkostemp(w->tmp, O_CLOEXEC);
    if (w->fd < 0) {
      int e = errno;
      snprintf(w->tmp, n, "%s", path);
      fail(err, errlen, "cannot create a temporary file beside %s: %s", path,
           strerror(e));
      w_free(w);
      return -1;
    }
    mode_t mask = umask(0);
    umask(mask);
    (void)fchmod(w->fd, 0660 & ~mask); /* a queue's products: as pq_create */
  }
  uint8_t h[SNAP_HEADER_SIZE];
  encode_header(h, meta);
  w->chain = pq_crc32c(0, h, sizeof h);
  if (w_put(w, h, sizeof h, err, errlen) != 0) {
    snap_abort(w);
    return -1;
  }
  *wp = w;
  return 0;
}

int snap_write(snap_writer *w, const pq_prod_info *info, uint64_t inserted_us,
               const void *data, char *err, size_t errlen) {
  size_t olen = strnlen(info->origin, PQ_ORIGIN_MAX);
  size_t ilen = strnlen(info->ident, PQ_IDENT_MAX);
  uint8_t h[SNAP_RECORD_SIZE];
  memset(h, 0, sizeof h);
  put32(h, MAGIC_RECORD);
  put16(h + 4, (uint16_t)olen);
  put16(h + 6, (uint16_t)ilen);
  put64(h + 8, inserted_us);
  put64(h + 16, (uint64_t)info->arrival.sec);
  put32(h + 24, (uint32_t)info->arrival.usec);
  put32(h + 28, info->feedtype);
  put32(h + 32, info->seqno);
  put64(h + 40, info->size);
  memcpy(h + 48, info->signature, PQ_SIGLEN);
  uint32_t crc = pq_crc32c(0, h, sizeof h);
  crc = pq_crc32c(crc, info->origin, olen);
  crc = pq_crc32c(crc, info->ident, ilen);
  crc = pq_crc32c(crc, data, (size_t)info->size);
  uint8_t c[4];
  put32(c, crc);
  if (w_put(w, h, sizeof h, err, errlen) != 0 ||
      w_put(w, info->origin, olen, err, errlen) != 0 ||
      w_put(w, info->ident, ilen, err, errlen) != 0 ||
      w_put(w, data, (size_t)info->size, err, errlen) != 0 ||
      w_put(w, c, sizeof c, err, errlen) != 0)
    return -1;
  w->chain = pq_crc32c(w->chain, c, sizeof c);
  w->count++;
  w->bytes += info->size;
  return 0;
}

static void sync_dir(const char *path) {
  char *copy = strdup(path);
  if (copy == NULL)
    return;
  int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    (void)fsync(fd);
    close(fd);
  }
  free(copy);
}

int snap_commit(snap_writer *w, char *err, size_t errlen) {
  uint8_t t[SNAP_TRAILER_SIZE];
  memset(t, 0, sizeof t);
  put32(t, MAGIC_TRAILER);
  put64(t + 8, w->count);
  put64(t + 16, w->bytes);
  put32(t + 24, w->chain);
  put32(t + 28, pq_crc32c(0, t, 28));
  if (w_put(w, t, sizeof t, err, errlen) != 0 || w_flush(w, err, errlen) != 0)
    goto bad;
  if (w->to_stdout) {
    w_free(w);
    return 0;
  }
  if (fsync(w->fd) != 0) {
    fail(err, errlen, "cannot fsync %s: %s", w->tmp, strerror(errno));
    goto bad;
  }
  if (close(w->fd) != 0) {
    w->fd = -1;
    fail(err, errlen, "cannot close %s: %s", w->tmp, strerror(errno));
    goto bad;
  }
  w->fd = -1;
  if (rename(w->tmp, w->path) != 0) {
    fail(err, errlen, "cannot rename %s to %s: %s", w->tmp, w->path,
         strerror(errno));
    goto bad;
  }
  sync_dir(w->path);
  w_free(w);
  return 0;
bad:
  snap_abort(w);
  return -1;
}

void snap_abort(snap_writer *w) {
  if (w == NULL)
    return;
  if (!w->to_stdout) {
    if (w->fd >= 0)
      close(w->fd);
    if (w->tmp != NULL)
      unlink(w->tmp);
  }
  w_free(w);
}

uint64_t snap_written_count(const snap_writer *w) {
  return w->count;
}

uint64_t snap_written_bytes(const snap_writer *w) {
  return w->bytes;
}

/* ---- reading ---- */

struct snap_reader {
  int fd;
  char *path;
  uint8_t *buf;
  size_t pos, len;
  uint64_t off;       /* file offset of the next byte to consume */
  uint64_t file_size; /* when opened */
  uint8_t header[SNAP_HEADER_SIZE];
  uint32_t chain;
  uint64_t count, bytes;
  /* the current record */
  bool in_record;
  uint64_t rec_off;
  uint32_t crc;
  struct snap_record cur;
};

/* read(), again after EINTR. */
static ssize_t read_retry(int fd, void *buf, size_t n) {
  ssize_t k;
  do
    k = read(fd, buf, n);
  while (k < 0 && errno == EINTR);
  return k;
}

/* Refill the empty buffer: the count read (0 at end of file), or -1 with
 * errno. */
static ssize_t r_refill(snap_reader *r) {
  ssize_t k = read_retry(r->fd, r->buf, BUF_SIZE);
  if (k > 0) {
    r->pos = 0;
    r->len = (size_t)k;
  }
  return k;
}

/* Read up to n bytes (dst NULL: consume them); returns the count read, which
 * is short only at end of file, or -1 with errno. */
static ssize_t r_read(snap_reader *r, void *dst, size_t n) {
  size_t got = 0;
  while (got < n) {
    if (r->pos == r->len) {
      size_t left = n - got;
      if (dst != NULL && left >= BUF_SIZE) { /* large: no double copy */
        ssize_t k = read_retry(r->fd, (uint8_t *)dst + got, left);
        if (k < 0)
          return -1;
        if (k == 0)
          break;
        got += (size_t)k;
        r->off += (uint64_t)k;
        continue;
      }
      ssize_t k = r_refill(r);
      if (k < 0)
        return -1;
      if (k == 0)
        break;
    }
    size_t take = r->len - r->pos < n - got ? r->len - r->pos : n - got;
    if (dst != NULL)
      memcpy((uint8_t *)dst + got, r->buf + r->pos, take);
    r->pos += take;
    r->off += take;
    got += take;
  }
  return (ssize_t)got;
}

/* Read exactly n bytes or fail with "truncated". */
static int r_exact(snap_reader *r, void *dst, size_t n, const char *what,
                   char *err, size_t errlen) {
  uint64_t at = r->off;
  ssize_t k = r_read(r, dst, n);
  if (k < 0)
    return fail(err, errlen, "cannot read %s: %s", r->path, strerror(errno));
  if ((size_t)k < n)
    return fail(err, errlen,
                "%s is truncated: it ends at byte %llu, inside %s that "
                "starts at byte %llu, after %llu complete products",
                r->path, (unsigned long long)(at + (uint64_t)k), what,
                (unsigned long long)at, (unsigned long long)r->count);
  return 0;
}

int snap_open(const char *path, snap_reader **rp, struct snap_meta *meta,
              char *err, size_t errlen) {
  snap_reader *r = calloc(1, sizeof *r);
  if (r != NULL)
    r->fd = -1;
  if (r == NULL || (r->buf = malloc(BUF_SIZE)) == NULL ||
      (r->path = strdup(path)) == NULL) {
    snap_close(r);
    return fail(err, errlen, "cannot allocate a snapshot buffer: %s",
                strerror(ENOMEM));
  }
  r->fd = open(path, O_RDONLY | O_CLOEXEC);
  if (r->fd < 0) {
    fail(err, errlen, "cannot open %s: %s", path, strerror(errno));
    snap_close(r);
    return -1;
  }
  struct stat st;
  if (fstat(r->fd, &st) != 0) {
    fail(err, errlen, "cannot fstat %s: %s", path, strerror(errno));
    snap_close(r);
    return -1;
  }
  if (!S_ISREG(st.st_mode)) {
    fail(err, errlen, "cannot use %s: not a regular file", path);
    snap_close(r);
    return -1;
  }
  r->file_size = (uint64_t)st.st_size;
  uint8_t *h = r->header;
  ssize_t k = r_read(r, h, SNAP_HEADER_SIZE);
  if (k < 0) {
    fail(err, errlen, "cannot read %s: %s", path, strerror(errno));
  } else if ((size_t)k < 8 || memcmp(h, MAGIC_HEADER, 8) != 0) {
    fail(err, errlen, "%s is not a queue snapshot (no LDMPQSNP magic)", path);
  } else if ((size_t)k < SNAP_HEADER_SIZE) {
    fail(err, errlen, "%s is truncated: the header is incomplete", path);
  } else if (get32(h + 8) != SNAP_VERSION) {
    fail(err, errlen,
         "%s is a snapshot of format version %u; this program reads "
         "version %u",
         path, get32(h + 8), SNAP_VERSION);
  } else if (get32(h + 12) != SNAP_HEADER_SIZE ||
             get32(h + 60) != pq_crc32c(0, h, 60)) {
    fail(err, errlen, "%s: the snapshot header is damaged (checksum)", path);
  } else {
    meta->data_size = get64(h + 16);
    meta->slots = get64(h + 24);
    meta->saved_us = get64(h + 32);
    meta->newest_us = get64(h + 40);
    r->chain = pq_crc32c(0, h, SNAP_HEADER_SIZE);
    *rp = r;
    return 0;
  }
  snap_close(r);
  return -1;
}

/* The trailer, at r->off - 4 (its magic was read); then end of file. */
static int read_trailer(snap_reader *r, const uint8_t magic[4], char *err,
                        size_t errlen) {
  uint8_t t[SNAP_TRAILER_SIZE];
  uint64_t at = r->off - 4;
  memcpy(t, magic, 4);
  if (r_exact(r, t + 4, sizeof t - 4, "the trailer", err, errlen) != 0)
    return -1;
  if (get32(t + 28) != pq_crc32c(0, t, 28))
    return fail(err, errlen, "%s: the trailer at byte %llu is damaged", r->path,
                (unsigned long long)at);
  if (get64(t + 8) != r->count || get64(t + 16) != r->bytes)
    return fail(err, errlen,
                "%s: the trailer counts %llu products of %llu bytes, the file "
                "holds %llu of %llu",
                r->path, (unsigned long long)get64(t + 8),
                (unsigned long long)get64(t + 16), (unsigned long long)r->count,
                (unsigned long long)r->bytes);
  if (get32(t + 24) != r->chain)
    return fail(err, errlen,
                "%s: the chain checksum does not match: products are missing, "
                "repeated or out of order",
                r->path);
  uint8_t extra;
  ssize_t k = r_read(r, &extra, 1);
  if (k != 0)
    return fail(err, errlen, "%s: %s after the trailer at byte %llu", r->path,
                k < 0 ? strerror(errno) : "bytes follow",
                (unsigned long long)at);
  return 0;
}

int snap_next(snap_reader *r, struct snap_record *rec, char *err,
              size_t errlen) {
  if (r->in_record && snap_read_data(r, NULL, err, errlen) != 0)
    return -1;
  uint8_t h[SNAP_RECORD_SIZE];
  uint64_t at = r->off;
  ssize_t k = r_read(r, h, 4);
  if (k < 0)
    return fail(err, errlen, "cannot read %s: %s", r->path, strerror(errno));
  if (k < 4)
    return fail(err, errlen,
                "%s is truncated: it ends at byte %llu without its trailer, "
                "after %llu complete products",
                r->path, (unsigned long long)(at + (uint64_t)k),
                (unsigned long long)r->count);
  if (get32(h) == MAGIC_TRAILER)
    return read_trailer(r, h, err, errlen) == 0 ? 0 : -1;
  if (get32(h) != MAGIC_RECORD)
    return fail(err, errlen,
                "%s is damaged: no product record at byte %llu (after %llu "
                "products)",
                r->path, (unsigned long long)at, (unsigned long long)r->count);
  if (r_exact(r, h + 4, sizeof h - 4, "a product record", err, errlen) != 0)
    return -1;
  pq_prod_info *info = &rec->info;
  memset(rec, 0, sizeof *rec);
  size_t olen = get16(h + 4), ilen = get16(h + 6);
  int32_t usec = (int32_t)get32(h + 24);
  info->size = get64(h + 40);
  if (olen > PQ_ORIGIN_MAX || ilen > PQ_IDENT_MAX || usec < 0 ||
      usec > 999999 || get32(h + 36) != 0)
    return fail(err, errlen,
                "%s is damaged: the product record at byte %llu has "
                "impossible fields",
                r->path, (unsigned long long)at);
  if (info->size > r->file_size - (r->off < r->file_size ? r->off : 0))
    return fail(err, errlen,
                "%s is truncated or damaged: the product record at byte %llu "
                "claims %llu bytes of data, the file ends at byte %llu",
                r->path, (unsigned long long)at, (unsigned long long)info->size,
                (unsigned long long)r->file_size);
  rec->inserted_us = get64(h + 8);
  info->arrival.sec = (int64_t)get64(h + 16);
  info->arrival.usec = usec;
  info->feedtype = get32(h + 28);
  info->seqno = get32(h + 32);
  memcpy(info->signature, h + 48, PQ_SIGLEN);
  if (r_exact(r, info->origin, olen, "a product record", err, errlen) != 0 ||
      r_exact(r, info->ident, ilen, "a product record", err, errlen) != 0)
    return -1;
  if (memchr(info->origin, '\0', olen) || memchr(info->ident, '\0', ilen))
    return fail(err, errlen,
                "%s is damaged: the product record at byte %llu has a NUL "
                "in its origin or identifier",
                r->path, (unsigned long long)at);
  r->crc = pq_crc32c(0, h, sizeof h);
  r->crc = pq_crc32c(r->crc, info->origin, olen);
  r->crc = pq_crc32c(r->crc, info->ident, ilen);
  r->cur = *rec;
  r->rec_off = at;
  r->in_record = true;
  return 1;
}

int snap_read_data(snap_reader *r, void *dst, char *err, size_t errlen) {
  if (!r->in_record)
    return fail(err, errlen, "%s: no current product record", r->path);
  uint64_t size = r->cur.info.size, done = 0;
  while (done < size) {
    size_t n = size - done > BUF_SIZE ? BUF_SIZE : (size_t)(size - done);
    if (dst != NULL) {
      uint8_t *p = (uint8_t *)dst + done;
      if (r_exact(r, p, n, "product data", err, errlen) != 0)
        return -1;
      r->crc = pq_crc32c(r->crc, p, n);
    } else {
      /* Check without storing: hash what sits in the buffer. */
      if (r->pos == r->len) {
        ssize_t k = r_refill(r);
        if (k <= 0)
          return k < 0 ? fail(err, errlen, "cannot read %s: %s", r->path,
                              strerror(errno))
                       : r_exact(r, NULL, 1, "product data", err, errlen);
      }
      if (n > r->len - r->pos)
        n = r->len - r->pos;
      r->crc = pq_crc32c(r->crc, r->buf + r->pos, n);
      r->pos += n;
      r->off += n;
    }
    done += n;
  }
  uint8_t c[4];
  if (r_exact(r, c, sizeof c, "a product checksum", err, errlen) != 0)
    return -1;
  r->in_record = false;
  if (get32(c) != r->crc)
    return fail(err, errlen,
                "%s is damaged: product %llu (%s) at byte %llu fails its "
                "checksum",
                r->path, (unsigned long long)r->count + 1, r->cur.info.ident,
                (unsigned long long)r->rec_off);
  r->chain = pq_crc32c(r->chain, c, sizeof c);
  r->count++;
  r->bytes += size;
  return 0;
}

int snap_verify(snap_reader *r, uint64_t *count, uint64_t *bytes, char *err,
                size_t errlen) {
  struct snap_record rec;
  int rc;
  while ((rc = snap_next(r, &rec, err, errlen)) == 1)
    if (snap_read_data(r, NULL, err, errlen) != 0)
      return -1;
  if (rc < 0)
    return -1;
  if (count != NULL)
    *count = r->count;
  if (bytes != NULL)
    *bytes = r->bytes;
  /* Back to the first record. */
  if (lseek(r->fd, SNAP_HEADER_SIZE, SEEK_SET) < 0)
    return fail(err, errlen, "cannot seek in %s: %s", r->path, strerror(errno));
  r->pos = r->len = 0;
  r->off = SNAP_HEADER_SIZE;
  r->chain = pq_crc32c(0, r->header, SNAP_HEADER_SIZE);
  r->count = r->bytes = 0;
  r->in_record = false;
  return 0;
}

void snap_close(snap_reader *r) {
  if (r == NULL)
    return;
  if (r->fd >= 0)
    close(r->fd);
  free(r->buf);
  free(r->path);
  free(r);
}
