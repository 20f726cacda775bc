/* Unit tests of the codec registry and of every codec in it. The per-codec tests are
 * generated in main() from the registry, so a new codec is tested as soon as it is
 * registered. Buffers are heap-allocated at their exact sizes so that ASan reports
 * any read or write past them. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hcomp_codec.h"
#include "hcomp_error.h"

#define MIB ((size_t)1 << 20)
#define BIG_LEN (4 * MIB)         /* compressible round-trip, min/default level */
#define MAXLEVEL_LEN (256 * 1024) /* max level only here: those levels are slow */

/* ---- test data --------------------------------------------------------------- */

static uint64_t rng_next(uint64_t *s) /* splitmix64: fixed seeds, same data every run */
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

static unsigned char *random_bytes(size_t n, uint64_t seed)
{
    unsigned char *p = malloc(n ? n : 1);
    assert_non_null(p);
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)rng_next(&seed);
    return p;
}

/* What simulations write: half a smooth double field (a sine wave from the
 * recurrence y[i+1] = 2cos(w) y[i] - y[i-1], so no libm) kept at a fixed precision
 * of 1/4096, as output often is (full-precision noise defeats lz4 and snappy
 * entirely), and half repeated log text. */
static unsigned char *compressible_bytes(size_t n)
{
    unsigned char *p = malloc(n ? n : 1);
    assert_non_null(p);
    size_t half = n / 2 / sizeof(double) * sizeof(double);
    const double c2 = 2 * 0.99999; /* 2cos(w) for a small w */
    double y0 = 0, y1 = 0.0044721; /* sin(w): amplitude ~1 */
    for (size_t i = 0; i < half; i += sizeof(double)) {
        double v = (double)(int64_t)((300.0 + 25.0 * y0) * 4096) / 4096;
        memcpy(p + i, &v, sizeof v);
        double y2 = c2 * y1 - y0;
        y0 = y1;
        y1 = y2;
    }
    size_t i = half;
    for (unsigned line = 0; i < n; line++) {
        char buf[96];
        int k = snprintf(buf, sizeof buf, "step %u: temperature field written, residual ok\n",
                         line % 500);
        for (int j = 0; j < k && i < n; j++)
            p[i++] = (unsigned char)buf[j];
    }
    return p;
}

/* ---- helpers ------------------------------------------------------------------- */

/* Compress into a buffer of exactly bound(n) bytes; returns it, length in *clen. */
static unsigned char *compress_exact(const hcomp_codec *c, const void *src, size_t n,
                                     int level, size_t *clen)
{
    size_t cap = c->bound(n);
    unsigned char *dst = malloc(cap ? cap : 1);
    assert_non_null(dst);
    *clen = (size_t)-1;
    assert_int_equal(c->compress(src, n, cap ? dst : NULL, cap, clen, level), HCOMP_OK);
    assert_true(*clen <= cap);
    return dst;
}

/* Decompress comp into a heap buffer of exactly want bytes (NULL when want is 0). */
static int decompress_exact(const hcomp_codec *c, const void *comp, size_t clen,
                            size_t want, unsigned char **out)
{
    unsigned char *dst = want ? malloc(want) : NULL;
    assert_true(want == 0 || dst != NULL);
    int rc = c->decompress(comp, clen, dst, want);
    if (out != NULL)
        *out = dst;
    else
        free(dst);
    return rc;
}

/* A copy of exactly n bytes, so reading past the n given is caught by ASan. */
static unsigned char *dup_exact(const void *p, size_t n)
{
    unsigned char *q = malloc(n ? n : 1);
    assert_non_null(q);
    if (n)
        memcpy(q, p, n);
    return q;
}

static size_t roundtrip(const hcomp_codec *c, const unsigned char *src, size_t n, int level)
{
    size_t clen;
    unsigned char *comp = compress_exact(c, n ? src : NULL, n, level, &clen);
    unsigned char *out;
    assert_int_equal(decompress_exact(c, clen ? comp : NULL, clen, n, &out), HCOMP_OK);
    if (n)
        assert_memory_equal(out, src, n);
    free(out);
    free(comp);
    return clen;
}

/* ---- per-codec tests (state is the codec) -------------------------------------- */

