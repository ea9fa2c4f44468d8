/*
 * ldm6_types.h - the LDM-6 protocol as C types: ONC RPC program 300029, its
 * versions and procedures, and one C type for every XDR type of LDM's ldm.x
 * (docs/protocol.md §2 and §3), in wire order and with the wire's
 * widths: 32-bit seconds, 32-bit sizes, bounded strings.  These are the
 * shapes messages have on the wire; pq/product.h holds the richer in-memory
 * model (64-bit seconds, compiled patterns) and ldmd/proto/ldm6_xdr.h converts
 * between the two.
 *
 * Strings are stored inline, NUL-terminated, in arrays one byte longer than
 * their XDR bound, so a decoded message owns no memory.  The only pointers
 * are to product data (product.data, datapkt.data): a decoder points them
 * into the buffer it decoded (zero copy), an encoder reads through them.
 *
 * The file also holds the status codes of the protocol codec (one table for
 * ldmd/proto/ldm6_xdr.c and ldmd/proto/rpc_msg.c), named LDM6_E*: distinct from
 * the protocol's own ldm6_errt values (LDM6_OK, LDM6_RECLASS...), which travel
 * in messages.
 */
#ifndef LDMD_PROTO_LDM6_TYPES_H
#define LDMD_PROTO_LDM6_TYPES_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------- */
/* Program, versions, procedures (docs/protocol.md §2)                    */
/* ---------------------------------------------------------------------- */

#define LDM6_PROG 300029u /**< LDMPROG, 0x000493fd */
#define LDM6_VERSION4 4u  /**< FOUR: NULLPROC only (old ldmping) */
#define LDM6_VERSION5 5u  /**< FIVE: legacy, every call answered */
#define LDM6_VERSION6 6u  /**< SIX: current */

/** Procedure numbers; versions 5 and 6 share them (IS_ALIVE is v6 only). */
enum ldm6_proc {
  LDM6_NULLPROC = 0,
  LDM6_HEREIS = 1,
  LDM6_FEEDME = 4,
  LDM6_HIYA = 5,
  LDM6_NOTIFICATION = 8,
  LDM6_NOTIFYME = 9,
  LDM6_COMINGSOON = 12,
  LDM6_BLKDATA = 13,
  LDM6_IS_ALIVE = 14
};

/* ---------------------------------------------------------------------- */
/* Limits and constants (docs/protocol.md §3.2)                           */
/* ---------------------------------------------------------------------- */

#define LDM6_SIGLEN 16          /**< signaturet: opaque[16], MD5 */
#define LDM6_HOSTNAMESIZE 64    /**< bound of prod_info.origin */
#define LDM6_KEYSIZE 255        /**< bound of prod_info.ident */
#define LDM6_MAXPATTERN 255     /**< bound of prod_spec.pattern */
#define LDM6_PSA_MAX 32         /**< prod_specs in a prod_class */
#define LDM6_DBUFMAX 16384      /**< v5 packet size */
#define LDM6_RPC_OVERHEAD 72    /**< DATAPKT_RPC_OVERHEAD */
#define LDM6_MAX_RPC_BUF 262216 /**< MAX_RPC_BUF_NEEDED: 72 + 262144 */

/** feedpar.max_hereis of a primary (HEREIS) feed; 0 asks for alternate. */
#define LDM6_MAX_HEREIS_PRIMARY 0xffffffffu

/** ldm_errt: LDM's status enum; these exact values are on the wire. */
typedef enum ldm6_errt {
  LDM6_OK = 0,
  LDM6_SHUTTING_DOWN = 1, /**< v5 only */
  LDM6_BADPATTERN = 2,    /**< bad ERE in a FEEDME/NOTIFYME/HIYA class */
  LDM6_DONT_SEND = 3,     /**< COMINGSOON: "I have it or don't want it" */
  LDM6_RESEND = 4,        /**< v5 BLKDATA reply */
  LDM6_RESTART = 5,       /**< v5 BLKDATA reply */
  LDM6_REDIRECT = 6,      /**< unused */
  LDM6_RECLASS = 7        /**< "only this subset" */
} ldm6_errt;

