/*
 * tls_io_bench.c - what TLS costs ldm6_io itself, without the queues and
 * the servers of relay_bench: a sender process writes records of one size
 * (a 64-byte head and the data, by pieces with ldm6_io_send_nowait(), as
 * ldmd's upstream sends a large product) over loopback TCP to a receiver
 * that streams each body into its memory (ldm6_io_recv_head(),
 * ldm6_io_recv_body(), as a requester stores a product), over plain TCP
 * and over TLS 1.3 in turn.  Both sides cycle through 256 MiB of their own
 * memory, so the data comes from and goes to memory, not the cache.
 *
 * For each run it prints the MB/s and the CPU (user and system) each side
 * used per GB moved; then, per link, the least CPU per GB of the runs.  On
 * a shared machine the CPU per GB is steadier than the MB/s (a process
 * that waits for the CPU is not charged for it), and the least of several
 * interleaved runs is the figure least disturbed by other work.  A
 * benchmark, not a test.  The key and self-signed certificate it uses are
 * made at the start in a temporary directory, removed at the end.
 *
 * usage: tls_io_bench [-s bytes] [-m MiB] [-n runs] [-l links]
 *   -s bytes  size of each record's data (default 1048576)
 *   -m MiB    data moved per run (default 1024)
 *   -n runs   runs of each link, interleaved (default 5)
 *   -l links  tcp, tls, comma-separated (default both)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "ldmd/proto/rpc_io.h"
#include "test/lib/tu_clock.h"

#define POOL ((size_t)256 << 20) /* memory each side cycles through */
#define HEAD 64                  /* bytes before the data, as a HEREIS's */
#define MAX_RUNS 50
#define WAIT_MS 30000

static char dir[64], cert[96], key[96];

static double cpu_s(void) {
  struct rusage r;

  getrusage(RUSAGE_SELF, &r);
  return (double)r.ru_utime.tv_sec + (double)r.ru_utime.tv_usec / 1e6 +
         (double)r.ru_stime.tv_sec + (double)r.ru_stime.tv_usec / 1e6;
}

static void die(const char *what) {
  fprintf(stderr, "tls_io_bench: %s\n", what);
  exit(1);
}

/* A P-256 key and a self-signed certificate naming 127.0.0.1. */
static void make_cert(void) {
  EVP_PKEY *k = EVP_EC_gen("P-256");
  X509 *x = X509_new();
  FILE *f;

  if (k == NULL || x == NULL)
    die("cannot make a key");
  ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
  X509_gmtime_adj(X509_getm_notBefore(x), -3600);
  X509_gmtime_adj(X509_getm_notAfter(x), 86400);
  X509_set_pubkey(x, k);
  X509_NAME_add_entry_by_txt(X509_get_subject_name(x), "CN", MBSTRING_ASC,
                             (const unsigned char *)"127.0.0.1", -1, -1, 0);
  X509_set_issuer_name(x, X509_get_subject_name(x));
  if (X509_sign(x, k, EVP_sha256()) <= 0)
    die("cannot sign the certificate");
  f = fopen(cert, "w");
  if (f == NULL || PEM_write_X509(f, x) != 1 || fclose(f) != 0)
    die("cannot write the certificate");
  f = fopen(key, "w");
  if (f == NULL || PEM_write_PrivateKey(f, k, NULL, NULL, 0, NULL, NULL) != 1 ||
      fclose(f) != 0)
    die("cannot write the key");
  X509_free(x);
  EVP_PKEY_free(k);
}

/* The context of each side, made once. */
static SSL_CTX *tls_ctx(bool server) {
  static SSL_CTX *made[2];
  char err[512];

  if (made[server] == NULL)
    made[server] = ldm6_tls_ctx_new(server, cert, key, cert, err, sizeof err);
  if (made[server] == NULL)
    die(err);
  return made[server];
}

static uint8_t *pool_new(void) {
  uint8_t *p = malloc(POOL);

  if (p == NULL)
    die("no memory for the data");
  memset(p, 7, POOL); /* every page mapped before the clock starts */
  return p;
}

