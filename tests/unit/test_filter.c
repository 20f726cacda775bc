/* Filters composed with codecs (engine/filter.c): every filter x element size x codec that
 * can carry it round-trips typed data of aligned and unaligned lengths (a tail shorter
 * than an element); a filter a codec cannot carry is refused; a bit-shuffled chunk read
 * with another filter than the one it was made with, or damaged, is an error, never wrong
 * bytes. Buffers are allocated at their exact sizes so ASan sees any overrun. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hcomp_codec.h"
#include "hcomp_model.h"
#include "engine/analyzer.h"
#include "engine/filter.h"
#include "codecs/blosc2_env.h"

static uint64_t rng(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

/* Particle-like typed data: float32 positions sorted by cell with random low bits
 * (k 4), or float64 smooth values with noise (k 8); any tail bytes random. */
static unsigned char *typed_bytes(size_t n, unsigned k, uint64_t seed)
{
    unsigned char *p = malloc(n ? n : 1);
    assert_non_null(p);
    size_t ne = n / k;
    for (size_t i = 0; i < ne; i++) {
        double u = (double) (rng(&seed) >> 11) / 9007199254740992.0;
        if (k == 4) {
            float v = (float) (i / 64) + (float) u;
            memcpy(p + i * 4, &v, 4);
        } else {
            double v = 300.0 + 20.0 * sin(i * 1e-3) + 0.01 * u;
            memcpy(p + i * 8, &v, 8);
        }
    }
    for (size_t i = ne * k; i < n; i++)
        p[i] = (unsigned char) rng(&seed);
    return p;
}

static void roundtrip(const hcomp_codec *c, int filter, size_t n)
{
    unsigned k = filter ? hcomp_filter_typesize(filter) : 4;
    unsigned char *src = typed_bytes(n, k, n * 31 + (size_t) filter);
    size_t cap = c->bound(n);
    unsigned char *dst = malloc(cap ? cap : 1), *back = malloc(n ? n : 1), *tmp = NULL;
    size_t tmp_cap = 0, clen = 0;
    assert_non_null(dst);
    assert_non_null(back);
    int rc = hcomp_filter_encode(c, HCOMP_LEVEL_DEFAULT, filter, src, n, &tmp, &tmp_cap, dst,
                                 cap, &clen);
    assert_int_equal(rc, HCOMP_OK);
    assert_true(clen <= cap);
    memset(back, 0xA5, n);
    unsigned char *exact = malloc(clen ? clen : 1);
    memcpy(exact, dst, clen);
    rc = hcomp_filter_decode(c, filter, exact, clen, back, n, &tmp, &tmp_cap);
    if (rc != HCOMP_OK || (n > 0 && memcmp(back, src, n) != 0))
        fail_msg("%s filter %d, %zu bytes: round trip failed (%d)", c->name, filter, n, rc);
    free(exact);
    free(tmp);
    free(back);
    free(dst);
    free(src);
}

static void test_roundtrips(void **state)
{
    (void) state;
    static const size_t lens[] = {0, 1, 3, 7, 4095, 4096, 4099, 65536 + 5, ((size_t) 1 << 20) + 7};
    for (size_t ci = 0; ci < hcomp_codec_count(); ci++) {
        const hcomp_codec *c = hcomp_codec_at(ci);
        for (int f = 0; f < HCOMP_FILTER_COUNT; f++) {
            if (!hcomp_filter_fits(f, c))
                continue;
            for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
                /* the slow codecs on the largest length only with no filter */
                if (lens[li] > 65536 + 5 && f != HCOMP_FILTER_NONE &&
                    (c->id == HCOMP_CODEC_LZMA || c->id == HCOMP_CODEC_BZIP2 ||
                     c->id == HCOMP_CODEC_BROTLI))
                    continue;
                roundtrip(c, f, lens[li]);
            }
        }
    }
}

/* The byte shuffle's layout is part of the format (docs/FORMAT.md, "Filters"): for n whole
 * elements of e bytes, output byte b*n + i is input byte i*e + b, a shorter tail is copied
 * as it is. Checked against that rule, not against a round trip, for both element sizes and
 * every tail length. */
