/* The cost predictor's internals (the public API is include/hcomp_model.h): the
 * feature vector, models with their training rows and observation rings, fitting, and
 * the seed reader/writer (seed.c). Shared with the profiler and the unit tests. */
#ifndef HCOMP_PREDICTOR_H
#define HCOMP_PREDICTOR_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include "hcomp_model.h"

/* x(f) = [1, entropy, log(probe_ratio), dtype one-hot without bytes (int32, int64,
 * float, double), dist one-hot without uniform (normal, exponential, gamma)]. */
#define HCOMP_NFEAT 10
/* log(ratio), log(compression bytes/s), log(decompression bytes/s). */
#define HCOMP_NTARGET 3
enum { HCOMP_TARGET_RATIO = 0, HCOMP_TARGET_COMP, HCOMP_TARGET_DECOMP };

#define HCOMP_OBS_RING 256          /* recent observations kept per model */
#define HCOMP_OBS_WEIGHT 8.0         /* an observation's weight when new ... */
#define HCOMP_OBS_DECAY 0.99458      /* ... times this per newer one: 2 after 255 */
#define HCOMP_SEED_MAX_OBS_ROWS 1024 /* observation rows kept per model in a saved seed */
#define HCOMP_FEEDBACK_DEFAULT 16
#define HCOMP_LEVEL_SLOTS 32         /* levels level_min .. level_min + 31 per codec */
#define HCOMP_SEED_VERSION 1
#define HCOMP_SEED_FORMAT "hcomp-seed"
#define HCOMP_SEED_ROW_FIELDS 9

extern const char *const hcomp_feature_names[HCOMP_NFEAT];
extern const char *const hcomp_target_names[HCOMP_NTARGET];
extern const char *const hcomp_row_field_names[HCOMP_SEED_ROW_FIELDS];

/* One measured outcome: features of the data and what the codec did with it. */
typedef struct hcomp_row {
    int dtype, dist;
    double entropy, probe_ratio;
    uint64_t raw_len;
    double y[HCOMP_NTARGET]; /* ratio, comp bytes/s, decomp bytes/s; <= 0: unknown */
    int observed;            /* 0: from the profiler, 1: an observation of some run */
} hcomp_row;

/* The weighted normal equations of one target's least squares, sum w x x', sum w x y,
 * sum w y^2 (y the log target), so that a refit is a 10x10 solve, not a pass over rows. */
typedef struct hcomp_normal {
    double A[HCOMP_NFEAT][HCOMP_NFEAT];
    double b[HCOMP_NFEAT];
    double yy;
    size_t n;                  /* rows summed */
} hcomp_normal;

/* Local corrections (the feedback's memory of the data a run actually writes): what a
 * linear model over a few features cannot capture, such as how fast one codec runs on one
 * field of one application, is kept per neighbourhood of the features. A cluster is
 * anchored at its first observation (same element type, entropy within
 * HCOMP_LOCAL_ENTROPY bits, probe ratio within a factor exp(HCOMP_LOCAL_LPROBE)) and holds
 * the decayed sums of its observations' feature vectors and log targets. A prediction is
 * moved by the clusters' mean residuals under the current fit, each weighted by its weight
 * and a kernel of its distance (hcomp_model_local_correction), the sum shrunk by
 * HCOMP_LOCAL_SHRINK (one observation moves a prediction 95% of the way). */
#define HCOMP_LOCAL_CLUSTERS 32
#define HCOMP_LOCAL_ENTROPY 0.15
#define HCOMP_LOCAL_LPROBE 0.05
#define HCOMP_LOCAL_DECAY 0.9
#define HCOMP_LOCAL_SHRINK 0.05
#define HCOMP_LOCAL_BANDWIDTH2 2.0   /* the kernel's squared width, in cluster radii */

/* What a prediction reads of a cluster, packed apart from the sums it is made from: a
 * prediction scans every cluster of every model, after a compression has flushed the
 * caches (spread through the sums, it touched 50 KiB for the 13 models: 5 us a task). */
typedef struct hcomp_local_key {
    int dtype;
    double entropy, lprobe;          /* the anchor */
    double w[HCOMP_NTARGET];         /* decayed weight per target */
    double resid[HCOMP_NTARGET];     /* mean residual under the model's coefficients */
} hcomp_local_key;

