/* Reading: replay what others appended, then fetch and decode only the blocks of the
 * pieces that overlap the range (a version-1 piece is one block), on the worker pool,
 * a window of stored bytes at a time: blocks the range covers whole are decoded straight
 * into the caller's buffer (or read straight into it when stored as they are), the others
 * into the cache of decoded blocks, from which the part asked for is copied. Holes read
 * as zeros. */
#include "file_internal.h"
#include "common/util.h"
#include "engine/filter.h"
#include "engine/framing.h"
#include "engine/engine.h"
#include "common/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/uio.h>
#include <unistd.h>

/* Stored bytes fetched per round of a read, at most (beyond its first block), and
 * blocks decoded per round. The pool's jobs fetch into their thread's scratch (one unit's
 * stored bytes, kept by the thread for the next read); only what the caller reads itself
 * (an emulated tier's units) is staged for the round. */
#define READ_WINDOW_BYTES (32u << 20)
#define READ_WINDOW_UNITS 512u
#define READ_RETRIES 64
#define READ_LATE_WAITS 20            /* a piece named before its bytes arrived: 1 s at most */
#define READ_LATE_WAIT_NS 50000000L
#define READ_ADVICE_GAP (64u << 10)  /* stored bytes apart, in one advice (advise_window) */
/* Neighbouring blocks stored as they are and wanted whole are read and checked as one unit
 * of at most this many bytes (a piece stored as it is has 4 KiB blocks). */
#define READ_SPAN_BYTES (256u << 10)
#define READ_AHEAD_FROM (256u << 10) /* span_ahead: the bytes of a read it may copy */

/* What a read fetches and decodes: one block of a framed piece, or a whole piece (an
 * unframed one always; a framed one the read wants all of, read and decoded or checked in
 * one job: one I/O per piece). */
typedef struct hcomp_read_unit {
    uint32_t piece, block;   /* block: its (first) number; 0 for a whole piece */
    uint32_t nblk;           /* blocks it holds: more than one only for neighbours stored as
                                they are (their checksums at f->unit_crcs[crcs]) */
    uint32_t crcs;
    uint64_t at;             /* offset of its stored bytes in the segment */
    uint32_t stored, raw, crc;
    int whole;               /* the whole piece: its header is read with it and checked */
    int as_is;               /* stored as it is: read straight to dst when direct */
    uint32_t table_len;      /* a whole framed piece stored as it is: its table goes to src,
                                its blocks straight to dst (one I/O), checked there */
    int in_job;              /* read by its decode job on the pool (else before, by the caller) */
    int to_scratch;          /* in_job, and src is the job's thread's scratch (unit_fetch) */
    int fd;                  /* its segment's descriptor */
    unsigned char *dst;      /* where the logical bytes go (caller's buffer or a cache slot) */
    int slot;                /* cache slot filled, or -1 (direct) */
    unsigned char *copy_to;  /* from a slot: copy_len bytes at copy_from go here */
    uint32_t copy_from, copy_len;
    uint64_t logical;        /* the first logical byte the read wanted of it */
    unsigned char *src;      /* where its stored bytes are read to */
    /* how its read went (in_job) */
    int read_errno, short_read, bad_hdr;
    double read_s;
    unsigned char hdr[HCOMP_PIECE_HEADER_SIZE], want_hdr[HCOMP_PIECE_HEADER_SIZE];
} hcomp_read_unit;

