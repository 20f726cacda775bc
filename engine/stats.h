/* Per-file engine statistics: declared once (X-macro) so that names, storage,
 * printing and the JSON kept in the mapping file never drift apart. */
#ifndef HCOMP_STATS_H
#define HCOMP_STATS_H

#include <stdint.h>
#include <stdio.h>
#include "hcomp_codec.h"
#include "tiers/tier_config.h"

/* Every statistic is declared once, in one of the lists below; the struct, the STATS record
 * (its JSON, written and read: hcomp_stats_json, hcomp_stats_from_json) and the time lines
 * of the printout are generated from them. The STATS record's bytes are a file format
 * (docs/FORMAT.md): its keys are the names of the RECORDED lists, in their order, so an
 * entry is only ever appended to those (a reader takes a key that is absent, in a file
 * written before it was added, as 0). */

/* X(name, description): counters a STATS record keeps, under their names, in this order */
#define HCOMP_RECORDED_COUNTERS(X)                                                      \
    X(tasks, "tasks written")                                                           \
    X(analyses, "full analyses (the other tasks reused one)")                           \
    X(analyses_shared, "analyses taken from the process's other files")                 \
    X(plans, "tasks HCDP planned (the others reused a like task's plan)")               \
    X(predictions, "tasks whose codecs were predicted (the others reused predictions)") \
    X(pieces, "pieces written")                                                         \
    X(bytes_in, "logical bytes written")                                                \
    X(drained_bytes, "bytes moved by the background drain")                             \
    X(sync_moved_bytes, "bytes copied off volatile tiers by durable syncs")             \
    X(flush_behind_bytes, "stored bytes sent to storage as they were written "          \
                          "(hcomp_flush_after), ahead of any sync")                     \
    X(readahead_bytes, "stored bytes advised ahead of sequential and strided reads")    \
    X(block_advice_bytes, "stored bytes of blocks advised before their piece's table "  \
                          "was read (places known or guessed)")                         \
    X(advice_cached_bytes, "of the bytes advised (those two and each read's own "       \
                           "window), those not advised: in the page cache already")

/* X(name, description): times in seconds, recorded as "<name>_seconds" after the counters;
 * the printout gives each of HCOMP_TIME_LIST as a share of the first, t_write */
#define HCOMP_TIME_LIST(X)                                   \
    X(analysis, "input analysis")                            \
    X(prediction, "cost prediction")                         \
    X(placement, "placement (HCDP)")                         \
    X(compression, "compression (all threads)")              \
    X(io, "tier I/O and map appends")                        \
    X(feedback, "feedback to the predictor")                 \
    X(read_feedback, "decompression feedback from reads")
#define HCOMP_RECORDED_TIMES(X)                              \
    X(write, "wall time inside hcomp_file_pwrite")           \
    HCOMP_TIME_LIST(X)

/* X(name, description): what a STATS record keeps per tier (its "tiers" array, in the
 * configuration's order, each entry "name" then these) and per codec (its "codecs" object,
 * keyed by codec name, codecs with pieces only): tier_<name>[t], codec_<name>[c] */
#define HCOMP_RECORDED_PARTS(X)                              \
    X(raw, "logical bytes")                                  \
    X(stored, "stored bytes")                                \
    X(pieces, "pieces")

/* X(name, description): counters and times kept for the printout at close, not recorded */
#define HCOMP_LOCAL_COUNTERS(X)                                                         \
    X(shuffled_pieces, "pieces byte-shuffled")                                          \
    X(drain_errors, "failed attempts of the background drain")                          \
    X(reads, "read calls (file/file_read.c; printed at close by readers too)")          \
    X(read_bytes, "logical bytes they returned")                                        \
    X(read_fetched, "stored bytes read from the tiers: blocks, pieces and their "       \
                    "headers and tables")                                               \
    X(read_units, "blocks or pieces fetched (neighbours as one)")                       \
    X(read_decoded, "logical bytes of them that were decoded (the rest stored as they " \
                    "are: checked only)")                                               \
    X(read_cached, "logical bytes copied from the decoded-block cache")                 \
    X(overwritten_freed, "blocks of overwritten pieces punched out after writes")       \
    X(reclaim_dead, "bytes of dead pieces found at close")                              \
    X(reclaim_freed, "bytes freed at close")                                            \
    X(reclaim_moved, "bytes of live pieces moved at close")                             \
    X(reclaim_segments, "segments removed at close")                                    \
    X(reclaim_log_before, "mapping file's size before reclaiming")                      \
    X(reclaim_log_after, "mapping file's size after reclaiming")                        \
    X(coalesced_pieces, "extents of small pieces written again as whole pieces")        \
    X(coalesced_bytes, "their logical bytes")
