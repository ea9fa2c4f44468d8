/*
 * iddmix.h - an IDD-like product stream: the 2024 feed mix of the IDD
 * (the table below), as a reproducible sequence of products with the
 * sizes, rates, feedtypes and identifiers of the real feeds.
 *
 *   feed        feedtype       products/s  mean size  lognormal sigma
 *   NEXRAD2     NEXRAD2          30.0        96 kB      0.6
 *   NEXRAD3     NEXRAD3          25.0        42 kB      1.0
 *   SATELLITE   SATELLITE         1.8       2.3 MB      1.2
 *   NIMAGE      NIMAGE            2.0       1.1 MB      1.0
 *   text        IDS|DDPLUS       12.0       1.5 kB      0.8
 *   CONDUIT     CONDUIT          15.2       300 kB      1.0
 *   NGRID       NGRID            23.0       120 kB      1.0
 *
 * These rates are the 2024 average, 109 products/s and 17.6 MB/s (17.45
 * once sizes are capped at 20 MB); the 2024 peak hour (34.5 MB/s) is
 * IDDMIX_PEAK times them.  A stream of scale
 * s has every rate multiplied by s.  Products arrive as one Poisson process
 * whose feed is drawn by rate; sizes are lognormal around each feed's mean
 * (kB and MB are decimal), at least 64 bytes and at most
 * 20 MB.  Identifiers follow the real feeds' forms ("SDUS54 KLZK 181602
 * /pN0QLZK", "L2-BZIP2/KFTG/20240418160213/42/7/I/V06/0"...), with times
 * that advance with the stream from 2024-04-18 16:00 UTC.
 *
 * Everything follows from the seed: the same seed gives the same feeds,
 * sizes, gaps, identifiers and bytes.  The content of each product is
 * pseudo-random bytes drawn from (seed, sequence number), with both written
 * in its first 12 bytes, so no two products of a stream, nor of streams of
 * different seeds, have the same MD5.
 *
 * No I/O, no allocation; one iddmix per thread.  Safe across fork().
 */
#ifndef TEST_BENCH_IDDMIX_H
#define TEST_BENCH_IDDMIX_H

#include <stddef.h>
#include <stdint.h>

#define IDDMIX_NFEEDS 7
/** The 2024 peak hour over the average: 34.5 / 17.6 MB/s. */
#define IDDMIX_PEAK (34.5 / 17.6)
/** Largest product, bytes (NIMAGE's 20 MB images). */
#define IDDMIX_MAX_SIZE 20000000u
#define IDDMIX_MIN_SIZE 64u

/** One feed of the mix. */
typedef struct iddmix_feed {
  const char *name;  /**< "NEXRAD2" */
  uint32_t feedtype; /**< LDM feedtype bits (pq/product.h) */
  double rate;       /**< products/s at the 2024 average */
  double mean;       /**< mean size, bytes */
  double sigma;      /**< of the lognormal */
} iddmix_feed;

/** The feeds, in the order of the table above. */
extern const iddmix_feed iddmix_feeds[IDDMIX_NFEEDS];

/** Products/s and bytes/s of a stream of scale 1 (the 2024 average). */
double iddmix_rate(void);
double iddmix_byte_rate(void);

/** The state of a stream; fields are private. */
typedef struct iddmix {
  uint64_t seed;
  uint64_t rng[4];   /* xoshiro256** */
  double scale;      /* rates multiplied by this */
  double clock;      /* stream time, seconds since its start */
  uint32_t seqno;    /* of the next product */
  uint64_t max_size; /* sizes capped here */
} iddmix;

/** One product of the stream. */
typedef struct iddmix_prod {
  uint32_t seqno; /**< 0, 1, 2... */
  unsigned feed;  /**< index in iddmix_feeds */
  uint32_t feedtype;
  uint64_t size;   /**< bytes */
  double gap;      /**< seconds after the previous product */
  double at;       /**< seconds after the start of the stream */
  char ident[256]; /**< identifier, as the real feed writes it */
} iddmix_prod;

/**
 * Start a stream.
 * @param seed      any value; the stream is a function of it
 * @param scale     rates relative to the 2024 average (> 0)
 * @param max_size  cap on sizes (IDDMIX_MAX_SIZE; smaller for demos)
 */
void iddmix_init(iddmix *m, uint64_t seed, double scale, uint64_t max_size);

/** Change the scale from the next product on (the sequence of feeds and
 *  sizes goes on; only the gaps shrink or grow). */
void iddmix_set_scale(iddmix *m, double scale);

/** The next product's metadata (not its bytes). */
void iddmix_next(iddmix *m, iddmix_prod *p);

/**
 * The bytes of product seqno of the stream of that seed: 8 bytes of seed,
 * 4 of seqno (little-endian), then pseudo-random bytes.  Fast (a few GB/s).
 */
void iddmix_fill(uint64_t seed, uint32_t seqno, void *buf, size_t len);

#endif /* TEST_BENCH_IDDMIX_H */
