/*
 * relay_servers.c - the processes of relay_bench: starting an ldmd on
 * 127.0.0.1 with its own registry, ldmd.conf, queue and log (and reading
 * its port from the log), stopping it, the CPU time of its process tree,
 * stopping and continuing that tree, and cleaning up what a run left.
 * Also the bench's clock, sleeps and messages, and the lines relay_bench
 * and nats_bench print alike.
 */
#include "test/bench/relay_servers.h"

#include <dirent.h>
#include <signal.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pq/pq.h"
#include "test/bench/iddmix.h"
#include "test/lib/tu_clock.h"

#define KIB 1024u

volatile sig_atomic_t rb_stop;
const char *rb_prog = "relay_bench";

/* ---------------------------------------------------------------------- */
/* Small helpers                                                          */
/* ---------------------------------------------------------------------- */

void rb_sleep(double s) {
  struct timespec ts;

  ts.tv_sec = (time_t)s;
  ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR && !rb_stop)
    ;
}

void rb_warn(const char *fmt, ...) {
  va_list ap;

  fflush(stdout);
  fprintf(stderr, "%s: ", rb_prog);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}

/* Whole file into a NUL-terminated buffer (NULL if unreadable); free it. */
static char *slurp(const char *path) {
  FILE *f = fopen(path, "r");
  char *buf = NULL;
  size_t len = 0, cap = 0, n;

  if (f == NULL)
    return NULL;
  do {
    if (cap - len < 4096) {
      char *nb = realloc(buf, cap + 65536);

      if (nb == NULL) {
        free(buf);
        fclose(f);
        return NULL;
      }
      buf = nb;
      cap += 65536;
    }
    n = fread(buf + len, 1, cap - len - 1, f);
    len += n;
  } while (n > 0);
  fclose(f);
  if (buf != NULL)
    buf[len] = '\0';
  return buf;
}

static int write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");

  if (f == NULL || fputs(text, f) == EOF) {
    rb_warn("cannot write %s: %s", path, strerror(errno));
    if (f != NULL)
      fclose(f);
    return -1;
  }
  return fclose(f) == 0 ? 0 : -1;
}

/* ---------------------------------------------------------------------- */
/* CPU time of a process tree                                             */
/* ---------------------------------------------------------------------- */

/* The processes of the tree rooted at root (root first, at most max)
 * into pids, and the seconds of CPU (user + system, with that of their
 * reaped children) they used into *cpu, -1 if root is not in /proc.  ldmd
 * forks a process per connection, so a server is its whole tree.
 * @return how many */
static size_t tree_scan(pid_t root, pid_t *pids, size_t max, double *cpu) {
  enum { MAXP = 4096 };
  static pid_t all[MAXP], ppids[MAXP];
  static double used[MAXP];
  static bool in[MAXP];
  DIR *d = root > 0 ? opendir("/proc") : NULL;
  struct dirent *e;
  size_t n = 0, i, k = 0;
  double hz = (double)sysconf(_SC_CLK_TCK), total = 0;
  bool grew = true, found = false;

  if (cpu != NULL)
    *cpu = -1;
  if (d == NULL)
    return 0;
  while ((e = readdir(d)) != NULL && n < MAXP) {
    char path[64], buf[1024];
    const char *p;
    FILE *f;
    unsigned long long ut, st;
    long long cut, cst;
    int ppid;

    if (e->d_name[0] < '0' || e->d_name[0] > '9')
      continue;
    snprintf(path, sizeof path, "/proc/%d/stat", atoi(e->d_name));
    f = fopen(path, "r");
    if (f == NULL)
      continue;
    p = fgets(buf, sizeof buf, f);
    fclose(f);
    if (p == NULL || (p = strrchr(buf, ')')) == NULL)
      continue;
    /* after "pid (comm)": state ppid pgrp session tty tpgid flags minflt
     * cminflt majflt cmajflt utime stime cutime cstime */
    if (sscanf(p + 2,
               "%*c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %lld %lld",
               &ppid, &ut, &st, &cut, &cst) != 5)
      continue;
    all[n] = (pid_t)atoi(e->d_name);
    ppids[n] = (pid_t)ppid;
    used[n] = (double)(ut + st) + (double)(cut + cst);
    in[n] = all[n] == root;
    n++;
  }
  closedir(d);
  while (grew) {
    grew = false;
    for (i = 0; i < n; i++) {
      size_t j;

      if (in[i])
        continue;
      for (j = 0; j < n; j++)
        if (in[j] && all[j] == ppids[i]) {
          in[i] = grew = true;
          break;
        }
    }
  }
  for (i = 0; i < n; i++)
    if (in[i]) {
      found |= all[i] == root;
      total += used[i];
      if (pids != NULL && k < max && all[i] != root)
        pids[1 + k++] = all[i];
    }
  if (pids != NULL && max > 0)
    pids[0] = root;
  if (cpu != NULL && found)
    *cpu = total / hz;
  return pids != NULL && max > 0 ? k + 1 : 0;
}

