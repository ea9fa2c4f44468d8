/*
 * resume.c - a requester's resume file: its name, its creation (temporary
 * file linked into place), its lock, and the two alternating slots that
 * hold the signature of the last product received (see resume.h for when
 * it is written, how far it may lag, and how that gives exactly once).
 *
 * A slot is one text line of SLOT_LEN bytes:
 *   <sequence %020> <signature 32 hex> <created us %020> <check %08x>
 * padded with spaces and ended by a newline; the check is FNV-1a over the
 * bytes before it.  A slot of spaces (a new file) or with a wrong check is
 * empty.
 */
#include "ldmd/server/resume.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SLOT_LEN 96
#define NSLOTS 2
#define CHECK_AT 75 /* the check's offset in a slot */
#define OPEN_TRIES 8

struct ldmd_resume {
  int fd;
  bool have;
  uint64_t seq; /* of the current point; the next write uses seq + 1 */
  uint8_t sig[PQ_SIGLEN];
  pq_timestamp created;
  char path[4096];
};

/* Put a message into err (may be NULL) and return LDMD_RESUME_ESYS. */
__attribute__((format(printf, 3, 4))) static int fail(char *err, size_t len,
                                                      const char *fmt, ...) {
  if (err != NULL && len > 0) {
    va_list ap;

    va_start(ap, fmt);
    (void)vsnprintf(err, len, fmt, ap);
    va_end(ap);
  }
  return LDMD_RESUME_ESYS;
}

static uint32_t fnv1a(const char *p, size_t n) {
  uint32_t h = 2166136261u;
  size_t i;

  for (i = 0; i < n; i++) {
    h ^= (uint8_t)p[i];
    h *= 16777619u;
  }
  return h;
}

int ldmd_resume_path(const char *state_dir, const char *queue_path,
                     const ldmd_resume_key *key, char *buf, size_t len) {
  size_t hlen = strlen(key->host), plen = strlen(key->pattern), n = 0;
  const char *slash = strrchr(queue_path, '/');
  const char *qname = slash != NULL ? slash + 1 : queue_path;
  uint32_t port = key->port, ft = key->feedtype;
  uint8_t sig[PQ_SIGLEN];
  char hex[33], dir[4096];
  uint8_t *blob = malloc(hlen + plen + 8);
  int w;

  if (blob == NULL)
    return -1;
  memcpy(blob + n, key->host, hlen);
  n += hlen;
  memcpy(blob + n, &port, 4);
  n += 4;
  memcpy(blob + n, &ft, 4);
  n += 4;
  memcpy(blob + n, key->pattern, plen);
  n += plen;
  (void)pq_md5(blob, n, sig);
  free(blob);
  pq_sig_format(sig, hex);
  if (state_dir != NULL && state_dir[0] != '\0')
    snprintf(dir, sizeof dir, "%s", state_dir);
  else if (slash == queue_path)
    snprintf(dir, sizeof dir, "/");
  else if (slash != NULL)
    snprintf(dir, sizeof dir, "%.*s", (int)(slash - queue_path), queue_path);
  else
    snprintf(dir, sizeof dir, ".");
  w = snprintf(buf, len, "%s%s%s.%s.resume", dir,
               dir[strlen(dir) - 1] == '/' ? "" : "/", qname, hex);
  return w < 0 || (size_t)w >= len ? -1 : 0;
}

/* Format slot text for seq into out[SLOT_LEN]. */
static void slot_format(uint64_t seq, const uint8_t sig[PQ_SIGLEN],
                        pq_timestamp created, char out[SLOT_LEN]) {
  char hex[33], text[SLOT_LEN + 1];

  pq_sig_format(sig, hex);
  snprintf(text, sizeof text, "%020" PRIu64 " %s %020" PRIu64 " ", seq, hex,
           pq_ts_to_us(created));
  snprintf(text + CHECK_AT, sizeof text - CHECK_AT, "%08" PRIx32,
           fnv1a(text, CHECK_AT));
  memset(out, ' ', SLOT_LEN);
  memcpy(out, text, strlen(text));
  out[SLOT_LEN - 1] = '\n';
}

