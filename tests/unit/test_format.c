/* Unit tests of the on-disk formats: the 16-byte piece header, the mapping file's
 * 64-byte header, and the framed records of the mapping-file log (encoders and the
 * hcomp_map_next scanner, including its recovery from torn and damaged bytes). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "hcomp_codec.h"
#include "hcomp_error.h"
#include "file/mapfile.h"
#include "tiers/piece_header.h"
#include "common/util.h"

/* ---- piece header ---------------------------------------------------------------- */

/* The on-disk CRC is CRC-32/ISO-HDLC (zlib's polynomial), whatever library computes it:
 * files written before the switches to libdeflate and ISA-L must still verify. */
static void test_crc32_check_value(void **state)
{
    (void) state;
    assert_int_equal(hcomp_crc32("123456789", 9), 0xCBF43926u);
    assert_int_equal(hcomp_crc32("", 0), 0u);
    unsigned char buf[5000];
    for (size_t i = 0; i < sizeof(buf); i++)
        buf[i] = (unsigned char) (i * 131u + 7u);
    /* a single flipped bit changes it */
    uint32_t a = hcomp_crc32(buf, sizeof(buf));
    buf[4321] ^= 0x10;
    assert_int_not_equal(hcomp_crc32(buf, sizeof(buf)), a);
}

/* The same value as zlib's crc32 (the reference) at every length up to 600 bytes and
 * every start alignment (the vector code's head and tail paths), at the block sizes
 * (4 KiB to 1 MiB) and at odd lengths around them: whichever library computes it
 * (ISA-L's, or libdeflate's in a --without-isal build). */
static void test_crc32_matches_zlib(void **state)
{
    (void) state;
    size_t cap = (1u << 20) + 4096;
    unsigned char *buf = malloc(cap);
    assert_non_null(buf);
    uint64_t x = 0x9E3779B97F4A7C15u;
    for (size_t i = 0; i < cap; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        buf[i] = (unsigned char) x;
    }
    for (size_t off = 0; off < 64; off++)
        for (size_t len = 0; len <= 600; len++)
            assert_int_equal(hcomp_crc32(buf + off, len),
                             (uint32_t) crc32(0, buf + off, (uInt) len));
    static const size_t lens[] = {4095, 4096, 4097, 65535, 65536, 65600, 262144, 262147,
                                  1048575, 1048576};
    for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++)
        for (size_t off = 0; off < 3; off++)
            assert_int_equal(hcomp_crc32(buf + off, lens[k]),
                             (uint32_t) crc32(0, buf + off, (uInt) lens[k]));
    free(buf);
}

static void test_piece_header_roundtrip(void **state)
{
    (void) state;
    static const uint64_t starts[] = {
        0, 1, 4096, UINT64_C(0xFFFFFFFF), UINT64_C(0x100000000), UINT64_C(5) << 30,
        HCOMP_PIECE_MAX_OFFSET - 4096, HCOMP_PIECE_MAX_OFFSET - 1, HCOMP_PIECE_MAX_OFFSET};
    static const struct { uint32_t raw, stored; } lens[] = {
        {0, 0}, {1, 1}, {4096, 17}, {1048576, 1048575}, {UINT32_MAX, 12345},
        {UINT32_MAX, UINT32_MAX}};
    for (unsigned codec = 0; codec < HCOMP_CODEC_COUNT; codec++) {
        for (size_t s = 0; s < sizeof(starts) / sizeof(starts[0]); s++) {
            for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
                hcomp_piece_header h = {starts[s], lens[l].raw,
                                        codec == HCOMP_CODEC_NONE ? lens[l].raw : lens[l].stored,
                                        (uint8_t) codec, (uint8_t) ((s + l) & 0x0f), 0};
                unsigned char buf[HCOMP_PIECE_HEADER_SIZE + 2];
                memset(buf, 0xA5, sizeof(buf));
                hcomp_piece_header_encode(&h, buf);
                /* exactly 16 bytes written */
                assert_int_equal(buf[HCOMP_PIECE_HEADER_SIZE], 0xA5);
                assert_int_equal(buf[HCOMP_PIECE_HEADER_SIZE + 1], 0xA5);
                /* the documented layout: codec in byte 6, version 1 in byte 7's high nibble */
                assert_int_equal(buf[6], codec);
                assert_int_equal(buf[7] >> 4, HCOMP_PIECE_HEADER_VERSION);
                assert_int_equal(buf[5], (unsigned) ((starts[s] >> 40) & 0xff));
                hcomp_piece_header d;
                memset(&d, 0xEE, sizeof(d));
                assert_int_equal(hcomp_piece_header_decode(buf, &d), 0);
                assert_true(d.start == h.start);
                assert_int_equal(d.raw_len, h.raw_len);
                assert_int_equal(d.stored_len, h.stored_len);
                assert_int_equal(d.codec, h.codec);
                assert_int_equal(d.filter, h.filter);
            }
        }
    }
}

