/* Rebuilding a mapping file whose header is damaged or that is gone. Its records,
 * where they survive, are kept as they are (they hold the order of writes and the
 * sizes set). Otherwise the pieces say where they belong (the 16-byte piece header
 * holds the logical offset; every piece backs one contiguous range): each piece in
 * the file's segment directories is read, decoded to verify it, and recorded again.
 * Segments are replayed oldest first (by modification time), so where pieces of
 * several segments overlap, the newest segment wins; fsck says how many bytes that
 * decided. Sizes set by truncation or preallocation are not in the pieces and are lost. */
#include "fsck_internal.h"
#include "engine/filter.h"
#include "engine/framing.h"
#include "options.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct seg_file {
    char path[PATH_MAX];
    uint64_t id;
    struct timespec mtime;
    uint64_t size;
    const hcomp_tier *tier;    /* the configured tier it is on, or NULL */
} seg_file;

typedef struct rebuild {
    const char *path;
    char base[72];             /* the file's name as segment directories carry it */
    hcomp_tier_config cfg;
    char hex[17];              /* the file id's first 8 bytes, as in directory names */
    char (*hexes)[17];
    size_t nhexes;
    seg_file *segs;
    size_t nsegs, capsegs;
} rebuild;

/* If name is "<hidden><base>.<16 hex>.hcd", copy the hex to hex. */
static int match_dir_name(const rebuild *rb, const char *name, int hidden, char hex[17])
{
    size_t bl = strlen(rb->base), off = hidden ? 1 : 0;
    if (hidden && name[0] != '.')
        return 0;
    if (strlen(name) != off + bl + 1 + 16 + 4 || strncmp(name + off, rb->base, bl) != 0 ||
        name[off + bl] != '.' || strcmp(name + off + bl + 17, ".hcd") != 0 ||
        !hcomp_is_hex16(name + off + bl + 1))
        return 0;
    memcpy(hex, name + off + bl + 1, 16);
    hex[16] = '\0';
    return 1;
}

static int add_hex(rebuild *rb, const char *hex)
{
    for (size_t i = 0; i < rb->nhexes; i++)
        if (strcmp(rb->hexes[i], hex) == 0)
            return 0;
    char (*h)[17] = realloc(rb->hexes, (rb->nhexes + 1) * sizeof(*h));
    if (h == NULL)
        return -1;
    rb->hexes = h;
    memcpy(rb->hexes[rb->nhexes++], hex, 17);
    return 0;
}

static int add_segment_file(rebuild *rb, const char *dir, const char *name, const hcomp_tier *t)
{
    size_t l = strlen(name);
    if (l != 20 || strcmp(name + 16, ".seg") != 0 || !hcomp_is_hex16(name))
        return 0;
    char p[PATH_MAX];
    if (snprintf(p, sizeof(p), "%s/%s", dir, name) >= (int) sizeof(p))
        return 0;
    for (size_t i = 0; i < rb->nsegs; i++)
        if (strcmp(rb->segs[i].path, p) == 0)
            return 0;           /* a tier listed twice */
    struct stat st;
    if (lstat(p, &st) != 0 || !S_ISREG(st.st_mode))
        return 0;               /* never follow a planted link */
    if (rb->nsegs == rb->capsegs) {
        size_t cap = rb->capsegs ? 2 * rb->capsegs : 16;
        seg_file *s = realloc(rb->segs, cap * sizeof(*s));
        if (s == NULL)
            return -1;
        rb->segs = s;
        rb->capsegs = cap;
    }
    seg_file *s = &rb->segs[rb->nsegs++];
    snprintf(s->path, sizeof(s->path), "%s", p);
    s->id = strtoull(name, NULL, 16);
    s->mtime = st.st_mtim;
    s->size = (uint64_t) st.st_size;
    s->tier = t;
    return 0;
}

/* Walk the directories a segment directory of this file can be in. With want_hex
 * NULL, collect the ids found; else collect the segment files of that id. */
/* Whether a segment directory holds a segment file. */
static int holds_segments(const char *dir)
{
    DIR *s = opendir(dir);
    if (s == NULL)
        return 0;
    struct dirent *g;
    int found = 0;
    while (!found && (g = readdir(s)) != NULL) {
        size_t l = strlen(g->d_name);
        found = l > 4 && strcmp(g->d_name + l - 4, ".seg") == 0;
    }
    closedir(s);
    return found;
}

