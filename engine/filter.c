/* Byte shuffle and its inverse; filters composed with codecs. */
#include "filter.h"
#include "common/util.h"
#include "hcomp_model.h"

#include <endian.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

int hcomp_filter_is_bitshuffle(int filter)
{
    return filter == HCOMP_FILTER_BITSHUFFLE4 || filter == HCOMP_FILTER_BITSHUFFLE8;
}

unsigned hcomp_filter_typesize(int filter)
{
    switch (filter) {
        case HCOMP_FILTER_SHUFFLE4:
        case HCOMP_FILTER_BITSHUFFLE4:
        case HCOMP_FILTER_BYTEDELTA4:
        case HCOMP_FILTER_DELTA4:
            return 4u;
        case HCOMP_FILTER_SHUFFLE8:
        case HCOMP_FILTER_BITSHUFFLE8:
        case HCOMP_FILTER_BYTEDELTA8:
        case HCOMP_FILTER_DELTA8:
            return 8u;
        default:
            return 0u;
    }
}

int hcomp_filter_for(int shuffle, unsigned k)
{
    if (k != 4 && k != 8)
        return HCOMP_FILTER_NONE;
    if (shuffle == HCOMP_SHUFFLE_BYTE)
        return k == 4 ? HCOMP_FILTER_SHUFFLE4 : HCOMP_FILTER_SHUFFLE8;
    if (shuffle == HCOMP_SHUFFLE_BIT)
        return k == 4 ? HCOMP_FILTER_BITSHUFFLE4 : HCOMP_FILTER_BITSHUFFLE8;
    if (shuffle == HCOMP_SHUFFLE_BYTEDELTA)
        return k == 4 ? HCOMP_FILTER_BYTEDELTA4 : HCOMP_FILTER_BYTEDELTA8;
    if (shuffle == HCOMP_SHUFFLE_DELTA)
        return k == 4 ? HCOMP_FILTER_DELTA4 : HCOMP_FILTER_DELTA8;
    return HCOMP_FILTER_NONE;
}

int hcomp_filter_for_dtype(int shuffle, int dtype)
{
    switch (dtype) {
        case HCOMP_DTYPE_INT32:
        case HCOMP_DTYPE_FLOAT:
            return hcomp_filter_for(shuffle, 4);
        case HCOMP_DTYPE_INT64:
        case HCOMP_DTYPE_DOUBLE:
            return hcomp_filter_for(shuffle, 8);
        default:
            return HCOMP_FILTER_NONE;
    }
}

/* enum hcomp_shuffle of a filter */
static int shuffle_of(int filter)
{
    switch (filter) {
        case HCOMP_FILTER_BITSHUFFLE4:
        case HCOMP_FILTER_BITSHUFFLE8:
            return HCOMP_SHUFFLE_BIT;
        case HCOMP_FILTER_BYTEDELTA4:
        case HCOMP_FILTER_BYTEDELTA8:
            return HCOMP_SHUFFLE_BYTEDELTA;
        case HCOMP_FILTER_DELTA4:
        case HCOMP_FILTER_DELTA8:
            return HCOMP_SHUFFLE_DELTA;
        case HCOMP_FILTER_NONE:
            return HCOMP_SHUFFLE_NONE;
        default:
            return HCOMP_SHUFFLE_BYTE;
    }
}

int hcomp_filter_shuffle(int filter)
{
    return shuffle_of(filter);
}

/* c-blosc2's pipeline has filters c-blosc 1 does not (bytedelta, delta) */
static int is_blosc2(const hcomp_codec *c)
{
    return c->id == HCOMP_CODEC_BLOSC2_LZ4 || c->id == HCOMP_CODEC_BLOSC2_ZSTD;
}

int hcomp_filter_fits(int filter, const hcomp_codec *c)
{
    if (c == NULL || filter < 0 || filter >= HCOMP_FILTER_COUNT)
        return 0;
    int s = shuffle_of(filter);
    if (s == HCOMP_SHUFFLE_BYTEDELTA || s == HCOMP_SHUFFLE_DELTA)
        return is_blosc2(c);
    return s != HCOMP_SHUFFLE_BIT || c->compress_typed != NULL;
}

