/*
 * privilege.c - choosing the unprivileged user ldmd started as root
 * becomes, and becoming it for good: supplementary groups, group and user,
 * real, effective and saved (see privilege.h).
 */
#include "ldmd/server/privilege.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Look up name; a missing user is ENOENT.  @return 0 or -1 (errno) */
static int lookup(const char *name, ldmd_priv *p) {
  struct passwd *pw;

  errno = 0;
  pw = getpwnam(name);
  if (pw == NULL) {
    if (errno == 0)
      errno = ENOENT;
    return -1;
  }
  p->uid = pw->pw_uid;
  p->gid = pw->pw_gid;
  snprintf(p->name, sizeof p->name, "%s", pw->pw_name);
  return 0;
}

int ldmd_priv_plan(const char *wanted, ldmd_priv *p, char *err, size_t len) {
  bool named = wanted != NULL && wanted[0] != '\0';
  const char *who = named ? wanted : LDMD_DEFAULT_USER;

  memset(p, 0, sizeof *p);
  if (lookup(who, p) != 0) {
    int e = errno;

    if (named) {
      snprintf(err, len, "cannot run as user %s: %s", who,
               e == ENOENT ? "no such user" : strerror(e));
      return -1;
    }
    if (geteuid() == 0) {
      snprintf(err, len,
               "refusing to run as root: there is no user %s to become; "
               "name one with -U or /server/user (root to stay root)",
               LDMD_DEFAULT_USER);
      return -1;
    }
    return 0; /* not root, nothing asked: stay who we are */
  }
  if (geteuid() != 0) {
    /* Root named: "do not switch", which a user process is not asked to. */
    if (named && p->uid != geteuid() && p->uid != 0) {
      snprintf(err, len, "cannot run as user %s: only root can switch users",
               p->name);
      return -1;
    }
    return 0;
  }
  if (p->uid == 0) {
    p->root = true; /* told to stay root */
    return 0;
  }
  p->drop = true;
  return 0;
}

int ldmd_priv_drop(const ldmd_priv *p, char *err, size_t len) {
  gid_t *groups;
  int n = 64;

  if (!p->drop)
    return 0;
  /* The user's own supplementary groups, none of root's. */
  for (;;) {
    int want = n;

    groups = malloc((size_t)n * sizeof *groups);
    if (groups == NULL) {
      snprintf(err, len, "cannot run as user %s: %s", p->name,
               strerror(ENOMEM));
      return -1;
    }
    if (getgrouplist(p->name, p->gid, groups, &n) >= 0)
      break;
    free(groups);
    if (n <= want)
      n = want * 2;
  }
  if (setgroups((size_t)n, groups) != 0) {
    snprintf(err, len, "cannot run as user %s: setgroups: %s", p->name,
             strerror(errno));
    free(groups);
    return -1;
  }
  free(groups);
  if (setresgid(p->gid, p->gid, p->gid) != 0) {
    snprintf(err, len, "cannot run as user %s: setresgid %ld: %s", p->name,
             (long)p->gid, strerror(errno));
    return -1;
  }
  if (setresuid(p->uid, p->uid, p->uid) != 0) {
    snprintf(err, len, "cannot run as user %s: setresuid %ld: %s", p->name,
             (long)p->uid, strerror(errno));
    return -1;
  }
  if (setuid(0) == 0 || geteuid() == 0) {
    snprintf(err, len, "cannot run as user %s: root could be had back",
             p->name);
    return -1;
  }
  return 0;
}
