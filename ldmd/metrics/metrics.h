/*
 * metrics.h - ldmd's live figures: a small fixed-size file that every ldmd
 * process maps shared, where each process writes its own figures and any
 * reader reads them all without stopping the server (docs/metrics.md).
 *
 * WHO WRITES WHAT.  The top-level ldmd makes the file at start (a new file
 * renamed into place, so a reader never maps a half-made one) and keeps the
 * mapping, which its children inherit across fork().  The file has a slot
 * per child process.  The top process, which is single-threaded, owns the
 * slots' life: it claims a free slot before it forks a connection or
 * requester process (ldmm_claim(): the slot's counters are zeroed and its
 * generation bumped while no process uses it), binds it to the child's pid
 * after fork() (ldmm_bind()), and frees it when it reaps the child
 * (ldmm_release()).  The child owns everything else in its slot: what the
 * connection is (ldmm_describe()) and its counters, which it alone writes,
 * with relaxed atomic stores (no lock, no system call).  The per-feedtype
 * aggregates are written by every receiving process with relaxed atomic
 * adds.  A child that dies at any point leaves only counters that are each
 * whole (every field is one aligned 64-bit atomic), and its slot is freed
 * when it is reaped.
 *
 * READING.  ldmm_snapshot_take() copies every live slot and the aggregates into
 * process memory: a slot whose state or generation changed during the copy
 * is left out (it was freed or reused), and a description being rewritten
 * (its sequence number odd or moved) is read again a few times, then shown
 * empty (so is the description of a child killed while it wrote it).  The
 * counters of one slot are not read at one instant: each is exact, the set
 * is as of "during the copy", and the adds of one product are not one
 * step (a process killed between them leaves, say, products one ahead of
 * the latency count).  A histogram's count is the sum of its buckets as
 * read, so _count and the +Inf bucket always agree.
 *
 * THE FILE.  Host-local, never moved between machines: native byte order
 * (the header's byte_order field is 0x01020304 as written), fixed-width
 * fields, offsets, no pointers.  The header, then nslots slots of
 * slot_size bytes at slots_off, then LDMM_NFEEDS feed aggregates of
 * feed_size bytes at feeds_off, then LDMM_NINGESTERS ingester entries
 * of ingester_size bytes at ingesters_off (ingester.h: the processes that
 * are not ldmd's children, noaaportIngester, claim them).  A reader refuses a
 * file whose magic, version, byte order or sizes are not its own.
 * docs/metrics.md draws it.
 *
 * Fork: the mapping is shared with every child (MAP_SHARED); ldmm_claim(),
 * ldmm_bind() and ldmm_release() only in the top process.  Not for threads
 * beyond that: one writer per slot.
 */
#ifndef LDMD_METRICS_METRICS_H
#define LDMD_METRICS_METRICS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define LDMM_MAGIC "LDMDMTRX" /* 8 bytes, no NUL in the file */
#define LDMM_VERSION 2u       /* 2: the ingesters' region */
#define LDMM_BYTE_ORDER 0x01020304u

/** Latency buckets: upper bounds in microseconds, log-spaced from 0.1 s to
 *  an hour, then +Inf (the last bucket, bound UINT64_MAX). */
#define LDMM_NBUCKETS 16
#define LDMM_BOUNDS_US                                                         \
  {                                                                            \
    100000ull, 250000ull, 500000ull, 1000000ull, 2500000ull, 5000000ull,       \
        10000000ull, 25000000ull, 50000000ull, 100000000ull, 250000000ull,     \
        500000000ull, 1000000000ull, 2500000000ull, 3600000000ull, UINT64_MAX  \
  }

/** Feed aggregates: one per feedtype bit (0-31), and one for products whose
 *  feedtype is not a single bit. */
#define LDMM_NFEEDS 33
#define LDMM_FEED_OTHER 32

