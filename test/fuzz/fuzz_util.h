/*
 * fuzz_util.h - what the libFuzzer targets that read a file share: the
 * whole input written into a file of a fresh private directory under
 * $TMPDIR (or /tmp), so that the code under test reads it as a site's file
 * (and finds what it refers to relative to it), and that directory
 * removed afterwards with whatever the code under test wrote in it.
 * Header-only: each target is compiled alone by test/fuzz/fuzz.cmake.
 */
#ifndef TEST_FUZZ_UTIL_H
#define TEST_FUZZ_UTIL_H

#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The directory to write the target's seeds into when it is run for that
 * (FUZZ_SEEDS_DIR set: the _seeds tests of test/fuzz/fuzz.cmake), made if
 * need be; NULL on a fuzzing run.  The target writes its seeds there and
 * exits. */
static inline const char *fuzz_seeds_dir(void) {
  const char *dir = getenv("FUZZ_SEEDS_DIR");

  if (dir == NULL || *dir == '\0')
    return NULL;
  mkdir(dir, 0755);
  return dir;
}

/* Write all n bytes of p to fd.  @return 0, or -1 */
static inline int fuzz_write_all(int fd, const void *p, size_t n) {
  const uint8_t *b = p;

  while (n > 0) {
    ssize_t k = write(fd, b, n);

    if (k <= 0)
      return -1;
    b += k;
    n -= (size_t)k;
  }
  return 0;
}

/*
 * The input as dir/name, dir a fresh "<$TMPDIR or /tmp>/<tag>.XXXXXX"
 * (dir[0] is '\0' when it could not be made); its path in path.
 * @return true once the file holds the whole input
 */
static inline bool fuzz_input_file(const char *tag, const char *name,
                                   const uint8_t *data, size_t size, char *dir,
                                   size_t dirlen, char *path, size_t pathlen) {
  const char *tmp = getenv("TMPDIR");
  bool written;
  int fd;

  if (tmp == NULL || *tmp == '\0')
    tmp = "/tmp";
  snprintf(dir, dirlen, "%s/%s.XXXXXX", tmp, tag);
  if (mkdtemp(dir) == NULL) {
    dir[0] = '\0';
    return false;
  }
  snprintf(path, pathlen, "%s/%s", dir, name);
  fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    return false;
  written = fuzz_write_all(fd, data, size) == 0;
  close(fd);
  return written;
}

/* Remove dir (if dir[0] is not '\0') and the files in it. */
static inline void fuzz_remove_dir(const char *dir) {
  DIR *d;

  if (dir[0] == '\0')
    return;
  d = opendir(dir);
  if (d != NULL) {
    struct dirent *e;

    while ((e = readdir(d)) != NULL) {
      char path[4096];

      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
        continue;
      snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
      unlink(path);
    }
    closedir(d);
  }
  rmdir(dir);
}

#endif /* TEST_FUZZ_UTIL_H */
