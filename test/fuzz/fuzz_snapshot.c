/*
 * fuzz_snapshot.c - libFuzzer target for the snapshot reader of pqrestore
 * (pqutils/queue/snapshot.c), a trust boundary: a snapshot file is restored
 * into a queue after a reboot, and may have been truncated, damaged or made by
 * anyone.  Each input is written to a file and read as pqrestore reads it
 * (snap_open, snap_verify, then every record with snap_next and
 * snap_read_data), and once more without the verification, the records'
 * data skipped, as a reader that trusted the file would.
 *
 * Properties checked: no crash, leak or sanitizer report; every failure
 * comes with a message; a snapshot that verifies reads back completely,
 * with as many records and data bytes as the verification counted, each
 * record's metadata within LDM's limits (origin and identifier lengths,
 * microseconds) and NUL-terminated.
 *
 * Seeds: with FUZZ_SEEDS_DIR set in the environment, the target writes
 * small valid snapshots there with the writer of snapshot.c (empty, one
 * product, several of various sizes) and exits (the test
 * fuzz_snapshot_seeds does it before the brief run).
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pqutils/queue/snapshot.h"
#include "test/fuzz/fuzz_util.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Write one seed of n products (sizes from sizes[]). */
static void write_seed(const char *dir, const char *name, size_t n,
                       const uint64_t *sizes) {
  char path[4096], err[512];
  static uint8_t payload[4096];
  struct snap_meta meta = {.data_size = 1 << 20,
                           .slots = 64,
                           .saved_us = 1700000000000000ull,
                           .newest_us = 1700000000000000ull + n};
  snap_writer *w = NULL;
  snprintf(path, sizeof path, "%s/%s", dir, name);
  if (snap_create(path, &meta, &w, err, sizeof err) != 0) {
    fprintf(stderr, "fuzz_snapshot: %s\n", err);
    exit(1);
  }
  for (size_t i = 0; i < sizeof payload; i++)
    payload[i] = (uint8_t)(i * 7 + 3);
  for (size_t i = 0; i < n; i++) {
    pq_prod_info info;
    memset(&info, 0, sizeof info);
    snprintf(info.origin, sizeof info.origin, "%s",
             i % 2 ? "noaaport.example.edu" : "");
    snprintf(info.ident, sizeof info.ident, "SDUS54 KLZK 14221%zu /pN0QLZK", i);
    info.arrival.sec = 1700000000 + (int64_t)i;
    info.arrival.usec = (int32_t)(i * 123457 % 1000000);
    info.feedtype = 0x08000000u >> i;
    info.seqno = (uint32_t)i;
    info.size = sizes[i];
    for (int k = 0; k < PQ_SIGLEN; k++)
      info.signature[k] = (uint8_t)(16 * i + (size_t)k);
    if (snap_write(w, &info, 1700000000000000ull + i, payload, err,
                   sizeof err) != 0) {
      fprintf(stderr, "fuzz_snapshot: %s\n", err);
      exit(1);
    }
  }
  if (snap_commit(w, err, sizeof err) != 0) {
    fprintf(stderr, "fuzz_snapshot: %s\n", err);
    exit(1);
  }
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  const char *dir = fuzz_seeds_dir();
  if (dir != NULL) {
    static const uint64_t one[] = {100};
    static const uint64_t several[] = {0, 1, 7, 8, 100, 4096};
    write_seed(dir, "empty.snap", 0, NULL);
    write_seed(dir, "one.snap", 1, one);
    write_seed(dir, "several.snap", 6, several);
    exit(0);
  }
  return 0;
}

static void check_record(const struct snap_record *rec) {
  const pq_prod_info *i = &rec->info;
  if (strnlen(i->origin, sizeof i->origin) > PQ_ORIGIN_MAX ||
      strnlen(i->ident, sizeof i->ident) > PQ_IDENT_MAX ||
      i->arrival.usec < 0 || i->arrival.usec > 999999)
    abort();
}

/* Read every record as pqrestore does; the data into a buffer when
 * with_data, else skipped.  @return 0 at the trailer, -1 at an error. */
static int read_records(snap_reader *r, bool with_data, uint64_t *count,
                        uint64_t *bytes) {
  struct snap_record rec;
  char err[512];
  int rc;
  *count = *bytes = 0;
  err[0] = '\0';
  while ((rc = snap_next(r, &rec, err, sizeof err)) == 1) {
    check_record(&rec);
    if (with_data) {
      /* snap_next() bounds the size by the file's: the input's size. */
      uint8_t *buf = malloc(rec.info.size > 0 ? (size_t)rec.info.size : 1);
      if (buf == NULL)
        abort();
      err[0] = '\0';
      int d = snap_read_data(r, buf, err, sizeof err);
      free(buf);
      if (d != 0) {
        if (err[0] == '\0')
          abort();
        return -1;
      }
    }
    ++*count;
    *bytes += rec.info.size;
    err[0] = '\0';
  }
  if (rc < 0 && err[0] == '\0')
    abort();
  return rc == 0 ? 0 : -1;
}

static void read_snapshot(const char *path) {
  snap_reader *r = NULL;
  struct snap_meta meta;
  char err[512] = "";
  uint64_t count = 0, bytes = 0, n = 0, b = 0;

  if (snap_open(path, &r, &meta, err, sizeof err) != 0) {
    if (r != NULL || err[0] == '\0')
      abort();
    return;
  }
  if (snap_verify(r, &count, &bytes, err, sizeof err) == 0) {
    /* Intact: the restore pass must read it all, and agree. */
    if (read_records(r, true, &n, &b) != 0 || n != count || b != bytes)
      abort();
  } else if (err[0] == '\0') {
    abort();
  }
  snap_close(r);

  /* A reader that did not verify first, skipping the data. */
  r = NULL;
  if (snap_open(path, &r, &meta, err, sizeof err) != 0)
    abort(); /* it opened a moment ago */
  (void)read_records(r, false, &n, &b);
  snap_close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *tmp = getenv("TMPDIR");
  char path[600];
  if (tmp == NULL || *tmp == '\0')
    tmp = "/tmp";
  snprintf(path, sizeof path, "%s/fuzz_snapshot.XXXXXX", tmp);
  int fd = mkostemp(path, O_CLOEXEC);
  if (fd < 0)
    return 0;
  const uint8_t *p = data;
  size_t left = size;
  while (left > 0) {
    ssize_t k = write(fd, p, left);
    if (k <= 0)
      break;
    p += k;
    left -= (size_t)k;
  }
  close(fd);
  if (left == 0)
    read_snapshot(path);
  unlink(path);
  return 0;
}
