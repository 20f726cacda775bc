/* The replayed state of a mapping log as bytes, for openers that share one replay
 * (issue 18: the ROMIO driver replays once and broadcasts, docs/SCALING.md).
 *
 * A process that replayed the log exports what the replay built: the segments, the
 * pieces, the extent map, the size, the damage it passed over, and the log offset all of
 * it stands for, with the mapping file's device, inode and file id. Another opener of the
 * same file imports it right after reading the header, then replays only the records
 * appended since (hcomp_log_refresh goes on from that offset): what it holds is what
 * its own replay of the whole log would have built. A state that is not for this mapping
 * file (another file, a log replaced by a compaction since), from another build of the
 * library, or damaged in transit is refused, and the opener replays the log itself.
 *
 * The bytes pass between processes of one job, built from one library: they are not a
 * file format and are never stored. Fields are written one by one (no struct padding
 * goes out). */
#include "file_internal.h"
#include "common/util.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define STATE_MAGIC "HCSTATE1"
#define NO_STRING UINT32_MAX

/* header: magic, two reserved words, dev, ino, file id, then the replay's counters */
#define HDR_BYTES (8 + 4 + 4 + 8 + 8 + 16 + 8 * 7)
#define PIECE_BYTES 37      /* seg 4, seg_off 8, stored 4, raw 4, crc 4, codec 1, filter 1,
                               level 2, frame 1, start 8 */
#define EXTENT_BYTES 24     /* off 8, len 8, piece 4, piece_off 4 */

static void put_piece(unsigned char *q, const hcomp_piece *p)
{
    hcomp_put_u32(q, p->seg);
    hcomp_put_u64(q + 4, p->seg_off);
    hcomp_put_u32(q + 12, p->stored_len);
    hcomp_put_u32(q + 16, p->raw_len);
    hcomp_put_u32(q + 20, p->crc);
    q[24] = p->codec;
    q[25] = p->filter;
    q[26] = (unsigned char) ((uint16_t) p->level & 0xff);
    q[27] = (unsigned char) ((uint16_t) p->level >> 8);
    q[28] = p->frame;
    hcomp_put_u64(q + 29, p->start);
}

static void get_piece(const unsigned char *q, hcomp_piece *p)
{
    p->seg = hcomp_get_u32(q);
    p->seg_off = hcomp_get_u64(q + 4);
    p->stored_len = hcomp_get_u32(q + 12);
    p->raw_len = hcomp_get_u32(q + 16);
    p->crc = hcomp_get_u32(q + 20);
    p->codec = q[24];
    p->filter = q[25];
    p->level = (int16_t) (uint16_t) (q[26] | (q[27] << 8));
    p->frame = q[28];
    p->start = hcomp_get_u64(q + 29);
    p->ord = 0;             /* the mapping file's own records */
}

static void put_extent(unsigned char *q, const hcomp_extent *e)
{
    hcomp_put_u64(q, e->off);
    hcomp_put_u64(q + 8, e->len);
    hcomp_put_u32(q + 16, e->piece);
    hcomp_put_u32(q + 20, e->piece_off);
}

static void get_extent(const unsigned char *q, hcomp_extent *e)
{
    e->off = hcomp_get_u64(q);
    e->len = hcomp_get_u64(q + 8);
    e->piece = hcomp_get_u32(q + 16);
    e->piece_off = hcomp_get_u32(q + 20);
}

static int put_string(hcomp_bytes *b, const char *s)
{
    uint32_t n = s ? (uint32_t) strlen(s) : NO_STRING;
    if (hcomp_bytes_reserve(b, 4 + (s ? n : 0)) != 0)
        return -1;
    hcomp_put_u32(b->p + b->len, n);
    b->len += 4;
    if (s) {
        memcpy(b->p + b->len, s, n);
        b->len += n;
    }
    return 0;
}

static int put_u64(hcomp_bytes *b, uint64_t v)
{
    if (hcomp_bytes_reserve(b, 8) != 0)
        return -1;
    hcomp_put_u64(b->p + b->len, v);
    b->len += 8;
    return 0;
}

