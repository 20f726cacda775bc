/* Fuzz target: the mapping file's header and record decoder (file/mapfile.h,
 * docs/FORMAT.md), with a full replay loop of hcomp_map_next + hcomp_map_extent_at.
 * Properties:
 *  - the header decoder returns one of its documented codes; an accepted header
 *    re-encodes to the same magic, version, size, id and time;
 *  - every step of the replay moves forward (or, INCOMPLETE, stops), and records,
 *    skipped bytes and the unread tail add up to the input;
 *  - every decoded record is internally valid (extents inside the piece, no
 *    overflow, lengths that add up) and re-encodes to a record that decodes the same;
 *  - replaying a prefix first (a reader that saw a write in progress) and then the
 *    rest from where it stopped gives the same records as one replay of everything.
 * Each input is checked as it is, and again with its checksums made right. */
#include "fuzz_common.h"
#include "fuzz_mapfix.h"
#include "file/mapfile.h"

#include <string.h>

#define MAX_RECS 4096

typedef struct {
    size_t at, end;
} span;

static void check_record(const unsigned char *buf, size_t at, size_t end,
                         const hcomp_map_record *r)
{
    size_t n = end - at;
    CHECK(n >= HCOMP_MAP_FRAME_SIZE && n - HCOMP_MAP_FRAME_SIZE <= HCOMP_MAP_MAX_PAYLOAD,
          "record of %zu bytes", n);
    const unsigned char *payload = buf + at + 12;
    size_t plen = n - HCOMP_MAP_FRAME_SIZE;
    hcomp_bytes b = {0};
    int enc = 1;    /* 0: not re-encodable through the NUL-terminated-string encoders */
    switch (r->type) {
        case HCOMP_REC_SEGMENT: {
            size_t total = (size_t) HCOMP_MAP_SEGMENT_FIXED + r->u.seg.tier_len + r->u.seg.dir_len +
                           r->u.seg.file_len + r->u.seg.node_len;
            CHECK(total == plen && r->u.seg.dir_len > 0 && r->u.seg.file_len > 0,
                  "segment lengths %zu vs payload %zu", total, plen);
            CHECK(r->u.seg.tier == (const char *) payload + HCOMP_MAP_SEGMENT_FIXED &&
                  r->u.seg.node + r->u.seg.node_len == (const char *) payload + plen,
                  "segment strings outside the payload");
            const char *s[4] = {r->u.seg.tier, r->u.seg.dir, r->u.seg.file, r->u.seg.node};
            size_t l[4] = {r->u.seg.tier_len, r->u.seg.dir_len, r->u.seg.file_len,
                           r->u.seg.node_len};
            char *c[4] = {0};
            for (int i = 0; i < 4; i++) {
                if (memchr(s[i], 0, l[i]) != NULL)
                    enc = 0;
                c[i] = strndup(s[i], l[i]);
                CHECK(c[i] != NULL, "out of memory");
            }
            if (enc)
                CHECK(hcomp_map_encode_segment(&b, r->u.seg.id, c[0], c[1], c[2], c[3],
                                               r->u.seg.flags) == 0, "encode_segment failed");
            for (int i = 0; i < 4; i++)
                free(c[i]);
            break;
        }
        case HCOMP_REC_PIECE: {
            CHECK((uint64_t) HCOMP_MAP_PIECE_FIXED + (uint64_t) r->u.piece.nextents * 16 == plen,
                  "%u extents in a payload of %zu", r->u.piece.nextents, plen);
            hcomp_map_extent *e = malloc(((size_t) r->u.piece.nextents + 1) * sizeof(*e));
            CHECK(e != NULL, "out of memory");
            for (uint32_t i = 0; i < r->u.piece.nextents; i++) {
                hcomp_map_extent_at(r, i, &e[i]);
                CHECK(e[i].len > 0 && (uint64_t) e[i].piece_off + e[i].len <= r->u.piece.raw_len &&
                      e[i].off <= UINT64_MAX - e[i].len,
                      "extent %u (off %llu len %u piece_off %u) of a piece of %u bytes", i,
                      (unsigned long long) e[i].off, e[i].len, e[i].piece_off, r->u.piece.raw_len);
            }
            CHECK(hcomp_map_encode_piece(&b, r->u.piece.seg_id, r->u.piece.seg_off,
                                         r->u.piece.stored_len, r->u.piece.raw_len, r->u.piece.crc,
                                         r->u.piece.codec, r->u.piece.filter, r->u.piece.level,
                                         r->u.piece.frame, e, r->u.piece.nextents) == 0,
                  "encode_piece failed");
            free(e);
            break;
        }
        case HCOMP_REC_SIZE:
            CHECK(plen == 16 && (r->u.size.mode == HCOMP_SIZE_SET || r->u.size.mode == HCOMP_SIZE_GROW),
                  "size record: payload %zu mode %d", plen, r->u.size.mode);
            CHECK(hcomp_map_encode_size(&b, r->u.size.size, r->u.size.mode) == 0, "encode_size");
            break;
        case HCOMP_REC_STATS: {
            CHECK((const unsigned char *) r->u.stats.json == payload && r->u.stats.len == plen,
                  "stats text outside the payload");
            if (memchr(r->u.stats.json, 0, r->u.stats.len) != NULL) {
                enc = 0;
                break;
            }
            char *j = strndup(r->u.stats.json, r->u.stats.len);
            CHECK(j != NULL, "out of memory");
            CHECK(hcomp_map_encode_stats(&b, j) == 0, "encode_stats failed");
            free(j);
            break;
        }
        case HCOMP_REC_RELOCATE:
            CHECK(plen == 44, "relocate payload %zu", plen);
            CHECK(hcomp_map_encode_relocate(&b, r->u.reloc.old_seg, r->u.reloc.old_off,
                                            r->u.reloc.new_seg, r->u.reloc.new_off,
                                            r->u.reloc.stored_len, r->u.reloc.crc, r->u.reloc.codec,
                                            r->u.reloc.filter, r->u.reloc.level,
                                            r->u.reloc.frame) == 0,
                  "encode_relocate failed");
            break;
        default:
            CHECK(0, "record of unknown type %d decoded", r->type);
    }
    if (!enc)
        return;
    CHECK(b.len == n, "re-encoded record is %zu bytes, the original %zu", b.len, n);
    /* the frame (magic, length, type, check) is the same; reserved bytes may differ */
    CHECK(memcmp(b.p, buf + at, 12) == 0, "re-encoded record has another frame");
    size_t pos = 0;
    uint64_t skipped = 0;
    hcomp_map_record r2;
    CHECK(hcomp_map_next(b.p, b.len, &pos, &r2, &skipped) == HCOMP_MAP_RECORD && pos == b.len &&
          skipped == 0 && r2.type == r->type, "re-encoded record does not decode whole");
    switch (r->type) {
        case HCOMP_REC_SEGMENT:
            CHECK(r2.u.seg.id == r->u.seg.id && r2.u.seg.flags == r->u.seg.flags &&
                  r2.u.seg.tier_len == r->u.seg.tier_len && r2.u.seg.dir_len == r->u.seg.dir_len &&
                  r2.u.seg.file_len == r->u.seg.file_len && r2.u.seg.node_len == r->u.seg.node_len &&
                  memcmp(r2.u.seg.tier, r->u.seg.tier, plen - HCOMP_MAP_SEGMENT_FIXED) == 0,
                  "segment record changed in a round trip");
            break;
        case HCOMP_REC_PIECE:
            CHECK(r2.u.piece.seg_id == r->u.piece.seg_id && r2.u.piece.seg_off == r->u.piece.seg_off &&
                  r2.u.piece.stored_len == r->u.piece.stored_len &&
                  r2.u.piece.raw_len == r->u.piece.raw_len && r2.u.piece.crc == r->u.piece.crc &&
                  r2.u.piece.codec == r->u.piece.codec && r2.u.piece.filter == r->u.piece.filter &&
                  r2.u.piece.level == r->u.piece.level && r2.u.piece.frame == r->u.piece.frame &&
                  r2.u.piece.nextents == r->u.piece.nextents &&
                  memcmp(r2.u.piece.extents, r->u.piece.extents,
                         (size_t) r->u.piece.nextents * HCOMP_MAP_EXTENT_SIZE) == 0,
                  "piece record changed in a round trip");
            break;
        case HCOMP_REC_SIZE:
            CHECK(r2.u.size.size == r->u.size.size && r2.u.size.mode == r->u.size.mode,
                  "size record changed in a round trip");
            break;
        case HCOMP_REC_STATS:
            CHECK(r2.u.stats.len == r->u.stats.len &&
                  memcmp(r2.u.stats.json, r->u.stats.json, r->u.stats.len) == 0,
                  "stats record changed in a round trip");
            break;
        case HCOMP_REC_RELOCATE:
            CHECK(r2.u.reloc.old_seg == r->u.reloc.old_seg && r2.u.reloc.old_off == r->u.reloc.old_off &&
                  r2.u.reloc.new_seg == r->u.reloc.new_seg && r2.u.reloc.new_off == r->u.reloc.new_off &&
                  r2.u.reloc.stored_len == r->u.reloc.stored_len && r2.u.reloc.crc == r->u.reloc.crc &&
                  r2.u.reloc.codec == r->u.reloc.codec && r2.u.reloc.filter == r->u.reloc.filter &&
                  r2.u.reloc.level == r->u.reloc.level && r2.u.reloc.frame == r->u.reloc.frame,
                  "relocate record changed in a round trip");
            break;
    }
    hcomp_bytes_free(&b);
}

