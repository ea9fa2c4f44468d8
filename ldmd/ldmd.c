/*
 * ldmd.c - the LDM server's top-level process: the command line (LDM's
 * options; what they leave open comes from the registry, read by
 * server/settings.c), ldmd.conf, the listening sockets, daemonizing (or
 * not), the EXEC programs and the requesters of the REQUEST entries
 * (tasks that children.c keeps running), the live figures
 * (the metrics file every child writes its own figures into, a slot
 * claimed for each child before it is forked, and the HTTP endpoint's
 * process: docs/metrics.md), and the accept loop that forks one process
 * per connection (docs/protocol.md §15), once the connection limits let it
 * in (in all, and per peer address).  Started as root, ldmd becomes an
 * unprivileged user right after it binds its sockets (privilege.h), before
 * it opens the queue or serves anybody.
 *
 * The loop sleeps in ppoll(2) on the listening sockets, until the next
 * restart of a task that died is due, with the signals it acts on blocked
 * everywhere else, so a signal is never lost between a check and the
 * sleep; since ppoll() lets them in only when no listener is ready, they
 * are also let in for a moment after each wake-up and each connection
 * (signal_window()).  When descriptors run out the listeners rest
 * (accept.c).  SIGTERM and SIGINT stop the server (every child gets SIGTERM,
 * stragglers SIGKILL after a grace period, and a connection process still
 * busy a second later ends itself: children.h), SIGCHLD reaps (and
 * schedules restarts), SIGUSR1 reopens the log (and is passed on to the
 * children), SIGUSR2 rolls the log level (likewise).  SIGHUP and SIGPIPE
 * are ignored, as in LDM.
 *
 * Foreground: with `-l -` (LDM's rule) or `-f` (ours: for systemd and
 * containers, with any log destination).  Otherwise ldmd daemonizes as LDM
 * does and the intermediate process prints the daemon's pid on stdout;
 * the starting process exits 0 once the daemon listens, 1 if it failed to
 * get that far.  Under systemd (NOTIFY_SOCKET set: a unit of Type=notify)
 * the serving process tells it READY=1 once it serves and STOPPING=1 when
 * a stop begins (notify_ready(), server/notify.h).
 *
 * The signal flags are the only file-scope state: they belong to the
 * process, not to a connection.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ldmd/server/accept.h"
#include "ldmd/server/children.h"
#include "ldmd/server/feeds.h"
#include "ldmd/server/hub.h"
#include "ldmd/server/listen.h"
#include "ldmd/server/metrics_http.h"
#include "ldmd/server/notify.h"
#include "ldmd/server/privilege.h"
#include "ldmd/site/log.h"
#include "ldmd/site/registry.h"
#include "ldmd/server/requester.h"
#include "ldmd/server/server.h"
#include "ldmd/server/settings.h"

#define MAX_ADDRS 8
#define SPARE_SLOTS 8 /* metrics slots beyond max_clients and requesters */
/* Connection slots at most (640 bytes each): -M allows a million clients,
 * which would make the file 640 MB; past this, connections are counted as
 * untracked (docs/metrics.md §2). */
#define MAX_CONN_SLOTS 4096u

static volatile sig_atomic_t stop_flag;
static volatile sig_atomic_t child_flag;
static volatile sig_atomic_t usr1_flag;
static volatile sig_atomic_t usr2_flag;

/* The command line. */
typedef struct options {
  const char *addrs[MAX_ADDRS];
  size_t naddrs;
  ldmd_cmdline cl; /* -P -q -m -o -M -U and the file: over the registry */
  const char *log; /* NULL: the default */
  int level;       /* -1: default */
  bool check_only; /* -n */
  bool foreground; /* -f, or -l - */
  long timeout;    /* -t */
  const char *pidfile;
} options;

/* Everything the top-level process owns. */
typedef struct server {
  options opt;
  ldmd_params par; /* the settings: the command line's, the registry's */
  ldmd_priv priv;
  ldm_conf *conf;
  ldmd_settings set;
  ldmd_listeners lis;
  ldmd_acceptor acc;
  ldmd_children kids;
  ldmd_supervision sup;
  sigset_t waitmask; /* the mask while sleeping: our signals let through */
  int ready_fd;      /* daemonizing: tells the starting process (or -1) */
  /* The live figures' endpoint (its file: set.metrics). */
  char http_name[128]; /* as bound */
  int http_fd;         /* the endpoint's socket, or -1 */
  int hub_chan[2];     /* the feed hub's channel (hub.h), or -1s */
} server;

