/*
 * test_space.c - the queue file's space and the system calls around it:
 * a new queue has every block allocated (no hole a full tmpfs could fail
 * to fill, which kills with SIGBUS), a failure to allocate is refused with
 * PQ_NOSPACE and leaves no file behind, a queue left with holes is filled
 * by the first handle that can write it and refused by one that cannot,
 * and the failures of the other calls of creating and opening (fstat,
 * pread, rename, link), injected through pq/sys.c, come back as PQ_SYSTEM
 * with the errno, leaving the old queue intact and no temporary file.
 * test/cli/space.sh does the same on a real full tmpfs.
 */
#include "test/lib/testutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <sys/stat.h>

#include "pq/internal.h"

TU_QUEUE_FIXTURE("test_space")

static uint8_t buf[1 << 16];

/* Bytes of the file at p that have blocks; its size in *size. */
static uint64_t allocated(const char *p, uint64_t *size) {
  struct stat st;
  assert_int_equal(stat(p, &st), 0);
  *size = (uint64_t)st.st_size;
  return (uint64_t)st.st_blocks * 512u;
}

/* Files of path's directory whose name starts with path's name + ".new":
 * the temporary files of pq_create(). */
static unsigned temporaries(void) {
  char copy[256], base[256];
  snprintf(copy, sizeof copy, "%s", path);
  snprintf(base, sizeof base, "%s.new", basename(copy));
  snprintf(copy, sizeof copy, "%s", path);
  DIR *d = opendir(dirname(copy));
  assert_non_null(d);
  unsigned n = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;)
    n += strncmp(e->d_name, base, strlen(base)) == 0;
  closedir(d);
  return n;
}

static void expect_msg(const pq_error *err, const char *text) {
  if (strstr(err->pe_msg, text) == NULL)
    fail_msg("message \"%s\" lacks \"%s\"", err->pe_msg, text);
}

/* pq_find() callback: 0 if the data matches its signature. */
static int intact(const pq_prod_info *info, const void *data,
                  const pq_place *place, void *arg) {
  uint8_t sig[PQ_SIGLEN];
  (void)place;
  (void)arg;
  pq_md5(data, info->size, sig);
  return memcmp(sig, info->signature, PQ_SIGLEN) == 0 ? 0 : 1;
}

static void insert_read_back(pq_t *pq, unsigned n) {
  for (unsigned i = 0; i < n; i++) {
    pq_prod_info info;
    tu_product(&info, buf, 1000 + i * 997 % sizeof buf, 7000 + i);
    assert_int_equal(pq_insert(pq, &info, buf), PQ_OK);
    assert_int_equal(pq_find(pq, info.signature, intact, NULL), PQ_OK);
  }
  tu_check(pq);
}

static void test_created_reserved(void **state) {
  (void)state;
  pq_t *pq = tu_create(path, 4 << 20, 64);
  uint64_t size;
  assert_true(allocated(path, &size) >= size);
  assert_int_equal(size, pq_file_size(4 << 20, 64));
  insert_read_back(pq, 20);
  pq_close(pq);
}

static void test_create_fallocate_fails(void **state) {
  (void)state;
  pq_create_opts o = {.pc_data_size = 1 << 20, .pc_slots = 16};
  pq_t *pq = NULL;
  pq_error err;
  pq__sys_inject("fallocate", ENOSPC);
  assert_int_equal(pq_create(path, &o, &pq, &err), PQ_NOSPACE);
  assert_null(pq);
  assert_int_equal(err.pe_errno, ENOSPC);
  expect_msg(&err, path);
  expect_msg(&err, strerror(ENOSPC));
  assert_int_equal(access(path, F_OK), -1);
  assert_int_equal(temporaries(), 0);
  pq__sys_inject("fallocate", EIO);
  assert_int_equal(pq_create(path, &o, &pq, &err), PQ_SYSTEM);
  assert_int_equal(err.pe_errno, EIO);
  assert_int_equal(access(path, F_OK), -1);
  assert_int_equal(temporaries(), 0);

  /* Replacing a queue: the old one survives a failed attempt. */
  pq = tu_create(path, 1 << 20, 16);
  insert_read_back(pq, 3);
  pq_close(pq);
  o.pc_flags = PQ_CLOBBER;
  pq__sys_inject("fallocate", ENOSPC);
  assert_int_equal(pq_create(path, &o, &pq, &err), PQ_NOSPACE);
  assert_int_equal(temporaries(), 0);
  assert_int_equal(pq_open(path, 0, &pq, &err), PQ_OK);
  pq_stats st;
  assert_int_equal(pq_stats_get(pq, &st), PQ_OK);
  assert_int_equal(st.ps_nprods, 3);
  pq_close(pq);
}

/* Make the (empty) data area of the queue at path a hole again, as an
 * older build that created queues sparse left it. */