static void test_roundtrip_small(void **state)
{
    const hcomp_codec *c = *state;
    unsigned char *r = random_bytes(100, 1);
    roundtrip(c, NULL, 0, HCOMP_LEVEL_DEFAULT);
    roundtrip(c, r, 1, HCOMP_LEVEL_DEFAULT);
    roundtrip(c, r, 100, HCOMP_LEVEL_DEFAULT);
    unsigned char *t = compressible_bytes(100);
    roundtrip(c, t, 100, HCOMP_LEVEL_DEFAULT);
    free(t);
    free(r);
}

static void test_roundtrip_random(void **state)
{
    const hcomp_codec *c = *state;
    unsigned char *r = random_bytes(4096, 2);
    roundtrip(c, r, 4096, HCOMP_LEVEL_DEFAULT);
    free(r);
    /* Several blocks/chunks of incompressible data: where bound() is tight it must
     * still hold (at this size lzma's encoder overshoots and the stored-chunk
     * fallback is what keeps lzma within its bound). */
    r = random_bytes(128 * 1024, 5);
    roundtrip(c, r, 128 * 1024, HCOMP_LEVEL_DEFAULT);
    if (c->level_min != c->level_max)
        roundtrip(c, r, 128 * 1024, c->level_max);
    free(r);
}

static void test_roundtrip_big(void **state)
{
    const hcomp_codec *c = *state;
    unsigned char *src = compressible_bytes(BIG_LEN);
    size_t clen = roundtrip(c, src, BIG_LEN, HCOMP_LEVEL_DEFAULT);
    if (c->id == HCOMP_CODEC_NONE)
        assert_int_equal(clen, BIG_LEN);
    else
        assert_true(clen < BIG_LEN / 4 * 3); /* every real codec shrinks it (lz4: ~0.27) */
    if (c->level_min != c->level_max)
        roundtrip(c, src, BIG_LEN, c->level_min);
    free(src);
}

/* Levels: min/default/max round-trip; HCOMP_LEVEL_DEFAULT is level_default; out of
 * range levels are clamped (same bytes as the nearest valid level). */
static void test_levels(void **state)
{
    const hcomp_codec *c = *state;
    assert_true(c->level_min <= c->level_default && c->level_default <= c->level_max);
    unsigned char *src = compressible_bytes(MAXLEVEL_LEN);
    roundtrip(c, src, MAXLEVEL_LEN, c->level_max);
    roundtrip(c, src, MAXLEVEL_LEN, c->level_default);

    const size_t n = 64 * 1024;
    const struct { int level, same_as; } pairs[] = {
        {HCOMP_LEVEL_DEFAULT, c->level_default},
        {c->level_min - 1, c->level_min},
        {INT_MIN + 1, c->level_min},
        {c->level_max + 1, c->level_max},
        {INT_MAX, c->level_max},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        size_t la, lb;
        unsigned char *a = compress_exact(c, src, n, pairs[i].level, &la);
        unsigned char *b = compress_exact(c, src, n, pairs[i].same_as, &lb);
        assert_int_equal(la, lb);
        assert_memory_equal(a, b, la);
        free(a);
        free(b);
    }
    free(src);
}

static void test_bound(void **state)
{
    const hcomp_codec *c = *state;
    const size_t sizes[] = {0, 1, 100, 65536, 65537, (size_t)INT_MAX + 1, (size_t)UINT32_MAX + 1,
                            SIZE_MAX / 2, SIZE_MAX - 1, SIZE_MAX};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        assert_true(c->bound(sizes[i]) >= sizes[i]); /* no wrap-around for huge sizes */
    /* A too small dst is refused, not overrun (the buffer is exactly dst_cap). */
    unsigned char *r = random_bytes(4096, 3);
    unsigned char *dst = malloc(100);
    assert_non_null(dst);
    size_t clen = 12345;
    assert_int_equal(c->compress(r, 4096, dst, 100, &clen, HCOMP_LEVEL_DEFAULT), HCOMP_E_INVAL);
    assert_int_equal(c->compress(r, 4096, NULL, 0, &clen, HCOMP_LEVEL_DEFAULT), HCOMP_E_INVAL);
    assert_int_equal(clen, 12345); /* untouched on failure */
    free(dst);
    free(r);
}

static void expect_corrupt(const hcomp_codec *c, const unsigned char *src, size_t len,
                           size_t want)
{
    unsigned char *copy = dup_exact(src, len);
    assert_int_equal(decompress_exact(c, len ? copy : NULL, len, want, NULL), HCOMP_E_CORRUPT);
    free(copy);
}

