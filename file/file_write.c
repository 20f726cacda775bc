/* Writing a task (docs/ENGINE.md): analyse the data, predict each codec's cost,
 * let HCDP split the task over the tiers (in 4 KiB multiples) and choose a codec
 * per part, encode the pieces on the compression manager's threads while earlier
 * pieces are written, then record all of the task's pieces with one append to the
 * mapping file. A piece that turns out not to fit where it was planned (the
 * prediction was off, or the tier filled up) spills: it is cut at a 4 KiB multiple
 * and the rest goes to the next tier. */
#include "file_internal.h"
#include "engine/engine.h"
#include "engine/hcdp.h"
#include "engine/filter.h"
#include "engine/manager.h"
#include "common/util.h"
#include "common/clock.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

/* First tier from `from` on with room for need bytes (reserving more capacity from
 * the tier's ledger when this opener's reservation is short), or -1. */
/* A reservation that came back empty is not retried for a second: the ledger and the
 * tier scan are the costly part of placement. */
static int tier_exhausted(const hcomp_tier_writer *w)
{
    return w->exhausted_at > 0 && hcomp_now() - w->exhausted_at < 1.0;
}

int hcomp_first_fit(hcomp_file *f, int from, uint64_t need, hcomp_error *err, int *rc)
{
    *rc = HCOMP_OK;
    for (int t = from; t < f->cfg.ntiers; t++) {
        hcomp_tier_writer *w = &f->tw[t];
        if (w->full)
            continue;
        if (w->budget < need && !tier_exhausted(w) &&
            (*rc = hcomp_tier_reserve(w, &f->cfg.tier[t], f->sharers, need - w->budget, err)) != HCOMP_OK) {
            if (*rc == HCOMP_E_NOMEM)
                return -1;
            /* the tier's capacity ledger is unusable (its directory vanished or turned
             * read-only): take the tier out of placement, as a failing write does */
            *rc = HCOMP_OK;
            w->full = 1;
            snprintf(w->why, sizeof(w->why), "%.250s", err ? err->msg : "unusable");
            continue;
        }
        if (w->budget >= need)
            return t;
    }
    return -1;
}

/* First tier from `from` on that takes the whole piece (need bytes) or a part of it
 * no smaller than the tier's minimum part; -1 if none. */
static int first_fit_part(hcomp_file *f, int from, uint64_t need, hcomp_error *err, int *rc)
{
    *rc = HCOMP_OK;
    for (int t = from; t < f->cfg.ntiers; t++) {
        uint64_t floor = hcomp_piece_room_raw(f, hcomp_min_part(&f->cfg.tier[t]));
        int got = hcomp_first_fit(f, t, need < floor ? need : floor, err, rc);
        if (*rc != HCOMP_OK)
            return -1;
        if (got == t)
            return t;
    }
    return -1;
}

static int no_space(hcomp_file *f, uint64_t need, hcomp_error *err)
{
    char tiers[512] = "";
    for (int t = 0; t < f->cfg.ntiers; t++) {
        size_t l = strlen(tiers);
        snprintf(tiers + l, sizeof(tiers) - l, "%s%s: %.200s", t ? "; " : "", f->cfg.tier[t].name,
                 f->tw[t].full ? (f->tw[t].why[0] ? f->tw[t].why : "full") : "capacity reached");
    }
    return hcomp_fail(err, HCOMP_E_NOSPC, "%s: no tier can take a %llu-byte piece (%s); "
                      "raise a tier's capacity in %s, free space or repair the tier", f->path,
                      (unsigned long long) need, tiers, f->cfg.source);
}

uint32_t hcomp_file_block_size(const hcomp_file *f)
{
    return f->hdr.version >= 2 ? hcomp_options_block_size(&f->opts) : 0;
}

uint64_t hcomp_piece_room_raw(const hcomp_file *f, uint64_t len)
{
    /* a piece stored as it is: framed in HCOMP_BLOCK_AS_IS blocks, the most a piece of
     * len bytes takes with any codec (a block that does not shrink is stored as it is) */
    uint32_t b = hcomp_file_block_size(f) ? HCOMP_BLOCK_AS_IS : 0;
    uint64_t n = b ? (len + b - 1) / b : 0;
    return HCOMP_PIECE_HEADER_SIZE + len + (b ? HCOMP_BLOCK_TABLE_FIXED + HCOMP_BLOCK_ENTRY * n : 0);
}

