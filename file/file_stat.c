/* Where a file's live bytes are: per tier, per codec and per block size. */
#include "file_internal.h"
#include "common/util.h"
#include "tools.h"
#include "tiers/piece_header.h"

_Static_assert(HCOMP_STATS_FRAMES == HCOMP_FRAME_MAX + 1, "a stats slot for every framing");

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t tier_slot(hcomp_stats *st, const hcomp_segment *s)
{
    char dir[PATH_MAX] = "";
    if (s->path) {
        snprintf(dir, sizeof(dir), "%s", s->path);
        for (int k = 0; k < 2; k++) {        /* <tier dir>/<segment dir>/<segment> */
            char *slash = strrchr(dir, '/');
            if (slash)
                *slash = '\0';
        }
    }
    for (size_t i = 0; i < st->ntiers; i++)
        if (strcmp(st->tier[i].name, s->tier) == 0 && strcmp(st->tier[i].dir, dir) == 0)
            return i;
    if (st->ntiers == HCOMP_STATS_MAX_TIERS)
        return HCOMP_STATS_MAX_TIERS - 1;
    size_t i = st->ntiers++;
    snprintf(st->tier[i].name, sizeof(st->tier[i].name), "%s", s->tier);
    snprintf(st->tier[i].dir, sizeof(st->tier[i].dir), "%s", dir);
    return i;
}

int hcomp_stat_path(const char *path, hcomp_stats *st, hcomp_error *err)
{
    return hcomp_stat_path_frames(path, st, NULL, err);
}

int hcomp_stat_path_frames(const char *path, hcomp_stats *st,
                           hcomp_frame_stats frames[HCOMP_STATS_FRAMES], hcomp_error *err)
{
    memset(st, 0, sizeof(*st));
    hcomp_frame_stats ignored[HCOMP_STATS_FRAMES];
    if (frames == NULL)
        frames = ignored;
    memset(frames, 0, sizeof(ignored));
    hcomp_file *f;
    int rc = hcomp_file_open_replay(path, &f, err);
    if (rc != HCOMP_OK)
        return rc;
    unsigned char *counted = calloc(f->npieces ? f->npieces : 1, 1);
    if (counted == NULL) {
        hcomp_file_close(f, NULL);
        return hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory", path);
    }
    st->logical_size = f->size;
    for (size_t i = 0; i < f->map.n; i++) {
        const hcomp_extent *e = &f->map.v[i];
        const hcomp_piece *p = &f->pieces[e->piece];
        size_t t = tier_slot(st, &f->segs[p->seg]);
        st->live_bytes += e->len;
        st->tier[t].raw_bytes += e->len;
        st->codec[p->codec].raw_bytes += e->len;
        frames[p->frame].raw_bytes += e->len;
        if (!counted[e->piece]) {
            uint64_t stored = HCOMP_PIECE_HEADER_SIZE + (uint64_t) p->stored_len;
            counted[e->piece] = 1;
            st->pieces++;
            st->stored_bytes += stored;
            st->tier[t].pieces++;
            st->tier[t].stored_bytes += stored;
            st->codec[p->codec].pieces++;
            st->codec[p->codec].stored_bytes += stored;
            frames[p->frame].pieces++;
            frames[p->frame].stored_bytes += stored;
        }
    }
    free(counted);
    return hcomp_file_close(f, err);
}
