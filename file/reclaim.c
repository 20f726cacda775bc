/* Reclaiming space (docs/FORMAT.md, "Openers and reclaiming space"): pieces that no logical byte
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
#include "common/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

/* auto: reclaim when dead pieces hold a fifth of the recorded bytes... */
#define RECLAIM_DEAD_PARTS 5
/* ...or the log is more than 5/2 of what a snapshot of the live state needs: a file
 * rewritten whole adds about one snapshot's records per rewrite, so the log is rewritten
 * every other close and is never more than twice a checkpoint's records after one */
#define RECLAIM_LOG_NUM 5
#define RECLAIM_LOG_DEN 2
uint64_t hcomp_piece_bytes_on_disk(const hcomp_piece *p)
{
    return HCOMP_PIECE_HEADER_SIZE + (uint64_t) p->stored_len;
}

int hcomp_segment_reachable(const hcomp_file *f, const hcomp_segment *s)
{
    return s->path != NULL && (!s->node_local || strcmp(s->node, f->node) == 0);
}

void hcomp_split_path(const char *path, char *dir, size_t dn, const char **file)
{
    snprintf(dir, dn, "%s", path);
    char *slash = strrchr(dir, '/');
    *file = path + (slash ? (size_t) (slash - dir) + 1 : 0);
    if (slash)
        *slash = '\0';
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
        u->recorded += hcomp_piece_bytes_on_disk(p);
        if (live[i]) {
            u->live_pieces++;
            u->live += hcomp_piece_bytes_on_disk(p);
        }
    }
    for (size_t s = 0; s < f->nsegs; s++)
        use[s].reachable = hcomp_segment_reachable(f, &f->segs[s]);
    *use_out = use;
    *live_out = live;
    return HCOMP_OK;
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
    hcomp_split_path(s->path, dir, sizeof(dir), &file);
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
        uint64_t len = hcomp_piece_bytes_on_disk(p);
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
                                p->codec, p->filter, p->level, p->frame, err);
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
        /* less than half live: compacted; otherwise its dead pieces are punched out (a
         * hole costs less than a copy of the live data around it) */
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
    /* what was copied is recorded even if a later piece failed (those moves are valid),
     * but only once the copies are durable: else the old places stay the only ones */
    hcomp_error e2;
    hcomp_error *why = rc == HCOMP_OK ? err : &e2;
    int arc = HCOMP_OK;
    for (int t = 0; t < f->cfg.ntiers && arc == HCOMP_OK; t++) {
        if (f->tw[t].ready && f->tw[t].seg_fd >= 0 && fsync(f->tw[t].seg_fd) != 0)
            arc = hcomp_fail_errno(why, errno, "%s: sync of segment %s/%s", f->path,
                                   f->tw[t].dir, f->tw[t].seg_name);
        if (arc == HCOMP_OK)    /* the new segment's name too */
            arc = hcomp_segment_names_sync(f, t, why);
    }
    if (arc == HCOMP_OK)
        arc = hcomp_log_append(f, &f->batch, why);
    if (arc == HCOMP_OK && fsync(f->map_fd) != 0)
        arc = hcomp_fail_errno(why, errno, "%s: sync of the mapping file", f->path);
    if (arc == HCOMP_OK)        /* format 3: the moves are in this opener's writer log */
        arc = hcomp_wlog_sync(f, why);
    if (rc == HCOMP_OK)
        rc = arc;
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
    hcomp_split_path(sg->path, dir, sizeof(dir), &file);
    rmdir(dir);             /* fails, harmlessly, while other segments remain */
}

