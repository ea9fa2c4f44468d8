/*
 * surf_heading.c - the WMO heading of a surface bulletin as LDM's pqsurf
 * reads it (surf_heading.h).
 */
#include "pqutils/surf/surf_heading.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void surf_time_set(struct surf_time *t, int mday, int hour, int min,
                   time_t now) {
  struct tm tm;

  gmtime_r(&now, &tm);
  t->mday = mday >= 1 && mday <= 31 ? mday : tm.tm_mday;
  if (hour >= 0 && hour <= 23) {
    t->hour = hour;
    t->min = 0;
  } else {
    t->hour = tm.tm_hour;
    t->min = tm.tm_min;
  }
  if (min >= 0 && min <= 59)
    t->min = min;
}

/*
 * The BBB group, from the rest of the heading's line: the first R, C, A or
 * P in it decides.  RRx, CCx, AAx keep their letter x; RTD, COR, AMD (and
 * the old style RTD01) take a letter from the number after them, A for
 * none or 0, and Y past 23.  Pxy is a segment: (x - A) * 26 + (y - A).
 */
static void read_bbb(struct surf_heading *h, const char *line) {
  const char *end = line + strlen(line);

  for (const char *cp = line; *cp != '\0' && cp + 2 < end; cp++) {
    switch (cp[0]) {
    case 'R':
      if (cp[1] == 'R') {
        h->bbb = SURF_RTD;
        h->bbb_seq = (unsigned char)cp[2];
      } else if (cp[1] == 'T') {
        h->bbb = SURF_RTD;
      }
      break;
    case 'C':
      if (cp[1] == 'C') {
        h->bbb = SURF_COR;
        h->bbb_seq = (unsigned char)cp[2];
      } else if (cp[1] == 'O') {
        h->bbb = SURF_COR;
      }
      break;
    case 'A':
      if (cp[1] == 'A') {
        h->bbb = SURF_AMD;
        h->bbb_seq = (unsigned char)cp[2];
      } else if (cp[1] == 'M') {
        h->bbb = SURF_AMD;
      }
      break;
    case 'P':
      h->bbb = SURF_PIE;
      h->bbb_seq = (cp[1] - 'A') * 26 + (cp[2] - 'A');
      return;
    default:
      continue;
    }
    if (h->bbb_seq == 0) {
      int n = atoi(cp + 3);

      h->bbb_seq = n >= 0 && n < 24 ? n + 'A' : 'Y';
    }
    return;
  }
}

/*
 * The PIL: the next line, if it has 4 to 10 bytes: 6 with its trailing
 * spaces, letters and digits, not all digits; or 10 beginning "^NMC" (the
 * PIL is what follows).  Nothing is read.
 */
static void read_pil(const struct surf_scan *s, struct surf_heading *h) {
  char pil[16];
  size_t n = 0;
  size_t len;
  size_t pad = 0;

  while (n < sizeof pil - 1 && s->p + n < s->end && s->p[n] != '\r' &&
         s->p[n] != '\n')
    n++;
  memcpy(pil, s->p, n);
  pil[n] = '\0';
  if (n <= 3 || n >= 11)
    return;
  while (n > 0 && pil[n - 1] == ' ') {
    pil[--n] = '\0';
    pad++;
  }
  len = strlen(pil); /* a NUL byte in the line ends it */
  if (len + pad == 6) {
    bool alnum = true;
    bool digits = true;

    for (size_t i = 0; i < len; i++) {
      unsigned char c = (unsigned char)pil[i];

      alnum = alnum && c < 128 && isalnum(c);
      digits = digits && isdigit(c);
    }
    if (alnum && !digits)
      snprintf(h->pil, sizeof h->pil, " /p%s", pil);
  } else if (len + pad == 10 && strncmp(pil, "^NMC", 4) == 0) {
    snprintf(h->pil, sizeof h->pil, " /p%s", pil + 4);
  }
}

int surf_heading_read(struct surf_scan *s, struct surf_heading *h, bool use_pil,
                      time_t now) {
  int yy, gg, mm;
  char line[16];

  memset(h, 0, sizeof *h);
  if (surf_scan_wstr(s, h->tt, 2) == SURF_EOB ||
      surf_scan_wstr(s, h->aa, 2) == SURF_EOB ||
      surf_scan_wnum(s, &h->ii, 2) == SURF_EOB)
    return -1;
  if (h->ii == -1)
    h->ii = 0;
  if (surf_scan_wstr(s, h->cccc, 4) == SURF_EOB ||
      surf_scan_wnum(s, &yy, 2) == SURF_EOB ||
      surf_scan_wnum(s, &gg, 2) == SURF_EOB ||
      surf_scan_wnum(s, &mm, 2) == SURF_EOB)
    return -1;
  surf_time_set(&h->time, yy, gg, mm, now);
  if (surf_scan_wline(s, line, sizeof line) == SURF_EOB)
    return -1;
  read_bbb(h, line);
  if (use_pil)
    read_pil(s, h);
  return 0;
}

const char *surf_heading_bbb(const struct surf_heading *h, char buf[4]) {
  int seq = h->bbb_seq;
  char two;

  if (h->bbb == SURF_ORIGINAL)
    return NULL;
  if (h->bbb == SURF_PIE) {
    if (seq < 0 || seq > 26 * 26 - 1)
      seq = 26 * 26 - 1;
    snprintf(buf, 4, "P%c%c", 'A' + seq / 26, 'A' + seq % 26);
    return buf;
  }
  if (seq < 'A' || seq > 'Z') {
    static const char *const word[] = {
        [SURF_RTD] = "RTD", [SURF_COR] = "COR", [SURF_AMD] = "AMD"};
    return word[h->bbb];
  }
  two = h->bbb == SURF_RTD ? 'R' : h->bbb == SURF_COR ? 'C' : 'A';
  snprintf(buf, 4, "%c%c%c", two, two, seq);
  return buf;
}

enum surf_type surf_heading_type(const struct surf_heading *h) {
  if (h->tt[0] != 'S' && h->tt[0] != 'F')
    return SURF_UNKNOWN;
  switch (h->tt[1]) {
  case 'I':
  case 'M':
  case 'N':
    /* Ships' reports: A1 W or V with A2 a sea area (table C2). */
    if ((h->aa[0] == 'W' || h->aa[0] == 'V') && h->aa[1] != '\0' &&
        strchr("ABCDEFJX", h->aa[1]) != NULL)
      return SURF_SHIP;
    return SURF_SYNOP;
  case 'A':
    return SURF_METAR; /* or SAO */
  case 'X':
    return h->aa[0] == 'U' && h->aa[1] == 'S' ? SURF_METAR : SURF_UNKNOWN;
  case 'P':
    return SURF_SPECI;
  default:
    return SURF_UNKNOWN;
  }
}

const char *surf_type_name(enum surf_type t) {
  switch (t) {
  case SURF_SYNOP:
    return "SYNOP";
  case SURF_SHIP:
    return "SHIP";
  case SURF_METAR:
    return "METAR";
  case SURF_SPECI:
    return "SPECI";
  default:
    return "MESSAGE_TYPE_UNKNOWN";
  }
}