/* Byte shuffle of n elements of 4 or 8 bytes: byte b of element i goes to plane b. One pass
 * over the elements, each split into (or assembled from) its planes with shifts, so the
 * interleaved side is read (written) once, in order: a pass per plane with strided byte
 * accesses ran at about half the speed (apply and undo of 1 MiB: 1.9 against 3.0-3.6 GB/s
 * here), and was a tenth of a warm read's time. */
#if defined(__SSE2__)
/* SSE2 (every x86-64 has it) transposes 16 elements at a time with byte, word and dword
 * unpacks: the same layout at 40-64 GB/s against the loops' 7-8.5 GB/s (1 MiB in cache,
 * benchmarks/filter_speed), which showed in the profile of a warm small read of lz4 with
 * byte shuffle above the codec itself; the loops below take the rest (and every element
 * where there is no SSE2). c-blosc 1.21 has SIMD shuffles but does not export them. */
#define LD(p) _mm_loadu_si128((const __m128i *) (const void *) (p))
#define ST(p, v) _mm_storeu_si128((__m128i *) (void *) (p), (v))
#if defined(__GNUC__) && !defined(__clang__)
#define UNROLL _Pragma("GCC unroll 8")     /* the arrays then live in registers */
#else
#define UNROLL
#endif

static size_t shuffle4_simd(const unsigned char *src, unsigned char *dst, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const unsigned char *s = src + 4 * i;
        __m128i x0 = LD(s), x1 = LD(s + 16), x2 = LD(s + 32), x3 = LD(s + 48);
        __m128i y0 = _mm_unpacklo_epi8(x0, x1), y1 = _mm_unpackhi_epi8(x0, x1);
        __m128i y2 = _mm_unpacklo_epi8(x2, x3), y3 = _mm_unpackhi_epi8(x2, x3);
        __m128i z0 = _mm_unpacklo_epi8(y0, y1), z1 = _mm_unpackhi_epi8(y0, y1);
        __m128i z2 = _mm_unpacklo_epi8(y2, y3), z3 = _mm_unpackhi_epi8(y2, y3);
        __m128i w0 = _mm_unpacklo_epi8(z0, z1), w1 = _mm_unpackhi_epi8(z0, z1);
        __m128i w2 = _mm_unpacklo_epi8(z2, z3), w3 = _mm_unpackhi_epi8(z2, z3);
        ST(dst + i, _mm_unpacklo_epi64(w0, w2));
        ST(dst + n + i, _mm_unpackhi_epi64(w0, w2));
        ST(dst + 2 * n + i, _mm_unpacklo_epi64(w1, w3));
        ST(dst + 3 * n + i, _mm_unpackhi_epi64(w1, w3));
    }
    return i;
}

static size_t unshuffle4_simd(const unsigned char *src, unsigned char *dst, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m128i a = LD(src + i), b = LD(src + n + i), c = LD(src + 2 * n + i);
        __m128i d = LD(src + 3 * n + i);
        __m128i ab0 = _mm_unpacklo_epi8(a, b), ab1 = _mm_unpackhi_epi8(a, b);
        __m128i cd0 = _mm_unpacklo_epi8(c, d), cd1 = _mm_unpackhi_epi8(c, d);
        unsigned char *o = dst + 4 * i;
        ST(o, _mm_unpacklo_epi16(ab0, cd0));
        ST(o + 16, _mm_unpackhi_epi16(ab0, cd0));
        ST(o + 32, _mm_unpacklo_epi16(ab1, cd1));
        ST(o + 48, _mm_unpackhi_epi16(ab1, cd1));
    }
    return i;
}