static void encode_valid(unsigned char buf[HCOMP_PIECE_HEADER_SIZE])
{
    hcomp_piece_header h = {123456789, 65536, 1000, HCOMP_CODEC_ZSTD, 0, 0};
    hcomp_piece_header_encode(&h, buf);
}

static void test_piece_header_bad_version(void **state)
{
    (void) state;
    for (unsigned v = 0; v < 16; v++) {
        unsigned char buf[HCOMP_PIECE_HEADER_SIZE];
        encode_valid(buf);
        buf[7] = (unsigned char) ((v << 4) | (buf[7] & 0x0f));
        hcomp_piece_header d;
        int rc = hcomp_piece_header_decode(buf, &d);
        if (v == HCOMP_PIECE_HEADER_VERSION || v == HCOMP_PIECE_HEADER_VERSION_FRAMED) {
            assert_int_equal(rc, 0);
            assert_int_equal(d.framed, v == HCOMP_PIECE_HEADER_VERSION_FRAMED);
        } else
            assert_int_equal(rc, -1);
    }
}

static void test_piece_header_unknown_codec(void **state)
{
    (void) state;
    static const unsigned bad[] = {HCOMP_CODEC_COUNT, HCOMP_CODEC_COUNT + 1, 0x7f, 0xff};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        unsigned char buf[HCOMP_PIECE_HEADER_SIZE];
        encode_valid(buf);
        buf[6] = (unsigned char) bad[i];
        hcomp_piece_header d;
        assert_int_equal(hcomp_piece_header_decode(buf, &d), -1);
    }
}

static void test_piece_header_raw_stored_mismatch(void **state)
{
    (void) state;
    static const struct { uint32_t raw, stored; int ok; } cases[] = {
        {4096, 4096, 1}, {0, 0, 1}, {4096, 4095, 0}, {4096, 4097, 0}, {0, 1, 0}, {1, 0, 0}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        hcomp_piece_header h = {0, cases[i].raw, cases[i].stored, HCOMP_CODEC_NONE, 0, 0};
        unsigned char buf[HCOMP_PIECE_HEADER_SIZE];
        hcomp_piece_header_encode(&h, buf);
        hcomp_piece_header d;
        assert_int_equal(hcomp_piece_header_decode(buf, &d), cases[i].ok ? 0 : -1);
    }
}

/* ---- mapping-file header ------------------------------------------------------------ */

static hcomp_map_header sample_header(void)
{
    hcomp_map_header h;
    h.version = HCOMP_MAP_VERSION;
    for (int i = 0; i < 16; i++)
        h.file_id[i] = (uint8_t) (0x10 + 7 * i);
    h.created_ns = UINT64_C(1700000000123456789);
    h.log_gen = 7;
    return h;
}

static void test_map_header_roundtrip(void **state)
{
    (void) state;
    hcomp_map_header h = sample_header(), d;
    unsigned char buf[HCOMP_MAP_HEADER_SIZE];
    hcomp_map_header_encode(&h, buf);
    assert_memory_equal(buf, HCOMP_MAP_MAGIC, 8);
    hcomp_error err;
    memset(&d, 0, sizeof(d));
    assert_int_equal(hcomp_map_header_decode(buf, sizeof(buf), &d, "/x/file", &err), HCOMP_OK);
    assert_int_equal(d.version, HCOMP_MAP_VERSION);
    assert_int_equal(d.log_gen, 7);     /* version 3: the writer logs' generation */
    assert_memory_equal(d.file_id, h.file_id, 16);
    assert_true(d.created_ns == h.created_ns);
    /* more bytes than the header (the log follows it) is fine */
    unsigned char longer[HCOMP_MAP_HEADER_SIZE + 100];
    memset(longer, 0x5a, sizeof(longer));
    memcpy(longer, buf, sizeof(buf));
    assert_int_equal(hcomp_map_header_decode(longer, sizeof(longer), &d, "/x/file", &err), HCOMP_OK);
}

