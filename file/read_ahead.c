/* Read-ahead for sequential readers (hint hcomp_read_ahead; docs/ENGINE.md, "Read-ahead").
 *
 * A read that starts where the handle's previous read ended continues a sequential run;
 * after it, the stored bytes of the pieces that hold the next logical bytes are handed to
 * the kernel with posix_fadvise(POSIX_FADV_WILLNEED), so that their I/O runs while the
 * caller works (or exchanges data, in a two-phase collective read) and the next read finds
 * them in the page cache. The kernel's own read-ahead follows each segment file in its own
 * order, which is the order the pieces were written, not the order they are read: two
 * writers' segments alternate, a drain or a compaction moved pieces into another segment.
 * This follows the logical order, piece by piece.
 *
 * The window grows like the kernel's: twice the run's reads each time (at least 256 KiB),
 * up to the hint's bytes, and is advised again when the reader is half-way through what was
 * advised. Memory: the window's stored bytes, in the page cache (the kernel may drop them);
 * the handle itself holds a list of ranges only while it advises. Emulated tiers are left
 * alone (their reads are slowed to their speed where they happen).
 *
 * Strided readers too, which the kernel's read-ahead does not follow (Lustre's stride
 * read-ahead is the precedent): each rank of an analysis reading its slab of array after
 * array, IOR's segments read a transfer at a time, a two-phase collective read's
 * aggregator going through its file domain call after call. A run is a read and the
 * sequential reads after it; a run that starts as far after the start of the run before
 * as that one started after its own predecessor, both of those runs of one length with a
 * gap after each, makes a pattern; then the rest of the current run and the next runs of
 * the pattern are advised, as many as fit in the hint's bytes (at most RA_STRIDE_DEPTH),
 * each once (the first hint's bytes of each), and within a run a window of the hint's bytes
 * ahead, as a sequential reader's, that stops at the run's end (what lies between the runs
 * is not its to read): so at most twice the hint's bytes ahead. Of a piece that a run
 * ahead wants less than half of, only its header and table and the blocks that hold what is
 * wanted are advised (small strided reads, as a random subset's 4 KiB of each array: the
 * whole piece would cost more I/O than they do). A run longer than the pattern's, or
 * another stride or length, ends the pattern. */
#include "file_internal.h"
#include "common/util.h"

#include <fcntl.h>
#include <stdlib.h>

#define RA_MIN_WINDOW (256u << 10)
#define RA_MAX_RUN 16          /* the window stops doubling here (2^16 x the read) */
#define RA_MAX_RANGES 8192u    /* pieces looked at per advice, at most */
#define RA_GAP (64u << 10)     /* neighbours closer than this in a segment: one advice */
#define RA_STRIDE_DEPTH 8u     /* reads of a strided pattern advised ahead, at most */

typedef struct ra_range {
    int fd;
    uint64_t lo, hi;
} ra_range;

static int by_fd_then_offset(const void *a, const void *b)
{
    const ra_range *x = a, *y = b;
    if (x->fd != y->fd)
        return x->fd < y->fd ? -1 : 1;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Add [lo, hi) of descriptor fd to the n ranges of *r; -1: out of memory. */
static int push(ra_range **r, size_t *n, size_t *cap, int fd, uint64_t lo, uint64_t hi)
{
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 64;
        ra_range *g = realloc(*r, c * sizeof(**r));
        if (g == NULL)
            return -1;
        *r = g;
        *cap = c;
    }
    (*r)[(*n)++] = (ra_range) {fd, lo, hi};
    return 0;
}

/* Advise the stored bytes of the pieces behind logical bytes [from, to); with most_only, of
 * a framed piece that [from, to) wants less than half of only its header and table and the
 * blocks that hold what is wanted (their place known or guessed: hcomp_piece_blocks_place),
 * since a read of them fetches no more (a small strided read, as a random subset's across
 * arrays: the whole piece ahead would cost more I/O than the reads). */
static void advise(hcomp_file *f, uint64_t from, uint64_t to, int most_only)
{
    ra_range *r = NULL;
    size_t n = 0, cap = 0;
    int64_t last = -1;
    for (size_t i = hcomp_extent_map_find(&f->map, from);
         i < f->map.n && f->map.v[i].off < to && n < RA_MAX_RANGES; i++) {
        const hcomp_extent *e = &f->map.v[i];
        if ((int64_t) e->piece == last)
            continue;
        last = e->piece;
        const hcomp_piece *p = &f->pieces[e->piece];
        hcomp_segment *s = &f->segs[p->seg];
        hcomp_error ignored;
        if (hcomp_segment_emulated(f, s) || hcomp_segment_fd(f, s, e->off, 0, &ignored) != HCOMP_OK)
            continue;   /* the read that wants it reports why, if it fails */
        uint64_t a = from > p->start ? from : p->start;
        uint64_t b = to < p->start + p->raw_len ? to : p->start + p->raw_len;
        uint64_t pa, pb, blocks;
        int rc;
        if (most_only && 2 * (b - a) < p->raw_len &&
            hcomp_piece_blocks_place(p, (uint32_t) (a - p->start), (uint32_t) (b - p->start),
                                     &pa, &pb, &blocks) == 0)
            rc = push(&r, &n, &cap, s->fd, p->seg_off, blocks) ||     /* header and table */
                 push(&r, &n, &cap, s->fd, pa, pb);
        else
            rc = push(&r, &n, &cap, s->fd, p->seg_off,
                      p->seg_off + HCOMP_PIECE_HEADER_SIZE + p->stored_len);
        if (rc != 0)
            break;      /* advice only: what was gathered is still worth giving */
    }
    if (n > 1)
        qsort(r, n, sizeof(*r), by_fd_then_offset);
    for (size_t i = 0; i < n;) {
        ra_range m = r[i++];
        while (i < n && r[i].fd == m.fd && r[i].lo <= m.hi + RA_GAP) {
            if (r[i].hi > m.hi)
                m.hi = r[i].hi;
            i++;
        }
        int rc = hcomp_advise_willneed(m.fd, m.lo, m.hi - m.lo);
        if (rc >= 0)
            f->stats.readahead_bytes += m.hi - m.lo;
        if (rc == 0)
            f->stats.advice_cached_bytes += m.hi - m.lo;
    }
    free(r);
}

