/*
 * fuzz_wmo.c - libFuzzer target for pqing's parsers (pqutils/wmo/): the
 * framing scanners, every framing with and without its check, fed the
 * input whole and in pieces whose sizes the input's first byte chooses,
 * with a small size limit so that the too-big path runs too; each message
 * found identified as pqing identifies it (WMO with and without PILs,
 * AFOS, FAA604), signed, and shown as the error lines show it.
 *
 * Properties checked: no crash, leak or sanitizer report; every event's
 * length within the limit; a message's bytes are the same whole and in
 * pieces (the framing does not depend on how the input was read, once
 * flushed at the same points); identifiers are NUL-terminated within the
 * queue's limit.
 *
 * Seeds: with FUZZ_SEEDS_DIR set, the target writes framed streams there
 * (text, binary with stuffing and check bytes, AFOS, FAA604, a GRIB
 * heading with its GRIB message) and exits.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pqutils/wmo/wmo_frame.h"
#include "pqutils/wmo/wmo_message.h"
#include "pqutils/wmo/wmo_sig.h"
#include "test/fuzz/fuzz_util.h"
#include "test/wmo/wmo_build.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define LIMIT 2048
#define MAXMSG 64

static void write_seed(const char *dir, const char *name, const struct wb *b) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  if (f == NULL || fwrite(b->p, 1, b->n, f) != b->n)
    abort();
  fclose(f);
}

static void write_seeds(const char *dir) {
  static const char text[] = "METAR KDEN 071153Z 00000KT 10SM CLR=";
  static const uint8_t bin[] = "x\r\r\n\003\001\r\r\ny\r\r\n\033z";
  struct wb s = {0}, m = {0}, g = {0};
  s.n = 0;
  wb_byte(&s, 7); /* piece size */
  wb_wmo(&s, 1, "SAUS70 KWBC 071200", "MTRDEN", text, strlen(text));
  wb_wmo(&s, 2, "SDUS54 KOUN 071200", NULL, text, strlen(text));
  write_seed(dir, "text.bin", &s);
  s.n = 0;
  wb_byte(&s, 3);
  wb_wmo(&m, 3, "HXUS70 KWBC 071200", NULL, bin, sizeof bin - 1);
  wb_stuff(&s, m.p, m.n);
  write_seed(dir, "binary.bin", &s);
  s.n = 1;
  wb_stuff_crc(&s, m.p, m.n, 0);
  wb_stuff_crc(&s, m.p, m.n, 1);
  write_seed(dir, "crc.bin", &s);
  s.n = 1;
  m.n = 0;
  wb_grib1(&g, 100, 7, 96);
  wb_wmo(&s, 4, "HTUS70 KWBC 071200", NULL, g.p, g.n);
  write_seed(dir, "grib.bin", &s);
  s.n = 1;
  wb_afos(&s, "MKCSWOMKC", "WOUS64 KWNS 071200\r\r\ntext\r\r\n");
  write_seed(dir, "afos.bin", &s);
  s.n = 1;
  wb_faa604(&s, 5, "12345", "071200", "\r\nSAUS70 KWBC 071200\r\ntext\r\n");
  write_seed(dir, "faa604.bin", &s);
  wb_free(&s);
  wb_free(&m);
  wb_free(&g);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  const char *dir = fuzz_seeds_dir();
  if (dir != NULL) {
    write_seeds(dir);
    exit(0);
  }
  return 0;
}

/* What one run saw: the messages, to compare the two ways of feeding. */
struct seen {
  enum wmo_framing framing;
  int n;
  size_t len[MAXMSG];
  uint64_t sum[MAXMSG];
};

static uint64_t sum(const uint8_t *p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++)
    h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

static void check_ident(const struct wmo_product *p) {
  if (strnlen(p->ident, sizeof p->ident) >= sizeof p->ident)
    abort();
}

static void on_event(void *arg, const struct wmo_event *ev) {
  struct seen *s = arg;
  if (ev->kind != WMO_EV_LOST && ev->len > LIMIT)
    abort();
  if (ev->data != NULL) {
    char why[200];
    wmo_err_ident(ev->data, ev->len, why, sizeof why);
    wmo_faa604_err_ident(ev->data, ev->len, why, sizeof why);
  }
  if (ev->kind != WMO_EV_MESSAGE && ev->kind != WMO_EV_NO_NNNN)
    return;
  if (s->n < MAXMSG) {
    s->len[s->n] = ev->len;
    s->sum[s->n] = sum(ev->data, ev->len);
  }
  s->n++;
  struct wmo_product p;
  switch (s->framing) {
  case WMO_FRAME_AFOS:
    if (wmo_parse_afos(ev->data, ev->len, (unsigned)s->n, &p, NULL) == 0)
      check_ident(&p);
    break;
  case WMO_FRAME_FAA604:
    if (wmo_parse_faa604(ev->data, ev->len, &p, NULL) == 0)
      check_ident(&p);
    break;
  default:
    for (int pil = 0; pil < 2; pil++)
      if (wmo_parse(ev->data, ev->len, pil, &p, NULL) == 0)
        check_ident(&p);
    break;
  }
  uint8_t sig[16];
  if (wmo_sig_skip(ev->data, ev->len, false) > ev->len ||
      wmo_signature(ev->data, ev->len, false, sig) != 0)
    abort();
}

static void run(enum wmo_framing f, bool check, const uint8_t *p, size_t n,
                size_t piece, struct seen *s) {
  struct wmo_scanner sc;
  memset(s, 0, sizeof *s);
  s->framing = f;
  if (wmo_scan_init(&sc, f, check, LIMIT, on_event, s) != 0)
    abort();
  for (size_t i = 0; i < n; i += piece)
    wmo_scan_feed(&sc, p + i, n - i < piece ? n - i : piece);
  (void)wmo_scan_reset(&sc);
  wmo_scan_free(&sc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1 || size > 1u << 16)
    return 0;
  size_t piece = (size_t)(data[0] % 13) + 1;
  const uint8_t *p = data + 1;
  size_t n = size - 1;
  static const enum wmo_framing fs[] = {WMO_FRAME_TEXT, WMO_FRAME_BINARY,
                                        WMO_FRAME_AFOS, WMO_FRAME_FAA604};
  for (size_t k = 0; k < 4; k++)
    for (int check = 0; check < 2; check++) {
      struct seen whole, pieces;
      run(fs[k], check, p, n, n > 0 ? n : 1, &whole);
      run(fs[k], check, p, n, piece, &pieces);
      if (whole.n != pieces.n)
        abort();
      for (int i = 0; i < whole.n && i < MAXMSG; i++)
        if (whole.len[i] != pieces.len[i] || whole.sum[i] != pieces.sum[i])
          abort();
    }
  return 0;
}