static size_t shuffle8_simd(const unsigned char *src, unsigned char *dst, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const unsigned char *s = src + 8 * i;
        __m128i x[8], y[8], z[8], w[8];
        UNROLL
        for (int k = 0; k < 8; k++)
            x[k] = LD(s + 16 * k);
        UNROLL
        for (int k = 0; k < 4; k++) {   /* elements k, k+8 (and the next two) side by side */
            y[2 * k] = _mm_unpacklo_epi8(x[k], x[k + 4]);
            y[2 * k + 1] = _mm_unpackhi_epi8(x[k], x[k + 4]);
        }
        UNROLL
        for (int k = 0; k < 4; k++) {
            z[2 * k] = _mm_unpacklo_epi8(y[k], y[k + 4]);
            z[2 * k + 1] = _mm_unpackhi_epi8(y[k], y[k + 4]);
        }
        UNROLL
        for (int k = 0; k < 4; k++) {
            w[2 * k] = _mm_unpacklo_epi8(z[k], z[k + 4]);
            w[2 * k + 1] = _mm_unpackhi_epi8(z[k], z[k + 4]);
        }
        UNROLL
        for (int k = 0; k < 4; k++) {
            ST(dst + (size_t) (2 * k) * n + i, _mm_unpacklo_epi8(w[k], w[k + 4]));
            ST(dst + (size_t) (2 * k + 1) * n + i, _mm_unpackhi_epi8(w[k], w[k + 4]));
        }
    }
    return i;
}

static size_t unshuffle8_simd(const unsigned char *src, unsigned char *dst, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m128i p[8], q[8], r[8];
        UNROLL
        for (int b = 0; b < 8; b++)
            p[b] = LD(src + (size_t) b * n + i);
        UNROLL
        for (int k = 0; k < 4; k++) {   /* byte pairs (2k, 2k+1) of elements 0-7, 8-15 */
            q[2 * k] = _mm_unpacklo_epi8(p[2 * k], p[2 * k + 1]);
            q[2 * k + 1] = _mm_unpackhi_epi8(p[2 * k], p[2 * k + 1]);
        }
        UNROLL
        for (int h = 0; h < 2; h++)     /* bytes 0-3 (h 0) and 4-7 (h 1) of elements */
            UNROLL
        for (int k = 0; k < 2; k++) {
                r[4 * h + 2 * k] = _mm_unpacklo_epi16(q[4 * h + k], q[4 * h + 2 + k]);
                r[4 * h + 2 * k + 1] = _mm_unpackhi_epi16(q[4 * h + k], q[4 * h + 2 + k]);
            }
        unsigned char *o = dst + 8 * i;
        UNROLL
        for (int k = 0; k < 4; k++) {
            ST(o + 32 * k, _mm_unpacklo_epi32(r[k], r[4 + k]));
            ST(o + 32 * k + 16, _mm_unpackhi_epi32(r[k], r[4 + k]));
        }
    }
    return i;
}
#undef LD
#undef ST
#undef UNROLL
#else   /* elsewhere the loops below take every element */
#define shuffle4_simd(s, d, n) ((size_t) 0)
#define unshuffle4_simd(s, d, n) ((size_t) 0)
#define shuffle8_simd(s, d, n) ((size_t) 0)
#define unshuffle8_simd(s, d, n) ((size_t) 0)
#endif

static void shuffle4(const unsigned char *src, unsigned char *dst, size_t n)
{
    unsigned char *p0 = dst, *p1 = dst + n, *p2 = dst + 2 * n, *p3 = dst + 3 * n;
    for (size_t i = shuffle4_simd(src, dst, n); i < n; i++) {
        uint32_t v;
        memcpy(&v, src + 4 * i, 4);
        v = le32toh(v);
        p0[i] = (unsigned char) v;
        p1[i] = (unsigned char) (v >> 8);
        p2[i] = (unsigned char) (v >> 16);
        p3[i] = (unsigned char) (v >> 24);
    }
}

static void unshuffle4(const unsigned char *src, unsigned char *dst, size_t n)
{
    const unsigned char *p0 = src, *p1 = src + n, *p2 = src + 2 * n, *p3 = src + 3 * n;
    for (size_t i = unshuffle4_simd(src, dst, n); i < n; i++) {
        uint32_t v = htole32((uint32_t) p0[i] | (uint32_t) p1[i] << 8 | (uint32_t) p2[i] << 16 |
                             (uint32_t) p3[i] << 24);
        memcpy(dst + 4 * i, &v, 4);
    }
}

static void shuffle8(const unsigned char *src, unsigned char *dst, size_t n)
{
    unsigned char *p[8];
    for (unsigned b = 0; b < 8; b++)
        p[b] = dst + (size_t) b * n;
    for (size_t i = shuffle8_simd(src, dst, n); i < n; i++) {
        uint64_t v;
        memcpy(&v, src + 8 * i, 8);
        v = le64toh(v);
        p[0][i] = (unsigned char) v;
        p[1][i] = (unsigned char) (v >> 8);
        p[2][i] = (unsigned char) (v >> 16);
        p[3][i] = (unsigned char) (v >> 24);
        p[4][i] = (unsigned char) (v >> 32);
        p[5][i] = (unsigned char) (v >> 40);
        p[6][i] = (unsigned char) (v >> 48);
        p[7][i] = (unsigned char) (v >> 56);
    }
}

