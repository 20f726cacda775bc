/* A sorted array: appends (the common case) are O(1); an overwrite in the middle
 * moves the tail once; a batch of overwrites is resolved among itself by a sweep and
 * merged with the array in one pass. */
#include "extent_map.h"

#include <stdint.h>
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

/* ---- batches ------------------------------------------------------------------------- */

typedef struct sweep_event {
    uint64_t x;
    uint32_t idx;        /* the batch extent that starts or ends at x */
    uint32_t starts;
} sweep_event;

static int by_x(const void *a, const void *b)
{
    const sweep_event *p = a, *q = b;
    return p->x < q->x ? -1 : p->x > q->x;
}

/* Sort the events by x: a few with qsort, more least significant byte first, each pass a
 * stable counting sort, skipping the bytes all keys share (offsets of one file share the
 * high ones). A batch of a replay has an event per write's start and end, a million for
 * a file of a million pieces; qsort took a third of such a replay's time. tmp: room for n. */
static void sort_events(sweep_event *ev, sweep_event *tmp, size_t n)
{
    if (n < 256) {
        qsort(ev, n, sizeof(*ev), by_x);
        return;
    }
    size_t count[8][256];
    memset(count, 0, sizeof(count));
    for (size_t i = 0; i < n; i++)
        for (int d = 0; d < 8; d++)
            count[d][(ev[i].x >> (8 * d)) & 0xff]++;
    sweep_event *from = ev, *to = tmp;
    for (int d = 0; d < 8; d++) {
        if (count[d][(ev[0].x >> (8 * d)) & 0xff] == n)
            continue;       /* every key has this byte: the order stays */
        size_t at = 0;
        for (int b = 0; b < 256; b++) {
            size_t c = count[d][b];
            count[d][b] = at;
            at += c;
        }
        for (size_t i = 0; i < n; i++)
            to[count[d][(from[i].x >> (8 * d)) & 0xff]++] = from[i];
        sweep_event *t = from;
        from = to;
        to = t;
    }
    if (from != ev)
        memcpy(ev, from, n * sizeof(*ev));
}

/* max-heap of batch indices: the newest extent covering the sweep position wins */
static void heap_push(uint32_t *h, size_t *n, uint32_t v)
{
    size_t i = (*n)++;
    while (i > 0 && h[(i - 1) / 2] < v) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = v;
}

static void heap_pop(uint32_t *h, size_t *n)
{
    uint32_t v = h[--(*n)];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && h[c + 1] > h[c])
            c++;
        if (h[c] <= v)
            break;
        h[i] = h[c];
        i = c;
    }
    if (*n > 0)
        h[i] = v;
}

static uint64_t end_of(const hcomp_extent *e)
{
    return e->off + e->len;
}

/* e's bytes from logical offset `from` on */
static hcomp_extent tail_of(const hcomp_extent *e, uint64_t from)
{
    hcomp_extent t = *e;
    t.piece_off = e->piece_off + (uint32_t) (from - e->off);
    t.len = end_of(e) - from;
    t.off = from;
    return t;
}

/* The batch as sorted, non-overlapping extents (the newest wins each byte) into out
 * (room for 2k - 1); returns how many. */
