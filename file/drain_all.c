/* `hcomp drain`: every live piece above the last tier moves down to it, re-encoded for
 * it; then the segment files left without live data go. Each batch of moves is
 * recorded before anything is removed, so a failure or a crash leaves every piece
 * readable at its old or its new place. */
#include "file_internal.h"
#include "tools.h"
#include "common/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DRAIN_BATCH_BYTES (64u << 20)   /* record the moves at least this often */

static int on_dir(const hcomp_segment *s, const char *dir)
{
    size_t n = strlen(dir);
    return s->path && strncmp(s->path, dir, n) == 0 && s->path[n] == '/';
}

/* live[i]: piece i maps some logical bytes now */
static unsigned char *live_pieces(const hcomp_file *f)
{
    unsigned char *live = calloc(f->npieces ? f->npieces : 1, 1);
    if (live)
        for (size_t i = 0; i < f->map.n; i++)
            live[f->map.v[i].piece] = 1;
    return live;
}

static void remove_emptied_segments(hcomp_file *f, const char *dest, hcomp_drain_result *res)
{
    unsigned char *live = live_pieces(f);
    unsigned char *used = calloc(f->nsegs ? f->nsegs : 1, 1);
    if (live && used) {
        for (size_t i = 0; i < f->npieces; i++)
            if (live[i])
                used[f->pieces[i].seg] = 1;
        for (size_t s = 0; s < f->nsegs; s++) {
            hcomp_segment *g = &f->segs[s];
            if (used[s] || g->path == NULL || on_dir(g, dest))
                continue;
            if (g->fd >= 0) {
                close(g->fd);
                g->fd = -1;
            }
            if (unlink(g->path) == 0)
                res->segments_removed++;
            char dir[PATH_MAX];
            snprintf(dir, sizeof(dir), "%s", g->path);
            char *slash = strrchr(dir, '/');
            if (slash) {
                *slash = '\0';
                (void) rmdir(dir);      /* only once it is empty */
            }
        }
    }
    free(live);
    free(used);
}

static int drain_all_locked(hcomp_file *f, const hcomp_tool_io *io, hcomp_drain_result *res,
                            hcomp_error *err);

/* under the file's lock, so that the tool needs no view of the handle */
int hcomp_drain_all(hcomp_file *f, const hcomp_tool_io *io, hcomp_drain_result *res,
                    hcomp_error *err)
{
    pthread_mutex_lock(&f->lock);
    int rc = drain_all_locked(f, io, res, err);
    pthread_mutex_unlock(&f->lock);
    return rc;
}

static int drain_all_locked(hcomp_file *f, const hcomp_tool_io *io, hcomp_drain_result *res,
                            hcomp_error *err)
{
    memset(res, 0, sizeof(*res));
    hcomp_ok(err);
    snprintf(res->tier, sizeof(res->tier), "%s", f->cfg.tier[f->cfg.ntiers - 1].name);
    if (!f->writable)
        return hcomp_fail(err, HCOMP_E_RDONLY, "%s: opened read-only; draining needs write access",
                          f->path);
    int last = f->cfg.ntiers - 1;
    if (f->cfg.tier[last].node_local)
        return hcomp_fail(err, HCOMP_E_UNSUPPORTED, "%s: the last tier \"%s\" of %s is node-local; "
                          "draining needs a shared last tier", f->path, f->cfg.tier[last].name,
                          f->cfg.source);
    int rc = hcomp_tier_writer_prepare(&f->tw[last], &f->cfg.tier[last], f->path, f->id_hex, err);
    if (rc == HCOMP_OK)
        rc = hcomp_log_refresh(f, err);
    if (rc != HCOMP_OK)
        return rc;
    const char *dest = f->tw[last].dir;
    size_t npieces = f->npieces;    /* pieces the moves add are not moved again */
    unsigned char *live = live_pieces(f);
    if (live == NULL)
        return hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory", f->path);
    uint64_t total = 0, done = 0, unrecorded = 0;
    for (size_t i = 0; i < npieces; i++) {
        const hcomp_segment *g = &f->segs[f->pieces[i].seg];
        if (!live[i] || on_dir(g, dest))
            continue;
        if (g->node_local && strcmp(g->node, f->node) != 0) {
            /* only its node reads it: `hcomp drain` there moves it */
            live[i] = 0;
            res->elsewhere++;
            snprintf(res->elsewhere_node, sizeof(res->elsewhere_node), "%s", g->node);
            continue;
        }
        total += f->pieces[i].raw_len;
    }
    unsigned char *buf = NULL;
    size_t cap = 0;
    hcomp_job job;
    memset(&job, 0, sizeof(job));
    f->batch.len = 0;
    for (size_t i = 0; i < npieces && rc == HCOMP_OK; i++) {
        const hcomp_piece *p = &f->pieces[i];
        if (!live[i] || on_dir(&f->segs[p->seg], dest))
            continue;
        uint64_t before = HCOMP_PIECE_HEADER_SIZE + (uint64_t) p->stored_len;
        rc = hcomp_drain_move_piece(f, last, (uint32_t) i, f->segs[p->seg].id, &job, &buf, &cap,
                                    err);
        if (rc != HCOMP_OK)
            break;
        res->pieces++;
        res->stored_before += before;
        res->stored_after += HCOMP_PIECE_HEADER_SIZE + (uint64_t) job.stored;
        done += p->raw_len;
        unrecorded += p->raw_len;
        if (unrecorded >= DRAIN_BATCH_BYTES) {
            rc = hcomp_log_append(f, &f->batch, err);
            f->batch.len = 0;
            unrecorded = 0;
        }
        if (io && io->progress)
            io->progress(io->ctx, "drain", done, total);
    }
    free(buf);
    free(job.out);
    free(job.tmp);
    free(job.table);
    free(live);
    /* what moved is recorded even when a later piece failed: both copies are valid */
    hcomp_error aerr;
    int arc = hcomp_log_append(f, &f->batch, &aerr);
    f->batch.len = 0;
    if (arc != HCOMP_OK) {
        if (rc == HCOMP_OK)
            *err = aerr;
        return rc == HCOMP_OK ? arc : rc;
    }
    hcomp_error rerr;
    if (hcomp_log_refresh(f, &rerr) == HCOMP_OK && hcomp_file_sync_locked(f, &rerr) == HCOMP_OK)
        remove_emptied_segments(f, dest, res);  /* the moves are durable: old copies can go */
    return rc;
}