/* The sender: count records of size bytes, then a NULLPROC call so that
 * its end is the receiver's.  Writes its CPU seconds to fd. */
static void sender(unsigned port, bool tls, size_t size, size_t count, int fd) {
  char err[256];
  ldm6_io *c = ldm6_io_connect("127.0.0.1", port, 5000, err, sizeof err);
  uint8_t head[HEAD] = {0}, *pool = pool_new();
  ldm6_io_msg m;
  uint32_t xid;
  double c0;
  size_t i;

  if (c == NULL)
    die(err);
  if (tls && ldm6_io_start_tls(c, tls_ctx(false), false, "127.0.0.1", 5000) !=
                 LDM6_IO_OK)
    die(ldm6_io_detail(c));
  c0 = cpu_s();
  for (i = 0; i < count; i++) {
    struct iovec iov[2] = {{head, HEAD},
                           {pool + (i * size) % (POOL - size), size}};
    ldm6_io_partial st = {0};
    int rc;

    while ((rc = ldm6_io_send_nowait(c, 6, 9, iov, 2, &st)) == LDM6_IO_AGAIN)
      if (ldm6_io_wait_writable(c, WAIT_MS) != LDM6_IO_OK)
        die("the receiver took nothing");
    if (rc != LDM6_IO_OK)
      die(ldm6_io_detail(c));
  }
  if (ldm6_io_send_call(c, 6, 0, NULL, 0, &xid) != LDM6_IO_OK ||
      ldm6_io_recv(c, WAIT_MS, &m) != LDM6_IO_OK)
    die("no answer to the last call");
  c0 = cpu_s() - c0;
  if (write(fd, &c0, sizeof c0) != (ssize_t)sizeof c0)
    die("cannot report the sender's CPU");
  ldm6_io_free(c);
  free(pool);
}

