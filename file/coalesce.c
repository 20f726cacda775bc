/* Runs of small pieces written again as whole pieces by the last opener to close
 * (hcomp_reclaim auto or close). With hcomp_write_buffer=0, the default that parallel
 * HDF5's visibility needs, every independent write is its own piece: a file written in
 * 8-byte or 1 KiB writes (IOR -t 8, -t 1k) keeps a header, a block table and a mapping
 * record per write, stores more than its data and reads each piece on its own, for good.
 * Written again through the write path (the engine chooses, the new records win over the
 * old), the old pieces become dead and reclaiming drops them.
 *
 * Nothing is lost at any point: the new pieces hold the bytes the old ones do, so a crash
 * leaves either or both live; the old ones are not punched out as the writes go (as
 * overwritten pieces otherwise are), and the new ones are synced (hcomp_sync) and drained
 * off node-local tiers before reclaiming may drop the old. */
#include "file_internal.h"
#include "common/clock.h"
#include "common/util.h"

#include <stdlib.h>
#include <string.h>

#define COALESCE_SMALL 4096u       /* a piece of fewer logical bytes is small: its header,
                                       table and record weigh on it (a 4 KiB piece's 1-2%) */
#define COALESCE_MIN_RUN 16         /* neighbouring extents of small pieces worth a rewrite */
#define COALESCE_CHUNK (16u << 20)  /* logical bytes read and written again at a time */

typedef struct run {
    uint64_t off, len;
    uint64_t extents;
} run;

/* The runs of at least COALESCE_MIN_RUN extents of small pieces this process can read and
 * change, each extent starting where the one before ends (holes end a run). *out is
 * malloc'd. */
static int find_runs(const hcomp_file *f, run **out, size_t *nout)
{
    run *v = NULL, cur = {0, 0, 0};
    size_t n = 0, cap = 0;
    for (size_t i = 0; i <= f->map.n; i++) {
        const hcomp_extent *e = i < f->map.n ? &f->map.v[i] : NULL;
        int small = e != NULL && e->piece < f->npieces &&
                    f->pieces[e->piece].raw_len < COALESCE_SMALL &&
                    hcomp_segment_reachable(f, &f->segs[f->pieces[e->piece].seg]);
        if (small && cur.extents > 0 && e->off == cur.off + cur.len) {
            cur.len += e->len;
            cur.extents++;
            continue;
        }
        if (cur.extents >= COALESCE_MIN_RUN) {
            if (n == cap) {
                size_t nc = cap ? 2 * cap : 16;
                run *nv = realloc(v, nc * sizeof(*v));
                if (nv == NULL) {
                    free(v);
                    return HCOMP_E_NOMEM;
                }
                v = nv;
                cap = nc;
            }
            v[n++] = cur;
        }
        cur = small ? (run){e->off, e->len, 1} : (run){0, 0, 0};
    }
    *out = v;
    *nout = n;
    return HCOMP_OK;
}

static int coalesce(hcomp_file *f, uint64_t *pieces, uint64_t *bytes, hcomp_error *err)
{
    int rc = hcomp_log_refresh(f, err);
    if (rc != HCOMP_OK)
        return rc;
    if (f->skipped || f->lost_records)     /* a damaged log: only fsck may decide */
        return HCOMP_OK;
    run *runs;
    size_t nruns;
    if ((rc = find_runs(f, &runs, &nruns)) != HCOMP_OK)
        return hcomp_fail(err, rc, "%s: out of memory", f->path);
    if (nruns == 0)
        return HCOMP_OK;
    unsigned char *buf = malloc(COALESCE_CHUNK);
    if (buf == NULL) {
        free(runs);
        return hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory", f->path);
    }
    int reclaim = f->opts.reclaim;
    f->opts.reclaim = HCOMP_RECLAIM_NEVER;     /* keep the old pieces until the new are synced */
    for (size_t r = 0; r < nruns && rc == HCOMP_OK; r++) {
        for (uint64_t at = 0; at < runs[r].len && rc == HCOMP_OK;) {
            uint64_t want = runs[r].len - at < COALESCE_CHUNK ? runs[r].len - at : COALESCE_CHUNK;
            uint64_t got = 0;
            rc = hcomp_file_pread_locked(f, buf, want, runs[r].off + at, &got, err);
            if (rc == HCOMP_OK && got != want)
                rc = hcomp_fail(err, HCOMP_E_CORRUPT, "%s: %llu bytes at %llu read back short "
                                "(%llu) while writing small pieces again", f->path,
                                (unsigned long long) want,
                                (unsigned long long) (runs[r].off + at), (unsigned long long) got);
            if (rc == HCOMP_OK)
                rc = hcomp_file_pwrite_locked(f, buf, want, runs[r].off + at, err);
            at += want;
        }
        if (rc == HCOMP_OK) {
            *pieces += runs[r].extents;
            *bytes += runs[r].len;
        }
    }
    f->opts.reclaim = reclaim;
    free(buf);
    free(runs);
    if (*bytes > 0 && f->opts.drain) {
        int drc = hcomp_drain_node_local(f, rc == HCOMP_OK ? err : NULL);
        if (rc == HCOMP_OK)
            rc = drc;
    }
    if (*bytes > 0) {
        int src = hcomp_file_sync_locked(f, rc == HCOMP_OK ? err : NULL);
        if (rc == HCOMP_OK)
            rc = src;
    }
    return rc;
}

int hcomp_coalesce_small(hcomp_file *f, uint64_t *pieces, uint64_t *bytes, hcomp_error *err)
{
    *pieces = *bytes = 0;
    /* the rewrite's tasks are no writes of the program's: its statistics stay as they were
     * (and a close appends no STATS record for them after a compaction's new log) */
    hcomp_file_stats before = f->stats;
    int rc = coalesce(f, pieces, bytes, err);
    f->stats = before;
    return rc;
}
