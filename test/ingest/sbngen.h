/*
 * sbngen.h - the test tree's SBN frame generator (libsbngen, prefix sg_):
 * NOAAPORT products made by the tests themselves (text, NEXRAD level III,
 * GRIB edition 1 and 2 messages, GINI images plain or zlib-compressed),
 * split into frames, laid end to end in a stream with time-sync and test
 * frames, and perturbed (frames dropped, duplicated, swapped, damaged,
 * junk between them, the stream cut short), deterministically from a
 * seed.  With each product comes what a perfect ingester must make of it
 * (bytes, size, MD5 signature, feedtype, and the identifier of text and
 * NEXRAD products), computed here from docs/noaaport.md alone.
 *
 * It is a second implementation of the format, written from the document
 * and never linked with libnoaaport, so that a bug the two shared could
 * not hide.  Test-only: every allocation failure aborts.
 */
#ifndef TEST_INGEST_SBNGEN_H
#define TEST_INGEST_SBNGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Sizes of the headers (docs/noaaport.md, "Frames"). */
#define SG_FH_LEN 16
#define SG_PDH_LEN 16
#define SG_PSH_LEN 36
#define SG_CCB_LEN 24
#define SG_PDB_LEN 512
#define SG_BLOCK_MAX 4000 /* data bytes of an NWSTG block, its CCB included */

/* Datastreams (docs/noaaport.md, "Channels and input"). */
enum { SG_DS_GOES = 1, SG_DS_NMC = 5, SG_DS_NMC2 = 6 };

/* PDH transfer-type bits. */
enum {
  SG_TT_START = 1,
  SG_TT_PROGRESS = 2,
  SG_TT_END = 4,
  SG_TT_COMPRESSED = 16,
  SG_TT_PSH = 64,
};

/* A growable byte buffer. */
struct sg_buf {
  uint8_t *p;
  size_t n, cap;
};

void sg_buf_put(struct sg_buf *b, const void *src, size_t n);
void sg_buf_byte(struct sg_buf *b, unsigned c);
void sg_buf_str(struct sg_buf *b, const char *s);
/* v as nbytes big-endian bytes. */
void sg_buf_be(struct sg_buf *b, uint64_t v, int nbytes);
void sg_buf_free(struct sg_buf *b);

/* The deterministic generator every random choice comes from. */
struct sg_rng {
  uint64_t s;
};

void sg_rng_seed(struct sg_rng *r, uint64_t seed);
uint64_t sg_rand(struct sg_rng *r);
/* A number in [0, n), n > 0. */
uint32_t sg_below(struct sg_rng *r, uint32_t n);
/* True with probability p. */
bool sg_chance(struct sg_rng *r, double p);

enum sg_kind { SG_TEXT, SG_NEXRAD3, SG_GRIB1, SG_GRIB2, SG_GINI, SG_NKINDS };

/* What a perfect ingester makes of a product. */
struct sg_expect {
  const char *feedtype; /* LDM's name of it: "IDS|DDPLUS", "HDS", ... */
  char ident[1024];     /* "" where not computed (GRIB, GINI, graphics) */
  bool known;           /* bytes, size and md5 are known */
  struct sg_buf bytes;  /* the stored product */
  char md5[33];         /* its signature, lower-case hex */
};

/* A product ready to be split into frames. */
struct sg_product {
  enum sg_kind kind;
  uint8_t datastream;        /* frame header byte 5 */
  uint8_t type, category;    /* PSH bytes 10 and 11 */
  bool nwstg;                /* NWSTG path: block 0 starts with a CCB */
  uint8_t tt_extra;          /* transfer bits added: 16 for "satz" */
  uint8_t records_per_block; /* PDH byte 10 (GINI rows per block) */
  uint8_t blocks_per_record; /* PDH byte 11 */
  uint16_t bytes_per_record; /* PSH bytes 8-9 */
  uint32_t seqno;            /* PDH product sequence number */
  size_t nblocks;
  struct sg_buf *blocks; /* each block's data, block 0's CCB included */
  char input[512];       /* what was put in, for the manifest */
  struct sg_expect expect;
};

void sg_product_free(struct sg_product *p);

