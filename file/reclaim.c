/* Reclaiming space (docs/FORMAT.md, "Reclaiming space"): pieces that no logical byte
 * uses any more (overwritten, truncated away) are dead; their bytes come back.
 *
 * It runs only under the openers' lock held exclusively (file/open_lock.c): no other
 * process has the file open, so no writer appends to a segment it removes and no reader
 * holds a map it changes. In order, each step leaving a file that reads right if the
 * process dies after it:
 *   1. segments mostly dead are compacted: their live pieces copied as stored (checked,
 *      not decoded) to this opener's segment on the same tier, RELOCATE records appended
 *      and synced with the new bytes;
 *   2. segments without a live piece are removed;
 *   3. the dead pieces of the other segments are punched out (their blocks freed);
 *   4. the mapping log is rewritten as a snapshot of the live state (a temporary file,
 *      synced, renamed over it), so it stays as large as the live pieces need. */
#include "file_internal.h"
#include "tools.h"
#include "common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <linux/falloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

/* auto: reclaim when dead pieces hold a fifth of the recorded bytes... */
#define RECLAIM_DEAD_PARTS 5
/* ...or the log is this many times what a snapshot of the live state needs (and this large) */
#define RECLAIM_LOG_FACTOR 2
#define RECLAIM_LOG_MIN (64u << 10)
/* a segment less than half live is compacted; otherwise its dead pieces are punched out
 * (a hole costs less than a copy of the live data around it) */

static uint64_t piece_bytes_on_disk(const hcomp_piece *p)
{
    return HCOMP_PIECE_HEADER_SIZE + (uint64_t) p->stored_len;
}

/* The segment this process may change: its path is known, and it is not on another
 * node's node-local tier. */
static int reachable(const hcomp_segment *s)
{
    return s->path != NULL && (!s->node_local || strcmp(s->node, hcomp_node_name()) == 0);
}

int hcomp_reclaim_survey(const hcomp_file *f, hcomp_seg_use **use_out, unsigned char **live_out,
                         hcomp_error *err)
{
    *use_out = NULL;
    *live_out = NULL;
    hcomp_seg_use *use = calloc(f->nsegs ? f->nsegs : 1, sizeof(*use));
    unsigned char *live = calloc(f->npieces ? f->npieces : 1, 1);
    if (use == NULL || live == NULL) {
        free(use);
        free(live);
        return hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory", f->path);
    }
    for (size_t i = 0; i < f->map.n; i++)
        live[f->map.v[i].piece] = 1;
    for (size_t i = 0; i < f->npieces; i++) {
        const hcomp_piece *p = &f->pieces[i];
        hcomp_seg_use *u = &use[p->seg];
        u->pieces++;
        u->recorded += piece_bytes_on_disk(p);
        if (live[i]) {
            u->live_pieces++;
            u->live += piece_bytes_on_disk(p);
        }
    }
    for (size_t s = 0; s < f->nsegs; s++)
        use[s].reachable = reachable(&f->segs[s]);
    *use_out = use;
    *live_out = live;
    return HCOMP_OK;
}

/* ---- the snapshot of the live state ------------------------------------------------- */

static void split_path(const char *path, char *dir, size_t dn, const char **file)
{
    snprintf(dir, dn, "%s", path);
    char *slash = strrchr(dir, '/');
    *file = path + (slash ? (size_t) (slash - dir) + 1 : 0);
    if (slash)
        *slash = '\0';
}

/* The STATS records at the end of the log (the engine statistics its last writers left
 * at close), copied whole: the snapshot keeps them, not those of earlier writes. */
