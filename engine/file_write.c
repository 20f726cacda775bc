/* Writing a task: split it into pieces of at most hcomp_piece_size logical bytes,
 * compress each (stored raw when it does not shrink), place it on the first tier
 * with room (a piece that does not fit is cut at a 4 KiB multiple and the rest
 * spills to the next tier), then record all of the task's pieces with one append
 * to the mapping file. */
#include "file_internal.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

typedef struct piece_out {
    const unsigned char *payload;
    uint32_t stored_len;
    uint8_t codec;
} piece_out;

/* Compress len bytes of src into f->scratch, or keep them raw. */
static int encode(hcomp_file *f, const unsigned char *src, uint32_t len, piece_out *out,
                  hcomp_error *err)
{
    const hcomp_codec *c = f->opts.codec;
    out->payload = src;
    out->stored_len = len;
    out->codec = HCOMP_CODEC_NONE;
    if (c->id == HCOMP_CODEC_NONE || len == 0)
        return HCOMP_OK;
    size_t bound = c->bound(len);
    if (hcomp_grow(&f->scratch, &f->scratch_cap, bound) != 0)
        return hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory compressing", f->path);
    size_t clen = 0;
    if (c->compress(src, len, f->scratch, bound, &clen, f->opts.level) != HCOMP_OK)
        return hcomp_fail(err, HCOMP_E_IO, "%s: codec %s failed to compress %u bytes", f->path,
                          c->name, (unsigned) len);
    if (clen < len) {
        out->payload = f->scratch;
        out->stored_len = (uint32_t) clen;
        out->codec = (uint8_t) c->id;
    }
    return HCOMP_OK;
}

/* First tier with room for need bytes (reserving more capacity from the tier's
 * ledger when this opener's reservation is short), or -1. */
static int first_fit(hcomp_file *f, uint64_t need, hcomp_error *err, int *rc)
{
    *rc = HCOMP_OK;
    for (int t = 0; t < f->cfg.ntiers; t++) {
        hcomp_tier_writer *w = &f->tw[t];
        if (w->full)
            continue;
        if (w->budget < need && (*rc = hcomp_tier_reserve(f, t, need - w->budget, err)) != HCOMP_OK)
            return -1;
        if (w->budget >= need)
            return t;
    }
    return -1;
}

static int no_space(hcomp_file *f, uint64_t need, hcomp_error *err)
{
    char tiers[512] = "";
    for (int t = 0; t < f->cfg.ntiers; t++) {
        size_t l = strlen(tiers);
        snprintf(tiers + l, sizeof(tiers) - l, "%s%s: %s", t ? "; " : "", f->cfg.tier[t].name,
                 f->tw[t].full ? "full (ENOSPC)" : "capacity reached");
    }
    return hcomp_fail(err, HCOMP_E_NOSPC, "%s: no tier has room for a %llu-byte piece (%s); "
                      "raise a tier's capacity in %s or free space", f->path,
                      (unsigned long long) need, tiers, f->cfg.source);
}

