/*
 * surf_split.c - a surface bulletin into single observations, LDM's
 * identifiers, bodies, sequence numbers and signatures (surf_split.h;
 * the rules, with LDM's quirks kept on purpose, are in
 * pqutils/surf/pqsurf.1, "SPLITTING").
 *
 * A bulletin is read as LDM reads it: its first line (start of heading)
 * and second (sequence number) are skipped, the heading is read
 * (surf_heading.c), then "section 0", the line that says what the reports
 * are (AAXX YYGGi, BBXX, METAR, SPECI), then the reports one by one up to
 * each '=' (surf_scan.c).
 */
#include "pqutils/surf/surf_split.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ldmd/site/log.h"
#include "pqutils/surf/surf_heading.h"
#include "pqutils/surf/surf_scan.h"

/* The longest station, call sign or tag word read (LDM's CALL_SIGN_LEN). */
#define SURF_CALL_SIGN_LEN 7
/* The wind-speed unit indicator iw (WMO code table 1855) of the AAXX line
 * pqsurf writes: the bulletin's 0-4, knots (4) for US reports without
 * section 0, and LDM's -1 when it was missing. */
#define SURF_WIND_KNOTS 4
#define SURF_WIND_UNAVAIL (-1)

enum subtype { BOGUS, AAXX, US_AAXX, BBXX, SAO, S_METAR, S_SPECI };

/* What one bulletin's reports share. */
struct bulletin {
  struct surf_heading h;
  struct surf_time time; /* the reports' time: the heading's, or later */
  int wind;
  enum subtype sub;
  time_t now;
};

/* Does the bulletin's start (its first 48 bytes, to a NUL) name a METAR,
 * SPECI, MTR or BOYC line?  Then LDM looks for a PIL after the heading. */
static bool wants_pil(const void *data, size_t len) {
  static const char *const marks[] = {"METAR\r",  "SPECI\r",  "MTR",
                                      "METAR \r", "SPECI \r", "BOYC"};
  char head[49];
  size_t n = len < 48 ? len : 48;

  memcpy(head, data, n);
  head[n] = '\0';
  for (size_t i = 0; i < sizeof marks / sizeof marks[0]; i++)
    if (strstr(head, marks[i]) != NULL)
      return true;
  return false;
}

/* YYGG: a day and an hour, solidus taken, into t with minute 0. */
static int read_yygg(struct surf_scan *s, struct surf_time *t, time_t now) {
  int yy = -1;
  int gg = -1;
  int ch;

  if ((ch = surf_scan_dwnum(s, &yy, 2)) < 0)
    return ch;
  if ((ch = surf_scan_dnum(s, &gg, 2)) < 0)
    return ch;
  surf_time_set(t, yy, gg, 0, now);
  return ch;
}

/* Does a report time (HHMM, DDHHMM, ...Z) follow?  LDM's test: after the
 * unprintable bytes, at least 4 bytes left, and a Z at the fifth or
 * seventh byte or four digits. */
static bool has_time(struct surf_scan *s) {
  int ch;

  do
    ch = surf_scan_nextc(s);
  while (ch >= 0 && ch < 128 && !isgraph(ch));
  surf_scan_unnextc(s, ch);
  if (surf_scan_left(s) < 4)
    return false;
  if (surf_scan_peek(s, 4) == 'Z' || surf_scan_peek(s, 6) == 'Z')
    return true;
  for (size_t i = 0; i < 4; i++)
    if (!isdigit(surf_scan_peek(s, i)))
      return false;
  return true;
}

/* A METAR or SPECI line's time, if any, becomes the reports' time; LDM
 * reads its first four digits as day and hour. */
static void read_line_time(struct surf_scan *s, struct bulletin *b) {
  if (!has_time(s))
    return;
  (void)read_yygg(s, &b->time, b->now);
  (void)surf_scan_nextc(s); /* the Z */
}

/* Does the report end in "NIL"? */
static bool is_nil(const struct surf_scan *ob) {
  const unsigned char *np = ob->end - 3;

  return np >= ob->origin && memcmp(np, "NIL", 3) == 0;
}

/*
 * Section 0: what kind of reports follow, and the time and wind unit
 * SYNOP's AAXX line gives.  0 to go on, 1 for a bulletin with nothing to
 * split, -1 for one that is not a surface bulletin pqsurf knows.
 */
