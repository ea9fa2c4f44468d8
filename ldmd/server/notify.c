/*
 * notify.c - ldmd's notifications to systemd with sd_notify(3) (see
 * notify.h): the message formatted, sent by libsystemd, a failure logged
 * once and no notification tried after it.
 */
#include "ldmd/server/notify.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>

#include "ldmd/site/log.h"

#define NOTIFY_MAX 4096

static bool failed; /* a notification failed: no more are sent */

void ldmd_notify(const char *fmt, ...) {
  const char *sock = getenv("NOTIFY_SOCKET");
  char msg[NOTIFY_MAX];
  va_list ap;
  int rc;

  if (sock == NULL || failed)
    return;
  va_start(ap, fmt);
  (void)vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  rc = sd_notify(0, msg);
  if (rc < 0) {
    failed = true;
    log_warning("cannot notify systemd through NOTIFY_SOCKET %s: %s; "
                "no more notifications",
                sock, strerror(-rc));
  }
}

void ldmd_notify_child(void) {
  (void)unsetenv("NOTIFY_SOCKET");
}
