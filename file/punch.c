/* Punching out dead pieces (docs/FORMAT.md, "Openers and reclaiming space"): the byte
 * ranges of pieces no logical byte uses are given back to the file system with
 * fallocate(FALLOC_FL_PUNCH_HOLE), by the write that overwrote them (no exclusive lock
 * needed) and by the reclaim at the last close. */
#include "file_internal.h"
#include "common/util.h"
#include "common/clock.h"

#include <fcntl.h>
#include <linux/falloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int by_offset(const void *a, const void *b)
{
    const hcomp_byte_range *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* Punch out the byte ranges r[0..n) of segment s (sorted here; neighbours merged into one
 * range: a range frees only the blocks it covers whole); the blocks freed go to *freed. */
void hcomp_punch_ranges(const hcomp_file *f, size_t s, hcomp_byte_range *r, size_t n,
                        uint64_t *freed)
{
    if (n == 0)
        return;
    qsort(r, n, sizeof(*r), by_offset);
    int fd = open(f->segs[s].path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    struct stat before, after;
    if (fd >= 0 && fstat(fd, &before) == 0) {
        for (size_t i = 0; i < n;) {
            uint64_t off = r[i].off, end = r[i].off + r[i].len;
            for (i++; i < n && r[i].off <= end; i++)
                end = r[i].off + r[i].len > end ? r[i].off + r[i].len : end;
            if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t) off,
                          (off_t) (end - off)) != 0)
                break;      /* not supported here: the space stays until the segment dies */
        }
        if (fstat(fd, &after) == 0 && after.st_blocks < before.st_blocks)
            *freed += (uint64_t) (before.st_blocks - after.st_blocks) * 512u;
    }
    if (fd >= 0)
        close(fd);
}

int hcomp_piece_live(const hcomp_file *f, uint32_t idx)
{
    const hcomp_piece *p = &f->pieces[idx];
    for (size_t i = hcomp_extent_map_find(&f->map, p->start);
         i < f->map.n && f->map.v[i].off < p->start + p->raw_len; i++)
        if (f->map.v[i].piece == idx)
            return 1;
    return 0;
}

/* The segment is on a tier of this configuration with a capacity: only there does the
 * room serve the rest of the checkpoint (elsewhere the last close frees it, cheaper, by
 * removing whole segments). */
static int tier_limited(const hcomp_file *f, uint32_t seg)
{
    for (int t = 0; t < f->cfg.ntiers; t++)
        if (strcmp(f->cfg.tier[t].name, f->segs[seg].tier) == 0)
            return f->cfg.tier[t].capacity != UINT64_MAX;
    return 0;
}

/* A piece worth punching out once dead: its room serves this process's later writes. */
static int punchable(const hcomp_file *f, uint32_t idx)
{
    uint32_t seg = f->pieces[idx].seg;
    return hcomp_segment_reachable(f, &f->segs[seg]) && tier_limited(f, seg);
}

int hcomp_overwritten_collect(const hcomp_file *f, uint64_t off, uint64_t len, uint32_t **out,
                              size_t *n)
{
    *out = NULL;
    *n = 0;
    if (f->opts.reclaim == HCOMP_RECLAIM_NEVER)
        return 0;
    size_t cap = 0;
    for (size_t i = hcomp_extent_map_find(&f->map, off);
         i < f->map.n && f->map.v[i].off < off + len; i++) {
        uint32_t p = f->map.v[i].piece;
        if ((*n > 0 && (*out)[*n - 1] == p) || !punchable(f, p))
            continue;
        if (hcomp_grow_array(out, &cap, *n + 1, sizeof(**out)) != 0)
            return -1;
        (*out)[(*n)++] = p;
    }
    return 0;
}

typedef struct seg_range {
    uint32_t seg;
    hcomp_byte_range r;
} seg_range;

static int by_segment(const void *a, const void *b)
{
    const seg_range *x = a, *y = b;
    return x->seg < y->seg ? -1 : x->seg > y->seg;
}

/* Punching needs no exclusive lock: the bytes punched belong to pieces the log already
 * says are overwritten, so no writer appends there, and a reader whose map is older
 * fails their checksum, replays the log and reads the new pieces instead. */
void hcomp_overwritten_punch(hcomp_file *f, const uint32_t *cand, size_t n)
{
    if (n == 0)
        return;
    double t0 = hcomp_now();
    hcomp_error e;
    seg_range *d = NULL;
    hcomp_byte_range *r = NULL;
    size_t nd = 0;
    if (hcomp_log_refresh(f, &e) == HCOMP_OK && !f->skipped && !f->lost_records &&
        (d = malloc(n * sizeof(*d))) != NULL && (r = malloc(n * sizeof(*r))) != NULL) {
        for (size_t i = 0; i < n; i++)      /* the replay may have moved it, or kept it */
            if (punchable(f, cand[i]) && !hcomp_piece_live(f, cand[i])) {
                const hcomp_piece *p = &f->pieces[cand[i]];
                d[nd++] = (seg_range) {p->seg, {p->seg_off, hcomp_piece_bytes_on_disk(p)}};
            }
    }
    if (nd > 1)
        qsort(d, nd, sizeof(*d), by_segment);
    /* one open and as few punches as the runs of dead pieces per segment */
    uint64_t freed = 0;
    for (size_t i = 0, k; i < nd; i = k) {
        for (k = i; k < nd && d[k].seg == d[i].seg; k++)
            r[k - i] = d[k].r;
        uint64_t before = freed;
        hcomp_punch_ranges(f, d[i].seg, r, k - i, &freed);
        if (freed > before)     /* the room shows in the tier's usage: look again at once */
            for (int t = 0; t < f->cfg.ntiers; t++)
                if (strcmp(f->cfg.tier[t].name, f->segs[d[i].seg].tier) == 0) {
                    f->tw[t].exhausted_at = 0;
                    f->tw[t].avail_time = 0;
                }
    }
    free(d);
    free(r);
    f->stats.overwritten_freed += freed;
    f->stats.t_punch += hcomp_now() - t0;
}

