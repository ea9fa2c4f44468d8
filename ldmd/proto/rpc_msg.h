/*
 * rpc_msg.h - ONC RPC version 2 (RFC 5531) as LDM speaks it over TCP:
 * message headers (CALL, and every REPLY form LDM produces) and record
 * marking (docs/protocol.md §1).
 *
 * HEADERS.  A CALL header is 40 bytes with AUTH_NONE: xid, 0 (CALL), 2,
 * prog, vers, proc, credential and verifier (flavor and length each).  A
 * successful REPLY header is 24 bytes: xid, 1 (REPLY), 0 (MSG_ACCEPTED),
 * the verifier, 0 (SUCCESS); the results follow.  LDM's error replies are
 * PROG_MISMATCH (with the low and high versions), PROC_UNAVAIL,
 * GARBAGE_ARGS, SYSTEM_ERR, and MSG_DENIED/AUTH_ERROR/AUTH_TOOWEAK, its "not
 * allowed" answer.  The decoder reads any header, call or reply, and says
 * where the arguments or results begin.
 *
 * RECORDS.  On TCP every message is one record made of fragments, each
 * preceded by a 4-byte big-endian mark: bit 31 set on the last fragment,
 * bits 0..30 the fragment's length.  LDM sends large products as many
 * fragments.  ldm6_rpc_framer reassembles records from a byte stream fed in
 * pieces of any size, refusing a record longer than a maximum as soon as a
 * mark announces it (the caller then closes the connection), so a peer
 * cannot make it buffer without bound.  ldm6_rpc_record_iov() lays a record out
 * for writev(): header and metadata from one buffer, product data from
 * another (the queue's mapping), cut into fragments of a chosen size.
 *
 * ONE-WAY CALLS.  LDM-6's HEREIS, NOTIFICATION and BLKDATA are never
 * answered, yet a peer may answer them anyway (notifyme answers every
 * NOTIFICATION with PROC_UNAVAIL): a caller waiting for a reply keeps only
 * the one whose xid it waits for and discards the others
 * (ldm6_rpc_reply_is_awaited()).  A refusal (MSG_DENIED/AUTH_ERROR) ends
 * the wait whatever its xid: LDM and ldmd refuse a peer with xid 0 before
 * they read its call (ldm6_rpc_reply_is_refusal()).
 *
 * Functions return 0 or a negative LDM6_E* code (ldmd/proto/ldm6_types.h).  A
 * framer is one connection's state: not thread-safe, owned by its caller;
 * everything else is stateless, thread-safe and fork-safe.  Nothing logs.
 */
#ifndef LDMD_PROTO_RPC_MSG_H
#define LDMD_PROTO_RPC_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "ldmd/proto/ldm6_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* msg_type */
#define LDM6_RPC_CALL 0u
#define LDM6_RPC_REPLY 1u
#define LDM6_RPC_VERSION 2u /**< rpcvers of ONC RPC v2 */

/* reply_stat */
#define LDM6_RPC_MSG_ACCEPTED 0u
#define LDM6_RPC_MSG_DENIED 1u

/* accept_stat */
#define LDM6_RPC_SUCCESS 0u
#define LDM6_RPC_PROG_UNAVAIL 1u
#define LDM6_RPC_PROG_MISMATCH 2u
#define LDM6_RPC_PROC_UNAVAIL 3u
#define LDM6_RPC_GARBAGE_ARGS 4u
#define LDM6_RPC_SYSTEM_ERR 5u

/* reject_stat */
#define LDM6_RPC_RPC_MISMATCH 0u
#define LDM6_RPC_AUTH_ERROR 1u

/* auth_stat (the ones LDM meets) and flavors */
#define LDM6_RPC_AUTH_BADCRED 1u
#define LDM6_RPC_AUTH_TOOWEAK 5u
#define LDM6_RPC_AUTH_NONE 0u
#define LDM6_RPC_MAX_AUTH_BYTES 400u /**< bound of an opaque_auth body */