/* The communications control block of an NWSTG product. */
struct sg_ccb {
  uint8_t mode, submode, user1, user2;
};

/* A product of the NWSTG path: text, NEXRAD, GRIB. */
struct sg_nwstg {
  enum sg_kind kind;
  uint8_t datastream;     /* 0: NMC */
  uint8_t type, category; /* 0: 4 (NWSTG) and 1 (text) */
  struct sg_ccb ccb;
  const char *heading; /* WMO heading, without its CR CR LF */
  const char *pil;     /* the line after it, or NULL for none */
  const uint8_t *body; /* what follows */
  size_t body_len;
  size_t block_max; /* 0: SG_BLOCK_MAX */
};

/* Builds p (blocks and expected result) from in; p is overwritten. */
void sg_nwstg_product(struct sg_product *p, const struct sg_nwstg *in,
                      uint32_t seqno);

/* A minimal GRIB edition 1 message: indicator, a 28-byte PDS, an empty
 * BDS, "7777".  Fields as on the wire (docs/noaaport.md, "GRIB edition
 * 1"); sg_grib1_defaults gives the GFS 500 mb temperature of LDM's
 * examples. */
struct sg_grib1 {
  uint8_t table_version, centre, process, grid, flag, param;
  uint8_t level_type;
  uint16_t level; /* octets 11-12 */
  int year;       /* four digits: century and year of century */
  uint8_t month, day, hour, minute;
  uint8_t time_unit, p1, p2, time_range, subcentre;
};

void sg_grib1_defaults(struct sg_grib1 *g);
void sg_grib1(struct sg_buf *out, const struct sg_grib1 *g);

/* A minimal GRIB edition 2 message: sections 0, 1, 3 (template 3.0), 4
 * (template 4.0), 5 (template 5.0, no bits), 6 (no bitmap), 7 (empty) and
 * 8.  Values as on the wire: sign-magnitude ones (the latitudes, the
 * scaled level values) as their raw bits. */
struct sg_grib2 {
  uint8_t discipline;
  uint16_t centre, subcentre;
  uint8_t master_version, local_version;
  uint16_t year;
  uint8_t month, day, hour, minute, second;
  uint8_t grid_source; /* section 3 octet 6 */
  uint32_t ni, nj, la1, lo1, la2, lo2, di, dj;
  uint8_t res_flags, scan_mode;
  uint8_t category, number, gen_type, process, time_unit;
  uint32_t forecast;
  uint8_t level1_type, level1_scale;
  uint32_t level1_value;
  uint8_t level2_type, level2_scale;
  uint32_t level2_value;
};

void sg_grib2_defaults(struct sg_grib2 *g);
void sg_grib2(struct sg_buf *out, const struct sg_grib2 *g);

/* A GINI image (docs/noaaport.md, "Satellite names"): block 0 the heading
 * line and the 512-byte PDB, then rows_per_block rows of nx bytes a
 * block, then a block of one row of 0xF0 filler.  Compressed ("satz"):
 * block 0 the heading line and a zlib stream of heading line and PDB,
 * each later block a zlib stream of its rows. */
struct sg_gini {
  uint8_t datastream; /* 0: GOES */
  uint8_t type;       /* 0: 1 (GOES-E) */
  const char *heading;
  uint8_t source, platform, sector, channel, res;
  int year; /* four digits */
  uint8_t month, day, hour, minute, second, hundredths;
  uint16_t nx, ny;
  uint8_t rows_per_block; /* 0: as many rows as fit 4000 bytes */
  bool compressed;
  bool no_filler;        /* leave out the filler row */
  const uint8_t *pixels; /* nx * ny, row after row; NULL: zeros */
};

void sg_gini_product(struct sg_product *p, const struct sg_gini *g,
                     uint32_t seqno);

/* The expected result (docs/noaaport.md, "The product built",
 * "Feedtypes", "Identifiers"), from p's blocks and headers. */
void sg_expect(struct sg_product *p);
/* The FOS header of sequence number seqno: its 11 bytes. */
void sg_fos_header(uint8_t out[11], uint32_t seqno);
/* The ASCII test on the FOS header and data, before the trailer. */
bool sg_ascii_ok(const uint8_t *buf, size_t n);
/* The canonical heading of text (the bytes after the CCB), with its end
 * (the byte after the heading's LF) in *next; false if it does not parse. */
