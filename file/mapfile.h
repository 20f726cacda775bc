/* The mapping file (docs/FORMAT.md): a 64-byte header, then an append-only log of
 * framed, checksummed records. Every writer appends whole records with one write(2)
 * on an O_APPEND descriptor; readers replay the log in order, so the newest write
 * wins and what one process wrote is visible to all as soon as it returns. */
#ifndef HCOMP_MAPFILE_H
#define HCOMP_MAPFILE_H

#include <stddef.h>
#include <stdint.h>
#include "hcomp_error.h"

#define HCOMP_MAP_MAGIC "HCOMPMAP"
#define HCOMP_MAP_VERSION 3          /* what new files get */
#define HCOMP_MAP_VERSION_MIN 1      /* the oldest this library reads and writes */
#define HCOMP_MAP_HEADER_SIZE 64
#define HCOMP_MAP_RECORD_MAGIC 0x31524348u /* "HCR1" */
#define HCOMP_MAP_FRAME_SIZE 16            /* 12 before the payload, 4 after */
#define HCOMP_MAP_MAX_PAYLOAD (16u << 20)
#define HCOMP_MAP_EXTENT_SIZE 16
#define HCOMP_MAP_PIECE_FIXED 36
#define HCOMP_MAP_SEGMENT_FIXED 20
#define HCOMP_SEGMENT_NODE_LOCAL 1u  /* SEGMENT flag: on a node-local tier */

enum hcomp_map_record_type {
    HCOMP_REC_SEGMENT = 1, /* a segment file: id, tier, directory, file name */
    HCOMP_REC_PIECE = 2,   /* a stored piece and the logical extents it backs */
    HCOMP_REC_SIZE = 3,    /* set (truncate) or grow (preallocate) the logical size */
    HCOMP_REC_STATS = 4,   /* a writer's engine statistics (JSON text), kept as metadata */
    HCOMP_REC_RELOCATE = 5, /* a piece moved to another segment, maybe re-encoded (drain) */
    HCOMP_REC_ORDER = 6     /* version 3 writer logs: where the records after it stand in
                               the file's order (a Lamport stamp) */
};

/* Format version 3: every writer appends to a log of its own (docs/FORMAT.md, "Writer
 * logs"), so that no two processes ever append to one file. */
#define HCOMP_WLOG_MAGIC "HCOMPWLG"
#define HCOMP_WLOG_HEADER_SIZE 64
#define HCOMP_MAP_VERSION_WLOGS 3    /* the first version with writer logs */

enum hcomp_size_mode { HCOMP_SIZE_SET = 0, HCOMP_SIZE_GROW = 1 };

typedef struct hcomp_map_header {
    uint32_t version;
    uint8_t file_id[16];
    uint64_t created_ns;
    uint64_t log_gen;    /* version 3: the writer logs that belong to this mapping file */
} hcomp_map_header;

/* The header of a writer log (version 3). */
typedef struct hcomp_wlog_header {
    uint8_t file_id[16];
    uint64_t log_gen;
    uint64_t writer;     /* random, unique per log: breaks ties between writers */
} hcomp_wlog_header;

/* A decoded record; strings and extents point into the decoded buffer. */
typedef struct hcomp_map_record {
    int type;
    union {
        struct {
            uint64_t id;
            const char *tier, *dir, *file, *node;
            uint16_t tier_len, dir_len, file_len, node_len;
            uint16_t flags;
        } seg;
        struct {
            uint64_t seg_id, seg_off;
            uint32_t stored_len, raw_len, crc;
            uint8_t codec, filter;
            int level;          /* HCOMP_MAP_LEVEL_UNKNOWN when not recorded */
            unsigned frame;     /* 0 unframed, else blocks of hcomp_frame_block_size */
            uint32_t nextents;
            const unsigned char *extents; /* nextents x 16 bytes; see hcomp_map_extent_at */
        } piece;
        struct {
            uint64_t size;
            int mode;
        } size;
        struct {
            const char *json;   /* not NUL-terminated */
            uint32_t len;
        } stats;
        struct {
            uint64_t stamp;
            uint64_t durable;   /* HCOMP_ORDER_DURABLE | offset, or 0 (earlier writers) */
        } order;
        struct {
            uint64_t old_seg, old_off, new_seg, new_off;
            uint32_t stored_len, crc;   /* the piece as stored at its new place */
            uint8_t codec, filter;
            int level;
            unsigned frame;
        } reloc;
    } u;
} hcomp_map_record;