#define LDM6_RPC_CALL_HDR_LEN 40u    /**< CALL header with AUTH_NONE */
#define LDM6_RPC_SUCCESS_HDR_LEN 24u /**< accepted SUCCESS REPLY header */
#define LDM6_RPC_MARK_LEN 4u
#define LDM6_RPC_LAST_FRAG 0x80000000u
#define LDM6_RPC_FRAG_MAX 0x7fffffffu /**< longest fragment a mark can give */

/** opaque_auth.  body points into the decoded buffer (or, to encode, at
 *  len bytes the caller owns). */
typedef struct ldm6_rpc_auth {
  uint32_t flavor;
  uint32_t len; /**< 0..LDM6_RPC_MAX_AUTH_BYTES */
  const uint8_t *body;
} ldm6_rpc_auth;

typedef struct ldm6_rpc_call {
  uint32_t rpcvers; /**< 2; anything else deserves RPC_MISMATCH */
  uint32_t prog;
  uint32_t vers;
  uint32_t proc;
  ldm6_rpc_auth cred;
  ldm6_rpc_auth verf;
} ldm6_rpc_call;

typedef struct ldm6_rpc_reply {
  uint32_t reply_stat; /**< LDM6_RPC_MSG_ACCEPTED or LDM6_RPC_MSG_DENIED */
  /* MSG_ACCEPTED */
  ldm6_rpc_auth verf;
  uint32_t accept_stat; /**< LDM6_RPC_SUCCESS...; other values have no body */
  /* MSG_DENIED */
  uint32_t reject_stat; /**< LDM6_RPC_RPC_MISMATCH or LDM6_RPC_AUTH_ERROR */
  uint32_t auth_stat;   /**< AUTH_ERROR */
  /* PROG_MISMATCH or RPC_MISMATCH */
  uint32_t low;
  uint32_t high;
} ldm6_rpc_reply;

/** A message header; the arguments or results follow it. */
typedef struct ldm6_rpc_msg {
  uint32_t xid;
  uint32_t type; /**< LDM6_RPC_CALL or LDM6_RPC_REPLY */
  union {
    ldm6_rpc_call call;
    ldm6_rpc_reply reply;
  } u;
} ldm6_rpc_msg;

/**
 * Decode a header (call or reply) from the start of a record.
 * @param used  set to the header's length: the arguments (of a call) or the
 *              results (of an accepted SUCCESS reply) start there
 * @return 0; LDM6_ESHORT (record ends inside the header); LDM6_EMSG
 *         (msg_type, reply_stat or reject_stat not a defined value);
 *         LDM6_EBOUND (an auth body longer than 400 bytes); LDM6_EINVAL.
 *         A call's rpcvers, prog, vers and proc are not judged here.
 */
int ldm6_rpc_decode(const void *buf, size_t len, ldm6_rpc_msg *msg,
                    size_t *used);

/**
 * Encode a header exactly as described by msg (any credentials; the reply
 * fields that its reply_stat/accept_stat/reject_stat select).
 * @return 0; LDM6_ENOSPACE; LDM6_EBOUND (auth body over 400 bytes);
 *         LDM6_EMSG (undefined type, reply_stat or reject_stat); LDM6_EINVAL
 */
int ldm6_rpc_encode(const ldm6_rpc_msg *msg, void *buf, size_t cap,
                    size_t *len);

/** A CALL header with AUTH_NONE (40 bytes).  @return as ldm6_rpc_encode() */
int ldm6_rpc_encode_call(uint32_t xid, uint32_t prog, uint32_t vers,
                         uint32_t proc, void *buf, size_t cap, size_t *len);