static void test_map_header_wrong_magic(void **state)
{
    (void) state;
    hcomp_map_header h = sample_header(), d;
    unsigned char buf[HCOMP_MAP_HEADER_SIZE];
    hcomp_map_header_encode(&h, buf);
    memcpy(buf, "HCOMPMAQ", 8);
    hcomp_error err;
    assert_int_equal(hcomp_map_header_decode(buf, sizeof(buf), &d, "/data/run/out.h5", &err),
                     HCOMP_E_NOTHCOMP);
    assert_int_equal(err.code, HCOMP_E_NOTHCOMP);
    assert_non_null(strstr(err.msg, "/data/run/out.h5"));
    /* text that merely starts like a file */
    const char *text = "Hello, this is a plain text file and certainly no hcomp mapping file.";
    assert_int_equal(hcomp_map_header_decode((const unsigned char *) text, strlen(text), &d, "t",
                                             &err), HCOMP_E_NOTHCOMP);
}

static void test_map_header_future_version(void **state)
{
    (void) state;
    static const uint32_t versions[] = {0, HCOMP_MAP_VERSION + 1, 99, UINT32_MAX};
    for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
        hcomp_map_header h = sample_header(), d;
        h.version = versions[i];
        unsigned char buf[HCOMP_MAP_HEADER_SIZE];
        hcomp_map_header_encode(&h, buf);  /* valid checksum, other version */
        hcomp_error err;
        assert_int_equal(hcomp_map_header_decode(buf, sizeof(buf), &d, "/v/f", &err),
                         HCOMP_E_VERSION);
        assert_non_null(strstr(err.msg, "/v/f"));
        /* a version patched in place (checksum now stale) still reads as a version problem */
        h.version = HCOMP_MAP_VERSION;
        hcomp_map_header_encode(&h, buf);
        buf[8] = (unsigned char) versions[i];
        buf[9] = (unsigned char) (versions[i] >> 8);
        buf[10] = (unsigned char) (versions[i] >> 16);
        buf[11] = (unsigned char) (versions[i] >> 24);
        assert_int_equal(hcomp_map_header_decode(buf, sizeof(buf), &d, "/v/f", &err),
                         HCOMP_E_VERSION);
    }
}

/* Flip one bit of every header byte: magic bytes make it "not hcomp", version bytes a
 * version problem (or corruption, where the flip names another known version), every other byte (header size, id, time, reserved, crc) corruption. */
static void test_map_header_flipped_byte(void **state)
{
    (void) state;
    hcomp_map_header h = sample_header();
    unsigned char good[HCOMP_MAP_HEADER_SIZE];
    hcomp_map_header_encode(&h, good);
    for (int i = 0; i < HCOMP_MAP_HEADER_SIZE; i++) {
        for (int bit = 0; bit < 8; bit += 7) {
            unsigned char buf[HCOMP_MAP_HEADER_SIZE];
            memcpy(buf, good, sizeof(buf));
            buf[i] ^= (unsigned char) (1u << bit);
            hcomp_map_header d;
            hcomp_error err;
            /* a flipped version bit that names another known version: a stale checksum */
            uint32_t v = hcomp_get_u32(buf + 8);
            int known = v >= HCOMP_MAP_VERSION_MIN && v <= HCOMP_MAP_VERSION;
            int want = i < 8 ? HCOMP_E_NOTHCOMP : i < 12 && !known ? HCOMP_E_VERSION
                     : HCOMP_E_CORRUPT;
            int rc = hcomp_map_header_decode(buf, sizeof(buf), &d, "/p", &err);
            if (rc != want)
                fail_msg("byte %d bit %d: got %s, want %s", i, bit, hcomp_code_name(rc),
                         hcomp_code_name(want));
            assert_int_equal(err.code, want);
        }
    }
}

static void test_map_header_short(void **state)
{
    (void) state;
    hcomp_map_header h = sample_header();
    unsigned char good[HCOMP_MAP_HEADER_SIZE];
    hcomp_map_header_encode(&h, good);
    for (size_t avail = 0; avail < HCOMP_MAP_HEADER_SIZE; avail++) {
        /* exactly avail bytes on the heap, so a read past them is an ASan error */
        unsigned char *p = malloc(avail ? avail : 1);
        assert_non_null(p);
        memcpy(p, good, avail);
        hcomp_map_header d;
        hcomp_error err;
        int rc = hcomp_map_header_decode(p, avail, &d, "/short", &err);
        /* too short for the magic: not an hcomp file; magic but cut header: corrupt */
        assert_int_equal(rc, avail < 8 ? HCOMP_E_NOTHCOMP : HCOMP_E_CORRUPT);
        assert_non_null(strstr(err.msg, "/short"));
        free(p);
    }
}

/* ---- records ----------------------------------------------------------------------- */

/* Decode the single record expected at *pos. */
static void next_record(const hcomp_bytes *b, size_t *pos, hcomp_map_record *rec)
{
    uint64_t skipped = 0;
    int r = hcomp_map_next(b->p, b->len, pos, rec, &skipped);
    assert_int_equal(r, HCOMP_MAP_RECORD);
    assert_true(skipped == 0);
}