static int trailing_stats(hcomp_file *f, hcomp_bytes *out, hcomp_error *err)
{
    uint64_t len = f->consumed - HCOMP_MAP_HEADER_SIZE;
    if (hcomp_grow(&f->logbuf, &f->logbuf_cap, len ? len : 1) != 0)
        return hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory", f->path);
    long long got = hcomp_pread_full(f->map_fd, f->logbuf, len, HCOMP_MAP_HEADER_SIZE);
    if (got != (long long) len)
        return hcomp_fail_errno(err, got < 0 ? errno : EIO, "%s: reading the mapping file",
                                f->path);
    size_t pos = 0, first = 0, end = 0;
    uint64_t skipped = 0;
    for (;;) {
        hcomp_map_record rec;
        size_t at = pos;
        int r = hcomp_map_next(f->logbuf, (size_t) len, &pos, &rec, &skipped);
        if (r != HCOMP_MAP_RECORD)
            break;
        if (rec.type != HCOMP_REC_STATS)
            first = end = pos;
        else {
            if (end != at)
                first = at;
            end = pos;
        }
    }
    if (end > first) {
        if (hcomp_bytes_reserve(out, end - first) != 0)
            return hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory", f->path);
        memcpy(out->p + out->len, f->logbuf + first, end - first);
        out->len += end - first;
    }
    return HCOMP_OK;
}

/* Records that give the replayed state: a SEGMENT record for each segment holding a live
 * piece, a PIECE record for each live piece with its live extents, the size. */
static int snapshot_records(hcomp_file *f, const hcomp_seg_use *use, const unsigned char *live,
                            hcomp_bytes *out, hcomp_error *err)
{
    for (size_t s = 0; s < f->nsegs; s++) {
        const hcomp_segment *sg = &f->segs[s];
        if (use[s].live_pieces == 0)
            continue;
        if (sg->path == NULL)       /* damage the snapshot could not keep: leave the log */
            return hcomp_fail(err, HCOMP_E_CORRUPT, "%s: segment %016llx holds live pieces but "
                              "has no SEGMENT record; run hcomp fsck", f->path,
                              (unsigned long long) sg->id);
        char dir[PATH_MAX];
        const char *file;
        split_path(sg->path, dir, sizeof(dir), &file);
        if (hcomp_map_encode_segment(out, sg->id, sg->tier, dir, file, sg->node,
                                     sg->node_local ? HCOMP_SEGMENT_NODE_LOCAL : 0) != 0)
            return hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory", f->path);
    }
    /* each live piece's extents, gathered in logical order */
    size_t *count = calloc(f->npieces ? f->npieces : 1, sizeof(*count));
    size_t *first = calloc(f->npieces ? f->npieces : 1, sizeof(*first));
    hcomp_map_extent *ext = malloc((f->map.n ? f->map.n : 1) * sizeof(*ext));
    int rc = HCOMP_OK;
    if (count == NULL || first == NULL || ext == NULL)
        rc = hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory", f->path);
    for (size_t i = 0; rc == HCOMP_OK && i < f->map.n; i++)
        count[f->map.v[i].piece]++;
    size_t at = 0;
    for (size_t p = 0; rc == HCOMP_OK && p < f->npieces; p++) {
        first[p] = at;
        at += count[p];
        count[p] = 0;
    }
    for (size_t i = 0; rc == HCOMP_OK && i < f->map.n; i++) {
        const hcomp_extent *e = &f->map.v[i];
        ext[first[e->piece] + count[e->piece]++] =
            (hcomp_map_extent) {e->off, (uint32_t) e->len, e->piece_off};
    }
    for (size_t i = 0; rc == HCOMP_OK && i < f->npieces; i++) {
        if (!live[i])
            continue;
        const hcomp_piece *p = &f->pieces[i];
        if (hcomp_map_encode_piece(out, f->segs[p->seg].id, p->seg_off, p->stored_len,
                                   p->raw_len, p->crc, p->codec, p->filter, p->level,
                                   ext + first[i], (uint32_t) count[i]) != 0)
            rc = hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory", f->path);
    }
    free(count);
    free(first);
    free(ext);
    if (rc == HCOMP_OK && hcomp_map_encode_size(out, f->size, HCOMP_SIZE_SET) != 0)
        rc = hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory", f->path);
    return rc;
}