/**
 * An accepted REPLY header with AUTH_NONE verifier and the given
 * accept_stat: LDM6_RPC_SUCCESS (24 bytes; the results follow),
 * LDM6_RPC_PROG_UNAVAIL, LDM6_RPC_PROC_UNAVAIL, LDM6_RPC_GARBAGE_ARGS or
 * LDM6_RPC_SYSTEM_ERR. For PROG_MISMATCH use ldm6_rpc_encode_prog_mismatch().
 * @return as ldm6_rpc_encode(); LDM6_EINVAL for LDM6_RPC_PROG_MISMATCH
 */
int ldm6_rpc_encode_accepted(uint32_t xid, uint32_t accept_stat, void *buf,
                             size_t cap, size_t *len);

/** PROG_MISMATCH with the lowest and highest versions served. */
int ldm6_rpc_encode_prog_mismatch(uint32_t xid, uint32_t low, uint32_t high,
                                  void *buf, size_t cap, size_t *len);

/** MSG_DENIED/AUTH_ERROR with auth_stat (LDM: LDM6_RPC_AUTH_TOOWEAK). */
int ldm6_rpc_encode_auth_error(uint32_t xid, uint32_t auth_stat, void *buf,
                               size_t cap, size_t *len);

/** MSG_DENIED/RPC_MISMATCH with the RPC versions supported (2, 2): the
 *  answer to a call whose rpcvers is not 2. */
int ldm6_rpc_encode_rpc_mismatch(uint32_t xid, uint32_t low, uint32_t high,
                                 void *buf, size_t cap, size_t *len);

/**
 * Is this message the reply a caller waits for?  True only for a reply
 * whose xid is awaited_xid while the caller waits (waiting).  Anything else
 * a caller reads while it waits for a reply (a stray answer to a one-way
 * call, a late reply) is to be discarded.
 */
/** Is this message a refusal of the caller (MSG_DENIED/AUTH_ERROR, LDM's
 *  "not allowed"), whatever its xid? */
bool ldm6_rpc_reply_is_refusal(const ldm6_rpc_msg *msg);

bool ldm6_rpc_reply_is_awaited(const ldm6_rpc_msg *msg, bool waiting,
                               uint32_t awaited_xid);

/* ---------------------------------------------------------------------- */
/* Record marking                                                         */
/* ---------------------------------------------------------------------- */

/** Write the mark of a fragment of len bytes (len <= LDM6_RPC_FRAG_MAX). */
void ldm6_rpc_mark_put(uint8_t mark[LDM6_RPC_MARK_LEN], uint32_t len,
                       bool last);

/** Read a mark: the fragment's length and whether it ends the record. */
void ldm6_rpc_mark_get(const uint8_t mark[LDM6_RPC_MARK_LEN], uint32_t *len,
                       bool *last);

/**
 * Reassembles records from a byte stream.  Initialise with
 * ldm6_rpc_framer_init(), free with ldm6_rpc_framer_free(); the fields are
 * private.
 */
typedef struct ldm6_rpc_framer {
  uint8_t *buf;       /* the record so far */
  size_t len;         /* bytes of it */
  size_t cap;         /* allocated */
  size_t max;         /* longest record allowed */
  uint32_t frag_left; /* bytes of the current fragment still to come */
  uint8_t mark[LDM6_RPC_MARK_LEN];
  uint8_t mark_have; /* bytes of the next mark received so far */
  bool in_frag;      /* reading a fragment's bytes (else a mark) */
  bool last;         /* the current fragment ends the record */
  bool ready;        /* buf holds a complete record */
  int error;         /* sticky: once failed, always failed */
  size_t skipped;    /* record bytes the caller took itself (skip) */
} ldm6_rpc_framer;

/**
 * Prepare a framer.  No memory is allocated until bytes arrive.
 * @param max_record  longest record accepted (the sum of its fragments),
 *                    e.g. the largest product plus LDM6_RPC_OVERHEAD and
 *                    the prod_info
 */
void ldm6_rpc_framer_init(ldm6_rpc_framer *f, size_t max_record);

/** Free the buffer.  The framer may be initialised again. */
void ldm6_rpc_framer_free(ldm6_rpc_framer *f);