static void usage(const char *prog) {
  fprintf(stderr,
          "usage: %s [-I addr] [-P port] [-q queue] [-l log] [-v] [-x] [-n]\n"
          "       [-f] [-m max_latency] [-o offset] [-t timeout] [-M max]\n"
          "       [-W pidfile] [-U user] [conf]\n"
          "  -I addr     listen on addr (repeatable; 0.0.0.0: all IPv4 and "
          "IPv6)\n"
          "  -P port     port (registry %s)\n"
          "  -q queue    product queue (registry %s)\n"
          "  -l log      log: \"\" syslog, \"-\" stderr (foreground), or a "
          "file\n"
          "  -v, -x      log INFO, DEBUG\n"
          "  -n          check the configuration file and exit\n"
          "  -f          stay in the foreground whatever the log\n"
          "  -m seconds  max latency of received products (registry %s)\n"
          "  -o seconds  time offset of requests (registry %s)\n"
          "  -t seconds  LDM-5 RPC timeout, 1-32767 (60)\n"
          "  -M n        most connections at once (registry %s)\n"
          "  -W pidfile  write the server's pid there\n"
          "  -U user     started as root, run as user (registry %s;\n"
          "              default %s if it exists; root: stay root)\n"
          "  conf        configuration file (registry %s)\n",
          prog, REG_PORT, REG_QUEUE_PATH, REG_MAX_LATENCY, REG_TIME_OFFSET,
          REG_MAX_CLIENTS, REG_USER, LDMD_DEFAULT_USER, REG_LDMD_CONFIG);
}

/* An option's integer, read as every integer is (ldm_parse_uint():
 * decimal, so "-m 010" is 10 seconds, not strtol base 0's 8 as LDM's). */
static long number(const char *s, long lo, long hi, char opt) {
  uint64_t v;
  bool is_uint = ldm_parse_uint(s, &v) == 0;

  if (is_uint && v >= (uint64_t)lo && v <= (uint64_t)hi)
    return (long)v;
  fprintf(stderr, "ldmd: bad -%c value \"%s\": %s (%ld..%ld)\n", opt, s,
          is_uint ? "out of range" : ldm_uint_problem(s), lo, hi);
  return LONG_MIN;
}

/* A numeric option into *dst.  @return 0 or -1 (message printed) */
static int numopt(long *dst, const char *s, long lo, long hi, char opt) {
  *dst = number(s, lo, hi, opt);
  return *dst == LONG_MIN ? -1 : 0;
}

static int parse_options(int argc, char **argv, options *o) {
  int ch, bad = 0;

  memset(o, 0, sizeof *o);
  o->cl.port = o->cl.max_latency = o->cl.time_offset = o->cl.max_clients = -1;
  o->timeout = 60;
  o->level = -1;
  opterr = 1;
  while ((ch = getopt(argc, argv, ":I:P:q:l:vxnfm:o:t:M:W:U:h")) != -1) {
    switch (ch) {
    case 'I':
      if (o->naddrs == MAX_ADDRS) {
        fprintf(stderr, "ldmd: at most %d -I options\n", MAX_ADDRS);
        return -1;
      }
      o->addrs[o->naddrs++] = optarg;
      o->cl.have_addrs = true; /* so /server/ip-addr is not read */
      break;
    case 'P':
      bad |= numopt(&o->cl.port, optarg, 0, 65535, 'P');
      break;
    case 'q':
      o->cl.queue = optarg;
      break;
    case 'l':
      o->log = optarg;
      break;
    case 'v':
      if (o->level != LDM_LOG_DEBUG)
        o->level = LDM_LOG_INFO;
      break;
    case 'x':
      o->level = LDM_LOG_DEBUG;
      break;
    case 'n':
      o->check_only = true;
      break;
    case 'f':
      o->foreground = true;
      break;
    case 'm':
      bad |= numopt(&o->cl.max_latency, optarg, 1, INT_MAX, 'm');
      break;
    case 'o':
      bad |= numopt(&o->cl.time_offset, optarg, 0, INT_MAX, 'o');
      break;
    case 't':
      bad |= numopt(&o->timeout, optarg, 1, 32767, 't');
      break;
    case 'M':
      bad |= numopt(&o->cl.max_clients, optarg, 1, 1000000, 'M');
      break;
    case 'W':
      o->pidfile = optarg;
      break;
    case 'U':
      o->cl.user = optarg;
      break;
    case ':':
      fprintf(stderr, "ldmd: option -%c needs a value\n", optopt);
      return -1;
    case 'h':
    default:
      return -1;
    }
  }
  if (bad)
    return -1;
  if (optind < argc)
    o->cl.conf = argv[optind++];
  if (optind < argc) {
    fprintf(stderr, "ldmd: too many arguments\n");
    return -1;
  }
  if (o->log != NULL && strcmp(o->log, "-") == 0)
    o->foreground = true;
  return 0;
}

/* ---------------------------------------------------------------------- */
/* Settings from the registry                                             */
/* ---------------------------------------------------------------------- */

/* Fill what the command line left open from the registry (settings.h),
 * and hand the children their part. */
