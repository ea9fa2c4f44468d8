/*
 * scour - delete old files, as LDM's scour does, from the directories a
 * scour.conf names: each line `dir age [glob]` deletes, in dir and below,
 * the files whose names match glob (default "*", which skips names that
 * begin with a dot) and that were last modified more than age ago; with -d,
 * the subdirectories left empty go too.  This file owns the whole program:
 * reading scour.conf and the excludes file, the directories it refuses, and
 * the walk.  pqutils/ops/scour.1 is its manual; etc/scour.conf an example.
 *
 * Safety comes first; an operator runs this as the LDM user or as root from
 * cron.  Below the directory a line names, nothing is ever followed: every
 * entry is examined with fstatat(AT_SYMLINK_NOFOLLOW) relative to an open
 * descriptor of its directory, a subdirectory is opened with
 * openat(O_NOFOLLOW | O_DIRECTORY) and checked to be the one examined
 * (device and inode), and entries are removed with unlinkat() on that
 * descriptor.  So a symbolic link is judged and deleted as a link, its
 * target untouched, and a directory swapped for a link while we work cannot
 * lead the walk, or a deletion, outside the tree.  The walk stays on the
 * file system and the mount of the line's directory (like find -xdev: a
 * mount below is left alone, a bind mount too).  A line's directory is
 * resolved as written (symbolic links in it are followed, as cd would) and
 * then refused if what was opened is a system directory, a home directory,
 * or listed in the excludes file or below one.  The product queue file is
 * never deleted.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ldmd/site/log.h"
#include "pqutils/common/cli.h"

static const char usage_text[] =
    "usage: scour [options] [scour.conf]\n"
    "options:\n"
    "  -d           also remove the subdirectories left empty\n"
    "  -n           dry run: list on stdout what would be deleted,\n"
    "               delete nothing\n"
    "  -e excludes  file of directories never to scour (default: the\n"
    "               registry's /scour/exclude-path, if it exists)\n"
    "  -q queue     the product queue, never deleted (default: the\n"
    "               registry's /queue/path)\n"
    "  -l dest      log to dest: \"\" syslog, \"-\" stderr, or a file\n"
    "  -v           log every file deleted\n"
    "  -x           debug\n"
    "  -h           print this text\n"
    "scour.conf: lines \"dir age [glob]\"; age D, D-hh, D-hh:mm or -hh\n"
    "(default: the registry's /scour/config-path)\n";

/* Deeper trees are not descended (an error is logged): every level holds a
 * descriptor open. */
#define MAX_DEPTH 200
/* Days an age may have: far beyond any use, far from overflow. */
#define MAX_DAYS 1000000L

struct opts {
  bool empty_dirs;     /* -d */
  bool dry_run;        /* -n */
  const char *exclude; /* -e, else the registry's (set in main()) */
  const char *conf;    /* the operand, else the registry's */
};

struct devino {
  dev_t dev;
  ino_t ino;
};

/* Directories by identity: the excluded ones, the homes. */
struct dirset {
  struct devino *v;
  size_t n, cap;
};

/* The whole run. */
struct run {
  const struct opts *o;
  char datadir[PATH_MAX];
  struct dirset excluded;
  struct dirset homes; /* refused themselves: $HOME, the user's, LDMHOME */
  bool have_queue;
  struct devino queue;
  time_t now;
  unsigned errors; /* failures so far; any makes the exit status 1 */
};

/* One line of scour.conf, while it is scoured. */
struct job {
  const char *glob;
  time_t cutoff; /* older: last modified before this second */
  dev_t dev;     /* the file system of the line's directory */
  bool have_mnt;
  uint64_t mnt_id; /* and its mount */
  char path[PATH_MAX];
  size_t len; /* of path: the entry at hand, for messages */
  unsigned long files, dirs;
  unsigned long long bytes;
};

/* ---- the directories refused ---- */

