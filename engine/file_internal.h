/* The state of one open logical file, shared by engine/file_*.c. */
#ifndef HCOMP_FILE_INTERNAL_H
#define HCOMP_FILE_INTERNAL_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>
#include "hcomp.h"
#include "extent_map.h"
#include "options.h"
#include "../tiers/mapfile.h"
#include "../tiers/piece_header.h"
#include "../tiers/tier_config.h"

/* Logical files end at or before 2^48 bytes (the piece header's offset field). */
#define HCOMP_PIECE_MAX_OFFSET_BYTES (UINT64_C(1) << 48)

/* A segment file named in the log. */
typedef struct hcomp_segment {
    uint64_t id;
    char *tier;          /* tier name as recorded */
    char *path;          /* absolute path of the segment file; NULL if never recorded */
    int fd;              /* read descriptor, opened on first use; -1 */
} hcomp_segment;

/* A stored piece named in the log. */
typedef struct hcomp_piece {
    uint32_t seg;        /* index into segs */
    uint64_t seg_off;    /* offset of the piece header in the segment */
    uint32_t stored_len, raw_len, crc;
    uint8_t codec, filter;
    uint64_t start;      /* logical offset of its first extent (header check) */
} hcomp_piece;

/* This opener's writing state on one tier. */
typedef struct hcomp_tier_writer {
    int ready;                 /* directory checked, budget computed */
    int full;                  /* the tier said ENOSPC: placement skips it */
    char base[PATH_MAX];       /* the tier's directory (for this file) */
    char dir[PATH_MAX];        /* this file's segment directory on the tier */
    uint64_t budget;           /* bytes reserved and not yet written (UINT64_MAX: unlimited) */
    uint64_t ledger_id;        /* this opener's line in the tier's capacity ledger */
    int in_ledger;
    int seg_fd;                /* current segment file, -1 until the first piece */
    uint64_t seg_id;
    uint64_t seg_tail;
    char seg_name[32];
} hcomp_tier_writer;

struct hcomp_file {
    char *path;
    int map_fd;
    int writable;
    mode_t perm;
    int sharers;
    hcomp_options opts;
    hcomp_tier_config cfg;
    hcomp_map_header hdr;
    char id_hex[33];

    /* replayed log */
    uint64_t consumed;         /* bytes of the mapping file applied */
    uint64_t skipped;          /* damaged bytes passed over */
    hcomp_segment *segs;
    size_t nsegs, capsegs;
    hcomp_piece *pieces;
    size_t npieces, cappieces;
    hcomp_extent_map map;
    uint64_t size;
    unsigned char *logbuf;
    size_t logbuf_cap;

    /* writing */
    hcomp_tier_writer tw[HCOMP_MAX_TIERS];
    unsigned char *scratch;    /* compressed output */
    size_t scratch_cap;
    hcomp_bytes batch;         /* records of the task being written */

    /* reading */
    unsigned char *rbuf;       /* stored bytes of one piece */
    size_t rbuf_cap;
    unsigned char *cache;      /* logical bytes of the last piece decoded */
    size_t cache_cap;
    int64_t cache_piece;       /* -1: empty */
};

/* engine/file_log.c */
int hcomp_log_refresh(hcomp_file *f, hcomp_error *err);
int hcomp_log_append(hcomp_file *f, const hcomp_bytes *records, hcomp_error *err);
void hcomp_log_free(hcomp_file *f);

/* engine/file_read.c */
int hcomp_piece_load(hcomp_file *f, uint32_t piece, unsigned char *dst, hcomp_error *err);

/* tiers/tier_space.c */
int hcomp_tier_check(const hcomp_tier *t, const char *file_path, hcomp_error *err);
int hcomp_tier_writer_prepare(hcomp_file *f, int t, hcomp_error *err);
int hcomp_tier_writer_segment(hcomp_file *f, int t, int *is_new, hcomp_error *err);
void hcomp_tier_writers_close(hcomp_file *f);
uint64_t hcomp_tier_usage(const char *tier_dir);

/* tiers/tier_ledger.c: capacity shared by all writers of a tier */
int hcomp_tier_reserve(hcomp_file *f, int t, uint64_t want, hcomp_error *err);
void hcomp_tier_release(hcomp_file *f, int t);

/* helpers */
int hcomp_grow(unsigned char **buf, size_t *cap, size_t need);

#endif
