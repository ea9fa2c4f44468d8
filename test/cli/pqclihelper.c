/*
 * pqclihelper - what the shell tests of the queue utilities need and the
 * utilities themselves do not offer, done directly with the queue library:
 *
 *   pqclihelper hold QUEUE            reserve a product and never commit it
 *                                     (prints "reserved"; for SIGKILL tests)
 *   pqclihelper read-hold QUEUE       read-lock the oldest product and sleep
 *                                     (prints "holding")
 *   pqclihelper insert-old QUEUE N AGE [PREFIX]
 *                                     insert N products of 100 bytes whose
 *                                     creation time is AGE seconds ago
 *   pqclihelper insert-at QUEUE TIME IDENT
 *                                     insert a 10-byte product at insertion
 *                                     time TIME (microseconds)
 *   pqclihelper dump QUEUE            one line per product, oldest first:
 *                                     insertion time (µs), then LDM's product
 *                                     line with the signature
 *   pqclihelper lock QUEUE            take the control lock exclusively (as a
 *                                     writer changing the indexes does), print
 *                                     "locked" and keep it until killed: a
 *                                     program that needs it then waits inside
 *                                     fcntl(F_OFD_SETLKW), for a test to find
 *                                     in /proc/locks
 *   pqclihelper sleepers QUEUE        how many readers are asleep in pq_wait()
 *                                     (bits set in hd_sleepers)
 *
 * Exit status 0 on success, 1 with a message on stderr otherwise.
 */
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pq/format.h"
#include "pq/pq.h"

static pq_t *open_queue(const char *path, unsigned flags) {
  pq_t *pq = NULL;
  pq_error err;
  if (pq_open(path, flags, &pq, &err) != PQ_OK) {
    fprintf(stderr, "pqclihelper: pq_open failed: %s\n", err.pe_msg);
    exit(1);
  }
  return pq;
}

static int hold(const char *path) {
  pq_t *pq = open_queue(path, 0);
  pq_prod_info info = {
      .arrival = pq_ts_now(), .feedtype = PQ_FT_EXP, .size = 1000};
  snprintf(info.ident, sizeof info.ident, "held.%ld", (long)getpid());
  snprintf(info.origin, sizeof info.origin, "helper");
  pq_md5(info.ident, strlen(info.ident), info.signature);
  pq_resv r;
  int rc = pq_reserve(pq, &info, &r);
  if (rc != PQ_OK) {
    fprintf(stderr, "pqclihelper: pq_reserve failed: %s\n", pq_strerror(rc));
    return 1;
  }
  memset(r.pr_data, 'h', (size_t)r.pr_size);
  printf("reserved\n");
  fflush(stdout);
  for (;;)
    pause();
}

static int sleep_forever(const pq_prod_info *info, const void *data,
                         const pq_place *place, void *arg) {
  (void)info;
  (void)data;
  (void)place;
  (void)arg;
  printf("holding\n");
  fflush(stdout);
  for (;;)
    pause();
  return 0;
}

static int read_hold(const char *path) {
  pq_t *pq = open_queue(path, PQ_READONLY);
  int rc = pq_next(pq, PQ_FORWARD, NULL, sleep_forever, NULL);
  fprintf(stderr, "pqclihelper: pq_next: %s\n", pq_strerror(rc));
  return 1;
}

static int insert_old(const char *path, long n, double age,
                      const char *prefix) {
  pq_t *pq = open_queue(path, 0);
  uint64_t now = pq_ts_to_us(pq_ts_now());
  uint8_t data[100];
  for (long i = 0; i < n; i++) {
    pq_prod_info info = {.arrival = pq_ts_from_us(now - (uint64_t)(age * 1e6)),
                         .feedtype = PQ_FT_EXP,
                         .seqno = (uint32_t)i,
                         .size = sizeof data};
    snprintf(info.ident, sizeof info.ident, "%s.%ld", prefix, i);
    snprintf(info.origin, sizeof info.origin, "helper");
    memset(data, (int)(i & 0xff), sizeof data);
    snprintf((char *)data, sizeof data, "%.80s %llu", info.ident,
             (unsigned long long)now);
    pq_md5(data, sizeof data, info.signature);
    int rc = pq_insert(pq, &info, data);
    if (rc != PQ_OK) {
      fprintf(stderr, "pqclihelper: pq_insert failed: %s\n", pq_strerror(rc));
      return 1;
    }
  }
  return pq_close(pq) == PQ_OK ? 0 : 1;
}