static int settings(server *s) {
  char err[2 * PATH_MAX];

  if (ldmd_settings_read(&s->opt.cl, &s->par, err, sizeof err) != 0) {
    log_error("%s", err);
    return -1;
  }
  if (s->opt.naddrs == 0) {
    s->opt.addrs[0] = s->par.ip_addr;
    s->opt.naddrs = 1;
  }
  ldmd_settings_fill(&s->par, &s->set);
  s->set.rpc_timeout = (unsigned)s->opt.timeout;
  s->set.stop = &stop_flag;
  s->set.metrics_slot = -1;
  s->sup.restart_min_ms = s->par.restart_min_ms;
  s->sup.restart_max_ms = s->par.restart_max_ms;
  return 0;
}

/*
 * TLS contexts from the registry's /tls keys: with /tls/cert, the
 * listener's and the requesters' (which show the same certificate);
 * without it but with /tls/ca, only the requesters' (they verify their
 * upstreams and show none); with neither, none, and no entry of ldmd.conf
 * may ask for TLS.  @return 0 or -1 (logged)
 */
static int tls_setup(server *s) {
  const ldm_conf_origin *o;
  bool server_tls = s->par.tls_cert[0] != '\0';
  char err[512];

  if (server_tls) {
    s->set.tls_server = ldm6_tls_ctx_new(true, s->par.tls_cert, s->par.tls_key,
                                         s->par.tls_ca, err, sizeof err);
    if (s->set.tls_server == NULL) {
      log_error("TLS: %s", err);
      return -1;
    }
  }
  if (server_tls || s->par.tls_ca[0] != '\0') {
    s->set.tls_client = ldm6_tls_ctx_new(false, s->par.tls_cert, s->par.tls_key,
                                         s->par.tls_ca, err, sizeof err);
    if (s->set.tls_client == NULL) {
      log_error("TLS: %s", err);
      return -1;
    }
  }
  o = ldm_conf_tls_entry(s->conf, false);
  if (o != NULL && s->set.tls_server == NULL) {
    log_error("%s:%u: the entry asks for TLS, but TLS is not configured "
              "(registry %s is not set)",
              o->file, o->line, REG_TLS_CERT);
    return -1;
  }
  o = ldm_conf_tls_entry(s->conf, true);
  if (o != NULL && s->set.tls_client == NULL) {
    log_error("%s:%u: the REQUEST asks for TLS, but TLS is not configured "
              "(registry %s and %s are not set)",
              o->file, o->line, REG_TLS_CERT, REG_TLS_CA);
    return -1;
  }
  if (s->set.tls_client == NULL)
    return 0;
  log_notice("TLS: certificate %s, CA bundle %s",
             s->par.tls_cert[0] != '\0' ? s->par.tls_cert : "(none)",
             s->par.tls_ca[0] != '\0' ? s->par.tls_ca : "(none)");
  return 0;
}

/* Read ldmd.conf; log its warnings. */
static int configure(server *s) {
  ldm_conf_options copt = {.default_port = s->par.port};
  char err[1024];
  size_t i;
  int rc =
      ldm_conf_parse_opts(s->par.conf_path, &copt, &s->conf, err, sizeof err);

  if (rc != LDM_CONF_OK) {
    log_error("%s", err);
    return -1;
  }
  for (i = 0; i < s->conf->nwarnings; i++)
    log_warning("%s", s->conf->warnings[i]);
  if (ldm_conf_is_empty(s->conf)) {
    log_error("configuration file %s is effectively empty", s->par.conf_path);
    return -1;
  }
  s->set.conf = s->conf;
  if (tls_setup(s) != 0)
    return -1;
  return 0;
}

/* The queue must open for writing before we serve anybody. */
static int check_queue(const server *s) {
  pq_t *pq = NULL;
  pq_error err;

  if (pq_open(s->par.queue, 0, &pq, &err) != PQ_OK) {
    log_error("cannot open the product queue %s: %s", s->par.queue, err.pe_msg);
    return -1;
  }
  pq_close(pq);
  return 0;
}

/* ---------------------------------------------------------------------- */
/* Process setup                                                          */
/* ---------------------------------------------------------------------- */

static void on_stop(int sig) {
  (void)sig;
  stop_flag = 1;
}

/* A connection process's: its stop is bounded even if it is busy. */
static void on_child_stop(int sig) {
  (void)sig;
  stop_flag = 1;
  ldmd_child_stop_due();
}

static void on_child(int sig) {
  (void)sig;
  child_flag = 1;
}

static void on_usr1(int sig) {
  (void)sig;
  usr1_flag = 1;
  ldm_log_request_refresh();
}

static void on_usr2(int sig) {
  (void)sig;
  usr2_flag = 1;
  ldm_log_request_roll();
}

static void handle(int sig, void (*fn)(int)) {
  struct sigaction sa;

  memset(&sa, 0, sizeof sa);
  sa.sa_handler = fn;
  sigemptyset(&sa.sa_mask);
  (void)sigaction(sig, &sa, NULL);
}