static void test_shuffle_layout(void **state)
{
    (void) state;
    static const struct { int filter; unsigned e; } fs[] = {{HCOMP_FILTER_SHUFFLE4, 4},
                                                           {HCOMP_FILTER_SHUFFLE8, 8}};
    unsigned char in[611], out[611], back[611];     /* several 16-element runs, and tails */
    for (size_t k = 0; k < 2; k++)
        for (size_t len = 0; len <= sizeof(in); len++) {
            for (size_t j = 0; j < len; j++)
                in[j] = (unsigned char) (j * 37 + 11);
            hcomp_filter_apply(fs[k].filter, in, out, len);
            size_t n = len / fs[k].e;
            for (size_t b = 0; b < fs[k].e && n > 0; b++)
                for (size_t i = 0; i < n; i++)
                    assert_int_equal(out[b * n + i], in[i * fs[k].e + b]);
            for (size_t j = n * fs[k].e; j < len; j++)
                assert_int_equal(out[j], in[j]);
            hcomp_filter_undo(fs[k].filter, out, back, len);
            if (len > 0)
                assert_memory_equal(back, in, len);
        }
}

static unsigned char zeros_4096[4096], scratch_8192[8192];
static const unsigned char *src_of_zeros(void) { return zeros_4096; }
static unsigned char *dst_scratch(void) { return scratch_8192; }

static void test_fits(void **state)
{
    (void) state;
    const hcomp_codec *zstd = hcomp_codec_by_id(HCOMP_CODEC_ZSTD);
    const hcomp_codec *bl = hcomp_codec_by_id(HCOMP_CODEC_BLOSC_LZ4);
    assert_true(hcomp_filter_fits(HCOMP_FILTER_SHUFFLE4, zstd));
    assert_false(hcomp_filter_fits(HCOMP_FILTER_BITSHUFFLE4, zstd));
    assert_false(hcomp_filter_fits(HCOMP_FILTER_BITSHUFFLE8, zstd));
    assert_false(hcomp_filter_fits(HCOMP_FILTER_COUNT, bl));
    assert_false(hcomp_filter_fits(-1, bl));
    /* c-blosc 1 chunks carry shuffles and bitshuffles, c-blosc2 chunks also bytedelta and
     * delta, which no other codec carries */
    const hcomp_codec *b2 = hcomp_codec_by_id(HCOMP_CODEC_BLOSC2_ZSTD);
    for (int f = 0; f < HCOMP_FILTER_COUNT; f++) {
        int s2 = hcomp_filter_shuffle(f);
        int b2only = s2 == HCOMP_SHUFFLE_BYTEDELTA || s2 == HCOMP_SHUFFLE_DELTA;
        assert_int_equal(hcomp_filter_fits(f, bl), !b2only);
        assert_true(hcomp_filter_fits(f, b2));
        if (b2only)
            assert_false(hcomp_filter_fits(f, zstd));
    }
    assert_int_equal(hcomp_filter_encode(bl, 1, HCOMP_FILTER_BYTEDELTA8, src_of_zeros(), 4096,
                                         NULL, NULL, dst_scratch(), 8192, &(size_t){0}),
                     HCOMP_E_INVAL);
    unsigned char src[4096] = {0}, dst[8192];
    unsigned char *tmp = NULL;
    size_t tmp_cap = 0, clen = 0;
    assert_int_equal(hcomp_filter_encode(zstd, 1, HCOMP_FILTER_BITSHUFFLE4, src, sizeof src, &tmp,
                                         &tmp_cap, dst, sizeof dst, &clen), HCOMP_E_INVAL);
    assert_int_equal(hcomp_filter_decode(zstd, HCOMP_FILTER_BITSHUFFLE8, dst, 16, src, sizeof src,
                                         &tmp, &tmp_cap), HCOMP_E_CORRUPT);
    assert_int_equal(hcomp_filter_for_dtype(HCOMP_SHUFFLE_BIT, HCOMP_DTYPE_FLOAT),
                     HCOMP_FILTER_BITSHUFFLE4);
    assert_int_equal(hcomp_filter_for_dtype(HCOMP_SHUFFLE_BIT, HCOMP_DTYPE_INT64),
                     HCOMP_FILTER_BITSHUFFLE8);
    assert_int_equal(hcomp_filter_for_dtype(HCOMP_SHUFFLE_BYTE, HCOMP_DTYPE_BYTES),
                     HCOMP_FILTER_NONE);
    free(tmp);
}

/* A chunk says how it was made: read as another filter, it is refused (the mapping
 * record and the chunk disagree: one of them is damaged). */