/* Refused, and everything below them. */
static const char *const refused_trees[] = {
    "/bin",      "/boot",      "/dev",         "/etc",          "/lib",
    "/lib32",    "/lib64",     "/libx32",      "/proc",         "/root",
    "/run",      "/sbin",      "/sys",         "/usr/bin",      "/usr/include",
    "/usr/lib",  "/usr/lib32", "/usr/lib64",   "/usr/libexec",  "/usr/libx32",
    "/usr/sbin", "/usr/share", "/var/lib/apt", "/var/lib/dpkg", NULL};
/* Below /dev, only this one's subdirectories may be scoured. */
static const char shm_dir[] = "/dev/shm";
/* Refused themselves; their subdirectories may be scoured. */
static const char *const refused_dirs[] = {
    "/",         "/dev/shm",   "/home",      "/media",     "/mnt",
    "/opt",      "/srv",       "/tmp",       "/usr",       "/usr/local",
    "/var",      "/var/cache", "/var/lib",   "/var/local", "/var/log",
    "/var/mail", "/var/opt",   "/var/spool", "/var/tmp",   NULL};

static bool is_under(const char *path, const char *root) {
  size_t n = strlen(root);
  return strncmp(path, root, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static bool same_file(const struct stat *st, const char *path) {
  struct stat o;
  return stat(path, &o) == 0 && o.st_dev == st->st_dev &&
         o.st_ino == st->st_ino;
}

static bool in_set(const struct dirset *s, const struct stat *st) {
  for (size_t i = 0; i < s->n; i++)
    if (s->v[i].dev == st->st_dev && s->v[i].ino == st->st_ino)
      return true;
  return false;
}

static int set_add(struct dirset *s, const struct stat *st) {
  if (s->n == s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 16;
    struct devino *v = realloc(s->v, cap * sizeof *v);
    if (v == NULL)
      return -1;
    s->v = v;
    s->cap = cap;
  }
  s->v[s->n++] = (struct devino){st->st_dev, st->st_ino};
  return 0;
}

/* Is a directory above the one open at fd (its parent, and so on up to /)
 * in the set?  A directory that cannot be opened on the way counts as in
 * it: better refuse than scour an excluded subtree. */
static bool below_set(const struct dirset *s, int fd) {
  struct stat prev, st;
  if (s->n == 0)
    return false;
  if (fstat(fd, &prev) != 0)
    return true;
  int cur = fd;
  bool found = false;
  for (unsigned i = 0; i < 4096 && !found; i++) {
    int up = openat(cur, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (cur != fd)
      close(cur);
    if (up < 0 || fstat(up, &st) != 0) {
      if (up >= 0)
        close(up);
      return true;
    }
    cur = up;
    if (st.st_dev == prev.st_dev && st.st_ino == prev.st_ino)
      break; /* "/": its own parent */
    found = in_set(s, &st);
    prev = st;
  }
  if (cur != fd)
    close(cur);
  return found;
}

/*
 * Why the directory open at fd must not be scoured, or NULL.  Judged on what
 * was opened: its path as the kernel knows it, and its identity, so a bind
 * mount of / or of /etc is refused as they are.
 */
static const char *refusal(const struct run *r, int fd) {
  char link[64], real[PATH_MAX];
  struct stat st;
  if (fstat(fd, &st) != 0)
    return "it cannot be examined";
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, real, sizeof real - 1);
  if (n <= 0 || real[0] != '/')
    return "its real path cannot be found (is /proc mounted?)";
  real[n] = '\0';
  for (size_t i = 0; refused_trees[i] != NULL; i++) {
    const char *t = refused_trees[i];
    bool shm_below = is_under(real, shm_dir) && strcmp(real, shm_dir) != 0;
    if ((is_under(real, t) && !shm_below) || same_file(&st, t))
      return "it is a system directory";
  }
  for (size_t i = 0; refused_dirs[i] != NULL; i++)
    if (strcmp(real, refused_dirs[i]) == 0 || same_file(&st, refused_dirs[i]))
      return "it is a system directory";
  if (in_set(&r->homes, &st))
    return "it is a home directory";
  if (in_set(&r->excluded, &st))
    return "it is excluded (-e)";
  if (below_set(&r->excluded, fd))
    return "it is below an excluded directory (-e)";
  return NULL;
}

/* The homes, refused themselves: LDMHOME, $HOME, the user's. */
static int add_homes(struct run *r) {
  const char *paths[3];
  const char *home = getenv("LDMHOME");
  paths[0] = home && *home ? home : LDM_HOME_DEFAULT;
  paths[1] = getenv("HOME");
  const struct passwd *pw = getpwuid(getuid());
  paths[2] = pw ? pw->pw_dir : NULL;
  for (size_t i = 0; i < 3; i++) {
    struct stat st;
    if (paths[i] != NULL && *paths[i] && stat(paths[i], &st) == 0 &&
        S_ISDIR(st.st_mode) && set_add(&r->homes, &st) != 0) {
      log_error("cannot allocate memory");
      return -1;
    }
  }
  return 0;
}

/* ---- paths as the configuration writes them ---- */

/*
 * Expand `~` and `~user` at the start of in, and make a relative path
 * relative to the data directory, into out.
 * @return NULL, or what is wrong (for a message).
 */
static const char *expand(const struct run *r, const char *in, char *out,
                          size_t len) {
  int n;
  if (in[0] == '~') {
    const char *rest = strchr(in, '/');
    size_t ulen = rest ? (size_t)(rest - in - 1) : strlen(in + 1);
    const char *home = NULL;
    if (ulen == 0) {
      home = getenv("HOME");
      if (home == NULL || *home == '\0') {
        const struct passwd *pw = getpwuid(getuid());
        home = pw ? pw->pw_dir : NULL;
      }
    } else {
      char user[256];
      if (ulen >= sizeof user)
        return "the user name is too long";
      memcpy(user, in + 1, ulen);
      user[ulen] = '\0';
      const struct passwd *pw = getpwnam(user);
      home = pw ? pw->pw_dir : NULL;
    }
    if (home == NULL)
      return "no such user";
    n = snprintf(out, len, "%s%s", home, rest ? rest : "");
  } else if (in[0] == '/') {
    n = snprintf(out, len, "%s", in);
  } else {
    n = snprintf(out, len, "%s/%s", r->datadir, in);
  }
  return n < 0 || (size_t)n >= len ? "the path is too long" : NULL;
}

/* ---- ages ---- */

/* Exactly two digits at s into *v. */
static bool two_digits(const char *s, long *v) {
  if (s[0] < '0' || s[0] > '9' || s[1] < '0' || s[1] > '9')
    return false;
  *v = (s[0] - '0') * 10 + (s[1] - '0');
  return true;
}

/*
 * LDM's ages: D (days), D-hh, D-hh:mm, -hh, -hh:mm, that is
 * ^([0-9]*)(-([0-9]{2})(:([0-9]{2}))?)?$, not empty.  Hours and minutes
 * are added as they are (-36 is 36 hours).
 * @return 0 with the age in seconds, or -1.
 */
static int parse_age(const char *s, long long *seconds) {
  long days = 0, hours = 0, minutes = 0;
  const char *p = s;
  while (*p >= '0' && *p <= '9') {
    days = days * 10 + (*p++ - '0');
    if (days > MAX_DAYS)
      return -1;
  }
  if (*p == '-') {
    if (!two_digits(p + 1, &hours))
      return -1;
    p += 3;
    if (*p == ':') {
      if (!two_digits(p + 1, &minutes))
        return -1;
      p += 3;
    }
  } else if (p == s) {
    return -1; /* empty, or no digit where one must be */
  }
  if (*p != '\0')
    return -1;
  *seconds = days * 86400LL + hours * 3600LL + minutes * 60LL;
  return 0;
}

/* ---- the walk ---- */

/* Append /name to the job's path; -1 if it does not fit. */
static int path_push(struct job *j, const char *name) {
  size_t n = strlen(name);
  if (j->len + 1 + n >= sizeof j->path)
    return -1;
  j->path[j->len] = '/';
  memcpy(j->path + j->len + 1, name, n + 1);
  j->len += 1 + n;
  return 0;
}

/* A path for stdout, with control characters as \ooo, so that a name with a
 * newline cannot forge a line of the listing. */
static void print_path(const char *path, const char *suffix) {
  for (const unsigned char *p = (const unsigned char *)path; *p; p++)
    if (*p < 0x20 || *p == 0x7f || *p == '\\')
      printf("\\%03o", *p);
    else
      putchar(*p);
  printf("%s\n", suffix);
}

static bool is_old(const struct job *j, const struct stat *st) {
  return st->st_mtim.tv_sec < j->cutoff;
}

/* The mount id of fd, if the kernel tells it. */
static bool mount_id(int fd, uint64_t *id) {
  struct statx sx;
  if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &sx) !=
          0 ||
      !(sx.stx_mask & STATX_MNT_ID))
    return false;
  *id = sx.stx_mnt_id;
  return true;
}

