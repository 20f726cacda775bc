/* The engine's side of a write: analysis, prediction, HCDP placement, feedback,
 * and the process-wide predictors (one per seed) it draws on. */
#ifndef HCOMP_ENGINE_H
#define HCOMP_ENGINE_H

#include <limits.h>
#include <stdint.h>
#include "hcomp_model.h"
#include "hcdp.h"
#include "manager.h"
#include "stats.h"
#include "tiers/tier_config.h"
#include "tiers/tier_space.h"

#define HCOMP_MAX_ALLOWED 32

/* A codec (and level) the engine may choose. */
typedef struct hcomp_allowed {
    const hcomp_codec *codec;
    int level;                      /* HCOMP_LEVEL_DEFAULT: every level the seed models */
} hcomp_allowed;

/* What a file's hints ask of the engine: the file layer sets it from its options. */
typedef struct hcomp_engine_settings {
    const hcomp_codec *codec;       /* NULL: "auto", the engine chooses */
    int level;                      /* HCOMP_LEVEL_DEFAULT or an explicit level */
    int nallowed;                   /* 0: all codecs the seed models */
    hcomp_allowed allowed[HCOMP_MAX_ALLOWED];
    double wc, wd, wr;              /* weights, normalised */
    unsigned feedback_interval;     /* 0: no feedback */
    uint32_t piece_size;
    uint32_t block_size;            /* pieces framed in blocks of this size (the tables' room) */
    uint32_t block_size_bs;         /* and pieces of floating-point data in a bit-shuffled
                                       form in these (hcomp_engine_block_size_bs) */
    int shuffle;                    /* 1: byte shuffle is a candidate where the type allows */
    int shuffle_fixed;              /* a fixed codec's transform (enum hcomp_shuffle), -1: its own */
    int drain_at_close;             /* node-local data moves to a shared tier before close returns */
    unsigned node_writers;          /* processes of the node writing at once: a tier's starting
                                       speed is shared among them (>= 1) */
    char seed[PATH_MAX];            /* the seed's path; "": the embedded default */
} hcomp_engine_settings;

/* A full analysis of a task's data (engine.c), reused for tasks whose fingerprint is
 * alike, and the plan made last with it, reused for like tasks: a file whose writes
 * cycle through a few kinds of data (the fields of a checkpoint) keeps one per kind. */
#define HCOMP_ANALYSIS_SLOTS 4
/* The forms in which codecs see a task's data: as it is, byte-shuffled, bit-shuffled, and
 * byte-shuffled then bytedelta-coded (c-blosc2). */
enum { HCOMP_FORM_PLAIN = 0, HCOMP_FORM_SHUFFLED, HCOMP_FORM_BITSHUFFLED, HCOMP_FORM_BYTEDELTA,
       HCOMP_FORMS };
#define HCOMP_SLOT_OBSERVED 8
typedef struct hcomp_analysis_slot {
    int valid, has_sh, dtype_hint, want_sh;
    unsigned age;              /* tasks that reused it since it was made */
    double fp;                 /* the fingerprint it was made for */
    uint64_t used;             /* when last used (least recently used is replaced) */
    hcomp_features feat, feat_sh, feat_bs, feat_bd;
    /* what the pieces written with it did against their predictions: the mean log
     * residual of the ratio per form of the data (HCOMP_FORM_*), so that the models not
     * yet observed on it are moved like the observed ones of the same form */
    double form_resid[HCOMP_FORMS];
    unsigned form_n[HCOMP_FORMS];
    unsigned form_tried;       /* bit f: a plan has tried form f (explore_form) */
    unsigned form_seen;        /* bit f: pieces of this data in form f were observed (the
                                  residuals taken from other kinds are not) */
    int nobs;                  /* the codec:level:forms observed on this data, and the */
    unsigned obs_codec[HCOMP_SLOT_OBSERVED];   /* mean log ratio their pieces made (a */
    int obs_level[HCOMP_SLOT_OBSERVED];        /* running mean of the last few): what */
    int obs_form[HCOMP_SLOT_OBSERVED];         /* they are predicted to make on it */
    double obs_lratio[HCOMP_SLOT_OBSERVED];
    unsigned obs_n[HCOMP_SLOT_OBSERVED];
    int plan_valid, plan_ntiers, plan_cand_n;
    uint64_t plan_size;
    uint32_t plan_sig;
    /* the tiers' rooms when the plan was made and its predicted stored bytes (a plan on
     * a tier too small for the raw task twice is reused while that tier holds them twice
     * and neither it nor a faster tier has grown) */
    uint64_t plan_rooms[HCOMP_MAX_TIERS], plan_need;
    unsigned char plan_fill[HCOMP_MAX_TIERS];   /* each tier's fill, the price of its room */
    double plan_speed[HCOMP_MAX_TIERS][2];     /* each tier's read and write speed then */
    unsigned plan_options;
    /* the candidates (predictions) made for these features: valid while the options and
     * the predictor's models are those they were made with */
    int cand_valid;
    unsigned cand_options;
    unsigned long cand_models;
    hcdp_candidate plan_cand[HCDP_MAX_CANDIDATES];
    hcdp_plan plan_hcdp;
    /* the process-wide analysis it shares (engine.c): index and generation, -1 / 0 */
    int shared_ix;
    uint64_t shared_gen;
} hcomp_analysis_slot;