/* Parse a slot.  @return true if valid */
static bool slot_parse(const char *s, uint64_t *seq, uint8_t sig[PQ_SIGLEN],
                       pq_timestamp *created) {
  char field[33], check[9];
  unsigned long long a, b;
  char *end;

  memcpy(check, s + CHECK_AT, 8);
  check[8] = '\0';
  if (strtoul(check, &end, 16) != fnv1a(s, CHECK_AT) || *end != '\0')
    return false;
  memcpy(field, s + 21, 32);
  field[32] = '\0';
  if (pq_sig_parse(field, sig) != 0)
    return false;
  if (sscanf(s, "%20llu", &a) != 1 || sscanf(s + 54, "%20llu", &b) != 1)
    return false;
  *seq = a;
  *created = pq_ts_from_us(b);
  return true;
}

/* Read both slots; keep the valid one with the higher sequence. */
static int load(ldmd_resume *r, char *err, size_t errlen) {
  char buf[NSLOTS * SLOT_LEN];
  ssize_t n = pread(r->fd, buf, sizeof buf, 0);
  int i;

  if (n < 0)
    return fail(err, errlen, "cannot read %s: pread: %s", r->path,
                strerror(errno));
  for (i = 0; i < NSLOTS && (size_t)n >= (size_t)(i + 1) * SLOT_LEN; i++) {
    uint8_t sig[PQ_SIGLEN];
    pq_timestamp t;
    uint64_t seq;

    if (slot_parse(buf + i * SLOT_LEN, &seq, sig, &t) &&
        (!r->have || seq > r->seq)) {
      r->have = true;
      r->seq = seq;
      memcpy(r->sig, sig, PQ_SIGLEN);
      r->created = t;
    }
  }
  return LDMD_RESUME_OK;
}

/* Write all of buf to fd.  @return 0 or -1 (errno) */
static int write_all(int fd, const char *buf, size_t len) {
  while (len > 0) {
    ssize_t w = write(fd, buf, len);

    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return -1;
    buf += w;
    len -= (size_t)w;
  }
  return 0;
}

/* Make the file: two empty slots and the comment, in a temporary file
 * linked into place (never over a file that appeared meanwhile). */
static int create(const char *path, const char *describe, char *err,
                  size_t errlen) {
  char tmp[4200], head[NSLOTS * SLOT_LEN], *text;
  int fd, rc = 0;
  size_t len;

  memset(head, ' ', sizeof head);
  head[SLOT_LEN - 1] = head[2 * SLOT_LEN - 1] = '\n';
  len = strlen(describe) + 256;
  text = malloc(len);
  if (text == NULL)
    return fail(err, errlen, "cannot create %s: %s", path, strerror(ENOMEM));
  snprintf(text, len,
           "# ldmd: where the requester of %s resumes.\n"
           "# Each of the two lines above: sequence, signature of the last "
           "product received, its creation time (us), check.\n",
           describe);
  snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
  /* The server's user only: where its feeds stand is nobody else's. */
  fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    free(text);
    return fail(err, errlen, "cannot create %s: open: %s", tmp,
                strerror(errno));
  }
  if (write_all(fd, head, sizeof head) != 0 ||
      write_all(fd, text, strlen(text)) != 0)
    rc = fail(err, errlen, "cannot write %s: write: %s", tmp, strerror(errno));
  free(text);
  if (close(fd) != 0 && rc == 0)
    rc = fail(err, errlen, "cannot write %s: close: %s", tmp, strerror(errno));
  if (rc == 0 && link(tmp, path) != 0 && errno != EEXIST)
    rc = fail(err, errlen, "cannot create %s: link: %s", path, strerror(errno));
  (void)unlink(tmp);
  return rc;
}

