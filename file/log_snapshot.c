/* The mapping log rewritten as a snapshot of the live state (docs/FORMAT.md, "Openers and
 * reclaiming space", step 4): a SEGMENT record per segment holding a live piece, a PIECE
 * record per live piece with its live extents, the size, the STATS records that ended the
 * old log; put in place of the old one atomically, and this opener goes on with it. */
#include "file_internal.h"
#include "tools.h"
#include "common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The STATS records at the end of the log (the engine statistics its last writers left
 * at close), copied whole: the snapshot keeps them, not those of earlier writes. */
static int trailing_stats(hcomp_file *f, hcomp_bytes *out, hcomp_error *err)
{
    if (f->wstats.len > 0) {    /* version 3: the writers' logs hold the last ones */
        if (hcomp_bytes_reserve(out, f->wstats.len) != 0)
            return hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory", f->path);
        memcpy(out->p + out->len, f->wstats.p, f->wstats.len);
        out->len += f->wstats.len;
        return HCOMP_OK;
    }
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
        hcomp_split_path(sg->path, dir, sizeof(dir), &file);
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
        /* a piece's live bytes so scattered that one record cannot list them: the log
         * stays (one piece must not become two records: a move would find only one) */
        if ((uint64_t) count[i] * HCOMP_MAP_EXTENT_SIZE + HCOMP_MAP_PIECE_FIXED >
            HCOMP_MAP_MAX_PAYLOAD) {
            rc = HCOMP_E_UNSUPPORTED;
            break;
        }
        if (hcomp_map_encode_piece(out, f->segs[p->seg].id, p->seg_off, p->stored_len,
                                   p->raw_len, p->crc, p->codec, p->filter, p->level, p->frame,
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
uint64_t hcomp_log_snapshot_estimate(const hcomp_file *f, const hcomp_seg_use *use)
{
    uint64_t bytes = HCOMP_MAP_HEADER_SIZE + HCOMP_MAP_FRAME_SIZE + 16;
    for (size_t s = 0; s < f->nsegs; s++)
        if (use[s].live_pieces)
            bytes += HCOMP_MAP_FRAME_SIZE + HCOMP_MAP_SEGMENT_FIXED + 64 +
                     (f->segs[s].path ? strlen(f->segs[s].path) : 0);
    for (size_t s = 0; s < f->nsegs; s++)
        bytes += use[s].live_pieces * (HCOMP_MAP_FRAME_SIZE + HCOMP_MAP_PIECE_FIXED);
    return bytes + (uint64_t) f->map.n * HCOMP_MAP_EXTENT_SIZE + f->tail_stats;
}

/* The log can be replaced by renaming a new file over it without changing who owns it,
 * what other names it has, or what a symbolic link points to. */
int hcomp_log_replaceable(const hcomp_file *f, struct stat *st)
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
    hcomp_wlog_forget(f);       /* of the old generation: the snapshot holds what they said */
    f->consumed = HCOMP_MAP_HEADER_SIZE;
    f->size = 0;
    f->skipped = f->lost_records = f->lost_at = f->tail_stats = 0;
    f->generation++;
    hcomp_read_cache_clear(f, 0);
    return hcomp_log_refresh(f, err);
}

/* Durable steps (docs/FORMAT.md): a snapshot names its pieces as durable, unlike a
 * writer log's records past their writer's last sync, so every segment holding a live
 * piece (and its name, and its directory's) is synced before the snapshot is written;
 * pieces on a volatile tier die with the node whatever is done here. */
static int sync_live_segments(hcomp_file *f, const hcomp_seg_use *use, hcomp_error *err)
{
    char last_dir[PATH_MAX] = "";
    for (size_t s = 0; s < f->nsegs; s++) {
        const hcomp_segment *sg = &f->segs[s];
        if (use[s].live_pieces == 0 || sg->path == NULL || !use[s].reachable)
            continue;
        int vol = 0;
        for (int t = 0; t < f->cfg.ntiers; t++)
            if (strcmp(f->cfg.tier[t].name, sg->tier) == 0)
                vol = f->tw[t].ready ? f->tw[t].volatile_tier
                                     : hcomp_tier_volatile(&f->cfg.tier[t], f->path);
        if (vol)
            continue;
        int fd = open(sg->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
            continue;           /* gone: the snapshot's reads will say so, as the log's would */
        int rc = fsync(fd);
        int e = errno;
        close(fd);
        if (rc != 0 && e != EINVAL)
            return hcomp_fail_errno(err, e, "%s: sync of segment %s", f->path, sg->path);
        char dir[PATH_MAX];
        const char *file;
        hcomp_split_path(sg->path, dir, sizeof(dir), &file);
        if (strcmp(dir, last_dir) == 0)
            continue;
        snprintf(last_dir, sizeof(last_dir), "%s", dir);
        char parent[PATH_MAX];
        hcomp_split_path(dir, parent, sizeof(parent), &file);
        if (hcomp_sync_dir(dir) != 0 || hcomp_sync_dir(parent) != 0)
            return hcomp_fail_errno(err, errno, "%s: sync of segment directory %s", f->path, dir);
    }
    return HCOMP_OK;
}

int hcomp_log_rewrite(hcomp_file *f, const hcomp_seg_use *use, const unsigned char *live,
                       const struct stat *st, hcomp_reclaim_result *res, hcomp_error *err)
{
    hcomp_bytes recs = {0};
    int rc = sync_live_segments(f, use, err);
    if (rc == HCOMP_OK)
        rc = snapshot_records(f, use, live, &recs, err);
    if (rc == HCOMP_OK)
        rc = trailing_stats(f, &recs, err);
    /* version 3: the snapshot folds the writer logs in; a new generation of the header
     * makes them stale at the rename (a crash after it leaves them ignored) */
    hcomp_map_header nh = f->hdr;
    if (f->upgrade_to > nh.version) {   /* hcomp compact --hint hcomp_format=3 */
        nh.version = f->upgrade_to;
        nh.log_gen = 0;
    }
    if (nh.version >= HCOMP_MAP_VERSION_WLOGS)
        nh.log_gen++;
    unsigned char hdr[HCOMP_MAP_HEADER_SIZE];
    hcomp_map_header_encode(&nh, hdr);
    if (rc == HCOMP_OK)
        rc = !hcomp_writeback_map_unchanged(f)
                 ? hcomp_fail(err, HCOMP_E_IO, "%s: changed since its close by something else "
                              "than hcomp: its log is not rewritten", f->path)
                 : hcomp_map_replace(f->path, hdr, &recs, st->st_mode, "hcomp-compact", err);
    if (rc == HCOMP_OK) {
        res->log_rewritten = 1;
        res->log_after = HCOMP_MAP_HEADER_SIZE + recs.len;
        f->hdr = nh;
        if (nh.version >= HCOMP_MAP_VERSION_WLOGS)
            (void) hcomp_wlog_remove_other_gens(f->logdir, nh.log_gen);
    }
    hcomp_bytes_free(&recs);
    if (rc == HCOMP_E_UNSUPPORTED) {
        res->log_kept = 1;
        return HCOMP_OK;
    }
    return rc == HCOMP_OK ? reopen_log(f, err) : rc;
}

