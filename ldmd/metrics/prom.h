/*
 * prom.h - a writer of the Prometheus text exposition format 0.0.4 into a
 * growing buffer: metric families (HELP and TYPE, then their samples),
 * label values and HELP texts escaped as the format says (backslash,
 * double quote and newline in label values; backslash and newline in
 * HELP), numbers as the format writes them (integers exactly, +Inf, NaN),
 * and histograms from non-cumulative buckets (_bucket{le=...} cumulative,
 * then _sum and _count).
 *
 * The writer does not check names or ordering: the caller writes each
 * family once, its samples right after it (render.c does).  Out of memory
 * is sticky: the buffer says so (ldmm_prom_buf.failed) and further writes do
 * nothing.  Not thread-safe per buffer.
 */
#ifndef LDMD_METRICS_PROM_H
#define LDMD_METRICS_PROM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ldmm_prom_buf {
  char *p;
  size_t len, cap;
  bool failed; /**< ran out of memory: the text is incomplete */
} ldmm_prom_buf;

/** A label: name (a valid label name, not escaped) and value (escaped). */
typedef struct ldmm_prom_label {
  const char *name;
  const char *value;
} ldmm_prom_label;

/** Append raw text (printf). */
void ldmm_prom_printf(ldmm_prom_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/** "# HELP name help\n# TYPE name type\n". */
void ldmm_prom_family(ldmm_prom_buf *b, const char *name, const char *type,
                      const char *help);

/** A sample: name{labels} value.  n may be 0 (no braces). */
void ldmm_prom_sample_u64(ldmm_prom_buf *b, const char *name,
                          const ldmm_prom_label *labels, size_t n,
                          uint64_t value);
void ldmm_prom_sample_f(ldmm_prom_buf *b, const char *name,
                        const ldmm_prom_label *labels, size_t n, double value);

/**
 * A histogram's samples, name_bucket{labels,le="..."} cumulative over
 * counts[0..nb-1] (the last bound is +Inf), name_sum (sum), name_count.
 * The bounds are written as bounds[i] / per (bounds in microseconds, per
 * 1e6: seconds).
 * labels may hold up to 7 labels.
 */
void ldmm_prom_histogram(ldmm_prom_buf *b, const char *name,
                         const ldmm_prom_label *labels, size_t n,
                         const uint64_t *bounds, const uint64_t *counts,
                         size_t nb, double sum, double per);

void ldmm_prom_free(ldmm_prom_buf *b);

#endif /* LDMD_METRICS_PROM_H */