typedef struct hcomp_local_sums {
    double sy[HCOMP_NTARGET], sx[HCOMP_NTARGET][HCOMP_NFEAT];
    unsigned long used;
} hcomp_local_sums;

typedef struct hcomp_model {
    unsigned codec;
    int level;
    double coef[HCOMP_NTARGET][HCOMP_NFEAT];
    double r2[HCOMP_NTARGET];  /* of the current fit (NaN: unknown) */
    size_t nfit[HCOMP_NTARGET];
    hcomp_row *rows;           /* from the seed */
    size_t nrows, rows_cap;
    hcomp_row ring[HCOMP_OBS_RING]; /* observations of this run, oldest at ring_next */
    size_t ring_len, ring_next;
    unsigned since_fit;
    /* for refits during a run: the seed rows' sums (recomputed when rows change) and the
     * observations' sums, older ones decayed (exponential forgetting) */
    hcomp_normal rows_ne[HCOMP_NTARGET], obs_ne[HCOMP_NTARGET];
    double obs_gain[HCOMP_NTARGET]; /* obs_ne's scale: the sums / this are the decayed sums */
    int rows_ne_valid;
    int nlocal;                /* clusters in use: the first nlocal of each array */
    unsigned local_dtypes;     /* bit d set: some cluster is of element type d */
    hcomp_local_key local_key[HCOMP_LOCAL_CLUSTERS];
    hcomp_local_sums local_sum[HCOMP_LOCAL_CLUSTERS];
    unsigned long local_tick;
} hcomp_model;

struct hcomp_predictor {
    pthread_mutex_t mu;
    hcomp_model *models;
    size_t nmodels, models_cap;
    int16_t index[HCOMP_CODEC_COUNT][HCOMP_LEVEL_SLOTS]; /* model index or -1 */
    unsigned interval;
    unsigned long dirty;
    unsigned long generation;   /* counts refits during the run: predictions made before differ */
    int embedded;               /* a copy of the embedded seed (hcomp_predictor_load(NULL))
                                   whose models loaded no clusters (no observation rows) */
    char source[1024];
    /* provenance */
    char created[40];
    char command[2048];
    char hostname[256];
    char cpu[256];
    long cores;
    /* optional parts */
    int has_weights;
    double weights[3]; /* compress, decompress, ratio; normalised */
    hcomp_tier_signature *tiers;
    size_t ntiers;
    char system_created[40];
};

/* The feature vector of f; -1 if dtype or dist is out of range. */
int hcomp_feature_vector(int dtype, int dist, double entropy, double probe_ratio,
                         double x[HCOMP_NFEAT]);

/* A prediction of one model, with the model's codec and level; line is the regression's
 * alone, without the local corrections (what another predictor with the same coefficients
 * and no clusters predicts). */
typedef struct hcomp_model_prediction {
    unsigned codec;
    int level;
    hcomp_prediction pred, line;
} hcomp_model_prediction;

/* The predictions of models first .. first + count - 1 (numbered as by
 * hcomp_predictor_model_at) for features f, under one lock: what the engine asks for
 * every task it plans afresh. HCOMP_E_INVAL for a range past the models or bad features. */
int hcomp_predictor_predict_range(hcomp_predictor *p, const hcomp_features *f, size_t first,
                                  size_t count, hcomp_model_prediction *out);

/* The models whose predictions for element type dtype carry a local correction (they
 * have a cluster of that type), as codec:level pairs into codec[] and level[] (at most
 * max); returns their count, which may exceed max. */
size_t hcomp_predictor_corrected(hcomp_predictor *p, int dtype, unsigned *codec, int *level,
                                 size_t max);

/* The count of refits so far. Between refits only the local corrections move (each
 * observation corrects its own neighbourhood at once): a cache of predictions for one kind
 * of data may be kept until the count changes, as the engine keeps a task stream's. */
unsigned long hcomp_predictor_generation(hcomp_predictor *p);

/* 1 if p is a copy of the embedded seed not refit since: its lines are those of every other
 * such copy, so the process's files can share the lines one predicted (each adding its own
 * local corrections, hcomp_predictor_corrected). */
int hcomp_predictor_embedded_pristine(hcomp_predictor *p);

/* An empty predictor (no models), for the profiler and the seed reader. */
hcomp_predictor *hcomp_predictor_new(void);
/* The model of codec:level, created if absent (level already resolved); NULL if the
 * codec or level is out of range or memory runs out. */
