/*
 * iddmix.c - the IDD-like product stream of iddmix.h: a seeded xoshiro256**
 * generator drives the feed, size and gap of each product and the words of
 * its identifier; a second generator, seeded from (seed, seqno), gives its
 * bytes, so that any product's content can be made again alone.
 */
#include "test/bench/iddmix.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "pq/product.h"

/* Stream time 0 is this instant: 2024-04-18 16:00:00 UTC, the day of the
 * 2024 figures. */
#define STREAM_EPOCH 1713456000

const iddmix_feed iddmix_feeds[IDDMIX_NFEEDS] = {
    {"NEXRAD2", PQ_FT_NEXRAD2, 30.0, 96e3, 0.6},
    {"NEXRAD3", PQ_FT_NEXRAD3, 25.0, 42e3, 1.0},
    {"SATELLITE", PQ_FT_SATELLITE, 1.8, 2.3e6, 1.2},
    {"NIMAGE", PQ_FT_NIMAGE, 2.0, 1.1e6, 1.0},
    {"IDS|DDPLUS", PQ_FT_IDS | PQ_FT_DDPLUS, 12.0, 1.5e3, 0.8},
    {"CONDUIT", PQ_FT_CONDUIT, 15.2, 300e3, 1.0},
    {"NGRID", PQ_FT_NGRID, 23.0, 120e3, 1.0},
};

enum { F_NEXRAD2, F_NEXRAD3, F_SATELLITE, F_NIMAGE, F_TEXT, F_CONDUIT };

/* Radars (WMO office = "K" + the radar's three letters). */
static const char *const radars[] = {"FTG", "LZK", "TLX", "DMX", "FSD", "OAX",
                                     "AMA", "BOX", "OKX", "MKX", "LOT", "DTX",
                                     "IND", "GRR", "MPX", "DVN", "ILX", "SGF"};
#define NRADARS (sizeof radars / sizeof radars[0])
static const char *const n3codes[] = {"N0Q", "N0U", "N0B", "N0G", "NCR",
                                      "NTP", "DVL", "EET", "N0S", "N1P"};
#define NN3 (sizeof n3codes / sizeof n3codes[0])

/* Text bulletins: WMO heading, AWIPS product (NULL: none), feedtype. */
static const struct {
  const char *ttaaii, *cccc, *awips;
  uint32_t ft;
} texts[] = {
    {"SAUS80", "KWBC", NULL, PQ_FT_DDPLUS},
    {"SAUS46", "KWBC", NULL, PQ_FT_DDPLUS},
    {"SMUS01", "KWBC", NULL, PQ_FT_DDPLUS},
    {"FXUS63", "KDMX", "AFDDMX", PQ_FT_DDPLUS},
    {"FXUS64", "KLZK", "AFDLZK", PQ_FT_DDPLUS},
    {"FTUS43", "KLOT", "TAFORD", PQ_FT_DDPLUS},
    {"NOUS41", "KBOX", "PNSBOX", PQ_FT_DDPLUS},
    {"WWUS54", "KLZK", "SVSLZK", PQ_FT_IDS},
    {"WFUS54", "KOUN", "TOROUN", PQ_FT_IDS},
    {"WUUS53", "KDMX", "SVRDMX", PQ_FT_IDS},
};
#define NTEXTS (sizeof texts / sizeof texts[0])

static const char *const gfs_vars[] = {"TMP",  "HGT", "UGRD",
                                       "VGRD", "RH",  "VVEL"};
static const char *const gfs_levels[] = {"850 hPa PRES", "500 hPa PRES",
                                         "250 hPa PRES", "2 m HGHT",
                                         "10 m HGHT",    "0 - 0 SFC"};
static const char *const ngrid_models[] = {"RAP", "NAM", "GFS", "HRRR"};

/* ---------------------------------------------------------------------- */
/* Random numbers                                                         */
/* ---------------------------------------------------------------------- */

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15u);

  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}