static int read_section0(struct surf_scan *s, struct bulletin *b) {
  char cbuf[8] = "";
  int digit;

  switch (surf_heading_type(&b->h)) {
  case SURF_SYNOP:
    if (surf_scan_wstr(s, cbuf, 1) < 0)
      return -1;
    if (cbuf[0] == 'A') {
      b->sub = AAXX;
      if (surf_scan_str(s, &cbuf[1], 3) < 0)
        return -1;
      if (cbuf[3] != 'X') {
        log_error("surface_split: Unknown SYNOP type: %s", cbuf);
        return 1;
      }
      if (read_yygg(s, &b->time, b->now) < 0)
        return -1;
      if (surf_scan_dnum(s, &digit, 1) < 0)
        return -1;
      if (digit >= 0 && digit <= 4)
        b->wind = digit;
    } else if (isdigit((unsigned char)cbuf[0])) {
      /* US reports without "AAXX YYGGi": the heading's time, knots */
      surf_scan_unnextc(s, cbuf[0]);
      b->sub = US_AAXX;
      b->wind = SURF_WIND_KNOTS;
    } else {
      return 1;
    }
    return 0;
  case SURF_SHIP:
    if (b->h.pil[0] != '\0' && surf_scan_whas(s, "BOYC"))
      (void)surf_scan_skipline(s, 4);
    if (surf_scan_wstr(s, cbuf, 4) < 0)
      return -1;
    if (cbuf[0] != 'B')
      return 1;
    if (cbuf[3] != 'X') {
      log_error("surface_split: Unknown SHIP type: %s", cbuf);
      return 1;
    }
    b->sub = BBXX;
    return 0;
  case SURF_METAR:
    /* A PIL makes them METARs, whatever it is (LDM's test of it cannot
     * fail); else the METAR or SPECI line; else SAO, or METARs without
     * their line, told apart report by report. */
    if (b->h.pil[0] != '\0') {
      b->sub = S_METAR;
    } else if (surf_scan_whas(s, "METAR")) {
      b->sub = S_METAR;
      read_line_time(s, b);
    } else if (surf_scan_whas(s, "SPECI")) {
      b->sub = S_SPECI;
      read_line_time(s, b);
    } else {
      b->sub = SAO;
    }
    return 0;
  case SURF_SPECI:
    if (surf_scan_whas(s, "SPECI")) {
      b->sub = S_SPECI;
      read_line_time(s, b);
    }
    return 0; /* without the line, no report is taken (BOGUS) */
  default:
    log_error("surface_split: Can't handle %s",
              surf_type_name(surf_heading_type(&b->h)));
    log_error("HDR + PIL: %s%s %s", b->h.tt, b->h.aa, b->h.pil);
    return -1;
  }
}

/* One report being made into an observation. */
struct obs {
  char key[PQ_IDENT_MAX + 1];
  char ident[SURF_CALL_SIGN_LEN + 1];
  char head[64];             /* the body's first line(s), before the report */
  const unsigned char *from; /* the report's bytes the body takes */
};

/* METAR and SPECI reports: the station, after a METAR or SPECI tag if the
 * report has one (which then names the type); the time inserted when the
 * report lacks one.  false to skip the report. */
static bool metar_report(struct surf_scan *ob, struct bulletin *b,
                         struct obs *o, bool speci) {
  const char *stype = speci ? "SPECI" : "METAR";

  if (surf_scan_wstr(ob, o->ident, SURF_CALL_SIGN_LEN) < 0)
    return false;
  if (strcmp(o->ident, "METAR") == 0 || strcmp(o->ident, "SPECI") == 0) {
    stype = strcmp(o->ident, "METAR") == 0 ? "METAR" : "SPECI";
    o->from = ob->p + 1;
    if (surf_scan_wstr(ob, o->ident, SURF_CALL_SIGN_LEN) < 0)
      return false;
  }
  if (!has_time(ob)) {
    snprintf(o->head, sizeof o->head, "%s\r\r\n%s %02d%02dZ ", stype, o->ident,
             b->time.hour, b->time.min);
    o->from = ob->p;
  } else {
    snprintf(o->head, sizeof o->head, "%s\r\r\n", stype);
  }
  snprintf(o->key, sizeof o->key, "%s %s",
           strcmp(stype, "METAR") == 0 ? "metar" : "speci", o->ident);
  return true;
}

/* An SAO report: station (after a US 6-character AFOS code), then its
 * type; a report whose "type" is digits is a METAR without its line. */
static bool sao_report(struct surf_scan *ob, struct bulletin *b,
                       struct obs *o) {
  char type[4];

  if (surf_scan_wstr(ob, o->ident, SURF_CALL_SIGN_LEN) < 0)
    return false;
  if (b->h.aa[0] == 'U' && b->h.aa[1] == 'S' && strlen(o->ident) == 6 &&
      surf_scan_wstr(ob, o->ident, SURF_CALL_SIGN_LEN) < 0)
    return false;
  if (surf_scan_wstr(ob, type, 3) < 0)
    return false;
  if ((type[0] == 'S' && (type[1] == 'A' || type[1] == 'P')) ||
      (type[0] == 'R' && type[1] == 'S') ||
      (type[0] == 'U' && type[1] == 'S' && type[2] == 'P') ||
      (type[0] == 'X' && type[1] == 'P') ||
      (type[0] == 'T' && (type[1] == 'A' || type[1] == 'S'))) {
    snprintf(o->key, sizeof o->key, "sao %s %s", type, o->ident);
    return true;
  }
  if (isdigit((unsigned char)type[0]) && isdigit((unsigned char)type[1])) {
    b->sub = S_METAR; /* and so are the reports after it, as LDM has it */
    snprintf(o->key, sizeof o->key, "metar %s", o->ident);
    snprintf(o->head, sizeof o->head, "METAR\r\r\n");
    return true;
  }
  return false; /* "NIL" and the like */
}