double rb_tree_cpu(pid_t root) {
  double cpu;

  (void)tree_scan(root, NULL, 0, &cpu);
  return cpu;
}

/* SIGSTOP or SIGCONT to every process of a server. */
void rb_tree_signal(pid_t root, int sig) {
  pid_t pids[64];
  size_t n = tree_scan(root, pids, 63, NULL), i;

  for (i = 0; i < n; i++)
    kill(pids[i], sig);
}

/* ---------------------------------------------------------------------- */
/* Servers                                                                */
/* ---------------------------------------------------------------------- */

/* Give every hole of a file its page: zeros written where it reads as
 * zeros, so nothing the queue wrote changes.  (posix_fallocate on tmpfs
 * would reserve the pages but still clear each at its first fault.) */
static int fill_holes(int fd, off_t size) {
  static const uint8_t zeros[256 * KIB];
  off_t off = 0;

  while (off < size) {
    off_t hole = lseek(fd, off, SEEK_HOLE), data;

    if (hole < 0 || hole >= size)
      break;
    data = lseek(fd, hole, SEEK_DATA);
    if (data < 0 || data > size)
      data = size;
    for (off = hole; off < data;) {
      size_t n = (size_t)(data - off) < sizeof zeros ? (size_t)(data - off)
                                                     : sizeof zeros;
      ssize_t w = pwrite(fd, zeros, n, off);

      if (w <= 0)
        return -1;
      off += w;
    }
  }
  return 0;
}

/* A queue for a phase: created, and every page of its file made. */
static int make_queue(const char *path, uint64_t bytes, uint64_t slots) {
  pq_create_opts o = {
      .pc_data_size = bytes, .pc_slots = slots, .pc_flags = PQ_CLOBBER};
  pq_t *pq;
  pq_error err;
  struct stat st;
  int fd, rc;

  if (pq_create(path, &o, &pq, &err) != PQ_OK) {
    rb_warn("cannot create %s: %s", path, err.pe_msg);
    return -1;
  }
  pq_close(pq);
  fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0 || fstat(fd, &st) != 0) {
    rb_warn("cannot open %s: %s", path, strerror(errno));
    if (fd >= 0)
      close(fd);
    return -1;
  }
  rc = fill_holes(fd, st.st_size);
  if (rc != 0)
    rb_warn("cannot write %s: %s", path, strerror(errno));
  close(fd);
  return rc;
}

/* The server's directory, registry and queue. */
int rb_server_setup(server *s, const char *run, const char *name,
                    uint64_t bytes, uint64_t slots, const char *const *tls) {
  char text[8 * RB_RUN_MAX], tlsxml[4 * RB_RUN_MAX] = "";

  memset(s, 0, sizeof *s);
  s->name = name;
  snprintf(s->dir, sizeof s->dir, "%s/%s", run, name);
  snprintf(s->queue, sizeof s->queue, "%s/ldm.pq", s->dir);
  snprintf(s->conf, sizeof s->conf, "%s/ldmd.conf", s->dir);
  snprintf(s->log, sizeof s->log, "%s/ldmd.log", s->dir);
  snprintf(s->err, sizeof s->err, "%s/ldmd.err", s->dir);
  snprintf(s->reg, sizeof s->reg, "%s/registry.xml", s->dir);
  if (mkdir(s->dir, 0755) != 0 && errno != EEXIST) {
    rb_warn("cannot make %s: %s", s->dir, strerror(errno));
    return -1;
  }
  if (tls != NULL)
    snprintf(tlsxml, sizeof tlsxml,
             "  <tls><cert>%s</cert><key>%s</key><ca>%s</ca></tls>\n", tls[0],
             tls[1], tls[0]);
  snprintf(text, sizeof text,
           "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<registry>\n"
           "  <hostname>%s.relay-bench</hostname>\n"
           "  <queue><path>%s</path></queue>\n"
           "  <server><config-path>%s</config-path><user>root</user>"
           "<max-latency>3600</max-latency><time-offset>3600</time-offset>"
           "</server>\n%s</registry>\n",
           name, s->queue, s->conf, tlsxml);
  if (write_file(s->reg, text) != 0)
    return -1;
  return make_queue(s->queue, bytes, slots);
}