/* Whether a whole valid record starts inside record [at, end) (after its first byte). A
 * reader that sees such a record while it is still being appended cannot tell it from a
 * torn write followed by later appends, and skips it as damage (file/mapfile.c, since
 * the torn-record change): the one known way a split replay differs, so such inputs are
 * left out of that comparison. The writers' records never hold one (a frame needs
 * binary bytes that names, paths and JSON text do not contain). */
static int nested_record(const unsigned char *buf, size_t at, size_t end)
{
    for (size_t q = at + 1; q + HCOMP_MAP_FRAME_SIZE <= end; q++) {
        if (buf[q] != 'H' || buf[q + 1] != 'C' || buf[q + 2] != 'R' || buf[q + 3] != '1')
            continue;
        size_t pos = q;
        hcomp_map_record r;
        if (hcomp_map_next(buf, end, &pos, &r, NULL) == HCOMP_MAP_RECORD)
            return 1;
    }
    return 0;
}

/* Replays buf[0..len) from *pos until INCOMPLETE, appending the records' spans. */
static void replay(const unsigned char *buf, size_t len, size_t *pos, uint64_t *skipped,
                   span *recs, size_t *nrecs, int check)
{
    for (;;) {
        size_t at = *pos;
        uint64_t sk = *skipped;
        hcomp_map_record r;
        int res = hcomp_map_next(buf, len, pos, &r, skipped);
        if (res == HCOMP_MAP_INCOMPLETE) {
            CHECK(*pos == at && *skipped == sk, "INCOMPLETE moved from %zu to %zu", at, *pos);
            return;
        }
        CHECK(*pos > at && *pos <= len, "step from %zu went to %zu (length %zu)", at, *pos, len);
        if (res == HCOMP_MAP_DAMAGED) {
            CHECK(*skipped - sk == *pos - at, "skipped %llu bytes but moved %zu",
                  (unsigned long long) (*skipped - sk), *pos - at);
            continue;
        }
        CHECK(res == HCOMP_MAP_RECORD, "hcomp_map_next returned %d", res);
        CHECK(*skipped == sk, "a record counted as skipped bytes");
        if (check)
            check_record(buf, at, *pos, &r);
        if (*nrecs < MAX_RECS)
            recs[(*nrecs)++] = (span){at, *pos};
    }
}

