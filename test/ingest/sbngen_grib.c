/*
 * sbngen_grib.c - libsbngen's GRIB messages (sbngen.h): the smallest
 * valid GRIB edition 1 and edition 2 messages that carry the fields the
 * ingester names products by, each field settable (docs/noaaport.md,
 * "GRIB edition 1" and "GRIB edition 2"; the octet layouts are WMO's
 * FM 92 GRIB, editions 1 and 2).  The data sections hold no values (zero
 * bits per value: a constant field).
 */
#include "test/ingest/sbngen.h"

#include <string.h>

#define SG_GRIB1_PDS 28
#define SG_GRIB1_BDS 11
#define SG_GRIB1_LEN (8 + SG_GRIB1_PDS + SG_GRIB1_BDS + 4)

void sg_grib1_defaults(struct sg_grib1 *g) {
  memset(g, 0, sizeof *g);
  g->table_version = 2;
  g->centre = 7;   /* ncep */
  g->process = 96; /* GFS */
  g->grid = 3;
  g->param = 11; /* TMP */
  g->level_type = 100;
  g->level = 500; /* 500 mb */
  g->year = 2024;
  g->month = 3;
  g->day = 15;
  g->hour = 12;
  g->time_unit = 1; /* hours */
  g->p1 = 24;
}

/* The product-definition section (edition 1, section 1). */
static void sg_grib1_pds(struct sg_buf *b, const struct sg_grib1 *g) {
  int century = (g->year - 1) / 100 + 1;

  sg_buf_be(b, SG_GRIB1_PDS, 3);
  sg_buf_byte(b, g->table_version);
  sg_buf_byte(b, g->centre);
  sg_buf_byte(b, g->process);
  sg_buf_byte(b, g->grid);
  sg_buf_byte(b, g->flag);
  sg_buf_byte(b, g->param);
  sg_buf_byte(b, g->level_type);
  sg_buf_be(b, g->level, 2);
  sg_buf_byte(b, (unsigned)(g->year - (century - 1) * 100));
  sg_buf_byte(b, g->month);
  sg_buf_byte(b, g->day);
  sg_buf_byte(b, g->hour);
  sg_buf_byte(b, g->minute);
  sg_buf_byte(b, g->time_unit);
  sg_buf_byte(b, g->p1);
  sg_buf_byte(b, g->p2);
  sg_buf_byte(b, g->time_range);
  sg_buf_be(b, 0, 2); /* number in an average */
  sg_buf_byte(b, 0);  /* number missing from it */
  sg_buf_byte(b, (unsigned)century);
  sg_buf_byte(b, g->subcentre);
  sg_buf_be(b, 0, 2); /* decimal scale factor */
}

void sg_grib1(struct sg_buf *out, const struct sg_grib1 *g) {
  sg_buf_str(out, "GRIB");
  sg_buf_be(out, SG_GRIB1_LEN, 3);
  sg_buf_byte(out, 1);
  sg_grib1_pds(out, g);
  /* binary data section: length, flags, scale, reference, 0 bits */
  sg_buf_be(out, SG_GRIB1_BDS, 3);
  sg_buf_byte(out, 0);
  sg_buf_be(out, 0, 2);
  sg_buf_be(out, 0, 4);
  sg_buf_byte(out, 0);
  sg_buf_str(out, "7777");
}

void sg_grib2_defaults(struct sg_grib2 *g) {
  memset(g, 0, sizeof *g);
  g->centre = 7; /* ncep */
  g->master_version = 2;
  g->local_version = 1;
  g->year = 2024;
  g->month = 3;
  g->day = 15;
  g->hour = 12;
  /* the 0.5-degree global grid: 720 x 361 from 90N 0E to 90S 359.5E */
  g->ni = 720;
  g->nj = 361;
  g->la1 = 90000000;
  g->la2 = 0x80000000u | 90000000; /* sign-magnitude -90 */
  g->lo2 = 359500000;
  g->di = g->dj = 500000;
  g->res_flags = 0x30;
  g->category = 2;
  g->number = 8;   /* VVEL */
  g->gen_type = 2; /* forecast */
  g->process = 96; /* GFS */
  g->time_unit = 1;
  g->forecast = 24;
  g->level1_type = 100; /* isobaric, Pa */
  g->level1_value = 25000;
  g->level2_type = 255;
  g->level2_scale = 255;
  g->level2_value = 0xFFFFFFFFu;
}

