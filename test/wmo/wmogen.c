/*
 * wmogen - the streams pqing.sh feeds pqing, and what pqing must make of
 * them, from the tests' own message builder (wmo_build.h):
 *
 *   wmogen make CASE STREAM EXPECT
 *       write the stream of CASE to STREAM and its products to EXPECT, one
 *       line each: feedtype, sequence number, identifier, size, signature
 *       (tab-separated, as pqing.sh reads pqcat -L -x);
 *   wmogen serve PORTFILE STREAM...
 *       listen on 127.0.0.1 (a free port, written to PORTFILE once
 *       listening); the i-th connection gets the i-th STREAM and is then
 *       closed, but the last, which stays open until the peer closes it;
 *   wmogen many N SIZE STREAM
 *       N WMO messages of SIZE bytes of text each, every heading its own
 *       (for test/bench/pqing_bench.sh);
 *   wmogen huge SIZE STREAM
 *       one WMO message of SIZE bytes, then a small one;
 *   wmogen pty LINK STREAM
 *       open a pseudo-terminal, make LINK a symbolic link to its terminal
 *       end, wait for a line on standard input (the reader has set the
 *       terminal up), write STREAM to it, and keep it open until standard
 *       input ends.
 *
 * Cases: text (ids), binary (hds), crc (hds -c), afos, faa604, big (hds -s
 * 300), seq5 (two messages that differ in sequence number only, signed
 * whole: -5), tcp1 (two messages and the start of a third), tcp2 (two
 * more).  Not installed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <unistd.h>

#include "test/wmo/wmo_build.h"

static FILE *expect;

static void die(const char *what) {
  fprintf(stderr, "wmogen: %s: %s\n", what, strerror(errno));
  exit(2);
}

/* Expect a product of the bytes m[0, n): signed from byte skip on. */
static void want(const char *feed, unsigned seq, const char *ident,
                 const uint8_t *m, size_t n, size_t skip) {
  uint8_t sig[16];
  unsigned len = 0;
  if (EVP_Digest(m + skip, n - skip, sig, &len, EVP_md5(), NULL) != 1)
    die("MD5");
  fprintf(expect, "%s\t%03u\t%s\t%zu\t", feed, seq, ident, n);
  for (int i = 0; i < 16; i++)
    fprintf(expect, "%02x", sig[i]);
  fputc('\n', expect);
}

static const char text[] = "METAR KDEN 071153Z 00000KT 10SM CLR 01/M07=\r\r\n"
                           "METAR KBOU 071153Z 36005KT 10SM FEW100=";

/* A WMO message into the stream, wanted as a product unless feed is
 * NULL. */
static void wmo(struct wb *s, const char *feed, unsigned seq, const char *hdr,
                const char *pil, const void *body, size_t n, const char *id) {
  struct wb m = {0};
  wb_wmo(&m, seq, hdr, pil, body, n);
  wb_put(s, m.p, m.n);
  if (feed != NULL && id != NULL)
    want(feed, seq, id, m.p, m.n, WB_SIG_SKIP);
  wb_free(&m);
}

static void make_text(struct wb *s) {
  wb_str(s, "line noise before the first message\r\n");
  wmo(s, "IDS", 1, "SAUS70 KWBC 071200", "MTRDEN", text, strlen(text),
      "SAUS70 KWBC 071200 /pMTRDEN");
  wmo(s, "IDS", 2, "NOUS41 KWBC 071201 RRA", "PNSWSH", text, strlen(text),
      "NOUS41 KWBC 071201 RRA /pPNSWSH");
  wmo(s, NULL, 3, "12US70 KWBC 071200", NULL, text, strlen(text), NULL);
  wmo(s, "NEXRAD3", 4, "SDUS54 KOUN 071202", "N0RTLX", text, strlen(text),
      "SDUS54 KOUN 071202 /pN0RTLX");
  wb_str(s, "\001\r\r\n005\r\r\n\003");      /* too short */
  wb_str(s, "\001\r\r\n006\r\r\nSAUS70 KW"); /* cut by the next SOH */
  wmo(s, "IDS", 7, "SAUS70 KWBC 071207", NULL, text, strlen(text),
      "SAUS70 KWBC 071207");
  /* The first again, another sequence number: a duplicate. */
  wmo(s, NULL, 8, "SAUS70 KWBC 071200", "MTRDEN", text, strlen(text), NULL);
}