static int scan_tiers(rebuild *rb, const char *want_hex)
{
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof(tmp), "%s", rb->path);
    char filedir[PATH_MAX];
    snprintf(filedir, sizeof(filedir), "%s", dirname(tmp));
    for (int t = -1; t < rb->cfg.ntiers; t++) {
        const hcomp_tier *tier = t >= 0 ? &rb->cfg.tier[t] : NULL;
        char base[PATH_MAX];
        int hidden = tier == NULL || strcmp(tier->path, HCOMP_FILEDIR) == 0;
        if (tier == NULL)
            snprintf(base, sizeof(base), "%s", filedir);
        else if (hcomp_tier_base_dir(tier, rb->path, base, sizeof(base)) != 0)
            continue;
        if (tier == NULL)       /* the file's directory may be a configured tier: name it */
            for (int k = 0; k < rb->cfg.ntiers; k++)
                if (strcmp(rb->cfg.tier[k].path, HCOMP_FILEDIR) == 0)
                    tier = &rb->cfg.tier[k];
        DIR *d = opendir(base);
        if (d == NULL)
            continue;
        struct dirent *e;
        int rc = 0;
        while ((e = readdir(d)) != NULL && rc == 0) {
            char hex[17];
            if (!match_dir_name(rb, e->d_name, hidden, hex))
                continue;
            char dir[PATH_MAX];
            struct stat st;
            if (snprintf(dir, sizeof(dir), "%s/%s", base, e->d_name) >= (int) sizeof(dir) ||
                lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
                continue;
            if (want_hex == NULL) {
                if (holds_segments(dir))    /* a directory of writer logs alone holds no piece */
                    rc = add_hex(rb, hex);
                continue;
            }
            if (strcmp(hex, want_hex) != 0)
                continue;
            DIR *s = opendir(dir);
            if (s == NULL)
                continue;
            struct dirent *g;
            while ((g = readdir(s)) != NULL && rc == 0)
                rc = add_segment_file(rb, dir, g->d_name, tier);
            closedir(s);
        }
        closedir(d);
        if (rc != 0)
            return -1;
    }
    return 0;
}

static int by_mtime(const void *a, const void *b)
{
    const seg_file *x = a, *y = b;
    if (x->mtime.tv_sec != y->mtime.tv_sec)
        return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
    if (x->mtime.tv_nsec != y->mtime.tv_nsec)
        return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
    return strcmp(x->path, y->path);
}

/* Is there a valid piece at off? Reads and decodes it; fills h and crc. */
static int piece_at(int fd, uint64_t off, uint64_t size, hcomp_piece_header *h, uint32_t *crc,
                    unsigned *frame,
                    unsigned char **buf, size_t *cap, unsigned char **raw, size_t *rcap)
{
    unsigned char hb[HCOMP_PIECE_HEADER_SIZE];
    if (off + sizeof(hb) > size || hcomp_pread_full(fd, hb, sizeof(hb), off) != (long long) sizeof(hb)
        || hcomp_piece_header_decode(hb, h) != 0)
        return 0;
    const hcomp_codec *c = hcomp_codec_by_id(h->codec);
    /* a framed piece's table is checked whole by hcomp_frame_decode below */
    uint64_t most = c == NULL ? 0 : h->framed ? (uint64_t) HCOMP_PIECE_SIZE_MAX * 2 : c->bound(h->raw_len);
    if (c == NULL || !hcomp_filter_fits(h->filter, c) || h->raw_len == 0 ||
        h->stored_len > size - off - sizeof(hb) || h->raw_len > HCOMP_PIECE_SIZE_MAX ||
        h->stored_len > most || h->start + h->raw_len > HCOMP_PIECE_MAX_OFFSET + 1)
        return 0;
    if (hcomp_grow(buf, cap, h->stored_len ? h->stored_len : 1) != 0 ||
        hcomp_grow(raw, rcap, h->raw_len) != 0 ||
        hcomp_pread_full(fd, *buf, h->stored_len, off + sizeof(hb)) != (long long) h->stored_len)
        return 0;
    unsigned char *tmp = NULL;
    size_t tmp_cap = 0;
    int64_t bad;
    int rc = h->framed ? hcomp_frame_decode(c, h->filter, *buf, h->stored_len, h->raw_len, 0,
                                            *raw, &tmp, &tmp_cap, &bad, NULL)
                       : hcomp_filter_decode(c, h->filter, *buf, h->stored_len, *raw, h->raw_len,
                                             &tmp, &tmp_cap);
    free(tmp);
    if (rc != HCOMP_OK)
        return 0;
    *frame = 0;
    if (h->framed) {    /* checked: the table's block size is a valid one */
        uint32_t bs = hcomp_get_u32(*buf);
        *frame = hcomp_frame_of_block_size(bs);
        *crc = hcomp_crc32(*buf, hcomp_block_table_size(hcomp_frame_blocks(h->raw_len, bs)));
    } else {
        *crc = hcomp_crc32(*buf, h->stored_len);
    }
    return 1;
}