static void assert_str_n(const char *got, size_t got_len, const char *want)
{
    assert_int_equal(got_len, strlen(want));
    assert_memory_equal(got, want, got_len);
}

static void test_record_segment_roundtrip(void **state)
{
    (void) state;
    static const struct { uint64_t id; const char *tier, *dir, *file; } cases[] = {
        {0, "ram", "/dev/shm/hcomp-1000/out.h5.0011223344556677.hcd", "0123456789abcdef.seg"},
        {UINT64_MAX, "", "/d", "f"},
        {42, "a-tier-name-of-sixty-three-characters-xxxxxxxxxxxxxxxxxxxxxxxx",
         "/very/long/directory/with spaces/and-ünïcödé", "x.seg"}};
    hcomp_bytes b = {0};
    size_t n = sizeof(cases) / sizeof(cases[0]);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(hcomp_map_encode_segment(&b, cases[i].id, cases[i].tier, cases[i].dir,
                                                  cases[i].file, i % 2 ? "node-7" : "",
                                                  (unsigned) (i % 2)), 0);
    size_t pos = 0, expect_len = 0;
    for (size_t i = 0; i < n; i++)
        expect_len += HCOMP_MAP_FRAME_SIZE + HCOMP_MAP_SEGMENT_FIXED + strlen(cases[i].tier) +
            strlen(cases[i].dir) + strlen(cases[i].file) + (i % 2 ? 6 : 0);
    assert_int_equal(b.len, expect_len);
    for (size_t i = 0; i < n; i++) {
        hcomp_map_record rec;
        next_record(&b, &pos, &rec);
        assert_int_equal(rec.type, HCOMP_REC_SEGMENT);
        assert_true(rec.u.seg.id == cases[i].id);
        assert_str_n(rec.u.seg.tier, rec.u.seg.tier_len, cases[i].tier);
        assert_str_n(rec.u.seg.dir, rec.u.seg.dir_len, cases[i].dir);
        assert_str_n(rec.u.seg.file, rec.u.seg.file_len, cases[i].file);
        assert_str_n(rec.u.seg.node, rec.u.seg.node_len, i % 2 ? "node-7" : "");
        assert_int_equal(rec.u.seg.flags, i % 2);
    }
    assert_int_equal(pos, b.len);
    hcomp_map_record rec;
    assert_int_equal(hcomp_map_next(b.p, b.len, &pos, &rec, NULL), HCOMP_MAP_INCOMPLETE);
    hcomp_bytes_free(&b);
}

static void test_record_segment_invalid(void **state)
{
    (void) state;
    /* a segment needs a directory and a file name */
    static const struct { const char *dir, *file; } cases[] = {{"", "f.seg"}, {"/d", ""}};
    for (size_t i = 0; i < 2; i++) {
        hcomp_bytes b = {0};
        assert_int_equal(hcomp_map_encode_segment(&b, 1, "t", cases[i].dir, cases[i].file, "", 0), 0);
        size_t pos = 0;
        uint64_t skipped = 0;
        hcomp_map_record rec;
        assert_int_equal(hcomp_map_next(b.p, b.len, &pos, &rec, &skipped), HCOMP_MAP_DAMAGED);
        assert_int_equal(pos, b.len);
        assert_true(skipped == b.len);
        hcomp_bytes_free(&b);
    }
}