static void make_binary(struct wb *s) {
  struct wb g = {0}, m = {0};
  wb_grib1(&g, 200, 7, 96);
  wmo(s, "HDS", 11, "HTUS70 KWBC 071200", NULL, g.p, g.n,
      "HTUS70 KWBC 071200 /mGFS");
  /* An ETX inside the data that cannot end the message: unstuffed. */
  static const uint8_t etx[] =
      "bin data\r\r\n\003xyz\001\002\003 more\r\r\nend";
  wmo(s, "HDS", 12, "HXUS70 KWBC 071200", NULL, etx, sizeof etx - 1,
      "HXUS70 KWBC 071200");
  /* One that could (SOH CR CR LF after it), and an ESC: stuffed. */
  static const uint8_t stf[] =
      "data\r\r\n\003\001\r\r\nmid\r\r\n\033esc\r\r\n\003\r\r\n\003x";
  wb_wmo(&m, 13, "SXUS70 KWBC 071200", NULL, stf, sizeof stf - 1);
  wb_stuff(s, m.p, m.n);
  want("HDS", 13, "SXUS70 KWBC 071200", m.p, m.n, WB_SIG_SKIP);
  wb_free(&m);
  wmo(s, "HDS", 14, "SAUS70 KWBC 071214", "MTRDEN", text, strlen(text),
      "SAUS70 KWBC 071214 /pMTRDEN");
  wb_free(&g);
}

static void make_crc(struct wb *s) {
  const char *hdr[] = {"SAUS70 KWBC 071221", "SAUS70 KWBC 071222",
                       "SAUS70 KWBC 071223"};
  static const uint8_t bin[] = "bin\r\r\n\003\033\r\r\n\003 tail";
  for (unsigned i = 0; i < 3; i++) {
    struct wb m = {0};
    if (i == 0)
      wb_wmo(&m, 21 + i, hdr[i], NULL, bin, sizeof bin - 1);
    else
      wb_wmo(&m, 21 + i, hdr[i], NULL, text, strlen(text));
    wb_stuff_crc(s, m.p, m.n, i == 1);
    if (i != 1)
      want("HDS", 21 + i, hdr[i], m.p, m.n, WB_SIG_SKIP);
    wb_free(&m);
  }
}

static void make_afos(struct wb *s) {
  struct wb m = {0};
  wb_afos(&m, "MKCSWOMKC", "WOUS64 KWNS 071200\r\r\nsevere weather\r\r\n");
  wb_put(s, m.p, m.n);
  want("GPSSRC", 1, "MKCSWOMKC   (WOUS64 KWNS 071200)", m.p, m.n, 0);
  wb_free(&m);
  wb_str(s, "\r\nZCZCABCDEF lost its end\r\r\n");
  wb_afos(&m, "DENZFPBOU", "zone forecast text\r\r\n");
  wb_put(s, m.p, m.n);
  want("GPSSRC", 3, "DENZFPBOU", m.p, m.n, 0);
  wb_free(&m);
}

static void make_faa604(struct wb *s) {
  struct wb m = {0};
  wb_faa604(&m, 31, "12345", "071200",
            "\r\nSAUS70 KWBC 071200\r\nsome text here\r\n");
  wb_put(s, m.p, m.n);
  want("FAA604", 31, "12345 071200 (SAUS70 KWBC 071200)", m.p, m.n, 0);
  wb_free(&m);
  wb_faa604(&m, 32, "54321", "071230", "\r\nplain text, no heading\r\n");
  wb_put(s, m.p, m.n);
  want("FAA604", 32, "54321 071230", m.p, m.n, 0);
  wb_free(&m);
}