void hcomp_file_writers_close(hcomp_file *f)
{
    for (int t = 0; t < HCOMP_MAX_TIERS; t++)
        hcomp_tier_writer_close(&f->tw[t], &f->cfg.tier[t]);
}

void hcomp_file_remove_own_segments(hcomp_file *f, int node_local_only)
{
    for (int t = 0; t < f->cfg.ntiers; t++)
        if (!node_local_only || f->cfg.tier[t].node_local)
            hcomp_tier_writer_remove_segment(&f->tw[t]);
}

int hcomp_segment_append(hcomp_file *f, int t, struct iovec *iov, int iovcnt, uint64_t *seg_off,
                         hcomp_error *err)
{
    int is_new;
    hcomp_tier_writer *w = &f->tw[t];
    int rc = hcomp_tier_writer_segment(&f->tw[t], &f->cfg.tier[t], f->path, f->perm, &is_new, err);
    if (rc != HCOMP_OK && rc != HCOMP_E_NOMEM) {
        /* the tier's directory vanished or refuses us: take it out of placement */
        w->full = 1;
        snprintf(w->why, sizeof(w->why), "%.250s", err ? err->msg : "unusable");
        return HCOMP_E_NOSPC;
    }
    if (rc != HCOMP_OK)
        return rc;
    if (!is_new) {
        /* the segment must still be where the map will say it is: a tier directory
         * removed or moved under an open descriptor would swallow pieces unseen */
        struct stat b;
        char path[PATH_MAX];
        snprintf(path, sizeof(path), "%s/%s", w->dir, w->seg_name);
        /* against the file as created: one call (a round trip to the servers of a
         * distributed file system) rather than two */
        if (lstat(path, &b) != 0 || w->seg_dev != b.st_dev || w->seg_ino != b.st_ino) {
            w->full = 1;
            snprintf(w->why, sizeof(w->why), "segment %.200s vanished", path);
            close(w->seg_fd);
            w->seg_fd = -1;
            return HCOMP_E_NOSPC;
        }
    }
    size_t total = 0, done = 0;
    for (int i = 0; i < iovcnt; i++)
        total += iov[i].iov_len;
    double t0 = hcomp_now();
    while (done < total) {
        ssize_t n = pwritev(w->seg_fd, iov, iovcnt, (off_t) (w->seg_tail + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            /* full, or failing (I/O error, gone read-only...): the tier is taken out of
             * placement and the piece goes elsewhere; nothing was recorded */
            int e = n < 0 ? errno : ENOSPC;
            w->full = 1;
            snprintf(w->why, sizeof(w->why), "%s", strerror(e));
            if (is_new) {       /* leave no empty, unrecorded segment behind */
                char path[PATH_MAX];
                snprintf(path, sizeof(path), "%s/%s", w->dir, w->seg_name);
                close(w->seg_fd);
                w->seg_fd = -1;
                unlink(path);
                rmdir(w->dir);
            }
            return HCOMP_E_NOSPC;
        }
        done += (size_t) n;
        for (int i = 0; i < iovcnt && n > 0; i++) {    /* advance past what was written */
            size_t k = (size_t) n < iov[i].iov_len ? (size_t) n : iov[i].iov_len;
            iov[i].iov_base = (char *) iov[i].iov_base + k;
            iov[i].iov_len -= k;
            n -= (ssize_t) k;
        }
    }
    hcomp_tier_emulate(&f->cfg.tier[t], total, 1, t0);
    hcomp_monitor_observe(w->mon, 1, total, hcomp_now() - t0);
    if (is_new && hcomp_map_encode_segment(&f->batch, w->seg_id, f->cfg.tier[t].name, w->dir,
                                           w->seg_name, f->node,
                                           f->cfg.tier[t].node_local ? HCOMP_SEGMENT_NODE_LOCAL : 0) != 0)
        return hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory", f->path);
    *seg_off = w->seg_tail;
    w->seg_tail += total;
    if (w->budget != UINT64_MAX)
        w->budget -= total < w->budget ? total : w->budget;
    double flush_s;
    uint64_t started = hcomp_tier_writer_flush_behind(w, f->opts.flush_after, &flush_s);
    if (started) {
        f->stats.flush_behind_bytes += started;
        /* the time it took counts as writing, as a sync's does */
        hcomp_monitor_observe(w->mon, 1, 0, flush_s);
    }
    return HCOMP_OK;
}

/* Store one encoded piece on tier t and add its record to the batch;
 * HCOMP_E_NOSPC means the tier is full (it is then skipped). */
static int store(hcomp_file *f, int t, uint64_t start, uint32_t raw_len, const hcomp_job *p,
                 hcomp_error *err)
{
    unsigned char hdr[HCOMP_PIECE_HEADER_SIZE];
    hcomp_piece_header h = {start, raw_len, p->stored, p->codec_used, p->filter_used,
                            p->table_len > 0};
    hcomp_piece_header_encode(&h, hdr);
    struct iovec iov[3] = {{hdr, sizeof(hdr)}, {p->table, p->table_len},
                           {(void *) p->payload, p->stored - p->table_len}};
    size_t total = sizeof(hdr) + p->stored;
    uint64_t seg_off;
    int rc = hcomp_segment_append(f, t, iov, 3, &seg_off, err);
    if (rc != HCOMP_OK)
        return rc;
    hcomp_map_extent e = {start, raw_len, 0};
    if (hcomp_map_encode_piece(&f->batch, f->tw[t].seg_id, seg_off, p->stored, raw_len, p->crc,
                               p->codec_used, p->filter_used,
                               p->codec_used == HCOMP_CODEC_NONE ? HCOMP_MAP_LEVEL_UNKNOWN : p->level,
                               p->table_len ? hcomp_frame_of_block_size(p->block_used) : 0,
                               &e, 1) != 0)
        return hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory", f->path);
    hcomp_file_stats *s = &f->stats;
    s->pieces++;
    s->tier_raw[t] += raw_len;
    s->tier_stored[t] += total;
    s->tier_pieces[t]++;
    s->tier_codec_raw[t][p->codec_used] += raw_len;
    s->codec_raw[p->codec_used] += raw_len;
    s->codec_stored[p->codec_used] += total;
    s->codec_pieces[p->codec_used]++;
    s->shuffled_pieces += p->filter_used != HCOMP_FILTER_NONE;
    return HCOMP_OK;
}

/* Store job's bytes from tier `from` on, cutting and re-encoding when a tier has
 * less room than the piece needs (spill). */
static int store_spilling(hcomp_file *f, int from, uint64_t start, hcomp_job *job, hcomp_error *err)
{
    const unsigned char *src = job->src;
    uint32_t left = job->len;
    int reencode = 0;
    job->nalt = 0;      /* a cut piece keeps the way chosen for it: no other to try */
    while (left > 0) {
        if (reencode) {
            double t0 = hcomp_now();
            hcomp_job_encode(job);
            f->stats.t_compression += hcomp_now() - t0;
            if (job->rc != HCOMP_OK)
                return hcomp_fail(err, job->rc, "%s: compressing %u bytes failed", f->path,
                                  (unsigned) job->len);
        }
        uint64_t need = HCOMP_PIECE_HEADER_SIZE + (uint64_t) job->stored;
        int rc, t = first_fit_part(f, from, need, err, &rc);
        if (rc != HCOMP_OK)
            return rc;
        if (t < 0)
            return no_space(f, need, err);
        if (f->tw[t].budget < need) {
            /* fill this tier with the largest 4 KiB multiple it holds even raw */
            uint64_t fit = f->tw[t].budget / HCOMP_PIECE_ALIGN * HCOMP_PIECE_ALIGN;
            while (fit > 0 && hcomp_piece_room_raw(f, fit) > f->tw[t].budget)
                fit -= HCOMP_PIECE_ALIGN;
            job->len = (uint32_t) fit;
            reencode = 1;
            continue;
        }
        rc = store(f, t, start, job->len, job, err);
        if (rc == HCOMP_E_NOSPC) {
            reencode = 0;       /* the tier is marked full: place the same bytes again */
            continue;
        }
        if (rc != HCOMP_OK)
            return rc;
        start += job->len;
        src += job->len;
        left -= job->len;
        job->src = src;
        job->len = left;
        reencode = 1;
        from = t;
    }
    return HCOMP_OK;
}

/* A task that fails is not recorded, but the segments it created are used by the tasks
 * that follow (which do not name them again), and a delete must find them: append their
 * SEGMENT records alone; if even that fails, stop using those segments. */
static void keep_segments_named(hcomp_file *f)
{
    hcomp_bytes segs = {0};
    uint64_t ids[HCOMP_MAX_TIERS];
    int nids = 0;
    size_t pos = 0;
    while (pos < f->batch.len) {
        size_t start = pos;
        hcomp_map_record rec;
        int r = hcomp_map_next(f->batch.p, f->batch.len, &pos, &rec, NULL);
        if (r == HCOMP_MAP_INCOMPLETE)
            break;
        if (r != HCOMP_MAP_RECORD || rec.type != HCOMP_REC_SEGMENT)
            continue;
        if (nids < HCOMP_MAX_TIERS)
            ids[nids++] = rec.u.seg.id;
        if (hcomp_bytes_reserve(&segs, pos - start) == 0) {
            memcpy(segs.p + segs.len, f->batch.p + start, pos - start);
            segs.len += pos - start;
        }
    }
    hcomp_error ignored;
    if (nids > 0 && (segs.len == 0 || hcomp_log_append(f, &segs, &ignored) != HCOMP_OK))
        for (int t = 0; t < f->cfg.ntiers; t++)
            for (int i = 0; i < nids; i++)
                if (f->tw[t].ready && f->tw[t].seg_fd >= 0 && f->tw[t].seg_id == ids[i]) {
                    close(f->tw[t].seg_fd);
                    f->tw[t].seg_fd = -1;
                }
    hcomp_bytes_free(&segs);
}

/* The jobs array for a task, grown as needed and kept across tasks. */
static hcomp_job *jobs_for(hcomp_file *f, size_t n)
{
    if (n > f->njobs_cap) {
        hcomp_job *j = realloc(f->jobs, n * sizeof(*j));
        if (j == NULL)
            return NULL;
        memset(j + f->njobs_cap, 0, (n - f->njobs_cap) * sizeof(*j));
        f->jobs = j;
        f->njobs_cap = n;
    }
    return f->jobs;
}

/* A piece of a task before it is encoded. */
typedef struct piece_desc {
    const unsigned char *src;
    uint32_t len;
    unsigned codec;
    int level, filter, tier;
    uint64_t start;
    int alts;           /* the plan's alternatives (hcomp_task_plan.alt) are encoded too */
} piece_desc;

#define WINDOW_BYTES (32u << 20)    /* pieces in flight per task: at most this many bytes */
#define WINDOW_MIN_PIECES 4u        /* ... but at least this many pieces */

static int check_write(hcomp_file *f, uint64_t len, uint64_t off, hcomp_error *err)
{
    hcomp_ok(err);
    if (!f->writable)
        return hcomp_fail(err, HCOMP_E_RDONLY, "%s: opened read-only", f->path);
    if (off > HCOMP_PIECE_MAX_OFFSET_BYTES || len > HCOMP_PIECE_MAX_OFFSET_BYTES - off)
        return hcomp_fail(err, HCOMP_E_INVAL, "%s: write of %llu bytes at %llu goes beyond "
                          "hcomp's limit of 256 TiB", f->path, (unsigned long long) len,
                          (unsigned long long) off);
    return HCOMP_OK;
}

int hcomp_file_pwrite_locked(hcomp_file *f, const void *buf, uint64_t len, uint64_t off,
                             hcomp_error *err)
{
    int rc = check_write(f, len, off, err);
    if (rc != HCOMP_OK || len == 0)
        return rc;
    /* buffered writes come first: this one may overwrite them */
    if ((rc = hcomp_wbuf_flush(f, err)) != HCOMP_OK)
        return rc;
    /* atomic mode: after every write this process can see (the one before it under
     * ROMIO's lock), and seen by the next holder of the lock on any node */
    if (f->atomic && (rc = hcomp_order_advance(f, err)) != HCOMP_OK)
        return rc;
    hcomp_wrun run = {off, len, 0};
    rc = hcomp_file_write_runs(f, buf, &run, 1, err);
    if (rc == HCOMP_OK && f->atomic)
        rc = hcomp_wlog_sync(f, err);
    return rc;
}

int hcomp_file_pwrite_buffered_locked(hcomp_file *f, const void *buf, uint64_t len, uint64_t off,
                                      hcomp_error *err)
{
    int rc = check_write(f, len, off, err);
    if (rc != HCOMP_OK || len == 0)
        return rc;
    if (!hcomp_wbuf_takes(f, len))
        return hcomp_file_pwrite_locked(f, buf, len, off, err);
    return hcomp_wbuf_add(f, buf, len, off, err);
}

/* The pieces the runs overwrite (hcomp_overwritten_collect of each), in one array. */
static int collect_overwritten(const hcomp_file *f, const hcomp_wrun *runs, size_t nruns,
                               uint32_t **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    size_t cap = 0;
    for (size_t r = 0; r < nruns; r++) {
        uint32_t *one;
        size_t k;
        if (hcomp_overwritten_collect(f, runs[r].off, runs[r].len, &one, &k) != 0 ||
            (k > 0 && hcomp_grow_array(out, &cap, *n + k, sizeof(**out)) != 0)) {
            free(one);
            return -1;
        }
        if (k > 0)
            memcpy(*out + *n, one, k * sizeof(*one));
        *n += k;
        free(one);
    }
    return 0;
}

int hcomp_file_write_runs(hcomp_file *f, const void *buf, const hcomp_wrun *runs, size_t nruns,
                          hcomp_error *err)
{
    hcomp_ok(err);
    uint64_t len = 0;
    for (size_t r = 0; r < nruns; r++)
        len += runs[r].len;
    if (len == 0)
        return HCOMP_OK;
    double t_start = hcomp_now();
    for (int t = 0; t < f->cfg.ntiers; t++) {
        int rc = hcomp_tier_writer_prepare(&f->tw[t], &f->cfg.tier[t], f->path, f->id_hex, err);
        if (rc != HCOMP_OK)
            return rc;
    }
    /* 1-3: analysis, prediction, placement */
    hcomp_task_plan plan;
    int rc = hcomp_engine_plan(&f->eng, buf, len, &plan, err);
    if (rc != HCOMP_OK)
        return rc;

    /* 4: the pieces of every part, encoded on the manager's threads, a window at a time:
     * each job in flight holds an output buffer of up to a piece, so a task of many GiB
     * in one write must not have all its pieces in flight at once. A piece ends at a
     * part's end, at the piece size, and at a run's end (so it backs one logical range,
     * which its header names) */
    size_t npieces = nruns;
    for (int p = 0; p < plan.hcdp.nparts; p++)
        npieces += (size_t) ((plan.hcdp.part[p].len + f->opts.piece_size - 1) / f->opts.piece_size);
    size_t window = WINDOW_BYTES / f->opts.piece_size;
    if (window < WINDOW_MIN_PIECES)
        window = WINDOW_MIN_PIECES;
    hcomp_job *jobs = jobs_for(f, npieces < window ? npieces : window);
    piece_desc *d = malloc((npieces ? npieces : 1) * sizeof(*d));
    if (jobs == NULL || d == NULL) {
        free(d);
        return hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory", f->path);
    }
    const unsigned char *src = buf;
    uint64_t pos = 0, run_pos = 0;
    size_t j = 0, r = 0;
    for (int p = 0; p < plan.hcdp.nparts; p++) {
        const hcdp_part *part = &plan.hcdp.part[p];
        const hcdp_candidate *c = &plan.input.cand[part->cand];
        for (uint64_t done = 0; done < part->len; j++) {
            uint64_t n = part->len - done < f->opts.piece_size ? part->len - done : f->opts.piece_size;
            if (n > runs[r].len - run_pos)
                n = runs[r].len - run_pos;
            d[j] = (piece_desc) {src + pos, (uint32_t) n, c->codec, c->level, c->filter, part->tier,
                                 runs[r].off + run_pos, p == 0};
            done += n;
            pos += n;
            if ((run_pos += n) == runs[r].len && r + 1 < nruns) {
                r++;
                run_pos = 0;
            }
        }
    }
    npieces = j;
    for (j = 0; j < npieces; j++)   /* the tiers' load, as the monitor reports it */
        hcomp_monitor_queue(f->tw[d[j].tier].mon, d[j].len);
    double t_enc = hcomp_now();

    /* 5: store each piece as soon as it is encoded (the task's blocks: one element type) */
    uint32_t block_size = hcomp_file_block_size(f);
    uint32_t block_size_bs = block_size ? hcomp_engine_block_size_bs(&f->eng, plan.feat.dtype) : 0;
    f->batch.len = 0;
    rc = HCOMP_OK;
    double t_wait = 0;
    for (size_t w0 = 0; w0 < npieces; w0 += window) {
        size_t njobs = npieces - w0 < window ? npieces - w0 : window;
        for (size_t k = 0; k < njobs; k++) {
            hcomp_job *job = &jobs[k];      /* keeps its buffers from earlier windows */
            job->src = d[w0 + k].src;
            job->len = d[w0 + k].len;
            job->codec = d[w0 + k].codec;
            job->level = d[w0 + k].level;
            job->filter = d[w0 + k].filter;
            job->decode = 0;
            job->block_size = block_size;
            job->block_size_bs = block_size_bs;
            /* a trial costs the piece nothing: the other ways are encoded too, the
             * smallest kept, all observed */
            job->nalt = d[w0 + k].alts ? plan.nalt : 0;
            for (int i = 0; i < job->nalt; i++) {
                const hcdp_candidate *a = &plan.input.cand[plan.alt[i]];
                job->alt_codec[i] = a->codec;
                job->alt_level[i] = a->level;
                job->alt_filter[i] = a->filter;
            }
        }
        hcomp_jobs_start(jobs, njobs, f->opts.threads);
        for (size_t k = 0; k < njobs; k++) {
            double w1 = hcomp_now();
            hcomp_jobs_wait(jobs, njobs, k);
            t_wait += hcomp_now() - w1;
            hcomp_job *job = &jobs[k];
            int t = d[w0 + k].tier;
            hcomp_monitor_queue(f->tw[t].mon, -(int64_t) job->len);
            f->stats.t_compression += job->seconds;
            for (int i = 0; i < job->nalt; i++)
                f->stats.t_compression += job->other_seconds[i];
            if (rc != HCOMP_OK)
                continue;       /* drain the queue before returning the error */
            if (job->rc != HCOMP_OK) {
                rc = hcomp_fail(err, job->rc, "%s: compressing %u bytes with %s failed", f->path,
                                (unsigned) job->len, hcomp_codec_by_id(job->codec)->name);
                continue;
            }
            uint64_t need = HCOMP_PIECE_HEADER_SIZE + (uint64_t) job->stored;
            int fits = !f->tw[t].full &&
                (f->tw[t].budget >= need ||
                 (!tier_exhausted(&f->tw[t]) &&
                  hcomp_tier_reserve(&f->tw[t], &f->cfg.tier[t], f->sharers, need - f->tw[t].budget, err) == HCOMP_OK &&
                  f->tw[t].budget >= need));
            int r = fits ? store(f, t, d[w0 + k].start, job->len, job, err) : HCOMP_E_NOSPC;
            if (r == HCOMP_E_NOSPC)
                r = store_spilling(f, t, d[w0 + k].start, job, err);
            rc = r;
        }
        /* the window's measured costs go to the predictor once its pieces are stored, not
         * between them: the compression threads are idle then, so the feedback neither
         * competes with them for the cores nor delays the next piece's I/O */
        for (size_t k = 0; k < njobs; k++) {
            if (jobs[k].rc != HCOMP_OK)
                continue;
            hcomp_engine_feedback(&f->eng, &plan, &jobs[k]);
            for (int i = 0; i < jobs[k].nalt; i++) {
                if (jobs[k].other_coded[i] == 0)
                    continue;
                hcomp_job other = jobs[k];
                other.codec = jobs[k].other_codec[i];
                other.level = jobs[k].other_level[i];
                other.filter = jobs[k].other_filter[i];
                other.coded = jobs[k].other_coded[i];
                other.seconds = jobs[k].other_seconds[i];
                hcomp_engine_feedback(&f->eng, &plan, &other);
            }
        }
        if (rc != HCOMP_OK) {   /* the pieces of later windows were never queued for I/O */
            for (size_t k = w0 + njobs; k < npieces; k++)
                hcomp_monitor_queue(f->tw[d[k].tier].mon, -(int64_t) d[k].len);
            break;
        }
    }
    free(d);
    uint32_t *overwritten = NULL;
    size_t noverwritten = 0;
    if (rc == HCOMP_OK && collect_overwritten(f, runs, nruns, &overwritten, &noverwritten) != 0)
        noverwritten = 0;       /* out of memory: the space waits for the close */
    /* atomic mode: the pieces reach the file system before the record that names them,
     * since another node reads them as soon as it reads the record (write-behind caches
     * could send the record first) */
    for (int t = 0; rc == HCOMP_OK && f->atomic && t < f->cfg.ntiers; t++)
        if (f->tw[t].ready && f->tw[t].seg_fd >= 0 && fdatasync(f->tw[t].seg_fd) != 0)
            rc = hcomp_fail_errno(err, errno, "%s: sync of segment %s/%s", f->path, f->tw[t].dir,
                                  f->tw[t].seg_name);
    if (rc == HCOMP_OK)
        rc = hcomp_log_append(f, &f->batch, err);
    if (rc != HCOMP_OK)
        keep_segments_named(f);
    else
        hcomp_overwritten_punch(f, overwritten, noverwritten);
    free(overwritten);
    double t_end = hcomp_now();
    f->stats.tasks++;
    f->stats.bytes_in += len;
    f->stats.t_io += (t_end - t_enc) - t_wait;
    f->stats.t_write += t_end - t_start;
    return rc;
}
