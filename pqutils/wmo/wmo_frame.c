/*
 * wmo_frame.c - the framing scanners (wmo_frame.h): one state machine per
 * framing, a byte at a time, keeping only the message under way.  The
 * rules are LDM 6.15 pqing's (docs/pqing.md, "Framing"); where LDM's
 * scanner decides with whatever happens to be in its buffer (the bytes after
 * an ETX), this one waits for them, or for wmo_scan_flush(), so that the
 * result does not depend on how the input was cut into reads.
 */
#include "pqutils/wmo/wmo_frame.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pqutils/wmo/wmo_crc.h"

enum {
  /* text and FAA604 */
  T_SEARCH,
  T_SKIP, /* printable bytes outside any message */
  T_MSG,
  T_PIP, /* a parity error in this message */
  T_DISCARD,
  /* binary */
  B_START,
  B_SEARCH,
  B_SOH,
  B_SOH_CR,
  B_SOH_CR_CR,
  B_HDR,
  B_CR,
  B_CR_CR,
  B_CRLF,
  B_PEEK, /* after CR CR LF ETX: is the ETX the end? */
  B_CHK,  /* the same with the check bytes */
  /* AFOS */
  A_START,
  A_HDR,
  A_TRAILER,
  A_DISCARD,
};

/* AFOS: how much of ZCZC or NNNN has been seen. */
enum { Z_GND, Z_Z, Z_ZC, Z_ZCZ, Z_N, Z_NN, Z_NNN };

#define INITIAL_CAP 16384u

static void emit(struct wmo_scanner *s, enum wmo_event_kind kind,
                 const uint8_t *data, size_t len) {
  struct wmo_event ev = {.kind = kind, .data = data, .len = len};
  s->emit(s->arg, &ev);
}

static int start_state(const struct wmo_scanner *s) {
  switch (s->framing) {
  case WMO_FRAME_BINARY:
    return B_START;
  case WMO_FRAME_AFOS:
    return A_START;
  default:
    return T_SEARCH;
  }
}

static int discard_state(const struct wmo_scanner *s) {
  switch (s->framing) {
  case WMO_FRAME_BINARY:
    return B_SEARCH;
  case WMO_FRAME_AFOS:
    return A_DISCARD;
  default:
    return T_DISCARD;
  }
}

/* Drop the message under way: too big, or no memory for it. */
static void drop(struct wmo_scanner *s, enum wmo_event_kind why) {
  emit(s, why, NULL, why == WMO_EV_TOO_BIG ? s->max : s->len);
  s->len = 0;
  s->npeek = 0;
  s->state = discard_state(s);
}

/* Append a byte to the message.  @return 0, or 1 if the message was
 * dropped instead (too big, or no memory). */
static int put(struct wmo_scanner *s, uint8_t b) {
  if (s->len == s->max) {
    drop(s, WMO_EV_TOO_BIG);
    return 1;
  }
  if (s->len == s->cap) {
    size_t cap = s->cap * 2 < s->max ? s->cap * 2 : s->max;
    uint8_t *p = realloc(s->buf, cap);
    if (p == NULL) {
      drop(s, WMO_EV_LOST);
      return 1;
    }
    s->buf = p;
    s->cap = cap;
  }
  s->buf[s->len++] = b;
  if (s->check && s->framing == WMO_FRAME_BINARY)
    s->crc = wmo_crc_add(s->crc, b);
  return 0;
}

/* The message ended: hand it over (or say it is too short), start afresh. */
static void done(struct wmo_scanner *s, enum wmo_event_kind kind) {
  if (kind == WMO_EV_MESSAGE && s->len < s->min)
    emit(s, WMO_EV_TOO_SHORT, s->buf, s->len);
  else
    emit(s, kind, s->buf, s->len);
  s->len = 0;
}

static void step(struct wmo_scanner *s, uint8_t b);

/* Scan again bytes held back after an ETX (from index from). */
static void refeed(struct wmo_scanner *s, size_t from) {
  uint8_t again[sizeof s->peek];
  size_t n = s->npeek > from ? s->npeek - from : 0;
  memcpy(again, s->peek + from, n);
  s->npeek = 0;
  for (size_t i = 0; i < n; i++)
    step(s, again[i]);
}

