/*
 * status_page.h - the status page (status.html), built into the program:
 * its bytes and the Content-Security-Policy to send with it, made from the
 * page at build time by embed_page.cmake (docs/metrics.md section 7).
 */
#ifndef LDMD_METRICS_STATUS_PAGE_H
#define LDMD_METRICS_STATUS_PAGE_H

#include <stddef.h>

/* The page, ldmm_status_page_len bytes (and a NUL after them). */
extern const char ldmm_status_page[];
extern const size_t ldmm_status_page_len;
/* Allows the page's inline style and script by their hash, fetches of
   its own origin, and nothing else. */
extern const char ldmm_status_page_csp[];

#endif