static long scour_dir(struct run *r, struct job *j, int fd, unsigned depth);

/* A non-directory entry name of the directory at dfd: delete it if it is
 * old and matches.  @return 1 if it is still there, 0 if not. */
static long scour_file(struct run *r, struct job *j, int dfd, const char *name,
                       const struct stat *st) {
  if (fnmatch(j->glob, name, FNM_PERIOD) != 0)
    return 1;
  if (!is_old(j, st)) {
    log_debug("keeping %s: modified less than the age ago", j->path);
    return 1;
  }
  if (r->have_queue && st->st_dev == r->queue.dev &&
      st->st_ino == r->queue.ino) {
    log_warning("not deleting %s: it is the product queue", j->path);
    return 1;
  }
  if (r->o->dry_run) {
    print_path(j->path, "");
  } else if (unlinkat(dfd, name, 0) != 0) {
    if (errno == ENOENT) /* gone meanwhile */
      return 0;
    log_error("cannot delete %s: %s", j->path, strerror(errno));
    r->errors++;
    return 1;
  } else {
    log_info("deleted %s", j->path);
  }
  j->files++;
  j->bytes += S_ISREG(st->st_mode) ? (unsigned long long)st->st_size : 0;
  return 0;
}

/* A subdirectory name of the directory at dfd, as fstatat saw it (st):
 * scour it, then with -d remove it if that left it empty and it was last
 * modified more than the age ago.  @return 1 if it is still there, else 0. */