/** Why a received product was not stored (ldmd/server/downstream.h). */
enum ldmm_cause {
  LDMM_DUPLICATE = 0, /**< already in the queue */
  LDMM_TOO_OLD,       /**< created before now - max latency */
  LDMM_TOO_BIG,       /**< larger than the queue */
  LDMM_UNWANTED,      /**< outside the class asked for or accepted */
  LDMM_NO_ROOM,       /**< every product of the queue in use */
  LDMM_INVALID,       /**< metadata the queue cannot hold */
  LDMM_INCOMPLETE,    /**< announced, its data did not all come */
  LDMM_NCAUSES
};

/** What a slot's process does. */
enum ldmm_kind {
  LDMM_KIND_CONNECTION = 0, /**< an accepted connection, not yet a feed */
  LDMM_KIND_UPSTREAM,       /**< sends products to a downstream (FEEDME) */
  LDMM_KIND_NOTIFYME,       /**< sends notifications (NOTIFYME) */
  LDMM_KIND_DOWNSTREAM,     /**< receives pushed products (HIYA) */
  LDMM_KIND_REQUESTER,      /**< a REQUEST entry's process */
  LDMM_NKINDS
};

/** Does a process of this kind receive products (latency, refusals)? */
static inline bool ldmm_kind_receives(enum ldmm_kind k) {
  return k == LDMM_KIND_DOWNSTREAM || k == LDMM_KIND_REQUESTER;
}

/** Does a process of this kind feed a peer from the queue (a lag)? */
static inline bool ldmm_kind_feeds(enum ldmm_kind k) {
  return k == LDMM_KIND_UPSTREAM || k == LDMM_KIND_NOTIFYME;
}

/** Slot states (ldmm_slot.state). */
#define LDMM_FREE 0u
#define LDMM_CLAIMED 1u /**< claimed before fork(), pid not bound yet */
#define LDMM_LIVE 2u    /**< bound to a live child */

#define LDMM_PEER_MAX 128
#define LDMM_FEED_MAX 256
#define LDMM_PATH_MAX 1024
#define LDMM_ADDR_MAX 128

/** The ingesters' region (ingester.h): entries, and receivers of each. */
#define LDMM_NINGESTERS 32
#define LDMM_NRX 8
#define LDMM_CHANNEL_MAX 64

/** A latency histogram: non-cumulative counts, and the sum. */
typedef struct ldmm_hist {
  _Atomic uint64_t bucket[LDMM_NBUCKETS];
  _Atomic uint64_t sum_us;
} ldmm_hist;

/** One child process's figures.  64-byte aligned in the file. */
typedef struct ldmm_slot {
  /* The top process's: */
  _Atomic uint32_t state; /**< LDMM_FREE, LDMM_CLAIMED, LDMM_LIVE */
  _Atomic uint32_t gen;   /**< bumped at each claim */
  _Atomic int32_t pid;    /**< the child, once bound */
  uint32_t pad0;
  /* The child's: its description, under a sequence number (odd while
   * being written). */
  _Atomic uint32_t desc_seq;
  _Atomic uint32_t kind;    /**< enum ldmm_kind */
  _Atomic int64_t start_us; /**< when the process started (wall clock) */
  char peer[LDMM_PEER_MAX]; /**< "name (address)", or "host port N" */
  char feed[LDMM_FEED_MAX]; /**< the class, as LDM writes it (cut) */
  /* The child's counters. */
  _Atomic uint64_t products;      /**< inserted (receivers) or sent (feeders) */
  _Atomic uint64_t bytes;         /**< their data bytes */
  _Atomic uint64_t reconnections; /**< requesters: connections after the
                                       first */
  _Atomic uint64_t cursor_us;     /**< feeders: insertion time of the last
                                       product looked at (0: none yet) */
  _Atomic uint64_t refused[LDMM_NCAUSES];
  ldmm_hist latency; /**< receivers: creation to insertion */
} ldmm_slot;

/** One feedtype's figures, summed over every receiving process. */
typedef struct ldmm_feed {
  _Atomic uint64_t products; /**< inserted */
  _Atomic uint64_t bytes;
  _Atomic uint64_t refused[LDMM_NCAUSES];
  ldmm_hist latency;
} ldmm_feed;

/** One receiver (a multicast socket) of an ingester: its reader thread
 *  alone writes the counters; the name is written before the entry is
 *  published and never changes. */