static void test_record_piece_roundtrip(void **state)
{
    (void) state;
    static const hcomp_map_extent ext[] = {
        {0, 4096, 0}, {8192, 100, 4096}, {UINT64_C(1) << 40, 1, 4196},
        {(UINT64_C(1) << 48) - 10, 10, 65526}};
    const uint32_t next = sizeof(ext) / sizeof(ext[0]);
    hcomp_bytes b = {0};
    assert_int_equal(hcomp_map_encode_piece(&b, UINT64_C(0xfedcba9876543210), UINT64_C(1) << 33,
                                            777, 65536, 0xdeadbeefu, HCOMP_CODEC_LZMA, 3, -5, 7,
                                            ext, next), 0);
    /* and a piece with a single extent, and one with none */
    assert_int_equal(hcomp_map_encode_piece(&b, 7, 0, 4096, 4096, 1, HCOMP_CODEC_NONE, 0,
                                            HCOMP_MAP_LEVEL_UNKNOWN, 0, ext, 1), 0);
    assert_int_equal(hcomp_map_encode_piece(&b, 8, 16, 10, 20, 2, HCOMP_CODEC_ZLIB, 0, 9, 15, NULL, 0), 0);
    assert_int_equal(b.len, 3 * (HCOMP_MAP_FRAME_SIZE + HCOMP_MAP_PIECE_FIXED) +
                     (next + 1) * HCOMP_MAP_EXTENT_SIZE);

    size_t pos = 0;
    hcomp_map_record rec;
    next_record(&b, &pos, &rec);
    assert_int_equal(rec.type, HCOMP_REC_PIECE);
    assert_true(rec.u.piece.seg_id == UINT64_C(0xfedcba9876543210));
    assert_true(rec.u.piece.seg_off == UINT64_C(1) << 33);
    assert_int_equal(rec.u.piece.stored_len, 777);
    assert_int_equal(rec.u.piece.raw_len, 65536);
    assert_int_equal(rec.u.piece.crc, 0xdeadbeefu);
    assert_int_equal(rec.u.piece.codec, HCOMP_CODEC_LZMA);
    assert_int_equal(rec.u.piece.filter, 3);
    assert_int_equal(rec.u.piece.level, -5);
    assert_int_equal(rec.u.piece.frame, 7);     /* framed in 256 KiB blocks (format 2) */
    assert_int_equal(rec.u.piece.nextents, next);
    for (uint32_t i = 0; i < next; i++) {
        hcomp_map_extent e;
        hcomp_map_extent_at(&rec, i, &e);
        assert_true(e.off == ext[i].off);
        assert_int_equal(e.len, ext[i].len);
        assert_int_equal(e.piece_off, ext[i].piece_off);
    }
    next_record(&b, &pos, &rec);
    assert_int_equal(rec.type, HCOMP_REC_PIECE);
    assert_true(rec.u.piece.seg_id == 7);
    assert_int_equal(rec.u.piece.nextents, 1);
    /* no level: the two bytes stay zero, as every version-1 writer before the level left
     * them, and zero decodes as "unknown" */
    assert_int_equal(rec.u.piece.level, HCOMP_MAP_LEVEL_UNKNOWN);
    assert_int_equal(rec.u.piece.frame, 0);
    size_t second = HCOMP_MAP_FRAME_SIZE + HCOMP_MAP_PIECE_FIXED + next * HCOMP_MAP_EXTENT_SIZE;
    assert_int_equal(b.p[second + 12 + 30], 0);
    assert_int_equal(b.p[second + 12 + 31], 0);
    next_record(&b, &pos, &rec);
    assert_int_equal(rec.type, HCOMP_REC_PIECE);
    assert_true(rec.u.piece.seg_id == 8 && rec.u.piece.seg_off == 16);
    assert_int_equal(rec.u.piece.level, 9);
    assert_int_equal(rec.u.piece.frame, 15);
    assert_int_equal(rec.u.piece.nextents, 0);
    assert_int_equal(pos, b.len);
    hcomp_bytes_free(&b);
}

static void test_record_size_roundtrip(void **state)
{
    (void) state;
    static const struct { uint64_t size; int mode; } cases[] = {
        {0, HCOMP_SIZE_SET}, {12345, HCOMP_SIZE_GROW}, {UINT64_C(1) << 48, HCOMP_SIZE_SET},
        {UINT64_MAX, HCOMP_SIZE_GROW}};
    hcomp_bytes b = {0};
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(hcomp_map_encode_size(&b, cases[i].size, cases[i].mode), 0);
    assert_int_equal(b.len, 4 * (HCOMP_MAP_FRAME_SIZE + 16));
    size_t pos = 0;
    for (size_t i = 0; i < 4; i++) {
        hcomp_map_record rec;
        next_record(&b, &pos, &rec);
        assert_int_equal(rec.type, HCOMP_REC_SIZE);
        assert_true(rec.u.size.size == cases[i].size);
        assert_int_equal(rec.u.size.mode, cases[i].mode);
    }
    hcomp_bytes_free(&b);

    /* an unknown size mode is not a valid record */
    hcomp_bytes bad = {0};
    assert_int_equal(hcomp_map_encode_size(&bad, 10, 2), 0);
    pos = 0;
    hcomp_map_record rec;
    uint64_t skipped = 0;
    assert_int_equal(hcomp_map_next(bad.p, bad.len, &pos, &rec, &skipped), HCOMP_MAP_DAMAGED);
    assert_true(skipped == bad.len);
    hcomp_bytes_free(&bad);
}