/* Does byte b, the i-th after an ETX (0-3), fit the start of a next
 * message: SOH CR CR LF, CR CR LF ETX or LF SOH CR CR, position by
 * position (LDM's rule)? */
static bool fits_next(size_t i, uint8_t b) {
  static const uint8_t a[4] = {WMO_SOH, WMO_CR, WMO_CR, WMO_LF};
  static const uint8_t t[4] = {WMO_CR, WMO_CR, WMO_LF, WMO_ETX};
  static const uint8_t u[4] = {WMO_LF, WMO_SOH, WMO_CR, WMO_CR};
  return b == a[i] || b == t[i] || b == u[i];
}

/* Start a message at this SOH. */
static void begin_binary(struct wmo_scanner *s) {
  s->len = 0;
  s->crc = 0;
  s->state = B_SOH;
  (void)put(s, WMO_SOH);
}

static void step_binary(struct wmo_scanner *s, uint8_t b) {
  switch (s->state) {
  case B_START:
  case B_SEARCH:
    if (b == WMO_SOH)
      begin_binary(s);
    else
      s->state = B_SEARCH;
    return;
  case B_SOH:
  case B_SOH_CR:
    if (b == WMO_SOH) {
      begin_binary(s);
    } else if (b == WMO_CR) {
      if (put(s, b) == 0)
        s->state = s->state == B_SOH ? B_SOH_CR : B_SOH_CR_CR;
    } else {
      s->len = 0;
      s->state = B_SEARCH;
    }
    return;
  case B_SOH_CR_CR:
    if (b == WMO_LF || b == WMO_CR) {
      if (put(s, b) == 0 && b == WMO_LF)
        s->state = B_HDR;
    } else if (b == WMO_SOH) {
      begin_binary(s);
    } else {
      s->len = 0;
      s->state = B_SEARCH;
    }
    return;
  case B_HDR:
  case B_CR:
  case B_CR_CR:
    if (put(s, b) != 0)
      return;
    if (b == WMO_CR)
      s->state = s->state == B_HDR ? B_CR : B_CR_CR;
    else if (b == WMO_LF && s->state == B_CR_CR)
      s->state = B_CRLF;
    else
      s->state = B_HDR;
    return;
  case B_CRLF:
    if (b == WMO_ESC) { /* stuffing: removed, and not in the CRC */
      s->state = B_HDR;
      return;
    }
    if (put(s, b) != 0)
      return;
    if (b == WMO_ETX) {
      s->crc_etx = s->crc;
      s->npeek = 0;
      s->state = s->check ? B_CHK : B_PEEK;
    } else {
      s->state = b == WMO_CR ? B_CR : B_HDR;
    }
    return;
  case B_PEEK: {
    size_t i = s->npeek;
    s->peek[s->npeek++] = b;
    if (!fits_next(i, b)) { /* the ETX is data */
      s->state = B_HDR;
      refeed(s, 0);
    } else if (s->npeek == 4) {
      done(s, WMO_EV_MESSAGE);
      s->state = B_START;
      refeed(s, 0);
    }
    return;
  }
  case B_CHK: {
    s->peek[s->npeek++] = b;
    uint16_t crc = wmo_crc(s->crc_etx, s->peek, 2);
    if (s->npeek == 2) {
      if (crc == 0) { /* the check bytes are not part of the product */
        s->npeek = 0;
        done(s, WMO_EV_MESSAGE);
        s->state = B_START;
      }
      return;
    }
    if (s->npeek < 2)
      return;
    /* A wrong CRC: a damaged message if the next one begins now, else an
     * ETX in the data (and the "check bytes" data too). */
    if (!fits_next(s->npeek - 3, b)) {
      s->crc = s->crc_etx;
      s->state = B_HDR;
      refeed(s, 0);
    } else if (s->npeek == 6) {
      struct wmo_event ev = {
          .kind = WMO_EV_BAD_CRC, .data = s->buf, .len = s->len, .crc = crc};
      s->emit(s->arg, &ev);
      s->len = 0;
      s->state = B_START;
      refeed(s, 2);
    }
    return;
  }
  default:
    return;
  }
}

