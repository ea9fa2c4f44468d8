/*
 * pqclihelper - what the shell tests of the queue utilities need and the
 * utilities themselves do not offer, done directly with the queue library:
 *
 *   pqclihelper hold QUEUE            reserve a product and never commit it
 *                                     (prints "reserved"; for SIGKILL tests)
 *   pqclihelper crash QUEUE           reserve a product, start a change of
 *                                     the indexes under the control lock,
 *                                     and die of SIGKILL in the middle: a
 *                                     writer that crashed mid-change
 *   pqclihelper layout QUEUE          where the sections of the file lie:
 *                                     "slots OFF nodes OFF rlist OFF hash OFF
 *                                     data OFF nslots N" (from its header)
 *   pqclihelper read-hold QUEUE       read-lock the oldest product and sleep
 *                                     (prints "holding")
 *   pqclihelper insert-old QUEUE N AGE [PREFIX]
 *                                     insert N products of 100 bytes whose
 *                                     creation time is AGE seconds ago
 *   pqclihelper insert-at QUEUE TIME IDENT
 *                                     insert a 10-byte product at insertion
 *                                     time TIME (microseconds)
 *   pqclihelper where QUEUE IDENT     "OFFSET SIZE": where in the file the
 *                                     data of the product IDENT lies
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
 *   pqclihelper hold-shared QUEUE     take the control lock shared as a reader
 *                                     does (pq__ctl_lock), print "locked" and
 *                                     keep it until killed
 *   pqclihelper take QUEUE MODE TAG FILE
 *                                     open QUEUE (MODE excl: as a writer;
 *                                     shared: read-only), print "open",
 *                                     wait for a line on stdin, take the
 *                                     control lock (MODE), append TAG to
 *                                     FILE while holding it, and exit: the
 *                                     order of the tags in FILE is the
 *                                     order the lock was granted
 *   pqclihelper wwait QUEUE           how many writers are marked as waiting
 *                                     for the control lock (bits set in
 *                                     hd_wwait)
 *   pqclihelper offset FIELD          the offset in the file of a header
 *                                     field: head, head_prev (the word of
 *                                     hd_head_prev and hd_free_top),
 *                                     last_key, nfree_slots
 *
 * Exit status 0 on success, 1 with a message on stderr otherwise.
 */
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pq/internal.h"

static pq_t *open_queue(const char *path, unsigned flags) {
  pq_t *pq = NULL;
  pq_error err;
  if (pq_open(path, flags, &pq, &err) != PQ_OK) {
    fprintf(stderr, "pqclihelper: pq_open failed: %s\n", err.pe_msg);
    exit(1);
  }
  return pq;
}

/* A reservation of 1000 bytes in pq for a product "<what>.<pid>". */
static int reserve_one(pq_t *pq, const char *what, pq_resv *r) {
  pq_prod_info info = {
      .arrival = pq_ts_now(), .feedtype = PQ_FT_EXP, .size = 1000};
  snprintf(info.ident, sizeof info.ident, "%s.%ld", what, (long)getpid());
  snprintf(info.origin, sizeof info.origin, "helper");
  pq_md5(info.ident, strlen(info.ident), info.signature);
  return pq_reserve(pq, &info, r);
}