hcomp_model *hcomp_predictor_model(hcomp_predictor *p, unsigned codec, int level, int create);
/* Append a training row (values rounded to 6 significant digits, as in seeds); an
 * observation row (a seed's saved feedback) also enters the local corrections. */
int hcomp_model_add_row(hcomp_model *m, const hcomp_row *row);
/* The same for a row whose numbers are already rounded to 6 significant digits (the
 * embedded seed's, written so by scripts/embed-seed: test_seed checks it), skipping the
 * rounding, a quarter of a process's first load of that seed. */
int hcomp_model_add_round_row(hcomp_model *m, const hcomp_row *row);
/* Fit the three targets of m by weighted least squares on its rows (profiler rows weight
 * 1, saved observations 2): without with_ring by GSL's truncated SVD over the rows; with
 * it (the refits of a run) from the normal equations of the rows plus this run's
 * observations (weight 8, decayed by HCOMP_OBS_DECAY per newer observation of the same
 * target), a 10x10 Cholesky solve of microseconds. A target with fewer usable rows than
 * HCOMP_NFEAT keeps its coefficients. Returns the number of targets fitted. */
int hcomp_model_fit(hcomp_model *m, int with_ring);
/* The local correction of each target for features x (0 where no cluster is near). */
void hcomp_model_local_correction(const hcomp_model *m, int dtype, const double x[HCOMP_NFEAT],
                                  double out[HCOMP_NTARGET]);
/* Sum the seed rows' normal equations, which the refits of a run start from (a pass over
 * the rows, so the seed reader does it rather than the first refit of a write). */
void hcomp_model_prepare_refits(hcomp_model *m);
/* Fit every model; HCOMP_E_INVAL naming the first model without enough rows. */
int hcomp_predictor_fit_all(hcomp_predictor *p, hcomp_error *err);
/* Record provenance: created = now (UTC), the command line, this machine. */
void hcomp_predictor_set_provenance(hcomp_predictor *p, const char *command);
/* Replace the system signature. */
int hcomp_predictor_set_tiers(hcomp_predictor *p, const hcomp_tier_signature *t, size_t n);
/* Round v to 6 significant digits (what seeds store for measured values). */
double hcomp_round6(double v);
/* The row's features and measured values to 6 significant digits (unknown ones to 0). */
void hcomp_row_round(hcomp_row *r);

/* ---- seed.c -------------------------------------------------------------------------- */

/* Parse seed text; source names it in messages. */
int hcomp_seed_parse(const char *text, size_t len, const char *source, hcomp_predictor **out,
                     hcomp_error *err);
/* The seed text of p (malloc'ed, NUL-terminated), or NULL when out of memory. The
 * caller holds p->mu or owns p alone. */
char *hcomp_seed_dump(hcomp_predictor *p);
/* Write text to path atomically (temporary file in the same directory, fsync, rename,
 * fsync of the directory). */
int hcomp_seed_write_file(const char *path, const char *text, int overwrite, hcomp_error *err);
/* The embedded default seed, joined (malloc'ed); NULL when out of memory. */
char *hcomp_seed_default_text(void);
/* The embedded default seed as a predictor (source "embedded default seed"): the same as
 * hcomp_seed_parse of its text, in a fraction of the time (its rows are C data). */
int hcomp_seed_load_default(hcomp_predictor **out, hcomp_error *err);

/* A row of the embedded seed as C data (scripts/embed-seed writes them). */
typedef struct hcomp_seed_row {
    unsigned model;                 /* its model's index in the seed's "models" */
    char dtype[8], dist[12];        /* names, as in the JSON */
    double entropy, probe_ratio;
    unsigned long long raw_len;
    double y[HCOMP_NTARGET];        /* ratio, comp, decomp bytes/s; 0: not measured */
    int observed;
} hcomp_seed_row;

/* engine/generated/seed_default.c (scripts/make-default-seed): the seed's text as
 * NULL-terminated lines; the same text with every model's rows empty; those rows. */
extern const char *const hcomp_seed_default_lines[];
extern const char *const hcomp_seed_default_head_lines[];
extern const hcomp_seed_row hcomp_seed_default_rows[];
extern const size_t hcomp_seed_default_nrows;
extern const char hcomp_seed_default_made_by[];

#endif