static long scour_subdir(struct run *r, struct job *j, int dfd,
                         const char *name, const struct stat *st,
                         unsigned depth) {
  if (st->st_dev != j->dev) {
    log_info("not descending into %s: another file system", j->path);
    return 1;
  }
  if (in_set(&r->excluded, st)) {
    log_info("not descending into %s: excluded", j->path);
    return 1;
  }
  if (depth >= MAX_DEPTH) {
    log_error("not descending into %s: deeper than %d levels", j->path,
              MAX_DEPTH);
    r->errors++;
    return 1;
  }
  int fd = openat(dfd, name,
                  O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT)
      return 0;
    if (errno == ELOOP || errno == ENOTDIR) {
      log_warning("not descending into %s: it changed while scouring", j->path);
      return 1;
    }
    log_error("cannot open directory %s: %s", j->path, strerror(errno));
    r->errors++;
    return 1;
  }
  struct stat now;
  uint64_t mnt;
  if (fstat(fd, &now) != 0 || now.st_dev != st->st_dev ||
      now.st_ino != st->st_ino) {
    log_warning("not descending into %s: it changed while scouring", j->path);
    close(fd);
    return 1;
  }
  if (j->have_mnt && mount_id(fd, &mnt) && mnt != j->mnt_id) {
    log_info("not descending into %s: another mount", j->path);
    close(fd);
    return 1;
  }
  long left = scour_dir(r, j, fd, depth + 1);
  if (left != 0 || !r->o->empty_dirs || !is_old(j, st))
    return 1;
  if (r->o->dry_run) {
    print_path(j->path, "/");
  } else if (unlinkat(dfd, name, AT_REMOVEDIR) != 0) {
    if (errno == ENOENT)
      return 0;
    if (errno == ENOTEMPTY || errno == EEXIST) /* written to meanwhile */
      return 1;
    if (errno == ENOTDIR) { /* no longer a directory: leave it */
      log_warning("not removing %s: it changed while scouring", j->path);
      return 1;
    }
    log_error("cannot remove directory %s: %s", j->path, strerror(errno));
    r->errors++;
    return 1;
  } else {
    log_info("removed directory %s", j->path);
  }
  j->dirs++;
  return 0;
}

