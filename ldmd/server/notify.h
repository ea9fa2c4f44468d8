/*
 * notify.h - what ldmd tells systemd about itself: the readiness protocol
 * of a unit of Type=notify (etc/ldmd.service), through sd_notify(3) of
 * libsystemd.
 *
 * systemd names a datagram socket in NOTIFY_SOCKET; ldmd sends
 * "READY=1" with a STATUS= line once it serves (ldmd.8 says when that is)
 * and "STOPPING=1" when a clean stop begins.  Without NOTIFY_SOCKET (every
 * start that is not systemd's) nothing is sent and nothing logged.  When a
 * notification fails (a socket nobody listens on, say) one warning is
 * logged and no notification is tried again: ldmd serves as it would
 * without systemd.
 *
 * Only the top-level ldmd speaks for the unit (NotifyAccess=main): its
 * children call ldmd_notify_child() first.  The state (whether a
 * notification failed) is the process's; not thread-safe.
 */
#ifndef LDMD_SERVER_NOTIFY_H
#define LDMD_SERVER_NOTIFY_H

/**
 * Send the assignments fmt makes, one a line ("READY=1\nSTATUS=..."), to
 * the socket of NOTIFY_SOCKET, if set and no notification failed before.
 * Text past 4095 bytes is cut: put the short assignments first.  May wait
 * (sendmsg(2)) while the receiver's queue is full.
 */
void ldmd_notify(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/**
 * In a child of ldmd, before anything else: forget NOTIFY_SOCKET (it is
 * removed from the environment), so that neither the child nor a program
 * it executes (an EXEC entry) speaks for ldmd; systemd would refuse and
 * log a message from another process than the unit's main one.  Safe in
 * the child of a fork() of a single-threaded process.
 */
void ldmd_notify_child(void);

#endif /* LDMD_SERVER_NOTIFY_H */
