/*
 * clock.h - the server library's one monotonic clock, in milliseconds:
 * the time base of every deadline, pause, restart delay and rate that
 * ldmd/server keeps (CLOCK_MONOTONIC, which no change of the wall clock
 * moves).  The wire protocol (ldmd/proto) and the queue (pq/) keep their
 * own.
 */
#ifndef LDMD_SERVER_CLOCK_H
#define LDMD_SERVER_CLOCK_H

#include <stdint.h>

/** Milliseconds of CLOCK_MONOTONIC: only differences mean anything.
 *  Cannot fail on Linux; safe in any thread and after fork(). */
int64_t ldmd_now_ms(void);

#endif /* LDMD_SERVER_CLOCK_H */
