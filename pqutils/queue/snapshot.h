/*
 * snapshot.h - the queue snapshot file of pqsave and pqrestore: a simple
 * framed stream that can be written while the queue is live and checked
 * completely before anything is restored from it.
 *
 * FORMAT (version 1).  Every integer is little-endian; every checksum is a
 * CRC-32C (Castagnoli: reflected polynomial 0x82F63B78, initial value and
 * final xor 0xFFFFFFFF; "123456789" gives 0xE3069283).
 *
 *   header, 64 bytes
 *     0  8  magic "LDMPQSNP"
 *     8  4  format version, 1
 *    12  4  header size, 64
 *    16  8  data size of the queue saved (bytes)
 *    24  8  slot count of the queue saved
 *    32  8  when the save began, microseconds since the epoch
 *    40  8  newest insertion time in the queue when the save began
 *    48 12  zero
 *    60  4  CRC-32C of bytes 0..59
 *
 *   one record per product, in insertion order
 *     0  4  magic "PQSR"
 *     4  2  origin length (0..64)
 *     6  2  identifier length (0..255)
 *     8  8  insertion time, microseconds since the epoch
 *    16  8  creation time, seconds since the epoch (signed)
 *    24  4  creation time, microseconds (0..999999)
 *    28  4  feedtype
 *    32  4  sequence number
 *    36  4  zero
 *    40  8  data size (bytes)
 *    48 16  MD5 signature
 *    64     origin, identifier (no NULs, no terminators), data
 *     then  4 bytes: CRC-32C of the record from its magic to its last byte
 *
 *   trailer, 32 bytes
 *     0  4  magic "PQSE"
 *     4  4  zero
 *     8  8  number of records
 *    16  8  total data bytes of the records
 *    24  4  chain checksum: CRC-32C of the 64 header bytes followed by the
 *           4-byte checksum of every record, in order
 *    28  4  CRC-32C of trailer bytes 0..27
 *   and nothing after it.
 *
 * A snapshot is complete only with its trailer: a truncated file, a damaged
 * byte, a lost, repeated or reordered record all fail a check.
 */
#ifndef PQUTILS_QUEUE_SNAPSHOT_H
#define PQUTILS_QUEUE_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pq/pq.h"

#define SNAP_VERSION 1u
#define SNAP_HEADER_SIZE 64u
#define SNAP_RECORD_SIZE 64u
#define SNAP_TRAILER_SIZE 32u

/** What the header says about the queue saved. */
struct snap_meta {
  uint64_t data_size;
  uint64_t slots;
  uint64_t saved_us;
  uint64_t newest_us;
};

/** One product of a snapshot, without its data. */
struct snap_record {
  pq_prod_info info;
  uint64_t inserted_us;
};

/* The checksums are the queue library's CRC-32C, pq_crc32c() (pq/pq.h). */

/* ---- writing ---- */

typedef struct snap_writer snap_writer;

/**
 * Start a snapshot.  The file is written under a temporary name in the same
 * directory and renamed over `path` only by snap_commit(), so an existing
 * snapshot is replaced only by a complete one.  "-" writes to stdout.
 * @return 0, or -1 with a message in err.
 */
int snap_create(const char *path, const struct snap_meta *meta, snap_writer **w,
                char *err, size_t errlen);
/** Append one product.  0, or -1 with a message in err. */
int snap_write(snap_writer *w, const pq_prod_info *info, uint64_t inserted_us,
               const void *data, char *err, size_t errlen);
/** Write the trailer, flush to disk, rename into place, free w. */
int snap_commit(snap_writer *w, char *err, size_t errlen);
/** Abandon: remove the temporary file, free w.  Safe with NULL. */
void snap_abort(snap_writer *w);
/** Records and data bytes written so far. */
uint64_t snap_written_count(const snap_writer *w);
uint64_t snap_written_bytes(const snap_writer *w);

/* ---- reading ---- */

typedef struct snap_reader snap_reader;

/** Open a snapshot and check its header.  0, or -1 with a message. */
int snap_open(const char *path, snap_reader **r, struct snap_meta *meta,
              char *err, size_t errlen);
/**
 * Read the whole file and check every record, the trailer and the chain
 * checksum; then go back to the first record.
 * @param[out] count, bytes  records and data bytes (may be NULL)
 * @return 0 if the snapshot is intact, -1 with a message naming the record
 *         and the byte offset of the first fault.
 */
int snap_verify(snap_reader *r, uint64_t *count, uint64_t *bytes, char *err,
                size_t errlen);
/**
 * The next record's metadata.  The data must then be read with
 * snap_read_data() or is skipped by the next call.
 * @return 1 a record, 0 the trailer (end), -1 error (message in err).
 */
int snap_next(snap_reader *r, struct snap_record *rec, char *err,
              size_t errlen);
/** Read the current record's data into dst (its data size bytes) and check
 *  the record's checksum.  0, or -1 with a message. */
int snap_read_data(snap_reader *r, void *dst, char *err, size_t errlen);
/** Close; safe with NULL. */
void snap_close(snap_reader *r);

#endif /* PQUTILS_QUEUE_SNAPSHOT_H */