/* The slot's observation of this codec, level and filter's form (pieces of its data stored
 * with them: their mean ratio is its prediction for this data), or -1: none. */
int hcomp_engine_observed(const hcomp_analysis_slot *a, unsigned codec, int level, int filter);

/* The engine's state for one open file. path, cfg, tw and stats are the file's: the
 * engine reads the tiers' rooms through the file's writers and counts in its stats. */
typedef struct hcomp_engine {
    const char *path;               /* for messages */
    const hcomp_tier_config *cfg;
    hcomp_tier_writer *tw;          /* cfg->ntiers writers */
    hcomp_file_stats *stats;
    hcomp_engine_settings set;
    unsigned settings_gen;          /* counts changes of set (plans made before are stale) */
    hcomp_predictor *pred;          /* shared by the files using the same seed */
    int model_owner;                /* saves what the predictor learnt at close */
    int dtype_hint;                 /* enum hcomp_dtype of the data being written, or -1 */
    /* the last full analyses, reused for similar tasks, each with its last plan */
    hcomp_analysis_slot aslot[HCOMP_ANALYSIS_SLOTS];
    uint64_t aslot_tick;
    int aslot_last;                 /* the slot of the last task, -1 */
    /* the same for pieces decoded by reads (decompression feedback) */
    hcomp_features rfeat, rfeat_sh, rfeat_bs, rfeat_bd;
    int rfeat_valid, rfeat_sh_filter, rfeat_bs_filter, rfeat_bd_filter, rfeat_dtype_hint; /* of these filters */
    unsigned rfeat_age;
    double rfeat_fp;
} hcomp_engine;

/* e set up for a file (its path, tiers, writers, statistics); no predictor yet. */
void hcomp_engine_init(hcomp_engine *e, const char *path, const hcomp_tier_config *cfg,
                       hcomp_tier_writer *tw, hcomp_file_stats *stats);
/* New settings: plans and predictions made with the old ones are stale. */
void hcomp_engine_set(hcomp_engine *e, const hcomp_engine_settings *set);

typedef struct hcomp_task_plan {
    hcomp_features feat;      /* the task's data */
    hcomp_features feat_sh;   /* the same after byte shuffle (when has_sh) */
    hcomp_features feat_bs;   /* as codecs that bit-shuffle see it (when has_sh) */
    hcomp_features feat_bd;   /* as c-blosc2's shuffle + bytedelta sees it (when has_sh) */
    int has_sh;
    int slot;                 /* the engine's analysis slot it was planned from */
    hcdp_input input;         /* candidates, tiers, weights */
    hcdp_plan hcdp;           /* the parts */
    /* part 0's pieces are encoded with these candidates too, and each keeps the smallest
     * encoding: when part 0 is a trial of a form never tried (alt: the plan's choice it
     * stands in for), or when its choice is in a form not yet observed on this data
     * (alt: the best candidate of each other form) */
    int nalt;
    int alt[HCOMP_JOB_ALTS];
} hcomp_task_plan;

/* Smallest part of a piece worth placing on a tier when splitting. */
uint64_t hcomp_min_part(const hcomp_tier *tier);
/* Load (or share) the predictor of the file's seed. */
int hcomp_engine_open(hcomp_engine *e, hcomp_error *err);
/* Save what the predictor learnt (if this opener owns the model and it changed),
 * then let go of it. */
int hcomp_engine_close(hcomp_engine *e, hcomp_error *err);
/* Analyse, predict and plan one task of len bytes. */
int hcomp_engine_plan(hcomp_engine *e, const void *buf, uint64_t len, hcomp_task_plan *plan,
                      hcomp_error *err);
/* The encoding the engine would give len bytes stored on tier t alone (used when a
 * drain moves a piece to another tier), and their element type (enum hcomp_dtype). */
void hcomp_engine_choose(hcomp_engine *e, const void *buf, uint64_t len, int t,
                         unsigned *codec, int *level, int *filter, int *dtype);
/* The blocks a piece of data of this element type (enum hcomp_dtype) is framed in when
 * its codec bit-shuffles it; in any other form, set.block_size. */
uint32_t hcomp_engine_block_size_bs(const hcomp_engine *e, int dtype);
/* Feed a piece's measured compression cost back to the predictor. */
void hcomp_engine_feedback(hcomp_engine *e, const hcomp_task_plan *plan, const hcomp_job *job);
/* Feed a decoded piece's measured decompression time (and ratio) back: raw is its
 * raw_len logical bytes (stored_len stored, with codec, level and filter), seconds the
 * time to decode and unfilter it. */
void hcomp_engine_read_feedback(hcomp_engine *e, unsigned codec, int level, int filter,
                                uint32_t raw_len, uint32_t stored_len, const void *raw,
                                double seconds);

#endif
