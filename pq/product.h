/*
 * product.h - the data product model shared by the queue and the protocol:
 * product metadata (LDM's prod_info), feedtypes and their expressions,
 * product classes (which products a reader wants), the one-line product text
 * of LDM's logs, and MD5 signatures.
 *
 * Included by pq/pq.h; nothing here touches a queue file.  Every function is
 * thread-safe and safe across fork() unless it says otherwise.
 */
#ifndef PQ_PRODUCT_H
#define PQ_PRODUCT_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PQ_SIGLEN 16       /**< bytes of an MD5 signature */
#define PQ_ORIGIN_MAX 64   /**< LDM's HOSTNAMESIZE */
#define PQ_IDENT_MAX 255   /**< LDM's KEYSIZE */
#define PQ_PATTERN_MAX 255 /**< LDM's MAXPATTERN */
#define PQ_CLASS_MAX 32    /**< LDM's PSA_MAX: specs in a class */

/** A time with microseconds.  64-bit seconds: no 2038 limit in the queue. */
typedef struct pq_timestamp {
  int64_t sec;
  int32_t usec; /**< 0..999999 */
} pq_timestamp;

/* LDM's special times.  TS_ENDT is the largest time LDM can send. */
#define PQ_TS_NONE ((pq_timestamp){-1, -1})
#define PQ_TS_ZERO ((pq_timestamp){0, 0})
#define PQ_TS_ENDT ((pq_timestamp){0x7fffffff, 999999})

/** Now, from the real-time clock. */
pq_timestamp pq_ts_now(void);
/** <0, 0, >0 as a is before, equal to, after b. */
int pq_ts_cmp(pq_timestamp a, pq_timestamp b);
/** Microseconds since the epoch (times before it give 0). */
uint64_t pq_ts_to_us(pq_timestamp t);
pq_timestamp pq_ts_from_us(uint64_t us);

/** Metadata of a product, as LDM's prod_info, with inline strings. */
typedef struct pq_prod_info {
  pq_timestamp arrival;           /**< creation time, set by the ingester */
  uint8_t signature[PQ_SIGLEN];   /**< MD5, normally of the data */
  char origin[PQ_ORIGIN_MAX + 1]; /**< host where it entered the system */
  uint32_t feedtype;              /**< one or more feedtype bits */
  uint32_t seqno;                 /**< ingester's sequence number */
  char ident[PQ_IDENT_MAX + 1];   /**< product identifier */
  uint64_t size;                  /**< bytes of data */
} pq_prod_info;

/* ---------------------------------------------------------------------- */
/* Feedtypes                                                              */
/* ---------------------------------------------------------------------- */

#define PQ_FT_NONE 0x00000000u
#define PQ_FT_PPS 0x00000001u
#define PQ_FT_DDS 0x00000002u
#define PQ_FT_DDPLUS 0x00000003u
#define PQ_FT_HDS 0x00000004u
#define PQ_FT_IDS 0x00000008u
#define PQ_FT_SPARE 0x00000010u
#define PQ_FT_WMO 0x0000000fu
#define PQ_FT_UNIWISC 0x00000020u
#define PQ_FT_PCWS 0x00000040u
#define PQ_FT_FSL2 0x00000080u
#define PQ_FT_CONDUIT 0x00001000u
#define PQ_FT_LIGHTNING 0x00004000u
#define PQ_FT_SATELLITE 0x00010000u
#define PQ_FT_NIMAGE 0x00200000u
#define PQ_FT_NTEXT 0x00400000u
#define PQ_FT_NGRID 0x00800000u
#define PQ_FT_NOTHER 0x04000000u
#define PQ_FT_NEXRAD3 0x08000000u
#define PQ_FT_NEXRAD2 0x10000000u
#define PQ_FT_EXP 0x40000000u
#define PQ_FT_ANY 0xffffffffu

/** Results of pq_feedtype_parse(), as LDM's strfeedtypet() numbers them. */
enum pq_ft_parse {
  PQ_FT_OK = 0,
  PQ_FT_EPAREN = 1,   /**< missing right parenthesis */
  PQ_FT_ESYNTAX = 2,  /**< bad syntax or incomplete expression */
  PQ_FT_EGARBAGE = 3, /**< garbage after the expression */
  PQ_FT_EUNKNOWN = 4, /**< unknown feedtype name */
  PQ_FT_EOTHER = 5
};

/**
 * Parse a feedtype expression as LDM does: names (case-insensitive, with
 * LDM's aliases and ftN), '|' or '+' for union, '-' for difference (binds
 * tighter), '~' for complement, parentheses.  "WMO|NEXRAD" = 0x0800000F.
 * @return a value of enum pq_ft_parse; *out is set only on PQ_FT_OK.
 */
int pq_feedtype_parse(const char *expr, uint32_t *out);

/** Message for a pq_feedtype_parse() result. */
const char *pq_feedtype_strerror(int code);

/**
 * Print a feedtype as LDM does ("NEXRAD3|WMO", "ANY", "NONE", unnamed bits
 * as "|0x80000000").  Always NUL-terminates when len > 0.
 * @return the length of the full text (as snprintf), so a return >= len means
 *         it was cut.  180 bytes always suffice: the longest text, for
 *         0xff7ff3fd, is 179 characters (LDM's 128-byte buffer cuts it).
 */
int pq_feedtype_format(uint32_t feedtype, char *buf, size_t len);

/* ---------------------------------------------------------------------- */
/* Product classes                                                        */
/* ---------------------------------------------------------------------- */

