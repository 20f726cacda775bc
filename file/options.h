/* The hcomp_* hints, declared once (X-macro) so names, defaults, parsing and
 * listing never drift apart. README lists them for users. */
#ifndef HCOMP_OPTIONS_H
#define HCOMP_OPTIONS_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include "hcomp.h"
#include "engine/engine.h"

#define HCOMP_PIECE_ALIGN 4096u
#define HCOMP_PIECE_SIZE_MAX (64u << 20)
#define HCOMP_BLOCK_AUTO (256u << 10)     /* "auto" block size but for archival */
#define HCOMP_BLOCK_AUTO_BS (64u << 10)    /* and for floating-point data bit-shuffled when
                                             reads weigh (hcomp_options_block_size_bs) */
#define HCOMP_BLOCK_AUTO_RANDOM (8u << 10) /* "auto" when access_style says random */
#define HCOMP_ACCESS_STYLE_MAX 1024        /* MPICH's MPI_MAX_INFO_VAL */

/* MPI's reserved hint access_style (MPI-4.0 14.2.8), the values hcomp knows */
enum hcomp_access_style {
    HCOMP_ACCESS_READ_ONCE = 1 << 0,
    HCOMP_ACCESS_WRITE_ONCE = 1 << 1,
    HCOMP_ACCESS_READ_MOSTLY = 1 << 2,
    HCOMP_ACCESS_WRITE_MOSTLY = 1 << 3,
    HCOMP_ACCESS_SEQUENTIAL = 1 << 4,
    HCOMP_ACCESS_REVERSE_SEQUENTIAL = 1 << 5,
    HCOMP_ACCESS_RANDOM = 1 << 6,
};

/*  X(hint name, default, parser, formatter). All are hcomp_* keys but MPI's reserved
 *  access_style, which is shown as the user gave it and never refused (a program
 *  written for another MPI must run: values hcomp does not know are ignored). */
#define HCOMP_OPTION_LIST(X)                                                        \
    X("hcomp_config", "", opt_parse_config, opt_show_config)                        \
    X("hcomp_codec", "auto", opt_parse_codec, opt_show_codec)                       \
    X("hcomp_codecs", "all", opt_parse_codecs, opt_show_codecs)                     \
    X("hcomp_priority", "read_after_write", opt_parse_priority, opt_show_priority)  \
    X("hcomp_weights", "", opt_parse_weights, opt_show_weights)                     \
    X("hcomp_seed", "", opt_parse_seed, opt_show_seed)                              \
    X("hcomp_feedback_interval", "16", opt_parse_feedback, opt_show_feedback)       \
    X("hcomp_piece_size", "1048576", opt_parse_piece_size, opt_show_piece_size)     \
    X("hcomp_block_size", "auto", opt_parse_block_size, opt_show_block_size)        \
    X("hcomp_threads", "0", opt_parse_threads, opt_show_threads)                    \
    X("hcomp_shuffle", "auto", opt_parse_shuffle, opt_show_shuffle)                 \
    X("hcomp_stats", "", opt_parse_stats, opt_show_stats)                           \
    X("hcomp_drain", "close", opt_parse_drain, opt_show_drain)                      \
    X("hcomp_sync", "durable", opt_parse_sync, opt_show_sync)                       \
    X("hcomp_reclaim", "auto", opt_parse_reclaim, opt_show_reclaim)                \
    X("hcomp_write_buffer", "0", opt_parse_write_buffer, opt_show_write_buffer)       \
    X("hcomp_read_ahead", "67108864", opt_parse_read_ahead, opt_show_read_ahead)     \
    X("hcomp_flush_after", "1048576", opt_parse_flush_after, opt_show_flush_after)  \
    X("hcomp_open_replay", "auto", opt_parse_open_replay, opt_show_open_replay)     \
    X("access_style", "", opt_parse_access_style, opt_show_access_style)            \
    X("hcomp_format", "3", opt_parse_format, opt_show_format)