/* Handlers for the top-level process; our signals blocked outside ppoll. */
static void setup_signals(server *s) {
  sigset_t block;

  handle(SIGTERM, on_stop);
  handle(SIGINT, on_stop);
  handle(SIGCHLD, on_child);
  handle(SIGUSR1, on_usr1);
  handle(SIGUSR2, on_usr2);
  handle(SIGHUP, SIG_IGN);
  handle(SIGPIPE, SIG_IGN);
  sigemptyset(&block);
  sigaddset(&block, SIGTERM);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGCHLD);
  sigaddset(&block, SIGUSR1);
  sigaddset(&block, SIGUSR2);
  (void)sigprocmask(SIG_BLOCK, &block, &s->waitmask);
  sigdelset(&s->waitmask, SIGTERM);
  sigdelset(&s->waitmask, SIGINT);
  sigdelset(&s->waitmask, SIGCHLD);
  sigdelset(&s->waitmask, SIGUSR1);
  sigdelset(&s->waitmask, SIGUSR2);
}

/*
 * LDM's daemonizing: fork, setsid, fork; the intermediate process prints
 * the daemon's pid; stdio goes to /dev/null.  Returns in the daemon, with
 * *ready_fd the end of a pipe to hand to daemon_ready() once it serves.
 *
 * The process that started ldmd exits when the daemon says it is ready
 * (0) or when the pipe closes without a word because the daemon, or the
 * intermediate process before it, ended (1).  It never reads an exit
 * status: with SIGCHLD ignored (a disposition inherited across exec, e.g.
 * from env --ignore-signal=CHLD) the kernel reaps the intermediate
 * process by itself and waitpid() fails with ECHILD, leaving nothing to
 * read.
 */
static int daemonize(int *ready_fd) {
  int p[2], fd;
  pid_t pid;

  if (pipe2(p, O_CLOEXEC) != 0) {
    log_error("cannot become a daemon: pipe: %s", strerror(errno));
    return -1;
  }
  fflush(NULL);
  pid = fork();
  if (pid < 0) {
    log_error("cannot become a daemon: fork: %s", strerror(errno));
    close(p[0]);
    close(p[1]);
    return -1;
  }
  if (pid > 0) { /* the caller's process: done when the daemon is */
    char b = 0;
    ssize_t n;

    close(p[1]);
    do
      n = read(p[0], &b, 1);
    while (n < 0 && errno == EINTR);
    /* Reap the intermediate process if it is ours to reap; its status
     * says nothing the pipe did not. */
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
      ;
    _exit(n == 1 && b == 'r' ? 0 : 1);
  }
  close(p[0]);
  (void)setsid();
  (void)signal(SIGHUP, SIG_IGN);
  pid = fork();
  if (pid < 0)
    _exit(1);
  if (pid > 0) {
    printf("%ld\n", (long)pid);
    fflush(stdout);
    _exit(0);
  }
  fd = open("/dev/null", O_RDWR);
  if (fd >= 0) {
    (void)dup2(fd, STDIN_FILENO);
    (void)dup2(fd, STDOUT_FILENO);
    (void)dup2(fd, STDERR_FILENO);
    if (fd > STDERR_FILENO)
      close(fd);
  }
  *ready_fd = p[1];
  return 0;
}

/* The daemon serves: let the process that started it exit 0. */
static void daemon_ready(int *ready_fd) {
  if (*ready_fd < 0)
    return;
  while (write(*ready_fd, "r", 1) < 0 && errno == EINTR)
    ;
  close(*ready_fd);
  *ready_fd = -1;
}

static int write_pidfile(const char *path) {
  FILE *f = fopen(path, "w");

  if (f == NULL || fprintf(f, "%ld\n", (long)getpid()) < 0 || fclose(f) != 0) {
    log_error("cannot write the pid file %s: %s", path, strerror(errno));
    return -1;
  }
  return 0;
}

/* ---------------------------------------------------------------------- */
/* Serving                                                                */
/* ---------------------------------------------------------------------- */

/* In a new child (connection or requester): what it must not keep of the
 * top-level process, and its signals as a child's. */
static void become_child(server *s) {
  struct sigaction dfl;
  sigset_t none;

  ldmd_notify_child();
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  (void)sigaction(SIGCHLD, &dfl, NULL);
  (void)sigaction(SIGALRM, &dfl, NULL);
  handle(SIGTERM, on_child_stop);
  handle(SIGINT, on_child_stop);
  ldmd_listen_close(&s->lis);
  ldmd_acceptor_free(&s->acc);
  if (s->http_fd >= 0)
    close(s->http_fd);
  s->http_fd = -1;
  sigemptyset(&none);
  (void)sigprocmask(SIG_SETMASK, &none, NULL);
}

