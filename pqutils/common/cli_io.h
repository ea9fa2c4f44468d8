/*
 * cli_io.h - the waits of the utilities that a stop request ends: reading
 * a pipe, a FIFO or a device, writing to a pipe, sleeping, and waiting for
 * a socket.  SIGTERM and SIGINT must stop a program promptly whatever it
 * is waiting for: a FIFO that never ends, a pipe nobody reads, a server
 * that never answers.
 *
 * A flag and EINTR are not enough: a signal that arrives after the program
 * looked at its flag and before it entered the blocking call is handled
 * at once, but the call then blocks as if nothing had happened, until it
 * ends by itself (for a FIFO that never ends, never).  So a stop request
 * also writes a byte into a pipe that nobody drains (the self-pipe trick),
 * and every wait here is a poll(2) on that pipe as well as on the
 * descriptor: once a stop has been asked for, every wait, under way or
 * still to come, in any thread, ends at once.  The read or write that
 * follows a poll must not block in its turn: reads follow a POLLIN, and
 * cli_io_prepare_output() gives an output pipe inherited from the shell a
 * non-blocking open file description of its own, so that a write larger
 * than the room left returns short instead of waiting.
 *
 * A wait inside code that cannot poll the pipe (ldmd/proto/rpc_io.c's waits on
 * a socket) is ended instead by shutting the socket down when the stop comes
 * (cli_io_watch_socket()): every poll on it, under way or to come, then
 * returns.
 *
 * A wait inside code that can poll a descriptor of the caller's but not
 * call back here (ldm6_io_connect_stop(), the clients' connect) polls the
 * stop pipe's read end itself (cli_io_stop_fd()).
 *
 * The stop flag and the pipes are process-wide; cli_io_request_stop() and
 * cli_io_notice() are async-signal-safe (cli.c's signal handler calls
 * them), the rest is thread-safe.  Nothing here logs.
 */
#ifndef PQUTILS_COMMON_CLI_IO_H
#define PQUTILS_COMMON_CLI_IO_H

#include <stdbool.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/** Make the pipes.  Called once, before the signal handlers are installed
 *  (cli_signals()); without it the waits still end on EINTR, but a stop
 *  that comes just before a wait begins is not seen.  0, or -1 (errno). */
int cli_io_init(void);

/** Ask for a stop: set the flag, wake every wait, shut the watched socket
 *  down.  Async-signal-safe. */
void cli_io_request_stop(void);
/** Has a stop been asked for? */
bool cli_io_stopping(void);

/** The read end of the stop pipe, for a wait that polls it itself: it is
 *  readable, for good, once a stop has been asked for.  Poll it; never
 *  read it or close it.  -1 before cli_io_init() or when it failed: a
 *  wait that polls nothing else then runs to its own end whatever a stop
 *  says (ldmc_connect()'s connect to its timeout; cli_signals() has
 *  warned).  Thread-safe. */
int cli_io_stop_fd(void);

/** Wake a cli_io_sleep() under way or to come, once (SIGUSR1's statistics
 *  request).  Async-signal-safe. */
void cli_io_notice(void);
/** Take back the notices given so far (the caller is handling them). */
void cli_io_notice_clear(void);

/**
 * Wait until fd has one of events (POLLIN, POLLOUT; POLLHUP and POLLERR
 * count too), timeout_ms passes (-1: no limit), or a stop is asked for.
 * fd < 0 waits only for the timeout or the stop.
 * @return 1 ready, 0 timed out, -1 with errno EINTR (a stop) or poll's.
 */
int cli_io_wait(int fd, short events, int timeout_ms);

/** Seconds on the monotonic clock: the one clock of the programs'
 *  deadlines and intervals. */
double cli_monotonic(void);
/** Milliseconds on the monotonic clock (for deadlines). */
int64_t cli_now_ms(void);
/** The timeout for poll(2) that ends at deadline (cli_now_ms() time;
 *  -1: no deadline, so -1). */
int cli_left_ms(int64_t deadline);

/**
 * cli_io_wait() for several descriptors: wait until one of fds[0..n) has
 * one of its events, timeout_ms passes (-1: no limit), or a stop is asked
 * for.  Sets each revents.
 * @return how many are ready (> 0), 0 timed out, -1 with errno (EINTR: a
 *         stop; ENOMEM; poll's)
 */
int cli_io_poll(struct pollfd *fds, size_t n, int timeout_ms);

/**
 * Sleep up to `seconds`, ending early at a stop or a notice.
 * @return 1 if it ended early (look at the flags), 0 if the time passed.
 */
int cli_io_sleep(double seconds);

/**
 * Read up to n bytes from a pipe, FIFO, socket or device, waiting as long
 * as it takes for them (or end of file) unless a stop comes first.
 * @return bytes read (> 0), 0 at end of file, -1 with errno (EINTR: a stop).
 */
ssize_t cli_io_read(int fd, void *buf, size_t n);

/**
 * Write all n bytes, waiting as long as the reader takes unless a stop
 * comes first.  Short writes and EAGAIN are retried.  Once a stop has been
 * asked for, what the descriptor takes without waiting is still written
 * (a last flush to a file completes), and the first wait fails instead.
 * @return 0, or -1 with errno (EINTR: a stop; EPIPE: no reader...).
 */
int cli_io_write_all(int fd, const void *buf, size_t n);

/**
 * Open a file to read it, non-blocking: the open of a FIFO does not wait
 * for a writer (the first cli_io_read() does, and a stop ends that wait).
 * Close-on-exec.  @return the descriptor, or -1 (errno).
 */
int cli_io_open_read(const char *path);

/**
 * If fd is the write end of a pipe or a FIFO (standard output from the
 * shell), put in its place a descriptor on the same pipe with a
 * non-blocking open file description of its own, so that a write after a
 * poll cannot block for want of room, without changing the descriptor the
 * other processes on the pipe share.  Other descriptors are left as they
 * are (a blocking socket or terminal may still block in a write that does
 * not fit, until a signal interrupts it).  A pipe that cannot be reopened
 * (no /proc) is left blocking.  Not while another thread uses fd.
 */
void cli_io_prepare_output(int fd);

/**
 * Shut socket fd down (both directions) when a stop is asked for, or at
 * once if one has been: rpc_io's waits on it then end.  One socket at a
 * time; -1 forgets it (do so before closing it, so that its number cannot
 * be shut down when reused).  For a program whose signals are handled by
 * the thread that uses the socket (the single-threaded clients).
 */
void cli_io_watch_socket(int fd);

#endif /* PQUTILS_COMMON_CLI_IO_H */