typedef struct ldmm_rx {
  char name[LDMM_CHANNEL_MAX]; /**< "group@interface" */
  _Atomic uint64_t datagrams;
  _Atomic uint64_t bytes;
  _Atomic uint64_t queue_max; /**< most bytes queued in the socket (kernel's
                                   accounting, as rcvbuf) */
  _Atomic uint64_t rcvbuf;    /**< the socket's receive buffer, same units */
  _Atomic uint64_t drops;     /**< datagrams the kernel dropped (full) */
} ldmm_rx;

/** One ingester process (noaaportIngester) that attached to the file: it
 *  claims the entry itself (owner: a compare-and-swap), see ingester.h. */
typedef struct ldmm_ingester {
  _Atomic uint64_t owner;         /**< gen << 33 | live << 32 | pid */
  _Atomic int64_t start_us;       /**< when it started (wall clock) */
  char channel[LDMM_CHANNEL_MAX]; /**< the group, or "stdin" */
  _Atomic uint32_t nrx;           /**< receivers in use */
  uint32_t pad0;
  /* The main thread's: */
  _Atomic uint64_t frames;     /**< frames counted by gap detection */
  _Atomic uint64_t missed;     /**< frames missed (gaps) */
  _Atomic uint64_t bytes;      /**< bytes read from the input */
  _Atomic uint64_t fullfifo;   /**< times the reader waited for room */
  _Atomic uint64_t products;   /**< completed (inserted or not) */
  _Atomic uint64_t duplicates; /**< already in the queue */
  _Atomic uint64_t failed;     /**< not inserted, another reason */
  _Atomic uint64_t inserted[LDMM_NFEEDS]; /**< inserted, by feedtype */
  ldmm_rx rx[LDMM_NRX];
} ldmm_ingester;

/** The header, at offset 0. */
typedef struct ldmm_header {
  char magic[8];
  uint32_t version;
  uint32_t byte_order;
  uint32_t header_size;
  uint32_t slot_size;
  uint32_t feed_size;
  uint32_t nslots;
  uint32_t nfeeds;
  uint32_t nbuckets;
  uint64_t slots_off;
  uint64_t feeds_off;
  uint64_t ingesters_off; /**< after the feeds */
  uint32_t ingester_size; /**< 64-byte multiple */
  uint32_t ningesters;    /**< LDMM_NINGESTERS */
  int64_t start_us;       /**< when the server started (wall clock) */
  int32_t pid;            /**< the top-level ldmd */
  uint32_t pad0;
  _Atomic uint64_t no_slot; /**< children forked with every slot taken */
  uint64_t bounds_us[LDMM_NBUCKETS];
  char queue_path[LDMM_PATH_MAX]; /**< the server's queue */
  char http_addr[LDMM_ADDR_MAX];  /**< where it serves HTTP ("": nowhere) */
  char version_text[32];          /**< ldmd's version */
} ldmm_header;

/** An open metrics file. */
typedef struct ldmm_file ldmm_file;

/* ---------------------------------------------------------------------- */
/* The top process                                                        */
/* ---------------------------------------------------------------------- */

/**
 * Make the file at path (a new file renamed into place, the whole of it
 * allocated so a full tmpfs cannot SIGBUS its users) and map it.
 * @param nslots      slots, one per child process that may run at once
 * @param queue_path  the server's queue, for readers
 * @param version     ldmd's version text
 * @param err         a message naming the path and the failure
 * @return the file, or NULL (err set)
 */
ldmm_file *ldmm_create(const char *path, uint32_t nslots,
                       const char *queue_path, const char *version, char *err,
                       size_t errlen);

/** Record where the server serves HTTP (for readers). */
void ldmm_set_http_addr(ldmm_file *f, const char *addr);

/** Unmap; with remove, unlink the file too if it is still the one made. */
void ldmm_close(ldmm_file *f, bool remove);

/**
 * Claim a free slot before fork(): counters zeroed, generation bumped.
 * @return its index, or -1 when every slot is taken (counted in the
 *         header's no_slot) or f is NULL
 */