/* Store one encoded piece on tier t; HCOMP_E_NOSPC means the tier is full. */
static int store(hcomp_file *f, int t, uint64_t start, uint32_t raw_len, const piece_out *p,
                 uint64_t *seg_off, hcomp_error *err)
{
    int is_new;
    int rc = hcomp_tier_writer_segment(f, t, &is_new, err);
    if (rc != HCOMP_OK)
        return rc;
    hcomp_tier_writer *w = &f->tw[t];
    unsigned char hdr[HCOMP_PIECE_HEADER_SIZE];
    hcomp_piece_header h = {start, raw_len, p->stored_len, p->codec, 0};
    hcomp_piece_header_encode(&h, hdr);
    struct iovec iov[2] = {{hdr, sizeof(hdr)}, {(void *) p->payload, p->stored_len}};
    size_t total = sizeof(hdr) + p->stored_len, done = 0;
    while (done < total) {
        ssize_t n = pwritev(w->seg_fd, iov, 2, (off_t) (w->seg_tail + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            int e = n < 0 ? errno : ENOSPC;
            if (e == ENOSPC || e == EDQUOT) {
                w->full = 1;
                return HCOMP_E_NOSPC;
            }
            return hcomp_fail_errno(err, e, "%s: writing segment %s/%s on tier \"%s\"", f->path,
                                    w->dir, w->seg_name, f->cfg.tier[t].name);
        }
        done += (size_t) n;
        for (int i = 0; i < 2 && n > 0; i++) {  /* advance past what was written */
            size_t k = (size_t) n < iov[i].iov_len ? (size_t) n : iov[i].iov_len;
            iov[i].iov_base = (char *) iov[i].iov_base + k;
            iov[i].iov_len -= k;
            n -= (ssize_t) k;
        }
    }
    if (is_new && hcomp_map_encode_segment(&f->batch, w->seg_id, f->cfg.tier[t].name, w->dir,
                                           w->seg_name) != 0)
        return hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory", f->path);
    *seg_off = w->seg_tail;
    w->seg_tail += total;
    if (w->budget != UINT64_MAX)
        w->budget -= total < w->budget ? total : w->budget;
    return HCOMP_OK;
}

int hcomp_file_pwrite(hcomp_file *f, const void *buf, uint64_t len, uint64_t off,
                      hcomp_error *err)
{
    hcomp_ok(err);
    if (!f->writable)
        return hcomp_fail(err, HCOMP_E_RDONLY, "%s: opened read-only", f->path);
    if (len == 0)
        return HCOMP_OK;
    if (off > HCOMP_PIECE_MAX_OFFSET_BYTES || len > HCOMP_PIECE_MAX_OFFSET_BYTES - off)
        return hcomp_fail(err, HCOMP_E_INVAL, "%s: write of %llu bytes at %llu goes beyond "
                          "hcomp's limit of 256 TiB", f->path, (unsigned long long) len,
                          (unsigned long long) off);
    for (int t = 0; t < f->cfg.ntiers; t++) {
        int rc = hcomp_tier_writer_prepare(f, t, err);
        if (rc != HCOMP_OK)
            return rc;
    }
    const unsigned char *src = buf;
    f->batch.len = 0;
    uint64_t pos = 0;
    while (pos < len) {
        uint32_t chunk = len - pos < f->opts.piece_size ? (uint32_t) (len - pos) : f->opts.piece_size;
        piece_out p;
        int rc = encode(f, src + pos, chunk, &p, err);
        for (;;) {
            if (rc != HCOMP_OK)
                return rc;
            uint64_t need = HCOMP_PIECE_HEADER_SIZE + (uint64_t) p.stored_len;
            uint64_t least = HCOMP_PIECE_HEADER_SIZE + HCOMP_PIECE_ALIGN;
            int t = first_fit(f, need < least ? need : least, err, &rc);
            if (rc != HCOMP_OK)
                return rc;
            if (t < 0)
                return no_space(f, need, err);
            if (f->tw[t].budget < need) {
                /* fill this tier with the largest 4 KiB multiple it holds even raw;
                 * the rest of the piece spills to the next tier */
                uint64_t room = f->tw[t].budget - HCOMP_PIECE_HEADER_SIZE;
                chunk = (uint32_t) (room / HCOMP_PIECE_ALIGN * HCOMP_PIECE_ALIGN);
                rc = encode(f, src + pos, chunk, &p, err);
                continue;
            }
            uint64_t seg_off = 0;
            rc = store(f, t, off + pos, chunk, &p, &seg_off, err);
            if (rc == HCOMP_E_NOSPC) {
                rc = HCOMP_OK;      /* the tier is marked full: place again */
                continue;
            }
            if (rc != HCOMP_OK)
                return rc;
            hcomp_map_extent e = {off + pos, chunk, 0};
            if (hcomp_map_encode_piece(&f->batch, f->tw[t].seg_id, seg_off, p.stored_len, chunk,
                                       hcomp_crc32(p.payload, p.stored_len), p.codec, 0, &e, 1) != 0)
                return hcomp_fail(err, HCOMP_E_NOMEM, "%s: out of memory", f->path);
            break;
        }
        pos += chunk;
    }
    return hcomp_log_append(f, &f->batch, err);
}