/* Three records of each type, concatenated; offsets[i] is where record i starts. */
static void build_log(hcomp_bytes *b, size_t offsets[4])
{
    hcomp_map_extent e[2] = {{100, 50, 0}, {300, 60, 50}};
    offsets[0] = b->len;
    assert_int_equal(hcomp_map_encode_segment(b, 9, "nvme", "/local/x.hcd", "9.seg", "n1", 1), 0);
    offsets[1] = b->len;
    assert_int_equal(hcomp_map_encode_piece(b, 9, 0, 90, 110, 0x1234, HCOMP_CODEC_LZ4, 0, 1, 0, e, 2), 0);
    offsets[2] = b->len;
    assert_int_equal(hcomp_map_encode_size(b, 5000, HCOMP_SIZE_GROW), 0);
    offsets[3] = b->len;
}

/* A log cut anywhere inside its last record: the records before it decode, then
 * INCOMPLETE with pos left at the start of the cut record (a writer may be mid-append). */
static void test_next_truncated_tail(void **state)
{
    (void) state;
    hcomp_bytes b = {0};
    size_t off[4];
    build_log(&b, off);
    for (int last = 0; last < 3; last++) {
        for (size_t cut = off[last]; cut < off[last + 1]; cut++) {
            unsigned char *p = malloc(cut ? cut : 1);   /* exact size for ASan */
            assert_non_null(p);
            memcpy(p, b.p, cut);
            size_t pos = 0;
            uint64_t skipped = 0;
            hcomp_map_record rec;
            for (int i = 0; i < last; i++) {
                assert_int_equal(hcomp_map_next(p, cut, &pos, &rec, &skipped), HCOMP_MAP_RECORD);
                assert_int_equal(pos, off[i + 1]);
            }
            int r = hcomp_map_next(p, cut, &pos, &rec, &skipped);
            if (r != HCOMP_MAP_INCOMPLETE)
                fail_msg("record %d cut at %zu: result %d, want INCOMPLETE", last, cut, r);
            assert_int_equal(pos, off[last]);
            assert_true(skipped == 0);
            /* asking again changes nothing */
            assert_int_equal(hcomp_map_next(p, cut, &pos, &rec, &skipped), HCOMP_MAP_INCOMPLETE);
            assert_int_equal(pos, off[last]);
            free(p);
        }
    }
    hcomp_bytes_free(&b);
}

/* A bit flipped in the payload, the type, or the checksum of the middle record: it is
 * DAMAGED (skipped as a whole) and the record after it still decodes. */
static void test_next_flipped_payload(void **state)
{
    (void) state;
    hcomp_bytes b = {0};
    size_t off[4];
    build_log(&b, off);
    size_t first = off[1] + 8;              /* type field onwards (magic/length: see below) */
    for (size_t at = first; at < off[2]; at++) {
        unsigned char *p = malloc(b.len);
        assert_non_null(p);
        memcpy(p, b.p, b.len);
        p[at] ^= 0x10;
        size_t pos = 0;
        uint64_t skipped = 0;
        hcomp_map_record rec;
        assert_int_equal(hcomp_map_next(p, b.len, &pos, &rec, &skipped), HCOMP_MAP_RECORD);
        assert_int_equal(rec.type, HCOMP_REC_SEGMENT);
        int r = hcomp_map_next(p, b.len, &pos, &rec, &skipped);
        if (r != HCOMP_MAP_DAMAGED)
            fail_msg("flip at byte %zu of the piece record: result %d, want DAMAGED",
                     at - off[1], r);
        assert_int_equal(pos, off[2]);
        assert_true(skipped == off[2] - off[1]);
        assert_int_equal(hcomp_map_next(p, b.len, &pos, &rec, &skipped), HCOMP_MAP_RECORD);
        assert_int_equal(rec.type, HCOMP_REC_SIZE);
        assert_true(rec.u.size.size == 5000);
        assert_int_equal(pos, b.len);
        free(p);
    }
    /* a damaged record magic: resynchronised at the next record as well */
    unsigned char *p = malloc(b.len);
    assert_non_null(p);
    memcpy(p, b.p, b.len);
    p[off[1]] ^= 0xff;
    size_t pos = off[1];
    uint64_t skipped = 0;
    hcomp_map_record rec;
    assert_int_equal(hcomp_map_next(p, b.len, &pos, &rec, &skipped), HCOMP_MAP_DAMAGED);
    assert_int_equal(pos, off[2]);
    assert_int_equal(hcomp_map_next(p, b.len, &pos, &rec, &skipped), HCOMP_MAP_RECORD);
    assert_int_equal(rec.type, HCOMP_REC_SIZE);
    free(p);
    hcomp_bytes_free(&b);
}

