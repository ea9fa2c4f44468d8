/*
 * pqact_bench_aux.c - the helper of test/bench/pqact_bench.sh: it fills a
 * queue with the products a case needs, measures the floors a plain C loop
 * reaches on the same tmpfs, and is the decoder that reads and discards.
 *
 *   pqact_bench_aux fill QUEUE N SIZE KIND [NDEC]
 *       insert N products of SIZE bytes (feedtype EXP, signature the
 *       product's number) whose identifiers are, for KIND
 *         close  "P000001 ..."              (one file each)
 *         table  "SAUS012 KXYZ 000001 ..."  (product i: entry i % 200)
 *         np     product i for entry i % NDEC of a table without literal
 *                prefixes (below)
 *         pipe   "D3 000001"                (product i: decoder i % NDEC)
 *       and exit 0, or 1 with a message.
 *   pqact_bench_aux floor DIR N SIZE
 *       open+write+close of N new files of SIZE bytes in DIR; prints the
 *       nanoseconds it took.
 *   pqact_bench_aux floor_append DIR N SIZE K
 *       open K files in DIR, N writes of SIZE bytes round robin, close
 *       them; prints the nanoseconds.
 *   pqact_bench_aux sink [COUNTFILE [EXPECT [PIDFILE]]]
 *       the decoder: read standard input to its end, discarding it, and
 *       write to COUNTFILE (if given) how many bytes it read and the
 *       CLOCK_MONOTONIC times, in ns, of its first and last read: as soon
 *       as it has read EXPECT bytes (if not 0), else at the end.  With
 *       PIDFILE it writes its pid there and stops itself (SIGSTOP) before
 *       reading: the stuck decoder, until the bench sends SIGCONT (unless
 *       PIDFILE exists: a decoder started again in its place reads on).
 *   pqact_bench_aux conf KIND PATH [NDEC AUX COUNTDIR STUCK N SIZE]
 *       write the pqact.conf of a case to PATH (pipe: NDEC decoders, the
 *       j-th "AUX sink COUNTDIR/j.count EXPECT", EXPECT its share of N
 *       products of SIZE bytes; STUCK 1: decoder 0 stops itself; np:
 *       NDEC entries whose patterns share no literal prefix, in five forms
 *       as site tables write them: a leading class, an unanchored
 *       alternation, an unanchored path with an optional letter and "$",
 *       a one-letter anchor with an alternation and "$", an anchored
 *       alternation of words; each names its entry by a code of three
 *       capitals that no other part of any identifier holds, so that a
 *       product matches one entry; entry j appends to out/(j % 200).txt).
 *
 * A benchmark's helper, not a test: nothing here is registered with ctest.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pq/pq.h"
#include "test/lib/tu_clock.h"

#define TABLE_ENTRIES 200

static int die(const char *what) {
  fprintf(stderr, "pqact_bench_aux: %s: %s\n", what, strerror(errno));
  return 1;
}

/* The np table's code of entry j: three capitals. */
static void np_code(unsigned j, char code[4]) {
  code[0] = (char)('A' + j / 676 % 26);
  code[1] = (char)('A' + j / 26 % 26);
  code[2] = (char)('A' + j % 26);
  code[3] = '\0';
}

/* The np table's entry j (its pattern) and an identifier it matches. */
static void np_entry(unsigned j, unsigned long i, char *pat, size_t plen,
                     char *ident, size_t ilen) {
  char c[4];
  np_code(j, c);
  switch (j % 5) {
  case 0:
    snprintf(pat, plen, "^[a-z]{4}[0-9]{2} (k|c)%s ([0-9]{6})", c);
    snprintf(ident, ilen, "saus%02lu k%s %06lu", i % 100, c, i % 1000000);
    break;
  case 1:
    snprintf(pat, plen, "(%s|%s_)[^ ]* /p([a-z]{3})", c, c);
    snprintf(ident, ilen, "warn %lu %s_x /pabc", i, c);
    break;
  case 2:
    snprintf(pat, plen, "/%s/([0-9]+)\\.grb2?$", c);
    snprintf(ident, ilen, "data/grib2/%s/%lu.grb2", c, i);
    break;
  case 3:
    snprintf(pat, plen, "^s[0-9]{2}%s(000|200|400|600|800)$", c);
    snprintf(ident, ilen, "s%02lu%s%03lu", i % 100, c, i % 5 * 200);
    break;
  default:
    snprintf(pat, plen, "^(nexrad2|nexrad3)/[a-z0-9]{3}/%s/([a-z0-9]+)", c);
    snprintf(ident, ilen, "nexrad3/n0r/%s/x%lu", c, i);
    break;
  }
}

