/* Block framing of pieces: encoding, block by block. */
#include "framing.h"
#include "filter.h"
#include "common/util.h"
#include "tiers/piece_header.h"

#include <string.h>

size_t hcomp_frame_bound(const hcomp_codec *c, uint32_t len, uint32_t block_size)
{
    uint32_t n = hcomp_frame_blocks(len, block_size);
    if (n == 0)
        return 0;
    size_t last = len - (size_t) (n - 1) * block_size;
    size_t b = c ? c->bound(block_size) : block_size, bl = c ? c->bound(last) : last;
    if (b < block_size || bl < last || b > SIZE_MAX / n)
        return SIZE_MAX;
    return (size_t) (n - 1) * b + bl;
}

int hcomp_frame_encode(const hcomp_codec *c, int level, int filter, uint32_t block_size,
                       const unsigned char *src, uint32_t len, unsigned char **tmp,
                       size_t *tmp_cap, unsigned char *dst, size_t dst_cap, unsigned char *table,
                       size_t *dst_len, uint64_t *coded, uint32_t *any)
{
    uint32_t n = hcomp_frame_blocks(len, block_size);
    hcomp_block_table_init(table, block_size, n);
    size_t pos = 0;
    *coded = 0;
    *any = 0;
    for (uint32_t i = 0; i < n; i++) {
        const unsigned char *in = src + (size_t) i * block_size;
        uint32_t raw = i + 1 < n ? block_size : len - i * block_size;
        size_t clen = 0;
        int rc = hcomp_filter_encode(c, level, filter, in, raw, tmp, tmp_cap, dst + pos,
                                     dst_cap - pos, &clen);
        if (rc != HCOMP_OK)
            return rc;
        *coded += clen;
        if (clen >= raw) {          /* stored as it is: the reader knows it by its length */
            memcpy(dst + pos, in, raw);
            clen = raw;
            hcomp_block_table_set(table, i, raw, 0);    /* checksummed below, if kept */
        } else {
            ++*any;
            hcomp_block_table_set(table, i, (uint32_t) clen, hcomp_crc32(dst + pos, clen));
        }
        pos += clen;
    }
    *dst_len = pos;
    /* a piece no block of which shrank is framed again in HCOMP_BLOCK_AS_IS blocks by the
     * caller: its blocks at this size are checksummed only when some others shrank */
    for (uint32_t i = 0, at = 0; *any > 0 && i < n; i++) {
        uint32_t raw = i + 1 < n ? block_size : len - i * block_size;
        uint32_t s = hcomp_block_stored(table, i);
        if (s == raw)
            hcomp_block_table_set(table, i, s, hcomp_crc32(dst + at, s));
        at += s;
    }
    return HCOMP_OK;
}

void hcomp_frame_table_raw(uint32_t block_size, const unsigned char *src, uint32_t len,
                           unsigned char *table)
{
    uint32_t n = hcomp_frame_blocks(len, block_size);
    hcomp_block_table_init(table, block_size, n);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t raw = i + 1 < n ? block_size : len - i * block_size;
        hcomp_block_table_set(table, i, raw, hcomp_crc32(src + (size_t) i * block_size, raw));
    }
}

static size_t bound_as_is(size_t n)
{
    return n;
}

int hcomp_frame_check_raw(const unsigned char *table, size_t table_len, const unsigned char *dst,
                          uint32_t raw_len, uint32_t block_size, int64_t *bad)
{
    uint32_t n = hcomp_frame_blocks(raw_len, block_size);
    *bad = -1;
    /* lengths no larger than the blocks' and adding up to them: each is its block's */
    if (table_len != hcomp_block_table_size(n) ||
        hcomp_block_table_check(table, raw_len, block_size, (uint64_t) table_len + raw_len,
                                bound_as_is) != 0)
        return HCOMP_E_CORRUPT;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t len = i + 1 < n ? block_size : raw_len - i * block_size;
        if (hcomp_crc32(dst + (size_t) i * block_size, len) != hcomp_block_crc(table, i)) {
            *bad = i;
            return HCOMP_E_CORRUPT;
        }
    }
    return HCOMP_OK;
}

/* The blocks of a framed payload in turn: checksum, then (out not NULL) decoding, into
 * out + i * block_size, or into out itself when one_out (a scan). Without damaged it stops
 * at the first damaged block (*bad); with it, flags each and goes on. */
static int frame_walk(const hcomp_codec *c, int filter, const unsigned char *payload,
                      uint32_t stored_len, uint32_t raw_len, uint32_t block_size,
                      unsigned char *out, int one_out, unsigned char **tmp, size_t *tmp_cap,
                      int64_t *bad, int *bad_crc, unsigned char *damaged, uint32_t *ndamaged)
{
    *bad = -1;
    if (bad_crc != NULL)
        *bad_crc = 0;
    if (block_size == 0 && stored_len >= HCOMP_BLOCK_TABLE_FIXED)
        block_size = hcomp_get_u32(payload);
    if (c == NULL || hcomp_frame_of_block_size(block_size) == 0 || !hcomp_filter_fits(filter, c))
        return HCOMP_E_CORRUPT;
    uint32_t n = hcomp_frame_blocks(raw_len, block_size);
    size_t tlen = hcomp_block_table_size(n);
    if (stored_len < tlen ||
        hcomp_block_table_check(payload, raw_len, block_size, stored_len, c->bound) != 0)
        return HCOMP_E_CORRUPT;
    const unsigned char *in = payload + tlen;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t raw = i + 1 < n ? block_size : raw_len - i * block_size;
        uint32_t s = hcomp_block_stored(payload, i);
        int crc_bad = hcomp_crc32(in, s) != hcomp_block_crc(payload, i), ok = !crc_bad;
        if (ok && out != NULL) {
            unsigned char *o = one_out ? out : out + (size_t) i * block_size;
            if (s == raw)
                memcpy(o, in, raw);
            else
                ok = c->id != HCOMP_CODEC_NONE &&
                     hcomp_filter_decode(c, filter, in, s, o, raw, tmp, tmp_cap) == HCOMP_OK;
        }
        in += s;
        if (ok)
            continue;
        if (damaged == NULL) {
            *bad = i;
            if (bad_crc != NULL)
                *bad_crc = crc_bad;
            return HCOMP_E_CORRUPT;
        }
        damaged[i] = crc_bad ? 1 : 2;
        ++*ndamaged;
    }
    return HCOMP_OK;
}

int hcomp_frame_decode(const hcomp_codec *c, int filter, const unsigned char *payload,
                       uint32_t stored_len, uint32_t raw_len, uint32_t block_size,
                       unsigned char *dst, unsigned char **tmp, size_t *tmp_cap, int64_t *bad,
                       int *bad_crc)
{
    return frame_walk(c, filter, payload, stored_len, raw_len, block_size, dst, 0, tmp, tmp_cap,
                      bad, bad_crc, NULL, NULL);
}

int hcomp_frame_scan(const hcomp_codec *c, int filter, const unsigned char *payload,
                     uint32_t stored_len, uint32_t raw_len, uint32_t block_size,
                     unsigned char *out, unsigned char **tmp, size_t *tmp_cap,
                     unsigned char *damaged, uint32_t *ndamaged)
{
    int64_t bad;
    *ndamaged = 0;
    if (block_size == 0)        /* the caller's, from the piece's record */
        return HCOMP_E_CORRUPT;
    memset(damaged, 0, hcomp_frame_blocks(raw_len, block_size));
    return frame_walk(c, filter, payload, stored_len, raw_len, block_size, out, 1, tmp, tmp_cap,
                      &bad, NULL, damaged, ndamaged);
}
