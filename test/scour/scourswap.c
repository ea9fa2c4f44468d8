/*
 * scourswap - for scour's race test (test/scour/race.sh): swap, as fast as
 * it can, each pair of names given (a directory and a symbolic link beside
 * it) with renameat2(RENAME_EXCHANGE), so that the entry scour examines as
 * a directory may be a link by the time it opens it.  After each exchange
 * it puts back, in whichever name is the directory now (it alone swaps, so
 * it knows), a file x.old last modified AGE seconds ago if scour deleted
 * it: the walk has something to delete in the swapped directories, and
 * nothing is ever written through a link.  Prints "swapping" once the first
 * exchange is made, runs until SIGTERM, then prints the number of
 * exchanges and of files put back.  Exit 0, or 1 if a call fails.
 *
 * usage: scourswap AGE DIR1 LINK1 [DIR2 LINK2 ...]
 * (each DIR a directory, each LINK a symbolic link, at the start)
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_term(int sig) {
  (void)sig;
  stop = 1;
}

/* Put dir/x.old back, aged, if it is missing: 1 if put back, 0 if there,
 * -1 on failure (said). */
static int refill(const char *dir, long age) {
  char path[4096];
  snprintf(path, sizeof path, "%s/x.old", dir);
  int fd =
      open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) {
    if (errno == EEXIST)
      return 0;
    fprintf(stderr, "scourswap: cannot create %s: %s\n", path, strerror(errno));
    return -1;
  }
  struct timespec t[2] = {{time(NULL) - age, 0}, {time(NULL) - age, 0}};
  int rc = futimens(fd, t);
  close(fd);
  if (rc != 0) {
    fprintf(stderr, "scourswap: cannot age %s: %s\n", path, strerror(errno));
    return -1;
  }
  return 1;
}

int main(int argc, char **argv) {
  if (argc < 4 || (argc - 2) % 2 != 0) {
    fprintf(stderr, "usage: scourswap AGE DIR1 LINK1 [DIR2 LINK2 ...]\n");
    return 1;
  }
  long age = atol(argv[1]);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_term;
  sigaction(SIGTERM, &sa, NULL);
  unsigned long long n = 0, put = 0;
  char *swapped = calloc((size_t)argc, 1); /* by the index of DIR */
  if (swapped == NULL) {
    perror("scourswap");
    return 1;
  }
  while (!stop) {
    for (int i = 2; i + 1 < argc; i += 2) {
      if (renameat2(AT_FDCWD, argv[i], AT_FDCWD, argv[i + 1],
                    RENAME_EXCHANGE) != 0) {
        fprintf(stderr, "scourswap: cannot exchange %s and %s: ", argv[i],
                argv[i + 1]);
        perror(NULL);
        return 1;
      }
      /* After an odd number of exchanges the directory is at LINK. */
      swapped[i] = !swapped[i];
      int rc = refill(argv[swapped[i] ? i + 1 : i], age);
      if (rc < 0)
        return 1;
      put += (unsigned)rc;
      if (n++ == 0) {
        printf("swapping\n");
        fflush(stdout);
      }
    }
  }
  free(swapped);
  printf("%llu exchanges, %llu files put back\n", n, put);
  return 0;
}