/* One run: MB/s, and each side's CPU seconds per GB. */
static void run(bool tls, size_t size, size_t count, double *mbs,
                double *cpu_send, double *cpu_recv) {
  struct sockaddr_in s4 = {.sin_family = AF_INET};
  socklen_t sl = sizeof s4;
  int lfd = socket(AF_INET, SOCK_STREAM, 0), cfd, p[2], st;
  uint8_t *pool = pool_new();
  double t0 = 0, c0 = 0, sent_cpu = 0, gb = (double)(size * count) / 1e9;
  size_t n = 0;
  ldm6_io *s;
  pid_t pid;

  inet_pton(AF_INET, "127.0.0.1", &s4.sin_addr);
  if (lfd < 0 || bind(lfd, (struct sockaddr *)&s4, sizeof s4) != 0 ||
      listen(lfd, 1) != 0 ||
      getsockname(lfd, (struct sockaddr *)&s4, &sl) != 0 || pipe(p) != 0)
    die(strerror(errno));
  pid = fork();
  if (pid < 0)
    die(strerror(errno));
  if (pid == 0) {
    close(p[0]);
    free(pool);
    sender(ntohs(s4.sin_port), tls, size, count, p[1]);
    _exit(0);
  }
  close(p[1]);
  cfd = accept(lfd, NULL, NULL);
  close(lfd);
  s = cfd >= 0 ? ldm6_io_new(cfd, size + (1u << 20)) : NULL;
  if (s == NULL)
    die("cannot accept the sender");
  if (tls) {
    uint8_t first;

    if (ldm6_io_peek(s, 5000, &first) != LDM6_IO_OK ||
        ldm6_io_start_tls(s, tls_ctx(true), true, NULL, 5000) != LDM6_IO_OK)
      die(ldm6_io_detail(s));
  }
  for (;;) {
    ldm6_io_msg m;
    bool more;
    int rc = ldm6_io_recv_head(s, WAIT_MS, 40 + HEAD, &m, &more);

    if (rc != LDM6_IO_OK)
      die(ldm6_io_detail(s));
    if (n == 0) {
      t0 = tu_now_s();
      c0 = cpu_s();
    }
    if (!more) { /* the last call */
      if (ldm6_io_reply(s, m.hdr.xid, NULL, 0) != LDM6_IO_OK)
        die(ldm6_io_detail(s));
      break;
    }
    if (ldm6_io_recv_body(s, pool + (n * size) % (POOL - size), size,
                          WAIT_MS) != LDM6_IO_OK ||
        ldm6_io_recv_end(s, WAIT_MS) != LDM6_IO_OK)
      die(ldm6_io_detail(s));
    n++;
  }
  *mbs = (double)(size * count) / (tu_now_s() - t0) / 1e6;
  *cpu_recv = (cpu_s() - c0) / gb;
  if (read(p[0], &sent_cpu, sizeof sent_cpu) != (ssize_t)sizeof sent_cpu ||
      waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
    die("the sender failed");
  *cpu_send = sent_cpu / gb;
  close(p[0]);
  ldm6_io_free(s);
  free(pool);
}

int main(int argc, char **argv) {
  size_t size = 1u << 20, mib = 1024;
  int runs = 5, c, i, l;
  bool links[2] = {true, true};
  double mbs[2][MAX_RUNS], snd[2][MAX_RUNS], rcv[2][MAX_RUNS];
  const char *name[2] = {"tcp", "tls"};

  while ((c = getopt(argc, argv, "s:m:n:l:")) != -1) {
    switch (c) {
    case 's':
      size = strtoul(optarg, NULL, 0);
      break;
    case 'm':
      mib = strtoul(optarg, NULL, 0);
      break;
    case 'n':
      runs = atoi(optarg);
      break;
    case 'l':
      links[0] = strstr(optarg, "tcp") != NULL;
      links[1] = strstr(optarg, "tls") != NULL;
      break;
    default:
      fprintf(stderr, "usage: tls_io_bench [-s bytes] [-m MiB] [-n runs] "
                      "[-l tcp,tls]\n");
      return 2;
    }
  }
  if (size == 0 || size > POOL / 2 || mib == 0 || runs < 1 || runs > MAX_RUNS ||
      (!links[0] && !links[1]))
    die("bad arguments (-s 1..128 MiB, -m > 0, -n 1..50, -l tcp,tls)");
  snprintf(dir, sizeof dir, "/tmp/tls_io_bench.XXXXXX");
  if (mkdtemp(dir) == NULL)
    die(strerror(errno));
  snprintf(cert, sizeof cert, "%s/cert.pem", dir);
  snprintf(key, sizeof key, "%s/key.pem", dir);
  make_cert();
  printf("tls_io_bench: %zu-byte records, %zu MiB a run, %d runs a link\n",
         size, mib, runs);
  printf("  run link      MB/s  sender cpu-s/GB  receiver cpu-s/GB\n");
  for (i = 0; i < runs; i++)
    for (l = 0; l < 2; l++) {
      if (!links[l])
        continue;
      run(l == 1, size, (mib << 20) / size, &mbs[l][i], &snd[l][i], &rcv[l][i]);
      printf("  %3d %-4s %9.0f  %15.3f  %17.3f\n", i + 1, name[l], mbs[l][i],
             snd[l][i], rcv[l][i]);
      fflush(stdout);
    }
  printf("least CPU per GB of the %d runs (best MB/s):\n", runs);
  for (l = 0; l < 2; l++) {
    double bs = snd[l][0], br = rcv[l][0], bm = mbs[l][0];

    if (!links[l])
      continue;
    for (i = 1; i < runs; i++) {
      bs = snd[l][i] < bs ? snd[l][i] : bs;
      br = rcv[l][i] < br ? rcv[l][i] : br;
      bm = mbs[l][i] > bm ? mbs[l][i] : bm;
    }
    printf("  %-4s sender %.3f, receiver %.3f cpu-s/GB (%.0f MB/s)\n", name[l],
           bs, br, bm);
  }
  unlink(cert);
  unlink(key);
  rmdir(dir);
  return 0;
}