/* Garbage before, between and after records is skipped and counted. */
static void test_next_garbage_between(void **state)
{
    (void) state;
    static const size_t garbage_lens[] = {1, 3, 4, 11, 12, 13, 100};
    for (size_t g = 0; g < sizeof(garbage_lens) / sizeof(garbage_lens[0]); g++) {
        size_t glen = garbage_lens[g];
        hcomp_bytes b = {0};
        size_t off[4];
        build_log(&b, off);
        /* layout: garbage | segment | garbage | piece size */
        size_t total = b.len + 2 * glen;
        unsigned char *p = malloc(total);
        assert_non_null(p);
        size_t k = 0;
        for (size_t i = 0; i < glen; i++)
            p[k++] = (unsigned char) ('a' + i % 26);
        memcpy(p + k, b.p, off[1]);
        k += off[1];
        for (size_t i = 0; i < glen; i++)
            p[k++] = (unsigned char) (0xC0 + i % 16);
        memcpy(p + k, b.p + off[1], b.len - off[1]);
        k += b.len - off[1];
        assert_int_equal(k, total);

        size_t pos = 0;
        uint64_t skipped = 0;
        int types[8], nt = 0, damaged = 0;
        hcomp_map_record rec;
        for (int guard = 0; guard < 16; guard++) {
            int r = hcomp_map_next(p, total, &pos, &rec, &skipped);
            if (r == HCOMP_MAP_INCOMPLETE)
                break;
            if (r == HCOMP_MAP_DAMAGED) {
                damaged++;
                continue;
            }
            assert_true(nt < 8);
            types[nt++] = rec.type;
        }
        assert_int_equal(nt, 3);
        assert_int_equal(types[0], HCOMP_REC_SEGMENT);
        assert_int_equal(types[1], HCOMP_REC_PIECE);
        assert_int_equal(types[2], HCOMP_REC_SIZE);
        assert_true(damaged >= 2);
        assert_true(skipped == 2 * glen);
        assert_int_equal(pos, total);
        free(p);
        hcomp_bytes_free(&b);
    }
}

/* Extents must lie inside the piece and not be empty or wrap around. */
/* A damaged length field must not pass for a record still being written: the frame
 * check catches it, and the records after it stay visible. */
static void test_next_damaged_length(void **state)
{
    (void) state;
    hcomp_bytes b = {0};
    size_t off[4];
    build_log(&b, off);
    for (int bit = 0; bit < 32; bit++) {
        unsigned char *p = malloc(b.len);
        assert_non_null(p);
        memcpy(p, b.p, b.len);
        p[off[0] + 4 + bit / 8] ^= (unsigned char) (1u << (bit % 8));
        size_t pos = 0;
        uint64_t skipped = 0;
        hcomp_map_record rec;
        assert_int_equal(hcomp_map_next(p, b.len, &pos, &rec, &skipped), HCOMP_MAP_DAMAGED);
        while (pos < off[1])
            assert_int_equal(hcomp_map_next(p, b.len, &pos, &rec, &skipped), HCOMP_MAP_DAMAGED);
        assert_int_equal(pos, off[1]);
        assert_int_equal(hcomp_map_next(p, b.len, &pos, &rec, &skipped), HCOMP_MAP_RECORD);
        assert_int_equal(pos, off[2]);
        free(p);
    }
    hcomp_bytes_free(&b);
}

/* What damage means: a record written whole and then changed is lost (readers must not
 * guess around it); a torn append that later appends follow, or a fragment shorter than
 * a frame, is a write that never returned success. */
static void test_next_lost_or_torn(void **state)
{
    (void) state;
    hcomp_bytes b = {0};
    size_t off[4];
    build_log(&b, off);
    unsigned char *p = malloc(b.len + 64);
    assert_non_null(p);
    size_t pos;
    uint64_t skipped = 0;
    hcomp_map_record rec;
    int lost;
    /* a flipped payload byte in the whole PIECE record: lost */
    memcpy(p, b.p, b.len);
    p[off[1] + 20] ^= 0x01;
    pos = off[1];
    lost = -1;
    assert_int_equal(hcomp_map_next_checked(p, b.len, &pos, &rec, &skipped, &lost), HCOMP_MAP_DAMAGED);
    assert_int_equal(lost, 1);
    /* a flipped magic: lost too (a whole frame's worth of bytes is no record) */
    memcpy(p, b.p, b.len);
    p[off[1]] ^= 0xff;
    pos = off[1];
    lost = -1;
    assert_int_equal(hcomp_map_next_checked(p, b.len, &pos, &rec, &skipped, &lost), HCOMP_MAP_DAMAGED);
    assert_int_equal(lost, 1);
    /* the PIECE record cut short (its writer died) and the SIZE record appended after it */
    size_t cut = off[1] + 30;
    memcpy(p, b.p, cut);
    memcpy(p + cut, b.p + off[2], b.len - off[2]);
    size_t len = cut + (b.len - off[2]);
    pos = off[1];
    lost = -1;
    assert_int_equal(hcomp_map_next_checked(p, len, &pos, &rec, &skipped, &lost), HCOMP_MAP_DAMAGED);
    assert_int_equal(lost, 0);
    assert_int_equal(pos, cut);
    assert_int_equal(hcomp_map_next_checked(p, len, &pos, &rec, &skipped, &lost), HCOMP_MAP_RECORD);
    assert_int_equal(rec.type, HCOMP_REC_SIZE);
    /* cut inside its frame (5 bytes written): a fragment, not a lost record */
    cut = off[1] + 5;
    memcpy(p, b.p, cut);
    memcpy(p + cut, b.p + off[2], b.len - off[2]);
    len = cut + (b.len - off[2]);
    pos = off[1];
    lost = -1;
    assert_int_equal(hcomp_map_next_checked(p, len, &pos, &rec, &skipped, &lost), HCOMP_MAP_DAMAGED);
    assert_int_equal(lost, 0);
    assert_int_equal(hcomp_map_next_checked(p, len, &pos, &rec, &skipped, &lost), HCOMP_MAP_RECORD);
    assert_int_equal(rec.type, HCOMP_REC_SIZE);
    /* the end of the log being appended right now: wait for it, nothing lost */
    pos = off[2];
    assert_int_equal(hcomp_map_next_checked(b.p, b.len - 3, &pos, &rec, &skipped, &lost),
                     HCOMP_MAP_INCOMPLETE);
    free(p);
    hcomp_bytes_free(&b);
}

