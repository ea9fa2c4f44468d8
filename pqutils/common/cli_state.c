/*
 * cli_state.c - pqact's state file (cli_state.h): reading it as LDM does,
 * writing it whole and atomically, keeping its record current in place (one
 * 16-byte store into a shared mapping of the file, or one pwrite(2), per
 * product; cli_state.h says why a kill tears neither), and the low-water mark
 * over products whose actions complete out of order (a ring of the products
 * begun and not yet passed by the mark, oldest first); while decoders are
 * behind, the page that also says T1 and which decoders had not taken what
 * (cli_state.h), and reading those lines back.
 */
#include "pqutils/common/cli_state.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "ldmd/site/log.h"
#include "pqutils/common/cli_io.h"

/* A product begun and not yet passed by the mark. */
struct slot {
  uint64_t inserted_us;
  unsigned holds; /* parts still working on it; 0: done */
  bool failed;    /* a part's action failed */
};

/* A decoder behind, as its line in the page. */
struct behind_line {
  char *text; /* "#-F TYPE CMD\n" */
  size_t len; /* SIZE_MAX: it cannot be written (a newline in it) */
  uint64_t from_us;
  char *type, *cmd; /* to compare without formatting */
};

struct cli_state {
  char *path, *tmp;
  int fd;            /* the file being kept current, or -1 */
  char *map;         /* its first page, mapped shared, or NULL */
  size_t rec_len;    /* the length of its record (at offset hdr_len) */
  uint64_t mark;     /* insertion time recorded, 0 none */
  bool dirty;        /* a record written since the last fsync */
  bool write_failed; /* the last write failed (said once) */
  double synced_at;  /* monotonic time of the last fsync */
  /* the ring: products with tokens first_tok .. first_tok + n - 1 sit at
   * ring[(head + i) % cap] */
  struct slot *ring;
  size_t cap, head, n;
  uint64_t first_tok;
  size_t holds;      /* over every product, not yet released */
  uint64_t first_us; /* the first product begun this run, 0 none */
  uint64_t t1;       /* the newest product whose synchronous part was ok */
  /* the decoders behind, oldest first (by from_us) */
  struct behind_line *beh;
  size_t nbeh;
  bool ext_dirty;   /* the lines or T1 changed since the page was written */
  bool ext_on_disk; /* the file holds the lines */
};

static const char ext_intro[] =
    "# done to here but for the decoders below (this pqact; LDM's ignores "
    "it)\n";

static const size_t hdr_len = sizeof CLI_STATE_HEADER - 1;

/* ---- reading ---- */

enum cli_state_found cli_state_read(const char *path, uint64_t now_us,
                                    uint64_t *inserted_us) {
  FILE *f = fopen(path, "re");
  if (f == NULL)
    return errno == ENOENT ? CLI_STATE_ABSENT : CLI_STATE_UNREADABLE;
  /* As LDM's: skip the lines that begin with '#', then scan the time
   * (fscanf skips blanks and newlines before it). */
  int c;
  while ((c = getc(f)) == '#') {
    while ((c = getc(f)) != EOF && c != '\n')
      ;
  }
  if (c != EOF)
    ungetc(c, f);
  long sec = 0, usec = 0;
  int got = fscanf(f, "%ld.%ld", &sec, &usec);
  int err = errno;
  bool failed = ferror(f) != 0;
  fclose(f);
  if (failed) {
    errno = err;
    return CLI_STATE_UNREADABLE;
  }
  if (got != 2 || usec < 0 || usec > 999999)
    return got == 2 && sec < 0 ? CLI_STATE_NEGATIVE : CLI_STATE_MALFORMED;
  if (sec < 0)
    return CLI_STATE_NEGATIVE;
  if ((uint64_t)sec > (UINT64_MAX - 999999) / 1000000)
    return CLI_STATE_FUTURE; /* past any clock */
  *inserted_us = (uint64_t)sec * 1000000 + (uint64_t)usec;
  return *inserted_us > now_us ? CLI_STATE_FUTURE : CLI_STATE_FOUND;
}

void cli_state_format_time(uint64_t us, char buf[40]) {
  time_t sec = (time_t)(us / 1000000);
  struct tm tm;
  gmtime_r(&sec, &tm);
  size_t n = strftime(buf, 40, "%Y-%m-%d %H:%M:%S", &tm);
  snprintf(buf + n, 40 - n, ".%06llu", (unsigned long long)(us % 1000000));
}

