/* hcomp-profile's core, MPI-free and reusable by the unit tests: the plan of training
 * cases, codec measurements, fitting a seed, the accuracy report, and the tier
 * benchmark (the system signature). */
#ifndef HCOMP_PROFILE_CORE_H
#define HCOMP_PROFILE_CORE_H

#include <stddef.h>
#include <stdio.h>
#include "hcomp_model.h"
#include "engine/predictor.h"
#include "tiers/tier_config.h"

#define HCOMP_PROFILE_MAX_MODELS 64
#define HCOMP_PROFILE_MAX_SIZES 8
#define HCOMP_PROFILE_MAX_SAMPLES 16

typedef struct hcomp_model_id {
    unsigned codec;
    int level;
} hcomp_model_id;

typedef struct hcomp_sample_file {
    const char *path;
    int dtype; /* -1: inferred */
} hcomp_sample_file;

typedef struct hcomp_profile_opts {
    int thorough;          /* 0: quick plan, 1: thorough plan */
    unsigned long seed;    /* gsl_rng seed of the data generator */
    hcomp_model_id models[HCOMP_PROFILE_MAX_MODELS];
    size_t nmodels;        /* 0: the default list (hcomp_profile_default_models) */
    size_t sizes[HCOMP_PROFILE_MAX_SIZES];
    size_t nsizes;         /* 0: the mode's sizes */
    hcomp_sample_file samples[HCOMP_PROFILE_MAX_SAMPLES];
    size_t nsamples;
    int min_reps;          /* repetitions at least (median taken); 0: the mode's */
    double min_seconds;    /* and repeat until this much time was spent; <0: the mode's */
    FILE *progress;        /* progress lines, or NULL */
    int only_dtype;        /* -1, or restrict generated data to one dtype (tests) */
} hcomp_profile_opts;

/* The default list: lz4 1,9; zstd 1,3,9; zlib 1,6; bzip2 9; brotli 1,5; snappy; lzma 1;
 * none. */
size_t hcomp_profile_default_models(hcomp_model_id *out, size_t cap);
/* Defaults for the mode (quick: thorough = 0). */
void hcomp_profile_opts_init(hcomp_profile_opts *o, int thorough);

/* One training case: generated data (dtype, dist, shape) or a slice of a sample file. */
typedef struct hcomp_profile_case {
    int dtype, dist, shape; /* generated data */
    size_t size;
    const hcomp_sample_file *sample; /* non-NULL: a slice of this file */
} hcomp_profile_case;

/* The cases of a plan (malloc'ed; *n set). held_out: the report's plan (other sizes,
 * random shapes) instead of the training plan. */
hcomp_profile_case *hcomp_profile_plan(const hcomp_profile_opts *o, int held_out, size_t *n);

/* Fill buf with the case's data (size bytes); *dtype_hint is the dtype to give
 * hcomp_analyze (-1 for a sample file of unknown type). */
int hcomp_profile_make_data(const hcomp_profile_case *c, void *rng, unsigned char *buf,
                            int *dtype_hint, hcomp_error *err);

/* How codec c's model is measured on buf (features plain): the features each row carries
 * (out) and the filter it compresses with; returns how many (0..2). A model is asked for
 * every form the engine offers its codec: codecs that bit-shuffle inside see typed data
 * bit-shuffled (with the bitshuffle features) and bytes as they are; the others see the
 * data as it is and, when typed, byte-shuffled (with the shuffled features), so that
 * predictions of shuffled forms are interpolated, not extrapolated from plain data. */
int hcomp_profile_model_views(const hcomp_codec *c, const unsigned char *buf, size_t len,
                              const hcomp_features *plain, hcomp_features out[2], int filter[2]);

/* Measure codec:level with filter on buf: ratio, compression and decompression bytes/s
 * (medians), checking that the data round-trips. Fills r->y. */
int hcomp_profile_measure(const hcomp_codec *c, int level, int filter, const unsigned char *buf,
                          size_t len, int min_reps, double min_seconds, hcomp_row *r,
                          hcomp_error *err);

/* The training run: every case, every model; rows into p (models created); fits p. */
int hcomp_profile_run(const hcomp_profile_opts *o, hcomp_predictor *p, hcomp_error *err);

/* Accuracy of a predictor on fresh data (held-out plan, o->seed should differ from the
 * seed's): per target, over all models and per codec:level. */
typedef struct hcomp_accuracy {
    size_t n;
    double r2[HCOMP_NTARGET];        /* on logs: 1 - SSE/SST */
    double mre[HCOMP_NTARGET];       /* mean |predicted - actual| / actual */
    double mre_const[HCOMP_NTARGET]; /* the same for the constant model (geometric mean) */
} hcomp_accuracy;

typedef struct hcomp_report {
    hcomp_accuracy overall;
    size_t nmodels;
    hcomp_model_id model[HCOMP_PROFILE_MAX_MODELS];
    hcomp_accuracy per_model[HCOMP_PROFILE_MAX_MODELS];
} hcomp_report;

int hcomp_profile_report(const hcomp_profile_opts *o, hcomp_predictor *p, hcomp_report *rep,
                         hcomp_error *err);
void hcomp_profile_print_report(FILE *out, const hcomp_report *rep);

/* Benchmark one tier: write and read bandwidth of a file of file_bytes (written with
 * fsync, read after dropping it from the page cache), latency of 4 KiB random reads,
 * free space. filedir replaces "@filedir". */
int hcomp_tier_bench(const hcomp_tier *t, const char *filedir, size_t file_bytes,
                     hcomp_tier_signature *out, hcomp_error *err);

double hcomp_profile_now(void);

#endif