/*
 * Scour the directory open at fd (closed here), whose path is the job's.
 * @return how many entries are left in it (with -n: would be), or -1 if
 *         that is not known (it could not be read to the end).
 */
static long scour_dir(struct run *r, struct job *j, int fd, unsigned depth) {
  DIR *d = fdopendir(fd);
  if (d == NULL) {
    log_error("cannot read directory %s: %s", j->path, strerror(errno));
    r->errors++;
    close(fd);
    return -1;
  }
  long left = 0;
  size_t base = j->len;
  for (;;) {
    if (cli_stopping()) {
      left = -1;
      break;
    }
    errno = 0;
    const struct dirent *e = readdir(d);
    if (e == NULL) {
      if (errno != 0) {
        log_error("cannot read directory %s: %s", j->path, strerror(errno));
        r->errors++;
        left = -1;
      }
      break;
    }
    const char *name = e->d_name;
    if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
      continue;
    if (path_push(j, name) != 0) {
      log_error("not scouring %s/%s: the path is too long", j->path, name);
      r->errors++;
      left++;
      continue;
    }
    struct stat st;
    if (fstatat(dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno != ENOENT) { /* gone meanwhile: nothing to do */
        log_error("cannot examine %s: %s", j->path, strerror(errno));
        r->errors++;
        left++;
      }
    } else if (S_ISDIR(st.st_mode)) {
      left += scour_subdir(r, j, dirfd(d), name, &st, depth);
    } else {
      left += scour_file(r, j, dirfd(d), name, &st);
    }
    j->len = base;
    j->path[base] = '\0';
  }
  closedir(d);
  return left;
}

/* ---- the configuration ---- */