/* In a new connection child: become its server, with metrics slot mslot. */
static void run_child(server *s, int fd, int mslot) {
  pid_t *sibs;
  size_t nsibs;
  int status;

  sibs = ldmd_children_conn_pids(&s->kids, &nsibs);
  become_child(s);
  s->set.metrics_slot = mslot;
  status = ldmd_conn_serve(&s->set, fd, sibs, nsibs);
  free(sibs);
  ldmd_children_free(&s->kids);
  ldm_conf_free(s->conf);
  exit(status);
}

/* In the metrics server's process: serve the endpoint. */
static int run_metrics(server *s) {
  int fd = s->http_fd;

  s->http_fd = -1; /* become_child() leaves it to us */
  become_child(s);
  ldm_log_set_ident("metrics");
  return ldmd_metrics_serve(s->set.metrics, fd, s->par.queue,
                            s->par.http_per_address);
}

/* In a new task child (ldmd_task_main): run the REQUEST's requester, or
 * the metrics server. */
static void run_task(void *arg, const ldmd_task *task) {
  server *s = arg;
  int status;

  if (task->kind == LDMD_CHILD_HUB) {
    become_child(s);
    status = ldmd_hub_run(&s->set, s->hub_chan[0]);
    ldmd_children_free(&s->kids);
    ldm_conf_free(s->conf);
    exit(status);
  }
  if (task->kind == LDMD_CHILD_METRICS) {
    status = run_metrics(s);
    ldmd_children_free(&s->kids);
    ldm_conf_free(s->conf);
    exit(status);
  }
  become_child(s);
  s->set.metrics_slot = task->mslot;
  status = ldmd_requester_run(&s->set, task->entry);
  ldmd_children_free(&s->kids);
  ldm_conf_free(s->conf);
  exit(status);
}

/* The peer's address as text, an IPv4-mapped IPv6 address as its dotted
 * quad (as ldm6_io_peer_addr() gives it to the connection process), so
 * that one peer counts as one address on either listener. */
static void peer_address(int fd, char *buf, size_t len) {
  struct sockaddr_storage ss;
  struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
  socklen_t sl = sizeof ss;

  snprintf(buf, len, "unknown");
  if (getpeername(fd, (struct sockaddr *)&ss, &sl) != 0)
    return;
  if (ss.ss_family == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr))
    (void)inet_ntop(AF_INET, &s6->sin6_addr.s6_addr[12], buf, (socklen_t)len);
  else
    (void)getnameinfo((struct sockaddr *)&ss, sl, buf, (socklen_t)len, NULL, 0,
                      NI_NUMERICHOST);
}

/* The connection limits, checked before anything is read or forked: the
 * connection processes in all (-M, /server/max-clients), and those of one
 * peer address (/server/max-per-address).  @return true if the
 * connection from ip may be served; false: it was logged, to be closed */
static bool within_limits(const server *s, const char *ip) {
  size_t mine;

  if (s->kids.nconn >= s->par.max_clients) {
    log_notice("denying connection from %s because too many clients (%u, "
               "-M or %s)",
               ip, s->par.max_clients, REG_MAX_CLIENTS);
    return false;
  }
  mine = ldmd_children_conn_from(&s->kids, ip);
  if (mine >= s->par.max_per_address) {
    log_notice("denying connection from %s because too many connections "
               "from that address (%zu, %s %u)",
               ip, mine, REG_MAX_PER_ADDRESS, s->par.max_per_address);
    return false;
  }
  return true;
}

/* Hand a new connection to a process of its own.  @return 0, or -1 when
 * fork() failed (errno) */
static int new_connection(server *s, int fd) {
  char ip[64];
  pid_t pid, parent = getpid();
  int mslot;

  peer_address(fd, ip, sizeof ip);
  if (!within_limits(s, ip)) {
    close(fd);
    return 0;
  }
  mslot = ldmm_claim(s->set.metrics);
  /* A feed is handed to the hubs only while one runs: with every hub
   * dead (waiting to be started again), the connection process serves it
   * at once instead of waiting for an answer that cannot come. */
  s->set.hub_fd =
      s->hub_chan[1] >= 0 && ldmd_children_running(&s->kids, LDMD_CHILD_HUB) > 0
          ? s->hub_chan[1]
          : -1;
  fflush(NULL);
  pid = fork();
  if (pid < 0) {
    int err = errno;

    ldmm_release(s->set.metrics, mslot);
    close(fd);
    errno = err;
    return -1;
  }
  if (pid == 0) {
    ldmd_child_follow_parent(parent);
    run_child(s, fd, mslot);
  }
  close(fd);
  ldmm_bind(s->set.metrics, mslot, pid);
  if (ldmd_children_add(&s->kids, pid, ip, mslot) != 0)
    log_error("cannot record connection process %ld: out of memory", (long)pid);
  log_debug("connection from %s: process %ld", ip, (long)pid);
  return 0;
}