static void test_next_bad_extent(void **state)
{
    (void) state;
    static const struct { hcomp_map_extent e; int ok; } cases[] = {
        {{0, 4096, 0}, 1},                       /* exactly the piece */
        {{100, 96, 4000}, 1},                    /* ends exactly at raw_len */
        {{0, 4000, 200}, 0},                     /* piece_off + len > raw_len */
        {{0, 4097, 0}, 0},
        {{0, 1, 4096}, 0},                       /* starts at raw_len */
        {{0, 16, UINT32_MAX - 8}, 0},            /* piece_off + len overflows 32 bits */
        {{0, 0, 0}, 0},                          /* empty */
        {{UINT64_MAX - 10, 100, 0}, 0}};         /* logical end wraps */
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        hcomp_bytes b = {0};
        hcomp_map_extent ext[2] = {{1 << 20, 10, 0}, cases[i].e};
        assert_int_equal(hcomp_map_encode_piece(&b, 1, 0, 4096, 4096, 0, HCOMP_CODEC_NONE, 0,
                                                HCOMP_MAP_LEVEL_UNKNOWN, 0, ext, 2), 0);
        assert_int_equal(hcomp_map_encode_size(&b, 1, HCOMP_SIZE_GROW), 0);
        size_t pos = 0;
        uint64_t skipped = 0;
        hcomp_map_record rec;
        int r = hcomp_map_next(b.p, b.len, &pos, &rec, &skipped);
        if (r != (cases[i].ok ? HCOMP_MAP_RECORD : HCOMP_MAP_DAMAGED))
            fail_msg("case %zu: result %d", i, r);
        if (!cases[i].ok)
            assert_true(skipped > 0);
        /* either way the size record after it is found */
        assert_int_equal(hcomp_map_next(b.p, b.len, &pos, &rec, &skipped), HCOMP_MAP_RECORD);
        assert_int_equal(rec.type, HCOMP_REC_SIZE);
        hcomp_bytes_free(&b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc32_check_value),
        cmocka_unit_test(test_crc32_matches_zlib),
        cmocka_unit_test(test_piece_header_roundtrip),
        cmocka_unit_test(test_piece_header_bad_version),
        cmocka_unit_test(test_piece_header_unknown_codec),
        cmocka_unit_test(test_piece_header_raw_stored_mismatch),
        cmocka_unit_test(test_map_header_roundtrip),
        cmocka_unit_test(test_map_header_wrong_magic),
        cmocka_unit_test(test_map_header_future_version),
        cmocka_unit_test(test_map_header_flipped_byte),
        cmocka_unit_test(test_map_header_short),
        cmocka_unit_test(test_record_segment_roundtrip),
        cmocka_unit_test(test_record_segment_invalid),
        cmocka_unit_test(test_record_piece_roundtrip),
        cmocka_unit_test(test_record_size_roundtrip),
        cmocka_unit_test(test_next_truncated_tail),
        cmocka_unit_test(test_next_flipped_payload),
        cmocka_unit_test(test_next_garbage_between),
        cmocka_unit_test(test_next_damaged_length),
        cmocka_unit_test(test_next_lost_or_torn),
        cmocka_unit_test(test_next_bad_extent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