/* Bytes a snapshot of the live state takes, without building it. */
static uint64_t snapshot_estimate(const hcomp_file *f, const hcomp_seg_use *use)
{
    uint64_t bytes = HCOMP_MAP_HEADER_SIZE + HCOMP_MAP_FRAME_SIZE + 16;
    for (size_t s = 0; s < f->nsegs; s++)
        if (use[s].live_pieces)
            bytes += HCOMP_MAP_FRAME_SIZE + HCOMP_MAP_SEGMENT_FIXED + 64 +
                     (f->segs[s].path ? strlen(f->segs[s].path) : 0);
    for (size_t s = 0; s < f->nsegs; s++)
        bytes += use[s].live_pieces * (HCOMP_MAP_FRAME_SIZE + HCOMP_MAP_PIECE_FIXED);
    return bytes + (uint64_t) f->map.n * HCOMP_MAP_EXTENT_SIZE;
}

/* The log can be replaced by renaming a new file over it without changing who owns it,
 * what other names it has, or what a symbolic link points to. */
static int log_replaceable(const hcomp_file *f, struct stat *st)
{
    struct stat l;
    return fstat(f->map_fd, st) == 0 && lstat(f->path, &l) == 0 && S_ISREG(l.st_mode) &&
           l.st_ino == st->st_ino && l.st_dev == st->st_dev && st->st_nlink == 1 &&
           st->st_uid == geteuid();
}

/* This opener goes on with the new mapping file, under the same descriptor number (ROMIO
 * holds it), replayed afresh: piece numbers change, so the decoded-piece cache goes. */