/* Read the report's station and make its key's first words and the
 * body's first line.  false to skip the report. */
static bool read_report(struct surf_scan *ob, struct bulletin *b,
                        struct obs *o) {
  switch (b->sub) {
  case AAXX:
  case US_AAXX:
    snprintf(o->head, sizeof o->head, "AAXX %02d%02d%1d\r\r\n", b->time.mday,
             b->time.hour, b->wind);
    if (surf_scan_wstr(ob, o->ident, 5) < 0)
      return false;
    snprintf(o->key, sizeof o->key, "aaxx %s", o->ident);
    return true;
  case BBXX:
    snprintf(o->head, sizeof o->head, "BBXX\r\r\n");
    if (surf_scan_wstr(ob, o->ident, SURF_CALL_SIGN_LEN) < 0)
      return false;
    snprintf(o->key, sizeof o->key, "bbxx %s", o->ident);
    /* the ship's YYGG is the time of this report and of those after it */
    return read_yygg(ob, &b->time, b->now) >= 0;
  case S_SPECI:
    return metar_report(ob, b, o, true);
  case S_METAR:
    if (is_nil(ob))
      return false;
    return metar_report(ob, b, o, false);
  case SAO:
    return sao_report(ob, b, o);
  default:
    return false;
  }
}

/* surf_split() on the copy it made. */
static int split_copy(const pq_prod_info *bulletin, const void *data,
                      unsigned char *copy, time_t now, surf_obs_fn *fn,
                      void *arg) {
  struct surf_scan s;
  struct surf_scan ob;
  struct bulletin b = {.wind = SURF_WIND_UNAVAIL, .sub = BOGUS, .now = now};
  uint32_t subseq = bulletin->seqno * 1000u; /* LDM's u_int arithmetic */
  int nsplit = 0;
  int rc;

  surf_scan_init(&s, copy, bulletin->size);
  (void)surf_scan_skipline(&s, 4);  /* SOH CR CR LF */
  (void)surf_scan_skipline(&s, 12); /* the sequence number's line */
  if (surf_heading_read(&s, &b.h, wants_pil(data, bulletin->size), now) != 0) {
    log_error("get_wmo_header: hdr: %s%s%02d %s", b.h.tt, b.h.aa, b.h.ii,
              b.h.cccc);
    return -1;
  }
  b.time = b.h.time;
  rc = read_section0(&s, &b);
  if (rc != 0)
    return rc < 0 ? -1 : 0;

  while (surf_scan_next_ob(&s, &ob) > 0) {
    struct obs o = {.from = ob.base};
    pq_prod_info info;
    unsigned char body[SURF_OBS_MAX + 1];
    char bbb[4];
    const char *bbbtext;
    size_t l1, l2, ncopy, used;
    ptrdiff_t rest;

    if (!read_report(&ob, &b, &o) || o.ident[0] == '\0')
      continue;
    used = strlen(o.key);
    used += (size_t)snprintf(o.key + used, sizeof o.key - used, " %02d%02d%02d",
                             b.time.mday, b.time.hour, b.time.min);
    bbbtext = surf_heading_bbb(&b.h, bbb);
    if (bbbtext != NULL && used < sizeof o.key)
      snprintf(o.key + used, sizeof o.key - used, " %s", bbbtext);

    /* The body: the head line, the report (cut to fit), "=\r\r\n"; a NUL
     * in the report ends what is copied, and the size stays what it would
     * have been, zero-filled, as LDM's string copy leaves it. */
    memset(body, 0, sizeof body);
    l1 = strlen(o.head);
    rest = ob.end - o.from;
    l2 = SURF_OBS_MAX - l1 - 4;
    if (rest < 0)
      rest = 0;
    if ((size_t)rest < l2)
      l2 = (size_t)rest;
    memcpy(body, o.head, l1);
    ncopy = strnlen((const char *)o.from, l2);
    memcpy(body + l1, o.from, ncopy);
    memcpy(body + l1 + ncopy, "=\r\r\n", 4);

    info = *bulletin;
    snprintf(info.ident, sizeof info.ident, "%s", o.key);
    info.seqno = ++subseq;
    info.size = l1 + l2 + 4;
    if (pq_md5(body, (size_t)info.size, info.signature) != 0) {
      log_error("surf_split(): MD5 failed");
      return -1;
    }
    if (fn(&info, body, arg) == 0)
      nsplit++;
  }
  return nsplit;
}

int surf_split(const pq_prod_info *bulletin, const void *data, time_t now,
               surf_obs_fn *fn, void *arg) {
  unsigned char *copy;
  int nsplit;

  /* A copy to scan, which the scan writes as LDM's does (surf_scan.h) */
  if (bulletin->size == 0)
    return -1;
  copy = malloc((size_t)bulletin->size);
  if (copy == NULL) {
    log_error("surf_split(): Couldn't allocate %llu-byte buffer",
              (unsigned long long)bulletin->size);
    return -1;
  }
  memcpy(copy, data, (size_t)bulletin->size);
  nsplit = split_copy(bulletin, data, copy, now, fn, arg);
  free(copy);
  return nsplit;
}
