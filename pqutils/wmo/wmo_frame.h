/*
 * wmo_frame.h - the framing of pqing's byte streams: where each message
 * begins and ends, as LDM 6.15's pqing scanners find it (docs/pqing.md,
 * "Framing"), fed in pieces of any size as they arrive.
 *
 *   WMO_FRAME_TEXT    SOH ... ETX; with `check`, a NUL byte inside a
 *                     message (a terminal's mark of a parity error) drops it;
 *   WMO_FRAME_BINARY  SOH CR CR LF ... CR CR LF ETX, where an ETX ends the
 *                     message only if the four bytes after it plausibly
 *                     begin the next one, and an ESC right after CR CR LF is
 *                     removed (byte stuffing); with `check`, the HDS CRC-16:
 *                     two check bytes follow the ETX and the CRC of the
 *                     whole must be zero (wmo_crc.h);
 *   WMO_FRAME_AFOS    ZCZC ... NNNN;
 *   WMO_FRAME_FAA604  SOH ... ETX, as TEXT, with FAA604's shortest message.
 *
 * Whatever the input, memory is bounded: a message that grows past `max`
 * bytes is dropped (WMO_EV_TOO_BIG) and the scanner skips to the next
 * start; bytes between messages are not kept.  Nothing here logs: every
 * outcome is an event handed to the caller's function, in input order.
 * One scanner per input; not thread-safe.
 */
#ifndef PQUTILS_WMO_WMO_FRAME_H
#define PQUTILS_WMO_WMO_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WMO_SOH 0x01
#define WMO_STX 0x02
#define WMO_ETX 0x03
#define WMO_ESC 0x1B
#define WMO_CR 0x0D
#define WMO_LF 0x0A

/* The shortest messages LDM accepts (bytes, framing included). */
#define WMO_MIN_WMO 34
#define WMO_MIN_AFOS 14
#define WMO_MIN_FAA604 28

enum wmo_framing {
  WMO_FRAME_TEXT,
  WMO_FRAME_BINARY,
  WMO_FRAME_AFOS,
  WMO_FRAME_FAA604,
};

enum wmo_event_kind {
  WMO_EV_MESSAGE,   /* data, len: a whole message (AFOS: no_zczc) */
  WMO_EV_TOO_SHORT, /* len: framed, but shorter than the minimum */
  WMO_EV_BAD_CRC,   /* data, len, crc: the CRC did not come out zero */
  WMO_EV_PARITY,    /* data, len: a parity error inside the message */
  WMO_EV_LONE_SOH,  /* data, len: a message cut short by the next SOH */
  WMO_EV_LONE_ETX,  /* an ETX outside any message, after other bytes */
  WMO_EV_NO_NNNN,   /* data, len: an AFOS message cut by the next ZCZC */
  WMO_EV_TOO_BIG,   /* len (= max): a message grew past max; dropped */
  WMO_EV_LOST,      /* len: the bytes of an unfinished message dropped at
                       wmo_scan_reset() (the input ended or broke) */
};

struct wmo_event {
  enum wmo_event_kind kind;
  const uint8_t *data; /* valid during the call only */
  size_t len;
  uint16_t crc; /* WMO_EV_BAD_CRC: the CRC found */
  bool no_zczc; /* WMO_EV_MESSAGE of AFOS: no ZCZC began it */
};

typedef void wmo_emit_fn(void *arg, const struct wmo_event *ev);

struct wmo_scanner {
  enum wmo_framing framing;
  bool check;
  size_t max; /* largest message kept */
  size_t min; /* shortest message accepted */
  uint8_t *buf;
  size_t len, cap;
  int state;
  uint16_t crc;     /* binary with check: CRC from the SOH */
  uint16_t crc_etx; /* the CRC after the ETX under test */
  uint8_t peek[8];  /* bytes after an ETX (binary), not yet scanned */
  size_t npeek;
  unsigned zstate; /* AFOS: progress through ZCZC / NNNN */
  wmo_emit_fn *emit;
  void *arg;
};

/**
 * Start a scanner.  max: the largest message (bytes, at least the
 * framing's minimum); the buffer grows to it as needed.
 * @return 0, or -1 if memory is short (errno ENOMEM)
 */
int wmo_scan_init(struct wmo_scanner *s, enum wmo_framing framing, bool check,
                  size_t max, wmo_emit_fn *emit, void *arg);

/** Free the buffer. */
void wmo_scan_free(struct wmo_scanner *s);

/**
 * Scan the next n bytes of the input; events go to the scanner's emit.
 * @return 0, or -1 if memory is short (the message under way is then
 *         dropped as WMO_EV_LOST and scanning goes on from the next start)
 */
int wmo_scan_feed(struct wmo_scanner *s, const uint8_t *p, size_t n);

/**
 * The input paused or ended: an ETX whose next bytes have not come yet
 * ends its message now (binary framing), as LDM decides when fewer than
 * four bytes follow.  The scanner stays usable.
 */
void wmo_scan_flush(struct wmo_scanner *s);

/**
 * The input broke (a connection dropped) or ended: flush, then drop the
 * unfinished message, if any, as WMO_EV_LOST, and start afresh.
 * @return the bytes of it that were dropped (0: none)
 */
size_t wmo_scan_reset(struct wmo_scanner *s);

/** Name of a framing ("text", "binary", "binary with CRC", ...). */
const char *wmo_framing_name(enum wmo_framing f, bool check);

#endif
