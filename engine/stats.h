/* Per-file engine statistics: declared once (X-macro) so that names, storage,
 * printing and the JSON kept in the mapping file never drift apart. */
#ifndef HCOMP_STATS_H
#define HCOMP_STATS_H

#include <stdint.h>
#include <stdio.h>
#include "hcomp_codec.h"
#include "tiers/tier_config.h"

/* X(name, description) — times in seconds */
#define HCOMP_TIME_LIST(X)                                   \
    X(analysis, "input analysis")                            \
    X(prediction, "cost prediction")                         \
    X(placement, "placement (HCDP)")                         \
    X(compression, "compression (all threads)")              \
    X(io, "tier I/O and map appends")                        \
    X(feedback, "feedback to the predictor")                 \
    X(read_feedback, "decompression feedback from reads")

typedef struct hcomp_file_stats {
    uint64_t tasks, pieces, bytes_in;
    uint64_t analyses;  /* full analyses (the other tasks reused one) */
    uint64_t analyses_shared; /* analyses taken from the process's other files */
    uint64_t plans;     /* tasks HCDP planned (the others reused a like task's plan) */
    uint64_t predictions; /* tasks whose codecs were predicted (the others reused predictions) */
#define HCOMP_TIME_FIELD(name, desc) double t_##name;
    HCOMP_TIME_LIST(HCOMP_TIME_FIELD)
#undef HCOMP_TIME_FIELD
    double t_write;     /* wall time inside hcomp_file_pwrite */
    uint64_t tier_raw[HCOMP_MAX_TIERS], tier_stored[HCOMP_MAX_TIERS], tier_pieces[HCOMP_MAX_TIERS];
    uint64_t codec_raw[HCOMP_CODEC_COUNT], codec_stored[HCOMP_CODEC_COUNT];
    uint64_t codec_pieces[HCOMP_CODEC_COUNT], shuffled_pieces;
    uint64_t drained_bytes, drain_errors;   /* background drain */
    uint64_t sync_moved_bytes;  /* copied off volatile tiers by durable syncs */
    /* reads (file/file_read.c; printed at close with hcomp_stats, by readers too) */
    uint64_t reads, read_bytes;     /* calls, logical bytes they returned */
    double t_read;                  /* wall time inside them */
    uint64_t read_fetched;          /* stored bytes read from the tiers: blocks, pieces and
                                       their headers and tables */
    uint64_t read_units;            /* blocks or pieces fetched (neighbours as one) */
    uint64_t read_decoded;          /* logical bytes of them that were decoded (the rest
                                       stored as they are: checked only) */
    uint64_t read_cached;           /* logical bytes copied from the decoded-block cache */
    uint64_t readahead_bytes;   /* stored bytes advised ahead of sequential and strided reads */
    uint64_t flush_behind_bytes;    /* stored bytes sent to storage as they were written
                                       (hcomp_flush_after), ahead of any sync */
    uint64_t block_advice_bytes;    /* stored bytes of blocks advised before their piece's
                                       table was read (places known or guessed) */
    uint64_t advice_cached_bytes;   /* of the bytes advised (those two and each read's own
                                       window), those not advised: in the page cache already */
    double t_sync_move;         /* the time those copies took */
    /* reclaiming at close (the file layer's, counted here to be printed with the rest) */
    uint64_t overwritten_freed; /* blocks of overwritten pieces punched out after writes */
    double t_punch;             /* the time that took (replay, checks, fallocate) */
    int reclaim_ran;
    uint64_t reclaim_dead, reclaim_freed, reclaim_moved, reclaim_segments;
    uint64_t reclaim_log_before, reclaim_log_after;
    double t_reclaim;
    uint64_t coalesced_pieces;  /* extents of small pieces written again as whole pieces */
    uint64_t coalesced_bytes;   /* their logical bytes */
    double t_coalesce;          /* the time that took, sync included */
    char reclaim_error[256];    /* why it failed ("" if it did not) */
    /* the codec chosen most (by bytes) on each tier */
    uint64_t tier_codec_raw[HCOMP_MAX_TIERS][HCOMP_CODEC_COUNT];
} hcomp_file_stats;

/* Human-readable report. */
void hcomp_stats_print(FILE *out, const char *path, const hcomp_file_stats *s,
                       const hcomp_tier_config *cfg);
/* The reads' part of it alone (a handle that wrote nothing). */
void hcomp_stats_print_reads(FILE *out, const char *path, const hcomp_file_stats *s);
/* JSON text (malloc'd) for the mapping file's STATS record. */
char *hcomp_stats_json(const hcomp_file_stats *s, const hcomp_tier_config *cfg);

#endif