bool cli_state_start_at(const char *path, uint64_t now_us,
                        uint64_t *inserted_us) {
  char when[40];
  switch (cli_state_read(path, now_us, inserted_us)) {
  case CLI_STATE_FOUND:
    return true;
  case CLI_STATE_ABSENT:
    break;
  case CLI_STATE_UNREADABLE:
    log_warning("cannot read the state file \"%s\": %s", path, strerror(errno));
    break;
  case CLI_STATE_MALFORMED:
    log_warning("the state file \"%s\" holds no insertion-time: ignored", path);
    break;
  case CLI_STATE_NEGATIVE:
    log_warning("the state file \"%s\" holds a negative insertion-time: "
                "ignored",
                path);
    break;
  case CLI_STATE_FUTURE:
    cli_state_format_time(*inserted_us, when);
    log_warning("the state file \"%s\" holds an insertion-time in the "
                "future (%s UTC): ignored",
                path, when);
    break;
  }
  return false;
}

size_t cli_state_format(uint64_t inserted_us, char *buf) {
  return (size_t)snprintf(buf, 32, "%" PRIu64 ".%06" PRIu64 "\n",
                          inserted_us / 1000000, inserted_us % 1000000);
}

/* "sec.usec" (six digits of microseconds) at s: the time into *us and
 * the first byte after it into *end.  0, or -1. */
static int parse_time(const char *s, uint64_t *us, const char **end) {
  uint64_t sec = 0;
  const char *p = s;
  for (; *p >= '0' && *p <= '9'; p++) {
    if (sec > UINT64_MAX / 10000000)
      return -1;
    sec = sec * 10 + (uint64_t)(*p - '0');
  }
  if (p == s || *p != '.')
    return -1;
  uint64_t usec = 0;
  for (int i = 1; i <= 6; i++) {
    if (p[i] < '0' || p[i] > '9')
      return -1;
    usec = usec * 10 + (uint64_t)(p[i] - '0');
  }
  *us = sec * 1000000 + usec;
  *end = p + 7;
  return 0;
}

void cli_state_decs_free(struct cli_state_dec *decs, size_t n) {
  for (size_t i = 0; i < n; i++) {
    free((char *)decs[i].type);
    free((char *)decs[i].cmd);
  }
  free(decs);
}

/* A "#-F TYPE CMD" line (without its newline) onto *decs.  0, or -1 if
 * memory ran out (a line that does not parse is skipped). */
static int add_dec(const char *line, struct cli_state_dec **decs, size_t *n) {
  uint64_t from;
  const char *p;
  if (parse_time(line + 2, &from, &p) != 0 || *p != ' ')
    return 0;
  const char *type = p + 1, *sp = strchr(type, ' ');
  if (sp == NULL || sp == type || sp[1] == '\0')
    return 0;
  struct cli_state_dec *d = realloc(*decs, (*n + 1) * sizeof *d);
  if (d == NULL)
    return -1;
  *decs = d;
  d[*n].from_us = from;
  d[*n].type = strndup(type, (size_t)(sp - type));
  d[*n].cmd = strdup(sp + 1);
  (*n)++;
  return d[*n - 1].type == NULL || d[*n - 1].cmd == NULL ? -1 : 0;
}

int cli_state_read_behind(const char *path, uint64_t t0, uint64_t *t1,
                          struct cli_state_dec **decs, size_t *n) {
  *t1 = 0;
  *decs = NULL;
  *n = 0;
  FILE *f = fopen(path, "re");
  if (f == NULL)
    return errno == ENOENT ? 0 : -1;
  char line[CLI_STATE_PAGE + 2];
  bool past_time = false, whole = true;
  uint64_t t = 0;
  int rc = 0;
  while (rc == 0 && fgets(line, sizeof line, f) != NULL) {
    size_t len = strlen(line);
    bool was_whole = whole;
    whole = len > 0 && line[len - 1] == '\n';
    if (!was_whole || !whole)
      continue; /* a piece of a line longer than the page: not ours */
    line[--len] = '\0';
    if (!past_time) { /* LDM's time line: the first not a comment */
      past_time = line[0] != '#' && strspn(line, " \t\r") < len;
      continue;
    }
    const char *end;
    if (strncmp(line, "#+", 2) == 0 && t == 0 &&
        parse_time(line + 2, &t, &end) != 0)
      t = 0;
    else if (strncmp(line, "#-", 2) == 0)
      rc = add_dec(line, decs, n);
  }
  int err = errno;
  if (ferror(f) != 0)
    rc = -1;
  fclose(f);
  if (rc != 0 || t <= t0) {
    cli_state_decs_free(*decs, *n);
    *decs = NULL;
    *n = 0;
    errno = err;
    return rc != 0 ? -1 : 0;
  }
  *t1 = t;
  return 0;
}