/* One line: dir, age, glob (NULL: "*"), at file:lineno. */
static void scour_line(struct run *r, const char *file, unsigned lineno,
                       const char *dir, const char *age, const char *glob) {
  long long seconds;
  struct job *j = calloc(1, sizeof *j);
  if (j == NULL) {
    log_error("cannot allocate memory");
    r->errors++;
    return;
  }
  j->glob = glob ? glob : "*";
  if (parse_age(age, &seconds) != 0) {
    log_error("%s:%u: bad age \"%s\" (D, D-hh, D-hh:mm or -hh)", file, lineno,
              age);
    goto fail;
  }
  j->cutoff = (time_t)(r->now - seconds);
  const char *why = expand(r, dir, j->path, sizeof j->path);
  if (why != NULL) {
    log_error("%s:%u: cannot use directory \"%s\": %s", file, lineno, dir, why);
    goto fail;
  }
  j->len = strlen(j->path);
  for (;;) { /* "data/", "data/." and "." name the directory itself */
    if (j->len > 1 && j->path[j->len - 1] == '/')
      j->len--;
    else if (j->len > 2 && strcmp(j->path + j->len - 2, "/.") == 0)
      j->len -= 2;
    else
      break;
    j->path[j->len] = '\0';
  }
  int fd = open(j->path, O_RDONLY | O_DIRECTORY | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    log_error("%s:%u: cannot open directory %s: %s", file, lineno, j->path,
              strerror(errno));
    goto fail;
  }
  why = refusal(r, fd);
  struct stat st = {0};
  if (why == NULL && fstat(fd, &st) != 0)
    why = "it cannot be examined";
  if (why != NULL) {
    log_error("%s:%u: refusing to scour %s: %s", file, lineno, j->path, why);
    close(fd);
    goto fail;
  }
  j->dev = st.st_dev;
  j->have_mnt = mount_id(fd, &j->mnt_id);
  log_debug("%s:%u: scouring %s: older than %lld s, matching \"%s\"", file,
            lineno, j->path, seconds, j->glob);
  (void)scour_dir(r, j, fd, 0); /* the line's own directory stays */
  log_info("%s: %s %lu files (%llu bytes), %lu directories", j->path,
           r->o->dry_run ? "would delete" : "deleted", j->files, j->bytes,
           j->dirs);
  free(j);
  return;
fail:
  r->errors++;
  free(j);
}

/* Split line into at most max whitespace-separated fields; the count, or
 * max + 1 if there are more. */
static int split(char *line, char **f, int max) {
  int n = 0;
  for (char *tok = strtok(line, " \t\r\n\v\f"); tok != NULL;
       tok = strtok(NULL, " \t\r\n\v\f")) {
    if (n == max)
      return max + 1;
    f[n++] = tok;
  }
  return n;
}

static bool skip_line(const char *line) {
  while (*line == ' ' || *line == '\t')
    line++;
  return *line == '#' || *line == '\0' || *line == '\n' || *line == '\r';
}

/* Run every line of the configuration file path.  -1 if it cannot be
 * read (logged), else 0 (errors of lines are counted in r). */
static int scour_conf(struct run *r, const char *path) {
  FILE *f = fopen(path, "re");
  if (f == NULL) {
    log_error("cannot open the configuration %s: %s", path, strerror(errno));
    return -1;
  }
  char *line = NULL;
  size_t cap = 0;
  unsigned lineno = 0, lines = 0;
  ssize_t got;
  while ((got = getline(&line, &cap, f)) != -1 && !cli_stopping()) {
    lineno++;
    if (skip_line(line))
      continue;
    if ((size_t)got != strlen(line)) {
      log_error("%s:%u: a NUL byte in the line", path, lineno);
      r->errors++;
      continue;
    }
    char *fld[3];
    int n = split(line, fld, 3);
    if (n < 2 || n > 3) {
      log_error("%s:%u: expected \"dir age [glob]\", found %s fields", path,
                lineno, n > 3 ? "more than 3" : "1");
      r->errors++;
      continue;
    }
    lines++;
    scour_line(r, path, lineno, fld[0], fld[1], n == 3 ? fld[2] : NULL);
  }
  bool bad = ferror(f);
  free(line);
  fclose(f);
  if (bad) {
    log_error("cannot read the configuration %s: %s", path, strerror(errno));
    return -1;
  }
  if (lines == 0)
    log_notice("%s has no lines to scour", path);
  return 0;
}

/*
 * Read the excludes file: one directory a line ('#' comments, blank lines),
 * as the configuration writes them (~, relative to the data directory).
 * @param required  it was named with -e: a missing file is an error
 * @return 0, or -1 (logged): then nothing may be scoured.
 */
