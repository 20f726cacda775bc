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
        if (*n > 0 && (*out)[*n - 1] == p)
            continue;
        if (hcomp_grow_array(out, &cap, *n + 1, sizeof(**out)) != 0)
            return -1;
        (*out)[(*n)++] = p;
    }
    return 0;
}

/* Punching needs no exclusive lock: the bytes punched belong to pieces the log already
 * says are overwritten, so no writer appends there, and a reader whose map is older
 * fails their checksum, replays the log and reads the new pieces instead. */
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

void hcomp_overwritten_punch(hcomp_file *f, const uint32_t *cand, size_t n)
{
    if (n == 0)
        return;
    double t0 = hcomp_now();
    hcomp_error e;
    hcomp_byte_range *r = NULL;
    uint32_t *seg = NULL;
    size_t nr = 0, cap = 0, cap2 = 0;
    if (hcomp_log_refresh(f, &e) == HCOMP_OK && !f->skipped && !f->lost_records) {
        for (size_t i = 0; i < n; i++) {
            const hcomp_piece *p = &f->pieces[cand[i]];
            if (!hcomp_segment_reachable(&f->segs[p->seg]) || !tier_limited(f, p->seg) ||
                hcomp_piece_live(f, cand[i]))
                continue;
            if (hcomp_grow_array(&r, &cap, nr + 1, sizeof(*r)) != 0 ||
                hcomp_grow_array(&seg, &cap2, nr + 1, sizeof(*seg)) != 0)
                break;      /* out of memory: the rest waits for the close */
            seg[nr] = p->seg;
            r[nr++] = (hcomp_byte_range) {p->seg_off, hcomp_piece_bytes_on_disk(p)};
        }
    }
    /* one open and as few punches as the runs of dead pieces per segment */
    uint64_t freed = 0;
    for (size_t i = 0; i < nr;) {
        size_t k = i;
        for (size_t j = i; j < nr; j++)     /* gather segment seg[i]'s ranges at i.. */
            if (seg[j] == seg[i]) {
                hcomp_byte_range tr = r[k];
                uint32_t ts = seg[k];
                r[k] = r[j];
                seg[k] = seg[j];
                r[j] = tr;
                seg[j] = ts;
                k++;
            }
        uint64_t before = freed;
        hcomp_punch_ranges(f, seg[i], r + i, k - i, &freed);
        if (freed > before)     /* the room shows in the tier's usage: look again at once */
            for (int t = 0; t < f->cfg.ntiers; t++)
                if (strcmp(f->cfg.tier[t].name, f->segs[seg[i]].tier) == 0) {
                    f->tw[t].exhausted_at = 0;
                    f->tw[t].avail_time = 0;
                }
        i = k;
    }
    free(r);
    free(seg);
    f->stats.overwritten_freed += freed;
    f->stats.t_punch += hcomp_now() - t0;
}