/* Damaged input must be rejected as HCOMP_E_CORRUPT, never crash or overrun. */
static void check_rejects(const hcomp_codec *c, const unsigned char *src, size_t n)
{
    size_t clen;
    unsigned char *comp = compress_exact(c, src, n, HCOMP_LEVEL_DEFAULT, &clen);
    /* truncated */
    expect_corrupt(c, comp, clen - 1, n);
    expect_corrupt(c, comp, clen / 2, n);
    expect_corrupt(c, comp, 1, n);
    expect_corrupt(c, comp, 0, n);
    /* wrong expected length, both ways */
    expect_corrupt(c, comp, clen, n + 1);
    expect_corrupt(c, comp, clen, n - 1);
    expect_corrupt(c, comp, clen, 2 * n);
    expect_corrupt(c, comp, clen, 0);
    /* trailing bytes after a valid stream */
    unsigned char *longer = malloc(clen + 1);
    assert_non_null(longer);
    memcpy(longer, comp, clen);
    longer[clen] = 0x5a;
    expect_corrupt(c, longer, clen + 1, n);
    free(longer);
    /* garbage (lengths that cannot be a stored copy of n bytes) */
    const size_t glen[] = {1, 16, 1000, n + 17};
    for (size_t i = 0; i < sizeof glen / sizeof glen[0]; i++) {
        unsigned char *g = random_bytes(glen[i], 100 + i);
        expect_corrupt(c, g, glen[i], n);
        free(g);
    }
    free(comp);
}

static void test_rejects_corrupt(void **state)
{
    const hcomp_codec *c = *state;
    unsigned char *r = random_bytes(4096, 4);
    unsigned char *t = compressible_bytes(64 * 1024);
    check_rejects(c, r, 100);
    check_rejects(c, r, 4096);
    check_rejects(c, t, 64 * 1024);
    free(t);
    free(r);
}

/* A small fuzz: flipped bytes may still decode (not every format has a checksum),
 * but the result must be OK or CORRUPT, within the exact-size buffers. */
static void test_mutations(void **state)
{
    const hcomp_codec *c = *state;
    const size_t n = 8192;
    unsigned char *src = compressible_bytes(n);
    size_t clen;
    unsigned char *comp = compress_exact(c, src, n, HCOMP_LEVEL_DEFAULT, &clen);
    uint64_t seed = 42;
    for (int iter = 0; iter < 300; iter++) {
        unsigned char *m = dup_exact(comp, clen);
        int flips = 1 + (int)(rng_next(&seed) % 4);
        for (int f = 0; f < flips; f++)
            m[rng_next(&seed) % clen] ^= (unsigned char)(1 + rng_next(&seed) % 255);
        size_t len = (iter % 3 == 0) ? rng_next(&seed) % (clen + 1) : clen;
        int rc = decompress_exact(c, m, len, n, NULL);
        assert_true(rc == HCOMP_OK || rc == HCOMP_E_CORRUPT);
        free(m);
    }
    free(comp);
    free(src);
}

static void test_null_args(void **state)
{
    const hcomp_codec *c = *state;
    unsigned char buf[64] = {0};
    size_t clen;
    assert_int_equal(c->compress(NULL, 10, buf, sizeof buf, &clen, 0), HCOMP_E_INVAL);
    assert_int_equal(c->compress(buf, 10, buf + 32, 32, NULL, 0), HCOMP_E_INVAL);
    assert_int_equal(c->decompress(NULL, 10, buf, 10), HCOMP_E_INVAL);
    assert_int_equal(c->decompress(buf, 10, NULL, 10), HCOMP_E_INVAL);
}

/* ---- codec-specific size limits -------------------------------------------------- */

/* lz4 and snappy cannot take every size; the codec must say so before touching the
 * buffers (which are tiny here: any access past them would be caught). */
static void test_size_limits(void **state)
{
    (void)state;
    unsigned char src[16] = {0}, dst[64];
    size_t clen;
    const hcomp_codec *lz4 = hcomp_codec_by_id(HCOMP_CODEC_LZ4);
    assert_int_equal(lz4->compress(src, (size_t)0x7E000000 + 1, dst, sizeof dst, &clen, 1),
                     HCOMP_E_INVAL);
    assert_int_equal(lz4->decompress(src, sizeof src, dst, (size_t)INT_MAX + 1), HCOMP_E_INVAL);
    const hcomp_codec *sn = hcomp_codec_by_id(HCOMP_CODEC_SNAPPY);
    assert_int_equal(sn->compress(src, (size_t)UINT32_MAX + 1, dst, sizeof dst, &clen, 0),
                     HCOMP_E_INVAL);
    assert_int_equal(sn->decompress(src, sizeof src, dst, (size_t)UINT32_MAX + 1),
                     HCOMP_E_INVAL);
}