static void ident_of(const char *kind, unsigned long i, unsigned ndec,
                     char *buf, size_t len) {
  if (strcmp(kind, "np") == 0) {
    char pat[256];
    np_entry((unsigned)(i % (ndec ? ndec : 1)), i, pat, sizeof pat, buf, len);
  } else if (strcmp(kind, "close") == 0)
    snprintf(buf, len, "P%06lu KXYZ 011200", i);
  else if (strcmp(kind, "table") == 0)
    snprintf(buf, len, "SAUS%03lu KXYZ %06lu /pAAA", i % TABLE_ENTRIES, i);
  else
    snprintf(buf, len, "D%lu %06lu", i % (ndec ? ndec : 1), i);
}

static int fill(const char *queue, unsigned long n, size_t size,
                const char *kind, unsigned ndec) {
  unsigned char *data = malloc(size ? size : 1);
  if (data == NULL)
    return die("malloc");
  for (size_t k = 0; k < size; k++)
    data[k] = (unsigned char)('A' + k % 26);
  if (size > 0)
    data[size - 1] = '\n';
  pq_t *pq = NULL;
  pq_error err = {0};
  if (pq_open(queue, 0, &pq, &err) != PQ_OK) {
    fprintf(stderr, "pqact_bench_aux: %s\n", err.pe_msg);
    free(data);
    return 1;
  }
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  int status = 0;
  for (unsigned long i = 0; i < n; i++) {
    pq_prod_info info = {.feedtype = PQ_FT_EXP, .seqno = (uint32_t)i};
    info.arrival.sec = ts.tv_sec;
    info.size = size;
    snprintf(info.origin, sizeof info.origin, "bench");
    ident_of(kind, i, ndec, info.ident, sizeof info.ident);
    memcpy(info.signature, &i, sizeof i);
    memcpy(info.signature + sizeof i, "pqactbench", 8);
    int rc = pq_insert(pq, &info, data);
    if (rc != PQ_OK) {
      fprintf(stderr, "pqact_bench_aux: insert %s: %s\n", info.ident,
              pq_strerror(rc));
      status = 1;
      break;
    }
  }
  pq_close(pq);
  free(data);
  return status;
}

static int floor_close(const char *dir, unsigned long n, size_t size) {
  char *data = calloc(1, size ? size : 1);
  if (data == NULL)
    return die("calloc");
  char path[4096];
  long long start = tu_now_ns();
  for (unsigned long i = 0; i < n; i++) {
    snprintf(path, sizeof path, "%s/f%06lu", dir, i);
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
    if (fd < 0)
      return die(path);
    if (write(fd, data, size) != (ssize_t)size)
      return die("write");
    if (close(fd) != 0)
      return die("close");
  }
  printf("%lld\n", tu_now_ns() - start);
  free(data);
  return 0;
}

static int floor_append(const char *dir, unsigned long n, size_t size,
                        unsigned k) {
  char *data = calloc(1, size ? size : 1);
  int *fds = calloc(k, sizeof *fds);
  if (data == NULL || fds == NULL)
    return die("calloc");
  char path[4096];
  long long start = tu_now_ns();
  for (unsigned j = 0; j < k; j++) {
    snprintf(path, sizeof path, "%s/a%03u", dir, j);
    fds[j] = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
    if (fds[j] < 0)
      return die(path);
  }
  for (unsigned long i = 0; i < n; i++)
    if (write(fds[i % k], data, size) != (ssize_t)size)
      return die("write");
  for (unsigned j = 0; j < k; j++)
    if (close(fds[j]) != 0)
      return die("close");
  printf("%lld\n", tu_now_ns() - start);
  free(fds);
  free(data);
  return 0;
}

/* Write the record "bytes first_ns last_ns" to path, whole (under another
 * name first, then renamed: the bench waits for the name). */
static int record(const char *path, unsigned long long total, long long first,
                  long long last) {
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "w");
  if (f == NULL || fprintf(f, "%llu %lld %lld\n", total, first, last) < 0 ||
      fclose(f) != 0 || rename(tmp, path) != 0)
    return die(path);
  return 0;
}

