/*
 * sbngen_main.c - sbngen, the test tree's SBN stream generator (not
 * installed): random NOAAPORT products of a mix of kinds, split into
 * frames laid end to end, optionally perturbed, written to a file or
 * standard output; and the manifest of the products a perfect ingester
 * must make of the stream (libsbngen, sbngen.h).
 *
 *   sbngen [-n products] [-k kind=weight,...] [-s min:max] [-S seed]
 *          [-c datastream] [-q first-product-seqno] [-f first-frame-seqno]
 *          [-t every] [-T every] [-p perturbation=value,...]
 *          [-o stream] [-m manifest]
 *
 * Kinds: text, nexrad3, grib1, grib2, gini, satz.  Perturbations: drop,
 * dup, swap, flip, junk (rates per frame), window (swap distance), junklen
 * (most junk bytes at once), truncate (bytes kept).  -t and -T put a
 * time-sync or test frame after every that many data frames.  The seed is
 * -S, else PQ_TEST_SEED, else a fresh one; it is printed, and the same
 * seed and options give the same bytes.
 *
 * The manifest is TSV, one product a line: seqno, feedtype, size, md5,
 * identifier (empty where not computed: GRIB, GINI), what was put in.
 * Lines starting with '#' are comments: the seed and options, the column
 * names, and "#affected" lines, products a perturbation touched, which
 * an ingester may lose or make with other bytes.
 */
#include "test/ingest/sbngen.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct options {
  unsigned long count;
  struct sg_mix mix;
  uint64_t seed;
  uint32_t seqno, fh_seq;
  unsigned timesync, test;
  struct sg_perturb perturb;
  const char *out, *manifest;
};

static void usage(void) {
  fprintf(stderr,
          "usage: sbngen [-n products] [-k kind=weight,...] [-s min:max] "
          "[-S seed]\n"
          "              [-c datastream] [-q first-seqno] [-f first-frame] "
          "[-t every]\n"
          "              [-T every] [-p perturbation=value,...] [-o stream]"
          " [-m manifest]\n");
  exit(1);
}

static unsigned long long number(const char *s, const char *what) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 0);

  if (errno || end == s || *end || *s == '-') {
    fprintf(stderr, "sbngen: bad %s: %s\n", what, s);
    exit(1);
  }
  return v;
}

static double rate(const char *s, const char *what) {
  char *end;
  double v = strtod(s, &end);

  if (end == s || *end || !(v >= 0 && v <= 1)) {
    fprintf(stderr, "sbngen: bad %s rate: %s\n", what, s);
    exit(1);
  }
  return v;
}

/* "kind=weight,...": the kinds not named get weight 0. */
static void parse_kinds(struct sg_mix *m, char *arg) {
  static const char *const names[] = {"text",  "nexrad3", "grib1",
                                      "grib2", "gini",    "satz"};
  unsigned total = 0;

  memset(m->weight, 0, sizeof m->weight);
  for (char *tok = strtok(arg, ","); tok; tok = strtok(NULL, ",")) {
    char *eq = strchr(tok, '=');
    size_t k = 0;
    if (eq)
      *eq = 0;
    while (k <= SG_NKINDS && strcmp(tok, names[k]) != 0)
      k++;
    if (k > SG_NKINDS) {
      fprintf(stderr, "sbngen: unknown kind %s\n", tok);
      exit(1);
    }
    m->weight[k] = eq ? (unsigned)number(eq + 1, "weight") : 1;
    total += m->weight[k];
  }
  if (total == 0) {
    fprintf(stderr, "sbngen: -k gives no kind a weight\n");
    exit(1);
  }
}

static void parse_perturb(struct sg_perturb *p, char *arg) {
  for (char *tok = strtok(arg, ","); tok; tok = strtok(NULL, ",")) {
    char *eq = strchr(tok, '=');
    if (eq == NULL)
      usage();
    *eq++ = 0;
    if (strcmp(tok, "drop") == 0)
      p->drop = rate(eq, tok);
    else if (strcmp(tok, "dup") == 0)
      p->dup = rate(eq, tok);
    else if (strcmp(tok, "swap") == 0)
      p->swap = rate(eq, tok);
    else if (strcmp(tok, "flip") == 0)
      p->flip = rate(eq, tok);
    else if (strcmp(tok, "junk") == 0)
      p->junk = rate(eq, tok);
    else if (strcmp(tok, "window") == 0)
      p->window = (unsigned)number(eq, tok);
    else if (strcmp(tok, "junklen") == 0)
      p->junk_max = (unsigned)number(eq, tok);
    else if (strcmp(tok, "truncate") == 0)
      p->truncate = (size_t)number(eq, tok);
    else
      usage();
  }
}

static void parse_sizes(struct sg_mix *m, const char *arg) {
  char lo[32];
  const char *colon = strchr(arg, ':');

  if (colon == NULL || (size_t)(colon - arg) >= sizeof lo)
    usage();
  memcpy(lo, arg, (size_t)(colon - arg));
  lo[colon - arg] = 0;
  m->min_size = (size_t)number(lo, "size");
  m->max_size = (size_t)number(colon + 1, "size");
  if (m->min_size > m->max_size || m->max_size > 10000000)
    usage();
}