int hcomp_log_state_export(const hcomp_file *f, hcomp_bytes *b)
{
    struct stat st;
    if (fstat(f->map_fd, &st) != 0)
        return -1;
    b->len = 0;
    if (hcomp_bytes_reserve(b, HDR_BYTES) != 0)
        return -1;
    unsigned char *h = b->p;
    memcpy(h, STATE_MAGIC, 8);
    /* a state built from writer logs (format 3) is not shared: their read positions and
     * the order of their records are not in it, so an importer refuses it (piece bytes 0)
     * and replays for itself; a log folded at the last close is shared as any other */
    int shared = f->nwlogs == 0 && f->norders <= 1;
    hcomp_put_u32(h + 8, shared ? PIECE_BYTES : 0);
    hcomp_put_u32(h + 12, EXTENT_BYTES);
    hcomp_put_u64(h + 16, (uint64_t) st.st_dev);
    hcomp_put_u64(h + 24, (uint64_t) st.st_ino);
    memcpy(h + 32, f->hdr.file_id, 16);
    const uint64_t counters[7] = {f->consumed, f->generation, f->skipped, f->lost_records,
                                  f->lost_at, f->tail_stats, f->size};
    for (int i = 0; i < 7; i++)
        hcomp_put_u64(h + 48 + 8 * i, counters[i]);
    b->len = HDR_BYTES;
    if (!shared) {                      /* the header alone is sent */
        if (hcomp_bytes_reserve(b, 4) != 0)
            return -1;
        hcomp_put_u32(b->p + b->len, hcomp_crc32(b->p, b->len));
        b->len += 4;
        return 0;
    }
    if (put_u64(b, f->nsegs) != 0)
        return -1;
    for (size_t i = 0; i < f->nsegs; i++) {
        const hcomp_segment *s = &f->segs[i];
        if (put_u64(b, s->id) != 0 || put_u64(b, (uint64_t) s->node_local) != 0 ||
            put_string(b, s->tier) != 0 || put_string(b, s->path) != 0 ||
            put_string(b, s->node) != 0)
            return -1;
    }
    if (put_u64(b, f->npieces) != 0 || hcomp_bytes_reserve(b, f->npieces * PIECE_BYTES) != 0)
        return -1;
    for (size_t i = 0; i < f->npieces; i++, b->len += PIECE_BYTES)
        put_piece(b->p + b->len, &f->pieces[i]);
    if (put_u64(b, f->map.n) != 0 || hcomp_bytes_reserve(b, f->map.n * EXTENT_BYTES + 4) != 0)
        return -1;
    for (size_t i = 0; i < f->map.n; i++, b->len += EXTENT_BYTES)
        put_extent(b->p + b->len, &f->map.v[i]);
    hcomp_put_u32(b->p + b->len, hcomp_crc32(b->p, b->len));
    b->len += 4;
    return 0;
}

/* A reader of the state's bytes that fails (and stays failed) past their end. */
typedef struct reader {
    const unsigned char *p;
    size_t len, at;
    int bad;
} reader;

static uint64_t get_u64(reader *r)
{
    if (r->bad || r->len - r->at < 8) {
        r->bad = 1;
        return 0;
    }
    r->at += 8;
    return hcomp_get_u64(r->p + r->at - 8);
}

static const void *get_raw(reader *r, uint64_t n)
{
    if (r->bad || r->len - r->at < n) {
        r->bad = 1;
        return NULL;
    }
    r->at += (size_t) n;
    return r->p + r->at - n;
}

static char *get_string(reader *r, int *absent)
{
    const unsigned char *q = get_raw(r, 4);
    if (q == NULL)
        return NULL;
    uint32_t n = hcomp_get_u32(q);
    *absent = n == NO_STRING;
    if (*absent)
        return NULL;
    const char *s = get_raw(r, n);
    char *out = s ? strndup(s, n) : NULL;
    if (s && out == NULL)
        r->bad = 1;
    return out;
}