static void step_text(struct wmo_scanner *s, uint8_t b) {
  switch (b) {
  case WMO_SOH:
    if (s->state == T_MSG)
      emit(s, WMO_EV_LONE_SOH, s->buf, s->len);
    else if (s->state == T_PIP)
      emit(s, WMO_EV_PARITY, s->buf, s->len);
    s->len = 0;
    s->state = T_MSG;
    (void)put(s, b);
    return;
  case WMO_ETX:
    if (s->state == T_SKIP) {
      emit(s, WMO_EV_LONE_ETX, NULL, 0);
    } else if (s->state == T_MSG) {
      if (put(s, b) != 0)
        return;
      done(s, WMO_EV_MESSAGE);
    } else if (s->state == T_PIP) {
      emit(s, WMO_EV_PARITY, s->buf, s->len);
    }
    s->len = 0;
    s->state = T_SEARCH;
    return;
  default:
    if (b == 0 && s->check && s->state == T_MSG)
      s->state = T_PIP;
    if (s->state == T_MSG || s->state == T_PIP)
      (void)put(s, b);
    else if (s->state == T_SEARCH && b > 0x20 && b < 0x7F)
      s->state = T_SKIP;
    return;
  }
}

/* AFOS: ZCZC seen.  The bytes before it are a message without its NNNN if
 * one had begun; the new one begins with these four bytes. */
static void afos_zczc(struct wmo_scanner *s) {
  if (s->state == A_HDR && s->len >= 4)
    emit(s, WMO_EV_NO_NNNN, s->buf, s->len - 4);
  s->len = 0;
  s->state = A_HDR;
  for (int i = 0; i < 4; i++)
    (void)put(s, i % 2 ? 'C' : 'Z');
}

static void afos_nnnn(struct wmo_scanner *s) {
  if (s->state == A_DISCARD) {
    s->len = 0;
    s->state = A_TRAILER;
    return;
  }
  bool no_zczc = s->state != A_HDR;
  if (s->len < s->min) {
    emit(s, WMO_EV_TOO_SHORT, s->buf, s->len);
  } else {
    struct wmo_event ev = {.kind = WMO_EV_MESSAGE,
                           .data = s->buf,
                           .len = s->len,
                           .no_zczc = no_zczc};
    s->emit(s->arg, &ev);
  }
  s->len = 0;
  s->state = A_TRAILER;
}

static void step_afos(struct wmo_scanner *s, uint8_t b) {
  if (s->state != A_DISCARD && put(s, b) != 0) {
    s->zstate = Z_GND;
    return;
  }
  switch (b) {
  case 'Z':
    s->zstate = s->zstate == Z_ZC ? Z_ZCZ : Z_Z;
    return;
  case 'C': /* LDM: a C elsewhere leaves the progress as it is */
    if (s->zstate == Z_Z) {
      s->zstate = Z_ZC;
    } else if (s->zstate == Z_ZCZ) {
      s->zstate = Z_GND;
      afos_zczc(s);
    }
    return;
  case 'N':
    if (s->zstate == Z_NNN) {
      s->zstate = Z_GND;
      afos_nnnn(s);
    } else {
      s->zstate = s->zstate == Z_NN ? Z_NNN : s->zstate == Z_N ? Z_NN : Z_N;
    }
    return;
  default:
    s->zstate = Z_GND;
    return;
  }
}

static void step(struct wmo_scanner *s, uint8_t b) {
  switch (s->framing) {
  case WMO_FRAME_BINARY:
    step_binary(s, b);
    return;
  case WMO_FRAME_AFOS:
    step_afos(s, b);
    return;
  default:
    step_text(s, b);
    return;
  }
}

int wmo_scan_init(struct wmo_scanner *s, enum wmo_framing framing, bool check,
                  size_t max, wmo_emit_fn *fn, void *arg) {
  memset(s, 0, sizeof *s);
  s->framing = framing;
  s->check = check;
  s->min = framing == WMO_FRAME_AFOS     ? WMO_MIN_AFOS
           : framing == WMO_FRAME_FAA604 ? WMO_MIN_FAA604
                                         : WMO_MIN_WMO;
  s->max = max < s->min ? s->min : max;
  s->cap = s->max < INITIAL_CAP ? s->max : INITIAL_CAP;
  s->buf = malloc(s->cap);
  if (s->buf == NULL) {
    errno = ENOMEM;
    return -1;
  }
  s->state = start_state(s);
  s->emit = fn;
  s->arg = arg;
  return 0;
}