static void make_big(struct wb *s) {
  char big[1000];
  memset(big, 'x', sizeof big);
  wmo(s, "HDS", 41, "SAUS70 KWBC 071241", NULL, text, strlen(text),
      "SAUS70 KWBC 071241");
  wmo(s, NULL, 42, "SAUS70 KWBC 071242", NULL, big, sizeof big, NULL);
  wmo(s, "HDS", 43, "SAUS70 KWBC 071243", NULL, text, strlen(text),
      "SAUS70 KWBC 071243");
}

static void make_seq5(struct wb *s) {
  for (unsigned seq = 51; seq <= 52; seq++) {
    struct wb m = {0};
    wb_wmo(&m, seq, "SAUS70 KWBC 071250", NULL, text, strlen(text));
    wb_put(s, m.p, m.n);
    want("HDS", seq, "SAUS70 KWBC 071250", m.p, m.n, 0);
    wb_free(&m);
  }
}

static void make_tcp(struct wb *s, int part) {
  unsigned base = part == 1 ? 61 : 71;
  for (unsigned i = 0; i < 2; i++) {
    char hdr[32];
    snprintf(hdr, sizeof hdr, "SAUS70 KWBC 0712%02u", base + i - 60);
    wmo(s, "HDS", base + i, hdr, NULL, text, strlen(text), hdr);
  }
  if (part == 1) { /* the start of a third: lost with the connection */
    struct wb m = {0};
    wb_wmo(&m, 63, "SAUS70 KWBC 071299", NULL, text, strlen(text));
    wb_put(s, m.p, 40);
    wb_free(&m);
  }
}

static int make(const char *kase, const char *stream, const char *exp) {
  struct wb s = {0};
  expect = fopen(exp, "w");
  if (expect == NULL)
    die(exp);
  if (strcmp(kase, "text") == 0)
    make_text(&s);
  else if (strcmp(kase, "binary") == 0)
    make_binary(&s);
  else if (strcmp(kase, "crc") == 0)
    make_crc(&s);
  else if (strcmp(kase, "afos") == 0)
    make_afos(&s);
  else if (strcmp(kase, "faa604") == 0)
    make_faa604(&s);
  else if (strcmp(kase, "big") == 0)
    make_big(&s);
  else if (strcmp(kase, "seq5") == 0)
    make_seq5(&s);
  else if (strcmp(kase, "tcp1") == 0 || strcmp(kase, "tcp2") == 0)
    make_tcp(&s, kase[3] - '0');
  else {
    fprintf(stderr, "wmogen: no case %s\n", kase);
    return 2;
  }
  FILE *f = fopen(stream, "wb");
  if (f == NULL || fwrite(s.p, 1, s.n, f) != s.n || fclose(f) != 0)
    die(stream);
  if (fclose(expect) != 0)
    die(exp);
  wb_free(&s);
  return 0;
}

static int serve(const char *portfile, int n, char **files) {
  signal(SIGPIPE, SIG_IGN);
  int ls = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET,
                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof a;
  if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof a) != 0 ||
      listen(ls, 4) != 0 || getsockname(ls, (struct sockaddr *)&a, &len) != 0)
    die("listen");
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.tmp", portfile);
  FILE *pf = fopen(tmp, "w");
  if (pf == NULL || fprintf(pf, "%u\n", ntohs(a.sin_port)) < 0 ||
      fclose(pf) != 0 || rename(tmp, portfile) != 0)
    die(portfile);
  for (int i = 0; i < n; i++) {
    int c = accept(ls, NULL, NULL);
    if (c < 0)
      die("accept");
    FILE *f = fopen(files[i], "rb");
    if (f == NULL)
      die(files[i]);
    char buf[4096];
    size_t k;
    while ((k = fread(buf, 1, sizeof buf, f)) > 0)
      if (write(c, buf, k) != (ssize_t)k)
        die("write");
    fclose(f);
    fprintf(stderr, "wmogen: sent %s on connection %d\n", files[i], i + 1);
    if (i + 1 < n) {
      close(c);
      continue;
    }
    /* The last: open until the peer closes it. */
    while (read(c, buf, sizeof buf) > 0)
      ;
    close(c);
  }
  close(ls);
  return 0;
}

