/* The input analyzer's internals (the public API is include/hcomp_model.h), exposed
 * for the profiler and the unit tests. */
#ifndef HCOMP_ANALYZER_H
#define HCOMP_ANALYZER_H

#include <stddef.h>
#include <stdint.h>
#include "hcomp_model.h"

/* Slices: three of 5% of the buffer, each between these bounds (a multiple of 8
 * bytes); buffers up to HCOMP_ANALYZE_MAX_SAMPLE bytes are looked at whole. */
#define HCOMP_ANALYZE_SLICE_MIN 4096
#define HCOMP_ANALYZE_SLICE_MAX (HCOMP_ANALYZE_MAX_SAMPLE / 3)
/* At most this many values are decoded for the distribution class. */
#define HCOMP_ANALYZE_MAX_VALUES 256
/* Type inference votes on the first this many bytes of each slice. */
#define HCOMP_ANALYZE_INFER_BYTES 2048

/* Distribution class of n values (NaN and inf must already be removed): moments from
 * GSL (skewness, excess kurtosis) plus the distance of the minimum from the mean.
 * Fewer than 8 values, or constant values: HCOMP_DIST_UNIFORM. The rules are in
 * analyzer.c and docs/SEED.md. */
int hcomp_classify_values(const double *v, size_t n);

/* The element type that buf[0..n) most plausibly holds, judged on the same sample
 * hcomp_analyze takes (the heuristic in analyzer.c). */
int hcomp_infer_dtype(const unsigned char *s, size_t n);

/* The features of buf byte-shuffled by element size k (4 or 8), as hcomp_analyze would
 * find them on the shuffled buffer, computed from the sampled bytes alone (no shuffled
 * copy); dtype and distribution class are plain's (shuffled bytes are not values). */
int hcomp_analyze_shuffled(const void *buf, size_t len, unsigned k, const hcomp_features *plain,
                           hcomp_features *out);

/* The features of buf as codecs that bit-shuffle elements of k bytes (4 or 8) inside see
 * it: shuffled's (the byte-shuffled form's), the probe ratio replaced by blosc-lz4's at
 * level HCOMP_BITSHUFFLE_PROBE_LEVEL with bitshuffle on the same sampled slices. */
#define HCOMP_BITSHUFFLE_PROBE_LEVEL 1
int hcomp_analyze_bitshuffled(const void *buf, size_t len, unsigned k,
                              const hcomp_features *shuffled, hcomp_features *out);
/* The same for c-blosc2's shuffle + bytedelta (filters 5 and 6): the probe is blosc2-lz4's
 * at HCOMP_BITSHUFFLE_PROBE_LEVEL with bytedelta on the same sampled slices. */
int hcomp_analyze_bytedelta(const void *buf, size_t len, unsigned k,
                            const hcomp_features *shuffled, hcomp_features *out);

/* Order-0 entropy of n bytes, bits per byte. */
double hcomp_byte_entropy(const unsigned char *s, size_t n);
/* The same from the bytes' counts (count[256], summing to n). */
double hcomp_entropy_of_counts(const uint32_t *count, size_t n);

#endif
