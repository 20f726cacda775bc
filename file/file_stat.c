/* Where a file's live bytes are: per tier, per codec and per block size. */
#include "file_internal.h"
#include "common/util.h"
#include "tools.h"
#include "tiers/piece_header.h"

_Static_assert(HCOMP_STATS_FRAMES == HCOMP_FRAME_MAX + 1, "a stats slot for every framing");

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

/* add the STATS records among the records of buf[from, len) to *sum */
static void add_records(const unsigned char *buf, size_t len, size_t from, hcomp_file_stats *sum,
                        uint64_t *records)
{
    size_t pos = from;
    uint64_t skipped = 0;
    hcomp_map_record rec;
    int r;
    while (pos < len && (r = hcomp_map_next(buf, len, &pos, &rec, &skipped)) != HCOMP_MAP_INCOMPLETE) {
        hcomp_file_stats one;
        if (r == HCOMP_MAP_RECORD && rec.type == HCOMP_REC_STATS &&
            hcomp_stats_from_json(rec.u.stats.json, rec.u.stats.len, &one, NULL, NULL) == 0) {
            hcomp_stats_add_recorded(sum, &one);
            (*records)++;
        }
    }
}

int hcomp_file_facts_path(const char *path, hcomp_file_facts *facts, hcomp_error *err)
{
    memset(facts, 0, sizeof(*facts));
    hcomp_file *f;
    int rc = hcomp_file_open_replay(path, &f, err);
    if (rc != HCOMP_OK)
        return rc;
    struct stat st;
    unsigned char *buf = NULL;
    if (fstat(f->map_fd, &st) != 0)
        rc = hcomp_fail(err, HCOMP_E_IO, "%s: %s", path, strerror(errno));
    else if (st.st_size > HCOMP_MAP_HEADER_SIZE &&
             (buf = malloc((size_t) st.st_size)) == NULL)
        rc = hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory", path);
    else if (buf && hcomp_pread_full(f->map_fd, buf, (size_t) st.st_size, 0) != st.st_size)
        rc = hcomp_fail(err, HCOMP_E_IO, "%s: reading the mapping file: %s", path,
                        strerror(errno));
    if (rc == HCOMP_OK) {
        facts->version = f->hdr.version;
        snprintf(facts->id, sizeof(facts->id), "%s", f->id_hex);
        facts->created_ns = f->hdr.created_ns;
        facts->map_bytes = (uint64_t) st.st_size;
        facts->segments = f->nsegs;
        facts->pieces = f->npieces;
        facts->damaged_bytes = f->skipped;
        if (buf)
            add_records(buf, (size_t) st.st_size, HCOMP_MAP_HEADER_SIZE, &facts->recorded,
                        &facts->stats_records);
        /* format 3: the writers' own logs, replayed by the open */
        add_records(f->wstats.p, f->wstats.len, 0, &facts->recorded, &facts->stats_records);
    }
    free(buf);
    int crc = hcomp_file_close(f, rc == HCOMP_OK ? err : NULL);
    return rc == HCOMP_OK ? crc : rc;
}

_Static_assert(HCOMP_CODEC_COUNT <= HCOMP_STATS_MAX_CODECS,
               "hcomp_stats has a slot for every codec (raise the capacity at the struct's end)");

int hcomp_stat_path_sized(const char *path, hcomp_stats *st, size_t st_size, hcomp_error *err)
{
    if (st == NULL || st_size < sizeof(size_t))
        return hcomp_fail(err, HCOMP_E_INVAL, "hcomp_stat_path: a struct of %zu bytes cannot "
                          "hold the statistics (at least %zu)", st_size, sizeof(size_t));
    /* filled whole here, then as much of it as the caller's build knows copied out: a
     * caller built against an older, smaller hcomp_stats gets its prefix, one built
     * against a newer one zeros where this library has nothing */
    hcomp_stats *all = malloc(sizeof(*all));
    if (all == NULL)
        return hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory", path);
    int rc = hcomp_stat_path_frames(path, all, NULL, err);
    size_t n = st_size < sizeof(*all) ? st_size : sizeof(*all);
    all->size = n;
    memcpy(st, all, n);
    if (st_size > n)
        memset((char *) st + n, 0, st_size - n);
    free(all);
    return rc;
}

int hcomp_stat_path_frames(const char *path, hcomp_stats *st,
                           hcomp_frame_stats frames[HCOMP_STATS_FRAMES], hcomp_error *err)
{
    memset(st, 0, sizeof(*st));
    st->size = sizeof(*st);
    st->ncodecs = HCOMP_CODEC_COUNT;
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
