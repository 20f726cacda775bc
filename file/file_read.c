/* Reading: replay what others appended, then copy from the pieces that overlap
 * the range (decoding each at most once; a piece read whole is decoded straight
 * into the caller's buffer, or read straight into it when stored uncompressed) and
 * zeros for holes. */
#include "file_internal.h"
#include "common/util.h"
#include "engine/filter.h"
#include "engine/engine.h"
#include "common/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int segment_fd(hcomp_file *f, hcomp_segment *s, uint64_t off, uint32_t len, hcomp_error *err)
{
    if (s->fd >= 0)
        return HCOMP_OK;
    if (s->node_local && strcmp(s->node, hcomp_node_name()) != 0)
        return hcomp_fail(err, HCOMP_E_IO, "%s: logical bytes [%llu, %llu) are on node-local tier "
                          "\"%s\" of node %s, and this process runs on node %s; open the file "
                          "there, or have the writer drain it to a shared tier (hcomp_drain=close)",
                          f->path, (unsigned long long) off, (unsigned long long) (off + len),
                          s->tier, s->node, hcomp_node_name());
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

static int piece_load_once(hcomp_file *f, uint32_t idx, unsigned char *dst, hcomp_error *err);

/* No writer makes a piece larger than the largest piece size, nor stores more than its
 * codec's bound of that: a record that says so is damaged (and must not make a reader
 * allocate gigabytes). */
int hcomp_piece_size_ok(const hcomp_file *f, const hcomp_piece *p, hcomp_error *err)
{
    const hcomp_codec *c = hcomp_codec_by_id(p->codec);
    if (c == NULL)
        return hcomp_fail(err, HCOMP_E_CORRUPT, "%s: unknown codec id %u in the piece at logical "
                          "offset %llu", f->path, (unsigned) p->codec, (unsigned long long) p->start);
    if (p->raw_len <= HCOMP_PIECE_SIZE_MAX && p->stored_len <= c->bound(p->raw_len))
        return HCOMP_OK;
    return hcomp_fail(err, HCOMP_E_CORRUPT, "%s: the mapping file names a piece of %u bytes "
                      "stored in %u at logical offset %llu, larger than any piece hcomp writes "
                      "(%u bytes): it is damaged", f->path, (unsigned) p->raw_len,
                      (unsigned) p->stored_len, (unsigned long long) p->start,
                      (unsigned) HCOMP_PIECE_SIZE_MAX);
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

int hcomp_piece_fetch(hcomp_file *f, uint32_t idx, unsigned char *hdr, unsigned char *payload,
                      hcomp_error *err)
{
    const hcomp_piece *p = &f->pieces[idx];
    hcomp_segment *s = &f->segs[p->seg];
    int rc = segment_fd(f, s, p->start, p->raw_len, err);
    if (rc != HCOMP_OK)
        return rc;
    size_t total = HCOMP_PIECE_HEADER_SIZE + (size_t) p->stored_len;
    /* the lengths come from the mapping file: the caller checked them before allocating */
    if ((rc = hcomp_piece_size_ok(f, p, err)) != HCOMP_OK)
        return rc;
    double t0 = hcomp_now();
    long long got = hcomp_pread2_full(s->fd, hdr, HCOMP_PIECE_HEADER_SIZE, payload, p->stored_len,
                                      p->seg_off);
    for (int t = 0; t < f->cfg.ntiers; t++)    /* emulated tiers are slow to read too */
        if (strcmp(f->cfg.tier[t].name, s->tier) == 0)
            hcomp_tier_emulate(&f->cfg.tier[t], total, 0, t0);
    if (got < 0)
        return hcomp_fail_errno(err, errno, "%s: reading %s (tier \"%s\")", f->path, s->path, s->tier);
    hcomp_piece_header h;
    if ((size_t) got < total)
        return hcomp_fail(err, HCOMP_E_CORRUPT, "%s: piece at %llu of %s (tier \"%s\") is truncated "
                          "(%lld of %zu bytes); logical bytes from %llu cannot be read", f->path,
                          (unsigned long long) p->seg_off, s->path, s->tier, got, total,
                          (unsigned long long) p->start);
    if (hcomp_piece_header_decode(hdr, &h) != 0 || h.raw_len != p->raw_len ||
        h.stored_len != p->stored_len || h.codec != p->codec || h.filter != p->filter ||
        h.start != (p->start & HCOMP_PIECE_MAX_OFFSET))
        return hcomp_fail(err, HCOMP_E_CORRUPT, "%s: piece header at %llu of %s (tier \"%s\") does "
                          "not match the mapping file", f->path, (unsigned long long) p->seg_off,
                          s->path, s->tier);
    if (hcomp_crc32(payload, p->stored_len) != p->crc)
        return hcomp_fail(err, HCOMP_E_CORRUPT, "%s: checksum mismatch in the piece at %llu of %s "
                          "(tier \"%s\", logical bytes from %llu): the stored data is damaged",
                          f->path, (unsigned long long) p->seg_off, s->path, s->tier,
                          (unsigned long long) p->start);
    if (hcomp_codec_by_id(p->codec) == NULL)
        return hcomp_fail(err, HCOMP_E_CORRUPT, "%s: unknown codec id %u in %s", f->path,
                          (unsigned) p->codec, s->path);
    if (!hcomp_filter_fits(p->filter, hcomp_codec_by_id(p->codec)))
        return hcomp_fail(err, HCOMP_E_CORRUPT, "%s: filter %u (unknown, or not one codec %s "
                          "carries) in %s", f->path, (unsigned) p->filter,
                          hcomp_codec_by_id(p->codec)->name, s->path);
    return HCOMP_OK;
}

static int piece_load_once(hcomp_file *f, uint32_t idx, unsigned char *dst, hcomp_error *err)
{
    const hcomp_piece *p = &f->pieces[idx];
    hcomp_segment *s = &f->segs[p->seg];
    /* the lengths come from the mapping file: check them before allocating for them */
    int rc = hcomp_piece_size_ok(f, p, err);
    if (rc != HCOMP_OK)
        return rc;
    /* a piece stored as it is goes straight into dst (one copy fewer: on page-cache-speed
     * tiers the copies are the cost); anything else is read whole, then decoded into dst */
    int direct = p->codec == HCOMP_CODEC_NONE && p->filter == HCOMP_FILTER_NONE &&
                 p->stored_len == p->raw_len;
    if (!direct && hcomp_grow(&f->rbuf, &f->rbuf_cap, p->stored_len ? p->stored_len : 1) != 0)
        return hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory reading a piece", f->path);
    unsigned char hdr[HCOMP_PIECE_HEADER_SIZE];
    unsigned char *payload = direct ? dst : f->rbuf;
    if ((rc = hcomp_piece_fetch(f, idx, hdr, payload, err)) != HCOMP_OK)
        return rc;
    const hcomp_codec *c = hcomp_codec_by_id(p->codec);
    if (direct)
        return HCOMP_OK;
    double t1 = hcomp_now();
    if (hcomp_filter_decode(c, p->filter, payload, p->stored_len, dst, p->raw_len, &f->unfilter,
                            &f->unfilter_cap) != HCOMP_OK)
        return hcomp_fail(err, HCOMP_E_CORRUPT, "%s: %s could not decode the piece at %llu of %s "
                          "(tier \"%s\", logical bytes [%llu, %llu))", f->path, c->name,
                          (unsigned long long) p->seg_off, s->path, s->tier,
                          (unsigned long long) p->start,
                          (unsigned long long) (p->start + p->raw_len));
    if (p->level != HCOMP_MAP_LEVEL_UNKNOWN)    /* a model is per codec and level */
        hcomp_engine_read_feedback(&f->eng, p->codec, p->level, p->filter, p->raw_len,
                                   p->stored_len, dst, hcomp_now() - t1);
    return HCOMP_OK;
}

/* The cache slot holding piece idx, or -1. */
static int cache_find(const hcomp_file *f, uint32_t idx)
{
    for (int i = 0; i < HCOMP_READ_CACHE_SLOTS; i++)
        if (f->cache[i].piece == (int64_t) idx)
            return i;
    return -1;
}

/* The logical bytes of a piece, through the cache of recently decoded pieces (readers
 * that hop between pieces, like data sieving or a subset of records, decode each once). */
static int piece_bytes(hcomp_file *f, uint32_t idx, const unsigned char **out, hcomp_error *err)
{
    int s = cache_find(f, idx);
    if (s < 0) {
        uint64_t raw = f->pieces[idx].raw_len ? f->pieces[idx].raw_len : 1;
        int slots = (int) (HCOMP_READ_CACHE_BYTES / raw);
        slots = slots < 1 ? 1 : slots > HCOMP_READ_CACHE_SLOTS ? HCOMP_READ_CACHE_SLOTS : slots;
        s = 0;      /* an empty slot, else the least recently used */
        for (int i = 1; i < slots && f->cache[s].piece >= 0; i++)
            if (f->cache[i].piece < 0 || f->cache[i].used < f->cache[s].used)
                s = i;
        struct hcomp_read_cache *c = &f->cache[s];
        c->piece = -1;
        int rc = hcomp_piece_size_ok(f, &f->pieces[idx], err);
        if (rc != HCOMP_OK)
            return rc;
        if (hcomp_grow(&c->buf, &c->cap, raw) != 0)
            return hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory", f->path);
        rc = hcomp_piece_load(f, idx, c->buf, err);
        if (rc != HCOMP_OK)
            return rc;
        c->piece = idx;
    }
    f->cache[s].used = ++f->cache_tick;
    *out = f->cache[s].buf;
    return HCOMP_OK;
}

int hcomp_file_pread_locked(hcomp_file *f, void *buf, uint64_t len, uint64_t off, uint64_t *nread,
                     hcomp_error *err)
{
    hcomp_ok(err);
    *nread = 0;
    int rc = hcomp_log_refresh(f, err);
    if (rc == HCOMP_OK)
        rc = hcomp_log_check_lost(f, err);
    if (rc != HCOMP_OK)
        return rc;
    if (off >= f->size || len == 0)
        return HCOMP_OK;
    uint64_t end = f->size - off < len ? f->size : off + len;
    unsigned char *out = buf;
    uint64_t cur = off;
    size_t i = hcomp_extent_map_find(&f->map, off);
    int retries = 0;
    while (cur < end) {
        const hcomp_extent *e = i < f->map.n ? &f->map.v[i] : NULL;
        if (e == NULL || e->off > cur) {        /* a hole */
            uint64_t stop = (e && e->off < end) ? e->off : end;
            memset(out + (cur - off), 0, (size_t) (stop - cur));
            cur = stop;
            continue;
        }
        uint64_t stop = e->off + e->len < end ? e->off + e->len : end;
        uint64_t in_piece = e->piece_off + (cur - e->off);
        uint32_t piece = e->piece;
        const hcomp_piece *p = &f->pieces[piece];
        uint64_t generation = f->generation;
        if (in_piece == 0 && stop - cur == p->raw_len && cache_find(f, piece) < 0) {
            rc = hcomp_piece_load(f, piece, out + (cur - off), err);
        } else {
            const unsigned char *bytes = NULL;
            rc = piece_bytes(f, piece, &bytes, err);
            if (rc == HCOMP_OK)
                memcpy(out + (cur - off), bytes + in_piece, (size_t) (stop - cur));
        }
        if (rc != HCOMP_OK && (generation == f->generation || ++retries > 64))
            return rc;
        if (rc == HCOMP_OK)
            cur = stop;
        /* else the retry replayed new records: another writer overwrote the piece (and
         * freed its space) or moved it; and whenever the map changed, the rest of the
         * read goes on from here on the new one (what was read stays: a read racing
         * with writes of other processes sees some of each, as MPI allows) */
        i = generation == f->generation ? i + 1 : hcomp_extent_map_find(&f->map, cur);
    }
    *nread = end - off;
    return HCOMP_OK;
}