typedef struct hcomp_map_extent {
    uint64_t off;        /* logical offset */
    uint32_t len;
    uint32_t piece_off;  /* offset inside the piece's logical bytes */
} hcomp_map_extent;

/* A growable byte buffer for encoding. */
typedef struct hcomp_bytes {
    unsigned char *p;
    size_t len, cap;
} hcomp_bytes;
int hcomp_bytes_reserve(hcomp_bytes *b, size_t extra);
void hcomp_bytes_free(hcomp_bytes *b);

void hcomp_map_header_encode(const hcomp_map_header *h, unsigned char out[HCOMP_MAP_HEADER_SIZE]);
/* HCOMP_OK, HCOMP_E_NOTHCOMP (wrong magic or too short), HCOMP_E_VERSION or
 * HCOMP_E_CORRUPT (bad checksum); the message names path. */
int hcomp_map_header_decode(const unsigned char *in, size_t avail, hcomp_map_header *h,
                            const char *path, hcomp_error *err);

void hcomp_wlog_header_encode(const hcomp_wlog_header *h, unsigned char out[HCOMP_WLOG_HEADER_SIZE]);
/* HCOMP_OK, or HCOMP_E_CORRUPT naming path (too short, wrong magic or version, bad
 * checksum). */
int hcomp_wlog_header_decode(const unsigned char *in, size_t avail, hcomp_wlog_header *h,
                             const char *path, hcomp_error *err);

/* Encoders append one framed record; they return 0 or -1 (out of memory). */
int hcomp_map_encode_segment(hcomp_bytes *b, uint64_t id, const char *tier, const char *dir,
                             const char *file, const char *node, unsigned flags);
/* frame: 0 (unframed) or the piece's framing (docs/FORMAT.md);
 * level: the codec level the piece was compressed with (it tells the cost model which
 * model a decoding time measured on a read belongs to), or HCOMP_MAP_LEVEL_UNKNOWN */
#define HCOMP_MAP_LEVEL_UNKNOWN (-1000)
int hcomp_map_encode_piece(hcomp_bytes *b, uint64_t seg_id, uint64_t seg_off,
                           uint32_t stored_len, uint32_t raw_len, uint32_t crc, uint8_t codec,
                           uint8_t filter, int level, unsigned frame,
                           const hcomp_map_extent *ext, uint32_t nextents);
int hcomp_map_encode_size(hcomp_bytes *b, uint64_t size, int mode);
int hcomp_map_encode_stats(hcomp_bytes *b, const char *json);
/* ORDER's second field: the flag, and the offset in its writer log before which every
 * record and the piece it names were made durable (docs/FORMAT.md, "Durable steps") */
#define HCOMP_ORDER_DURABLE (UINT64_C(1) << 63)
int hcomp_map_encode_order(hcomp_bytes *b, uint64_t stamp, uint64_t durable);
int hcomp_map_encode_relocate(hcomp_bytes *b, uint64_t old_seg, uint64_t old_off,
                              uint64_t new_seg, uint64_t new_off, uint32_t stored_len,
                              uint32_t crc, uint8_t codec, uint8_t filter, int level,
                              unsigned frame);

enum hcomp_map_next_result {
    HCOMP_MAP_RECORD = 0,   /* *rec holds the record at *pos; *pos moved past it */
    HCOMP_MAP_INCOMPLETE,   /* the bytes end inside a record: wait for more */
    HCOMP_MAP_DAMAGED       /* bytes at *pos are no valid record: *pos moved to the
                               next record magic (or the end); *skipped counts them */
};
int hcomp_map_next(const unsigned char *buf, size_t len, size_t *pos, hcomp_map_record *rec,
                   uint64_t *skipped);
/* The same; on HCOMP_MAP_DAMAGED, *lost (if not NULL) tells whether the bytes passed over
 * held a record that had been written whole (1: what it recorded is lost, and readers
 * must not guess around it) or only the fragment of a torn append (0: a write that never
 * returned success). */
int hcomp_map_next_checked(const unsigned char *buf, size_t len, size_t *pos,
                           hcomp_map_record *rec, uint64_t *skipped, int *lost);
void hcomp_map_extent_at(const hcomp_map_record *rec, uint32_t i, hcomp_map_extent *out);

#endif