void wmo_scan_free(struct wmo_scanner *s) {
  free(s->buf);
  s->buf = NULL;
  s->len = s->cap = 0;
}

/* How many of the bytes at p only extend the message under way, so that
 * they may be appended at once: in the binary framing's body, those before
 * the next CR; in the text framing's, those above ETX (SOH, ETX and, when
 * checking parity, NUL are the bytes that matter).  0: go byte by byte. */
static size_t plain_run(const struct wmo_scanner *s, const uint8_t *p,
                        size_t n) {
  if (s->framing == WMO_FRAME_BINARY && s->state == B_HDR) {
    const uint8_t *cr = memchr(p, WMO_CR, n);
    return cr != NULL ? (size_t)(cr - p) : n;
  }
  if ((s->framing == WMO_FRAME_TEXT || s->framing == WMO_FRAME_FAA604) &&
      s->state == T_MSG) {
    size_t k = 0;
    while (k < n && p[k] > WMO_ETX)
      k++;
    return k;
  }
  return 0;
}

/* Append k plain bytes at once, as k calls of put() would.  @return 0, or
 * -1 if they do not fit in max or memory is short (the caller then goes
 * byte by byte, which says so). */
static int append(struct wmo_scanner *s, const uint8_t *p, size_t k) {
  if (k > s->max - s->len)
    return -1;
  if (s->len + k > s->cap) {
    size_t cap = s->cap;
    while (cap < s->len + k)
      cap = cap * 2 < s->max ? cap * 2 : s->max;
    uint8_t *q = realloc(s->buf, cap);
    if (q == NULL)
      return -1;
    s->buf = q;
    s->cap = cap;
  }
  memcpy(s->buf + s->len, p, k);
  s->len += k;
  if (s->check && s->framing == WMO_FRAME_BINARY)
    s->crc = wmo_crc(s->crc, p, k);
  return 0;
}

int wmo_scan_feed(struct wmo_scanner *s, const uint8_t *p, size_t n) {
  size_t i = 0;
  while (i < n) {
    size_t k = plain_run(s, p + i, n - i);
    if (k > 0 && append(s, p + i, k) == 0) {
      i += k;
      continue;
    }
    step(s, p[i++]);
  }
  return 0;
}

void wmo_scan_flush(struct wmo_scanner *s) {
  if (s->state == B_PEEK) {
    done(s, WMO_EV_MESSAGE);
    s->state = B_START;
    refeed(s, 0);
  } else if (s->state == B_CHK && s->npeek > 2) {
    struct wmo_event ev = {.kind = WMO_EV_BAD_CRC,
                           .data = s->buf,
                           .len = s->len,
                           .crc = wmo_crc(s->crc_etx, s->peek, 2)};
    s->emit(s->arg, &ev);
    s->len = 0;
    s->state = B_START;
    refeed(s, 2);
  }
}

size_t wmo_scan_reset(struct wmo_scanner *s) {
  wmo_scan_flush(s);
  size_t lost = 0;
  switch (s->state) {
  case T_MSG:
  case T_PIP:
  case A_HDR:
  case B_SOH:
  case B_SOH_CR:
  case B_SOH_CR_CR:
  case B_HDR:
  case B_CR:
  case B_CR_CR:
  case B_CRLF:
  case B_CHK:
    lost = s->len + s->npeek;
    break;
  default:
    break;
  }
  if (lost > 0)
    emit(s, WMO_EV_LOST, NULL, lost);
  s->len = 0;
  s->npeek = 0;
  s->zstate = Z_GND;
  s->state = start_state(s);
  return lost;
}

const char *wmo_framing_name(enum wmo_framing f, bool check) {
  switch (f) {
  case WMO_FRAME_BINARY:
    return check ? "WMO binary with CRC check" : "WMO binary";
  case WMO_FRAME_AFOS:
    return "AFOS";
  case WMO_FRAME_FAA604:
    return check ? "FAA604 with parity check" : "FAA604";
  default:
    return check ? "WMO text with parity check" : "WMO text";
  }
}
