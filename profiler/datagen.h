/* The profiler's data generator (docs/SEED.md, "Training data"): buffers of a given
 * element type, value distribution (GSL's gsl_ran_* generators) and shape, spanning
 * compressibility from incompressible to nearly constant. Deterministic for a given
 * gsl_rng state. */
#ifndef HCOMP_DATAGEN_H
#define HCOMP_DATAGEN_H

#include <stddef.h>
#include <gsl/gsl_rng.h>

enum hcomp_gen_shape {
    HCOMP_GEN_IID = 0, /* independent draws at full precision */
    HCOMP_GEN_QUANT,   /* draws with few significant bits (floats) or few distinct values */
    HCOMP_GEN_SORTED,  /* the draws sorted ascending */
    HCOMP_GEN_WALK,    /* a random walk whose steps are the (centred) draws */
    HCOMP_GEN_SMOOTH,  /* a moving average of the draws (a smooth field) */
    HCOMP_GEN_RUNS,    /* each draw repeated 2..32 times (piecewise constant) */
    HCOMP_GEN_SPARSE,  /* 90% zeros, the rest draws */
    HCOMP_GEN_TEXT,    /* words from a word list, chosen by the draws (bytes only) */
    HCOMP_GEN_SHAPE_COUNT
};

const char *hcomp_gen_shape_name(int shape);
int hcomp_gen_shape_from_name(const char *name);

/* One draw of an enum hcomp_dist: uniform(0,1), normal(0,1), exponential(mean 1),
 * gamma(shape 3, scale 1). */
double hcomp_gen_draw(gsl_rng *r, int dist);

/* Fill buf[0..len) with elements of dtype (enum hcomp_dtype); len is rounded down to
 * whole elements, the tail is zeroed. Returns 0, or -1 when out of memory or the
 * arguments are out of range. */
int hcomp_gen_fill(gsl_rng *r, int dtype, int dist, int shape, unsigned char *buf, size_t len);

#endif