static int read_excludes(struct run *r, const char *path, bool required) {
  FILE *f = fopen(path, "re");
  if (f == NULL) {
    if (errno == ENOENT && !required) {
      log_debug("no excludes file %s", path);
      return 0;
    }
    log_error("cannot open the excludes file %s: %s", path, strerror(errno));
    return -1;
  }
  char *line = NULL;
  size_t cap = 0;
  unsigned lineno = 0;
  int rc = 0;
  while (rc == 0 && getline(&line, &cap, f) != -1) {
    lineno++;
    if (skip_line(line))
      continue;
    char *s = line + strspn(line, " \t");
    size_t n = strcspn(s, "\r\n");
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
      n--;
    s[n] = '\0';
    char dir[PATH_MAX];
    struct stat st;
    const char *why = expand(r, s, dir, sizeof dir);
    if (why != NULL) {
      log_error("%s:%u: cannot use directory \"%s\": %s", path, lineno, s, why);
      rc = -1;
    } else if (stat(dir, &st) != 0) {
      log_notice("%s:%u: excluded directory %s: %s", path, lineno, dir,
                 strerror(errno));
    } else if (set_add(&r->excluded, &st) != 0) {
      log_error("cannot allocate memory");
      rc = -1;
    }
  }
  if (rc == 0 && ferror(f)) {
    log_error("cannot read the excludes file %s: %s", path, strerror(errno));
    rc = -1;
  }
  free(line);
  fclose(f);
  return rc;
}

/* ---- the command line ---- */

static int option(struct cli *c, int ch, const char *arg, void *opts) {
  struct opts *o = opts;
  (void)c;
  switch (ch) {
  case 'd':
    o->empty_dirs = true;
    return 0;
  case 'n':
    o->dry_run = true;
    return 0;
  default: /* 'e' */
    o->exclude = arg;
    return 0;
  }
}

static int operands(struct cli *c, int argc, char **argv, void *opts) {
  struct opts *o = opts;
  if (argc - optind > 1) {
    cli_usage_error(c, usage_text, "unexpected argument %s", argv[optind + 1]);
    return -1;
  }
  if (optind < argc)
    o->conf = argv[optind];
  return 0;
}

static const struct cli_spec spec = {":hdnvxl:e:q:", usage_text, option,
                                     operands};

/* The queue file, never deleted: remember which it is, if it exists. */
static void note_queue(struct cli *c, struct run *r) {
  const char *q = cli_queue_path(c);
  struct stat st;
  if (q != NULL && stat(q, &st) == 0) {
    r->have_queue = true;
    r->queue = (struct devino){st.st_dev, st.st_ino};
  }
}

int main(int argc, char **argv) {
  struct cli c;
  struct opts o = {0};
  int rc = cli_parse(&c, argc, argv, &spec, &o);
  if (rc != CLI_GO_ON)
    return rc;
  cli_signals();
  static struct run r;
  r.o = &o;
  r.now = time(NULL);
  char conf[PATH_MAX], excl[PATH_MAX];
  if (cli_reg_string(&c, REG_PQACT_DATADIR, r.datadir, sizeof r.datadir) != 0)
    return 1;
  if (o.conf == NULL) {
    if (cli_reg_string(&c, REG_SCOUR_CONFIG, conf, sizeof conf) != 0)
      return 1;
    o.conf = conf;
  }
  bool required = o.exclude != NULL;
  if (!required) {
    if (cli_reg_string(&c, REG_SCOUR_EXCLUDE, excl, sizeof excl) != 0)
      return 1;
    o.exclude = excl;
  }
  if (add_homes(&r) != 0 ||
      (o.exclude[0] != '\0' && read_excludes(&r, o.exclude, required) != 0))
    return 1;
  note_queue(&c, &r);
  if (scour_conf(&r, o.conf) != 0)
    r.errors++;
  if (cli_stopping())
    log_notice("stopped before the end");
  free(r.excluded.v);
  free(r.homes.v);
  if (fflush(stdout) != 0) {
    log_error("cannot write the listing: %s", strerror(errno));
    r.errors++;
  }
  return r.errors ? 1 : 0;
}
