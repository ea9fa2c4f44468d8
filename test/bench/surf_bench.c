/*
 * surf_bench.c - what pqsurf's splitting costs (pqutils/surf/surf_split.h),
 * in one process, on bulletins it makes: METAR collectives of 60 reports
 * and SYNOP collectives of 40, each report about 70 bytes.
 *
 *   surf_bench [-q] [DIR]
 *
 * Two figures, each printed with what was measured in this run (the
 * bulletins are made outside the timed part):
 *   split   bulletins and observations a second, splitting only (the
 *           observations handed to a callback that keeps nothing);
 *   insert  the same with each observation inserted into a queue made in
 *           DIR (default /dev/shm, else $TMPDIR or /tmp), 20 MB with 6881 slots
 *           a megabyte, as "ldmadmin mksurfqueue" makes it, where
 *           every bulletin is sent twice (a second centre's collective, a
 *           repeat): half the observations are duplicates the queue drops.
 * -q: a quick run (a tenth of the bulletins).  No target is set for these
 * figures; LDM's pqsurf has published none.
 *
 * A benchmark, not a test: nothing here is registered with ctest.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ldmd/site/log.h"
#include "pq/pq.h"
#include "pqutils/surf/surf_split.h"

#define NKINDS 2
#define MAXBUL 8192

struct counts {
  unsigned long obs, ok, dups;
  pq_t *pq;
};

static double now_s(void) {
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int take(const pq_prod_info *info, const void *body, void *arg) {
  struct counts *c = arg;
  int rc;

  c->obs++;
  if (c->pq == NULL)
    return 0;
  rc = pq_insert(c->pq, info, body);
  if (rc == PQ_OK)
    c->ok++;
  else if (rc == PQ_DUP)
    c->dups++;
  return rc;
}

/* Bulletin number n of a kind: stations and times change with n, so that
 * each bulletin's observations are new. */
static size_t make_bulletin(char *buf, size_t cap, int kind, unsigned n) {
  size_t len;
  int day = 1 + (int)(n / 1440 % 28), hour = (int)(n / 60 % 24),
      min = (int)(n % 60);

  if (kind == 0) {
    len = (size_t)snprintf(buf, cap,
                           "\001\r\r\n%03u \r\r\nSAUS70 KWBC %02d%02d%02d\r\r\n"
                           "METAR\r\r\n",
                           n % 1000, day, hour, min);
    for (int i = 0; i < 60 && len < cap; i++)
      len += (size_t)snprintf(buf + len, cap - len,
                              "K%03d %02d%02d%02dZ 27010G18KT 10SM FEW050 "
                              "SCT120 22/11 A3001 RMK AO2 SLP162=\r\r\n",
                              i, day, hour, min);
  } else {
    len = (size_t)snprintf(buf, cap,
                           "\001\r\r\n%03u \r\r\nSMUS01 KWBC %02d%02d00\r\r\n"
                           "AAXX %02d%02d1\r\r\n",
                           n % 1000, day, hour, day, hour);
    for (int i = 0; i < 40 && len < cap; i++)
      len += (size_t)snprintf(buf + len, cap - len,
                              "72%03d 32966 71504 10211 20172 30142 40188 "
                              "52008 333 55300 %05u=\r\r\n",
                              i, n);
  }
  if (len + 1 < cap)
    buf[len++] = '\003';
  return len;
}

/* Bulletins made in chunks, outside the timed part. */
#define CHUNK 256
static char chunk[CHUNK][MAXBUL];
static size_t chunk_len[CHUNK];

static void run(const char *what, unsigned nbul, pq_t *pq) {
  struct counts c = {.pq = pq};
  pq_prod_info info;
  double dt = 0;
  unsigned repeats = pq != NULL ? 2 : 1;

  memset(&info, 0, sizeof info);
  info.feedtype = PQ_FT_IDS;
  info.arrival = pq_ts_now();
  snprintf(info.origin, sizeof info.origin, "bench");
  for (unsigned base = 0; base < nbul; base += CHUNK) {
    double t0;

    for (unsigned k = 0; k < CHUNK && base + k < nbul; k++)
      chunk_len[k] =
          make_bulletin(chunk[k], MAXBUL, (int)((base + k) % NKINDS), base + k);
    t0 = now_s();
    for (unsigned k = 0; k < CHUNK && base + k < nbul; k++)
      for (unsigned r = 0; r < repeats; r++) {
        info.size = chunk_len[k];
        info.seqno = (base + k) * repeats + r;
        (void)surf_split(&info, chunk[k], time(NULL), take, &c);
      }
    dt += now_s() - t0;
  }
  printf("%-7s %8u bulletins %9lu observations in %.3f s: %9.0f bulletins/s "
         "%10.0f observations/s",
         what, nbul * repeats, c.obs, dt, nbul * repeats / dt, c.obs / dt);
  if (pq != NULL)
    printf(" (%lu inserted, %lu duplicates dropped)", c.ok, c.dups);
  printf("\n");
}

int main(int argc, char **argv) {
  unsigned nbul = 20000;
  const char *dir = NULL;
  char path[4096];
  pq_create_opts opts = {0};
  pq_error err;
  pq_t *pq;

  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "-q") == 0)
      nbul /= 10;
    else
      dir = argv[i];
  }
  if (dir == NULL)
    dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm"
          : getenv("TMPDIR") != NULL    ? getenv("TMPDIR")
                                        : "/tmp";
  ldm_log_init("surf_bench");
  ldm_log_set_level(LDM_LOG_FATAL);
  printf("surf_bench: figures of this run (no target is set)\n");
  run("split", nbul, NULL);
  snprintf(path, sizeof path, "%s/surf_bench.%ld.pq", dir, (long)getpid());
  opts.pc_data_size = 20000000;
  opts.pc_slots = opts.pc_data_size / 1000000 * 6881;
  opts.pc_flags = PQ_CLOBBER;
  if (pq_create(path, &opts, &pq, &err) != PQ_OK) {
    fprintf(stderr, "surf_bench: cannot make %s: %s\n", path, err.pe_msg);
    return 1;
  }
  run("insert", nbul, pq);
  pq_close(pq);
  unlink(path);
  return 0;
}