#define HCOMP_LOCAL_TIMES(X)                                                            \
    X(read, "wall time inside reads")                                                   \
    X(sync_move, "the copies off volatile tiers")                                       \
    X(punch, "punching out overwritten pieces (replay, checks, fallocate)")             \
    X(reclaim, "reclaiming at close")                                                   \
    X(coalesce, "writing small pieces again at close, sync included")

#define HCOMP_STATS_COUNTER_(name, desc) uint64_t name;
#define HCOMP_STATS_TIME_(name, desc) double t_##name;
#define HCOMP_STATS_TIER_(name, desc) uint64_t tier_##name[HCOMP_MAX_TIERS];
#define HCOMP_STATS_CODEC_(name, desc) uint64_t codec_##name[HCOMP_CODEC_COUNT];
typedef struct hcomp_file_stats {
    HCOMP_RECORDED_COUNTERS(HCOMP_STATS_COUNTER_)
    HCOMP_RECORDED_TIMES(HCOMP_STATS_TIME_)
    HCOMP_RECORDED_PARTS(HCOMP_STATS_TIER_)
    HCOMP_RECORDED_PARTS(HCOMP_STATS_CODEC_)
    HCOMP_LOCAL_COUNTERS(HCOMP_STATS_COUNTER_)
    HCOMP_LOCAL_TIMES(HCOMP_STATS_TIME_)
    int reclaim_ran;            /* reclaiming at close ran */
    char reclaim_error[256];    /* why it failed ("" if it did not) */
    /* the codec chosen most (by bytes) on each tier */
    uint64_t tier_codec_raw[HCOMP_MAX_TIERS][HCOMP_CODEC_COUNT];
} hcomp_file_stats;
#undef HCOMP_STATS_COUNTER_
#undef HCOMP_STATS_TIME_
#undef HCOMP_STATS_TIER_
#undef HCOMP_STATS_CODEC_

/* Human-readable report. */
void hcomp_stats_print(FILE *out, const char *path, const hcomp_file_stats *s,
                       const hcomp_tier_config *cfg);
/* The reads' part of it alone (a handle that wrote nothing). */
void hcomp_stats_print_reads(FILE *out, const char *path, const hcomp_file_stats *s);
/* JSON text (malloc'd) for the mapping file's STATS record. */
char *hcomp_stats_json(const hcomp_file_stats *s, const hcomp_tier_config *cfg);
/* Add b's recorded counters and times to a's (the writers of a file, summed). */
void hcomp_stats_add_recorded(hcomp_file_stats *a, const hcomp_file_stats *b);
/* The recorded counters and times, one line each: indent, name, value, description. */
void hcomp_stats_print_recorded(FILE *out, const char *indent, const hcomp_file_stats *s);
/* A STATS record's JSON (len bytes, not terminated) read back into *s (zeroed first; keys
 * it lacks stay 0, unknown ones are ignored): its tiers by their place in the record, their
 * names into names[] when not NULL (at most HCOMP_MAX_TIERS, *ntiers of them), its codecs
 * by name. 0, or -1 if the text is no JSON object. */
int hcomp_stats_from_json(const char *json, size_t len, hcomp_file_stats *s,
                          char names[][HCOMP_TIER_NAME_MAX + 1], int *ntiers);

#endif