static void test_mismatch_and_damage(void **state)
{
    (void) state;
    const size_t n = 256 * 1024 + 3;
    unsigned char *src = typed_bytes(n, 4, 7), *back = malloc(n);
    for (unsigned id = HCOMP_CODEC_BLOSC_LZ4; id <= HCOMP_CODEC_BLOSC2_ZSTD; id++) {
        const hcomp_codec *c = hcomp_codec_by_id(id);
        size_t cap = c->bound(n), clen = 0, tmp_cap = 0;
        unsigned char *dst = malloc(cap), *tmp = NULL;
        assert_int_equal(hcomp_filter_encode(c, 5, HCOMP_FILTER_BITSHUFFLE4, src, n, &tmp,
                                             &tmp_cap, dst, cap, &clen), HCOMP_OK);
        assert_true(clen < n);  /* bitshuffle makes these particles compress */
        for (int f = 0; f < HCOMP_FILTER_COUNT; f++) {
            int rc = hcomp_filter_decode(c, f, dst, clen, back, n, &tmp, &tmp_cap);
            assert_int_equal(rc, f == HCOMP_FILTER_BITSHUFFLE4 ? HCOMP_OK : HCOMP_E_CORRUPT);
        }
        /* every other container codec's id on this chunk (the other compressor, the other
         * c-blosc generation): refused */
        for (unsigned o = HCOMP_CODEC_BLOSC_LZ4; o <= HCOMP_CODEC_BLOSC2_ZSTD; o++)
            if (o != id)
                assert_int_equal(hcomp_codec_by_id(o)->decompress(dst, clen, back, n),
                                 HCOMP_E_CORRUPT);
        /* a stream cut short, or one byte longer than its header says */
        assert_int_equal(c->decompress(dst, clen - 1, back, n), HCOMP_E_CORRUPT);
        /* flipped bytes in the blocks: an error or (the blocks are not checksummed by
         * blosc: hcomp's CRC-32 of the payload catches that) never a write past n */
        for (size_t at = 16; at < clen; at += clen / 7 + 1) {
            dst[at] ^= 0x5A;
            (void) c->decompress(dst, clen, back, n);
            dst[at] ^= 0x5A;
        }
        /* a header that claims more bytes than the piece holds */
        dst[4] ^= 0x01;
        assert_int_equal(c->decompress(dst, clen, back, n), HCOMP_E_CORRUPT);
        dst[4] ^= 0x01;
        assert_int_equal(c->decompress(dst, clen, back, n), HCOMP_OK);
        assert_memory_equal(back, src, n);
        free(tmp);
        free(dst);
    }
    free(back);
    free(src);
}

/* ---- c-blosc2 chunks (codecs/codec_blosc2.c) ------------------------------------ */

/* Every c-blosc2 codec x filter (none, shuffle, bitshuffle, bytedelta, delta, each for 4-
 * and 8-byte elements) x level 1..9 round-trips odd and tiny lengths: empty, shorter than
 * one element, not a multiple of the element size (c-blosc2's first bytedelta got such
 * tails wrong), one block and more; the chunk's header names the filter pipeline. */
static void test_blosc2_roundtrips(void **state)
{
    (void) state;
    static const size_t lens[] = {0, 1, 3, 5, 7, 9, 31, 33, 4099, 65536 + 5};
    for (unsigned id = HCOMP_CODEC_BLOSC2_LZ4; id <= HCOMP_CODEC_BLOSC2_ZSTD; id++) {
        const hcomp_codec *c = hcomp_codec_by_id(id);
        assert_non_null(c->compress_typed);
        for (int f = 0; f < HCOMP_FILTER_COUNT; f++)
            for (int level = c->level_min; level <= c->level_max; level++)
                for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
                    size_t n = lens[li];
                    unsigned k = f ? hcomp_filter_typesize(f) : 4;
                    unsigned char *src = typed_bytes(n, k, n + 131 * (size_t) f + (size_t) level);
                    size_t cap = c->bound(n), clen = 0, tmp_cap = 0;
                    unsigned char *dst = malloc(cap), *back = malloc(n ? n : 1), *tmp = NULL;
                    assert_int_equal(hcomp_filter_encode(c, level, f, src, n, &tmp, &tmp_cap, dst,
                                                         cap, &clen), HCOMP_OK);
                    assert_true(clen <= cap && clen >= 32);
                    /* bytes 16..21 of the extended header: the pipeline, last slot last */
                    int s2 = hcomp_filter_shuffle(f);
                    if (n > 0 && (dst[2] & 0x2) == 0)  /* not stored as it is */
                        assert_int_equal(dst[21], s2 == HCOMP_SHUFFLE_NONE ? 0
                                                  : s2 == HCOMP_SHUFFLE_BIT ? 2
                                                  : s2 == HCOMP_SHUFFLE_BYTEDELTA ? 35 : 1);
                    unsigned char *exact = malloc(clen);
                    memcpy(exact, dst, clen);
                    memset(back, 0xA5, n);
                    int rc = hcomp_filter_decode(c, f, exact, clen, back, n, &tmp, &tmp_cap);
                    if (rc != HCOMP_OK || (n > 0 && memcmp(back, src, n) != 0))
                        fail_msg("%s filter %d level %d, %zu bytes: round trip failed (%d)",
                                 c->name, f, level, n, rc);
                    free(exact);
                    free(tmp);
                    free(back);
                    free(dst);
                    free(src);
                }
    }
}