/* ---------------------------------------------------------------------- */
/* Structures (docs/protocol.md §3.6-3.8), fields in wire order           */
/* ---------------------------------------------------------------------- */

/** timestampt: two XDR ints.  Valid: 0 <= tv_sec, 0 <= tv_usec <= 999999. */
typedef struct ldm6_timestamp {
  int32_t tv_sec;
  int32_t tv_usec;
} ldm6_timestamp;

/** prod_spec: a feedtype and a POSIX ERE (not compiled here). */
typedef struct ldm6_prod_spec {
  uint32_t feedtype;
  char pattern[LDM6_MAXPATTERN + 1];
} ldm6_prod_spec;

/** prod_class_t: creation-time window and up to 32 specs. */
typedef struct ldm6_prod_class {
  ldm6_timestamp from;
  ldm6_timestamp to;
  uint32_t psa_len; /**< 0..LDM6_PSA_MAX */
  ldm6_prod_spec psa[LDM6_PSA_MAX];
} ldm6_prod_class;

/** feedpar_t: the FEEDME argument.  prod_class is a pointer in ldm.x,
 *  encoded inline with no presence word. */
typedef struct ldm6_feedpar {
  ldm6_prod_class prod_class;
  uint32_t max_hereis; /**< > 0x7fffffff: primary (HEREIS); else alternate */
} ldm6_feedpar;

/** prod_info: product metadata as sent. */
typedef struct ldm6_prod_info {
  ldm6_timestamp arrival; /**< creation time at the origin */
  uint8_t signature[LDM6_SIGLEN];
  char origin[LDM6_HOSTNAMESIZE + 1];
  uint32_t feedtype;
  uint32_t seqno;
  char ident[LDM6_KEYSIZE + 1];
  uint32_t sz; /**< bytes of data */
} ldm6_prod_info;

/** product: metadata, then info.sz bytes of data with no length word. */
typedef struct ldm6_product {
  ldm6_prod_info info;
  const void *data; /**< info.sz bytes; not owned (see the file comment) */
} ldm6_product;

/** comingsoon_args: infop (a pointer in ldm.x, inline) and pktsz. */
typedef struct ldm6_comingsoon_args {
  ldm6_prod_info info;
  uint32_t pktsz; /**< v6 sets info.sz; receivers ignore it */
} ldm6_comingsoon_args;

/** datapkt: BLKDATA argument.  data is a dbuf: length word, then bytes. */
typedef struct ldm6_datapkt {
  uint8_t signature[LDM6_SIGLEN]; /**< signaturep: pointer, inline */
  uint32_t pktnum;
  uint32_t data_len;
  const void *data; /**< data_len bytes; not owned */
} ldm6_datapkt;

/** datapktd: the v5 RESEND arm of ldm_replyt. */
typedef struct ldm6_datapktd {
  uint8_t signature[LDM6_SIGLEN];
  uint32_t pktnum;
} ldm6_datapktd;

/** ldm_addrt, the discriminant of rendezvoust (v5 REDIRECT; unused). */
typedef enum ldm6_addrt {
  LDM6_ADDR_NONE = 0,
  LDM6_ADDR_RPC = 1,
  LDM6_ADDR_IP = 2
} ldm6_addrt;

typedef struct ldm6_addr_rpc {
  char hostname[LDM6_HOSTNAMESIZE + 1];
  uint32_t prog; /**< u_long in ldm.x: 4 bytes on the wire */
  uint32_t vers;
} ldm6_addr_rpc;

typedef struct ldm6_addr_ip {
  int32_t protocol;
  uint16_t port; /**< u_short: a 4-byte word on the wire */
  uint32_t addr;
} ldm6_addr_ip;

typedef struct ldm6_rendezvous {
  ldm6_addrt type;
  union {
    ldm6_addr_rpc rpc; /**< LDM6_ADDR_RPC */
    ldm6_addr_ip ip;   /**< LDM6_ADDR_IP */
  } u;
} ldm6_rendezvous;

/* ---------------------------------------------------------------------- */
/* Results (docs/protocol.md §3.10)                                       */
/* ---------------------------------------------------------------------- */

