/*
 * feeds.h - the upstream database: which connection processes feed which
 * downstream address with which class, shared by all of them, and LDM's
 * rule of one feed per downstream host and feed (its "anti-DOS" rule,
 * registry /server/enable-anti-DOS), done so that it holds behind NAT.
 *
 * WHY NOT LDM'S RULE AS IT IS.  LDM keys its upstream database by the
 * downstream's IP address alone: a new feed from an address kills every
 * older feed from it that the new class covers, and takes out of the new
 * class what an older one already sends.  Behind NAT, where several
 * downstream hosts share one address, that makes one host's REQUEST kill
 * or starve another's: "IDS|DDPLUS" from one host leaves nothing of
 * "IDS" from the next, and two hosts that ask for the same thing kill
 * each other in turn for ever.  LDM-6's FEEDME carries no identity of the
 * requester (only a class, a resume signature and the TCP source port,
 * which changes on each connection), so a server cannot tell two hosts
 * behind one address from one host reconnecting.
 *
 * OUR RULE.  What the rule is for is a downstream that connects again
 * while its old connection still lingers (a half-open connection after a
 * network break): the downstream asks for precisely the class it asked
 * before, since its REQUEST entry has not changed.  So the key is the
 * address AND the class (its specs: feedtypes and patterns, in order; not
 * the time window nor the resume signature, which change each time):
 *
 *   1. A new feed (FEEDME; NOTIFYME never counts, as in LDM) whose address
 *      and class equal an older feed's replaces it: the older process
 *      gets SIGTERM, logged.
 *   2. Feeds of one address with different classes, overlapping or not,
 *      coexist: nothing is killed and no class is reduced (each
 *      downstream's queue drops what it already has).
 *   3. Two hosts behind one address with the same REQUEST would replace
 *      each other for ever under rule 1.  So when a feed would replace
 *      one that itself replaced another of the same key less than
 *      LDMD_FEEDS_PINGPONG_MS ago, both are kept, with a warning: that is
 *      two downstreams, not one reconnecting (a genuine reconnection's
 *      lingering feed ends by itself within about a minute anyway, when
 *      its keep-alive goes unanswered).
 *
 * With /server/enable-anti-DOS false, no feed is ever replaced.
 *
 * The table lives in memory shared by the top-level ldmd and every
 * connection process (mmap MAP_SHARED, made before the first fork), under
 * a robust process-shared mutex; an entry is removed by its process when
 * the feed ends and by the top-level ldmd when it reaps the process, so
 * that one killed outright leaves nothing behind.
 */
#ifndef LDMD_SERVER_FEEDS_H
#define LDMD_SERVER_FEEDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pq/pq.h"

/** Rule 3's window: a replacement of a replacement within it keeps both. */
#define LDMD_FEEDS_PINGPONG_MS (10 * 60 * 1000)

typedef struct ldmd_feeds ldmd_feeds;

/** The table for n feeds, shared with the children forked after it.
 *  @return NULL with errno set */
ldmd_feeds *ldmd_feeds_new(size_t n);

/** Unmap it (in the process that made it, at the end). */
void ldmd_feeds_free(ldmd_feeds *t);

/**
 * A new feed of this process (getpid()) to addr with class cls: apply the
 * rules above (replace only if anti_dos), log what was done, and record
 * the feed.  A full table records nothing (the feed goes on; logged).
 * @return the slot for ldmd_feeds_leave(), or -1 if not recorded
 */
int ldmd_feeds_join(ldmd_feeds *t, const char *addr, const pq_class *cls,
                    bool anti_dos, const char *peer);

/** The feed of slot ends (its process's own entry). */
void ldmd_feeds_leave(ldmd_feeds *t, int slot);

/** The top-level ldmd reaped pid: whatever it recorded goes. */
void ldmd_feeds_reaped(ldmd_feeds *t, pid_t pid);

#endif /* LDMD_SERVER_FEEDS_H */
