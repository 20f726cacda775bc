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
/* Map the k extents e[0..k), later ones winning over earlier ones where they overlap, as k
 * calls of hcomp_extent_map_insert would, in O(n + k log k) instead of O(n k): for the
 * replay of a mapping file whose pieces were not written in order (several writers, a
 * collective write's aggregators). Returns 0 or -1 (out of memory: the map is unchanged). */
int hcomp_extent_map_insert_batch(hcomp_extent_map *m, const hcomp_extent *e, size_t k);
/* Drop everything at or beyond size (cutting the extent that straddles it). */
void hcomp_extent_map_truncate(hcomp_extent_map *m, uint64_t size);
/* Index of the first extent that ends after off (n if none). */
size_t hcomp_extent_map_find(const hcomp_extent_map *m, uint64_t off);

#endif
