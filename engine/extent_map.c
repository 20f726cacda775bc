/* A sorted array: appends (the common case) are O(1); an overwrite in the middle
 * moves the tail once. */
#include "extent_map.h"

#include <stdlib.h>
#include <string.h>

void hcomp_extent_map_init(hcomp_extent_map *m)
{
    m->v = NULL;
    m->n = m->cap = 0;
}

void hcomp_extent_map_free(hcomp_extent_map *m)
{
    free(m->v);
    hcomp_extent_map_init(m);
}

size_t hcomp_extent_map_find(const hcomp_extent_map *m, uint64_t off)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->v[mid].off + m->v[mid].len <= off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int reserve(hcomp_extent_map *m, size_t extra)
{
    if (m->n + extra <= m->cap)
        return 0;
    size_t cap = m->cap ? m->cap * 2 : 64;
    while (cap < m->n + extra)
        cap *= 2;
    hcomp_extent *v = realloc(m->v, cap * sizeof(*v));
    if (v == NULL)
        return -1;
    m->v = v;
    m->cap = cap;
    return 0;
}

int hcomp_extent_map_insert(hcomp_extent_map *m, const hcomp_extent *e)
{
    if (e->len == 0)
        return 0;
    if (reserve(m, 2) != 0)
        return -1;
    uint64_t end = e->off + e->len;
    size_t first = hcomp_extent_map_find(m, e->off);
    /* extents [first, last) overlap the new one */
    size_t last = first;
    while (last < m->n && m->v[last].off < end)
        last++;
    hcomp_extent left, right;
    int has_left = 0, has_right = 0;
    if (first < last && m->v[first].off < e->off) {
        left = m->v[first];
        left.len = e->off - left.off;
        has_left = 1;
    }
    if (first < last) {
        const hcomp_extent *l = &m->v[last - 1];
        uint64_t lend = l->off + l->len;
        if (lend > end) {
            right = *l;
            right.off = end;
            right.len = lend - end;
            right.piece_off = l->piece_off + (uint32_t) (end - l->off);
            has_right = 1;
        }
    }
    size_t repl = (size_t) has_left + 1 + (size_t) has_right;
    size_t removed = last - first;
    if (repl != removed)
        memmove(&m->v[first + repl], &m->v[last], (m->n - last) * sizeof(*m->v));
    m->n = m->n - removed + repl;
    size_t i = first;
    if (has_left)
        m->v[i++] = left;
    m->v[i++] = *e;
    if (has_right)
        m->v[i] = right;
    return 0;
}

void hcomp_extent_map_truncate(hcomp_extent_map *m, uint64_t size)
{
    size_t i = hcomp_extent_map_find(m, size);
    if (i < m->n && m->v[i].off < size) {
        m->v[i].len = size - m->v[i].off;
        i++;
    }
    m->n = i;
}
