/*
 * procstat.c - reading the "cpu" line of /proc/stat (see procstat.h).
 */
#include "test/bench/procstat.h"

#include <stdio.h>
#include <string.h>

int procstat_read(struct procstat *p) {
  FILE *f = fopen("/proc/stat", "r");
  int ok;

  memset(p, 0, sizeof *p);
  if (f == NULL)
    return -1;
  ok = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &p->user,
              &p->nice, &p->system, &p->idle, &p->iowait, &p->irq, &p->softirq,
              &p->steal) == 8;
  fclose(f);
  if (!ok)
    memset(p, 0, sizeof *p);
  return ok ? 0 : -1;
}

unsigned long long procstat_total(const struct procstat *p) {
  return p->user + p->nice + p->system + p->idle + p->iowait + p->irq +
         p->softirq + p->steal;
}