/** One feedtype and ERE pair of a class. */
typedef struct pq_spec {
  uint32_t feedtype;
  char pattern[PQ_PATTERN_MAX + 1]; /**< as given (sent on the wire) */
  bool match_all;                   /**< pattern is ".*": no regexec */
  bool costly; /**< may take long to match (PQ_ERE_QUICK): matched outside
                    the queue's lock (pq_next()) */
  regex_t re;  /**< compiled (REG_EXTENDED|REG_NOSUB) */
} pq_spec;

/** A product class: creation-time window and up to 32 specs. */
typedef struct pq_class {
  pq_timestamp from;
  pq_timestamp to;
  unsigned nspecs;
  pq_spec specs[PQ_CLASS_MAX];
} pq_class;

/** Make an empty class with the window [from, to]. */
void pq_class_init(pq_class *cls, pq_timestamp from, pq_timestamp to);

/**
 * Add a spec.  The pattern is a POSIX ERE matched anywhere in the ident
 * (case-sensitive); leading ".*" are stripped from longer patterns as LDM
 * does.  On failure the class is unchanged.
 * @param errbuf, errlen  regerror() text on a bad pattern (may be NULL, 0)
 * @return 0, PQ_CLASS_EFULL (32 specs already), PQ_CLASS_ELONG (pattern too
 *         long) or PQ_CLASS_EPATTERN (bad ERE)
 */
int pq_class_add(pq_class *cls, uint32_t feedtype, const char *pattern,
                 char *errbuf, size_t errlen);
#define PQ_CLASS_EFULL 1
#define PQ_CLASS_ELONG 2
#define PQ_CLASS_EPATTERN 3

/**
 * Is the ERE safe to give regcomp()?  False for patterns whose compiled form
 * would explode (stacked or nested repetitions such as "((a{255}){255})" or
 * ".{1,30000}"), which glibc compiles in gigabytes and seconds.
 * pq_class_add() refuses such patterns as PQ_CLASS_EPATTERN.
 */
bool pq_ere_tame(const char *ere);

/**
 * The size of regcomp()'s tree for the ERE as pq_ere_tame() estimates it,
 * or UINT64_MAX if pq_ere_tame() refuses it.  It also bounds the sets of
 * states glibc's matcher keeps: a pattern of a few dozen nodes is matched
 * in microseconds, one of thousands can take seconds per identifier.
 */
uint64_t pq_ere_size(const char *ere);

/**
 * The largest pq_ere_size() matched under the queue's lock: hostile
 * patterns of that size take at most about a millisecond per identifier
 * (docs/security.md), a long list of stations in an alternation is bigger.
 */
#define PQ_ERE_QUICK 256

/**
 * The first back-reference of the ERE ("\1" to "\9" outside a bracket
 * expression: a glibc extension, not POSIX, on which glibc's matcher takes
 * exponential time), or NULL if it has none.  A pattern a peer sends, or
 * one matched against what peers send, must have none (docs/security.md).
 */
const char *pq_ere_backref(const char *ere);

/** Free the compiled patterns; the class is then empty.  Safe twice. */
void pq_class_free(pq_class *cls);

/**
 * Does the product match?  Its creation time must lie in [from, to] (or
 * [to, from] if from > to; any time for the "everything" class TS_ZERO ..
 * TS_ENDT with the one spec {ANY, ".*"}), and some spec must share a feedtype
 * bit and match the ident.
 */
bool pq_class_match(const pq_class *cls, const pq_prod_info *info);

/** Build the class LDM utilities use for -f, -p and -o/time window.
 *  @return as pq_class_add(), plus PQ_CLASS_EPATTERN for a bad pattern. */
int pq_class_simple(pq_class *cls, pq_timestamp from, pq_timestamp to,
                    uint32_t feedtype, const char *pattern, char *errbuf,
                    size_t errlen);

/* ---------------------------------------------------------------------- */
/* Text                                                                   */
/* ---------------------------------------------------------------------- */

/**
 * Print a time as LDM does: "YYYYMMDDhhmmss.uuuuuu" in UTC, or TS_NONE,
 * TS_ZERO, TS_ENDT.  @return as snprintf.  32 bytes suffice.
 */
int pq_ts_format(pq_timestamp t, char *buf, size_t len);

/**
 * LDM's one-line product text (s_prod_info):
 * "[<32 hex> ]<size %10u> <YYYYMMDDhhmmss.uuuuuu> <FEEDTYPE> <seqno %03u>
 * <ident>" with the signature only when with_sig.  @return as snprintf.  600
 * bytes suffice.
 */
int pq_prod_info_format(const pq_prod_info *info, bool with_sig, char *buf,
                        size_t len);

/** 32 lowercase hex digits and a NUL into buf[33]. */
void pq_sig_format(const uint8_t sig[PQ_SIGLEN], char buf[33]);
/** Parse 32 hex digits (either case).  @return 0, or -1 if malformed. */
int pq_sig_parse(const char *hex, uint8_t sig[PQ_SIGLEN]);

/* ---------------------------------------------------------------------- */
/* MD5 (OpenSSL's libcrypto)                                              */
/* ---------------------------------------------------------------------- */

/** MD5 of a buffer into sig.  @return 0, or -1 if libcrypto failed. */
int pq_md5(const void *data, size_t len, uint8_t sig[PQ_SIGLEN]);

/** Incremental MD5 for data read in pieces. */
typedef struct pq_md5_ctx pq_md5_ctx;
pq_md5_ctx *pq_md5_new(void);
int pq_md5_update(pq_md5_ctx *ctx, const void *data, size_t len);
/** Writes the digest and frees ctx.  @return 0 or -1. */
int pq_md5_final(pq_md5_ctx *ctx, uint8_t sig[PQ_SIGLEN]);
/** Frees ctx without a digest (safe with NULL). */
void pq_md5_free(pq_md5_ctx *ctx);

#ifdef __cplusplus
}
#endif
#endif /* PQ_PRODUCT_H */