static int reopen_log(hcomp_file *f, hcomp_error *err)
{
    int fd = open(f->path, (f->writable ? O_RDWR | O_APPEND : O_RDONLY) | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return hcomp_fail_errno(err, errno, "%s: opening the rewritten mapping file", f->path);
    (void) hcomp_open_lock_exclusive(fd, 0);    /* kept until the caller lets go */
    if (dup2(fd, f->map_fd) < 0) {
        int e = errno;
        close(fd);
        return hcomp_fail_errno(err, e, "%s: opening the rewritten mapping file", f->path);
    }
    close(fd);
    hcomp_log_free(f);
    f->consumed = HCOMP_MAP_HEADER_SIZE;
    f->size = 0;
    f->skipped = f->lost_records = f->lost_at = 0;
    f->generation++;
    for (int i = 0; i < HCOMP_READ_CACHE_SLOTS; i++)
        f->cache[i].piece = -1;
    return hcomp_log_refresh(f, err);
}

static int rewrite_log(hcomp_file *f, const hcomp_seg_use *use, const unsigned char *live,
                       const struct stat *st, hcomp_reclaim_result *res, hcomp_error *err)
{
    hcomp_bytes recs = {0};
    int rc = snapshot_records(f, use, live, &recs, err);
    if (rc == HCOMP_OK)
        rc = trailing_stats(f, &recs, err);
    unsigned char hdr[HCOMP_MAP_HEADER_SIZE];
    hcomp_map_header_encode(&f->hdr, hdr);
    if (rc == HCOMP_OK)
        rc = hcomp_map_replace(f->path, hdr, &recs, st->st_mode, "hcomp-compact", err);
    if (rc == HCOMP_OK) {
        res->log_rewritten = 1;
        res->log_after = HCOMP_MAP_HEADER_SIZE + recs.len;
    }
    hcomp_bytes_free(&recs);
    return rc == HCOMP_OK ? reopen_log(f, err) : rc;
}

/* ---- moving, removing, punching -------------------------------------------------- */

static int own_current(const hcomp_file *f, uint64_t id)
{
    for (int t = 0; t < f->cfg.ntiers; t++)
        if (f->tw[t].ready && f->tw[t].seg_fd >= 0 && f->tw[t].seg_id == id)
            return 1;
    return 0;
}

/* The tier of this configuration that segment s is on (its segment directory is the one
 * this opener writes to there), or -1. */
static int segment_tier(hcomp_file *f, const hcomp_segment *s)
{
    char dir[PATH_MAX];
    const char *file;
    split_path(s->path, dir, sizeof(dir), &file);
    for (int t = 0; t < f->cfg.ntiers; t++) {
        if (strcmp(f->cfg.tier[t].name, s->tier) != 0)
            continue;
        hcomp_error e;
        if (hcomp_tier_writer_prepare(&f->tw[t], &f->cfg.tier[t], f->path, f->id_hex, &e) != 0)
            return -1;
        return strcmp(f->tw[t].dir, dir) == 0 ? t : -1;
    }
    return -1;
}

/* Copy the live pieces of segment s, as stored, to this opener's segment on tier t (as
 * far as the tier has room), adding their RELOCATE records to f->batch. */
static int compact_segment(hcomp_file *f, size_t s, int t, const unsigned char *live,
                           unsigned char **buf, size_t *cap, const hcomp_tool_io *io,
                           uint64_t *done, uint64_t total, hcomp_reclaim_result *res,
                           hcomp_error *err)
{
    for (size_t i = 0; i < f->npieces; i++) {
        const hcomp_piece *p = &f->pieces[i];
        if (p->seg != (uint32_t) s || !live[i])
            continue;
        int rc = hcomp_piece_size_ok(f, p, err);
        if (rc != HCOMP_OK)
            return rc;
        uint64_t len = piece_bytes_on_disk(p);
        if (hcomp_grow(buf, cap, len) != 0)
            return hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory compacting", f->path);
        /* checked on the way: damage is never copied, and stops the compaction */
        if ((rc = hcomp_piece_fetch(f, (uint32_t) i, *buf, *buf + HCOMP_PIECE_HEADER_SIZE,
                                    err)) != HCOMP_OK)
            return rc;
        if (hcomp_first_fit(f, t, len, err, &rc) != t)
            return rc;          /* no room on this tier now: the rest stays (and is punched) */
        struct iovec iov[1] = {{*buf, (size_t) len}};
        rc = hcomp_append_moved(f, t, iov, 1, f->segs[s].id, p->seg_off, p->stored_len, p->crc,
                                p->codec, p->filter, p->level, err);
        if (rc == HCOMP_E_NOSPC)
            return HCOMP_OK;
        if (rc != HCOMP_OK)
            return rc;
        res->pieces_moved++;
        res->bytes_moved += len;
        *done += len;
        if (io && io->progress)
            io->progress(io->ctx, "compacting segments", *done, total);
    }
    return HCOMP_OK;
}

static int compact_segments(hcomp_file *f, const hcomp_seg_use *use, const unsigned char *live,
                            int full, const hcomp_tool_io *io, hcomp_reclaim_result *res,
                            hcomp_error *err)
{
    int *tier_of = malloc((f->nsegs ? f->nsegs : 1) * sizeof(*tier_of));
    if (tier_of == NULL)
        return hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory", f->path);
    uint64_t total = 0, done = 0;
    for (size_t s = 0; s < f->nsegs; s++) {
        const hcomp_seg_use *u = &use[s];
        tier_of[s] = -1;
        if (!u->reachable || u->live_pieces == 0 || u->live == u->recorded ||
            own_current(f, f->segs[s].id))
            continue;
        if (!full && 2 * u->live >= u->recorded)
            continue;
        if ((tier_of[s] = segment_tier(f, &f->segs[s])) >= 0)
            total += u->live;
    }
    f->batch.len = 0;
    unsigned char *buf = NULL;
    size_t cap = 0;
    int rc = HCOMP_OK;
    for (size_t s = 0; s < f->nsegs && rc == HCOMP_OK; s++)
        if (tier_of[s] >= 0)
            rc = compact_segment(f, s, tier_of[s], live, &buf, &cap, io, &done, total, res, err);
    free(buf);
    free(tier_of);
    if (f->batch.len == 0)
        return rc;
    /* what was copied is kept even if a later piece failed: the moves are valid */
    int src = rc;
    for (int t = 0; t < f->cfg.ntiers && rc == HCOMP_OK; t++)
        if (f->tw[t].ready && f->tw[t].seg_fd >= 0 && fsync(f->tw[t].seg_fd) != 0)
            rc = hcomp_fail_errno(err, errno, "%s: sync of segment %s/%s", f->path, f->tw[t].dir,
                                  f->tw[t].seg_name);
    if (rc == HCOMP_OK || src != HCOMP_OK) {
        hcomp_error e2;
        int arc = hcomp_log_append(f, &f->batch, rc == HCOMP_OK ? err : &e2);
        if (arc == HCOMP_OK && fsync(f->map_fd) != 0)
            arc = hcomp_fail_errno(rc == HCOMP_OK ? err : &e2, errno,
                                   "%s: sync of the mapping file", f->path);
        if (rc == HCOMP_OK)
            rc = arc;
    }
    f->batch.len = 0;
    int rrc = hcomp_log_refresh(f, rc == HCOMP_OK ? err : NULL);
    return rc != HCOMP_OK ? rc : rrc;
}

static void remove_segment(hcomp_file *f, size_t s, hcomp_reclaim_result *res)
{
    hcomp_segment *sg = &f->segs[s];
    struct stat st;
    if (lstat(sg->path, &st) != 0 || !S_ISREG(st.st_mode))
        return;             /* gone already (or not ours to remove) */
    uint64_t bytes = (uint64_t) st.st_blocks * 512u;
    if (sg->fd >= 0) {
        close(sg->fd);
        sg->fd = -1;
    }
    for (int t = 0; t < f->cfg.ntiers; t++)
        if (f->tw[t].ready && f->tw[t].seg_fd >= 0 && f->tw[t].seg_id == sg->id) {
            hcomp_tier_writer_remove_segment(&f->tw[t]);
            res->segments_removed++;
            res->bytes_freed += bytes;
            return;
        }
    if (unlink(sg->path) != 0)
        return;
    res->segments_removed++;
    res->bytes_freed += bytes;
    char dir[PATH_MAX];
    const char *file;
    split_path(sg->path, dir, sizeof(dir), &file);
    rmdir(dir);             /* fails, harmlessly, while other segments remain */
}

typedef struct byte_range { uint64_t off, len; } byte_range;

static int by_offset(const void *a, const void *b)
{
    const byte_range *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* Punch out the dead pieces of segment s, neighbours merged into one range (a range
 * frees only the blocks it covers whole). */
static void punch_dead(hcomp_file *f, size_t s, const unsigned char *live,
                       hcomp_reclaim_result *res)
{
    hcomp_segment *sg = &f->segs[s];
    byte_range *r = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = 0; i < f->npieces; i++) {
        const hcomp_piece *p = &f->pieces[i];
        if (p->seg != (uint32_t) s || live[i])
            continue;
        if (hcomp_grow_array(&r, &cap, n + 1, sizeof(*r)) != 0) {
            free(r);
            return;         /* out of memory: the space waits for the next time */
        }
        r[n++] = (byte_range) {p->seg_off, piece_bytes_on_disk(p)};
    }
    qsort(r, n, sizeof(*r), by_offset);
    int fd = n ? open(sg->path, O_RDWR | O_NOFOLLOW | O_CLOEXEC) : -1;
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
            res->bytes_freed += (uint64_t) (before.st_blocks - after.st_blocks) * 512u;
    }
    if (fd >= 0)
        close(fd);
    free(r);
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
void hcomp_overwritten_punch(hcomp_file *f, const uint32_t *cand, size_t n)
{
    hcomp_error e;
    if (n == 0 || hcomp_log_refresh(f, &e) != HCOMP_OK || f->skipped || f->lost_records)
        return;
    hcomp_reclaim_result res;
    memset(&res, 0, sizeof(res));
    for (size_t i = 0; i < n; i++) {
        const hcomp_piece *p = &f->pieces[cand[i]];
        const hcomp_segment *sg = &f->segs[p->seg];
        if (!reachable(sg) || hcomp_piece_live(f, cand[i]))
            continue;
        int fd = open(sg->path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
            continue;
        struct stat before, after;
        if (fstat(fd, &before) == 0 &&
            fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t) p->seg_off,
                      (off_t) piece_bytes_on_disk(p)) == 0 &&
            fstat(fd, &after) == 0 && after.st_blocks < before.st_blocks) {
            res.bytes_freed += (uint64_t) (before.st_blocks - after.st_blocks) * 512u;
            /* the room shows in the tier's usage: let placement look again at once */
            for (int t = 0; t < f->cfg.ntiers; t++)
                if (strcmp(f->cfg.tier[t].name, sg->tier) == 0) {
                    f->tw[t].exhausted_at = 0;
                    f->tw[t].avail_time = 0;
                }
        }
        close(fd);
    }
    f->stats.overwritten_freed += res.bytes_freed;
}