bool sg_heading(const uint8_t *text, size_t n, char *out, size_t outsz,
                size_t *next);
/* The PIL of the line at text[0..n), or false. */
bool sg_pil(const uint8_t *text, size_t n, char out[8]);

/* A frame in a stream, and what it belongs to. */
enum sg_frame_kind { SG_F_DATA, SG_F_TIMESYNC, SG_F_TEST, SG_F_JUNK };

struct sg_frame {
  enum sg_frame_kind kind;
  long product; /* index of its product in the stream, or -1 */
  bool damaged; /* a byte of it flipped */
  struct sg_buf b;
};

/* A stream of frames, in the order they are sent. */
struct sg_stream {
  struct sg_frame *v;
  size_t n, cap;
  uint32_t fh_seq; /* the next frame's sequence number */
  uint16_t run;    /* FH run number */
  uint8_t source;  /* FH source: 1 the primary NCF */
  long nproducts;  /* products put so far */
  size_t cut;      /* bytes kept, or SIZE_MAX */
  /* a time-sync frame after every timesync_every data frames, a test
   * frame after every test_every (0: none) */
  unsigned timesync_every, test_every;
  unsigned long ndata; /* data frames put so far */
};

void sg_stream_init(struct sg_stream *s, uint32_t first_fh_seq);
void sg_stream_free(struct sg_stream *s);
/* Appends p's frames; returns p's index in the stream. */
long sg_put_product(struct sg_stream *s, const struct sg_product *p);
void sg_put_timesync(struct sg_stream *s, uint8_t datastream);
void sg_put_test(struct sg_stream *s, uint8_t datastream);
/* The stream's bytes, cut at s->cut. */
void sg_stream_bytes(const struct sg_stream *s, struct sg_buf *out);

/* Checks a 16-byte frame header as synchronisation does: the checksum,
 * 0xFF first, a command of 3, 5 or 10 (docs/noaaport.md, "Frames"). */
bool sg_fh_valid(const uint8_t fh[SG_FH_LEN]);
/* The length of the frame at buf, from its headers, or 0 if buf[0..n) does
 * not start with a valid frame header and PDH. */
size_t sg_frame_len(const uint8_t *buf, size_t n);

/* The length of the next unit of buf[0..n), n > 0: a frame (cut at n),
 * or the run of bytes before the next valid frame header. */
size_t sg_next_unit(const uint8_t *buf, size_t n);

/* Perturbations of a stream.  Rates are per frame. */
struct sg_perturb {
  double drop, dup, swap, flip, junk;
  unsigned window;   /* a swapped frame moves by 1 to window places */
  unsigned junk_max; /* at most this many junk bytes at once */
  size_t truncate;   /* keep this many bytes, or SIZE_MAX */
};

void sg_perturb_none(struct sg_perturb *p);
/* Applies p to s from seed.  affected[k] (k < naffected) is set for each
 * product k that a perturbation touched: a perfect ingester may lose it or
 * make it with other bytes, and makes every other product exactly.  Junk
 * never holds a false frame header, and the bytes after a damaged frame's
 * start none either. */
void sg_perturb(struct sg_stream *s, const struct sg_perturb *p, uint64_t seed,
                bool *affected, size_t naffected);

/* A random product mix: weights by kind (SG_NKINDS, and one more for
 * compressed GINI), body sizes, the NWSTG datastream. */
struct sg_mix {
  unsigned weight[SG_NKINDS + 1];
  size_t min_size, max_size;
  uint8_t datastream;
};

void sg_mix_default(struct sg_mix *m);
/* A random product of the mix, sequence number seqno. */
void sg_random_product(struct sg_product *p, const struct sg_mix *m,
                       struct sg_rng *r, uint32_t seqno);

/* One manifest line of p: seqno, feedtype, size, md5, identifier, input;
 * prefix (e.g. "#affected\t") first. */
void sg_manifest_line(FILE *f, const struct sg_product *p, const char *prefix);

#endif /* TEST_INGEST_SBNGEN_H */