/* All-zero input of a length that is not a multiple of the element size: c-blosc2 2.17.1
 * makes it a chunk of zeros its own decoder refuses (fuzz_codecs found 33 bytes); hcomp's
 * chunks hold whole elements only, so every such input round-trips. */
static void test_blosc2_zero_tails(void **state)
{
    (void) state;
    static const size_t lens[] = {1, 7, 31, 33, 35, 37, 39, 4099, 65541};
    unsigned char *src = calloc(1, 65541), *back = malloc(65541);
    for (unsigned id = HCOMP_CODEC_BLOSC2_LZ4; id <= HCOMP_CODEC_BLOSC2_ZSTD; id++) {
        const hcomp_codec *c = hcomp_codec_by_id(id);
        for (int f = 0; f < HCOMP_FILTER_COUNT; f++)
            for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
                size_t n = lens[li], cap = c->bound(n), clen = 0, tmp_cap = 0;
                unsigned char *dst = malloc(cap), *tmp = NULL;
                assert_int_equal(hcomp_filter_encode(c, 1, f, src, n, &tmp, &tmp_cap, dst, cap,
                                                     &clen), HCOMP_OK);
                memset(back, 0xA5, n);
                int rc = hcomp_filter_decode(c, f, dst, clen, back, n, &tmp, &tmp_cap);
                if (rc != HCOMP_OK || memcmp(back, src, n) != 0)
                    fail_msg("%s filter %d, %zu zero bytes: round trip failed (%d)", c->name, f,
                             n, rc);
                free(tmp);
                free(dst);
            }
    }
    free(back);
    free(src);
}

/* Random bytes do not shrink: the chunk is stored as it is (c-blosc2's memcpyed flag), at
 * most its 32-byte header over, and still decodes; framing then keeps the block raw. */
static void test_blosc2_incompressible(void **state)
{
    (void) state;
    const size_t n = 65536 + 3;
    unsigned char *src = malloc(n), *back = malloc(n);
    uint64_t seed = 99;
    for (size_t i = 0; i < n; i++)
        src[i] = (unsigned char) rng(&seed);
    for (unsigned id = HCOMP_CODEC_BLOSC2_LZ4; id <= HCOMP_CODEC_BLOSC2_ZSTD; id++) {
        const hcomp_codec *c = hcomp_codec_by_id(id);
        for (int f = 0; f < HCOMP_FILTER_COUNT; f++) {
            size_t cap = c->bound(n), clen = 0, tmp_cap = 0;
            unsigned char *dst = malloc(cap), *tmp = NULL;
            assert_int_equal(hcomp_filter_encode(c, 9, f, src, n, &tmp, &tmp_cap, dst, cap,
                                                 &clen), HCOMP_OK);
            assert_true(clen <= n + 32);
            assert_true((dst[2] & 0x2) != 0);
            assert_int_equal(hcomp_filter_decode(c, f, dst, clen, back, n, &tmp, &tmp_cap),
                             HCOMP_OK);
            assert_memory_equal(back, src, n);
            free(tmp);
            free(dst);
        }
    }
    free(back);
    free(src);
}

/* A damaged header never reaches c-blosc2's plugin loader or another compressor: a user
 * filter or codec code, a filter meta other than the element size, an element size other
 * than the record's, a special chunk hcomp never writes are refused before decoding; an
 * all-zero input is c-blosc2's chunk of zeros, which decodes. */