/* ---- threads: per-thread contexts (zstd) and library state must not interfere ---- */

static void *thread_main(void *arg)
{
    const unsigned char *src = arg;
    const size_t n = 64 * 1024;
    for (int iter = 0; iter < 3; iter++) {
        for (size_t i = 0; i < hcomp_codec_count(); i++) {
            const hcomp_codec *c = hcomp_codec_at(i);
            size_t cap = c->bound(n), clen;
            unsigned char *comp = malloc(cap), *out = malloc(n);
            if (comp == NULL || out == NULL ||
                c->compress(src, n, comp, cap, &clen, c->level_min + iter) != HCOMP_OK ||
                c->decompress(comp, clen, out, n) != HCOMP_OK || memcmp(out, src, n) != 0) {
                free(comp);
                free(out);
                return (void *)(uintptr_t)c->name; /* no cmocka asserts off the main thread */
            }
            free(comp);
            free(out);
        }
    }
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    unsigned char *src = compressible_bytes(64 * 1024);
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&t[i], NULL, thread_main, src), 0);
    for (int i = 0; i < 4; i++) {
        void *failed;
        assert_int_equal(pthread_join(t[i], &failed), 0);
        if (failed != NULL)
            fail_msg("codec %s failed in a thread", (const char *)failed);
    }
    free(src);
}

/* ---- registry ------------------------------------------------------------------- */

static void test_registry(void **state)
{
    (void)state;
    static const char *const names[] = {"none",   "lz4",    "zstd",   "zlib",
                                        "bzip2", "brotli", "snappy", "lzma",
                                        "blosc-lz4", "blosc-zstd", "blosc2-lz4", "blosc2-zstd"};
    assert_int_equal(hcomp_codec_count(), HCOMP_CODEC_COUNT);
    assert_int_equal(sizeof names / sizeof names[0], HCOMP_CODEC_COUNT);
    for (size_t i = 0; i < hcomp_codec_count(); i++) {
        const hcomp_codec *c = hcomp_codec_at(i);
        assert_non_null(c);
        assert_int_equal(c->id, i);
        assert_ptr_equal(hcomp_codec_by_id((unsigned)i), c);
        assert_ptr_equal(hcomp_codec_by_name(c->name), c);
        assert_string_equal(c->name, names[i]);
        assert_non_null(c->bound);
        assert_non_null(c->compress);
        assert_non_null(c->decompress);
        if (c->id == HCOMP_CODEC_NONE || c->id == HCOMP_CODEC_SNAPPY)
            assert_true(c->level_min == 0 && c->level_max == 0 && c->level_default == 0);
        else
            assert_true(c->level_min < c->level_max);
    }
    assert_null(hcomp_codec_at(HCOMP_CODEC_COUNT));
    assert_null(hcomp_codec_by_id(HCOMP_CODEC_COUNT));
    assert_null(hcomp_codec_by_id(UINT_MAX));
    assert_null(hcomp_codec_by_name("ZSTD")); /* case-sensitive */
    assert_null(hcomp_codec_by_name("zstd "));
    assert_null(hcomp_codec_by_name(""));
    assert_null(hcomp_codec_by_name(NULL));
}

static void test_parse_ok(void **state)
{
    (void)state;
    const hcomp_codec *c = NULL;
    int level = 0;
    hcomp_error err = {0};
    assert_int_equal(hcomp_codec_parse("zstd:5", &c, &level, &err), HCOMP_OK);
    assert_ptr_equal(c, hcomp_codec_by_name("zstd"));
    assert_int_equal(level, 5);
    assert_int_equal(hcomp_codec_parse("lz4", &c, &level, &err), HCOMP_OK);
    assert_ptr_equal(c, hcomp_codec_by_name("lz4"));
    assert_int_equal(level, HCOMP_LEVEL_DEFAULT);
    assert_int_equal(hcomp_codec_parse("snappy", &c, &level, NULL), HCOMP_OK);
    assert_ptr_equal(c, hcomp_codec_by_name("snappy"));
    assert_int_equal(hcomp_codec_parse("zstd:+19", &c, &level, NULL), HCOMP_OK);
    assert_int_equal(level, 19);
    for (size_t i = 0; i < hcomp_codec_count(); i++) { /* every name, every bound level */
        const hcomp_codec *k = hcomp_codec_at(i);
        char spec[64];
        assert_int_equal(hcomp_codec_parse(k->name, &c, &level, NULL), HCOMP_OK);
        assert_ptr_equal(c, k);
        if (k->level_min == k->level_max)
            continue;
        snprintf(spec, sizeof spec, "%s:%d", k->name, k->level_min);
        assert_int_equal(hcomp_codec_parse(spec, &c, &level, NULL), HCOMP_OK);
        assert_int_equal(level, k->level_min);
        snprintf(spec, sizeof spec, "%s:%d", k->name, k->level_max);
        assert_int_equal(hcomp_codec_parse(spec, &c, &level, NULL), HCOMP_OK);
        assert_int_equal(level, k->level_max);
    }
}

