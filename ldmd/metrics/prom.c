/*
 * prom.c - the Prometheus text writer of prom.h: the growing buffer,
 * escaping, number formatting and histograms.
 */
#include "ldmd/metrics/prom.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LABELS 8

static bool grow(ldmm_prom_buf *b, size_t more) {
  size_t cap;
  char *p;

  if (b->failed)
    return false;
  if (b->len + more + 1 <= b->cap)
    return true;
  cap = b->cap == 0 ? 4096 : b->cap;
  while (cap < b->len + more + 1)
    cap *= 2;
  p = realloc(b->p, cap);
  if (p == NULL) {
    b->failed = true;
    return false;
  }
  b->p = p;
  b->cap = cap;
  return true;
}

void ldmm_prom_printf(ldmm_prom_buf *b, const char *fmt, ...) {
  va_list ap;
  int n;

  va_start(ap, fmt);
  n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0 || !grow(b, (size_t)n))
    return;
  va_start(ap, fmt);
  (void)vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

static void put(ldmm_prom_buf *b, const char *s, size_t n) {
  if (!grow(b, n))
    return;
  memcpy(b->p + b->len, s, n);
  b->len += n;
  b->p[b->len] = '\0';
}

/* Append s with each of the characters in `special` and newline escaped
 * by a backslash (newline as \n). */
static void escape(ldmm_prom_buf *b, const char *s, const char *special) {
  const char *run = s;

  for (; *s != '\0'; s++) {
    if (*s != '\n' && strchr(special, *s) == NULL)
      continue;
    put(b, run, (size_t)(s - run));
    if (*s == '\n')
      put(b, "\\n", 2);
    else {
      put(b, "\\", 1);
      put(b, s, 1);
    }
    run = s + 1;
  }
  put(b, run, (size_t)(s - run));
}

void ldmm_prom_family(ldmm_prom_buf *b, const char *name, const char *type,
                      const char *help) {
  ldmm_prom_printf(b, "# HELP %s ", name);
  escape(b, help, "\\");
  ldmm_prom_printf(b, "\n# TYPE %s %s\n", name, type);
}

static void labels_out(ldmm_prom_buf *b, const ldmm_prom_label *labels,
                       size_t n) {
  size_t i;

  if (n == 0)
    return;
  put(b, "{", 1);
  for (i = 0; i < n; i++) {
    ldmm_prom_printf(b, "%s%s=\"", i > 0 ? "," : "", labels[i].name);
    escape(b, labels[i].value, "\\\"");
    put(b, "\"", 1);
  }
  put(b, "}", 1);
}

void ldmm_prom_sample_u64(ldmm_prom_buf *b, const char *name,
                          const ldmm_prom_label *labels, size_t n,
                          uint64_t value) {
  put(b, name, strlen(name));
  labels_out(b, labels, n);
  ldmm_prom_printf(b, " %llu\n", (unsigned long long)value);
}

/* A float as the format writes it: +Inf, -Inf, NaN, an integral value
 * as an integer, else the shortest text that reads back as it. */
static void number(char *buf, size_t len, double v) {
  if (isnan(v))
    snprintf(buf, len, "NaN");
  else if (isinf(v))
    snprintf(buf, len, v > 0 ? "+Inf" : "-Inf");
  else if (v == floor(v) && fabs(v) < 9007199254740992.0) /* 2^53 */
    snprintf(buf, len, "%.0f", v);
  else {
    int prec;

    for (prec = 1; prec < 17; prec++) {
      snprintf(buf, len, "%.*g", prec, v);
      if (strtod(buf, NULL) == v)
        return;
    }
    snprintf(buf, len, "%.17g", v);
  }
}

void ldmm_prom_sample_f(ldmm_prom_buf *b, const char *name,
                        const ldmm_prom_label *labels, size_t n, double value) {
  char num[64];

  number(num, sizeof num, value);
  put(b, name, strlen(name));
  labels_out(b, labels, n);
  ldmm_prom_printf(b, " %s\n", num);
}

void ldmm_prom_histogram(ldmm_prom_buf *b, const char *name,
                         const ldmm_prom_label *labels, size_t n,
                         const uint64_t *bounds, const uint64_t *counts,
                         size_t nb, double sum, double per) {
  ldmm_prom_label l[MAX_LABELS];
  char bucket[128], le[64];
  uint64_t total = 0;
  size_t i;

  if (n > MAX_LABELS - 1)
    n = MAX_LABELS - 1;
  memcpy(l, labels, n * sizeof *l);
  snprintf(bucket, sizeof bucket, "%s_bucket", name);
  for (i = 0; i < nb; i++) {
    total += counts[i];
    if (i == nb - 1)
      snprintf(le, sizeof le, "+Inf");
    else
      number(le, sizeof le, (double)bounds[i] / per);
    l[n].name = "le";
    l[n].value = le;
    ldmm_prom_sample_u64(b, bucket, l, n + 1, total);
  }
  snprintf(bucket, sizeof bucket, "%s_sum", name);
  ldmm_prom_sample_f(b, bucket, labels, n, sum);
  snprintf(bucket, sizeof bucket, "%s_count", name);
  ldmm_prom_sample_u64(b, bucket, labels, n, total);
}

void ldmm_prom_free(ldmm_prom_buf *b) {
  free(b->p);
  memset(b, 0, sizeof *b);
}