/* Punch out the dead pieces of segment s. */
static void punch_dead(hcomp_file *f, size_t s, const unsigned char *live,
                       hcomp_reclaim_result *res)
{
    hcomp_byte_range *r = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = 0; i < f->npieces; i++) {
        const hcomp_piece *p = &f->pieces[i];
        if (p->seg != (uint32_t) s || live[i])
            continue;
        if (hcomp_grow_array(&r, &cap, n + 1, sizeof(*r)) != 0) {
            free(r);
            return;         /* out of memory: the space waits for the next time */
        }
        r[n++] = (hcomp_byte_range) {p->seg_off, hcomp_piece_bytes_on_disk(p)};
    }
    hcomp_punch_ranges(f, s, r, n, &res->bytes_freed);
    free(r);
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
    res->log_before = res->log_after = (uint64_t) st.st_size + hcomp_wlog_bytes(f);
    /* a damaged log may hide records (a lost PIECE's segment would look empty): only fsck
     * may decide what it held */
    /* a writer log not read to its end (an append cut short by a crash, or bytes that
     * did not all arrive yet) would lose what follows in it: fsck decides */
    int wlog_tail = 0;
    for (size_t i = 0; i < f->nwlogs; i++) {
        struct stat ws;
        wlog_tail |= f->wlogs[i].fd >= 0 && fstat(f->wlogs[i].fd, &ws) == 0 &&
                     (uint64_t) ws.st_size != f->wlogs[i].consumed;
    }
    if (f->skipped || f->lost_records || f->consumed != (uint64_t) st.st_size || wlog_tail) {
        res->damaged = 1;
        return HCOMP_OK;
    }
    /* a record set aside whose piece may still arrive: a fold would drop it, and its
     * segment would look dead; a later close or compaction does it (docs/FORMAT.md,
     * "Durable steps") */
    if (f->nunconfirmed > 0 && hcomp_log_set_aside_settling(f))
        return HCOMP_OK;
    hcomp_seg_use *use;
    unsigned char *live;
    if ((rc = hcomp_reclaim_survey(f, &use, &live, err)) != HCOMP_OK)
        return rc;
    /* dead bytes still on storage: a removed segment's pieces stay in the log (until it is
     * rewritten) but take no room */
    uint64_t recorded = 0, dead = 0;
    for (size_t s = 0; s < f->nsegs; s++) {
        struct stat sst;
        if (!use[s].reachable || use[s].live == use[s].recorded || lstat(f->segs[s].path, &sst) != 0)
            continue;
        recorded += use[s].recorded;
        dead += use[s].recorded - use[s].live;
    }
    for (size_t s = 0; s < f->nsegs; s++)
        recorded += use[s].live == use[s].recorded ? use[s].recorded : 0;
    res->dead_found = dead;
    uint64_t snap = hcomp_log_snapshot_estimate(f, use);
    int log_big = RECLAIM_LOG_DEN * res->log_before > RECLAIM_LOG_NUM * snap;
    /* version 3: writer logs are folded into the mapping file whenever it is rewritten,
     * and the last close always folds them (later openers read one log again) */
    int fold = f->nwlogs > 0 || f->upgrade_to > f->hdr.version;
    log_big = log_big || fold;
    int worth = full ? (dead > 0 || res->log_before > snap + 4096 || fold)
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
    /* 4. the log, once every piece it drops is gone (auto: only when it has grown, for a
     * rewrite costs two syncs) */
    struct stat cur;
    if (rc == HCOMP_OK && (full || log_big) && hcomp_log_replaceable(f, &cur))
        rc = hcomp_log_rewrite(f, use, live, &cur, res, err);
    else if (rc == HCOMP_OK && (full || log_big))
        res->log_kept = 1;
    free(use);
    free(live);
    return rc;
}

/* hcomp_reclaim as the hint asks, counted in the statistics; the caller holds the
 * openers' lock exclusively. A failure leaves every live byte where the log says. */
static int reclaim_counted(hcomp_file *f)
{
    double t0 = hcomp_now();
    hcomp_reclaim_result r;
    hcomp_error e;
    int rc = hcomp_reclaim(f, f->opts.reclaim == HCOMP_RECLAIM_CLOSE, NULL, &r, &e);
    f->stats.t_reclaim += hcomp_now() - t0;
    if (rc != HCOMP_OK)
        snprintf(f->stats.reclaim_error, sizeof(f->stats.reclaim_error), "%.250s", e.msg);
    if (r.ran) {
        f->stats.reclaim_ran = 1;
        f->stats.reclaim_dead += r.dead_found;
        f->stats.reclaim_freed += r.bytes_freed;
        f->stats.reclaim_moved += r.bytes_moved;
        f->stats.reclaim_segments += r.segments_removed;
        f->stats.reclaim_log_before = r.log_before;
        f->stats.reclaim_log_after = r.log_after;
    }
    return rc;
}

/* Runs of small pieces written again (file/coalesce.c), said in the statistics. A failure
 * (the old pieces are intact) keeps reclaiming from dropping them. */
static int coalesce_counted(hcomp_file *f)
{
    double t0 = hcomp_now();
    uint64_t pieces = 0, bytes = 0;
    hcomp_error e;
    int rc = hcomp_coalesce_small(f, &pieces, &bytes, &e);
    f->stats.coalesced_pieces = pieces;
    f->stats.coalesced_bytes = bytes;
    f->stats.t_coalesce = hcomp_now() - t0;
    if (rc != HCOMP_OK)
        snprintf(f->stats.reclaim_error, sizeof(f->stats.reclaim_error), "%.250s", e.msg);
    return rc;
}

/* The last opener to close reclaims: it lets go of its shared lock and takes the
 * exclusive one without waiting, which succeeds only when no other process has the file
 * open (of several closing at once, the last one). */
void hcomp_reclaim_at_close(hcomp_file *f)
{
    if (f->opts.reclaim == HCOMP_RECLAIM_NEVER || !f->open_locked)
        return;
    hcomp_open_unlock(f->map_fd);
    f->open_locked = 0;
    if (hcomp_open_lock_exclusive(f->map_fd, 0) != 0)
        return;
    if (coalesce_counted(f) == HCOMP_OK)
        (void) reclaim_counted(f);
    hcomp_open_unlock(f->map_fd);
}

int hcomp_reclaim_idle(hcomp_file *f)
{
    /* this opener's shared lock becomes exclusive only when no other open file
     * description of the file holds one: no other process (nor handle) has it open */
    if (f->opts.reclaim == HCOMP_RECLAIM_NEVER || !f->open_locked || !f->writable ||
        hcomp_open_lock_exclusive(f->map_fd, 0) != 0)
        return 0;
    int rc = reclaim_counted(f);
    (void) hcomp_open_lock_to_shared(f->map_fd);    /* on the rewritten log's descriptor */
    return rc == HCOMP_OK;
}