/* Act on the signals that arrived. */
static void signals_arrived(server *s) {
  if (child_flag) {
    child_flag = 0;
    ldmd_children_reap(&s->kids);
  }
  if (usr1_flag) {
    usr1_flag = 0;
    /* The first line of the fresh file after a rotation (the refresh is
     * applied by it), and the operator's sign that the signal came. */
    log_notice("SIGUSR1: log file reopened; passing it on to %zu processes",
               s->kids.n);
    ldmd_children_signal(&s->kids, SIGUSR1);
  }
  if (usr2_flag) {
    usr2_flag = 0;
    ldmd_children_signal(&s->kids, SIGUSR2);
  }
}

/*
 * Run the handlers of the signals that came while they were blocked, and
 * act on them.  ppoll(2) lets them in only when it returns EINTR: when a
 * listener is ready it returns that instead and leaves them pending, so a
 * server that always had a connection waiting never saw SIGTERM.
 * Unblocking them for a moment delivers them.
 */
static void signal_window(server *s) {
  sigset_t blocked;

  (void)sigprocmask(SIG_SETMASK, &s->waitmask, &blocked);
  (void)sigprocmask(SIG_SETMASK, &blocked, NULL);
  signals_arrived(s);
}

/* Take the pending connections of listener i, until none is left, a
 * shortage rests the listeners, or the server stops. */
static void accept_all(server *s, size_t i) {
  while (!stop_flag) {
    int fd = ldmd_accept(&s->acc, s->lis.fds[i], s->lis.names[i]);

    if (fd < 0)
      return;
    if (new_connection(s, fd) != 0)
      ldmd_acceptor_shortage(&s->acc, "fork", errno);
    else
      ldmd_acceptor_served(&s->acc);
    signal_window(s);
    if (ldmd_acceptor_pause_ms(&s->acc) > 0)
      return;
  }
}

/* The accept loop: asleep in ppoll() until a connection, a signal, the
 * next restart of a task, or the end of a pause of the listeners (which
 * are left out of the poll while they rest). */
static void serve(server *s) {
  struct pollfd pfd[LDMD_MAX_LISTEN];
  size_t i;

  while (!stop_flag) {
    int due = ldmd_children_restart_due(&s->kids);
    int rest = ldmd_acceptor_pause_ms(&s->acc);
    int wait = rest > 0 && (due < 0 || rest < due) ? rest : due; /* -1: none */
    struct timespec ts = {wait / 1000, (long)(wait % 1000) * 1000000L};
    int n, err;

    for (i = 0; i < s->lis.n; i++) {
      pfd[i].fd = rest > 0 ? -1 : s->lis.fds[i]; /* -1: not polled */
      pfd[i].events = POLLIN;
      pfd[i].revents = 0;
    }
    n = ppoll(pfd, s->lis.n, wait < 0 ? NULL : &ts, &s->waitmask);
    err = errno;
    if (n > 0)
      signal_window(s);
    else
      signals_arrived(s);
    if (n < 0) {
      if (err != EINTR) {
        log_error("cannot wait for connections: ppoll: %s", strerror(err));
        return;
      }
      continue;
    }
    for (i = 0; i < s->lis.n && !stop_flag; i++)
      if ((pfd[i].revents & POLLIN) && ldmd_acceptor_pause_ms(&s->acc) == 0)
        accept_all(s, i);
  }
}

/* "REQUEST IDS "^SA" host:388", for messages. */
static void request_text(const ldm_conf_request *r, char *buf, size_t len) {
  char ft[192];

  pq_feedtype_format(r->feedtype, ft, sizeof ft);
  snprintf(buf, len,
           r->ipv6 ? "REQUEST %s \"%s\" [%s]:%u" : "REQUEST %s \"%s\" %s:%u",
           ft, r->pattern, r->host, r->port);
}

/* The EXEC programs, then one requester per REQUEST: tasks that ldmd
 * keeps running (children.h). */
