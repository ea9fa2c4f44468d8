/*
 * gini_name.c - the identifier of a product on the GOES path, as LDM 6.15
 * makes it: the heading line of its first block, the GINI
 * product-definition block (PDB) that follows it in the clear or inside a
 * zlib stream ("satz" products), and the name
 * "<sat>/ch<type>/<platform>/<channel>/<YYYYMMDD> <hhmm>/<sector>/<res>km/
 * <heading>" with LDM's shared decimal buffer (docs/noaaport.md, sections
 * "Frames" and "Satellite names").  Inflating is bounded as LDM bounds it
 * (540 bytes in, 6000 out, the stream's end required) and by the bytes
 * present; PDB bytes the block or the stream does not hold read as 0
 * (docs section "Hostile input").
 */
#include "pqutils/ingest/gini_name.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define ZLIB_CONST
#include <zlib.h>

#include "pqutils/ingest/code_table.h"

#define HEADING_MAX 512 /* bytes LDM scans for the heading's LF */
#define INFLATE_IN 540
#define INFLATE_OUT 6000
#define LDM_NAME_MAX 254 /* LDM's name buffer, less its snprintf margin */

static struct np_code_table platforms, channels, sectors;
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static void load_tables(void) {
  np_code_table_load(&platforms, "gini-platforms.tsv");
  np_code_table_load(&channels, "gini-channels.tsv");
  np_code_table_load(&sectors, "gini-sectors.tsv");
}

/* The heading: the first line's bytes, those below 0x20 dropped.
 * @return the offset of the byte after its LF (where the PDB starts) */
static size_t read_heading(const uint8_t *b, size_t n,
                           char out[HEADING_MAX + 1]) {
  size_t i = 0, k = 0;
  while (i < HEADING_MAX && i < n && b[i] != '\n') {
    if (b[i] >= 0x20)
      out[k++] = (char)b[i];
    i++;
  }
  out[k] = '\0';
  return i + 1;
}

/* Inflate the stream at z[0, n) into out; the PDB follows the first LF of
 * what it gives.  @return the PDB's offset in out, or -1 (logged) */
static long inflate_pdb(const uint8_t *z, size_t n, uint8_t *out,
                        size_t *out_len, const struct np_log *lg) {
  z_stream s;
  memset(&s, 0, sizeof s);
  int rc = inflateInit(&s);
  if (rc != Z_OK) {
    np_log(lg, NP_ERROR, "inflateInit error: %d", rc);
    return -1;
  }
  s.next_in = z;
  s.avail_in = (uInt)(n < INFLATE_IN ? n : INFLATE_IN);
  s.next_out = out;
  s.avail_out = INFLATE_OUT;
  rc = inflate(&s, Z_NO_FLUSH);
  *out_len = s.total_out;
  inflateEnd(&s);
  if (rc != Z_STREAM_END) {
    if (rc != Z_OK) /* LDM reports only a zlib error */
      np_log(lg, NP_ERROR, "large inflate error: %d", rc);
    return -1;
  }
  const uint8_t *lf = memchr(out, '\n', *out_len);
  return lf != NULL ? (long)(lf - out) + 1 : -1;
}

/* The PDB fields from p[0, n); bytes past n read as 0. */
static void read_pdb(const uint8_t *p, size_t n, struct np_gini_pdb *pdb) {
  uint8_t b[43];
  for (size_t i = 0; i < sizeof b; i++)
    b[i] = i < n ? p[i] : 0;
  pdb->source = b[0];
  pdb->platform = b[1];
  pdb->sector = b[2];
  pdb->channel = b[3];
  pdb->nrecords = (uint16_t)(b[4] << 8 | b[5]);
  pdb->record_size = (uint16_t)(b[6] << 8 | b[7]);
  pdb->year = b[8] > 70 ? 1900 + b[8] : 2000 + b[8];
  pdb->month = b[9];
  pdb->day = b[10];
  pdb->hour = b[11];
  pdb->minute = b[12];
  pdb->second = b[13];
  pdb->hundredths = b[14];
  pdb->nx = (uint16_t)(b[16] << 8 | b[17]);
  pdb->ny = (uint16_t)(b[18] << 8 | b[19]);
  pdb->res_km = b[41];
  pdb->compression = b[42];
}

/* The platform, channel and sector names: every one that falls back to
 * decimal shows the number of the leftmost one that does (LDM's shared
 * buffer; docs/noaaport.md, section "Satellite names"). */
static void code_names(const struct np_gini_pdb *pdb, char plat[32],
                       char chan[32], char sect[32]) {
  pthread_once(&tables_once, load_tables);
  char *name[3] = {plat, chan, sect};
  bool dec[3];
  dec[0] = np_code_name(&platforms, pdb->platform, plat, 32);
  dec[1] = np_code_name(&channels, pdb->channel, chan, 32);
  dec[2] = np_code_name(&sectors, pdb->sector, sect, 32);
  const char *shown = NULL;
  for (int i = 0; i < 3; i++) {
    if (!dec[i])
      continue;
    if (shown == NULL)
      shown = name[i];
    else
      memmove(name[i], shown, strlen(shown) + 1);
  }
}

static void make_name(const struct np_gini_pdb *pdb, int type, bool compressed,
                      const char *heading, char *name, size_t size) {
  char plat[32], chan[32], sect[32], buf[LDM_NAME_MAX + 1];
  code_names(pdb, plat, chan, sect);
  snprintf(buf, sizeof buf, "%s/ch%d/%s/%s/%04d%02d%02d %02d%02d/%s/%dkm/ %s",
           compressed ? "satz" : "sat", type, plat, chan, pdb->year, pdb->month,
           pdb->day, pdb->hour, pdb->minute, sect, pdb->res_km, heading);
  snprintf(name, size, "%s", buf);
}

int np_gini_name(const uint8_t *block, size_t n, int type, bool compressed,
                 char *name, size_t name_size, struct np_gini_pdb *pdb,
                 struct np_namer *nm) {
  const struct np_log *lg = nm != NULL ? nm->log : NULL;
  char heading[HEADING_MAX + 1];
  static const uint8_t none[1];
  memset(pdb, 0, sizeof *pdb);
  if (name_size > 0)
    name[0] = '\0';
  pdb->heading_len = read_heading(block, n, heading);
  if (pdb->heading_len > 1)
    np_log(lg, NP_INFO, "%s %zu", heading, n);
  const uint8_t *p = pdb->heading_len < n ? block + pdb->heading_len : none;
  size_t pn = pdb->heading_len < n ? n - pdb->heading_len : 0;
  uint8_t raw[INFLATE_OUT];
  if (compressed) {
    size_t len = 0;
    long off = inflate_pdb(p, pn, raw, &len, lg);
    if (off < 0) {
      np_log(lg, NP_ERROR, "Error reading pdb, punt");
      return -1;
    }
    p = raw + off;
    pn = len - (size_t)off;
  }
  read_pdb(p, pn, pdb);
  if (pdb->nx < 1 || pdb->ny < 1) {
    np_log(lg, NP_ERROR, "Error reading pdb, punt");
    return -1;
  }
  make_name(pdb, type, compressed, heading, name, name_size);
  return 0;
}