static void punch_data_area(void) {
  pq_t *pq;
  assert_int_equal(pq_open(path, PQ_READONLY, &pq, NULL), PQ_OK);
  uint64_t data = pq_data_size(pq);
  pq_close(pq);
  uint64_t size;
  (void)allocated(path, &size);
  int fd = open(path, O_RDWR);
  assert_true(fd >= 0);
  assert_int_equal(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                             (off_t)(size - data), (off_t)data),
                   0);
  close(fd);
  assert_true(allocated(path, &size) < size);
}

static void test_sparse_queue_reserved_at_open(void **state) {
  (void)state;
  pq_close(tu_create(path, 2 << 20, 32));
  punch_data_area();
  uint64_t size;

  /* No room for the holes: refused, the file left as it was. */
  pq_t *pq = NULL;
  pq_error err;
  pq__sys_inject("fallocate", ENOSPC);
  assert_int_equal(pq_open(path, 0, &pq, &err), PQ_NOSPACE);
  assert_null(pq);
  assert_int_equal(err.pe_errno, ENOSPC);
  expect_msg(&err, path);
  expect_msg(&err, "holes");
  expect_msg(&err, strerror(ENOSPC));
  assert_true(allocated(path, &size) < size);

  /* A reader that may not write the file cannot fill them: refused. */
  pq__sys_inject("open", EACCES); /* the read-write open; read-only next */
  assert_int_equal(pq_open(path, PQ_READONLY, &pq, &err), PQ_NOSPACE);
  expect_msg(&err, path);
  expect_msg(&err, "may not write it");
  assert_true(allocated(path, &size) < size);

  /* A reader that can write it fills them, as a writer does. */
  assert_int_equal(pq_open(path, PQ_READONLY, &pq, &err), PQ_OK);
  assert_true(allocated(path, &size) >= size);
  pq_close(pq);
  punch_data_area();
  assert_int_equal(pq_open(path, 0, &pq, &err), PQ_OK);
  assert_true(allocated(path, &size) >= size);
  insert_read_back(pq, 30);
  pq_close(pq);
}

static void test_open_injected_failures(void **state) {
  (void)state;
  pq_close(tu_create(path, 1 << 20, 16));
  pq_t *pq = NULL;
  pq_error err;
  const char *calls[] = {"fstat", "pread", "mmap"};
  for (unsigned i = 0; i < sizeof calls / sizeof calls[0]; i++) {
    pq__sys_inject(calls[i], EIO);
    assert_int_equal(pq_open(path, 0, &pq, &err), PQ_SYSTEM);
    assert_null(pq);
    assert_int_equal(err.pe_errno, EIO);
    expect_msg(&err, path);
    expect_msg(&err, strerror(EIO));
  }
  /* Nothing of the failed opens stays behind: no writer byte is left
   * taken, and the queue opens and works. */
  assert_int_equal(pq_open(path, 0, &pq, &err), PQ_OK);
  unsigned writers = 0;
  assert_int_equal(pq_writer_count(pq, &writers), PQ_OK);
  assert_int_equal(writers, 1);
  insert_read_back(pq, 3);
  pq_close(pq);
}

static void test_create_rename_link_fail(void **state) {
  (void)state;
  pq_create_opts o = {.pc_data_size = 1 << 20, .pc_slots = 16};
  pq_t *pq = NULL;
  pq_error err;
  /* A new queue goes into place with link(): on failure, no file. */
  pq__sys_inject("link", EIO);
  assert_int_equal(pq_create(path, &o, &pq, &err), PQ_SYSTEM);
  assert_null(pq);
  assert_int_equal(err.pe_errno, EIO);
  expect_msg(&err, "link");
  expect_msg(&err, path);
  assert_int_equal(access(path, F_OK), -1);
  assert_int_equal(temporaries(), 0);

  /* A replacement goes into place with rename(): on failure, the old
   * queue is still there, whole. */
  pq = tu_create(path, 1 << 20, 16);
  insert_read_back(pq, 4);
  pq_close(pq);
  o.pc_flags = PQ_CLOBBER;
  o.pc_slots = 32;
  pq__sys_inject("rename", EXDEV);
  assert_int_equal(pq_create(path, &o, &pq, &err), PQ_SYSTEM);
  assert_int_equal(err.pe_errno, EXDEV);
  expect_msg(&err, "rename");
  assert_int_equal(temporaries(), 0);
  assert_int_equal(pq_open(path, 0, &pq, &err), PQ_OK);
  assert_int_equal(pq_slot_count(pq), 16);
  pq_stats st;
  assert_int_equal(pq_stats_get(pq, &st), PQ_OK);
  assert_int_equal(st.ps_nprods, 4);
  tu_check(pq);
  pq_close(pq);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_created_reserved, setup, teardown),
      cmocka_unit_test_setup_teardown(test_create_fallocate_fails, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_sparse_queue_reserved_at_open, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_open_injected_failures, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_create_rename_link_fail, setup,
                                      teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
