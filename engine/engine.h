/* The engine's side of a write: analysis, prediction, HCDP placement, feedback,
 * and the process-wide predictors (one per seed) it draws on. */
#ifndef HCOMP_ENGINE_H
#define HCOMP_ENGINE_H

#include "hcomp_model.h"
#include "hcdp.h"
#include "manager.h"
#include "tiers/tier_config.h"

struct hcomp_file;
struct hcomp_piece;

typedef struct hcomp_task_plan {
    hcomp_features feat;      /* the task's data */
    hcomp_features feat_sh;   /* the same after byte shuffle (when has_sh) */
    int has_sh;
    hcdp_input input;         /* candidates, tiers, weights */
    hcdp_plan hcdp;           /* the parts */
} hcomp_task_plan;

/* Smallest part of a piece worth placing on a tier when splitting. */
uint64_t hcomp_min_part(const hcomp_tier *tier);
/* Load (or share) the predictor of the file's seed. */
int hcomp_engine_open(struct hcomp_file *f, hcomp_error *err);
/* Save what the predictor learnt (if this opener owns the model and it changed),
 * then let go of it. */
int hcomp_engine_close(struct hcomp_file *f, hcomp_error *err);
/* Analyse, predict and plan one task of len bytes. */
int hcomp_engine_plan(struct hcomp_file *f, const void *buf, uint64_t len, hcomp_task_plan *plan,
                      hcomp_error *err);
/* The encoding the engine would give len bytes stored on tier t alone (used when a
 * drain moves a piece to another tier). */
void hcomp_engine_choose(struct hcomp_file *f, const void *buf, uint64_t len, int t,
                         unsigned *codec, int *level, int *filter);
/* Feed a piece's measured compression cost back to the predictor. */
void hcomp_engine_feedback(struct hcomp_file *f, const hcomp_task_plan *plan, const hcomp_job *job);
/* Feed a decoded piece's measured decompression time (and ratio) back: raw is its
 * logical bytes, seconds the time to decode and unfilter it. */
void hcomp_engine_read_feedback(struct hcomp_file *f, const struct hcomp_piece *p,
                                const void *raw, double seconds);

#endif
