/*
 * surf_scan.c - the token reader of pqsurf's bulletin parser (surf_scan.h):
 * LDM's ways of reading words, numbers, lines and observations, each
 * bounded by the scan's end.
 */
#include "pqutils/surf/surf_scan.h"

#include <ctype.h>
#include <string.h>

void surf_scan_init(struct surf_scan *s, void *data, size_t len) {
  unsigned char *b = data;

  s->origin = b;
  s->limit = b + len;
  s->base = b;
  s->end = b + len;
  s->p = b;
}

int surf_scan_nextc(struct surf_scan *s) {
  return s->p < s->end ? *s->p++ : SURF_EOB;
}

void surf_scan_unnextc(struct surf_scan *s, int ch) {
  if (s->p > s->base)
    *--s->p = (unsigned char)ch;
}

int surf_scan_peek(const struct surf_scan *s, size_t off) {
  return (size_t)(s->limit - s->p) > off ? s->p[off] : SURF_EOB;
}

bool surf_scan_isspace(int ch) {
  return ch >= 0 && ch < 128 && isspace(ch);
}

/* Printable ASCII other than space: what a word is made of. */
static bool is_graph(int ch) {
  return ch >= 0 && ch < 128 && isgraph(ch);
}

static bool is_digit(int ch) {
  return ch >= '0' && ch <= '9';
}

/* Skip bytes that are ASCII and not printable (LDM's get_wstr). */
static void skip_unprintable(struct surf_scan *s) {
  int ch;

  do
    ch = surf_scan_nextc(s);
  while (ch >= 0 && ch < 128 && !isgraph(ch));
  surf_scan_unnextc(s, ch);
}

static void skip_space(struct surf_scan *s) {
  int ch;

  do
    ch = surf_scan_nextc(s);
  while (surf_scan_isspace(ch));
  surf_scan_unnextc(s, ch);
}

int surf_scan_skipline(struct surf_scan *s, int maxskip) {
  int ch = 0;

  while (maxskip-- > 0) {
    ch = surf_scan_nextc(s);
    if (ch == '\n' || ch == SURF_EOB)
      break;
  }
  return ch;
}

int surf_scan_str(struct surf_scan *s, char *str, int maxlen) {
  int ch = 0;

  for (int len = 0; len < maxlen; len++) {
    ch = surf_scan_nextc(s);
    if (!is_graph(ch)) {
      surf_scan_unnextc(s, ch);
      break;
    }
    *str++ = (char)ch;
  }
  *str = '\0';
  return ch;
}

int surf_scan_wstr(struct surf_scan *s, char *str, int maxlen) {
  skip_unprintable(s);
  return surf_scan_str(s, str, maxlen);
}

/* The digits of a number; with solidus, '/' as LDM's dget_num takes it. */
static int scan_number(struct surf_scan *s, int *num, int maxlen,
                       bool solidus) {
  int ch = 0;
  int len;
  int accum = 0;

  for (len = 0; len < maxlen; len++) {
    ch = surf_scan_nextc(s);
    if (solidus && ch == '/') {
      accum = -1;
      continue;
    }
    if (!is_digit(ch)) {
      surf_scan_unnextc(s, ch);
      break;
    }
    /* LDM's arithmetic, solidus included: "/1" is -10 + 1. */
    accum = accum * 10 + (ch - '0');
  }
  *num = len ? accum : -1;
  return ch;
}

int surf_scan_num(struct surf_scan *s, int *num, int maxlen) {
  return scan_number(s, num, maxlen, false);
}

int surf_scan_wnum(struct surf_scan *s, int *num, int maxlen) {
  skip_space(s);
  return scan_number(s, num, maxlen, false);
}

int surf_scan_dnum(struct surf_scan *s, int *num, int maxlen) {
  return scan_number(s, num, maxlen, true);
}

int surf_scan_dwnum(struct surf_scan *s, int *num, int maxlen) {
  skip_space(s);
  return scan_number(s, num, maxlen, true);
}

int surf_scan_wline(struct surf_scan *s, char *str, size_t cap) {
  int ch;
  size_t n = 0;

  do
    ch = surf_scan_nextc(s);
  while (ch == ' ' || ch == '\t');
  surf_scan_unnextc(s, ch);
  if (cap == 0)
    return ch;
  for (size_t len = 0; len + 1 < cap; len++) {
    ch = surf_scan_nextc(s);
    if (ch == '\r')
      continue;
    if (ch == '\n' || ch == SURF_EOB || !(ch < 128 && isalnum(ch)))
      break;
    str[n++] = (char)ch;
  }
  str[n] = '\0';
  return ch;
}

bool surf_scan_has(struct surf_scan *s, const char *str) {
  size_t n = strnlen(str, 16);

  if (surf_scan_left(s) < n || memcmp(s->p, str, n) != 0)
    return false;
  s->p += n;
  return true;
}

bool surf_scan_whas(struct surf_scan *s, const char *str) {
  skip_space(s);
  return surf_scan_has(s, str);
}

int surf_scan_next_ob(struct surf_scan *s, struct surf_scan *ob) {
  int ch;
  size_t size;

  if (surf_scan_left(s) == 0)
    return SURF_EOB;
  skip_space(s);
  if (surf_scan_left(s) < 5)
    return SURF_EOB;
  ob->origin = s->origin;
  ob->limit = s->limit;
  ob->base = s->p;
  do
    ch = surf_scan_nextc(s);
  while (ch != '=' && ch != SURF_RECORD_SEP && ch != SURF_EOB);
  size = (size_t)(s->p - ob->base);
  if (size < 5)
    return SURF_EOB;
  while (size > 0 &&
         (surf_scan_isspace(ob->base[size - 1]) || ob->base[size - 1] == '='))
    size--;
  ob->end = ob->base + size;
  ob->p = ob->base;
  return ch > 0 ? ch : 3; /* the end of the bulletin: LDM's ETX */
}