static int sink(const char *countfile, unsigned long long expect,
                const char *pidfile) {
  static char buf[1 << 17];
  unsigned long long total = 0;
  long long first = 0, last = 0;
  bool told = false;
  if (pidfile != NULL) {
    /* The stuck decoder: say who, then stop; only the first one (a
     * decoder pqact starts again in its place reads on). */
    int fd = open(pidfile, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      char line[32];
      int len = snprintf(line, sizeof line, "%ld\n", (long)getpid());
      if (write(fd, line, (size_t)len) != len || close(fd) != 0)
        return die(pidfile);
      raise(SIGSTOP);
    } else if (errno != EEXIST) {
      return die(pidfile);
    }
  }
  for (;;) {
    ssize_t r = read(0, buf, sizeof buf);
    if (r == 0)
      break;
    if (r < 0) {
      if (errno == EINTR)
        continue;
      return die("read");
    }
    last = tu_now_ns();
    if (total == 0)
      first = last;
    total += (unsigned long long)r;
    if (countfile != NULL && !told && expect > 0 && total >= expect) {
      if (record(countfile, total, first, last) != 0)
        return 1;
      told = true;
    }
  }
  if (countfile != NULL && !told && record(countfile, total, first, last))
    return 1;
  return 0;
}

static int conf(const char *kind, const char *path, unsigned ndec,
                const char *sinkpath, const char *countdir, bool stuck,
                unsigned long n, unsigned long long size) {
  FILE *f = fopen(path, "w");
  if (f == NULL)
    return die(path);
  if (strcmp(kind, "close") == 0) {
    fprintf(f, "EXP\t^P([0-9]+) (K...) ([0-3][0-9])([0-2][0-9])\n"
               "\tFILE\t-close\tout/\\1.txt\n");
  } else if (strcmp(kind, "table") == 0) {
    /* Site-like: an anchored literal, groups, brackets; each product
     * matches exactly one entry. */
    for (unsigned j = 0; j < TABLE_ENTRIES; j++)
      fprintf(f,
              "EXP\t^(SAUS%03u) (K[A-Z]{3}) ([0-9]+)\n"
              "\tFILE\tout/%03u/\\1_\\2.txt\n",
              j, j);
  } else if (strcmp(kind, "np") == 0) {
    for (unsigned j = 0; j < ndec; j++) {
      char pat[256], ident[256];
      np_entry(j, 0, pat, sizeof pat, ident, sizeof ident);
      fprintf(f, "EXP\t%s\n\tFILE\tout/%03u.txt\n", pat, j % 200);
    }
  } else {
    /* Decoder 0 of a stuck run (stuck != 0) stops itself at once. */
    for (unsigned j = 0; j < ndec; j++) {
      unsigned long mine = n / ndec + (j < n % ndec ? 1 : 0);
      fprintf(f, "EXP\t^D%u \tPIPE\t%s sink %s/%u.count %llu", j, sinkpath,
              countdir, j, mine * size);
      if (j == 0 && stuck)
        fprintf(f, " %s/0.pid", countdir);
      fputc('\n', f);
    }
  }
  if (fclose(f) != 0)
    return die(path);
  return 0;
}

int main(int argc, char **argv) {
  if (argc >= 6 && strcmp(argv[1], "fill") == 0)
    return fill(argv[2], strtoul(argv[3], NULL, 10), strtoul(argv[4], NULL, 10),
                argv[5], argc > 6 ? (unsigned)strtoul(argv[6], NULL, 10) : 1);
  if (argc == 5 && strcmp(argv[1], "floor") == 0)
    return floor_close(argv[2], strtoul(argv[3], NULL, 10),
                       strtoul(argv[4], NULL, 10));
  if (argc == 6 && strcmp(argv[1], "floor_append") == 0)
    return floor_append(argv[2], strtoul(argv[3], NULL, 10),
                        strtoul(argv[4], NULL, 10),
                        (unsigned)strtoul(argv[5], NULL, 10));
  if (argc >= 2 && argc <= 5 && strcmp(argv[1], "sink") == 0)
    return sink(argc > 2 ? argv[2] : NULL,
                argc > 3 ? strtoull(argv[3], NULL, 10) : 0,
                argc > 4 ? argv[4] : NULL);
  if (argc >= 4 && strcmp(argv[1], "conf") == 0)
    return conf(argv[2], argv[3],
                argc > 4 ? (unsigned)strtoul(argv[4], NULL, 10) : 1,
                argc > 5 ? argv[5] : "pqact_bench_aux",
                argc > 6 ? argv[6] : ".", argc > 7 && argv[7][0] == '1',
                argc > 8 ? strtoul(argv[8], NULL, 10) : 0,
                argc > 9 ? strtoull(argv[9], NULL, 10) : 0);
  fprintf(stderr, "usage: pqact_bench_aux fill|floor|floor_append|sink|conf "
                  "... (see pqact_bench_aux.c)\n");
  return 2;
}