int hcomp_segment_fd(hcomp_file *f, hcomp_segment *s, uint64_t off, uint32_t len, hcomp_error *err)
{
    if (s->fd >= 0)
        return HCOMP_OK;
    if (s->node_local && strcmp(s->node, f->node) != 0) {
        /* the read may wait for its writer's write-back (hcomp_file_pread_locked) */
        f->remote_miss = 1;
        f->remote_seg = (size_t) (s - f->segs);
        f->remote_off = off;
        f->remote_len = len;
        return hcomp_fail(err, HCOMP_E_IO, "%s: logical bytes [%llu, %llu) are on node-local tier "
                          "\"%s\" of node %s, and this process runs on node %s; read the file "
                          "there, or run `hcomp drain %s` there to move them to a shared tier",
                          f->path, (unsigned long long) off, (unsigned long long) (off + len),
                          s->tier, s->node, f->node, f->path);
    }
    if (s->path == NULL)
        return hcomp_fail(err, HCOMP_E_CORRUPT, "%s: logical bytes [%llu, %llu) are in segment "
                          "%016llx, which the mapping file never names", f->path,
                          (unsigned long long) off, (unsigned long long) (off + len),
                          (unsigned long long) s->id);
    s->fd = open(s->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (s->fd < 0)
        return hcomp_fail_errno(err, errno, "%s: logical bytes [%llu, %llu) are stored on tier "
                                "\"%s\" in %s, which cannot be opened", f->path,
                                (unsigned long long) off, (unsigned long long) (off + len),
                                s->tier, s->path);
    return HCOMP_OK;
}

/* What a read took tells the monitor how fast the tier reads (for this opener's next
 * writes: docs/ENGINE.md, "Tier speeds"). */
static void observe_read(hcomp_file *f, const hcomp_segment *s, uint64_t bytes, double seconds)
{
    for (int t = 0; t < f->cfg.ntiers; t++)
        if (f->tw[t].ready && strcmp(f->cfg.tier[t].name, s->tier) == 0)
            hcomp_monitor_observe(f->tw[t].mon, 0, bytes, seconds);
}

/* Emulated tiers are slow to read too. */
static void emulate_read(hcomp_file *f, const hcomp_segment *s, uint64_t bytes, double t0)
{
    for (int t = 0; t < f->cfg.ntiers; t++)
        if (strcmp(f->cfg.tier[t].name, s->tier) == 0)
            hcomp_tier_emulate(&f->cfg.tier[t], bytes, 0, t0);
    observe_read(f, s, bytes, hcomp_now() - t0);
}

static uint32_t piece_block_size(const hcomp_piece *p)
{
    return p->frame ? hcomp_frame_block_size(p->frame) : p->raw_len;
}

/* No writer makes a piece larger than the largest piece size, nor stores more than its
 * codec's bound of that (with its block table): a record that says so is damaged (and
 * must not make a reader allocate gigabytes). */
int hcomp_piece_size_ok(const hcomp_file *f, const hcomp_piece *p, hcomp_error *err)
{
    const hcomp_codec *c = hcomp_codec_by_id(p->codec);
    if (c == NULL)
        return hcomp_fail(err, HCOMP_E_CORRUPT, "%s: unknown codec id %u in the piece at logical "
                          "offset %llu", f->path, (unsigned) p->codec, (unsigned long long) p->start);
    uint64_t most = c->bound(p->raw_len);
    if (p->frame != 0) {
        uint32_t b = hcomp_frame_block_size(p->frame);
        most = b == 0 ? 0 : hcomp_block_table_size(hcomp_frame_blocks(p->raw_len, b)) +
                            (uint64_t) hcomp_frame_bound(c, p->raw_len, b);
    }
    if (p->raw_len <= HCOMP_PIECE_SIZE_MAX && p->stored_len <= most)
        return HCOMP_OK;
    return hcomp_fail(err, HCOMP_E_CORRUPT, "%s: the mapping file names a piece of %u bytes "
                      "stored in %u at logical offset %llu, larger than any piece hcomp writes "
                      "(%u bytes, or its framing is unknown): it is damaged", f->path,
                      (unsigned) p->raw_len, (unsigned) p->stored_len,
                      (unsigned long long) p->start, (unsigned) HCOMP_PIECE_SIZE_MAX);
}

static int header_matches(const unsigned char *hdr, const hcomp_piece *p)
{
    hcomp_piece_header h;
    return hcomp_piece_header_decode(hdr, &h) == 0 && h.raw_len == p->raw_len &&
           h.stored_len == p->stored_len && h.codec == p->codec && h.filter == p->filter &&
           h.framed == (p->frame != 0) && h.start == (p->start & HCOMP_PIECE_MAX_OFFSET);
}

static int header_mismatch(hcomp_file *f, const hcomp_piece *p, hcomp_error *err)
{
    const hcomp_segment *s = &f->segs[p->seg];
    return hcomp_fail(err, HCOMP_E_CORRUPT, "%s: piece header at %llu of %s (tier \"%s\") does "
                      "not match the mapping file", f->path, (unsigned long long) p->seg_off,
                      s->path, s->tier);
}

/* The piece's header and stored bytes read into hdr and payload, the header checked
 * against its record and the filter against its codec; the payload is not checked. */
static int piece_read_unchecked(hcomp_file *f, uint32_t idx, unsigned char *hdr,
                                unsigned char *payload, hcomp_error *err)
{
    const hcomp_piece *p = &f->pieces[idx];
    hcomp_segment *s = &f->segs[p->seg];
    int rc = hcomp_segment_fd(f, s, p->start, p->raw_len, err);
    if (rc != HCOMP_OK)
        return rc;
    size_t total = HCOMP_PIECE_HEADER_SIZE + (size_t) p->stored_len;
    /* the lengths come from the mapping file: the caller checked them before allocating */
    if ((rc = hcomp_piece_size_ok(f, p, err)) != HCOMP_OK)
        return rc;
    double t0 = hcomp_now();
    long long got = hcomp_pread2_full(s->fd, hdr, HCOMP_PIECE_HEADER_SIZE, payload, p->stored_len,
                                      p->seg_off);
    emulate_read(f, s, total, t0);
    if (got < 0)
        return hcomp_fail_errno(err, errno, "%s: reading %s (tier \"%s\")", f->path, s->path, s->tier);
    if ((size_t) got < total)
        return hcomp_fail(err, HCOMP_E_CORRUPT, "%s: piece at %llu of %s (tier \"%s\") is truncated "
                          "(%lld of %zu bytes); logical bytes from %llu cannot be read", f->path,
                          (unsigned long long) p->seg_off, s->path, s->tier, got, total,
                          (unsigned long long) p->start);
    if (!header_matches(hdr, p))
        return header_mismatch(f, p, err);
    const hcomp_codec *c = hcomp_codec_by_id(p->codec);
    if (!hcomp_filter_fits(p->filter, c))
        return hcomp_fail(err, HCOMP_E_CORRUPT, "%s: filter %u (unknown, or not one codec %s "
                          "carries) in %s", f->path, (unsigned) p->filter, c->name, s->path);
    return HCOMP_OK;
}

/* The table's checksum of a framed piece against its record (a table that fails it
 * tells nothing of the blocks). */
static int table_crc_ok(const hcomp_piece *p, const unsigned char *payload)
{
    return hcomp_crc32(payload, hcomp_block_table_size(hcomp_frame_blocks(
                                    p->raw_len, piece_block_size(p)))) == p->crc;
}

int hcomp_piece_fetch(hcomp_file *f, uint32_t idx, unsigned char *hdr, unsigned char *payload,
                      hcomp_error *err)
{
    int rc = piece_read_unchecked(f, idx, hdr, payload, err);
    if (rc != HCOMP_OK)
        return rc;
    const hcomp_piece *p = &f->pieces[idx];
    const hcomp_segment *s = &f->segs[p->seg];
    const hcomp_codec *c = hcomp_codec_by_id(p->codec);
    int64_t bad = -1;
    int ok = p->frame == 0
                 ? hcomp_crc32(payload, p->stored_len) == p->crc
                 : table_crc_ok(p, payload) &&
                       hcomp_frame_decode(c, p->filter, payload, p->stored_len, p->raw_len,
                                          piece_block_size(p), NULL, NULL, NULL, &bad,
                                          NULL) == HCOMP_OK;
    if (!ok) {
        uint64_t b = bad < 0 ? 0 : (uint64_t) bad * piece_block_size(p);
        uint64_t e = bad < 0 ? p->raw_len : b + piece_block_size(p);
        return hcomp_fail(err, HCOMP_E_CORRUPT, "%s: checksum mismatch in the piece at %llu of %s "
                          "(tier \"%s\", logical bytes [%llu, %llu)): the stored data is damaged",
                          f->path, (unsigned long long) p->seg_off, s->path, s->tier,
                          (unsigned long long) (p->start + b),
                          (unsigned long long) (p->start + (e < p->raw_len ? e : p->raw_len)));
    }
    return HCOMP_OK;
}

int hcomp_piece_scan_blocks(hcomp_file *f, uint32_t idx, unsigned char *damaged,
                            uint32_t *ndamaged, hcomp_error *err)
{
    const hcomp_piece *p = &f->pieces[idx];
    *ndamaged = 0;
    int rc = hcomp_piece_size_ok(f, p, err);
    if (rc != HCOMP_OK)
        return rc;
    if (p->frame == 0)
        return hcomp_fail(err, HCOMP_E_INVAL, "%s: the piece at logical %llu is not framed in "
                          "blocks", f->path, (unsigned long long) p->start);
    uint32_t bs = piece_block_size(p);
    if (hcomp_grow(&f->rbuf, &f->rbuf_cap, p->stored_len ? p->stored_len : 1) != 0 ||
        hcomp_grow(&f->scan_out, &f->scan_out_cap, bs) != 0)
        return hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory reading a piece", f->path);
    unsigned char hdr[HCOMP_PIECE_HEADER_SIZE];
    if ((rc = piece_read_unchecked(f, idx, hdr, f->rbuf, err)) != HCOMP_OK)
        return rc;
    const hcomp_segment *s = &f->segs[p->seg];
    if (!table_crc_ok(p, f->rbuf) ||
        hcomp_frame_scan(hcomp_codec_by_id(p->codec), p->filter, f->rbuf, p->stored_len,
                         p->raw_len, bs, f->scan_out, &f->unfilter, &f->unfilter_cap, damaged,
                         ndamaged) != HCOMP_OK)
        return hcomp_fail(err, HCOMP_E_CORRUPT, "%s: the block table of the piece at %llu of %s "
                          "(tier \"%s\", logical bytes [%llu, %llu)) is damaged", f->path,
                          (unsigned long long) p->seg_off, s->path, s->tier,
                          (unsigned long long) p->start,
                          (unsigned long long) (p->start + p->raw_len));
    return HCOMP_OK;
}

/* The whole piece, checked and decoded into dst (drains and fsck). */
static int piece_load_once(hcomp_file *f, uint32_t idx, unsigned char *dst, hcomp_error *err)
{
    const hcomp_piece *p = &f->pieces[idx];
    const hcomp_segment *s = &f->segs[p->seg];
    /* the lengths come from the mapping file: check them before allocating for them */
    int rc = hcomp_piece_size_ok(f, p, err);
    if (rc != HCOMP_OK)
        return rc;
    if (hcomp_grow(&f->rbuf, &f->rbuf_cap, p->stored_len ? p->stored_len : 1) != 0)
        return hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory reading a piece", f->path);
    unsigned char hdr[HCOMP_PIECE_HEADER_SIZE];
    if ((rc = hcomp_piece_fetch(f, idx, hdr, f->rbuf, err)) != HCOMP_OK)
        return rc;
    const hcomp_codec *c = hcomp_codec_by_id(p->codec);
    int64_t bad;
    rc = p->frame ? hcomp_frame_decode(c, p->filter, f->rbuf, p->stored_len, p->raw_len,
                                       piece_block_size(p), dst, &f->unfilter, &f->unfilter_cap,
                                       &bad, NULL)
                  : hcomp_filter_decode(c, p->filter, f->rbuf, p->stored_len, dst, p->raw_len,
                                        &f->unfilter, &f->unfilter_cap);
    if (rc != HCOMP_OK)
        return hcomp_fail(err, HCOMP_E_CORRUPT, "%s: %s could not decode the piece at %llu of %s "
                          "(tier \"%s\", logical bytes [%llu, %llu))", f->path, c->name,
                          (unsigned long long) p->seg_off, s->path, s->tier,
                          (unsigned long long) p->start,
                          (unsigned long long) (p->start + p->raw_len));
    return HCOMP_OK;
}

int hcomp_piece_load(hcomp_file *f, uint32_t idx, unsigned char *dst, hcomp_error *err)
{
    int rc = piece_load_once(f, idx, dst, err);
    if (rc == HCOMP_OK)
        return rc;
    /* a writer may have just moved the piece (drain): read its new place, once */
    uint32_t seg = f->pieces[idx].seg;
    uint64_t off = f->pieces[idx].seg_off;
    hcomp_error again;
    if (hcomp_log_refresh(f, &again) != HCOMP_OK)
        return rc;
    if (f->pieces[idx].seg == seg && f->pieces[idx].seg_off == off)
        return rc;
    return piece_load_once(f, idx, dst, err);
}

/* ---- caches ------------------------------------------------------------------ */

void hcomp_read_cache_clear(hcomp_file *f, int release)
{
    for (int i = 0; i < HCOMP_READ_CACHE_SLOTS; i++) {
        f->cache[i].piece = -1;
        if (release) {
            free(f->cache[i].buf);
            f->cache[i].buf = NULL;
            f->cache[i].cap = 0;
        }
    }
    for (int i = 0; i < HCOMP_TABLE_CACHE_SLOTS; i++) {
        f->tables[i].valid = 0;
        if (release) {
            free(f->tables[i].t);
            free(f->tables[i].at);
            f->tables[i].t = NULL;
            f->tables[i].at = NULL;
            f->tables[i].t_cap = f->tables[i].at_cap = 0;
        }
    }
    if (release) {
        for (size_t j = 0; j < f->rjobs_cap; j++)
            free(f->rjobs[j].tmp);
        free(f->rjobs);
        free(f->units);
        free(f->unit_crcs);
        f->rjobs = NULL;
        f->units = NULL;
        f->unit_crcs = NULL;
        f->rjobs_cap = f->units_cap = f->unit_crcs_cap = 0;
    }
}

#define CACHE_FILLING (-2)    /* a slot a unit of this round decodes into */

static int cache_find(const hcomp_file *f, uint32_t piece, uint32_t block)
{
    for (int i = 0; i < HCOMP_READ_CACHE_SLOTS; i++)
        if (f->cache[i].piece == (int64_t) piece && block >= f->cache[i].block &&
            block - f->cache[i].block < f->cache[i].nblk)
            return i;
    return -1;
}

/* A slot for raw bytes that no unit of the round being planned fills: an empty one, else
 * the least recently used; -1 when every slot is being filled. */
static int cache_take(hcomp_file *f, uint32_t raw)
{
    int slots = (int) (HCOMP_READ_CACHE_BYTES / (raw ? raw : 1));
    slots = slots < 1 ? 1 : slots > HCOMP_READ_CACHE_SLOTS ? HCOMP_READ_CACHE_SLOTS : slots;
    int s = -1;
    for (int i = 0; i < slots; i++) {
        const struct hcomp_read_cache *c = &f->cache[i];
        if (c->piece == CACHE_FILLING)
            continue;
        if (c->piece < 0) {
            s = i;
            break;
        }
        if (s < 0 || c->used < f->cache[s].used)
            s = i;
    }
    if (s < 0 || hcomp_grow(&f->cache[s].buf, &f->cache[s].cap, raw ? raw : 1) != 0)
        return -1;
    f->cache[s].piece = CACHE_FILLING;
    f->cache[s].used = ++f->cache_tick;
    return s;
}

/* Keep the block table of framed piece idx, after checking its header and table (hdr:
 * the 16-byte header and the table after it) against its record. */
static int table_keep(hcomp_file *f, uint32_t idx, const unsigned char *hdr,
                      struct hcomp_table_cache *t, hcomp_error *err)
{
    const hcomp_piece *p = &f->pieces[idx];
    const hcomp_segment *s = &f->segs[p->seg];
    uint32_t bs = piece_block_size(p), n = hcomp_frame_blocks(p->raw_len, bs);
    size_t tlen = hcomp_block_table_size(n);
    if (!header_matches(hdr, p))
        return header_mismatch(f, p, err);
    const unsigned char *table = hdr + HCOMP_PIECE_HEADER_SIZE;
    const hcomp_codec *c = hcomp_codec_by_id(p->codec);
    if (hcomp_crc32(table, tlen) != p->crc ||
        hcomp_block_table_check(table, p->raw_len, bs, p->stored_len, c->bound) != 0 ||
        !hcomp_filter_fits(p->filter, c))
        return hcomp_fail(err, HCOMP_E_CORRUPT, "%s: the block table of the piece at %llu of %s "
                          "(tier \"%s\", logical bytes [%llu, %llu)) is damaged", f->path,
                          (unsigned long long) p->seg_off, s->path, s->tier,
                          (unsigned long long) p->start,
                          (unsigned long long) (p->start + p->raw_len));
    if (hcomp_grow(&t->t, &t->t_cap, tlen) != 0 ||
        hcomp_grow_array(&t->at, &t->at_cap, (size_t) n + 1, sizeof(*t->at)) != 0)
        return hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory", f->path);
    memmove(t->t, table, tlen);
    t->at[0] = tlen;
    for (uint32_t i = 0; i < n; i++)
        t->at[i + 1] = t->at[i] + hcomp_block_stored(t->t, i);
    t->nblocks = n;
    t->seg_id = s->id;
    t->seg_off = p->seg_off;
    t->crc = p->crc;
    t->valid = 1;
    return HCOMP_OK;
}

/* Read len bytes at off of piece idx's segment into buf, or fail naming the piece. */
static int piece_pread(hcomp_file *f, uint32_t idx, unsigned char *buf, size_t len, hcomp_error *err)
{
    const hcomp_piece *p = &f->pieces[idx];
    hcomp_segment *s = &f->segs[p->seg];
    int rc = hcomp_segment_fd(f, s, p->start, p->raw_len, err);
    if (rc != HCOMP_OK)
        return rc;
    double t0 = hcomp_now();
    long long got = hcomp_pread_full(s->fd, buf, len, p->seg_off);
    emulate_read(f, s, got > 0 ? (uint64_t) got : 0, t0);
    f->stats.read_fetched += got > 0 ? (uint64_t) got : 0;
    if (got < 0)
        return hcomp_fail_errno(err, errno, "%s: reading %s (tier \"%s\")", f->path, s->path, s->tier);
    if ((size_t) got < len)
        return hcomp_fail(err, HCOMP_E_CORRUPT, "%s: piece at %llu of %s (tier \"%s\") is truncated; "
                          "logical bytes from %llu cannot be read", f->path,
                          (unsigned long long) p->seg_off, s->path, s->tier,
                          (unsigned long long) p->start);
    return HCOMP_OK;
}

int hcomp_piece_blocks_place(const hcomp_piece *p, uint32_t lo, uint32_t hi, uint64_t *a,
                             uint64_t *b, uint64_t *blocks)
{
    uint32_t bs = piece_block_size(p), n = p->frame ? hcomp_frame_blocks(p->raw_len, bs) : 0;
    uint64_t tlen = hcomp_block_table_size(n);
    if (p->frame == 0 || hi <= lo || hi > p->raw_len || tlen >= p->stored_len)
        return -1;
    uint64_t start = p->seg_off + HCOMP_PIECE_HEADER_SIZE + tlen;   /* the first block */
    uint64_t first = lo / bs, last = (hi - 1) / bs;
    *blocks = start;
    if (p->codec == HCOMP_CODEC_NONE) {         /* every block as it is: known */
        *a = start + first * bs;
        *b = start + (last + 1) * bs;
        if (*b > start + (p->stored_len - tlen))
            *b = start + (p->stored_len - tlen);
        return 0;
    }
    if (n < 2)
        return -1;
    uint64_t avg = (p->stored_len - tlen) / n, end = start + (p->stored_len - tlen);
    *a = start + first * avg;
    *a = *a - start > avg / 2 ? *a - avg / 2 : start;
    *b = start + (last + 1) * avg + avg / 2;
    if (*b > end)
        *b = end;
    return *a < *b ? 0 : -1;
}

/* Before a framed piece has its table read for logical bytes [lo, hi) of it, the blocks
 * that hold them are handed to the kernel, so that a cold read waits for one disk round
 * trip, its table's, while its blocks are read beside it, instead of two in turn: their
 * place follows from the record for a piece stored as it is (every block as it is, in
 * blocks of the record's size); for a piece with coded blocks it is guessed from the
 * piece's average block (the blocks of one piece compress alike: on VPIC-IO's arrays every
 * block lies within half an average block of its guess), with half an average block more
 * on each side. A guess that misses costs what the advice read in vain and the second
 * round trip; the read itself reads and checks what the table says. Advice only. */
static void advise_blocks(hcomp_file *f, const hcomp_piece *p, uint32_t lo, uint32_t hi)
{
    hcomp_segment *s = &f->segs[p->seg];
    hcomp_error ignored;
    uint64_t a, b, blocks;
    if (f->opts.read_ahead == 0 || hcomp_piece_blocks_place(p, lo, hi, &a, &b, &blocks) != 0 ||
        hcomp_segment_emulated(f, s) || hcomp_segment_fd(f, s, p->start, 0, &ignored) != HCOMP_OK)
        return;
    int rc = hcomp_advise_willneed(s->fd, a, b - a);
    if (rc >= 0)
        f->stats.block_advice_bytes += b - a;
    if (rc == 0)
        f->stats.advice_cached_bytes += b - a;
}

/* The block table of framed piece idx, which a read wants logical bytes [lo, hi) of: from
 * the cache, or read with the piece header and checked. */
static int piece_table(hcomp_file *f, uint32_t idx, uint32_t lo, uint32_t hi,
                       struct hcomp_table_cache **out, hcomp_error *err)
{
    const hcomp_piece *p = &f->pieces[idx];
    const hcomp_segment *s = &f->segs[p->seg];
    /* one slot per piece number (modulo): a piece moved or re-encoded since has another
     * place or checksum, and misses */
    struct hcomp_table_cache *t = &f->tables[idx % HCOMP_TABLE_CACHE_SLOTS];
    *out = t;
    if (t->valid && t->seg_id == s->id && t->seg_off == p->seg_off && t->crc == p->crc)
        return HCOMP_OK;
    t->valid = 0;
    size_t tlen = hcomp_block_table_size(hcomp_frame_blocks(p->raw_len, piece_block_size(p)));
    if (tlen > p->stored_len)
        return header_mismatch(f, p, err);
    size_t len = HCOMP_PIECE_HEADER_SIZE + tlen;
    if (hcomp_grow(&t->t, &t->t_cap, len) != 0)
        return hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory", f->path);
    advise_blocks(f, p, lo, hi);
    int rc = piece_pread(f, idx, t->t, len, err);
    return rc == HCOMP_OK ? table_keep(f, idx, t->t, t, err) : rc;
}

/* ---- a read, a window at a time ------------------------------------------------ */

typedef struct read_window {
    size_t n;                /* units */
    uint64_t stored;         /* their stored bytes (what bounds a round) */
    uint64_t staged;         /* of which read by the caller into f->rbuf */
    size_t ncrcs;            /* checksums in f->unit_crcs */
} read_window;

int hcomp_segment_emulated(const hcomp_file *f, const hcomp_segment *s)
{
    for (int t = 0; t < f->cfg.ntiers; t++)
        if (strcmp(f->cfg.tier[t].name, s->tier) == 0)
            return f->cfg.tier[t].emulate;
    return 0;
}

/* Queue unit u of piece p unless the window is full (then *full is set). */
static int add_unit(hcomp_file *f, read_window *w, hcomp_read_unit *u, int *full,
                    hcomp_error *err)
{
    uint32_t fetched = u->as_is && u->slot < 0 ? u->table_len
                     : u->as_is && !u->whole && u->nblk > 1 ? 0 : u->stored;
    *full = w->n >= READ_WINDOW_UNITS || (w->n > 0 && w->stored + fetched > READ_WINDOW_BYTES);
    if (*full)
        return HCOMP_OK;
    const hcomp_piece *p = &f->pieces[u->piece];
    hcomp_segment *s = &f->segs[p->seg];
    int rc = hcomp_segment_fd(f, s, u->logical, u->raw, err);
    if (rc != HCOMP_OK)
        return rc;
    if (hcomp_grow_array(&f->units, &f->units_cap, w->n + 1, sizeof(*f->units)) != 0)
        return hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory", f->path);
    u->fd = s->fd;
    /* read on the pool, overlapping other units' reading and decoding (a block stored as
     * it is and wanted whole is read straight into the caller's buffer there too), unless
     * the tier is emulated: its speed is one process's, so its reads take turns, in the
     * caller (neighbours merged into one read) */
    u->in_job = !hcomp_segment_emulated(f, s);
    u->to_scratch = u->in_job && fetched > 0;
    if (u->whole) {
        hcomp_piece_header h = {p->start, p->raw_len, p->stored_len, p->codec, p->filter,
                                p->frame != 0};
        hcomp_piece_header_encode(&h, u->want_hdr);
    }
    f->units[w->n++] = *u;
    w->stored += fetched;
    w->staged += u->to_scratch ? 0 : fetched;
    return HCOMP_OK;
}

/* Where a unit's logical bytes go: straight into the caller's buffer (to) when it wants
 * them all, else a cache slot, from which the part wanted is copied. */
static int unit_target(hcomp_file *f, hcomp_read_unit *u, unsigned char *to, uint32_t b0,
                       uint32_t a, uint32_t z)
{
    u->slot = -1;
    if (a == b0 && z == b0 + u->raw) {
        u->dst = to;
        return 0;
    }
    if ((u->slot = cache_take(f, u->raw)) < 0)
        return -1;
    u->dst = f->cache[u->slot].buf;
    u->copy_to = to;
    u->copy_from = a - b0;
    u->copy_len = z - a;
    return 0;
}

/* Add block unit u to the window's last unit when both are blocks stored as they are,
 * neighbours in the piece and in the caller's buffer, wanted whole: one read and one job
 * for what would be a job per 4 KiB block of a piece stored as it is. 1: added; 0: not;
 * -1: out of memory. */
static int span_extend(hcomp_file *f, read_window *w, const hcomp_read_unit *u)
{
    hcomp_read_unit *v = w->n > 0 ? &f->units[w->n - 1] : NULL;
    if (v == NULL || u->whole || v->whole || !u->as_is || !v->as_is || u->slot >= 0 ||
        v->slot >= 0 || v->piece != u->piece || v->block + v->nblk != u->block ||
        v->at + v->stored != u->at || v->dst + v->raw != u->dst ||
        v->raw + u->raw > READ_SPAN_BYTES)
        return 0;
    if (hcomp_grow_array(&f->unit_crcs, &f->unit_crcs_cap, w->ncrcs + 2,
                         sizeof(*f->unit_crcs)) != 0)
        return -1;
    if (v->nblk == 1) {
        v->crcs = (uint32_t) w->ncrcs;
        f->unit_crcs[w->ncrcs++] = v->crc;
    }
    f->unit_crcs[w->ncrcs++] = u->crc;
    v->nblk++;
    v->raw += u->raw;
    v->stored += u->stored;
    return 1;
}

/* A sequential read whose last READ_AHEAD_FROM bytes or less in a piece stored as it is
 * (table t, blocks of bs bytes) start in block u->block and end at hi reads them with the
 * piece's next READ_SPAN_BYTES into the block cache as one unit: the next reads of the run
 * find their bytes there, instead of each small read fetching a 4 KiB block or two (a
 * read, a job and an advice each). */
static int span_ahead(hcomp_file *f, read_window *w, const struct hcomp_table_cache *t,
                      hcomp_read_unit *u, uint32_t bs, uint32_t hi)
{
    uint32_t last = (hi + bs - 1) / bs + READ_SPAN_BYTES / bs;
    if (last > t->nblocks)
        last = t->nblocks;
    if (last <= u->block + 1)
        return HCOMP_OK;
    if (hcomp_grow_array(&f->unit_crcs, &f->unit_crcs_cap, w->ncrcs + (last - u->block),
                         sizeof(*f->unit_crcs)) != 0)
        return HCOMP_E_NOMEM;
    u->crcs = (uint32_t) w->ncrcs;
    for (uint32_t k = u->block; k < last; k++)
        f->unit_crcs[w->ncrcs++] = hcomp_block_crc(t->t, k);
    u->nblk = last - u->block;
    u->stored = u->raw = (uint32_t) (t->at[last] - t->at[u->block]);
    return HCOMP_OK;
}

/* Plan the blocks of piece idx that logical bytes [lo, hi) of it (the caller's out) need:
 * copy those cached, queue the others. *done: how far it got before the window filled. */
static int plan_piece(hcomp_file *f, read_window *w, uint32_t idx, uint32_t lo, uint32_t hi,
                      unsigned char *out, uint32_t *done, hcomp_error *err)
{
    const hcomp_piece *p = &f->pieces[idx];
    uint32_t bs = piece_block_size(p);
    *done = lo;
    /* the lengths come from the mapping file: check them before allocating for them */
    int rc = hcomp_piece_size_ok(f, p, err), full = 0;
    if (rc != HCOMP_OK)
        return rc;
    /* all of a framed piece, or any of an unframed one: the whole piece, in one I/O (the
     * blocks of one stored as it is read straight to the caller's buffer behind its table) */
    int whole = p->frame == 0 || (lo == 0 && hi == p->raw_len);
    int raw_framed = whole && p->frame != 0 && p->codec == HCOMP_CODEC_NONE &&
                     p->filter == HCOMP_FILTER_NONE;
    struct hcomp_table_cache *t = NULL;
    if (!whole && (rc = piece_table(f, idx, lo, hi, &t, err)) != HCOMP_OK)
        return rc;
    if (whole)
        bs = p->raw_len;
    for (uint32_t k = lo / (bs ? bs : 1); *done < hi; k++) {
        uint32_t b0 = k * bs, raw = p->raw_len - b0 < bs ? p->raw_len - b0 : bs;
        uint32_t a = *done, z = hi < b0 + raw ? hi : b0 + raw;
        unsigned char *to = out + (a - lo);
        /* (a framed piece's cached blocks are its blocks, not the whole piece) */
        int c = whole && p->frame ? -1 : cache_find(f, idx, k);
        if (c >= 0) {           /* as far as the slot goes (a span holds several blocks) */
            struct hcomp_read_cache *cs = &f->cache[c];
            uint64_t span_end = (uint64_t) (cs->block + cs->nblk) * bs;
            uint32_t zz = span_end < hi ? (uint32_t) span_end : hi;
            memcpy(to, cs->buf + (size_t) (k - cs->block) * bs + (a - b0), zz - a);
            f->stats.read_cached += zz - a;
            cs->used = ++f->cache_tick;
            *done = zz;
            k = (zz - 1) / bs;  /* the loop goes on at the block after */
            continue;
        }
        hcomp_read_unit u = {0};
        u.piece = idx;
        u.block = k;
        u.raw = raw;
        u.whole = whole;
        u.at = p->seg_off + HCOMP_PIECE_HEADER_SIZE + (t ? t->at[k] : 0);
        u.stored = t ? (uint32_t) (t->at[k + 1] - t->at[k]) : p->stored_len;
        u.crc = t ? hcomp_block_crc(t->t, k) : p->crc;
        u.as_is = t ? u.stored == raw : p->codec == HCOMP_CODEC_NONE && p->frame == 0;
        if (raw_framed) {
            u.as_is = 1;
            u.table_len = (uint32_t) hcomp_block_table_size(hcomp_frame_blocks(p->raw_len,
                                                                               piece_block_size(p)));
        }
        u.logical = p->start + a;
        u.nblk = 1;
        if (hi - b0 <= READ_AHEAD_FROM && hi < p->raw_len && t != NULL &&
            p->codec == HCOMP_CODEC_NONE && f->ra_seq && f->opts.read_ahead > 0) {
            if ((rc = span_ahead(f, w, t, &u, bs, hi)) != HCOMP_OK)
                return hcomp_fail(err, rc, "%s: out of memory reading", f->path);
            z = hi < b0 + u.raw ? hi : b0 + u.raw;  /* the span goes past the read's end */
        }
        if (unit_target(f, &u, to, b0, a, z) != 0)
            return w->n > 0 ? HCOMP_OK
                            : hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory reading", f->path);
        if ((rc = span_extend(f, w, &u)) != 0) {
            if (rc < 0)
                return hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory reading", f->path);
            *done = z;
            continue;
        }
        if ((rc = add_unit(f, w, &u, &full, err)) != HCOMP_OK || full) {
            if (u.slot >= 0)
                f->cache[u.slot].piece = -1;
            return rc;      /* full: the rest in the next window */
        }
        *done = z;
    }
    return HCOMP_OK;
}

/* Read the stored bytes of unit u (and its piece header, for a whole piece) into
 * u->src: on a pool thread for in_job units, or in the caller's thread. */
static int unit_read(hcomp_read_unit *u, size_t len)
{
    struct iovec iov[3];
    int n = 0;
    uint64_t at = u->at;
    if (u->whole) {
        iov[n++] = (struct iovec) {u->hdr, HCOMP_PIECE_HEADER_SIZE};
        at -= HCOMP_PIECE_HEADER_SIZE;
    }
    if (u->table_len) {         /* the table to src, the blocks straight to dst */
        iov[n++] = (struct iovec) {u->src, u->table_len};
        iov[n++] = (struct iovec) {u->dst, u->raw};
        len = (size_t) u->table_len + u->raw;
    } else {
        iov[n++] = (struct iovec) {u->src, len};
    }
    size_t total = (u->whole ? HCOMP_PIECE_HEADER_SIZE : 0) + len, got = 0;
    double t0 = hcomp_now();
    while (got < total) {
        ssize_t r = preadv(u->fd, iov, n, (off_t) (at + got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            u->read_errno = r < 0 ? errno : 0;
            u->short_read = r == 0;
            break;
        }
        got += (size_t) r;
        for (int v = 0; v < n && r > 0; v++) {
            size_t k = (size_t) r < iov[v].iov_len ? (size_t) r : iov[v].iov_len;
            iov[v].iov_base = (char *) iov[v].iov_base + k;
            iov[v].iov_len -= k;
            r -= (ssize_t) k;
        }
    }
    u->read_s = hcomp_now() - t0;
    if (got < total)
        return -1;
    u->bad_hdr = u->whole && memcmp(u->hdr, u->want_hdr, HCOMP_PIECE_HEADER_SIZE) != 0;
    return u->bad_hdr ? -1 : 0;
}

/* A thread's scratch for the stored bytes of the units its jobs fetch: kept from one job,
 * and one read, to the next, and freed when the thread ends. Staging a round's stored
 * bytes in the handle instead (up to 32 MiB, first touched by that round) cost a large
 * read 10-20 ms of page faults per handle here (docs/ENGINE.md, "Blocks and reads"); this
 * holds one unit's bytes per thread, which stay in its cache for the decoding. */
typedef struct thread_scratch {
    unsigned char *p;
    size_t cap;
} thread_scratch;

static pthread_key_t scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;
static int scratch_key_ok;

static void scratch_free(void *v)
{
    thread_scratch *t = v;
    free(t->p);
    free(t);
}

static void scratch_init(void)
{
    scratch_key_ok = pthread_key_create(&scratch_key, scratch_free) == 0;
}

/* The calling thread's scratch, grown to need bytes; NULL when out of memory. */
static unsigned char *scratch_get(size_t need)
{
    pthread_once(&scratch_once, scratch_init);
    if (!scratch_key_ok)
        return NULL;
    thread_scratch *t = pthread_getspecific(scratch_key);
    if (t == NULL) {
        if ((t = calloc(1, sizeof(*t))) == NULL)
            return NULL;
        if (pthread_setspecific(scratch_key, t) != 0) {
            free(t);
            return NULL;
        }
    }
    return hcomp_grow(&t->p, &t->cap, need ? need : 1) == 0 ? t->p : NULL;
}

static int unit_fetch(hcomp_job *j, void *arg)
{
    hcomp_read_unit *u = arg;
    if (u->to_scratch) {
        /* whatever it held is a finished job's: this thread runs one job at a time */
        if ((u->src = scratch_get(u->table_len ? u->table_len : u->stored)) == NULL) {
            u->read_errno = ENOMEM;
            return -1;
        }
        j->src = u->src;
    }
    return unit_read(u, u->stored);
}

/* Whether unit k continues unit k-1's read: same segment, next bytes, both read by the
 * caller straight into consecutive bytes of the caller's buffer. */
static int continues(const hcomp_file *f, size_t k)
{
    const hcomp_read_unit *a = &f->units[k - 1], *b = &f->units[k];
    return !a->in_job && !b->in_job && !a->whole && !b->whole && a->as_is && b->as_is &&
           a->slot < 0 && b->slot < 0 && a->fd == b->fd && a->at + a->stored == b->at &&
           a->dst + a->raw == b->dst;
}

static int unit_failed(hcomp_file *f, const hcomp_read_unit *u, const hcomp_job *j,
                       hcomp_error *err)
{
    const hcomp_piece *p = &f->pieces[u->piece];
    const hcomp_segment *s = &f->segs[p->seg];
    if (u->read_errno)
        return hcomp_fail_errno(err, u->read_errno, "%s: reading %s (tier \"%s\")", f->path,
                                s->path, s->tier);
    if (u->short_read)
        return hcomp_fail(err, HCOMP_E_CORRUPT, "%s: the piece at %llu of %s (tier \"%s\") is "
                          "truncated; logical bytes from %llu cannot be read", f->path,
                          (unsigned long long) p->seg_off, s->path, s->tier,
                          (unsigned long long) u->logical);
    if (u->bad_hdr)
        return header_mismatch(f, p, err);
    uint32_t bs = u->whole || u->nblk > 1 ? piece_block_size(p) : u->raw;
    uint64_t b0 = p->start + (u->whole ? 0 : (uint64_t) u->block * piece_block_size(p));
    uint64_t b1 = b0 + u->raw;
    if (!u->whole && u->nblk > 1 && j != NULL && j->bad_block >= 0) {  /* which block */
        b0 += (uint64_t) j->bad_block * bs;
        b1 = b0 + bs < b1 ? b0 + bs : b1;
    }
    if (u->whole && p->frame) {
        if (j->bad_block < 0)
            return hcomp_fail(err, HCOMP_E_CORRUPT, "%s: the block table of the piece at %llu of "
                              "%s (tier \"%s\", logical bytes [%llu, %llu)) is damaged", f->path,
                              (unsigned long long) p->seg_off, s->path, s->tier,
                              (unsigned long long) b0, (unsigned long long) b1);
        b0 = p->start + (uint64_t) j->bad_block * bs;
        b1 = b0 + bs < p->start + p->raw_len ? b0 + bs : p->start + p->raw_len;
    }
    if (j->bad_crc)
        return hcomp_fail(err, HCOMP_E_CORRUPT, "%s: checksum mismatch in the piece at %llu of %s "
                          "(tier \"%s\", logical bytes [%llu, %llu)): the stored data is damaged",
                          f->path, (unsigned long long) p->seg_off, s->path, s->tier,
                          (unsigned long long) b0, (unsigned long long) b1);
    return hcomp_fail(err, HCOMP_E_CORRUPT, "%s: %s could not decode the piece at %llu of %s "
                      "(tier \"%s\", logical bytes [%llu, %llu))", f->path,
                      hcomp_codec_by_id(p->codec)->name, (unsigned long long) p->seg_off, s->path,
                      s->tier, (unsigned long long) b0, (unsigned long long) b1);
}

/* Read the units the caller reads (runs of neighbours with one call each), in order;
 * returns how many, from the first, were read (the rest failed at the first of them). */
static size_t read_in_caller(hcomp_file *f, read_window *w)
{
    for (size_t i = 0; i < w->n;) {
        hcomp_read_unit *u = &f->units[i];
        if (u->in_job) {
            i++;
            continue;
        }
        size_t j = i + 1, len = u->stored;
        while (j < w->n && continues(f, j))
            len += f->units[j++].stored;
        const hcomp_segment *s = &f->segs[f->pieces[u->piece].seg];
        double t0 = hcomp_now();
        int rc = unit_read(u, len);
        emulate_read(f, s, len, t0);
        for (size_t k = i + 1; k < j; k++)
            f->units[k].src = f->units[k - 1].src + f->units[k - 1].stored;
        if (rc != 0)
            return i;
        i = j;
    }
    return w->n;
}

/* Hand the stored bytes the pool's jobs will read to the kernel at once (neighbours in a
 * segment merged), so that their I/O is queued together and the jobs' reads wait for it,
 * instead of one I/O in flight per thread: a cold window of 16 pieces otherwise reads at a
 * queue depth of two on two cores. Advice only; off with hcomp_read_ahead=0. */
static void advise_window(hcomp_file *f, const read_window *w)
{
    size_t jobs = 0;
    for (size_t k = 0; k < w->n; k++)
        jobs += f->units[k].in_job != 0;
    if (f->opts.read_ahead == 0 || jobs < 2)
        return;
    for (size_t k = 0; k < w->n;) {
        const hcomp_read_unit *u = &f->units[k++];
        if (!u->in_job)
            continue;
        uint64_t a = u->at - (u->whole ? HCOMP_PIECE_HEADER_SIZE : 0), b = u->at + u->stored;
        while (k < w->n && f->units[k].in_job && f->units[k].fd == u->fd &&
               f->units[k].at >= a && f->units[k].at <= b + READ_ADVICE_GAP) {
            if (f->units[k].at + f->units[k].stored > b)
                b = f->units[k].at + f->units[k].stored;
            k++;
        }
        if (hcomp_advise_willneed(u->fd, a, b - a) == 0)
            f->stats.advice_cached_bytes += b - a;
    }
}

/* A span taken ahead (span_ahead) whose damaged block lies beyond what the read wanted:
 * the blocks before it were checked and are in the slot, so the read goes on and only they
 * are kept; a read of the damaged block fetches it again and fails there. */
static int span_ahead_kept(hcomp_file *f, hcomp_read_unit *u, const hcomp_job *j)
{
    if (u->whole || u->slot < 0 || u->nblk < 2 || !j->bad_crc || j->bad_block <= 0 ||
        u->read_errno || u->short_read)
        return 0;
    uint32_t bs = piece_block_size(&f->pieces[u->piece]);
    if ((uint64_t) u->copy_from + u->copy_len > (uint64_t) j->bad_block * bs)
        return 0;
    u->nblk = (uint32_t) j->bad_block;
    return 1;
}

/* Fetch and decode the window's units; *failed: the logical offset of the first that
 * failed (the bytes before it are in place). */
static int run_window(hcomp_file *f, read_window *w, uint64_t *failed, hcomp_error *err)
{
    if (w->n == 0)
        return HCOMP_OK;
    size_t had = f->rjobs_cap;
    if (hcomp_grow(&f->rbuf, &f->rbuf_cap, w->staged ? w->staged : 1) != 0 ||
        hcomp_grow_array(&f->rjobs, &f->rjobs_cap, w->n, sizeof(*f->rjobs)) != 0) {
        *failed = f->units[0].logical;
        for (size_t k = 0; k < w->n; k++)
            if (f->units[k].slot >= 0)
                f->cache[f->units[k].slot].piece = -1;
        return hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory reading", f->path);
    }
    memset(f->rjobs + had, 0, (f->rjobs_cap - had) * sizeof(*f->rjobs));
    unsigned char *stage = f->rbuf;
    for (size_t k = 0; k < w->n; k++) {
        hcomp_read_unit *u = &f->units[k];
        if (u->to_scratch) {
            u->src = NULL;          /* its job's thread's scratch (unit_fetch) */
        } else if (u->as_is && u->slot < 0 && u->table_len) {
            u->src = stage;         /* its table; its blocks go straight to the caller */
            stage += u->table_len;
        } else if (u->as_is && (u->slot < 0 || (!u->whole && u->nblk > 1))) {
            u->src = u->dst;        /* straight into the caller's buffer, or a span's slot */
        } else {
            u->src = stage;
            stage += u->stored;
        }
    }
    /* 1: what the caller reads itself; 2: the rest read, checked and decoded on the pool */
    advise_window(f, w);
    size_t njobs = read_in_caller(f, w);
    for (size_t k = 0; k < njobs; k++) {
        const hcomp_read_unit *u = &f->units[k];
        const hcomp_piece *p = &f->pieces[u->piece];
        hcomp_job *j = &f->rjobs[k];
        j->decode = 1;
        j->src = u->src;
        j->len = u->table_len ? u->table_len : u->stored;
        j->blocks_at_dst = u->table_len != 0;
        j->codec = u->as_is ? HCOMP_CODEC_NONE : p->codec;
        j->filter = u->as_is ? HCOMP_FILTER_NONE : p->filter;
        j->block_size = u->whole && p->frame ? piece_block_size(p) : 0;
        j->dst = u->dst;
        j->dst_len = u->raw;
        j->want_crc = u->crc;
        j->block_crcs = u->nblk > 1 ? f->unit_crcs + u->crcs : NULL;
        j->check_block = piece_block_size(p);
        j->fetch = u->in_job ? unit_fetch : NULL;
        j->fetch_arg = &f->units[k];
    }
    if (njobs > 0)
        hcomp_jobs_start(f->rjobs, njobs, f->opts.threads);
    for (size_t k = 0; k < njobs; k++)
        hcomp_jobs_wait(f->rjobs, njobs, k);
    /* 3: in order: the parts wanted of cached blocks, feedback, the first failure */
    int64_t fed = -1;
    for (size_t k = 0; k < w->n; k++) {
        hcomp_read_unit *u = &f->units[k];
        const hcomp_piece *p = &f->pieces[u->piece];
        if (u->in_job && k < njobs && !u->read_errno && !u->short_read)
            observe_read(f, &f->segs[p->seg], u->stored, u->read_s);
        f->stats.read_units++;
        f->stats.read_fetched += (u->whole ? HCOMP_PIECE_HEADER_SIZE : 0) + (uint64_t) u->stored;
        f->stats.read_decoded += u->as_is ? 0 : u->raw;
        if (k < njobs && f->rjobs[k].rc != HCOMP_OK && span_ahead_kept(f, u, &f->rjobs[k]))
            f->rjobs[k].rc = HCOMP_OK;
        if (k >= njobs || f->rjobs[k].rc != HCOMP_OK) {
            int rc = unit_failed(f, u, k < njobs ? &f->rjobs[k] : NULL, err);
            *failed = u->logical;
            for (; k < w->n; k++)
                if (f->units[k].slot >= 0)
                    f->cache[f->units[k].slot].piece = -1;
            return rc;
        }
        if (u->slot >= 0) {
            f->cache[u->slot].piece = u->piece;
            f->cache[u->slot].block = u->block;
            f->cache[u->slot].nblk = u->nblk;
            memcpy(u->copy_to, u->dst + u->copy_from, u->copy_len);
        }
        if (!u->as_is && p->level != HCOMP_MAP_LEVEL_UNKNOWN && fed != (int64_t) u->piece) {
            fed = u->piece;     /* a model is per codec and level; once per piece a round */
            hcomp_engine_read_feedback(&f->eng, p->codec, p->level, p->filter, u->raw,
                                       u->stored, u->dst, f->rjobs[k].seconds);
        }
    }
    return HCOMP_OK;
}

/* Read [cur, end) of the file into out (which holds [off, end)); *failed as above. */
static int read_range(hcomp_file *f, unsigned char *out, uint64_t off, uint64_t cur, uint64_t end,
                      uint64_t *failed, hcomp_error *err)
{
    size_t i = hcomp_extent_map_find(&f->map, cur);
    while (cur < end) {
        read_window w = {0, 0, 0, 0};
        int rc = HCOMP_OK;
        uint64_t planned = cur;
        while (planned < end && rc == HCOMP_OK) {
            const hcomp_extent *e = i < f->map.n ? &f->map.v[i] : NULL;
            if (e == NULL || e->off > planned) {        /* a hole */
                uint64_t stop = (e && e->off < end) ? e->off : end;
                memset(out + (planned - off), 0, (size_t) (stop - planned));
                planned = stop;
                continue;
            }
            uint64_t stop = e->off + e->len < end ? e->off + e->len : end;
            uint32_t lo = (uint32_t) (e->piece_off + (planned - e->off));
            uint32_t hi = (uint32_t) (lo + (stop - planned)), done;
            rc = plan_piece(f, &w, e->piece, lo, hi, out + (planned - off), &done, err);
            if (rc != HCOMP_OK) {
                *failed = planned;
                break;
            }
            planned += done - lo;
            if (done < hi)
                break;          /* the window is full */
            i++;
        }
        uint64_t failed_run = UINT64_MAX;
        int rrc = run_window(f, &w, &failed_run, err);
        if (rrc != HCOMP_OK) {
            *failed = failed_run;
            return rrc;
        }
        if (rc != HCOMP_OK)
            return rc;
        cur = planned;
    }
    return HCOMP_OK;
}

/* A read needs pieces on another node's node-local tier (f->remote_*). While a process
 * of the file holds the write-back lock (a closed handle moving its pieces to a shared
 * tier: file/writeback.c), and for at most hcomp_drain_wait seconds, sleep and replay
 * the log: 1 when the read should try again, else 0 with the error in err. */
static int remote_wait(hcomp_file *f, uint64_t generation, double wait_from, hcomp_error *err)
{
    hcomp_error again;
    if (hcomp_log_refresh(f, &again) != HCOMP_OK)
        return 0;
    if (f->generation != generation)
        return 1;               /* moves recorded: read again at once */
    double waited = hcomp_now() - wait_from;
    int held = hcomp_drain_lock_held(f->map_fd);
    if (held == 1 && waited < f->opts.drain_wait) {
        double nap = waited < 1.0 ? 0.02 : 0.2;     /* soon at first: a drain is fast */
        struct timespec ts = {0, (long) (nap * 1e9)};
        nanosleep(&ts, NULL);
        return 1;
    }
    if (f->remote_seg >= f->nsegs)   /* renumbered by a replay of a rewritten log */
        return hcomp_fail(err, HCOMP_E_IO, "%s: logical bytes [%llu, %llu) were on another "
                          "node's node-local tier", f->path, (unsigned long long) f->remote_off,
                          (unsigned long long) (f->remote_off + f->remote_len)), 0;
    const hcomp_segment *s = &f->segs[f->remote_seg];
    char why[160];
    if (held == 1)
        snprintf(why, sizeof(why), "its write-back is still moving them after "
                 "hcomp_drain_wait=%g s", f->opts.drain_wait);
    else if (held == 0)
        snprintf(why, sizeof(why), "no process is moving them (its writer died, or wrote with "
                 "hcomp_drain=never)");
    else
        snprintf(why, sizeof(why), "no byte-range locks here to tell whether a process is "
                 "moving them");
    hcomp_fail(err, HCOMP_E_IO, "%s: logical bytes [%llu, %llu) are on node-local tier \"%s\" "
               "of node %s (this process runs on %s): `hcomp drain %s` on node %s moves them "
               "to a shared tier; %s (waited %.1f s)", f->path,
               (unsigned long long) f->remote_off,
               (unsigned long long) (f->remote_off + f->remote_len), s->tier, s->node,
               f->node, f->path, s->node, why, waited);
    return 0;
}

int hcomp_file_pread_locked(hcomp_file *f, void *buf, uint64_t len, uint64_t off, uint64_t *nread,
                     hcomp_error *err)
{
    hcomp_ok(err);
    *nread = 0;
    /* atomic mode: a log created since the last listing counts even where the file
     * system caches the directory's times */
    int rc = f->atomic ? hcomp_wlog_scan(f, 1, err) : HCOMP_OK;
    if (rc == HCOMP_OK)
        rc = hcomp_log_refresh(f, err);
    if (rc == HCOMP_OK)
        rc = hcomp_log_check_lost(f, err);
    if (rc != HCOMP_OK)
        return rc;
    if (off >= f->size || len == 0)
        return HCOMP_OK;
    uint64_t end = f->size - off < len ? f->size : off + len;
    uint64_t cur = off;
    double t0 = hcomp_now();
    f->ra_seq = off == f->ra_next;
    int late_waits = 0;
    double wait_from = -1;
    for (int retries = 0;; retries++) {
        uint64_t generation = f->generation, failed = cur;
        f->remote_miss = 0;
        rc = read_range(f, buf, off, cur, end, &failed, err);
        if (rc == HCOMP_OK)
            break;
        if (f->remote_miss && rc == HCOMP_E_IO) {
            /* bytes on another node's node-local tier: wait while a write-back is moving
             * the file's pieces, then go on from where the read stopped */
            if (wait_from < 0)
                wait_from = hcomp_now();
            if (!remote_wait(f, generation, wait_from, err))
                return HCOMP_E_IO;
            retries = -1;
            cur = failed < cur ? cur : failed;
            if (cur >= end)
                break;
            hcomp_ok(err);
            continue;
        }
        /* another writer may have overwritten the piece (and freed its space) or moved it:
         * replay, and if the map changed, the rest of the read goes on from where it
         * failed on the new one (what was read stays: a read racing with writes of other
         * processes sees some of each, as MPI allows) */
        hcomp_error again;
        if (retries >= READ_RETRIES || hcomp_log_refresh(f, &again) != HCOMP_OK)
            return rc;
        if (generation == f->generation) {
            /* several writers' logs (format 3, maybe on other nodes): a record can reach
             * this client before the piece it names when neither was synced (a distributed
             * file system's write-behind sends each file's bytes on its own), which MPI
             * allows; the piece follows soon, so wait a little before calling it damage */
            if (rc != HCOMP_E_CORRUPT || f->nwlogs < 2 || late_waits >= READ_LATE_WAITS)
                return rc;
            late_waits++;
            struct timespec nap = {0, READ_LATE_WAIT_NS};
            nanosleep(&nap, NULL);
        }
        cur = failed < cur ? cur : failed;
        if (cur >= end)
            break;
        hcomp_ok(err);
    }
    *nread = end - off;
    hcomp_read_ahead(f, off, end);
    f->stats.reads++;
    f->stats.read_bytes += end - off;
    f->stats.t_read += hcomp_now() - t0;
    return HCOMP_OK;
}