/* ---- writing ---- */

struct cli_state *cli_state_new(const char *path) {
  struct cli_state *st = calloc(1, sizeof *st);
  if (st == NULL)
    return NULL;
  size_t len = strlen(path);
  st->path = malloc(len + 1);
  st->tmp = malloc(len + sizeof ".tmp");
  st->cap = 64;
  st->ring = malloc(st->cap * sizeof *st->ring);
  if (st->path == NULL || st->tmp == NULL || st->ring == NULL) {
    cli_state_free(st);
    return NULL;
  }
  memcpy(st->path, path, len + 1);
  memcpy(st->tmp, path, len);
  memcpy(st->tmp + len, ".tmp", sizeof ".tmp");
  st->fd = -1;
  return st;
}

static void free_lines(struct behind_line *l, size_t n) {
  for (size_t i = 0; i < n; i++) {
    free(l[i].text);
    free(l[i].type);
    free(l[i].cmd);
  }
  free(l);
}

void cli_state_free(struct cli_state *st) {
  if (st == NULL)
    return;
  if (st->map != NULL)
    munmap(st->map, CLI_STATE_PAGE);
  if (st->fd >= 0)
    close(st->fd);
  free_lines(st->beh, st->nbeh);
  free(st->ring);
  free(st->tmp);
  free(st->path);
  free(st);
}

/* Write all of buf at offset (retrying EINTR and short writes). */
static int pwrite_all(int fd, const char *buf, size_t len, off_t offset) {
  while (len > 0) {
    ssize_t n = pwrite(fd, buf, len, offset);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return -1;
    buf += n;
    len -= (size_t)n;
    offset += n;
  }
  return 0;
}

/* fsync the directory that holds path, so that a rename in it is on disk. */
static int sync_dir(const char *path) {
  char dir[PATH_MAX];
  const char *slash = strrchr(path, '/');
  if (slash == NULL)
    snprintf(dir, sizeof dir, ".");
  else if (slash == path)
    snprintf(dir, sizeof dir, "/");
  else
    snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  int rc = fsync(fd);
  int err = errno;
  close(fd);
  errno = err;
  return rc;
}

/* The file's bytes into page[CLI_STATE_PAGE]: the header, the record of
 * the mark (before any is recorded this run: just before the first product
 * begun, as good as the time the run started from), and when decoders are
 * behind the lines, then spaces and a newline to the page's end.  *rec is
 * the record's length, *ext whether the lines are there.  @return the
 * length: the page with the lines, else the header and the record. */
static size_t compose(const struct cli_state *st, char *page, size_t *rec,
                      bool *ext) {
  memcpy(page, CLI_STATE_HEADER, hdr_len);
  uint64_t t0 = st->mark != 0 ? st->mark : st->first_us - 1;
  *rec = cli_state_format(t0, page + hdr_len);
  size_t len = hdr_len + *rec;
  *ext = false;
  if (st->nbeh == 0 || st->t1 <= t0)
    return len;
  /* The lines that fit, oldest first; the first that does not fit and
   * those after it are dropped, and T1 goes below its F: the products
   * from there on are done again by every entry.  (A line with F after T1
   * says nothing: products up to T1 are all in that decoder's pipe.) */
  size_t room = CLI_STATE_PAGE - 1 - len - (sizeof ext_intro - 1) - 32;
  uint64_t t1 = st->t1;
  size_t fit = 0, used = 0;
  while (fit < st->nbeh && st->beh[fit].from_us <= t1 &&
         st->beh[fit].len <= room - used)
    used += st->beh[fit++].len;
  if (fit < st->nbeh && st->beh[fit].from_us <= t1)
    t1 = st->beh[fit].from_us - 1;
  if (t1 <= t0)
    return len;
  memcpy(page + len, ext_intro, sizeof ext_intro - 1);
  len += sizeof ext_intro - 1;
  page[len++] = '#';
  page[len++] = '+';
  len += cli_state_format(t1, page + len);
  for (size_t i = 0; i < fit; i++) {
    memcpy(page + len, st->beh[i].text, st->beh[i].len);
    len += st->beh[i].len;
  }
  memset(page + len, ' ', CLI_STATE_PAGE - 1 - len);
  page[CLI_STATE_PAGE - 1] = '\n';
  *ext = true;
  return CLI_STATE_PAGE;
}