/* A reader inside a run of a strided pattern has read up to end: advise the rest of its run
 * (a window of the hint's bytes at most, advised again half-way through, as a sequential
 * reader's) and the next runs not yet advised (the first hint's bytes of each). */
static void stride_ahead(hcomp_file *f, uint64_t end)
{
    uint64_t max = f->opts.read_ahead, run = f->ra_run_start, len = f->ra_prev_len;
    uint64_t stride = f->ra_stride;
    if (max == 0)
        return;
    uint64_t run_end = f->size - run < len ? f->size : run + len;
    if (f->ra_to < run_end && f->ra_to < end + max / 2) {
        uint64_t from = f->ra_to > end ? f->ra_to : end;
        uint64_t to = run_end - end < max ? run_end : end + max;
        f->ra_to = to;
        if (from < to)
            advise(f, from, to, 1);
    }
    uint64_t depth = max / len, each = len < max ? len : max;
    depth = depth < 1 ? 1 : depth > RA_STRIDE_DEPTH ? RA_STRIDE_DEPTH : depth;
    uint64_t next = run + stride, last = run + depth * stride;
    if (next < run || next >= f->size)
        return;
    if (last < run || last >= f->size)      /* past the end (or wrapping): up to it */
        last = run + (f->size - run - 1) / stride * stride;
    for (uint64_t at = next > f->ra_stride_to ? next : f->ra_stride_to; at <= last && at >= next;
         at += stride) {
        advise(f, at, f->size - at < each ? f->size : at + each, 1);
        f->ra_stride_to = at + stride;
    }
}

/* A read at off starts a new run: the run that ended at f->ra_next makes a strided pattern
 * with the one before (see the top), or ends one. */
static void new_run(hcomp_file *f, uint64_t off)
{
    uint64_t start = f->ra_run_start, len = f->ra_next - start;
    uint64_t stride = off > start ? off - start : 0;
    int pattern = len > 0 && len == f->ra_prev_len && stride > len &&
                  start > f->ra_prev_start && start - f->ra_prev_start == stride;
    if (!pattern || stride != f->ra_stride)
        f->ra_stride_to = 0;
    f->ra_stride = pattern ? stride : 0;
    f->ra_prev_start = start;
    f->ra_prev_len = len;
    f->ra_run_start = off;
}

void hcomp_read_ahead(hcomp_file *f, uint64_t off, uint64_t end)
{
    uint64_t max = f->opts.read_ahead;
    if (end <= off)
        return;
    int fresh = off != f->ra_next;
    if (fresh) {
        new_run(f, off);
        f->ra_run = 0;
        /* a run of the pattern advised as one ahead: its first hint's bytes are */
        f->ra_to = f->ra_stride && f->ra_stride_to > off ? off + (f->ra_prev_len < max ?
                                                                  f->ra_prev_len : max) : end;
    }
    f->ra_next = end;
    if (f->ra_stride && end - f->ra_run_start > f->ra_prev_len) {
        f->ra_stride = 0;       /* a run longer than the pattern's: no pattern */
        f->ra_stride_to = 0;
    }
    if (f->ra_stride) {
        stride_ahead(f, end);
        return;
    }
    if (fresh || max == 0 || end >= f->size)
        return;                 /* not sequential: nothing ahead yet */
    uint64_t len = end - off < RA_MIN_WINDOW ? RA_MIN_WINDOW : end - off;
    unsigned run = f->ra_run < RA_MAX_RUN ? f->ra_run : RA_MAX_RUN;
    uint64_t window = len > max >> run ? max : len << run;
    if (f->ra_run < RA_MAX_RUN)
        f->ra_run++;
    if (f->ra_to >= end + window / 2)
        return;                 /* still well ahead of the reader */
    uint64_t from = f->ra_to > end ? f->ra_to : end, to = end + window;
    if (to > f->size)
        to = f->size;
    f->ra_to = end + window;
    if (from < to)
        advise(f, from, to, 0);
}