/** fornme_reply_t: FEEDME/NOTIFYME result.  code is OK, BADPATTERN or
 *  RECLASS; any other value neither encodes nor decodes. */
typedef struct ldm6_fornme_reply {
  ldm6_errt code;
  union {
    uint32_t id;                /**< OK: pid of the upstream process */
    ldm6_prod_class prod_class; /**< RECLASS (empty class: denied) */
  } u;
} ldm6_fornme_reply;

/** hiya_reply_t: HIYA result.  code is OK, DONT_SEND or RECLASS. */
typedef struct ldm6_hiya_reply {
  ldm6_errt code;
  union {
    uint32_t max_hereis;  /**< OK */
    ldm6_feedpar feedpar; /**< RECLASS: accepted class, max_hereis */
  } u;
} ldm6_hiya_reply;

/** comingsoon_reply_t: a bare ldm_errt (OK or DONT_SEND in v6). */
typedef ldm6_errt ldm6_comingsoon_reply;

/** ldm_replyt: every v5 result.  OK, SHUTTING_DOWN, BADPATTERN and
 *  DONT_SEND carry nothing. */
typedef struct ldm6_replyt {
  ldm6_errt code;
  union {
    ldm6_datapktd resend;         /**< RESEND */
    uint8_t restart[LDM6_SIGLEN]; /**< RESTART: a signature */
    ldm6_rendezvous redirect;     /**< REDIRECT */
    ldm6_prod_class reclass;      /**< RECLASS */
  } u;
} ldm6_replyt;

/* ---------------------------------------------------------------------- */
/* Codec status codes                                                     */
/* ---------------------------------------------------------------------- */

/*
 * The codec's status table: X(name, value, message).  Every function of
 * ldm6_xdr.h and rpc_msg.h that can fail returns 0 or one of these negative
 * codes; ldm6_strerror() gives the message.
 */
#define LDM6_ERROR_MAP(X)                                                      \
  X(LDM6_XDR_OK, 0, "LDM6_XDR_OK: success")                                    \
  X(LDM6_ESHORT, -1, "LDM6_ESHORT: message ends before the value does")        \
  X(LDM6_EBOUND, -2, "LDM6_EBOUND: string or array longer than its bound")     \
  X(LDM6_ENUL, -3, "LDM6_ENUL: string with a NUL byte inside")                 \
  X(LDM6_ETIME, -4, "LDM6_ETIME: timestamp outside TS_ZERO..TS_ENDT")          \
  X(LDM6_EVALUE, -5,                                                           \
    "LDM6_EVALUE: enum value or union discriminant not allowed here")          \
  X(LDM6_ENOSPACE, -6, "LDM6_ENOSPACE: output buffer too small")               \
  X(LDM6_ERANGE, -7, "LDM6_ERANGE: value does not fit its wire type")          \
  X(LDM6_EPATTERN, -8, "LDM6_EPATTERN: pattern is not a valid ERE")            \
  X(LDM6_EPROC, -9, "LDM6_EPROC: procedure not in that program version")       \
  X(LDM6_EINVAL, -10, "LDM6_EINVAL: invalid argument")                         \
  X(LDM6_EMSG, -11, "LDM6_EMSG: malformed ONC RPC message header")             \
  X(LDM6_ETOOBIG, -12, "LDM6_ETOOBIG: RPC record longer than allowed")         \
  X(LDM6_ENOMEM, -13, "LDM6_ENOMEM: out of memory")

enum ldm6_status {
#define LDM6__ENUM(name, value, msg) name = (value),
  LDM6_ERROR_MAP(LDM6__ENUM)
#undef LDM6__ENUM
      LDM6_ERROR_MIN = -13
};

/** Message of a status code ("LDM6_UNKNOWN: ..." for other values).
 *  A static string; thread-safe. */
const char *ldm6_strerror(int code);

/** LDM's name of an ldm_errt value as it logs it ("OK", "BAD_PATTERN",
 *  "DONT_SEND", ...), or "UNKNOWN".  A static string; thread-safe. */
const char *ldm6_errt_name(int code);

#ifdef __cplusplus
}
#endif
#endif /* LDMD_PROTO_LDM6_TYPES_H */