static void sg_grib2_sect1(struct sg_buf *b, const struct sg_grib2 *g) {
  sg_buf_be(b, 21, 4);
  sg_buf_byte(b, 1);
  sg_buf_be(b, g->centre, 2);
  sg_buf_be(b, g->subcentre, 2);
  sg_buf_byte(b, g->master_version);
  sg_buf_byte(b, g->local_version);
  sg_buf_byte(b, 1); /* reference time: start of forecast */
  sg_buf_be(b, g->year, 2);
  sg_buf_byte(b, g->month);
  sg_buf_byte(b, g->day);
  sg_buf_byte(b, g->hour);
  sg_buf_byte(b, g->minute);
  sg_buf_byte(b, g->second);
  sg_buf_byte(b, 0); /* operational */
  sg_buf_byte(b, 1); /* forecast */
}

/* Section 3 with template 3.0, latitude/longitude. */
static void sg_grib2_sect3(struct sg_buf *b, const struct sg_grib2 *g) {
  sg_buf_be(b, 72, 4);
  sg_buf_byte(b, 3);
  sg_buf_byte(b, g->grid_source);
  sg_buf_be(b, (uint64_t)g->ni * g->nj, 4);
  sg_buf_byte(b, 0);  /* octets for optional list */
  sg_buf_byte(b, 0);  /* its interpretation */
  sg_buf_be(b, 0, 2); /* template 3.0 */
  sg_buf_byte(b, 6);  /* earth: sphere of radius 6371229 m */
  for (int i = 0; i < 3; i++) {
    sg_buf_byte(b, 0); /* scale factor */
    sg_buf_be(b, 0, 4);
  }
  sg_buf_be(b, g->ni, 4);
  sg_buf_be(b, g->nj, 4);
  sg_buf_be(b, 0, 4);          /* basic angle */
  sg_buf_be(b, 0xFFFFFFFF, 4); /* its subdivisions: missing */
  sg_buf_be(b, g->la1, 4);
  sg_buf_be(b, g->lo1, 4);
  sg_buf_byte(b, g->res_flags);
  sg_buf_be(b, g->la2, 4);
  sg_buf_be(b, g->lo2, 4);
  sg_buf_be(b, g->di, 4);
  sg_buf_be(b, g->dj, 4);
  sg_buf_byte(b, g->scan_mode);
}

/* Section 4 with template 4.0, analysis or forecast at a level. */
static void sg_grib2_sect4(struct sg_buf *b, const struct sg_grib2 *g) {
  sg_buf_be(b, 34, 4);
  sg_buf_byte(b, 4);
  sg_buf_be(b, 0, 2); /* coordinate values after the template */
  sg_buf_be(b, 0, 2); /* template 4.0 */
  sg_buf_byte(b, g->category);
  sg_buf_byte(b, g->number);
  sg_buf_byte(b, g->gen_type);
  sg_buf_byte(b, 0); /* background process */
  sg_buf_byte(b, g->process);
  sg_buf_be(b, 0, 2); /* hours of observational cutoff */
  sg_buf_byte(b, 0);  /* minutes of it */
  sg_buf_byte(b, g->time_unit);
  sg_buf_be(b, g->forecast, 4);
  sg_buf_byte(b, g->level1_type);
  sg_buf_byte(b, g->level1_scale);
  sg_buf_be(b, g->level1_value, 4);
  sg_buf_byte(b, g->level2_type);
  sg_buf_byte(b, g->level2_scale);
  sg_buf_be(b, g->level2_value, 4);
}

/* Sections 5 (simple packing, 0 bits), 6 (no bitmap), 7 (no data), 8. */
static void sg_grib2_tail(struct sg_buf *b, const struct sg_grib2 *g) {
  sg_buf_be(b, 21, 4);
  sg_buf_byte(b, 5);
  sg_buf_be(b, (uint64_t)g->ni * g->nj, 4);
  sg_buf_be(b, 0, 2); /* template 5.0 */
  sg_buf_be(b, 0, 4); /* reference value */
  sg_buf_be(b, 0, 2); /* binary scale */
  sg_buf_be(b, 0, 2); /* decimal scale */
  sg_buf_byte(b, 0);  /* bits per value */
  sg_buf_byte(b, 0);  /* floating-point values */
  sg_buf_be(b, 6, 4);
  sg_buf_byte(b, 6);
  sg_buf_byte(b, 255);
  sg_buf_be(b, 5, 4);
  sg_buf_byte(b, 7);
  sg_buf_str(b, "7777");
}

void sg_grib2(struct sg_buf *out, const struct sg_grib2 *g) {
  struct sg_buf body = {0};

  sg_grib2_sect1(&body, g);
  sg_grib2_sect3(&body, g);
  sg_grib2_sect4(&body, g);
  sg_grib2_tail(&body, g);
  sg_buf_str(out, "GRIB");
  sg_buf_be(out, 0, 2); /* reserved */
  sg_buf_byte(out, g->discipline);
  sg_buf_byte(out, 2);
  sg_buf_be(out, 16 + body.n, 8);
  sg_buf_put(out, body.p, body.n);
  sg_buf_free(&body);
}