/* -S, else PQ_TEST_SEED, else a fresh seed. */
static uint64_t fresh_seed(void) {
  const char *env = getenv("PQ_TEST_SEED");
  uint64_t seed = 0;
  FILE *f;

  if (env != NULL && *env)
    return number(env, "PQ_TEST_SEED");
  f = fopen("/dev/urandom", "rb");
  if (f == NULL || fread(&seed, sizeof seed, 1, f) != 1) {
    fprintf(stderr, "sbngen: no /dev/urandom\n");
    exit(1);
  }
  fclose(f);
  return seed >> 1; /* printable as a signed number too */
}

static void parse(struct options *o, int argc, char **argv) {
  bool seeded = false;
  int c;

  memset(o, 0, sizeof *o);
  o->count = 10;
  o->seqno = o->fh_seq = 1;
  sg_mix_default(&o->mix);
  sg_perturb_none(&o->perturb);
  while ((c = getopt(argc, argv, "n:k:s:S:c:q:f:t:T:p:o:m:")) != -1) {
    switch (c) {
    case 'n':
      o->count = (unsigned long)number(optarg, "count");
      break;
    case 'k':
      parse_kinds(&o->mix, optarg);
      break;
    case 's':
      parse_sizes(&o->mix, optarg);
      break;
    case 'S':
      o->seed = number(optarg, "seed");
      seeded = true;
      break;
    case 'c':
      o->mix.datastream = (uint8_t)number(optarg, "datastream");
      break;
    case 'q':
      o->seqno = (uint32_t)number(optarg, "seqno");
      break;
    case 'f':
      o->fh_seq = (uint32_t)number(optarg, "frame seqno");
      break;
    case 't':
      o->timesync = (unsigned)number(optarg, "time-sync interval");
      break;
    case 'T':
      o->test = (unsigned)number(optarg, "test-frame interval");
      break;
    case 'p':
      parse_perturb(&o->perturb, optarg);
      break;
    case 'o':
      o->out = optarg;
      break;
    case 'm':
      o->manifest = optarg;
      break;
    default:
      usage();
    }
  }
  if (optind != argc)
    usage();
  if (o->mix.datastream < 3 || o->mix.datastream > 13) {
    fprintf(stderr, "sbngen: -c takes an NWSTG-path datastream, 3 to 13\n");
    exit(1);
  }
  if (!seeded)
    o->seed = fresh_seed();
}

static FILE *open_out(const char *path, const char *what) {
  FILE *f = fopen(path, "wb");

  if (f == NULL) {
    fprintf(stderr, "sbngen: %s %s: %s\n", what, path, strerror(errno));
    exit(1);
  }
  return f;
}

static void write_manifest(FILE *f, const struct options *o,
                           struct sg_product *v, const bool *affected) {
  fprintf(f, "# sbngen seed=%llu products=%lu\n", (unsigned long long)o->seed,
          o->count);
  fprintf(f, "#seqno\tfeedtype\tsize\tmd5\tident\tinput\n");
  for (unsigned long i = 0; i < o->count; i++)
    if (!affected[i])
      sg_manifest_line(f, &v[i], "");
  for (unsigned long i = 0; i < o->count; i++)
    if (affected[i])
      sg_manifest_line(f, &v[i], "#affected\t");
}

static void generate(const struct options *o, FILE *out, FILE *manifest) {
  struct sg_product *v = calloc(o->count ? o->count : 1, sizeof *v);
  bool *affected = calloc(o->count ? o->count : 1, sizeof *affected);
  struct sg_stream s;
  struct sg_rng r;
  struct sg_buf bytes = {0};

  if (v == NULL || affected == NULL)
    abort();
  sg_rng_seed(&r, o->seed);
  sg_stream_init(&s, o->fh_seq);
  s.timesync_every = o->timesync;
  s.test_every = o->test;
  for (unsigned long i = 0; i < o->count; i++) {
    sg_random_product(&v[i], &o->mix, &r, o->seqno + (uint32_t)i);
    sg_put_product(&s, &v[i]);
  }
  sg_perturb(&s, &o->perturb, o->seed ^ 0x5DEECE66DULL, affected, o->count);
  sg_stream_bytes(&s, &bytes);
  if ((bytes.n > 0 && fwrite(bytes.p, 1, bytes.n, out) != bytes.n) ||
      fflush(out) != 0) {
    fprintf(stderr, "sbngen: writing the stream: %s\n", strerror(errno));
    exit(1);
  }
  write_manifest(manifest, o, v, affected);
  for (unsigned long i = 0; i < o->count; i++)
    sg_product_free(&v[i]);
  free(v);
  free(affected);
  sg_buf_free(&bytes);
  sg_stream_free(&s);
}

int main(int argc, char **argv) {
  struct options o;
  char path[4096];

  parse(&o, argc, argv);
  if (o.manifest == NULL && o.out == NULL) {
    fprintf(stderr, "sbngen: -m is needed when the stream goes to "
                    "standard output\n");
    return 1;
  }
  if (o.manifest == NULL) {
    snprintf(path, sizeof path, "%s.tsv", o.out);
    o.manifest = path;
  }
  fprintf(stderr, "sbngen: seed %llu (-S %llu replays this run)\n",
          (unsigned long long)o.seed, (unsigned long long)o.seed);
  FILE *out = o.out ? open_out(o.out, "stream") : stdout;
  FILE *manifest = open_out(o.manifest, "manifest");
  generate(&o, out, manifest);
  if (fclose(manifest) != 0 || (out != stdout && fclose(out) != 0)) {
    fprintf(stderr, "sbngen: %s\n", strerror(errno));
    return 1;
  }
  return 0;
}