static size_t resolve_batch(const hcomp_extent *e, size_t k, sweep_event *ev, uint32_t *heap,
                            hcomp_extent *out)
{
    size_t nev = 0, nh = 0, nout = 0;
    /* the common case, writes in offset order that overlap none of the batch's own (a
     * sequential writer, its replay): the batch is resolved as it is (the sweep and its
     * sort were most of a replay's time); only neighbours of one piece join, as below */
    uint64_t at = 0;
    size_t q = 0;
    for (; q < k && (e[q].len == 0 || nout == 0 || e[q].off >= at); q++) {
        if (e[q].len == 0)
            continue;
        hcomp_extent *last = nout ? &out[nout - 1] : NULL;
        if (last && end_of(last) == e[q].off && last->piece == e[q].piece &&
            last->piece_off + last->len == e[q].piece_off)
            last->len += e[q].len;
        else
            out[nout++] = e[q];
        at = end_of(&e[q]);
    }
    if (q == k)
        return nout;
    nout = 0;
    for (size_t i = 0; i < k; i++) {
        if (e[i].len == 0)
            continue;
        ev[nev++] = (sweep_event) {e[i].off, (uint32_t) i, 1};
        ev[nev++] = (sweep_event) {end_of(&e[i]), (uint32_t) i, 0};
    }
    if (nev > 0)
        sort_events(ev, ev + nev, nev);
    for (size_t i = 0; i < nev;) {
        uint64_t x = ev[i].x;
        for (; i < nev && ev[i].x == x; i++)
            if (ev[i].starts)
                heap_push(heap, &nh, ev[i].idx);
        while (nh > 0 && end_of(&e[heap[0]]) <= x)     /* ended: dropped lazily */
            heap_pop(heap, &nh);
        if (nh == 0 || i == nev)
            continue;
        const hcomp_extent *w = &e[heap[0]];
        hcomp_extent part = tail_of(w, x);
        part.len = ev[i].x - x;
        hcomp_extent *last = nout ? &out[nout - 1] : NULL;
        if (last && end_of(last) == x && last->piece == part.piece &&
            last->piece_off + last->len == part.piece_off)
            last->len += part.len;      /* the same extent, cut by an older one's ends */
        else
            out[nout++] = part;
    }
    return nout;
}

int hcomp_extent_map_insert_batch(hcomp_extent_map *m, const hcomp_extent *e, size_t k)
{
    if (k <= 1)
        return k ? hcomp_extent_map_insert(m, e) : 0;
    if (k > UINT32_MAX || k > (SIZE_MAX / sizeof(hcomp_extent) - m->n - 1) / 4)
        return -1;
    sweep_event *ev = malloc(4 * k * sizeof(*ev));     /* the events, and room to sort them */
    uint32_t *heap = malloc(k * sizeof(*heap));
    hcomp_extent *b = malloc(2 * k * sizeof(*b));
    if (ev == NULL || heap == NULL || b == NULL) {
        free(ev);
        free(heap);
        free(b);
        return -1;
    }
    size_t nb = resolve_batch(e, k, ev, heap, b);
    free(ev);
    free(heap);
    if (nb == 0) {
        free(b);
        return 0;
    }
    /* the old extents before the batch's first byte stay where they are: only the tail
     * from there is merged (a batch of appends costs O(k log k), not O(n)) */
    size_t first = hcomp_extent_map_find(m, b[0].off), old = m->n - first;
    size_t room = old + 2 * nb + 1;     /* each batch extent cuts at most one old one */
    hcomp_extent *out = malloc(room * sizeof(*out));
    if (out == NULL || reserve(m, first + room > m->n ? first + room - m->n : 0) != 0) {
        free(out);
        free(b);
        return -1;
    }
    /* merge: the batch's extents over the old ones, which keep only what it leaves;
     * cur is what is left of old extent j */
    const hcomp_extent *v = m->v + first;
    size_t j = 0, n = 0;
    hcomp_extent cur = old > 0 ? v[0] : (hcomp_extent) {0, 0, 0, 0};
    for (size_t i = 0; i < nb; i++) {
        const hcomp_extent *p = &b[i];
        while (j < old && cur.off < p->off) {       /* old bytes before p */
            out[n] = cur;
            if (end_of(&cur) > p->off) {
                out[n++].len = p->off - cur.off;
                cur = tail_of(&cur, p->off);
                break;
            }
            n++;
            if (++j < old)
                cur = v[j];
        }
        out[n++] = *p;
        while (j < old && cur.off < end_of(p)) {    /* old bytes under p: dropped */
            if (end_of(&cur) > end_of(p)) {
                cur = tail_of(&cur, end_of(p));
                break;
            }
            if (++j < old)
                cur = v[j];
        }
    }
    for (; j < old; cur = ++j < old ? v[j] : cur)
        out[n++] = cur;
    memcpy(m->v + first, out, n * sizeof(*out));
    m->n = first + n;
    free(out);
    free(b);
    return 0;
}
