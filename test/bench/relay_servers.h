/*
 * relay_servers.h - the processes of relay_bench (relay_bench.c): ldmd
 * servers started and stopped by pid, each with its own directory,
 * registry, ldmd.conf, queue and log; the CPU time of a server's process
 * tree (ldmd forks a process per connection); the products the benches
 * insert; and the bench's sleeps and messages (its clock is tu_now_s()
 * of test/lib/tu_clock.h).  nats_bench uses them too, and what both
 * benches print alike: the machine line, a bad option value, the closing
 * lines, a percentile's rank.  Not thread-safe; for one bench process.
 */
#ifndef TEST_BENCH_RELAY_SERVERS_H
#define TEST_BENCH_RELAY_SERVERS_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pq/pq.h"

#define RB_RUN_MAX 512 /* longest run directory */

/** One ldmd and its files. */
typedef struct server {
  const char *name; /**< "A" or "B" */
  char dir[RB_RUN_MAX + 8];
  char queue[RB_RUN_MAX + 32];
  char conf[RB_RUN_MAX + 32];
  char log[RB_RUN_MAX + 32];
  char err[RB_RUN_MAX + 32];
  char reg[RB_RUN_MAX + 32];
  pid_t pid; /**< 0: not running */
  unsigned port;
} server;

/** Set by the bench's SIGINT and SIGTERM handler: every wait gives up. */
extern volatile sig_atomic_t rb_stop;

/** Sleep s seconds (less if rb_stop is set). */
void rb_sleep(double s);
/** The program rb_warn() names (default "relay_bench"). */
extern const char *rb_prog;
/** "<rb_prog>: <message>" on stderr (after flushing stdout). */
void rb_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/** CPU seconds (user + system, with reaped children's) of the process
 *  tree rooted at root; -1 if root is not running (or is <= 0). */
double rb_tree_cpu(pid_t root);
/** Send sig (SIGSTOP, SIGCONT) to every process of the tree. */
void rb_tree_signal(pid_t root, int sig);

/**
 * Make run/name/ with a registry and a queue of that geometry (replacing
 * one there), every page of the queue file written once.
 * @param tls  NULL, or the PEM files "cert key" (the certificate is its own
 *             CA) that the registry's /tls keys name: TLS on
 * @return 0, or -1 with a message
 */
int rb_server_setup(server *s, const char *run, const char *name,
                    uint64_t bytes, uint64_t slots, const char *const *tls);

/**
 * Add XML elements (inside <registry>, e.g. "<metrics>...</metrics>") to
 * the registry rb_server_setup() wrote.
 * @return 0, or -1 with a message
 */
int rb_server_registry_add(const server *s, const char *xml);

/** Put xml (and a newline) just before the first `before` ("</server>")
 *  of the registry rb_server_setup() wrote.  @return 0, or -1 with a
 *  message */
int rb_server_registry_insert(const server *s, const char *before,
                              const char *xml);

/**
 * Start ldmd (-f, logging to s->log, on 127.0.0.1, a port the kernel
 * picks) with conf_text as its ldmd.conf, not waiting for it.
 * @return 0, or -1 with a message
 */
int rb_server_spawn(server *s, const char *ldmd, const char *conf_text);

/** Wait up to 10 s for the port of the ldmd rb_server_spawn() started
 *  (into s->port).  @return 0, or -1 with a message */
int rb_server_wait_port(server *s, const char *ldmd);

/** rb_server_spawn(), then rb_server_wait_port(). */
int rb_server_start(server *s, const char *ldmd, const char *conf_text);

/**
 * Start s as the upstream of a relay pair: its ldmd.conf allows this host.
 * @return 0, or -1 with a message
 */
int rb_start_upstream(server *s, const char *ldmd);

/**
 * Start s as up's downstream: it requests everything from up's port (over
 * TLS with tls, verifying that up's certificate names 127.0.0.1) and
 * allows this host.
 * @return 0, or -1 with a message
 */
int rb_start_downstream(server *s, const server *up, const char *ldmd,
                        bool tls);

/** rb_start_downstream() without waiting for s's port (to start many at
 *  once). */
int rb_spawn_downstream(server *s, const server *up, const char *ldmd,
                        bool tls);

/**
 * Make a run directory base/<rb_prog>.XXXXXX into run (RB_RUN_MAX bytes),
 * set rb_stop on SIGINT and SIGTERM, and ignore SIGPIPE.
 * @return 0, or -1 with a message
 */
int rb_run_begin(char *run, const char *base);

/**
 * Insert product i of a phase into pq: `size` bytes of iddmix_fill(seed,
 * i) in buf, its MD5 as signature, created now, origin rb_prog and
 * identifier "<rb_prog> <what> <size> <i>".
 * @param[out] arrival_us  its creation time (us since the epoch), or NULL
 * @return PQ_OK, or the error (with a message)
 */
int rb_insert(pq_t *pq, uint64_t seed, uint32_t ft, uint32_t i, uint8_t *buf,
              uint64_t size, const char *what, uint64_t *arrival_us);

struct iddmix_prod;
/**
 * Insert product p of an IDD-like stream (iddmix_next()) into pq: its
 * bytes (iddmix_fill(seed, ...)) in buf, its identifier and feedtype, its
 * MD5 as signature, origin origin, created now.
 * @param[out] sig  if not NULL, gets the signature (16 bytes) before the
 *                  product goes in (a receiver may check it at once)
 * @return pq_insert()'s result (no message)
 */
int rb_insert_mix(pq_t *pq, uint64_t seed, const struct iddmix_prod *p,
                  uint8_t *buf, const char *origin, uint8_t *sig);

/** SIGTERM, up to 15 s for it to exit, then SIGKILL. */
void rb_server_stop(server *s);

/** SIGKILL any process whose command line names the run directory (a
 *  connection process whose server did not stop it). */
void rb_kill_leftovers(const char *run);

/** rm -r */
void rb_remove_tree(const char *path);

/** When (us since the epoch) A's log says its feeder started a feed, or
 *  0 if it does not (yet). */
uint64_t rb_feed_started_us(const server *a);

/** rb_feed_started_us(), waiting up to 10 s for it. */
uint64_t rb_wait_feed(const server *a);

/** After strtod() or strtoul() of option c's value: if end says the value
 *  was not a number (or errno is set), "<rb_prog>: invalid -c value" on
 *  stderr.  @return -1 if so, else 0 (also when end is NULL: no number). */
int rb_bad_value(int c, const char *value, const char *end);

/** "<date UTC>; <n> CPUs; Linux <release>" on stdout, no newline. */
void rb_print_machine(void);

/** The index of the p-th percentile (0 to 100) of n > 0 sorted values. */
size_t rb_pct_index(size_t n, double p);

/**
 * A bench's closing lines, once its servers are down: "(interrupted)" if
 * rb_stop, the run directory kept (keep) or removed, the seconds since t0
 * and how many figures could not be measured.
 * @return the bench's exit status: 1 after errors or an interruption
 */
int rb_finish(const char *run, bool keep, unsigned errors, double t0);

#endif /* TEST_BENCH_RELAY_SERVERS_H */
