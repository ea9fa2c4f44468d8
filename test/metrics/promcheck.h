/*
 * promcheck.h - a strict checker of the Prometheus text exposition format
 * 0.0.4, for the tests of ldmd's /metrics: every line must be a HELP,
 * TYPE, comment, blank line or well-formed sample (metric and label names,
 * label values and HELP text escaped as the format allows, values as
 * floats, +Inf, -Inf or NaN, an optional integer timestamp); HELP and TYPE
 * at most once per family and TYPE before its samples, with a known type;
 * the samples of a family together; no series twice; counters not
 * negative; every histogram series with increasing le bounds ending at
 * +Inf, non-decreasing bucket counts, a _sum and a _count equal to the
 * +Inf bucket; the text ends with a newline.  Promtool is more lenient on
 * some of these (it does not compare a histogram's count with its
 * buckets).
 */
#ifndef TEST_METRICS_PROMCHECK_H
#define TEST_METRICS_PROMCHECK_H

#include <stddef.h>

/**
 * Check text (NUL-terminated).
 * @param nsamples  set to the number of samples (may be NULL)
 * @return 0 when it is well-formed, else -1 with err saying which line
 *         and why
 */
int promcheck(const char *text, size_t *nsamples, char *err, size_t errlen);

#endif /* TEST_METRICS_PROMCHECK_H */
