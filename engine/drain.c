/* Draining node-local tiers at close (hcomp_drain=close): every live piece this
 * opener stored on a node-local tier is copied, as stored (header and payload), to
 * the first shared tier with room; one append records all the moves (RELOCATE);
 * then the node-local segments are removed. A reader that read the old place
 * before the removal got the right bytes; one that comes after replays the moves
 * first (and retries once if it raced with the removal). */
#include "file_internal.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

static int segment_index(const hcomp_file *f, uint64_t id)
{
    for (size_t i = 0; i < f->nsegs; i++)
        if (f->segs[i].id == id)
            return (int) i;
    return -1;
}

/* Copy one piece (header and payload as stored) to a shared tier. */
static int move_piece(hcomp_file *f, int first_shared, int src_fd, const char *src_path,
                      const hcomp_piece *p, uint64_t seg_id, unsigned char **buf, size_t *cap,
                      hcomp_error *err)
{
    size_t total = HCOMP_PIECE_HEADER_SIZE + (size_t) p->stored_len;
    if (hcomp_grow(buf, cap, total) != 0)
        return hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory draining", f->path);
    long long got = hcomp_pread_full(src_fd, *buf, total, p->seg_off);
    if (got != (long long) total)
        return hcomp_fail(err, HCOMP_E_IO, "%s: draining: cannot read the piece at %llu of %s",
                          f->path, (unsigned long long) p->seg_off, src_path);
    for (;;) {
        int rc, t = hcomp_first_fit(f, first_shared, total, err, &rc);
        if (rc != HCOMP_OK)
            return rc;
        if (t < 0)
            return hcomp_fail(err, HCOMP_E_NOSPC, "%s: draining: no shared tier has room for a "
                              "%zu-byte piece; the data stays on the node-local tier in %s",
                              f->path, total, src_path);
        if (f->cfg.tier[t].node_local) {
            first_shared = t + 1;
            continue;
        }
        struct iovec iov = {*buf, total};
        uint64_t new_off;
        rc = hcomp_segment_append(f, t, &iov, 1, &new_off, err);
        if (rc == HCOMP_E_NOSPC)
            continue;           /* that tier is marked full now */
        if (rc != HCOMP_OK)
            return rc;
        if (hcomp_map_encode_relocate(&f->batch, seg_id, p->seg_off, f->tw[t].seg_id, new_off) != 0)
            return hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory", f->path);
        return HCOMP_OK;
    }
}

int hcomp_drain_node_local(hcomp_file *f, hcomp_error *err)
{
    int first_shared = -1;
    for (int t = 0; t < f->cfg.ntiers && first_shared < 0; t++)
        if (!f->cfg.tier[t].node_local)
            first_shared = t;
    int any = 0;
    for (int t = 0; t < f->cfg.ntiers; t++)
        any |= f->cfg.tier[t].node_local && f->tw[t].ready && f->tw[t].seg_fd >= 0;
    if (first_shared < 0 || !any)
        return HCOMP_OK;        /* nothing to move, or nowhere to move it */
    int rc = hcomp_log_refresh(f, err);
    if (rc != HCOMP_OK)
        return rc;
    unsigned char *live = calloc(f->npieces ? f->npieces : 1, 1);
    if (live == NULL)
        return hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory draining", f->path);
    for (size_t i = 0; i < f->map.n; i++)
        live[f->map.v[i].piece] = 1;
    unsigned char *buf = NULL;
    size_t cap = 0;
    f->batch.len = 0;
    for (int t = 0; t < f->cfg.ntiers && rc == HCOMP_OK; t++) {
        hcomp_tier_writer *w = &f->tw[t];
        if (!f->cfg.tier[t].node_local || !w->ready || w->seg_fd < 0)
            continue;
        int s = segment_index(f, w->seg_id);
        if (s < 0 || f->segs[s].path == NULL)
            continue;
        int fd = open(f->segs[s].path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
            rc = hcomp_fail_errno(err, errno, "%s: draining: opening %s", f->path, f->segs[s].path);
            break;
        }
        for (size_t i = 0; i < f->npieces && rc == HCOMP_OK; i++)
            if (f->pieces[i].seg == (uint32_t) s && live[i])
                rc = move_piece(f, first_shared, fd, f->segs[s].path, &f->pieces[i], w->seg_id,
                                &buf, &cap, err);
        close(fd);
    }
    free(buf);
    free(live);
    if (rc == HCOMP_OK)
        rc = hcomp_log_append(f, &f->batch, err);
    if (rc != HCOMP_OK)
        return rc;              /* nothing recorded: the node-local copies stay valid */
    /* every live piece has a shared copy now: free the node-local tier */
    for (int t = 0; t < f->cfg.ntiers; t++) {
        hcomp_tier_writer *w = &f->tw[t];
        if (!f->cfg.tier[t].node_local || !w->ready || w->seg_fd < 0)
            continue;
        char path[PATH_MAX];
        snprintf(path, sizeof(path), "%s/%s", w->dir, w->seg_name);
        close(w->seg_fd);
        w->seg_fd = -1;
        unlink(path);
        rmdir(w->dir);          /* fails, harmlessly, while other openers' segments remain */
    }
    return hcomp_log_refresh(f, err);
}
