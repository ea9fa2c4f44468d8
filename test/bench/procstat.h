/*
 * procstat.h - the machine's CPU time counters, for the benchmarks that
 * print how much of the machine other processes, or the hypervisor, took
 * while they ran.
 */
#ifndef BENCH_PROCSTAT_H
#define BENCH_PROCSTAT_H

/* The "cpu" line of /proc/stat, in clock ticks. */
struct procstat {
  unsigned long long user, nice, system, idle, iowait, irq, softirq, steal;
};

/** Read it; 0, or -1 (all zero) if /proc/stat cannot be read. */
int procstat_read(struct procstat *p);

/** All ticks, busy or not. */
unsigned long long procstat_total(const struct procstat *p);

#endif /* BENCH_PROCSTAT_H */
