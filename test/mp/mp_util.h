/*
 * mp_util.h - what the multi-process tests of test/mp/ share: a seeded
 * random generator and reproducible product contents, monotonic time
 * (test/lib/tu_clock.h, included here), where the queues go (PQ_TEST_DIR),
 * memory shared with forked children (anonymous mappings, never a queue
 * handle), and starting and reaping children that report through their
 * exit status.
 *
 * A pq_t handle never crosses fork(): every child opens its own.
 */
#ifndef PQ_TEST_MP_UTIL_H
#define PQ_TEST_MP_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pq/pq.h"
#include "test/lib/tu_clock.h"

/* ---- randomness ---- */

/** One step of splitmix64: a good 64-bit stream from any seed. */
uint64_t mp_rand(uint64_t *state);
/** Uniform in [lo, hi] (inclusive). */
uint64_t mp_rand_range(uint64_t *state, uint64_t lo, uint64_t hi);
/** Mix several values into one seed. */
uint64_t mp_mix(uint64_t a, uint64_t b);
/** Fill buf with len bytes that depend only on seed. */
void mp_fill(void *buf, size_t len, uint64_t seed);
/**
 * The seed of a random test: from the environment variable env if set
 * (decimal or 0x hex), else from the clock and the pid.
 */
uint64_t mp_seed_from_env(const char *env);
/** Parse a decimal or 0x seed; false if malformed. */
bool mp_parse_u64(const char *s, uint64_t *out);

/* ---- time ---- */

/* The clock is test/lib/tu_clock.h's: tu_now_us(), tu_now_ns(). */
/** Sleep that many microseconds (restarts after signals). */
void mp_sleep_us(int64_t us);

/* ---- files ---- */

/** PQ_TEST_DIR, or /dev/shm if it is unset. */
const char *mp_test_dir(void);
/** Write "<dir>/<tag>.<pid>.pq" into buf. */
void mp_queue_path(char *buf, size_t len, const char *tag);

/* ---- shared memory and children ---- */

/** An anonymous shared mapping of len zeroed bytes; exits on failure. */
void *mp_shared(size_t len);
void mp_unshare(void *p, size_t len);

/**
 * Fork a child that runs fn(arg) and exits with its return value (a
 * child's stdio is flushed first, so nothing is printed twice).
 * @return the child's pid; exits the test on failure.
 */
pid_t mp_spawn(int (*fn)(void *), void *arg);

/** A child to wait for. */
struct mp_child {
  pid_t pid;
  char name[32];
  int status; /* from waitpid, once reaped */
  bool reaped;
};

/**
 * Wait for every child until deadline_us (tu_now_us() time); children still
 * running then are killed with SIGKILL and reported.  Prints one line per
 * child that did not exit with status 0.
 * @return the number of children that failed (0: all exited 0).
 */
int mp_wait_children(struct mp_child *kids, int n, int64_t deadline_us);

/** Describe a waitpid status ("exit 3", "signal 9 (Killed)"). */
void mp_status_text(int status, char *buf, size_t len);

/* ---- products ---- */

/** Expect rc == PQ_OK or print "what: message (detail)" and return false. */
bool mp_ok(int rc, pq_t *pq, const char *what);

#endif /* PQ_TEST_MP_UTIL_H */