struct hcomp_options {
    char config[PATH_MAX];          /* "" : $HCOMP_CONFIG, else the embedded default */
    const hcomp_codec *codec;       /* NULL: "auto", the engine chooses */
    int level;                      /* HCOMP_LEVEL_DEFAULT or an explicit level */
    int nallowed;                   /* 0: all codecs the seed models */
    hcomp_allowed allowed[HCOMP_MAX_ALLOWED];
    int priority;                   /* enum hcomp_priority */
    int weights_set;                /* hcomp_weights other than the priority's: they override it */
    double wc, wd, wr;              /* effective, normalised */
    char seed[PATH_MAX];            /* "" : $HCOMP_SEED, else the embedded default */
    unsigned feedback_interval;
    uint32_t piece_size;            /* multiple of 4096 */
    uint32_t block_size;            /* pieces of format-2 files are framed in these;
                                       0: "auto" (hcomp_options_block_size) */
    unsigned threads;               /* 0: as many as the cores */
    int shuffle;                    /* 1: a candidate when the data type allows it */
    int stats;                      /* -1: $HCOMP_STATS decides */
    int drain;                      /* node-local pieces move to a shared tier: 0 never,
                                       1 at close, 2 also in the background when idle */
    int sync_tiers;                 /* 1: sync makes each tier durable as it is (volatile
                                       tiers too); 0: pieces leave volatile tiers first */
    int reclaim;                    /* enum hcomp_reclaim_mode */
    uint32_t write_buffer;          /* bytes of small writes a handle may gather (0: none) */
    uint32_t flush_after;           /* a segment's bytes are sent to storage (not waited
                                       for) each time this many were written (0: at
                                       sync only) */
    uint32_t read_ahead;            /* logical bytes a sequential reader's reads are ahead of
                                       it, at most (0: none; file/read_ahead.c) */
    int open_replay;                /* 0 auto, 1 shared, 2 each: who replays the log in a
                                       collective open (the driver reads it:
                                       ad_hcomp_opencoll.c) */
    unsigned access;                /* enum hcomp_access_style bits of access_style */
    char access_style[HCOMP_ACCESS_STYLE_MAX];  /* as given ("" none), for get_info */
    unsigned format;                /* the format version of files this opener creates: 3,
                                       or 2 for readers of hcomp before writer logs (one
                                       node's writers only: docs/FORMAT.md) */
};

/* When the space of dead pieces comes back (file/reclaim.c): at the last close, when it
 * pays (auto) or whenever anything is dead (close); or only by `hcomp compact`. */
enum hcomp_reclaim_mode { HCOMP_RECLAIM_AUTO = 0, HCOMP_RECLAIM_CLOSE, HCOMP_RECLAIM_NEVER };

enum hcomp_priority {
    HCOMP_PRIO_ASYNC = 0,
    HCOMP_PRIO_ARCHIVAL,
    HCOMP_PRIO_READ_AFTER_WRITE,
    HCOMP_PRIO_READ_BANDWIDTH,
    HCOMP_PRIO_WRITE_BANDWIDTH,
    HCOMP_PRIO_COUNT
};

/* Effective seed path ("" for the embedded default) and stats switch. */
const char *hcomp_options_seed_path(const hcomp_options *o);
/* The block size pieces are framed in: the hint's, or for "auto" HCOMP_BLOCK_AUTO_RANDOM
 * when access_style says random (a 4 KiB read then fetches about 8 KiB), else
 * HCOMP_BLOCK_AUTO, except under the archival priority (its preset weights): the largest
 * power of two that fits in a piece, so that each piece is one block (a compressor sees
 * the whole piece: 0.1-0.2% more ratio for bit-shuffled zstd on particles; reads fetch
 * whole pieces). */
uint32_t hcomp_options_block_size(const hcomp_options *o);
/* Those of pieces of floating-point data in a bit-shuffled form: HCOMP_BLOCK_AUTO_BS for
 * "auto" under the priorities that weigh reads (read_after_write, the default, and
 * read_bandwidth: a small read fetches a quarter of what it would for 0.1-0.5% of ratio
 * and 5-10% of blosc-lz4's compression speed), else the same (docs/ENGINE.md, "Blocks and
 * reads"). */
uint32_t hcomp_options_block_size_bs(const hcomp_options *o);
int hcomp_options_stats_on(const hcomp_options *o);
/* access_style says random (and neither sequential nor reverse_sequential): small reads
 * here and there, which "auto" answers with small blocks. */
int hcomp_options_access_random(const hcomp_options *o);
/* What the options ask of the engine. */
void hcomp_options_engine_settings(const hcomp_options *o, hcomp_engine_settings *set);

#endif