/* First non-zero byte at or after off (size if none): a drained piece's place may be
 * a punched hole. */
static uint64_t skip_zeros(int fd, uint64_t off, uint64_t size)
{
    unsigned char b[65536];
    while (off < size) {
        size_t n = size - off < sizeof(b) ? (size_t) (size - off) : sizeof(b);
        if (hcomp_pread_full(fd, b, n, off) != (long long) n)
            return size;
        for (size_t i = 0; i < n; i++)
            if (b[i])
                return off + i;
        off += n;
    }
    return size;
}

/* Bytes of [start, start+len) that pieces of other segments map already. */
static uint64_t overlap(const hcomp_extent_map *m, uint64_t start, uint64_t len, uint32_t seg)
{
    uint64_t n = 0, end = start + len;
    for (size_t i = hcomp_extent_map_find(m, start); i < m->n && m->v[i].off < end; i++) {
        if (m->v[i].piece == seg)
            continue;
        uint64_t a = m->v[i].off > start ? m->v[i].off : start;
        uint64_t b = m->v[i].off + m->v[i].len < end ? m->v[i].off + m->v[i].len : end;
        n += b > a ? b - a : 0;
    }
    return n;
}

/* Record every valid piece of every segment file. */
static int records_from_pieces(rebuild *rb, hcomp_bytes *recs, const hcomp_tool_io *io,
                               hcomp_fsck_result *res, hcomp_error *err)
{
    qsort(rb->segs, rb->nsegs, sizeof(*rb->segs), by_mtime);
    hcomp_extent_map m;
    hcomp_extent_map_init(&m);
    unsigned char *buf = NULL, *raw = NULL;
    size_t cap = 0, rcap = 0;
    uint64_t total = 0, done = 0;
    for (size_t i = 0; i < rb->nsegs; i++)
        total += rb->segs[i].size;
    int rc = HCOMP_OK;
    for (size_t i = 0; i < rb->nsegs && rc == HCOMP_OK; i++) {
        seg_file *s = &rb->segs[i];
        int fd = open(s->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
            hcomp_fsck_say(io, "DAMAGED: segment %s cannot be opened: %s", s->path, strerror(errno));
            res->lost_segment_bytes += s->size;
            continue;
        }
        int named = 0;
        uint64_t off = 0;
        while (off < s->size && rc == HCOMP_OK) {
            hcomp_piece_header h;
            uint32_t crc;
            unsigned frame;
            int ok = piece_at(fd, off, s->size, &h, &crc, &frame, &buf, &cap, &raw, &rcap);
            if (!ok) {
                uint64_t q = skip_zeros(fd, off, s->size);
                if (q == s->size)
                    break;              /* zeros to the end: nothing lost */
                /* a header begins with up to 7 zero bytes before its version byte */
                for (uint64_t p = q >= off + 7 ? q - 7 : off; p <= q && !ok; p++)
                    if ((ok = piece_at(fd, p, s->size, &h, &crc, &frame, &buf, &cap, &raw, &rcap)))
                        off = p;
                if (!ok) {
                    res->lost_segment_bytes += s->size - off;
                    hcomp_fsck_say(io, "DAMAGED: %s: the %llu bytes from offset %llu hold no valid "
                                   "piece and are not recovered", s->path,
                                   (unsigned long long) (s->size - off), (unsigned long long) off);
                    break;
                }
            }
            if (!named) {
                char dir[PATH_MAX];
                snprintf(dir, sizeof(dir), "%s", s->path);
                char *slash = strrchr(dir, '/');
                *slash = '\0';
                if (hcomp_map_encode_segment(recs, s->id, s->tier ? s->tier->name : "recovered",
                                             dir, slash + 1, hcomp_node_name(),
                                             s->tier && s->tier->node_local
                                                 ? HCOMP_SEGMENT_NODE_LOCAL : 0) != 0)
                    rc = hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory", rb->path);
                named = 1;
                res->records++;
            }
            hcomp_map_extent e = {h.start, h.raw_len, 0};
            res->overlap_bytes += overlap(&m, h.start, h.raw_len, (uint32_t) i);
            hcomp_extent x = {h.start, h.raw_len, (uint32_t) i, 0};
            if (rc == HCOMP_OK &&
                (hcomp_map_encode_piece(recs, s->id, off, h.stored_len, h.raw_len, crc, h.codec,
                                        h.filter, HCOMP_MAP_LEVEL_UNKNOWN, frame, &e, 1) != 0 ||
                 hcomp_extent_map_insert(&m, &x) != 0))
                rc = hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory", rb->path);
            res->found_pieces++;
            res->records++;
            if (h.start + h.raw_len > res->logical_size)
                res->logical_size = h.start + h.raw_len;
            off += HCOMP_PIECE_HEADER_SIZE + (uint64_t) h.stored_len;
            if (io && io->progress)
                io->progress(io->ctx, "rebuild", done + off, total);
        }
        done += s->size;
        close(fd);
    }
    hcomp_extent_map_free(&m);
    free(buf);
    free(raw);
    return rc;
}

