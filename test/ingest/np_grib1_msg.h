/*
 * np_grib1_msg.h - small GRIB edition 1 messages for the namers' tests:
 * the indicator section, a 28-byte product-definition section (PDS) with
 * the fields LDM's naming reads (docs/noaaport.md, section "GRIB edition
 * 1"), a 12-byte data section and "7777".  Header-only.
 */
#ifndef TEST_INGEST_NP_GRIB1_MSG_H
#define TEST_INGEST_NP_GRIB1_MSG_H

#include <stdint.h>
#include <string.h>

#define NPG_LEN 52

/* The PDS fields, by their names in the docs. */
struct npg_pds {
  uint8_t version, centre, process, grid, param, ltype, o11, o12;
  uint8_t year, month, day, hour, minute, unit, p1, p2, range, century, sub;
};

/* Centre 7, process 96, grid 3, TMP at 500 mb, 2024-03-15 12:00, F024:
 * the GRIB1 product of docs/noaaport.md's examples. */
static inline struct npg_pds npg_gfs(void) {
  struct npg_pds p = {2,  7,  96, 3, 11, 100, 0x01, 0xF4, 24, 3,
                      15, 12, 0,  1, 24, 0,   0,    21,   0};
  return p;
}

/* The message into m[NPG_LEN]. */
static inline void npg_message(const struct npg_pds *p, uint8_t *m) {
  memset(m, 0, NPG_LEN);
  memcpy(m, "GRIB", 4);
  m[6] = NPG_LEN;
  m[7] = 1;
  uint8_t *s = m + 8;
  s[2] = 28;
  s[3] = p->version;
  s[4] = p->centre;
  s[5] = p->process;
  s[6] = p->grid;
  s[7] = 0x80;
  s[8] = p->param;
  s[9] = p->ltype;
  s[10] = p->o11;
  s[11] = p->o12;
  s[12] = p->year;
  s[13] = p->month;
  s[14] = p->day;
  s[15] = p->hour;
  s[16] = p->minute;
  s[17] = p->unit;
  s[18] = p->p1;
  s[19] = p->p2;
  s[20] = p->range;
  s[24] = p->century;
  s[25] = p->sub;
  s[28 + 2] = 12; /* the data section's length */
  memcpy(m + NPG_LEN - 4, "7777", 4);
}

#endif