int ldmm_claim(ldmm_file *f);

/** After fork(), in the parent: the slot is the child pid's. */
void ldmm_bind(ldmm_file *f, int slot, pid_t pid);

/** The child of the slot was reaped (or never started): free it.  Any
 *  slot < 0 is ignored. */
void ldmm_release(ldmm_file *f, int slot);

/* ---------------------------------------------------------------------- */
/* The writers (the child of a slot)                                      */
/* ---------------------------------------------------------------------- */

/** The slot at index (NULL if f is NULL or index out of range). */
ldmm_slot *ldmm_slot_at(ldmm_file *f, int index);

/** The feed aggregates (NULL if f is NULL). */
ldmm_feed *ldmm_feeds(ldmm_file *f);

/** Say what the slot's process is; peer and feed may be NULL (unchanged)
 *  and are cut to fit.  s may be NULL (no figures). */
void ldmm_describe(ldmm_slot *s, enum ldmm_kind kind, const char *peer,
                   const char *feed);

/** The bucket of a latency in microseconds (negative: the first). */
static inline unsigned ldmm_bucket(int64_t us) {
  static const uint64_t bounds[LDMM_NBUCKETS] = LDMM_BOUNDS_US;
  unsigned i = 0;

  if (us <= 0)
    return 0;
  while (i < LDMM_NBUCKETS - 1 && (uint64_t)us > bounds[i])
    i++;
  return i;
}

/* One writer: a load and a store, no locked instruction. */
static inline void ldmm__own_add(_Atomic uint64_t *c, uint64_t n) {
  atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
                        memory_order_relaxed);
}

/* Many writers. */
static inline void ldmm__shared_add(_Atomic uint64_t *c, uint64_t n) {
  atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}

/** The aggregate of a feedtype. */
static inline ldmm_feed *ldmm_feed_of(ldmm_feed *feeds, uint32_t feedtype) {
  if (feeds == NULL)
    return NULL;
  if (feedtype != 0 && (feedtype & (feedtype - 1)) == 0)
    return &feeds[__builtin_ctz(feedtype)];
  return &feeds[LDMM_FEED_OTHER];
}

/** A received product was inserted, latency_us after its creation.  s and
 *  feeds may be NULL. */
static inline void ldmm_inserted(ldmm_slot *s, ldmm_feed *feeds,
                                 uint32_t feedtype, uint64_t bytes,
                                 int64_t latency_us) {
  unsigned b = ldmm_bucket(latency_us);
  uint64_t lat = latency_us > 0 ? (uint64_t)latency_us : 0;
  ldmm_feed *f = ldmm_feed_of(feeds, feedtype);

  if (s != NULL) {
    ldmm__own_add(&s->products, 1);
    ldmm__own_add(&s->bytes, bytes);
    ldmm__own_add(&s->latency.bucket[b], 1);
    ldmm__own_add(&s->latency.sum_us, lat);
  }
  if (f != NULL) {
    ldmm__shared_add(&f->products, 1);
    ldmm__shared_add(&f->bytes, bytes);
    ldmm__shared_add(&f->latency.bucket[b], 1);
    ldmm__shared_add(&f->latency.sum_us, lat);
  }
}

/** A received product was refused.  s and feeds may be NULL. */
static inline void ldmm_refused(ldmm_slot *s, ldmm_feed *feeds,
                                uint32_t feedtype, enum ldmm_cause cause) {
  ldmm_feed *f = ldmm_feed_of(feeds, feedtype);

  if (s != NULL)
    ldmm__own_add(&s->refused[cause], 1);
  if (f != NULL)
    ldmm__shared_add(&f->refused[cause], 1);
}

/** A feeder sent a product.  s may be NULL. */
static inline void ldmm_sent(ldmm_slot *s, uint64_t bytes) {
  if (s != NULL) {
    ldmm__own_add(&s->products, 1);
    ldmm__own_add(&s->bytes, bytes);
  }
}

/** A feeder's place in the queue: the insertion time (microseconds) of the
 *  last product it looked at.  s may be NULL. */
