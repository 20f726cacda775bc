/* hcomp's cost model: the input analyzer (what kind of data is this buffer?) and the
 * compression cost predictor (for this data, what ratio and speeds will codec c at
 * level l give?), bootstrapped from a JSON seed written by hcomp-profile and refined
 * at run time from measured outcomes. HCompress (Devarajan et al., IPDPS 2020),
 * sections IV-C and IV-D. The seed format is docs/SEED.md. */
#ifndef HCOMP_MODEL_H
#define HCOMP_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include "hcomp_error.h"
#include "hcomp_codec.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- input analyzer ------------------------------------------------------------ */

/* Element type of a buffer. The numbers appear in no file format (seeds store names). */
enum hcomp_dtype {
    HCOMP_DTYPE_BYTES = 0,  /* bytes, text, or anything else */
    HCOMP_DTYPE_INT32,
    HCOMP_DTYPE_INT64,
    HCOMP_DTYPE_FLOAT,
    HCOMP_DTYPE_DOUBLE,
    HCOMP_DTYPE_COUNT
};

/* Distribution class of the sampled values (decoded per dtype). */
enum hcomp_dist {
    HCOMP_DIST_UNIFORM = 0,
    HCOMP_DIST_NORMAL,
    HCOMP_DIST_EXPONENTIAL,
    HCOMP_DIST_GAMMA,
    HCOMP_DIST_COUNT
};

typedef struct hcomp_features {
    int dtype;          /* enum hcomp_dtype: given by the caller or inferred */
    int dist;           /* enum hcomp_dist of the sampled values */
    double entropy;     /* order-0 byte entropy of the sample, bits per byte (0..8) */
    double probe_ratio; /* ratio of lz4 (level 0) on the sampled slices (>= ~1) */
    size_t sampled;     /* bytes looked at */
} hcomp_features;

/* The most bytes hcomp_analyze looks at, whatever the buffer's length. */
#define HCOMP_ANALYZE_MAX_SAMPLE (3 * 4096)

/* Describe buf[0..len). dtype_hint: an enum hcomp_dtype (the caller knows it, e.g.
 * from the MPI datatype), or -1 to infer it. Looks at three slices of 5% of the buffer
 * (SPIOC), each at most 8 KiB, so its cost does not grow with len. Thread-safe.
 * HCOMP_E_INVAL for a NULL out, a NULL buf with len > 0 or a bad hint; len 0 gives
 * {BYTES (or the hint), UNIFORM, 0, 1, 0}. */
HCOMP_API int hcomp_analyze(const void *buf, size_t len, int dtype_hint, hcomp_features *out);

/* Names as used in seeds and messages ("bytes", "int32", "int64", "float", "double";
 * "uniform", "normal", "exponential", "gamma"); "?" when out of range. */
HCOMP_API const char *hcomp_dtype_name(int dtype);
HCOMP_API const char *hcomp_dist_name(int dist);
/* The reverse: -1 if unknown. */
HCOMP_API int hcomp_dtype_from_name(const char *name);
HCOMP_API int hcomp_dist_from_name(const char *name);

/* ---- cost predictor ------------------------------------------------------------- */

typedef struct hcomp_prediction {
    double ratio;      /* original / compressed */
    double comp_Bps;   /* compression speed, original bytes per second */
    double decomp_Bps; /* decompression speed, original bytes per second */
} hcomp_prediction;

typedef struct hcomp_predictor hcomp_predictor;

/* Load a seed (docs/SEED.md); seed_path NULL or "": the embedded default seed made on
 * the development machine (scripts/make-default-seed), parsed once per process and
 * copied for each load (every predictor returned is its caller's own, to feed and free).
 * Refused seeds: HCOMP_E_CORRUPT
 * (not JSON, truncated, not a seed), HCOMP_E_VERSION (another format version),
 * HCOMP_E_INVAL (missing or bad fields); HCOMP_E_NOENT/E_ACCESS/E_IO for the file.
 * The message names the file and the problem. */
HCOMP_API int hcomp_predictor_load(const char *seed_path, hcomp_predictor **out,
                                   hcomp_error *err);