static uint64_t xoshiro(uint64_t s[4]) {
  uint64_t r = rotl(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;

  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return r;
}

static void seed_state(uint64_t s[4], uint64_t seed) {
  int i;

  for (i = 0; i < 4; i++)
    s[i] = splitmix64(&seed);
}

/* Uniform in [0, 1). */
static double uniform(iddmix *m) {
  return (double)(xoshiro(m->rng) >> 11) * 0x1.0p-53;
}

static unsigned pick(iddmix *m, unsigned n) {
  return (unsigned)(uniform(m) * n);
}

/* Standard normal (Box-Muller; the second value is not kept). */
static double normal(iddmix *m) {
  double u1 = 1.0 - uniform(m); /* (0, 1] */
  double u2 = uniform(m);

  return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

/* ---------------------------------------------------------------------- */

double iddmix_rate(void) {
  double r = 0;
  unsigned i;

  for (i = 0; i < IDDMIX_NFEEDS; i++)
    r += iddmix_feeds[i].rate;
  return r;
}

double iddmix_byte_rate(void) {
  double r = 0;
  unsigned i;

  for (i = 0; i < IDDMIX_NFEEDS; i++)
    r += iddmix_feeds[i].rate * iddmix_feeds[i].mean;
  return r;
}

void iddmix_init(iddmix *m, uint64_t seed, double scale, uint64_t max_size) {
  memset(m, 0, sizeof *m);
  m->seed = seed;
  seed_state(m->rng, seed);
  m->scale = scale > 0 ? scale : 1.0;
  m->max_size = max_size >= IDDMIX_MIN_SIZE ? max_size : IDDMIX_MIN_SIZE;
}

void iddmix_set_scale(iddmix *m, double scale) {
  if (scale > 0)
    m->scale = scale;
}

/* The identifier of a product of feed f at stream time t. */
static void make_ident(iddmix *m, unsigned f, double t, iddmix_prod *p) {
  time_t when = STREAM_EPOCH + (time_t)t;
  struct tm tm;
  char ymdhms[16], dhm[8];
  const char *site = radars[pick(m, NRADARS)];

  gmtime_r(&when, &tm);
  strftime(ymdhms, sizeof ymdhms, "%Y%m%d%H%M%S", &tm);
  strftime(dhm, sizeof dhm, "%d%H%M", &tm);
  switch (f) {
  case F_NEXRAD2: {
    unsigned chunk = 1 + pick(m, 60);

    snprintf(p->ident, sizeof p->ident, "L2-BZIP2/K%s/%.12s%02u/%u/%u/%c/V06/0",
             site, ymdhms, (unsigned)tm.tm_sec / 10 * 10, 1 + pick(m, 999),
             chunk, chunk == 1 ? 'S' : (chunk == 60 ? 'E' : 'I'));
    break;
  }
  case F_NEXRAD3: {
    const char *code = n3codes[pick(m, NN3)];

    snprintf(p->ident, sizeof p->ident, "SDUS5%u K%s %s /p%s%s", 1 + pick(m, 7),
             site, dhm, code, site);
    break;
  }
  case F_SATELLITE: {
    unsigned band = 1 + pick(m, 16);
    char yj[12];

    strftime(yj, sizeof yj, "%Y%j%H%M", &tm);
    snprintf(p->ident, sizeof p->ident,
             "OR_ABI-L2-CMIP%c-M6C%02u_G16_s%s%02u%u_e%s%02u%u_c%s%02u%u.nc",
             "CFM"[pick(m, 3)], band, yj, (unsigned)tm.tm_sec, pick(m, 10), yj,
             (unsigned)tm.tm_sec, pick(m, 10), yj, (unsigned)tm.tm_sec,
             pick(m, 10));
    break;
  }
  case F_NIMAGE:
    snprintf(p->ident, sizeof p->ident, "TI%c%c%02u KNES %s PAA",
             "RSE"[pick(m, 3)], "ABCDEFGHIJ"[pick(m, 10)], 1 + pick(m, 16),
             dhm);
    break;
  case F_TEXT: {
    unsigned i = pick(m, NTEXTS);

    p->feedtype = texts[i].ft;
    if (texts[i].awips != NULL)
      snprintf(p->ident, sizeof p->ident, "%s %s %s /p%s", texts[i].ttaaii,
               texts[i].cccc, dhm, texts[i].awips);
    else
      snprintf(p->ident, sizeof p->ident, "%s %s %s", texts[i].ttaaii,
               texts[i].cccc, dhm);
    break;
  }
  case F_CONDUIT: {
    unsigned cycle = (unsigned)tm.tm_hour / 6 * 6, fh = 3 * pick(m, 81);
    char ymd[12];

    strftime(ymd, sizeof ymd, "%Y%m%d", &tm);
    snprintf(p->ident, sizeof p->ident,
             "data/nccf/com/gfs/prod/gfs.%s/%02u/atmos/gfs.t%02uz.pgrb2.0p25."
             "f%03u !grib2/ncep/GFS/#000/%s%02u00F%03u/%s/%s! %06u",
             ymd, cycle, cycle, fh, ymd, cycle, fh, gfs_vars[pick(m, 6)],
             gfs_levels[pick(m, 6)], p->seqno % 1000000u);
    break;
  }
  default: { /* NGRID */
    unsigned fh = pick(m, 19);
    char ymdh[12];

    strftime(ymdh, sizeof ymdh, "%Y%m%d%H", &tm);
    snprintf(p->ident, sizeof p->ident,
             "Y%c%c%c%02u KWB%c %.4s00 !grib2/ncep/%s/#130/%s00F%03u/%s/%s",
             "HTUVR"[pick(m, 5)], "ABCDEFGHIJ"[pick(m, 10)],
             "ABCDEFGHIJ"[pick(m, 10)], 10u * (1 + pick(m, 9)),
             "GEHR"[pick(m, 4)], dhm, ngrid_models[pick(m, 4)], ymdh, fh,
             gfs_vars[pick(m, 6)], gfs_levels[pick(m, 6)]);
    break;
  }
  }
}

void iddmix_next(iddmix *m, iddmix_prod *p) {
  double total = iddmix_rate();
  double u = uniform(m) * total, acc = 0;
  const iddmix_feed *fd;
  double mu, size;
  unsigned f;

  memset(p, 0, sizeof *p);
  for (f = 0; f < IDDMIX_NFEEDS - 1; f++) {
    acc += iddmix_feeds[f].rate;
    if (u < acc)
      break;
  }
  fd = &iddmix_feeds[f];
  p->gap = -log(1.0 - uniform(m)) / (total * m->scale);
  m->clock += p->gap;
  p->at = m->clock;
  p->seqno = m->seqno++;
  p->feed = f;
  p->feedtype = fd->feedtype;
  mu = log(fd->mean) - fd->sigma * fd->sigma / 2;
  size = exp(mu + fd->sigma * normal(m));
  if (size < IDDMIX_MIN_SIZE)
    size = IDDMIX_MIN_SIZE;
  if (size > (double)m->max_size)
    size = (double)m->max_size;
  p->size = (uint64_t)size;
  make_ident(m, f, p->at, p);
}

void iddmix_fill(uint64_t seed, uint32_t seqno, void *buf, size_t len) {
  uint8_t *b = buf, head[12];
  uint64_t s[4], w;
  size_t i, n;

  seed_state(s, seed ^ ((uint64_t)seqno * 0xd1b54a32d192ed03u));
  for (i = 0; i < 8; i++)
    head[i] = (uint8_t)(seed >> (8 * i));
  for (i = 0; i < 4; i++)
    head[8 + i] = (uint8_t)(seqno >> (8 * i));
  n = len < sizeof head ? len : sizeof head;
  memcpy(b, head, n);
  for (i = n; i + 8 <= len; i += 8) {
    w = xoshiro(s);
    memcpy(b + i, &w, 8);
  }
  if (i < len) {
    w = xoshiro(s);
    memcpy(b + i, &w, len - i);
  }
}
