/*
 * requester.h - the downstream side of a feed: one process per REQUEST
 * entry of ldmd.conf, forked and supervised by the top-level ldmd, that
 * asks an upstream LDM for products and puts them into the local queue
 * (docs/protocol.md §7, §10, §11).
 *
 * One connection at a time: connect to host:port, FEEDME with the request
 * class (creation times from now - offset, the REQUEST's feedtype and
 * pattern, and a {NONE, "SIG=<hex>"} spec naming the last product received
 * so the upstream resumes just after it: see resume.h), in primary mode
 * (max_hereis 0xFFFFFFFF: every product by HEREIS) or alternate mode (0:
 * COMINGSOON first, so products already in the queue are declined).  A
 * RECLASS is followed by FEEDME with exactly the class the upstream
 * returned (plus our resume point, which LDM drops), on the same
 * connection; an empty RECLASS means the request is denied.  After OK the
 * connection is turned around and this process serves the upstream's
 * calls: HEREIS, COMINGSOON (OK, or DONT_SEND when the product is in the
 * queue already, too old or unwanted), BLKDATA and NULLPROC, through
 * downstream.c, which vets, dedupes and inserts with reserve and commit.
 * The signature of the last product whose fate is final is written to
 * the resume file once the records read so far are taken, and at the
 * latest every 256 products or 20 ms (resume.h).
 *
 * The connection is given up, and another made, when:
 *   - the upstream says nothing for the silence limit (/requester/silence-
 *     limit, LDM's 300 s; bytes of a long record count as something):
 *     reconnect at once;
 *   - autoshift asks for the other mode (autoshift.h): reconnect at once;
 *   - the upstream closes, or anything fails (name, connect, FEEDME,
 *     a protocol error): reconnect after a delay that starts at
 *     /requester/retry-min and doubles with each failure in a row up to
 *     /requester/retry-max (LDM always waits 60 s).
 * SIGTERM ends the process within a second, wherever it waits.
 *
 * The log ident is "<host>(req)"; every message names the upstream.
 */
#ifndef LDMD_SERVER_REQUESTER_H
#define LDMD_SERVER_REQUESTER_H

#include "ldmd/site/ldmd_conf.h"
#include "ldmd/server/server.h"

/**
 * Run the requester of req until *set->stop is set, in a process of its
 * own (the caller forked it, with SIGTERM caught into *set->stop and no
 * signal blocked).
 * @return the process's exit status: 0 after a stop, 1 when it cannot go
 *         on (the queue cannot be opened, the resume file cannot be
 *         used); ldmd then starts it again later
 */
int ldmd_requester_run(const ldmd_settings *set, const ldm_conf_request *req);

#endif /* LDMD_SERVER_REQUESTER_H */
