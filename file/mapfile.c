/* Encoding and decoding of the mapping file's header and records. */
#include "mapfile.h"
#include "common/util.h"

#include <stdlib.h>

int hcomp_bytes_reserve(hcomp_bytes *b, size_t extra)
{
    if (b->len + extra <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra)
        cap *= 2;
    unsigned char *p = realloc(b->p, cap);
    if (p == NULL)
        return -1;
    b->p = p;
    b->cap = cap;
    return 0;
}

void hcomp_bytes_free(hcomp_bytes *b)
{
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

/* header: magic[8] version u32, header size u32, file id[16], created ns u64,
 * log generation u64 (version 3; zero before), 12 reserved zero bytes, crc32 of bytes 0..59 */
void hcomp_map_header_encode(const hcomp_map_header *h, unsigned char out[HCOMP_MAP_HEADER_SIZE])
{
    memset(out, 0, HCOMP_MAP_HEADER_SIZE);
    memcpy(out, HCOMP_MAP_MAGIC, 8);
    hcomp_put_u32(out + 8, h->version);
    hcomp_put_u32(out + 12, HCOMP_MAP_HEADER_SIZE);
    memcpy(out + 16, h->file_id, 16);
    hcomp_put_u64(out + 32, h->created_ns);
    if (h->version >= HCOMP_MAP_VERSION_WLOGS)
        hcomp_put_u64(out + 40, h->log_gen);
    hcomp_put_u32(out + 60, hcomp_crc32(out, 60));
}

int hcomp_map_header_decode(const unsigned char *in, size_t avail, hcomp_map_header *h,
                            const char *path, hcomp_error *err)
{
    if (avail < 8 || memcmp(in, HCOMP_MAP_MAGIC, 8) != 0)
        return hcomp_fail(err, HCOMP_E_NOTHCOMP,
                          "%s is not an hcomp file (no hcomp mapping-file header); open it "
                          "without the hcomp: prefix, or delete it first", path);
    if (avail < HCOMP_MAP_HEADER_SIZE)
        return hcomp_fail(err, HCOMP_E_CORRUPT, "%s: hcomp mapping file truncated in its header "
                          "(%zu of %d bytes)", path, avail, HCOMP_MAP_HEADER_SIZE);
    uint32_t version = hcomp_get_u32(in + 8);
    if (version < HCOMP_MAP_VERSION_MIN || version > HCOMP_MAP_VERSION)
        return hcomp_fail(err, HCOMP_E_VERSION, "%s: hcomp mapping file format version %u; this "
                          "library reads versions %d to %d (upgrade hcomp to read it)", path,
                          (unsigned) version, HCOMP_MAP_VERSION_MIN, HCOMP_MAP_VERSION);
    if (hcomp_get_u32(in + 60) != hcomp_crc32(in, 60) || hcomp_get_u32(in + 12) != HCOMP_MAP_HEADER_SIZE)
        return hcomp_fail(err, HCOMP_E_CORRUPT, "%s: hcomp mapping file header is corrupt "
                          "(checksum mismatch)", path);
    h->version = version;
    memcpy(h->file_id, in + 16, 16);
    h->created_ns = hcomp_get_u64(in + 32);
    h->log_gen = version >= HCOMP_MAP_VERSION_WLOGS ? hcomp_get_u64(in + 40) : 0;
    return HCOMP_OK;
}

/* writer log header: magic[8], version u32 (3), header size u32, file id[16], log
 * generation u64, writer id u64, 12 reserved zero bytes, crc32 of bytes 0..59 */
void hcomp_wlog_header_encode(const hcomp_wlog_header *h, unsigned char out[HCOMP_WLOG_HEADER_SIZE])
{
    memset(out, 0, HCOMP_WLOG_HEADER_SIZE);
    memcpy(out, HCOMP_WLOG_MAGIC, 8);
    hcomp_put_u32(out + 8, HCOMP_MAP_VERSION_WLOGS);
    hcomp_put_u32(out + 12, HCOMP_WLOG_HEADER_SIZE);
    memcpy(out + 16, h->file_id, 16);
    hcomp_put_u64(out + 32, h->log_gen);
    hcomp_put_u64(out + 40, h->writer);
    hcomp_put_u32(out + 60, hcomp_crc32(out, 60));
}

int hcomp_wlog_header_decode(const unsigned char *in, size_t avail, hcomp_wlog_header *h,
                             const char *path, hcomp_error *err)
{
    if (avail < HCOMP_WLOG_HEADER_SIZE || memcmp(in, HCOMP_WLOG_MAGIC, 8) != 0 ||
        hcomp_get_u32(in + 8) != HCOMP_MAP_VERSION_WLOGS ||
        hcomp_get_u32(in + 12) != HCOMP_WLOG_HEADER_SIZE ||
        hcomp_get_u32(in + 60) != hcomp_crc32(in, 60))
        return hcomp_fail(err, HCOMP_E_CORRUPT, "%s: the header of writer log is damaged "
                          "(%zu bytes)", path, avail);
    memcpy(h->file_id, in + 16, 16);
    h->log_gen = hcomp_get_u64(in + 32);
    h->writer = hcomp_get_u64(in + 40);
    return HCOMP_OK;
}

/* 16-bit check of the length and type, so a damaged length is recognised at once
 * instead of being taken for a record still being written. */
static uint16_t frame_check(const unsigned char *frame)
{
    return (uint16_t) (hcomp_crc32(frame + 4, 6) & 0xffff);
}

static unsigned char *frame_begin(hcomp_bytes *b, uint16_t type, size_t payload)
{
    if (payload > HCOMP_MAP_MAX_PAYLOAD || hcomp_bytes_reserve(b, payload + HCOMP_MAP_FRAME_SIZE) != 0)
        return NULL;
    unsigned char *f = b->p + b->len;
    hcomp_put_u32(f, HCOMP_MAP_RECORD_MAGIC);
    hcomp_put_u32(f + 4, (uint32_t) payload);
    hcomp_put_u16(f + 8, type);
    hcomp_put_u16(f + 10, frame_check(f));
    return f + 12;
}

static void frame_end(hcomp_bytes *b, size_t payload)
{
    unsigned char *f = b->p + b->len;
    hcomp_put_u32(f + 12 + payload, hcomp_crc32(f + 4, 8 + payload));
    b->len += payload + HCOMP_MAP_FRAME_SIZE;
}

int hcomp_map_encode_segment(hcomp_bytes *b, uint64_t id, const char *tier, const char *dir,
                             const char *file, const char *node, unsigned flags)
{
    size_t lt = strlen(tier), ld = strlen(dir), lf = strlen(file), ln = strlen(node);
    if (lt > UINT16_MAX || ld > UINT16_MAX || lf > UINT16_MAX || ln > UINT16_MAX)
        return -1;
    size_t payload = HCOMP_MAP_SEGMENT_FIXED + lt + ld + lf + ln;
    unsigned char *p = frame_begin(b, HCOMP_REC_SEGMENT, payload);
    if (p == NULL)
        return -1;
    hcomp_put_u64(p, id);
    hcomp_put_u16(p + 8, (uint16_t) lt);
    hcomp_put_u16(p + 10, (uint16_t) ld);
    hcomp_put_u16(p + 12, (uint16_t) lf);
    hcomp_put_u16(p + 14, (uint16_t) ln);
    hcomp_put_u16(p + 16, (uint16_t) flags);
    hcomp_put_u16(p + 18, 0);
    unsigned char *q = p + HCOMP_MAP_SEGMENT_FIXED;
    memcpy(q, tier, lt);
    memcpy(q + lt, dir, ld);
    memcpy(q + lt + ld, file, lf);
    memcpy(q + lt + ld + lf, node, ln);
    frame_end(b, payload);
    return 0;
}

/* Two bytes, once reserved and zero: bit 0 of the first says the second is the codec
 * level (int8); bits 4..7 of the first are the framing (format version 2). Readers of
 * files without them see "unknown" and "unframed". */
static void put_flags(unsigned char *p, int level, unsigned frame)
{
    int known = level != HCOMP_MAP_LEVEL_UNKNOWN && level >= -128 && level <= 127;
    p[0] = (unsigned char) ((known ? 1 : 0) | ((frame & 0x0f) << 4));
    p[1] = known ? (unsigned char) (int8_t) level : 0;
}

static int get_level(const unsigned char *p)
{
    return (p[0] & 1) ? (int) (int8_t) p[1] : HCOMP_MAP_LEVEL_UNKNOWN;
}

int hcomp_map_encode_piece(hcomp_bytes *b, uint64_t seg_id, uint64_t seg_off,
                           uint32_t stored_len, uint32_t raw_len, uint32_t crc, uint8_t codec,
                           uint8_t filter, int level, unsigned frame,
                           const hcomp_map_extent *ext, uint32_t nextents)
{
    size_t payload = HCOMP_MAP_PIECE_FIXED + (size_t) nextents * HCOMP_MAP_EXTENT_SIZE;
    unsigned char *p = frame_begin(b, HCOMP_REC_PIECE, payload);
    if (p == NULL)
        return -1;
    hcomp_put_u64(p, seg_id);
    hcomp_put_u64(p + 8, seg_off);
    hcomp_put_u32(p + 16, stored_len);
    hcomp_put_u32(p + 20, raw_len);
    hcomp_put_u32(p + 24, crc);
    p[28] = codec;
    p[29] = filter;
    put_flags(p + 30, level, frame);
    hcomp_put_u32(p + 32, nextents);
    for (uint32_t i = 0; i < nextents; i++) {
        unsigned char *e = p + HCOMP_MAP_PIECE_FIXED + (size_t) i * HCOMP_MAP_EXTENT_SIZE;
        hcomp_put_u64(e, ext[i].off);
        hcomp_put_u32(e + 8, ext[i].len);
        hcomp_put_u32(e + 12, ext[i].piece_off);
    }
    frame_end(b, payload);
    return 0;
}

int hcomp_map_encode_size(hcomp_bytes *b, uint64_t size, int mode)
{
    unsigned char *p = frame_begin(b, HCOMP_REC_SIZE, 16);
    if (p == NULL)
        return -1;
    hcomp_put_u64(p, size);
    memset(p + 8, 0, 8);
    p[8] = (unsigned char) mode;
    frame_end(b, 16);
    return 0;
}

/* ORDER: stamp u64, durable u64 (zero from writers before it was defined) */
int hcomp_map_encode_order(hcomp_bytes *b, uint64_t stamp, uint64_t durable)
{
    unsigned char *p = frame_begin(b, HCOMP_REC_ORDER, 16);
    if (p == NULL)
        return -1;
    hcomp_put_u64(p, stamp);
    hcomp_put_u64(p + 8, durable);
    frame_end(b, 16);
    return 0;
}

int hcomp_map_encode_stats(hcomp_bytes *b, const char *json)
{
    size_t n = strlen(json);
    unsigned char *p = frame_begin(b, HCOMP_REC_STATS, n);
    if (p == NULL)
        return -1;
    memcpy(p, json, n);
    frame_end(b, n);
    return 0;
}

int hcomp_map_encode_relocate(hcomp_bytes *b, uint64_t old_seg, uint64_t old_off,
                              uint64_t new_seg, uint64_t new_off, uint32_t stored_len,
                              uint32_t crc, uint8_t codec, uint8_t filter, int level,
                              unsigned frame)
{
    unsigned char *p = frame_begin(b, HCOMP_REC_RELOCATE, 44);
    if (p == NULL)
        return -1;
    hcomp_put_u64(p, old_seg);
    hcomp_put_u64(p + 8, old_off);
    hcomp_put_u64(p + 16, new_seg);
    hcomp_put_u64(p + 24, new_off);
    hcomp_put_u32(p + 32, stored_len);
    hcomp_put_u32(p + 36, crc);
    p[40] = codec;
    p[41] = filter;
    put_flags(p + 42, level, frame);
    frame_end(b, 44);
    return 0;
}

void hcomp_map_extent_at(const hcomp_map_record *rec, uint32_t i, hcomp_map_extent *out)
{
    const unsigned char *e = rec->u.piece.extents + (size_t) i * HCOMP_MAP_EXTENT_SIZE;
    out->off = hcomp_get_u64(e);
    out->len = hcomp_get_u32(e + 8);
    out->piece_off = hcomp_get_u32(e + 12);
}

/* Checks the payload's internal consistency; 0 if valid. */
static int decode_payload(int type, const unsigned char *p, uint32_t n, hcomp_map_record *rec)
{
    rec->type = type;
    switch (type) {
        case HCOMP_REC_SEGMENT: {
            if (n < HCOMP_MAP_SEGMENT_FIXED)
                return -1;
            rec->u.seg.id = hcomp_get_u64(p);
            rec->u.seg.tier_len = hcomp_get_u16(p + 8);
            rec->u.seg.dir_len = hcomp_get_u16(p + 10);
            rec->u.seg.file_len = hcomp_get_u16(p + 12);
            rec->u.seg.node_len = hcomp_get_u16(p + 14);
            rec->u.seg.flags = hcomp_get_u16(p + 16);
            size_t total = (size_t) HCOMP_MAP_SEGMENT_FIXED + rec->u.seg.tier_len +
                rec->u.seg.dir_len + rec->u.seg.file_len + rec->u.seg.node_len;
            if (total != n || rec->u.seg.dir_len == 0 || rec->u.seg.file_len == 0)
                return -1;
            rec->u.seg.tier = (const char *) p + HCOMP_MAP_SEGMENT_FIXED;
            rec->u.seg.dir = rec->u.seg.tier + rec->u.seg.tier_len;
            rec->u.seg.file = rec->u.seg.dir + rec->u.seg.dir_len;
            rec->u.seg.node = rec->u.seg.file + rec->u.seg.file_len;
            return 0;
        }
        case HCOMP_REC_PIECE: {
            if (n < HCOMP_MAP_PIECE_FIXED)
                return -1;
            rec->u.piece.seg_id = hcomp_get_u64(p);
            rec->u.piece.seg_off = hcomp_get_u64(p + 8);
            rec->u.piece.stored_len = hcomp_get_u32(p + 16);
            rec->u.piece.raw_len = hcomp_get_u32(p + 20);
            rec->u.piece.crc = hcomp_get_u32(p + 24);
            rec->u.piece.codec = p[28];
            rec->u.piece.filter = p[29];
            rec->u.piece.level = get_level(p + 30);
            rec->u.piece.frame = p[30] >> 4;
            if (p[30] & 0x0e)
                return -1;
            rec->u.piece.nextents = hcomp_get_u32(p + 32);
            rec->u.piece.extents = p + HCOMP_MAP_PIECE_FIXED;
            if ((uint64_t) HCOMP_MAP_PIECE_FIXED +
                (uint64_t) rec->u.piece.nextents * HCOMP_MAP_EXTENT_SIZE != n)
                return -1;
            for (uint32_t i = 0; i < rec->u.piece.nextents; i++) {
                hcomp_map_extent e;
                hcomp_map_extent_at(rec, i, &e);
                if ((uint64_t) e.piece_off + e.len > rec->u.piece.raw_len || e.len == 0 ||
                    e.off > UINT64_MAX - e.len)
                    return -1;
            }
            return 0;
        }
        case HCOMP_REC_SIZE:
            if (n != 16 || p[8] > HCOMP_SIZE_GROW)
                return -1;
            rec->u.size.size = hcomp_get_u64(p);
            rec->u.size.mode = p[8];
            return 0;
        case HCOMP_REC_RELOCATE:
            if (n != 44)
                return -1;
            rec->u.reloc.old_seg = hcomp_get_u64(p);
            rec->u.reloc.old_off = hcomp_get_u64(p + 8);
            rec->u.reloc.new_seg = hcomp_get_u64(p + 16);
            rec->u.reloc.new_off = hcomp_get_u64(p + 24);
            rec->u.reloc.stored_len = hcomp_get_u32(p + 32);
            rec->u.reloc.crc = hcomp_get_u32(p + 36);
            rec->u.reloc.codec = p[40];
            rec->u.reloc.filter = p[41];
            rec->u.reloc.level = get_level(p + 42);
            rec->u.reloc.frame = p[42] >> 4;
            if (p[42] & 0x0e)
                return -1;
            return 0;
        case HCOMP_REC_ORDER:
            if (n != 16)
                return -1;
            rec->u.order.stamp = hcomp_get_u64(p);
            rec->u.order.durable = hcomp_get_u64(p + 8);
            return 0;
        case HCOMP_REC_STATS:
            rec->u.stats.json = (const char *) p;
            rec->u.stats.len = n;
            return 0;
        default:
            return -1;
    }
}

/* Whether a whole, valid record starts at some offset in [from, to). */
static int valid_record_in(const unsigned char *buf, size_t len, size_t from, size_t to)
{
    for (size_t q = from; q < to && q + 12 <= len; q++) {
        if (hcomp_get_u32(buf + q) != HCOMP_MAP_RECORD_MAGIC ||
            hcomp_get_u16(buf + q + 10) != frame_check(buf + q))
            continue;
        uint32_t n = hcomp_get_u32(buf + q + 4);
        hcomp_map_record r;
        if (n <= HCOMP_MAP_MAX_PAYLOAD && len - q >= (size_t) n + HCOMP_MAP_FRAME_SIZE &&
            hcomp_get_u32(buf + q + 12 + n) == hcomp_crc32(buf + q + 4, 8 + (size_t) n) &&
            decode_payload(hcomp_get_u16(buf + q + 8), buf + q + 12, n, &r) == 0)
            return 1;
    }
    return 0;
}

int hcomp_map_next(const unsigned char *buf, size_t len, size_t *pos, hcomp_map_record *rec,
                   uint64_t *skipped)
{
    return hcomp_map_next_checked(buf, len, pos, rec, skipped, NULL);
}

int hcomp_map_next_checked(const unsigned char *buf, size_t len, size_t *pos,
                           hcomp_map_record *rec, uint64_t *skipped, int *lost)
{
    size_t at = *pos;
    if (len - at < 12)
        return HCOMP_MAP_INCOMPLETE;
    /* Damage is either what a torn append leaves (a record cut short, which its writer
     * never saw succeed, followed by later appends) or bytes of a record that was written
     * whole and then changed (its writer was told it succeeded: what it said is lost). */
    int whole_lost = 1;
    if (hcomp_get_u32(buf + at) == HCOMP_MAP_RECORD_MAGIC &&
        hcomp_get_u16(buf + at + 10) == frame_check(buf + at)) {
        uint32_t n = hcomp_get_u32(buf + at + 4);
        if (n <= HCOMP_MAP_MAX_PAYLOAD) {
            size_t end = at + (size_t) n + HCOMP_MAP_FRAME_SIZE;
            if (len - at < (size_t) n + HCOMP_MAP_FRAME_SIZE) {
                /* not all there: an append in progress - or a torn one (its writer died
                 * or the file system filled up in the middle of the write) that later
                 * appends follow. Appends never overlap, so a whole record starting inside
                 * this one's span means it was torn: damage, not a record to wait for. */
                if (!valid_record_in(buf, len, at + 1, len))
                    return HCOMP_MAP_INCOMPLETE;
                whole_lost = 0;
            } else if (hcomp_get_u32(buf + at + 12 + n) == hcomp_crc32(buf + at + 4, 8 + (size_t) n) &&
                       decode_payload(hcomp_get_u16(buf + at + 8), buf + at + 12, n, rec) == 0) {
                *pos = end;
                return HCOMP_MAP_RECORD;
            } else if (valid_record_in(buf, len, at + 1, end)) {
                whole_lost = 0;     /* torn, and a later append started inside its span */
            }
        }
    }
    /* damaged: resynchronise on the next record magic */
    size_t next = at + 1;
    while (next + 4 <= len && hcomp_get_u32(buf + next) != HCOMP_MAP_RECORD_MAGIC)
        next++;
    if (next + 4 > len) {
        /* no magic; but the last 1-3 bytes may be the start of one being appended:
         * stop before them, or a reader that resumes here would miss that record */
        next = len;
        for (size_t k = 3; k > 0; k--)
            if (memcmp(buf + len - k, "HCR1", k) == 0) {
                next = len - k;
                break;
            }
    }
    if (skipped)
        *skipped += next - at;
    /* fewer bytes than a frame: the start of an append that was cut short */
    if (lost)
        *lost = whole_lost && next - at >= 12;
    *pos = next;
    return HCOMP_MAP_DAMAGED;
}