static void new_header(rebuild *rb, const unsigned char *old, size_t old_len,
                       unsigned char out[HCOMP_MAP_HEADER_SIZE])
{
    hcomp_map_header h;
    memset(&h, 0, sizeof(h));
    h.version = HCOMP_MAP_VERSION;
    /* a generation no writer log left beside it has: the rebuilt log holds every piece
     * whose header is found, and stale logs would name places this rebuild dropped */
    hcomp_random_bytes(&h.log_gen, sizeof(h.log_gen));
    if (old_len >= 32)          /* keep what is left of the old id */
        memcpy(h.file_id, old + 16, 16);
    else
        hcomp_random_bytes(h.file_id, sizeof(h.file_id));
    for (int i = 0; i < 8; i++) {   /* the part segment directory names carry */
        char b[3] = {rb->hex[2 * i], rb->hex[2 * i + 1], 0};
        h.file_id[i] = (uint8_t) strtoul(b, NULL, 16);
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    h.created_ns = (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
    hcomp_map_header_encode(&h, out);
}

/* Which file id: the old header's if its directories exist, else the only one found. */
static int choose_id(rebuild *rb, const unsigned char *old, size_t old_len, hcomp_error *err)
{
    if (scan_tiers(rb, NULL) != 0)
        return hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory", rb->path);
    if (old_len >= 32) {
        char hex[17];
        for (int i = 0; i < 8; i++)
            snprintf(hex + 2 * i, 3, "%02x", old[16 + i]);
        for (size_t i = 0; i < rb->nhexes; i++)
            if (strcmp(rb->hexes[i], hex) == 0) {
                memcpy(rb->hex, hex, 17);
                return HCOMP_OK;
            }
    }
    if (rb->nhexes == 1) {
        memcpy(rb->hex, rb->hexes[0], 17);
        return HCOMP_OK;
    }
    if (rb->nhexes == 0)
        return hcomp_fail(err, HCOMP_E_NOENT, "%s: nothing to rebuild it from: no segment "
                          "directory named %s.<id>.hcd on the tiers of %s or (hidden) beside it",
                          rb->path, rb->base, rb->cfg.source);
    char list[512] = "";
    for (size_t i = 0; i < rb->nhexes && strlen(list) < sizeof(list) - 20; i++)
        snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? ", " : "",
                 rb->hexes[i]);
    return hcomp_fail(err, HCOMP_E_INVAL, "%s: segment directories of %zu different files of this "
                      "name exist (ids %s); move those that are not this file's away and run "
                      "fsck again", rb->path, rb->nhexes, list);
}

int hcomp_fsck_rebuild(const char *path, const char *config, const unsigned char *old,
                       size_t old_len, mode_t mode, int repair, const hcomp_tool_io *io,
                       hcomp_fsck_result *res, hcomp_error *err)
{
    rebuild rb;
    memset(&rb, 0, sizeof(rb));
    rb.path = path;
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof(tmp), "%s", path);
    snprintf(rb.base, sizeof(rb.base), "%.64s", basename(tmp));
    int rc = hcomp_tier_config_load(config, &rb.cfg, err);
    /* what survives of the log after the header */
    hcomp_bytes recs = {0};
    int oom = 0;
    if (rc == HCOMP_OK && old_len > HCOMP_MAP_HEADER_SIZE)
        hcomp_fsck_scan_log(old, old_len, HCOMP_MAP_HEADER_SIZE, &recs, res, &oom);
    if (oom)
        rc = hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory", path);
    int salvage = rc == HCOMP_OK && res->records > 0;
    if (rc == HCOMP_OK) {
        rc = choose_id(&rb, old, old_len, err);
        if (rc != HCOMP_OK && old_len >= 8 && memcmp(old, HCOMP_MAP_MAGIC, 8) != 0 && !salvage)
            rc = hcomp_fail(err, HCOMP_E_NOTHCOMP, "%s is not an hcomp file (no hcomp header) and "
                            "no segment directories of an hcomp file of that name were found; "
                            "left alone", path);
        else if (rc == HCOMP_E_NOENT && salvage) {
            rc = HCOMP_OK;      /* the records name their segments by full path */
            for (int i = 0; i < 8; i++)
                snprintf(rb.hex + 2 * i, 3, "%02x", old[16 + i]);
        }
    }
    if (rc == HCOMP_OK && salvage) {
        hcomp_fsck_say(io, "the log after the damaged header is readable: %llu records kept",
                       (unsigned long long) res->records);
    } else if (rc == HCOMP_OK) {
        recs.len = 0;
        res->records = res->damaged_bytes = res->torn_bytes = 0;
        if (scan_tiers(&rb, rb.hex) != 0)
            rc = hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory", path);
        if (rc == HCOMP_OK)
            rc = records_from_pieces(&rb, &recs, io, res, err);
        if (rc == HCOMP_OK) {
            hcomp_fsck_say(io, "found %llu valid pieces in %zu segment files (id %s); logical size "
                           "from them: %llu bytes (a size set by MPI_File_set_size or "
                           "MPI_File_preallocate is not kept in pieces and is lost)",
                           (unsigned long long) res->found_pieces, rb.nsegs, rb.hex,
                           (unsigned long long) res->logical_size);
            if (res->overlap_bytes)
                hcomp_fsck_say(io, "note: %llu logical bytes are held by pieces of several segments;"
                               " the newest segment (by modification time) wins there, which is "
                               "right unless processes overwrote each other's data",
                               (unsigned long long) res->overlap_bytes);
        }
    }
    if (rc == HCOMP_OK && repair) {
        unsigned char hdr[HCOMP_MAP_HEADER_SIZE];
        new_header(&rb, old, old_len, hdr);
        if (old_len > 0)
            rc = hcomp_fsck_backup(path, old, old_len, mode, res, err);
        if (rc == HCOMP_OK)
            rc = hcomp_map_replace(path, hdr, &recs, mode, "hcomp-fsck", err);
        if (rc == HCOMP_OK) {
            res->rebuilt = 1;
            hcomp_fsck_say(io, "repaired: the mapping file was rebuilt%s%s",
                           res->backup[0] ? "; the damaged one is kept as " : "", res->backup);
        }
    } else if (rc == HCOMP_OK) {
        hcomp_fsck_say(io, "hcomp fsck --repair can rebuild the mapping file from this");
    }
    hcomp_bytes_free(&recs);
    free(rb.hexes);
    free(rb.segs);
    return rc;
}