static int pty(const char *link, const char *stream) {
  int m = posix_openpt(O_RDWR | O_NOCTTY);
  if (m < 0 || grantpt(m) != 0 || unlockpt(m) != 0)
    die("posix_openpt");
  /* Where the pseudo-terminals' file system does not show it (some
   * containers), the link leads nowhere: the test then skips this part. */
  const char *slave = ptsname(m);
  if (slave == NULL || symlink(slave, link) != 0)
    die("symlink");
  char buf[4096];
  if (read(STDIN_FILENO, buf, sizeof buf) <= 0) /* the go-ahead */
    die("read the go-ahead");
  FILE *f = fopen(stream, "rb");
  if (f == NULL)
    die(stream);
  size_t k;
  while ((k = fread(buf, 1, sizeof buf, f)) > 0)
    if (write(m, buf, k) != (ssize_t)k)
      die("write to the pseudo-terminal");
  fclose(f);
  fprintf(stderr, "wmogen: wrote %s to %s\n", stream, slave);
  while (read(STDIN_FILENO, buf, sizeof buf) > 0)
    ;
  close(m);
  return 0;
}

/* many and huge: streams for the benchmark, written as they are made. */
static int bulk(const char *what, unsigned long n, unsigned long size,
                const char *stream) {
  FILE *f = fopen(stream, "wb");
  if (f == NULL || size < 1 || size > (1ul << 30))
    die(stream);
  char *body = malloc(size);
  if (body == NULL)
    die("malloc");
  for (unsigned long i = 0; i < size; i++)
    body[i] = (i % 70 == 69) ? '\n' : (char)('A' + i % 26);
  for (unsigned long i = 0; i < n; i++) {
    struct wb m = {0};
    char hdr[40];
    snprintf(hdr, sizeof hdr, "SAUS%02lu K%03lu %06lu", i % 100,
             (i / 100) % 1000, i % 1000000);
    /* huge: the first message big, the second small */
    bool full = strcmp(what, "many") == 0 || i == 0;
    wb_wmo(&m, (unsigned)(i % 1000), hdr, NULL, body, full ? size : 40);
    if (fwrite(m.p, 1, m.n, f) != m.n)
      die(stream);
    wb_free(&m);
  }
  free(body);
  if (fclose(f) != 0)
    die(stream);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 5 && strcmp(argv[1], "many") == 0)
    return bulk("many", strtoul(argv[2], NULL, 10), strtoul(argv[3], NULL, 10),
                argv[4]);
  if (argc == 4 && strcmp(argv[1], "huge") == 0)
    return bulk("huge", 2, strtoul(argv[2], NULL, 10), argv[3]);
  if (argc == 4 && strcmp(argv[1], "pty") == 0)
    return pty(argv[2], argv[3]);
  if (argc == 5 && strcmp(argv[1], "make") == 0)
    return make(argv[2], argv[3], argv[4]);
  if (argc >= 4 && strcmp(argv[1], "serve") == 0)
    return serve(argv[2], argc - 3, argv + 3);
  fprintf(stderr, "usage: wmogen make CASE STREAM EXPECT\n"
                  "       wmogen serve PORTFILE STREAM...\n"
                  "       wmogen many N SIZE STREAM\n"
                  "       wmogen huge SIZE STREAM\n"
                  "       wmogen pty LINK STREAM\n");
  return 2;
}