/* Lock fd (whole file, write); check that it is still path's file.
 * @return LDMD_RESUME_OK, LDMD_RESUME_BUSY, 1 + LDMD_RESUME_BUSY (the file
 *         was replaced: open again) or LDMD_RESUME_ESYS */
static int lock(int fd, const char *path, char *err, size_t errlen) {
  struct flock fl;
  struct stat a, b;

  memset(&fl, 0, sizeof fl);
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  if (fcntl(fd, F_OFD_SETLK, &fl) != 0) {
    if (errno == EAGAIN || errno == EACCES)
      return LDMD_RESUME_BUSY;
    return fail(err, errlen, "cannot lock %s: fcntl: %s", path,
                strerror(errno));
  }
  if (fstat(fd, &a) != 0)
    return fail(err, errlen, "cannot stat %s: fstat: %s", path,
                strerror(errno));
  if (stat(path, &b) != 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino)
    return LDMD_RESUME_BUSY + 1;
  return LDMD_RESUME_OK;
}

int ldmd_resume_open(const char *path, const char *describe, ldmd_resume **out,
                     char *err, size_t errlen) {
  ldmd_resume *r;
  int i, rc = LDMD_RESUME_OK;

  *out = NULL;
  r = calloc(1, sizeof *r);
  if (r == NULL)
    return fail(err, errlen, "cannot open %s: %s", path, strerror(ENOMEM));
  snprintf(r->path, sizeof r->path, "%s", path);
  for (i = 0; i < OPEN_TRIES; i++) {
    r->fd = open(path, O_RDWR | O_CLOEXEC);
    if (r->fd < 0 && errno == ENOENT) {
      rc = create(path, describe, err, errlen);
      if (rc != LDMD_RESUME_OK)
        break;
      continue;
    }
    if (r->fd < 0) {
      rc = fail(err, errlen, "cannot open %s: open: %s", path, strerror(errno));
      break;
    }
    rc = lock(r->fd, path, err, errlen);
    if (rc != LDMD_RESUME_BUSY + 1)
      break;
    close(r->fd); /* replaced while we locked: open the new one */
    r->fd = -1;
  }
  if (rc == LDMD_RESUME_BUSY + 1)
    rc = fail(err, errlen, "cannot open %s: it keeps being replaced", path);
  if (rc == LDMD_RESUME_OK)
    rc = load(r, err, errlen);
  if (rc != LDMD_RESUME_OK) {
    if (r->fd >= 0)
      close(r->fd);
    free(r);
    return rc;
  }
  *out = r;
  return LDMD_RESUME_OK;
}

bool ldmd_resume_get(const ldmd_resume *r, uint8_t sig[PQ_SIGLEN],
                     pq_timestamp *created) {
  if (!r->have)
    return false;
  memcpy(sig, r->sig, PQ_SIGLEN);
  *created = r->created;
  return true;
}

int ldmd_resume_put(ldmd_resume *r, const uint8_t sig[PQ_SIGLEN],
                    pq_timestamp created) {
  uint64_t seq = r->have ? r->seq + 1 : 1;
  char slot[SLOT_LEN];
  ssize_t w;

  slot_format(seq, sig, created, slot);
  do
    w = pwrite(r->fd, slot, SLOT_LEN, (off_t)(seq % NSLOTS) * SLOT_LEN);
  while (w < 0 && errno == EINTR);
  if (w != SLOT_LEN) {
    if (w >= 0)
      errno = ENOSPC;
    return -1;
  }
  r->have = true;
  r->seq = seq;
  memcpy(r->sig, sig, PQ_SIGLEN);
  r->created = created;
  return 0;
}

const char *ldmd_resume_file(const ldmd_resume *r) {
  return r->path;
}

void ldmd_resume_close(ldmd_resume *r) {
  if (r == NULL)
    return;
  if (r->fd >= 0)
    close(r->fd);
  free(r);
}
