/* Filters applied before a codec (docs/FORMAT.md, "filter"): byte shuffle groups
 * the k-th byte of every element together, which often doubles the ratio of
 * floating-point and integer arrays. */
#ifndef HCOMP_FILTER_H
#define HCOMP_FILTER_H

#include <stddef.h>
#include <stdint.h>

enum hcomp_filter {
    HCOMP_FILTER_NONE = 0,
    HCOMP_FILTER_SHUFFLE4 = 1,  /* byte shuffle of 4-byte elements */
    HCOMP_FILTER_SHUFFLE8 = 2,  /* byte shuffle of 8-byte elements */
    HCOMP_FILTER_COUNT
};

/* Element size of a filter (0 for none). */
unsigned hcomp_filter_typesize(int filter);
/* dst and src are len bytes and do not overlap; a tail shorter than one element is
 * copied as is. */
void hcomp_filter_apply(int filter, const unsigned char *src, unsigned char *dst, size_t len);
void hcomp_filter_undo(int filter, const unsigned char *src, unsigned char *dst, size_t len);

#endif
