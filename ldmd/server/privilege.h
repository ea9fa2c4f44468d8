/*
 * privilege.h - who ldmd runs as.  LDM's port, 388, needs root to bind;
 * nothing else ldmd does needs it.  Started as root, ldmd binds its
 * listening sockets, then becomes an unprivileged user for good (real,
 * effective and saved ids; its supplementary groups become that user's
 * own, root's are dropped) before it accepts a connection, starts a
 * requester or an EXEC program, or opens the queue: so nothing it reads
 * from the network is ever handled by root.
 *
 * The user: -U, else the registry's /server/user, else the system user
 * ldm when there is one.  Started as root with no such user, ldmd refuses
 * to run, unless told to stay root (-U root or /server/user root), which
 * it then says in a notice.  Started as anyone else, it stays who it is
 * (a user named that is somebody else, but root, is an error: only root
 * can switch).
 *
 * Top-level process only, before any child exists; not thread-safe.
 */
#ifndef LDMD_SERVER_PRIVILEGE_H
#define LDMD_SERVER_PRIVILEGE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/** The user ldmd becomes when it is started as root and told nothing. */
#define LDMD_DEFAULT_USER "ldm"

/** What ldmd_priv_plan() decided. */
typedef struct ldmd_priv {
  bool drop;      /**< switch to uid/gid (started as root) */
  bool root;      /**< stay root: told so */
  uid_t uid;      /**< the user, when drop */
  gid_t gid;      /**< its primary group */
  char name[256]; /**< its name, for messages */
} ldmd_priv;

/**
 * Decide who to become, from the user named (-U or /server/user; "" or
 * NULL: none named) and who runs ldmd now.
 * @return 0; -1 with a message in err (no such user; started as root and
 *         no user to become; a user other than the current one asked of
 *         a process that is not root)
 */
int ldmd_priv_plan(const char *wanted, ldmd_priv *p, char *err, size_t len);

/**
 * Become p's user, if the plan says so: supplementary groups (the user's
 * own), group, user; then check that root cannot be had back.
 * @return 0; -1 with a message in err naming the call that failed
 */
int ldmd_priv_drop(const ldmd_priv *p, char *err, size_t len);

#endif /* LDMD_SERVER_PRIVILEGE_H */
