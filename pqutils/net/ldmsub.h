/*
 * ldmsub.h - what the subscribing clients (notifyme, feedme) share: asking
 * an LDM server for a class of products and serving the connection once
 * it turns around, as LDM's notifyme and feedme do.
 *
 * REQUEST.  The request (NOTIFYME of LDM-6, or FEEDME of LDM-5) is made
 * with ldmc_call() and re-issued on the same connection with the class a
 * RECLASS answer returns (an empty one means "not allowed"), at most
 * LDMC_SUB_MAX_RECLASS times in a row.
 *
 * SESSION.  Once the server has said OK, the server calls us: the
 * program's dispatch function answers (or not) each call, and the session
 * ends when the server closes, the connection fails, or nothing comes for
 * total_s seconds.  The program calls ldmc_sub_got() for each product, so
 * that a new session asks from 1 us after the last one's creation time.
 *
 * RUN.  ldmc_sub_run() logs LDM's "Starting Up" line and runs sessions,
 * reconnecting retry_s seconds after one ends, until a stop (SIGTERM,
 * SIGINT), a refusal, a failed output, or, before any session has
 * started, a server that cannot be reached.
 *
 * Everything is logged here (ldmd/site/log.h); nothing exits.
 */
#ifndef PQUTILS_NET_LDMSUB_H
#define PQUTILS_NET_LDMSUB_H

#include <stdbool.h>
#include <stdint.h>

#include "ldmd/proto/ldm6_xdr.h"
#include "ldmd/proto/rpc_io.h"
#include "pqutils/common/cli.h"
#include "pqutils/net/ldmclient.h"

#define LDMC_SUB_MAX_RECLASS 8 /* RECLASS answers accepted in a row */

/** How ldmc_sub_run() ended: the exit status of notifyme and feedme. */
enum ldmc_sub_end {
  LDMC_SUB_STOPPED = 0, /* a stop (SIGTERM, SIGINT) */
  LDMC_SUB_REFUSED = 2, /* the server refused the request */
  LDMC_SUB_CONNECT = 3, /* no session could be started */
  LDMC_SUB_OUTPUT = 4,  /* dispatch said the output failed */
};

/** A subscription: the caller fills every field but had_session. */
struct ldmc_sub {
  struct ldmc_peer peer;
  ldm6_prod_class request; /* what is asked; from advances (ldmc_sub_got()) */
  const char *what;        /* the request's name: "NOTIFYME", "FEEDME" */
  uint32_t vers;           /* LDM6_VERSION6 (NOTIFYME) or LDM6_VERSION5 */
  uint32_t proc;           /* LDM6_NOTIFYME or LDM6_FEEDME */
  int timeo_s;             /* -t: connecting and the request's answer */
  int total_s;             /* -T: silence that ends a session */
  int retry_s;             /* pause before reconnecting */
  bool had_session;        /* a server has accepted us once */
  /**
   * Answer (or not) one call m of the server.  @return an ldm6_io result,
   * or LDM6_IO_OK with *output set to end the run (LDMC_SUB_OUTPUT).
   */
  int (*dispatch)(void *ctx, ldm6_io *io, const ldm6_io_msg *m, bool *output);
  void (*ended)(void *ctx); /* NULL, or called as each session ends */
  void *ctx;                /* for dispatch and ended */
};

/** A product with this creation time has come: ask from 1 us after it. */
void ldmc_sub_got(struct ldmc_sub *s, ldm6_timestamp arrival);

/** Run sessions until the end (RUN above). */
enum ldmc_sub_end ldmc_sub_run(struct ldmc_sub *s);

/**
 * The options both programs take besides ldmc_opts_take()'s: -p pattern
 * (into *pattern), -o offset (seconds before now, into *offset), -t and -T
 * (into s->timeo_s and s->total_s).
 * @return 1 if opt was one of them, 0 if not, -1 after printing why arg
 *         is bad.
 */
int ldmc_sub_take(struct cli *c, const char *usage, int opt, const char *arg,
                  struct ldmc_sub *s, const char **pattern, int *offset);

/**
 * After the options: the class to ask, from offset seconds before now,
 * of the products of feedtype whose identifiers match pattern.  @return
 * 0, or -1 after printing what is wrong with the pattern and the usage.
 */
int ldmc_sub_class(struct cli *c, const char *usage, uint32_t feedtype,
                   const char *pattern, int offset, ldm6_prod_class *out);

/** LDM's re_vetSpec: pattern without leading ".*" pairs that match
 *  nothing more (the caller logs the change in its own words). */
const char *ldmc_sub_vet_pattern(const char *pattern);

#endif /* PQUTILS_NET_LDMSUB_H */