static void unshuffle8(const unsigned char *src, unsigned char *dst, size_t n)
{
    const unsigned char *p[8];
    for (unsigned b = 0; b < 8; b++)
        p[b] = src + (size_t) b * n;
    for (size_t i = unshuffle8_simd(src, dst, n); i < n; i++) {
        uint64_t v = htole64((uint64_t) p[0][i] | (uint64_t) p[1][i] << 8 |
                             (uint64_t) p[2][i] << 16 | (uint64_t) p[3][i] << 24 |
                             (uint64_t) p[4][i] << 32 | (uint64_t) p[5][i] << 40 |
                             (uint64_t) p[6][i] << 48 | (uint64_t) p[7][i] << 56);
        memcpy(dst + 8 * i, &v, 8);
    }
}

void hcomp_filter_apply(int filter, const unsigned char *src, unsigned char *dst, size_t len)
{
    if (len == 0)       /* dst may be NULL then */
        return;
    unsigned k = shuffle_of(filter) == HCOMP_SHUFFLE_BYTE ? hcomp_filter_typesize(filter) : 0;
    if (k == 0) {
        memcpy(dst, src, len);
        return;
    }
    size_t n = len / k;
    (k == 4 ? shuffle4 : shuffle8)(src, dst, n);
    memcpy(dst + n * k, src + n * k, len - n * k);
}

void hcomp_filter_undo(int filter, const unsigned char *src, unsigned char *dst, size_t len)
{
    if (len == 0)       /* dst may be NULL then */
        return;
    unsigned k = shuffle_of(filter) == HCOMP_SHUFFLE_BYTE ? hcomp_filter_typesize(filter) : 0;
    if (k == 0) {
        memcpy(dst, src, len);
        return;
    }
    size_t n = len / k;
    (k == 4 ? unshuffle4 : unshuffle8)(src, dst, n);
    memcpy(dst + n * k, src + n * k, len - n * k);
}

int hcomp_filter_encode(const hcomp_codec *c, int level, int filter, const void *src,
                        size_t len, unsigned char **tmp, size_t *tmp_cap, void *dst,
                        size_t dst_cap, size_t *dst_len)
{
    if (!hcomp_filter_fits(filter, c))
        return HCOMP_E_INVAL;
    if (c->compress_typed != NULL)
        return c->compress_typed(src, len, dst, dst_cap, dst_len, level,
                                 filter ? hcomp_filter_typesize(filter) : 1, shuffle_of(filter));
    if (filter == HCOMP_FILTER_NONE)
        return c->compress(src, len, dst, dst_cap, dst_len, level);
    if (hcomp_grow(tmp, tmp_cap, len ? len : 1) != 0)
        return HCOMP_E_NOMEM;
    hcomp_filter_apply(filter, src, *tmp, len);
    return c->compress(*tmp, len, dst, dst_cap, dst_len, level);
}

int hcomp_filter_decode(const hcomp_codec *c, int filter, const void *src, size_t src_len,
                        void *dst, size_t dst_len, unsigned char **tmp, size_t *tmp_cap)
{
    if (!hcomp_filter_fits(filter, c))
        return HCOMP_E_CORRUPT;
    if (c->decompress_typed != NULL)
        return c->decompress_typed(src, src_len, dst, dst_len,
                                   filter ? hcomp_filter_typesize(filter) : 1, shuffle_of(filter));
    if (filter == HCOMP_FILTER_NONE)
        return c->decompress(src, src_len, dst, dst_len);
    if (hcomp_grow(tmp, tmp_cap, dst_len ? dst_len : 1) != 0)
        return HCOMP_E_NOMEM;
    int rc = c->decompress(src, src_len, *tmp, dst_len);
    if (rc == HCOMP_OK)
        hcomp_filter_undo(filter, *tmp, dst, dst_len);
    return rc;
}