/* The whole file, atomically, holding the mark (and the lines of the
 * decoders behind); st->fd is then that file, open for the records that
 * follow.  0, or -1 with errno (what failed in *what). */
static int write_whole(struct cli_state *st, const char **what) {
  char buf[CLI_STATE_PAGE];
  size_t rec;
  bool ext;
  size_t len = compose(st, buf, &rec, &ext);
  *what = st->tmp;
  int fd = open(st->tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0)
    return -1;
  if (pwrite_all(fd, buf, len, 0) != 0 || fsync(fd) != 0) {
    int err = errno;
    close(fd);
    unlink(st->tmp);
    errno = err;
    return -1;
  }
  *what = st->path;
  if (rename(st->tmp, st->path) != 0) {
    int err = errno;
    close(fd);
    unlink(st->tmp);
    errno = err;
    return -1;
  }
  if (st->map != NULL)
    munmap(st->map, CLI_STATE_PAGE);
  if (st->fd >= 0)
    close(st->fd);
  st->fd = fd;
  /* for the records in place; without it (it failed), pwrite(2) */
  st->map =
      mmap(NULL, CLI_STATE_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (st->map == MAP_FAILED)
    st->map = NULL;
  st->rec_len = rec;
  st->ext_on_disk = ext;
  st->ext_dirty = false;
  st->dirty = false;
  st->synced_at = cli_monotonic();
  if (sync_dir(st->path) != 0) {
    *what = "its directory";
    return -1;
  }
  return 0;
}

/* Say a failed write once, and that it works again when it does. */
static void said(struct cli_state *st, int rc, const char *what, int err) {
  if (rc != 0 && !st->write_failed)
    log_error("cannot write the state file \"%s\" (%s): %s", st->path, what,
              strerror(err));
  else if (rc == 0 && st->write_failed)
    log_notice("the state file \"%s\" is written again", st->path);
  st->write_failed = rc != 0;
}

/* The page, in place (one pwrite of the whole page at offset 0, which a
 * kill cannot tear), or the whole file if it is not open yet. */
static void write_page(struct cli_state *st) {
  const char *what = "pwrite";
  int rc;
  if (st->mark == 0 && st->first_us == 0)
    return; /* no product begun: no time to write (the file stays) */
  if (st->fd >= 0) {
    char page[CLI_STATE_PAGE];
    size_t rec;
    bool ext;
    (void)compose(st, page, &rec, &ext);
    if (!ext) { /* the lines go: spaces in their place */
      size_t len = hdr_len + rec;
      memset(page + len, ' ', CLI_STATE_PAGE - 1 - len);
      page[CLI_STATE_PAGE - 1] = '\n';
    }
    rc = pwrite_all(st->fd, page, CLI_STATE_PAGE, 0);
    if (rc == 0) {
      st->rec_len = rec;
      st->ext_on_disk = ext;
      st->ext_dirty = false;
    }
    st->dirty = true;
  } else {
    rc = write_whole(st, &what);
  }
  said(st, rc, what, errno);
}

/* Is the page to be written rather than the record: decoders are behind,
 * or the file still holds their lines? */
static bool page_mode(const struct cli_state *st) {
  return st->nbeh > 0 || st->ext_on_disk;
}

/* The record rec (len bytes, the width of the one in the file) into the
 * file through st->map with one instruction, a 16-byte store over the
 * bytes that differ from the record there (cli_state.h: why a kill does
 * not tear it), where the machine has such a store and they span at most
 * 16 bytes (the seconds' first digits rarely change).  false: pwrite(2)
 * it instead. */
static bool store_record(struct cli_state *st, const char *rec, size_t len) {
#if defined(__x86_64__)
  if (st->map == NULL || len < 16)
    return false;
  char *at = st->map + hdr_len; /* within the first page */
  size_t lo = 0, hi = len;
  while (lo < len && at[lo] == rec[lo])
    lo++;
  if (lo == len)
    return true; /* already there */
  while (at[hi - 1] == rec[hi - 1])
    hi--;
  if (hi - lo > 16)
    return false;
  size_t w = lo < len - 16 ? lo : len - 16; /* [w, w + 16) holds [lo, hi) */
  unsigned char v[16];
  memcpy(v, rec + w, 16);
  /* MOVUPS: 16 bytes loaded into a register, then stored by the one
   * instruction, which a signal cannot interrupt halfway */
  __asm__ volatile("movups %1, %%xmm0\n\tmovups %%xmm0, %0"
                   : "=m"(*(unsigned char(*)[16])(void *)(at + w))
                   : "m"(v)
                   : "xmm0");
  return true;
#else
  (void)st;
  (void)rec;
  (void)len;
  return false;
#endif
}

/* Record the mark: in place if the file is open and the record keeps its
 * width, else the whole file; the page while decoders are behind. */
static void record(struct cli_state *st) {
  if (page_mode(st)) {
    write_page(st);
    return;
  }
  char rec[32];
  size_t len = cli_state_format(st->mark, rec);
  const char *what = "pwrite";
  int rc;
  if (st->fd >= 0 && len == st->rec_len) {
    rc = store_record(st, rec, len)
             ? 0
             : pwrite_all(st->fd, rec, len, (off_t)hdr_len);
    st->dirty = true;
  } else {
    rc = write_whole(st, &what);
  }
  said(st, rc, what, errno);
}

int cli_state_save(struct cli_state *st) {
  if (st->mark == 0)
    return 0;
  const char *what = "";
  int rc = write_whole(st, &what);
  said(st, rc, what, errno);
  return rc;
}

int cli_state_sync(struct cli_state *st, double min_interval_s) {
  if (st->fd < 0 || !st->dirty)
    return 0;
  double now = cli_monotonic();
  if (now - st->synced_at < min_interval_s)
    return 0;
  int rc = fdatasync(st->fd);
  said(st, rc, "fdatasync", errno);
  if (rc == 0) {
    st->dirty = false;
    st->synced_at = now;
  }
  return rc;
}

/* ---- the low-water mark ---- */

static struct slot *slot_of(struct cli_state *st, cli_state_token t) {
  if (t == CLI_STATE_NOTOKEN || t < st->first_tok || t - st->first_tok >= st->n)
    return NULL;
  return &st->ring[(st->head + (size_t)(t - st->first_tok)) % st->cap];
}

/* Double the ring, keeping the order. */
static int grow(struct cli_state *st) {
  size_t cap = st->cap * 2;
  struct slot *r = malloc(cap * sizeof *r);
  if (r == NULL)
    return -1;
  for (size_t i = 0; i < st->n; i++)
    r[i] = st->ring[(st->head + i) % st->cap];
  free(st->ring);
  st->ring = r;
  st->cap = cap;
  st->head = 0;
  return 0;
}

cli_state_token cli_state_begin(struct cli_state *st, uint64_t inserted_us) {
  if (st->n == st->cap && grow(st) != 0) {
    log_error("cannot track a product for the state file: %s",
              strerror(ENOMEM));
    return CLI_STATE_NOTOKEN;
  }
  st->ring[(st->head + st->n) % st->cap] =
      (struct slot){.inserted_us = inserted_us, .holds = 1};
  st->n++;
  st->holds++;
  if (st->first_us == 0)
    st->first_us = inserted_us;
  return st->first_tok + st->n - 1;
}

void cli_state_hold(struct cli_state *st, cli_state_token t) {
  struct slot *s = slot_of(st, t);
  if (s != NULL && s->holds > 0) {
    s->holds++;
    st->holds++;
  }
}

void cli_state_release(struct cli_state *st, cli_state_token t, bool ok) {
  struct slot *s = slot_of(st, t);
  if (s == NULL || s->holds == 0)
    return;
  st->holds--;
  if (!ok)
    s->failed = true;
  if (--s->holds > 0 || t != st->first_tok)
    return;
  /* The oldest is done: pass it and every done one after it. */
  uint64_t mark = st->mark;
  while (st->n > 0 && st->ring[st->head].holds == 0) {
    const struct slot *d = &st->ring[st->head];
    if (!d->failed && d->inserted_us > mark)
      mark = d->inserted_us;
    st->head = (st->head + 1) % st->cap;
    st->n--;
    st->first_tok++;
  }
  if (mark != st->mark) {
    st->mark = mark;
    record(st);
  }
}

uint64_t cli_state_mark(const struct cli_state *st) {
  return st->mark;
}

size_t cli_state_pending(const struct cli_state *st) {
  return st->n;
}

/* ---- the decoders behind ---- */

void cli_state_end(struct cli_state *st, cli_state_token t, bool ok) {
  const struct slot *s = slot_of(st, t);
  if (s != NULL && ok && s->inserted_us > st->t1) {
    st->t1 = s->inserted_us;
    if (st->nbeh > 0)
      st->ext_dirty = true;
  }
  cli_state_release(st, t, ok); /* writes the page if the mark moved */
  if (st->ext_dirty)
    cli_state_flush(st);
}

void cli_state_resume(struct cli_state *st, uint64_t t1) {
  if (t1 > st->t1)
    st->t1 = t1;
}

size_t cli_state_holds(const struct cli_state *st) {
  return st->holds;
}

bool cli_state_any_behind(const struct cli_state *st) {
  return st->nbeh > 0;
}

void cli_state_flush(struct cli_state *st) {
  if (!st->ext_dirty)
    return;
  if (!page_mode(st)) {
    st->ext_dirty = false;
    return;
  }
  write_page(st);
}

/* One decoder's line, "#-F TYPE CMD\n", into buf (len bytes); its length,
 * or SIZE_MAX if it does not fit or cannot be a line. */
static size_t format_line(const struct cli_state_dec *d, char *buf,
                          size_t len) {
  int n = snprintf(buf, len, "#-%" PRIu64 ".%06" PRIu64 " %s %s\n",
                   d->from_us / 1000000, d->from_us % 1000000, d->type, d->cmd);
  if (n < 0 || (size_t)n >= len || strchr(d->type, '\n') != NULL ||
      strchr(d->cmd, '\n') != NULL)
    return SIZE_MAX;
  return (size_t)n;
}

void cli_state_behind(struct cli_state *st, const struct cli_state_dec *decs,
                      size_t n) {
  if (n == 0) {
    if (st->nbeh > 0) {
      free_lines(st->beh, st->nbeh);
      st->beh = NULL;
      st->nbeh = 0;
      st->ext_dirty = true;
    }
    return;
  }
  /* oldest first (insertion sort: a few decoders) */
  const struct cli_state_dec *few[16];
  const struct cli_state_dec **by =
      n <= sizeof few / sizeof few[0] ? few : malloc(n * sizeof *by);
  if (by == NULL)
    goto nomem;
  for (size_t i = 0; i < n; i++) {
    size_t j = i;
    for (; j > 0 && by[j - 1]->from_us > decs[i].from_us; j--)
      by[j] = by[j - 1];
    by[j] = &decs[i];
  }
  /* the same as before (the common case, product after product)? */
  bool same = n == st->nbeh;
  for (size_t i = 0; same && i < n; i++)
    same = st->beh[i].from_us == by[i]->from_us &&
           strcmp(st->beh[i].cmd, by[i]->cmd) == 0 &&
           strcmp(st->beh[i].type, by[i]->type) == 0;
  struct behind_line *l = same ? NULL : calloc(n, sizeof *l);
  if (same || l == NULL) {
    if (by != few)
      free(by);
    if (same)
      return;
    goto nomem;
  }
  char line[CLI_STATE_PAGE];
  for (size_t i = 0; i < n; i++) {
    size_t len = format_line(by[i], line, sizeof line);
    l[i].from_us = by[i]->from_us;
    l[i].len = len;
    l[i].type = strdup(by[i]->type);
    l[i].cmd = strdup(by[i]->cmd);
    if (len != SIZE_MAX)
      l[i].text = malloc(len);
    if (l[i].type == NULL || l[i].cmd == NULL ||
        (len != SIZE_MAX && l[i].text == NULL)) {
      free_lines(l, n);
      if (by != few)
        free(by);
      goto nomem;
    }
    if (len != SIZE_MAX)
      memcpy(l[i].text, line, len);
  }
  if (by != few)
    free(by);
  free_lines(st->beh, st->nbeh);
  st->beh = l;
  st->nbeh = n;
  st->ext_dirty = true;
  return;
nomem:
  /* No lines: T1 would be lowered to their oldest F; keeping the old
   * lines would say less than is true.  Say nothing beyond T0. */
  log_error("cannot list the decoders behind in the state file: %s",
            strerror(ENOMEM));
  free_lines(st->beh, st->nbeh);
  st->beh = NULL;
  st->nbeh = 0;
  st->ext_dirty = true;
}