int hcomp_reclaim(hcomp_file *f, int full, const hcomp_tool_io *io, hcomp_reclaim_result *res,
                  hcomp_error *err)
{
    memset(res, 0, sizeof(*res));
    int rc = hcomp_log_refresh(f, err);
    if (rc != HCOMP_OK)
        return rc;
    struct stat st;
    if (fstat(f->map_fd, &st) != 0)
        return hcomp_fail_errno(err, errno, "%s: stat of the mapping file", f->path);
    res->log_before = res->log_after = (uint64_t) st.st_size;
    /* a damaged log may hide records (a lost PIECE's segment would look empty): only fsck
     * may decide what it held */
    if (f->skipped || f->lost_records || f->consumed != (uint64_t) st.st_size) {
        res->damaged = 1;
        return HCOMP_OK;
    }
    hcomp_seg_use *use;
    unsigned char *live;
    if ((rc = hcomp_reclaim_survey(f, &use, &live, err)) != HCOMP_OK)
        return rc;
    uint64_t recorded = 0, dead = 0;
    for (size_t s = 0; s < f->nsegs; s++) {
        recorded += use[s].recorded;
        if (use[s].reachable)
            dead += use[s].recorded - use[s].live;
    }
    res->dead_found = dead;
    uint64_t snap = snapshot_estimate(f, use);
    int log_big = res->log_before > RECLAIM_LOG_FACTOR * snap + RECLAIM_LOG_MIN;
    int worth = full ? (dead > 0 || res->log_before > snap + RECLAIM_LOG_MIN / 16)
                     : (dead > 0 && RECLAIM_DEAD_PARTS * dead >= recorded) || log_big;
    if (!worth) {
        free(use);
        free(live);
        return HCOMP_OK;
    }
    res->ran = 1;
    /* 1. compaction copies, recorded and synced before anything goes */
    rc = compact_segments(f, use, live, full, io, res, err);
    if (rc == HCOMP_OK && res->pieces_moved) {
        free(use);
        free(live);
        if ((rc = hcomp_reclaim_survey(f, &use, &live, err)) != HCOMP_OK)
            return rc;
    }
    /* 2. segments without a live piece; 3. dead pieces beside live ones */
    for (size_t s = 0; s < f->nsegs && rc == HCOMP_OK; s++) {
        if (!use[s].reachable)
            continue;
        if (use[s].live_pieces == 0)    /* its pieces dead, or all moved away */
            remove_segment(f, s, res);
        else if (use[s].live < use[s].recorded)
            punch_dead(f, s, live, res);
    }
    /* 4. the log, once every piece it drops is gone */
    struct stat cur;
    if (rc == HCOMP_OK && log_replaceable(f, &cur))
        rc = rewrite_log(f, use, live, &cur, res, err);
    else if (rc == HCOMP_OK)
        res->log_kept = 1;
    free(use);
    free(live);
    return rc;
}