static int hold(const char *path) {
  pq_t *pq = open_queue(path, 0);
  pq_resv r;
  int rc = reserve_one(pq, "held", &r);
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

static int crash(const char *path) {
  pq_t *pq = open_queue(path, 0);
  pq_resv r;
  int rc = reserve_one(pq, "crashed", &r);
  if (rc == PQ_OK)
    rc = pq__ctl_lock(pq, true);
  if (rc != PQ_OK) {
    fprintf(stderr, "pqclihelper: crash: %s\n", pq_strerror(rc));
    return 1;
  }
  /* As pq_commit() does, up to the point where the process dies. */
  pq__mutate_begin(pq, PQ_OP_COMMIT, r.pr_slot);
  raise(SIGKILL);
  return 1;
}

static int layout(const char *path) {
  struct pq_hdr h;
  int fd = open(path, O_RDONLY);
  if (fd < 0 || pread(fd, &h, sizeof h, 0) != (ssize_t)sizeof h) {
    perror(path);
    return 1;
  }
  close(fd);
  printf("slots %llu nodes %llu rlist %llu hash %llu data %llu nslots %llu\n",
         (unsigned long long)h.hd_slot_off, (unsigned long long)h.hd_node_off,
         (unsigned long long)h.hd_rlist_off, (unsigned long long)h.hd_hash_off,
         (unsigned long long)h.hd_data_off, (unsigned long long)h.hd_nslots);
  return 0;
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

struct where {
  const char *ident;
  int found;
};

static int print_where(const pq_prod_info *info, const void *data,
                       const pq_place *place, void *arg) {
  struct where *w = arg;
  (void)data;
  if (strcmp(info->ident, w->ident) != 0)
    return 0;
  /* The data follows the record and its strings, padded to PQ_ALIGN. */
  uint64_t rec =
      sizeof(struct pq_rec) + strlen(info->origin) + strlen(info->ident);
  rec = (rec + PQ_ALIGN - 1) / PQ_ALIGN * PQ_ALIGN;
  printf("%llu %llu\n", (unsigned long long)(place->pp_offset + rec),
         (unsigned long long)info->size);
  w->found = 1;
  return 0;
}

static int where(const char *path, const char *ident) {
  pq_t *pq = open_queue(path, PQ_READONLY);
  struct where w = {ident, 0};
  int rc;
  while ((rc = pq_next(pq, PQ_FORWARD, NULL, print_where, &w)) == PQ_OK)
    ;
  pq_close(pq);
  if (rc != PQ_END || !w.found) {
    fprintf(stderr, "pqclihelper: where %s: %s\n", ident,
            w.found ? pq_strerror(rc) : "no such product");
    return 1;
  }
  return fflush(stdout) == 0 ? 0 : 1;
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

/* Print how many bits are set in the header's bitmap of n 64-bit words at
 * off (hd_sleepers: processes asleep in pq_wait(); hd_wwait: writers
 * waiting for the control lock). */
#define BITMAP_WORDS_MAX 64
_Static_assert(PQ_MAX_WAITERS / 64 <= BITMAP_WORDS_MAX &&
                   PQ_MAX_WRITERS / 64 <= BITMAP_WORDS_MAX,
               "a header bitmap fits count_bits()'s buffer");
static int count_bits(const char *path, size_t off, size_t n) {
  uint64_t bits[BITMAP_WORDS_MAX];
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  unsigned count = 0;
  if (fd < 0 || n > sizeof bits / sizeof bits[0] ||
      pread(fd, bits, n * sizeof bits[0], (off_t)off) !=
          (ssize_t)(n * sizeof bits[0])) {
    perror(path);
    return 1;
  }
  close(fd);
  for (size_t i = 0; i < n; i++)
    count += (unsigned)__builtin_popcountll(bits[i]);
  printf("%u\n", count);
  return 0;
}

static int sleepers(const char *path) {
  return count_bits(path, offsetof(struct pq_hdr, hd_sleepers),
                    PQ_MAX_WAITERS / 64);
}

static int hold_shared(const char *path) {
  pq_t *pq = open_queue(path, PQ_READONLY);
  int rc = pq__ctl_lock(pq, false);
  if (rc != PQ_OK) {
    fprintf(stderr, "pqclihelper: hold-shared: %s\n", pq_strerror(rc));
    return 1;
  }
  printf("locked\n");
  fflush(stdout);
  for (;;)
    pause();
}

static int take(const char *path, const char *mode, const char *tag,
                const char *file) {
  bool exclusive = strcmp(mode, "excl") == 0;
  if (!exclusive && strcmp(mode, "shared") != 0) {
    fprintf(stderr, "pqclihelper: take: MODE is excl or shared\n");
    return 1;
  }
  pq_t *pq = open_queue(path, exclusive ? 0 : PQ_READONLY);
  printf("open\n");
  fflush(stdout);
  char line[16];
  if (fgets(line, sizeof line, stdin) == NULL) {
    fprintf(stderr, "pqclihelper: take: no go-ahead on stdin\n");
    return 1;
  }
  int rc = pq__ctl_lock(pq, exclusive);
  if (rc != PQ_OK) {
    fprintf(stderr, "pqclihelper: take: %s\n", pq_strerror(rc));
    return 1;
  }
  FILE *f = fopen(file, "a");
  bool ok = f != NULL && fprintf(f, "%s\n", tag) > 0;
  if (f != NULL && fclose(f) != 0)
    ok = false;
  pq__ctl_unlock(pq);
  pq_close(pq);
  if (!ok)
    perror(file);
  return ok ? 0 : 1;
}

static int wwait(const char *path) {
  return count_bits(path, offsetof(struct pq_hdr, hd_wwait),
                    PQ_MAX_WRITERS / 64);
}

/* Where a header field lies in the file, for a test to damage it. */
static int field_offset(const char *name) {
  static const struct {
    const char *name;
    size_t off;
  } fields[] = {
      {"head", offsetof(struct pq_hdr, hd_head)},
      {"head_prev", offsetof(struct pq_hdr, hd_head_prev)},
      {"last_key", offsetof(struct pq_hdr, hd_last_key)},
      {"nfree_slots", offsetof(struct pq_hdr, hd_nfree_slots)},
  };
  for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
    if (strcmp(name, fields[i].name) == 0) {
      printf("%zu\n", PQ_HDR_OFF + fields[i].off);
      return 0;
    }
  fprintf(stderr, "pqclihelper: offset: no field %s\n", name);
  return 1;
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "hold") == 0)
    return hold(argv[2]);
  if (argc == 3 && strcmp(argv[1], "read-hold") == 0)
    return read_hold(argv[2]);
  if (argc == 3 && strcmp(argv[1], "crash") == 0)
    return crash(argv[2]);
  if (argc == 3 && strcmp(argv[1], "layout") == 0)
    return layout(argv[2]);
  if ((argc == 5 || argc == 6) && strcmp(argv[1], "insert-old") == 0)
    return insert_old(argv[2], atol(argv[3]), atof(argv[4]),
                      argc == 6 ? argv[5] : "old");
  if (argc == 5 && strcmp(argv[1], "insert-at") == 0)
    return insert_at(argv[2], strtoull(argv[3], NULL, 10), argv[4]);
  if (argc == 3 && strcmp(argv[1], "dump") == 0)
    return dump(argv[2]);
  if (argc == 4 && strcmp(argv[1], "where") == 0)
    return where(argv[2], argv[3]);
  if (argc == 3 && strcmp(argv[1], "lock") == 0)
    return lock_control(argv[2]);
  if (argc == 3 && strcmp(argv[1], "sleepers") == 0)
    return sleepers(argv[2]);
  if (argc == 3 && strcmp(argv[1], "offset") == 0)
    return field_offset(argv[2]);
  if (argc == 3 && strcmp(argv[1], "hold-shared") == 0)
    return hold_shared(argv[2]);
  if (argc == 6 && strcmp(argv[1], "take") == 0)
    return take(argv[2], argv[3], argv[4], argv[5]);
  if (argc == 3 && strcmp(argv[1], "wwait") == 0)
    return wwait(argv[2]);
  fprintf(stderr, "usage: pqclihelper hold|crash|read-hold|layout|dump|lock|"
                  "sleepers|hold-shared|wwait QUEUE\n"
                  "       pqclihelper take QUEUE excl|shared TAG FILE\n"
                  "       pqclihelper insert-old QUEUE N AGE [PREFIX]\n"
                  "       pqclihelper insert-at QUEUE TIME IDENT\n"
                  "       pqclihelper where QUEUE IDENT\n"
                  "       pqclihelper offset FIELD\n");
  return 1;
}
