/* In-memory map from logical byte ranges to pieces: sorted, non-overlapping
 * extents. Inserting a range replaces whatever it overlaps (newest write wins). */
#ifndef HCOMP_EXTENT_MAP_H
#define HCOMP_EXTENT_MAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct hcomp_extent {
    uint64_t off;        /* logical offset */
    uint64_t len;
    uint32_t piece;      /* index into the file's piece table */
    uint32_t piece_off;  /* offset of off inside the piece's logical bytes */
} hcomp_extent;

typedef struct hcomp_extent_map {
    hcomp_extent *v;
    size_t n, cap;
} hcomp_extent_map;

void hcomp_extent_map_init(hcomp_extent_map *m);
void hcomp_extent_map_free(hcomp_extent_map *m);
/* Map [e->off, e->off + e->len) to e's piece; returns 0 or -1 (out of memory). */
int hcomp_extent_map_insert(hcomp_extent_map *m, const hcomp_extent *e);
/* Drop everything at or beyond size (cutting the extent that straddles it). */
void hcomp_extent_map_truncate(hcomp_extent_map *m, uint64_t size);
/* Index of the first extent that ends after off (n if none). */
size_t hcomp_extent_map_find(const hcomp_extent_map *m, uint64_t off);

#endif