static inline void ldmm_cursor(ldmm_slot *s, uint64_t inserted_us) {
  if (s != NULL)
    atomic_store_explicit(&s->cursor_us, inserted_us, memory_order_relaxed);
}

/** A requester connected again.  s may be NULL. */
static inline void ldmm_reconnected(ldmm_slot *s) {
  if (s != NULL)
    ldmm__own_add(&s->reconnections, 1);
}

/* ---------------------------------------------------------------------- */
/* Readers                                                                */
/* ---------------------------------------------------------------------- */

/** A histogram as read. */
typedef struct ldmm_hist_copy {
  uint64_t bucket[LDMM_NBUCKETS]; /**< non-cumulative */
  uint64_t count;                 /**< the sum of the buckets */
  uint64_t sum_us;
} ldmm_hist_copy;

/** One live slot as read. */
typedef struct ldmm_conn_copy {
  int index;
  pid_t pid;
  enum ldmm_kind kind;
  int64_t start_us;
  char peer[LDMM_PEER_MAX];
  char feed[LDMM_FEED_MAX];
  uint64_t products, bytes, reconnections, cursor_us;
  uint64_t refused[LDMM_NCAUSES];
  ldmm_hist_copy latency;
} ldmm_conn_copy;

/** One feedtype's aggregate as read. */
typedef struct ldmm_feed_copy {
  uint64_t products, bytes;
  uint64_t refused[LDMM_NCAUSES];
  ldmm_hist_copy latency;
} ldmm_feed_copy;

/** One ingester as read. */
typedef struct ldmm_rx_copy {
  char name[LDMM_CHANNEL_MAX];
  uint64_t datagrams, bytes, queue_max, rcvbuf, drops;
} ldmm_rx_copy;

typedef struct ldmm_ingester_copy {
  pid_t pid;
  int64_t start_us;
  char channel[LDMM_CHANNEL_MAX];
  uint64_t frames, missed, bytes, fullfifo, products, duplicates, failed;
  uint64_t inserted[LDMM_NFEEDS];
  unsigned nrx;
  ldmm_rx_copy rx[LDMM_NRX];
} ldmm_ingester_copy;

/** Everything, in process memory. */
typedef struct ldmm_snapshot {
  int64_t start_us;
  pid_t pid;
  uint64_t no_slot;
  char queue_path[LDMM_PATH_MAX];
  char http_addr[LDMM_ADDR_MAX];
  char version[32];
  uint64_t bounds_us[LDMM_NBUCKETS];
  ldmm_feed_copy feeds[LDMM_NFEEDS];
  size_t nconns;
  ldmm_conn_copy *conns; /**< nslots entries allocated, nconns used */
  size_t cap;
  size_t ningesters; /**< live ingesters, in ingesters[] */
  ldmm_ingester_copy ingesters[LDMM_NINGESTERS];
} ldmm_snapshot;

/**
 * Open the file at path read-only, checking its header.
 * @return the file, or NULL (err: the path and what is wrong)
 */
ldmm_file *ldmm_open(const char *path, char *err, size_t errlen);

/**
 * Copy the figures into snap (which must be zeroed, or reused from a
 * previous call; free it with ldmm_snapshot_free()).
 * @return 0, or -1 when out of memory
 */
int ldmm_snapshot_take(const ldmm_file *f, ldmm_snapshot *snap);

void ldmm_snapshot_free(ldmm_snapshot *snap);

/** LDM-like names: "upstream", "notifyme", "downstream", "requester",
 *  "connection"; and of causes: "duplicate", "too_old", ... */
const char *ldmm_kind_name(enum ldmm_kind kind);
const char *ldmm_cause_name(enum ldmm_cause cause);

/** The feed name of aggregate i: LDM's feedtype name of bit i
 *  ("NEXRAD2"), or "OTHER". */
void ldmm_feed_name(unsigned i, char *buf, size_t len);

/** The default path of the file of a queue: "<queue>.metrics". */
int ldmm_default_path(const char *queue, char *buf, size_t len);

#endif /* LDMD_METRICS_METRICS_H */