static void test_parse_errors(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "zstd:99", "snappy:1", "nosuch", "", "zstd:", "zstd:abc", "none:0", "ZSTD",
        "zstd:5x", "zstd: 5", "zstd:-1", "zstd:99999999999999999999", ":5", "zstd:5:1",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const hcomp_codec *c = (const hcomp_codec *)&c; /* sentinel: must stay */
        int level = 777;
        hcomp_error err = {0};
        assert_int_equal(hcomp_codec_parse(bad[i], &c, &level, &err), HCOMP_E_INVAL);
        assert_int_equal(err.code, HCOMP_E_INVAL);
        char quoted[80];
        snprintf(quoted, sizeof quoted, "\"%s\"", bad[i]);
        if (strstr(err.msg, quoted) == NULL)
            fail_msg("message for \"%s\" does not name the spec: %s", bad[i], err.msg);
        assert_ptr_equal(c, (const hcomp_codec *)&c);
        assert_int_equal(level, 777);
        assert_int_equal(hcomp_codec_parse(bad[i], &c, &level, NULL), HCOMP_E_INVAL);
    }
    hcomp_error err = {0};
    hcomp_codec_parse("nosuch", NULL, NULL, &err); /* lists the valid names */
    assert_non_null(strstr(err.msg, "none, lz4, zstd, zlib, bzip2, brotli, snappy, lzma"));
    hcomp_codec_parse("zstd:99", NULL, NULL, &err); /* gives the valid range */
    assert_non_null(strstr(err.msg, "1..19"));
    assert_int_equal(hcomp_codec_parse(NULL, NULL, NULL, &err), HCOMP_E_INVAL);
}

/* ---- main --------------------------------------------------------------------- */

int main(void)
{
    static const struct { const char *name; CMUnitTestFunction fn; } per_codec[] = {
        {"roundtrip_small", test_roundtrip_small}, {"roundtrip_random", test_roundtrip_random},
        {"roundtrip_big", test_roundtrip_big},     {"levels", test_levels},
        {"bound", test_bound},                     {"rejects_corrupt", test_rejects_corrupt},
        {"mutations", test_mutations},             {"null_args", test_null_args},
    };
    const size_t nper = sizeof per_codec / sizeof per_codec[0];
    const size_t ncodec = hcomp_codec_count();
    const struct CMUnitTest fixed[] = {
        cmocka_unit_test(test_registry),    cmocka_unit_test(test_parse_ok),
        cmocka_unit_test(test_parse_errors), cmocka_unit_test(test_size_limits),
        cmocka_unit_test(test_threads),
    };
    const size_t nfixed = sizeof fixed / sizeof fixed[0];
    size_t ntests = nfixed + nper * ncodec;
    struct CMUnitTest *tests = calloc(ntests, sizeof *tests);
    char(*names)[64] = calloc(nper * ncodec, sizeof *names);
    if (tests == NULL || names == NULL)
        return 1;
    memcpy(tests, fixed, sizeof fixed);
    for (size_t i = 0; i < ncodec; i++) {
        for (size_t j = 0; j < nper; j++) {
            size_t k = i * nper + j;
            snprintf(names[k], sizeof names[k], "%s/%s", per_codec[j].name,
                     hcomp_codec_at(i)->name);
            tests[nfixed + k] = (struct CMUnitTest){
                .name = names[k],
                .test_func = per_codec[j].fn,
                .initial_state = (void *)(uintptr_t)hcomp_codec_at(i),
            };
        }
    }
    int failed = _cmocka_run_group_tests("codecs", tests, ntests, NULL, NULL);
    free(names);
    free(tests);
    return failed;
}
