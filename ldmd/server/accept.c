/*
 * accept.c - accepting connections, and the episodes in which descriptors
 * or processes run out: shedding what waits with a spare descriptor,
 * resting the listeners for a pause that grows, and logging each episode
 * once when it begins and once when it ends (see accept.h).
 */
#include "ldmd/server/accept.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ldmd/server/clock.h"
#include "ldmd/server/listen.h"
#include "ldmd/site/log.h"

#define PAUSE_MIN_MS 100
#define PAUSE_MAX_MS 5000
#define SHED_MAX LDMD_BACKLOG /* connections shed at most per failure */

/* Errors that belong to one connection that is gone already (accept(2)
 * says to take them as EAGAIN and go on): the next one may be fine. */
static bool connection_error(int e) {
  return e == ECONNABORTED || e == EPROTO || e == ENETDOWN ||
         e == ENOPROTOOPT || e == EHOSTDOWN || e == ENONET ||
         e == EHOSTUNREACH || e == EOPNOTSUPP || e == ENETUNREACH;
}

static void open_spare(ldmd_acceptor *a) {
  if (a->spare < 0)
    a->spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

void ldmd_acceptor_init(ldmd_acceptor *a) {
  memset(a, 0, sizeof *a);
  a->spare = -1;
  open_spare(a);
}

/* A failure of call (on where, if not NULL): begin an episode, or go on
 * with it and double the pause. */
static void failed(ldmd_acceptor *a, const char *call, const char *where,
                   int err) {
  int64_t now = ldmd_now_ms();

  if (!a->shortage) {
    a->shortage = true;
    a->refused = 0;
    a->since_ms = now;
    a->pause_ms = PAUSE_MIN_MS;
    log_error("cannot %s connections%s%s: %s: %s: refusing connections "
              "until it works again",
              strcmp(call, "accept") == 0 ? "accept" : "serve",
              where != NULL ? " on " : "", where != NULL ? where : "", call,
              strerror(err));
  } else {
    a->pause_ms =
        a->pause_ms >= PAUSE_MAX_MS / 2 ? PAUSE_MAX_MS : 2 * a->pause_ms;
  }
  a->resume_ms = now + a->pause_ms;
}

/* Out of descriptors: accept each waiting connection in the spare's slot
 * and close it, so its peer hears at once instead of waiting in the queue
 * for nothing. */
static void shed(ldmd_acceptor *a, int lfd) {
  int i;

  for (i = 0; i < SHED_MAX && a->spare >= 0; i++) {
    int fd, e;

    close(a->spare);
    a->spare = -1;
    fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
    e = errno;
    if (fd >= 0) {
      close(fd);
      a->refused++;
    }
    open_spare(a);
    if (fd < 0 && e != EINTR && !connection_error(e))
      return; /* none left (EAGAIN), or even the spare's slot is taken */
  }
}

int ldmd_accept(ldmd_acceptor *a, int lfd, const char *name) {
  for (;;) {
    int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC), err;

    if (fd >= 0)
      return fd;
    err = errno;
    if (err == EINTR || connection_error(err))
      continue;
    if (err == EAGAIN || err == EWOULDBLOCK)
      return LDMD_ACCEPT_NONE;
    failed(a, "accept", name, err);
    if (err == EMFILE || err == ENFILE)
      shed(a, lfd);
    return LDMD_ACCEPT_PAUSE;
  }
}

void ldmd_acceptor_shortage(ldmd_acceptor *a, const char *what, int err) {
  failed(a, what, NULL, err);
  a->refused++;
}

/* An episode is over (or the server stops in one): say how it went. */
static void episode_end(ldmd_acceptor *a, const char *how) {
  log_notice("%s: %llu connections refused in %.1f s", how,
             (unsigned long long)a->refused,
             (double)(ldmd_now_ms() - a->since_ms) / 1000.0);
  a->shortage = false;
  a->refused = 0;
  a->pause_ms = 0;
  a->resume_ms = 0;
}

void ldmd_acceptor_served(ldmd_acceptor *a) {
  if (a->shortage)
    episode_end(a, "serving connections again");
  open_spare(a); /* if it could not be opened before */
}

int ldmd_acceptor_pause_ms(const ldmd_acceptor *a) {
  int64_t left = a->resume_ms - ldmd_now_ms();

  if (a->resume_ms == 0 || left <= 0)
    return 0;
  return (int)left;
}

void ldmd_acceptor_free(ldmd_acceptor *a) {
  if (a->shortage)
    episode_end(a, "stopping while refusing connections");
  if (a->spare >= 0)
    close(a->spare);
  a->spare = -1;
}
