/* Byte shuffle and its inverse; filters composed with codecs. */
#include "filter.h"
#include "common/util.h"
#include "hcomp_model.h"

#include <endian.h>
#include <string.h>

unsigned hcomp_filter_typesize(int filter)
{
    switch (filter) {
        case HCOMP_FILTER_SHUFFLE4:
        case HCOMP_FILTER_BITSHUFFLE4:
            return 4u;
        case HCOMP_FILTER_SHUFFLE8:
        case HCOMP_FILTER_BITSHUFFLE8:
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
    return filter == HCOMP_FILTER_BITSHUFFLE4 || filter == HCOMP_FILTER_BITSHUFFLE8
               ? HCOMP_SHUFFLE_BIT
               : filter == HCOMP_FILTER_NONE ? HCOMP_SHUFFLE_NONE : HCOMP_SHUFFLE_BYTE;
}

int hcomp_filter_fits(int filter, const hcomp_codec *c)
{
    if (c == NULL || filter < 0 || filter >= HCOMP_FILTER_COUNT)
        return 0;
    return shuffle_of(filter) != HCOMP_SHUFFLE_BIT || c->compress_typed != NULL;
}

/* Byte shuffle of n elements of 4 or 8 bytes: byte b of element i goes to plane b. One pass
 * over the elements, each split into (or assembled from) its planes with shifts, so the
 * interleaved side is read (written) once, in order: a pass per plane with strided byte
 * accesses ran at about half the speed (apply and undo of 1 MiB: 1.9 against 3.0-3.6 GB/s
 * here), and was a tenth of a warm read's time. */
static void shuffle4(const unsigned char *src, unsigned char *dst, size_t n)
{
    unsigned char *p0 = dst, *p1 = dst + n, *p2 = dst + 2 * n, *p3 = dst + 3 * n;
    for (size_t i = 0; i < n; i++) {
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
    for (size_t i = 0; i < n; i++) {
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
    for (size_t i = 0; i < n; i++) {
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
    for (size_t i = 0; i < n; i++) {
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