static void start_tasks(server *s) {
  char what[512];
  size_t i;

  s->sup.close_fds = s->lis.fds;
  s->sup.nclose = s->lis.n;
  s->sup.task_main = run_task;
  s->sup.arg = s;
  ldmd_children_supervise(&s->kids, &s->sup);
  if (s->conf->nrequests > 0 && s->par.state_dir[0] != '\0' &&
      mkdir(s->par.state_dir, 0750) != 0 && errno != EEXIST)
    log_error("cannot make the state directory %s: mkdir: %s", s->par.state_dir,
              strerror(errno));
  for (i = 0; i < s->conf->nexecs; i++)
    (void)ldmd_children_task(&s->kids, LDMD_CHILD_EXEC, &s->conf->execs[i],
                             s->conf->execs[i].command);
  for (i = 0; i < s->conf->nrequests; i++) {
    request_text(&s->conf->requests[i], what, sizeof what);
    (void)ldmd_children_task(&s->kids, LDMD_CHILD_REQUESTER,
                             &s->conf->requests[i], what);
  }
  /* The feed hubs (hub.h), one per CPU: the connection processes hand
   * them their plain primary feeds over one channel, each feed to the
   * first hub that reads it. */
  if (s->par.feed_hub && !s->par.zero_copy) {
    unsigned nhubs = ldmd_hub_count();

    if (ldmd_hub_channel(s->hub_chan) != 0)
      log_error("cannot make the feed hub's channel: %s: every feed is "
                "served by its own process",
                strerror(errno));
    for (i = 0; s->hub_chan[0] >= 0 && i < nhubs; i++) {
      snprintf(what, sizeof what, "feed hub %zu of %u", i + 1, nhubs);
      if (ldmd_children_task(&s->kids, LDMD_CHILD_HUB, NULL, what) == 0)
        s->set.hub_fd = s->hub_chan[1];
    }
  }
  if (s->http_fd >= 0) {
    snprintf(what, sizeof what, "http://%s/metrics", s->http_name);
    (void)ldmd_children_task(&s->kids, LDMD_CHILD_METRICS, NULL, what);
  }
}

/* The live figures: the metrics file, and the endpoint's socket if it is
 * served.  A file that cannot be made (a directory ldmd may not write) is
 * an error only when the figures are to be served: otherwise the server
 * runs without them, with a warning, as before they existed.
 * @return 0 or -1 (logged) */
static int start_metrics(server *s) {
  char err[PATH_MAX + 256];
  uint32_t nslots = (s->par.max_clients < MAX_CONN_SLOTS ? s->par.max_clients
                                                         : MAX_CONN_SLOTS) +
                    (uint32_t)s->conf->nrequests + SPARE_SLOTS;

  if (!s->par.metrics_on) {
    log_info("live figures off (%s is false)", REG_METRICS_ENABLE);
    return 0;
  }
  s->set.metrics = ldmm_create(s->par.metrics_path, nslots, s->par.queue,
                               LDMD_VERSION, err, sizeof err);
  if (s->set.metrics == NULL && s->par.http_addr[0] == '\0') {
    log_warning("%s: running without live figures (registry %s)", err,
                REG_METRICS_PATH);
    return 0;
  }
  if (s->set.metrics == NULL) {
    log_error("%s: cannot serve the live figures on %s", err, s->par.http_addr);
    return -1;
  }
  s->kids.metrics = s->set.metrics;
  if (s->par.http_addr[0] == '\0')
    return 0;
  s->http_fd = ldmd_metrics_listen(s->par.http_addr, s->http_name,
                                   sizeof s->http_name, err, sizeof err);
  if (s->http_fd < 0) {
    log_error("%s (registry %s)", err, REG_METRICS_HTTP);
    return -1;
  }
  ldmm_set_http_addr(s->set.metrics, s->http_name);
  log_notice("serving metrics on http://%s/metrics", s->http_name);
  return 0;
}

/*
 * systemd's READY=1 (notify.h), with what an operator wants to see in
 * "systemctl status": where ldmd listens, its queue, its tasks.  Sent once
 * the start-up is done: the queue opened for writing (check_queue()), the
 * sockets listen, the pid file is written, the EXEC programs and
 * requesters are started.  Only the accept loop is left, and a connection
 * made from now on is queued by the kernel until the loop takes it.
 */
static void notify_ready(const server *s) {
  char where[LDMD_MAX_LISTEN * 84] = "not listening (no ALLOW or ACCEPT entry)";
  size_t i, len = 0;

  for (i = 0; i < s->lis.n && len < sizeof where; i++) {
    int n = snprintf(where + len, sizeof where - len, "%s%s",
                     i == 0 ? "listening on " : ", ", s->lis.names[i]);

    if (n < 0)
      break;
    len += (size_t)n;
  }
  ldmd_notify("READY=1\nSTATUS=%s; queue %s; %zu REQUEST, %zu EXEC", where,
              s->par.queue, s->conf->nrequests, s->conf->nexecs);
}

/* Started as root: become the unprivileged user (privilege.h), once the
 * sockets are bound and before anything is read from them.  The log file
 * named by -l, opened as root, is given to the user first, so that it can
 * still reopen it on SIGUSR1. */
static int drop_privileges(server *s) {
  struct stat st;
  char err[512];

  if (s->priv.root) /* asked for: a notice, not a warning */
    log_notice("running as root (%s root): every connection is served by "
               "root",
               s->opt.cl.user != NULL ? "-U" : REG_USER);
  if (!s->priv.drop)
    return 0;
  if (s->opt.log != NULL && s->opt.log[0] != '\0' &&
      strcmp(s->opt.log, "-") != 0 && stat(s->opt.log, &st) == 0 &&
      S_ISREG(st.st_mode) && st.st_uid == 0 &&
      chown(s->opt.log, s->priv.uid, s->priv.gid) != 0)
    log_warning("cannot give the log %s to user %s: chown: %s", s->opt.log,
                s->priv.name, strerror(errno));
  if (ldmd_priv_drop(&s->priv, err, sizeof err) != 0) {
    log_error("%s", err);
    return -1;
  }
  log_notice("running as user %s (uid %ld, gid %ld)", s->priv.name,
             (long)s->priv.uid, (long)s->priv.gid);
  return 0;
}

