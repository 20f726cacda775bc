/* Filters: how a piece's elements are transformed before its codec (docs/FORMAT.md,
 * "filter"). Byte shuffle groups the k-th byte of every element together, which often
 * doubles the ratio of floating-point and integer arrays; hcomp applies it around any
 * codec. Bitshuffle groups the k-th bit of every element together (the sign and exponent
 * planes apart from the noisy low mantissa bits); only codecs that transform elements
 * inside their own blocks (c-blosc chunks, hcomp_codec.compress_typed) carry it, and they
 * also carry byte shuffle themselves. Bytedelta and delta are c-blosc2's filters: only
 * the c-blosc2 codecs carry them. */
#ifndef HCOMP_FILTER_H
#define HCOMP_FILTER_H

#include <stddef.h>
#include <stdint.h>
#include "hcomp_codec.h"

enum hcomp_filter {
    HCOMP_FILTER_NONE = 0,
    HCOMP_FILTER_SHUFFLE4 = 1,     /* byte shuffle of 4-byte elements */
    HCOMP_FILTER_SHUFFLE8 = 2,     /* byte shuffle of 8-byte elements */
    HCOMP_FILTER_BITSHUFFLE4 = 3,  /* bitshuffle of 4-byte elements (typed codecs only) */
    HCOMP_FILTER_BITSHUFFLE8 = 4,  /* bitshuffle of 8-byte elements (typed codecs only) */
    HCOMP_FILTER_BYTEDELTA4 = 5,   /* shuffle + bytedelta of 4-byte elements (c-blosc2 only) */
    HCOMP_FILTER_BYTEDELTA8 = 6,   /* shuffle + bytedelta of 8-byte elements (c-blosc2 only) */
    HCOMP_FILTER_DELTA4 = 7,       /* delta + shuffle of 4-byte elements (c-blosc2 only) */
    HCOMP_FILTER_DELTA8 = 8,       /* delta + shuffle of 8-byte elements (c-blosc2 only) */
    HCOMP_FILTER_COUNT
};

/* Element size of a filter (0 for none). */
unsigned hcomp_filter_typesize(int filter);
/* Whether a filter is a bitshuffle (applied inside a typed codec's own blocks). */
int hcomp_filter_is_bitshuffle(int filter);
/* The element transform of a filter (enum hcomp_shuffle). */
int hcomp_filter_shuffle(int filter);
/* The filter of this kind (enum hcomp_shuffle) for elements of k bytes (4 or 8), else none. */
int hcomp_filter_for(int shuffle, unsigned k);
/* The same for elements of an enum hcomp_dtype (none for bytes). */
int hcomp_filter_for_dtype(int shuffle, int dtype);
/* Whether pieces of codec c can be stored with filter (a known filter the codec can
 * undo). */
int hcomp_filter_fits(int filter, const hcomp_codec *c);
/* Byte shuffle by hcomp itself (filters 1 and 2; others copy): dst and src are len bytes
 * and do not overlap; a tail shorter than one element is copied as is. */
void hcomp_filter_apply(int filter, const unsigned char *src, unsigned char *dst, size_t len);
void hcomp_filter_undo(int filter, const unsigned char *src, unsigned char *dst, size_t len);

/* Filter and codec together: encode len bytes of src into dst (dst_cap >= c->bound(len)),
 * the filter applied by the codec when it takes it inside, else by hcomp into *tmp (grown
 * as needed). Returns the codec's result. */
int hcomp_filter_encode(const hcomp_codec *c, int level, int filter, const void *src,
                        size_t len, unsigned char **tmp, size_t *tmp_cap, void *dst,
                        size_t dst_cap, size_t *dst_len);
/* The inverse: decode exactly dst_len bytes into dst (through *tmp when hcomp undoes
 * the filter). HCOMP_E_CORRUPT when the stream is not one this codec and filter made. */
int hcomp_filter_decode(const hcomp_codec *c, int filter, const void *src, size_t src_len,
                        void *dst, size_t dst_len, unsigned char **tmp, size_t *tmp_cap);

#endif