/**
 * Feed bytes read from the connection.  Consumes bytes until a record is
 * complete or the input is used up, so call it again with the rest (data +
 * *consumed) after handling a record.  A record returned earlier is
 * released by this call.
 * @param consumed  set to the bytes taken from data
 * @return 1: a record is complete (ldm6_rpc_framer_record() gives it); 0: all
 *         input consumed, no complete record yet; LDM6_ETOOBIG: a mark
 *         announced more than max_record bytes; LDM6_ENOMEM.  After an
 *         error the framer keeps failing: close the connection.
 */
int ldm6_rpc_framer_feed(ldm6_rpc_framer *f, const void *data, size_t len,
                         size_t *consumed);

/**
 * The record completed by the last ldm6_rpc_framer_feed() that returned 1: its
 * bytes without marks, valid until the next feed or free.  The caller may
 * modify them.  @return false if no record is complete.
 */
bool ldm6_rpc_framer_record(const ldm6_rpc_framer *f, uint8_t **rec,
                            size_t *len);

/**
 * Bytes that would complete the current mark or fragment: reading at most
 * this many never reads past the end of a record (for blocking reads that
 * must not swallow the next message).  Never 0.
 */
size_t ldm6_rpc_framer_want(const ldm6_rpc_framer *f);

/*
 * Streaming.  A caller that wants a long record's bytes somewhere else
 * than in the framer's buffer (product data straight into a queue
 * reservation) feeds the framer only the start of the record, then reads
 * the rest of each fragment itself and tells the framer with
 * ldm6_rpc_framer_skip(); marks between fragments are fed as usual
 * (ldm6_rpc_framer_want() bytes at a time, so no fragment byte is stored).
 */

/** Bytes of the current fragment still to come: 0 when a mark comes
 *  next (or the record is complete). */
size_t ldm6_rpc_framer_frag_left(const ldm6_rpc_framer *f);

/** Bytes of the current record stored in the framer's buffer so far;
 *  *bytes (if not NULL) is set to them (valid until the next feed). */
size_t ldm6_rpc_framer_stored(const ldm6_rpc_framer *f, uint8_t **bytes);

/** True when the last record fed or skipped is complete. */
bool ldm6_rpc_framer_complete(const ldm6_rpc_framer *f);

/**
 * The caller took n bytes of the current fragment itself: they count
 * towards the record (and its maximum) but are not stored.
 * @return 1 when they complete the record, 0 when not; LDM6_EINVAL when
 *         n exceeds ldm6_rpc_framer_frag_left()
 */
int ldm6_rpc_framer_skip(ldm6_rpc_framer *f, size_t n);

/**
 * Number of fragments a record of total bytes needs when no fragment may
 * exceed max_frag bytes (0 or more than LDM6_RPC_FRAG_MAX: LDM6_RPC_FRAG_MAX).
 * At least 1: an empty record is one empty last fragment.
 */
size_t ldm6_rpc_record_nfrags(size_t total, size_t max_frag);

/**
 * Lay out a record for writev(): the concatenation of the pieces, cut into
 * fragments of at most max_frag bytes, each after its mark.  Pieces are not
 * copied (empty ones are skipped); the marks are written into marks[], which
 * must stay alive until the write is done.
 * @param marks   room for ldm6_rpc_record_nfrags(total, max_frag) marks
 * @param out     room for outcap iovecs; npieces + 2 * nfrags - 1 always
 *                suffice
 * @param nout    set to the iovecs used
 * @return 0; LDM6_ENOSPACE (marks or out too small); LDM6_EINVAL
 */
int ldm6_rpc_record_iov(const struct iovec *pieces, size_t npieces,
                        size_t max_frag, uint8_t (*marks)[LDM6_RPC_MARK_LEN],
                        size_t nmarks, struct iovec *out, size_t outcap,
                        size_t *nout);

#ifdef __cplusplus
}
#endif
#endif /* LDMD_PROTO_RPC_MSG_H */
