/*
 * mp_util.c - helpers of the multi-process tests (see mp_util.h): random
 * streams and reproducible contents, clocks, queue paths, shared memory
 * and child processes.  Test code: it prints and exits on setup failures.
 */
#include "test/mp/mp_util.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

uint64_t mp_rand(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t mp_rand_range(uint64_t *state, uint64_t lo, uint64_t hi) {
  if (hi <= lo)
    return lo;
  return lo + mp_rand(state) % (hi - lo + 1);
}

uint64_t mp_mix(uint64_t a, uint64_t b) {
  uint64_t s = a ^ (b * 0xd6e8feb86659fd93ULL);
  return mp_rand(&s);
}

void mp_fill(void *buf, size_t len, uint64_t seed) {
  uint8_t *p = buf;
  uint64_t s = seed;
  size_t i = 0;
  for (; i + 8 <= len; i += 8) {
    uint64_t w = mp_rand(&s);
    memcpy(p + i, &w, 8);
  }
  if (i < len) {
    uint64_t w = mp_rand(&s);
    memcpy(p + i, &w, len - i);
  }
}

bool mp_parse_u64(const char *s, uint64_t *out) {
  if (s == NULL || *s == '\0')
    return false;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 0);
  if (errno != 0 || *end != '\0')
    return false;
  *out = v;
  return true;
}

uint64_t mp_seed_from_env(const char *env) {
  uint64_t seed;
  const char *v = getenv(env);
  if (v != NULL && *v != '\0') {
    if (mp_parse_u64(v, &seed))
      return seed;
    fprintf(stderr, "ignoring malformed %s=%s\n", env, v);
  }
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  seed = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
  return mp_mix(seed, (uint64_t)getpid());
}

void mp_sleep_us(int64_t us) {
  if (us <= 0)
    return;
  struct timespec ts = {.tv_sec = us / 1000000,
                        .tv_nsec = (long)(us % 1000000) * 1000L};
  while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
    ;
}

const char *mp_test_dir(void) {
  const char *d = getenv("PQ_TEST_DIR");
  return d != NULL && *d != '\0' ? d : "/dev/shm";
}

void mp_queue_path(char *buf, size_t len, const char *tag) {
  snprintf(buf, len, "%s/%s.%ld.pq", mp_test_dir(), tag, (long)getpid());
}

void *mp_shared(size_t len) {
  void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                 -1, 0);
  if (p == MAP_FAILED) {
    perror("mmap shared memory");
    exit(2);
  }
  return p;
}

void mp_unshare(void *p, size_t len) {
  munmap(p, len);
}

pid_t mp_spawn(int (*fn)(void *), void *arg) {
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    perror("fork");
    exit(2);
  }
  if (pid == 0) {
    int rc = fn(arg);
    fflush(stdout);
    fflush(stderr);
    exit(rc);
  }
  return pid;
}

void mp_status_text(int status, char *buf, size_t len) {
  if (WIFEXITED(status))
    snprintf(buf, len, "exit %d", WEXITSTATUS(status));
  else if (WIFSIGNALED(status))
    snprintf(buf, len, "signal %d (%s)", WTERMSIG(status),
             strsignal(WTERMSIG(status)));
  else
    snprintf(buf, len, "status 0x%x", (unsigned)status);
}

int mp_wait_children(struct mp_child *kids, int n, int64_t deadline_us) {
  int left = 0;
  for (int i = 0; i < n; i++)
    left += !kids[i].reaped;
  while (left > 0 && tu_now_us() < deadline_us) {
    int status;
    pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid < 0 && errno != EINTR)
      break;
    if (pid <= 0) {
      mp_sleep_us(2000);
      continue;
    }
    for (int i = 0; i < n; i++)
      if (!kids[i].reaped && kids[i].pid == pid) {
        kids[i].status = status;
        kids[i].reaped = true;
        left--;
      }
  }
  int failed = 0;
  for (int i = 0; i < n; i++) {
    if (!kids[i].reaped) {
      kill(kids[i].pid, SIGKILL);
      waitpid(kids[i].pid, &kids[i].status, 0);
      kids[i].reaped = true;
      printf("FAIL %s (pid %ld): still running at the deadline, killed\n",
             kids[i].name, (long)kids[i].pid);
      failed++;
      continue;
    }
    if (!WIFEXITED(kids[i].status) || WEXITSTATUS(kids[i].status) != 0) {
      char txt[64];
      mp_status_text(kids[i].status, txt, sizeof txt);
      printf("FAIL %s (pid %ld): %s\n", kids[i].name, (long)kids[i].pid, txt);
      failed++;
    }
  }
  return failed;
}

bool mp_ok(int rc, pq_t *pq, const char *what) {
  if (rc == PQ_OK)
    return true;
  const pq_error *e = pq != NULL ? pq_last_error(pq) : NULL;
  printf("%s: %s%s%s\n", what, pq_strerror(rc),
         e != NULL && e->pe_msg[0] ? " -- " : "",
         e != NULL && e->pe_msg[0] ? e->pe_msg : "");
  return false;
}