/* A connection process was reaped: its feed leaves the upstream table. */
static void conn_ended(void *arg, pid_t pid) {
  ldmd_feeds_reaped(arg, pid);
}

/* Everything before the accept loop; in the process that will serve. */
static int start(server *s) {
  size_t i;

  if (ldm_conf_needs_listener(s->conf)) {
    char err[512];

    if (ldmd_listen(s->opt.addrs, s->opt.naddrs, s->par.port, &s->lis, err,
                    sizeof err) != 0) {
      log_error("%s", err);
      return -1;
    }
  } else {
    log_warning("%s has no ALLOW or ACCEPT entry: not listening",
                s->par.conf_path);
  }
  /* Root only for bind(2): nothing from the network is read as root, and
   * the queue must open for writing as the user that will serve. */
  if (drop_privileges(s) != 0 || check_queue(s) != 0)
    return -1;
  if (!s->opt.foreground) {
    if (daemonize(&s->ready_fd) != 0)
      return -1;
    if (s->opt.log == NULL)
      (void)ldm_log_set_destination(NULL); /* stderr is /dev/null now */
  }
  setup_signals(s);
  if (start_metrics(s) != 0)
    return -1;
  ldmd_acceptor_init(&s->acc);
  /* Before the first fork: every connection process shares it. */
  s->set.feeds = ldmd_feeds_new(s->par.max_clients);
  if (s->set.feeds == NULL) {
    log_error("cannot make the upstream table: mmap: %s", strerror(errno));
    return -1;
  }
  s->kids.conn_ended = conn_ended;
  s->kids.conn_ended_arg = s->set.feeds;
  if (s->opt.pidfile != NULL && write_pidfile(s->opt.pidfile) != 0)
    return -1;
  log_notice("starting up (ldmd %s): queue %s, configuration %s", LDMD_VERSION,
             s->par.queue, s->par.conf_path);
  for (i = 0; i < s->lis.n; i++)
    log_notice("listening on %s", s->lis.names[i]);
  /* Before the tasks: a requester's process must not hold the pipe. */
  daemon_ready(&s->ready_fd);
  start_tasks(s);
  notify_ready(s);
  return 0;
}

int main(int argc, char **argv) {
  server s;
  char err[512];
  int rc = 1;

  memset(&s, 0, sizeof s);
  s.ready_fd = -1;
  s.acc.spare = -1;
  s.http_fd = -1;
  s.hub_chan[0] = s.hub_chan[1] = -1;
  ldm_log_init("ldmd");
  if (parse_options(argc, argv, &s.opt) != 0) {
    usage(argv[0]);
    return 1;
  }
  if (s.opt.log != NULL && ldm_log_set_destination(s.opt.log) != 0) {
    fprintf(stderr, "ldmd: cannot log to %s: %s\n", s.opt.log, strerror(errno));
    return 1;
  }
  if (s.opt.level >= 0)
    ldm_log_set_level((enum ldm_log_level)s.opt.level);
  if (settings(&s) != 0 || configure(&s) != 0)
    goto out;
  if (s.opt.check_only) {
    log_notice("configuration file %s is valid", s.par.conf_path);
    rc = 0;
    goto out;
  }
  if (ldmd_priv_plan(s.par.user, &s.priv, err, sizeof err) != 0) {
    log_error("%s", err);
    goto out;
  }
  if (start(&s) != 0)
    goto out;
  serve(&s);
  ldmd_notify("STOPPING=1\nSTATUS=stopping: %zu processes to stop", s.kids.n);
  ldmd_acceptor_free(&s.acc);
  log_notice("stopping: %zu processes to stop", s.kids.n);
  ldmd_listen_close(&s.lis);
  ldmd_children_stop(&s.kids, LDMD_STOP_GRACE_MS, &s.waitmask);
  if (s.opt.pidfile != NULL)
    (void)unlink(s.opt.pidfile);
  log_notice("exiting");
  rc = 0;
out:
  ldmd_listen_close(&s.lis);
  ldmd_acceptor_free(&s.acc);
  ldmd_children_free(&s.kids);
  ldmd_feeds_free(s.set.feeds);
  ldm_conf_free(s.conf);
  if (s.http_fd >= 0)
    close(s.http_fd);
  ldmm_close(s.set.metrics, true);
  SSL_CTX_free(s.set.tls_server);
  SSL_CTX_free(s.set.tls_client);
  return rc;
}
