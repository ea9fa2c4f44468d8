/*
 * grib2_name.c - the GRIB2 part of an identifier,
 * "grib2/<centre>/<model>/#<grid>/<time>/<params>/<level>", as LDM 6.15's
 * noaaportIngester makes it (docs/noaaport.md, "GRIB edition 2"): every
 * field of the first message named in turn (grib2_decode.c), its
 * parameter name appended to the list (a ';' before every field but the
 * first, so that a failed first field leaves a leading ';'), the grid
 * worked out for each field, and the centre, model, grid, time and level
 * of the last field printed.  A field whose parameter or level cannot be
 * named logs LDM's ERROR line; if it is the last, the time reads FHRS and
 * the level LVL.  The message's length is bounded by the bytes present;
 * a message that does not decode names nothing.
 */
#include "pqutils/ingest/grib2_name.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "pqutils/ingest/grib2_internal.h"
#include "pqutils/ingest/grib_names.h"

/* LDM keeps the list of parameter names whole; an identifier is cut far
 * shorter (docs/noaaport.md, "Assembly"), so the list is kept to this. */
#define PARAMS_MAX 1024

struct naming {
  const char *name; /* the product's NAME, for the ERROR line */
  const struct np_log *lg;
  struct np__g2_navcache cache;
  char params[PARAMS_MAX];
  size_t plen;
  char time[80], level[80];
  int grid;
  unsigned centre, model;
};

static void add_param(struct naming *st, bool first, const char *p) {
  int n = snprintf(st->params + st->plen, sizeof st->params - st->plen, "%s%s",
                   first ? "" : ";", p);
  if (n > 0)
    st->plen += (size_t)n < sizeof st->params - st->plen
                    ? (size_t)n
                    : sizeof st->params - st->plen - 1;
}

/* The centre's abbreviation, as GEMPAK looks it up for every field. */
static const char *abbreviation(const struct np__g2_field *f,
                                const struct np_log *lg) {
  const char *abbr = np__g2_centre_abbr((unsigned)f->msg->ids[0]);
  if (abbr != NULL)
    return abbr;
  np_log(lg, NP_ERROR,
         "[GB -14] Couldn't find originating center %d in table \"\"",
         (int)f->msg->ids[0]);
  return "";
}

static void name_field(void *arg, const struct np__g2_field *f) {
  struct naming *st = arg;
  bool last = f->index + 1 == f->total;
  int64_t model = 255; /* a template too short to have one: GRIB's missing */
  char time[24], param[16], level[80];
  int accum;
  (void)np__g2_value(&f->pdt, 4, &model);
  int grid = f->grid->source != 0 ? (int)f->grid->source
                                  : np__g2_grid_number(f->grid, &st->cache);
  const char *abbr = abbreviation(f, st->lg);
  np__g2_time(f, time, &accum);
  if (np__g2_param(f, abbr, accum, st->lg, param) != 0 ||
      np__g2_level(f, abbr, st->lg, level, sizeof level) != 0) {
    np_log(st->lg, NP_ERROR, "Couldn't decode GRIB2 message. WMO header=\"%s\"",
           st->name);
    snprintf(time, sizeof time, "FHRS");
    snprintf(level, sizeof level, "LVL");
  } else {
    add_param(st, f->index == 0, param);
  }
  if (last) {
    st->centre = (unsigned)f->msg->ids[0];
    st->model = (unsigned)model;
    st->grid = grid;
    snprintf(st->time, sizeof st->time, "%s", time);
    snprintf(st->level, sizeof st->level, "%s", level);
  }
}

int np_grib2_name(const uint8_t *msg, size_t n, const char *name, char *tag,
                  size_t tag_size, struct np_namer *nm) {
  struct naming st = {.name = name != NULL ? name : "",
                      .lg = nm != NULL ? nm->log : NULL};
  if (n < 16 || memcmp(msg, "GRIB", 4) != 0 || msg[7] != 2)
    return -1;
  size_t len = (size_t)msg[12] << 24 | (size_t)msg[13] << 16 |
               (size_t)msg[14] << 8 | msg[15];
  if (len > n)
    return -1; /* LDM would read past the product (docs/noaaport.md, UB) */
  np__g2_navcache_init(&st.cache);
  if (np__g2_decode(msg, len, name_field, &st) != 0)
    return -1;
  if (st.grid == 0 && strlen(st.name) > 11 && st.name[7] == 'K' &&
      st.name[8] == 'W') {
    int g = np__g2_wmo_grid(st.name);
    if (g > 0)
      st.grid = g;
  }
  struct np_grib_names nb;
  /* LDM resolves the model first: both decimal, both show the centre */
  const char *model = np_grib_model_name(st.centre, st.model, &nb);
  const char *centre = np_grib_centre_name(st.centre, &nb);
  if (tag_size > 0)
    snprintf(tag, tag_size, "grib2/%s/%s/#%03d/%s/%s/%s", centre, model,
             st.grid, st.time, st.params, st.level);
  return 0;
}