/* Predicted ratio and speeds of codec at level (HCOMP_LEVEL_DEFAULT: the codec's
 * default level) for data with features f. A dot product: no allocation, no I/O.
 * HCOMP_E_INVAL if the seed has no model for that codec and level (skip the codec)
 * or f is out of range. Thread-safe. */
HCOMP_API int hcomp_predictor_predict(hcomp_predictor *p, const hcomp_features *f,
                                      unsigned codec, int level, hcomp_prediction *out);

/* Feedback: a measured outcome of codec at level on data with features f. raw_len
 * bytes compressed to stored_len (the codec's output, even if the piece was then
 * stored raw) in comp_seconds, decompressed in decomp_seconds; a time <= 0 is unknown
 * (a write measures compression, a read decompression), not both. Every `interval`
 * observations of one model (see below), that model is refit on its seed rows plus
 * its most recent observations (up to 256, newer ones weighted higher). Thread-safe
 * (compression workers call it). HCOMP_E_INVAL for no such model or bad numbers. */
HCOMP_API int hcomp_predictor_observe(hcomp_predictor *p, const hcomp_features *f,
                                      unsigned codec, int level, size_t raw_len,
                                      size_t stored_len, double comp_seconds,
                                      double decomp_seconds);
/* Refit every n observations of a model; default 16; 0 turns feedback off
 * (observations are then ignored). */
HCOMP_API void hcomp_predictor_set_feedback_interval(hcomp_predictor *p, unsigned n);

/* Write the predictor as a seed: the current coefficients, the seed rows and the
 * observations, so the next run starts from what this one learnt. Atomic: a temporary
 * file in the same directory, fsync, rename. */
HCOMP_API int hcomp_predictor_save(hcomp_predictor *p, const char *path, hcomp_error *err);

/* Observations recorded since load or the last save (0: nothing new to save). */
HCOMP_API unsigned long hcomp_predictor_dirty(const hcomp_predictor *p);

HCOMP_API void hcomp_predictor_free(hcomp_predictor *p);

/* The (codec, level) pairs the seed has models for, and how good each fit is. */
typedef struct hcomp_model_info {
    unsigned codec;       /* enum hcomp_codec_id */
    int level;            /* the codec's level (0 for codecs without levels) */
    size_t rows;          /* training rows from the seed */
    size_t observations;  /* observations held for refits (at most 256) */
    double r2[3];         /* R^2 of the current fit: log ratio, log comp, log decomp speed */
} hcomp_model_info;

HCOMP_API size_t hcomp_predictor_model_count(const hcomp_predictor *p);
HCOMP_API int hcomp_predictor_model_at(hcomp_predictor *p, size_t index, hcomp_model_info *out);

/* The seed's optional system signature: one entry per tier and node, as measured by
 * hcomp-profile --tiers. */
typedef struct hcomp_tier_signature {
    char name[64];
    char path[512];
    char node[256];       /* hostname of the node that measured it */
    int node_local;       /* 1 for a node-local tier, 0 for a shared one */
    double write_Bps;     /* sequential write bandwidth with fsync, bytes/s */
    double read_Bps;      /* sequential read bandwidth, bytes/s */
    double latency_s;     /* 4 KiB random read, seconds */
    uint64_t free_bytes;  /* free space when measured (statvfs) */
} hcomp_tier_signature;

HCOMP_API size_t hcomp_predictor_tier_count(const hcomp_predictor *p);
HCOMP_API int hcomp_predictor_tier_at(const hcomp_predictor *p, size_t index,
                                      hcomp_tier_signature *out);

/* The seed's optional global weights (w_c compression, w_d decompression, w_r ratio;
 * HCompress Table II). HCOMP_E_INVAL when the seed has none. */
HCOMP_API int hcomp_predictor_weights(const hcomp_predictor *p, double *w_comp,
                                      double *w_decomp, double *w_ratio);

/* The file the predictor came from, or "embedded default seed". */
HCOMP_API const char *hcomp_predictor_source(const hcomp_predictor *p);

#ifdef __cplusplus
}
#endif
#endif