static int insert_at(const char *path, unsigned long long at,
                     const char *ident) {
  pq_t *pq = open_queue(path, 0);
  pq_prod_info info = {
      .arrival = pq_ts_now(), .feedtype = PQ_FT_EXP, .size = 10};
  snprintf(info.ident, sizeof info.ident, "%s", ident);
  snprintf(info.origin, sizeof info.origin, "helper");
  pq_md5(info.ident, strlen(info.ident), info.signature);
  pq_resv r;
  int rc = pq_reserve(pq, &info, &r);
  if (rc == PQ_OK) {
    memcpy(r.pr_data, "0123456789", 10);
    rc = pq_commit_at(pq, &r, at);
  }
  if (rc != PQ_OK) {
    fprintf(stderr, "pqclihelper: insert-at: %s\n", pq_strerror(rc));
    return 1;
  }
  return pq_close(pq) == PQ_OK ? 0 : 1;
}

static int print_one(const pq_prod_info *info, const void *data,
                     const pq_place *place, void *arg) {
  char line[600];
  (void)data;
  (void)arg;
  pq_prod_info_format(info, true, line, sizeof line);
  printf("%llu %s\n", (unsigned long long)place->pp_inserted, line);
  return 0;
}

static int dump(const char *path) {
  pq_t *pq = open_queue(path, PQ_READONLY);
  int rc;
  while ((rc = pq_next(pq, PQ_FORWARD, NULL, print_one, NULL)) == PQ_OK)
    ;
  pq_close(pq);
  if (rc != PQ_END) {
    fprintf(stderr, "pqclihelper: pq_next: %s\n", pq_strerror(rc));
    return 1;
  }
  return fflush(stdout) == 0 ? 0 : 1;
}

static int lock_control(const char *path) {
  struct flock fl = {.l_type = F_WRLCK,
                     .l_whence = SEEK_SET,
                     .l_start = PQ_LOCK_CONTROL,
                     .l_len = 1};
  int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0 || fcntl(fd, F_OFD_SETLKW, &fl) != 0) {
    perror(path);
    return 1;
  }
  printf("locked\n");
  fflush(stdout);
  for (;;)
    pause();
}

static int sleepers(const char *path) {
  uint64_t bits[PQ_MAX_WAITERS / 64];
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  unsigned n = 0;
  if (fd < 0 || pread(fd, bits, sizeof bits,
                      offsetof(struct pq_hdr, hd_sleepers)) != sizeof bits) {
    perror(path);
    return 1;
  }
  close(fd);
  for (size_t i = 0; i < PQ_MAX_WAITERS / 64; i++)
    n += (unsigned)__builtin_popcountll(bits[i]);
  printf("%u\n", n);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "hold") == 0)
    return hold(argv[2]);
  if (argc == 3 && strcmp(argv[1], "read-hold") == 0)
    return read_hold(argv[2]);
  if ((argc == 5 || argc == 6) && strcmp(argv[1], "insert-old") == 0)
    return insert_old(argv[2], atol(argv[3]), atof(argv[4]),
                      argc == 6 ? argv[5] : "old");
  if (argc == 5 && strcmp(argv[1], "insert-at") == 0)
    return insert_at(argv[2], strtoull(argv[3], NULL, 10), argv[4]);
  if (argc == 3 && strcmp(argv[1], "dump") == 0)
    return dump(argv[2]);
  if (argc == 3 && strcmp(argv[1], "lock") == 0)
    return lock_control(argv[2]);
  if (argc == 3 && strcmp(argv[1], "sleepers") == 0)
    return sleepers(argv[2]);
  fprintf(stderr, "usage: pqclihelper hold|read-hold|dump|lock|sleepers "
                  "QUEUE\n"
                  "       pqclihelper insert-old QUEUE N AGE [PREFIX]\n"
                  "       pqclihelper insert-at QUEUE TIME IDENT\n");
  return 1;
}