static void test_blosc2_header_checks(void **state)
{
    (void) state;
    const size_t n = 65536;
    unsigned char *src = typed_bytes(n, 8, 5), *back = malloc(n);
    const hcomp_codec *c = hcomp_codec_by_id(HCOMP_CODEC_BLOSC2_ZSTD);
    size_t cap = c->bound(n), clen = 0, tmp_cap = 0;
    unsigned char *dst = malloc(cap), *tmp = NULL;
    assert_int_equal(hcomp_filter_encode(c, 5, HCOMP_FILTER_BYTEDELTA8, src, n, &tmp, &tmp_cap,
                                         dst, cap, &clen), HCOMP_OK);
    assert_true(clen < n);
    static const struct { size_t at; unsigned char v; } bad[] = {
        {21, 160},  /* a user-registered filter */
        {21, 34},   /* c-blosc2's first, buggy bytedelta */
        {20, 0},    /* no shuffle before bytedelta */
        {29, 4},    /* bytedelta's meta: another element size */
        {3, 4},     /* the chunk's element size */
        {2, 0x05 | (6 << 5)},  /* a user codec's format code */
        {2, 0x05 | (1 << 5)},  /* lz4's blocks under blosc2-zstd */
        {2, 0x01 | (4 << 5)},  /* not an extended (c-blosc2) header */
        {31, 0x40},  /* a chunk of "uninitialized" values: decodes to the buffer's old bytes */
        {31, 0x20},  /* a chunk of NaNs: hcomp writes none */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        unsigned char keep = dst[bad[i].at];
        dst[bad[i].at] = bad[i].v;
        assert_int_equal(hcomp_filter_decode(c, HCOMP_FILTER_BYTEDELTA8, dst, clen, back, n, &tmp,
                                             &tmp_cap), HCOMP_E_CORRUPT);
        assert_int_equal(c->decompress(dst, clen, back, n), HCOMP_E_CORRUPT);
        dst[bad[i].at] = keep;
    }
    assert_int_equal(c->decompress(dst, clen, back, n), HCOMP_OK);
    assert_memory_equal(back, src, n);
    memset(src, 0, n);
    assert_int_equal(hcomp_filter_encode(c, 5, HCOMP_FILTER_BYTEDELTA8, src, n, &tmp, &tmp_cap,
                                         dst, cap, &clen), HCOMP_OK);
    assert_int_equal(clen, 32);
    assert_int_equal(dst[31] & 0x70, 0x10);    /* c-blosc2's special chunk of zeros */
    memset(back, 0xA5, n);
    assert_int_equal(hcomp_filter_decode(c, HCOMP_FILTER_BYTEDELTA8, dst, clen, back, n, &tmp,
                                         &tmp_cap), HCOMP_OK);
    assert_memory_equal(back, src, n);
    free(tmp);
    free(dst);
    free(back);
    free(src);
}

/* c-blosc2 applies BLOSC_SHUFFLE, BLOSC_TYPESIZE, ... from the environment over its
 * caller's settings: a chunk made so is not what the piece's record would say, so the
 * codec refuses to make it (the write fails; no unreadable piece is stored). */
static void test_blosc2_env_refused(void **state)
{
    (void) state;
    const size_t n = 65536;
    unsigned char *src = typed_bytes(n, 8, 3);
    const hcomp_codec *c = hcomp_codec_by_id(HCOMP_CODEC_BLOSC2_LZ4);
    size_t cap = c->bound(n), clen = 0;
    unsigned char *dst = malloc(cap);
    static const char *const vars[][2] = {{"BLOSC_SHUFFLE", "NOSHUFFLE"}, {"BLOSC_TYPESIZE", "4"},
                                          {"BLOSC_COMPRESSOR", "blosclz"}};
    for (size_t v = 0; v < sizeof vars / sizeof vars[0]; v++) {
        assert_null(hcomp_blosc2_env_override());
        assert_int_equal(setenv(vars[v][0], vars[v][1], 1), 0);
        assert_string_equal(hcomp_blosc2_env_override(), vars[v][0]);
        assert_int_equal(c->compress_typed(src, n, dst, cap, &clen, 5, 8, HCOMP_SHUFFLE_BIT),
                         HCOMP_E_INVAL);
        assert_int_equal(unsetenv(vars[v][0]), 0);
    }
    assert_int_equal(c->compress_typed(src, n, dst, cap, &clen, 5, 8, HCOMP_SHUFFLE_BIT), HCOMP_OK);
    free(dst);
    free(src);
}