int rb_server_registry_insert(const server *s, const char *before,
                              const char *xml) {
  char text[8 * RB_RUN_MAX + 1024], *end;
  FILE *f = fopen(s->reg, "r");
  size_t n = f != NULL ? fread(text, 1, sizeof text - 1, f) : 0;

  if (f != NULL)
    fclose(f);
  text[n] = '\0';
  end = strstr(text, before);
  if (end == NULL || n + strlen(xml) + 2 >= sizeof text) {
    rb_warn("cannot add to the registry %s", s->reg);
    return -1;
  }
  memmove(end + strlen(xml) + 1, end, strlen(end) + 1);
  memcpy(end, xml, strlen(xml));
  end[strlen(xml)] = '\n';
  return write_file(s->reg, text);
}

int rb_server_registry_add(const server *s, const char *xml) {
  return rb_server_registry_insert(s, "</registry>", xml);
}

int rb_server_spawn(server *s, const char *ldmd, const char *conf_text) {
  if (write_file(s->conf, conf_text) != 0 || write_file(s->log, "") != 0)
    return -1;
  fflush(stdout);
  s->pid = fork();
  if (s->pid < 0) {
    rb_warn("fork: %s", strerror(errno));
    return -1;
  }
  if (s->pid == 0) {
    int fd = open(s->err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int nul = open("/dev/null", O_RDWR);

    prctl(PR_SET_PDEATHSIG, SIGTERM); /* a bench killed leaves no server */
    if (fd >= 0)
      dup2(fd, 2);
    if (nul >= 0) {
      dup2(nul, 0);
      dup2(nul, 1);
    }
    setenv("LDM_REGISTRY", s->reg, 1);
    setenv("LDMHOME", s->dir, 1);
    unsetenv("LDM_REGISTRY_DIR");
    execl(ldmd, "ldmd", "-f", "-l", s->log, "-P", "0", "-I", "127.0.0.1", "-q",
          s->queue, s->conf, (char *)NULL);
    fprintf(stderr, "cannot run %s: %s\n", ldmd, strerror(errno));
    _exit(127);
  }
  return 0;
}

int rb_server_wait_port(server *s, const char *ldmd) {
  double end = tu_now_s() + 10;

  while (tu_now_s() < end && !rb_stop) {
    char *log = slurp(s->log);
    const char *p =
        log != NULL ? strstr(log, "listening on 127.0.0.1 port ") : NULL;

    if (p != NULL) {
      s->port = (unsigned)atoi(p + strlen("listening on 127.0.0.1 port "));
      free(log);
      return 0;
    }
    free(log);
    if (waitpid(s->pid, NULL, WNOHANG) == s->pid) {
      s->pid = 0;
      break;
    }
    rb_sleep(0.02);
  }
  rb_warn("server %s (%s) did not start; see %s and %s", s->name, ldmd, s->log,
          s->err);
  return -1;
}

int rb_server_start(server *s, const char *ldmd, const char *conf_text) {
  if (rb_server_spawn(s, ldmd, conf_text) != 0)
    return -1;
  return rb_server_wait_port(s, ldmd);
}

/* This host, as ldmd.conf's ALLOW names it. */
#define RB_ALLOW_HERE "ALLOW\tANY\t^((localhost|loopback)|(127\\.0\\.0\\.1))$\n"

int rb_start_upstream(server *s, const char *ldmd) {
  char conf[256];

  snprintf(conf, sizeof conf, "# %s: %s serves this host.\n" RB_ALLOW_HERE,
           rb_prog, s->name);
  return rb_server_start(s, ldmd, conf);
}

int rb_spawn_downstream(server *s, const server *up, const char *ldmd,
                        bool tls) {
  char conf[512];

  snprintf(conf, sizeof conf,
           "# %s: %s requests everything from %s.\n"
           "REQUEST\tANY\t\".*\"\t%s127.0.0.1:%u\n" RB_ALLOW_HERE,
           rb_prog, s->name, up->name, tls ? "{tls}" : "", up->port);
  return rb_server_spawn(s, ldmd, conf);
}

int rb_start_downstream(server *s, const server *up, const char *ldmd,
                        bool tls) {
  if (rb_spawn_downstream(s, up, ldmd, tls) != 0)
    return -1;
  return rb_server_wait_port(s, ldmd);
}

static void rb_on_stop(int sig) {
  (void)sig;
  rb_stop = 1;
}

int rb_run_begin(char *run, const char *base) {
  struct sigaction sa;

  if (strlen(base) + strlen(rb_prog) + 9 >= RB_RUN_MAX) {
    rb_warn("directory name too long: %s", base);
    return -1;
  }
  snprintf(run, RB_RUN_MAX, "%s/%s.XXXXXX", base, rb_prog);
  if (mkdtemp(run) == NULL) {
    rb_warn("cannot make a directory in %s: %s", base, strerror(errno));
    return -1;
  }
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = rb_on_stop;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  signal(SIGPIPE, SIG_IGN);
  return 0;
}

/* SIGTERM, up to 15 s, then SIGKILL. */
void rb_server_stop(server *s) {
  double end = tu_now_s() + 15;

  if (s->pid <= 0)
    return;
  kill(s->pid, SIGTERM);
  while (tu_now_s() < end) {
    if (waitpid(s->pid, NULL, WNOHANG) == s->pid) {
      s->pid = 0;
      return;
    }
    rb_sleep(0.01);
  }
  rb_warn("server %s (pid %d) did not stop on SIGTERM: killed", s->name,
          (int)s->pid);
  kill(s->pid, SIGKILL);
  waitpid(s->pid, NULL, 0);
  s->pid = 0;
}

/* Kill any process still running from the run directory (a connection
 * process of a server that did not stop its children). */
void rb_kill_leftovers(const char *run) {
  DIR *d = opendir("/proc");
  struct dirent *e;

  if (d == NULL)
    return;
  while ((e = readdir(d)) != NULL) {
    char path[64], buf[4096];
    ssize_t n, i;
    int fd;
    pid_t pid = (pid_t)atoi(e->d_name);

    if (pid <= 0 || pid == getpid())
      continue;
    snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      continue;
    n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
      continue;
    for (i = 0; i < n; i++)
      if (buf[i] == '\0')
        buf[i] = ' ';
    buf[n] = '\0';
    if (strstr(buf, run) != NULL) {
      rb_warn("process %d was left running: killed", (int)pid);
      kill(pid, SIGKILL);
    }
  }
  closedir(d);
}

void rb_remove_tree(const char *path) {
  DIR *d = opendir(path);

  if (d != NULL) {
    const struct dirent *e;

    while ((e = readdir(d)) != NULL) {
      char sub[PATH_MAX];
      struct stat st;

      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
        continue;
      snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
      if (lstat(sub, &st) == 0 && S_ISDIR(st.st_mode))
        rb_remove_tree(sub);
      else
        unlink(sub);
    }
    closedir(d);
  }
  rmdir(path);
}

/* The time (us since the epoch) of A's log line saying that its feeder
 * started a feed, or 0 if there is none (yet). */
uint64_t rb_feed_started_us(const server *a) {
  char *log = slurp(a->log), *line;
  uint64_t t = 0;

  if (log == NULL)
    return 0;
  for (line = log; line != NULL && *line != '\0';) {
    char *nl = strchr(line, '\n'), *feed, *start;

    if (nl != NULL)
      *nl = '\0'; /* before searching: this line only */
    feed = strstr(line, "(feed)");
    start = strstr(line, "Starting Up(");
    if (feed != NULL && start != NULL && start > feed) {
      struct tm tm;
      long usec;

      memset(&tm, 0, sizeof tm);
      if (sscanf(line, "%4d%2d%2dT%2d%2d%2d.%6ldZ", &tm.tm_year, &tm.tm_mon,
                 &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec,
                 &usec) == 7) {
        tm.tm_year -= 1900;
        tm.tm_mon -= 1;
        t = (uint64_t)timegm(&tm) * 1000000u + (uint64_t)usec;
        break;
      }
    }
    line = nl != NULL ? nl + 1 : NULL;
  }
  free(log);
  return t;
}

/* Wait (up to 10 s, or until rb_stop) for a feed to start at A. */
uint64_t rb_wait_feed(const server *a) {
  double end = tu_now_s() + 10;
  uint64_t t;

  while ((t = rb_feed_started_us(a)) == 0 && tu_now_s() < end && !rb_stop)
    rb_sleep(0.005);
  return t;
}

int rb_insert(pq_t *pq, uint64_t seed, uint32_t ft, uint32_t i, uint8_t *buf,
              uint64_t size, const char *what, uint64_t *arrival_us) {
  pq_prod_info info;
  int rc;

  iddmix_fill(seed, i, buf, size);
  memset(&info, 0, sizeof info);
  info.feedtype = ft;
  info.seqno = i;
  info.size = size;
  snprintf(info.origin, sizeof info.origin, "%s", rb_prog);
  snprintf(info.ident, sizeof info.ident, "%s %s %llu %06u", rb_prog, what,
           (unsigned long long)size, i);
  if (pq_md5(buf, size, info.signature) != 0)
    return PQ_SYSTEM;
  info.arrival = pq_ts_now();
  rc = pq_insert(pq, &info, buf);
  if (rc != PQ_OK)
    rb_warn("cannot insert into %s: %s", pq_path(pq), pq_strerror(rc));
  else if (arrival_us != NULL)
    *arrival_us = pq_ts_to_us(info.arrival);
  return rc;
}

int rb_insert_mix(pq_t *pq, uint64_t seed, const struct iddmix_prod *p,
                  uint8_t *buf, const char *origin, uint8_t *sig) {
  pq_prod_info info;

  iddmix_fill(seed, p->seqno, buf, p->size);
  memset(&info, 0, sizeof info);
  info.feedtype = p->feedtype;
  info.seqno = p->seqno;
  info.size = p->size;
  snprintf(info.ident, sizeof info.ident, "%s", p->ident);
  snprintf(info.origin, sizeof info.origin, "%s", origin);
  (void)pq_md5(buf, p->size, info.signature);
  if (sig != NULL)
    memcpy(sig, info.signature, sizeof info.signature);
  info.arrival = pq_ts_now(); /* created: complete, about to go in */
  return pq_insert(pq, &info, buf);
}

int rb_bad_value(int c, const char *value, const char *end) {
  if (end == NULL || (errno == 0 && end != value && *end == '\0'))
    return 0;
  fprintf(stderr, "%s: invalid -%c value \"%s\"\n", rb_prog, c, value);
  return -1;
}

void rb_print_machine(void) {
  struct utsname un;
  char date[64];
  time_t now = time(NULL);

  uname(&un);
  strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
  printf("%s; %ld CPUs; Linux %s", date, sysconf(_SC_NPROCESSORS_ONLN),
         un.release);
}

size_t rb_pct_index(size_t n, double p) {
  size_t i = (size_t)ceil(p / 100.0 * (double)n);

  if (i > 0)
    i--;
  if (i >= n)
    i = n - 1;
  return i;
}

int rb_finish(const char *run, bool keep, unsigned errors, double t0) {
  if (keep)
    printf("\nkept %s\n", run);
  else
    rb_remove_tree(run);
  printf("\n(%.0f s)\n", tu_now_s() - t0);
  if (errors > 0)
    rb_warn("%u figure%s could not be measured (see above)", errors,
            errors > 1 ? "s" : "");
  return errors > 0 || rb_stop ? 1 : 0;
}