int hcomp_log_state_import(hcomp_file *f, const unsigned char *p, size_t len)
{
    struct stat st;
    if (len < HDR_BYTES + 4 || memcmp(p, STATE_MAGIC, 8) != 0 ||
        hcomp_get_u32(p + 8) != PIECE_BYTES || hcomp_get_u32(p + 12) != EXTENT_BYTES ||
        hcomp_get_u32(p + len - 4) != hcomp_crc32(p, len - 4) || fstat(f->map_fd, &st) != 0 ||
        hcomp_get_u64(p + 16) != (uint64_t) st.st_dev || hcomp_get_u64(p + 24) != (uint64_t) st.st_ino ||
        memcmp(p + 32, f->hdr.file_id, 16) != 0)
        return -1;
    uint64_t c[7];
    for (int i = 0; i < 7; i++)
        c[i] = hcomp_get_u64(p + 48 + 8 * i);
    /* only into a handle that has replayed nothing, and for a log at least that long */
    if (f->consumed != HCOMP_MAP_HEADER_SIZE || f->nsegs || f->npieces || f->map.n ||
        c[0] < HCOMP_MAP_HEADER_SIZE || c[0] > (uint64_t) st.st_size)
        return -1;
    reader r = {p, len - 4, HDR_BYTES, 0};
    uint64_t nsegs = get_u64(&r);
    if (r.bad || nsegs > (r.len - r.at) / 28)   /* each at least 2*8 + 3*4 bytes */
        return -1;
    hcomp_segment *segs = calloc(nsegs ? nsegs : 1, sizeof(*segs));
    if (segs == NULL)
        return -1;
    size_t n = 0;
    for (; n < nsegs && !r.bad; n++) {
        hcomp_segment *s = &segs[n];
        int absent[3] = {0, 0, 0};
        s->id = get_u64(&r);
        s->node_local = (int) get_u64(&r);
        s->fd = -1;
        s->tier = get_string(&r, &absent[0]);
        s->path = get_string(&r, &absent[1]);
        s->node = get_string(&r, &absent[2]);
        if (!r.bad && (absent[0] || absent[2]))    /* only a path may be unknown */
            r.bad = 1;
    }
    uint64_t npieces = get_u64(&r);
    const unsigned char *pieces = r.bad || npieces > (r.len - r.at) / PIECE_BYTES ? NULL
                                  : get_raw(&r, npieces * PIECE_BYTES);
    uint64_t nmap = get_u64(&r);
    const unsigned char *map = r.bad || nmap > (r.len - r.at) / EXTENT_BYTES ? NULL
                               : get_raw(&r, nmap * EXTENT_BYTES);
    hcomp_piece *pv = pieces ? malloc(npieces ? npieces * sizeof(hcomp_piece) : 1) : NULL;
    hcomp_extent *mv = map ? malloc(nmap ? nmap * sizeof(hcomp_extent) : 1) : NULL;
    int ok = !r.bad && r.at == r.len && pieces && map && pv && mv;
    /* what a replay guarantees, the reads rely on: indexes in range, framings of 4 bits,
     * extents inside their pieces, in order, none empty */
    for (uint64_t i = 0; ok && i < npieces; i++) {
        get_piece(pieces + i * PIECE_BYTES, &pv[i]);
        ok = pv[i].seg < nsegs && pv[i].frame <= 15;
    }
    for (uint64_t i = 0; ok && i < nmap; i++) {
        get_extent(map + i * EXTENT_BYTES, &mv[i]);
        ok = mv[i].piece < npieces && mv[i].len > 0 && mv[i].off <= UINT64_MAX - mv[i].len &&
             (uint64_t) mv[i].piece_off + mv[i].len <= pv[mv[i].piece].raw_len &&
             (i == 0 || mv[i].off >= mv[i - 1].off + mv[i - 1].len);
    }
    if (!ok) {
        for (size_t i = 0; i < n; i++) {
            free(segs[i].tier);
            free(segs[i].path);
            free(segs[i].node);
        }
        free(segs);
        free(pv);
        free(mv);
        return -1;
    }
    free(f->segs);
    f->segs = segs;
    f->nsegs = f->capsegs = nsegs;
    free(f->pieces);
    f->pieces = pv;
    f->npieces = f->cappieces = npieces;
    hcomp_extent_map_free(&f->map);
    f->map.v = mv;
    f->map.n = f->map.cap = nmap;
    f->consumed = c[0];
    f->generation = c[1];
    f->skipped = c[2];
    f->lost_records = c[3];
    f->lost_at = c[4];
    f->tail_stats = c[5];
    f->size = c[6];
    /* where each piece is stored: built by the first RELOCATE record that comes */
    free(f->loc);
    f->loc = NULL;
    f->loc_cap = f->loc_used = 0;
    f->loc_segments = f->loc_all = 0;
    return 0;
}