/* Pieces made by one process decode in another that never chose their codec or filter:
 * a child process encodes one chunk of each c-blosc2 codec x filter into a file; this
 * process (which runs this test first, before anything of it used c-blosc2) decodes
 * them, from the chunk's bytes and the record's codec and filter alone. */
static void test_blosc2_other_process(void **state)
{
    (void) state;
    const size_t n = 50000 + 3;
    char path[] = "/tmp/hcomp-blosc2-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        FILE *out = fopen(path, "wb");
        if (out == NULL)
            _exit(2);
        for (unsigned id = HCOMP_CODEC_BLOSC2_LZ4; id <= HCOMP_CODEC_BLOSC2_ZSTD; id++)
            for (int f = 0; f < HCOMP_FILTER_COUNT; f++) {
                const hcomp_codec *c = hcomp_codec_by_id(id);
                unsigned k = f ? hcomp_filter_typesize(f) : 4;
                unsigned char *src = typed_bytes(n, k, 1000 + (size_t) f);
                size_t cap = c->bound(n), clen = 0, tmp_cap = 0;
                unsigned char *dst = malloc(cap), *tmp = NULL;
                if (hcomp_filter_encode(c, 7, f, src, n, &tmp, &tmp_cap, dst, cap, &clen) != HCOMP_OK)
                    _exit(3);
                uint64_t len = clen;
                if (fwrite(&len, 8, 1, out) != 1 || fwrite(dst, 1, clen, out) != clen)
                    _exit(4);
                free(src);
                free(dst);
                free(tmp);
            }
        _exit(fclose(out) == 0 ? 0 : 5);
    }
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    FILE *in = fopen(path, "rb");
    assert_non_null(in);
    unsigned char *back = malloc(n);
    for (unsigned id = HCOMP_CODEC_BLOSC2_LZ4; id <= HCOMP_CODEC_BLOSC2_ZSTD; id++)
        for (int f = 0; f < HCOMP_FILTER_COUNT; f++) {
            const hcomp_codec *c = hcomp_codec_by_id(id);
            unsigned k = f ? hcomp_filter_typesize(f) : 4;
            uint64_t len = 0;
            assert_int_equal(fread(&len, 8, 1, in), 1);
            unsigned char *buf = malloc(len), *tmp = NULL;
            size_t tmp_cap = 0;
            assert_int_equal(fread(buf, 1, len, in), len);
            assert_int_equal(hcomp_filter_decode(c, f, buf, len, back, n, &tmp, &tmp_cap), HCOMP_OK);
            unsigned char *src = typed_bytes(n, k, 1000 + (size_t) f);
            assert_memory_equal(back, src, n);
            free(src);
            free(buf);
            free(tmp);
        }
    fclose(in);
    unlink(path);
    free(back);
}

/* The bitshuffle features see what byte statistics cannot: on float32 positions with
 * random low bits, blosc-lz4's probe ratio with bitshuffle beats lz4's on the
 * byte-shuffled form. */
static void test_bitshuffle_features(void **state)
{
    (void) state;
    const size_t n = (size_t) 1 << 20;
    unsigned char *src = typed_bytes(n, 4, 11);
    hcomp_features plain, sh, bs;
    assert_int_equal(hcomp_analyze(src, n, HCOMP_DTYPE_FLOAT, &plain), HCOMP_OK);
    assert_int_equal(hcomp_analyze_shuffled(src, n, 4, &plain, &sh), HCOMP_OK);
    assert_int_equal(hcomp_analyze_bitshuffled(src, n, 4, &sh, &bs), HCOMP_OK);
    assert_int_equal(bs.dtype, HCOMP_DTYPE_FLOAT);
    assert_true(bs.entropy == sh.entropy);
    assert_true(bs.probe_ratio > sh.probe_ratio);
    assert_int_equal(hcomp_analyze_bitshuffled(src, n, 2, &sh, &bs), HCOMP_E_INVAL);
    free(src);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blosc2_other_process),   /* first: see the test */
        cmocka_unit_test(test_roundtrips),
        cmocka_unit_test(test_shuffle_layout),
        cmocka_unit_test(test_fits),
        cmocka_unit_test(test_mismatch_and_damage),
        cmocka_unit_test(test_bitshuffle_features),
        cmocka_unit_test(test_blosc2_roundtrips),
        cmocka_unit_test(test_blosc2_incompressible),
        cmocka_unit_test(test_blosc2_zero_tails),
        cmocka_unit_test(test_blosc2_env_refused),
        cmocka_unit_test(test_blosc2_header_checks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