static span full[MAX_RECS], parts[MAX_RECS];

static void check_all(const uint8_t *data, size_t size)
{
    hcomp_map_header h;
    hcomp_error err = {0};
    int rc = hcomp_map_header_decode(data, size, &h, "fuzz-input", &err);
    CHECK(rc == HCOMP_OK || rc == HCOMP_E_NOTHCOMP || rc == HCOMP_E_VERSION ||
          rc == HCOMP_E_CORRUPT, "header decode returned %d", rc);
    CHECK(rc == HCOMP_OK || (err.code == rc && err.msg[0] != '\0'),
          "header refused (%d) without a message", rc);
    size_t start = 0;
    if (rc == HCOMP_OK) {
        CHECK(size >= HCOMP_MAP_HEADER_SIZE && h.version >= HCOMP_MAP_VERSION_MIN &&
              h.version <= HCOMP_MAP_VERSION, "bad header accepted");
        unsigned char out[HCOMP_MAP_HEADER_SIZE];
        hcomp_map_header_encode(&h, out);
        CHECK(memcmp(out, data, 40) == 0, "header fields changed in a round trip");
        start = HCOMP_MAP_HEADER_SIZE;
    }

    /* one replay of everything */
    size_t pos = start, nfull = 0;
    uint64_t skipped = 0;
    replay(data, size, &pos, &skipped, full, &nfull, 1);
    size_t rec_bytes = 0;
    for (size_t i = 0; i < nfull; i++)
        rec_bytes += full[i].end - full[i].at;
    if (nfull < MAX_RECS)
        CHECK(rec_bytes + skipped + (size - pos) == size - start,
              "records %zu + skipped %llu + tail %zu != %zu", rec_bytes,
              (unsigned long long) skipped, size - pos, size - start);
    if (size - pos >= 12) {     /* stopped at a record still being written */
        uint32_t n = (uint32_t) data[pos + 4] | (uint32_t) data[pos + 5] << 8 |
                     (uint32_t) data[pos + 6] << 16 | (uint32_t) data[pos + 7] << 24;
        CHECK(data[pos] == 'H' && data[pos + 1] == 'C' && data[pos + 2] == 'R' &&
              data[pos + 3] == '1' && n <= HCOMP_MAP_MAX_PAYLOAD &&
              size - pos < (size_t) n + HCOMP_MAP_FRAME_SIZE,
              "INCOMPLETE at %zu with %zu bytes left and no record in progress", pos, size - pos);
    }

    /* the same in two steps: a prefix (the split comes from the data), then the rest */
    int nested = 0;
    for (size_t i = 0; i < nfull && !nested; i++)
        nested = nested_record(data, full[i].at, full[i].end);
    if (size > start + 1 && !nested) {
        size_t split = start + 1 + (size_t) (((uint32_t) data[size - 1] << 8 | data[size / 2]) %
                                             (size - start - 1));
        size_t p2 = start, nparts = 0;
        uint64_t sk2 = 0;
        replay(data, split, &p2, &sk2, parts, &nparts, 0);
        replay(data, size, &p2, &sk2, parts, &nparts, 0);
        if (nfull < MAX_RECS && nparts < MAX_RECS) {
            CHECK(nparts == nfull, "split at %zu: %zu records, %zu in one replay", split, nparts,
                  nfull);
            for (size_t i = 0; i < nfull; i++)
                CHECK(parts[i].at == full[i].at && parts[i].end == full[i].end,
                      "split at %zu: record %zu at %zu, in one replay at %zu", split, i,
                      parts[i].at, full[i].at);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_all(data, size);
    /* the same with every checksum made right: the records' contents get tested */
    unsigned char *fixed = malloc(size ? size : 1);
    CHECK(fixed != NULL, "out of memory");
    memcpy(fixed, data, size);
    fuzz_fix_map(fixed, size, NULL, 0);
    if (memcmp(fixed, data, size) != 0)
        check_all(fixed, size);
    free(fixed);
    return 0;
}
